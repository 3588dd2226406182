/*
 * test_part_thief — the thief part (core/runtime/thief.c) on a fake node of 8: a
 * starving node queries the victims the policy draws (never itself), asks the most
 * loaded one for tasks, ignores replies and grants of other attempts, fails on all-zero
 * loads and on a lost request and backs off, succeeds on its own grant, parks at the
 * bound telling every peer, and is unparked by a wake (or by news, only when parked);
 * with the information vector it asks the victim the A2WS plan or the ring window
 * names without any query; it stays silent when the node is not starving, when its
 * policy steals through another part, or alone.  Deaths (fake_node_kill): a queried
 * victim that dies counts as an empty reply at once, one that replied and died is not
 * asked, a request to a victim that dies fails at once, the dead are never asked nor told
 * of a park, and the A2WS and ring-window thieves skip them.  Truncated load replies are
 * refused.
 *
 * Timers fire for real on the fake's loop: every wait is 1 ms (steal_timeout_ms and
 * the poll interval), and a test runs the loop once to let one fire.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "core/net/proto.h"
#include "core/policy/a2ws.h"
#include "core/policy/steal.h"
#include "core/runtime/parts.h"
#include "fake_node.h"

#define NODES 8
#define SELF 3
#define MAX_VICTIMS 64

/* A starving node of NODES with 2 free slots and empty queues; cfg may still change. */
static struct node *starving_node(uint32_t self)
{
    struct node *n = fake_node_new(self, NODES, 2, NULL);
    n->cfg.steal_timeout_ms = 1;
    n->cfg.steal.poll_initial_ms = 1;
    return n;
}

/* The victims a fresh thief of this node draws first: the pure draw with its seed. */
static uint32_t expected_first_draw(const struct node *n, uint32_t *out)
{
    struct steal_state st;
    steal_state_init(&st, &n->cfg.steal, n->nodes);
    uint64_t rng = n->cfg.seed;
    return steal_pick_victims(&n->cfg.steal, &st, n->self, n->nodes, &rng, out, MAX_VICTIMS);
}

/* The captured load queries: their peers into victims[], the attempt id they carry. */
static uint32_t read_queries(struct node *n, uint32_t *victims, uint32_t *attempt)
{
    size_t k = fake_msgs(n, MSG_LOAD_QUERY);
    assert_true(k <= MAX_VICTIMS);
    for (size_t i = 0; i < k; i++) {
        struct fake_msg *m = fake_msg(n, MSG_LOAD_QUERY, i);
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        uint32_t req = rbuf_u32(&r);
        assert_true(rbuf_ok(&r));
        assert_int_equal(r.left, 0);
        if (i == 0)
            *attempt = req;
        assert_int_equal(req, *attempt);
        victims[i] = m->peer;
    }
    return (uint32_t)k;
}

static int reply(struct node *n, uint32_t from, uint32_t req, uint32_t sready)
{
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, req);
    wbuf_put_u32(&b, sready);
    wbuf_put_u32(&b, 0); /* lready */
    wbuf_put_u32(&b, 2); /* busy */
    wbuf_put_u32(&b, 2); /* slots */
    int rc = fake_node_deliver(n, from, MSG_LOAD_REPLY, b.data, b.len);
    wbuf_fini(&b);
    return rc;
}

struct request {
    uint32_t peer, req, max;
};

static void read_request(struct node *n, size_t i, struct request *q)
{
    struct fake_msg *m = fake_msg(n, MSG_STEAL_REQUEST, i);
    assert_non_null(m);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    q->peer = m->peer;
    q->req = rbuf_u32(&r);
    q->max = rbuf_u32(&r);
    assert_true(rbuf_ok(&r));
    assert_int_equal(r.left, 0);
}

/* The last recorded STEAL_FAIL's status, or -1. */
static int32_t last_fail_status(const struct node *n)
{
    for (size_t i = n->ntraces; i-- > 0;)
        if (n->traces[i].kind == TRACE_STEAL_FAIL)
            return n->traces[i].status;
    return -1;
}

