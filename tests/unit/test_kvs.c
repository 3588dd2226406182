/*
 * The metadata store: shard semantics (ready at zero waiting parents, cancellation
 * spreading through a subtree, compare-and-swap, history) and the zero-hop client over
 * a fake transport that carries messages between three in-process stores, so routing,
 * replies and notifications to holders are exercised end to end without sockets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "core/kvs/kvs.h"
#include "core/model/task.h"
#include "core/net/frame.h"
#include "tests/unit/capture.h"

#define NODES 3

struct notice {
    uint32_t node;
    uint64_t key;
    uint8_t event;
    uint64_t bytes;
};

/* One in-flight message: the fake network. */
struct msg {
    uint32_t from, to;
    uint16_t type;
    struct wbuf body;
};

static struct world {
    struct kvs *kvs[NODES];
    struct msg queue[100000];
    size_t head, tail;
    struct notice notices[10000];
    uint32_t notice_parents[10000];
    uint64_t notice_last_object[10000];
    size_t nnotices;
    /* Row NODES: a client (no shard), as `jackdaw submit` is to the nodes. */
    struct wbuf scratch[NODES + 1][NODES];
    uint16_t scratch_type[NODES + 1][NODES];
    int last_status;
    struct tmd last;
    int replies;
    int late;               /* messages ended with msg_end_late */
} w;

struct endpoint {
    uint32_t self;
};
static struct endpoint eps[NODES + 1];

static struct wbuf *t_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    struct endpoint *e = ctx;
    assert_true(node < NODES);
    assert_int_not_equal(node, e->self);
    wbuf_reset(&w.scratch[e->self][node]);
    w.scratch_type[e->self][node] = type;
    *at = 0;
    return &w.scratch[e->self][node];
}

static void t_end(void *ctx, uint32_t node, size_t at)
{
    struct endpoint *e = ctx;
    (void)at;
    struct msg *m = &w.queue[w.tail++];
    assert_true(w.tail < 100000);
    m->from = e->self;
    m->to = node;
    m->type = w.scratch_type[e->self][node];
    wbuf_init(&m->body);
    wbuf_put(&m->body, w.scratch[e->self][node].data, w.scratch[e->self][node].len);
}

static void t_end_late(void *ctx, uint32_t node, size_t at)
{
    w.late++;
    t_end(ctx, node, at);
}

static void t_notify(void *ctx, const struct kvs_notice *n)
{
    struct endpoint *e = ctx;
    w.notices[w.nnotices] = (struct notice){e->self, n->key, n->event, n->all_data_size};
    /* Where the inputs are travels with the notice. */
    w.notice_parents[w.nnotices] = n->nparents;
    if (n->nparents)
        w.notice_last_object[w.nnotices] = n->parents[n->nparents - 1].object;
    w.nnotices++;
}

/* Delivers every queued message (and what they cause) in FIFO order. */
static void run_network(void)
{
    while (w.head < w.tail) {
        struct msg *m = &w.queue[w.head++];
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        const char *reason = NULL;
        uint32_t from = m->from == NODES ? KVS_NO_SHARD : m->from; /* as node.c does */
        assert_int_equal(kvs_handle(w.kvs[m->to], from, m->type, &r, &reason), 0);
        wbuf_fini(&m->body);
    }
}

/* As run_network, with each node's end of pass (its acknowledgements) until quiet: the
 * answers that wait for the backups (R > 1) come out. */
static void run_network_acked(void)
{
    for (int round = 0; round < 16; round++) {
        run_network();
        for (uint32_t i = 0; i < NODES; i++)
            kvs_flush(w.kvs[i]);
        if (w.head == w.tail)
            return;
    }
    fail_msg("the store did not go quiet");
}

