/*
 * sim_inputs — a ready task's inputs as placement and the ready queues see them: its
 * parents' outputs where they ran, then the workload's objects it reads where they are
 * (an initial one where workload_object_node puts it, a declared output on its
 * writer's runner), and their sum (the queues' priority, readyq.h's order).  One
 * function for both engines, so that they place and order tasks alike: each keeps the
 * node that ran a task in its own task state, and passes a reader of it.
 *
 * Also where the client puts each task at submission (the run's --mode), for both.
 *
 * No state, no globals.  Called by the discrete-event core (sim.c's sim__inputs_of)
 * and the SimGrid engine (core/sim/sim_sg_task.c).
 */
#ifndef JACKDAW_SIM_INPUTS_H
#define JACKDAW_SIM_INPUTS_H

#include <stdint.h>

#include "core/model/workload.h"
#include "core/policy/placement.h"
#include "core/sim/sim.h"

/* The slots a task takes: its cores, at least one (both engines). */
static inline uint32_t sim__cores_of(const struct workload_task *t)
{
    return t->cores > 1 ? t->cores : 1;
}

/* The node that ran `task`, UINT32_MAX before it ran, read from an engine's task state
 * (`tasks`, borrowed). */
typedef uint32_t sim_runner_fn(const void *tasks, uint32_t task);

/* Where workload object `o` is now on `nodes` nodes (UINT32_MAX for a declared output
 * whose writer has not run). */
uint32_t sim__object_node(const struct workload *wl, uint32_t nodes, sim_runner_fn *runner,
                          const void *tasks, uint32_t o);

/* The task's inputs with bytes, at most `max` of them in `out` (NULL when `max` is 0),
 * and in *sum the bytes of all; returns how many are in `out`. */
uint32_t sim__task_inputs(const struct workload *wl, uint32_t nodes, sim_runner_fn *runner,
                          const void *tasks, uint32_t task, struct placement_object *out,
                          uint32_t max, uint64_t *sum);

/* The node the client submits `task` to under cfg->submit (jackdaw run --mode): hashed,
 * a task ready at submission starts where its owner's placement would push it, as the
 * client does. */
uint32_t sim__holder_at_submit(const struct sim_config *cfg, const struct workload *wl,
                               uint32_t task);

#endif
