/*
 * bench spawn — runs one child command of `jackdaw bench paper` (this same binary: gen,
 * bound, run) with its output captured in files, bounded in time, and stopped by its PID
 * when the bench is interrupted (core/base/sigcatch's flag, which `jackdaw bench`
 * installs).
 *
 * A child that outlives its time limit or an interruption gets SIGTERM (a `jackdaw run`
 * then stops the cluster it started), and SIGKILL after a grace period (its daemons were
 * started with PR_SET_PDEATHSIG and follow it).  Nothing is ever signalled by name or by
 * process group: the one PID this module started.
 *
 * One child at a time, one thread.  Callers: tools/paper/paper.c.  Return convention: 0
 * when the child ran (whatever its exit status), or a negative errno with *cause when it
 * could not be started.
 */
#ifndef JACKDAW_BENCH_SPAWN_H
#define JACKDAW_BENCH_SPAWN_H

#include <stdbool.h>

struct bench_child {
    int status;             /* exit status, or 128 + signal */
    bool timed_out;         /* stopped because it ran past its limit */
    bool interrupted;       /* stopped because the bench was interrupted */
    double wall_s;
};

/* Runs argv (argv[0] is only the name shown by ps: the program is this binary, through
 * /proc/self/exe) with stdin from /dev/null, stdout to out_path and stderr to err_path
 * (both created 0600, truncated).  Waits at most timeout_s. */
int bench_spawn_self(char *const argv[], const char *out_path, const char *err_path,
                     double timeout_s, struct bench_child *res, char **cause);

#endif
