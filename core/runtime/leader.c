/*
 * leader — the leader/workers baseline on the node's loop (paper 001 §4; the policy's
 * rules are core/policy/lw's): workers forward every movable task that becomes ready to
 * the leader, a starving worker sends the leader one request and waits, and the leader
 * answers the requests it holds, first come first served, from the head of its SReadyQ.
 * Part of the node daemon (node_impl.h); loop thread only.
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
#include "core/runtime/node_impl.h"

/* Repeats of an unanswered request wait at most this long. */
#define RESEND_MAX_MS 60000.0

void leader_configure(struct node *n)
{
    struct leader *w = &n->leader;
    w->on = n->nodes > 1 && n->cfg.steal.victims == STEAL_VICTIMS_LEADER &&
            n->cfg.steal.mode != STEAL_NONE;
    w->is_leader = w->on && n->self == LW_LEADER;
    if (!w->is_leader)
        return;
    struct lw_capacity c = lw_leader_capacity(n->cfg.slots, n->cfg.speed);
    log_info("lw leader: %u slots at speed %.3g for tasks (of %u at %.3g): the "
             "distribution thread takes the rest", c.slots, c.speed, n->cfg.slots, n->cfg.speed);
    n->cfg.slots = c.slots;
    n->cfg.speed = c.speed;
}

void leader_init(struct node *n)
{
    struct leader *w = &n->leader;
    uv_timer_init(&n->loop, &w->timer);
    w->timer.data = n;
    if (!w->is_leader)
        return;
    w->pending = xcalloc(n->nodes, sizeof *w->pending);
    w->grants = xcalloc(n->nodes, sizeof *w->grants);
    w->answered = xcalloc(n->nodes, sizeof *w->answered);
}

void leader_close(struct node *n)
{
    struct leader *w = &n->leader;
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
    free(w->pending);
    free(w->grants);
    free(w->answered);
    w->pending = NULL;
    w->grants = NULL;
    w->answered = NULL;
    w->npending = 0;
    w->on = false;
}

bool leader_forward(struct node *n, struct ntask *t)
{
    struct leader *w = &n->leader;
    if (!w->on || !lw_forwards(n->self, n->nodes))
        return false;
    size_t at;
    struct wbuf *b = node_msg_begin(n, LW_LEADER, MSG_LW_FORWARD, &at);
    wbuf_put_u32(b, 1);
    proto_put_task(b, &t->spec);
    node_msg_end(n, LW_LEADER, at);
    /* The shard must send this task's notices (a cancellation) to where it is now. */
    kvs_append(n->kvs, t->spec.key, KVS_FIELD_HISTORY, LW_LEADER, 0, 0);
    w->forwarded++;
    ntask_free(t);
    return true;
}

static void send_request(struct node *n)
{
    struct leader *w = &n->leader;
    size_t at;
    struct wbuf *b = node_msg_begin(n, LW_LEADER, MSG_LW_REQUEST, &at);
    wbuf_put_u32(b, w->req);
    wbuf_put_u32(b, w->want);
    node_msg_end(n, LW_LEADER, at);
}

static void resend_cb(uv_timer_t *h)
{
    struct node *n = h->data;
    struct leader *w = &n->leader;
    if (!w->asked || n->stopping)
        return;
    log_debug("lw request %u unanswered after %.0f ms: sent again", w->req, w->resend_ms);
    send_request(n);
    w->resend_ms = w->resend_ms * 2 < RESEND_MAX_MS ? w->resend_ms * 2 : RESEND_MAX_MS;
    uv_timer_start(&w->timer, resend_cb, (uint64_t)w->resend_ms, 0);
}

void leader_poll(struct node *n, const struct steal_self *self)
{
    struct leader *w = &n->leader;
    const struct steal_params *p = &n->cfg.steal;
    if (!w->on || w->is_leader || w->asked || !steal_starving(p, self))
        return;
    w->want = lw_want(p, self->free_slots);
    w->req++;
    w->asked = true;
    w->requests++;
    send_request(n);
    w->resend_ms = n->cfg.steal_timeout_ms ? n->cfg.steal_timeout_ms : 1000;
    uv_timer_start(&w->timer, resend_cb, (uint64_t)w->resend_ms, 0);
    n->steals_attempted++;
    n->steal_requests++;
    node_trace(n, TRACE_STEAL_REQUEST, TRACE_NO_TASK, (int32_t)LW_LEADER, w->want, 0);
}

