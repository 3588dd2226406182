/*
 * job — see job.h.
 */
#include "core/client/job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/fs.h"
#include "core/base/sigcatch.h"
#include "core/base/xalloc.h"
#include "core/client/exitcode.h"
#include "core/client/fetchout.h"
#include "core/client/follow.h"
#include "trace/collector/tclient.h"

static char *jobs_dir(const char *cluster_path)
{
    return cluster_owned_path(cluster_path, CLUSTER_OWNED_JOBS);
}

int job_file_write(const char *cluster_path, uint32_t job, const char *workload_path,
                   const struct wfcommons_options *scale, uint32_t tasks, int64_t submitted_ns)
{
    char *dir = jobs_dir(cluster_path);
    char *abs = realpath(workload_path, NULL);
    int rc = fs_mkdirs(dir, 0700, NULL);
    if (rc == 0) {
        char *path = xasprintf("%s/%u.json", dir, job);
        json_t *o = json_pack("{s:i, s:s, s:i, s:I}", "job", (int)job, "workload",
                              abs ? abs : workload_path, "tasks", (int)tasks, "submitted_ns",
                              (json_int_t)submitted_ns);
        if (scale && scale->time_scale)
            json_object_set_new(o, "time_scale", json_real(scale->time_scale));
        if (scale && scale->size_scale)
            json_object_set_new(o, "data_scale", json_real(scale->size_scale));
        if (scale && scale->command)
            json_object_set_new(o, "command", json_string(scale->command));
        /* Owner-only like everything else of the cluster's, whatever the umask. */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        rc = fd < 0 ? -errno : json_dumpfd(o, fd, JSON_COMPACT) < 0 ? -EIO : 0;
        if (fd >= 0 && close(fd) < 0 && rc == 0)
            rc = -errno;
        json_decref(o);
        free(path);
    }
    free(abs);
    free(dir);
    return rc;
}

int job_file_finish(const char *cluster_path, uint32_t job, const struct summary *s,
                    int64_t ended_ns)
{
    char *dir = jobs_dir(cluster_path);
    char *path = xasprintf("%s/%u.json", dir, job);
    free(dir);
    json_t *o = json_load_file(path, 0, NULL);
    int rc = -ENOENT;
    if (json_is_object(o)) {
        json_object_update_new(o, json_pack("{s:I, s:i, s:i, s:i, s:f}", "ended_ns",
                                            (json_int_t)ended_ns, "done", (int)s->done,
                                            "failed", (int)s->failed, "cancelled",
                                            (int)s->cancelled, "makespan_s", s->makespan_s));
        int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        rc = fd < 0 ? -errno : json_dumpfd(o, fd, JSON_COMPACT) < 0 ? -EIO : 0;
        if (fd >= 0 && close(fd) < 0 && rc == 0)
            rc = -errno;
    }
    json_decref(o);
    free(path);
    return rc;
}

int job_files_list(const char *cluster_path, struct job_entry **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char *dir = jobs_dir(cluster_path);
    DIR *d = opendir(dir);
    free(dir);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char *cdir = jobs_dir(cluster_path);
        char *path = xasprintf("%s/%s", cdir, e->d_name);
        free(cdir);
        json_t *o = json_load_file(path, 0, NULL);
        free(path);
        json_t *id = json_object_get(o, "job");
        const char *w = json_string_value(json_object_get(o, "workload"));
        if (json_is_integer(id) && w) {
            *out = xgrow(*out, &cap, *n + 1, sizeof **out);
            struct job_entry *j = &(*out)[(*n)++];
            *j = (struct job_entry){
                .job = (uint32_t)json_integer_value(id), .workload = xstrdup(w),
                .tasks = (uint32_t)json_integer_value(json_object_get(o, "tasks")),
                .submitted_ns = json_integer_value(json_object_get(o, "submitted_ns")),
                .ended_ns = json_integer_value(json_object_get(o, "ended_ns")),
                .done = (uint32_t)json_integer_value(json_object_get(o, "done")),
                .failed = (uint32_t)json_integer_value(json_object_get(o, "failed")),
                .cancelled = (uint32_t)json_integer_value(json_object_get(o, "cancelled")),
                .makespan_s = json_number_value(json_object_get(o, "makespan_s")),
            };
            j->finished = json_object_get(o, "ended_ns") != NULL;
        }
        json_decref(o);
    }
    closedir(d);
    return 0;
}

