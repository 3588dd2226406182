/*
 * report analysis — reads one trace and computes every figure `jackdaw report` shows:
 * the papers' summary figures, utilization and queues over time, per-node work, data
 * movement, steals, the potential for work stealing, the idle core-seconds broken down
 * by cause, and an audit of every steal.
 *
 * Files: analysis.c (the pass over the file), sweep.c (the time sweep), header.c (the
 * run header), figures.c (the figures' keys and labels).
 *
 * Owns: a report_analysis owns everything it points to.  Callers: tools/cmd/cmd_report.c,
 * tools/cmd/cmd_compare.c, tools/cmd/cmd_diff.c, the renderers (tools/report/render*.c)
 * and tests/unit/test_report.c.  Offline tool code: out of memory aborts through xalloc.
 * Return convention: 0 or a negative errno, with *cause an owned sentence naming the file
 * and, for a bad record, its index (from trace/format/reader).
 *
 * Method.  One pass over the file (trace/format/reader) fills a table of tasks and a list
 * of the state changes that matter over time; the list is sorted by time and swept once.
 * Events of different nodes interleave by block in the file, so a time sweep is the only
 * way to know what every node held at the same instant.  Memory is about 100 bytes per
 * task.  Times are seconds since the run start (the header's start_ns).
 *
 * Definitions (share/doc/report.md repeats them for users):
 *   window      [t0, t1]: t0 = the first JOB_SUBMIT or TASK_SUBMIT, t1 = the last TASK_END.
 *   makespan    t1 - t0.
 *   throughput  tasks ended (done or failed) / makespan.
 *   work        sum over tasks that ran of (END - START) x the speed of the node that ran
 *               them: the task's length at speed 1 (a sleep D runs D / speed).
 *   ideal       work / sum over nodes of slots x speed: the makespan of a perfect schedule
 *               with no overhead, no dependency wait and no data movement.
 *   efficiency  ideal / makespan (paper 002 §4: ideal time over actual time).
 *   time per task per CPU   makespan x slots / tasks ended (paper 002 §4); its ideal is
 *               the mean task length.
 *   utilization busy slot-seconds / (slots x makespan), overall, per node and per bin.
 *   locality hit rate   of the tasks that started with inputs (TASK_START count > 0), the
 *               share that had every input on the node (status 0).
 *   cache hit rate      CACHE_HIT / (CACHE_HIT + DATA_FETCH), by count.
 *   steal success       paper 004 Fig. 8: requests that yielded at least one task, i.e.
 *               STEAL_GRANT / STEAL_REQUEST.  attempt success also counts the attempts
 *               that found no victim to ask (STEAL_FAIL no-victim, which has no request).
 *
 * Queues.  A task is in node n's LReadyQ from its TASK_QUEUED_LOCAL on n (a push lands so),
 * in SReadyQ from TASK_QUEUED_SHARED or TASK_STOLEN_IN on n, and leaves at its TASK_START,
 * TASK_STOLEN_OUT, TASK_PUSHED or TASK_END on n.  A task staging its inputs has no event
 * of its own and still counts as queued until it starts.  Queue plots use the NODE_SAMPLE
 * values instead (what the daemons measured).
 *
 * Potential for work stealing E_b (paper 004 eq. 1-3, reading of ../shared/papers
 * README): the window is cut into bins b.  Node i polls its ready count (LReadyQ +
 * SReadyQ) right after each task it starts in b, as PaRSEC polled after each successful
 * select; a node that starts nothing in b contributes its time-weighted mean ready count
 * over b instead (and the largest count it held).  w_i = mean of node i's polls / the
 * largest value polled in b by any node (0 when that is 0); I_b = max_i w_i - mean_i w_i;
 * E_b = I_b x P with P the number of nodes.
 *
 * Lost core-seconds.  Over the window every node offers slots x makespan core-seconds;
 * each instant its idle slots (slots minus running tasks, never below 0) are charged to
 * exactly one cause, first match wins, so the causes sum to the idle total:
 *   ramp_up    before the node's first TASK_START;
 *   tail       after the node's last TASK_END (other nodes still run);
 *   data       idle slots up to the number of the node's fetches in flight
 *              (DATA_FETCH covers [time - duration, time]): a slot held while its task's
 *              inputs arrive, or a free slot whose next task is still fetching;
 *   dispatch   idle slots up to the node's own queued tasks: ready work here not yet
 *              started (the node's loop latency, or tasks staging without a fetch);
 *   steal      the node has a STEAL_REQUEST without answer (GRANT or FAIL) while another
 *              node's SReadyQ holds work: the latency of moving work;
 *   imbalance  another node's SReadyQ holds work and no request is out: stealable work
 *              existed elsewhere;
 *   locality   no SReadyQ elsewhere has work but another node's LReadyQ does: work held
 *              where its data is while this node idled;
 *   no_work    no ready task anywhere: the DAG itself gave nothing to run.
 *   failure    (listed last, but checked first) a node died: every slot of a node from
 *              the first NODE_DOWN about it (a closed connection is the first sign) on,
 *              when it is later declared dead; and every idle slot of the other nodes
 *              from then until the last task resubmitted from it started again (its new
 *              attempt's first TASK_START; the window's end when one never did).
 * Work thrown away: the run time of attempts that lost (share/doc/trace-schema.md,
 * "Attempts"): START to END of a late run, or START to its node's first NODE_DOWN for a
 * run that died with it.  It is busy time, not idle: shown beside failure recovery with
 * the counts of TASK_RESUBMIT and OBJECT_RECOMPUTE events.  An attempt is known lost when
 * a higher one of the task has been read; a lost END read before that (blocks of
 * different nodes interleave in the file) is counted as the task's end until the higher
 * END replaces it, and its run stays in busy and work.
 * A node that never started a task has no ramp-up or tail; its idle time falls to the
 * other causes.
 *
 * Steal audit.  For each TASK_STOLEN_OUT (victim v, time t) of a task that later started
 * (t1, on the thief or wherever it finally ran): its position p in v's queues at t is v's
 * queued count just before it left (thieves take from the tail, so every other queued
 * task was ahead of it); v's throughput r is the rate of its last (up to 16) starts
 * before t, (k - 1) / (newest - oldest), or, with fewer than two, its whole-run start
 * rate.  The estimate is t + p / r (the p-th start from t).  Helpful when t1 is earlier;
 * gain = estimate - t1 (negative for harmful).  Steals whose task never started, or
 * whose victim has no measurable rate, are counted as unjudged.
 *
 * Bound.  bound_makespan_s is NaN until the caller fills it (report_set_bound) with the
 * sub-optimal bound of the workload (`jackdaw bound`); quality = bound / makespan is
 * paper 002's "percentage of sub-optimal".
 */
