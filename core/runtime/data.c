/*
 * data — the data plane of a node: staging a task's inputs before it runs, pulling
 * missing objects from their holders, serving other nodes' pulls, and emulating a
 * network (paper 002 §2.2.2 "data movement"; issue: pull, chunked, many in flight).
 *
 * A fetch is receiver-driven: the node that needs object X asks its holder for X in
 * chunks of FETCH_CHUNK bytes, keeping up to FETCH_WINDOW chunks in flight within the
 * node's DATA_WINDOW, which goes to the oldest fetches first, and writes what comes
 * back into the object store's receiver; the last chunk carries the source's
 * CRC-32, and the copy becomes visible only if it matches.  Tasks that need an
 * object already being fetched wait on that fetch rather than start another.
 *
 * Emulation (off unless --bandwidth/--latency): each node has an egress and an ingress
 * link.  The holder's egress bucket meters each chunk reply before it leaves; the
 * receiver's ingress bucket meters each chunk as it arrives, and a fetch completes
 * (its copy is committed and its waiters told) only when the ingress link would have
 * delivered its last byte.  Every message is held back by the one-way latency.  So a
 * chunk queues where the bottleneck is, as behind a switch: metering ingress when a
 * chunk is *requested* (as this did before) made every chunk queue twice, once at each
 * end, and under all-to-all load each link ran half empty while fetches took twice as
 * long.  Held messages wait in a min-heap with one uv_timer, so hundreds of transfers
 * cost one timer.  Chunks of one fetch leave in order (FIFO reservations on one bucket,
 * one connection), which the receiver relies on; the bytes are written on arrival,
 * only the completion waits.
 *
 * A declared output (a task's `outputs`) is fetched before its size is known: it is
 * learnt from the first chunk's reply, and the receiver begins then.
 *
 * A command reads its inputs as files linked from the store.  A big input that is not a
 * file there yet (generated content, a copy held in memory) is written into the store
 * once, SPILL_PASS bytes per loop pass, while its tasks wait as for a fetch: staging
 * it whole on the loop for every task that read it (1000Genome's chromosome files, 32
 * at a time) kept loops from their heartbeats for seconds and the cluster declared
 * live nodes dead.
 *
 * Owns the fetches, the spills, the staging records and the deferred messages; the object store
 * itself is owned here too (data_init/data_close).  Runs on the node's loop thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/log.h"
#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/net/bucket.h"
#include "core/net/proto.h"
#include "core/runtime/data.h"
#include "core/runtime/objstore.h"
#include "core/runtime/part.h"

#define FETCH_CHUNK DATA_FETCH_CHUNK
_Static_assert(DATA_FETCH_CHUNK == DATA_FETCH_CHUNK_WIRE && OBJSTORE_HASH_BYTES ==
                   OBJSTORE_HASH_BYTES_WIRE, "clients fetch with the peers' chunk and checksum");
#define FETCH_WINDOW 4u
/*
 * What all of a node's fetches may have requested and not received, in bytes: two
 * fetches' windows, given to the fetches oldest first (pump).  Fetches that shared the
 * link chunk by chunk all finished together, as late as the last: four 2.4 MB inputs
 * on a 1 Gbit/s link each took 77 ms where one after the other they are there after
 * 19, 38, 58 and 77 ms, and a task can start as each arrives.  Two windows rather than
 * one, so that a slow holder at the head leaves room for the next fetch.
 */
#define DATA_WINDOW (2ull * FETCH_WINDOW * FETCH_CHUNK)
/* Bytes of an object written into the store per loop pass for commands that will read
 * it (objstore_spill): a few ms of page-cache writes, so a loop writing a gigabyte
 * still hears its peers and sends its heartbeats, where staging it whole did not. */
#define SPILL_PASS (4u << 20)

/* What a staging or running task holds: its pins, and what it still waits for. */
struct staging {
    struct ntask *task;     /* borrowed, but freed here at shutdown while still fetching */
    uint32_t missing;       /* inputs not here yet */
    int32_t error;          /* first fetch failure, or 0 */
    uint32_t npins;
    uint64_t pins[];        /* objects pinned for the task */
};

/* An object being written into the store's file, and the command tasks waiting for it. */
struct spill {
    struct ntask **waiters; /* borrowed */
    uint32_t nwaiters;
    size_t cap;
};

struct fetch {
    uint64_t key;
    uint32_t holder;
    uint32_t req;
    uint64_t total;
    bool sized;             /* total is known (a declared output's is learnt from the
                               first reply; rx is NULL until then) */
    uint64_t requested;     /* bytes asked for */
    uint64_t received;
    struct objstore_recv *rx;
    struct ntask **waiters; /* borrowed */
    uint32_t nwaiters;
    size_t cap;
    int64_t t_begin;        /* wall ns, for the trace's fetch duration */
    bool asked;             /* a request went out (an empty object's asks 0 bytes) */
    struct fetch *older, *newer; /* the fetches in the order they started (pump) */
};

enum { DEFER_REQUEST = 1, DEFER_REPLY = 2, DEFER_ARRIVAL = 3 };

struct deferred {
    int64_t due;
    uint64_t seq;
    uint8_t kind;
    uint32_t peer;
    uint32_t req;
    uint64_t key, offset;
    uint32_t len;
    uint8_t hash[OBJSTORE_HASH_BYTES]; /* DEFER_ARRIVAL: the holder's check */
};

