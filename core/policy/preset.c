/*
 * preset — the named stealing policies (see preset.h for the table).  Pure; called by
 * core/client/dataopts.c and the unit tests.
 */
#include "core/policy/preset.h"

#include <errno.h>
#include <string.h>

struct preset {
    const char *name;
    enum steal_mode mode;
    enum steal_starvation starvation;
    enum steal_victims victims;
    uint32_t victims_k;
    enum steal_amount_kind amount;
    enum steal_info info;
    bool wait_guard;
    enum placement_policy placement;
};

static const struct preset presets[] = {
    {"daws", STEAL_ADAPTIVE, STEAL_STARVE_READY, STEAL_VICTIMS_SQRT, 1, STEAL_AMOUNT_HALF,
     STEAL_INFO_LOAD_QUERY, false, PLACEMENT_FLDS},
    {"a2ws", STEAL_ADAPTIVE, STEAL_STARVE_PREEMPTIVE, STEAL_VICTIMS_A2WS, 1, STEAL_AMOUNT_A2WS,
     STEAL_INFO_RING, false, PLACEMENT_WS},
    /* Paper 004 §3: random victims (after Perarnau et al.), one asked at a time. */
    {"parsec", STEAL_ADAPTIVE, STEAL_STARVE_SUCCESSORS, STEAL_VICTIMS_RANDOM, 1,
     STEAL_AMOUNT_HALF, STEAL_INFO_LOAD_QUERY, true, PLACEMENT_WS},
    {"random1", STEAL_RANDOM1, STEAL_STARVE_READY, STEAL_VICTIMS_RANDOM, 1, STEAL_AMOUNT_HALF,
     STEAL_INFO_LOAD_QUERY, false, PLACEMENT_WS},
    {"none", STEAL_NONE, STEAL_STARVE_READY, STEAL_VICTIMS_SQRT, 1, STEAL_AMOUNT_HALF,
     STEAL_INFO_LOAD_QUERY, false, PLACEMENT_WS},
    {"daws+a2ws", STEAL_ADAPTIVE, STEAL_STARVE_PREEMPTIVE, STEAL_VICTIMS_A2WS, 1,
     STEAL_AMOUNT_A2WS, STEAL_INFO_RING, false, PLACEMENT_FLDS},
    /* Paper 001 §4: the leader hands out one task per request of each idle worker slot. */
    {"lw", STEAL_ADAPTIVE, STEAL_STARVE_READY, STEAL_VICTIMS_LEADER, 1, STEAL_AMOUNT_SINGLE,
     STEAL_INFO_LOAD_QUERY, false, PLACEMENT_WS},
    /* Assis et al. 2019: an idle holder of the token steals half of the most loaded. */
    {"ctws", STEAL_ADAPTIVE, STEAL_STARVE_READY, STEAL_VICTIMS_TOKEN, 1, STEAL_AMOUNT_HALF,
     STEAL_INFO_TOKEN, false, PLACEMENT_WS},
};

int preset_apply(const char *name, struct steal_params *s, struct placement_params *p)
{
    if (!name || !s || !p)
        return -EINVAL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const struct preset *x = &presets[i];
        if (strcmp(name, x->name) != 0)
            continue;
        s->mode = x->mode;
        s->starvation = x->starvation;
        s->victims = x->victims;
        s->victims_k = x->victims_k;
        s->amount = x->amount;
        s->info = x->info;
        s->wait_guard = x->wait_guard;
        p->policy = x->placement;
        return 0;
    }
    return -EINVAL;
}

const char *preset_names(void)
{
    return "daws, a2ws, parsec, random1, none, daws+a2ws, lw, ctws";
}
