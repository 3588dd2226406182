/*
 * conn — authenticated, framed TCP connections on a libuv loop, for daemons and
 * clients alike.
 *
 * A `conn_hub` belongs to one loop.  It owns the cluster key, the listening socket, every
 * connection on the loop, and one uv_prepare handle that flushes each dirty
 * connection's batch once per loop pass, right before the loop sleeps (Redis's
 * beforeSleep; STYLE rule 4).  Callers append messages to a connection at any time
 * during a pass; they leave in as few frames and writes as possible.  Messages that
 * nobody waits on may be marked late: they wait a few ms for company.
 *
 * Every connection starts with the auth.h handshake (the accepting side challenges).
 * Messages queued on an outgoing connection before it is authenticated wait for it.
 * Until the handshake completes only handshake frames of at most
 * FRAME_MAX_BODY_PREAUTH bytes are accepted.  A peer that sends garbage, an oversize
 * frame, a wrong version, a wrong MAC, or does not finish the handshake within
 * CONN_HANDSHAKE_MS is dropped with a WARN log naming its address and the reason; the
 * hub goes on serving everyone else.
 *
 * Called by core/runtime (node daemon) and core/client (client.c, submit.c), on
 * their loop thread only.  Callbacks run on that thread.  A connection is never freed
 * inside one of its own callbacks: conn_close/conn_drop mark it, and the hub frees it
 * after the callback returns, calling on_close exactly once first.
 */
#ifndef JACKDAW_CONN_H
#define JACKDAW_CONN_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "core/base/wbuf.h"
#include "core/net/auth.h"

#define CONN_HANDSHAKE_MS 5000

/* Who is at the other end; sent in the handshake RESPONSE. */
enum conn_role { CONN_ROLE_NODE = 1, CONN_ROLE_CLIENT = 2 };

/* Handshake message types (PROTO_RANGE_HANDSHAKE, proto.h; handled inside conn.c). */
enum {
    CONN_MSG_CHALLENGE = 0x0001,
    CONN_MSG_RESPONSE = 0x0002,
    CONN_MSG_ACCEPT = 0x0003,
};

struct conn;
struct conn_hub;

struct conn_callbacks {
    /* The handshake completed: conn_peer_role/conn_peer_id are valid.  May be NULL. */
    void (*on_ready)(struct conn *c);
    /*
     * One message (type >= PROTO_FIRST_APP_TYPE, proto.h).  Return 0, or a negative
     * errno to drop the connection; then *reason (static or owned-by-callee string, may
     * stay NULL) is logged.  The payload is borrowed for the call only.
     */
    int (*on_message)(struct conn *c, uint16_t type, struct rbuf *payload, const char **reason);
    /* The connection is gone (peer closed, error, drop, conn_close, failed connect).
     * Called once; `c` is freed right after it returns. */
    void (*on_close)(struct conn *c, const char *reason);
};

/* my_role and my_id go into this side's RESPONSE when it connects out. */
struct conn_hub *conn_hub_create(uv_loop_t *loop, const struct auth_key *key, uint8_t my_role,
                                 uint32_t my_id, const struct conn_callbacks *cb, void *data);
/* Closes the listener and every connection (on_close runs for each), then frees the hub
 * once libuv has released its handles; the loop must run until then.  NULL is a no-op. */
void conn_hub_destroy(struct conn_hub *hub);
void *conn_hub_data(const struct conn_hub *hub);
uv_loop_t *conn_hub_loop(const struct conn_hub *hub);
/* Gives back what the connections keep between bursts: an empty receive buffer past a
 * small size, and the spare send buffer.  For a quiet moment (a daemon after a big job),
 * not a busy one: they grow again as traffic needs. */
void conn_hub_trim(struct conn_hub *hub);

