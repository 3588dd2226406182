/*
 * trace verify (trace/offline/verify behind `jackdaw trace verify`): a complete synthetic
 * run passes; each way of breaking it is reported under its own kind and nothing else; a
 * cut file fails the command.  Runs come from trace_fixture.h, are written as trace
 * files with the block encoder and read back through trace/format/reader, as the command
 * does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <fcntl.h>
#include <inttypes.h>

#include "tools/cmd/cmd.h"
#include "trace/offline/verify.h"
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

/* ---- --workload: no task starts before its parents end -------------------------------- */

/* The fixture's workload (ids w-0 … w-499), task i a child of task i - 5 (the fixture
 * starts task i + 5 after task i ended) and, when `shortcut` is given, task `shortcut`
 * also a child of task shortcut - 1, which ends after it starts. */
static void write_workload(const char *file, size_t tasks, size_t shortcut)
{
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    for (size_t i = 0; i < tasks; i++) {
        fprintf(fp, "{\"id\":\"w-%zu\"", i);
        if (i >= 5 && i == shortcut)
            fprintf(fp, ",\"parents\":[\"w-%zu\",\"w-%zu\"]", i - 5, i - 1);
        else if (i >= 5)
            fprintf(fp, ",\"parents\":[\"w-%zu\"]", i - 5);
        fputs("}\n", fp);
    }
    assert_int_equal(fclose(fp), 0);
}

static int run_trace_out(char **argv, int argc, char **out)
{
    fflush(stdout);
    char name[160];
    snprintf(name, sizeof name, "%s/out.txt", tmpdir);
    int saved = dup(1);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 1);
    close(fd);
    int rc = cmd_trace.main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    FILE *fp = fopen(name, "r");
    assert_non_null(fp);
    size_t cap = 1 << 16;
    *out = calloc(1, cap);
    assert_non_null(*out);
    size_t n = fread(*out, 1, cap - 1, fp);
    (*out)[n] = '\0';
    fclose(fp);
    return rc;
}

static void test_workload_order(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_number(&f);
    write_run(&f);
    fixture_free(&f);
    char wl[160];
    snprintf(wl, sizeof wl, "%s/w.jsonl", tmpdir);
    char *out = NULL;
    char *argv[] = { (char *)"trace", (char *)"verify", path, (char *)"--workload", wl, NULL };

    /* Every edge respected: ok, and says it checked them. */
    write_workload(wl, TASKS, 0);
    int rc = run_trace_out(argv, 5, &out);
    if (rc)
        print_error("%s", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "dependencies: job 1, 495 edges checked"));
    free(out);

    /* w-7 listed as a child of w-6, which ended after w-7 started. */
    write_workload(wl, TASKS, 7);
    rc = run_trace_out(argv, 5, &out);
    assert_int_equal(rc, EXIT_BAD_INPUT);
    if (!strstr(out, "task 'w-7' (1:7) started at 0.000010750 s, before its parent 'w-6' "
                     "(1:6) ended at 0.000011110 s"))
        fail_msg("%s", out);
    free(out);

    /* A workload of another size ran in no job of the trace. */
    write_workload(wl, TASKS - 1, 0);
    rc = run_trace_out(argv, 5, &out);
    assert_int_equal(rc, EXIT_BAD_INPUT);
    if (!strstr(out, "no job of the trace ran"))
        fail_msg("%s", out);
    free(out);
}

/* ---- bit flips ------------------------------------------------------------------------ */

static uint8_t *read_image(const char *file, size_t *len)
{
    FILE *fp = fopen(file, "rb");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long n = ftell(fp);
    assert_true(n > 0);
    rewind(fp);
    uint8_t *data = malloc((size_t)n);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return data;
}

