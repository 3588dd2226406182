/*
 * frame — the wire framing shared by daemons and clients.
 *
 * A frame is a 12-byte header followed by `count` messages:
 *
 *   frame:   u32 body_len | u16 magic 0x4A44 ("JD") | u8 version | u8 flags(0) | u32 count
 *   message: u16 type | u32 payload_len | payload
 *
 * all little-endian; body_len counts the bytes after the header.  Many messages ride in
 * one frame because small unbatched TCP writes collapse on loopback (see
 * shared/notes/libraries.md); senders append messages to a per-peer batch during a loop
 * pass and seal it once.
 *
 * Owns nothing but the batch buffers.  Called by core/net/conn.c (both directions) and
 * by tests and fuzzers directly.  Return convention: decoders return FRAME_OK,
 * FRAME_NEED_MORE or a negative errno (-EPROTO bad magic or version, -EMSGSIZE body over
 * the limit, -EBADMSG messages that do not add up to the body).
 */
#ifndef JACKDAW_FRAME_H
#define JACKDAW_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/wbuf.h"

#define FRAME_MAGIC 0x4A44u
#define FRAME_VERSION 13u
#define FRAME_HEADER_BYTES 12u
#define FRAME_MSG_HEADER_BYTES 6u
/* Largest body accepted from an authenticated peer. */
#define FRAME_MAX_BODY (16u << 20)
/* Largest body accepted before the handshake completes. */
#define FRAME_MAX_BODY_PREAUTH 512u
/* A batch closes its frame and opens another past this many body bytes.  A frame is
 * handled whole when it arrives, so this bounds how long one holds the receiver's loop
 * (conn.c's read budget cuts between frames): a 1 MiB frame of submissions was about
 * 10,000 tasks at once.  Headers cost 12 bytes a frame. */
#define FRAME_SOFT_BODY (64u << 10)

enum frame_status { FRAME_OK = 0, FRAME_NEED_MORE = 1 };

/* Outgoing: a buffer of whole frames plus at most one open frame at the end. */
struct frame_batch {
    struct wbuf buf;        /* owned */
    size_t open_at;         /* offset of the open frame's header */
    uint32_t open_count;    /* messages in the open frame */
    int open;               /* a frame is open */
    size_t last_at;         /* the open frame's last message, SIZE_MAX when none */
};

void frame_batch_init(struct frame_batch *b);
void frame_batch_fini(struct frame_batch *b);
/* Begins a message (opening a frame if needed); the caller appends the payload to
 * b->buf and then calls frame_msg_end with the returned offset. */
size_t frame_msg_begin(struct frame_batch *b, uint16_t type);
void frame_msg_end(struct frame_batch *b, size_t at);
/*
 * As frame_msg_begin, but when the last message written is of `type`, still in the open
 * frame and under `most` payload bytes, it is reopened instead: what the caller appends
 * extends its payload (frame_msg_end then only patches its length).  For messages whose
 * payload is a sequence of records (core/kvs's REPLICATE): many small writes to one
 * peer in a loop pass become one message, one header and one dispatch.
 */
size_t frame_msg_join(struct frame_batch *b, uint16_t type, size_t most);
/* Closes the open frame so that b->buf holds only whole frames.  Idempotent. */
void frame_batch_seal(struct frame_batch *b);
/* True when there is nothing to send. */
int frame_batch_empty(const struct frame_batch *b);

/* Incoming: one frame's body, borrowed from the receive buffer. */
struct frame_view {
    const uint8_t *body;
    uint32_t body_len;
    uint32_t count;         /* messages the header announced */
    uint32_t seen;          /* messages returned so far */
    size_t offset;          /* read position in body */
};

/*
 * Looks at the start of `data`: FRAME_NEED_MORE when fewer than a whole frame's bytes
 * are there; FRAME_OK with *view and *frame_len (header + body) when a whole frame is;
 * an error when the header is bad or the body exceeds max_body.  The header is checked
 * as soon as its 12 bytes arrive, so an oversize frame is refused before it is read.
 */
int frame_parse(const uint8_t *data, size_t len, uint32_t max_body, struct frame_view *view,
                size_t *frame_len);

/* Next message of a parsed frame: 1 with *type and *payload set, 0 at the end (every
 * announced message read and the body consumed exactly), -EBADMSG when a message
 * overruns the body or the count does not match. */
int frame_next(struct frame_view *view, uint16_t *type, struct rbuf *payload);

/* Writes a whole single-message frame (handshake, tests). */
void frame_write_single(struct wbuf *out, uint16_t type, const void *payload, size_t len);

#endif
