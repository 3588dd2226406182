/*
 * node — the node daemon's loop, the centre of the star (part.h): connections and
 * messages, the small API the parts use, and the life cycle.  The parts — data plane,
 * placement, the victim's side of stealing, the thief, the LW leader, the CTWS token,
 * idle peers, the A2WS ring, failure detection — are the table in parts.c; the centre
 * names none of them but the data plane, whose staging the dispatcher drives.  The
 * rest of the centre: node_task.c (the tasks' life, DESIGN.md steps 2–6),
 * node_member.c (membership and the dead holders' tasks), node_client.c (jobs and
 * clients), sharing the private state of node_core.h.
 *
 * Everything here runs on the one loop thread.  Handlers only change state and mark
 * the node dirty; the check step (once per loop pass, after I/O) starts tasks on free
 * slots, then gives every part its step (answer thieves, steal, hand out, pass the
 * token, wake parked peers, spread the vector).  That keeps a chain of synchronous
 * completions (noop tasks whose metadata is local) iterative, not recursive, and lets
 * each pass's messages leave in one batch per peer.
 */
#include "core/runtime/node_core.h"

#include <malloc.h>

static void idle_cb(uv_idle_t *h)
{
    (void)h; /* only there so that the loop polls without blocking */
}

void node_mark_dirty(struct node *n)
{
    if (!n->stopping && !uv_is_active((uv_handle_t *)&n->idle))
        uv_idle_start(&n->idle, idle_cb);
}

/* ---- peers ---------------------------------------------------------------------- */

static struct conn *peer_conn(struct node *n, uint32_t id)
{
    struct peer *p = &n->peers[id];
    if (p->out)
        return p->out;
    if (p->in)
        return p->in;
    if (n->stopping || n->dead[id])
        return NULL;
    const struct cluster_node *cn = &n->cfg.cluster->nodes[id];
    char *cause = NULL;
    /* The accepting side learns who we are from the handshake; we remember whom we
     * called in the connection's data (id + 1, so that NULL means inbound). */
    p->out = conn_connect(n->hub, cn->host, cn->port, (void *)(uintptr_t)(id + 1), &cause);
    if (!p->out) {
        log_error("cannot connect to node %u at %s:%d: %s", id, cn->host, cn->port,
                  cause ? cause : "?");
        free(cause);
    }
    return p->out;
}

struct wbuf *node_msg_begin(struct node *n, uint32_t peer, uint16_t type, size_t *at)
{
    struct conn *c = peer < n->nodes && peer != n->self ? peer_conn(n, peer) : NULL;
    if (!c) {
        /* A part should not address a dead node; if one does, the loss is its to log. */
        if (peer < n->nodes && n->dead[peer])
            log_debug("message %s to dead node %u discarded", proto_type_name(type), peer);
        else
            log_warn("message %s to unreachable node %u discarded", proto_type_name(type),
                     peer);
        wbuf_reset(&n->discard);
        *at = 0;
        return &n->discard;
    }
    return conn_msg_begin(c, type, at);
}

static struct conn *existing_conn(struct node *n, uint32_t peer)
{
    if (peer >= n->nodes || peer == n->self)
        return NULL;
    return n->peers[peer].out ? n->peers[peer].out : n->peers[peer].in;
}

static void msg_end(struct node *n, uint32_t peer, size_t at, bool late)
{
    struct conn *c = existing_conn(n, peer);
    if (c) {
        if (late)
            conn_msg_end_late(c, at);
        else
            conn_msg_end(c, at);
        n->peers[peer].sent_ms = (int64_t)uv_now(&n->loop);
    }
}

void node_msg_end(struct node *n, uint32_t peer, size_t at)
{
    msg_end(n, peer, at, false);
}

size_t node_msg_queued(struct node *n, uint32_t peer)
{
    struct conn *c = existing_conn(n, peer);
    return c ? conn_queued_bytes(c) : 0;
}

/* ---- the rest of the API for the parts (part.h) ---------------------------------- */

