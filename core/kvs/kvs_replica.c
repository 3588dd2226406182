/*
 * kvs_replica — the primary's side and the backup's side of replication (kvs.h): the
 * primary forwards each write to the key's live backups in MSG_KVS_REPLICATE (a loop
 * pass's writes to one backup joined into one message), counting the writes it sent on
 * each link; a backup applies or keeps each and counts what it received, and kvs_flush
 * tells the primary the count (MSG_KVS_REPLICA_ACK).  Links deliver in order, so a
 * count acknowledges every write before it.
 *
 * An action that reports a write (a CAS reply, a notice, a barrier) waits in a FIFO
 * until each backup it needs has acknowledged the count the link had when the action
 * was made; a backup declared down is needed no more.  Actions leave in order, so a
 * holder never hears "cancelled" before the "ready" that preceded it.  At R = 1 nothing
 * is forwarded and nothing waits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs_impl.h"
#include "core/model/task.h"
#include "core/net/proto.h"

/* Held actions the FIFO keeps room for once it is empty again. */
#define DEFER_KEEP_CAP 4096u

enum replicate_op { OP_PUT = 0, OP_APPEND = 1, OP_STATUS = 2, OP_REMOVE = 3, OP_INSERT = 4 };

void kvs__replica_init(struct kvs *kvs)
{
    if (kvs->self == KVS_NO_SHARD)
        return;
    kvs->sent = xcalloc(kvs->nodes, sizeof *kvs->sent);
    kvs->acked = xcalloc(kvs->nodes, sizeof *kvs->acked);
    kvs->received = xcalloc(kvs->nodes, sizeof *kvs->received);
    kvs->ack_sent = xcalloc(kvs->nodes, sizeof *kvs->ack_sent);
    kvs->memo_ndown = UINT32_MAX;
}

static const struct defer_need *needs(const struct deferred *d)
{
    return d->nneed > DEFER_INLINE ? d->more : d->need;
}

/* Adds a need, spilling to the heap past the inline ones. */
static void need(struct deferred *d, uint32_t node, uint64_t seq, uint32_t most)
{
    if (d->nneed == DEFER_INLINE) {
        d->more = xmalloc(most * sizeof *d->more);
        memcpy(d->more, d->need, sizeof d->need);
    }
    struct defer_need *v = d->nneed >= DEFER_INLINE ? d->more : d->need;
    v[d->nneed++] = (struct defer_need){.node = node, .seq = seq};
}

void kvs__replica_fini(struct kvs *kvs)
{
    for (size_t i = kvs->defer_head; i < kvs->defer_len; i++)
        free(kvs->defer[i].more);
    free(kvs->defer);
    free(kvs->backup_fx.v);
    free(kvs->sent);
    free(kvs->acked);
    free(kvs->received);
    free(kvs->ack_sent);
    kvs__backlog_fini(kvs);
}

/* The live backups of a key this store is primary for (every caller has just applied a
 * write as its primary, or holds back an answer it gives as the primary); 0 at R = 1.
 * They are the same for every such key — the next R - 1 live nodes after this one,
 * since the nodes of the ring walk between a key's owner and its first live node are
 * all down (view.h) — so they are worked out once per view rather than per write, and
 * the key is not even looked at (its owner is a division, which showed in profiles). */
static uint32_t backups(struct kvs *kvs, uint64_t key, uint32_t *out)
{
    (void)key;
    if (kvs->view.replicas == 1 || kvs->self == KVS_NO_SHARD)
        return 0;
    if (kvs->view.ndown != kvs->memo_ndown) {
        uint32_t want = kvs->view.replicas - 1, n = 0;
        for (uint32_t i = 1; i < kvs->nodes && n < want; i++) {
            uint32_t node = (kvs->self + i) % kvs->nodes;
            if (!view_is_down(&kvs->view, node))
                kvs->memo_to[n++] = node;
        }
        kvs->memo_n = n;
        kvs->memo_ndown = kvs->view.ndown;
    }
    memcpy(out, kvs->memo_to, kvs->memo_n * sizeof *out);
    return kvs->memo_n;
}

/* A REPLICATE message's payload is a sequence of writes: a write joins the last message
 * to its backup while that is under this many bytes (one header, one dispatch). */
#define REPLICATE_JOIN_BYTES (256u * 1024)

