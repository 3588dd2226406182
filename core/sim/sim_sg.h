/*
 * sim_sg — the simulator's second engine: the same workload, configuration and result
 * as core/sim/sim.h, run by SimGrid (libsimgrid, its C API) instead of our own event
 * heap, so that the two can be measured on the same runs and each kept for the scales
 * it serves (tools/bench/sim_engines.sh).
 *
 * What SimGrid models here that the discrete-event core does not: the network's
 * sharing.  The platform is built in code: per node, a host (its speed, its slots as
 * cores) and a data endpoint, each with a link to a crossbar at `bandwidth_Bps` and
 * half of `latency_s` (a route crosses two: one latency).  Every message of the
 * protocol — a parent's end to the child's record, the readiness to the holder, a load
 * query and its answer, a steal request, its grant, a wake-up, a push — is a SimGrid
 * communication of 64 bytes between hosts, over links that do not share (a message is
 * its latency); a task's inputs (its parents' outputs, the objects it reads) move as
 * communications of their bytes between data endpoints, over full-duplex links that
 * SimGrid's flow model shares between the transfers crossing them: a writer's between
 * the nodes that read its output at once, a reader's between its fetches, by max-min
 * fairness, where the discrete-event core shares them locally (sim_net.c).  A task
 * runs as an execution of duration x 1 Gflop on its node's host.  The decisions are
 * core/policy's, called as sim.c calls them: steal_starving, steal_pick_victims,
 * steal_choose_victim, steal_keep / steal_grant, steal_on_result,
 * steal_on_wake, placement_decide and the FLDS monitor, and the daemons' own queues and
 * dispatcher (core/policy/readyq.h, dispatch.h), so that the engines differ in their
 * time model and not in their policy.
 *
 * What it runs: independent tasks and DAGs with declared durations, node speeds and
 * slots, submission modes, the thief's sqrt and random:K victims with their load
 * queries and ready starvation, any amount but A2WS, placement ws, mlb, mdl, rlds and
 * flds.  sim_sg_check refuses what sim_check refuses, with its reasons, then by name
 * what only the discrete-event core models (placement auto; the A2WS, PaRSEC, LW and
 * CTWS parts), and everything when this jackdaw was built without SimGrid's headers.
 *
 * Cost: 10^5 SimGrid activities a second, against 10^6 to 10^7 events for the
 * discrete-event core (tools/bench/sim_engines.sh has the figures by scale).
 *
 * Why a child process: SimGrid is one engine per process (it cannot be
 * initialised twice), it ends the process on its own errors, and loading libsimgrid
 * runs ns-3's initialisers (30 ms at every start of a program linked with it: every
 * daemon and command would pay it).  So sim_sg_run forks, the child loads libsimgrid
 * with dlopen, runs the simulation and sends the events and the result back through a
 * pipe; the parent calls the sinks in the order the child produced them.  Nothing of
 * SimGrid is ever loaded in the calling process.
 *
 * Returns 0 or a negative errno; *why is static text, or for what only the child can
 * tell (libsimgrid missing, the child killed) text in a static buffer overwritten by
 * the next call — one call at a time.  Called by tools/cmd/sim_summary.c and
 * tests/unit/test_sim_sg.c.
 */
#ifndef JACKDAW_SIM_SG_H
#define JACKDAW_SIM_SG_H

#include "core/model/workload.h"
#include "core/sim/sim.h"

/* Which engine runs a simulation (`jackdaw sim --engine`). */
enum sim_engine {
    SIM_ENGINE_DES = 0,     /* core/sim/sim.h: our discrete-event core */
    SIM_ENGINE_SIMGRID = 1, /* this file's */
};

/* "des" | "simgrid"; -1 when unknown. */
int sim_engine_parse(const char *name);
/* Never NULL. */
const char *sim_engine_name(enum sim_engine engine);

/* Whether the SimGrid engine can run this: sim_check's answer, then -ENOTSUP when
 * this build has no SimGrid.  A missing libsimgrid at run time is sim_sg_run's to tell
 * (-ENOTSUP too). */
int sim_sg_check(const struct sim_config *cfg, const struct workload *wl, const char **why);

/*
 * Runs the workload to its end under SimGrid.  The result's fields mean what sim_run's
 * do, except `events`: the SimGrid activities the run started (communications,
 * executions, sleeps), and `messages`: the protocol's communications (transfers of
 * inputs are in bytes_moved).  0, what sim_sg_check returns, -ENOTSUP when libsimgrid
 * cannot be loaded, -EDEADLK when tasks were left (an engine or policy bug), -EIO when
 * the child died.
 */
int sim_sg_run(const struct workload *wl, const struct sim_config *cfg, struct sim_result *out,
               const char **why);

#endif
