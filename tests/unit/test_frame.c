/*
 * test_frame — the frame codec against good batches, every truncation and each kind of
 * bad header or body.  Calls core/net/frame.c directly; no sockets.
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
#include "core/net/frame.h"

/* Message i of a test batch: its type and payload are a function of i, so the decoder's
 * output can be checked without keeping the input. */
static uint16_t msg_type(uint32_t i)
{
    return (uint16_t)(0x0100 + i % 7);
}

static size_t msg_size(uint32_t i, size_t scale)
{
    return (i * 37u) % 61u * scale;
}

static void put_msg(struct frame_batch *b, uint32_t i, size_t scale)
{
    size_t at = frame_msg_begin(b, msg_type(i));
    wbuf_put_u32(&b->buf, i);
    size_t n = msg_size(i, scale);
    uint8_t *p = wbuf_reserve(&b->buf, n);
    for (size_t k = 0; k < n; k++)
        p[k] = (uint8_t)(i + k);
    b->buf.len += n;
    frame_msg_end(b, at);
}

/* Decodes every frame of buf, checking messages first..first+count-1 in order; returns
 * the number of frames, and each frame's largest body through *max_body. */
static size_t check_batch(const uint8_t *data, size_t len, uint32_t count, size_t scale,
                          uint32_t *max_body)
{
    size_t off = 0, frames = 0;
    uint32_t next = 0;
    *max_body = 0;
    while (off < len) {
        struct frame_view v;
        size_t flen;
        assert_int_equal(frame_parse(data + off, len - off, FRAME_MAX_BODY, &v, &flen), FRAME_OK);
        if (v.body_len > *max_body)
            *max_body = v.body_len;
        uint16_t type;
        struct rbuf pl;
        int rc;
        while ((rc = frame_next(&v, &type, &pl)) == 1) {
            assert_int_equal(type, msg_type(next));
            assert_int_equal(rbuf_u32(&pl), next);
            size_t n = msg_size(next, scale);
            assert_int_equal(pl.left, n);
            const uint8_t *p = rbuf_bytes(&pl, n);
            for (size_t k = 0; k < n; k++)
                assert_int_equal(p[k], (uint8_t)(next + k));
            assert_true(rbuf_ok(&pl));
            next++;
        }
        assert_int_equal(rc, 0);
        off += flen;
        frames++;
    }
    assert_int_equal(off, len);
    assert_int_equal(next, count);
    return frames;
}

/* Decodes one sealed batch into (type, payload length) pairs, at most `most`. */
static size_t list_messages(const struct frame_batch *b, uint16_t *types, size_t *lens, size_t most)
{
    size_t off = 0, n = 0;
    while (off < b->buf.len) {
        struct frame_view v;
        size_t flen;
        assert_int_equal(frame_parse(b->buf.data + off, b->buf.len - off, FRAME_MAX_BODY, &v,
                                     &flen), FRAME_OK);
        uint16_t type;
        struct rbuf pl;
        int rc;
        while ((rc = frame_next(&v, &type, &pl)) == 1) {
            assert_true(n < most);
            types[n] = type;
            lens[n++] = pl.left;
        }
        assert_int_equal(rc, 0);
        off += flen;
    }
    return n;
}

static void put_joined(struct frame_batch *b, uint16_t type, size_t most, size_t len)
{
    size_t at = frame_msg_join(b, type, most);
    memset(wbuf_reserve(&b->buf, len), 0x5A, len);
    b->buf.len += len;
    frame_msg_end(b, at);
}

/* frame_msg_join extends the last message while it is of the type and under the bound;
 * another type, a seal or the bound starts a new one, and the frame's count is right. */
static void test_join_extends_the_last_message(void **state)
{
    (void)state;
    struct frame_batch b;
    frame_batch_init(&b);
    put_joined(&b, 0x0300, 100, 10); /* nothing to join: a message */
    put_joined(&b, 0x0300, 100, 10); /* joined: 20 */
    put_joined(&b, 0x0300, 100, 90); /* joined: 110, now past the bound */
    put_joined(&b, 0x0300, 100, 5);  /* a new one */
    size_t at = frame_msg_begin(&b, 0x0301);
    frame_msg_end(&b, at);
    put_joined(&b, 0x0300, 100, 7);  /* the last is another type: a new one */
    put_joined(&b, 0x0300, 100, 7);  /* joined: 14 */
    frame_batch_seal(&b);
    put_joined(&b, 0x0300, 100, 3);  /* sealed: a new frame, a new message */
    frame_batch_seal(&b);
    uint16_t types[8];
    size_t lens[8];
    assert_int_equal(list_messages(&b, types, lens, 8), 5);
    static const uint16_t want_types[] = {0x0300, 0x0300, 0x0301, 0x0300, 0x0300};
    static const size_t want_lens[] = {110, 5, 0, 14, 3};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(types[i], want_types[i]);
        assert_int_equal(lens[i], want_lens[i]);
    }
    frame_batch_fini(&b);
}

