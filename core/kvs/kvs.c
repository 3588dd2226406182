/*
 * kvs — operations, routing, messages and the effect worklist (see kvs.h).
 * Replication is in kvs_replica.c, deaths in kvs_takeover.c, the shared state in
 * kvs_impl.h.
 *
 * Payloads:
 *   INSERT        tmd
 *   LOOKUP        u32 req, u64 key                 -> LOOKUP_REPLY u32 req, i32 status, [tmd]
 *   REMOVE        u64 key
 *   APPEND        u64 key, u8 field, u32 node, u64 value, u64 object
 *                 (field | KVS_FIELD_REPLAY: a completion re-issued after a take-over)
 *   CAS           u32 req, u64 key, u8 field, u64 expected, u64 desired,
 *                 u8 has_run, [u32 node, i64 start, i64 end, u64 size],
 *                 [u32 attempt when has_run is 2; has_run 1 means attempt 0]
 *                                                  -> CAS_REPLY u32 req, i32 status, [tmd]
 *   NOTIFY        u64 key, u8 event, u64 all_data_size, i64 t_ready,
 *                 u32 nparents, nparents x (u64 object, u64 bytes, u32 node)
 *   FORGET        u32 job                          (to every node)
 *   REPLICATE     one or more writes, each u8 op, then by op (primary to backup, R > 1
 *                 only; a loop pass's writes to one backup join one message):
 *                   0 PUT     tmd: the whole record, replacing the backup's copy
 *                   1 APPEND  u64 key, u8 field, u32 node, u64 value, u64 object, i64 now
 *                   2 STATUS  u64 key, u8 status, u8 has_run,
 *                             [u32 node, u32 attempt, i64 start, i64 end, u64 size]
 *                   3 REMOVE  u64 key
 *                   4 INSERT  i64 now, tmd: a client's insert as it came, applied at
 *                             the primary's `now` (shard_new_record)
 *   REPLICA_ACK   u64 count: REPLICATE writes from the receiver applied so far
 * req 0 means no reply is wanted.  A tmd is tmd_put's encoding (tmd.h).  At R = 1 no
 * REPLICATE or REPLICA_ACK is sent, and a CAS of attempt 0 encodes as it did before
 * replication existed (tests/kvs/r1-wire.txt).
 */
#include "core/kvs/kvs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs_impl.h"
#include "core/model/task.h"
#include "core/net/proto.h"

struct kvs *kvs_create(uint32_t self, uint32_t nodes, const struct kvs_transport *t)
{
    struct kvs *kvs = xcalloc(1, sizeof *kvs);
    kvs->self = self;
    kvs->nodes = nodes;
    kvs->t = *t;
    shard_init(&kvs->shard);
    u64map_init(&kvs->pending);
    view_init(&kvs->view, nodes);
    kvs__replica_init(kvs);
    return kvs;
}

void kvs_destroy(struct kvs *kvs)
{
    if (!kvs)
        return;
    uint64_t k;
    void *v;
    for (size_t i = 0; (i = u64map_next(&kvs->pending, i, &k, &v)) != 0;)
        free(v);
    u64map_fini(&kvs->pending);
    shard_fini(&kvs->shard);
    free(kvs->work.v);
    kvs__replica_fini(kvs);
    for (size_t i = 0; i < kvs->nparked; i++)
        free(kvs->parked[i].bytes);
    free(kvs->parked);
    view_fini(&kvs->view);
    free(kvs);
}

int kvs_set_replicas(struct kvs *kvs, uint32_t replicas)
{
    if (replicas < 1 || replicas > KVS_MAX_REPLICAS)
        return -EINVAL;
    if (kvs->used || shard_len(&kvs->shard))
        return -EBUSY;
    kvs->view.replicas = replicas;
    kvs->memo_ndown = UINT32_MAX;
    return 0;
}

uint32_t kvs_owner(const struct kvs *kvs, uint64_t key)
{
    return task_key_owner(key, kvs->nodes);
}

uint32_t kvs_primary(const struct kvs *kvs, uint64_t key)
{
    uint32_t p = view_primary(&kvs->view, key);
    return p == VIEW_NONE ? KVS_NO_SHARD : p;
}