const struct node_config *node_cfg(const struct node *n) { return &n->cfg; }
uint32_t node_self(const struct node *n) { return n->self; }
uint32_t node_count(const struct node *n) { return n->nodes; }
uv_loop_t *node_loop(struct node *n) { return &n->loop; }
struct kvs *node_kvs(struct node *n) { return n->kvs; }
struct node_counters *node_counters(struct node *n) { return &n->c; }
bool node_stopping(const struct node *n) { return n->stopping; }
int64_t node_mono_ns(const struct node *n) { (void)n; return clock_mono_ns(); }
int64_t node_wall_ns(const struct node *n) { (void)n; return clock_wall_ns(); }
bool node_tracing(const struct node *n) { return n->sink != NULL; }
int64_t node_now_ms(const struct node *n) { return (int64_t)uv_now(&n->loop); }
int64_t node_heard_ms(const struct node *n, uint32_t peer) { return n->peers[peer].heard_ms; }
int64_t node_sent_ms(const struct node *n, uint32_t peer) { return n->peers[peer].sent_ms; }

bool node_refused(const struct node *n, uint32_t peer)
{
    return peer < n->nodes && peer != n->self && n->peers[peer].met && n->peers[peer].refused;
}

void node_probe(struct node *n, uint32_t peer)
{
    if (peer < n->nodes && peer != n->self && !n->dead[peer])
        peer_conn(n, peer);
}

struct readyq *node_readyq(struct node *n, enum node_queue_id q)
{
    return q == NODE_LREADY ? &n->lready : q == NODE_SREADY ? &n->sready : &n->staged;
}

void node_trace_full(struct node *n, enum trace_kind kind, uint64_t task, int32_t peer,
                     int32_t status, int64_t count, int64_t bytes, int64_t duration_ns,
                     int64_t wall)
{
    if (n->sink)
        n->sink->put(n->sink->ctx, kind, task, peer, status, count, bytes, duration_ns, wall);
}

void node_trace_policy(struct node *n, const char *name, int32_t reason)
{
    if (n->sink)
        n->sink->policy(n->sink->ctx, name, reason, 0);
}

struct node_load node_load(const struct node *n)
{
    struct node_load l = {
        .slots = n->cfg.slots, .busy = n->busy, .staging = n->staging,
        .staged = (uint32_t)readyq_len(&n->staged), .staged_slots = n->staged_slots,
        .lready = (uint32_t)readyq_len(&n->lready), .sready = (uint32_t)readyq_len(&n->sready),
        .lready_zero = (uint32_t)n->lready.zero.len, .sready_zero = (uint32_t)n->sready.zero.len,
        .waiting = waitq_len(&n->waitq), .running_successors = n->running_successors,
        .arriving = n->arriving, .tasks_run = n->tasks_run,
        .est_task_length_s = n->est_task_length_s, .est_samples = n->est_samples,
        .busy_s = n->busy_s, .first_start_ns = n->first_start_ns,
    };
    return l;
}

/* ---- the information vector (info.c) --------------------------------------------- */

struct a2ws_vec *node_info(struct node *n) { return info_view(n->info); }
double node_info_elapsed_s(const struct node *n) { return info_elapsed_s(n->info); }
void node_info_saw_work(struct node *n) { info_saw_work(n->info); }

static int on_node_message(struct node *n, uint32_t from, uint16_t type, struct rbuf *r,
                           const char **reason)
{
    switch (proto_range_of(type)) {
    case PROTO_RANGE_KVS:
        return kvs_handle(n->kvs, from, type, r, reason);
    case PROTO_RANGE_SCHED:
        break;
    default:
        *reason = "message type not allowed from a node";
        return -EBADMSG;
    }
    int rc;
    uint8_t owner = n->owner[type & 0xff];
    if (type == MSG_STEAL_GRANT)
        rc = node__on_steal_grant(n, from, r);
    else if (type == MSG_MEMBER_DEAD || type == MSG_YOU_ARE_DEAD || type == MSG_HOLD_QUERY ||
             type == MSG_HOLD_NOT)
        rc = node__on_member_message(n, from, type, r);
    else if (type == MSG_RESUBMIT)
        rc = node__on_resubmit(n, from, r);
    else if (type == MSG_RECOMPUTE)
        rc = node__on_recompute(n, from, r);
    else if (owner)
        rc = node_parts[owner - 1]->on_message(n->state[owner - 1], from, type, r);
    else {
        *reason = "message type not allowed from a node";
        return -EBADMSG;
    }
    if (rc < 0)
        *reason = "malformed scheduler message";
    return rc;
}

