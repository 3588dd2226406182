/*
 * tmd — task metadata, the record the metadata store keeps per task (papers 000 §III.B,
 * 002 §2.2: status, num_wait_parent, parent_list, children, data object and sizes,
 * phase timestamps, history of holders), and its wire encoding.
 *
 * Owns the record's arrays.  Used by the shard (storage), the kvs client (messages) and
 * the client library (building records from a workload).  Laid out for memory, since a
 * daemon holds one per waiting task (the target is 300 bytes a waiting task, all
 * structures included): the record is 104 bytes; a single child is kept in place, more
 * in an array; parent_list and history are allocated only when the first parent
 * finishes / the task first moves; the count of finished parents is not stored, it is
 * num_parents - num_wait_parent.
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

struct tmd {
    uint64_t key;
    uint64_t data_size;     /* this task's output object; its name is the task key */
    uint64_t all_data_size; /* sum of the parents' objects: what the task must read */
    int64_t t_submit, t_ready, t_start, t_end; /* wall ns; 0 = not yet */
    union {
        uint64_t *children; /* owned array of keys when num_children > 1 */
        uint64_t child;     /* the key itself when num_children == 1 */
    };
    struct tmd_parent *parent_list; /* owned, tmd_parents_done() entries; NULL until one */
    uint32_t *history;      /* owned, num_history node ids, oldest first; NULL if never moved */
    uint32_t num_children;
    uint32_t num_parents;
    uint32_t num_wait_parent;
    uint32_t holder;        /* node that holds the task now (receives notifications) */
    uint32_t runner;        /* node that ran it, once it ran */
    uint16_t num_history;   /* moves recorded (at most TMD_MAX_HISTORY) */
    uint8_t status;         /* enum task_status */
    uint8_t forget;         /* shard-local, never sent: its job was forgotten before this
                               record was final; it goes once final (shard_settle) */
};

#define TMD_MAX_HISTORY 65535u

static inline uint32_t tmd_parents_done(const struct tmd *t)
{
    return t->num_parents - t->num_wait_parent;
}

static inline uint64_t tmd_child(const struct tmd *t, uint32_t i)
{
    return t->num_children == 1 ? t->child : t->children[i];
}

/* Sets the children from an array (copied); keeps a single child in place. */
void tmd_set_children(struct tmd *t, const uint64_t *keys, uint32_t n);

/* What a finished run adds to the record (the CAS to DONE/FAILED carries it). */
struct tmd_run {
    uint32_t node;
    int64_t t_start, t_end;
    uint64_t data_size;
};

void tmd_fini(struct tmd *t);
void tmd_put(struct wbuf *b, const struct tmd *t);
/* 0 or -EBADMSG; on error nothing needs freeing. */
int tmd_get(struct rbuf *r, struct tmd *t);

#endif
