/*
 * placement — which ready queue a task that just became ready goes to.  Pure.
 *
 * This is the seam where the data-aware policies (Algorithm 1 of paper 002: MLB, MDL,
 * RLDS, FLDS) plug in.  The default, `ws` (plain work stealing), keeps every stealable
 * task in the shared queue, where idle peers may take it, and a task marked
 * non-stealable in the dedicated queue, which only this node's executors drain.
 *
 * Called by core/runtime/node.c (and any simulator) with a description of the task.
 */
#ifndef JACKDAW_PLACEMENT_H
#define JACKDAW_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

enum placement_queue { PLACE_LREADY = 0, PLACE_SREADY = 1, PLACE_PUSH = 2 };

struct placement_input {
    bool stealable;
    uint64_t all_data_size;   /* bytes of input the task needs */
};

struct placement_decision {
    enum placement_queue queue;
    uint32_t node;            /* PLACE_PUSH only: where to push */
};

struct placement_decision placement_decide(const struct placement_input *in);

#endif
