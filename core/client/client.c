/*
 * client — see client.h.  This file owns the connection: the loop, the hub and one
 * connection per node, the messages the nodes send (task ends, sync replies, statistics,
 * job ends, fetched chunks, the answers to files sent in), the syncs and barriers that
 * order everything the client sends, and the calls on a job once it is in: removal,
 * forgetting, statistics, fetches, attaching, shutdown, waiting.  The submission itself
 * (client_submit) is submit.c's; it shares the client's state and the syncs through
 * client_impl.h, so that the message handler stays the one place a reply is read.
 * Called by the commands, the launcher and the console through client.h, and by
 * submit.c for the syncs.
 */
#include "core/client/client_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "core/base/crc.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/client/dataopts.h"
#include "core/kvs/kvs.h"
#include "core/net/conn.h"
#include "core/net/proto.h"
#include "core/policy/placement.h"
#include "core/runtime/node.h"

/* An object fetched from the nodes (client_fetch): probed on every node, then pulled
 * from the first that has it, a window of chunks at a time, in order. */
struct client_fetch {
    uint64_t key;
    uint32_t req_base;      /* probes are req_base + node; chunks from req_base + nodes */
    uint32_t probes_left;
    int holder;             /* -1 until a probe found it */
    int probe_error;        /* the first error other than absence, or 0 */
    uint64_t total, requested, received;
    uint32_t next_req;      /* the req of the next chunk asked for */
    uint32_t expect_req;    /* the req of the next reply */
    uint32_t crc;
    int fd;
    int error;              /* -errno once it failed */
    char *why;              /* owned: what failed */
    bool done;
};

uint32_t client_new_job(void)
{
    uint32_t job;
    do
        job = randombytes_random() & 0x7fffffffu;
    while (job == 0);
    return job;
}

static struct client *of(struct conn *conn)
{
    return conn_hub_data(conn_hub_of(conn));
}

static int node_of(struct client *c, struct conn *conn)
{
    for (uint32_t i = 0; i < c->nodes; i++)
        if (c->conns[i] == conn)
            return (int)i;
    return -1;
}

static void on_ready(struct conn *conn)
{
    of(conn)->ready++;
}

