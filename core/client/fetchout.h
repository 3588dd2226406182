/*
 * fetchout — copies objects of a job out of a running cluster into a directory: a
 * task's output (a command's standard output, a sleep's synthetic bytes) or a workload's
 * initial object, each into DIR/ID.
 *
 * Owns nothing between calls.  Called by `jackdaw get` (tools/cmd/cmd_get.c) and by
 * job_submit for `run`/`submit --outputs DIR` once the job has ended.
 */
#ifndef JACKDAW_FETCHOUT_H
#define JACKDAW_FETCHOUT_H

#include <stdbool.h>
#include <stdint.h>

struct client;
struct workload;

/* Where object or task `id` goes under dir: dir/id when the id is a relative path that
 * stays in dir (task_stage_name_ok), else the id with '/' made '_' (owned). */
char *fetchout_path(const char *dir, const char *id);

/*
 * Fetches the object named `id` (a task id, or an object line's id) of job `job` into
 * fetchout_path(dir, id), written under a temporary name and renamed when whole, so a
 * file there is always complete.  When no node holds it and `empty_if_absent` (the
 * caller knows the task is done: a task whose output was empty has no object), an
 * empty file is written.  0, or a negative errno with *cause (owned) naming the id:
 * -ENOENT for an id the workload does not have or an object no node holds.
 */
int fetchout_one(struct client *c, const struct workload *wl, uint32_t job, const char *id,
                 const char *dir, bool empty_if_absent, uint64_t *bytes, int timeout_ms,
                 char **cause);

#endif
