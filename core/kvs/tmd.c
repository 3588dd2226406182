/*
 * tmd — record lifetime and wire codec (see tmd.h).  Array counts are checked against
 * the bytes left before anything is allocated, so a hostile count cannot make a
 * daemon allocate gigabytes.
 */
#include "core/kvs/tmd.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"

void tmd_set_children(struct tmd *t, const uint64_t *keys, uint32_t n)
{
    t->num_children = n;
    if (n == 1) {
        t->child = keys[0];
    } else if (n > 1) {
        t->children = xmalloc(n * sizeof *t->children);
        memcpy(t->children, keys, n * sizeof *keys);
    } else {
        t->children = NULL;
    }
}

void tmd_set_spec(struct tmd *t, const void *spec, uint32_t len)
{
    if (!(t->flags & TMD_FLAG_SPEC_LENT))
        free(t->spec);
    t->flags &= (uint8_t)~TMD_FLAG_SPEC_LENT;
    t->spec = NULL;
    t->spec_len = len;
    if (len) {
        t->spec = xmalloc(len);
        memcpy(t->spec, spec, len);
    }
}

const struct tmd_late tmd_late_none;

struct tmd_late *tmd_late_mut(struct tmd *t)
{
    if (!t->late)
        t->late = xcalloc(1, sizeof *t->late);
    return t->late;
}

void tmd_fini(struct tmd *t)
{
    if (t->num_children > 1)
        free(t->children);
    if (t->late) {
        free(t->late->parent_list);
        free(t->late->history);
        free(t->late);
    }
    if (!(t->flags & TMD_FLAG_SPEC_LENT))
        free(t->spec);
    t->flags &= (uint8_t)~TMD_FLAG_SPEC_LENT;
    t->num_children = 0;
    t->children = NULL;
    t->late = NULL;
    t->spec = NULL;
    t->spec_len = 0;
}

/* The second byte of a record on the wire: which of the fields that are usually zero
 * follow (a bit is set exactly when its field is not zero: one spelling per record). */
enum {
    W_RUNNER = 1u << 0,
    W_DATA_SIZE = 1u << 1,
    W_ALL_DATA_SIZE = 1u << 2,
    W_T_READY = 1u << 3,
    W_T_START = 1u << 4,
    W_T_END = 1u << 5,
    W_PARENTS = 1u << 6,
    W_HISTORY = 1u << 7,
};

void tmd_put(struct wbuf *b, const struct tmd *t)
{
    const struct tmd_late *l = tmd_late(t);
    uint8_t flags = t->flags & TMD_WIRE_FLAGS;
    bool ext = t->spec_len || l->attempt || flags;
    uint32_t done = tmd_parents_done(t);
    uint8_t mask = (uint8_t)((l->runner ? W_RUNNER : 0) | (l->data_size ? W_DATA_SIZE : 0) |
                             (l->all_data_size ? W_ALL_DATA_SIZE : 0) |
                             (t->t_ready ? W_T_READY : 0) | (l->t_start ? W_T_START : 0) |
                             (l->t_end ? W_T_END : 0) | (done ? W_PARENTS : 0) |
                             (l->num_history ? W_HISTORY : 0));
    wbuf_put_u64(b, t->key);
    wbuf_put_u8(b, (uint8_t)(t->status | (ext ? TMD_WIRE_EXT : 0)));
    wbuf_put_u8(b, mask);
    wbuf_put_uv(b, t->holder);
    wbuf_put_uv(b, t->num_parents);
    wbuf_put_uv(b, t->num_wait_parent);
    if (mask & W_RUNNER)
        wbuf_put_uv(b, l->runner);
    if (mask & W_DATA_SIZE)
        wbuf_put_uv(b, l->data_size);
    if (mask & W_ALL_DATA_SIZE)
        wbuf_put_uv(b, l->all_data_size);
    wbuf_put_i64(b, t->t_submit);
    if (mask & W_T_READY)
        wbuf_put_i64(b, t->t_ready);
    if (mask & W_T_START)
        wbuf_put_i64(b, l->t_start);
    if (mask & W_T_END)
        wbuf_put_i64(b, l->t_end);
    wbuf_put_uv(b, t->num_children);
    for (uint32_t i = 0; i < t->num_children; i++)
        wbuf_put_u64(b, tmd_child(t, i));
    for (uint32_t i = 0; i < done; i++) {
        wbuf_put_u64(b, l->parent_list[i].object);
        wbuf_put_uv(b, l->parent_list[i].bytes);
        wbuf_put_uv(b, l->parent_list[i].node);
    }
    if (mask & W_HISTORY) {
        wbuf_put_uv(b, l->num_history);
        for (uint32_t i = 0; i < l->num_history; i++)
            wbuf_put_uv(b, l->history[i]);
    }
    if (ext) {
        wbuf_put_u8(b, flags);
        wbuf_put_uv(b, l->attempt);
        wbuf_put_uv(b, t->spec_len);
        wbuf_put(b, t->spec, t->spec_len);
    }
}

