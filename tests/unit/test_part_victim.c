/*
 * test_part_victim — the victim part (core/runtime/victim.c) on a fake node: load
 * queries answered at once with the queue lengths; steal requests held until the step
 * (the progress rule's first half) and answered there in arrival order with the tail of
 * SReadyQ, bounded by the request and the amount policy; the progress rule's second
 * half (as many no-data tasks kept as there are free slots); a non-stealable task found
 * in SReadyQ repaired into LReadyQ; the waiting-time guard; what a grant tells the rest
 * of the node (node_answering first, then STOLEN_OUT traces, tasks_given and the
 * history appends to the metadata store); a thief declared dead before the step gets
 * no grant and its tasks stay; truncated payloads refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/parsec.h"
#include "core/runtime/parts.h"
#include "fake_node.h"

#define MAX_GRANT 64

/* A grant as the thief reads it. */
struct grant {
    uint32_t peer, req, count;
    uint32_t index[MAX_GRANT];  /* task indices, in the grant's order */
    uint64_t key[MAX_GRANT];
};

static void read_grant(struct node *n, size_t i, struct grant *g)
{
    struct fake_msg *m = fake_msg(n, MSG_STEAL_GRANT, i);
    assert_non_null(m);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    g->peer = m->peer;
    g->req = rbuf_u32(&r);
    g->count = rbuf_u32(&r);
    assert_true(rbuf_ok(&r));
    assert_true(g->count <= MAX_GRANT);
    for (uint32_t k = 0; k < g->count; k++) {
        struct task_spec spec;
        assert_int_equal(proto_get_task(&r, &spec), 0);
        g->key[k] = spec.key;
        g->index[k] = task_key_index(spec.key);
        proto_task_fini(&spec);
    }
    /* Nothing after the tasks: a thief would read trailing bytes as garbage. */
    assert_int_equal(r.left, 0);
}

static bool granted_index(const struct grant *g, uint32_t index)
{
    for (uint32_t k = 0; k < g->count; k++)
        if (g->index[k] == index)
            return true;
    return false;
}

static int ask(struct node *n, uint32_t from, uint32_t req, uint32_t max)
{
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, req);
    wbuf_put_u32(&b, max);
    int rc = fake_node_deliver(n, from, MSG_STEAL_REQUEST, b.data, b.len);
    wbuf_fini(&b);
    return rc;
}

/* A victim whose every slot runs a task: it keeps nothing for itself (steal_keep of no
 * free slot), so a grant shows the amount and the tail alone. */
static struct node *busy_victim(uint32_t nodes)
{
    struct node *n = fake_node_new(0, nodes, 2, NULL);
    n->load.busy = n->cfg.slots;
    return n;
}

static void load_query_answered_at_once(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 4, NULL);
    fake_node_add(n, &part_victim);
    n->load.busy = 3;
    for (uint32_t i = 1; i <= 3; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 0, 0));
    fake_queue(n, NODE_LREADY, fake_task(4, false, 0, 0));
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, 77);
    assert_int_equal(fake_node_deliver(n, 2, MSG_LOAD_QUERY, b.data, b.len), 0);
    wbuf_fini(&b);
    /* No step: the reply is written where the query is read. */
    assert_int_equal(fake_msgs(n, 0), 1);
    struct fake_msg *m = fake_msg(n, MSG_LOAD_REPLY, 0);
    assert_non_null(m);
    assert_int_equal(m->peer, 2);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    assert_int_equal(rbuf_u32(&r), 77); /* req */
    assert_int_equal(rbuf_u32(&r), 3);  /* sready */
    assert_int_equal(rbuf_u32(&r), 1);  /* lready */
    assert_int_equal(rbuf_u32(&r), 3);  /* busy */
    assert_int_equal(rbuf_u32(&r), 4);  /* slots */
    assert_true(rbuf_ok(&r));
    assert_int_equal(r.left, 0);
    /* A query takes nothing. */
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 3);
    fake_node_free(n);
}

static void steal_request_answered_in_the_step(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    for (uint32_t i = 1; i <= 4; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 100 * i, 1));
    uint32_t dirty = n->dirty;
    assert_int_equal(ask(n, 3, 41, 0), 0);
    /* Held: nothing sent, nothing taken, but the node knows a step is due. */
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 4);
    assert_true(n->dirty > dirty);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_GRANT), 1);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.peer, 3);
    assert_int_equal(g.req, 41);
    assert_int_equal(g.count, 2);
    /* Answered once: the next pass has no request left. */
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_GRANT), 1);
    fake_node_free(n);
}

