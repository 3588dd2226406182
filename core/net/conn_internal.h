/*
 * conn_internal — what conn.c (one connection: handshake, reading, batching, closing)
 * and conn_hub.c (the hub: listener, accept, connect, the per-pass flusher) share.
 * Private to those two files; everyone else uses conn.h.
 *
 * Lifetimes: a conn is freed when libuv has closed both of its handles, and releases
 * its reference on the hub then; the hub is freed when its last reference goes, which
 * can only happen after conn_hub_destroy.  So a conn's hub pointer is always valid, and
 * a callback that destroys the hub leaves every conn it can still see allocated.
 */
#ifndef JACKDAW_CONN_INTERNAL_H
#define JACKDAW_CONN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "core/net/conn.h"
#include "core/net/frame.h"

/* Intrusive circular list; a node whose next is itself is on no list. */
struct link {
    struct link *prev, *next;
};

#define CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static inline void link_init(struct link *l)
{
    l->prev = l->next = l;
}

static inline bool link_linked(const struct link *l)
{
    return l->next != l;
}

static inline void link_append(struct link *head, struct link *l)
{
    l->prev = head->prev;
    l->next = head;
    head->prev->next = l;
    head->prev = l;
}

static inline void link_remove(struct link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    link_init(l);
}

enum conn_phase {
    PHASE_CONNECTING,     /* outgoing, TCP connect pending */
    PHASE_WAIT_CHALLENGE, /* outgoing, connected */
    PHASE_WAIT_RESPONSE,  /* incoming, CHALLENGE queued */
    PHASE_WAIT_ACCEPT,    /* outgoing, RESPONSE queued */
    PHASE_READY,
};

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
    struct link late;               /* struct conn.dirty_link: output that may wait, at
                                       most CONN_LATE_MS (conn_msg_end_late) */
    uv_timer_t late_timer;          /* moves `late` to `dirty` if no pass has by then */
    uint64_t late_since;            /* uv_now when `late` last became non-empty */
    uint32_t late_ms;
    struct link closing;            /* struct conn.closing_link: on_close and uv_close due */
    unsigned refs;                  /* prepare + listeners + conns not yet released by libuv */
    bool destroying;
    size_t spare_bytes;             /* capacity of the conns' spares together (conn.c) */
    struct conn_hub_stats stats;
};

struct conn {
    struct conn_hub *hub;           /* borrowed; outlives the conn */
    uv_tcp_t tcp;
    uv_timer_t timer;               /* connect+handshake deadline, then conn_close's linger */
    uv_connect_t connect_req;
    uv_shutdown_t shutdown_req;
    struct link all, dirty_link, closing_link;
    bool late;                      /* dirty_link is on hub->late, not hub->dirty */
    enum conn_phase phase;
    bool visible;                   /* the owner knows it: connected out, or on_ready ran */
    bool close_requested;           /* conn_close: flush, then shut down */
    bool shutdown_sent;             /* FIN queued; waiting for the peer's EOF or the linger */
    bool closing;                   /* on the hub's closing list */
    bool finished;                  /* on_close ran and uv_close was called */
    unsigned handles;               /* of tcp and timer, not yet closed */
    char *reason;                   /* owned; NULL until a close starts */
    int error;                      /* the libuv error that ended it (conn_error); 0 */
    uint8_t server_nonce[AUTH_NONCE_BYTES];
    uint8_t client_nonce[AUTH_NONCE_BYTES];
    uint8_t peer_role;
    uint32_t peer_id;
    char name[64];
    void *data;                     /* borrowed, the owner's */
    struct wbuf hs_out;             /* handshake frames; may leave before authentication */
    struct frame_batch out;         /* messages; leave only once authenticated */
    struct wbuf spare;              /* owned, empty: a batch's buffer back from its write,
                                       the next batch's (conn.c); data NULL when none */
    uint8_t *rbuf;                  /* owned; received bytes not yet parsed */
    size_t rlen, rcap;
    int64_t burst_ns;               /* monotonic start of this run of full reads; 0: none */
    bool yield;                     /* the run is over budget: the next alloc is empty */
    size_t inflight;                /* bytes handed to uv_write and not yet completed */
};

/* conn.c */
struct conn *conn__create(struct conn_hub *hub, void *data);
/* Calls on_close (when the owner knows the conn) and closes its handles; `reason` is
 * used unless a close already gave one. */
void conn__finish(struct conn *c, const char *reason);
/* Writes what may leave now, in one uv_write. */
void conn__flush(struct conn *c);
/* Starts the server side of the handshake on an accepted socket. */
void conn__start_accepted(struct conn *c);
/* Starts connecting; failures end in on_close. */
void conn__start_connect(struct conn *c, const struct sockaddr *addr);
/* Frees the conn's spare send buffer, taking it off the hub's count. */
void conn__drop_spare(struct conn *c);

/* conn_hub.c */
/* References the flusher while it has work, so uv_run does not return before it. */
void conn__hub_want_prepare(struct conn_hub *hub);
void conn__mark_dirty(struct conn *c);
void conn__hub_want_late(struct conn_hub *hub);
/* A connection left `late` other than by release: stops the timer once none wait. */
void conn__hub_late_gone(struct conn_hub *hub);
void conn__hub_release(struct conn_hub *hub);

#endif