#ifndef JACKDAW_REPORT_ANALYSIS_H
#define JACKDAW_REPORT_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum report_lost_cause {
    REPORT_LOST_RAMP_UP,
    REPORT_LOST_TAIL,
    REPORT_LOST_DATA,
    REPORT_LOST_DISPATCH,
    REPORT_LOST_STEAL,
    REPORT_LOST_IMBALANCE,
    REPORT_LOST_LOCALITY,
    REPORT_LOST_NO_WORK,
    REPORT_LOST_FAILURE,  /* appended: checked first, see above */
    REPORT_LOST_COUNT
};

/* Scalar figures, one stable key each (report_figure_info).  NaN when undefined (a rate
 * over nothing); the renderers print NaN as null / "–". */
enum report_figure {
    RF_MAKESPAN_S,
    RF_THROUGHPUT_TPS,
    RF_EFFICIENCY,
    RF_IDEAL_S,
    RF_WORK_S,
    RF_TIME_PER_TASK_PER_CPU_S,
    RF_MEAN_TASK_S,
    RF_UTILIZATION,
    RF_SETUP_S,
    RF_RAMP_UP_S,       /* first submit to every slot busy at once (or every task, when
                           there are fewer); NaN when never */
    RF_NODES,
    RF_SLOTS,
    RF_TASKS_SUBMITTED,
    RF_TASKS_DONE,
    RF_TASKS_FAILED,
    RF_TASKS_CANCELLED,
    RF_LOCALITY_HIT_RATE,
    RF_TASKS_WITH_INPUTS,
    RF_BYTES_MOVED,
    RF_FETCHES,
    RF_CACHE_HITS,
    RF_CACHE_HIT_RATE,
    RF_TASKS_PUSHED,
    RF_STEAL_REQUESTS,
    RF_STEAL_GRANTS,
    RF_STEAL_FAILS,
    RF_STEAL_SUCCESS_PCT,
    RF_STEAL_ATTEMPT_SUCCESS_PCT,
    RF_TASKS_STOLEN,
    RF_STEAL_TASKS_ASKED,
    RF_STEAL_TASKS_GRANTED,
    RF_INFO_SENT,
    RF_INFO_RECEIVED,
    RF_TOKEN_PASSES,
    RF_POTENTIAL_MEAN,
    RF_POTENTIAL_MAX,
    RF_CAPACITY_CORE_S,
    RF_BUSY_CORE_S,
    RF_IDLE_CORE_S,
    RF_LOST_RAMP_UP_S,   /* the REPORT_LOST_* causes, in that order */
    RF_LOST_TAIL_S,
    RF_LOST_DATA_S,
    RF_LOST_DISPATCH_S,
    RF_LOST_STEAL_S,
    RF_LOST_IMBALANCE_S,
    RF_LOST_LOCALITY_S,
    RF_LOST_NO_WORK_S,
    RF_LOST_FAILURE_S,
    RF_STEALS_AUDITED,
    RF_STEALS_HELPFUL,
    RF_STEALS_HARMFUL,
    RF_STEAL_GAIN_S,
    RF_BOUND_MAKESPAN_S,
    RF_BOUND_QUALITY,
    RF_EVENTS_DROPPED,
    RF_TASKS_RESUBMITTED,   /* TASK_RESUBMIT events */
    RF_OBJECTS_RECOMPUTED,  /* OBJECT_RECOMPUTE events */
    RF_WORK_THROWN_AWAY_S,  /* run time of attempts that lost */
    /* What commands used (TASK_END and TASK_RETRY usage): NaN when no run was measured. */
    RF_CPU_S,               /* user + system CPU seconds of measured runs */
    RF_CPU_EFFICIENCY,      /* their CPU seconds over their wall seconds */
    RF_MAX_RSS_BYTES,       /* the largest resident set one run reached */
    RF_READ_BYTES,          /* bytes their processes read */
    RF_WRITE_BYTES,         /* bytes they wrote */
    RF_COUNT
};

