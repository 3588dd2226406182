/*
 * node_member — membership as the node keeps it (issue 15): a peer declared dead, the
 * epoch, the dead peer refused and told; and the dead holders' tasks handed on to live
 * nodes as new attempts (the store lists them, node_task.c queues them).  Called by
 * node.c's message handlers and the heartbeat part (node_declare_dead).
 */
#include "core/runtime/node_core.h"

/*
 * A task whose holder died, listed by this node's store as the record's primary: it goes
 * to a live node, chosen by its key so that a dead node's tasks spread, as attempt + 1
 * (kvs_resubmit: from then on the old attempt's completion is refused).  The new holder
 * gets what the record knows: readiness, the parents' outputs, and the task's spec.
 */
static void hand_on(struct node *n, const struct tmd *rec, uint32_t to, bool bump);

static void on_orphan(void *arg, const struct tmd *rec)
{
    node__hand_on_orphan(arg, rec);
}

void node__hand_on_orphan(struct node *n, const struct tmd *rec)
{
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
    const struct tmd_late *l = tmd_late(rec);
    uint32_t attempt = l->attempt + (bump ? 1 : 0), nparents = tmd_parents_done(rec);
    struct proto_resubmit m = {.attempt = attempt, .ready = rec->num_wait_parent == 0,
                               .t_ready = rec->t_ready, .nparents = nparents,
                               .parents = nparents ? xcalloc(nparents, sizeof *m.parents)
                                                   : NULL};
    for (uint32_t i = 0; i < nparents; i++)
        m.parents[i] = (struct task_input){.object = l->parent_list[i].object,
                                           .bytes = l->parent_list[i].bytes,
                                           .node = l->parent_list[i].node};
    proto_put_resubmit(&b, &m, rec->spec, rec->spec_len);
    free(m.parents);
    uint64_t key = rec->key;
    uint32_t from = rec->holder;
    if (!bump) {
        struct rbuf r;
        rbuf_init(&r, b.data, b.len);
        node__on_resubmit(n, n->self, &r);
    } else if (kvs_resubmit(n->kvs, key, l->attempt, to) == 1) {
        log_info("task %llx: its holder died; attempt %u goes to node %u",
                 (unsigned long long)key, attempt, to);
        n->c.tasks_resubmitted++;
        /* Recorded where the decision is taken, once per task and attempt: the new
         * holder's TASK_SUBMIT may be lost with it, this record is not. */
        node_trace_full(n, TRACE_TASK_RESUBMIT, key, (int32_t)to, (int32_t)attempt,
                        (int64_t)from, 0, 0, 0);
        if (to == n->self) {
            struct rbuf r;
            rbuf_init(&r, b.data, b.len);
            node__on_resubmit(n, n->self, &r);
        } else {
            size_t at;
            struct wbuf *out = node_msg_begin(n, to, MSG_RESUBMIT, &at);
            wbuf_put(out, b.data, b.len);
            node_msg_end(n, to, at);
        }
    }
    wbuf_fini(&b);
}

void node__forget_moves(struct node *n, uint32_t job)
{
    uint64_t *keys = NULL;
    size_t nk = 0, cap = 0;
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->moved, pos, &k, &v)) != 0;) {
        if (task_key_job(k) != job)
            continue;
        keys = xgrow(keys, &cap, nk + 1, sizeof *keys);
        keys[nk++] = k;
    }
    for (size_t i = 0; i < nk; i++)
        u64map_del(&n->moved, keys[i]);
    free(keys);
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
        rec->holder != n->self || waitq_has(&n->waitq, rec->key) ||
        u64map_get(&n->running, rec->key))
        return;
    log_info("task %llx: given to a node that died before its move was recorded; "
             "taken back", (unsigned long long)rec->key);
    hand_on(n, rec, n->self, false);
}

/* Whether the task is here, in any state short of its end. */
static bool holds(struct node *n, uint64_t key)
{
    return waitq_has(&n->waitq, key) || u64map_get(&n->running, key) ||
           u64map_get(&n->parked, key) || node__find_ready(n, key) ||
           data_staging(n->data, key);
}

/* The holder answered that it has not the task: if the record still names it, the move
 * from the dead node never arrived, and nobody else will run the task. */
static void on_not_held(void *arg, int status, const struct tmd *rec)
{
    struct node *n = arg;
    if (status != 0 || !rec || task_status_final((enum task_status)rec->status))
        return;
    const struct tmd_late *l = tmd_late(rec);
    if (l->num_history < 2 || !n->dead[l->history[l->num_history - 2]])
        return;
    log_info("task %llx: moved here from node %u, which died, it never reached node %u",
             (unsigned long long)rec->key, l->history[l->num_history - 2], rec->holder);
    node__hand_on_orphan(n, rec);
}

/* A task whose last move came from the dead node (kvs_moved_from): its holder is asked
 * whether the move arrived; this node answers itself at once. */
static void on_moved_from(void *arg, const struct tmd *rec)
{
    struct node *n = arg;
    if (rec->holder == n->self) {
        if (!holds(n, rec->key))
            on_not_held(n, 0, rec);
        return;
    }
    size_t at;
    struct wbuf *b = node_msg_begin(n, rec->holder, MSG_HOLD_QUERY, &at);
    wbuf_put_u64(b, rec->key);
    node_msg_end(n, rec->holder, at);
}

