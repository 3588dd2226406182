/*
 * test_part_ring — the A2WS ring part (core/runtime/ring.c) on rings of fake nodes whose
 * captured messages the test carries between them: a change of one node's load reaches
 * the nodes of its window and stops at the window's edge (core/policy/a2ws.h), MSG_INFO
 * goes only to the two ring neighbours, dirty entries ride on a batch already queued
 * for that neighbour and otherwise wait for the send interval (the test's clock, or the
 * part's timer), a victim's own entry goes to its thief, news is raised for newly
 * available tasks, a node without the vector ignores it, and malformed MSG_INFO is
 * refused.  Deaths: MSG_INFO goes to the next live node on each side, entries about the
 * dead are not merged, the new live neighbour writes that side (and the dead one no
 * longer), and the ring closes over a dead member.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "core/base/log.h"
#include "core/net/proto.h"
#include "core/runtime/parts.h"
#include "fake_node.h"

#define MAX_RING 8
/* Far past any send interval of the ring (a few ms): the clock the tests advance. */
#define LATER_NS (1000 * 1000 * 1000LL)

static void ring_up(struct node **ns, uint32_t count, uint32_t radius)
{
    for (uint32_t i = 0; i < count; i++) {
        ns[i] = fake_node_new(i, count, 2, NULL);
        fake_node_info_on(ns[i], radius);
        fake_node_add(ns[i], &part_ring);
    }
}

static void ring_down(struct node **ns, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        fake_node_free(ns[i]);
}

/* Every MSG_INFO node i has queued is for one of its two ring neighbours. */
static void assert_info_only_to_neighbours(struct node *n, uint32_t count)
{
    uint32_t left = (n->self + count - 1) % count, right = (n->self + 1) % count;
    for (size_t k = 0; k < fake_msgs(n, MSG_INFO); k++) {
        uint32_t peer = fake_msg(n, MSG_INFO, k)->peer;
        assert_true(peer == left || peer == right);
    }
}

/* One round of the ring: every clock moves past the interval, every node runs its step,
 * and every captured message is delivered.  Returns how many messages were delivered. */
static size_t ring_round(struct node **ns, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        ns[i]->mono += LATER_NS;
        fake_node_step(ns[i]);
        assert_info_only_to_neighbours(ns[i], count);
    }
    size_t delivered = 0;
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < count; j++)
            if (i != j)
                delivered += fake_node_pass(ns[i], ns[j], NULL);
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(ns[i]->nmsgs, 0);
    return delivered;
}

/* Rounds until nothing moves; a ring of `count` nodes is quiet after at most `count`. */
static void ring_settle(struct node **ns, uint32_t count)
{
    size_t rounds = 0;
    while (ring_round(ns, count) > 0) {
        rounds++;
        assert_true(rounds <= count);
    }
}

static void put_entry(struct wbuf *b, uint32_t node, uint32_t version, double t_run,
                      uint32_t n, uint32_t avail, uint32_t slots)
{
    wbuf_put_u32(b, node);
    wbuf_put_u32(b, version);
    wbuf_put_f64(b, t_run);
    wbuf_put_u32(b, n);
    wbuf_put_u32(b, avail);
    wbuf_put_u32(b, slots);
}

/* A MSG_INFO with one entry, delivered to n as if from `from`. */
static int deliver_one(struct node *n, uint32_t from, uint32_t node, uint32_t version,
                       uint32_t avail)
{
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, 1);
    put_entry(&b, node, version, 0.5, avail, avail, 2);
    int rc = fake_node_deliver(n, from, MSG_INFO, b.data, b.len);
    wbuf_fini(&b);
    return rc;
}

static void queue_stealable(struct node *n, uint32_t first, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        fake_queue(n, NODE_SREADY, fake_task(first + i, true, 0, 0));
}

