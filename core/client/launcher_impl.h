/*
 * launcher_impl — what the local launcher (launcher.c) shares with the many-host one
 * (remote.c) and the remote side's agent (agent.c): listening sockets, detached
 * daemons, paths.  Functions named launcher__ are the module's internals.
 */
#ifndef JACKDAW_LAUNCHER_IMPL_H
#define JACKDAW_LAUNCHER_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Forks and execs `exe argv…` in its own session with listen_fd as fd 3 and its
 * output appended to logpath.  Returns the pid, or a negative errno. */
pid_t launcher__spawn(const char *exe, char **argv, const char *logpath, int listen_fd,
                      bool die_with_parent);
/* The collector's command line into argv, which has room for 13 entries (the NULL
 * included): `exe collector --cluster CLUSTER --listen-fd 3 --log-level LEVEL
 * [--workload-name N] [--workload-digest D]`. */
void launcher__collector_argv(const char **argv, const char *exe, const char *cluster,
                              const char *level, const char *name, const char *digest);
/* In the process that becomes the daemon: standard input from /dev/null, output and
 * error appended to logpath, listen_fd as fd 3, then execv.  Returns only when the exec
 * failed, with the negative errno (standard output is the log by then). */
int launcher__exec(const char *exe, char **argv, const char *logpath, int listen_fd);
/* Owned strings: the directory part of a path; a path made absolute against the cwd;
 * the last 2 KiB of a log file. */
char *launcher__dir_of(const char *path);
char *launcher__absolute(const char *path);
char *launcher__log_tail(const char *path);

#endif
