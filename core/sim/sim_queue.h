/*
 * sim_queue — the simulator's ready queue: a binary heap of task indices, most input
 * bytes first, then the oldest task (core/runtime/readyq.h's order), so that both
 * engines take tasks in the order the daemons do; and a node's FIFO of staged tasks.
 *
 * Owns the heap's array of each queue (freed by the caller with free(q->v)); no
 * globals.  Called by both engines: the discrete-event core (core/sim/sim*.c) and the
 * SimGrid engine (core/sim/sim_sg_task.c, sim_sg_thief.c).
 */
#ifndef JACKDAW_SIM_QUEUE_H
#define JACKDAW_SIM_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct qent {
    uint64_t prio;          /* the task's input bytes */
    uint32_t task;
};

struct queue {
    struct qent *v;
    size_t n, cap;
};

void sim__q_push(struct queue *q, uint64_t prio, uint32_t task);
/* The most urgent entry, removed; the queue must not be empty. */
struct qent sim__q_pop(struct queue *q);
/* The heap's last entry: a leaf, among the least urgent it holds (a grant's and the
 * FLDS monitor's end of the queue); the queue must not be empty. */
struct qent sim__q_take_tail(struct queue *q);

/* Appends `task` to a node's FIFO of staged tasks, v[*head .. *head + *n) in an array of
 * *cap, moved to the front when it reaches the end (both engines' staged queues). */
void sim__fifo_push(uint32_t **v, size_t *head, size_t *n, size_t *cap, uint32_t task);

#endif
