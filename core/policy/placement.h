/*
 * placement — data-aware placement of ready tasks (DAWS, papers 000 §III.B and 002
 * §2.2.2, §4.4; 003 in brief): which ready queue a task that just became ready goes to
 * (Algorithm 1), the FLDS monitor that spills an overlong LReadyQ into SReadyQ, and the
 * `auto` controller that moves between MLB, FLDS and MDL as data movement demands.
 *
 * Owns nothing but the plain structs below; no I/O, no clock, no globals, no
 * allocation.  Times are seconds passed in by the caller (any monotonic origin).  The
 * node runtime (core/runtime/node.c) keeps one `flds_state` and one `placement_auto`
 * per node on its loop thread, calls placement_decide whenever a task becomes ready,
 * placement_flds_monitor on its timer, placement_flds_on_steal_failed and
 * placement_flds_poll_should_reset from its stealer, and placement_auto_observe once
 * per observation interval.  Any other caller drives it the same way, one set of structs
 * per node.
 * Tests: tests/unit/test_placement.c.
 *
 * Queue discipline this module assumes (papers 000 §III.B.2, 002 §2.2.2, 003): executors
 * take from LReadyQ first, then SReadyQ; thieves take only from SReadyQ; a task pushed
 * to a node lands in that node's LReadyQ and is never pushed again (a runtime may put it
 * there directly, or pass it here with `pushed` set).
 *
 * Return convention: functions that can fail return 0 or a negative errno; decisions are
 * returned by value and cannot fail.
 */
#ifndef JACKDAW_PLACEMENT_H
#define JACKDAW_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

enum placement_policy {
    PLACEMENT_WS = 0,   /* plain work stealing: stealable → SReadyQ, else LReadyQ */
    PLACEMENT_MLB = 1,  /* maximised load balancing: Algorithm 1 with t = +inf */
    PLACEMENT_MDL = 2,  /* maximised data locality: Algorithm 1 with t = 0 */
    PLACEMENT_RLDS = 3, /* rigid segregation: Algorithm 1 with the given t */
    PLACEMENT_FLDS = 4, /* flexible: as RLDS, plus the LReadyQ monitor */
    PLACEMENT_AUTO = 5, /* starts as FLDS, moves along MLB ↔ FLDS ↔ MDL at run time */
};

/*
 * How the FLDS time threshold tt reacts to events.  The papers disagree (see
 * placement.c, "Reading the papers"): 000 §IV.C/E halves tt when the monitor moves
 * tasks and doubles it when a steal fails; 002 §4.1.2 and §4.4 double it on a move and
 * halve it on a failed steal.
 */
enum flds_tt_rule {
    FLDS_TT_HALVE_ON_MOVE = 0,  /* paper 000 (the default) */
    FLDS_TT_DOUBLE_ON_MOVE = 1, /* paper 002 */
};

struct placement_params {
    enum placement_policy policy;
    double threshold;          /* t: tolerated ratio of data-transfer time to task
                                * length (002 Table 3: 0.5); RLDS, FLDS and auto */
    double bandwidth_Bps;      /* net_band, bytes per second (default 1 Gbit/s) */

    /* FLDS monitor (002 §2.2.2 d, §4.4; 000 §III.B.3 d, §IV.E) */
    double tt_initial_s;       /* 10 s (002 Table 3, 000 §IV.E) */
    double tt_min_s;           /* clamps for the halving and doubling so that tt */
    double tt_max_s;           /* neither reaches 0 nor overflows (not in the papers) */
    double tt_resume_s;        /* "small enough to allow work stealing again": at or
                                * below this a parked thief restarts its polling */
    enum flds_tt_rule tt_rule;
    double monitor_interval_s; /* how often the monitor looks (papers: "periodically") */
    /* tt and the monitor's pace follow the task lengths the node measures
     * (placement_flds_pace) rather than tt_initial_s and monitor_interval_s alone;
     * false once the user gives tt (--tt) */
    bool tt_from_tasks;

