/*
 * placement — data-aware work stealing's placement half (papers 000 §III.B, 002
 * §2.2.2 and §4.4) as pure functions: Algorithm 1 under the four policies, the FLDS
 * monitor with its adaptive time threshold tt, and the auto controller.
 *
 * Owns nothing: every call works on the caller's structs.  Called on a node's loop
 * thread by core/runtime (once per ready task, so placement_decide must be cheap and
 * must not fail) and by tests/unit/test_placement.c.
 *
 * Reading the papers, where they are ambiguous or disagree:
 *
 *   - Algorithm 1, line 1 divides by est_task_length, which is unknown until a task has
 *     finished here.  The division is kept literal (IEEE): data over a zero estimate is
 *     an infinite ratio, so the first tasks with input data follow their data; zero
 *     bytes are a zero ratio (not 0/0), so tasks without data are stealable.  A zero
 *     bandwidth is treated the same way (moving data never pays).  000's Algorithm 1
 *     has no net_band (its t is a rate); 002's form is used, with t dimensionless.
 *
 *   - Line 4 reads tm.data_size.at(0), which throws for a task with no parents in the
 *     C++ original.  Here the largest of no inputs is 0 bytes, so line 12 sends such a
 *     task to SReadyQ: with no known holder there is no locality to keep.
 *
 *   - "The parent that produced the largest object" is per object, as in lines 4-11,
 *     not per node: three 40 MB objects on node A lose to one 50 MB object on node B.
 *     A caller that wants the per-node reading of the prose ("the scheduler that has
 *     the largest portion of the required data") can sum per node before calling.
 *     Lines 6-9 break ties by parent order (strict >), which depends on the order in
 *     which completions arrived; here ties go to the first listed — the runtime lists
 *     declared inputs in workload order, then parents by key, so the choice is
 *     reproducible and does not depend on where the task was submitted, and objects
 *     spread round-robin spread their tasks too (the lowest node id would not).
 *
 *   - tt's reaction: 000 (§IV.C all-pairs, §IV.E benchmarks) halves tt when ready tasks
 *     move from LReadyQ to SReadyQ and doubles it when work stealing fails; 002 (§4.1.2
 *     and §4.4) says the opposite, twice.  The issue asks for 000's rule, which is the
 *     default; 002's is FLDS_TT_DOUBLE_ON_MOVE.  Only under 002's rule does a failing
 *     thief's own tt fall, which is what makes the polling reset below reachable from
 *     the thief's state alone; under 000's rule it fires only on a node that has shed
 *     work at least as often as it failed to steal.
 *
 *   - "Set the polling interval back to the initial small value only if the threshold
 *     tt becomes too small to allow work stealing again" (000 §IV.E) is read, with 002
 *     §4.4 ("small enough. This would allow to do work stealing again"), as: at the
 *     bound, restart polling when tt ≤ tt_resume_s (default: the initial tt), since a
 *     small tt means overloaded queues spill into SReadyQ and there is work to steal.
 *
 *   - The papers give no period for the FLDS monitoring thread ("periodically") and no
 *     bounds for tt; 1 s and initial·2^∓10 are our choices.  The est_run_time uses "the
 *     overall throughput of the scheduler so far" (000 §III.B.3 d), passed in.
 *
 *   - Algorithm 1's transfer time is all_data_size / net_band, as if the task had the
 *     link to itself.  A node with S slots fetches for up to S tasks at once, so a
 *     task's share is net_band / S (link_share): with the whole link, all-pairs' 4.8 MB
 *     over 1 Gbit/s for a 0.1 s task is a ratio of 0.38, under t = 0.5, and FLDS moved
 *     every task's data as MLB does, though four slots fetching at once need 190 MB/s
 *     of a 125 MB/s link.  At the share, t keeps its meaning (the tolerated ratio of
 *     moving to running) and the papers' 0.5 holds without retuning per cluster.
 *
 *   - Auto (002 §4.4): start with FLDS; "if too much data is transferred" switch to
 *     MDL, "if few data is transmitted" to MLB.  "Too much" is measured with the same
 *     yardstick as Algorithm 1: an interval's remote bytes over the bandwidth, divided
 *     by the time its tasks ran, compared with t (above auto_high·t: too much; below
 *     auto_low·t: few).  The policies form the ladder MLB ↔ FLDS ↔ MDL, one rung per
 *     switch.  RLDS is not a rung: §4.4 names only these three, and §4.1.3 prefers FLDS
 *     to it except for widely spread data sizes, which one node's aggregate cannot see.
 */
