/*
 * conn — authenticated, framed TCP connections on one libuv loop (see conn.h).
 *
 * Owns the hub, its listener, its uv_prepare flusher and every connection with its
 * buffers and write requests.  Called by the node daemon and the client library on
 * their loop thread.
 *
 * Two rules shape this file.  First, output is only marked during events and written
 * once per loop pass by the prepare callback: each dirty connection's batch is sealed
 * and handed, buffer and all, to a single uv_write, so thousands of small messages
 * become a few frames and one system call.  Second, a connection is never freed, and
 * its owner never hears on_close, from inside one of its own callbacks: closing only
 * marks it and queues it for the same prepare callback, which calls on_close and then
 * uv_close; the memory goes when libuv hands both handles back.  So code that runs a
 * callback re-checks `closing`/`finished` afterwards, and nothing it holds goes away.
 */
#include "core/net/conn.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/frame.h"

#define LISTEN_BACKLOG 1024
#define READ_CHUNK (64u * 1024)
/* What a peer that has not authenticated can make us buffer. */
#define PREAUTH_RBUF_MAX READ_CHUNK
/* An emptied receive buffer above this is released, so that one 16 MiB frame does not
 * pin 16 MiB for the rest of the connection's life. */
#define RBUF_KEEP (1u << 20)
#define FIRST_APP_TYPE 0x0100
#define RESPONSE_BYTES (AUTH_NONCE_BYTES + 1 + 4 + AUTH_MAC_BYTES)

/* Intrusive circular list; a node whose next is itself is on no list. */
struct link {
    struct link *prev, *next;
};

#define CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

enum phase {
    PHASE_CONNECTING,     /* outgoing, TCP connect pending */
    PHASE_WAIT_CHALLENGE, /* outgoing, connected */
    PHASE_WAIT_RESPONSE,  /* incoming, CHALLENGE queued */
    PHASE_WAIT_ACCEPT,    /* outgoing, RESPONSE queued */
    PHASE_READY,
};

/* How a close is reported in the log. */
enum close_kind { CLOSE_QUIET, CLOSE_WARN, CLOSE_DROP };

struct conn_hub {
    uv_loop_t *loop;                /* borrowed */
    struct auth_key key;
    uint8_t my_role;
    uint32_t my_id;
    struct conn_callbacks cb;
    void *data;                     /* borrowed, the owner's */
    uv_prepare_t prepare;
    uv_tcp_t *listener;             /* owned; NULL when not listening */
    struct link conns;              /* struct conn.all: every conn not yet finished */
    struct link dirty;              /* struct conn.dirty_link: output to write this pass */
    struct link closing;            /* struct conn.closing_link: on_close and uv_close due */
    unsigned refs;                  /* prepare + listeners + conns not yet released by libuv */
    bool destroying;
    struct conn_hub_stats stats;
};

struct conn {
    struct conn_hub *hub;           /* borrowed; outlives the conn */
    uv_tcp_t tcp;
    uv_timer_t timer;               /* handshake deadline, then the linger of conn_close */
    uv_connect_t connect_req;
    uv_shutdown_t shutdown_req;
    struct link all, dirty_link, closing_link;
    enum phase phase;
    bool visible;                   /* the owner knows it: connected out, or on_ready ran */
    bool close_requested;           /* conn_close: flush, then shut down */
    bool shutdown_sent;             /* FIN queued; waiting for the peer's EOF or the linger */
    bool closing;                   /* on the hub's closing list */
    bool finished;                  /* on_close ran and uv_close was called */
    unsigned handles;               /* of tcp and timer, not yet closed */
    char *reason;                   /* owned; NULL until a close starts */
    uint8_t server_nonce[AUTH_NONCE_BYTES];
    uint8_t client_nonce[AUTH_NONCE_BYTES];
    uint8_t peer_role;
    uint32_t peer_id;
    char name[64];
    void *data;                     /* borrowed, the owner's */
    struct wbuf hs_out;             /* handshake frames; may leave before authentication */
    struct frame_batch out;         /* messages; leave only once authenticated */
    uint8_t *rbuf;                  /* owned; received bytes not yet parsed */
    size_t rlen, rcap;
    size_t inflight;                /* bytes handed to uv_write and not yet completed */
};