    /* auto (002 §4.4) */
    double auto_interval_s;    /* length of one observation interval */
    double auto_high;          /* observed ratio above auto_high·t: too much data moves */
    double auto_low;           /* observed ratio below auto_low·t: little data moves */
    uint32_t auto_dwell;       /* consecutive intervals on one side before a switch */
    uint32_t auto_dwell_max;   /* cap of the dwell's doubling after a reversed switch */
};

/* One input object of a ready task: the node holding it and its size. */
struct placement_object {
    uint32_t node;
    uint64_t bytes;
};

struct placement_input {
    bool stealable;            /* false pins the task to this node (LReadyQ) */
    bool pushed;               /* arrived by push from a peer: LReadyQ, no new decision */
    uint64_t all_data_size;    /* bytes of input the task needs (tm.all_data_size) */
    uint32_t self;             /* this node's id */
    double est_task_length_s;  /* running mean of tasks finished here; 0 when none */
    const struct placement_object *inputs; /* borrowed, num_inputs entries; NULL when 0:
                                            * one per parent output / declared input */
    uint32_t num_inputs;
    /* Tasks that share this node's link while they fetch (its slots: each may be
     * fetching for its next task): a move gets bandwidth / link_share.  0 or 1: all. */
    uint32_t link_share;
};

enum placement_queue { PLACE_LREADY = 0, PLACE_SREADY = 1, PLACE_PUSH = 2 };

/* Which branch produced a decision, for traces and tests; lines are Algorithm 1's. */
enum placement_why {
    PLACE_WHY_WS = 0,          /* ws policy: the stealable flag alone */
    PLACE_WHY_PINNED,          /* not stealable */
    PLACE_WHY_PUSHED,          /* arrived by push */
    PLACE_WHY_SMALL_ALL,       /* line 1: all input data is cheap to move */
    PLACE_WHY_SMALL_LARGEST,   /* line 12: no single object is worth following */
    PLACE_WHY_LARGEST_HERE,    /* line 14: the largest object is on this node */
    PLACE_WHY_LARGEST_THERE,   /* line 17: the largest object is on another node */
};

struct placement_decision {
    enum placement_queue queue;
    uint32_t node;             /* PLACE_PUSH only: where to push */
    enum placement_why why;
    enum placement_policy policy; /* the policy that decided (auto resolved) */
};

/* The papers' experiment settings (002 Table 3) with policy FLDS. */
void placement_params_default(struct placement_params *p);
/* 0, or -EINVAL with *why (static string, may be NULL) naming the bad field. */
int placement_params_check(const struct placement_params *p, const char **why);

/* Parses "ws" | "mlb" | "mdl" | "rlds" | "flds" | "auto"; -1 when unknown. */
int placement_policy_parse(const char *name);
/* Never NULL, so a corrupted value can be logged as it is. */
const char *placement_policy_name(enum placement_policy policy);
const char *placement_why_name(enum placement_why why);

/* The auto controller's state; the runtime keeps one per node. */
struct placement_auto;

/*
 * Algorithm 1 (002 §2.2.2, with net_band; 000 §III.B without).  Decides where a ready
 * task goes under p->policy; when that is PLACEMENT_AUTO, under the policy `a` has in
 * force (FLDS when a is NULL, where auto starts).  p NULL means ws, today's default.
 * In order:
 *   - not stealable → LReadyQ (pinned: pushing would move it as surely as a steal);
 *   - pushed → LReadyQ (the sender already decided; re-deciding on a stale view could
 *     bounce the task between nodes);
 *   - ws → SReadyQ;
 *   - all_data_size / bandwidth / est_task_length ≤ t → SReadyQ (line 1);
 *   - the largest input (ties: the first listed) has ratio ≤ t →
 *     SReadyQ (line 12);
 *   - it is on this node → LReadyQ (line 14), else PUSH to its node (line 17).
 * A ratio is 0 for 0 bytes, above 0 for any data (so MDL keeps every task that has
 * input data with its data), and +inf for data with a zero estimate or a zero
 * bandwidth: before any task has finished here, a task with input data follows its data
 * (MLB excepted: +inf ≤ +inf).  A caller with a better prior (say, the workload's
 * declared durations) passes it as est_task_length_s.  A task whose inputs are not
 * listed has a largest input of 0 bytes and goes to SReadyQ: no holder, no locality.
 */
