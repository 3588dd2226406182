/*
 * placement — see placement.h.
 */
#include "core/policy/placement.h"

struct placement_decision placement_decide(const struct placement_input *in)
{
    struct placement_decision d = {.queue = in->stealable ? PLACE_SREADY : PLACE_LREADY};
    return d;
}
