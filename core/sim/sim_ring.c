/*
 * sim_ring — the A2WS information vector in the simulator (paper 001 §2.1), as the
 * daemons keep it (core/runtime/info.c) and move it (ring.c): each node's own entry
 * refreshed after every event there (a2ws_set_self: its ready, staged, running and done
 * tasks, its mean run time, its stealable tasks, its slots), dirty entries sent to the
 * two ring neighbours at most once every A2WS_RING_INTERVAL_MS a side (a2ws_collect, up
 * to A2WS_RING_BATCH entries a message, each message one latency), merged where they
 * arrive (a2ws_merge), and a victim's own entry riding with its grant to the thief.
 * The vector's rules are core/policy/a2ws's; this file only moves entries.
 *
 * Each node keeps its window only (a2ws_vec_init_window): (2R + 1) entries of
 * sizeof(struct a2ws_entry), so the vectors of N nodes cost N·(2R + 1)·32 bytes
 * (sim_check refuses above SIM_A2WS_MAX_BYTES).
 *
 * One departure: the daemons' entries also ride for free on any other message already
 * leaving for a neighbour in the same loop pass; here they leave only on the interval, so
 * a simulated vector is at most one interval staler than a daemon's.
 *
 * Called by sim.c's event loop and sim_thief.c (sim_core.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/sim/sim_core.h"

enum { SIDE_LEFT = 0, SIDE_RIGHT = 1 };

static const unsigned side_dir[2] = {[SIDE_LEFT] = A2WS_DIRTY_LEFT,
                                     [SIDE_RIGHT] = A2WS_DIRTY_RIGHT};

/* One node's vector and its ring state. */
struct ring_node {
    struct a2ws_vec vec;        /* its window, in sim_ring.entries */
    int64_t work_seen;          /* when it first saw work (-1: not yet): §2.2.1's clock */
    int64_t last_sent[2];       /* per side: when entries last left */
    int64_t next_plan;          /* preemptive: its next look at the plan */
    bool dirty;                 /* some entry may be dirty: look at the next flush */
    bool flush_due;             /* an EV_RING is in the heap */
    bool plan_due;              /* an EV_PLAN is in the heap */
};

/* The entries of one EV_INFO in flight. */
struct info_msg {
    struct a2ws_item *items;    /* owned, `cap` of them */
    uint32_t n;
    size_t cap;
};

struct sim_ring {
    struct ring_node *nodes;    /* owned, one per node */
    struct a2ws_entry *entries; /* owned, nodes × width */
    uint32_t width;             /* entries of a window */
    struct info_msg *msgs;      /* owned: messages in flight, and free ones */
    size_t nmsgs, msgs_cap;
    uint32_t *free_msgs;        /* owned: indices into msgs of free messages */
    size_t nfree, free_cap;
    /* owned, A2WS_RING_BATCH entries: what a2ws_collect writes, copied into a message of
     * its size (a message of the batch's size each, with two in flight a node, was
     * 20 KB a node) */
    struct a2ws_item *scratch;
};

uint64_t sim__ring_bytes(uint32_t nodes, uint32_t radius)
{
    return (uint64_t)nodes * a2ws_window_entries(nodes, radius) * sizeof(struct a2ws_entry);
}

void sim__ring_init(struct sim *s)
{
    const struct sim_config *cfg = s->cfg;
    if (!steal_keeps_vector(&cfg->steal, cfg->nodes))
        return;
    struct sim_ring *r = xcalloc(1, sizeof *r);
    r->width = a2ws_window_entries(cfg->nodes, cfg->steal.radius);
    r->nodes = xcalloc(cfg->nodes, sizeof *r->nodes);
    r->scratch = xcalloc(A2WS_RING_BATCH, sizeof *r->scratch);
    r->entries = xcalloc((size_t)cfg->nodes * r->width, sizeof *r->entries);
    for (uint32_t i = 0; i < cfg->nodes; i++) {
        struct ring_node *g = &r->nodes[i];
        a2ws_vec_init_window(&g->vec, &r->entries[(size_t)i * r->width], i, cfg->nodes,
                             cfg->steal.radius);
        g->work_seen = -1;
        /* Nothing sent yet: the first entries leave at once. */
        g->last_sent[SIDE_LEFT] = g->last_sent[SIDE_RIGHT] = INT64_MIN / 2;
    }
    s->ring = r;
}

