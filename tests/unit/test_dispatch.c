/*
 * test_dispatch — unit tests for core/policy/dispatch.c, the dispatcher's choice that
 * the daemons (node_task.c) and both simulator engines (sim_queue.c) read their queues
 * through: what a free slot takes, what the fetch window takes, the scan's reach, wide
 * tasks, and the MATRIX window, on real readyqs.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "core/policy/dispatch.h"

/* Items are addresses in this array, an item's index its identity; per index what the
 * caller knows of the task.  A task has inputs when its priority (input bytes) is not
 * 0, as in the simulator. */
#define TASKS 200
static char tokens[TASKS];
static uint64_t missing[TASKS];
static uint32_t cores[TASKS];
static unsigned missing_calls; /* how many tasks the store was asked about */

static size_t idx(const void *item)
{
    return (size_t)((const char *)item - tokens);
}

static bool t_inputs(void *ctx, const struct readyq_entry *e)
{
    (void)ctx;
    return e->priority > 0;
}

static uint32_t t_cores(void *ctx, const struct readyq_entry *e)
{
    (void)ctx;
    return cores[idx(e->item)];
}

static uint64_t t_missing(void *ctx, const struct readyq_entry *e)
{
    (void)ctx;
    missing_calls++;
    return missing[idx(e->item)];
}

static const struct dispatch_tasks tasks = {
    .inputs = t_inputs, .cores = t_cores, .missing = t_missing,
};

/* Queues task i: its order is i.  Pushed by falling priority, or by rising order among
 * equal ones, the heap's array is the push order: position k is the k-th pushed. */
static void add(struct readyq *q, size_t i, uint64_t prio, uint64_t miss, uint32_t ncores)
{
    assert_true(i < TASKS);
    missing[i] = miss;
    cores[i] = ncores;
    readyq_push_ordered(q, &tokens[i], prio, i);
}

/* What dispatch_next takes, checked: its kind and its task (-1: none). */
static void expect(const struct dispatch_slots *sl, struct readyq *const *qs, unsigned nq,
                   enum dispatch_kind kind, int task)
{
    enum dispatch_kind got;
    void *item = dispatch_next(sl, qs, nq, &tasks, &got);
    assert_int_equal(got, kind);
    if (task < 0)
        assert_null(item);
    else
        assert_int_equal(idx(item), task);
}

/* 4 slots, the window as big. */
static struct dispatch_slots slots4(uint32_t busy, uint32_t staged, uint32_t staging)
{
    return (struct dispatch_slots){.slots = 4, .busy = busy, .staged = staged,
                                   .staging = staging, .window = 4};
}

/* A free slot runs the first task near the head whose inputs are here, passing the head
 * and a cheaper fetch; with none here in LReadyQ, one of SReadyQ's; with SReadyQ not
 * behind it (nq 1), the window fetches instead, the cheapest, the older of equals. */
static void test_free_slot_takes_one_that_is_here(void **state)
{
    (void)state;
    struct readyq l, r;
    readyq_init(&l);
    readyq_init(&r);
    struct readyq *const qs[2] = {&l, &r};
    add(&l, 0, 100, 100, 1);
    add(&l, 1, 90, 10, 1);
    add(&l, 2, 80, 0, 1);
    add(&l, 3, 70, 0, 1);
    struct dispatch_slots sl = slots4(3, 0, 0);
    missing_calls = 0;
    expect(&sl, qs, 2, DISPATCH_RUN, 2);
    /* The scan stopped at the one found: three asked, not four. */
    assert_int_equal(missing_calls, 3);
    assert_int_equal(readyq_len(&l), 3);

    missing[3] = 10;
    add(&r, 20, 50, 50, 1);
    add(&r, 21, 40, 0, 1);
    expect(&sl, qs, 2, DISPATCH_RUN, 21);
    /* Tasks 1 and 3 both miss 10 bytes: the window takes the older, 1. */
    expect(&sl, qs, 1, DISPATCH_STAGE, 1);
    assert_int_equal(readyq_len(&r), 1);
    readyq_fini(&l);
    readyq_fini(&r);
}

/* Every slot busy: the window takes the task missing the fewest bytes but some; only
 * when nothing near the head needs a fetch, one that is here (it waits for a slot). */
static void test_window_takes_cheapest_fetch(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    struct readyq *const qs[1] = {&q};
    add(&q, 0, 100, 0, 1);
    add(&q, 1, 90, 30, 1);
    add(&q, 2, 80, 20, 1);
    add(&q, 3, 70, 0, 1);
    struct dispatch_slots full = slots4(4, 0, 0);
    expect(&full, qs, 1, DISPATCH_STAGE, 2);
    missing[1] = 0;
    expect(&full, qs, 1, DISPATCH_STAGE, 0);
    /* The window is full: `window` fetching, or slots + window out of the queues. */
    struct dispatch_slots fetching = slots4(4, 0, 4);
    expect(&fetching, qs, 1, DISPATCH_NONE, -1);
    struct dispatch_slots promised = slots4(2, 2, 3);
    expect(&promised, qs, 1, DISPATCH_STAGE, 1);
    promised.staging = 4;
    expect(&promised, qs, 1, DISPATCH_NONE, -1);
    assert_int_equal(readyq_len(&q), 1);
    readyq_fini(&q);
}

/* "Near the head" is the first DISPATCH_SCAN entries that need data: a task past them
 * is not seen, and tasks without inputs are never offered by the scan. */
