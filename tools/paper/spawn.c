/*
 * bench spawn — see spawn.h.
 */
#include "tools/paper/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "core/base/sigcatch.h"
#include "core/base/xalloc.h"

extern char **environ;

/* A `jackdaw run` asked to stop writes its summary and stops its daemons within a few
 * seconds; this much more is a hang. */
#define GRACE_S 15.0
/* How often the wait looks at the child, the clock and the flag: a run's own makespan
 * is measured inside the child, so this only delays the next run a little. */
#define POLL_NS (20 * 1000 * 1000)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int bench_spawn_self(char *const argv[], const char *out_path, const char *err_path,
                     double timeout_s, struct bench_child *res, char **cause)
{
    memset(res, 0, sizeof *res);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    double start = now_s();
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        *cause = xasprintf("cannot run jackdaw %s: %s", argv[1] ? argv[1] : "", strerror(rc));
        return -rc;
    }
    double deadline = start + timeout_s, kill_at = 0;
    bool asked = false, killed = false;
    int status = 0;
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            break;
        if (got < 0 && errno != EINTR) {
            /* Cannot happen for our own child; do not leave it behind regardless. */
            int err = errno;
            kill(pid, SIGKILL);
            *cause = xasprintf("cannot wait for jackdaw %s: %s", argv[1], strerror(err));
            return -err;
        }
        double t = now_s();
        int sig = sigcatch_pending();
        if (!asked && (sig || t > deadline)) {
            res->interrupted = sig != 0;
            res->timed_out = !sig;
            kill(pid, SIGTERM);
            asked = true;
            kill_at = t + GRACE_S;
        } else if (asked && !killed && t > kill_at) {
            kill(pid, SIGKILL);
            killed = true;
        }
        struct timespec ts = {0, POLL_NS};
        nanosleep(&ts, NULL);
    }
    res->wall_s = now_s() - start;
    res->status = WIFEXITED(status) ? WEXITSTATUS(status)
                                    : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}
