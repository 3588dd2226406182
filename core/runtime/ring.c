/*
 * ring — the A2WS information vector on the move (paper 001 §2.1): entries from the ring
 * neighbours and from victims merged, and the dirty ones sent on to the two ring
 * neighbours.  The vector itself, with this node's own entry, is the node's (node_info,
 * part.h), because the thief plans from it too.  A part of the node daemon (part.h);
 * loop thread only.  The vector's rules (windows, writers, flags, versions) are
 * core/policy/a2ws's; this file only moves entries.
 *
 * Asynchronous as the paper asks, without its one-sided MPI: nothing here ever waits for
 * a reply.  Dirty entries ride along in the batch already leaving for that neighbour
 * in this loop pass (a free rider in the same frame and write); when there is no such
 * traffic they leave in a MSG_INFO of their own, at most once every A2WS_RING_INTERVAL_MS
 * per neighbour, so a burst of task ends costs one small message per interval.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/runtime/part.h"

/* Bytes of one entry on the wire. */
#define RING_ITEM_BYTES (4 + 4 + 8 + 4 + 4 + 4)

enum { RING_LEFT = 0, RING_RIGHT = 1 };

static const unsigned side_dir[2] = {[RING_LEFT] = A2WS_DIRTY_LEFT,
                                     [RING_RIGHT] = A2WS_DIRTY_RIGHT};

struct ring {
    struct node *n;
    uv_timer_t timer;           /* sends what waited for the interval */
    bool timer_armed;
    int64_t last_sent_ns[2];    /* monotonic, per side (RING_LEFT, RING_RIGHT) */
    uint64_t sent, received, piggybacked; /* MSG_INFO messages */
};

static void ring_flush(struct ring *g, bool timer_fired);

static void timer_cb(uv_timer_t *h)
{
    struct ring *g = h->data;
    g->timer_armed = false;
    ring_flush(g, true);
}

static void *ring_init(struct node *n, char **cause)
{
    (void)cause;
    struct ring *g = xcalloc(1, sizeof *g);
    g->n = n;
    uv_timer_init(node_loop(n), &g->timer);
    g->timer.data = g;
    struct a2ws_vec *v = node_info(n);
    if (v)
        log_info("a2ws ring: window %u left, %u right of node %u", v->left, v->right,
                 node_self(n));
    return g;
}

static void ring_close(void *state)
{
    struct ring *g = state;
    uv_timer_stop(&g->timer);
    uv_close((uv_handle_t *)&g->timer, NULL);
    if (node_info(g->n))
        log_info("a2ws ring: %llu info messages sent (%llu rode along), %llu received",
                 (unsigned long long)g->sent, (unsigned long long)g->piggybacked,
                 (unsigned long long)g->received);
}

static void put_item(struct wbuf *b, const struct a2ws_item *it)
{
    wbuf_put_u32(b, it->node);
    wbuf_put_u32(b, it->e.version);
    wbuf_put_f64(b, it->e.t_run);
    wbuf_put_u32(b, it->e.n);
    wbuf_put_u32(b, it->e.avail);
    wbuf_put_u32(b, it->e.slots);
}

/* Sends what side `s` still needs, in as many messages as the window takes. */
static void send_side(struct ring *g, struct a2ws_vec *v, int s, uint32_t peer)
{
    struct node *n = g->n;
    struct a2ws_item items[A2WS_RING_BATCH];
    uint32_t got;
    do {
        got = a2ws_collect(v, side_dir[s], items, A2WS_RING_BATCH);
        if (!got)
            break;
        size_t at;
        struct wbuf *b = node_msg_begin(n, peer, MSG_INFO, &at);
        wbuf_put_u32(b, got);
        for (uint32_t i = 0; i < got; i++)
            put_item(b, &items[i]);
        node_msg_end(n, peer, at);
        g->sent++;
        node_counters(n)->info_sent++;
    } while (got == A2WS_RING_BATCH);
}