static int setup(void **state)
{
    (void)state;
    memset(&w, 0, sizeof w);
    for (uint32_t i = 0; i < NODES; i++) {
        eps[i].self = i;
        struct kvs_transport t = {.ctx = &eps[i], .msg_begin = t_begin, .msg_end = t_end,
                                  .msg_end_late = t_end_late, .notify = t_notify};
        w.kvs[i] = kvs_create(i, NODES, &t);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < NODES; i++)
        kvs_destroy(w.kvs[i]);
    for (uint32_t i = 0; i <= NODES; i++)
        for (uint32_t j = 0; j < NODES; j++)
            wbuf_fini(&w.scratch[i][j]);
    tmd_fini(&w.last);
    return 0;
}

static void on_reply(void *arg, int status, const struct tmd *t)
{
    (void)arg;
    w.replies++;
    w.last_status = status;
    tmd_fini(&w.last);
    memset(&w.last, 0, sizeof w.last);
    if (t) {
        w.last = *t;
        w.last.late = NULL;
        if (t->late) {
            /* The figures, not the arrays (borrowed): a reply's record is the store's. */
            *tmd_late_mut(&w.last) = *t->late;
            w.last.late->parent_list = NULL;
            w.last.late->history = NULL;
        }
        w.last.num_children = 0;
        w.last.children = NULL;
        if (t->num_children == 1)
            tmd_set_children(&w.last, &t->child, 1);
        else
            tmd_set_children(&w.last, t->children, t->num_children);
    }
}

/* Inserts a record through `via` (any node; the store routes it to the owner). */
static void insert(uint32_t via, uint64_t key, uint32_t parents, const uint64_t *children,
                   uint32_t nchildren, uint32_t holder)
{
    struct tmd t = {.key = key, .num_parents = parents, .num_wait_parent = parents,
                    .holder = holder};
    tmd_set_children(&t, children, nchildren);
    assert_int_equal(kvs_insert(w.kvs[via], &t), 0);
    tmd_fini(&t);
    run_network();
}

static void lookup(uint32_t via, uint64_t key)
{
    int before = w.replies;
    kvs_lookup(w.kvs[via], key, on_reply, NULL);
    run_network();
    assert_int_equal(w.replies, before + 1);
}

/* Finds a key of job `job` owned by `owner` (the hash decides; tests need keys on
 * chosen shards). */
static uint64_t job_key_on(uint32_t job, uint32_t owner, uint32_t from)
{
    for (uint32_t i = from;; i++)
        if (task_key_owner(task_key(job, i), NODES) == owner)
            return task_key(job, i);
}

static uint64_t key_on(uint32_t owner, uint32_t from)
{
    return job_key_on(1, owner, from);
}

static void test_ready_notification_at_zero(void **state)
{
    (void)state;
    uint64_t child = key_on(2, 0);
    uint64_t p1 = key_on(0, 0), p2 = key_on(1, 0);
    insert(0, child, 2, NULL, 0, 1); /* held by node 1, stored on node 2 */
    lookup(0, child);
    assert_int_equal(w.last_status, 0);
    assert_int_equal(w.last.status, TASK_WAITING);
    assert_int_equal(w.last.num_wait_parent, 2);

    kvs_append(w.kvs[0], child, KVS_FIELD_PARENT, 0, 100, p1);
    run_network();
    assert_int_equal(w.nnotices, 0); /* one parent still missing: no notice */
    kvs_append(w.kvs[1], child, KVS_FIELD_PARENT, 1, 50, p2);
    run_network();
    assert_int_equal(w.nnotices, 1);
    assert_int_equal(w.notices[0].node, 1); /* the holder, not the owner */
    assert_int_equal(w.notices[0].key, child);
    assert_int_equal(w.notices[0].event, KVS_EVENT_READY);
    assert_int_equal(w.notices[0].bytes, 150);
    assert_int_equal(w.notice_parents[0], 2);
    assert_int_equal(w.notice_last_object[0], p2);
    lookup(1, child);
    assert_int_equal(w.last.status, TASK_READY);
    assert_int_equal(w.last.num_wait_parent, 0);
    assert_int_equal(tmd_parents_done(&w.last), 2);
    assert_int_equal(tmd_late(&w.last)->all_data_size, 150);
}

