/*
 * thief — a node's side of stealing work, for every policy of the space (DESIGN.md) but
 * the baselines with their own parts (LW: leader.c, CTWS: token.c): the state machine
 * that decides to steal (ready-only, ready+successors, or A2WS's preemptive start),
 * finds a victim (load queries to sqrt(N) or K random nodes, the same draw read from the
 * A2WS vector, or A2WS's closest-rate / in-pair choice), asks it for an amount (the
 * victim's half, chunk or single, or the A2WS steal equation's), backs off
 * exponentially, parks at the bound and wakes when the cluster has work again.  The
 * victim's side is victim.c.  A part of the node daemon (part.h); loop thread only.
 *
 * Decisions are the pure functions of core/policy (steal, a2ws); this file only carries
 * them out on the loop.  The thief takes what arrives (the node queues a grant's tasks
 * and tells this part, `granted`), which may be less than it asked for, and its next
 * plan starts from the victim's entry that came with the grant.  An attempt that loses
 * replies (a peer died) fails after steal_timeout_ms, so the thief never hangs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/a2ws.h"
#include "core/runtime/part.h"

#define THIEF_MAX_VICTIMS 1024

enum thief_state {
    THIEF_IDLE,             /* not stealing; may start an attempt when starving */
    THIEF_QUERY,            /* load queries out */
    THIEF_REQUEST,          /* steal request out */
    THIEF_WAIT,             /* backing off until the timer */
    THIEF_PARKED,           /* at the bound: waits for a wake-up */
};

struct thief {
    struct node *n;
    bool on;                /* this node's policy steals through this part */
    struct steal_state st;
    enum thief_state state;
    uint64_t rng;
    uint32_t attempt;       /* id of the current attempt, echoed in replies */
    uint32_t nvictims, nreplies;
    uint32_t victims[THIEF_MAX_VICTIMS];
    uint32_t loads[THIEF_MAX_VICTIMS];
    bool replied[THIEF_MAX_VICTIMS];
    uint32_t asked;         /* tasks the current request asked for; 0: the victim decides */
    uint32_t requested;     /* the victim the current request went to */
    int64_t next_plan_ns;   /* monotonic: a busy node's next preemptive look */
    uv_timer_t timer;       /* back-off wait, or the attempt's timeout */
};

static void start_timer(struct thief *th, double ms);

static struct a2ws_now a2ws_now_of(const struct thief *th, bool starving)
{
    struct a2ws_now now = {.elapsed_s = node_info_elapsed_s(th->n), .starving = starving};
    return now;
}

/*
 * max bounds the grant (0: the victim's amount policy alone decides); `expect` is what
 * the thief counts on getting, for the trace (STEAL_REQUEST count: tasks asked for).
 */
static void send_steal_request(struct thief *th, uint32_t victim, uint32_t max, uint32_t expect)
{
    th->state = THIEF_REQUEST;
    th->requested = victim;
    th->asked = max ? max : expect;
    node_steal_request(th->n, victim, th->attempt, max, th->asked);
    start_timer(th, node_cfg(th->n)->steal_timeout_ms);
}

/* The bound a request carries.  With the A2WS amount the thief's steal equation decides
 * (at least one: 0 would mean "no bound" to the victim); otherwise the victim's policy. */
static uint32_t request_bound(struct thief *th, uint32_t victim, bool starving)
{
    if (node_cfg(th->n)->steal.amount != STEAL_AMOUNT_A2WS)
        return 0;
    uint32_t d = 0;
    struct a2ws_vec *vec = node_info(th->n);
    if (vec) {
        struct a2ws_now now = a2ws_now_of(th, starving);
        d = a2ws_amount_for(vec, &now, victim);
    }
    return d ? d : 1;
}

static void attempt_done(struct thief *th, bool success)
{
    struct node *n = th->n;
    const struct steal_params *p = &node_cfg(n)->steal;
    steal_on_result(p, &th->st, success, node_count(n));
    log_debug("steal attempt %u %s; next wait %.0f ms, %u neighbours", th->attempt,
              success ? "succeeded" : "failed", th->st.interval_ms, th->st.neighbours);
    if (success) {
        node_counters(n)->steals_succeeded++;
        th->state = THIEF_IDLE;
        uv_timer_stop(&th->timer);
        node_mark_dirty(n);
        return;
    }
    if (node_steal_failed(n, th->st.parked) && th->st.parked)
        steal_on_wake(p, &th->st);
    if (th->st.parked) {
        th->state = THIEF_PARKED;
        uv_timer_stop(&th->timer);
        /* Parked thieves are woken by peers that get work; tell everyone once. */
        for (uint32_t i = 0; i < node_count(n); i++) {
            if (i == node_self(n) || !node_alive(n, i))
                continue;
            size_t at;
            node_msg_begin(n, i, MSG_IDLE, &at);
            node_msg_end(n, i, at);
        }
        log_debug("stealing parked after %u failures", th->st.failures);
        return;
    }
    th->state = THIEF_WAIT;
    start_timer(th, th->st.interval_ms);
}

