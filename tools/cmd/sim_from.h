/*
 * sim_from — a recorded run rebuilt for the simulator (`jackdaw sim --from TRACE`, issue
 * 20's what-if): from the trace, its cluster (the header's nodes: slots and speeds), the
 * flags its daemons ran with (config.node_args), the submission mode its job's
 * JOB_SUBMIT records (else, in a simulated trace of before that, the header's; else
 * hashed, as `run` submits by default; a recorded data-mode run is refused, the
 * simulator not modelling it), and the figures `jackdaw report` gives it (tools/report/analysis.h, with the
 * workload's declared durations as report counts them); from the workload file the
 * header names (or --workload), checked against the header's digest, its tasks with the
 * durations they were measured to take.
 *
 * A task's measured duration is the time from TASK_START to TASK_END of the run that
 * ended it DONE, times the speed of the node it ran on: the simulator divides by the
 * speed again.  Command tasks become sleep tasks of that duration (the simulator runs
 * sleeps only).  A task that did not end DONE keeps the workload's own duration; a
 * command that did not, and declares none, gets the mean measured duration.
 *
 * The recorded configuration is handed back as the strings a command line would give
 * (struct sim_settings, tools/cmd/sim_settings.h), so that the command parses, merges and
 * sweeps it as it does its own flags.
 *
 * Owns the workload, the settings' strings and the header they point into.  Return
 * convention: 0 or a negative errno with *cause (malloc'd, naming the trace or the
 * workload): -ENOTSUP for a recorded run the simulator cannot rebuild (submitted with
 * --mode data), -ENOENT for a missing file, -EINVAL for a workload that is not the run's,
 * -EBADMSG for a trace that does not read or records no mode the client knows.
 */
#ifndef JACKDAW_SIM_FROM_H
#define JACKDAW_SIM_FROM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model/workload.h"
#include "tools/cmd/sim_settings.h"

struct sim_recorded {
    char *workload_path;        /* owned: the file read */
    char digest[33];            /* its digest, as job_workload_digest gives it */
    struct sim_settings settings; /* the recorded run's; strings owned here */
    bool mode_recorded;         /* false: the trace does not say, hashed assumed */
    bool simulated;             /* the trace is itself a simulated run's */
    struct workload wl;         /* the tasks with their measured durations, all sleeps */
    uint32_t measured;          /* tasks whose duration the trace measured */
    uint32_t kept;              /* tasks that kept the workload's duration */
    uint32_t guessed;           /* commands that got the mean measured duration */
    /* The work of the run as report counts it (declared sleeps, measured commands), at
     * speed 1: what every efficiency of `sim --from` is computed against. */
    double work_s;
    /* What `jackdaw report` says of the recorded run. */
    uint64_t tasks, tasks_done;
    double makespan_s, efficiency, throughput_tps, ideal_s;
    double bytes_moved, tasks_pushed, steals_ok, steals_tried, tasks_stolen;

    /* private: what the settings point into */
    void *header;               /* json_t *, owned */
    char *text[5];              /* owned strings: nodes, slots, speeds, latency, seed */
};

/* Rebuilds the recorded run of trace; workload NULL: the one the header names (as it
 * stands, else beside the trace). */
int sim_from_load(struct sim_recorded *rec, const char *trace, const char *workload,
                  char **cause);
void sim_from_fini(struct sim_recorded *rec);

#endif
