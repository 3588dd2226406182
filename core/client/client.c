/*
 * client — see client.h.
 *
 * Submission is two-phase because a task's metadata lives on its shard owner and the
 * task itself on the node the mode picks: if a task could start before every record of
 * its job existed, its completion could reach a child's shard ahead of the child's
 * record.  A barrier (MSG_SYNC to every node, answered in order on each connection)
 * after the records closes that window for the price of one round trip.
 */
#include "core/client/client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <sodium.h>
#include <zlib.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs.h"
#include "core/net/conn.h"
#include "core/net/frame.h"
#include "core/net/proto.h"

/* Tasks per SUBMIT message: big enough to amortise headers, small enough that a node
 * starts on the first tasks while the rest are still in flight. */
#define SUBMIT_CHUNK 2048
/* ... and a message closes past this many bytes, well inside FRAME_MAX_BODY. */
#define SUBMIT_CHUNK_BYTES (1u << 20)
/* Tasks per wave: the records of a wave are inserted and acknowledged before its tasks
 * are submitted, while the next wave's records are made (client_submit).  The waves grow
 * from SUBMIT_FIRST_WAVE, doubling, to SUBMIT_WAVE: the nodes start on the first tasks
 * after a few hundred records rather than after 16,384 (6,400 tasks of 1 ms waited 14 ms
 * for their first start, 7 % of their run), and later waves amortise the syncs. */
#define SUBMIT_WAVE (SUBMIT_CHUNK * 8)
#define SUBMIT_FIRST_WAVE 256u
/* Waves before the size reaches SUBMIT_WAVE: 256 · 2^6 = 16,384. */
#define SUBMIT_GROWING 6u

/* Where wave w starts, in task indices. */
static uint64_t wave_start(uint32_t w)
{
    if (w <= SUBMIT_GROWING)
        return (uint64_t)SUBMIT_FIRST_WAVE * ((1ull << w) - 1);
    return (uint64_t)SUBMIT_FIRST_WAVE * ((1ull << SUBMIT_GROWING) - 1) +
           (uint64_t)(w - SUBMIT_GROWING) * SUBMIT_WAVE;
}

/* The wave of task i. */
static uint32_t wave_of(uint32_t i)
{
    uint32_t w = 0;
    while (w < SUBMIT_GROWING && wave_start(w + 1) <= i)
        w++;
    if (w == SUBMIT_GROWING)
        w += (uint32_t)((i - wave_start(SUBMIT_GROWING)) / SUBMIT_WAVE);
    return w;
}
/* The most bytes of task encodings kept from the records for the submission (with
 * replicas, client_submit): about 2 million small tasks; bigger workloads encode the
 * rest twice rather than hold a copy of every command. */
#define SUBMIT_KEEP_BYTES (64u << 20)
_Static_assert(SUBMIT_KEEP_BYTES + WORKLOAD_MAX_CMD + 20ull * WORKLOAD_MAX_DEGREE + 64 < UINT32_MAX,
               "the kept encodings' offsets fit in 32 bits");
_Static_assert(SUBMIT_CHUNK_BYTES + WORKLOAD_MAX_CMD + 20ull * WORKLOAD_MAX_DEGREE + 64 <
                   FRAME_MAX_BODY,
               "a SUBMIT message closed past SUBMIT_CHUNK_BYTES fits in a frame");
_Static_assert(WORKLOAD_MAX_CMD < PROTO_MAX_STRING, "a daemon takes every command we send");

struct client {
    const struct cluster *cl;
    uv_loop_t loop;
    struct conn_hub *hub;
    struct conn **conns;    /* borrowed from the hub; NULL once lost */
    char **why_lost;        /* owned, per node: why its connection closed, or NULL */
    uint32_t nodes;
    uint32_t ready, lost;
    uint32_t survives;      /* lost nodes a job can survive (losses_survived) */
    uint32_t object_copies; /* copies of each initial object (object_replicas) */
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
    uLong crc;
    int fd;
    int error;              /* -errno once it failed */
    char *why;              /* owned: what failed */
    bool done;
};