#include "core/policy/placement.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* 1 Gbit/s, a commodity interconnect; 000's example quotes 10 Gbit/s theoretical. */
#define DEFAULT_BANDWIDTH_BPS 125e6

/* tt may halve or double ten times from its initial value before it is clamped. */
#define TT_RANGE 1024.0

static const char *const policy_names[] = {
    [PLACEMENT_WS] = "ws",     [PLACEMENT_MLB] = "mlb",   [PLACEMENT_MDL] = "mdl",
    [PLACEMENT_RLDS] = "rlds", [PLACEMENT_FLDS] = "flds", [PLACEMENT_AUTO] = "auto",
};

static const char *const why_names[] = {
    [PLACE_WHY_WS] = "ws",
    [PLACE_WHY_PINNED] = "pinned",
    [PLACE_WHY_PUSHED] = "pushed",
    [PLACE_WHY_SMALL_ALL] = "small-all-data",
    [PLACE_WHY_SMALL_LARGEST] = "small-largest-object",
    [PLACE_WHY_LARGEST_HERE] = "largest-object-here",
    [PLACE_WHY_LARGEST_THERE] = "largest-object-elsewhere",
};

static const char *const reason_names[] = {
    [PLACEMENT_SWITCH_MUCH_DATA] = "much-data-moved",
    [PLACEMENT_SWITCH_LITTLE_DATA] = "little-data-moved",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

void placement_params_default(struct placement_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    /* FLDS, not ws: a task without input data goes to SReadyQ under Algorithm 1 as it
     * does under ws, so a workload that declares no data runs as before, and one that
     * does gets its data weighed without a flag (issue 19). */
    p->policy = PLACEMENT_FLDS;
    p->threshold = 0.5;
    p->bandwidth_Bps = DEFAULT_BANDWIDTH_BPS;
    p->tt_initial_s = 10.0;
    p->tt_min_s = p->tt_initial_s / TT_RANGE;
    p->tt_max_s = p->tt_initial_s * TT_RANGE;
    p->tt_resume_s = p->tt_initial_s;
    p->tt_rule = FLDS_TT_HALVE_ON_MOVE;
    p->monitor_interval_s = 1.0;
    p->tt_from_tasks = true;
    p->auto_interval_s = 1.0;
    p->auto_high = 1.0;
    p->auto_low = 0.25;
    p->auto_dwell = 2;
    p->auto_dwell_max = 32;
}

static int fail(const char **why, const char *what)
{
    if (why)
        *why = what;
    return -EINVAL;
}

int placement_params_check(const struct placement_params *p, const char **why)
{
    if (!p)
        return fail(why, "no parameters");
    if ((unsigned)p->policy >= COUNT(policy_names))
        return fail(why, "unknown placement policy");
    if (!(p->threshold >= 0))
        return fail(why, "threshold must be 0 or more");
    if (!(p->bandwidth_Bps > 0) || !isfinite(p->bandwidth_Bps))
        return fail(why, "bandwidth must be a finite positive rate");
    if (!(p->tt_min_s > 0) || !(p->tt_min_s <= p->tt_initial_s) ||
        !(p->tt_initial_s <= p->tt_max_s) || !isfinite(p->tt_max_s))
        return fail(why, "FLDS tt must satisfy 0 < tt_min <= tt_initial <= tt_max < inf");
    if (!(p->tt_resume_s >= 0))
        return fail(why, "FLDS tt_resume must be 0 or more");
    if ((unsigned)p->tt_rule > FLDS_TT_DOUBLE_ON_MOVE)
        return fail(why, "unknown FLDS tt rule");
    if (!(p->monitor_interval_s >= 0) || !isfinite(p->monitor_interval_s))
        return fail(why, "FLDS monitor interval must be 0 or more seconds");
    if (!(p->auto_interval_s > 0) || !isfinite(p->auto_interval_s))
        return fail(why, "auto interval must be a positive number of seconds");
    if (!(p->auto_low >= 0) || !(p->auto_low <= p->auto_high) || !isfinite(p->auto_high))
        return fail(why, "auto bounds must satisfy 0 <= low <= high < inf");
    if (p->auto_dwell == 0 || p->auto_dwell_max < p->auto_dwell)
        return fail(why, "auto dwell must satisfy 1 <= dwell <= dwell_max");
    return 0;
}

int placement_policy_parse(const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < COUNT(policy_names); i++) {
        if (strcmp(name, policy_names[i]) == 0)
            return (int)i;
    }
    return -1;
}

