/*
 * kvs — routing, messages and the effect worklist (see kvs.h).
 *
 * Payloads:
 *   INSERT        tmd
 *   LOOKUP        u32 req, u64 key                 -> LOOKUP_REPLY u32 req, i32 status, [tmd]
 *   REMOVE        u64 key
 *   APPEND        u64 key, u8 field, u32 node, u64 value, u64 object
 *   CAS           u32 req, u64 key, u8 field, u64 expected, u64 desired,
 *                 u8 has_run, [u32 node, i64 start, i64 end, u64 size]
 *                                                  -> CAS_REPLY u32 req, i32 status, [tmd]
 *   NOTIFY        u64 key, u8 event, u64 all_data_size, i64 t_ready,
 *                 u32 nparents, nparents x (u64 object, u64 bytes, u32 node)
 *   FORGET        u32 job                          (to every node)
 * req 0 means no reply is wanted.
 */
#include "core/kvs/kvs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/net/proto.h"

struct pending {
    kvs_reply_fn fn;
    void *arg;
};

struct kvs {
    uint32_t self, nodes;
    struct kvs_transport t;
    struct shard shard;
    struct u64map pending;  /* req -> struct pending * */
    uint32_t next_req;
    struct kvs_effects work; /* effects not yet carried out */
    int draining;
};

struct kvs *kvs_create(uint32_t self, uint32_t nodes, const struct kvs_transport *t)
{
    struct kvs *kvs = xcalloc(1, sizeof *kvs);
    kvs->self = self;
    kvs->nodes = nodes;
    kvs->t = *t;
    shard_init(&kvs->shard);
    u64map_init(&kvs->pending);
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
    free(kvs);
}

uint32_t kvs_owner(const struct kvs *kvs, uint64_t key)
{
    return task_key_owner(key, kvs->nodes);
}

size_t kvs_local_records(const struct kvs *kvs)
{
    return shard_len(&kvs->shard);
}

static int is_local(const struct kvs *kvs, uint64_t key)
{
    return kvs->self != KVS_NO_SHARD && kvs_owner(kvs, key) == kvs->self;
}

static uint32_t add_pending(struct kvs *kvs, kvs_reply_fn fn, void *arg)
{
    if (!fn)
        return 0;
    struct pending *p = xmalloc(sizeof *p);
    p->fn = fn;
    p->arg = arg;
    if (++kvs->next_req == 0)
        kvs->next_req = 1;
    u64map_put(&kvs->pending, kvs->next_req, p);
    return kvs->next_req;
}

static void notify_holder(struct kvs *kvs, uint32_t holder, uint64_t key, uint8_t event,
                          uint64_t bytes, int64_t when)
{
    /* The record is on this shard (effects come from it): its parent list says where
     * the task's inputs are. */
    const struct tmd *rec = event == KVS_EVENT_READY ? shard_get(&kvs->shard, key) : NULL;
    struct kvs_notice notice = {
        .key = key, .event = event, .all_data_size = bytes, .t_ready = when,
        .nparents = rec ? tmd_parents_done(rec) : 0, .parents = rec ? rec->parent_list : NULL,
    };
    if (holder == kvs->self) {
        kvs->t.notify(kvs->t.ctx, &notice);
        return;
    }
    if (holder >= kvs->nodes) {
        log_error("kvs: record %llx has holder %u outside the membership",
                  (unsigned long long)key, holder);
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

/* Carries out queued effects until none are left.  Re-entrant calls (a notify that
 * appends, a local append that cancels a child) only add to the list. */
static void drain(struct kvs *kvs)
{
    if (kvs->draining)
        return;
    kvs->draining = 1;
    while (kvs->work.len) {
        struct kvs_effect e = kvs->work.v[--kvs->work.len];
        switch (e.kind) {
        case KVS_EFFECT_READY:
            notify_holder(kvs, e.node, e.key, KVS_EVENT_READY, e.value, e.when);
            break;
        case KVS_EFFECT_CANCEL:
            notify_holder(kvs, e.node, e.key, KVS_EVENT_CANCEL, 0, 0);
            break;
        case KVS_EFFECT_CANCEL_CHILD:
            kvs_append(kvs, e.key, KVS_FIELD_PARENT_FAILED, kvs->self, 0, 0);
            break;
        }
    }
    kvs->draining = 0;
}

int kvs_insert(struct kvs *kvs, struct tmd *t)
{
    if (is_local(kvs, t->key)) {
        int rc = shard_insert(&kvs->shard, t, clock_wall_ns());
        if (rc < 0)
            log_warn("kvs: duplicate insert of %llx refused", (unsigned long long)t->key);
        return rc;
    }
    uint32_t owner = kvs_owner(kvs, t->key);
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, owner, MSG_KVS_INSERT, &at);
    tmd_put(b, t);
    kvs->t.msg_end(kvs->t.ctx, owner, at);
    tmd_fini(t);
    memset(t, 0, sizeof *t);
    return 0;
}

int kvs_lookup(struct kvs *kvs, uint64_t key, kvs_reply_fn fn, void *arg)
{
    if (is_local(kvs, key)) {
        struct tmd *rec = shard_get(&kvs->shard, key);
        fn(arg, rec ? 0 : -ENOENT, rec);
        return 0;
    }
    uint32_t owner = kvs_owner(kvs, key);
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, owner, MSG_KVS_LOOKUP, &at);
    wbuf_put_u32(b, add_pending(kvs, fn, arg));
    wbuf_put_u64(b, key);
    kvs->t.msg_end(kvs->t.ctx, owner, at);
    return 0;
}

