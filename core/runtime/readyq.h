/*
 * readyq — a ready queue (LReadyQ or SReadyQ): a max-priority queue on a task's
 * required input bytes, first-in first-out among equal priorities.
 *
 * Owns its heap array, not the tasks (opaque `void *` items the node owns).  Called
 * only from the node's loop thread (core/runtime/node.c).  Stealing takes from the
 * low-priority end — the heap's last array slots, which are leaves, so removing them
 * keeps the heap valid in O(1) each — leaving the victim the tasks that need the most
 * data, which the data-aware policies want to keep where their data is.
 */
#ifndef JACKDAW_READYQ_H
#define JACKDAW_READYQ_H

#include <stddef.h>
#include <stdint.h>

struct readyq_entry {
    uint64_t priority;      /* required input bytes */
    uint64_t seq;           /* insertion order, for FIFO among equals */
    void *item;             /* borrowed */
};

struct readyq {
    struct readyq_entry *heap; /* owned */
    size_t len;
    size_t cap;
    uint64_t next_seq;
};

void readyq_init(struct readyq *q);
void readyq_fini(struct readyq *q);
static inline size_t readyq_len(const struct readyq *q)
{
    return q->len;
}
void readyq_push(struct readyq *q, void *item, uint64_t priority);
/* Highest priority, oldest first; NULL when empty. */
void *readyq_pop(struct readyq *q);
/* Highest priority without removing it; NULL when empty. */
void *readyq_peek(const struct readyq *q);
/* Removes up to n items from the low-priority end into out[]; returns how many. */
size_t readyq_take_tail(struct readyq *q, size_t n, void **out);
/* Removes the given item if present (linear; for cancellation). Returns 1 if found. */
int readyq_remove(struct readyq *q, void *item);

#endif
