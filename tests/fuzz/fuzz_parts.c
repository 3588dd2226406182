/*
 * fuzz_parts — libFuzzer harness for the runtime parts' message handlers
 * (core/runtime/part.h): every part of the table (parts.c) added, in table order, to
 * a fake node (tests/unit/fake_node.c, never node.c) whose policy, size and data-plane
 * settings the first input bytes choose; then records (fuzz.h, fuzz_parts_op) that
 * deliver (type, from, payload) to the part owning the type — a steal grant through
 * the node's own path (node_take_granted, then every part's `granted`) — step the node,
 * move its clock, fire one of its timers, make a task ready, stage a task's inputs,
 * change its load, wake it, or answer one of the requests it sent the way a peer would
 * (a load reply with the attempt's id, a grant for the request, a fetch reply with the
 * object's bytes and checksum), so that hostile bytes meet the parts in the states a
 * cluster puts them in, not only idle.  Timers fire when the input says, never by the
 * wall clock: libFuzzer must be able to replay a crash.  Built by `make fuzz`, replayed
 * by `make fuzz-replay` (README.md).
 *
 * Besides memory safety and leaks (tasks and fetches left anywhere are freed by the
 * node's and the parts' close), it checks that a handler answers 0 or a negative errno
 * and that the parts send only to members other than this node, and at the end that
 * the node still answers a load query.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/preset.h"
#include "core/runtime/data.h"
#include "core/runtime/objstore.h"
#include "core/runtime/parts.h"
#include "tests/fuzz/fuzz.h"
#include "tests/unit/fake_node.h"

/* Data objects are task_key(FUZZ_PARTS_OBJECT_JOB, i) for i < NOBJECTS, each of a size of
 * its own (empty, one byte, within a chunk, several chunks), some held here from the
 * start. */
#define NOBJECTS 8u
static const uint64_t object_bytes[NOBJECTS] = {0, 1, 3000, 70000, 120000, 262244, 17, 5};
static const bool object_here[NOBJECTS] = {true, false, true, false, false, false, true, false};
/* Captured messages kept for REPLY before they are dropped. */
#define KEEP_MSGS 128u
#define MAX_TYPES 32u

static const char *const presets[] = {"daws", "a2ws", "parsec", "random1",
                                      "none", "daws+a2ws", "lw", "ctws"};

struct run {
    struct node *n;
    struct data_plane *data;
    uint16_t types[MAX_TYPES];  /* what a peer may send: the parts' types and grants */
    uint32_t ntypes;
    uint32_t next_index;        /* task indexes: keys stay unique, as a job's do */
    size_t staged_seen;         /* n->staged_tasks already taken back */
    size_t msgs_checked;        /* n->msgs already checked */
};

static char workdir[64];

static uint8_t u8_at(const uint8_t *p, size_t len, size_t at)
{
    return at < len ? p[at] : 0;
}

/* A member other than this node; UINT32_MAX when there is none. */
static uint32_t sender(const struct node *n, uint8_t pick)
{
    if (n->nodes < 2)
        return UINT32_MAX;
    uint32_t i = pick % (n->nodes - 1);
    return i >= n->self ? i + 1 : i;
}

static uint64_t object_key(uint32_t i)
{
    return task_key(FUZZ_PARTS_OBJECT_JOB, i);
}

static int object_index(uint64_t key)
{
    for (uint32_t i = 0; i < NOBJECTS; i++)
        if (object_key(i) == key)
            return (int)i;
    return -1;
}

/* ---- setup -------------------------------------------------------------------------- */

static void remove_workdir(void)
{
    rmdir(workdir);
}

/* One directory for the process, in memory when the system has /dev/shm: every input
 * creates and removes its node's object store there. */
static void ensure_workdir(void)
{
    if (workdir[0])
        return;
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    snprintf(workdir, sizeof workdir, "%s/jackdaw-fuzz-parts-XXXXXX", base);
    check(mkdtemp(workdir) != NULL);
    atexit(remove_workdir);
}

