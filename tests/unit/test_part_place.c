/*
 * test_part_place — the placement part (core/runtime/place.c) on a fake node: where
 * its `place` hook puts a task that just became ready under each policy (Algorithm 1
 * of paper 002, decided by core/policy/placement): shared tasks go through node_share
 * (so another part's offer hook may take them), pinned or data-local ones to LReadyQ,
 * and tasks whose big input is elsewhere are pushed to its holder (MSG_PUSH, a KVS
 * history entry, the task freed here); a PUSH received lands in LReadyQ for good; the
 * FLDS monitor spills stealable tasks, never pinned ones, from LReadyQ's tail to
 * SReadyQ; FLDS's reading of failed steals; malformed PUSH payloads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/kvs/kvs.h"
#include "core/net/proto.h"
#include "core/policy/placement.h"
#include "core/runtime/parts.h"
#include "fake_node.h"

#define BIG (1000u * 1000u * 1000u) /* 8 s at the default 1 Gbit/s: never cheap to move */

/* ---- helpers ----------------------------------------------------------------------- */

/* A node `self` of 4 under `policy`; a task here has run for 1 s on average, so that the
 * threshold policies compare real ratios rather than the "no estimate yet" infinity. */
static struct node *node_under(uint32_t self, enum placement_policy policy, void **place)
{
    struct node *n = fake_node_new(self, 4, 2, NULL);
    n->cfg.placement.policy = policy;
    n->load.est_samples = 1;
    n->load.est_task_length_s = 1.0;
    *place = fake_node_add(n, &part_place);
    return n;
}

static bool place(void *state, struct ntask *t)
{
    return part_place.place(state, t);
}

/* The i-th trace event of `kind`, or NULL. */
static const struct fake_trace *trace_of(const struct node *n, enum trace_kind kind,
                                         size_t i)
{
    for (size_t j = 0; j < n->ntraces; j++)
        if (n->traces[j].kind == kind && i-- == 0)
            return &n->traces[j];
    return NULL;
}

static bool queue_holds(const struct readyq *q, uint64_t key)
{
    for (size_t i = 0; i < readyq_len(q); i++)
        if (((const struct ntask *)readyq_at(q, i))->spec.key == key)
            return true;
    return false;
}

/* An index whose task's metadata lives on another node than n: the KVS history entry a
 * push appends then leaves as a message the fake node captures. */
static uint32_t index_owned_elsewhere(const struct node *n)
{
    for (uint32_t i = 1; i < 1000; i++)
        if (kvs_owner(n->kvs, task_key(1, i)) != n->self)
            return i;
    fail_msg("every key is owned by node %u", n->self);
    return 0;
}

static void put_push(struct wbuf *b, uint32_t count, struct ntask **tasks, uint32_t ntasks)
{
    wbuf_put_u32(b, count);
    for (uint32_t i = 0; i < ntasks; i++)
        proto_put_task(b, &tasks[i]->spec);
}

static void keepalive_cb(uv_timer_t *h)
{
    *(bool *)h->data = true;
}

/* Spins the loop until a referenced one-shot timer of 3 ms fires.  The place part's
 * monitor is unreferenced (it must not keep a finished daemon's loop alive), so a
 * blocking run with it alone would return at once; this keeps the loop alive, and
 * because the monitor (1 ms, started earlier) is due before this timer, libuv has run
 * it at least once by the time this one fires: an ordering, not a duration. */
static void run_monitor(struct node *n)
{
    uv_timer_t t;
    bool fired = false;
    uv_timer_init(&n->loop, &t);
    t.data = &fired;
    uv_timer_start(&t, keepalive_cb, 3, 0);
    for (int i = 0; i < 1000 && !fired; i++)
        fake_node_run_once(n, true);
    assert_true(fired);
    uv_close((uv_handle_t *)&t, NULL);
    fake_node_run_once(n, false); /* the close callback, before `t` leaves the stack */
}

/* ---- a part that takes what is offered (as an LW worker forwards to its leader) --- */

static struct taker {
    bool take;
    uint32_t offered;
    uint64_t keys[16];
} taker;

static void *taker_init(struct node *n, char **cause)
{
    (void)n;
    (void)cause;
    return &taker;
}

static bool taker_offer(void *state, struct ntask *t)
{
    struct taker *k = state;
    if (k->offered < 16)
        k->keys[k->offered] = t->spec.key;
    k->offered++;
    if (!k->take)
        return false;
    ntask_free(t);
    return true;
}

static const struct part part_taker = {
    .name = "taker",
    .init = taker_init,
    .offer = taker_offer,
};

