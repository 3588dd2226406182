/*
 * node — the node daemon's loop, the centre of the star (part.h): connections, messages,
 * the task queues, executors and completions (DESIGN.md "Life of a task", steps 2–6),
 * and the small API the parts use.  The parts — data plane, placement, the victim's
 * side of stealing, the thief, the LW leader, the CTWS token, idle peers, the A2WS ring
 * — are the table in parts.c; this file names none of them but the data plane, whose
 * staging the dispatcher drives.
 *
 * Everything here runs on the one loop thread.  Handlers only change state and mark
 * the node dirty; the check step (once per loop pass, after I/O) starts tasks on free
 * slots, then gives every part its step (answer thieves, steal, hand out, pass the
 * token, wake parked peers, spread the vector).  That keeps a chain of synchronous
 * completions (noop tasks whose metadata is local) iterative, not recursive, and lets
 * each pass's messages leave in one batch per peer.
 */
#include "core/runtime/part.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/log.h"
#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs.h"
#include "core/net/conn.h"
#include "core/net/proto.h"
#include "core/policy/placement.h"
#include "core/runtime/data.h"
#include "core/runtime/exec.h"
#include "core/runtime/info.h"
#include "core/runtime/objstore.h"
#include "core/runtime/parts.h"

struct peer {
    struct conn *out;       /* connection we opened; NULL when none */
    struct conn *in;        /* authenticated connection the peer opened; NULL when none */
    int64_t heard_ms, sent_ms; /* uv_now of the last message from it, and to it */
};

struct job {
    uint32_t id;
    uint32_t rank;          /* how many jobs this node had seen before it */
    struct conn *client;    /* borrowed; NULL once the client left */
    uint32_t tasks;
    uint32_t arriving;      /* of those this node was told it gets, not received yet */
    uint32_t done, failed, cancelled;
};

struct node {
    struct node_config cfg;
    uint32_t self, nodes;
    uv_loop_t loop;
    struct conn_hub *hub;   /* owned */
    struct kvs *kvs;        /* owned */
    struct exec *exec;      /* owned */
    struct peer *peers;     /* owned, `nodes` entries */
    bool *dead;             /* owned, `nodes` entries: declared dead (node_declare_dead) */
    uint32_t epoch;         /* membership epoch: deaths this node knows of */
    char *expelled;         /* owned: why a peer said this node was declared dead */
    struct u64map waitq;    /* key -> struct ntask * (owned) */
    struct u64map early;    /* key -> struct early * (owned): notices that beat their task */
    struct readyq lready, sready; /* items: struct ntask * (owned) */
    struct readyq staged;   /* inputs all here, waiting for a slot (oldest first); owned */
    uint32_t staging;       /* tasks whose inputs are being fetched */
    struct u64map jobs;     /* job id -> struct job * (owned) */
    uint32_t next_job_rank;
    uint64_t arriving;      /* sum of the jobs' arriving: not starving while non-zero */
    struct u64map running;  /* key -> struct ntask * (owned) handed to exec, not yet back */
    struct u64map removed;  /* key -> (void *)1: removed while staging or running */
    uint32_t busy;
    struct wbuf discard;    /* sink for messages to a peer that cannot be reached */

    uint64_t completeq, tasks_run, tasks_failed, tasks_started, tasks_cancelled;
    struct node_counters c;
    double est_task_length_s;   /* running mean of this node's task run times */
    uint64_t est_samples;
    double busy_s;              /* sum of run times of tasks that ended here */
    int64_t first_start_ns;     /* monotonic; 0 before the first task */
    uint32_t running_successors; /* sum of local_successors over running tasks */
    int64_t busy_ns_done;       /* slot-ns of tasks that ended after holding a slot */
    struct info *info;      /* the A2WS vector for the parts (info.c); owned */

    void *state[NODE_MAX_PARTS]; /* each part's, in table order */
    uint8_t owner[256];     /* scheduler message type's low byte -> part index + 1 */
    struct data_plane *data; /* state[] of part_data: the dispatcher stages through it */
    struct sync_wait *syncs; /* clients' SYNCs waiting for the store's barrier */
    struct u64map moved;    /* task key -> peer + 1: tasks this node gave away (node_moved) */
    struct pending_end *ends; /* completions waiting for their record's answer (R > 1) */

    const struct trace_sink *sink; /* borrowed from the config; NULL when not tracing */
    uv_timer_t sampler;         /* NODE_SAMPLE every sample_ms */
    uv_check_t check;       /* the once-per-pass step: dispatch, then the parts' steps */
    uv_idle_t idle;         /* running while the check step has work: no blocking poll */
    uv_signal_t sigterm, sigint;
    bool stop_requested, stopping;
};

/* Tasks started per check pass before the loop gets a turn at I/O: bounds latency of
 * messages while a node chews through a long queue of noop tasks. */
#define DISPATCH_BATCH 4096

/* A notice that arrived before its task's SUBMIT (the parent ran elsewhere first). */
struct early {
    uint8_t event;
    uint64_t bytes;
    int64_t t_ready;
    uint32_t nparents;
    struct tmd_parent *parents; /* owned */
};

static void early_free(void *p)
{
    struct early *e = p;
    free(e->parents);
    free(e);
}

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

void node_msg_end(struct node *n, uint32_t peer, size_t at)
{
    struct conn *c = existing_conn(n, peer);
    if (c) {
        conn_msg_end(c, at);
        n->peers[peer].sent_ms = (int64_t)uv_now(&n->loop);
    }
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
        .staged = (uint32_t)readyq_len(&n->staged),
        .lready = (uint32_t)readyq_len(&n->lready), .sready = (uint32_t)readyq_len(&n->sready),
        .lready_zero = (uint32_t)n->lready.zero.len, .sready_zero = (uint32_t)n->sready.zero.len,
        .waiting = u64map_len(&n->waitq), .running_successors = n->running_successors,
        .arriving = n->arriving, .tasks_run = n->tasks_run,
        .est_task_length_s = n->est_task_length_s, .est_samples = n->est_samples,
        .busy_s = n->busy_s, .first_start_ns = n->first_start_ns,
    };
    return l;
}

/* ---- membership ------------------------------------------------------------------- */

static int on_resubmit(struct node *n, uint32_t from, struct rbuf *r);

/*
 * A task whose holder died, listed by this node's store as the record's primary: it goes
 * to a live node, chosen by its key so that a dead node's tasks spread, as attempt + 1
 * (kvs_resubmit: from then on the old attempt's completion is refused).  The new holder
 * gets what the record knows: readiness, the parents' outputs, and the task's spec.
 */
