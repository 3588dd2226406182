/*
 * wbuf / rbuf — see wbuf.h.  Byte-by-byte little-endian so the wire format does not
 * depend on the host's byte order or alignment.
 */
#include "core/base/wbuf.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

void wbuf_init(struct wbuf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void wbuf_fini(struct wbuf *b)
{
    free(b->data);
    wbuf_init(b);
}

void wbuf_reset(struct wbuf *b)
{
    b->len = 0;
}

uint8_t *wbuf__grow(struct wbuf *b, size_t n)
{
    b->data = xgrow(b->data, &b->cap, b->len + n, 1);
    return b->data + b->len;
}

void wbuf_put_f64(struct wbuf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    wbuf_put_u64(b, u);
}

void wbuf_put_str(struct wbuf *b, const char *s)
{
    wbuf_put_strn(b, s, s ? strlen(s) : 0);
}

void wbuf_put_strn(struct wbuf *b, const char *s, size_t n)
{
    wbuf_put_u32(b, (uint32_t)n);
    wbuf_put(b, s, n);
}

void wbuf_patch_u32(struct wbuf *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b->data[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

void rbuf_init(struct rbuf *r, const void *p, size_t n)
{
    r->p = p;
    r->left = n;
    r->bad = false;
}

double rbuf_f64(struct rbuf *r)
{
    uint64_t u = rbuf_get_le(r, 8);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

const char *rbuf_str(struct rbuf *r, uint32_t *len, uint32_t max)
{
    uint32_t n = rbuf_u32(r);
    if (n > max) {
        r->bad = true;
        r->left = 0;
        *len = 0;
        return NULL;
    }
    const char *s = (const char *)rbuf_bytes(r, n);
    *len = s ? n : 0;
    return s;
}

char *rbuf_strdup(struct rbuf *r, uint32_t max)
{
    uint32_t n;
    const char *s = rbuf_str(r, &n, max);
    if (!s && !rbuf_ok(r))
        return NULL;
    return xstrndup(s ? s : "", n);
}