/* Sends request q its grant of up to `count` tasks from the head of SReadyQ. */
static void answer(struct node *n, const struct lw_request *q, uint32_t count)
{
    void **tasks = xmalloc(count * sizeof *tasks);
    uint32_t got = 0;
    while (got < count) {
        struct ntask *t = readyq_pop(&n->sready);
        if (!t)
            break;
        if (!(t->spec.flags & TASK_FLAG_STEALABLE)) {
            /* SReadyQ should never hold one: a bug, repaired as the victim's side does. */
            log_warn("task %llx was in SReadyQ but is not stealable; kept here",
                     (unsigned long long)t->spec.key);
            node_queue(n, &n->lready, t, t->spec.input_bytes);
            continue;
        }
        tasks[got++] = t;
    }
    size_t at;
    struct wbuf *b = node_msg_begin(n, q->node, MSG_LW_GRANT, &at);
    wbuf_put_u32(b, q->req);
    wbuf_put_u32(b, got);
    for (uint32_t i = 0; i < got; i++)
        proto_put_task(b, &((struct ntask *)tasks[i])->spec);
    node_msg_end(n, q->node, at);
    int64_t wall = got && n->sink ? clock_wall_ns() : 0;
    for (uint32_t i = 0; i < got; i++) {
        struct ntask *t = tasks[i];
        node_trace(n, TRACE_TASK_STOLEN_OUT, t->spec.key, (int32_t)q->node, 0, wall);
        kvs_append(n->kvs, t->spec.key, KVS_FIELD_HISTORY, q->node, 0, 0);
        ntask_free(t);
    }
    n->tasks_given += got;
    n->leader.handed_out += got;
    n->leader.answered[q->node] = q->req;
    free(tasks);
}

void leader_step(struct node *n)
{
    struct leader *w = &n->leader;
    if (!w->on || !w->is_leader || !w->npending)
        return;
    size_t queued = readyq_len(&n->sready);
    if (!queued)
        return;
    uint32_t served = lw_serve(queued > UINT32_MAX ? UINT32_MAX : (uint32_t)queued, w->pending,
                               w->npending, w->grants);
    for (uint32_t i = 0; i < served; i++)
        answer(n, &w->pending[i], w->grants[i]);
    lw_dequeue(w->pending, &w->npending, served);
}

int leader_on_forward(struct node *n, uint32_t from, struct rbuf *r)
{
    uint32_t count = rbuf_u32(r);
    if (!rbuf_ok(r) || count > PROTO_MAX_BATCH)
        return -EBADMSG;
    int64_t now = clock_wall_ns();
    for (uint32_t i = 0; i < count; i++) {
        struct ntask *t = ntask_decode(r);
        if (!t)
            return -EBADMSG;
        t->t_ready = now;
        node_trace(n, TRACE_TASK_QUEUED_SHARED, t->spec.key, (int32_t)from, 0, now);
        /* A node that is not the leader (a cluster configured unevenly) keeps what it is
         * sent rather than drop it: a task once sent must run somewhere. */
        node_queue(n, &n->sready, t, t->spec.input_bytes);
    }
    n->leader.received += count;
    return 0;
}

int leader_on_request(struct node *n, uint32_t from, struct rbuf *r)
{
    struct leader *w = &n->leader;
    struct lw_request q = {.node = from};
    q.req = rbuf_u32(r);
    q.want = rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    if (!w->on || !w->is_leader) {
        log_warn("lw request from node %u, but this node is not the leader; ignored", from);
        return 0;
    }
    /* A repeat of a request already answered: its grant is on the way. */
    if (q.req == w->answered[from])
        return 0;
    if (q.want == 0)
        q.want = 1;
    w->requests++;
    /* One entry per worker and `nodes` entries: the queue cannot be full. */
    if (lw_enqueue(w->pending, &w->npending, n->nodes, &q) < 0)
        log_warn("lw request from node %u could not be held", from);
    node_mark_dirty(n);
    return 0;
}

int leader_on_grant(struct node *n, uint32_t from, struct rbuf *r)
{
    struct leader *w = &n->leader;
    uint32_t req, count;
    int64_t now = clock_wall_ns();
    int rc = thief_take_granted(n, from, r, &n->lready, &req, &count, now);
    if (rc < 0)
        return rc;
    if (count) {
        n->steals_succeeded++;
        node_trace(n, TRACE_STEAL_GRANT, TRACE_NO_TASK, (int32_t)from, count, now);
        node_mark_dirty(n);
    } else {
        n->steal_fails++;
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
