/*
 * node_client — the node's side of the clients: jobs and their counts, SUBMIT, SYNC
 * (answered once the store's barrier holds, or at once when it asks only that what came
 * before was handled), STATS (with the deaths this node knows
 * of), a client attaching to a running job (JOB_ATTACH), removal and forgetting of
 * jobs.
 * Called by node.c's message handler (node_core.h).
 */
#include "core/runtime/node_core.h"

#include <malloc.h>

#include "core/model/workload.h"

struct job *node__job_get(struct node *n, uint32_t id, struct conn *client)
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

/* ---- files sent in ------------------------------------------------------------------- */

/* Drops the puts of `client` (NULL: every put), their partial copies discarded: a
 * client gone mid-file sends no more of it. */
void node__puts_drop(struct node *n, struct conn *client)
{
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&n->puts, pos, &k, &v)) != 0;) {
        struct object_put *p = v;
        if (client && p->client != client)
            continue;
        objstore_recv_abort(p->rx);
        u64map_del(&n->puts, k);
        free(p);
        pos = 0; /* the map changed under the walk */
    }
}

static void put_done(struct conn *c, uint64_t key, int status, const char *reason)
{
    size_t at;
    struct wbuf *b = conn_msg_begin(c, MSG_OBJECT_PUT_DONE, &at);
    wbuf_put_u64(b, key);
    wbuf_put_u32(b, (uint32_t)status);
    wbuf_put_str(b, reason);
    conn_msg_end(c, at);
}

/*
 * One chunk of a file a client sends in.  The object becomes an owned one, like a
 * generated initial object, once every byte is in and its CRC-32 matches the client's;
 * any failure is answered once (naming it) and the rest of that file is ignored.  A
 * malformed chunk (lengths that do not add up) is a protocol error: the connection goes.
 */
static int on_object_put(struct node *n, struct conn *c, struct rbuf *r, const char **reason)
{
    uint64_t key = rbuf_u64(r), total = rbuf_u64(r), offset = rbuf_u64(r);
    uint32_t len = rbuf_u32(r);
    const uint8_t *data = rbuf_bytes(r, len);
    bool last = rbuf_ok(r) && len <= total && offset <= total - len && offset + len == total;
    const uint8_t *hash = last ? rbuf_bytes(r, OBJSTORE_HASH_BYTES) : NULL;
    /* Only a workload object's key: a task's output is its runner's to make. */
    if (!rbuf_ok(r) || len > PROTO_PUT_CHUNK || len > total || offset > total - len ||
        total > WORKLOAD_MAX_BYTES || r->left != 0 || !(key & 0x80000000u)) {
        *reason = "malformed object-put";
        return -EBADMSG;
    }
    struct object_put *p = u64map_get(&n->puts, key);
    char *cause = NULL;
    int rc = 0;
    if (offset == 0) {
        if (p) {
            *reason = "object-put restarts a file under way";
            return -EBADMSG;
        }
        p = xcalloc(1, sizeof *p);
        p->client = c;
        rc = objstore_recv_begin(data_store(n->data), key, total, &p->rx, &cause);
        if (rc < 0) {
            free(p);
            p = NULL;
        } else {
            u64map_put(&n->puts, key, p);
        }
    } else if (!p || p->client != c) {
        return 0; /* the rest of a file whose failure was answered */
    }
    if (rc == 0)
        rc = objstore_recv_write(p->rx, offset, data, len, &cause);
    if (rc == 0 && last) {
        rc = objstore_recv_commit_owned(p->rx, hash, &cause);
        p->rx = NULL; /* consumed either way */
    }
    if (rc < 0 || last) {
        if (p) {
            objstore_recv_abort(p->rx);
            u64map_del(&n->puts, key);
            free(p);
        }
        if (rc < 0)
            log_warn("data object %llx sent by %s: %s", (unsigned long long)key,
                     conn_peer_name(c), cause ? cause : strerror(-rc));
        put_done(c, key, rc, rc < 0 ? (cause ? cause : strerror(-rc)) : NULL);
    }
    free(cause);
    return 0;
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
        .waitq = (uint32_t)waitq_len(&n->waitq), .lready = (uint32_t)readyq_len(&n->lready),
        .sready = (uint32_t)readyq_len(&n->sready), .completeq = n->completeq,
        .tasks_run = n->tasks_run, .tasks_failed = n->tasks_failed,
        .steals_attempted = n->c.steals_attempted, .steals_succeeded = n->c.steals_succeeded,
        .tasks_stolen = n->c.tasks_stolen, .tasks_given = n->c.tasks_given,
        .kvs_records = kvs_records_held(n->kvs), .rss_bytes = rss_bytes(),
        .tasks_pushed = n->c.tasks_pushed, .tasks_with_inputs = n->c.tasks_with_inputs,
        .locality_hits = n->c.locality_hits, .fetches = n->c.fetches,
        .bytes_in = n->c.bytes_in, .bytes_out = n->c.bytes_out,
        .policy_switches = n->c.policy_switches, .est_task_length_s = n->est_task_length_s,
        .tasks_resubmitted = n->c.tasks_resubmitted,
        .objects_recomputed = n->c.objects_recomputed, .epoch = n->epoch,
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
    s.dead = xcalloc(n->nodes, sizeof *s.dead);
    for (uint32_t p = 0; p < n->nodes; p++)
        if (n->dead[p])
            s.dead[s.ndead++] = n->deaths[p];
    size_t at;
    struct wbuf *b = conn_msg_begin(c, MSG_STATS_REPLY, &at);
    wbuf_put_u32(b, req);
    proto_put_stats(b, &s);
    conn_msg_end(c, at);
    proto_stats_fini(&s);
}

