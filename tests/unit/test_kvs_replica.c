/*
 * The metadata store replicated (issue 15), on the fake network of kvs_net.h: every
 * write reaches every replica, joined or not; answers wait for the backups; a record's
 * new fields travel; a finished job is forgotten on every copy.  Deaths and take-overs
 * are test_kvs_takeover's.
 *
 * Also pins the store's wire bytes at R = 1 against tests/kvs/r1-wire.txt
 * (KVS_WIRE_UPDATE=1 rewrites it after an intended change), with wall time frozen.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/unit/kvs_net.h"

#define WIRE_FILE "tests/kvs/r1-wire.txt"

/*
 * Every kind of message the store sends at R = 1: inserts from the client and from
 * nodes, lookups, appends of each field, a subtree cancelled across shards, CAS with
 * and without a run, removals.  Delivered in send order.
 */
static void wire_scenario(FILE *out)
{
    frozen_clock = 1;
    net_start(5, 1);
    net.fifo = 1;
    net.wire = out;
    uint64_t a = key_on(1, 0, 0), b = key_on(1, 1, 0), c = key_on(1, 2, 0), d = key_on(1, 3, 0);
    uint64_t e = key_on(1, 4, 0), f = key_on(1, 0, 100), g = key_on(1, 1, 100);
    uint64_t ab[2] = {b, c}, cd[3] = {d, e, f};
    put_record(CLIENT, a, 0, ab, 2, 1, 100);
    put_record(CLIENT, b, 1, &d, 1, 2, 7);
    put_record(CLIENT, c, 1, cd, 3, 3, 0);
    put_record(2, d, 2, NULL, 0, 4, 1);
    put_record(3, e, 1, &g, 1, 0, 1);
    put_record(4, f, 1, NULL, 0, 1, 1);
    put_record(0, g, 1, NULL, 0, 2, 1);
    run_network();
    for (uint32_t i = 0; i < 5; i++)
        kvs_lookup(net.kvs[i], a, ignore_reply, NULL);
    struct tmd_run run = {.node = 1, .t_start = 10, .t_end = 20, .data_size = 100};
    kvs_cas(net.kvs[1], a, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, ignore_reply, NULL);
    kvs_cas(net.kvs[2], a, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, ignore_reply, NULL);
    kvs_cas(net.kvs[3], b, KVS_FIELD_STATUS, TASK_WAITING, TASK_RUNNING, NULL, NULL, NULL);
    run_network();
    kvs_append(net.kvs[1], b, KVS_FIELD_PARENT, 1, 100, a);
    kvs_append(net.kvs[1], c, KVS_FIELD_PARENT, 1, 100, a);
    kvs_append(net.kvs[0], c, KVS_FIELD_HISTORY, 4, 0, 0);
    run_network();
    /* c failed: its subtree (d, e, f, then g) is cancelled wherever it lives. */
    kvs_cas(net.kvs[4], c, KVS_FIELD_STATUS, TASK_READY, TASK_FAILED, &run, ignore_reply, NULL);
    kvs_append(net.kvs[4], d, KVS_FIELD_PARENT_FAILED, 4, 0, 0);
    kvs_append(net.kvs[4], e, KVS_FIELD_PARENT_FAILED, 4, 0, 0);
    kvs_append(net.kvs[4], f, KVS_FIELD_PARENT_FAILED, 4, 0, 0);
    run_network();
    kvs_append(net.kvs[CLIENT], b, KVS_FIELD_REMOVE, 0, 0, 0);
    kvs_append(net.kvs[2], a, KVS_FIELD_REMOVE, 0, 0, 0);
    kvs_remove(net.kvs[3], g);
    kvs_lookup(net.kvs[3], g, ignore_reply, NULL);
    kvs_lookup(net.kvs[0], b, ignore_reply, NULL);
    run_network();
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        buf = xgrow(buf, &cap, *len + 4096, 1);
        size_t n = fread(buf + *len, 1, 4096, fp);
        *len += n;
        if (n < 4096)
            break;
    }
    fclose(fp);
    return buf;
}

/* Inserts, appends of every field, completions, cancellation across shards and both
 * kinds of removal reach every replica, with the primary's times. */
