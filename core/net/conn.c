/*
 * conn — one authenticated, framed TCP connection of a hub (see conn.h): handshake,
 * reading and parsing, batching and writing, closing.
 *
 * Owns each connection with its buffers and write requests; the hub, its listener and
 * its per-pass flusher are conn_hub.c's, and both files share conn_internal.h; the
 * handshake's payloads are written and checked by handshake.c, so that the bytes a peer
 * sends before it is authenticated meet pure functions a fuzzer can drive.  Called
 * by the node daemon and the client library on their loop thread.
 *
 * Two rules shape this file.  First, output is only marked during events and written
 * once per loop pass by the hub's prepare callback: each dirty connection's batch is
 * sealed and handed, buffer and all, to a single uv_write, so thousands of small
 * messages become a few frames and one system call.  Second, a connection is never
 * freed, and its owner never hears on_close, from inside one of its own callbacks:
 * closing only marks it and queues it for that same prepare callback, which calls
 * on_close and then uv_close; the memory goes when libuv hands both handles back.  So
 * code that runs a callback re-checks `closing`/`finished` afterwards, and nothing it
 * holds goes away.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/conn_internal.h"
#include "core/net/handshake.h"
#include "core/net/proto.h"

_Static_assert(CONN_MSG_ACCEPT < PROTO_FIRST_APP_TYPE, "handshake types below the callers' ranges");

#define READ_CHUNK (64u * 1024)
/* The largest written batch buffer kept for the next batch.  A batch starts from nothing
 * otherwise, and a busy link's (a node forwarding its inserts to a backup: megabytes a
 * pass) grows by doubling into fresh pages every pass: reallocation copies and page
 * faults were a tenth of a node's time at R = 2. */
#define SPARE_MAX (8u << 20)
/* What a hub's spares may hold together (CONN_HUB_SPARE_BYTES): a buffer past it is
 * freed, and its memory serves the next allocation, whichever conn makes it.  Without
 * this bound every conn kept the largest batch it ever wrote: a node serving chunks to
 * 31 peers kept 31 reply buffers of 512 KiB idle, plus as many receive buffers, and 32
 * local daemons faulted in a gigabyte of fresh pages rather than reuse any. */
#define HUB_SPARE_BYTES CONN_HUB_SPARE_BYTES
/* What a peer that has not authenticated can make us buffer. */
#define PREAUTH_RBUF_MAX READ_CHUNK
/* An emptied receive buffer above this is released, so that one 16 MiB frame does not
 * pin 16 MiB for the rest of the connection's life, nor each of a node's connections
 * the 512 KiB of the last chunk reply it carried: freed, that memory takes the next
 * frame on any connection (see HUB_SPARE_BYTES). */
#define RBUF_KEEP READ_CHUNK

/* How long one connection's reads may keep the loop before it serves its other
 * handles.  libuv reads a readable socket up to 32 times in one callback, and each
 * read's frames are handled at once: a daemon taking a 64,000-task submission spent
 * tens of ms in one callback, its sleeps' deadlines unserved and its thieves'
 * queries unanswered.  Past the budget the next read is refused (an empty buffer,
 * UV_ENOBUFS) and the socket, still readable, is read again on the next pass. */
#define READ_BUDGET_NS 1000000

/* How a close is reported in the log. */
enum close_kind { CLOSE_QUIET, CLOSE_WARN, CLOSE_DROP };

/* One per batch: owns the buffers swapped out of the connection.  `owned` are the
 * buffers as allocated; `bufs` what is left to write of them after the synchronous
 * attempt (conn__flush), which uv_write then takes. */
struct write_req {
    uv_write_t req;
    struct conn *c;
    uv_buf_t owned[2];
    size_t caps[2];         /* of owned: their allocations, which len does not say */
    uv_buf_t bufs[2];
    unsigned nbufs;         /* of owned */
    unsigned nleft;         /* of bufs */
    size_t len;             /* bytes handed to uv_write */
    bool messages;          /* the last buffer is a batch of messages */
};

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set_reason(struct conn *c, const char *reason)
{
    /* Copy first: `reason` may be c->reason itself. */
    char *copy = xstrdup(reason);
    free(c->reason);
    c->reason = copy;
}

