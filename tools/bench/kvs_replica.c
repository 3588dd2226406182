/*
 * kvs_replica — what replicating the metadata store costs the store itself: memory per
 * record, and CPU per task at R = 1, 2, 3 with the stores of a cluster in one process,
 * talking through an in-memory network (no sockets, no frames: the store's own work and
 * its messages' bytes).  The whole system's figures are noop.sh's and memory.sh's.  Run
 * by hand; it prints figures and judges nothing.
 *
 *   kvs_replica [--records N] [--tasks N] [--nodes N] [--rounds N] [--replicas R]
 *
 * Memory: N records (default 1,000,000) in one shard, as a waiting task's record is
 * (one parent to wait for, one child), without and with a noop task's encoding as its
 * spec; heap bytes in use (mallinfo2) before and after, divided by N.
 *
 * CPU: a client inserts N tasks (default 200,000) into `nodes` stores (default 8); each
 * task's holder is its metadata owner (hashed submission); holders complete them with a
 * CAS, and a completion appends to the task's child, whose holder hears it is ready and
 * completes it in turn (chains of 4: BOT-like leaves and short pipelines).  Messages are
 * delivered in passes, each followed by kvs_flush on every store, as loop passes would.
 * The figure is tasks per second of CPU for the whole simulated run, best of `rounds`,
 * for R = 1, 2 and 3, or only R with --replicas.  On a loaded machine, compare
 * instruction counts instead (valgrind --tool=callgrind ... --rounds 1 --replicas R).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/wbuf.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs.h"
#include "core/model/task.h"
#include "core/net/proto.h"

#define MAX_NODES 64
#define CLIENT MAX_NODES
#define CHAIN 4

struct msg {
    uint32_t from, to;
    uint16_t type;
    size_t at, len;
};

static struct bench {
    uint32_t nodes;
    struct kvs *kvs[MAX_NODES + 1];
    uint32_t self[MAX_NODES + 1];
    struct wbuf arena;      /* the bodies of the queued messages */
    struct msg *q;
    size_t qlen, qcap;
    size_t open_at;
    uint16_t open_type;
    uint64_t msgs, bytes, replicate_msgs;
    uint32_t tasks;
    uint64_t completed;
} b;

static struct wbuf *t_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    (void)ctx;
    (void)node;
    b.open_type = type;
    b.open_at = b.arena.len;
    *at = b.open_at;
    return &b.arena;
}

static void t_end(void *ctx, uint32_t node, size_t at)
{
    b.q = xgrow(b.q, &b.qcap, b.qlen + 1, sizeof *b.q);
    b.q[b.qlen++] = (struct msg){.from = *(uint32_t *)ctx, .to = node, .type = b.open_type,
                                 .at = at, .len = b.arena.len - at};
    b.msgs++;
    b.bytes += b.arena.len - at + 6; /* with the frame's message header */
    if (b.open_type == MSG_KVS_REPLICATE)
        b.replicate_msgs++;
}

static void on_done(void *arg, int status, const struct tmd *rec);

static void complete(uint32_t node, uint64_t key)
{
    struct tmd_run run = {.node = node, .t_start = 1, .t_end = 2, .data_size = 0};
    kvs_cas(b.kvs[node], key, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_done,
            &b.self[node]);
}

static void on_done(void *arg, int status, const struct tmd *rec)
{
    uint32_t node = *(uint32_t *)arg;
    if (status != 1) {
        fprintf(stderr, "kvs_replica: completion refused (%d)\n", status);
        exit(1);
    }
    b.completed++;
    for (uint32_t i = 0; i < rec->num_children; i++)
        kvs_append(b.kvs[node], tmd_child(rec, i), KVS_FIELD_PARENT, node, 0, rec->key);
}

static void t_notify(void *ctx, const struct kvs_notice *n)
{
    if (n->event == KVS_EVENT_READY)
        complete(*(uint32_t *)ctx, n->key);
}

