/*
 * kvs_impl — the store's state, shared by the three files of the kvs module: kvs.c
 * (operations, routing, messages), kvs_replica.c (forwarding to backups, their
 * acknowledgements, the actions waiting for them) and kvs_takeover.c (a node's death).
 * Functions named kvs__ are the module's internals, called only by those files.
 */
#ifndef JACKDAW_KVS_IMPL_H
#define JACKDAW_KVS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/u64map.h"
#include "core/kvs/kvs.h"
#include "core/kvs/shard.h"
#include "core/kvs/view.h"

/* A request sent to a primary, waiting for its reply; kept whole so that it can be
 * sent again to the next primary if this one dies first. */
struct pending {
    kvs_reply_fn fn;
    void *arg;
    uint64_t key;
    uint32_t to;            /* the node asked */
    uint16_t type;          /* MSG_KVS_LOOKUP or MSG_KVS_CAS */
    uint8_t field, has_run;
    bool late;              /* may wait for company (kvs_cas_late) */
    uint64_t expected, desired;
    struct tmd_run run;
};

struct defer_need {
    uint32_t node;
    uint64_t seq;           /* REPLICATE messages the backup must have acknowledged */
};

enum defer_kind {
    DEFER_REPLY_MSG,        /* a reply message to `to` */
    DEFER_REPLY_LOCAL,      /* a local request's callback: fn(arg, status, record) */
    DEFER_NOTICE,           /* a notice to holder `to` (this node or another) */
    DEFER_BARRIER,          /* kvs_barrier's callback */
};

#define DEFER_INLINE 2

/*
 * An action held back until backups have acknowledged what it reports.  It names the
 * record, not a copy: when it leaves it reads the record as it is then (a write that
 * counts stays; what came after it is newer still).  An answer keeps the record's
 * address with the shard's count of frees: while no record was freed it reads the
 * record there without looking the key up again (kvs__held_record).
 */
struct deferred {
    uint8_t kind;           /* enum defer_kind */
    uint8_t event;          /* NOTICE: enum kvs_event */
    uint16_t type;          /* REPLY_MSG: MSG_KVS_CAS_REPLY */
    uint32_t to;            /* REPLY_MSG: the requester; NOTICE: the holder */
    uint32_t req;           /* REPLY_MSG */
    int32_t status;         /* REPLY_* */
    uint64_t key;
    uint64_t bytes;         /* NOTICE: all_data_size */
    int64_t when;           /* NOTICE: t_ready */
    const struct tmd *rec;  /* REPLY_*: the record when held, NULL when there was none */
    uint64_t frees;         /* REPLY_*: shard.frees when held */
    kvs_reply_fn fn;        /* REPLY_LOCAL */
    void (*barrier)(void *arg);
    void *arg;              /* REPLY_LOCAL, BARRIER */
    uint32_t nneed;
    struct defer_need need[DEFER_INLINE];
    struct defer_need *more; /* owned: all nneed entries when nneed > DEFER_INLINE */
};

/* A backup's copies of one job's records, kept as the REPLICATE payloads their primary
 * sent until someone needs the records (kvs_backlog.c). */
/* A log chunk: (u32 length, payload) in the order received, BACKLOG_CHUNK bytes or one
 * payload; once cold, deflated (kvs_compact). */
struct backlog_chunk {
    struct wbuf buf;        /* owned: the payloads, or their deflated bytes when packed */
    uint32_t raw_len;       /* the payloads' length once packed; 0 while not */
    uint8_t state;          /* enum in kvs_backlog.c: filling, cold, packed, kept raw */
};

struct backlog {
    uint32_t job;
    struct backlog_chunk *chunks; /* owned, nchunks, oldest first */
    size_t nchunks, chunks_cap;
    size_t records;         /* whole records and inserts among them */
    size_t inserts;         /* inserts among them: each a new record */
    size_t finals;          /* swaps to a final status among them */
    bool mixed;             /* an operation other than insert, a non-final append and a
                               swap to a final status; or the job's copies were built
                               before: the log alone cannot say all its records are final */
};

