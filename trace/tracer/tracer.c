/*
 * tracer — see tracer.h.
 *
 * Blocks travel in sequence order and are kept until the collector acknowledges them
 * (ACK carries the first sequence number it does not have yet).  After a reconnect the
 * collector's RESUME says where its file ends, so a block it already wrote before a
 * crash is dropped here rather than written twice; blocks are the unit on both sides,
 * which keeps that exact.
 */
#include "trace/tracer/tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uv.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/conn.h"
#include "core/net/proto.h"
#include "trace/format/block.h"
#include "trace/format/wire.h"

#define TICK_MS 20
#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 2000
/* Bytes handed to the socket but not yet acknowledged by the kernel before we wait. */
#define SEND_WINDOW (4u << 20)
/* Blocks kept in memory while connected; beyond this they go to the spool file. */
#define MEM_CAP (32u << 20)
#define MAX_NOTES 256

/* One ring slot: the fields of an event without a body.  64 bytes. */
struct slot {
    int64_t seq, time_ns;
    uint64_t task;
    int64_t count, bytes, duration_ns;
    int32_t peer, status;
    uint8_t kind;
};

struct side {
    struct side *next;
    struct trace_event ev;
};

/* A finished block waiting for its acknowledgement. */
struct pblock {
    struct pblock *next;
    int64_t first, last;
    uint32_t count;
    uint32_t len;
    uint8_t *data;          /* owned; NULL when the block is in the spool file */
    int64_t spool_off;      /* offset in the spool file, or -1 */
    bool sent;
};

struct tracer {
    /* configuration (owned copies) */
    int32_t node;
    char *host, *run_id, *spool_path, *header_json;
    int port;
    struct auth_key key;
    int64_t start_ns;
    uint32_t flush_ms;

    /* the ring: producer owns tail and the fields under it, consumer owns head */
    struct slot *ring;
    uint64_t cap;
    _Atomic uint64_t head, tail;
    uint64_t head_seen;             /* producer's last look at head */
    int64_t next_seq;               /* producer */
    uint64_t drop_pending;          /* producer: lost since the last DROPPED event */
    _Atomic uint64_t dropped_total;
    _Atomic int kicked;

    pthread_mutex_t mu;             /* guards the side queue */
    struct side *side_head, *side_tail;
    struct side *pend_head, *pend_tail; /* trace thread: taken from the side queue */
    int64_t expect;                 /* trace thread: next sequence number to encode */

    _Atomic int stop;
    int stop_timeout_ms;

    /* trace thread */
    uv_thread_t thread;
    uv_loop_t loop;
    uv_async_t async;
    uv_timer_t tick, retry, deadline;
    struct conn_hub *hub;
    struct conn *conn;
    bool resumed;                   /* RESUME received on this connection */
    uint32_t backoff_ms;
    bool draining, finished, warned_away;

    struct trace_block *blk;
    int64_t blk_first, blk_last;
    int64_t blk_opened_ns;          /* monotonic, when its first event went in */
    uint8_t sync[TRACE_SYNC_SIZE];

    struct pblock *ph, *pt;
    size_t mem_bytes;
    int spool_fd;
    uint64_t spool_end, spool_header;
    uint32_t spooled_pending;       /* blocks of the list that live in the spool */
    uint64_t acked_events;          /* in blocks the collector acknowledged */
    uint64_t left_events;           /* left in the spool file when the thread finished */

    struct wire_note notes[MAX_NOTES];
    uint32_t nnotes;

    _Atomic uint64_t st_events, st_blocks, st_acked, st_spooled, st_bytes;
};

/* ---- producer side (node loop thread) ---- */

static int64_t rel_time(const struct tracer *t, int64_t wall_ns)
{
    int64_t d = (wall_ns ? wall_ns : clock_wall_ns()) - t->start_ns;
    return d < 0 ? 0 : d;
}

static void side_push(struct tracer *t, const struct trace_event *ev)
{
    struct side *s = xmalloc(sizeof *s);
    s->next = NULL;
    s->ev = *ev;
    s->ev.names = NULL;
    s->ev.nnames = 0;
    pthread_mutex_lock(&t->mu);
    if (t->side_tail)
        t->side_tail->next = s;
    else
        t->side_head = s;
    t->side_tail = s;
    pthread_mutex_unlock(&t->mu);
}