static void writes_reach_every_replica(uint32_t nodes, uint32_t r)
{
    net_start(nodes, 7);
    use_replicas(r);
    enum { N = 120 };
    uint64_t keys[N];
    for (uint32_t i = 0; i < N; i++)
        keys[i] = task_key(3, i);
    for (uint32_t i = 0; i < N; i++) {
        /* Task i waits for i - 1 when i is odd: pairs (2k, 2k + 1). */
        uint64_t child = keys[i + 1 < N ? i + 1 : i];
        uint32_t via = i % 3 == 0 ? CLIENT : i % nodes;
        put_record(via, keys[i], i % 2, i % 2 == 0 && i + 1 < N ? &child : NULL,
                   i % 2 == 0 && i + 1 < N, (i * 7) % nodes, i);
    }
    settle();
    for (uint32_t i = 0; i < N; i++)
        check_copies(keys[i], r, 0);
    /* Complete the even ones (failing every fourth), tell their children, move some. */
    for (uint32_t i = 0; i + 1 < N; i += 2) {
        uint32_t runner = (i * 7) % nodes;
        struct tmd_run run = {.node = runner, .t_start = i, .t_end = i + 1, .data_size = i};
        uint8_t status = i % 4 == 0 ? TASK_DONE : TASK_FAILED;
        kvs_cas(net.kvs[runner], keys[i], KVS_FIELD_STATUS, TASK_READY, status, &run,
                count_reply, NULL);
        kvs_append(net.kvs[runner], keys[i + 1],
                   status == TASK_DONE ? KVS_FIELD_PARENT : KVS_FIELD_PARENT_FAILED, runner, i,
                   keys[i]);
        if (i % 6 == 0)
            kvs_append(net.kvs[(runner + 1) % nodes], keys[i + 1], KVS_FIELD_HISTORY,
                       (runner + 1) % nodes, 0, 0);
    }
    settle();
    assert_int_equal(replies, N / 2);
    for (uint32_t i = 0; i < N; i++)
        check_copies(keys[i], r, 0);
    /* Removal: of finished records by REMOVE appends, of others directly. */
    for (uint32_t i = 0; i < N; i += 10) {
        kvs_append(net.kvs[CLIENT], keys[i], KVS_FIELD_REMOVE, 0, 0, 0);
        kvs_remove(net.kvs[i % nodes], keys[i + 1]);
    }
    settle();
    for (uint32_t i = 0; i < N; i++)
        check_copies(keys[i], r, i % 10 < 2);
    assert_true(net.count_type[MSG_KVS_REPLICATE & 0xff] > 0);
    assert_true(net.count_type[MSG_KVS_REPLICA_ACK & 0xff] > 0);
    /* Every store holds its share and its backups' share. */
    size_t total = 0;
    for (uint32_t i = 0; i < nodes; i++)
        total += kvs_local_records(net.kvs[i]);
    assert_int_equal(total, (size_t)(N - N / 10 * 2) * r);
}

/* Copies of job `job`'s records, tasks 0 to count - 1, on every live node. */
static size_t copies_of_job(uint32_t job, uint32_t count)
{
    size_t n = 0;
    for (uint32_t node = 0; node < net.nodes; node++)
        for (uint32_t i = 0; !net.dead[node] && i < count; i++)
            n += kvs_local_record(net.kvs[node], task_key(job, i)) != NULL;
    return n;
}

/* Records held on the live nodes, kept copies counted unbuilt. */
static size_t held_everywhere(void)
{
    size_t n = 0;
    for (uint32_t node = 0; node < net.nodes; node++)
        n += net.dead[node] ? 0 : kvs_records_held(net.kvs[node]);
    return n;
}

static void test_r1_wire_unchanged(void **state)
{
    (void)state;
    char *got = NULL;
    size_t got_len = 0;
    FILE *mem = open_memstream(&got, &got_len);
    assert_non_null(mem);
    wire_scenario(mem);
    net.wire = NULL;
    fclose(mem);
    if (getenv("KVS_WIRE_UPDATE")) {
        FILE *fp = fopen(WIRE_FILE, "wb");
        assert_non_null(fp);
        fwrite(got, 1, got_len, fp);
        fclose(fp);
    }
    size_t want_len = 0;
    char *want = slurp(WIRE_FILE, &want_len);
    if (!want)
        fail_msg("cannot read %s (run from the top of the tree)", WIRE_FILE);
    if (want_len != got_len || memcmp(want, got, got_len) != 0)
        fail_msg("the store's messages at R = 1 differ from %s (KVS_WIRE_UPDATE=1 rewrites it "
                 "after an intended change)", WIRE_FILE);
    free(want);
    free(got);
}

