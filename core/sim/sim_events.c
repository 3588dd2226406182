/*
 * sim_events — the discrete-event core's pending events (sim_events.h).
 */
#include "core/sim/sim_events.h"

#include <assert.h>
#include <stdlib.h>

#include "core/base/xalloc.h"

/* A window of 131 us, about a latency of the default 100 us: the heap holds one
 * window's events, and at 10^6 nodes that is tens of thousands (a pipeline's: 15,000,
 * half a MB, where a millisecond's were 3.7 MB and each pop's descent missed the caches
 * near its leaves: 124 s against 134 s of simulation).  A message sent now lands in the
 * next window's bucket, an append.  The calendar spans about half a second. */
#define WINDOW_SHIFT 17
#define SIM_EVENTS_WINDOW_NS ((int64_t)1 << WINDOW_SHIFT)
#define SIM_EVENTS_BUCKETS 4096
/* Four children: half the levels of a binary heap, and the four a pop compares sit
 * side by side (two cache lines of 32-byte events). */
#define HEAP_ARITY 4

static bool ev_before(const struct event *x, const struct event *y)
{
    return x->t != y->t ? x->t < y->t : x->order < y->order;
}

void sim__events_init(struct sim_events *q)
{
    *q = (struct sim_events){0};
    q->buckets = xcalloc(SIM_EVENTS_BUCKETS, sizeof *q->buckets);
    q->year_end = SIM_EVENTS_WINDOW_NS * SIM_EVENTS_BUCKETS;
}

void sim__events_fini(struct sim_events *q)
{
    for (size_t i = 0; q->buckets && i < SIM_EVENTS_BUCKETS; i++)
        free(q->buckets[i].v);
    free(q->buckets);
    free(q->later.v);
    free(q->run.v);
    free(q->heap);
    *q = (struct sim_events){0};
}

static void list_add(struct event_list *l, const struct event *e)
{
    l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    l->v[l->n++] = *e;
}

static void heap_push(struct sim_events *q, const struct event *e)
{
    q->heap = xgrow(q->heap, &q->heap_cap, q->nheap + 1, sizeof *q->heap);
    size_t i = q->nheap++;
    while (i > 0) {
        size_t up = (i - 1) / HEAP_ARITY;
        if (!ev_before(e, &q->heap[up]))
            break;
        q->heap[i] = q->heap[up];
        i = up;
    }
    q->heap[i] = *e;
}

/* Puts e at position i or below, the subtrees under i being heaps. */
static void sift_down(struct sim_events *q, size_t i, struct event e)
{
    size_t n = q->nheap;
    for (;;) {
        size_t first = HEAP_ARITY * i + 1;
        if (first >= n)
            break;
        size_t end = first + HEAP_ARITY < n ? first + HEAP_ARITY : n, m = first;
        for (size_t c = first + 1; c < end; c++) {
            if (ev_before(&q->heap[c], &q->heap[m]))
                m = c;
        }
        if (!ev_before(&q->heap[m], &e))
            break;
        q->heap[i] = q->heap[m];
        i = m;
    }
    q->heap[i] = e;
}

static struct event heap_pop(struct sim_events *q)
{
    struct event top = q->heap[0];
    struct event last = q->heap[--q->nheap];
    if (q->nheap)
        sift_down(q, 0, last);
    return top;
}

/* The window's bucket becomes the (empty) heap, heapified in place: no copy.  Or, when
 * its events are already in order, the run popped from front to back: at the start,
 * every task's readiness at time 0 is a window of 10^6 events in order, and a heap of
 * them cost a descent of cache misses a pop.  The arrays given up are freed rather
 * than kept by the bucket, which is not used again for a calendar year: kept, every
 * bucket would hold an array the size of its busiest window. */
static void window_take(struct sim_events *q, struct event_list *b)
{
    assert(q->nheap == 0 && q->run_next == q->run.n);
    free(q->run.v);
    q->run = (struct event_list){0};
    q->run_next = 0;
    bool sorted = true;
    for (size_t i = 1; sorted && i < b->n; i++)
        sorted = ev_before(&b->v[i - 1], &b->v[i]);
    if (sorted) {
        q->run = *b;
    } else {
        free(q->heap);
        q->heap = b->v;
        q->heap_cap = b->cap;
        q->nheap = b->n;
        for (size_t i = q->nheap > 1 ? (q->nheap - 2) / HEAP_ARITY + 1 : 0; i-- > 0;)
            sift_down(q, i, q->heap[i]);
    }
    *b = (struct event_list){0};
}

static struct event_list *bucket_of(struct sim_events *q, int64_t t)
{
    return &q->buckets[(uint64_t)t >> WINDOW_SHIFT & (SIM_EVENTS_BUCKETS - 1)];
}

void sim__events_push(struct sim_events *q, const struct event *e)
{
    q->count++;
    if (e->t < q->horizon)
        heap_push(q, e);
    else if (e->t < q->year_end)
        list_add(bucket_of(q, e->t), e);
    else
        list_add(&q->later, e);
}

/* The calendar has come round (every bucket is empty): a new one starts at the window
 * of the earliest later event, and takes the later events it spans. */
static void new_year(struct sim_events *q)
{
    assert(q->later.n);
    int64_t first = q->later.v[0].t;
    for (size_t i = 1; i < q->later.n; i++)
        first = q->later.v[i].t < first ? q->later.v[i].t : first;
    q->horizon = first >> WINDOW_SHIFT << WINDOW_SHIFT;
    q->year_end = q->horizon + SIM_EVENTS_WINDOW_NS * SIM_EVENTS_BUCKETS;
    size_t kept = 0;
    for (size_t i = 0; i < q->later.n; i++) {
        const struct event *e = &q->later.v[i];
        if (e->t < q->year_end)
            list_add(bucket_of(q, e->t), e);
        else
            q->later.v[kept++] = *e;
    }
    q->later.n = kept;
}

bool sim__events_pop(struct sim_events *q, struct event *out)
{
    if (!q->count)
        return false;
    while (!q->nheap && q->run_next == q->run.n) {
        if (q->horizon >= q->year_end) {
            new_year(q);
            continue;
        }
        /* The next window's events are the heap or the run: all of them are before the
         * new horizon, and nothing else is. */
        struct event_list *b = bucket_of(q, q->horizon);
        q->horizon += SIM_EVENTS_WINDOW_NS;
        window_take(q, b);
    }
    q->count--;
    if (q->run_next < q->run.n && (!q->nheap || ev_before(&q->run.v[q->run_next], &q->heap[0])))
        *out = q->run.v[q->run_next++];
    else
        *out = heap_pop(q);
    return true;
}