static struct wbuf *open_to(struct kvs *kvs, uint32_t node, size_t *at)
{
    if (kvs->t.msg_join)
        return kvs->t.msg_join(kvs->t.ctx, node, MSG_KVS_REPLICATE, REPLICATE_JOIN_BYTES, at);
    return kvs->t.msg_begin(kvs->t.ctx, node, MSG_KVS_REPLICATE, at);
}

static struct wbuf *begin(struct kvs *kvs, uint32_t node, uint8_t op, size_t *at)
{
    struct wbuf *b = open_to(kvs, node, at);
    wbuf_put_u8(b, op);
    return b;
}

static void end(struct kvs *kvs, uint32_t node, size_t at, bool late)
{
    kvs__msg_end(kvs, node, at, late);
    kvs->sent[node]++;
}

void kvs__forward_put_to(struct kvs *kvs, uint32_t node, const struct tmd *rec)
{
    size_t at;
    struct wbuf *b = begin(kvs, node, OP_PUT, &at);
    tmd_put(b, rec);
    end(kvs, node, at, false);
}

void kvs__forward_put(struct kvs *kvs, uint64_t key)
{
    uint32_t to[KVS_MAX_REPLICAS];
    uint32_t n = backups(kvs, key, to);
    const struct tmd *rec = n ? shard_get(&kvs->shard, key) : NULL;
    for (uint32_t i = 0; rec && i < n; i++)
        kvs__forward_put_to(kvs, to[i], rec);
}

void kvs__forward_insert(struct kvs *kvs, uint64_t key, const uint8_t *bytes, size_t len,
                         int64_t now)
{
    uint32_t to[KVS_MAX_REPLICAS];
    uint32_t n = backups(kvs, key, to);
    for (uint32_t i = 0; i < n; i++) {
        size_t at;
        struct wbuf *b = begin(kvs, to[i], OP_INSERT, &at);
        wbuf_put_i64(b, now);
        wbuf_put(b, bytes, len);
        end(kvs, to[i], at, false);
    }
}

/* Little-endian stores into a payload built on the stack: an append or a swap is
 * encoded once, whatever the number of backups, and copied whole into each message. */
static inline uint8_t *le(uint8_t *p, uint64_t v, int n)
{
    wbuf_store_le(p, v, n);
    return p + n;
}

static void forward_bytes(struct kvs *kvs, const uint32_t *to, uint32_t n, const uint8_t *bytes,
                          size_t len, bool late)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t at;
        struct wbuf *b = open_to(kvs, to[i], &at);
        wbuf_put(b, bytes, len);
        end(kvs, to[i], at, late);
    }
}

void kvs__forward_append(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node,
                         uint64_t value, uint64_t object, int64_t now)
{
    uint32_t to[KVS_MAX_REPLICAS];
    uint32_t n = backups(kvs, key, to);
    if (!n)
        return;
    uint8_t bytes[1 + 8 + 1 + 4 + 8 + 8 + 8], *p = bytes;
    p = le(p, OP_APPEND, 1);
    p = le(p, key, 8);
    p = le(p, field, 1);
    p = le(p, node, 4);
    p = le(p, value, 8);
    p = le(p, object, 8);
    p = le(p, (uint64_t)now, 8);
    forward_bytes(kvs, to, n, bytes, (size_t)(p - bytes), false);
}

/*
 * `late`: the copy may wait a few ms to leave with others (kvs_transport.msg_end_late).
 * Only for a write that nothing urgent waits on: every action held for it is held for
 * any later write to the same backup as well, and the first write that may not wait
 * takes the waiting ones along, so the order of acknowledgements is kept.
 */
void kvs__forward_status(struct kvs *kvs, uint64_t key, uint8_t status, const struct tmd_run *run,
                         bool late)
{
    uint32_t to[KVS_MAX_REPLICAS];
    uint32_t n = backups(kvs, key, to);
    if (!n)
        return;
    uint8_t bytes[1 + 8 + 1 + 1 + 4 + 4 + 8 + 8 + 8], *p = bytes;
    p = le(p, OP_STATUS, 1);
    p = le(p, key, 8);
    p = le(p, status, 1);
    p = le(p, run != NULL, 1);
    if (run) {
        p = le(p, run->node, 4);
        p = le(p, run->attempt, 4);
        p = le(p, (uint64_t)run->t_start, 8);
        p = le(p, (uint64_t)run->t_end, 8);
        p = le(p, run->data_size, 8);
    }
    forward_bytes(kvs, to, n, bytes, (size_t)(p - bytes), late);
}