struct placement_decision placement_decide(const struct placement_params *p,
                                           const struct placement_auto *a,
                                           const struct placement_input *in);

/*
 * Where a task that is ready at submission goes first: in->self is the node a plain
 * submission gives it (its hashed owner), and the answer is the node that node's
 * Algorithm 1 would push it to on arrival when every byte of the task's input is there
 * (it can start the moment it lands, and travels once), else in->self.  A task that must
 * fetch some of its data still goes by its owner: the nodes queue their tasks oldest
 * first, and delivered all at once each node fetched the same files first (all-pairs on
 * 12 nodes fell from 96 to 91 %), while the pushes, which arrive spread out, spread the
 * first fetches too.  The caller fills `in` as the owner would with nothing finished yet
 * (the task's declared inputs, its own length for a sleep task, the owner's slots as
 * link_share); auto starts as FLDS.  Called by the client's submission
 * (core/client/submit.c) and the simulator's (core/sim), so that a run and its
 * simulation start each task on the same node.
 */
uint32_t placement_submit_node(const struct placement_params *p,
                               const struct placement_input *in);

/* --- FLDS monitor ------------------------------------------------------------------ */

struct flds_state {
    double tt_s;               /* current time threshold tt */
    bool tt_paced;             /* tt was set from a measured task length */
    double interval_s;         /* the monitor's period; 0: p->monitor_interval_s */
    /* The monitor's last pass (checked: there was one).  A pass is due one period after
     * it, the period as it is now: a period that shrinks (the first task length
     * measured, placement_flds_pace) brings the next pass forward.  A due time fixed at
     * the last pass kept the papers' 1 s period for the first spill of every run, however
     * short its tasks: a fan-out of 0.1 s tasks, pushed to the node of their input,
     * waited 1 s before any other node could take one. */
    double last_check_s;
    bool checked;
    uint64_t moves;            /* monitor passes that moved tasks */
    uint64_t tasks_moved;
    uint64_t steal_failures;   /* failed steals reported by the stealer */
};

void placement_flds_init(struct flds_state *s, const struct placement_params *p);

/*
 * With p->tt_from_tasks, the monitor keeps the pace of the tasks the node runs: the
 * first estimate of a task's length (est_task_length_s > 0) sets tt to
 * FLDS_TT_TASKS of them (a queue longer than that at the node's pace spills; tt then
 * adapts by p->tt_rule as before), and every estimate sets the monitor's period to one
 * task length, between FLDS_MONITOR_MIN_S and p->monitor_interval_s.  The papers' 10 s
 * and "periodically" fit their minutes-long runs; a run of 0.1 s tasks is over before
 * such a monitor looks once.  No effect without the flag or an estimate.
 */
#define FLDS_TT_TASKS 2.0
#define FLDS_MONITOR_MIN_S 0.02
void placement_flds_pace(const struct placement_params *p, struct flds_state *s,
                         double est_task_length_s);

/*
 * How many tasks to move from the bottom of an LReadyQ of `lready_len` tasks so that
 * the rest runs in at most tt_s at `throughput_tps` (tasks per second finished on this
 * node so far): est_run_time = len / throughput; above tt, move len − ⌊tt·throughput⌋.
 * 000's example: 5000 queued, 1000 tasks in 10 s, tt = 30 s → 2000.  0 without a
 * throughput (nothing finished yet): the queue's run time cannot be estimated.
 */
uint64_t placement_flds_move_count(uint64_t lready_len, double throughput_tps, double tt_s);