/* ---- placement ---------------------------------------------------------------------- */

static void mlb_shares_stealable_and_keeps_pinned(void **state)
{
    (void)state;
    void *pl;
    struct node *n = node_under(0, PLACEMENT_MLB, &pl);
    struct ntask *free_task = fake_task(1, true, 0, 0);
    struct ntask *pinned = fake_task(2, false, 0, 0);
    /* MLB's threshold is infinite: even a big input elsewhere is no reason to push. */
    struct ntask *far = fake_task(3, true, BIG, 2);
    assert_true(place(pl, free_task));
    assert_true(place(pl, pinned));
    assert_true(place(pl, far));
    assert_int_equal(n->shared, 2);
    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 2);
    assert_true(queue_holds(&n->q[NODE_SREADY], task_key(1, 1)));
    assert_true(queue_holds(&n->q[NODE_SREADY], task_key(1, 3)));
    assert_int_equal(readyq_len(&n->q[NODE_LREADY]), 1);
    assert_true(queue_holds(&n->q[NODE_LREADY], task_key(1, 2)));
    assert_int_equal(fake_traces(n, TRACE_TASK_READY), 3);
    assert_int_equal(fake_traces(n, TRACE_TASK_QUEUED_SHARED), 2);
    assert_int_equal(fake_traces(n, TRACE_TASK_QUEUED_LOCAL), 1);
    assert_int_equal(fake_msgs(n, 0), 0);
    assert_int_equal(n->c.tasks_pushed, 0);
    fake_node_free(n);
}

static void big_input_elsewhere_is_pushed_to_its_holder(void **state)
{
    (void)state;
    const enum placement_policy policies[] = {PLACEMENT_MDL, PLACEMENT_RLDS,
                                              PLACEMENT_FLDS};
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
        void *pl;
        struct node *n = node_under(0, policies[p], &pl);
        uint32_t index = index_owned_elsewhere(n);
        uint64_t key = task_key(1, index);
        assert_true(place(pl, fake_task(index, true, BIG, 2)));

        /* Not queued here, not shared: sent, counted, traced. */
        assert_int_equal(readyq_len(&n->q[NODE_LREADY]), 0);
        assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 0);
        assert_int_equal(n->shared, 0);
        assert_int_equal(n->c.tasks_pushed, 1);
        const struct fake_trace *tr = trace_of(n, TRACE_TASK_PUSHED, 0);
        assert_non_null(tr);
        assert_int_equal(tr->task, key);
        assert_int_equal(tr->peer, 2);

        assert_int_equal(fake_msgs(n, MSG_PUSH), 1);
        struct fake_msg *m = fake_msg(n, MSG_PUSH, 0);
        assert_int_equal(m->peer, 2);
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        assert_int_equal(rbuf_u32(&r), 1);
        struct task_spec spec;
        assert_int_equal(proto_get_task(&r, &spec), 0);
        assert_int_equal(spec.key, key);
        assert_int_equal(spec.num_inputs, 1);
        assert_int_equal(spec.inputs[0].node, 2);
        assert_int_equal(spec.inputs[0].bytes, BIG);
        assert_true(spec.flags & TASK_FLAG_STEALABLE);
        proto_task_fini(&spec);
        assert_true(rbuf_ok(&r));
        assert_int_equal(r.left, 0);

        /* The task's history says where it went, at the owner of its metadata. */
        assert_int_equal(fake_msgs(n, MSG_KVS_APPEND), 1);
        m = fake_msg(n, MSG_KVS_APPEND, 0);
        assert_int_equal(m->peer, kvs_owner(n->kvs, key));
        rbuf_init(&r, m->body.data, m->body.len);
        assert_int_equal(rbuf_u64(&r), key);
        assert_int_equal(rbuf_u8(&r), KVS_FIELD_HISTORY);
        assert_int_equal(rbuf_u32(&r), 2);
        assert_true(rbuf_ok(&r));
        fake_node_free(n);
    }
}

static void threshold_decides_between_sharing_and_pushing(void **state)
{
    (void)state;
    /* 1000 bytes take 8 us at 1 Gbit/s against a 1 s task: RLDS (t = 0.5) shares the
     * task, MDL (t = 0) follows the data all the same. */
    void *pl;
    struct node *n = node_under(0, PLACEMENT_RLDS, &pl);
    assert_true(place(pl, fake_task(1, true, 1000, 2)));
    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 1);
    assert_int_equal(fake_msgs(n, MSG_PUSH), 0);
    fake_node_free(n);

    n = node_under(0, PLACEMENT_MDL, &pl);
    assert_true(place(pl, fake_task(1, true, 1000, 2)));
    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 0);
    assert_int_equal(fake_msgs(n, MSG_PUSH), 1);
    fake_node_free(n);
}

