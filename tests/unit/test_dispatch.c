/*
 * test_dispatch — unit tests for core/policy/dispatch.c, the dispatcher's choice that
 * the daemons (node_task.c) and both simulator engines (sim_queue.c) read their queues
 * through: what a free slot takes, what the fetch window takes, the scan's reach, wide
 * tasks, and the MATRIX window.  The queues here are plain arrays: position 0 is the
 * head, the order among equals is each entry's `order`.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "core/policy/dispatch.h"

struct fake_task {
    uint64_t prio;          /* input bytes */
    uint64_t missing;
    uint32_t cores;
    uint32_t order;
};

#define FAKE_MAX 200

struct fake_queue {
    struct fake_task t[FAKE_MAX];
    size_t n;
};

struct fake {
    struct fake_queue q[2];
    unsigned missing_calls; /* how many tasks the store was asked about */
};

static const struct fake_task *at(void *ctx, unsigned q, size_t i)
{
    struct fake *f = ctx;
    assert_true(q < 2);
    const struct fake_queue *fq = &f->q[q & 1u];
    assert_true(i < fq->n);
    return &fq->t[i];
}

static size_t f_scan_len(void *ctx, unsigned q)
{
    return ((struct fake *)ctx)->q[q & 1u].n;
}

static uint64_t f_priority(void *ctx, unsigned q, size_t i)
{
    return at(ctx, q, i)->prio;
}

static bool f_inputs(void *ctx, unsigned q, size_t i)
{
    return at(ctx, q, i)->prio > 0;
}

static uint32_t f_cores(void *ctx, unsigned q, size_t i)
{
    return at(ctx, q, i)->cores;
}

static uint64_t f_missing(void *ctx, unsigned q, size_t i)
{
    ((struct fake *)ctx)->missing_calls++;
    return at(ctx, q, i)->missing;
}

static bool f_before(void *ctx, unsigned q, size_t i, size_t j)
{
    return at(ctx, q, i)->order < at(ctx, q, j)->order;
}

/* The oldest of priority 0, else the last. */
static size_t f_low(void *ctx, unsigned q)
{
    const struct fake_queue *fq = &((struct fake *)ctx)->q[q & 1u];
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < fq->n; i++)
        if (fq->t[i].prio == 0 && (best == SIZE_MAX || fq->t[i].order < fq->t[best].order))
            best = i;
    return best != SIZE_MAX ? best : fq->n - 1;
}

static struct dispatch_view view_of(struct fake *f, unsigned nq)
{
    return (struct dispatch_view){
        .ctx = f, .nq = nq, .scan_len = f_scan_len, .priority = f_priority,
        .inputs = f_inputs, .cores = f_cores, .missing = f_missing, .before = f_before,
        .low = f_low,
    };
}

/* Appends a task; its order is its position unless set after. */
static struct fake_task *add(struct fake *f, unsigned q, uint64_t prio, uint64_t missing,
                             uint32_t cores)
{
    struct fake_queue *fq = &f->q[q];
    assert_true(fq->n < FAKE_MAX);
    fq->t[fq->n] = (struct fake_task){prio, missing, cores, (uint32_t)fq->n};
    return &fq->t[fq->n++];
}

static void assert_pick(struct dispatch_pick p, enum dispatch_kind kind, unsigned q, size_t i)
{
    assert_int_equal(p.kind, kind);
    if (kind != DISPATCH_NONE) {
        assert_int_equal(p.q, q);
        assert_int_equal(p.i, i);
    }
}

/* 4 slots, the window as big. */
static struct dispatch_slots slots4(uint32_t busy, uint32_t staged, uint32_t staging)
{
    return (struct dispatch_slots){.slots = 4, .busy = busy, .staged = staged,
                                   .staging = staging, .window = 4};
}

/* A free slot runs the first task near the head whose inputs are here, passing the head
 * and a cheaper fetch; with none here in LReadyQ, one of SReadyQ's; with SReadyQ not
 * behind it (nq 1), the window fetches instead. */
