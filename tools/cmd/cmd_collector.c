/*
 * jackdaw collector — the trace collector's command line.  Normally started by the
 * launcher (one per cluster, with an inherited listening socket); parses flags into a
 * collector_config, taking what they leave out from the cluster file's "collector"
 * entry, and runs trace/collector/collector until told to stop.
 *
 * Started by hand (--listen, or the cluster file's address: a restart after a crash),
 * it registers itself in the cluster file — address, pid, trace — once it listens, so
 * that consoles find it and `jackdaw stop` ends it with the cluster; it refuses to start
 * beside a collector that still runs for the same cluster file.  The launcher records
 * the collectors it starts itself, so a collector on an inherited socket does not.
 * With --detach it becomes a daemon like the one the launcher starts (its own session,
 * its log appended to WORKDIR/collector.log) and the command returns once it serves, or
 * with its exit code and the end of its log when it could not.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/client/launcher.h"
#include "core/model/cluster.h"
#include "tools/cmd/cmd.h"
#include "trace/collector/collector.h"

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

/* Writes this collector into the cluster file: the file is read again first, so that
 * nothing else in it changes. */
static int register_collector(const char *cluster_path, const char *host, int port,
                              const char *trace, char **cause)
{
    struct cluster cl;
    int rc = cluster_load(&cl, cluster_path, cause);
    if (rc < 0)
        return rc;
    snprintf(cl.collector.host, sizeof cl.collector.host, "%s", host);
    cl.collector.port = port;
    cl.collector.pid = (int)getpid();
    char cwd[4096];
    char *abs = trace[0] == '/' || !getcwd(cwd, sizeof cwd) ? xstrdup(trace)
                                                            : xasprintf("%s/%s", cwd, trace);
    free(cl.collector.trace_path);
    cl.collector.trace_path = abs;
    rc = cluster_save(&cl, cluster_path, cause);
    cluster_fini(&cl);
    return rc;
}

/* --detach: the child's end of the pipe the parent waits on; -1 in the foreground. */
static int ready_fd = -1;

/* What on_serving registers; cluster_path NULL for a collector the launcher started. */
struct serving {
    const char *cluster_path, *host, *trace;
    int port;
};

/*
 * The collector listens with its trace open: a collector started by hand registers now,
 * not before, so that one that cannot open its trace (a wrong --trace) leaves the
 * cluster file naming the collector it had; then the parent of a detached one may
 * return.  Nobody is served before this returns.
 */
static int on_serving(void *ctx, char **cause)
{
    const struct serving *sv = ctx;
    if (sv->cluster_path) {
        char *why = NULL;
        int rc = register_collector(sv->cluster_path, sv->host, sv->port, sv->trace, &why);
        if (rc < 0) {
            *cause = xasprintf("cannot register in the cluster file: %s", why);
            free(why);
            return rc;
        }
        log_info("registered in '%s' as the collector (pid %d) at %s:%d", sv->cluster_path,
                 (int)getpid(), sv->host, sv->port);
    }
    if (ready_fd >= 0) {
        ssize_t n;
        do
            n = write(ready_fd, "1", 1);
        while (n < 0 && errno == EINTR);
        close(ready_fd);
        ready_fd = -1;
    }
    return 0;
}

/* The last lines of a log, for a detached collector that exited before serving. */
static void print_log_tail(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char buf[2048];
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : 0;
    if (size > (long)sizeof buf - 1)
        fseek(f, size - (long)sizeof buf + 1, SEEK_SET);
    else
        rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    fputs(buf, stderr);
}

/*
 * Forks the collector into its own session with its output appended to `log`.  In the
 * child, returns -1 (it goes on, and tells the parent through ready_fd once it serves).
 * In the parent, waits for that or for the child's end, and returns the exit code.
 */
