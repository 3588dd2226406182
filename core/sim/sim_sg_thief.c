/*
 * sim_sg_thief — the SimGrid engine's thief and victim (the daemons' thief.c and
 * victim.c, as sim_thief.c models them for the discrete-event core): the starvation
 * test and the poke that releases an idle thief, an attempt's victims drawn by
 * steal_pick_victims and asked their loads by an actor of its own, the most loaded
 * asked for work, the victim's answers (what it could give, steal_grant of it), the
 * grant taken into the ready queues (LReadyQ for a task with inputs), and on failure
 * steal.h's back-off: a sleep, or parking until a node with stealable work wakes the
 * parked thieves.  A victim also remembers
 * the thieves it turned away (a load query answered with less than two tasks to give,
 * a request granted none) and wakes each once it has two, as the daemons' idle.c does;
 * a wake-up cuts a thief's back-off short, as thief.c's thief_wake stops its timer.
 *
 * The node actor (sim_sg.c) hands it the victim's messages (sim_sg__on_query,
 * sim_sg__on_steal_req, sim_sg__on_wake); sim_sg_task.c pokes the thief when a slot or
 * a task changes and calls sim_sg__on_new_ready for each task queued; sim_sg__simulate
 * starts one thief a node (sim_sg__thief_spawn).  The thief's actor is a coroutine
 * that blocks in SimGrid between the steps of an attempt; what it changes in a handler
 * it lists as effects, as everyone does (sim_sg.c says why).
 */
#include "core/sim/sim_sg_core.h"

#ifdef JACKDAW_SIMGRID

#include <stdlib.h>

#include "core/base/xalloc.h"

/* What a victim would give away now (node_giveable's count). */
uint32_t sim_sg__stealable(const struct node *n)
{
    struct steal_load l = sim__steal_load(n->slots, n->busy, n->staging, n->nstaged, &n->lready,
                                          &n->sready, 0);
    return steal_load_giveable(&l);
}

bool sim_sg__steals(void)
{
    return the->cfg->steal.mode != STEAL_NONE && the->cfg->nodes > 1;
}

static bool starving(const struct node *n)
{
    struct steal_load l = sim__steal_load(n->slots, n->busy, n->staging, n->nstaged, &n->lready,
                                          &n->sready, 0);
    struct steal_self self = steal_load_self(&l);
    return steal_starving(&the->cfg->steal, &self);
}

/* The node may be starving: an idle thief is released (sim.c's maybe_steal). */
void sim_sg__poke(uint32_t id)
{
    struct node *n = &the->nodes[id];
    if (!sim_sg__steals() || n->state != TH_IDLE || the->left == 0 || !starving(n))
        return;
    n->state = TH_BUSY;
    sim_sg__effect((struct fx){.type = FX_THIEF, .node = id});
}

void sim_sg__wake_parked(uint32_t from)
{
    for (size_t i = 0; i < the->nparked; i++) {
        uint32_t p = the->parked[i];
        the->nodes[p].parked_listed = false;
        sim_sg__post(from, p, M_WAKE, 0, 0);
    }
    the->nparked = 0;
}

/*
 * Two or more to give: enough that a thief can take some and the victim keep some
 * (idle.c's threshold on SReadyQ, here on what the victim would give, which is what
 * its answers tell a thief).  Below it a thief that asks is turned away.
 */
#define HUNGRY_WAKE_AT 2

/* A thief that asked `id` for work got none that it could use: `id` remembers it. */
static void turned_away(uint32_t id, uint32_t thief)
{
    struct node *n = &the->nodes[id];
    if (!n->hungry)
        n->hungry = xcalloc((the->cfg->nodes + 63) / 64, sizeof *n->hungry);
    uint64_t bit = UINT64_C(1) << (thief % 64);
    if (n->hungry[thief / 64] & bit)
        return;
    n->hungry[thief / 64] |= bit;
    n->nhungry++;
}

/*
 * Called wherever what `id` would give may have grown (a task queued, a slot taken,
 * an FLDS spill), as idle.c's step runs at the end of every loop pass.  Each thief it
 * turned away hears once, in the peers' order; it is turned away again if it asks
 * again in vain.
 */
void sim_sg__wake_hungry(uint32_t id)
{
    struct node *n = &the->nodes[id];
    if (!n->nhungry || sim_sg__stealable(n) < HUNGRY_WAKE_AT)
        return;
    for (uint32_t p = 0; p < the->cfg->nodes; p++) {
        uint64_t bit = UINT64_C(1) << (p % 64);
        if (n->hungry[p / 64] & bit) {
            n->hungry[p / 64] &= ~bit;
            sim_sg__post(id, p, M_WAKE, 0, 0);
        }
    }
    n->nhungry = 0;
}

void sim_sg__on_new_ready(uint32_t id)
{
    sim_sg__dispatch(id);
    if (the->nparked && sim_sg__stealable(&the->nodes[id]) > 0)
        sim_sg__wake_parked(id);
    sim_sg__wake_hungry(id);
}

