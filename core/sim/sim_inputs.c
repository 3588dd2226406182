/*
 * sim_inputs — a ready task's inputs for both engines (sim_inputs.h).
 */
#include "core/sim/sim_inputs.h"

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
