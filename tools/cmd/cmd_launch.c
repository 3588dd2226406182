/*
 * jackdaw launch — start N node daemons on loopback, one per line of a hostfile through
 * a remote shell, or one per node (or task) of a Slurm allocation, and return, leaving
 * a cluster file for submit, status, stop and the console.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/client/dataopts.h"
#include "core/client/hostopts.h"
#include "core/client/launcher.h"
#include "tools/cmd/cmd.h"

static int launch_main(int argc, char **argv)
{
    /* ULONG_MAX: not given (then the cores); an explicit 0 is refused. */
    unsigned long nodes = ULONG_MAX;
    const char *speeds = NULL, *slots_text = NULL, *cluster = NULL, *workdir = NULL,
               *level = "info", *trace = NULL;
    bool no_trace = false;
    struct hostopts hosts = {0};
    struct dataopts data = {0};
    struct opt opts[] = {
        DATAOPTS_OPTS(&data),
        {"nodes", OPT_UINT, &nodes, "N  number of node daemons (default: the machine's cores)"},
        {"slots", OPT_STRING, &slots_text,
         "S|cores  executor slots per node (default: the machine's cores; 1 with a mix)"},
        {"speeds", OPT_STRING, &speeds,
         "LIST|MIX  speed factors in (0,1], cycled: 1,0.5; or a mix of paper 001: C1..C5"},
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file to write (default: see man)"},
        {"workdir", OPT_STRING, &workdir,
         "DIR  work directory (default: NAME.work beside the cluster file NAME.json)"},
        {"log-level", OPT_STRING, &level, "L  daemons' log level (default info)"},
        {"trace", OPT_STRING, &trace, "FILE  the collector's trace file (default: beside the "
                                      "cluster file, jackdaw-RUNID.avro)"},
        {"no-trace", OPT_FLAG, &no_trace, "  no collector, no trace"},
        HOSTOPTS_OPTS(&hosts),
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_launch, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (dataopts_finish(&data, "launch"))
        return EXIT_USAGE;
    bool remote = hostopts_remote(&hosts);
    if (hostopts_finish(&hosts, "launch", nodes != ULONG_MAX || speeds || slots_text))
        return EXIT_USAGE;
    if (!remote && nodes == ULONG_MAX)
        nodes = launcher_default_nodes();
    else if (remote && nodes == ULONG_MAX)
        nodes = 0; /* the hostfile or the allocation says */
    if (!remote && (nodes == 0 || nodes > 4096)) {
        fprintf(stderr, "jackdaw launch: --nodes N: 1..4096\n");
        return EXIT_USAGE;
    }
    uint32_t slots = 0;
    bool slots_cores = false;
    char *cause = NULL;
    double *check = xmalloc((nodes ? nodes : 1) * sizeof *check);
    rc = launcher_parse_speeds(speeds, check, (uint32_t)nodes, &cause);
    free(check);
    if (rc == 0)
        rc = launcher_parse_slots(slots_text, speeds, &slots, &slots_cores, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw launch: %s\n", cause);
        free(cause);
        return EXIT_USAGE;
    }
    char *path = cluster ? NULL : cluster_default_path();
    struct launch_options o = {
        .nodes = (uint32_t)nodes, .slots = slots, .slots_cores = slots_cores, .speeds = speeds,
        .cluster_path = cluster ? cluster : path, .workdir = workdir, .log_level = level,
        .node_args = data.words, .node_nargs = data.nwords, .trace = !no_trace,
        .trace_path = trace,
    };
    hostopts_apply(&hosts, &o);
    struct cluster cl;
    rc = launcher_start(&o, &cl, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw launch: %s\n", cause ? cause : "failed");
        free(cause);
        free(path);
        return EXIT_CLUSTER;
    }
    printf("launched %u nodes; cluster file %s\n", cl.count, o.cluster_path);
    for (uint32_t i = 0; remote && i < cl.count; i++)
        printf("  node %u on %s at %s:%d, %u slots, pid %d there\n", i, cl.nodes[i].name,
               cl.nodes[i].host, cl.nodes[i].port, cl.nodes[i].slots, cl.nodes[i].remote_pid);
    if (cl.collector.trace_path)
        printf("collector on %s%s%s:%d writing %s\n", cl.collector.name,
               cl.collector.name[0] ? " at " : "", cl.collector.host, cl.collector.port,
               cl.collector.trace_path);
    cluster_fini(&cl);
    free(path);
    return 0;
}

const struct cmd cmd_launch = {
    .name = "launch",
    .usage = "[--nodes N] [--slots S|cores] [--speeds LIST|C1..C5] | --hostfile FILE [--rsh CMD] | "
             "--slurm [--per-task] [--cluster FILE] [options]",
    .summary = "start a cluster of node daemons (local, hostfile or Slurm) and return",
    .main = launch_main,
};
