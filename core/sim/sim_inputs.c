/*
 * sim_inputs — a ready task's inputs, and a task's node at submission, for both engines
 * (sim_inputs.h).
 */
#include "core/sim/sim_inputs.h"

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

uint32_t sim__holder_at_submit(const struct sim_config *cfg, uint32_t task)
{
    switch (cfg->submit) {
    case SIM_SUBMIT_ONE:
        return 0;
    case SIM_SUBMIT_ROUND_ROBIN:
        return task % cfg->nodes;
    case SIM_SUBMIT_HASHED:
    default:
        return task_key_owner(task_key(cfg->job, task), cfg->nodes);
    }
}
