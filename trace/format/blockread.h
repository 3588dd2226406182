/*
 * blockread — the events of one container block held in memory, as a node's trace
 * thread sends it (trace/format/block.h frames it): inflated and decoded one record at a
 * time, without a file.
 *
 * The collector appends blocks without decoding them; it decodes a copy only to fold
 * per-job figures for consoles (trace/format/jobtally.h), in libuv's threadpool
 * (trace/collector/jobfold.c).  Every block starts with an anchor record
 * (trace/format/event.h), so a block decodes on its own.  Records are decoded by
 * trace_event_decode, not libavro: the blocks come from nodes of this build, written with
 * our schema, and libavro's generic value made this decode a fifth of a run's CPU.
 *
 * Owns its inflate stream and buffer.  Called by trace/collector/jobfold.c, by
 * trace/format/reader.c (inflate only) and the tests; one thread per reader.  Return
 * convention: 0 or a negative errno.
 */
#ifndef JACKDAW_TRACE_BLOCKREAD_H
#define JACKDAW_TRACE_BLOCKREAD_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format/block.h"
#include "trace/format/event.h"

struct trace_block_reader;

int trace_block_reader_create(struct trace_block_reader **out);
void trace_block_reader_destroy(struct trace_block_reader *r); /* NULL is a no-op */

/*
 * Inflates the payload of one block that trace_block_next found: *raw (borrowed, valid
 * until the next call on r) holds its *len uncompressed bytes.  -EBADMSG when the deflate
 * stream is corrupt or cut, -EMSGSIZE when it inflates past TRACE_BLOCK_MAX_BYTES.
 */
int trace_block_reader_inflate(struct trace_block_reader *r, const struct trace_block_view *v,
                               const uint8_t **raw, size_t *len);

/*
 * Calls fn for each event of the whole block data[0..len) (count, size, deflate bytes,
 * sync), in order.  Returns 0, or -EBADMSG with why (why_cap bytes) saying where the
 * block stops making sense; the events before that were delivered.
 */
int trace_block_reader_decode(struct trace_block_reader *r, const uint8_t *data, size_t len,
                              void (*fn)(void *ctx, const struct trace_event *ev), void *ctx,
                              char *why, size_t why_cap);

#endif
