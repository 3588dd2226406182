/*
 * Trace reading for the trace tools (trace/format/reader, behind `jackdaw trace
 * cat|stats`): files written with the block encoder come back with the events and counts
 * that went in; a crash-cut file yields exactly its whole blocks and says it was cut; a
 * file that is not a jackdaw trace, or whose framing is corrupt before any block, is
 * refused with a cause naming the file.  The last test leaves a cut trace in build/ for
 * trying the command by hand.
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
#include <unistd.h>

#include <avro.h>

#include "trace/format/block.h"
#include "trace/format/event.h"
#include "trace/format/reader.h"

#define HEADER_JSON "{\"run\":\"tools-1\",\"start_ns\":1700000000000000000}"


static int setup_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_trace_tools");
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The file image, built as the collector does: header, then whole blocks from one
 * encoder per node, appended in the order they fill. */
struct writer {
    uint8_t *data;
    size_t len, cap;
    uint8_t sync[TRACE_SYNC_SIZE];
    struct trace_block *blocks[4];
    size_t nblocks;
    size_t first_block_end; /* offset after the first block appended; 0 before it */
};

static void put(struct writer *w, const void *p, size_t n)
{
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2;
        w->data = realloc(w->data, w->cap);
        assert_non_null(w->data);
    }
    memcpy(w->data + w->len, p, n);
    w->len += n;
}

static void writer_init(struct writer *w, size_t nodes)
{
    memset(w, 0, sizeof *w);
    assert_true(nodes <= 4);
    assert_int_equal(trace_sync_new(w->sync), 0);
    uint8_t *h;
    size_t hlen;
    assert_int_equal(trace_file_header(HEADER_JSON, w->sync, &h, &hlen), 0);
    put(w, h, hlen);
    free(h);
    w->nblocks = nodes;
    for (size_t i = 0; i < nodes; i++)
        assert_int_equal(trace_block_create(&w->blocks[i], 1024), 0);
}

static void flush_node(struct writer *w, size_t node)
{
    const uint8_t *data;
    size_t len;
    assert_int_equal(trace_block_finish(w->blocks[node], w->sync, &data, &len), 0);
    put(w, data, len);
    if (len && !w->first_block_end)
        w->first_block_end = w->len;
}

static void writer_add(struct writer *w, const struct trace_event *ev)
{
    int rc = trace_block_append(w->blocks[ev->node], ev);
    if (rc == -ENOSPC) {
        flush_node(w, (size_t)ev->node);
        rc = trace_block_append(w->blocks[ev->node], ev);
    }
    assert_int_equal(rc, 0);
}

static void writer_finish(struct writer *w)
{
    for (size_t i = 0; i < w->nblocks; i++) {
        flush_node(w, i);
        trace_block_destroy(w->blocks[i]);
    }
}

/* What went in, to compare with what comes out. */
struct expect {
    uint64_t events;
    uint64_t by_kind[TRACE_KIND_COUNT];
    uint64_t by_node[4];
    int64_t first_ns, last_ns;
};

/* n events on three nodes with unequal shares, cycling through every kind; times rise
 * per node, with node 2 starting late so the span is not from node 0 alone. */
static void make_mixed(struct writer *w, struct expect *e, int n)
{
    memset(e, 0, sizeof *e);
    writer_init(w, 3);
    int64_t seq[3] = { 0 }, now[3] = { 5000, 9000, 2000000 };
    for (int i = 0; i < n; i++) {
        int node = i % 7 < 4 ? 0 : i % 7 < 6 ? 1 : 2;
        enum trace_kind kind = (enum trace_kind)(i % TRACE_KIND_COUNT);
        struct trace_event ev;
        trace_event_init(&ev, kind, node);
        ev.seq = seq[node]++;
        now[node] += 300 + (i % 11) * 100;
        ev.time_ns = now[node];
        if (kind <= TRACE_TASK_END || kind == TRACE_DATA_FETCH)
            ev.task = (uint64_t)1 << 32 | (uint64_t)i;
        if (kind == TRACE_POLICY_CHANGE)
            snprintf(ev.text, sizeof ev.text, "policy \"%d\"", i);
        if (kind == TRACE_NODE_SAMPLE) {
            ev.sample.slots = 8;
            ev.sample.busy_ns = (int64_t)i * 1000;
        }
        writer_add(w, &ev);
        if (e->events == 0 || ev.time_ns < e->first_ns)
            e->first_ns = ev.time_ns;
        if (e->events == 0 || ev.time_ns > e->last_ns)
            e->last_ns = ev.time_ns;
        e->events++;
        e->by_kind[kind]++;
        e->by_node[node]++;
    }
    writer_finish(w);
}

