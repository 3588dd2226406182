/*
 * launcher — starts and stops a cluster of node daemons, on loopback or (with a hostfile
 * or inside a Slurm allocation, through core/client/remote.c) on many hosts, for
 * `jackdaw launch`, `jackdaw run`, `jackdaw stop`, `jackdaw collector` and the console
 * (tui/session.c; its launch form, tui/form.c, checks speeds with launcher_parse_speeds).
 *
 * Each daemon gets a listening socket the launcher already bound (so no port can be
 * taken between choosing and binding), its own session (it outlives the terminal that
 * launched it), and a log file WORKDIR/node-I.log.  Unless told not to, a collector
 * (`jackdaw collector`, log WORKDIR/collector.log) starts first and the daemons stream
 * their traces to it; it stops last.  The cluster file (mode 0600) names
 * the key, the work directory and every node's address and pid; the key and the work
 * directory are named after the cluster file (cluster_owned_path), and a launch
 * refuses to overwrite those of a cluster that still runs.
 * Return convention: 0 or negative errno with *cause.
 */
#ifndef JACKDAW_LAUNCHER_H
#define JACKDAW_LAUNCHER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model/cluster.h"

struct launch_options {
    uint32_t nodes;
    uint32_t slots;         /* every node's slots; 0: see launcher_node_slots */
    bool slots_cores;       /* `--slots cores`: each node of the mix in `speeds` gets its
                             * cores as slots (slots is then 0) */
    const char *speeds;     /* "1,0.5,..." cycled over the nodes, or a heterogeneous mix of
                             * paper 001 (none, C1..C5: core/model/mix.h); NULL: all 1.0 */
    const char *cluster_path; /* where the cluster file goes */
    const char *workdir;    /* NULL: next to the cluster file */
    const char *log_level;  /* NULL: info */
    bool die_with_parent;   /* daemons get SIGTERM when the launching process dies (run) */
    const char *const *node_args; /* more "--flag value" words for every daemon (stealing,
                                   * placement, data plane: dataopts.h), or NULL */
    int node_nargs;
    /* tracing: a collector is started first unless trace is false */
    bool trace;
    const char *trace_path;     /* NULL: TRACE_DIR/jackdaw-RUNID.avro */
    const char *trace_dir;      /* NULL: the cluster file's directory */
    const char *workload_name;  /* for the trace header (run knows it up front), or NULL */
    const char *workload_digest;
    /* Where the daemons listen.  A local cluster binds `bind` (NULL: 127.0.0.1) and
     * tells clients `advertise` (NULL: bind; required when bind is a wildcard). */
    const char *bind;
    const char *advertise;
    /* Many hosts (core/client/remote.c): one daemon per line of `hostfile`, or per node
     * (per task with per_task) of the Slurm allocation this runs in; `nodes`, `slots`
     * and `speeds` do not apply. */
    const char *hostfile;
    bool slurm, per_task;
    const char *rsh;            /* NULL: "ssh -o BatchMode=yes" */
    const char *remote_jackdaw; /* the jackdaw binary on the hosts; NULL: this one's path */
    const char *remote_workdir; /* the work directory on the hosts; NULL: the local one's
                                   path (a shared file system, or the same layout) */
    int start_timeout_ms;       /* for each step of a remote start; 0: 30 s */
    const char *collector_host; /* with a hostfile: the collector runs on this host (through
                                   the remote shell) rather than here */
};

/*
 * Parses --speeds into out[0..n): a list of factors in (0, 1] cycled over the nodes, or
 * a mix name (none, C1..C5, any case), which gives node i the speed cores/24 of node i
 * of the mix.  0 or -EINVAL with *cause naming the bad entry.
 */
int launcher_parse_speeds(const char *list, double *out, uint32_t n, char **cause);

/* --nodes when not given, for local clusters: the machine's online cores (at least 1,
 * at most 4096), as --slots defaults to them. */
uint32_t launcher_default_nodes(void);

/*
 * Parses --slots: a whole number >= 1 into *slots (*cores false), or "cores" (*slots 0,
 * *cores true), which only a mix in `speeds` gives a meaning.  0 or -EINVAL with *cause.
 */
int launcher_parse_slots(const char *text, const char *speeds, uint32_t *slots, bool *cores,
                         char **cause);

/*
 * The executor slots of node `index`:
 *   - o->slots when it is not 0 (--slots S): every node alike;
 *   - with o->slots_cores (--slots cores), the node's cores in the mix of o->speeds: a
 *     node of k cores runs k tasks at once, each at speed k/24;
 *   - with a mix in o->speeds and no --slots, 1: paper 001 runs one process per node,
 *     one shot at a time on all the node's cores, so a node of k cores does k/24 of a
 *     24-core node's work, which speed k/24 on one slot reproduces (k slots at speed
 *     k/24 would give it (k/24)^2 x 24, counting its cores twice);
 *   - otherwise machine_cores, as for a homogeneous cluster.
 */
uint32_t launcher_node_slots(const struct launch_options *o, uint32_t index,
                             uint32_t machine_cores);

/* A listening TCP socket (close-on-exec, SO_REUSEADDR) bound to numeric address `addr`
 * and `want_port` (0: any); *port is the port it got.  The fd, or a negative errno with
 * *cause.  Daemons get theirs bound by whoever starts them, so that the port is known
 * before they run. */
int launcher_listen(const char *addr, int want_port, uint16_t *port, char **cause);

/* Starts the daemons and waits until every one accepts authenticated connections. */
int launcher_start(const struct launch_options *o, struct cluster *out, char **cause);

/* What launcher_stop_report found of each daemon, and what it did. */
enum launcher_found {
    LAUNCHER_STOPPED = 0,   /* was running and ended when asked (or on SIGTERM) */
    LAUNCHER_KILLED,        /* was running and did not end within the timeout: SIGKILL */
    LAUNCHER_NOT_RUNNING,   /* its pid was gone, or belongs to another program now */
    LAUNCHER_ASKED,         /* a node with no pid (started by srun, ssh…): asked to stop,
                               still connected when the time was up (STOPPED once its
                               connection closed) */
    LAUNCHER_UNREACHED,     /* a node with no pid that did not answer: it may still run */
    LAUNCHER_REMOTE_KILLED, /* one on another host that did not answer: ended through the
                               remote shell (kill of its remote pid) */
    LAUNCHER_NO_DAEMON,     /* the collector entry when there is no collector pid */
};

/*
 * Asks every daemon to stop, waits for their pids (SIGTERM half way through timeout_ms,
 * SIGKILL at its end; only pids still running for this cluster file are signalled),
 * then the collector, and removes the cluster file and its key.  Works when daemons
 * are already gone.  found, when not NULL, has cl->count + 1 entries: the nodes', then
 * the collector's.
 */
int launcher_stop_report(const struct cluster *cl, const char *cluster_path, int timeout_ms,
                         enum launcher_found *found, char **cause);
/* The same, without the report. */
int launcher_stop(const struct cluster *cl, const char *cluster_path, int timeout_ms,
                  char **cause);

/* True when `pid` is alive and was started for `cluster_path` (a daemon's command line
 * names its cluster file): a recycled pid in a stale cluster file is not a daemon. */
bool launcher_daemon_running(int pid, const char *cluster_path);

#endif
