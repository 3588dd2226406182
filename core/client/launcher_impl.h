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

/* A listening TCP socket (close-on-exec) bound to numeric address `addr` and
 * `want_port` (0: any); *port is the port it got.  The fd, or a negative errno. */
int launcher__listen(const char *addr, int want_port, uint16_t *port, char **cause);
/* Forks and execs `exe argv…` in its own session with listen_fd as fd 3 and its
 * output appended to logpath.  Returns the pid, or a negative errno. */
pid_t launcher__spawn(const char *exe, char **argv, const char *logpath, int listen_fd,
                      bool die_with_parent);
/* Owned strings: the directory part of a path; a path made absolute against the cwd;
 * the last 2 KiB of a log file. */
char *launcher__dir_of(const char *path);
char *launcher__absolute(const char *path);
char *launcher__log_tail(const char *path);

#endif