/* One per uv_write: owns the buffers swapped out of the connection. */
struct write_req {
    uv_write_t req;
    struct conn *c;
    uv_buf_t bufs[2];
    unsigned nbufs;
    size_t len;
};

static void link_init(struct link *l)
{
    l->prev = l->next = l;
}

static bool link_linked(const struct link *l)
{
    return l->next != l;
}

static void link_append(struct link *head, struct link *l)
{
    l->prev = head->prev;
    l->next = head;
    head->prev->next = l;
    head->prev = l;
}

static void link_remove(struct link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    link_init(l);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int parse_addr(const char *host, int port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (!host || port < 0 || port > 65535)
        return -EINVAL;
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)ss) == 0)
        return 0;
    if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)ss) == 0)
        return 0;
    return -EINVAL;
}

static void format_addr(const struct sockaddr_storage *ss, char *out, size_t n)
{
    char ip[64] = "?";
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        uv_ip4_name(a, ip, sizeof ip);
        snprintf(out, n, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(a, ip, sizeof ip);
        snprintf(out, n, "[%s]:%u", ip, (unsigned)ntohs(a->sin6_port));
    } else {
        snprintf(out, n, "unknown");
    }
}

static void hub_release(struct conn_hub *hub)
{
    assert(hub->refs > 0);
    if (--hub->refs == 0) {
        assert(hub->destroying);
        free(hub);
    }
}

static void set_reason(struct conn *c, const char *reason)
{
    /* Copy first: `reason` may be c->reason itself. */
    char *copy = xstrdup(reason);
    free(c->reason);
    c->reason = copy;
}

static void conn_free(struct conn *c)
{
    struct conn_hub *hub = c->hub;
    free(c->reason);
    free(c->rbuf);
    wbuf_fini(&c->hs_out);
    frame_batch_fini(&c->out);
    free(c);
    hub_release(hub);
}

static void on_conn_handle_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    if (--c->handles == 0)
        conn_free(c);
}

static struct conn *conn_alloc(struct conn_hub *hub, void *data)
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

/* Keeps the loop alive while there is work for the prepare callback, so an on_close
 * for a failed conn_connect is delivered even when nothing else is pending. */
static void want_prepare(struct conn_hub *hub)
{
    if (!hub->destroying)
        uv_ref((uv_handle_t *)&hub->prepare);
}

static void mark_dirty(struct conn *c)
{
    if (c->closing || c->finished || link_linked(&c->dirty_link))
        return;
    link_append(&c->hub->dirty, &c->dirty_link);
    want_prepare(c->hub);
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
    want_prepare(c->hub);
}

static void drop(struct conn *c, const char *reason)
{
    begin_close(c, reason, CLOSE_DROP);
}

/* The end of a connection: the owner hears of it once, then libuv releases it. */
static void finish(struct conn *c)
{
    assert(!c->finished);
    struct conn_hub *hub = c->hub;
    link_remove(&c->all);
    if (link_linked(&c->dirty_link))
        link_remove(&c->dirty_link);
    if (link_linked(&c->closing_link))
        link_remove(&c->closing_link);
    c->closing = true;
    c->finished = true;
    if (!c->reason)
        set_reason(c, "closed");
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

static void on_write(uv_write_t *req, int status)
{
    struct write_req *w = CONTAINER_OF(req, struct write_req, req);
    struct conn *c = w->c;
    c->inflight -= w->len;
    for (unsigned i = 0; i < w->nbufs; i++)
        free(w->bufs[i].base);
    free(w);
    if (status < 0 && status != UV_ECANCELED) {
        char why[128];
        snprintf(why, sizeof why, "write failed: %s", uv_strerror(status));
        begin_close(c, why, CLOSE_QUIET);
    }
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
    w->bufs[w->nbufs++] = uv_buf_init((char *)b->data, (unsigned)b->len);
    w->len += b->len;
    w->c->hub->stats.frames_out += count_frames(b);
    wbuf_init(b);
}

/* One uv_write with whatever may leave now: handshake frames always, messages only
 * once authenticated. */
static void flush(struct conn *c)
{
    if (link_linked(&c->dirty_link))
        link_remove(&c->dirty_link);
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
            frame_batch_init(&c->out);
        }
        int rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, w->bufs, w->nbufs, on_write);
        if (rc < 0) {
            for (unsigned i = 0; i < w->nbufs; i++)
                free(w->bufs[i].base);
            free(w);
            char why[128];
            snprintf(why, sizeof why, "write failed: %s", uv_strerror(rc));
            begin_close(c, why, CLOSE_QUIET);
            return;
        }
        c->inflight += w->len;
        c->hub->stats.bytes_out += w->len;
    }
    if (c->close_requested && c->phase == PHASE_READY)
        start_shutdown(c);
}

