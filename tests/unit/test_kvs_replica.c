/*
 * The metadata store replicated (issue 15): up to eight stores and a client on a fake
 * network that delivers each link's messages in order and interleaves the links from
 * a seeded generator, so every run is the same run.  A node is killed by dropping
 * everything it sends or would receive from some delivery on; the others then learn
 * of it (kvs_set_down) one by one, with deliveries in between, as a membership
 * protocol would tell them.
 *
 * Also pins the store's wire bytes at R = 1 against tests/kvs/r1-wire.txt, recorded
 * before replication existed (KVS_WIRE_UPDATE=1 rewrites it after an intended change).
 * Wall time is frozen there by the clock_gettime below, so that stamped times are the
 * same on every run.
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "core/kvs/kvs.h"
#include "core/model/task.h"
#include "core/net/proto.h"
#include "tests/unit/capture.h"

#define NMAX 8
#define CLIENT NMAX /* the endpoint of the client's store */
#define WIRE_FILE "tests/kvs/r1-wire.txt"

static int frozen_clock;

/* Interposes libc's: the store stamps times with clock_wall_ns(). */
int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (frozen_clock) {
        ts->tv_sec = 1700000000;
        ts->tv_nsec = 0;
        return 0;
    }
    return (int)syscall(SYS_clock_gettime, id, ts);
}

struct msg {
    uint32_t from, to;      /* endpoints: 0..NMAX-1 nodes, CLIENT */
    uint16_t type;
    struct wbuf body;
};

/* One link's queue: indices into net.msgs, delivered from head. */
struct link {
    size_t *v;
    size_t head, len, cap;
};

static struct net {
    uint32_t nodes;
    struct kvs *kvs[NMAX + 1];
    uint32_t self[NMAX + 1];
    struct msg *msgs;
    size_t nmsgs, cap;
    struct link links[NMAX + 1][NMAX];
    size_t pending;         /* messages queued and not yet delivered or dropped */
    int dead[NMAX];
    uint64_t rng;
    int fifo;               /* deliver in global send order instead of random links */
    size_t delivered;
    struct wbuf scratch[NMAX + 1];
    uint16_t scratch_type[NMAX + 1];
    FILE *wire;             /* when set, every delivered message is dumped here */
    int join;               /* the transport joins writes into the last message (msg_join) */
    size_t joining[NMAX + 1]; /* the message t_join reopened, SIZE_MAX when none */
    size_t count_type[256];
    /* Notices, in order. */
    struct seen {
        uint32_t node;
        uint64_t key;
        uint8_t event;
        uint32_t nparents;
    } *notices;
    size_t nnotices, notices_cap;
    void (*on_notice)(uint32_t node, const struct kvs_notice *n);
} net;

static uint64_t rnd(void)
{
    net.rng ^= net.rng << 13;
    net.rng ^= net.rng >> 7;
    net.rng ^= net.rng << 17;
    return net.rng;
}

static struct wbuf *t_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    uint32_t self = *(uint32_t *)ctx;
    assert_true(node < net.nodes);
    assert_int_not_equal(node, self);
    wbuf_reset(&net.scratch[self]);
    net.scratch_type[self] = type;
    net.joining[self] = SIZE_MAX;
    *at = 0;
    return &net.scratch[self];
}

/* As a connection's batch does: the last message on the link, not yet delivered, of the
 * same type and under `most` bytes, is reopened and extended. */
static struct wbuf *t_join(void *ctx, uint32_t node, uint16_t type, size_t most, size_t *at)
{
    uint32_t self = *(uint32_t *)ctx;
    struct link *l = &net.links[self][node];
    if (l->len > l->head) {
        struct msg *m = &net.msgs[l->v[l->len - 1]];
        if (m->type == type && m->body.len < most) {
            wbuf_reset(&net.scratch[self]);
            wbuf_put(&net.scratch[self], m->body.data, m->body.len);
            net.scratch_type[self] = type;
            net.joining[self] = l->v[l->len - 1];
            *at = 0;
            return &net.scratch[self];
        }
    }
    return t_begin(ctx, node, type, at);
}

static void t_end(void *ctx, uint32_t node, size_t at)
{
    uint32_t self = *(uint32_t *)ctx;
    (void)at;
    if (net.joining[self] != SIZE_MAX) {
        struct msg *j = &net.msgs[net.joining[self]];
        wbuf_reset(&j->body);
        wbuf_put(&j->body, net.scratch[self].data, net.scratch[self].len);
        net.joining[self] = SIZE_MAX;
        return;
    }
    net.msgs = xgrow(net.msgs, &net.cap, net.nmsgs + 1, sizeof *net.msgs);
    struct msg *m = &net.msgs[net.nmsgs];
    m->from = self;
    m->to = node;
    m->type = net.scratch_type[self];
    wbuf_init(&m->body);
    wbuf_put(&m->body, net.scratch[self].data, net.scratch[self].len);
    struct link *l = &net.links[self][node];
    l->v = xgrow(l->v, &l->cap, l->len + 1, sizeof *l->v);
    l->v[l->len++] = net.nmsgs++;
    net.pending++;
}

static void t_notify(void *ctx, const struct kvs_notice *n)
{
    uint32_t self = *(uint32_t *)ctx;
    assert_true(self < net.nodes);
    net.notices = xgrow(net.notices, &net.notices_cap, net.nnotices + 1, sizeof *net.notices);
    net.notices[net.nnotices++] = (struct seen){self, n->key, n->event, n->nparents};
    if (net.on_notice)
        net.on_notice(self, n);
}

/* Whether the next net_start's stores join their writes to a backup into one message. */
static int join_next;

static void net_start(uint32_t nodes, uint64_t seed)
{
    memset(&net, 0, sizeof net);
    net.join = join_next;
    net.nodes = nodes;
    net.rng = seed ? seed : 1;
    for (uint32_t i = 0; i <= nodes; i++) {
        uint32_t e = i == nodes ? CLIENT : i;
        net.self[e] = e;
        struct kvs_transport t = {.ctx = &net.self[e], .msg_begin = t_begin, .msg_end = t_end,
                                  .notify = t_notify};
        if (net.join)
            t.msg_join = t_join;
        net.joining[e] = SIZE_MAX;
        net.kvs[e] = kvs_create(i == nodes ? KVS_NO_SHARD : i, nodes, &t);
    }
}

static int replies;
static int last_status;

static int teardown(void **state)
{
    (void)state;
    for (uint32_t e = 0; e <= NMAX; e++) {
        kvs_destroy(net.kvs[e]);
        wbuf_fini(&net.scratch[e]);
        for (uint32_t j = 0; j < NMAX; j++)
            free(net.links[e][j].v);
    }
    for (size_t i = 0; i < net.nmsgs; i++)
        wbuf_fini(&net.msgs[i].body);
    free(net.msgs);
    free(net.notices);
    frozen_clock = 0;
    memset(&net, 0, sizeof net);
    replies = 0;
    last_status = 0;
    return 0;
}

static int live(uint32_t e)
{
    return e == CLIENT || !net.dead[e];
}

