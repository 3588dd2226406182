/*
 * parts — the table of the node's parts (part.h says what a part is).  Included by
 * node.c, which loops over the table, and parts.c, which fills it; no part includes it.
 */
#ifndef JACKDAW_RUNTIME_PARTS_H
#define JACKDAW_RUNTIME_PARTS_H

#include <stddef.h>

#include "core/runtime/part.h"

#define NODE_MAX_PARTS 16

/* In the order of the check step and of every event (parts.c says why this order). */
extern const struct part *const node_parts[];
extern const size_t node_nparts;

extern const struct part part_data, part_place, part_victim, part_thief, part_leader,
    part_token, part_idle, part_ring, part_heartbeat;

#endif
