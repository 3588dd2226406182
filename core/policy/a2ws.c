/*
 * a2ws — paper 001 §2 as pure functions over a node's information vector (see a2ws.h
 * for the reading of the paper).  No I/O, no clock, no globals, no allocation: the
 * runtime's thief calls a2ws_plan on every idle check pass, so a plan is two passes
 * over the window and nothing more.  Called by core/runtime/thief.c and ring.c, and by
 * tests/unit/test_a2ws.c.
 */
#include "core/policy/a2ws.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core/policy/steal.h"

uint32_t a2ws_radius_default(uint32_t nodes)
{
    uint64_t r = ((uint64_t)nodes * 2u + 5u) / 10u; /* 0.2·N rounded to nearest */
    return r == 0 ? 1 : r > A2WS_RADIUS_MAX ? A2WS_RADIUS_MAX : (uint32_t)r;
}

/* The window's sides for radius R in a cluster of `nodes` (none below two nodes). */
static void window_of(uint32_t nodes, uint32_t radius, uint32_t *left, uint32_t *right)
{
    *left = *right = 0;
    if (nodes < 2)
        return;
    uint32_t r = radius ? radius : a2ws_radius_default(nodes);
    /* One writer per position: the two sides of the window must not meet. */
    uint32_t half = (nodes - 1) / 2;
    *left = r < half ? r : half;
    *right = r < nodes - 1 - *left ? r : nodes - 1 - *left;
}

uint32_t a2ws_window_entries(uint32_t nodes, uint32_t radius)
{
    uint32_t left, right;
    window_of(nodes, radius, &left, &right);
    return left + right + 1;
}

static void vec_init(struct a2ws_vec *v, struct a2ws_entry *storage, uint32_t self,
                     uint32_t nodes, uint32_t radius, bool windowed)
{
    if (!v)
        return;
    memset(v, 0, sizeof *v);
    v->self = self;
    v->nodes = nodes;
    v->e = storage;
    v->windowed = windowed;
    window_of(nodes, radius, &v->left, &v->right);
    size_t count = windowed ? (size_t)v->left + v->right + 1 : nodes;
    if (storage && nodes)
        memset(storage, 0, count * sizeof *storage);
    if (nodes < 2)
        return;
    v->left_nb = (self + nodes - 1) % nodes;
    v->right_nb = (self + 1) % nodes;
}

void a2ws_vec_init(struct a2ws_vec *v, struct a2ws_entry *storage, uint32_t self,
                   uint32_t nodes, uint32_t radius)
{
    vec_init(v, storage, self, nodes, radius, false);
}

void a2ws_vec_init_window(struct a2ws_vec *v, struct a2ws_entry *storage, uint32_t self,
                          uint32_t nodes, uint32_t radius)
{
    vec_init(v, storage, self, nodes, radius, true);
}

bool a2ws_offset(const struct a2ws_vec *v, uint32_t j, int32_t *off)
{
    if (!v || j >= v->nodes)
        return false;
    uint32_t d = (j + v->nodes - v->self % v->nodes) % v->nodes;
    int32_t o;
    if (d == 0)
        o = 0;
    else if (d <= v->right)
        o = (int32_t)d;
    else if (v->nodes - d <= v->left)
        o = -(int32_t)(v->nodes - d);
    else
        return false;
    if (off)
        *off = o;
    return true;
}

uint32_t a2ws_node_at(const struct a2ws_vec *v, int32_t off)
{
    if (!v || v->nodes == 0)
        return 0;
    int64_t n = v->nodes;
    int64_t j = ((int64_t)v->self + off) % n;
    return (uint32_t)(j < 0 ? j + n : j);
}

uint32_t a2ws_window_others(const struct a2ws_vec *v)
{
    return v ? v->left + v->right : 0;
}

/* The entry at ring offset `off`, which must be in the window (−left..right). */
static struct a2ws_entry *at(const struct a2ws_vec *v, int32_t off)
{
    return v->windowed ? &v->e[(int32_t)v->left + off] : &v->e[a2ws_node_at(v, off)];
}

struct a2ws_entry *a2ws_entry_of(const struct a2ws_vec *v, uint32_t j)
{
    int32_t off;
    if (!v || !v->e || j >= v->nodes)
        return NULL;
    if (!v->windowed)
        return &v->e[j];
    return a2ws_offset(v, j, &off) ? at(v, off) : NULL;
}

