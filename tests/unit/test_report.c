/*
 * jackdaw report, compare and diff (tools/report, tools/cmd/cmd_report.c, cmd_compare.c,
 * cmd_diff.c) on synthetic traces written with the block encoder, whose answers were
 * worked out by hand.
 *
 * The hand run: 2 nodes x 1 slot, node 1 at speed 0.5, 7 tasks, times in seconds.
 *   node 0: runs t0 [0,2), t1 [2,4), t4 [4,6), t5 [6,9); t0..t2 queued shared at 0,
 *           t4 queued local at 4, t5 queued local at 5; t2 stolen out at 3 (to node 1).
 *   node 1: t3 queued local at 0, runs [1,2) (one input, local; a cache hit at 1);
 *           asks node 0 at 2.5, t2 arrives at 3 (granted), fetches its input [3,3.5)
 *           (1000 bytes from node 0) and runs it [3.5,5); asks again at 6.2, refused
 *           (empty) at 6.4, finds no victim at 6.5; t6 queued local at 6.8, runs [7,8).
 * So: makespan 9; work 9 x 1 + 3.5 x 0.5 = 10.75 over capacity 1.5: ideal 7.1667,
 * efficiency 0.7963.  Node 1 idles 5.5 s: ramp-up [0,1) 1, imbalance [2,2.5) 0.5, steal
 * in flight [2.5,3) 0.5, data [3,3.5) 0.5, locality [5,6) 1 (t5 held in node 0's LReadyQ),
 * no work [6,6.8) 0.8 (the request out at [6.2,6.4) finds nothing either), dispatch
 * [6.8,7) 0.2, tail [8,9) 1.  The steal of t2: one task queued at node 0, which started
 * at 0 and 2 (0.5 tasks/s; its task of length 2 on one slot agrees): estimate 3 + 1/0.5
 * = 5, started at 3.5: helpful by 1.5 s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_fixture.h"
#include "tools/cmd/cmd.h"
#include "core/model/workload.h"
#include "tools/report/analysis.h"
#include "tools/report/diff.h"
#include "tools/report/render.h"

#define HAND_HEADER                                                                        \
    "{\"format\":1,\"run_id\":\"hand-1\",\"start_ns\":1700000000000000000,"                 \
    "\"nodes\":[{\"id\":0,\"slots\":1,\"speed\":1.0},{\"id\":1,\"slots\":1,\"speed\":0.5}]," \
    "\"config\":{\"node_args\":[\"--placement\",\"flds\",\"--steal=random1\"]},"             \
    "\"workload\":{\"name\":\"hand.jsonl\",\"digest\":\"abc\"}}"

#define EPS 1e-9

static const char *hand_names[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6"};
static const char *hand_workload[] = {"hand.jsonl"};

static int setup_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_report");
}

static char *in_dir(const char *name)
{
    static char buf[8][256];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static struct trace_event *at(struct fixture *f, enum trace_kind kind, int32_t node, double s,
                              int task, double scale)
{
    return fixture_push(f, kind, node, (int64_t)llround(s * scale * 1e9),
                        task < 0 ? TRACE_NO_TASK : fixture_key((uint32_t)task));
}

static void task_run(struct fixture *f, int32_t node, int task, double start, double end,
                     double scale)
{
    at(f, TRACE_TASK_START, node, start, task, scale);
    at(f, TRACE_TASK_END, node, end, task, scale)->status = TASK_DONE;
}

/* The hand run, with every time multiplied by scale (diff's "tasks take longer"). */
static void hand_run(struct fixture *f, double scale)
{
    memset(f, 0, sizeof *f);
    struct trace_event *e;
    e = at(f, TRACE_JOB_SUBMIT, -1, 0, -1, scale);
    e->task = (uint64_t)FIXTURE_JOB << 32 | UINT32_MAX;
    e->count = 7;
    e->names = hand_workload;
    e->nnames = 1;
    e = at(f, TRACE_TASK_NAMES, -1, 0, 0, scale);
    e->count = 7;
    e->names = hand_names;
    e->nnames = 7;
    for (int n = 0; n < 2; n++)
        at(f, TRACE_NODE_UP, n, 0, -1, scale)->count = 1;
    /* node 0 */
    const int mine[] = {0, 1, 2, 4, 5};
    for (int i = 0; i < 5; i++)
        at(f, TRACE_TASK_SUBMIT, 0, 0, mine[i], scale);
    for (int i = 0; i < 3; i++) {
        at(f, TRACE_TASK_READY, 0, 0, i, scale);
        at(f, TRACE_TASK_QUEUED_SHARED, 0, 0, i, scale);
    }
    at(f, TRACE_TASK_START, 0, 0, 0, scale);
    e = at(f, TRACE_NODE_SAMPLE, 0, 0.5, -1, scale);
    e->sample = (struct trace_sample){.busy = 1, .slots = 1, .sreadyq = 2, .info_sent = 3};
    at(f, TRACE_TASK_END, 0, 2, 0, scale)->status = TASK_DONE;
    at(f, TRACE_TASK_START, 0, 2, 1, scale);
    at(f, TRACE_TASK_STOLEN_OUT, 0, 3, 2, scale)->peer = 1;
    at(f, TRACE_TASK_END, 0, 4, 1, scale)->status = TASK_DONE;
    at(f, TRACE_TASK_READY, 0, 4, 4, scale);
    at(f, TRACE_TASK_QUEUED_LOCAL, 0, 4, 4, scale);
    at(f, TRACE_TASK_START, 0, 4, 4, scale);
    at(f, TRACE_TASK_READY, 0, 5, 5, scale);
    at(f, TRACE_TASK_QUEUED_LOCAL, 0, 5, 5, scale);
    e = at(f, TRACE_NODE_SAMPLE, 0, 5.5, -1, scale);
    e->sample = (struct trace_sample){.busy = 1, .slots = 1, .lreadyq = 1, .info_sent = 7,
                                      .info_received = 5, .token_passes = 2};
    at(f, TRACE_TASK_END, 0, 6, 4, scale)->status = TASK_DONE;
    task_run(f, 0, 5, 6, 9, scale);
    /* node 1 */
    at(f, TRACE_TASK_SUBMIT, 1, 0, 3, scale);
    at(f, TRACE_TASK_SUBMIT, 1, 0, 6, scale);
    at(f, TRACE_TASK_READY, 1, 0, 3, scale);
    at(f, TRACE_TASK_QUEUED_LOCAL, 1, 0, 3, scale);
    e = at(f, TRACE_NODE_SAMPLE, 1, 0.5, -1, scale);
    e->sample = (struct trace_sample){.slots = 1, .lreadyq = 1};
    at(f, TRACE_CACHE_HIT, 1, 1, 100, scale)->bytes = 500;
    e = at(f, TRACE_TASK_START, 1, 1, 3, scale);
    e->count = 1; /* one input, here: a locality hit */
    e->bytes = 500;
    at(f, TRACE_TASK_END, 1, 2, 3, scale)->status = TASK_DONE;
    at(f, TRACE_STEAL_REQUEST, 1, 2.5, -1, scale)->peer = 0;
    at(f, TRACE_TASK_STOLEN_IN, 1, 3, 2, scale)->peer = 0;
    e = at(f, TRACE_STEAL_GRANT, 1, 3, -1, scale);
    e->peer = 0;
    e->count = 1;
    e = at(f, TRACE_DATA_FETCH, 1, 3.5, 101, scale);
    e->peer = 0;
    e->bytes = 1000;
    e->duration_ns = (int64_t)llround(0.5 * scale * 1e9);
    e = at(f, TRACE_TASK_START, 1, 3.5, 2, scale);
    e->count = 1;
    e->bytes = 1000;
    e->status = 1; /* fetched */
    at(f, TRACE_TASK_END, 1, 5, 2, scale)->status = TASK_DONE;
    e = at(f, TRACE_NODE_SAMPLE, 1, 5.5, -1, scale);
    e->sample = (struct trace_sample){.slots = 1, .info_sent = 4};
    e = at(f, TRACE_STEAL_REQUEST, 1, 6.2, -1, scale);
    e->peer = 0;
    e->count = 3; /* asked for three; the earlier request left it to the victim (0) */
    e = at(f, TRACE_STEAL_FAIL, 1, 6.4, -1, scale);
    e->peer = 0;
    e->status = STEAL_FAIL_EMPTY;
    at(f, TRACE_STEAL_FAIL, 1, 6.5, -1, scale)->status = STEAL_FAIL_NO_VICTIM;
    at(f, TRACE_TASK_READY, 1, 6.8, 6, scale);
    at(f, TRACE_TASK_QUEUED_LOCAL, 1, 6.8, 6, scale);
    task_run(f, 1, 6, 7, 8, scale);
    fixture_number(f);
}