static void hand_on(struct node *n, const struct tmd *rec, uint32_t to, bool bump);

static void on_orphan(void *arg, const struct tmd *rec)
{
    struct node *n = arg;
    uint32_t live = 0;
    for (uint32_t i = 0; i < n->nodes; i++)
        live += !n->dead[i];
    if (!live)
        return;
    uint32_t pick = (uint32_t)(task_key_hash(rec->key) % live), to = 0;
    for (uint32_t i = 0; i < n->nodes; i++)
        if (!n->dead[i] && pick-- == 0) {
            to = i;
            break;
        }
    hand_on(n, rec, to, true);
}

/* The task goes to `to` with what its record knows: as attempt + 1 (bump: a dead
 * holder's, handed on by the record's primary, so that a late completion of the old
 * attempt is refused), or as it is (taken back here: the record never left this node). */
static void hand_on(struct node *n, const struct tmd *rec, uint32_t to, bool bump)
{
    if (!rec->spec_len) {
        log_warn("task %llx: its holder died and its record carries no spec to run it again "
                 "(--replicas 1?)", (unsigned long long)rec->key);
        return;
    }
    /* The record changes in kvs_resubmit: what the new holder needs is taken first. */
    struct wbuf b;
    wbuf_init(&b);
    uint32_t attempt = rec->attempt + (bump ? 1 : 0), nparents = tmd_parents_done(rec);
    wbuf_put_u32(&b, attempt);
    wbuf_put_u8(&b, rec->num_wait_parent == 0);
    wbuf_put_u64(&b, (uint64_t)rec->t_ready);
    wbuf_put_u32(&b, nparents);
    for (uint32_t i = 0; i < nparents; i++) {
        wbuf_put_u64(&b, rec->parent_list[i].object);
        wbuf_put_u64(&b, rec->parent_list[i].bytes);
        wbuf_put_u32(&b, rec->parent_list[i].node);
    }
    wbuf_put(&b, rec->spec, rec->spec_len);
    uint64_t key = rec->key;
    if (!bump) {
        struct rbuf r;
        rbuf_init(&r, b.data, b.len);
        on_resubmit(n, n->self, &r);
    } else if (kvs_resubmit(n->kvs, key, rec->attempt, to) == 1) {
        log_info("task %llx: its holder died; attempt %u goes to node %u",
                 (unsigned long long)key, attempt, to);
        if (to == n->self) {
            struct rbuf r;
            rbuf_init(&r, b.data, b.len);
            on_resubmit(n, n->self, &r);
        } else {
            size_t at;
            struct wbuf *m = node_msg_begin(n, to, MSG_RESUBMIT, &at);
            wbuf_put(m, b.data, b.len);
            node_msg_end(n, to, at);
        }
    }
    wbuf_fini(&b);
}

void node_moved(struct node *n, uint64_t task, uint32_t to)
{
    u64map_put(&n->moved, task, (void *)(uintptr_t)(to + 1));
}

/* A task this node gave the dead node: if its record still names this node (the move
 * died with its primary before it was recorded), nobody else will run it. */
static void on_take_back(void *arg, int status, const struct tmd *rec)
{
    struct node *n = arg;
    if (status != 0 || !rec || task_status_final((enum task_status)rec->status) ||
        rec->holder != n->self || u64map_get(&n->waitq, rec->key) ||
        u64map_get(&n->running, rec->key))
        return;
    log_info("task %llx: given to a node that died before its move was recorded; "
             "taken back", (unsigned long long)rec->key);
    hand_on(n, rec, n->self, false);
}

static void resubmit_orphans(struct node *n, uint32_t dead)
{
    kvs_orphans(n->kvs, KVS_NO_SHARD, on_orphan, n);
    uint64_t *keys = NULL;
    size_t nk = 0, cap = 0;
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->moved, pos, &k, &v)) != 0;) {
        if ((uintptr_t)v != (uintptr_t)dead + 1)
            continue;
        keys = xgrow(keys, &cap, nk + 1, sizeof *keys);
        keys[nk++] = k;
    }
    for (size_t i = 0; i < nk; i++) {
        u64map_del(&n->moved, keys[i]);
        kvs_lookup(n->kvs, keys[i], on_take_back, n);
    }
    free(keys);
}

bool node_alive(const struct node *n, uint32_t peer) { return peer < n->nodes && !n->dead[peer]; }
const bool *node_dead_set(const struct node *n) { return n->dead; }
uint32_t node_epoch(const struct node *n) { return n->epoch; }

static void declare_dead(struct node *n, uint32_t peer, const char *why, bool spread)
{
    if (peer >= n->nodes || peer == n->self || n->dead[peer] || n->stopping)
        return;
    n->dead[peer] = true;
    n->epoch++;
    log_warn("node %u declared dead (%s); membership epoch %u", peer, why, n->epoch);
    node_trace_full(n, TRACE_NODE_DOWN, TRACE_NO_TASK, (int32_t)peer, TRACE_DOWN_DECLARED,
                    n->epoch, 0, 0, 0);
    struct peer *p = &n->peers[peer];
    if (p->out)
        conn_close(p->out, "node declared dead");
    if (p->in)
        conn_close(p->in, "node declared dead");
    p->out = p->in = NULL;
    if (spread) {
        for (uint32_t i = 0; i < n->nodes; i++) {
            if (i == n->self || n->dead[i])
                continue;
            size_t at;
            struct wbuf *b = node_msg_begin(n, i, MSG_MEMBER_DEAD, &at);
            wbuf_put_u32(b, peer);
            wbuf_put_u32(b, n->epoch);
            node_msg_end(n, i, at);
        }
    }
    /* The store first: it takes over the dead node's records before the parts act; then
     * the tasks the dead node held go to live nodes (resubmit, below). */
    kvs_set_down(n->kvs, peer);
    resubmit_orphans(n, peer);
    info_on_down(n->info, peer);
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->down && n->state[i])
            node_parts[i]->down(n->state[i], peer);
    node_mark_dirty(n);
}

void node_declare_dead(struct node *n, uint32_t peer, const char *why)
{
    declare_dead(n, peer, why, true);
}

/* A node declared dead spoke again (it was stopped, not killed): it is told so, and the
 * connection closes.  Nothing it sent is taken: its tasks belong to others now. */
