/*
 * cmd_tasks — `jackdaw tasks [--job J] [--state S] [--node N] [--json] [--trace FILE]`
 * lists tasks as `sacct` does, and `jackdaw task ID [--job J] [--trace FILE]` shows one
 * task's history: submitted, ready, queued, pushed or stolen from node to node, started,
 * each failed run retried, ended with its status.
 *
 * Both read a trace: the one named by --trace, else the one the cluster's collector is
 * writing (its path is in the cluster file), which the collector flushes every pass, so
 * a running cluster's tasks are listed as of a moment ago without asking the daemons
 * anything.  A trace cut by a crash is read to its last whole block.  Pure reading; one
 * pass for the list, two for a task named by its workload id (the names first).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/client/job.h"
#include "core/model/task.h"
#include "tools/cmd/cmd.h"
#include "trace/format/reader.h"

static int tasks_main(int argc, char **argv);
static int task_main(int argc, char **argv);

const struct cmd cmd_tasks = {
    .name = "tasks",
    .usage = "[--job J] [--state S] [--node N] [--json] [--trace FILE | --cluster FILE]",
    .summary = "list tasks with their state, node and times (from the cluster's trace)",
    .main = tasks_main,
};

const struct cmd cmd_task = {
    .name = "task",
    .usage = "ID|JOB:INDEX [--job J] [--trace FILE | --cluster FILE]",
    .summary = "one task's history: queued, moved, started, ended",
    .main = task_main,
};

enum tstate { T_WAITING, T_READY, T_QUEUED, T_MOVING, T_RUNNING, T_DONE, T_FAILED, T_CANCELLED };
static const char *const state_names[] = {"waiting", "ready", "queued", "moving",
                                          "running", "done", "failed", "cancelled"};

struct trow {
    uint64_t key;
    enum tstate state;
    int32_t node;           /* where it is or was last */
    int64_t submit_ns, start_ns, end_ns; /* -1: not yet */
    int64_t exit_code;
    uint32_t runs;          /* STARTs seen */
    int64_t state_ns;       /* time of the event that set state and node */
    int state_kind;         /* and its kind, to order events of one instant */
    char *name;             /* owned, or NULL */
};

struct table {
    struct u64map by_key;   /* key -> index + 1 */
    struct trow *rows;
    size_t n, cap;
};

static struct trow *row_for(struct table *t, uint64_t key)
{
    uintptr_t i = (uintptr_t)u64map_get(&t->by_key, key);
    if (i)
        return &t->rows[i - 1];
    t->rows = xgrow(t->rows, &t->cap, t->n + 1, sizeof *t->rows);
    struct trow *r = &t->rows[t->n++];
    *r = (struct trow){.key = key, .node = -1, .submit_ns = -1, .start_ns = -1, .end_ns = -1,
                       .state_ns = INT64_MIN, .state_kind = -1};
    u64map_put(&t->by_key, key, (void *)(uintptr_t)t->n);
    return r;
}

static void table_fini(struct table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].name);
    free(t->rows);
    u64map_fini(&t->by_key);
}

/* The trace: --trace, else the one the cluster file names. 0 or the exit code. */
static int trace_of(const char *who, const char *trace, const char *cluster, char **out)
{
    if (trace) {
        *out = xstrdup(trace);
        return 0;
    }
    struct cluster cl;
    struct auth_key key;
    int rc = job_open_cluster(who, &cluster, &cl, &key);
    if (rc)
        return rc;
    if (!cl.collector.trace_path) {
        fprintf(stderr, "jackdaw %s: the cluster '%s' records no trace (launched with "
                        "--no-trace?); pass --trace FILE\n", who, cluster);
        cluster_fini(&cl);
        return EXIT_BAD_INPUT;
    }
    *out = xstrdup(cl.collector.trace_path);
    cluster_fini(&cl);
    return 0;
}

/* Reads every event of the trace into the table (one row a task), calling `each` for
 * each task event too when not NULL.  0 or the exit code, after saying why. */