static void write_hand(const char *path, double scale)
{
    struct fixture f;
    hand_run(&f, scale);
    fixture_write_with(&f, path, HAND_HEADER, 1000, NULL, NULL, 0);
    fixture_free(&f);
}

static struct report_analysis *analyze(const char *path, unsigned bins)
{
    struct report_options o = {.bins = bins};
    struct report_analysis *a = NULL;
    char *cause = NULL;
    int rc = report_analyze(path, &o, &a, &cause);
    if (rc < 0)
        fail_msg("report_analyze('%s'): %s", path, cause ? cause : "?");
    assert_non_null(a);
    return a;
}

/* The collector's records of a job of `n` tasks named `names` (the hand workload's file),
 * at time 0: JOB_SUBMIT, then TASK_NAMES. */
static void job_prologue(struct fixture *f, const char **names, int n)
{
    struct trace_event *e = at(f, TRACE_JOB_SUBMIT, -1, 0, -1, 1);
    e->task = (uint64_t)FIXTURE_JOB << 32 | UINT32_MAX;
    e->count = n;
    e->names = hand_workload;
    e->nnames = 1;
    e = at(f, TRACE_TASK_NAMES, -1, 0, 0, 1);
    e->count = n;
    e->names = names;
    e->nnames = (uint32_t)n;
}

/* The Markdown report of `a`, owned by the caller. */
static char *md_of(const struct report_analysis *a)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(render_md(out, a, NULL), 0);
    fclose(out);
    return text;
}

static struct report_analysis *hand(unsigned bins)
{
    const char *path = in_dir("hand.avro");
    write_hand(path, 1.0);
    return analyze(path, bins);
}

/* More bins than the Markdown table has rows: the text says the rows average them (9 s
 * in 90 bins of 0.1 s, 20 rows of 0.45 s); with few bins, one row a bin and no such
 * sentence. */
static void test_time_table_says_it_averages(void **state)
{
    (void)state;
    for (unsigned bins = 9; bins <= 90; bins += 81) {
        struct report_analysis *a = hand(bins);
        char *text = md_of(a);
        const char *said = strstr(text, "The table averages the 90 bins in 20 rows of about 450.00 ms");
        if (bins == 90)
            assert_non_null(said);
        else
            assert_null(strstr(text, "The table averages"));
        free(text);
        report_analysis_destroy(a);
    }
}

/*
 * Efficiency from the workload's declared work, as `run` computes it: the hand run's
 * seven tasks, declared here as 0.5 s sleeps (3.5 s of work) where the trace measured
 * their runs; commands and other jobs' tasks would keep their measured time.
 */
static void test_declared_work(void **state)
{
    (void)state;
    struct report_analysis *a = hand(9);
    double measured = a->figures[RF_WORK_S];
    struct workload wl;
    char *cause = NULL;
    const char *text = "{\"id\":\"t0\",\"kind\":\"sleep\",\"duration_s\":0.5}\n"
                       "{\"id\":\"t1\",\"kind\":\"sleep\",\"duration_s\":0.5}\n"
                       "{\"id\":\"t2\",\"kind\":\"sleep\",\"duration_s\":0.5}\n"
                       "{\"id\":\"t3\",\"kind\":\"sleep\",\"duration_s\":0.5}\n"
                       "{\"id\":\"t4\",\"kind\":\"sleep\",\"duration_s\":0.5}\n"
                       "{\"id\":\"t5\",\"kind\":\"sleep\",\"duration_s\":0.5}\n"
                       "{\"id\":\"t6\",\"kind\":\"sleep\",\"duration_s\":0.5}\n";
    assert_int_equal(workload_parse(&wl, text, strlen(text), "hand.jsonl", &cause), 0);
    report_use_workload(a, &wl);
    assert_true(a->work_declared);
    assert_true(measured > 4); /* the trace's runs were longer than declared */
    assert_float_equal(a->figures[RF_WORK_S], 3.5, EPS);
    double cap = 0;
    for (size_t i = 0; i < a->nnodes; i++)
        cap += a->nodes[i].slots * a->nodes[i].speed;
    assert_float_equal(a->figures[RF_IDEAL_S], 3.5 / cap, EPS);
    assert_float_equal(a->figures[RF_EFFICIENCY], 3.5 / cap / 9, EPS);
    workload_fini(&wl);
    report_analysis_destroy(a);
}