/* A message for a key this node is not the primary of (yet). */
struct parked {
    uint32_t from;
    uint16_t type;
    uint8_t *bytes;         /* owned */
    size_t len;
};

struct kvs {
    uint32_t self, nodes;
    struct kvs_transport t;
    struct shard shard;
    struct u64map pending;  /* req -> struct pending * */
    uint32_t next_req;
    struct kvs_effects work; /* effects not yet carried out */
    int draining;
    int used;               /* an operation ran: R is fixed */
    struct view view;

    /* Per node, the REPLICATE messages sent to it and how many it acknowledged, and
     * those received from it and how many this store acknowledged (owned, `nodes`
     * entries each; NULL for a client). */
    uint64_t *sent, *acked, *received, *ack_sent;
    int ack_due;
    struct kvs_effects backup_fx; /* effects of a backup's appends, dropped */

    /* The live backups of the keys this store is primary for (kvs_replica.c's
     * backups()): a write forwards to them and its answer then waits for them. */
    uint32_t memo_ndown, memo_n; /* valid while view.ndown is memo_ndown; UINT32_MAX:
                                    nothing worked out */
    uint32_t memo_to[KVS_MAX_REPLICAS];

    struct deferred *defer; /* owned FIFO: [defer_head, defer_len) */
    size_t defer_head, defer_len, defer_cap;
    int releasing;

    struct parked *parked;  /* owned */
    size_t nparked, parked_cap, parked_bytes;

    struct backlog *backlogs; /* owned, nbacklogs entries */
    size_t nbacklogs, backlogs_cap;
    bool eager;             /* backups build their copies at once from now on */
};

static inline bool kvs__is_primary(const struct kvs *kvs, uint64_t key)
{
    return kvs->self != KVS_NO_SHARD && view_primary(&kvs->view, key) == kvs->self;
}

/* Whether an action may have to wait for backups (never at R = 1: the fast path). */
static inline bool kvs__may_hold(const struct kvs *kvs)
{
    return kvs->view.replicas > 1 || kvs->defer_head < kvs->defer_len;
}

/* kvs.c */
/* Applies an append as the primary (forwarding it) and carries out its effects;
 * returns shard_append's result. */
int kvs__append_local(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node,
                      uint64_t value, uint64_t object);
/* The append routed to the key's primary, wherever it is. */
void kvs__append_any(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node,
                     uint64_t value, uint64_t object);
void kvs__notify(struct kvs *kvs, uint32_t holder, uint64_t key, uint8_t event, uint64_t bytes,
                 int64_t when);
void kvs__drain(struct kvs *kvs);
/* A request whose primary died: to the new one, or answered here.  Takes p. */
void kvs__resend(struct kvs *kvs, uint32_t req, struct pending *p);
/* Sends now what a deferred action says (the record read now). */
void kvs__send_notice(struct kvs *kvs, uint32_t holder, uint64_t key, uint8_t event,
                      uint64_t bytes, int64_t when);
/* `rec` is the record the answer is about as it is now, NULL when there is none. */
void kvs__send_reply(struct kvs *kvs, uint32_t to, uint16_t type, uint32_t req, int status,
                     const struct tmd *rec);
/* The record a held answer is about, as it is now: where it was, unless a record was
 * freed meanwhile (then looked up: it may be gone). */
static inline const struct tmd *kvs__held_record(const struct kvs *kvs,
                                                 const struct deferred *d)
{
    if (d->frees == kvs->shard.frees)
        return d->rec;
    return shard_get(&kvs->shard, d->key);
}
/* A status swap on `key` was answered, or needs no answer: its record goes if its job
 * was forgotten and it is final (shard_settle), unless another answer about it is still
 * held back. */
void kvs__settle(struct kvs *kvs, uint64_t key);