static void local_input_stays_in_lready(void **state)
{
    (void)state;
    const enum placement_policy policies[] = {PLACEMENT_MDL, PLACEMENT_RLDS,
                                              PLACEMENT_FLDS};
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
        void *pl;
        struct node *n = node_under(1, policies[p], &pl);
        assert_true(place(pl, fake_task(7, true, BIG, 1)));
        assert_int_equal(readyq_len(&n->q[NODE_LREADY]), 1);
        assert_true(queue_holds(&n->q[NODE_LREADY], task_key(1, 7)));
        assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 0);
        assert_int_equal(n->shared, 0);
        assert_int_equal(fake_msgs(n, 0), 0);
        const struct fake_trace *tr = trace_of(n, TRACE_TASK_QUEUED_LOCAL, 0);
        assert_non_null(tr);
        assert_int_equal(tr->peer, -1);
        fake_node_free(n);
    }
}

static void shared_task_is_offered_to_the_other_parts(void **state)
{
    (void)state;
    void *pl;
    struct node *n = node_under(0, PLACEMENT_MLB, &pl);
    memset(&taker, 0, sizeof taker);
    taker.take = true;
    fake_node_add(n, &part_taker);

    assert_true(place(pl, fake_task(1, true, 0, 0)));
    /* Taken: not in SReadyQ, not traced as shared here. */
    assert_int_equal(taker.offered, 1);
    assert_int_equal(taker.keys[0], task_key(1, 1));
    assert_int_equal(n->shared, 1);
    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 0);
    assert_int_equal(fake_traces(n, TRACE_TASK_QUEUED_SHARED), 0);

    /* A pinned task is never offered. */
    assert_true(place(pl, fake_task(2, false, 0, 0)));
    assert_int_equal(taker.offered, 1);
    assert_int_equal(readyq_len(&n->q[NODE_LREADY]), 1);

    /* Declined: the node shares it itself. */
    taker.take = false;
    assert_true(place(pl, fake_task(3, true, 0, 0)));
    assert_int_equal(taker.offered, 2);
    assert_int_equal(taker.keys[1], task_key(1, 3));
    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 1);
    assert_int_equal(fake_traces(n, TRACE_TASK_QUEUED_SHARED), 1);
    fake_node_free(n);
}

/* ---- pushes received ---------------------------------------------------------------- */

static void push_received_runs_here(void **state)
{
    (void)state;
    void *pl;
    /* MDL, and the inputs are on node 2: a fresh decision would push them on again. */
    struct node *n = node_under(1, PLACEMENT_MDL, &pl);
    struct ntask *tasks[2] = {fake_task(4, true, BIG, 2), fake_task(5, true, 0, 0)};
    struct wbuf b;
    wbuf_init(&b);
    put_push(&b, 2, tasks, 2);
    assert_int_equal(fake_node_deliver(n, 3, MSG_PUSH, b.data, b.len), 0);
    wbuf_fini(&b);
    ntask_free(tasks[0]);
    ntask_free(tasks[1]);

    assert_int_equal(readyq_len(&n->q[NODE_LREADY]), 2);
    assert_true(queue_holds(&n->q[NODE_LREADY], task_key(1, 4)));
    assert_true(queue_holds(&n->q[NODE_LREADY], task_key(1, 5)));
    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 0);
    assert_int_equal(n->shared, 0);
    assert_int_equal(fake_msgs(n, MSG_PUSH), 0);
    for (size_t i = 0; i < readyq_len(&n->q[NODE_LREADY]); i++) {
        const struct ntask *t = readyq_at(&n->q[NODE_LREADY], i);
        assert_int_equal(t->t_ready, n->wall);
    }
    assert_int_equal(fake_traces(n, TRACE_TASK_QUEUED_LOCAL), 2);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(trace_of(n, TRACE_TASK_QUEUED_LOCAL, i)->peer, 3);
    fake_node_free(n);
}

