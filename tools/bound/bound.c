/*
 * bound — the makespan bounds of a workload on a cluster (see bound.h for the model and
 * the argument that each is a lower bound).  Three passes: levels and the work of each
 * (forward), the tails (backward), then the programme and the critical path side by
 * side (forward), and last the contention of the levels from what the programme found.
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

/* The largest and second largest of a set of values, from 0: nothing starts before time
 * 0, so an empty set means "no wait". */
struct top2 {
    double first, second;
};

static void top2_add(struct top2 *t, double value)
{
    if (value > t->first) {
        t->second = t->first;
        t->first = value;
    } else if (value > t->second) {
        t->second = value;
    }
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

/* The bytes of task v's input objects not on the node holding most of them: they move
 * wherever v runs (bound.h, "input objects"). */
static double unavoidable_bytes(struct groups *g, const struct workload *wl, uint32_t v,
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
    struct top2 group = {0, 0};
    for (uint32_t j = 0; j < g->count; j++)
        top2_add(&group, g->bytes[g->touched[j]]);
    return group.second;
}

/* One parent u of the task the programme is at: its output's arrival elsewhere
 * (t_ef(u) + d(u)/B), its own end, its earliest start, and its work at speed 1. */
struct parent {
    double remote, end, start, work;
};

static int by_remote_desc(const void *a, const void *b)
{
    double x = ((const struct parent *)a)->remote, y = ((const struct parent *)b)->remote;
    return (x < y) - (x > y);
}

/*
 * The earliest that v's parents' outputs can all be on v's node (bound.h, "the
 * programme"): the parents that ran there (a set Q) hand theirs over at their end, the
 * others' move.  Q's tasks shared one node, so the last of them ends no sooner than the
 * first could start plus their work over that node's capacity (at most `node_cap`).
 * For a wait of at most τ, Q must hold every parent whose output would arrive after τ,
 * and a larger Q only waits longer: so the sets worth trying are the prefixes of the
 * parents sorted by remote arrival, latest first.  Sets *colocated to the size of the
 * best prefix (0: none).
 */
static double parents_ready(struct parent *p, uint32_t count, double node_cap,
                            uint32_t *colocated)
{
    *colocated = 0;
    if (count == 0)
        return 0;
    if (count > 1)
        qsort(p, count, sizeof *p, by_remote_desc);
    double best = p[0].remote, end = 0, first_start = INFINITY, work = 0;
    for (uint32_t i = 1; i <= count; i++) {
        const struct parent *u = &p[i - 1];
        end = u->end > end ? u->end : end;
        first_start = u->start < first_start ? u->start : first_start;
        work += u->work;
        double ready = end;
        double shared = first_start + work / node_cap;
        if (shared > ready)
            ready = shared;
        if (i < count && p[i].remote > ready)
            ready = p[i].remote;
        if (ready < best) {
            best = ready;
            *colocated = i;
        }
    }
    return best;
}

/* What the contention pass keeps of each level: its work, its earliest start and its
 * shortest tail. */
struct level_sum {
    double work, first_start, shortest_tail;
};

int bound_compute(const struct workload *wl, const struct bound_cluster *cl,
                  struct bound_result *out, double *finish, char **cause)
{
    if (!wl || !out || !cause)
        return -EINVAL;
    int rc = check_cluster(wl, cl, cause);
    if (rc < 0)
        return rc;

    *out = (struct bound_result){.binding = BOUND_CAPACITY,
                                 .suboptimal_last = UINT32_MAX,
                                 .critical_last = UINT32_MAX,
                                 .contention_level = UINT32_MAX};
    double node_cap = 0;
    for (uint32_t i = 0; i < cl->nodes; i++) {
        out->total_slots += cl->slots[i];
        double cap = cl->slots[i] * cl->speeds[i];
        out->capacity += cap;
        if (cap > node_cap)
            node_cap = cap;
        if (cl->speeds[i] > out->fastest_speed)
            out->fastest_speed = cl->speeds[i];
    }
    const double fastest = out->fastest_speed, capacity = out->capacity;
    /* Unlimited bandwidth: every transfer takes 0 s (x * 0). */
    const double per_byte = cl->bandwidth > 0 ? 1.0 / cl->bandwidth : 0.0;
    const uint32_t n = wl->count;

    uint32_t *level = malloc((size_t)n * sizeof *level + 1);
    double *ef = finish ? finish : malloc((size_t)n * sizeof *ef + 1);
    double *start = malloc((size_t)n * sizeof *start + 1);
    double *tail = malloc((size_t)n * sizeof *tail + 1);
    double *cp = malloc((size_t)n * sizeof *cp + 1);
    struct level_sum *lv = NULL;
    struct parent *scratch = NULL;
    struct groups g = {
        .bytes = malloc((size_t)cl->nodes * sizeof *g.bytes),
        .stamp = calloc(cl->nodes, sizeof *g.stamp),
        .touched = malloc((size_t)cl->nodes * sizeof *g.touched),
    };
    if (!level || !ef || !start || !tail || !cp || !g.bytes || !g.stamp || !g.touched)
        goto oom;

    /* Pass 1: levels (longest distance from a root, so a level holds no edge). */
    uint32_t levels = 0, most_parents = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = wl->topo[k];
        const struct workload_task *t = &wl->tasks[v];
        uint32_t l = 0;
        for (uint32_t i = 0; i < t->num_parents; i++) {
            uint32_t lp = level[t->parents[i]] + 1;
            if (lp > l)
                l = lp;
        }
        level[v] = l;
        if (l >= levels)
            levels = l + 1;
        if (t->num_parents > most_parents)
            most_parents = t->num_parents;
        out->total_work_s += work_of(t);
        out->edges += t->num_parents;
        tail[v] = 0;
    }
    out->levels = levels;
    lv = malloc((size_t)levels * sizeof *lv + 1);
    scratch = malloc((size_t)most_parents * sizeof *scratch + 1);
    if (!lv || !scratch)
        goto oom;
    for (uint32_t l = 0; l < levels; l++)
        lv[l] = (struct level_sum){0, INFINITY, INFINITY};

    /* Pass 2, backward: each task's tail, the longest chain of work after it ends.
     * Children may run where it ran, so no transfer counts. */
    for (uint32_t k = n; k-- > 0;) {
        uint32_t v = wl->topo[k];
        const struct workload_task *t = &wl->tasks[v];
        double after = work_of(t) / fastest + tail[v];
        for (uint32_t i = 0; i < t->num_parents; i++)
            if (after > tail[t->parents[i]])
                tail[t->parents[i]] = after;
    }

    /* Pass 3, forward: the programme and the critical path. */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t v = wl->topo[k];
        const struct workload_task *t = &wl->tasks[v];
        double exec = work_of(t) / fastest;
        double cp_start = 0;
        for (uint32_t i = 0; i < t->num_parents; i++) {
            uint32_t u = t->parents[i];
            scratch[i] = (struct parent){
                .remote = ef[u] + (double)wl->tasks[u].output_bytes * per_byte,
                .end = ef[u],
                .start = start[u],
                .work = work_of(&wl->tasks[u]),
            };
            if (cp[u] > cp_start)
                cp_start = cp[u];
        }
        double unavoidable = unavoidable_bytes(&g, wl, v, cl->nodes) * per_byte;
        uint32_t colocated;
        double ready = parents_ready(scratch, t->num_parents, node_cap, &colocated);
        if (unavoidable > ready)
            ready = unavoidable;
        start[v] = ready;
        ef[v] = ready + exec;
        out->case2_tasks += colocated > 0;
        if (out->suboptimal_last == UINT32_MAX || ef[v] > out->suboptimal_s) {
            out->suboptimal_s = ef[v];
            out->suboptimal_last = v;
        }
        struct level_sum *s = &lv[level[v]];
        s->work += work_of(t);
        if (ready < s->first_start)
            s->first_start = ready;
        if (tail[v] < s->shortest_tail)
            s->shortest_tail = tail[v];

        if (unavoidable > cp_start)
            cp_start = unavoidable;
        cp[v] = cp_start + exec;
        if (out->critical_last == UINT32_MAX || cp[v] > out->critical_path_s) {
            out->critical_path_s = cp[v];
            out->critical_last = v;
        }
    }

    /* Contention (bound.h): a set of tasks none of which starts before h and each of
     * which leaves a tail of at least q takes h + its work / capacity + q.  The sets:
     * each level, the levels from the first to each, and from each to the last. */
    double before_work = 0, before_tail = INFINITY;
    /* The whole DAG, as either, is the capacity bound: left to it. */
    for (uint32_t l = 0; l < levels; l++) {
        const struct level_sum *s = &lv[l];
        before_work += s->work;
        if (s->shortest_tail < before_tail)
            before_tail = s->shortest_tail;
        double one = s->first_start + s->work / capacity + s->shortest_tail;
        double upto = l + 1 < levels ? before_work / capacity + before_tail : 0;
        double c = one > upto ? one : upto;
        if (c > out->contention_s) {
            out->contention_s = c;
            out->contention_level = l;
        }
    }
    double after_work = 0, after_start = INFINITY;
    for (uint32_t l = levels; l-- > 1;) {
        after_work += lv[l].work;
        if (lv[l].first_start < after_start)
            after_start = lv[l].first_start;
        double c = after_start + after_work / capacity;
        if (c > out->contention_s) {
            out->contention_s = c;
            out->contention_level = l;
        }
    }
    if (out->contention_s > out->suboptimal_s)
        out->suboptimal_s = out->contention_s;

    /* The binding bound, named by the simplest that reaches it: the sub-optimal bound
     * is never below the critical path and ties it on a chain, and a bag's single level
     * is its capacity bound; the programme's name is kept for what only it finds.  The
     * margin keeps a sum's rounding from naming the programme. */
    out->capacity_s = out->total_work_s / capacity;
    out->binding = BOUND_CAPACITY;
    out->binding_s = out->capacity_s;
    const double margin = 1 + 1e-12;
    if (out->critical_path_s > out->binding_s * margin) {
        out->binding = BOUND_CRITICAL_PATH;
        out->binding_s = out->critical_path_s;
    }
    if (out->suboptimal_s > out->binding_s * margin) {
        out->binding = BOUND_SUBOPTIMAL;
        out->binding_s = out->suboptimal_s;
    }
    rc = 0;
    goto out;

oom:
    *cause = xasprintf("out of memory for the bound of %u tasks", n);
    rc = -ENOMEM;
out:
    free(level);
    if (ef != finish)
        free(ef);
    free(start);
    free(tail);
    free(cp);
    free(lv);
    free(scratch);
    free(g.bytes);
    free(g.stamp);
    free(g.touched);
    return rc;
}