struct data_plane {
    struct node *n;
    struct objstore *store;     /* owned */
    struct bucket egress, ingress;
    int64_t latency_ns;
    struct u64map fetches;      /* object key -> struct fetch * (owned) */
    struct fetch *oldest, *newest; /* the same fetches, in the order they started */
    uint64_t in_flight;         /* bytes requested and not received, all fetches */
    struct u64map staging;      /* task key -> struct staging * (owned): pins, missing inputs */
    struct u64map by_req;       /* request id -> struct fetch * (borrowed) */
    struct u64map spills;       /* object key -> struct spill * (owned) */
    uv_idle_t spiller;          /* active while spills wait: SPILL_PASS bytes a pass */
    uint32_t next_req;
    struct deferred *heap;      /* owned; min-heap on due time */
    size_t heap_len, heap_cap;
    uv_timer_t pacer;           /* fires at the earliest deferred message */
};

static void spiller_cb(uv_idle_t *h);

/* ---- deferred messages ------------------------------------------------------------ */

static uint64_t defer_seq;

static int before(const struct deferred *a, const struct deferred *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_push(struct data_plane *d, struct deferred x)
{
    d->heap = xgrow(d->heap, &d->heap_cap, d->heap_len + 1, sizeof *d->heap);
    size_t i = d->heap_len++;
    while (i > 0 && before(&x, &d->heap[(i - 1) / 2])) {
        d->heap[i] = d->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    d->heap[i] = x;
}

static struct deferred heap_pop(struct data_plane *d)
{
    struct deferred top = d->heap[0];
    struct deferred last = d->heap[--d->heap_len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= d->heap_len)
            break;
        if (c + 1 < d->heap_len && before(&d->heap[c + 1], &d->heap[c]))
            c++;
        if (!before(&d->heap[c], &last))
            break;
        d->heap[i] = d->heap[c];
        i = c;
    }
    if (d->heap_len)
        d->heap[i] = last;
    return top;
}

static void send_request(struct data_plane *d, const struct deferred *x)
{
    size_t at;
    struct wbuf *b = node_msg_begin(d->n, x->peer, MSG_FETCH_REQ, &at);
    wbuf_put_u32(b, x->req);
    wbuf_put_u64(b, x->key);
    wbuf_put_u64(b, x->offset);
    wbuf_put_u32(b, x->len);
    node_msg_end(d->n, x->peer, at);
}

/* A FETCH_REP for chunk [offset, offset + len) of `key` into b, which the caller opened;
 * `who` names the asker in a log line. */
static void put_reply(struct data_plane *d, struct wbuf *b, const struct deferred *x,
                      const char *who)
{
    int64_t size = objstore_size(d->store, x->key);
    int status = size < 0 ? (int)size : 0;
    uint32_t len = 0;
    uint8_t hash[OBJSTORE_HASH_BYTES];
    if (status == 0 && x->offset > (uint64_t)size)
        status = -EINVAL;
    if (status == 0) {
        uint64_t left = (uint64_t)size - x->offset;
        len = left < x->len ? (uint32_t)left : x->len;
        if (x->offset + len == (uint64_t)size)
            status = objstore_hash(d->store, x->key, hash);
    }
    wbuf_put_u32(b, x->req);
    size_t status_at = b->len;
    wbuf_put_u32(b, (uint32_t)status);
    wbuf_put_u64(b, status == 0 ? (uint64_t)size : 0);
    wbuf_put_u64(b, x->offset);
    size_t len_at = b->len;
    wbuf_put_u32(b, status == 0 ? len : 0);
    if (status == 0) {
        if (x->offset + len == (uint64_t)size)
            wbuf_put(b, hash, sizeof hash);
        ssize_t got = len ? objstore_read(d->store, x->key, x->offset, wbuf_reserve(b, len), len)
                          : 0;
        if (got == (ssize_t)len) {
            b->len += len;
            node_counters(d->n)->bytes_out += len;
        } else {
            /* Say so rather than send short data: the fetcher fails the task cleanly. */
            log_warn("fetch: cannot read object %llx for %s: %s", (unsigned long long)x->key,
                     who, strerror(got < 0 ? (int)-got : EIO));
            wbuf_patch_u32(b, status_at, (uint32_t)-EIO);
            wbuf_patch_u32(b, len_at, 0);
            if (x->offset + len == (uint64_t)size)
                b->len -= sizeof hash;
        }
    }
}

static void send_reply(struct data_plane *d, const struct deferred *x)
{
    size_t at;
    struct wbuf *b = node_msg_begin(d->n, x->peer, MSG_FETCH_REP, &at);
    char who[24];
    snprintf(who, sizeof who, "node %u", x->peer);
    put_reply(d, b, x, who);
    node_msg_end(d->n, x->peer, at);
}

/* A FETCH_REQ's fields into x (a peer's or a client's); -EBADMSG when malformed. */
static int read_request(struct rbuf *r, struct deferred *x)
{
    x->req = rbuf_u32(r);
    x->key = rbuf_u64(r);
    x->offset = rbuf_u64(r);
    x->len = rbuf_u32(r);
    return !rbuf_ok(r) || x->len > FETCH_CHUNK ? -EBADMSG : 0;
}

int data_client_reply(struct data_plane *d, struct rbuf *r, struct wbuf *b, const char *who)
{
    struct deferred x = {.kind = DEFER_REPLY};
    if (read_request(r, &x) < 0)
        return -EBADMSG;
    put_reply(d, b, &x, who);
    return 0;
}

static void pacer_cb(uv_timer_t *h);
static void arrival_done(struct data_plane *d, const struct deferred *x);

static void run_deferred(struct data_plane *d, const struct deferred *x)
{
    switch (x->kind) {
    case DEFER_REQUEST: send_request(d, x); break;
    case DEFER_REPLY: send_reply(d, x); break;
    default: arrival_done(d, x); break;
    }
}

static void arm_pacer(struct data_plane *d)
{
    if (!d->heap_len)
        return;
    int64_t wait = d->heap[0].due - node_mono_ns(d->n);
    uint64_t ms = wait <= 0 ? 0 : (uint64_t)((wait + 999999) / 1000000);
    uv_timer_start(&d->pacer, pacer_cb, ms, 0);
}

static void pacer_cb(uv_timer_t *h)
{
    struct data_plane *d = h->data;
    int64_t now = node_mono_ns(d->n);
    /* Within half a millisecond counts as due: the timer's resolution is 1 ms. */
    while (d->heap_len && d->heap[0].due <= now + 500000) {
        struct deferred x = heap_pop(d);
        run_deferred(d, &x);
    }
    arm_pacer(d);
}

/* Runs x now, or after the bucket's wait (none without a bucket) plus the latency
 * (none for an arrival: the sender's side paid it). */
static void send_or_defer(struct data_plane *d, struct bucket *bucket, struct deferred x)
{
    int64_t now = node_mono_ns(d->n);
    int64_t wait = (bucket ? bucket_reserve(bucket, now, x.len) : 0) +
                   (x.kind == DEFER_ARRIVAL ? 0 : d->latency_ns);
    if (wait <= 0 && !d->heap_len) {
        run_deferred(d, &x);
        return;
    }
    x.due = now + (wait > 0 ? wait : 0);
    x.seq = defer_seq++;
    heap_push(d, x);
    arm_pacer(d);
}

/* ---- fetching ------------------------------------------------------------------------ */


uint32_t data_input_holder(struct data_plane *d, const struct task_input *in)
{
    uint32_t nodes = node_count(d->n), copies = 1;
    if (in->node >= nodes)
        return DATA_NO_HOLDER;
    /* The client put an initial object's copies on the nodes after the first
     * (client_submit); a task's output lives only where it ran. */
    if (task_input_source(in) == 0 && node_cfg(d->n)->object_replicas > 1)
        copies = node_cfg(d->n)->object_replicas;
    if (copies > nodes)
        copies = nodes;
    for (uint32_t j = 0; j < copies; j++) {
        uint32_t node = (in->node + j) % nodes;
        if (node != node_self(d->n) && node_alive(d->n, node))
            return node;
    }
    return DATA_NO_HOLDER;
}

/* Asks for f's next chunks while its own window and the node's (DATA_WINDOW) allow. */
static void request_more(struct data_plane *d, struct fetch *f)
{
    while (f->requested < f->total &&
           f->requested - f->received < (uint64_t)FETCH_WINDOW * FETCH_CHUNK &&
           d->in_flight < DATA_WINDOW) {
        uint64_t left = f->total - f->requested;
        uint32_t len = left < FETCH_CHUNK ? (uint32_t)left : FETCH_CHUNK;
        struct deferred x = {.kind = DEFER_REQUEST, .peer = f->holder, .req = f->req,
                             .key = f->key, .offset = f->requested, .len = len};
        f->requested += len;
        f->asked = true;
        d->in_flight += len;
        send_or_defer(d, NULL, x);
    }
}

/* A fetch's first requests: the empty tail of an empty object (nothing to pull but the
 * hash), one chunk of an object whose size is not known yet, else the window. */
static void first_request(struct data_plane *d, struct fetch *f)
{
    if (f->sized && f->total > 0) {
        request_more(d, f);
        return;
    }
    uint32_t len = f->sized ? 0 : FETCH_CHUNK;
    struct deferred x = {.kind = DEFER_REQUEST, .peer = f->holder, .req = f->req,
                         .key = f->key, .offset = 0, .len = len};
    f->requested = len;
    f->asked = true;
    d->in_flight += len;
    send_or_defer(d, NULL, x);
}

/* Gives the node's window to its fetches, oldest first. */
static void pump(struct data_plane *d)
{
    for (struct fetch *f = d->oldest; f && d->in_flight < DATA_WINDOW; f = f->newer) {
        if (!f->asked)
            first_request(d, f);
        else
            request_more(d, f);
    }
}

/* Takes f out of the order, with what it had in flight. */
static void fetch_unlink(struct data_plane *d, struct fetch *f)
{
    d->in_flight -= f->requested - f->received;
    *(f->older ? &f->older->newer : &d->oldest) = f->newer;
    *(f->newer ? &f->newer->older : &d->newest) = f->older;
    f->older = f->newer = NULL;
}

static void fetch_link(struct data_plane *d, struct fetch *f)
{
    f->older = d->newest;
    *(d->newest ? &d->newest->newer : &d->oldest) = f;
    d->newest = f;
}

static struct staging *staging_of(struct data_plane *d, const struct ntask *t)
{
    return u64map_get(&d->staging, t->spec.key);
}

/*
 * A command about to be staged whose inputs are all here: each big one that is not yet
 * a file in the store (generated content, or a copy held in memory) is written into it
 * first, a budget per loop pass, and the task waits for that as it would for a fetch.
 * Staging it afterwards links the file.  Returns how many it now waits for.
 */
static uint32_t spills_needed(struct data_plane *d, struct ntask *t, struct staging *s)
{
    if (t->spec.kind != TASK_COMMAND)
        return 0;
    uint32_t waits = 0;
    for (uint32_t i = 0; i < s->npins; i++) {
        if (!objstore_wants_spill(d->store, s->pins[i]))
            continue;
        struct spill *sp = u64map_get(&d->spills, s->pins[i]);
        if (!sp) {
            sp = xcalloc(1, sizeof *sp);
            u64map_put(&d->spills, s->pins[i], sp);
        }
        sp->waiters = xgrow(sp->waiters, &sp->cap, sp->nwaiters + 1, sizeof *sp->waiters);
        sp->waiters[sp->nwaiters++] = t;
        waits++;
    }
    s->missing += waits;
    if (waits && !uv_is_active((uv_handle_t *)&d->spiller))
        uv_idle_start(&d->spiller, spiller_cb);
    return waits;
}

/* One of t's inputs arrived (err 0) or cannot (err < 0). */
static void input_done(struct data_plane *d, struct ntask *t, uint64_t key, int err)
{
    struct staging *s = staging_of(d, t);
    if (err == 0 && objstore_pin(d->store, key) == 0)
        s->pins[s->npins++] = key;
    else if (err == 0)
        err = -ENOENT;
    if (err && !s->error)
        s->error = err;
    if (--s->missing)
        return;
    if (!s->error && spills_needed(d, t, s))
        return;
    if (s->error) {
        char *why = xasprintf("cannot fetch input %llx: %s", (unsigned long long)key,
                              strerror(-s->error));
        node_staged(d->n, t, why);
        free(why);
    } else {
        node_staged(d->n, t, NULL);
    }
}

static void fetch_end(struct data_plane *d, struct fetch *f, int err)
{
    u64map_del(&d->fetches, f->key);
    u64map_del(&d->by_req, f->req);
    fetch_unlink(d, f);
    if (err == 0 && node_tracing(d->n)) {
        int64_t now = node_wall_ns(d->n);
        node_trace_full(d->n, TRACE_DATA_FETCH, f->key, (int32_t)f->holder, 0, 0,
                   (int64_t)f->total, now - f->t_begin, now);
    }
    if (f->rx)
        objstore_recv_abort(f->rx);
    for (uint32_t i = 0; i < f->nwaiters; i++)
        input_done(d, f->waiters[i], f->key, err);
    /* The commit's own pin was only there to hand the copy over. */
    if (err == 0)
        objstore_unpin(d->store, f->key);
    free(f->waiters);
    free(f);
    pump(d);
    node_mark_dirty(d->n);
}

static int fetch_start(struct data_plane *d, struct ntask *t, const struct task_input *in)
{
    struct fetch *f = u64map_get(&d->fetches, in->object);
    if (!f) {
        if (in->node == node_self(d->n) || in->node >= node_count(d->n))
            return -ENOENT; /* it should be here, or its holder is unknown */
        /* Nothing would ever answer a dead holder, and no death is left to end the wait:
         * another copy, or none (the lineage recovery's business, node_recover.c). */
        uint32_t holder = data_input_holder(d, in);
        if (holder == DATA_NO_HOLDER)
            return -EHOSTDOWN;
        f = xcalloc(1, sizeof *f);
        f->key = in->object;
        f->holder = holder;
        f->total = in->bytes;
        f->sized = in->producer == 0;
        f->t_begin = node_tracing(d->n) ? node_wall_ns(d->n) : 0;
        char *cause = NULL;
        int rc = f->sized ? objstore_recv_begin(d->store, in->object, in->bytes, &f->rx, &cause)
                          : 0;
        if (rc < 0) {
            log_warn("fetch: cannot receive object %llx: %s", (unsigned long long)in->object,
                     cause ? cause : strerror(-rc));
            free(cause);
            free(f);
            return rc;
        }
        if (++d->next_req == 0)
            d->next_req = 1;
        f->req = d->next_req;
        u64map_put(&d->fetches, f->key, f);
        u64map_put(&d->by_req, f->req, f);
        node_counters(d->n)->fetches++;
        fetch_link(d, f);
        pump(d);
    }
    f->waiters = xgrow(f->waiters, &f->cap, f->nwaiters + 1, sizeof *f->waiters);
    f->waiters[f->nwaiters++] = t;
    return 0;
}

int data_stage(struct data_plane *d, struct ntask *t)
{
    const struct task_spec *spec = &t->spec;
    if (spec->num_inputs == 0)
        return 1; /* the common case of compute-only tasks costs nothing here */
    struct staging *s = xmalloc(sizeof *s + spec->num_inputs * sizeof s->pins[0]);
    s->task = t;
    s->missing = 0;
    s->error = 0;
    s->npins = 0;
    u64map_put(&d->staging, spec->key, s);
    node_counters(d->n)->tasks_with_inputs++;
    /* Count first, then start fetches: a fetch never completes inside this call, but
     * `missing` must be right before any reply can arrive. */
    uint32_t absent = 0;
    for (uint32_t i = 0; i < spec->num_inputs; i++) {
        if (!task_input_staged(&spec->inputs[i]))
            continue;
        int rc = objstore_acquire(d->store, spec->inputs[i].object);
        if (rc == 0) {
            s->pins[s->npins++] = spec->inputs[i].object;
            if (spec->inputs[i].node != node_self(d->n)) {
                /* Produced elsewhere, yet here: a cached copy saved a transfer. */
                node_counters(d->n)->cache_hits_traced++;
                node_trace_full(d->n, TRACE_CACHE_HIT, spec->inputs[i].object,
                               (int32_t)spec->inputs[i].node, 0, 0,
                               (int64_t)spec->inputs[i].bytes, 0, 0);
            }
        } else {
            absent++;
            int err = fetch_start(d, t, &spec->inputs[i]);
            if (err < 0) {
                log_warn("task %llx: input %llx (%llu bytes, node %u) unavailable: %s",
                         (unsigned long long)spec->key,
                         (unsigned long long)spec->inputs[i].object,
                         (unsigned long long)spec->inputs[i].bytes, spec->inputs[i].node,
                         strerror(-err));
                if (!s->error)
                    s->error = err;
                absent--;
            }
        }
    }
    s->missing = absent;
    if (absent == 0 && !s->error)
        node_counters(d->n)->locality_hits++;
    if (absent)
        t->spec.flags |= TASK_FLAG_FETCHED;
    if (absent == 0 && s->error)
        return s->error;
    if (absent == 0 && spills_needed(d, t, s))
        return 0;
    return absent == 0;
}

/* One pass's budget of the first waiting spill; when it is written (or cannot be: the
 * staging then writes or fails with its own reason), its tasks stop waiting for it. */
static void spiller_cb(uv_idle_t *h)
{
    struct data_plane *d = h->data;
    uint64_t key;
    void *v;
    if (!u64map_next(&d->spills, 0, &key, &v)) {
        uv_idle_stop(h);
        return;
    }
    char *cause = NULL;
    int rc = objstore_spill(d->store, key, SPILL_PASS, &cause);
    if (rc == 0)
        return;
    if (rc < 0)
        log_warn("object %llx: cannot write it into the store for its readers (%s); "
                 "each is staged a copy instead",
                 (unsigned long long)key, cause ? cause : strerror(-rc));
    free(cause);
    struct spill *sp = u64map_del(&d->spills, key);
    for (uint32_t i = 0; i < sp->nwaiters; i++) {
        struct staging *s = staging_of(d, sp->waiters[i]);
        if (s && --s->missing == 0)
            node_staged(d->n, sp->waiters[i], NULL);
    }
    free(sp->waiters);
    free(sp);
    if (u64map_len(&d->spills) == 0)
        uv_idle_stop(h);
    node_mark_dirty(d->n);
}

/*
 * The files a command was staged (data_stage_files) go when it ends: they are links to
 * store files or copies of objects, and a link kept would hold an evicted copy's bytes
 * on disk for as long as the task's directory (its output, the log `jackdaw logs` reads)
 * stays.  1000Genome kept 72 GB of inputs that way in 492 task directories.
 */
/* Removes a command's named input (a symbolic link) and the directories its name made,
 * those that are empty now. */
static void unlink_name(const char *task_dir, const char *name, uint64_t key)
{
    char *path = xasprintf("%s/%s", task_dir, name);
    if (unlink(path) < 0 && errno != ENOENT)
        log_warn("task %llx: cannot remove its input '%s': %s", (unsigned long long)key, path,
                 strerror(errno));
    for (char *slash = strrchr(path, '/'); slash && slash > path + strlen(task_dir);
         slash = strrchr(path, '/')) {
        *slash = '\0';
        if (rmdir(path) < 0)
            break;
    }
    free(path);
}

/*
 * Links a command's declared input `i`, staged as inputs/I, under its name: a relative
 * symbolic link (../ once per directory in the name), so the task directory can move
 * and no bytes are copied twice.  The directories a name holds are made.
 */
static int link_name(const char *task_dir, const char *name, uint32_t i, char **cause)
{
    char *path = xasprintf("%s/%s", task_dir, name);
    int rc = 0;
    char *slash = strrchr(path, '/');
    if (slash > path + strlen(task_dir)) {
        *slash = '\0';
        rc = fs_mkdirs(path, 0700, NULL);
        if (rc < 0)
            *cause = xasprintf("cannot create '%s' for input '%s': %s", path, name,
                               strerror(-rc));
        *slash = '/';
    }
    if (rc == 0) {
        struct wbuf target;
        wbuf_init(&target);
        for (const char *p = strchr(name, '/'); p; p = strchr(p + 1, '/'))
            wbuf_put(&target, "../", 3);
        char num[16];
        int n = snprintf(num, sizeof num, "inputs/%u", i);
        wbuf_put(&target, num, (size_t)n + 1);
        if (symlink((const char *)target.data, path) < 0 && errno != EEXIST) {
            rc = -errno;
            *cause = xasprintf("cannot link input '%s' at '%s': %s", name, path, strerror(errno));
        }
        wbuf_fini(&target);
    }
    free(path);
    return rc;
}

static void unstage_files(struct data_plane *d, const struct ntask *t)
{
    const struct task_spec *s = &t->spec;
    if (s->kind != TASK_COMMAND || s->num_inputs == 0)
        return;
    char *task_dir = xasprintf("%s/task-%u-%u", node_cfg(d->n)->workdir,
                               task_key_job(s->key), task_key_index(s->key));
    for (uint32_t i = 0; i < s->num_names; i++)
        unlink_name(task_dir, s->names[i], s->key);
    free(task_dir);
    char *dir = xasprintf("%s/task-%u-%u/inputs", node_cfg(d->n)->workdir, task_key_job(s->key),
                          task_key_index(s->key));
    for (uint32_t i = 0; i < s->num_inputs && task_input_staged(&s->inputs[i]); i++) {
        char *path = xasprintf("%s/%u", dir, i);
        if (unlink(path) < 0 && errno != ENOENT)
            log_warn("task %llx: cannot remove its staged input '%s': %s",
                     (unsigned long long)s->key, path, strerror(errno));
        free(path);
    }
    /* Not empty when the command left files of its own there: they stay, as its output. */
    rmdir(dir);
    free(dir);
}

void data_release(struct data_plane *d, struct ntask *t)
{
    unstage_files(d, t);
    struct staging *s = u64map_del(&d->staging, t->spec.key);
    if (!s)
        return;
    for (uint32_t i = 0; i < s->npins; i++)
        objstore_unpin(d->store, s->pins[i]);
    free(s);
}

/* ---- messages ------------------------------------------------------------------------ */

static int data_on_fetch_request(struct data_plane *d, uint32_t from, struct rbuf *r)
{
    struct deferred x = {.kind = DEFER_REPLY, .peer = from};
    if (read_request(r, &x) < 0)
        return -EBADMSG;
    send_or_defer(d, &d->egress, x);
    return 0;
}

static int data_on_fetch_reply(struct data_plane *d, uint32_t from, struct rbuf *r)
{
    uint32_t req = rbuf_u32(r);
    int32_t status = (int32_t)rbuf_u32(r);
    uint64_t total = rbuf_u64(r);
    uint64_t offset = rbuf_u64(r);
    uint32_t len = rbuf_u32(r);
    if (!rbuf_ok(r) || len > FETCH_CHUNK)
        return -EBADMSG;
    struct fetch *f = u64map_get(&d->by_req, req);
    if (!f || f->holder != from)
        return 0; /* a fetch already ended (its task failed) */
    if (status < 0) {
        log_warn("fetch of %llx from node %u failed: %s", (unsigned long long)f->key, from,
                 strerror(-status));
        fetch_end(d, f, status);
        return 0;
    }
    if (!f->sized && offset == 0) {
        /* A declared output's first reply: now its size is known. */
        char *cause = NULL;
        int rc = total > (uint64_t)INT64_MAX ? -EFBIG
                 : objstore_recv_begin(d->store, f->key, total, &f->rx, &cause);
        if (rc < 0) {
            log_warn("fetch: cannot receive object %llx (%llu bytes) from node %u: %s",
                     (unsigned long long)f->key, (unsigned long long)total, from,
                     cause ? cause : strerror(-rc));
            free(cause);
            fetch_end(d, f, rc);
            return 0;
        }
        f->sized = true;
        f->total = total;
        if (f->requested > total) {
            d->in_flight -= f->requested - total;
            f->requested = total;
        }
    }
    if (total != f->total || offset != f->received || !f->sized) {
        log_warn("fetch of %llx from node %u: got %llu bytes at %llu, expected a total of "
                 "%llu and offset %llu",
                 (unsigned long long)f->key, from, (unsigned long long)total,
                 (unsigned long long)offset, (unsigned long long)f->total,
                 (unsigned long long)f->received);
        fetch_end(d, f, -EPROTO);
        return 0;
    }
    bool last = offset + len == total;
    const uint8_t *hash = last ? rbuf_bytes(r, OBJSTORE_HASH_BYTES) : NULL;
    const uint8_t *data = rbuf_bytes(r, len);
    if (!rbuf_ok(r))
        return -EBADMSG;
    char *cause = NULL;
    int rc = len ? objstore_recv_write(f->rx, offset, data, len, &cause) : 0;
    f->received += len;
    d->in_flight -= len;
    node_counters(d->n)->bytes_in += len;
    if (rc < 0) {
        log_warn("fetch of %llx from node %u: %s", (unsigned long long)f->key, from,
                 cause ? cause : strerror(-rc));
        free(cause);
        fetch_end(d, f, rc);
        return 0;
    }
    /* Every chunk takes its turn on the ingress link; the fetch ends when the last
     * one is through. */
    struct deferred x = {.kind = DEFER_ARRIVAL, .peer = from, .req = req, .len = len};
    if (last) {
        memcpy(x.hash, hash, OBJSTORE_HASH_BYTES);
        send_or_defer(d, &d->ingress, x);
    } else {
        bucket_reserve(&d->ingress, node_mono_ns(d->n), len);
        pump(d);
    }
    return 0;
}

/* The last chunk of a fetch is through the ingress link: commit the copy. */
static void arrival_done(struct data_plane *d, const struct deferred *x)
{
    struct fetch *f = u64map_get(&d->by_req, x->req);
    if (!f || f->holder != x->peer || !f->rx)
        return; /* the fetch ended meanwhile (its task failed or was removed) */
    char *cause = NULL;
    int rc = objstore_recv_commit(f->rx, x->hash, &cause);
    f->rx = NULL; /* commit consumes the receiver, even on failure */
    if (rc < 0) {
        log_warn("fetch of %llx from node %u: %s", (unsigned long long)f->key, x->peer,
                 cause ? cause : strerror(-rc));
        free(cause);
    }
    fetch_end(d, f, rc < 0 ? rc : 0);
}

/* ---- outputs and staged inputs ------------------------------------------------------- */

/* A command's declared outputs, each from its file in the task's directory into the
 * store (the store takes the file over and links it back, so the user still finds it
 * where the command wrote it). */
static int keep_declared(struct data_plane *d, struct ntask *t, uint64_t *size, char **why)
{
    const struct task_spec *s = &t->spec;
    char *task_dir = xasprintf("%s/task-%u-%u", node_cfg(d->n)->workdir, task_key_job(s->key),
                               task_key_index(s->key));
    int rc = 0;
    uint32_t kept = 0;
    *size = 0;
    for (; rc == 0 && kept < s->num_outputs; kept++) {
        const struct task_output *o = &s->outputs[kept];
        char *path = xasprintf("%s/%s", task_dir, o->file);
        struct stat st;
        char *cause = NULL;
        if (lstat(path, &st) < 0) {
            rc = -errno;
            *why = errno == ENOENT
                       ? xasprintf("declared output '%s' is missing after the command exited 0",
                                   o->file)
                       : xasprintf("declared output '%s': %s", o->file, strerror(errno));
        } else if (!S_ISREG(st.st_mode)) {
            rc = -EINVAL;
            *why = xasprintf("declared output '%s' is not a regular file", o->file);
        } else {
            rc = objstore_put_file(d->store, o->object, path, &cause);
            /* Kept by an earlier run of this task here (a recomputation): the same file. */
            if (rc == -EEXIST)
                rc = 0;
            if (rc < 0)
                *why = xasprintf("cannot keep declared output '%s': %s", o->file,
                                 cause ? cause : strerror(-rc));
            else
                objstore_materialize(d->store, o->object, path, NULL);
            *size += (uint64_t)st.st_size;
        }
        free(cause);
        free(path);
    }
    /* All or none: a child never reads the outputs of a run that failed. */
    for (uint32_t i = 0; rc < 0 && i + 1 < kept; i++)
        objstore_remove(d->store, s->outputs[i].object);
    free(task_dir);
    if (rc < 0)
        *size = 0;
    return rc;
}

/* The task's output becomes an object here: synthetic bytes for synthetic tasks, the
 * captured output file for commands, or a command's declared outputs. */
int data_keep_output(struct data_plane *d, struct ntask *t, uint64_t *out_size, char **why)
{
    *why = NULL;
    if (t->spec.kind == TASK_COMMAND && t->spec.num_outputs)
        return keep_declared(d, t, out_size, why);
    uint64_t key = t->spec.key;
    char *cause = NULL;
    int rc = 0;
    uint64_t size = t->spec.output_bytes;
    if (t->spec.kind == TASK_COMMAND) {
        /* Its standard output is the object; an empty one is no object at all.  The
         * store takes the file over and links it back, so the user still finds it. */
        char *path = xasprintf("%s/task-%u-%u/output", node_cfg(d->n)->workdir, task_key_job(key),
                               task_key_index(key));
        struct stat st;
        size = stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
        if (size) {
            rc = objstore_put_file(d->store, key, path, &cause);
            if (rc == 0)
                objstore_materialize(d->store, key, path, NULL);
        }
        free(path);
    } else if (size) {
        rc = objstore_put_generated(d->store, key, size, &cause);
    }
    if (rc < 0 && rc != -EEXIST) {
        log_warn("task %llx: cannot keep its output object: %s", (unsigned long long)key,
                 cause ? cause : strerror(-rc));
        size = 0;
    }
    free(cause);
    *out_size = size;
    return 0;
}

/*
 * A command reads its inputs as files: WORKDIR/task-J-I/inputs/0, 1, ... in the order of
 * the task's declared inputs, then its parents' outputs in workload order.  Links into
 * the object store where it can (read-only), copies otherwise.
 */
int data_stage_files(struct data_plane *d, struct ntask *t, char **cause)
{
    const struct task_spec *s = &t->spec;
    char *dir = xasprintf("%s/task-%u-%u/inputs", node_cfg(d->n)->workdir, task_key_job(s->key),
                          task_key_index(s->key));
    int rc = s->num_inputs ? fs_mkdirs(dir, 0700, NULL) : 0;
    if (rc < 0)
        *cause = xasprintf("cannot create '%s': %s", dir, strerror(-rc));
    for (uint32_t i = 0; rc == 0 && i < s->num_inputs && task_input_staged(&s->inputs[i]);
         i++) {
        char *path = xasprintf("%s/%u", dir, i);
        rc = objstore_materialize(d->store, s->inputs[i].object, path, cause);
        if (rc == -EEXIST)
            rc = 0; /* staged by an earlier attempt */
        free(path);
    }
    free(dir);
    if (rc == 0 && s->num_names) {
        char *task_dir = xasprintf("%s/task-%u-%u", node_cfg(d->n)->workdir,
                                   task_key_job(s->key), task_key_index(s->key));
        for (uint32_t i = 0; rc == 0 && i < s->num_names && i < s->num_inputs; i++)
            rc = link_name(task_dir, s->names[i], i, cause);
        free(task_dir);
    }
    /* The directories of its declared outputs are there for it to write into, as a
     * workflow system's users expect ("results/x.tbl" without a mkdir in each command). */
    for (uint32_t i = 0; rc == 0 && i < s->num_outputs; i++) {
        const char *slash = strrchr(s->outputs[i].file, '/');
        if (!slash)
            continue;
        char *path = xasprintf("%s/task-%u-%u/%.*s", node_cfg(d->n)->workdir,
                               task_key_job(s->key), task_key_index(s->key),
                               (int)(slash - s->outputs[i].file), s->outputs[i].file);
        rc = fs_mkdirs(path, 0700, NULL);
        if (rc < 0)
            *cause = xasprintf("cannot create '%s' for output '%s': %s", path,
                               s->outputs[i].file, strerror(-rc));
        free(path);
    }
    return rc;
}

/* ---- life cycle and the part ---------------------------------------------------------- */

uint64_t data_missing_bytes(struct data_plane *d, const struct ntask *t)
{
    uint64_t missing = 0;
    for (uint32_t i = 0; i < t->spec.num_inputs; i++) {
        const struct task_input *in = &t->spec.inputs[i];
        /* At least 1 a missing input: a declared output's size is not known yet. */
        if (task_input_staged(in) && !objstore_has(d->store, in->object))
            missing += in->bytes ? in->bytes : 1;
    }
    return missing;
}

bool data_staging(const struct data_plane *d, uint64_t task)
{
    return u64map_get(&d->staging, task) != NULL;
}

struct objstore *data_store(struct data_plane *d)
{
    return d->store;
}

static void *data_init(struct node *n, char **cause)
{
    const struct node_config *cfg = node_cfg(n);
    char *dir = xasprintf("%s/store", cfg->workdir);
    struct objstore *store =
        objstore_create(dir, cfg->store_mem_bytes, cfg->cache ? cfg->cache_bytes : 0, cause);
    free(dir);
    if (!store)
        return NULL;
    struct data_plane *d = xcalloc(1, sizeof *d);
    d->n = n;
    d->store = store;
    bucket_init(&d->egress, cfg->bandwidth_Bps, FETCH_CHUNK);
    bucket_init(&d->ingress, cfg->bandwidth_Bps, FETCH_CHUNK);
    d->latency_ns = cfg->latency_ns;
    u64map_init(&d->fetches);
    u64map_init(&d->by_req);
    u64map_init(&d->staging);
    uv_timer_init(node_loop(n), &d->pacer);
    d->pacer.data = d;
    u64map_init(&d->spills);
    uv_idle_init(node_loop(n), &d->spiller);
    d->spiller.data = d;
    return d;
}

static void data_close(void *state)
{
    struct data_plane *d = state;
    struct objstore_stats os;
    objstore_get_stats(d->store, &os);
    log_info("object store: %llu owned, %llu cached (%llu bytes); acquires: %llu local, "
             "%llu cache hits, %llu misses; %llu evictions",
             (unsigned long long)os.owned_objects, (unsigned long long)os.cached_objects,
             (unsigned long long)os.cached_bytes, (unsigned long long)os.local_hits,
             (unsigned long long)os.cache_hits, (unsigned long long)os.cache_misses,
             (unsigned long long)os.evictions);
    uv_timer_stop(&d->pacer);
    uv_close((uv_handle_t *)&d->pacer, NULL);
    uv_idle_stop(&d->spiller);
    uv_close((uv_handle_t *)&d->spiller, NULL);
    uint64_t k;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&d->fetches, pos, &k, &v)) != 0;) {
        struct fetch *f = v;
        objstore_recv_abort(f->rx);
        free(f->waiters);
        free(f);
    }
    d->oldest = d->newest = NULL;
    d->in_flight = 0;
    for (size_t pos = 0; (pos = u64map_next(&d->staging, pos, &k, &v)) != 0;) {
        struct staging *s = v;
        /* A task still fetching is held by nothing else: the running and staged ones
         * are freed with their queues. */
        if (s->missing)
            ntask_free(s->task);
        free(s);
    }
    for (size_t pos = 0; (pos = u64map_next(&d->spills, pos, &k, &v)) != 0;) {
        struct spill *sp = v;
        free(sp->waiters);
        free(sp);
    }
    u64map_fini(&d->spills);
    u64map_fini(&d->fetches);
    u64map_fini(&d->by_req);
    u64map_fini(&d->staging);
    free(d->heap);
    d->heap = NULL;
    d->heap_len = 0;
    objstore_destroy(d->store);
    d->store = NULL;
}