/* Reads every event of r into a tally; returns trace_reader_next's final status. */
static int read_all(struct trace_reader *r, struct trace_tally *t)
{
    struct trace_event ev;
    char *cause = NULL;
    int rc;
    trace_tally_init(t);
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0)
        assert_int_equal(trace_tally_add(t, &ev), 0);
    if (rc < 0)
        print_error("trace_reader_next: %s\n", cause ? cause : "?");
    free(cause);
    return rc;
}

static void test_counts_match_what_was_written(void **state)
{
    (void)state;
    struct writer w;
    struct expect e;
    make_mixed(&w, &e, 5000);
    char path[128];
    path_in_dir(path, sizeof path, "mixed.avro");
    write_file(path, w.data, w.len);

    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, path, &cause), 0);
    assert_null(cause);
    const struct trace_reader_info *in = trace_reader_info(r);
    assert_int_equal(in->tail, TRACE_TAIL_CLEAN);
    assert_int_equal(in->records, e.events);
    assert_true(in->blocks > 3);
    assert_int_equal(in->file_size, w.len);
    assert_int_equal(in->valid_end, w.len);
    assert_string_equal(in->header_json, HEADER_JSON);

    struct trace_tally t;
    assert_int_equal(read_all(r, &t), TRACE_READER_END);
    assert_int_equal(t.events, e.events);
    assert_int_equal(t.unknown_kind, 0);
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        assert_int_equal(t.by_kind[k], e.by_kind[k]);
    assert_int_equal(t.n_nodes, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(t.by_node[i].node, (int32_t)i);
        assert_int_equal(t.by_node[i].events, e.by_node[i]);
    }
    assert_int_equal(t.first_ns, e.first_ns);
    assert_int_equal(t.last_ns, e.last_ns);
    /* The end stays the end. */
    struct trace_event ev;
    assert_int_equal(trace_reader_next(r, &ev, &cause), TRACE_READER_END);
    trace_tally_fini(&t);
    trace_reader_destroy(r);
    free(w.data);
}

/* Events come back with their absolute times and fields, not the on-disk deltas. */
static void test_events_decoded_absolute(void **state)
{
    (void)state;
    struct writer w;
    writer_init(&w, 2);
    for (int i = 0; i < 600; i++) {
        struct trace_event ev;
        trace_event_init(&ev, TRACE_DATA_FETCH, i % 2);
        ev.seq = i / 2;
        ev.time_ns = INT64_C(1000000000) + i * 1000;
        ev.task = (uint64_t)7 << 32 | (uint64_t)i;
        ev.peer = 1 - i % 2;
        ev.bytes = i * 10;
        ev.duration_ns = 42;
        writer_add(&w, &ev);
    }
    writer_finish(&w);
    char path[128];
    path_in_dir(path, sizeof path, "fetch.avro");
    write_file(path, w.data, w.len);
    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, path, &cause), 0);
    struct trace_event ev;
    int n = 0;
    while (trace_reader_next(r, &ev, &cause) == 0) {
        int i = (int)ev.seq * 2 + ev.node; /* invert what was written */
        assert_int_equal(ev.kind, TRACE_DATA_FETCH);
        assert_int_equal(ev.time_ns, INT64_C(1000000000) + i * 1000);
        assert_int_equal(ev.task, (uint64_t)7 << 32 | (uint64_t)i);
        assert_int_equal(ev.peer, 1 - i % 2);
        assert_int_equal(ev.bytes, i * 10);
        assert_int_equal(ev.duration_ns, 42);
        n++;
    }
    assert_null(cause);
    assert_int_equal(n, 600);
    trace_reader_destroy(r);
    free(w.data);
}

