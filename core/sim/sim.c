/*
 * sim — the engine (sim.h says what it models and why its own event core).
 *
 * One queue of events (sim_events.c); each is a message arriving or a timer firing at a
 * node, handled by that node's state machine, which may schedule more.  A node's ready
 * queues are the daemons' (core/policy/readyq.h, items task indices, each its order), so
 * it dispatches and gives to thieves what a daemon would.  A waiting task never moves
 * (only ready tasks are stolen), so its holder is where its readiness goes, as the
 * record's holder field says in the daemons.
 */
#include "core/sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/policy/ctws.h"
#include "core/policy/placement.h"
#include "core/sim/sim_core.h"
#include "core/sim/sim_inputs.h"

/* ---- events -------------------------------------------------------------------- */

void sim__push(struct sim *s, int64_t t, uint8_t type, uint32_t node, uint32_t a, uint32_t b,
               uint32_t c)
{
    struct event e = {.t = t, .order = s->seq++ << 8 | type, .node = node, .a = a, .b = b,
                      .c = c};
    sim__events_push(&s->events, &e);
}

/* A message from `from` to `to`: one latency, none within a node. */
void sim__send(struct sim *s, uint32_t from, uint32_t to, uint8_t type, uint32_t a, uint32_t b,
               uint32_t c)
{
    if (from != to)
        s->res->messages++;
    sim__push(s, s->now + (from == to ? 0 : s->latency_ns), type, to, a, b, c);
}

uint32_t sim__slots_of(const struct sim_config *cfg, uint32_t node)
{
    return cfg->node_slots ? cfg->node_slots[node] : cfg->slots;
}

/* ---- trace --------------------------------------------------------------------- */

static uint64_t key_of(const struct sim *s, uint32_t task)
{
    return task == UINT32_MAX ? TRACE_NO_TASK : task_key(s->cfg->job, task);
}

void sim__trace(struct sim *s, uint32_t node, enum trace_kind kind, uint32_t task, int32_t peer,
                  int32_t status, int64_t count, int64_t bytes, int64_t duration_ns)
{
    if (!s->cfg->sinks || !s->cfg->sinks[node])
        return;
    const struct trace_sink *k = s->cfg->sinks[node];
    k->put(k->ctx, kind, key_of(s, task), peer, status, count, bytes, duration_ns,
           s->cfg->start_wall_ns + s->now);
}

void sim__trace_policy(struct sim *s, uint32_t node, const char *name, int32_t reason)
{
    if (s->cfg->sinks && s->cfg->sinks[node])
        s->cfg->sinks[node]->policy(s->cfg->sinks[node]->ctx, name, reason,
                                    s->cfg->start_wall_ns + s->now);
}

static void sample(struct sim *s, uint32_t id)
{
    if (!s->cfg->sinks || !s->cfg->sinks[id])
        return;
    struct node *n = &s->nodes[id];
    struct trace_sample x = {
        .busy = (int32_t)n->busy, .slots = (int32_t)n->slots,
        .lreadyq = (int32_t)readyq_len(&n->lready), .sreadyq = (int32_t)readyq_len(&n->sready),
        .started = n->started, .ended = n->ended,
        .stolen_in = n->stolen_in, .stolen_out = n->stolen_out,
        .steal_requests = n->steal_requests, .steal_fails = n->steal_fails,
        .fetches = n->fetches, .fetch_bytes = n->fetch_bytes, .busy_ns = n->busy_ns_done,
    };
    const struct trace_sink *k = s->cfg->sinks[id];
    k->sample(k->ctx, &x, s->cfg->start_wall_ns + s->now);
}

/* ---- running tasks ------------------------------------------------------------- */

/* Where a workload object is: an initial one where workload_object_node put it, a
 * declared output on the node that ran its writer (UINT32_MAX before it ran). */
static uint32_t object_node(const struct sim *s, uint32_t o)
{
    const struct workload_object *obj = &s->wl->objects[o];
    return obj->producer ? s->tasks[obj->producer - 1].runner
                         : workload_object_node(s->wl, o, s->cfg->nodes);
}

/* One input object's move to `node` for `task`, if it is not there: a transfer over the
 * holder's egress and the node's ingress (sim_net.c), counted in the task's `fetching`.
 * The copy is cached where it arrives, as the data plane keeps what it fetched; a task
 * that needs it while it is on its way waits for that copy (sim__net_join). */
