/*
 * trace_fixture — synthetic runs for the trace-tool tests (test_trace_verify,
 * test_trace_merge, test_trace_chrome), written as real trace files with the block
 * encoder.
 *
 * A run is generated as a list of events the way the node daemons record them
 * (share/doc/trace-schema.md): the collector's JOB_SUBMIT and TASK_NAMES on node -1,
 * then per task SUBMIT, READY, QUEUED_*, for every fifth task a steal (the thief's
 * STEAL_REQUEST and STEAL_GRANT, the victim's STOLEN_OUT, the thief's STOLEN_IN), for
 * every third a DATA_FETCH before it starts, START and END; node samples, NODE_UP and a
 * POLICY_CHANGE.  Sequence numbers are given afterwards (fixture_number), per node in time
 * order, so a test can remove or change an event first and leave the numbering whole, or
 * change it after to make a gap or a duplicate.  Files are written as the collector
 * writes them: blocks of one node, interleaved.
 *
 * Helpers are static inline so that each test binary uses what it needs without
 * unused-function warnings.  Include after cmocka.h.
 */
#ifndef JACKDAW_TEST_TRACE_FIXTURE_H
#define JACKDAW_TEST_TRACE_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/model/task.h"
#include "tools/cmd/cmd.h"
#include "trace/format/block.h"
#include "trace/format/event.h"
#include "trace/format/reader.h"

#define FIXTURE_HEADER "{\"run\":\"fixture\",\"start_ns\":1700000000000000000,\"nodes\":4}"
#define FIXTURE_JOB 1u
#define FIXTURE_NAMES_PER_EVENT 100

struct fixture_event {
    struct trace_event ev;
    size_t order; /* generation order: the tie-break among equal times of one node */
};

struct fixture {
    struct fixture_event *e; /* owned */
    size_t n, cap;
    char **ids;              /* owned workload ids, "w-<index>"; ev.names borrow them */
    const char *workload[1]; /* JOB_SUBMIT's names */
    size_t ntasks;
    int nodes;
    /* What was generated, for the tests to compare with. */
    size_t steals, fetches, samples;
};

static inline uint64_t fixture_key(uint32_t index)
{
    return (uint64_t)FIXTURE_JOB << 32 | index;
}

static inline struct trace_event *fixture_push(struct fixture *f, enum trace_kind kind,
                                               int32_t node, int64_t t, uint64_t task)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 1024;
        f->e = realloc(f->e, f->cap * sizeof *f->e);
        assert_non_null(f->e);
    }
    struct fixture_event *fe = &f->e[f->n];
    fe->order = f->n++;
    trace_event_init(&fe->ev, kind, node);
    fe->ev.time_ns = t;
    fe->ev.task = task;
    return &fe->ev;
}