void job_entries_free(struct job_entry *j, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(j[i].workload);
    free(j);
}

/* The command template of the job job_file_find found last (its scale points here). */
static char *found_command;

int job_file_find(const char *cluster_path, uint32_t job, uint32_t *found, char **workload,
                  struct wfcommons_options *scale, char **cause)
{
    char *dir = jobs_dir(cluster_path);
    DIR *d = opendir(dir);
    if (!d) {
        *cause = xasprintf("no jobs were submitted to this cluster ('%s': %s)", dir,
                           strerror(errno));
        free(dir);
        return -ENOENT;
    }
    json_int_t best_time = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strstr(e->d_name, ".json"))
            continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        json_t *o = json_load_file(path, 0, NULL);
        free(path);
        json_int_t id = json_integer_value(json_object_get(o, "job"));
        json_int_t t = json_integer_value(json_object_get(o, "submitted_ns"));
        const char *w = json_string_value(json_object_get(o, "workload"));
        if (o && w && ((job && id == job) || (!job && t > best_time))) {
            best_time = t;
            *found = (uint32_t)id;
            free(*workload);
            *workload = xstrdup(w);
            if (scale) {
                scale->time_scale = json_number_value(json_object_get(o, "time_scale"));
                scale->size_scale = json_number_value(json_object_get(o, "data_scale"));
                /* Kept for the process's life: a job file is read once per command. */
                const char *cmd = json_string_value(json_object_get(o, "command"));
                free(found_command);
                found_command = cmd ? xstrdup(cmd) : NULL;
                scale->command = found_command;
            }
        }
        json_decref(o);
    }
    closedir(d);
    int rc = 0;
    if (best_time < 0) {
        *cause = job ? xasprintf("job %u is not in '%s'", job, dir)
                     : xasprintf("no job files in '%s'", dir);
        rc = -ENOENT;
    }
    free(dir);
    return rc;
}

