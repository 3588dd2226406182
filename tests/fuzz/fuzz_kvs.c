/*
 * fuzz_kvs — libFuzzer harness for the metadata store's message handler (kvs_handle,
 * core/kvs/kvs.c) on a store with a fake transport, as tests/unit/test_kvs.c drives
 * it: every MSG_KVS_* type from any sender, mixed with the store's own API calls (an
 * insert, a lookup or a compare-and-swap that leaves a request waiting for its reply,
 * an append, a remove), so that replies find requests to answer and appends find
 * records to change.  Input layout: fuzz.h (fuzz_kvs_op).  Built by `make fuzz`, replayed by
 * `make fuzz-replay` (README.md).
 *
 * Besides memory safety and leaks (kvs_destroy must free everything the messages
 * made), it checks that the store keeps its promises to its peers whatever it is sent:
 * a refused message comes with a reason; it sends only to members other than itself,
 * and only payloads its peers' decoders accept; notices name a known event; and at
 * the end it still serves: a fresh record it owns becomes ready when its parent ends,
 * and tells its holder so (or, for a client's store, an insert still leaves for the
 * key's owner).
 *
 * Replication (issue 15): the setup byte also picks R, and ops declare members dead,
 * resubmit the orphans, flush acknowledgements, wait on barriers, forget jobs and pack
 * the backups' cold copies (kvs_compact).  What the store forwards to its backups
 * (MSG_KVS_REPLICATE) is fed, in order, to a real store playing each backup, which must
 * accept it: a backup that refused what a correct primary sends would drop the link.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/kvs/kvs.h"
#include "core/model/task.h"
#include "core/net/proto.h"
#include "tests/fuzz/fuzz.h"

struct world {
    uint32_t self, nodes;
    struct kvs *kvs;
    struct wbuf scratch;
    uint16_t scratch_type;
    uint32_t scratch_to;
    bool open;                  /* a message is between msg_begin and msg_end */
    uint64_t sent, notices, replies;
    int last_status;            /* of the last reply */
    uint64_t last_notice_key;
    uint8_t last_notice_event;
    uint64_t last_insert_key;
    uint32_t replicas;
    bool down[8];               /* declared dead through FUZZ_KVS_DOWN */
    struct kvs *peer[8];        /* the backups' stores, fed what this one forwards */
    uint64_t barriers;          /* barrier callbacks run */
    uint8_t pick;               /* where the next orphan goes */
};

#define MAX_NODES 8

/* The backups' stores send nowhere: their answers are not what is checked here. */
static struct wbuf peer_sink;
static struct wbuf *p_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    (void)ctx, (void)node, (void)type;
    wbuf_reset(&peer_sink);
    *at = 0;
    return &peer_sink;
}
static void p_end(void *ctx, uint32_t node, size_t at) { (void)ctx, (void)node, (void)at; }
static void p_notify(void *ctx, const struct kvs_notice *n) { (void)ctx, (void)n; }

/* Reads every byte of a record the store handed out, so that the sanitizers see it. */
static uint64_t touch_tmd(const struct tmd *t)
{
    uint64_t sum = t->key;
    for (uint32_t i = 0; i < t->num_children; i++)
        sum += tmd_child(t, i);
    for (uint32_t i = 0; i < tmd_parents_done(t); i++)
        sum += tmd_late(t)->parent_list[i].object + tmd_late(t)->parent_list[i].node;
    for (uint32_t i = 0; i < tmd_late(t)->num_history; i++)
        sum += tmd_late(t)->history[i];
    return sum;
}

