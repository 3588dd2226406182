/*
 * ring — the A2WS information vector on a node's loop (paper 001 §2.1): this node's own
 * entry kept current, entries from the ring neighbours and from victims merged, and the
 * dirty ones sent on to the two ring neighbours.  Part of the node daemon (node_impl.h);
 * loop thread only.  The vector's rules (windows, writers, flags, versions) are
 * core/policy/a2ws's; this file only moves entries.
 *
 * Asynchronous as the paper asks, without its one-sided MPI: nothing here ever waits for
 * a reply.  Dirty entries ride along in the batch already leaving for that neighbour
 * in this loop pass (a free rider in the same frame and write); when there is no such
 * traffic they leave in a MSG_INFO of their own, at most once every RING_INTERVAL_MS
 * per neighbour, so a burst of task ends costs one small message per interval.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/runtime/node_impl.h"

/* A few ms: far below a task's length, far above a loop pass. */
#define RING_INTERVAL_MS 5
/* Entries per MSG_INFO; a window wider than this takes several messages. */
#define RING_BATCH 256
/* Bytes of one entry on the wire. */
#define RING_ITEM_BYTES (4 + 4 + 8 + 4 + 4 + 4)

static const unsigned side_dir[2] = {[RING_LEFT] = A2WS_DIRTY_LEFT,
                                     [RING_RIGHT] = A2WS_DIRTY_RIGHT};

static void ring_flush(struct node *n, bool timer_fired);

static void timer_cb(uv_timer_t *h)
{
    struct node *n = h->data;
    n->ring.timer_armed = false;
    ring_flush(n, true);
}

void ring_init(struct node *n)
{
    struct ring *r = &n->ring;
    uv_timer_init(&n->loop, &r->timer);
    r->timer.data = n;
    r->on = n->nodes > 1 &&
            (n->cfg.steal.info == STEAL_INFO_RING || steal_needs_ring(&n->cfg.steal)) &&
            n->cfg.steal.mode != STEAL_NONE;
    if (!r->on)
        return;
    r->entries = xcalloc(n->nodes, sizeof *r->entries);
    a2ws_vec_init(&r->vec, r->entries, n->self, n->nodes, n->cfg.steal.radius);
    log_info("a2ws ring: window %u left, %u right of node %u", r->vec.left, r->vec.right,
             n->self);
}

void ring_close(struct node *n)
{
    struct ring *r = &n->ring;
    uv_timer_stop(&r->timer);
    uv_close((uv_handle_t *)&r->timer, NULL);
    if (r->on)
        log_info("a2ws ring: %llu info messages sent (%llu rode along), %llu received",
                 (unsigned long long)r->sent, (unsigned long long)r->piggybacked,
                 (unsigned long long)r->received);
    free(r->entries);
    r->entries = NULL;
    r->on = false;
}

double ring_elapsed_s(const struct node *n)
{
    if (!n->ring.work_seen_ns)
        return 0;
    return (double)(clock_mono_ns() - n->ring.work_seen_ns) / 1e9;
}

/* Ready, staged, staging and running tasks: this node's to run. */
static uint64_t held_here(const struct node *n)
{
    return readyq_len(&n->lready) + readyq_len(&n->sready) + readyq_len(&n->staged) +
           n->staging + n->busy;
}

/*
 * n_j is "executed + available" of the work at hand (paper 001 runs one job).  A daemon
 * that runs job after job would otherwise carry every earlier task into the steal
 * equation: a node that ran a long job alone looks that many tasks ahead, and thieves
 * strip it of its share of the next.  Only an idle node starts over, so the counts of a
 * job still running here stay whole; t_j (the node's time per task) is kept, as it is
 * the node's speed more than the job's.
 */
void ring_job_begins(struct node *n)
{
    if (!n->ring.on || held_here(n) || u64map_len(&n->waitq))
        return;
    n->ring.run_base = n->tasks_run;
    n->ring.work_seen_ns = 0;
    ring_refresh_self(n);
}