/* Steps a starving thief and answers every query with load 0: one failed attempt. */
static void fail_one_attempt(struct node *n)
{
    fake_msgs_clear(n);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    uint32_t k = read_queries(n, victims, &attempt);
    assert_true(k > 0);
    for (uint32_t i = 0; i < k; i++)
        assert_int_equal(reply(n, victims[i], attempt, 0), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
}

/* Steps a starving thief until its request is out (replies: the first victim has 4
 * tasks); returns the request. */
static struct request reach_request(struct node *n)
{
    fake_msgs_clear(n);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    uint32_t k = read_queries(n, victims, &attempt);
    assert_true(k > 1);
    for (uint32_t i = 0; i < k; i++)
        assert_int_equal(reply(n, victims[i], attempt, i == 0 ? 4 : 0), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, victims[0]);
    assert_int_equal(q.req, attempt);
    return q;
}

static void starving_node_queries_the_drawn_victims(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    fake_node_add(n, &part_thief);
    uint32_t want[MAX_VICTIMS];
    uint32_t k = expected_first_draw(n, want);
    assert_true(k > 1);
    fake_node_step(n);
    uint32_t got[MAX_VICTIMS], attempt = 0;
    assert_int_equal(read_queries(n, got, &attempt), k);
    assert_int_equal(fake_msgs(n, 0), k);
    for (uint32_t i = 0; i < k; i++) {
        assert_int_not_equal(got[i], SELF);
        assert_true(got[i] < NODES);
        assert_int_equal(got[i], want[i]);
        for (uint32_t j = 0; j < i; j++)
            assert_int_not_equal(got[i], got[j]);
    }
    assert_int_equal(n->c.steals_attempted, 1);
    /* The attempt is under way: another pass starts nothing. */
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), k);
    assert_int_equal(n->c.steals_attempted, 1);
    fake_node_free(n);
}

static void replies_lead_to_the_most_loaded_victim(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    fake_node_add(n, &part_thief);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    uint32_t k = read_queries(n, victims, &attempt);
    assert_int_equal(k, 3);
    const uint32_t loads[3] = {1, 5, 2};
    assert_int_equal(reply(n, victims[0], attempt, loads[0]), 0);
    assert_int_equal(reply(n, victims[2], attempt, loads[2]), 0);
    /* Not every victim has answered yet. */
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    assert_int_equal(reply(n, victims[1], attempt, loads[1]), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, victims[1]);
    assert_int_equal(q.req, attempt);
    /* With the victim's amount policy the request carries no bound. */
    assert_int_equal(q.max, 0);
    assert_int_equal(n->c.steal_requests, 1);
    assert_int_equal(fake_traces(n, TRACE_STEAL_REQUEST), 1);
    for (size_t i = 0; i < n->ntraces; i++) {
        if (n->traces[i].kind != TRACE_STEAL_REQUEST)
            continue;
        assert_int_equal(n->traces[i].peer, victims[1]);
        assert_int_equal(n->traces[i].count, steal_amount(&n->cfg.steal, loads[1]));
    }
    fake_node_free(n);
}