static void test_free_slot_takes_one_that_is_here(void **state)
{
    (void)state;
    struct fake f = {0};
    add(&f, 0, 100, 100, 1);
    add(&f, 0, 90, 10, 1);
    add(&f, 0, 80, 0, 1);
    add(&f, 0, 70, 0, 1);
    struct dispatch_view v = view_of(&f, 2);
    struct dispatch_slots sl = slots4(3, 0, 0);
    assert_pick(dispatch_next(&sl, &v), DISPATCH_RUN, 0, 2);
    /* The scan stopped at the one found: three asked, not four. */
    assert_int_equal(f.missing_calls, 3);

    f.q[0].t[2].missing = 5;
    f.q[0].t[3].missing = 5;
    add(&f, 1, 50, 50, 1);
    add(&f, 1, 40, 0, 1);
    assert_pick(dispatch_next(&sl, &v), DISPATCH_RUN, 1, 1);
    v.nq = 1;
    /* The cheapest fetch of queue 0, the earlier in the order of the two at 5 bytes. */
    f.q[0].t[2].order = 9;
    assert_pick(dispatch_next(&sl, &v), DISPATCH_STAGE, 0, 3);
}

/* Every slot busy: the window takes the task missing the fewest bytes but some; only
 * when nothing near the head needs a fetch, one that is here (it waits for a slot). */
static void test_window_takes_cheapest_fetch(void **state)
{
    (void)state;
    struct fake f = {0};
    add(&f, 0, 100, 0, 1);
    add(&f, 0, 90, 30, 1);
    add(&f, 0, 80, 20, 1);
    add(&f, 0, 70, 0, 1);
    struct dispatch_view v = view_of(&f, 1);
    struct dispatch_slots full = slots4(4, 0, 0);
    assert_pick(dispatch_next(&full, &v), DISPATCH_STAGE, 0, 2);
    f.q[0].t[1].missing = 0;
    f.q[0].t[2].missing = 0;
    assert_pick(dispatch_next(&full, &v), DISPATCH_STAGE, 0, 0);
    /* The window is full: `window` fetching, or slots + window out of the queues. */
    struct dispatch_slots fetching = slots4(4, 0, 4);
    assert_pick(dispatch_next(&fetching, &v), DISPATCH_NONE, 0, 0);
    struct dispatch_slots promised = slots4(2, 2, 3);
    assert_pick(dispatch_next(&promised, &v), DISPATCH_STAGE, 0, 0);
    promised.staging = 4;
    assert_pick(dispatch_next(&promised, &v), DISPATCH_NONE, 0, 0);
}

/* "Near the head" is the first DISPATCH_SCAN entries that need data: tasks of priority
 * 0 do not count toward it and are never offered by the scan, and a task past it is not
 * seen. */
static void test_scan_reach(void **state)
{
    (void)state;
    struct fake f = {0};
    for (int i = 0; i < DISPATCH_SCAN; i++)
        add(&f, 0, 100, 50, 1);
    add(&f, 0, 100, 0, 1); /* here, but the 64th */
    struct dispatch_view v = view_of(&f, 1);
    struct dispatch_slots sl = slots4(3, 0, 4);
    /* A free slot, the window full, the head needs data, nothing without inputs. */
    assert_pick(dispatch_next(&sl, &v), DISPATCH_NONE, 0, 0);
    /* Ten entries of priority 0 early in the heap push nothing out of reach. */
    memmove(&f.q[0].t[11], &f.q[0].t[1], (f.q[0].n - 1) * sizeof f.q[0].t[0]);
    for (int i = 1; i <= 10; i++)
        f.q[0].t[i] = (struct fake_task){0, 0, 1, 1000u + (uint32_t)i};
    f.q[0].n += 10;
    /* The deep one is still the 64th that needs data; the slot takes the oldest of the
     * ones without inputs instead. */
    assert_pick(dispatch_next(&sl, &v), DISPATCH_RUN, 0, 1);
    f.q[0].t[f.q[0].n - 2].missing = 0; /* the 63rd: within reach */
    assert_pick(dispatch_next(&sl, &v), DISPATCH_RUN, 0, f.q[0].n - 2);
}