size_t kvs_local_records(struct kvs *kvs)
{
    kvs__backlog_build_all(kvs, false);
    return shard_len(&kvs->shard);
}

size_t kvs_compact(struct kvs *kvs, size_t budget, bool *more)
{
    return kvs__backlog_compact(kvs, budget, more);
}

size_t kvs_records_held(const struct kvs *kvs)
{
    return shard_len(&kvs->shard) + kvs__backlog_records(kvs);
}

const struct tmd *kvs_local_record(struct kvs *kvs, uint64_t key)
{
    kvs__backlog_build_all(kvs, false);
    return shard_get(&kvs->shard, key);
}

bool kvs_is_down(const struct kvs *kvs, uint32_t node)
{
    return view_is_down(&kvs->view, node);
}

/* ---- requests ------------------------------------------------------------------------ */

static uint32_t add_pending(struct kvs *kvs, const struct pending *req)
{
    if (!req->fn)
        return 0;
    struct pending *p = xmalloc(sizeof *p);
    *p = *req;
    if (++kvs->next_req == 0)
        kvs->next_req = 1;
    u64map_put(&kvs->pending, kvs->next_req, p);
    return kvs->next_req;
}

static void send_request(struct kvs *kvs, uint32_t req, const struct pending *p)
{
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, p->to, p->type, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u64(b, p->key);
    if (p->type == MSG_KVS_CAS) {
        wbuf_put_u8(b, p->field);
        wbuf_put_u64(b, p->expected);
        wbuf_put_u64(b, p->desired);
        /* Attempt 0 keeps the encoding that predates attempts. */
        wbuf_put_u8(b, !p->has_run ? 0 : p->run.attempt ? 2 : 1);
        if (p->has_run) {
            wbuf_put_u32(b, p->run.node);
            wbuf_put_i64(b, p->run.t_start);
            wbuf_put_i64(b, p->run.t_end);
            wbuf_put_u64(b, p->run.data_size);
            if (p->run.attempt)
                wbuf_put_u32(b, p->run.attempt);
        }
    }
    kvs__msg_end(kvs, p->to, at, p->late);
}

void kvs__msg_end(struct kvs *kvs, uint32_t node, size_t at, bool late)
{
    if (late && kvs->t.msg_end_late)
        kvs->t.msg_end_late(kvs->t.ctx, node, at);
    else
        kvs->t.msg_end(kvs->t.ctx, node, at);
}

/* ---- notices and effects ------------------------------------------------------------- */

void kvs__send_notice(struct kvs *kvs, uint32_t holder, uint64_t key, uint8_t event,
                      uint64_t bytes, int64_t when)
{
    /* A dead holder's tasks are found by kvs_orphans; the notice would go nowhere. */
    if (view_is_down(&kvs->view, holder))
        return;
    /* The record is on this shard (effects come from it): its parent list says where
     * the task's inputs are. */
    const struct tmd *rec = event == KVS_EVENT_READY ? shard_get(&kvs->shard, key) : NULL;
    struct kvs_notice notice = {
        .key = key, .event = event, .all_data_size = bytes, .t_ready = when,
        .nparents = rec ? tmd_parents_done(rec) : 0, .parents = rec ? tmd_late(rec)->parent_list : NULL,
    };
    if (holder == kvs->self) {
        kvs->t.notify(kvs->t.ctx, &notice);
        return;
    }
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, holder, MSG_KVS_NOTIFY, &at);
    wbuf_put_u64(b, key);
    wbuf_put_u8(b, event);
    wbuf_put_u64(b, bytes);
    wbuf_put_i64(b, when);
    wbuf_put_u32(b, notice.nparents);
    for (uint32_t i = 0; i < notice.nparents; i++) {
        wbuf_put_u64(b, notice.parents[i].object);
        wbuf_put_u64(b, notice.parents[i].bytes);
        wbuf_put_u32(b, notice.parents[i].node);
    }
    kvs->t.msg_end(kvs->t.ctx, holder, at);
}

