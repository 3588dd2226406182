/*
 * test_readyq — unit tests for core/policy/readyq.c: ordering, stealing from the
 * tail, removal, the positions the dispatcher reads and takes from, and a long random
 * run checked against a plain-array model.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy/readyq.h"

#define RANDOM_OPS 100000

/* Items are addresses in this array, so an item's index is its identity. */
static char tokens[RANDOM_OPS + 64];

static void *token(size_t i)
{
    return &tokens[i];
}

static size_t token_index(const void *item)
{
    return (size_t)((const char *)item - tokens);
}

/* Same order as the queue promises: higher priority first, then lower order, then
 * older first. */
static bool entry_before(const struct readyq_entry *a, const struct readyq_entry *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (a->order != b->order)
        return a->order < b->order;
    return a->seq < b->seq;
}

static void assert_one_heap_valid(const struct readyq_heap *h, bool zero)
{
    assert_true(h->len <= h->cap || (h->len == 0 && h->cap == 0));
    for (size_t i = 0; i < h->len; i++) {
        assert_true(zero ? h->e[i].priority == 0 : h->e[i].priority > 0);
        if (i > 0)
            assert_false(entry_before(&h->e[i], &h->e[(i - 1) / 2]));
    }
}

static void assert_heap_valid(const struct readyq *q)
{
    assert_one_heap_valid(&q->data, false);
    assert_one_heap_valid(&q->zero, true);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1du;
}

/* Queues emptied after a burst give their arrays back, by every way of emptying them,
 * and work on. */
static void test_emptied_big_queue_releases(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    enum { N = 20000 }; /* both heaps past what an emptied one keeps */
    void **out = malloc(N * sizeof *out);
    assert_non_null(out);
    for (int way = 0; way < 3; way++) {
        for (uintptr_t i = 1; i <= N; i++)
            readyq_push(&q, token(i), i % 2 ? 0 : i);
        assert_true(q.zero.cap > 0 && q.data.cap > 0);
        if (way == 0)
            while (readyq_pop(&q))
                ;
        else if (way == 1)
            assert_int_equal(readyq_take_tail(&q, N, out), N);
        else
            while (readyq_take_low(&q))
                ;
        assert_int_equal(readyq_len(&q), 0);
        assert_int_equal(q.zero.cap + q.data.cap, 0);
    }
    readyq_push(&q, token(1), 5);
    assert_ptr_equal(readyq_pop(&q), token(1));
    free(out);
    readyq_fini(&q);
}

static void test_empty(void **state)
{
    (void)state;
    struct readyq q;
    void *out[4];
    readyq_init(&q);
    assert_int_equal(readyq_len(&q), 0);
    assert_null(readyq_pop(&q));
    assert_null(readyq_peek(&q));
    assert_int_equal(readyq_take_tail(&q, 4, out), 0);
    assert_int_equal(readyq_remove(&q, token(0)), 0);
    readyq_fini(&q);
    readyq_fini(&q); /* twice is harmless */
    readyq_fini(NULL);
}

static void test_priority_order(void **state)
{
    (void)state;
    static const uint64_t prio[] = {5, 1, 9, 3, 7, 0, 8, 2, 6, 4};
    struct readyq q;
    readyq_init(&q);
    for (size_t i = 0; i < 10; i++)
        readyq_push(&q, token(prio[i]), prio[i]);
    assert_int_equal(readyq_len(&q), 10);
    assert_ptr_equal(readyq_peek(&q), token(9));
    for (size_t want = 10; want-- > 0;) {
        assert_ptr_equal(readyq_peek(&q), token(want));
        assert_ptr_equal(readyq_pop(&q), token(want));
        assert_heap_valid(&q);
    }
    assert_null(readyq_pop(&q));
    readyq_fini(&q);
}

