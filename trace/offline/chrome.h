/*
 * trace chrome — turns a stream of trace events into Chrome trace-event JSON
 * ({"traceEvents": [...]}), which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * The picture:
 *   - one process per node, named "node N" (pid = N + 1000, so that the collector's
 *     node -1, shown as "client", gets a pid too and none is 0, which Perfetto reserves);
 *   - in it, one thread per executor slot ("slot K"): each task's START..END is an "X"
 *     slice on the lowest slot lane free at its START (greedy, in the order the node's
 *     events come, which is its seq order), named by the task's workload id when a
 *     TASK_NAMES gave one and "job:index" otherwise, with status and exit code in args;
 *     a task still running at the end of the trace gets a slice up to the last time
 *     seen, with status "unfinished";
 *   - counters ("C") waitq, lreadyq, sreadyq (args "tasks") and busy (args "slots")
 *     from NODE_SAMPLE;
 *   - data transfers: a "fetch" slice on the fetching node and a "serve" slice on the
 *     source, both from time - duration to time, on "fetch K" / "serve K" lanes (a lane
 *     is reused once its last slice has ended, so concurrent transfers never overlap on
 *     one thread, which both viewers require), joined by a flow ("s" on the source at
 *     the start, "f" with "bp":"e" on the fetcher at the end);
 *   - steals: an instant "stolen out" on the victim's "steals" thread and "stolen in" on
 *     the thief's, joined by a flow victim -> thief per task.  The k-th STOLEN_OUT of a
 *     task pairs with its k-th STOLEN_IN, so the flow id is a hash of (task, k) that
 *     both sides compute without waiting for each other;
 *   - instants on an "events" thread for NODE_UP, NODE_DOWN, POLICY_CHANGE, DROPPED,
 *     and on the client for JOB_SUBMIT.
 * Timestamps are in µs with ns precision ("ts": 1234.567).  Flow events carry the same
 * cat, pid, tid and ts as the event they bind to: Chrome's viewers bind on that, and
 * Perfetto binds to the slice open on the thread at that time.
 *
 * Output is streamed: each event is written as it is fed, and memory holds only the
 * tasks not yet ended (their start, lane and name) and a few lanes per node.  The task
 * name must be known by the task's END: the collector stamps TASK_NAMES at submission,
 * before any task runs, so in its files and in merged files it always is.
 *
 * Owns: a trace_chrome owns its task and node tables; the FILE is borrowed.  Callers:
 * tools/cmd/cmd_trace.c (`jackdaw trace export --chrome`) and the tests.  Out of memory
 * aborts through xalloc (offline tool).  Return convention: 0 or a negative errno
 * (-EIO once the FILE has an error).
 */
#ifndef JACKDAW_TRACE_CHROME_H
#define JACKDAW_TRACE_CHROME_H

#include <stdint.h>
#include <stdio.h>

#include "trace/format/event.h"

struct trace_chrome_stats {
    uint64_t events;        /* events fed, unknown kinds included */
    uint64_t task_slices;   /* "X" slices of task runs, unfinished ones included */
    uint64_t unfinished;    /* task slices closed at the end of the trace */
    uint64_t transfers;     /* DATA_FETCH: a slice on each side and one flow */
    uint64_t steal_starts;  /* steal flows started ("s", at a STOLEN_OUT) */
    uint64_t steal_ends;    /* steal flows ended ("f", at a STOLEN_IN) */
    uint64_t counters;      /* "C" events */
    uint64_t instants;      /* "i" events */
};

struct trace_chrome;

/* Writes the opening of the document to out.  header_json (the run header; may be
 * NULL) goes to "otherData" when it parses as JSON. */
void trace_chrome_create(struct trace_chrome **c, FILE *out, const char *header_json);
/* Closes nothing: a trace_chrome destroyed before finish leaves a truncated document. */
void trace_chrome_destroy(struct trace_chrome *c); /* NULL is a no-op */

/* Feeds one event in file order.  For TASK_NAMES and JOB_SUBMIT, ev->names/nnames carry
 * the names (trace_reader_names).  -EIO when the output has failed, -EINVAL after
 * trace_chrome_finish. */
int trace_chrome_add(struct trace_chrome *c, const struct trace_event *ev);

/* Writes the slices of unfinished tasks and closes the document; *st (may be NULL) gets
 * the counts.  -EIO when any write failed. */
int trace_chrome_finish(struct trace_chrome *c, struct trace_chrome_stats *st);

#endif