static void fetch_one(struct sim *s, uint32_t node, uint32_t src, uint32_t task, uint64_t key,
                      uint64_t bytes)
{
    struct node *n = &s->nodes[node];
    if (src == node || src == UINT32_MAX)
        return;
    void *held = u64map_get(&n->cache, key);
    if (held == SIM_CACHE_HERE)
        return;
    if (held) {
        sim__net_join(s, sim__cache_flow_of(held), task);
        return;
    }
    n->fetches++;
    n->fetch_bytes += (int64_t)bytes;
    s->res->bytes_moved += bytes;
    s->tasks[task].fetching++;
    uint32_t flow = sim__net_fetch(s, node, src, task, key, bytes);
    u64map_put(&n->cache, key, sim__cache_on_way(flow));
}

/* Moves the task's inputs to `node` (its parents' outputs from their runners, the
 * workload's objects it reads: an initial one from where workload_object_node put it,
 * a declared output from its writer's runner); its EV_STAGED comes when they are all
 * there. */
static void stage_inputs(struct sim *s, uint32_t task, uint32_t node)
{
    const struct workload_task *t = &s->wl->tasks[task];
    for (uint32_t i = 0; i < t->num_parents; i++) {
        uint32_t p = t->parents[i];
        uint64_t bytes = s->wl->tasks[p].output_bytes;
        if (bytes)
            fetch_one(s, node, s->tasks[p].runner, task, task_key(s->cfg->job, p), bytes);
    }
    for (uint32_t i = 0; i < t->num_inputs; i++) {
        uint32_t o = t->inputs[i];
        const struct workload_object *obj = &s->wl->objects[o];
        if (obj->bytes)
            fetch_one(s, node, object_node(s, o), task, task_object_key(s->cfg->job, o),
                      obj->bytes);
    }
    if (!s->tasks[task].fetching)
        sim__push(s, s->now, EV_STAGED, node, task, 0, 0);
}

static uint32_t runner_of(const void *tasks, uint32_t task)
{
    return ((const struct task_state *)tasks)[task].runner;
}

static uint32_t holder_of(const void *tasks, uint32_t task)
{
    return ((const struct task_state *)tasks)[task].holder;
}

/* The task's inputs as placement sees them (sim_inputs.h, shared with the SimGrid
 * engine), and their sum. */
uint32_t sim__inputs_of(const struct sim *s, uint32_t task, struct placement_object *out,
                          uint32_t max, uint64_t *sum)
{
    return sim__task_inputs(s->wl, s->cfg->nodes, runner_of, s->tasks, task, out, max, sum);
}

/* The bytes of the task's inputs neither on `node` nor cached there, those on their way
 * included (data_missing_bytes): what starting it there would wait for. */
static uint64_t missing_bytes(const struct sim *s, uint32_t task, uint32_t node)
{
    const struct workload_task *t = &s->wl->tasks[task];
    const struct u64map *cache = &s->nodes[node].cache;
    uint64_t missing = 0;
    for (uint32_t i = 0; i < t->num_parents; i++) {
        uint32_t p = t->parents[i];
        uint64_t bytes = s->wl->tasks[p].output_bytes;
        if (bytes && s->tasks[p].runner != node &&
            u64map_get(cache, task_key(s->cfg->job, p)) != SIM_CACHE_HERE)
            missing += bytes;
    }
    for (uint32_t i = 0; i < t->num_inputs; i++) {
        uint32_t o = t->inputs[i];
        const struct workload_object *obj = &s->wl->objects[o];
        uint32_t src = object_node(s, o);
        if (obj->bytes && src != node &&
            u64map_get(cache, task_object_key(s->cfg->job, o)) != SIM_CACHE_HERE)
            missing += obj->bytes;
    }
    return missing;
}

/* The dispatcher's view of a task at the node it is asked for (sim_queue.h). */
struct at_node {
    const struct sim *s;
    uint32_t node;
};

static uint64_t view_missing(void *ctx, uint32_t task)
{
    const struct at_node *a = ctx;
    return missing_bytes(a->s, task, a->node);
}

static uint32_t view_cores(void *ctx, uint32_t task)
{
    const struct at_node *a = ctx;
    return sim__cores_of(&a->s->wl->tasks[task]);
}