/* Left of self travels right, right of self travels left, self goes both ways. */
static uint8_t direction_of(int32_t off)
{
    if (off < 0)
        return A2WS_DIRTY_RIGHT;
    if (off > 0)
        return A2WS_DIRTY_LEFT;
    return A2WS_DIRTY_LEFT | A2WS_DIRTY_RIGHT;
}

void a2ws_flag(struct a2ws_vec *v, uint32_t j)
{
    int32_t off;
    if (!v || !v->e || !a2ws_offset(v, j, &off) || at(v, off)->version == 0)
        return;
    at(v, off)->dirty |= direction_of(off);
}

bool a2ws_set_self(struct a2ws_vec *v, double t_run, uint32_t n, uint32_t avail,
                   uint32_t slots)
{
    if (!v || !v->e || v->self >= v->nodes)
        return false;
    struct a2ws_entry *e = at(v, 0);
    if (e->version != 0 && e->t_run == t_run && e->n == n && e->avail == avail &&
        e->slots == slots)
        return false;
    e->t_run = t_run;
    e->n = n;
    e->avail = avail;
    e->slots = slots;
    /* 0 means "never heard of": a wrapped counter skips it. */
    if (++e->version == 0)
        e->version = 1;
    e->dirty = A2WS_DIRTY_LEFT | A2WS_DIRTY_RIGHT;
    return true;
}

void a2ws_on_steal(struct a2ws_vec *v, uint32_t victim, bool stole)
{
    if (!v)
        return;
    a2ws_flag(v, victim);
    if (stole)
        a2ws_flag(v, v->self);
}

bool a2ws_merge(struct a2ws_vec *v, uint32_t from, const struct a2ws_item *in)
{
    int32_t off;
    if (!v || !v->e || !in || in->node >= v->nodes || in->node == v->self ||
        in->e.version == 0 || !a2ws_offset(v, in->node, &off))
        return false;
    bool allowed = in->node == from ||
                   (off < 0 && from == v->left_nb) || (off > 0 && from == v->right_nb);
    if (!allowed)
        return false;
    struct a2ws_entry *e = at(v, off);
    /* Serial-number order: a counter that wrapped is still newer. */
    if (e->version != 0 && (int32_t)(in->e.version - e->version) <= 0)
        return false;
    uint8_t dirty = e->dirty;
    *e = in->e;
    e->dirty = dirty | direction_of(off);
    return true;
}

void a2ws_on_down(struct a2ws_vec *v, uint32_t j, uint32_t left_nb, uint32_t right_nb)
{
    if (!v || !v->e || j >= v->nodes || j == v->self)
        return;
    /* Version 0, "nothing heard": the steal equation leaves it out, as it leaves out a
     * node it never heard of; the ring merges nothing about j any more. */
    struct a2ws_entry *e = a2ws_entry_of(v, j);
    if (e)
        memset(e, 0, sizeof *e);
    v->left_nb = left_nb;
    v->right_nb = right_nb;
}

uint32_t a2ws_collect(struct a2ws_vec *v, unsigned dir, struct a2ws_item *out, uint32_t max)
{
    if (!v || !v->e || !out || v->nodes < 2 ||
        (dir != A2WS_DIRTY_LEFT && dir != A2WS_DIRTY_RIGHT))
        return 0;
    /* The left neighbour keeps offsets 0..right−1 of ours, the right one −(left−1)..0;
     * the far edge (right, or −left) is outside theirs. */
    int32_t step = dir == A2WS_DIRTY_LEFT ? 1 : -1;
    int32_t far = dir == A2WS_DIRTY_LEFT ? (int32_t)v->right : (int32_t)v->left;
    uint32_t got = 0;
    for (int32_t k = 0; k <= far; k++) {
        uint32_t j = a2ws_node_at(v, k * step);
        struct a2ws_entry *e = at(v, k * step);
        if (!(e->dirty & dir))
            continue;
        if (k < far && e->version != 0) {
            if (got == max)
                break;
            out[got].node = j;
            out[got].e = *e;
            out[got].e.dirty = 0;
            got++;
        }
        e->dirty &= (uint8_t)~dir;
    }
    return got;
}

bool a2ws_dirty(const struct a2ws_vec *v, unsigned dir)
{
    if (!v || !v->e || v->nodes < 2)
        return false;
    for (int32_t k = -(int32_t)v->left; k <= (int32_t)v->right; k++)
        if (at(v, k)->dirty & dir)
            return true;
    return false;
}

/* ---- the equations ----------------------------------------------------------------- */

double a2ws_steal_rate(double sum_n, double sum_speed, double n_i, double t_i)
{
    if (!(t_i > 0) || !(sum_speed > 0))
        return 0;
    return sum_n / (t_i * sum_speed) - n_i;
}

