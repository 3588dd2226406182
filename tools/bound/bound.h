/*
 * bound — how short a workload's makespan could be on a given cluster: the sub-optimal
 * bound of paper 002 §3 (a dynamic programme over the DAG), the capacity bound (total
 * work over the cluster's capacity) and the critical path.  The largest of the three is
 * the binding one.
 *
 * Pure computation over a loaded workload (core/model/workload.h) and a description of
 * the cluster: no I/O, no clock, no globals.  Owns nothing after it returns.  Called by
 * `jackdaw bound` (tools/cmd/cmd_bound.c), by `jackdaw report` (tools/cmd/cmd_report.c)
 * to state a run's quality as bound / actual makespan, and by tests/unit/test_bound.c.
 * O(tasks + edges + inputs) time, O(tasks + nodes) memory.
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
 * Sub-optimal bound (paper 002 §3), with t_ef(v) the earliest finish of task v and P(v)
 * its parents:
 *     t_ef(v)   = min(t_ef¹(v), t_ef²(v)) + t_exec(v)
 *     t_ef¹(v)  = max_{u ∈ P(v)} (t_ef(u) + t_mvdata(u, v)) + t_qwait(v)          (case 1)
 *     t_ef²(v)  = min_{w ∈ P(v)} (max(t_ef(w), max_{u ∈ P(v)∖{w}} (t_ef(u) +
 *                 t_mvdata(u, v))) + t_mvtask(v, w)) + t_qwait(v)                    (case 2)
 *     t_qwait   = Σ_{i=1..k} (i − 1)·l / k = (k − 1)·l / 2                          (eq. 1)
 *     t_mvdata(u, v) = d(u) / B,   t_mvtask(v, w) = size(v) / B
 * and the bound is max_v t_ef(v).  Case 1 runs v on a node that ran none of its parents
 * (all their outputs move, the task does not); case 2 runs it where parent w ran (w's
 * output is local, the others move, and so does the task).  What the paper leaves open,
 * and what this module chooses:
 *   - Where a task runs, for its speed: on a fastest node (t_exec = duration / the
 *     largest speed).  The programme does not track nodes, so it cannot charge slower
 *     nodes to particular tasks; contention and slow nodes are left to t_qwait and to the
 *     capacity bound.
 *   - Case 2 waits for w itself: max(t_ef(w), …).  The formula as printed omits t_ef(w),
 *     which would let a task with one parent start before that parent ends.
 *   - t_qwait (eq. 1) per topological level, not per workload.  The paper's k is the
 *     tasks per core of a workload whose tasks all compete for the cores at once (its
 *     experiments: 1,000 per core).  In a DAG only tasks that can be ready together
 *     compete, so k and l are taken over the tasks of one level (same longest distance
 *     from a root, so no two of them depend on each other): k·l = the level's work over
 *     the cluster's capacity (Σ slots × speed, the time that work takes spread over every
 *     slot), l = the level's mean t_exec on the fastest node, and k < 1 waits 0.  A chain
 *     thus never waits (one task per level) and a bag of n equal tasks of length l on C
 *     slots waits (n/C − 1)·l/2, as eq. 1 says.  With a workload-wide k a chain of n tasks
 *     on one slot would wait (n − 1)·l/2 at every step, far above its real makespan.
 *   - Initial objects act as extra parents finished at time 0, one per node holding some
 *     of v's input objects, with d = the bytes of those objects; case 2 may also run v on
 *     such a node (its objects there are local, the task moves there).
 *   - size(v) is the task's size on the wire when it is moved (proto_put_task): 42 bytes,
 *     plus 4 + the command's length for a command task, plus 20 per input (declared
 *     inputs and parents' outputs).
 *   - A task with neither parents nor inputs takes case 1 only (no parent node to join).
 * The paper's case 2 costs O(p²) per task; here the largest and second largest arrival
 * give "the latest arrival other than w's" in O(1), so the whole is O(tasks + edges).
 * The bound is an estimate, not a guarantee: t_qwait charges an average wait to every
 * task and case 2 moves every other parent's output even when a better schedule would
 * co-locate grandparents (the paper's "sub-optimal"), so a schedule can beat it; it is
 * never below the critical path computed here.  And since eq. 1 is the mean wait, not
 * the last task's, a wide level ends about half-way through its share of the capacity
 * bound: on bags and on the Table 3 DAGs the capacity bound binds.  (The paper's own
 * figures took t_qwait from MATRIX runs, §4.2.3; a trace could supply it the same way.)
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
    double suboptimal_s;    /* paper 002 §3: max t_ef(v) */
    double capacity_s;      /* total work / capacity */
    double critical_path_s;
    enum bound_kind binding; /* the largest; on a tie the first in enum order */
    double binding_s;

    /* What the bounds were computed from. */
    double total_work_s;    /* Σ duration_s of sleep tasks: the work at speed 1 */
    double capacity;        /* Σ slots × speed: work-seconds per second */
    uint64_t total_slots;
    double fastest_speed;
    uint64_t edges;         /* Σ parents */
    uint32_t levels;        /* topological levels (longest chain, in tasks) */
    /* How the programme went. */
    uint32_t case2_tasks;   /* tasks whose t_ef came from case 2 (strictly shorter) */
    double max_qwait_s;     /* the largest t_qwait of any level */
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