static void test_writes_reach_every_replica_r2(void **state)
{
    (void)state;
    writes_reach_every_replica(5, 2);
}

static void test_writes_reach_every_replica_r3(void **state)
{
    (void)state;
    writes_reach_every_replica(7, 3);
}

/* Writes joined into few REPLICATE messages: the same copies, and fewer messages. */
static void test_writes_joined_reach_every_replica(void **state)
{
    (void)state;
    writes_reach_every_replica(5, 2);
    size_t apart = net.count_type[MSG_KVS_REPLICATE & 0xff];
    teardown(NULL);
    join_next = 1;
    writes_reach_every_replica(5, 2);
    join_next = 0;
    assert_true(net.join);
    size_t joined = net.count_type[MSG_KVS_REPLICATE & 0xff];
    assert_true(joined > 0);
    assert_true(joined < apart / 2);
}

/* At R = 1 nothing is forwarded or acknowledged, and answers never wait for a flush. */
static void test_r1_sends_no_replication(void **state)
{
    (void)state;
    net_start(4, 3);
    uint64_t k = key_on(1, 2, 0);
    put_record(0, k, 0, NULL, 0, 1, 1);
    run_network();
    struct tmd_run run = {.node = 1};
    kvs_cas(net.kvs[1], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, count_reply, NULL);
    run_network();
    assert_int_equal(replies, 1);
    assert_int_equal(last_status, 1);
    assert_int_equal(net.count_type[MSG_KVS_REPLICATE & 0xff], 0);
    for (uint32_t i = 0; i < 4; i++)
        kvs_flush(net.kvs[i]);
    assert_int_equal(net.pending, 0);
    assert_int_equal(kvs_set_replicas(net.kvs[0], 0), -EINVAL);
    assert_int_equal(kvs_set_replicas(net.kvs[0], KVS_MAX_REPLICAS + 1), -EINVAL);
    assert_int_equal(kvs_set_replicas(net.kvs[1], 2), -EBUSY);
}

/* A CAS reply and a ready notice wait for the backup's acknowledgement. */
static void test_answers_wait_for_backups(void **state)
{
    (void)state;
    net_start(4, 5);
    use_replicas(2);
    net.fifo = 1;
    uint64_t p = key_on(1, 1, 0), c = key_on(1, 2, 0);
    put_record(0, p, 0, &c, 1, 1, 10);
    put_record(0, c, 1, NULL, 0, 3, 0);
    settle();
    /* Node 1 completes p, its own record: the callback waits for node 2's ack. */
    int status = -1;
    struct tmd_run run = {.node = 1, .t_start = 1, .t_end = 2, .data_size = 10};
    kvs_cas(net.kvs[1], p, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, count_reply, &status);
    assert_int_equal(status, -1);
    run_network();
    assert_int_equal(status, -1); /* forwarded, applied, not yet acknowledged */
    assert_int_equal(kvs_local_record(net.kvs[2], p)->status, TASK_DONE);
    kvs_flush(net.kvs[2]);
    run_network();
    assert_int_equal(status, 1);
    /* c becomes ready on node 2: the notice to node 3 waits for node 3's own ack (it is
     * c's backup). */
    kvs_append(net.kvs[1], c, KVS_FIELD_PARENT, 1, 10, p);
    run_network();
    assert_int_equal(net.nnotices, 0);
    kvs_flush(net.kvs[3]);
    run_network();
    assert_int_equal(net.nnotices, 1);
    assert_int_equal(net.notices[0].node, 3);
    /* A barrier: called once everything applied so far is on the backups. */
    int called = 0;
    put_record(2, key_on(1, 2, 50), 0, NULL, 0, 0, 0);
    kvs_barrier(net.kvs[2], on_barrier, &called);
    run_network();
    assert_int_equal(called, 0);
    kvs_flush(net.kvs[3]);
    run_network();
    assert_int_equal(called, 1);
    kvs_barrier(net.kvs[2], on_barrier, &called); /* nothing outstanding: at once */
    assert_int_equal(called, 2);
}