static void stale_and_repeated_replies_ignored(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    fake_node_add(n, &part_thief);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    assert_int_equal(read_queries(n, victims, &attempt), 3);
    /* A reply to another attempt, however loaded, neither counts nor sets a load. */
    assert_int_equal(reply(n, victims[0], attempt + 1, 100), 0);
    assert_int_equal(reply(n, victims[0], attempt - 1, 100), 0);
    assert_int_equal(reply(n, victims[1], attempt, 5), 0);
    /* A second reply of the same victim does not stand for a missing one. */
    assert_int_equal(reply(n, victims[1], attempt, 5), 0);
    assert_int_equal(reply(n, victims[2], attempt, 2), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    assert_int_equal(reply(n, victims[0], attempt, 1), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, victims[1]);
    /* Late replies once the request is out change nothing. */
    assert_int_equal(reply(n, victims[2], attempt, 50), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    fake_node_free(n);
}

static void missing_replies_count_as_empty(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    fake_node_add(n, &part_thief);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    assert_int_equal(read_queries(n, victims, &attempt), 3);
    assert_int_equal(reply(n, victims[2], attempt, 3), 0);
    /* The other two never answer: the attempt's timeout decides on what came. */
    fake_node_run_once(n, true);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, victims[2]);
    fake_node_free(n);
}

static void all_zero_loads_fail_and_back_off(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    fake_node_add(n, &part_thief);
    fail_one_attempt(n);
    assert_int_equal(fake_traces(n, TRACE_STEAL_FAIL), 1);
    assert_int_equal(last_fail_status(n), STEAL_FAIL_NO_VICTIM);
    assert_int_equal(n->c.steal_fails, 1);
    assert_int_equal(n->c.steal_requests, 0);
    assert_int_equal(n->steal_failed, 1);
    /* Backing off: passes before the timer start nothing. */
    fake_msgs_clear(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    fake_node_run_once(n, true);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    assert_true(read_queries(n, victims, &attempt) > 0);
    assert_int_equal(attempt, 2);
    assert_int_equal(n->c.steals_attempted, 2);
    fake_node_free(n);
}

static void request_timeout_fails_waits_then_idles(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    /* A long back-off: the request's 1 ms timeout fires alone in the run below (two
     * 1 ms timers may both fall due in one run of the loop on a slow machine). */
    n->cfg.steal.poll_initial_ms = 10000;
    fake_node_add(n, &part_thief);
    reach_request(n);
    assert_int_equal(fake_traces(n, TRACE_STEAL_FAIL), 0);
    fake_node_run_once(n, true);
    assert_int_equal(fake_traces(n, TRACE_STEAL_FAIL), 1);
    assert_int_equal(last_fail_status(n), STEAL_FAIL_TIMEOUT);
    assert_int_equal(n->c.steal_fails, 1);
    assert_int_equal(n->steal_failed, 1);
    fake_msgs_clear(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    fake_node_expire_timers(n);
    fake_node_run_once(n, true);
    fake_node_step(n);
    assert_true(fake_msgs(n, MSG_LOAD_QUERY) > 0);
    assert_int_equal(n->c.steals_attempted, 2);
    fake_node_free(n);
}

static void own_grant_succeeds(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    void *th = fake_node_add(n, &part_thief);
    /* Widen the thief first (three failures), so that the success shows in the next
     * draw's size too. */
    for (int i = 0; i < 3; i++) {
        fail_one_attempt(n);
        fake_node_run_once(n, true);
    }
    struct request q = reach_request(n);
    uint32_t widened = (uint32_t)fake_msgs(n, MSG_LOAD_QUERY);
    part_thief.granted(th, q.peer, q.req, 2);
    assert_int_equal(n->c.steals_succeeded, 1);
    assert_int_equal(n->steal_failed, 3);
    /* Back to IDLE at once: the node (still starving here) may start the next attempt
     * in this very pass, with the base number of victims again. */
    fake_msgs_clear(n);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    uint32_t k = read_queries(n, victims, &attempt);
    uint32_t base[MAX_VICTIMS];
    assert_int_equal(k, expected_first_draw(n, base));
    assert_true(k < widened);
    assert_int_equal(attempt, q.req + 1);
    fake_node_free(n);
}

/* A grant's tasks (node_take_granted, steal_io.c, which the daemon runs too): one that
 * needs no data goes to SReadyQ and may move on; one with inputs stays here, in
 * LReadyQ, where no thief takes it while it waits for the fetch window. */
static void granted_tasks_with_inputs_stay(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 2, NULL);
    struct ntask *plain = fake_task(1, true, 0, 3), *data = fake_task(2, true, 4000000, 3);
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, 7);
    wbuf_put_u32(&b, 2);
    proto_put_task(&b, &plain->spec);
    proto_put_task(&b, &data->spec);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    uint32_t req, count;
    assert_int_equal(node_take_granted(n, 3, &r, NODE_SREADY, &req, &count, 1), 0);
    assert_int_equal(req, 7);
    assert_int_equal(count, 2);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 1);
    assert_int_equal(readyq_len(node_readyq(n, NODE_LREADY)), 1);
    void *kept = NULL;
    assert_int_equal(readyq_take_tail(node_readyq(n, NODE_LREADY), 1, &kept), 1);
    assert_int_equal(((struct ntask *)kept)->spec.input_bytes, 4000000);
    ntask_free(kept);
    ntask_free(plain);
    ntask_free(data);
    wbuf_fini(&b);
    fake_node_free(n);
}

