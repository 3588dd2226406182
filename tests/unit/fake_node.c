/*
 * fake_node — the node's API for its parts, implemented for unit tests (fake_node.h
 * says how it behaves).  Linked into tests/unit/test_part_*.c instead of node.c: the
 * parts cannot tell the difference, which is the point of part.h.
 */
#include "fake_node.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/fd.h"
#include "core/policy/placement.h"

/* ---- capture ---------------------------------------------------------------------- */

static struct wbuf *capture_begin(struct node *n, uint32_t peer, uint16_t type, size_t *at)
{
    n->msgs = xgrow(n->msgs, &n->msgs_cap, n->nmsgs + 1, sizeof *n->msgs);
    struct fake_msg *m = &n->msgs[n->nmsgs];
    memset(m, 0, sizeof *m);
    m->peer = peer;
    m->type = type;
    wbuf_init(&m->body);
    *at = n->nmsgs++;
    return &m->body;
}

static struct wbuf *kvs_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    return capture_begin(ctx, node, type, at);
}

static void kvs_end(void *ctx, uint32_t node, size_t at)
{
    (void)ctx;
    (void)node;
    (void)at;
}

static void kvs_notify(void *ctx, const struct kvs_notice *notice)
{
    (void)ctx;
    (void)notice;
}

struct node *fake_node_new(uint32_t self, uint32_t nodes, uint32_t slots, const char *workdir)
{
    struct node *n = xcalloc(1, sizeof *n);
    n->self = self;
    n->nodes = nodes < FAKE_MAX_NODES ? nodes : FAKE_MAX_NODES;
    for (uint32_t i = 0; i < n->nodes; i++) {
        n->members[i].id = i;
        strcpy(n->members[i].host, "127.0.0.1");
        n->members[i].slots = slots;
        n->members[i].speed = 1;
    }
    n->cluster.count = n->nodes;
    n->cluster.nodes = n->members;
    n->cfg.id = self;
    n->cfg.cluster = &n->cluster;
    n->cfg.slots = slots;
    n->cfg.speed = 1;
    n->cfg.workdir = workdir;
    n->cfg.listen_fd = -1;
    n->cfg.seed = 12345 + self;
    n->cfg.steal_timeout_ms = 1;
    n->cfg.prefetch = NODE_PREFETCH_SLOTS;
    steal_params_default(&n->cfg.steal);
    placement_params_default(&n->cfg.placement);
    uv_loop_init(&n->loop);
    uv_timer_init(&n->loop, &n->guard);
    for (int q = 0; q < 3; q++)
        readyq_init(&n->q[q]);
    struct kvs_transport t = {.ctx = n, .msg_begin = kvs_begin, .msg_end = kvs_end,
                              .notify = kvs_notify};
    n->kvs = kvs_create(self, n->nodes, &t);
    n->mono = 1000000000;
    n->wall = 1700000000000000000;
    for (uint32_t i = 0; i < FAKE_MAX_NODES; i++)
        n->heard_ms[i] = n->sent_ms[i] = node_now_ms(n);
    return n;
}

void *fake_node_add(struct node *n, const struct part *p)
{
    if (n->nparts >= FAKE_MAX_PARTS)
        abort();
    if (p->configure)
        p->configure(&n->cfg);
    char *cause = NULL;
    void *s = p->init(n, &cause);
    if (!s) {
        fprintf(stderr, "fake node: part %s did not start: %s\n", p->name, cause ? cause : "?");
        abort();
    }
    n->parts[n->nparts] = p;
    n->state[n->nparts++] = s;
    return s;
}

void fake_node_info_on(struct node *n, uint32_t radius)
{
    n->info_on = true;
    n->entries = xcalloc(n->nodes, sizeof *n->entries);
    a2ws_vec_init(&n->vec, n->entries, n->self, n->nodes, radius);
}

void fake_node_step(struct node *n)
{
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->step)
            n->parts[i]->step(n->state[i]);
}

int fake_node_deliver(struct node *n, uint32_t from, uint16_t type, const void *payload,
                      size_t len)
{
    for (size_t i = 0; i < n->nparts; i++) {
        for (const uint16_t *t = n->parts[i]->types; t && *t; t++) {
            if (*t != type)
                continue;
            struct rbuf r;
            rbuf_init(&r, payload, len);
            return n->parts[i]->on_message(n->state[i], from, type, &r);
        }
    }
    return -ENOENT;
}

