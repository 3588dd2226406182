/*
 * mix — heterogeneous node mixes: the C1..C5 configurations of paper 001 (A2WS), Table 2,
 * scaled to any node count, as per-node speed factors and suggested slot counts.
 *
 * The paper emulates a heterogeneous machine with nodes of 1, 2, 4, 8, 16 and 24 cores in
 * the proportion 2:1:1:1:1:2 (per 8 nodes: two of 1 core, one each of 2, 4, 8 and 16, two
 * of 24).  C1 is 8 such nodes, C2 16 (twice C1's counts), C3 32, C4 64, C5 128.  jackdaw
 * emulates a node of c cores by a speed factor c/24 (a 24-core node is 1.0) and suggests
 * c executor slots for a launcher that can give nodes different slot counts.
 *
 * Scaling: node i gets the i-th entry of a repeating 8-node pattern whose every prefix is
 * as close to the 2:1:1:1:1:2 proportion as a prefix can be, so a multiple of 8 nodes has
 * exactly the paper's counts, the preset's own size is exactly the paper's configuration,
 * and any other count takes the mix proportionally (4 nodes: 24, 1, 8, 2 cores).
 *
 * Pure: no I/O, no allocation except mix_speed_list's string.  Called by the console's
 * launch form and by `--speeds C1` (core/client/launcher.c, which gives a mix one slot per
 * node unless told otherwise: see launcher_node_slots); unit-tested in
 * tests/unit/test_mix.c.  Return convention: 0 or a negative errno.
 */
#ifndef JACKDAW_MIX_H
#define JACKDAW_MIX_H

#include <stddef.h>
#include <stdint.h>

enum mix_preset {
    MIX_NONE = 0,   /* homogeneous: every node speed 1.0 */
    MIX_C1, MIX_C2, MIX_C3, MIX_C4, MIX_C5,
    MIX_PRESET_COUNT
};

/* The largest node of the mixes: its speed is 1.0. */
#define MIX_MAX_CORES 24u

struct mix_node {
    uint32_t cores;         /* emulated cores: 1, 2, 4, 8, 16 or 24 (24 for MIX_NONE) */
    double speed;           /* cores / 24, in (0, 1] */
    uint32_t slots;         /* suggested executor slots: cores */
};

/* "none", "C1".."C5" (case-insensitive); -EINVAL otherwise. */
int mix_parse(const char *name);
/* "none", "C1".."C5"; NULL when out of range. */
const char *mix_name(enum mix_preset p);
/* The node count of the paper's configuration (8, 16, 32, 64, 128); 0 for MIX_NONE or a
 * value out of range. */
uint32_t mix_preset_nodes(enum mix_preset p);

/* The mix for node `index` of a cluster of any size.  -EINVAL for a preset out of
 * range. */
int mix_node(enum mix_preset p, uint32_t index, struct mix_node *out);
/* Fills out[0..n): node i is mix_node(p, i). */
int mix_fill(enum mix_preset p, uint32_t n, struct mix_node *out);
/* How many of n nodes get `cores` cores under preset p (0 for a core count not in the
 * mix). */
uint32_t mix_count(enum mix_preset p, uint32_t n, uint32_t cores);

/* The speeds of n nodes as a list "1,0.0416667,…" that launcher_parse_speeds reads back
 * (one entry per node, so no cycling happens): written into buf of size len.  Returns
 * the length it needs (excluding the NUL, as snprintf), or -EINVAL for a bad preset. */
int mix_speed_list(enum mix_preset p, uint32_t n, char *buf, size_t len);

#endif
