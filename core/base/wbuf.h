/*
 * wbuf / rbuf — little-endian encoding into a growable buffer and bounds-checked
 * decoding from a borrowed one.
 *
 * Owns nothing beyond the wbuf's bytes.  Called by the frame codec, the protocol
 * messages and the metadata store.  The reader never reads past its end: the first
 * overrun sets `bad` and every later get returns zero, so a decoder reads all fields
 * and checks `rbuf_ok()` once at the end instead of after every field.
 */
#ifndef JACKDAW_WBUF_H
#define JACKDAW_WBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct wbuf {
    uint8_t *data; /* owned; NULL while empty */
    size_t len;
    size_t cap;
};

void wbuf_init(struct wbuf *b);
void wbuf_fini(struct wbuf *b);
void wbuf_reset(struct wbuf *b);
/* wbuf_reserve's slow path: grows the buffer to hold n more bytes. */
uint8_t *wbuf__grow(struct wbuf *b, size_t n);

/* The puts and gets below are inline: every message is a few dozen of them, and as calls
 * they were a fifth of a node's instructions per task.  Little-endian byte by byte,
 * written out rather than looped, which the compiler merges into one load or store
 * (a loop stayed a loop: six instructions a byte). */
static inline void wbuf_store_le(uint8_t *d, uint64_t v, int n)
{
    switch (n) {
    case 8:
        d[7] = (uint8_t)(v >> 56);
        d[6] = (uint8_t)(v >> 48);
        d[5] = (uint8_t)(v >> 40);
        d[4] = (uint8_t)(v >> 32);
        /* fall through */
    case 4:
        d[3] = (uint8_t)(v >> 24);
        d[2] = (uint8_t)(v >> 16);
        /* fall through */
    case 2:
        d[1] = (uint8_t)(v >> 8);
        /* fall through */
    default:
        d[0] = (uint8_t)v;
    }
}

static inline uint64_t rbuf_load_le(const uint8_t *p, int n)
{
    switch (n) {
    case 8:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
               (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
               (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
    case 4:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
               (uint64_t)p[3] << 24;
    case 2:
        return (uint64_t)p[0] | (uint64_t)p[1] << 8;
    default:
        return p[0];
    }
}

/* Makes room for n more bytes and returns where they go (len is not advanced). */
static inline uint8_t *wbuf_reserve(struct wbuf *b, size_t n)
{
    if (b->cap - b->len >= n)
        return b->data + b->len;
    return wbuf__grow(b, n);
}

static inline void wbuf_put(struct wbuf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    memcpy(wbuf_reserve(b, n), p, n);
    b->len += n;
}

static inline void wbuf_put_le(struct wbuf *b, uint64_t v, int n)
{
    wbuf_store_le(wbuf_reserve(b, (size_t)n), v, n);
    b->len += (size_t)n;
}

static inline void wbuf_put_u8(struct wbuf *b, uint8_t v)
{
    wbuf_put_le(b, v, 1);
}

static inline void wbuf_put_u16(struct wbuf *b, uint16_t v)
{
    wbuf_put_le(b, v, 2);
}

static inline void wbuf_put_u32(struct wbuf *b, uint32_t v)
{
    wbuf_put_le(b, v, 4);
}

static inline void wbuf_put_u64(struct wbuf *b, uint64_t v)
{
    wbuf_put_le(b, v, 8);
}

static inline void wbuf_put_i64(struct wbuf *b, int64_t v)
{
    wbuf_put_le(b, (uint64_t)v, 8);
}

void wbuf_put_f64(struct wbuf *b, double v);
/* An unsigned varint (LEB128, 1 to 10 bytes; small counts and sizes take one): records
 * that are mostly small numbers and zeros (core/kvs/tmd.c, proto's task spec). */
static inline void wbuf_put_uv(struct wbuf *b, uint64_t v)
{
    uint8_t *p = wbuf_reserve(b, 10);
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    b->len += n;
}
/* u32 length then bytes; NULL is written as the empty string. */
void wbuf_put_str(struct wbuf *b, const char *s);
void wbuf_put_strn(struct wbuf *b, const char *s, size_t n);
/* Overwrites 4 bytes at `at` (for lengths known only after the body is written). */
void wbuf_patch_u32(struct wbuf *b, size_t at, uint32_t v);

struct rbuf {
    const uint8_t *p; /* borrowed */
    size_t left;
    bool bad;
};

void rbuf_init(struct rbuf *r, const void *p, size_t n);
static inline bool rbuf_ok(const struct rbuf *r)
{
    return !r->bad;
}
/* Borrows n bytes; NULL (and bad) on overrun. */
static inline const uint8_t *rbuf_bytes(struct rbuf *r, size_t n)
{
    if (r->bad || n > r->left) {
        r->bad = true;
        r->left = 0;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}

static inline uint64_t rbuf_get_le(struct rbuf *r, int n)
{
    const uint8_t *p = rbuf_bytes(r, (size_t)n);
    return p ? rbuf_load_le(p, n) : 0;
}

static inline uint8_t rbuf_u8(struct rbuf *r)
{
    return (uint8_t)rbuf_get_le(r, 1);
}

static inline uint16_t rbuf_u16(struct rbuf *r)
{
    return (uint16_t)rbuf_get_le(r, 2);
}

static inline uint32_t rbuf_u32(struct rbuf *r)
{
    return (uint32_t)rbuf_get_le(r, 4);
}

static inline uint64_t rbuf_u64(struct rbuf *r)
{
    return rbuf_get_le(r, 8);
}

static inline int64_t rbuf_i64(struct rbuf *r)
{
    return (int64_t)rbuf_get_le(r, 8);
}

double rbuf_f64(struct rbuf *r);
/* A varint of wbuf_put_uv; bad (and 0) when truncated, longer than it needs to be (one
 * spelling per value) or past 64 bits. */
static inline uint64_t rbuf_uv(struct rbuf *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0, i = 0; i < 10 && !r->bad && r->left; i++, shift += 7) {
        uint8_t c = *r->p++;
        r->left--;
        if (i == 9 && c > 1)
            break;              /* past 64 bits */
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            if (c == 0 && i > 0)
                break;          /* overlong: a trailing zero byte */
            return v;
        }
    }
    r->bad = true;
    r->left = 0;
    return 0;
}
/* A value an encoding says is there (a mask bit): not zero, or r goes bad — one
 * spelling per value, since a zero is spelled by leaving it out. */
static inline uint64_t rbuf_nonzero(struct rbuf *r, uint64_t v)
{
    if (!v) {
        r->bad = true;
        r->left = 0;
    }
    return v;
}
/* A varint that must fit 32 bits. */
static inline uint32_t rbuf_uv32(struct rbuf *r)
{
    uint64_t v = rbuf_uv(r);
    if (v > UINT32_MAX) {
        r->bad = true;
        r->left = 0;
        return 0;
    }
    return (uint32_t)v;
}
/* A wbuf_put_str string: borrowed pointer (not NUL-terminated) and its length.
 * Strings longer than `max` mark the reader bad. */
const char *rbuf_str(struct rbuf *r, uint32_t *len, uint32_t max);
/* Same, copied into a fresh NUL-terminated string (NULL on error). */
char *rbuf_strdup(struct rbuf *r, uint32_t max);

#endif