void conn__drop_spare(struct conn *c)
{
    c->hub->spare_bytes -= c->spare.cap;
    wbuf_fini(&c->spare);
}

static void conn_free(struct conn *c)
{
    struct conn_hub *hub = c->hub;
    free(c->reason);
    free(c->rbuf);
    wbuf_fini(&c->hs_out);
    frame_batch_fini(&c->out);
    conn__drop_spare(c);
    free(c);
    conn__hub_release(hub);
}

static void on_conn_handle_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    if (--c->handles == 0)
        conn_free(c);
}

struct conn *conn__create(struct conn_hub *hub, void *data)
{
    struct conn *c = xcalloc(1, sizeof *c);
    c->hub = hub;
    c->data = data;
    link_init(&c->all);
    link_init(&c->dirty_link);
    link_init(&c->closing_link);
    wbuf_init(&c->hs_out);
    frame_batch_init(&c->out);
    snprintf(c->name, sizeof c->name, "unknown");
    /* Neither can fail: no socket is created until bind, connect or accept. */
    uv_tcp_init(hub->loop, &c->tcp);
    uv_timer_init(hub->loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->connect_req.data = c;
    c->shutdown_req.data = c;
    c->handles = 2;
    hub->refs++;
    link_append(&hub->conns, &c->all);
    return c;
}

static void mark_dirty(struct conn *c)
{
    if (c->closing || c->finished)
        return;
    bool was_late = false;
    if (link_linked(&c->dirty_link)) {
        if (!c->late)
            return;
        link_remove(&c->dirty_link); /* what waited leaves now, with this */
        was_late = true;
    }
    c->late = false;
    link_append(&c->hub->dirty, &c->dirty_link);
    if (was_late)
        conn__hub_late_gone(c->hub);
    conn__hub_want_prepare(c->hub);
}

void conn__mark_dirty(struct conn *c)
{
    mark_dirty(c);
}

static void begin_close(struct conn *c, const char *reason, enum close_kind kind)
{
    if (c->closing || c->finished)
        return;
    c->closing = true;
    set_reason(c, reason);
    if (kind == CLOSE_DROP)
        c->hub->stats.dropped++;
    if (kind == CLOSE_QUIET)
        log_info("closing %s: %s", c->name, c->reason);
    else
        log_warn("dropping %s: %s", c->name, c->reason);
    uv_read_stop((uv_stream_t *)&c->tcp);
    uv_timer_stop(&c->timer);
    if (link_linked(&c->dirty_link))
        link_remove(&c->dirty_link);
    link_append(&c->hub->closing, &c->closing_link);
    conn__hub_want_prepare(c->hub);
}

static void drop(struct conn *c, const char *reason)
{
    begin_close(c, reason, CLOSE_DROP);
}

/* Closes after a libuv error: the peer did nothing wrong, so it is not a drop. */
static void fail(struct conn *c, const char *what, int err)
{
    char why[160];
    snprintf(why, sizeof why, "%s: %s", what, uv_strerror(err));
    if (!c->closing && !c->finished)
        c->error = err;
    begin_close(c, why, CLOSE_QUIET);
}

/* The end of a connection: the owner hears of it once, then libuv releases it. */
void conn__finish(struct conn *c, const char *reason)
{
    assert(!c->finished);
    struct conn_hub *hub = c->hub;
    link_remove(&c->all);
    if (link_linked(&c->dirty_link))
        link_remove(&c->dirty_link);
    if (link_linked(&c->closing_link))
        link_remove(&c->closing_link);
    if (reason && !c->closing)
        set_reason(c, reason);
    else if (!c->reason)
        set_reason(c, "closed");
    c->closing = true;
    c->finished = true;
    if (c->visible && hub->cb.on_close)
        hub->cb.on_close(c, c->reason);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
}

static void on_timer(uv_timer_t *t)
{
    struct conn *c = t->data;
    if (c->shutdown_sent)
        begin_close(c, c->reason, CLOSE_QUIET);
    else if (c->phase == PHASE_CONNECTING)
        begin_close(c, "connect timeout", CLOSE_WARN);
    else if (c->phase != PHASE_READY)
        drop(c, "handshake timeout");
}

/* The batch's buffers, written: the batch's own (the last one) is kept for the next
 * batch with all of its capacity; the rest are freed.  Kept with only its written
 * length, a buffer that doubled to hold a 256 KiB chunk reply doubled again for the
 * next reply a few bytes longer, into a fresh allocation each time, and the data
 * plane's sender faulted in every page it sent. */
static void release_buffers(struct write_req *w)
{
    struct conn *c = w->c;
    for (unsigned i = 0; i < w->nbufs; i++) {
        uv_buf_t b = w->owned[i];
        if (i == w->nbufs - 1 && w->messages && !c->spare.data && w->caps[i] <= SPARE_MAX &&
            c->hub->spare_bytes + w->caps[i] <= HUB_SPARE_BYTES) {
            c->spare.data = (uint8_t *)b.base;
            c->spare.cap = w->caps[i];
            c->spare.len = 0;
            c->hub->spare_bytes += c->spare.cap;
            continue;
        }
        free(b.base);
    }
    free(w);
}

static void on_write(uv_write_t *req, int status)
{
    struct write_req *w = CONTAINER_OF(req, struct write_req, req);
    struct conn *c = w->c;
    c->inflight -= w->len;
    release_buffers(w);
    if (status < 0 && status != UV_ECANCELED)
        fail(c, "write failed", status);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct conn *c = req->data;
    if (status == UV_ECANCELED || c->closing)
        return;
    /* Otherwise the peer's EOF (or the linger timer) completes the close: closing now
     * with its data unread would reset the connection and could destroy what we just
     * sent before the peer reads it. */
    if (status < 0)
        begin_close(c, c->reason, CLOSE_QUIET);
}

static void start_shutdown(struct conn *c)
{
    int rc = uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, on_shutdown);
    if (rc < 0) {
        begin_close(c, c->reason, CLOSE_QUIET);
        return;
    }
    c->shutdown_sent = true;
    uv_timer_start(&c->timer, on_timer, CONN_HANDSHAKE_MS, 0);
}

