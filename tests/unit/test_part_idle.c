/*
 * test_part_idle — the idle part (core/runtime/idle.c) on a fake node: a peer that said
 * it is parked is woken once this node has stealable work, and only once, unless it
 * died meanwhile; a WAKE received wakes every part of the node; a thief this node turned
 * away (its load query or steal request found nothing, victim.c) is woken the same way,
 * one that found work is not; one turned away again is the latest.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/net/proto.h"
#include "core/policy/steal.h"
#include "core/base/wbuf.h"
#include "core/runtime/parts.h"
#include "fake_node.h"

static void parked_peer_woken_once_work_is_stealable(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 2, NULL);
    fake_node_add(n, &part_idle);
    assert_int_equal(fake_node_deliver(n, 2, MSG_IDLE, NULL, 0), 0);
    assert_int_equal(fake_node_deliver(n, 3, MSG_IDLE, NULL, 0), 0);
    /* One stealable task is not enough to share: no wake-up yet.  (Tasks that need data:
     * ones that need none the node's two free slots would keep.) */
    fake_queue(n, NODE_SREADY, fake_task(1, true, 100, 0));
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 0);
    fake_queue(n, NODE_SREADY, fake_task(2, true, 100, 0));
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 2);
    assert_int_equal(fake_msg(n, MSG_WAKE, 0)->peer, 2);
    assert_int_equal(fake_msg(n, MSG_WAKE, 1)->peer, 3);
    /* Told once: the peers are no longer marked parked. */
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 2);
    fake_node_free(n);
}

static void wake_received_wakes_the_node(void **state)
{
    (void)state;
    struct node *n = fake_node_new(1, 3, 2, NULL);
    fake_node_add(n, &part_idle);
    assert_int_equal(fake_node_deliver(n, 0, MSG_WAKE, NULL, 0), 0);
    assert_int_equal(n->wakes, 1);
    fake_node_free(n);
}

/* A parked peer that dies is never woken: the living parked peer still is. */
static void dead_parked_peer_never_woken(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 2, NULL);
    fake_node_add(n, &part_idle);
    assert_int_equal(fake_node_deliver(n, 1, MSG_IDLE, NULL, 0), 0);
    assert_int_equal(fake_node_deliver(n, 3, MSG_IDLE, NULL, 0), 0);
    fake_node_kill(n, 3);
    fake_queue(n, NODE_SREADY, fake_task(1, true, 100, 0));
    fake_queue(n, NODE_SREADY, fake_task(2, true, 100, 0));
    fake_node_step(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 1);
    assert_int_equal(fake_msg(n, MSG_WAKE, 0)->peer, 1);
    assert_int_equal(fake_msgs(n, 0), 1);
    fake_node_free(n);
}

static int deliver_u32s(struct node *n, uint32_t from, uint16_t type, uint32_t a, uint32_t b,
                        int count)
{
    struct wbuf w;
    wbuf_init(&w);
    wbuf_put_u32(&w, a);
    if (count > 1)
        wbuf_put_u32(&w, b);
    int rc = fake_node_deliver(n, from, type, w.data, w.len);
    wbuf_fini(&w);
    return rc;
}

/* Node 0 has nothing when peer 1 queries it and peer 2 asks it for tasks: both are
 * woken once two tasks are stealable, and only once.  Peer 3, whose query found two
 * stealable tasks, is not: it was not turned away. */
static void turned_away_thieves_woken_once_work_is_stealable(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 2, NULL);
    fake_node_add(n, &part_victim);
    fake_node_add(n, &part_idle);
    assert_int_equal(deliver_u32s(n, 1, MSG_LOAD_QUERY, 7, 0, 1), 0);
    assert_int_equal(deliver_u32s(n, 2, MSG_STEAL_REQUEST, 8, 0, 2), 0);
    fake_node_step(n); /* the request is answered in the victim's step: nothing */
    assert_int_equal(fake_msgs(n, MSG_STEAL_GRANT), 1);
    assert_int_equal(n->turned_away, 2);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 0);
    fake_queue(n, NODE_SREADY, fake_task(1, true, 100, 0));
    fake_queue(n, NODE_SREADY, fake_task(2, true, 100, 0));
    assert_int_equal(deliver_u32s(n, 3, MSG_LOAD_QUERY, 9, 0, 1), 0);
    assert_int_equal(n->turned_away, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 2);
    assert_int_equal(fake_msg(n, MSG_WAKE, 0)->peer, 1);
    assert_int_equal(fake_msg(n, MSG_WAKE, 1)->peer, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 2);
    fake_node_free(n);
}

