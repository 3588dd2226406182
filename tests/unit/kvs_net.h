/*
 * kvs_net — the fake network the replicated store's tests run on (test_kvs_replica,
 * test_kvs_takeover): up to eight stores and a client on links that deliver each link's
 * messages in order and interleave the links from a seeded generator, so every run is
 * the same run.  A node is killed by dropping everything it sends or would receive from
 * some delivery on; the others then learn of it (kvs_set_down) one by one, with
 * deliveries in between, as a membership protocol would tell them.  Wall time can be
 * frozen (frozen_clock) by the clock_gettime below, so that stamped times are the same on
 * every run.  Header-only; include after cmocka.h.
 */
#ifndef JACKDAW_TEST_KVS_NET_H
#define JACKDAW_TEST_KVS_NET_H

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

static inline uint64_t rnd(void)
{
    net.rng ^= net.rng << 13;
    net.rng ^= net.rng >> 7;
    net.rng ^= net.rng << 17;
    return net.rng;
}

static inline struct wbuf *t_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
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
static inline struct wbuf *t_join(void *ctx, uint32_t node, uint16_t type, size_t most, size_t *at)
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

static inline void t_end(void *ctx, uint32_t node, size_t at)
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

static inline void t_notify(void *ctx, const struct kvs_notice *n)
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

static inline void net_start(uint32_t nodes, uint64_t seed)
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

static inline int teardown(void **state)
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

static inline int live(uint32_t e)
{
    return e == CLIENT || !net.dead[e];
}

/* Delivers the head of link (from, to), or drops it when either end is dead. */
static inline void deliver_link(uint32_t from, uint32_t to)
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
static inline int deliver_one(void)
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
static inline void run_network(void)
{
    while (deliver_one())
        ;
}

static inline void ignore_reply(void *arg, int status, const struct tmd *t)
{
    (void)arg, (void)status, (void)t;
}

/* Finds a key of job `job` whose owner is `owner` among `nodes`. */
static inline uint64_t key_on(uint32_t job, uint32_t owner, uint32_t from)
{
    for (uint32_t i = from;; i++)
        if (task_key_owner(task_key(job, i), net.nodes) == owner)
            return task_key(job, i);
}

static inline void put_record(uint32_t via, uint64_t key, uint32_t parents, const uint64_t *children,
                       uint32_t nchildren, uint32_t holder, uint64_t size)
{
    struct tmd t = {.key = key, .num_parents = parents, .num_wait_parent = parents,
                    .holder = holder, .t_submit = 5};
    if (size)
        tmd_late_mut(&t)->data_size = size;
    tmd_set_children(&t, children, nchildren);
    assert_int_equal(kvs_insert(net.kvs[via], &t), 0);
    tmd_fini(&t);
}

static inline void use_replicas(uint32_t r)
{
    for (uint32_t i = 0; i < net.nodes; i++)
        assert_int_equal(kvs_set_replicas(net.kvs[i], r), 0);
}

/* Delivers everything and lets the stores acknowledge, until nothing moves. */
static inline void settle(void)
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
static inline void deliver_some(size_t n)
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

static inline uint32_t replicas_of(uint64_t key, uint32_t r, uint32_t *out)
{
    uint32_t owner = task_key_owner(key, net.nodes), n = 0;
    for (uint32_t i = 0; i < net.nodes && n < r; i++)
        if (!net.dead[(owner + i) % net.nodes])
            out[n++] = (owner + i) % net.nodes;
    return n;
}

static inline void encode(const struct tmd *t, struct wbuf *b)
{
    wbuf_reset(b);
    tmd_put(b, t);
}

/* Every live replica of `key` holds the primary's record byte for byte, and no other
 * live node holds any; or nobody holds it (`gone`). */
static inline void check_copies(uint64_t key, uint32_t r, int gone)
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

static inline void on_barrier(void *arg)
{
    (*(int *)arg)++;
}

static inline void count_reply(void *arg, int status, const struct tmd *t)
{
    (void)t;
    replies++;
    last_status = status;
    if (arg)
        *(int *)arg = status;
}

/* Everyone alive learns that `dead` died (its messages in flight are lost). */
static inline void down_everywhere(uint32_t dead)
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

static inline void on_answer(void *arg, int status, const struct tmd *t)
{
    struct answer *a = arg;
    a->calls++;
    a->status = status;
    a->rec_status = t ? t->status : 0xff;
}

#endif
