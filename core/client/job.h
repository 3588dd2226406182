/*
 * job — submit a workload to a running cluster and, optionally, follow it to the end
 * and print the summary; the job files that let a later command name the job; opening
 * a cluster file with its key.  job_submit is shared by `jackdaw submit` and
 * `jackdaw run`; the job files, the workload digest and job_open_cluster also by
 * cancel, status, stop, trace and the console's launch (tui/session.c).
 *
 * Before submitting it tells the collector what the job is
 * (trace/collector/tclient.h), so the client library sits above trace/.  Functions that print return an exit code
 * (core/client/exitcode.h); the others 0 or a negative errno.
 */
#ifndef JACKDAW_JOB_H
#define JACKDAW_JOB_H

#include <stdbool.h>

#include "core/client/client.h"
#include "core/model/cluster.h"
#include "core/model/wfcommons.h"
#include "core/model/workload.h"

struct job_options {
    const struct cluster *cluster;
    const char *cluster_path; /* the job file goes beside it (for cancel), or NULL */
    const char *workload_path; /* for messages */
    const struct wfcommons_options *scale; /* what a WfCommons instance was read with, or
                                            * NULL (for the job file) */
    const struct workload *wl;
    enum submit_mode mode;
    bool wait;              /* follow to the end and summarise */
    bool json;              /* summary as one JSON object on stdout */
    bool quiet;             /* no progress line */
    const char *records;    /* records file, or NULL */
    double timeout_s;       /* give up following after this long; 0: never */
    /* With wait: once the job ends, its final outputs (the outputs of the done tasks that
     * no task reads) and the `keep` objects or tasks (ids, comma-separated) are fetched
     * into this directory (core/client/fetchout); NULL: none. */
    const char *outputs;
    const char *keep;
};
/* Checks --keep-object's comma-separated ids against the workload before anything runs:
 * 0, or EXIT_BAD_INPUT after a message naming the first unknown id. */
int job_check_keep(const char *who, const struct workload *wl, const char *keep);

/*
 * Job files: each submission leaves JOBS/JOB.json in the cluster's own jobs directory
 * beside its cluster file (cluster_owned_path: /x/a.json -> /x/a.jobs/, the default
 * /x/cluster.json -> /x/jobs/), with {"job": J, "workload": ABSOLUTE PATH, "tasks": N,
 * "submitted_ns": T}, and for a WfCommons instance the scales it was converted with
 * ("time_scale", "data_scale"), so that a later `jackdaw cancel TASK` or `attach`
 * reads the same workload and can name tasks by their ids.
 */
int job_file_write(const char *cluster_path, uint32_t job, const char *workload_path,
                   const struct wfcommons_options *scale, uint32_t tasks, int64_t submitted_ns);
/* Finds job `job` (0: the latest submitted), its workload path (owned) and, when
 * `scale` is not NULL, its scales (zero: none). */
int job_file_find(const char *cluster_path, uint32_t job, uint32_t *found, char **workload,
                  struct wfcommons_options *scale, char **cause);

/* Returns an exit code (core/client/exitcode.h) and prints its own errors, prefixed by `who`. */
int job_submit(const char *who, const struct job_options *o);

/* A followed job's outcome, added to its job file ("ended_ns", "done", "failed",
 * "cancelled", "makespan_s") by submit --wait and attach once its summary is out. */
struct summary;
int job_file_finish(const char *cluster_path, uint32_t job, const struct summary *s,
                    int64_t ended_ns);
/* A job file as `jackdaw jobs` lists it. */
struct job_entry {
    uint32_t job;
    char *workload;         /* owned */
    uint32_t tasks;
    int64_t submitted_ns;
    bool finished;          /* a client followed it to its end: the fields below hold */
    int64_t ended_ns;
    uint32_t done, failed, cancelled;
    double makespan_s;
};
/* Every job file of the cluster (none: 0 entries), in no order; 0 or -errno. */
int job_files_list(const char *cluster_path, struct job_entry **out, size_t *n);
void job_entries_free(struct job_entry *j, size_t n);

struct attach_options {
    const struct cluster *cluster;
    const char *cluster_path; /* where the job files are */
    uint32_t job;           /* 0: the latest submitted */
    bool json, quiet;
    const char *records;    /* records file, or NULL */
    double timeout_s;       /* 0: never */
};

/*
 * Attaches to a running job (jackdaw attach, submit --follow): finds its job file and
 * workload, asks every node to report the job's ends here from now on and to list
 * those its records say happened (client_attach), then follows the rest as --wait
 * does, with the same summary, records and exit codes.  The records of ends that
 * happened before carry what the metadata keeps: status, node and times, exit -1 for a
 * failure (its output and exit status went to the client that followed it then, and
 * are in the node's log).  Returns an exit code and prints its own errors.
 */
int job_attach(const char *who, const struct attach_options *o);

/* --task-timeout S of run and submit: *timeout_s = S, or 0 when `text` is NULL (not
 * given).  Returns 0, or EXIT_USAGE after printing why S is no time limit. */
int job_parse_task_timeout(const char *who, const char *text, double *timeout_s);
/* --retries N of run and submit: *retries = N, or -1 when `text` is NULL (not given; the
 * caller then leaves the workload's own).  Returns 0, or EXIT_USAGE after printing why. */
int job_parse_retries(const char *who, const char *text, int *retries);

/* Loads the cluster file (default path when NULL) and its key; prints errors. Returns
 * 0 or an exit code. */
int job_open_cluster(const char *who, const char **path, struct cluster *cl, struct auth_key *key);

/*
 * A command about one job of a cluster (cancel, get, logs): the cluster file and key
 * (job_open_cluster), then job `job` (0: the latest submitted) from its job file and its
 * workload read as it was submitted.  Returns 0 with *cl, *key, *wl, *found and *path
 * (owned) set, or an exit code after a message, with nothing to free.
 */
int job_open_job(const char *who, const char **cluster, uint32_t job, struct cluster *cl,
                 struct auth_key *key, struct workload *wl, uint32_t *found, char **path);

/* Frees what job_open_job gave. */
void job_close_job(struct cluster *cl, struct workload *wl, char *path);

/* BLAKE2b-128 of a workload file as 32 hex digits (the trace header's digest); "" and
 * a negative errno when it cannot be read (stdin). */
int job_workload_digest(const char *path, char hex[33]);

#endif
