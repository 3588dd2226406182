/*
 * model — what the console knows about a run, separate from how it is drawn.
 *
 * The same two inputs drive it live and in replay, so that what the live view showed at
 * time t the replay shows at t: node samples (struct trace_sample, cumulative counters
 * plus queue lengths: from the collector's STATE messages live, from NODE_SAMPLE events
 * in replay) and notes (struct wire_note: job submits, policy changes, failed tasks,
 * steal grants, node up/down, dropped events: from STATE live, from the same event kinds
 * in replay).  A third input, per-job tallies (struct wire_job_tally: from STATE live,
 * folded from the trace's task events by trace/format/jobtally in replay), gives the job
 * list.  model_tick(now) then derives everything the screens show: progress, rates,
 * efficiency, ETA, histories, the steal matrix, the event log, each job's figures.
 *
 * With a job selected (model_select_job) the view is of that job: the header's totals,
 * rates, efficiency, ETA and elapsed time are the job's, and each node carries its share
 * of the job (job_running, job_done, job_util); the log lines say which job they are of
 * (or -1, cluster-wide), for the drawing to filter.
 *
 * Pure: no I/O, no clock, no curses.  Times are ns since the run start (the trace's
 * time base).  Owns its nodes, histories and log.  Called by tui/console.c (live),
 * tui/replay.c (replay) and the tests; one thread.
 */
#ifndef JACKDAW_TUI_MODEL_H
#define JACKDAW_TUI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model/trace_kind.h"
#include "trace/format/wire.h"

/* Points kept per history (one per model_tick that moved time forward by at least
 * MODEL_HISTORY_STEP_NS). */
#define MODEL_HISTORY 512
#define MODEL_HISTORY_STEP_NS 250000000LL   /* 0.25 s */
/* Steals older than this leave the thief x victim matrix ("recent steals"). */
#define MODEL_STEAL_WINDOW_NS 10000000000LL /* 10 s */
#define MODEL_LOG_LINES 1000
/* "Throughput now" is measured over this much of the recent past. */
#define MODEL_RATE_WINDOW_NS 2000000000LL   /* 2 s */
/* Node ids above this are garbage and ignored (the collector's bound, WIRE_MAX_NODES). */
#define MODEL_MAX_NODE_ID 65535
/* Flows kept in the view, largest first. */
#define MODEL_MAX_FLOWS 16

/* A ring of values, oldest first when read with model_hist_get (head is the oldest).
 * The cluster's and every node's histories have the same length and end at the same
 * step: a node that appears later is padded with zeros. */
struct model_hist {
    float v[MODEL_HISTORY];
    uint32_t head, len;
};
float model_hist_get(const struct model_hist *h, uint32_t i); /* i < len, 0 = oldest */

struct model_node {
    int32_t id;
    uint32_t slots;             /* from the header, then from samples */
    double speed;               /* from the header; 1.0 when unknown */
    bool seen;                  /* at least one sample */
    bool connected;             /* live: its trace stream is up; replay: after NODE_UP
                                   and before NODE_DOWN */
    bool dead;                  /* declared dead by a peer (NODE_DOWN, status 1): DOWN
                                   for good, not just a closed stream; a NODE_UP of its
                                   own (a new member) clears it */
    uint64_t resubmitted_from;  /* its tasks handed on after it died (TASK_RESUBMIT) */
    uint64_t resubmitted_to;    /* tasks it was handed as new attempts */
    int64_t time_ns;            /* of the latest sample */
    struct trace_sample s;      /* latest sample */
    /* derived by model_tick */
    double util;                /* busy / slots now */
    double util_avg;            /* busy_ns / (slots x elapsed since its first sample) */
    double cache_hit_rate;      /* cache_hits / (cache_hits + fetches); -1 when neither */
    struct model_hist util_hist;            /* busy/slots per history step */
    struct model_hist waitq_hist, lreadyq_hist, sreadyq_hist;
    uint64_t steals_in, steals_out;         /* tasks in grants seen in notes, all time */
    uint64_t done;              /* ended - failed - cancelled (the sample's ended counts
                                   every end, its failed only FAILED ones) */
    uint64_t cancelled;         /* cancellation notes covered by its latest sample */
    /* its share of the selected job (zero when none is selected, or it ran none) */
    uint32_t job_running;       /* the job's tasks running there now */
    uint64_t job_done;          /* the job's tasks done there */
    double job_util;            /* job_running / slots */
    double job_busy_s;          /* run time of the job's attempts there */
};

