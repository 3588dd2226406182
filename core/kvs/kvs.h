/*
 * kvs — the metadata store's client API, ZHT style: zero-hop (the owner of a key is
 * task_key_owner(key, nodes), computed locally), one shard per daemon.  The scheduler
 * and the job client reach task metadata only through these calls.
 *
 * Operations on keys this node is primary for run on the local shard before the call
 * returns; others become messages to the primary, batched by the transport per peer
 * per loop pass, and their callbacks run when the reply arrives.  Effects of the store
 * (a task became ready or was cancelled; a cancellation spreading to a child) are
 * processed from a worklist, never recursively, so a chain of a million tasks cancels
 * in constant stack.
 *
 * Replication (issue 15; kvs_set_replicas, default R = 1: none, and then the store
 * behaves as it did before replication existed and sends the same messages, byte for
 * byte for records without a spec or an attempt: tests/kvs/r1-wire.txt).  A key's replicas
 * are the first R live nodes of the ring walk from its owner, its primary the first of
 * them (view.h).  The primary applies every mutation — insert, append, cas, remove,
 * and what its own effects do to its records — and forwards it, in its order and with
 * its times, to the live backups in MSG_KVS_REPLICATE; they apply it, produce no
 * effects and notify nobody, and acknowledge in MSG_KVS_REPLICA_ACK (cumulative, sent
 * by kvs_flush once per loop pass).
 *
 * When a write counts: once every live backup has acknowledged it (a backup that dies
 * meanwhile is replaced by its successor, which must acknowledge the copy the take-over
 * sent it).  Until then the primary holds back what would let anyone act on it: the
 * reply to a CAS (local callbacks included), the ready and cancel notices it causes,
 * and kvs_barrier callbacks.  These leave in the order they were made.  Lookups answer at once, from
 * the primary's copy.  Fire-and-forget writes (insert, append, remove) sent to a
 * primary that dies before forwarding them are lost unless re-issued (below); a node
 * that must know its write survived asks with kvs_cas or kvs_barrier.
 *
 * Death (kvs_set_down, told by the membership protocol; irreversible).  Messages from
 * a node declared down are ignored from then on.  For every record whose primary was
 * the dead node and is now this one, this store takes over: it sends the whole record
 * to every backup of the new set (restoring R, and mending whatever the dead primary
 * had forwarded to some backups only) and re-issues what the dead primary may not
 * have finished: the ready notice of a task that became ready through its parents,
 * the cancel notice of a cancelled one, and each finished task's completion to its
 * children (PARENT or PARENT_FAILED, flagged as re-issued).  A primary that stays also
 * re-sends the completions of its finished records: to every child when the dead node
 * ran the task (it may have died before telling them), else to the children whose
 * primary was the dead node; and, while a node is down, to the children whose primary
 * is not their owner when a completion is recorded (the runner may have sent it to the
 * dead one).
 * The children count a re-issued parent once (shard.h).  Requests with a callback that
 * the dead node never answered are sent again to the new primary, so no callback is
 * lost (-EHOSTDOWN when no node is left).  A request that reaches a node that is not
 * its key's primary in that node's view (its sender learned of a death first) waits
 * there until this node learns of it too.  The dead node's unfinished tasks are found
 * with kvs_orphans and handed to live nodes with kvs_resubmit, each hand-over a new
 * attempt; a completion counts only for the attempt that holds the task.
 *
 * What the node does on a death, since the store cannot know where tasks are (the
 * driver of tests/unit/test_kvs_takeover.c does all of it): resubmit what
 * kvs_orphans(KVS_NO_SHARD) lists; append HISTORY(self) again for the tasks moved to
 * it that it still runs (a move is fire-and-forget, one the dead primary had not
 * forwarded is lost, and the same move said again changes nothing); look up the tasks
 * it moved to the dead node and run again those whose record still names it as holder
 * (the move was lost, or refused because the primary knew the target dead); and
 * ignore notices for tasks it does not hold waiting (repeats after a take-over).
 *
 * Owns the local shard (the records it is primary or backup for), the table of
 * requests awaiting replies, the actions waiting for acknowledgements and the messages
 * waiting for this node to learn of a death.  Called on one loop thread by
 * core/runtime/node.c (self = its node id) and by core/client/client.c and submit.c
 * (self = KVS_NO_SHARD: a client stores nothing and only inserts).
 */
