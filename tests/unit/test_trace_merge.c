/*
 * trace merge (trace/offline/merge behind `jackdaw trace merge`): a run split the way a
 * collector restart and a spooling node split it — two collector files that overlap and
 * a spool file of one node that overlaps both — merges back to every event exactly once,
 * in time order, with every field and the names intact, whether it fits in memory or
 * goes through spilled runs; a cut input gives its whole blocks; an unreadable input
 * fails without leaving anything behind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "tools/cmd/cmd.h"
#include "trace/offline/merge.h"
#include "trace/offline/verify.h"
#include "trace_fixture.h"

#define NODES 4
#define TASKS 300
#define SPOOL_NODE 2
/* Node 2 spools from T0 to T2; the collector restarts at T1 (its second file starts
 * a little before, which is the overlap a resend after reconnecting gives). */
#define T0 20000
#define T1 25000
#define T2 33000
#define OVERLAP 1500
/* A node's spool file names its node in a header of its own. */
#define SPOOL_HEADER "{\"format\":1,\"run_id\":\"fixture\",\"spool\":{\"node\":2}}"


static int setup_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_trace_merge");
}

static void in_dir(char *out, const char *name)
{
    snprintf(out, 128, "%s/%s", tmpdir, name);
}

static bool first_collector(const struct trace_event *ev, void *arg)
{
    (void)arg;
    return ev->time_ns < T1 && !(ev->node == SPOOL_NODE && ev->time_ns >= T0);
}

static bool second_collector(const struct trace_event *ev, void *arg)
{
    (void)arg;
    return ev->time_ns >= T1 - OVERLAP && !(ev->node == SPOOL_NODE && ev->time_ns < T2);
}

static bool spool(const struct trace_event *ev, void *arg)
{
    (void)arg;
    return ev->node == SPOOL_NODE && ev->time_ns >= T0 - OVERLAP && ev->time_ns < T2 + OVERLAP;
}

/* The run, numbered, with two consecutive events of node 1 stamped out of order (seq k
 * later than seq k + 1, both before anything else), as a node's clock reads can be:
 * time order then puts the higher seq first, right after it in the merged file, and
 * the encoder cannot delta-code that. */
static void make_run(struct fixture *f)
{
    fixture_run(f, NODES, TASKS);
    fixture_number(f);
    for (size_t i = 0; i + 1 < f->n; i++) {
        struct trace_event *a = &f->e[i].ev, *b = &f->e[i + 1].ev;
        if (a->node == 1 && b->node == 1 && a->kind == TRACE_TASK_READY &&
            b->kind == TRACE_TASK_QUEUED_LOCAL) {
            a->time_ns = 5;
            b->time_ns = 4;
            return;
        }
    }
    fail_msg("no READY, QUEUED_LOCAL pair on node 1");
}

/* Writes the three inputs; returns the events they hold together. */
static size_t write_inputs(const struct fixture *f, char paths[3][128])
{
    in_dir(paths[0], "collector-1.avro");
    in_dir(paths[1], "collector-2.avro");
    in_dir(paths[2], "node-2.spool");
    size_t n = fixture_write(f, paths[0], 37, first_collector, NULL, 0);
    n += fixture_write(f, paths[1], 53, second_collector, NULL, 0);
    n += fixture_write_with(f, paths[2], SPOOL_HEADER, 29, spool, NULL, 0);
    return n;
}

/* The original event with this (node, seq), or fails. */
static const struct trace_event *original(const struct fixture *f, int32_t node, int64_t seq)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->e[i].ev.node == node && f->e[i].ev.seq == seq)
            return &f->e[i].ev;
    fail_msg("node %d seq %lld was never generated", (int)node, (long long)seq);
    return NULL;
}

/* Reads the merged file and checks it against the run: each event once, in (time, node,
 * seq) order, fields and names equal.  Returns the events in file order (caller frees)
 * so two merges can be compared. */
