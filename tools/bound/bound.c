/*
 * bound — the makespan bounds of a workload on a cluster (see bound.h for the model and
 * the equations).  Two passes over the topological order: the first finds each task's
 * level and each level's work (for t_qwait, eq. 1), the second runs the programme of
 * paper 002 §3 and the critical path side by side.
 */
#include "tools/bound/bound.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"

static const char *const kind_names[BOUND_KIND_COUNT] = {
    [BOUND_SUBOPTIMAL] = "sub-optimal",
    [BOUND_CAPACITY] = "capacity",
    [BOUND_CRITICAL_PATH] = "critical path",
};

const char *bound_kind_name(enum bound_kind kind)
{
    return (unsigned)kind < BOUND_KIND_COUNT ? kind_names[kind] : NULL;
}

static double work_of(const struct workload_task *t)
{
    return t->kind == TASK_SLEEP ? t->duration_s : 0.0;
}

/* size(v): the bytes proto_put_task writes for a ready task, whose inputs then hold its
 * declared inputs and its parents' outputs (task.h).  Kept in step with proto.c by hand:
 * the protocol header would drag core/net into a pure module for one sum. */
static double spec_bytes(const struct workload_task *t)
{
    double bytes = 42.0 + 20.0 * ((double)t->num_inputs + (double)t->num_parents);
    if (t->kind == TASK_COMMAND && t->cmd)
        bytes += 4.0 + (double)strlen(t->cmd);
    return bytes;
}

/*
 * The latest and second latest of a set of arrival times, and which member gave the
 * latest, so that "the latest arrival of every member but m" costs O(1) (bound.h: case
 * 2 in O(p) instead of the paper's O(p²)).  Starts at 0 rather than -inf: nothing can
 * start before time 0, so an empty set means "no wait".
 */
struct top2 {
    double first, second;
    uint64_t first_member;
};

static void top2_init(struct top2 *t)
{
    *t = (struct top2){0.0, 0.0, UINT64_MAX};
}

static void top2_add(struct top2 *t, double value, uint64_t member)
{
    if (value > t->first) {
        t->second = t->first;
        t->first = value;
        t->first_member = member;
    } else if (value > t->second) {
        t->second = value;
    }
}

static double top2_without(const struct top2 *t, uint64_t member)
{
    return t->first_member == member ? t->second : t->first;
}

static int check_cluster(const struct workload *wl, const struct bound_cluster *cl,
                         char **cause)
{
    if (!cl || cl->nodes == 0 || !cl->slots || !cl->speeds) {
        *cause = xasprintf("the cluster needs at least one node, with slots and speeds");
        return -EINVAL;
    }
    for (uint32_t i = 0; i < cl->nodes; i++) {
        if (cl->slots[i] == 0) {
            *cause = xasprintf("node %u has 0 slots", i);
            return -EINVAL;
        }
        if (!(cl->speeds[i] > 0 && cl->speeds[i] <= 1)) {
            *cause = xasprintf("node %u: speed %g is not in (0, 1]", i, cl->speeds[i]);
            return -EINVAL;
        }
    }
    if (!(cl->bandwidth >= 0) || !isfinite(cl->bandwidth)) {
        *cause = xasprintf("bandwidth %g bytes/s is not a finite number >= 0", cl->bandwidth);
        return -EINVAL;
    }
    return workload_check_nodes(wl, cl->nodes, cause);
}

/* Per-node scratch for grouping one task's input objects by the node holding them:
 * `stamp` says which task last touched a node, so nothing is cleared between tasks. */
struct groups {
    double *bytes;          /* nodes entries */
    uint32_t *stamp;        /* nodes entries; task index + 1, 0 = never */
    uint32_t *touched;      /* the nodes of the current task, in first-seen order */
    uint32_t count;
};

/* Fills g with task v's input objects grouped by node. */
static void group_inputs(struct groups *g, const struct workload *wl, uint32_t v,
                         uint32_t nodes)
{
    const struct workload_task *t = &wl->tasks[v];
    g->count = 0;
    for (uint32_t i = 0; i < t->num_inputs; i++) {
        uint32_t o = t->inputs[i];
        uint32_t node = workload_object_node(wl, o, nodes); /* checked in range */
        if (g->stamp[node] != v + 1) {
            g->stamp[node] = v + 1;
            g->bytes[node] = 0;
            g->touched[g->count++] = node;
        }
        g->bytes[node] += (double)wl->objects[o].bytes;
    }
}

int bound_compute(const struct workload *wl, const struct bound_cluster *cl,
                  struct bound_result *out, double *finish, char **cause)
{
    if (!wl || !out || !cause)
        return -EINVAL;
    int rc = check_cluster(wl, cl, cause);
    if (rc < 0)
        return rc;

    *out = (struct bound_result){.binding = BOUND_SUBOPTIMAL,
                                 .suboptimal_last = UINT32_MAX,
                                 .critical_last = UINT32_MAX};
    for (uint32_t i = 0; i < cl->nodes; i++) {
        out->total_slots += cl->slots[i];
        out->capacity += cl->slots[i] * cl->speeds[i];
        if (cl->speeds[i] > out->fastest_speed)
            out->fastest_speed = cl->speeds[i];
    }
    const double fastest = out->fastest_speed, capacity = out->capacity;
    /* Unlimited bandwidth: every transfer takes 0 s (x * 0). */
    const double per_byte = cl->bandwidth > 0 ? 1.0 / cl->bandwidth : 0.0;
    const uint32_t n = wl->count;

