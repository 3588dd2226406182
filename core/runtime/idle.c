/*
 * idle — hungry peers and their wake-up.  A thief that reached its bound of failures
 * parks (thief.c) and a CTWS token with nothing to do rests (token.c); either tells its
 * peers with MSG_IDLE.  A thief that asked this node for work and got none (a load
 * query or a steal request, node_turned_away from victim.c) is hungry too, though it
 * only backs off.  This part remembers both (the turned-away, the latest
 * STEAL_HUNGRY_MAX of them), and once this node has stealable work it
 * tells each of them once (MSG_WAKE); a MSG_WAKE received is node_wake, which every
 * stealing part hears: a parked thief unparks, a backing-off one asks again at once.
 * Without it a parked cluster would poll for work it cannot see, and when one node
 * gets a whole job (`--mode one`) the others, backed off by the failures of the
 * moments before its tasks arrived, found them only a back-off interval later (every
 * slot but its own idle 30-120 ms more, in a run of 64,000 1 ms tasks on 8 nodes).
 * A part of the node daemon (part.h); loop thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/steal.h"
#include "core/runtime/part.h"

struct idle {
    struct node *n;
    bool *parked;           /* owned, `nodes` entries: the peer said it is idle */
    uint32_t nparked;       /* of them set */
    bool *listed;           /* owned, `nodes` entries: the peer is in `hungry` */
    uint32_t hungry[STEAL_HUNGRY_MAX]; /* the latest thieves turned away, by their latest
                                        * refusal, oldest first */
    uint32_t nhungry;
};

static void wake(struct node *n, uint32_t peer)
{
    size_t at;
    node_msg_begin(n, peer, MSG_WAKE, &at);
    node_msg_end(n, peer, at);
}

/* Two or more tasks to give (beyond what the free slots keep): enough that a thief can
 * take some and we keep some.  The same measure as victim.c's turned-away mark, so a
 * thief is woken only after what it was refused for has changed.  Each peer once, and
 * nothing is measured on a pass with no one to wake (this runs every loop pass). */
static void idle_step(void *state)
{
    struct idle *d = state;
    struct node *n = d->n;
    if ((!d->nparked && !d->nhungry) || node_giveable(n) < 2)
        return;
    for (uint32_t i = 0; d->nparked && i < node_count(n); i++) {
        if (!d->parked[i])
            continue;
        d->parked[i] = false;
        d->nparked--;
        if (!d->listed[i])
            wake(n, i);
    }
    for (uint32_t i = 0; i < d->nhungry; i++) {
        d->listed[d->hungry[i]] = false;
        wake(n, d->hungry[i]);
    }
    d->nhungry = 0;
}

/* The list stays in the order of each thief's latest refusal, so that the one forgotten
 * when it is full is the one refused longest ago: a thief turned away again moves to the
 * end.  (The simulator finds the same list from the draws' side at 10^6 nodes, which
 * only this order allows: sim_thief.c.) */
static void idle_turned_away(void *state, uint32_t thief)
{
    struct idle *d = state;
    if (d->parked[thief])
        return;
    if (d->listed[thief]) {
        uint32_t i = 0;
        while (d->hungry[i] != thief)
            i++;
        memmove(d->hungry + i, d->hungry + i + 1, (d->nhungry - 1 - i) * sizeof d->hungry[0]);
        d->hungry[d->nhungry - 1] = thief;
        return;
    }
    if (d->nhungry == STEAL_HUNGRY_MAX) {
        d->listed[d->hungry[0]] = false;
        memmove(d->hungry, d->hungry + 1, (STEAL_HUNGRY_MAX - 1) * sizeof d->hungry[0]);
        d->nhungry--;
    }
    d->hungry[d->nhungry++] = thief;
    d->listed[thief] = true;
}

static void idle_down(void *state, uint32_t node)
{
    struct idle *d = state;
    d->nparked -= d->parked[node];
    d->parked[node] = false;
    if (!d->listed[node])
        return;
    d->listed[node] = false;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < d->nhungry; i++)
        if (d->hungry[i] != node)
            d->hungry[kept++] = d->hungry[i];
    d->nhungry = kept;
}

static int idle_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct idle *d = state;
    (void)r;
    if (type == MSG_IDLE) {
        d->nparked += !d->parked[from];
        d->parked[from] = true;
    }
    else
        node_wake(d->n);
    return 0;
}

static void *idle_init(struct node *n, char **cause)
{
    (void)cause;
    struct idle *d = xcalloc(1, sizeof *d);
    d->n = n;
    d->parked = xcalloc(node_count(n), sizeof *d->parked);
    d->listed = xcalloc(node_count(n), sizeof *d->listed);
    return d;
}

static void idle_free(void *state)
{
    struct idle *d = state;
    free(d->parked);
    free(d->listed);
    free(d);
}

static const uint16_t idle_types[] = {MSG_IDLE, MSG_WAKE, 0};

const struct part part_idle = {
    .name = "idle",
    .init = idle_init,
    .free = idle_free,
    .step = idle_step,
    .turned_away = idle_turned_away,
    .down = idle_down,
    .types = idle_types,
    .on_message = idle_on_message,
};
