/*
 * Per-job tallies, the collector's side (trace/format/jobtally, trace/format/blockread,
 * the STATE message of trace/format/wire): task events folded into figures worked out by
 * hand; the caps a STATE keeps to; a node's block decoded in memory folds as its events
 * do; and a STATE that carries job tallies round-trips, while malformed ones are refused
 * naming the field at fault.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/wbuf.h"
#include "core/model/task.h"
#include "trace/format/block.h"
#include "trace/format/blockread.h"
#include "trace/format/jobtally.h"
#include "trace/format/wire.h"

#define MS 1000000LL

static struct trace_event task_event(enum trace_kind kind, int32_t node, uint32_t job,
                                     uint32_t index, int64_t t_ms, int32_t status)
{
    struct trace_event ev;
    trace_event_init(&ev, kind, node);
    ev.time_ns = t_ms * MS;
    ev.task = (uint64_t)job << 32 | index;
    ev.status = status;
    return ev;
}

static void fold(struct jobtally *t, enum trace_kind kind, int32_t node, uint32_t job,
                 uint32_t index, int64_t t_ms, int32_t status)
{
    struct trace_event ev = task_event(kind, node, job, index, t_ms, status);
    jobtally_event(t, &ev);
}

static const struct wire_job_tally *find(const struct wire_job_tally *jobs, uint32_t n,
                                         uint32_t job)
{
    for (uint32_t i = 0; i < n; i++)
        if (jobs[i].job == job)
            return &jobs[i];
    fail_msg("job %u is not exported", job);
    return NULL;
}

/* Two jobs on two nodes: every kind of end, a retry, a task moved by a new start. */
static void test_fold(void **state)
{
    (void)state;
    struct jobtally *t = jobtally_create();
    jobtally_submit(t, 7, 4, "/w/a.jsonl", 10 * MS);
    jobtally_submit(t, 9, 2, NULL, 20 * MS);
    fold(t, TRACE_TASK_START, 0, 7, 0, 100, 0);
    fold(t, TRACE_TASK_START, 1, 7, 1, 100, 0);
    fold(t, TRACE_TASK_END, 0, 7, 0, 300, TASK_DONE);      /* 200 ms on node 0 */
    fold(t, TRACE_TASK_RETRY, 1, 7, 1, 150, TASK_FAILED);  /* a run of 50 ms, not an end */
    fold(t, TRACE_TASK_START, 1, 7, 1, 160, 0);
    fold(t, TRACE_TASK_END, 1, 7, 1, 260, TASK_FAILED);    /* 100 ms more */
    fold(t, TRACE_TASK_END, 1, 7, 2, 260, TASK_CANCELLED); /* never started */
    fold(t, TRACE_TASK_START, 0, 7, 3, 400, 0);            /* still running */
    fold(t, TRACE_TASK_START, 0, 9, 0, 500, 0);
    fold(t, TRACE_TASK_START, 1, 9, 0, 550, 0);            /* handed on: node 0's is over */
    fold(t, TRACE_TASK_END, 1, 9, 0, 600, TASK_DONE);
    /* Events of no task, or of another kind, are not a job's. */
    struct trace_event none;
    trace_event_init(&none, TRACE_TASK_START, 0);
    jobtally_event(t, &none);
    fold(t, TRACE_STEAL_GRANT, 0, 7, 0, 700, 0);

    uint32_t n;
    const struct wire_job_tally *jobs = jobtally_export(t, &n);
    assert_int_equal(n, 2);
    assert_int_equal(jobs[0].job, 7); /* submit order */
    const struct wire_job_tally *a = find(jobs, n, 7), *b = find(jobs, n, 9);
    assert_int_equal(a->tasks, 4);
    assert_string_equal(a->name, "/w/a.jsonl");
    assert_int_equal(a->done, 1);
    assert_int_equal(a->failed, 1);
    assert_int_equal(a->cancelled, 1);
    assert_int_equal(a->running, 1);
    assert_int_equal(a->submit_ns, 10 * MS);
    assert_int_equal(a->end_ns, 300 * MS);
    assert_int_equal(a->busy_ns, 350 * MS);
    assert_int_equal(a->nnodes, 2);
    assert_int_equal(a->nodes[0].node, 0);
    assert_int_equal(a->nodes[0].done, 1);
    assert_int_equal(a->nodes[0].running, 1);
    assert_int_equal(a->nodes[0].busy_ns, 200 * MS);
    assert_int_equal(a->nodes[1].node, 1);
    assert_int_equal(a->nodes[1].done, 0);
    assert_int_equal(a->nodes[1].running, 0);
    assert_int_equal(a->nodes[1].busy_ns, 150 * MS);
    assert_string_equal(b->name, "");
    assert_int_equal(b->tasks, 2);
    assert_int_equal(b->done, 1);
    assert_int_equal(b->running, 0);
    assert_int_equal(b->busy_ns, 100 * MS);
    assert_int_equal(b->nodes[0].running + b->nodes[1].running, 0);
    assert_int_equal(b->nodes[1].done, 1);

    /* A second submit keeps the earliest time; JOB_SUBMIT events carry the count. */
    jobtally_submit(t, 7, 4, "", 5 * MS);
    struct trace_event sub = task_event(TRACE_JOB_SUBMIT, -1, 11, UINT32_MAX, 800, 0);
    sub.count = 12;
    jobtally_event(t, &sub);
    jobs = jobtally_export(t, &n);
    assert_int_equal(n, 3);
    assert_int_equal(find(jobs, n, 7)->submit_ns, 5 * MS);
    assert_string_equal(find(jobs, n, 7)->name, "/w/a.jsonl");
    assert_int_equal(find(jobs, n, 11)->tasks, 12);
    assert_int_equal(find(jobs, n, 11)->submit_ns, 800 * MS);

    jobtally_reset(t);
    jobs = jobtally_export(t, &n);
    assert_int_equal(n, 0);
    jobtally_destroy(t);
    jobtally_destroy(NULL);
}