/*
 * Once per loop pass, before the loop sleeps.  Closes first, because an owner's
 * on_close often queues messages to other peers, which must leave in this same pass;
 * flushing calls no owner code, so it can only add closes (a failed write), never
 * more output.
 */
static void on_prepare(uv_prepare_t *p)
{
    struct conn_hub *hub = p->data;
    for (;;) {
        while (!hub->destroying && link_linked(&hub->closing))
            finish(CONTAINER_OF(hub->closing.next, struct conn, closing_link));
        if (hub->destroying)
            return;
        if (!link_linked(&hub->dirty))
            break;
        while (link_linked(&hub->dirty))
            flush(CONTAINER_OF(hub->dirty.next, struct conn, dirty_link));
    }
    uv_unref((uv_handle_t *)p);
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

static void unexpected(struct conn *c, uint16_t type)
{
    char why[96];
    snprintf(why, sizeof why, "unexpected message type 0x%04x during the handshake", type);
    drop(c, why);
}

static void handshake_step(struct conn *c, uint16_t type, struct rbuf *p)
{
    struct conn_hub *hub = c->hub;
    uint8_t mac[AUTH_MAC_BYTES];
    switch (c->phase) {
    case PHASE_WAIT_CHALLENGE: {
        if (type != CONN_MSG_CHALLENGE) {
            unexpected(c, type);
            return;
        }
        const uint8_t *nonce = rbuf_bytes(p, AUTH_NONCE_BYTES);
        if (!nonce || p->left != 0) {
            drop(c, "malformed CHALLENGE");
            return;
        }
        memcpy(c->server_nonce, nonce, AUTH_NONCE_BYTES);
        auth_nonce(c->client_nonce);
        auth_client_mac(&hub->key, c->server_nonce, c->client_nonce, hub->my_role, hub->my_id, mac);
        struct wbuf resp;
        wbuf_init(&resp);
        wbuf_put(&resp, c->client_nonce, AUTH_NONCE_BYTES);
        wbuf_put_u8(&resp, hub->my_role);
        wbuf_put_u32(&resp, hub->my_id);
        wbuf_put(&resp, mac, AUTH_MAC_BYTES);
        frame_write_single(&c->hs_out, CONN_MSG_RESPONSE, resp.data, resp.len);
        wbuf_fini(&resp);
        c->phase = PHASE_WAIT_ACCEPT;
        mark_dirty(c);
        return;
    }
    case PHASE_WAIT_RESPONSE: {
        if (type != CONN_MSG_RESPONSE) {
            unexpected(c, type);
            return;
        }
        const uint8_t *nonce = rbuf_bytes(p, AUTH_NONCE_BYTES);
        uint8_t role = rbuf_u8(p);
        uint32_t id = rbuf_u32(p);
        const uint8_t *their_mac = rbuf_bytes(p, AUTH_MAC_BYTES);
        if (!rbuf_ok(p) || p->left != 0) {
            drop(c, "malformed RESPONSE");
            return;
        }
        auth_client_mac(&hub->key, c->server_nonce, nonce, role, id, mac);
        if (!auth_mac_equal(mac, their_mac)) {
            drop(c, "wrong key (MAC mismatch)");
            return;
        }
        if (role != CONN_ROLE_NODE && role != CONN_ROLE_CLIENT) {
            char why[64];
            snprintf(why, sizeof why, "unknown peer role %u", (unsigned)role);
            drop(c, why);
            return;
        }
        memcpy(c->client_nonce, nonce, AUTH_NONCE_BYTES);
        c->peer_role = role;
        c->peer_id = id;
        auth_server_mac(&hub->key, c->server_nonce, c->client_nonce, mac);
        frame_write_single(&c->hs_out, CONN_MSG_ACCEPT, mac, AUTH_MAC_BYTES);
        become_ready(c);
        return;
    }
    case PHASE_WAIT_ACCEPT: {
        if (type != CONN_MSG_ACCEPT) {
            unexpected(c, type);
            return;
        }
        const uint8_t *their_mac = rbuf_bytes(p, AUTH_MAC_BYTES);
        if (!their_mac || p->left != 0) {
            drop(c, "malformed ACCEPT");
            return;
        }
        auth_server_mac(&hub->key, c->server_nonce, c->client_nonce, mac);
        if (!auth_mac_equal(mac, their_mac)) {
            drop(c, "wrong key (server's ACCEPT MAC mismatch)");
            return;
        }
        become_ready(c);
        return;
    }
    case PHASE_CONNECTING:
    case PHASE_READY:
        break;
    }
    assert(0 && "handshake_step outside the handshake");
}

/* Whether received bytes still mean anything: not after a close began, nor once the
 * owner has asked to close an authenticated connection. */
static bool accepting_input(const struct conn *c)
{
    return !c->closing && !c->finished && !c->shutdown_sent &&
           !(c->close_requested && c->phase == PHASE_READY);
}

static void dispatch_frame(struct conn *c, struct frame_view *v)
{
    for (;;) {
        if (!accepting_input(c))
            return;
        uint16_t type;
        struct rbuf payload;
        int rc = frame_next(v, &type, &payload);
        if (rc == 0)
            return;
        if (rc < 0) {
            drop(c, "malformed frame (messages do not add up to the body)");
            return;
        }
        c->hub->stats.messages_in++;
        if (c->phase != PHASE_READY) {
            handshake_step(c, type, &payload);
            continue;
        }
        if (type < FIRST_APP_TYPE) {
            char why[96];
            snprintf(why, sizeof why, "handshake message type 0x%04x after the handshake", type);
            drop(c, why);
            return;
        }
        const char *reason = NULL;
        int err = c->hub->cb.on_message(c, type, &payload, &reason);
        if (err < 0) {
            char why[256];
            snprintf(why, sizeof why, "message type 0x%04x rejected: %s", type,
                     reason ? reason : strerror(-err));
            drop(c, why);
            return;
        }
    }
}

static void describe_frame_error(const uint8_t *h, int rc, uint32_t max_body, bool preauth,
                                 char *out, size_t n)
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
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct conn *c = h->data;
    size_t limit = c->phase == PHASE_READY ? FRAME_HEADER_BYTES + (size_t)FRAME_MAX_BODY
                                           : PREAUTH_RBUF_MAX;
    if (c->rcap - c->rlen < READ_CHUNK && c->rcap < limit) {
        size_t want = c->rlen + READ_CHUNK;
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
    (void)buf;
    struct conn *c = s->data;
    if (nread == 0 || c->closing || c->finished)
        return;
    if (nread < 0) {
        peer_gone(c, nread);
        return;
    }
    c->hub->stats.bytes_in += (uint64_t)nread;
    c->rlen += (size_t)nread;
    size_t off = 0;
    while (accepting_input(c)) {
        bool preauth = c->phase != PHASE_READY;
        uint32_t max_body = preauth ? FRAME_MAX_BODY_PREAUTH : FRAME_MAX_BODY;
        struct frame_view view;
        size_t frame_len;
        int rc = frame_parse(c->rbuf + off, c->rlen - off, max_body, &view, &frame_len);
        if (rc == FRAME_NEED_MORE)
            break;
        if (rc < 0) {
            char why[128];
            describe_frame_error(c->rbuf + off, rc, max_body, preauth, why, sizeof why);
            drop(c, why);
            break;
        }
        c->hub->stats.frames_in++;
        dispatch_frame(c, &view);
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
}

static void on_connect(uv_connect_t *req, int status)
{
    struct conn *c = req->data;
    if (status == UV_ECANCELED || c->closing || c->finished)
        return;
    if (status < 0) {
        char why[160];
        snprintf(why, sizeof why, "cannot connect to %s: %s", c->name, uv_strerror(status));
        begin_close(c, why, CLOSE_QUIET);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->phase = PHASE_WAIT_CHALLENGE;
    int rc = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (rc < 0) {
        char why[128];
        snprintf(why, sizeof why, "cannot read: %s", uv_strerror(rc));
        begin_close(c, why, CLOSE_QUIET);
    }
}

static void on_connection(uv_stream_t *server, int status)
{
    struct conn_hub *hub = server->data;
    if (status < 0) {
        /* EMFILE and friends: the listener stays, the next accept may work. */
        log_warn("accept failed: %s", uv_strerror(status));
        return;
    }
    struct conn *c = conn_alloc(hub, NULL);
    c->phase = PHASE_WAIT_RESPONSE;
    int rc = uv_accept(server, (uv_stream_t *)&c->tcp);
    if (rc < 0) {
        log_warn("accept failed: %s", uv_strerror(rc));
        finish(c);
        return;
    }
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0)
        format_addr(&ss, c->name, sizeof c->name);
    uv_tcp_nodelay(&c->tcp, 1);
    auth_nonce(c->server_nonce);
    frame_write_single(&c->hs_out, CONN_MSG_CHALLENGE, c->server_nonce, AUTH_NONCE_BYTES);
    mark_dirty(c);
    uv_timer_start(&c->timer, on_timer, CONN_HANDSHAKE_MS, 0);
    rc = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (rc < 0) {
        char why[128];
        snprintf(why, sizeof why, "cannot read: %s", uv_strerror(rc));
        begin_close(c, why, CLOSE_QUIET);
    }
}

static void on_prepare_closed(uv_handle_t *h)
{
    hub_release(h->data);
}

static void on_listener_closed(uv_handle_t *h)
{
    struct conn_hub *hub = h->data;
    free(h);
    hub_release(hub);
}

struct conn_hub *conn_hub_create(uv_loop_t *loop, const struct auth_key *key, uint8_t my_role,
                                 uint32_t my_id, const struct conn_callbacks *cb, void *data)
{
    if (!loop || !key || !cb || !cb->on_message || auth_init() < 0)
        return NULL;
    struct conn_hub *hub = xcalloc(1, sizeof *hub);
    hub->loop = loop;
    hub->key = *key;
    hub->my_role = my_role;
    hub->my_id = my_id;
    hub->cb = *cb;
    hub->data = data;
    link_init(&hub->conns);
    link_init(&hub->dirty);
    link_init(&hub->closing);
    uv_prepare_init(loop, &hub->prepare);
    hub->prepare.data = hub;
    uv_prepare_start(&hub->prepare, on_prepare);
    /* Referenced only while it has work (want_prepare), so an idle hub does not keep
     * uv_run from returning. */
    uv_unref((uv_handle_t *)&hub->prepare);
    hub->refs = 1;
    return hub;
}

void conn_hub_destroy(struct conn_hub *hub)
{
    if (!hub || hub->destroying)
        return;
    hub->destroying = true;
    if (hub->listener) {
        uv_close((uv_handle_t *)hub->listener, on_listener_closed);
        hub->listener = NULL;
    }
    /* on_close may close or drop other conns; they are still on the list. */
    while (link_linked(&hub->conns)) {
        struct conn *c = CONTAINER_OF(hub->conns.next, struct conn, all);
        if (!c->closing)
            set_reason(c, "hub destroyed");
        finish(c);
    }
    uv_close((uv_handle_t *)&hub->prepare, on_prepare_closed);
}

void *conn_hub_data(const struct conn_hub *hub)
{
    return hub->data;
}

uv_loop_t *conn_hub_loop(const struct conn_hub *hub)
{
    return hub->loop;
}

static int start_listener(struct conn_hub *hub, const char *what, const struct sockaddr *addr,
                          int fd, char **cause)
{
    if (hub->destroying || hub->listener) {
        if (cause)
            *cause = xasprintf("cannot listen on %s: %s", what,
                               hub->destroying ? "the hub is being destroyed" : "already listening");
        return -EALREADY;
    }
    uv_tcp_t *l = xmalloc(sizeof *l);
    uv_tcp_init(hub->loop, l);
    l->data = hub;
    hub->refs++;
    int rc = addr ? uv_tcp_bind(l, addr, 0) : uv_tcp_open(l, fd);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)l, LISTEN_BACKLOG, on_connection);
    if (rc < 0) {
        uv_close((uv_handle_t *)l, on_listener_closed);
        if (cause)
            *cause = xasprintf("cannot listen on %s: %s", what, uv_strerror(rc));
        return rc;
    }
    hub->listener = l;
    log_info("listening on %s port=%d", what, conn_hub_port(hub));
    return 0;
}