/* Delivers passes until quiet; the queue of a pass is swapped out first, since handlers
 * queue more. */
static void run_network(void)
{
    struct wbuf arena;
    struct msg *q = NULL;
    size_t qcap = 0;
    wbuf_init(&arena);
    for (;;) {
        if (!b.qlen) {
            for (uint32_t i = 0; i < b.nodes; i++)
                kvs_flush(b.kvs[i]);
            if (!b.qlen)
                break;
        }
        struct wbuf pass_arena = b.arena;
        struct msg *pass = b.q;
        size_t n = b.qlen, cap = b.qcap;
        b.arena = arena;
        wbuf_reset(&b.arena);
        b.q = q;
        b.qcap = qcap;
        b.qlen = 0;
        for (size_t i = 0; i < n; i++) {
            struct rbuf r;
            rbuf_init(&r, pass_arena.data + pass[i].at, pass[i].len);
            const char *reason = NULL;
            uint32_t from = pass[i].from == CLIENT ? KVS_NO_SHARD : pass[i].from;
            if (kvs_handle(b.kvs[pass[i].to], from, pass[i].type, &r, &reason) < 0) {
                fprintf(stderr, "kvs_replica: %s refused: %s\n", proto_type_name(pass[i].type),
                        reason);
                exit(1);
            }
        }
        for (uint32_t i = 0; i < b.nodes; i++)
            kvs_flush(b.kvs[i]);
        arena = pass_arena;
        q = pass;
        qcap = cap;
    }
    wbuf_fini(&arena);
    free(q);
}

static void start(uint32_t nodes, uint32_t replicas)
{
    wbuf_fini(&b.arena);
    free(b.q);
    memset(&b, 0, sizeof b);
    b.nodes = nodes;
    for (uint32_t i = 0; i <= nodes; i++) {
        uint32_t e = i == nodes ? CLIENT : i;
        b.self[e] = e;
        struct kvs_transport t = {.ctx = &b.self[e], .msg_begin = t_begin, .msg_end = t_end,
                                  .notify = t_notify};
        b.kvs[e] = kvs_create(i == nodes ? KVS_NO_SHARD : i, nodes, &t);
        if (i < nodes && kvs_set_replicas(b.kvs[e], replicas) < 0) {
            fprintf(stderr, "kvs_replica: cannot set R = %u\n", replicas);
            exit(1);
        }
    }
}

static void stop(void)
{
    for (uint32_t i = 0; i < b.nodes; i++)
        kvs_destroy(b.kvs[i]);
    kvs_destroy(b.kvs[CLIENT]);
}

/* The encoding of a noop task, as submit.c stores it in the record. */
static void noop_spec(uint64_t key, struct wbuf *out)
{
    struct task_spec spec = {.key = key, .kind = TASK_NOOP, .flags = TASK_FLAG_STEALABLE};
    wbuf_reset(out);
    proto_put_task(out, &spec);
}