/* A STATE keeps to WIRE_MAX_JOBS jobs (the latest) and WIRE_MAX_JOB_NODES rows. */
static void test_export_caps(void **state)
{
    (void)state;
    struct jobtally *t = jobtally_create();
    uint32_t jobs_made = WIRE_MAX_JOBS + 8;
    for (uint32_t j = 0; j < jobs_made; j++)
        jobtally_submit(t, 100 + j, 1, NULL, j * MS);
    /* The last two jobs ran on more nodes, together, than a STATE carries rows for. */
    const int32_t wide = 40000;
    for (uint32_t j = jobs_made - 2; j < jobs_made; j++)
        for (int32_t node = 0; node < wide; node++)
            fold(t, TRACE_TASK_START, node, 100 + j, (uint32_t)node, 1, 0);
    uint32_t n;
    const struct wire_job_tally *jobs = jobtally_export(t, &n);
    assert_int_equal(n, WIRE_MAX_JOBS);
    assert_int_equal(jobs[0].job, 100 + jobs_made - WIRE_MAX_JOBS);
    assert_int_equal(jobs[n - 1].job, 100 + jobs_made - 1);
    assert_int_equal(jobs[n - 2].nnodes, wide);
    assert_int_equal(jobs[n - 1].nnodes, WIRE_MAX_JOB_NODES - wide);
    assert_int_equal(jobs[n - 1].running, wide); /* the job's own figures stay whole */
    /* What is exported fits a STATE, and reads back. */
    struct wbuf b;
    wbuf_init(&b);
    struct wire_state st = {.njobs = n, .jobs = (struct wire_job_tally *)jobs};
    wire_put_state(&b, &st);
    assert_true(b.len < (16u << 20));
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct wire_state got;
    assert_int_equal(wire_get_state(&r, &got), 0);
    assert_int_equal(got.njobs, WIRE_MAX_JOBS);
    assert_int_equal(got.jobs[n - 1].nnodes, WIRE_MAX_JOB_NODES - wide);
    assert_int_equal(got.jobs[n - 2].nodes[wide - 1].node, wide - 1);
    wire_state_fini(&got);
    wbuf_fini(&b);
    jobtally_destroy(t);
}

/* ---- a node's block, decoded in memory ------------------------------------------------- */

struct collected {
    struct trace_event ev[64];
    int n;
};

static void collect(void *ctx, const struct trace_event *ev)
{
    struct collected *c = ctx;
    assert_true(c->n < 64);
    c->ev[c->n++] = *ev;
}