/* Numbers and queues the DROPPED event owed for events lost to a full ring. */
static void flush_drops(struct tracer *t, int64_t time_ns)
{
    struct trace_event ev;
    trace_event_init(&ev, TRACE_DROPPED, t->node);
    ev.seq = t->next_seq++;
    ev.time_ns = time_ns;
    ev.count = (int64_t)t->drop_pending;
    t->drop_pending = 0;
    side_push(t, &ev);
}

void tracer_put(struct tracer *t, enum trace_kind kind, uint64_t task, int32_t peer,
                int32_t status, int64_t count, int64_t bytes, int64_t duration_ns,
                int64_t wall_ns)
{
    if (!t)
        return;
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
    if (tail - t->head_seen >= t->cap) {
        t->head_seen = atomic_load_explicit(&t->head, memory_order_acquire);
        if (tail - t->head_seen >= t->cap) {
            t->drop_pending++;
            atomic_fetch_add_explicit(&t->dropped_total, 1, memory_order_relaxed);
            if (!atomic_exchange_explicit(&t->kicked, 1, memory_order_relaxed))
                uv_async_send(&t->async);
            return;
        }
    }
    int64_t time_ns = rel_time(t, wall_ns);
    if (t->drop_pending)
        flush_drops(t, time_ns);
    struct slot *s = &t->ring[tail & (t->cap - 1)];
    s->seq = t->next_seq++;
    s->time_ns = time_ns;
    s->task = task;
    s->count = count;
    s->bytes = bytes;
    s->duration_ns = duration_ns;
    s->peer = peer;
    s->status = status;
    s->kind = (uint8_t)kind;
    atomic_store_explicit(&t->tail, tail + 1, memory_order_release);
    /* Wake the trace thread early only when the ring fills up; otherwise its tick
     * collects events, and the scheduler pays no system call per event. */
    if (tail + 1 - t->head_seen > t->cap / 2) {
        t->head_seen = atomic_load_explicit(&t->head, memory_order_acquire);
        if (tail + 1 - t->head_seen > t->cap / 2 &&
            !atomic_exchange_explicit(&t->kicked, 1, memory_order_relaxed))
            uv_async_send(&t->async);
    }
}

void tracer_put_event(struct tracer *t, const struct trace_event *ev, int64_t wall_ns)
{
    if (!t)
        return;
    struct trace_event e = *ev;
    e.node = t->node;
    e.time_ns = rel_time(t, wall_ns);
    if (t->drop_pending)
        flush_drops(t, e.time_ns);
    e.seq = t->next_seq++;
    side_push(t, &e);
}

static void sink_put(void *ctx, enum trace_kind kind, uint64_t task, int32_t peer,
                     int32_t status, int64_t count, int64_t bytes, int64_t duration_ns,
                     int64_t wall)
{
    tracer_put(ctx, kind, task, peer, status, count, bytes, duration_ns, wall);
}

static void sink_policy(void *ctx, const char *name, int32_t reason, int64_t wall)
{
    struct tracer *t = ctx;
    struct trace_event ev;
    trace_event_init(&ev, TRACE_POLICY_CHANGE, t->node);
    ev.status = reason;
    snprintf(ev.text, sizeof ev.text, "%s", name);
    tracer_put_event(t, &ev, wall);
}

static void sink_sample(void *ctx, const struct trace_sample *s, int64_t wall)
{
    struct tracer *t = ctx;
    struct trace_event ev;
    trace_event_init(&ev, TRACE_NODE_SAMPLE, t->node);
    ev.sample = *s;
    tracer_put_event(t, &ev, wall);
}

static void sink_put_usage(void *ctx, enum trace_kind kind, uint64_t task, int32_t status,
                           int64_t count, int64_t bytes, int64_t duration_ns,
                           const struct task_usage *u, int64_t wall)
{
    struct tracer *t = ctx;
    struct trace_event ev;
    trace_event_init(&ev, kind, t->node);
    ev.task = task;
    ev.status = status;
    ev.count = count;
    ev.bytes = bytes;
    ev.duration_ns = duration_ns;
    ev.usage = *u;
    ev.usage.measured = true;
    tracer_put_event(t, &ev, wall);
}

static uint64_t sink_dropped(void *ctx)
{
    return tracer_dropped(ctx);
}

void tracer_sink(struct tracer *t, struct trace_sink *out)
{
    *out = (struct trace_sink){.ctx = t, .put = sink_put, .policy = sink_policy,
                               .sample = sink_sample, .put_usage = sink_put_usage,
                               .dropped = sink_dropped};
}