int kvs_remove(struct kvs *kvs, uint64_t key)
{
    if (is_local(kvs, key))
        return shard_remove(&kvs->shard, key);
    uint32_t owner = kvs_owner(kvs, key);
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, owner, MSG_KVS_REMOVE, &at);
    wbuf_put_u64(b, key);
    kvs->t.msg_end(kvs->t.ctx, owner, at);
    return 0;
}

int kvs_append(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node, uint64_t value,
               uint64_t object)
{
    if (field >= KVS_FIELD_COUNT || field == KVS_FIELD_STATUS)
        return -EINVAL;
    if (is_local(kvs, key)) {
        int rc = shard_append(&kvs->shard, key, field, node, value, object, clock_wall_ns(),
                              &kvs->work);
        /* Removing what is gone already is not news: a repeated cancel.  Nor is a
         * late append to a record that went with its job (a parent's end reaching a
         * child cancelled by another parent's failure). */
        if (rc == -ENOENT && field != KVS_FIELD_REMOVE &&
            !shard_forgot(&kvs->shard, task_key_job(key)))
            log_warn("kvs: append to unknown record %llx", (unsigned long long)key);
        drain(kvs);
        return rc;
    }
    uint32_t owner = kvs_owner(kvs, key);
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, owner, MSG_KVS_APPEND, &at);
    wbuf_put_u64(b, key);
    wbuf_put_u8(b, field);
    wbuf_put_u32(b, node);
    wbuf_put_u64(b, value);
    wbuf_put_u64(b, object);
    kvs->t.msg_end(kvs->t.ctx, owner, at);
    return 0;
}

int kvs_cas(struct kvs *kvs, uint64_t key, uint8_t field, uint64_t expected, uint64_t desired,
            const struct tmd_run *run, kvs_reply_fn fn, void *arg)
{
    if (is_local(kvs, key)) {
        int rc = shard_cas(&kvs->shard, key, field, expected, desired, run);
        if (rc == -EINVAL)
            return rc;
        if (fn)
            fn(arg, rc, shard_get(&kvs->shard, key));
        shard_settle(&kvs->shard, key);
        return 0;
    }
    uint32_t owner = kvs_owner(kvs, key);
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, owner, MSG_KVS_CAS, &at);
    wbuf_put_u32(b, add_pending(kvs, fn, arg));
    wbuf_put_u64(b, key);
    wbuf_put_u8(b, field);
    wbuf_put_u64(b, expected);
    wbuf_put_u64(b, desired);
    wbuf_put_u8(b, run != NULL);
    if (run) {
        wbuf_put_u32(b, run->node);
        wbuf_put_i64(b, run->t_start);
        wbuf_put_i64(b, run->t_end);
        wbuf_put_u64(b, run->data_size);
    }
    kvs->t.msg_end(kvs->t.ctx, owner, at);
    return 0;
}

void kvs_forget_job(struct kvs *kvs, uint32_t job)
{
    for (uint32_t i = 0; i < kvs->nodes; i++) {
        if (i == kvs->self) {
            shard_forget_job(&kvs->shard, job);
            continue;
        }
        size_t at;
        struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, i, MSG_KVS_FORGET, &at);
        wbuf_put_u32(b, job);
        kvs->t.msg_end(kvs->t.ctx, i, at);
    }
}

