/*
 * trace wire — payloads of the 0x04xx messages (core/net/proto.h) between node daemons,
 * clients, consoles and the collector.  Framing, batching and authentication are
 * core/net's; this module only encodes and decodes.
 *
 * Conversation of a node's trace thread with the collector:
 *   node → HELLO {run id, node's sync marker}
 *   collector → RESUME {next_seq}: the node's events below next_seq are in the file
 *   node → BLOCK {first_seq, last_seq, count, one whole container block} ...
 *   collector → ACK {next_seq} once those blocks are written
 *   node → LIVE {latest sample, notable events since the last LIVE} every sample period
 * A client submitting a job sends JOB and NAMES (the collector writes them as JOB_SUBMIT
 * and TASK_NAMES records) and hears ACK {how many of its JOB and NAMES messages are
 * written} once they are; a console sends SUBSCRIBE {period} and gets INFO {run header
 * JSON} once, then STATE {every node's latest sample, notable events, per-job tallies}
 * every period.
 *
 * Owns nothing.  Decoders return 0 or -EBADMSG and never read past the payload; strings
 * are bounded.  Called by trace/tracer/tracer (node side), trace/collector/collector and
 * the console.
 */
#ifndef JACKDAW_TRACE_WIRE_H
#define JACKDAW_TRACE_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/wbuf.h"
#include "trace/format/block.h"
#include "trace/format/event.h"

#define WIRE_MAX_RUN_ID 128
#define WIRE_MAX_NAMES 65536  /* ids per NAMES message */
#define WIRE_MAX_NOTES 4096   /* notable events per LIVE or STATE */
#define WIRE_MAX_NODES 65536

struct wire_hello {
    char run_id[WIRE_MAX_RUN_ID];
    uint8_t sync[TRACE_SYNC_SIZE];   /* the marker ending the node's blocks */
};
void wire_put_hello(struct wbuf *b, const struct wire_hello *h);
int wire_get_hello(struct rbuf *r, struct wire_hello *h);

/* RESUME and ACK: every event of the node with seq < next_seq is in the file. */
void wire_put_next_seq(struct wbuf *b, int64_t next_seq);
int wire_get_next_seq(struct rbuf *r, int64_t *next_seq);

struct wire_block {
    int64_t first_seq, last_seq;
    uint32_t count;
    const uint8_t *data;   /* borrowed: one whole container block */
    uint32_t len;
};
void wire_put_block(struct wbuf *b, const struct wire_block *blk);
/* Checks the seq range against count; the block's framing is the receiver's to check. */
int wire_get_block(struct rbuf *r, struct wire_block *blk);

/* A notable event: what an operator watches for (failures, policy switches, node up and
 * down, drops) and steal grants (for the thief x victim view), kept small. */
struct wire_note {
    int32_t node;
    uint8_t kind;          /* enum trace_kind */
    int64_t time_ns;
    uint64_t task;
    int32_t peer, status;
    int64_t count;
    char text[TRACE_TEXT_MAX];
};
/* True for the kinds that travel as notes. */
bool wire_is_note(const struct trace_event *ev);
void wire_note_from_event(struct wire_note *n, const struct trace_event *ev);

struct wire_live {
    int64_t time_ns;              /* when the sample was taken */
    struct trace_sample sample;
    uint32_t nnotes;
    struct wire_note *notes;      /* borrowed on put; owned (free) after get */
};
void wire_put_live(struct wbuf *b, const struct wire_live *l);
int wire_get_live(struct rbuf *r, struct wire_live *l);

/*
 * JOB: {job, tasks, workload name, digest[, mode]}.  The mode (core/model/submit_mode.h)
 * came after FRAME_VERSION 13 without a bump, as an optional last field: a JOB that ends
 * after the digest is a client's of before it and reads as mode "" (not recorded), and a
 * collector of before it reads the fields it knows and leaves the rest, so clients and
 * collectors of either build still record jobs together.  The encoder leaves the field
 * out when the mode is NULL or "", so each value has one spelling; the decoder refuses
 * a mode that is not exactly a mode's name (an empty one included) and any byte after
 * it, naming the field in j->bad.
 */
