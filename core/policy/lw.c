/*
 * lw — the leader/workers baseline (see lw.h).  No I/O, no clock, no globals; called by
 * core/runtime/leader.c, core/runtime/node.c and tests/unit/test_lw.c.
 */
#include "core/policy/lw.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

bool lw_forwards(uint32_t self, uint32_t nodes)
{
    return nodes > 1 && self != LW_LEADER;
}

struct lw_capacity lw_leader_capacity(uint32_t slots, double speed)
{
    struct lw_capacity c = {.slots = slots, .speed = speed};
    if (slots >= 2) {
        c.slots = slots - 1;
    } else {
        c.slots = 1;
        c.speed = speed / 2;
    }
    return c;
}

uint32_t lw_want(const struct steal_params *p, uint32_t free_slots)
{
    if (p && p->amount == STEAL_AMOUNT_CHUNK)
        return p->chunk ? p->chunk : 1;
    return free_slots ? free_slots : 1;
}

int lw_enqueue(struct lw_request *q, uint32_t *n, uint32_t cap, const struct lw_request *r)
{
    if (!q || !n || !r || r->want == 0)
        return -EINVAL;
    for (uint32_t i = 0; i < *n; i++) {
        if (q[i].node == r->node) {
            q[i] = *r;
            return 0;
        }
    }
    if (*n >= cap)
        return -ENOSPC;
    q[(*n)++] = *r;
    return 0;
}

uint32_t lw_serve(uint32_t queued, const struct lw_request *q, uint32_t n, uint32_t *grants)
{
    uint32_t served = 0;
    if (!q || !grants)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = q[i].want < queued ? q[i].want : queued;
        grants[i] = g;
        queued -= g;
        /* Grants are positive up to the first request the queue cannot reach, and zero
         * from there on: the answered ones are a prefix, so the rest keep their order. */
        if (g)
            served = i + 1;
    }
    return served;
}

void lw_dequeue(struct lw_request *q, uint32_t *n, uint32_t served)
{
    if (!q || !n)
        return;
    if (served >= *n) {
        *n = 0;
        return;
    }
    memmove(q, q + served, (*n - served) * sizeof *q);
    *n -= served;
}