/* Nobody had stealable work: a failed attempt without a request. */
static void no_victim(struct thief *th)
{
    node_counters(th->n)->steal_fails++;
    node_trace_full(th->n, TRACE_STEAL_FAIL, TRACE_NO_TASK, -1, STEAL_FAIL_NO_VICTIM, 0, 0, 0,
                    0);
    attempt_done(th, false);
}

static bool preemptive_wants(struct thief *th);

/*
 * Whether the node still wants to steal when the load replies are in.  Work may have
 * come meanwhile: at a job's start a node asks its neighbours for loads while its own
 * submission is on the way, and taking half of a neighbour's queue on top of its own
 * leaves it with half as much again as anyone, a long tail and the workload's order
 * broken (fan-in siblings run seconds apart).
 */
static bool still_wanted(struct thief *th)
{
    const struct steal_params *p = &node_cfg(th->n)->steal;
    struct steal_self self = node_steal_self(th->n);
    if (steal_starving(p, &self))
        return true;
    return p->starvation == STEAL_STARVE_PREEMPTIVE && preemptive_wants(th);
}

static void decide(struct thief *th)
{
    if (!still_wanted(th)) {
        log_debug("steal attempt %u dropped: work arrived meanwhile", th->attempt);
        th->state = THIEF_IDLE;
        uv_timer_stop(&th->timer);
        return;
    }
    int i = steal_choose_victim(th->loads, th->nvictims);
    if (i < 0) {
        no_victim(th);
        return;
    }
    uint32_t victim = th->victims[i];
    uint32_t max = request_bound(th, victim, true);
    send_steal_request(th, victim, max,
                       max ? max : steal_amount(&node_cfg(th->n)->steal, th->loads[i]));
}

static void timer_cb(uv_timer_t *h)
{
    struct thief *th = h->data;
    switch (th->state) {
    case THIEF_WAIT:
        th->state = THIEF_IDLE;
        node_mark_dirty(th->n);
        break;
    case THIEF_QUERY:
        /* Missing replies count as empty victims. */
        decide(th);
        break;
    case THIEF_REQUEST:
        node_counters(th->n)->steal_fails++;
        node_trace_full(th->n, TRACE_STEAL_FAIL, TRACE_NO_TASK, -1, STEAL_FAIL_TIMEOUT, 0, 0,
                        0, 0);
        attempt_done(th, false);
        break;
    default:
        break;
    }
}

static void start_timer(struct thief *th, double ms)
{
    uint64_t t = ms < 1 ? 1 : (uint64_t)(ms + 0.5);
    uv_timer_start(&th->timer, timer_cb, t, 0);
}

/*
 * Victims drawn from the ring window, their loads read from the vector: sqrt(N) or K
 * random nodes as with load queries, but no query goes out (--info ring).  Returns how
 * many were drawn.
 */
static uint32_t pick_from_window(struct thief *th, const struct a2ws_vec *v)
{
    uint32_t width = v->left + v->right + 1;
    uint32_t k = steal_pick_victims(&node_cfg(th->n)->steal, &th->st, v->left, width, &th->rng,
                                    th->victims, THIEF_MAX_VICTIMS);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t node = a2ws_node_at(v, (int32_t)th->victims[i] - (int32_t)v->left);
        th->victims[i] = node;
        th->loads[i] = v->e[node].avail;
    }
    return k;
}

/* Drops the dead from a draw of k victims (the policies draw from all ids); returns how
 * many are left. */
static uint32_t drop_dead(struct thief *th, uint32_t k)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (!node_alive(th->n, th->victims[i]))
            continue;
        th->loads[kept] = th->loads[i];
        th->victims[kept++] = th->victims[i];
    }
    return kept;
}

/* Starts an attempt: th->attempt and the counters move, the trace follows the request. */
static void begin_attempt(struct thief *th)
{
    th->attempt++;
    node_counters(th->n)->steals_attempted++;
}

