/*
 * test_part_leader — the leader/workers part (core/runtime/leader.c) on three fake nodes
 * configured with the lw preset: the leader's capacity is charged for its distribution
 * thread and the workers' is not, a worker forwards its movable tasks to the leader and
 * the leader keeps its own, a starving worker asks once until answered and repeats a
 * request left unanswered, the leader holds requests and answers them first come first
 * served from the head of its SReadyQ and each request only once, a grant fills the
 * worker's LReadyQ and frees it to ask again, a node that is not the leader ignores
 * requests, and malformed payloads are refused.  Deaths: when the leader dies the lowest
 * live node leads (workers ask and forward to it at once, it answers), and the leader
 * drops a dead worker's held request; a request that reaches the leader's successor
 * before it saw the leader die is no warning.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/net/proto.h"
#include "core/policy/lw.h"
#include "core/policy/preset.h"
#include "core/runtime/parts.h"
#include "fake_node.h"

#define NODES 3
/* Loop runs allowed for the 1 ms resend timer to fire.  Each run blocks until the next
 * timer and the part doubles its wait after every repeat, so a few runs also bound how
 * long the test can take when the repeat never comes. */
#define MAX_RUNS 10

static struct node *lw_node(uint32_t self, uint32_t nodes, uint32_t slots)
{
    struct node *n = fake_node_new(self, nodes, slots, NULL);
    assert_int_equal(preset_apply("lw", &n->cfg.steal, &n->cfg.placement), 0);
    fake_node_add(n, &part_leader);
    return n;
}

static int deliver_request(struct node *n, uint32_t from, uint32_t req, uint32_t want)
{
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, req);
    wbuf_put_u32(&b, want);
    int rc = fake_node_deliver(n, from, MSG_LW_REQUEST, b.data, b.len);
    wbuf_fini(&b);
    return rc;
}

/* A grant (or a forward, without `req`) of tasks with indexes first..first+count-1. */
static void put_tasks(struct wbuf *b, uint32_t first, uint32_t count)
{
    wbuf_put_u32(b, count);
    for (uint32_t i = 0; i < count; i++) {
        struct ntask *t = fake_task(first + i, true, 0, 0);
        proto_put_task(b, &t->spec);
        ntask_free(t);
    }
}

static int deliver_grant(struct node *n, uint32_t req, uint32_t first, uint32_t count)
{
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, req);
    put_tasks(&b, first, count);
    int rc = fake_node_deliver(n, LW_LEADER, MSG_LW_GRANT, b.data, b.len);
    wbuf_fini(&b);
    return rc;
}

/* The i-th request captured on n: its id, and what it asks for. */
static uint32_t request_id(struct node *n, size_t i, uint32_t *want)
{
    struct fake_msg *m = fake_msg(n, MSG_LW_REQUEST, i);
    assert_non_null(m);
    assert_int_equal(m->peer, LW_LEADER);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    uint32_t req = rbuf_u32(&r);
    uint32_t w = rbuf_u32(&r);
    assert_true(rbuf_ok(&r));
    if (want)
        *want = w;
    return req;
}

/* The i-th grant captured on n: to whom, its request id, and its tasks' indexes. */
static uint32_t grant_of(struct node *n, size_t i, uint32_t *peer, uint32_t *req,
                         uint32_t *index, uint32_t max)
{
    struct fake_msg *m = fake_msg(n, MSG_LW_GRANT, i);
    assert_non_null(m);
    *peer = m->peer;
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    *req = rbuf_u32(&r);
    uint32_t count = rbuf_u32(&r);
    assert_true(count <= max);
    for (uint32_t k = 0; k < count; k++) {
        struct ntask *t = ntask_decode(&r);
        assert_non_null(t);
        index[k] = task_key_index(t->spec.key);
        ntask_free(t);
    }
    assert_true(rbuf_ok(&r));
    assert_int_equal(r.left, 0);
    return count;
}