#ifndef JACKDAW_KVS_H
#define JACKDAW_KVS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/wbuf.h"
#include "core/kvs/shard.h"
#include "core/kvs/tmd.h"
#include "core/kvs/view.h"

#define KVS_NO_SHARD UINT32_MAX
/* Copies of each record when the daemons are not told (--replicas): issue 15 asks that
 * losing one node loses nothing by default.  The client assumes it too when the cluster
 * file does not say. */
#define KVS_DEFAULT_REPLICAS 2u

enum kvs_event { KVS_EVENT_READY = 0, KVS_EVENT_CANCEL = 1 };

/* What the store tells a task's holder.  `parents` lists where each parent's output
 * object is (READY only); borrowed for the call. */
struct kvs_notice {
    uint64_t key;
    uint8_t event;          /* enum kvs_event */
    uint64_t all_data_size;
    int64_t t_ready;
    uint32_t nparents;
    const struct tmd_parent *parents;
};

struct kvs_transport {
    void *ctx;
    /* Begins a message to `node` (never self); returns the payload buffer. */
    struct wbuf *(*msg_begin)(void *ctx, uint32_t node, uint16_t type, size_t *at);
    /* May be NULL.  As msg_begin, but may extend the last message to `node` when it is of
     * `type` and under `most` payload bytes (conn_msg_join): REPLICATE payloads are
     * sequences of writes, so a pass's writes to a backup go as one message. */
    struct wbuf *(*msg_join)(void *ctx, uint32_t node, uint16_t type, size_t most, size_t *at);
    void (*msg_end)(void *ctx, uint32_t node, size_t at);
    /* May be NULL (then msg_end).  As msg_end, for a message that may wait a few ms for
     * company (conn_msg_end_late): a backup's copy of a completion nothing waits on. */
    void (*msg_end_late)(void *ctx, uint32_t node, size_t at);
    /* The store tells this node, the holder, that a task is ready or cancelled. */
    void (*notify)(void *ctx, const struct kvs_notice *notice);
};

/*
 * Reply to lookup and cas.  status: lookup 0 found / -ENOENT; cas 1 swapped / 0 not
 * swapped / -ESTALE (the run's attempt is not the record's: a late completion) /
 * -ENOENT; either -EHOSTDOWN when every node is down.  `tmd` is the record after the
 * operation (borrowed for the call), NULL unless status >= 0.
 */
typedef void (*kvs_reply_fn)(void *arg, int status, const struct tmd *tmd);

struct kvs;

/* R = 1 (no replication) until kvs_set_replicas; the daemons set KVS_DEFAULT_REPLICAS
 * unless told otherwise. */
struct kvs *kvs_create(uint32_t self, uint32_t nodes, const struct kvs_transport *t);
void kvs_destroy(struct kvs *kvs);
/*
 * Replicas of each key, 1 to KVS_MAX_REPLICAS (fewer nodes, fewer replicas), the same
 * on every node.  Before the first operation: -EBUSY after it, -EINVAL out of range.
 */
int kvs_set_replicas(struct kvs *kvs, uint32_t replicas);
/* The hash owner of a key, whoever is alive. */
uint32_t kvs_owner(const struct kvs *kvs, uint64_t key);
/* The key's primary in this store's view; KVS_NO_SHARD when every node is down. */
uint32_t kvs_primary(const struct kvs *kvs, uint64_t key);
/* Records in the local shard: those it is primary for and its backup copies (which
 * it builds first: a backup keeps them as bytes until needed, kvs_backlog.c). */