static uint64_t count_frames(const struct wbuf *b)
{
    uint64_t n = 0;
    for (size_t off = 0; off + FRAME_HEADER_BYTES <= b->len;
         off += FRAME_HEADER_BYTES + (size_t)get_u32(b->data + off))
        n++;
    return n;
}

/* Moves a buffer's bytes into the write request; the request frees them. */
static void take_buffer(struct write_req *w, struct wbuf *b)
{
    assert(b->len <= UINT_MAX);
    w->owned[w->nbufs] = w->bufs[w->nbufs] = uv_buf_init((char *)b->data, (unsigned)b->len);
    w->caps[w->nbufs] = b->cap;
    w->nleft = ++w->nbufs;
    w->len += b->len;
    w->c->hub->stats.frames_out += count_frames(b);
    wbuf_init(b);
}

/* Drops the first `n` bytes, written already, from what is left to write. */
static void advance(struct write_req *w, size_t n)
{
    unsigned first = 0;
    while (first < w->nleft && n >= w->bufs[first].len)
        n -= w->bufs[first++].len;
    for (unsigned i = first; i < w->nleft; i++)
        w->bufs[i - first] = w->bufs[i];
    w->nleft -= first;
    if (w->nleft) {
        w->bufs[0].base += n;
        w->bufs[0].len -= n;
    }
}

/*
 * Writes the batch at once if the socket takes it all, else hands what is left to
 * uv_write.  A uv_write that completes at once still costs the loop two more turns:
 * its callback waits for the next pass (and the loop polls without blocking to get
 * there), and its end sets the socket's epoll interest again, one epoll_ctl.  With 1 ms
 * tasks that was a third of a daemon's system calls, for each message it sent: a
 * task's replica, the replica's acknowledgement, the client's notice.  uv_try_write
 * refuses while an earlier uv_write is queued, so the bytes keep their order.
 * Returns -1 when the connection failed.
 */