uint64_t tracer_dropped(const struct tracer *t)
{
    return t ? atomic_load_explicit(&t->dropped_total, memory_order_relaxed) : 0;
}

void tracer_stats(const struct tracer *t, struct tracer_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!t)
        return;
    out->events = atomic_load(&t->st_events);
    out->dropped = atomic_load(&t->dropped_total);
    out->blocks = atomic_load(&t->st_blocks);
    out->blocks_acked = atomic_load(&t->st_acked);
    out->blocks_spooled = atomic_load(&t->st_spooled);
    out->bytes_sent = atomic_load(&t->st_bytes);
}

/* ---- trace thread: spool file ---- */

static int spool_open(struct tracer *t)
{
    if (t->spool_fd >= 0)
        return 0;
    if (!t->spool_path)
        return -ENOENT;
    t->spool_fd = open(t->spool_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (t->spool_fd < 0) {
        int e = errno;
        log_warn("trace spool '%s': %s", t->spool_path, strerror(e));
        return -e;
    }
    uint8_t *hdr;
    size_t len;
    int rc = trace_file_header(t->header_json ? t->header_json : "{}", t->sync, &hdr, &len);
    if (rc == 0) {
        rc = fs_write_all(t->spool_fd, hdr, len);
        free(hdr);
    }
    if (rc < 0) {
        log_warn("trace spool '%s': cannot write its header: %s", t->spool_path, strerror(-rc));
        close(t->spool_fd);
        t->spool_fd = -1;
        return rc;
    }
    t->spool_header = t->spool_end = len;
    return 0;
}

/* Moves a block's bytes to the spool file.  Keeps it in memory when that fails. */
static void spool_block(struct tracer *t, struct pblock *b)
{
    if (!b->data || spool_open(t) < 0)
        return;
    if (pwrite(t->spool_fd, b->data, b->len, (off_t)t->spool_end) != (ssize_t)b->len) {
        log_warn("trace spool '%s': write failed: %s", t->spool_path, strerror(errno));
        return;
    }
    b->spool_off = (int64_t)t->spool_end;
    t->spool_end += b->len;
    t->mem_bytes -= b->len;
    free(b->data);
    b->data = NULL;
    t->spooled_pending++;
    atomic_fetch_add(&t->st_spooled, 1);
}

/* ---- trace thread: blocks and sending ---- */

static void pump(struct tracer *t)
{
    if (!t->conn || !t->resumed)
        return;
    uint8_t *buf = NULL;
    size_t buf_cap = 0;
    for (struct pblock *b = t->ph; b; b = b->next) {
        if (b->sent)
            continue;
        if (conn_pending_bytes(t->conn) > SEND_WINDOW)
            break;
        const uint8_t *data = b->data;
        if (!data) {
            if (buf_cap < b->len) {
                free(buf);
                buf_cap = b->len;
                buf = xmalloc(buf_cap);
            }
            if (pread(t->spool_fd, buf, b->len, (off_t)b->spool_off) != (ssize_t)b->len) {
                log_warn("trace spool '%s': cannot read back a block: %s", t->spool_path,
                         strerror(errno));
                break;
            }
            data = buf;
        }
        size_t at;
        struct wbuf *w = conn_msg_begin(t->conn, MSG_TRACE_BLOCK, &at);
        struct wire_block wb = {.first_seq = b->first, .last_seq = b->last, .count = b->count,
                                .data = data, .len = b->len};
        wire_put_block(w, &wb);
        conn_msg_end(t->conn, at);
        b->sent = true;
        atomic_fetch_add(&t->st_bytes, b->len);
    }
    free(buf);
}

static void finish_block(struct tracer *t)
{
    const uint8_t *data;
    size_t len;
    if (trace_block_count(t->blk) == 0)
        return;
    uint32_t count = (uint32_t)trace_block_count(t->blk);
    if (trace_block_finish(t->blk, t->sync, &data, &len) < 0 || !len)
        return;
    struct pblock *b = xcalloc(1, sizeof *b);
    b->first = t->blk_first;
    b->last = t->blk_last;
    b->count = count;
    b->len = (uint32_t)len;
    b->data = xmalloc(len);
    memcpy(b->data, data, len);
    b->spool_off = -1;
    if (t->pt)
        t->pt->next = b;
    else
        t->ph = b;
    t->pt = b;
    t->mem_bytes += len;
    atomic_fetch_add(&t->st_blocks, 1);
    /* Away, or too far behind: keep it on disk so a dead collector cannot make a node
     * hold its whole trace in memory, and so a node that exits leaves it behind. */
    if (!t->conn || !t->resumed || t->mem_bytes > MEM_CAP)
        spool_block(t, b);
}

static void send_live(struct tracer *t, const struct trace_event *sample)
{
    if (t->conn && t->resumed) {
        size_t at;
        struct wbuf *w = conn_msg_begin(t->conn, MSG_TRACE_LIVE, &at);
        struct wire_live l = {.time_ns = sample->time_ns, .sample = sample->sample,
                              .nnotes = t->nnotes, .notes = t->notes};
        wire_put_live(w, &l);
        conn_msg_end(t->conn, at);
    }
    t->nnotes = 0;
}

static void encode(struct tracer *t, const struct trace_event *ev)
{
    if (trace_block_count(t->blk) == 0) {
        t->blk_first = ev->seq;
        t->blk_opened_ns = clock_mono_ns();
    }
    int rc = trace_block_append(t->blk, ev);
    if (rc == -ENOSPC) {
        finish_block(t);
        t->blk_first = ev->seq;
        t->blk_opened_ns = clock_mono_ns();
        rc = trace_block_append(t->blk, ev);
    }
    if (rc < 0) {
        /* Cannot happen for events we build; never silent if it does. */
        log_warn("trace: event %lld (%s) not encodable: %s", (long long)ev->seq,
                 trace_kind_name(ev->kind), strerror(-rc));
        return;
    }
    t->blk_last = ev->seq;
    atomic_fetch_add_explicit(&t->st_events, 1, memory_order_relaxed);
    if (wire_is_note(ev) && t->nnotes < MAX_NOTES)
        wire_note_from_event(&t->notes[t->nnotes++], ev);
}

/* Moves the side queue (samples, policy changes) to the trace thread's own list, and
 * sends the newest sample to the collector at once: the live view must not wait for the
 * ring's events to be encoded. */
static void collect_side(struct tracer *t)
{
    pthread_mutex_lock(&t->mu);
    struct side *got = t->side_head, *got_tail = t->side_tail;
    t->side_head = t->side_tail = NULL;
    pthread_mutex_unlock(&t->mu);
    if (!got)
        return;
    const struct trace_event *sample = NULL;
    for (struct side *x = got; x; x = x->next)
        if (x->ev.kind == TRACE_NODE_SAMPLE)
            sample = &x->ev;
    if (sample)
        send_live(t, sample);
    if (t->pend_tail)
        t->pend_tail->next = got;
    else
        t->pend_head = got;
    t->pend_tail = got_tail;
}

/* Takes what the scheduler produced, in sequence order.  Ring and side queue are two
 * channels of one gapless numbering, so the next event is whichever channel holds
 * `expect`; when neither does yet, the other channel's copy is still on its way (it was
 * numbered before but published after) and the next pass picks it up.  Bounded: at most
 * three looks at the channels per call, so a fast producer cannot keep this thread from
 * sending. */
static void drain(struct tracer *t)
{
    atomic_store_explicit(&t->kicked, 0, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
    int looks = 0;
    /* A slot sets every field but the body's, which stays empty: one init for all. */
    struct trace_event ev;
    trace_event_init(&ev, TRACE_TASK_START, t->node);
    for (;;) {
        const struct slot *s = head < tail ? &t->ring[head & (t->cap - 1)] : NULL;
        if (s && s->seq == t->expect) {
            ev.kind = (enum trace_kind)s->kind;
            ev.seq = s->seq;
            ev.time_ns = s->time_ns;
            ev.task = s->task;
            ev.peer = s->peer;
            ev.status = s->status;
            ev.count = s->count;
            ev.bytes = s->bytes;
            ev.duration_ns = s->duration_ns;
            encode(t, &ev);
            head++;
            /* Hand slots back as we go, so a long drain makes room at once. */
            if ((head & 1023) == 0)
                atomic_store_explicit(&t->head, head, memory_order_release);
        } else if (t->pend_head && t->pend_head->ev.seq == t->expect) {
            struct side *p = t->pend_head;
            t->pend_head = p->next;
            if (!t->pend_head)
                t->pend_tail = NULL;
            encode(t, &p->ev);
            free(p);
        } else {
            if (++looks > 3)
                break;
            atomic_store_explicit(&t->head, head, memory_order_release);
            tail = atomic_load_explicit(&t->tail, memory_order_acquire);
            collect_side(t);
            continue;
        }
        t->expect++;
    }
    atomic_store_explicit(&t->head, head, memory_order_release);
}

static void release_upto(struct tracer *t, int64_t next_seq)
{
    while (t->ph && t->ph->last < next_seq) {
        struct pblock *b = t->ph;
        t->ph = b->next;
        if (!t->ph)
            t->pt = NULL;
        if (b->data)
            t->mem_bytes -= b->len;
        else
            t->spooled_pending--;
        t->acked_events += b->count;
        free(b->data);
        free(b);
        atomic_fetch_add(&t->st_acked, 1);
    }
    /* Everything spooled has reached the collector: the spool file holds nothing the
     * collector lacks, so empty it rather than let it grow for the whole run. */
    if (t->spooled_pending == 0 && t->spool_fd >= 0 && t->spool_end > t->spool_header) {
        if (ftruncate(t->spool_fd, (off_t)t->spool_header) == 0)
            t->spool_end = t->spool_header;
    }
}

/* After stop: every numbered event encoded (the producer has stopped, and the stop
 * flag's store orders its last next_seq before our load). */
static bool caught_up(const struct tracer *t)
{
    return atomic_load(&t->stop) && t->expect >= t->next_seq;
}

static void maybe_finish(struct tracer *t)
{
    if (!t->draining || t->finished || !caught_up(t))
        return;
    if (t->ph && t->conn)
        return; /* acknowledgements still to come, or the deadline */
    if (t->ph && !t->conn && uv_is_active((uv_handle_t *)&t->deadline) && t->host)
        return; /* the collector may come back before the deadline */
    t->finished = true;
    uint64_t left = 0;
    for (struct pblock *b = t->ph; b; b = b->next) {
        spool_block(t, b);
        left += b->count;
    }
    t->left_events = left;
    if (left && !t->host)
        log_info("trace: %llu events written to '%s' (no collector)", (unsigned long long)left,
                 t->spool_path ? t->spool_path : "(no spool)");
    else if (left)
        log_warn("trace: %llu events not acknowledged by the collector are kept in '%s' "
                 "(jackdaw trace merge joins them with the collector's file)",
                 (unsigned long long)left, t->spool_path ? t->spool_path : "(no spool)");
    if (t->spool_fd >= 0) {
        bool empty = t->spool_end == t->spool_header;
        close(t->spool_fd);
        t->spool_fd = -1;
        if (empty && t->spool_path)
            unlink(t->spool_path);
    }
    uv_timer_stop(&t->tick);
    uv_timer_stop(&t->retry);
    uv_timer_stop(&t->deadline);
    uv_close((uv_handle_t *)&t->async, NULL);
    uv_close((uv_handle_t *)&t->tick, NULL);
    uv_close((uv_handle_t *)&t->retry, NULL);
    uv_close((uv_handle_t *)&t->deadline, NULL);
    /* Our own closing is not the collector going away: forget the connection first. */
    t->conn = NULL;
    conn_hub_destroy(t->hub);
    t->hub = NULL;
}

static void on_deadline(uv_timer_t *h)
{
    struct tracer *t = h->data;
    if (t->conn) {
        conn_close(t->conn, "trace: stopping");
        t->conn = NULL;
    }
    uv_timer_stop(&t->deadline);
    maybe_finish(t);
}

/* Encoding waits until the ring is half full, its oldest event is flush_ms old, or the
 * node stops: a burst of short tasks (the scheduler at full speed, when every cycle
 * counts) is then encoded after it, not during it, on a machine with no core to spare. */
static bool encode_due(struct tracer *t)
{
    if (atomic_load(&t->stop) || atomic_load_explicit(&t->kicked, memory_order_relaxed))
        return true;
    uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
    int64_t oldest;
    if (head < tail)
        oldest = t->ring[head & (t->cap - 1)].time_ns;
    else if (t->pend_head)
        oldest = t->pend_head->ev.time_ns;
    else
        return false;
    return rel_time(t, 0) - oldest >= (int64_t)t->flush_ms * 1000000;
}

static void step(struct tracer *t)
{
    collect_side(t);
    if (encode_due(t))
        drain(t);
    bool stopping = atomic_load(&t->stop);
    if (trace_block_count(t->blk) &&
        (caught_up(t) || clock_mono_ns() - t->blk_opened_ns >= (int64_t)t->flush_ms * 1000000))
        finish_block(t);
    pump(t);
    if (stopping && !t->draining) {
        t->draining = true;
        uv_timer_start(&t->deadline, on_deadline, (uint64_t)t->stop_timeout_ms, 0);
    }
    maybe_finish(t);
}

static void on_tick(uv_timer_t *h)
{
    step(h->data);
}

static void on_async(uv_async_t *h)
{
    struct tracer *t = h->data;
    if (!t->finished)
        step(t);
}

/* ---- trace thread: collector connection ---- */

static void connect_collector(struct tracer *t);

static void on_retry(uv_timer_t *h)
{
    connect_collector(h->data);
}

static void connect_collector(struct tracer *t)
{
    if (t->finished || !t->host || t->conn)
        return;
    char *cause = NULL;
    t->resumed = false;
    t->conn = conn_connect(t->hub, t->host, t->port, t, &cause);
    if (!t->conn) {
        log_warn("trace: cannot reach the collector at %s:%d: %s", t->host, t->port,
                 cause ? cause : "?");
        free(cause);
    }
}

static void on_ready(struct conn *c)
{
    struct tracer *t = conn_hub_data(conn_hub_of(c));
    struct wire_hello h;
    memset(&h, 0, sizeof h);
    snprintf(h.run_id, sizeof h.run_id, "%s", t->run_id ? t->run_id : "");
    memcpy(h.sync, t->sync, TRACE_SYNC_SIZE);
    size_t at;
    struct wbuf *w = conn_msg_begin(c, MSG_TRACE_HELLO, &at);
    wire_put_hello(w, &h);
    conn_msg_end(c, at);
}

static int on_message(struct conn *c, uint16_t type, struct rbuf *r, const char **reason)
{
    struct tracer *t = conn_hub_data(conn_hub_of(c));
    int64_t next;
    switch (type) {
    case MSG_TRACE_RESUME:
    case MSG_TRACE_ACK:
        if (wire_get_next_seq(r, &next) < 0) {
            *reason = "malformed trace acknowledgement";
            return -EBADMSG;
        }
        release_upto(t, next);
        if (type == MSG_TRACE_RESUME) {
            if (t->warned_away)
                log_info("trace: collector back at %s; resending from event %lld", t->host,
                         (long long)next);
            t->warned_away = false;
            t->resumed = true;
            t->backoff_ms = 0;
            for (struct pblock *b = t->ph; b; b = b->next)
                b->sent = false;
        }
        pump(t);
        maybe_finish(t);
        return 0;
    default:
        *reason = "unexpected message on the trace connection";
        return -EPROTO;
    }
}

static void on_close(struct conn *c, const char *reason)
{
    struct tracer *t = conn_hub_data(conn_hub_of(c));
    if (c != t->conn)
        return;
    t->conn = NULL;
    t->resumed = false;
    /* What the collector has not acknowledged goes to the spool now rather than when
     * the node stops: a node killed while the collector is away leaves it there, for
     * `trace merge`, instead of losing up to MEM_CAP of events with its memory. */
    for (struct pblock *b = t->ph; b; b = b->next) {
        b->sent = false;
        spool_block(t, b);
    }
    if (!t->warned_away) {
        log_warn("trace: collector at %s:%d away (%s); spooling to '%s'", t->host, t->port,
                 reason ? reason : "closed", t->spool_path ? t->spool_path : "(none)");
        t->warned_away = true;
    }
    if (t->finished || !t->hub)
        return;
    t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : RETRY_MIN_MS;
    if (t->backoff_ms > RETRY_MAX_MS)
        t->backoff_ms = RETRY_MAX_MS;
    uv_timer_start(&t->retry, on_retry, t->backoff_ms, 0);
    maybe_finish(t);
}

static void thread_main(void *arg)
{
    struct tracer *t = arg;
    /* Lowest priority: encoding yields to the scheduler and the tasks. */
    /* SCHED_IDLE: runs only on a core nothing else wants, and never delays a task or
     * the scheduler's loop; nice 19 where SCHED_IDLE is refused. */
    struct sched_param sp = {.sched_priority = 0};
    if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    connect_collector(t);
    uv_run(&t->loop, UV_RUN_DEFAULT);
}

int tracer_start(struct tracer **out, const struct tracer_config *cfg, char **cause)
{
    struct tracer *t = xcalloc(1, sizeof *t);
    t->node = cfg->node;
    t->host = cfg->host && *cfg->host ? xstrdup(cfg->host) : NULL;
    t->port = cfg->port;
    t->key = cfg->key;
    t->run_id = cfg->run_id ? xstrdup(cfg->run_id) : NULL;
    t->spool_path = cfg->spool_path ? xstrdup(cfg->spool_path) : NULL;
    t->header_json = cfg->header_json ? xstrdup(cfg->header_json) : NULL;
    t->start_ns = cfg->start_ns;
    t->flush_ms = cfg->flush_ms ? cfg->flush_ms : 1000;
    t->spool_fd = -1;
    size_t bytes = cfg->ring_bytes ? cfg->ring_bytes : TRACER_DEFAULT_RING_BYTES;
    t->cap = 1024;
    while (t->cap * sizeof(struct slot) < bytes && t->cap < (1ull << 32))
        t->cap <<= 1;
    t->ring = xmalloc(t->cap * sizeof *t->ring);
    /* Touch every page now: a page fault per 64 events would land on the scheduler. */
    memset(t->ring, 0, t->cap * sizeof *t->ring);
    pthread_mutex_init(&t->mu, NULL);
    int rc = trace_sync_new(t->sync);
    if (rc == 0)
        rc = trace_block_create(&t->blk, 0);
    if (rc == 0)
        rc = -uv_loop_init(&t->loop);
    if (rc < 0) {
        *cause = xasprintf("trace: cannot start: %s", strerror(-rc));
        trace_block_destroy(t->blk);
        free(t->ring);
        free(t);
        return rc;
    }
    uv_async_init(&t->loop, &t->async, on_async);
    uv_timer_init(&t->loop, &t->tick);
    uv_timer_init(&t->loop, &t->retry);
    uv_timer_init(&t->loop, &t->deadline);
    t->async.data = t->tick.data = t->retry.data = t->deadline.data = t;
    static const struct conn_callbacks cb = {on_ready, on_message, on_close};
    t->hub = conn_hub_create(&t->loop, &t->key, CONN_ROLE_NODE, (uint32_t)t->node, &cb, t);
    uv_timer_start(&t->tick, on_tick, TICK_MS, TICK_MS);
    rc = uv_thread_create(&t->thread, thread_main, t);
    if (rc < 0) {
        *cause = xasprintf("trace: cannot start its thread: %s", uv_strerror(rc));
        /* The loop never ran: close what we opened and let it release them. */
        conn_hub_destroy(t->hub);
        uv_close((uv_handle_t *)&t->async, NULL);
        uv_close((uv_handle_t *)&t->tick, NULL);
        uv_close((uv_handle_t *)&t->retry, NULL);
        uv_close((uv_handle_t *)&t->deadline, NULL);
        uv_run(&t->loop, UV_RUN_DEFAULT);
        uv_loop_close(&t->loop);
        trace_block_destroy(t->blk);
        free(t->ring);
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void tracer_stop(struct tracer *t, int timeout_ms)
{
    if (!t)
        return;
    t->stop_timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
    if (t->drop_pending)
        flush_drops(t, rel_time(t, 0));
    atomic_store(&t->stop, 1);
    uv_async_send(&t->async);
    uv_thread_join(&t->thread);
    uv_loop_close(&t->loop);
    /* The whole account, once every event is numbered and placed: what a test (or an
     * operator after a collector crash) compares with the trace file.  Numbered events
     * are the DROPPED ones included, not the events they stand for. */
    log_info("trace: %lld events numbered, %llu acknowledged by the collector, %llu left in "
             "'%s', %llu lost to a full buffer", (long long)t->next_seq,
             (unsigned long long)t->acked_events, (unsigned long long)t->left_events,
             t->spool_path ? t->spool_path : "(no spool)",
             (unsigned long long)atomic_load(&t->dropped_total));
    for (int k = 0; k < 2; k++)
        for (struct side *s = k ? t->side_head : t->pend_head, *n; s; s = n) {
            n = s->next;
            free(s);
        }
    for (struct pblock *b = t->ph, *n; b; b = n) {
        n = b->next;
        free(b->data);
        free(b);
    }
    trace_block_destroy(t->blk);
    pthread_mutex_destroy(&t->mu);
    free(t->ring);
    free(t->host);
    free(t->run_id);
    free(t->spool_path);
    free(t->header_json);
    free(t);
}