static int on_message(struct conn *conn, uint16_t type, struct rbuf *r, const char **reason)
{
    struct client *c = of(conn);
    switch (type) {
    case MSG_TASK_END: {
        struct proto_task_end e;
        if (proto_get_task_end(r, &e) < 0) {
            *reason = "malformed task-end report";
            return -EBADMSG;
        }
        if (c->cb.on_task_end)
            c->cb.on_task_end(c->cb.arg, &e);
        free(e.detail);
        return 0;
    }
    case MSG_SYNC_REPLY: {
        uint64_t token = rbuf_u64(r);
        if (!rbuf_ok(r))
            break;
        int i = node_of(c, conn);
        if (i >= 0 && token > c->synced_to[i])
            c->synced_to[i] = token;
        return 0;
    }
    case MSG_STATS_REPLY: {
        uint32_t req = rbuf_u32(r);
        struct proto_stats s;
        if (!rbuf_ok(r) || proto_get_stats(r, &s) < 0)
            break;
        int i = node_of(c, conn);
        if (req != c->stats_req || i < 0 || !c->stats_out || c->stats_got[i]) {
            proto_stats_fini(&s);
            return 0;
        }
        c->stats_out[i] = s;
        c->stats_got[i] = true;
        c->stats_replies++;
        return 0;
    }
    case MSG_TASK_RELISTED: {
        struct proto_task_end e;
        if (proto_get_task_end(r, &e) < 0) {
            *reason = "malformed relisted task end";
            return -EBADMSG;
        }
        if (c->cb.on_task_listed)
            c->cb.on_task_listed(c->cb.arg, &e);
        free(e.detail);
        return 0;
    }
    case MSG_JOB_ENDED: {
        struct proto_job_ended m;
        if (proto_get_job_ended(r, &m) < 0) {
            *reason = "malformed job-ended reply";
            return -EBADMSG;
        }
        int i = node_of(c, conn);
        if (i >= 0 && c->attach_got && m.counts.job == c->attach_job && !c->attach_got[i]) {
            if (c->cb.on_job_ended)
                c->cb.on_job_ended(c->cb.arg, (uint32_t)i, &m);
            if (m.last) {
                c->attach_got[i] = true;
                c->attach_replies++;
            }
        }
        free(m.ends);
        return 0;
    }
    case MSG_FETCH_REP: {
        uint32_t req = rbuf_u32(r);
        int32_t status = (int32_t)rbuf_u32(r);
        uint64_t total = rbuf_u64(r), offset = rbuf_u64(r);
        uint32_t len = rbuf_u32(r);
        if (!rbuf_ok(r) || len > PROTO_PUT_CHUNK)
            break;
        struct client_fetch *fx = c->fx;
        int i = node_of(c, conn);
        if (!fx || i < 0 || fx->done || fx->error)
            return 0;
        if (fx->holder < 0) {
            if (req != fx->req_base + (uint32_t)i || !fx->probes_left)
                return 0;
            fx->probes_left--;
            if (status == 0) {
                fx->holder = i;
                fx->total = total;
            } else if (status != -ENOENT && !fx->probe_error) {
                fx->probe_error = status;
            }
            return 0;
        }
        if (i != fx->holder || req != fx->expect_req)
            return 0; /* a late probe answer */
        fx->expect_req++;
        bool last = status == 0 && offset + len == total;
        const uint8_t *hash = last ? rbuf_bytes(r, OBJSTORE_HASH_BYTES_WIRE) : NULL;
        const uint8_t *data = rbuf_bytes(r, len);
        if (!rbuf_ok(r))
            break;
        if (status < 0 || total != fx->total || offset != fx->received) {
            fx->error = status < 0 ? status : -EPROTO;
            fx->why = status < 0 ? xasprintf("node %d: %s", i, strerror(-status))
                                 : xasprintf("node %d sent bytes out of order", i);
            return 0;
        }
        fx->crc = crc32_update(fx->crc, data, len);
        for (uint32_t w = 0; w < len;) {
            ssize_t n = write(fx->fd, data + w, len - w);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                fx->error = n < 0 ? -errno : -EIO;
                fx->why = xasprintf("cannot write: %s", strerror(-fx->error));
                return 0;
            }
            w += (uint32_t)n;
        }
        fx->received += len;
        if (last) {
            uint8_t got[4] = {(uint8_t)(fx->crc >> 24), (uint8_t)(fx->crc >> 16),
                              (uint8_t)(fx->crc >> 8), (uint8_t)fx->crc};
            if (memcmp(got, hash, sizeof got) != 0) {
                fx->error = -EBADMSG;
                fx->why = xasprintf("the bytes from node %d do not match its checksum", i);
                return 0;
            }
            fx->done = true;
        }
        return 0;
    }
    case MSG_OBJECT_PUT_DONE: {
        uint64_t key = rbuf_u64(r);
        int32_t status = (int32_t)rbuf_u32(r);
        uint32_t n;
        const char *why = rbuf_str(r, &n, PROTO_MAX_STRING);
        if (!rbuf_ok(r) || status > 0)
            break;
        c->puts_done++;
        uint32_t k = task_key_index(key) & 0x7fffffffu;
        if (status < 0 && !c->put_failed) {
            int i = node_of(c, conn);
            if (c->put_wl && k < c->put_wl->object_count)
                c->put_failed = xasprintf("object '%s' ('%s'): node %d could not store it: %.*s",
                                          c->put_wl->objects[k].id, c->put_wl->objects[k].path,
                                          i, (int)n, n ? why : strerror(-status));
            else
                c->put_failed = xasprintf("node %d could not store object %u: %.*s", i, k,
                                          (int)n, n ? why : strerror(-status));
        }
        return 0;
    }
    case MSG_KVS_LOOKUP_REPLY:
    case MSG_KVS_CAS_REPLY:
        return kvs_handle(c->kvs, 0, type, r, reason);
    default:
        *reason = "message type not expected by a client";
        return -EBADMSG;
    }
    *reason = "malformed message";
    return -EBADMSG;
}

static void on_close(struct conn *conn, const char *reason)
{
    struct client *c = of(conn);
    int i = node_of(c, conn);
    if (i < 0)
        return;
    c->conns[i] = NULL;
    c->lost++;
    free(c->why_lost[i]);
    c->why_lost[i] = xstrdup(reason ? reason : "closed");
    /* A node that never answered is not lost: client_connect says why it failed. */
    bool was_ready = conn_is_ready(conn);
    if (was_ready && c->ready)
        c->ready--;
    if (was_ready && c->cb.on_node_lost && !c->destroying)
        c->cb.on_node_lost(c->cb.arg, (uint32_t)i, reason);
}