/* A job, from its tallies, and what model_tick derives from them. */
struct model_job {
    uint32_t id;
    char name[WIRE_MAX_JOB_NAME]; /* the workload; "" when unknown */
    const char *state;          /* "running", "done" or "failed" (as `jackdaw jobs`) */
    uint64_t total;             /* 0 when unknown */
    uint64_t done, failed, cancelled;
    uint32_t running;
    int64_t submit_ns, end_ns;  /* first submit, latest end; -1 when unknown, none */
    double busy_s;              /* busy task-seconds: the sum of its attempts' run times */
    bool finished;              /* every task ended */
    double progress;            /* (done + failed + cancelled) / total; -1 when unknown */
    double elapsed_s;           /* first submit to last end once finished, else to now */
    double efficiency;          /* busy_s / (the cluster's slots x elapsed_s) */
};

/* One log line: a note rendered for people, or a burst of similar notes folded into one
 * line that is rewritten as the burst grows ("   0.100 8 nodes up (64 slots)"). */
struct model_log_line {
    int64_t time_ns;            /* of the (first) note */
    uint8_t kind;               /* enum trace_kind of the note */
    int32_t node;               /* -1 for the collector or a burst over several nodes */
    int64_t job;                /* the job it is about; -1 cluster-wide (nodes, policy) */
    char text[160];             /* seconds since the run start, then the note:
                                   "  12.345 node 4: task 2:17 failed (exit 1)" */
};

struct model_flow {             /* steals from victim to thief in the recent window */
    int32_t thief, victim;
    uint64_t tasks;
};

struct model_view {
    /* run */
    char run_id[64];
    char workload[128];         /* name from the header or the first JOB_SUBMIT */
    char policy[64];            /* the placement policy in force: the latest POLICY_CHANGE
                                   of any node, or "mixed (a, b)" when nodes differ */
    int64_t now_ns;             /* the latest model_tick */
    int64_t first_ns;           /* the earliest sample or note: elapsed = now - first */
    /* progress */
    uint64_t total;             /* tasks of every JOB_SUBMIT seen; 0 when unknown */
    uint64_t done, failed;      /* sums over nodes of done (see model_node) and failed */
    uint64_t cancelled;         /* sum over nodes of cancelled */
    uint64_t running;           /* sum of busy */
    double tput_now;            /* tasks ended per second over MODEL_RATE_WINDOW_NS */
    double tput_avg;            /* ended / elapsed */
    double efficiency;          /* sum busy_ns / (sum slots x elapsed); 0 before any */
    double eta_s;               /* (total - done - failed - cancelled) / tput_now; 0 when
                                   all have ended; -1 when unknown */
    /* Counters of samples are cumulative since each node started: tput_avg, efficiency
     * and util_avg count from a node's first sample (and elapsed for efficiency is per
     * node, first to latest sample), so that a console attached mid-run measures what it
     * saw.  Totals (done, failed, the steal counters) are absolute. */
    uint32_t slots;             /* sum over nodes */
    /* cluster */
    uint32_t nnodes;
    const struct model_node *nodes; /* nnodes entries, sorted by id; may move when a node
                                       appears: take it from the view after every call */
    struct model_hist util_hist;    /* cluster busy / slots per history step */
    uint64_t steals_total, steal_requests, steal_fails, dropped; /* sums of the samples'
                                   stolen_in (tasks), steal_requests, steal_fails, dropped */
    /* failures: notes seen (TASK_RESUBMIT, OBJECT_RECOMPUTE) and nodes declared dead */
    uint64_t resubmitted, recomputed;
    uint32_t dead;
    /* steal matrix: recent[thief * nnodes + victim] tasks in the recent window, thief and
     * victim being indexes into nodes (equal to ids when they are 0..nnodes-1) (NULL when
     * nnodes > 64: use flows); flows (ids): the largest recent flows, most tasks first,
     * at most MODEL_MAX_FLOWS */
    const uint32_t *recent;
    const struct model_flow *flows;
    uint32_t nflows;
    bool steals_whole;          /* recent and flows count the whole run, not the window */
    /* log, oldest first */
    const struct model_log_line *log;
    uint32_t nlog;
    /* jobs, in submit order (at most WIRE_MAX_JOBS, the latest), and the one selected */
    const struct model_job *jobs;
    uint32_t njobs;
    int64_t job;                /* the selected job's id; -1 for all */
    const struct model_job *selected; /* its entry in jobs; NULL when all, or not listed */
    bool jobs_partial;          /* the tallies miss some events (a resumed or lagging
                                   collector's) */
    double elapsed_s;           /* the header's: now - first_ns, or the selected job's */
    /* samples and notes taken since the last reset (replay checks it is still its model) */
    uint64_t inputs;
};