void sim__ring_free(struct sim *s)
{
    struct sim_ring *r = s->ring;
    if (!r)
        return;
    for (size_t i = 0; i < r->nmsgs; i++)
        free(r->msgs[i].items);
    free(r->msgs);
    free(r->free_msgs);
    free(r->scratch);
    free(r->entries);
    free(r->nodes);
    free(r);
    s->ring = NULL;
}

static void saw_work(struct sim *s, struct ring_node *g)
{
    if (g->work_seen < 0)
        g->work_seen = s->now;
}

/* The node's own entry as info.c's info_view writes it: n_j is what it holds to run
 * (ready, staged, staging, running) and what it ran; t_j its mean run time so far. */
static void refresh(struct sim *s, uint32_t id)
{
    struct ring_node *g = &s->ring->nodes[id];
    const struct node *n = &s->nodes[id];
    uint64_t total = (uint64_t)readyq_len(&n->lready) + readyq_len(&n->sready) + n->nstaged + n->staging + n->busy +
                     (uint64_t)n->ended;
    uint32_t count = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
    if (count)
        saw_work(s, g);
    double t_run = n->ended ? n->ran_s / (double)n->ended : 0;
    if (a2ws_set_self(&g->vec, t_run, count, (uint32_t)readyq_len(&n->sready), n->slots))
        g->dirty = true;
}

struct a2ws_vec *sim__info(struct sim *s, uint32_t id)
{
    if (!s->ring)
        return NULL;
    refresh(s, id);
    return &s->ring->nodes[id].vec;
}

struct a2ws_now sim__info_now(const struct sim *s, uint32_t id, bool starving)
{
    const struct ring_node *g = &s->ring->nodes[id];
    struct a2ws_now now = {
        .elapsed_s = g->work_seen < 0 ? 0 : (double)(s->now - g->work_seen) / NS_PER_S,
        .starving = starving,
    };
    return now;
}

/* A message holding the `n` entries of the scratch buffer. */
static uint32_t msg_new(struct sim_ring *r, uint32_t n)
{
    uint32_t mi;
    if (r->nfree) {
        mi = r->free_msgs[--r->nfree];
    } else {
        r->msgs = xgrow(r->msgs, &r->msgs_cap, r->nmsgs + 1, sizeof *r->msgs);
        r->msgs[r->nmsgs] = (struct info_msg){0};
        mi = (uint32_t)r->nmsgs++;
    }
    struct info_msg *m = &r->msgs[mi];
    m->items = xgrow(m->items, &m->cap, n, sizeof *m->items);
    memcpy(m->items, r->scratch, n * sizeof *m->items);
    m->n = n;
    return mi;
}

static void msg_free(struct sim_ring *r, uint32_t mi)
{
    r->free_msgs = xgrow(r->free_msgs, &r->free_cap, r->nfree + 1, sizeof *r->free_msgs);
    r->free_msgs[r->nfree++] = mi;
}

/* What side `side` still needs, in as many messages as the window takes (ring.c's
 * send_side).  Returns whether anything left. */
static bool send_side(struct sim *s, uint32_t id, int side, uint32_t peer)
{
    struct sim_ring *r = s->ring;
    bool sent = false;
    uint32_t got;
    do {
        got = a2ws_collect(&r->nodes[id].vec, side_dir[side], r->scratch, A2WS_RING_BATCH);
        if (!got)
            break;
        sim__send(s, id, peer, EV_INFO, id, 0, msg_new(r, got));
        sent = true;
    } while (got == A2WS_RING_BATCH);
    return sent;
}

/* Sends each side what it lacks once its interval is over, and sets the timer for a side
 * whose interval is not (ring.c's ring_flush). */
