/*
 * node — the node daemon: one libuv loop thread that owns the scheduler state (WaitQ,
 * LReadyQ, SReadyQ, CompleteQ count, the metadata shard through core/kvs, the peer
 * table), executor slots (core/runtime/exec) and the parts that steal, place, move data
 * and watch the neighbours (core/runtime/part.h, the table in parts.c).
 *
 * Called by `jackdaw node` (tools/cmd/cmd_node.c), which parses flags into a node_config
 * and calls node_run; it returns when the node is told to shut down (MSG_SHUTDOWN,
 * SIGTERM or SIGINT).
 */
#ifndef JACKDAW_NODE_H
#define JACKDAW_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model/cluster.h"
#include "core/model/trace_kind.h"
#include "core/net/auth.h"
#include "core/policy/placement.h"
#include "core/policy/steal.h"

#define NODE_PREFETCH_SLOTS UINT32_MAX

/* The standard error a command keeps by default (--task-log-bytes). */
#define NODE_TASK_LOG_BYTES ((uint64_t)1 << 20)

struct node_config {
    uint32_t id;
    const struct cluster *cluster; /* borrowed: membership; nodes[id] is this node */
    struct auth_key key;
    uint32_t slots;
    double speed;
    const char *workdir;    /* this node's directory for task work dirs */
    int listen_fd;          /* inherited listening socket, or -1 to bind host:port */
    const char *bind;       /* without listen_fd: bind this address (e.g. 0.0.0.0) at the
                               cluster file's port, still reached at its host; NULL: host */
    struct steal_params steal; /* the stealing policy's parts (core/policy/preset.h) */
    struct placement_params placement;
    uint64_t seed;          /* victim selection; 0 picks one from the id and time */
    uint32_t steal_timeout_ms; /* an attempt whose replies are missing fails after this */
    uint32_t failure_timeout_ms; /* a ring neighbour silent this long is suspected; 0: default */
    uint32_t replicas;         /* copies of each metadata record (core/kvs); 0: KVS_DEFAULT_REPLICAS */
    uint32_t object_replicas;  /* copies of each initial data object, placed by the client
                                  on successive nodes (data_input_holder); 0: 1 */
    /* data plane */
    uint64_t store_mem_bytes;  /* object bytes kept in memory before spilling to files */
    bool cache;                /* keep fetched copies (LRU) */
    uint64_t cache_bytes;      /* capacity of the cache of fetched copies */
    double bandwidth_Bps;      /* emulated per-node egress and ingress rate; 0: none */
    int64_t latency_ns;        /* emulated one-way latency of data messages */
    uint32_t prefetch;         /* tasks fetching inputs ahead of a free slot;
                                  NODE_PREFETCH_SLOTS: as many as slots */
    uint64_t task_log_bytes;   /* a command's standard error kept, its tail; 0: all */
    /* tracing: events go to the sink (NULL: none) */
    const struct trace_sink *trace;
    uint32_t sample_ms;        /* NODE_SAMPLE period; 0: 100 */
    size_t trace_buffer;       /* the tracer's ring bytes (read by cmd_node); 0: default */
};

/* Runs the daemon until shutdown.  0 on a clean stop, or a negative errno with *cause
 * (cannot listen, cannot create the work directory). */
int node_run(const struct node_config *cfg, char **cause);

#endif