static struct trace_event *check_merged(const struct fixture *f, const char *out, size_t *count)
{
    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, out, &cause), 0);
    assert_string_equal(trace_reader_info(r)->header_json, FIXTURE_HEADER);
    assert_int_equal(trace_reader_info(r)->tail, TRACE_TAIL_CLEAN);
    struct trace_event *all = calloc(f->n + 1, sizeof *all);
    uint8_t *seen = calloc(f->n, 1); /* by index in f->e */
    assert_true(all && seen);
    size_t n = 0, names_events = 0;
    struct trace_event ev;
    while (trace_reader_next(r, &ev, &cause) == 0) {
        assert_true(n < f->n);
        if (n) {
            const struct trace_event *p = &all[n - 1];
            bool ordered = p->time_ns < ev.time_ns ||
                           (p->time_ns == ev.time_ns &&
                            (p->node < ev.node || (p->node == ev.node && p->seq < ev.seq)));
            if (!ordered)
                fail_msg("event %zu (node %d seq %lld) is out of order", n, (int)ev.node,
                         (long long)ev.seq);
        }
        const struct trace_event *o = original(f, ev.node, ev.seq);
        /* ev is the first member of struct fixture_event. */
        size_t idx = (size_t)((const char *)o - (const char *)f->e) / sizeof *f->e;
        assert_int_equal(seen[idx], 0);
        seen[idx] = 1;
        assert_int_equal(ev.kind, o->kind);
        assert_int_equal(ev.time_ns, o->time_ns);
        assert_int_equal(ev.task, o->task);
        assert_int_equal(ev.peer, o->peer);
        assert_int_equal(ev.status, o->status);
        assert_int_equal(ev.count, o->count);
        assert_int_equal(ev.bytes, o->bytes);
        assert_int_equal(ev.duration_ns, o->duration_ns);
        assert_string_equal(ev.text, o->text);
        assert_memory_equal(&ev.sample, &o->sample, sizeof ev.sample);
        const char *const *names;
        size_t nn;
        assert_int_equal(trace_reader_names(r, &names, &nn), 0);
        assert_int_equal(nn, o->nnames);
        for (size_t i = 0; i < nn; i++)
            assert_string_equal(names[i], o->names[i]);
        names_events += nn > 0;
        all[n++] = ev;
    }
    assert_null(cause);
    assert_int_equal(n, f->n);
    assert_int_equal(names_events, 1 + (TASKS + FIXTURE_NAMES_PER_EVENT - 1) /
                                           FIXTURE_NAMES_PER_EVENT);
    trace_reader_destroy(r);
    free(seen);
    *count = n;
    return all;
}

