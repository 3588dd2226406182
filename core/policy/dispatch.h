/*
 * dispatch — the dispatcher's choice: which queued task a node starts or stages next,
 * from its slots and its fetch window and from what each task near the head of its
 * ready queues would have to fetch.  The papers' executors fetch, then run; jackdaw
 * overlaps the fetches with the runs (a window of tasks fetching beside the running
 * ones), and this is where the order of that overlap is decided.
 *
 * Owns nothing; no I/O, no clock, no globals, no allocation.  The queues are read through
 * dispatch_view and the caller removes the entry chosen, so the daemons' readyq
 * (core/runtime/node_task.c) and the simulator's heap of task indices (core/sim/sim.c,
 * sim_sg_task.c) take the same task in the same state from one copy of the rule.
 * Tested by tests/unit/test_dispatch.c, and through both callers.
 */
#ifndef JACKDAW_DISPATCH_H
#define JACKDAW_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * The caller's ready queues.  Queue 0 is the one dispatched from: LReadyQ when it holds
 * a task, else SReadyQ; queue 1, present when nq is 2, is SReadyQ behind LReadyQ.  In a
 * queue, entry 0 is its head (what a pop takes) and the others follow in the caller's
 * heap order, which is what "near the head" means.  The scans pass over the entries of
 * priority 0 (no input bytes) and look at the first scan_len(q) entries at most: all of
 * them, or fewer when every later one is of priority 0.
 */
struct dispatch_view {
    void *ctx;
    unsigned nq;
    size_t (*scan_len)(void *ctx, unsigned q);
    uint64_t (*priority)(void *ctx, unsigned q, size_t i);
    /* The task has inputs to stage (it goes through the fetch window). */
    bool (*inputs)(void *ctx, unsigned q, size_t i);
    uint32_t (*cores)(void *ctx, unsigned q, size_t i);
    /* Bytes that starting it here would fetch, those on their way counted: 0 when its
     * inputs are all here. */
    uint64_t (*missing)(void *ctx, unsigned q, size_t i);
    /* Entry i leaves the queue before entry j (ties among equal costs). */
    bool (*before)(void *ctx, unsigned q, size_t i, size_t j);
    /* The queue's oldest entry of priority 0, else one of its lowest. */
    size_t (*low)(void *ctx, unsigned q);
};

enum dispatch_kind {
    DISPATCH_NONE,          /* nothing can start or fetch now */
    DISPATCH_RUN,           /* a slot is free for it and it has nothing to fetch */
    DISPATCH_STAGE,         /* it goes through the fetch window (nothing missing: it waits
                             * for a slot with its inputs here) */
};

struct dispatch_pick {
    enum dispatch_kind kind;
    unsigned q;             /* the queue and the entry to take out of it */
    size_t i;
};

/*
 * The next task to take from the ready queues, queue 0 not empty, as dispatch.c's
 * comment says; the caller removes it and acts, then asks again until DISPATCH_NONE.
 * Staged tasks waiting for their slots go first and are the caller's.
 */
struct dispatch_pick dispatch_next(const struct dispatch_slots *sl, const struct dispatch_view *v);

/* A task of `cores` fits beside `held` busy or promised slots of `slots`: a wide one
 * still runs on an idle node. */
bool dispatch_fits(uint32_t slots, uint32_t held, uint32_t cores);

#endif
