/*
 * load — what a node's load means to stealing: its free slots and what the starvation
 * test sees, as pure functions of the node's read-only view (struct node_load, part.h).
 * Written against the node's API (node_load), so that the daemon and the fake node of
 * the parts' unit tests count alike.
 */
#include "core/runtime/part.h"

uint32_t load_free_slots(const struct node_load *l, uint32_t prefetch)
{
    uint32_t held = l->busy + l->staged_slots + (prefetch == 0 ? l->staging : 0);
    return held < l->slots ? l->slots - held : 0;
}

/*
 * Staged tasks fill slots at once.  Staging ones hold a slot only under MATRIX's
 * executors (--prefetch 0), which fetch inside the slot; with prefetch a slot idles
 * until the fetches end, which on a loaded link is many task lengths (the tail of a
 * fan-in: every node fetching inputs of its last aggregations while another still holds
 * a queue of leaves).  So with prefetch the slots the staging tasks will take are free
 * now, and a short queue of tasks that wait for the fetch window (no more than one
 * window) is not ready work either: such a node steals work that runs meanwhile (the
 * victim gives tasks that need no data first).  A longer backlog counts, so a node with
 * data work of its own does not hoard more.
 */
struct steal_self load_steal_self(const struct node_load *l, uint32_t prefetch)
{
    uint32_t pf = prefetch == NODE_PREFETCH_SLOTS ? l->slots : prefetch;
    struct steal_self s = {
        .lready = l->lready,
        .sready = l->sready,
        .free_slots = load_free_slots(l, prefetch),
        .running_successors = l->running_successors,
        .arriving = l->arriving,
    };
    uint32_t with_data = (l->lready - l->lready_zero) + (l->sready - l->sready_zero);
    if (pf && with_data <= pf) {
        s.lready = l->lready_zero;
        s.sready = l->sready_zero;
    }
    return s;
}

uint32_t node_free_slots(const struct node *n)
{
    struct node_load l = node_load(n);
    return load_free_slots(&l, node_cfg(n)->prefetch);
}

uint32_t node_giveable(const struct node *n)
{
    struct node_load l = node_load(n);
    uint32_t keep = steal_keep(load_free_slots(&l, node_cfg(n)->prefetch), l.lready_zero,
                               l.sready_zero);
    return l.sready > keep ? l.sready - keep : 0;
}

struct steal_self node_steal_self(const struct node *n)
{
    struct node_load l = node_load(n);
    return load_steal_self(&l, node_cfg(n)->prefetch);
}