static void other_grants_change_nothing(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    void *th = fake_node_add(n, &part_thief);
    struct request q = reach_request(n);
    part_thief.granted(th, q.peer, q.req + 1, 3);
    part_thief.granted(th, q.peer, q.req - 1, 3);
    assert_int_equal(n->c.steals_succeeded, 0);
    assert_int_equal(n->steal_failed, 0);
    fake_msgs_clear(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    /* The request is still the one pending: its timeout fires. */
    fake_node_run_once(n, true);
    assert_int_equal(last_fail_status(n), STEAL_FAIL_TIMEOUT);
    fake_node_free(n);
}

/* The victim had nothing left when the request came: the attempt failed. */
static void empty_grant_fails(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    void *th = fake_node_add(n, &part_thief);
    struct request q = reach_request(n);
    part_thief.granted(th, q.peer, q.req, 0);
    assert_int_equal(n->c.steals_succeeded, 0);
    assert_int_equal(n->steal_failed, 1);
    fake_msgs_clear(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    fake_node_run_once(n, true);
    fake_node_step(n);
    assert_true(fake_msgs(n, MSG_LOAD_QUERY) > 0);
    fake_node_free(n);
}

/* How many consecutive failures park a thief with these parameters (the pure rule). */
static uint32_t failures_to_park(const struct node *n)
{
    struct steal_state st;
    steal_state_init(&st, &n->cfg.steal, n->nodes);
    uint32_t f = 0;
    while (!st.parked && f < 100) {
        steal_on_result(&n->cfg.steal, &st, false, n->nodes);
        f++;
    }
    assert_true(st.parked);
    return f;
}

/* Fails attempts until the thief parks; returns how many it took. */
static uint32_t drive_to_park(struct node *n)
{
    uint32_t f = 0;
    while (f < 100) {
        fail_one_attempt(n);
        f++;
        if (fake_msgs(n, MSG_IDLE))
            break;
        fake_node_run_once(n, true);
    }
    return f;
}

static void parks_at_the_bound_and_tells_every_peer(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal.poll_max_ms = 4;
    fake_node_add(n, &part_thief);
    uint32_t want = failures_to_park(n);
    assert_true(want > 1);
    assert_int_equal(drive_to_park(n), want);
    assert_int_equal(n->c.steal_fails, want);
    assert_int_equal(fake_msgs(n, MSG_IDLE), NODES - 1);
    bool told[NODES] = {false};
    for (size_t i = 0; i < NODES - 1; i++) {
        struct fake_msg *m = fake_msg(n, MSG_IDLE, i);
        assert_int_not_equal(m->peer, SELF);
        assert_false(told[m->peer]);
        told[m->peer] = true;
        assert_int_equal(m->body.len, 0);
    }
    /* Parked: no timer, and passes start nothing. */
    fake_msgs_clear(n);
    fake_node_run_once(n, false);
    fake_node_step(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(n->c.steals_attempted, want);
    fake_node_free(n);
}

static void wake_unparks(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal.poll_max_ms = 4;
    fake_node_add(n, &part_thief);
    drive_to_park(n);
    fake_msgs_clear(n);
    node_wake(n);
    fake_node_step(n);
    /* Starts over with the base number of victims, widened or not before. */
    uint32_t victims[MAX_VICTIMS], base[MAX_VICTIMS], attempt = 0;
    assert_int_equal(read_queries(n, victims, &attempt), expected_first_draw(n, base));
    fake_node_free(n);
}

/* A part of the node may ask a parked thief to start over when it fails (FLDS). */
static void steal_failed_answer_restarts_a_parked_thief(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal.poll_max_ms = 4;
    n->steal_failed_answer = true;
    fake_node_add(n, &part_thief);
    uint32_t f = 0;
    for (; f < 10; f++) {
        fail_one_attempt(n);
        fake_node_run_once(n, true);
    }
    /* Never parked: no MSG_IDLE, every attempt went out. */
    assert_true(failures_to_park(n) < f);
    assert_int_equal(fake_msgs(n, MSG_IDLE), 0);
    assert_int_equal(n->c.steals_attempted, f);
    fake_node_free(n);
}

static void news_wakes_only_a_parked_thief(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal.poll_max_ms = 4;
    fake_node_add(n, &part_thief);
    /* Idle: nothing to wake. */
    node_news(n);
    assert_int_equal(n->wakes, 0);
    /* Backing off after a failure: news does not cut the wait short. */
    fail_one_attempt(n);
    fake_msgs_clear(n);
    node_news(n);
    assert_int_equal(n->wakes, 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    fake_node_run_once(n, true);
    /* Parked: news wakes the node, and the thief starts over. */
    drive_to_park(n);
    fake_msgs_clear(n);
    node_news(n);
    assert_int_equal(n->wakes, 1);
    fake_node_step(n);
    assert_true(fake_msgs(n, MSG_LOAD_QUERY) > 0);
    fake_node_free(n);
}

static void not_starving_sends_nothing(void **state)
{
    (void)state;
    for (int c = 0; c < 4; c++) {
        struct node *n = starving_node(SELF);
        fake_node_add(n, &part_thief);
        switch (c) {
        case 0: /* something to run here */
            fake_queue(n, NODE_LREADY, fake_task(1, false, 0, 0));
            break;
        case 1:
            fake_queue(n, NODE_SREADY, fake_task(1, true, 0, 0));
            break;
        case 2: /* no slot free */
            n->load.busy = n->cfg.slots;
            break;
        case 3: /* its own tasks are on the way */
            n->load.arriving = 1;
            break;
        }
        fake_node_step(n);
        assert_int_equal(fake_msgs(n, 0), 0);
        assert_int_equal(n->c.steals_attempted, 0);
        fake_node_free(n);
    }
}

static void off_with_token_leader_none_or_alone(void **state)
{
    (void)state;
    for (int c = 0; c < 5; c++) {
        struct node *n = c >= 3 ? fake_node_new(0, 1, 2, NULL) : starving_node(SELF);
        if (c == 0) {
            n->cfg.steal.victims = STEAL_VICTIMS_TOKEN;
            n->cfg.steal.info = STEAL_INFO_TOKEN;
        } else if (c == 1) {
            n->cfg.steal.victims = STEAL_VICTIMS_LEADER;
        } else if (c == 2) {
            n->cfg.steal.mode = STEAL_NONE;
        } else if (c == 4) {
            /* Alone with the A2WS parts: no plan could name a victim, and a thief that
             * tried would count and trace a failure every pass. */
            n->cfg.steal.starvation = STEAL_STARVE_PREEMPTIVE;
            n->cfg.steal.victims = STEAL_VICTIMS_A2WS;
            n->cfg.steal.amount = STEAL_AMOUNT_A2WS;
            n->cfg.steal.info = STEAL_INFO_RING;
        }
        fake_node_add(n, &part_thief);
        if (c == 4)
            fake_node_info_on(n, 0);
        fake_node_step(n);
        node_wake(n);
        node_news(n);
        fake_node_step(n);
        fake_node_run_once(n, false);
        assert_int_equal(fake_msgs(n, 0), 0);
        assert_int_equal(n->c.steals_attempted, 0);
        assert_int_equal(n->ntraces, 0);
        fake_node_free(n);
    }
}

/* One victim leaves nothing to compare: the request goes out without a query. */
static void single_victim_asked_straight_away(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal.victims = STEAL_VICTIMS_RANDOM;
    n->cfg.steal.victims_k = 1;
    fake_node_add(n, &part_thief);
    uint32_t want[MAX_VICTIMS];
    assert_int_equal(expected_first_draw(n, want), 1);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LOAD_QUERY), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, want[0]);
    assert_int_not_equal(q.peer, SELF);
    assert_int_equal(q.req, 1);
    fake_node_free(n);
}

static void entry(struct node *n, uint32_t j, double t_run, uint32_t tasks, uint32_t avail)
{
    n->vec.e[j] = (struct a2ws_entry){
        .t_run = t_run, .n = tasks, .avail = avail, .slots = 2, .version = 1};
}

/*
 * --info ring with sqrt victims: the victims are drawn from the ring window and their
 * loads read from the vector.  Every neighbour of the window is drawn (neighbours 4 of
 * a window of 4 others), so the most loaded of them is the only right answer; a node
 * outside the window is not asked however loaded.
 */
static void ring_window_asks_the_most_loaded_neighbour(void **state)
{
    (void)state;
    struct node *n = starving_node(0);
    n->cfg.steal.info = STEAL_INFO_RING;
    n->cfg.steal.neighbours = 4;
    fake_node_add(n, &part_thief);
    fake_node_info_on(n, 2);
    assert_int_equal(a2ws_window_others(&n->vec), 4);
    int32_t off;
    assert_true(a2ws_offset(&n->vec, 2, &off));
    assert_false(a2ws_offset(&n->vec, 4, &off));
    /* Loads are the stealable counts, not the tasks held (node 1 holds more). */
    entry(n, 6, 1.0, 3, 1);
    entry(n, 7, 1.0, 3, 2);
    entry(n, 1, 1.0, 9, 3);
    entry(n, 2, 1.0, 6, 4);
    entry(n, 4, 1.0, 200, 100);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LOAD_QUERY), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, 2);
    assert_int_equal(q.max, 0);
    assert_int_equal(n->c.steals_attempted, 1);
    fake_node_free(n);
}

