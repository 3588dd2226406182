/*
 * sim_sg_task — a task's life in the SimGrid engine, as sim.c and sim_place.c model it
 * for the discrete-event core: placement (placement_decide on the task's inputs, which
 * queue or which node), dispatch (the staged tasks first, then LReadyQ before SReadyQ,
 * readyq.h's order), the fetch of a task's missing inputs as one SimGrid transfer each
 * (a source actor that puts the bytes, a reader that takes them, so that the flow model
 * shares the links they cross), the task's execution on its node's host and its end
 * (its children's parent-done messages), and the FLDS monitor that spills LReadyQ into
 * SReadyQ.
 *
 * The node actor (sim_sg.c) calls sim_sg__enqueue for a task that became ready or was
 * pushed; sim_sg__run_effects starts the actors whose bodies are here and calls
 * sim_sg__on_staged; sim_sg_thief.c dispatches what a grant brought.  After each change
 * of slots or queues it pokes the thief (sim_sg_thief.c), as sim.c does.
 */
#include "core/sim/sim_sg_core.h"

#ifdef JACKDAW_SIMGRID

#include <math.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/sim/sim_inputs.h"

/* ---- placement and dispatch (sim.c's) ------------------------------------------------- */

static uint32_t runner_of(const void *tasks, uint32_t task)
{
    return ((const struct task_state *)tasks)[task].runner;
}

static uint32_t object_node(uint32_t o)
{
    return sim__object_node(the->wl, the->cfg->nodes, runner_of, the->tasks, o);
}

uint32_t sim_sg__inputs_of(uint32_t task, struct placement_object *out, uint32_t max,
                           uint64_t *sum)
{
    return sim__task_inputs(the->wl, the->cfg->nodes, runner_of, the->tasks, task, out, max,
                            sum);
}

static double est_length(const struct node *n, uint32_t task)
{
    return n->ended ? n->ran_s / (double)n->ended : the->wl->tasks[task].duration_s / n->speed;
}

void sim_sg__enqueue(uint32_t id, uint32_t task, bool pushed)
{
    struct node *n = &the->nodes[id];
    uint64_t sum;
    uint32_t k = sim_sg__inputs_of(task, the->objs, SG_MAX_INPUTS, &sum);
    struct placement_input in = {
        .stealable = the->wl->tasks[task].stealable, .pushed = pushed, .all_data_size = sum,
        .self = id, .est_task_length_s = est_length(n, task), .inputs = the->objs,
        .num_inputs = k, .link_share = n->slots,
    };
    struct placement_decision d = placement_decide(&the->cfg->placement, NULL, &in);
    if (d.queue == PLACE_PUSH && d.node < the->cfg->nodes && d.node != id) {
        the->tasks[task].holder = d.node;
        the->res->tasks_pushed++;
        sim_sg__trace(id, TRACE_TASK_PUSHED, task, (int32_t)d.node, 0, 0, 0, 0);
        sim_sg__post(id, d.node, M_PUSHED, task, 0);
        return;
    }
    if (d.queue == PLACE_SREADY) {
        sim_sg__trace(id, TRACE_TASK_QUEUED_SHARED, task, -1, 0, 0, 0, 0);
        sim__q_push(&n->sready, sum, task);
    } else {
        sim_sg__trace(id, TRACE_TASK_QUEUED_LOCAL, task, -1, 0, 0, 0, 0);
        sim__q_push(&n->lready, sum, task);
        if (the->cfg->placement.policy == PLACEMENT_FLDS && !n->monitor_on) {
            n->monitor_on = true;
            sim_sg__effect((struct fx){.type = FX_MONITOR, .node = id});
        }
    }
    sim_sg__on_new_ready(id);
}

/* A node's cache maps an object's key to SIM_SG_HERE once its copy is there, and to the
 * transfer bringing it while it is on its way (sim.c's cache). */
#define SIM_SG_HERE ((void *)1)