/* Ends per JOB_ENDED message: about 1 MiB, well inside a frame. */
#define ENDED_CHUNK ((1u << 20) / PROTO_JOB_ENDED_BYTES)

struct ended_list {
    struct proto_task_end *ends;
    size_t n, cap;
};

struct proto_task_end node__end_of_record(const struct tmd *rec)
{
    /* A cancelled task never ran: the record names where it was held. */
    const struct tmd_late *l = tmd_late(rec);
    bool ran = rec->status != TASK_CANCELLED && l->t_start;
    return (struct proto_task_end){
        .key = rec->key, .status = rec->status, .node = ran ? l->runner : rec->holder,
        .exit_code = rec->status == TASK_DONE ? 0 : -1, .t_ready = rec->t_ready,
        .t_start = l->t_start, .t_end = l->t_end};
}

static void collect_end(void *arg, const struct tmd *rec)
{
    struct ended_list *l = arg;
    l->ends = xgrow(l->ends, &l->cap, l->n + 1, sizeof *l->ends);
    l->ends[l->n++] = node__end_of_record(rec);
}

/*
 * A client attaches to job `id` (jackdaw attach): from now on the job's reports from
 * this node go to it, and it learns what ended before from the shard, which holds
 * every task's record whichever node ran it.  Both happen in this one loop turn, so an
 * end reported here from now on was either in the records listed or is reported after.
 * A shard scan costs O(records) once per attach, and one JOB_ENDED per ~25,000 ends:
 * at 10^5 tasks a few messages per node instead of 10^5 lookups.
 */
static void on_attach(struct node *n, struct conn *c, uint32_t id)
{
    struct job *j = u64map_get(&n->jobs, id);
    struct proto_job_ended m = {.counts = {.job = id}};
    struct ended_list l = {0};
    if (j) {
        j->client = c;
        m.counts = (struct proto_job_count){id, j->tasks, j->done, j->failed, j->cancelled};
        kvs_job_ends(n->kvs, id, collect_end, &l);
    }
    log_info("client %s attached to job %u: %zu ends listed", conn_peer_name(c), id, l.n);
    size_t sent = 0;
    do {
        size_t count = l.n - sent < ENDED_CHUNK ? l.n - sent : ENDED_CHUNK;
        m.count = (uint32_t)count;
        m.ends = l.ends ? l.ends + sent : NULL;
        sent += count;
        m.last = sent == l.n;
        size_t at;
        struct wbuf *b = conn_msg_begin(c, MSG_JOB_ENDED, &at);
        proto_put_job_ended(b, &m);
        conn_msg_end(c, at);
    } while (sent < l.n);
    free(l.ends);
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
        const uint8_t *encoded = r->p;
        struct ntask *t = ntask_decode(r);
        if (!t) {
            *reason = "malformed task in submit";
            return -EBADMSG;
        }
        struct job *j = node__job_get(n, task_key_job(t->spec.key), c);
        if (j->arriving) {
            j->arriving--;
            n->arriving--;
        }
        if (waitq_has(&n->waitq, t->spec.key)) {
            log_warn("duplicate submit of task %llx from %s ignored",
                     (unsigned long long)t->spec.key, conn_peer_name(c));
            ntask_free(t);
            continue;
        }
        node_trace(n, TRACE_TASK_SUBMIT, t->spec.key, -1, 0, now);
        struct early *e = u64map_del(&n->early, t->spec.key);
        if (e) {
            node__ready_or_cancel(n, t, e->event, e->t_ready, e->nparents, e->parents);
            node__early_free(e);
        } else if (t->spec.num_parents == 0) {
            node__add_parent_inputs(t, 0, NULL);
            t->t_ready = now;
            node__make_ready(n, t);
        } else {
            /* Kept as the bytes it came in (waitq.h), not as what they decoded to. */
            waitq_put_bytes(&n->waitq, encoded, (size_t)(r->p - encoded));
            ntask_free(t);
        }
    }
    return 0;
}