static void malformed_push_is_refused(void **state)
{
    (void)state;
    void *pl;
    struct node *n = node_under(1, PLACEMENT_FLDS, &pl);
    struct ntask *t = fake_task(6, true, 100, 1);
    struct wbuf b;

    assert_true(fake_node_deliver(n, 0, MSG_PUSH, NULL, 0) < 0);
    uint8_t three[3] = {1, 0, 0};
    assert_true(fake_node_deliver(n, 0, MSG_PUSH, three, sizeof three) < 0);

    /* A count past the batch limit is refused before anything is queued. */
    wbuf_init(&b);
    put_push(&b, PROTO_MAX_BATCH + 1, &t, 1);
    assert_true(fake_node_deliver(n, 0, MSG_PUSH, b.data, b.len) < 0);
    wbuf_fini(&b);
    assert_int_equal(readyq_len(&n->q[NODE_LREADY]), 0);

    /* A task cut short by one byte. */
    wbuf_init(&b);
    put_push(&b, 1, &t, 1);
    assert_true(fake_node_deliver(n, 0, MSG_PUSH, b.data, b.len - 1) < 0);
    wbuf_fini(&b);

    /* Fewer tasks than counted. */
    wbuf_init(&b);
    put_push(&b, 2, &t, 1);
    assert_true(fake_node_deliver(n, 0, MSG_PUSH, b.data, b.len) < 0);
    wbuf_fini(&b);

    /* Still usable: a good push lands. */
    size_t before = readyq_len(&n->q[NODE_LREADY]);
    wbuf_init(&b);
    put_push(&b, 1, &t, 1);
    assert_int_equal(fake_node_deliver(n, 0, MSG_PUSH, b.data, b.len), 0);
    wbuf_fini(&b);
    assert_int_equal(readyq_len(&n->q[NODE_LREADY]), before + 1);
    ntask_free(t);
    fake_node_free(n);
}

/* ---- FLDS --------------------------------------------------------------------------- */

/* An FLDS node whose monitor looks every millisecond (of the loop's time; passes are
 * due by the test's clock, which advances only when the test moves it), that started
 * its first task 10 s ago and has run 10 tasks: 1 task/s, so with the initial tt of
 * 10 s an LReadyQ of more than 10 tasks is too long. */
static struct node *flds_node(void **place_state)
{
    struct node *n = fake_node_new(0, 4, 2, NULL);
    n->cfg.placement.policy = PLACEMENT_FLDS;
    n->cfg.placement.monitor_interval_s = 0.001;
    *place_state = fake_node_add(n, &part_place);
    n->load.first_start_ns = n->mono - 10 * (int64_t)1000000000;
    n->load.tasks_run = 10;
    return n;
}

static void flds_monitor_spills_stealable_tail_only(void **state)
{
    (void)state;
    void *pl;
    struct node *n = flds_node(&pl);
    uint32_t tt_keep = (uint32_t)(n->cfg.placement.tt_initial_s * 1.0); /* 1 task/s */
    /* Pinned tasks needing no data sit at the very tail, where the monitor looks first;
     * stealable ones above them, each needing a little more data than the last. */
    const uint32_t pinned = 4, stealable = tt_keep;
    for (uint32_t i = 0; i < pinned; i++)
        fake_queue(n, NODE_LREADY, fake_task(100 + i, false, 0, 0));
    for (uint32_t i = 0; i < stealable; i++)
        fake_queue(n, NODE_LREADY, fake_task(200 + i, true, 1000 + i, 0));
    uint32_t len = pinned + stealable, excess = len - tt_keep;

    for (int i = 0; i < 100 && readyq_len(&n->q[NODE_SREADY]) == 0; i++)
        run_monitor(n);

    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), excess);
    assert_int_equal(readyq_len(&n->q[NODE_LREADY]), len - excess);
    assert_int_equal(n->shared, excess);
    assert_int_equal(fake_traces(n, TRACE_TASK_QUEUED_SHARED), excess);
    /* Every pinned task stayed; what moved is stealable and needed less data than
     * every stealable task that stayed. */
    for (uint32_t i = 0; i < pinned; i++)
        assert_true(queue_holds(&n->q[NODE_LREADY], task_key(1, 100 + i)));
    uint64_t least_kept = UINT64_MAX;
    for (size_t i = 0; i < readyq_len(&n->q[NODE_LREADY]); i++) {
        const struct ntask *t = readyq_at(&n->q[NODE_LREADY], i);
        if ((t->spec.flags & TASK_FLAG_STEALABLE) && t->spec.input_bytes < least_kept)
            least_kept = t->spec.input_bytes;
    }
    for (size_t i = 0; i < readyq_len(&n->q[NODE_SREADY]); i++) {
        const struct ntask *t = readyq_at(&n->q[NODE_SREADY], i);
        assert_true(t->spec.flags & TASK_FLAG_STEALABLE);
        assert_true(t->spec.input_bytes < least_kept);
    }
    fake_node_free(n);
}