size_t fake_node_pass(struct node *from, struct node *to, size_t *unowned)
{
    size_t done = 0, kept = 0;
    /* Delivering may capture new messages on `from` (a loop back): take the list first. */
    struct fake_msg *msgs = from->msgs;
    size_t nmsgs = from->nmsgs;
    from->msgs = NULL;
    from->nmsgs = from->msgs_cap = 0;
    for (size_t i = 0; i < nmsgs; i++) {
        struct fake_msg *m = &msgs[i];
        if (m->peer != to->self) {
            struct wbuf *b;
            size_t at;
            b = capture_begin(from, m->peer, m->type, &at);
            wbuf_put(b, m->body.data, m->body.len);
            kept++;
        } else if (fake_node_deliver(to, from->self, m->type, m->body.data, m->body.len) ==
                   -ENOENT) {
            if (unowned)
                (*unowned)++;
        } else {
            done++;
        }
        wbuf_fini(&m->body);
    }
    free(msgs);
    (void)kept;
    return done;
}

static void guard_cb(uv_timer_t *h)
{
    (void)h;
}

void fake_node_run_once(struct node *n, bool block)
{
    if (block)
        uv_timer_start(&n->guard, guard_cb, 100, 0);
    uv_run(&n->loop, block ? UV_RUN_ONCE : UV_RUN_NOWAIT);
    uv_timer_stop(&n->guard);
}

static void expire_cb(uv_handle_t *h, void *arg)
{
    struct node *n = arg;
    if (h->type != UV_TIMER || h == (uv_handle_t *)&n->guard || !uv_is_active(h))
        return;
    uv_timer_t *t = (uv_timer_t *)h;
    /* libuv has no getter for a timer's callback; its field is stable across 1.x. */
    uv_timer_start(t, t->timer_cb, 0, 0);
}

void fake_node_expire_timers(struct node *n)
{
    uv_walk(&n->loop, expire_cb, n);
}

void fake_msgs_clear(struct node *n)
{
    for (size_t i = 0; i < n->nmsgs; i++)
        wbuf_fini(&n->msgs[i].body);
    n->nmsgs = 0;
}

void fake_node_free(struct node *n)
{
    n->stopping = true;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->close)
            n->parts[i]->close(n->state[i]);
    uv_close((uv_handle_t *)&n->guard, NULL);
    uv_run(&n->loop, UV_RUN_DEFAULT);
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->free)
            n->parts[i]->free(n->state[i]);
    uv_loop_close(&n->loop);
    for (int q = 0; q < 3; q++) {
        void *t;
        while ((t = readyq_pop(&n->q[q])) != NULL)
            ntask_free(t);
        readyq_fini(&n->q[q]);
    }
    kvs_destroy(n->kvs);
    fake_msgs_clear(n);
    free(n->msgs);
    free(n->traces);
    free(n->staged_tasks);
    free(n->entries);
    free(n);
}

size_t fake_msgs(const struct node *n, uint16_t type)
{
    size_t k = 0;
    for (size_t i = 0; i < n->nmsgs; i++)
        k += !type || n->msgs[i].type == type;
    return k;
}

struct fake_msg *fake_msg(struct node *n, uint16_t type, size_t i)
{
    for (size_t j = 0; j < n->nmsgs; j++)
        if (!type || n->msgs[j].type == type)
            if (i-- == 0)
                return &n->msgs[j];
    return NULL;
}

size_t fake_traces(const struct node *n, enum trace_kind kind)
{
    size_t k = 0;
    for (size_t i = 0; i < n->ntraces; i++)
        k += n->traces[i].kind == kind;
    return k;
}

