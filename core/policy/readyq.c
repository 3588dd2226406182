/*
 * readyq — the two binary max-heaps behind LReadyQ and SReadyQ (see readyq.h).  Both
 * order by priority (required input bytes), then by the caller's order, then by
 * insertion sequence, so that the order is total: the same pushes always pop the same
 * way, which keeps traces and seeded test runs reproducible.  Every priority-0 entry sits in
 * `zero`, every other in `data`, so the queue's first entry is data's top when data is
 * not empty and zero's top otherwise.
 *
 * Owns the heap arrays only.  Called from the node's loop thread (core/runtime), from
 * the simulator's engines (core/sim/sim_queue.h), from dispatch.c, and from
 * tests/unit/test_readyq.c, test_dispatch.c, test_theft.c and test_progress.c (the
 * stealing protocol on a fake network).
 */
#include "core/policy/readyq.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

/* True when a must leave the queue before b. */
static bool before(const struct readyq_entry *a, const struct readyq_entry *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (a->order != b->order)
        return a->order < b->order;
    return a->seq < b->seq;
}

/* True when a thief should get a before b: less input first, then the older task. */
static bool steal_before(const struct readyq_entry *a, const struct readyq_entry *b)
{
    if (a->priority != b->priority)
        return a->priority < b->priority;
    if (a->order != b->order)
        return a->order < b->order;
    return a->seq < b->seq;
}

/* ---- one heap -------------------------------------------------------------------------- */

/* Moves the hole rather than swapping: one copy per level instead of three. */
static void sift_up(struct readyq_entry *heap, size_t i)
{
    struct readyq_entry e = heap[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&e, &heap[parent]))
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
}

static void sift_down(struct readyq_entry *heap, size_t len, size_t i)
{
    struct readyq_entry e = heap[i];

    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= len)
            break;
        if (child + 1 < len && before(&heap[child + 1], &heap[child]))
            child++;
        if (!before(&heap[child], &e))
            break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = e;
}

static void heap_add(struct readyq_heap *h, struct readyq_entry e)
{
    size_t cap = h->cap;
    h->e = xgrow(h->e, &cap, (size_t)h->len + 1, sizeof h->e[0]);
    h->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    h->e[h->len++] = e;
    sift_up(h->e, h->len - 1);
}

/* An emptied heap that had grown big gives its array back: a daemon's queues swell with
 * a big job and would otherwise keep that memory for good (issue 15's soak). */
#define READYQ_KEEP_CAP 4096u

static void heap_settle(struct readyq_heap *h)
{
    if (h->len == 0 && h->cap > READYQ_KEEP_CAP) {
        free(h->e);
        h->e = NULL;
        h->cap = 0;
    }
}

static void settle(struct readyq *q)
{
    heap_settle(&q->data);
    heap_settle(&q->zero);
}

static void *heap_pop(struct readyq_heap *h)
{
    if (h->len == 0)
        return NULL;
    void *top = h->e[0].item;
    if (--h->len > 0) {
        h->e[0] = h->e[h->len];
        sift_down(h->e, h->len, 0);
    }
    return top;
}

static void heap_delete_at(struct readyq_heap *h, size_t i)
{
    h->len--;
    if (i == h->len)
        return;
    /* The last entry fills the hole; it may belong above or below it. */
    h->e[i] = h->e[h->len];
    if (i > 0 && before(&h->e[i], &h->e[(i - 1) / 2]))
        sift_up(h->e, i);
    else
        sift_down(h->e, h->len, i);
}

static int heap_remove(struct readyq_heap *h, void *item)
{
    for (size_t i = 0; i < h->len; i++) {
        if (h->e[i].item == item) {
            heap_delete_at(h, i);
            return 1;
        }
    }
    return 0;
}

static void swap_entries(struct readyq_entry *a, struct readyq_entry *b)
{
    struct readyq_entry t = *a;
    *a = *b;
    *b = t;
}

/*
 * Quickselect: rearranges e[0..len) so that the k entries a thief gets first are in
 * e[0..k), in no particular order.  Median-of-three pivots keep it linear on the
 * sorted runs a heap array is full of; no randomness, so the same queue always gives
 * the same tasks away.
 */
static void select_first(struct readyq_entry *e, size_t len, size_t k)
{
    size_t lo = 0, hi = len; /* the k-th boundary lies in [lo, hi) */
    while (hi - lo > 16 && k > lo && k < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (steal_before(&e[mid], &e[lo]))
            swap_entries(&e[mid], &e[lo]);
        if (steal_before(&e[hi - 1], &e[lo]))
            swap_entries(&e[hi - 1], &e[lo]);
        if (steal_before(&e[hi - 1], &e[mid]))
            swap_entries(&e[hi - 1], &e[mid]);
        struct readyq_entry pivot = e[mid];
        /* Hoare partition: [lo, j] before or equal to the pivot, (j, hi) after or equal. */
        size_t i = lo, j = hi - 1;
        for (;;) {
            while (steal_before(&e[i], &pivot))
                i++;
            while (steal_before(&pivot, &e[j]))
                j--;
            if (i >= j)
                break;
            swap_entries(&e[i], &e[j]);
            i++;
            j--;
        }
        /* Both sides are non-empty (e[mid] stops both scans), so the range shrinks. */
        if (k <= j)
            hi = j + 1;
        else
            lo = j + 1;
    }
    if (k <= lo || k >= hi)
        return;
    for (size_t i = lo + 1; i < hi; i++) { /* a short range: insertion sort */
        struct readyq_entry x = e[i];
        size_t at = i;
        for (; at > lo && steal_before(&x, &e[at - 1]); at--)
            e[at] = e[at - 1];
        e[at] = x;
    }
}

