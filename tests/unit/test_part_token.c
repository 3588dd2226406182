/*
 * test_part_token — the CTWS token part (core/runtime/token.c) on four fake nodes
 * configured with the ctws preset, the test carrying the token between them: the first
 * holder keeps it resting until woken, a starving holder asks the node the token says
 * is most loaded and passes the token on in the same pass, the steal ends with its
 * grant or its timeout, a holder with nothing stealable anywhere rests and tells its
 * peers it is idle, its own new work moves a resting token, a node without CTWS passes
 * the token on untouched, a malformed token is refused, and a lap visits every node.
 * Deaths: the lowest live node makes a new token of the new epoch, other holders drop
 * theirs, the token skips the dead (no MSG_TOKEN, no MSG_IDLE to them), a token of an
 * older epoch is dropped without touching the one held, and a steal in flight to a node
 * that dies fails at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/base/log.h"
#include "core/net/proto.h"
#include "core/policy/ctws.h"
#include "core/policy/preset.h"
#include "core/runtime/parts.h"
#include "fake_node.h"

#define NODES 4
/* Loop runs a test allows for a 1 ms timer to fire; each blocks until some timer does. */
#define MAX_RUNS 1000

struct token_view {
    uint32_t hops, quiet, nodes, epoch;
    uint32_t count[NODES];
    uint8_t flags[NODES];
};

static struct node *ctws_node(uint32_t self, void **token)
{
    struct node *n = fake_node_new(self, NODES, 2, NULL);
    assert_int_equal(preset_apply("ctws", &n->cfg.steal, &n->cfg.placement), 0);
    void *s = fake_node_add(n, &part_token);
    if (token)
        *token = s;
    return n;
}

static void put_token(struct wbuf *b, uint32_t hops, uint32_t quiet, uint32_t nodes,
                      const uint32_t *count, const uint8_t *flags)
{
    wbuf_put_u32(b, hops);
    wbuf_put_u32(b, quiet);
    wbuf_put_u32(b, nodes);
    for (uint32_t i = 0; i < nodes; i++) {
        wbuf_put_u32(b, count[i]);
        wbuf_put_u8(b, flags ? flags[i] : 0);
    }
    wbuf_put_u32(b, 0); /* the membership epoch it was made in */
}

static int deliver_token(struct node *n, uint32_t from, uint32_t hops,
                         const uint32_t *count, const uint8_t *flags)
{
    struct wbuf b;
    wbuf_init(&b);
    put_token(&b, hops, 0, NODES, count, flags);
    int rc = fake_node_deliver(n, from, MSG_TOKEN, b.data, b.len);
    wbuf_fini(&b);
    return rc;
}

/* A token made in membership epoch `epoch` (put_token writes 0: patched here). */
static int deliver_token_of(struct node *n, uint32_t from, uint32_t hops, uint32_t epoch,
                            const uint32_t *count)
{
    struct wbuf b;
    wbuf_init(&b);
    put_token(&b, hops, 0, NODES, count, NULL);
    b.len -= 4;
    wbuf_put_u32(&b, epoch);
    int rc = fake_node_deliver(n, from, MSG_TOKEN, b.data, b.len);
    wbuf_fini(&b);
    return rc;
}

static struct token_view decode_token(const struct fake_msg *m)
{
    struct token_view t = {0};
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    t.hops = rbuf_u32(&r);
    t.quiet = rbuf_u32(&r);
    t.nodes = rbuf_u32(&r);
    assert_int_equal(t.nodes, NODES);
    for (uint32_t i = 0; i < NODES; i++) {
        t.count[i] = rbuf_u32(&r);
        t.flags[i] = rbuf_u8(&r);
    }
    t.epoch = rbuf_u32(&r);
    assert_true(rbuf_ok(&r));
    assert_int_equal(r.left, 0);
    return t;
}

/* Runs n's loop until it has captured a message of `type` (each run blocks until a
 * timer fires). */
static void run_until_sent(struct node *n, uint16_t type)
{
    for (int i = 0; i < MAX_RUNS && fake_msgs(n, type) == 0; i++)
        fake_node_run_once(n, true);
    assert_int_not_equal(fake_msgs(n, type), 0);
}

static void queue_stealable(struct node *n, uint32_t first, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        fake_queue(n, NODE_SREADY, fake_task(first + i, true, 0, 0));
}