void kvs__notify(struct kvs *kvs, uint32_t holder, uint64_t key, uint8_t event, uint64_t bytes,
                 int64_t when)
{
    if (holder != kvs->self && holder >= kvs->nodes) {
        log_error("kvs: record %llx has holder %u outside the membership",
                  (unsigned long long)key, holder);
        return;
    }
    if (kvs__may_hold(kvs)) {
        struct deferred d = {.kind = DEFER_NOTICE, .event = event, .to = holder, .key = key,
                             .bytes = bytes, .when = when};
        if (kvs__hold(kvs, &d))
            return;
    }
    kvs__send_notice(kvs, holder, key, event, bytes, when);
}

/* Carries out queued effects until none are left.  Re-entrant calls (a notify that
 * appends, a local append that cancels a child) only add to the list. */
void kvs__drain(struct kvs *kvs)
{
    if (kvs->draining)
        return;
    kvs->draining = 1;
    while (kvs->work.len) {
        struct kvs_effect e = kvs->work.v[--kvs->work.len];
        switch (e.kind) {
        case KVS_EFFECT_READY:
            kvs__notify(kvs, e.node, e.key, KVS_EVENT_READY, e.value, e.when);
            break;
        case KVS_EFFECT_CANCEL:
            kvs__notify(kvs, e.node, e.key, KVS_EVENT_CANCEL, 0, 0);
            break;
        case KVS_EFFECT_CANCEL_CHILD:
            kvs__append_any(kvs, e.key, KVS_FIELD_PARENT_FAILED, kvs->self, 0, 0);
            break;
        }
    }
    kvs->draining = 0;
}

/* ---- operations ---------------------------------------------------------------------- */

/* The insert of a record this node is primary for; `bytes` (len), when not NULL, are
 * the record as the client encoded it, forwarded as they are. */
static int insert_here(struct kvs *kvs, struct tmd *t, const uint8_t *bytes, size_t len)
{
    uint64_t key = t->key;
    int64_t now = clock_wall_ns();
    int rc = shard_insert(&kvs->shard, t, now);
    if (rc < 0)
        log_warn("kvs: duplicate insert of %llx refused", (unsigned long long)t->key);
    else if (kvs->view.replicas > 1 && bytes)
        kvs__forward_insert(kvs, key, bytes, len, now);
    else if (kvs->view.replicas > 1)
        kvs__forward_put(kvs, key);
    return rc;
}

int kvs_insert(struct kvs *kvs, struct tmd *t)
{
    kvs->used = 1;
    uint32_t primary = view_primary(&kvs->view, t->key);
    if (primary == VIEW_NONE) {
        tmd_fini(t);
        memset(t, 0, sizeof *t);
        return -EHOSTDOWN;
    }
    if (primary == kvs->self)
        return insert_here(kvs, t, NULL, 0);
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, primary, MSG_KVS_INSERT, &at);
    tmd_put(b, t);
    kvs->t.msg_end(kvs->t.ctx, primary, at);
    tmd_fini(t);
    memset(t, 0, sizeof *t);
    return 0;
}

static void lookup_here(struct kvs *kvs, uint64_t key, kvs_reply_fn fn, void *arg)
{
    struct tmd *rec = shard_get(&kvs->shard, key);
    fn(arg, rec ? 0 : -ENOENT, rec);
}

int kvs_lookup(struct kvs *kvs, uint64_t key, kvs_reply_fn fn, void *arg)
{
    kvs->used = 1;
    uint32_t primary = view_primary(&kvs->view, key);
    if (primary == VIEW_NONE) {
        fn(arg, -EHOSTDOWN, NULL);
        return 0;
    }
    if (primary == kvs->self) {
        lookup_here(kvs, key, fn, arg);
        return 0;
    }
    struct pending p = {.fn = fn, .arg = arg, .key = key, .to = primary, .type = MSG_KVS_LOOKUP};
    send_request(kvs, add_pending(kvs, &p), &p);
    return 0;
}

