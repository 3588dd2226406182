/*
 * The collector's file side (trace/collector/collect_file): blocks from fake nodes, each
 * with its own encoder and sync marker, are appended without re-encoding and read back
 * whole by trace/format/reader; a crash-cut file is repaired on open and resumed where
 * each node's events stop; files that are not jackdaw traces, or are corrupt rather than
 * cut, are refused and left untouched; a write that fails half-way is cut back and
 * retried; the collector's own JOB_SUBMIT and TASK_NAMES records round-trip through
 * trace_reader_names, long name lists split over records and blocks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/log.h"
#include "trace/format/block.h"
#include "trace/collector/collect_file.h"
#include "trace/format/event.h"
#include "trace/format/reader.h"

#define HEADER_JSON "{\"format\":1,\"run_id\":\"test-cf\",\"start_ns\":1700000000000000000}"
#define START_NS 1700000000000000000LL
#define MAX_EVENTS 4096


static int setup_dir(void **state)
{
    (void)state;
    log_set_level(LOG_LEVEL_ERROR);
    return tmpdir_make("test_collect_file");
}

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* A node's trace thread in miniature: its own encoder, marker and sequence numbers. */
struct fake_node {
    int32_t id;
    uint8_t sync[TRACE_SYNC_SIZE];
    struct trace_block *enc;
    int64_t seq;
    int64_t time_ns;
};

/* One whole block as a node sends it (a malloc'd copy). */
struct sent_block {
    uint8_t *data;
    size_t len;
    int64_t first, last;
    uint32_t count;
};

static void node_init(struct fake_node *n, int32_t id)
{
    memset(n, 0, sizeof *n);
    n->id = id;
    assert_int_equal(trace_sync_new(n->sync), 0);
    assert_int_equal(trace_block_create(&n->enc, 0), 0);
    n->time_ns = 1000 * (id + 1);
}

static void node_fini(struct fake_node *n)
{
    trace_block_destroy(n->enc);
}

static struct sent_block node_block(struct fake_node *n, uint32_t count)
{
    struct sent_block b = {.first = n->seq, .count = count};
    for (uint32_t i = 0; i < count; i++) {
        struct trace_event ev;
        trace_event_init(&ev, i % 2 ? TRACE_TASK_END : TRACE_TASK_START, n->id);
        ev.seq = n->seq++;
        ev.time_ns = n->time_ns += 1500;
        ev.task = (uint64_t)1 << 32 | (uint64_t)ev.seq;
        assert_int_equal(trace_block_append(n->enc, &ev), 0);
    }
    b.last = n->seq - 1;
    const uint8_t *data;
    assert_int_equal(trace_block_finish(n->enc, n->sync, &data, &b.len), 0);
    b.data = malloc(b.len);
    assert_non_null(b.data);
    memcpy(b.data, data, b.len);
    return b;
}

static void append(struct collect_file *f, const struct fake_node *n, struct sent_block *b)
{
    char why[256];
    assert_int_equal(collect_file_check_block(b->data, b->len, b->count, n->sync, why,
                                              sizeof why), 0);
    assert_int_equal(collect_file_append_block(f, n->id, b->first, b->last, b->count, b->data,
                                               b->len), 0);
    free(b->data);
    b->data = NULL;
}

static void flush_ok(struct collect_file *f)
{
    char *cause = NULL;
    int rc = collect_file_flush(f, &cause);
    if (rc)
        fail_msg("flush: %s", cause ? cause : strerror(-rc));
}

static void close_ok(struct collect_file *f)
{
    char *cause = NULL;
    int rc = collect_file_close(f, &cause);
    if (rc)
        fail_msg("close: %s", cause ? cause : strerror(-rc));
}

static struct collect_file *open_ok(const char *path, uint32_t nnodes)
{
    struct collect_file *f = NULL;
    char *cause = NULL;
    int rc = collect_file_open(&f, path, HEADER_JSON, nnodes, START_NS, &cause);
    if (rc)
        fail_msg("open: %s", cause ? cause : strerror(-rc));
    return f;
}

