/*
 * node_recover — data objects lost with a dead node and recomputed from lineage (issue
 * 15).  Called by node_task.c when a ready task cannot stage its inputs, by node.c for
 * MSG_RECOMPUTE, and by node_task.c when a recomputation's end is recorded.
 *
 * What is lost.  A task's output object lives only on the node that ran it (the record's
 * runner, the parent_list entries of its children); a workload's initial object lives on
 * the node the client put it on, and with --object-replicas K on the K-1 nodes after it
 * (data_input_holder).  When a node dies, what it held is gone; what matters is what is
 * still needed, and that is known exactly when a task here tries to stage it: its input
 * names a dead node and no live copy exists (data.c fails the staging, synchronously for
 * a holder already dead, or when the death ends a fetch under way).  So recovery is on
 * demand, by the consumer, not by a scan of the dead node's records at the death: a DONE
 * task whose children all finished costs nothing, and a child that becomes ready later
 * (its parent_list naming the dead node) is handled the same way when it stages.
 *
 * Who does what.
 *  - The consumer's node parks the task (here, off the queues: not stealable, not
 *    counted as staging) and, per lost object, asks the object's producer's record with
 *    kvs_lookup, again every RECOVER_POLL_MS while it waits.  The record says: DONE on a
 *    live runner (recomputed, or the copy was never lost: the input's node is updated
 *    and the task staged again); DONE on a dead runner (not re-run yet: MSG_RECOMPUTE
 *    to the record's primary, again at each poll until it took it); waiting, ready or
 *    running (being recomputed: wait); FAILED or CANCELLED (the re-run failed: the task
 *    fails with that reason).  Polling rather than a notification: a recomputation ends
 *    rarely, the lookups stop when the objects are back, and whatever dies meanwhile
 *    (the record's primary, the re-run's holder) is survived by asking again, with no
 *    subscriber state to move with the record.
 *  - The record's primary re-opens it (kvs_reopen: DONE -> READY as attempt + 1, held by
 *    the dead runner, TMD_FLAG_REOPENED, replicated) and hands it on exactly as a dead
 *    holder's task (node__hand_on_orphan): to a live node with its parents' locations
 *    and its spec.  If that node dies too, the record is an orphan like any other.  The
 *    attempt check makes a repeated or concurrent request a no-op.
 *  - Recursion needs nothing more: the re-run task stages its own inputs, and those lost
 *    too are recovered the same way at its node.
 *  - The re-run's end is recorded (its CAS at the new attempt) but not reported to the
 *    client, which counted the task's first end (records list each task once, with its
 *    first run), nor sent to the children as PARENT: they counted this parent already,
 *    and one still waiting would count it twice.  The children that need the object
 *    find its new node by lookup.
 *  - Initial objects cannot be recomputed: a task whose initial input has no live copy
 *    fails with "input object X was lost with node N" (and its subtree is cancelled as
 *    for any failure).  Without metadata replicas the record has no spec to re-run, and
 *    the task fails with that reason.
 *
 * Owns n->lost and n->parked (node_core.h) and the poll timer.
 */
#include "core/runtime/node_core.h"

#define RECOVER_POLL_MS 200

/* An input object lost with a dead node, that tasks parked here wait for. */
struct lost {
    struct node *n;
    uint64_t object;        /* the producer task's key (task_input_source) */
    uint32_t dead;          /* the node it was lost with */
    bool asking;            /* a lookup is in flight (its callback's arg is this) */
    uint64_t *waiters;      /* owned: keys of parked tasks */
    uint32_t nwaiters;
    size_t cap;
};

/* A parked task: its inputs still lost are those whose node is dead. */
static uint32_t missing_inputs(const struct node *n, const struct ntask *t)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->spec.num_inputs; i++)
        k += task_input_staged(&t->spec.inputs[i]) && t->spec.inputs[i].node < n->nodes &&
             n->dead[t->spec.inputs[i].node];
    return k;
}

static void poll_cb(uv_timer_t *h);

static void arm(struct node *n)
{
    if (u64map_len(&n->lost) && !n->stopping &&
        !uv_is_active((uv_handle_t *)&n->recover_timer))
        uv_timer_start(&n->recover_timer, poll_cb, RECOVER_POLL_MS, 0);
}

static void ask(struct lost *l);

