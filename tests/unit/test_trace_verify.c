/*
 * trace verify (trace/verify behind `jackdaw trace verify`): a complete synthetic run
 * passes; each way of breaking it is reported under its own kind and nothing else; a
 * cut file fails the command.  Runs come from trace_fixture.h, are written as trace
 * files with the block encoder and read back through trace/reader, as the command does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <fcntl.h>
#include <inttypes.h>

#include "tools/cmd.h"
#include "trace/verify.h"
#include "trace_fixture.h"

#define NODES 4
#define TASKS 500

static char path[128];

static int setup_dir(void **state)
{
    (void)state;
    if (tmpdir_make("test_trace_verify") < 0)
        return -1;
    snprintf(path, sizeof path, "%s/run.avro", tmpdir);
    return 0;
}

/* Verifies the file at `path` as the command does; the caller destroys *v. */
static const struct trace_verify_report *verify_path(struct trace_verify **v, size_t limit)
{
    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, path, &cause), 0);
    trace_verify_create(v, limit);
    struct trace_event ev;
    int rc;
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0) {
        const char *const *names;
        size_t n;
        assert_int_equal(trace_reader_names(r, &names, &n), 0);
        ev.names = names;
        ev.nnames = (uint32_t)n;
        assert_int_equal(trace_verify_add(*v, &ev), 0);
    }
    assert_int_equal(rc, TRACE_READER_END);
    trace_reader_destroy(r);
    return trace_verify_finish(*v);
}

static void write_run(struct fixture *f)
{
    fixture_write(f, path, 40, NULL, NULL, 0);
}

/* Fails unless the report holds exactly `count` problems, all of `kind`, and the first
 * listed one contains `words`. */
static void assert_only(const struct trace_verify_report *rep, enum trace_problem_kind kind,
                        uint64_t count, const char *words)
{
    for (int k = 0; k < TRACE_PROBLEM_KIND_COUNT; k++)
        if (rep->by_kind[k] != (k == (int)kind ? count : 0)) {
            for (size_t i = 0; i < rep->nlisted; i++)
                print_error("  %s: %s\n", trace_problem_kind_name(rep->listed[i].kind),
                            rep->listed[i].text);
            fail_msg("%s: %" PRIu64 " problems, expected %" PRIu64,
                     trace_problem_kind_name((enum trace_problem_kind)k), rep->by_kind[k],
                     k == (int)kind ? count : 0);
        }
    assert_int_equal(rep->problems, count);
    if (count && words) {
        assert_true(rep->nlisted > 0);
        assert_int_equal(rep->listed[0].kind, kind);
        if (!strstr(rep->listed[0].text, words))
            fail_msg("'%s' lacks '%s'", rep->listed[0].text, words);
    }
}

static void test_complete_run_passes(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_number(&f);
    write_run(&f);
    struct trace_verify *v;
    const struct trace_verify_report *rep = verify_path(&v, 0);
    assert_only(rep, TRACE_PROBLEM_FILE, 0, NULL);
    assert_int_equal(rep->events, f.n);
    assert_int_equal(rep->tasks, TASKS);
    assert_int_equal(rep->tasks_done, TASKS);
    assert_int_equal(rep->jobs, 1);
    assert_int_equal(rep->nodes, NODES + 1); /* the collector's -1 too */
    assert_int_equal(rep->nlisted, 0);
    trace_verify_destroy(v);
    fixture_free(&f);
}

static void test_missing_end(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_remove(&f, fixture_find(&f, TRACE_TASK_END, fixture_key(7)));
    fixture_number(&f); /* numbered after: the removal leaves no gap */
    write_run(&f);
    struct trace_verify *v;
    assert_only(verify_path(&v, 0), TRACE_PROBLEM_MISSING_END, 1, "task 1:7 has no TASK_END");
    trace_verify_destroy(v);
    fixture_free(&f);
}

static void test_start_before_submit(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    int64_t submit = f.e[fixture_find(&f, TRACE_TASK_SUBMIT, fixture_key(9))].ev.time_ns;
    f.e[fixture_find(&f, TRACE_TASK_START, fixture_key(9))].ev.time_ns = submit - 5;
    fixture_number(&f);
    write_run(&f);
    struct trace_verify *v;
    assert_only(verify_path(&v, 0), TRACE_PROBLEM_ORDER, 1, "task 1:9 started at");
    trace_verify_destroy(v);
    fixture_free(&f);
}