/* The ring says nobody has stealable work: a failed attempt, no request. */
static void ring_window_without_work_fails(void **state)
{
    (void)state;
    struct node *n = starving_node(0);
    n->cfg.steal.info = STEAL_INFO_RING;
    fake_node_add(n, &part_thief);
    fake_node_info_on(n, 2);
    entry(n, 1, 1.0, 5, 0);
    entry(n, 7, 1.0, 5, 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(last_fail_status(n), STEAL_FAIL_NO_VICTIM);
    assert_int_equal(n->c.steal_fails, 1);
    fake_node_free(n);
}

/* The A2WS parts (as the a2ws preset sets them) on a node of 8 with a ring of radius 2. */
static struct node *a2ws_node(void)
{
    struct node *n = starving_node(0);
    n->cfg.steal.starvation = STEAL_STARVE_PREEMPTIVE;
    n->cfg.steal.victims = STEAL_VICTIMS_A2WS;
    n->cfg.steal.amount = STEAL_AMOUNT_A2WS;
    n->cfg.steal.info = STEAL_INFO_RING;
    fake_node_add(n, &part_thief);
    fake_node_info_on(n, 2);
    return n;
}

/*
 * Two loaded neighbours, only one with stealable tasks: the plan (a2ws_plan on the
 * same vector) names it, and the request asks it for the plan's amount, with no query.
 */
static void a2ws_asks_the_planned_victim(void **state)
{
    (void)state;
    struct node *n = a2ws_node();
    entry(n, 1, 1.0, 10, 10);
    entry(n, 2, 1.0, 10, 0);
    struct a2ws_now now = {.elapsed_s = node_info_elapsed_s(n), .starving = true};
    uint64_t rng = n->cfg.seed;
    struct a2ws_decision d = a2ws_plan(node_info(n), &now, &rng);
    assert_int_not_equal(d.criterion, A2WS_NO_STEAL);
    assert_int_equal(d.victim, 1);
    assert_true(d.amount >= 1 && d.amount <= 10);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LOAD_QUERY), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, 1);
    assert_int_equal(q.max, d.amount);
    assert_int_equal(q.req, 1);
    fake_node_free(n);
}