static void test_round_trip_one_frame(void **state)
{
    (void)state;
    struct frame_batch b;
    frame_batch_init(&b);
    assert_true(frame_batch_empty(&b));
    for (uint32_t i = 0; i < 500; i++)
        put_msg(&b, i, 1);
    frame_batch_seal(&b);
    size_t len = b.buf.len;
    frame_batch_seal(&b); /* idempotent */
    assert_int_equal(b.buf.len, len);
    assert_false(frame_batch_empty(&b));
    uint32_t max_body;
    assert_int_equal(check_batch(b.buf.data, b.buf.len, 500, 1, &max_body), 1);
    frame_batch_fini(&b);
    assert_true(frame_batch_empty(&b));
}

static void test_round_trip_across_soft_split(void **state)
{
    (void)state;
    struct frame_batch b;
    frame_batch_init(&b);
    /* About 16 KiB per message on average: 400 messages are several soft frames. */
    for (uint32_t i = 0; i < 400; i++)
        put_msg(&b, i, 512);
    frame_batch_seal(&b);
    uint32_t max_body;
    size_t frames = check_batch(b.buf.data, b.buf.len, 400, 512, &max_body);
    assert_true(frames >= 3);
    assert_true(max_body < FRAME_SOFT_BODY + 61 * 512 + 16);
    /* Appending after a seal opens a new frame and keeps the old ones intact. */
    put_msg(&b, 400, 512);
    frame_batch_seal(&b);
    assert_int_equal(check_batch(b.buf.data, b.buf.len, 401, 512, &max_body), frames + 1);
    frame_batch_fini(&b);
}

static void test_large_message_gets_own_frame(void **state)
{
    (void)state;
    struct frame_batch b;
    frame_batch_init(&b);
    size_t at = frame_msg_begin(&b, 0x0200);
    wbuf_put(&b.buf, "small", 5);
    frame_msg_end(&b, at);
    /* Together the two would exceed FRAME_MAX_BODY; alone the big one fits. */
    size_t big = FRAME_MAX_BODY - FRAME_MSG_HEADER_BYTES;
    at = frame_msg_begin(&b, 0x0201);
    memset(wbuf_reserve(&b.buf, big), 0xAB, big);
    b.buf.len += big;
    frame_msg_end(&b, at);
    at = frame_msg_begin(&b, 0x0202);
    frame_msg_end(&b, at);
    frame_batch_seal(&b);

    size_t off = 0;
    uint16_t want[] = {0x0200, 0x0201, 0x0202};
    size_t want_len[] = {5, big, 0};
    int seen = 0;
    while (off < b.buf.len) {
        struct frame_view v;
        size_t flen;
        assert_int_equal(frame_parse(b.buf.data + off, b.buf.len - off, FRAME_MAX_BODY, &v, &flen),
                         FRAME_OK);
        uint16_t type;
        struct rbuf pl;
        int rc;
        while ((rc = frame_next(&v, &type, &pl)) == 1) {
            assert_true(seen < 3);
            assert_int_equal(type, want[seen]);
            assert_int_equal(pl.left, want_len[seen]);
            if (seen == 1) {
                assert_int_equal(pl.p[0], 0xAB);
                assert_int_equal(pl.p[big - 1], 0xAB);
            }
            seen++;
        }
        assert_int_equal(rc, 0);
        off += flen;
    }
    assert_int_equal(seen, 3);
    frame_batch_fini(&b);
}

static void test_truncated_needs_more(void **state)
{
    (void)state;
    struct frame_batch b;
    frame_batch_init(&b);
    for (uint32_t i = 0; i < 20; i++)
        put_msg(&b, i, 1);
    frame_batch_seal(&b);
    struct frame_view v;
    size_t flen = 0;
    for (size_t n = 0; n < b.buf.len; n++) {
        /* A fresh copy of exactly n bytes, so ASan catches any read past the end. */
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, b.buf.data, n);
        assert_int_equal(frame_parse(copy, n, FRAME_MAX_BODY, &v, &flen), FRAME_NEED_MORE);
        free(copy);
    }
    assert_int_equal(frame_parse(b.buf.data, b.buf.len, FRAME_MAX_BODY, &v, &flen), FRAME_OK);
    assert_int_equal(flen, b.buf.len);
    assert_int_equal(v.count, 20);
    frame_batch_fini(&b);
}