static void poll_cb(uv_timer_t *h)
{
    struct node *n = h->data;
    /* Keys first: a reply from this node's own shard runs inside kvs_lookup and may
     * settle (free) entries. */
    size_t cap = u64map_len(&n->lost), k = 0;
    uint64_t *keys = xmalloc((cap ? cap : 1) * sizeof *keys);
    uint64_t key;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->lost, pos, &key, &v)) != 0;)
        if (!((struct lost *)v)->asking)
            keys[k++] = key;
    for (size_t i = 0; i < k; i++) {
        struct lost *l = u64map_get(&n->lost, keys[i]);
        if (l && !l->asking)
            ask(l);
    }
    free(keys);
}

static void lost_free(struct lost *l)
{
    free(l->waiters);
    free(l);
}

/* The object is back (`node` holds it) or can never be (why): each waiter gets it. */
static void settle(struct node *n, struct lost *l, uint32_t node, const char *why)
{
    u64map_del(&n->lost, l->object);
    for (uint32_t w = 0; w < l->nwaiters; w++) {
        struct ntask *t = u64map_get(&n->parked, l->waiters[w]);
        if (!t)
            continue; /* failed already, for another lost input */
        if (why) {
            u64map_del(&n->parked, l->waiters[w]);
            node__fail_unstarted(n, t, why);
            continue;
        }
        for (uint32_t i = 0; i < t->spec.num_inputs; i++)
            if (task_input_source(&t->spec.inputs[i]) == l->object)
                t->spec.inputs[i].node = node;
        if (missing_inputs(n, t) == 0) {
            u64map_del(&n->parked, l->waiters[w]);
            node_queue(n, NODE_LREADY, t, t->spec.input_bytes);
        }
    }
    lost_free(l);
    node_mark_dirty(n);
}

/* The primary of the producer's record, this node or a peer, re-runs it. */
static void recompute(struct node *n, uint64_t task, uint32_t runner);

static void on_lookup(void *arg, int status, const struct tmd *rec)
{
    struct lost *l = arg;
    struct node *n = l->n;
    l->asking = false;
    if (status < 0 || !rec) {
        char *why = xasprintf("input object %llx was lost with node %u and its producer's "
                              "record is gone (%s)", (unsigned long long)l->object, l->dead,
                              strerror(status < 0 ? -status : ENOENT));
        settle(n, l, 0, why);
        free(why);
        return;
    }
    uint32_t runner = tmd_late(rec)->runner;
    switch (rec->status) {
    case TASK_DONE:
        if (runner < n->nodes && !n->dead[runner]) {
            log_info("object %llx: lost with node %u; now on node %u",
                     (unsigned long long)l->object, l->dead, runner);
            settle(n, l, runner, NULL);
            return;
        }
        if (!rec->spec_len) {
            char *why = xasprintf("input object %llx was lost with node %u, and its producer "
                                  "cannot run again: its record carries no spec (--replicas 1)",
                                  (unsigned long long)l->object, runner);
            settle(n, l, 0, why);
            free(why);
            return;
        }
        recompute(n, rec->key, runner);
        break;
    case TASK_FAILED:
    case TASK_CANCELLED: {
        char *why = xasprintf("input object %llx was lost with node %u, and its producer "
                              "ended %s when run again", (unsigned long long)l->object,
                              l->dead, task_status_name((enum task_status)rec->status));
        settle(n, l, 0, why);
        free(why);
        return;
    }
    default:
        break; /* being recomputed */
    }
    arm(n);
}

static void ask(struct lost *l)
{
    l->asking = true;
    int rc = kvs_lookup(l->n->kvs, l->object, on_lookup, l);
    if (rc < 0)
        on_lookup(l, rc, NULL);
}

