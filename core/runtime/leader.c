/*
 * leader — the leader/workers baseline on the node's loop (paper 001 §4; the policy's
 * rules are core/policy/lw's): workers forward every movable task that becomes ready to
 * the leader, a starving worker sends the leader one request and waits, and the leader
 * answers the requests it holds, first come first served, from the head of its SReadyQ.
 * A part of the node daemon (part.h); loop thread only.
 *
 * Nothing here polls: a request the leader cannot serve yet stays in its queue and is
 * answered when tasks arrive, in the check step of the pass that brought them, so a
 * pass's answers leave as one batch per worker.  Only a request that may have been lost
 * (the leader was not reachable yet, or its connection dropped) is repeated, after
 * steal_timeout_ms and then at doubling intervals; the leader knows the last request it
 * answered for each worker, so a repeat is never answered twice.  The leader's "extra
 * thread" is its loop thread; what that thread costs its compute is charged by
 * leader_configure, which takes a slot from the leader's executors (lw_leader_capacity).
 *
 * Trace: a worker's request and its answer are STEAL_REQUEST and STEAL_GRANT (the
 * leader is the only victim), each task handed out is TASK_STOLEN_OUT on the leader and
 * TASK_STOLEN_IN on the worker, and a forwarded task shows up on the leader as
 * TASK_QUEUED_SHARED with the worker as peer.  Grants go to the worker's LReadyQ: under
 * LW nobody takes tasks from a worker.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/kvs/kvs.h"
#include "core/policy/fd.h"
#include "core/policy/lw.h"
#include "core/runtime/part.h"

/* Repeats of an unanswered request wait at most this long. */
#define RESEND_MAX_MS 60000.0

struct leader {
    struct node *n;
    bool on;                    /* --victims leader, two nodes or more, stealing on */
    bool is_leader;             /* this node leads (the lowest live id; LW_LEADER at first) */
    uint32_t leader;            /* who leads now */
    bool asked;                 /* worker: a request is out and not answered yet */
    uint32_t req, want;         /* worker: its latest request */
    double resend_ms;           /* worker: wait before repeating it (a lost message) */
    uv_timer_t timer;           /* worker: repeats an unanswered request */
    struct lw_request *pending; /* leader: owned, `nodes` entries; the held requests, FIFO */
    uint32_t npending;
    uint32_t *grants;           /* leader: owned, `nodes` entries; lw_serve's answer */
    uint32_t *answered;         /* leader: owned, `nodes` entries; last request id answered */
    uint64_t forwarded, received, requests, handed_out; /* for the closing log line */
};

static bool lw_on(const struct node_config *cfg)
{
    return cfg->cluster->count > 1 && cfg->steal.victims == STEAL_VICTIMS_LEADER &&
           cfg->steal.mode != STEAL_NONE;
}

static void leader_configure(struct node_config *cfg)
{
    if (!lw_on(cfg) || cfg->id != LW_LEADER)
        return;
    struct lw_capacity c = lw_leader_capacity(cfg->slots, cfg->speed);
    log_info("lw leader: %u slots at speed %.3g for tasks (of %u at %.3g): the "
             "distribution thread takes the rest", c.slots, c.speed, cfg->slots, cfg->speed);
    cfg->slots = c.slots;
    cfg->speed = c.speed;
}

static void become_leader(struct leader *w)
{
    uint32_t nodes = node_count(w->n);
    w->is_leader = true;
    w->pending = xcalloc(nodes, sizeof *w->pending);
    w->grants = xcalloc(nodes, sizeof *w->grants);
    w->answered = xcalloc(nodes, sizeof *w->answered);
}

static void *leader_init(struct node *n, char **cause)
{
    (void)cause;
    struct leader *w = xcalloc(1, sizeof *w);
    w->n = n;
    w->on = lw_on(node_cfg(n));
    w->leader = LW_LEADER;
    w->is_leader = w->on && node_self(n) == LW_LEADER;
    uv_timer_init(node_loop(n), &w->timer);
    w->timer.data = w;
    if (w->is_leader)
        become_leader(w);
    return w;
}

static void leader_close(void *state)
{
    struct leader *w = state;
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, NULL);
    if (w->on && w->is_leader)
        log_info("lw leader: %llu tasks received from workers, %llu requests, %llu tasks "
                 "handed out, %u requests still held", (unsigned long long)w->received,
                 (unsigned long long)w->requests, (unsigned long long)w->handed_out,
                 w->npending);
    else if (w->on)
        log_info("lw worker: %llu tasks forwarded to the leader, %llu requests",
                 (unsigned long long)w->forwarded, (unsigned long long)w->requests);
}

static void leader_free(void *state)
{
    struct leader *w = state;
    free(w->pending);
    free(w->grants);
    free(w->answered);
    free(w);
}