/* After the loop: data_close ran in node_stop, the pacer's handle is closed. */
static void data_free(void *state)
{
    free(state);
}

/* A fetch whose holder died starts again from another copy of the object, when it has
 * one: the waiters stay.  The old request id goes, so a late reply is ignored. */
static bool refetch(struct data_plane *d, struct fetch *f)
{
    struct task_input in = {.object = f->key, .bytes = f->total, .node = f->holder};
    uint32_t holder = data_input_holder(d, &in);
    if (holder == DATA_NO_HOLDER)
        return false;
    objstore_recv_abort(f->rx);
    f->rx = NULL;
    char *cause = NULL;
    int rc = f->sized ? objstore_recv_begin(d->store, f->key, f->total, &f->rx, &cause) : 0;
    if (rc < 0) {
        log_warn("fetch: cannot receive object %llx again: %s", (unsigned long long)f->key,
                 cause ? cause : strerror(-rc));
        free(cause);
        f->rx = NULL;
        return false;
    }
    log_info("fetch of %llx: node %u died; its copy on node %u is fetched instead",
             (unsigned long long)f->key, f->holder, holder);
    u64map_del(&d->by_req, f->req);
    if (++d->next_req == 0)
        d->next_req = 1;
    f->req = d->next_req;
    u64map_put(&d->by_req, f->req, f);
    f->holder = holder;
    d->in_flight -= f->requested - f->received;
    f->requested = f->received = 0;
    f->asked = false;
    pump(d);
    return true;
}

