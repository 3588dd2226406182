/*
 * load — what a node's load means to stealing: its free slots, what the starvation test
 * sees and what it gives, from the node's read-only view (struct node_load, part.h) by
 * core/policy/steal.h's steal_load functions, which the simulator calls too.  Written
 * against the node's API (node_load), so that the daemon and the fake node of the parts'
 * unit tests count alike.
 */
#include "core/runtime/part.h"

/* The node's load as core/policy/steal.h reads it; the window resolved from --prefetch. */
static struct steal_load steal_load_of(const struct node_load *l, uint32_t prefetch)
{
    return (struct steal_load){
        .slots = l->slots, .busy = l->busy, .staging = l->staging,
        .staged_slots = l->staged_slots, .lready = l->lready, .sready = l->sready,
        .lready_zero = l->lready_zero, .sready_zero = l->sready_zero,
        .running_successors = l->running_successors,
        .arriving = l->arriving > UINT32_MAX ? UINT32_MAX : (uint32_t)l->arriving,
        .window = prefetch == NODE_PREFETCH_SLOTS ? l->slots : prefetch,
    };
}

uint32_t load_free_slots(const struct node_load *l, uint32_t prefetch)
{
    struct steal_load s = steal_load_of(l, prefetch);
    return steal_load_free_slots(&s);
}

/* steal_load_self says why staging and staged tasks count as they do. */
struct steal_self load_steal_self(const struct node_load *l, uint32_t prefetch)
{
    struct steal_load s = steal_load_of(l, prefetch);
    return steal_load_self(&s);
}

uint32_t node_free_slots(const struct node *n)
{
    struct node_load l = node_load(n);
    return load_free_slots(&l, node_cfg(n)->prefetch);
}

uint32_t node_giveable(const struct node *n)
{
    struct node_load l = node_load(n);
    struct steal_load s = steal_load_of(&l, node_cfg(n)->prefetch);
    return steal_load_giveable(&s);
}

struct steal_self node_steal_self(const struct node *n)
{
    struct node_load l = node_load(n);
    return load_steal_self(&l, node_cfg(n)->prefetch);
}