static int on_message(struct conn *c, uint16_t type, struct rbuf *r, const char **reason)
{
    struct node *n = conn_hub_data(conn_hub_of(c));
    if (n->stopping)
        return 0;
    uintptr_t called = (uintptr_t)conn_data(c);
    if (!called && conn_peer_role(c) == CONN_ROLE_CLIENT)
        return node__on_client_message(n, c, type, r, reason);
    uint32_t from = called ? (uint32_t)(called - 1) : conn_peer_id(c);
    if (from >= n->nodes || from == n->self) {
        *reason = "message from a peer outside the membership";
        return -EBADMSG;
    }
    /* Late messages of a node declared dead never count (its work was taken over). */
    if (n->dead[from] && type != MSG_YOU_ARE_DEAD) {
        node__refuse_dead(n, c);
        return 0;
    }
    /* Any message is a sign of life (heartbeat.c). */
    n->peers[from].heard_ms = (int64_t)uv_now(&n->loop);
    n->peers[from].met = true;
    n->peers[from].refused = false;
    return on_node_message(n, from, type, r, reason);
}

static void on_ready(struct conn *c)
{
    struct node *n = conn_hub_data(conn_hub_of(c));
    uintptr_t called = (uintptr_t)conn_data(c);
    if (called) {
        /* It answered: whatever refused us before is listening again. */
        n->peers[called - 1].refused = false;
        return;
    }
    if (conn_peer_role(c) != CONN_ROLE_NODE)
        return;
    uint32_t id = conn_peer_id(c);
    if (id >= n->nodes || id == n->self) {
        conn_drop(c, "peer claims a node id outside the membership");
        return;
    }
    if (n->dead[id]) {
        node__refuse_dead(n, c);
        return;
    }
    struct peer *p = &n->peers[id];
    p->refused = false;
    if (c != p->out && !p->in)
        p->in = c;
}

/* What a closed connection to `peer` says about it (part.h's enum node_link): a refused
 * connect, or an open connection the peer closed or reset; -1 for anything else (this
 * side closed it, a protocol error, a timeout). */
static int link_event(struct node *n, struct conn *c, uint32_t peer, bool outbound)
{
    int err = conn_error(c);
    if (outbound && !conn_is_ready(c) && err == UV_ECONNREFUSED) {
        n->peers[peer].refused = true;
        return NODE_LINK_REFUSED;
    }
    if (conn_is_ready(c) && (err == UV_EOF || err == UV_ECONNRESET || err == UV_EPIPE))
        return NODE_LINK_LOST;
    return -1;
}

static void on_close(struct conn *c, const char *reason)
{
    struct node *n = conn_hub_data(conn_hub_of(c));
    uint32_t link_peer = 0;
    int link = -1;
    for (uint32_t i = 0; i < n->nodes; i++) {
        if (n->peers[i].out == c) {
            n->peers[i].out = NULL;
            link_peer = i;
            link = link_event(n, c, i, true);
            if (!n->stopping) {
                log_info("connection to node %u closed: %s", i, reason ? reason : "");
                node_trace(n, TRACE_NODE_DOWN, TRACE_NO_TASK, (int32_t)i, 0, 0);
            }
        }
        if (n->peers[i].in == c) {
            n->peers[i].in = NULL;
            link_peer = i;
            link = link_event(n, c, i, false);
        }
    }
    for (struct sync_wait *w = n->syncs; w; w = w->next)
        if (w->c == c)
            w->c = NULL;
    node__puts_drop(n, c);
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->jobs, pos, &k, &v)) != 0;) {
        struct job *j = v;
        if (j->client != c)
            continue;
        j->client = NULL;
        /* A client gone mid-submission sends no more: stop waiting for its tasks. */
        n->arriving -= j->arriving;
        j->arriving = 0;
    }
    /* Last: a part may declare the peer dead from here, which closes its other
     * connections (never this one, already gone from the peer table). */
    if (link >= 0 && !n->stopping && !n->dead[link_peer]) {
        for (size_t i = 0; i < node_nparts; i++)
            if (node_parts[i]->link && n->state[i])
                node_parts[i]->link(n->state[i], link_peer, (enum node_link)link);
    }
}

