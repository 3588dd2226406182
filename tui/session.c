/*
 * session — see session.h.
 */
#include "tui/session.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/xalloc.h"
#include "core/client/client.h"
#include "core/client/job.h"
#include "core/client/launcher.h"
#include "trace/collector/tclient.h"

#define CONNECT_TIMEOUT_MS 3000
#define RETRY_NS 2000000000LL
#define RETRY_CONNECT_MS 300
#define SUBMIT_TIMEOUT_MS 120000

void session_init(struct session *s, const char *cluster_path, uint32_t period_ms)
{
    memset(s, 0, sizeof *s);
    s->cluster_path = cluster_path ? xstrdup(cluster_path) : cluster_default_path();
    s->period_ms = period_ms;
}

static void drop_job(struct session *s)
{
    if (s->have_job)
        workload_fini(&s->wl);
    s->have_job = false;
}

static void detach(struct session *s)
{
    tclient_destroy(s->tc);
    s->tc = NULL;
    if (s->attached)
        cluster_fini(&s->cl);
    s->attached = false;
    s->launched = false;
    s->header_set = false;
}

void session_fini(struct session *s)
{
    detach(s);
    drop_job(s);
    free(s->generated);
    free(s->trace_path);
    free(s->cluster_path);
    memset(s, 0, sizeof *s);
}

/* The attached cluster's trace, kept past a teardown for the words at quit. */
static void remember_trace(struct session *s)
{
    if (s->cl.collector.trace_path) {
        free(s->trace_path);
        s->trace_path = xstrdup(s->cl.collector.trace_path);
    }
}

int session_attach(struct session *s, char **cause)
{
    if (s->attached)
        return 0;
    if (access(s->cluster_path, F_OK) != 0) {
        *cause = xasprintf("no cluster file at '%s' (is a cluster launched? 'jackdaw launch', "
                           "'jackdaw console --launch', or pass --cluster)", s->cluster_path);
        return -ENOENT;
    }
    int rc = cluster_load(&s->cl, s->cluster_path, cause);
    if (rc < 0)
        return rc;
    rc = auth_key_load(s->cl.key_path, &s->key, cause);
    if (rc < 0) {
        cluster_fini(&s->cl);
        return rc;
    }
    s->attached = true;
    remember_trace(s);
    return 0;
}

static int connect_within(struct session *s, int timeout_ms, bool subscribe, char **cause);

int session_connect(struct session *s, char **cause)
{
    return connect_within(s, CONNECT_TIMEOUT_MS, true, cause);
}

static int connect_within(struct session *s, int timeout_ms, bool subscribe, char **cause)
{
    if (!s->attached)
        return -ENOTCONN;
    if (s->tc)
        return 0;
    if (!s->cl.collector.host[0]) {
        *cause = xasprintf("the cluster file '%s' names no collector (launched with --no-trace?); "
                           "the console watches a cluster through its collector",
                           s->cluster_path);
        return -ENOENT;
    }
    int rc = tclient_connect(&s->tc, &s->cl, &s->key, timeout_ms, cause);
    if (rc == 0 && subscribe)
        rc = tclient_subscribe(s->tc, s->period_ms, cause);
    if (rc < 0) {
        tclient_destroy(s->tc);
        s->tc = NULL;
        s->retry_at_ns = clock_mono_ns() + RETRY_NS;
        return rc;
    }
    s->header_set = false;
    return 0;
}

bool session_connected(const struct session *s)
{
    return s->tc != NULL;
}

void session_header_steal(const char *header_json, char *out, size_t len)
{
    snprintf(out, len, "%s", "");
    json_t *h = header_json ? json_loads(header_json, 0, NULL) : NULL;
    if (!h)
        return;
    snprintf(out, len, "adaptive");
    /* A stealing preset (--policy) names the policy better than the mode switch. */
    json_t *args = json_object_get(json_object_get(h, "config"), "node_args");
    bool preset = false;
    for (size_t i = 0; json_is_array(args) && i + 1 < json_array_size(args); i++) {
        const char *a = json_string_value(json_array_get(args, i));
        const char *v = json_string_value(json_array_get(args, i + 1));
        if (!a || !v)
            continue;
        if (strcmp(a, "--policy") == 0) {
            snprintf(out, len, "%s", v);
            preset = true;
        } else if (strcmp(a, "--steal") == 0 && !preset) {
            snprintf(out, len, "%s", v);
        }
    }
    json_decref(h);
}