/*
 * Held answers read their record when they leave, from where it was while no record was
 * freed: one whose record was removed while it waited says -ENOENT and carries none
 * (local and remote), one whose record stayed carries it as it is then, whether another
 * record was freed meanwhile or not.
 */
static void test_held_answers_read_the_record_when_they_leave(void **state)
{
    (void)state;
    net_start(4, 9);
    use_replicas(2);
    net.fifo = 1;
    uint64_t p = key_on(1, 1, 0), q = key_on(1, 1, task_key_index(p) + 1);
    uint64_t r = key_on(1, 1, task_key_index(q) + 1), s = key_on(1, 1, task_key_index(r) + 1);
    uint64_t keys[4] = {p, q, r, s};
    for (int i = 0; i < 4; i++)
        put_record(CLIENT, keys[i], 0, NULL, 0, 1, 1);
    settle();
    struct answer a_p = {0}, a_q = {0}, a_r = {0}, a_s = {0};
    struct tmd_run run = {.node = 1, .t_start = 1, .t_end = 2, .data_size = 1};
    kvs_cas(net.kvs[1], p, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a_p);
    run.node = 0;
    kvs_cas(net.kvs[0], q, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a_q);
    kvs_cas(net.kvs[0], s, KVS_FIELD_STATUS, TASK_READY, TASK_FAILED, &run, on_answer, &a_s);
    run_network(); /* applied on node 1 and its backup, not acknowledged */
    assert_int_equal(kvs_remove(net.kvs[1], p), 0);
    assert_int_equal(kvs_remove(net.kvs[1], s), 0);
    run.node = 1;
    kvs_cas(net.kvs[1], r, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a_r);
    assert_int_equal(a_p.calls + a_q.calls + a_r.calls + a_s.calls, 0);
    settle();
    assert_int_equal(a_p.calls, 1);
    assert_int_equal(a_p.status, -ENOENT);
    assert_int_equal(a_p.rec_status, 0xff);
    assert_int_equal(a_s.calls, 1);
    assert_int_equal(a_s.status, -ENOENT);
    assert_int_equal(a_s.rec_status, 0xff);
    assert_int_equal(a_q.calls, 1);
    assert_int_equal(a_q.status, 1);
    assert_int_equal(a_q.rec_status, TASK_DONE);
    assert_int_equal(a_r.calls, 1);
    assert_int_equal(a_r.status, 1);
    assert_int_equal(a_r.rec_status, TASK_DONE);
}

/* The record's new fields travel, and a record without them encodes as before. */
static void test_tmd_spec_and_attempt(void **state)
{
    (void)state;
    uint8_t spec[37];
    for (size_t i = 0; i < sizeof spec; i++)
        spec[i] = (uint8_t)(i * 7);
    struct tmd t = {.key = 42, .status = TASK_READY, .holder = 3, .flags = TMD_FLAG_REPLAYED};
    tmd_late_mut(&t)->attempt = 2;
    tmd_set_spec(&t, spec, sizeof spec);
    struct wbuf b;
    wbuf_init(&b);
    tmd_put(&b, &t);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct tmd u;
    assert_int_equal(tmd_get(&r, &u), 0);
    assert_int_equal(r.left, 0);
    assert_int_equal(u.status, TASK_READY);
    assert_int_equal(tmd_late(&u)->attempt, 2);
    assert_int_equal(u.flags, TMD_FLAG_REPLAYED);
    assert_int_equal(u.spec_len, sizeof spec);
    assert_memory_equal(u.spec, spec, sizeof spec);
    tmd_fini(&u);
    for (size_t n = 0; n < b.len; n++) {
        rbuf_init(&r, b.data, n);
        assert_int_equal(tmd_get(&r, &u), -EBADMSG);
    }
    /* A spec longer than what follows is refused before allocating (its length is the
     * one-byte varint before it). */
    assert_int_equal(b.data[b.len - sizeof spec - 1], sizeof spec);
    struct wbuf bad;
    wbuf_init(&bad);
    wbuf_put(&bad, b.data, b.len - sizeof spec - 1);
    wbuf_put_uv(&bad, 0x7fffffff);
    wbuf_put(&bad, spec, sizeof spec);
    rbuf_init(&r, bad.data, bad.len);
    assert_int_equal(tmd_get(&r, &u), -EBADMSG);
    wbuf_fini(&bad);
    /* Without spec, attempt and flags: no extension. */
    tmd_set_spec(&t, NULL, 0);
    tmd_late_mut(&t)->attempt = 0;
    t.flags = 0;
    wbuf_reset(&b);
    tmd_put(&b, &t);
    /* Key, status, mask, three one-byte varints, t_submit, no children. */
    assert_int_equal(b.len, 8 + 1 + 1 + 3 + 8 + 1);
    assert_int_equal(b.data[8], TASK_READY);
    tmd_fini(&t);
    wbuf_fini(&b);
}

