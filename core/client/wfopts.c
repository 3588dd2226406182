/*
 * wfopts — see wfopts.h.
 */
#include "core/client/wfopts.h"

#include <stdio.h>

int wfopts_finish(const struct wfcommons_options *o, const char *who)
{
    if (!(o->time_scale >= 0 && o->time_scale <= 1e6) ||
        !(o->size_scale >= 0 && o->size_scale <= 1e6)) {
        fprintf(stderr, "jackdaw %s: --time-scale and --data-scale are numbers in (0, 1e6]\n",
                who);
        return 1;
    }
    return 0;
}
