/*
 * thief — a node's side of work stealing, for every policy of the space (DESIGN.md):
 * the state machine that decides to steal (ready-only, ready+successors, or A2WS's
 * preemptive start), finds a victim (load queries to sqrt(N) or K random nodes, the
 * same draw read from the A2WS vector, or A2WS's closest-rate / in-pair choice), asks it
 * for an amount (the victim's half, chunk or single, or the A2WS steal equation's),
 * backs off exponentially, parks at the bound and wakes when the cluster has work
 * again; and the victim's side, which answers load queries and hands over the tail of
 * SReadyQ within the request's bound and the waiting-time guard.
 *
 * Decisions are the pure functions of core/policy (steal, parsec, a2ws); this file only
 * carries them out on the loop.  The baselines reuse parts of it: CTWS's holder asks
 * its victim through thief_request (token.c decides when and whom), and an LW worker's
 * poll goes to leader.c, which asks the leader instead of any victim.  Theft is
 * asynchronous (paper 001 §2.3) without locks: the victim takes from its own SReadyQ on
 * its own loop, where the executors' gets also run, so a task is either taken or run,
 * never both; the thief takes what arrives, which may be less than it asked for, and
 * its next plan starts from the victim's entry that came with the grant.  An attempt
 * that loses replies (a peer died) fails after steal_timeout_ms, so the thief never
 * hangs.  Tasks in a grant are always taken, even for a stale attempt: a task once sent
 * must never be dropped.
 *
 * The progress rule, kept here for every policy that answers steal requests (all but
 * LW, whose leader answers in leader_step after its own dispatch too): a ready task that
 * can start where it is, starts there.  (1) Requests are not answered where they are
 * read but in the check step, after dispatch (thief_answer), so whatever a pass brought
 * — a submission, a ready notice, a grant this node stole — meets the dispatcher before
 * any thief can take it: a task just stolen cannot be stolen again before it had its
 * chance to start.  (2) Of what dispatch left, the victim keeps as many tasks that need
 * no data as it has free slots (steal_keep; dispatch leaves such tasks behind only at
 * its batch bound).  Without the rule, two idle nodes granted one task back and forth
 * for ever, each on the request that rode in the same frame as the grant.  A task moves
 * only from a node that cannot start it now toward one that asked while starving, so a
 * task is stolen again only after a slot changed somewhere: no livelock.  Checked by
 * tests/unit/test_progress.c (random interleavings on a fake network) and
 * tests/integration/t_23_progress.sh.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/parsec.h"
#include "core/runtime/node_impl.h"

/* How often a busy node with preemptive stealing looks at its plan again. */
#define PREEMPTIVE_LOOK_NS 1000000

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
    free(n->thief.asks);
    n->thief.asks = NULL;
    n->thief.nasks = n->thief.asks_cap = 0;
}

/* Slots with nothing running, staged or (MATRIX executors) fetching in them. */
static uint32_t free_slots_now(const struct node *n)
{
    uint32_t slots = n->cfg.slots;
    uint32_t held = n->busy + (uint32_t)readyq_len(&n->staged) +
                    (n->cfg.prefetch == 0 ? n->staging : 0);
    return held < slots ? slots - held : 0;
}

/*
 * What the starvation test sees.  Staged tasks fill slots at once.  Staging ones hold a
 * slot only under MATRIX's executors (--prefetch 0), which fetch inside the slot; with
 * prefetch a slot idles until the fetches end, which on a loaded link is many task
 * lengths (the tail of a fan-in: every node fetching inputs of its last aggregations
 * while another still holds a queue of leaves).  So with prefetch the slots the
 * staging tasks will take are free now, and a short queue of tasks that wait for the
 * fetch window (no more than one window) is not ready work either: such a node steals
 * work that runs meanwhile (the victim gives tasks that need no data first).  A longer
 * backlog counts, so a node with data work of its own does not hoard more.
 */
struct steal_self thief_self(const struct node *n)
{
    uint32_t pf = n->cfg.prefetch == NODE_PREFETCH_SLOTS ? n->cfg.slots : n->cfg.prefetch;
    struct steal_self s = {
        .lready = (uint32_t)readyq_len(&n->lready),
        .sready = (uint32_t)readyq_len(&n->sready),
        .free_slots = free_slots_now(n),
        .running_successors = n->running_successors,
        .arriving = n->arriving,
    };
    if (pf && n->lready.data.len + n->sready.data.len <= pf) {
        s.lready = (uint32_t)n->lready.zero.len;
        s.sready = (uint32_t)n->sready.zero.len;
    }
    return s;
}