static void grant_takes_the_tail_within_max_and_half(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    /* Input bytes are the priority: the tail is the tasks that need the least data. */
    for (uint32_t i = 1; i <= 8; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 100 * i, 1));
    struct grant g;

    /* The request's bound is below half of 8. */
    assert_int_equal(ask(n, 1, 1, 2), 0);
    fake_node_step(n);
    read_grant(n, 0, &g);
    assert_int_equal(g.count, 2);
    assert_true(granted_index(&g, 1) && granted_index(&g, 2));

    /* No bound: half of the 6 left, the least data first. */
    assert_int_equal(ask(n, 2, 2, 0), 0);
    fake_node_step(n);
    read_grant(n, 1, &g);
    assert_int_equal(g.count, 3);
    assert_true(granted_index(&g, 3) && granted_index(&g, 4) && granted_index(&g, 5));

    /* A bound above half does not raise the amount: half of 3 rounded up. */
    assert_int_equal(ask(n, 3, 3, 100), 0);
    fake_node_step(n);
    read_grant(n, 2, &g);
    assert_int_equal(g.count, 2);
    assert_true(granted_index(&g, 6) && granted_index(&g, 7));
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 1);
    assert_int_equal(task_key_index(((struct ntask *)readyq_peek(node_readyq(n, NODE_SREADY)))
                                        ->spec.key),
                     8);
    assert_int_equal(n->c.tasks_given, 7);
    fake_node_free(n);
}

static void amount_policy_single(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    n->cfg.steal.amount = STEAL_AMOUNT_SINGLE;
    fake_node_add(n, &part_victim);
    for (uint32_t i = 1; i <= 6; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 100 * i, 1));
    assert_int_equal(ask(n, 1, 9, 0), 0);
    fake_node_step(n);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.count, 1);
    assert_int_equal(g.index[0], 1);
    fake_node_free(n);
}

static void empty_sready_grants_nothing(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    fake_queue(n, NODE_LREADY, fake_task(1, false, 0, 0));
    assert_int_equal(ask(n, 2, 5, 0), 0);
    fake_node_step(n);
    /* The thief still gets its answer (it must not wait for a timeout). */
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.peer, 2);
    assert_int_equal(g.req, 5);
    assert_int_equal(g.count, 0);
    assert_int_equal(readyq_len(node_readyq(n, NODE_LREADY)), 1);
    assert_int_equal(n->c.tasks_given, 0);
    fake_node_free(n);
}

/* The progress rule: a victim with 2 free slots keeps 2 of its 3 no-data tasks. */
static void free_slots_keep_no_data_tasks(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 2, NULL);
    fake_node_add(n, &part_victim);
    for (uint32_t i = 1; i <= 3; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 0, 0));
    assert_int_equal(node_free_slots(n), 2);
    assert_int_equal(ask(n, 1, 1, 0), 0);
    fake_node_step(n);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.count, 1);
    /* The oldest ones start here: the grant is the third. */
    assert_int_equal(g.index[0], 3);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 2);

    /* Two tasks for two free slots: none to give. */
    assert_int_equal(ask(n, 2, 2, 0), 0);
    fake_node_step(n);
    read_grant(n, 1, &g);
    assert_int_equal(g.count, 0);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 2);

    /* A no-data task in LReadyQ takes one free slot first: one of SReadyQ's may go. */
    fake_queue(n, NODE_LREADY, fake_task(4, false, 0, 0));
    assert_int_equal(ask(n, 3, 3, 0), 0);
    fake_node_step(n);
    read_grant(n, 2, &g);
    assert_int_equal(g.count, 1);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 1);
    fake_node_free(n);
}

/* Tasks that need data wait for the fetch window, not for a slot: they stay stealable
 * even with free slots. */
static void free_slots_do_not_keep_data_tasks(void **state)
{
    (void)state;
    struct node *n = fake_node_new(0, 4, 2, NULL);
    fake_node_add(n, &part_victim);
    for (uint32_t i = 1; i <= 4; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 1000 * i, 1));
    assert_int_equal(ask(n, 1, 1, 0), 0);
    fake_node_step(n);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.count, 2);
    fake_node_free(n);
}