/* What the store sends must be what its peers' kvs_handle reads. */
static void check_outgoing(struct world *w, uint16_t type, const struct wbuf *b)
{
    struct rbuf r;
    rbuf_init(&r, b->data, b->len);
    struct tmd t;
    switch (type) {
    case MSG_KVS_INSERT:
        check(tmd_get(&r, &t) == 0 && r.left == 0);
        w->last_insert_key = t.key;
        tmd_fini(&t);
        break;
    case MSG_KVS_LOOKUP_REPLY:
    case MSG_KVS_CAS_REPLY: {
        check(rbuf_u32(&r) != 0); /* req 0 asks for no reply */
        int32_t status = (int32_t)rbuf_u32(&r);
        check(rbuf_ok(&r));
        if (status >= 0) {
            check(tmd_get(&r, &t) == 0);
            tmd_fini(&t);
        }
        check(r.left == 0);
        break;
    }
    case MSG_KVS_NOTIFY: {
        rbuf_u64(&r);
        check(rbuf_u8(&r) <= KVS_EVENT_CANCEL);
        rbuf_u64(&r);
        rbuf_i64(&r);
        uint32_t n = rbuf_u32(&r);
        check(rbuf_ok(&r) && r.left == (size_t)n * 20);
        break;
    }
    case MSG_KVS_LOOKUP:
        check(r.left == 12);
        break;
    case MSG_KVS_REMOVE:
        check(r.left == 8);
        break;
    case MSG_KVS_APPEND:
        check(r.left == 29);
        break;
    case MSG_KVS_CAS: {
        rbuf_u32(&r);
        rbuf_u64(&r);
        check(rbuf_u8(&r) == KVS_FIELD_STATUS);
        rbuf_u64(&r);
        rbuf_u64(&r);
        uint8_t has_run = rbuf_u8(&r);
        check(rbuf_ok(&r) && r.left == (has_run ? 28u : 0u));
        break;
    }
    case MSG_KVS_REPLICATE: {
        check(w->replicas > 1 && w->self != KVS_NO_SHARD);
        struct kvs *peer = w->peer[w->scratch_to];
        check(peer != NULL);
        const char *reason = NULL;
        int rc = kvs_handle(peer, w->self, type, &r, &reason);
        if (rc != 0)
            fprintf(stderr, "backup refused a forwarded write: %s\n", reason ? reason : "?");
        check(rc == 0);
        break;
    }
    case MSG_KVS_REPLICA_ACK:
        check(r.left == 8);
        break;
    case MSG_KVS_FORGET:
        check(r.left == 4);
        break;
    default:
        abort();
    }
}

static struct wbuf *t_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    struct world *w = ctx;
    check(!w->open);
    check(node < w->nodes && node != w->self);
    w->open = true;
    w->scratch_type = type;
    w->scratch_to = node;
    wbuf_reset(&w->scratch);
    *at = 0;
    return &w->scratch;
}

static void t_end(void *ctx, uint32_t node, size_t at)
{
    struct world *w = ctx;
    check(w->open && node == w->scratch_to && at == 0);
    w->open = false;
    check_outgoing(w, w->scratch_type, &w->scratch);
    w->sent++;
}

static void t_notify(void *ctx, const struct kvs_notice *n)
{
    struct world *w = ctx;
    check(w->self != KVS_NO_SHARD);
    check(n->event == KVS_EVENT_READY || n->event == KVS_EVENT_CANCEL);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n->nparents; i++)
        sum += n->parents[i].object + n->parents[i].bytes + n->parents[i].node;
    (void)sum;
    w->notices++;
    w->last_notice_key = n->key;
    w->last_notice_event = n->event;
}

static void on_reply(void *arg, int status, const struct tmd *t)
{
    struct world *w = arg;
    w->replies++;
    w->last_status = status;
    check(t == NULL || status >= 0);
    if (t)
        (void)touch_tmd(t);
}

static uint64_t get_u64(const uint8_t *p, size_t len, size_t at)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8 && at + i < len; i++)
        v |= (uint64_t)p[at + i] << (8 * i);
    return v;
}

static uint8_t get_u8(const uint8_t *p, size_t len, size_t at)
{
    return at < len ? p[at] : 0;
}

/* Members other than this node, then a client (KVS_NO_SHARD), as node.c passes them. */
static uint32_t sender(const struct world *w, uint8_t pick)
{
    uint32_t choices = w->nodes + 1 - (w->self < w->nodes);
    uint32_t i = pick % choices;
    if (w->self < w->nodes && i >= w->self)
        i++;
    return i < w->nodes ? i : KVS_NO_SHARD;
}

/* A member dies in this store's view and in every backup's. */
static void declare_down(struct world *w, uint32_t node)
{
    if (node == w->self)
        return;
    check(kvs_set_down(w->kvs, node) == 0);
    w->down[node] = true;
    if (w->peer[node]) {
        kvs_destroy(w->peer[node]);
        w->peer[node] = NULL;
    }
    for (uint32_t i = 0; i < w->nodes; i++)
        if (w->peer[i] && i != node)
            check(kvs_set_down(w->peer[i], node) == 0);
}

