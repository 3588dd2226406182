/*
 * workload — a DAG of tasks read from JSON Lines, checked before anything runs.
 *
 * Owns the parsed tasks, their id strings, parent and child index lists.  Called by the
 * client commands (run, submit), the generators' tests and, later, the analysis tools.
 *
 * Format (one JSON object per line; blank lines and lines starting with '#' skipped):
 *   id (string, unique, required), kind ("noop" | "sleep" | "command", default noop),
 *   duration_s (number >= 0, sleep only; required for sleep), cmd (string, command
 *   only; required for command), output_bytes (integer >= 0, default 0),
 *   parents (array of ids, default []), stealable (boolean, default true).
 * Any other key is refused, naming it.  A parent may be listed before or after its
 * child.  Cycles are refused, naming one task on the cycle.
 *
 * Return convention (core/): 0, or a negative errno with *cause set to an owned string
 * "FILE:LINE: reason" that the command prints once.
 */
#ifndef JACKDAW_WORKLOAD_H
#define JACKDAW_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/model/task.h"

struct workload_task {
    char *id;               /* owned */
    uint8_t kind;           /* enum task_kind */
    bool stealable;
    double duration_s;
    char *cmd;              /* owned; NULL unless TASK_COMMAND */
    uint64_t output_bytes;
    uint32_t num_parents;
    uint32_t *parents;      /* owned; indices into workload.tasks */
    uint32_t num_children;
    uint32_t *children;     /* owned; indices into workload.tasks */
    uint32_t line;          /* 1-based line in the source */
};

struct workload {
    struct workload_task *tasks; /* owned, `count` entries in file order */
    uint32_t count;
    uint32_t *topo;         /* owned; indices in a topological order (parents first) */
    char *name;             /* owned; the file name, or "<string>" */
};

/* Reads and checks a workload file ("-" is stdin). */
int workload_load(struct workload *wl, const char *path, char **cause);
/* Same, from an open stream; `name` labels errors. */
int workload_read(struct workload *wl, FILE *in, const char *name, char **cause);
/* Same, from memory (tests). */
int workload_parse(struct workload *wl, const char *text, size_t len, const char *name,
                   char **cause);
void workload_fini(struct workload *wl);

/* Index of the task with this id, or -1. */
int64_t workload_find(const struct workload *wl, const char *id);
/* Sum of duration_s over sleep tasks: the work at speed 1.0. */
double workload_total_work(const struct workload *wl);
/* Writes one task as a JSON line in the format above (used by generators). */
int workload_write_task(FILE *out, const struct workload_task *task, const struct workload *wl);

#endif