static int remove_here(struct kvs *kvs, uint64_t key)
{
    int rc = shard_remove(&kvs->shard, key);
    if (rc == 0 && kvs->view.replicas > 1)
        kvs__forward_remove(kvs, key);
    return rc;
}

int kvs_remove(struct kvs *kvs, uint64_t key)
{
    kvs->used = 1;
    uint32_t primary = view_primary(&kvs->view, key);
    if (primary == VIEW_NONE)
        return -EHOSTDOWN;
    if (primary == kvs->self)
        return remove_here(kvs, key);
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, primary, MSG_KVS_REMOVE, &at);
    wbuf_put_u64(b, key);
    kvs->t.msg_end(kvs->t.ctx, primary, at);
    return 0;
}

int kvs__append_local(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node,
                      uint64_t value, uint64_t object)
{
    uint8_t plain = field & (uint8_t)~KVS_FIELD_REPLAY;
    /* No task goes to a node known dead: it would be nobody's orphan, the scan that
     * lists them being over.  The sender still holds it (or its orphans are listed). */
    if ((plain == KVS_FIELD_HISTORY || plain == KVS_FIELD_RESUBMIT) &&
        view_is_down(&kvs->view, node))
        return 0;
    int64_t now = clock_wall_ns();
    int rc = shard_append(&kvs->shard, key, field, node, value, object, now, &kvs->work);
    /* Removing what is gone already is not news: a repeated cancel; nor is a re-issued
     * completion to a record a job removal took; nor a late append to a record that
     * went with its job (a parent's end reaching a child that another parent's failure
     * cancelled). */
    if (rc == -ENOENT && plain != KVS_FIELD_REMOVE && !(field & KVS_FIELD_REPLAY) &&
        !shard_forgot(&kvs->shard, task_key_job(key)))
        log_warn("kvs: append to unknown record %llx", (unsigned long long)key);
    if (kvs->view.replicas > 1 &&
        (rc > 0 || (rc == 0 && plain != KVS_FIELD_RESUBMIT && plain != KVS_FIELD_REOPEN)))
        kvs__forward_append(kvs, key, field, node, value, object, now);
    kvs__drain(kvs);
    return rc;
}

static void send_append(struct kvs *kvs, uint32_t primary, uint64_t key, uint8_t field,
                        uint32_t node, uint64_t value, uint64_t object)
{
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, primary, MSG_KVS_APPEND, &at);
    wbuf_put_u64(b, key);
    wbuf_put_u8(b, field);
    wbuf_put_u32(b, node);
    wbuf_put_u64(b, value);
    wbuf_put_u64(b, object);
    kvs->t.msg_end(kvs->t.ctx, primary, at);
}

void kvs__append_any(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node,
                     uint64_t value, uint64_t object)
{
    uint32_t primary = view_primary(&kvs->view, key);
    if (primary == VIEW_NONE)
        return;
    if (primary == kvs->self)
        kvs__append_local(kvs, key, field, node, value, object);
    else
        send_append(kvs, primary, key, field, node, value, object);
}

int kvs_append(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node, uint64_t value,
               uint64_t object)
{
    if (field >= KVS_FIELD_COUNT || field == KVS_FIELD_STATUS || field == KVS_FIELD_REOPEN)
        return -EINVAL;
    kvs->used = 1;
    uint32_t primary = view_primary(&kvs->view, key);
    if (primary == VIEW_NONE)
        return -EHOSTDOWN;
    if (primary == kvs->self)
        return kvs__append_local(kvs, key, field, node, value, object);
    send_append(kvs, primary, key, field, node, value, object);
    return 0;
}

int kvs_resubmit(struct kvs *kvs, uint64_t key, uint32_t attempt, uint32_t holder)
{
    if (holder >= kvs->nodes)
        return -EINVAL;
    return kvs_append(kvs, key, KVS_FIELD_RESUBMIT, holder, attempt, 0);
}

int kvs_reopen(struct kvs *kvs, uint64_t key, uint32_t attempt, uint32_t runner)
{
    if (runner >= kvs->nodes)
        return -EINVAL;
    /* Only where the record's primary is: the caller hands the task on at once, from the
     * record as it is now (kvs_local_record). */
    if (!kvs__is_primary(kvs, key) || !view_is_down(&kvs->view, runner))
        return 0;
    kvs->used = 1;
    return kvs__append_local(kvs, key, KVS_FIELD_REOPEN, runner, attempt, 0);
}

