/*
 * test_part_heartbeat — the heartbeat part (core/runtime/heartbeat.c) on fake nodes: it
 * beats only to its ring neighbours, only when it had sent them nothing for an interval,
 * a suspected neighbour only once per timeout; and its timer really runs the check.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/net/proto.h"
#include "core/runtime/parts.h"
#include "fake_node.h"

/* Runs the loop until the part's timer fired once (bounded: it is periodic). */
static void fire(struct node *n)
{
    size_t before = fake_msgs(n, MSG_HEARTBEAT);
    for (int i = 0; i < 50 && fake_msgs(n, MSG_HEARTBEAT) == before; i++)
        fake_node_run_once(n, true);
}

static void beats_neighbours_it_had_nothing_for(void **state)
{
    (void)state;
    struct node *n = fake_node_new(2, 6, 2, NULL);
    n->cfg.failure_timeout_ms = 8; /* interval 2 ms */
    fake_node_add(n, &part_heartbeat);
    /* The clock moves past the interval; traffic to node 3 was recent. */
    n->mono += 5 * 1000000;
    n->heard_ms[1] = n->heard_ms[3] = node_now_ms(n);
    n->sent_ms[3] = node_now_ms(n);
    fire(n);
    assert_int_equal(fake_msgs(n, MSG_HEARTBEAT), 1);
    assert_int_equal(fake_msg(n, MSG_HEARTBEAT, 0)->peer, 1);
    /* Nobody else of the six is ever called. */
    for (size_t i = 0; i < fake_msgs(n, 0); i++) {
        uint32_t p = fake_msg(n, 0, i)->peer;
        assert_true(p == 1 || p == 3);
    }
    fake_node_free(n);
}

static void suspected_neighbour_called_once_per_timeout(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 2, 1, NULL);
    n->cfg.failure_timeout_ms = 40; /* interval 10 ms */
    fake_node_add(n, &part_heartbeat);
    /* Node 1 silent for longer than the timeout; we last called it 20 ms ago: due for a
     * live neighbour (interval), not for a suspected one (timeout). */
    n->mono += 100 * 1000000LL;
    n->heard_ms[1] = node_now_ms(n) - 50;
    n->sent_ms[1] = node_now_ms(n) - 20;
    fake_node_run_once(n, true);
    assert_int_equal(fake_msgs(n, MSG_HEARTBEAT), 0);
    /* Heard again: a live neighbour, due after the interval. */
    n->heard_ms[1] = node_now_ms(n);
    fire(n);
    assert_int_equal(fake_msgs(n, MSG_HEARTBEAT), 1);
    fake_node_free(n);
}

static void alone_watches_nobody(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 1, 1, NULL);
    fake_node_add(n, &part_heartbeat);
    n->mono += 10000 * 1000000LL;
    fake_node_run_once(n, false);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(fake_node_deliver(n, 0, MSG_HEARTBEAT, NULL, 0), 0);
    fake_node_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(beats_neighbours_it_had_nothing_for),
        cmocka_unit_test(suspected_neighbour_called_once_per_timeout),
        cmocka_unit_test(alone_watches_nobody),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
