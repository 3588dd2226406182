/*
 * thief — a node's side of adaptive work stealing (papers 000 §III.A, 002 §2.2.1): the
 * state machine that asks neighbours for their load, robs the most loaded, backs off
 * exponentially, parks at the bound and wakes when the cluster has work again; and the
 * victim's side, which answers load queries and hands over the tail of SReadyQ.
 *
 * Decisions (starving? whom to ask? whom to rob? how many? how long to wait?) are the
 * pure functions of core/policy/steal; this file only carries them out on the loop.
 * An attempt that loses replies (a peer died) fails after steal_timeout_ms, so the
 * thief never hangs.  Tasks in a grant are always taken, even for a stale attempt: a
 * task once sent must never be dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/runtime/node_impl.h"

static void start_timer(struct node *n, double ms);

void thief_init(struct node *n)
{
    struct thief *th = &n->thief;
    steal_state_init(&th->st, &n->cfg.steal, n->nodes);
    th->state = THIEF_IDLE;
    th->rng = n->cfg.seed ? n->cfg.seed
                          : ((uint64_t)clock_mono_ns() ^ ((uint64_t)n->self << 40)) | 1;
    uv_timer_init(&n->loop, &th->timer);
    th->timer.data = n;
}

void thief_close(struct node *n)
{
    uv_timer_stop(&n->thief.timer);
    uv_close((uv_handle_t *)&n->thief.timer, NULL);
}

static struct steal_self self_view(const struct node *n)
{
    struct steal_self s = {
        .lready = (uint32_t)readyq_len(&n->lready),
        .sready = (uint32_t)readyq_len(&n->sready),
        /* Tasks staging or staged will fill slots soon: they are not free. */
        .free_slots = n->busy + n->staging + readyq_len(&n->staged) < n->cfg.slots
                          ? n->cfg.slots - n->busy - n->staging - (uint32_t)readyq_len(&n->staged)
                          : 0,
    };
    return s;
}

static void send_steal_request(struct node *n, uint32_t victim)
{
    struct thief *th = &n->thief;
    th->state = THIEF_REQUEST;
    size_t at;
    struct wbuf *b = node_msg_begin(n, victim, MSG_STEAL_REQUEST, &at);
    wbuf_put_u32(b, th->attempt);
    wbuf_put_u32(b, 0); /* no cap: the victim's amount policy decides */
    node_msg_end(n, victim, at);
    n->steal_requests++;
    node_trace(n, TRACE_STEAL_REQUEST, TRACE_NO_TASK, (int32_t)victim, 0, 0);
    start_timer(n, n->cfg.steal_timeout_ms);
}

static void attempt_done(struct node *n, bool success)
{
    struct thief *th = &n->thief;
    steal_on_result(&n->cfg.steal, &th->st, success, n->nodes);
    log_debug("steal attempt %u %s; next wait %.0f ms, %u neighbours", th->attempt,
              success ? "succeeded" : "failed", th->st.interval_ms, th->st.neighbours);
    if (success) {
        n->steals_succeeded++;
        th->state = THIEF_IDLE;
        uv_timer_stop(&th->timer);
        node_mark_dirty(n);
        return;
    }
    /* tt only means something while FLDS decides (auto may be at MLB or MDL now), and
     * only once this node has had work: the failures of a node waiting for its first
     * tasks would otherwise push tt so high that the monitor never runs. */
    if (n->first_start_ns &&
        placement_in_force(&n->cfg.placement, &n->autop) == PLACEMENT_FLDS)
        flds_on_steal_failed(&n->cfg.placement, &n->flds);
    if (th->st.parked && flds_poll_should_reset(&n->cfg.placement, &n->autop, &n->flds)) {
        /* FLDS: the threshold fell low enough that stealing may pay again (002 §4.4). */
        steal_on_wake(&n->cfg.steal, &th->st);
    }
    if (th->st.parked) {
        th->state = THIEF_PARKED;
        uv_timer_stop(&th->timer);
        /* Parked thieves are woken by peers that get work; tell everyone once. */
        for (uint32_t i = 0; i < n->nodes; i++) {
            if (i == n->self)
                continue;
            size_t at;
            node_msg_begin(n, i, MSG_IDLE, &at);
            node_msg_end(n, i, at);
        }
        log_debug("stealing parked after %u failures", th->st.failures);
        return;
    }
    th->state = THIEF_WAIT;
    start_timer(n, th->st.interval_ms);
}

static void decide(struct node *n)
{
    struct thief *th = &n->thief;
    int i = steal_choose_victim(th->loads, th->nvictims);
    if (i < 0) {
        /* Nobody asked had stealable work: a failure without a request. */
        n->steal_fails++;
        node_trace_full(n, TRACE_STEAL_FAIL, TRACE_NO_TASK, -1, STEAL_FAIL_NO_VICTIM, 0, 0,
                       0, 0);
        attempt_done(n, false);
    } else {
        send_steal_request(n, th->victims[i]);
    }
}

static void timer_cb(uv_timer_t *h)
{
    struct node *n = h->data;
    struct thief *th = &n->thief;
    switch (th->state) {
    case THIEF_WAIT:
        th->state = THIEF_IDLE;
        node_mark_dirty(n);
        break;
    case THIEF_QUERY:
        /* Missing replies count as empty victims. */
        decide(n);
        break;
    case THIEF_REQUEST:
        n->steal_fails++;
        node_trace_full(n, TRACE_STEAL_FAIL, TRACE_NO_TASK, -1, STEAL_FAIL_TIMEOUT, 0, 0,
                       0, 0);
        attempt_done(n, false);
        break;
    default:
        break;
    }
}