static struct a2ws_now a2ws_now_of(const struct node *n, bool starving)
{
    struct a2ws_now now = {.elapsed_s = ring_elapsed_s(n), .starving = starving};
    return now;
}

/*
 * max bounds the grant (0: the victim's amount policy alone decides); `expect` is what
 * the thief counts on getting, for the trace (STEAL_REQUEST count: tasks asked for).
 */
static void send_steal_request(struct node *n, uint32_t victim, uint32_t max, uint32_t expect)
{
    struct thief *th = &n->thief;
    th->state = THIEF_REQUEST;
    th->asked = max ? max : expect;
    size_t at;
    struct wbuf *b = node_msg_begin(n, victim, MSG_STEAL_REQUEST, &at);
    wbuf_put_u32(b, th->attempt);
    wbuf_put_u32(b, max);
    node_msg_end(n, victim, at);
    n->steal_requests++;
    node_trace(n, TRACE_STEAL_REQUEST, TRACE_NO_TASK, (int32_t)victim, th->asked, 0);
    start_timer(n, n->cfg.steal_timeout_ms);
}

/* The bound a request carries.  With the A2WS amount the thief's steal equation decides
 * (at least one: 0 would mean "no bound" to the victim); otherwise the victim's policy. */
static uint32_t request_bound(struct node *n, uint32_t victim, bool starving)
{
    if (n->cfg.steal.amount != STEAL_AMOUNT_A2WS)
        return 0;
    uint32_t d = 0;
    if (n->ring.on) {
        ring_refresh_self(n);
        struct a2ws_now now = a2ws_now_of(n, starving);
        d = a2ws_amount_for(&n->ring.vec, &now, victim);
    }
    return d ? d : 1;
}

