/*
 * test_exec_deadline — unit tests for core/runtime/exec_deadline.c, the executor's heap
 * of deadlines, on a bare struct exec with no loop: order, what is due at a given time,
 * removal from the middle, replacement, a long random run checked against a plain
 * array, and when the timerfd is (re)armed.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core/runtime/exec_impl.h"

#define RUNS 64
#define RANDOM_OPS 100000

/* An exec with only what the heap uses; tick_fd -1 makes arming a no-op. */
static void exec_init_bare(struct exec *ex)
{
    memset(ex, 0, sizeof *ex);
    ex->tick_fd = -1;
    ex->armed_ns = ex->armed_for = INT64_MAX;
}

static void exec_fini_bare(struct exec *ex)
{
    free(ex->heap);
}

/* Every entry knows its place, and no parent falls due after its children. */
static void check_heap(const struct exec *ex)
{
    for (size_t i = 0; i < ex->heap_len; i++) {
        assert_int_equal(ex->heap[i]->heap_at, i + 1);
        if (i > 0)
            assert_true(ex->heap[(i - 1) / 2]->due_ns <= ex->heap[i]->due_ns);
    }
}

static void test_empty(void **state)
{
    (void)state;
    struct exec ex;
    exec_init_bare(&ex);
    uint8_t due = DUE_NONE;
    assert_int_equal(deadline_earliest(&ex), INT64_MAX);
    assert_null(deadline_pop_due(&ex, INT64_MAX, &due));
    struct run r = {0};
    deadline_clear(&ex, &r); /* not in the heap: nothing happens */
    assert_int_equal(ex.heap_len, 0);
    exec_fini_bare(&ex);
}

static void test_pops_in_order(void **state)
{
    (void)state;
    struct exec ex;
    exec_init_bare(&ex);
    struct run runs[RUNS];
    memset(runs, 0, sizeof runs);
    /* 37 is prime to RUNS, so this visits every due time once, out of order. */
    for (size_t i = 0; i < RUNS; i++) {
        int64_t at = (int64_t)((i * 37) % RUNS) * 10;
        deadline_set(&ex, &runs[i], at, at % 20 ? DUE_TIMEOUT : DUE_SLEEP_END);
        check_heap(&ex);
    }
    assert_int_equal(ex.heap_len, RUNS);
    assert_int_equal(deadline_earliest(&ex), 0);

    int64_t last = -1;
    for (size_t n = 0; n < RUNS; n++) {
        uint8_t due = DUE_NONE;
        struct run *r = deadline_pop_due(&ex, INT64_MAX, &due);
        assert_non_null(r);
        assert_true(r->due_ns > last);
        last = r->due_ns;
        assert_int_equal(due, r->due_ns % 20 ? DUE_TIMEOUT : DUE_SLEEP_END);
        /* Popped means off the heap: clearing it again is harmless. */
        assert_int_equal(r->heap_at, 0);
        assert_int_equal(r->due, DUE_NONE);
        check_heap(&ex);
    }
    assert_int_equal(ex.heap_len, 0);
    exec_fini_bare(&ex);
}

/* Only what `now` has reached is due; ties fall due together. */
static void test_due_at_now(void **state)
{
    (void)state;
    struct exec ex;
    exec_init_bare(&ex);
    struct run a = {0}, b = {0}, c = {0};
    deadline_set(&ex, &a, 300, DUE_KILL);
    deadline_set(&ex, &b, 100, DUE_SLEEP_END);
    deadline_set(&ex, &c, 100, DUE_TIMEOUT);

    uint8_t due = DUE_NONE;
    assert_null(deadline_pop_due(&ex, 99, &due));
    assert_int_equal(ex.heap_len, 3);
    struct run *first = deadline_pop_due(&ex, 100, &due);
    struct run *second = deadline_pop_due(&ex, 100, &due);
    assert_true((first == &b && second == &c) || (first == &c && second == &b));
    assert_null(deadline_pop_due(&ex, 299, &due));
    assert_int_equal(deadline_earliest(&ex), 300);
    assert_ptr_equal(deadline_pop_due(&ex, 300, &due), &a);
    assert_int_equal(due, DUE_KILL);
    exec_fini_bare(&ex);
}

