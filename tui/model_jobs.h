/*
 * model jobs — the console's job list: the latest per-job tallies (model_jobs), what
 * each job's figures come to at a time (progress, elapsed, efficiency, state), and the
 * selected job's share of each node.
 *
 * A job's window is its first submit to its last end once every task has ended, else to
 * now: the definition `report` uses for a makespan, so the console's elapsed stops when
 * the job does.  Efficiency is busy task-seconds over the cluster's slots times that
 * window.
 *
 * Internal to tui/model.c: a struct model embeds one.  Pure, one thread.
 */
#ifndef JACKDAW_TUI_MODEL_JOBS_H
#define JACKDAW_TUI_MODEL_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "tui/model.h"
#include "tui/model_log.h"

struct model_jobs {
    struct model_job *jobs;       /* owned; njobs, in submit order */
    uint32_t njobs;
    struct wire_job_node *rows;   /* owned: every job's node rows, by job then node id */
    uint32_t *first_row;          /* owned; njobs: where each job's rows start */
    uint32_t *nrows;              /* owned; njobs */
    size_t cap_jobs, cap_rows;
    uint32_t *ended;              /* owned: jobs whose end was logged (kept past the list) */
    size_t nended, cap_ended;
};

void model_jobs_init(struct model_jobs *j);
void model_jobs_fini(struct model_jobs *j);
void model_jobs_reset(struct model_jobs *j);
/* Takes the tallies (copied; at most WIRE_MAX_JOBS); logs a job's end once. */
void model_jobs_set(struct model_jobs *j, struct model_log *log, const struct wire_job_tally *t,
                    uint32_t n);
/* Derives each job's figures at now_ns for a cluster of slots slots. */
void model_jobs_derive(struct model_jobs *j, int64_t now_ns, uint32_t slots);
/* The job with this id, or NULL. */
const struct model_job *model_jobs_find(const struct model_jobs *j, int64_t id);
/* The node row of job id on node, or NULL when the node ran none of its tasks. */
const struct wire_job_node *model_jobs_node(const struct model_jobs *j, int64_t id,
                                            int32_t node);

#endif
