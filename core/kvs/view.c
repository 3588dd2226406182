/*
 * view — see view.h.
 */
#include "core/kvs/view.h"

#include <stdlib.h>

#include "core/base/xalloc.h"

void view_init(struct view *v, uint32_t nodes)
{
    v->nodes = nodes;
    v->replicas = 1;
    v->ndown = 0;
    v->down = NULL;
}

void view_fini(struct view *v)
{
    free(v->down);
    v->down = NULL;
}

bool view_set_down(struct view *v, uint32_t node)
{
    if (node >= v->nodes || view_is_down(v, node))
        return false;
    if (!v->down)
        v->down = xcalloc(v->nodes, 1);
    v->down[node] = 1;
    v->ndown++;
    return true;
}

static bool live_as(const struct view *v, uint32_t node, uint32_t as_up)
{
    return node == as_up || !view_is_down(v, node);
}

uint32_t view_primary_as(const struct view *v, uint64_t key, uint32_t as_up)
{
    uint32_t owner = task_key_owner(key, v->nodes);
    if (!v->ndown)
        return owner;
    for (uint32_t i = 0; i < v->nodes; i++) {
        uint32_t node = (owner + i) % v->nodes;
        if (live_as(v, node, as_up))
            return node;
    }
    return VIEW_NONE;
}

uint32_t view_replicas_as(const struct view *v, uint64_t key, uint32_t as_up, uint32_t *out)
{
    uint32_t owner = task_key_owner(key, v->nodes), n = 0;
    if (!v->ndown) {
        /* Every write at R > 1 asks: the owner and the next nodes, without a division
         * per step. */
        uint32_t r = v->replicas < v->nodes ? v->replicas : v->nodes;
        for (uint32_t node = owner; n < r; n++) {
            out[n] = node;
            if (++node == v->nodes)
                node = 0;
        }
        return n;
    }
    for (uint32_t i = 0; i < v->nodes && n < v->replicas; i++) {
        uint32_t node = (owner + i) % v->nodes;
        if (live_as(v, node, as_up))
            out[n++] = node;
    }
    return n;
}