static bool missing_here(uint32_t node, uint32_t src, uint64_t key, uint64_t bytes)
{
    return bytes && src != node && u64map_get(&the->nodes[node].cache, key) != SIM_SG_HERE;
}

/* What starting the task at `node` would fetch (sim.c's missing_bytes). */
static uint64_t missing_bytes(uint32_t task, uint32_t node)
{
    const struct workload_task *t = &the->wl->tasks[task];
    uint64_t missing = 0;
    for (uint32_t i = 0; i < t->num_parents; i++) {
        uint32_t p = t->parents[i];
        uint64_t bytes = the->wl->tasks[p].output_bytes;
        if (missing_here(node, the->tasks[p].runner, task_key(the->cfg->job, p), bytes))
            missing += bytes;
    }
    for (uint32_t i = 0; i < t->num_inputs; i++) {
        uint32_t o = t->inputs[i];
        uint64_t bytes = the->wl->objects[o].bytes;
        if (missing_here(node, object_node(o), task_object_key(the->cfg->job, o), bytes))
            missing += bytes;
    }
    return missing;
}

static uint64_t view_missing(void *ctx, uint32_t task)
{
    return missing_bytes(task, *(const uint32_t *)ctx);
}

static uint32_t view_cores(void *ctx, uint32_t task)
{
    (void)ctx;
    return sim__cores_of(&the->wl->tasks[task]);
}

/* One input's transfer to `node`, unless it is there or cached; a copy on its way there
 * for another task is waited for (sim.c's fetch_one). */
static void fetch_add(struct fetch *f, uint32_t src, uint64_t key, uint64_t bytes)
{
    struct node *n = &the->nodes[f->node];
    if (src == UINT32_MAX || !bytes || src == f->node)
        return;
    void *held = u64map_get(&n->cache, key);
    if (held == SIM_SG_HERE)
        return;
    if (held) {
        struct xfer *x = held;
        size_t cap = x->joined_cap;
        x->joined = xgrow(x->joined, &cap, (size_t)x->njoined + 1, sizeof *x->joined);
        x->joined_cap = (uint32_t)cap;
        x->joined[x->njoined++] = f;
        f->joins++;
        return;
    }
    struct xfer *x = &f->x[f->count++];
    *x = (struct xfer){.f = f, .src = src, .bytes = bytes, .key = key};
    u64map_put(&n->cache, key, x);
    n->fetches++;
    n->fetch_bytes += (int64_t)bytes;
    the->res->bytes_moved += bytes;
}

/* The task's inputs start towards `id`, each a transfer of its own, so that the flow
 * model shares the links they cross. */
static void fetch_begin(uint32_t id, uint32_t task)
{
    const struct workload_task *t = &the->wl->tasks[task];
    struct fetch *f = xcalloc(1, sizeof *f);
    f->x = xcalloc((size_t)t->num_parents + t->num_inputs + 1, sizeof *f->x);
    f->task = task;
    f->node = id;
    f->t0 = sim_sg__now();
    for (uint32_t i = 0; i < t->num_parents; i++) {
        uint32_t p = t->parents[i];
        fetch_add(f, the->tasks[p].runner, task_key(the->cfg->job, p),
                  the->wl->tasks[p].output_bytes);
    }
    for (uint32_t i = 0; i < t->num_inputs; i++) {
        uint32_t o = t->inputs[i];
        fetch_add(f, object_node(o), task_object_key(the->cfg->job, o),
                  the->wl->objects[o].bytes);
    }
    if (f->count == 0 && f->joins == 0) {
        /* What it lacks has no place yet (a declared output not written): staged now. */
        free(f->x);
        free(f);
        sim_sg__effect((struct fx){.type = FX_STAGED, .node = id, .task = task});
        return;
    }
    f->left = f->count + f->joins;
    if (f->count)
        sim_sg__effect((struct fx){.type = FX_FETCH, .fetch = f});
}