struct wire_job {
    uint32_t job, tasks;
    char *name, *digest;          /* borrowed on put; owned after get */
    char *mode;                   /* borrowed on put (NULL: not recorded); owned after
                                     get, "" when the client did not say */
    const char *bad;              /* after a refused get: the field at fault (static) */
};
void wire_put_job(struct wbuf *b, const struct wire_job *j);
int wire_get_job(struct rbuf *r, struct wire_job *j);
void wire_job_fini(struct wire_job *j);

struct wire_names {
    uint32_t job, first, count;
    const char **ids;             /* borrowed on put; after get: pointers into the
                                     payload (valid for the callback) in an owned array */
};
void wire_put_names(struct wbuf *b, const struct wire_names *n);
int wire_get_names(struct rbuf *r, struct wire_names *n);

void wire_put_subscribe(struct wbuf *b, uint32_t period_ms);
int wire_get_subscribe(struct rbuf *r, uint32_t *period_ms);

/*
 * Per-job tallies, for consoles (trace/format/jobtally folds them from the events).  A
 * STATE carries at most WIRE_MAX_JOBS jobs, the most recently submitted (older ones are
 * long finished; `jackdaw jobs` lists every one), and at most WIRE_MAX_JOB_NODES node
 * rows over all of them (a node appears under a job once it ran some of its tasks), so
 * that a STATE of a large cluster running many jobs stays far below FRAME_MAX_BODY: 32
 * jobs of 2048 nodes' rows at 24 bytes is 1.5 MiB.
 */
#define WIRE_MAX_JOBS 32
#define WIRE_MAX_JOB_NODES 65536
#define WIRE_MAX_JOB_NAME 128
struct wire_job_node {
    int32_t node;
    uint32_t running;             /* its tasks of the job running there now */
    uint64_t done;                /* ended DONE there */
    int64_t busy_ns;              /* run time of its attempts there that ended */
};
struct wire_job_tally {
    uint32_t job;
    uint32_t tasks;               /* from its submit; 0 when unknown */
    uint64_t done, failed, cancelled;
    uint32_t running;
    int64_t submit_ns;            /* its first submit; -1 when not seen */
    int64_t end_ns;               /* its latest task end; -1 before any */
    int64_t busy_ns;              /* sum of its attempts' run times */
    char name[WIRE_MAX_JOB_NAME]; /* the workload's name; "" when not seen */
    uint32_t nnodes;
    struct wire_job_node *nodes;  /* borrowed on put; after get: into the state's array */
};

/* STATE: the collector's view, for consoles. */
struct wire_node_state {
    uint8_t seen;                 /* a LIVE arrived from it at least once */
    uint8_t connected;            /* its trace connection is up now */
    int64_t time_ns;              /* of its latest sample */
    struct trace_sample sample;
};
struct wire_state {
    int64_t now_ns;               /* collector's clock, ns since the run start */
    uint64_t events_written;      /* records in the trace file */
    uint32_t nnodes;
    struct wire_node_state *nodes; /* borrowed on put; owned after get */
    uint32_t nnotes;
    struct wire_note *notes;      /* borrowed on put; owned after get */
    uint8_t jobs_partial;         /* the tallies miss some events (0 or 1) */
    uint32_t njobs;
    struct wire_job_tally *jobs;  /* borrowed on put; owned after get */
    struct wire_job_node *job_nodes; /* after get: owned, every job's rows */
    const char *bad;              /* after a refused get: the field at fault (static) */
};
void wire_put_state(struct wbuf *b, const struct wire_state *s);
int wire_get_state(struct rbuf *r, struct wire_state *s);
void wire_state_fini(struct wire_state *s);

#endif