struct readback {
    struct trace_event evs[MAX_EVENTS];
    size_t n;
    uint64_t blocks;
    enum trace_tail tail;
    char header[256];
};

/* Reads the whole file with the tools' reader; fails the test on any error. */
static void read_back(const char *path, struct readback *rb)
{
    struct trace_reader *r = NULL;
    char *cause = NULL;
    int rc = trace_reader_open(&r, path, &cause);
    if (rc)
        fail_msg("reader: %s", cause ? cause : strerror(-rc));
    const struct trace_reader_info *info = trace_reader_info(r);
    rb->blocks = info->blocks;
    rb->tail = info->tail;
    snprintf(rb->header, sizeof rb->header, "%s", info->header_json ? info->header_json : "");
    rb->n = 0;
    while ((rc = trace_reader_next(r, &rb->evs[rb->n], &cause)) == 0) {
        rb->n++;
        assert_true(rb->n < MAX_EVENTS);
    }
    if (rc != TRACE_READER_END)
        fail_msg("reader: %s", cause ? cause : strerror(-rc));
    trace_reader_destroy(r);
}

/* Every event of node `id` with seq 0..upto-1 is there exactly once, in seq order. */
static void assert_node_events(const struct readback *rb, int32_t id, int64_t upto)
{
    int64_t expect = 0;
    for (size_t i = 0; i < rb->n; i++) {
        if (rb->evs[i].node != id)
            continue;
        assert_int_equal(rb->evs[i].seq, expect);
        assert_int_equal(rb->evs[i].task & 0xffffffffu, (uint64_t)expect);
        expect++;
    }
    assert_int_equal(expect, upto);
}

static void test_create_append_read(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "fresh.jdt");
    mode_t mask = umask(022);
    struct collect_file *f = open_ok(path, 2);
    umask(mask);
    /* A trace is its owner's only, whatever the umask. */
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    struct collect_file_stats st;
    collect_file_stats(f, &st);
    assert_false(st.resumed);
    assert_string_equal(collect_file_header_json(f), HEADER_JSON);
    assert_int_equal(collect_file_next_seq(f, 0), 0);
    assert_int_equal(collect_file_next_seq(f, COLLECT_FILE_OWN_NODE), 0);
    assert_int_equal(collect_file_next_seq(f, 2), -1);
    assert_false(collect_file_dirty(f));
    /* The header is on disk at once, so the file is a valid (empty) trace. */
    struct readback *rb = calloc(1, sizeof *rb);
    read_back(path, rb);
    assert_int_equal(rb->n, 0);

    struct fake_node n0, n1;
    node_init(&n0, 0);
    node_init(&n1, 1);
    struct sent_block b;
    b = node_block(&n0, 10), append(f, &n0, &b);
    b = node_block(&n1, 7), append(f, &n1, &b);
    b = node_block(&n0, 20), append(f, &n0, &b);
    assert_true(collect_file_dirty(f));
    assert_int_equal(collect_file_next_seq(f, 0), 30);
    assert_int_equal(collect_file_written_seq(f, 0), 0);
    flush_ok(f);
    assert_false(collect_file_dirty(f));
    assert_int_equal(collect_file_written_seq(f, 0), 30);
    assert_int_equal(collect_file_written_seq(f, 1), 7);
    b = node_block(&n1, 13), append(f, &n1, &b);
    b = node_block(&n0, 5), append(f, &n0, &b);
    collect_file_stats(f, &st);
    assert_int_equal(st.events, 37);
    assert_int_equal(st.blocks, 3);
    assert_true(st.pending_bytes > 0);
    close_ok(f);

    read_back(path, rb);
    assert_int_equal(rb->n, 55);
    assert_int_equal(rb->blocks, 5);
    assert_int_equal(rb->tail, TRACE_TAIL_CLEAN);
    assert_string_equal(rb->header, HEADER_JSON);
    assert_node_events(rb, 0, 35);
    assert_node_events(rb, 1, 20);
    node_fini(&n0);
    node_fini(&n1);
    free(rb);
}

