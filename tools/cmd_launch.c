/*
 * jackdaw launch — start N node daemons on loopback and return, leaving a cluster file
 * for submit, status, stop and the console.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tools/cmd.h"
#include "tools/dataopts.h"
#include "tools/launcher.h"

static int launch_main(int argc, char **argv)
{
    unsigned long nodes = 0, slots = 0, neighbours = 0, widen_after = 0, widen_by = 0;
    double poll_initial = 0, poll_max = 0;
    const char *speeds = NULL, *cluster = NULL, *workdir = NULL, *steal = "adaptive",
               *level = "info";
    struct dataopts data = {0};
    struct opt opts[] = {
        DATAOPTS_OPTS(&data),
        {"nodes", OPT_UINT, &nodes, "N  number of node daemons (required)"},
        {"slots", OPT_UINT, &slots, "S  executor slots per node (default: cores)"},
        {"speeds", OPT_STRING, &speeds, "LIST  speed factors in (0,1], cycled: 1,0.5"},
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file to write (default: see man)"},
        {"workdir", OPT_STRING, &workdir, "DIR  work directory (default: beside the cluster file)"},
        {"steal", OPT_STRING, &steal, "MODE  adaptive | random1 | none"},
        {"neighbours", OPT_UINT, &neighbours, "K  victims per steal attempt (default ceil(sqrt N))"},
        {"poll-initial-ms", OPT_DOUBLE, &poll_initial, "MS  first back-off wait (default 1)"},
        {"poll-max-ms", OPT_DOUBLE, &poll_max, "MS  back-off bound (default 50000)"},
        {"widen-after", OPT_UINT, &widen_after, "N  failures in a row before asking more victims (3)"},
        {"widen-by", OPT_UINT, &widen_by, "N  victims added each time (2)"},
        {"log-level", OPT_STRING, &level, "L  daemons' log level (default info)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_launch, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (dataopts_finish(&data, "launch"))
        return EXIT_USAGE;
    if (nodes == 0 || nodes > 4096) {
        fprintf(stderr, "jackdaw launch: --nodes N (1..4096) is required\n");
        return EXIT_USAGE;
    }
    char *path = cluster ? NULL : cluster_default_path();
    struct launch_options o = {
        .nodes = (uint32_t)nodes, .slots = (uint32_t)slots, .speeds = speeds,
        .cluster_path = cluster ? cluster : path, .workdir = workdir, .steal = steal,
        .neighbours = (uint32_t)neighbours, .poll_max_ms = poll_max,
        .poll_initial_ms = poll_initial, .widen_after = (uint32_t)widen_after,
        .widen_by = (uint32_t)widen_by, .log_level = level, .node_args = data.words,
        .node_nargs = data.nwords,
    };
    struct cluster cl;
    char *cause = NULL;
    rc = launcher_start(&o, &cl, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw launch: %s\n", cause ? cause : "failed");
        free(cause);
        free(path);
        return EXIT_CLUSTER;
    }
    printf("launched %u nodes; cluster file %s\n", cl.count, o.cluster_path);
    cluster_fini(&cl);
    free(path);
    return 0;
}

const struct cmd cmd_launch = {
    .name = "launch",
    .usage = "--nodes N [--slots S] [--speeds LIST] [--cluster FILE] [options]",
    .summary = "start a local cluster of node daemons and return",
    .main = launch_main,
};
