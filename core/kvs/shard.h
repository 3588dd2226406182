/*
 * shard — one daemon's part of the metadata store: the records whose keys hash to this
 * node, and the store's semantics on them.  Pure: no I/O, no clock; the caller passes
 * times in and carries out the effects returned.
 *
 * Semantics the scheduler relies on:
 *   insert   a new record; status WAITING, or READY when it has no parents.
 *   append   PARENT (node, bytes, object): one parent finished; records where its object is,
 *            adds its size to all_data_size, decrements num_wait_parent, and at zero
 *            marks the task READY and emits EFFECT_READY for the holder — the
 *            notification that replaces polling.
 *            PARENT_FAILED: an ancestor failed; a WAITING task becomes CANCELLED,
 *            emitting EFFECT_CANCEL for its holder and EFFECT_CANCEL_CHILD for each
 *            child, so the whole subtree is cancelled wherever it lives.
 *            HISTORY (node): the task moved; appends to history, sets holder.  The
 *            same move said again (the last entry is `node`, and it holds the task)
 *            changes nothing, so a holder may re-assert its moved-in tasks after a
 *            primary's death: a move is fire-and-forget, and one the dead primary had
 *            not forwarded is lost with it.
 *            REMOVE: job removal (paper 002 §2.2.2).  A task that had not finished is
 *            cancelled with its whole subtree, as PARENT_FAILED does, whatever its
 *            status (waiting, ready or running: the holder stops or drops it); a
 *            finished task's record is simply removed.
 *            RESUBMIT (node, value = attempt): the holder died; if the record is not
 *            final and still at that attempt, the task goes to `node` as attempt + 1
 *            (holder and history as HISTORY; RUNNING goes back to READY).  Returns 1
 *            when it did, 0 when the record had moved on.
 *            REOPEN (node, value = attempt): the output of a DONE task was lost with
 *            its runner `node`, which died; if the record is DONE, ran on `node` and is
 *            still at that attempt, it becomes READY again as attempt + 1, held by the
 *            dead runner (so that the node's orphan hand-over runs it elsewhere, as for
 *            any dead holder's task) and marked TMD_FLAG_REOPENED: its next end is a
 *            recomputation, which its client does not count again.  Returns 1 when it
 *            did, 0 when not (re-opened already, or recomputed: the runner differs).
 *   cas      STATUS: compare-and-swap of the status; a swap to a final status also
 *            records the run (node, attempt, start, end, output size).  A run whose
 *            attempt is not the record's is refused (-ESTALE): a completion counts once,
 *            by the attempt that holds the task.  The same completion asked again by
 *            its runner (a request repeated to a new primary) answers 1 and changes
 *            nothing.
 *   forget   the job is over (its client has every task's end and printed the
 *            summary): its records go, so that a cluster running job after job keeps
 *            its size.  A record not final yet goes once its status swap has been
 *            answered (shard_settle): a runner reports a task's end to the client
 *            before its swap reaches the shard, so the client may ask first.  Every
 *            node is told, so every copy goes: a backup's record not final yet goes
 *            when the primary's status reaches it, and a record installed whole
 *            (shard_put) for a job forgotten here is marked, or not kept if final.
 * Duplicate appends after a final status are ignored, so a late message cannot
 * resurrect a finished task.  A PARENT append may arrive twice after a take-over (the
 * dead primary's and the new one's, see kvs.h): one flagged KVS_FIELD_REPLAY marks the
 * record, and from then on a parent already in its parent_list is not counted again.
 *
 * Backups (replicas that are not the primary) apply the primary's operations in its
 * order, with its times, and ignore the effects; shard_put and shard_set_status install
 * a whole record or a status as the primary has it (shard_put keeps no record of a
 * forgotten job that is final: see forget).
 *
 * Owns the records (struct tmd, heap-allocated, indexed by a keymap).  Called by
 * core/kvs/kvs.c only.
 */
#ifndef JACKDAW_SHARD_H
#define JACKDAW_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/keymap.h"
#include "core/kvs/tmd.h"

enum kvs_field {
    KVS_FIELD_STATUS = 0,
    KVS_FIELD_PARENT = 1,
    KVS_FIELD_PARENT_FAILED = 2,
    KVS_FIELD_HISTORY = 3,
    KVS_FIELD_REMOVE = 4,
    KVS_FIELD_RESUBMIT = 5,
    KVS_FIELD_REOPEN = 6,
    KVS_FIELD_COUNT
};

/* Or'ed into an append's field: the store re-issues a completion after a take-over. */
#define KVS_FIELD_REPLAY 0x80u

