/*
 * trace reader — opens a jackdaw trace file for the trace tools and hands out its events
 * with absolute times, and tells a file that ended cleanly from one that was cut.
 *
 * The file is mapped and checked by the block scanner first (trace_scan_header,
 * trace_scan_blocks); only then is libavro given the prefix of whole, well-framed blocks
 * (through fmemopen), so it never sees the bytes of a cut or corrupt tail.  This is
 * deliberate: libavro 1.11.1 does not check block framing, re-serves the previous block
 * on a zero or negative length, and leaks when avro_file_reader() fails, so it must only
 * ever open what the scanner accepted.  Records are read with the file's own writer
 * schema and decoded by field name (trace_event_from_value), so traces from a newer
 * writer that only appended fields and kinds read too.
 *
 * A file whose schema is byte for byte ours (trace_event_schema_json: every file this
 * build writes) skips libavro: its accepted blocks are inflated here (trace/format/
 * blockread.h) and decoded by trace_event_decode, which gives the same events and names
 * for a thirteenth of libavro's CPU (tools/bench/trace_decode.c): libavro's decoding was
 * most of what `trace stats` and `jackdaw report` cost.
 *
 * trace_reader_open_verified also checks every block's checksum (trace_block_verify)
 * before any of it is decoded, when the file has them: the readable part then ends
 * before the first block that fails, as it would at corrupt framing, and info says how
 * many failed and why.
 *
 * Owns: a trace_reader owns the mapping, and the libavro reader, its schema and value or
 * the block reader that inflates for trace_event_decode.
 * Callers: the trace tools (tools/cmd: trace, tasks, bound, sim --from), the report
 * (tools/report/analysis.c), the merge (trace/offline/merge.c), the console's replay
 * (tui/replay.c), the collector reading a file back (trace/collector/collect_file.c),
 * a bench (tools/bench/collector_ingest.c) and the tests.  One thread per reader
 * (libavro's error buffer is process-wide in Debian's build).
 * Return convention: 0 or a negative errno; trace_reader_next returns TRACE_READER_END
 * (positive) at the end.  Errors that concern the file come with *cause, a malloc'd
 * sentence naming the file and the byte offset (caller frees; may be NULL on ENOMEM).
 */
#ifndef JACKDAW_TRACE_READER_H
#define JACKDAW_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/format/block.h"
#include "trace/format/event.h"

enum { TRACE_READER_END = 1 };

/* What the scanner found, before any record is decoded.  Offsets are from the start of
 * the file. */
struct trace_reader_info {
    uint64_t file_size;
    uint64_t header_end;  /* offset of the first block */
    uint64_t valid_end;   /* end of the last whole, well-framed block */
    uint64_t blocks;      /* whole blocks, all of which are read */
    uint64_t records;     /* records in those blocks */
    enum trace_tail tail; /* CLEAN, CUT (crash cut: normal) or BAD (corrupt framing) */
    const char *header_json; /* jackdaw.header, NUL-terminated; NULL if absent (borrowed
                                from the reader) */
    /* Filled by trace_reader_open_verified only. */
    enum trace_checksums checksums; /* what the header declares */
    uint64_t blocks_checked;  /* blocks whose checksum matched */
    uint64_t blocks_failed;   /* blocks that failed it (or carry none in a file that
                                 declares them); the first ends the readable part */
    uint64_t failed_offset;   /* file offset of the first, when blocks_failed > 0 */
    uint64_t failed_index;    /* its index among the file's blocks, from 0 */
    char failed_why[96];      /* what is wrong with it */
};

struct trace_reader;

/*
 * Opens path.  Refused with -EBADMSG (and a cause naming the file and the offset) when it
 * is not an Avro container of jackdaw.Event records, when it is cut inside its header,
 * or when the framing is corrupt before the first block; -ENOTSUP for another codec;
 * -errno when it cannot be opened or mapped.  A file cut or corrupted after at least one
 * whole block opens: info says so, and the whole blocks are read.
 */
int trace_reader_open(struct trace_reader **out, const char *path, char **cause);
/*
 * Same, checking block checksums first (see above).  A header whose jackdaw.check does
 * not match it is refused (-EBADMSG): its schema cannot be trusted.  A file without
 * checksums opens as with trace_reader_open, info->checksums saying so.
 */
int trace_reader_open_verified(struct trace_reader **out, const char *path, char **cause);
void trace_reader_destroy(struct trace_reader *r); /* NULL is a no-op */
const struct trace_reader_info *trace_reader_info(const struct trace_reader *r);

/*
 * Reads the next event of the whole blocks, in file order, with absolute seq and time.
 * Kinds >= TRACE_KIND_COUNT (from a newer writer) are returned as they are: callers
 * skip or count them.  Returns 0, TRACE_READER_END after the last record of the last
 * whole block, or -EBADMSG with a cause (record index; with our schema, the block's
 * offset too) for a record the decoder (libavro or trace_event_decode) or the delta
 * decoding refuses, or a block that does not inflate.
 */
int trace_reader_next(struct trace_reader *r, struct trace_event *ev, char **cause);

/* The names (JOB_SUBMIT, TASK_NAMES) of the event trace_reader_next returned last:
 * *names is valid until the next call on r.  0 with *n = 0 for other events. */
int trace_reader_names(struct trace_reader *r, const char *const **names, size_t *n);

/* Counts over the events of a trace (trace stats). */
struct trace_node_count {
    int32_t node;
    uint64_t events;
};

struct trace_tally {
    uint64_t events;                    /* every record, unknown kinds included */
    uint64_t by_kind[TRACE_KIND_COUNT];
    uint64_t unknown_kind;              /* kinds from a newer writer */
    struct trace_node_count *by_node;   /* owned; sorted by node; n_nodes entries */
    size_t n_nodes, cap_nodes;
    int64_t first_ns, last_ns;          /* earliest and latest time; 0 when no event */
};

void trace_tally_init(struct trace_tally *t);
void trace_tally_fini(struct trace_tally *t);
/* -ENOMEM when a new node cannot be added (the event is then not counted). */
int trace_tally_add(struct trace_tally *t, const struct trace_event *ev);

#endif
