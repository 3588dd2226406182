/*
 * sim_thief — the simulated thief and victim of the load-query policies (thief.c and
 * victim.c of the daemons): the starvation test, victims drawn as steal_pick_victims
 * draws them (steal_draw_begin), load queries and the most loaded chosen (one victim
 * asked straight away), the victim's
 * grant (steal_grant after steal_keep, within the request's bound, less what PaRSEC's
 * waiting-time guard keeps), the ready+successors starvation test, exponential back-off
 * and parking, the wake-up of parked thieves when a node has stealable work again, and
 * of the thieves a node turned away (idle.c) once it has two tasks to give: each node's
 * load, the loaded nodes, the lists of thieves turned away and the log of lazy marks.
 * Called by sim.c's event loop (sim_core.h).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/vector.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/policy/parsec.h"
#include "core/sim/sim_core.h"

bool sim__steals(const struct sim *s)
{
    return s->cfg->steal.mode != STEAL_NONE && s->cfg->nodes > 1;
}

/* What a victim would give away now (node_giveable's count). */
uint32_t sim__stealable(const struct node *n)
{
    struct steal_load l = sim__steal_load(n->slots, n->busy, n->staging, n->nstaged, &n->lready,
                                          &n->sready, n->running_successors);
    return steal_load_giveable(&l);
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

/* A mark with stamp `at` on v's list, the thief known not to be parked: a thief listed
 * already moves to the end, as the latest (idle.c's turned_away). */
static void mark(struct sim_peer *v, uint32_t thief, uint64_t at)
{
    uint32_t i = 0;
    while (i < v->nhungry && v->hungry[i] != thief)
        i++;
    if (i == v->nhungry && v->nhungry == STEAL_HUNGRY_MAX)
        i = 0; /* full: the oldest goes */
    else if (i == v->nhungry)
        v->nhungry++;
    for (; i + 1 < v->nhungry; i++) {
        v->hungry[i] = v->hungry[i + 1];
        v->at[i] = v->at[i + 1];
    }
    v->hungry[i] = thief;
    v->at[i] = at;
}

/* The stamps: the q-th marking query's (q << 32 | UINT32_MAX) follows every refusal
 * made while q queries had marked, and those are stamped in their order. */
static uint64_t query_stamp(uint64_t q)
{
    return q << 32 | UINT32_MAX;
}

static uint64_t target_stamp(struct sim *s)
{
    if (s->target_clock != s->mark_clock) {
        s->target_clock = s->mark_clock;
        s->target_seq = 0;
    }
    /* 2^32 - 1 refusals between two queries: the last ones share a stamp. */
    if (s->target_seq < UINT32_MAX - 1)
        s->target_seq++;
    return s->mark_clock << 32 | (s->target_seq - 1);
}

void sim__turned_away(struct sim *s, uint32_t victim, uint32_t thief)
{
    if (!s->nodes[thief].parked_listed) /* parked: woken as such */
        mark(&s->peers[victim], thief, target_stamp(s));
}

void sim__marks_init(struct sim *s)
{
    uint32_t nodes = s->cfg->nodes;
    s->load = xcalloc_huge(nodes, sizeof *s->load);
    s->peers = xcalloc_huge(nodes, sizeof *s->peers);
    s->loaded = xcalloc_huge(nodes, sizeof *s->loaded);
    s->loaded_at = xcalloc_huge(nodes, sizeof *s->loaded_at);
    for (uint32_t i = 0; i < nodes; i++)
        s->loaded_at[i] = UINT32_MAX;
    /* Every node's draws have the same candidates, mask and shift: a draw of any node. */
    struct steal_draw d;
    steal_draw_make(&d, 1, 0, nodes, 1);
    s->lazy = d.mixed && !s->cfg->eager_marks && sim__steals(s);
    s->perm_m = d.m;
    s->perm_mask = d.mask;
    s->perm_shift = d.shift;
}

void sim__marks_free(struct sim *s)
{
    free(s->load);
    free(s->peers);
    free(s->loaded);
    free(s->loaded_at);
    free(s->marks);
}

/*
 * Which of a block's logged draws hold node v: hit[lane] set for those, and whether any
 * does.  Each lane's rank of v under its own permutation, computed for the whole block
 * in branch-free passes the compiler vectorizes (cloned as steal_draw_find's are): a
 * victim's list is read from thousands of draws (8 m / k at 10^6 nodes: 8,000).  A
 * lane's start past m (v its thief, when v is the last node) starts at 0 instead, and
 * is no hit: a walk from past m could loop for ever.
 */
VECTOR_CLONES
static bool block_hits(const struct mark_block *restrict b, uint32_t v, uint32_t m,
                       uint32_t mask, unsigned shift, uint8_t *restrict hit)
{
    uint32_t x[MARK_BLOCK], past = 0, any = 0;
    for (uint32_t i = 0; i < MARK_BLOCK; i++) {
        struct steal_perm p = {.mul = {b->mul[0][i], b->mul[1][i], b->mul[2][i]},
                               .add = {b->add[0][i], b->add[1][i], b->add[2][i]}};
        uint32_t c = v - (v > b->thief[i]);
        x[i] = steal_perm_apply(&p, c < m ? c : 0, mask, shift);
        past |= x[i] >= m;
    }
    while (past) {
        past = 0;
        for (uint32_t i = 0; i < MARK_BLOCK; i++) {
            struct steal_perm p = {.mul = {b->mul[0][i], b->mul[1][i], b->mul[2][i]},
                                   .add = {b->add[0][i], b->add[1][i], b->add[2][i]}};
            uint32_t y = steal_perm_apply(&p, x[i], mask, shift);
            x[i] = x[i] >= m ? y : x[i];
            past |= x[i] >= m;
        }
    }
    for (uint32_t i = 0; i < MARK_BLOCK; i++) {
        hit[i] = x[i] < b->k[i] && b->thief[i] != v;
        any |= hit[i];
    }
    return any;
}

/*
 * Lazy marks: v's list as eager marks would have left it.  Its queries' marks are those
 * of the draws logged since it went dry (below two tasks) that hold it; the latest
 * STEAL_HUNGRY_MAX distinct thieves among them are found by reading the log backwards,
 * each draw asked for v's rank (a few multiplications), and merged with the requests it
 * refused, by stamp.  Only the latest refusal of each thief counts, and only the latest
 * STEAL_HUNGRY_MAX thieves: a list kept in that order (mark) is exactly this whatever
 * came before, which is why the daemons keep theirs so (idle.c).
 */
static void resolve(struct sim *s, uint32_t v)
{
    struct sim_peer *p = &s->peers[v];
    uint32_t found[STEAL_HUNGRY_MAX];
    uint64_t at[STEAL_HUNGRY_MAX];
    uint32_t nfound = 0;
    uint64_t from = p->dry_since, to = s->mark_clock;
    for (uint64_t b = to > from ? (to - 1) / MARK_BLOCK + 1 : 0;
         b-- > from / MARK_BLOCK && nfound < STEAL_HUNGRY_MAX;) {
        uint8_t hit[MARK_BLOCK];
        const struct mark_block *mb = &s->marks[b];
        if (!block_hits(mb, v, s->perm_m, s->perm_mask, s->perm_shift, hit))
            continue;
        for (uint32_t lane = MARK_BLOCK; lane-- > 0 && nfound < STEAL_HUNGRY_MAX;) {
            uint64_t q = b * MARK_BLOCK + lane;
            if (!hit[lane] || q < from || q >= to)
                continue;
            uint32_t j = 0;
            while (j < nfound && found[j] != mb->thief[lane])
                j++;
            if (j < nfound)
                continue;
            found[nfound] = mb->thief[lane];
            at[nfound++] = query_stamp(q);
        }
    }
    /* A list kept in order of latest refusal holds the STEAL_HUNGRY_MAX thieves whose
     * latest refusal is the latest, oldest first: the requests listed and the queries
     * found, each thief at its later stamp, the latest kept. */
    for (uint32_t i = 0; i < p->nhungry; i++) {
        uint32_t j = 0;
        while (j < nfound && found[j] != p->hungry[i])
            j++;
        if (j == nfound) {
            if (nfound == STEAL_HUNGRY_MAX) {
                /* Replace the oldest found, if this one is later. */
                uint32_t old = 0;
                for (uint32_t x = 1; x < nfound; x++)
                    old = at[x] < at[old] ? x : old;
                if (at[old] > p->at[i])
                    continue;
                j = old;
            } else {
                nfound++;
            }
            found[j] = p->hungry[i];
            at[j] = p->at[i];
        } else if (p->at[i] > at[j]) {
            at[j] = p->at[i];
        }
    }
    /* Oldest first: an insertion sort of at most STEAL_HUNGRY_MAX. */
    p->nhungry = nfound;
    for (uint32_t i = 0; i < nfound; i++) {
        uint32_t j = i;
        while (j > 0 && p->at[j - 1] > at[i]) {
            p->hungry[j] = p->hungry[j - 1];
            p->at[j] = p->at[j - 1];
            j--;
        }
        p->hungry[j] = found[i];
        p->at[j] = at[i];
    }
}

/* Wakes every thief listed at v, oldest first, once (idle.c's step). */
static void wake_listed(struct sim *s, uint32_t victim)
{
    struct sim_peer *v = &s->peers[victim];
    for (uint32_t i = 0; i < v->nhungry; i++)
        sim__send(s, victim, v->hungry[i], EV_WAKE, 0, 0, 0);
    v->nhungry = 0;
}

void sim__refresh(struct sim *s, uint32_t id)
{
    uint32_t now = sim__stealable(&s->nodes[id]), was = s->load[id];
    struct sim_peer *p = &s->peers[id];
    if (now != was) {
        s->load[id] = now;
        if (!was) {
            s->loaded_at[id] = s->nloaded;
            s->loaded[s->nloaded++] = id;
        } else if (!now) {
            uint32_t at = s->loaded_at[id], last = s->loaded[--s->nloaded];
            s->loaded[at] = last;
            s->loaded_at[last] = at;
            s->loaded_at[id] = UINT32_MAX;
        }
    }
    if (now >= 2) {
        if (was < 2 && s->lazy)
            resolve(s, id);
        if (p->nhungry)
            wake_listed(s, id);
    } else if (was >= 2) {
        p->dry_since = s->mark_clock;
    }
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
    struct steal_load l = sim__steal_load(n->slots, n->busy, n->staging, n->nstaged, &n->lready,
                                          &n->sready, n->running_successors);
    struct steal_self self = steal_load_self(&l);
    return steal_starving(&s->cfg->steal, &self);
}

/*
 * Ready + successors (paper 004 §3, node_task.c's local_successors): the children of a
 * task starting on `id` that wait there will be ready there soon.  Counted only when the
 * task's record is on `id`, as the daemon reads the children from its own shard and
 * counts none rather than ask another.  A child counts while its parents are not all
 * done (the daemon's WaitQ also holds it for the one latency its readiness takes to
 * come back from a record elsewhere, which this leaves out).
 */
uint32_t sim__local_successors(const struct sim *s, uint32_t id, uint32_t task)
{
    if (s->cfg->steal.starvation != STEAL_STARVE_SUCCESSORS ||
        task_key_owner(task_key(s->cfg->job, task), s->cfg->nodes) != id)
        return 0;
    const struct workload_task *t = &s->wl->tasks[task];
    uint32_t count = 0;
    for (uint32_t i = 0; i < t->num_children; i++) {
        const struct task_state *c = &s->tasks[t->children[i]];
        count += c->holder == id && c->waiting > 0;
    }
    return count;
}

void sim__backoff(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    steal_on_result(&s->cfg->steal, &n->st, false, s->cfg->nodes);
    /* FLDS: a small enough tt lets the thief poll again instead of parking (place.c). */
    if (sim__place_steal_failed(s, id, n->st.parked))
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

/* A request to one victim, bounded by `max` (0: the victim's amount decides); `expect`
 * is what the trace says was asked for (thief.c's send_steal_request). */
static void request(struct sim *s, uint32_t id, uint32_t victim, uint32_t max, uint32_t expect)
{
    struct node *n = &s->nodes[id];
    n->state = TH_REQUEST;
    n->steal_requests++;
    sim__trace(s, id, TRACE_STEAL_REQUEST, UINT32_MAX, (int32_t)victim, 0, max ? max : expect,
               0, 0);
    sim__send(s, id, victim, EV_STEAL_REQ, id, n->attempt, max);
}

/* A failed attempt that asked nobody: no victim worth asking. */
static void no_victim(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    n->steal_fails++;
    sim__trace(s, id, TRACE_STEAL_FAIL, UINT32_MAX, -1, STEAL_FAIL_NO_VICTIM, 0, 0, 0);
    sim__backoff(s, id);
}

static void begin_attempt(struct sim *s, uint32_t id)
{
    s->nodes[id].attempt++;
    s->res->steal_attempts++;
}

/* Preemptive stealing with victims other than A2WS's: after the first finished task,
 * whenever the steal equation says this node should hold at least one more task. */
static bool preemptive_wants(struct sim *s, uint32_t id)
{
    if (!s->nodes[id].ended || !s->ring)
        return false;
    struct a2ws_now now = sim__info_now(s, id, false);
    return a2ws_rate(sim__info(s, id), &now, id) >= 1.0;
}

/* Whether the node still wants to steal when its victims' loads are in (thief.c's
 * still_wanted): work may have come meanwhile. */
static bool still_wanted(struct sim *s, uint32_t id)
{
    if (sim__starving(s, &s->nodes[id]))
        return true;
    return s->cfg->steal.starvation == STEAL_STARVE_PREEMPTIVE && preemptive_wants(s, id);
}

/* The bound a request carries: with the A2WS amount, the thief's steal equation for that
 * victim (at least one: 0 would mean "no bound" to the victim); otherwise none. */
static uint32_t request_bound(struct sim *s, uint32_t id, uint32_t victim, bool starving)
{
    if (s->cfg->steal.amount != STEAL_AMOUNT_A2WS)
        return 0;
    uint32_t d = 0;
    struct a2ws_vec *v = sim__info(s, id);
    if (v) {
        struct a2ws_now now = sim__info_now(s, id, starving);
        d = a2ws_amount_for(v, &now, victim);
    }
    return d ? d : 1;
}

/* The victim of the loads in s->victims/s->loads[0..k): the most loaded, asked for its
 * amount (thief.c's decide). */
static void decide(struct sim *s, uint32_t id, uint32_t k)
{
    struct node *n = &s->nodes[id];
    if (!still_wanted(s, id)) {
        n->state = TH_IDLE;
        return;
    }
    int best = steal_choose_victim(s->loads, k);
    if (best < 0) {
        no_victim(s, id);
        return;
    }
    uint32_t victim = s->victims[best], max = request_bound(s, id, victim, true);
    request(s, id, victim, max, max ? max : steal_amount(&s->cfg->steal, s->loads[best]));
}

/* The A2WS thief (paper 001 Algorithm 1, lines 3–7, thief.c's poll_a2ws): a2ws_plan
 * chooses the victim and the amount from the vector. */
static void poll_a2ws(struct sim *s, uint32_t id, bool starving)
{
    struct a2ws_now now = sim__info_now(s, id, starving);
    struct a2ws_decision d = a2ws_plan(sim__info(s, id), &now, &s->rng);
    if (d.criterion == A2WS_NO_STEAL) {
        /* A busy node that found nobody simply looks again later; a starving one has
         * failed an attempt and backs off like any thief. */
        if (starving) {
            begin_attempt(s, id);
            no_victim(s, id);
        }
        return;
    }
    begin_attempt(s, id);
    uint32_t max = s->cfg->steal.amount == STEAL_AMOUNT_A2WS ? d.amount : 0;
    request(s, id, d.victim, max, d.amount);
}

/* Victims drawn from the ring window, their loads read from the vector (--info ring):
 * no query goes out.  Returns how many were drawn into s->victims and s->loads. */
static uint32_t pick_from_window(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    const struct a2ws_vec *v = sim__info(s, id);
    uint32_t width = v->left + v->right + 1;
    uint32_t k = steal_pick_victims(&s->cfg->steal, &n->st, v->left, width, &s->rng, s->victims,
                                    s->victims_max);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t node = a2ws_node_at(v, (int32_t)s->victims[i] - (int32_t)v->left);
        s->victims[i] = node;
        s->loads[i] = a2ws_entry_of(v, node)->avail;
    }
    return k;
}

/*
 * The thief's check (thief.c's thief_step), after every event that may leave the node
 * starving: an attempt when it is (or, preemptive, when the plan says it soon will be;
 * such a busy node looks at most once every A2WS_PREEMPTIVE_LOOK_MS).  Victims: A2WS's
 * plan, a draw from the ring window with the vector's loads, or a draw of sqrt(N) or K
 * nodes whose loads are queried.
 */
void sim__maybe_steal(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    const struct steal_params *p = &s->cfg->steal;
    if (!sim__steals(s) || n->state != TH_IDLE || s->left == 0)
        return;
    /* CTWS steals when the token visits (sim_token.c), an LW worker asks its leader
     * (sim_leader.c). */
    if (p->victims == STEAL_VICTIMS_TOKEN || p->victims == STEAL_VICTIMS_LEADER)
        return;
    bool starving = sim__starving(s, n);
    if (!starving && (p->starvation != STEAL_STARVE_PREEMPTIVE || !s->ring ||
                      sim__ring_plan_later(s, id)))
        return;
    if (p->victims == STEAL_VICTIMS_A2WS && s->ring) {
        poll_a2ws(s, id, starving);
        return;
    }
    if (!starving && !preemptive_wants(s, id))
        return;
    if (s->ring && p->info == STEAL_INFO_RING) {
        uint32_t k = pick_from_window(s, id);
        begin_attempt(s, id);
        if (k == 0) {
            no_victim(s, id);
            return;
        }
        decide(s, id, k);
        return;
    }
    begin_attempt(s, id);
    uint32_t want = p->mode == STEAL_RANDOM1 ? 1
                    : p->victims == STEAL_VICTIMS_RANDOM ? p->victims_k : n->st.neighbours;
    want = want < s->victims_max ? want : s->victims_max;
    want = want ? want : 1;
    struct steal_draw d;
    n->nvictims = steal_draw_begin(&s->cfg->steal, &n->st, id, s->cfg->nodes, &s->rng, want, &d);
    if (n->nvictims == 0) {
        no_victim(s, id);
        return;
    }
    /* One victim leaves nothing to compare: it is asked for tasks straight away. */
    if (n->nvictims == 1) {
        steal_draw_all(&d, s->victims);
        uint32_t max = request_bound(s, id, s->victims[0], starving);
        request(s, id, s->victims[0], max, max);
        return;
    }
    n->state = TH_QUERY;
    n->draw_key = d.key;
    /* One query to each victim, all sent now, all read when they arrive (one latency
     * later for every victim), all answers back one latency after that: two events for
     * the attempt rather than two per victim, which at 10^5 nodes (317 victims) was what
     * the engine spent its time on.  The messages are counted as sent.  The victims are
     * the draw's, read when the queries arrive. */
    s->res->messages += 2 * (uint64_t)n->nvictims;
    sim__push(s, s->now + s->latency_ns, EV_QUERY, id, 0, n->attempt, 0);
}

/* How far ahead a query asks for its victims' loads: enough to keep the memory system
 * busy (at 10^6 nodes a random read took ~30 ns with none, ~12 with 32). */
#define QUERY_PREFETCH 32
/* The loaded nodes ranked at a time (on the stack). */
#define RANKS_AT_ONCE 256

/*
 * The victims answer with what they could give away at the moment the query reaches them
 * (their loads as their last passes left them), and those below two list the thief, not
 * parked, as turned away.  The most loaded is the first drawn of the highest load
 * (steal_choose_victim).  Lazy marks find it without visiting the victims: from the
 * loaded nodes' ranks in the draw when they are fewer than the victims (at the end of a
 * run, a handful), else from the victims drawn one by one; the marks wait in the log.
 */
void sim__on_query(struct sim *s, uint32_t id, uint32_t attempt)
{
    struct node *n = &s->nodes[id];
    if (n->state != TH_QUERY || attempt != n->attempt)
        return;
    struct steal_draw d;
    steal_draw_make(&d, n->draw_key, id, s->cfg->nodes, n->nvictims);
    bool marks = !n->parked_listed;
    uint32_t best = UINT32_MAX, best_load = 0;
    if (s->lazy) {
        if (marks) {
            size_t b = s->mark_clock / MARK_BLOCK, lane = s->mark_clock % MARK_BLOCK;
            if (lane == 0) {
                s->marks = xgrow(s->marks, &s->marks_cap, b + 1, sizeof *s->marks);
                memset(&s->marks[b], 0, sizeof s->marks[b]);
            }
            struct mark_block *mb = &s->marks[b];
            for (int r = 0; r < 3; r++) {
                mb->mul[r][lane] = d.perm.mul[r];
                mb->add[r][lane] = d.perm.add[r];
            }
            mb->thief[lane] = id;
            mb->k[lane] = d.k;
        }
        /* A loaded node's rank costs about 1 ns (steal_draw_find's vector passes), a
         * victim's load a cache miss at 10^6 nodes (prefetched, several ns): ranks while
         * the loaded are fewer than eight times the victims (a pipeline at 10^6 nodes:
         * 151 s at twice, 134 s at eight times). */
        if (s->nloaded < 8 * (uint64_t)d.k) {
            uint32_t best_rank = UINT32_MAX, at[RANKS_AT_ONCE], ranks[RANKS_AT_ONCE];
            for (uint32_t from = 0; from < s->nloaded; from += RANKS_AT_ONCE) {
                uint32_t len = s->nloaded - from < RANKS_AT_ONCE ? s->nloaded - from
                                                                 : RANKS_AT_ONCE;
                uint32_t got = steal_draw_find(&d, s->loaded + from, len, at, ranks);
                for (uint32_t j = 0; j < got; j++) {
                    uint32_t u = s->loaded[from + at[j]], l = s->load[u];
                    if (l > best_load || (l == best_load && ranks[j] < best_rank)) {
                        best = u;
                        best_load = l;
                        best_rank = ranks[j];
                    }
                }
            }
        } else {
            steal_draw_all(&d, s->victims);
            for (uint32_t i = 0; i < d.k; i++) {
                if (i + QUERY_PREFETCH < d.k)
                    __builtin_prefetch(&s->load[s->victims[i + QUERY_PREFETCH]], 0, 1);
                uint32_t v = s->victims[i], l = s->load[v];
                if (l > best_load) {
                    best = v;
                    best_load = l;
                }
            }
        }
    } else {
        steal_draw_all(&d, s->victims);
        uint64_t at = query_stamp(s->mark_clock);
        for (uint32_t i = 0; i < d.k; i++) {
            uint32_t v = s->victims[i];
            s->loads[i] = s->load[v];
            if (s->loads[i] < 2 && marks)
                mark(&s->peers[v], id, at);
        }
        int b = steal_choose_victim(s->loads, d.k);
        if (b >= 0) {
            best = s->victims[b];
            best_load = s->loads[b];
        }
    }
    s->mark_clock += marks;
    n->chosen = best;
    n->chosen_load = best_load;
    sim__push(s, s->now + s->latency_ns, EV_QUERIED, id, 0, attempt, 0);
}

void sim__on_queried(struct sim *s, uint32_t id, uint32_t attempt)
{
    struct node *n = &s->nodes[id];
    if (n->state != TH_QUERY || attempt != n->attempt)
        return;
    /* Work came meanwhile (a readiness, a push): the attempt is dropped, neither failed
     * nor successful, as thief.c's still_wanted drops it rather than take a neighbour's
     * share on top of its own. */
    if (!still_wanted(s, id)) {
        n->state = TH_IDLE;
        return;
    }
    if (n->chosen == UINT32_MAX) {
        n->steal_fails++;
        sim__trace(s, id, TRACE_STEAL_FAIL, UINT32_MAX, -1, STEAL_FAIL_EMPTY, 0, 0, 0);
        sim__backoff(s, id);
        return;
    }
    uint32_t max = request_bound(s, id, n->chosen, true);
    request(s, id, n->chosen, max, max ? max : steal_amount(&s->cfg->steal, n->chosen_load));
}

uint32_t sim__grant_new(struct sim *s, uint32_t size)
{
    s->grants = xgrow(s->grants, &s->grants_cap, s->ngrants + 1, sizeof *s->grants);
    uint32_t gi;
    if (s->nfree_grants) {
        gi = s->free_grants[--s->nfree_grants];
    } else {
        gi = (uint32_t)s->ngrants++;
        s->grants[gi] = (struct grant){0};
    }
    struct grant *g = &s->grants[gi];
    g->tasks = xrealloc(g->tasks, (size ? size : 1) * sizeof *g->tasks);
    g->n = 0;
    g->has_entry = false;
    return gi;
}

void sim__grant_free(struct sim *s, uint32_t gi)
{
    s->free_grants = xgrow(s->free_grants, &s->free_grants_cap, s->nfree_grants + 1,
                           sizeof *s->free_grants);
    s->free_grants[s->nfree_grants++] = gi;
}

/*
 * The waiting-time guard (paper 004 §3, victim.c): with --wait-guard a task stays when
 * it would start here before it could arrive at the thief, its move estimated as one
 * latency plus its inputs over the bandwidth Algorithm 1 weighs.  g: the victim's state
 * before the request took anything.
 */
static bool guard_allows(const struct sim *s, struct parsec_guard g, uint32_t task)
{
    if (!s->cfg->steal.wait_guard)
        return true;
    uint64_t bytes;
    sim__inputs_of(s, task, NULL, 0, &bytes);
    g.transfer_s = s->cfg->latency_s;
    if (s->cfg->placement.bandwidth_Bps > 0)
        g.transfer_s += (double)bytes / s->cfg->placement.bandwidth_Bps;
    return parsec_guard_allows(&g);
}

/* A steal request, answered as victim.c answers: what steal_grant gives of the tasks the
 * free slots do not keep, within the request's bound `max` (0: none), from the tail of
 * SReadyQ, less what the waiting-time guard keeps here. */
void sim__on_steal_req(struct sim *s, uint32_t id, uint32_t thief, uint32_t attempt,
                       uint32_t max)
{
    struct node *n = &s->nodes[id];
    uint32_t k = steal_grant(&s->cfg->steal, sim__stealable(n), max);
    uint32_t gi = sim__grant_new(s, k);
    struct grant *g = &s->grants[gi];
    struct parsec_guard before = {
        .ready = (uint32_t)(readyq_len(&n->lready) + readyq_len(&n->sready)), .slots = n->slots,
        .avg_task_s = n->ended ? n->ran_s / (double)n->ended : 0,
    };
    /* As victim.c's take_for_thief: the tail of SReadyQ past the no-data tasks its free
     * slots keep; the guard's refusals are queued again. */
    uint32_t keep = (uint32_t)readyq_len(&n->sready) - sim__stealable(n);
    size_t got = sim__q_take_for_thief(&n->sready, keep, k, &s->take);
    for (size_t i = 0; i < got; i++) {
        uint32_t task = s->take.tasks[i];
        if (!guard_allows(s, before, task)) {
            uint64_t sum;
            sim__inputs_of(s, task, NULL, 0, &sum);
            sim__q_push(&n->sready, sum, task);
            continue;
        }
        g->tasks[g->n++] = task;
        s->tasks[task].holder = thief;
        sim__trace(s, id, TRACE_TASK_STOLEN_OUT, task, (int32_t)thief, 0, 0, 0, 0);
    }
    n->stolen_out += g->n;
    if (!g->n && sim__stealable(n) < 2)
        sim__turned_away(s, id, thief);
    sim__ring_answer(s, id, g);
    sim__send(s, id, thief, EV_GRANT, id, attempt, gi);
}

void sim__on_grant(struct sim *s, uint32_t id, uint32_t victim, uint32_t attempt, uint32_t gi)
{
    struct node *n = &s->nodes[id];
    struct grant *g = &s->grants[gi];
    /* The victim's entry came first in the same frame (ring.c's answering). */
    sim__ring_granted(s, id, victim, g);
    for (uint32_t i = 0; i < g->n; i++) {
        sim__trace(s, id, TRACE_TASK_STOLEN_IN, g->tasks[i], (int32_t)victim, 0, 0, 0, 0);
        uint64_t sum;
        sim__inputs_of(s, g->tasks[i], s->objs, 0, &sum);
        /* node_take_granted: one with inputs stays here. */
        sim__q_push(sum ? &n->lready : &n->sready, sum, g->tasks[i]);
    }
    uint32_t k = g->n;
    if (k)
        sim__on_new_ready(s, id);
    sim__grant_free(s, gi);
    if (k) {
        n->stolen_in += k;
        s->res->tasks_stolen += k;
        sim__trace(s, id, TRACE_STEAL_GRANT, UINT32_MAX, (int32_t)victim, 0, k, 0, 0);
    } else {
        n->steal_fails++;
        sim__trace(s, id, TRACE_STEAL_FAIL, UINT32_MAX, (int32_t)victim, STEAL_FAIL_EMPTY, 0, 0,
                   0);
    }
    /* The part that asked hears of it: the CTWS holder, or the thief. */
    if (s->token) {
        sim__token_granted(s, id, attempt, k);
        return;
    }
    if (k) {
        s->res->steals_ok++;
        steal_on_result(&s->cfg->steal, &n->st, true, s->cfg->nodes);
        n->state = TH_IDLE;
        sim__maybe_steal(s, id);
        return;
    }
    sim__backoff(s, id);
}