const char *placement_policy_name(enum placement_policy policy)
{
    if ((unsigned)policy < COUNT(policy_names))
        return policy_names[policy];
    return "unknown";
}

const char *placement_why_name(enum placement_why why)
{
    if ((unsigned)why < COUNT(why_names))
        return why_names[why];
    return "unknown";
}

const char *placement_switch_reason_name(enum placement_switch_reason reason)
{
    if ((unsigned)reason < COUNT(reason_names))
        return reason_names[reason];
    return "unknown";
}

enum placement_policy placement_in_force(const struct placement_params *p,
                                         const struct placement_auto *a)
{
    if (!p)
        return PLACEMENT_WS;
    if (p->policy != PLACEMENT_AUTO)
        return p->policy;
    return a ? a->in_force : PLACEMENT_FLDS;
}

/*
 * Algorithm 1's ratio: seconds to move `bytes` over seconds the task runs.  Zero bytes
 * cost nothing whatever the estimate; otherwise a missing estimate or bandwidth makes
 * the move infinitely expensive, which keeps data-bearing tasks with their data.
 */
static double transfer_ratio(uint64_t bytes, double bandwidth_Bps, double est_s)
{
    if (bytes == 0)
        return 0.0;
    if (!(bandwidth_Bps > 0) || !(est_s > 0))
        return INFINITY;
    double r = (double)bytes / bandwidth_Bps / est_s;
    /* Some data is never free, even over an infinite bandwidth or a huge estimate:
     * MDL (t = 0) must keep every task that has input data with its data. */
    return r > DBL_MIN ? r : DBL_MIN;
}

static struct placement_decision decided(enum placement_queue q, uint32_t node,
                                         enum placement_why why,
                                         enum placement_policy policy)
{
    struct placement_decision d = {.queue = q, .node = node, .why = why, .policy = policy};
    return d;
}