static void test_fifo_among_equals(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    /* Interleave two priorities; each must come out in push order. */
    for (size_t i = 0; i < 200; i++)
        readyq_push(&q, token(i), i % 2 ? 100 : 50);
    for (size_t i = 1; i < 200; i += 2)
        assert_ptr_equal(readyq_pop(&q), token(i));
    for (size_t i = 0; i < 200; i += 2)
        assert_ptr_equal(readyq_pop(&q), token(i));
    assert_int_equal(readyq_len(&q), 0);

    /* All equal: a plain FIFO, also after the heap has been emptied and refilled. */
    for (size_t i = 0; i < 1000; i++)
        readyq_push(&q, token(i), 7);
    for (size_t i = 0; i < 1000; i++)
        assert_ptr_equal(readyq_pop(&q), token(i));
    readyq_fini(&q);
}

/* What a thief must get from n items pushed with priority (i * 37) % 11: the lowest
 * priorities, and among equals the oldest. */
static void test_take_tail(void **state)
{
    (void)state;
    struct readyq q;
    void *out[64];
    bool taken[64] = {false};
    readyq_init(&q);
    for (size_t i = 0; i < 64; i++)
        readyq_push(&q, token(i), (i * 37) % 11);

    /* Priority 0: i = 0, 11, 22, 33, 44, 55; priority 1: i = 3, 14, 25, 36, 47, 58
     * ((3 * 37) % 11 = 1).  Ten items: all six 0s and the four oldest 1s. */
    static const size_t expect[] = {0, 11, 22, 33, 44, 55, 3, 14, 25, 36};
    assert_int_equal(readyq_take_tail(&q, 10, out), 10);
    assert_int_equal(readyq_len(&q), 54);
    for (size_t i = 0; i < 10; i++) {
        assert_false(taken[token_index(out[i])]);
        taken[token_index(out[i])] = true;
    }
    for (size_t i = 0; i < 10; i++)
        assert_true(taken[expect[i]]);
    assert_heap_valid(&q);

    /* What is left pops in sorted order and is exactly what was not taken. */
    uint64_t last_prio = UINT64_MAX;
    size_t last_index = 0;
    size_t popped = 0;
    void *item;
    while ((item = readyq_pop(&q)) != NULL) {
        size_t i = token_index(item);
        uint64_t prio = (i * 37) % 11;
        assert_false(taken[i]);
        taken[i] = true;
        assert_true(prio <= last_prio);
        if (prio == last_prio)
            assert_true(i > last_index);
        last_prio = prio;
        last_index = i;
        popped++;
    }
    assert_int_equal(popped, 54);
    for (size_t i = 0; i < 64; i++)
        assert_true(taken[i]);

    /* Asking for more than there is takes everything. */
    for (size_t i = 0; i < 5; i++)
        readyq_push(&q, token(i), i);
    assert_int_equal(readyq_take_tail(&q, 100, out), 5);
    assert_int_equal(readyq_len(&q), 0);
    assert_int_equal(readyq_take_tail(&q, 0, out), 0);
    readyq_fini(&q);
}

/* The caller's order decides among equal priorities, whatever the push order: a batch
 * pushed newest first (as a thief receives one) still pops oldest first, and a thief
 * asking for half gets the oldest half. */
static void test_order(void **state)
{
    (void)state;
    struct readyq q;
    void *out[100];
    readyq_init(&q);
    for (size_t i = 100; i-- > 0;)
        readyq_push_ordered(&q, token(i), 0, i);
    readyq_push_ordered(&q, token(100), 5, 1000); /* more input: first, whatever its order */
    assert_ptr_equal(readyq_pop(&q), token(100));
    /* Half: every other one from the oldest on, so thief and victim move through the
     * order side by side; one: the oldest. */
    assert_int_equal(readyq_take_tail(&q, 50, out), 50);
    bool got[100] = {false};
    for (size_t i = 0; i < 50; i++)
        got[token_index(out[i])] = true;
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(got[i], i % 2 == 0);
    assert_heap_valid(&q);
    assert_int_equal(readyq_take_tail(&q, 1, out), 1);
    assert_ptr_equal(out[0], token(1));
    for (size_t i = 3; i < 100; i += 2)
        assert_ptr_equal(readyq_pop(&q), token(i));
    assert_null(readyq_pop(&q));

    /* Equal orders fall back to push order. */
    for (size_t i = 0; i < 10; i++)
        readyq_push_ordered(&q, token(i), 0, 7);
    for (size_t i = 0; i < 10; i++)
        assert_ptr_equal(readyq_pop(&q), token(i));
    readyq_fini(&q);
}