/* An end the dead node was to report (kvs_ends_lost_with): told again to the job's
 * client, which counts an end once. */
static void relist_end(void *arg, const struct tmd *rec)
{
    struct node *n = arg;
    struct job *j = u64map_get(&n->jobs, task_key_job(rec->key));
    if (!j || !j->client)
        return;
    struct proto_task_end e = node__end_of_record(rec);
    size_t at;
    struct wbuf *b = conn_msg_begin(j->client, MSG_TASK_RELISTED, &at);
    proto_put_task_end(b, &e);
    conn_msg_end(j->client, at);
}

static void resubmit_orphans(struct node *n, uint32_t dead)
{
    kvs_ends_lost_with(n->kvs, dead, relist_end, n);
    kvs_orphans(n->kvs, KVS_NO_SHARD, on_orphan, n);
    kvs_moved_from(n->kvs, dead, on_moved_from, n);
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

/* by: the node that declared it, as far as this node knows (itself, or the sender of
 * MEMBER_DEAD). */
static void declare_dead(struct node *n, uint32_t peer, uint32_t by, const char *why,
                         bool spread)
{
    if (peer >= n->nodes || peer == n->self || n->dead[peer] || n->stopping)
        return;
    n->dead[peer] = true;
    n->epoch++;
    n->deaths[peer] = (struct proto_dead){.node = peer, .by = by, .at_ns = node_wall_ns(n)};
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
    declare_dead(n, peer, n->self, why, true);
}

/* A node declared dead spoke again (it was stopped, not killed): it is told so, and the
 * connection closes.  Nothing it sent is taken: its tasks belong to others now. */
void node__refuse_dead(struct node *n, struct conn *c)
{
    size_t at;
    struct wbuf *b = conn_msg_begin(c, MSG_YOU_ARE_DEAD, &at);
    wbuf_put_u32(b, n->epoch);
    conn_msg_end(c, at);
    conn_close(c, "node declared dead");
}

int node__on_member_message(struct node *n, uint32_t from, uint16_t type, struct rbuf *r)
{
    if (type == MSG_HOLD_QUERY || type == MSG_HOLD_NOT) {
        uint64_t key = rbuf_u64(r);
        if (!rbuf_ok(r) || r->left)
            return -EBADMSG;
        if (type == MSG_HOLD_NOT) {
            /* The record is this node's as its primary: the lookup answers at once. */
            kvs_lookup(n->kvs, key, on_not_held, n);
        } else if (!holds(n, key)) {
            size_t at;
            struct wbuf *b = node_msg_begin(n, from, MSG_HOLD_NOT, &at);
            wbuf_put_u64(b, key);
            node_msg_end(n, from, at);
        }
        return 0;
    }
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
        declare_dead(n, node, from, why, false);
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


/* A dead holder's task, handed here by its record's primary (on_orphan): it waits for
 * its parents here, or is ready with their outputs.  A copy already held is kept. */
int node__on_resubmit(struct node *n, uint32_t from, struct rbuf *r)
{
    (void)from;
    struct proto_resubmit m;
    if (proto_get_resubmit(r, &m) < 0)
        return -EBADMSG;
    uint32_t attempt = m.attempt, nparents = m.nparents;
    uint8_t ready = m.ready;
    int64_t t_ready = m.t_ready;
    struct tmd_parent *parents = nparents ? xcalloc(nparents, sizeof *parents) : NULL;
    for (uint32_t i = 0; i < nparents; i++)
        parents[i] = (struct tmd_parent){.object = m.parents[i].object,
                                         .bytes = m.parents[i].bytes, .node = m.parents[i].node};
    struct ntask *t = xcalloc(1, sizeof *t);
    t->spec = m.spec; /* taken over */
    free(m.parents);
    uint64_t key = t->spec.key;
    t->spec.attempt = attempt;
    /* Held here already (the record named the dead node because the move here died with
     * its primary): the copy here becomes the new attempt, so its completion counts. */
    if (waitq_has(&n->waitq, key)) {
        waitq_set_attempt(&n->waitq, key, attempt);
        ntask_free(t);
        free(parents);
        return 0;
    }
    struct ntask *held = u64map_get(&n->running, key);
    if (!held)
        held = u64map_get(&n->parked, key);
    if (!held)
        held = node__find_ready(n, key);
    if (held) {
        held->spec.attempt = attempt;
        ntask_free(t);
        free(parents);
        return 0;
    }
    node_trace_full(n, TRACE_TASK_SUBMIT, key, -1, 0, 0, 0, attempt, 0);
    struct early *e = u64map_del(&n->early, key);
    if (ready) {
        if (e)
            node__early_free(e);
        node__ready_or_cancel(n, t, KVS_EVENT_READY, t_ready ? t_ready : clock_wall_ns(), nparents,
                        parents);
    } else if (e) {
        node__ready_or_cancel(n, t, e->event, e->t_ready, e->nparents, e->parents);
        node__early_free(e);
    } else {
        waitq_put(&n->waitq, t);
    }
    free(parents);
    return 0;
}

/* A ready task of this node, found by key (a linear scan: only job removal needs it). */