static void test_no_parents_is_ready_at_insert(void **state)
{
    (void)state;
    uint64_t k = key_on(1, 0);
    insert(2, k, 0, NULL, 0, 0);
    lookup(0, k);
    assert_int_equal(w.last.status, TASK_READY);
    assert_true(w.last.t_ready > 0);
}

static void test_cas_and_missing(void **state)
{
    (void)state;
    uint64_t k = key_on(2, 0);
    insert(0, k, 0, NULL, 0, 0);
    struct tmd_run run = {.node = 1, .t_start = 10, .t_end = 20, .data_size = 7};
    kvs_cas(w.kvs[1], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_reply, NULL);
    run_network();
    assert_int_equal(w.last_status, 1);
    assert_int_equal(w.last.status, TASK_DONE);
    assert_int_equal(tmd_late(&w.last)->runner, 1);
    assert_int_equal(tmd_late(&w.last)->data_size, 7);
    /* A second completion loses: the status is no longer READY. */
    kvs_cas(w.kvs[0], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_reply, NULL);
    run_network();
    assert_int_equal(w.last_status, 0);
    lookup(0, key_on(1, 5000));
    assert_int_equal(w.last_status, -ENOENT);
    assert_int_equal(kvs_cas(w.kvs[2], k, KVS_FIELD_PARENT, 0, 1, NULL, NULL, NULL), -EINVAL);
}

/* A backup's copy of a completion may wait for company only when the record has no
 * children to tell (kvs.c cas_here): a parent's answer is what tells its children
 * (node_task.c), so its copy leaves at once.  Either way the CAS answers once the backup has it. */
static void test_childless_completion_copy_may_wait(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < NODES; i++)
        assert_int_equal(kvs_set_replicas(w.kvs[i], 2), 0);
    uint64_t leaf = key_on(2, 0), parent = key_on(2, 100), child = key_on(1, 200);
    insert(0, leaf, 0, NULL, 0, 0);
    insert(0, parent, 0, &child, 1, 0);
    insert(0, child, 1, NULL, 0, 1);
    struct tmd_run run = {.node = 2, .t_start = 10, .t_end = 20};
    int late = w.late;
    int replies = w.replies;
    kvs_cas(w.kvs[2], leaf, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_reply, NULL);
    run_network_acked();
    assert_int_equal(w.late, late + 1);
    assert_int_equal(w.replies, replies + 1);
    assert_int_equal(w.last_status, 1);
    kvs_cas(w.kvs[2], parent, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_reply, NULL);
    run_network_acked();
    assert_int_equal(w.late, late + 1);
    assert_int_equal(w.replies, replies + 2);
    assert_int_equal(w.last_status, 1);
}

/* kvs_cas_late: a completion sent to its record's primary elsewhere may wait for company,
 * and is answered as any other. */
static void test_late_request_answered(void **state)
{
    (void)state;
    uint64_t k = key_on(2, 0);
    insert(0, k, 0, NULL, 0, 0);
    struct tmd_run run = {.node = 0, .t_start = 10, .t_end = 20};
    int late = w.late, replies = w.replies;
    kvs_cas_late(w.kvs[0], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_reply, NULL);
    run_network_acked();
    assert_int_equal(w.late, late + 1);
    assert_int_equal(w.replies, replies + 1);
    assert_int_equal(w.last_status, 1);
    assert_int_equal(w.last.status, TASK_DONE);
}