int client_submit_mode_parse(const char *name)
{
    if (strcasecmp(name, "hashed") == 0)
        return SUBMIT_HASHED;
    if (strcasecmp(name, "one") == 0)
        return SUBMIT_ONE;
    if (strcasecmp(name, "roundrobin") == 0)
        return SUBMIT_ROUNDROBIN;
    if (strcasecmp(name, "data") == 0)
        return SUBMIT_DATA;
    return -1;
}

const char *client_submit_mode_name(enum submit_mode mode)
{
    static const char *names[] = {"hashed", "one", "roundrobin", "data"};
    return (unsigned)mode <= SUBMIT_DATA ? names[mode] : "unknown";
}

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
        fx->crc = crc32(fx->crc, data, len);
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

static uint32_t losses_survived(const struct cluster *cl);
static uint32_t object_replicas(const struct cluster *cl);

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
    c->survives = losses_survived(cl);
    c->object_copies = object_replicas(cl);
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

/* Every node still connected has answered sync `*token` (and so handled everything this
 * client sent before it). */
static int synced(struct client *c, const void *arg)
{
    uint64_t token = *(const uint64_t *)arg;
    for (uint32_t i = 0; i < c->nodes; i++)
        if (c->conns[i] && c->synced_to[i] < token)
            return 0;
    return 1;
}

/* Asks every node to answer once it has handled what came before and, unless
 * `handled_only`, its backups have what it wrote; returns the token. */
static uint64_t sync_send(struct client *c, bool handled_only)
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

/* Waits for sync `token`: -ETIMEDOUT, or -ECONNRESET once a node is lost. */
static int sync_wait(struct client *c, uint64_t token, int timeout_ms, char **cause)
{
    int rc = run_until(c, synced, &token, timeout_ms);
    if (rc == 0 && c->lost)
        rc = -ECONNRESET;
    if (rc < 0)
        *cause = xasprintf("nodes did not acknowledge the submission (%s)",
                           rc == -ETIMEDOUT ? "timed out" : "a node went away");
    return rc;
}

/* A barrier: every node has handled everything this client sent before it. */
static int barrier(struct client *c, int timeout_ms, char **cause)
{
    return sync_wait(c, sync_send(c, false), timeout_ms, cause);
}

static uint32_t target(const struct client *c, const struct workload *wl,
                       enum submit_mode mode, uint64_t key, uint32_t i)
{
    switch (mode) {
    case SUBMIT_DATA: {
        const struct workload_task *wt = &wl->tasks[i];
        /* Its first input's node, when that is known before the run. */
        uint32_t node = wt->num_inputs && !wl->objects[wt->inputs[0]].producer
                            ? workload_object_node(wl, wt->inputs[0], c->nodes)
                            : WORKLOAD_NO_NODE;
        return node < c->nodes ? node : task_key_owner(key, c->nodes);
    }
    case SUBMIT_ONE: return 0;
    case SUBMIT_ROUNDROBIN: return i % c->nodes;
    default: return task_key_owner(key, c->nodes);
    }
}

struct open_submit {
    struct wbuf *buf;       /* the connection's batch (stable while the message is open) */
    size_t at;              /* message offset for conn_msg_end */
    size_t count_at;        /* where the task count goes */
    uint32_t count;
};

static void close_submit(struct client *c, uint32_t node, struct open_submit *o)
{
    if (!o->buf)
        return;
    wbuf_patch_u32(o->buf, o->count_at, o->count);
    conn_msg_end(c->conns[node], o->at);
    o->buf = NULL;
}

/* Task i as it travels: in its metadata record (so that a node can run it again when
 * its holder dies) and in the submission.  *inputs is scratch, grown as needed. */
