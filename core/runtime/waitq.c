/*
 * waitq — the WaitQ's entries as encoded tasks (waitq.h says why).
 *
 * An entry is a map value of one of two shapes, told apart by the low bit, which an
 * allocation never has: inline, the low byte is (length << 1) | 1 and the next bytes are
 * the encoding past its key, up to 7 of them; otherwise a pointer to a struct blob with
 * the whole encoding, key included.
 */
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/wbuf.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/runtime/part.h"
#include "core/runtime/waitq.h"

#define KEY_BYTES 8u
#define INLINE_MAX 7u

struct blob {
    uint32_t len;
    uint8_t bytes[];
};

static bool is_inline(const void *v)
{
    return ((uintptr_t)v & 1u) != 0;
}

static void entry_free(void *v)
{
    if (!is_inline(v))
        free(v);
}

void waitq_init(struct waitq *q)
{
    u64map_init(&q->map);
}

void waitq_fini(struct waitq *q)
{
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&q->map, pos, &k, &v)) != 0;)
        entry_free(v);
    u64map_fini(&q->map);
}

void waitq_put_bytes(struct waitq *q, const uint8_t *bytes, size_t len)
{
    uint64_t key = rbuf_load_le(bytes, KEY_BYTES);
    size_t rest = len - KEY_BYTES;
    void *v;
    if (rest <= INLINE_MAX && sizeof(uintptr_t) == 8) {
        uintptr_t w = (uintptr_t)((rest << 1) | 1u);
        for (size_t i = 0; i < rest; i++)
            w |= (uintptr_t)bytes[KEY_BYTES + i] << (8 * (i + 1));
        v = (void *)w;
    } else {
        struct blob *b = xmalloc(sizeof *b + len);
        b->len = (uint32_t)len;
        memcpy(b->bytes, bytes, len);
        v = b;
    }
    void *old = u64map_put(&q->map, key, v);
    if (old)
        entry_free(old);
}

void waitq_put(struct waitq *q, struct ntask *t)
{
    struct wbuf b;
    wbuf_init(&b);
    proto_put_task(&b, &t->spec);
    waitq_put_bytes(q, b.data, b.len);
    wbuf_fini(&b);
    ntask_free(t);
}

struct ntask *waitq_take(struct waitq *q, uint64_t key)
{
    void *v = u64map_del(&q->map, key);
    if (!v)
        return NULL;
    uint8_t small[KEY_BYTES + INLINE_MAX];
    struct rbuf r;
    if (is_inline(v)) {
        uintptr_t w = (uintptr_t)v;
        size_t rest = (w & 0xffu) >> 1;
        wbuf_store_le(small, key, KEY_BYTES);
        for (size_t i = 0; i < rest; i++)
            small[KEY_BYTES + i] = (uint8_t)(w >> (8 * (i + 1)));
        rbuf_init(&r, small, KEY_BYTES + rest);
    } else {
        struct blob *b = v;
        rbuf_init(&r, b->bytes, b->len);
    }
    struct ntask *t = ntask_decode(&r);
    if (!is_inline(v))
        free(v);
    /* The bytes were decoded once before they were kept: a failure here is this
     * module's bug, not bad input. */
    if (!t)
        log_error("task %llx: its WaitQ entry no longer decodes", (unsigned long long)key);
    return t;
}

void waitq_set_attempt(struct waitq *q, uint64_t key, uint32_t attempt)
{
    struct ntask *t = waitq_take(q, key);
    if (!t)
        return;
    t->spec.attempt = attempt;
    waitq_put(q, t);
}
