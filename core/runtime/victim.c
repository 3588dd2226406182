/*
 * victim — a node's side of being stolen from, for every policy that answers steal
 * requests (all but LW, whose leader answers its own): load queries answered with the
 * queue lengths, and steal requests answered with the tail of SReadyQ within the
 * request's bound and the waiting-time guard (paper 004's PaRSEC victim policies,
 * decided by core/policy/steal and parsec).  A part of the node daemon (part.h); loop
 * thread only.
 *
 * The progress rule, kept here: a ready task that can start where it is, starts there.
 * (1) Requests are not answered where they are read but in this part's step, after
 * dispatch, so whatever a pass brought — a submission, a ready notice, a grant this
 * node stole — meets the dispatcher before any thief can take it: a task just stolen
 * cannot be stolen again before it had its chance to start.  (2) Of what dispatch left,
 * the victim keeps as many tasks that need no data as it has free slots (steal_keep;
 * dispatch leaves such tasks behind only at its batch bound).  Without the rule, two
 * idle nodes granted one task back and forth for ever, each on the request that rode in
 * the same frame as the grant.  A task moves only from a node that cannot start it now
 * toward one that asked while starving, so a task is stolen again only after a slot
 * changed somewhere: no livelock.  Checked by tests/unit/test_progress.c (random
 * interleavings on a fake network), tests/unit/test_part_victim.c and
 * tests/integration/t_23_progress.sh.
 *
 * Theft is asynchronous (paper 001 §2.3) without locks: the victim takes from its own
 * SReadyQ on its own loop, where the executors' gets also run, so a task is either
 * taken or run, never both.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/parsec.h"
#include "core/runtime/part.h"

/* A steal request received this pass, answered after the pass's dispatch. */
struct steal_ask {
    uint32_t from, req, max;
};

struct victim {
    struct node *n;
    struct steal_ask *asks; /* owned, `asks_cap` entries: requests of this pass */
    size_t nasks, asks_cap;
};