static void saw_work(struct node *n)
{
    if (!n->ring.work_seen_ns)
        n->ring.work_seen_ns = clock_mono_ns();
}

void ring_refresh_self(struct node *n)
{
    if (!n->ring.on)
        return;
    /* n_j: executed + available; waiting tasks are not counted (a2ws.h). */
    uint64_t total = held_here(n) + (n->tasks_run - n->ring.run_base);
    uint32_t count = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
    if (count)
        saw_work(n);
    double t_run = n->est_samples ? n->est_task_length_s : 0;
    a2ws_set_self(&n->ring.vec, t_run, count, (uint32_t)readyq_len(&n->sready), n->cfg.slots);
}

static struct conn *existing_conn(struct node *n, uint32_t peer)
{
    return n->peers[peer].out ? n->peers[peer].out : n->peers[peer].in;
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
static void send_side(struct node *n, int s, uint32_t peer)
{
    struct a2ws_item items[RING_BATCH];
    uint32_t got;
    do {
        got = a2ws_collect(&n->ring.vec, side_dir[s], items, RING_BATCH);
        if (!got)
            break;
        size_t at;
        struct wbuf *b = node_msg_begin(n, peer, MSG_INFO, &at);
        wbuf_put_u32(b, got);
        for (uint32_t i = 0; i < got; i++)
            put_item(b, &items[i]);
        node_msg_end(n, peer, at);
        n->ring.sent++;
    } while (got == RING_BATCH);
}

static void ring_flush(struct node *n, bool timer_fired)
{
    struct ring *r = &n->ring;
    if (!r->on || n->stopping)
        return;
    int64_t now = clock_mono_ns();
    int64_t wake_at = 0;
    for (int s = RING_LEFT; s <= RING_RIGHT; s++) {
        if (!a2ws_dirty(&r->vec, side_dir[s]))
            continue;
        uint32_t peer = a2ws_node_at(&r->vec, s == RING_LEFT ? -1 : 1);
        struct conn *c = existing_conn(n, peer);
        bool ride = c && conn_queued_bytes(c) > 0;
        int64_t due = r->last_sent_ns[s] + (int64_t)RING_INTERVAL_MS * 1000000;
        if (ride || timer_fired || now >= due) {
            if (ride)
                r->piggybacked++;
            send_side(n, s, peer);
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

void ring_step(struct node *n)
{
    if (!n->ring.on)
        return;
    ring_refresh_self(n);
    ring_flush(n, false);
}

void ring_send_self(struct node *n, uint32_t to)
{
    if (!n->ring.on || to >= n->nodes || to == n->self)
        return;
    ring_refresh_self(n);
    struct a2ws_item it = {.node = n->self, .e = n->ring.entries[n->self]};
    size_t at;
    struct wbuf *b = node_msg_begin(n, to, MSG_INFO, &at);
    wbuf_put_u32(b, 1);
    put_item(b, &it);
    node_msg_end(n, to, at);
    n->ring.sent++;
}

int ring_on_info(struct node *n, uint32_t from, struct rbuf *r)
{
    uint32_t count = rbuf_u32(r);
    if (!rbuf_ok(r) || count > PROTO_MAX_BATCH || (uint64_t)count * RING_ITEM_BYTES > r->left)
        return -EBADMSG;
    struct ring *g = &n->ring;
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
        if (!g->on)
            continue;
        uint32_t before = it.node < n->nodes ? g->entries[it.node].avail : 0;
        if (a2ws_merge(&g->vec, from, &it)) {
            if (it.e.n)
                saw_work(n);
            if (it.e.avail && !before)
                news = true;
        }
    }
    g->received++;
    /* A parked thief hears of stealable work sooner this way than from a WAKE. */
    if (news && n->thief.state == THIEF_PARKED)
        thief_wake(n);
    if (g->on)
        node_mark_dirty(n);
    return 0;
}
