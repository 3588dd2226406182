/*
 * tmd — task metadata, the record the metadata store keeps per task (papers 000 §III.B,
 * 002 §2.2: status, num_wait_parent, parent_list, children, data object and sizes,
 * phase timestamps, history of holders), and its wire encoding.
 *
 * For running a task again when its holder dies (issue 15), the record also keeps the
 * task's own encoding (`spec`, proto_put_task bytes, opaque here, set by the client at
 * insert) and the attempt that holds it now: a completion counts only when it reports
 * the record's attempt.
 *
 * Owns the record's arrays.  Used by the shard (storage), the kvs client (messages) and
 * the client library (building records from a workload).  Laid out for memory, since a
 * daemon holds one per waiting task (issue 19: 200 bytes a waiting task, all
 * structures included, with a backup's copy): the record is 72 bytes, and with a noop's
 * spec after it one 96-byte allocation; a single child is kept in place, more in an
 * array; what a record gains later (its run, its moves, its finished parents, a new
 * attempt) is in a struct tmd_late made when the first of it comes; the count of
 * finished parents is not stored, it is num_parents - num_wait_parent.
 *
 * Wire form: the fields in the order of tmd_put, compact (issue 15: every record crosses
 * the wire to its primary and again to each backup, which keeps the bytes): counts,
 * node ids and sizes as varints, and the fields that are zero in a fresh record (runner,
 * sizes, the three later times, finished parents, history) only when a mask byte says
 * they are there.  A record with a spec, an attempt or flags sets TMD_WIRE_EXT in the
 * status byte and carries them last.  One spelling per record: tmd_get refuses a longer
 * varint or a mask bit for a zero.  Only TMD_WIRE_FLAGS travel: the others belong to the
 * shard that set them.
 */
#ifndef JACKDAW_TMD_H
#define JACKDAW_TMD_H

#include <stdint.h>

#include "core/base/wbuf.h"

struct tmd_parent {
    uint64_t object;        /* the parent's output object (named by the parent's key) */
    uint64_t bytes;         /* its size */
    uint32_t node;          /* node that ran the parent and holds the object */
    uint32_t pad_;
};

/* What a record gains once it has moved, a parent has ended, it was handed on or it
 * ran: apart, so that a waiting record that has none of it (most of them, at 10^6
 * waiting tasks) does not carry its 64 bytes (tmd_late, tmd_late_mut). */
struct tmd_late {
    uint64_t data_size;     /* this task's output object; its name is the task key */
    uint64_t all_data_size; /* sum of the parents' objects: what the task must read */
    int64_t t_start, t_end; /* wall ns; 0 = not yet */
    struct tmd_parent *parent_list; /* owned, tmd_parents_done() entries; NULL until one */
    uint32_t *history;      /* owned, num_history node ids, oldest first; NULL if never moved */
    uint32_t runner;        /* node that ran it, once it ran */
    uint32_t attempt;       /* 0 for the first; +1 each time the task is handed to a new
                               holder because its holder died (KVS_FIELD_RESUBMIT) */
    uint16_t num_history;   /* holders recorded (at most TMD_MAX_HISTORY): the first
                               holder, then one per move, so that the node a task last
                               moved from is history[num_history - 2] */
};

struct tmd {
    uint64_t key;
    int64_t t_submit, t_ready; /* wall ns; 0 = not yet */
    union {
        uint64_t *children; /* owned array of keys when num_children > 1 */
        uint64_t child;     /* the key itself when num_children == 1 */
    };
    struct tmd_late *late;  /* owned; NULL while all its fields are 0 */
    uint8_t *spec;          /* owned, spec_len bytes: the task as the client submitted it
                               (proto_put_task); NULL when the client sent none */
    uint32_t spec_len;
    uint32_t num_children;
    uint32_t num_parents;
    uint32_t num_wait_parent;
    uint32_t holder;        /* node that holds the task now (receives notifications) */
    uint8_t status;         /* enum task_status */
    uint8_t flags;          /* enum tmd_flags */
};

enum tmd_flags {
    /* A parent's completion was re-issued to this record after a take-over: from then on
     * a parent already in parent_list is not counted again (shard.c). */
    TMD_FLAG_REPLAYED = 1u << 0,
    /* Shard-local, never sent: the record's job was forgotten before the record was final
     * or before its status swap was answered; it goes once both are so (shard_settle).
     * A bit here rather than a byte of its own: a byte would make the record 128 bytes. */
    TMD_FLAG_FORGET = 1u << 1,
    /* The task was DONE and its output was lost with its runner: it runs again to
     * recompute it (KVS_FIELD_REOPEN).  Its client counted its first end; a later one is
     * for its children only.  Travels, so that a backup that takes over knows it. */
    TMD_FLAG_REOPENED = 1u << 2,
    /* Local, never sent: `spec` is not an allocation of its own — it lies in the bytes
     * of the message it was read from (tmd_get_lent) or after the record in the
     * record's own allocation (shard_insert) — so it is never freed alone. */
    TMD_FLAG_SPEC_LENT = 1u << 3,
};

#define TMD_MAX_HISTORY 65535u
/* In the status byte on the wire: spec, attempt and flags follow the history. */
#define TMD_WIRE_EXT 0x80u
/* The flags a record carries on the wire. */
#define TMD_WIRE_FLAGS ((uint8_t)(TMD_FLAG_REPLAYED | TMD_FLAG_REOPENED))

static inline uint32_t tmd_parents_done(const struct tmd *t)
{
    return t->num_parents - t->num_wait_parent;
}

/* The record's later fields, all 0 when it has none yet (never NULL). */
extern const struct tmd_late tmd_late_none;
static inline const struct tmd_late *tmd_late(const struct tmd *t)
{
    return t->late ? t->late : &tmd_late_none;
}
/* The same, to write: made (zeroed) on first use. */
struct tmd_late *tmd_late_mut(struct tmd *t);

static inline uint64_t tmd_child(const struct tmd *t, uint32_t i)
{
    return t->num_children == 1 ? t->child : t->children[i];
}

/* Sets the children from an array (copied); keeps a single child in place. */
void tmd_set_children(struct tmd *t, const uint64_t *keys, uint32_t n);
/* Sets the task's encoding (copied; len 0 clears it). */
void tmd_set_spec(struct tmd *t, const void *spec, uint32_t len);

/* What a finished run adds to the record (the CAS to DONE/FAILED carries it). */
struct tmd_run {
    uint32_t node;
    uint32_t attempt;       /* the attempt that ran: a CAS whose attempt is not the
                               record's is refused (-ESTALE) */
    int64_t t_start, t_end;
    uint64_t data_size;
};

void tmd_fini(struct tmd *t);
void tmd_put(struct wbuf *b, const struct tmd *t);
/* 0 or -EBADMSG; on error nothing needs freeing. */
int tmd_get(struct rbuf *r, struct tmd *t);
/* tmd_get, with the spec left in r's bytes (TMD_FLAG_SPEC_LENT), valid while they are:
 * a record the shard copies at once saves the spec's allocation. */
int tmd_get_lent(struct rbuf *r, struct tmd *t);
/* Reads past one encoded record, checking it as tmd_get does (tmd_get takes exactly what
 * it accepts), without building it: a backup keeps the bytes (kvs_backlog.c).  0 and
 * *key, or -EBADMSG. */
int tmd_skip(struct rbuf *r, uint64_t *key);

#endif