static void first_holder_rests_until_woken(void **state)
{
    (void)state;
    struct node *n0 = ctws_node(CTWS_FIRST_HOLDER, NULL);
    struct node *n1 = ctws_node(1, NULL);
    /* Nothing is stealable before a job: the token waits quietly, with no timer. */
    fake_node_step(n0);
    fake_node_run_once(n0, true);
    assert_int_equal(fake_msgs(n0, 0), 0);
    /* Waking a node that does not hold it changes nothing. */
    node_wake(n1);
    fake_node_step(n1);
    assert_int_equal(fake_msgs(n1, 0), 0);
    /* Woken, the holder visits and sends the token on to learn the news. */
    node_wake(n0);
    run_until_sent(n0, MSG_TOKEN);
    assert_int_equal(fake_msgs(n0, MSG_TOKEN), 1);
    struct fake_msg *m = fake_msg(n0, MSG_TOKEN, 0);
    assert_int_equal(m->peer, ctws_next(CTWS_FIRST_HOLDER, NODES));
    struct token_view t = decode_token(m);
    assert_int_equal(t.hops, 1);
    /* Its own line: nothing stealable, and starving (empty queues, free slots). */
    assert_int_equal(t.count[0], 0);
    assert_int_equal(t.flags[0], CTWS_HUNGRY);
    assert_int_equal(fake_msgs(n0, MSG_IDLE), 0);
    assert_int_equal(n0->c.token_passes, 1);
    fake_node_free(n0);
    fake_node_free(n1);
}

static void starving_holder_steals_from_the_most_loaded_and_passes_on(void **state)
{
    (void)state;
    void *tok;
    struct node *n = ctws_node(1, &tok);
    const uint32_t count[NODES] = {1, 0, 6, 2};
    assert_int_equal(deliver_token(n, 0, 3, count, NULL), 0);
    /* Asks node 2 (the most loaded) for half of its six. */
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct fake_msg *m = fake_msg(n, MSG_STEAL_REQUEST, 0);
    assert_int_equal(m->peer, 2);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    uint32_t req = rbuf_u32(&r);
    assert_int_equal(rbuf_u32(&r), 3);
    assert_true(rbuf_ok(&r));
    assert_int_equal(n->c.steals_attempted, 1);
    assert_int_equal(n->c.steal_requests, 1);
    /* ...and passes the token on in the same pass, the victim's count lowered. */
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 1);
    m = fake_msg(n, MSG_TOKEN, 0);
    assert_int_equal(m->peer, 2);
    struct token_view t = decode_token(m);
    assert_int_equal(t.hops, 4);
    assert_int_equal(t.count[2], 3);
    assert_int_equal(t.count[3], 2);
    assert_int_equal(t.flags[1], CTWS_HUNGRY);
    assert_int_equal(n->c.token_passes, 1);
    /* Back again before the grant (a hop interval later, so that it may pass at once): a
     * steal is in flight, so no second request. */
    fake_msgs_clear(n);
    n->mono += 1000 * 1000 * 1000LL;
    assert_int_equal(deliver_token(n, 0, 7, count, NULL), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 1);
    /* A grant for another request does not end it; the one for this request does. */
    part_token.granted(tok, 2, req + 1, 3);
    assert_int_equal(n->c.steals_succeeded, 0);
    part_token.granted(tok, 2, req, 3);
    assert_int_equal(n->c.steals_succeeded, 1);
    /* Its timeout is off: running the loop counts no failure (no timer is left, so the
     * run returns at once). */
    fake_node_run_once(n, true);
    assert_int_equal(n->c.steal_fails, 0);
    assert_int_equal(n->steal_failed, 0);
    fake_node_free(n);
}