/*
 * One pass of the monitor at `now_s`: 0 when FLDS is not in force or the pass is not
 * yet due (monitor_interval_s after the last one), else placement_flds_move_count with
 * the current tt.  A pass that moves tasks updates tt by p->tt_rule.  The caller moves
 * that many tasks from the bottom of LReadyQ — the least input data, readyq_take_tail —
 * to SReadyQ.
 */
uint64_t placement_flds_monitor(const struct placement_params *p,
                                const struct placement_auto *a, struct flds_state *s,
                                uint64_t lready_len, double throughput_tps, double now_s);

/* A steal attempt by this node failed: tt moves by p->tt_rule. */
void placement_flds_on_steal_failed(const struct placement_params *p, struct flds_state *s);

/*
 * The thief's polling interval has reached its upper bound (steal_state.parked): true
 * when tt has become small enough to allow work stealing again (tt ≤ tt_resume_s), and
 * the stealer should restart from the initial interval (steal_on_wake) instead of
 * parking (000 §IV.E, 002 §4.4).  Always false when FLDS is not in force.
 */
bool placement_flds_poll_should_reset(const struct placement_params *p,
                                      const struct placement_auto *a,
                                      const struct flds_state *s);

/* --- auto -------------------------------------------------------------------------- */

enum placement_switch_reason {
    PLACEMENT_SWITCH_MUCH_DATA = 0,   /* too many bytes moved: towards MDL */
    PLACEMENT_SWITCH_LITTLE_DATA = 1, /* few bytes moved: towards MLB */
};

/* One switch, for the runtime's log and trace (event "policy change"). */
struct placement_switch {
    double at_s;
    enum placement_policy from;
    enum placement_policy to;
    enum placement_switch_reason reason;
    double ratio;              /* the observed ratio that decided it */
};

/* What a node saw during one observation interval. */
struct placement_auto_sample {
    uint64_t bytes_moved;      /* input bytes fetched from other nodes */
    double busy_s;             /* sum of the run times of tasks that finished */
};

struct placement_auto {
    enum placement_policy in_force; /* MLB, FLDS or MDL */
    int streak_dir;            /* +1 towards MDL, -1 towards MLB, 0 none */
    uint32_t streak;           /* consecutive intervals in streak_dir */
    uint32_t dwell;            /* intervals needed now (doubles after a reversal) */
    uint32_t switches;
    struct placement_switch last; /* valid when switches > 0 */
};

void placement_auto_init(struct placement_auto *a, const struct placement_params *p);

/*
 * The transfer-time ratio the auto controller compares with t: time to move the
 * interval's remote bytes at the bandwidth, over the time spent running tasks.  It is
 * Algorithm 1's per-task ratio averaged over the interval.  Negative when busy_s is 0
 * (no information).
 */
double placement_auto_ratio(const struct placement_params *p,
                            const struct placement_auto_sample *sample);

/*
 * Feeds one interval's sample (p->policy must be PLACEMENT_AUTO, else false).  When
 * the ratio has stayed above auto_high·t (below auto_low·t) for `dwell` consecutive
 * intervals, steps one rung towards MDL (MLB) on the ladder MLB ↔ FLDS ↔ MDL, records
 * the switch in a->last and *out (may be NULL), and returns true.  A switch straight
 * back to the policy just left doubles the dwell (up to auto_dwell_max), so that a
 * policy whose own effect flips the measure does not flap; any other switch restores
 * it.  An interval with no busy time changes nothing.
 */
bool placement_auto_observe(const struct placement_params *p, struct placement_auto *a,
                            const struct placement_auto_sample *sample, double now_s,
                            struct placement_switch *out);

const char *placement_switch_reason_name(enum placement_switch_reason reason);

/* The policy in force: p->policy, or a's rung under auto (FLDS when a is NULL). */
enum placement_policy placement_in_force(const struct placement_params *p,
                                         const struct placement_auto *a);

#endif