static void test_failure_cancels_whole_subtree(void **state)
{
    (void)state;
    /* A chain a -> b -> c -> ... of 2000 tasks spread over every shard, plus a sibling
     * s of b with another parent that finished: s must wait, not cancel. */
    enum { CHAIN = 2000 };
    static uint64_t keys[CHAIN];
    for (uint32_t i = 0; i < CHAIN; i++)
        keys[i] = task_key(7, i);
    for (uint32_t i = 1; i < CHAIN; i++)
        insert(i % NODES, keys[i], 1, i + 1 < CHAIN ? &keys[i + 1] : NULL, i + 1 < CHAIN, i % NODES);
    /* The first task failed: its runner appends PARENT_FAILED to its child. */
    kvs_append(w.kvs[0], keys[1], KVS_FIELD_PARENT_FAILED, 0, 0, 0);
    run_network();
    size_t cancels = 0;
    for (size_t i = 0; i < w.nnotices; i++) {
        assert_int_equal(w.notices[i].event, KVS_EVENT_CANCEL);
        uint32_t idx = task_key_index(w.notices[i].key);
        assert_int_equal(w.notices[i].node, idx % NODES); /* each to its holder */
        cancels++;
    }
    assert_int_equal(cancels, CHAIN - 1);
    lookup(1, keys[CHAIN - 1]);
    assert_int_equal(w.last.status, TASK_CANCELLED);
    /* Late messages do not resurrect a cancelled task. */
    kvs_append(w.kvs[1], keys[5], KVS_FIELD_PARENT, 1, 1, keys[4]);
    run_network();
    lookup(1, keys[5]);
    assert_int_equal(w.last.status, TASK_CANCELLED);
    assert_int_equal(w.nnotices, CHAIN - 1);
}

static void test_history_moves_holder(void **state)
{
    (void)state;
    uint64_t k = key_on(0, 0);
    uint64_t child = key_on(1, 0);
    insert(1, k, 1, NULL, 0, 2);
    kvs_append(w.kvs[2], k, KVS_FIELD_HISTORY, 1, 0, 0);
    run_network();
    lookup(2, k);
    assert_int_equal(w.last.holder, 1);
    /* The first move records the first holder too: where a task came from is known. */
    assert_int_equal(tmd_late(&w.last)->num_history, 2);
    /* The ready notice now goes to the new holder. */
    kvs_append(w.kvs[2], k, KVS_FIELD_PARENT, 2, 0, 0);
    run_network();
    assert_int_equal(w.nnotices, 1);
    assert_int_equal(w.notices[0].node, 1);
    (void)child;
}

static void test_remove_and_duplicate_insert(void **state)
{
    (void)state;
    uint64_t k = key_on(0, 0);
    insert(1, k, 0, NULL, 0, 0);
    struct tmd dup = {.key = k};
    assert_int_equal(kvs_insert(w.kvs[0], &dup), -EEXIST);
    assert_int_equal(kvs_local_records(w.kvs[0]), 1);
    kvs_remove(w.kvs[2], k);
    run_network();
    assert_int_equal(kvs_local_records(w.kvs[0]), 0);
}


/* Records of job `job` (task_key(job, i)) left in the store; each lookup goes through
 * the key's owner, which answers at once. */
static size_t records_of_job(uint32_t job, uint32_t count)
{
    size_t left = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t k = task_key(job, i);
        uint32_t owner = task_key_owner(k, NODES);
        lookup(owner, k);
        left += w.last_status == 0;
    }
    return left;
}

