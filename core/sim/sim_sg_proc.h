/*
 * sim_sg_proc — the SimGrid engine's process plumbing, private to core/sim/sim_sg*.c:
 * sim_sg_run (sim_sg.h) forks a child that loads libsimgrid with dlopen, runs the model
 * (sim_sg.c's sim_sg__simulate) and sends its trace events and its result back through
 * a pipe, which the parent reads into the caller's sinks.  sim_sg_proc.c owns the
 * process, the library's function table and the pipe's records; the model's files
 * (sim_sg.c, sim_sg_task.c, sim_sg_thief.c: sim_sg_core.h) own the model and call back
 * into the pipe through the writers below.  Split so that the model reads as a model:
 * nothing in it knows there is a second process.
 *
 * Only built with SimGrid's headers (JACKDAW_SIMGRID): the table's entries take their
 * types from them.
 */
#ifndef JACKDAW_SIM_SG_PROC_H
#define JACKDAW_SIM_SG_PROC_H

#ifdef JACKDAW_SIMGRID

#include <stdint.h>
#include <stdio.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>

#include "core/model/trace_kind.h"
#include "core/model/workload.h"
#include "core/sim/sim.h"

/* The C API functions the model calls, typed from SimGrid's own headers; never called
 * by name, so that nothing of ours links against libsimgrid. */
#define SIM_SG_API(X)                                                                    \
    X(init, simgrid_init) X(load_platform, simgrid_load_platform) X(run, simgrid_run)   \
    X(clock, simgrid_get_clock) X(host_by_name, sg_host_by_name)                         \
    X(actor_init, sg_actor_init) X(actor_start, sg_actor_start_)                         \
    X(actor_set_data, sg_actor_set_data) X(self_data, sg_actor_self_get_data)           \
    X(daemonize, sg_actor_daemonize) X(sleep_for, sg_actor_sleep_for)                    \
    X(execute, sg_actor_execute) X(mailbox_by_name, sg_mailbox_by_name)                  \
    X(set_receiver, sg_mailbox_set_receiver) X(put_async, sg_mailbox_put_async)         \
    X(put, sg_mailbox_put) X(get, sg_mailbox_get)                                        \
    X(comm_wait, sg_comm_wait) X(comm_wait_all, sg_comm_wait_all)                        \
    X(comm_unref, sg_comm_unref) X(sem_init, sg_sem_init)                                \
    X(sem_acquire, sg_sem_acquire) X(sem_acquire_timeout, sg_sem_acquire_timeout)        \
    X(sem_release, sg_sem_release)

/* libsimgrid as the child loaded it: every entry set. */
struct sim_sg_lib {
#define X(member, symbol) __typeof__(&symbol) member;
    SIM_SG_API(X)
#undef X
};

/*
 * The model: one simulation in this (the child) process, with SimGrid loaded as `lib`
 * (borrowed, for the process's life).  Trace events go to `wire` through the writers
 * below when cfg->sinks is set.  0, or a negative errno with *why static text or text
 * in a static buffer; the process ends after it (SimGrid cannot run twice).  Defined
 * in sim_sg.c, called by sim_sg_proc.c's child.
 */
int sim_sg__simulate(const struct sim_sg_lib *lib, const struct workload *wl,
                     const struct sim_config *cfg, FILE *wire, struct sim_result *out,
                     const char **why);

/* The pipe's writers, one a sink callback (trace_sink's put, sample and policy), for
 * `node`'s sink in the parent.  Buffered: the child flushes once, at its end. */
void sim_sg__wire_put(FILE *wire, uint32_t node, enum trace_kind kind, uint64_t task,
                      int32_t peer, int32_t status, int64_t count, int64_t bytes,
                      int64_t duration_ns, int64_t wall);
void sim_sg__wire_sample(FILE *wire, uint32_t node, const struct trace_sample *sample,
                         int64_t wall);
void sim_sg__wire_policy(FILE *wire, uint32_t node, const char *name, int32_t reason,
                         int64_t wall);

#endif /* JACKDAW_SIMGRID */

#endif
