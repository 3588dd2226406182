/*
 * parsec — paper 004's thief and victim policies (see parsec.h).  No I/O, no clock, no
 * globals; called by core/policy/steal.c, core/runtime/thief.c and
 * tests/unit/test_parsec.c.
 */
#include "core/policy/parsec.h"

#include <stddef.h>

bool parsec_starving(bool successors, const struct parsec_self *s)
{
    if (!s)
        return false;
    if (s->ready > 0 || s->free_slots == 0)
        return false;
    return !successors || s->running_successors == 0;
}

uint32_t parsec_amount(enum steal_amount_kind kind, uint32_t chunk, uint32_t stealable)
{
    switch (kind) {
    case STEAL_AMOUNT_HALF:
        /* ceil(n / 2) without the overflow of (n + 1) / 2 at UINT32_MAX. */
        return stealable / 2 + stealable % 2;
    case STEAL_AMOUNT_CHUNK:
        if (chunk == 0)
            chunk = 1;
        return stealable < chunk ? stealable : chunk;
    case STEAL_AMOUNT_SINGLE:
        return stealable < 1 ? stealable : 1;
    default:
        return stealable;
    }
}

double parsec_waiting_time(const struct parsec_guard *g)
{
    if (!g || !(g->avg_task_s > 0))
        return 0;
    double slots = g->slots ? (double)g->slots : 1.0;
    return ((double)g->ready / slots + 1.0) * g->avg_task_s;
}

bool parsec_guard_allows(const struct parsec_guard *g)
{
    if (!g || !(g->avg_task_s > 0))
        return true;
    double transfer = g->transfer_s > 0 ? g->transfer_s : 0;
    return transfer < parsec_waiting_time(g);
}