double a2ws_pair_rate(double n_i, double t_i, double n_j, double t_j)
{
    if (!(t_i + t_j > 0))
        return 0;
    return (n_i + n_j) * t_j / (t_j + t_i) - n_i;
}

double a2ws_gamma(double s, double n_i, double t_i, double n_j, double t_j)
{
    double thief = (n_i + s) * t_i, victim = (n_j - s) * t_j;
    return thief > victim ? thief : victim;
}

uint32_t a2ws_round(double s, double n_i, double t_i, double n_j, double t_j)
{
    if (!(s > 0))
        return 0;
    if (s >= (double)UINT32_MAX)
        return UINT32_MAX;
    double lo = floor(s), hi = ceil(s);
    if (lo == hi)
        return (uint32_t)lo;
    return a2ws_gamma(lo, n_i, t_i, n_j, t_j) < a2ws_gamma(hi, n_i, t_i, n_j, t_j)
               ? (uint32_t)lo : (uint32_t)hi;
}

/* ---- decisions --------------------------------------------------------------------- */

double a2ws_node_time(const struct a2ws_entry *e, double elapsed_s, double fallback_run)
{
    if (!e)
        return 0;
    double slots = e->slots ? (double)e->slots : 1.0;
    if (e->t_run > 0)
        return e->t_run / slots;
    if (e->n > 0 && elapsed_s > 0)
        return elapsed_s / slots;
    if (fallback_run > 0)
        return fallback_run / slots;
    if (elapsed_s > 0)
        return elapsed_s / slots;
    return 0;
}

/* N and T of eq. 5 over the window, and the prior for nodes that said nothing yet. */
struct sums {
    double n, speed, fallback_run;
};

/* Whether the entry at ring offset `off` says anything (self always does). */
static bool known(const struct a2ws_vec *v, int32_t off)
{
    return off == 0 || at(v, off)->version != 0;
}

static struct sums window_sums(const struct a2ws_vec *v, double elapsed_s)
{
    struct sums s = {0, 0, 0};
    double run = 0;
    uint32_t finished = 0;
    for (int32_t k = -(int32_t)v->left; k <= (int32_t)v->right; k++) {
        const struct a2ws_entry *e = at(v, k);
        if (known(v, k) && e->t_run > 0) {
            run += e->t_run;
            finished++;
        }
    }
    s.fallback_run = finished ? run / finished : 0;
    for (int32_t k = -(int32_t)v->left; k <= (int32_t)v->right; k++) {
        if (!known(v, k))
            continue;
        const struct a2ws_entry *e = at(v, k);
        double t = a2ws_node_time(e, elapsed_s, s.fallback_run);
        if (!(t > 0))
            continue;
        s.n += e->n;
        s.speed += 1.0 / t;
    }
    return s;
}

double a2ws_rate(const struct a2ws_vec *v, const struct a2ws_now *now, uint32_t j)
{
    int32_t off;
    if (!v || !v->e || !now || !a2ws_offset(v, j, &off) || !known(v, off))
        return 0;
    struct sums s = window_sums(v, now->elapsed_s);
    const struct a2ws_entry *e = at(v, off);
    double t = a2ws_node_time(e, now->elapsed_s, s.fallback_run);
    return a2ws_steal_rate(s.n, s.speed, e->n, t);
}

/* One candidate of the victim selection: how many to ask for, and its weight. */
struct candidate {
    uint32_t amount;
    double weight;
};

struct plan_ctx {
    const struct a2ws_vec *v;
    struct sums sums;
    double elapsed_s;
    double n_i, t_i, rate_i;
};

static struct candidate closest_rate(const struct plan_ctx *c, const struct a2ws_entry *e,
                                     bool cap)
{
    struct candidate none = {0, 0};
    double t_j = a2ws_node_time(e, c->elapsed_s, c->sums.fallback_run);
    if (!(t_j > 0))
        return none;
    double rate_j = a2ws_steal_rate(c->sums.n, c->sums.speed, e->n, t_j);
    if (!(rate_j < 0) || !(c->rate_i > 0))
        return none;
    /* The thief takes what it lacks, but never more than the victim has too much. */
    double s = c->rate_i < -rate_j ? c->rate_i : -rate_j;
    uint32_t d = a2ws_round(s, c->n_i, c->t_i, e->n, t_j);
    if (cap && d > e->avail)
        d = e->avail;
    if (d == 0)
        return none;
    struct candidate k = {d, 1.0 / (1.0 + fabs(c->rate_i + rate_j))};
    return k;
}

