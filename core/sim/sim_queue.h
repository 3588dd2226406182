/*
 * sim_queue — the simulated nodes' ready queues, the daemons' own (core/policy/readyq.h)
 * holding task indices, so that both engines order, dispatch (core/policy/dispatch.h)
 * and give tasks to thieves as the daemons do; the order the roots reach their nodes;
 * and a node's FIFO of staged tasks.
 *
 * Owns nothing but what sim_take holds; no globals.  Called by both
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
#include "core/policy/steal.h"

/* A task index as a readyq item: an item is never NULL. */
static inline void *sim__item(uint32_t task)
{
    return (void *)((uintptr_t)task + 1);
}

static inline uint32_t sim__task_of(const void *item)
{
    return (uint32_t)((uintptr_t)item - 1);
}

/* Queues `task` of `prio` input bytes; its index is its order, as a job's tasks are the
 * daemons' (node_task.c's node_queue). */
static inline void sim__q_push(struct readyq *q, uint64_t prio, uint32_t task)
{
    readyq_push_ordered(q, sim__item(task), prio, task);
}

/* The most urgent task, removed; the queue must not be empty. */
static inline uint32_t sim__q_pop(struct readyq *q)
{
    return sim__task_of(readyq_pop(q));
}

/* Room for what one take of the queue's tail gives, and for the pinned tasks the FLDS
 * monitor sets aside (both engines keep one). */
struct sim_take {
    void **items;
    uint32_t *tasks;
    size_t cap;
    uint32_t *held;
    size_t held_cap;
};

/* Up to n tasks as readyq_take_tail gives them to a daemon's thief or FLDS monitor (the
 * least input first, the ones without any spread over their order), into t->tasks;
 * returns how many. */
size_t sim__q_take_tail(struct readyq *q, size_t n, struct sim_take *t);
void sim__take_free(struct sim_take *t);

/* What the FLDS monitor asks of its engine about a task: whether it may leave the node,
 * its priority (input bytes), and what spilling it does (to SReadyQ, or LW's leader). */
struct sim_spill {
    bool (*stealable)(void *ctx, uint32_t task);
    uint64_t (*priority)(void *ctx, uint32_t task);
    void (*spill)(void *ctx, uint32_t task);
    void *ctx;
};

/* The FLDS monitor's spill, as place.c's flds_spill: up to `move` stealable tasks from
 * LReadyQ's tail in rounds, each handed to sp->spill; a pinned task met is set aside
 * and queued again after, so the next round asks only for what is missing.  Returns
 * how many spilled. */
uint64_t sim__q_spill(struct readyq *lready, uint64_t move, struct sim_take *t,
                      const struct sim_spill *sp);

/*
 * A victim's grant of up to k tasks from SReadyQ, as victim.c's take_for_thief takes
 * them: the `keep` oldest tasks without inputs set aside for its own free slots, then
 * the tail; into t->tasks, returns how many.
 */
size_t sim__q_take_for_thief(struct readyq *sready, uint32_t keep, uint32_t k,
                             struct sim_take *t);

/* A simulated node's load as stealing reads it (steal.h's steal_load, the daemons'),
 * its window the daemons' default: as many fetching as slots.  Staged tasks count by
 * number, not cores. */
static inline struct steal_load sim__steal_load(uint32_t slots, uint32_t busy, uint32_t staging,
                                                size_t nstaged, const struct readyq *lready,
                                                const struct readyq *sready,
                                                uint32_t running_successors)
{
    return (struct steal_load){
        .slots = slots, .busy = busy, .staging = staging, .staged_slots = (uint32_t)nstaged,
        .lready = (uint32_t)readyq_len(lready), .sready = (uint32_t)readyq_len(sready),
        .lready_zero = (uint32_t)lready->zero.len, .sready_zero = (uint32_t)sready->zero.len,
        .running_successors = running_successors, .window = slots,
    };
}

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
 * of its queue into *task: the daemons' choice, core/policy/dispatch.h's dispatch_next.
 * Without `metered` links every input is here at
 * once, and the head runs when its slots are free.
 */
enum sim_step sim__q_next(struct readyq *lready, struct readyq *sready,
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
