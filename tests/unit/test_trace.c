/*
 * Trace encoding: events of every kind through hand-framed container blocks, read back by
 * libavro and python3-avro; crash-cut and corrupt files against the block scanner; and the
 * size of a realistic mix on disk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "event_cases.h"
#include "tmpdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <avro.h>

#include "trace/format/block.h"
#include "trace/format/event.h"

#define SCHEMA_PATH "share/schema/jackdaw-event.avsc"
#define HEADER_JSON "{\"run\":\"t-1\",\"start_ns\":1700000000000000000,\"nodes\":[{\"slots\":8}]}"


static int setup_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_trace");
}

/* A growing byte string: the file image. */
struct image {
    uint8_t *data;
    size_t len, cap;
};

static void image_put(struct image *im, const void *p, size_t n)
{
    if (im->len + n > im->cap) {
        im->cap = (im->len + n) * 2;
        im->data = realloc(im->data, im->cap);
        assert_non_null(im->data);
    }
    memcpy(im->data + im->len, p, n);
    im->len += n;
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Encodes events into an image: header, then one block encoder per node (as on the real
 * nodes), blocks appended as they fill, in the order they fill. */
struct writer {
    struct image im;
    uint8_t sync[TRACE_SYNC_SIZE];
    struct trace_block *blocks[8];
    size_t nblocks;
};

static void writer_init(struct writer *w, size_t nodes, size_t raw_cap)
{
    memset(w, 0, sizeof *w);
    assert_true(nodes <= 8);
    assert_int_equal(trace_sync_new(w->sync), 0);
    uint8_t *h;
    size_t hlen;
    assert_int_equal(trace_file_header(HEADER_JSON, w->sync, &h, &hlen), 0);
    image_put(&w->im, h, hlen);
    free(h);
    w->nblocks = nodes;
    for (size_t i = 0; i < nodes; i++)
        assert_int_equal(trace_block_create(&w->blocks[i], raw_cap), 0);
}

static void writer_flush(struct writer *w, size_t node)
{
    const uint8_t *data;
    size_t len;
    assert_int_equal(trace_block_finish(w->blocks[node], w->sync, &data, &len), 0);
    image_put(&w->im, data, len);
}

static void writer_add(struct writer *w, const struct trace_event *ev)
{
    struct trace_block *b = w->blocks[ev->node];
    int rc = trace_block_append(b, ev);
    if (rc == -ENOSPC) {
        writer_flush(w, (size_t)ev->node);
        rc = trace_block_append(b, ev);
    }
    assert_int_equal(rc, 0);
}

static void writer_finish(struct writer *w)
{
    for (size_t i = 0; i < w->nblocks; i++) {
        writer_flush(w, i);
        trace_block_destroy(w->blocks[i]);
    }
}

/* Reads path with libavro; decodes up to max events into evs.  Returns the record count;
 * *last_rc is the final avro_file_reader_read_value result (-1 is a clean EOF). */
static size_t read_avro(const char *path, struct trace_event *evs, size_t max, int *last_rc)
{
    avro_file_reader_t r;
    assert_int_equal(avro_file_reader(path, &r), 0);
    avro_schema_t ws = avro_file_reader_get_writer_schema(r);
    avro_value_iface_t *iface = avro_generic_class_from_schema(ws);
    avro_value_t v;
    assert_int_equal(avro_generic_value_new(iface, &v), 0);
    size_t n = 0;
    struct trace_event prev, ev;
    int rc;
    while ((rc = avro_file_reader_read_value(r, &v)) == 0) {
        assert_int_equal(trace_event_from_value(&v, n ? &prev : NULL, &ev), 0);
        if (n < max)
            evs[n] = ev;
        prev = ev;
        n++;
    }
    *last_rc = rc;
    avro_value_decref(&v);
    avro_value_iface_decref(iface);
    avro_schema_decref(ws);
    avro_file_reader_close(r);
    return n;
}

static void test_schema_file_matches_embedded(void **state)
{
    (void)state;
    FILE *f = fopen(SCHEMA_PATH, "rb");
    assert_non_null(f);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    avro_schema_t file_schema, embedded;
    assert_int_equal(avro_schema_from_json_length(text, n, &file_schema), 0);
    assert_int_equal(trace_event_schema(&embedded), 0);
    assert_true(avro_schema_equal(file_schema, embedded));
    /* Kind symbols are our enum, by position. */
    avro_schema_t kind = avro_schema_record_field_get(embedded, "kind");
    assert_int_equal(avro_schema_enum_number_of_symbols(kind), TRACE_KIND_COUNT);
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        assert_string_equal(avro_schema_enum_get(kind, k), trace_kind_name(k));
    assert_null(trace_kind_name(TRACE_KIND_COUNT));
    avro_schema_decref(file_schema);
    avro_schema_decref(embedded);
}

static int python_count(const char *path, long *count, char *meta, size_t meta_len)
{
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system("/usr/bin/python3 -c 'import avro.datafile' >/dev/null 2>&1") != 0)
        return -1;
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c '"
             "import sys\n"
             "from avro.datafile import DataFileReader\n"
             "from avro.io import DatumReader\n"
             "r = DataFileReader(open(sys.argv[1], \"rb\"), DatumReader())\n"
             "recs = list(r)\n"
             "kinds = set(x[\"kind\"] for x in recs)\n"
             "print(len(recs), len(kinds), r.get_meta(\"jackdaw.header\").decode())\n"
             "' '%s' 2>&1",
             path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int kinds = 0;
    int got = fscanf(p, "%ld %d %1023s", count, &kinds, meta);
    (void)meta_len;
    int rc = pclose(p);
    assert_int_equal(got, 3);
    assert_int_equal(rc, 0);
    assert_int_equal(kinds, TRACE_KIND_COUNT);
    return 0;
}

