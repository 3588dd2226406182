/*
 * lw — the leader/workers baseline of paper 001 §4 (the "centralized dynamic method", a
 * classical master/worker) as pure functions: which node leads, what its distribution
 * thread costs it, how many tasks a starving worker asks for, and which of the requests
 * the leader holds it answers with the tasks it has.
 *
 * The policy in jackdaw terms (`--victims leader`, the `lw` preset):
 *   - node 0 is the leader.  Every task that becomes ready anywhere and may move (its
 *     placement put it in SReadyQ) is forwarded to the leader's SReadyQ; tasks the
 *     workload pins, or that placement keeps with their data, stay where they are.
 *   - workers never steal from each other.  A starving worker sends the leader one
 *     request for lw_want tasks and waits; the leader holds requests it cannot serve
 *     yet (no polling, no back-off) and answers them first come, first served, as tasks
 *     arrive (lw_serve), handing out the head of its SReadyQ: the same order its own
 *     slots take, so the central queue is one queue served in one order.
 *   - the leader also runs tasks, with the capacity lw_leader_capacity leaves it: the
 *     paper's leader loses compute to the extra thread that distributes the tasks (its
 *     Fig. 5b), and jackdaw charges that honestly instead of getting distribution for
 *     free from the loop thread.
 *
 * Owns nothing; no I/O, no clock, no globals, no allocation.  Called by
 * core/runtime/leader.c on a node's loop thread (the leader's capacity before the
 * executors exist) and by tests/unit/test_lw.c.  Return convention: 0 or a negative errno.
 */
#ifndef JACKDAW_LW_H
#define JACKDAW_LW_H

#include <stdbool.h>
#include <stdint.h>

#include "core/policy/steal.h"

/* The leader: the paper's main process. */
#define LW_LEADER 0u

/* True when a movable ready task of node `self` goes to the leader instead of staying
 * in its own SReadyQ: on every worker of a cluster of two nodes or more. */
bool lw_forwards(uint32_t self, uint32_t nodes);

/* What the leader runs tasks with. */
struct lw_capacity {
    uint32_t slots;
    double speed;
};

/*
 * The leader's executor capacity after its distribution thread took its share: one
 * slot fewer, as a core given to that thread.  A one-slot leader cannot give up its
 * only slot (tasks pinned to it must still run), so it keeps it and runs at half speed
 * instead: its one core is time-shared by the distributor and the task.  (Speed scales
 * sleep tasks only; a command task on a one-slot leader is not slowed.)
 */
struct lw_capacity lw_leader_capacity(uint32_t slots, double speed);

/*
 * How many tasks a starving worker with `free_slots` idle slots asks for: one per idle
 * slot (each slot is a worker of the classical scheme asking for its next task; the
 * asks of one node leave as one request), or with --amount chunk:N a chunk of N per
 * request, chunked self-scheduling.  Always at least 1.
 */
uint32_t lw_want(const struct steal_params *p, uint32_t free_slots);

/* A worker's request, held at the leader until it can be answered. */
struct lw_request {
    uint32_t node;          /* the worker */
    uint32_t req;           /* its request id, echoed in the grant */
    uint32_t want;          /* tasks asked for, >= 1 */
};

/*
 * Adds a request to the FIFO q[0..*n) of capacity cap.  A worker has at most one
 * request out, so a newer request of a worker already queued replaces the old one in
 * place (it keeps its turn).  0, -EINVAL for a want of 0 or missing arguments, or
 * -ENOSPC when the queue is full.
 */
int lw_enqueue(struct lw_request *q, uint32_t *n, uint32_t cap, const struct lw_request *r);

/*
 * First come, first served: with `queued` tasks to hand out, grants[i] is what request
 * q[i] gets, min(its want, what is left), in queue order.  Returns how many requests
 * from the head get at least one task: they are answered (a partial answer included:
 * the worker asks again if it is still starving); the others keep waiting.
 */
uint32_t lw_serve(uint32_t queued, const struct lw_request *q, uint32_t n, uint32_t *grants);

/* Drops the first `served` requests of q[0..*n), keeping the order of the rest. */
void lw_dequeue(struct lw_request *q, uint32_t *n, uint32_t served);

#endif
