/*
 * exec — a node's executor slots: runs one task per call, off the scheduler's path.
 *
 *   noop     completes at once (exec_start returns EXEC_DONE_NOW with the result);
 *   sleep    a uv_timer of duration_s / speed, so a 2-core machine emulates hundreds
 *            of slots;
 *   command  "/bin/sh -c CMD" in a fresh work directory WORKDIR/task-JOB-INDEX with
 *            stdout and stderr going to its file "output".  Commands made only of
 *            plain words (no shell syntax, not a shell builtin) are exec'd directly,
 *            as GNU make does, because the shell's start-up would halve the spawn rate.
 *            Spawning uses posix_spawn (vfork-like, cheap even for a big daemon), not
 *            uv_spawn, which forks on the loop thread (~2k/s here).  A reaper thread
 *            waits for children and posts exits to the loop through one uv_async.
 *
 * Owns the timers, the reaper thread and the per-task bookkeeping; not the tasks.  The
 * node (core/runtime/node.c) calls it on its loop thread; the done callback runs on the
 * loop thread too, never from inside exec_start.
 *
 * Return convention: 0 / EXEC_DONE_NOW, or a negative errno.
 */
#ifndef JACKDAW_EXEC_H
#define JACKDAW_EXEC_H

#include <stdint.h>

#include <uv.h>

#include "core/model/task.h"

enum { EXEC_DONE_NOW = 1 };

struct exec_result {
    uint64_t key;
    uint8_t status;         /* TASK_DONE or TASK_FAILED */
    int exit_code;          /* command exit status; -1 if killed or not started */
    int term_signal;        /* signal that killed it, or 0 */
    int64_t t_start, t_end; /* wall ns */
    char *output_tail;      /* owned; last bytes of a failed command's output, or NULL */
    char *error;            /* owned; why a command could not start, or NULL */
    void *arg;              /* the caller's, from exec_start */
};

/* Called on the loop thread; the callee may keep nothing from `r` but copies (output_tail
 * and error are freed after it returns). */
typedef void (*exec_done_fn)(struct exec_result *r, void *data);

struct exec;

/* workdir: where task directories go (created if missing). speed in (0, 1]. */
struct exec *exec_create(uv_loop_t *loop, const char *workdir, double speed, exec_done_fn done,
                         void *data, char **cause);
/* Kills running commands (SIGKILL to each child), stops timers, joins the reaper;
 * undelivered results are dropped.  NULL is a no-op.  The loop must run afterwards
 * until the handles close. */
void exec_destroy(struct exec *ex);

/*
 * Starts a task.  Returns 0 (the done callback follows later), EXEC_DONE_NOW with *now
 * filled (noop), or a negative errno.  A command that cannot be spawned is not an
 * error here: it completes (later, via the callback) as TASK_FAILED with `error` set.
 */
int exec_start(struct exec *ex, const struct task_spec *spec, void *arg, struct exec_result *now);
/*
 * Stops the running task started with `arg` (job removal): a sleep ends at once, a
 * command's process group gets SIGKILL.  Its result still arrives through the done
 * callback (a sleep's before this returns), as failed.  -ENOENT when no such task runs.
 */
int exec_kill(struct exec *ex, void *arg);

/* Tasks started and not yet delivered. */
uint32_t exec_running(const struct exec *ex);

#endif