static void start(struct sim *s, uint32_t id, uint32_t task)
{
    struct node *n = &s->nodes[id];
    const struct workload_task *t = &s->wl->tasks[task];
    uint32_t cores = sim__cores_of(t);
    n->free_slots -= cores;
    n->busy += cores;
    s->tasks[task].t_start = s->now;
    if (n->first_start < 0)
        n->first_start = s->now;
    n->started++;
    s->tasks[task].local_successors = sim__local_successors(s, id, task);
    n->running_successors += s->tasks[task].local_successors;
    sim__trace(s, id, TRACE_TASK_START, task, -1, 0, 0, 0, 0);
    /* A sleep lasts its duration over the node's speed, never less (exec.c). */
    int64_t d = (int64_t)ceil(t->duration_s / n->speed * NS_PER_S);
    sim__push(s, s->now + d, EV_TASK_END, id, task, 0, 0);
}

/*
 * Starts what fits in the node's free slots, as the daemons' dispatcher (node_task.c)
 * does: a staged task when its slots are free, then sim__q_next's choice from the ready
 * queues (a task whose inputs are all here runs in a free slot; up to `slots` others
 * fetch theirs meanwhile, the one near the head missing the fewest bytes first).  A task
 * that needs more slots than are free waits at the head.
 */
void sim__dispatch(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    struct at_node at = {s, id};
    const struct sim_task_view view = {view_missing, view_cores, &at};
    const bool metered = s->cfg->bandwidth_Bps > 0;
    for (;;) {
        if (n->nstaged && sim__cores_of(&s->wl->tasks[n->staged[n->staged_head]]) <= n->free_slots) {
            uint32_t task = n->staged[n->staged_head++];
            n->nstaged--;
            if (!n->nstaged)
                n->staged_head = 0;
            start(s, id, task);
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
            start(s, id, task);
            break;
        case SIM_STEP_FETCH:
            n->staging++;
            stage_inputs(s, task, id);
            break;
        }
    }
}

static void task_end(struct sim *s, uint32_t id, uint32_t task)
{
    struct node *n = &s->nodes[id];
    const struct workload_task *t = &s->wl->tasks[task];
    uint32_t cores = sim__cores_of(t);
    int64_t ran = s->now - s->tasks[task].t_start;
    n->free_slots += cores;
    n->busy -= cores;
    n->running_successors -= s->tasks[task].local_successors;
    s->tasks[task].local_successors = 0;
    n->ended++;
    n->busy_ns_done += ran * cores;
    n->ran_s += (double)ran / NS_PER_S;
    s->res->busy_s += (double)ran * cores / NS_PER_S;
    s->res->tasks_done++;
    s->tasks[task].runner = id;
    s->left--;
    if (s->left == 0)
        s->res->makespan_s = (double)s->now / NS_PER_S;
    sim__trace(s, id, TRACE_TASK_END, task, -1, TASK_DONE, 0, 0, 0);
    /* Each child's record learns of it on the child's owner, which tells the holder
     * once the last parent has ended (paper 002's notification path). */
    for (uint32_t i = 0; i < t->num_children; i++) {
        uint32_t c = t->children[i];
        uint32_t owner = task_key_owner(task_key(s->cfg->job, c), s->cfg->nodes);
        sim__send(s, id, owner, EV_PARENT_DONE, c, id, 0);
    }
    sim__dispatch(s, id);
    sim__maybe_steal(s, id);
}

/* ---- the run ------------------------------------------------------------------- */

void sim_config_default(struct sim_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->nodes = 4;
    cfg->slots = 4;
    cfg->submit = SIM_SUBMIT_HASHED;
    steal_params_default(&cfg->steal);
    placement_params_default(&cfg->placement);
    cfg->latency_s = 100e-6;
    cfg->sample_s = 0.1;
    cfg->seed = 1;
    cfg->job = 1;
}