void kvs__forward_remove(struct kvs *kvs, uint64_t key)
{
    uint32_t to[KVS_MAX_REPLICAS];
    uint32_t n = backups(kvs, key, to);
    for (uint32_t i = 0; i < n; i++) {
        size_t at;
        struct wbuf *b = begin(kvs, to[i], OP_REMOVE, &at);
        wbuf_put_u64(b, key);
        end(kvs, to[i], at, false);
    }
}

/* ---- actions that wait for acknowledgements ------------------------------------------ */

static void push(struct kvs *kvs, const struct deferred *d)
{
    if (kvs->defer_head && kvs->defer_head == kvs->defer_len)
        kvs->defer_head = kvs->defer_len = 0;
    kvs->defer = xgrow(kvs->defer, &kvs->defer_cap, kvs->defer_len + 1, sizeof *kvs->defer);
    kvs->defer[kvs->defer_len++] = *d;
}

/* What d must wait for now: its key's backups' unacknowledged sends, or for a barrier
 * every node's. */
static void set_needs(struct kvs *kvs, struct deferred *d)
{
    if (d->kind == DEFER_BARRIER) {
        for (uint32_t node = 0; kvs->sent && node < kvs->nodes; node++)
            if (kvs->acked[node] < kvs->sent[node] && !view_is_down(&kvs->view, node))
                need(d, node, kvs->sent[node], kvs->nodes);
        return;
    }
    uint32_t to[KVS_MAX_REPLICAS];
    uint32_t n = backups(kvs, d->key, to);
    for (uint32_t i = 0; i < n; i++)
        if (kvs->acked[to[i]] < kvs->sent[to[i]])
            need(d, to[i], kvs->sent[to[i]], n);
}

void kvs__renew_needs(struct kvs *kvs, uint32_t dead)
{
    for (size_t i = kvs->defer_head; i < kvs->defer_len; i++) {
        struct deferred *d = &kvs->defer[i];
        const struct defer_need *v = needs(d);
        bool on_dead = false;
        for (uint32_t k = 0; k < d->nneed; k++)
            on_dead |= v[k].node == dead;
        if (!on_dead)
            continue;
        free(d->more);
        d->more = NULL;
        d->nneed = 0;
        set_needs(kvs, d);
    }
}

bool kvs__hold(struct kvs *kvs, struct deferred *d)
{
    set_needs(kvs, d);
    /* Behind older actions even when free to go: they leave in order. */
    if (!d->nneed && kvs->defer_head == kvs->defer_len)
        return false;
    push(kvs, d);
    return true;
}

static bool satisfied(const struct kvs *kvs, const struct deferred *d)
{
    const struct defer_need *v = needs(d);
    for (uint32_t i = 0; i < d->nneed; i++) {
        uint32_t node = v[i].node;
        if (!view_is_down(&kvs->view, node) && kvs->acked[node] < v[i].seq)
            return false;
    }
    return true;
}

static void carry_out(struct kvs *kvs, const struct deferred *d)
{
    switch (d->kind) {
    case DEFER_REPLY_MSG:
        /* A node that died meanwhile hears nothing: its requests went elsewhere. */
        if (!view_is_down(&kvs->view, d->to))
            kvs__send_reply(kvs, d->to, d->type, d->req, d->status, kvs__held_record(kvs, d));
        kvs__settle(kvs, d->key);
        break;
    case DEFER_REPLY_LOCAL: {
        /* Removed while the answer waited: found means with the record; and a refusal
         * carries none, even when a record came meanwhile (kvs.h). */
        const struct tmd *rec = d->status >= 0 ? kvs__held_record(kvs, d) : NULL;
        d->fn(d->arg, d->status >= 0 && !rec ? -ENOENT : d->status, rec);
        kvs__settle(kvs, d->key);
        break;
    }
    case DEFER_NOTICE:
        kvs__send_notice(kvs, d->to, d->key, d->event, d->bytes, d->when);
        break;
    case DEFER_BARRIER:
        d->barrier(d->arg);
        break;
    }
}