static struct node *make_node(const uint8_t *setup)
{
    uint32_t nodes = 1 + setup[1] % 8;
    struct node *n = fake_node_new(setup[2] % nodes, nodes, 1 + setup[3] % 4, workdir);
    check(preset_apply(presets[setup[0] % 8], &n->cfg.steal, &n->cfg.placement) == 0);
    uint8_t flags = setup[3] >> 2;
    if (flags & 1)
        n->cfg.placement.policy = (enum placement_policy)(setup[0] >> 3) % 6;
    n->cfg.steal.wait_guard = flags & 2;
    n->cfg.store_mem_bytes = flags & 4 ? 0 : (4u << 20); /* 0: every copy in a file */
    n->cfg.cache = flags & 8;
    n->cfg.cache_bytes = 1u << 20;
    if (flags & 16)
        n->cfg.bandwidth_Bps = 1e6;
    if (flags & 32)
        n->cfg.latency_ns = 2000000;
    n->cfg.steal_timeout_ms = 5;
    if (steal_keeps_vector(&n->cfg.steal, nodes))
        fake_node_info_on(n, n->cfg.steal.radius);
    return n;
}

static void add_parts(struct run *r)
{
    for (size_t i = 0; i < node_nparts; i++) {
        void *state = fake_node_add(r->n, node_parts[i]);
        if (node_parts[i] == &part_data)
            r->data = state;
        for (const uint16_t *t = node_parts[i]->types; t && *t; t++) {
            check(r->ntypes < MAX_TYPES);
            r->types[r->ntypes++] = *t;
        }
    }
    check(r->data != NULL);
    r->types[r->ntypes++] = MSG_STEAL_GRANT;
    struct objstore *store = data_store(r->data);
    for (uint32_t i = 0; i < NOBJECTS; i++)
        if (object_here[i])
            check(objstore_put_generated(store, object_key(i), object_bytes[i], NULL) == 0);
}

/* ---- what the node does around its parts ------------------------------------------- */

/* node.c's steal grant: its tasks into SReadyQ, then every part hears of it. */
static int take_grant(struct run *r, uint32_t from, struct rbuf *b)
{
    struct node *n = r->n;
    uint32_t req, count;
    int rc = node_take_granted(n, from, b, NODE_SREADY, &req, &count, node_wall_ns(n));
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->granted)
            n->parts[i]->granted(n->state[i], from, req, count);
    return 0;
}

static int deliver(struct run *r, uint32_t from, uint16_t type, const void *payload, size_t len)
{
    struct node *n = r->n;
    /* Any message is a sign of life (node.c notes it before dispatching). */
    n->heard_ms[from] = node_now_ms(n);
    int rc;
    if (type == MSG_STEAL_GRANT) {
        struct rbuf b;
        rbuf_init(&b, payload, len);
        rc = take_grant(r, from, &b);
    } else {
        rc = fake_node_deliver(n, from, type, payload, len);
        check(rc != -ENOENT);
    }
    check(rc <= 0);
    return rc;
}

/* node.c's make_ready: the parts place it, else it runs here. */
static void make_ready(struct node *n, struct ntask *t)
{
    for (size_t i = 0; i < n->nparts; i++)
        if (n->parts[i]->place && n->parts[i]->place(n->state[i], t))
            return;
    node_queue(n, NODE_LREADY, t, t->spec.input_bytes);
}