static void test_cut_file_reads_whole_blocks(void **state)
{
    (void)state;
    struct writer w;
    struct expect e;
    make_mixed(&w, &e, 3000);
    struct trace_file_info fi;
    assert_int_equal(trace_scan_header(w.data, w.len, &fi), 0);
    char path[128];
    path_in_dir(path, sizeof path, "cut.avro");
    /* Cuts inside the first block, in the middle, inside the last sync marker. */
    size_t cuts[] = { w.first_block_end - 5, w.len / 2, w.len - 3 };
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        struct trace_scan sc;
        assert_int_equal(trace_scan_blocks(w.data + fi.header_end, cuts[c] - fi.header_end,
                                           fi.sync, &sc), 0);
        write_file(path, w.data, cuts[c]);
        struct trace_reader *r;
        char *cause = NULL;
        assert_int_equal(trace_reader_open(&r, path, &cause), 0);
        const struct trace_reader_info *in = trace_reader_info(r);
        assert_int_equal(in->tail, TRACE_TAIL_CUT);
        assert_int_equal(in->blocks, sc.blocks);
        assert_int_equal(in->records, sc.records);
        assert_int_equal(in->valid_end, fi.header_end + sc.valid_end);
        assert_int_equal(in->file_size, cuts[c]);
        assert_true(in->records < e.events);
        if (c == 0)
            assert_int_equal(in->blocks, 0);
        else
            assert_true(in->blocks > 0);
        struct trace_tally t;
        /* Exactly the whole blocks, then a clean end, even though libavro would have
         * decoded the block whose sync marker is cut (c == 2). */
        assert_int_equal(read_all(r, &t), TRACE_READER_END);
        assert_int_equal(t.events, sc.records);
        trace_tally_fini(&t);
        trace_reader_destroy(r);
    }
    free(w.data);
}

/* Asserts that opening path fails with rc and a cause holding the path and `words`. */
static void assert_refused(const char *path, int rc, const char *words)
{
    struct trace_reader *r = (struct trace_reader *)&r; /* must be reset to NULL */
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, path, &cause), rc);
    assert_null(r);
    assert_non_null(cause);
    if (!strstr(cause, path) || !strstr(cause, words))
        fail_msg("cause '%s' lacks '%s' or '%s'", cause, path, words);
    free(cause);
}

static void test_not_a_trace_refused(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "notes.txt");
    write_file(path, (const uint8_t *)"hello, trace\n", 13);
    assert_refused(path, -EBADMSG, "not a jackdaw trace");

    path_in_dir(path, sizeof path, "empty.avro");
    write_file(path, (const uint8_t *)"", 0);
    assert_refused(path, -EBADMSG, "cut inside its header");

    path_in_dir(path, sizeof path, "missing.avro");
    assert_refused(path, -ENOENT, "cannot open");

    assert_refused(tmpdir, -EINVAL, "not a regular file");

    /* A valid Avro container whose records are not jackdaw.Event: libavro's own writer,
     * deflate, one long. */
    path_in_dir(path, sizeof path, "longs.avro");
    avro_schema_t s = avro_schema_long();
    avro_file_writer_t fw;
    assert_int_equal(avro_file_writer_create_with_codec(path, s, &fw, "deflate", 0), 0);
    avro_datum_t d = avro_int64(5);
    assert_int_equal(avro_file_writer_append(fw, d), 0);
    avro_datum_decref(d);
    avro_file_writer_close(fw);
    avro_schema_decref(s);
    assert_refused(path, -EBADMSG, "not jackdaw.Event");

    /* A jackdaw header cut before its sync marker. */
    struct writer w;
    make_mixed(&w, &(struct expect){ 0 }, 200);
    struct trace_file_info fi;
    assert_int_equal(trace_scan_header(w.data, w.len, &fi), 0);
    path_in_dir(path, sizeof path, "header-cut.avro");
    write_file(path, w.data, fi.header_end - 4);
    assert_refused(path, -EBADMSG, "cut inside its header");

    /* Header only: a run that never flushed a block.  Opens, holds nothing. */
    path_in_dir(path, sizeof path, "header-only.avro");
    write_file(path, w.data, fi.header_end);
    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, path, &cause), 0);
    assert_int_equal(trace_reader_info(r)->tail, TRACE_TAIL_CLEAN);
    assert_int_equal(trace_reader_info(r)->records, 0);
    struct trace_event ev;
    assert_int_equal(trace_reader_next(r, &ev, &cause), TRACE_READER_END);
    trace_reader_destroy(r);
    free(w.data);
}