/* ---- life cycle ------------------------------------------------------------------------ */

/* NODE_SAMPLE: queue lengths now, and counters since start so that a reader who missed
 * events (or samples) still gets exact totals and utilisation between any two samples. */
static void trace_sample(struct node *n)
{
    if (!n->sink)
        return;
    int64_t now = clock_wall_ns();
    int64_t running_ns = 0;
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->running, pos, &k, &v)) != 0;) {
        const struct ntask *t = v;
        if (t->t_start && now > t->t_start)
            running_ns += now - t->t_start;
    }
    struct trace_sample s;
    memset(&s, 0, sizeof s);
    s.busy = (int32_t)n->busy;
    s.slots = (int32_t)n->cfg.slots;
    s.waitq = (int32_t)waitq_len(&n->waitq);
    s.lreadyq = (int32_t)readyq_len(&n->lready);
    s.sreadyq = (int32_t)readyq_len(&n->sready);
    s.completeq = (int32_t)(n->completeq > INT32_MAX ? INT32_MAX : n->completeq);
    s.started = (int64_t)n->tasks_started;
    s.ended = (int64_t)n->completeq;
    s.failed = (int64_t)n->tasks_failed;
    s.stolen_in = (int64_t)n->c.tasks_stolen;
    s.stolen_out = (int64_t)n->c.tasks_given;
    s.pushed = (int64_t)n->c.tasks_pushed;
    s.steal_requests = (int64_t)n->c.steal_requests;
    s.steal_fails = (int64_t)n->c.steal_fails;
    s.fetches = (int64_t)n->c.fetches;
    s.fetch_bytes = (int64_t)n->c.bytes_in;
    s.cache_hits = (int64_t)n->c.cache_hits_traced;
    s.busy_ns = n->busy_ns_done + running_ns;
    s.bytes_out = (int64_t)n->c.bytes_out;
    s.cancelled = (int64_t)n->tasks_cancelled;
    s.info_sent = (int64_t)n->c.info_sent;
    s.info_received = (int64_t)n->c.info_received;
    s.token_passes = (int64_t)n->c.token_passes;
    s.dropped = (int64_t)n->sink->dropped(n->sink->ctx);
    n->sink->sample(n->sink->ctx, &s, now);
}

static void sampler_cb(uv_timer_t *h)
{
    trace_sample(h->data);
}

/* How often the store's cold backup copies are packed, and how many bytes of them a
 * pass may deflate: a megabyte is a few milliseconds of one core, so a big job's copies
 * shrink within seconds without a pass that holds up the tasks. */
#define NODE_COMPACT_MS 100
#define NODE_COMPACT_BYTES (1u << 20)
/* Packed bytes after which the heap's freed pages go back to the system even while more
 * wait: the raw chunks lie between records, where only a trim hands them back. */
#define NODE_COMPACT_TRIM (16u << 20)
/* Packed bytes that earn a trim once nothing waits to be packed.  A trim hands back
 * every free page of the heap, the data plane's just-freed chunk buffers among them,
 * which the next chunks fault in again: a busy job's passes each packed a few records,
 * so the daemons trimmed ten times a second (1,621 madvise calls in a 4 s run of 32
 * local daemons, 36 with this).  What stays untrimmed is under this and reused. */
#define NODE_COMPACT_TRIM_DONE (1u << 20)

