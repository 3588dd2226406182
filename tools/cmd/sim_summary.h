/*
 * sim_summary — one simulation of `jackdaw sim` and its summary (tools/cmd/sim_summary.c).
 * Called by tools/cmd/cmd_sim.c for a plain run, a what-if's runs and a sweep's.
 */
#ifndef JACKDAW_SIM_SUMMARY_H
#define JACKDAW_SIM_SUMMARY_H

#include <stdint.h>

#include <jansson.h>

#include "core/model/workload.h"
#include "core/sim/sim.h"
#include "tools/cmd/sim_settings.h"

/* The workload a simulation runs and what its trace header says of it (borrowed). */
struct sim_input {
    const struct workload *wl;
    const char *path;           /* for messages and the header's workload name */
    const char *digest;         /* 32 hex digits, or "" */
    double work_s;              /* > 0: the work efficiency counts (sim_summary.work_s) */
};

/* What the summary says; the shared figures are named and computed as run's. */
struct sim_summary {
    uint32_t tasks, nodes, slots, total_slots;
    const char *mode;           /* borrowed from the plan */
    const double *speeds;       /* borrowed from the plan; NULL: all 1.0 */
    const uint32_t *node_slots; /* borrowed from the plan; NULL: `slots` each */
    double work_s;              /* > 0: the work efficiency counts (a recorded run's, as
                                   report counts it), else the simulated tasks' */
    double ideal_s, efficiency, throughput_tps, avg_time_per_task_per_cpu_s;
    double wall_s, events_per_s;
    enum sim_engine engine;     /* the plan's */
    struct sim_result r;
};

/*
 * Runs in under p, writing its trace to `trace` (a new file) when non-NULL.  Returns an
 * exit code, having printed why when it is not 0: EXIT_USAGE for what the configuration
 * alone is refused for (or an existing trace), EXIT_BAD_INPUT for what the workload adds,
 * EXIT_INTERNAL when the trace cannot be written or the engine fails.  s is filled on 0
 * and on EXIT_RUN_FAILED (tasks not done: the caller says so, after the summary).
 */
int sim_summary_run(const struct sim_input *in, struct sim_plan *p, const char *trace,
                    struct sim_summary *s);

void sim_summary_print(const struct sim_summary *s, const char *trace);
/* The summary as `run --json` spells it, plus the engine's figures (a new object). */
json_t *sim_summary_json(const struct sim_summary *s, const struct sim_config *cfg);
/* Prints o on one line and drops the reference. */
void sim_summary_print_json(json_t *o);

#endif
