/*
 * dispatch — the dispatcher's choice: which queued task a node starts or stages next,
 * from its slots and its fetch window and from what each task near the head of its
 * ready queues would have to fetch.  The papers' executors fetch, then run; jackdaw
 * overlaps the fetches with the runs (a window of tasks fetching beside the running
 * ones), and this is where the order of that overlap is decided.
 *
 * Owns nothing; no I/O, no clock, no globals.  It takes from the caller's readyqs and
 * learns of their tasks through dispatch_tasks, so the daemons (core/runtime/node_task.c,
 * items their tasks) and the simulator's engines (core/sim/sim_queue.c, items task
 * indices) take the same task in the same state by one copy of the rule.  Tested by
 * tests/unit/test_dispatch.c, and through both callers.
 */
#ifndef JACKDAW_DISPATCH_H
#define JACKDAW_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/policy/readyq.h"

/* How far into a ready queue the dispatcher looks for the task of its inputs that is
 * cheapest to start: the heap's top levels, a few dozen checks of the store per start. */
#define DISPATCH_SCAN 63

/* A node's slots as its dispatcher counts them. */
struct dispatch_slots {
    uint32_t slots;         /* its executor slots */
    uint32_t busy;          /* slots running a task */
    uint32_t staged;        /* slots promised to tasks whose inputs are here */
    uint32_t staging;       /* tasks whose inputs are on their way */
    uint32_t window;        /* at most this many fetching; 0: a task fetches only once
                             * it has a slot (MATRIX's executor) */
};

/* What the caller knows of a queued task, from its queue entry (readyq.h). */
struct dispatch_tasks {
    void *ctx;
    /* It has inputs to stage (it goes through the fetch window). */
    bool (*inputs)(void *ctx, const struct readyq_entry *e);
    uint32_t (*cores)(void *ctx, const struct readyq_entry *e);
    /* Bytes that starting it here would fetch, those on their way counted: 0 when its
     * inputs are all here. */
    uint64_t (*missing)(void *ctx, const struct readyq_entry *e);
};

enum dispatch_kind {
    DISPATCH_NONE,          /* nothing can start or fetch now */
    DISPATCH_RUN,           /* a slot is free for it and it has nothing to fetch */
    DISPATCH_STAGE,         /* it goes through the fetch window (nothing missing: it waits
                             * for a slot with its inputs here) */
};

/*
 * Takes the next task out of the node's ready queues, as dispatch.c's comment says, and
 * returns its item with what to do with it in *kind; NULL (DISPATCH_NONE) when nothing
 * can start or fetch now.  qs[0] is the queue dispatched from: LReadyQ when it holds a
 * task, else SReadyQ; qs[1], when nq is 2, is SReadyQ behind LReadyQ.  The caller asks
 * again until NULL.  Staged tasks waiting for their slots go first and are the caller's.
 */
void *dispatch_next(const struct dispatch_slots *sl, struct readyq *const *qs, unsigned nq,
                    const struct dispatch_tasks *t, enum dispatch_kind *kind);

/* A task of `cores` fits beside `held` busy or promised slots of `slots`: a wide one
 * still runs on an idle node. */
bool dispatch_fits(uint32_t slots, uint32_t held, uint32_t cores);

#endif