static void non_stealable_moved_to_lready(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    /* The non-stealable task needs the least data: the grant's tail reaches it. */
    struct ntask *pinned = fake_task(1, false, 100, 1);
    fake_queue(n, NODE_SREADY, pinned);
    for (uint32_t i = 2; i <= 4; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 100 * i, 1));
    assert_int_equal(ask(n, 1, 1, 0), 0);
    fake_node_step(n);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.count, 1);
    assert_int_equal(g.index[0], 2);
    assert_int_equal(readyq_len(node_readyq(n, NODE_LREADY)), 1);
    assert_ptr_equal(readyq_peek(node_readyq(n, NODE_LREADY)), pinned);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 2);
    assert_int_equal(n->c.tasks_given, 1);
    assert_int_equal(fake_traces(n, TRACE_TASK_STOLEN_OUT), 1);
    fake_node_free(n);
}

/* A victim that knows its task length keeps a task whose inputs would take longer to
 * move than the task would wait here; the same queue without the guard gives both. */
static void wait_guard_keeps_slow_transfers(void **state)
{
    (void)state;
    for (int guard = 0; guard <= 1; guard++) {
        struct node *n = busy_victim(4);
        n->cfg.steal.wait_guard = guard;
        n->cfg.steal.amount = STEAL_AMOUNT_CHUNK;
        n->cfg.steal.chunk = 8;
        n->cfg.placement.bandwidth_Bps = 1000;
        n->cfg.latency_ns = 0;
        n->load.est_samples = 1;
        n->load.est_task_length_s = 1.0;
        fake_node_add(n, &part_victim);
        fake_queue(n, NODE_SREADY, fake_task(1, true, 10, 1));
        fake_queue(n, NODE_SREADY, fake_task(2, true, 100000, 1));
        /* The premise, from the pure guard: 10 bytes move in time, 100 kB do not. */
        struct parsec_guard pg = {.ready = 2, .slots = 2, .avg_task_s = 1.0};
        pg.transfer_s = 10 / 1000.0;
        assert_true(parsec_guard_allows(&pg));
        pg.transfer_s = 100000 / 1000.0;
        assert_false(parsec_guard_allows(&pg));

        assert_int_equal(ask(n, 1, 1, 0), 0);
        fake_node_step(n);
        struct grant g;
        read_grant(n, 0, &g);
        if (guard) {
            assert_int_equal(g.count, 1);
            assert_int_equal(g.index[0], 1);
            assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 1);
        } else {
            assert_int_equal(g.count, 2);
            assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 0);
        }
        fake_node_free(n);
    }
}

/* Without a finished task the victim cannot estimate its wait and refuses nothing. */
static void wait_guard_without_estimate_refuses_nothing(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    n->cfg.steal.wait_guard = true;
    n->cfg.steal.amount = STEAL_AMOUNT_CHUNK;
    n->cfg.steal.chunk = 8;
    n->cfg.placement.bandwidth_Bps = 1000;
    fake_node_add(n, &part_victim);
    fake_queue(n, NODE_SREADY, fake_task(1, true, 100000, 1));
    fake_queue(n, NODE_SREADY, fake_task(2, true, 200000, 1));
    assert_int_equal(ask(n, 1, 1, 0), 0);
    fake_node_step(n);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.count, 2);
    fake_node_free(n);
}

/* A part of the test's own that records what the node had sent when it was told. */
struct probe {
    struct node *n;
    uint32_t calls, thief;
    size_t grants_then;
};

static void *probe_init(struct node *n, char **cause)
{
    (void)cause;
    struct probe *p = xcalloc(1, sizeof *p);
    p->n = n;
    return p;
}

static void probe_answering(void *state, uint32_t thief)
{
    struct probe *p = state;
    p->calls++;
    p->thief = thief;
    p->grants_then = fake_msgs(p->n, MSG_STEAL_GRANT);
}

static const struct part part_probe = {
    .name = "probe",
    .init = probe_init,
    .free = free,
    .answering = probe_answering,
};

static void answering_raised_before_the_grant(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    struct probe *p = fake_node_add(n, &part_probe);
    for (uint32_t i = 1; i <= 2; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 100 * i, 1));
    assert_int_equal(ask(n, 2, 1, 0), 0);
    assert_int_equal(p->calls, 0);
    fake_node_step(n);
    assert_int_equal(n->answering, 1);
    assert_int_equal(p->calls, 1);
    assert_int_equal(p->thief, 2);
    /* Told before the grant was written, so its messages go first in the frame. */
    assert_int_equal(p->grants_then, 0);
    assert_int_equal(fake_msgs(n, MSG_STEAL_GRANT), 1);
    fake_node_free(n);
}

