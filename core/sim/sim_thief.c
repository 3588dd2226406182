/*
 * sim_thief — the simulated thief and victim of the load-query policies (thief.c and
 * victim.c of the daemons): the starvation test, victims drawn by steal_pick_victims,
 * load queries and the most loaded chosen, the victim's grant (steal_grant after
 * steal_keep), exponential back-off and parking, and the wake-up of parked thieves when
 * a node has stealable work again.  Called by sim.c's event loop (sim_core.h).
 */
#include <math.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/sim/sim_core.h"

bool sim__steals(const struct sim *s)
{
    return s->cfg->steal.mode != STEAL_NONE && s->cfg->nodes > 1;
}

/* What a victim would give away now: its queue beyond what its free slots take. */
uint32_t sim__stealable(const struct node *n)
{
    uint32_t q = (uint32_t)n->sready.n;
    return q - steal_keep(n->free_slots, (uint32_t)n->lready.n, q);
}

void sim__wake_parked(struct sim *s, uint32_t from)
{
    for (size_t i = 0; i < s->nparked; i++) {
        uint32_t p = s->parked[i];
        s->nodes[p].parked_listed = false;
        sim__send(s, from, p, EV_WAKE, 0, 0, 0);
    }
    s->nparked = 0;
}

/* Tasks arrived at a node: it starts what it can, and has work to share with parked
 * thieves when some is left over. */
void sim__on_new_ready(struct sim *s, uint32_t id)
{
    sim__dispatch(s, id);
    if (s->nparked && sim__stealable(&s->nodes[id]) > 0)
        sim__wake_parked(s, id);
}

bool sim__starving(const struct sim *s, const struct node *n)
{
    struct steal_self self = {.lready = (uint32_t)n->lready.n, .sready = (uint32_t)n->sready.n,
                              .free_slots = n->free_slots};
    return steal_starving(&s->cfg->steal, &self);
}

void sim__backoff(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    steal_on_result(&s->cfg->steal, &n->st, false, s->cfg->nodes);
    placement_flds_on_steal_failed(&s->cfg->placement, &n->flds);
    /* FLDS: a small enough tt lets the thief poll again instead of parking (place.c). */
    if (n->st.parked && placement_flds_poll_should_reset(&s->cfg->placement, NULL, &n->flds))
        steal_on_wake(&s->cfg->steal, &n->st);
    if (n->st.parked) {
        n->state = TH_PARKED;
        if (!n->parked_listed) {
            s->parked = xgrow(s->parked, &s->parked_cap, s->nparked + 1, sizeof *s->parked);
            s->parked[s->nparked++] = id;
            n->parked_listed = true;
        }
        return;
    }
    n->state = TH_WAIT;
    int64_t wait = (int64_t)ceil(n->st.interval_ms * 1e6);
    sim__push(s, s->now + (wait > 0 ? wait : 1), EV_THIEF_TIMER, id, 0, ++n->timer_gen, 0);
}

void sim__maybe_steal(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    if (!sim__steals(s) || n->state != TH_IDLE || s->left == 0 || !sim__starving(s, n))
        return;
    n->attempt++;
    s->res->steal_attempts++;
    const struct steal_params *p = &s->cfg->steal;
    uint32_t want = p->mode == STEAL_RANDOM1 ? 1
                    : p->victims == STEAL_VICTIMS_RANDOM ? p->victims_k : n->st.neighbours;
    want = want < s->victims_max ? want : s->victims_max;
    want = want ? want : 1;
    n->pick_rng = s->rng;
    n->pick_want = want;
    n->nvictims = steal_pick_victims(&s->cfg->steal, &n->st, id, s->cfg->nodes, &s->rng,
                                     s->victims, want);
    if (n->nvictims == 0) {
        n->steal_fails++;
        sim__trace(s, id, TRACE_STEAL_FAIL, UINT32_MAX, -1, STEAL_FAIL_NO_VICTIM, 0, 0, 0);
        sim__backoff(s, id);
        return;
    }
    n->state = TH_QUERY;
    /* One query to each victim, all sent now, all read when they arrive (one latency
     * later for every victim), all answers back one latency after that: two events for
     * the attempt rather than two per victim, which at 10^5 nodes (317 victims) was what
     * the engine spent its time on.  The messages are counted as sent. */
    s->res->messages += 2 * (uint64_t)n->nvictims;
    sim__push(s, s->now + s->latency_ns, EV_QUERY, id, 0, n->attempt, 0);
}

