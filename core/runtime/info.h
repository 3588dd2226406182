/*
 * info — the A2WS information vector a node keeps for its parts (part.h's node_info):
 * the entries of its ring window, its own entry refreshed from its load, and the epoch
 * clock of the preemptive estimate.  Owned by node.c, which answers the parts'
 * node_info* calls with it; the ring part moves its entries, the thief plans from them.
 * Written against the node's API for its parts (node_load, node_cfg, the clock).
 */
#ifndef JACKDAW_RUNTIME_INFO_H
#define JACKDAW_RUNTIME_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include "core/policy/a2ws.h"

struct node;
struct info;

/* Off (info_view NULL) unless the node's policy keeps the vector (steal_keeps_vector). */
struct info *info_create(struct node *n);
void info_free(struct info *f);
/* The vector with this node's own entry brought up to date; NULL when off. */
struct a2ws_vec *info_view(struct info *f);
double info_elapsed_s(const struct info *f);
void info_saw_work(struct info *f);
/* A steal from `victim` succeeded or not (Table 1's stolen flag). */
void info_on_steal(struct info *f, uint32_t victim, bool success);
/* A job begins: an idle node's counts and clock start again. */
void info_job_begins(struct info *f);
/* A node was declared dead: its entry empties, the live neighbours write the sides. */
void info_on_down(struct info *f, uint32_t node);

#endif
