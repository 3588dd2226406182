/*
 * jackdaw stop — stop every daemon of a cluster and remove its cluster file and key,
 * then say what was found: which daemons stopped, which were already gone (a crash, a
 * kill -9) and which had to be killed.  Only daemons that were running are counted as
 * stopped.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/client/job.h"
#include "core/client/launcher.h"
#include "tools/cmd/cmd.h"

/* One line per daemon that did not simply stop when asked; returns how many stopped. */
static uint32_t report_nodes(const struct cluster *cl, const enum launcher_found *found,
                             uint32_t *unreached)
{
    uint32_t stopped = 0;
    for (uint32_t i = 0; i < cl->count; i++) {
        const struct cluster_node *n = &cl->nodes[i];
        switch (found[i]) {
        case LAUNCHER_STOPPED: stopped++; break;
        case LAUNCHER_KILLED:
            printf("node %u (pid %d) did not stop when asked; killed\n", i, n->pid);
            stopped++;
            break;
        case LAUNCHER_NOT_RUNNING:
            if (n->remote_pid)
                printf("node %u on %s (pid %d there) was not running\n", i, n->name,
                       n->remote_pid);
            else
                printf("node %u (pid %d) was not running\n", i, n->pid);
            break;
        case LAUNCHER_ASKED:
            printf("node %u at %s:%d (no pid: started elsewhere) was asked to stop\n", i, n->host,
                   n->port);
            stopped++;
            break;
        case LAUNCHER_UNREACHED:
            printf("node %u at %s:%d (no pid: started elsewhere) did not answer; it may still "
                   "run\n",
                   i, n->host, n->port);
            (*unreached)++;
            break;
        case LAUNCHER_REMOTE_KILLED:
            printf("node %u on %s (pid %d there) did not answer; ended through the remote "
                   "shell\n",
                   i, n->name, n->remote_pid);
            stopped++;
            break;
        case LAUNCHER_NO_DAEMON: break;
        }
    }
    return stopped;
}

static int stop_main(int argc, char **argv)
{
    const char *cluster = NULL;
    struct opt opts[] = {
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_stop, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct cluster cl;
    struct auth_key key;
    rc = job_open_cluster("stop", &cluster, &cl, &key);
    if (rc)
        return rc;
    char *cause = NULL;
    enum launcher_found *found = xcalloc(cl.count + 1, sizeof *found);
    rc = launcher_stop_report(&cl, cluster, 5000, found, &cause);
    uint32_t unreached = 0;
    uint32_t stopped = report_nodes(&cl, found, &unreached);
    enum launcher_found col = found[cl.count];
    const struct cluster_collector *cc = &cl.collector;
    if (col == LAUNCHER_NOT_RUNNING && cc->remote_pid)
        printf("the collector on %s (pid %d there) was not running\n", cc->name, cc->remote_pid);
    else if (col == LAUNCHER_NOT_RUNNING)
        printf("the collector (pid %d) was not running\n", cc->pid);
    else if (col == LAUNCHER_KILLED)
        printf("the collector (pid %d) did not stop when asked; killed\n", cc->pid);
    else if (col == LAUNCHER_REMOTE_KILLED)
        printf("the collector on %s (pid %d there) did not stop when asked; ended through the "
               "remote shell\n", cc->name, cc->remote_pid);
    else if (col == LAUNCHER_ASKED || col == LAUNCHER_UNREACHED)
        printf("the collector on %s (pid %d there) %s; it may still run\n", cc->name,
               cc->remote_pid, col == LAUNCHER_ASKED ? "was asked to stop but did not"
                                                     : "did not answer");
    if (col == LAUNCHER_ASKED || col == LAUNCHER_UNREACHED)
        unreached++;
    const char *and_collector =
        col == LAUNCHER_STOPPED || col == LAUNCHER_KILLED || col == LAUNCHER_REMOTE_KILLED
            ? " and the collector"
            : "";
    if (stopped == cl.count)
        printf("stopped %u nodes%s\n", stopped, and_collector);
    else
        printf("stopped %u of %u nodes%s\n", stopped, cl.count, and_collector);
    if (rc < 0)
        fprintf(stderr, "jackdaw stop: %s\n", cause);
    free(cause);
    free(found);
    cluster_fini(&cl);
    return rc < 0 || unreached ? EXIT_CLUSTER : 0;
}

const struct cmd cmd_stop = {
    .name = "stop",
    .usage = "[--cluster FILE]",
    .summary = "stop a cluster's daemons",
    .main = stop_main,
};
