/*
 * tracer — a node daemon's side of tracing: the scheduler thread hands events to a
 * bounded ring and goes on; a trace thread encodes them into Avro container blocks
 * (trace/format/block), streams whole blocks to the collector (trace/format/wire) over an
 * authenticated connection on its own libuv loop, and spools them to a local trace file
 * while the collector is away (the blocks it had not acknowledged when it went too, at
 * once), resending them once it is back.
 *
 * Never blocks the scheduler: the producer side is a single-producer ring of fixed
 * slots (a store and a release per event).  When the ring is full the event is not
 * numbered and a counter grows; the next event that fits is preceded by a DROPPED event
 * carrying the count, so sequence numbers stay gapless and a loss is always written
 * down.  Events with a body (samples, policy names) take a short mutex-guarded side
 * queue; the trace thread merges both in sequence order.
 *
 * The trace thread runs at the lowest CPU priority (nice 19): on a machine whose cores
 * are all busy running tasks and scheduling, encoding waits until there is room, which
 * is why the ring is sized to absorb a burst (--trace-buffer).
 *
 * Owns: the ring, the side queue, the thread, its loop, the collector connection, the
 * blocks not yet acknowledged and the spool file.  Created and stopped by
 * tools/cmd/cmd_node.c around node_run; the daemon (core/runtime) reports through the
 * trace_sink this module provides, from its loop thread only: tracer_put* and the sink
 * are for one producer thread.  Return convention: 0 or negative errno with *cause.
 */
#ifndef JACKDAW_TRACE_TRACER_H
#define JACKDAW_TRACE_TRACER_H

#include <stddef.h>
#include <stdint.h>

#include "core/net/auth.h"
#include "trace/format/event.h"

#define TRACER_DEFAULT_RING_BYTES (32u << 20)

struct tracer_config {
    int32_t node;
    const char *host;          /* collector address; NULL or "" for none (spool only) */
    int port;
    struct auth_key key;
    const char *run_id;        /* sent in HELLO; may be NULL */
    int64_t start_ns;          /* run origin, ns since the epoch (timestamps count from it) */
    const char *spool_path;    /* blocks go here while the collector is away */
    const char *header_json;   /* the spool file's jackdaw.header */
    size_t ring_bytes;         /* 0: TRACER_DEFAULT_RING_BYTES */
    uint32_t flush_ms;         /* longest an event waits unencoded, then in a block; 0: 1000 */
};

struct tracer;

int tracer_start(struct tracer **out, const struct tracer_config *cfg, char **cause);

/* One event without a body.  wall_ns: when it happened (CLOCK_REALTIME), or 0 for now. */
void tracer_put(struct tracer *t, enum trace_kind kind, uint64_t task, int32_t peer,
                int32_t status, int64_t count, int64_t bytes, int64_t duration_ns,
                int64_t wall_ns);
/* Any event (samples, policy changes): node, seq and time are filled in here. */
void tracer_put_event(struct tracer *t, const struct trace_event *ev, int64_t wall_ns);

/* The sink the node daemon reports through (core/model/trace_kind.h), bound to t. */
void tracer_sink(struct tracer *t, struct trace_sink *out);

/* Events lost to a full ring since start (for the node's samples). */
uint64_t tracer_dropped(const struct tracer *t);

struct tracer_stats {
    uint64_t events, dropped, blocks, blocks_acked, blocks_spooled, bytes_sent;
};
/* Safe from any thread; figures are approximate while running. */
void tracer_stats(const struct tracer *t, struct tracer_stats *out);

/* Encodes what is left, sends it and waits up to timeout_ms for the collector to
 * acknowledge it; what is not acknowledged by then stays in the spool file (and is
 * named in a WARN).  Joins the thread and frees t.  NULL is a no-op. */
void tracer_stop(struct tracer *t, int timeout_ms);

#endif