/* Scratch arrays for build_spec, grown as needed and reused task after task. */
struct spec_scratch {
    struct task_input *inputs;
    size_t inputs_cap;
    char **names;           /* borrowed strings of the workload */
    size_t names_cap;
    struct task_output *outputs; /* files borrowed from the workload */
    size_t outputs_cap;
    uint32_t *producers;
    size_t producers_cap;
};

static void build_spec(const struct client *c, const struct workload *wl, uint32_t job,
                       uint32_t i, struct task_spec *spec, struct spec_scratch *x)
{
    const struct workload_task *wt = &wl->tasks[i];
    *spec = (struct task_spec){
        .key = task_key(job, i), .kind = wt->kind,
        .flags = wt->stealable ? TASK_FLAG_STEALABLE : 0, .num_parents = wt->num_parents,
        .duration_s = wt->duration_s, .timeout_s = wt->timeout_s, .retries = wt->retries,
        .cores = wt->cores,
        .output_bytes = wt->output_bytes, .cmd = wt->cmd,
    };
    if (wt->num_inputs) {
        x->inputs = xgrow(x->inputs, &x->inputs_cap, wt->num_inputs, sizeof *x->inputs);
        for (uint32_t k = 0; k < wt->num_inputs; k++) {
            uint32_t obj = wt->inputs[k];
            /* A declared output's node and size are known once its producer ran. */
            const struct workload_object *o = &wl->objects[obj];
            x->inputs[k] = (struct task_input){
                .object = task_object_key(job, obj), .bytes = o->bytes,
                .node = o->producer ? WORKLOAD_NO_NODE : workload_object_node(wl, obj, c->nodes),
                .producer = o->producer};
        }
        spec->inputs = x->inputs;
        spec->num_inputs = wt->num_inputs;
    }
    /* A command finds each declared input under its name (its id, or its "as"). */
    if (wt->num_inputs && wt->kind == TASK_COMMAND) {
        x->names = xgrow(x->names, &x->names_cap, wt->num_inputs, sizeof *x->names);
        for (uint32_t k = 0; k < wt->num_inputs; k++)
            x->names[k] = wt->input_as && wt->input_as[k] ? wt->input_as[k]
                                                          : wl->objects[wt->inputs[k]].id;
        spec->names = x->names;
        spec->num_names = wt->num_inputs;
    }
    if (wt->num_outputs) {
        x->outputs = xgrow(x->outputs, &x->outputs_cap, wt->num_outputs, sizeof *x->outputs);
        for (uint32_t k = 0; k < wt->num_outputs; k++)
            x->outputs[k] = (struct task_output){
                .object = task_object_key(job, wt->outputs[k]),
                .file = wl->objects[wt->outputs[k]].file};
        spec->outputs = x->outputs;
        spec->num_outputs = wt->num_outputs;
    }
    /* Parents that declare outputs have no object of their own to read. */
    for (uint32_t k = 0; k < wt->num_parents; k++)
        if (wl->tasks[wt->parents[k]].num_outputs) {
            x->producers = xgrow(x->producers, &x->producers_cap, spec->num_producers + 1,
                                 sizeof *x->producers);
            x->producers[spec->num_producers++] = wt->parents[k];
        }
    spec->producers = x->producers;
}

/* A submission under way (client_submit): the tasks' encodings kept from their records
 * for the SUBMIT messages, and the messages open per node. */
struct submission {
    struct client *c;
    const struct workload *wl;
    uint32_t job;
    enum submit_mode mode;
    /* With replicas each task's encoding goes twice, in its record and in the
     * submission: encoded once, kept here for the second (up to SUBMIT_KEEP_BYTES; the
     * tasks past it are encoded again).  kept_at[i] is where task i starts, kept_at[i +
     * 1] where it ends; `kept` tasks are in. */
    struct wbuf encoded, scratch;
    uint32_t *kept_at;      /* offsets below SUBMIT_KEEP_BYTES + one task */
    size_t kept_cap;
    uint32_t kept;
    struct spec_scratch x; /* for build_spec */
    uint64_t *keys;         /* scratch: a task's children */
    size_t keys_cap;
    struct open_submit *open; /* per node */
};

