/*
 * sim — the cluster simulator (issue 20): a workload run on N simulated nodes by the
 * same core/policy functions the daemons call, in simulated time, with no thread, no
 * socket and no clock.  A discrete-event core of our own (a queue of events keyed
 * on simulated nanoseconds, ties broken by insertion order, so a run is a function of
 * its inputs and its seed): SimGrid's actors would cost a context switch per message,
 * and the scales the issue asks for (10^6 nodes) are millions of messages.
 *
 * What is modelled, per node: its slots and speed; the ready queue (oldest task first,
 * as the daemons' readyq orders equal priorities); the metadata of paper 002 — a task's
 * record lives on task_key_owner's node, a parent's end travels to it and its
 * readiness from it to the task's holder, each message one `latency_s`; placement
 * (placement_decide: LReadyQ, SReadyQ or a push to the data; the FLDS monitor spilling
 * LReadyQ into SReadyQ; auto's controller, placement_auto_observe); the dispatcher's
 * choices (core/policy/dispatch.h's dispatch_next, the daemons' own: a free slot takes a
 * task whose inputs are here, up to `slots` others fetch theirs meanwhile, the one near
 * the head missing the fewest bytes first) with its inputs (its parents' outputs on
 * their runners, the workload's objects where workload_object_node puts them) moved
 * over the holder's egress and the reader's ingress, links of `bandwidth` bytes a
 * second that their transfers share (sim_net.c), and cached where they arrive; a task
 * that needs a copy already on its way waits for it.
 *
 * Stealing, every part of the policy space with the daemons' own functions, each
 * message one `latency_s` (sim_core.h names the files): the thief of
 * core/policy/steal.h (starvation ready or ready+successors, victims drawn by
 * steal_pick_victims, load queries and the most loaded chosen or one victim asked
 * straight away, exponential back-off and parking, woken when a node has stealable work
 * again) and its victim (steal_grant after steal_keep within the request's bound,
 * PaRSEC's waiting-time guard); A2WS (core/policy/a2ws.h: each node's vector, its
 * entries sent to the ring neighbours every A2WS_RING_INTERVAL_MS a side, a2ws_plan's
 * victims and amounts, preemptive starts, --info ring and --amount a2ws with other
 * victims); the CTWS token (core/policy/ctws.h: one token round the ring, ctws_visit at
 * each holder, pacing and rest); LW (core/policy/lw.h: the leader's capacity, tasks
 * forwarded to it, its held requests served first come first served).  What is not:
 * the CPU time a daemon spends per message and per byte; a link's share left unused by
 * transfers held back at their other end (sim_net.c shares each link locally, not by
 * max-min fairness); lost messages, and so the daemons' timeouts and repeats; the
 * ring's entries riding free on other traffic (sim_ring.c); a thief that parks is woken
 * by new work, not by the work a peer already held when it parked (the CTWS token's
 * rest is, as idle.c does).
 *
 * Events go out through one trace_sink per node (core/model/trace_kind.h), with `wall`
 * the simulated time plus cfg->start_wall_ns, so the trace tools read a simulated run as
 * they read a real one; the writer of that file is the caller's (tools/cmd/cmd_sim.c).
 *
 * Owns its run's state, freed before sim_run returns.  Called by tools/cmd/cmd_sim.c and
 * tests/unit/test_sim.c.
 */
#ifndef JACKDAW_SIM_H
#define JACKDAW_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model/trace_kind.h"
#include "core/model/workload.h"
#include "core/policy/placement.h"
#include "core/policy/steal.h"

/*
 * Memory: a node costs a few hundred bytes (its queues, cache and links grow with its
 * tasks), a task 32, a transfer 96 while it is asked for or in flight, and 8 for each
 * task that waits for it.  Parts that read
 * the A2WS information vector (--victims a2ws, --amount a2ws, --starvation preemptive,
 * --info ring: the a2ws and daws+a2ws presets) give each node its window of the vector, 2R + 1 entries of 32 bytes: N·(2R + 1)·32 bytes in all.  At
 * the default radius (R = 20 % of N up to 160 nodes, 32 from there) that is 2 KB a node
 * past 160 nodes, 2.1 MB at 1,024 and 208 MB at 10^5; sim_check refuses more than
 * SIM_A2WS_MAX_BYTES (1,032,444 nodes at the default radius, 2·10^6 at R = 16).  Time grows alike: a plan and a ring message are
 * O(R).  CTWS costs 16 bytes a node (the token's entry, the node's last pass), LW 16 on
 * the leader (its queue of requests): neither grows with N per node.
 */
