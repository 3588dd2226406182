/*
 * token — the CTWS token on the node's loop (Assis et al. 2019, the baseline of paper
 * 001 §4; the holder's rules are core/policy/ctws's): node 0 makes the token, each
 * holder writes its count, steals when it is starving, and passes the token to the next
 * node of the ring.  A part of the node daemon (part.h); loop thread only.
 *
 * Asynchronous: a visit never waits for anything.  The holder's steal request and the
 * token leave in the same pass (the node queues the grant when it comes back, like any
 * steal's, and tells this part), and a paced pass is a timer, not a wait, so messages, completions and
 * dispatch carry on around it.  The token travels in the per-peer batches like any
 * message.  When nothing is stealable anywhere the token rests where it is and the
 * holder tells its peers it is idle (MSG_IDLE); the first peer with stealable work
 * wakes it (MSG_WAKE, idle.c), as does a new job or this node's own
 * new work, and it moves on.
 *
 * One token, as in the paper, per membership epoch: the token carries the epoch it was
 * made in, and when a node is declared dead every node drops the token it holds, if it
 * was made before that death, and the lowest live node makes a new one (so a token that
 * died with its holder is made again exactly once, and a token that did not is not
 * doubled: the old one is dropped wherever it turns up).  The ring skips dead members.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/ctws.h"
#include "core/policy/fd.h"
#include "core/runtime/part.h"

/* Bytes of one entry on the wire. */
#define TOKEN_ENTRY_BYTES (4 + 1)

/* The token while this node holds it, and the holder's own steal. */
struct token {
    struct node *n;
    bool on;                    /* --victims token, two nodes or more, stealing on */
    bool held;                  /* the token is here */
    bool resting;               /* held, and nothing was stealable: waits for news of work */
    struct ctws_token tok;      /* entries borrowed from `entries` */
    struct ctws_entry *entries; /* owned; `nodes` entries, NULL when off */
    uv_timer_t timer;           /* a paced pass */
    int64_t last_pass_ns;       /* monotonic: when this node last passed the token */
    bool in_flight;             /* a steal request is out, its grant or timeout to come */
    uint32_t req;               /* id of the holder's latest steal request */
    uint32_t victim;            /* whom it went to */
    uint32_t epoch;             /* the membership epoch the held token was made in */
    uv_timer_t steal_timer;     /* that request's timeout */
    uint64_t passes, rests, steals;
};

static void pass(struct token *k);

static void timer_cb(uv_timer_t *h)
{
    struct token *k = h->data;
    if (k->held && !k->resting)
        pass(k);
}

static void *token_init(struct node *n, char **cause)
{
    (void)cause;
    const struct node_config *cfg = node_cfg(n);
    struct token *k = xcalloc(1, sizeof *k);
    k->n = n;
    uv_timer_init(node_loop(n), &k->timer);
    k->timer.data = k;
    uv_timer_init(node_loop(n), &k->steal_timer);
    k->steal_timer.data = k;
    k->on = node_count(n) > 1 && cfg->steal.victims == STEAL_VICTIMS_TOKEN &&
            cfg->steal.mode != STEAL_NONE;
    if (!k->on)
        return k;
    k->entries = xcalloc(node_count(n), sizeof *k->entries);
    ctws_token_init(&k->tok, k->entries, node_count(n));
    /* The first holder keeps the token quietly until the first job wakes it: nothing is
     * stealable before a job starts. */
    if (node_self(n) == CTWS_FIRST_HOLDER) {
        k->held = true;
        k->resting = true;
    }
    return k;
}

static void token_close(void *state)
{
    struct token *k = state;
    uv_timer_stop(&k->timer);
    uv_close((uv_handle_t *)&k->timer, NULL);
    uv_timer_stop(&k->steal_timer);
    uv_close((uv_handle_t *)&k->steal_timer, NULL);
    if (k->on)
        log_info("ctws token: passed %llu times from here, rested %llu times, %llu steals; "
                 "%s", (unsigned long long)k->passes, (unsigned long long)k->rests,
                 (unsigned long long)k->steals, k->held ? "held here at the end" : "not here");
}

static void token_free(void *state)
{
    struct token *k = state;
    free(k->entries);
    free(k);
}

/*
 * The holder's steal has an answer (success) or none (a failure: an empty grant, or no
 * grant within steal_timeout_ms).  The next chance to steal is the token's next visit,
 * so there is nothing to back off from and nothing to park: a resting token does the
 * waiting.  FLDS still hears of a failure (node_steal_failed).
 */