static void reply(struct kvs *kvs, uint32_t to, uint16_t type, uint32_t req, int status,
                  const struct tmd *rec)
{
    if (!req || to >= kvs->nodes)
        return;
    size_t at;
    struct wbuf *b = kvs->t.msg_begin(kvs->t.ctx, to, type, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u32(b, (uint32_t)status);
    if (rec)
        tmd_put(b, rec);
    kvs->t.msg_end(kvs->t.ctx, to, at);
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

int kvs_handle(struct kvs *kvs, uint32_t from, uint16_t type, struct rbuf *r, const char **reason)
{
    int rc;
    *reason = NULL;
    if (kvs->self == KVS_NO_SHARD && type != MSG_KVS_LOOKUP_REPLY && type != MSG_KVS_CAS_REPLY) {
        *reason = "metadata request sent to a client";
        return -EBADMSG;
    }
    switch (type) {
    case MSG_KVS_INSERT: {
        struct tmd t;
        if (tmd_get(r, &t) < 0) {
            *reason = "malformed task metadata in insert";
            return -EBADMSG;
        }
        if (!is_local(kvs, t.key)) {
            tmd_fini(&t);
            *reason = "insert of a key this node does not own";
            return -EBADMSG;
        }
        if (kvs_insert(kvs, &t) < 0)
            tmd_fini(&t);
        return 0;
    }
    case MSG_KVS_LOOKUP: {
        uint32_t req = rbuf_u32(r);
        uint64_t key = rbuf_u64(r);
        if (!rbuf_ok(r))
            break;
        struct tmd *rec = is_local(kvs, key) ? shard_get(&kvs->shard, key) : NULL;
        reply(kvs, from, MSG_KVS_LOOKUP_REPLY, req, rec ? 0 : -ENOENT, rec);
        return 0;
    }
    case MSG_KVS_REMOVE: {
        uint64_t key = rbuf_u64(r);
        if (!rbuf_ok(r))
            break;
        if (is_local(kvs, key))
            shard_remove(&kvs->shard, key);
        return 0;
    }
    case MSG_KVS_APPEND: {
        uint64_t key = rbuf_u64(r);
        uint8_t field = rbuf_u8(r);
        uint32_t node = rbuf_u32(r);
        uint64_t value = rbuf_u64(r);
        uint64_t object = rbuf_u64(r);
        if (!rbuf_ok(r) || field >= KVS_FIELD_COUNT || field == KVS_FIELD_STATUS ||
            node >= kvs->nodes)
            break;
        if (!is_local(kvs, key)) {
            *reason = "append to a key this node does not own";
            return -EBADMSG;
        }
        kvs_append(kvs, key, field, node, value, object);
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
        }
        if (!rbuf_ok(r) || field != KVS_FIELD_STATUS || desired >= TASK_STATUS_COUNT)
            break;
        if (!is_local(kvs, key)) {
            *reason = "cas on a key this node does not own";
            return -EBADMSG;
        }
        rc = shard_cas(&kvs->shard, key, field, expected, desired, has_run ? &run : NULL);
        reply(kvs, from, MSG_KVS_CAS_REPLY, req, rc, rc >= 0 ? shard_get(&kvs->shard, key) : NULL);
        shard_settle(&kvs->shard, key);
        return 0;
    }
    case MSG_KVS_FORGET: {
        uint32_t job = rbuf_u32(r);
        if (!rbuf_ok(r))
            break;
        size_t dropped = shard_forget_job(&kvs->shard, job);
        log_debug("kvs: job %u forgotten: %zu records dropped; %zu records wait to be final",
                  job, dropped, kvs->shard.marked);
        return 0;
    }
    case MSG_KVS_LOOKUP_REPLY:
    case MSG_KVS_CAS_REPLY:
        return handle_reply(kvs, r, reason);
    case MSG_KVS_NOTIFY: {
        struct kvs_notice notice = {.key = rbuf_u64(r)};
        notice.event = rbuf_u8(r);
        notice.all_data_size = rbuf_u64(r);
        notice.t_ready = rbuf_i64(r);
        notice.nparents = rbuf_u32(r);
        if (!rbuf_ok(r) || notice.event > KVS_EVENT_CANCEL || notice.nparents > r->left / 20)
            break;
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
        if (rbuf_ok(r))
            kvs->t.notify(kvs->t.ctx, &notice);
        free(parents);
        if (!rbuf_ok(r))
            break;
        return 0;
    }
    default:
        *reason = "unknown metadata message type";
        return -EBADMSG;
    }
    *reason = "malformed metadata message";
    return -EBADMSG;
}
