/*
 * test_part_heartbeat — the heartbeat part (core/runtime/heartbeat.c) on fake nodes: it
 * beats only to its live ring neighbours, only when it had sent them nothing for an
 * interval, a suspected neighbour only once per timeout; a suspicion goes to the
 * suspect's other neighbour, which declares the death only if it heard nothing either;
 * with nobody else to ask the watcher declares it; a death moves the watch on, and the
 * suspicion past a dead confirmer, and past a confirmer that died unnoticed with the
 * suspect (it does not answer the suspicion with a heartbeat).  Refused connections: a
 * neighbour whose lost connection is refused on reconnecting is suspected at once, and
 * declared as soon as the confirmer is refused too; a neighbour merely silent (stopped)
 * waits for the timeout; a refused suspicion the confirmer cannot back (it hears the
 * node) declares nothing, nor do the refusals of a node that said it was stopping.
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

/* Moves the clock far ahead and lets one check see it: that check finds the node was
 * paused and suspects nobody; the next, a normal interval later, may. */
static void settle(struct node *n)
{
    n->mono += 1000 * 1000000LL;
    for (uint32_t i = 0; i < n->nodes; i++)
        n->heard_ms[i] = n->sent_ms[i] = node_now_ms(n);
    fake_node_run_once(n, true);
    fake_msgs_clear(n);
}

static void a_paused_watcher_suspects_nobody(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 2, 1, NULL);
    n->cfg.failure_timeout_ms = 40;
    fake_node_add(n, &part_heartbeat);
    /* The watcher did not run for 100 ms: node 1 looks silent, but it is the watcher that
     * was away (its messages are still unread). */
    n->mono += 100 * 1000000LL;
    n->heard_ms[1] = node_now_ms(n) - 100;
    fake_node_run_once(n, true);
    assert_int_equal(n->declared, 0);
    assert_int_equal(fake_msgs(n, MSG_SUSPECT), 0);
    /* Still silent a normal interval later: now it counts. */
    n->mono += 5 * 1000000LL;
    fake_node_run_once(n, true);
    assert_int_equal(n->declared, 1);
    fake_node_free(n);
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
    struct node *n = fake_node_new(0, 4, 1, NULL);
    n->cfg.failure_timeout_ms = 40; /* interval 10 ms */
    fake_node_add(n, &part_heartbeat);
    settle(n);
    /* Node 1 silent for longer than the timeout; we last called it 20 ms ago: due for a
     * live neighbour (interval), not for a suspected one (timeout). */
    n->mono += 5 * 1000000LL;
    n->heard_ms[3] = node_now_ms(n);
    n->sent_ms[3] = node_now_ms(n);
    n->heard_ms[1] = node_now_ms(n) - 50;
    n->sent_ms[1] = node_now_ms(n) - 20;
    fake_node_run_once(n, true);
    assert_int_equal(fake_msgs(n, MSG_HEARTBEAT), 0);
    /* The suspicion went to node 1's other neighbour, node 2; nothing is declared here. */
    assert_int_equal(fake_msgs(n, MSG_SUSPECT), 1);
    struct fake_msg *m = fake_msg(n, MSG_SUSPECT, 0);
    assert_int_equal(m->peer, 2);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    assert_int_equal(rbuf_u32(&r), 1);
    assert_int_equal(n->declared, 0);
    /* Heard again: a live neighbour, due after the interval. */
    n->heard_ms[1] = node_now_ms(n);
    fake_msgs_clear(n);
    fire(n);
    assert_int_equal(fake_msgs(n, MSG_HEARTBEAT), 1);
    assert_int_equal(fake_msgs(n, MSG_SUSPECT), 0);
    fake_node_free(n);
}

static void alone_with_the_suspect_declares_it(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 2, 1, NULL);
    n->cfg.failure_timeout_ms = 40;
    fake_node_add(n, &part_heartbeat);
    settle(n);
    n->mono += 5 * 1000000LL;
    n->heard_ms[1] = node_now_ms(n) - 50;
    fake_node_run_once(n, true);
    assert_int_equal(n->declared, 1);
    assert_true(n->dead[1]);
    /* Nobody left to watch: nothing more is sent, however long it runs. */
    fake_msgs_clear(n);
    n->mono += 1000 * 1000000LL;
    fake_node_run_once(n, true);
    assert_int_equal(fake_msgs(n, 0), 0);
    fake_node_free(n);
}