static void steal_done(struct token *k, bool success)
{
    k->in_flight = false;
    uv_timer_stop(&k->steal_timer);
    if (success) {
        node_counters(k->n)->steals_succeeded++;
        node_mark_dirty(k->n);
    } else {
        node_steal_failed(k->n, false);
    }
}

static void steal_timeout_cb(uv_timer_t *h)
{
    struct token *k = h->data;
    if (!k->in_flight)
        return;
    node_counters(k->n)->steal_fails++;
    node_trace_full(k->n, TRACE_STEAL_FAIL, TRACE_NO_TASK, -1, STEAL_FAIL_TIMEOUT, 0, 0, 0, 0);
    steal_done(k, false);
}

static void token_granted(void *state, uint32_t from, uint32_t req, uint32_t count)
{
    struct token *k = state;
    (void)from;
    if (k->in_flight && req == k->req)
        steal_done(k, count > 0);
}

static void steal(struct token *k, uint32_t victim, uint32_t amount)
{
    k->req++;
    k->in_flight = true;
    k->victim = victim;
    node_counters(k->n)->steals_attempted++;
    node_steal_request(k->n, victim, k->req, amount, amount);
    uint32_t ms = node_cfg(k->n)->steal_timeout_ms;
    uv_timer_start(&k->steal_timer, steal_timeout_cb, ms ? ms : 1, 0);
}

static void send_token(struct node *n, uint32_t to, const struct ctws_token *t, uint32_t epoch)
{
    size_t at;
    struct wbuf *b = node_msg_begin(n, to, MSG_TOKEN, &at);
    wbuf_put_u32(b, t->hops);
    wbuf_put_u32(b, t->quiet);
    wbuf_put_u32(b, t->nodes);
    for (uint32_t i = 0; i < t->nodes; i++) {
        wbuf_put_u32(b, t->e[i].count);
        wbuf_put_u8(b, t->e[i].flags);
    }
    wbuf_put_u32(b, epoch);
    node_msg_end(n, to, at);
}

static uint32_t next_live(struct node *n)
{
    return fd_next_live(node_self(n), node_count(n), node_dead_set(n), 1);
}

static void rest(struct token *k);

static void pass(struct token *k)
{
    struct node *n = k->n;
    if (next_live(n) == node_self(n)) {
        /* Every other node is dead: nobody to pass to, nor to steal from. */
        rest(k);
        return;
    }
    uv_timer_stop(&k->timer);
    k->tok.hops++;
    send_token(n, next_live(n), &k->tok, k->epoch);
    k->held = false;
    k->resting = false;
    k->passes++;
    node_counters(n)->token_passes++;
    k->last_pass_ns = node_mono_ns(n);
}

/* Nothing stealable anywhere: keep the token, and have peers wake us when they get work. */
static void rest(struct token *k)
{
    struct node *n = k->n;
    k->resting = true;
    k->rests++;
    for (uint32_t i = 0; i < node_count(n); i++) {
        if (i == node_self(n) || !node_alive(n, i))
            continue;
        size_t at;
        node_msg_begin(n, i, MSG_IDLE, &at);
        node_msg_end(n, i, at);
    }
    log_debug("ctws token rests at node %u after %u hops", node_self(n), k->tok.hops);
}

static void visit(struct token *k, bool woken)
{
    struct node *n = k->n;
    const struct steal_params *p = &node_cfg(n)->steal;
    struct steal_self self = node_steal_self(n);
    /* The dead have nothing to steal and want nothing. */
    for (uint32_t i = 0; i < node_count(n); i++)
        if (!node_alive(n, i))
            k->tok.e[i] = (struct ctws_entry){0};
    struct ctws_self cs = {
        .self = node_self(n), .stealable = (uint32_t)readyq_len(node_readyq(n, NODE_SREADY)),
        .starving = steal_starving(p, &self),
        /* An unanswered steal (its grant or its timeout still to come) is in flight. */
        .in_flight = k->in_flight,
        .woken = woken,
    };
    k->resting = false;
    struct ctws_decision d = ctws_visit(&k->tok, p, &cs);
    if (d.steal) {
        k->steals++;
        log_debug("ctws: node %u holds the token and asks node %u for %u tasks",
                  node_self(n), d.victim, d.amount);
        steal(k, d.victim, d.amount);
    }
    int64_t hop_ns = (int64_t)CTWS_HOP_MS * 1000000;
    int64_t since = node_mono_ns(n) - k->last_pass_ns;
    switch (d.pass) {
    case CTWS_PASS_NOW:
        /* At once, but a node passes the token at most once per hop interval: thieves
         * that keep failing on stale counts must not spin it at network speed. */
        if (since >= hop_ns) {
            pass(k);
            break;
        }
        uv_timer_start(&k->timer, timer_cb, (uint64_t)((hop_ns - since + 999999) / 1000000), 0);
        break;
    case CTWS_PASS_PACED:
        uv_timer_start(&k->timer, timer_cb, CTWS_HOP_MS, 0);
        break;
    case CTWS_REST:
        rest(k);
        break;
    }
}