static void refuse_dead(struct node *n, struct conn *c)
{
    size_t at;
    struct wbuf *b = conn_msg_begin(c, MSG_YOU_ARE_DEAD, &at);
    wbuf_put_u32(b, n->epoch);
    conn_msg_end(c, at);
    conn_close(c, "node declared dead");
}

static int on_member_message(struct node *n, uint32_t from, uint16_t type, struct rbuf *r)
{
    if (type == MSG_MEMBER_DEAD) {
        uint32_t node = rbuf_u32(r);
        uint32_t epoch = rbuf_u32(r);
        if (!rbuf_ok(r) || node >= n->nodes)
            return -EBADMSG;
        if (node == n->self) {
            char *why = xasprintf("node %u declared this node dead (its epoch %u)", from, epoch);
            free(n->expelled);
            n->expelled = why;
            log_error("%s: stopping", why);
            n->stop_requested = true;
            node_mark_dirty(n);
            return 0;
        }
        char why[64];
        snprintf(why, sizeof why, "told by node %u", from);
        declare_dead(n, node, why, false);
        return 0;
    }
    uint32_t epoch = rbuf_u32(r);
    if (!rbuf_ok(r))
        return -EBADMSG;
    free(n->expelled);
    n->expelled = xasprintf("node %u says this node was declared dead (its epoch %u)", from,
                            epoch);
    log_error("%s: stopping", n->expelled);
    n->stop_requested = true;
    node_mark_dirty(n);
    return 0;
}

/* ---- events to the parts ---------------------------------------------------------- */

void node_wake(struct node *n)
{
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->wake)
            node_parts[i]->wake(n->state[i]);
    node_mark_dirty(n);
}

void node_news(struct node *n)
{
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->news)
            node_parts[i]->news(n->state[i]);
}

void node_answering(struct node *n, uint32_t thief)
{
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->answering)
            node_parts[i]->answering(n->state[i], thief);
}

bool node_steal_failed(struct node *n, bool parked)
{
    bool reset = false;
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->steal_failed && node_parts[i]->steal_failed(n->state[i], parked))
            reset = true;
    return reset;
}

void node_share(struct node *n, struct ntask *t, int64_t wall)
{
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->offer && node_parts[i]->offer(n->state[i], t))
            return;
    node_trace(n, TRACE_TASK_QUEUED_SHARED, t->spec.key, -1, 0, wall);
    node_queue(n, NODE_SREADY, t, t->spec.input_bytes);
}

/* A task just became ready: the placement part puts it (node_queue, node_share or a
 * push); with no part that places, it runs here. */
static void make_ready(struct node *n, struct ntask *t)
{
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->place && node_parts[i]->place(n->state[i], t))
            return;
    node_trace(n, TRACE_TASK_QUEUED_LOCAL, t->spec.key, -1, 0, t->t_ready);
    node_queue(n, NODE_LREADY, t, t->spec.input_bytes);
}

/* ---- steal grants ---------------------------------------------------------------- */

/* A steal grant, whoever's request it answers (the thief's or the CTWS holder's): its
 * tasks go to SReadyQ, so that they may move on again if this node is slow; then the
 * parts hear of it. */
static int on_steal_grant(struct node *n, uint32_t from, struct rbuf *r)
{
    uint32_t req, count;
    int64_t now = clock_wall_ns();
    int rc = node_take_granted(n, from, r, NODE_SREADY, &req, &count, now);
    if (rc < 0)
        return rc;
    info_on_steal(n->info, from, count > 0);
    if (count) {
        node_trace(n, TRACE_STEAL_GRANT, TRACE_NO_TASK, (int32_t)from, count, now);
    } else {
        n->c.steal_fails++;
        node_trace_full(n, TRACE_STEAL_FAIL, TRACE_NO_TASK, (int32_t)from, STEAL_FAIL_EMPTY,
                        0, 0, 0, now);
    }
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->granted)
            node_parts[i]->granted(n->state[i], from, req, count);
    return 0;
}

/* ---- the information vector (info.c) --------------------------------------------- */

struct a2ws_vec *node_info(struct node *n) { return info_view(n->info); }
double node_info_elapsed_s(const struct node *n) { return info_elapsed_s(n->info); }
void node_info_saw_work(struct node *n) { info_saw_work(n->info); }

/* ---- jobs and reports ------------------------------------------------------------- */

static struct job *job_get(struct node *n, uint32_t id, struct conn *client)
{
    struct job *j = u64map_get(&n->jobs, id);
    if (!j) {
        j = xcalloc(1, sizeof *j);
        j->id = id;
        j->rank = n->next_job_rank++;
        u64map_put(&n->jobs, id, j);
    }
    if (client)
        j->client = client;
    return j;
}

void node_queue(struct node *n, enum node_queue_id q, struct ntask *t, uint64_t priority)
{
    struct job *j = job_get(n, task_key_job(t->spec.key), NULL);
    uint64_t order = (uint64_t)j->rank << 32 | task_key_index(t->spec.key);
    readyq_push_ordered(node_readyq(n, q), t, priority, order);
    node_mark_dirty(n);
}

static void report_end(struct node *n, const struct proto_task_end *e)
{
    struct job *j = job_get(n, task_key_job(e->key), NULL);
    switch (e->status) {
    case TASK_DONE: j->done++; break;
    case TASK_FAILED: j->failed++; break;
    default: j->cancelled++; break;
    }
    if (!j->client)
        return;
    size_t at;
    struct wbuf *b = conn_msg_begin(j->client, MSG_TASK_END, &at);
    proto_put_task_end(b, e);
    conn_msg_end(j->client, at);
}

/* ---- queues ------------------------------------------------------------------------ */

/* Reports a task cancelled (an ancestor failed, or job removal) and frees it.  `ran`
 * is what it did before a removal stopped it, or NULL when it never started. */
static void cancel_task(struct node *n, struct ntask *t, const struct exec_result *ran)
{
    struct proto_task_end e = {
        .key = t->spec.key, .status = TASK_CANCELLED, .node = n->self, .exit_code = -1,
        .t_ready = t->t_ready, .t_start = ran ? ran->t_start : 0,
        .t_end = ran ? ran->t_end : clock_wall_ns(),
        .detail = ran ? "removed while it ran" : "an ancestor failed, or it was removed",
    };
    n->completeq++;
    n->tasks_cancelled++;
    node_trace_full(n, TRACE_TASK_END, t->spec.key, -1, TASK_CANCELLED, -1, 0, 0, e.t_end);
    report_end(n, &e);
    ntask_free(t);
}