/* A run of ntasks tasks on `nodes` nodes (>= 2); events without seq numbers yet. */
static inline void fixture_run(struct fixture *f, int nodes, size_t ntasks)
{
    memset(f, 0, sizeof *f);
    f->nodes = nodes;
    f->ntasks = ntasks;
    f->workload[0] = "fixture-workload";
    f->ids = calloc(ntasks ? ntasks : 1, sizeof *f->ids);
    assert_non_null(f->ids);
    for (size_t i = 0; i < ntasks; i++) {
        f->ids[i] = malloc(32);
        assert_non_null(f->ids[i]);
        snprintf(f->ids[i], 32, "w-%zu", i);
    }
    struct trace_event *ev = fixture_push(f, TRACE_JOB_SUBMIT, -1, 1000,
                                          (uint64_t)FIXTURE_JOB << 32 | UINT32_MAX);
    ev->count = (int64_t)ntasks;
    strcpy(ev->text, "0123456789abcdef");
    ev->names = f->workload;
    ev->nnames = 1;
    for (size_t first = 0; first < ntasks; first += FIXTURE_NAMES_PER_EVENT) {
        size_t m = ntasks - first < FIXTURE_NAMES_PER_EVENT ? ntasks - first
                                                            : FIXTURE_NAMES_PER_EVENT;
        ev = fixture_push(f, TRACE_TASK_NAMES, -1, 1001 + (int64_t)first,
                          fixture_key((uint32_t)first));
        ev->count = (int64_t)m;
        ev->names = (const char *const *)&f->ids[first];
        ev->nnames = (uint32_t)m;
    }
    for (int n = 0; n < nodes; n++) {
        ev = fixture_push(f, TRACE_NODE_UP, n, 100, TRACE_NO_TASK);
        ev->peer = n;
        ev->count = 4;
    }
    ev = fixture_push(f, TRACE_POLICY_CHANGE, 0, 500, TRACE_NO_TASK);
    strcpy(ev->text, "adaptive");
    int64_t last = 0;
    for (size_t i = 0; i < ntasks; i++) {
        uint64_t key = fixture_key((uint32_t)i);
        int32_t sub = (int32_t)(i % (size_t)nodes);
        bool stolen = i % 5 == 0;
        int32_t run = stolen ? (sub + 1) % nodes : sub;
        int64_t t0 = 10000 + (int64_t)i * 100;
        fixture_push(f, TRACE_TASK_SUBMIT, sub, t0, key);
        fixture_push(f, TRACE_TASK_READY, sub, t0 + 10, key);
        if (stolen) {
            fixture_push(f, TRACE_TASK_QUEUED_SHARED, sub, t0 + 20, key);
            fixture_push(f, TRACE_STEAL_REQUEST, run, t0 + 25, TRACE_NO_TASK)->peer = sub;
            fixture_push(f, TRACE_TASK_STOLEN_OUT, sub, t0 + 30, key)->peer = run;
            fixture_push(f, TRACE_TASK_STOLEN_IN, run, t0 + 35, key)->peer = sub;
            ev = fixture_push(f, TRACE_STEAL_GRANT, run, t0 + 36, TRACE_NO_TASK);
            ev->peer = sub;
            ev->count = 1;
            f->steals++;
        } else {
            fixture_push(f, TRACE_TASK_QUEUED_LOCAL, sub, t0 + 20, key);
        }
        if (i % 3 == 0) {
            ev = fixture_push(f, TRACE_DATA_FETCH, run, t0 + 45, fixture_key((uint32_t)(i / 2)));
            ev->peer = (run + 1) % nodes;
            ev->bytes = 4096;
            ev->duration_ns = 20;
            f->fetches++;
        }
        fixture_push(f, TRACE_TASK_START, run, t0 + 50, key);
        int64_t end = t0 + 450 + (int64_t)(i % 7) * 10;
        ev = fixture_push(f, TRACE_TASK_END, run, end, key);
        ev->status = TASK_DONE;
        last = end > last ? end : last;
    }
    for (int64_t t = 10000; t <= last; t += 2000) {
        for (int n = 0; n < nodes; n++) {
            ev = fixture_push(f, TRACE_NODE_SAMPLE, n, t + 1, TRACE_NO_TASK);
            ev->sample.slots = 4;
            ev->sample.busy = (int32_t)((t / 2000 + n) % 5);
            ev->sample.waitq = n;
            ev->sample.lreadyq = 1;
            ev->sample.sreadyq = 2;
            f->samples++;
        }
    }
}

static inline int fixture_cmp_node_time(const void *a, const void *b)
{
    const struct fixture_event *x = a, *y = b;
    if (x->ev.node != y->ev.node)
        return x->ev.node < y->ev.node ? -1 : 1;
    if (x->ev.time_ns != y->ev.time_ns)
        return x->ev.time_ns < y->ev.time_ns ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* Sorts by node then time and numbers each node's events 0, 1, 2, … */
static inline void fixture_number(struct fixture *f)
{
    qsort(f->e, f->n, sizeof *f->e, fixture_cmp_node_time);
    int64_t seq = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (i && f->e[i].ev.node != f->e[i - 1].ev.node)
            seq = 0;
        f->e[i].ev.seq = seq++;
    }
}

/* Index of the first event of `kind` for `task` (TRACE_NO_TASK: any), or fails. */
static inline size_t fixture_find(const struct fixture *f, enum trace_kind kind, uint64_t task)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->e[i].ev.kind == kind && (task == TRACE_NO_TASK || f->e[i].ev.task == task))
            return i;
    fail_msg("no %s for the task", trace_kind_name((int)kind));
    return 0;
}

static inline void fixture_remove(struct fixture *f, size_t i)
{
    memmove(&f->e[i], &f->e[i + 1], (f->n - i - 1) * sizeof *f->e);
    f->n--;
}

static inline void fixture_free(struct fixture *f)
{
    for (size_t i = 0; i < f->ntasks; i++)
        free(f->ids[i]);
    free(f->ids);
    free(f->e);
    memset(f, 0, sizeof *f);
}

/* The image of a trace file being built: header, then whole blocks. */
struct fixture_file {
    uint8_t *data;
    size_t len, cap;
    uint8_t sync[TRACE_SYNC_SIZE];
    struct trace_block *block;
    bool has_last; /* last_* describe the last event of the open block */
    int32_t last_node;
    int64_t last_seq;
};

static inline void fixture_put(struct fixture_file *w, const void *p, size_t n)
{
    if (n == 0)
        return; /* an empty block comes back as NULL */
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2;
        w->data = realloc(w->data, w->cap);
        assert_non_null(w->data);
    }
    memcpy(w->data + w->len, p, n);
    w->len += n;
}

/* `sync` NULL draws a fresh marker, as every writer does; the corpus generator
 * (test_trace_corpus) passes a fixed one so that its files come out the same each time. */