int job_open_job(const char *who, const char **cluster, uint32_t job, struct cluster *cl,
                 struct auth_key *key, struct workload *wl, uint32_t *found, char **path)
{
    memset(wl, 0, sizeof *wl);
    *path = NULL;
    int rc = job_open_cluster(who, cluster, cl, key);
    if (rc)
        return rc;
    char *cause = NULL;
    struct wfcommons_options scale = {0};
    if (job_file_find(*cluster, job, found, path, &scale, &cause) < 0 ||
        wfcommons_load_any(wl, *path, &scale, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        free(*path);
        *path = NULL;
        cluster_fini(cl);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

void job_close_job(struct cluster *cl, struct workload *wl, char *path)
{
    workload_fini(wl);
    free(path);
    cluster_fini(cl);
}

int job_open_cluster(const char *who, const char **path, struct cluster *cl, struct auth_key *key)
{
    static char *default_path;
    if (!*path) {
        if (!default_path)
            default_path = cluster_default_path();
        *path = default_path;
    }
    char *cause = NULL;
    if (cluster_load(cl, *path, &cause) < 0) {
        /* No cluster file is no cluster, as daemons that do not answer are: the same
         * exit code.  A file that is there and wrong is bad input. */
        bool missing = access(*path, F_OK) != 0;
        if (missing)
            fprintf(stderr, "jackdaw %s: no cluster file at '%s' (is a cluster launched? "
                            "'jackdaw launch', or pass --cluster)\n", who, *path);
        else
            fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        return missing ? EXIT_CLUSTER : EXIT_BAD_INPUT;
    }
    if (auth_key_load(cl->key_path, key, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        cluster_fini(cl);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

int job_parse_task_timeout(const char *who, const char *text, double *timeout_s)
{
    *timeout_s = 0;
    if (!text)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !task_timeout_valid(v)) {
        fprintf(stderr, "jackdaw %s: --task-timeout '%s': must be a number of seconds, more "
                        "than 0 and at most %.0f (30 days)\n", who, text, TASK_TIMEOUT_MAX_S);
        return EXIT_USAGE;
    }
    *timeout_s = v;
    return 0;
}

int job_parse_retries(const char *who, const char *text, int *retries)
{
    *retries = -1;
    if (!text)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > (long)TASK_RETRIES_MAX) {
        fprintf(stderr, "jackdaw %s: --retries '%s': must be a whole number from 0 to %u\n",
                who, text, TASK_RETRIES_MAX);
        return EXIT_USAGE;
    }
    *retries = (int)v;
    return 0;
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct follow *f = h->data;
    f->interrupted = signum;
    f->stop = 1;
}

/* An end its record's primary reports again (its runner died): counted once. */
static void follow_listed_again(void *arg, const struct proto_task_end *e)
{
    follow_on_task_listed(arg, e);
}

static void on_node_lost(void *arg, uint32_t node, const char *reason)
{
    struct follow *f = arg;
    /* Only a progress line drawn in place needs breaking, and only once: the lines that
     * follow it start on a fresh line already. */
    follow_progress_break(f);
    fprintf(stderr, "jackdaw: lost connection to node %u: %s\n", node, reason ? reason : "");
}

int job_workload_digest(const char *path, char hex[33])
{
    hex[0] = '\0';
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
    if (!f)
        return -ENOENT;
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    unsigned char buf[65536], out[16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        crypto_generichash_update(&st, buf, n);
    int err = ferror(f);
    fclose(f);
    if (err)
        return -EIO;
    crypto_generichash_final(&st, out, sizeof out);
    sodium_bin2hex(hex, 33, out, sizeof out);
    return 0;
}

/* Tells the collector what this job is, before its first event: a trace read later maps
 * task numbers to the workload's ids.  A collector that cannot be reached, or is lost
 * before it has written them, gets them from a file kept in the work directory once it
 * is back; it costs the run nothing either way. */
static void record_job(const char *who, const struct job_options *o, const struct auth_key *key,
                       uint32_t job)
{
    if (!o->cluster->collector.host[0])
        return;
    char digest[33];
    job_workload_digest(o->workload_path, digest);
    struct tclient *t = NULL;
    char *cause = NULL;
    int rc = tclient_connect(&t, o->cluster, key, 5000, &cause);
    if (rc == 0)
        rc = tclient_record_job(t, o->wl, job, digest, submit_mode_name(o->mode), 30000,
                                &cause);
    tclient_destroy(t);
    if (rc < 0) {
        char *kept = NULL, *why = NULL;
        if (tclient_keep_job(o->cluster, o->wl, job, digest, submit_mode_name(o->mode), &kept,
                             &why) == 0)
            fprintf(stderr, "jackdaw %s: %s; the job's trace records wait in '%s' for the "
                    "collector to come back\n", who, cause ? cause : strerror(-rc), kept);
        else
            fprintf(stderr, "jackdaw %s: warning: the trace will not name this job's tasks: "
                    "%s, and %s\n", who, cause ? cause : strerror(-rc), why);
        free(kept);
        free(why);
    }
    free(cause);
}

/* Follows job f->job to its end on a connected client, prints its summary and makes
 * the job's records be forgotten; returns the exit code.  Shared by submit --wait and
 * attach. */
static int follow_to_end(const char *who, struct client *c, struct follow *f, bool quiet,
                         bool json, double timeout_s, const char *mode,
                         const char *cluster_path)
{
    uint32_t nodes = client_nodes(c);
    char *cause = NULL;
    int code = 0, rc;
    if (!quiet)
        follow_progress_start(f, client_loop(c));
    /* Ctrl-C, a batch system's SIGTERM or a closed terminal end the follow cleanly, so
     * that `run` still stops the cluster it started. */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    uv_signal_t sig[3];
    for (int i = 0; i < 3; i++) {
        uv_signal_init(client_loop(c), &sig[i]);
        sig[i].data = f;
        uv_signal_start(&sig[i], on_signal, sigs[i]);
    }
    if (sigcatch_pending()) {
        f->interrupted = sigcatch_pending();
        f->stop = 1;
    }
    rc = client_wait(c, &f->stop, timeout_s > 0 ? (int)(timeout_s * 1000) : -1);
    for (int i = 0; i < 3; i++)
        uv_close((uv_handle_t *)&sig[i], NULL);
    uv_run(client_loop(c), UV_RUN_NOWAIT);
    /* libuv restored the default dispositions; keep catching until the caller is done. */
    sigcatch_install(true);
    if (f->interrupted)
        sigcatch_note(f->interrupted);
    follow_progress_stop(f);
    if (f->interrupted) {
        fprintf(stderr, "jackdaw %s: interrupted by signal %d with %u of %u tasks ended\n",
                who, f->interrupted, f->ended, f->wl->count);
        /* The daemons keep running the job without a client (run stops its cluster). */
        if (strcmp(who, "run") != 0)
            fprintf(stderr, "jackdaw %s: job %u goes on; 'jackdaw attach %u' follows it "
                    "again\n", who, f->job, f->job);
        code = EXIT_INTERRUPTED;
        return code;
    }
    if (rc == -ETIMEDOUT && !f->finished) {
        fprintf(stderr, "jackdaw %s: timed out after --timeout %g s with %u of %u tasks ended\n",
                who, timeout_s, f->ended, f->wl->count);
        code = EXIT_TIMED_OUT;
        return code;
    }
    if (rc < 0 && !f->finished) {
        fprintf(stderr, "jackdaw %s: lost the cluster with %u of %u tasks ended\n", who,
                f->ended, f->wl->count);
        code = EXIT_CLUSTER;
        return code;
    }
    struct proto_stats *stats = xcalloc(nodes, sizeof *stats);
    bool *got = xcalloc(nodes, sizeof *got);
    rc = client_stats_some(c, stats, got, 5000, &cause);
    struct summary s;
    follow_summary(f, stats, got, nodes, mode, &s);
    /* The outcome stays in the job file: the nodes forget the job once it is over, and
     * `jackdaw jobs` still lists it. */
    if (cluster_path)
        (void)job_file_finish(cluster_path, f->job, &s, f->t_last_end);
    if (json)
        follow_summary_print_json(&s, stdout);
    else
        follow_summary_print_text(&s, f, stdout);
    /* A node declared dead cannot answer, and the summary says why already. */
    uint32_t silent = 0;
    for (uint32_t i = 0; i < nodes; i++) {
        bool dead = false;
        for (uint32_t k = 0; k < s.ndeaths; k++)
            dead |= s.deaths[k].node == i;
        silent += !got[i] && !dead;
    }
    if (rc < 0 && silent)
        fprintf(stderr, "jackdaw %s: node statistics incomplete: %s\n", who, cause);
    follow_summary_fini(&s);
    free(got);
    for (uint32_t i = 0; i < nodes; i++)
        proto_stats_fini(&stats[i]);
    free(stats);
    code = f->failed || f->cancelled || f->duplicates ? EXIT_RUN_FAILED : 0;
    /* Every task has ended and the summary is out: nothing will read the job's metadata
     * records again, and a cluster that runs job after job would otherwise keep every
     * record it ever had.  Best effort: a node that cannot be told keeps them, as every
     * node does for a job nobody follows to its end. */
    if (f->finished) {
        char *why = NULL;
        client_forget_job(c, f->job, 5000, &why);
        free(why);
    }
    free(cause);
    return code;
}

int job_check_keep(const char *who, const struct workload *wl, const char *keep)
{
    for (const char *p = keep; p && *p;) {
        size_t n = strcspn(p, ",");
        char *id = xstrndup(p, n);
        bool known = workload_find(wl, id) >= 0 || workload_find_object(wl, id) >= 0;
        if (!known)
            fprintf(stderr, "jackdaw %s: --keep-object: '%s' is no task or object of %s\n", who,
                    id, wl->name);
        free(id);
        if (!known)
            return EXIT_BAD_INPUT;
        p += n + (p[n] == ',');
    }
    return 0;
}

/*
 * --outputs DIR: the job's final outputs — of its done tasks, the declared outputs no
 * task reads, and the output of those without declared outputs that no task reads (it
 * has no children) — and the --keep-object ids, fetched once the job has ended.  A done task
 * whose output was empty kept no object: it gets an empty file.  Returns 0, or
 * EXIT_RUN_FAILED after naming what could not be fetched.
 */
static int fetch_outputs(const char *who, struct client *c, const struct follow *f,
                         const char *dir, const char *keep, bool json)
{
    const struct workload *wl = f->wl;
    int rc = fs_mkdirs(dir, 0755, NULL);
    if (rc < 0) {
        fprintf(stderr, "jackdaw %s: --outputs: cannot create '%s': %s\n", who, dir,
                strerror(-rc));
        return EXIT_RUN_FAILED;
    }
    uint32_t files = 0, failed = 0;
    uint64_t total = 0;
    /* A declared output no task reads is final, whether its task has children or not. */
    bool *read = xcalloc(wl->object_count ? wl->object_count : 1, sizeof *read);
    for (uint32_t i = 0; i < wl->count; i++)
        for (uint32_t k = 0; k < wl->tasks[i].num_inputs; k++)
            read[wl->tasks[i].inputs[k]] = true;
    for (uint32_t i = 0; i < wl->count; i++) {
        const struct workload_task *t = &wl->tasks[i];
        if (f->status[i] != TASK_DONE + 1 || (t->num_children && !t->num_outputs))
            continue;
        for (uint32_t k = 0; k < (t->num_outputs ? t->num_outputs : 1); k++) {
            if (t->num_outputs && read[t->outputs[k]])
                continue;
            const char *id = t->num_outputs ? wl->objects[t->outputs[k]].id : t->id;
            uint64_t bytes = 0;
            char *why = NULL;
            if (fetchout_one(c, wl, f->job, id, dir, !t->num_outputs, &bytes, 60000, &why) < 0) {
                fprintf(stderr, "jackdaw %s: --outputs: %s\n", who, why);
                failed++;
            } else {
                files++;
                total += bytes;
            }
            free(why);
        }
    }
    free(read);
    for (const char *p = keep; p && *p;) {
        size_t n = strcspn(p, ",");
        char *id = xstrndup(p, n);
        int64_t t = workload_find(wl, id);
        uint64_t bytes = 0;
        char *why = NULL;
        if (fetchout_one(c, wl, f->job, id, dir, t >= 0 && f->status[t] == TASK_DONE + 1,
                         &bytes, 60000, &why) < 0) {
            fprintf(stderr, "jackdaw %s: --keep-object: %s\n", who, why);
            failed++;
        } else {
            files++;
            total += bytes;
        }
        free(why);
        free(id);
        p += n + (p[n] == ',');
    }
    /* Beside the summary, not inside it: --json's stdout stays one JSON object. */
    fprintf(json ? stderr : stdout, "  outputs          %u file%s, %llu bytes in %s%s\n", files,
            files == 1 ? "" : "s", (unsigned long long)total, dir,
            failed ? " (some could not be fetched)" : "");
    return failed ? EXIT_RUN_FAILED : 0;
}

int job_submit(const char *who, const struct job_options *o)
{
    struct auth_key key;
    char *cause = NULL;
    if (auth_key_load(o->cluster->key_path, &key, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    if (workload_check_nodes(o->wl, o->cluster->count, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    /* A task wider than every node could never run: refused before anything is sent.
     * One wider than some nodes only runs alone on those it lands on (node_task.c). */
    uint32_t widest = 0, most = workload_max_cores(o->wl, &widest), slots = 0;
    for (uint32_t i = 0; i < o->cluster->count; i++)
        if (o->cluster->nodes[i].slots > slots)
            slots = o->cluster->nodes[i].slots;
    if (most > slots) {
        fprintf(stderr, "jackdaw %s: %s:%u: task '%s' asks for %u cores; the widest node of "
                "the cluster has %u slots\n", who, o->wl->name, o->wl->tasks[widest].line,
                o->wl->tasks[widest].id, most, slots);
        return EXIT_BAD_INPUT;
    }
    FILE *records = NULL;
    if (o->records && !(records = fopen(o->records, "w"))) {
        fprintf(stderr, "jackdaw %s: cannot write records '%s': %s\n", who, o->records,
                strerror(errno));
        return EXIT_BAD_INPUT;
    }
    uint32_t nodes = o->cluster->count;
    double *speeds = xmalloc(nodes * sizeof *speeds);
    for (uint32_t i = 0; i < nodes; i++)
        speeds[i] = o->cluster->nodes[i].speed;
    struct follow f;
    uint32_t job = client_new_job();
    follow_init(&f, o->wl, job, nodes, speeds, 0, records);
    free(speeds);
    struct client_callbacks cb = {.arg = &f, .on_task_end = follow_on_task_end,
                                  .on_node_lost = on_node_lost,
                                  .on_task_listed = follow_listed_again};
    struct client *c = client_create(o->cluster, &key, &cb);
    int code = 0;
    int rc = client_connect(c, 10000, &cause);
    if (rc == 0)
        record_job(who, o, &key, job);
    /* The nodes' counters before this job, so that its summary counts its own steals
     * rather than the cluster's whole life. */
    if (rc == 0 && o->wait)
        follow_take_baseline(&f, c);
    if (rc == 0)
        rc = client_submit(c, o->wl, job, o->mode, 60000, &f.t_submit, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause ? cause : strerror(-rc));
        code = EXIT_CLUSTER;
        goto out;
    }
    if (o->cluster_path)
        job_file_write(o->cluster_path, job, o->workload_path, o->scale, o->wl->count,
                       f.t_submit);
    if (!o->wait) {
        printf("submitted job %u: %u tasks from '%s' (%s)\n", job, o->wl->count, o->workload_path,
               submit_mode_name(o->mode));
        goto out;
    }
    code = follow_to_end(who, c, &f, o->quiet, o->json, o->timeout_s,
                         submit_mode_name(o->mode), o->cluster_path);
    if (o->outputs && (code == 0 || code == EXIT_RUN_FAILED)) {
        int got = fetch_outputs(who, c, &f, o->outputs, o->keep, o->json);
        if (got && !code)
            code = got;
    }
out:
    client_destroy(c);
    follow_fini(&f);
    free(cause);
    if (records)
        fclose(records);
    return code;
}

/* ---- attach ------------------------------------------------------------------------ */

struct attach_state {
    struct follow *f;
    struct proto_job_count sum; /* the nodes' own counts of the job, summed */
};

static void on_job_ended(void *arg, uint32_t node, const struct proto_job_ended *m)
{
    struct attach_state *a = arg;
    (void)node;
    /* Every part of a node's answer repeats its counts: taken once, from the last. */
    if (m->last) {
        if (m->counts.tasks > a->sum.tasks)
            a->sum.tasks = m->counts.tasks;
        a->sum.done += m->counts.done;
        a->sum.failed += m->counts.failed;
        a->sum.cancelled += m->counts.cancelled;
    }
    for (uint32_t i = 0; i < m->count; i++)
        follow_on_task_listed(a->f, &m->ends[i]);
}

static void attach_task_end(void *arg, const struct proto_task_end *e)
{
    follow_on_task_end(((struct attach_state *)arg)->f, e);
}

static void attach_task_listed(void *arg, const struct proto_task_end *e)
{
    follow_on_task_listed(((struct attach_state *)arg)->f, e);
}

static void attach_node_lost(void *arg, uint32_t node, const char *reason)
{
    on_node_lost(((struct attach_state *)arg)->f, node, reason);
}

/* The wall time job `job` was submitted, from its job file (0 when unknown). */
static int64_t job_submitted_ns(const char *cluster_path, uint32_t job)
{
    char *dir = jobs_dir(cluster_path);
    char *path = xasprintf("%s/%u.json", dir, job);
    json_t *o = json_load_file(path, 0, NULL);
    int64_t t = (int64_t)json_integer_value(json_object_get(o, "submitted_ns"));
    json_decref(o);
    free(path);
    free(dir);
    return t;
}

int job_attach(const char *who, const struct attach_options *o)
{
    char *cause = NULL, *workload_path = NULL;
    uint32_t job = 0;
    struct wfcommons_options scale = {0};
    if (job_file_find(o->cluster_path, o->job, &job, &workload_path, &scale, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    struct workload wl;
    if (wfcommons_load_any(&wl, workload_path, &scale, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: job %u's workload: %s\n", who, job, cause);
        free(cause);
        free(workload_path);
        return EXIT_BAD_INPUT;
    }
    struct auth_key key;
    if (auth_key_load(o->cluster->key_path, &key, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        free(workload_path);
        workload_fini(&wl);
        return EXIT_BAD_INPUT;
    }
    FILE *records = NULL;
    if (o->records && !(records = fopen(o->records, "w"))) {
        fprintf(stderr, "jackdaw %s: cannot write records '%s': %s\n", who, o->records,
                strerror(errno));
        free(workload_path);
        workload_fini(&wl);
        return EXIT_BAD_INPUT;
    }
    uint32_t nodes = o->cluster->count;
    double *speeds = xmalloc(nodes * sizeof *speeds);
    for (uint32_t i = 0; i < nodes; i++)
        speeds[i] = o->cluster->nodes[i].speed;
    struct follow f;
    follow_init(&f, &wl, job, nodes, speeds, job_submitted_ns(o->cluster_path, job), records);
    free(speeds);
    struct attach_state a = {.f = &f};
    struct client_callbacks cb = {.arg = &a, .on_task_end = attach_task_end,
                                  .on_node_lost = attach_node_lost, .on_job_ended = on_job_ended,
                                  .on_task_listed = attach_task_listed};
    struct client *c = client_create(o->cluster, &key, &cb);
    int code = 0;
    /* A node already declared dead cannot be reached; whether the job survives its loss
     * is client_wait's to say (the cluster's --replicas), as for submit --wait. */
    int rc = client_connect(c, 10000, &cause);
    uint32_t reached = 0;
    for (uint32_t i = 0; i < nodes; i++)
        reached += client_node_ready(c, i) == 1;
    if (rc < 0 && reached) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        cause = NULL;
        rc = 0;
    }
    if (rc == 0)
        rc = client_attach(c, job, 30000, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause ? cause : strerror(-rc));
        code = EXIT_CLUSTER;
        goto out;
    }
    if (!a.sum.tasks) {
        fprintf(stderr, "jackdaw %s: no node of this cluster knows job %u (was the cluster "
                "restarted since it was submitted?)\n", who, job);
        code = EXIT_BAD_INPUT;
        goto out;
    }
    uint32_t counted = a.sum.done + a.sum.failed + a.sum.cancelled;
    if (!f.finished && counted >= wl.count && f.ended < wl.count) {
        /* Its end was followed already, and that client had the records forgotten. */
        fprintf(stderr, "jackdaw %s: job %u has ended (%u done, %u failed, %u cancelled) and "
                "its summary was printed by the client that followed it\n", who, job,
                a.sum.done, a.sum.failed, a.sum.cancelled);
        code = a.sum.failed || a.sum.cancelled ? EXIT_RUN_FAILED : 0;
        goto out;
    }
    if (!o->quiet)
        fprintf(stderr, "jackdaw %s: job %u: %u of %u tasks had ended\n", who, job, f.ended,
                wl.count);
    code = follow_to_end(who, c, &f, o->quiet, o->json, o->timeout_s, "attached",
                         o->cluster_path);
out:
    client_destroy(c);
    follow_fini(&f);
    free(cause);
    free(workload_path);
    workload_fini(&wl);
    if (records)
        fclose(records);
    return code;
}
