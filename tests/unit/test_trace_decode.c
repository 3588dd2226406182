/*
 * The record decoder (trace_event_decode) against libavro's path (avro_value_read, then
 * trace_event_from_value) on the same bytes: every kind and each field at its extremes,
 * anchors and deltas, one record at a time and a block's worth through the block reader;
 * every cut of a valid record refused; corrupt bytes never crash, and whatever the
 * decoder accepts, libavro reads the same.  Then the trace reader on one file written
 * twice, with our schema (the decoder's path) and with the same schema spelt otherwise
 * (libavro's path): the same events and names.  Buffers are allocated at their exact
 * size, so that a read past the end shows under `make SANITIZE=address,undefined`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "event_cases.h"
#include "tmpdir.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avro.h>

#include "trace/format/block.h"
#include "trace/format/blockread.h"
#include "trace/format/event.h"
#include "trace/format/reader.h"
#include "trace/format/varint.h"

#define MAX_CASES 1400
#define HEADER_JSON "{\"run\":\"t-decode\",\"start_ns\":1700000000000000000}"

static int setup_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_trace_decode");
}

/* libavro's path, as the trace reader takes it for files of another schema. */
struct slow {
    avro_schema_t schema;
    avro_value_iface_t *iface;
    avro_value_t value;
};

static void slow_init(struct slow *s)
{
    assert_int_equal(trace_event_schema(&s->schema), 0);
    assert_int_equal(trace_event_value_new(s->schema, &s->iface, &s->value), 0);
}

static void slow_fini(struct slow *s)
{
    trace_event_value_free(s->iface, &s->value);
    avro_schema_decref(s->schema);
}

/* avro_reader_is_eof answers for file readers only. */
static bool at_end(avro_reader_t rd)
{
    char byte;
    return avro_read(rd, &byte, 1) != 0;
}

/* Decodes the one record that must take all of buf[0..len). */
static void slow_decode_whole(struct slow *s, const uint8_t *buf, size_t len,
                              const struct trace_event *prev, struct trace_event *ev)
{
    avro_reader_t rd = avro_reader_memory((const char *)buf, (int64_t)len);
    assert_non_null(rd);
    assert_int_equal(avro_value_read(rd, &s->value), 0);
    assert_true(at_end(rd));
    avro_reader_free(rd);
    assert_int_equal(trace_event_from_value(&s->value, prev, ev), 0);
}

static void put(uint8_t **p, size_t *n, const void *data, size_t len)
{
    *p = realloc(*p, *n + len);
    assert_non_null(*p);
    memcpy(*p + *n, data, len);
    *n += len;
}

static void put_varint(uint8_t **p, size_t *n, int64_t v)
{
    uint8_t tmp[VARINT_MAX];
    put(p, n, tmp, varint_put(tmp, v));
}

/* A record to decode and what decoding must give: `prev` as given to the encoder and
 * the decoder (NULL for an anchor). */
struct pair {
    const struct trace_event *prev, *ev;
};