/* The A2WS thief (paper 001 Algorithm 1, lines 3–7): plan, then ask the chosen victim. */
static void poll_a2ws(struct thief *th, struct a2ws_vec *vec, bool starving)
{
    struct a2ws_now now = a2ws_now_of(th, starving);
    struct a2ws_decision d = a2ws_plan(vec, &now, &th->rng);
    if (d.criterion != A2WS_NO_STEAL && !node_alive(th->n, d.victim))
        d.criterion = A2WS_NO_STEAL;
    if (d.criterion == A2WS_NO_STEAL) {
        /* A busy node that found nobody simply looks again later; a starving one has
         * failed an attempt and backs off like any thief. */
        if (starving) {
            begin_attempt(th);
            no_victim(th);
        }
        return;
    }
    begin_attempt(th);
    th->nvictims = 1;
    th->victims[0] = d.victim;
    log_debug("steal attempt %u: a2ws %s, S_i %.2f, asking node %u for %u", th->attempt,
              d.criterion == A2WS_CLOSEST_RATE ? "closest rate" : "in pair", d.rate, d.victim,
              d.amount);
    uint32_t max = node_cfg(th->n)->steal.amount == STEAL_AMOUNT_A2WS ? d.amount : 0;
    send_steal_request(th, d.victim, max, d.amount);
}

/* Preemptive stealing with victims other than A2WS's: after the first finished task,
 * whenever the steal equation says this node should hold at least one more task. */
static bool preemptive_wants(struct thief *th)
{
    if (!node_load(th->n).est_samples)
        return false;
    struct a2ws_vec *vec = node_info(th->n);
    if (!vec)
        return false;
    struct a2ws_now now = a2ws_now_of(th, false);
    return a2ws_rate(vec, &now, node_self(th->n)) >= 1.0;
}

/* The check step: starts an attempt if the node is starving (or, preemptive, soon). */
static void thief_step(void *state)
{
    struct thief *th = state;
    struct node *n = th->n;
    const struct steal_params *p = &node_cfg(n)->steal;
    if (!th->on || th->state != THIEF_IDLE)
        return;
    struct steal_self self = node_steal_self(n);
    bool starving = steal_starving(p, &self);
    struct a2ws_vec *vec = NULL;
    if (!starving) {
        if (p->starvation != STEAL_STARVE_PREEMPTIVE || !node_info(n))
            return;
        /* A busy node's plan changes with the clock and the vector, not with every loop
         * pass: look at most once a millisecond. */
        int64_t now = node_mono_ns(n);
        if (now < th->next_plan_ns)
            return;
        th->next_plan_ns = now + (int64_t)A2WS_PREEMPTIVE_LOOK_MS * 1000000;
    }
    vec = node_info(n);
    if (p->victims == STEAL_VICTIMS_A2WS && vec) {
        poll_a2ws(th, vec, starving);
        return;
    }
    if (!starving && !preemptive_wants(th))
        return;
    bool window = vec && p->info == STEAL_INFO_RING;
    uint32_t k = window ? pick_from_window(th, vec)
                        : steal_pick_victims(p, &th->st, node_self(n), node_count(n), &th->rng,
                                             th->victims, THIEF_MAX_VICTIMS);
    k = drop_dead(th, k);
    if (k == 0)
        return;
    begin_attempt(th);
    th->nvictims = k;
    log_debug("steal attempt %u: %u victims", th->attempt, k);
    if (window) {
        decide(th);
        return;
    }
    /* One victim leaves nothing to compare: ask it for tasks straight away. */
    if (k == 1) {
        uint32_t max = request_bound(th, th->victims[0], starving);
        send_steal_request(th, th->victims[0], max, max);
        return;
    }
    th->nreplies = 0;
    memset(th->loads, 0, k * sizeof th->loads[0]);
    memset(th->replied, 0, k * sizeof th->replied[0]);
    th->state = THIEF_QUERY;
    for (uint32_t i = 0; i < k; i++) {
        size_t at;
        struct wbuf *b = node_msg_begin(n, th->victims[i], MSG_LOAD_QUERY, &at);
        wbuf_put_u32(b, th->attempt);
        node_msg_end(n, th->victims[i], at);
    }
    start_timer(th, node_cfg(n)->steal_timeout_ms);
}

/* The cluster has (new) unfinished work: unpark and start over. */
static void thief_wake(void *state)
{
    struct thief *th = state;
    steal_on_wake(&node_cfg(th->n)->steal, &th->st);
    if (th->state == THIEF_PARKED || th->state == THIEF_WAIT) {
        uv_timer_stop(&th->timer);
        th->state = THIEF_IDLE;
    }
}