/* A resting token moves again when this node's own count changed. */
static void token_step(void *state)
{
    struct token *k = state;
    if (!k->on || !k->held || !k->resting)
        return;
    /* Work of its own (a submit, a task made ready here) is news the holder need not
     * hear from a peer. */
    if (readyq_len(node_readyq(k->n, NODE_SREADY)) != k->tok.e[node_self(k->n)].count)
        visit(k, true);
}

/* The cluster has (new) work: a token resting here moves again. */
static void token_wake(void *state)
{
    struct token *k = state;
    if (k->on && k->held && k->resting)
        visit(k, true);
}

static int token_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct token *k = state;
    struct node *n = k->n;
    (void)type;
    uint32_t hops = rbuf_u32(r);
    uint32_t quiet = rbuf_u32(r);
    uint32_t nodes = rbuf_u32(r);
    if (!rbuf_ok(r) || nodes != node_count(n) || (uint64_t)nodes * TOKEN_ENTRY_BYTES > r->left)
        return -EBADMSG;
    /* Read aside: a token that is dropped must not touch the one held here. */
    struct ctws_entry *e = xcalloc(nodes, sizeof *e);
    for (uint32_t i = 0; i < nodes; i++) {
        e[i].count = rbuf_u32(r);
        e[i].flags = rbuf_u8(r) & CTWS_HUNGRY;
    }
    uint32_t epoch = rbuf_u32(r);
    if (!rbuf_ok(r)) {
        free(e);
        return -EBADMSG;
    }
    if (epoch < node_epoch(n)) {
        /* Made before a death this node knows of: a new one is on its way. */
        log_debug("ctws: token of epoch %u from node %u dropped (epoch %u here)", epoch, from,
                  node_epoch(n));
        free(e);
        return 0;
    }
    if (!k->on) {
        /* A node configured without CTWS (a cluster configured unevenly) passes the token
         * on untouched rather than lose it. */
        struct ctws_token t = {.hops = hops + 1, .quiet = quiet, .nodes = nodes, .e = e};
        if (next_live(n) != node_self(n))
            send_token(n, next_live(n), &t, epoch);
        free(e);
        return 0;
    }
    if (k->held && epoch == k->epoch)
        log_warn("ctws: a second token arrived from node %u; it replaces the one held here",
                 from);
    memcpy(k->entries, e, nodes * sizeof *e);
    free(e);
    uv_timer_stop(&k->timer);
    k->tok.hops = hops;
    k->tok.quiet = quiet;
    k->epoch = epoch;
    k->held = true;
    visit(k, false);
    node_mark_dirty(n);
    return 0;
}

/* See the header: a death ends every token made before it; the lowest live node makes
 * the next.  A steal in flight to the dead node has failed. */
static void token_down(void *state, uint32_t node)
{
    struct token *k = state;
    struct node *n = k->n;
    if (k->in_flight && k->victim == node) {
        node_counters(n)->steal_fails++;
        node_trace_full(n, TRACE_STEAL_FAIL, TRACE_NO_TASK, (int32_t)node, STEAL_FAIL_TIMEOUT, 0,
                        0, 0, 0);
        steal_done(k, false);
    }
    if (!k->on)
        return;
    if (k->held && k->epoch < node_epoch(n)) {
        uv_timer_stop(&k->timer);
        k->held = k->resting = false;
    }
    if (fd_lowest_live(node_count(n), node_dead_set(n)) != node_self(n))
        return;
    memset(k->entries, 0, node_count(n) * sizeof *k->entries);
    ctws_token_init(&k->tok, k->entries, node_count(n));
    k->epoch = node_epoch(n);
    k->held = true;
    log_info("ctws: node %u died; a new token of epoch %u starts here", node, k->epoch);
    visit(k, true);
}

static const uint16_t token_types[] = {MSG_TOKEN, 0};

const struct part part_token = {
    .name = "token",
    .init = token_init,
    .close = token_close,
    .free = token_free,
    .step = token_step,
    .wake = token_wake,
    .granted = token_granted,
    .down = token_down,
    .types = token_types,
    .on_message = token_on_message,
};