static void a2ws_without_stealable_work_fails(void **state)
{
    (void)state;
    struct node *n = a2ws_node();
    entry(n, 1, 1.0, 10, 0);
    entry(n, 2, 1.0, 10, 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(n->c.steals_attempted, 1);
    assert_int_equal(n->c.steal_fails, 1);
    assert_int_equal(last_fail_status(n), STEAL_FAIL_NO_VICTIM);
    fake_node_free(n);
}

/*
 * A2WS: the dead node's entry is emptied (by the node's vector), so the plan does not
 * name it however much it showed; and were a stale entry to show work there again, the
 * thief still does not ask it.
 */
static void a2ws_dead_victim_emptied_and_not_asked(void **state)
{
    (void)state;
    struct node *n = a2ws_node();
    entry(n, 1, 1.0, 10, 10);
    entry(n, 2, 1.0, 10, 0);
    fake_node_kill(n, 1);
    assert_int_equal(n->vec.e[1].n, 0);
    assert_int_equal(n->vec.e[1].avail, 0);
    assert_true(n->vec.e[1].t_run == 0);
    assert_int_equal(n->vec.e[1].dirty, 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    assert_int_equal(last_fail_status(n), STEAL_FAIL_NO_VICTIM);
    /* The plan on a vector that still shows work at node 1 names it... */
    entry(n, 1, 1.0, 10, 10);
    struct a2ws_now now = {.elapsed_s = node_info_elapsed_s(n), .starving = true};
    uint64_t rng = n->cfg.seed;
    struct a2ws_decision d = a2ws_plan(node_info(n), &now, &rng);
    assert_int_not_equal(d.criterion, A2WS_NO_STEAL);
    assert_int_equal(d.victim, 1);
    /* ...but the thief, its wait over, asks nobody. */
    fake_msgs_clear(n);
    fake_node_run_once(n, true);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    assert_int_equal(n->c.steal_fails, 2);
    fake_node_free(n);
}

/* ---- deaths ------------------------------------------------------------------------- */

static bool is_dead_peer(const struct node *n, uint32_t peer)
{
    return peer < n->nodes && n->dead[peer];
}

/* A queried victim that dies answers nothing: it counts as an empty reply, and the
 * attempt decides on the others' replies at once, not at its timeout. */
static void queried_victim_that_dies_counts_as_empty(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal_timeout_ms = 60000; /* a decision here cannot be the timeout's */
    fake_node_add(n, &part_thief);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    assert_int_equal(read_queries(n, victims, &attempt), 3);
    assert_int_equal(reply(n, victims[0], attempt, 0), 0);
    assert_int_equal(reply(n, victims[1], attempt, 4), 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    fake_node_kill(n, victims[2]);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, victims[1]);
    assert_int_equal(q.req, attempt);
    assert_int_equal(fake_traces(n, TRACE_STEAL_FAIL), 0);
    fake_node_free(n);

    /* Every queried victim dies: nobody is left with work, a failed attempt now. */
    n = starving_node(SELF);
    n->cfg.steal_timeout_ms = 60000;
    fake_node_add(n, &part_thief);
    fake_node_step(n);
    assert_int_equal(read_queries(n, victims, &attempt), 3);
    for (uint32_t i = 0; i < 3; i++)
        fake_node_kill(n, victims[i]);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    assert_int_equal(n->c.steal_fails, 1);
    assert_int_equal(last_fail_status(n), STEAL_FAIL_NO_VICTIM);
    assert_int_equal(n->steal_failed, 1);
    fake_node_free(n);
}

/*
 * A victim that replied with a load and then died before the others replied: its load
 * must not win the decision, or the request goes to a dead node and the attempt waits
 * out its timeout for nothing.
 */
static void victim_that_replied_then_died_is_not_asked(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal_timeout_ms = 60000;
    fake_node_add(n, &part_thief);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    assert_int_equal(read_queries(n, victims, &attempt), 3);
    assert_int_equal(reply(n, victims[0], attempt, 9), 0);
    fake_msgs_clear(n); /* the query it answered was sent while it lived */
    fake_node_kill(n, victims[0]);
    assert_int_equal(reply(n, victims[1], attempt, 0), 0);
    assert_int_equal(reply(n, victims[2], attempt, 2), 0);
    for (size_t i = 0; i < n->nmsgs; i++)
        assert_false(is_dead_peer(n, n->msgs[i].peer));
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, victims[2]);
    fake_node_free(n);
}

/* The victim of the request out dies: the attempt fails now (traced, counted, backing
 * off), not at its timeout; a death elsewhere changes nothing. */
static void requested_victim_that_dies_fails_at_once(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal_timeout_ms = 60000;
    fake_node_add(n, &part_thief);
    struct request q = reach_request(n);
    uint32_t other = 0;
    while (other == SELF || other == q.peer)
        other++;
    fake_node_kill(n, other);
    assert_int_equal(n->c.steal_fails, 0);
    assert_int_equal(n->steal_failed, 0);
    fake_node_kill(n, q.peer);
    assert_int_equal(n->c.steal_fails, 1);
    assert_int_equal(n->steal_failed, 1);
    assert_int_equal(fake_traces(n, TRACE_STEAL_FAIL), 1);
    for (size_t i = n->ntraces; i-- > 0;) {
        if (n->traces[i].kind != TRACE_STEAL_FAIL)
            continue;
        assert_int_equal(n->traces[i].peer, q.peer);
        break;
    }
    /* Backing off: a pass starts nothing before the wait (1 ms) ends. */
    fake_msgs_clear(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    fake_node_run_once(n, true);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    uint32_t k = read_queries(n, victims, &attempt);
    assert_int_equal(attempt, q.req + 1);
    for (uint32_t i = 0; i < k; i++)
        assert_false(is_dead_peer(n, victims[i]));
    fake_node_free(n);
}

/*
 * Many attempts on 8 nodes with 3 dead, the policies drawing victims at random from all
 * ids: no query and no request ever goes to a dead node.  Attempts alternate success and
 * failure (so that the sqrt draw widens too); a part that restarts a parked thief keeps
 * it from parking, whose MSG_IDLE is another test's.  The draw did pick the dead: some
 * attempts asked fewer victims than the policy draws.
 */
static void dead_nodes_are_never_asked(void **state)
{
    (void)state;
    static const uint32_t dead[] = {0, 5, 6};
    for (int policy = 0; policy < 2; policy++) {
        struct node *n = starving_node(SELF);
        n->cfg.steal.poll_max_ms = 4;
        n->steal_failed_answer = true;
        uint32_t draw = 3;
        if (policy == 0) {
            n->cfg.steal.victims = STEAL_VICTIMS_RANDOM;
            n->cfg.steal.victims_k = draw;
        }
        void *th = fake_node_add(n, &part_thief);
        for (size_t i = 0; i < sizeof dead / sizeof dead[0]; i++)
            fake_node_kill(n, dead[i]);
        uint32_t attempts = 0, short_draws = 0, asked = 0;
        for (int pass = 0; pass < 1000 && attempts < 100; pass++) {
            fake_msgs_clear(n);
            fake_node_step(n);
            for (size_t i = 0; i < n->nmsgs; i++)
                assert_false(is_dead_peer(n, n->msgs[i].peer));
            uint32_t victims[MAX_VICTIMS], attempt = 0;
            uint32_t k = read_queries(n, victims, &attempt);
            bool failed = false;
            for (uint32_t i = 0; i < k; i++)
                asked |= 1u << victims[i];
            if (k) {
                attempts++;
                if (policy == 0 && k < draw)
                    short_draws++;
                bool give = attempts % 2 == 0;
                for (uint32_t i = 0; i < k; i++)
                    assert_int_equal(reply(n, victims[i], attempt, give && i == 0 ? 2 : 0), 0);
                failed = !give;
            }
            if (fake_msgs(n, MSG_STEAL_REQUEST)) {
                struct request q;
                read_request(n, 0, &q);
                assert_false(is_dead_peer(n, q.peer));
                asked |= 1u << q.peer;
                if (!k) {
                    attempts++;
                    short_draws += policy == 0;
                }
                bool give = attempts % 2 == 0;
                part_thief.granted(th, q.peer, q.req, give ? 1 : 0);
                failed = !give;
            }
            for (size_t i = 0; i < n->nmsgs; i++)
                assert_false(is_dead_peer(n, n->msgs[i].peer));
            /* A failure backs off: its timer (at most poll_max_ms) ends the wait. */
            if (failed)
                fake_node_run_once(n, true);
        }
        assert_int_equal(attempts, 100);
        /* Every live node but itself was asked at some point, and no dead one. */
        assert_int_equal(asked, (1u << 1) | (1u << 2) | (1u << 4) | (1u << 7));
        if (policy == 0)
            assert_true(short_draws > 0);
        fake_node_free(n);
    }
}

/* A parked thief tells its peers, but not the dead: the node sends them nothing more. */
static void parking_tells_only_the_living(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    n->cfg.steal.poll_max_ms = 4;
    fake_node_add(n, &part_thief);
    fake_node_kill(n, 5);
    drive_to_park(n);
    assert_int_equal(fake_msgs(n, MSG_IDLE), NODES - 2);
    for (size_t i = 0; i < fake_msgs(n, MSG_IDLE); i++)
        assert_int_not_equal(fake_msg(n, MSG_IDLE, i)->peer, 5);
    fake_node_free(n);
}

/* --info ring: a dead node in the window is not asked, even if the vector still showed
 * work there (a stale entry); the most loaded live one is. */
static void ring_window_skips_the_dead(void **state)
{
    (void)state;
    struct node *n = starving_node(0);
    n->cfg.steal.info = STEAL_INFO_RING;
    n->cfg.steal.neighbours = 4;
    fake_node_add(n, &part_thief);
    fake_node_info_on(n, 2);
    fake_node_kill(n, 2);
    entry(n, 6, 1.0, 3, 1);
    entry(n, 7, 1.0, 3, 2);
    entry(n, 1, 1.0, 9, 3);
    entry(n, 2, 1.0, 6, 100);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 1);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, 1);
    fake_node_free(n);
}