static int write_now(struct conn *c, struct write_req *w)
{
    size_t total = w->len;
    int n = c->inflight ? UV_EAGAIN : uv_try_write((uv_stream_t *)&c->tcp, w->bufs, w->nleft);
    if (n >= 0 && (size_t)n == total) {
        release_buffers(w);
        return 0;
    }
    int rc = n;
    if (n >= 0 || n == UV_EAGAIN) {
        if (n > 0)
            advance(w, (size_t)n);
        w->len = total - (n > 0 ? (size_t)n : 0);
        rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, w->bufs, w->nleft, on_write);
        if (rc == 0) {
            c->inflight += w->len;
            c->hub->stats.writes_queued++;
            return 0;
        }
    }
    release_buffers(w);
    fail(c, "write failed", rc);
    return -1;
}

/* One uv_write with whatever may leave now: handshake frames always, messages only
 * once authenticated. */
void conn__flush(struct conn *c)
{
    if (link_linked(&c->dirty_link))
        link_remove(&c->dirty_link);
    c->late = false;
    if (c->closing || c->finished || c->phase == PHASE_CONNECTING)
        return;
    if (c->shutdown_sent) {
        /* Nothing can follow our FIN. */
        frame_batch_fini(&c->out);
        return;
    }
    bool messages = c->phase == PHASE_READY && !frame_batch_empty(&c->out);
    if (c->hs_out.len > 0 || messages) {
        struct write_req *w = xcalloc(1, sizeof *w);
        w->c = c;
        if (c->hs_out.len > 0)
            take_buffer(w, &c->hs_out);
        if (messages) {
            frame_batch_seal(&c->out);
            take_buffer(w, &c->out.buf);
            w->messages = true;
            frame_batch_init(&c->out);
            if (c->spare.data) {
                c->hub->spare_bytes -= c->spare.cap;
                c->out.buf = c->spare;
                wbuf_init(&c->spare);
            }
        }
        c->hub->stats.bytes_out += w->len;
        if (write_now(c, w) < 0)
            return;
    }
    if (c->close_requested && c->phase == PHASE_READY)
        start_shutdown(c);
}

static void become_ready(struct conn *c)
{
    c->phase = PHASE_READY;
    c->visible = true;
    uv_timer_stop(&c->timer);
    mark_dirty(c); /* messages queued while the handshake ran */
    log_info("connected %s role=%u id=%u", c->name, (unsigned)c->peer_role, (unsigned)c->peer_id);
    /* After conn_close the owner expects nothing but on_close. */
    if (!c->close_requested && c->hub->cb.on_ready)
        c->hub->cb.on_ready(c);
}

/* The handshake steps return why the peer must be dropped, or NULL.  The payloads are
 * handshake.c's; what is kept here is the connection's side: its phase and nonces. */
static const char *on_challenge(struct conn *c, struct rbuf *p)
{
    struct conn_hub *hub = c->hub;
    const char *why;
    if (handshake_get_challenge(p, c->server_nonce, &why) < 0)
        return why;
    struct handshake_response me = {.role = hub->my_role, .id = hub->my_id};
    auth_nonce(me.client_nonce);
    memcpy(c->client_nonce, me.client_nonce, AUTH_NONCE_BYTES);
    struct wbuf resp;
    wbuf_init(&resp);
    handshake_put_response(&resp, &hub->key, c->server_nonce, &me);
    frame_write_single(&c->hs_out, CONN_MSG_RESPONSE, resp.data, resp.len);
    wbuf_fini(&resp);
    c->phase = PHASE_WAIT_ACCEPT;
    mark_dirty(c);
    return NULL;
}

