/*
 * jobtally — see jobtally.h.
 *
 * Jobs are few (a cluster runs a handful at a time) and kept in an array in submit
 * order; a job's node rows are a sorted array searched by bisection, as nodes are tens
 * to thousands.  Running attempts are a map from task key to where and when they
 * started, so an end finds its start in O(1) whatever the job's size.
 */
#include "trace/format/jobtally.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/search.h"
#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"

/* Jobs kept: beyond this the oldest is forgotten (a STATE sends WIRE_MAX_JOBS of them). */
#define KEPT_JOBS 1024

struct attempt {
    int32_t node;
    int64_t start_ns;
};

struct tally_job {
    struct wire_job_tally t;      /* its nodes pointer is set on export */
    struct wire_job_node *nodes;  /* owned; t.nnodes, by node id */
    size_t cap_nodes;
};

struct jobtally {
    struct tally_job *jobs;       /* owned; njobs, in submit (or first seen) order */
    size_t njobs, cap_jobs;
    struct u64map running;        /* task key -> owned struct attempt */
    struct wire_job_tally *out;   /* owned export arrays */
    size_t cap_out;
    struct wire_job_node *out_nodes;
    size_t cap_out_nodes;
};

struct jobtally *jobtally_create(void)
{
    struct jobtally *t = xcalloc(1, sizeof *t);
    u64map_init(&t->running);
    return t;
}

static void forget_running(struct jobtally *t)
{
    uint64_t key;
    void *value;
    for (size_t pos = 0; (pos = u64map_next(&t->running, pos, &key, &value)) != 0;)
        free(value);
    u64map_fini(&t->running);
    u64map_init(&t->running);
}

void jobtally_reset(struct jobtally *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->njobs; i++)
        free(t->jobs[i].nodes);
    t->njobs = 0;
    forget_running(t);
}

void jobtally_destroy(struct jobtally *t)
{
    if (!t)
        return;
    jobtally_reset(t);
    u64map_fini(&t->running);
    free(t->jobs);
    free(t->out);
    free(t->out_nodes);
    free(t);
}

static struct tally_job *job_get(struct jobtally *t, uint32_t job)
{
    for (size_t i = t->njobs; i > 0; i--)
        if (t->jobs[i - 1].t.job == job)
            return &t->jobs[i - 1];
    if (t->njobs == KEPT_JOBS) {
        /* Its running attempts stay in the map and end as unknown tasks: harmless. */
        free(t->jobs[0].nodes);
        memmove(t->jobs, t->jobs + 1, (t->njobs - 1) * sizeof *t->jobs);
        t->njobs--;
    }
    t->jobs = xgrow(t->jobs, &t->cap_jobs, t->njobs + 1, sizeof *t->jobs);
    struct tally_job *j = &t->jobs[t->njobs++];
    memset(j, 0, sizeof *j);
    j->t.job = job;
    j->t.submit_ns = -1;
    j->t.end_ns = -1;
    return j;
}

static struct wire_job_node *node_row(struct tally_job *j, int32_t node)
{
    size_t lo = SEARCH_BY(j->nodes, j->t.nnodes, node, node);
    if (lo < j->t.nnodes && j->nodes[lo].node == node)
        return &j->nodes[lo];
    j->nodes = xgrow(j->nodes, &j->cap_nodes, j->t.nnodes + 1, sizeof *j->nodes);
    memmove(&j->nodes[lo + 1], &j->nodes[lo], (j->t.nnodes - lo) * sizeof *j->nodes);
    j->t.nnodes++;
    j->nodes[lo] = (struct wire_job_node){.node = node};
    return &j->nodes[lo];
}

void jobtally_submit(struct jobtally *t, uint32_t job, uint32_t tasks, const char *name,
                     int64_t time_ns)
{
    struct tally_job *j = job_get(t, job);
    if (tasks)
        j->t.tasks = tasks;
    if (name && name[0])
        snprintf(j->t.name, sizeof j->t.name, "%s", name);
    if (time_ns >= 0 && (j->t.submit_ns < 0 || time_ns < j->t.submit_ns))
        j->t.submit_ns = time_ns;
}