static void test_forget_drops_a_finished_job(void **state)
{
    (void)state;
    /* Job 3: 60 tasks over every shard, in chains of two (i -> i + 30); job 4 beside
     * it, still running.  Job 3 ends: every task done or cancelled. */
    enum { TASKS = 60, HALF = TASKS / 2 };
    for (uint32_t i = 0; i < HALF; i++) {
        uint64_t child = task_key(3, i + HALF);
        insert(i % NODES, task_key(3, i), 0, &child, 1, i % NODES);
        insert(i % NODES, child, 1, NULL, 0, (i + 1) % NODES);
        insert(i % NODES, task_key(4, i), 0, NULL, 0, i % NODES);
    }
    struct tmd_run run = {.node = 0, .t_start = 1, .t_end = 2};
    for (uint32_t i = 0; i < TASKS; i++) {
        /* Task 0 fails: its child is cancelled by the store. */
        uint8_t end = i == 0 ? TASK_FAILED : TASK_DONE;
        if (i == HALF)
            continue;
        kvs_cas(w.kvs[i % NODES], task_key(3, i), KVS_FIELD_STATUS, TASK_READY, end, &run,
                NULL, NULL);
        run_network();
        if (i < HALF)
            kvs_append(w.kvs[i % NODES], task_key(3, i + HALF),
                       end == TASK_DONE ? KVS_FIELD_PARENT : KVS_FIELD_PARENT_FAILED, 0, 0, 0);
        run_network();
    }
    size_t before = 0;
    for (uint32_t n = 0; n < NODES; n++)
        before += kvs_local_records(w.kvs[n]);
    assert_int_equal(before, TASKS + HALF);

    /* The client forgets job 3 (a client has no shard: it only sends). */
    eps[NODES].self = NODES;
    struct kvs_transport t = {.ctx = &eps[NODES], .msg_begin = t_begin, .msg_end = t_end,
                              .notify = t_notify};
    struct kvs *client = kvs_create(KVS_NO_SHARD, NODES, &t);
    kvs_forget_job(client, 3);
    kvs_destroy(client);
    run_network();
    assert_int_equal(records_of_job(3, TASKS), 0);
    assert_int_equal(records_of_job(4, HALF), HALF); /* the running job keeps its own */

    /* A late message for a record that went with its job changes nothing, and is not
     * taken for a lost record; one for a record that never was still is. */
    capture_begin();
    kvs_append(w.kvs[1], task_key(3, HALF), KVS_FIELD_PARENT, 1, 0, 0);
    kvs_cas(w.kvs[2], task_key(3, 1), KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_reply,
            NULL);
    run_network();
    assert_int_equal(capture_end("unknown record"), 0);
    assert_int_equal(w.last_status, -ENOENT);
    assert_int_equal(records_of_job(3, TASKS), 0);
    capture_begin();
    kvs_append(w.kvs[1], task_key(8, 1), KVS_FIELD_PARENT, 1, 0, 0);
    run_network();
    assert_int_equal(capture_end("unknown record"), 1);
    /* Cancelling a task of a forgotten job is the no-op it is for any finished task. */
    kvs_append(w.kvs[0], task_key(3, 2), KVS_FIELD_REMOVE, 0, 0, 0);
    run_network();
    assert_int_equal(records_of_job(4, HALF), HALF);
}

static void test_forget_waits_for_a_status_on_its_way(void **state)
{
    (void)state;
    /* The runner reported its task's end to the client before its status swap reached
     * the shard: the client forgets the job first.  The record stays until the swap is
     * answered (the runner still gets the record), then goes. */
    uint64_t a = job_key_on(5, 2, 0), b = job_key_on(5, 2, task_key_index(a) + 1);
    insert(0, a, 0, NULL, 0, 1);
    insert(0, b, 0, NULL, 0, 1);
    struct tmd_run run = {.node = 1, .t_start = 1, .t_end = 2, .data_size = 3};
    kvs_cas(w.kvs[1], b, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL, NULL);
    run_network();
    kvs_forget_job(w.kvs[0], 5); /* a node's kvs forgets on its own shard too */
    run_network();
    assert_int_equal(kvs_local_records(w.kvs[2]), 1); /* b went, a waits */
    kvs_cas(w.kvs[1], a, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_reply, NULL);
    run_network();
    assert_int_equal(w.last_status, 1);
    assert_int_equal(w.last.status, TASK_DONE);
    assert_int_equal(tmd_late(&w.last)->data_size, 3);
    assert_int_equal(kvs_local_records(w.kvs[2]), 0);
    /* The same on the owner's own shard (a local swap). */
    uint64_t c = job_key_on(6, 1, 0);
    insert(0, c, 0, NULL, 0, 1);
    kvs_forget_job(w.kvs[1], 6);
    run_network();
    assert_int_equal(kvs_local_records(w.kvs[1]), 1);
    kvs_cas(w.kvs[1], c, KVS_FIELD_STATUS, TASK_READY, TASK_FAILED, &run, on_reply, NULL);
    assert_int_equal(w.last_status, 1);
    assert_int_equal(kvs_local_records(w.kvs[1]), 0);
}