static void test_block_decode(void **state)
{
    (void)state;
    uint8_t sync[TRACE_SYNC_SIZE];
    assert_int_equal(trace_sync_new(sync), 0);
    struct trace_block *enc;
    assert_int_equal(trace_block_create(&enc, 0), 0);
    struct trace_event sent[20];
    for (int i = 0; i < 20; i++) {
        sent[i] = task_event(i % 2 ? TRACE_TASK_END : TRACE_TASK_START, 3, 5, (uint32_t)(i / 2),
                             10 * i, i % 2 ? TASK_DONE : 0);
        sent[i].seq = 40 + i;
        assert_int_equal(trace_block_append(enc, &sent[i]), 0);
    }
    const uint8_t *data;
    size_t len;
    assert_int_equal(trace_block_finish(enc, sync, &data, &len), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, data, len);
    trace_block_destroy(enc);

    struct trace_block_reader *rd;
    assert_int_equal(trace_block_reader_create(&rd), 0);
    char why[160];
    /* Twice: the reader is reused from block to block. */
    for (int round = 0; round < 2; round++) {
        struct collected c = {.n = 0};
        assert_int_equal(trace_block_reader_decode(rd, copy, len, collect, &c, why, sizeof why), 0);
        assert_int_equal(c.n, 20);
        for (int i = 0; i < 20; i++) {
            assert_int_equal(c.ev[i].kind, sent[i].kind);
            assert_int_equal(c.ev[i].seq, sent[i].seq);
            assert_int_equal(c.ev[i].time_ns, sent[i].time_ns);
            assert_true(c.ev[i].task == sent[i].task);
            assert_int_equal(c.ev[i].status, sent[i].status);
        }
    }
    /* A payload bit flipped, and a cut block: refused, saying what. */
    uint8_t *bad = malloc(len);
    memcpy(bad, copy, len);
    bad[len / 2] ^= 0x55;
    struct collected c = {.n = 0};
    int rc = trace_block_reader_decode(rd, bad, len, collect, &c, why, sizeof why);
    if (rc == 0)
        assert_int_equal(c.n, 20); /* a flip deflate cannot see leaves the records whole */
    else
        assert_int_equal(rc, -EBADMSG);
    assert_int_equal(trace_block_reader_decode(rd, copy, len - 20, collect, &c, why, sizeof why),
                     -EBADMSG);
    assert_non_null(strstr(why, "framing"));
    free(bad);
    free(copy);
    trace_block_reader_destroy(rd);
    trace_block_reader_destroy(NULL);
}

/* ---- STATE on the wire ----------------------------------------------------------------- */

static struct wire_job_node rows[3] = {
    {.node = 0, .running = 1, .done = 5, .busy_ns = 7 * MS},
    {.node = 4, .running = 0, .done = 2, .busy_ns = 3 * MS},
    {.node = 2, .running = 2, .done = 0, .busy_ns = 0},
};

static void put_two_jobs(struct wbuf *b)
{
    struct wire_job_tally jobs[2] = {
        {.job = 3, .tasks = 10, .done = 7, .failed = 1, .cancelled = 0, .running = 1,
         .submit_ns = 5 * MS, .end_ns = 90 * MS, .busy_ns = 10 * MS, .name = "a.jsonl",
         .nnodes = 2, .nodes = rows},
        {.job = 4, .tasks = 0, .running = 2, .submit_ns = -1, .end_ns = -1, .name = "",
         .nnodes = 1, .nodes = rows + 2},
    };
    struct wire_node_state nodes[1] = {{.seen = 1, .connected = 1, .time_ns = 1}};
    struct wire_state st = {.now_ns = 100 * MS, .nnodes = 1, .nodes = nodes, .jobs_partial = 1,
                            .njobs = 2, .jobs = jobs};
    wire_put_state(b, &st);
}