struct ntask *fake_task(uint32_t index, bool stealable, uint64_t input_bytes, uint32_t holder)
{
    struct ntask *t = xcalloc(1, sizeof *t);
    t->spec.key = task_key(1, index);
    t->spec.kind = TASK_NOOP;
    t->spec.flags = stealable ? TASK_FLAG_STEALABLE : 0;
    if (input_bytes) {
        t->spec.inputs = xcalloc(1, sizeof *t->spec.inputs);
        t->spec.inputs[0] = (struct task_input){
            .object = task_key(2, index), .bytes = input_bytes, .node = holder};
        t->spec.num_inputs = 1;
        t->spec.input_bytes = input_bytes;
    }
    return t;
}

void fake_queue(struct node *n, enum node_queue_id q, struct ntask *t)
{
    node_queue(n, q, t, q == NODE_STAGED ? 0 : t->spec.input_bytes);
}

/* ---- the API of part.h ------------------------------------------------------------ */

const struct node_config *node_cfg(const struct node *n) { return &n->cfg; }
uint32_t node_self(const struct node *n) { return n->self; }
uint32_t node_count(const struct node *n) { return n->nodes; }
uv_loop_t *node_loop(struct node *n) { return &n->loop; }
struct kvs *node_kvs(struct node *n) { return n->kvs; }
struct node_counters *node_counters(struct node *n) { return &n->c; }
bool node_stopping(const struct node *n) { return n->stopping; }
int64_t node_mono_ns(const struct node *n) { return n->mono; }
int64_t node_wall_ns(const struct node *n) { return n->wall; }
bool node_tracing(const struct node *n) { return n->tracing; }
int64_t node_now_ms(const struct node *n) { return n->mono / 1000000; }
int64_t node_heard_ms(const struct node *n, uint32_t peer) { return n->heard_ms[peer]; }
int64_t node_sent_ms(const struct node *n, uint32_t peer) { return n->sent_ms[peer]; }

struct readyq *node_readyq(struct node *n, enum node_queue_id q)
{
    return &n->q[q];
}

struct node_load node_load(const struct node *n)
{
    struct node_load l = n->load;
    l.slots = n->cfg.slots;
    l.staged = (uint32_t)readyq_len(&n->q[NODE_STAGED]);
    l.lready = (uint32_t)readyq_len(&n->q[NODE_LREADY]);
    l.sready = (uint32_t)readyq_len(&n->q[NODE_SREADY]);
    l.lready_zero = (uint32_t)n->q[NODE_LREADY].zero.len;
    l.sready_zero = (uint32_t)n->q[NODE_SREADY].zero.len;
    return l;
}

void node_mark_dirty(struct node *n)
{
    n->dirty++;
}

void node_queue(struct node *n, enum node_queue_id q, struct ntask *t, uint64_t priority)
{
    readyq_push_ordered(&n->q[q], t, priority, task_key_index(t->spec.key));
    n->dirty++;
}

void node_share(struct node *n, struct ntask *t, int64_t wall)
{
    n->shared++;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->offer && n->parts[i]->offer(n->state[i], t))
            return;
    node_trace(n, TRACE_TASK_QUEUED_SHARED, t->spec.key, -1, 0, wall);
    node_queue(n, NODE_SREADY, t, t->spec.input_bytes);
}

void node_staged(struct node *n, struct ntask *t, const char *why)
{
    n->staged++;
    if (why)
        n->staged_failed++;
    n->last_staged = t;
    n->staged_tasks = xgrow(n->staged_tasks, &n->staged_tasks_cap, n->nstaged_tasks + 1,
                            sizeof *n->staged_tasks);
    n->staged_tasks[n->nstaged_tasks++] = t;
}

struct wbuf *node_msg_begin(struct node *n, uint32_t peer, uint16_t type, size_t *at)
{
    return capture_begin(n, peer, type, at);
}

void node_msg_end(struct node *n, uint32_t peer, size_t at)
{
    (void)at;
    if (peer < FAKE_MAX_NODES)
        n->sent_ms[peer] = node_now_ms(n);
}

size_t node_msg_queued(struct node *n, uint32_t peer)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n->nmsgs; i++)
        if (n->msgs[i].peer == peer)
            bytes += n->msgs[i].body.len + 1;
    return bytes;
}

