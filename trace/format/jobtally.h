/*
 * jobtally — per-job figures folded from a run's events: tasks of the job, how many
 * ended done, failed or cancelled, how many run now, its first submit and latest end,
 * the run time of its attempts (busy task-seconds), and the same per node.
 *
 * One definition for live and replay: the collector folds the events of the blocks the
 * nodes stream to it and sends the result in its STATE messages (trace/format/wire.h);
 * the console's replay folds the same events of the trace file up to the time shown.
 * So what a console showed at time t live, the replay of its trace shows at t.
 *
 * An attempt runs from its TASK_START to its node's TASK_END or TASK_RETRY (a failed run
 * that runs again); a START of a task already running elsewhere (a dead node's task
 * handed on) moves it.  JOB_SUBMIT gives the task count and, through
 * jobtally_submit, the name; a job first seen through its tasks has neither.
 *
 * It keeps the latest 1024 jobs (a STATE sends 32 of them); older ones are forgotten.
 *
 * Pure: no I/O, no clock.  Owns its jobs, their node rows and the running attempts, and
 * the export arrays.  Called by trace/collector/collector.c, tui/replay.c and the tests;
 * one thread.
 */
#ifndef JACKDAW_TRACE_JOBTALLY_H
#define JACKDAW_TRACE_JOBTALLY_H

#include <stdint.h>

#include "trace/format/event.h"
#include "trace/format/wire.h"

struct jobtally;

struct jobtally *jobtally_create(void);
void jobtally_destroy(struct jobtally *t); /* NULL is a no-op */
/* Forgets every job (replay seeking backwards starts over). */
void jobtally_reset(struct jobtally *t);

/* A job submitted at time_ns with tasks tasks (0 unknown) and a name (NULL or "" when
 * not known); a second submit of the same job keeps the earlier time. */
void jobtally_submit(struct jobtally *t, uint32_t job, uint32_t tasks, const char *name,
                     int64_t time_ns);
/* Folds one event in: TASK_START, TASK_END, TASK_RETRY and JOB_SUBMIT count, the rest
 * are ignored.  Events of one node must come in that node's order. */
void jobtally_event(struct jobtally *t, const struct trace_event *ev);

/* The tallies as a STATE carries them: the WIRE_MAX_JOBS most recently submitted jobs,
 * in submit order, each with its node rows by node id, at most WIRE_MAX_JOB_NODES rows in
 * all (past that, the later jobs' rows are left off; their own figures stay whole).
 * Valid until the next call on t. */
const struct wire_job_tally *jobtally_export(struct jobtally *t, uint32_t *njobs);

#endif