/*
 * A finished job forgotten through a client at R = 2: every copy of its records goes,
 * primary and backup, including those whose status arrives after the forget: a remote
 * swap, a local one, one whose answer was held for the backup's acknowledgement when
 * the forget came (it is answered with the record, then goes), and one whose primary
 * dies after the forget (its new backup, sent the record whole, marks it).  A running
 * job beside it keeps both copies of each record, and a late append to a record that
 * went with its job is not taken for a lost record.
 */
static void test_forget_every_copy_r2(void **state)
{
    (void)state;
    net_start(5, 17);
    use_replicas(2);
    net.fifo = 1;
    /* Job 7: chains of two (i -> i + HALF), then four tasks of known primaries; job 8
     * beside it, still running. */
    enum { TASKS = 30, HALF = TASKS / 2 };
    for (uint32_t i = 0; i < HALF; i++) {
        uint64_t child = task_key(7, i + HALF);
        put_record(CLIENT, task_key(7, i), 0, &child, 1, i % 5, 1);
        put_record(CLIENT, child, 1, NULL, 0, (i + 1) % 5, 1);
        put_record(CLIENT, task_key(8, i), 0, NULL, 0, i % 5, 1);
    }
    uint64_t held = key_on(7, 0, TASKS);                           /* primary 0, backup 1 */
    uint64_t late = key_on(7, 1, task_key_index(held) + 1);        /* 1, 2 */
    uint64_t local = key_on(7, 2, task_key_index(late) + 1);       /* 2, 3 */
    uint64_t moved = key_on(7, 3, task_key_index(local) + 1);      /* 3, 4; then 4, 0 */
    uint32_t count = task_key_index(moved) + 1;
    put_record(CLIENT, held, 0, NULL, 0, 2, 1);
    put_record(CLIENT, late, 0, NULL, 0, 3, 1);
    put_record(CLIENT, local, 0, NULL, 0, 2, 1);
    put_record(CLIENT, moved, 0, NULL, 0, 1, 1);
    settle();
    /* The chains end (task 0 fails: the store cancels its child). */
    struct tmd_run run = {.node = 0, .t_start = 1, .t_end = 2, .data_size = 1};
    for (uint32_t i = 0; i < HALF; i++) {
        uint8_t end = i == 0 ? TASK_FAILED : TASK_DONE;
        run.node = i % 5;
        kvs_cas(net.kvs[i % 5], task_key(7, i), KVS_FIELD_STATUS, TASK_READY, end, &run,
                NULL, NULL);
        kvs_append(net.kvs[i % 5], task_key(7, i + HALF),
                   end == TASK_DONE ? KVS_FIELD_PARENT : KVS_FIELD_PARENT_FAILED, i % 5, 1,
                   task_key(7, i));
        settle();
        if (i == 0)
            continue;
        run.node = (i + 1) % 5;
        kvs_cas(net.kvs[(i + 1) % 5], task_key(7, i + HALF), KVS_FIELD_STATUS, TASK_READY,
                TASK_DONE, &run, NULL, NULL);
        settle();
    }
    assert_int_equal(copies_of_job(7, count), (TASKS + 4) * 2);

    /* `held` ends on node 2: node 0 applies it and forwards it, and its answer waits
     * for node 1's acknowledgement, which is not sent before the forget. */
    struct answer a_held = {0}, a_late = {0}, a_local = {0}, a_moved = {0};
    run.node = 2;
    kvs_cas(net.kvs[2], held, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer,
            &a_held);
    run_network();
    assert_int_equal(a_held.calls, 0);
    kvs_forget_job(net.kvs[CLIENT], 7);
    run_network();
    assert_int_equal(a_held.calls, 0);
    assert_non_null(kvs_local_record(net.kvs[0], held)); /* until its answer leaves */
    assert_null(kvs_local_record(net.kvs[1], held));
    /* Three not final yet, on both replicas each; every final record went. */
    assert_int_equal(copies_of_job(7, count), 1 + 3 * 2);
    settle();
    assert_int_equal(a_held.calls, 1);
    assert_int_equal(a_held.status, 1);
    assert_int_equal(a_held.rec_status, TASK_DONE);
    assert_null(kvs_local_record(net.kvs[0], held));

    /* Their status arrives after the forget: a remote swap, then a local one, whose
     * answer waits for the backup. */
    run.node = 3;
    kvs_cas(net.kvs[3], late, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer,
            &a_late);
    settle();
    assert_int_equal(a_late.status, 1);
    assert_int_equal(a_late.rec_status, TASK_DONE);
    run.node = 2;
    kvs_cas(net.kvs[2], local, KVS_FIELD_STATUS, TASK_READY, TASK_FAILED, &run, on_answer,
            &a_local);
    assert_int_equal(a_local.calls, 0);
    assert_non_null(kvs_local_record(net.kvs[2], local));
    settle();
    assert_int_equal(a_local.status, 1);
    assert_int_equal(a_local.rec_status, TASK_FAILED);
    assert_int_equal(copies_of_job(7, count), 2); /* `moved`, on nodes 3 and 4 */

    /* `moved`'s primary dies: node 4 takes over and sends the record whole to node 0,
     * which forgot the job: it keeps the record marked, until its status arrives. */
    down_everywhere(3);
    settle();
    assert_non_null(kvs_local_record(net.kvs[4], moved));
    assert_non_null(kvs_local_record(net.kvs[0], moved));
    run.node = 1;
    kvs_cas(net.kvs[1], moved, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer,
            &a_moved);
    settle();
    assert_int_equal(a_moved.status, 1);
    assert_int_equal(a_moved.rec_status, TASK_DONE);
    assert_int_equal(copies_of_job(7, count), 0);

    /* Job 8 is whole, on both replicas of each record. */
    for (uint32_t i = 0; i < HALF; i++)
        check_copies(task_key(8, i), 2, 0);
    size_t total = 0;
    for (uint32_t node = 0; node < net.nodes; node++)
        total += net.dead[node] ? 0 : kvs_local_records(net.kvs[node]);
    assert_int_equal(total, HALF * 2);

    /* A late append to a child that went with its job (through its primary's replicated
     * append) is not news; one to a record that never was still is. */
    capture_begin();
    kvs_append(net.kvs[2], task_key(7, HALF), KVS_FIELD_PARENT, 2, 1, task_key(7, 0));
    kvs_append(net.kvs[2], task_key(7, HALF + 1), KVS_FIELD_PARENT, 2, 1, task_key(7, 1));
    settle();
    int quiet = capture_end("unknown record");
    capture_begin();
    kvs_append(net.kvs[2], task_key(9, 1), KVS_FIELD_PARENT, 2, 1, 0);
    settle();
    assert_int_equal(quiet, 0);
    assert_int_equal(capture_end("unknown record"), 1);
    assert_int_equal(copies_of_job(7, count), 0);
}