static int read_trace(const char *who, const char *path, struct table *t,
                      void (*each)(void *, const struct trace_event *), void *arg)
{
    struct trace_reader *r;
    char *cause = NULL;
    int rc = trace_reader_open(&r, path, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause ? cause : strerror(-rc));
        free(cause);
        return EXIT_BAD_INPUT;
    }
    struct trace_event ev;
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0) {
        if ((unsigned)ev.kind >= TRACE_KIND_COUNT)
            continue;
        if (ev.kind == TRACE_TASK_NAMES && ev.task != TRACE_NO_TASK) {
            const char *const *names;
            size_t n;
            if (trace_reader_names(r, &names, &n) < 0)
                continue;
            for (size_t i = 0; i < n && names[i]; i++) {
                uint64_t key = (ev.task & ~UINT64_C(0xffffffff)) | (uint32_t)(ev.task + i);
                struct trow *row = row_for(t, key);
                free(row->name);
                row->name = xstrdup(names[i]);
            }
            continue;
        }
        bool task_kind = ev.kind <= TRACE_TASK_END || ev.kind == TRACE_TASK_RETRY ||
                         ev.kind == TRACE_TASK_RESUBMIT;
        if (!task_kind || ev.task == TRACE_NO_TASK)
            continue;
        struct trow *row = row_for(t, ev.task);
        if (each)
            each(arg, &ev);
        /* Counts and times from every event; the state and node from the latest (the
         * file holds each node's events in order, the nodes interleaved as their blocks
         * reached the collector, so a victim's QUEUED may come after the thief's END). */
        if (ev.kind == TRACE_TASK_SUBMIT && (row->submit_ns < 0 || ev.time_ns < row->submit_ns))
            row->submit_ns = ev.time_ns;
        if (ev.kind == TRACE_TASK_START) {
            row->runs++;
            if (ev.time_ns > row->start_ns)
                row->start_ns = ev.time_ns;
        }
        if (ev.kind == TRACE_TASK_END) {
            row->end_ns = ev.time_ns;
            row->exit_code = ev.count;
        }
        int rank = ev.kind == TRACE_TASK_RETRY ? TRACE_TASK_START : (int)ev.kind;
        if (ev.time_ns < row->state_ns || (ev.time_ns == row->state_ns && rank < row->state_kind))
            continue;
        row->state_ns = ev.time_ns;
        row->state_kind = rank;
        switch (ev.kind) {
        case TRACE_TASK_SUBMIT: row->state = T_WAITING; row->node = ev.node; break;
        case TRACE_TASK_READY: row->state = T_READY; row->node = ev.node; break;
        case TRACE_TASK_QUEUED_LOCAL:
        case TRACE_TASK_QUEUED_SHARED:
        case TRACE_TASK_STOLEN_IN: row->state = T_QUEUED; row->node = ev.node; break;
        case TRACE_TASK_PUSHED:
        case TRACE_TASK_STOLEN_OUT: row->state = T_MOVING; break;
        case TRACE_TASK_START: row->state = T_RUNNING; row->node = ev.node; break;
        case TRACE_TASK_RETRY: row->state = T_READY; break;
        case TRACE_TASK_END:
            row->state = ev.status == TASK_DONE     ? T_DONE
                         : ev.status == TASK_FAILED ? T_FAILED
                                                    : T_CANCELLED;
            row->node = ev.node;
            break;
        default:
            break;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "jackdaw %s: %s: %s\n", who, path, cause ? cause : strerror(-rc));
        free(cause);
        trace_reader_destroy(r);
        return EXIT_BAD_INPUT;
    }
    trace_reader_destroy(r);
    return 0;
}

static int by_key(const void *pa, const void *pb)
{
    const struct trow *a = pa, *b = pb;
    return (a->key > b->key) - (a->key < b->key);
}

static void fmt_time(char *out, size_t cap, int64_t ns)
{
    if (ns < 0)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, "%.3f", (double)ns / 1e9);
}

