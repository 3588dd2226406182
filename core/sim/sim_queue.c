/*
 * sim_queue — the simulator's ready queues, the dispatcher's choice, and staged FIFOs
 * (sim_queue.h).
 */
#include "core/sim/sim_queue.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

static bool q_before(const struct qent *x, const struct qent *y)
{
    return x->prio != y->prio ? x->prio > y->prio : x->task < y->task;
}

static void sift_up(struct queue *q, size_t i, struct qent e)
{
    while (i > 0 && q_before(&e, &q->v[(i - 1) / 2])) {
        q->v[i] = q->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->v[i] = e;
}

static void sift_down(struct queue *q, size_t i, struct qent e)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct qent *best = &e;
        if (l < q->n && q_before(&q->v[l], best)) {
            m = l;
            best = &q->v[l];
        }
        if (r < q->n && q_before(&q->v[r], best))
            m = r;
        if (m == i)
            break;
        q->v[i] = q->v[m];
        i = m;
    }
    q->v[i] = e;
}

void sim__q_push(struct queue *q, uint64_t prio, uint32_t task)
{
    size_t cap = q->cap;
    q->v = xgrow(q->v, &cap, (size_t)q->n + 1, sizeof *q->v);
    q->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    q->nzero += prio == 0;
    sift_up(q, q->n++, (struct qent){.prio = prio, .task = task});
}

/* Entry i, removed. */
static struct qent take_at(struct queue *q, size_t i)
{
    struct qent e = q->v[i], last = q->v[--q->n];
    q->nzero -= e.prio == 0;
    if (i < q->n) {
        if (i > 0 && q_before(&last, &q->v[(i - 1) / 2]))
            sift_up(q, i, last);
        else
            sift_down(q, i, last);
    }
    return e;
}

struct qent sim__q_pop(struct queue *q)
{
    return take_at(q, 0);
}

struct qent sim__q_take_tail(struct queue *q)
{
    struct qent e = q->v[--q->n];
    q->nzero -= e.prio == 0;
    return e;
}

void sim__q_free(struct queue *q)
{
    free(q->v);
    *q = (struct queue){0};
}

/* The oldest entry of priority 0, else the heap's last (readyq_peek_low).  The scan for
 * the oldest runs only in a queue that holds some. */
static size_t find_low(const struct queue *q)
{
    if (!q->nzero)
        return q->n - 1;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].prio == 0 && (best == SIZE_MAX || q->v[i].task < q->v[best].task))
            best = i;
    return best;
}

/* The two queues and the engine's view of a task, as dispatch.h reads them. */
struct queues_view {
    struct queue *q[2];
    const struct sim_task_view *task;
};

static size_t view_scan_len(void *ctx, unsigned q)
{
    const struct queues_view *qv = ctx;
    return qv->q[q]->n;
}

static uint64_t view_priority(void *ctx, unsigned q, size_t i)
{
    const struct queues_view *qv = ctx;
    return qv->q[q]->v[i].prio;
}

/* A task whose inputs sum to no bytes moves nothing in the simulation: it needs no
 * window. */
static bool view_inputs(void *ctx, unsigned q, size_t i)
{
    return view_priority(ctx, q, i) != 0;
}

static uint32_t view_cores(void *ctx, unsigned q, size_t i)
{
    const struct queues_view *qv = ctx;
    return qv->task->cores(qv->task->ctx, qv->q[q]->v[i].task);
}

static uint64_t view_missing(void *ctx, unsigned q, size_t i)
{
    const struct queues_view *qv = ctx;
    return qv->task->missing(qv->task->ctx, qv->q[q]->v[i].task);
}

static bool view_before(void *ctx, unsigned q, size_t i, size_t j)
{
    const struct queues_view *qv = ctx;
    return q_before(&qv->q[q]->v[i], &qv->q[q]->v[j]);
}

static size_t view_low(void *ctx, unsigned q)
{
    const struct queues_view *qv = ctx;
    return find_low(qv->q[q]);
}

enum sim_step sim__q_next(struct queue *lready, struct queue *sready,
                          const struct dispatch_slots *sl, bool metered,
                          const struct sim_task_view *task_view, uint32_t *task)
{
    struct queue *q = lready->n ? lready : sready;
    if (!q->n)
        return SIM_STEP_NONE;
    if (!metered) {
        /* Every input is here at once: the head runs when its slots are free. */
        uint32_t cores = task_view->cores(task_view->ctx, q->v[0].task);
        if (!dispatch_fits(sl->slots, sl->busy + sl->staged, cores))
            return SIM_STEP_NONE;
        *task = sim__q_pop(q).task;
        return SIM_STEP_RUN;
    }
    struct queues_view qv = {{q, sready}, task_view};
    const struct dispatch_view view = {
        .ctx = &qv, .nq = q == lready ? 2 : 1, .scan_len = view_scan_len,
        .priority = view_priority, .inputs = view_inputs, .cores = view_cores,
        .missing = view_missing, .before = view_before, .low = view_low,
    };
    struct dispatch_pick p = dispatch_next(sl, &view);
    if (p.kind == DISPATCH_NONE)
        return SIM_STEP_NONE;
    *task = take_at(qv.q[p.q], p.i).task;
    return p.kind == DISPATCH_RUN ? SIM_STEP_RUN : SIM_STEP_FETCH;
}

void sim__fifo_push(uint32_t **v, size_t *head, size_t *n, size_t *cap, uint32_t task)
{
    if (*head + *n == *cap && *head) {
        memmove(*v, *v + *head, *n * sizeof **v);
        *head = 0;
    }
    *v = xgrow(*v, cap, *head + *n + 1, sizeof **v);
    (*v)[*head + (*n)++] = task;
}

uint32_t *sim__roots_in_turn(const struct workload *wl, uint32_t nodes,
                             uint32_t (*holder)(const void *ctx, uint32_t task),
                             const void *ctx, uint32_t *nroots)
{
    /* Each root's rank among its holder's, in the workload's order; then a counting
     * sort by rank, stable, so that equal ranks keep that order. */
    uint32_t *count = xcalloc(nodes ? nodes : 1, sizeof *count);
    uint32_t *rank = xcalloc(wl->count ? wl->count : 1, sizeof *rank);
    uint32_t ranks = 0, n = 0;
    for (uint32_t k = 0; k < wl->count; k++) {
        uint32_t i = wl->topo[k];
        if (wl->tasks[i].num_parents)
            continue;
        rank[i] = count[holder(ctx, i)]++;
        ranks = rank[i] + 1 > ranks ? rank[i] + 1 : ranks;
        n++;
    }
    free(count);
    uint32_t *start = xcalloc((size_t)ranks + 1, sizeof *start);
    for (uint32_t i = 0; i < wl->count; i++)
        if (!wl->tasks[i].num_parents)
            start[rank[i] + 1]++;
    for (uint32_t r = 0; r < ranks; r++)
        start[r + 1] += start[r];
    uint32_t *order = xcalloc(n ? n : 1, sizeof *order);
    for (uint32_t k = 0; k < wl->count; k++) {
        uint32_t i = wl->topo[k];
        if (!wl->tasks[i].num_parents)
            order[start[rank[i]]++] = i;
    }
    free(start);
    free(rank);
    *nroots = n;
    return order;
}