static void queue_stealable(struct node *n, uint32_t first, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        fake_queue(n, NODE_SREADY, fake_task(first + i, true, 0, 0));
}

static void drop_queue(struct node *n, enum node_queue_id q)
{
    struct ntask *t;
    while ((t = readyq_pop(node_readyq(n, q))) != NULL)
        ntask_free(t);
}

static void configure_charges_the_leader_only(void **state)
{
    (void)state;
    struct lw_capacity four = lw_leader_capacity(4, 1);
    struct lw_capacity one = lw_leader_capacity(1, 1);
    struct node *leader = lw_node(LW_LEADER, NODES, 4);
    assert_int_equal(leader->cfg.slots, four.slots);
    assert_true(leader->cfg.slots < 4);
    assert_true(leader->cfg.speed == four.speed);
    struct node *small = lw_node(LW_LEADER, NODES, 1);
    assert_int_equal(small->cfg.slots, one.slots);
    assert_true(small->cfg.speed == one.speed);
    assert_true(small->cfg.speed < 1);
    struct node *worker = lw_node(1, NODES, 4);
    assert_int_equal(worker->cfg.slots, 4);
    assert_true(worker->cfg.speed == 1);
    /* Node 0 under another policy, or alone, leads nobody. */
    struct node *other = fake_node_new(LW_LEADER, NODES, 4, NULL);
    fake_node_add(other, &part_leader);
    assert_int_equal(other->cfg.slots, 4);
    struct node *alone = lw_node(LW_LEADER, 1, 4);
    assert_int_equal(alone->cfg.slots, 4);
    fake_node_free(leader);
    fake_node_free(small);
    fake_node_free(worker);
    fake_node_free(other);
    fake_node_free(alone);
}

static void worker_forwards_movable_tasks_to_the_leader(void **state)
{
    (void)state;
    struct node *worker = lw_node(1, NODES, 2);
    struct node *leader = lw_node(LW_LEADER, NODES, 2);
    node_share(worker, fake_task(7, true, 0, 0), worker->wall);
    /* Taken by the part (the task is freed: ASan would see a leak otherwise). */
    assert_int_equal(readyq_len(node_readyq(worker, NODE_SREADY)), 0);
    assert_int_equal(fake_traces(worker, TRACE_TASK_QUEUED_SHARED), 0);
    assert_int_equal(fake_msgs(worker, MSG_LW_FORWARD), 1);
    struct fake_msg *m = fake_msg(worker, MSG_LW_FORWARD, 0);
    assert_int_equal(m->peer, LW_LEADER);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    assert_int_equal(rbuf_u32(&r), 1);
    struct ntask *t = ntask_decode(&r);
    assert_non_null(t);
    assert_int_equal(t->spec.key, task_key(1, 7));
    ntask_free(t);
    /* At the leader it lands in SReadyQ, shared there with the worker as its source. */
    fake_node_pass(worker, leader, NULL);
    assert_int_equal(readyq_len(node_readyq(leader, NODE_SREADY)), 1);
    t = readyq_peek(node_readyq(leader, NODE_SREADY));
    assert_int_equal(t->spec.key, task_key(1, 7));
    assert_int_equal(fake_traces(leader, TRACE_TASK_QUEUED_SHARED), 1);
    assert_int_equal(leader->traces[0].peer, 1);
    /* The leader's own movable tasks stay in its own SReadyQ. */
    node_share(leader, fake_task(8, true, 0, 0), leader->wall);
    assert_int_equal(readyq_len(node_readyq(leader, NODE_SREADY)), 2);
    assert_int_equal(fake_msgs(leader, MSG_LW_FORWARD), 0);
    fake_node_free(worker);
    fake_node_free(leader);
}