static const char *on_response(struct conn *c, struct rbuf *p)
{
    struct handshake_response peer;
    const char *why;
    if (handshake_check_response(p, &c->hub->key, c->server_nonce, &peer, &why) < 0)
        return why;
    memcpy(c->client_nonce, peer.client_nonce, AUTH_NONCE_BYTES);
    c->peer_role = peer.role;
    c->peer_id = peer.id;
    struct wbuf accept;
    wbuf_init(&accept);
    handshake_put_accept(&accept, &c->hub->key, c->server_nonce, c->client_nonce);
    frame_write_single(&c->hs_out, CONN_MSG_ACCEPT, accept.data, accept.len);
    wbuf_fini(&accept);
    become_ready(c);
    return NULL;
}

static const char *on_accept(struct conn *c, struct rbuf *p)
{
    const char *why;
    if (handshake_check_accept(p, &c->hub->key, c->server_nonce, c->client_nonce, &why) < 0)
        return why;
    become_ready(c);
    return NULL;
}

/* Whether received bytes still mean anything: not after a close began, nor once the
 * owner has asked to close an authenticated connection. */
static bool accepting_input(const struct conn *c)
{
    return !c->closing && !c->finished && !c->shutdown_sent &&
           !(c->close_requested && c->phase == PHASE_READY);
}

/* Runs one frame's messages through the handshake or the owner; returns why the peer
 * must be dropped (possibly formatted into `why`), or NULL. */
static const char *dispatch_frame(struct conn *c, struct frame_view *v, char *why, size_t n)
{
    uint16_t type;
    struct rbuf payload;
    int rc;
    while (accepting_input(c) && (rc = frame_next(v, &type, &payload)) != 0) {
        if (rc < 0)
            return "malformed frame (messages do not add up to the body)";
        c->hub->stats.messages_in++;
        const char *bad = NULL;
        if (c->phase == PHASE_WAIT_CHALLENGE && type == CONN_MSG_CHALLENGE)
            bad = on_challenge(c, &payload);
        else if (c->phase == PHASE_WAIT_RESPONSE && type == CONN_MSG_RESPONSE)
            bad = on_response(c, &payload);
        else if (c->phase == PHASE_WAIT_ACCEPT && type == CONN_MSG_ACCEPT)
            bad = on_accept(c, &payload);
        else if (c->phase != PHASE_READY || type < PROTO_FIRST_APP_TYPE) {
            snprintf(why, n, "unexpected message type 0x%04x %s the handshake", type,
                     c->phase == PHASE_READY ? "after" : "during");
            return why;
        } else {
            const char *reason = NULL;
            int err = c->hub->cb.on_message(c, type, &payload, &reason);
            if (err < 0) {
                snprintf(why, n, "message type 0x%04x rejected: %s", type,
                         reason ? reason : strerror(-err));
                return why;
            }
        }
        if (bad)
            return bad;
    }
    return NULL;
}

static const char *describe_frame_error(const uint8_t *h, int rc, uint32_t max_body,
                                        bool preauth, char *out, size_t n)
{
    uint32_t body_len = get_u32(h);
    unsigned magic = (unsigned)h[4] | (unsigned)h[5] << 8;
    if (rc == -EPROTO && magic != FRAME_MAGIC)
        snprintf(out, n, "bad magic 0x%04x", magic);
    else if (rc == -EPROTO && h[6] != FRAME_VERSION)
        snprintf(out, n, "unsupported protocol version %u (this side speaks %u)", (unsigned)h[6],
                 FRAME_VERSION);
    else if (rc == -EPROTO)
        snprintf(out, n, "bad frame flags 0x%02x", (unsigned)h[7]);
    else if (rc == -EMSGSIZE)
        snprintf(out, n, "frame body %u bytes over limit %u%s", body_len, max_body,
                 preauth ? " before the handshake" : "");
    else
        snprintf(out, n, "frame announces %u messages in a body of %u bytes", get_u32(h + 8),
                 body_len);
    return out;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct conn *c = h->data;
    if (c->yield) {
        c->yield = false;
        *buf = uv_buf_init(NULL, 0);
        return;
    }
    size_t limit = c->phase == PHASE_READY ? FRAME_HEADER_BYTES + (size_t)FRAME_MAX_BODY
                                           : PREAUTH_RBUF_MAX;
    if (c->rcap - c->rlen < READ_CHUNK && c->rcap < limit) {
        /* Room for the frame begun, whole, when its header is in: a 256 KiB chunk reply
         * grew by doubling from a read's worth, copying what it held each time. */
        size_t frame = c->rlen >= FRAME_HEADER_BYTES
                           ? FRAME_HEADER_BYTES + (size_t)get_u32(c->rbuf) : 0;
        size_t want = (frame > c->rlen ? frame : c->rlen) + READ_CHUNK;
        if (want < 2 * c->rcap)
            want = 2 * c->rcap;
        if (want > limit)
            want = limit;
        c->rbuf = xrealloc(c->rbuf, want);
        c->rcap = want;
    }
    /* A partial frame is always shorter than `limit`, so this is never empty. */
    *buf = uv_buf_init((char *)c->rbuf + c->rlen, (unsigned)(c->rcap - c->rlen));
}