static void test_check_block(void **state)
{
    (void)state;
    struct fake_node n, other;
    node_init(&n, 0);
    node_init(&other, 1);
    char why[256];
    struct sent_block b = node_block(&n, 4);
    assert_int_equal(collect_file_check_block(b.data, b.len, 4, n.sync, why, sizeof why), 0);
    /* Another node's marker: the framing does not check out. */
    assert_int_equal(collect_file_check_block(b.data, b.len, 4, other.sync, why, sizeof why),
                     -EBADMSG);
    assert_non_null(strstr(why, "sync marker"));
    assert_int_equal(collect_file_check_block(b.data, b.len - 5, 4, n.sync, why, sizeof why),
                     -EBADMSG);
    assert_non_null(strstr(why, "cut short"));
    assert_int_equal(collect_file_check_block(b.data, b.len, 5, n.sync, why, sizeof why),
                     -EBADMSG);
    assert_non_null(strstr(why, "4 records but trace-block says 5"));
    assert_int_equal(collect_file_check_block(b.data, 0, 0, n.sync, why, sizeof why), -EBADMSG);
    assert_non_null(strstr(why, "0 blocks"));
    /* Two blocks in one message. */
    struct sent_block c = node_block(&n, 3);
    uint8_t *two = malloc(b.len + c.len);
    memcpy(two, b.data, b.len);
    memcpy(two + b.len, c.data, c.len);
    assert_int_equal(collect_file_check_block(two, b.len + c.len, 7, n.sync, why, sizeof why),
                     -EBADMSG);
    assert_non_null(strstr(why, "2 blocks"));
    /* Garbage. */
    memset(two, 0xff, b.len);
    assert_int_equal(collect_file_check_block(two, b.len, 4, n.sync, why, sizeof why), -EBADMSG);
    free(two);
    free(b.data);
    free(c.data);
    node_fini(&n);
    node_fini(&other);
}

static void test_resume_after_cut(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "cut.jdt");
    struct collect_file *f = open_ok(path, 2);
    struct fake_node n0, n1;
    node_init(&n0, 0);
    node_init(&n1, 1);
    struct sent_block b;
    b = node_block(&n0, 10), append(f, &n0, &b);
    b = node_block(&n1, 10), append(f, &n1, &b);
    flush_ok(f);
    off_t good = file_size(path);
    struct sent_block last = node_block(&n0, 10); /* seq 10..19, kept for the resend */
    struct sent_block copy = last;
    copy.data = malloc(last.len);
    memcpy(copy.data, last.data, last.len);
    append(f, &n0, &copy);
    close_ok(f);
    off_t full = file_size(path);
    assert_int_equal(full, good + (off_t)last.len);

    /* A SIGKILL during the last write: the file ends inside node 0's second block. */
    assert_int_equal(truncate(path, full - 7), 0);
    f = open_ok(path, 2);
    struct collect_file_stats st;
    collect_file_stats(f, &st);
    assert_true(st.resumed);
    assert_int_equal(st.cut_bytes, (uint64_t)(last.len - 7));
    assert_int_equal(st.file_events, 20);
    assert_int_equal(file_size(path), good);
    assert_int_equal(collect_file_next_seq(f, 0), 10);
    assert_int_equal(collect_file_written_seq(f, 0), 10);
    assert_int_equal(collect_file_next_seq(f, 1), 10);
    assert_string_equal(collect_file_header_json(f), HEADER_JSON);
    /* The node resends what was not acknowledged, then goes on. */
    append(f, &n0, &last);
    b = node_block(&n0, 5), append(f, &n0, &b);
    b = node_block(&n1, 3), append(f, &n1, &b);
    close_ok(f);

    struct readback *rb = calloc(1, sizeof *rb);
    read_back(path, rb);
    assert_int_equal(rb->tail, TRACE_TAIL_CLEAN);
    assert_int_equal(rb->n, 38);
    assert_node_events(rb, 0, 25);
    assert_node_events(rb, 1, 13);

    /* A tail of zeros (the size reached the disk, the data did not) is a cut too. */
    off_t whole = file_size(path);
    assert_int_equal(truncate(path, whole + 300), 0);
    f = open_ok(path, 2);
    collect_file_stats(f, &st);
    assert_int_equal(st.cut_bytes, 300);
    assert_int_equal(collect_file_next_seq(f, 0), 25);
    close_ok(f);
    assert_int_equal(file_size(path), whole);
    read_back(path, rb);
    assert_int_equal(rb->n, 38);
    free(rb);
    node_fini(&n0);
    node_fini(&n1);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, fp);
    fclose(fp);
    return buf;
}