/* The forget mark belongs to the shard that set it: it never travels with a record. */
static void test_forget_mark_never_sent(void **state)
{
    (void)state;
    struct tmd t = {.key = 42, .status = TASK_RUNNING, .holder = 3,
                    .flags = TMD_FLAG_FORGET};
    struct wbuf b;
    wbuf_init(&b);
    tmd_put(&b, &t);
    assert_int_equal(b.len, 8 + 1 + 1 + 3 + 8 + 1); /* no extension for it */
    t.flags = TMD_FLAG_REPLAYED | TMD_FLAG_FORGET;
    wbuf_reset(&b);
    tmd_put(&b, &t);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct tmd u;
    assert_int_equal(tmd_get(&r, &u), 0);
    assert_int_equal(u.flags, TMD_FLAG_REPLAYED);
    tmd_fini(&u);
    /* Nor can a peer set it, nor the mark of a lent spec: a record that says so is
     * refused. */
    b.data[b.len - 3] |= TMD_FLAG_FORGET | TMD_FLAG_SPEC_LENT; /* flags, attempt, spec length */
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(tmd_get(&r, &u), -EBADMSG);
    uint64_t key;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(tmd_skip(&r, &key), -EBADMSG);
    /* A lent spec lies in the message; a shard's record takes a copy of its own, and the
     * mark never travels. */
    static const uint8_t spec[] = "the task as submitted";
    struct tmd w = {.key = task_key(3, 1)};
    tmd_late_mut(&w)->attempt = 2;
    tmd_set_spec(&w, spec, sizeof spec);
    wbuf_reset(&b);
    tmd_put(&b, &w);
    tmd_fini(&w);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(tmd_get_lent(&r, &u), 0);
    assert_true(u.flags & TMD_FLAG_SPEC_LENT);
    assert_true(u.spec >= b.data && u.spec + u.spec_len <= b.data + b.len);
    struct shard s;
    shard_init(&s);
    assert_int_equal(shard_insert(&s, &u, 1), 0);
    const struct tmd *rec = shard_get(&s, task_key(3, 1));
    assert_non_null(rec);
    assert_true(rec->spec < b.data || rec->spec >= b.data + b.len);
    assert_memory_equal(rec->spec, spec, sizeof spec);
    struct wbuf c;
    wbuf_init(&c);
    tmd_put(&c, rec);
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(tmd_get(&r, &u), 0);
    assert_int_equal(u.flags, 0);
    assert_int_equal(tmd_late(&u)->attempt, 2);
    assert_memory_equal(u.spec, spec, sizeof spec);
    tmd_fini(&u);
    wbuf_fini(&c);
    shard_fini(&s);
    wbuf_fini(&b);
}

