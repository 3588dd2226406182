/*
 * trace verify — checks that a trace tells a complete, consistent story, one event at a
 * time, so that a trace of 5 million events is checked in one pass with memory that
 * grows with the number of tasks and nodes, not events.
 *
 * What is checked (share/doc/trace-schema.md, "What a complete trace holds"):
 *   - every task that appears in a TASK_* event has a TASK_SUBMIT, a TASK_START and
 *     exactly one TASK_END of its last attempt, in time order (first START not before
 *     the first SUBMIT, the END not before the attempt's last START); a task whose END
 *     says CANCELLED needs no START.  The attempt is in `duration` on those events and
 *     in `status` on TASK_RESUBMIT; the last is the highest seen.  An END of an earlier
 *     attempt (a presumed-dead node's late run) is no problem: counted and noted;
 *   - every TASK_RESUBMIT is of attempt 1 or later and takes the task from a node that
 *     its recording node declared dead (NODE_DOWN, status 1) at or before it;
 *   - per node (the collector's node -1 included) the sequence numbers are exactly
 *     0..max: no gap, no number twice;
 *   - a job named by a JOB_SUBMIT with count n has exactly n distinct submitted tasks,
 *     all with an index below n;
 *   - given the workload (trace_verify_workload), no task of a job that ran it started
 *     before each of its parents ended DONE (a parent that never ended, or failed,
 *     breaks it too).  The jobs are those whose JOB_SUBMIT gives the workload's digest;
 *     failing that, those announced with its number of tasks; failing that, the only job
 *     of a trace without JOB_SUBMIT.
 * Whether the blocks are intact is not this module's: the reader checks their checksums
 * (trace_reader_open_verified) and the command reports a damaged block through
 * trace_verify_note.
 * Times are compared across nodes as they are: this holds for nodes on one machine
 * (one clock); traces from several hosts need synchronised clocks to pass the order
 * check.
 *
 * Owns: a trace_verify owns its task table (one 56-byte record per task, indexed by a
 * u64map), its per-node bitmaps of sequence numbers seen (one bit per event) and the
 * problem sentences it keeps.  It keeps the first `max_listed` sentences of each kind
 * and counts the rest, so a trace where every task lacks its END does not produce a
 * million lines.  Out of memory aborts through xalloc, as the u64map underneath does:
 * this runs in the offline tools only.
 * Callers: tools/cmd/cmd_trace.c (`jackdaw trace verify`) and the tests.  Pure: no I/O,
 * no clock.  One thread per trace_verify.
 * Return convention: 0 or a negative errno.
 */
#ifndef JACKDAW_TRACE_VERIFY_H
#define JACKDAW_TRACE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "core/model/workload.h"
#include "trace/format/event.h"

/* Kinds of problem, in the order the report lists them. */
enum trace_problem_kind {
    TRACE_PROBLEM_FILE,           /* about the file itself (a cut), added by the caller */
    TRACE_PROBLEM_SEQ_GAP,        /* sequence numbers missing on a node */
    TRACE_PROBLEM_DROPPED,        /* a node's tracer dropped events (a full buffer) */
    TRACE_PROBLEM_SEQ_DUPLICATE,  /* one (node, seq) recorded more than once */
    TRACE_PROBLEM_MISSING_SUBMIT, /* a task with events but no TASK_SUBMIT */
    TRACE_PROBLEM_MISSING_START,  /* ended (not cancelled) without a TASK_START */
    TRACE_PROBLEM_MISSING_END,    /* never ended */
    TRACE_PROBLEM_EXTRA_END,      /* more than one TASK_END */
    TRACE_PROBLEM_ORDER,          /* START before SUBMIT, END before START or SUBMIT */
    TRACE_PROBLEM_JOB_COUNT,      /* a job's tasks disagree with its JOB_SUBMIT */
    TRACE_PROBLEM_DEPENDENCY,     /* a task started before a parent ended (--workload) */
    TRACE_PROBLEM_RESUBMIT,       /* a resubmission from a node not declared dead before */
    TRACE_PROBLEM_KIND_COUNT
};

struct trace_problem {
    enum trace_problem_kind kind;
    const char *text; /* borrowed from the trace_verify; one sentence, no newline */
};

struct trace_verify_report {
    uint64_t events;        /* every event fed, unknown kinds included */
    uint64_t unknown_kinds; /* events of kinds from a newer writer: seq-checked only */
    uint64_t nodes;         /* distinct nodes, -1 included */
    uint64_t tasks;         /* distinct task keys seen in TASK_* events */
    uint64_t jobs;          /* jobs announced by JOB_SUBMIT */
    uint64_t tasks_done, tasks_failed, tasks_cancelled; /* by their last attempt's (first)
                                                           END */
    uint64_t tasks_rerun;    /* tasks whose last attempt is above 0 */
    uint64_t resubmissions;  /* TASK_RESUBMIT events */
    uint64_t recomputations; /* OBJECT_RECOMPUTE events */
    uint64_t retries;        /* TASK_RETRY events: failed runs run again (`retries`) */
    uint64_t lost_ends;      /* TASK_ENDs of an attempt that lost: not counted above */
    uint64_t missing_events;   /* sum over the gaps */
    uint64_t duplicate_events; /* records beyond the first for one (node, seq) */
    uint64_t by_kind[TRACE_PROBLEM_KIND_COUNT]; /* every problem found, listed or not */
    uint64_t problems;                          /* sum of by_kind */
    uint64_t dag_jobs;       /* jobs checked against the workload (trace_verify_workload) */
    uint64_t dag_edges;      /* parent -> child edges checked in them (child started) */
    uint32_t dag_job;        /* the job checked, when dag_jobs is 1 */
    const struct trace_problem *listed; /* the first max_listed of each kind, by kind */
    size_t nlisted;
    const char *const *notes; /* the first max_listed notes (lost runs), no problem */
    size_t nnotes;
};

struct trace_verify;

/* max_listed: sentences kept per kind (0 for the default, 10). */
void trace_verify_create(struct trace_verify **out, size_t max_listed);
void trace_verify_destroy(struct trace_verify *v); /* NULL is a no-op */

/*
 * Feeds one event, in any order (file order is fine: nothing assumes time order).
 * For JOB_SUBMIT, ev->names (when nnames > 0) gives the workload name used in the
 * sentences.  -EINVAL after trace_verify_finish.
 */
int trace_verify_add(struct trace_verify *v, const struct trace_event *ev);

/*
 * Asks finish to check the jobs that ran `wl` (borrowed: it must outlive finish) against
 * its parents; `digest` (copied; NULL or "" when unknown) is the workload file's, as
 * JOB_SUBMIT records it.  -EINVAL after trace_verify_finish.
 */
int trace_verify_workload(struct trace_verify *v, const struct workload *wl,
                          const char *digest);

/* Records a problem found outside the event stream (a cut file), counted and listed
 * under TRACE_PROBLEM_FILE.  Ignored after trace_verify_finish. */
void trace_verify_note(struct trace_verify *v, const char *text);

/*
 * Runs the checks that need the whole stream and returns the report (borrowed; valid
 * until trace_verify_destroy).  Later calls return the same report.
 */
const struct trace_verify_report *trace_verify_finish(struct trace_verify *v);

/* "seq-gap", "missing-end", …: stable names for --json. */
const char *trace_problem_kind_name(enum trace_problem_kind kind);

#endif