void kvs__release(struct kvs *kvs)
{
    if (kvs->releasing)
        return;
    kvs->releasing = 1;
    while (kvs->defer_head < kvs->defer_len && satisfied(kvs, &kvs->defer[kvs->defer_head])) {
        /* Copied out: what it calls may queue more and move the array. */
        struct deferred d = kvs->defer[kvs->defer_head++];
        carry_out(kvs, &d);
        free(d.more);
    }
    if (kvs->defer_head == kvs->defer_len) {
        kvs->defer_head = kvs->defer_len = 0;
        /* Empty after a burst (a big job's answers): the array goes back. */
        if (kvs->defer_cap > DEFER_KEEP_CAP) {
            free(kvs->defer);
            kvs->defer = NULL;
            kvs->defer_cap = 0;
        }
    } else if (kvs->defer_head > kvs->defer_len / 2) {
        memmove(kvs->defer, kvs->defer + kvs->defer_head,
                (kvs->defer_len - kvs->defer_head) * sizeof *kvs->defer);
        kvs->defer_len -= kvs->defer_head;
        kvs->defer_head = 0;
    }
    kvs->releasing = 0;
}

static bool is_reply(const struct deferred *d)
{
    return d->kind == DEFER_REPLY_MSG || d->kind == DEFER_REPLY_LOCAL;
}

bool kvs__reply_held(const struct kvs *kvs, uint64_t key)
{
    /* A scan, paid only for a record of a forgotten job that became final (kvs__settle). */
    for (size_t i = kvs->defer_head; i < kvs->defer_len; i++)
        if (is_reply(&kvs->defer[i]) && kvs->defer[i].key == key)
            return true;
    return false;
}

void kvs__forget_held(struct kvs *kvs, uint32_t job)
{
    for (size_t i = kvs->defer_head; i < kvs->defer_len; i++)
        if (is_reply(&kvs->defer[i]) && task_key_job(kvs->defer[i].key) == job)
            shard_forget_later(&kvs->shard, kvs->defer[i].key);
}

void kvs_barrier(struct kvs *kvs, void (*fn)(void *arg), void *arg)
{
    struct deferred d = {.kind = DEFER_BARRIER, .barrier = fn, .arg = arg};
    if (!kvs__hold(kvs, &d))
        fn(arg);
}

void kvs_flush(struct kvs *kvs)
{
    if (!kvs->ack_due)
        return;
    kvs->ack_due = 0;
    for (uint32_t node = 0; node < kvs->nodes; node++) {
        if (kvs->received[node] == kvs->ack_sent[node] || view_is_down(&kvs->view, node))
            continue;
        size_t at;
        struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, node, MSG_KVS_REPLICA_ACK, &at);
        wbuf_put_u64(b, kvs->received[node]);
        kvs->t.msg_end(kvs->t.ctx, node, at);
        kvs->ack_sent[node] = kvs->received[node];
    }
}

/* ---- the backup's side --------------------------------------------------------------- */

/* Reads past one REPLICATE payload, checking it as kvs__apply_replicate does, and says
 * which key it is about. */
static int check_replicate(struct rbuf *r, uint64_t *key, const char **reason)
{
    uint8_t op = rbuf_u8(r);
    switch (op) {
    case OP_PUT:
        if (tmd_skip(r, key) < 0) {
            *reason = "malformed task metadata in replicated record";
            return -EBADMSG;
        }
        return 0;
    case OP_INSERT:
        rbuf_i64(r);
        if (tmd_skip(r, key) < 0) {
            *reason = "malformed task metadata in replicated insert";
            return -EBADMSG;
        }
        return 0;
    case OP_APPEND: {
        *key = rbuf_u64(r);
        uint8_t plain = rbuf_u8(r) & (uint8_t)~KVS_FIELD_REPLAY;
        rbuf_bytes(r, 4 + 8 + 8 + 8);
        if (!rbuf_ok(r) || plain >= KVS_FIELD_COUNT || plain == KVS_FIELD_STATUS) {
            *reason = "malformed replicated append";
            return -EBADMSG;
        }
        return 0;
    }
    case OP_STATUS: {
        *key = rbuf_u64(r);
        uint8_t status = rbuf_u8(r);
        uint8_t has_run = rbuf_u8(r);
        if (has_run)
            rbuf_bytes(r, 4 + 4 + 8 + 8 + 8);
        if (!rbuf_ok(r) || status >= TASK_STATUS_COUNT || has_run > 1) {
            *reason = "malformed replicated status";
            return -EBADMSG;
        }
        return 0;
    }
    case OP_REMOVE:
        *key = rbuf_u64(r);
        if (!rbuf_ok(r)) {
            *reason = "malformed replicated removal";
            return -EBADMSG;
        }
        return 0;
    default:
        *reason = "unknown replicated operation";
        return -EBADMSG;
    }
}