static void starving_worker_asks_once_until_answered(void **state)
{
    (void)state;
    struct node *n = lw_node(2, NODES, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 1);
    uint32_t want;
    uint32_t first = request_id(n, 0, &want);
    /* One task per idle slot. */
    assert_int_equal(want, node_free_slots(n));
    assert_int_equal(n->c.steal_requests, 1);
    assert_int_equal(fake_traces(n, TRACE_STEAL_REQUEST), 1);
    fake_node_step(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 1);
    /* The grant goes to LReadyQ: under LW nobody takes tasks from a worker. */
    assert_int_equal(deliver_grant(n, first, 5, 1), 0);
    assert_int_equal(readyq_len(node_readyq(n, NODE_LREADY)), 1);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 0);
    assert_int_equal(n->c.steals_succeeded, 1);
    assert_int_equal(n->c.tasks_stolen, 1);
    /* Answered, but it has a task to run: no request. */
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 1);
    /* Starving again: a new request. */
    drop_queue(n, NODE_LREADY);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 2);
    uint32_t second = request_id(n, 1, NULL);
    assert_int_not_equal(second, first);
    /* An empty answer is a failed attempt, and frees it to ask again. */
    assert_int_equal(deliver_grant(n, second, 0, 0), 0);
    assert_int_equal(n->c.steal_fails, 1);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 3);
    /* An answer to an older request does not free it: one request out at a time. */
    assert_int_equal(deliver_grant(n, second, 0, 0), 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 3);
    fake_node_free(n);
}

static void unanswered_request_is_sent_again(void **state)
{
    (void)state;
    struct node *n = lw_node(1, NODES, 2);
    n->cfg.steal_timeout_ms = 1;
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 1);
    uint32_t want;
    uint32_t req = request_id(n, 0, &want);
    for (int i = 0; i < MAX_RUNS && fake_msgs(n, MSG_LW_REQUEST) < 2; i++)
        fake_node_run_once(n, true);
    /* One run of the loop may fire the 1 ms repeat twice on a slow machine. */
    assert_true(fake_msgs(n, MSG_LW_REQUEST) >= 2);
    /* The same request again, not a new one. */
    for (size_t i = 1; i < fake_msgs(n, MSG_LW_REQUEST); i++) {
        uint32_t want2;
        assert_int_equal(request_id(n, i, &want2), req);
        assert_int_equal(want2, want);
    }
    assert_int_equal(n->c.steal_requests, 1);
    /* Answered: the repeats stop (no timer is left, so the run returns at once). */
    assert_int_equal(deliver_grant(n, req, 1, 1), 0);
    size_t sent = fake_msgs(n, MSG_LW_REQUEST);
    fake_node_run_once(n, true);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), sent);
    fake_node_free(n);
}

static void leader_answers_held_requests_first_come_first_served(void **state)
{
    (void)state;
    struct node *n = lw_node(LW_LEADER, NODES, 2);
    assert_int_equal(deliver_request(n, 2, 1, 2), 0);
    assert_int_equal(deliver_request(n, 1, 1, 1), 0);
    /* Nothing to hand out yet: the requests are held, not refused. */
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_GRANT), 0);
    /* Two tasks: all of them to the first request, the second keeps waiting. */
    queue_stealable(n, 1, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_GRANT), 1);
    uint32_t peer, req, index[4];
    assert_int_equal(grant_of(n, 0, &peer, &req, index, 4), 2);
    assert_int_equal(peer, 2);
    assert_int_equal(req, 1);
    /* The head of SReadyQ: the oldest tasks. */
    assert_int_equal(index[0], 1);
    assert_int_equal(index[1], 2);
    queue_stealable(n, 3, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_GRANT), 2);
    assert_int_equal(grant_of(n, 1, &peer, &req, index, 4), 1);
    assert_int_equal(peer, 1);
    assert_int_equal(req, 1);
    assert_int_equal(index[0], 3);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 1);
    assert_int_equal(n->c.tasks_given, 3);
    assert_int_equal(fake_traces(n, TRACE_TASK_STOLEN_OUT), 3);
    /* Node 2's request again (a repeat after a lost message): answered already. */
    assert_int_equal(deliver_request(n, 2, 1, 2), 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_GRANT), 2);
    /* Its next request is a new one. */
    assert_int_equal(deliver_request(n, 2, 2, 2), 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_GRANT), 3);
    assert_int_equal(grant_of(n, 2, &peer, &req, index, 4), 1);
    assert_int_equal(peer, 2);
    assert_int_equal(req, 2);
    assert_int_equal(index[0], 4);
    fake_node_free(n);
}