static void test_hand_summary(void **state)
{
    (void)state;
    struct report_analysis *a = hand(9);
    const double *f = a->figures;
    assert_float_equal(f[RF_MAKESPAN_S], 9, EPS);
    assert_float_equal(f[RF_THROUGHPUT_TPS], 7.0 / 9, EPS);
    assert_float_equal(f[RF_WORK_S], 10.75, EPS);
    assert_float_equal(f[RF_IDEAL_S], 10.75 / 1.5, EPS);
    assert_float_equal(f[RF_EFFICIENCY], 10.75 / 1.5 / 9, EPS);
    assert_float_equal(f[RF_TIME_PER_TASK_PER_CPU_S], 9.0 * 2 / 7, EPS);
    assert_float_equal(f[RF_MEAN_TASK_S], 12.5 / 7, EPS);
    assert_float_equal(f[RF_UTILIZATION], 12.5 / 18, EPS);
    assert_float_equal(f[RF_SETUP_S], 0, EPS);
    assert_float_equal(f[RF_NODES], 2, 0);
    assert_float_equal(f[RF_SLOTS], 2, 0);
    assert_float_equal(f[RF_TASKS_SUBMITTED], 7, 0);
    assert_float_equal(f[RF_TASKS_DONE], 7, 0);
    assert_float_equal(f[RF_TASKS_FAILED], 0, 0);
    assert_true(isnan(f[RF_BOUND_MAKESPAN_S]));
    assert_true(isnan(f[RF_BOUND_QUALITY]));
    report_set_bound(a, 8.1, "capacity");
    assert_float_equal(a->figures[RF_BOUND_QUALITY], 0.9, EPS);
    {
        /* The bound is named for what binds, not always "sub-optimal". */
        char *text = md_of(a);
        assert_non_null(strstr(text, "the binding lower bound on the makespan (the capacity) is"));
        assert_null(strstr(text, "the sub-optimal bound is"));
        free(text);
    }
    assert_string_equal(a->placement, "flds");
    assert_string_equal(a->steal_policy, "random1");
    assert_string_equal(a->workload_name, "hand.jsonl");
    assert_string_equal(a->workload_path, "hand.jsonl");
    assert_string_equal(a->run_id, "hand-1");
    assert_string_equal(a->label, "flds/random1, 2 nodes, hand.jsonl");
    assert_int_equal(a->nnodes, 2);
    assert_int_equal(a->nodes[0].tasks_run, 4);
    assert_int_equal(a->nodes[1].tasks_run, 3);
    assert_float_equal(a->nodes[0].busy_s, 9, EPS);
    assert_float_equal(a->nodes[1].busy_s, 3.5, EPS);
    assert_float_equal(a->nodes[1].utilization, 3.5 / 9, EPS);
    assert_float_equal(a->nodes[1].speed, 0.5, 0);
    assert_int_equal(a->nwarnings, 0);
    assert_false(a->cut);
    report_analysis_destroy(a);
}

static void test_hand_data_and_steals(void **state)
{
    (void)state;
    struct report_analysis *a = hand(9);
    const double *f = a->figures;
    assert_float_equal(f[RF_TASKS_WITH_INPUTS], 2, 0);
    assert_float_equal(f[RF_LOCALITY_HIT_RATE], 0.5, EPS);
    assert_float_equal(f[RF_BYTES_MOVED], 1000, 0);
    assert_float_equal(f[RF_FETCHES], 1, 0);
    assert_float_equal(f[RF_CACHE_HITS], 1, 0);
    assert_float_equal(f[RF_CACHE_HIT_RATE], 0.5, EPS);
    assert_float_equal(f[RF_STEAL_REQUESTS], 2, 0);
    assert_float_equal(f[RF_STEAL_GRANTS], 1, 0);
    assert_float_equal(f[RF_STEAL_FAILS], 2, 0);
    assert_int_equal(a->steal_fails_empty, 1);
    assert_int_equal(a->steal_fails_no_victim, 1);
    assert_int_equal(a->steal_fails_timeout, 0);
    assert_float_equal(f[RF_STEAL_SUCCESS_PCT], 50, EPS);
    assert_float_equal(f[RF_STEAL_ATTEMPT_SUCCESS_PCT], 100.0 / 3, EPS);
    assert_float_equal(f[RF_TASKS_STOLEN], 1, 0);
    assert_float_equal(f[RF_STEAL_TASKS_ASKED], 3, 0);
    assert_float_equal(f[RF_STEAL_TASKS_GRANTED], 1, 0);
    /* Counters since start: each node's last sample, summed (7 + 4, not 3 + 7 + 4). */
    assert_float_equal(f[RF_INFO_SENT], 11, 0);
    assert_float_equal(f[RF_INFO_RECEIVED], 5, 0);
    assert_float_equal(f[RF_TOKEN_PASSES], 2, 0);
    /* thief x victim: only node 1 stole, from node 0 */
    const uint64_t tasks[] = {0, 0, 1, 0}, asks[] = {0, 0, 2, 0};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(a->steal_tasks[k], tasks[k]);
        assert_int_equal(a->steal_asks[k], asks[k]);
    }
    report_analysis_destroy(a);
}

static void test_hand_lost_time(void **state)
{
    (void)state;
    struct report_analysis *a = hand(9);
    const double *f = a->figures;
    const double want[REPORT_LOST_COUNT] = {
        [REPORT_LOST_RAMP_UP] = 1,   [REPORT_LOST_TAIL] = 1,      [REPORT_LOST_DATA] = 0.5,
        [REPORT_LOST_DISPATCH] = 0.2, [REPORT_LOST_STEAL] = 0.5,  [REPORT_LOST_IMBALANCE] = 0.5,
        [REPORT_LOST_LOCALITY] = 1,  [REPORT_LOST_NO_WORK] = 0.8,
    };
    double sum = 0;
    for (int c = 0; c < REPORT_LOST_COUNT; c++) {
        if (fabs(f[RF_LOST_RAMP_UP_S + c] - want[c]) > EPS)
            fail_msg("lost %s: %.12f, want %.12f", report_lost_cause_key(c),
                     f[RF_LOST_RAMP_UP_S + c], want[c]);
        assert_float_equal(a->nodes[0].lost_s[c], 0, EPS);
        assert_float_equal(a->nodes[1].lost_s[c], want[c], EPS);
        sum += f[RF_LOST_RAMP_UP_S + c];
    }
    assert_float_equal(f[RF_IDLE_CORE_S], 5.5, EPS);
    assert_float_equal(sum, 5.5, EPS);
    assert_float_equal(f[RF_CAPACITY_CORE_S], 18, EPS);
    assert_float_equal(f[RF_BUSY_CORE_S], 12.5, EPS);
    assert_float_equal(f[RF_CAPACITY_CORE_S] - f[RF_BUSY_CORE_S], f[RF_IDLE_CORE_S], EPS);
    report_analysis_destroy(a);
}