size_t kvs_local_records(struct kvs *kvs);
/* This store's copy of a record, primary or backup (borrowed until the next call into
 * the store), or NULL.  Builds the backup copies first, as kvs_local_records. */
const struct tmd *kvs_local_record(struct kvs *kvs, uint64_t key);
/* kvs_local_records without building anything, for a node's status: a kept copy counts
 * from its insert until its job is forgotten (a copy removed meanwhile still counts). */
size_t kvs_records_held(const struct kvs *kvs);

/* Takes over *t's arrays (it is zeroed).  -EEXIST when a local record exists,
 * -EHOSTDOWN when every node is down. */
int kvs_insert(struct kvs *kvs, struct tmd *t);
int kvs_lookup(struct kvs *kvs, uint64_t key, kvs_reply_fn fn, void *arg);
int kvs_remove(struct kvs *kvs, uint64_t key);
/* PARENT: node ran the parent whose output `object` has `value` bytes.  0, or -EINVAL,
 * -ENOENT, -EHOSTDOWN; a RESUBMIT applied on this node, the record's primary, returns
 * shard_append's 1 (done) or 0 (refused). */
int kvs_append(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node, uint64_t value,
               uint64_t object);
/* fn may be NULL (no reply wanted).  `run`, for a swap to a final status, says who ran
 * the task, which attempt, when, and what it produced. */
int kvs_cas(struct kvs *kvs, uint64_t key, uint8_t field, uint64_t expected, uint64_t desired,
            const struct tmd_run *run, kvs_reply_fn fn, void *arg);
/* As kvs_cas, for a completion nothing urgent waits on (a task with no children: its
 * answer only tells the client): a request to another node may wait a few ms for
 * company (kvs_transport.msg_end_late). */
int kvs_cas_late(struct kvs *kvs, uint64_t key, uint8_t field, uint64_t expected,
                 uint64_t desired, const struct tmd_run *run, kvs_reply_fn fn, void *arg);
/* The job is over and its client has the summary: every shard forgets its records
 * (shard.h, forget), primary and backup copies alike.  Sent to every live node; nothing
 * is answered.  A final record whose CAS answer still waits for the backups goes when
 * the answer leaves. */
void kvs_forget_job(struct kvs *kvs, uint32_t job);

/*
 * Handles a MSG_KVS_* message from node `from` (KVS_NO_SHARD: relayed from a client).
 * Returns 0, or -EBADMSG with *reason set when the payload is malformed (the caller
 * drops the peer).  Messages from a node declared down are ignored.
 */
int kvs_handle(struct kvs *kvs, uint32_t from, uint16_t type, struct rbuf *payload,
               const char **reason);

/*
 * Sends the acknowledgements of the replicated writes received since the last call.
 * The node calls it once per loop pass, before its batches go out; without it, at R > 1,
 * no write ever counts.  Cheap when there is nothing to say.
 */
void kvs_flush(struct kvs *kvs);
/*
 * Deflates the backup copies this node keeps as bytes (kvs_backlog.c) that have stayed
 * unread since the last call, at most about `budget` bytes of them; returns the bytes
 * packed, and in *more whether some wait for a later call.  The node calls it on a
 * timer, so that a big job's cold copies shrink while short jobs are never packed.
 */
size_t kvs_compact(struct kvs *kvs, size_t budget, bool *more);

/* Calls fn(arg) once every write this store applied so far has reached every live
 * backup (at once if none is missing, or at R = 1).  E.g. before answering a client's
 * sync, so that what it inserted survives one death. */
void kvs_barrier(struct kvs *kvs, void (*fn)(void *arg), void *arg);

/* ---- failures (issue 15) ------------------------------------------------------------ */

/*
 * `node` is dead: take over, re-issue and re-send as the header comment says.
 * Idempotent.  Callbacks of re-sent requests may run before it returns.  -EINVAL when
 * `node` is this store's own or outside the membership.
 */
int kvs_set_down(struct kvs *kvs, uint32_t node);
bool kvs_is_down(const struct kvs *kvs, uint32_t node);

