/*
 * readyq — a ready queue (LReadyQ or SReadyQ): a max-priority queue on a task's
 * required input bytes; among equal priorities the lower `order` leaves first, and
 * among equal orders the older entry.
 *
 * The runtime passes a task's place in its job (job arrival, then index in the
 * workload) as the order, so every node runs the oldest tasks of the workload first
 * whether they were submitted to it or stolen: a batch that arrives by theft does not
 * jump ahead of the node's own older work, and siblings of a fan-in finish close
 * together instead of one of them waiting behind a stolen batch.
 *
 * Owns its heap arrays, not the tasks (opaque `void *` items the caller owns).  The
 * daemons' queues (core/runtime, on the node's loop thread: items their tasks) and the
 * simulated nodes' (core/sim/sim_queue.h: items task indices) are this one structure,
 * so that a simulated node orders its tasks, dispatches them (dispatch.h) and gives them
 * to thieves exactly as a daemon does.  Stealing takes from the low-priority end — the
 * tasks that need the least data, spread over their order — leaving the victim the
 * tasks that need the most data, which the data-aware policies want to keep where their
 * data is.
 */
#ifndef JACKDAW_READYQ_H
#define JACKDAW_READYQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct readyq_entry {
    uint64_t priority;      /* required input bytes */
    uint64_t order;         /* caller's order among equal priorities, lowest first */
    uint64_t seq;           /* insertion order, among equal orders */
    void *item;             /* borrowed */
};

/* A binary heap of entries (see readyq.c).  32-bit counts: a queue of a simulated node
 * sits in the first lines of its record (core/sim/sim_core.h), and no queue holds 2^32
 * tasks (a workload's are counted in 32 bits, core/model/workload.h). */
struct readyq_heap {
    struct readyq_entry *e; /* owned */
    uint32_t len;
    uint32_t cap;
};

/*
 * Two heaps: tasks that need input data, and those that need none (priority 0).  The
 * split makes the two questions the runtime asks besides "what next" exact and cheap:
 * a task that can start without a fetch while the fetch window is full (the oldest of
 * `zero`, O(log n)), and what a thief gets (the oldest of `zero` first).
 */
struct readyq {
    struct readyq_heap data;  /* priority > 0 */
    struct readyq_heap zero;  /* priority 0 */
    uint64_t next_seq;
};

void readyq_init(struct readyq *q);
void readyq_fini(struct readyq *q);
static inline size_t readyq_len(const struct readyq *q)
{
    return q->data.len + q->zero.len;
}
/* The i-th item for i < readyq_len, in no particular order (for scans). */
void *readyq_at(const struct readyq *q, size_t i);
/* First-in first-out among equal priorities (order 0). */
void readyq_push(struct readyq *q, void *item, uint64_t priority);
void readyq_push_ordered(struct readyq *q, void *item, uint64_t priority, uint64_t order);
/* Highest priority, lowest order, oldest first; NULL when empty. */
void *readyq_pop(struct readyq *q);
/* Highest priority without removing it; NULL when empty. */
void *readyq_peek(const struct readyq *q);
/* A task of the lowest priority, the oldest among them when that priority is 0 (an
 * arbitrary low one otherwise), and its removal; NULL when empty.  O(log n). */
void *readyq_peek_low(const struct readyq *q);
void *readyq_take_low(struct readyq *q);
/*
 * Positions, for the dispatcher (core/policy/dispatch.h's view): position 0 is the head,
 * the entries that need data come first in their heap's order (readyq_data_len of
 * them), then those of priority 0 in theirs.
 */
static inline size_t readyq_data_len(const struct readyq *q)
{
    return q->data.len;
}
const struct readyq_entry *readyq_entry_at(const struct readyq *q, size_t i);
/* Entry i leaves before entry j. */
bool readyq_before_at(const struct readyq *q, size_t i, size_t j);
/* The position of readyq_peek_low's task; the queue must not be empty. */
size_t readyq_low_at(const struct readyq *q);
/* The item at position i, removed.  O(log n). */
void *readyq_take_at(struct readyq *q, size_t i);
/* Removes up to n items for a thief into out[] (in no particular order): the lowest
 * priorities first; of the priority-0 items a share spread evenly over their order
 * (one item: the oldest), of the others the lowest orders.  O(len log len).  Returns
 * how many. */
size_t readyq_take_tail(struct readyq *q, size_t n, void **out);
/* Removes the given item if present (linear; for cancellation). Returns 1 if found. */
int readyq_remove(struct readyq *q, void *item);

#endif