static void test_end_before_start(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    int64_t start = f.e[fixture_find(&f, TRACE_TASK_START, fixture_key(13))].ev.time_ns;
    f.e[fixture_find(&f, TRACE_TASK_END, fixture_key(13))].ev.time_ns = start - 1;
    fixture_number(&f);
    write_run(&f);
    struct trace_verify *v;
    assert_only(verify_path(&v, 0), TRACE_PROBLEM_ORDER, 1, "before its start");
    trace_verify_destroy(v);
    fixture_free(&f);
}

static void test_two_done_ends(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    struct trace_event end = f.e[fixture_find(&f, TRACE_TASK_END, fixture_key(11))].ev;
    struct trace_event *again = fixture_push(&f, TRACE_TASK_END, end.node, end.time_ns + 7,
                                             end.task);
    again->status = TASK_DONE;
    fixture_number(&f);
    write_run(&f);
    struct trace_verify *v;
    assert_only(verify_path(&v, 0), TRACE_PROBLEM_EXTRA_END, 1,
                "task 1:11 has 2 TASK_END events (2 of them DONE)");
    trace_verify_destroy(v);
    fixture_free(&f);
}

/* A cancelled task needs no START; a failed one does. */
static void test_cancelled_without_start(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_remove(&f, fixture_find(&f, TRACE_TASK_START, fixture_key(12)));
    f.e[fixture_find(&f, TRACE_TASK_END, fixture_key(12))].ev.status = TASK_CANCELLED;
    fixture_number(&f);
    write_run(&f);
    struct trace_verify *v;
    const struct trace_verify_report *rep = verify_path(&v, 0);
    assert_only(rep, TRACE_PROBLEM_FILE, 0, NULL);
    assert_int_equal(rep->tasks_cancelled, 1);
    assert_int_equal(rep->tasks_done, TASKS - 1);
    trace_verify_destroy(v);
    fixture_free(&f);

    fixture_run(&f, NODES, TASKS);
    fixture_remove(&f, fixture_find(&f, TRACE_TASK_START, fixture_key(14)));
    f.e[fixture_find(&f, TRACE_TASK_END, fixture_key(14))].ev.status = TASK_FAILED;
    fixture_number(&f);
    write_run(&f);
    assert_only(verify_path(&v, 0), TRACE_PROBLEM_MISSING_START, 1,
                "task 1:14 ended failed");
    trace_verify_destroy(v);
    fixture_free(&f);
}

/* Gaps are made by renumbering, so no event is lost and only the numbers are wrong. */
static void test_seq_gaps(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_number(&f);
    /* Node 3 skips 50 numbers from its 100th event on; node 1 skips one at its 10th. */
    int64_t at3 = -1, at1 = -1;
    for (size_t i = 0; i < f.n; i++) {
        struct trace_event *ev = &f.e[i].ev;
        if (ev->node == 3 && ev->seq >= 100) {
            at3 = at3 < 0 ? ev->seq : at3;
            ev->seq += 50;
        }
        if (ev->node == 1 && ev->seq >= 10) {
            at1 = at1 < 0 ? ev->seq : at1;
            ev->seq += 1;
        }
    }
    assert_int_equal(at3, 100);
    assert_int_equal(at1, 10);
    write_run(&f);
    struct trace_verify *v;
    const struct trace_verify_report *rep = verify_path(&v, 0);
    assert_only(rep, TRACE_PROBLEM_SEQ_GAP, 2, "node 1: event 10 missing");
    assert_int_equal(rep->missing_events, 51);
    assert_string_equal(rep->listed[1].text, "node 3: events 100..149 missing (50 events)");
    trace_verify_destroy(v);
    fixture_free(&f);
}