static void node_that_does_not_lead_ignores_requests(void **state)
{
    (void)state;
    /* A worker with tasks of its own (so that it does not ask for more). */
    struct node *worker = lw_node(2, NODES, 2);
    queue_stealable(worker, 1, 2);
    assert_int_equal(deliver_request(worker, 1, 1, 1), 0);
    fake_node_step(worker);
    assert_int_equal(fake_msgs(worker, 0), 0);
    assert_int_equal(readyq_len(node_readyq(worker, NODE_SREADY)), 2);
    /* Node 0 under another policy is not a leader either. */
    struct node *other = fake_node_new(LW_LEADER, NODES, 2, NULL);
    fake_node_add(other, &part_leader);
    queue_stealable(other, 1, 2);
    assert_int_equal(deliver_request(other, 1, 1, 1), 0);
    fake_node_step(other);
    assert_int_equal(fake_msgs(other, 0), 0);
    fake_node_free(worker);
    fake_node_free(other);
}

static void malformed_payloads_are_refused(void **state)
{
    (void)state;
    struct node *leader = lw_node(LW_LEADER, NODES, 2);
    struct node *worker = lw_node(1, NODES, 2);
    struct wbuf b;
    /* Requests: empty, or without `want`. */
    assert_true(fake_node_deliver(leader, 1, MSG_LW_REQUEST, NULL, 0) < 0);
    wbuf_init(&b);
    wbuf_put_u32(&b, 1);
    assert_true(fake_node_deliver(leader, 1, MSG_LW_REQUEST, b.data, b.len) < 0);
    wbuf_fini(&b);
    /* Forwards: empty, an absurd count, a task cut short. */
    assert_true(fake_node_deliver(leader, 1, MSG_LW_FORWARD, NULL, 0) < 0);
    wbuf_init(&b);
    wbuf_put_u32(&b, PROTO_MAX_BATCH + 1);
    assert_true(fake_node_deliver(leader, 1, MSG_LW_FORWARD, b.data, b.len) < 0);
    wbuf_fini(&b);
    wbuf_init(&b);
    put_tasks(&b, 1, 1);
    assert_true(fake_node_deliver(leader, 1, MSG_LW_FORWARD, b.data, b.len - 1) < 0);
    wbuf_fini(&b);
    assert_int_equal(readyq_len(node_readyq(leader, NODE_SREADY)), 0);
    /* Grants: without a count, or with a task cut short. */
    fake_node_step(worker);
    uint32_t req = request_id(worker, 0, NULL);
    wbuf_init(&b);
    wbuf_put_u32(&b, req);
    assert_true(fake_node_deliver(worker, LW_LEADER, MSG_LW_GRANT, b.data, b.len) < 0);
    put_tasks(&b, 1, 1);
    assert_true(fake_node_deliver(worker, LW_LEADER, MSG_LW_GRANT, b.data, b.len - 1) < 0);
    wbuf_fini(&b);
    assert_int_equal(readyq_len(node_readyq(worker, NODE_LREADY)), 0);
    /* A refused grant answers nothing: the worker still waits, and asks no more. */
    fake_node_step(worker);
    assert_int_equal(fake_msgs(worker, MSG_LW_REQUEST), 1);
    /* Both parts still work: the worker's request reaches the leader, is answered, and
     * the grant fills the worker's LReadyQ. */
    fake_node_pass(worker, leader, NULL);
    queue_stealable(leader, 1, 1);
    fake_node_step(leader);
    assert_int_equal(fake_msgs(leader, MSG_LW_GRANT), 1);
    fake_node_pass(leader, worker, NULL);
    assert_int_equal(readyq_len(node_readyq(worker, NODE_LREADY)), 1);
    fake_node_free(leader);
    fake_node_free(worker);
}

