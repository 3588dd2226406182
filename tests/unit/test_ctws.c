/*
 * test_ctws — unit tests for core/policy/ctws.c, the cyclic token-based work stealing
 * baseline (Assis et al. 2019, paper 001 §4): whom the holder robs given a token, how
 * many tasks it asks for, what it writes on the token, and how the token moves on
 * (at once, paced, or resting), with cases worked by hand and one lap of a ring.  Run
 * by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "core/policy/ctws.h"

#define N 4

struct fixture {
    struct ctws_entry e[N];
    struct ctws_token t;
    struct steal_params p;
};

/* A token of N nodes with the given counts and no flags, the ctws preset's half. */
static void setup(struct fixture *f, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3)
{
    ctws_token_init(&f->t, f->e, N);
    f->e[0].count = c0;
    f->e[1].count = c1;
    f->e[2].count = c2;
    f->e[3].count = c3;
    steal_params_default(&f->p);
    f->p.victims = STEAL_VICTIMS_TOKEN;
    f->p.info = STEAL_INFO_TOKEN;
}

static struct ctws_self holder(uint32_t self, uint32_t stealable, bool starving)
{
    struct ctws_self s = {.self = self, .stealable = stealable, .starving = starving};
    return s;
}

static void test_ring(void **state)
{
    (void)state;
    assert_int_equal(ctws_next(0, 4), 1);
    assert_int_equal(ctws_next(3, 4), 0);
    assert_int_equal(ctws_next(0, 1), 0);
    assert_int_equal(CTWS_FIRST_HOLDER, 0);
}

static void test_most_loaded(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, 6, 0, 9, 4);
    assert_int_equal(ctws_most_loaded(&f.t, 1), 2);
    /* The holder itself never counts, even when it is the most loaded. */
    assert_int_equal(ctws_most_loaded(&f.t, 2), 0);
    /* Ties go to the lowest id. */
    setup(&f, 5, 0, 5, 5);
    assert_int_equal(ctws_most_loaded(&f.t, 1), 0);
    assert_int_equal(ctws_most_loaded(&f.t, 0), 2);
    /* Nothing anywhere else. */
    setup(&f, 0, 7, 0, 0);
    assert_int_equal(ctws_most_loaded(&f.t, 1), -1);
    assert_int_equal(ctws_most_loaded(NULL, 1), -1);
}

static void test_holder_steals_half(void **state)
{
    (void)state;
    struct fixture f;
    /* Token: node 0 has 6, node 2 has 9, node 3 has 4.  Node 1 holds it, starving. */
    setup(&f, 6, 3, 9, 4);
    struct ctws_self s = holder(1, 0, true);
    struct ctws_decision d = ctws_visit(&f.t, &f.p, &s);
    /* The most loaded is node 2; half of 9 rounded up is 5. */
    assert_true(d.steal);
    assert_int_equal(d.victim, 2);
    assert_int_equal(d.amount, 5);
    /* Node 2 is expected to keep 4; node 1 wrote what it really has (0, not its stale
     * 3), and not the 5 still on the wire; it is hungry. */
    assert_int_equal(f.e[2].count, 4);
    assert_int_equal(f.e[1].count, 0);
    assert_int_equal(f.e[1].flags, CTWS_HUNGRY);
    assert_int_equal(f.e[0].count, 6);
    assert_int_equal(f.t.quiet, 0);
    /* A hungry node waits for the token: it moves on at once. */
    assert_int_equal(d.pass, CTWS_PASS_NOW);

    /* Node 2 holds it next, busy with its own 4: it writes them and steals nothing. */
    s = holder(2, 4, false);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_false(d.steal);
    assert_int_equal(f.e[2].count, 4);
    assert_int_equal(f.t.quiet, 1);
    assert_int_equal(d.pass, CTWS_PASS_NOW); /* node 1 is still marked hungry */

    /* Node 3, starving: node 0 (6) is now ahead of node 2 (4), and gives half of 6. */
    s = holder(3, 0, true);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_true(d.steal);
    assert_int_equal(d.victim, 0);
    assert_int_equal(d.amount, 3);
    assert_int_equal(f.e[0].count, 3);
    assert_int_equal(f.e[3].count, 0);
}

static void test_amount_part(void **state)
{
    (void)state;
    struct fixture f;
    struct ctws_self s = holder(0, 0, true);
    /* A victim with one task gives it (half rounds up). */
    setup(&f, 0, 1, 0, 0);
    struct ctws_decision d = ctws_visit(&f.t, &f.p, &s);
    assert_true(d.steal);
    assert_int_equal(d.victim, 1);
    assert_int_equal(d.amount, 1);
    assert_int_equal(f.e[1].count, 0);
    /* --amount chunk:N and single bound it as for any thief. */
    setup(&f, 0, 10, 0, 0);
    f.p.amount = STEAL_AMOUNT_CHUNK;
    f.p.chunk = 3;
    d = ctws_visit(&f.t, &f.p, &s);
    assert_int_equal(d.amount, 3);
    assert_int_equal(f.e[1].count, 7);
    setup(&f, 0, 10, 0, 0);
    f.p.amount = STEAL_AMOUNT_SINGLE;
    d = ctws_visit(&f.t, &f.p, &s);
    assert_int_equal(d.amount, 1);
}