static struct candidate in_pair(const struct plan_ctx *c, const struct a2ws_entry *e, bool cap)
{
    struct candidate none = {0, 0};
    double t_j = a2ws_node_time(e, c->elapsed_s, c->sums.fallback_run);
    if (!(t_j > 0))
        return none;
    double s = a2ws_pair_rate(c->n_i, c->t_i, e->n, t_j);
    uint32_t d = a2ws_round(s, c->n_i, c->t_i, e->n, t_j);
    if (cap && d > e->avail)
        d = e->avail;
    if (d == 0)
        return none;
    struct candidate k = {d, (double)d};
    return k;
}

typedef struct candidate (*criterion_fn)(const struct plan_ctx *c, const struct a2ws_entry *e,
                                         bool cap);

/* Draws one victim of the window with probability proportional to its weight: one pass
 * for the total, one to find the draw, so nothing is allocated.  False when nobody
 * qualifies. */
static bool draw(const struct plan_ctx *c, criterion_fn fn, uint64_t *rng, uint32_t *victim,
                 uint32_t *amount)
{
    const struct a2ws_vec *v = c->v;
    double total = 0;
    for (int32_t k = -(int32_t)v->left; k <= (int32_t)v->right; k++) {
        if (k == 0 || !known(v, k) || at(v, k)->avail == 0)
            continue;
        total += fn(c, at(v, k), true).weight;
    }
    if (!(total > 0))
        return false;
    /* 53 random bits: a uniform double in [0, total). */
    double r = (double)(steal_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0) * total;
    double acc = 0;
    bool found = false;
    for (int32_t k = -(int32_t)v->left; k <= (int32_t)v->right; k++) {
        if (k == 0 || !known(v, k) || at(v, k)->avail == 0)
            continue;
        struct candidate cand = fn(c, at(v, k), true);
        if (cand.amount == 0)
            continue;
        /* The last qualifying node takes what rounding left over at the top. */
        *victim = a2ws_node_at(v, k);
        *amount = cand.amount;
        found = true;
        acc += cand.weight;
        if (r < acc)
            break;
    }
    return found;
}

static bool plan_ctx_init(struct plan_ctx *c, const struct a2ws_vec *v, const struct a2ws_now *now)
{
    c->v = v;
    c->elapsed_s = now->elapsed_s;
    c->sums = window_sums(v, now->elapsed_s);
    const struct a2ws_entry *self = at(v, 0);
    c->n_i = self->n;
    c->t_i = a2ws_node_time(self, now->elapsed_s, c->sums.fallback_run);
    c->rate_i = a2ws_steal_rate(c->sums.n, c->sums.speed, c->n_i, c->t_i);
    return c->t_i > 0;
}

struct a2ws_decision a2ws_plan(const struct a2ws_vec *v, const struct a2ws_now *now,
                               uint64_t *rng)
{
    struct a2ws_decision d = {A2WS_NO_STEAL, 0, 0, 0};
    struct plan_ctx c;
    if (!v || !v->e || !now || !rng || v->nodes < 2 || v->self >= v->nodes ||
        !plan_ctx_init(&c, v, now))
        return d;
    d.rate = c.rate_i;
    /* §2.2.1: preemptive stealing begins after the node's first finished task, and only
     * when the equation says this node should hold more. */
    if (!now->starving && (!(at(v, 0)->t_run > 0) || !(c.rate_i > 0)))
        return d;
    if (draw(&c, closest_rate, rng, &d.victim, &d.amount)) {
        d.criterion = A2WS_CLOSEST_RATE;
    } else if (draw(&c, in_pair, rng, &d.victim, &d.amount)) {
        d.criterion = A2WS_IN_PAIR;
    }
    return d;
}

uint32_t a2ws_amount_for(const struct a2ws_vec *v, const struct a2ws_now *now, uint32_t victim)
{
    struct plan_ctx c;
    int32_t off;
    if (!v || !v->e || !now || victim == (v ? v->self : 0) || !a2ws_offset(v, victim, &off) ||
        !known(v, off) || !plan_ctx_init(&c, v, now))
        return 0;
    /* Not capped by the vector's count of the victim's stealable tasks: the thief chose
     * it from a fresher load reply, and the victim bounds the grant itself. */
    struct candidate k = closest_rate(&c, at(v, off), false);
    if (k.amount == 0)
        k = in_pair(&c, at(v, off), false);
    return k.amount;
}