/*
 * Fetches from a dead holder never complete: they end now, and the tasks waiting on
 * them fail with the reason, unless another copy of the object is alive (refetch);
 * recomputing a lost output is node_recover.c's business, which the failure starts.  Replies owed to the dead node are dropped when due.
 */
static void data_down(void *state, uint32_t node)
{
    struct data_plane *d = state;
    size_t cap = u64map_len(&d->fetches), k = 0;
    struct fetch **ended = xmalloc((cap ? cap : 1) * sizeof *ended);
    uint64_t key;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&d->fetches, pos, &key, &v)) != 0;)
        if (((struct fetch *)v)->holder == node)
            ended[k++] = v;
    for (size_t i = 0; i < k; i++)
        if (!refetch(d, ended[i]))
            fetch_end(d, ended[i], -EHOSTDOWN);
    free(ended);
}

static int data_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct data_plane *d = state;
    return type == MSG_FETCH_REQ ? data_on_fetch_request(d, from, r)
                                 : data_on_fetch_reply(d, from, r);
}

static const uint16_t data_types[] = {MSG_FETCH_REQ, MSG_FETCH_REP, 0};

const struct part part_data = {
    .name = "data",
    .init = data_init,
    .close = data_close,
    .free = data_free,
    .down = data_down,
    .types = data_types,
    .on_message = data_on_message,
};