void sim_sg__on_steal_req(uint32_t id, uint32_t thief)
{
    struct node *n = &the->nodes[id];
    uint32_t k = steal_grant(&the->cfg->steal, sim_sg__stealable(n), 0);
    struct msg *g = sim_sg__msg_new(R_GRANT, id, 0, k);
    g->tasks = xcalloc(k ? k : 1, sizeof *g->tasks);
    /* As victim.c's take_for_thief: the tail of SReadyQ past what the free slots keep. */
    uint32_t keep = (uint32_t)readyq_len(&n->sready) - sim_sg__stealable(n);
    k = (uint32_t)sim__q_take_for_thief(&n->sready, keep, k, &the->take);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t task = the->take.tasks[i];
        g->tasks[i] = task;
        the->tasks[task].holder = thief;
        sim_sg__trace(id, TRACE_TASK_STOLEN_OUT, task, (int32_t)thief, 0, 0, 0, 0);
    }
    n->stolen_out += k;
    sim_sg__post_thief(thief, g, MSG_BYTES + 8 * (long)k);
    if (!k)
        turned_away(id, thief);
}

void sim_sg__on_query(uint32_t id, uint32_t thief, uint32_t index)
{
    /* The answer: what it could give away as the query reaches it. */
    uint32_t give = sim_sg__stealable(&the->nodes[id]);
    sim_sg__post_thief(thief, sim_sg__msg_new(R_LOAD, id, index, give), MSG_BYTES);
    if (give < HUNGRY_WAKE_AT)
        turned_away(id, thief);
}

/*
 * A peer has work (it saw this node park, or turned its thief away).  As thief.c's
 * thief_wake: the back-off starts over whatever the thief is doing, a parked thief
 * unparks, and one waiting out an interval asks again now; one mid-attempt finishes
 * it, and fails, if it does, from the initial interval.
 */
void sim_sg__on_wake(uint32_t id)
{
    struct node *n = &the->nodes[id];
    steal_on_wake(&the->cfg->steal, &n->st);
    if (n->state == TH_PARKED) {
        n->state = TH_IDLE;
        sim_sg__poke(id);
    } else if (n->state == TH_WAIT) {
        /* Busy now, so that no other wake-up releases it twice (backoff). */
        n->state = TH_BUSY;
        sim_sg__effect((struct fx){.type = FX_THIEF, .node = id});
    }
}

/* A failed attempt: the back-off of steal.h (and FLDS's hooks, as sim.c calls them),
 * then a sleep that a wake-up cuts short, or parking until a wake-up and a poke.
 * Returns with the thief busy. */
static void backoff(uint32_t id, struct outbox *out)
{
    struct node *n = &the->nodes[id];
    steal_on_result(&the->cfg->steal, &n->st, false, the->cfg->nodes);
    placement_flds_on_steal_failed(&the->cfg->placement, &n->flds);
    if (n->st.parked && placement_flds_poll_should_reset(&the->cfg->placement, NULL, &n->flds))
        steal_on_wake(&the->cfg->steal, &n->st);
    if (n->st.parked) {
        n->state = TH_PARKED;
        if (!n->parked_listed) {
            the->parked = xgrow(the->parked, &the->parked_cap, the->nparked + 1,
                                sizeof *the->parked);
            the->parked[the->nparked++] = id;
            n->parked_listed = true;
        }
        sim_sg__run_effects(out);
        sg->sem_acquire(n->thief_sem);
        return;
    }
    n->state = TH_WAIT;
    sim_sg__run_effects(out);
    double wait = n->st.interval_ms / 1e3;
    the->res->events++;
    /* A wake-up that found it waiting made it busy and owes it a release, which may
     * come after the wait ran out: taken, so that the semaphore is back at 0. */
    if (sg->sem_acquire_timeout(n->thief_sem, wait > 1e-9 ? wait : 1e-9) &&
        n->state == TH_BUSY)
        sg->sem_acquire(n->thief_sem);
    n->state = TH_BUSY;
}

/* Tasks a victim granted join the thief's SReadyQ, those with inputs its LReadyQ
 * (node_take_granted's queues: such a task stays where it was stolen to). */
static bool take_grant(uint32_t id, uint32_t victim, const struct msg *g)
{
    struct node *n = &the->nodes[id];
    for (uint32_t i = 0; i < g->b; i++) {
        sim_sg__trace(id, TRACE_TASK_STOLEN_IN, g->tasks[i], (int32_t)victim, 0, 0, 0, 0);
        uint64_t sum;
        sim_sg__inputs_of(g->tasks[i], the->objs, 0, &sum);
        sim__q_push(sum ? &n->lready : &n->sready, sum, g->tasks[i]);
    }
    if (!g->b)
        return false;
    sim_sg__on_new_ready(id);
    n->stolen_in += g->b;
    the->res->steals_ok++;
    the->res->tasks_stolen += g->b;
    sim_sg__trace(id, TRACE_STEAL_GRANT, UINT32_MAX, (int32_t)victim, 0, g->b, 0, 0);
    steal_on_result(&the->cfg->steal, &n->st, true, the->cfg->nodes);
    return true;
}