static void load_change_spreads_over_the_window_and_stops_at_its_edge(void **state)
{
    (void)state;
    /* Radius 2 on 7 nodes: node 3's window is 1..5, node 0's is 5, 6, 0, 1, 2. */
    enum { N = 7 };
    struct node *ns[MAX_RING];
    ring_up(ns, N, 2);
    ring_settle(ns, N);
    /* Every node heard its window's first entries, and nothing from outside it. */
    assert_int_not_equal(ns[0]->entries[5].version, 0);
    assert_int_not_equal(ns[0]->entries[2].version, 0);
    assert_int_equal(ns[0]->entries[3].version, 0);
    assert_int_equal(ns[0]->entries[4].version, 0);

    queue_stealable(ns[3], 1, 3);
    ring_settle(ns, N);
    uint32_t version = ns[3]->entries[3].version;
    const uint32_t inside[] = {1, 2, 4, 5};
    for (size_t k = 0; k < sizeof inside / sizeof inside[0]; k++) {
        struct node *n = ns[inside[k]];
        assert_int_equal(n->entries[3].version, version);
        assert_int_equal(n->entries[3].avail, 3);
        assert_int_equal(n->entries[3].n, 3);
        assert_int_equal(n->news, 1);
    }
    /* Two hops away on either side is the window's edge: nodes 0 and 6 never keep it. */
    assert_int_equal(ns[0]->entries[3].version, 0);
    assert_int_equal(ns[6]->entries[3].version, 0);
    assert_int_equal(ns[0]->news, 0);
    assert_int_equal(ns[6]->news, 0);
    ring_down(ns, N);
}

static void info_goes_to_the_two_neighbours_with_the_entry(void **state)
{
    (void)state;
    struct node *n = fake_node_new(2, 5, 2, NULL);
    fake_node_info_on(n, 1);
    fake_node_add(n, &part_ring);
    queue_stealable(n, 1, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 2);
    assert_int_equal(fake_msgs(n, MSG_INFO), 2);
    uint32_t peers = 0;
    for (size_t k = 0; k < 2; k++) {
        struct fake_msg *m = fake_msg(n, MSG_INFO, k);
        peers |= 1u << m->peer;
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        assert_int_equal(rbuf_u32(&r), 1);
        assert_int_equal(rbuf_u32(&r), 2);             /* whose entry */
        assert_int_not_equal(rbuf_u32(&r), 0);         /* a version */
        assert_true(rbuf_f64(&r) == 0);                /* no task finished yet */
        assert_int_equal(rbuf_u32(&r), 2);             /* n: the two ready tasks */
        assert_int_equal(rbuf_u32(&r), 2);             /* avail */
        assert_int_equal(rbuf_u32(&r), 2);             /* slots */
        assert_true(rbuf_ok(&r));
        assert_int_equal(r.left, 0);
    }
    assert_int_equal(peers, (1u << 1) | (1u << 3));
    assert_int_equal(n->c.info_sent, 2);
    /* Nothing changed: nothing more to say. */
    n->mono += LATER_NS;
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_INFO), 2);
    fake_node_free(n);
}

static void entry_outside_the_window_is_not_kept(void **state)
{
    (void)state;
    /* Radius 1 on 5 nodes: node 0 keeps 4, 0 and 1 only. */
    struct node *n = fake_node_new(0, 5, 2, NULL);
    fake_node_info_on(n, 1);
    fake_node_add(n, &part_ring);
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, 2);
    put_entry(&b, 1, 4, 0.5, 3, 3, 2);
    put_entry(&b, 2, 4, 0.5, 3, 3, 2);
    assert_int_equal(fake_node_deliver(n, 1, MSG_INFO, b.data, b.len), 0);
    wbuf_fini(&b);
    assert_int_equal(n->entries[1].version, 4);
    assert_int_equal(n->entries[2].version, 0);
    assert_int_equal(n->entries[2].avail, 0);
    /* Node 1's entry is at the far edge of node 0's window, outside node 4's: it goes
     * on to nobody, and node 2's, never kept, cannot.  Only node 0's own entry leaves. */
    n->mono += LATER_NS;
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_INFO), 2);
    for (size_t k = 0; k < 2; k++) {
        struct fake_msg *m = fake_msg(n, MSG_INFO, k);
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        assert_int_equal(rbuf_u32(&r), 1);
        assert_int_equal(rbuf_u32(&r), 0);
    }
    fake_node_free(n);
}

