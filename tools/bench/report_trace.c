/*
 * report_trace — writes a synthetic, complete trace of a large run for the `jackdaw
 * report` benchmark (tools/bench/report.sh), with the block encoder the nodes use.
 *
 *   report_trace OUT [--tasks N] [--nodes N] [--slots S] [--seed S]
 *
 * The run: N tasks (default 1,000,000) submitted at 1 µs intervals, task i to node
 * i mod nodes (default 8 x 8 slots), each queued shared and run for 0.5-1.5 ms on the
 * first free slot of its node; every 40th task is stolen by the next node 50 µs after
 * its submission (STEAL_REQUEST, STOLEN_OUT, STOLEN_IN, STEAL_GRANT); every node samples
 * every 100 ms; the collector's JOB_SUBMIT and TASK_NAMES (1,000 names a record) come
 * first.  About 5.2 events per task, each node's in time order, written as the collector
 * writes them: blocks of 4,096 events of one node, the nodes taking turns.  A real
 * `jackdaw run` of 10^6 noop tasks overflows the nodes' trace rings (DROPPED), so a
 * complete trace of that size is made here instead.
 *
 * Not part of the product: built by `make` into BUILD/bench/report_trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "trace/format/block.h"
#include "trace/format/event.h"

#define JOB 7u
#define NAMES_PER_RECORD 1000
#define CHUNK 4096
#define SAMPLE_NS 100000000LL
#define STEAL_EVERY 40

/* One event, small enough that 5 million fit in memory. */
struct rec {
    int64_t t;
    uint32_t task;
    int32_t peer;
    uint32_t order;
    uint8_t kind;
    int32_t a, b; /* sample: busy, sreadyq */
};