struct placement_decision placement_decide(const struct placement_params *p,
                                           const struct placement_auto *a,
                                           const struct placement_input *in)
{
    enum placement_policy policy = placement_in_force(p, a);

    assert(in);
    if (!in->stealable)
        return decided(PLACE_LREADY, 0, PLACE_WHY_PINNED, policy);
    if (in->pushed)
        return decided(PLACE_LREADY, 0, PLACE_WHY_PUSHED, policy);

    double t;
    switch (policy) {
    case PLACEMENT_MLB:
        t = INFINITY; /* the papers' LONG_MAX */
        break;
    case PLACEMENT_MDL:
        t = 0.0;
        break;
    case PLACEMENT_RLDS:
    case PLACEMENT_FLDS:
        t = p->threshold;
        break;
    case PLACEMENT_WS:
    case PLACEMENT_AUTO: /* a corrupted auto state: behave as before placement existed */
    default:
        return decided(PLACE_SREADY, 0, PLACE_WHY_WS, policy);
    }

    double bw = p->bandwidth_Bps / (in->link_share > 1 ? in->link_share : 1);
    double est = in->est_task_length_s;
    if (transfer_ratio(in->all_data_size, bw, est) <= t)
        return decided(PLACE_SREADY, 0, PLACE_WHY_SMALL_ALL, policy);

    uint64_t max_bytes = 0;
    uint32_t holder = in->self;
    for (uint32_t i = 0; in->inputs && i < in->num_inputs; i++) {
        const struct placement_object *o = &in->inputs[i];
        /* Ties: the first listed, as Algorithm 1's strict > (lines 6-9).  Not this
         * node when it holds one of the tied: then where a task goes would depend on
         * where it was submitted (hashed), and under MDL, which never moves a task
         * again, all-pairs' nodes ended with 185 to 211 tasks where each holds the
         * first file of 200.  Not the lowest node id either: with objects spread
         * round-robin that sends most tasks to node 0. */
        if (i == 0 || o->bytes > max_bytes) {
            max_bytes = o->bytes;
            holder = o->node;
        }
    }
    if (transfer_ratio(max_bytes, bw, est) <= t)
        return decided(PLACE_SREADY, 0, PLACE_WHY_SMALL_LARGEST, policy);
    if (holder == in->self)
        return decided(PLACE_LREADY, 0, PLACE_WHY_LARGEST_HERE, policy);
    return decided(PLACE_PUSH, holder, PLACE_WHY_LARGEST_THERE, policy);
}

uint32_t placement_submit_node(const struct placement_params *p,
                               const struct placement_input *in)
{
    struct placement_decision d = placement_decide(p, NULL, in);
    if (d.queue != PLACE_PUSH)
        return in->self;
    for (uint32_t i = 0; i < in->num_inputs; i++)
        if (in->inputs[i].bytes && in->inputs[i].node != d.node)
            return in->self;
    return d.node;
}

/* --- FLDS ------------------------------------------------------------------------- */

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void tt_scale(const struct placement_params *p, struct flds_state *s, double by)
{
    s->tt_s = clamp(s->tt_s * by, p->tt_min_s, p->tt_max_s);
}

void placement_flds_init(struct flds_state *s, const struct placement_params *p)
{
    if (!s || !p)
        return;
    memset(s, 0, sizeof *s);
    s->tt_s = p->tt_initial_s;
}

void placement_flds_pace(const struct placement_params *p, struct flds_state *s,
                         double est_task_length_s)
{
    if (!p || !s || !p->tt_from_tasks || !(est_task_length_s > 0) ||
        !isfinite(est_task_length_s))
        return;
    if (!s->tt_paced) {
        s->tt_s = clamp(FLDS_TT_TASKS * est_task_length_s, p->tt_min_s, p->tt_max_s);
        s->tt_paced = true;
    }
    double hi = p->monitor_interval_s > FLDS_MONITOR_MIN_S ? p->monitor_interval_s
                                                           : FLDS_MONITOR_MIN_S;
    s->interval_s = clamp(est_task_length_s, FLDS_MONITOR_MIN_S, hi);
}

uint64_t placement_flds_move_count(uint64_t lready_len, double throughput_tps, double tt_s)
{
    if (lready_len == 0 || !(throughput_tps > 0) || !(tt_s >= 0))
        return 0;
    double keep = tt_s * throughput_tps;
    /* A product that should be an integer may land an ulp below it (0.7·10); reading
     * it as the integer avoids moving one task too many. */
    keep = floor(keep * (1.0 + 1e-12));
    if (keep >= (double)lready_len)
        return 0;
    return lready_len - (uint64_t)keep;
}

uint64_t placement_flds_monitor(const struct placement_params *p,
                                const struct placement_auto *a, struct flds_state *s,
                                uint64_t lready_len, double throughput_tps, double now_s)
{
    if (!s || placement_in_force(p, a) != PLACEMENT_FLDS)
        return 0;
    double period = s->interval_s > 0 ? s->interval_s : p->monitor_interval_s;
    if (s->checked && now_s < s->last_check_s + period)
        return 0;
    s->checked = true;
    s->last_check_s = now_s;
    uint64_t n = placement_flds_move_count(lready_len, throughput_tps, s->tt_s);
    if (n == 0)
        return 0;
    s->moves++;
    s->tasks_moved += n;
    tt_scale(p, s, p->tt_rule == FLDS_TT_HALVE_ON_MOVE ? 0.5 : 2.0);
    return n;
}