static void test_hand_series(void **state)
{
    (void)state;
    struct report_analysis *a = hand(9);
    assert_int_equal(a->nbins, 9);
    assert_float_equal(a->bin_s, 1, EPS);
    const double util[9] = {0.5, 1, 0.5, 0.75, 1, 0.5, 0.5, 1, 0.5};
    /* E_b worked out in share/doc/report.md's example and the header of this file */
    const double eb[9] = {0.5, 1, 1, 0, 0, 1, 0.2, 0, 0};
    const double sready[9] = {2, 2, 2, 2, 2, 0, 0, 0, 0};
    const double lready[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const double node1[9] = {0, 1, 0, 0.5, 1, 0, 0, 1, 0};
    for (size_t b = 0; b < 9; b++) {
        assert_float_equal(a->bins[b].t_s, (double)b, EPS);
        if (fabs(a->bins[b].utilization - util[b]) > EPS ||
            fabs(a->bins[b].potential - eb[b]) > EPS)
            fail_msg("bin %zu: utilization %.6f (want %.6f), E_b %.6f (want %.6f)", b,
                     a->bins[b].utilization, util[b], a->bins[b].potential, eb[b]);
        assert_float_equal(a->bins[b].busy_slots, 2 * util[b], EPS);
        assert_float_equal(a->bins[b].sreadyq, sready[b], EPS);
        assert_float_equal(a->bins[b].lreadyq, lready[b], EPS);
        assert_float_equal(a->node_utilization[b * 2 + 0], 1, EPS);
        assert_float_equal(a->node_utilization[b * 2 + 1], node1[b], EPS);
    }
    assert_float_equal(a->figures[RF_POTENTIAL_MAX], 1, EPS);
    assert_float_equal(a->figures[RF_POTENTIAL_MEAN], 3.7 / 9, EPS);
    report_analysis_destroy(a);
}

static void test_hand_steal_audit(void **state)
{
    (void)state;
    struct report_analysis *a = hand(9);
    assert_float_equal(a->figures[RF_STEALS_AUDITED], 1, 0);
    assert_float_equal(a->figures[RF_STEALS_HELPFUL], 1, 0);
    assert_float_equal(a->figures[RF_STEALS_HARMFUL], 0, 0);
    assert_float_equal(a->figures[RF_STEAL_GAIN_S], 1.5, EPS);
    assert_int_equal(a->nworst, 1);
    const struct report_steal *s = &a->worst[0];
    assert_int_equal(s->task, fixture_key(2));
    assert_string_equal(s->name, "t2");
    assert_int_equal(s->victim, 0);
    assert_int_equal(s->thief, 1);
    assert_int_equal(s->position, 1);
    assert_float_equal(s->victim_rate_tps, 0.5, EPS);
    assert_float_equal(s->stolen_s, 3, EPS);
    assert_float_equal(s->started_s, 3.5, EPS);
    assert_float_equal(s->estimate_s, 5, EPS);
    assert_float_equal(s->gain_s, 1.5, EPS);
    /* Its one listed steal helped: the text must not call the list harmful. */
    char *text = md_of(a);
    assert_non_null(strstr(text, "No steal listed here was harmful"));
    assert_null(strstr(text, "with a negative gain"));
    free(text);
    report_analysis_destroy(a);
}

/* A run of three tasks on two nodes where node 1 steals t2 at 0.7 s and runs it at
 * 2.0 s, while node 0, which would have started it at 1.0 s, idles: a harmful steal.
 * `names` are the three tasks' ids.  Written to `file` in the test's directory. */
static const char *write_harmful_steal(const char *const *names, const char *file)
{
    struct fixture f;
    memset(&f, 0, sizeof f);
    struct trace_event *e = at(&f, TRACE_JOB_SUBMIT, -1, 0, -1, 1);
    e->task = (uint64_t)FIXTURE_JOB << 32 | UINT32_MAX;
    e->count = 3;
    e = at(&f, TRACE_TASK_NAMES, -1, 0, 0, 1);
    e->count = 3;
    e->names = names;
    e->nnames = 3;
    for (int i = 0; i < 3; i++) {
        at(&f, TRACE_TASK_SUBMIT, 0, 0, i, 1);
        at(&f, TRACE_TASK_QUEUED_SHARED, 0, 0, i, 1);
    }
    task_run(&f, 0, 0, 0, 0.5, 1);
    at(&f, TRACE_TASK_START, 0, 0.5, 1, 1);
    at(&f, TRACE_TASK_STOLEN_OUT, 0, 0.6, 2, 1)->peer = 1;
    at(&f, TRACE_TASK_END, 0, 1.0, 1, 1)->status = TASK_DONE;
    at(&f, TRACE_STEAL_REQUEST, 1, 0.55, -1, 1)->peer = 0;
    at(&f, TRACE_TASK_STOLEN_IN, 1, 0.7, 2, 1)->peer = 0;
    e = at(&f, TRACE_STEAL_GRANT, 1, 0.7, -1, 1);
    e->peer = 0;
    e->count = 1;
    task_run(&f, 1, 2, 2.0, 2.5, 1);
    fixture_number(&f);
    const char *path = in_dir(file);
    fixture_write_with(&f, path, HAND_HEADER, 1000, NULL, NULL, 0);
    fixture_free(&f);
    return path;
}

/* A steal that made things worse: node 0 (1 slot) runs t0 [0,0.5) and t1 [0.5,1); t2,
 * queued behind t1, is stolen at 0.6 by node 1, which starts it only at 2.0.  Node 0
 * started at 0 and 0.5 (2 tasks/s) with one task queued: it would have started t2 at
 * 0.6 + 1/2 = 1.1.  Harmful by 0.9 s. */
static void test_harmful_steal(void **state)
{
    (void)state;
    const char *path = write_harmful_steal(hand_names, "harm.avro");
    struct report_analysis *a = analyze(path, 10);
    assert_float_equal(a->figures[RF_STEALS_AUDITED], 1, 0);
    assert_float_equal(a->figures[RF_STEALS_HELPFUL], 0, 0);
    assert_float_equal(a->figures[RF_STEALS_HARMFUL], 1, 0);
    assert_float_equal(a->figures[RF_STEAL_GAIN_S], -0.9, EPS);
    assert_int_equal(a->nworst, 1);
    assert_float_equal(a->worst[0].estimate_s, 1.1, EPS);
    assert_float_equal(a->worst[0].victim_rate_tps, 2, EPS);
    assert_string_equal(a->worst[0].name, "t2");
    char *text = md_of(a);
    assert_non_null(strstr(text, "smallest gain first (1 with a negative gain"));
    assert_null(strstr(text, "No steal listed here was harmful"));
    free(text);
    report_analysis_destroy(a);
}

/* The same harmful steal, its task named by a 900-byte id (the fixture's blocks hold
 * 1 KiB): the report's table of steals quotes the name cut, with its length, in
 * Markdown and HTML alike. */
static void test_long_name_cut_in_report(void **state)
{
    (void)state;
    char *long_name = malloc(901);
    assert_non_null(long_name);
    memset(long_name, 'n', 900);
    long_name[900] = '\0';
    const char *names[] = {"t0", "t1", long_name};
    const char *path = write_harmful_steal(names, "longname.avro");
    struct report_analysis *a = analyze(path, 10);
    assert_int_equal(a->nworst, 1);
    assert_string_equal(a->worst[0].name, long_name); /* the analysis keeps it whole */
    for (int html = 0; html <= 1; html++) {
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        assert_int_equal(html ? render_html(out, a, NULL) : render_md(out, a, NULL), 0);
        fclose(out);
        assert_null(strstr(text, long_name));
        assert_non_null(strstr(text, "… (900 bytes)"));
        free(text);
    }
    report_analysis_destroy(a);
    free(long_name);
}

/*
 * A node dies (3 nodes of 1 slot, times in s): node 2 runs task 2 from 0 and holds task 3
 * queued; it dies at 1 (node 0's connection to it closes), node 0 declares it dead at 2
 * and resubmits both to itself as attempt 1 (and recomputes one object): task 2 runs
 * again 2.5-3.5, task 3 3.5-5.  Node 0 ran task 0 0-1, node 1 task 1 0-4.
 * Failure recovery: node 2's slot from 1 to 5 (4 s) and node 0's idle slot from 1 to
 * 2.5, inside the window that closes when task 3 starts again at 3.5 (1.5 s): 5.5.
 * Node 1 idles 4-5 after its last end, after the window: tail 1.  Work thrown away: task
 * 2's attempt 0, 0 to 1 (late: 0 to its END at 4.5, when node 2 was only stopped).
 */
static const char *fail_names[] = {"t0", "t1", "t2", "t3"};

static const char *write_failure(bool late, const char *file)
{
    struct fixture f;
    memset(&f, 0, sizeof f);
    struct trace_event *e;
    job_prologue(&f, fail_names, 4);
    for (int n = 0; n < 3; n++) {
        at(&f, TRACE_NODE_UP, n, 0, -1, 1)->count = 1;
        at(&f, TRACE_TASK_SUBMIT, n, 0, n, 1);
        task_run(&f, n, n, 0, n == 0 ? 1 : n == 1 ? 4 : 1e9, 1);
    }
    fixture_remove(&f, f.n - 1); /* node 2's END of task 2: it died first */
    at(&f, TRACE_TASK_SUBMIT, 2, 0, 3, 1);
    at(&f, TRACE_TASK_QUEUED_LOCAL, 2, 0, 3, 1);
    e = at(&f, TRACE_NODE_DOWN, 0, 1, -1, 1);
    e->peer = 2;
    e->status = TRACE_DOWN_CLOSED;
    e = at(&f, TRACE_NODE_DOWN, 0, 2, -1, 1);
    e->peer = 2;
    e->status = TRACE_DOWN_DECLARED;
    e->count = 1;
    for (int t = 2; t <= 3; t++) {
        e = at(&f, TRACE_TASK_RESUBMIT, 0, 2, t, 1);
        e->peer = 0;
        e->status = 1;
        e->count = 2;
        at(&f, TRACE_TASK_SUBMIT, 0, 2, t, 1)->duration_ns = 1;
    }
    e = at(&f, TRACE_OBJECT_RECOMPUTE, 0, 2, 0, 1);
    e->peer = 2;
    e->status = 1;
    at(&f, TRACE_TASK_START, 0, 2.5, 2, 1)->duration_ns = 1;
    e = at(&f, TRACE_TASK_END, 0, 3.5, 2, 1);
    e->status = TASK_DONE;
    e->duration_ns = 1;
    at(&f, TRACE_TASK_START, 0, 3.5, 3, 1)->duration_ns = 1;
    e = at(&f, TRACE_TASK_END, 0, 5, 3, 1);
    e->status = TASK_DONE;
    e->duration_ns = 1;
    if (late)
        at(&f, TRACE_TASK_END, 2, 4.5, 2, 1)->status = TASK_DONE; /* attempt 0, refused */
    fixture_number(&f);
    const char *path = in_dir(file);
    fixture_write_with(&f, path,
                       "{\"format\":1,\"run_id\":\"fail-1\",\"start_ns\":1700000000000000000,"
                       "\"nodes\":[{\"id\":0,\"slots\":1,\"speed\":1.0},{\"id\":1,\"slots\":1,"
                       "\"speed\":1.0},{\"id\":2,\"slots\":1,\"speed\":1.0}]}",
                       1000, NULL, NULL, 0);
    fixture_free(&f);
    return path;
}

/*
 * A failed run retried (one node of 1 slot, times in s): task 0 runs 0-1 and fails with
 * retries left (TASK_RETRY), waits in the queue until 1.5, runs again 1.5-3 and is done;
 * task 1 runs 3-4.  One task done per task, none ended twice; the failed run is work
 * thrown away (1 s) and the node counts one retry.
 */
static const char *retry_names[] = {"t0", "t1"};

static const char *write_retry(const char *file)
{
    struct fixture f;
    memset(&f, 0, sizeof f);
    struct trace_event *e;
    job_prologue(&f, retry_names, 2);
    at(&f, TRACE_NODE_UP, 0, 0, -1, 1)->count = 1;
    at(&f, TRACE_TASK_SUBMIT, 0, 0, 0, 1);
    at(&f, TRACE_TASK_SUBMIT, 0, 0, 1, 1);
    at(&f, TRACE_TASK_QUEUED_LOCAL, 0, 0, 1, 1);
    at(&f, TRACE_TASK_START, 0, 0, 0, 1);
    e = at(&f, TRACE_TASK_RETRY, 0, 1, 0, 1);
    e->status = TASK_FAILED;
    e->count = 3;
    e->bytes = 1;
    at(&f, TRACE_TASK_QUEUED_LOCAL, 0, 1, 0, 1);
    task_run(&f, 0, 0, 1.5, 3, 1);
    task_run(&f, 0, 1, 3, 4, 1);
    fixture_number(&f);
    const char *path = in_dir(file);
    fixture_write_with(&f, path,
                       "{\"format\":1,\"run_id\":\"retry-1\",\"start_ns\":1700000000000000000,"
                       "\"nodes\":[{\"id\":0,\"slots\":1,\"speed\":1.0}]}",
                       1000, NULL, NULL, 0);
    fixture_free(&f);
    return path;
}

static void test_retried_run(void **state)
{
    (void)state;
    struct report_analysis *a = analyze(write_retry("retry.avro"), 10);
    const double *f = a->figures;
    assert_float_equal(f[RF_MAKESPAN_S], 4, EPS);
    assert_float_equal(f[RF_TASKS_DONE], 2, 0);
    assert_float_equal(f[RF_WORK_THROWN_AWAY_S], 1, EPS);
    assert_int_equal(a->nodes[0].retries, 1);
    /* The slot was free from the failed end to the next start: 0.5 s idle, not busy. */
    assert_float_equal(f[RF_IDLE_CORE_S], 0.5, EPS);
    report_analysis_destroy(a);
}

static void test_failure_recovery(void **state)
{
    (void)state;
    for (int late = 0; late <= 1; late++) {
        struct report_analysis *a = analyze(write_failure(late, late ? "late.avro" : "fail.avro"),
                                            10);
        const double *f = a->figures;
        assert_float_equal(f[RF_MAKESPAN_S], 5, EPS);
        assert_float_equal(f[RF_TASKS_DONE], 4, 0);
        assert_float_equal(f[RF_TASKS_RESUBMITTED], 2, 0);
        assert_float_equal(f[RF_OBJECTS_RECOMPUTED], 1, 0);
        assert_float_equal(f[RF_LOST_FAILURE_S], 5.5, EPS);
        assert_float_equal(a->nodes[2].lost_s[REPORT_LOST_FAILURE], 4, EPS);
        assert_float_equal(a->nodes[0].lost_s[REPORT_LOST_FAILURE], 1.5, EPS);
        assert_float_equal(f[RF_LOST_TAIL_S], 1, EPS);
        assert_float_equal(f[RF_IDLE_CORE_S], 6.5, EPS);
        assert_float_equal(f[RF_BUSY_CORE_S], 7.5, EPS); /* the lost run is not busy */
        assert_float_equal(f[RF_WORK_THROWN_AWAY_S], late ? 4.5 : 1, EPS);
        for (int c = 0; c < REPORT_LOST_COUNT; c++)
            if (c != REPORT_LOST_FAILURE && c != REPORT_LOST_TAIL)
                assert_float_equal(f[RF_LOST_RAMP_UP_S + c], 0, EPS);
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        assert_int_equal(render_md(out, a, NULL), 0);
        fclose(out);
        assert_non_null(strstr(text, "| failure recovery |"));
        assert_non_null(strstr(text, "2 resubmitted"));
        free(text);
        report_analysis_destroy(a);
    }
    /* Without a failure: no such line, and zeros. */
    struct report_analysis *a = hand(9);
    assert_float_equal(a->figures[RF_LOST_FAILURE_S], 0, 0);
    assert_float_equal(a->figures[RF_TASKS_RESUBMITTED], 0, 0);
    assert_float_equal(a->figures[RF_WORK_THROWN_AWAY_S], 0, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(render_md(out, a, NULL), 0);
    fclose(out);
    assert_null(strstr(text, "failure recovery"));
    free(text);
    report_analysis_destroy(a);
}

/* On a busier generated run the causes still add up to the idle time exactly. */
static void test_lost_time_sums_on_a_generated_run(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, 4, 500);
    fixture_number(&f);
    const char *path = in_dir("generated.avro");
    fixture_write(&f, path, 64, NULL, NULL, 0);
    fixture_free(&f);
    struct report_analysis *a = analyze(path, 37);
    const double *v = a->figures;
    double sum = 0;
    for (int c = 0; c < REPORT_LOST_COUNT; c++) {
        assert_true(v[RF_LOST_RAMP_UP_S + c] >= 0);
        sum += v[RF_LOST_RAMP_UP_S + c];
    }
    assert_true(v[RF_IDLE_CORE_S] > 0);
    assert_float_equal(sum, v[RF_IDLE_CORE_S], 1e-9 * v[RF_CAPACITY_CORE_S]);
    assert_float_equal(v[RF_CAPACITY_CORE_S] - v[RF_BUSY_CORE_S], v[RF_IDLE_CORE_S],
                       1e-9 * v[RF_CAPACITY_CORE_S]);
    assert_float_equal(v[RF_TASKS_DONE], 500, 0);
    assert_float_equal(v[RF_TASKS_STOLEN], 100, 0); /* every fifth task */
    report_analysis_destroy(a);
}

static void test_bad_and_cut_input(void **state)
{
    (void)state;
    const char *junk = in_dir("junk.avro");
    FILE *fp = fopen(junk, "w");
    assert_non_null(fp);
    fputs("this is not a trace\n", fp);
    fclose(fp);
    struct report_analysis *a = NULL;
    char *cause = NULL;
    assert_true(report_analyze(junk, NULL, &a, &cause) < 0);
    assert_null(a);
    assert_non_null(cause);
    assert_non_null(strstr(cause, junk));
    free(cause);
    cause = NULL;
    assert_true(report_analyze(in_dir("missing.avro"), NULL, &a, &cause) < 0);
    free(cause);

    /* A crash-cut file: its whole blocks are reported, with a warning. */
    struct fixture f;
    hand_run(&f, 1.0);
    const char *cut = in_dir("cut.avro");
    size_t whole = fixture_write_with(&f, cut, HAND_HEADER, 8, NULL, NULL, 0);
    assert_true(whole > 0);
    struct stat st;
    assert_int_equal(stat(cut, &st), 0);
    fixture_write_with(&f, cut, HAND_HEADER, 8, NULL, NULL, (size_t)st.st_size - 10);
    fixture_free(&f);
    a = analyze(cut, 10);
    assert_true(a->cut);
    assert_true(a->nwarnings >= 1);
    report_analysis_destroy(a);
}

/* Events in any order and with any values the encoder takes (ends without starts,
 * starts twice, steals of tasks never queued, negative sample lengths, peers outside
 * the header, fetches longer than the run so far) give a report, never a crash, and the
 * causes still add up. */
static void test_random_events(void **state)
{
    (void)state;
    uint64_t x = 0x243f6a8885a308d3ULL;
    for (int round = 0; round < 30; round++) {
        struct fixture f;
        memset(&f, 0, sizeof f);
        for (int k = 0; k < 3000; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            enum trace_kind kind = (enum trace_kind)(x % TRACE_TASK_NAMES);
            int32_t node = (int32_t)((x >> 8) % 4) - (kind == TRACE_JOB_SUBMIT);
            struct trace_event *e = fixture_push(&f, kind, node, (int64_t)((x >> 12) % 100000),
                                                 (x >> 30) % 5 ? fixture_key((x >> 32) % 60)
                                                               : TRACE_NO_TASK);
            e->peer = (int32_t)((x >> 40) % 8) - 1;
            e->status = (int32_t)((x >> 44) % 7);
            e->count = (int64_t)((x >> 48) % 13) - 2;
            e->bytes = (int64_t)((x >> 20) % 5000);
            e->duration_ns = (int64_t)((x >> 24) % 200000);
            if (kind == TRACE_NODE_SAMPLE)
                e->sample = (struct trace_sample){.slots = (int32_t)((x >> 50) % 4) - 1,
                                                  .lreadyq = (int32_t)((x >> 52) % 5) - 2,
                                                  .sreadyq = (int32_t)((x >> 54) % 9) - 1};
        }
        fixture_number(&f);
        const char *path = in_dir("random.avro");
        fixture_write_with(&f, path, round % 2 ? HAND_HEADER : FIXTURE_HEADER, 100, NULL, NULL,
                           0);
        fixture_free(&f);
        struct report_analysis *a = analyze(path, 1 + (unsigned)round * 7);
        const double *v = a->figures;
        double sum = 0;
        for (int c = 0; c < REPORT_LOST_COUNT; c++) {
            assert_true(v[RF_LOST_RAMP_UP_S + c] >= 0);
            sum += v[RF_LOST_RAMP_UP_S + c];
        }
        assert_float_equal(sum, v[RF_IDLE_CORE_S], 1e-9 * (1 + v[RF_CAPACITY_CORE_S]));
        for (size_t b = 0; b < a->nbins; b++)
            assert_true(a->bins[b].utilization >= 0 && a->bins[b].utilization <= 1 + 1e-9);
        FILE *null = fopen("/dev/null", "w");
        assert_non_null(null);
        assert_int_equal(render_md(null, a, NULL), 0);
        assert_int_equal(render_html(null, a, NULL), 0);
        assert_int_equal(render_json(null, a), 0);
        fclose(null);
        report_analysis_destroy(a);
    }
}

/* ---- the commands --------------------------------------------------------------------- */

static int run_cmd(const struct cmd *c, int argc, const char **argv)
{
    return c->main(argc, (char **)argv);
}

static bool have_python(void)
{
    return access("/usr/bin/python3", X_OK) == 0;
}

/* Parses an HTML file with python3's html.parser, checks that every element it opens is
 * closed in order, and that each heading given is an <h2>. */
static int html_check(const char *path, const char *const *headings)
{
    const char *script = in_dir("check_html.py");
    FILE *fp = fopen(script, "w");
    assert_non_null(fp);
    fputs("import sys\n"
          "from html.parser import HTMLParser\n"
          "VOID = {'meta','br','img','hr','input','link','col','source'}\n"
          "class P(HTMLParser):\n"
          "    def __init__(s):\n"
          "        super().__init__(); s.stack=[]; s.h2=[]; s.inh=False; s.bad=[]; s.svg=0\n"
          "    def handle_starttag(s, t, a):\n"
          "        if t == 'svg': s.svg += 1\n"
          "        if t == 'h2': s.inh = True; s.h2.append('')\n"
          "        if t not in VOID: s.stack.append(t)\n"
          "    def handle_endtag(s, t):\n"
          "        if t == 'h2': s.inh = False\n"
          "        if not s.stack or s.stack[-1] != t: s.bad.append(t); return\n"
          "        s.stack.pop()\n"
          "    def handle_data(s, d):\n"
          "        if s.inh: s.h2[-1] += d\n"
          "p = P(); p.feed(open(sys.argv[1], encoding='utf-8').read()); p.close()\n"
          "missing = [h for h in sys.argv[2:] if h not in p.h2]\n"
          "if p.bad or p.stack or missing:\n"
          "    print('bad end tags', p.bad[:5], 'unclosed', p.stack[:5], 'missing', missing)\n"
          "    sys.exit(1)\n"
          "print('svg', p.svg)\n", fp);
    fclose(fp);
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s'", script, path);
    for (const char *const *h = headings; *h; h++)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", *h);
    return system(cmd);
}

static bool file_has(const char *path, const char *needle)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return false;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return strstr(buf, needle) != NULL;
}

