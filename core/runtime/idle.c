/*
 * idle — parked peers and their wake-up.  A thief that reached its bound of failures
 * parks (thief.c) and a CTWS token with nothing to do rests (token.c); either tells its
 * peers with MSG_IDLE.  This part remembers who said so, and once this node has
 * stealable work it tells each of them once (MSG_WAKE); a MSG_WAKE received is
 * node_wake, which every stealing part hears.  Without it a parked cluster would poll
 * for work it cannot see.  A part of the node daemon (part.h); loop thread only.
 */
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/runtime/part.h"

struct idle {
    struct node *n;
    bool *parked;           /* owned, `nodes` entries: the peer said it is idle */
};

/* Two or more stealable tasks: enough that a thief can take some and we keep some. */
static void idle_step(void *state)
{
    struct idle *d = state;
    struct node *n = d->n;
    if (readyq_len(node_readyq(n, NODE_SREADY)) < 2)
        return;
    for (uint32_t i = 0; i < node_count(n); i++) {
        if (!d->parked[i])
            continue;
        d->parked[i] = false;
        size_t at;
        node_msg_begin(n, i, MSG_WAKE, &at);
        node_msg_end(n, i, at);
    }
}

static void idle_down(void *state, uint32_t node)
{
    struct idle *d = state;
    d->parked[node] = false;
}

static int idle_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct idle *d = state;
    (void)r;
    if (type == MSG_IDLE)
        d->parked[from] = true;
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
    return d;
}

static void idle_free(void *state)
{
    struct idle *d = state;
    free(d->parked);
    free(d);
}

static const uint16_t idle_types[] = {MSG_IDLE, MSG_WAKE, 0};

const struct part part_idle = {
    .name = "idle",
    .init = idle_init,
    .free = idle_free,
    .step = idle_step,
    .down = idle_down,
    .types = idle_types,
    .on_message = idle_on_message,
};