enum kvs_effect_kind {
    KVS_EFFECT_READY = 0,        /* tell `node` (the holder) that `key` is ready */
    KVS_EFFECT_CANCEL = 1,       /* tell `node` (the holder) that `key` is cancelled */
    KVS_EFFECT_CANCEL_CHILD = 2, /* append PARENT_FAILED to `key` (a child) */
};

struct kvs_effect {
    uint8_t kind;
    uint32_t node;
    uint64_t key;
    uint64_t value;         /* READY: all_data_size */
    int64_t when;           /* READY: t_ready */
};

struct kvs_effects {
    struct kvs_effect *v;   /* owned */
    size_t len, cap;
};

/* Jobs a shard remembers having forgotten, so that a late message for a record that
 * went with its job is not taken for a lost record (kvs.c logs the latter). */
#define SHARD_FORGOTTEN_JOBS 256

struct shard {
    struct keymap records;  /* struct tmd * (owned), by their key */
    size_t marked;          /* records with TMD_FLAG_FORGET, waiting to be final */
    uint32_t forgotten[SHARD_FORGOTTEN_JOBS]; /* the last jobs forgotten, a ring */
    uint64_t nforgotten;    /* jobs forgotten so far; the ring's next slot */
    uint64_t memo_nforgotten; /* shard_put's last answer of shard_forgot: for memo_job, */
    uint32_t memo_job;        /* while nforgotten was memo_nforgotten */
    bool memo_forgot;
    uint64_t frees;         /* records freed so far: a record pointer taken while it was n
                               still points at that record while it is n */
};

void shard_init(struct shard *s);
void shard_fini(struct shard *s);
static inline size_t shard_len(const struct shard *s)
{
    return keymap_len(&s->records);
}
/* Iteration over the records, as u64map_next (no insertion or removal meanwhile). */
static inline size_t shard_next(const struct shard *s, size_t pos, uint64_t *key, void **rec)
{
    pos = keymap_next(&s->records, pos, rec);
    if (pos)
        *key = keymap_key(*rec);
    return pos;
}
/* Takes over *t's arrays on success (and zeroes *t), and copies a lent spec
 * (TMD_FLAG_SPEC_LENT) into the record's allocation; -EEXIST leaves *t to the caller. */
int shard_insert(struct shard *s, struct tmd *t, int64_t now);
/* What shard_insert makes of a client's record at time `now` (status, times): a backup
 * sent the client's bytes does the same before shard_put. */
void shard_new_record(struct tmd *rec, int64_t now);
/* Installs *t as it is, replacing any record of its key; takes over its arrays. */
void shard_put(struct shard *s, struct tmd *t);
struct tmd *shard_get(const struct shard *s, uint64_t key);
int shard_remove(struct shard *s, uint64_t key);
/* `field` may carry KVS_FIELD_REPLAY.  0 (RESUBMIT: 1 done, 0 refused), -ENOENT, or
 * -EINVAL (field not appendable). */
int shard_append(struct shard *s, uint64_t key, uint8_t field, uint32_t node, uint64_t value,
                 uint64_t object, int64_t now, struct kvs_effects *fx);
/* 1 swapped, 0 not (status differs), -ESTALE (the run's attempt is not the record's),
 * -ENOENT, -EINVAL.  `from` is the node asking (a repeat is recognised by it).  *rec,
 * unless rec is NULL, is the record found (NULL with -ENOENT): its answer reads it. */
int shard_cas(struct shard *s, uint64_t key, uint8_t field, uint64_t expected, uint64_t desired,
              const struct tmd_run *run, uint32_t from, struct tmd **rec);
/* A backup applies a swap its primary made.  0 or -ENOENT. */
int shard_set_status(struct shard *s, uint64_t key, uint8_t status, const struct tmd_run *run);
/* Forgets job `job`: drops its final records, marks the others to go once final (and
 * answered).  Returns the number of records dropped now. */
size_t shard_forget_job(struct shard *s, uint32_t job);
/* Marks the record of `key`, final or not, to go at shard_settle rather than at the next
 * shard_forget_job: an answer about it is still held back (kvs.c).  Nothing when there
 * is no such record. */
void shard_forget_later(struct shard *s, uint64_t key);
/* After a status swap on `key` was answered (on a backup: applied): drops the record
 * when it is final and its job was forgotten. */
void shard_settle(struct shard *s, uint64_t key);
/* True when `job` is one of the last SHARD_FORGOTTEN_JOBS jobs forgotten. */
bool shard_forgot(const struct shard *s, uint32_t job);

void shard_effects_push(struct kvs_effects *fx, const struct kvs_effect *e);

#endif