static void test_every_kind_round_trip(void **state)
{
    (void)state;
    static struct trace_event evs[1000], back[1000];
    size_t n = event_cases_every_kind(evs, 1000);
    struct writer w;
    writer_init(&w, 3, 1024); /* small blocks: many of them, interleaved by node */
    for (size_t i = 0; i < n; i++)
        writer_add(&w, &evs[i]);
    writer_finish(&w);

    struct trace_file_info info;
    assert_int_equal(trace_scan_header(w.im.data, w.im.len, &info), 0);
    assert_memory_equal(info.sync, w.sync, TRACE_SYNC_SIZE);
    assert_int_equal(info.header_json_len, strlen(HEADER_JSON));
    assert_memory_equal(info.header_json, HEADER_JSON, strlen(HEADER_JSON));
    struct trace_scan scan;
    assert_int_equal(trace_scan_blocks(w.im.data + info.header_end, w.im.len - info.header_end,
                                       info.sync, &scan), 0);
    assert_int_equal(scan.tail, TRACE_TAIL_CLEAN);
    assert_int_equal(scan.records, n);
    assert_true(scan.blocks > 3);

    char path[128];
    path_in_dir(path, sizeof path, "kinds.avro");
    write_file(path, w.im.data, w.im.len);
    int last;
    assert_int_equal(read_avro(path, back, 1000, &last), n);
    assert_int_equal(last, -1);
    /* Records come back grouped by block, not in the order they were made: compare
     * each with its original, found by (node, seq). */
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < n && !(evs[j].node == back[i].node && evs[j].seq == back[i].seq))
            j++;
        assert_true(j < n);
        assert_memory_equal(&back[i], &evs[j], sizeof evs[j]);
    }

    long py = 0;
    char meta[1024];
    if (python_count(path, &py, meta, sizeof meta) != 0) {
        free(w.im.data);
        skip();
    }
    assert_int_equal(py, n);
    assert_string_equal(meta, HEADER_JSON);
    free(w.im.data);
}

