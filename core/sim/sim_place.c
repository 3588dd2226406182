/*
 * sim_place — where a ready task goes in the simulator, as core/runtime/place.c decides
 * it: Algorithm 1 (placement_decide: LReadyQ, SReadyQ, or a push to the node of its
 * largest input), the FLDS monitor spilling an overlong LReadyQ into SReadyQ
 * (placement_flds_monitor), FLDS's reading of failed steals, and the auto controller
 * (placement_auto_observe once every auto_interval_s on the bytes a node fetched against
 * the time it ran tasks, moving along MLB, FLDS and MDL).
 *
 * Called by sim.c's event loop, sim_thief.c and sim_token.c (sim_core.h).
 */
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/sim/sim_core.h"

/* A node's auto controller and the marks of its current interval (place.c's). */
struct sim_auto {
    struct placement_auto a;
    uint64_t bytes_mark;        /* fetch_bytes when the interval began */
    double busy_mark;           /* ran_s when the interval began */
};

static int64_t auto_interval_ns(const struct sim *s)
{
    int64_t ns = (int64_t)(s->cfg->placement.auto_interval_s * NS_PER_S);
    return ns > 0 ? ns : 1;
}

void sim__place_init(struct sim *s)
{
    if (s->cfg->placement.policy != PLACEMENT_AUTO)
        return;
    s->autos = xcalloc(s->cfg->nodes, sizeof *s->autos);
    for (uint32_t i = 0; i < s->cfg->nodes; i++) {
        placement_auto_init(&s->autos[i].a, &s->cfg->placement);
        sim__push(s, auto_interval_ns(s), EV_AUTO, i, 0, 0, 0);
    }
}

void sim__place_free(struct sim *s)
{
    free(s->autos);
    s->autos = NULL;
}

/* The auto controller's state of node `id`, or NULL when the policy is not auto. */
static const struct placement_auto *auto_of(const struct sim *s, uint32_t id)
{
    return s->autos ? &s->autos[id].a : NULL;
}

static bool flds_in_force(const struct sim *s, uint32_t id)
{
    return placement_in_force(&s->cfg->placement, auto_of(s, id)) == PLACEMENT_FLDS;
}

/* The monitor looks while tasks are queued in LReadyQ: started by the first. */
static void monitor_start(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    if (n->monitor_on || !flds_in_force(s, id))
        return;
    n->monitor_on = true;
    sim__push(s, s->now + (int64_t)(FLDS_MONITOR_MIN_S * NS_PER_S), EV_MONITOR, id, 0, 0, 0);
}

/*
 * One interval's observation (place.c's auto_observe): the bytes this node fetched from
 * others against the time it ran tasks.  A switch is traced as the daemons trace it (a
 * policy change with its reason); one to FLDS starts tt afresh.
 */
void sim__auto_observe(struct sim *s, uint32_t id)
{
    struct sim_auto *x = &s->autos[id];
    struct node *n = &s->nodes[id];
    const struct placement_params *p = &s->cfg->placement;
    struct placement_auto_sample sample = {
        .bytes_moved = (uint64_t)n->fetch_bytes - x->bytes_mark,
        .busy_s = n->ran_s - x->busy_mark,
    };
    struct placement_switch sw;
    if (placement_auto_observe(p, &x->a, &sample, (double)s->now / NS_PER_S, &sw)) {
        s->res->policy_switches++;
        if (sw.to == PLACEMENT_FLDS) {
            placement_flds_init(&n->flds, p);
            if (readyq_len(&n->lready))
                monitor_start(s, id);
        }
        sim__trace_policy(s, id, placement_policy_name(sw.to), (int32_t)sw.reason);
    }
    x->bytes_mark = (uint64_t)n->fetch_bytes;
    x->busy_mark = n->ran_s;
    if (s->left)
        sim__push(s, s->now + auto_interval_ns(s), EV_AUTO, id, 0, 0, 0);
}

bool sim__place_steal_failed(struct sim *s, uint32_t id, bool parked)
{
    struct node *n = &s->nodes[id];
    const struct placement_params *p = &s->cfg->placement;
    if (flds_in_force(s, id))
        placement_flds_on_steal_failed(p, &n->flds);
    return parked && placement_flds_poll_should_reset(p, auto_of(s, id), &n->flds);
}

/* The node's estimate of a task's length: the mean of those that ended here, or before
 * any, the task's own duration at its speed (place.c does the same). */
static double est_length(const struct sim *s, const struct node *n, uint32_t task)
{
    return n->ended ? n->ran_s / (double)n->ended : s->wl->tasks[task].duration_s / n->speed;
}