/* No temporary file (output or run) may be left in the directory. */
static void assert_no_leftovers(void)
{
    DIR *d = opendir(tmpdir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp.") || strstr(e->d_name, ".run."))
            fail_msg("left behind: %s", e->d_name);
    closedir(d);
}

static void test_overlapping_inputs_merge_once(void **state)
{
    (void)state;
    struct fixture f;
    make_run(&f);
    char paths[3][128], out[128];
    size_t total = write_inputs(&f, paths);
    assert_true(total > f.n + 100); /* the overlaps are real */
    in_dir(out, "merged.avro");
    const char *inputs[] = { paths[0], paths[1], paths[2] };
    struct trace_merge_result res;
    char *cause = NULL;
    mode_t mask = umask(022);
    assert_int_equal(trace_merge(out, inputs, 3, NULL, &res, &cause), 0);
    umask(mask);
    assert_null(cause);
    /* The merged trace is its owner's only, whatever the umask. */
    struct stat sb;
    assert_int_equal(stat(out, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(res.events_in, total);
    assert_int_equal(res.events_out, f.n);
    assert_int_equal(res.duplicates, total - f.n);
    assert_int_equal(res.runs, 0);
    assert_ptr_equal(res.header_from, paths[0]);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(res.inputs[i].tail, TRACE_TAIL_CLEAN);
    trace_merge_result_fini(&res);
    size_t n;
    struct trace_event *memory = check_merged(&f, out, &n);

    /* The merged trace is complete: verify agrees. */
    struct trace_reader *r;
    assert_int_equal(trace_reader_open(&r, out, &cause), 0);
    struct trace_verify *v;
    trace_verify_create(&v, 0);
    struct trace_event ev;
    while (trace_reader_next(r, &ev, &cause) == 0)
        trace_verify_add(v, &ev);
    const struct trace_verify_report *rep = trace_verify_finish(v);
    if (rep->problems)
        fail_msg("merged trace: %s", rep->listed[0].text);
    assert_int_equal(rep->tasks_done, TASKS);
    trace_verify_destroy(v);
    trace_reader_destroy(r);

    /* The same through spilled runs of 97 events: the same file content. */
    struct trace_merge_options opt = { .run_events = 97 };
    assert_int_equal(trace_merge(out, inputs, 3, &opt, &res, &cause), 0);
    assert_true(res.runs >= total / 97);
    assert_int_equal(res.events_out, f.n);
    assert_int_equal(res.duplicates, total - f.n);
    trace_merge_result_fini(&res);
    size_t n2;
    struct trace_event *spilled = check_merged(&f, out, &n2);
    assert_int_equal(n2, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(spilled[i].node, memory[i].node);
        assert_int_equal(spilled[i].seq, memory[i].seq);
    }
    assert_no_leftovers();
    free(memory);
    free(spilled);
    fixture_free(&f);
}

/* Merging a merged file with one of its inputs changes nothing; the output may be one of
 * the inputs.  The header is the run's even when a spool file comes first. */
static void test_idempotent_and_in_place(void **state)
{
    (void)state;
    struct fixture f;
    make_run(&f);
    char paths[3][128], out[128];
    write_inputs(&f, paths);
    in_dir(out, "merged.avro");
    const char *inputs[] = { paths[0], paths[1], paths[2] };
    struct trace_merge_result res;
    char *cause = NULL;
    assert_int_equal(trace_merge(out, inputs, 3, NULL, &res, &cause), 0);
    trace_merge_result_fini(&res);
    const char *again[] = { paths[2], out };
    assert_int_equal(trace_merge(out, again, 2, NULL, &res, &cause), 0);
    assert_int_equal(res.events_out, f.n);
    /* The spool file comes first, but its header is the node's: the run's is taken. */
    assert_ptr_equal(res.header_from, out);
    assert_true(res.inputs[0].has_header);
    trace_merge_result_fini(&res);
    size_t n;
    free(check_merged(&f, out, &n));
    assert_no_leftovers();
    fixture_free(&f);
}

static void test_cut_input_gives_whole_blocks(void **state)
{
    (void)state;
    struct fixture f;
    make_run(&f);
    char paths[3][128], out[128];
    write_inputs(&f, paths);
    /* The second collector file, cut mid-block as a crash leaves it. */
    fixture_write(&f, paths[1], 53, second_collector, NULL, 9000);
    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, paths[1], &cause), 0);
    uint64_t whole = trace_reader_info(r)->records;
    assert_int_equal(trace_reader_info(r)->tail, TRACE_TAIL_CUT);
    trace_reader_destroy(r);
    in_dir(out, "merged-cut.avro");
    const char *inputs[] = { paths[0], paths[1], paths[2] };
    struct trace_merge_result res;
    assert_int_equal(trace_merge(out, inputs, 3, NULL, &res, &cause), 0);
    assert_int_equal(res.inputs[1].tail, TRACE_TAIL_CUT);
    assert_int_equal(res.inputs[1].records, whole);
    assert_true(res.events_out < f.n);
    assert_int_equal(res.events_out + res.duplicates, res.events_in);
    trace_merge_result_fini(&res);
    fixture_free(&f);
}

/* An input with a damaged block (tests/traces: one flipped bit that still inflates to
 * the same records) gives only the blocks before it, as a corrupt framing does: merging
 * must not give the damage fresh checksums. */
static void test_damaged_input_gives_blocks_before(void **state)
{
    (void)state;
    char out[128];
    in_dir(out, "merged-damaged.avro");
    const char *inputs[] = { "tests/traces/v1-flipped-same-records.avro" };
    struct trace_merge_result res;
    char *cause = NULL;
    assert_int_equal(trace_merge(out, inputs, 1, NULL, &res, &cause), 0);
    assert_int_equal(res.inputs[0].tail, TRACE_TAIL_BAD);
    assert_int_equal(res.inputs[0].blocks, 1); /* block 1 is the damaged one */
    assert_true(res.events_out < 94);
    trace_merge_result_fini(&res);
}

static void test_bad_input_leaves_nothing(void **state)
{
    (void)state;
    struct fixture f;
    make_run(&f);
    char paths[3][128], out[128], junk[128];
    write_inputs(&f, paths);
    in_dir(junk, "notes.txt");
    FILE *fp = fopen(junk, "w");
    assert_non_null(fp);
    fputs("not a trace\n", fp);
    fclose(fp);
    in_dir(out, "never.avro");
    const char *inputs[] = { paths[0], junk, paths[2] };
    struct trace_merge_result res;
    char *cause = NULL;
    struct trace_merge_options opt = { .run_events = 50 }; /* runs exist when it fails */
    assert_int_equal(trace_merge(out, inputs, 3, &opt, &res, &cause), -EBADMSG);
    assert_non_null(cause);
    assert_non_null(strstr(cause, junk));
    assert_ptr_equal(res.bad_input, junk);
    free(cause);
    trace_merge_result_fini(&res);
    assert_int_equal(access(out, F_OK), -1);
    assert_no_leftovers();
    fixture_free(&f);
}

/* A TASK_NAMES larger than a whole output block (64 KiB raw) is written in a larger
 * block, not refused. */
static void test_event_larger_than_a_block(void **state)
{
    (void)state;
    enum { N = 4000 };
    char **ids = calloc(N, sizeof *ids);
    assert_non_null(ids);
    for (size_t i = 0; i < N; i++) {
        ids[i] = malloc(48);
        assert_non_null(ids[i]);
        snprintf(ids[i], 48, "a-rather-long-workload-identifier-%zu", i);
    }
    struct fixture_file w;
    fixture_file_init(&w, FIXTURE_HEADER);
    trace_block_destroy(w.block);
    assert_int_equal(trace_block_create(&w.block, 1u << 20), 0);
    struct trace_event ev;
    trace_event_init(&ev, TRACE_TASK_NAMES, -1);
    ev.task = fixture_key(0);
    ev.count = N;
    ev.names = (const char *const *)ids;
    ev.nnames = N;
    fixture_add(&w, &ev);
    trace_event_init(&ev, TRACE_NODE_UP, 0);
    ev.time_ns = 5;
    fixture_add(&w, &ev);
    char in[128], out[128];
    in_dir(in, "big-names.avro");
    in_dir(out, "big-merged.avro");
    fixture_file_save(&w, in, 0);
    const char *inputs[] = { in };
    struct trace_merge_result res;
    char *cause = NULL;
    assert_int_equal(trace_merge(out, inputs, 1, NULL, &res, &cause), 0);
    assert_int_equal(res.events_out, 2);
    trace_merge_result_fini(&res);
    struct trace_reader *r;
    assert_int_equal(trace_reader_open(&r, out, &cause), 0);
    assert_int_equal(trace_reader_next(r, &ev, &cause), 0);
    assert_int_equal(ev.kind, TRACE_TASK_NAMES);
    const char *const *names;
    size_t n;
    assert_int_equal(trace_reader_names(r, &names, &n), 0);
    assert_int_equal(n, N);
    assert_string_equal(names[N - 1], ids[N - 1]);
    trace_reader_destroy(r);
    for (size_t i = 0; i < N; i++)
        free(ids[i]);
    free(ids);
}

static void test_command(void **state)
{
    (void)state;
    struct fixture f;
    make_run(&f);
    char paths[3][128], out[128];
    write_inputs(&f, paths);
    in_dir(out, "cli.avro");
    char *argv[] = { "trace", "merge", "-o", out, paths[0], paths[1], paths[2], NULL };
    assert_int_equal(fixture_trace_quiet(argv, 7), 0);
    size_t n;
    free(check_merged(&f, out, &n));
    char *no_out[] = { "trace", "merge", paths[0], NULL };
    assert_int_equal(fixture_trace_quiet(no_out, 3), EXIT_USAGE);
    char missing[128];
    in_dir(missing, "missing.avro");
    char *bad[] = { "trace", "merge", "--output", out, missing, NULL };
    assert_int_equal(fixture_trace_quiet(bad, 5), EXIT_BAD_INPUT);
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlapping_inputs_merge_once),
        cmocka_unit_test(test_idempotent_and_in_place),
        cmocka_unit_test(test_cut_input_gives_whole_blocks),
        cmocka_unit_test(test_damaged_input_gives_blocks_before),
        cmocka_unit_test(test_bad_input_leaves_nothing),
        cmocka_unit_test(test_event_larger_than_a_block),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
