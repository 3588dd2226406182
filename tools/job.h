/*
 * job — submit a workload to a running cluster and, optionally, follow it to the end
 * and print the summary.  Shared by `jackdaw submit` and `jackdaw run`.
 */
#ifndef JACKDAW_JOB_H
#define JACKDAW_JOB_H

#include <stdbool.h>

#include "core/model/cluster.h"
#include "core/model/workload.h"
#include "core/net/client.h"

struct job_options {
    const struct cluster *cluster;
    const char *workload_path; /* for messages */
    const struct workload *wl;
    enum submit_mode mode;
    bool wait;              /* follow to the end and summarise */
    bool json;              /* summary as one JSON object on stdout */
    bool quiet;             /* no progress line */
    const char *records;    /* records file, or NULL */
    double timeout_s;       /* give up following after this long; 0: never */
};

/* Returns an exit code (tools/cmd.h) and prints its own errors, prefixed by `who`. */
int job_submit(const char *who, const struct job_options *o);

/* Turns SIGINT, SIGTERM and SIGHUP into a flag for the rest of the process's life, so
 * that a command that started a cluster can stop it before exiting; job_submit checks
 * the flag.  job_signal_pending returns the last signal caught, or 0. */
void job_catch_signals(void);
int job_signal_pending(void);

/* Loads the cluster file (default path when NULL) and its key; prints errors. Returns
 * 0 or an exit code. */
int job_open_cluster(const char *who, const char **path, struct cluster *cl, struct auth_key *key);

#endif