static void test_no_steal(void **state)
{
    (void)state;
    struct fixture f;
    struct ctws_decision d;
    struct ctws_self s;

    /* Busy: whatever the others have, a holder with work passes without stealing, at
     * the paced rate when nobody is hungry. */
    setup(&f, 0, 0, 30, 0);
    s = holder(0, 2, false);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_false(d.steal);
    assert_int_equal(f.e[0].count, 2);
    assert_int_equal(f.e[0].flags, 0);
    assert_int_equal(d.pass, CTWS_PASS_PACED);

    /* Starving, but its last steal is still unanswered: no second one. */
    setup(&f, 0, 0, 30, 0);
    s = holder(1, 0, true);
    s.in_flight = true;
    d = ctws_visit(&f.t, &f.p, &s);
    assert_false(d.steal);
    assert_int_equal(f.e[2].count, 30);
    assert_int_equal(f.e[1].flags, CTWS_HUNGRY);
    assert_int_equal(d.pass, CTWS_PASS_NOW);

    /* A holder that is no longer starving clears its own flag. */
    f.e[1].flags = CTWS_HUNGRY;
    s = holder(1, 5, false);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_int_equal(f.e[1].flags, 0);
    assert_int_equal(d.pass, CTWS_PASS_PACED);
}

static void test_rest_and_quiet(void **state)
{
    (void)state;
    struct fixture f;
    struct ctws_decision d;
    struct ctws_self s;

    /* Nothing stealable anywhere, hungry or not: the token rests here. */
    setup(&f, 0, 0, 0, 0);
    f.e[3].flags = CTWS_HUNGRY;
    s = holder(2, 0, true);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_false(d.steal);
    assert_int_equal(d.pass, CTWS_REST);
    /* Woken there by news of work, it moves on to find it. */
    s.woken = true;
    d = ctws_visit(&f.t, &f.p, &s);
    assert_int_equal(d.pass, CTWS_PASS_PACED);
    /* The holder's own work is on the token too: no rest. */
    s = holder(2, 1, false);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_int_equal(d.pass, CTWS_PASS_NOW); /* node 3 is hungry */

    /* A whole lap without a theft while a node stays hungry: the token slows down. */
    setup(&f, 0, 4, 0, 0);
    f.e[3].flags = CTWS_HUNGRY;
    f.t.quiet = N - 2;
    s = holder(1, 4, false);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_int_equal(f.t.quiet, N - 1);
    assert_int_equal(d.pass, CTWS_PASS_NOW);
    s = holder(2, 0, false);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_int_equal(f.t.quiet, N);
    assert_int_equal(d.pass, CTWS_PASS_PACED);
}

/* One start-up lap on 4 nodes: node 0 got all 40 tasks, the others are starving.  With
 * the grants arriving before the next lap, the second lap clears the hungry flags. */
static void test_lap(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, 0, 0, 0, 0);
    uint32_t have[N] = {40, 0, 0, 0};
    struct ctws_decision d;
    struct ctws_self s;

    s = holder(0, have[0], false);
    d = ctws_visit(&f.t, &f.p, &s);
    assert_false(d.steal);
    assert_int_equal(d.pass, CTWS_PASS_PACED);
    uint32_t expect_amount[N] = {0, 20, 10, 5};
    for (uint32_t i = 1; i < N; i++) {
        s = holder(i, have[i], true);
        d = ctws_visit(&f.t, &f.p, &s);
        assert_true(d.steal);
        assert_int_equal(d.victim, 0);
        assert_int_equal(d.amount, expect_amount[i]);
        assert_int_equal(d.pass, CTWS_PASS_NOW);
        have[0] -= d.amount; /* the grant: asynchronous, but here before the next lap */
        have[i] += d.amount;
    }
    assert_int_equal(f.e[0].count, 5);
    assert_int_equal(have[0], 5);

    /* Second lap: every node writes what it has, nobody starves, the flags clear. */
    for (uint32_t i = 0; i < N; i++) {
        s = holder(i, have[i], false);
        d = ctws_visit(&f.t, &f.p, &s);
        assert_false(d.steal);
        assert_int_equal(f.e[i].count, have[i]);
        assert_int_equal(f.e[i].flags, 0);
    }
    assert_int_equal(d.pass, CTWS_PASS_PACED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_most_loaded),
        cmocka_unit_test(test_holder_steals_half),
        cmocka_unit_test(test_amount_part),
        cmocka_unit_test(test_no_steal),
        cmocka_unit_test(test_rest_and_quiet),
        cmocka_unit_test(test_lap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