int kvs__handle_replicate(struct kvs *kvs, uint32_t from, struct rbuf *r, const char **reason)
{
    if (from >= kvs->nodes) {
        *reason = "replicated write from outside the membership";
        return -EBADMSG;
    }
    if (!r->left) {
        *reason = "replicated batch without a write";
        return -EBADMSG;
    }
    /* Each write is checked, kept or applied and counted in turn: a bad one ends the
     * message there, and the writes before it stay as applied (the link is dropped). */
    while (r->left) {
        const struct rbuf start = *r;
        uint64_t key;
        int rc = check_replicate(r, &key, reason);
        if (rc < 0)
            return rc;
        if (!kvs__backlog_keep(kvs, from, key, start.p, start.left - r->left)) {
            struct rbuf again = start;
            again.left -= r->left;
            rc = kvs__apply_replicate(kvs, &again, reason);
            if (rc < 0)
                return rc;
        }
        kvs->received[from]++;
        kvs->ack_due = 1;
    }
    return 0;
}

int kvs__apply_replicate(struct kvs *kvs, struct rbuf *r, const char **reason)
{
    uint8_t op = rbuf_u8(r);
    switch (op) {
    case OP_PUT: {
        struct tmd t;
        if (tmd_get(r, &t) < 0) {
            *reason = "malformed task metadata in replicated record";
            return -EBADMSG;
        }
        shard_put(&kvs->shard, &t);
        break;
    }
    case OP_INSERT: {
        int64_t now = rbuf_i64(r);
        struct tmd t;
        if (tmd_get(r, &t) < 0) {
            *reason = "malformed task metadata in replicated insert";
            return -EBADMSG;
        }
        shard_new_record(&t, now);
        shard_put(&kvs->shard, &t);
        break;
    }
    case OP_APPEND: {
        uint64_t key = rbuf_u64(r);
        uint8_t field = rbuf_u8(r);
        uint32_t node = rbuf_u32(r);
        uint64_t value = rbuf_u64(r);
        uint64_t object = rbuf_u64(r);
        int64_t now = rbuf_i64(r);
        uint8_t plain = field & (uint8_t)~KVS_FIELD_REPLAY;
        if (!rbuf_ok(r) || plain >= KVS_FIELD_COUNT || plain == KVS_FIELD_STATUS) {
            *reason = "malformed replicated append";
            return -EBADMSG;
        }
        /* The primary carries out the effects; a backup's are dropped. */
        shard_append(&kvs->shard, key, field, node, value, object, now, &kvs->backup_fx);
        kvs->backup_fx.len = 0;
        break;
    }
    case OP_STATUS: {
        uint64_t key = rbuf_u64(r);
        uint8_t status = rbuf_u8(r);
        uint8_t has_run = rbuf_u8(r);
        struct tmd_run run = {0};
        if (has_run) {
            run.node = rbuf_u32(r);
            run.attempt = rbuf_u32(r);
            run.t_start = rbuf_i64(r);
            run.t_end = rbuf_i64(r);
            run.data_size = rbuf_u64(r);
        }
        if (!rbuf_ok(r) || status >= TASK_STATUS_COUNT || has_run > 1) {
            *reason = "malformed replicated status";
            return -EBADMSG;
        }
        shard_set_status(&kvs->shard, key, status, has_run ? &run : NULL);
        /* A backup answers nobody: a record of a forgotten job goes once its status is
         * final here, as the primary's goes once it answered. */
        shard_settle(&kvs->shard, key);
        break;
    }
    case OP_REMOVE: {
        uint64_t key = rbuf_u64(r);
        if (!rbuf_ok(r)) {
            *reason = "malformed replicated removal";
            return -EBADMSG;
        }
        shard_remove(&kvs->shard, key);
        break;
    }
    default:
        *reason = "unknown replicated operation";
        return -EBADMSG;
    }
    return 0;
}

int kvs__handle_ack(struct kvs *kvs, uint32_t from, struct rbuf *r, const char **reason)
{
    uint64_t count = rbuf_u64(r);
    if (!rbuf_ok(r) || from >= kvs->nodes || count > kvs->sent[from]) {
        *reason = "acknowledgement of replicated writes never sent";
        return -EBADMSG;
    }
    if (count > kvs->acked[from])
        kvs->acked[from] = count;
    kvs__release(kvs);
    return 0;
}