static void test_clear_from_middle(void **state)
{
    (void)state;
    struct exec ex;
    exec_init_bare(&ex);
    struct run runs[RUNS];
    memset(runs, 0, sizeof runs);
    for (size_t i = 0; i < RUNS; i++)
        deadline_set(&ex, &runs[i], (int64_t)(RUNS - i), DUE_TIMEOUT);
    /* Every third one goes, the earliest among them. */
    for (size_t i = 0; i < RUNS; i += 3) {
        deadline_clear(&ex, &runs[i]);
        assert_int_equal(runs[i].heap_at, 0);
        assert_int_equal(runs[i].due, DUE_NONE);
        check_heap(&ex);
    }
    size_t left = RUNS - (RUNS + 2) / 3;
    assert_int_equal(ex.heap_len, left);
    int64_t last = 0;
    uint8_t due;
    for (struct run *r; (r = deadline_pop_due(&ex, INT64_MAX, &due));) {
        assert_true(r->due_ns > last);
        assert_true((size_t)(r - runs) % 3 != 0);
        last = r->due_ns;
        left--;
    }
    assert_int_equal(left, 0);
    exec_fini_bare(&ex);
}

/* A new deadline replaces the old one: a run is never in the heap twice. */
static void test_set_replaces(void **state)
{
    (void)state;
    struct exec ex;
    exec_init_bare(&ex);
    struct run a = {0}, b = {0};
    deadline_set(&ex, &a, 100, DUE_TIMEOUT);
    deadline_set(&ex, &b, 200, DUE_TIMEOUT);
    deadline_set(&ex, &a, 300, DUE_KILL);
    assert_int_equal(ex.heap_len, 2);
    check_heap(&ex);
    uint8_t due;
    assert_ptr_equal(deadline_pop_due(&ex, INT64_MAX, &due), &b);
    assert_ptr_equal(deadline_pop_due(&ex, INT64_MAX, &due), &a);
    assert_int_equal(due, DUE_KILL);
    assert_null(deadline_pop_due(&ex, INT64_MAX, &due));
    exec_fini_bare(&ex);
}

/* Random sets, clears and pops against a plain array of what each run's deadline is. */
static void test_random_against_model(void **state)
{
    (void)state;
    struct exec ex;
    exec_init_bare(&ex);
    struct run runs[RUNS];
    memset(runs, 0, sizeof runs);
    int64_t model[RUNS]; /* -1: no deadline */
    for (size_t i = 0; i < RUNS; i++)
        model[i] = -1;
    srand(7);
    for (int op = 0; op < RANDOM_OPS; op++) {
        size_t i = (size_t)rand() % RUNS;
        int what = rand() % 4;
        if (what <= 1) {
            int64_t at = rand() % 1000;
            deadline_set(&ex, &runs[i], at, DUE_TIMEOUT);
            model[i] = at;
        } else if (what == 2) {
            deadline_clear(&ex, &runs[i]);
            model[i] = -1;
        } else {
            int64_t now = rand() % 1000;
            int64_t earliest = INT64_MAX;
            for (size_t k = 0; k < RUNS; k++) {
                if (model[k] >= 0 && model[k] < earliest)
                    earliest = model[k];
            }
            assert_int_equal(deadline_earliest(&ex), earliest);
            uint8_t due;
            struct run *r = deadline_pop_due(&ex, now, &due);
            if (earliest > now) {
                assert_null(r);
            } else {
                assert_non_null(r);
                assert_int_equal(model[r - runs], earliest);
                model[r - runs] = -1;
            }
        }
        size_t count = 0;
        for (size_t k = 0; k < RUNS; k++) {
            count += model[k] >= 0;
            assert_int_equal(runs[k].heap_at != 0, model[k] >= 0);
        }
        assert_int_equal(ex.heap_len, count);
        check_heap(&ex);
    }
    exec_fini_bare(&ex);
}