/* Delivers the head of link (from, to), or drops it when either end is dead. */
static void deliver_link(uint32_t from, uint32_t to)
{
    struct link *l = &net.links[from][to];
    size_t idx = l->v[l->head++];
    struct msg *m = &net.msgs[idx];
    net.pending--;
    if (!live(from) || !live(to)) {
        wbuf_fini(&m->body);
        return;
    }
    net.delivered++;
    net.count_type[m->type & 0xff]++;
    if (net.wire) {
        if (from == CLIENT)
            fprintf(net.wire, "c %u %s %zu ", to, proto_type_name(m->type), m->body.len);
        else
            fprintf(net.wire, "%u %u %s %zu ", from, to, proto_type_name(m->type), m->body.len);
        for (size_t i = 0; i < m->body.len; i++)
            fprintf(net.wire, "%02x", m->body.data[i]);
        fputc('\n', net.wire);
    }
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    const char *reason = NULL;
    /* A node hands a client's messages to its store without a sender (node.c). */
    uint32_t sender = from == CLIENT ? KVS_NO_SHARD : from;
    int rc = kvs_handle(net.kvs[to], sender, m->type, &r, &reason);
    /* The handler may have sent messages, moving net.msgs. */
    m = &net.msgs[idx];
    if (rc != 0)
        fail_msg("%u -> %u %s: %s", from, to, proto_type_name(m->type), reason);
    wbuf_fini(&m->body);
}

/* One message: the oldest of all (fifo) or the head of a random non-empty link. */
static int deliver_one(void)
{
    if (!net.pending)
        return 0;
    if (net.fifo) {
        /* The oldest undelivered message is the smallest head index over all links. */
        size_t best = SIZE_MAX;
        uint32_t bf = 0, bt = 0;
        for (uint32_t f = 0; f <= NMAX; f++)
            for (uint32_t t = 0; t < net.nodes; t++) {
                struct link *l = &net.links[f][t];
                if (l->head < l->len && l->v[l->head] < best) {
                    best = l->v[l->head];
                    bf = f;
                    bt = t;
                }
            }
        deliver_link(bf, bt);
        return 1;
    }
    uint32_t nonempty[(NMAX + 1) * NMAX][2];
    size_t n = 0;
    for (uint32_t f = 0; f <= NMAX; f++)
        for (uint32_t t = 0; t < net.nodes; t++)
            if (net.links[f][t].head < net.links[f][t].len) {
                nonempty[n][0] = f;
                nonempty[n][1] = t;
                n++;
            }
    size_t pick = (size_t)(rnd() % n);
    deliver_link(nonempty[pick][0], nonempty[pick][1]);
    return 1;
}

/* Delivers everything, with what it causes, until the network is quiet. */
static void run_network(void)
{
    while (deliver_one())
        ;
}

/* ---- R = 1 on the wire --------------------------------------------------------------- */

static void ignore_reply(void *arg, int status, const struct tmd *t)
{
    (void)arg, (void)status, (void)t;
}

/* Finds a key of job `job` whose owner is `owner` among `nodes`. */
static uint64_t key_on(uint32_t job, uint32_t owner, uint32_t from)
{
    for (uint32_t i = from;; i++)
        if (task_key_owner(task_key(job, i), net.nodes) == owner)
            return task_key(job, i);
}

static void put_record(uint32_t via, uint64_t key, uint32_t parents, const uint64_t *children,
                       uint32_t nchildren, uint32_t holder, uint64_t size)
{
    struct tmd t = {.key = key, .num_parents = parents, .num_wait_parent = parents,
                    .holder = holder, .data_size = size, .t_submit = 5};
    tmd_set_children(&t, children, nchildren);
    assert_int_equal(kvs_insert(net.kvs[via], &t), 0);
    tmd_fini(&t);
}

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

/* ---- replication ---------------------------------------------------------------------- */

static void use_replicas(uint32_t r)
{
    for (uint32_t i = 0; i < net.nodes; i++)
        assert_int_equal(kvs_set_replicas(net.kvs[i], r), 0);
}

/* Delivers everything and lets the stores acknowledge, until nothing moves. */
static void settle(void)
{
    for (;;) {
        run_network();
        for (uint32_t i = 0; i < net.nodes; i++)
            if (!net.dead[i])
                kvs_flush(net.kvs[i]);
        if (!net.pending)
            return;
    }
}

/* Delivers up to n messages (acknowledging now and then, as loop passes would). */
static void deliver_some(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!net.pending || i % 16 == 15)
            for (uint32_t k = 0; k < net.nodes; k++)
                if (!net.dead[k])
                    kvs_flush(net.kvs[k]);
        if (!deliver_one())
            return;
    }
}

static uint32_t replicas_of(uint64_t key, uint32_t r, uint32_t *out)
{
    uint32_t owner = task_key_owner(key, net.nodes), n = 0;
    for (uint32_t i = 0; i < net.nodes && n < r; i++)
        if (!net.dead[(owner + i) % net.nodes])
            out[n++] = (owner + i) % net.nodes;
    return n;
}

static void encode(const struct tmd *t, struct wbuf *b)
{
    wbuf_reset(b);
    tmd_put(b, t);
}

/* Every live replica of `key` holds the primary's record byte for byte, and no other
 * live node holds any; or nobody holds it (`gone`). */
static void check_copies(uint64_t key, uint32_t r, int gone)
{
    uint32_t reps[KVS_MAX_REPLICAS];
    uint32_t n = replicas_of(key, r, reps);
    struct wbuf a, b;
    wbuf_init(&a);
    wbuf_init(&b);
    const struct tmd *primary = kvs_local_record(net.kvs[reps[0]], key);
    if (gone)
        assert_null(primary);
    else
        assert_non_null(primary);
    if (primary)
        encode(primary, &a);
    for (uint32_t node = 0; node < net.nodes; node++) {
        if (net.dead[node])
            continue;
        const struct tmd *copy = kvs_local_record(net.kvs[node], key);
        int replica = 0;
        for (uint32_t i = 0; i < n; i++)
            replica |= reps[i] == node;
        if (!replica || gone) {
            if (copy)
                fail_msg("node %u holds %llx, of which it is no replica", node,
                         (unsigned long long)key);
            continue;
        }
        if (!copy)
            fail_msg("replica %u of %llx has no copy", node, (unsigned long long)key);
        encode(copy, &b);
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
            fail_msg("replica %u of %llx differs from its primary %u", node,
                     (unsigned long long)key, reps[0]);
    }
    wbuf_fini(&a);
    wbuf_fini(&b);
}

static void on_barrier(void *arg)
{
    (*(int *)arg)++;
}