static int by_object(const void *a, const void *b)
{
    uint64_t x = ((const struct task_input *)a)->object, y = ((const struct task_input *)b)->object;
    return x < y ? -1 : x > y;
}

/* A ready task's inputs: what the workload declared plus each parent's output, where the
 * metadata store says it is.  input_bytes, the ready queues' priority, is their sum.
 * Parents are sorted by key (their order in the workload file), not by when they
 * finished, so that a command's staged inputs are numbered the same on every run. */
static void add_parent_inputs(struct ntask *t, uint32_t nparents, const struct tmd_parent *parents)
{
    struct task_spec *s = &t->spec;
    uint32_t first_parent = s->num_inputs;
    if (nparents) {
        s->inputs = xrealloc(s->inputs, (s->num_inputs + nparents) * sizeof *s->inputs);
        /* A parent that produced nothing leaves no object to read. */
        for (uint32_t i = 0; i < nparents; i++)
            if (parents[i].bytes)
                s->inputs[s->num_inputs++] = (struct task_input){
                    .object = parents[i].object, .bytes = parents[i].bytes,
                    .node = parents[i].node};
    }
    if (s->num_inputs > first_parent + 1)
        qsort(s->inputs + first_parent, s->num_inputs - first_parent, sizeof *s->inputs,
              by_object);
    s->input_bytes = 0;
    for (uint32_t i = 0; i < s->num_inputs; i++)
        s->input_bytes += s->inputs[i].bytes;
}

static void ready_or_cancel(struct node *n, struct ntask *t, uint8_t event, int64_t t_ready,
                            uint32_t nparents, const struct tmd_parent *parents)
{
    if (event == KVS_EVENT_CANCEL) {
        cancel_task(n, t, NULL);
        return;
    }
    add_parent_inputs(t, nparents, parents);
    t->t_ready = t_ready;
    make_ready(n, t);
}

/* A ready task of this node, found by key, left where it is (a linear scan: only a
 * resubmission of a task held here needs it). */
static struct ntask *find_ready(struct node *n, uint64_t key)
{
    struct readyq *queues[3] = {&n->lready, &n->sready, &n->staged};
    for (int q = 0; q < 3; q++)
        for (size_t i = 0; i < readyq_len(queues[q]); i++) {
            struct ntask *t = readyq_at(queues[q], i);
            if (t->spec.key == key)
                return t;
        }
    return NULL;
}

/* A dead holder's task, handed here by its record's primary (on_orphan): it waits for
 * its parents here, or is ready with their outputs.  A copy already held is kept. */
static int on_resubmit(struct node *n, uint32_t from, struct rbuf *r)
{
    (void)from;
    uint32_t attempt = rbuf_u32(r);
    uint8_t ready = rbuf_u8(r);
    int64_t t_ready = (int64_t)rbuf_u64(r);
    uint32_t nparents = rbuf_u32(r);
    if (!rbuf_ok(r) || (uint64_t)nparents * (8 + 8 + 4) > r->left)
        return -EBADMSG;
    struct tmd_parent *parents = nparents ? xcalloc(nparents, sizeof *parents) : NULL;
    for (uint32_t i = 0; i < nparents; i++) {
        parents[i].object = rbuf_u64(r);
        parents[i].bytes = rbuf_u64(r);
        parents[i].node = rbuf_u32(r);
    }
    struct ntask *t = rbuf_ok(r) ? ntask_decode(r) : NULL;
    if (!t) {
        free(parents);
        return -EBADMSG;
    }
    uint64_t key = t->spec.key;
    t->spec.attempt = attempt;
    /* Held here already (the record named the dead node because the move here died with
     * its primary): the copy here becomes the new attempt, so its completion counts. */
    struct ntask *held = u64map_get(&n->waitq, key);
    if (!held)
        held = u64map_get(&n->running, key);
    if (!held)
        held = find_ready(n, key);
    if (held) {
        held->spec.attempt = attempt;
        ntask_free(t);
        free(parents);
        return 0;
    }
    node_trace(n, TRACE_TASK_SUBMIT, key, -1, attempt, 0);
    struct early *e = u64map_del(&n->early, key);
    if (ready) {
        if (e)
            early_free(e);
        ready_or_cancel(n, t, KVS_EVENT_READY, t_ready ? t_ready : clock_wall_ns(), nparents,
                        parents);
    } else if (e) {
        ready_or_cancel(n, t, e->event, e->t_ready, e->nparents, e->parents);
        early_free(e);
    } else {
        u64map_put(&n->waitq, key, t);
    }
    free(parents);
    return 0;
}

/* A ready task of this node, found by key (a linear scan: only job removal needs it). */
static struct ntask *take_ready(struct node *n, uint64_t key)
{
    struct readyq *queues[3] = {&n->lready, &n->sready, &n->staged};
    for (int q = 0; q < 3; q++) {
        for (size_t i = 0; i < readyq_len(queues[q]); i++) {
            struct ntask *t = readyq_at(queues[q], i);
            if (t->spec.key == key) {
                readyq_remove(queues[q], t);
                return t;
            }
        }
    }
    return NULL;
}

/* The metadata store says a task this node holds is ready, or cancelled. */
static void on_notify(void *ctx, const struct kvs_notice *notice)
{
    struct node *n = ctx;
    struct ntask *t = u64map_del(&n->waitq, notice->key);
    if (t) {
        ready_or_cancel(n, t, notice->event, notice->t_ready, notice->nparents, notice->parents);
        return;
    }
    if (notice->event == KVS_EVENT_CANCEL) {
        /* Job removal reaches tasks past the wait queue too. */
        if ((t = take_ready(n, notice->key)) != NULL) {
            cancel_task(n, t, NULL);
            return;
        }
        struct ntask *running = u64map_get(&n->running, notice->key);
        if (running || data_staging(n->data, notice->key)) {
            u64map_put(&n->removed, notice->key, (void *)1);
            if (running)
                exec_kill(n->exec, running);
            return;
        }
    }
    struct early *e = u64map_get(&n->early, notice->key);
    if (!e) {
        e = xcalloc(1, sizeof *e);
        u64map_put(&n->early, notice->key, e);
    }
    e->event = notice->event;
    e->bytes = notice->all_data_size;
    e->t_ready = notice->t_ready;
    free(e->parents);
    e->parents = NULL;
    e->nparents = notice->nparents;
    if (notice->nparents) {
        e->parents = xmalloc(notice->nparents * sizeof *e->parents);
        memcpy(e->parents, notice->parents, notice->nparents * sizeof *e->parents);
    }
}

