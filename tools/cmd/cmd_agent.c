/*
 * jackdaw agent — the remote side of `launch --hostfile` and `launch --slurm`: started
 * on each host by the launcher's remote shell (or srun), it binds the daemon's socket,
 * takes the key and the cluster file on standard input and starts the daemon
 * (core/client/agent.h has the exchange).  Not for use by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/client/agent.h"
#include "tools/cmd/cmd.h"

static int agent_main(int argc, char **argv)
{
    unsigned long id = 0, port = 0, timeout = 120;
    const char *addr = "auto", *bind = NULL, *workdir = NULL, *level = "info", *slots = "cores";
    bool exec = false, slurm = false, collector = false;
    const char *workload_name = NULL, *workload_digest = NULL;
    struct opt opts[] = {
        {"id", OPT_UINT, &id, "I  the node's id"},
        {"slurm", OPT_FLAG, &slurm, "  the id is SLURM_PROCID"},
        {"addr", OPT_STRING, &addr, "A|auto  the address others reach the node at"},
        {"bind", OPT_STRING, &bind, "A  the address to listen on (default: --addr)"},
        {"port", OPT_UINT, &port, "P  the port to listen on (default: any)"},
        {"workdir", OPT_STRING, &workdir, "DIR  where the key, cluster file and logs go"},
        {"log-level", OPT_STRING, &level, "L  the daemon's log level"},
        {"slots", OPT_STRING, &slots, "cores|slurm-node|slurm-task  where slots come from"},
        {"exec", OPT_FLAG, &exec, "  become the daemon (under srun)"},
        {"collector", OPT_FLAG, &collector, "  start the collector, not a node"},
        {"workload-name", OPT_STRING, &workload_name, "NAME  the collector's trace header"},
        {"workload-digest", OPT_STRING, &workload_digest, "HEX  the collector's trace header"},
        {"timeout", OPT_UINT, &timeout, "S  give up when the launcher is silent this long"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_agent, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    enum agent_slots how = strcmp(slots, "cores") == 0        ? AGENT_SLOTS_CORES
                           : strcmp(slots, "slurm-node") == 0 ? AGENT_SLOTS_SLURM_NODE
                           : strcmp(slots, "slurm-task") == 0 ? AGENT_SLOTS_SLURM_TASK
                                                              : (enum agent_slots)-1;
    if (!workdir || (int)how < 0 || port > 65535 || id >= 4096) {
        fprintf(stderr, "jackdaw agent: needs --workdir, --id below 4096, --port up to 65535 "
                        "and --slots cores|slurm-node|slurm-task\n");
        return EXIT_USAGE;
    }
    struct agent_options o = {
        .id = (uint32_t)id, .slurm_id = slurm, .addr = addr, .bind = bind, .port = (int)port,
        .workdir = workdir, .log_level = level, .exec = exec, .slots = how,
        .timeout_s = (int)timeout, .collector = collector, .workload_name = workload_name,
        .workload_digest = workload_digest,
    };
    char *cause = NULL;
    rc = agent_run(&o, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw agent: %s\n", cause ? cause : "failed");
        free(cause);
        return EXIT_CLUSTER;
    }
    return 0;
}

const struct cmd cmd_agent = {
    .name = "agent",
    .usage = "--id I --workdir DIR [--addr A|auto] [--port P] [--exec]",
    .summary = "the remote side of launch --hostfile/--slurm (started by launch)",
    .main = agent_main,
};