static void peer_gone(struct conn *c, ssize_t nread)
{
    char why[160];
    if (c->close_requested) {
        begin_close(c, c->reason, CLOSE_QUIET);
        return;
    }
    const char *what = nread == UV_EOF ? "closed by peer" : uv_strerror((int)nread);
    c->error = (int)nread;
    if (c->phase == PHASE_READY)
        snprintf(why, sizeof why, "%s", what);
    else if (c->phase == PHASE_WAIT_ACCEPT)
        snprintf(why, sizeof why, "%s during the handshake (wrong cluster key?)", what);
    else
        snprintf(why, sizeof why, "%s during the handshake", what);
    begin_close(c, why, CLOSE_QUIET);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = s->data;
    if (nread == 0 || nread == UV_ENOBUFS || c->closing || c->finished)
        return;
    if (nread < 0) {
        peer_gone(c, nread);
        return;
    }
    if (!c->burst_ns)
        c->burst_ns = clock_mono_ns();
    c->hub->stats.bytes_in += (uint64_t)nread;
    c->rlen += (size_t)nread;
    size_t off = 0;
    char why[256];
    while (accepting_input(c)) {
        bool preauth = c->phase != PHASE_READY;
        uint32_t max_body = preauth ? FRAME_MAX_BODY_PREAUTH : FRAME_MAX_BODY;
        struct frame_view view;
        size_t frame_len;
        int rc = frame_parse(c->rbuf + off, c->rlen - off, max_body, &view, &frame_len);
        if (rc == FRAME_NEED_MORE)
            break;
        const char *bad = rc < 0 ? describe_frame_error(c->rbuf + off, rc, max_body, preauth,
                                                        why, sizeof why)
                                 : dispatch_frame(c, &view, why, sizeof why);
        if (bad) {
            drop(c, bad);
            break;
        }
        c->hub->stats.frames_in++;
        off += frame_len;
    }
    if (!accepting_input(c)) {
        c->rlen = 0;
    } else if (off > 0) {
        memmove(c->rbuf, c->rbuf + off, c->rlen - off);
        c->rlen -= off;
    }
    if (c->rlen == 0 && c->rcap > RBUF_KEEP) {
        free(c->rbuf);
        c->rbuf = NULL;
        c->rcap = 0;
    }
    /* A short read drained the socket: libuv reads no more now, the run is over. */
    if ((size_t)nread < buf->len) {
        c->burst_ns = 0;
    } else if (clock_mono_ns() - c->burst_ns > READ_BUDGET_NS) {
        c->burst_ns = 0;
        c->yield = true;
    }
}

static void start_reading(struct conn *c)
{
    /* Batching already coalesces; Nagle would only add latency to each pass's write. */
    uv_tcp_nodelay(&c->tcp, 1);
    int rc = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (rc < 0)
        fail(c, "cannot read", rc);
}

static void on_connect(uv_connect_t *req, int status)
{
    struct conn *c = req->data;
    if (status == UV_ECANCELED || c->closing || c->finished)
        return;
    if (status < 0) {
        fail(c, "cannot connect", status);
        return;
    }
    c->phase = PHASE_WAIT_CHALLENGE;
    start_reading(c);
}

