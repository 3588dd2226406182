/*
 * sim_queue — the simulator's ready queue: a binary heap of task indices, most input
 * bytes first, then the oldest task (core/runtime/readyq.h's order), so that both
 * engines take tasks in the order the daemons do; the node's next step from its queues,
 * by the daemons' rule (core/policy/dispatch.h) read through a view of them; and a
 * node's FIFO of staged tasks.
 *
 * Owns the heap's array of each queue (sim__q_free); no globals.  Called by both
 * engines: the discrete-event core (core/sim/sim*.c) and the SimGrid engine
 * (core/sim/sim_sg_task.c, sim_sg_thief.c).
 */
#ifndef JACKDAW_SIM_QUEUE_H
#define JACKDAW_SIM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model/workload.h"
#include "core/policy/dispatch.h"

struct qent {
    uint64_t prio;          /* the task's input bytes */
    uint32_t task;
};

/* 24 bytes, as a queue of size_t counts was: two of them and four counters fill the
 * first cache line of a simulated node (sim_core.h). */
struct queue {
    struct qent *v;
    uint32_t n, cap;
    uint32_t nzero;         /* entries of priority 0 (they sort last) */
};

void sim__q_push(struct queue *q, uint64_t prio, uint32_t task);
/* The most urgent entry, removed; the queue must not be empty. */
struct qent sim__q_pop(struct queue *q);
/* The heap's last entry: a leaf, among the least urgent it holds (a grant's and the
 * FLDS monitor's end of the queue); the queue must not be empty. */
struct qent sim__q_take_tail(struct queue *q);
void sim__q_free(struct queue *q);

/* What starting `task` at the node would fetch, in bytes (0: its inputs are all here
 * or cached), and the slots it takes. */
struct sim_task_view {
    uint64_t (*missing)(void *ctx, uint32_t task);
    uint32_t (*cores)(void *ctx, uint32_t task);
    void *ctx;
};

enum sim_step {
    SIM_STEP_NONE,          /* nothing can start or fetch now */
    SIM_STEP_RUN,           /* *task's inputs are here and a slot is free: start it */
    SIM_STEP_FETCH,         /* *task goes to fetch its inputs (none missing: it is staged) */
};

/*
 * The node's next step from its ready queues (LReadyQ first, then SReadyQ), taken out
 * of its queue into *task: the daemons' choice, core/policy/dispatch.h's dispatch_next,
 * read through a view of these heaps.  Without `metered` links every input is here at
 * once, and the head runs when its slots are free.
 */
enum sim_step sim__q_next(struct queue *lready, struct queue *sready,
                          const struct dispatch_slots *sl, bool metered,
                          const struct sim_task_view *task_view, uint32_t *task);

/*
 * The tasks ready at submission (no parents), in the order the simulation hands them to
 * their holders at time 0 (`holder` gives each one's): the nodes take theirs side by
 * side, one task each in turn, each node's in the workload's order.  A daemon takes a
 * submission one task at a time, as every other node takes its own; handed over in the
 * workload's order instead, all at one instant, every node met the same first tasks
 * first, and on all-pairs all 32 nodes fetched the same four files from four nodes while
 * the other 28 links idled (2.8 s against 2.0 s).  An array of *nroots indices, the
 * caller's to free.
 */
uint32_t *sim__roots_in_turn(const struct workload *wl, uint32_t nodes,
                             uint32_t (*holder)(const void *ctx, uint32_t task),
                             const void *ctx, uint32_t *nroots);

/* Appends `task` to a node's FIFO of staged tasks, v[*head .. *head + *n) in an array of
 * *cap, moved to the front when it reaches the end (both engines' staged queues). */
void sim__fifo_push(uint32_t **v, size_t *head, size_t *n, size_t *cap, uint32_t task);

#endif
