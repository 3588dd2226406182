/*
 * sim_inputs — a ready task's inputs, and a task's node at submission, for both engines
 * (sim_inputs.h).
 */
#include "core/sim/sim_inputs.h"

#include <stdbool.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"

uint32_t sim__object_node(const struct workload *wl, uint32_t nodes, sim_runner_fn *runner,
                          const void *tasks, uint32_t o)
{
    const struct workload_object *obj = &wl->objects[o];
    return obj->producer ? runner(tasks, obj->producer - 1) : workload_object_node(wl, o, nodes);
}

uint32_t sim__task_inputs(const struct workload *wl, uint32_t nodes, sim_runner_fn *runner,
                          const void *tasks, uint32_t task, struct placement_object *out,
                          uint32_t max, uint64_t *sum)
{
    const struct workload_task *t = &wl->tasks[task];
    uint32_t k = 0;
    *sum = 0;
    for (uint32_t i = 0; i < t->num_parents; i++) {
        uint32_t p = t->parents[i];
        uint64_t bytes = wl->tasks[p].output_bytes;
        *sum += bytes;
        if (bytes && k < max)
            out[k++] = (struct placement_object){.node = runner(tasks, p), .bytes = bytes};
    }
    for (uint32_t i = 0; i < t->num_inputs; i++) {
        uint32_t o = t->inputs[i];
        uint64_t bytes = wl->objects[o].bytes;
        *sum += bytes;
        if (bytes && k < max)
            out[k++] = (struct placement_object){
                .node = sim__object_node(wl, nodes, runner, tasks, o), .bytes = bytes};
    }
    return k;
}

static uint32_t not_run(const void *tasks, uint32_t task)
{
    (void)tasks, (void)task;
    return UINT32_MAX;
}

/* Hashed, as the client does (core/client/submit.c): a task ready at submission goes to
 * the node its owner's placement would push it to (placement_submit_node), judged as the
 * owner would judge it with nothing finished yet. */
static uint32_t hashed(const struct sim_config *cfg, const struct workload *wl, uint32_t task)
{
    uint32_t owner = task_key_owner(task_key(cfg->job, task), cfg->nodes);
    const struct workload_task *t = &wl->tasks[task];
    if (t->num_parents || !t->num_inputs || cfg->placement.policy == PLACEMENT_WS ||
        cfg->placement.policy == PLACEMENT_MLB)
        return owner;
    struct placement_object small[16];
    struct placement_object *objs = t->num_inputs > 16 ? xmalloc(t->num_inputs * sizeof *objs)
                                                       : small;
    uint64_t sum;
    uint32_t k = sim__task_inputs(wl, cfg->nodes, not_run, NULL, task, objs, t->num_inputs,
                                  &sum);
    bool known = true;
    for (uint32_t i = 0; i < k; i++)
        known = known && objs[i].node < cfg->nodes; /* not a declared output */
    double speed = cfg->speeds ? cfg->speeds[owner] : 1.0;
    struct placement_input in = {
        .stealable = t->stealable, .all_data_size = sum, .self = owner,
        .est_task_length_s = t->duration_s / speed, .inputs = objs, .num_inputs = k,
        .link_share = cfg->node_slots ? cfg->node_slots[owner] : cfg->slots,
    };
    uint32_t node = known ? placement_submit_node(&cfg->placement, &in) : owner;
    if (objs != small)
        free(objs);
    return node;
}

uint32_t sim__holder_at_submit(const struct sim_config *cfg, const struct workload *wl,
                               uint32_t task)
{
    switch (cfg->submit) {
    case SIM_SUBMIT_ONE:
        return 0;
    case SIM_SUBMIT_ROUND_ROBIN:
        return task % cfg->nodes;
    case SIM_SUBMIT_HASHED:
    default:
        return hashed(cfg, wl, task);
    }
}