static void resubmit_orphan(void *arg, const struct tmd *rec)
{
    struct world *w = arg;
    uint32_t live = 0, to = 0;
    for (uint32_t i = 0; i < w->nodes; i++)
        live += !w->down[i];
    check(live > 0); /* this store's own node lists them, and it is alive */
    uint32_t k = w->pick++ % live;
    for (uint32_t i = 0; i < w->nodes; i++)
        if (!w->down[i] && k-- == 0) {
            to = i;
            break;
        }
    int rc = kvs_resubmit(w->kvs, rec->key, tmd_late(rec)->attempt, to);
    check(rc == 0 || rc == 1);
}

static void on_barrier(void *arg)
{
    ((struct world *)arg)->barriers++;
}

static void run_record(struct world *w, uint8_t op, uint8_t from_pick, const uint8_t *p,
                       size_t len)
{
    switch ((enum fuzz_kvs_op)(op % FUZZ_KVS_OPS)) {
    case FUZZ_KVS_MSG: {
        if (len < 1)
            return;
        uint16_t type = (uint16_t)(PROTO_RANGE_FIRST(PROTO_RANGE_KVS) + p[0] % 12);
        struct rbuf r;
        rbuf_init(&r, p + 1, len - 1);
        const char *reason = NULL;
        int rc = kvs_handle(w->kvs, sender(w, from_pick), type, &r, &reason);
        check(rc == 0 || (rc == -EBADMSG && reason != NULL && reason[0] != '\0'));
        return;
    }
    case FUZZ_KVS_INSERT: {
        struct rbuf r;
        rbuf_init(&r, p, len);
        struct tmd t;
        if (tmd_get(&r, &t) < 0)
            return;
        if (kvs_insert(w->kvs, &t) < 0)
            tmd_fini(&t);
        return;
    }
    case FUZZ_KVS_LOOKUP:
        {
            int rc = kvs_lookup(w->kvs, get_u64(p, len, 0), on_reply, w);
            check(rc == 0 || rc == -EHOSTDOWN);
        }
        return;
    case FUZZ_KVS_CAS: {
        uint8_t flags = get_u8(p, len, 10);
        struct tmd_run run = {.node = from_pick % w->nodes, .t_start = 1, .t_end = 2,
                              .data_size = get_u8(p, len, 11)};
        int rc = kvs_cas(w->kvs, get_u64(p, len, 0), KVS_FIELD_STATUS, get_u8(p, len, 8),
                         get_u8(p, len, 9) % (TASK_STATUS_COUNT + 1), flags & 1 ? &run : NULL,
                         flags & 2 ? on_reply : NULL, w);
        check(rc == 0 || rc == -EINVAL || rc == -EHOSTDOWN);
        return;
    }
    case FUZZ_KVS_APPEND: {
        /* The API's callers name members only. */
        uint32_t node = (uint32_t)get_u64(p, len, 10) % w->nodes;
        uint8_t field = get_u8(p, len, 8) % (KVS_FIELD_COUNT + 1);
        int rc = kvs_append(w->kvs, get_u64(p, len, 0), field, node, get_u64(p, len, 14),
                            get_u64(p, len, 22));
        /* A resubmission applied here, on its record's primary, says so. */
        check(rc == 0 || (rc == 1 && field == KVS_FIELD_RESUBMIT) || rc == -EINVAL ||
              rc == -ENOENT || rc == -EHOSTDOWN);
        return;
    }
    case FUZZ_KVS_REMOVE: {
        int rc = kvs_remove(w->kvs, get_u64(p, len, 0));
        check(rc == 0 || rc == -ENOENT || rc == -EHOSTDOWN);
        return;
    }
    case FUZZ_KVS_DOWN:
        declare_down(w, get_u8(p, len, 0) % w->nodes);
        return;
    case FUZZ_KVS_ORPHANS:
        if (w->self == KVS_NO_SHARD)
            return;
        w->pick = get_u8(p, len, 0);
        check(kvs_orphans(w->kvs, KVS_NO_SHARD, resubmit_orphan, w) >= 0);
        return;
    case FUZZ_KVS_FLUSH:
        kvs_flush(w->kvs);
        return;
    case FUZZ_KVS_BARRIER:
        if (w->self != KVS_NO_SHARD)
            kvs_barrier(w->kvs, on_barrier, w);
        return;
    case FUZZ_KVS_FORGET:
        kvs_forget_job(w->kvs, (uint32_t)get_u64(p, len, 0));
        return;
    case FUZZ_KVS_COMPACT: {
        /* Packed copies must build as the raw ones would: the backups' stores are
         * checked through what they answer later, and freed whole at the end. */
        bool more;
        uint8_t how = get_u8(p, len, 0);
        kvs_compact(w->kvs, SIZE_MAX, &more);
        for (uint32_t i = 0; i < MAX_NODES; i++) {
            if (!w->peer[i])
                continue;
            size_t held = kvs_records_held(w->peer[i]);
            kvs_compact(w->peer[i], (size_t)(how >> 1) << 12, &more);
            check(kvs_records_held(w->peer[i]) == held);
            /* An odd byte builds the copies at once, packed or not, as a take-over
             * would: nothing is lost (a whole record may replace another of its key). */
            if (how & 1)
                check(kvs_local_records(w->peer[i]) <= held);
        }
        return;
    }
    default:
        return;
    }
}

