/*
 * test_parsec — unit tests for core/policy/parsec.c (paper 004 §3): the two starvation
 * tests, the victim amounts half / chunk:N / single, and the waiting-time guard with
 * values worked by hand.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>

#include "core/policy/parsec.h"
#include "core/policy/steal.h"

static void test_starvation(void **state)
{
    (void)state;
    struct parsec_self s = {.ready = 0, .free_slots = 2, .running_successors = 3};
    /* Ready only: nothing ready and a slot free is enough. */
    assert_true(parsec_starving(false, &s));
    /* Ready + successors: a running task's local successor will be ready soon. */
    assert_false(parsec_starving(true, &s));
    s.running_successors = 0;
    assert_true(parsec_starving(true, &s));
    /* Anything ready, or no slot free: not starving under either test. */
    s.ready = 1;
    assert_false(parsec_starving(false, &s));
    assert_false(parsec_starving(true, &s));
    s.ready = 0;
    s.free_slots = 0;
    assert_false(parsec_starving(false, &s));
    assert_false(parsec_starving(true, &s));
    assert_false(parsec_starving(false, NULL));

    /* Through steal_starving, which the runtime calls. */
    struct steal_params p;
    steal_params_default(&p);
    struct steal_self self = {.lready = 0, .sready = 0, .free_slots = 1, .running_successors = 1};
    assert_true(steal_starving(&p, &self));
    p.starvation = STEAL_STARVE_SUCCESSORS;
    assert_false(steal_starving(&p, &self));
    self.running_successors = 0;
    assert_true(steal_starving(&p, &self));
    p.starvation = STEAL_STARVE_PREEMPTIVE;
    self.running_successors = 5;
    assert_true(steal_starving(&p, &self)); /* preemptive starves like ready-only */
    p.mode = STEAL_NONE;
    assert_false(steal_starving(&p, &self));
}

static void test_amounts(void **state)
{
    (void)state;
    /* Half: ceil(n / 2). */
    assert_int_equal(parsec_amount(STEAL_AMOUNT_HALF, 0, 0), 0);
    assert_int_equal(parsec_amount(STEAL_AMOUNT_HALF, 0, 1), 1);
    assert_int_equal(parsec_amount(STEAL_AMOUNT_HALF, 0, 40), 20);
    assert_int_equal(parsec_amount(STEAL_AMOUNT_HALF, 0, 41), 21);
    assert_int_equal(parsec_amount(STEAL_AMOUNT_HALF, 0, UINT32_MAX), 2147483648u);
    /* Chunk: at most N (the paper's 20). */
    assert_int_equal(parsec_amount(STEAL_AMOUNT_CHUNK, 20, 40), 20);
    assert_int_equal(parsec_amount(STEAL_AMOUNT_CHUNK, 20, 7), 7);
    assert_int_equal(parsec_amount(STEAL_AMOUNT_CHUNK, 0, 7), 1);
    /* Single: the chunk of one. */
    assert_int_equal(parsec_amount(STEAL_AMOUNT_SINGLE, 20, 40), 1);
    assert_int_equal(parsec_amount(STEAL_AMOUNT_SINGLE, 20, 0), 0);
    /* A2WS: no bound of the victim's; the thief's request bounds it. */
    assert_int_equal(parsec_amount(STEAL_AMOUNT_A2WS, 20, 40), 40);

    /* steal_amount follows the configured kind. */
    struct steal_params p;
    steal_params_default(&p);
    assert_int_equal(steal_amount(&p, 9), 5);
    p.amount = STEAL_AMOUNT_CHUNK;
    p.chunk = 3;
    assert_int_equal(steal_amount(&p, 9), 3);
    p.amount = STEAL_AMOUNT_SINGLE;
    assert_int_equal(steal_amount(&p, 9), 1);
    p.amount = STEAL_AMOUNT_A2WS;
    assert_int_equal(steal_amount(&p, 9), 9);
}

static void test_wait_guard(void **state)
{
    (void)state;
    /*
     * 40 ready tasks, 8 slots, tasks of 0.1 s on average:
     *   waiting time = (40 / 8 + 1) × 0.1 = 0.6 s.
     * A transfer of 0.5 s is worth it; 0.6 s (not less) and 1 s are not.
     */
    struct parsec_guard g = {.ready = 40, .slots = 8, .avg_task_s = 0.1, .transfer_s = 0.5};
    assert_true(fabs(parsec_waiting_time(&g) - 0.6) < 1e-12);
    assert_true(parsec_guard_allows(&g));
    g.transfer_s = 0.6000001;
    assert_false(parsec_guard_allows(&g));
    g.transfer_s = 1.0;
    assert_false(parsec_guard_allows(&g));
    /*
     * 3 ready, 2 slots, 2 s tasks: (3/2 + 1) × 2 = 5 s (the division is not rounded).
     */
    g = (struct parsec_guard){.ready = 3, .slots = 2, .avg_task_s = 2, .transfer_s = 4.9};
    assert_true(fabs(parsec_waiting_time(&g) - 5.0) < 1e-12);
    assert_true(parsec_guard_allows(&g));
    /* An empty queue still waits one task: (0 + 1) × 2 = 2 s. */
    g.ready = 0;
    assert_true(fabs(parsec_waiting_time(&g) - 2.0) < 1e-12);
    assert_false(parsec_guard_allows(&g));
    /* No finished task yet: no estimate, and the guard does not refuse. */
    g.avg_task_s = 0;
    g.transfer_s = 1e9;
    assert_true(parsec_waiting_time(&g) == 0);
    assert_true(parsec_guard_allows(&g));
    /* Slots 0 is one slot. */
    g = (struct parsec_guard){.ready = 4, .slots = 0, .avg_task_s = 1, .transfer_s = 0};
    assert_true(fabs(parsec_waiting_time(&g) - 5.0) < 1e-12);
    assert_true(parsec_guard_allows(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_starvation),
        cmocka_unit_test(test_amounts),
        cmocka_unit_test(test_wait_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