/* Ends the attempt of key that is running, if one is: its run time counts where it ran. */
static void attempt_end(struct jobtally *t, uint64_t key, int64_t time_ns)
{
    struct attempt *a = u64map_del(&t->running, key);
    if (!a)
        return;
    struct tally_job *j = job_get(t, (uint32_t)(key >> 32));
    struct wire_job_node *row = node_row(j, a->node);
    int64_t ran = time_ns > a->start_ns ? time_ns - a->start_ns : 0;
    row->busy_ns += ran;
    j->t.busy_ns += ran;
    if (row->running)
        row->running--;
    if (j->t.running)
        j->t.running--;
    free(a);
}

void jobtally_event(struct jobtally *t, const struct trace_event *ev)
{
    if (ev->task == TRACE_NO_TASK)
        return;
    if (ev->kind != TRACE_JOB_SUBMIT && (ev->node < 0 || ev->node >= WIRE_MAX_NODES))
        return; /* a task event of no node this cluster can have */
    uint32_t job = (uint32_t)(ev->task >> 32);
    switch (ev->kind) {
    case TRACE_JOB_SUBMIT:
        jobtally_submit(t, job, ev->count > 0 && ev->count <= UINT32_MAX ? (uint32_t)ev->count : 0,
                        NULL, ev->time_ns);
        return;
    case TRACE_TASK_START: {
        /* Started again elsewhere (handed on from a dead node): the old attempt is over. */
        attempt_end(t, ev->task, ev->time_ns);
        struct attempt *a = xmalloc(sizeof *a);
        *a = (struct attempt){.node = ev->node, .start_ns = ev->time_ns};
        u64map_put(&t->running, ev->task, a);
        struct tally_job *j = job_get(t, job);
        node_row(j, ev->node)->running++;
        j->t.running++;
        return;
    }
    case TRACE_TASK_RETRY:
        attempt_end(t, ev->task, ev->time_ns);
        return;
    case TRACE_TASK_END: {
        attempt_end(t, ev->task, ev->time_ns);
        struct tally_job *j = job_get(t, job);
        if (ev->status == TASK_DONE) {
            j->t.done++;
            node_row(j, ev->node)->done++;
        } else if (ev->status == TASK_FAILED) {
            j->t.failed++;
        } else if (ev->status == TASK_CANCELLED) {
            j->t.cancelled++;
        } else {
            return;
        }
        if (ev->time_ns > j->t.end_ns)
            j->t.end_ns = ev->time_ns;
        return;
    }
    default:
        return;
    }
}

const struct wire_job_tally *jobtally_export(struct jobtally *t, uint32_t *njobs)
{
    size_t from = t->njobs > WIRE_MAX_JOBS ? t->njobs - WIRE_MAX_JOBS : 0;
    size_t n = t->njobs - from, rows = 0;
    t->out = xgrow(t->out, &t->cap_out, n + 1, sizeof *t->out);
    for (size_t i = 0; i < n; i++) {
        size_t r = t->jobs[from + i].t.nnodes;
        rows += r < WIRE_MAX_JOB_NODES - rows ? r : WIRE_MAX_JOB_NODES - rows;
    }
    t->out_nodes = xgrow(t->out_nodes, &t->cap_out_nodes, rows + 1, sizeof *t->out_nodes);
    rows = 0;
    for (size_t i = 0; i < n; i++) {
        const struct tally_job *j = &t->jobs[from + i];
        struct wire_job_tally *o = &t->out[i];
        *o = j->t;
        uint32_t keep = j->t.nnodes;
        if (keep > WIRE_MAX_JOB_NODES - rows)
            keep = (uint32_t)(WIRE_MAX_JOB_NODES - rows);
        if (keep)
            memcpy(&t->out_nodes[rows], j->nodes, keep * sizeof *j->nodes);
        o->nnodes = keep;
        o->nodes = keep ? &t->out_nodes[rows] : NULL;
        rows += keep;
    }
    *njobs = (uint32_t)n;
    return t->out;
}
