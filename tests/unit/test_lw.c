/*
 * test_lw — unit tests for core/policy/lw.c, the leader/workers baseline of paper 001
 * §4: who forwards to the leader, what the distribution thread costs the leader, how
 * many tasks a starving worker asks for, and which held requests the leader answers
 * with how many tasks, with cases worked by hand.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>

#include "core/policy/lw.h"

static void test_forwarding(void **state)
{
    (void)state;
    /* Node 0 leads; every other node sends its movable ready tasks there. */
    assert_int_equal(LW_LEADER, 0);
    assert_false(lw_forwards(0, 8));
    for (uint32_t i = 1; i < 8; i++)
        assert_true(lw_forwards(i, 8));
    /* Alone, a node is its own leader and keeps its tasks. */
    assert_false(lw_forwards(0, 1));
}

static void test_leader_capacity(void **state)
{
    (void)state;
    /* A core goes to the distribution thread: one slot fewer, same speed. */
    struct lw_capacity c = lw_leader_capacity(2, 1.0);
    assert_int_equal(c.slots, 1);
    assert_true(c.speed == 1.0);
    c = lw_leader_capacity(24, 0.5);
    assert_int_equal(c.slots, 23);
    assert_true(c.speed == 0.5);
    /* One slot cannot go (pinned tasks must run): the core is shared, half each. */
    c = lw_leader_capacity(1, 0.5);
    assert_int_equal(c.slots, 1);
    assert_true(c.speed == 0.25);
    c = lw_leader_capacity(0, 1.0);
    assert_int_equal(c.slots, 1);
    assert_true(c.speed == 0.5);
}

static void test_want(void **state)
{
    (void)state;
    struct steal_params p;
    steal_params_default(&p);
    /* single (the preset): one task per idle slot, in one request. */
    p.amount = STEAL_AMOUNT_SINGLE;
    assert_int_equal(lw_want(&p, 1), 1);
    assert_int_equal(lw_want(&p, 3), 3);
    /* A worker only asks when a slot is free; never ask for nothing. */
    assert_int_equal(lw_want(&p, 0), 1);
    /* chunk:N: chunked self-scheduling, N whatever the slots. */
    p.amount = STEAL_AMOUNT_CHUNK;
    p.chunk = 5;
    assert_int_equal(lw_want(&p, 1), 5);
    assert_int_equal(lw_want(&p, 8), 5);
    p.chunk = 0;
    assert_int_equal(lw_want(&p, 8), 1);
    /* half has no meaning for a request of the leader's queue: as single. */
    p.amount = STEAL_AMOUNT_HALF;
    assert_int_equal(lw_want(&p, 2), 2);
    assert_int_equal(lw_want(NULL, 2), 2);
}

static void test_enqueue(void **state)
{
    (void)state;
    struct lw_request q[3];
    uint32_t n = 0;
    struct lw_request a = {.node = 4, .req = 1, .want = 2};
    struct lw_request b = {.node = 2, .req = 7, .want = 1};
    struct lw_request c = {.node = 6, .req = 3, .want = 1};
    struct lw_request d = {.node = 5, .req = 1, .want = 1};
    assert_int_equal(lw_enqueue(q, &n, 3, &a), 0);
    assert_int_equal(lw_enqueue(q, &n, 3, &b), 0);
    assert_int_equal(lw_enqueue(q, &n, 3, &c), 0);
    assert_int_equal(n, 3);
    /* Full. */
    assert_int_equal(lw_enqueue(q, &n, 3, &d), -ENOSPC);
    /* A newer request of node 4 replaces its old one and keeps its turn. */
    struct lw_request a2 = {.node = 4, .req = 2, .want = 1};
    assert_int_equal(lw_enqueue(q, &n, 3, &a2), 0);
    assert_int_equal(n, 3);
    assert_int_equal(q[0].node, 4);
    assert_int_equal(q[0].req, 2);
    assert_int_equal(q[0].want, 1);
    /* Asking for nothing is a bug of the caller. */
    struct lw_request z = {.node = 1, .req = 1, .want = 0};
    assert_int_equal(lw_enqueue(q, &n, 3, &z), -EINVAL);
    assert_int_equal(lw_enqueue(NULL, &n, 3, &a), -EINVAL);
}

static void test_serve(void **state)
{
    (void)state;
    /* Held, in arrival order: node 3 wants 2, node 1 wants 1, node 5 wants 2. */
    struct lw_request q[8] = {
        {.node = 3, .req = 10, .want = 2},
        {.node = 1, .req = 4, .want = 1},
        {.node = 5, .req = 9, .want = 2},
    };
    uint32_t n = 3, g[8];

    /* 4 tasks: 2 to node 3, 1 to node 1, the last 1 to node 5 (a partial answer: node
     * 5 asks again if it is still starving).  All three answered. */
    assert_int_equal(lw_serve(4, q, n, g), 3);
    assert_int_equal(g[0], 2);
    assert_int_equal(g[1], 1);
    assert_int_equal(g[2], 1);

    /* 2 tasks: both to node 3, first in line; nodes 1 and 5 keep waiting. */
    assert_int_equal(lw_serve(2, q, n, g), 1);
    assert_int_equal(g[0], 2);
    assert_int_equal(g[1], 0);
    assert_int_equal(g[2], 0);
    lw_dequeue(q, &n, 1);
    assert_int_equal(n, 2);
    assert_int_equal(q[0].node, 1);
    assert_int_equal(q[1].node, 5);

    /* Nothing queued: nobody answered, nobody dropped. */
    assert_int_equal(lw_serve(0, q, n, g), 0);
    lw_dequeue(q, &n, 0);
    assert_int_equal(n, 2);

    /* More than asked for: each gets its want, the rest stays at the leader. */
    assert_int_equal(lw_serve(100, q, n, g), 2);
    assert_int_equal(g[0], 1);
    assert_int_equal(g[1], 2);
    lw_dequeue(q, &n, 2);
    assert_int_equal(n, 0);
    lw_dequeue(q, &n, 5);
    assert_int_equal(n, 0);
    assert_int_equal(lw_serve(3, NULL, 0, g), 0);
}

/* Seven workers of two slots ask at once for their two slots: 9 tasks go 2,2,2,2,1 and
 * the last two workers wait for more. */
static void test_serve_many(void **state)
{
    (void)state;
    struct lw_request q[7];
    uint32_t n = 0, g[7];
    for (uint32_t i = 0; i < 7; i++) {
        struct lw_request r = {.node = i + 1, .req = 1, .want = 2};
        assert_int_equal(lw_enqueue(q, &n, 7, &r), 0);
    }
    uint32_t served = lw_serve(9, q, n, g);
    assert_int_equal(served, 5);
    uint32_t want[7] = {2, 2, 2, 2, 1, 0, 0};
    uint32_t total = 0;
    for (uint32_t i = 0; i < 7; i++) {
        assert_int_equal(g[i], want[i]);
        total += g[i];
    }
    assert_int_equal(total, 9);
    lw_dequeue(q, &n, served);
    assert_int_equal(n, 2);
    assert_int_equal(q[0].node, 6);
    assert_int_equal(q[1].node, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forwarding),
        cmocka_unit_test(test_leader_capacity),
        cmocka_unit_test(test_want),
        cmocka_unit_test(test_enqueue),
        cmocka_unit_test(test_serve),
        cmocka_unit_test(test_serve_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