static void test_report_formats(void **state)
{
    (void)state;
    const char *trace = in_dir("hand.avro");
    write_hand(trace, 1.0);

    const char *html = in_dir("r.html");
    const char *a1[] = {"report", trace, "-o", html, "--bins", "9", NULL};
    assert_int_equal(run_cmd(&cmd_report, 6, a1), 0);
    if (have_python())
        assert_int_equal(html_check(html, report_sections), 0);
    assert_true(file_has(html, "<svg") || file_has(html, "gnuplot is not available"));
    assert_true(file_has(html, "held in LReadyQ by locality"));

    const char *json = in_dir("r.json");
    const char *a2[] = {"report", trace, "-o", json, NULL};
    assert_int_equal(run_cmd(&cmd_report, 4, a2), 0);
    json_error_t err;
    json_t *j = json_load_file(json, 0, &err);
    assert_non_null(j);
    json_t *figs = json_object_get(j, "figures");
    for (int f = 0; f < RF_COUNT; f++)
        assert_non_null(json_object_get(figs, report_figure_info(f)->key));
    assert_float_equal(json_real_value(json_object_get(figs, "makespan_s")), 9, EPS);
    assert_true(json_is_null(json_object_get(figs, "bound_quality")));
    json_t *causes = json_object_get(json_object_get(j, "lost"), "causes");
    assert_float_equal(json_real_value(json_object_get(causes, "locality")), 1, EPS);
    json_t *m = json_object_get(json_object_get(json_object_get(j, "steals"), "matrix"),
                                "tasks");
    assert_int_equal(json_integer_value(json_array_get(json_array_get(m, 1), 0)), 1);
    json_decref(j);

    const char *md = in_dir("r.md");
    const char *a3[] = {"report", trace, "-o", md, NULL};
    assert_int_equal(run_cmd(&cmd_report, 4, a3), 0);
    for (const char *const *s = report_sections; *s; s++) {
        char h[128];
        snprintf(h, sizeof h, "\n## %s\n", *s);
        assert_true(file_has(md, h));
    }

    const char *dir = in_dir("csv");
    const char *a4[] = {"report", trace, "--format", "csv", "-o", dir, NULL};
    assert_int_equal(run_cmd(&cmd_report, 6, a4), 0);
    const char *files[] = {"figures.csv", "nodes.csv", "lost.csv", "series.csv",
                           "node_utilization.csv", "steal_tasks.csv", "steal_requests.csv",
                           "steal_audit.csv"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        assert_int_equal(access(p, R_OK), 0);
    }
    assert_true(file_has(in_dir("csv/figures.csv"), "efficiency,efficiency,0.7962962963"));

    /* Usage errors and bad input. */
    const char *a5[] = {"report", trace, "--format", "csv", NULL};
    assert_int_equal(run_cmd(&cmd_report, 4, a5), EXIT_USAGE);
    const char *a6[] = {"report", in_dir("missing.avro"), NULL};
    assert_int_equal(run_cmd(&cmd_report, 2, a6), EXIT_BAD_INPUT);
    const char *a7[] = {"report", trace, "--plots", "gif", "-o", md, NULL};
    assert_int_equal(run_cmd(&cmd_report, 6, a7), EXIT_USAGE);
}