static double cpu_run(uint32_t nodes, uint32_t replicas, uint32_t tasks)
{
    start(nodes, replicas);
    struct wbuf spec;
    wbuf_init(&spec);
    int64_t t0 = clock_mono_ns();
    for (uint32_t i = 0; i < tasks; i++) {
        uint64_t key = task_key(1, i), child = task_key(1, i + 1);
        bool has_child = i % CHAIN != CHAIN - 1 && i + 1 < tasks;
        struct tmd t = {.key = key, .num_parents = i % CHAIN != 0,
                        .num_wait_parent = i % CHAIN != 0,
                        .holder = task_key_owner(key, nodes), .t_submit = 1};
        tmd_set_children(&t, &child, has_child);
        noop_spec(key, &spec);
        tmd_set_spec(&t, spec.data, (uint32_t)spec.len);
        kvs_insert(b.kvs[CLIENT], &t);
        tmd_fini(&t);
    }
    run_network();
    for (uint32_t i = 0; i < tasks; i += CHAIN)
        complete(task_key_owner(task_key(1, i), nodes), task_key(1, i));
    run_network();
    double s = (double)(clock_mono_ns() - t0) / 1e9;
    if (b.completed != tasks) {
        fprintf(stderr, "kvs_replica: %llu of %u tasks completed\n",
                (unsigned long long)b.completed, tasks);
        exit(1);
    }
    wbuf_fini(&spec);
    stop();
    return s;
}

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void memory(uint32_t records, bool with_spec)
{
    struct kvs_transport t = {.ctx = &b.self[0], .msg_begin = t_begin, .msg_end = t_end,
                              .notify = t_notify};
    struct wbuf spec;
    wbuf_init(&spec);
    size_t before = heap_in_use();
    struct kvs *kvs = kvs_create(0, 1, &t);
    for (uint32_t i = 0; i < records; i++) {
        uint64_t key = task_key(1, i), child = task_key(1, i + 1);
        struct tmd t_ = {.key = key, .num_parents = 1, .num_wait_parent = 1, .t_submit = 1};
        tmd_set_children(&t_, &child, 1);
        if (with_spec) {
            noop_spec(key, &spec);
            tmd_set_spec(&t_, spec.data, (uint32_t)spec.len);
        }
        kvs_insert(kvs, &t_);
        tmd_fini(&t_);
    }
    size_t after = heap_in_use();
    printf("  %u records, %s: %.1f heap bytes per record (sizeof struct tmd %zu, spec %zu B)\n",
           records, with_spec ? "noop spec" : "no spec",
           (double)(after - before) / records, sizeof(struct tmd),
           with_spec ? spec.len : (size_t)0);
    kvs_destroy(kvs);
    wbuf_fini(&spec);
}

int main(int argc, char **argv)
{
    uint32_t records = 1000000, tasks = 200000, nodes = 8, rounds = 3, only = 0;
    for (int i = 1; i < argc; i++) {
        uint32_t *dst = !strcmp(argv[i], "--records") ? &records
                        : !strcmp(argv[i], "--tasks") ? &tasks
                        : !strcmp(argv[i], "--nodes") ? &nodes
                        : !strcmp(argv[i], "--rounds") ? &rounds
                        : !strcmp(argv[i], "--replicas") ? &only : NULL;
        if (!dst || i + 1 == argc || atol(argv[i + 1]) <= 0) {
            fprintf(stderr, "usage: kvs_replica [--records N] [--tasks N] [--nodes N] "
                            "[--rounds N] [--replicas R]\n");
            return 2;
        }
        *dst = (uint32_t)atol(argv[++i]);
    }
    if (nodes > MAX_NODES) {
        fprintf(stderr, "kvs_replica: at most %d nodes\n", MAX_NODES);
        return 2;
    }
    printf("kvs_replica: memory of one shard\n");
    memory(records, false);
    memory(records, true);
    printf("kvs_replica: %u tasks (chains of %d) on %u stores, best of %u\n", tasks, CHAIN, nodes,
           rounds);
    double base = 0;
    for (uint32_t r = 1; r <= 3 && r <= nodes; r++) {
        if (only && r != only)
            continue;
        double best = 1e30;
        uint64_t msgs = 0, bytes = 0, repl = 0;
        for (uint32_t k = 0; k < rounds; k++) {
            double s = cpu_run(nodes, r, tasks);
            if (s < best)
                best = s;
            msgs = b.msgs, bytes = b.bytes, repl = b.replicate_msgs;
        }
        if (r == 1)
            base = best;
        printf("  R = %u: %.0f tasks/s of CPU", r, tasks / best);
        if (base > 0)
            printf(" (%.1f %% of R = 1)", 100.0 * base / best);
        printf(", %.2f messages and %.0f bytes a task, %.2f of them replication\n",
               (double)msgs / tasks, (double)bytes / tasks, (double)repl / tasks);
    }
    wbuf_fini(&b.arena);
    free(b.q);
    return 0;
}
