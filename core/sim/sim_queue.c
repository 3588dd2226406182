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

/* What a scan of the first SIM_Q_SCAN entries needing data found: the first (in the
 * heap's order) whose inputs are all here (readyq_take_free; readyq_take_cheapest stops
 * at it too), and the one missing the fewest bytes but some, the first in the queue's
 * order among equals (readyq_take_cheapest); SIZE_MAX when none.  Wide tasks are not
 * eligible. */
struct scan {
    size_t here, cheapest;
};

static struct scan scan_near_head(const struct queue *q, const struct sim_task_view *view,
                                  bool stop_at_here)
{
    struct scan f = {SIZE_MAX, SIZE_MAX};
    uint64_t best = UINT64_MAX;
    for (size_t i = 0, seen = 0; i < q->n && seen < SIM_Q_SCAN; i++) {
        if (q->v[i].prio == 0)
            continue;
        seen++;
        if (view->cores(view->ctx, q->v[i].task) != 1)
            continue;
        uint64_t c = view->missing(view->ctx, q->v[i].task);
        if (c == 0) {
            if (f.here == SIZE_MAX)
                f.here = i;
            if (stop_at_here)
                break;
        } else if (c < best || (c == best && q_before(&q->v[i], &q->v[f.cheapest]))) {
            f.cheapest = i;
            best = c;
        }
    }
    return f;
}

/* The oldest entry of priority 0, else the heap's last (readyq_peek_low); SIZE_MAX when
 * empty.  The scan for the oldest runs only in a queue that holds some. */
static size_t find_low(const struct queue *q)
{
    if (!q->n)
        return SIZE_MAX;
    if (!q->nzero)
        return q->n - 1;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].prio == 0 && (best == SIZE_MAX || q->v[i].task < q->v[best].task))
            best = i;
    return best;
}

enum sim_step sim__q_next(struct queue *lready, struct queue *sready, struct sim_slots sl,
                          bool metered, const struct sim_task_view *view, uint32_t *task)
{
    struct queue *q = lready->n ? lready : sready;
    if (!q->n)
        return SIM_STEP_NONE;
    const struct qent head = q->v[0];
    /* Both early returns spare a read of the head's record, a cache miss at 10^5 nodes,
     * on every pass over a busy node. */
    uint32_t spoken = sl.busy + sl.staged;
    bool window_free = sl.staging < sl.slots && spoken + sl.staging < 2 * sl.slots;
    if (spoken >= sl.slots && (!window_free || !metered || head.prio == 0))
        return SIM_STEP_NONE;
    uint32_t head_cores = view->cores(view->ctx, head.task);
    bool slot_free = spoken + head_cores <= sl.slots;
    if (!metered || head.prio == 0) {
        if (!slot_free)
            return SIM_STEP_NONE;
        *task = sim__q_pop(q).task;
        return SIM_STEP_RUN;
    }
    if (head_cores == 1 && (slot_free || window_free)) {
        /* A free slot takes the first task that is here, so the scan may stop there;
         * without one it has run to the end, and found the window's cheapest. */
        struct scan f = scan_near_head(q, view, slot_free);
        if (slot_free) {
            struct queue *from = q;
            size_t i = f.here;
            if (i == SIZE_MAX && q == lready) {
                from = sready;
                i = scan_near_head(sready, view, true).here;
            }
            if (i != SIZE_MAX) {
                *task = take_at(from, i).task;
                return SIM_STEP_RUN;
            }
        }
        if (window_free) {
            size_t i = f.cheapest != SIZE_MAX ? f.cheapest : f.here;
            if (i != SIZE_MAX) {
                *task = take_at(q, i).task;
                return SIM_STEP_FETCH;
            }
        }
    }
    if (window_free) {
        *task = sim__q_pop(q).task;
        return SIM_STEP_FETCH;
    }
    if (!slot_free)
        return SIM_STEP_NONE;
    /* A slot is free, the fetch window is full and the head needs data. */
    size_t low = find_low(q);
    if (low == SIZE_MAX || q->v[low].prio != 0 ||
        spoken + view->cores(view->ctx, q->v[low].task) > sl.slots)
        return SIM_STEP_NONE;
    *task = take_at(q, low).task;
    return SIM_STEP_RUN;
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
