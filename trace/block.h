/*
 * trace block — Avro object-container framing for jackdaw traces, done by hand.
 *
 * A trace file is an Avro object container file (spec 1.11, "Object Container Files"):
 * the header (magic "Obj\x01", a metadata map holding avro.schema, avro.codec=deflate
 * and jackdaw.header, a 16-byte sync marker) followed by blocks of
 * `zigzag count, zigzag size, raw deflate bytes, sync`.  Any Avro reader opens it.
 *
 * We frame blocks ourselves rather than use avro_file_writer because libavro's deflate is
 * fixed at level 9 (2.5x slower than level 1 for +0.2 B/event), because its writer
 * re-seeds rand() and overwrites files, and because blocks must travel whole: the node's
 * trace thread encodes and compresses them, the collector appends them to its file
 * without decoding, and on restart the collector cuts a crash-truncated file back to its
 * last whole block (libavro 1.11.1 neither checks block framing nor recovers).
 *
 * Owns: a trace_block owns its value, memory writer, deflate stream and buffers.
 * Callers: the node's trace thread (trace_block_*), the collector (trace_file_header,
 * trace_scan_*) and the trace tools (trace_scan_*).  One thread per trace_block.
 * Return convention: 0 or a negative errno.
 */
#ifndef JACKDAW_TRACE_BLOCK_H
#define JACKDAW_TRACE_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "trace/event.h"

#define TRACE_SYNC_SIZE 16
/* Uncompressed bytes per block by default: 64 KiB is about 5k events. */
#define TRACE_BLOCK_DEFAULT_RAW (64u * 1024)
/* Scanner bounds.  Nothing we write comes near them; anything beyond is corrupt. */
#define TRACE_BLOCK_MAX_COUNT (1 << 24)
#define TRACE_BLOCK_MAX_BYTES (64u << 20)
/* Metadata key of the run header (JSON: run id, start_ns, configuration, nodes,
 * workload name and digest; see share/doc/trace-schema.md). */
#define TRACE_META_HEADER "jackdaw.header"

/* A fresh sync marker from libsodium (not rand(): libavro re-seeds it with time(NULL),
 * so two files made in the same second would share a marker). */
int trace_sync_new(uint8_t sync[TRACE_SYNC_SIZE]);

/* Builds a container header into *out (malloc'd, caller frees) of *len bytes.
 * header_json is the run header; it is stored as given. */
int trace_file_header(const char *header_json, const uint8_t sync[TRACE_SYNC_SIZE],
                      uint8_t **out, size_t *len);

struct trace_block;

/* raw_cap: uncompressed bytes per block (>= 1024; 0 for the default). */
int trace_block_create(struct trace_block **out, size_t raw_cap);
void trace_block_destroy(struct trace_block *b); /* NULL is a no-op */

/* Encodes one event at the end of the block.  -ENOSPC when it does not fit: nothing was
 * added; finish the block and append again.  -EINVAL for an out-of-range event. */
int trace_block_append(struct trace_block *b, const struct trace_event *ev);
size_t trace_block_count(const struct trace_block *b);
size_t trace_block_raw_size(const struct trace_block *b);

/* Compresses the events appended so far into one complete container block ending with
 * `sync`, and empties the block.  *data (borrowed, valid until the next call on b) and
 * *len describe it; *len is 0 when the block held no event. */
int trace_block_finish(struct trace_block *b, const uint8_t sync[TRACE_SYNC_SIZE],
                       const uint8_t **data, size_t *len);

/* What a container header holds.  Pointers borrow the scanned buffer. */
struct trace_file_info {
    size_t header_end; /* offset of the first block */
    uint8_t sync[TRACE_SYNC_SIZE];
    const uint8_t *schema; /* avro.schema JSON, not NUL-terminated */
    size_t schema_len;
    const uint8_t *header_json; /* jackdaw.header, NULL if absent */
    size_t header_json_len;
};

/* Parses a container header.  -ENODATA when buf ends inside it (a file cut before its
 * first flush), -EBADMSG when it is not a container header, -ENOTSUP when its codec is
 * not deflate or it has no schema. */
int trace_scan_header(const uint8_t *buf, size_t len, struct trace_file_info *info);

enum trace_tail {
    TRACE_TAIL_CLEAN, /* buf ends exactly after a whole block (or is empty) */
    TRACE_TAIL_CUT,   /* buf ends inside a block that looks sane so far: a crash cut */
    TRACE_TAIL_BAD,   /* a block's framing is wrong: count or size out of range, bad sync */
};

struct trace_scan {
    size_t valid_end; /* bytes of buf made of whole, well-framed blocks */
    uint64_t blocks;
    uint64_t records;
    enum trace_tail tail;
};

/* Walks the blocks in buf (which starts at a block boundary: after the header, or a
 * chunk a node sent) and stops at the first one that is incomplete or badly framed.
 * Framing only: the deflate payload is not inflated.  Returns 0; the verdict is in out.
 * A collector truncates its file to header_end + valid_end before appending. */
int trace_scan_blocks(const uint8_t *buf, size_t len, const uint8_t sync[TRACE_SYNC_SIZE],
                      struct trace_scan *out);

#endif