static void ring_flush(struct ring *r, bool timer_fired)
{
    struct node *n = r->n;
    struct a2ws_vec *v = node_info(n);
    if (!v || node_stopping(n))
        return;
    int64_t now = node_mono_ns(n);
    int64_t wake_at = 0;
    for (int s = RING_LEFT; s <= RING_RIGHT; s++) {
        if (!a2ws_dirty(v, side_dir[s]))
            continue;
        /* The live neighbour on that side: the ring closes over a dead member. */
        uint32_t peer = s == RING_LEFT ? v->left_nb : v->right_nb;
        if (peer == node_self(n))
            continue;
        bool ride = node_msg_queued(n, peer) > 0;
        int64_t due = r->last_sent_ns[s] + (int64_t)A2WS_RING_INTERVAL_MS * 1000000;
        if (ride || timer_fired || now >= due) {
            if (ride)
                r->piggybacked++;
            send_side(r, v, s, peer);
            r->last_sent_ns[s] = now;
        } else if (!wake_at || due < wake_at) {
            wake_at = due;
        }
    }
    if (wake_at && !r->timer_armed) {
        int64_t ms = (wake_at - now + 999999) / 1000000;
        uv_timer_start(&r->timer, timer_cb, ms > 0 ? (uint64_t)ms : 1, 0);
        /* Pending information must not keep a finished loop alive. */
        uv_unref((uv_handle_t *)&r->timer);
        r->timer_armed = true;
    }
}

/* Last in the check step: what the pass changed (and the thief's request, a batch to
 * ride on) is in. */
static void ring_step(void *state)
{
    ring_flush(state, false);
}

/* A victim's own entry goes to its thief beside the grant. */
static void ring_answering(void *state, uint32_t to)
{
    struct ring *g = state;
    struct node *n = g->n;
    struct a2ws_vec *v = node_info(n);
    if (!v || to >= node_count(n) || to == node_self(n) || !node_alive(n, to))
        return;
    struct a2ws_item it = {.node = node_self(n), .e = v->e[node_self(n)]};
    size_t at;
    struct wbuf *b = node_msg_begin(n, to, MSG_INFO, &at);
    wbuf_put_u32(b, 1);
    put_item(b, &it);
    node_msg_end(n, to, at);
    g->sent++;
    node_counters(n)->info_sent++;
}

static int ring_on_info(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct ring *rg = state;
    struct node *n = rg->n;
    (void)type;
    uint32_t count = rbuf_u32(r);
    if (!rbuf_ok(r) || count > PROTO_MAX_BATCH || (uint64_t)count * RING_ITEM_BYTES > r->left)
        return -EBADMSG;
    struct a2ws_vec *v = node_info(n);
    bool news = false;
    for (uint32_t i = 0; i < count; i++) {
        struct a2ws_item it;
        it.node = rbuf_u32(r);
        it.e.version = rbuf_u32(r);
        it.e.t_run = rbuf_f64(r);
        it.e.n = rbuf_u32(r);
        it.e.avail = rbuf_u32(r);
        it.e.slots = rbuf_u32(r);
        it.e.dirty = 0;
        if (!rbuf_ok(r) || !isfinite(it.e.t_run) || it.e.t_run < 0)
            return -EBADMSG;
        /* A node configured without the ring (a mixed cluster) ignores the vector. */
        /* A dead node's entry stays empty, whatever a neighbour still carries. */
        if (!v || !node_alive(n, it.node))
            continue;
        uint32_t before = it.node < node_count(n) ? v->e[it.node].avail : 0;
        if (a2ws_merge(v, from, &it)) {
            if (it.e.n)
                node_info_saw_work(n);
            if (it.e.avail && !before)
                news = true;
        }
    }
    rg->received++;
    node_counters(n)->info_received++;
    if (news)
        node_news(n);
    if (v)
        node_mark_dirty(n);
    return 0;
}

static const uint16_t ring_types[] = {MSG_INFO, 0};

const struct part part_ring = {
    .name = "ring",
    .init = ring_init,
    .close = ring_close,
    .free = free,
    .step = ring_step,
    .answering = ring_answering,
    .types = ring_types,
    .on_message = ring_on_info,
};