/* Sends the tasks of wave w to their nodes. */
static void submit_wave(struct submission *u, uint32_t w)
{
    struct client *c = u->c;
    uint32_t from = (uint32_t)wave_start(w);
    uint32_t to = wave_start(w + 1) < u->wl->count ? (uint32_t)wave_start(w + 1) : u->wl->count;
    for (uint32_t i = from; i < to; i++) {
        uint32_t node = target(c, u->wl, u->mode, task_key(u->job, i), i);
        if (!c->conns[node])
            continue;
        struct open_submit *o = &u->open[node];
        if (!o->buf) {
            o->buf = conn_msg_begin(c->conns[node], MSG_SUBMIT, &o->at);
            o->count_at = o->buf->len;
            wbuf_put_u32(o->buf, 0);
            o->count = 0;
        }
        if (i < u->kept) {
            wbuf_put(o->buf, u->encoded.data + u->kept_at[i], u->kept_at[i + 1] - u->kept_at[i]);
        } else {
            struct task_spec spec;
            build_spec(c, u->wl, u->job, i, &spec, &u->x);
            proto_put_task(o->buf, &spec);
        }
        /* By bytes too: 2,048 commands of 9 KB are more than a 16 MiB frame can hold
         * (a task is at most 64 KiB of command plus its inputs, see workload.h). */
        if (++o->count == SUBMIT_CHUNK || o->buf->len - o->at > SUBMIT_CHUNK_BYTES)
            close_submit(c, node, o);
    }
    /* Written out now, so that the nodes start on it while the next wave is made. */
    for (uint32_t k = 0; k < c->nodes; k++)
        close_submit(c, k, &u->open[k]);
    uv_run(&c->loop, UV_RUN_NOWAIT);
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
    struct client_fetch fx = {.key = key, .holder = -1, .fd = fd, .crc = crc32(0L, Z_NULL, 0)};
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

/* Bytes of a file sent before the client waits for the nodes to have handled them: the
 * client holds at most this much (per copy) in its connections' buffers, whatever the
 * file's size. */
#define PUT_WINDOW (8u << 20)

/*
 * Sends object k's file to the nodes that keep its copies, a chunk at a time, with its
 * CRC-32 after the last.  Streamed: one chunk read, then written to each copy's
 * connection, and every PUT_WINDOW bytes a sync waits until the nodes have taken them,
 * so the client's memory does not grow with the file.  A file that changed size since
 * the workload was read is refused (its bytes were declared).
 */
static int put_file(struct client *c, const struct workload *wl, uint32_t job, uint32_t k,
                    const uint32_t *nodes, uint32_t copies, int timeout_ms, char **cause)
{
    const struct workload_object *o = &wl->objects[k];
    FILE *in = fopen(o->path, "rb");
    if (!in) {
        *cause = xasprintf("object '%s': cannot open '%s': %s", o->id, o->path, strerror(errno));
        return -errno;
    }
    uint8_t *buf = xmalloc(PROTO_PUT_CHUNK);
    uLong crc = crc32(0L, Z_NULL, 0);
    uint64_t off = 0, since_sync = 0;
    int rc = 0;
    do {
        size_t want = o->bytes - off < PROTO_PUT_CHUNK ? (size_t)(o->bytes - off) : PROTO_PUT_CHUNK;
        size_t got = want ? fread(buf, 1, want, in) : 0;
        if (got < want) {
            rc = ferror(in) ? -EIO : -ENODATA;
            *cause = ferror(in) ? xasprintf("object '%s': cannot read '%s': %s", o->id,
                                            o->path, strerror(errno))
                                : xasprintf("object '%s': '%s' is shorter than its %llu bytes "
                                            "(it changed since the workload was read)",
                                            o->id, o->path, (unsigned long long)o->bytes);
            break;
        }
        crc = crc32(crc, buf, (uInt)got);
        bool last = off + got == o->bytes;
        if (last && fgetc(in) != EOF) {
            rc = -EFBIG;
            *cause = xasprintf("object '%s': '%s' is longer than its %llu bytes (it changed "
                               "since the workload was read)", o->id, o->path,
                               (unsigned long long)o->bytes);
            break;
        }
        for (uint32_t j = 0; j < copies; j++) {
            struct conn *conn = c->conns[nodes[j]];
            if (!conn)
                continue;
            size_t at;
            struct wbuf *b = conn_msg_begin(conn, MSG_OBJECT_PUT, &at);
            wbuf_put_u64(b, task_object_key(job, k));
            wbuf_put_u64(b, o->bytes);
            wbuf_put_u64(b, off);
            wbuf_put_u32(b, (uint32_t)got);
            wbuf_put(b, buf, got);
            if (last) {
                uint8_t h[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8),
                                (uint8_t)crc};
                wbuf_put(b, h, sizeof h);
                c->puts_sent++;
            }
            conn_msg_end(conn, at);
        }
        off += got;
        since_sync += got;
        if (since_sync >= PUT_WINDOW && !last) {
            since_sync = 0;
            rc = sync_wait(c, sync_send(c, true), timeout_ms, cause);
            if (rc == 0 && c->put_failed)
                rc = -EIO;
        }
    } while (rc == 0 && off < o->bytes);
    free(buf);
    fclose(in);
    return rc;
}

