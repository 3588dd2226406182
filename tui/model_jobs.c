/*
 * model jobs — see model_jobs.h.
 */
#include "tui/model_jobs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

void model_jobs_init(struct model_jobs *j)
{
    memset(j, 0, sizeof *j);
}

void model_jobs_fini(struct model_jobs *j)
{
    free(j->jobs);
    free(j->rows);
    free(j->first_row);
    free(j->nrows);
    free(j->ended);
    model_jobs_init(j);
}

void model_jobs_reset(struct model_jobs *j)
{
    j->njobs = 0;
    j->nended = 0;
}

static bool end_logged(const struct model_jobs *j, uint32_t id)
{
    for (size_t i = 0; i < j->nended; i++)
        if (j->ended[i] == id)
            return true;
    return false;
}

/* Said once, at the job's last end, so that the log reads in time order whatever the
 * moment the tally that showed it arrived. */
static void log_end(struct model_jobs *j, struct model_log *log, const struct model_job *job)
{
    if (end_logged(j, job->id))
        return;
    j->ended = xgrow(j->ended, &j->cap_ended, j->nended + 1, sizeof *j->ended);
    j->ended[j->nended++] = job->id;
    char body[200];
    double window = job->submit_ns >= 0 && job->end_ns > job->submit_ns
                        ? (double)(job->end_ns - job->submit_ns) / 1e9 : 0.0;
    /* Workloads are named by path: the file's name, cut to keep the figures on the line. */
    const char *slash = strrchr(job->name, '/');
    const char *name = slash && slash[1] ? slash + 1 : job->name;
    snprintf(body, sizeof body, "job %u%s%.40s%s finished: %" PRIu64 " done, %" PRIu64
             " failed, %" PRIu64 " cancelled in %.3f s", job->id, name[0] ? " (" : "", name,
             name[0] ? ")" : "", job->done, job->failed, job->cancelled, window);
    model_log_text(log, job->end_ns, job->id, body);
}

void model_jobs_set(struct model_jobs *j, struct model_log *log, const struct wire_job_tally *t,
                    uint32_t n)
{
    if (n > WIRE_MAX_JOBS)
        n = WIRE_MAX_JOBS;
    size_t rows = 0;
    for (uint32_t i = 0; i < n; i++)
        rows += t[i].nnodes;
    j->jobs = xgrow(j->jobs, &j->cap_jobs, (size_t)n + 1, sizeof *j->jobs);
    j->first_row = xrealloc(j->first_row, j->cap_jobs * sizeof *j->first_row);
    j->nrows = xrealloc(j->nrows, j->cap_jobs * sizeof *j->nrows);
    j->rows = xgrow(j->rows, &j->cap_rows, rows + 1, sizeof *j->rows);
    rows = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct wire_job_tally *w = &t[i];
        struct model_job *job = &j->jobs[i];
        memset(job, 0, sizeof *job);
        job->id = w->job;
        snprintf(job->name, sizeof job->name, "%s", w->name);
        job->total = w->tasks;
        job->done = w->done;
        job->failed = w->failed;
        job->cancelled = w->cancelled;
        job->running = w->running;
        job->submit_ns = w->submit_ns;
        job->end_ns = w->end_ns;
        job->busy_s = (double)w->busy_ns / 1e9;
        job->finished = job->total && job->done + job->failed + job->cancelled >= job->total &&
                        !job->running;
        job->state = !job->finished ? "running"
                     : job->failed || job->cancelled ? "failed" : "done";
        if (w->nnodes)
            memcpy(&j->rows[rows], w->nodes, w->nnodes * sizeof *w->nodes);
        j->first_row[i] = (uint32_t)rows;
        j->nrows[i] = w->nnodes;
        rows += w->nnodes;
        if (job->finished && job->end_ns >= 0)
            log_end(j, log, job);
    }
    j->njobs = n;
}

void model_jobs_derive(struct model_jobs *j, int64_t now_ns, uint32_t slots)
{
    for (uint32_t i = 0; i < j->njobs; i++) {
        struct model_job *job = &j->jobs[i];
        int64_t to = job->finished ? job->end_ns : now_ns;
        job->elapsed_s = job->submit_ns >= 0 && to > job->submit_ns
                             ? (double)(to - job->submit_ns) / 1e9 : 0.0;
        uint64_t ended = job->done + job->failed + job->cancelled;
        job->progress = job->total ? (double)ended / (double)job->total : -1.0;
        if (job->progress > 1)
            job->progress = 1;
        double capacity = (double)slots * job->elapsed_s;
        job->efficiency = capacity > 0 ? job->busy_s / capacity : 0.0;
    }
}

static int64_t index_of(const struct model_jobs *j, int64_t id)
{
    for (uint32_t i = 0; i < j->njobs; i++)
        if ((int64_t)j->jobs[i].id == id)
            return i;
    return -1;
}

const struct model_job *model_jobs_find(const struct model_jobs *j, int64_t id)
{
    int64_t i = index_of(j, id);
    return i < 0 ? NULL : &j->jobs[i];
}

const struct wire_job_node *model_jobs_node(const struct model_jobs *j, int64_t id,
                                            int32_t node)
{
    int64_t i = index_of(j, id);
    if (i < 0)
        return NULL;
    const struct wire_job_node *rows = &j->rows[j->first_row[i]];
    uint32_t lo = 0, hi = j->nrows[i];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (rows[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < j->nrows[i] && rows[lo].node == node ? &rows[lo] : NULL;
}