static void unanswered_steal_times_out_as_a_failure(void **state)
{
    (void)state;
    void *tok;
    struct node *n = ctws_node(1, &tok);
    n->cfg.steal_timeout_ms = 1;
    const uint32_t count[NODES] = {0, 0, 4, 0};
    assert_int_equal(deliver_token(n, 0, 1, count, NULL), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct rbuf r;
    rbuf_init(&r, fake_msg(n, MSG_STEAL_REQUEST, 0)->body.data,
              fake_msg(n, MSG_STEAL_REQUEST, 0)->body.len);
    uint32_t req = rbuf_u32(&r);
    for (int i = 0; i < MAX_RUNS && n->c.steal_fails == 0; i++)
        fake_node_run_once(n, true);
    assert_int_equal(n->c.steal_fails, 1);
    assert_int_equal(n->steal_failed, 1);
    assert_int_equal(fake_traces(n, TRACE_STEAL_FAIL), 1);
    /* A grant after the timeout is not a success of this steal. */
    part_token.granted(tok, 2, req, 2);
    assert_int_equal(n->c.steals_succeeded, 0);
    /* Nothing in flight any more: the next visit steals again, with a new request. */
    fake_msgs_clear(n);
    assert_int_equal(deliver_token(n, 0, 5, count, NULL), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    rbuf_init(&r, fake_msg(n, MSG_STEAL_REQUEST, 0)->body.data,
              fake_msg(n, MSG_STEAL_REQUEST, 0)->body.len);
    assert_int_not_equal(rbuf_u32(&r), req);
    fake_node_free(n);
}

static void nothing_stealable_rests_until_own_work_moves_it(void **state)
{
    (void)state;
    struct node *n = ctws_node(1, NULL);
    const uint32_t zero[NODES] = {0};
    assert_int_equal(deliver_token(n, 0, 9, zero, NULL), 0);
    /* Rests here and tells every peer, not itself, that it is idle. */
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    assert_int_equal(fake_msgs(n, MSG_IDLE), NODES - 1);
    uint32_t told = 0;
    for (size_t k = 0; k < NODES - 1; k++)
        told |= 1u << fake_msg(n, MSG_IDLE, k)->peer;
    assert_int_equal(told, (1u << 0) | (1u << 2) | (1u << 3));
    /* A step with the same SReadyQ leaves it resting. */
    fake_node_step(n);
    fake_node_run_once(n, true);
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 0);
    assert_int_equal(fake_msgs(n, MSG_IDLE), NODES - 1);
    /* Its own new stealable work is news: the step moves the token, carrying the count. */
    queue_stealable(n, 1, 2);
    fake_node_step(n);
    run_until_sent(n, MSG_TOKEN);
    struct fake_msg *m = fake_msg(n, MSG_TOKEN, 0);
    assert_int_equal(m->peer, 2);
    struct token_view t = decode_token(m);
    assert_int_equal(t.hops, 10);
    assert_int_equal(t.count[1], 2);
    assert_int_equal(fake_msgs(n, MSG_IDLE), NODES - 1);
    fake_node_free(n);
}

static void node_without_ctws_passes_the_token_untouched(void **state)
{
    (void)state;
    /* Default stealing (sqrt victims): the token is not this node's policy. */
    struct node *n = fake_node_new(2, NODES, 2, NULL);
    fake_node_add(n, &part_token);
    const uint32_t count[NODES] = {1, 0, 3, 0};
    const uint8_t flags[NODES] = {CTWS_HUNGRY, 0, 0, CTWS_HUNGRY};
    struct wbuf b;
    wbuf_init(&b);
    put_token(&b, 5, 2, NODES, count, flags);
    assert_int_equal(fake_node_deliver(n, 1, MSG_TOKEN, b.data, b.len), 0);
    wbuf_fini(&b);
    /* Starving as it is, it steals nothing and rests nothing: the token goes on. */
    assert_int_equal(fake_msgs(n, 0), 1);
    struct fake_msg *m = fake_msg(n, MSG_TOKEN, 0);
    assert_non_null(m);
    assert_int_equal(m->peer, 3);
    struct token_view t = decode_token(m);
    assert_int_equal(t.hops, 6);
    assert_int_equal(t.quiet, 2);
    for (uint32_t i = 0; i < NODES; i++) {
        assert_int_equal(t.count[i], count[i]);
        assert_int_equal(t.flags[i], flags[i]);
    }
    /* Waking it or stepping it never makes a token of its own. */
    node_wake(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 1);
    fake_node_free(n);
}

static void malformed_token_is_refused(void **state)
{
    (void)state;
    struct node *n = ctws_node(1, NULL);
    struct node *off = fake_node_new(2, NODES, 2, NULL);
    fake_node_add(off, &part_token);
    const uint32_t count[NODES + 1] = {0, 0, 4, 0, 0};
    struct wbuf b;
    assert_true(fake_node_deliver(n, 0, MSG_TOKEN, NULL, 0) < 0);
    /* A token for a cluster of another size. */
    const uint32_t sizes[] = {NODES - 1, NODES + 1};
    for (size_t i = 0; i < 2; i++) {
        wbuf_init(&b);
        put_token(&b, 1, 0, sizes[i], count, NULL);
        assert_true(fake_node_deliver(n, 0, MSG_TOKEN, b.data, b.len) < 0);
        assert_true(fake_node_deliver(off, 1, MSG_TOKEN, b.data, b.len) < 0);
        wbuf_fini(&b);
    }
    /* The right size, cut short. */
    wbuf_init(&b);
    put_token(&b, 1, 0, NODES, count, NULL);
    assert_true(fake_node_deliver(n, 0, MSG_TOKEN, b.data, b.len - 1) < 0);
    assert_true(fake_node_deliver(off, 1, MSG_TOKEN, b.data, b.len - 1) < 0);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(fake_msgs(off, 0), 0);
    /* Both still take a good one. */
    assert_int_equal(fake_node_deliver(n, 0, MSG_TOKEN, b.data, b.len), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 1);
    assert_int_equal(fake_node_deliver(off, 1, MSG_TOKEN, b.data, b.len), 0);
    assert_int_equal(fake_msgs(off, MSG_TOKEN), 1);
    wbuf_fini(&b);
    fake_node_free(n);
    fake_node_free(off);
}

static void token_laps_the_ring_visiting_every_node(void **state)
{
    (void)state;
    struct node *ns[NODES];
    for (uint32_t i = 0; i < NODES; i++) {
        ns[i] = ctws_node(i, NULL);
        queue_stealable(ns[i], 1, 2);
    }
    /* The first holder's new work moves its token; the others hold nothing. */
    for (uint32_t i = 0; i < NODES; i++)
        fake_node_step(ns[i]);
    for (uint32_t i = 1; i < NODES; i++)
        assert_int_equal(fake_msgs(ns[i], 0), 0);
    uint32_t h = CTWS_FIRST_HOLDER;
    for (uint32_t hop = 0; hop < NODES; hop++) {
        run_until_sent(ns[h], MSG_TOKEN);
        assert_int_equal(fake_msgs(ns[h], MSG_TOKEN), 1);
        uint32_t next = ctws_next(h, NODES);
        assert_int_equal(fake_msg(ns[h], MSG_TOKEN, 0)->peer, next);
        if (hop == NODES - 1) {
            /* Back to the first holder: every node wrote its line on the way. */
            struct token_view t = decode_token(fake_msg(ns[h], MSG_TOKEN, 0));
            assert_int_equal(t.hops, NODES);
            for (uint32_t i = 0; i < NODES; i++) {
                assert_int_equal(t.count[i], 2);
                assert_int_equal(t.flags[i], 0);
            }
        }
        /* Nobody is starving: no steals on the way. */
        assert_int_equal(fake_msgs(ns[h], MSG_STEAL_REQUEST), 0);
        assert_int_equal(fake_node_pass(ns[h], ns[next], NULL), 1);
        h = next;
    }
    for (uint32_t i = 0; i < NODES; i++)
        assert_int_equal(ns[i]->c.token_passes, 1);
    for (uint32_t i = 0; i < NODES; i++)
        fake_node_free(ns[i]);
}

static void hungry_holders_share_out_the_loaded_node(void **state)
{
    (void)state;
    struct node *ns[NODES];
    for (uint32_t i = 0; i < NODES; i++)
        ns[i] = ctws_node(i, NULL);
    queue_stealable(ns[0], 1, 4);
    fake_node_step(ns[0]);
    run_until_sent(ns[0], MSG_TOKEN);
    assert_int_equal(fake_node_pass(ns[0], ns[1], NULL), 1);
    /* Each starving holder asks node 0 for half of what the token says is left there,
     * and passes the token at once: two, then one, then the last one. */
    const uint32_t asked[NODES] = {0, 2, 1, 1};
    for (uint32_t i = 1; i < NODES; i++) {
        assert_int_equal(fake_msgs(ns[i], MSG_STEAL_REQUEST), 1);
        struct fake_msg *m = fake_msg(ns[i], MSG_STEAL_REQUEST, 0);
        assert_int_equal(m->peer, 0);
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        rbuf_u32(&r);
        assert_int_equal(rbuf_u32(&r), asked[i]);
        if (i + 1 < NODES)
            assert_int_equal(fake_node_pass(ns[i], ns[i + 1], NULL), 1);
    }
    /* The last one took what was left: nothing stealable on the token, so it rests. */
    assert_int_equal(fake_msgs(ns[3], MSG_TOKEN), 0);
    assert_int_equal(fake_msgs(ns[3], MSG_IDLE), NODES - 1);
    for (uint32_t i = 0; i < NODES; i++)
        fake_node_free(ns[i]);
}

/* ---- deaths ------------------------------------------------------------------------- */

static void assert_nothing_to_the_dead(const struct node *n)
{
    for (size_t i = 0; i < n->nmsgs; i++)
        assert_false(n->dead[n->msgs[i].peer]);
}

/*
 * The token's holder (node 3) dies: node 0, the lowest live node, makes a new token of
 * the new epoch and sends it on to the next live node.  Node 1 dies next: a token of
 * that epoch starts again at node 0 and skips node 1.
 */
static void lowest_live_node_makes_a_new_token(void **state)
{
    (void)state;
    struct node *n = ctws_node(0, NULL);
    /* The first token leaves node 0 (woken, it passes it to learn the news). */
    node_wake(n);
    run_until_sent(n, MSG_TOKEN);
    fake_msgs_clear(n);
    fake_node_kill(n, 3);
    run_until_sent(n, MSG_TOKEN);
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 1);
    struct fake_msg *m = fake_msg(n, MSG_TOKEN, 0);
    assert_int_equal(m->peer, 1);
    struct token_view t = decode_token(m);
    assert_int_equal(t.epoch, 1);
    assert_int_equal(t.epoch, node_epoch(n));
    assert_int_equal(t.hops, 1); /* a new token, not the old one's count */
    assert_int_equal(t.count[3], 0);
    assert_nothing_to_the_dead(n);

    fake_msgs_clear(n);
    fake_node_kill(n, 1);
    run_until_sent(n, MSG_TOKEN);
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 1);
    m = fake_msg(n, MSG_TOKEN, 0);
    assert_int_equal(m->peer, 2);
    t = decode_token(m);
    assert_int_equal(t.epoch, 2);
    assert_nothing_to_the_dead(n);
    fake_node_free(n);
}