/* Without gnuplot: a clear note, and the data behind every chart still written. */
static void test_report_without_gnuplot(void **state)
{
    (void)state;
    const char *trace = in_dir("hand.avro");
    write_hand(trace, 1.0);
    setenv("JACKDAW_GNUPLOT", in_dir("no-such-gnuplot"), 1);
    const char *html = in_dir("nognuplot.html");
    const char *a1[] = {"report", trace, "-o", html, "--plots", "png", NULL};
    int rc = run_cmd(&cmd_report, 6, a1);
    unsetenv("JACKDAW_GNUPLOT");
    assert_int_equal(rc, 0);
    assert_true(file_has(html, "gnuplot is not available"));
    assert_int_equal(access(in_dir("nognuplot-utilization.csv"), R_OK), 0);
    assert_int_equal(access(in_dir("nognuplot-lost.csv"), R_OK), 0);
    assert_int_equal(access(in_dir("nognuplot-steal_matrix.csv"), R_OK), 0);
    assert_int_not_equal(access(in_dir("nognuplot-utilization.png"), F_OK), 0);
    assert_true(file_has(in_dir("nognuplot-lost.csv"), "held in LReadyQ by locality,1\n"));
    if (have_python())
        assert_int_equal(html_check(html, report_sections), 0);
}