/* Node 2 of 5 after its first step: its first entry went to both neighbours at `mono`. */
static struct node *ring_node_after_first_send(void)
{
    struct node *n = fake_node_new(2, 5, 2, NULL);
    fake_node_info_on(n, 1);
    fake_node_add(n, &part_ring);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_INFO), 2);
    fake_msgs_clear(n);
    return n;
}

static size_t info_to(struct node *n, uint32_t peer)
{
    size_t k = 0;
    for (size_t i = 0; i < fake_msgs(n, MSG_INFO); i++)
        k += fake_msg(n, MSG_INFO, i)->peer == peer;
    return k;
}

static void dirty_entry_rides_a_queued_batch_or_waits_for_the_interval(void **state)
{
    (void)state;
    struct node *n = ring_node_after_first_send();
    /* A change right after a send waits: no message of its own within the interval. */
    queue_stealable(n, 1, 1);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_INFO), 0);
    n->mono += 1000;
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_INFO), 0);
    /* Another part queued a message for the right neighbour this pass: the entry rides
     * along to that neighbour at once; the left one still waits. */
    size_t at;
    struct wbuf *b = node_msg_begin(n, 3, MSG_WAKE, &at);
    (void)b;
    node_msg_end(n, 3, at);
    fake_node_step(n);
    assert_int_equal(info_to(n, 3), 1);
    assert_int_equal(info_to(n, 1), 0);
    /* Once the interval has passed the left neighbour hears too, and the right one,
     * already told, is not told again. */
    n->mono += LATER_NS;
    fake_node_step(n);
    assert_int_equal(info_to(n, 1), 1);
    assert_int_equal(info_to(n, 3), 1);
    fake_node_free(n);
}

static void keepalive_cb(uv_timer_t *h)
{
    (void)h;
}

static void timer_sends_what_waited(void **state)
{
    (void)state;
    struct node *n = ring_node_after_first_send();
    queue_stealable(n, 1, 1);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_INFO), 0);
    /* The ring's timer does not keep a loop alive, by design; a repeating timer of the
     * test's own does, so that running the loop once blocks until the ring's fires.  The
     * test's clock does not move: the timer, not the clock, sends. */
    uv_timer_t keepalive;
    uv_timer_init(&n->loop, &keepalive);
    uv_timer_start(&keepalive, keepalive_cb, 100, 100);
    for (int i = 0; i < 50 && fake_msgs(n, MSG_INFO) < 2; i++)
        fake_node_run_once(n, true);
    uv_timer_stop(&keepalive);
    uv_close((uv_handle_t *)&keepalive, NULL);
    assert_int_equal(info_to(n, 1), 1);
    assert_int_equal(info_to(n, 3), 1);
    fake_node_free(n);
}