void conn__start_connect(struct conn *c, const struct sockaddr *addr)
{
    c->phase = PHASE_CONNECTING;
    /* One deadline for connect and handshake: an unreachable host otherwise takes the
     * kernel's two minutes to fail. */
    uv_timer_start(&c->timer, on_timer, CONN_HANDSHAKE_MS, 0);
    int rc = uv_tcp_connect(&c->connect_req, &c->tcp, addr, on_connect);
    if (rc < 0)
        fail(c, "cannot connect", rc);
}

void conn__start_accepted(struct conn *c)
{
    c->phase = PHASE_WAIT_RESPONSE;
    auth_nonce(c->server_nonce);
    struct wbuf challenge;
    wbuf_init(&challenge);
    handshake_put_challenge(&challenge, c->server_nonce);
    frame_write_single(&c->hs_out, CONN_MSG_CHALLENGE, challenge.data, challenge.len);
    wbuf_fini(&challenge);
    mark_dirty(c);
    uv_timer_start(&c->timer, on_timer, CONN_HANDSHAKE_MS, 0);
    start_reading(c);
}

void *conn_data(const struct conn *c)
{
    return c->data;
}

void conn_set_data(struct conn *c, void *data)
{
    c->data = data;
}

struct conn_hub *conn_hub_of(const struct conn *c)
{
    return c->hub;
}

uint8_t conn_peer_role(const struct conn *c)
{
    return c->peer_role;
}

uint32_t conn_peer_id(const struct conn *c)
{
    return c->peer_id;
}

const char *conn_peer_name(const struct conn *c)
{
    return c->name;
}

int conn_error(const struct conn *c)
{
    return c->error;
}

int conn_is_ready(const struct conn *c)
{
    /* Still 1 in on_close, so an owner can tell which connections it had counted. */
    return c->phase == PHASE_READY;
}

struct wbuf *conn_msg_begin(struct conn *c, uint16_t type, size_t *at)
{
    /* Lower types are the handshake's; the peer would drop us for sending one. */
    assert(type >= PROTO_FIRST_APP_TYPE);
    *at = frame_msg_begin(&c->out, type);
    return &c->out.buf;
}

struct wbuf *conn_msg_join(struct conn *c, uint16_t type, size_t most, size_t *at)
{
    assert(type >= PROTO_FIRST_APP_TYPE);
    *at = frame_msg_join(&c->out, type, most);
    return &c->out.buf;
}

void conn_msg_end(struct conn *c, size_t at)
{
    bool joined = at == c->out.last_at;
    frame_msg_end(&c->out, at);
    c->hub->stats.messages_out += !joined;
    mark_dirty(c);
}

void conn_msg_end_late(struct conn *c, size_t at)
{
    bool joined = at == c->out.last_at;
    frame_msg_end(&c->out, at);
    c->hub->stats.messages_out += !joined;
    if (c->closing || c->finished || link_linked(&c->dirty_link))
        return; /* leaving this pass, or waiting already */
    if (c->out.buf.len >= FRAME_SOFT_BODY) {
        mark_dirty(c);
        return;
    }
    c->late = true;
    link_append(&c->hub->late, &c->dirty_link);
    conn__hub_want_late(c->hub);
}

void conn_flush(struct conn *c)
{
    conn__flush(c);
}

size_t conn_pending_bytes(const struct conn *c)
{
    return c->out.buf.len + c->hs_out.len + c->inflight;
}

size_t conn_queued_bytes(const struct conn *c)
{
    return c->out.buf.len;
}

void conn_close(struct conn *c, const char *reason)
{
    if (c->closing || c->finished || c->close_requested)
        return;
    c->close_requested = true;
    set_reason(c, reason ? reason : "closed");
    mark_dirty(c);
}

void conn_drop(struct conn *c, const char *reason)
{
    drop(c, reason ? reason : "dropped by its owner");
}