static void count_reply(void *arg, int status, const struct tmd *t)
{
    (void)t;
    replies++;
    last_status = status;
    if (arg)
        *(int *)arg = status;
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

/* Everyone alive learns that `dead` died (its messages in flight are lost). */
static void down_everywhere(uint32_t dead)
{
    net.dead[dead] = 1;
    for (uint32_t i = 0; i < net.nodes; i++)
        if (!net.dead[i])
            assert_int_equal(kvs_set_down(net.kvs[i], dead), 0);
    assert_int_equal(kvs_set_down(net.kvs[CLIENT], dead), 0);
}

struct answer {
    int calls, status;
    uint8_t rec_status;
};

static void on_answer(void *arg, int status, const struct tmd *t)
{
    struct answer *a = arg;
    a->calls++;
    a->status = status;
    a->rec_status = t ? t->status : 0xff;
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

/* A backup dies while an answer waits for it: the answer waits for its successor, which
 * the take-over sent the record to, rather than leave with one copy alive. */
static void test_answer_waits_for_the_new_backup(void **state)
{
    (void)state;
    net_start(4, 29);
    use_replicas(2);
    uint64_t k = key_on(1, 0, 0);
    put_record(CLIENT, k, 0, NULL, 0, 0, 0);
    settle();
    struct answer a = {0};
    int barrier = 0;
    struct tmd_run run = {.node = 0, .t_start = 1, .t_end = 2};
    kvs_cas(net.kvs[0], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a);
    kvs_barrier(net.kvs[0], on_barrier, &barrier);
    net.dead[1] = 1;
    assert_int_equal(kvs_set_down(net.kvs[0], 1), 0);
    run_network();
    assert_int_equal(a.calls, 0);
    assert_int_equal(barrier, 0);
    assert_non_null(kvs_local_record(net.kvs[2], k));
    assert_int_equal(kvs_local_record(net.kvs[2], k)->status, TASK_DONE);
    kvs_flush(net.kvs[2]);
    run_network();
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, 1);
    assert_int_equal(barrier, 1);
}

/* Lookups and CAS sent to a primary that dies unanswered are answered by the next. */
static void test_requests_to_a_dead_primary_answered(void **state)
{
    (void)state;
    net_start(5, 11);
    use_replicas(2);
    net.fifo = 1;
    uint64_t k1 = key_on(1, 1, 0), k2 = key_on(1, 1, k1 + 1 - task_key(1, 0));
    uint64_t k3 = key_on(1, 1, k2 + 1 - task_key(1, 0));
    put_record(CLIENT, k1, 0, NULL, 0, 3, 1);
    put_record(CLIENT, k2, 0, NULL, 0, 3, 2);
    put_record(CLIENT, k3, 0, NULL, 0, 3, 3);
    settle();
    /* Never delivered: node 1 dies with them queued. */
    struct answer a1 = {0}, a2 = {0}, a3 = {0};
    struct tmd_run run = {.node = 3, .t_start = 5, .t_end = 6, .data_size = 9};
    kvs_lookup(net.kvs[3], k1, on_answer, &a1);
    kvs_cas(net.kvs[3], k2, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a2);
    /* Delivered, applied and forwarded to the backup, but not answered: the answer
     * waits for node 2's acknowledgement, and node 1 dies first. */
    kvs_cas(net.kvs[3], k3, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a3);
    struct link *l = &net.links[3][1];
    l->head = l->len - 1; /* the two before it are lost */
    net.pending -= 2;
    deliver_link(3, 1);
    assert_int_equal(net.links[1][2].len - net.links[1][2].head, 1);
    deliver_link(1, 2);
    assert_int_equal(kvs_local_record(net.kvs[2], k3)->status, TASK_DONE);
    assert_int_equal(a3.calls, 0);
    down_everywhere(1);
    settle();
    assert_int_equal(a1.calls, 1);
    assert_int_equal(a1.status, 0);
    assert_int_equal(a2.calls, 1);
    assert_int_equal(a2.status, 1);
    assert_int_equal(a2.rec_status, TASK_DONE);
    /* The same completion asked again: counted once, answered yes. */
    assert_int_equal(a3.calls, 1);
    assert_int_equal(a3.status, 1);
    assert_int_equal(a3.rec_status, TASK_DONE);
    for (uint64_t k = k1; k <= k3; k++)
        if (task_key_owner(k, 5) == 1)
            check_copies(k, 2, 0);
}

static struct orphans_seen {
    uint64_t keys[256];
    size_t n;
} seen;

static void collect_orphan(void *arg, const struct tmd *rec)
{
    (void)arg;
    seen.keys[seen.n++] = rec->key;
}

/* The dead node's unfinished tasks are listed once in the cluster, by their primaries. */
static void test_orphans_listed_once(void **state)
{
    (void)state;
    net_start(6, 13);
    use_replicas(2);
    enum { N = 120 };
    uint32_t dead = 2;
    int expect[N] = {0};
    for (uint32_t i = 0; i < N; i++) {
        uint64_t child = task_key(4, i + 1);
        put_record(CLIENT, task_key(4, i), i % 3 == 2, i % 3 == 1 ? &child : NULL, i % 3 == 1,
                   i % 6, 0);
    }
    settle();
    /* Finish some, fail some (which cancels their waiting child). */
    for (uint32_t i = 0; i < N; i++) {
        if (i % 3 == 2 || i % 4 == 3)
            continue;
        uint32_t holder = i % 6;
        struct tmd_run run = {.node = holder};
        uint8_t status = i % 5 == 0 ? TASK_FAILED : TASK_DONE;
        kvs_cas(net.kvs[holder], task_key(4, i), KVS_FIELD_STATUS, TASK_READY, status, &run,
                NULL, NULL);
        if (i % 3 == 1 && status == TASK_FAILED)
            kvs_append(net.kvs[holder], task_key(4, i + 1), KVS_FIELD_PARENT_FAILED, holder, 0,
                       0);
    }
    settle();
    for (uint32_t i = 0; i < N; i++) {
        const struct tmd *rec =
            kvs_local_record(net.kvs[task_key_owner(task_key(4, i), 6)], task_key(4, i));
        expect[i] = rec->holder == dead && !task_status_final(rec->status);
    }
    down_everywhere(dead);
    settle();
    assert_int_equal(kvs_orphans(net.kvs[0], 1, collect_orphan, NULL), -EINVAL);
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            assert_true(kvs_orphans(net.kvs[node], dead, collect_orphan, NULL) >= 0);
    size_t by_dead = seen.n;
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            assert_true(kvs_orphans(net.kvs[node], KVS_NO_SHARD, collect_orphan, NULL) >= 0);
    assert_int_equal(seen.n, by_dead);
    size_t want = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t times = 0;
        for (size_t j = 0; j < seen.n; j++)
            times += seen.keys[j] == task_key(4, i);
        assert_int_equal(times, (size_t)expect[i]);
        want += (size_t)expect[i];
    }
    assert_int_equal(seen.n, want);
    assert_true(want > 5);
    /* Handed over: once, as attempt 1; a second hand-over of attempt 0 is refused. */
    for (size_t j = 0; j < seen.n; j++) {
        uint32_t primary = kvs_primary(net.kvs[0], seen.keys[j]);
        assert_int_equal(kvs_resubmit(net.kvs[primary], seen.keys[j], 0, 4), 1);
        assert_int_equal(kvs_resubmit(net.kvs[primary], seen.keys[j], 0, 5), 0);
        const struct tmd *rec = kvs_local_record(net.kvs[primary], seen.keys[j]);
        assert_int_equal(rec->holder, 4);
        assert_int_equal(rec->attempt, 1);
        assert_int_equal(rec->history[rec->num_history - 1], 4);
        assert_int_not_equal(rec->status, TASK_RUNNING);
    }
    assert_int_equal(kvs_resubmit(net.kvs[0], seen.keys[0], 1, 6), -EINVAL);
    settle();
    for (size_t j = 0; j < seen.n; j++)
        check_copies(seen.keys[j], 2, 0);
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            assert_int_equal(kvs_orphans(net.kvs[node], KVS_NO_SHARD, collect_orphan, NULL), 0);
}