static void flds_monitor_leaves_short_queue(void **state)
{
    (void)state;
    void *pl;
    struct node *n = flds_node(&pl);
    /* Exactly what runs within tt at 1 task/s. */
    uint32_t keep = (uint32_t)n->cfg.placement.tt_initial_s;
    for (uint32_t i = 0; i < keep; i++)
        fake_queue(n, NODE_LREADY, fake_task(i + 1, true, 1000 + i, 0));
    for (int i = 0; i < 3; i++) {
        n->mono += 1000000000; /* a pass due each time, the pace unchanged */
        n->load.first_start_ns = n->mono - 10 * (int64_t)1000000000;
        run_monitor(n);
    }
    assert_int_equal(readyq_len(&n->q[NODE_LREADY]), keep);
    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 0);
    assert_int_equal(n->shared, 0);
    fake_node_free(n);
}

static void flds_monitor_waits_for_the_first_task(void **state)
{
    (void)state;
    void *pl;
    struct node *n = flds_node(&pl);
    n->load.first_start_ns = 0; /* nothing ran here yet: no pace to judge the queue by */
    for (uint32_t i = 0; i < 50; i++)
        fake_queue(n, NODE_LREADY, fake_task(i + 1, true, 1000 + i, 0));
    run_monitor(n);
    assert_int_equal(readyq_len(&n->q[NODE_SREADY]), 0);
    /* Once a task started, the same queue spills. */
    n->load.first_start_ns = n->mono - 10 * (int64_t)1000000000;
    for (int i = 0; i < 100 && readyq_len(&n->q[NODE_SREADY]) == 0; i++)
        run_monitor(n);
    assert_true(readyq_len(&n->q[NODE_SREADY]) > 0);
    fake_node_free(n);
}

static void steal_failed_grows_tt_only_after_first_start(void **state)
{
    (void)state;
    /* Paper 000's rule: a failed steal doubles tt; a parked thief restarts while tt is
     * at most tt_resume_s (the initial tt). */
    void *pl;
    struct node *n = node_under(0, PLACEMENT_FLDS, &pl);
    n->load.first_start_ns = 0;
    for (int i = 0; i < 5; i++)
        assert_true(node_steal_failed(n, true)); /* tt did not grow: still resumable */
    assert_false(node_steal_failed(n, false));  /* not parked: nothing to restart */
    n->load.first_start_ns = n->mono;
    assert_false(node_steal_failed(n, false));  /* tt grows, the thief is not parked */
    assert_false(node_steal_failed(n, true));   /* tt has grown past tt_resume_s */
    fake_node_free(n);

    /* Paper 002's rule: a failed steal halves tt; resume at half the initial tt. */
    n = fake_node_new(0, 4, 2, NULL);
    n->cfg.placement.policy = PLACEMENT_FLDS;
    n->cfg.placement.tt_rule = FLDS_TT_DOUBLE_ON_MOVE;
    n->cfg.placement.tt_resume_s = n->cfg.placement.tt_initial_s / 2;
    fake_node_add(n, &part_place);
    for (int i = 0; i < 5; i++)
        assert_false(node_steal_failed(n, true)); /* tt did not fall */
    n->load.first_start_ns = n->mono;
    assert_false(node_steal_failed(n, false));   /* tt falls, but the thief is not parked */
    assert_true(node_steal_failed(n, true));
    fake_node_free(n);
}

static void steal_failed_is_flds_only(void **state)
{
    (void)state;
    const enum placement_policy policies[] = {PLACEMENT_WS, PLACEMENT_MLB, PLACEMENT_MDL,
                                              PLACEMENT_RLDS};
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
        void *pl;
        struct node *n = node_under(0, policies[p], &pl);
        n->load.first_start_ns = n->mono;
        assert_false(node_steal_failed(n, true));
        assert_false(part_place.steal_failed(pl, true));
        fake_node_free(n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mlb_shares_stealable_and_keeps_pinned),
        cmocka_unit_test(big_input_elsewhere_is_pushed_to_its_holder),
        cmocka_unit_test(threshold_decides_between_sharing_and_pushing),
        cmocka_unit_test(local_input_stays_in_lready),
        cmocka_unit_test(shared_task_is_offered_to_the_other_parts),
        cmocka_unit_test(push_received_runs_here),
        cmocka_unit_test(malformed_push_is_refused),
        cmocka_unit_test(flds_monitor_spills_stealable_tail_only),
        cmocka_unit_test(flds_monitor_leaves_short_queue),
        cmocka_unit_test(flds_monitor_waits_for_the_first_task),
        cmocka_unit_test(steal_failed_grows_tt_only_after_first_start),
        cmocka_unit_test(steal_failed_is_flds_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