/* Records a forget must drop before the daemon hands freed memory back (malloc_trim):
 * a trim walks the heap, worth it after a big job, not after each small one. */
#define FORGET_TRIM_RECORDS 4096u

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

int node__on_client_message(struct node *n, struct conn *c, uint16_t type, struct rbuf *r,
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
        struct job *j = node__job_get(n, id, c);
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
        uint8_t flags = rbuf_u8(r);
        if (!rbuf_ok(r) || (flags & ~PROTO_SYNC_HANDLED)) {
            *reason = "malformed sync";
            return -EBADMSG;
        }
        struct sync_wait *w = xcalloc(1, sizeof *w);
        w->n = n;
        w->c = c;
        w->token = token;
        /* Answered once what the client inserted has reached every live backup, so
         * that it survives one death (at R = 1: at once); or, when it asks only that
         * its messages were handled, now — unless an earlier sync of its own still
         * waits: answers go in order. */
        bool waiting = false;
        for (struct sync_wait *s = n->syncs; s && !waiting; s = s->next)
            waiting = s->c == c;
        w->next = n->syncs;
        n->syncs = w;
        if ((flags & PROTO_SYNC_HANDLED) && !waiting)
            sync_done(w);
        else
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
    case MSG_JOB_ATTACH: {
        uint32_t id = rbuf_u32(r);
        if (!rbuf_ok(r))
            break;
        on_attach(n, c, id);
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
    case MSG_OBJECT_PUT:
        return on_object_put(n, c, r, reason);
    case MSG_FETCH_REQ: {
        /* Checked before the reply is opened: a connection's batch takes no half message. */
        struct rbuf peek = *r;
        rbuf_u32(&peek);
        rbuf_u64(&peek);
        rbuf_u64(&peek);
        if (rbuf_u32(&peek) > DATA_FETCH_CHUNK || !rbuf_ok(&peek))
            break;
        size_t at;
        struct wbuf *b = conn_msg_begin(c, MSG_FETCH_REP, &at);
        data_client_reply(n->data, r, b, conn_peer_name(c));
        conn_msg_end(c, at);
        return 0;
    }
    case MSG_SHUTDOWN:
        log_info("shutdown requested by %s", conn_peer_name(c));
        n->stop_requested = true;
        node_mark_dirty(n);
        return 0;
    case MSG_KVS_FORGET: {
        /* The job is over: neither its records nor the moves of its tasks are needed. */
        struct rbuf peek = *r;
        uint32_t job = rbuf_u32(&peek);
        if (rbuf_ok(&peek))
            node__forget_moves(n, job);
        size_t held = kvs_records_held(n->kvs);
        int rc = kvs_handle(n->kvs, KVS_NO_SHARD, type, r, reason);
        /* A big job's records are gone: the memory goes back to the system, so that a
         * long-lived daemon's resident size is what it holds now, not the most it ever
         * held (glibc keeps freed memory for the next allocations otherwise). */
        if (held - kvs_records_held(n->kvs) >= FORGET_TRIM_RECORDS) {
            conn_hub_trim(n->hub);
            malloc_trim(0);
        }
        return rc;
    }
    case MSG_KVS_INSERT:
    case MSG_KVS_REMOVE:
    case MSG_KVS_APPEND:
        return kvs_handle(n->kvs, KVS_NO_SHARD, type, r, reason);
    default:
        *reason = "message type not allowed from a client";
        return -EBADMSG;
    }
    *reason = "malformed client message";
    return -EBADMSG;
}
