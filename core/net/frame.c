/*
 * frame — encoder and bounds-checked decoder of the wire framing (see frame.h).
 *
 * Owns the batch buffers only.  Called by core/net/conn.c for every connection in both
 * directions, and by the unit tests and the fuzzer, which feed it arbitrary bytes.  The
 * decoder trusts nothing it has not checked against `len`: every length read from the
 * wire is compared with what is actually there before anything is indexed by it.
 */
#include "core/net/frame.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The header is written with zero length and count; seal patches them. */
static void put_header(struct wbuf *buf, uint32_t body_len, uint32_t count)
{
    wbuf_put_u32(buf, body_len);
    wbuf_put_u16(buf, FRAME_MAGIC);
    wbuf_put_u8(buf, FRAME_VERSION);
    wbuf_put_u8(buf, 0);
    wbuf_put_u32(buf, count);
}

void frame_batch_init(struct frame_batch *b)
{
    wbuf_init(&b->buf);
    b->open_at = 0;
    b->open_count = 0;
    b->open = 0;
    b->last_at = SIZE_MAX;
}

void frame_batch_fini(struct frame_batch *b)
{
    wbuf_fini(&b->buf);
    frame_batch_init(b);
}

static size_t open_body_len(const struct frame_batch *b)
{
    return b->buf.len - b->open_at - FRAME_HEADER_BYTES;
}

size_t frame_msg_begin(struct frame_batch *b, uint16_t type)
{
    if (b->open && open_body_len(b) >= FRAME_SOFT_BODY)
        frame_batch_seal(b);
    if (!b->open) {
        b->open_at = b->buf.len;
        b->open_count = 0;
        b->open = 1;
        put_header(&b->buf, 0, 0);
    }
    size_t at = b->buf.len;
    wbuf_put_u16(&b->buf, type);
    wbuf_put_u32(&b->buf, 0);
    return at;
}

size_t frame_msg_join(struct frame_batch *b, uint16_t type, size_t most)
{
    if (b->open && b->last_at != SIZE_MAX && open_body_len(b) < FRAME_SOFT_BODY) {
        const uint8_t *h = b->buf.data + b->last_at;
        if (get_u16(h) == type && get_u32(h + 2) < most)
            return b->last_at;
    }
    return frame_msg_begin(b, type);
}

void frame_msg_end(struct frame_batch *b, size_t at)
{
    assert(b->open && at >= b->open_at + FRAME_HEADER_BYTES && at + FRAME_MSG_HEADER_BYTES <= b->buf.len);
    size_t payload_len = b->buf.len - at - FRAME_MSG_HEADER_BYTES;
    /* A message that will never fit a frame is a bug in the caller, not a wire event. */
    assert(payload_len + FRAME_MSG_HEADER_BYTES <= FRAME_MAX_BODY);
    wbuf_patch_u32(&b->buf, at + 2, (uint32_t)payload_len);
    /* A joined message (frame_msg_join) was counted when it began. */
    uint32_t others = b->open_count - (at == b->last_at);
    /*
     * The soft split happens when a message begins, so a large message can push a frame
     * that already holds others past what the receiver accepts.  Then the message moves
     * into a frame of its own: every frame stays under FRAME_MAX_BODY as long as each
     * message alone does.
     */
    if (open_body_len(b) > FRAME_MAX_BODY && others > 0) {
        size_t msg_len = b->buf.len - at;
        b->open_count = others;
        wbuf_reserve(&b->buf, FRAME_HEADER_BYTES);
        memmove(b->buf.data + at + FRAME_HEADER_BYTES, b->buf.data + at, msg_len);
        size_t end = b->buf.len;
        b->buf.len = at;
        frame_batch_seal(b);
        b->open_at = at;
        b->open = 1;
        put_header(&b->buf, 0, 0);
        b->buf.len = end + FRAME_HEADER_BYTES;
        b->open_count = 0;
        at = b->open_at + FRAME_HEADER_BYTES;
    } else if (at == b->last_at) {
        return;             /* a joined message: counted when it began */
    }
    b->open_count++;
    b->last_at = at;
}

void frame_batch_seal(struct frame_batch *b)
{
    if (!b->open)
        return;
    wbuf_patch_u32(&b->buf, b->open_at, (uint32_t)open_body_len(b));
    wbuf_patch_u32(&b->buf, b->open_at + 8, b->open_count);
    b->open = 0;
    b->open_count = 0;
    b->last_at = SIZE_MAX;
}

int frame_batch_empty(const struct frame_batch *b)
{
    return b->buf.len == 0;
}

int frame_parse(const uint8_t *data, size_t len, uint32_t max_body, struct frame_view *view,
                size_t *frame_len)
{
    if (len < FRAME_HEADER_BYTES)
        return FRAME_NEED_MORE;
    uint32_t body_len = get_u32(data);
    if (get_u16(data + 4) != FRAME_MAGIC || data[6] != FRAME_VERSION || data[7] != 0)
        return -EPROTO;
    if (body_len > max_body)
        return -EMSGSIZE;
    uint32_t count = get_u32(data + 8);
    /* Refused now rather than after waiting for a body that cannot hold them. */
    if (count > body_len / FRAME_MSG_HEADER_BYTES)
        return -EBADMSG;
    if (len - FRAME_HEADER_BYTES < body_len)
        return FRAME_NEED_MORE;
    view->body = data + FRAME_HEADER_BYTES;
    view->body_len = body_len;
    view->count = count;
    view->seen = 0;
    view->offset = 0;
    *frame_len = FRAME_HEADER_BYTES + (size_t)body_len;
    return FRAME_OK;
}

int frame_next(struct frame_view *view, uint16_t *type, struct rbuf *payload)
{
    size_t left = view->body_len - view->offset;
    if (view->seen == view->count)
        return left == 0 ? 0 : -EBADMSG;
    if (left < FRAME_MSG_HEADER_BYTES)
        return -EBADMSG;
    const uint8_t *p = view->body + view->offset;
    uint32_t payload_len = get_u32(p + 2);
    if (payload_len > left - FRAME_MSG_HEADER_BYTES)
        return -EBADMSG;
    *type = get_u16(p);
    rbuf_init(payload, p + FRAME_MSG_HEADER_BYTES, payload_len);
    view->offset += FRAME_MSG_HEADER_BYTES + (size_t)payload_len;
    view->seen++;
    return 1;
}

void frame_write_single(struct wbuf *out, uint16_t type, const void *payload, size_t len)
{
    assert(len + FRAME_MSG_HEADER_BYTES <= FRAME_MAX_BODY);
    put_header(out, (uint32_t)(len + FRAME_MSG_HEADER_BYTES), 1);
    wbuf_put_u16(out, type);
    wbuf_put_u32(out, (uint32_t)len);
    wbuf_put(out, payload, len);
}