/* A CAS applied here as the primary: forwarded when it swapped; a completion recorded
 * while a node is down may have to reach children through the store (kvs.h). */
static int cas_here(struct kvs *kvs, uint32_t from, uint64_t key, uint8_t field,
                    uint64_t expected, uint64_t desired, const struct tmd_run *run,
                    struct tmd **rec)
{
    int rc = shard_cas(&kvs->shard, key, field, expected, desired, run, from, rec);
    if (rc == 1) {
        /* A task's end with no children to tell: what waits on its copy is the
         * runner's answer and through it the client's notice, which wait for company
         * anyway (conn_msg_end_late); a bag of 1 ms tasks sent a copy and woke a backup
         * and then the primary (its acknowledgement) at every timer tick. */
        bool late = field == KVS_FIELD_STATUS && task_status_final((enum task_status)desired) &&
                    *rec && (*rec)->num_children == 0;
        if (kvs->view.replicas > 1)
            kvs__forward_status(kvs, key, (uint8_t)desired, run, late);
        if (kvs->view.ndown && task_status_final((enum task_status)desired))
            kvs__reissue_if_rerouted(kvs, *rec);
    }
    return rc;
}

/* The callback of a request made on the primary itself, about `rec` (NULL when there is
 * none): at once, or when its write counts. */
static void reply_here(struct kvs *kvs, uint64_t key, const struct tmd *rec, int status,
                       kvs_reply_fn fn, void *arg)
{
    if (kvs__may_hold(kvs)) {
        struct deferred d = {.kind = DEFER_REPLY_LOCAL, .status = status, .key = key,
                             .rec = rec, .frees = kvs->shard.frees, .fn = fn, .arg = arg};
        if (kvs__hold(kvs, &d))
            return;
    }
    /* A refusal carries no record (kvs.h), though the store has one. */
    fn(arg, status, status >= 0 ? rec : NULL);
}

static int cas(struct kvs *kvs, uint64_t key, uint8_t field, uint64_t expected, uint64_t desired,
               const struct tmd_run *run, kvs_reply_fn fn, void *arg, bool late)
{
    kvs->used = 1;
    uint32_t primary = view_primary(&kvs->view, key);
    if (primary != VIEW_NONE && primary == kvs->self) {
        struct tmd *rec;
        int rc = cas_here(kvs, kvs->self, key, field, expected, desired, run, &rec);
        if (rc == -EINVAL)
            return rc;
        if (fn)
            reply_here(kvs, key, rec, rc, fn, arg);
        kvs__settle(kvs, key);
        return 0;
    }
    if (field != KVS_FIELD_STATUS || desired >= TASK_STATUS_COUNT)
        return -EINVAL;
    if (primary == VIEW_NONE) {
        if (fn)
            fn(arg, -EHOSTDOWN, NULL);
        return 0;
    }
    struct pending p = {.fn = fn, .arg = arg, .key = key, .to = primary, .type = MSG_KVS_CAS,
                        .field = field, .expected = expected, .desired = desired,
                        .has_run = run != NULL, .late = late};
    if (run)
        p.run = *run;
    send_request(kvs, add_pending(kvs, &p), &p);
    return 0;
}

int kvs_cas(struct kvs *kvs, uint64_t key, uint8_t field, uint64_t expected, uint64_t desired,
            const struct tmd_run *run, kvs_reply_fn fn, void *arg)
{
    return cas(kvs, key, field, expected, desired, run, fn, arg, false);
}

int kvs_cas_late(struct kvs *kvs, uint64_t key, uint8_t field, uint64_t expected,
                 uint64_t desired, const struct tmd_run *run, kvs_reply_fn fn, void *arg)
{
    return cas(kvs, key, field, expected, desired, run, fn, arg, true);
}