static void confirmer_declares_only_if_silent_too(void **state)
{
    (void)state;
    struct node *n = fake_node_new(4, 6, 1, NULL);
    n->cfg.failure_timeout_ms = 40;
    fake_node_add(n, &part_heartbeat);
    n->mono += 100 * 1000000LL;
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, 3);
    wbuf_put_u8(&b, 0);
    /* Node 3 was heard 10 ms ago here: node 2's suspicion is not confirmed, and node 2
     * hears that this node is alive. */
    n->heard_ms[3] = node_now_ms(n) - 10;
    assert_int_equal(fake_node_deliver(n, 2, MSG_SUSPECT, b.data, b.len), 0);
    assert_int_equal(n->declared, 0);
    assert_int_equal(fake_msgs(n, MSG_HEARTBEAT), 1);
    assert_int_equal(fake_msg(n, MSG_HEARTBEAT, 0)->peer, 2);
    /* Silent here too: dead. */
    n->heard_ms[3] = node_now_ms(n) - 50;
    assert_int_equal(fake_node_deliver(n, 2, MSG_SUSPECT, b.data, b.len), 0);
    assert_int_equal(n->declared, 1);
    assert_true(n->dead[3]);
    /* A suspicion of a node already dead, of itself, or out of range changes nothing;
     * a short payload is refused. */
    assert_int_equal(fake_node_deliver(n, 2, MSG_SUSPECT, b.data, b.len), 0);
    wbuf_reset(&b);
    wbuf_put_u32(&b, 4);
    wbuf_put_u8(&b, 0);
    assert_int_equal(fake_node_deliver(n, 2, MSG_SUSPECT, b.data, b.len), 0);
    wbuf_reset(&b);
    wbuf_put_u32(&b, 99);
    wbuf_put_u8(&b, 0);
    assert_true(fake_node_deliver(n, 2, MSG_SUSPECT, b.data, b.len) < 0);
    assert_true(fake_node_deliver(n, 2, MSG_SUSPECT, b.data, 2) < 0);
    /* The flags byte is required, and only its known bit may be set. */
    assert_true(fake_node_deliver(n, 2, MSG_SUSPECT, b.data, 4) < 0);
    wbuf_reset(&b);
    wbuf_put_u32(&b, 1);
    wbuf_put_u8(&b, 0x82);
    assert_true(fake_node_deliver(n, 2, MSG_SUSPECT, b.data, b.len) < 0);
    assert_int_equal(n->declared, 1);
    wbuf_fini(&b);
    fake_node_free(n);
}

static void a_death_moves_the_watch_on(void **state)
{
    (void)state;
    struct node *n = fake_node_new(2, 6, 1, NULL);
    n->cfg.failure_timeout_ms = 8; /* interval 2 ms */
    fake_node_add(n, &part_heartbeat);
    fake_node_kill(n, 3);
    n->mono += 5 * 1000000LL;
    for (uint32_t i = 0; i < 6; i++)
        n->heard_ms[i] = node_now_ms(n);
    fire(n);
    /* Node 2 now watches 1 and 4; nothing goes to the dead node 3. */
    size_t beats = fake_msgs(n, MSG_HEARTBEAT);
    assert_int_equal(beats, 2);
    bool to1 = false, to4 = false;
    for (size_t i = 0; i < beats; i++) {
        uint32_t p = fake_msg(n, MSG_HEARTBEAT, i)->peer;
        to1 |= p == 1;
        to4 |= p == 4;
        assert_int_not_equal(p, 3);
    }
    assert_true(to1 && to4);
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
    uint8_t flags = 0;
    assert_int_equal(fake_node_deliver(n, 0, MSG_HEARTBEAT, &flags, 1), 0);
    /* A heartbeat carries its flags byte, with no unknown bit. */
    assert_true(fake_node_deliver(n, 0, MSG_HEARTBEAT, NULL, 0) < 0);
    flags = 0x80;
    assert_true(fake_node_deliver(n, 0, MSG_HEARTBEAT, &flags, 1) < 0);
    fake_node_free(n);
}

/* The suspect's other neighbour is dead: the suspicion goes to the next live node on
 * that side; with every other node dead, the watcher alone decides. */