/* ---- completion ---------------------------------------------------------------------- */

/* The record now says DONE or FAILED: tell each child's shard (DESIGN step 5). */
static void tell_children(struct node *n, const struct tmd *rec)
{
    uint8_t field = rec->status == TASK_DONE ? KVS_FIELD_PARENT : KVS_FIELD_PARENT_FAILED;
    for (uint32_t i = 0; i < rec->num_children; i++)
        kvs_append(n->kvs, tmd_child(rec, i), field, n->self, rec->data_size, rec->key);
}

static void on_status_set(void *arg, int status, const struct tmd *rec)
{
    struct node *n = arg;
    if (status != 1 || !rec) {
        log_warn("task %llx: metadata status was %s at completion (cas %d)",
                 (unsigned long long)(rec ? rec->key : 0),
                 rec ? task_status_name(rec->status) : "missing", status);
        return;
    }
    tell_children(n, rec);
}

/*
 * With replicas a task may run twice: its holder was declared dead (a SIGSTOP, a
 * partition) or the move that brought it here died with its record's primary, and a
 * new attempt went elsewhere.  Only the attempt the record names completes it, so the
 * client hears of an end once the record took it; a refused end is dropped here.
 */
struct pending_end {
    struct node *n;
    struct pending_end *prev, *next; /* n->ends, freed with the node if never answered */
    uint32_t attempt;
    struct proto_task_end e;         /* detail points into `text` */
    char text[];
};

static void pending_end_unlink(struct pending_end *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        p->n->ends = p->next;
    if (p->next)
        p->next->prev = p->prev;
}

static void on_status_set_report(void *arg, int status, const struct tmd *rec)
{
    struct pending_end *p = arg;
    struct node *n = p->n;
    pending_end_unlink(p);
    if (status == 1 && rec) {
        report_end(n, &p->e);
        tell_children(n, rec);
    } else if (status == -ESTALE) {
        log_info("task %llx: attempt %u ended after the task was handed on as a new "
                 "attempt; this end is dropped", (unsigned long long)p->e.key, p->attempt);
    } else {
        log_warn("task %llx: metadata status was %s at completion (cas %d)",
                 (unsigned long long)p->e.key,
                 rec ? task_status_name(rec->status) : "missing", status);
    }
    free(p);
}

static struct pending_end *pending_end_new(struct node *n, const struct proto_task_end *e,
                                           uint32_t attempt)
{
    size_t len = e->detail ? strlen(e->detail) + 1 : 0;
    struct pending_end *p = xmalloc(sizeof *p + len);
    p->n = n;
    p->attempt = attempt;
    p->e = *e;
    p->e.detail = NULL;
    if (len) {
        memcpy(p->text, e->detail, len);
        p->e.detail = p->text;
    }
    p->prev = NULL;
    p->next = n->ends;
    if (n->ends)
        n->ends->prev = p;
    n->ends = p;
    return p;
}

/* A task ended: it ran (held_slot), or failed or was removed before it could. */
static void finish(struct node *n, struct ntask *t, const struct exec_result *r, bool held_slot)
{
    if (held_slot) {
        n->busy--;
        n->busy_ns_done += r->t_end - r->t_start;
    } else {
        /* Failed before a slot was taken (an input is gone): the start is its end. */
        node_trace(n, TRACE_TASK_START, t->spec.key, -1, 0, r->t_start);
    }
    data_release(n->data, t);
    if (u64map_del(&n->removed, t->spec.key)) {
        /* Removed while it staged or ran: its record and its subtree are cancelled
         * already; whatever it produced is not kept. */
        cancel_task(n, t, held_slot ? r : NULL);
        node_mark_dirty(n);
        return;
    }
    n->completeq++;
    n->tasks_run++;
    uint64_t size = 0;
    if (r->status == TASK_DONE) {
        size = data_keep_output(n->data, t);
        /* est_task_length of Algorithm 1: the running mean of this node's tasks. */
        double len = (double)(r->t_end - r->t_start) / 1e9;
        n->busy_s += len;
        n->est_samples++;
        n->est_task_length_s += (len - n->est_task_length_s) / (double)n->est_samples;
    } else {
        n->tasks_failed++;
    }
    struct proto_task_end e = {
        .key = t->spec.key, .status = r->status, .node = n->self, .exit_code = r->exit_code,
        .term_signal = r->term_signal, .t_ready = t->t_ready, .t_start = r->t_start,
        .t_end = r->t_end, .detail = r->error ? r->error : r->output_tail,
        .timed_out = r->timed_out,
    };
    node_trace_full(n, TRACE_TASK_END, t->spec.key, -1, r->status, r->exit_code, 0, 0,
                   r->t_end);
    struct tmd_run run = {.node = n->self, .attempt = t->spec.attempt, .t_start = r->t_start,
                          .t_end = r->t_end,
                          .data_size = size};
    uint64_t key = t->spec.key;
    if (n->cfg.replicas > 1) {
        struct pending_end *p = pending_end_new(n, &e, t->spec.attempt);
        ntask_free(t);
        kvs_cas(n->kvs, key, KVS_FIELD_STATUS, TASK_READY, r->status, &run,
                on_status_set_report, p);
    } else {
        /* Without replicas nothing runs twice: the client hears at once. */
        report_end(n, &e);
        ntask_free(t);
        kvs_cas(n->kvs, key, KVS_FIELD_STATUS, TASK_READY, r->status, &run, on_status_set, n);
    }
    node_mark_dirty(n);
}

static void on_exec_done(struct exec_result *r, void *data)
{
    struct node *n = data;
    struct ntask *t = r->arg;
    u64map_del(&n->running, t->spec.key);
    n->running_successors -= t->local_successors;
    t->local_successors = 0;
    finish(n, t, r, true);
}

static void fail_unstarted(struct node *n, struct ntask *t, const char *why)
{
    struct exec_result r = {.key = t->spec.key, .status = TASK_FAILED, .exit_code = -1,
                            .error = (char *)why};
    r.t_start = r.t_end = clock_wall_ns();
    finish(n, t, &r, false);
}

/* TASK_START says what the task read: count inputs of `bytes` in all, and status 1 when
 * some had to be fetched (0: all were here, a locality hit). */