/* A record whose holder is dead (borrowed for the call). */
typedef void (*kvs_orphan_fn)(void *arg, const struct tmd *rec);

/*
 * Calls fn for every record this store is primary for that is not final (DONE,
 * FAILED, CANCELLED) and whose holder is `dead`, or any node down when `dead` is
 * KVS_NO_SHARD: the tasks to run again.  Call it with KVS_NO_SHARD after each
 * kvs_set_down: records taken over from the node that just died may be held by one
 * that died before.  Every live store lists its own, so each orphan is listed once in
 * the cluster.  fn may call kvs_resubmit; records it finds are those of the moment of
 * the call.  Returns how many, or -EINVAL when `dead` is not down.
 */
int kvs_orphans(struct kvs *kvs, uint32_t dead, kvs_orphan_fn fn, void *arg);

/*
 * Hands task `key` to `holder` as attempt `attempt` + 1, if its record is not final
 * and still at `attempt` (an append, KVS_FIELD_RESUBMIT: holder, history, attempt;
 * RUNNING goes back to READY).  From then on a completion of the older attempt is
 * refused.  This store primary for the key: 1 done, 0 refused (the record moved on, or
 * `holder` is down), -ENOENT; otherwise sent to the primary, 0.  -EINVAL for a holder
 * outside the membership.  (The primary ignores a HISTORY append to a node it knows
 * down, for the same reason: the task stays its mover's.)
 */
int kvs_resubmit(struct kvs *kvs, uint64_t key, uint32_t attempt, uint32_t holder);

/*
 * Calls fn for every record this store is primary for that is not final, is held by a
 * live node, and whose last move came from `dead`: the mover records a move (HISTORY)
 * when it sends the task, so a mover that died may have recorded a move whose task
 * never arrived, or arrived after its receiver learned of the death and ignored it.
 * The node asks each holder whether it has the task and resubmits those it has not
 * (node_member.c).  Returns how many, or -EINVAL when `dead` is not down.
 */
int kvs_moved_from(struct kvs *kvs, uint32_t dead, kvs_orphan_fn fn, void *arg);

/*
 * Lineage (node_recover.c): task `key` is DONE, ran on `runner`, which is down, and its
 * output is needed again.  If this store is the key's primary and the record is DONE by
 * `runner` at `attempt`, it becomes READY as attempt + 1, held by `runner` and flagged
 * TMD_FLAG_REOPENED (KVS_FIELD_REOPEN, replicated like every write): the caller then
 * hands it on as a dead holder's orphan.  1 done, 0 not (not the primary here, runner
 * not down, or the record moved on: re-opened or recomputed already), -ENOENT, -EINVAL.
 */
int kvs_reopen(struct kvs *kvs, uint64_t key, uint32_t attempt, uint32_t runner);

/*
 * Calls fn for every record of job `job` this store is primary for whose status is
 * final: what a client attaching to a running job learns of the ends it missed (every
 * live store lists its own, so each end is listed once in the cluster).  A scan of the
 * shard, O(records); fn must not call into the store.  Returns how many.
 */
size_t kvs_job_ends(const struct kvs *kvs, uint32_t job, kvs_orphan_fn fn, void *arg);

/*
 * Calls fn for every final record this store is primary for whose end the dead node,
 * or any node down, was to report: it ran the task (DONE, FAILED), or held it when it
 * was cancelled.  The node reported an end once its record took it, and its notices to
 * the client wait a few ms for company (conn_msg_end_late), so it may have died between
 * the two: the record's primary reports those ends again to the job's client, which
 * counts an end once.  Any node down, not only `dead`: when two die together, the
 * records of the first whose new primary was the second come to this store only with
 * the second's death, and nobody listed them at the first's.  A scan of the shard,
 * O(records), once per death; fn must not call into the store.  Returns how many.
 */
size_t kvs_ends_lost_with(const struct kvs *kvs, uint32_t dead, kvs_orphan_fn fn, void *arg);

#endif