static void suspicion_goes_past_a_dead_confirmer(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 5, 1, NULL);
    n->cfg.failure_timeout_ms = 40; /* interval 10 ms */
    fake_node_add(n, &part_heartbeat);
    fake_node_kill(n, 2);
    settle(n);
    n->mono += 5 * 1000000LL;
    n->heard_ms[4] = n->sent_ms[4] = node_now_ms(n);
    n->heard_ms[1] = node_now_ms(n) - 50;
    n->sent_ms[1] = node_now_ms(n) - 20;
    fake_node_run_once(n, true);
    assert_int_equal(fake_msgs(n, MSG_SUSPECT), 1);
    struct fake_msg *m = fake_msg(n, MSG_SUSPECT, 0);
    assert_int_equal(m->peer, 3);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    assert_int_equal(rbuf_u32(&r), 1);
    assert_int_equal(n->declared, 0);
    /* Nodes 3 and 4 die too: node 0 is alone with the suspect, and declares it. */
    fake_node_kill(n, 3);
    fake_node_kill(n, 4);
    fake_msgs_clear(n);
    n->mono += 5 * 1000000LL;
    for (int i = 0; i < 50 && !n->declared; i++)
        fake_node_run_once(n, true);
    assert_int_equal(n->declared, 1);
    assert_true(n->dead[1]);
    assert_int_equal(fake_msgs(n, MSG_SUSPECT), 0);
    fake_node_free(n);
}

/* Nodes 5 and 6 of 8 die together, unnoticed: node 4 suspects 5 and asks 6, which
 * never answers; a timeout later it asks 7, the next node past 6.  A confirmer that
 * answers (heard recently) is asked on. */
static void suspicion_goes_past_a_silent_confirmer(void **state)
{
    (void)state;
    struct node *n = fake_node_new(4, 8, 1, NULL);
    n->cfg.failure_timeout_ms = 40; /* interval 10 ms */
    fake_node_add(n, &part_heartbeat);
    settle(n);
    int64_t death = node_now_ms(n);
    /* last_suspect NODE : the suspect named by the last MSG_SUSPECT, to whom it went. */
    struct rbuf r;
    uint32_t to = 0, about = 0;
#define LAST_SUSPECT()                                                                     \
    do {                                                                                   \
        size_t k = fake_msgs(n, MSG_SUSPECT);                                              \
        assert_true(k > 0);                                                                \
        struct fake_msg *m = fake_msg(n, MSG_SUSPECT, k - 1);                              \
        rbuf_init(&r, m->body.data, m->body.len);                                          \
        to = m->peer;                                                                      \
        about = rbuf_u32(&r);                                                              \
    } while (0)
    /* Each step: 10 ms on, node 3 heard (alive), 5 and 6 silent since `death`. */
    int64_t asked_7_at = 0;
    for (int step = 1; step <= 12; step++) {
        n->mono += 10 * 1000000LL;
        n->heard_ms[3] = node_now_ms(n);
        fake_node_run_once(n, true);
        if (node_now_ms(n) - death <= 40)
            continue;
        LAST_SUSPECT();
        assert_int_equal(about, 5);
        if (to == 7) {
            asked_7_at = node_now_ms(n) - death;
            break;
        }
        assert_int_equal(to, 6);
    }
#undef LAST_SUSPECT
    /* Suspected past 40 ms, node 6 asked for a further 40 ms in vain, then node 7. */
    assert_true(asked_7_at >= 80);
    assert_int_equal(n->declared, 0);
    fake_node_free(n);

    /* The same, but node 6 answers every suspicion: it stays the one asked. */
    n = fake_node_new(4, 8, 1, NULL);
    n->cfg.failure_timeout_ms = 40;
    fake_node_add(n, &part_heartbeat);
    settle(n);
    death = node_now_ms(n);
    for (int step = 1; step <= 12; step++) {
        n->mono += 10 * 1000000LL;
        n->heard_ms[3] = n->heard_ms[6] = node_now_ms(n);
        fake_node_run_once(n, true);
    }
    size_t k = fake_msgs(n, MSG_SUSPECT);
    assert_true(k > 0);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(fake_msg(n, MSG_SUSPECT, i)->peer, 6);
    fake_node_free(n);
}

/* The suspect and the flags of the i-th MSG_SUSPECT `n` sent, and to whom. */
static void suspect_msg(struct node *n, size_t i, uint32_t *to, uint32_t *about, uint8_t *flags)
{
    struct fake_msg *m = fake_msg(n, MSG_SUSPECT, i);
    assert_non_null(m);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    *to = m->peer;
    *about = rbuf_u32(&r);
    *flags = rbuf_u8(&r);
    assert_true(rbuf_ok(&r));
}