static void answering_sends_own_entry_to_the_thief(void **state)
{
    (void)state;
    /* Radius 2 on 5 nodes: every node is in every window, so the thief keeps it. */
    struct node *victim = fake_node_new(2, 5, 2, NULL);
    struct node *thief = fake_node_new(4, 5, 2, NULL);
    fake_node_info_on(victim, 2);
    fake_node_info_on(thief, 2);
    fake_node_add(victim, &part_ring);
    fake_node_add(thief, &part_ring);
    queue_stealable(victim, 1, 4);
    node_answering(victim, 4);
    assert_int_equal(fake_msgs(victim, MSG_INFO), 1);
    struct fake_msg *m = fake_msg(victim, MSG_INFO, 0);
    assert_int_equal(m->peer, 4);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    assert_int_equal(rbuf_u32(&r), 1);
    assert_int_equal(rbuf_u32(&r), 2);
    assert_int_equal(fake_node_pass(victim, thief, NULL), 1);
    assert_int_equal(thief->entries[2].avail, 4);
    assert_int_equal(thief->entries[2].version, victim->entries[2].version);
    assert_int_equal(thief->news, 1);
    /* Answering itself (or a node that does not exist) sends nothing. */
    node_answering(victim, 2);
    node_answering(victim, 9);
    assert_int_equal(fake_msgs(victim, MSG_INFO), 0);
    fake_node_free(victim);
    fake_node_free(thief);
}

static void news_only_when_available_tasks_appear(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 5, 2, NULL);
    fake_node_info_on(n, 1);
    fake_node_add(n, &part_ring);
    assert_int_equal(deliver_one(n, 1, 1, 1, 0), 0);
    assert_int_equal(n->news, 0);
    assert_int_equal(deliver_one(n, 1, 1, 2, 3), 0);
    assert_int_equal(n->news, 1);
    /* More of what was there already is not news. */
    assert_int_equal(deliver_one(n, 1, 1, 3, 5), 0);
    assert_int_equal(n->news, 1);
    /* A late message (an older version) changes nothing. */
    assert_int_equal(deliver_one(n, 1, 1, 2, 3), 0);
    assert_int_equal(n->entries[1].avail, 5);
    assert_int_equal(deliver_one(n, 1, 1, 4, 0), 0);
    assert_int_equal(deliver_one(n, 1, 1, 2, 7), 0);
    assert_int_equal(n->news, 1);
    assert_int_equal(deliver_one(n, 1, 1, 5, 2), 0);
    assert_int_equal(n->news, 2);
    /* An entry node 1 is not the writer of (node 4's, left of node 0) is refused, so
     * it is no news either. */
    assert_int_equal(deliver_one(n, 1, 4, 1, 6), 0);
    assert_int_equal(n->entries[4].version, 0);
    assert_int_equal(n->news, 2);
    assert_int_equal(n->c.info_received, 8);
    fake_node_free(n);
}

static void node_without_the_vector_ignores_info(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 5, 2, NULL);
    fake_node_add(n, &part_ring);
    assert_int_equal(deliver_one(n, 1, 1, 1, 3), 0);
    assert_int_equal(n->news, 0);
    assert_int_equal(n->dirty, 0);
    node_answering(n, 1);
    n->mono += LATER_NS;
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    fake_node_free(n);
}

static void malformed_info_is_refused(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 5, 2, NULL);
    fake_node_info_on(n, 1);
    fake_node_add(n, &part_ring);
    struct wbuf b;
    /* No count at all. */
    assert_true(fake_node_deliver(n, 1, MSG_INFO, NULL, 0) < 0);
    /* A count larger than the payload. */
    wbuf_init(&b);
    wbuf_put_u32(&b, 3);
    put_entry(&b, 1, 1, 0.5, 1, 1, 2);
    assert_true(fake_node_deliver(n, 1, MSG_INFO, b.data, b.len) < 0);
    wbuf_fini(&b);
    /* One entry cut short. */
    wbuf_init(&b);
    wbuf_put_u32(&b, 1);
    put_entry(&b, 1, 1, 0.5, 1, 1, 2);
    assert_true(fake_node_deliver(n, 1, MSG_INFO, b.data, b.len - 1) < 0);
    wbuf_fini(&b);
    /* A run time that is not a time. */
    const double bad[] = {NAN, INFINITY, -1.0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wbuf_init(&b);
        wbuf_put_u32(&b, 1);
        put_entry(&b, 1, 2, bad[i], 1, 1, 2);
        assert_true(fake_node_deliver(n, 1, MSG_INFO, b.data, b.len) < 0);
        wbuf_fini(&b);
    }
    assert_int_equal(n->entries[1].version, 0);
    assert_int_equal(n->news, 0);
    /* The part still takes a good one. */
    assert_int_equal(deliver_one(n, 1, 1, 1, 2), 0);
    assert_int_equal(n->entries[1].avail, 2);
    assert_int_equal(n->news, 1);
    fake_node_free(n);
}