    uint32_t *level = malloc((size_t)n * sizeof *level + 1);
    double *level_work = malloc((size_t)n * sizeof *level_work + 1);
    uint32_t *level_count = calloc((size_t)n + 1, sizeof *level_count);
    double *ef = finish ? finish : malloc((size_t)n * sizeof *ef + 1);
    double *cp = malloc((size_t)n * sizeof *cp + 1);
    struct groups g = {
        .bytes = malloc((size_t)cl->nodes * sizeof *g.bytes),
        .stamp = calloc(cl->nodes, sizeof *g.stamp),
        .touched = malloc((size_t)cl->nodes * sizeof *g.touched),
    };
    if (!level || !level_work || !level_count || !ef || !cp || !g.bytes || !g.stamp ||
        !g.touched) {
        *cause = xasprintf("out of memory for the bound of %u tasks", n);
        rc = -ENOMEM;
        goto out;
    }

    /* Pass 1: levels (longest distance from a root, so a level holds no edge) and the
     * work of each, which eq. 1 needs before the programme reaches the level. */
    uint32_t levels = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = wl->topo[k];
        const struct workload_task *t = &wl->tasks[v];
        uint32_t lv = 0;
        for (uint32_t i = 0; i < t->num_parents; i++) {
            uint32_t lp = level[t->parents[i]] + 1;
            if (lp > lv)
                lv = lp;
        }
        level[v] = lv;
        if (lv >= levels) {
            for (uint32_t l = levels; l <= lv; l++)
                level_work[l] = 0;
            levels = lv + 1;
        }
        level_count[lv]++;
        double w = work_of(t);
        level_work[lv] += w;
        out->total_work_s += w;
        out->edges += t->num_parents;
    }
    out->levels = levels;

    /* Eq. 1 per level: k·l is the level's work spread over the whole capacity, l its
     * mean t_exec on the fastest node; (k − 1)·l / 2 = (k·l − l) / 2, and k < 1 waits 0.
     * level_work is reused to hold t_qwait. */
    for (uint32_t l = 0; l < levels; l++) {
        double mean_exec = level_work[l] / level_count[l] / fastest;
        double spread = level_work[l] / capacity;
        double qwait = spread > mean_exec ? (spread - mean_exec) / 2 : 0.0;
        level_work[l] = qwait;
        if (qwait > out->max_qwait_s)
            out->max_qwait_s = qwait;
    }
    const double *qwait = level_work;

    /* Pass 2: the programme (bound.h) and the critical path.  A candidate place for v is
     * one of its parents (member = the parent's position) or a node holding some of its
     * input objects (member = num_parents + the group's position). */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = wl->topo[k];
        const struct workload_task *t = &wl->tasks[v];
        double exec = work_of(t) / fastest;
        group_inputs(&g, wl, v, cl->nodes);

        struct top2 arrival; /* t_ef(u) + t_mvdata(u, v) of every parent and group */
        struct top2 group;   /* bytes of each group, for the critical path */
        top2_init(&arrival);
        top2_init(&group);
        double cp_start = 0;
        for (uint32_t i = 0; i < t->num_parents; i++) {
            uint32_t u = t->parents[i];
            top2_add(&arrival, ef[u] + (double)wl->tasks[u].output_bytes * per_byte, i);
            if (cp[u] > cp_start)
                cp_start = cp[u];
        }
        for (uint32_t j = 0; j < g.count; j++) {
            double bytes = g.bytes[g.touched[j]];
            top2_add(&arrival, bytes * per_byte, (uint64_t)t->num_parents + j);
            top2_add(&group, bytes, j);
        }

        /* Case 1: every parent's output and every input group moves; the task does not. */
        double start = arrival.first;
        bool case2 = false;
        /* Case 2: v joins parent w (or the node of input group j) and moves there. */
        double mvtask = spec_bytes(t) * per_byte;
        for (uint32_t i = 0; i < t->num_parents; i++) {
            double own = ef[t->parents[i]];
            double others = top2_without(&arrival, i);
            double c = (own > others ? own : others) + mvtask;
            if (c < start) {
                start = c;
                case2 = true;
            }
        }
        for (uint32_t j = 0; j < g.count; j++) {
            double c = top2_without(&arrival, (uint64_t)t->num_parents + j) + mvtask;
            if (c < start) {
                start = c;
                case2 = true;
            }
        }
        ef[v] = start + qwait[level[v]] + exec;
        out->case2_tasks += case2;
        if (out->suboptimal_last == UINT32_MAX || ef[v] > out->suboptimal_s) {
            out->suboptimal_s = ef[v];
            out->suboptimal_last = v;
        }

        /* Critical path: the parents, and the input bytes not on the node holding most. */
        double unavoidable = group.second * per_byte;
        if (unavoidable > cp_start)
            cp_start = unavoidable;
        cp[v] = cp_start + exec;
        if (out->critical_last == UINT32_MAX || cp[v] > out->critical_path_s) {
            out->critical_path_s = cp[v];
            out->critical_last = v;
        }
    }

    out->capacity_s = out->total_work_s / capacity;
    out->binding = BOUND_SUBOPTIMAL;
    out->binding_s = out->suboptimal_s;
    if (out->capacity_s > out->binding_s) {
        out->binding = BOUND_CAPACITY;
        out->binding_s = out->capacity_s;
    }
    if (out->critical_path_s > out->binding_s) {
        out->binding = BOUND_CRITICAL_PATH;
        out->binding_s = out->critical_path_s;
    }
    rc = 0;

out:
    free(level);
    free(level_work);
    free(level_count);
    if (ef != finish)
        free(ef);
    free(cp);
    free(g.bytes);
    free(g.stamp);
    free(g.touched);
    return rc;
}