/* Node 1 of 4 is killed: its watcher, node 0, loses the connection, tries again at once
 * and is refused: it suspects node 1 long before the timeout and asks node 2, node 1's
 * other neighbour.  Node 2 still hears nothing wrong: it tries to connect itself, and
 * declares the death when that is refused too.  A confirmer already refused confirms
 * on the spot. */
static void a_refused_neighbour_is_declared_before_the_timeout(void **state)
{
    (void)state;
    struct node *w = fake_node_new(0, 4, 1, NULL), *c = fake_node_new(2, 4, 1, NULL);
    w->cfg.failure_timeout_ms = c->cfg.failure_timeout_ms = 3000;
    fake_node_add(w, &part_heartbeat);
    fake_node_add(c, &part_heartbeat);
    settle(w);
    settle(c);
    w->mono += 5 * 1000000LL;
    c->mono = w->mono;
    fake_node_link(w, 1, NODE_LINK_LOST);
    assert_int_equal(w->probes[1], 1);
    assert_int_equal(fake_msgs(w, MSG_SUSPECT), 0);
    fake_node_link(w, 1, NODE_LINK_REFUSED);
    /* Heard 5 ms ago, far inside the 3 s timeout, and suspected all the same. */
    assert_int_equal(fake_msgs(w, MSG_SUSPECT), 1);
    uint32_t to, about;
    uint8_t flags;
    suspect_msg(w, 0, &to, &about, &flags);
    assert_int_equal(to, 2);
    assert_int_equal(about, 1);
    assert_int_equal(flags, PROTO_SUSPECT_REFUSED);
    /* One node's refusal is not a death. */
    assert_int_equal(w->declared, 0);
    /* The confirmer heard node 1 recently and has not been refused: it connects itself. */
    assert_int_equal(fake_node_pass(w, c, NULL), 1);
    assert_int_equal(c->declared, 0);
    assert_int_equal(c->probes[1], 1);
    c->mono += 2 * 1000000LL;
    fake_node_link(c, 1, NODE_LINK_REFUSED);
    assert_int_equal(c->declared, 1);
    assert_true(c->dead[1]);
    fake_node_free(c);

    /* A confirmer whose own connect was refused already confirms on delivery. */
    c = fake_node_new(2, 4, 1, NULL);
    c->cfg.failure_timeout_ms = 3000;
    fake_node_add(c, &part_heartbeat);
    settle(c);
    c->mono = w->mono;
    c->refused[1] = true;
    uint8_t p[5] = {1, 0, 0, 0, PROTO_SUSPECT_REFUSED};
    assert_int_equal(fake_node_deliver(c, 0, MSG_SUSPECT, p, sizeof p), 0);
    assert_int_equal(c->declared, 1);
    assert_true(c->dead[1]);
    fake_node_free(c);
    fake_node_free(w);
}

/* A stopped (SIGSTOP) neighbour keeps its connections and is never refused: nothing is
 * suspected before the timeout, however many checks run, and the suspicion that follows
 * the timeout says "silent", not "refused". */
static void a_silent_neighbour_waits_for_the_timeout(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 1, NULL);
    n->cfg.failure_timeout_ms = 40; /* interval 10 ms */
    fake_node_add(n, &part_heartbeat);
    settle(n);
    int64_t stop = node_now_ms(n);
    for (int step = 0; step < 4; step++) {
        n->mono += 9 * 1000000LL;
        n->heard_ms[3] = n->sent_ms[3] = node_now_ms(n);
        fake_node_run_once(n, true);
    }
    assert_true(node_now_ms(n) - stop < 40);
    assert_int_equal(fake_msgs(n, MSG_SUSPECT), 0);
    assert_int_equal(n->declared, 0);
    /* Past the timeout: suspected, and asked as silence. */
    for (int step = 0; step < 10 && fake_msgs(n, MSG_SUSPECT) == 0; step++) {
        n->mono += 9 * 1000000LL;
        n->heard_ms[3] = n->sent_ms[3] = node_now_ms(n);
        fake_node_run_once(n, true);
    }
    assert_true(node_now_ms(n) - stop > 40);
    uint32_t to, about;
    uint8_t flags;
    suspect_msg(n, 0, &to, &about, &flags);
    assert_int_equal(about, 1);
    assert_int_equal(to, 2);
    assert_int_equal(flags, 0);
    assert_int_equal(n->declared, 0);
    fake_node_free(n);
}

