/*
 * collect_file — the collector's trace file: one Avro object container file per run,
 * made of whole blocks that the nodes compressed, plus the collector's own records.
 *
 * A node's block arrives ending with the node's own sync marker; the file has its own.
 * The block is copied with its last 16 bytes replaced by the file's marker, never
 * decoded or re-encoded (trace/format/block.h explains why blocks travel whole).  Copies
 * are buffered and written by collect_file_flush, a whole number of blocks per write(),
 * so a process killed at any moment leaves the file ending at a block boundary or cut
 * inside one block; collect_file_open repairs the cut by truncating to the last whole
 * block before it appends.  A file that exists but is not a jackdaw trace, whose framing
 * is corrupt (not merely cut), or whose event schema is not ours (another version's), is
 * refused and never written to.
 *
 * The collector's own records (JOB_SUBMIT and TASK_NAMES, for the jobs clients submit)
 * belong to node -1, with their own sequence numbers, and are encoded here with a
 * trace_block of our own.  JOB_SUBMIT: job in the task key's high half (task -1 on
 * disk), count = tasks, text = digest (cut to TRACE_TEXT_MAX - 1 bytes), names =
 * [workload name, full digest, submission mode ("" when the client did not say)].  TASK_NAMES: task key = job:first, count, names = ids;
 * long lists are split over several records so that each fits in a block.
 *
 * Two sequence numbers are kept per node: next_seq counts what was appended (buffered or
 * written: a block below it is a resend), written_seq what has reached the file (what
 * the collector may promise in RESUME and ACK).
 *
 * Owns: the file descriptor (locked with flock, so two collectors cannot interleave
 * blocks in one file), the write buffer, the own-record encoder, and a mark per job of
 * the own records it holds.  Called by
 * trace/collector/collector.c on its loop thread, and by the tests.  Not thread-safe.
 * Return convention: 0 or a negative errno; open and flush fill *cause (malloc'd,
 * naming the file) on error.
 */
#ifndef JACKDAW_TRACE_COLLECT_FILE_H
#define JACKDAW_TRACE_COLLECT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/format/block.h"

/* Node id of the collector's own records. */
#define COLLECT_FILE_OWN_NODE (-1)
/* Uncompressed bytes per own block: large enough for 64 KiB records of names. */
#define COLLECT_FILE_OWN_RAW (1024u * 1024)

struct collect_file;

struct collect_file_stats {
    uint64_t events, blocks, bytes; /* written by this process (own records included) */
    uint64_t file_events;           /* records in the file, including those found on open */
    uint64_t pending_bytes;         /* buffered, not yet written */
    uint64_t cut_bytes;             /* removed from a cut tail on open */
    bool resumed;                   /* the file existed and was resumed */
};

/*
 * Opens path for appending, or creates it (O_EXCL, mode 0600) with a container header
 * holding header_json and a fresh sync marker.  An existing jackdaw trace is resumed:
 * its whole blocks are read to learn each node's next sequence number, and a cut tail
 * is truncated away (logged at WARN).  Refused with a cause naming the file: not a
 * jackdaw trace (-EBADMSG, -ENOTSUP), corrupt framing after the last whole block
 * (-EBADMSG), in use by another collector (-EBUSY), or cannot be opened (-errno).
 * Node ids are 0..nnodes-1 plus COLLECT_FILE_OWN_NODE; records of other nodes found in
 * a resumed file are kept but not tracked.  start_ns (ns since the epoch) is the origin
 * of the own records' times.
 */
int collect_file_open(struct collect_file **out, const char *path, const char *header_json,
                      uint32_t nnodes, int64_t start_ns, char **cause);
/* Flushes, fsyncs, closes and frees.  0, or the error of the last flush or of fsync
 * with *cause (the file then ends at a block boundary or cut inside one block).  NULL
 * is a no-op. */
int collect_file_close(struct collect_file *f, char **cause);

/* The run header in the file: the one given to open, or the existing file's (borrowed;
 * "" when a resumed file has none). */
const char *collect_file_header_json(const struct collect_file *f);
/* The origin of the own records' times; set it from a resumed file's header. */
void collect_file_set_start_ns(struct collect_file *f, int64_t start_ns);

/* Sequence numbers of node (0..nnodes-1 or COLLECT_FILE_OWN_NODE); -1 for any other. */
int64_t collect_file_next_seq(const struct collect_file *f, int32_t node);
int64_t collect_file_written_seq(const struct collect_file *f, int32_t node);

/*
 * Checks that data is exactly one whole container block ending with `sync`, holding
 * `count` records.  0, or -EBADMSG with a sentence in why[n] (for the peer's drop
 * reason).  Framing only: the deflate payload is not inflated.
 */
int collect_file_check_block(const uint8_t *data, size_t len, uint32_t count,
                             const uint8_t sync[TRACE_SYNC_SIZE], char *why, size_t n);

/* Buffers a copy of one whole block of node (checked by collect_file_check_block) with
 * the file's sync marker, and raises next_seq to last_seq + 1.  -EINVAL for a node out
 * of range or a block too short to hold a marker. */
int collect_file_append_block(struct collect_file *f, int32_t node, int64_t first_seq,
                              int64_t last_seq, uint32_t count, const uint8_t *data, size_t len);
/* Encodes a JOB_SUBMIT record (node -1, time now).  name, digest and mode may be NULL
 * (mode: not recorded); the mode is written as it is given, checked by the caller. */
int collect_file_append_job(struct collect_file *f, uint32_t job, uint32_t tasks,
                            const char *name, const char *digest, const char *mode);
/* Encodes TASK_NAMES records for tasks first..first+count-1 of job.  -EMSGSIZE when one
 * id alone does not fit in a block (the ids before it are kept). */
int collect_file_append_names(struct collect_file *f, uint32_t job, uint32_t first,
                              uint32_t count, const char *const *ids);

/* What the file holds of job's own records, buffered ones included (those of a resumed
 * file too): whether its JOB_SUBMIT, and up to which task its TASK_NAMES go (the names
 * of one job are always recorded in task order, so they cover tasks 0..*names_end-1).
 * Lets records kept by a client while the collector was away be written once. */
void collect_file_job_recorded(const struct collect_file *f, uint32_t job, bool *submitted,
                               uint32_t *names_end);

/* True when something is waiting for collect_file_flush. */
bool collect_file_dirty(const struct collect_file *f);
/*
 * Writes everything buffered (finishing the own block first) with one positioned write
 * at the end of the last good write, then written_seq catches up with next_seq.  On a
 * write error the file is cut back to its last good end, the bytes stay buffered for
 * the next flush, and -errno comes with a cause.
 */
int collect_file_flush(struct collect_file *f, char **cause);

void collect_file_stats(const struct collect_file *f, struct collect_file_stats *out);

#endif