int client_submit(struct client *c, const struct workload *wl, uint32_t job,
                  enum submit_mode mode, int timeout_ms, int64_t *t_submit, char **cause)
{
    /* The workload's initial data objects exist before the job starts, as the papers'
     * input files did: they are made (or sent in) first, and the clock starts after. */
    c->put_wl = wl;
    for (uint32_t k = 0; k < wl->object_count; k++) {
        uint32_t first = workload_object_node(wl, k, c->nodes);
        if (first >= c->nodes || wl->objects[k].producer)
            continue; /* a declared output is made by its task */
        /* With --object-replicas K, copies on the K-1 nodes after the first, the places
         * the data plane falls back to when the first is dead (data_input_holder). */
        uint32_t copies = c->object_copies < c->nodes ? c->object_copies : c->nodes;
        if (wl->objects[k].path) {
            uint32_t *nodes = xcalloc(copies, sizeof *nodes);
            for (uint32_t j = 0; j < copies; j++)
                nodes[j] = (first + j) % c->nodes;
            int rc = put_file(c, wl, job, k, nodes, copies, timeout_ms, cause);
            free(nodes);
            if (rc < 0) {
                if (c->put_failed && !*cause) {
                    *cause = c->put_failed;
                    c->put_failed = NULL;
                }
                c->put_wl = NULL;
                return rc;
            }
            continue;
        }
        for (uint32_t j = 0; j < copies; j++) {
            uint32_t node = (first + j) % c->nodes;
            if (!c->conns[node])
                continue;
            size_t at;
            struct wbuf *b = conn_msg_begin(c->conns[node], MSG_OBJECT_CREATE, &at);
            wbuf_put_u64(b, task_object_key(job, k));
            wbuf_put_u64(b, wl->objects[k].bytes);
            conn_msg_end(c->conns[node], at);
        }
    }
    if (wl->object_count) {
        int rc = barrier(c, timeout_ms, cause);
        c->put_wl = NULL; /* every answer came before the barrier's */
        if (rc < 0)
            return rc;
        /* Every node answers a file's last chunk before the barrier's reply. */
        if (c->put_failed) {
            *cause = c->put_failed;
            c->put_failed = NULL;
            return -EIO;
        }
        if (c->puts_done < c->puts_sent) {
            *cause = xasprintf("%u of %u files sent in were not acknowledged",
                               c->puts_sent - c->puts_done, c->puts_sent);
            return -EPROTO;
        }
    }
    /* Each node learns how many tasks it is about to get, so that it does not take to
     * stealing while its own are on the way (they follow after a barrier). */
    uint32_t *share = xcalloc(c->nodes, sizeof *share);
    for (uint32_t i = 0; i < wl->count; i++)
        share[target(c, wl, mode, task_key(job, i), i)]++;
    *t_submit = clock_wall_ns();
    for (uint32_t i = 0; i < c->nodes; i++) {
        if (!c->conns[i])
            continue;
        size_t at;
        struct wbuf *b = conn_msg_begin(c->conns[i], MSG_JOB_BEGIN, &at);
        wbuf_put_u32(b, job);
        wbuf_put_u32(b, wl->count);
        wbuf_put_u32(b, share[i]);
        conn_msg_end(c->conns[i], at);
    }
    free(share);
    struct submission u = {.c = c, .wl = wl, .job = job, .mode = mode};
    wbuf_init(&u.encoded);
    wbuf_init(&u.scratch);
    u.open = xcalloc(c->nodes, sizeof *u.open);
    uint32_t nwaves = wl->count ? wave_of(wl->count - 1) + 1 : 0;
    /* Per wave, the sync after its records, and the last wave whose records must be in
     * before its tasks go: its own, or a later one that holds a child of one of them
     * (a task that ends appends to its children's records). */
    uint64_t *token = xcalloc(nwaves ? nwaves : 1, sizeof *token);
    uint32_t *reach = xcalloc(nwaves ? nwaves : 1, sizeof *reach);
    uint32_t inserted = 0, next = 0;
    int rc = 0;
    for (uint32_t i = 0; i < wl->count; i++) {
        const struct workload_task *wt = &wl->tasks[i];
        struct wbuf *into = &u.encoded;
        size_t spec_at = 0;
        if (c->survives) {
            struct task_spec spec;
            build_spec(c, wl, job, i, &spec, &u.x);
            if (u.kept < i || u.encoded.len > SUBMIT_KEEP_BYTES) {
                into = &u.scratch;
                wbuf_reset(into);
            }
            spec_at = into->len;
            proto_put_task(into, &spec);
            if (i == 0 && into == &u.encoded && wl->count > 1) {
                /* Room for all, by the first one's size (up to the bound), at once: a
                 * buffer that doubles copies itself into fresh pages each time. */
                size_t all = (size_t)wl->count * u.encoded.len;
                wbuf_reserve(&u.encoded, (all < SUBMIT_KEEP_BYTES ? all : SUBMIT_KEEP_BYTES) -
                                             u.encoded.len);
            }
            if (into == &u.encoded) {
                u.kept_at = xgrow(u.kept_at, &u.kept_cap, (size_t)u.kept + 2, sizeof *u.kept_at);
                u.kept_at[u.kept] = (uint32_t)spec_at;
                u.kept_at[++u.kept] = (uint32_t)u.encoded.len;
            }
        }
        struct tmd t = {
            .key = task_key(job, i), .num_parents = wt->num_parents,
            .num_wait_parent = wt->num_parents, .data_size = wt->output_bytes,
            .t_submit = *t_submit,
        };
        t.holder = target(c, wl, mode, t.key, i);
        if (wt->num_children > u.keys_cap) {
            u.keys_cap = wt->num_children;
            u.keys = xrealloc(u.keys, u.keys_cap * sizeof *u.keys);
        }
        uint32_t w = wave_of(i);
        reach[w] = reach[w] > w ? reach[w] : w;
        for (uint32_t k = 0; k < wt->num_children; k++) {
            u.keys[k] = task_key(job, wt->children[k]);
            uint32_t cw = wave_of(wt->children[k]);
            reach[w] = reach[w] > cw ? reach[w] : cw;
        }
        tmd_set_children(&t, u.keys, wt->num_children);
        /* The spec is what a live node runs again when the holder dies; without replicas
         * the record dies with its owner too, so it would only cost memory and time. */
        if (c->survives)
            tmd_set_spec(&t, into->data + spec_at, (uint32_t)(into->len - spec_at));
        kvs_insert(c->kvs, &t);
        tmd_fini(&t);
        /* A wave's records are in: a sync behind them, and the waves whose records are
         * all in their primaries go, so that the nodes run the first tasks while the
         * rest are still encoded and inserted.  The sync does not wait for the backups:
         * a task's end is reported only once its backups have its final status, which
         * follows its insert on the same link; and the barrier that ends the submission
         * does wait, so a primary lost before its backups had a wave fails the submit. */
        /* Looked for at wave ends only: a poll of the loop every 64 tasks made flushed
         * the records in smaller writes, and 200,000 noops ran 7 % slower. */
        if (i + 1 == wave_start(w + 1) || i + 1 == wl->count) {
            token[inserted++] = sync_send(c, true);
            uv_run(&c->loop, UV_RUN_NOWAIT);
            while (next < inserted && reach[next] < inserted && !c->lost &&
                   synced(c, &token[reach[next]]))
                submit_wave(&u, next++);
        }
    }
    while (rc == 0 && next < nwaves) {
        rc = sync_wait(c, token[reach[next]], timeout_ms, cause);
        if (rc == 0)
            submit_wave(&u, next++);
    }
    free(token);
    free(reach);
    free(u.keys);
    free(u.open);
    wbuf_fini(&u.scratch);
    wbuf_fini(&u.encoded);
    free(u.kept_at);
    free(u.x.inputs);
    free(u.x.names);
    free(u.x.outputs);
    free(u.x.producers);
    return rc < 0 ? rc : barrier(c, timeout_ms, cause);
}