struct model;

struct model *model_create(void);
void model_destroy(struct model *m); /* NULL is a no-op */
/* The steal matrix and flows of the view count the whole run (true) or the recent window
 * (false, the default); kept across model_reset. */
void model_steals_whole(struct model *m, bool whole);
/* Forgets everything but the header (replay seeking backwards starts over). */
void model_reset(struct model *m);

/* The run header (trace metadata or the collector's INFO): run id, nodes with slots
 * and speeds, workload.  -EINVAL when it is not JSON of that shape (the model keeps
 * working without it: nodes then appear as their samples arrive). */
int model_set_header(struct model *m, const char *header_json);

/* Latest state of a node (node >= 0). */
void model_sample(struct model *m, int32_t node, int64_t time_ns, const struct trace_sample *s,
                  bool connected);
/* A notable event (any node, -1 for the collector's JOB_SUBMIT).  A TASK_RESUBMIT's count
 * is the dead node it was taken from, its peer the new holder. */
void model_note(struct model *m, const struct wire_note *n);
/* The jobs' latest tallies (they replace the previous ones; n <= WIRE_MAX_JOBS are kept;
 * not counted in inputs); partial when they miss some events (the collector's say so).  A job whose tasks have all ended gets a log line at its last
 * end, once. */
void model_jobs(struct model *m, const struct wire_job_tally *jobs, uint32_t n, bool partial);
/* Selects the job the view is of (-1: all); kept across model_reset.  The view is derived
 * again at once, at the latest tick's time. */
void model_select_job(struct model *m, int64_t job);
/* The job after `job` in the list (the first after -1), or -1 after the last: the
 * console's cycling key. */
int64_t model_next_job(const struct model *m, int64_t job);
/* Advances the clock to now_ns and recomputes the view; histories take a point per
 * MODEL_HISTORY_STEP_NS crossed. */
void model_tick(struct model *m, int64_t now_ns);

const struct model_view *model_view(const struct model *m);

/* Node table: sort keys and a filter, for the console's table (indexes into nodes). */
enum model_sort {
    MODEL_SORT_ID, MODEL_SORT_UTIL, MODEL_SORT_SLOTS, MODEL_SORT_SPEED, MODEL_SORT_WAITQ,
    MODEL_SORT_LREADYQ, MODEL_SORT_SREADYQ, MODEL_SORT_COMPLETEQ, MODEL_SORT_DONE,
    MODEL_SORT_STEALS_IN, MODEL_SORT_STEALS_OUT, MODEL_SORT_STEALS_FAILED, MODEL_SORT_BYTES_IN,
    MODEL_SORT_BYTES_OUT, MODEL_SORT_CACHE, MODEL_SORT_COUNT
};
const char *model_sort_name(enum model_sort k);
/* "dead" (declared dead by a peer), "down" (not connected), "busy" (a slot busy) or
 * "idle": the state words of the filter. */
const char *model_node_state(const struct model_node *n);
/* Tasks stolen in and out by the node: its samples' cumulative counts once it sent one
 * (exact, as the header's total and the detail pane), else the grants seen in notes
 * (which lag when notes are capped or late). */
uint64_t model_node_stolen_in(const struct model_node *n);
uint64_t model_node_stolen_out(const struct model_node *n);
/* Fills out[] with the indexes of the nodes that match filter (substring, ignoring case,
 * of "node N" or of a state word: "idle", "busy", "down"; NULL or "" for all), sorted by
 * key (descending when desc; util and done of the selected job, when one is), ties by
 * id.  Returns how many (at most cap). */
uint32_t model_rows(const struct model *m, enum model_sort key, bool desc, const char *filter,
                    uint32_t *out, uint32_t cap);
/* Whether some node could ever match the filter: a piece of "node N" (letters of "node",
 * digits, one space between) or of a state word.  "speed>0.5" could not: the console
 * says it is not understood rather than "no node matches". */
bool model_filter_understood(const char *filter);

#endif