/* Tasks the node keeps for its own free slots are not work to give: a thief refused
 * while they wait is not woken at once to ask again (two nodes would trade a WAKE and
 * a refusal every pass), only once there is work to give. */
static void kept_tasks_wake_no_one(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 2, NULL);
    fake_node_add(n, &part_victim);
    fake_node_add(n, &part_idle);
    assert_int_equal(fake_node_deliver(n, 3, MSG_IDLE, NULL, 0), 0);
    fake_queue(n, NODE_SREADY, fake_task(1, true, 0, 0));
    fake_queue(n, NODE_SREADY, fake_task(2, true, 0, 0));
    assert_int_equal(deliver_u32s(n, 1, MSG_STEAL_REQUEST, 8, 0, 2), 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_GRANT), 1);
    assert_int_equal(n->turned_away, 1);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 0);
    /* Two that need data are work to give: the parked thief and the refused one. */
    fake_queue(n, NODE_SREADY, fake_task(3, true, 100, 0));
    fake_queue(n, NODE_SREADY, fake_task(4, true, 100, 0));
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), 2);
    assert_int_equal(fake_msg(n, MSG_WAKE, 0)->peer, 3);
    assert_int_equal(fake_msg(n, MSG_WAKE, 1)->peer, 1);
    fake_node_free(n);
}

/* Of the thieves turned away, the latest STEAL_HUNGRY_MAX are remembered, each once:
 * a node of 40 peers that refused 35 of them (one twice) wakes the last 16. */
static void turned_away_remembered_latest_only(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 40, 2, NULL);
    fake_node_add(n, &part_victim);
    fake_node_add(n, &part_idle);
    for (uint32_t peer = 1; peer <= 35; peer++)
        assert_int_equal(deliver_u32s(n, peer, MSG_LOAD_QUERY, peer, 0, 1), 0);
    assert_int_equal(deliver_u32s(n, 35, MSG_LOAD_QUERY, 99, 0, 1), 0);
    fake_queue(n, NODE_SREADY, fake_task(1, true, 100, 0));
    fake_queue(n, NODE_SREADY, fake_task(2, true, 100, 0));
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_WAKE), STEAL_HUNGRY_MAX);
    for (uint32_t i = 0; i < STEAL_HUNGRY_MAX; i++)
        assert_int_equal(fake_msg(n, MSG_WAKE, i)->peer, 35 - STEAL_HUNGRY_MAX + 1 + i);
    fake_node_free(n);
}

/* A thief turned away again is the latest: the one forgotten when the list is full is
 * the one refused longest ago (8 refused, 2 again, then 9: 1 goes, not 2). */
static void turned_away_again_moves_to_the_end(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 12, 2, NULL);
    fake_node_add(n, &part_victim);
    fake_node_add(n, &part_idle);
    for (uint32_t peer = 1; peer <= STEAL_HUNGRY_MAX; peer++)
        assert_int_equal(deliver_u32s(n, peer, MSG_LOAD_QUERY, peer, 0, 1), 0);
    assert_int_equal(deliver_u32s(n, 2, MSG_LOAD_QUERY, 50, 0, 1), 0);
    assert_int_equal(deliver_u32s(n, 9, MSG_LOAD_QUERY, 51, 0, 1), 0);
    fake_queue(n, NODE_SREADY, fake_task(1, true, 100, 0));
    fake_queue(n, NODE_SREADY, fake_task(2, true, 100, 0));
    fake_node_step(n);
    const uint32_t want[STEAL_HUNGRY_MAX] = {3, 4, 5, 6, 7, 8, 2, 9};
    assert_int_equal(fake_msgs(n, MSG_WAKE), STEAL_HUNGRY_MAX);
    for (uint32_t i = 0; i < STEAL_HUNGRY_MAX; i++)
        assert_int_equal(fake_msg(n, MSG_WAKE, i)->peer, want[i]);
    fake_node_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parked_peer_woken_once_work_is_stealable),
        cmocka_unit_test(wake_received_wakes_the_node),
        cmocka_unit_test(dead_parked_peer_never_woken),
        cmocka_unit_test(turned_away_thieves_woken_once_work_is_stealable),
        cmocka_unit_test(kept_tasks_wake_no_one),
        cmocka_unit_test(turned_away_remembered_latest_only),
        cmocka_unit_test(turned_away_again_moves_to_the_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