/* A movable ready task of a worker goes to the leader. */
static bool leader_offer(void *state, struct ntask *t)
{
    struct leader *w = state;
    struct node *n = w->n;
    if (!w->on || w->is_leader)
        return false;
    size_t at;
    struct wbuf *b = node_msg_begin(n, w->leader, MSG_LW_FORWARD, &at);
    wbuf_put_u32(b, 1);
    proto_put_task(b, &t->spec);
    node_msg_end(n, w->leader, at);
    /* The shard must send this task's notices (a cancellation) to where it is now. */
    kvs_append(node_kvs(n), t->spec.key, KVS_FIELD_HISTORY, w->leader, 0, 0);
    node_moved(n, t->spec.key, w->leader);
    w->forwarded++;
    ntask_free(t);
    return true;
}

static void send_request(struct leader *w)
{
    struct node *n = w->n;
    size_t at;
    struct wbuf *b = node_msg_begin(n, w->leader, MSG_LW_REQUEST, &at);
    wbuf_put_u32(b, w->req);
    wbuf_put_u32(b, w->want);
    node_msg_end(n, w->leader, at);
}

static void resend_cb(uv_timer_t *h)
{
    struct leader *w = h->data;
    if (!w->asked || node_stopping(w->n))
        return;
    log_debug("lw request %u unanswered after %.0f ms: sent again", w->req, w->resend_ms);
    send_request(w);
    w->resend_ms = w->resend_ms * 2 < RESEND_MAX_MS ? w->resend_ms * 2 : RESEND_MAX_MS;
    uv_timer_start(&w->timer, resend_cb, (uint64_t)w->resend_ms, 0);
}

/* A starving worker asks the leader, once until it is answered. */
static void worker_poll(struct leader *w)
{
    struct node *n = w->n;
    const struct steal_params *p = &node_cfg(n)->steal;
    struct steal_self self = node_steal_self(n);
    if (w->asked || !steal_starving(p, &self))
        return;
    w->want = lw_want(p, self.free_slots);
    w->req++;
    w->asked = true;
    w->requests++;
    send_request(w);
    w->resend_ms = node_cfg(n)->steal_timeout_ms ? node_cfg(n)->steal_timeout_ms : 1000;
    uv_timer_start(&w->timer, resend_cb, (uint64_t)w->resend_ms, 0);
    struct node_counters *c = node_counters(n);
    c->steals_attempted++;
    c->steal_requests++;
    node_trace(n, TRACE_STEAL_REQUEST, TRACE_NO_TASK, (int32_t)w->leader, w->want, 0);
}

/* Sends request q its grant of up to `count` tasks from the head of SReadyQ. */
static void answer(struct leader *w, const struct lw_request *q, uint32_t count)
{
    struct node *n = w->n;
    void **tasks = xmalloc(count * sizeof *tasks);
    uint32_t got = 0;
    while (got < count) {
        struct ntask *t = readyq_pop(node_readyq(n, NODE_SREADY));
        if (!t)
            break;
        if (!(t->spec.flags & TASK_FLAG_STEALABLE)) {
            /* SReadyQ should never hold one: a bug, repaired as the victim's side does. */
            log_warn("task %llx was in SReadyQ but is not stealable; kept here",
                     (unsigned long long)t->spec.key);
            node_queue(n, NODE_LREADY, t, t->spec.input_bytes);
            continue;
        }
        tasks[got++] = t;
    }
    node_send_grant(n, q->node, MSG_LW_GRANT, q->req, tasks, got);
    w->handed_out += got;
    w->answered[q->node] = q->req;
    free(tasks);
}

/* A worker's poll; the leader's answers, after its own dispatch: its free slots take
 * their tasks first, like any worker's that asked, only without the round trip. */
static void leader_step(void *state)
{
    struct leader *w = state;
    if (!w->on)
        return;
    if (!w->is_leader) {
        worker_poll(w);
        return;
    }
    if (!w->npending)
        return;
    size_t queued = readyq_len(node_readyq(w->n, NODE_SREADY));
    if (!queued)
        return;
    uint32_t served = lw_serve(queued > UINT32_MAX ? UINT32_MAX : (uint32_t)queued, w->pending,
                               w->npending, w->grants);
    for (uint32_t i = 0; i < served; i++)
        answer(w, &w->pending[i], w->grants[i]);
    lw_dequeue(w->pending, &w->npending, served);
}

static int on_forward(struct leader *w, uint32_t from, struct rbuf *r)
{
    struct node *n = w->n;
    uint32_t count = rbuf_u32(r);
    if (!rbuf_ok(r) || count > PROTO_MAX_BATCH)
        return -EBADMSG;
    int64_t now = node_wall_ns(n);
    for (uint32_t i = 0; i < count; i++) {
        struct ntask *t = ntask_decode(r);
        if (!t)
            return -EBADMSG;
        t->t_ready = now;
        node_trace(n, TRACE_TASK_QUEUED_SHARED, t->spec.key, (int32_t)from, 0, now);
        /* A node that is not the leader (a cluster configured unevenly) keeps what it is
         * sent rather than drop it: a task once sent must run somewhere. */
        node_queue(n, NODE_SREADY, t, t->spec.input_bytes);
    }
    w->received += count;
    return 0;
}