/* A parked thief hears of stealable work sooner from the vector than from a WAKE. */
static void thief_news(void *state)
{
    struct thief *th = state;
    if (th->state == THIEF_PARKED)
        node_wake(th->n);
}

static int on_load_reply(struct thief *th, uint32_t from, struct rbuf *r)
{
    uint32_t req = rbuf_u32(r);
    uint32_t sready = rbuf_u32(r);
    (void)rbuf_u32(r);
    (void)rbuf_u32(r);
    (void)rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    if (th->state != THIEF_QUERY || req != th->attempt)
        return 0; /* a late reply to an attempt already decided */
    for (uint32_t i = 0; i < th->nvictims; i++) {
        if (th->victims[i] == from && !th->replied[i]) {
            th->replied[i] = true;
            th->loads[i] = sready;
            th->nreplies++;
        }
    }
    if (th->nreplies == th->nvictims) {
        uv_timer_stop(&th->timer);
        decide(th);
    }
    return 0;
}

/* A victim that died answers nothing: a query to it counts as an empty reply, a request
 * to it fails now rather than at its timeout. */
static void thief_down(void *state, uint32_t node)
{
    struct thief *th = state;
    if (th->state == THIEF_QUERY) {
        for (uint32_t i = 0; i < th->nvictims; i++) {
            if (th->victims[i] != node)
                continue;
            /* Whatever it said before it died, it has nothing to give now. */
            th->loads[i] = 0;
            if (!th->replied[i]) {
                th->replied[i] = true;
                th->nreplies++;
            }
        }
        if (th->nreplies == th->nvictims) {
            uv_timer_stop(&th->timer);
            decide(th);
        }
    } else if (th->state == THIEF_REQUEST && th->requested == node) {
        uv_timer_stop(&th->timer);
        node_counters(th->n)->steal_fails++;
        node_trace_full(th->n, TRACE_STEAL_FAIL, TRACE_NO_TASK, (int32_t)node,
                        STEAL_FAIL_TIMEOUT, 0, 0, 0, 0);
        attempt_done(th, false);
    }
}

static int thief_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    (void)type;
    return on_load_reply(state, from, r);
}

/* Tasks in a grant were queued by the node whatever attempt they answer (a task once
 * sent must never be dropped); only the current attempt's grant ends it. */
static void thief_granted(void *state, uint32_t from, uint32_t req, uint32_t count)
{
    struct thief *th = state;
    if (th->state != THIEF_REQUEST || req != th->attempt)
        return;
    /* Fewer than asked (the victim's own slots or another thief got there first): take
     * what came; the next plan starts from the victim's entry that came with it. */
    if (count < th->asked)
        log_debug("steal attempt %u: asked node %u for %u, got %u", req, from, th->asked, count);
    uv_timer_stop(&th->timer);
    attempt_done(th, count > 0);
}

static void *thief_init(struct node *n, char **cause)
{
    (void)cause;
    const struct node_config *cfg = node_cfg(n);
    struct thief *th = xcalloc(1, sizeof *th);
    th->n = n;
    /* LW's workers ask their leader, CTWS steals when the token visits. */
    th->on = node_count(n) > 1 && cfg->steal.mode != STEAL_NONE &&
             cfg->steal.victims != STEAL_VICTIMS_TOKEN &&
             cfg->steal.victims != STEAL_VICTIMS_LEADER;
    steal_state_init(&th->st, &cfg->steal, node_count(n));
    th->state = THIEF_IDLE;
    th->rng = cfg->seed ? cfg->seed
                        : ((uint64_t)node_mono_ns(n) ^ ((uint64_t)node_self(n) << 40)) | 1;
    uv_timer_init(node_loop(n), &th->timer);
    th->timer.data = th;
    return th;
}

static void thief_close(void *state)
{
    struct thief *th = state;
    uv_timer_stop(&th->timer);
    uv_close((uv_handle_t *)&th->timer, NULL);
}

static const uint16_t thief_types[] = {MSG_LOAD_REPLY, 0};

const struct part part_thief = {
    .name = "thief",
    .init = thief_init,
    .close = thief_close,
    .free = free,
    .step = thief_step,
    .wake = thief_wake,
    .news = thief_news,
    .granted = thief_granted,
    .down = thief_down,
    .types = thief_types,
    .on_message = thief_on_message,
};