static void start(uint32_t id, uint32_t task)
{
    struct node *n = &the->nodes[id];
    uint32_t cores = sim__cores_of(&the->wl->tasks[task]);
    n->free_slots -= cores;
    n->busy += cores;
    the->tasks[task].t_start = sim_sg__now();
    the->tasks[task].at = id;
    if (n->first_start < 0)
        n->first_start = sim_sg__now();
    n->started++;
    sim_sg__trace(id, TRACE_TASK_START, task, -1, 0, 0, 0, 0);
    sim_sg__effect((struct fx){.type = FX_RUN, .node = id, .task = task});
}

/* Starts what fits and stages the inputs of what the fetch window takes: sim.c's
 * dispatch, the daemons' dispatcher (sim_queue.h's sim__q_next). */
void sim_sg__dispatch(uint32_t id)
{
    struct node *n = &the->nodes[id];
    const struct sim_task_view view = {view_missing, view_cores, &id};
    const bool metered = the->cfg->bandwidth_Bps > 0;
    for (;;) {
        if (n->nstaged &&
            sim__cores_of(&the->wl->tasks[n->staged[n->staged_head]]) <= n->free_slots) {
            uint32_t task = n->staged[n->staged_head++];
            if (!--n->nstaged)
                n->staged_head = 0;
            start(id, task);
            continue;
        }
        /* The daemons' default window: as many fetching as slots. */
        struct dispatch_slots sl = {.slots = n->slots, .busy = n->slots - n->free_slots,
                                    .staged = (uint32_t)n->nstaged, .staging = n->staging,
                                    .window = n->slots};
        uint32_t task;
        switch (sim__q_next(&n->lready, &n->sready, &sl, metered, &view, &task)) {
        case SIM_STEP_NONE:
            return;
        case SIM_STEP_RUN:
            start(id, task);
            break;
        case SIM_STEP_FETCH:
            n->staging++;
            fetch_begin(id, task);
            break;
        }
    }
}

void sim_sg__on_staged(uint32_t id, uint32_t task)
{
    struct node *n = &the->nodes[id];
    n->staging--;
    sim__fifo_push(&n->staged, &n->staged_head, &n->nstaged, &n->staged_cap, task);
    sim_sg__dispatch(id);
    sim_sg__poke(id);
    sim_sg__wake_hungry(id);
}

static void task_end(uint32_t id, uint32_t task)
{
    struct node *n = &the->nodes[id];
    const struct workload_task *t = &the->wl->tasks[task];
    uint32_t cores = sim__cores_of(t);
    double ran = sim_sg__now() - the->tasks[task].t_start;
    n->free_slots += cores;
    n->busy -= cores;
    n->ended++;
    n->busy_ns_done += llround(ran * 1e9) * cores;
    n->ran_s += ran;
    the->res->busy_s += ran * cores;
    the->res->tasks_done++;
    the->tasks[task].runner = id;
    sim_sg__trace(id, TRACE_TASK_END, task, -1, TASK_DONE, 0, 0, 0);
    if (--the->left == 0) {
        the->res->makespan_s = sim_sg__now();
        sim_sg__effect((struct fx){.type = FX_DONE});
    }
    for (uint32_t i = 0; i < t->num_children; i++) {
        uint32_t c = t->children[i];
        uint32_t owner = task_key_owner(task_key(the->cfg->job, c), the->cfg->nodes);
        sim_sg__post(id, owner, M_PARENT_DONE, c, 0);
    }
    sim_sg__dispatch(id);
    sim_sg__poke(id);
    sim_sg__wake_hungry(id);
}

/* ---- tasks, transfers, the FLDS monitor --------------------------------------------- */

void sim_sg__runner_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint32_t task = (uint32_t)(uintptr_t)sg->self_data();
    uint32_t id = the->tasks[task].at;
    the->res->events++;
    /* The host's speed is the node's: duration / speed seconds. */
    sg->execute(the->wl->tasks[task].duration_s * REF_FLOPS);
    struct outbox out = {0};
    task_end(id, task);
    sim_sg__run_effects(&out);
    sim_sg__outbox_fini(&out);
}