static void assert_refused_untouched(const char *path, const char *expect_in_cause)
{
    size_t before_len, after_len;
    char *before = slurp(path, &before_len);
    struct collect_file *f = NULL;
    char *cause = NULL;
    int rc = collect_file_open(&f, path, HEADER_JSON, 2, START_NS, &cause);
    assert_true(rc < 0);
    assert_null(f);
    assert_non_null(cause);
    assert_non_null(strstr(cause, path));
    assert_non_null(strstr(cause, expect_in_cause));
    free(cause);
    char *after = slurp(path, &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(before);
    free(after);
}

static void test_refuses_other_files(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "notes.txt");
    FILE *fp = fopen(path, "w");
    fputs("my precious notes, not a trace\n", fp);
    fclose(fp);
    assert_refused_untouched(path, "not a jackdaw trace");

    /* A trace whose framing is corrupt after a whole block (not a crash cut). */
    path_in_dir(path, sizeof path, "corrupt.jdt");
    struct collect_file *f = open_ok(path, 1);
    struct fake_node n;
    node_init(&n, 0);
    struct sent_block b;
    b = node_block(&n, 10), append(f, &n, &b);
    b = node_block(&n, 10), append(f, &n, &b);
    close_ok(f);
    off_t size = file_size(path);
    fp = fopen(path, "r+b");
    fseek(fp, size - 3, SEEK_SET); /* inside the last sync marker */
    fputc(0x5a, fp);
    fclose(fp);
    assert_refused_untouched(path, "corrupt at offset");
    node_fini(&n);

    /* A trace written with another event schema (an older jackdaw's, without the block
     * checksum field): appending blocks of ours would make records of two shapes. */
    path_in_dir(path, sizeof path, "old.avro");
    size_t old_len;
    char *old = slurp("tests/traces/v0-no-checksums.avro", &old_len);
    fp = fopen(path, "wb");
    assert_int_equal(fwrite(old, 1, old_len, fp), old_len);
    fclose(fp);
    free(old);
    assert_refused_untouched(path, "another event schema");

    /* Two collectors on one file. */
    path_in_dir(path, sizeof path, "busy.jdt");
    f = open_ok(path, 1);
    struct collect_file *g = NULL;
    char *cause = NULL;
    assert_int_equal(collect_file_open(&g, path, HEADER_JSON, 1, START_NS, &cause), -EBUSY);
    assert_non_null(strstr(cause, "in use"));
    free(cause);
    close_ok(f);

    /* A file left empty by a collector stopped before its header: taken over. */
    path_in_dir(path, sizeof path, "empty.jdt");
    fp = fopen(path, "w");
    fclose(fp);
    f = open_ok(path, 1);
    close_ok(f);
    struct readback *rb = calloc(1, sizeof *rb);
    read_back(path, rb);
    assert_int_equal(rb->n, 0);
    assert_string_equal(rb->header, HEADER_JSON);
    free(rb);
}

