/*
 * sigcatch — SIGINT, SIGTERM and SIGHUP turned into one process-wide flag, so that a
 * command or the console that started a cluster can stop it, write what it has and exit
 * with EXIT_INTERRUPTED instead of dying with daemons left behind.
 *
 * Owns the flag (a file-scope sig_atomic_t: signal dispositions belong to the process,
 * so there is one flag per process, not per caller) and the three dispositions it
 * installs.  Called by core/client/job.c and tools/cmd/cmd_run.c (run, submit),
 * tools/cmd/cmd_bench.c and tools/paper/ (bench paper), and tui/console.c; on the
 * main thread.  A caller that also watches these signals through libuv (uv_signal_t
 * replaces the disposition while it runs, and restores the default after) calls
 * sigcatch_install again after, and sigcatch_note for what libuv saw.
 */
#ifndef JACKDAW_SIGCATCH_H
#define JACKDAW_SIGCATCH_H

#include <stdbool.h>

/* restart: SA_RESTART, so that blocking reads and waits go on after the flag is set;
 * without it they fail with EINTR (the console's getch returns at once). */
void sigcatch_install(bool restart);
/* The last signal caught or noted, or 0. */
int sigcatch_pending(void);
/* Returns the last signal caught or noted, or 0, and clears it. */
int sigcatch_take(void);
/* Records a signal seen another way (a uv_signal_t) as if it had been caught. */
void sigcatch_note(int sig);

#endif