/*
 * A task becomes ready at its holder: Algorithm 1 (placement_decide, as place.c calls
 * it) puts it in LReadyQ, in SReadyQ where thieves may take it, or pushes it to the
 * node that holds its largest input, whose LReadyQ takes it.  A stolen task joins the
 * thief's SReadyQ, as node_take_granted queues it.
 */
void sim__enqueue(struct sim *s, uint32_t id, uint32_t task, bool pushed)
{
    struct node *n = &s->nodes[id];
    uint64_t sum;
    uint32_t k = sim__inputs_of(s, task, s->objs, SIM_MAX_INPUTS, &sum);
    struct placement_input in = {
        .stealable = s->wl->tasks[task].stealable, .pushed = pushed, .all_data_size = sum,
        .self = id, .est_task_length_s = est_length(s, n, task), .inputs = s->objs,
        .num_inputs = k, .link_share = n->slots,
    };
    struct placement_decision d = placement_decide(&s->cfg->placement, auto_of(s, id), &in);
    if (d.queue == PLACE_PUSH && d.node < s->cfg->nodes && d.node != id) {
        s->tasks[task].holder = d.node;
        s->res->tasks_pushed++;
        sim__trace(s, id, TRACE_TASK_PUSHED, task, (int32_t)d.node, 0, 0, 0, 0);
        sim__send(s, id, d.node, EV_PUSHED, task, 0, 0);
        return;
    }
    if (d.queue == PLACE_SREADY) {
        /* Shared: offered first (an LW worker forwards it to the leader). */
        if (sim__leader_offer(s, id, task))
            return;
        sim__trace(s, id, TRACE_TASK_QUEUED_SHARED, task, -1, 0, 0, 0, 0);
        sim__q_push(&n->sready, sum, task);
    } else {
        sim__trace(s, id, TRACE_TASK_QUEUED_LOCAL, task, -1, 0, 0, 0, 0);
        sim__q_push(&n->lready, sum, task);
        monitor_start(s, id);
    }
    sim__on_new_ready(s, id);
}

/* The FLDS monitor's spill at node `id` (sim__q_spill). */
struct spill_at {
    struct sim *s;
    uint32_t id;
};

static bool spill_stealable(void *ctx, uint32_t task)
{
    const struct spill_at *a = ctx;
    return a->s->wl->tasks[task].stealable;
}

static uint64_t spill_priority(void *ctx, uint32_t task)
{
    const struct spill_at *a = ctx;
    uint64_t sum;
    sim__inputs_of(a->s, task, NULL, 0, &sum);
    return sum;
}

/* Spilled tasks may move: under LW that means to the leader. */
static void spill_one(void *ctx, uint32_t task)
{
    const struct spill_at *a = ctx;
    if (sim__leader_offer(a->s, a->id, task))
        return;
    sim__q_push(&a->s->nodes[a->id].sready, spill_priority(ctx, task), task);
    sim__trace(a->s, a->id, TRACE_TASK_QUEUED_SHARED, task, -1, 0, 0, 0, 0);
}

/*
 * FLDS: an LReadyQ that would take longer than tt at the node's pace spills its least
 * urgent tasks into SReadyQ, where thieves can take them (place.c's flds_spill, pinned
 * tasks held back).  The monitor looks every FLDS_MONITOR_MIN_S, or at its paced period.
 */
void sim__flds_monitor(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    const struct placement_params *p = &s->cfg->placement;
    if (n->first_start >= 0) {
        placement_flds_pace(p, &n->flds, n->ended ? n->ran_s / (double)n->ended : 0);
        double elapsed = (double)(s->now - n->first_start) / NS_PER_S;
        double tps = elapsed > 0 ? (double)n->ended / elapsed : 0;
        uint64_t move = placement_flds_monitor(p, auto_of(s, id), &n->flds, readyq_len(&n->lready), tps,
                                               (double)s->now / NS_PER_S);
        struct spill_at at = {s, id};
        const struct sim_spill sp = {spill_stealable, spill_priority, spill_one, &at};
        uint64_t moved = sim__q_spill(&n->lready, move, &s->take, &sp);
        if (moved && s->nparked && sim__stealable(n) > 0)
            sim__wake_parked(s, id);
    }
    /* It looks again while tasks are queued here and FLDS decides; a task queued later
     * restarts it. */
    n->monitor_on = s->left && readyq_len(&n->lready) && flds_in_force(s, id);
    if (n->monitor_on)
        sim__push(s, s->now + (int64_t)(FLDS_MONITOR_MIN_S * NS_PER_S), EV_MONITOR, id, 0, 0,
                  0);
}

