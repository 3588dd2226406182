/*
 * jackdaw stop — stop every daemon of a cluster and remove its cluster file.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tools/cmd.h"
#include "tools/job.h"
#include "tools/launcher.h"

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
    rc = launcher_stop(&cl, cluster, 5000, &cause);
    if (rc < 0)
        fprintf(stderr, "jackdaw stop: %s\n", cause);
    else
        printf("stopped %u nodes\n", cl.count);
    free(cause);
    cluster_fini(&cl);
    return rc < 0 ? EXIT_CLUSTER : 0;
}

const struct cmd cmd_stop = {
    .name = "stop",
    .usage = "[--cluster FILE]",
    .summary = "stop a cluster's daemons",
    .main = stop_main,
};