/* A head without inputs waits for a free slot, however free the window; with slots
 * free it runs. */
static void test_head_without_inputs(void **state)
{
    (void)state;
    struct fake f = {0};
    add(&f, 0, 0, 0, 1);
    add(&f, 0, 0, 0, 1);
    struct dispatch_view v = view_of(&f, 1);
    struct dispatch_slots full = slots4(4, 0, 0);
    assert_pick(dispatch_next(&full, &v), DISPATCH_NONE, 0, 0);
    struct dispatch_slots one = slots4(3, 0, 0);
    assert_pick(dispatch_next(&one, &v), DISPATCH_RUN, 0, 0);
    /* Slots promised to staged tasks are not free. */
    struct dispatch_slots promised = slots4(2, 2, 0);
    assert_pick(dispatch_next(&promised, &v), DISPATCH_NONE, 0, 0);
}

/* A slot free beside a full window, the head needing data: the oldest task without
 * inputs runs; when the low end needs data too, nothing. */
static void test_slot_beside_full_window(void **state)
{
    (void)state;
    struct fake f = {0};
    add(&f, 0, 100, 100, 1);
    add(&f, 0, 90, 90, 1);
    add(&f, 0, 0, 0, 1)->order = 7;
    add(&f, 0, 0, 0, 1)->order = 3;
    struct dispatch_view v = view_of(&f, 1);
    struct dispatch_slots sl = slots4(2, 0, 4);
    assert_pick(dispatch_next(&sl, &v), DISPATCH_RUN, 0, 3);
    f.q[0].n = 2;
    assert_pick(dispatch_next(&sl, &v), DISPATCH_NONE, 0, 0);
}

/* Wide tasks keep their place: a narrow one is never scanned past a wide head, a wide
 * task near the head is not offered to a free slot, a wide head without inputs waits
 * for its cores, and one wider than the node runs on it idle. */
static void test_wide_tasks(void **state)
{
    (void)state;
    struct fake f = {0};
    add(&f, 0, 100, 100, 2);
    add(&f, 0, 90, 0, 1);
    struct dispatch_view v = view_of(&f, 1);
    /* One slot free: the wide head does not fit, and the window stages it whole. */
    struct dispatch_slots one = slots4(3, 0, 0);
    assert_pick(dispatch_next(&one, &v), DISPATCH_STAGE, 0, 0);
    one.staging = 4;
    assert_pick(dispatch_next(&one, &v), DISPATCH_NONE, 0, 0);

    struct fake g = {0};
    add(&g, 0, 100, 100, 1);
    add(&g, 0, 90, 0, 2);
    add(&g, 0, 80, 0, 1);
    struct dispatch_view w = view_of(&g, 1);
    struct dispatch_slots two = slots4(2, 0, 0);
    assert_pick(dispatch_next(&two, &w), DISPATCH_RUN, 0, 2);

    struct fake h = {0};
    add(&h, 0, 0, 0, 3);
    add(&h, 0, 0, 0, 1);
    struct dispatch_view x = view_of(&h, 1);
    assert_pick(dispatch_next(&two, &x), DISPATCH_NONE, 0, 0);
    struct dispatch_slots idle = {.slots = 2, .window = 2};
    assert_pick(dispatch_next(&idle, &x), DISPATCH_RUN, 0, 0);
}

/* Window 0, MATRIX's executor: a task fetches only once it has a slot, so at most
 * `slots` tasks are out of the queues, fetching or running. */
static void test_matrix_window(void **state)
{
    (void)state;
    struct fake f = {0};
    add(&f, 0, 100, 100, 1);
    add(&f, 0, 90, 50, 1);
    struct dispatch_view v = view_of(&f, 1);
    struct dispatch_slots sl = {.slots = 4, .busy = 2, .staging = 1, .window = 0};
    assert_pick(dispatch_next(&sl, &v), DISPATCH_STAGE, 0, 1);
    sl.staging = 2;
    assert_pick(dispatch_next(&sl, &v), DISPATCH_NONE, 0, 0);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