static inline void fixture_file_init_sync(struct fixture_file *w, const char *header,
                                          const uint8_t *sync)
{
    memset(w, 0, sizeof *w);
    if (sync)
        memcpy(w->sync, sync, TRACE_SYNC_SIZE);
    else
        assert_int_equal(trace_sync_new(w->sync), 0);
    uint8_t *h;
    size_t hlen;
    assert_int_equal(trace_file_header(header, w->sync, &h, &hlen), 0);
    fixture_put(w, h, hlen);
    free(h);
    assert_int_equal(trace_block_create(&w->block, 1024), 0);
}

static inline void fixture_file_init(struct fixture_file *w, const char *header)
{
    fixture_file_init_sync(w, header, NULL);
}

static inline void fixture_flush(struct fixture_file *w)
{
    const uint8_t *data;
    size_t len;
    assert_int_equal(trace_block_finish(w->block, w->sync, &data, &len), 0);
    fixture_put(w, data, len);
    w->has_last = false;
}

/* Appends ev; a block ends first where the encoder could not delta-code it (the same
 * node with a seq not above the last one's: a duplicate made on purpose). */
static inline void fixture_add(struct fixture_file *w, const struct trace_event *ev)
{
    if (w->has_last && w->last_node == ev->node && ev->seq <= w->last_seq)
        fixture_flush(w);
    int rc = trace_block_append(w->block, ev);
    if (rc == -ENOSPC) {
        fixture_flush(w);
        rc = trace_block_append(w->block, ev);
    }
    assert_int_equal(rc, 0);
    w->has_last = true;
    w->last_node = ev->node;
    w->last_seq = ev->seq;
}

static inline void fixture_file_save(struct fixture_file *w, const char *path, size_t cut)
{
    fixture_flush(w);
    trace_block_destroy(w->block);
    w->block = NULL;
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    size_t n = cut && cut < w->len ? cut : w->len;
    assert_int_equal(fwrite(w->data, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
    free(w->data);
    w->data = NULL;
}

typedef bool (*fixture_filter)(const struct trace_event *ev, void *arg);

/*
 * Writes the events `keep` accepts (all when NULL) as the collector would: each node's
 * events in seq order, in chunks of `chunk` events, one block per chunk, the nodes'
 * chunks interleaved round-robin.  Events must be numbered (fixture_number order).
 * `cut` > 0 truncates the file to that many bytes (a crash).  Returns the events written.
 * fixture_write gives the file the run header FIXTURE_HEADER; fixture_write_sync a fixed
 * sync marker (NULL: a fresh one).
 */
static inline size_t fixture_write_sync(const struct fixture *f, const char *path,
                                        const char *header, const uint8_t *sync, size_t chunk,
                                        fixture_filter keep, void *arg, size_t cut)
{
    /* Start of each node's run of events in f->e (sorted by node). */
    size_t starts[64], ends[64], nn = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (i == 0 || f->e[i].ev.node != f->e[i - 1].ev.node) {
            assert_true(nn < 64);
            starts[nn++] = i;
        }
        ends[nn - 1] = i + 1;
    }
    struct fixture_file w;
    fixture_file_init_sync(&w, header, sync);
    size_t written = 0;
    for (bool more = true; more;) {
        more = false;
        for (size_t k = 0; k < nn; k++) {
            size_t taken = 0;
            while (starts[k] < ends[k] && taken < chunk) {
                const struct trace_event *ev = &f->e[starts[k]++].ev;
                if (keep && !keep(ev, arg))
                    continue;
                fixture_add(&w, ev);
                taken++;
                written++;
            }
            if (taken)
                fixture_flush(&w);
            more |= starts[k] < ends[k];
        }
    }
    fixture_file_save(&w, path, cut);
    return written;
}

static inline size_t fixture_write_with(const struct fixture *f, const char *path,
                                        const char *header, size_t chunk, fixture_filter keep,
                                        void *arg, size_t cut)
{
    return fixture_write_sync(f, path, header, NULL, chunk, keep, arg, cut);
}

static inline size_t fixture_write(const struct fixture *f, const char *path, size_t chunk,
                                   fixture_filter keep, void *arg, size_t cut)
{
    return fixture_write_with(f, path, FIXTURE_HEADER, chunk, keep, arg, cut);
}

/* Runs `jackdaw trace ARGV…` (argv[0] is "trace") in this process with its stdout sent
 * to /dev/null; returns its exit code. */
static inline int fixture_trace_quiet(char **argv, int argc)
{
    fflush(stdout);
    int saved = dup(1);
    int null = open("/dev/null", O_WRONLY);
    assert_true(saved >= 0 && null >= 0);
    dup2(null, 1);
    close(null);
    int rc = cmd_trace.main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return rc;
}

#endif