/* A task of job 1 from the record: [flags][inputs][objects x3][holders x3][ms]. */
static struct ntask *make_task(struct run *r, const uint8_t *p, size_t len)
{
    struct node *n = r->n;
    struct ntask *t = xcalloc(1, sizeof *t);
    uint8_t flags = u8_at(p, len, 0);
    t->spec.key = task_key(1, r->next_index++);
    t->spec.kind = flags & 2 ? TASK_SLEEP : TASK_NOOP;
    t->spec.duration_s = u8_at(p, len, 8) / 1000.0;
    t->spec.flags = flags & 1 ? TASK_FLAG_STEALABLE : 0;
    uint32_t k = u8_at(p, len, 1) % 4;
    if (k) {
        t->spec.inputs = xcalloc(k, sizeof *t->spec.inputs);
        t->spec.num_inputs = k;
    }
    for (uint32_t i = 0; i < k; i++) {
        uint32_t obj = u8_at(p, len, 2 + i) % NOBJECTS;
        t->spec.inputs[i] = (struct task_input){.object = object_key(obj),
                                                .bytes = object_bytes[obj],
                                                .node = u8_at(p, len, 5 + i) % (n->nodes + 1)};
        t->spec.input_bytes += object_bytes[obj];
    }
    t->t_ready = node_wall_ns(n);
    return t;
}

/* Tasks whose staging ended are the node's again: it would run or fail them. */
static void take_back_staged(struct run *r)
{
    struct node *n = r->n;
    for (; r->staged_seen < n->nstaged_tasks; r->staged_seen++) {
        struct ntask *t = n->staged_tasks[r->staged_seen];
        data_release(r->data, t);
        ntask_free(t);
    }
}

static void stage(struct run *r, struct ntask *t)
{
    int rc = data_stage(r->data, t);
    if (rc == 0)
        return; /* fetching: node_staged hands it back */
    check(rc == 1 || rc < 0);
    data_release(r->data, t);
    ntask_free(t);
}

/* Fires the pick-th active timer as libuv's uv__run_timers would, whatever the time. */
struct timers {
    uv_timer_t *v[32];
    uint32_t n;
    uv_timer_t *guard;
};

static void collect_timer(uv_handle_t *h, void *arg)
{
    struct timers *ts = arg;
    if (h->type == UV_TIMER && uv_is_active(h) && (uv_timer_t *)h != ts->guard && ts->n < 32)
        ts->v[ts->n++] = (uv_timer_t *)h;
}

static void fire_timer(struct node *n, uint8_t pick)
{
    struct timers ts = {.guard = &n->guard};
    uv_walk(&n->loop, collect_timer, &ts);
    if (!ts.n)
        return;
    uv_timer_t *t = ts.v[pick % ts.n];
    /* libuv keeps the callback in the handle (its unix.h fields); a test may read it. */
    uv_timer_cb cb = t->timer_cb;
    uint64_t repeat = uv_timer_get_repeat(t);
    uv_timer_stop(t);
    if (repeat)
        uv_timer_start(t, cb, repeat, repeat);
    cb(t);
}

/* ---- answering the node's requests as its peers would -------------------------------- */

static void put_tasks(struct run *r, struct wbuf *b, uint32_t count, uint8_t flags)
{
    for (uint32_t i = 0; i < count; i++) {
        struct task_spec s = {.key = task_key(3, r->next_index++), .kind = TASK_NOOP,
                              .flags = flags & 1 ? TASK_FLAG_STEALABLE : 0};
        proto_put_task(b, &s);
    }
}

/* The whole object's CRC-32, big-endian, as objstore_hash gives it; computed once. */
static const uint8_t *object_hash(int i)
{
    static uint8_t hashes[NOBJECTS][OBJSTORE_HASH_BYTES];
    static bool done[NOBJECTS];
    if (!done[i]) {
        uint64_t key = object_key((uint32_t)i);
        uLong crc = crc32_z(0L, Z_NULL, 0);
        uint8_t chunk[4096];
        for (uint64_t at = 0; at < object_bytes[i]; at += sizeof chunk) {
            size_t n = object_bytes[i] - at < sizeof chunk ? (size_t)(object_bytes[i] - at)
                                                           : sizeof chunk;
            objstore_synthetic_fill(key, at, chunk, n);
            crc = crc32_z(crc, chunk, n);
        }
        for (unsigned k = 0; k < OBJSTORE_HASH_BYTES; k++)
            hashes[i][k] = (uint8_t)(crc >> (8 * (OBJSTORE_HASH_BYTES - 1 - k)));
        done[i] = true;
    }
    return hashes[i];
}