/* ---- deaths ------------------------------------------------------------------------- */

/* The i-th request captured on n: where it went, and its id. */
static uint32_t request_to(struct node *n, size_t i, uint32_t *peer)
{
    struct fake_msg *m = fake_msg(n, MSG_LW_REQUEST, i);
    assert_non_null(m);
    *peer = m->peer;
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    uint32_t req = rbuf_u32(&r);
    (void)rbuf_u32(&r);
    assert_true(rbuf_ok(&r));
    return req;
}

/*
 * Five nodes, node 1 dead first (a worker: nothing changes), then the leader: the lowest
 * live id (2, not the next id) leads.  A worker whose request was out to the dead leader
 * asks the new one in its next step, with a new request; its repeats and its forwards go
 * there too, and the new leader's grant frees it.
 */
static void dead_leader_passes_to_the_lowest_live(void **state)
{
    (void)state;
    struct node *n = lw_node(3, 5, 2);
    n->cfg.steal_timeout_ms = 1;
    fake_node_kill(n, 1);
    fake_node_step(n);
    uint32_t peer;
    uint32_t first = request_to(n, 0, &peer);
    assert_int_equal(peer, LW_LEADER);
    fake_node_kill(n, LW_LEADER);
    fake_msgs_clear(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 1);
    uint32_t second = request_to(n, 0, &peer);
    assert_int_equal(peer, 2);
    assert_int_not_equal(second, first);
    assert_int_equal(n->c.steal_requests, 2);
    /* Unanswered, it is repeated to the new leader only. */
    for (int i = 0; i < MAX_RUNS && fake_msgs(n, MSG_LW_REQUEST) < 2; i++)
        fake_node_run_once(n, true);
    /* One run of the loop may fire the 1 ms repeat twice on a slow machine. */
    assert_true(fake_msgs(n, MSG_LW_REQUEST) >= 2);
    for (size_t i = 1; i < fake_msgs(n, MSG_LW_REQUEST); i++) {
        assert_int_equal(request_to(n, i, &peer), second);
        assert_int_equal(peer, 2);
    }
    /* Its movable tasks go to the new leader. */
    node_share(n, fake_task(9, true, 0, 0), n->wall);
    assert_int_equal(fake_msgs(n, MSG_LW_FORWARD), 1);
    assert_int_equal(fake_msg(n, MSG_LW_FORWARD, 0)->peer, 2);
    for (size_t i = 0; i < n->nmsgs; i++)
        assert_true(n->msgs[i].peer != LW_LEADER && n->msgs[i].peer != 1);
    /* The new leader's grant answers it: no more repeats, and the next request (once
     * starving again) goes to node 2 as well. */
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, second);
    put_tasks(&b, 5, 1);
    assert_int_equal(fake_node_deliver(n, 2, MSG_LW_GRANT, b.data, b.len), 0);
    wbuf_fini(&b);
    assert_int_equal(n->c.steals_succeeded, 1);
    drop_queue(n, NODE_LREADY);
    fake_msgs_clear(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 1);
    assert_int_not_equal(request_to(n, 0, &peer), second);
    assert_int_equal(peer, 2);
    fake_node_free(n);
}

/* The worker that becomes the leader stops asking and answers the others' requests from
 * its SReadyQ, and keeps its own movable tasks. */
/* A request delivered to n from `from`, and the warnings it logged. */
static bool request_warns(struct node *n, uint32_t from)
{
    char text[512] = "";
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *tmp = tmpfile();
    assert_true(saved >= 0);
    assert_non_null(tmp);
    assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
    assert_int_equal(deliver_request(n, from, 7, 1), 0);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    rewind(tmp);
    size_t len = fread(text, 1, sizeof text - 1, tmp);
    text[len] = '\0';
    fclose(tmp);
    return strstr(text, "WARN") != NULL;
}