static struct wbuf *kvs_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    struct client *c = ctx;
    if (!c->conns[node]) {
        wbuf_reset(&c->discard);
        *at = 0;
        return &c->discard;
    }
    return conn_msg_begin(c->conns[node], type, at);
}

static void kvs_end(void *ctx, uint32_t node, size_t at)
{
    struct client *c = ctx;
    if (c->conns[node])
        conn_msg_end(c->conns[node], at);
}

static void kvs_notify(void *ctx, const struct kvs_notice *notice)
{
    (void)ctx, (void)notice; /* a client holds no tasks */
}

static void read_daemon_flags(struct client *c, const struct cluster *cl);

struct client *client_create(const struct cluster *cl, const struct auth_key *key,
                             const struct client_callbacks *cb)
{
    struct client *c = xcalloc(1, sizeof *c);
    c->cl = cl;
    c->nodes = cl->count;
    if (cb)
        c->cb = *cb;
    uv_loop_init(&c->loop);
    static const struct conn_callbacks callbacks = {
        .on_ready = on_ready, .on_message = on_message, .on_close = on_close};
    c->hub = conn_hub_create(&c->loop, key, CONN_ROLE_CLIENT, (uint32_t)getpid(), &callbacks, c);
    c->conns = xcalloc(c->nodes, sizeof *c->conns);
    c->why_lost = xcalloc(c->nodes, sizeof *c->why_lost);
    c->synced_to = xcalloc(c->nodes, sizeof *c->synced_to);
    read_daemon_flags(c, cl);
    wbuf_init(&c->discard);
    struct kvs_transport t = {.ctx = c, .msg_begin = kvs_begin, .msg_end = kvs_end,
                              .notify = kvs_notify};
    c->kvs = kvs_create(KVS_NO_SHARD, c->nodes, &t);
    return c;
}

void client_destroy(struct client *c)
{
    if (!c)
        return;
    c->destroying = true;
    conn_hub_destroy(c->hub);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    uv_loop_close(&c->loop);
    kvs_destroy(c->kvs);
    for (uint32_t i = 0; i < c->nodes; i++)
        free(c->why_lost[i]);
    free(c->why_lost);
    free(c->put_failed);
    free(c->synced_to);
    free(c->conns);
    wbuf_fini(&c->discard);
    free(c);
}

uv_loop_t *client_loop(struct client *c)
{
    return &c->loop;
}

uint32_t client_nodes(const struct client *c)
{
    return c->nodes;
}

int client_node_ready(const struct client *c, uint32_t node)
{
    return node < c->nodes && c->conns[node] && conn_is_ready(c->conns[node]);
}