/* take_low is the dispatcher's pick while the fetch window is full: the oldest task
 * that needs no data, whatever else is queued. */
static void test_take_low(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    assert_null(readyq_peek_low(&q));
    assert_null(readyq_take_low(&q));
    for (size_t i = 0; i < 30; i++)
        readyq_push_ordered(&q, token(i), i % 3 ? 0 : 100 + i, 30 - i);
    /* Priority 0: i not a multiple of 3; the lowest order is the highest such i. */
    static const size_t expect[] = {29, 28, 26, 25, 23, 22, 20, 19, 17, 16,
                                    14, 13, 11, 10, 8, 7, 5, 4, 2, 1};
    for (size_t k = 0; k < 20; k++) {
        assert_ptr_equal(readyq_peek_low(&q), token(expect[k]));
        assert_ptr_equal(readyq_take_low(&q), token(expect[k]));
        assert_heap_valid(&q);
    }
    /* Only data tasks left: some low one, each exactly once. */
    bool seen[30] = {false};
    for (size_t k = 0; k < 10; k++) {
        void *low = readyq_peek_low(&q);
        assert_non_null(low);
        assert_ptr_equal(readyq_take_low(&q), low);
        assert_int_equal(token_index(low) % 3, 0);
        assert_false(seen[token_index(low)]);
        seen[token_index(low)] = true;
        assert_heap_valid(&q);
    }
    assert_null(readyq_take_low(&q));
    assert_int_equal(readyq_len(&q), 0);
    readyq_fini(&q);
}

static void test_remove(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    for (size_t i = 0; i < 32; i++)
        readyq_push(&q, token(i), i % 8);

    assert_int_equal(readyq_remove(&q, token(31)), 1); /* a top-priority item */
    assert_heap_valid(&q);
    assert_int_equal(readyq_remove(&q, readyq_at(&q, readyq_len(&q) - 1)), 1);
    assert_heap_valid(&q);
    assert_int_equal(readyq_remove(&q, token(12)), 1); /* somewhere in the middle */
    assert_heap_valid(&q);
    assert_int_equal(readyq_remove(&q, token(12)), 0); /* already gone */
    assert_int_equal(readyq_remove(&q, token(40)), 0); /* never there */
    assert_int_equal(readyq_len(&q), 29);

    size_t count = 0;
    uint64_t last = UINT64_MAX;
    void *item;
    while ((item = readyq_pop(&q)) != NULL) {
        size_t i = token_index(item);
        assert_int_not_equal(i, 31);
        assert_int_not_equal(i, 12);
        assert_true(i % 8 <= last);
        last = i % 8;
        count++;
    }
    assert_int_equal(count, 29);
    readyq_fini(&q);
}

/* A remove that moves the last entry up: the hole sits under a smaller parent. */
static void test_remove_sifts_up(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    /* Heap shape: 100 / (50, 90) / (10, 20, 80, 85): removing 20 puts 85 under 50. */
    static const uint64_t prio[] = {100, 50, 90, 10, 20, 80, 85};
    for (size_t i = 0; i < 7; i++)
        readyq_push(&q, token(i), prio[i]);
    assert_int_equal(readyq_remove(&q, token(4)), 1);
    assert_heap_valid(&q);
    static const size_t order[] = {0, 2, 6, 5, 1, 3};
    for (size_t i = 0; i < 6; i++)
        assert_ptr_equal(readyq_pop(&q), token(order[i]));
    readyq_fini(&q);
}

/* The reference: an unsorted array searched linearly. */
struct model_entry {
    uint64_t priority;
    uint64_t order;
    uint64_t seq;
    size_t id;
};

static bool model_before(const struct model_entry *a, const struct model_entry *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (a->order != b->order)
        return a->order < b->order;
    return a->seq < b->seq;
}

static size_t model_best(const struct model_entry *m, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        if (model_before(&m[i], &m[best]))
            best = i;
    }
    return best;
}

