/*
 * follow — following a submitted job to its end: one record per task end (kept in
 * memory and optionally written as JSON Lines), a live progress line, and the summary
 * with the papers' figures.  Called by job.c (job_submit), which `jackdaw run` and
 * `jackdaw submit --wait` reach.  Owns the records it keeps and the summary's per-node
 * array; the records file is the caller's.
 *
 * The summary lists the first failed tasks with their reason or output, each cut to 2 KiB
 * with its full length named (core/base/text.h), so one task cannot flood the terminal.
 *
 * Records file (--records FILE), one line per report:
 *   {"id": "t3", "index": 3, "status": "done", "node": 2, "ready_ns": …, "start_ns": …,
 *    "end_ns": …, "exit": 0}
 * status is "done", "failed", "timed out" (a failure: it passed its time limit) or
 * "cancelled"; "signal" is added when a signal ended the task.  A task reported twice
 * appears twice: the records are evidence, not a tally.
 *
 * Summary definitions (papers 000/002): makespan = last end - first submit;
 * throughput = tasks / makespan; efficiency = ideal / makespan where ideal = total work
 * / total capacity, work being duration_s for sleep tasks and measured run time times
 * the node's speed for commands, capacity = sum of slots x speed; average time per task
 * per CPU = makespan x total slots / tasks.
 */
#ifndef JACKDAW_FOLLOW_H
#define JACKDAW_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uv.h>

#include "core/model/workload.h"
#include "core/net/proto.h"

struct follow_failure {
    uint32_t index;
    uint32_t node;
    int exit_code, term_signal;
    bool timed_out;
    char *detail;           /* owned */
};

struct follow {
    const struct workload *wl; /* borrowed */
    uint32_t job;
    uint32_t nodes;
    int64_t t_submit, t_last_end;
    uint8_t *status;        /* owned, per task: 0 pending, else enum task_status + 1 */
    uint32_t *runs;         /* owned, per task: reports received */
    uint8_t *listed;        /* owned, per task: 1 when its end came from the nodes' records
                               (attach); NULL until one did */
    uint32_t *node;         /* owned, per task */
    double *work;           /* owned, per task: speed-normalised busy seconds */
    uint64_t *node_tasks;   /* owned, per node: tasks run (done or failed) */
    double *node_speed;     /* owned, per node */
    uint32_t ended, done, failed, cancelled, duplicates, foreign;
    uint32_t timed_out;     /* of the failed, those that passed their time limit */
    uint32_t retried;       /* tasks that failed a run and ran again (`retries`) */
    uint64_t retries;       /* their failed runs */
    struct follow_failure failures[10];
    uint32_t nfailures;
    FILE *records;          /* borrowed, may be NULL */
    /* The nodes' counters just before the job was submitted (submit --wait, run): the
     * summary's steals, pushes and bytes are the job's window, not the cluster's life.
     * NULL when there is none (attach): the summary says its totals are the cluster's. */
    struct proto_stats *base;  /* owned, nodes entries */
    bool *base_got;            /* owned: which nodes answered */
    bool finished;          /* every task ended */
    int stop;               /* finished, or interrupted: what the follower waits on */
    int interrupted;        /* signal number that cut the follow short, or 0 */
    /* progress */
    uv_timer_t timer;
    bool progress_on, tty;
    bool line_open;         /* a progress line is drawn in place, with no newline yet */
    int64_t last_print;
    uint32_t last_ended;
};

void follow_init(struct follow *f, const struct workload *wl, uint32_t job, uint32_t nodes,
                 const double *speeds, int64_t t_submit, FILE *records);
void follow_fini(struct follow *f);
/* The client callback for task-end reports (arg = struct follow *). */
void follow_on_task_end(void *arg, const struct proto_task_end *e);
/* An end a client attaching to the job learnt from a node's records (JOB_ENDED): counted
 * like a report, except that it and a report of the same task are one end, whichever
 * comes first (an end may be in the records and reported to the new client too). */
void follow_on_task_listed(struct follow *f, const struct proto_task_end *e);
/* Starts a progress line on stderr (rewritten in place on a terminal, plain lines
 * every few seconds otherwise). */
void follow_progress_start(struct follow *f, uv_loop_t *loop);
void follow_progress_stop(struct follow *f);
/* Ends a progress line drawn in place, so that a message can follow on its own line;
 * nothing when none is open. */
void follow_progress_break(struct follow *f);

struct summary_node {
    uint32_t id, slots;
    double speed;
    uint64_t tasks_run, steals_attempted, steals_succeeded, tasks_stolen;
    uint64_t tasks_pushed, bytes_in, bytes_out;
};

struct summary {
    uint32_t job;
    uint32_t tasks, done, failed, cancelled, nodes, total_slots;
    uint32_t timed_out;     /* of the failed */
    uint32_t retried;       /* tasks run again after a failed run */
    uint64_t retries;       /* those failed runs */
    double makespan_s, throughput_tps, efficiency, ideal_s, avg_time_per_task_per_cpu_s;
    /* data plane (paper 002's figures): tasks whose inputs were all local when they
     * started, over tasks with inputs; bytes fetched between nodes; fetched copies
     * reused over cache lookups */
    uint64_t tasks_with_inputs, locality_hits, bytes_moved, cache_hits, cache_misses;
    uint64_t tasks_pushed, policy_switches;
    double locality_hit_rate, cache_hit_rate; /* -1 when there was nothing to measure */
    const char *mode;
    struct summary_node *per_node; /* owned */
    /* failures: the nodes declared dead (deaths_merge), and the live nodes' sums */
    int64_t t_submit;       /* wall ns, to say when into the job a node died */
    uint32_t ndeaths;
    struct proto_dead *deaths; /* owned, NULL when none */
    uint64_t tasks_resubmitted, objects_recomputed;
    bool cluster_totals;    /* steals, pushes, bytes: the cluster's since its start */
};

/* Fills a summary from the records and the nodes' statistics (stats[0..nodes); got[i]
 * says node i answered, NULL: every node did; stats NULL: none did). */
void follow_summary(const struct follow *f, const struct proto_stats *stats, const bool *got,
                    uint32_t nodes, const char *mode, struct summary *s);
void follow_summary_fini(struct summary *s);
/* Takes the baseline (struct follow's base) from the nodes' statistics now: best effort,
 * a node that does not answer has none and its whole counters are reported. */
struct client;
void follow_take_baseline(struct follow *f, struct client *c);

/*
 * The deaths the answering nodes know of, merged into one entry per dead node, oldest
 * first: the entry of the node that declared it (its own failure detector: by is the
 * reporting node), else the earliest any node learned of it.  out has room for `nodes`.
 * Pure: status and the summary call it; unit-tested.
 */
uint32_t follow_deaths(const struct proto_stats *stats, const bool *got, uint32_t nodes,
                       struct proto_dead *out);
/* The summary's failure lines ("failures: ..." then one line per dead node), nothing
 * when no node died and nothing was resubmitted. */
void follow_print_failures(const struct summary *s, FILE *out);
/* HH:MM:SS of a wall time in local time ("?" when unknown). */
void follow_clock_time(int64_t wall_ns, char *buf, size_t len);
void follow_summary_print_text(const struct summary *s, const struct follow *f, FILE *out);
void follow_summary_print_json(const struct summary *s, FILE *out);

#endif