/* The store still works after whatever it was sent. */
static void check_still_serving(struct world *w)
{
    if (w->self == KVS_NO_SHARD) {
        struct tmd t = {.key = task_key(7, 7), .num_parents = 1, .num_wait_parent = 1};
        uint64_t sent = w->sent;
        uint32_t live = 0;
        for (uint32_t i = 0; i < w->nodes; i++)
            live += !w->down[i];
        if (!live) {
            check(kvs_insert(w->kvs, &t) == -EHOSTDOWN);
            return;
        }
        check(kvs_insert(w->kvs, &t) == 0);
        check(w->sent == sent + 1 && w->last_insert_key == task_key(7, 7));
        return;
    }
    /* Alone, this store is every key's primary and no write waits for a backup. */
    for (uint32_t i = 0; i < w->nodes; i++)
        if (!w->down[i])
            declare_down(w, i);
    /* A key this node owns and holds no record for (a local lookup answers at once). */
    uint64_t key = 0;
    for (uint32_t i = 0; i < 100000 && !key; i++) {
        uint64_t k = task_key(0xfffffff0u, i);
        if (kvs_primary(w->kvs, k) != w->self)
            continue;
        uint64_t replies = w->replies;
        check(kvs_lookup(w->kvs, k, on_reply, w) == 0);
        check(w->replies == replies + 1);
        if (w->last_status == -ENOENT)
            key = k;
    }
    check(key != 0);
    size_t records = kvs_local_records(w->kvs);
    struct tmd t = {.key = key, .num_parents = 1, .num_wait_parent = 1, .holder = w->self};
    check(kvs_insert(w->kvs, &t) == 0);
    check(kvs_local_records(w->kvs) == records + 1);
    uint64_t notices = w->notices;
    check(kvs_append(w->kvs, key, KVS_FIELD_PARENT, w->self, 10, 99) == 0);
    check(w->notices == notices + 1 && w->last_notice_key == key &&
          w->last_notice_event == KVS_EVENT_READY);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    fuzz_logs();
    struct world w;
    memset(&w, 0, sizeof w);
    w.nodes = 1 + data[1] % 8;
    w.self = data[0] % (w.nodes + 1);
    if (w.self == w.nodes)
        w.self = KVS_NO_SHARD;
    wbuf_init(&w.scratch);
    struct kvs_transport t = {.ctx = &w, .msg_begin = t_begin, .msg_end = t_end,
                              .notify = t_notify};
    w.kvs = kvs_create(w.self, w.nodes, &t);
    w.replicas = 1 + (uint32_t)(data[1] / 8) % 3;
    check(kvs_set_replicas(w.kvs, w.replicas) == 0);
    struct kvs_transport pt = {.ctx = &w, .msg_begin = p_begin, .msg_end = p_end,
                               .notify = p_notify};
    if (w.self != KVS_NO_SHARD && w.replicas > 1) {
        for (uint32_t i = 0; i < w.nodes; i++) {
            if (i == w.self)
                continue;
            w.peer[i] = kvs_create(i, w.nodes, &pt);
            check(kvs_set_replicas(w.peer[i], w.replicas) == 0);
        }
    }
    size_t off = 2;
    while (off + FUZZ_RECORD_HEADER <= size) {
        const uint8_t *h = data + off;
        size_t len = (size_t)h[2] | (size_t)h[3] << 8;
        off += FUZZ_RECORD_HEADER;
        if (len > size - off)
            len = size - off;
        run_record(&w, h[0], h[1], data + off, len);
        check(!w.open);
        off += len;
    }
    check_still_serving(&w);
    kvs_destroy(w.kvs);
    for (uint32_t i = 0; i < MAX_NODES; i++)
        kvs_destroy(w.peer[i]);
    wbuf_fini(&w.scratch);
    return 0;
}
