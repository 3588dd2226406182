/*
 * replay — a recorded trace as a source for the console's model: the samples and
 * notable events of the file, in time order, fed to a model up to any time t.
 *
 * The file is read once (trace/format/reader) into two time-sorted arrays: NODE_SAMPLE
 * events and the note kinds (wire_is_note: failed/cancelled ends, steal grants, node
 * up/down, policy changes, drops, job submits; plus NODE_UP/NODE_DOWN for the connected
 * flag), and the task events per-job tallies are folded from (trace/format/jobtally, as
 * the collector folds them live), handed to the model at each seek with model_jobs.
 * Seeking forward feeds what lies between; seeking back resets the model and
 * feeds from the start (fast enough: arrays in memory, a few million entries per second).
 *
 * Owns the arrays and the header copy.  Called by tui/console.c and the tests.
 * Return convention: 0 or negative errno with *cause naming the file.
 */
#ifndef JACKDAW_TUI_REPLAY_H
#define JACKDAW_TUI_REPLAY_H

#include <stdint.h>

#include "tui/model.h"

struct replay;

/* A cut file replays up to its last whole block (with a warning in *warning, owned,
 * may be NULL). */
int replay_open(struct replay **out, const char *path, char **warning, char **cause);
void replay_destroy(struct replay *r); /* NULL is a no-op */

const char *replay_header(const struct replay *r); /* NULL when the file has none */
int64_t replay_first_ns(const struct replay *r);   /* earliest event time */
int64_t replay_last_ns(const struct replay *r);    /* latest event time */
/* Time of the first fed item after t (single-step); replay_last_ns when none. */
int64_t replay_next_ns(const struct replay *r, int64_t t_ns);

/* Brings m to time t_ns (clamped to the file's span) and calls model_tick(m, t_ns). */
void replay_seek(struct replay *r, struct model *m, int64_t t_ns);

#endif
