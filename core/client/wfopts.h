/*
 * wfopts — the flags that read a WfCommons instance (core/model/wfcommons.h), which
 * `import`, `run` and `submit` share: --time-scale, --data-scale, --command.  Owns the
 * option-table entries (WFOPTS_OPTS) and their check; the strings stay the caller's argv.
 */
#ifndef JACKDAW_WFOPTS_H
#define JACKDAW_WFOPTS_H

#include "core/client/opt.h"
#include "core/model/wfcommons.h"

#define WFOPTS_OPTS(o)                                                                          \
    {"time-scale", OPT_DOUBLE, &(o)->time_scale,                                                \
     "F  a WfCommons instance: multiply every runtime by F (1)"},                               \
    {"data-scale", OPT_DOUBLE, &(o)->size_scale,                                                \
     "F  a WfCommons instance: multiply every file size by F (1)"},                             \
    {"command", OPT_STRING, &(o)->command,                                                      \
     "CMD  a WfCommons instance: command tasks running CMD ({runtime}, {id}), not sleeps"}

/* Checks the scales (0, the default, means 1); prints "jackdaw WHO: …" and returns
 * nonzero when one is out of range. */
int wfopts_finish(const struct wfcommons_options *o, const char *who);

#endif
