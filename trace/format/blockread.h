/*
 * blockread — the events of one container block held in memory, as a node's trace
 * thread sends it (trace/format/block.h frames it): inflated and decoded one record at a
 * time, without a file.
 *
 * The collector appends blocks without decoding them; it decodes a copy only to fold
 * per-job figures for consoles (trace/format/jobtally.h).  Every block starts with an
 * anchor record (trace/format/event.h), so a block decodes on its own.
 *
 * Owns its inflate stream, buffer and Avro value.  Called by trace/collector/collector.c
 * and the tests; one thread per reader.  Return convention: 0 or a negative errno.
 */
#ifndef JACKDAW_TRACE_BLOCKREAD_H
#define JACKDAW_TRACE_BLOCKREAD_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format/event.h"

struct trace_block_reader;

int trace_block_reader_create(struct trace_block_reader **out);
void trace_block_reader_destroy(struct trace_block_reader *r); /* NULL is a no-op */

/*
 * Calls fn for each event of the whole block data[0..len) (count, size, deflate bytes,
 * sync), in order.  Returns 0, or -EBADMSG with why (why_cap bytes) saying where the
 * block stops making sense; the events before that were delivered.
 */
int trace_block_reader_decode(struct trace_block_reader *r, const uint8_t *data, size_t len,
                              void (*fn)(void *ctx, const struct trace_event *ev), void *ctx,
                              char *why, size_t why_cap);

#endif