static int get(struct rbuf *r, struct tmd *t, bool lend)
{
    memset(t, 0, sizeof *t);
    /* The later fields are read here and kept only when one is not 0. */
    struct tmd_late l = {0};
    t->key = rbuf_u64(r);
    uint8_t status = rbuf_u8(r);
    uint8_t mask = rbuf_u8(r);
    t->status = status & (uint8_t)~TMD_WIRE_EXT;
    t->holder = rbuf_uv32(r);
    t->num_parents = rbuf_uv32(r);
    t->num_wait_parent = rbuf_uv32(r);
    if (mask & W_RUNNER)
        l.runner = (uint32_t)rbuf_nonzero(r, rbuf_uv32(r));
    if (mask & W_DATA_SIZE)
        l.data_size = rbuf_nonzero(r, rbuf_uv(r));
    if (mask & W_ALL_DATA_SIZE)
        l.all_data_size = rbuf_nonzero(r, rbuf_uv(r));
    t->t_submit = rbuf_i64(r);
    if (mask & W_T_READY)
        t->t_ready = (int64_t)rbuf_nonzero(r, (uint64_t)rbuf_i64(r));
    if (mask & W_T_START)
        l.t_start = (int64_t)rbuf_nonzero(r, (uint64_t)rbuf_i64(r));
    if (mask & W_T_END)
        l.t_end = (int64_t)rbuf_nonzero(r, (uint64_t)rbuf_i64(r));
    uint32_t n = rbuf_uv32(r);
    if (!rbuf_ok(r) || t->status >= TASK_STATUS_COUNT || t->num_wait_parent > t->num_parents ||
        n > r->left / 8 || !(mask & W_PARENTS) != !tmd_parents_done(t))
        goto bad;
    t->num_children = n;
    if (n == 1) {
        t->child = rbuf_u64(r);
    } else if (n > 1) {
        t->children = xmalloc(n * sizeof *t->children);
        for (uint32_t i = 0; i < n; i++)
            t->children[i] = rbuf_u64(r);
    }
    n = tmd_parents_done(t);
    /* Each parent is at least 10 bytes (a key and two one-byte varints). */
    if (n > r->left / 10)
        goto bad;
    if (n) {
        l.parent_list = xcalloc(n, sizeof *l.parent_list);
        for (uint32_t i = 0; i < n; i++) {
            l.parent_list[i].object = rbuf_u64(r);
            l.parent_list[i].bytes = rbuf_uv(r);
            l.parent_list[i].node = rbuf_uv32(r);
        }
    }
    if (mask & W_HISTORY) {
        n = rbuf_uv32(r);
        if (!rbuf_ok(r) || !n || n > r->left || n > TMD_MAX_HISTORY)
            goto bad;
        l.num_history = (uint16_t)n;
        l.history = xmalloc(n * sizeof *l.history);
        for (uint32_t i = 0; i < n; i++)
            l.history[i] = rbuf_uv32(r);
    }
    if (status & TMD_WIRE_EXT) {
        /* A peer cannot set a shard-local mark; and the extension is there only when it
         * says something (one spelling per record: tmd_put's). */
        uint8_t flags = rbuf_u8(r);
        t->flags = flags;
        l.attempt = rbuf_uv32(r);
        n = rbuf_uv32(r);
        if (!rbuf_ok(r) || n > r->left || (flags & (uint8_t)~TMD_WIRE_FLAGS) ||
            (!flags && !l.attempt && !n))
            goto bad;
        const uint8_t *spec = rbuf_bytes(r, n);
        if (n && lend) {
            t->spec = (uint8_t *)(uintptr_t)spec; /* never written through: lent */
            t->spec_len = n;
            t->flags |= TMD_FLAG_SPEC_LENT;
        } else if (n) {
            tmd_set_spec(t, spec, n);
        }
    }
    if (!rbuf_ok(r))
        goto bad;
    if (l.data_size || l.all_data_size || l.t_start || l.t_end || l.parent_list ||
        l.history || l.runner || l.attempt)
        *tmd_late_mut(t) = l;
    return 0;
bad:
    free(l.parent_list);
    free(l.history);
    tmd_fini(t);
    return -EBADMSG;
}