static int64_t timer_value_ns(int fd)
{
    struct itimerspec its;
    assert_int_equal(timerfd_gettime(fd, &its), 0);
    return (int64_t)its.it_value.tv_sec * 1000000000 + its.it_value.tv_nsec;
}

/* The timer is armed for a new deadline only when it is earlier than what it is armed
 * for, and not at all while on_tick runs (it arms once on its way out) or once the exec
 * is destroyed. */
static void test_arming(void **state)
{
    (void)state;
    struct exec ex;
    exec_init_bare(&ex);
    ex.tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    assert_true(ex.tick_fd >= 0);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* An hour ahead: nothing fires while the test runs. */
    int64_t base = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + 3600 * 1000000000LL;

    struct run a = {0}, b = {0}, c = {0}, d = {0};
    deadline_set(&ex, &a, base + 2000, DUE_TIMEOUT);
    assert_int_equal(ex.armed_ns, base + 2000);
    assert_true(timer_value_ns(ex.tick_fd) > 0);
    deadline_set(&ex, &b, base + 3000, DUE_TIMEOUT);
    assert_int_equal(ex.armed_ns, base + 2000);
    deadline_set(&ex, &c, base + 1000, DUE_TIMEOUT);
    assert_int_equal(ex.armed_ns, base + 1000);

    ex.ticking = true;
    deadline_set(&ex, &d, base, DUE_TIMEOUT);
    assert_int_equal(ex.armed_ns, base + 1000);
    ex.ticking = false;
    ex.destroyed = true;
    deadline_clear(&ex, &d);
    deadline_set(&ex, &d, base, DUE_TIMEOUT);
    assert_int_equal(ex.armed_ns, base + 1000);
    ex.destroyed = false;

    deadline_arm(&ex, INT64_MAX);
    assert_int_equal(ex.armed_ns, INT64_MAX);
    assert_int_equal(timer_value_ns(ex.tick_fd), 0);

    /* With a lead the timer fires that much before the deadline it is armed for, and a
     * later deadline within the lead of it does not re-arm it. */
    ex.lead_ns = 700;
    deadline_arm(&ex, base + 1000);
    assert_int_equal(ex.armed_ns, base + 300);
    assert_int_equal(ex.armed_for, base + 1000);
    assert_true(timer_value_ns(ex.tick_fd) > 0);
    deadline_arm_if_earlier(&ex, base + 1200);
    assert_int_equal(ex.armed_for, base + 1000);
    deadline_arm_if_earlier(&ex, base + 900);
    assert_int_equal(ex.armed_ns, base + 200);
    close(ex.tick_fd);
    exec_fini_bare(&ex);
}

/* The lead settles at a low quantile of the wake-up latencies it is told (about a
 * quarter below it), within [0, 50 us]; a wait on the clock covers at most the lead. */
static void test_lead_follows_latency(void **state)
{
    (void)state;
    struct exec ex;
    exec_init_bare(&ex);
    /* Latencies spread evenly over 20..60 us: the 25 % quantile is 30 us. */
    for (int i = 0; i < 20000; i++)
        deadline_woke(&ex, 20000 + (int64_t)(i * 7919 % 40000));
    assert_true(ex.lead_ns > 25000 && ex.lead_ns < 35000);
    for (int i = 0; i < 20000; i++)
        deadline_woke(&ex, 5000000); /* a stalled machine */
    assert_int_equal(ex.lead_ns, 50000);
    for (int i = 0; i < 20000; i++)
        deadline_woke(&ex, 0);
    assert_int_equal(ex.lead_ns, 0);
    /* No lead: nothing is waited for. */
    assert_int_equal(deadline_wait(&ex, 100, 150), 100);
    exec_fini_bare(&ex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_pops_in_order),
        cmocka_unit_test(test_due_at_now),
        cmocka_unit_test(test_clear_from_middle),
        cmocka_unit_test(test_set_replaces),
        cmocka_unit_test(test_random_against_model),
        cmocka_unit_test(test_arming),
        cmocka_unit_test(test_lead_follows_latency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
