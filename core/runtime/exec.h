/*
 * exec — a node's executor slots: runs one task per call, off the scheduler's path.
 *
 *   noop     completes at once (exec_start returns EXEC_DONE_NOW with the result);
 *   sleep    lasts duration_s / speed, so a 2-core machine emulates hundreds of slots:
 *            never less (on the monotonic clock, and so in its result's t_end -
 *            t_start), late only by the loop's wake-up latency;
 *   command  "/bin/sh -c CMD" in a fresh work directory WORKDIR/task-JOB-INDEX (mode
 *            0700, as WORKDIR when it makes it) with stdout going to its file "output"
 *            (0600; the task's output object) and stderr to its file "stderr" (0600;
 *            its tail kept, exec_set_log_bytes).  Commands made only of plain words (no shell syntax,
 *            not a shell builtin) are exec'd directly, as GNU make does, because the
 *            shell's start-up would halve the spawn rate.
 *            Spawning uses posix_spawn (vfork-like, cheap even for a big daemon), not
 *            uv_spawn, which forks on the loop thread (~2k/s here).  A reaper thread
 *            waits for children and posts exits to the loop through one uv_async.
 *            Each command runs in a process group of its own, and the group ends with
 *            the task: when the main process exits, is killed, times out, or the exec
 *            is destroyed, the group gets SIGTERM, then SIGKILL EXEC_KILL_GRACE_MS
 *            later if anything of it is left.
 *
 * A task whose spec has a time limit (timeout_s > 0, wall seconds from its start, not
 * scaled by the speed) is ended when it passes it: a sleep at once, a command's group by
 * SIGTERM then SIGKILL after the grace.  It completes as TASK_FAILED with timed_out set.
 *
 * Owns the timer, the reaper thread and the per-task bookkeeping; not the tasks.  The
 * node (core/runtime/node.c) calls it on its loop thread; the done callback runs on the
 * loop thread too, never from inside exec_start.
 *
 * Return convention: 0 / EXEC_DONE_NOW, or a negative errno.
 */
#ifndef JACKDAW_EXEC_H
#define JACKDAW_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "core/model/task.h"

enum { EXEC_DONE_NOW = 1 };

/* Between the SIGTERM that ends a task's process group and the SIGKILL for what is left:
 * long enough for a process to clean up, short enough that `jackdaw stop` (which waits
 * 2.5 s before it signals the daemon itself) finds the daemon gone. */
#define EXEC_KILL_GRACE_MS 1000

struct exec_result {
    uint64_t key;
    uint8_t status;         /* TASK_DONE or TASK_FAILED */
    int exit_code;          /* command exit status; -1 if killed or not started */
    int term_signal;        /* signal that killed it, or 0 */
    bool timed_out;         /* it passed its time limit (status TASK_FAILED) */
    int64_t t_start, t_end; /* wall ns */
    struct task_usage usage; /* a command's run (measured set); zero for sleep and noop */
    char *output_tail;      /* owned; last bytes of a failed command's stderr (else of its
                               stdout), or NULL */
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
/* The most bytes of a command's standard error kept (its file "stderr" keeps its last
 * bytes, after a line saying how many went); 0: all. */
void exec_set_log_bytes(struct exec *ex, uint64_t bytes);
/* This node's id, given to commands as JACKDAW_NODE (0 until set). */
void exec_set_node(struct exec *ex, uint32_t node);
/* Called on the loop thread after each batch of results has been delivered (the sleeps
 * one timer tick found due, the commands the reaper had finished), so that the caller
 * can start what the freed slots take before anything else the loop has to do.  May
 * call exec_start. */
void exec_set_batch_end(struct exec *ex, void (*fn)(void *data));
/* Ends every task: sleeps at once, commands' process groups (and what is left of
 * those of commands that ended) by SIGTERM, then SIGKILL after EXEC_KILL_GRACE_MS for
 * whatever is still there; then joins the reaper.  Undelivered results are dropped.
 * NULL is a no-op.  The loop must run afterwards until the handles close, which takes
 * at most the grace when processes had to be ended, without blocking the loop. */
void exec_destroy(struct exec *ex);

/*
 * Starts a task.  Returns 0 (the done callback follows later; now->t_start, when `now`
 * is not NULL, is the start its result will carry), EXEC_DONE_NOW with *now filled
 * (noop), or a negative errno (-EINVAL for a spec out of bounds: a sleep longer than
 * 10^9 s after the speed, a time limit not in [0, TASK_TIMEOUT_MAX_S]).  A command that
 * cannot be spawned is not an error here: it completes (later, via the callback) as
 * TASK_FAILED with `error` set.  A command runs in its task directory with the daemon's
 * environment and JACKDAW_JOB (the job's id), JACKDAW_TASK (the task's index in its
 * workload: tasks in file order, from 0), JACKDAW_NODE, JACKDAW_ATTEMPT (0, then 1,
 * 2 … each time the task is run again after a failed run or its holder's death) and
 * JACKDAW_CORES (the slots it takes: size its threads by it).
 */
int exec_start(struct exec *ex, const struct task_spec *spec, void *arg, struct exec_result *now);
/*
 * Stops the running task started with `arg` (job removal): a sleep ends at once, a
 * command's process group gets SIGTERM, then SIGKILL after the grace.  Its result still
 * arrives through the done callback (a sleep's before this returns), as failed.
 * -ENOENT when no such task runs.
 */
int exec_kill(struct exec *ex, void *arg);

/* Tasks started and not yet delivered. */
uint32_t exec_running(const struct exec *ex);
/* How far ahead of a deadline the timer is armed now (exec_deadline.c: the wake-up
 * latency it makes up for), ns. */
int64_t exec_lead_ns(const struct exec *ex);

#endif