static void test_corrupt_framing(void **state)
{
    (void)state;
    struct writer w;
    struct expect e;
    make_mixed(&w, &e, 3000);
    struct trace_file_info fi;
    assert_int_equal(trace_scan_header(w.data, w.len, &fi), 0);
    char path[128], offset[64];

    /* The first block's count made zero: corrupt before any block, refused with its
     * offset (the first block starts at header_end). */
    uint8_t saved = w.data[fi.header_end];
    w.data[fi.header_end] = 0x00;
    path_in_dir(path, sizeof path, "bad-first.avro");
    write_file(path, w.data, w.len);
    snprintf(offset, sizeof offset, "offset %zu", fi.header_end);
    assert_refused(path, -EBADMSG, offset);
    w.data[fi.header_end] = saved;

    /* The second block's sync marker damaged: the first block still reads. */
    struct trace_scan one;
    assert_int_equal(trace_scan_blocks(w.data + fi.header_end, w.first_block_end - fi.header_end,
                                       fi.sync, &one), 0);
    assert_int_equal(one.blocks, 1);
    struct trace_scan all;
    assert_int_equal(trace_scan_blocks(w.data + fi.header_end, w.len - fi.header_end, fi.sync,
                                       &all), 0);
    size_t second_sync_end = 0;
    for (size_t end = w.first_block_end + 1; end <= w.len && !second_sync_end; end++) {
        struct trace_scan s;
        assert_int_equal(trace_scan_blocks(w.data + fi.header_end, end - fi.header_end, fi.sync,
                                           &s), 0);
        if (s.blocks == 2)
            second_sync_end = end;
    }
    assert_true(second_sync_end > 0);
    w.data[second_sync_end - 1] ^= 0x55;
    path_in_dir(path, sizeof path, "bad-second.avro");
    write_file(path, w.data, w.len);
    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, path, &cause), 0);
    const struct trace_reader_info *in = trace_reader_info(r);
    assert_int_equal(in->tail, TRACE_TAIL_BAD);
    assert_int_equal(in->blocks, 1);
    assert_int_equal(in->records, one.records);
    assert_int_equal(in->valid_end, w.first_block_end);
    struct trace_tally t;
    assert_int_equal(read_all(r, &t), TRACE_READER_END);
    assert_int_equal(t.events, one.records);
    trace_tally_fini(&t);
    trace_reader_destroy(r);
    free(w.data);
}

/* Nodes arrive in any order and are kept sorted; unknown kinds are counted apart. */
static void test_tally(void **state)
{
    (void)state;
    struct trace_tally t;
    trace_tally_init(&t);
    const int32_t nodes[] = { 40, -1, 3, 40, 1000000, 3, 0, 17, 3 };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        struct trace_event ev;
        trace_event_init(&ev, i == 2 ? (enum trace_kind)(TRACE_KIND_COUNT + 4) : TRACE_TASK_START,
                         nodes[i]);
        ev.time_ns = 100 - (int64_t)i * 10;
        assert_int_equal(trace_tally_add(&t, &ev), 0);
    }
    /* Many nodes: the array grows. */
    for (int32_t n = 100; n < 200; n++) {
        struct trace_event ev;
        trace_event_init(&ev, TRACE_TASK_END, n);
        ev.time_ns = 50;
        assert_int_equal(trace_tally_add(&t, &ev), 0);
    }
    assert_int_equal(t.events, 109);
    assert_int_equal(t.unknown_kind, 1);
    assert_int_equal(t.by_kind[TRACE_TASK_START], 8);
    assert_int_equal(t.by_kind[TRACE_TASK_END], 100);
    assert_int_equal(t.n_nodes, 106);
    const int32_t want[] = { -1, 0, 3, 17, 40 };
    const uint64_t count[] = { 1, 1, 3, 1, 2 };
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(t.by_node[i].node, want[i]);
        assert_int_equal(t.by_node[i].events, count[i]);
    }
    assert_int_equal(t.by_node[105].node, 1000000);
    for (size_t i = 1; i < t.n_nodes; i++)
        assert_true(t.by_node[i - 1].node < t.by_node[i].node);
    assert_int_equal(t.first_ns, 20);
    assert_int_equal(t.last_ns, 100);
    trace_tally_fini(&t);
    trace_tally_fini(NULL);
}

/* Leaves build/tests/trace-sample.avro (whole) and trace-sample-cut.avro for trying
 * `jackdaw trace stats` by hand; not an assertion about the reader. */
static void test_leave_sample(void **state)
{
    (void)state;
    if (access("build/tests", W_OK) != 0)
        skip();
    struct writer w;
    struct expect e;
    make_mixed(&w, &e, 3000);
    write_file("build/tests/trace-sample.avro", w.data, w.len);
    write_file("build/tests/trace-sample-cut.avro", w.data, w.len / 2 + 7);
    free(w.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_match_what_was_written),
        cmocka_unit_test(test_events_decoded_absolute),
        cmocka_unit_test(test_cut_file_reads_whole_blocks),
        cmocka_unit_test(test_not_a_trace_refused),
        cmocka_unit_test(test_corrupt_framing),
        cmocka_unit_test(test_tally),
        cmocka_unit_test(test_leave_sample),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
