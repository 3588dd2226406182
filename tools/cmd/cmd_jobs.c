/*
 * cmd_jobs — `jackdaw jobs [--cluster FILE] [--json]`: the cluster's jobs, one line each,
 * as `squeue`/`sacct` or HyperQueue's `hq job list` list them.
 *
 * Two sources: the job files every submission leaves beside the cluster file (workload,
 * size, submit time, and once a client followed the job to its end, its outcome:
 * core/client/job.c) and the nodes' per-job counts of ended tasks (their statistics).
 * A job the nodes still count is running, or ended unfollowed; a job followed to its end
 * has its recorded outcome (the nodes forget a job once its summary is out).
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/client/client.h"
#include "core/client/follow.h"
#include "core/client/job.h"
#include "tools/cmd/cmd.h"

static int jobs_main(int argc, char **argv);

const struct cmd cmd_jobs = {
    .name = "jobs",
    .usage = "[--cluster FILE] [--json]",
    .summary = "list the cluster's jobs: state, tasks ended, submit and end times",
    .main = jobs_main,
};

struct row {
    struct job_entry e;     /* from the job file; workload NULL when there is none */
    bool counted;           /* some node counts its tasks */
    uint32_t total, done, failed, cancelled; /* the nodes' counts */
};

static struct row *row_of(struct row **rows, size_t *n, size_t *cap, uint32_t job)
{
    for (size_t i = 0; i < *n; i++)
        if ((*rows)[i].e.job == job)
            return &(*rows)[i];
    *rows = xgrow(*rows, cap, *n + 1, sizeof **rows);
    struct row *r = &(*rows)[(*n)++];
    memset(r, 0, sizeof *r);
    r->e.job = job;
    return r;
}

static const char *state_of(const struct row *r)
{
    if (r->counted) {
        uint32_t ended = r->done + r->failed + r->cancelled;
        return ended < r->total ? "running" : r->failed || r->cancelled ? "failed" : "done";
    }
    if (r->e.finished)
        return r->e.failed || r->e.cancelled ? "failed" : "done";
    /* Neither counted by a node nor followed to its end: forgotten before anyone read its
     * outcome (a client interrupted after the end), or its nodes are gone. */
    return "unknown";
}

static int by_submit(const void *pa, const void *pb)
{
    const struct row *a = pa, *b = pb;
    if (a->e.submitted_ns != b->e.submitted_ns)
        return a->e.submitted_ns < b->e.submitted_ns ? -1 : 1;
    return (a->e.job > b->e.job) - (a->e.job < b->e.job);
}

static const char *base_name(const char *path)
{
    if (!path)
        return "?";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int jobs_main(int argc, char **argv)
{
    const char *cluster = NULL;
    bool json = false;
    struct opt opts[] = {
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {"json", OPT_FLAG, &json, "  one JSON object: {\"jobs\": [...]}"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_jobs, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct cluster cl;
    struct auth_key key;
    rc = job_open_cluster("jobs", &cluster, &cl, &key);
    if (rc)
        return rc;

    struct row *rows = NULL;
    size_t n = 0, cap = 0;
    struct job_entry *files;
    size_t nfiles;
    if (job_files_list(cluster, &files, &nfiles) < 0)
        fprintf(stderr, "jackdaw jobs: warning: cannot read the job files beside '%s'\n", cluster);
    else {
        for (size_t i = 0; i < nfiles; i++) {
            struct row *r = row_of(&rows, &n, &cap, files[i].job);
            r->e = files[i];
            files[i].workload = NULL; /* moved into the row */
        }
        job_entries_free(files, nfiles);
    }

    struct client *c = client_create(&cl, &key, NULL);
    char *cause = NULL, *unreached = NULL;
    struct proto_stats *st = xcalloc(cl.count, sizeof *st);
    bool *got = xcalloc(cl.count, sizeof *got);
    (void)client_connect(c, 5000, &unreached);
    client_stats_some(c, st, got, 5000, &cause);
    uint32_t answered = 0;
    for (uint32_t i = 0; i < cl.count; i++) {
        answered += got[i];
        for (uint32_t k = 0; got[i] && k < st[i].njobs; k++) {
            const struct proto_job_count *j = &st[i].jobs[k];
            struct row *r = row_of(&rows, &n, &cap, j->job);
            r->counted = true;
            if (j->tasks > r->total)
                r->total = j->tasks;
            r->done += j->done;
            r->failed += j->failed;
            r->cancelled += j->cancelled;
        }
    }
    int code = 0;
    if (!answered) {
        fprintf(stderr, "jackdaw jobs: %s; states from the job files only\n",
                unreached ? unreached : cause ? cause : "no node answered");
        code = EXIT_CLUSTER;
    }
    if (n)
        qsort(rows, n, sizeof *rows, by_submit);

    json_t *arr = json ? json_array() : NULL;
    if (!json)
        printf("%-10s %-24s %-8s %7s %7s %7s %7s  %-8s  %-8s  %s\n", "JOB", "WORKLOAD", "STATE",
               "DONE", "FAILED", "CANCEL", "TOTAL", "SUBMIT", "END", "MAKESPAN");
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        uint32_t total = r->counted ? r->total : r->e.tasks;
        uint32_t done = r->counted ? r->done : r->e.done;
        uint32_t failed = r->counted ? r->failed : r->e.failed;
        uint32_t cancelled = r->counted ? r->cancelled : r->e.cancelled;
        char sub[16] = "-", end[16] = "-", mk[32] = "-";
        if (r->e.submitted_ns > 0)
            follow_clock_time(r->e.submitted_ns, sub, sizeof sub);
        if (r->e.finished) {
            follow_clock_time(r->e.ended_ns, end, sizeof end);
            snprintf(mk, sizeof mk, "%.3f s", r->e.makespan_s);
        }
        if (json) {
            json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:i, s:i, s:i}", "job",
                                  (json_int_t)r->e.job, "workload",
                                  r->e.workload ? r->e.workload : "", "state", state_of(r),
                                  "done", (int)done, "failed", (int)failed, "cancelled",
                                  (int)cancelled, "tasks", (int)total);
            json_object_set_new(o, "submitted_ns", r->e.submitted_ns > 0
                                                       ? json_integer(r->e.submitted_ns)
                                                       : json_null());
            json_object_set_new(o, "ended_ns", r->e.finished ? json_integer(r->e.ended_ns)
                                                             : json_null());
            json_object_set_new(o, "makespan_s", r->e.finished ? json_real(r->e.makespan_s)
                                                               : json_null());
            json_array_append_new(arr, o);
        } else {
            printf("%-10" PRIu32 " %-24.24s %-8s %7u %7u %7u %7u  %-8s  %-8s  %s\n", r->e.job,
                   base_name(r->e.workload), state_of(r), done, failed, cancelled, total, sub,
                   end, mk);
        }
    }
    if (json) {
        json_t *o = json_pack("{s:o}", "jobs", arr);
        char *text = json_dumps(o, JSON_COMPACT);
        printf("%s\n", text);
        free(text);
        json_decref(o);
    } else if (!n) {
        printf("(no jobs)\n");
    }
    for (size_t i = 0; i < n; i++)
        free(rows[i].e.workload);
    free(rows);
    for (uint32_t i = 0; i < cl.count; i++)
        proto_stats_fini(&st[i]);
    free(st);
    free(got);
    free(cause);
    free(unreached);
    client_destroy(c);
    cluster_fini(&cl);
    return code;
}