static int by_node_seq(const void *pa, const void *pb)
{
    const struct trace_event *a = pa, *b = pb;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The cases of test_trace's encoder check, and deltas at the limits: seq and time steps
 * of INT64_MAX - 1, INT64_MAX and -INT64_MAX (only an anchor can carry the largest
 * values, and the extremes change node at every record). */
static struct trace_event cases[MAX_CASES];
static struct pair pairs[2 * MAX_CASES];
static size_t ncases, npairs;

static void make_pairs(void)
{
    ncases = event_cases_every_kind(cases, 1000);
    /* Grouped by node, so that most records can also be a delta from the one before. */
    qsort(cases, ncases, sizeof cases[0], by_node_seq);
    ncases = event_cases_extremes(cases, ncases, 1200);
    static const struct { int64_t seq0, t0, seq1, t1; } steps[] = {
        { 0, 0, INT64_MAX, INT64_MAX },
        { 5, INT64_MAX, 6, 0 },
        { 0, 1000, 1, 999 },
        { 7, 7, 8, 7 },
        { INT64_MAX - 1, 1, INT64_MAX, INT64_MAX },
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct trace_event *a = &cases[ncases++], *b = &cases[ncases++];
        trace_event_init(a, TRACE_TASK_START, 3);
        a->seq = steps[i].seq0;
        a->time_ns = steps[i].t0;
        *b = *a;
        b->kind = TRACE_TASK_END;
        b->seq = steps[i].seq1;
        b->time_ns = steps[i].t1;
    }
    npairs = 0;
    for (size_t i = 0; i < ncases; i++) {
        pairs[npairs++] = (struct pair){ NULL, &cases[i] };
        const struct trace_event *prev = i ? &cases[i - 1] : NULL;
        if (prev && prev->node == cases[i].node && prev->seq < cases[i].seq)
            pairs[npairs++] = (struct pair){ prev, &cases[i] };
    }
}

/* The pair's record in a buffer of exactly its size (caller frees). */
static uint8_t *encode_pair(const struct pair *p, size_t *len)
{
    uint8_t tmp[4096];
    int n = trace_event_encode(p->ev, p->prev, tmp, sizeof tmp);
    assert_true(n > 0);
    uint8_t *buf = malloc((size_t)n);
    assert_non_null(buf);
    memcpy(buf, tmp, (size_t)n);
    *len = (size_t)n;
    return buf;
}

/* What decoding gives back of an event: everything but the names. */
static struct trace_event without_names(const struct trace_event *ev)
{
    struct trace_event e = *ev;
    e.names = NULL;
    e.nnames = 0;
    return e;
}

static void test_decode_matches_libavro(void **state)
{
    (void)state;
    struct slow s;
    slow_init(&s);
    make_pairs();
    size_t deltas = 0, with_names = 0;
    for (size_t i = 0; i < npairs; i++) {
        size_t len;
        uint8_t *buf = encode_pair(&pairs[i], &len);
        struct trace_event fast, slow;
        assert_int_equal(trace_event_decode(buf, len, pairs[i].prev, &fast), (int)len);
        slow_decode_whole(&s, buf, len, pairs[i].prev, &slow);
        assert_memory_equal(&fast, &slow, sizeof fast);
        struct trace_event want = without_names(pairs[i].ev);
        assert_memory_equal(&fast, &want, sizeof fast);
        deltas += pairs[i].prev != NULL;

        /* The names, as trace_event_names gives them from libavro's value. */
        const char *got[8], *lib[8];
        size_t n = 99, ln = 99;
        char *text = malloc(len);
        assert_int_equal(trace_event_decode_names(buf, len, got, 8, &n, text), 0);
        assert_int_equal(trace_event_names(&s.value, lib, 8, &ln), 0);
        assert_int_equal(n, pairs[i].ev->nnames);
        assert_int_equal(ln, n);
        for (size_t k = 0; k < n; k++) {
            assert_string_equal(got[k], pairs[i].ev->names[k]);
            assert_string_equal(got[k], lib[k]);
        }
        /* A smaller cap still counts them all. */
        if (n > 1) {
            assert_int_equal(trace_event_decode_names(buf, len, got, 1, &n, text), 0);
            assert_int_equal(n, pairs[i].ev->nnames);
            assert_string_equal(got[0], pairs[i].ev->names[0]);
        }
        with_names += n > 0;
        free(text);
        free(buf);
    }
    assert_true(npairs > ncases + 100 && deltas > 100 && with_names > 100);

    /* What the slow path refuses, the decoder refuses: a delta with no prev, with a prev
     * of another node, one whose seq overflows, one that runs time below 0. */
    struct pair p = { NULL, NULL };
    for (size_t i = 0; i < npairs && !p.prev; i++)
        p = pairs[i];
    assert_non_null(p.prev);
    size_t len;
    uint8_t *buf = encode_pair(&p, &len);
    struct trace_event ev, other = *p.prev;
    assert_int_equal(trace_event_decode(buf, len, NULL, &ev), -EBADMSG);
    other.node++;
    assert_int_equal(trace_event_decode(buf, len, &other, &ev), -EBADMSG);
    other = *p.prev;
    other.seq = INT64_MAX; /* the next seq overflows */
    assert_int_equal(trace_event_decode(buf, len, &other, &ev), -EBADMSG);
    free(buf);
    struct trace_event back, fwd;
    trace_event_init(&back, TRACE_TASK_END, 0);
    back.seq = 1;
    back.time_ns = 0;
    trace_event_init(&fwd, TRACE_TASK_END, 0);
    fwd.seq = 0;
    fwd.time_ns = 10;
    buf = encode_pair(&(struct pair){ &fwd, &back }, &len); /* time -10 */
    struct trace_event early = fwd;
    early.time_ns = 9;
    assert_int_equal(trace_event_decode(buf, len, &fwd, &ev), (int)len);
    assert_int_equal(ev.time_ns, 0);
    assert_int_equal(trace_event_decode(buf, len, &early, &ev), -EBADMSG);
    free(buf);
    buf = encode_pair(&(struct pair){ &back, &(struct trace_event){ .kind = TRACE_TASK_END,
                                                                   .seq = 2, .time_ns = 10,
                                                                   .task = TRACE_NO_TASK,
                                                                   .peer = -1 } }, &len);
    struct trace_event late = back; /* time +10 from INT64_MAX - 5 */
    late.time_ns = INT64_MAX - 5;
    assert_int_equal(trace_event_decode(buf, len, &back, &ev), (int)len);
    assert_int_equal(ev.time_ns, 10);
    assert_int_equal(trace_event_decode(buf, len, &late, &ev), -EBADMSG);
    free(buf);

    /* A time delta of INT64_MIN (only damage writes one: it has no negation). */
    buf = NULL;
    len = 0;
    const int64_t fields[] = { TRACE_TASK_END, 0, 0, INT64_MIN, -1, -1, -1, 0, 0, 0, 0,
                               0 /* text */, 0 /* sample */, 0 /* names */, 0 /* usage */,
                               0 /* check */ };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        put_varint(&buf, &len, fields[i]);
    assert_int_equal(trace_event_decode(buf, len, &fwd, &ev), -EBADMSG);
    avro_reader_t rd = avro_reader_memory((const char *)buf, (int64_t)len);
    assert_int_equal(avro_value_read(rd, &s.value), 0);
    assert_int_equal(trace_event_from_value(&s.value, &fwd, &ev), -EBADMSG);
    avro_reader_free(rd);
    free(buf);
    slow_fini(&s);
}

/* A block's worth: the every-kind mix grouped by node (runs of deltas, an anchor at each
 * change of node) and the limit deltas, through the block encoder; decoded by the block
 * reader and, from the same inflated bytes, by libavro. */
struct collected {
    struct trace_event ev[MAX_CASES];
    size_t n;
};

static void collect(void *ctx, const struct trace_event *ev)
{
    struct collected *c = ctx;
    assert_true(c->n < MAX_CASES);
    c->ev[c->n++] = *ev;
}

static void test_decode_block(void **state)
{
    (void)state;
    static struct trace_event evs[MAX_CASES];
    make_pairs();
    size_t n = 0;
    for (size_t i = 0; i < ncases; i++)
        if (i < 1000 || i >= 1200) /* not the extremes: they are anchors only */
            evs[n++] = cases[i];
    struct trace_block *enc;
    assert_int_equal(trace_block_create(&enc, 1 << 20), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(trace_block_append(enc, &evs[i]), 0);
    uint8_t sync[TRACE_SYNC_SIZE];
    assert_int_equal(trace_sync_new(sync), 0);
    const uint8_t *data;
    size_t len;
    assert_int_equal(trace_block_finish(enc, sync, &data, &len), 0);

    struct trace_block_reader *rd;
    assert_int_equal(trace_block_reader_create(&rd), 0);
    static struct collected c;
    c.n = 0;
    char why[160];
    assert_int_equal(trace_block_reader_decode(rd, data, len, collect, &c, why, sizeof why), 0);
    assert_int_equal(c.n, n);
    for (size_t i = 0; i < n; i++) {
        struct trace_event want = without_names(&evs[i]);
        assert_memory_equal(&c.ev[i], &want, sizeof want);
    }

    size_t pos = 0;
    struct trace_block_view v;
    assert_int_equal(trace_block_next(data, len, &pos, &v), 1);
    const uint8_t *raw;
    size_t raw_len;
    assert_int_equal(trace_block_reader_inflate(rd, &v, &raw, &raw_len), 0);
    struct slow s;
    slow_init(&s);
    avro_reader_t ar = avro_reader_memory((const char *)raw, (int64_t)raw_len);
    struct trace_event ev, prev;
    size_t deltas = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(avro_value_read(ar, &s.value), 0);
        assert_int_equal(trace_event_from_value(&s.value, i ? &prev : NULL, &ev), 0);
        assert_memory_equal(&ev, &c.ev[i], sizeof ev);
        deltas += i && evs[i - 1].node == evs[i].node;
        prev = ev;
    }
    assert_true(at_end(ar));
    assert_true(deltas > n / 2);
    avro_reader_free(ar);
    slow_fini(&s);
    trace_block_reader_destroy(rd);
    trace_block_destroy(enc);
}

/* Every cut of every record is refused, and the decoder reads nothing past the cut. */
static void test_decode_truncated(void **state)
{
    (void)state;
    make_pairs();
    size_t cuts = 0;
    for (size_t i = 0; i < npairs; i++) {
        size_t len;
        uint8_t *whole = encode_pair(&pairs[i], &len);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *buf = malloc(cut ? cut : 1);
            assert_non_null(buf);
            memcpy(buf, whole, cut);
            struct trace_event ev;
            const char *names[4];
            size_t n;
            char text[4096];
            assert_int_equal(trace_event_decode(buf, cut, pairs[i].prev, &ev), -EBADMSG);
            assert_int_equal(trace_event_decode_names(buf, cut, names, 4, &n, text), -EBADMSG);
            assert_int_equal(n, 0);
            free(buf);
            cuts++;
        }
        free(whole);
    }
    assert_true(cuts > 10000);
}