int sim_check(const struct sim_config *cfg, const struct workload *wl, const char **why)
{
    const struct steal_params *p = &cfg->steal;
    if (cfg->nodes == 0 || (!cfg->node_slots && cfg->slots == 0)) {
        *why = "a simulated cluster needs at least one node and one slot";
        return -EINVAL;
    }
    /* The fewest slots of a node: a task may be held by any node, and must fit it. */
    uint32_t fewest = cfg->slots;
    for (uint32_t i = 0; cfg->node_slots && i < cfg->nodes; i++) {
        if (cfg->node_slots[i] == 0) {
            *why = "every simulated node needs at least one slot";
            return -EINVAL;
        }
        fewest = i == 0 || cfg->node_slots[i] < fewest ? cfg->node_slots[i] : fewest;
    }
    /* The LW leader gives a slot to its distribution thread. */
    uint32_t leader_slots = sim__slots_of(cfg, 0);
    double leader_speed = cfg->speeds ? cfg->speeds[0] : 1.0;
    sim__leader_capacity(cfg, 0, &leader_slots, &leader_speed);
    fewest = leader_slots < fewest ? leader_slots : fewest;
    if (!(cfg->latency_s >= 0 && cfg->latency_s < 3600) || !(cfg->bandwidth_Bps >= 0) ||
        !(cfg->sample_s >= 0) || !(cfg->host_Bps >= 0)) {
        *why = "latency, bandwidth, host rate and sample period must be finite and not "
               "negative";
        return -EINVAL;
    }
    if (cfg->host_Bps > 0 && !(cfg->bandwidth_Bps > 0)) {
        *why = "a host rate shares the transfers, which need a bandwidth: without one, inputs "
               "move in no time";
        return -EINVAL;
    }
    for (uint32_t i = 0; cfg->speeds && i < cfg->nodes; i++) {
        if (!(cfg->speeds[i] > 0 && cfg->speeds[i] < 1e6)) {
            *why = "every node's speed must be positive";
            return -EINVAL;
        }
    }
    if (placement_params_check(&cfg->placement, why) < 0) {
        if (!*why)
            *why = "bad placement parameters";
        return -EINVAL;
    }
    if (p->mode != STEAL_NONE) {
        if (steal_check_parts(p, why) < 0)
            return -EINVAL;
        if (steal_keeps_vector(p, cfg->nodes) &&
            sim__ring_bytes(cfg->nodes, p->radius) > SIM_A2WS_MAX_BYTES) {
            *why = "the A2WS information vectors would take more than 2 GiB (nodes x (2 x "
                   "radius + 1) entries of 32 bytes; with the default radius, 20 % of the "
                   "nodes and at most 32, 1032444 nodes at most): give a smaller --radius";
            return -ENOMEM;
        }
    }
    for (uint32_t i = 0; wl && i < wl->count; i++) {
        const struct workload_task *t = &wl->tasks[i];
        if (t->kind == TASK_COMMAND) {
            *why = "a command task: the simulator needs every task's duration, and only a "
                   "sleep task has one (duration_s)";
            return -EINVAL;
        }
        if (!(t->duration_s >= 0 && t->duration_s < 1e9)) {
            *why = "a task's duration_s is out of range";
            return -EINVAL;
        }
        if (sim__cores_of(t) > fewest) {
            *why = "a task needs more cores than a simulated node has slots";
            return -EINVAL;
        }
    }
    return 0;
}