/*
 * A backup drops the kept copies of a forgotten job unbuilt when its log shows every
 * record final; a job with a record not final yet is built and that record stays on
 * both replicas until its status comes; a job with a cancelled task (an append that
 * makes a record final, not counted) is built as before.  Nothing is asked of the
 * stores before the forgets, so their logs are whole.
 */
static void test_forget_drops_final_logs_r2(void **state)
{
    (void)state;
    net_start(4, 23);
    use_replicas(2);
    net.fifo = 1;
    enum { TASKS = 24 };
    for (uint32_t i = 0; i < TASKS; i++) {
        put_record(CLIENT, task_key(11, i), 0, NULL, 0, i % 4, 1);
        put_record(CLIENT, task_key(12, i), 0, NULL, 0, i % 4, 1);
    }
    uint64_t parent = task_key(13, 0), child = task_key(13, 1);
    put_record(CLIENT, parent, 0, &child, 1, 0, 1);
    put_record(CLIENT, child, 1, NULL, 0, 1, 1);
    settle();
    assert_int_equal(held_everywhere(), (2 * TASKS + 2) * 2);
    struct tmd_run run = {.t_start = 1, .t_end = 2, .data_size = 1};
    uint64_t open = task_key(12, 0);
    for (uint32_t i = 0; i < TASKS; i++) {
        uint64_t a = task_key(11, i), b = task_key(12, i);
        run.node = task_key_owner(a, 4);
        kvs_cas(net.kvs[run.node], a, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL,
                NULL);
        if (b == open)
            continue;
        run.node = (task_key_owner(b, 4) + 1) % 4; /* remote swaps */
        kvs_cas(net.kvs[run.node], b, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL,
                NULL);
    }
    run.node = 0;
    kvs_cas(net.kvs[0], parent, KVS_FIELD_STATUS, TASK_READY, TASK_FAILED, &run, NULL, NULL);
    kvs_append(net.kvs[0], child, KVS_FIELD_PARENT_FAILED, 0, 0, parent);
    settle();

    kvs_forget_job(net.kvs[CLIENT], 11);
    settle();
    assert_int_equal(held_everywhere(), (TASKS + 2) * 2);
    kvs_forget_job(net.kvs[CLIENT], 13);
    settle();
    assert_int_equal(held_everywhere(), TASKS * 2);
    kvs_forget_job(net.kvs[CLIENT], 12);
    settle();
    /* The open record stays, on its primary and its backup, with its status. */
    assert_int_equal(held_everywhere(), 2);
    uint32_t reps[KVS_MAX_REPLICAS];
    assert_int_equal(replicas_of(open, 2, reps), 2);
    for (uint32_t k = 0; k < 2; k++) {
        const struct tmd *rec = kvs_local_record(net.kvs[reps[k]], open);
        assert_non_null(rec);
        assert_int_equal(rec->status, TASK_READY);
    }
    run.node = reps[0];
    kvs_cas(net.kvs[reps[0]], open, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL, NULL);
    settle();
    assert_int_equal(held_everywhere(), 0);
    for (uint32_t node = 0; node < net.nodes; node++)
        assert_int_equal(kvs_local_records(net.kvs[node]), 0);
}

