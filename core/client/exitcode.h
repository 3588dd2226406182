/*
 * exitcode — the exit codes every jackdaw command returns, documented in README.md
 * and jackdaw(1).
 *
 * Owns nothing but the numbers.  They live below tools/ because more than the command
 * mains pick them: the client library's job_submit and dataopts_finish return one, and
 * the console (tui/console.c) returns one for `jackdaw console` and `jackdaw replay`;
 * keeping them here lets tui/ and core/client use them without including tools/.
 */
#ifndef JACKDAW_EXITCODE_H
#define JACKDAW_EXITCODE_H

enum {
    EXIT_OK_ = 0,
    EXIT_RUN_FAILED = 1,    /* the run ended with failed or cancelled tasks */
    EXIT_USAGE = 2,         /* bad command line */
    EXIT_BAD_INPUT = 3,     /* bad workload, cluster file, key file or trace */
    EXIT_CLUSTER = 4,       /* no cluster file, or the cluster could not be started or reached */
    EXIT_INTERNAL = 5,      /* anything else */
    EXIT_TIMED_OUT = 6,     /* a followed job did not end within --timeout */
    EXIT_INTERRUPTED = 130, /* stopped by SIGINT, SIGTERM or SIGHUP while following a job */
};

#endif