static void test_duplicate(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_number(&f);
    /* A READY of node 2 recorded twice: the copy goes right after it, as a resent block
     * would put it. */
    size_t i = fixture_find(&f, TRACE_TASK_READY, fixture_key(6));
    assert_int_equal(f.e[i].ev.node, 2);
    fixture_push(&f, TRACE_TASK_READY, 0, 0, 0); /* room for the copy */
    memmove(&f.e[i + 1], &f.e[i], (f.n - 1 - i) * sizeof *f.e);
    char want[64];
    snprintf(want, sizeof want, "node 2: event %" PRId64 " (TASK_READY) is recorded more",
             f.e[i].ev.seq);
    write_run(&f);
    struct trace_verify *v;
    const struct trace_verify_report *rep = verify_path(&v, 0);
    assert_only(rep, TRACE_PROBLEM_SEQ_DUPLICATE, 1, want);
    assert_int_equal(rep->duplicate_events, 1);
    trace_verify_destroy(v);
    fixture_free(&f);
}

static void test_job_with_fewer_tasks(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    /* Task 33 vanishes entirely: nothing about it is inconsistent, but the job that
     * announced 500 tasks had 499. */
    for (size_t i = f.n; i-- > 0;)
        if (f.e[i].ev.task == fixture_key(33) && f.e[i].ev.kind <= TRACE_TASK_END)
            fixture_remove(&f, i);
    fixture_number(&f);
    write_run(&f);
    struct trace_verify *v;
    assert_only(verify_path(&v, 0), TRACE_PROBLEM_JOB_COUNT, 1,
                "job 1 (workload 'fixture-workload'): JOB_SUBMIT announces 500 tasks, 499 "
                "were submitted");
    trace_verify_destroy(v);
    fixture_free(&f);
}

/* Every task unended: counted in full, listed up to the limit. */
static void test_listing_is_bounded(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    for (size_t i = f.n; i-- > 0;)
        if (f.e[i].ev.kind == TRACE_TASK_END)
            fixture_remove(&f, i);
    fixture_number(&f);
    write_run(&f);
    struct trace_verify *v;
    const struct trace_verify_report *rep = verify_path(&v, 7);
    assert_only(rep, TRACE_PROBLEM_MISSING_END, TASKS, "task 1:0 has no TASK_END");
    assert_int_equal(rep->nlisted, 7);
    trace_verify_destroy(v);
    fixture_free(&f);
}

/* Runs `jackdaw trace ARGS…` in this process with its stdout sent to /dev/null. */
static int run_trace(const char *a1, const char *a2, const char *a3)
{
    char *argv[] = { (char *)"trace", (char *)a1, (char *)a2, (char *)a3, NULL };
    return fixture_trace_quiet(argv, a3 ? 4 : a2 ? 3 : 2);
}

static void test_command_exit_codes(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_number(&f);
    write_run(&f);
    assert_int_equal(run_trace("verify", path, NULL), 0);
    assert_int_equal(run_trace("verify", path, "--json"), 0);
    /* The same run cut in the middle: every whole block is consistent so far, but the
     * file itself says events were lost. */
    fixture_write(&f, path, 40, NULL, NULL, 20000);
    struct trace_verify *v;
    const struct trace_verify_report *rep = verify_path(&v, 0);
    assert_true(rep->events < f.n);
    trace_verify_destroy(v);
    assert_int_equal(run_trace("verify", path, NULL), EXIT_BAD_INPUT);
    /* A gap fails it too. */
    f.e[f.n - 1].ev.seq += 3;
    write_run(&f);
    assert_int_equal(run_trace("verify", path, "--json"), EXIT_BAD_INPUT);
    assert_int_equal(run_trace("verify", NULL, NULL), EXIT_USAGE);
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_complete_run_passes),
        cmocka_unit_test(test_missing_end),
        cmocka_unit_test(test_start_before_submit),
        cmocka_unit_test(test_end_before_start),
        cmocka_unit_test(test_two_done_ends),
        cmocka_unit_test(test_cancelled_without_start),
        cmocka_unit_test(test_seq_gaps),
        cmocka_unit_test(test_duplicate),
        cmocka_unit_test(test_job_with_fewer_tasks),
        cmocka_unit_test(test_listing_is_bounded),
        cmocka_unit_test(test_command_exit_codes),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