static void trace_start_event(struct node *n, const struct ntask *t, int64_t wall)
{
    node_trace_full(n, TRACE_TASK_START, t->spec.key, -1,
                    (t->spec.flags & TASK_FLAG_FETCHED) ? 1 : 0, t->spec.num_inputs,
                    (int64_t)t->spec.input_bytes, 0, wall);
}

struct successor_count {
    struct node *n;
    uint32_t count;
};

static void count_waiting_children(void *arg, int status, const struct tmd *rec)
{
    struct successor_count *c = arg;
    if (status != 0 || !rec)
        return;
    for (uint32_t i = 0; i < rec->num_children; i++)
        if (u64map_get(&c->n->waitq, tmd_child(rec, i)))
            c->count++;
}

/*
 * Ready + successors (paper 004 §3): the children of a running task that wait on this
 * node will be ready here soon.  Only a record in the local shard is read (a lookup
 * there answers before it returns); a task whose record lives elsewhere (it was stolen
 * or pushed here) counts none rather than wait for a reply.
 */
static uint32_t local_successors(struct node *n, const struct ntask *t)
{
    if (n->cfg.steal.starvation != STEAL_STARVE_SUCCESSORS ||
        kvs_owner(n->kvs, t->spec.key) != n->self)
        return 0;
    struct successor_count c = {n, 0};
    kvs_lookup(n->kvs, t->spec.key, count_waiting_children, &c);
    return c.count;
}

/* Takes a slot and starts a task whose inputs are all here. */
static void run_task(struct node *n, struct ntask *t)
{
    if (!n->first_start_ns)
        n->first_start_ns = clock_mono_ns();
    n->busy++;
    n->tasks_started++;
    struct exec_result now;
    memset(&now, 0, sizeof now);
    char *cause = NULL;
    if (t->spec.kind == TASK_COMMAND && t->spec.num_inputs && data_stage_files(n->data, t, &cause) < 0) {
        now.status = TASK_FAILED;
        now.exit_code = -1;
        now.t_start = now.t_end = clock_wall_ns();
        now.error = xasprintf("cannot stage inputs: %s", cause ? cause : "?");
        free(cause);
        node_trace(n, TRACE_TASK_START, t->spec.key, -1, 0, now.t_start);
        finish(n, t, &now, true);
        free(now.error);
        return;
    }
    int rc = exec_start(n->exec, &t->spec, t, &now);
    if (rc == 0) {
        /* The executor's own start, read before it spawns and carried by its result: a
         * command that exits at once may be reaped (its end stamped) on the reaper's
         * thread before exec_start returns, and a trace reader measuring a sleep from
         * START to END sees what it ran, never less. */
        t->t_start = now.t_start;
        trace_start_event(n, t, t->t_start);
        u64map_put(&n->running, t->spec.key, t);
        t->local_successors = local_successors(n, t);
        n->running_successors += t->local_successors;
    } else if (rc == EXEC_DONE_NOW) {
        trace_start_event(n, t, now.t_start);
        finish(n, t, &now, true);
    } else {
        now.status = TASK_FAILED;
        now.exit_code = -1;
        now.t_start = now.t_end = clock_wall_ns();
        node_trace(n, TRACE_TASK_START, t->spec.key, -1, 0, now.t_start);
        now.error = xasprintf("cannot start task: %s", strerror(-rc));
        finish(n, t, &now, true);
        free(now.error);
    }
}

static void run_or_queue(struct node *n, struct ntask *t)
{
    if (n->busy < n->cfg.slots)
        run_task(n, t);
    else
        node_queue(n, NODE_STAGED, t, 0);
    node_mark_dirty(n);
}

void node_staged(struct node *n, struct ntask *t, const char *why)
{
    n->staging--;
    if (why || u64map_get(&n->removed, t->spec.key))
        fail_unstarted(n, t, why ? why : "removed"); /* finish reports a removal as such */
    else
        run_or_queue(n, t);
}

/* Takes a task from the ready queues and stages it. */
static void stage(struct node *n, struct ntask *t)
{
    int rc = data_stage(n->data, t);
    if (rc == 1) {
        run_or_queue(n, t);
    } else if (rc == 0) {
        n->staging++;
    } else {
        char *why = xasprintf("input unavailable: %s", strerror(-rc));
        fail_unstarted(n, t, why);
        free(why);
    }
}

/*
 * Fills free slots, and overlaps data movement with execution: up to `slots` tasks
 * fetch their inputs at a time, besides the running ones, so that each is ready when a
 * slot frees (the papers' executors fetch, then run; without this a slot idles for every
 * fetch).  Tasks without inputs are left in the queues until a slot is free for them,
 * where thieves can still take them.  When a slot is free but the fetch window is full
 * and the queue's head needs data, the oldest task that needs no data runs instead of
 * the slot idling.
 *
 * Returns true when it stopped at the batch bound with work perhaps left, false when
 * nothing more can start now: then the loop may block until a message, a fetch or a
 * task end changes that (node_mark_dirty), instead of spinning on a queue whose head
 * waits for the fetch window.
 */
static bool dispatch(struct node *n)
{
    uint32_t slots = n->cfg.slots;
    for (int step = 0; step < DISPATCH_BATCH; step++) {
        if (n->busy < slots && readyq_len(&n->staged)) {
            run_task(n, readyq_pop(&n->staged));
            continue;
        }
        struct readyq *q = readyq_len(&n->lready) ? &n->lready : &n->sready;
        struct ntask *head = readyq_peek(q);
        if (!head)
            return false;
        uint32_t spoken = n->busy + (uint32_t)readyq_len(&n->staged);
        bool slot_free = spoken < slots;
        /* At most `prefetch` fetching, and at most slots + prefetch tasks out of the
         * queues in all: what sits in the queues stays stealable.  Prefetch 0 is
         * MATRIX's executor: a task fetches its inputs only once it has a slot. */
        uint32_t pf = n->cfg.prefetch == NODE_PREFETCH_SLOTS ? slots : n->cfg.prefetch;
        bool window_free = pf ? n->staging < pf && spoken + n->staging < slots + pf
                              : spoken + n->staging < slots;
        if (head->spec.num_inputs == 0 ? slot_free : window_free) {
            stage(n, readyq_pop(q));
            continue;
        }
        if (!slot_free)
            return false;
        /* A slot is free, the fetch window is full and the head needs data. */
        struct ntask *low = readyq_peek_low(q);
        if (!low || low->spec.num_inputs)
            return false;
        stage(n, readyq_take_low(q));
    }
    return true;
}