/* Which way is better, for compare and diff. */
enum report_sense { REPORT_NEUTRAL, REPORT_HIGHER_BETTER, REPORT_LOWER_BETTER };
/* How a figure prints. */
enum report_unit { RU_SECONDS, RU_RATIO, RU_PERCENT, RU_COUNT, RU_BYTES, RU_RATE, RU_NUMBER };

struct report_figure_info {
    const char *key;   /* JSON key in "figures", CSV row name; never changes */
    const char *label; /* for people */
    enum report_unit unit;
    enum report_sense sense;
    const char *group; /* the report section it belongs to */
};

const struct report_figure_info *report_figure_info(enum report_figure f);
const char *report_lost_cause_key(enum report_lost_cause c);   /* "ramp_up", … */
const char *report_lost_cause_label(enum report_lost_cause c); /* "ramp-up", … */

struct report_node {
    int32_t id;
    int32_t slots;
    double speed;
    uint64_t tasks_run;     /* ended after a START here (done or failed) */
    uint64_t tasks_failed;
    double busy_s;          /* sum of END - START of the tasks run here */
    double utilization;     /* busy_s / (slots x makespan) */
    double first_start_s, last_end_s; /* NaN when it ran nothing */
    uint64_t stolen_in, stolen_out, pushed_out;
    uint64_t retries;       /* failed runs run again (TASK_RETRY) */
    uint64_t steal_requests, steal_grants, steal_fails;
    uint64_t tasks_asked, tasks_granted; /* summed counts of its requests and grants */
    uint64_t info_sent, info_received, token_passes; /* its last sample's counters */
    uint64_t tasks_with_inputs, locality_hits;
    uint64_t fetches, fetch_bytes, cache_hits;
    double lost_s[REPORT_LOST_COUNT];
    /* Command runs here whose usage the trace has (done, failed and retried runs):
     * their CPU and wall seconds; cpu_efficiency = cpu_s / cpu_wall_s, NaN without. */
    uint64_t measured_runs;
    double cpu_s, cpu_wall_s, cpu_efficiency;
    uint64_t max_rss, read_bytes, write_bytes;
};

/* One bin of the window, [t_s, t_s + bin_s). */
struct report_bin {
    double t_s;
    double utilization;  /* busy slot-seconds / (slots x bin) */
    double busy_slots;   /* mean running tasks */
    double waitq, lreadyq, sreadyq; /* sum over nodes of the sampled lengths (mean of the
                                       node's samples in the bin, else its last one) */
    double potential;    /* E_b */
    double imbalance;    /* I_b */
};

/* One audited steal. */
struct report_steal {
    uint64_t task;          /* job << 32 | index */
    const char *name;       /* borrowed from the analysis; NULL when the trace names none */
    int32_t victim, thief;  /* node ids */
    double stolen_s, started_s, estimate_s, gain_s; /* gain = estimate - started */
    uint32_t position;
    double victim_rate_tps;
};

#define REPORT_WORST_STEALS 10

struct report_run {
    uint64_t task;
    double work_s;
};

/* One job of a trace of several, reported alone (report --job J's figures), for the
 * whole-trace report's list of jobs (filled by the command: it reads the trace again
 * per job). */
struct report_job_row {
    uint32_t job;
    char *workload;         /* owned; its JOB_SUBMIT's name, or NULL */
    double submitted, done, failed, cancelled;
    double makespan_s, efficiency, bound_quality; /* NaN when unknown */
};

/* One run of a task on a node, START to END, for the task stream (charts.c). */
struct report_span {
    double start_s, end_s;  /* since the report window's start */
    int32_t node;           /* index into nodes */
    uint8_t status;         /* enum task_status of its END */
};
/* The task stream keeps this many runs at most; a bigger run has no task-stream chart. */
#define REPORT_SPANS_MAX 20000