int tmd_get(struct rbuf *r, struct tmd *t)
{
    return get(r, t, false);
}

int tmd_get_lent(struct rbuf *r, struct tmd *t)
{
    return get(r, t, true);
}

int tmd_skip(struct rbuf *r, uint64_t *key)
{
    /* The checks of tmd_get, in its order, on the same counts. */
    *key = rbuf_u64(r);
    uint8_t status = rbuf_u8(r);
    uint8_t mask = rbuf_u8(r);
    rbuf_uv32(r); /* holder */
    uint32_t num_parents = rbuf_uv32(r);
    uint32_t num_wait_parent = rbuf_uv32(r);
    if (mask & W_RUNNER)
        rbuf_nonzero(r, rbuf_uv32(r));
    if (mask & W_DATA_SIZE)
        rbuf_nonzero(r, rbuf_uv(r));
    if (mask & W_ALL_DATA_SIZE)
        rbuf_nonzero(r, rbuf_uv(r));
    rbuf_i64(r); /* t_submit */
    if (mask & W_T_READY)
        rbuf_nonzero(r, (uint64_t)rbuf_i64(r));
    if (mask & W_T_START)
        rbuf_nonzero(r, (uint64_t)rbuf_i64(r));
    if (mask & W_T_END)
        rbuf_nonzero(r, (uint64_t)rbuf_i64(r));
    uint32_t n = rbuf_uv32(r);
    if (!rbuf_ok(r) || (status & (uint8_t)~TMD_WIRE_EXT) >= TASK_STATUS_COUNT ||
        num_wait_parent > num_parents || n > r->left / 8 ||
        !(mask & W_PARENTS) != !(num_parents - num_wait_parent))
        return -EBADMSG;
    rbuf_bytes(r, (size_t)n * 8);
    n = num_parents - num_wait_parent;
    if (n > r->left / 10)
        return -EBADMSG;
    for (uint32_t i = 0; i < n; i++) {
        rbuf_u64(r);
        rbuf_uv(r);
        rbuf_uv32(r);
    }
    if (mask & W_HISTORY) {
        n = rbuf_uv32(r);
        if (!rbuf_ok(r) || !n || n > r->left || n > TMD_MAX_HISTORY)
            return -EBADMSG;
        for (uint32_t i = 0; i < n; i++)
            rbuf_uv32(r);
    }
    if (status & TMD_WIRE_EXT) {
        uint8_t flags = rbuf_u8(r);
        uint32_t attempt = rbuf_uv32(r);
        n = rbuf_uv32(r);
        if (!rbuf_ok(r) || n > r->left || (flags & (uint8_t)~TMD_WIRE_FLAGS) ||
            (!flags && !attempt && !n))
            return -EBADMSG;
        rbuf_bytes(r, n);
    }
    return rbuf_ok(r) ? 0 : -EBADMSG;
}