static int detach(const char *log, const char *host, int port, const char *trace)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        fprintf(stderr, "jackdaw collector: cannot detach: %s\n", strerror(errno));
        return EXIT_INTERNAL;
    }
    int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (logfd < 0) {
        fprintf(stderr, "jackdaw collector: cannot open its log '%s': %s\n", log, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return EXIT_BAD_INPUT;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "jackdaw collector: cannot detach: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        close(logfd);
        return EXIT_INTERNAL;
    }
    if (pid == 0) {
        setsid();
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        close(logfd);
        if (devnull > 2)
            close(devnull);
        close(fds[0]);
        ready_fd = fds[1];
        return -1;
    }
    close(logfd);
    close(fds[1]);
    char c;
    ssize_t n;
    do
        n = read(fds[0], &c, 1);
    while (n < 0 && errno == EINTR);
    close(fds[0]);
    if (n == 1) {
        printf("collector (pid %d) on %s:%d writing %s; log %s\n", (int)pid, host, port, trace,
               log);
        return 0;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    fprintf(stderr, "jackdaw collector: the collector (pid %d) exited before serving; its log "
            "'%s' ends:\n", (int)pid, log);
    print_log_tail(log);
    return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : EXIT_INTERNAL;
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
    bool detached = false;
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
        {"detach", OPT_FLAG, &detached, "  run in the background, log appended to the cluster's "
                                        "WORKDIR/collector.log; return once it serves"},
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
    if (detached && listen_fd >= 0) {
        fprintf(stderr, "jackdaw collector: --detach is for a collector started by hand, not "
                "with --listen-fd\n");
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
    struct auth_key key = {0};
    if (code == 0 && auth_key_load(cl.key_path, &key, &cause) < 0) {
        fprintf(stderr, "jackdaw collector: %s\n", cause ? cause : "cannot load the key");
        code = EXIT_BAD_INPUT;
    }
    bool by_hand = listen_fd < 0;
    if (code == 0 && by_hand && launcher_daemon_running(cl.collector.pid, cluster_path) &&
        cl.collector.pid != (int)getpid()) {
        fprintf(stderr, "jackdaw collector: a collector (pid %d) already runs for '%s' at "
                "%s:%d; stop it first (kill %d)\n", cl.collector.pid, cluster_path,
                cl.collector.host, cl.collector.port, cl.collector.pid);
        code = EXIT_CLUSTER;
    }
    if (code == 0 && by_hand) {
        /* Bound here rather than by the collector so that the port is known, and
         * registered, before the first node or console looks for it. */
        uint16_t bound16 = 0;
        int fd = launcher_listen(host, port, &bound16, &cause);
        int bound = bound16;
        if (fd < 0) {
            fprintf(stderr, "jackdaw collector: %s\n", cause);
            code = EXIT_CLUSTER;
        } else if (detached && !cl.workdir) {
            fprintf(stderr, "jackdaw collector: --detach logs to the cluster's work directory, "
                    "and '%s' names none\n", cluster_path);
            close(fd);
            code = EXIT_BAD_INPUT;
        } else {
            /* Bound before the fork: a port in use is said here, on the terminal. */
            if (detached) {
                char *log = xasprintf("%s/collector.log", cl.workdir);
                int parent = detach(log, host, bound, trace);
                free(log);
                if (parent >= 0) {
                    close(fd);
                    free(cause);
                    cluster_fini(&cl);
                    return parent;
                }
            }
            listen_fd = fd;
            port = bound;
        }
    }
    struct serving serving = {.cluster_path = by_hand ? cluster_path : NULL, .host = host,
                              .port = port, .trace = trace};
    struct collector_config cfg = {
        .cluster = &cl, .trace_path = trace, .listen_fd = (int)listen_fd, .host = host,
        .port = port, .workload_name = workload_name, .workload_digest = workload_digest,
        .state_floor_ms = (uint32_t)state_ms, .on_serving = on_serving, .serving_ctx = &serving,
    };
    if (code == 0) {
        cfg.key = key;
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
    .usage = "--cluster FILE [--trace FILE] [--listen-fd FD | --listen HOST:PORT] [--detach] "
             "[options]",
    .summary = "run the trace collector (normally started by launch or run)",
    .main = collector_main,
};