/* A write that fails half-way (here: the file size limit; in life: a full disk) leaves
 * the file at its last block boundary, keeps the blocks, promises nothing, and the next
 * flush writes them. */
static void test_failed_write_kept_and_retried(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "full.jdt");
    struct collect_file *f = open_ok(path, 1);
    struct fake_node n;
    node_init(&n, 0);
    struct sent_block b = node_block(&n, 10);
    append(f, &n, &b);
    flush_ok(f);
    off_t good = file_size(path);
    b = node_block(&n, 50);
    append(f, &n, &b);

    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)good + 10; /* room for part of the block only */
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char *cause = NULL;
    int rc = collect_file_flush(f, &cause);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, -EFBIG);
    assert_non_null(strstr(cause, path));
    free(cause);
    assert_int_equal(file_size(path), good);
    assert_true(collect_file_dirty(f));
    assert_int_equal(collect_file_next_seq(f, 0), 60);
    assert_int_equal(collect_file_written_seq(f, 0), 10);

    flush_ok(f);
    assert_int_equal(collect_file_written_seq(f, 0), 60);
    close_ok(f);
    struct readback *rb = calloc(1, sizeof *rb);
    read_back(path, rb);
    assert_int_equal(rb->tail, TRACE_TAIL_CLEAN);
    assert_node_events(rb, 0, 60);
    free(rb);
    node_fini(&n);
}

#define NIDS 100000

static void test_names_round_trip(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "names.jdt");
    static char idbuf[NIDS][24];
    static const char *ids[NIDS];
    for (int i = 0; i < NIDS; i++) {
        snprintf(idbuf[i], sizeof idbuf[i], "task-%06d", i);
        ids[i] = idbuf[i];
    }
    const char *digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    struct collect_file *f = open_ok(path, 1);
    struct fake_node n;
    node_init(&n, 0);
    assert_int_equal(collect_file_append_job(f, 3, NIDS, "montage-0.25", digest, "data"), 0);
    /* Split as NAMES messages are (at most 65536 ids each); 1.1 MB of names fill more
     * than one 1 MiB own block. */
    assert_int_equal(collect_file_append_names(f, 3, 0, 60000, ids), 0);
    struct sent_block b = node_block(&n, 6);
    append(f, &n, &b);
    assert_int_equal(collect_file_append_names(f, 3, 60000, NIDS - 60000, ids + 60000), 0);
    assert_int_equal(collect_file_append_names(f, 4, UINT32_MAX, 2, ids), -EINVAL);
    int64_t own = collect_file_next_seq(f, COLLECT_FILE_OWN_NODE);
    assert_true(own > 3);
    close_ok(f);

    struct trace_reader *r = NULL;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, path, &cause), 0);
    struct trace_event ev;
    uint32_t next_id = 0;
    int64_t own_seen = 0, node_seen = 0;
    bool job_seen = false;
    while (trace_reader_next(r, &ev, &cause) == 0) {
        const char *const *names;
        size_t nn;
        assert_int_equal(trace_reader_names(r, &names, &nn), 0);
        if (ev.node == 0) {
            node_seen++;
            assert_int_equal(nn, 0);
            continue;
        }
        assert_int_equal(ev.node, COLLECT_FILE_OWN_NODE);
        assert_int_equal(ev.seq, own_seen++);
        if (ev.kind == TRACE_JOB_SUBMIT) {
            assert_false(job_seen);
            job_seen = true;
            assert_int_equal(ev.task >> 32, 3);
            assert_int_equal(ev.count, NIDS);
            assert_int_equal(strlen(ev.text), TRACE_TEXT_MAX - 1);
            assert_memory_equal(ev.text, digest, TRACE_TEXT_MAX - 1);
            assert_int_equal(nn, 3);
            assert_string_equal(names[0], "montage-0.25");
            assert_string_equal(names[1], digest);
            assert_string_equal(names[2], "data");
            continue;
        }
        assert_int_equal(ev.kind, TRACE_TASK_NAMES);
        assert_int_equal(ev.task >> 32, 3);
        assert_int_equal(ev.task & 0xffffffffu, next_id);
        assert_int_equal((size_t)ev.count, nn);
        for (size_t i = 0; i < nn; i++)
            assert_string_equal(names[i], ids[next_id + i]);
        next_id += (uint32_t)nn;
    }
    assert_true(job_seen);
    assert_int_equal(next_id, NIDS);
    assert_int_equal(own_seen, own);
    assert_int_equal(node_seen, 6);
    assert_true(trace_reader_info(r)->blocks >= 3);
    trace_reader_destroy(r);

    /* Resumed, the own records go on from the file's last one. */
    f = open_ok(path, 1);
    assert_int_equal(collect_file_next_seq(f, COLLECT_FILE_OWN_NODE), own);
    assert_int_equal(collect_file_next_seq(f, 0), 6);
    assert_int_equal(collect_file_append_job(f, 4, 1, NULL, NULL, NULL), 0);
    close_ok(f);
    assert_int_equal(trace_reader_open(&r, path, &cause), 0);
    size_t total = 0;
    struct trace_event last = {0};
    while (trace_reader_next(r, &ev, &cause) == 0) {
        total++;
        last = ev;
    }
    assert_int_equal(total, (size_t)own + 6 + 1);
    assert_int_equal(last.kind, TRACE_JOB_SUBMIT);
    assert_int_equal(last.seq, own);
    trace_reader_destroy(r);
    node_fini(&n);
}