void kvs__resend(struct kvs *kvs, uint32_t req, struct pending *p)
{
    uint32_t primary = view_primary(&kvs->view, p->key);
    if (primary != VIEW_NONE && primary == kvs->self) {
        if (p->type == MSG_KVS_LOOKUP) {
            lookup_here(kvs, p->key, p->fn, p->arg);
        } else {
            struct tmd *rec;
            int rc = cas_here(kvs, kvs->self, p->key, p->field, p->expected, p->desired,
                              p->has_run ? &p->run : NULL, &rec);
            reply_here(kvs, p->key, rec, rc, p->fn, p->arg);
            kvs__settle(kvs, p->key);
        }
        free(p);
        return;
    }
    if (primary == VIEW_NONE) {
        p->fn(p->arg, -EHOSTDOWN, NULL);
        free(p);
        return;
    }
    p->to = primary;
    u64map_put(&kvs->pending, req, p);
    send_request(kvs, req, p);
}

/* ---- forgetting a job ---------------------------------------------------------------- */

void kvs__settle(struct kvs *kvs, uint64_t key)
{
    /* The common case, every status swap of a running job, costs one comparison. */
    if (!kvs->shard.marked)
        return;
    const struct tmd *rec = shard_get(&kvs->shard, key);
    if (!rec || !(rec->flags & TMD_FLAG_FORGET) ||
        !task_status_final((enum task_status)rec->status))
        return;
    /* Another answer about it still waits for the backups: it reads the record when it
     * leaves, and settles it then. */
    if (kvs__reply_held(kvs, key))
        return;
    shard_settle(&kvs->shard, key);
}

static size_t forget_here(struct kvs *kvs, uint32_t job)
{
    /* Its kept backup copies first, so that they go as built ones do. */
    kvs__backlog_forget(kvs, job);
    /* A final record whose answer still waits for the backups is not gone yet: the
     * answer would say -ENOENT to the runner that asked. */
    kvs__forget_held(kvs, job);
    return shard_forget_job(&kvs->shard, job);
}

void kvs_forget_job(struct kvs *kvs, uint32_t job)
{
    /* Every node, not only the primaries: each drops its own copies, backups included. */
    for (uint32_t i = 0; i < kvs->nodes; i++) {
        if (i == kvs->self) {
            forget_here(kvs, job);
            continue;
        }
        if (view_is_down(&kvs->view, i))
            continue;
        size_t at;
        struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, i, MSG_KVS_FORGET, &at);
        wbuf_put_u32(b, job);
        kvs->t.msg_end(kvs->t.ctx, i, at);
    }
}

/* ---- messages ------------------------------------------------------------------------ */

void kvs__send_reply(struct kvs *kvs, uint32_t to, uint16_t type, uint32_t req, int status,
                     const struct tmd *rec)
{
    if (status < 0)
        rec = NULL;
    /* Removed while the reply waited: a reply that says found carries the record. */
    if (status >= 0 && !rec)
        status = -ENOENT;
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, to, type, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u32(b, (uint32_t)status);
    if (rec)
        tmd_put(b, rec);
    kvs->t.msg_end(kvs->t.ctx, to, at);
}

/* A reply to a request about `rec` (NULL when there is none): sent now (lookups always),
 * or once the write it reports counts. */
static void reply(struct kvs *kvs, uint32_t to, uint16_t type, uint32_t req, int status,
                  uint64_t key, const struct tmd *rec, bool wait)
{
    if (!req || to >= kvs->nodes)
        return;
    if (wait && kvs__may_hold(kvs)) {
        struct deferred d = {.kind = DEFER_REPLY_MSG, .type = type, .to = to, .req = req,
                             .status = status, .key = key, .rec = rec,
                             .frees = kvs->shard.frees};
        if (kvs__hold(kvs, &d))
            return;
    }
    kvs__send_reply(kvs, to, type, req, status, rec);
}