/*
 * Tasks whose last move came from the dead node are listed once, by their primaries,
 * for their (live) holders to be asked: moved 2 -> 4, and 2 -> 4 -> 5 (the last move is
 * from 4: not listed), 3 -> 2 (held by the dead: an orphan, not listed here), a finished
 * one (not listed), and never moved (not listed).
 */
static void test_moved_from_dead_listed(void **state)
{
    (void)state;
    net_start(6, 19);
    use_replicas(2);
    enum { N = 60 };
    uint32_t dead = 2;
    for (uint32_t i = 0; i < N; i++)
        put_record(CLIENT, task_key(5, i), 0, NULL, 0, i % 5 == 4 ? 3 : dead, 0);
    settle();
    int expect[N] = {0};
    for (uint32_t i = 0; i < N; i++) {
        uint64_t k = task_key(5, i);
        switch (i % 5) {
        case 0: /* moved from the dead node */
            kvs_append(net.kvs[dead], k, KVS_FIELD_HISTORY, 4, 0, 0);
            expect[i] = 1;
            break;
        case 1: /* moved on again */
            kvs_append(net.kvs[dead], k, KVS_FIELD_HISTORY, 4, 0, 0);
            settle();
            kvs_append(net.kvs[4], k, KVS_FIELD_HISTORY, 5, 0, 0);
            break;
        case 2: { /* moved, then done */
            kvs_append(net.kvs[dead], k, KVS_FIELD_HISTORY, 4, 0, 0);
            settle();
            struct tmd_run run = {.node = 4};
            kvs_cas(net.kvs[4], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL, NULL);
            break;
        }
        case 4: /* moved to the dead node */
            kvs_append(net.kvs[3], k, KVS_FIELD_HISTORY, dead, 0, 0);
            break;
        default: /* never moved */
            break;
        }
    }
    settle();
    assert_int_equal(kvs_moved_from(net.kvs[0], dead, collect_orphan, NULL), -EINVAL);
    down_everywhere(dead);
    settle();
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            assert_true(kvs_moved_from(net.kvs[node], dead, collect_orphan, NULL) >= 0);
    size_t want = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t times = 0;
        for (size_t j = 0; j < seen.n; j++)
            times += seen.keys[j] == task_key(5, i);
        assert_int_equal(times, (size_t)expect[i]);
        want += (size_t)expect[i];
    }
    assert_int_equal(seen.n, want);
    assert_true(want >= 10);
    /* Their records name where they came from: the first holder, then the move. */
    uint64_t k0 = task_key(5, 0);
    const struct tmd *rec = kvs_local_record(net.kvs[kvs_primary(net.kvs[0], k0)], k0);
    assert_int_equal(rec->num_history, 2);
    assert_int_equal(rec->history[0], dead);
    assert_int_equal(rec->history[1], 4);
}

/*
 * The ends the dead node was to report are listed once, by their primaries: done or
 * failed by it, or cancelled while it held them; not those a live node ran, nor its
 * unfinished tasks (orphans, run again).
 */
static void test_ends_lost_with_dead_listed(void **state)
{
    (void)state;
    net_start(6, 23);
    use_replicas(2);
    enum { N = 60 };
    uint32_t dead = 3;
    int expect[N] = {0};
    for (uint32_t i = 0; i < N; i++)
        put_record(CLIENT, task_key(6, i), 0, NULL, 0, i % 2 ? dead : 1, 0);
    settle();
    for (uint32_t i = 0; i < N; i++) {
        uint64_t k = task_key(6, i);
        uint32_t holder = i % 2 ? dead : 1;
        switch (i % 6) {
        case 0: case 1: { /* done by its holder: listed when that is the dead node */
            struct tmd_run run = {.node = holder};
            kvs_cas(net.kvs[holder], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL,
                    NULL);
            expect[i] = holder == dead;
            break;
        }
        case 3: { /* failed on the dead node */
            struct tmd_run run = {.node = dead};
            kvs_cas(net.kvs[dead], k, KVS_FIELD_STATUS, TASK_READY, TASK_FAILED, &run, NULL,
                    NULL);
            expect[i] = 1;
            break;
        }
        case 5: /* cancelled while the dead node held it */
            kvs_append(net.kvs[dead], k, KVS_FIELD_REMOVE, dead, 0, 0);
            expect[i] = 1;
            break;
        default: /* unfinished */
            break;
        }
    }
    settle();
    down_everywhere(dead);
    settle();
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            kvs_ends_lost_with(net.kvs[node], dead, collect_orphan, NULL);
    size_t want = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t times = 0;
        for (size_t j = 0; j < seen.n; j++)
            times += seen.keys[j] == task_key(6, i);
        assert_int_equal(times, (size_t)expect[i]);
        want += (size_t)expect[i];
    }
    assert_int_equal(seen.n, want);
    assert_true(want >= 20);
}

/* A completion counts once, by the attempt that holds the task; the dead are not heard. */
static void test_late_completion_refused(void **state)
{
    (void)state;
    net_start(4, 17);
    use_replicas(2);
    uint64_t k = key_on(1, 0, 0);
    put_record(CLIENT, k, 0, NULL, 0, 1, 1);
    settle();
    /* Node 1 runs it and reports late: node 0 has declared it dead and handed the task
     * to node 2 meanwhile. */
    struct answer late = {0}, relayed = {0}, now = {0}, again = {0}, other = {0};
    struct tmd_run run1 = {.node = 1, .t_start = 1, .t_end = 2};
    kvs_cas(net.kvs[1], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run1, on_answer, &late);
    assert_int_equal(kvs_set_down(net.kvs[0], 1), 0);
    assert_int_equal(kvs_resubmit(net.kvs[0], k, 0, 2), 1);
    settle();
    assert_int_equal(late.calls, 0); /* not heard, not answered */
    /* The same stale attempt from a node nobody thinks dead: refused. */
    kvs_cas(net.kvs[3], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run1, on_answer, &relayed);
    settle();
    assert_int_equal(relayed.calls, 1);
    assert_int_equal(relayed.status, -ESTALE);
    struct tmd_run run2 = {.node = 2, .attempt = 1, .t_start = 3, .t_end = 4, .data_size = 5};
    kvs_cas(net.kvs[2], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run2, on_answer, &now);
    settle();
    assert_int_equal(now.calls, 1);
    assert_int_equal(now.status, 1);
    /* Asked again by its runner: yes, nothing changes; by another node: no. */
    kvs_cas(net.kvs[2], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run2, on_answer, &again);
    kvs_cas(net.kvs[3], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run2, on_answer, &other);
    settle();
    assert_int_equal(again.status, 1);
    assert_int_equal(other.status, 0);
    const struct tmd *rec = kvs_local_record(net.kvs[0], k);
    assert_int_equal(rec->runner, 2);
    assert_int_equal(rec->attempt, 1);
    assert_int_equal(rec->data_size, 5);
    /* Node 1 was the backup: node 0 restored R on node 2 when it learned. */
    assert_non_null(kvs_local_record(net.kvs[2], k));
    assert_int_equal(kvs_local_record(net.kvs[2], k)->attempt, 1);
}

