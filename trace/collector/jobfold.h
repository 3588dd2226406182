/*
 * jobfold — the collector's per-job tallies (trace/format/jobtally), folded off its loop
 * from the blocks it writes.
 *
 * Appending a block costs the collector next to nothing (tens of millions of events a
 * second); decoding one (inflate, then Avro, trace/format/blockread) costs about a
 * microsecond an event.  On the loop that would cap what the collector takes in, so, as
 * DESIGN.md has workers do, the decoding runs on libuv's threadpool: one job at a time
 * (a node's events must fold in order), taking every block and job submit queued since
 * the last, in order.  Between jobs, on the loop, the tallies are exported for the STATE
 * messages: consoles see them as of the last job, a few milliseconds behind the file.
 *
 * A backlog over JOBFOLD_BACKLOG_MAX (decoding slower than the nodes trace, for long)
 * drops blocks from the tallies rather than holding memory without bound; the tallies
 * then say they are partial, as they do when the collector resumed a trace whose events
 * it never saw.
 *
 * Owns the tally, the block reader, the queued copies.  Called by
 * trace/collector/collector.c on its loop thread; the work callback alone runs on the
 * threadpool, touching only the tally, the reader and the batch it was given.
 */
#ifndef JACKDAW_TRACE_JOBFOLD_H
#define JACKDAW_TRACE_JOBFOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "trace/format/wire.h"

/* Compressed block bytes waiting to be folded, beyond which blocks are dropped. */
#define JOBFOLD_BACKLOG_MAX (64u << 20)

struct jobfold;

struct jobfold *jobfold_create(uv_loop_t *loop);
/* Once the loop has run out (no job in flight); NULL is a no-op. */
void jobfold_destroy(struct jobfold *f);
/* Queues a copy of a whole block of node's that the trace takes; its events below
 * from_seq are in the trace already and are not folded again. */
void jobfold_block(struct jobfold *f, int32_t node, int64_t from_seq, const uint8_t *data,
                   size_t len);
/* Queues a job's submit (name NULL when unknown). */
void jobfold_submit(struct jobfold *f, uint32_t job, uint32_t tasks, const char *name,
                    int64_t time_ns);
/* The trace holds events the tallies never saw (a resumed trace). */
void jobfold_mark_partial(struct jobfold *f);
/* No job starts any more; what is queued is dropped (the collector is stopping). */
void jobfold_stop(struct jobfold *f);
/* The tallies as of the last job done (valid until the next job completes, on the loop);
 * *partial when some events were never folded. */
const struct wire_job_tally *jobfold_jobs(const struct jobfold *f, uint32_t *n, bool *partial);

#endif