/* A worker that saw the leader die before its successor did asks the successor, which
 * does not lead yet: a failover's normal course, not worth a warning (the worker asks
 * again).  A request to a node that would not lead even then is one. */
static void request_before_the_leaders_death_is_seen_is_no_warning(void **state)
{
    (void)state;
    enum log_level level = log_get_level();
    log_set_level(LOG_LEVEL_WARN);
    struct node *successor = lw_node(1, 4, 2), *other = lw_node(2, 4, 2);
    queue_stealable(successor, 1, 2);
    queue_stealable(other, 1, 2);
    assert_false(request_warns(successor, 3));
    assert_true(request_warns(other, 3));
    /* Once node 1 is dead too, node 2 is next in line. */
    fake_node_kill(other, 1);
    assert_false(request_warns(other, 3));
    fake_node_free(successor);
    fake_node_free(other);
    log_set_level(level);
}

static void new_leader_answers_requests(void **state)
{
    (void)state;
    struct node *n = lw_node(2, 5, 2);
    n->cfg.steal_timeout_ms = 1;
    fake_node_kill(n, 1);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 1);
    /* Not the leader yet: a request is ignored. */
    assert_int_equal(deliver_request(n, 4, 1, 1), 0);
    fake_node_kill(n, LW_LEADER);
    fake_msgs_clear(n);
    /* Its own request is dropped with its repeats: no timer is left to send one. */
    fake_node_run_once(n, true);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_REQUEST), 0);
    node_share(n, fake_task(9, true, 0, 0), n->wall);
    assert_int_equal(fake_msgs(n, MSG_LW_FORWARD), 0);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 1);
    assert_int_equal(deliver_request(n, 4, 2, 1), 0);
    assert_int_equal(deliver_request(n, 3, 1, 2), 0);
    queue_stealable(n, 1, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_GRANT), 2);
    uint32_t peer, req, index[4];
    assert_int_equal(grant_of(n, 0, &peer, &req, index, 4), 1);
    assert_int_equal(peer, 4);
    assert_int_equal(req, 2);
    assert_int_equal(grant_of(n, 1, &peer, &req, index, 4), 2);
    assert_int_equal(peer, 3);
    assert_int_equal(req, 1);
    fake_node_free(n);
}

/* The leader drops the held request of a worker that died: its tasks go to the living. */
static void leader_drops_a_dead_workers_request(void **state)
{
    (void)state;
    struct node *n = lw_node(LW_LEADER, NODES, 2);
    assert_int_equal(deliver_request(n, 2, 1, 2), 0);
    assert_int_equal(deliver_request(n, 1, 1, 1), 0);
    fake_node_kill(n, 2);
    queue_stealable(n, 1, 1);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_GRANT), 1);
    uint32_t peer, req, index[4];
    assert_int_equal(grant_of(n, 0, &peer, &req, index, 4), 1);
    assert_int_equal(peer, 1);
    /* Nothing is held for node 2 any more: more tasks stay here. */
    queue_stealable(n, 2, 2);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_LW_GRANT), 1);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 2);
    fake_node_free(n);
}

int main(void)
{
    log_set_level(LOG_LEVEL_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(configure_charges_the_leader_only),
        cmocka_unit_test(worker_forwards_movable_tasks_to_the_leader),
        cmocka_unit_test(starving_worker_asks_once_until_answered),
        cmocka_unit_test(unanswered_request_is_sent_again),
        cmocka_unit_test(leader_answers_held_requests_first_come_first_served),
        cmocka_unit_test(node_that_does_not_lead_ignores_requests),
        cmocka_unit_test(malformed_payloads_are_refused),
        cmocka_unit_test(dead_leader_passes_to_the_lowest_live),
        cmocka_unit_test(new_leader_answers_requests),
        cmocka_unit_test(request_before_the_leaders_death_is_seen_is_no_warning),
        cmocka_unit_test(leader_drops_a_dead_workers_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
