/*
 * bound — how short a workload's makespan could be on a given cluster: the sub-optimal
 * bound of paper 002 §3 (a dynamic programme over the DAG), the capacity bound (total
 * work over the cluster's capacity) and the critical path.  Each is a lower bound: no
 * schedule on that cluster, real or simulated, ends sooner.  The largest of the three is
 * the binding one.
 *
 * Pure computation over a loaded workload (core/model/workload.h) and a description of
 * the cluster: no I/O, no clock, no globals.  Owns nothing after it returns.  Called by
 * `jackdaw bound` (tools/cmd/cmd_bound.c), by `jackdaw report` (tools/cmd/cmd_report.c)
 * to state a run's quality as bound / actual makespan, and by tests/unit/test_bound.c.
 * O(tasks + edges·log(parents) + inputs) time, O(tasks + nodes) memory.
 *
 * The model, common to the three bounds:
 *   - A sleep task takes duration_s / speed on a node of that speed; noop and command
 *     tasks count 0 s (a command's length is unknown until it runs).
 *   - The network is paper 002's: one rate B between any two nodes (--bandwidth; 0 means
 *     unlimited, every transfer then takes 0 s), and transfers from different nodes
 *     overlap.  Moving x bytes takes x / B.
 *   - An initial object (an object line) is on its node from time 0; "spread" objects are
 *     where the runtime puts them (workload_object_node: object index mod nodes).
 *
 * Sub-optimal bound: the programme of paper 002 §3 over the DAG, t_ef(v) the earliest
 * that task v can end, made a strict lower bound.  The paper calls its programme "a
 * sub-optimal lower bound of the overall timespan" and took t_qwait from measured runs
 * (§4.2.3); charged as a model instead, a wait per task is not a bound (any one task
 * may be run first), and both simulated and real runs beat it (a 6-tile Cholesky on 1
 * node x 2 slots: 0.129 s against runs of 0.120 s).  So every term here is one no
 * schedule can beat, and contention enters where it can be proved, over sets of tasks:
 *
 *     t_ef(v)    = t_ready(v) + t_exec(v), where t_ready(v), the earliest v can start, is
 *     t_ready(v) = max(min over Q ⊆ P(v) of t_Q(v),  (unavoidable input bytes) / B)
 *     t_Q(v)    = max( max_{u ∈ P(v)∖Q} (t_ef(u) + d(u)/B),     the outputs that move
 *                      max_{u ∈ Q} t_ef(u),                      the parents that ran
 *                      min_{u ∈ Q} t_ready(u) + Σ_{u ∈ Q} w(u) / K )   where v runs
 *
 *   - Q is the set of v's parents that ran on v's node: case 1 of the paper is Q = ∅
 *     (every parent's output moves), case 2 is Q = {w}.  Q of any size is allowed, since
 *     a schedule may run several parents where v runs; what it costs them is that they
 *     share that node: their work w (at speed 1) over K, the largest slots × speed of
 *     any node, after the first of them could start.  For a wait of at most τ, Q must
 *     hold every parent whose output would arrive after τ, and a larger Q only waits
 *     longer, so the programme tries the prefixes of the parents sorted by t_ef(u) +
 *     d(u)/B, latest first: O(p log p) for p parents.
 *   - t_exec at the fastest speed; t_mvtask is left out (a task may be submitted where it
 *     runs; its description is some tens of bytes).
 *   - Initial objects: v runs on one node, so every group of its input objects but one
 *     (per holding node) moves; at least the second largest group's bytes / B.  That
 *     and the parents' term are minimised independently, which only lowers the bound.
 *   - Contention: a set X of tasks none of which can start before h = min t_ready over
 *     X, and each of which leaves a tail of at least q (the longest chain of t_exec
 *     after it), keeps the cluster busy for its work over the capacity C (Σ slots ×
 *     speed), so the makespan is at least h + work(X)/C + q.  The sets are the levels
 *     (same longest distance from a root), the levels up to each, and the levels from
 *     each (the whole DAG, either way, is the capacity bound).  contention_s is the
 *     largest; the sub-optimal bound is max(max_v t_ef(v), contention_s).
 * Each t_ef(u) is a lower bound on u's end in any schedule on this cluster (by induction
 * in topological order: an output cannot leave before its task ends nor cross a link
 * faster than B, and a node's slots do at most K work-seconds a second), so the whole is
 * a lower bound.  It is never below the critical path: whatever Q, v waits for every
 * parent's end.  What it cannot see, and why a schedule may still end later than it
 * (the paper's "sub-optimal"): where a grandparent's output went, and two tasks
 * competing for a slot unless a level, or a set of parents, shows it.  O(tasks + edges·log(parents)) time, O(tasks) memory.
 *
 * Capacity bound: total work / Σ (slots × speed).  A strict lower bound: a slot of speed
 * s does at most s seconds of work per second.
 *
 * Critical path: the longest chain of t_exec at the fastest speed, where a task also
 * waits for the input objects it cannot have locally wherever it runs: at least the
 * bytes of the second largest per-node group of its input objects / B (run it on the
 * node with the largest group; the rest move in parallel from time 0).  Parents'
 * outputs add nothing, since a task may run where its parents ran.  A strict lower
 * bound under the model above.
 *
 * Return convention (tools/bound, as core/): 0, or a negative errno with *cause set
 * to an owned message naming the bad input.
 */