/* Takes the n entries a thief gets first out of h (n < h->len), then rebuilds the heap
 * from the rest: linear. */
static void heap_take_first(struct readyq_heap *h, size_t n, void **out)
{
    select_first(h->e, h->len, n);
    for (size_t i = 0; i < n; i++)
        out[i] = h->e[i].item;
    size_t left = h->len - n;
    memmove(h->e, h->e + n, left * sizeof h->e[0]);
    h->len = left;
    for (size_t i = left / 2; i-- > 0;)
        sift_down(h->e, left, i);
}

/* ---- the queue --------------------------------------------------------------------------- */

void readyq_init(struct readyq *q)
{
    assert(q);
    memset(q, 0, sizeof *q);
}

void readyq_fini(struct readyq *q)
{
    if (!q)
        return;
    free(q->data.e);
    free(q->zero.e);
    memset(q, 0, sizeof *q);
}

void *readyq_at(const struct readyq *q, size_t i)
{
    return readyq_entry_at(q, i)->item;
}

void readyq_push(struct readyq *q, void *item, uint64_t priority)
{
    readyq_push_ordered(q, item, priority, 0);
}

/* The item must not be NULL: pop and peek return NULL to mean "empty". */
void readyq_push_ordered(struct readyq *q, void *item, uint64_t priority, uint64_t order)
{
    assert(q && item);
    struct readyq_entry e = {
        .priority = priority,
        .order = order,
        .seq = q->next_seq++,
        .item = item,
    };
    heap_add(priority ? &q->data : &q->zero, e);
}

void *readyq_pop(struct readyq *q)
{
    assert(q);
    void *item = q->data.len ? heap_pop(&q->data) : heap_pop(&q->zero);
    settle(q);
    return item;
}

void *readyq_peek(const struct readyq *q)
{
    assert(q);
    if (q->data.len)
        return q->data.e[0].item;
    return q->zero.len ? q->zero.e[0].item : NULL;
}

void *readyq_peek_low(const struct readyq *q)
{
    assert(q);
    if (q->zero.len)
        return q->zero.e[0].item;
    /* The last slot is a leaf of the heap: low, though not always the lowest. */
    return q->data.len ? q->data.e[q->data.len - 1].item : NULL;
}

const struct readyq_entry *readyq_entry_at(const struct readyq *q, size_t i)
{
    assert(q && i < readyq_len(q));
    return i < q->data.len ? &q->data.e[i] : &q->zero.e[i - q->data.len];
}

bool readyq_before_at(const struct readyq *q, size_t i, size_t j)
{
    return before(readyq_entry_at(q, i), readyq_entry_at(q, j));
}

size_t readyq_low_at(const struct readyq *q)
{
    assert(q && readyq_len(q));
    return q->zero.len ? q->data.len : q->data.len - 1;
}

void *readyq_take_at(struct readyq *q, size_t i)
{
    assert(q && i < readyq_len(q));
    struct readyq_heap *h = i < q->data.len ? &q->data : &q->zero;
    size_t at = i < q->data.len ? i : i - q->data.len;
    void *item = h->e[at].item;
    heap_delete_at(h, at);
    settle(q);
    return item;
}

void *readyq_take_low(struct readyq *q)
{
    assert(q);
    void *item;
    if (q->zero.len)
        item = heap_pop(&q->zero);
    else
        item = q->data.len ? q->data.e[--q->data.len].item : NULL;
    settle(q);
    return item;
}

static int cmp_before(const void *a, const void *b)
{
    const struct readyq_entry *x = a, *y = b;
    return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

/*
 * Takes m of the z entries of zero (1 < m < z) spread evenly over their order: the
 * entries at sorted positions floor(i * z / m).  A sorted array is a valid heap, so
 * what is left needs no rebuilding.
 */
static void zero_take_spread(struct readyq_heap *h, size_t m, void **out)
{
    size_t z = h->len;
    qsort(h->e, z, sizeof h->e[0], cmp_before);
    size_t kept = 0, next = 0; /* next: index into the picks */
    for (size_t i = 0; i < z; i++) {
        if (next < m && i == next * z / m) {
            out[next++] = h->e[i].item;
            continue;
        }
        h->e[kept++] = h->e[i];
    }
    h->len = kept;
}

/*
 * What a thief gets: the entries with the least input first, so that the victim keeps
 * the tasks whose data is here.  Among the tasks that need no data, a share of every
 * part of the victim's order (one task: the oldest; half: every other one), so that
 * thief and victim go on working through the workload side by side.  Taking the newest
 * instead runs them long before their siblings, and taking the oldest block leaves the
 * victim far ahead: either way the siblings of a fan-in finish seconds apart and their
 * common child waits.  The data part, when needed, by selection.
 */
size_t readyq_take_tail(struct readyq *q, size_t n, void **out)
{
    assert(q);
    if (!out)
        return 0;
    size_t count = n < q->zero.len ? n : q->zero.len;
    if (count == q->zero.len) {
        for (size_t i = 0; i < count; i++)
            out[i] = q->zero.e[i].item;
        q->zero.len = 0;
    } else if (count == 1) {
        out[0] = heap_pop(&q->zero);
    } else if (count > 1) {
        zero_take_spread(&q->zero, count, out);
    }
    size_t more = n - count < q->data.len ? n - count : q->data.len;
    if (more == q->data.len) {
        for (size_t i = 0; i < more; i++)
            out[count + i] = q->data.e[i].item;
        q->data.len = 0;
    } else if (more) {
        heap_take_first(&q->data, more, out + count);
    }
    settle(q);
    return count + more;
}

int readyq_remove(struct readyq *q, void *item)
{
    assert(q);
    int found = heap_remove(&q->data, item) || heap_remove(&q->zero, item);
    settle(q);
    return found;
}