static void write_image(const char *file, const uint8_t *data, size_t len)
{
    FILE *fp = fopen(file, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

/* A zigzag varint at p; its length in *n. */
static int64_t varint_at(const uint8_t *p, size_t *n)
{
    uint64_t z = 0;
    size_t i = 0;
    do {
        z |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    } while (p[i++] & 0x80);
    *n = i;
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

/* The payload (deflate bytes) of each block of a trace image: [start, end) pairs. */
static size_t payloads(const uint8_t *data, size_t len, size_t (*out)[2], size_t max)
{
    struct trace_file_info fi;
    assert_int_equal(trace_scan_header(data, len, &fi), 0);
    size_t pos = fi.header_end, n = 0;
    while (pos < len) {
        size_t k;
        varint_at(data + pos, &k);
        pos += k;
        int64_t size = varint_at(data + pos, &k);
        pos += k;
        assert_true(n < max);
        out[n][0] = pos;
        out[n][1] = pos + (size_t)size;
        n++;
        pos += (size_t)size + TRACE_SYNC_SIZE;
    }
    return n;
}

/* `jackdaw trace verify FILE` with its output (both streams) thrown away. */
static int verify_silently(const char *file)
{
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int null = open("/dev/null", O_WRONLY);
    assert_true(saved_out >= 0 && saved_err >= 0 && null >= 0);
    dup2(null, 1);
    dup2(null, 2);
    close(null);
    char *argv[] = { (char *)"trace", (char *)"verify", (char *)file, NULL };
    int rc = cmd_trace.main(3, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    return rc;
}

/*
 * 150 single-bit flips at seeded random places inside the blocks' compressed payloads
 * of a complete run: `trace verify` must refuse every flipped file, and pass the
 * original.  Without block checksums some flips decode to other, plausible events.
 */
static void test_bit_flips_are_caught(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_number(&f);
    write_run(&f);
    fixture_free(&f);
    size_t len;
    uint8_t *image = read_image(path, &len);
    static size_t ranges[4096][2];
    size_t nblocks = payloads(image, len, ranges, 4096);
    size_t total = 0;
    for (size_t b = 0; b < nblocks; b++)
        total += ranges[b][1] - ranges[b][0];
    assert_true(nblocks > 10 && total > 1000);
    assert_int_equal(verify_silently(path), 0);

    char flipped[160];
    snprintf(flipped, sizeof flipped, "%s/flipped.avro", tmpdir);
    uint64_t x = 0x9e3779b97f4a7c15ULL; /* splitmix64 state: the same bits every run */
    int missed = 0;
    for (int i = 0; i < 150; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        size_t bit = (size_t)(z % (total * 8));
        size_t at = bit / 8, b = 0;
        while (at >= ranges[b][1] - ranges[b][0]) {
            at -= ranges[b][1] - ranges[b][0];
            b++;
        }
        at += ranges[b][0];
        image[at] ^= (uint8_t)(1u << (bit % 8));
        write_image(flipped, image, len);
        image[at] ^= (uint8_t)(1u << (bit % 8));
        int rc = verify_silently(flipped);
        if (rc != EXIT_BAD_INPUT) {
            print_error("flip of bit %zu of byte %zu (block %zu) verifies: exit %d\n",
                        bit % 8, at, b, rc);
            missed++;
        }
    }
    free(image);
    assert_int_equal(missed, 0);
}

/* ---- sample traces (tests/traces, read from the repository root) ---------------------- */

/* Their expected outputs are checked by test_trace_corpus. */
#define SAMPLES "tests/traces/"

/* Whether the checks `trace verify` runs before decoding (header checksum, framing, block
 * checksums) refuse the file image. */
static bool image_refused(const uint8_t *data, size_t len)
{
    struct trace_file_info fi;
    if (trace_scan_header(data, len, &fi) < 0 || fi.checksums != TRACE_CHECKSUMS_CRC32)
        return true;
    struct trace_scan sc;
    assert_int_equal(trace_scan_blocks(data + fi.header_end, len - fi.header_end, fi.sync, &sc),
                     0);
    if (sc.tail != TRACE_TAIL_CLEAN)
        return true;
    size_t pos = 0;
    struct trace_block_view v;
    char why[96];
    int rc;
    while ((rc = trace_block_next(data + fi.header_end, sc.valid_end, &pos, &v)) == 1)
        if (trace_block_verify(&v, why, sizeof why) != TRACE_BLOCK_OK)
            return true;
    assert_int_equal(rc, 0);
    return false;
}

/* Every single-bit flip of a real trace, header and blocks alike, is refused before a
 * record is decoded; the file itself is not. */
static void test_every_bit_flip_of_a_sample(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = read_image(SAMPLES "v1-checksums.avro", &len);
    assert_false(image_refused(data, len));
    size_t missed = 0;
    for (size_t bit = 0; bit < len * 8; bit++) {
        data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        if (!image_refused(data, len)) {
            if (missed++ < 5)
                print_error("flip of bit %zu of byte %zu goes unseen\n", bit % 8, bit / 8);
        }
        data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    free(data);
    assert_int_equal(missed, 0);
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
        cmocka_unit_test(test_bit_flips_are_caught),
        cmocka_unit_test(test_workload_order),
        cmocka_unit_test(test_every_bit_flip_of_a_sample),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
