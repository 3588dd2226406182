/*
 * ctws — the cyclic token (see ctws.h).  No I/O, no clock, no globals; called by
 * core/runtime/token.c and tests/unit/test_ctws.c.
 */
#include "core/policy/ctws.h"

#include <stddef.h>
#include <string.h>

void ctws_token_init(struct ctws_token *t, struct ctws_entry *storage, uint32_t nodes)
{
    if (!t)
        return;
    t->hops = 0;
    t->quiet = 0;
    t->nodes = nodes;
    t->e = storage;
    if (storage && nodes)
        memset(storage, 0, nodes * sizeof *storage);
}

uint32_t ctws_next(uint32_t self, uint32_t nodes)
{
    return nodes ? (self + 1) % nodes : 0;
}

int ctws_most_loaded(const struct ctws_token *t, uint32_t self)
{
    int best = -1;
    uint32_t best_count = 0;
    if (!t || !t->e)
        return -1;
    for (uint32_t i = 0; i < t->nodes && i <= (uint32_t)INT32_MAX; i++) {
        if (i == self)
            continue;
        if (t->e[i].count > best_count) {
            best_count = t->e[i].count;
            best = (int)i;
        }
    }
    return best;
}

struct ctws_decision ctws_visit(struct ctws_token *t, const struct steal_params *p,
                                const struct ctws_self *s)
{
    struct ctws_decision d = {.steal = false, .pass = CTWS_PASS_PACED};
    if (!t || !t->e || !s || s->self >= t->nodes)
        return d;
    struct ctws_entry *me = &t->e[s->self];
    me->count = s->stealable;
    me->flags = s->starving ? CTWS_HUNGRY : 0;

    if (s->starving && !s->in_flight) {
        int v = ctws_most_loaded(t, s->self);
        if (v >= 0) {
            struct ctws_entry *victim = &t->e[v];
            uint32_t amount = steal_amount(p, victim->count);
            if (amount > victim->count)
                amount = victim->count;
            if (amount) {
                d.steal = true;
                d.victim = (uint32_t)v;
                d.amount = amount;
                /* The victim's count goes down so that the next holders do not pile on
                 * it; the thief's own does not go up: the tasks are still on the wire
                 * (or may never come), and a hungry holder downstream would chase them
                 * from node to node.  The thief writes them at its next visit. */
                victim->count -= amount;
            }
        }
    }
    if (d.steal)
        t->quiet = 0;
    else if (t->quiet < UINT32_MAX)
        t->quiet++;

    bool any_work = false, any_hungry = false;
    for (uint32_t i = 0; i < t->nodes; i++) {
        any_work |= t->e[i].count > 0;
        any_hungry |= (t->e[i].flags & CTWS_HUNGRY) != 0;
    }
    if (!any_work)
        d.pass = s->woken ? CTWS_PASS_PACED : CTWS_REST;
    else if (any_hungry && t->quiet < t->nodes)
        /* A hungry node waits for the token: hurry it there, but after a whole lap in
         * which nobody could steal, the counts are what they are and haste buys nothing. */
        d.pass = CTWS_PASS_NOW;
    else
        d.pass = CTWS_PASS_PACED;
    return d;
}