/* The entry a thief gets first: the least priority, then the lowest order, then the
 * oldest. */
static size_t model_steal_first(const struct model_entry *m, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        const struct model_entry *a = &m[i], *b = &m[best];
        bool first = a->priority != b->priority ? a->priority < b->priority
                     : a->order != b->order     ? a->order < b->order
                                                : a->seq < b->seq;
        if (first)
            best = i;
    }
    return best;
}

static ptrdiff_t model_find(const struct model_entry *m, size_t n, size_t id)
{
    for (size_t i = 0; i < n; i++) {
        if (m[i].id == id)
            return (ptrdiff_t)i;
    }
    return -1;
}

static int model_cmp_queue(const void *a, const void *b)
{
    const struct model_entry *x = a, *y = b;
    return model_before(x, y) ? -1 : model_before(y, x) ? 1 : 0;
}

/*
 * The thief's due, from the model: priority-0 entries first — all of them, the oldest
 * alone, or those at queue positions floor(i * z / m) — then the data entries with the
 * least priority and lowest order.  Checks that exactly those were handed out (hit)
 * and removes them from the model.
 */
static void check_thief_share(struct model_entry *model, size_t *n, size_t want,
                              const bool *hit)
{
    size_t z = 0;
    for (size_t i = 0; i < *n; i++) {
        if (model[i].priority == 0) {
            struct model_entry t = model[z];
            model[z++] = model[i];
            model[i] = t;
        }
    }
    qsort(model, z, sizeof *model, model_cmp_queue);
    size_t m = want < z ? want : z;
    size_t kept = 0, next = 0;
    for (size_t i = 0; i < z; i++) {
        bool due = m == z || (m == 1 ? i == 0 : next < m && i == next * z / m);
        if (due) {
            next++;
            assert_true(hit[model[i].id]);
        } else {
            assert_false(hit[model[i].id]);
            model[kept++] = model[i];
        }
    }
    size_t rest = *n - z; /* data entries at model[z..n) */
    memmove(model + kept, model + z, rest * sizeof *model);
    *n = kept + rest;
    for (size_t k = m; k < want && *n > kept; k++) {
        size_t first = kept + model_steal_first(model + kept, *n - kept);
        assert_true(hit[model[first].id]);
        model[first] = model[--*n];
    }
}

static void test_random_against_model(void **state)
{
    (void)state;
    struct readyq q;
    struct model_entry *model = calloc(RANDOM_OPS, sizeof *model);
    void **out = calloc(RANDOM_OPS, sizeof *out);
    size_t n = 0, pushed = 0;
    uint64_t seq = 0;

    assert_non_null(model);
    assert_non_null(out);
    readyq_init(&q);
    for (size_t op = 0; op < RANDOM_OPS; op++) {
        /* Alternate growing and draining phases so the heap gets deep, then empty. */
        bool growing = (op / 5000) % 2 == 0;
        unsigned r = (unsigned)(rnd() % 100);
        unsigned push_share = growing ? 60 : 25;

        if (r < push_share) {
            /* Few distinct priorities so that ties (FIFO) are common, plus rare big
             * ones so that the full 64-bit range is compared. */
            uint64_t prio = rnd() % 16 == 0 ? rnd() : rnd() % 8;
            uint64_t order = rnd() % 4 == 0 ? 0 : rnd() % 64;
            readyq_push_ordered(&q, token(pushed), prio, order);
            model[n++] = (struct model_entry){prio, order, seq++, pushed};
            pushed++;
        } else if (r < push_share + 20) {
            void *item = readyq_pop(&q);
            if (n == 0) {
                assert_null(item);
            } else {
                size_t b = model_best(model, n);
                assert_ptr_equal(item, token(model[b].id));
                model[b] = model[--n];
            }
        } else if (r < push_share + 27) {
            /* Mostly small steals, sometimes half the queue (the selection's long
             * partitions). */
            size_t want = rnd() % 8 == 0 ? n / 2 : (size_t)(rnd() % 8);
            size_t got = readyq_take_tail(&q, want, out);
            assert_int_equal(got, want < n ? want : n);
            bool *hit = calloc(pushed + 1, sizeof *hit);
            assert_non_null(hit);
            for (size_t i = 0; i < got; i++) {
                assert_false(hit[token_index(out[i])]); /* not handed out twice */
                hit[token_index(out[i])] = true;
            }
            check_thief_share(model, &n, want, hit);
            free(hit);
        } else if (r < push_share + 37) {
            /* Mostly present items, sometimes ones already gone. */
            size_t id;
            if (n > 0 && rnd() % 3 != 0)
                id = model[rnd() % n].id;
            else
                id = pushed ? (size_t)(rnd() % pushed) : 0;
            ptrdiff_t at = model_find(model, n, id);
            assert_int_equal(readyq_remove(&q, token(id)), at >= 0 ? 1 : 0);
            if (at >= 0)
                model[at] = model[--n];
        } else {
            void *top = readyq_peek(&q);
            if (n == 0)
                assert_null(top);
            else
                assert_ptr_equal(top, token(model[model_best(model, n)].id));
        }
        assert_int_equal(readyq_len(&q), n);
        if (op % 97 == 0)
            assert_heap_valid(&q);
    }
    assert_heap_valid(&q);
    while (n > 0) {
        size_t b = model_best(model, n);
        assert_ptr_equal(readyq_pop(&q), token(model[b].id));
        model[b] = model[--n];
    }
    assert_null(readyq_pop(&q));
    readyq_fini(&q);
    free(model);
    free(out);
}