static void granted_tasks_traced_counted_and_recorded(void **state)
{
    (void)state;
    const uint32_t thief = 2;
    struct node *n = busy_victim(4);
    n->cfg.steal.amount = STEAL_AMOUNT_CHUNK;
    n->cfg.steal.chunk = 8;
    fake_node_add(n, &part_victim);
    /* Tasks whose metadata another node owns: the history append becomes a message. */
    uint32_t queued = 0;
    for (uint32_t i = 1; queued < 3 && i < 1000; i++) {
        if (kvs_owner(n->kvs, task_key(1, i)) == node_self(n))
            continue;
        fake_queue(n, NODE_SREADY, fake_task(i, true, 100 * i, 1));
        queued++;
    }
    assert_int_equal(queued, 3);
    assert_int_equal(ask(n, thief, 7, 0), 0);
    fake_node_step(n);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.count, 3);
    assert_int_equal(n->c.tasks_given, 3);
    assert_int_equal(fake_traces(n, TRACE_TASK_STOLEN_OUT), 3);
    assert_int_equal(fake_msgs(n, MSG_KVS_APPEND), 3);
    for (uint32_t k = 0; k < g.count; k++) {
        bool traced = false, recorded = false;
        for (size_t t = 0; t < n->ntraces; t++) {
            const struct fake_trace *tr = &n->traces[t];
            if (tr->kind == TRACE_TASK_STOLEN_OUT && tr->task == g.key[k]) {
                assert_int_equal(tr->peer, thief);
                traced = true;
            }
        }
        for (size_t j = 0; j < fake_msgs(n, MSG_KVS_APPEND); j++) {
            struct fake_msg *m = fake_msg(n, MSG_KVS_APPEND, j);
            struct rbuf r;
            rbuf_init(&r, m->body.data, m->body.len);
            uint64_t key = rbuf_u64(&r);
            uint8_t field = rbuf_u8(&r);
            uint32_t node = rbuf_u32(&r);
            assert_true(rbuf_ok(&r));
            if (key != g.key[k])
                continue;
            assert_int_equal(m->peer, kvs_owner(n->kvs, key));
            assert_int_equal(field, KVS_FIELD_HISTORY);
            assert_int_equal(node, thief);
            recorded = true;
        }
        assert_true(traced);
        assert_true(recorded);
    }
    fake_node_free(n);
}

static void requests_answered_in_arrival_order(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    for (uint32_t i = 1; i <= 3; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 100 * i, 0));
    assert_int_equal(ask(n, 3, 30, 0), 0);
    assert_int_equal(ask(n, 1, 10, 0), 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_GRANT), 2);
    struct grant first, second;
    read_grant(n, 0, &first);
    read_grant(n, 1, &second);
    /* The first to ask gets half of three; the second half of what is left. */
    assert_int_equal(first.peer, 3);
    assert_int_equal(first.req, 30);
    assert_int_equal(first.count, 2);
    assert_int_equal(second.peer, 1);
    assert_int_equal(second.req, 10);
    assert_int_equal(second.count, 1);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 0);
    fake_node_free(n);
}

/* Many requests in one pass: the held list grows and none is lost. */
static void many_requests_in_one_pass(void **state)
{
    (void)state;
    struct node *n = busy_victim(64);
    fake_node_add(n, &part_victim);
    for (uint32_t i = 1; i <= 40; i++)
        assert_int_equal(ask(n, i, 1000 + i, 0), 0);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_GRANT), 40);
    for (uint32_t i = 0; i < 40; i++) {
        struct grant g;
        read_grant(n, i, &g);
        assert_int_equal(g.peer, i + 1);
        assert_int_equal(g.req, 1000 + i + 1);
    }
    fake_node_free(n);
}

