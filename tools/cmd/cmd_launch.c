/*
 * jackdaw launch — start N node daemons on loopback, one per line of a hostfile through
 * a remote shell, or one per node (or task) of a Slurm allocation, and return, leaving
 * a cluster file for submit, status, stop and the console.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/client/dataopts.h"
#include "core/client/launcher.h"
#include "tools/cmd/cmd.h"

static int launch_main(int argc, char **argv)
{
    unsigned long nodes = 0;
    const char *speeds = NULL, *slots_text = NULL, *cluster = NULL, *workdir = NULL,
               *level = "info", *trace = NULL, *hostfile = NULL, *rsh = NULL, *bind = NULL,
               *advertise = NULL, *remote_jackdaw = NULL, *remote_workdir = NULL;
    bool no_trace = false, slurm = false, per_task = false;
    double start_timeout = 30;
    struct dataopts data = {0};
    struct opt opts[] = {
        DATAOPTS_OPTS(&data),
        {"nodes", OPT_UINT, &nodes, "N  number of node daemons (required)"},
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
        {"hostfile", OPT_STRING, &hostfile,
         "FILE  one daemon per line: HOST [slots=N] [speed=F] [addr=A] [port=P]"},
        {"rsh", OPT_STRING, &rsh,
         "CMD  remote shell for --hostfile, run as CMD HOST COMMAND-LINE (default: ssh -o "
         "BatchMode=yes)"},
        {"slurm", OPT_FLAG, &slurm, "  one daemon per node of this Slurm allocation (srun)"},
        {"per-task", OPT_FLAG, &per_task, "  with --slurm: one daemon per Slurm task"},
        {"bind", OPT_STRING, &bind,
         "ADDR  listen on ADDR (local: default 127.0.0.1; hosts: each host's address)"},
        {"advertise", OPT_STRING, &advertise,
         "ADDR  the address clients reach a local cluster (or the collector) at"},
        {"remote-jackdaw", OPT_STRING, &remote_jackdaw,
         "PATH  jackdaw on the hosts (default: this binary's path)"},
        {"remote-workdir", OPT_STRING, &remote_workdir,
         "DIR  work directory on the hosts (default: the local one's path)"},
        {"start-timeout", OPT_DOUBLE, &start_timeout,
         "S  bound on each step of a start on many hosts (default 30)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_launch, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (dataopts_finish(&data, "launch"))
        return EXIT_USAGE;
    bool remote = hostfile || slurm;
    if (hostfile && slurm) {
        fprintf(stderr, "jackdaw launch: give --hostfile or --slurm, not both\n");
        return EXIT_USAGE;
    }
    if (remote && (nodes || speeds || slots_text)) {
        fprintf(stderr, "jackdaw launch: --nodes, --slots and --speeds do not go with %s: "
                        "the %s says\n",
                hostfile ? "--hostfile" : "--slurm", hostfile ? "hostfile" : "allocation");
        return EXIT_USAGE;
    }
    if ((rsh && !hostfile) || (per_task && !slurm) ||
        ((remote_jackdaw || remote_workdir) && !remote)) {
        fprintf(stderr, "jackdaw launch: --rsh goes with --hostfile, --per-task with --slurm, "
                        "--remote-jackdaw and --remote-workdir with either\n");
        return EXIT_USAGE;
    }
    if (!(start_timeout > 0 && start_timeout <= 3600)) {
        fprintf(stderr, "jackdaw launch: --start-timeout is seconds in (0, 3600]\n");
        return EXIT_USAGE;
    }
    if (!remote && (nodes == 0 || nodes > 4096)) {
        fprintf(stderr, "jackdaw launch: --nodes N (1..4096) is required (or --hostfile, "
                        "--slurm)\n");
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
        .trace_path = trace, .hostfile = hostfile, .slurm = slurm, .per_task = per_task,
        .rsh = rsh, .bind = bind, .advertise = advertise, .remote_jackdaw = remote_jackdaw,
        .remote_workdir = remote_workdir, .start_timeout_ms = (int)(start_timeout * 1000),
    };
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
        printf("collector on %s:%d writing %s\n", cl.collector.host, cl.collector.port,
               cl.collector.trace_path);
    cluster_fini(&cl);
    free(path);
    return 0;
}

const struct cmd cmd_launch = {
    .name = "launch",
    .usage = "--nodes N [--slots S|cores] [--speeds LIST|C1..C5] | --hostfile FILE [--rsh CMD] | "
             "--slurm [--per-task] [--cluster FILE] [options]",
    .summary = "start a cluster of node daemons (local, hostfile or Slurm) and return",
    .main = launch_main,
};