/* Who leads once the present leader is dead: the lowest live id past it, since the
 * leader is the lowest live id (LW_LEADER, 0, at first; fd_lowest_live after). */
static uint32_t successor_of_leader(const struct leader *w)
{
    uint32_t after = w->leader + 1, nodes = node_count(w->n);
    if (after >= nodes)
        return UINT32_MAX;
    uint32_t k = fd_lowest_live(nodes - after, node_dead_set(w->n) + after);
    return k < nodes - after ? after + k : UINT32_MAX;
}

static int on_request(struct leader *w, uint32_t from, struct rbuf *r)
{
    struct node *n = w->n;
    struct lw_request q = {.node = from};
    q.req = rbuf_u32(r);
    q.want = rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    if (!w->on || !w->is_leader) {
        /* The worker saw our leader die before we did: it asks the next lowest live id,
         * us, and asks again on its timer; by then we lead.  A normal part of a
         * failover, not a fault.  Any other sender is misconfigured. */
        if (w->on && successor_of_leader(w) == node_self(w->n))
            log_info("lw request from node %u before this node saw leader %u die; the "
                     "worker asks again", from, w->leader);
        else
            log_warn("lw request from node %u, but this node is not the leader; ignored",
                     from);
        return 0;
    }
    /* A repeat of a request already answered: its grant is on the way. */
    if (q.req == w->answered[from])
        return 0;
    if (q.want == 0)
        q.want = 1;
    w->requests++;
    /* One entry per worker and `nodes` entries: the queue cannot be full. */
    if (lw_enqueue(w->pending, &w->npending, node_count(n), &q) < 0)
        log_warn("lw request from node %u could not be held", from);
    node_mark_dirty(n);
    return 0;
}

static int on_grant(struct leader *w, uint32_t from, struct rbuf *r)
{
    struct node *n = w->n;
    uint32_t req, count;
    int64_t now = node_wall_ns(n);
    int rc = node_take_granted(n, from, r, NODE_LREADY, &req, &count, now);
    if (rc < 0)
        return rc;
    if (count) {
        node_counters(n)->steals_succeeded++;
        node_trace(n, TRACE_STEAL_GRANT, TRACE_NO_TASK, (int32_t)from, count, now);
        node_mark_dirty(n);
    } else {
        node_counters(n)->steal_fails++;
        node_trace_full(n, TRACE_STEAL_FAIL, TRACE_NO_TASK, (int32_t)from, STEAL_FAIL_EMPTY, 0,
                        0, 0, now);
    }
    /* Only the answer to the latest request frees the worker to ask again; the leader
     * answers each request once, so an older one cannot arrive after it. */
    if (req == w->req && w->asked) {
        w->asked = false;
        uv_timer_stop(&w->timer);
        node_mark_dirty(n);
    }
    return 0;
}

/*
 * A worker that died: its held request goes.  The leader that died: the lowest live id
 * leads from now on (every node computes the same), a worker's unanswered request goes
 * to it at the next step.  The new leader runs with its slots as configured: the
 * distribution thread's charge (leader_configure) is taken at start only.  Tasks the
 * dead leader held are lost with it until resubmission finds them.
 */
static void leader_down(void *state, uint32_t node)
{
    struct leader *w = state;
    if (!w->on)
        return;
    if (w->is_leader) {
        uint32_t kept = 0;
        for (uint32_t i = 0; i < w->npending; i++)
            if (w->pending[i].node != node)
                w->pending[kept++] = w->pending[i];
        w->npending = kept;
        return;
    }
    if (node != w->leader)
        return;
    struct node *n = w->n;
    w->leader = fd_lowest_live(node_count(n), node_dead_set(n));
    log_info("lw: leader %u is dead; node %u leads now", node, w->leader);
    if (w->leader == node_self(n)) {
        become_leader(w);
        w->asked = false;
        uv_timer_stop(&w->timer);
    } else if (w->asked) {
        w->asked = false;
        uv_timer_stop(&w->timer);
    }
    node_mark_dirty(n);
}

static int leader_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct leader *w = state;
    switch (type) {
    case MSG_LW_FORWARD: return on_forward(w, from, r);
    case MSG_LW_REQUEST: return on_request(w, from, r);
    default: return on_grant(w, from, r);
    }
}

static const uint16_t leader_types[] = {MSG_LW_FORWARD, MSG_LW_REQUEST, MSG_LW_GRANT, 0};

const struct part part_leader = {
    .name = "leader",
    .configure = leader_configure,
    .init = leader_init,
    .close = leader_close,
    .free = leader_free,
    .step = leader_step,
    .offer = leader_offer,
    .down = leader_down,
    .types = leader_types,
    .on_message = leader_on_message,
};