static void malformed_payloads_refused(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    fake_queue(n, NODE_SREADY, fake_task(1, true, 100, 1));
    fake_queue(n, NODE_SREADY, fake_task(2, true, 200, 1));
    uint8_t bytes[8] = {0};
    assert_true(fake_node_deliver(n, 1, MSG_LOAD_QUERY, bytes, 3) < 0);
    assert_true(fake_node_deliver(n, 1, MSG_LOAD_QUERY, NULL, 0) < 0);
    assert_true(fake_node_deliver(n, 1, MSG_STEAL_REQUEST, bytes, 4) < 0);
    assert_true(fake_node_deliver(n, 1, MSG_STEAL_REQUEST, bytes, 7) < 0);
    assert_true(fake_node_deliver(n, 1, MSG_STEAL_REQUEST, NULL, 0) < 0);
    assert_int_equal(fake_node_deliver(n, 1, MSG_LOAD_QUERY, bytes, 3), -EBADMSG);
    /* Nothing answered, nothing held, nothing taken. */
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 2);
    /* Still usable. */
    assert_int_equal(ask(n, 2, 4, 0), 0);
    fake_node_step(n);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.peer, 2);
    assert_int_equal(g.count, 1);
    fake_node_free(n);
}

/* A thief that dies between its request and the step gets nothing: a grant to a dead
 * node would lose its tasks.  The other thief's request is still answered. */
static void dead_thief_not_answered(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    for (uint32_t i = 1; i <= 4; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 0, 0));
    assert_int_equal(ask(n, 3, 7, 0), 0);
    assert_int_equal(ask(n, 2, 8, 0), 0);
    fake_node_kill(n, 3);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, MSG_STEAL_GRANT), 1);
    for (size_t i = 0; i < n->nmsgs; i++)
        assert_int_not_equal(n->msgs[i].peer, 3);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.peer, 2);
    assert_int_equal(g.req, 8);
    assert_true(g.count > 0);
    /* What node 2 did not take stays, and only node 2 was told of a grant. */
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 4 - g.count);
    assert_int_equal(n->c.tasks_given, g.count);
    assert_int_equal(n->answering, 1);
    for (size_t i = 0; i < n->ntraces; i++)
        if (n->traces[i].kind == TRACE_TASK_STOLEN_OUT)
            assert_int_equal(n->traces[i].peer, 2);
    fake_node_free(n);
}

/* The only thief dies: nothing is granted, nothing leaves SReadyQ, and the next pass has
 * no request left to answer either. */
static void lone_dead_thief_takes_nothing(void **state)
{
    (void)state;
    struct node *n = busy_victim(4);
    fake_node_add(n, &part_victim);
    for (uint32_t i = 1; i <= 4; i++)
        fake_queue(n, NODE_SREADY, fake_task(i, true, 0, 0));
    assert_int_equal(ask(n, 1, 5, 0), 0);
    assert_int_equal(ask(n, 1, 6, 2), 0);
    fake_node_kill(n, 1);
    fake_node_step(n);
    fake_node_step(n);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(readyq_len(node_readyq(n, NODE_SREADY)), 4);
    assert_int_equal(n->c.tasks_given, 0);
    assert_int_equal(n->answering, 0);
    assert_int_equal(fake_traces(n, TRACE_TASK_STOLEN_OUT), 0);
    /* Still a victim for the living. */
    assert_int_equal(ask(n, 2, 9, 1), 0);
    fake_node_step(n);
    struct grant g;
    read_grant(n, 0, &g);
    assert_int_equal(g.peer, 2);
    assert_int_equal(g.count, 1);
    fake_node_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_query_answered_at_once),
        cmocka_unit_test(steal_request_answered_in_the_step),
        cmocka_unit_test(grant_takes_the_tail_within_max_and_half),
        cmocka_unit_test(amount_policy_single),
        cmocka_unit_test(empty_sready_grants_nothing),
        cmocka_unit_test(free_slots_keep_no_data_tasks),
        cmocka_unit_test(free_slots_do_not_keep_data_tasks),
        cmocka_unit_test(non_stealable_moved_to_lready),
        cmocka_unit_test(wait_guard_keeps_slow_transfers),
        cmocka_unit_test(wait_guard_without_estimate_refuses_nothing),
        cmocka_unit_test(answering_raised_before_the_grant),
        cmocka_unit_test(granted_tasks_traced_counted_and_recorded),
        cmocka_unit_test(requests_answered_in_arrival_order),
        cmocka_unit_test(many_requests_in_one_pass),
        cmocka_unit_test(malformed_payloads_refused),
        cmocka_unit_test(dead_thief_not_answered),
        cmocka_unit_test(lone_dead_thief_takes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