int client_remove(struct client *c, uint32_t job, const int64_t *index, uint32_t n,
                  int timeout_ms, char **cause)
{
    for (uint32_t i = 0; i < n; i++)
        kvs_append(c->kvs, task_key(job, (uint32_t)index[i]), KVS_FIELD_REMOVE, 0, 0, 0);
    return barrier(c, timeout_ms, cause);
}

int client_forget_job(struct client *c, uint32_t job, int timeout_ms, char **cause)
{
    kvs_forget_job(c->kvs, job);
    return barrier(c, timeout_ms, cause);
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

/* How many lost nodes a job survives: the metadata's replicas less one (the daemons'
 * --replicas, as the cluster file records the flags they were started with, else their
 * default), and never all of the nodes (a single node keeps no copy). */
static uint32_t losses_survived(const struct cluster *cl)
{
    unsigned long r = KVS_DEFAULT_REPLICAS;
    for (uint32_t i = 0; i + 1 < cl->n_node_args; i++)
        if (strcmp(cl->node_args[i], "--replicas") == 0)
            r = strtoul(cl->node_args[i + 1], NULL, 10);
    if (r < 1 || r > KVS_MAX_REPLICAS)
        return 0;
    if (r > cl->count)
        r = cl->count;
    return r > 1 ? (uint32_t)r - 1 : 0;
}

/* Copies of each initial data object: the daemons' --object-replicas, from the cluster
 * file as above (1 when absent). */
static uint32_t object_replicas(const struct cluster *cl)
{
    for (uint32_t i = 0; i + 1 < cl->n_node_args; i++) {
        if (strcmp(cl->node_args[i], "--object-replicas") == 0) {
            unsigned long k = strtoul(cl->node_args[i + 1], NULL, 10);
            return k >= 1 && k <= 8 ? (uint32_t)k : 1;
        }
    }
    return 1;
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