/* Listens on host:port (port 0 picks one).  0 or negative errno with *cause. */
int conn_hub_listen(struct conn_hub *hub, const char *host, int port, char **cause);
/* Listens on an inherited, already bound and listening socket. */
int conn_hub_listen_fd(struct conn_hub *hub, int fd, char **cause);
/* The port listened on, or -1. */
int conn_hub_port(const struct conn_hub *hub);

/* Connects out (asynchronously).  Returns the connection at once; on_ready or on_close
 * follows.  NULL only when host is not a numeric address (with *cause). */
struct conn *conn_connect(struct conn_hub *hub, const char *host, int port, void *data,
                          char **cause);

void *conn_data(const struct conn *c);
void conn_set_data(struct conn *c, void *data);
struct conn_hub *conn_hub_of(const struct conn *c);
uint8_t conn_peer_role(const struct conn *c);
uint32_t conn_peer_id(const struct conn *c);
/* "127.0.0.1:40123" — for logs and error messages. */
const char *conn_peer_name(const struct conn *c);
/* 1 once the handshake completed. */
int conn_is_ready(const struct conn *c);
/* Why the other end went away, for on_close: the libuv error that ended the connection
 * (UV_EOF when the peer closed it, UV_ECONNRESET, UV_ECONNREFUSED when connecting was
 * refused, ...), or 0 when this side closed or dropped it or it is still open.  A
 * refusal says that nothing listens at the peer's address: a crashed daemon, not a
 * stopped or unreachable one (node.c's failure evidence). */
int conn_error(const struct conn *c);

/*
 * Appends one message: begin returns the wbuf to write the payload into and an offset
 * for end.  The hub seals and writes the batch at the end of the loop pass.
 */
struct wbuf *conn_msg_begin(struct conn *c, uint16_t type, size_t *at);
/* As conn_msg_begin, but extends the last message appended when it is of `type` and under
 * `most` payload bytes (frame_msg_join): for payloads that are sequences of records. */
struct wbuf *conn_msg_join(struct conn *c, uint16_t type, size_t most, size_t *at);
void conn_msg_end(struct conn *c, size_t at);
/*
 * As conn_msg_end, for a message that may wait for company: it leaves with the next
 * batch this connection writes anyway, at most CONN_LATE_MS after it was queued, or
 * once its batch holds a frame's worth.  For notices nobody waits on (a client's
 * task-end notices: one a task, each a write and a wake-up of the client when sent at
 * once).
 */
void conn_msg_end_late(struct conn *c, size_t at);
#define CONN_LATE_MS 5
/* How long late messages may wait on this hub (CONN_LATE_MS unless set). */
void conn_hub_set_late_ms(struct conn_hub *hub, uint32_t ms);
/* Writes now instead of at the end of the pass (before a process exits). */
void conn_flush(struct conn *c);
/* Bytes queued or in flight but not yet acknowledged by the kernel (backpressure). */
size_t conn_pending_bytes(const struct conn *c);
/* Bytes of messages appended and not yet handed to the kernel: non-zero when a batch
 * will leave at the end of this pass anyway, so a small message may ride along. */
size_t conn_queued_bytes(const struct conn *c);

/* Flushes what is queued, then closes. */
void conn_close(struct conn *c, const char *reason);
/* Closes at once, discarding what is queued; logs the reason at WARN. */
void conn_drop(struct conn *c, const char *reason);

/* What a hub's idle spare send buffers (a written batch's, kept for the next) may hold
 * together, however many connections it has (conn.c says why). */
#define CONN_HUB_SPARE_BYTES (2u << 20)

/* Test hooks: counters since the hub was created. */
struct conn_hub_stats {
    uint64_t frames_out, frames_in, messages_out, messages_in, bytes_out, bytes_in;
    uint64_t dropped;       /* connections dropped for a protocol or auth error */
    uint64_t writes_queued; /* batches the socket did not take at once (uv_write) */
    uint64_t spare_bytes;   /* now: capacity of the idle spare send buffers */
};
void conn_hub_stats(const struct conn_hub *hub, struct conn_hub_stats *out);

#endif