static void handle(struct sim *s, const struct event *e)
{
    struct node *n = &s->nodes[e->node];
    switch ((enum ev_type)(e->order & 0xff)) {
    case EV_READY:
        sim__trace(s, e->node, TRACE_TASK_READY, e->a, -1, 0, 0, 0, 0);
        sim__enqueue(s, e->node, e->a, false);
        break;
    case EV_PUSHED:
        sim__enqueue(s, e->node, e->a, true);
        break;
    case EV_MONITOR:
        sim__flds_monitor(s, e->node);
        break;
    case EV_PARENT_DONE: {
        struct task_state *ts = &s->tasks[e->a];
        if (ts->waiting && --ts->waiting == 0)
            sim__send(s, e->node, ts->holder, EV_READY, e->a, 0, 0);
        break;
    }
    case EV_STAGED:
        if (e->c)
            sim__net_arrived(s, (uint32_t)(e->c - 1));
        n->staging--;
        sim__fifo_push(&n->staged, &n->staged_head, &n->nstaged, &n->staged_cap, e->a);
        sim__dispatch(s, e->node);
        sim__maybe_steal(s, e->node);
        break;
    case EV_TASK_END:
        task_end(s, e->node, e->a);
        break;
    case EV_QUERY:
        sim__on_query(s, e->node, e->b);
        break;
    case EV_QUERIED:
        sim__on_queried(s, e->node, e->b);
        break;
    case EV_STEAL_REQ:
        sim__on_steal_req(s, e->node, e->a, e->b, e->c);
        break;
    case EV_GRANT:
        sim__on_grant(s, e->node, e->a, e->b, e->c);
        break;
    case EV_THIEF_TIMER:
        if (n->state == TH_WAIT && e->b == n->timer_gen) {
            n->state = TH_IDLE;
            sim__maybe_steal(s, e->node);
        }
        break;
    case EV_WAKE:
        if (s->token)
            sim__token_wake(s, e->node);
        /* thief.c's thief_wake: the back-off starts over, and a thief parked or waiting
         * out an interval (its timer's event now stale) asks again at once. */
        if (!s->token && !s->leader)
            steal_on_wake(&s->cfg->steal, &n->st);
        if (n->state == TH_PARKED || n->state == TH_WAIT) {
            n->state = TH_IDLE;
            n->timer_gen++;
            sim__maybe_steal(s, e->node);
        }
        break;
    case EV_TOKEN:
        sim__token_arrives(s, e->node);
        break;
    case EV_TOKEN_TIMER:
        sim__token_timer(s, e->node, e->b);
        break;
    case EV_TOKEN_IDLE:
        sim__token_idle(s, e->node);
        break;
    case EV_LW_FORWARD:
        sim__leader_on_forward(s, e->node, e->a, e->b);
        break;
    case EV_LW_REQUEST:
        sim__leader_on_request(s, e->a, e->b, e->c);
        break;
    case EV_LW_GRANT:
        sim__leader_on_grant(s, e->node, e->b, e->c);
        break;
    case EV_AUTO:
        sim__auto_observe(s, e->node);
        break;
    case EV_FLOW_END:
        sim__net_flow_end(s, e->a, e->b);
        break;
    case EV_WINDOW:
        sim__net_window(s, e->node, e->b);
        break;
    case EV_INFO:
        sim__ring_on_info(s, e->node, e->a, e->c);
        break;
    case EV_RING:
        sim__ring_timer(s, e->node);
        break;
    case EV_PLAN:
        sim__ring_plan_timer(s, e->node);
        break;
    case EV_SAMPLE:
        sample(s, e->node);
        if (s->left)
            sim__push(s, s->now + (int64_t)(s->cfg->sample_s * NS_PER_S), EV_SAMPLE, e->node,
                      0, 0, 0);
        break;
    }
}

static void sim_free(struct sim *s)
{
    for (uint32_t i = 0; s->nodes && i < s->cfg->nodes; i++) {
        readyq_fini(&s->nodes[i].lready);
        readyq_fini(&s->nodes[i].sready);
        u64map_fini(&s->nodes[i].cache);
        free(s->nodes[i].staged);
    }
    sim__net_free(s); /* before the nodes, whose links it frees */
    for (size_t i = 0; i < s->ngrants; i++)
        free(s->grants[i].tasks);
    free(s->grants);
    free(s->free_grants);
    free(s->parked);
    free(s->nodes);
    sim__marks_free(s);
    free(s->tasks);
    sim__events_fini(&s->events);
    free(s->objs);
    sim__take_free(&s->take);
    free(s->victims);
    free(s->loads);
    sim__ring_free(s);
    sim__token_free(s);
    sim__leader_free(s);
    sim__place_free(s);
}