static void timeout_cb(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* Runs the loop until cond(c, arg) holds or the time is up. */
static int run_until(struct client *c, int (*cond)(struct client *, const void *), const void *arg,
                     int timeout_ms)
{
    int expired = 0;
    uv_timer_t timer;
    uv_timer_init(&c->loop, &timer);
    timer.data = &expired;
    if (timeout_ms >= 0)
        uv_timer_start(&timer, timeout_cb, (uint64_t)timeout_ms, 0);
    int rc = 0;
    while (!cond(c, arg)) {
        if (expired) {
            rc = -ETIMEDOUT;
            break;
        }
        if (c->lost == c->nodes) {
            rc = -ECONNRESET;
            break;
        }
        uv_run(&c->loop, UV_RUN_ONCE);
    }
    uv_close((uv_handle_t *)&timer, NULL);
    uv_run(&c->loop, UV_RUN_NOWAIT);
    return rc;
}

static int all_ready(struct client *c, const void *arg)
{
    (void)arg;
    return c->ready + c->lost >= c->nodes;
}

/* Why node i could not be reached, for client_connect's message.  A node that is
 * stopped (SIGSTOP, a debugger) or too loaded to run accepts the TCP connection in the
 * kernel and then says nothing: that is "did not answer in time", not a refusal. */
static char *unreached(const struct client *c, uint32_t i, double waited_s)
{
    const struct cluster_node *n = &c->cl->nodes[i];
    const char *why = c->why_lost[i];
    /* A node on another host is named by its host too: "node 3 on n03 at …". */
    char *on = n->name[0] ? xasprintf(" on %s", n->name) : xstrdup("");
    char *msg;
    if (c->conns[i] || !why || strcmp(why, "handshake timeout") == 0 ||
        strcmp(why, "connect timeout") == 0)
        msg = xasprintf("node %u%s at %s:%d: did not answer in time (waited %.1f s; is it "
                        "stopped or overloaded?)",
                        i, on, n->host, n->port, waited_s);
    else
        msg = xasprintf("node %u%s at %s:%d: %s", i, on, n->host, n->port, why);
    free(on);
    return msg;
}

int client_connect(struct client *c, int timeout_ms, char **cause)
{
    uv_update_time(&c->loop);
    uint64_t start = uv_now(&c->loop);
    for (uint32_t i = 0; i < c->nodes; i++) {
        const struct cluster_node *n = &c->cl->nodes[i];
        c->conns[i] = conn_connect(c->hub, n->host, n->port, NULL, cause);
        if (!c->conns[i])
            return -EINVAL;
    }
    int rc = run_until(c, all_ready, NULL, timeout_ms);
    if (rc == 0 && c->lost == 0)
        return 0;
    uv_update_time(&c->loop);
    double waited_s = (double)(uv_now(&c->loop) - start) / 1000.0;
    /* Every node that failed, one line each: with a whole cluster gone, the first alone
     * would hide how much is gone. */
    uint32_t failed = 0;
    char *lines = NULL;
    for (uint32_t i = 0; i < c->nodes; i++) {
        if (client_node_ready(c, i))
            continue;
        char *one = unreached(c, i, waited_s);
        char *more = lines ? xasprintf("%s\n  %s", lines, one) : one;
        if (lines)
            free(one);
        free(lines);
        lines = more;
        failed++;
    }
    if (failed <= 1)
        *cause = xasprintf("cannot reach %s", lines ? lines : "every node");
    else
        *cause = xasprintf("cannot reach %u of %u nodes:\n  %s", failed, c->nodes, lines);
    free(lines);
    return rc ? rc : -ECONNREFUSED;
}

int client__synced(struct client *c, const void *arg)
{
    uint64_t token = *(const uint64_t *)arg;
    for (uint32_t i = 0; i < c->nodes; i++)
        if (c->conns[i] && c->synced_to[i] < token)
            return 0;
    return 1;
}

uint64_t client__sync_send(struct client *c, bool handled_only)
{
    c->sync_token++;
    for (uint32_t i = 0; i < c->nodes; i++) {
        if (!c->conns[i])
            continue;
        size_t at;
        struct wbuf *b = conn_msg_begin(c->conns[i], MSG_SYNC, &at);
        wbuf_put_u64(b, c->sync_token);
        wbuf_put_u8(b, handled_only ? PROTO_SYNC_HANDLED : 0);
        conn_msg_end(c->conns[i], at);
    }
    return c->sync_token;
}

int client__sync_wait(struct client *c, uint64_t token, int timeout_ms, char **cause)
{
    int rc = run_until(c, client__synced, &token, timeout_ms);
    if (rc == 0 && c->lost)
        rc = -ECONNRESET;
    if (rc < 0)
        *cause = xasprintf("nodes did not acknowledge the submission (%s)",
                           rc == -ETIMEDOUT ? "timed out" : "a node went away");
    return rc;
}

int client__barrier(struct client *c, int timeout_ms, char **cause)
{
    return client__sync_wait(c, client__sync_send(c, false), timeout_ms, cause);
}

/* Chunks asked for ahead of the replies when fetching: enough to fill a link, bounded
 * memory (the replies queue in the connection's buffer). */
#define GET_WINDOW 8u

static int fetch_settled(struct client *c, const void *arg)
{
    (void)arg;
    struct client_fetch *fx = c->fx;
    return fx->error || fx->done || (fx->holder < 0 && fx->probes_left == 0) ||
           (fx->holder >= 0 && !c->conns[fx->holder]) ||
           (fx->holder >= 0 && fx->requested < fx->total &&
            fx->requested - fx->received < (uint64_t)GET_WINDOW * DATA_FETCH_CHUNK_WIRE);
}

static void fetch_ask(struct client *c, struct client_fetch *fx, uint32_t node, uint32_t req,
                      uint64_t offset, uint32_t len)
{
    size_t at;
    struct wbuf *b = conn_msg_begin(c->conns[node], MSG_FETCH_REQ, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u64(b, fx->key);
    wbuf_put_u64(b, offset);
    wbuf_put_u32(b, len);
    conn_msg_end(c->conns[node], at);
}

int client_fetch(struct client *c, uint64_t key, int fd, uint64_t *bytes, int timeout_ms,
                 char **cause)
{
    struct client_fetch fx = {.key = key, .holder = -1, .fd = fd, .crc = CRC32_INIT};
    fx.req_base = randombytes_random() & 0x3fffffffu;
    c->fx = &fx;
    for (uint32_t i = 0; i < c->nodes; i++) {
        if (!c->conns[i])
            continue;
        fx.probes_left++;
        fetch_ask(c, &fx, i, fx.req_base + i, 0, 0);
    }
    fx.next_req = fx.expect_req = fx.req_base + c->nodes;
    int rc = 0;
    for (;;) {
        rc = run_until(c, fetch_settled, NULL, timeout_ms);
        if (rc < 0 || fx.error || fx.done)
            break;
        if (fx.holder < 0) {
            rc = fx.probe_error ? fx.probe_error : -ENOENT;
            break;
        }
        if (!c->conns[fx.holder]) {
            rc = -ECONNRESET;
            fx.why = xasprintf("node %d went away", fx.holder);
            break;
        }
        if (fx.total == 0 && fx.requested == 0) {
            /* Nothing to pull but the checksum of nothing. */
            fetch_ask(c, &fx, (uint32_t)fx.holder, fx.next_req++, 0, 0);
            fx.requested = 1; /* asked; the reply ends it */
            continue;
        }
        while (fx.requested < fx.total &&
               fx.requested - fx.received < (uint64_t)GET_WINDOW * DATA_FETCH_CHUNK_WIRE) {
            uint64_t left = fx.total - fx.requested;
            uint32_t len = left < DATA_FETCH_CHUNK_WIRE ? (uint32_t)left : DATA_FETCH_CHUNK_WIRE;
            fetch_ask(c, &fx, (uint32_t)fx.holder, fx.next_req++, fx.requested, len);
            fx.requested += len;
        }
    }
    c->fx = NULL;
    if (rc == 0 && fx.error)
        rc = fx.error;
    if (rc < 0 && cause)
        *cause = fx.why ? fx.why
                        : xasprintf("%s", rc == -ENOENT ? "no node holds it"
                                          : rc == -ETIMEDOUT ? "timed out"
                                                             : strerror(-rc));
    else
        free(fx.why);
    if (bytes)
        *bytes = fx.received;
    return rc;
}

int client_remove(struct client *c, uint32_t job, const int64_t *index, uint32_t n,
                  int timeout_ms, char **cause)
{
    for (uint32_t i = 0; i < n; i++)
        kvs_append(c->kvs, task_key(job, (uint32_t)index[i]), KVS_FIELD_REMOVE, 0, 0, 0);
    return client__barrier(c, timeout_ms, cause);
}

int client_forget_job(struct client *c, uint32_t job, int timeout_ms, char **cause)
{
    kvs_forget_job(c->kvs, job);
    return client__barrier(c, timeout_ms, cause);
}

static int stats_done(struct client *c, const void *arg)
{
    (void)arg;
    return c->stats_replies + c->lost >= c->nodes;
}

int client_stats(struct client *c, struct proto_stats *out, int timeout_ms, char **cause)
{
    return client_stats_some(c, out, NULL, timeout_ms, cause);
}

int client_stats_some(struct client *c, struct proto_stats *out, bool *got, int timeout_ms,
                      char **cause)
{
    memset(out, 0, c->nodes * sizeof *out);
    c->stats_req++;
    c->stats_replies = 0;
    c->stats_out = out;
    c->stats_got = xcalloc(c->nodes, sizeof *c->stats_got);
    for (uint32_t i = 0; i < c->nodes; i++) {
        if (!c->conns[i])
            continue;
        size_t at;
        struct wbuf *b = conn_msg_begin(c->conns[i], MSG_STATS_QUERY, &at);
        wbuf_put_u32(b, c->stats_req);
        conn_msg_end(c->conns[i], at);
    }
    int rc = run_until(c, stats_done, NULL, timeout_ms);
    if (rc == 0 && c->stats_replies < c->nodes)
        rc = -ECONNRESET;
    if (rc < 0) {
        for (uint32_t i = 0; i < c->nodes; i++) {
            if (!c->stats_got[i]) {
                *cause = xasprintf("node %u did not answer a status query", i);
                break;
            }
        }
    }
    if (got)
        memcpy(got, c->stats_got, c->nodes * sizeof *got);
    free(c->stats_got);
    c->stats_got = NULL;
    c->stats_out = NULL;
    return rc;
}

static int attach_done(struct client *c, const void *arg)
{
    (void)arg;
    uint32_t reached = 0;
    for (uint32_t i = 0; i < c->nodes; i++)
        reached += c->conns[i] != NULL && !c->attach_got[i];
    return reached == 0;
}

int client_attach(struct client *c, uint32_t job, int timeout_ms, char **cause)
{
    c->attach_job = job;
    c->attach_replies = 0;
    c->attach_got = xcalloc(c->nodes, sizeof *c->attach_got);
    for (uint32_t i = 0; i < c->nodes; i++) {
        if (!c->conns[i])
            continue;
        size_t at;
        struct wbuf *b = conn_msg_begin(c->conns[i], MSG_JOB_ATTACH, &at);
        wbuf_put_u32(b, job);
        conn_msg_end(c->conns[i], at);
    }
    int rc = run_until(c, attach_done, NULL, timeout_ms);
    if (rc == 0 && !c->attach_replies)
        rc = -ECONNRESET;
    if (rc < 0)
        *cause = xasprintf("nodes did not answer the attach to job %u (%s)", job,
                           rc == -ETIMEDOUT ? "timed out" : "no node answered");
    free(c->attach_got);
    c->attach_got = NULL;
    return rc;
}

int client_shutdown(struct client *c, int timeout_ms)
{
    (void)timeout_ms;
    for (uint32_t i = 0; i < c->nodes; i++) {
        if (!c->conns[i])
            continue;
        size_t at;
        conn_msg_begin(c->conns[i], MSG_SHUTDOWN, &at);
        conn_msg_end(c->conns[i], at);
        conn_flush(c->conns[i]);
    }
    uv_run(&c->loop, UV_RUN_NOWAIT);
    return 0;
}

/* What the daemons were told, from the flags the cluster file records they were started
 * with (their defaults where it lists none):
 *   - how many lost nodes a job survives: the metadata's replicas less one, and never
 *     all of the nodes (a single node keeps no copy);
 *   - the copies of each initial data object (--object-replicas);
 *   - their placement (Algorithm 1's parameters), which submit.c asks where a task
 *     ready at submission goes first.
 * Flags that do not parse (a cluster file edited by hand) leave the defaults. */
static void read_daemon_flags(struct client *c, const struct cluster *cl)
{
    struct dataopts d = {0};
    dataopts_read_words(&d, (const char *const *)cl->node_args, cl->n_node_args, NULL, NULL);
    struct node_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *cause = NULL;
    if (dataopts_apply(&d, &cfg, &cause) < 0) {
        free(cause);
        memset(&cfg, 0, sizeof cfg);
        placement_params_default(&cfg.placement);
    }
    uint32_t r = cfg.replicas ? cfg.replicas : KVS_DEFAULT_REPLICAS;
    if (r > cl->count)
        r = cl->count;
    c->survives = r > 1 ? r - 1 : 0;
    c->object_copies = cfg.object_replicas ? cfg.object_replicas : 1;
    c->placement = cfg.placement;
}

static int flag_set_or_lost(struct client *c, const void *arg)
{
    return *(const int *)arg != 0 || c->lost > c->survives || c->lost == c->nodes;
}

int client_wait(struct client *c, const int *done, int timeout_ms)
{
    /* Without replicas a job cannot finish once a node is gone: its tasks and its share
     * of the metadata went with it.  Say so at once rather than wait for the timeout.
     * With them, the live nodes run the lost node's tasks again and report them. */
    int rc = run_until(c, flag_set_or_lost, done, timeout_ms);
    if (rc == 0 && !*done && c->lost)
        rc = -ECONNRESET;
    return rc;
}