static void test_compare(void **state)
{
    (void)state;
    const char *a = in_dir("hand.avro"), *b = in_dir("slow.avro");
    write_hand(a, 1.0);
    write_hand(b, 1.25);
    const char *html = in_dir("cmp.html");
    const char *a1[] = {"compare", a, b, "-o", html, NULL};
    assert_int_equal(run_cmd(&cmd_compare, 5, a1), 0);
    if (have_python())
        assert_int_equal(html_check(html, compare_sections), 0);
    const char *json = in_dir("cmp.json");
    const char *a2[] = {"compare", a, b, "-o", json, NULL};
    assert_int_equal(run_cmd(&cmd_compare, 5, a2), 0);
    json_error_t err;
    json_t *j = json_load_file(json, 0, &err);
    assert_non_null(j);
    json_t *mk = json_object_get(json_object_get(j, "figures"), "makespan_s");
    assert_float_equal(json_real_value(json_array_get(mk, 0)), 9, EPS);
    assert_float_equal(json_real_value(json_array_get(mk, 1)), 11.25, 1e-6);
    assert_int_equal(json_array_size(json_object_get(j, "runs")), 2);
    json_decref(j);
    const char *a3[] = {"compare", a, in_dir("missing.avro"), NULL};
    assert_int_equal(run_cmd(&cmd_compare, 3, a3), EXIT_BAD_INPUT);

    /* Columns and bars are named for the runs (their placement/policy, or --label), and
     * the idle causes one by one are not ranked. */
    const char *md = in_dir("cmp.md");
    const char *a4[] = {"compare", a, b, "-o", md, NULL};
    assert_int_equal(run_cmd(&cmd_compare, 5, a4), 0);
    assert_true(file_has(md, "| figure | 1: flds/random1 | 2: flds/random1 | best |"));
    assert_true(file_has(md, "| makespan | 9.000 s | 11.250 s | 1: flds/random1 |"));
    /* Less tail in the shorter run is not ranked a merit (it ended 0.25 s sooner). */
    assert_true(file_has(md, "| lost: tail | 1.000 s | 1.250 s |  |"));
    const char *a5[] = {"compare", a, b, "-o", md, "--label", "fast,slow", NULL};
    assert_int_equal(run_cmd(&cmd_compare, 7, a5), 0);
    assert_true(file_has(md, "| figure | 1: fast | 2: slow | best |"));
    assert_true(file_has(md, "| makespan | 9.000 s | 11.250 s | 1: fast |"));
    const char *a6[] = {"compare", a, b, "--label", "only-one", NULL};
    assert_int_equal(run_cmd(&cmd_compare, 5, a6), EXIT_USAGE);
}