int sim_run(const struct workload *wl, const struct sim_config *cfg, struct sim_result *out,
            const char **why)
{
    int rc = sim_check(cfg, wl, why);
    if (rc < 0)
        return rc;
    memset(out, 0, sizeof *out);
    struct sim s = {.wl = wl, .cfg = cfg, .res = out, .left = wl->count,
                    .rng = cfg->seed ? cfg->seed : 1, .free_join = UINT32_MAX,
                    .latency_ns = (int64_t)llround(cfg->latency_s * NS_PER_S)};
    sim__events_init(&s.events);
    /* Read at random, a few cache lines of hundreds of MB an event: on 4 KiB pages
     * nearly every such read also missed the TLB. */
    s.nodes = xcalloc_huge(cfg->nodes, sizeof *s.nodes);
    s.tasks = xcalloc_huge(wl->count ? wl->count : 1, sizeof *s.tasks);
    /* As a daemon's thief (thief.c): at most 1024 victims an attempt. */
    s.victims_max = cfg->nodes - 1 < 1024 ? cfg->nodes - 1 : 1024;
    s.objs = xcalloc(SIM_MAX_INPUTS, sizeof *s.objs);
    s.victims = xcalloc(s.victims_max + 1, sizeof *s.victims);
    s.loads = xcalloc(s.victims_max + 1, sizeof *s.loads);
    sim__marks_init(&s);
    sim__ring_init(&s);
    sim__token_init(&s);
    sim__leader_init(&s);
    sim__place_init(&s);
    for (uint32_t i = 0; i < cfg->nodes; i++) {
        struct node *n = &s.nodes[i];
        n->speed = cfg->speeds ? cfg->speeds[i] : 1.0;
        n->slots = sim__slots_of(cfg, i);
        sim__leader_capacity(cfg, i, &n->slots, &n->speed);
        n->free_slots = n->slots;
        steal_state_init(&n->st, &cfg->steal, cfg->nodes);
        placement_flds_init(&n->flds, &cfg->placement);
        n->first_start = -1;
        sim__trace(&s, i, TRACE_NODE_UP, UINT32_MAX, -1, 0, n->slots, 0, 0);
        /* The placement in force, as a daemon reports it after NODE_UP (node.c). */
        sim__trace_policy(&s, i, placement_policy_name(cfg->placement.policy), -1);
    }
    for (uint32_t i = 0; i < wl->count; i++) {
        out->work_s += wl->tasks[i].duration_s * sim__cores_of(&wl->tasks[i]);
        s.tasks[i].waiting = wl->tasks[i].num_parents;
        s.tasks[i].holder = sim__holder_at_submit(cfg, wl, i);
        s.tasks[i].runner = UINT32_MAX;
    }
    /* Every task is at its holder at time 0, parents first (the workload's order); the
     * roots ready there, taken in turn (sim__roots_in_turn). */
    for (uint32_t k = 0; k < wl->count; k++) {
        uint32_t i = wl->topo[k];
        sim__trace(&s, s.tasks[i].holder, TRACE_TASK_SUBMIT, i, -1, 0, 0, 0, 0);
    }
    uint32_t nroots;
    uint32_t *roots = sim__roots_in_turn(wl, cfg->nodes, holder_of, s.tasks, &nroots);
    for (uint32_t k = 0; k < nroots; k++)
        sim__push(&s, 0, EV_READY, s.tasks[roots[k]].holder, roots[k], 0, 0);
    free(roots);
    for (uint32_t i = 0; i < cfg->nodes; i++) {
        if (cfg->sample_s > 0 && wl->count)
            sim__push(&s, 0, EV_SAMPLE, i, 0, 0, 0);
        /* Idle nodes turn thief at once, as a daemon with nothing to run does. */
        if (sim__steals(&s))
            sim__push(&s, 0, EV_THIEF_TIMER, i, 0, 0, 0);
    }
    for (uint32_t i = 0; i < cfg->nodes; i++)
        s.nodes[i].state = TH_WAIT; /* the timers above start them */
    /* The job's start wakes the resting token (node_client.c's node_wake). */
    if (s.token)
        sim__push(&s, 0, EV_WAKE, CTWS_FIRST_HOLDER, 0, 0, 0);
    struct event e;
    while (s.left && sim__events_pop(&s.events, &e)) {
        s.now = e.t;
        out->events++;
        /* The next event's node is most often another random one of up to 10^6: the
         * first lines of its struct (sim_core.h orders them) and its peer record are
         * asked for while this event is handled. */
        uint32_t next = sim__events_next_node(&s.events);
        if (next < cfg->nodes) {
            const char *line = (const char *)&s.nodes[next];
            __builtin_prefetch(line, 1);
            __builtin_prefetch(line + 64, 1);
            __builtin_prefetch(line + 128, 1);
            __builtin_prefetch(line + 192, 1);
            __builtin_prefetch(&s.load[next], 1);
        }
        handle(&s, &e);
        /* What the event changed at its node reaches the ring (ring.c's step, last in a
         * loop pass). */
        if (s.ring)
            sim__ring_step(&s, e.node);
        if (s.token)
            sim__token_step(&s, e.node);
        if (s.leader)
            sim__leader_step(&s, e.node);
        sim__refresh(&s, e.node);
    }
    for (uint32_t i = 0; i < cfg->nodes; i++) {
        sample(&s, i);
        sim__trace(&s, i, TRACE_NODE_DOWN, UINT32_MAX, -1, 0, 0, 0, 0);
    }
    uint64_t left = s.left;
    sim_free(&s);
    if (left) {
        /* Every ready task is dispatched when a slot frees: nothing left means a bug in
         * the engine or in a policy it calls, which a test must see. */
        *why = "the simulation ran out of events with tasks left (an engine or policy bug)";
        return -EDEADLK;
    }
    return 0;
}
