/*
 * tmd — task metadata, the record the metadata store keeps per task (papers 000 §III.B,
 * 002 §2.2: status, num_wait_parent, parent_list, children, data object and sizes,
 * phase timestamps, history of holders), and its wire encoding.
 *
 * Owns the record's arrays.  Used by the shard (storage), the kvs client (messages) and
 * the client library (building records from a workload).  Laid out for memory: a
 * waiting task's record is ~120 bytes plus its children; parent_list and history are
 * allocated only when the first parent finishes / the task first moves.
 */
#ifndef JACKDAW_TMD_H
#define JACKDAW_TMD_H

#include <stdint.h>

#include "core/base/wbuf.h"

struct tmd_parent {
    uint32_t node;          /* node that ran the parent (holds its object) */
    uint32_t pad_;
    uint64_t bytes;         /* size of the parent's output object */
};

struct tmd {
    uint64_t key;
    uint64_t data_size;     /* this task's output object; its name is the task key */
    uint64_t all_data_size; /* sum of the parents' objects: what the task must read */
    int64_t t_submit, t_ready, t_start, t_end; /* wall ns; 0 = not yet */
    uint64_t *children;     /* owned, num_children keys */
    struct tmd_parent *parent_list; /* owned, parents_done entries; NULL until one */
    uint32_t *history;      /* owned, num_history node ids, oldest first; NULL if never moved */
    uint32_t num_children;
    uint32_t num_parents;
    uint32_t num_wait_parent;
    uint32_t parents_done;
    uint32_t num_history;
    uint32_t holder;        /* node that holds the task now (receives notifications) */
    uint32_t runner;        /* node that ran it, once it ran */
    uint8_t status;         /* enum task_status */
};

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