static void assert_recorded(const struct collect_file *f, uint32_t job, bool submitted,
                            uint32_t names_end)
{
    bool got_submitted;
    uint32_t got_end;
    collect_file_job_recorded(f, job, &got_submitted, &got_end);
    assert_int_equal(got_submitted, submitted);
    assert_int_equal(got_end, names_end);
}

/* What the file holds of each job's own records, known while writing and learnt again
 * from the file on resume: what lets a job kept by a client be written only once. */
static void test_job_marks(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "marks.jdt");
    const char *ids[] = {"a", "b", "c", "d", "e"};
    struct collect_file *f = open_ok(path, 1);
    assert_recorded(f, 5, false, 0);
    assert_int_equal(collect_file_append_job(f, 5, 5, "w", NULL, NULL), 0);
    assert_int_equal(collect_file_append_names(f, 5, 0, 3, ids), 0);
    /* Names only (their JOB lost), and a job whose names are not from the start. */
    assert_int_equal(collect_file_append_names(f, 6, 0, 2, ids), 0);
    assert_int_equal(collect_file_append_names(f, 7, 2, 2, ids + 2), 0);
    /* Buffered counts: a scan between appends must not add them again. */
    assert_recorded(f, 5, true, 3);
    assert_recorded(f, 6, false, 2);
    assert_recorded(f, 7, false, 4);
    assert_recorded(f, 8, false, 0);
    close_ok(f);

    f = open_ok(path, 1);
    assert_recorded(f, 5, true, 3);
    assert_recorded(f, 6, false, 2);
    assert_recorded(f, 7, false, 4);
    assert_recorded(f, 0, false, 0);
    assert_int_equal(collect_file_append_names(f, 5, 3, 2, ids + 3), 0);
    assert_recorded(f, 5, true, 5);
    close_ok(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_append_read),
        cmocka_unit_test(test_check_block),
        cmocka_unit_test(test_resume_after_cut),
        cmocka_unit_test(test_refuses_other_files),
        cmocka_unit_test(test_failed_write_kept_and_retried),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_job_marks),
    };
    return cmocka_run_group_tests_name("collect_file", tests, setup_dir, remove_dir);
}
