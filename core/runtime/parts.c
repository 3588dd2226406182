/*
 * parts — the node's parts, in the order node.c runs them (part.h).  The order is
 * behaviour: in the check step a victim answers the pass's steal requests before its
 * own thief asks anyone (what the pass brought has met the dispatcher, and a node that
 * just gave tasks away may then be starving itself); the LW leader hands out after the
 * thief's poll, the CTWS holder visits after both; parked peers are woken once the
 * pass's grants have taken what they took from SReadyQ; the A2WS ring goes last, so
 * that the entry it spreads reflects everything the pass changed and its messages can
 * ride on the batches the others queued; the heartbeat, with no step, needs no place.
 * For events, placement comes before
 * everything (a ready task is placed once), and the thief hears of wake-ups before the
 * token does.
 */
#include "core/runtime/parts.h"

const struct part *const node_parts[] = {
    &part_data, &part_place, &part_victim, &part_thief,
    &part_leader, &part_token, &part_idle, &part_ring, &part_heartbeat,
};

const size_t node_nparts = sizeof node_parts / sizeof node_parts[0];

_Static_assert(sizeof node_parts / sizeof node_parts[0] <= NODE_MAX_PARTS,
               "NODE_MAX_PARTS is too small for the table");
