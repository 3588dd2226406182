/*
 * readyq — the binary max-heap behind LReadyQ and SReadyQ (see readyq.h).  Ordered by
 * priority (required input bytes), then by insertion sequence, so that equal
 * priorities leave first-in first-out and the order is total: the same pushes always
 * pop the same way, which keeps traces and simulations reproducible.
 *
 * Owns the heap array only.  Called from the node's loop thread (core/runtime/node.c),
 * from the simulator, and from tests/unit/test_readyq.c.
 */
#include "core/runtime/readyq.h"

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
    return a->seq < b->seq;
}

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

void readyq_init(struct readyq *q)
{
    assert(q);
    memset(q, 0, sizeof *q);
}

void readyq_fini(struct readyq *q)
{
    if (!q)
        return;
    free(q->heap);
    memset(q, 0, sizeof *q);
}

/* The item must not be NULL: pop and peek return NULL to mean "empty". */
void readyq_push(struct readyq *q, void *item, uint64_t priority)
{
    assert(q && item);
    q->heap = xgrow(q->heap, &q->cap, q->len + 1, sizeof q->heap[0]);
    q->heap[q->len] = (struct readyq_entry){
        .priority = priority,
        .seq = q->next_seq++,
        .item = item,
    };
    q->len++;
    sift_up(q->heap, q->len - 1);
}

void *readyq_pop(struct readyq *q)
{
    assert(q);
    if (q->len == 0)
        return NULL;
    void *top = q->heap[0].item;
    q->len--;
    if (q->len > 0) {
        q->heap[0] = q->heap[q->len];
        sift_down(q->heap, q->len, 0);
    }
    return top;
}

void *readyq_peek(const struct readyq *q)
{
    assert(q);
    return q->len ? q->heap[0].item : NULL;
}

/*
 * The last array slots are leaves, so cutting them off needs no sifting.  They are
 * not exactly the lowest priorities, only low ones (each is below all its ancestors);
 * a thief gets cheap tasks in O(n) and the victim keeps its heaviest-data tasks.
 */
size_t readyq_take_tail(struct readyq *q, size_t n, void **out)
{
    assert(q);
    if (!out)
        return 0;
    size_t count = n < q->len ? n : q->len;
    for (size_t i = 0; i < count; i++)
        out[i] = q->heap[--q->len].item;
    return count;
}

int readyq_remove(struct readyq *q, void *item)
{
    assert(q);
    for (size_t i = 0; i < q->len; i++) {
        if (q->heap[i].item != item)
            continue;
        q->len--;
        if (i == q->len)
            return 1;
        /* The last entry fills the hole; it may belong above or below it. */
        q->heap[i] = q->heap[q->len];
        if (i > 0 && before(&q->heap[i], &q->heap[(i - 1) / 2]))
            sift_up(q->heap, i);
        else
            sift_down(q->heap, q->len, i);
        return 1;
    }
    return 0;
}