/* ---- deaths ------------------------------------------------------------------------- */

/* After deaths on both sides, the entry goes to the next live node on each side, never
 * to the dead; a victim's answer to a dead thief sends nothing. */
static void info_goes_to_the_next_live_neighbours(void **state)
{
    (void)state;
    struct node *n = fake_node_new(4, 8, 2, NULL);
    fake_node_info_on(n, 3);
    fake_node_add(n, &part_ring);
    fake_node_kill(n, 3);
    fake_node_kill(n, 5);
    fake_node_kill(n, 6);
    queue_stealable(n, 1, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_INFO), 2);
    assert_int_equal(info_to(n, 2), 1);
    assert_int_equal(info_to(n, 7), 1);
    /* The next change, an interval later, goes the same way. */
    queue_stealable(n, 3, 1);
    n->mono += LATER_NS;
    fake_node_step(n);
    assert_int_equal(info_to(n, 2), 2);
    assert_int_equal(info_to(n, 7), 2);
    fake_msgs_clear(n);
    node_answering(n, 5);
    assert_int_equal(fake_msgs(n, 0), 0);
    fake_node_free(n);
}

/* Entries about a dead node are not merged, whoever carries them: its entry stays empty
 * and raises no news. */
static void entries_about_the_dead_are_not_merged(void **state)
{
    (void)state;
    struct node *n = fake_node_new(4, 8, 2, NULL);
    fake_node_info_on(n, 3);
    fake_node_add(n, &part_ring);
    assert_int_equal(deliver_one(n, 3, 3, 1, 2), 0);
    assert_int_equal(n->entries[3].avail, 2);
    assert_int_equal(n->news, 1);
    fake_node_kill(n, 3);
    assert_int_equal(n->entries[3].avail, 0);
    assert_int_equal(n->entries[3].n, 0);
    /* From its other neighbour, the new writer of that side, and from itself (late). */
    assert_int_equal(deliver_one(n, 2, 3, 5, 7), 0);
    assert_int_equal(deliver_one(n, 3, 3, 6, 7), 0);
    assert_int_equal(n->entries[3].avail, 0);
    assert_int_equal(n->entries[3].n, 0);
    assert_int_equal(n->news, 1);
    /* Nor is what it said before passed on: the first step sends this node's own entry
     * both ways, and nothing about node 3 with it. */
    n->mono += LATER_NS;
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_INFO), 2);
    for (size_t k = 0; k < fake_msgs(n, MSG_INFO); k++) {
        struct fake_msg *m = fake_msg(n, MSG_INFO, k);
        assert_int_not_equal(m->peer, 3);
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        uint32_t count = rbuf_u32(&r);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t node = rbuf_u32(&r);
            (void)rbuf_u32(&r);
            (void)rbuf_f64(&r);
            (void)rbuf_u32(&r);
            (void)rbuf_u32(&r);
            (void)rbuf_u32(&r);
            assert_int_not_equal(node, 3);
        }
        assert_true(rbuf_ok(&r));
    }
    fake_node_free(n);
}

/*
 * The writer rule moves with the neighbours: node 4 (radius 3) takes node 1's entry from
 * node 2 only once node 3, the writer of that side until then, is dead, and no longer
 * from node 3; the same on the right with nodes 5, 6 and 7.
 */