int conn_hub_listen(struct conn_hub *hub, const char *host, int port, char **cause)
{
    struct sockaddr_storage ss;
    if (parse_addr(host, port, &ss) < 0) {
        if (cause)
            *cause = xasprintf("cannot listen on '%s' port %d: not a numeric IPv4 or IPv6 address "
                               "and port", host ? host : "(null)", port);
        return -EINVAL;
    }
    char what[80];
    format_addr(&ss, what, sizeof what);
    return start_listener(hub, what, (const struct sockaddr *)&ss, -1, cause);
}

int conn_hub_listen_fd(struct conn_hub *hub, int fd, char **cause)
{
    char what[32];
    snprintf(what, sizeof what, "inherited socket %d", fd);
    return start_listener(hub, what, NULL, fd, cause);
}

int conn_hub_port(const struct conn_hub *hub)
{
    if (!hub->listener)
        return -1;
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getsockname(hub->listener, (struct sockaddr *)&ss, &len) < 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

struct conn *conn_connect(struct conn_hub *hub, const char *host, int port, void *data,
                          char **cause)
{
    struct sockaddr_storage ss;
    if (parse_addr(host, port, &ss) < 0 || port == 0) {
        if (cause)
            *cause = xasprintf("cannot connect to '%s' port %d: not a numeric IPv4 or IPv6 "
                               "address and port", host ? host : "(null)", port);
        return NULL;
    }
    if (hub->destroying) {
        if (cause)
            *cause = xasprintf("cannot connect to '%s': the hub is being destroyed", host);
        return NULL;
    }
    struct conn *c = conn_alloc(hub, data);
    c->visible = true;
    c->phase = PHASE_CONNECTING;
    format_addr(&ss, c->name, sizeof c->name);
    /* One deadline for connect and handshake: an unreachable host otherwise takes the
     * kernel's two minutes to fail. */
    uv_timer_start(&c->timer, on_timer, CONN_HANDSHAKE_MS, 0);
    int rc = uv_tcp_connect(&c->connect_req, &c->tcp, (const struct sockaddr *)&ss, on_connect);
    if (rc < 0) {
        char why[160];
        snprintf(why, sizeof why, "cannot connect to %s: %s", c->name, uv_strerror(rc));
        begin_close(c, why, CLOSE_QUIET);
    }
    return c;
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

int conn_is_ready(const struct conn *c)
{
    return c->phase == PHASE_READY && !c->closing && !c->finished;
}

struct wbuf *conn_msg_begin(struct conn *c, uint16_t type, size_t *at)
{
    /* Lower types are the handshake's; the peer would drop us for sending one. */
    assert(type >= FIRST_APP_TYPE);
    *at = frame_msg_begin(&c->out, type);
    return &c->out.buf;
}

void conn_msg_end(struct conn *c, size_t at)
{
    frame_msg_end(&c->out, at);
    c->hub->stats.messages_out++;
    mark_dirty(c);
}

void conn_flush(struct conn *c)
{
    flush(c);
}

size_t conn_pending_bytes(const struct conn *c)
{
    return c->out.buf.len + c->hs_out.len + c->inflight;
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

void conn_hub_stats(const struct conn_hub *hub, struct conn_hub_stats *out)
{
    *out = hub->stats;
}