/* A small deterministic generator (xorshift64*), so a failure repeats. */
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1du;
}

/* The decoder on damaged bytes: no crash, no read outside the buffer, -EBADMSG or a
 * record; and a record it accepts, libavro reads in as many bytes with the same result
 * and the same names.  libavro is only given what the decoder accepted: 1.11.1 does not
 * check lengths, so damage could crash it. */
static size_t damaged(struct slow *s, const uint8_t *buf, size_t len,
                      const struct trace_event *prev)
{
    struct trace_event fast, slow;
    int rc = trace_event_decode(buf, len, prev, &fast);
    assert_true(rc == -EBADMSG || (rc > 0 && (size_t)rc <= len));
    const char *names[64], *lib[64];
    size_t n = 99, ln;
    char *text = malloc(len ? len : 1);
    int nrc = trace_event_decode_names(buf, len, names, 64, &n, text);
    if (rc < 0) {
        free(text);
        return 0;
    }
    assert_int_equal(nrc, 0);
    slow_decode_whole(s, buf, (size_t)rc, prev, &slow);
    assert_memory_equal(&fast, &slow, sizeof fast);
    assert_int_equal(trace_event_names(&s->value, lib, 64, &ln), 0);
    assert_int_equal(ln, n);
    for (size_t k = 0; k < n && k < 64; k++)
        assert_string_equal(names[k], lib[k]);
    free(text);
    return 1;
}

