/*
 * parsec — the thief and victim policies that paper 004 (§3) added to PaRSEC's
 * distributed work stealing, as pure functions: the starvation test that counts the
 * local successors of running tasks as future work, the victim's bound on how many
 * stealable tasks one request may take (half, chunk:N, single), and the waiting-time
 * guard that keeps a task home when it would start there before it could arrive
 * elsewhere.
 *
 * Owns nothing; no I/O, no clock, no globals, no allocation.  Called by
 * core/policy/steal.c (starvation, amounts), by core/runtime/thief.c on the victim's
 * loop (the guard, for each task a request would take), and by tests/unit/test_parsec.c.
 */
#ifndef JACKDAW_PARSEC_H
#define JACKDAW_PARSEC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/policy/steal.h"

/* What the thief policy looks at. */
struct parsec_self {
    uint32_t ready;              /* ready tasks here, shared or not */
    uint32_t free_slots;         /* executor slots with nothing to do */
    uint32_t running_successors; /* local successors of the tasks running now */
};

/*
 * Ready tasks only (successors false): starving when nothing is ready and a slot is
 * free.  Ready + successors: also when no running task has a local successor, since one
 * will become ready here sooner than a stolen task could arrive (004 §3 "Thief policy").
 * The free slot is jackdaw's addition: a node whose every slot is busy would only queue
 * what it stole.
 */
bool parsec_starving(bool successors, const struct parsec_self *s);

/*
 * The victim policy's bound for one request on `stealable` tasks: half (ceil(n/2)),
 * chunk (min(chunk, n); chunk 0 is taken as 1), single (min(1, n)).  Any other kind
 * (A2WS: the thief's request decides) bounds nothing and returns n.
 */
uint32_t parsec_amount(enum steal_amount_kind kind, uint32_t chunk, uint32_t stealable);

/* The waiting-time guard's inputs for one task on the victim. */
struct parsec_guard {
    uint32_t ready;         /* ready tasks on the victim */
    uint32_t slots;         /* its executor slots (0 is taken as 1) */
    double avg_task_s;      /* mean run time of its finished tasks; <= 0: none yet */
    double transfer_s;      /* estimated time to move the task to the thief */
};

/* (ready / slots + 1) × average task time (004 §3); 0 when no task finished yet. */
double parsec_waiting_time(const struct parsec_guard *g);

/*
 * Steal only if moving the task takes less than it would wait here.  With no finished
 * task the victim cannot estimate its wait, so the guard does not refuse: a node that
 * cannot tell must not hoard its whole queue at the start of a run.
 */
bool parsec_guard_allows(const struct parsec_guard *g);

#endif