static void compactor_cb(uv_timer_t *h)
{
    struct node *n = h->data;
    bool more;
    n->packed += kvs_compact(n->kvs, NODE_COMPACT_BYTES, &more);
    if (n->packed >= NODE_COMPACT_TRIM || (!more && n->packed >= NODE_COMPACT_TRIM_DONE)) {
        malloc_trim(0);
        n->packed = 0;
    }
}

static void trace_start(struct node *n)
{
    n->sink = n->cfg.trace;
    if (!n->sink)
        return;
    node_trace(n, TRACE_NODE_UP, TRACE_NO_TASK, -1, n->cfg.slots, 0);
    n->sink->policy(n->sink->ctx, placement_policy_name(n->cfg.placement.policy), -1, 0);
    uint32_t ms = n->cfg.sample_ms ? n->cfg.sample_ms : 100;
    uv_timer_start(&n->sampler, sampler_cb, ms, ms);
}

/* The last sample and NODE_DOWN; the sink's owner (cmd_node) flushes after node_run. */
static void trace_stop(struct node *n)
{
    uv_timer_stop(&n->sampler);
    if (!n->sink)
        return;
    trace_sample(n);
    node_trace(n, TRACE_NODE_DOWN, TRACE_NO_TASK, -1, 0, 0);
    n->sink = NULL;
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct node *n = h->data;
    log_info("signal %d: stopping", signum);
    n->stop_requested = true;
    node_mark_dirty(n);
}

void node__stop(struct node *n)
{
    if (n->stopping)
        return;
    /* The parts' goodbyes (a stop on purpose is no crash: heartbeat.c), while they
     * may still send. */
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->leaving && n->state[i])
            node_parts[i]->leaving(n->state[i]);
    n->stopping = true;
    /* Flush what is queued (final reports, goodbyes) before the hub closes the
     * connections. */
    for (uint32_t i = 0; i < n->nodes; i++) {
        if (n->peers[i].out)
            conn_flush(n->peers[i].out);
        if (n->peers[i].in)
            conn_flush(n->peers[i].in);
    }
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->jobs, pos, &k, &v)) != 0;) {
        struct job *j = v;
        if (j->client)
            conn_flush(j->client);
    }
    exec_destroy(n->exec);
    n->exec = NULL;
    trace_stop(n);
    uv_close((uv_handle_t *)&n->sampler, NULL);
    uv_close((uv_handle_t *)&n->compactor, NULL);
    node__recover_close(n);
    /* Files being sent in go before the store that receives them. */
    node__puts_drop(n, NULL);
    /* The data plane first: its pending sends need the connections the hub closes. */
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i] == &part_data && n->state[i])
            node_parts[i]->close(n->state[i]);
    conn_hub_destroy(n->hub);
    n->hub = NULL;
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i] != &part_data && n->state[i] && node_parts[i]->close)
            node_parts[i]->close(n->state[i]);
    uv_idle_stop(&n->idle);
    uv_close((uv_handle_t *)&n->idle, NULL);
    uv_close((uv_handle_t *)&n->check, NULL);
    uv_close((uv_handle_t *)&n->sigterm, NULL);
    uv_close((uv_handle_t *)&n->sigint, NULL);
}

static void free_map(struct u64map *m, void (*fn)(void *))
{
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(m, pos, &k, &v)) != 0;)
        fn(v);
    u64map_fini(m);
}

static void free_ntask(void *p)
{
    ntask_free(p);
}