/* The block encoder's own encoding (trace_event_encode) against libavro's for the same
 * record (trace_event_to_value, avro_value_write): every kind, anchors and deltas, the
 * extremes of each field, names and usage; and at every cap short of a record's size it
 * reports -ENOSPC without writing past the cap. */
static void test_encode_matches_libavro(void **state)
{
    (void)state;
    static struct trace_event evs[1200];
    size_t n = event_cases_every_kind(evs, 1000);
    n = event_cases_extremes(evs, n, 1200);
    avro_schema_t schema;
    assert_int_equal(trace_event_schema(&schema), 0);
    avro_value_iface_t *iface;
    avro_value_t v;
    assert_int_equal(trace_event_value_new(schema, &iface, &v), 0);
    static uint8_t want[4096], got[4096 + 16];
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        /* Each event once as an anchor and once after the one before it (when that is a
         * valid delta: same node, earlier seq). */
        const struct trace_event *prevs[2] = { NULL, i ? &evs[i - 1] : NULL };
        for (int k = 0; k < 2; k++) {
            const struct trace_event *prev = prevs[k];
            if (k == 1 && (!prev || (prev->node == evs[i].node && prev->seq >= evs[i].seq)))
                continue;
            assert_int_equal(trace_event_to_value(&evs[i], prev, &v), 0);
            avro_writer_t w = avro_writer_memory((const char *)want, sizeof want);
            assert_non_null(w);
            assert_int_equal(avro_value_write(w, &v), 0);
            size_t len = (size_t)avro_writer_tell(w);
            avro_writer_free(w);
            int rc = trace_event_encode(&evs[i], prev, got, sizeof got);
            assert_int_equal(rc, (int)len);
            assert_memory_equal(got, want, len);
            for (size_t cap = 0; cap < len; cap += 1 + cap / 4) {
                memset(got, 0xa5, sizeof got);
                assert_int_equal(trace_event_encode(&evs[i], prev, got, cap), -ENOSPC);
                for (size_t j = cap; j < sizeof got; j++)
                    assert_int_equal(got[j], 0xa5);
            }
            checked++;
        }
    }
    assert_true(checked > n);
    /* Both refuse the same events. */
    struct trace_event bad = evs[0];
    bad.seq = -1;
    assert_int_equal(trace_event_encode(&bad, NULL, got, sizeof got), -EINVAL);
    bad = evs[0];
    memset(bad.text, 'y', sizeof bad.text);
    assert_int_equal(trace_event_encode(&bad, NULL, got, sizeof got), -EINVAL);
    bad = evs[0];
    bad.usage = (struct task_usage){ .user_ns = -1, .measured = true };
    assert_int_equal(trace_event_encode(&bad, NULL, got, sizeof got), -EINVAL);
    assert_int_equal(trace_event_to_value(&bad, NULL, &v), -EINVAL);
    trace_event_value_free(iface, &v);
    avro_schema_decref(schema);
}

/* 2000 sample-and-task events on one node, 1 KiB blocks. */
static void make_plain_file(struct writer *w)
{
    writer_init(w, 1, 1024);
    for (int i = 0; i < 2000; i++) {
        struct trace_event ev;
        trace_event_init(&ev, i % 2 ? TRACE_TASK_END : TRACE_TASK_START, 0);
        ev.seq = i;
        ev.time_ns = 1000 * i;
        ev.task = (uint64_t)i / 2;
        writer_add(w, &ev);
    }
    writer_finish(w);
}