static void put_fetch_reply(struct wbuf *b, uint32_t req, uint64_t key, uint64_t offset,
                            uint32_t want, uint8_t spoil)
{
    int i = object_index(key);
    uint64_t total = i >= 0 ? object_bytes[i] : 0;
    if (i < 0 || offset > total || (spoil & 2)) {
        wbuf_put_u32(b, req);
        wbuf_put_u32(b, (uint32_t)-ENOENT);
        wbuf_put_u64(b, 0);
        wbuf_put_u64(b, offset);
        wbuf_put_u32(b, 0);
        return;
    }
    uint32_t len = total - offset < want ? (uint32_t)(total - offset) : want;
    wbuf_put_u32(b, req);
    wbuf_put_u32(b, 0);
    wbuf_put_u64(b, total);
    wbuf_put_u64(b, offset);
    wbuf_put_u32(b, len);
    if (offset + len == total) {
        uint8_t hash[OBJSTORE_HASH_BYTES];
        memcpy(hash, object_hash(i), sizeof hash);
        if (spoil & 1)
            hash[0] ^= 1;
        wbuf_put(b, hash, sizeof hash);
    }
    objstore_synthetic_fill(key, offset, wbuf_reserve(b, len), len);
    b->len += len;
}

/* Answers captured message `pick` the way its peer would; other messages come back as
 * they left, as if their peer had sent them. */
static void reply(struct run *r, const uint8_t *p, size_t len)
{
    struct node *n = r->n;
    if (!n->nmsgs)
        return;
    struct fake_msg *m = &n->msgs[u8_at(p, len, 0) % n->nmsgs];
    if (proto_range_of(m->type) != PROTO_RANGE_SCHED)
        return;
    uint32_t peer = m->peer;
    uint16_t type = m->type;
    struct rbuf q;
    rbuf_init(&q, m->body.data, m->body.len);
    struct wbuf b;
    wbuf_init(&b);
    uint8_t a = u8_at(p, len, 1), c = u8_at(p, len, 2);
    switch (type) {
    case MSG_LOAD_QUERY:
        wbuf_put_u32(&b, rbuf_u32(&q));
        wbuf_put_u32(&b, a);
        wbuf_put_u32(&b, c);
        wbuf_put_u32(&b, 0);
        wbuf_put_u32(&b, 4);
        type = MSG_LOAD_REPLY;
        break;
    case MSG_STEAL_REQUEST:
    case MSG_LW_REQUEST:
        wbuf_put_u32(&b, rbuf_u32(&q));
        wbuf_put_u32(&b, a % 4);
        put_tasks(r, &b, a % 4, c);
        type = type == MSG_STEAL_REQUEST ? MSG_STEAL_GRANT : MSG_LW_GRANT;
        break;
    case MSG_FETCH_REQ: {
        uint32_t req = rbuf_u32(&q);
        uint64_t key = rbuf_u64(&q);
        uint64_t offset = rbuf_u64(&q);
        uint32_t want = rbuf_u32(&q);
        put_fetch_reply(&b, req, key, offset, want, a);
        type = MSG_FETCH_REP;
        break;
    }
    default:
        wbuf_put(&b, m->body.data, m->body.len);
        break;
    }
    /* Delivering may capture messages and move n->msgs: m is not used past here. */
    deliver(r, peer, type, b.data, b.len);
    wbuf_fini(&b);
}

/* ---- the records ---------------------------------------------------------------------- */

static bool owned(const struct run *r, uint16_t type)
{
    for (uint32_t i = 0; i < r->ntypes; i++)
        if (r->types[i] == type)
            return true;
    return false;
}