static void test_state_round_trip(void **state)
{
    (void)state;
    struct wbuf b;
    wbuf_init(&b);
    put_two_jobs(&b);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct wire_state s;
    assert_int_equal(wire_get_state(&r, &s), 0);
    assert_int_equal(s.njobs, 2);
    assert_int_equal(s.jobs_partial, 1);
    assert_int_equal(s.jobs[0].job, 3);
    assert_int_equal(s.jobs[0].tasks, 10);
    assert_int_equal(s.jobs[0].done, 7);
    assert_int_equal(s.jobs[0].failed, 1);
    assert_int_equal(s.jobs[0].end_ns, 90 * MS);
    assert_string_equal(s.jobs[0].name, "a.jsonl");
    assert_int_equal(s.jobs[0].nnodes, 2);
    assert_int_equal(s.jobs[0].nodes[1].node, 4);
    assert_int_equal(s.jobs[0].nodes[1].busy_ns, 3 * MS);
    assert_int_equal(s.jobs[1].submit_ns, -1);
    assert_int_equal(s.jobs[1].nodes[0].node, 2);
    assert_int_equal(s.jobs[1].nodes[0].running, 2);
    wire_state_fini(&s);
    wbuf_fini(&b);
}

/* Offsets into put_two_jobs' payload: header 20, one node 2 + 8 + 24 + 144, notes 4, the
 * partial flag 1. */
#define PARTIAL_AT (20 + 178 + 4)
#define JOBS_AT (PARTIAL_AT + 1)
#define JOB0_NAME_AT (JOBS_AT + 4 + 4 + 4 + 24 + 4 + 24)
#define JOB0_ROWS_AT (JOB0_NAME_AT + 4 + 8 + 4)

static void expect_refused(const uint8_t *data, size_t len, const char *field)
{
    struct rbuf r;
    rbuf_init(&r, data, len);
    struct wire_state s;
    assert_int_equal(wire_get_state(&r, &s), -EBADMSG);
    assert_non_null(s.bad);
    if (!strstr(s.bad, field))
        fail_msg("refused for '%s', expected '%s'", s.bad, field);
    assert_null(s.jobs);
    assert_null(s.job_nodes);
    assert_null(s.nodes);
}

static void test_state_malformed(void **state)
{
    (void)state;
    struct wbuf b;
    wbuf_init(&b);
    put_two_jobs(&b);
    uint8_t *p = malloc(b.len);
    /* The layout the offsets assume. */
    assert_int_equal(rbuf_load_le(b.data + JOBS_AT, 4), 2);
    assert_int_equal(rbuf_load_le(b.data + JOB0_NAME_AT, 4), 8); /* "a.jsonl" and its NUL */
    assert_int_equal(rbuf_load_le(b.data + JOB0_ROWS_AT - 4, 4), 2);

    /* Every cut is refused, never read past. */
    for (size_t cut = 0; cut < b.len; cut++) {
        struct rbuf r;
        rbuf_init(&r, b.data, cut);
        struct wire_state s;
        assert_int_equal(wire_get_state(&r, &s), -EBADMSG);
        assert_non_null(s.bad);
    }
    memcpy(p, b.data, b.len);
    p[PARTIAL_AT] = 2;
    expect_refused(p, b.len, "partial");
    memcpy(p, b.data, b.len);
    wbuf_store_le(p + JOBS_AT, WIRE_MAX_JOBS + 1, 4);
    expect_refused(p, b.len, "job count");
    memcpy(p, b.data, b.len);
    wbuf_store_le(p + JOBS_AT + 4 + 4 + 4 + 24 + 4, (uint64_t)-5, 8); /* submit_ns */
    expect_refused(p, b.len, "negative");
    memcpy(p, b.data, b.len);
    p[JOB0_NAME_AT + 4 + 7] = 'x'; /* the name's NUL */
    expect_refused(p, b.len, "job name");
    memcpy(p, b.data, b.len);
    wbuf_store_le(p + JOB0_ROWS_AT - 4, WIRE_MAX_JOB_NODES + 1, 4);
    expect_refused(p, b.len, "job node rows");
    memcpy(p, b.data, b.len);
    wbuf_store_le(p + JOB0_ROWS_AT, (uint32_t)WIRE_MAX_NODES, 4);
    expect_refused(p, b.len, "job node id");
    memcpy(p, b.data, b.len);
    wbuf_store_le(p + JOB0_ROWS_AT, (uint32_t)-1, 4);
    expect_refused(p, b.len, "job node id");
    memcpy(p, b.data, b.len);
    wbuf_store_le(p + JOBS_AT + 4, 4, 4); /* job 3 becomes job 4: twice */
    expect_refused(p, b.len, "repeated");
    free(p);
    wbuf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold),
        cmocka_unit_test(test_export_caps),
        cmocka_unit_test(test_block_decode),
        cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_state_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
