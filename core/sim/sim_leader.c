/*
 * sim_leader — the leader/workers baseline in the simulator (paper 001 §4, the lw
 * preset), as core/runtime/leader.c runs it: node LW_LEADER leads with the capacity
 * lw_leader_capacity leaves it (one slot fewer, or half the speed on one slot, for the
 * thread that distributes the tasks); a worker forwards every movable task that becomes
 * ready (placement put it in SReadyQ, or the FLDS monitor spilled it) to the leader's
 * SReadyQ; a starving worker sends the leader one request for lw_want tasks and waits;
 * the leader holds the requests it cannot serve yet (lw_enqueue) and answers them first
 * come first served (lw_serve) from the head of its SReadyQ after its own dispatch, the
 * tasks landing in the worker's LReadyQ.  A forward, a request and a grant are a message
 * of one latency each.  Workers never steal from each other: the thief of sim_thief.c
 * is off.  Trace as the daemons': a request and its answer are STEAL_REQUEST and
 * STEAL_GRANT (or STEAL_FAIL), each task handed out TASK_STOLEN_OUT on the leader and
 * TASK_STOLEN_IN on the worker, a forwarded task TASK_QUEUED_SHARED on the leader with
 * the worker as peer.
 *
 * Memory: the leader's request queue, 16 bytes a node, once.  No message is lost here,
 * so the daemon's repeats of an unanswered request have no counterpart.
 *
 * Called by sim.c's event loop and sim_thief.c (sim_core.h).
 */
#include <assert.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/policy/lw.h"
#include "core/sim/sim_core.h"

struct sim_leader {
    struct lw_request *pending; /* owned, `nodes` entries: the held requests, FIFO */
    uint32_t npending;
    uint32_t *grants;           /* owned, `nodes` entries: lw_serve's answer */
};

bool sim__leader_on(const struct sim_config *cfg)
{
    return cfg->nodes > 1 && cfg->steal.mode != STEAL_NONE &&
           cfg->steal.victims == STEAL_VICTIMS_LEADER;
}

void sim__leader_capacity(const struct sim_config *cfg, uint32_t id, uint32_t *slots,
                          double *speed)
{
    if (!sim__leader_on(cfg) || id != LW_LEADER)
        return;
    struct lw_capacity c = lw_leader_capacity(*slots, *speed);
    *slots = c.slots;
    *speed = c.speed;
}

void sim__leader_init(struct sim *s)
{
    if (!sim__leader_on(s->cfg))
        return;
    struct sim_leader *w = xcalloc(1, sizeof *w);
    w->pending = xcalloc(s->cfg->nodes, sizeof *w->pending);
    w->grants = xcalloc(s->cfg->nodes, sizeof *w->grants);
    s->leader = w;
}

void sim__leader_free(struct sim *s)
{
    struct sim_leader *w = s->leader;
    if (!w)
        return;
    free(w->pending);
    free(w->grants);
    free(w);
    s->leader = NULL;
}

bool sim__leader_offer(struct sim *s, uint32_t id, uint32_t task)
{
    if (!s->leader || id == LW_LEADER)
        return false;
    s->tasks[task].holder = LW_LEADER;
    sim__send(s, id, LW_LEADER, EV_LW_FORWARD, task, id, 0);
    return true;
}

void sim__leader_on_forward(struct sim *s, uint32_t id, uint32_t task, uint32_t from)
{
    uint64_t sum;
    sim__inputs_of(s, task, NULL, 0, &sum);
    sim__trace(s, id, TRACE_TASK_QUEUED_SHARED, task, (int32_t)from, 0, 0, 0, 0);
    sim__q_push(&s->nodes[id].sready, sum, task);
    sim__on_new_ready(s, id);
}

void sim__leader_on_request(struct sim *s, uint32_t worker, uint32_t req, uint32_t want)
{
    struct sim_leader *w = s->leader;
    struct lw_request q = {.node = worker, .req = req, .want = want ? want : 1};
    /* One entry per worker and `nodes` entries: the queue cannot be full. */
    int rc = lw_enqueue(w->pending, &w->npending, s->cfg->nodes, &q);
    assert(rc == 0);
    (void)rc;
}