static void node_stop(struct node *n);

static void check_cb(uv_check_t *h)
{
    struct node *n = h->data;
    if (n->stop_requested) {
        node_stop(n);
        return;
    }
    bool more = dispatch(n);
    /* After dispatch, so that what this pass brought starts here before any of it can
     * be granted away (the progress rule, victim.c), and the LW leader's own free slots
     * take their tasks before it hands any out.  The order of the parts: parts.c. */
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->step)
            node_parts[i]->step(n->state[i]);
    /* Last: the acknowledgements of what the replicas applied this pass (core/kvs). */
    kvs_flush(n->kvs);
    if (!more)
        uv_idle_stop(&n->idle);
}

/* ---- messages ------------------------------------------------------------------------- */

static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void send_stats(struct node *n, struct conn *c, uint32_t req)
{
    struct proto_stats s = {
        .node = n->self, .slots = n->cfg.slots, .busy = n->busy, .speed = n->cfg.speed,
        .waitq = (uint32_t)u64map_len(&n->waitq), .lready = (uint32_t)readyq_len(&n->lready),
        .sready = (uint32_t)readyq_len(&n->sready), .completeq = n->completeq,
        .tasks_run = n->tasks_run, .tasks_failed = n->tasks_failed,
        .steals_attempted = n->c.steals_attempted, .steals_succeeded = n->c.steals_succeeded,
        .tasks_stolen = n->c.tasks_stolen, .tasks_given = n->c.tasks_given,
        .kvs_records = kvs_local_records(n->kvs), .rss_bytes = rss_bytes(),
        .tasks_pushed = n->c.tasks_pushed, .tasks_with_inputs = n->c.tasks_with_inputs,
        .locality_hits = n->c.locality_hits, .fetches = n->c.fetches,
        .bytes_in = n->c.bytes_in, .bytes_out = n->c.bytes_out,
        .policy_switches = n->c.policy_switches, .est_task_length_s = n->est_task_length_s,
    };
    struct objstore_stats os;
    objstore_get_stats(data_store(n->data), &os);
    s.cache_hits = os.cache_hits;
    s.cache_misses = os.cache_misses;
    s.njobs = (uint32_t)u64map_len(&n->jobs);
    s.jobs = xcalloc(s.njobs ? s.njobs : 1, sizeof *s.jobs);
    uint32_t i = 0;
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->jobs, pos, &k, &v)) != 0;) {
        struct job *j = v;
        s.jobs[i++] = (struct proto_job_count){j->id, j->tasks, j->done, j->failed, j->cancelled};
    }
    size_t at;
    struct wbuf *b = conn_msg_begin(c, MSG_STATS_REPLY, &at);
    wbuf_put_u32(b, req);
    proto_put_stats(b, &s);
    conn_msg_end(c, at);
    free(s.jobs);
}

static int on_submit(struct node *n, struct conn *c, struct rbuf *r, const char **reason)
{
    uint32_t count = rbuf_u32(r);
    if (!rbuf_ok(r) || count > PROTO_MAX_BATCH) {
        *reason = "malformed submit";
        return -EBADMSG;
    }
    int64_t now = clock_wall_ns();
    for (uint32_t i = 0; i < count; i++) {
        struct ntask *t = ntask_decode(r);
        if (!t) {
            *reason = "malformed task in submit";
            return -EBADMSG;
        }
        struct job *j = job_get(n, task_key_job(t->spec.key), c);
        if (j->arriving) {
            j->arriving--;
            n->arriving--;
        }
        if (u64map_get(&n->waitq, t->spec.key)) {
            log_warn("duplicate submit of task %llx from %s ignored",
                     (unsigned long long)t->spec.key, conn_peer_name(c));
            ntask_free(t);
            continue;
        }
        node_trace(n, TRACE_TASK_SUBMIT, t->spec.key, -1, 0, now);
        struct early *e = u64map_del(&n->early, t->spec.key);
        if (e) {
            ready_or_cancel(n, t, e->event, e->t_ready, e->nparents, e->parents);
            early_free(e);
        } else if (t->spec.num_parents == 0) {
            add_parent_inputs(t, 0, NULL);
            t->t_ready = now;
            make_ready(n, t);
        } else {
            u64map_put(&n->waitq, t->spec.key, t);
        }
    }
    return 0;
}

/* A client's SYNC waiting for the store's barrier; its connection may close first. */
struct sync_wait {
    struct node *n;
    struct conn *c;         /* NULL once the client left */
    uint64_t token;
    struct sync_wait *next;
};