/* Lineage: a DONE task's output died with its runner; its primary re-opens the record
 * once (attempt + 1, held by the dead runner, flagged), the backup follows, the task is
 * an orphan to hand on, and its recomputation completes it at the newer attempt.  Only
 * the primary, only for a dead runner, only at the record's attempt. */
static void test_reopen_lost_output(void **state)
{
    (void)state;
    net_start(4, 23);
    use_replicas(2);
    uint64_t k = key_on(1, 0, 0);
    put_record(CLIENT, k, 0, NULL, 0, 3, 1);
    settle();
    struct answer ran = {0}, again = {0};
    struct tmd_run run3 = {.node = 3, .t_start = 1, .t_end = 2, .data_size = 7};
    kvs_cas(net.kvs[3], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run3, on_answer, &ran);
    settle();
    assert_int_equal(ran.status, 1);
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 3), 0); /* node 3 is alive */
    down_everywhere(3);
    settle();
    assert_int_equal(kvs_reopen(net.kvs[1], k, 0, 3), 0); /* a backup: not its decision */
    assert_int_equal(kvs_reopen(net.kvs[0], k, 1, 3), 0); /* not the record's attempt */
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 2), 0); /* not its runner */
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 9), -EINVAL);
    assert_int_equal(kvs_append(net.kvs[2], k, KVS_FIELD_REOPEN, 3, 0, 0), -EINVAL);
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 3), 1);
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 3), 0); /* said twice: once */
    settle();
    for (uint32_t node = 0; node <= 1; node++) {
        const struct tmd *rec = kvs_local_record(net.kvs[node], k);
        assert_non_null(rec);
        assert_int_equal(rec->status, TASK_READY);
        assert_int_equal(rec->attempt, 1);
        assert_int_equal(rec->holder, 3);
        assert_true(rec->flags & TMD_FLAG_REOPENED);
    }
    /* The first run's end asked again is stale now. */
    kvs_cas(net.kvs[2], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run3, on_answer, &again);
    settle();
    assert_int_equal(again.status, -ESTALE);
    seen.n = 0;
    assert_int_equal(kvs_orphans(net.kvs[0], KVS_NO_SHARD, collect_orphan, NULL), 1);
    assert_true(seen.n == 1 && seen.keys[0] == k);
    assert_int_equal(kvs_resubmit(net.kvs[0], k, 1, 2), 1);
    struct answer rerun = {0};
    struct tmd_run run2 = {.node = 2, .attempt = 2, .t_start = 3, .t_end = 4, .data_size = 7};
    kvs_cas(net.kvs[2], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run2, on_answer, &rerun);
    settle();
    assert_int_equal(rerun.status, 1);
    const struct tmd *rec = kvs_local_record(net.kvs[1], k);
    assert_int_equal(rec->status, TASK_DONE);
    assert_int_equal(rec->runner, 2);
    assert_true(rec->flags & TMD_FLAG_REOPENED);
    /* Recomputed: a late request naming the old runner changes nothing. */
    assert_int_equal(kvs_reopen(net.kvs[0], k, 2, 3), 0);
    assert_int_equal(kvs_local_record(net.kvs[0], k)->status, TASK_DONE);
}

/* A request reaching a node before that node learns of the death its sender knows of
 * waits there, and is handled once it learns. */
static void test_requests_wait_for_the_news(void **state)
{
    (void)state;
    net_start(4, 19);
    use_replicas(2);
    uint64_t k = key_on(1, 1, 0), fresh = key_on(1, 1, 500);
    put_record(CLIENT, k, 1, NULL, 0, 3, 1);
    settle();
    net.dead[1] = 1;
    assert_int_equal(kvs_set_down(net.kvs[0], 1), 0);
    assert_int_equal(kvs_set_down(net.kvs[CLIENT], 1), 0);
    assert_int_equal(kvs_primary(net.kvs[0], k), 2);
    assert_int_equal(kvs_primary(net.kvs[2], k), 1);
    struct answer a = {0};
    kvs_lookup(net.kvs[0], k, on_answer, &a);
    kvs_append(net.kvs[0], k, KVS_FIELD_PARENT, 0, 7, 99);
    put_record(CLIENT, fresh, 0, NULL, 0, 0, 0);
    settle();
    assert_int_equal(a.calls, 0);
    assert_int_equal(net.nnotices, 0);
    assert_null(kvs_local_record(net.kvs[2], fresh));
    assert_int_equal(kvs_set_down(net.kvs[2], 1), 0);
    settle();
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, 0);
    /* Handled in arrival order: the lookup saw the record before the append. */
    assert_int_equal(a.rec_status, TASK_WAITING);
    assert_int_equal(kvs_local_record(net.kvs[2], k)->status, TASK_READY);
    assert_int_equal(net.nnotices, 1);
    assert_int_equal(net.notices[0].node, 3);
    assert_non_null(kvs_local_record(net.kvs[2], fresh));
    assert_int_equal(kvs_set_down(net.kvs[3], 1), 0);
    settle();
    check_copies(k, 2, 0);
    check_copies(fresh, 2, 0);
}

/* At R = 1 a death loses its records but not the store: the next node serves the keys
 * (empty); with every node down there is nowhere to go. */
static void test_r1_death_and_nobody_left(void **state)
{
    (void)state;
    net_start(3, 23);
    uint64_t k = key_on(1, 1, 0);
    put_record(CLIENT, k, 0, NULL, 0, 0, 0);
    run_network();
    assert_int_equal(kvs_set_down(net.kvs[0], 0), -EINVAL);
    assert_int_equal(kvs_set_down(net.kvs[0], 3), -EINVAL);
    down_everywhere(1);
    assert_int_equal(kvs_set_down(net.kvs[0], 1), 0); /* again: nothing new */
    assert_true(kvs_is_down(net.kvs[0], 1));
    assert_false(kvs_is_down(net.kvs[0], 2));
    struct answer a = {0};
    kvs_lookup(net.kvs[0], k, on_answer, &a);
    run_network();
    assert_int_equal(a.status, -ENOENT);
    assert_int_equal(net.count_type[MSG_KVS_REPLICATE & 0xff], 0);
    /* A new record for the dead node's keys goes to the next node. */
    put_record(CLIENT, k, 0, NULL, 0, 0, 0);
    run_network();
    assert_non_null(kvs_local_record(net.kvs[2], k));
    assert_int_equal(kvs_set_down(net.kvs[CLIENT], 0), 0);
    assert_int_equal(kvs_set_down(net.kvs[CLIENT], 2), 0);
    assert_int_equal(kvs_primary(net.kvs[CLIENT], k), KVS_NO_SHARD);
    struct tmd t = {.key = k};
    assert_int_equal(kvs_insert(net.kvs[CLIENT], &t), -EHOSTDOWN);
    assert_int_equal(kvs_append(net.kvs[CLIENT], k, KVS_FIELD_REMOVE, 0, 0, 0), -EHOSTDOWN);
}