void node_trace_full(struct node *n, enum trace_kind kind, uint64_t task, int32_t peer,
                     int32_t status, int64_t count, int64_t bytes, int64_t duration_ns,
                     int64_t wall)
{
    (void)bytes;
    (void)duration_ns;
    (void)wall;
    n->traces = xgrow(n->traces, &n->traces_cap, n->ntraces + 1, sizeof *n->traces);
    n->traces[n->ntraces++] = (struct fake_trace){kind, task, peer, status, count};
}

void node_trace_policy(struct node *n, const char *name, int32_t reason)
{
    (void)name;
    node_trace_full(n, TRACE_POLICY_CHANGE, TRACE_NO_TASK, -1, reason, 0, 0, 0, 0);
}

void node_wake(struct node *n)
{
    n->wakes++;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->wake)
            n->parts[i]->wake(n->state[i]);
}

void node_news(struct node *n)
{
    n->news++;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->news)
            n->parts[i]->news(n->state[i]);
}

void node_answering(struct node *n, uint32_t thief)
{
    n->answering++;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->answering)
            n->parts[i]->answering(n->state[i], thief);
}

void node_turned_away(struct node *n, uint32_t thief)
{
    n->turned_away++;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->turned_away)
            n->parts[i]->turned_away(n->state[i], thief);
}

bool node_steal_failed(struct node *n, bool parked)
{
    n->steal_failed++;
    bool reset = n->steal_failed_answer;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->steal_failed && n->parts[i]->steal_failed(n->state[i], parked))
            reset = true;
    return reset;
}

struct a2ws_vec *node_info(struct node *n)
{
    if (!n->info_on)
        return NULL;
    struct node_load l = node_load(n);
    uint64_t total = l.lready + l.sready + l.staged + l.staging + l.busy + l.tasks_run;
    if (total && !n->work_seen_ns)
        n->work_seen_ns = n->mono;
    a2ws_set_self(&n->vec, l.est_samples ? l.est_task_length_s : 0,
                  total > UINT32_MAX ? UINT32_MAX : (uint32_t)total, l.sready, l.slots);
    return &n->vec;
}

double node_info_elapsed_s(const struct node *n)
{
    return n->work_seen_ns ? (double)(n->mono - n->work_seen_ns) / 1e9 : 0;
}

void node_info_saw_work(struct node *n)
{
    if (!n->work_seen_ns)
        n->work_seen_ns = n->mono;
}

/* ---- membership ------------------------------------------------------------------- */

bool node_alive(const struct node *n, uint32_t peer)
{
    return peer < n->nodes && !n->dead[peer];
}

const bool *node_dead_set(const struct node *n)
{
    return n->dead;
}

uint32_t node_epoch(const struct node *n)
{
    return n->epoch;
}

void fake_node_kill(struct node *n, uint32_t node)
{
    if (node >= n->nodes || node == n->self || n->dead[node])
        return;
    n->dead[node] = true;
    n->epoch++;
    /* The vector moves before the parts hear of it, as node.c's info_on_down does. */
    if (n->info_on)
        a2ws_on_down(&n->vec, node, fd_next_live(n->self, n->nodes, n->dead, -1),
                     fd_next_live(n->self, n->nodes, n->dead, 1));
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->down)
            n->parts[i]->down(n->state[i], node);
}

void node_declare_dead(struct node *n, uint32_t peer, const char *why)
{
    (void)why;
    if (peer < n->nodes && peer != n->self && !n->dead[peer])
        n->declared++;
    fake_node_kill(n, peer);
}

bool node_refused(const struct node *n, uint32_t peer)
{
    return peer < n->nodes && n->refused[peer];
}

void node_probe(struct node *n, uint32_t peer)
{
    if (peer < n->nodes && peer != n->self && !n->dead[peer])
        n->probes[peer]++;
}

void fake_node_link(struct node *n, uint32_t peer, enum node_link what)
{
    if (peer >= n->nodes || peer == n->self || n->dead[peer] || n->stopping)
        return;
    if (what == NODE_LINK_REFUSED)
        n->refused[peer] = true;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->link)
            n->parts[i]->link(n->state[i], peer, what);
}

void fake_node_leaving(struct node *n)
{
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->leaving)
            n->parts[i]->leaving(n->state[i]);
}

void node_moved(struct node *n, uint64_t task, uint32_t to)
{
    (void)n;
    (void)task;
    (void)to;
}