static void run_record(struct run *r, uint8_t op, uint8_t from_pick, const uint8_t *p, size_t len)
{
    struct node *n = r->n;
    switch ((enum fuzz_parts_op)(op % FUZZ_PARTS_OPS)) {
    case FUZZ_PARTS_MSG: {
        uint32_t from = sender(n, from_pick);
        if (from == UINT32_MAX || len < 1)
            return;
        uint16_t type = (uint16_t)(PROTO_RANGE_FIRST(PROTO_RANGE_SCHED) | p[0]);
        if (!owned(r, type))
            type = r->types[p[0] % r->ntypes];
        deliver(r, from, type, p + 1, len - 1);
        return;
    }
    case FUZZ_PARTS_STEP:
        fake_node_step(n);
        return;
    case FUZZ_PARTS_CLOCK: {
        int64_t ms = (int64_t)(u8_at(p, len, 0) | u8_at(p, len, 1) << 8);
        n->mono += ms * 1000000;
        n->wall += ms * 1000000;
        return;
    }
    case FUZZ_PARTS_TIMER:
        fire_timer(n, u8_at(p, len, 0));
        return;
    case FUZZ_PARTS_READY:
        make_ready(n, make_task(r, p, len));
        return;
    case FUZZ_PARTS_LOAD: {
        uint8_t est = u8_at(p, len, 1);
        n->load.busy = u8_at(p, len, 0) % (n->cfg.slots + 1);
        n->load.est_samples = est ? 1 + est % 4 : 0;
        n->load.est_task_length_s = est / 1000.0;
        n->load.tasks_run = n->load.est_samples;
        n->load.first_start_ns = est ? n->mono : 0;
        n->load.running_successors = u8_at(p, len, 2) % 4;
        n->load.waiting = u8_at(p, len, 3) % 8;
        return;
    }
    case FUZZ_PARTS_STAGE:
        stage(r, make_task(r, p, len));
        return;
    case FUZZ_PARTS_REPLY:
        reply(r, p, len);
        return;
    case FUZZ_PARTS_WAKE:
        node_wake(n);
        return;
    default:
        return;
    }
}

/* Parts send to members other than this node, whatever they were sent. */
static void check_messages(struct run *r)
{
    struct node *n = r->n;
    for (; r->msgs_checked < n->nmsgs; r->msgs_checked++) {
        const struct fake_msg *m = &n->msgs[r->msgs_checked];
        check(m->peer < n->nodes && m->peer != n->self);
    }
    if (n->nmsgs > KEEP_MSGS) {
        fake_msgs_clear(n);
        r->msgs_checked = 0;
    }
}

/* The node still answers a load query after whatever it was sent. */
static void check_still_serving(struct run *r)
{
    struct node *n = r->n;
    uint32_t from = sender(n, 0);
    if (from == UINT32_MAX)
        return;
    fake_msgs_clear(n);
    uint8_t query[4] = {0xef, 0xcd, 0xab, 0x00};
    check(deliver(r, from, MSG_LOAD_QUERY, query, sizeof query) == 0);
    struct fake_msg *m = fake_msg(n, MSG_LOAD_REPLY, 0);
    check(m && m->peer == from && m->body.len == 20);
    struct rbuf b;
    rbuf_init(&b, m->body.data, m->body.len);
    check(rbuf_u32(&b) == 0xabcdefu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    fuzz_logs();
    ensure_workdir();
    struct run r;
    memset(&r, 0, sizeof r);
    r.n = make_node(data);
    add_parts(&r);
    size_t off = 4;
    while (off + FUZZ_RECORD_HEADER <= size) {
        const uint8_t *h = data + off;
        size_t len = (size_t)h[2] | (size_t)h[3] << 8;
        off += FUZZ_RECORD_HEADER;
        if (len > size - off)
            len = size - off;
        run_record(&r, h[0], h[1], data + off, len);
        take_back_staged(&r);
        check_messages(&r);
        off += len;
    }
    check_still_serving(&r);
    fake_node_free(r.n);
    return 0;
}