static void new_live_neighbour_writes_the_side(void **state)
{
    (void)state;
    struct node *n = fake_node_new(4, 8, 2, NULL);
    fake_node_info_on(n, 3);
    fake_node_add(n, &part_ring);
    assert_int_equal(deliver_one(n, 2, 1, 1, 3), 0);
    assert_int_equal(deliver_one(n, 6, 7, 1, 3), 0);
    assert_int_equal(n->entries[1].version, 0);
    assert_int_equal(n->entries[7].version, 0);
    fake_node_kill(n, 3);
    fake_node_kill(n, 5);
    assert_int_equal(deliver_one(n, 2, 1, 2, 3), 0);
    assert_int_equal(deliver_one(n, 6, 7, 2, 4), 0);
    assert_int_equal(n->entries[1].avail, 3);
    assert_int_equal(n->entries[7].avail, 4);
    assert_int_equal(n->news, 2);
    /* The dead writers' late words count no more. */
    assert_int_equal(deliver_one(n, 3, 1, 9, 8), 0);
    assert_int_equal(deliver_one(n, 5, 7, 9, 8), 0);
    assert_int_equal(n->entries[1].version, 2);
    assert_int_equal(n->entries[7].version, 2);
    fake_node_free(n);
}

/* One round among the live nodes of a ring: as ring_round, the dead neither stepped nor
 * addressed. */
static size_t live_round(struct node **ns, uint32_t count, uint32_t dead)
{
    for (uint32_t i = 0; i < count; i++) {
        if (i == dead)
            continue;
        ns[i]->mono += LATER_NS;
        fake_node_step(ns[i]);
        for (size_t k = 0; k < ns[i]->nmsgs; k++)
            assert_int_not_equal(ns[i]->msgs[k].peer, dead);
    }
    size_t delivered = 0;
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < count; j++)
            if (i != j && i != dead && j != dead)
                delivered += fake_node_pass(ns[i], ns[j], NULL);
    return delivered;
}

/* The ring closes over a dead member: changes two hops away across it still arrive,
 * carried by the live neighbours on each side. */
static void ring_closes_over_a_dead_member(void **state)
{
    (void)state;
    enum { N = 8, DEAD = 3 };
    struct node *ns[MAX_RING];
    ring_up(ns, N, 3);
    ring_settle(ns, N);
    for (uint32_t i = 0; i < N; i++)
        if (i != DEAD)
            fake_node_kill(ns[i], DEAD);
    queue_stealable(ns[1], 1, 3);
    queue_stealable(ns[5], 1, 2);
    for (size_t rounds = 0; live_round(ns, N, DEAD) > 0; rounds++)
        assert_true(rounds <= N);
    assert_int_equal(ns[4]->entries[1].avail, 3);
    assert_int_equal(ns[4]->entries[1].version, ns[1]->entries[1].version);
    assert_int_equal(ns[2]->entries[5].avail, 2);
    assert_int_equal(ns[2]->entries[5].version, ns[5]->entries[5].version);
    ring_down(ns, N);
}

int main(void)
{
    log_set_level(LOG_LEVEL_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_change_spreads_over_the_window_and_stops_at_its_edge),
        cmocka_unit_test(info_goes_to_the_two_neighbours_with_the_entry),
        cmocka_unit_test(entry_outside_the_window_is_not_kept),
        cmocka_unit_test(dirty_entry_rides_a_queued_batch_or_waits_for_the_interval),
        cmocka_unit_test(timer_sends_what_waited),
        cmocka_unit_test(answering_sends_own_entry_to_the_thief),
        cmocka_unit_test(news_only_when_available_tasks_appear),
        cmocka_unit_test(node_without_the_vector_ignores_info),
        cmocka_unit_test(malformed_info_is_refused),
        cmocka_unit_test(info_goes_to_the_next_live_neighbours),
        cmocka_unit_test(entries_about_the_dead_are_not_merged),
        cmocka_unit_test(new_live_neighbour_writes_the_side),
        cmocka_unit_test(ring_closes_over_a_dead_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