/* A node's thief: its actor, and the victims of its attempt. */
struct thief {
    uint32_t id;
    uint32_t k;                /* victims drawn */
    uint32_t *victims, *loads; /* owned, victims_max + 1 each */
};

/*
 * An attempt's queries, sent by an actor of their own that ends once the thief has
 * every answer (so every query arrived).  SimGrid keeps an actor's sends on a list
 * that it walks at each of that actor's receptions until they are waited for, and
 * waiting for them walks it too: k queries and k answers on the thief's list cost k^2
 * a round, most of the run at a few hundred victims.  An ending actor drops its list
 * at once.
 */
static void queries_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct thief *th = sg->self_data();
    struct node *n = &the->nodes[th->id];
    struct outbox out = {0};
    for (uint32_t i = 0; i < th->k; i++)
        sim_sg__send_msg(&out, the->nodes[th->victims[i]].mbox,
                         sim_sg__msg_new(M_QUERY, th->id, 0, i), MSG_BYTES);
    sg->sem_acquire(n->query_sem);
    sim_sg__outbox_drop(&out);
    free(out.v);
    free(out.due);
}

/* One attempt: the queries, the answers, the request, the grant, and on failure the
 * back-off. */
static void attempt(struct thief *th, struct outbox *out)
{
    uint32_t id = th->id, *victims = th->victims, *loads = th->loads;
    struct node *n = &the->nodes[id];
    const struct steal_params *p = &the->cfg->steal;
    the->res->steal_attempts++;
    uint32_t want = p->mode == STEAL_RANDOM1 ? 1
                    : p->victims == STEAL_VICTIMS_RANDOM ? p->victims_k : n->st.neighbours;
    want = want < the->victims_max ? want : the->victims_max;
    want = want ? want : 1;
    uint32_t k = steal_pick_victims(p, &n->st, id, the->cfg->nodes, &the->rng, victims, want);
    if (k == 0) {
        n->steal_fails++;
        sim_sg__trace(id, TRACE_STEAL_FAIL, UINT32_MAX, -1, STEAL_FAIL_NO_VICTIM, 0, 0, 0);
        backoff(id, out);
        return;
    }
    th->k = k;
    sim_sg__spawn(id, queries_main, th, true);
    for (uint32_t i = 0; i < k; i++) {
        struct msg *r = sg->get(n->tmbox);
        loads[r->a] = r->b;
        free(r);
    }
    sg->sem_release(n->query_sem);
    int best = steal_choose_victim(loads, k);
    if (best < 0) {
        n->steal_fails++;
        sim_sg__trace(id, TRACE_STEAL_FAIL, UINT32_MAX, -1, STEAL_FAIL_EMPTY, 0, 0, 0);
        backoff(id, out);
        return;
    }
    uint32_t v = victims[best];
    n->steal_requests++;
    sim_sg__trace(id, TRACE_STEAL_REQUEST, UINT32_MAX, (int32_t)v, 0, loads[best], 0, 0);
    sim_sg__post(id, v, M_STEAL_REQ, 0, 0);
    sim_sg__run_effects(out);
    struct msg *g = sg->get(n->tmbox);
    sim_sg__outbox_wait_all(out); /* the request, and what the thief sent before */
    bool got = take_grant(id, v, g);
    free(g->tasks);
    free(g);
    if (got) {
        sim_sg__run_effects(out);
        return;
    }
    n->steal_fails++;
    sim_sg__trace(id, TRACE_STEAL_FAIL, UINT32_MAX, (int32_t)v, STEAL_FAIL_EMPTY, 0, 0, 0);
    backoff(id, out);
}

static void thief_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct thief *th = sg->self_data();
    sim_sg__receive_eagerly('t', th->id);
    struct node *n = &the->nodes[th->id];
    struct outbox out = {0};
    /* Busy: it decides now, at time 0, after the submission (sim.c's first timer). */
    for (;;) {
        sim_sg__outbox_reap(&out);
        if (the->left == 0 || !starving(n)) {
            n->state = TH_IDLE;
            sg->sem_acquire(n->thief_sem); /* a poke made it busy */
            continue;
        }
        attempt(th, &out);
    }
}

void sim_sg__thief_spawn(uint32_t id)
{
    struct thief *th = xcalloc(1, sizeof *th);
    th->id = id;
    th->victims = xcalloc(the->victims_max + 1, sizeof *th->victims);
    th->loads = xcalloc(the->victims_max + 1, sizeof *th->loads);
    the->nodes[id].thief_sem = sg->sem_init(0);
    the->nodes[id].query_sem = sg->sem_init(0);
    sim_sg__spawn(id, thief_main, th, true);
}

#endif /* JACKDAW_SIMGRID */