static void node_free(struct node *n)
{
    void *t;
    while ((t = readyq_pop(&n->lready)) != NULL)
        ntask_free(t);
    while ((t = readyq_pop(&n->sready)) != NULL)
        ntask_free(t);
    while ((t = readyq_pop(&n->staged)) != NULL)
        ntask_free(t);
    readyq_fini(&n->staged);
    readyq_fini(&n->lready);
    readyq_fini(&n->sready);
    waitq_fini(&n->waitq);
    free_map(&n->running, free_ntask);
    u64map_fini(&n->removed);
    u64map_fini(&n->moved);
    free_map(&n->early, node__early_free);
    node__recover_free(n);
    free_map(&n->jobs, free);
    u64map_fini(&n->puts); /* emptied by node__stop */
    kvs_destroy(n->kvs);
    while (n->ends) {
        struct pending_end *p = n->ends;
        n->ends = p->next;
        free(p->e.detail);
        free(p);
    }
    free(n->settles); /* their ends are in n->ends, freed above */
    while (n->spare_ends) {
        struct pending_end *p = n->spare_ends;
        n->spare_ends = p->next;
        free(p);
    }
    while (n->syncs) {
        struct sync_wait *w = n->syncs;
        n->syncs = w->next;
        free(w);
    }
    wbuf_fini(&n->discard);
    free(n->peers);
    free(n->dead);
    free(n->deaths);
    free(n->expelled);
    info_free(n->info);
    for (size_t i = 0; i < node_nparts; i++)
        if (n->state[i] && node_parts[i]->free)
            node_parts[i]->free(n->state[i]);
}

static struct wbuf *kvs_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    return node_msg_begin(ctx, node, type, at);
}

static struct wbuf *kvs_join(void *ctx, uint32_t node, uint16_t type, size_t most, size_t *at)
{
    struct node *n = ctx;
    struct conn *c = node < n->nodes && node != n->self ? peer_conn(n, node) : NULL;
    if (!c)
        return node_msg_begin(n, node, type, at);
    return conn_msg_join(c, type, most, at);
}

static void kvs_end(void *ctx, uint32_t node, size_t at)
{
    node_msg_end(ctx, node, at);
}

static void kvs_end_late(void *ctx, uint32_t node, size_t at)
{
    msg_end(ctx, node, at, true);
}

/* Each part's state, and which part owns which message type.  Stops at the first part
 * that cannot start (the data plane's store); the others' states stay NULL. */
static int parts_init(struct node *n, char **cause)
{
    for (size_t i = 0; i < node_nparts; i++) {
        const struct part *p = node_parts[i];
        for (const uint16_t *t = p->types; t && *t; t++) {
            if (proto_range_of(*t) != PROTO_RANGE_SCHED || n->owner[*t & 0xff]) {
                *cause = xasprintf("part %s claims message %s, which is not a free scheduler "
                                   "message type", p->name, proto_type_name(*t));
                return -EINVAL;
            }
            n->owner[*t & 0xff] = (uint8_t)(i + 1);
        }
        n->state[i] = p->init(n, cause);
        if (!n->state[i])
            return -EINVAL;
        if (p == &part_data)
            n->data = n->state[i];
    }
    return 0;
}

/* Buffers of a megabyte or more (a SUBMIT message read whole, a map's slot array as
 * it doubles) are mapped and unmapped on their own.  glibc's default raises that
 * threshold to the largest such buffer freed, after which each one is carved from the
 * heap between the records that outlive it, and its pages stay resident once it is
 * freed: 36 bytes a waiting task at 10^6 tasks (tools/bench/memory.sh).  A map costs
 * a few faults per megabyte, nothing beside what the megabyte carries.  Fixing that
 * threshold also fixes the heap's trim threshold at 128 KiB, which gave the top of the
 * heap back after every burst of frees and faulted it in again at the next burst
 * (page faults were 6 % of a NOOP run's CPU); the daemon trims on its own after a
 * forgotten job and after packing (malloc_trim), so the top may stay larger. */
#define NODE_MMAP_THRESHOLD (1 << 20)
#define NODE_TRIM_THRESHOLD (64 << 20)

