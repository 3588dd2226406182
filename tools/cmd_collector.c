/*
 * jackdaw collector — the trace collector's command line.  Normally started by the
 * launcher (one per cluster, with an inherited listening socket); parses flags into a
 * collector_config, taking what they leave out from the cluster file's "collector"
 * entry, and runs trace/collector until told to stop.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/model/cluster.h"
#include "trace/collector.h"
#include "tools/cmd.h"

/* "HOST:PORT" or "[V6]:PORT" into host[n] and *port; -1 when it is neither. */
static int parse_listen(const char *s, char *host, size_t n, int *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return -1;
    const char *h = s;
    size_t hlen = (size_t)(colon - s);
    if (h[0] == '[') {
        if (hlen < 3 || h[hlen - 1] != ']')
            return -1;
        h++;
        hlen -= 2;
    }
    char *end = NULL;
    long p = strtol(colon + 1, &end, 10);
    if (hlen == 0 || hlen >= n || end == colon + 1 || *end || p < 0 || p > 65535)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (int)p;
    return 0;
}

static int exit_code(int status)
{
    switch (status) {
    case COLLECTOR_OK: return 0;
    case COLLECTOR_BAD_CONFIG:
    case COLLECTOR_BAD_TRACE: return EXIT_BAD_INPUT;
    case COLLECTOR_NO_LISTEN: return EXIT_CLUSTER;
    default: return EXIT_INTERNAL;
    }
}

static int collector_main(int argc, char **argv)
{
    const char *cluster_path = NULL, *trace = NULL, *listen = NULL, *level = "info";
    const char *workload_name = NULL, *workload_digest = NULL;
    long listen_fd = -1;
    unsigned long state_ms = COLLECTOR_STATE_FLOOR_MS;
    struct opt opts[] = {
        {"cluster", OPT_STRING, &cluster_path, "FILE  cluster file (nodes, run, key)"},
        {"trace", OPT_STRING, &trace, "FILE  trace to write or resume (default: the cluster "
                                      "file's collector.trace)"},
        {"listen-fd", OPT_INT, &listen_fd, "FD  inherited listening socket"},
        {"listen", OPT_STRING, &listen, "HOST:PORT  address to listen on (default: the "
                                        "cluster file's collector entry)"},
        {"workload-name", OPT_STRING, &workload_name, "N  workload name for the run header"},
        {"workload-digest", OPT_STRING, &workload_digest, "D  workload digest for the run header"},
        {"state-ms", OPT_UINT, &state_ms, "MS  shortest period of the consoles' live state "
                                          "(default 100)"},
        {"log-level", OPT_STRING, &level, "L  debug | info | warn | error"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_collector, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!cluster_path) {
        fprintf(stderr, "jackdaw collector: --cluster is required\n");
        return EXIT_USAGE;
    }
    if (listen && listen_fd >= 0) {
        fprintf(stderr, "jackdaw collector: give --listen or --listen-fd, not both\n");
        return EXIT_USAGE;
    }
    if (listen_fd < -1 || listen_fd > INT_MAX) {
        fprintf(stderr, "jackdaw collector: --listen-fd %ld is not a file descriptor\n", listen_fd);
        return EXIT_USAGE;
    }
    if (state_ms == 0 || state_ms > 3600u * 1000) {
        fprintf(stderr, "jackdaw collector: --state-ms %lu is not in 1..3600000\n", state_ms);
        return EXIT_USAGE;
    }
    char host[64] = "";
    int port = 0;
    if (listen && parse_listen(listen, host, sizeof host, &port) < 0) {
        fprintf(stderr, "jackdaw collector: --listen '%s' is not HOST:PORT\n", listen);
        return EXIT_USAGE;
    }
    int lvl = log_level_parse(level);
    if (lvl < 0) {
        fprintf(stderr, "jackdaw collector: unknown log level '%s'\n", level);
        return EXIT_USAGE;
    }
    log_set_level((enum log_level)lvl);
    log_set_tag("collector");

    struct cluster cl;
    char *cause = NULL;
    if (cluster_load(&cl, cluster_path, &cause) < 0) {
        fprintf(stderr, "jackdaw collector: %s\n", cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    int code = 0;
    if (!trace)
        trace = cl.collector.trace_path;
    if (!listen && listen_fd < 0) {
        snprintf(host, sizeof host, "%s", cl.collector.host);
        port = cl.collector.port;
    }
    if (!trace) {
        fprintf(stderr, "jackdaw collector: no --trace, and the cluster file '%s' names no "
                "collector trace\n", cluster_path);
        code = EXIT_USAGE;
    } else if (listen_fd < 0 && !host[0]) {
        fprintf(stderr, "jackdaw collector: no --listen or --listen-fd, and the cluster file "
                "'%s' has no collector entry\n", cluster_path);
        code = EXIT_USAGE;
    }
    struct collector_config cfg = {
        .cluster = &cl, .trace_path = trace, .listen_fd = (int)listen_fd, .host = host,
        .port = port, .workload_name = workload_name, .workload_digest = workload_digest,
        .state_floor_ms = (uint32_t)state_ms,
    };
    if (code == 0 && auth_key_load(cl.key_path, &cfg.key, &cause) < 0) {
        fprintf(stderr, "jackdaw collector: %s\n", cause ? cause : "cannot load the key");
        code = EXIT_BAD_INPUT;
    }
    if (code == 0) {
        rc = collector_run(&cfg, &cause);
        if (rc < 0)
            fprintf(stderr, "jackdaw collector: %s\n", cause ? cause : "failed");
        code = exit_code(rc);
    }
    free(cause);
    cluster_fini(&cl);
    return code;
}

const struct cmd cmd_collector = {
    .name = "collector",
    .usage = "--cluster FILE [--trace FILE] [--listen-fd FD | --listen HOST:PORT] [options]",
    .summary = "run the trace collector (normally started by launch or run)",
    .main = collector_main,
};