static void attempt_done(struct node *n, bool success)
{
    struct thief *th = &n->thief;
    bool token = n->cfg.steal.victims == STEAL_VICTIMS_TOKEN;
    /* CTWS: the next chance to steal is the token's next visit, so there is nothing to
     * back off from and nothing to park: a resting token does the waiting. */
    if (!token)
        steal_on_result(&n->cfg.steal, &th->st, success, n->nodes);
    log_debug("steal attempt %u %s; next wait %.0f ms, %u neighbours", th->attempt,
              success ? "succeeded" : "failed", token ? 0.0 : th->st.interval_ms,
              th->st.neighbours);
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
        placement_flds_on_steal_failed(&n->cfg.placement, &n->flds);
    if (token) {
        th->state = THIEF_IDLE;
        uv_timer_stop(&th->timer);
        return;
    }
    if (th->st.parked &&
        placement_flds_poll_should_reset(&n->cfg.placement, &n->autop, &n->flds)) {
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

/* Nobody had stealable work: a failed attempt without a request. */
static void no_victim(struct node *n)
{
    n->steal_fails++;
    node_trace_full(n, TRACE_STEAL_FAIL, TRACE_NO_TASK, -1, STEAL_FAIL_NO_VICTIM, 0, 0, 0, 0);
    attempt_done(n, false);
}

static bool preemptive_wants(struct node *n);

/*
 * Whether the node still wants to steal when the load replies are in.  Work may have
 * come meanwhile: at a job's start a node asks its neighbours for loads while its own
 * submission is on the way, and taking half of a neighbour's queue on top of its own
 * leaves it with half as much again as anyone, a long tail and the workload's order
 * broken (fan-in siblings run seconds apart).
 */
static bool still_wanted(struct node *n)
{
    struct steal_self self = thief_self(n);
    if (steal_starving(&n->cfg.steal, &self))
        return true;
    return n->cfg.steal.starvation == STEAL_STARVE_PREEMPTIVE && n->ring.on &&
           preemptive_wants(n);
}

static void decide(struct node *n)
{
    struct thief *th = &n->thief;
    if (!still_wanted(n)) {
        log_debug("steal attempt %u dropped: work arrived meanwhile", th->attempt);
        th->state = THIEF_IDLE;
        uv_timer_stop(&th->timer);
        return;
    }
    int i = steal_choose_victim(th->loads, th->nvictims);
    if (i < 0) {
        no_victim(n);
        return;
    }
    uint32_t victim = th->victims[i];
    uint32_t max = request_bound(n, victim, true);
    send_steal_request(n, victim, max, max ? max : steal_amount(&n->cfg.steal, th->loads[i]));
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

/*
 * Victims drawn from the ring window, their loads read from the vector: sqrt(N) or K
 * random nodes as with load queries, but no query goes out (--info ring).  Returns how
 * many were drawn.
 */
static uint32_t pick_from_window(struct node *n)
{
    struct thief *th = &n->thief;
    const struct a2ws_vec *v = &n->ring.vec;
    uint32_t width = v->left + v->right + 1;
    uint32_t k = steal_pick_victims(&n->cfg.steal, &th->st, v->left, width, &th->rng,
                                    th->victims, THIEF_MAX_VICTIMS);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t node = a2ws_node_at(v, (int32_t)th->victims[i] - (int32_t)v->left);
        th->victims[i] = node;
        th->loads[i] = n->ring.entries[node].avail;
    }
    return k;
}

/* Starts an attempt: th->attempt and the counters move, the trace follows the request. */
static void begin_attempt(struct node *n)
{
    n->thief.attempt++;
    n->steals_attempted++;
}

void thief_request(struct node *n, uint32_t victim, uint32_t max, uint32_t expect)
{
    begin_attempt(n);
    n->thief.nvictims = 1;
    n->thief.victims[0] = victim;
    send_steal_request(n, victim, max, expect);
}

/* The A2WS thief (paper 001 Algorithm 1, lines 3–7): plan, then ask the chosen victim. */
static void poll_a2ws(struct node *n, bool starving)
{
    struct thief *th = &n->thief;
    ring_refresh_self(n);
    struct a2ws_now now = a2ws_now_of(n, starving);
    struct a2ws_decision d = a2ws_plan(&n->ring.vec, &now, &th->rng);
    if (d.criterion == A2WS_NO_STEAL) {
        /* A busy node that found nobody simply looks again later; a starving one has
         * failed an attempt and backs off like any thief. */
        if (starving) {
            begin_attempt(n);
            no_victim(n);
        }
        return;
    }
    begin_attempt(n);
    th->nvictims = 1;
    th->victims[0] = d.victim;
    log_debug("steal attempt %u: a2ws %s, S_i %.2f, asking node %u for %u", th->attempt,
              d.criterion == A2WS_CLOSEST_RATE ? "closest rate" : "in pair", d.rate, d.victim,
              d.amount);
    uint32_t max = n->cfg.steal.amount == STEAL_AMOUNT_A2WS ? d.amount : 0;
    send_steal_request(n, d.victim, max, d.amount);
}

/* Preemptive stealing with victims other than A2WS's: after the first finished task,
 * whenever the steal equation says this node should hold at least one more task. */
static bool preemptive_wants(struct node *n)
{
    if (!n->ring.on || !n->est_samples)
        return false;
    ring_refresh_self(n);
    struct a2ws_now now = a2ws_now_of(n, false);
    return a2ws_rate(&n->ring.vec, &now, n->self) >= 1.0;
}

void thief_poll(struct node *n)
{
    struct thief *th = &n->thief;
    const struct steal_params *p = &n->cfg.steal;
    if (th->state != THIEF_IDLE || n->nodes < 2 || p->mode == STEAL_NONE)
        return;
    /* CTWS steals only when the token visits (token.c). */
    if (p->victims == STEAL_VICTIMS_TOKEN)
        return;
    struct steal_self self = thief_self(n);
    if (p->victims == STEAL_VICTIMS_LEADER) {
        leader_poll(n, &self);
        return;
    }
    bool starving = steal_starving(p, &self);
    if (!starving) {
        if (p->starvation != STEAL_STARVE_PREEMPTIVE || !n->ring.on)
            return;
        /* A busy node's plan changes with the clock and the vector, not with every loop
         * pass: look at most once a millisecond. */
        int64_t now = clock_mono_ns();
        if (now < th->next_plan_ns)
            return;
        th->next_plan_ns = now + PREEMPTIVE_LOOK_NS;
    }
    if (p->victims == STEAL_VICTIMS_A2WS && n->ring.on) {
        poll_a2ws(n, starving);
        return;
    }
    if (!starving && !preemptive_wants(n))
        return;
    uint32_t k;
    if (n->ring.on && p->info == STEAL_INFO_RING)
        k = pick_from_window(n);
    else
        k = steal_pick_victims(p, &th->st, n->self, n->nodes, &th->rng, th->victims,
                               THIEF_MAX_VICTIMS);
    if (k == 0)
        return;
    begin_attempt(n);
    th->nvictims = k;
    log_debug("steal attempt %u: %u victims", th->attempt, k);
    if (n->ring.on && p->info == STEAL_INFO_RING) {
        decide(n);
        return;
    }
    /* One victim leaves nothing to compare: ask it for tasks straight away. */
    if (k == 1) {
        uint32_t max = request_bound(n, th->victims[0], starving);
        send_steal_request(n, th->victims[0], max, max);
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
    token_wake(n);
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

/* How long moving a task to a thief takes: its inputs over the link, plus the way
 * there (the waiting-time guard's transfer estimate). */
static double transfer_estimate(const struct node *n, const struct ntask *t)
{
    double s = (double)n->cfg.latency_ns / 1e9;
    if (n->cfg.placement.bandwidth_Bps > 0)
        s += (double)t->spec.input_bytes / n->cfg.placement.bandwidth_Bps;
    return s;
}

/*
 * Takes up to `want` tasks from the tail of SReadyQ into taken[] and returns how many,
 * never one of the `keep` oldest no-data tasks (the progress rule: they start here).
 * Tasks that must stay are put back: one that is not stealable (SReadyQ should never
 * hold one: a bug, reported and repaired by moving it to LReadyQ), and with the
 * waiting-time guard one that would start here before it could arrive there.
 */
static size_t take_for_thief(struct node *n, uint32_t want, uint32_t keep, void **taken)
{
    const struct steal_params *p = &n->cfg.steal;
    struct parsec_guard g = {
        .ready = (uint32_t)(readyq_len(&n->lready) + readyq_len(&n->sready)),
        .slots = n->cfg.slots,
        .avg_task_s = n->est_samples ? n->est_task_length_s : 0,
    };
    /* keep <= free slots <= slots: a small array; set aside, then queued again. */
    void **kept_back = keep ? xmalloc(keep * sizeof *kept_back) : NULL;
    for (uint32_t i = 0; i < keep; i++)
        kept_back[i] = readyq_take_low(&n->sready);
    size_t got = readyq_take_tail(&n->sready, want, taken);
    for (uint32_t i = 0; i < keep; i++)
        node_queue(n, &n->sready, kept_back[i], 0);
    free(kept_back);
    size_t kept = 0;
    for (size_t i = 0; i < got; i++) {
        struct ntask *t = taken[i];
        if (!(t->spec.flags & TASK_FLAG_STEALABLE)) {
            log_warn("task %llx was in SReadyQ but is not stealable; kept here",
                     (unsigned long long)t->spec.key);
            node_queue(n, &n->lready, t, t->spec.input_bytes);
            continue;
        }
        g.transfer_s = transfer_estimate(n, t);
        if (p->wait_guard && !parsec_guard_allows(&g)) {
            node_queue(n, &n->sready, t, t->spec.input_bytes);
            continue;
        }
        taken[kept++] = t;
    }
    return kept;
}

/*
 * A request is not answered where it is read: the message that brings a thief's request
 * may also bring the tasks this node stole a moment ago, or its own submission, and
 * answering at once would hand them on before this node's dispatcher saw them — with two
 * idle nodes, one task went back and forth between them millions of times and never
 * started.  Requests wait for the check step, after dispatch (thief_answer).
 */
int thief_on_steal_request(struct node *n, uint32_t from, struct rbuf *r)
{
    uint32_t req = rbuf_u32(r);
    uint32_t max = rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    struct thief *th = &n->thief;
    if (th->nasks == th->asks_cap) {
        th->asks_cap = th->asks_cap ? 2 * th->asks_cap : 8;
        th->asks = xrealloc(th->asks, th->asks_cap * sizeof *th->asks);
    }
    th->asks[th->nasks++] = (struct steal_ask){.from = from, .req = req, .max = max};
    node_mark_dirty(n);
    return 0;
}

static void answer(struct node *n, const struct steal_ask *ask)
{
    uint32_t keep = steal_keep(free_slots_now(n), (uint32_t)n->lready.zero.len,
                               (uint32_t)n->sready.zero.len);
    uint32_t avail = (uint32_t)readyq_len(&n->sready) - keep;
    uint32_t want = steal_grant(&n->cfg.steal, avail, ask->max);
    void **taken = want ? xmalloc(want * sizeof *taken) : NULL;
    size_t got = want ? take_for_thief(n, want, keep, taken) : 0;
    /* The victim's fresh entry goes first, in the same frame: the thief plans its next
     * steal from what is left here, not from what it believed (Table 1, "victim
     * realized it was stolen"). */
    ring_send_self(n, ask->from);
    size_t at;
    struct wbuf *b = node_msg_begin(n, ask->from, MSG_STEAL_GRANT, &at);
    wbuf_put_u32(b, ask->req);
    wbuf_put_u32(b, (uint32_t)got);
    for (size_t i = 0; i < got; i++)
        proto_put_task(b, &((struct ntask *)taken[i])->spec);
    node_msg_end(n, ask->from, at);
    int64_t wall = got && n->sink ? clock_wall_ns() : 0;
    for (size_t i = 0; i < got; i++) {
        struct ntask *t = taken[i];
        node_trace(n, TRACE_TASK_STOLEN_OUT, t->spec.key, (int32_t)ask->from, 0, wall);
        kvs_append(n->kvs, t->spec.key, KVS_FIELD_HISTORY, ask->from, 0, 0);
        ntask_free(t);
    }
    n->tasks_given += got;
    free(taken);
}

void thief_answer(struct node *n)
{
    struct thief *th = &n->thief;
    /* In arrival order, so that with several thieves the first to ask is served first. */
    for (size_t i = 0; i < th->nasks; i++)
        answer(n, &th->asks[i]);
    th->nasks = 0;
}

int thief_take_granted(struct node *n, uint32_t from, struct rbuf *r, struct readyq *q,
                       uint32_t *req, uint32_t *count, int64_t now)
{
    *req = rbuf_u32(r);
    *count = rbuf_u32(r);
    if (!rbuf_ok(r) || *count > PROTO_MAX_BATCH)
        return -EBADMSG;
    for (uint32_t i = 0; i < *count; i++) {
        struct ntask *t = ntask_decode(r);
        if (!t)
            return -EBADMSG;
        t->t_ready = now;
        node_trace(n, TRACE_TASK_STOLEN_IN, t->spec.key, (int32_t)from, 0, now);
        node_queue(n, q, t, t->spec.input_bytes);
    }
    n->tasks_stolen += *count;
    return 0;
}

int thief_on_steal_grant(struct node *n, uint32_t from, struct rbuf *r)
{
    struct thief *th = &n->thief;
    uint32_t req, count;
    int64_t now = clock_wall_ns();
    /* Stolen tasks go to SReadyQ, so they may move on again if this node is slow. */
    int rc = thief_take_granted(n, from, r, &n->sready, &req, &count, now);
    if (rc < 0)
        return rc;
    bool current = th->state == THIEF_REQUEST && req == th->attempt;
    /* Fewer than asked (the victim's own slots or another thief got there first): take
     * what came; the next plan starts from the victim's entry that came with it. */
    if (current && count < th->asked)
        log_debug("steal attempt %u: asked node %u for %u, got %u", req, from, th->asked, count);
    if (n->ring.on)
        a2ws_on_steal(&n->ring.vec, from, count > 0);
    if (count) {
        node_trace(n, TRACE_STEAL_GRANT, TRACE_NO_TASK, (int32_t)from, count, now);
    } else {
        n->steal_fails++;
        node_trace_full(n, TRACE_STEAL_FAIL, TRACE_NO_TASK, (int32_t)from,
                       STEAL_FAIL_EMPTY, 0, 0, 0, now);
    }
    if (current) {
        uv_timer_stop(&th->timer);
        attempt_done(n, count > 0);
    }
    return 0;
}