/*
 * A backup's kept copies, packed once cold (kvs_compact): a chunk is packed only at the
 * call after the one that found it full, what comes after the packing goes on in raw
 * chunks, and a backup that builds its copies (a take-over would) gets each record as
 * its primary has it.
 */
static void test_cold_copies_packed_r2(void **state)
{
    (void)state;
    net_start(4, 29);
    use_replicas(2);
    net.fifo = 1;
    /* About 15,000 copies a backup, ~800 KB of log: past the 4 KiB..128 KiB chunks and
     * into full-size ones. */
    enum { N = 60000 };
    for (uint32_t i = 0; i < N; i++) {
        uint64_t child = task_key(21, i + 1);
        put_record(CLIENT, task_key(21, i), i % 2, i % 2 == 0 ? &child : NULL, i % 2 == 0,
                   i % 4, i);
    }
    settle();
    size_t held = held_everywhere();
    assert_int_equal(held, (size_t)N * 2);
    bool more;
    for (uint32_t node = 0; node < net.nodes; node++) {
        assert_int_equal(kvs_compact(net.kvs[node], SIZE_MAX, &more), 0);
        assert_true(more); /* found full: cold from now on */
    }
    size_t packed = 0;
    for (uint32_t node = 0; node < net.nodes; node++) {
        size_t n = kvs_compact(net.kvs[node], SIZE_MAX, &more);
        assert_true(n > 0);
        assert_false(more);
        packed += n;
        assert_int_equal(kvs_compact(net.kvs[node], SIZE_MAX, &more), 0);
    }
    assert_true(packed > (size_t)N * 20);
    assert_int_equal(held_everywhere(), held);
    /* Later writes land after the packed chunks: finish the even tasks, tell their
     * children, move some. */
    for (uint32_t i = 0; i + 1 < N; i += 2) {
        uint32_t runner = i % 4;
        struct tmd_run run = {.node = runner, .t_start = i + 1, .t_end = i + 2, .data_size = i};
        kvs_cas(net.kvs[runner], task_key(21, i), KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run,
                NULL, NULL);
        kvs_append(net.kvs[runner], task_key(21, i + 1), KVS_FIELD_PARENT, runner, i,
                   task_key(21, i));
        if (i % 6 == 0)
            kvs_append(net.kvs[(runner + 1) % 4], task_key(21, i + 1), KVS_FIELD_HISTORY,
                       (runner + 1) % 4, 0, 0);
    }
    settle();
    for (uint32_t i = 0; i < N; i++)
        check_copies(task_key(21, i), 2, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_r1_wire_unchanged, teardown),
        cmocka_unit_test_teardown(test_cold_copies_packed_r2, teardown),
        cmocka_unit_test_teardown(test_writes_reach_every_replica_r2, teardown),
        cmocka_unit_test_teardown(test_writes_reach_every_replica_r3, teardown),
        cmocka_unit_test_teardown(test_writes_joined_reach_every_replica, teardown),
        cmocka_unit_test_teardown(test_r1_sends_no_replication, teardown),
        cmocka_unit_test_teardown(test_answers_wait_for_backups, teardown),
        cmocka_unit_test_teardown(test_held_answers_read_the_record_when_they_leave, teardown),
        cmocka_unit_test_teardown(test_tmd_spec_and_attempt, teardown),
        cmocka_unit_test_teardown(test_forget_every_copy_r2, teardown),
        cmocka_unit_test_teardown(test_forget_mark_never_sent, teardown),
        cmocka_unit_test_teardown(test_forget_drops_final_logs_r2, teardown),
    };
    return cmocka_run_group_tests_name("kvs_replica", tests, NULL, NULL);
}