/* The victims answer with what they could give away at the moment the query reaches them. */
void sim__on_query(struct sim *s, uint32_t id, uint32_t attempt)
{
    struct node *n = &s->nodes[id];
    if (n->state != TH_QUERY || attempt != n->attempt)
        return;
    /* The same draw again: the thief's back-off state has not changed since. */
    uint64_t rng = n->pick_rng;
    uint32_t k = steal_pick_victims(&s->cfg->steal, &n->st, id, s->cfg->nodes, &rng,
                                    s->victims, n->pick_want);
    for (uint32_t i = 0; i < k; i++)
        s->loads[i] = sim__stealable(&s->nodes[s->victims[i]]);
    int best = k == n->nvictims ? steal_choose_victim(s->loads, k) : -1;
    n->chosen = best < 0 ? UINT32_MAX : s->victims[best];
    n->chosen_load = best < 0 ? 0 : s->loads[best];
    sim__push(s, s->now + s->latency_ns, EV_QUERIED, id, 0, attempt, 0);
}

void sim__on_queried(struct sim *s, uint32_t id, uint32_t attempt)
{
    struct node *n = &s->nodes[id];
    if (n->state != TH_QUERY || attempt != n->attempt)
        return;
    if (n->chosen == UINT32_MAX) {
        n->steal_fails++;
        sim__trace(s, id, TRACE_STEAL_FAIL, UINT32_MAX, -1, STEAL_FAIL_EMPTY, 0, 0, 0);
        sim__backoff(s, id);
        return;
    }
    uint32_t v = n->chosen;
    n->state = TH_REQUEST;
    n->steal_requests++;
    sim__trace(s, id, TRACE_STEAL_REQUEST, UINT32_MAX, (int32_t)v, 0, n->chosen_load, 0, 0);
    sim__send(s, id, v, EV_STEAL_REQ, id, n->attempt, 0);
}

void sim__on_steal_req(struct sim *s, uint32_t id, uint32_t thief, uint32_t attempt)
{
    struct node *n = &s->nodes[id];
    uint32_t k = steal_grant(&s->cfg->steal, sim__stealable(n), 0);
    s->grants = xgrow(s->grants, &s->grants_cap, s->ngrants + 1, sizeof *s->grants);
    uint32_t gi;
    if (s->nfree_grants) {
        gi = s->free_grants[--s->nfree_grants];
    } else {
        gi = (uint32_t)s->ngrants++;
        s->grants[gi] = (struct grant){0};
    }
    struct grant *g = &s->grants[gi];
    g->tasks = xrealloc(g->tasks, (k ? k : 1) * sizeof *g->tasks);
    g->n = k;
    /* The heap's last entries: leaves, among the newest it holds. */
    for (uint32_t i = 0; i < k; i++) {
        uint32_t task = sim__q_take_tail(&n->sready).task;
        g->tasks[i] = task;
        s->tasks[task].holder = thief;
        sim__trace(s, id, TRACE_TASK_STOLEN_OUT, task, (int32_t)thief, 0, 0, 0, 0);
    }
    n->stolen_out += k;
    sim__send(s, id, thief, EV_GRANT, id, attempt, gi);
}

void sim__on_grant(struct sim *s, uint32_t id, uint32_t victim, uint32_t gi)
{
    struct node *n = &s->nodes[id];
    struct grant *g = &s->grants[gi];
    for (uint32_t i = 0; i < g->n; i++) {
        sim__trace(s, id, TRACE_TASK_STOLEN_IN, g->tasks[i], (int32_t)victim, 0, 0, 0, 0);
        uint64_t sum;
        sim__inputs_of(s, g->tasks[i], s->objs, 0, &sum);
        sim__q_push(&n->sready, sum, g->tasks[i]);
    }
    uint32_t k = g->n;
    if (k)
        sim__on_new_ready(s, id);
    s->free_grants = xgrow(s->free_grants, &s->free_grants_cap, s->nfree_grants + 1,
                           sizeof *s->free_grants);
    s->free_grants[s->nfree_grants++] = gi;
    if (k) {
        n->stolen_in += k;
        s->res->steals_ok++;
        s->res->tasks_stolen += k;
        sim__trace(s, id, TRACE_STEAL_GRANT, UINT32_MAX, (int32_t)victim, 0, k, 0, 0);
        steal_on_result(&s->cfg->steal, &n->st, true, s->cfg->nodes);
        n->state = TH_IDLE;
        sim__maybe_steal(s, id);
        return;
    }
    n->steal_fails++;
    sim__trace(s, id, TRACE_STEAL_FAIL, UINT32_MAX, (int32_t)victim, STEAL_FAIL_EMPTY, 0, 0, 0);
    sim__backoff(s, id);
}