static void test_truncated_file(void **state)
{
    (void)state;
    struct writer w;
    make_plain_file(&w);
    struct trace_file_info info;
    assert_int_equal(trace_scan_header(w.im.data, w.im.len, &info), 0);
    const uint8_t *blocks = w.im.data + info.header_end;
    size_t blen = w.im.len - info.header_end;
    struct trace_scan full;
    assert_int_equal(trace_scan_blocks(blocks, blen, info.sync, &full), 0);
    assert_true(full.blocks >= 4);

    /* Cuts inside the first block's header, its payload, its sync, then later ones. */
    size_t cuts[] = { 1, 2, 10, full.valid_end / full.blocks + 3, blen / 2, blen - 7, blen - 1 };
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        struct trace_scan s;
        assert_int_equal(trace_scan_blocks(blocks, cuts[c], info.sync, &s), 0);
        if (s.tail == TRACE_TAIL_CLEAN && s.valid_end == cuts[c] && cuts[c] + 1 < blen) {
            /* The cut fell exactly between two blocks (block sizes follow the schema):
             * that is a whole file, so cut one byte later. */
            cuts[c]++;
            assert_int_equal(trace_scan_blocks(blocks, cuts[c], info.sync, &s), 0);
        }
        assert_int_equal(s.tail, TRACE_TAIL_CUT);
        assert_true(s.valid_end < cuts[c]);
        assert_true(s.blocks < full.blocks);
        if (s.blocks == 0)
            continue; /* libavro cannot even open a file cut in its first block */
        char path[128];
        path_in_dir(path, sizeof path, "cut.avro");
        write_file(path, w.im.data, info.header_end + cuts[c]);
        int last;
        /* libavro decodes a block before it reads its sync marker, so a cut inside the
         * last sync still yields that block's records; the scanner refuses the block. */
        size_t expect = s.records;
        struct trace_scan more;
        size_t probe = cuts[c] + TRACE_SYNC_SIZE < blen ? cuts[c] + TRACE_SYNC_SIZE : blen;
        assert_int_equal(trace_scan_blocks(blocks, probe, info.sync, &more), 0);
        if (more.blocks == s.blocks + 1 && more.valid_end - TRACE_SYNC_SIZE < cuts[c])
            expect = more.records;
        assert_int_equal(read_avro(path, NULL, 0, &last), expect);
        /* libavro returns the whole blocks, then a positive errno for a cut inside a
         * payload but a clean EOF (-1) for a cut inside a block's count/size: it cannot
         * be trusted to tell a cut file from a whole one, the scanner can. */
        assert_int_not_equal(last, 0);
        /* What the collector does before appending: truncate to the last good block. */
        assert_int_equal(truncate(path, (off_t)(info.header_end + s.valid_end)), 0);
        assert_int_equal(read_avro(path, NULL, 0, &last), s.records);
        assert_int_equal(last, -1);
    }
    /* A file cut inside its header. */
    assert_int_equal(trace_scan_header(w.im.data, info.header_end - 1, &info), -ENODATA);
    assert_int_equal(trace_scan_header(w.im.data, 3, &info), -ENODATA);
    free(w.im.data);
}

/* Inserts a bogus block header after the first block of a copy and scans it. */
static enum trace_tail scan_patched(const struct writer *w, const struct trace_file_info *info,
                                    const uint8_t *head, size_t head_len, size_t *valid_end)
{
    const uint8_t *blocks = w->im.data + info->header_end;
    size_t blen = w->im.len - info->header_end;
    /* Keep block 0 intact and corrupt what follows it, so the valid prefix is one
     * block: find block 0's end as the shortest prefix that scans as one whole block. */
    struct trace_scan s;
    size_t prefix = 1;
    while (trace_scan_blocks(blocks, prefix, info->sync, &s) == 0 && s.blocks == 0)
        prefix++;
    size_t first_end = s.valid_end;
    uint8_t *copy = malloc(blen + head_len);
    assert_non_null(copy);
    memcpy(copy, blocks, first_end);
    memcpy(copy + first_end, head, head_len);
    memcpy(copy + first_end + head_len, blocks + first_end, blen - first_end);
    assert_int_equal(trace_scan_blocks(copy, blen + head_len, info->sync, &s), 0);
    free(copy);
    *valid_end = s.valid_end;
    assert_int_equal(s.valid_end, first_end);
    return s.tail;
}