static void sync_done(void *arg)
{
    struct sync_wait *w = arg;
    struct node *n = w->n;
    if (w->c && !n->stopping) {
        size_t at;
        struct wbuf *b = conn_msg_begin(w->c, MSG_SYNC_REPLY, &at);
        wbuf_put_u64(b, w->token);
        conn_msg_end(w->c, at);
    }
    for (struct sync_wait **p = &n->syncs; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    free(w);
}

static int on_client_message(struct node *n, struct conn *c, uint16_t type, struct rbuf *r,
                             const char **reason)
{
    switch (type) {
    case MSG_JOB_BEGIN: {
        uint32_t id = rbuf_u32(r);
        uint32_t tasks = rbuf_u32(r);
        uint32_t here = rbuf_u32(r);
        if (!rbuf_ok(r))
            break;
        if (here > tasks) {
            *reason = "job begin announces more tasks for this node than the job has";
            return -EBADMSG;
        }
        info_job_begins(n->info);
        struct job *j = job_get(n, id, c);
        j->tasks = tasks;
        n->arriving -= j->arriving;
        j->arriving = here;
        n->arriving += here;
        /* Nodes that get nothing of this job may steal at once; the others wait for
         * their own tasks (steal_starving). */
        node_wake(n);
        return 0;
    }
    case MSG_SUBMIT:
        return on_submit(n, c, r, reason);
    case MSG_SYNC: {
        uint64_t token = rbuf_u64(r);
        if (!rbuf_ok(r))
            break;
        /* Answered once what the client inserted has reached every live backup, so
         * that it survives one death (at R = 1: at once). */
        struct sync_wait *w = xcalloc(1, sizeof *w);
        w->n = n;
        w->c = c;
        w->token = token;
        w->next = n->syncs;
        n->syncs = w;
        kvs_barrier(n->kvs, sync_done, w);
        return 0;
    }
    case MSG_STATS_QUERY: {
        uint32_t req = rbuf_u32(r);
        if (!rbuf_ok(r))
            break;
        send_stats(n, c, req);
        return 0;
    }
    case MSG_OBJECT_CREATE: {
        uint64_t key = rbuf_u64(r);
        uint64_t bytes = rbuf_u64(r);
        if (!rbuf_ok(r))
            break;
        char *cause = NULL;
        int rc = objstore_put_generated(data_store(n->data), key, bytes, &cause);
        if (rc < 0 && rc != -EEXIST)
            log_warn("cannot create data object %llx of %llu bytes for %s: %s",
                     (unsigned long long)key, (unsigned long long)bytes, conn_peer_name(c),
                     cause ? cause : strerror(-rc));
        free(cause);
        return 0;
    }
    case MSG_SHUTDOWN:
        log_info("shutdown requested by %s", conn_peer_name(c));
        n->stop_requested = true;
        node_mark_dirty(n);
        return 0;
    case MSG_KVS_INSERT:
    case MSG_KVS_REMOVE:
    case MSG_KVS_APPEND:
    case MSG_KVS_FORGET:
        return kvs_handle(n->kvs, KVS_NO_SHARD, type, r, reason);
    default:
        *reason = "message type not allowed from a client";
        return -EBADMSG;
    }
    *reason = "malformed client message";
    return -EBADMSG;
}

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
        rc = on_steal_grant(n, from, r);
    else if (type == MSG_MEMBER_DEAD || type == MSG_YOU_ARE_DEAD)
        rc = on_member_message(n, from, type, r);
    else if (type == MSG_RESUBMIT)
        rc = on_resubmit(n, from, r);
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
        return on_client_message(n, c, type, r, reason);
    uint32_t from = called ? (uint32_t)(called - 1) : conn_peer_id(c);
    if (from >= n->nodes || from == n->self) {
        *reason = "message from a peer outside the membership";
        return -EBADMSG;
    }
    /* Late messages of a node declared dead never count (its work was taken over). */
    if (n->dead[from] && type != MSG_YOU_ARE_DEAD) {
        refuse_dead(n, c);
        return 0;
    }
    /* Any message is a sign of life (heartbeat.c). */
    n->peers[from].heard_ms = (int64_t)uv_now(&n->loop);
    return on_node_message(n, from, type, r, reason);
}

static void on_ready(struct conn *c)
{
    struct node *n = conn_hub_data(conn_hub_of(c));
    if (conn_data(c) || conn_peer_role(c) != CONN_ROLE_NODE)
        return;
    uint32_t id = conn_peer_id(c);
    if (id >= n->nodes || id == n->self) {
        conn_drop(c, "peer claims a node id outside the membership");
        return;
    }
    if (n->dead[id]) {
        refuse_dead(n, c);
        return;
    }
    struct peer *p = &n->peers[id];
    if (c != p->out && !p->in)
        p->in = c;
}

static void on_close(struct conn *c, const char *reason)
{
    struct node *n = conn_hub_data(conn_hub_of(c));
    for (uint32_t i = 0; i < n->nodes; i++) {
        if (n->peers[i].out == c) {
            n->peers[i].out = NULL;
            if (!n->stopping) {
                log_info("connection to node %u closed: %s", i, reason ? reason : "");
                node_trace(n, TRACE_NODE_DOWN, TRACE_NO_TASK, (int32_t)i, 0, 0);
            }
        }
        if (n->peers[i].in == c)
            n->peers[i].in = NULL;
    }
    for (struct sync_wait *w = n->syncs; w; w = w->next)
        if (w->c == c)
            w->c = NULL;
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
    s.waitq = (int32_t)u64map_len(&n->waitq);
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

static void node_stop(struct node *n)
{
    if (n->stopping)
        return;
    n->stopping = true;
    /* Flush what is queued (final reports) before the hub closes the connections. */
    for (uint32_t i = 0; i < n->nodes; i++) {
        if (n->peers[i].out)
            conn_flush(n->peers[i].out);
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
    free_map(&n->waitq, free_ntask);
    free_map(&n->running, free_ntask);
    u64map_fini(&n->removed);
    u64map_fini(&n->moved);
    free_map(&n->early, early_free);
    free_map(&n->jobs, free);
    kvs_destroy(n->kvs);
    while (n->ends) {
        struct pending_end *p = n->ends;
        n->ends = p->next;
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

static void kvs_end(void *ctx, uint32_t node, size_t at)
{
    node_msg_end(ctx, node, at);
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

int node_run(const struct node_config *cfg, char **cause)
{
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
    for (uint32_t i = 0; i < n->nodes; i++)
        n->peers[i].heard_ms = n->peers[i].sent_ms = (int64_t)uv_now(&n->loop);
    u64map_init(&n->waitq);
    u64map_init(&n->early);
    u64map_init(&n->jobs);
    u64map_init(&n->running);
    u64map_init(&n->removed);
    u64map_init(&n->moved);
    readyq_init(&n->lready);
    readyq_init(&n->sready);
    readyq_init(&n->staged);
    wbuf_init(&n->discard);
    struct kvs_transport t = {.ctx = n, .msg_begin = kvs_begin, .msg_end = kvs_end,
                              .notify = on_notify};
    n->kvs = kvs_create(n->self, n->nodes, &t);
    kvs_set_replicas(n->kvs, cfg->replicas ? cfg->replicas : 1);

    static const struct conn_callbacks callbacks = {
        .on_ready = on_ready, .on_message = on_message, .on_close = on_close};
    n->hub = conn_hub_create(&n->loop, &cfg->key, CONN_ROLE_NODE, n->self, &callbacks, n);
    const struct cluster_node *me = &cfg->cluster->nodes[n->self];
    rc = cfg->listen_fd >= 0 ? conn_hub_listen_fd(n->hub, cfg->listen_fd, cause)
                             : conn_hub_listen(n->hub, me->host, me->port, cause);
    if (rc == 0) {
        n->exec = exec_create(&n->loop, cfg->workdir, n->cfg.speed, on_exec_done, n, cause);
        if (!n->exec)
            rc = -EINVAL;
    }
    uv_check_init(&n->loop, &n->check);
    n->check.data = n;
    uv_check_start(&n->check, check_cb);
    uv_idle_init(&n->loop, &n->idle);
    n->idle.data = n;
    uv_timer_init(&n->loop, &n->sampler);
    n->sampler.data = n;
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