/*
 * Positions as the dispatcher reads them: the head first, every entry that needs data
 * before those of priority 0, each part in its heap's order; before_at agrees with the
 * pops; low_at is peek_low's; take_at removes exactly its entry and leaves valid heaps.
 */
static void test_positions(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    for (size_t i = 0; i < 30; i++)
        readyq_push_ordered(&q, token(i), i % 3 == 0 ? 0 : 100 + i % 7, i);
    size_t data = readyq_data_len(&q);
    assert_int_equal(data, 20);
    assert_ptr_equal(readyq_entry_at(&q, 0)->item, readyq_peek(&q));
    for (size_t i = 0; i < readyq_len(&q); i++) {
        const struct readyq_entry *e = readyq_entry_at(&q, i);
        assert_true(i < data ? e->priority > 0 : e->priority == 0);
        assert_ptr_equal(e->item, readyq_at(&q, i));
        if (i > 0) {
            assert_false(readyq_before_at(&q, i, 0));
            assert_true(readyq_before_at(&q, 0, i));
        }
    }
    assert_ptr_equal(readyq_entry_at(&q, readyq_low_at(&q))->item, readyq_peek_low(&q));
    /* Out of the middle of either heap; then the rest pops in the queue's order. */
    bool gone[30] = {false};
    size_t picks[] = {5, data + 4, 0, data - 3, readyq_len(&q) - 8};
    for (size_t k = 0; k < sizeof picks / sizeof picks[0]; k++) {
        void *item = readyq_at(&q, picks[k]);
        size_t before = readyq_len(&q);
        assert_ptr_equal(readyq_take_at(&q, picks[k]), item);
        assert_int_equal(readyq_len(&q), before - 1);
        gone[token_index(item)] = true;
        assert_heap_valid(&q);
    }
    void *prev = NULL;
    size_t left = 0;
    for (void *t; (t = readyq_pop(&q)) != NULL; prev = t, left++) {
        assert_false(gone[token_index(t)]);
        if (prev) {
            size_t a = token_index(prev), b = token_index(t);
            uint64_t pa = a % 3 == 0 ? 0 : 100 + a % 7, pb = b % 3 == 0 ? 0 : 100 + b % 7;
            assert_true(pa > pb || (pa == pb && a < b));
        }
    }
    assert_int_equal(left, 25);
    readyq_fini(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_emptied_big_queue_releases),
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_fifo_among_equals),
        cmocka_unit_test(test_take_tail),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_take_low),
        cmocka_unit_test(test_remove),
        cmocka_unit_test(test_remove_sifts_up),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