static void test_decode_corrupt(void **state)
{
    (void)state;
    struct slow s;
    slow_init(&s);
    make_pairs();
    size_t tried = 0, accepted = 0;
    for (size_t i = 0; i < npairs; i++) {
        size_t len;
        uint8_t *buf = encode_pair(&pairs[i], &len);
        for (size_t at = 0; at < len; at++) {
            uint8_t was = buf[at];
            const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff, (uint8_t)(was ^ 0x01),
                                       (uint8_t)(was ^ 0x80), (uint8_t)(was ^ 0x02),
                                       (uint8_t)next_random() };
            for (size_t k = 0; k < sizeof values; k++) {
                buf[at] = values[k];
                accepted += damaged(&s, buf, len, pairs[i].prev);
                tried++;
            }
            buf[at] = was;
        }
        free(buf);
    }
    /* Random bytes of random lengths, mostly small values so that more of them parse. */
    for (int round = 0; round < 200000; round++) {
        size_t len = 1 + next_random() % 300;
        uint8_t *buf = malloc(len);
        uint8_t mask = round % 2 ? 0xff : 0x07;
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)next_random() & mask;
        accepted += damaged(&s, buf, len, NULL);
        free(buf);
        tried++;
    }
    print_message("%zu damaged inputs, %zu accepted (and read the same by libavro)\n", tried,
                  accepted);
    assert_true(accepted > 1000);
    slow_fini(&s);
}

