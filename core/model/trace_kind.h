/*
 * trace_kind — the vocabulary of trace events: kinds, the node sample, and the sink
 * through which the node daemon reports them.  Pure data: the Avro encoding, the
 * streaming and the files are trace/'s (trace/format/event.h builds on this), which sits
 * above the runtime; the runtime only ever sees a trace_sink, which tools/cmd/cmd_node.c
 * connects to a trace/tracer/tracer.  Owns nothing.  Included by core/runtime (the
 * sink), trace/format/event.h (the record) and the console's model and drawing (kinds
 * and samples).  Named apart from trace/format/event.h, the Avro record built on it.
 */
#ifndef JACKDAW_MODEL_TRACE_KIND_H
#define JACKDAW_MODEL_TRACE_KIND_H

#include <stdint.h>

/* Values are the symbol positions in the schema's Kind enum: append only, never
 * reorder (libavro resolves enums by position). */
enum trace_kind {
    TRACE_TASK_SUBMIT = 0,
    TRACE_TASK_READY,
    TRACE_TASK_QUEUED_LOCAL,
    TRACE_TASK_QUEUED_SHARED,
    TRACE_TASK_PUSHED,
    TRACE_TASK_STOLEN_IN,
    TRACE_TASK_STOLEN_OUT,
    TRACE_TASK_START,
    TRACE_TASK_END,
    TRACE_STEAL_REQUEST,
    TRACE_STEAL_GRANT,
    TRACE_STEAL_FAIL,
    TRACE_DATA_FETCH,
    TRACE_CACHE_HIT,
    TRACE_NODE_SAMPLE,
    TRACE_NODE_UP,
    TRACE_NODE_DOWN,
    TRACE_POLICY_CHANGE,
    TRACE_DROPPED,
    TRACE_JOB_SUBMIT,   /* a client submitted a job: count tasks, text digest, names[0] workload */
    TRACE_TASK_NAMES,   /* workload ids of tasks task .. task+count-1, in names */
    TRACE_TASK_RESUBMIT,   /* a dead holder's task handed on: node = the record's primary,
                              peer = the new holder, status = the new attempt, count = the
                              dead node it was taken from */
    TRACE_OBJECT_RECOMPUTE, /* a lost output's producer run again: task = the producer,
                               peer = the dead node that held the object, status = the
                               producer's new attempt */
    TRACE_TASK_RETRY,   /* a run failed and the task runs again (its `retries`): status =
                           FAILED, count = the exit code, bytes = failed runs so far,
                           duration = the attempt; the run's end, not the task's */
    TRACE_KIND_COUNT
};

/* STEAL_FAIL status: why the attempt got nothing. */
enum { STEAL_FAIL_EMPTY = 0, STEAL_FAIL_NO_VICTIM = 1, STEAL_FAIL_TIMEOUT = 2 };

/* Task key when the event names no task (job and task both -1 on disk). */
#define TRACE_NO_TASK UINT64_MAX

/* TASK_SUBMIT, TASK_START and TASK_END carry the task's attempt (0 for the first run,
 * n after n resubmissions) in `duration`, a field those kinds leave unused: a new field
 * cannot be appended after `check`, which must stay the record's last (the block
 * checksum rides in it).  Readers of files written before attempts read 0. */

/* NODE_DOWN's status when its peer is set: the connection to the peer closed, or this
 * node declared the peer dead (count: the membership epoch). */
enum { TRACE_DOWN_CLOSED = 0, TRACE_DOWN_DECLARED = 1 };
/* Longest `text` (policy name), including the terminating NUL. */
#define TRACE_TEXT_MAX 64

/* NODE_SAMPLE body: instantaneous lengths, then counters cumulative since node start
 * so that a reader loses nothing between two samples even if events were dropped. */
struct trace_sample {
    int32_t busy, slots;
    int32_t waitq, lreadyq, sreadyq, completeq;
    int64_t started, ended, failed;
    int64_t stolen_in, stolen_out, pushed;
    int64_t steal_requests, steal_fails;
    int64_t fetches, fetch_bytes, cache_hits;
    int64_t busy_ns;
    int64_t dropped;
    int64_t bytes_out;      /* served to other nodes (appended: older files read 0) */
    int64_t cancelled;      /* tasks cancelled here, within ended (appended) */
    int64_t info_sent, info_received; /* A2WS ring messages (appended) */
    int64_t token_passes;   /* CTWS (appended) */
};

/* Where a node daemon's events go.  Every call is on the node's loop thread and must
 * not block.  wall: CLOCK_REALTIME ns of the event, 0 for now. */
struct task_usage;

struct trace_sink {
    void *ctx;
    void (*put)(void *ctx, enum trace_kind kind, uint64_t task, int32_t peer, int32_t status,
                int64_t count, int64_t bytes, int64_t duration_ns, int64_t wall);
    /* POLICY_CHANGE: the placement policy now in force, and why (a switch reason). */
    void (*policy)(void *ctx, const char *name, int32_t reason, int64_t wall);
    void (*sample)(void *ctx, const struct trace_sample *s, int64_t wall);
    /* TASK_END or TASK_RETRY of a command's run, as put() with the run's usage (rare
     * beside the scheduler's events: they take the tracer's side queue). */
    void (*put_usage)(void *ctx, enum trace_kind kind, uint64_t task, int32_t status,
                      int64_t count, int64_t bytes, int64_t duration_ns,
                      const struct task_usage *u, int64_t wall);
    /* Events lost so far (they appear in samples). */
    uint64_t (*dropped)(void *ctx);
};

#endif
