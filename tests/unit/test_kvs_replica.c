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
    *at = 0;
    return &net.scratch[self];
}

static void t_end(void *ctx, uint32_t node, size_t at)
{
    uint32_t self = *(uint32_t *)ctx;
    (void)at;
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

static void net_start(uint32_t nodes, uint64_t seed)
{
    memset(&net, 0, sizeof net);
    net.nodes = nodes;
    net.rng = seed ? seed : 1;
    for (uint32_t i = 0; i <= nodes; i++) {
        uint32_t e = i == nodes ? CLIENT : i;
        net.self[e] = e;
        struct kvs_transport t = {.ctx = &net.self[e], .msg_begin = t_begin, .msg_end = t_end,
                                  .notify = t_notify};
        net.kvs[e] = kvs_create(i == nodes ? KVS_NO_SHARD : i, nodes, &t);
    }
}

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_r1_wire_unchanged, teardown),
    };
    return cmocka_run_group_tests_name("kvs_replica", tests, NULL, NULL);
}