/* ---- the trace reader's two paths ------------------------------------------------------ */

static void put_string(uint8_t **p, size_t *n, const char *s, size_t len)
{
    put_varint(p, n, (int64_t)len);
    put(p, n, s, len);
}

/* A header with our schema and a space after it: the same schema to libavro, but not
 * byte for byte ours, so the reader takes libavro's path.  No jackdaw.check: the file
 * reads as one from before checksums. */
static void other_spelling_header(const uint8_t sync[TRACE_SYNC_SIZE], uint8_t **out,
                                  size_t *len)
{
    size_t sl = strlen(trace_event_schema_json);
    char *schema = malloc(sl + 2);
    memcpy(schema, trace_event_schema_json, sl);
    schema[sl] = ' ';
    schema[sl + 1] = '\0';
    *out = NULL;
    *len = 0;
    put(out, len, "Obj\x01", 4);
    put_varint(out, len, 3);
    put_string(out, len, "avro.schema", 11);
    put_string(out, len, schema, sl + 1);
    put_string(out, len, "avro.codec", 10);
    put_string(out, len, "deflate", 7);
    put_string(out, len, TRACE_META_HEADER, strlen(TRACE_META_HEADER));
    put_string(out, len, HEADER_JSON, strlen(HEADER_JSON));
    put_varint(out, len, 0);
    put(out, len, sync, TRACE_SYNC_SIZE);
    free(schema);
}

static void write_file(const char *path, const uint8_t *head, size_t head_len,
                       const uint8_t *blocks, size_t blocks_len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(head, 1, head_len, f), head_len);
    assert_int_equal(fwrite(blocks, 1, blocks_len, f), blocks_len);
    assert_int_equal(fclose(f), 0);
}