#ifndef JACKDAW_BOUND_H
#define JACKDAW_BOUND_H

#include <stdint.h>

#include "core/model/workload.h"

/* The cluster the bound is computed for. */
struct bound_cluster {
    uint32_t nodes;
    const uint32_t *slots;  /* borrowed; `nodes` entries, each >= 1 */
    const double *speeds;   /* borrowed; `nodes` entries in (0, 1] */
    double bandwidth;       /* bytes per second between two nodes; 0: unlimited */
};

enum bound_kind { BOUND_SUBOPTIMAL, BOUND_CAPACITY, BOUND_CRITICAL_PATH, BOUND_KIND_COUNT };

struct bound_result {
    double suboptimal_s;    /* paper 002 §3, strict: max(max t_ef(v), contention_s) */
    double capacity_s;      /* total work / capacity */
    double critical_path_s;
    enum bound_kind binding; /* the largest; on a tie capacity, then critical path */
    double binding_s;

    /* What the bounds were computed from. */
    double total_work_s;    /* Σ duration_s of sleep tasks: the work at speed 1 */
    double capacity;        /* Σ slots × speed: work-seconds per second */
    uint64_t total_slots;
    double fastest_speed;
    uint64_t edges;         /* Σ parents */
    uint32_t levels;        /* topological levels (longest chain, in tasks) */
    /* How the programme went. */
    uint32_t case2_tasks;   /* tasks whose t_ready ran some parents where they run (Q ≠ ∅,
                             * strictly sooner than moving every output) */
    double contention_s;    /* the largest contention term; 0 when none */
    uint32_t contention_level; /* the level of that set; UINT32_MAX if none */
    uint32_t suboptimal_last; /* a task with the largest t_ef; UINT32_MAX if no tasks */
    uint32_t critical_last;   /* the task ending the critical path; UINT32_MAX if none */
};

/* "sub-optimal", "capacity", "critical path"; NULL when out of range. */
const char *bound_kind_name(enum bound_kind kind);

/*
 * Computes the three bounds of `wl` on cluster `cl` into *out.  `finish`, when not NULL,
 * has wl->count entries and receives t_ef of every task (file order).  -EINVAL with a
 * cause for a cluster without nodes, a node with 0 slots, a speed outside (0, 1], a
 * negative or non-finite bandwidth, or an object pinned to a node outside the cluster;
 * -ENOMEM.
 */
int bound_compute(const struct workload *wl, const struct bound_cluster *cl,
                  struct bound_result *out, double *finish, char **cause);

#endif
