/*
 * node_task — the node's tasks from arrival to end (DESIGN.md "Life of a task", steps
 * 2–6): ready or cancelled by the store's notices, queued, staged, run on a slot,
 * completed into the store (whose answer tells the children and, with replicas, the
 * client), and the dispatcher that starts them once per loop pass and after each batch
 * of the executor's ends (before those are settled into the store).  Called by node.c's
 * loop and message handlers, by the executor's callbacks and by node_member.c
 * (node_core.h).
 */
#include "core/policy/dispatch.h"
#include "core/runtime/node_core.h"

void node__early_free(void *p)
{
    struct early *e = p;
    free(e->parents);
    free(e);
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

void node_turned_away(struct node *n, uint32_t thief)
{
    for (size_t i = 0; i < node_nparts; i++)
        if (node_parts[i]->turned_away)
            node_parts[i]->turned_away(n->state[i], thief);
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
void node__make_ready(struct node *n, struct ntask *t)
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
 * parts hear of it.  A task with inputs stays here (LReadyQ; FLDS's monitor may still
 * share it if its wait grows long): it may wait for the fetch window, where it is
 * stealable but cannot start, so on a fan-out whose 4 MB inputs queued behind one
 * writer's link, starving nodes traded the same tasks back and forth, one 82 times in
 * 100 ms, and the run took twice as long as with no placement at all.  A task that
 * needs no data starts at the next dispatch or is kept for a free slot (steal_keep), so
 * only those move on. */
int node__on_steal_grant(struct node *n, uint32_t from, struct rbuf *r)
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

void node_queue(struct node *n, enum node_queue_id q, struct ntask *t, uint64_t priority)
{
    struct job *j = node__job_get(n, task_key_job(t->spec.key), NULL);
    uint64_t order = (uint64_t)j->rank << 32 | task_key_index(t->spec.key);
    readyq_push_ordered(node_readyq(n, q), t, priority, order);
    node_mark_dirty(n);
}

static void report_end(struct node *n, const struct proto_task_end *e)
{
    struct job *j = node__job_get(n, task_key_job(e->key), NULL);
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
    /* The client waits on no single end: they leave in batches, a few ms apart. */
    conn_msg_end_late(j->client, at);
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
    node_trace_full(n, TRACE_TASK_END, t->spec.key, -1, TASK_CANCELLED, -1, 0,
                    (int64_t)t->spec.attempt, e.t_end);
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
/* A parent that declares outputs (the spec's producers) has no object of its own: the
 * inputs it made are on the node that ran it, and when the task reads some, its entry
 * stays as placement's weight (TASK_INPUT_WEIGHT), after the objects to stage so that
 * their numbering is kept.  -1 for another parent, else how many inputs it made. */
static int producer_parent(struct task_spec *s, uint32_t first_parent,
                           const struct tmd_parent *p)
{
    uint32_t index = task_key_index(p->object);
    bool is = false;
    for (uint32_t k = 0; k < s->num_producers && !is; k++)
        is = s->producers[k] == index;
    if (!is)
        return -1;
    int read = 0;
    for (uint32_t i = 0; i < first_parent; i++)
        if (s->inputs[i].producer == index + 1) {
            s->inputs[i].node = p->node;
            read++;
        }
    return read;
}

void node__add_parent_inputs(struct ntask *t, uint32_t nparents, const struct tmd_parent *parents)
{
    struct task_spec *s = &t->spec;
    uint32_t first_parent = s->num_inputs, weights = 0;
    if (nparents) {
        /* Room for the weight entries behind, only when some parent may give one. */
        s->inputs = xrealloc(s->inputs, (s->num_inputs + (s->num_producers ? 2 : 1) * nparents) *
                                            sizeof *s->inputs);
        struct task_input *weight = s->inputs + s->num_inputs + nparents;
        /* A parent that produced nothing leaves no object to read. */
        for (uint32_t i = 0; i < nparents; i++) {
            int read = s->num_producers ? producer_parent(s, first_parent, &parents[i]) : -1;
            bool producer = read >= 0;
            if (read > 0 && parents[i].bytes)
                weight[weights++] = (struct task_input){
                    .object = parents[i].object, .bytes = parents[i].bytes,
                    .node = parents[i].node, .producer = TASK_INPUT_WEIGHT};
            else if (!producer && parents[i].bytes)
                s->inputs[s->num_inputs++] = (struct task_input){
                    .object = parents[i].object, .bytes = parents[i].bytes,
                    .node = parents[i].node};
        }
    }
    if (s->num_inputs > first_parent + 1)
        qsort(s->inputs + first_parent, s->num_inputs - first_parent, sizeof *s->inputs,
              by_object);
    if (weights) {
        memmove(s->inputs + s->num_inputs, s->inputs + first_parent + nparents,
                weights * sizeof *s->inputs);
        s->num_inputs += weights;
    }
    s->input_bytes = 0;
    for (uint32_t i = 0; i < s->num_inputs; i++)
        s->input_bytes += s->inputs[i].bytes;
}

void node__ready_or_cancel(struct node *n, struct ntask *t, uint8_t event, int64_t t_ready,
                            uint32_t nparents, const struct tmd_parent *parents)
{
    if (event == KVS_EVENT_CANCEL) {
        cancel_task(n, t, NULL);
        return;
    }
    node__add_parent_inputs(t, nparents, parents);
    t->t_ready = t_ready;
    node__make_ready(n, t);
}

/* A ready task of this node, found by key, left where it is (a linear scan: only a
 * resubmission of a task held here needs it). */
struct ntask *node__find_ready(struct node *n, uint64_t key)
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
static struct ntask *take_ready(struct node *n, uint64_t key)
{
    struct readyq *queues[3] = {&n->lready, &n->sready, &n->staged};
    for (int q = 0; q < 3; q++) {
        for (size_t i = 0; i < readyq_len(queues[q]); i++) {
            struct ntask *t = readyq_at(queues[q], i);
            if (t->spec.key == key) {
                readyq_remove(queues[q], t);
                if (queues[q] == &n->staged)
                    n->staged_slots -= task_cores(&t->spec);
                return t;
            }
        }
    }
    return NULL;
}

/* The metadata store says a task this node holds is ready, or cancelled. */
void node__on_notify(void *ctx, const struct kvs_notice *notice)
{
    struct node *n = ctx;
    struct ntask *t = waitq_take(&n->waitq, notice->key);
    if (t) {
        node__ready_or_cancel(n, t, notice->event, notice->t_ready, notice->nparents, notice->parents);
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
        kvs_append(n->kvs, tmd_child(rec, i), field, n->self, tmd_late(rec)->data_size,
                   rec->key);
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


static void pending_end_unlink(struct pending_end *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        p->n->ends = p->next;
    if (p->next)
        p->next->prev = p->prev;
}

/* Unlinks an answered end and keeps it for the next completion. */
static void pending_end_recycle(struct pending_end *p)
{
    struct node *n = p->n;
    pending_end_unlink(p);
    free(p->e.detail);
    p->e.detail = NULL;
    p->next = n->spare_ends;
    n->spare_ends = p;
}

static void on_status_set_report(void *arg, int status, const struct tmd *rec)
{
    struct pending_end *p = arg;
    struct node *n = p->n;
    if (status == 1 && rec && (rec->flags & TMD_FLAG_REOPENED)) {
        /* A recomputation: the client counted the task's first end, and the children
         * counted this parent then; those waiting for the object find it by lookup. */
        node__recomputed(n, rec);
    } else if (status == 1 && rec) {
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
    pending_end_recycle(p);
}

static struct pending_end *pending_end_new(struct node *n, const struct proto_task_end *e,
                                           uint32_t attempt)
{
    struct pending_end *p = n->spare_ends;
    if (p)
        n->spare_ends = p->next;
    else
        p = xmalloc(sizeof *p);
    p->n = n;
    p->attempt = attempt;
    p->e = *e;
    p->e.detail = e->detail ? xstrdup(e->detail) : NULL;
    p->prev = NULL;
    p->next = n->ends;
    if (n->ends)
        n->ends->prev = p;
    n->ends = p;
    return p;
}

/* A run's end in the trace: a command's with what it used (TASK_END's count is its exit
 * code, TASK_RETRY's bytes its failed runs so far; the attempt in duration). */
static void trace_end(struct node *n, enum trace_kind kind, const struct ntask *t,
                      int32_t status, int64_t count, int64_t bytes, const struct exec_result *r)
{
    if (r->usage.measured && n->sink && n->sink->put_usage)
        n->sink->put_usage(n->sink->ctx, kind, t->spec.key, status, count, bytes,
                           (int64_t)t->spec.attempt, &r->usage, r->t_end);
    else
        node_trace_full(n, kind, t->spec.key, -1, status, count, bytes,
                        (int64_t)t->spec.attempt, r->t_end);
}

/*
 * A run failed and the task has retries left: the failed run is recorded (TASK_RETRY in
 * the trace, a log line) and counted in the spec, which travels with the task, and the
 * task is ready again, placed as any ready task: it may run here or on another node.
 * Its record is not touched (it stays READY until a final end), so the end that counts
 * is still one per task and attempt.
 */
static void retry(struct node *n, struct ntask *t, const struct exec_result *r)
{
    t->spec.failures++;
    log_info("task %llx: run %u failed (%s %d); it runs again (%u of %u retries used)",
             (unsigned long long)t->spec.key, t->spec.failures,
             r->timed_out ? "timed out," : r->term_signal ? "signal" : "exit",
             r->term_signal ? r->term_signal : r->exit_code, t->spec.failures, t->spec.retries);
    trace_end(n, TRACE_TASK_RETRY, t, TASK_FAILED, r->exit_code, (int64_t)t->spec.failures, r);
    t->spec.flags &= (uint8_t)~TASK_FLAG_FETCHED;
    t->t_ready = r->t_end;
    node__make_ready(n, t);
    node_mark_dirty(n);
}

/* A run's end into the store, and to the client: with replicas once its record took it
 * (the backups have it), without at once, as nothing runs twice. */
static void settle(struct node *n, const struct settle *st)
{
    int (*cas)(struct kvs *, uint64_t, uint8_t, uint64_t, uint64_t, const struct tmd_run *,
               kvs_reply_fn, void *) = st->leaf ? kvs_cas_late : kvs_cas;
    if (n->cfg.replicas > 1) {
        cas(n->kvs, st->key, KVS_FIELD_STATUS, TASK_READY, st->status, &st->run,
            on_status_set_report, st->p);
    } else {
        report_end(n, &st->p->e);
        pending_end_recycle(st->p);
        cas(n->kvs, st->key, KVS_FIELD_STATUS, TASK_READY, st->status, &st->run, on_status_set,
            n);
    }
}

void node__settle_ended(struct node *n)
{
    /* A settle's callbacks may end a run (a removal reaching a running sleep): it is
     * queued behind these and settled in this same walk, from a copy, as the array may
     * move. */
    for (size_t i = 0; i < n->nsettles; i++) {
        struct settle st = n->settles[i];
        settle(n, &st);
    }
    n->nsettles = 0;
}

/*
 * A task ended: it ran (held_slot), or failed or was removed before it could.  `later`:
 * its settle waits in n->settles for node__settle_ended (the executor's ends, settled
 * after the dispatcher has refilled their slots); otherwise it is settled here.
 */
static void finish(struct node *n, struct ntask *t, const struct exec_result *r, bool held_slot,
                   bool later)
{
    if (held_slot) {
        n->busy -= task_cores(&t->spec);
        n->busy_ns_done += r->t_end - r->t_start;
    } else {
        /* Failed before a slot was taken (an input is gone): the start is its end. */
        node_trace_full(n, TRACE_TASK_START, t->spec.key, -1, 0, 0, 0, (int64_t)t->spec.attempt,
                        r->t_start);
    }
    /* Its outputs are kept before anything else: a declared one that is missing makes
     * the run a failed one, which may be tried again as any other. */
    uint64_t size = 0;
    char *why = NULL;
    struct exec_result failed;
    if (held_slot && r->status == TASK_DONE && !u64map_get(&n->removed, t->spec.key) &&
        data_keep_output(n->data, t, &size, &why) < 0) {
        log_info("task %llx: %s", (unsigned long long)t->spec.key, why);
        failed = *r;
        failed.status = TASK_FAILED;
        failed.error = why;
        r = &failed;
    }
    data_release(n->data, t);
    /* Only a run that failed is tried again: not a task that could not start (its inputs
     * are gone), nor one removed or on a node that stops. */
    if (held_slot && r->status == TASK_FAILED && t->spec.failures < t->spec.retries &&
        !n->stop_requested && !u64map_get(&n->removed, t->spec.key)) {
        retry(n, t, r);
        free(why);
        return;
    }
    if (u64map_del(&n->removed, t->spec.key)) {
        /* Removed while it staged or ran: its record and its subtree are cancelled
         * already; whatever it produced is not kept. */
        cancel_task(n, t, held_slot ? r : NULL);
        node_mark_dirty(n);
        return;
    }
    n->completeq++;
    n->tasks_run++;
    if (r->status == TASK_DONE) {
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
        .timed_out = r->timed_out, .failures = t->spec.failures, .usage = r->usage,
    };
    trace_end(n, TRACE_TASK_END, t, r->status, r->exit_code, 0, r);
    struct settle st = {.key = t->spec.key, .status = r->status,
                        .leaf = (t->spec.flags & TASK_FLAG_LEAF) != 0,
                        .run = {.node = n->self, .attempt = t->spec.attempt,
                                .t_start = r->t_start, .t_end = r->t_end, .data_size = size},
                        .p = pending_end_new(n, &e, t->spec.attempt)};
    ntask_free(t);
    if (later) {
        n->settles = xgrow(n->settles, &n->settles_cap, n->nsettles + 1, sizeof *n->settles);
        n->settles[n->nsettles++] = st;
    } else {
        settle(n, &st);
    }
    free(why);
    node_mark_dirty(n);
}

void node__on_exec_done(struct exec_result *r, void *data)
{
    struct node *n = data;
    struct ntask *t = r->arg;
    u64map_del(&n->running, t->spec.key);
    n->running_successors -= t->local_successors;
    t->local_successors = 0;
    finish(n, t, r, true, true);
}

static bool dispatch(struct node *n);

/* The executor's batch of ends is in: the freed slots take their next tasks first, then
 * the ended runs are settled.  A slot stood idle from a 1 ms sleep's end to the next
 * start while the four ends of a tick were each written to the store and the client:
 * 12.6 us a tick, 1.3 % of the slots' time. */
void node__on_exec_batch_end(void *data)
{
    struct node *n = data;
    if (!n->stop_requested && dispatch(n))
        node_mark_dirty(n);
    node__settle_ended(n);
}

void node__fail_unstarted(struct node *n, struct ntask *t, const char *why)
{
    struct exec_result r = {.key = t->spec.key, .status = TASK_FAILED, .exit_code = -1,
                            .error = (char *)why};
    r.t_start = r.t_end = clock_wall_ns();
    finish(n, t, &r, false, false);
}

/* TASK_START says what the task read: count inputs of `bytes` in all, and status 1 when
 * some had to be fetched (0: all were here, a locality hit); duration is the attempt, as
 * on every TASK_START and TASK_END (core/model/trace_kind.h). */
static void trace_start_event(struct node *n, const struct ntask *t, int64_t wall)
{
    node_trace_full(n, TRACE_TASK_START, t->spec.key, -1,
                    (t->spec.flags & TASK_FLAG_FETCHED) ? 1 : 0, t->spec.num_inputs,
                    (int64_t)t->spec.input_bytes, (int64_t)t->spec.attempt, wall);
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
        if (waitq_has(&c->n->waitq, tmd_child(rec, i)))
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
    n->busy += task_cores(&t->spec);
    n->tasks_started++;
    struct exec_result now;
    memset(&now, 0, sizeof now);
    char *cause = NULL;
    if (t->spec.kind == TASK_COMMAND && (t->spec.num_inputs || t->spec.num_outputs) &&
        data_stage_files(n->data, t, &cause) < 0) {
        now.status = TASK_FAILED;
        now.exit_code = -1;
        now.t_start = now.t_end = clock_wall_ns();
        now.error = xasprintf("cannot stage inputs: %s", cause ? cause : "?");
        free(cause);
        node_trace_full(n, TRACE_TASK_START, t->spec.key, -1, 0, 0, 0,
                        (int64_t)t->spec.attempt, now.t_start);
        finish(n, t, &now, true, false);
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
        finish(n, t, &now, true, false);
    } else {
        now.status = TASK_FAILED;
        now.exit_code = -1;
        now.t_start = now.t_end = clock_wall_ns();
        node_trace_full(n, TRACE_TASK_START, t->spec.key, -1, 0, 0, 0,
                        (int64_t)t->spec.attempt, now.t_start);
        now.error = xasprintf("cannot start task: %s", strerror(-rc));
        finish(n, t, &now, true, false);
        free(now.error);
    }
}

/*
 * Whether a task of `cores` fits beside the `held` slots now.  A task wider than the
 * node (a cluster of unequal nodes, where the client checked only the widest) runs
 * alone there rather than never.
 */
static bool fits(const struct node *n, uint32_t held, uint32_t cores)
{
    return dispatch_fits(n->cfg.slots, held, cores);
}

static void stage_wait(struct node *n, struct ntask *t)
{
    n->staged_slots += task_cores(&t->spec);
    node_queue(n, NODE_STAGED, t, 0);
}

static struct ntask *unstage(struct node *n)
{
    struct ntask *t = readyq_pop(&n->staged);
    n->staged_slots -= task_cores(&t->spec);
    return t;
}

static void run_or_queue(struct node *n, struct ntask *t)
{
    /* A node told it was declared dead (or stopping) starts nothing more: its tasks
     * are other nodes' now.  Behind a staged task that waits for its cores, a newcomer
     * waits too: the wide one is not passed for ever by narrow ones. */
    if (!n->stop_requested && readyq_len(&n->staged) == 0 &&
        fits(n, n->busy, task_cores(&t->spec)))
        run_task(n, t);
    else
        stage_wait(n, t);
    node_mark_dirty(n);
}

void node_staged(struct node *n, struct ntask *t, const char *why)
{
    n->staging--;
    if (why && !u64map_get(&n->removed, t->spec.key)) {
        char *lost = NULL;
        if (node__recover_inputs(n, t, &lost))
            return;
        node__fail_unstarted(n, t, lost ? lost : why);
        free(lost);
    } else if (why || u64map_get(&n->removed, t->spec.key)) {
        node__fail_unstarted(n, t, why ? why : "removed"); /* finish reports a removal as such */
    } else {
        run_or_queue(n, t);
    }
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
        char *lost = NULL;
        if (node__recover_inputs(n, t, &lost))
            return;
        char *why = lost ? lost : xasprintf("input unavailable: %s", strerror(-rc));
        node__fail_unstarted(n, t, why);
        free(why);
    }
}

/* The node's tasks as the dispatcher's policy sees them (dispatch.h). */
static bool task_inputs(void *ctx, const struct readyq_entry *e)
{
    (void)ctx;
    return ((const struct ntask *)e->item)->spec.num_inputs > 0;
}

static uint32_t task_cores_of(void *ctx, const struct readyq_entry *e)
{
    (void)ctx;
    return task_cores(&((const struct ntask *)e->item)->spec);
}

static uint64_t task_missing(void *ctx, const struct readyq_entry *e)
{
    const struct node *n = ctx;
    return data_missing_bytes(n->data, e->item);
}

/*
 * Fills free slots, and overlaps data movement with execution: up to `prefetch` tasks
 * (default: as many as slots) fetch their inputs at a time, besides the running ones, so
 * that each is ready when a slot frees (the papers' executors fetch, then run; without
 * this a slot idles for every fetch).  Staged tasks whose slots are free go first; then
 * core/policy/dispatch.c chooses, from the ready queues, what starts and what fetches,
 * the same choice the simulator makes.
 *
 * Returns true when it stopped at the batch bound with work perhaps left, false when
 * nothing more can start now: then the loop may block until a message, a fetch or a
 * task end changes that (node_mark_dirty), instead of spinning on a queue whose head
 * waits for the fetch window.
 */
static bool dispatch(struct node *n)
{
    uint32_t slots = n->cfg.slots;
    const struct dispatch_tasks tasks = {
        .ctx = n, .inputs = task_inputs, .cores = task_cores_of, .missing = task_missing,
    };
    for (int step = 0; step < DISPATCH_BATCH; step++) {
        struct ntask *waiting = readyq_peek(&n->staged);
        if (waiting && fits(n, n->busy, task_cores(&waiting->spec))) {
            run_task(n, unstage(n));
            continue;
        }
        bool local = readyq_len(&n->lready) > 0;
        struct readyq *const qs[2] = {local ? &n->lready : &n->sready, &n->sready};
        struct dispatch_slots sl = {
            .slots = slots, .busy = n->busy, .staged = n->staged_slots, .staging = n->staging,
            .window = n->cfg.prefetch == NODE_PREFETCH_SLOTS ? slots : n->cfg.prefetch,
        };
        enum dispatch_kind kind;
        struct ntask *t = dispatch_next(&sl, qs, local ? 2 : 1, &tasks, &kind);
        if (!t)
            return false;
        stage(n, t);
    }
    return true;
}

void node__check_cb(uv_check_t *h)
{
    struct node *n = h->data;
    /* Ends delivered outside a batch (exec_kill) */
    node__settle_ended(n);
    if (n->stop_requested) {
        node__stop(n);
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
