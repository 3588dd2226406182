/*
 * sim_settings — what `jackdaw sim` is told of the cluster and the policy, kept as the
 * strings of its flags until one place turns them into a struct sim_config: the command
 * line's, a recorded run's (tools/cmd/sim_from.h) and each value of a --sweep are then
 * one kind of thing, merged flag by flag (sim_settings_merge) and parsed by the same
 * parsers, which refuse a bad value naming its flag whichever of the three it came from.
 *
 * The flags are run's where run has them, with run's parsers: --slots and --speeds
 * (core/client/launcher.h), --mode, the stealing flags and --placement (their entries
 * and checks are core/client/dataopts.h's), --bandwidth and --sample-ms; --nodes,
 * --latency, --seed and --engine are the simulator's own.  The other dataopts fields
 * (cache, memory, failures, a recorded run's emulated --latency) are only ever set from
 * a recorded run's header: the emulated latency adds to the simulated one, the rest
 * describes daemons the simulator does not run.
 *
 * Owns nothing: every string is borrowed (argv, a trace header).  Called by
 * tools/cmd/cmd_sim.c and tools/cmd/sim_from.c.
 */
#ifndef JACKDAW_SIM_SETTINGS_H
#define JACKDAW_SIM_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/client/dataopts.h"
#include "core/client/opt.h"
#include "core/sim/sim.h"
#include "core/sim/sim_sg.h"

/* NULL: not given (the default, or the recorded run's). */
struct sim_settings {
    const char *nodes, *slots, *speeds, *mode, *latency, *seed, *engine, *host_rate;
    struct dataopts data;       /* the policy flags, --bandwidth, --sample-ms */
};

/* Entries in a settings table: the simulator's own flags and the dataopts it models. */
#define SIM_SETTINGS_MAX_OPTS 32

/* The option table entries of s's flags, all OPT_STRING, in one fixed order whatever s
 * (so two tables line up entry by entry); returns how many were written to out. */
size_t sim_settings_opts(struct sim_settings *s, struct opt *out);

/* Every flag given in over replaces base's.  Returns how many did. */
size_t sim_settings_merge(struct sim_settings *base, struct sim_settings *over);

/* Whether over gives a flag that changes the simulated cluster or policy (anything but
 * --seed, --sample-ms and --engine). */
bool sim_settings_changes_run(struct sim_settings *over);

/* "--placement mdl --nodes 8": the flags over gives, for a summary line (malloc'd). */
char *sim_settings_describe(struct sim_settings *over);

/* The flag's value in s, by its name ("threshold"): where a sweep writes its values.
 * NULL when s has no such flag. */
const char **sim_settings_slot(struct sim_settings *s, const char *flag);

/* A simulation ready to run: the configuration and what it borrows. */
struct sim_plan {
    struct sim_config cfg;
    double *speeds;             /* owned, cfg.nodes entries, or NULL: all 1.0 */
    uint32_t *node_slots;       /* owned, cfg.nodes entries (--slots a,b,...), or NULL */
    const char *mode_name;      /* static: "hashed", "one", "roundrobin" */
    enum sim_engine engine;     /* which engine runs it (--engine) */
    struct dataopts data;       /* the flags for the trace header (data.words) */
};

/* Parses s over sim_config_default.  0, or -EINVAL with *cause (malloc'd) naming the
 * flag and its value. */
int sim_plan_build(struct sim_plan *p, const struct sim_settings *s, char **cause);
void sim_plan_fini(struct sim_plan *p);

#endif