/*
 * A node that is not the lowest live one drops the token it holds when a node dies (a
 * new one is made elsewhere) and makes none; a token of the new epoch is taken, and its
 * holder passes it over the dead node.
 */
static void other_nodes_drop_the_old_token_and_skip_the_dead(void **state)
{
    (void)state;
    struct node *n = ctws_node(2, NULL);
    const uint32_t zero[NODES] = {0};
    assert_int_equal(deliver_token_of(n, 1, 4, 0, zero), 0); /* held, resting */
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 0);
    fake_node_kill(n, 3);
    fake_msgs_clear(n);
    /* Dropped: new work here does not move a token it no longer holds. */
    queue_stealable(n, 1, 2);
    fake_node_step(n);
    node_wake(n);
    fake_node_run_once(n, true);
    assert_int_equal(fake_msgs(n, 0), 0);
    /* The new epoch's token passes on to node 0: node 3 is skipped. */
    assert_int_equal(deliver_token_of(n, 1, 1, 1, zero), 0);
    run_until_sent(n, MSG_TOKEN);
    struct fake_msg *m = fake_msg(n, MSG_TOKEN, 0);
    assert_int_equal(m->peer, 0);
    struct token_view t = decode_token(m);
    assert_int_equal(t.epoch, 1);
    assert_int_equal(t.count[2], 2);
    assert_nothing_to_the_dead(n);
    fake_node_free(n);
}