static void test_forget_remembers_the_last_jobs(void **state)
{
    (void)state;
    struct shard s;
    shard_init(&s);
    assert_false(shard_forgot(&s, 9));
    shard_forget_job(&s, 9);
    assert_true(shard_forgot(&s, 9));
    for (uint32_t j = 100; j < 100 + SHARD_FORGOTTEN_JOBS - 1; j++)
        shard_forget_job(&s, j);
    assert_true(shard_forgot(&s, 9));
    shard_forget_job(&s, 1000);
    assert_false(shard_forgot(&s, 9)); /* the ring is bounded: memory per job is not kept */
    assert_true(shard_forgot(&s, 1000));
    /* A new job reusing a forgotten number starts clean. */
    struct tmd t = {.key = task_key(1000, 1)};
    assert_int_equal(shard_insert(&s, &t, 1), 0);
    assert_int_equal(shard_cas(&s, task_key(1000, 1), KVS_FIELD_STATUS, TASK_READY, TASK_DONE,
                               NULL, 0, NULL),
                     1);
    shard_settle(&s, task_key(1000, 1));
    assert_int_equal(shard_len(&s), 1);
    shard_fini(&s);
}

static void test_tmd_codec(void **state)
{
    (void)state;
    uint64_t children[3] = {1, 2, 3};
    struct tmd_parent parents[2] = {{.object = 9, .node = 4, .bytes = 99},
                                    {.object = 8, .node = 5, .bytes = 1}};
    uint32_t history[2] = {0, 3};
    struct tmd_late late = {.parent_list = parents, .num_history = 2, .history = history,
                            .all_data_size = 100};
    struct tmd t = {.key = 42, .status = TASK_WAITING, .holder = 3, .num_parents = 4,
                    .num_wait_parent = 2, .num_children = 3, .children = children,
                    .late = &late, .t_submit = 5};
    struct wbuf b;
    wbuf_init(&b);
    tmd_put(&b, &t);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct tmd u;
    assert_int_equal(tmd_get(&r, &u), 0);
    assert_int_equal(u.key, 42);
    assert_int_equal(u.num_children, 3);
    assert_int_equal(tmd_child(&u, 2), 3);
    assert_int_equal(tmd_late(&u)->parent_list[0].bytes, 99);
    assert_int_equal(tmd_late(&u)->parent_list[1].object, 8);
    assert_int_equal(tmd_late(&u)->history[1], 3);
    assert_int_equal(tmd_late(&u)->all_data_size, 100);
    tmd_fini(&u);
    /* Every truncation is refused without leaks (ASan checks the latter). */
    for (size_t n = 0; n < b.len; n++) {
        rbuf_init(&r, b.data, n);
        assert_int_equal(tmd_get(&r, &u), -EBADMSG);
    }
    /* A child count larger than the bytes that follow is refused before allocating: the
     * count (one byte here) follows key, status, mask, three one-byte varints, the size
     * (one byte) and t_submit. */
    size_t at = 8 + 1 + 1 + 3 + 1 + 8;
    assert_int_equal(b.data[at], 3);
    struct wbuf bad;
    wbuf_init(&bad);
    wbuf_put(&bad, b.data, at);
    wbuf_put_uv(&bad, 0x7fffffff);
    wbuf_put(&bad, b.data + at + 1, b.len - at - 1);
    rbuf_init(&r, bad.data, bad.len);
    assert_int_equal(tmd_get(&r, &u), -EBADMSG);
    /* One spelling: a varint longer than it needs to be, a mask bit for a zero field. */
    wbuf_reset(&bad);
    wbuf_put(&bad, b.data, at);
    wbuf_put_u8(&bad, 0x83);
    wbuf_put_u8(&bad, 0x00);
    wbuf_put(&bad, b.data + at + 1, b.len - at - 1);
    rbuf_init(&r, bad.data, bad.len);
    assert_int_equal(tmd_get(&r, &u), -EBADMSG);
    wbuf_reset(&bad);
    wbuf_put(&bad, b.data, 8 + 1 + 1 + 3);
    wbuf_put_u8(&bad, 0); /* runner, spelled out though it is 0 */
    wbuf_put(&bad, b.data + 8 + 1 + 1 + 3, b.len - (8 + 1 + 1 + 3));
    bad.data[9] |= 0x01;
    rbuf_init(&r, bad.data, bad.len);
    assert_int_equal(tmd_get(&r, &u), -EBADMSG);
    wbuf_fini(&bad);
    wbuf_fini(&b);
}