static void test_corrupt_framing(void **state)
{
    (void)state;
    struct writer w;
    make_plain_file(&w);
    struct trace_file_info info;
    assert_int_equal(trace_scan_header(w.im.data, w.im.len, &info), 0);
    size_t end;
    /* Inserted junk block headers (zigzag: 0x01 = -1, 0x00 = 0). */
    static const uint8_t negative_count[] = { 0x01, 0x10 };
    static const uint8_t zero_count[] = { 0x00, 0x10 };
    static const uint8_t huge_count[] = { 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x10 };
    static const uint8_t negative_size[] = { 0x02, 0x03 };
    static const uint8_t zero_size[] = { 0x02, 0x00 };
    static const uint8_t huge_size[] = { 0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f };
    static const uint8_t overlong[] = { 0x02, 0xff, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    static const uint8_t count_vs_size[] = { 0xfe, 0xff, 0x07, 0x02 }; /* 65535 in 1 byte */
    const struct { const uint8_t *p; size_t n; } bad[] = {
        { negative_count, sizeof negative_count }, { zero_count, sizeof zero_count },
        { huge_count, sizeof huge_count },         { negative_size, sizeof negative_size },
        { zero_size, sizeof zero_size },           { huge_size, sizeof huge_size },
        { overlong, sizeof overlong },             { count_vs_size, sizeof count_vs_size },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(scan_patched(&w, &info, bad[i].p, bad[i].n, &end), TRACE_TAIL_BAD);

    /* A well-formed block ending with another file's sync marker. */
    uint8_t other[TRACE_SYNC_SIZE];
    assert_int_equal(trace_sync_new(other), 0);
    assert_memory_not_equal(other, info.sync, TRACE_SYNC_SIZE);
    struct trace_scan s;
    const uint8_t *blocks = w.im.data + info.header_end;
    size_t blen = w.im.len - info.header_end;
    assert_int_equal(trace_scan_blocks(blocks, blen, other, &s), 0);
    assert_int_equal(s.tail, TRACE_TAIL_BAD);
    assert_int_equal(s.valid_end, 0);
    /* The last byte of the file's last sync flipped. */
    w.im.data[w.im.len - 1] ^= 0x40;
    struct trace_scan full;
    assert_int_equal(trace_scan_blocks(blocks, blen, info.sync, &full), 0);
    assert_int_equal(full.tail, TRACE_TAIL_BAD);
    assert_true(full.valid_end < blen && full.valid_end > 0);

    /* Not a container, and not ours. */
    assert_int_equal(trace_scan_header((const uint8_t *)"Obj\x02zzzz", 8, &info), -EBADMSG);
    free(w.im.data);
}

static void test_append_contract(void **state)
{
    (void)state;
    struct trace_block *b;
    assert_int_equal(trace_block_create(&b, 100), -EINVAL);
    assert_int_equal(trace_block_create(&b, 1024), 0);
    struct trace_event ev;
    trace_event_init(&ev, TRACE_TASK_START, 0);
    ev.kind = (enum trace_kind)TRACE_KIND_COUNT;
    assert_int_equal(trace_block_append(b, &ev), -EINVAL);
    ev.kind = TRACE_TASK_START;
    ev.time_ns = -1;
    assert_int_equal(trace_block_append(b, &ev), -EINVAL);
    ev.time_ns = 5;
    assert_int_equal(trace_block_append(b, &ev), 0);
    assert_int_equal(trace_block_append(b, &ev), -EINVAL); /* same seq again */
    /* Fill it: the record that does not fit leaves nothing behind. */
    int rc;
    size_t before;
    do {
        before = trace_block_raw_size(b);
        ev.seq++;
        snprintf(ev.text, sizeof ev.text, "%s", "a-policy-name-to-take-some-room");
        rc = trace_block_append(b, &ev);
    } while (rc == 0);
    assert_int_equal(rc, -ENOSPC);
    assert_int_equal(trace_block_raw_size(b), before);
    size_t count = trace_block_count(b);
    uint8_t sync[TRACE_SYNC_SIZE] = { 1 };
    const uint8_t *data;
    size_t len;
    assert_int_equal(trace_block_finish(b, sync, &data, &len), 0);
    struct trace_scan s;
    assert_int_equal(trace_scan_blocks(data, len, sync, &s), 0);
    assert_int_equal(s.records, count);
    assert_int_equal(s.tail, TRACE_TAIL_CLEAN);
    assert_int_equal(trace_block_append(b, &ev), 0); /* fits in the fresh block */
    assert_int_equal(trace_block_finish(b, sync, &data, &len), 0);
    assert_true(len > 0);
    assert_int_equal(trace_block_finish(b, sync, &data, &len), 0);
    assert_int_equal(len, 0);
    trace_block_destroy(b);
    trace_block_destroy(NULL);
}

/* 100k events from 8 nodes: task start/end pairs, a sample per node every 64 events,
 * timestamps rising by a few microseconds.  Prints bytes per event on disk. */
static void test_bytes_per_event(void **state)
{
    (void)state;
    enum { NODES = 8, EVENTS = 100000 };
    uint64_t rng = 0x9e3779b97f4a7c15ULL;
    struct writer w;
    writer_init(&w, NODES, 0);
    size_t header_len = w.im.len;
    int64_t seq[NODES] = { 0 }, now[NODES] = { 0 };
    struct trace_sample samples[NODES];
    memset(samples, 0, sizeof samples);
    uint32_t next_task = 0;
    uint64_t running[NODES][8];
    int nrunning[NODES] = { 0 };
    for (int i = 0; i < EVENTS; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        int node = (int)(rng % NODES);
        struct trace_event ev;
        now[node] += 200 + (int64_t)((rng >> 8) % 8000);
        struct trace_sample *s = &samples[node];
        if (seq[node] % 64 == 63) {
            trace_event_init(&ev, TRACE_NODE_SAMPLE, node);
            s->busy = nrunning[node];
            s->slots = 8;
            s->lreadyq = (int32_t)((rng >> 20) % 30);
            s->sreadyq = (int32_t)((rng >> 25) % 5);
            s->waitq = 100;
            ev.sample = *s;
        } else if (nrunning[node] == 8 || (nrunning[node] > 0 && (rng >> 30) % 2)) {
            trace_event_init(&ev, TRACE_TASK_END, node);
            ev.task = running[node][--nrunning[node]];
            s->ended++;
            s->busy_ns += 5000000;
        } else {
            trace_event_init(&ev, TRACE_TASK_START, node);
            ev.task = (uint64_t)1 << 32 | next_task++;
            running[node][nrunning[node]++] = ev.task;
            s->started++;
        }
        ev.seq = seq[node]++;
        ev.time_ns = now[node];
        writer_add(&w, &ev);
    }
    writer_finish(&w);
    double per = (double)(w.im.len - header_len) / EVENTS;
    print_message("trace: %d events, %zu bytes of blocks, %.2f B/event (header %zu B)\n",
                  EVENTS, w.im.len - header_len, per, header_len);
    char path[128];
    path_in_dir(path, sizeof path, "mix.avro");
    write_file(path, w.im.data, w.im.len);
    int last;
    assert_int_equal(read_avro(path, NULL, 0, &last), EVENTS);
    assert_int_equal(last, -1);
    assert_true(per <= 12.0);
    free(w.im.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_file_matches_embedded),
        cmocka_unit_test(test_every_kind_round_trip),
        cmocka_unit_test(test_encode_matches_libavro),
        cmocka_unit_test(test_truncated_file),
        cmocka_unit_test(test_corrupt_framing),
        cmocka_unit_test(test_append_contract),
        cmocka_unit_test(test_bytes_per_event),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
