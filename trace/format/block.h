/*
 * trace block — Avro object-container framing for jackdaw traces, done by hand.
 *
 * A trace file is an Avro object container file (spec 1.11, "Object Container Files"):
 * the header (magic "Obj\x01", a metadata map holding avro.schema, avro.codec=deflate
 * and jackdaw.header, a 16-byte sync marker) followed by blocks of
 * `zigzag count, zigzag size, raw deflate bytes, sync`.  Any Avro reader opens it.
 *
 * Checksums.  Raw deflate carries none, and some bit flips in a compressed block decode
 * to other, plausible records (or to the same ones).  So the last record of every block
 * carries, in its last field (`check`, 0 in every other record), 2^32 + the zlib CRC-32
 * of the block's record count (its zigzag varint, as framed) and of the block's
 * compressed bytes before that field, which the deflate stream carries as the data of a
 * final stored block (block.c says how); and the header's metadata key jackdaw.check =
 * "crc32 HHHHHHHH" declares it, HHHHHHHH being the CRC-32 of the header's schema, codec
 * and jackdaw.header values and the sync marker.  Any Avro reader sees an ordinary
 * field, an unknown metadata key and a valid deflate stream.  A flip of any one bit of a
 * block is caught: of the framing by the scanner (sizes, sync markers), of the count or
 * the payload by the CRC, which misses no single-bit error, of the field by the
 * comparison.  Files written before this have no jackdaw.check and no `check` field:
 * they read as before, unverified.
 *
 * We frame blocks ourselves rather than use avro_file_writer because libavro's deflate is
 * fixed at level 9 (2.5x slower than level 1 for +0.2 B/event), because its writer
 * re-seeds rand() and overwrites files, and because blocks must travel whole: the node's
 * trace thread encodes and compresses them, the collector appends them to its file
 * without decoding, and on restart the collector cuts a crash-truncated file back to its
 * last whole block (libavro 1.11.1 neither checks block framing nor recovers).
 *
 * Owns: a trace_block owns its deflate stream and buffers (records are encoded straight
 * into its raw buffer by trace_event_encode).
 * Callers: the node's trace thread (trace_block_*), the collector (trace_file_header,
 * trace_scan_*) and the trace tools (trace_scan_*).  One thread per trace_block.
 * Return convention: 0 or a negative errno.
 */
#ifndef JACKDAW_TRACE_BLOCK_H
#define JACKDAW_TRACE_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format/event.h"

#define TRACE_SYNC_SIZE 16
/* Uncompressed bytes per block by default: 64 KiB is about 5k events. */
#define TRACE_BLOCK_DEFAULT_RAW (64u * 1024)
/* Scanner bounds.  Nothing we write comes near them; anything beyond is corrupt. */
#define TRACE_BLOCK_MAX_COUNT (1 << 24)
#define TRACE_BLOCK_MAX_BYTES (64u << 20)
/* Metadata key of the run header (JSON: run id, start_ns, configuration, nodes,
 * workload name and digest; see share/doc/trace-schema.md). */
#define TRACE_META_HEADER "jackdaw.header"
/* Metadata key declaring block checksums (see above); its value starts with this. */
#define TRACE_META_CHECK "jackdaw.check"
#define TRACE_CHECK_SCHEME "crc32"

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

/* Whether a file's blocks carry checksums (its jackdaw.check metadata). */
enum trace_checksums {
    TRACE_CHECKSUMS_NONE,    /* no jackdaw.check: written before checksums existed */
    TRACE_CHECKSUMS_CRC32,   /* "crc32 HHHHHHHH", and the header matches HHHHHHHH */
    TRACE_CHECKSUMS_BAD,     /* "crc32 …" that does not match the header, malformed, or
                                missing from a header whose schema has `check` */
    TRACE_CHECKSUMS_UNKNOWN, /* another scheme, from a newer writer */
};

/* What a container header holds.  Pointers borrow the scanned buffer. */
struct trace_file_info {
    size_t header_end; /* offset of the first block */
    uint8_t sync[TRACE_SYNC_SIZE];
    const uint8_t *schema; /* avro.schema JSON, not NUL-terminated */
    size_t schema_len;
    const uint8_t *header_json; /* jackdaw.header, NULL if absent */
    size_t header_json_len;
    enum trace_checksums checksums;
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

/* One whole block, as trace_block_next finds it.  Pointers borrow the buffer. */
struct trace_block_view {
    size_t offset;            /* of the block in the buffer given */
    int64_t count;            /* records */
    const uint8_t *count_raw; /* the count's varint as framed, count_len bytes */
    size_t count_len;
    const uint8_t *payload;   /* raw deflate, size bytes */
    size_t size;
};

/* The block at buf[*pos] of a buffer whose blocks trace_scan_blocks accepted (up to its
 * valid_end): 1 with *v filled and *pos moved past it, 0 at the end, -EBADMSG when the
 * framing there is not a whole block. */
int trace_block_next(const uint8_t *buf, size_t len, size_t *pos, struct trace_block_view *v);

enum trace_block_verdict {
    TRACE_BLOCK_OK = 0,
    TRACE_BLOCK_BAD = 1, /* no checksum where it belongs, or one that differs */
};

/*
 * Checks one block's checksum; no inflate needed.  Returns a verdict (why, of why_cap
 * bytes, says what is wrong when it is BAD).  Meaningful for files whose header declares
 * TRACE_CHECKSUMS_CRC32 only: older files' blocks end otherwise.
 */
int trace_block_verify(const struct trace_block_view *v, char *why, size_t why_cap);

#endif