static void test_diff_rules(void **state)
{
    (void)state;
    struct report_analysis a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.figures[RF_EFFICIENCY] = 0.80;
    a.figures[RF_MAKESPAN_S] = 10;
    b = a;
    struct report_diff d;
    report_diff(&a, &b, 5, &d);
    assert_false(d.regressed);
    b.figures[RF_EFFICIENCY] = 0.80 * 0.96; /* 4 % worse: within 5 % */
    b.figures[RF_MAKESPAN_S] = 10.4;
    report_diff(&a, &b, 5, &d);
    assert_false(d.regressed);
    b.figures[RF_EFFICIENCY] = 0.80 * 0.94; /* 6 % worse */
    report_diff(&a, &b, 5, &d);
    assert_true(d.regressed);
    assert_int_equal(d.items[0].figure, RF_EFFICIENCY);
    assert_true(d.items[0].regressed);
    assert_false(d.items[1].regressed);
    b.figures[RF_EFFICIENCY] = 0.9; /* better is never a regression */
    b.figures[RF_MAKESPAN_S] = 10.6;
    report_diff(&a, &b, 5, &d);
    assert_true(d.regressed);
    assert_true(d.items[1].regressed);
    report_diff(&a, &b, 10, &d);
    assert_false(d.regressed);
    b.figures[RF_MAKESPAN_S] = NAN; /* B lost the figure: an empty run */
    report_diff(&a, &b, 5, &d);
    assert_true(d.regressed);
}

static void test_diff_command(void **state)
{
    (void)state;
    const char *a = in_dir("hand.avro"), *b = in_dir("slow.avro");
    write_hand(a, 1.0);
    write_hand(b, 1.25); /* every task takes 25 % longer */
    const char *same[] = {"diff", a, a, NULL};
    assert_int_equal(run_cmd(&cmd_diff, 3, same), 0);
    const char *worse[] = {"diff", a, b, NULL};
    assert_int_equal(run_cmd(&cmd_diff, 3, worse), 1);
    const char *better[] = {"diff", b, a, NULL};
    assert_int_equal(run_cmd(&cmd_diff, 3, better), 0);
    const char *loose[] = {"diff", a, b, "--tolerance", "30", NULL};
    assert_int_equal(run_cmd(&cmd_diff, 5, loose), 0);
    const char *bad[] = {"diff", a, in_dir("missing.avro"), NULL};
    assert_int_equal(run_cmd(&cmd_diff, 3, bad), EXIT_BAD_INPUT);
    const char *neg[] = {"diff", a, b, "--tolerance", "-1", NULL};
    assert_int_equal(run_cmd(&cmd_diff, 5, neg), EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_summary),
        cmocka_unit_test(test_hand_data_and_steals),
        cmocka_unit_test(test_hand_lost_time),
        cmocka_unit_test(test_failure_recovery),
        cmocka_unit_test(test_retried_run),
        cmocka_unit_test(test_declared_work),
        cmocka_unit_test(test_time_table_says_it_averages),
        cmocka_unit_test(test_hand_series),
        cmocka_unit_test(test_hand_steal_audit),
        cmocka_unit_test(test_harmful_steal),
        cmocka_unit_test(test_long_name_cut_in_report),
        cmocka_unit_test(test_lost_time_sums_on_a_generated_run),
        cmocka_unit_test(test_bad_and_cut_input),
        cmocka_unit_test(test_random_events),
        cmocka_unit_test(test_report_formats),
        cmocka_unit_test(test_report_without_gnuplot),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_diff_rules),
        cmocka_unit_test(test_diff_command),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