int session_poll(struct session *s, struct model *m)
{
    if (!s->attached)
        return 0;
    if (!s->tc) {
        if (clock_mono_ns() < s->retry_at_ns)
            return -ECONNRESET;
        /* Short: the screen does not move while we wait. */
        char *cause = NULL;
        int rc = connect_within(s, RETRY_CONNECT_MS, true, &cause);
        free(cause);
        if (rc < 0)
            return -ECONNRESET;
        /* The collector resends its recent notes to a new subscriber: start over. */
        model_reset(m);
    }
    const struct wire_state *st = NULL;
    const char *header = NULL;
    int rc = tclient_poll(s->tc, 0, &st, &header);
    if (header && !s->header_set) {
        model_set_header(m, header);
        session_header_steal(header, s->steal, sizeof s->steal);
        s->header_set = true;
    }
    if (rc < 0) {
        tclient_destroy(s->tc);
        s->tc = NULL;
        s->retry_at_ns = clock_mono_ns() + RETRY_NS;
        return -ECONNRESET;
    }
    if (rc == 0)
        return 0;
    for (uint32_t i = 0; i < st->nnodes; i++) {
        const struct wire_node_state *n = &st->nodes[i];
        if (n->seen)
            model_sample(m, (int32_t)i, n->time_ns, &n->sample, n->connected);
    }
    for (uint32_t i = 0; i < st->nnotes; i++)
        model_note(m, &st->notes[i]);
    model_jobs(m, st->jobs, st->njobs, st->jobs_partial);
    model_tick(m, st->now_ns);
    return 1;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? xstrndup(path, (size_t)(slash - path ? slash - path : 1)) : xstrdup(".");
}

/* Writes the generated workload beside the cluster file, where `jackdaw cancel` finds it
 * through the job file, and loads it back through the same checks as any file. */
static int generate(struct session *s, const struct form_plan *p, char **path, char **cause)
{
    char *dir = dir_of(s->cluster_path);
    int rc = fs_mkdirs(dir, 0700, NULL);
    if (rc < 0) {
        *cause = xasprintf("cannot create '%s': %s", dir, strerror(-rc));
        free(dir);
        return rc;
    }
    *path = xasprintf("%s/console-%s-%d.jsonl", dir, gen_shape_name(p->gen.shape), (int)getpid());
    free(dir);
    FILE *out = fopen(*path, "w");
    if (!out) {
        rc = -errno;
        *cause = xasprintf("cannot write the workload '%s': %s", *path, strerror(errno));
        return rc;
    }
    char *why = NULL;
    rc = gen_write(out, &p->gen, &why);
    if (fclose(out) != 0 && rc == 0)
        rc = -EIO;
    if (rc < 0) {
        *cause = xasprintf("cannot write the workload '%s': %s", *path, why ? why : strerror(-rc));
        free(why);
    }
    return rc;
}

