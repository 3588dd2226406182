/*
 * sim_queue — the simulator's ready queues and staged FIFOs (sim_queue.h).
 */
#include "core/sim/sim_queue.h"

#include <stdbool.h>
#include <string.h>

#include "core/base/xalloc.h"

static bool q_before(const struct qent *x, const struct qent *y)
{
    return x->prio != y->prio ? x->prio > y->prio : x->task < y->task;
}

void sim__q_push(struct queue *q, uint64_t prio, uint32_t task)
{
    q->v = xgrow(q->v, &q->cap, q->n + 1, sizeof *q->v);
    struct qent e = {.prio = prio, .task = task};
    size_t i = q->n++;
    while (i > 0 && q_before(&e, &q->v[(i - 1) / 2])) {
        q->v[i] = q->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->v[i] = e;
}

struct qent sim__q_pop(struct queue *q)
{
    struct qent top = q->v[0], last = q->v[--q->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct qent *best = &last;
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
    if (q->n)
        q->v[i] = last;
    return top;
}

/* The heap's last entry: a leaf, among the least urgent it holds (a grant's and the
 * FLDS monitor's end of the queue). */
struct qent sim__q_take_tail(struct queue *q)
{
    return q->v[--q->n];
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