void sim_sg__xfer_source_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct xfer *x = sg->self_data();
    the->res->events++;
    sg->put(the->nodes[x->f->node].xmbox, x, (long)x->bytes);
}

/* A reader takes the first transfer to reach its node, which may be another reader's
 * of the same node: it ends that one. */
void sim_sg__xfer_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct xfer *mine = sg->self_data();
    struct xfer *x = sg->get(the->nodes[mine->f->node].xmbox);
    struct fetch *f = x->f;
    /* As the daemons' data plane records a fetch: at its end, with its length. */
    sim_sg__trace(f->node, TRACE_DATA_FETCH, UINT32_MAX, (int32_t)x->src, 0, 0,
                  (int64_t)x->bytes, llround((sim_sg__now() - f->t0) * 1e9));
    struct outbox out = {0};
    u64map_put(&the->nodes[f->node].cache, x->key, SIM_SG_HERE);
    for (uint32_t j = 0; j < x->njoined; j++) {
        struct fetch *w = x->joined[j];
        if (--w->left == 0) {
            sim_sg__on_staged(w->node, w->task);
            free(w->x);
            free(w);
        }
    }
    free(x->joined);
    x->joined = NULL;
    x->njoined = 0;
    if (--f->left == 0) {
        sim_sg__on_staged(f->node, f->task);
        free(f->x);
        free(f);
    }
    sim_sg__run_effects(&out);
    sim_sg__outbox_fini(&out);
}

/* The FLDS monitor's spill at node *(uint32_t *)ctx (sim__q_spill). */
static bool spill_stealable(void *ctx, uint32_t task)
{
    (void)ctx;
    return the->wl->tasks[task].stealable;
}

static uint64_t spill_priority(void *ctx, uint32_t task)
{
    (void)ctx;
    uint64_t sum;
    sim_sg__inputs_of(task, NULL, 0, &sum);
    return sum;
}

static void spill_one(void *ctx, uint32_t task)
{
    uint32_t id = *(const uint32_t *)ctx;
    sim__q_push(&the->nodes[id].sready, spill_priority(ctx, task), task);
    sim_sg__trace(id, TRACE_TASK_QUEUED_SHARED, task, -1, 0, 0, 0, 0);
}

/* sim.c's flds_monitor: an LReadyQ longer than tt at the node's pace spills its least
 * urgent stealable tasks into SReadyQ. */
static void flds_monitor(uint32_t id)
{
    struct node *n = &the->nodes[id];
    const struct placement_params *p = &the->cfg->placement;
    if (n->first_start >= 0) {
        placement_flds_pace(p, &n->flds, n->ended ? n->ran_s / (double)n->ended : 0);
        double elapsed = sim_sg__now() - n->first_start;
        double tps = elapsed > 0 ? (double)n->ended / elapsed : 0;
        uint64_t move =
            placement_flds_monitor(p, NULL, &n->flds, readyq_len(&n->lready), tps, sim_sg__now());
        const struct sim_spill sp = {spill_stealable, spill_priority, spill_one, &id};
        uint64_t moved = sim__q_spill(&n->lready, move, &the->take, &sp);
        if (moved && the->nparked && sim_sg__stealable(n) > 0)
            sim_sg__wake_parked(id);
        sim_sg__wake_hungry(id);
    }
    n->monitor_on = the->left && readyq_len(&n->lready);
}

void sim_sg__monitor_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint32_t id = (uint32_t)(uintptr_t)sg->self_data();
    struct outbox out = {0};
    bool again;
    do {
        the->res->events++;
        sg->sleep_for(FLDS_MONITOR_MIN_S);
        flds_monitor(id);
        /* Read before the effects: a task queued meanwhile starts a monitor of its own. */
        again = the->nodes[id].monitor_on;
        sim_sg__run_effects(&out);
    } while (again);
    sim_sg__outbox_fini(&out);
}

#endif /* JACKDAW_SIMGRID */