/*
 * A token made before a death this node knows of, arriving late, is dropped: it is not
 * passed on, its counts start no steal, and the token held here keeps its own entries.
 */
static void token_of_an_older_epoch_is_dropped(void **state)
{
    (void)state;
    struct node *n = ctws_node(2, NULL);
    fake_node_kill(n, 3);
    const uint32_t zero[NODES] = {0};
    assert_int_equal(deliver_token_of(n, 1, 2, 1, zero), 0); /* held, resting */
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 0);
    fake_msgs_clear(n);
    /* Node 1 has work, says the old token, and this node is starving. */
    const uint32_t old[NODES] = {0, 6, 0, 0};
    assert_int_equal(deliver_token_of(n, 1, 30, 0, old), 0);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(n->c.steals_attempted, 0);
    /* The held token moves on its own news, with its own entries and hops. */
    queue_stealable(n, 1, 2);
    fake_node_step(n);
    run_until_sent(n, MSG_TOKEN);
    struct token_view t = decode_token(fake_msg(n, MSG_TOKEN, 0));
    assert_int_equal(t.epoch, 1);
    assert_int_equal(t.hops, 3);
    assert_int_equal(t.count[1], 0);
    assert_int_equal(t.count[2], 2);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    fake_node_free(n);
}

/*
 * The holder's steal is in flight to a node that dies: it fails now, not at its timeout,
 * and the next visit may steal again; a dead node's stale count on a token starts no
 * steal.
 */
