/*
 * mix — see mix.h.
 */
#include "core/model/mix.h"

#include <errno.h>
#include <stdio.h>
#include <strings.h>

/* Cores of node i mod 8.  Every prefix of this order holds each core count within one
 * node of its share of the 2:1:1:1:1:2 proportion (checked by test_mix), so that a
 * cluster of any size, not only a multiple of 8, gets a faithful mix. */
static const uint32_t pattern[8] = {24, 1, 8, 2, 16, 4, 24, 1};

static const char *const names[MIX_PRESET_COUNT] = {"none", "C1", "C2", "C3", "C4", "C5"};

int mix_parse(const char *name)
{
    if (!name)
        return -EINVAL;
    for (int i = 0; i < MIX_PRESET_COUNT; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -EINVAL;
}

const char *mix_name(enum mix_preset p)
{
    return (unsigned)p < MIX_PRESET_COUNT ? names[p] : NULL;
}

uint32_t mix_preset_nodes(enum mix_preset p)
{
    if (p <= MIX_NONE || p >= MIX_PRESET_COUNT)
        return 0;
    return 8u << (p - MIX_C1);
}

int mix_node(enum mix_preset p, uint32_t index, struct mix_node *out)
{
    if ((unsigned)p >= MIX_PRESET_COUNT)
        return -EINVAL;
    uint32_t cores = p == MIX_NONE ? MIX_MAX_CORES : pattern[index % 8];
    out->cores = cores;
    out->speed = (double)cores / MIX_MAX_CORES;
    out->slots = cores;
    return 0;
}

int mix_fill(enum mix_preset p, uint32_t n, struct mix_node *out)
{
    if ((unsigned)p >= MIX_PRESET_COUNT)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++)
        mix_node(p, i, &out[i]);
    return 0;
}

uint32_t mix_count(enum mix_preset p, uint32_t n, uint32_t cores)
{
    if ((unsigned)p >= MIX_PRESET_COUNT)
        return 0;
    if (p == MIX_NONE)
        return cores == MIX_MAX_CORES ? n : 0;
    uint32_t per_block = 0, in_tail = 0;
    for (uint32_t i = 0; i < 8; i++) {
        per_block += pattern[i] == cores;
        in_tail += pattern[i] == cores && i < n % 8;
    }
    return n / 8 * per_block + in_tail;
}

int mix_speed_list(enum mix_preset p, uint32_t n, char *buf, size_t len)
{
    if ((unsigned)p >= MIX_PRESET_COUNT)
        return -EINVAL;
    /* The launcher cycles a speed list over the nodes, and the mix repeats every 8
     * nodes: min(n, 8) entries describe the whole cluster. */
    uint32_t entries = p == MIX_NONE ? 1 : (n < 8 ? n : 8);
    size_t need = 0;
    for (uint32_t i = 0; i < entries; i++) {
        struct mix_node m;
        mix_node(p, i, &m);
        int w = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0, "%s%.6g",
                         i ? "," : "", m.speed);
        if (w < 0)
            return -EINVAL;
        need += (size_t)w;
    }
    if (len && need >= len)
        buf[len - 1] = '\0';
    if (entries == 0 && len)
        buf[0] = '\0';
    return (int)need;
}