struct node {
    struct rec *r;
    size_t n, cap;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void put(struct node *n, int64_t t, enum trace_kind kind, uint32_t task, int32_t peer)
{
    n->r = xgrow(n->r, &n->cap, n->n + 1, sizeof *n->r);
    n->r[n->n] = (struct rec){.t = t, .task = task, .peer = peer, .order = (uint32_t)n->n,
                              .kind = (uint8_t)kind};
    n->n++;
}

static int cmp_rec(const void *x, const void *y)
{
    const struct rec *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

struct out {
    FILE *f;
    uint8_t sync[TRACE_SYNC_SIZE];
    struct trace_block *blk;
    uint64_t events;
};

static void flush(struct out *o)
{
    const uint8_t *data;
    size_t len;
    if (trace_block_finish(o->blk, o->sync, &data, &len) != 0) {
        fprintf(stderr, "report_trace: cannot finish a block\n");
        exit(1);
    }
    if (len && fwrite(data, 1, len, o->f) != len) {
        fprintf(stderr, "report_trace: write failed: %s\n", strerror(errno));
        exit(1);
    }
}

static void append(struct out *o, const struct trace_event *ev)
{
    int rc = trace_block_append(o->blk, ev);
    if (rc == -ENOSPC) {
        flush(o);
        rc = trace_block_append(o->blk, ev);
    }
    if (rc != 0) {
        fprintf(stderr, "report_trace: cannot encode an event (%d)\n", rc);
        exit(1);
    }
    o->events++;
}

static void usage(void)
{
    fprintf(stderr, "usage: report_trace OUT [--tasks N] [--nodes N] [--slots S] [--seed S]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *path = argv[1];
    unsigned long tasks = 1000000, nodes = 8, slots = 8;
    for (int i = 2; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        unsigned long v = strtoul(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--tasks") == 0 && v > 0 && v < UINT32_MAX)
            tasks = v;
        else if (strcmp(argv[i], "--nodes") == 0 && v > 0 && v <= 64)
            nodes = v;
        else if (strcmp(argv[i], "--slots") == 0 && v > 0 && v <= 1024)
            slots = v;
        else if (strcmp(argv[i], "--seed") == 0)
            rng_state = v;
        else
            usage();
        i++;
    }

    /* Each node's run list: its own tasks and those stolen from the node before it,
     * both in submission order, merged by when they became available. */
    struct node *nd = xcalloc(nodes, sizeof *nd);
    uint32_t **list = xcalloc(nodes, sizeof *list);
    int64_t **avail = xcalloc(nodes, sizeof *avail);
    size_t *nlist = xcalloc(nodes, sizeof *nlist);
    for (unsigned long k = 0; k < nodes; k++) {
        list[k] = xmalloc((tasks / nodes + tasks / nodes / STEAL_EVERY + 16) * 2 * sizeof **list);
        avail[k] = xmalloc((tasks / nodes + tasks / nodes / STEAL_EVERY + 16) * 2 * sizeof **avail);
    }
    for (uint32_t i = 0; i < tasks; i++) {
        uint32_t home = i % (uint32_t)nodes;
        int64_t sub = (int64_t)i * 1000;
        put(&nd[home], sub, TRACE_TASK_SUBMIT, i, -1);
        put(&nd[home], sub, TRACE_TASK_READY, i, -1);
        put(&nd[home], sub, TRACE_TASK_QUEUED_SHARED, i, -1);
        uint32_t runs = home;
        int64_t at = sub + 10000;
        if (nodes > 1 && i / nodes % STEAL_EVERY == STEAL_EVERY - 1) {
            uint32_t thief = (home + 1) % (uint32_t)nodes;
            int64_t ts = sub + 50000;
            put(&nd[thief], ts - 20000, TRACE_STEAL_REQUEST, UINT32_MAX, (int32_t)home);
            put(&nd[home], ts, TRACE_TASK_STOLEN_OUT, i, (int32_t)thief);
            put(&nd[thief], ts + 10000, TRACE_TASK_STOLEN_IN, i, (int32_t)home);
            put(&nd[thief], ts + 10000, TRACE_STEAL_GRANT, UINT32_MAX, (int32_t)home);
            runs = thief;
            at = ts + 20000;
        }
        list[runs][nlist[runs]] = i;
        avail[runs][nlist[runs]++] = at;
    }
    int64_t *free_at = xcalloc(slots, sizeof *free_at);
    int64_t *starts = NULL;
    size_t cap_starts = 0;
    for (unsigned long k = 0; k < nodes; k++) {
        /* the stolen tasks arrive out of submission order: sort the list by availability */
        for (size_t a = 1; a < nlist[k]; a++) {
            uint32_t id = list[k][a];
            int64_t av = avail[k][a];
            size_t b = a;
            while (b > 0 && avail[k][b - 1] > av) {
                list[k][b] = list[k][b - 1];
                avail[k][b] = avail[k][b - 1];
                b--;
            }
            list[k][b] = id;
            avail[k][b] = av;
        }
        memset(free_at, 0, slots * sizeof *free_at);
        starts = xgrow(starts, &cap_starts, nlist[k] + 1, sizeof *starts);
        int64_t last = 0;
        for (size_t j = 0; j < nlist[k]; j++) {
            size_t s = 0;
            for (size_t q = 1; q < slots; q++)
                if (free_at[q] < free_at[s])
                    s = q;
            int64_t start = free_at[s] > avail[k][j] ? free_at[s] : avail[k][j];
            int64_t end = start + 500000 + (int64_t)(rng() % 1000000);
            free_at[s] = end;
            starts[j] = start;
            put(&nd[k], start, TRACE_TASK_START, list[k][j], -1);
            put(&nd[k], end, TRACE_TASK_END, list[k][j], -1);
            if (end > last)
                last = end;
        }
        /* samples: ready = available and not started */
        size_t av = 0, st = 0;
        for (int64_t t = SAMPLE_NS; t <= last; t += SAMPLE_NS) {
            while (av < nlist[k] && avail[k][av] <= t)
                av++;
            while (st < nlist[k] && starts[st] <= t)
                st++;
            put(&nd[k], t, TRACE_NODE_SAMPLE, UINT32_MAX, -1);
            nd[k].r[nd[k].n - 1].a = (int32_t)slots;
            nd[k].r[nd[k].n - 1].b = (int32_t)(av - st);
        }
        qsort(nd[k].r, nd[k].n, sizeof *nd[k].r, cmp_rec);
    }

    struct out o = {0};
    o.f = fopen(path, "wb");
    if (!o.f) {
        fprintf(stderr, "report_trace: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    char header[1024];
    int hl = snprintf(header, sizeof header,
                      "{\"format\":1,\"run_id\":\"bench-report\",\"start_ns\":1700000000000000000,"
                      "\"nodes\":[");
    for (unsigned long k = 0; k < nodes; k++)
        hl += snprintf(header + hl, sizeof header - (size_t)hl,
                       "%s{\"id\":%lu,\"host\":\"127.0.0.1\",\"port\":0,\"slots\":%lu,\"speed\":1.0}",
                       k ? "," : "", k, slots);
    snprintf(header + hl, sizeof header - (size_t)hl,
             "],\"config\":{\"node_args\":[]},\"workload\":{\"name\":\"synthetic\",\"digest\":\"0\"}}");
    uint8_t *h;
    size_t hlen;
    if (trace_sync_new(o.sync) != 0 || trace_file_header(header, o.sync, &h, &hlen) != 0 ||
        fwrite(h, 1, hlen, o.f) != hlen || trace_block_create(&o.blk, 0) != 0) {
        fprintf(stderr, "report_trace: cannot write the header\n");
        return 1;
    }
    free(h);

    /* the collector's records, node -1 */
    struct trace_event ev;
    trace_event_init(&ev, TRACE_JOB_SUBMIT, -1);
    ev.task = (uint64_t)JOB << 32 | UINT32_MAX;
    ev.count = (int64_t)tasks;
    const char *wl[] = {"synthetic.jsonl", "0"};
    ev.names = wl;
    ev.nnames = 2;
    int64_t seq = 0;
    ev.seq = seq++;
    append(&o, &ev);
    char **ids = xcalloc(NAMES_PER_RECORD, sizeof *ids);
    for (size_t k = 0; k < NAMES_PER_RECORD; k++)
        ids[k] = xmalloc(24);
    for (uint32_t first = 0; first < tasks; first += NAMES_PER_RECORD) {
        uint32_t m = tasks - first < NAMES_PER_RECORD ? (uint32_t)(tasks - first) : NAMES_PER_RECORD;
        for (uint32_t k = 0; k < m; k++)
            snprintf(ids[k], 24, "t%" PRIu32, first + k);
        trace_event_init(&ev, TRACE_TASK_NAMES, -1);
        ev.task = (uint64_t)JOB << 32 | first;
        ev.count = m;
        ev.names = (const char *const *)ids;
        ev.nnames = m;
        ev.seq = seq++;
        append(&o, &ev);
        flush(&o); /* names records are big: one block each, as the collector does */
    }
    for (size_t k = 0; k < NAMES_PER_RECORD; k++)
        free(ids[k]);
    free(ids);

    size_t *at = xcalloc(nodes, sizeof *at);
    for (bool more = true; more;) {
        more = false;
        for (unsigned long k = 0; k < nodes; k++) {
            size_t end = at[k] + CHUNK < nd[k].n ? at[k] + CHUNK : nd[k].n;
            for (; at[k] < end; at[k]++) {
                const struct rec *r = &nd[k].r[at[k]];
                trace_event_init(&ev, (enum trace_kind)r->kind, (int32_t)k);
                ev.seq = (int64_t)at[k];
                ev.time_ns = r->t;
                ev.peer = r->peer;
                if (r->task != UINT32_MAX)
                    ev.task = (uint64_t)JOB << 32 | r->task;
                if (r->kind == TRACE_TASK_END)
                    ev.status = TASK_DONE;
                if (r->kind == TRACE_STEAL_GRANT)
                    ev.count = 1;
                if (r->kind == TRACE_NODE_SAMPLE) {
                    ev.sample.slots = (int32_t)slots;
                    ev.sample.busy = r->a;
                    ev.sample.sreadyq = r->b;
                }
                append(&o, &ev);
            }
            flush(&o);
            more |= at[k] < nd[k].n;
        }
    }
    trace_block_destroy(o.blk);
    if (fclose(o.f) != 0) {
        fprintf(stderr, "report_trace: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    printf("%s: %lu tasks, %lu nodes x %lu slots, %" PRIu64 " events\n", path, tasks, nodes,
           slots, o.events);
    for (unsigned long k = 0; k < nodes; k++) {
        free(nd[k].r);
        free(list[k]);
        free(avail[k]);
    }
    free(nd);
    free(list);
    free(avail);
    free(nlist);
    free(free_at);
    free(starts);
    free(at);
    return 0;
}