#define SIM_A2WS_MAX_BYTES (2ull << 30)

/* Where the client puts each task at submission, as `jackdaw run --mode`. */
enum sim_submit {
    SIM_SUBMIT_HASHED = 0,  /* the task's metadata owner (task_key_owner) */
    SIM_SUBMIT_ONE = 1,     /* node 0 */
    SIM_SUBMIT_ROUND_ROBIN = 2, /* task i on node i mod N */
};

struct sim_config {
    uint32_t nodes;
    uint32_t slots;         /* per node, unless node_slots */
    const uint32_t *node_slots; /* `nodes` entries (>= 1), or NULL: `slots` each */
    const double *speeds;   /* `nodes` entries (> 0), or NULL: all 1.0 */
    enum sim_submit submit;
    struct steal_params steal;
    /* Where a ready task goes (Algorithm 1, the FLDS monitor); its bandwidth_Bps is what
     * Algorithm 1 weighs, as the daemons take it from --bandwidth. */
    struct placement_params placement;
    double latency_s;       /* one way, any two nodes; 0 allowed */
    double bandwidth_Bps;   /* per transfer; 0: inputs move in no time */
    /* The bytes a second one host's cores can copy between the nodes it runs, shared by
     * every transfer in flight: the cluster is emulated on that host, and a byte that
     * moves costs its CPU time on both daemons (the loopback's sends and receives).  0:
     * none, each node a host of its own.  Only with a bandwidth (there are transfers). */
    double host_Bps;
    double sample_s;        /* NODE_SAMPLE period in simulated seconds; 0: none */
    uint64_t seed;          /* the thieves' random draws (non-zero) */
    uint32_t job;           /* the job number in the tasks' keys */
    /* NULL, or `nodes` sinks: node i's events.  Called in simulated-time order. */
    const struct trace_sink *const *sinks;
    int64_t start_wall_ns;  /* `wall` of simulated time 0 */
    /* Every queried victim's list of thieves turned away updated at the query, as a
     * daemon does, even where the draws allow finding it later (sim_thief.c): the same
     * run, slower; test_sim compares the two. */
    bool eager_marks;
};

struct sim_result {
    double makespan_s;      /* first submit (time 0) to the last task's end */
    double work_s;          /* sum of the tasks' durations at speed 1 */
    double busy_s;          /* slot time spent running tasks (their cores counted) */
    uint64_t tasks_done;
    uint64_t events;        /* events the engine processed */
    uint64_t messages;      /* simulated messages between nodes */
    uint64_t steal_attempts, steals_ok, tasks_stolen;
    uint64_t tasks_pushed;  /* sent to their data by placement */
    uint64_t bytes_moved;   /* inputs read from another node */
    uint64_t token_passes;  /* CTWS: the token's hops */
    uint64_t policy_switches; /* placement auto: switches, all nodes */
};

/* The defaults: 100 us latency, no bandwidth limit, samples every 100 ms, hashed
 * submission, the papers' stealing (steal_params_default), the daemons' placement
 * (placement_params_default: FLDS), seed 1, job 1. */
void sim_config_default(struct sim_config *cfg);

/* Whether the simulator can run this configuration and workload: 0, or -EINVAL /
 * -ENOTSUP with *why (static text) naming what it cannot do (a policy part it does not
 * model, a task without a duration, a task needing more cores than a node has). */
int sim_check(const struct sim_config *cfg, const struct workload *wl, const char **why);

/* Runs the workload to its end.  0, or what sim_check returns. */
int sim_run(const struct workload *wl, const struct sim_config *cfg, struct sim_result *out,
            const char **why);

#endif