/* tmd_skip, which a backup uses to check the records it keeps as bytes, accepts exactly
 * what tmd_get accepts, and reads as far: every truncation and every byte changed. */
static void test_tmd_skip_agrees_with_get(void **state)
{
    (void)state;
    uint64_t children[2] = {7, 8};
    struct tmd_parent parents[1] = {{.object = 9, .node = 4, .bytes = 99}};
    uint32_t history[1] = {2};
    uint8_t spec[5] = {1, 2, 3, 4, 5};
    struct tmd_late late = {.parent_list = parents, .num_history = 1, .history = history,
                            .attempt = 1};
    struct tmd t = {.key = 43, .status = TASK_WAITING, .num_parents = 2,
                    .num_wait_parent = 1, .num_children = 2, .children = children,
                    .late = &late, .spec = spec, .spec_len = 5};
    struct wbuf b;
    wbuf_init(&b);
    tmd_put(&b, &t);
    for (size_t n = 0; n <= b.len; n++) {
        for (size_t at = 0; at <= n; at++) {
            uint8_t *copy = xmalloc(n + 1);
            memcpy(copy, b.data, n);
            if (at < n)
                copy[at] ^= 0xff;
            struct rbuf g, k;
            rbuf_init(&g, copy, n);
            rbuf_init(&k, copy, n);
            struct tmd u;
            uint64_t key = 0;
            int got = tmd_get(&g, &u);
            assert_int_equal(tmd_skip(&k, &key), got);
            if (got == 0) {
                assert_int_equal(k.left, g.left);
                assert_int_equal(key, u.key);
                tmd_fini(&u);
            }
            free(copy);
        }
    }
    wbuf_fini(&b);
}

static void test_malformed_messages_refused(void **state)
{
    (void)state;
    const char *reason = NULL;
    uint8_t junk[5] = {1, 2, 3, 4, 5};
    struct rbuf r;
    rbuf_init(&r, junk, sizeof junk);
    assert_int_equal(kvs_handle(w.kvs[0], 1, 0x0105, &r, &reason), -EBADMSG);
    assert_non_null(reason);
    rbuf_init(&r, junk, sizeof junk);
    assert_int_equal(kvs_handle(w.kvs[0], 1, 0x01ff, &r, &reason), -EBADMSG);
    /* A reply to a request never made. */
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, 777);
    wbuf_put_u32(&b, (uint32_t)-ENOENT);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(kvs_handle(w.kvs[0], 1, 0x0103, &r, &reason), -EBADMSG);
    wbuf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ready_notification_at_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_parents_is_ready_at_insert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cas_and_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_childless_completion_copy_may_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_request_answered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_cancels_whole_subtree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_moves_holder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_and_duplicate_insert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_drops_a_finished_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_waits_for_a_status_on_its_way, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_forget_remembers_the_last_jobs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tmd_codec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tmd_skip_agrees_with_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_messages_refused, setup, teardown),
    };
    return cmocka_run_group_tests_name("kvs", tests, NULL, NULL);
}
