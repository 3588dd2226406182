/*
 * sim_token — the CTWS token in the simulator (Assis et al. 2019, the baseline of paper
 * 001 §4), as core/runtime/token.c moves it: node 0 holds it at the start and the job's
 * start wakes it; each holder's visit is ctws_visit (its count written, a steal from the
 * node the token says is most loaded when it is starving and has no steal in flight, the
 * way on decided); the token passes to ctws_next at once while some node is hungry (but
 * at most once every CTWS_HOP_MS by one node), after CTWS_HOP_MS otherwise, and rests
 * where it is when nothing is stealable, the holder telling its peers it is idle; the
 * first with stealable work wakes it, as does a change of the holder's own count.  A
 * pass is a message of one latency; the steal is the victim's usual answer (sim_thief.c).
 * Only the holder steals: the thief of sim_thief.c is off.
 *
 * One token for the run: its entries (N of 8 bytes) are this file's, not a node's, since
 * exactly one node holds it at a time and nobody reads it on the way.
 *
 * Called by sim.c's event loop and sim_thief.c (sim_core.h).
 */
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/policy/ctws.h"
#include "core/sim/sim_core.h"

struct sim_token {
    struct ctws_token tok;      /* entries borrowed from `entries` */
    struct ctws_entry *entries; /* owned, one per node */
    uint32_t holder;            /* who holds it; UINT32_MAX while it travels */
    bool resting;               /* held, and nothing was stealable: waits for news of work */
    uint32_t timer_gen;         /* the paced pass's timer: only the latest counts */
    bool wake_due;              /* an EV_WAKE at the holder is in the heap */
    int64_t *last_pass;         /* owned, one per node: when it last passed the token */
};

bool sim__token_on(const struct sim_config *cfg)
{
    return cfg->nodes > 1 && cfg->steal.mode != STEAL_NONE &&
           cfg->steal.victims == STEAL_VICTIMS_TOKEN;
}

void sim__token_init(struct sim *s)
{
    const struct sim_config *cfg = s->cfg;
    if (!sim__token_on(cfg))
        return;
    struct sim_token *k = xcalloc(1, sizeof *k);
    k->entries = xcalloc(cfg->nodes, sizeof *k->entries);
    ctws_token_init(&k->tok, k->entries, cfg->nodes);
    k->last_pass = xcalloc(cfg->nodes, sizeof *k->last_pass);
    for (uint32_t i = 0; i < cfg->nodes; i++)
        k->last_pass[i] = INT64_MIN / 2;
    /* The first holder keeps it quietly until the job's start wakes it (sim_run). */
    k->holder = CTWS_FIRST_HOLDER;
    k->resting = true;
    s->token = k;
}

void sim__token_free(struct sim *s)
{
    struct sim_token *k = s->token;
    if (!k)
        return;
    free(k->entries);
    free(k->last_pass);
    free(k);
    s->token = NULL;
}

static void pass(struct sim *s, uint32_t id)
{
    struct sim_token *k = s->token;
    k->tok.hops++;
    k->holder = UINT32_MAX;
    k->resting = false;
    k->timer_gen++;
    k->last_pass[id] = s->now;
    s->res->token_passes++;
    sim__send(s, id, ctws_next(id, s->cfg->nodes), EV_TOKEN, id, 0, 0);
}

/* Nothing stealable anywhere, the token says: the holder keeps it and tells every peer
 * it is idle (MSG_IDLE, one latency).  A peer that holds two stealable tasks or more when
 * that arrives wakes it (idle.c's step; EV_TOKEN_IDLE), one that gets them later too
 * (sim__wake_parked). */
static void rest(struct sim *s, uint32_t id)
{
    struct node *n = &s->nodes[id];
    s->token->resting = true;
    s->res->messages += s->cfg->nodes - 1;
    if (!n->parked_listed) {
        s->parked = xgrow(s->parked, &s->parked_cap, s->nparked + 1, sizeof *s->parked);
        s->parked[s->nparked++] = id;
        n->parked_listed = true;
    }
    sim__push(s, s->now + s->latency_ns, EV_TOKEN_IDLE, id, 0, 0, 0);
}

