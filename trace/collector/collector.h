/*
 * collector — the trace collector daemon: one per cluster, one libuv loop thread.
 *
 * Node daemons stream whole Avro blocks to it (trace/format/wire.h tells the
 * conversation); it appends them to one trace file per run
 * (trace/collector/collect_file), writes the JOB_SUBMIT and TASK_NAMES records clients
 * send, and serves live state to consoles: each node's latest sample, whether its trace
 * connection is up, a bounded ring of recent notable events, and per-job tallies folded
 * from the events of the blocks it writes, decoded for that alone on a worker thread
 * (trace/collector/jobfold.h).  A collector that resumed a trace tallies what arrives
 * after its start, and says its tallies are partial.
 *
 * Once per loop pass (a uv_check handle, after the pass's reads) the blocks that
 * arrived are written with one write() and the nodes whose blocks were written get an
 * ACK with how far their events are in the file, the clients an ACK with how many of
 * their JOB and NAMES messages are; RESUME and ACK only ever promise what has been
 * written.  Job records that clients kept while no collector listened
 * (trace/collector/jobspool.h, in the cluster's workdir) are written when it starts and
 * looked for every few seconds after.  A node that breaks the conversation (bad run id, bad framing, a
 * block before its HELLO) is dropped with a WARN naming it; everyone else is served on.
 * Nothing blocks the loop but the file write.
 *
 * Owns its loop, its conn_hub and every connection, the trace file, the nodes' latest
 * samples and the note ring; it removes the kept job files it has written.  Called by `jackdaw collector` (tools/cmd/cmd_collector.c)
 * and the tests; collector_run returns when told to stop (MSG_SHUTDOWN from a client,
 * SIGTERM, SIGINT), after the last write.
 */
#ifndef JACKDAW_TRACE_COLLECTOR_H
#define JACKDAW_TRACE_COLLECTOR_H

#include <stdint.h>

#include "core/model/cluster.h"
#include "core/net/auth.h"

/* STATE period floor when the configuration gives none. */
#define COLLECTOR_STATE_FLOOR_MS 100u

struct collector_config {
    const struct cluster *cluster; /* borrowed: nodes, run id, start_ns, node_args */
    struct auth_key key;
    const char *trace_path;        /* borrowed: created, or resumed when it exists */
    int listen_fd;                 /* inherited listening socket, or -1 to bind host:port */
    const char *host;              /* borrowed; used when listen_fd < 0 */
    int port;
    const char *workload_name;     /* borrowed, may be NULL: the header's "workload" */
    const char *workload_digest;   /* borrowed, may be NULL */
    uint32_t state_floor_ms;       /* shortest STATE period a console gets; 0: the default */
    /* Called once it listens with the trace open, before serving anyone (may be NULL):
     * where a collector started by hand registers in the cluster file and a detached one
     * lets its parent return.  0, or a negative errno with *cause (malloc'd) to stop
     * with COLLECTOR_BAD_CONFIG before serving. */
    int (*on_serving)(void *ctx, char **cause);
    void *serving_ctx;
};

/* How collector_run ended; the command picks its exit code from it. */
enum collector_status {
    COLLECTOR_OK = 0,
    COLLECTOR_BAD_CONFIG = -1,   /* no nodes, no trace path, on_serving refused */
    COLLECTOR_BAD_TRACE = -2,    /* the trace cannot be created or resumed, or is another run's */
    COLLECTOR_NO_LISTEN = -3,    /* cannot listen */
    COLLECTOR_WRITE_FAILED = -4, /* stopped with events it could not write */
};

/*
 * Runs the collector until it is told to stop.  Returns COLLECTOR_OK, or a negative
 * enum collector_status with *cause (malloc'd, naming the file or the address).
 *
 * Run header written to a new file (JSON): {"format": 1, "run_id", "start_ns",
 * "created" (ISO-8601, UTC), "nodes": [{"id", "host", "port", "slots", "speed"}],
 * "config": {"node_args": [...]}, "workload": {"name", "digest"} or null}.  start_ns is
 * the cluster's, or the collector's start when the cluster has none.  A resumed file
 * keeps its own header, and its start_ns wins.
 */
int collector_run(const struct collector_config *cfg, char **cause);

#endif