/* The record's new fields travel, and a record without them encodes as before. */
static void test_tmd_spec_and_attempt(void **state)
{
    (void)state;
    uint8_t spec[37];
    for (size_t i = 0; i < sizeof spec; i++)
        spec[i] = (uint8_t)(i * 7);
    struct tmd t = {.key = 42, .status = TASK_READY, .holder = 3, .attempt = 2,
                    .flags = TMD_FLAG_REPLAYED};
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
    assert_int_equal(u.attempt, 2);
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
    t.attempt = 0;
    t.flags = 0;
    wbuf_reset(&b);
    tmd_put(&b, &t);
    /* Key, status, mask, three one-byte varints, t_submit, no children. */
    assert_int_equal(b.len, 8 + 1 + 1 + 3 + 8 + 1);
    assert_int_equal(b.data[8], TASK_READY);
    tmd_fini(&t);
    wbuf_fini(&b);
}

/* ---- forgetting a finished job at R = 2 ---------------------------------------------- */


/* Copies of job `job`'s records, tasks 0 to count - 1, on every live node. */
static size_t copies_of_job(uint32_t job, uint32_t count)
{
    size_t n = 0;
    for (uint32_t node = 0; node < net.nodes; node++)
        for (uint32_t i = 0; !net.dead[node] && i < count; i++)
            n += kvs_local_record(net.kvs[node], task_key(job, i)) != NULL;
    return n;
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
    struct tmd w = {.key = task_key(3, 1), .attempt = 2};
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
    assert_int_equal(u.attempt, 2);
    assert_memory_equal(u.spec, spec, sizeof spec);
    tmd_fini(&u);
    wbuf_fini(&c);
    shard_fini(&s);
    wbuf_fini(&b);
}

