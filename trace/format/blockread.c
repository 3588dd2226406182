/*
 * blockread — see blockread.h.  The payload is raw deflate (no zlib header), as
 * trace/format/block.c writes it; its uncompressed size is not framed, so the buffer
 * grows as inflate asks, up to the scanner's bound on a block.  Records are decoded by
 * trace_event_decode straight from that buffer: no libavro, no allocation per record.
 */
#include "trace/format/blockread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "trace/format/block.h"

struct trace_block_reader {
    z_stream z;
    uint8_t *raw;                  /* owned: the inflated records */
    size_t cap;
};

int trace_block_reader_create(struct trace_block_reader **out)
{
    *out = NULL;
    struct trace_block_reader *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    if (inflateInit2(&r->z, -15) != Z_OK) {
        free(r);
        return -ENOMEM;
    }
    *out = r;
    return 0;
}

void trace_block_reader_destroy(struct trace_block_reader *r)
{
    if (!r)
        return;
    inflateEnd(&r->z);
    free(r->raw);
    free(r);
}

/* Inflates the payload into r->raw; the inflated length, or a negative errno. */
static long inflate_all(struct trace_block_reader *r, const uint8_t *in, size_t len)
{
    inflateReset(&r->z);
    r->z.next_in = (Bytef *)(uintptr_t)in;
    r->z.avail_in = (uInt)len;
    size_t have = 0;
    for (;;) {
        if (have == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : TRACE_BLOCK_DEFAULT_RAW;
            if (cap > TRACE_BLOCK_MAX_BYTES)
                return -EMSGSIZE;
            uint8_t *p = realloc(r->raw, cap);
            if (!p)
                return -ENOMEM;
            r->raw = p;
            r->cap = cap;
        }
        r->z.next_out = r->raw + have;
        r->z.avail_out = (uInt)(r->cap - have);
        int zr = inflate(&r->z, Z_NO_FLUSH);
        have = r->cap - r->z.avail_out;
        if (zr == Z_STREAM_END)
            return (long)have;
        if (zr != Z_OK && zr != Z_BUF_ERROR)
            return -EBADMSG;
        if (zr == Z_BUF_ERROR && r->z.avail_in == 0)
            return -EBADMSG; /* the stream stops before its end */
    }
}

int trace_block_reader_inflate(struct trace_block_reader *r, const struct trace_block_view *v,
                               const uint8_t **raw, size_t *len)
{
    long n = inflate_all(r, v->payload, v->size);
    if (n < 0)
        return (int)n;
    *raw = r->raw;
    *len = (size_t)n;
    return 0;
}

int trace_block_reader_decode(struct trace_block_reader *r, const uint8_t *data, size_t len,
                              void (*fn)(void *ctx, const struct trace_event *ev), void *ctx,
                              char *why, size_t why_cap)
{
    size_t pos = 0;
    struct trace_block_view v;
    if (trace_block_next(data, len, &pos, &v) != 1) {
        snprintf(why, why_cap, "block framing (count, size or sync marker)");
        return -EBADMSG;
    }
    const uint8_t *raw;
    size_t raw_len;
    int rc = trace_block_reader_inflate(r, &v, &raw, &raw_len);
    if (rc == -ENOMEM) {
        snprintf(why, why_cap, "out of memory");
        return rc;
    }
    if (rc < 0) {
        snprintf(why, why_cap, "deflate payload of %zu bytes: %s", v.size,
                 rc == -EMSGSIZE ? "inflates past the block bound" : "corrupt or cut");
        return -EBADMSG;
    }
    /* Bytes left after the last record are ignored, as libavro's reader does. */
    struct trace_event ev, prev;
    size_t at = 0;
    for (int64_t i = 0; i < v.count; i++) {
        int n = trace_event_decode(raw + at, raw_len - at, i ? &prev : NULL, &ev);
        if (n < 0) {
            snprintf(why, why_cap, "record %lld of %lld (at byte %zu of %zu inflated) does "
                     "not decode", (long long)i, (long long)v.count, at, raw_len);
            return -EBADMSG;
        }
        at += (size_t)n;
        fn(ctx, &ev);
        prev = ev;
    }
    return 0;
}