struct report_analysis {
    char *trace_path;       /* owned */
    bool cut;               /* the file ended inside a block: its whole blocks were read */
    /* From the header (NULL when absent). */
    char *run_id, *workload_name, *workload_digest;
    char *placement, *steal_policy; /* from config.node_args, else the defaults */
    char *label;            /* "flds/adaptive, 4 nodes, fanout.jsonl" for compare */
    char *short_label;      /* "flds/adaptive", or compare's --label: under a bar */
    char *workload_path;    /* names[0] of the first JOB_SUBMIT; NULL when none */
    /* names[2] of that JOB_SUBMIT, the job's submission mode as recorded (unchecked:
     * the trace's word); NULL when it records none (a trace of before the mode). */
    char *workload_mode;

    size_t nnodes;
    struct report_node *nodes; /* owned, by node id */
    double figures[RF_COUNT];
    double start_s, end_s;  /* the window */

    /* thief x victim: steal_tasks[thief * nnodes + victim] tasks moved (STOLEN_IN),
     * steal_asks[...] STEAL_REQUESTs; indices into nodes[].  Both NULL beyond
     * REPORT_MATRIX_MAX_NODES nodes (a warning says so). */
    uint64_t *steal_tasks, *steal_asks;
    uint64_t steal_fails_empty, steal_fails_no_victim, steal_fails_timeout;

    uint64_t steals_unjudged;
    struct report_steal worst[REPORT_WORST_STEALS]; /* most harmful first */
    size_t nworst;

    size_t nbins;
    double bin_s;
    struct report_bin *bins;   /* owned, nbins */
    double *node_utilization;  /* owned, nbins x nnodes: [bin * nnodes + node] */

    char *names;               /* owned arena of task names (borrowed by worst[].name) */
    size_t names_len, names_cap;
    char **warnings;           /* owned sentences: dropped events, tasks never ended, … */
    size_t nwarnings;
    /* The tasks that ended done, with the work they were measured to do (run time x node
     * speed), so that report_use_workload can count a sleep task's declared duration
     * instead, as `run`'s summary does. */
    struct report_run *done_runs;
    size_t ndone_runs, cap_done_runs;
    /* Every run that ended here (done or failed), up to REPORT_SPANS_MAX; nspans_all
     * counts them all, so a reader knows when the stream was left out. */
    struct report_span *spans;
    size_t nspans, cap_spans, nspans_all;
    /* owned; a trace of several jobs: each one's own figures, in submit order (NULL:
     * one job, or the caller did not ask) */
    struct report_job_row *job_rows;
    size_t njob_rows;
    uint32_t workload_job;  /* the job of the JOB_SUBMIT that named workload_path */
    uint32_t njobs;         /* distinct jobs the trace announces (JOB_SUBMIT) */
    uint32_t job_ids[8];    /* the first of them, for the warning that lists them */
    bool work_declared;     /* report_use_workload counted the workload's durations */
    /* Which bound binds (the largest of `jackdaw bound`'s three): "sub-optimal",
     * "capacity" or "critical path"; static, NULL until report_set_bound. */
    const char *bound_name;
};

struct report_options {
    unsigned bins;          /* bins over the window; 0 for REPORT_DEFAULT_BINS */
    /* Report job J alone: other jobs' task events are left out and the window is J's
     * (its submit to its last end).  0: every job, and a warning when there are several.
     * Steal attempts and node samples name no job and stay in. */
    uint32_t job;
};

#define REPORT_DEFAULT_BINS 100
#define REPORT_MATRIX_MAX_NODES 2048
#define REPORT_MAX_BINS 100000

/* Reads the trace at path.  A crash-cut file is analysed from its whole blocks (cut is
 * set, and a warning says so).  -EBADMSG / -errno with *cause for a file that cannot be
 * read or a record that does not decode. */
int report_analyze(const char *path, const struct report_options *opt,
                   struct report_analysis **out, char **cause);
void report_analysis_destroy(struct report_analysis *a); /* NULL is a no-op */

struct workload;
/*
 * The run's own workload (the JOB_SUBMIT's, workload_path): a sleep task that ended done
 * did its declared duration of work, whatever its sleep measured (a late timer on a busy
 * machine is not work), so work, ideal makespan and efficiency are recomputed with the
 * declared durations, as `run`'s summary computes them; commands keep their measured
 * time.  Tasks of other jobs keep theirs.
 */
void report_use_workload(struct report_analysis *a, const struct workload *wl);

/* Fills the bound hook: bound_makespan_s (the binding bound, named `name`: a static
 * string) and quality = bound / makespan. */
void report_set_bound(struct report_analysis *a, double bound_makespan_s, const char *name);

#endif
