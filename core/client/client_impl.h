/*
 * client_impl — the client's state, shared by the two files of the client library's
 * connection: client.c (the connection, the nodes' messages, the syncs, and the calls
 * on a job once it is in) and submit.c (a job's submission).  Functions named client__
 * are those files' internals; everything else uses client.h.  Single-threaded, as
 * client.h says: everything here belongs to the caller's loop.
 */
#ifndef JACKDAW_CLIENT_IMPL_H
#define JACKDAW_CLIENT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "core/base/wbuf.h"
#include "core/client/client.h"
#include "core/kvs/kvs.h"
#include "core/net/conn.h"
#include "core/policy/placement.h"

struct client_fetch; /* client.c */

struct client {
    const struct cluster *cl;
    uv_loop_t loop;
    struct conn_hub *hub;
    struct conn **conns;    /* borrowed from the hub; NULL once lost */
    char **why_lost;        /* owned, per node: why its connection closed, or NULL */
    uint32_t nodes;
    uint32_t ready, lost;
    uint32_t survives;      /* lost nodes a job can survive (read_daemon_flags) */
    uint32_t object_copies; /* copies of each initial object (read_daemon_flags) */
    struct placement_params placement; /* the daemons' (read_daemon_flags) */
    struct kvs *kvs;
    struct client_callbacks cb;
    uint64_t sync_token;    /* the last MSG_SYNC sent */
    uint64_t *synced_to;    /* per node, the last token it answered (in order) */
    uint32_t stats_req;
    uint32_t stats_replies;
    struct proto_stats *stats_out; /* borrowed during client_stats */
    bool *stats_got;
    bool *attach_got;       /* during client_attach: per node, its last JOB_ENDED came */
    uint32_t attach_job, attach_replies;
    bool destroying;        /* connections closing now are not news to the caller */
    struct wbuf discard;    /* sink for metadata messages to a node already lost */
    /* Files sent in (client_submit): answers expected and received, and the first
     * failure a node reported (owned), naming the object's key. */
    uint32_t puts_sent, puts_done;
    char *put_failed;
    const struct workload *put_wl; /* borrowed while files are sent: names the objects */
    struct client_fetch *fx; /* the object being fetched (client_fetch), or NULL */
};

/* client.c */
/* Every node still connected has answered sync `*token` (and so handled everything this
 * client sent before it). */
int client__synced(struct client *c, const void *arg);
/* Asks every node to answer once it has handled what came before and, unless
 * `handled_only`, its backups have what it wrote; returns the token. */
uint64_t client__sync_send(struct client *c, bool handled_only);
/* Waits for sync `token`: -ETIMEDOUT, or -ECONNRESET once a node is lost. */
int client__sync_wait(struct client *c, uint64_t token, int timeout_ms, char **cause);
/* A barrier: every node has handled everything this client sent before it. */
int client__barrier(struct client *c, int timeout_ms, char **cause);

#endif