static int handle_reply(struct kvs *kvs, struct rbuf *r, const char **reason)
{
    uint32_t req = rbuf_u32(r);
    int32_t status = (int32_t)rbuf_u32(r);
    if (!rbuf_ok(r)) {
        *reason = "truncated kvs reply";
        return -EBADMSG;
    }
    struct pending *p = u64map_del(&kvs->pending, req);
    if (!p) {
        *reason = "kvs reply to no request";
        return -EBADMSG;
    }
    struct tmd rec;
    int have = 0;
    if (status >= 0) {
        if (tmd_get(r, &rec) < 0) {
            free(p);
            *reason = "malformed task metadata in kvs reply";
            return -EBADMSG;
        }
        have = 1;
    }
    p->fn(p->arg, status, have ? &rec : NULL);
    if (have)
        tmd_fini(&rec);
    free(p);
    return 0;
}

static int deliver_notice(struct kvs *kvs, struct rbuf *r)
{
    struct kvs_notice notice = {.key = rbuf_u64(r)};
    notice.event = rbuf_u8(r);
    notice.all_data_size = rbuf_u64(r);
    notice.t_ready = rbuf_i64(r);
    notice.nparents = rbuf_u32(r);
    if (!rbuf_ok(r) || notice.event > KVS_EVENT_CANCEL || notice.nparents > r->left / 20)
        return -EBADMSG;
    struct tmd_parent *parents = NULL;
    if (notice.nparents) {
        parents = xcalloc(notice.nparents, sizeof *parents);
        for (uint32_t i = 0; i < notice.nparents; i++) {
            parents[i].object = rbuf_u64(r);
            parents[i].bytes = rbuf_u64(r);
            parents[i].node = rbuf_u32(r);
        }
    }
    notice.parents = parents;
    bool ok = rbuf_ok(r);
    if (ok)
        kvs->t.notify(kvs->t.ctx, &notice);
    free(parents);
    return ok ? 0 : -EBADMSG;
}