static void flush(struct sim *s, uint32_t id)
{
    struct ring_node *g = &s->ring->nodes[id];
    int64_t interval = (int64_t)A2WS_RING_INTERVAL_MS * 1000000;
    int64_t wake_at = 0;
    for (int side = SIDE_LEFT; side <= SIDE_RIGHT; side++) {
        uint32_t peer = side == SIDE_LEFT ? g->vec.left_nb : g->vec.right_nb;
        if (peer == id)
            continue;
        int64_t due = g->last_sent[side] + interval;
        if (s->now >= due) {
            if (send_side(s, id, side, peer))
                g->last_sent[side] = s->now;
        } else if (!wake_at || due < wake_at) {
            wake_at = due;
        }
    }
    /* A side that waits keeps the hint: the timer's flush looks at it again. */
    g->dirty = wake_at != 0;
    if (wake_at && !g->flush_due) {
        g->flush_due = true;
        sim__push(s, wake_at, EV_RING, id, 0, 0, 0);
    }
}

void sim__ring_step(struct sim *s, uint32_t id)
{
    refresh(s, id);
    if (s->ring->nodes[id].dirty)
        flush(s, id);
}

void sim__ring_timer(struct sim *s, uint32_t id)
{
    struct ring_node *g = &s->ring->nodes[id];
    g->flush_due = false;
    refresh(s, id);
    flush(s, id);
}

/* One entry from `from`: merged if the vector's rules take it; true when it tells of
 * stealable work that was not there before (ring.c's news). */
static bool merge(struct sim *s, uint32_t id, uint32_t from, const struct a2ws_item *it)
{
    struct ring_node *g = &s->ring->nodes[id];
    const struct a2ws_entry *e = a2ws_entry_of(&g->vec, it->node);
    uint32_t before = e ? e->avail : 0;
    if (!a2ws_merge(&g->vec, from, it))
        return false;
    g->dirty = true;
    if (it->e.n)
        saw_work(s, g);
    return it->e.avail && !before;
}

/* A parked thief hears of stealable work sooner from the vector than from a wake-up
 * (thief.c's thief_news). */
static void news(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    if (n->state != TH_PARKED)
        return;
    steal_on_wake(&s->cfg->steal, &n->st);
    n->state = TH_IDLE;
}

void sim__ring_on_info(struct sim *s, uint32_t id, uint32_t from, uint32_t mi)
{
    struct sim_ring *r = s->ring;
    bool heard = false;
    for (uint32_t i = 0; i < r->msgs[mi].n; i++)
        heard |= merge(s, id, from, &r->msgs[mi].items[i]);
    msg_free(r, mi);
    if (heard)
        news(s, id);
    /* A preemptive thief's plan reads the vector: it looks again. */
    sim__maybe_steal(s, id);
}

void sim__ring_answer(struct sim *s, uint32_t victim, struct grant *g)
{
    g->has_entry = s->ring != NULL;
    if (s->ring)
        g->entry = *a2ws_entry_of(sim__info(s, victim), victim);
}

void sim__ring_granted(struct sim *s, uint32_t thief, uint32_t victim, const struct grant *g)
{
    if (!s->ring)
        return;
    if (g->has_entry) {
        struct a2ws_item it = {.node = victim, .e = g->entry};
        it.e.dirty = 0;
        if (merge(s, thief, victim, &it))
            news(s, thief);
    }
    a2ws_on_steal(&s->ring->nodes[thief].vec, victim, g->n > 0);
    s->ring->nodes[thief].dirty = true;
}

bool sim__ring_plan_later(struct sim *s, uint32_t id)
{
    struct ring_node *g = &s->ring->nodes[id];
    if (s->now >= g->next_plan) {
        g->next_plan = s->now + (int64_t)A2WS_PREEMPTIVE_LOOK_MS * 1000000;
        return false;
    }
    if (!g->plan_due) {
        g->plan_due = true;
        sim__push(s, g->next_plan, EV_PLAN, id, 0, 0, 0);
    }
    return true;
}

void sim__ring_plan_timer(struct sim *s, uint32_t id)
{
    s->ring->nodes[id].plan_due = false;
    sim__maybe_steal(s, id);
}
