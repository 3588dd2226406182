/*
 * trace merge — joins trace files that hold pieces of one run (the collector's file, the
 * spool files nodes wrote while the collector was away, earlier merges) into one trace:
 * every event once, in time order (ties by node, then seq), names (JOB_SUBMIT,
 * TASK_NAMES) kept, with a fresh sync marker and the header of the first input that
 * has a run header (the collector's; a spool file's header, which names its node, is
 * used only when no input has a run header).
 *
 * Why an external sort.  An input is in file order, not time order: the collector
 * appends each node's blocks as they arrive, so a node that lagged (or spooled) puts
 * events of second 1 after events of second 50.  Within one node the order is by seq,
 * but times across nodes are unbounded in their disorder, so no streaming merge of the
 * inputs can emit in time order without, in the worst case, holding everything.  Events
 * are therefore read into a compact in-memory form (72 bytes each, plus samples, policy
 * names and name lists in a side arena), and when `run_events` of them are held they are
 * sorted and spilled as a temporary run next to the output (zlib level 1, about 10 bytes
 * an event; unlinked at once, so nothing is ever left behind).  At the end the runs are
 * merged with a heap.  Input that fits in one run (the default holds 512k events, about
 * 40 MB, twice that while sorting) is written straight out.  Measured on 5.75 million
 * events (one input, 2 cores): about 16 s with runs encoded as Avro, 9 s as they are.
 *
 * Duplicates.  The same (node, seq) in two inputs is the same event (a spooled block
 * that also reached the collector): it carries the same time, so after sorting by
 * (time, node, seq) its copies are adjacent and all but the first are dropped.  Two
 * records with one (node, seq) but different times are not the same event; both are
 * kept, and `trace verify` reports them.
 *
 * Cut or corrupt inputs contribute their whole blocks (trace/format/reader); the result
 * says which inputs were cut so that the caller can warn.  Kinds from a newer writer
 * cannot be re-encoded with our schema and are dropped (counted).  The output is written
 * to a temporary file in its directory and renamed over out_path only when complete, so
 * it may name one of the inputs and a failure never leaves half a trace.
 *
 * Owns: nothing after it returns but the result's input array.  Callers:
 * tools/cmd/cmd_trace.c (`jackdaw trace merge`) and the tests.  Out of memory aborts
 * through xalloc (offline tool).  Return convention: 0 or a negative errno, with *cause,
 * a malloc'd sentence naming the file (caller frees).
 */
#ifndef JACKDAW_TRACE_MERGE_H
#define JACKDAW_TRACE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/format/block.h"

struct trace_merge_options {
    size_t run_events; /* events held before a sorted run is spilled; 0: 512k */
    size_t block_raw;  /* uncompressed bytes per output block; 0: the block default */
};

struct trace_merge_input {
    const char *path;     /* borrowed from the caller's array */
    uint64_t records;     /* records in its whole blocks, all of which were used */
    uint64_t blocks;
    enum trace_tail tail; /* CUT or BAD (corrupt framing, or a block failing its
                             checksum): what followed the whole blocks was not used */
    bool has_header;      /* it carries a jackdaw.header */
};

struct trace_merge_result {
    uint64_t events_in;     /* events read, over all inputs */
    uint64_t events_out;    /* events written */
    uint64_t duplicates;    /* dropped as copies of an event already written */
    uint64_t unknown_kinds; /* dropped: kinds from a newer writer */
    uint64_t runs;          /* sorted runs spilled to temporary files; 0 when in memory */
    const char *header_from; /* path of the input whose header was used; NULL: none had
                                one and the output's header is "{}" */
    const char *bad_input;   /* on failure: the input that could not be read; NULL when
                                writing (the output or a run) failed */
    struct trace_merge_input *inputs; /* owned; one per input, in the order given */
    size_t ninputs;
};

/*
 * Merges inputs[0..n) into out_path.  opt may be NULL.  *res is filled whatever the
 * outcome (release it with trace_merge_result_fini).  -EINVAL for no input; the reader's
 * error for an input that cannot be opened or has a record that does not decode; -errno
 * when the output or a temporary run cannot be written.
 */
int trace_merge(const char *out_path, const char *const *inputs, size_t n,
                const struct trace_merge_options *opt, struct trace_merge_result *res,
                char **cause);
void trace_merge_result_fini(struct trace_merge_result *res);

#endif