/* Request q's grant of up to `count` tasks from the head of SReadyQ: the order the
 * leader's own slots take them, so the central queue is one queue served in one order. */
static void answer(struct sim *s, const struct lw_request *q, uint32_t count)
{
    struct node *n = &s->nodes[LW_LEADER];
    uint32_t gi = sim__grant_new(s, count);
    struct grant *g = &s->grants[gi];
    while (g->n < count && readyq_len(&n->sready)) {
        uint32_t task = sim__q_pop(&n->sready);
        g->tasks[g->n++] = task;
        s->tasks[task].holder = q->node;
        sim__trace(s, LW_LEADER, TRACE_TASK_STOLEN_OUT, task, (int32_t)q->node, 0, 0, 0, 0);
    }
    n->stolen_out += g->n;
    sim__send(s, LW_LEADER, q->node, EV_LW_GRANT, LW_LEADER, q->req, gi);
}

/* A starving worker asks the leader, once until it is answered (leader.c's worker_poll). */
static void worker_poll(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    if (n->state == TH_REQUEST || s->left == 0 || !sim__starving(s, n))
        return;
    uint32_t want = lw_want(&s->cfg->steal, n->free_slots);
    n->attempt++;
    n->state = TH_REQUEST;
    s->res->steal_attempts++;
    n->steal_requests++;
    sim__trace(s, id, TRACE_STEAL_REQUEST, UINT32_MAX, LW_LEADER, 0, want, 0, 0);
    sim__send(s, id, LW_LEADER, EV_LW_REQUEST, id, n->attempt, want);
}

/* After every event at a node (leader.c's step, after the pass's dispatch): a worker
 * asks when it starves; the leader answers the requests it holds with what it has. */
void sim__leader_step(struct sim *s, uint32_t id)
{
    struct sim_leader *w = s->leader;
    if (id != LW_LEADER) {
        worker_poll(s, id);
        return;
    }
    size_t queued = readyq_len(&s->nodes[id].sready);
    if (!w->npending || !queued)
        return;
    uint32_t served = lw_serve(queued > UINT32_MAX ? UINT32_MAX : (uint32_t)queued, w->pending,
                               w->npending, w->grants);
    for (uint32_t i = 0; i < served; i++)
        answer(s, &w->pending[i], w->grants[i]);
    lw_dequeue(w->pending, &w->npending, served);
}

void sim__leader_on_grant(struct sim *s, uint32_t id, uint32_t req, uint32_t gi)
{
    struct node *n = &s->nodes[id];
    struct grant *g = &s->grants[gi];
    uint32_t k = g->n;
    for (uint32_t i = 0; i < k; i++) {
        uint64_t sum;
        sim__inputs_of(s, g->tasks[i], NULL, 0, &sum);
        sim__trace(s, id, TRACE_TASK_STOLEN_IN, g->tasks[i], LW_LEADER, 0, 0, 0, 0);
        /* Under LW nobody takes tasks from a worker: they go to its LReadyQ. */
        sim__q_push(&n->lready, sum, g->tasks[i]);
    }
    sim__grant_free(s, gi);
    if (k) {
        n->stolen_in += k;
        s->res->tasks_stolen += k;
        s->res->steals_ok++;
        sim__trace(s, id, TRACE_STEAL_GRANT, UINT32_MAX, LW_LEADER, 0, k, 0, 0);
    } else {
        n->steal_fails++;
        sim__trace(s, id, TRACE_STEAL_FAIL, UINT32_MAX, LW_LEADER, STEAL_FAIL_EMPTY, 0, 0, 0);
    }
    /* Only the answer to the latest request frees the worker to ask again. */
    if (req == n->attempt && n->state == TH_REQUEST)
        n->state = TH_IDLE;
    if (k)
        sim__dispatch(s, id);
}
