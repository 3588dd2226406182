/*
 * fuzz_frame — libFuzzer harness for the frame decoder (frame_parse + frame_next), the
 * parser that sees a peer's bytes first.  Built by `make fuzz`, replayed over
 * tests/fuzz/corpus/frame by `make fuzz-replay` (README.md).
 *
 * Besides memory safety it checks that the decoder only hands out bytes inside the
 * input, and that every frame it accepts is the one the encoder would write for the
 * same messages (the encoding is canonical), so decoder and encoder cannot drift.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/wbuf.h"
#include "core/net/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

/* Decodes one frame's messages into a fresh batch; returns frame_next's last status. */
static int reencode(struct frame_view *v, const uint8_t *data, size_t size, struct frame_batch *b)
{
    uint16_t type;
    struct rbuf pl;
    int rc;
    while ((rc = frame_next(v, &type, &pl)) == 1) {
        check(pl.p >= data && pl.p + pl.left <= data + size);
        size_t at = frame_msg_begin(b, type);
        wbuf_put(&b->buf, pl.p, pl.left);
        frame_msg_end(b, at);
        /* Reading past a payload must stop at the payload. */
        while (rbuf_ok(&pl))
            rbuf_u32(&pl);
        check(pl.left == 0);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first byte picks the limit, as a connection does before and after auth. */
    if (size < 1)
        return 0;
    uint32_t max_body = (data[0] & 1) ? FRAME_MAX_BODY_PREAUTH : FRAME_MAX_BODY;
    data++;
    size--;
    size_t off = 0;
    while (off < size) {
        struct frame_view v;
        size_t frame_len = 0;
        int rc = frame_parse(data + off, size - off, max_body, &v, &frame_len);
        if (rc != FRAME_OK)
            break;
        check(frame_len >= FRAME_HEADER_BYTES && frame_len <= size - off);
        check(v.body_len <= max_body);
        struct frame_batch b;
        frame_batch_init(&b);
        rc = reencode(&v, data, size, &b);
        frame_batch_seal(&b);
        if (rc == 0 && v.count > 0 && v.body_len < FRAME_SOFT_BODY) {
            check(b.buf.len == frame_len);
            check(memcmp(b.buf.data, data + off, frame_len) == 0);
        }
        frame_batch_fini(&b);
        if (rc < 0)
            break;
        off += frame_len;
    }
    return 0;
}