int kvs_handle(struct kvs *kvs, uint32_t from, uint16_t type, struct rbuf *r, const char **reason)
{
    *reason = NULL;
    /* Late words of the dead: declared down, a node no longer counts. */
    if (from != KVS_NO_SHARD && view_is_down(&kvs->view, from))
        return 0;
    if (kvs->self == KVS_NO_SHARD && type != MSG_KVS_LOOKUP_REPLY && type != MSG_KVS_CAS_REPLY) {
        *reason = "metadata request sent to a client";
        return -EBADMSG;
    }
    const struct rbuf start = *r;
    switch (type) {
    case MSG_KVS_INSERT: {
        struct tmd t;
        /* The spec stays in the message until shard_insert copies it. */
        if (tmd_get_lent(r, &t) < 0) {
            *reason = "malformed task metadata in insert";
            return -EBADMSG;
        }
        if (!kvs__is_primary(kvs, t.key)) {
            tmd_fini(&t);
            return kvs__park(kvs, from, type, &start, reason);
        }
        kvs->used = 1;
        if (insert_here(kvs, &t, start.p, start.left - r->left) < 0)
            tmd_fini(&t);
        return 0;
    }
    case MSG_KVS_LOOKUP: {
        uint32_t req = rbuf_u32(r);
        uint64_t key = rbuf_u64(r);
        if (!rbuf_ok(r))
            break;
        if (!kvs__is_primary(kvs, key))
            return kvs__park(kvs, from, type, &start, reason);
        const struct tmd *rec = shard_get(&kvs->shard, key);
        reply(kvs, from, MSG_KVS_LOOKUP_REPLY, req, rec ? 0 : -ENOENT, key, rec, false);
        return 0;
    }
    case MSG_KVS_REMOVE: {
        uint64_t key = rbuf_u64(r);
        if (!rbuf_ok(r))
            break;
        if (!kvs__is_primary(kvs, key))
            return kvs__park(kvs, from, type, &start, reason);
        remove_here(kvs, key);
        return 0;
    }
    case MSG_KVS_APPEND: {
        uint64_t key = rbuf_u64(r);
        uint8_t field = rbuf_u8(r);
        uint32_t node = rbuf_u32(r);
        uint64_t value = rbuf_u64(r);
        uint64_t object = rbuf_u64(r);
        uint8_t plain = field & (uint8_t)~KVS_FIELD_REPLAY;
        /* A re-opening is the primary's own decision, never a peer's or a client's. */
        if (!rbuf_ok(r) || plain >= KVS_FIELD_COUNT || plain == KVS_FIELD_STATUS ||
            plain == KVS_FIELD_REOPEN || node >= kvs->nodes)
            break;
        if (!kvs__is_primary(kvs, key))
            return kvs__park(kvs, from, type, &start, reason);
        kvs__append_local(kvs, key, field, node, value, object);
        return 0;
    }
    case MSG_KVS_CAS: {
        uint32_t req = rbuf_u32(r);
        uint64_t key = rbuf_u64(r);
        uint8_t field = rbuf_u8(r);
        uint64_t expected = rbuf_u64(r);
        uint64_t desired = rbuf_u64(r);
        uint8_t has_run = rbuf_u8(r);
        struct tmd_run run = {0};
        if (has_run) {
            run.node = rbuf_u32(r);
            run.t_start = rbuf_i64(r);
            run.t_end = rbuf_i64(r);
            run.data_size = rbuf_u64(r);
            if (has_run == 2)
                run.attempt = rbuf_u32(r);
        }
        if (!rbuf_ok(r) || has_run > 2 || field != KVS_FIELD_STATUS ||
            desired >= TASK_STATUS_COUNT)
            break;
        if (!kvs__is_primary(kvs, key))
            return kvs__park(kvs, from, type, &start, reason);
        struct tmd *rec;
        int rc = cas_here(kvs, from, key, field, expected, desired, has_run ? &run : NULL,
                          &rec);
        reply(kvs, from, MSG_KVS_CAS_REPLY, req, rc, key, rec, true);
        kvs__settle(kvs, key);
        return 0;
    }
    case MSG_KVS_FORGET: {
        uint32_t job = rbuf_u32(r);
        if (!rbuf_ok(r))
            break;
        size_t dropped = forget_here(kvs, job);
        log_debug("kvs: job %u forgotten: %zu records dropped; %zu records wait to be final",
                  job, dropped, kvs->shard.marked);
        return 0;
    }
    case MSG_KVS_LOOKUP_REPLY:
    case MSG_KVS_CAS_REPLY:
        return handle_reply(kvs, r, reason);
    case MSG_KVS_NOTIFY:
        if (deliver_notice(kvs, r) < 0)
            break;
        return 0;
    case MSG_KVS_REPLICATE:
        return kvs__handle_replicate(kvs, from, r, reason);
    case MSG_KVS_REPLICA_ACK:
        return kvs__handle_ack(kvs, from, r, reason);
    default:
        *reason = "unknown metadata message type";
        return -EBADMSG;
    }
    *reason = "malformed metadata message";
    return -EBADMSG;
}

size_t kvs_ends_lost_with(const struct kvs *kvs, uint32_t dead, kvs_orphan_fn fn, void *arg)
{
    size_t count = 0;
    uint64_t key;
    void *v;
    for (size_t i = 0; (i = shard_next(&kvs->shard, i, &key, &v)) != 0;) {
        const struct tmd *rec = v;
        if (!task_status_final((enum task_status)rec->status) || !kvs__is_primary(kvs, key))
            continue;
        bool cancelled = rec->status == TASK_CANCELLED;
        uint32_t reporter = cancelled ? rec->holder : tmd_late(rec)->runner;
        if (reporter != dead && (reporter >= kvs->nodes || !view_is_down(&kvs->view, reporter)))
            continue;
        fn(arg, rec);
        count++;
    }
    return count;
}

size_t kvs_job_ends(const struct kvs *kvs, uint32_t job, kvs_orphan_fn fn, void *arg)
{
    size_t count = 0;
    uint64_t key;
    void *v;
    for (size_t i = 0; (i = shard_next(&kvs->shard, i, &key, &v)) != 0;) {
        const struct tmd *rec = v;
        if (task_key_job(key) != job || !task_status_final((enum task_status)rec->status) ||
            !kvs__is_primary(kvs, key))
            continue;
        fn(arg, rec);
        count++;
    }
    return count;
}
