/*
 * trace event — the C form of one jackdaw.Event record and its Avro encoding.
 *
 * Owns nothing: a struct trace_event is a plain value that can be copied through a ring.
 * Called by the node's trace thread (through trace/format/block), by the collector to
 * check headers and to decode the blocks it folds into job figures (through
 * trace/format/blockread), and by the trace tools (through trace/format/reader).  The
 * schema is share/schema/jackdaw-event.avsc; this module embeds a copy (test_trace checks
 * that the two are equal) so that a binary never depends on an installed file.
 *
 * Two decoders.  trace_event_decode reads the bytes of our own schema directly, field by
 * field in its fixed order: the path wherever blocks are decoded in bulk, because
 * libavro's generic value (a strcmp per field looked up by name, a malloc per string)
 * cost the collector about a fifth of a run's CPU.  trace_event_from_value reads a record
 * libavro decoded with the file's writer schema, by field name: the path for files
 * written with another (older) schema.  Both fill the same struct from the same bytes
 * (test_trace compares them).
 *
 * Times and sequence numbers are absolute in the struct and delta-coded on disk: the
 * first record of every block, and every record whose node differs from the one before
 * it, is an anchor carrying absolute values; every other record is relative to the
 * record just before it in the file (share/doc/trace-schema.md, "time and seq").
 * Every record ends with the `check` field, written 0 here; the block encoder puts the
 * block's checksum in the last record's (trace/format/block.h).
 *
 * Return convention: 0 or a negative errno.
 */
#ifndef JACKDAW_TRACE_EVENT_H
#define JACKDAW_TRACE_EVENT_H

#include <stdint.h>

#include <avro.h>

#include "core/model/task.h"
#include "core/model/trace_kind.h"

struct trace_event {
    enum trace_kind kind;
    int32_t node;
    int64_t seq;         /* per-node sequence number, >= 0 */
    int64_t time_ns;     /* ns since the run start (header "start_ns"), >= 0 */
    uint64_t task;       /* job << 32 | index in the workload; TRACE_NO_TASK for none */
    int32_t peer;        /* other node; -1 for none */
    int32_t status;      /* task exit status, failure reason; 0 otherwise */
    int64_t count;       /* tasks granted, events dropped, slots; 0 otherwise */
    int64_t bytes;       /* bytes fetched or hit in cache; 0 otherwise */
    int64_t duration_ns; /* fetch duration; 0 otherwise */
    char text[TRACE_TEXT_MAX]; /* POLICY_CHANGE: policy name; "" otherwise */
    struct trace_sample sample; /* NODE_SAMPLE only; ignored (written as null) otherwise */
    /* A command's run (TASK_END, TASK_RETRY): written when usage.measured, else null;
     * decoding sets measured when the record has it. */
    struct task_usage usage;
    /* JOB_SUBMIT and TASK_NAMES: borrowed strings, written by trace_event_to_value.
     * Decoding leaves them NULL/0; readers get them with trace_event_names or
     * trace_event_decode_names. */
    const char *const *names;
    uint32_t nnames;
};

/* The schema as JSON (compact, same content as the .avsc). */
extern const char trace_event_schema_json[];

/* Zeroes *ev and sets the "none" sentinels (task, peer) and the given kind/node. */
void trace_event_init(struct trace_event *ev, enum trace_kind kind, int32_t node);
/* Symbol name ("TASK_START"), or NULL when out of range. */
const char *trace_kind_name(int kind);
/* qsort order of events by time across nodes, then node, then each node's sequence:
 * one order for equal times (trace cat --sorted, jackdaw task). */
int trace_event_cmp_time(const void *a, const void *b);
/* Parses the embedded schema; *out is a new reference (avro_schema_decref it). */
int trace_event_schema(avro_schema_t *out);
/* A generic value of schema to decode records into (its class in *iface), or -ENOMEM;
 * trace_event_value_free releases both (iface NULL: a no-op).  The trace reader and the
 * in-memory block reader share them. */
int trace_event_value_new(avro_schema_t schema, avro_value_iface_t **iface, avro_value_t *value);
void trace_event_value_free(avro_value_iface_t *iface, avro_value_t *value);

/* Fills a generic jackdaw.Event value.  `prev` is the event written just before this one
 * in the same block, or NULL to write an anchor; a prev of another node also gives an
 * anchor.  -EINVAL when ev is out of range (kind, seq/time negative, seq not after
 * prev's, text not terminated). */
int trace_event_to_value(const struct trace_event *ev, const struct trace_event *prev,
                         avro_value_t *rec);
/* Encodes ev as one Avro binary jackdaw.Event into buf, the bytes libavro writes for
 * the value trace_event_to_value fills (test_trace checks that byte for byte): the
 * block encoder's path, at about a fifth of the cost of libavro's generic value, whose
 * per-field dispatch was the trace's largest cost at a million tasks a second.  Returns
 * the bytes written, -ENOSPC when they do not fit in cap (buf's content is then
 * undefined), or -EINVAL as trace_event_to_value. */
int trace_event_encode(const struct trace_event *ev, const struct trace_event *prev,
                       uint8_t *buf, size_t cap);
/*
 * Decodes one record written with our schema (trace_event_schema_json) from buf[0..len),
 * the inverse of trace_event_encode: `prev` is the event decoded just before it (NULL
 * at a block's start).  Fills *ev as trace_event_from_value does from the value libavro
 * reads from the same bytes: names NULL/0 (trace_event_decode_names gets them), `check`
 * ignored (trace_block_verify checks it), text cut at its first NUL and to the buffer.
 * Returns the bytes the record takes, or -EBADMSG for anything malformed: a varint cut
 * or longer than 64 bits, an int past 32 bits, a kind, union branch or length out of
 * range, a negative usage figure, a delta with no prev of its node, seq or time that
 * overflow or come out negative.  It never reads outside buf[0..len).  Stricter than
 * libavro only where libavro would accept damage (it wraps ints and over-long varints,
 * and takes any kind): whenever this accepts a record, libavro's path gives the same.
 */
int trace_event_decode(const uint8_t *buf, size_t len, const struct trace_event *prev,
                       struct trace_event *ev);
/* The names of the record trace_event_decode took from buf[0..len): up to cap of them in
 * out, as NUL-terminated copies written to text, which must hold len bytes (the copies
 * never take more than the record); *n is the array's full length.  -EBADMSG as
 * trace_event_decode for a record it refuses (seq and time aside). */
int trace_event_decode_names(const uint8_t *buf, size_t len, const char **out, size_t cap,
                             size_t *n, char *text);
/* Reads a record read with libavro (fields looked up by name, so any later schema that
 * only appended fields reads too).  `prev` is the record read just before it in the file
 * (NULL at the start); -EBADMSG when a delta record has no usable prev or a field is out
 * of range.  Unknown kinds (from a newer writer) are returned as their number, which is
 * >= TRACE_KIND_COUNT: callers skip them. */
int trace_event_from_value(avro_value_t *rec, const struct trace_event *prev,
                           struct trace_event *ev);
/* The `names` of a record read with libavro: up to cap pointers into rec (valid until rec
 * is next read into) go to out, *n is the array's full length.  0 (and *n = 0) when the
 * file predates the field; -EBADMSG when a name is not a string. */
int trace_event_names(avro_value_t *rec, const char **out, size_t cap, size_t *n);

#endif