/* The confirmer's connection to the suspect is open and it hears it: a refused
 * suspicion is not confirmed, and a refusal that comes later than a timeout after the
 * question does not confirm it either. */
static void a_refused_suspicion_the_confirmer_cannot_back_declares_nothing(void **state)
{
    (void)state;
    struct node *c = fake_node_new(2, 4, 1, NULL);
    c->cfg.failure_timeout_ms = 40;
    fake_node_add(c, &part_heartbeat);
    settle(c);
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, 1);
    wbuf_put_u8(&b, PROTO_SUSPECT_REFUSED);
    for (int step = 0; step < 3; step++) {
        c->mono += 5 * 1000000LL;
        c->heard_ms[1] = c->heard_ms[3] = node_now_ms(c);
        assert_int_equal(fake_node_deliver(c, 0, MSG_SUSPECT, b.data, b.len), 0);
        fake_node_run_once(c, true);
    }
    assert_int_equal(c->declared, 0);
    assert_false(c->dead[1]);
    /* Asked last 5 ms ago; the refusal comes 60 ms later: the question is stale, and
     * node 1 was heard meanwhile. */
    c->mono += 60 * 1000000LL;
    c->heard_ms[1] = c->heard_ms[3] = node_now_ms(c) - 10;
    fake_node_link(c, 1, NODE_LINK_REFUSED);
    assert_int_equal(c->declared, 0);
    wbuf_fini(&b);
    fake_node_free(c);
}

/* A node that said it is stopping on purpose is no crash: its watcher does not take its
 * closed and refused connections for a death, nor does a confirmer. */
static void a_stop_on_purpose_is_no_crash(void **state)
{
    (void)state;
    struct node *s = fake_node_new(1, 4, 1, NULL), *w = fake_node_new(0, 4, 1, NULL);
    s->cfg.failure_timeout_ms = w->cfg.failure_timeout_ms = 3000;
    fake_node_add(s, &part_heartbeat);
    fake_node_add(w, &part_heartbeat);
    settle(s);
    settle(w);
    /* Node 1's goodbye goes to both its watchers, 0 and 2. */
    fake_node_leaving(s);
    assert_int_equal(fake_msgs(s, MSG_HEARTBEAT), 2);
    for (size_t i = 0; i < 2; i++) {
        struct fake_msg *m = fake_msg(s, MSG_HEARTBEAT, i);
        assert_true(m->peer == 0 || m->peer == 2);
        assert_int_equal(m->body.len, 1);
        assert_int_equal(m->body.data[0], PROTO_BEAT_LEAVING);
    }
    assert_int_equal(fake_node_pass(s, w, NULL), 1);
    w->mono += 5 * 1000000LL;
    fake_node_link(w, 1, NODE_LINK_LOST);
    fake_node_link(w, 1, NODE_LINK_REFUSED);
    fake_node_run_once(w, true);
    assert_int_equal(fake_msgs(w, MSG_SUSPECT), 0);
    assert_int_equal(w->declared, 0);
    /* Asked by someone who did not hear the goodbye, it does not confirm on refusals. */
    uint8_t p[5] = {1, 0, 0, 0, PROTO_SUSPECT_REFUSED};
    assert_int_equal(fake_node_deliver(w, 3, MSG_SUSPECT, p, sizeof p), 0);
    assert_int_equal(w->declared, 0);
    fake_node_free(w);
    fake_node_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(beats_neighbours_it_had_nothing_for),
        cmocka_unit_test(suspected_neighbour_called_once_per_timeout),
        cmocka_unit_test(alone_with_the_suspect_declares_it),
        cmocka_unit_test(a_paused_watcher_suspects_nobody),
        cmocka_unit_test(confirmer_declares_only_if_silent_too),
        cmocka_unit_test(a_death_moves_the_watch_on),
        cmocka_unit_test(alone_watches_nobody),
        cmocka_unit_test(suspicion_goes_past_a_dead_confirmer),
        cmocka_unit_test(suspicion_goes_past_a_silent_confirmer),
        cmocka_unit_test(a_refused_neighbour_is_declared_before_the_timeout),
        cmocka_unit_test(a_silent_neighbour_waits_for_the_timeout),
        cmocka_unit_test(a_refused_suspicion_the_confirmer_cannot_back_declares_nothing),
        cmocka_unit_test(a_stop_on_purpose_is_no_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
