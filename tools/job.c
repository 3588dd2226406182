/*
 * job — see job.h.
 */
#include "tools/job.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "tools/cmd.h"
#include "tools/follow.h"

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
        if (access(*path, F_OK) != 0)
            fprintf(stderr, "jackdaw %s: no cluster file at '%s' (is a cluster launched? "
                            "'jackdaw launch', or pass --cluster)\n", who, *path);
        else
            fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    if (auth_key_load(cl->key_path, key, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        cluster_fini(cl);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

static volatile sig_atomic_t pending_signal;

static void note_signal(int signum)
{
    pending_signal = signum;
}

void job_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = note_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int job_signal_pending(void)
{
    return pending_signal;
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct follow *f = h->data;
    f->interrupted = signum;
    f->stop = 1;
}

static void on_node_lost(void *arg, uint32_t node, const char *reason)
{
    (void)arg;
    fprintf(stderr, "\njackdaw: lost connection to node %u: %s\n", node, reason ? reason : "");
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
                                  .on_node_lost = on_node_lost};
    struct client *c = client_create(o->cluster, &key, &cb);
    int code = 0;
    int rc = client_connect(c, 10000, &cause);
    if (rc == 0)
        rc = client_submit(c, o->wl, job, o->mode, 60000, &f.t_submit, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause ? cause : strerror(-rc));
        code = EXIT_CLUSTER;
        goto out;
    }
    if (!o->wait) {
        printf("submitted job %u: %u tasks from '%s' (%s)\n", job, o->wl->count, o->workload_path,
               submit_mode_name(o->mode));
        goto out;
    }
    if (!o->quiet)
        follow_progress_start(&f, client_loop(c));
    /* Ctrl-C, a batch system's SIGTERM or a closed terminal end the follow cleanly, so
     * that `run` still stops the cluster it started. */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    uv_signal_t sig[3];
    for (int i = 0; i < 3; i++) {
        uv_signal_init(client_loop(c), &sig[i]);
        sig[i].data = &f;
        uv_signal_start(&sig[i], on_signal, sigs[i]);
    }
    if (pending_signal) {
        f.interrupted = pending_signal;
        f.stop = 1;
    }
    rc = client_wait(c, &f.stop, o->timeout_s > 0 ? (int)(o->timeout_s * 1000) : -1);
    for (int i = 0; i < 3; i++)
        uv_close((uv_handle_t *)&sig[i], NULL);
    uv_run(client_loop(c), UV_RUN_NOWAIT);
    /* libuv restored the default dispositions; keep catching until the caller is done. */
    job_catch_signals();
    if (f.interrupted)
        pending_signal = f.interrupted;
    follow_progress_stop(&f);
    if (f.interrupted) {
        fprintf(stderr, "\njackdaw %s: interrupted by signal %d with %u of %u tasks ended\n",
                who, f.interrupted, f.ended, o->wl->count);
        code = EXIT_INTERRUPTED;
        goto out;
    }
    if (rc < 0 && !f.finished) {
        fprintf(stderr, "jackdaw %s: %s with %u of %u tasks ended\n", who,
                rc == -ETIMEDOUT ? "timed out" : "lost the cluster", f.ended, o->wl->count);
        code = EXIT_CLUSTER;
        goto out;
    }
    struct proto_stats *stats = xcalloc(nodes, sizeof *stats);
    rc = client_stats(c, stats, 5000, &cause);
    struct summary s;
    follow_summary(&f, rc == 0 ? stats : NULL, nodes, submit_mode_name(o->mode), &s);
    if (o->json)
        summary_print_json(&s, stdout);
    else
        summary_print_text(&s, &f, stdout);
    if (rc < 0)
        fprintf(stderr, "jackdaw %s: node statistics incomplete: %s\n", who, cause);
    summary_fini(&s);
    for (uint32_t i = 0; i < nodes; i++)
        free(stats[i].jobs);
    free(stats);
    code = f.failed || f.cancelled || f.duplicates ? EXIT_RUN_FAILED : 0;
out:
    client_destroy(c);
    follow_fini(&f);
    free(cause);
    if (records)
        fclose(records);
    return code;
}