/* kvs_replica.c */
void kvs__replica_init(struct kvs *kvs);
void kvs__replica_fini(struct kvs *kvs);
/* Forwarding to the live backups of `key` (none at R = 1: callers skip the call). */
void kvs__forward_put(struct kvs *kvs, uint64_t key);
/* A client's insert as the client encoded it (`len` bytes), applied here at `now`: the
 * bytes go on as they came, rather than the record encoded again. */
void kvs__forward_insert(struct kvs *kvs, uint64_t key, const uint8_t *bytes, size_t len,
                         int64_t now);
void kvs__forward_put_to(struct kvs *kvs, uint32_t node, const struct tmd *rec);
void kvs__forward_append(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node,
                         uint64_t value, uint64_t object, int64_t now);
/* Ends a message to `node` through the transport; `late`: it may wait for company
 * (msg_end_late, when the transport has one). */
void kvs__msg_end(struct kvs *kvs, uint32_t node, size_t at, bool late);
void kvs__forward_status(struct kvs *kvs, uint64_t key, uint8_t status,
                         const struct tmd_run *run, bool late);
void kvs__forward_remove(struct kvs *kvs, uint64_t key);
/*
 * Holds action *d back (copied) until the backups of its key have acknowledged what
 * they were sent so far, behind any action held before it; false when it may be carried
 * out now instead (at R = 1 always).
 */
bool kvs__hold(struct kvs *kvs, struct deferred *d);
/* Actions that waited for `dead` wait instead for the backups of the new set (sent the
 * record by the take-over), so that a write still counts only once every live replica
 * has it. */
void kvs__renew_needs(struct kvs *kvs, uint32_t dead);
/* Lets out, in order, the actions whose backups have acknowledged. */
void kvs__release(struct kvs *kvs);
/* Whether a CAS answer about `key` is held back. */
bool kvs__reply_held(const struct kvs *kvs, uint64_t key);
/* Job `job` is being forgotten: the records whose CAS answers are held back are marked
 * to go when their answers leave (shard_forget_later), not now. */
void kvs__forget_held(struct kvs *kvs, uint32_t job);
int kvs__handle_replicate(struct kvs *kvs, uint32_t from, struct rbuf *r, const char **reason);
/* Applies one REPLICATE payload to the shard, as a backup does at once; -EBADMSG. */
int kvs__apply_replicate(struct kvs *kvs, struct rbuf *r, const char **reason);

/* kvs_backlog.c */
/*
 * Keeps a checked REPLICATE payload (`len` bytes at `bytes`, about `key`, from primary
 * `from`) for later instead of applying it; false when it must be applied now.
 */
bool kvs__backlog_keep(struct kvs *kvs, uint32_t from, uint64_t key, const uint8_t *bytes,
                       size_t len);
/* Whole records and inserts kept, all jobs. */
size_t kvs__backlog_records(const struct kvs *kvs);
/* Job `job` is forgotten: its kept copies are dropped when the log shows every record
 * in it final (they would go at once), built into the shard otherwise. */
void kvs__backlog_forget(struct kvs *kvs, uint32_t job);
/* Builds every kept copy into the shard; with `for_good`, copies are built at once from
 * then on (after a death). */
void kvs__backlog_build_all(struct kvs *kvs, bool for_good);
void kvs__backlog_fini(struct kvs *kvs);
/* kvs_compact's work (kvs.h). */
size_t kvs__backlog_compact(struct kvs *kvs, size_t budget, bool *more);
int kvs__handle_ack(struct kvs *kvs, uint32_t from, struct rbuf *r, const char **reason);

/* kvs_takeover.c */
/* Keeps a message for a key this node is not primary for; -EBADMSG past the limit. */
int kvs__park(struct kvs *kvs, uint32_t from, uint16_t type, const struct rbuf *start,
              const char **reason);
/* A completion recorded while a node is down: re-sends it to children the runner may
 * have sent it to a dead node for. */
void kvs__reissue_if_rerouted(struct kvs *kvs, const struct tmd *rec);

#endif