static int tasks_main(int argc, char **argv)
{
    const char *cluster = NULL, *trace = NULL, *state = NULL;
    unsigned long job = 0;
    long node = -1;
    bool json = false;
    char *node_text = NULL;
    struct opt opts[] = {
        {"job", OPT_UINT, &job, "J  only job J"},
        {"state", OPT_STRING, &state,
         "S  only tasks in state S: waiting, ready, queued, moving, running, done, failed, "
         "cancelled"},
        {"node", OPT_STRING, &node_text, "N  only tasks on (or last on) node N"},
        {"json", OPT_FLAG, &json, "  one JSON object per line"},
        {"trace", OPT_STRING, &trace, "FILE  a trace (default: the cluster's)"},
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_tasks, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    int want_state = -1;
    for (int s = 0; state && s <= T_CANCELLED; s++)
        if (strcmp(state, state_names[s]) == 0)
            want_state = s;
    if (state && want_state < 0) {
        fprintf(stderr, "jackdaw tasks: --state '%s': expected waiting, ready, queued, moving, "
                        "running, done, failed or cancelled\n", state);
        return EXIT_USAGE;
    }
    if (node_text) {
        char *end;
        errno = 0;
        node = strtol(node_text, &end, 10);
        if (errno || end == node_text || *end || node < 0) {
            fprintf(stderr, "jackdaw tasks: --node '%s': expected a node id\n", node_text);
            return EXIT_USAGE;
        }
    }
    char *path = NULL;
    if ((rc = trace_of("tasks", trace, cluster, &path)))
        return rc;
    struct table t = {0};
    u64map_init(&t.by_key);
    rc = read_trace("tasks", path, &t, NULL, NULL);
    if (rc == 0) {
        qsort(t.rows, t.n, sizeof *t.rows, by_key);
        if (!json)
            printf("%-16s %-24s %-9s %4s %9s %9s %9s %4s %5s\n", "JOB:INDEX", "ID", "STATE",
                   "NODE", "SUBMIT", "START", "END", "RUNS", "EXIT");
        for (size_t i = 0; i < t.n; i++) {
            const struct trow *r = &t.rows[i];
            if (r->submit_ns < 0 && r->runs == 0 && r->end_ns < 0)
                continue; /* named only (its job's other tasks are in another trace) */
            if ((job && task_key_job(r->key) != job) ||
                (want_state >= 0 && (int)r->state != want_state) || (node >= 0 && r->node != node))
                continue;
            char sub[24], start[24], end[24], ex[16] = "-";
            fmt_time(sub, sizeof sub, r->submit_ns);
            fmt_time(start, sizeof start, r->start_ns);
            fmt_time(end, sizeof end, r->end_ns);
            if (r->state == T_DONE || r->state == T_FAILED)
                snprintf(ex, sizeof ex, "%" PRId64, r->exit_code);
            if (json) {
                json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:i, s:i}", "job",
                                      (json_int_t)task_key_job(r->key), "index",
                                      (json_int_t)task_key_index(r->key), "id",
                                      r->name ? r->name : "", "state", state_names[r->state],
                                      "node", (int)r->node, "runs", (int)r->runs);
                json_object_set_new(o, "submit_s", r->submit_ns < 0 ? json_null()
                                                                    : json_real(r->submit_ns / 1e9));
                json_object_set_new(o, "start_s", r->start_ns < 0 ? json_null()
                                                                  : json_real(r->start_ns / 1e9));
                json_object_set_new(o, "end_s", r->end_ns < 0 ? json_null()
                                                              : json_real(r->end_ns / 1e9));
                char *line = json_dumps(o, JSON_COMPACT);
                printf("%s\n", line);
                free(line);
                json_decref(o);
            } else {
                char jk[24];
                snprintf(jk, sizeof jk, "%" PRIu32 ":%" PRIu32, task_key_job(r->key),
                         task_key_index(r->key));
                printf("%-16s %-24.24s %-9s %4" PRId32 " %9s %9s %9s %4" PRIu32 " %5s\n", jk,
                       r->name ? r->name : "-", state_names[r->state], r->node, sub, start, end,
                       r->runs, ex);
            }
        }
    }
    table_fini(&t);
    free(path);
    return rc;
}

/* ---- one task's history ----------------------------------------------------------------- */

struct history {
    uint64_t key;
    struct trace_event *ev;
    size_t n, cap;
};

static void keep_event(void *arg, const struct trace_event *ev)
{
    struct history *h = arg;
    if (ev->task != h->key)
        return;
    h->ev = xgrow(h->ev, &h->cap, h->n + 1, sizeof *h->ev);
    h->ev[h->n] = *ev;
    h->ev[h->n].names = NULL;
    h->ev[h->n].nnames = 0;
    h->n++;
}