static void test_reader_paths_agree(void **state)
{
    (void)state;
    static struct trace_event evs[MAX_CASES];
    size_t n = event_cases_every_kind(evs, 1000);
    qsort(evs, n, sizeof evs[0], by_node_seq);
    /* Names on a few records, some longer than the others together. */
    static const char *const names[] = { "w-0", "w-1", "", "a-much-longer-workload-id-xyz" };
    for (size_t i = 0; i < n; i += 37) {
        evs[i].names = names;
        evs[i].nnames = (uint32_t)(1 + i % 4);
    }
    uint8_t sync[TRACE_SYNC_SIZE];
    assert_int_equal(trace_sync_new(sync), 0);
    /* Small blocks, so that a delta follows an anchor across many of them. */
    struct trace_block *enc;
    assert_int_equal(trace_block_create(&enc, 1024), 0);
    uint8_t *blocks = NULL;
    size_t blocks_len = 0;
    for (size_t i = 0; i <= n; i++) {
        int rc = i < n ? trace_block_append(enc, &evs[i]) : -ENOSPC;
        if (rc == -ENOSPC) {
            const uint8_t *data;
            size_t len;
            assert_int_equal(trace_block_finish(enc, sync, &data, &len), 0);
            put(&blocks, &blocks_len, data, len);
            if (i < n)
                rc = trace_block_append(enc, &evs[i]);
            else
                rc = 0;
        }
        assert_int_equal(rc, 0);
    }
    trace_block_destroy(enc);

    uint8_t *ours, *other;
    size_t ours_len, other_len;
    assert_int_equal(trace_file_header(HEADER_JSON, sync, &ours, &ours_len), 0);
    other_spelling_header(sync, &other, &other_len);
    char fast_path[128], slow_path[128];
    path_in_dir(fast_path, sizeof fast_path, "ours.avro");
    path_in_dir(slow_path, sizeof slow_path, "other.avro");
    write_file(fast_path, ours, ours_len, blocks, blocks_len);
    write_file(slow_path, other, other_len, blocks, blocks_len);

    struct trace_reader *fr, *sr;
    char *cause = NULL;
    assert_int_equal(trace_reader_open_verified(&fr, fast_path, &cause), 0);
    assert_int_equal(trace_reader_open(&sr, slow_path, &cause), 0);
    assert_int_equal(trace_reader_info(fr)->blocks_checked, trace_reader_info(fr)->blocks);
    assert_true(trace_reader_info(fr)->blocks > 10);
    struct trace_event a, b;
    size_t got = 0, named = 0;
    int rc;
    while ((rc = trace_reader_next(fr, &a, &cause)) == 0) {
        assert_int_equal(trace_reader_next(sr, &b, &cause), 0);
        assert_memory_equal(&a, &b, sizeof a);
        struct trace_event want = without_names(&evs[got]);
        assert_memory_equal(&a, &want, sizeof a);
        const char *const *an, *const *bn;
        size_t na, nb;
        assert_int_equal(trace_reader_names(fr, &an, &na), 0);
        assert_int_equal(trace_reader_names(sr, &bn, &nb), 0);
        assert_int_equal(na, evs[got].nnames);
        assert_int_equal(nb, na);
        for (size_t k = 0; k < na; k++) {
            assert_string_equal(an[k], evs[got].names[k]);
            assert_string_equal(bn[k], an[k]);
        }
        named += na > 0;
        got++;
    }
    assert_int_equal(rc, TRACE_READER_END);
    assert_int_equal(trace_reader_next(sr, &b, &cause), TRACE_READER_END);
    assert_int_equal(got, n);
    assert_true(named > 10);
    trace_reader_destroy(fr);
    trace_reader_destroy(sr);

    /* A second block whose deflate stream is broken (its first block header names the
     * reserved type 3): the decoder's path reads the first block, then refuses with a
     * cause that names the broken one. */
    size_t pos = 0;
    struct trace_block_view v;
    assert_int_equal(trace_block_next(blocks, blocks_len, &pos, &v), 1);
    size_t first_count = (size_t)v.count;
    assert_int_equal(trace_block_next(blocks, blocks_len, &pos, &v), 1);
    blocks[v.payload - blocks] = 0x07;
    write_file(fast_path, ours, ours_len, blocks, blocks_len);
    assert_int_equal(trace_reader_open(&fr, fast_path, &cause), 0);
    got = 0;
    while ((rc = trace_reader_next(fr, &a, &cause)) == 0)
        got++;
    assert_int_equal(rc, -EBADMSG);
    assert_int_equal(got, first_count);
    assert_non_null(cause);
    char want[64];
    snprintf(want, sizeof want, "block at offset %zu:", ours_len + v.offset);
    assert_non_null(strstr(cause, want));
    free(cause);
    trace_reader_destroy(fr);
    free(ours);
    free(other);
    free(blocks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_matches_libavro),
        cmocka_unit_test(test_decode_block),
        cmocka_unit_test(test_decode_truncated),
        cmocka_unit_test(test_decode_corrupt),
        cmocka_unit_test(test_reader_paths_agree),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