static void steal_in_flight_to_a_dead_victim_fails_at_once(void **state)
{
    (void)state;
    void *tok;
    struct node *n = ctws_node(1, &tok);
    n->cfg.steal_timeout_ms = 60000; /* a failure here cannot be the timeout's */
    const uint32_t count[NODES] = {0, 0, 4, 0};
    assert_int_equal(deliver_token_of(n, 0, 1, 0, count), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct rbuf r;
    rbuf_init(&r, fake_msg(n, MSG_STEAL_REQUEST, 0)->body.data,
              fake_msg(n, MSG_STEAL_REQUEST, 0)->body.len);
    uint32_t req = rbuf_u32(&r);
    assert_int_equal(fake_msg(n, MSG_STEAL_REQUEST, 0)->peer, 2);
    fake_node_kill(n, 2);
    assert_int_equal(n->steal_failed, 1);
    assert_int_equal(n->c.steals_succeeded, 0);
    /* A late grant is no success of it. */
    part_token.granted(tok, 2, req, 2);
    assert_int_equal(n->c.steals_succeeded, 0);
    /* The next token (of the new epoch) finds no steal in flight: it steals from node 3,
     * never from node 2 whatever the token still says of it. */
    fake_msgs_clear(n);
    n->mono += 1000 * 1000 * 1000LL;
    const uint32_t next[NODES] = {0, 0, 9, 3};
    assert_int_equal(deliver_token_of(n, 0, 5, 1, next), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    assert_int_equal(fake_msg(n, MSG_STEAL_REQUEST, 0)->peer, 3);
    run_until_sent(n, MSG_TOKEN);
    struct token_view t = decode_token(fake_msg(n, MSG_TOKEN, 0));
    assert_int_equal(t.count[2], 0);
    assert_nothing_to_the_dead(n);
    fake_node_free(n);
}

/* A resting holder tells its live peers it is idle, not the dead. */
static void resting_tells_only_the_living(void **state)
{
    (void)state;
    struct node *n = ctws_node(1, NULL);
    fake_node_kill(n, 3);
    const uint32_t zero[NODES] = {0};
    assert_int_equal(deliver_token_of(n, 0, 9, 1, zero), 0);
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 0);
    assert_int_equal(fake_msgs(n, MSG_IDLE), NODES - 2);
    assert_nothing_to_the_dead(n);
    fake_node_free(n);
}

/* Every other node dead: the holder's own new stealable work would move the token on,
 * but there is nobody to pass it to (a token sent to itself would be a message to
 * itself): it keeps it. */
static void last_live_node_keeps_the_token(void **state)
{
    (void)state;
    struct node *n = ctws_node(1, NULL);
    const uint32_t zero[NODES] = {0};
    assert_int_equal(deliver_token(n, 0, 9, zero, NULL), 0);
    fake_node_kill(n, 0);
    fake_node_kill(n, 2);
    fake_node_kill(n, 3);
    fake_msgs_clear(n);
    queue_stealable(n, 1, 2);
    for (int i = 0; i < 5; i++) {
        n->mono += 1000 * 1000 * 1000LL;
        fake_node_step(n);
        fake_node_run_once(n, true);
    }
    for (size_t i = 0; i < n->nmsgs; i++)
        assert_true(n->msgs[i].peer != n->self);
    assert_int_equal(fake_msgs(n, MSG_TOKEN), 0);
    assert_nothing_to_the_dead(n);
    fake_node_free(n);
}

int main(void)
{
    log_set_level(LOG_LEVEL_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_holder_rests_until_woken),
        cmocka_unit_test(starving_holder_steals_from_the_most_loaded_and_passes_on),
        cmocka_unit_test(unanswered_steal_times_out_as_a_failure),
        cmocka_unit_test(nothing_stealable_rests_until_own_work_moves_it),
        cmocka_unit_test(node_without_ctws_passes_the_token_untouched),
        cmocka_unit_test(malformed_token_is_refused),
        cmocka_unit_test(token_laps_the_ring_visiting_every_node),
        cmocka_unit_test(hungry_holders_share_out_the_loaded_node),
        cmocka_unit_test(lowest_live_node_makes_a_new_token),
        cmocka_unit_test(other_nodes_drop_the_old_token_and_skip_the_dead),
        cmocka_unit_test(token_of_an_older_epoch_is_dropped),
        cmocka_unit_test(steal_in_flight_to_a_dead_victim_fails_at_once),
        cmocka_unit_test(resting_tells_only_the_living),
        cmocka_unit_test(last_live_node_keeps_the_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