static void describe(const struct trace_event *e, char *out, size_t cap)
{
    switch (e->kind) {
    case TRACE_TASK_SUBMIT:
        snprintf(out, cap, "submitted%s", e->duration_ns > 0 ? " again (a new attempt)" : "");
        break;
    case TRACE_TASK_READY: snprintf(out, cap, "ready to run"); break;
    case TRACE_TASK_QUEUED_LOCAL: snprintf(out, cap, "queued in LReadyQ (stays here)"); break;
    case TRACE_TASK_QUEUED_SHARED: snprintf(out, cap, "queued in SReadyQ (may be stolen)"); break;
    case TRACE_TASK_PUSHED: snprintf(out, cap, "pushed to node %" PRId32, e->peer); break;
    case TRACE_TASK_STOLEN_OUT: snprintf(out, cap, "stolen by node %" PRId32, e->peer); break;
    case TRACE_TASK_STOLEN_IN: snprintf(out, cap, "stolen from node %" PRId32, e->peer); break;
    case TRACE_TASK_START:
        if (e->count > 0)
            snprintf(out, cap, "started (%" PRId64 " inputs, %s)", e->count,
                     e->status ? "some fetched" : "all here");
        else
            snprintf(out, cap, "started");
        break;
    case TRACE_TASK_RETRY:
        snprintf(out, cap, "run failed (exit %" PRId64 "); runs again (%" PRId64 " failed so far)",
                 e->count, e->bytes);
        break;
    case TRACE_TASK_RESUBMIT:
        snprintf(out, cap, "handed to node %" PRId32 " as attempt %" PRId32 " (node %" PRId64
                 " was declared dead)", e->peer, e->status, e->count);
        break;
    case TRACE_TASK_END:
        snprintf(out, cap, "ended %s%s", e->status >= 0 && e->status < TASK_STATUS_COUNT
                                             ? task_status_name((enum task_status)e->status)
                                             : "?",
                 "");
        if (e->status == TASK_FAILED || e->status == TASK_DONE) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, " (exit %" PRId64 ")", e->count);
        }
        break;
    default: snprintf(out, cap, "%s", trace_kind_name(e->kind)); break;
    }
}

static int task_main(int argc, char **argv)
{
    const char *cluster = NULL, *trace = NULL;
    unsigned long job = 0;
    struct opt opts[] = {
        {"job", OPT_UINT, &job, "J  the job, when several have a task of that id"},
        {"trace", OPT_STRING, &trace, "FILE  a trace (default: the cluster's)"},
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_task, argc, argv, opts, pos, 1, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (npos != 1) {
        fprintf(stderr, "jackdaw task: which task? usage: jackdaw task %s\n", cmd_task.usage);
        return EXIT_USAGE;
    }
    char *path = NULL;
    if ((rc = trace_of("task", trace, cluster, &path)))
        return rc;
    /* First the names (and J:I), then the task's events. */
    struct table t = {0};
    u64map_init(&t.by_key);
    rc = read_trace("task", path, &t, NULL, NULL);
    uint64_t key = TRACE_NO_TASK;
    unsigned nmatch = 0;
    unsigned long j, i;
    char extra;
    if (rc == 0 && sscanf(pos[0], "%lu:%lu%c", &j, &i, &extra) == 2 && j <= UINT32_MAX &&
        i <= UINT32_MAX) {
        key = task_key((uint32_t)j, (uint32_t)i);
        nmatch = u64map_get(&t.by_key, key) != NULL;
    } else if (rc == 0) {
        int64_t best = INT64_MIN;
        for (size_t k = 0; k < t.n; k++)
            if (t.rows[k].name && strcmp(t.rows[k].name, pos[0]) == 0 &&
                (!job || task_key_job(t.rows[k].key) == job)) {
                if (t.rows[k].submit_ns > best) { /* the latest job's, unless --job */
                    best = t.rows[k].submit_ns;
                    key = t.rows[k].key;
                }
                nmatch++;
            }
    }
    if (rc == 0 && !nmatch) {
        fprintf(stderr, "jackdaw task: no task '%s'%s in '%s'\n", pos[0],
                job ? " in that job" : "", path);
        rc = EXIT_BAD_INPUT;
    }
    if (rc == 0) {
        if (nmatch > 1)
            fprintf(stderr, "jackdaw task: %u jobs have a task '%s': the latest submitted's "
                            "(--job J for another)\n", nmatch, pos[0]);
        struct history h = {.key = key};
        struct table again = {0};
        u64map_init(&again.by_key);
        rc = read_trace("task", path, &again, keep_event, &h);
        table_fini(&again);
        const struct trow *r = &t.rows[(uintptr_t)u64map_get(&t.by_key, key) - 1];
        printf("task %" PRIu32 ":%" PRIu32 " %s: %s on node %" PRId32 ", %" PRIu32 " run%s\n",
               task_key_job(key), task_key_index(key), r->name ? r->name : "",
               state_names[r->state], r->node, r->runs, r->runs == 1 ? "" : "s");
        qsort(h.ev, h.n, sizeof *h.ev, trace_event_cmp_time);
        for (size_t k = 0; k < h.n; k++) {
            char what[160];
            describe(&h.ev[k], what, sizeof what);
            printf("  %10.6f s  node %-4" PRId32 " %s\n", (double)h.ev[k].time_ns / 1e9,
                   h.ev[k].node, what);
        }
        if (r->state == T_FAILED)
            printf("  (its output: jackdaw logs %s --job %" PRIu32 ")\n",
                   r->name ? r->name : pos[0], task_key_job(key));
        free(h.ev);
    }
    table_fini(&t);
    free(path);
    return rc;
}