int session_launch(struct session *s, const struct form_plan *p, session_progress_fn progress,
                   void *arg, char **cause)
{
    if (s->attached) {
        *cause = xasprintf("a cluster is attached ('%s'); K tears it down first", s->cluster_path);
        return -EEXIST;
    }
    drop_job(s);
    char *path = NULL;
    int rc = 0;
    if (p->generate) {
        progress(arg, "generating the workload");
        rc = generate(s, p, &path, cause);
        if (rc == 0) {
            free(s->generated);
            s->generated = xstrdup(path);
        }
    } else {
        path = xstrdup(p->file);
    }
    if (rc == 0) {
        progress(arg, "checking the workload");
        rc = wfcommons_load_any(&s->wl, path, NULL, cause);
    }
    if (rc < 0) {
        free(path);
        return rc;
    }
    s->have_job = true;
    /* An allocation's size is known once its daemons run (below). */
    rc = p->nodes ? workload_check_nodes(&s->wl, p->nodes, cause) : 0;
    if (rc < 0) {
        drop_job(s);
        free(path);
        return rc;
    }
    char digest[33];
    job_workload_digest(path, digest);
    struct launch_options lo = {
        .nodes = p->nodes, .slots = p->slots, .speeds = p->speeds[0] ? p->speeds : NULL,
        .cluster_path = s->cluster_path, .log_level = "info", .node_args = p->words,
        .node_nargs = p->nwords, .trace = true, .workload_name = s->wl.name,
        .workload_digest = digest[0] ? digest : NULL,
        /* The user may leave with the cluster running (q, then d): the daemons must not
         * die with the console. */
        .die_with_parent = false,
        .hostfile = p->where == FORM_HOSTFILE ? p->hostfile : NULL,
        .rsh = p->where == FORM_HOSTFILE ? p->rsh : NULL,
        .slurm = p->where == FORM_SLURM, .per_task = p->per_task,
    };
    progress(arg, "starting the daemons and the collector");
    rc = launcher_start(&lo, &s->cl, cause);
    if (rc == 0 && !p->nodes && (rc = workload_check_nodes(&s->wl, s->cl.count, cause)) < 0) {
        char *ignore = NULL;
        launcher_stop(&s->cl, s->cluster_path, 5000, &ignore);
        free(ignore);
        cluster_fini(&s->cl);
    }
    if (rc < 0) {
        drop_job(s);
        free(path);
        return rc;
    }
    s->attached = true;
    s->launched = true;
    remember_trace(s);
    rc = auth_key_load(s->cl.key_path, &s->key, cause);
    /* Subscribe only once the job is in: a client keeps the latest STATE only, so the
     * notes of STATEs that arrive while we submit (the job's own JOB_SUBMIT among
     * them) would be lost, whereas a new subscriber is sent the recent notes. */
    if (rc == 0) {
        progress(arg, "connecting to the collector");
        rc = connect_within(s, CONNECT_TIMEOUT_MS, false, cause);
    }
    s->job = client_new_job();
    if (rc == 0)
        rc = tclient_record_job(s->tc, &s->wl, s->job, digest, submit_mode_name(p->mode), 30000,
                                cause);
    if (rc == 0) {
        progress(arg, "submitting the workload");
        struct client *c = client_create(&s->cl, &s->key, NULL);
        int64_t t_submit = 0;
        rc = client_connect(c, 10000, cause);
        if (rc == 0)
            rc = client_submit(c, &s->wl, s->job, p->mode, SUBMIT_TIMEOUT_MS, &t_submit, cause);
        client_destroy(c);
        if (rc == 0)
            job_file_write(s->cluster_path, s->job, path, NULL, s->wl.count, t_submit);
    }
    if (rc == 0)
        rc = tclient_subscribe(s->tc, s->period_ms, cause);
    free(path);
    if (rc < 0) {
        char *ignore = NULL;
        session_teardown(s, &ignore);
        free(ignore);
        return rc;
    }
    return 0;
}

/* The job to cancel when this console did not submit one: the cluster's latest. */
static int find_job(struct session *s, char **cause)
{
    if (s->have_job)
        return 0;
    char *path = NULL;
    uint32_t job = 0;
    struct wfcommons_options scale = {0};
    int rc = job_file_find(s->cluster_path, 0, &job, &path, &scale, cause);
    if (rc == 0)
        rc = wfcommons_load_any(&s->wl, path, &scale, cause);
    free(path);
    if (rc < 0)
        return rc;
    s->job = job;
    s->have_job = true;
    return 0;
}

int session_cancel(struct session *s, char **cause)
{
    if (!s->attached) {
        *cause = xstrdup("no cluster");
        return -ENOTCONN;
    }
    int rc = find_job(s, cause);
    if (rc < 0)
        return rc;
    /* Removing every root removes every task: each one not finished is a root or below
     * one (job removal takes the unfinished subtree). */
    int64_t *roots = xmalloc((s->wl.count ? s->wl.count : 1) * sizeof *roots);
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->wl.count; i++)
        if (s->wl.tasks[i].num_parents == 0)
            roots[n++] = i;
    struct client *c = client_create(&s->cl, &s->key, NULL);
    rc = client_connect(c, 5000, cause);
    if (rc == 0)
        rc = client_remove(c, s->job, roots, n, 10000, cause);
    client_destroy(c);
    free(roots);
    return rc;
}

int session_teardown(struct session *s, char **cause)
{
    if (!s->attached) {
        *cause = xstrdup("no cluster");
        return -ENOTCONN;
    }
    /* Unsubscribe first: the collector stops last and we would only see it go. */
    tclient_destroy(s->tc);
    s->tc = NULL;
    int rc = launcher_stop(&s->cl, s->cluster_path, 5000, cause);
    detach(s);
    drop_job(s);
    /* A generated workload stays beside the cluster file: with the trace it is what
     * reproduces the run. */
    return rc;
}

uint32_t session_pids(const struct session *s, pid_t *out, uint32_t cap)
{
    uint32_t n = 0;
    if (!s->attached || !s->launched)
        return 0;
    for (uint32_t i = 0; i < s->cl.count && n < cap; i++)
        if (s->cl.nodes[i].pid > 0)
            out[n++] = s->cl.nodes[i].pid;
    if (s->cl.collector.pid > 0 && n < cap)
        out[n++] = s->cl.collector.pid;
    return n;
}