static void malformed_load_reply_refused(void **state)
{
    (void)state;
    struct node *n = starving_node(SELF);
    fake_node_add(n, &part_thief);
    fake_node_step(n);
    uint32_t victims[MAX_VICTIMS], attempt = 0;
    assert_int_equal(read_queries(n, victims, &attempt), 3);
    /* A reply cut after its load: it says nothing, and must not count. */
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, attempt);
    wbuf_put_u32(&b, 100);
    wbuf_put_u32(&b, 0);
    wbuf_put_u32(&b, 0);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(fake_node_deliver(n, victims[i], MSG_LOAD_REPLY, b.data, b.len),
                         -EBADMSG);
    assert_true(fake_node_deliver(n, victims[0], MSG_LOAD_REPLY, b.data, 3) < 0);
    assert_true(fake_node_deliver(n, victims[0], MSG_LOAD_REPLY, NULL, 0) < 0);
    wbuf_fini(&b);
    assert_int_equal(fake_msgs(n, MSG_STEAL_REQUEST), 0);
    /* Still waiting for the three real answers. */
    assert_int_equal(reply(n, victims[0], attempt, 0), 0);
    assert_int_equal(reply(n, victims[1], attempt, 0), 0);
    assert_int_equal(reply(n, victims[2], attempt, 1), 0);
    struct request q;
    read_request(n, 0, &q);
    assert_int_equal(q.peer, victims[2]);
    fake_node_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(starving_node_queries_the_drawn_victims),
        cmocka_unit_test(replies_lead_to_the_most_loaded_victim),
        cmocka_unit_test(stale_and_repeated_replies_ignored),
        cmocka_unit_test(missing_replies_count_as_empty),
        cmocka_unit_test(all_zero_loads_fail_and_back_off),
        cmocka_unit_test(request_timeout_fails_waits_then_idles),
        cmocka_unit_test(own_grant_succeeds),
        cmocka_unit_test(other_grants_change_nothing),
        cmocka_unit_test(granted_tasks_with_inputs_stay),
        cmocka_unit_test(empty_grant_fails),
        cmocka_unit_test(parks_at_the_bound_and_tells_every_peer),
        cmocka_unit_test(wake_unparks),
        cmocka_unit_test(steal_failed_answer_restarts_a_parked_thief),
        cmocka_unit_test(news_wakes_only_a_parked_thief),
        cmocka_unit_test(not_starving_sends_nothing),
        cmocka_unit_test(off_with_token_leader_none_or_alone),
        cmocka_unit_test(single_victim_asked_straight_away),
        cmocka_unit_test(ring_window_asks_the_most_loaded_neighbour),
        cmocka_unit_test(ring_window_without_work_fails),
        cmocka_unit_test(a2ws_asks_the_planned_victim),
        cmocka_unit_test(a2ws_without_stealable_work_fails),
        cmocka_unit_test(malformed_load_reply_refused),
        cmocka_unit_test(a2ws_dead_victim_emptied_and_not_asked),
        cmocka_unit_test(queried_victim_that_dies_counts_as_empty),
        cmocka_unit_test(victim_that_replied_then_died_is_not_asked),
        cmocka_unit_test(requested_victim_that_dies_fails_at_once),
        cmocka_unit_test(dead_nodes_are_never_asked),
        cmocka_unit_test(parking_tells_only_the_living),
        cmocka_unit_test(ring_window_skips_the_dead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