/* Records held on the live nodes, kept copies counted unbuilt. */
static size_t held_everywhere(void)
{
    size_t n = 0;
    for (uint32_t node = 0; node < net.nodes; node++)
        n += net.dead[node] ? 0 : kvs_records_held(net.kvs[node]);
    return n;
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

/* ---- a DAG through deaths ------------------------------------------------------------ */

/*
 * A driver that plays the nodes' part as node.c does: a task without parents starts at
 * its holder; a waiting task starts when its holder hears it is ready; the runner
 * reports the completion with a CAS and, when it swapped, tells each child (PARENT, or
 * PARENT_FAILED for the few tasks that fail, which cancels their subtree).  A node
 * ignores a notice for a task it does not hold waiting (a repeat after a take-over).
 * One ready task in five is first moved to the next node (a push or a steal: HISTORY,
 * then the other node runs it).  When a node learns of a death it resubmits the orphans
 * its store lists to a live node; re-asserts the tasks moved to it that it still runs
 * (a move the dead primary had not forwarded is lost with it); and looks up the tasks
 * it moved to the dead node: a record that still names it as holder is a move that was
 * lost, and it runs the task again itself.
 */
#define DAG_MAX 400

static struct dag {
    uint32_t n;
    uint64_t key[DAG_MAX];
    uint32_t nparents[DAG_MAX];
    uint32_t parent[DAG_MAX][3];
    uint32_t nchildren[DAG_MAX];
    uint32_t child[DAG_MAX][DAG_MAX / 4];
    uint32_t holder[DAG_MAX], attempt[DAG_MAX];
    int waiting[DAG_MAX];   /* held in the holder's wait queue */
    int successes[DAG_MAX]; /* CAS answered 1 */
    int refused[DAG_MAX];   /* CAS answered -ESTALE */
    int starts[DAG_MAX];
    int fails[DAG_MAX];     /* this task fails when it runs */
    int doomed[DAG_MAX];    /* it fails or an ancestor does: it ends FAILED or CANCELLED */
    int cancel_heard[DAG_MAX]; /* its holder heard it was cancelled */
    int moved[DAG_MAX];
    int taken[DAG_MAX];     /* run again by the node that moved it: the move was lost */
    uint32_t moved_from[DAG_MAX];
    int taken_back, stale_orphans;
    int resubmitted;
    int repeats;            /* notices for tasks not waiting */
    struct run_ctx {
        uint32_t node, task;
    } ctx[DAG_MAX][4];
} dag;

static uint32_t index_of(uint64_t key)
{
    uint32_t i = task_key_index(key);
    assert_true(i < dag.n);
    return i;
}

static void on_completed(void *arg, int status, const struct tmd *rec)
{
    struct run_ctx *c = arg;
    /* A dead node's store is never called again; nothing arrives there. */
    assert_false(net.dead[c->node]);
    if (status == -ESTALE) {
        dag.refused[c->task]++;
        return;
    }
    assert_int_equal(status, 1);
    assert_non_null(rec);
    dag.successes[c->task]++;
    uint8_t field = rec->status == TASK_DONE ? KVS_FIELD_PARENT : KVS_FIELD_PARENT_FAILED;
    for (uint32_t i = 0; i < dag.nchildren[c->task]; i++)
        kvs_append(net.kvs[c->node], dag.key[dag.child[c->task][i]], field, c->node,
                   rec->data_size, rec->key);
}

static uint32_t next_live(uint32_t from)
{
    for (uint32_t i = 1; i <= net.nodes; i++)
        if (!net.dead[(from + i) % net.nodes])
            return (from + i) % net.nodes;
    fail_msg("no live node");
    return 0;
}

static void start(uint32_t node, uint32_t task)
{
    /* Ready only once every parent completed: a parent counted twice would break it. */
    for (uint32_t i = 0; i < dag.nparents[task]; i++)
        if (!dag.successes[dag.parent[task][i]]) {
            /* A parent may have completed on a node that died before hearing so. */
            const struct tmd *p = NULL;
            for (uint32_t k = 0; k < net.nodes && !p; k++)
                if (!net.dead[k] &&
                    kvs_primary(net.kvs[k], dag.key[dag.parent[task][i]]) == k)
                    p = kvs_local_record(net.kvs[k], dag.key[dag.parent[task][i]]);
            if (!p || p->status != TASK_DONE)
                fail_msg("task %u ready before its parent %u completed", task,
                         dag.parent[task][i]);
        }
    if (!dag.moved[task] && (task * 7 + dag.attempt[task]) % 5 == 0) {
        uint32_t to = next_live(node);
        kvs_append(net.kvs[node], dag.key[task], KVS_FIELD_HISTORY, to, 0, 0);
        dag.moved[task] = 1;
        dag.moved_from[task] = node;
        dag.holder[task] = to;
        node = to;
    }
    dag.starts[task]++;
    struct run_ctx *c = &dag.ctx[task][dag.attempt[task]];
    *c = (struct run_ctx){node, task};
    struct tmd_run run = {.node = node, .attempt = dag.attempt[task], .t_start = 1000 + task,
                          .t_end = 2000 + task, .data_size = task + 1};
    kvs_cas(net.kvs[node], dag.key[task], KVS_FIELD_STATUS, TASK_READY,
            dag.fails[task] ? TASK_FAILED : TASK_DONE, &run, on_completed, c);
}

static void dag_notice(uint32_t node, const struct kvs_notice *n)
{
    uint32_t task = index_of(n->key);
    if (n->event == KVS_EVENT_CANCEL) {
        int ancestor = 0;
        for (uint32_t i = 0; i < dag.nparents[task]; i++)
            ancestor |= dag.doomed[dag.parent[task][i]];
        if (!ancestor)
            fail_msg("task %u cancelled, though no ancestor failed", task);
        dag.cancel_heard[task] |= dag.holder[task] == node;
        dag.waiting[task] = 0;
        return;
    }
    if (dag.holder[task] != node || !dag.waiting[task]) {
        dag.repeats++;
        return;
    }
    dag.waiting[task] = 0;
    start(node, task);
}

static void dag_build(uint32_t n, uint64_t seed)
{
    memset(&dag, 0, sizeof dag);
    dag.n = n;
    uint64_t x = seed * 2654435761u + 1;
    for (uint32_t i = 0; i < n; i++) {
        dag.key[i] = task_key(9, i);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t want = i < 8 ? 0 : (uint32_t)(x % 4);
        for (uint32_t k = 0; k < want; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t p = i - 1 - (uint32_t)(x % (i < 40 ? i : 40));
            int dup = 0;
            for (uint32_t j = 0; j < dag.nparents[i]; j++)
                dup |= dag.parent[i][j] == p;
            if (dup || dag.nchildren[p] == DAG_MAX / 4)
                continue;
            dag.parent[i][dag.nparents[i]++] = p;
            dag.child[p][dag.nchildren[p]++] = i;
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        dag.holder[i] = (uint32_t)(x % net.nodes);
        dag.fails[i] = i % 61 == 17;
        dag.doomed[i] = dag.fails[i];
        for (uint32_t k = 0; k < dag.nparents[i]; k++)
            dag.doomed[i] |= dag.doomed[dag.parent[i][k]];
    }
}

static void dag_submit(void)
{
    net.on_notice = dag_notice;
    for (uint32_t i = 0; i < dag.n; i++) {
        uint64_t kids[DAG_MAX / 4];
        for (uint32_t k = 0; k < dag.nchildren[i]; k++)
            kids[k] = dag.key[dag.child[i][k]];
        put_record(CLIENT, dag.key[i], dag.nparents[i], kids, dag.nchildren[i], dag.holder[i], 0);
        dag.waiting[i] = dag.nparents[i] > 0;
    }
    /* The client's sync: every record in place before any task starts. */
    settle();
    for (uint32_t i = 0; i < dag.n; i++)
        if (!dag.nparents[i])
            start(dag.holder[i], i);
}

struct orphan_ctx {
    uint32_t node, dead;
};

static void on_orphan(void *arg, const struct tmd *rec)
{
    struct orphan_ctx *o = arg;
    uint32_t task = index_of(rec->key);
    assert_true(net.dead[rec->holder]);
    /* A move its primary lost: the task runs elsewhere, and that run will be refused
     * (-ESTALE) once the new attempt holds it. */
    if (dag.holder[task] != rec->holder) {
        assert_true(dag.moved[task]);
        dag.stale_orphans++;
    }
    uint8_t status = rec->status;
    uint32_t attempt = rec->attempt;
    uint32_t to = next_live(rec->holder + (uint32_t)task % 3);
    assert_int_equal(kvs_resubmit(net.kvs[o->node], rec->key, attempt, to), 1);
    dag.resubmitted++;
    dag.holder[task] = to;
    dag.attempt[task] = attempt + 1;
    dag.waiting[task] = status == TASK_WAITING;
    if (status == TASK_READY)
        start(to, task);
}

static struct take_back {
    uint32_t node, task;
} take_backs[DAG_MAX];

static void on_take_back(void *arg, int status, const struct tmd *rec)
{
    struct take_back *tb = arg;
    if (status != 0 || task_status_final(rec->status) || rec->holder != tb->node ||
        dag.holder[tb->task] == tb->node || !net.dead[dag.holder[tb->task]])
        return;
    dag.taken_back++;
    dag.taken[tb->task]++;
    dag.holder[tb->task] = tb->node;
    start(tb->node, tb->task);
}

/* Node `node` learns that `dead` is dead, as the membership protocol would tell it. */
static void learn(uint32_t node, uint32_t dead)
{
    assert_int_equal(kvs_set_down(net.kvs[node], dead), 0);
    struct orphan_ctx o = {node, dead};
    assert_true(kvs_orphans(net.kvs[node], KVS_NO_SHARD, on_orphan, &o) >= 0);
    for (uint32_t t = 0; t < dag.n; t++) {
        if (!dag.moved[t] || dag.successes[t] || dag.refused[t])
            continue;
        if (dag.holder[t] == node)
            kvs_append(net.kvs[node], dag.key[t], KVS_FIELD_HISTORY, node, 0, 0);
        else if (dag.moved_from[t] == node && dag.holder[t] == dead) {
            take_backs[t] = (struct take_back){node, t};
            kvs_lookup(net.kvs[node], dag.key[t], on_take_back, &take_backs[t]);
        }
    }
}

/*
 * The victims stop.  Of what each had sent, a prefix of every link gets through (TCP
 * delivers in order, and the rest dies with the process), before anyone can notice:
 * detection takes a failure timeout, far longer than a message in flight.
 */
static void kill(const uint32_t *victims, uint32_t kills)
{
    for (uint32_t k = 0; k < kills; k++)
        for (uint32_t to = 0; to < net.nodes; to++) {
            struct link *l = &net.links[victims[k]][to];
            size_t queued = l->len - l->head;
            for (size_t through = (size_t)(rnd() % (queued + 1)); through; through--)
                deliver_link(victims[k], to);
        }
    for (uint32_t k = 0; k < kills; k++)
        net.dead[victims[k]] = 1;
}

/*
 * Runs a DAG of n tasks on `nodes` stores at R = r, killing `kills` nodes together
 * after `when` deliveries; the survivors learn of it one by one, `skew` deliveries
 * apart.  Then checks: every task completed once, each by the attempt that held it;
 * every record final at its primary with exactly its parents counted; backups equal.
 */
static void dag_through_deaths(uint32_t nodes, uint32_t r, uint32_t n, uint64_t seed,
                               size_t when, const uint32_t *victims, uint32_t kills, size_t skew)
{
    /* Every other seed with writes joined into one REPLICATE message per link, as the
     * daemons' connections do: a message then holds many writes, and a death cuts the
     * link between them. */
    join_next = seed % 2 == 0;
    net_start(nodes, seed);
    join_next = 0;
    use_replicas(r);
    dag_build(n, seed);
    dag_submit();
    deliver_some(when);
    int done_before = 0;
    for (uint32_t t = 0; t < n; t++)
        done_before += dag.successes[t];
    kill(victims, kills);
    for (uint32_t k = 0; k < kills; k++)
        kvs_set_down(net.kvs[CLIENT], victims[k]);
    /* The survivors hear in an order of their own, with traffic in between. */
    for (uint32_t i = 0; i < nodes; i++) {
        uint32_t node = (uint32_t)(seed + i) % nodes;
        if (net.dead[node])
            continue;
        deliver_some(skew);
        for (uint32_t k = 0; k < kills; k++)
            learn(node, victims[(k + i) % kills]);
    }
    settle();
    if (getenv("KVS_TEST_VERBOSE"))
        fprintf(stderr, "seed %llu: %d done at the kill after %zu deliveries, %zu in all; "
                "%d resubmitted, %d repeated notices, %d taken back, %d stale orphans\n",
                (unsigned long long)seed, done_before, when, net.delivered, dag.resubmitted,
                dag.repeats, dag.taken_back, dag.stale_orphans);
    for (uint32_t t = 0; t < n; t++) {
        uint32_t primary = kvs_primary(net.kvs[next_live(victims[0])], dag.key[t]);
        assert_false(net.dead[primary]);
        const struct tmd *rec = kvs_local_record(net.kvs[primary], dag.key[t]);
        if (!rec)
            fail_msg("seed %llu: record of task %u lost", (unsigned long long)seed, t);
        int cancelled = 0;
        for (uint32_t i = 0; i < dag.nparents[t]; i++)
            cancelled |= dag.doomed[dag.parent[t][i]];
        uint8_t want = cancelled ? TASK_CANCELLED : dag.fails[t] ? TASK_FAILED : TASK_DONE;
        if (rec->status != want)
            fail_msg("seed %llu: task %u is %s, not %s (holder %u, attempt %u; the driver's "
                     "holder %u, waiting %d, moved %d from %u, starts %d, taken back %d)",
                     (unsigned long long)seed, t, task_status_name(rec->status),
                     task_status_name(want), rec->holder, rec->attempt, dag.holder[t],
                     dag.waiting[t], dag.moved[t], dag.moved_from[t], dag.starts[t],
                     dag.taken[t]);
        if (want == TASK_CANCELLED) {
            /* Told to its holder, unless the holder died and the task, final, was not
             * resubmitted. */
            if (!dag.cancel_heard[t] && !net.dead[dag.holder[t]])
                fail_msg("seed %llu: holder %u of cancelled task %u never heard",
                         (unsigned long long)seed, dag.holder[t], t);
            assert_int_equal(dag.starts[t], 0);
            check_copies(dag.key[t], r, 0);
            continue;
        }
        /* Once: by a live node that heard so, or by a node that died after its CAS. */
        if (dag.successes[t] > 1)
            fail_msg("seed %llu: task %u completed %d times", (unsigned long long)seed, t,
                     dag.successes[t]);
        if (dag.successes[t] == 0) {
            int runner_dead = 0;
            for (uint32_t k = 0; k < kills; k++)
                runner_dead |= rec->runner == victims[k];
            if (!runner_dead)
                fail_msg("seed %llu: task %u done by live node %u that never heard",
                         (unsigned long long)seed, t, rec->runner);
        }
        assert_int_equal(rec->attempt, dag.attempt[t]);
        /* Started once per attempt at most (repeated notices were ignored), and again
         * for each lost move taken back. */
        assert_true(dag.starts[t] >= 1 &&
                    dag.starts[t] <= (int)dag.attempt[t] + 1 + dag.taken[t]);
        assert_int_equal(rec->num_wait_parent, 0);
        assert_int_equal(tmd_parents_done(rec), dag.nparents[t]);
        for (uint32_t i = 0; i < dag.nparents[t]; i++) {
            int found = 0;
            for (uint32_t j = 0; j < dag.nparents[t]; j++)
                found |= rec->parent_list[j].object == dag.key[dag.parent[t][i]];
            assert_true(found);
        }
        check_copies(dag.key[t], r, 0);
    }
}

/* How many runs of each death test: KVS_REPLICA_RUNS raises it for a longer hunt. */
static uint64_t runs(uint64_t usual)
{
    const char *env = getenv("KVS_REPLICA_RUNS");
    return env && atoll(env) > 0 ? (uint64_t)atoll(env) : usual;
}

/* Kills spread over the run (a run is about 3,000 deliveries at R = 2, 5,000 at R = 3),
 * from right after the submission to near the end, of every node in turn. */
static void test_primary_death_loses_nothing_r2(void **state)
{
    (void)state;
    uint64_t n = runs(24);
    for (uint64_t seed = 1; seed <= n; seed++) {
        uint32_t victim = (uint32_t)seed % 6;
        dag_through_deaths(6, 2, 300, seed, 40 + 115 * (size_t)((seed - 1) % 24), &victim, 1,
                           seed % 5 * 20);
        if (seed < n)
            teardown(NULL);
    }
}

/* Two at once: neighbours on the ring (every record of the first has its first backup
 * die with it) or not. */
static void test_two_deaths_at_once_r3(void **state)
{
    (void)state;
    uint64_t n = runs(16);
    for (uint64_t seed = 1; seed <= n; seed++) {
        uint32_t victims[2] = {(uint32_t)seed % 8, (uint32_t)(seed + 1 + seed % 3) % 8};
        dag_through_deaths(8, 3, 300, seed, 40 + 280 * (size_t)((seed - 1) % 16), victims, 2,
                           seed % 4 * 25);
        if (seed < n)
            teardown(NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_r1_wire_unchanged, teardown),
        cmocka_unit_test_teardown(test_r1_sends_no_replication, teardown),
        cmocka_unit_test_teardown(test_writes_reach_every_replica_r2, teardown),
        cmocka_unit_test_teardown(test_writes_reach_every_replica_r3, teardown),
        cmocka_unit_test_teardown(test_writes_joined_reach_every_replica, teardown),
        cmocka_unit_test_teardown(test_answers_wait_for_backups, teardown),
        cmocka_unit_test_teardown(test_answer_waits_for_the_new_backup, teardown),
        cmocka_unit_test_teardown(test_requests_to_a_dead_primary_answered, teardown),
        cmocka_unit_test_teardown(test_orphans_listed_once, teardown),
        cmocka_unit_test_teardown(test_moved_from_dead_listed, teardown),
        cmocka_unit_test_teardown(test_ends_lost_with_dead_listed, teardown),
        cmocka_unit_test_teardown(test_late_completion_refused, teardown),
        cmocka_unit_test_teardown(test_reopen_lost_output, teardown),
        cmocka_unit_test_teardown(test_requests_wait_for_the_news, teardown),
        cmocka_unit_test_teardown(test_r1_death_and_nobody_left, teardown),
        cmocka_unit_test_teardown(test_tmd_spec_and_attempt, teardown),
        cmocka_unit_test_teardown(test_forget_every_copy_r2, teardown),
        cmocka_unit_test_teardown(test_forget_mark_never_sent, teardown),
        cmocka_unit_test_teardown(test_forget_drops_final_logs_r2, teardown),
        cmocka_unit_test_teardown(test_held_answers_read_the_record_when_they_leave, teardown),
        cmocka_unit_test_teardown(test_primary_death_loses_nothing_r2, teardown),
        cmocka_unit_test_teardown(test_two_deaths_at_once_r3, teardown),
    };
    return cmocka_run_group_tests_name("kvs_replica", tests, NULL, NULL);
}