bool node__recover_inputs(struct node *n, struct ntask *t, char **why)
{
    *why = NULL;
    uint32_t lost = 0;
    for (uint32_t i = 0; i < t->spec.num_inputs; i++) {
        const struct task_input *in = &t->spec.inputs[i];
        if (in->node >= n->nodes || !n->dead[in->node] || in->node == n->self ||
            !task_input_staged(in))
            continue;
        if (task_input_source(in) == 0) {
            if (data_input_holder(n->data, in) != DATA_NO_HOLDER)
                continue; /* the staging failed for another reason */
            *why = xasprintf("input object %llx was lost with node %u (no live copy: "
                             "--object-replicas keeps copies of initial objects)",
                             (unsigned long long)in->object, in->node);
            return false;
        }
        lost++;
    }
    /* Without a lost output this is not ours; at R = 1 a dead node stops the job anyway. */
    if (!lost)
        return false;
    data_release(n->data, t);
    uint64_t key = t->spec.key;
    u64map_put(&n->parked, key, t);
    /* Waiters first, then the questions: a reply from this node's own shard comes
     * inside kvs_lookup. */
    uint64_t *fresh = xmalloc(lost * sizeof *fresh);
    uint32_t nfresh = 0;
    for (uint32_t i = 0; i < t->spec.num_inputs; i++) {
        const struct task_input *in = &t->spec.inputs[i];
        uint64_t source = task_input_source(in);
        if (in->node >= n->nodes || !n->dead[in->node] || !task_input_staged(in) || !source)
            continue;
        /* Keyed by the task that made it: its record says where it is now. */
        struct lost *l = u64map_get(&n->lost, source);
        if (!l) {
            l = xcalloc(1, sizeof *l);
            l->n = n;
            l->object = source;
            l->dead = in->node;
            u64map_put(&n->lost, source, l);
            log_info("task %llx: input object %llx was lost with node %u; asking its "
                     "producer's record", (unsigned long long)key,
                     (unsigned long long)in->object, in->node);
            fresh[nfresh++] = source;
        }
        if (l->nwaiters && l->waiters[l->nwaiters - 1] == key)
            continue;
        l->waiters = xgrow(l->waiters, &l->cap, l->nwaiters + 1, sizeof *l->waiters);
        l->waiters[l->nwaiters++] = key;
    }
    for (uint32_t i = 0; i < nfresh; i++) {
        struct lost *l = u64map_get(&n->lost, fresh[i]);
        if (l && !l->asking)
            ask(l);
    }
    free(fresh);
    arm(n);
    return true;
}

/* ---- the producer's record primary ---------------------------------------------------- */

/* Re-opens the DONE record of `task`, whose output died with `runner`, and hands the
 * task on: only the record's primary can, and only once per attempt (kvs_reopen). */
static void reopen_here(struct node *n, uint64_t task, uint32_t runner)
{
    const struct tmd *rec = kvs_local_record(n->kvs, task);
    if (!rec || kvs_primary(n->kvs, task) != n->self || rec->status != TASK_DONE ||
        tmd_late(rec)->runner != runner || runner >= n->nodes || !n->dead[runner] ||
        !rec->spec_len)
        return; /* not ours yet, or done already: the asker asks again */
    if (kvs_reopen(n->kvs, task, tmd_late(rec)->attempt, runner) != 1)
        return;
    log_info("object %llx: lost with node %u; producer task %llx runs again",
             (unsigned long long)task, runner, (unsigned long long)task);
    n->c.objects_recomputed++;
    rec = kvs_local_record(n->kvs, task);
    if (rec) {
        /* The re-opened record's attempt is the one the hand-over bumps from. */
        node_trace_recompute(n, task, runner, tmd_late(rec)->attempt + 1);
        node__hand_on_orphan(n, rec);
    }
}

static void recompute(struct node *n, uint64_t task, uint32_t runner)
{
    uint32_t primary = kvs_primary(n->kvs, task);
    if (primary == n->self) {
        reopen_here(n, task, runner);
    } else if (primary < n->nodes) {
        size_t at;
        struct wbuf *b = node_msg_begin(n, primary, MSG_RECOMPUTE, &at);
        wbuf_put_u64(b, task);
        wbuf_put_u32(b, runner);
        node_msg_end(n, primary, at);
    }
}

int node__on_recompute(struct node *n, uint32_t from, struct rbuf *r)
{
    (void)from;
    uint64_t task = rbuf_u64(r);
    uint32_t runner = rbuf_u32(r);
    if (!rbuf_ok(r) || runner >= n->nodes)
        return -EBADMSG;
    reopen_here(n, task, runner);
    return 0;
}

void node__recomputed(struct node *n, const struct tmd *rec)
{
    log_info("task %llx: recomputed on node %u (attempt %u); its output is there now",
             (unsigned long long)rec->key, tmd_late(rec)->runner, tmd_late(rec)->attempt);
    node_mark_dirty(n);
}

/* ---- life cycle ----------------------------------------------------------------------- */

void node__recover_init(struct node *n)
{
    u64map_init(&n->lost);
    u64map_init(&n->parked);
    uv_timer_init(&n->loop, &n->recover_timer);
    n->recover_timer.data = n;
}

void node__recover_close(struct node *n)
{
    uv_timer_stop(&n->recover_timer);
    uv_close((uv_handle_t *)&n->recover_timer, NULL);
}

/* After the loop; the store's requests die with it, uncalled, so the entries go here. */
void node__recover_free(struct node *n)
{
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->lost, pos, &k, &v)) != 0;)
        lost_free(v);
    u64map_fini(&n->lost);
    for (size_t pos = 0; (pos = u64map_next(&n->parked, pos, &k, &v)) != 0;)
        ntask_free(v);
    u64map_fini(&n->parked);
}