static void test_scan_reach(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    struct readyq *const qs[1] = {&q};
    for (size_t i = 0; i < DISPATCH_SCAN; i++)
        add(&q, i, 1000 - i, 50, 1);
    add(&q, DISPATCH_SCAN, 1000 - DISPATCH_SCAN, 0, 1); /* here, but the 64th */
    /* A free slot, the window full, the head needs data, nothing without inputs. */
    struct dispatch_slots sl = slots4(3, 0, 4);
    expect(&sl, qs, 1, DISPATCH_NONE, -1);
    /* With tasks that need no data queued, the slot takes the oldest of them. */
    add(&q, 150, 0, 0, 1);
    add(&q, 120, 0, 0, 1);
    expect(&sl, qs, 1, DISPATCH_RUN, 120);
    missing[DISPATCH_SCAN - 1] = 0; /* the 63rd: within reach */
    expect(&sl, qs, 1, DISPATCH_RUN, DISPATCH_SCAN - 1);
    readyq_fini(&q);
}

/* A head without inputs waits for a free slot, however free the window; with slots
 * free it runs. */
static void test_head_without_inputs(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    struct readyq *const qs[1] = {&q};
    add(&q, 0, 0, 0, 1);
    add(&q, 1, 0, 0, 1);
    struct dispatch_slots full = slots4(4, 0, 0);
    expect(&full, qs, 1, DISPATCH_NONE, -1);
    /* Slots promised to staged tasks are not free. */
    struct dispatch_slots promised = slots4(2, 2, 0);
    expect(&promised, qs, 1, DISPATCH_NONE, -1);
    struct dispatch_slots one = slots4(3, 0, 0);
    expect(&one, qs, 1, DISPATCH_RUN, 0);
    readyq_fini(&q);
}

/* A slot free beside a full window, the head needing data: the oldest task without
 * inputs runs; when none is queued, nothing. */
static void test_slot_beside_full_window(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    struct readyq *const qs[1] = {&q};
    add(&q, 0, 100, 100, 1);
    add(&q, 1, 90, 90, 1);
    add(&q, 7, 0, 0, 1);
    add(&q, 3, 0, 0, 1);
    struct dispatch_slots sl = slots4(2, 0, 4);
    expect(&sl, qs, 1, DISPATCH_RUN, 3);
    expect(&sl, qs, 1, DISPATCH_RUN, 7);
    expect(&sl, qs, 1, DISPATCH_NONE, -1);
    assert_int_equal(readyq_len(&q), 2);
    readyq_fini(&q);
}

/* Wide tasks keep their place: a narrow one is never scanned past a wide head, a wide
 * task near the head is not offered to a free slot, a wide head without inputs waits
 * for its cores, and one wider than the node runs on it idle. */
static void test_wide_tasks(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    struct readyq *const qs[1] = {&q};
    add(&q, 0, 100, 100, 2);
    add(&q, 1, 90, 0, 1);
    /* One slot free: the wide head does not fit; the window full, nothing moves. */
    struct dispatch_slots one = slots4(3, 0, 4);
    expect(&one, qs, 1, DISPATCH_NONE, -1);
    /* With room in the window, it stages whole. */
    one.staging = 0;
    expect(&one, qs, 1, DISPATCH_STAGE, 0);
    readyq_fini(&q);

    readyq_init(&q);
    add(&q, 0, 100, 100, 1);
    add(&q, 1, 90, 0, 2);
    add(&q, 2, 80, 0, 1);
    struct dispatch_slots two = slots4(2, 0, 0);
    expect(&two, qs, 1, DISPATCH_RUN, 2);
    readyq_fini(&q);

    readyq_init(&q);
    add(&q, 0, 0, 0, 3);
    add(&q, 1, 0, 0, 1);
    expect(&two, qs, 1, DISPATCH_NONE, -1);
    struct dispatch_slots idle = {.slots = 2, .window = 2};
    expect(&idle, qs, 1, DISPATCH_RUN, 0);
    readyq_fini(&q);
}

/* Window 0, MATRIX's executor: a task fetches only once it has a slot, so at most
 * `slots` tasks are out of the queues, fetching or running. */
static void test_matrix_window(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    struct readyq *const qs[1] = {&q};
    add(&q, 0, 100, 100, 1);
    add(&q, 1, 90, 50, 1);
    struct dispatch_slots sl = {.slots = 4, .busy = 2, .staging = 2, .window = 0};
    expect(&sl, qs, 1, DISPATCH_NONE, -1);
    sl.staging = 1;
    expect(&sl, qs, 1, DISPATCH_STAGE, 1);
    readyq_fini(&q);
}

/* An empty queue 0: nothing, whatever the slots. */
static void test_empty(void **state)
{
    (void)state;
    struct readyq q;
    readyq_init(&q);
    struct readyq *const qs[1] = {&q};
    struct dispatch_slots idle = {.slots = 4, .window = 4};
    expect(&idle, qs, 1, DISPATCH_NONE, -1);
    readyq_fini(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_slot_takes_one_that_is_here),
        cmocka_unit_test(test_window_takes_cheapest_fetch),
        cmocka_unit_test(test_scan_reach),
        cmocka_unit_test(test_head_without_inputs),
        cmocka_unit_test(test_slot_beside_full_window),
        cmocka_unit_test(test_wide_tasks),
        cmocka_unit_test(test_matrix_window),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