void sim__token_idle(struct sim *s, uint32_t id)
{
    struct sim_token *k = s->token;
    if (k->holder != id || !k->resting)
        return;
    /* Every such peer answers at once; the first answer is the one that counts. */
    for (uint32_t i = 1; i < s->cfg->nodes; i++) {
        uint32_t j = (id + i) % s->cfg->nodes;
        if (readyq_len(&s->nodes[j].sready) >= 2) {
            sim__send(s, j, id, EV_WAKE, 0, 0, 0);
            return;
        }
    }
}

/* The holder's visit (token.c's visit). */
static void visit(struct sim *s, uint32_t id, bool woken)
{
    struct sim_token *k = s->token;
    struct node *n = &s->nodes[id];
    struct ctws_self self = {
        .self = id, .stealable = (uint32_t)readyq_len(&n->sready), .starving = sim__starving(s, n),
        /* A steal whose grant has not come back yet is in flight. */
        .in_flight = n->state == TH_REQUEST, .woken = woken,
    };
    k->resting = false;
    struct ctws_decision d = ctws_visit(&k->tok, &s->cfg->steal, &self);
    if (d.steal) {
        n->attempt++;
        s->res->steal_attempts++;
        n->state = TH_REQUEST;
        n->steal_requests++;
        sim__trace(s, id, TRACE_STEAL_REQUEST, UINT32_MAX, (int32_t)d.victim, 0, d.amount, 0,
                   0);
        sim__send(s, id, d.victim, EV_STEAL_REQ, id, n->attempt, d.amount);
    }
    int64_t hop = (int64_t)CTWS_HOP_MS * 1000000;
    switch (d.pass) {
    case CTWS_PASS_NOW:
        /* At once, but a node passes it at most once per hop interval: thieves that keep
         * failing on stale counts must not spin it at network speed. */
        if (s->now - k->last_pass[id] >= hop) {
            pass(s, id);
            break;
        }
        sim__push(s, k->last_pass[id] + hop, EV_TOKEN_TIMER, id, 0, ++k->timer_gen, 0);
        break;
    case CTWS_PASS_PACED:
        sim__push(s, s->now + hop, EV_TOKEN_TIMER, id, 0, ++k->timer_gen, 0);
        break;
    case CTWS_REST:
        rest(s, id);
        break;
    }
}

void sim__token_arrives(struct sim *s, uint32_t id)
{
    s->token->holder = id;
    visit(s, id, false);
}

void sim__token_timer(struct sim *s, uint32_t id, uint32_t gen)
{
    struct sim_token *k = s->token;
    if (k->holder == id && !k->resting && gen == k->timer_gen)
        pass(s, id);
}

void sim__token_wake(struct sim *s, uint32_t id)
{
    struct sim_token *k = s->token;
    if (k->holder == id)
        k->wake_due = false;
    if (k->holder == id && k->resting)
        visit(s, id, true);
}

/*
 * After every event at the holder: a resting token moves again when the holder's own
 * count changed (work of its own is news it need not hear from a peer).  It moves at the
 * end of the instant, after the other events of this simulated time, as the daemon's step
 * runs at the end of a loop pass: a submission of many tasks is one pass there and many
 * events here, and the token must not leave with the count of the first.
 */
void sim__token_step(struct sim *s, uint32_t id)
{
    struct sim_token *k = s->token;
    if (k->holder == id && k->resting && !k->wake_due &&
        readyq_len(&s->nodes[id].sready) != k->tok.e[id].count) {
        k->wake_due = true;
        sim__push(s, s->now, EV_WAKE, id, 0, 0, 0);
    }
}

/* The holder's steal has its answer: its next chance is the token's next visit, so
 * there is nothing to back off from; FLDS still hears of a failure (token.c's
 * steal_done). */
void sim__token_granted(struct sim *s, uint32_t id, uint32_t attempt, uint32_t count)
{
    struct node *n = &s->nodes[id];
    if (n->state != TH_REQUEST || attempt != n->attempt)
        return;
    n->state = TH_IDLE;
    if (count)
        s->res->steals_ok++;
    else
        sim__place_steal_failed(s, id, false);
}
