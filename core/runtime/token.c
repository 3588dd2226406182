/*
 * token — the CTWS token on the node's loop (Assis et al. 2019, the baseline of paper
 * 001 §4; the holder's rules are core/policy/ctws's): node 0 makes the token, each
 * holder writes its count, steals when it is starving, and passes the token to the next
 * node of the ring.  Part of the node daemon (node_impl.h); loop thread only.
 *
 * Asynchronous: a visit never waits for anything.  The holder's steal request and the
 * token leave in the same pass (the grant comes back later through thief.c, like any
 * steal's), and a paced pass is a timer, not a wait, so messages, completions and
 * dispatch carry on around it.  The token travels in the per-peer batches like any
 * message.  When nothing is stealable anywhere the token rests where it is and the
 * holder tells its peers it is idle (MSG_IDLE); the first peer with stealable work
 * wakes it (MSG_WAKE, thief_wake_idle_peers), as does a new job or this node's own
 * new work, and it moves on.
 *
 * One token, as in the paper: it is lost with a node that dies holding it, and then
 * nobody steals any more (tasks still run where they are); jackdaw does not make a new
 * one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/runtime/node_impl.h"

/* The paced hop: far below a task's length, far above a loop pass.  A lap of N nodes
 * takes N of them while nobody is hungry. */
#define TOKEN_HOP_MS 1
/* Bytes of one entry on the wire. */
#define TOKEN_ENTRY_BYTES (4 + 1)

static void pass(struct node *n);

static void timer_cb(uv_timer_t *h)
{
    struct node *n = h->data;
    if (n->token.held && !n->token.resting)
        pass(n);
}

void token_init(struct node *n)
{
    struct token *k = &n->token;
    uv_timer_init(&n->loop, &k->timer);
    k->timer.data = n;
    k->on = n->nodes > 1 && n->cfg.steal.victims == STEAL_VICTIMS_TOKEN &&
            n->cfg.steal.mode != STEAL_NONE;
    if (!k->on)
        return;
    k->entries = xcalloc(n->nodes, sizeof *k->entries);
    ctws_token_init(&k->tok, k->entries, n->nodes);
    /* The first holder keeps the token quietly until the first job wakes it: nothing is
     * stealable before a job starts. */
    if (n->self == CTWS_FIRST_HOLDER) {
        k->held = true;
        k->resting = true;
    }
}

void token_close(struct node *n)
{
    struct token *k = &n->token;
    uv_timer_stop(&k->timer);
    uv_close((uv_handle_t *)&k->timer, NULL);
    if (k->on)
        log_info("ctws token: passed %llu times from here, rested %llu times, %llu steals; "
                 "%s", (unsigned long long)k->passes, (unsigned long long)k->rests,
                 (unsigned long long)k->steals, k->held ? "held here at the end" : "not here");
    free(k->entries);
    k->entries = NULL;
    k->on = false;
}

static void send_token(struct node *n, uint32_t to, const struct ctws_token *t)
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
    node_msg_end(n, to, at);
}

static void pass(struct node *n)
{
    struct token *k = &n->token;
    uv_timer_stop(&k->timer);
    k->tok.hops++;
    send_token(n, ctws_next(n->self, n->nodes), &k->tok);
    k->held = false;
    k->resting = false;
    k->passes++;
    k->last_pass_ns = clock_mono_ns();
}

/* Nothing stealable anywhere: keep the token, and have peers wake us when they get work. */
static void rest(struct node *n)
{
    struct token *k = &n->token;
    k->resting = true;
    k->rests++;
    for (uint32_t i = 0; i < n->nodes; i++) {
        if (i == n->self)
            continue;
        size_t at;
        node_msg_begin(n, i, MSG_IDLE, &at);
        node_msg_end(n, i, at);
    }
    log_debug("ctws token rests at node %u after %u hops", n->self, k->tok.hops);
}

static void visit(struct node *n, bool woken)
{
    struct token *k = &n->token;
    const struct steal_params *p = &n->cfg.steal;
    struct steal_self self = thief_self(n);
    struct ctws_self cs = {
        .self = n->self, .stealable = (uint32_t)readyq_len(&n->sready),
        .starving = steal_starving(p, &self),
        /* An unanswered steal (its grant or its timeout still to come) is in flight. */
        .in_flight = n->thief.state == THIEF_REQUEST,
        .woken = woken,
    };
    k->resting = false;
    struct ctws_decision d = ctws_visit(&k->tok, p, &cs);
    if (d.steal) {
        k->steals++;
        log_debug("ctws: node %u holds the token and asks node %u for %u tasks", n->self,
                  d.victim, d.amount);
        thief_request(n, d.victim, d.amount, d.amount);
    }
    int64_t hop_ns = (int64_t)TOKEN_HOP_MS * 1000000;
    int64_t since = clock_mono_ns() - k->last_pass_ns;
    switch (d.pass) {
    case CTWS_PASS_NOW:
        /* At once, but a node passes the token at most once per hop interval: thieves
         * that keep failing on stale counts must not spin it at network speed. */
        if (since >= hop_ns) {
            pass(n);
            break;
        }
        uv_timer_start(&k->timer, timer_cb, (uint64_t)((hop_ns - since + 999999) / 1000000), 0);
        break;
    case CTWS_PASS_PACED:
        uv_timer_start(&k->timer, timer_cb, TOKEN_HOP_MS, 0);
        break;
    case CTWS_REST:
        rest(n);
        break;
    }
}

void token_step(struct node *n)
{
    struct token *k = &n->token;
    if (!k->on || !k->held || !k->resting)
        return;
    /* Work of its own (a submit, a task made ready here) is news the holder need not
     * hear from a peer. */
    if (readyq_len(&n->sready) != k->tok.e[n->self].count)
        visit(n, true);
}

void token_wake(struct node *n)
{
    struct token *k = &n->token;
    if (k->on && k->held && k->resting)
        visit(n, true);
}

int token_on_message(struct node *n, uint32_t from, struct rbuf *r)
{
    struct token *k = &n->token;
    uint32_t hops = rbuf_u32(r);
    uint32_t quiet = rbuf_u32(r);
    uint32_t nodes = rbuf_u32(r);
    if (!rbuf_ok(r) || nodes != n->nodes || (uint64_t)nodes * TOKEN_ENTRY_BYTES > r->left)
        return -EBADMSG;
    struct ctws_entry *e = k->on ? k->entries : xcalloc(nodes, sizeof *e);
    for (uint32_t i = 0; i < nodes; i++) {
        e[i].count = rbuf_u32(r);
        e[i].flags = rbuf_u8(r) & CTWS_HUNGRY;
    }
    if (!rbuf_ok(r)) {
        if (!k->on)
            free(e);
        return -EBADMSG;
    }
    if (!k->on) {
        /* A node configured without CTWS (a cluster configured unevenly) passes the token
         * on untouched rather than lose it. */
        struct ctws_token t = {.hops = hops + 1, .quiet = quiet, .nodes = nodes, .e = e};
        send_token(n, ctws_next(n->self, n->nodes), &t);
        free(e);
        return 0;
    }
    if (k->held)
        log_warn("ctws: a second token arrived from node %u; it replaces the one held here",
                 from);
    uv_timer_stop(&k->timer);
    k->tok.hops = hops;
    k->tok.quiet = quiet;
    k->held = true;
    visit(n, false);
    node_mark_dirty(n);
    return 0;
}