static int on_load_query(struct victim *v, uint32_t from, struct rbuf *r)
{
    struct node *n = v->n;
    uint32_t req = rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    struct node_load l = node_load(n);
    size_t at;
    struct wbuf *b = node_msg_begin(n, from, MSG_LOAD_REPLY, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u32(b, l.sready);
    wbuf_put_u32(b, l.lready);
    wbuf_put_u32(b, l.busy);
    wbuf_put_u32(b, l.slots);
    node_msg_end(n, from, at);
    /* Fewer than two to give: idle.c wakes the thief once there are. */
    if (node_giveable(n) < 2)
        node_turned_away(n, from);
    return 0;
}

/* How long moving a task to a thief takes: its inputs over the link, plus the way
 * there (the waiting-time guard's transfer estimate). */
static double transfer_estimate(const struct node_config *cfg, const struct ntask *t)
{
    double s = (double)cfg->latency_ns / 1e9;
    if (cfg->placement.bandwidth_Bps > 0)
        s += (double)t->spec.input_bytes / cfg->placement.bandwidth_Bps;
    return s;
}

/*
 * Takes up to `want` tasks from the tail of SReadyQ into taken[] and returns how many,
 * never one of the `keep` oldest no-data tasks (the progress rule: they start here).
 * Tasks that must stay are put back: one that is not stealable (SReadyQ should never
 * hold one: a bug, reported and repaired by moving it to LReadyQ), and with the
 * waiting-time guard one that would start here before it could arrive there.
 */
static size_t take_for_thief(struct victim *v, uint32_t want, uint32_t keep, void **taken)
{
    struct node *n = v->n;
    const struct node_config *cfg = node_cfg(n);
    struct readyq *sready = node_readyq(n, NODE_SREADY);
    struct node_load l = node_load(n);
    struct parsec_guard g = {
        .ready = l.lready + l.sready,
        .slots = l.slots,
        .avg_task_s = l.est_samples ? l.est_task_length_s : 0,
    };
    /* keep <= free slots <= slots: a small array; set aside, then queued again. */
    void **kept_back = keep ? xmalloc(keep * sizeof *kept_back) : NULL;
    for (uint32_t i = 0; i < keep; i++)
        kept_back[i] = readyq_take_low(sready);
    size_t got = readyq_take_tail(sready, want, taken);
    for (uint32_t i = 0; i < keep; i++)
        node_queue(n, NODE_SREADY, kept_back[i], 0);
    free(kept_back);
    size_t kept = 0;
    for (size_t i = 0; i < got; i++) {
        struct ntask *t = taken[i];
        if (!(t->spec.flags & TASK_FLAG_STEALABLE)) {
            log_warn("task %llx was in SReadyQ but is not stealable; kept here",
                     (unsigned long long)t->spec.key);
            node_queue(n, NODE_LREADY, t, t->spec.input_bytes);
            continue;
        }
        g.transfer_s = transfer_estimate(cfg, t);
        if (cfg->steal.wait_guard && !parsec_guard_allows(&g)) {
            node_queue(n, NODE_SREADY, t, t->spec.input_bytes);
            continue;
        }
        taken[kept++] = t;
    }
    return kept;
}

/* Held until the step: see the progress rule above. */
static int on_steal_request(struct victim *v, uint32_t from, struct rbuf *r)
{
    uint32_t req = rbuf_u32(r);
    uint32_t max = rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    if (v->nasks == v->asks_cap) {
        v->asks_cap = v->asks_cap ? 2 * v->asks_cap : 8;
        v->asks = xrealloc(v->asks, v->asks_cap * sizeof *v->asks);
    }
    v->asks[v->nasks++] = (struct steal_ask){.from = from, .req = req, .max = max};
    node_mark_dirty(v->n);
    return 0;
}

static void answer(struct victim *v, const struct steal_ask *ask)
{
    struct node *n = v->n;
    struct node_load l = node_load(n);
    uint32_t keep = steal_keep(node_free_slots(n), l.lready_zero, l.sready_zero);
    uint32_t avail = l.sready - keep;
    uint32_t want = steal_grant(&node_cfg(n)->steal, avail, ask->max);
    void **taken = want ? xmalloc(want * sizeof *taken) : NULL;
    size_t got = want ? take_for_thief(v, want, keep, taken) : 0;
    /* Parts that keep the thief informed go first, in the same frame: an A2WS thief
     * plans its next steal from what is left here, not from what it believed (Table 1,
     * "victim realized it was stolen"). */
    node_answering(n, ask->from);
    node_send_grant(n, ask->from, MSG_STEAL_GRANT, ask->req, taken, got);
    free(taken);
    /* Only below two to give, as idle.c's wake-up is above: a thief refused while the
     * node keeps its tasks for its own free slots is not woken at once to ask again. */
    if (!got && node_giveable(n) < 2)
        node_turned_away(n, ask->from);
}

/* In arrival order, so that with several thieves the first to ask is served first. */
static void victim_step(void *state)
{
    struct victim *v = state;
    for (size_t i = 0; i < v->nasks; i++)
        answer(v, &v->asks[i]);
    v->nasks = 0;
}

/* A dead thief's requests are not answered: a grant to it would lose its tasks. */
static void victim_down(void *state, uint32_t node)
{
    struct victim *v = state;
    size_t kept = 0;
    for (size_t i = 0; i < v->nasks; i++)
        if (v->asks[i].from != node)
            v->asks[kept++] = v->asks[i];
    v->nasks = kept;
}

static int victim_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct victim *v = state;
    return type == MSG_LOAD_QUERY ? on_load_query(v, from, r) : on_steal_request(v, from, r);
}

static void *victim_init(struct node *n, char **cause)
{
    (void)cause;
    struct victim *v = xcalloc(1, sizeof *v);
    v->n = n;
    return v;
}

static void victim_free(void *state)
{
    struct victim *v = state;
    free(v->asks);
    free(v);
}

static const uint16_t victim_types[] = {MSG_LOAD_QUERY, MSG_STEAL_REQUEST, 0};

const struct part part_victim = {
    .name = "victim",
    .init = victim_init,
    .free = victim_free,
    .step = victim_step,
    .down = victim_down,
    .types = victim_types,
    .on_message = victim_on_message,
};