static void start_timer(struct node *n, double ms)
{
    uint64_t t = ms < 1 ? 1 : (uint64_t)(ms + 0.5);
    uv_timer_start(&n->thief.timer, timer_cb, t, 0);
}

void thief_poll(struct node *n)
{
    struct thief *th = &n->thief;
    if (th->state != THIEF_IDLE || n->nodes < 2)
        return;
    struct steal_self self = self_view(n);
    if (!steal_starving(&n->cfg.steal, &self))
        return;
    uint32_t k = steal_pick_victims(&n->cfg.steal, &th->st, n->self, n->nodes, &th->rng,
                                    th->victims, THIEF_MAX_VICTIMS);
    if (k == 0)
        return;
    th->attempt++;
    th->nvictims = k;
    log_debug("steal attempt %u: asking %u victims", th->attempt + 0, k);
    th->nreplies = 0;
    memset(th->loads, 0, k * sizeof th->loads[0]);
    memset(th->replied, 0, k * sizeof th->replied[0]);
    n->steals_attempted++;
    if (n->cfg.steal.mode == STEAL_RANDOM1) {
        send_steal_request(n, th->victims[0]);
        return;
    }
    th->state = THIEF_QUERY;
    for (uint32_t i = 0; i < k; i++) {
        size_t at;
        struct wbuf *b = node_msg_begin(n, th->victims[i], MSG_LOAD_QUERY, &at);
        wbuf_put_u32(b, th->attempt);
        node_msg_end(n, th->victims[i], at);
    }
    start_timer(n, n->cfg.steal_timeout_ms);
}

void thief_wake(struct node *n)
{
    struct thief *th = &n->thief;
    steal_on_wake(&n->cfg.steal, &th->st);
    if (th->state == THIEF_PARKED || th->state == THIEF_WAIT) {
        uv_timer_stop(&th->timer);
        th->state = THIEF_IDLE;
    }
    node_mark_dirty(n);
}

void thief_wake_idle_peers(struct node *n)
{
    /* Two or more stealable tasks: enough that a thief can take some and we keep some. */
    if (readyq_len(&n->sready) < 2)
        return;
    for (uint32_t i = 0; i < n->nodes; i++) {
        if (!n->peers[i].idle)
            continue;
        n->peers[i].idle = false;
        size_t at;
        node_msg_begin(n, i, MSG_WAKE, &at);
        node_msg_end(n, i, at);
    }
}

int thief_on_load_query(struct node *n, uint32_t from, struct rbuf *r)
{
    uint32_t req = rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    size_t at;
    struct wbuf *b = node_msg_begin(n, from, MSG_LOAD_REPLY, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u32(b, (uint32_t)readyq_len(&n->sready));
    wbuf_put_u32(b, (uint32_t)readyq_len(&n->lready));
    wbuf_put_u32(b, n->busy);
    wbuf_put_u32(b, n->cfg.slots);
    node_msg_end(n, from, at);
    return 0;
}

int thief_on_load_reply(struct node *n, uint32_t from, struct rbuf *r)
{
    struct thief *th = &n->thief;
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
        decide(n);
    }
    return 0;
}

int thief_on_steal_request(struct node *n, uint32_t from, struct rbuf *r)
{
    uint32_t req = rbuf_u32(r);
    uint32_t max = rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    uint32_t want = steal_amount(&n->cfg.steal, (uint32_t)readyq_len(&n->sready));
    if (max && want > max)
        want = max;
    void **taken = want ? xmalloc(want * sizeof *taken) : NULL;
    size_t got = want ? readyq_take_tail(&n->sready, want, taken) : 0;
    size_t at;
    struct wbuf *b = node_msg_begin(n, from, MSG_STEAL_GRANT, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u32(b, (uint32_t)got);
    for (size_t i = 0; i < got; i++)
        proto_put_task(b, &((struct ntask *)taken[i])->spec);
    node_msg_end(n, from, at);
    int64_t wall = got && n->sink ? clock_wall_ns() : 0;
    for (size_t i = 0; i < got; i++) {
        struct ntask *t = taken[i];
        node_trace(n, TRACE_TASK_STOLEN_OUT, t->spec.key, (int32_t)from, 0, wall);
        kvs_append(n->kvs, t->spec.key, KVS_FIELD_HISTORY, from, 0, 0);
        ntask_free(t);
    }
    n->tasks_given += got;
    free(taken);
    return 0;
}

int thief_on_steal_grant(struct node *n, uint32_t from, struct rbuf *r)
{
    struct thief *th = &n->thief;
    uint32_t req = rbuf_u32(r);
    uint32_t count = rbuf_u32(r);
    if (!rbuf_ok(r) || count > PROTO_MAX_BATCH)
        return -EBADMSG;
    int64_t now = clock_wall_ns();
    for (uint32_t i = 0; i < count; i++) {
        struct ntask *t = ntask_decode(r);
        if (!t)
            return -EBADMSG;
        t->t_ready = now;
        node_trace(n, TRACE_TASK_STOLEN_IN, t->spec.key, (int32_t)from, 0, now);
        /* Stolen tasks go to SReadyQ, so they may move on again if this node is slow. */
        readyq_push(&n->sready, t, t->spec.input_bytes);
    }
    n->tasks_stolen += count;
    if (count) {
        node_trace(n, TRACE_STEAL_GRANT, TRACE_NO_TASK, (int32_t)from, count, now);
    } else {
        n->steal_fails++;
        node_trace_full(n, TRACE_STEAL_FAIL, TRACE_NO_TASK, (int32_t)from,
                       STEAL_FAIL_EMPTY, 0, 0, 0, now);
    }
    if (count)
        node_mark_dirty(n);
    if (th->state == THIEF_REQUEST && req == th->attempt) {
        uv_timer_stop(&th->timer);
        attempt_done(n, count > 0);
    }
    return 0;
}