int node_run(const struct node_config *cfg, char **cause)
{
    mallopt(M_MMAP_THRESHOLD, NODE_MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, NODE_TRIM_THRESHOLD);
    struct node *n = xcalloc(1, sizeof *n);
    n->cfg = *cfg;
    n->self = cfg->id;
    n->nodes = cfg->cluster->count;
    int rc = fs_mkdirs(cfg->workdir, 0700, NULL);
    if (rc < 0) {
        *cause = xasprintf("cannot create work directory '%s': %s", cfg->workdir, strerror(-rc));
        free(n);
        return rc;
    }
    /* Before the executors exist: the LW leader runs tasks with less (leader.c). */
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->configure)
            node_parts[i]->configure(&n->cfg);
    uv_loop_init(&n->loop);
    n->peers = xcalloc(n->nodes, sizeof *n->peers);
    n->dead = xcalloc(n->nodes, sizeof *n->dead);
    n->deaths = xcalloc(n->nodes, sizeof *n->deaths);
    for (uint32_t i = 0; i < n->nodes; i++)
        n->peers[i].heard_ms = n->peers[i].sent_ms = (int64_t)uv_now(&n->loop);
    waitq_init(&n->waitq);
    u64map_init(&n->early);
    u64map_init(&n->jobs);
    u64map_init(&n->puts);
    u64map_init(&n->running);
    u64map_init(&n->removed);
    u64map_init(&n->moved);
    readyq_init(&n->lready);
    readyq_init(&n->sready);
    readyq_init(&n->staged);
    wbuf_init(&n->discard);
    struct kvs_transport t = {.ctx = n, .msg_begin = kvs_begin, .msg_join = kvs_join,
                              .msg_end = kvs_end, .msg_end_late = kvs_end_late,
                              .notify = node__on_notify};
    n->kvs = kvs_create(n->self, n->nodes, &t);
    /* The effective R from here on (node_task.c reports ends by it). */
    if (!n->cfg.replicas)
        n->cfg.replicas = KVS_DEFAULT_REPLICAS;
    kvs_set_replicas(n->kvs, n->cfg.replicas);

    static const struct conn_callbacks callbacks = {
        .on_ready = on_ready, .on_message = on_message, .on_close = on_close};
    n->hub = conn_hub_create(&n->loop, &cfg->key, CONN_ROLE_NODE, n->self, &callbacks, n);
    const struct cluster_node *me = &cfg->cluster->nodes[n->self];
    rc = cfg->listen_fd >= 0 ? conn_hub_listen_fd(n->hub, cfg->listen_fd, cause)
                             : conn_hub_listen(n->hub, cfg->bind ? cfg->bind : me->host,
                                               me->port, cause);
    if (rc == 0) {
        n->exec = exec_create(&n->loop, cfg->workdir, n->cfg.speed, node__on_exec_done, n, cause);
        if (!n->exec)
            rc = -EINVAL;
        else {
            exec_set_node(n->exec, n->self);
            exec_set_batch_end(n->exec, node__on_exec_batch_end);
            exec_set_log_bytes(n->exec, cfg->task_log_bytes);
        }
    }
    uv_check_init(&n->loop, &n->check);
    n->check.data = n;
    uv_check_start(&n->check, node__check_cb);
    uv_idle_init(&n->loop, &n->idle);
    n->idle.data = n;
    uv_timer_init(&n->loop, &n->sampler);
    n->sampler.data = n;
    uv_timer_init(&n->loop, &n->compactor);
    n->compactor.data = n;
    uv_timer_start(&n->compactor, compactor_cb, NODE_COMPACT_MS, NODE_COMPACT_MS);
    node__recover_init(n);
    if (rc == 0)
        trace_start(n);
    uv_signal_init(&n->loop, &n->sigterm);
    n->sigterm.data = n;
    uv_signal_init(&n->loop, &n->sigint);
    n->sigint.data = n;
    n->info = info_create(n);
    if (rc == 0)
        rc = parts_init(n, cause);
    if (rc == 0) {
        uv_signal_start(&n->sigterm, on_signal, SIGTERM);
        uv_signal_start(&n->sigint, on_signal, SIGINT);
        log_info("node %u listening on %s:%d with %u slots at speed %.3g", n->self, me->host,
                 conn_hub_port(n->hub), n->cfg.slots, n->cfg.speed);
    } else {
        n->stop_requested = true;
        node_mark_dirty(n);
    }
    uv_run(&n->loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&n->loop) != 0)
        log_warn("loop closed with handles still open");
    if (rc == 0 && n->expelled) {
        *cause = xstrdup(n->expelled);
        rc = -ESHUTDOWN;
    }
    node_free(n);
    free(n);
    return rc;
}