void placement_flds_on_steal_failed(const struct placement_params *p, struct flds_state *s)
{
    if (!p || !s)
        return;
    s->steal_failures++;
    tt_scale(p, s, p->tt_rule == FLDS_TT_HALVE_ON_MOVE ? 2.0 : 0.5);
}

bool placement_flds_poll_should_reset(const struct placement_params *p,
                                      const struct placement_auto *a,
                                      const struct flds_state *s)
{
    return s && placement_in_force(p, a) == PLACEMENT_FLDS && s->tt_s <= p->tt_resume_s;
}

/* --- auto -------------------------------------------------------------------------- */

void placement_auto_init(struct placement_auto *a, const struct placement_params *p)
{
    if (!a || !p)
        return;
    memset(a, 0, sizeof *a);
    a->in_force = PLACEMENT_FLDS; /* 002 §4.4: "could always start with the FLDS policy" */
    a->dwell = p->auto_dwell ? p->auto_dwell : 1;
}

double placement_auto_ratio(const struct placement_params *p,
                            const struct placement_auto_sample *sample)
{
    if (!p || !sample || !(sample->busy_s > 0))
        return -1.0;
    return transfer_ratio(sample->bytes_moved, p->bandwidth_Bps, sample->busy_s);
}

/* factor·t, where a zero factor stays 0 even for an infinite t (0·inf is NaN). */
static double scaled(double factor, double t)
{
    return factor == 0 ? 0.0 : factor * t;
}

static enum placement_policy rung_step(enum placement_policy from, int dir)
{
    if (dir > 0)
        return from == PLACEMENT_MLB ? PLACEMENT_FLDS : PLACEMENT_MDL;
    return from == PLACEMENT_MDL ? PLACEMENT_FLDS : PLACEMENT_MLB;
}

bool placement_auto_observe(const struct placement_params *p, struct placement_auto *a,
                            const struct placement_auto_sample *sample, double now_s,
                            struct placement_switch *out)
{
    if (!p || !a || !sample || p->policy != PLACEMENT_AUTO)
        return false;
    double r = placement_auto_ratio(p, sample);
    if (r < 0)
        return false;

    int dir = 0;
    if (r > scaled(p->auto_high, p->threshold) && a->in_force != PLACEMENT_MDL)
        dir = +1;
    else if (r < scaled(p->auto_low, p->threshold) && a->in_force != PLACEMENT_MLB)
        dir = -1;
    if (dir == 0) {
        a->streak_dir = 0;
        a->streak = 0;
        return false;
    }
    if (dir == a->streak_dir) {
        a->streak++;
    } else {
        a->streak_dir = dir;
        a->streak = 1;
    }
    if (a->streak < a->dwell)
        return false;

    struct placement_switch sw = {
        .at_s = now_s,
        .from = a->in_force,
        .to = rung_step(a->in_force, dir),
        .reason = dir > 0 ? PLACEMENT_SWITCH_MUCH_DATA : PLACEMENT_SWITCH_LITTLE_DATA,
        .ratio = r,
    };
    bool reversal = a->switches > 0 && a->last.from == sw.to && a->last.to == sw.from;
    if (reversal) {
        uint32_t doubled = a->dwell > UINT32_MAX / 2 ? UINT32_MAX : a->dwell * 2;
        a->dwell = doubled < p->auto_dwell_max ? doubled : p->auto_dwell_max;
    } else {
        a->dwell = p->auto_dwell;
    }
    if (a->dwell == 0)
        a->dwell = 1; /* unchecked params: a zero dwell would switch on every sample */
    a->in_force = sw.to;
    a->streak_dir = 0;
    a->streak = 0;
    a->switches++;
    a->last = sw;
    if (out)
        *out = sw;
    return true;
}