static void header(uint8_t h[FRAME_HEADER_BYTES], uint32_t body_len, uint16_t magic,
                   uint8_t version, uint32_t count)
{
    struct wbuf w;
    wbuf_init(&w);
    wbuf_put_u32(&w, body_len);
    wbuf_put_u16(&w, magic);
    wbuf_put_u8(&w, version);
    wbuf_put_u8(&w, 0);
    wbuf_put_u32(&w, count);
    memcpy(h, w.data, FRAME_HEADER_BYTES);
    wbuf_fini(&w);
}

static void test_oversize_refused_from_header(void **state)
{
    (void)state;
    uint8_t h[FRAME_HEADER_BYTES];
    struct frame_view v;
    size_t flen;
    header(h, FRAME_MAX_BODY + 1, FRAME_MAGIC, FRAME_VERSION, 1);
    assert_int_equal(frame_parse(h, FRAME_HEADER_BYTES - 1, FRAME_MAX_BODY, &v, &flen),
                     FRAME_NEED_MORE);
    assert_int_equal(frame_parse(h, FRAME_HEADER_BYTES, FRAME_MAX_BODY, &v, &flen), -EMSGSIZE);
    header(h, 20000000, FRAME_MAGIC, FRAME_VERSION, 1);
    assert_int_equal(frame_parse(h, FRAME_HEADER_BYTES, FRAME_MAX_BODY, &v, &flen), -EMSGSIZE);
    header(h, FRAME_MAX_BODY_PREAUTH + 1, FRAME_MAGIC, FRAME_VERSION, 1);
    assert_int_equal(frame_parse(h, FRAME_HEADER_BYTES, FRAME_MAX_BODY_PREAUTH, &v, &flen),
                     -EMSGSIZE);
    /* Exactly at the limit is fine: it only needs the rest of the body. */
    header(h, FRAME_MAX_BODY, FRAME_MAGIC, FRAME_VERSION, 1);
    assert_int_equal(frame_parse(h, FRAME_HEADER_BYTES, FRAME_MAX_BODY, &v, &flen),
                     FRAME_NEED_MORE);
}

static void test_bad_magic_and_version(void **state)
{
    (void)state;
    uint8_t h[FRAME_HEADER_BYTES];
    struct frame_view v;
    size_t flen;
    header(h, 0, 0x4A45, FRAME_VERSION, 0);
    assert_int_equal(frame_parse(h, sizeof h, FRAME_MAX_BODY, &v, &flen), -EPROTO);
    header(h, 0, FRAME_MAGIC, FRAME_VERSION + 1, 0);
    assert_int_equal(frame_parse(h, sizeof h, FRAME_MAX_BODY, &v, &flen), -EPROTO);
    header(h, 0, FRAME_MAGIC, 0, 0);
    assert_int_equal(frame_parse(h, sizeof h, FRAME_MAX_BODY, &v, &flen), -EPROTO);
    header(h, 0, FRAME_MAGIC, FRAME_VERSION, 0);
    h[7] = 1; /* flags are reserved */
    assert_int_equal(frame_parse(h, sizeof h, FRAME_MAX_BODY, &v, &flen), -EPROTO);
    /* Bad magic wins over an oversize length: garbage is reported as garbage. */
    header(h, 0xFFFFFFFFu, 0x0000, FRAME_VERSION, 0);
    assert_int_equal(frame_parse(h, sizeof h, FRAME_MAX_BODY, &v, &flen), -EPROTO);
    header(h, 0, FRAME_MAGIC, FRAME_VERSION, 0);
    assert_int_equal(frame_parse(h, sizeof h, FRAME_MAX_BODY, &v, &flen), FRAME_OK);
    assert_int_equal(flen, FRAME_HEADER_BYTES);
    uint16_t type;
    struct rbuf pl;
    assert_int_equal(frame_next(&v, &type, &pl), 0);
}

/* A frame whose body is `body` and whose header announces `count` messages. */
static void raw_frame(struct wbuf *w, uint32_t count, const struct wbuf *body)
{
    wbuf_init(w);
    wbuf_put_u32(w, (uint32_t)body->len);
    wbuf_put_u16(w, FRAME_MAGIC);
    wbuf_put_u8(w, FRAME_VERSION);
    wbuf_put_u8(w, 0);
    wbuf_put_u32(w, count);
    wbuf_put(w, body->data, body->len);
}

/* Parses one frame and reads all its messages: the first error, or 0. */
static int decode_all(const struct wbuf *w, uint32_t *messages)
{
    struct frame_view v;
    size_t flen;
    *messages = 0;
    int rc = frame_parse(w->data, w->len, FRAME_MAX_BODY, &v, &flen);
    if (rc != FRAME_OK)
        return rc;
    uint16_t type;
    struct rbuf pl;
    while ((rc = frame_next(&v, &type, &pl)) == 1)
        (*messages)++;
    return rc;
}

static void test_bad_bodies(void **state)
{
    (void)state;
    struct wbuf body, w;
    uint32_t n;

    /* A message whose payload runs past the body. */
    wbuf_init(&body);
    wbuf_put_u16(&body, 0x0100);
    wbuf_put_u32(&body, 10);
    wbuf_put(&body, "abc", 3);
    raw_frame(&w, 1, &body);
    assert_int_equal(decode_all(&w, &n), -EBADMSG);
    assert_int_equal(n, 0);
    wbuf_fini(&w);
    /* Same with a length so large it would wrap a careless addition. */
    wbuf_reset(&body);
    wbuf_put_u16(&body, 0x0100);
    wbuf_put_u32(&body, 0xFFFFFFFFu);
    raw_frame(&w, 1, &body);
    assert_int_equal(decode_all(&w, &n), -EBADMSG);
    wbuf_fini(&w);

    /* One good message, but the header announces two. */
    wbuf_reset(&body);
    wbuf_put_u16(&body, 0x0100);
    wbuf_put_u32(&body, 3);
    wbuf_put(&body, "abc", 3);
    raw_frame(&w, 2, &body);
    assert_int_equal(decode_all(&w, &n), -EBADMSG);
    wbuf_fini(&w);
    /* ... announces none: the message is trailing garbage. */
    raw_frame(&w, 0, &body);
    assert_int_equal(decode_all(&w, &n), -EBADMSG);
    assert_int_equal(n, 0);
    wbuf_fini(&w);
    /* ... announces one, but three stray bytes follow it. */
    wbuf_put(&body, "xyz", 3);
    raw_frame(&w, 1, &body);
    assert_int_equal(decode_all(&w, &n), -EBADMSG);
    assert_int_equal(n, 1);
    wbuf_fini(&w);
    /* ... a partial message header follows. */
    wbuf_reset(&body);
    wbuf_put_u16(&body, 0x0100);
    wbuf_put_u32(&body, 6);
    wbuf_put(&body, "abcdef", 6);
    wbuf_put_u16(&body, 0x0100);
    raw_frame(&w, 2, &body);
    assert_int_equal(decode_all(&w, &n), -EBADMSG);
    assert_int_equal(n, 1);
    wbuf_fini(&w);
    /* More messages announced than the body could hold is refused from the header. */
    uint8_t h[FRAME_HEADER_BYTES];
    struct frame_view v;
    size_t flen;
    header(h, 12, FRAME_MAGIC, FRAME_VERSION, 3);
    assert_int_equal(frame_parse(h, sizeof h, FRAME_MAX_BODY, &v, &flen), -EBADMSG);
    wbuf_fini(&body);
}

static void test_write_single_and_rbuf_overrun(void **state)
{
    (void)state;
    struct wbuf w;
    wbuf_init(&w);
    frame_write_single(&w, 0x0003, "\x01\x02\x03\x04", 4);
    frame_write_single(&w, 0x0104, "zz", 2);
    struct frame_view v;
    size_t flen;
    assert_int_equal(frame_parse(w.data, w.len, FRAME_MAX_BODY_PREAUTH, &v, &flen), FRAME_OK);
    assert_int_equal(flen, FRAME_HEADER_BYTES + FRAME_MSG_HEADER_BYTES + 4);
    uint16_t type;
    struct rbuf pl;
    assert_int_equal(frame_next(&v, &type, &pl), 1);
    assert_int_equal(type, 0x0003);
    /* Reading past the payload marks it bad and never reaches the next frame's bytes. */
    assert_int_equal(rbuf_u32(&pl), 0x04030201u);
    assert_true(rbuf_ok(&pl));
    assert_int_equal(rbuf_u8(&pl), 0);
    assert_false(rbuf_ok(&pl));
    assert_int_equal(rbuf_u32(&pl), 0);
    assert_null(rbuf_bytes(&pl, 1));
    assert_int_equal(frame_next(&v, &type, &pl), 0);

    assert_int_equal(frame_parse(w.data + flen, w.len - flen, FRAME_MAX_BODY, &v, &flen), FRAME_OK);
    assert_int_equal(frame_next(&v, &type, &pl), 1);
    assert_int_equal(type, 0x0104);
    assert_int_equal(rbuf_u64(&pl), 0);
    assert_false(rbuf_ok(&pl));
    wbuf_fini(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_one_frame),
        cmocka_unit_test(test_join_extends_the_last_message),
        cmocka_unit_test(test_round_trip_across_soft_split),
        cmocka_unit_test(test_large_message_gets_own_frame),
        cmocka_unit_test(test_truncated_needs_more),
        cmocka_unit_test(test_oversize_refused_from_header),
        cmocka_unit_test(test_bad_magic_and_version),
        cmocka_unit_test(test_bad_bodies),
        cmocka_unit_test(test_write_single_and_rbuf_overrun),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
