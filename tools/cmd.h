/*
 * cmd — the table of subcommands and the small shared layer that parses their options
 * (tmux cmd_table; one file per command: tools/cmd_NAME.c).
 *
 * Each command's main returns an exit code from the enum below; it prints its own
 * user-facing errors once ("jackdaw run: cannot read workload 'x': …").
 */
#ifndef JACKDAW_CMD_H
#define JACKDAW_CMD_H

#include <stdbool.h>
#include <stdint.h>

/* Exit codes, documented in README and jackdaw(1). */
enum {
    EXIT_OK_ = 0,
    EXIT_RUN_FAILED = 1,    /* the run ended with failed or cancelled tasks */
    EXIT_USAGE = 2,         /* bad command line */
    EXIT_BAD_INPUT = 3,     /* bad workload, cluster file, key file or trace */
    EXIT_CLUSTER = 4,       /* the cluster could not be started or reached */
    EXIT_INTERNAL = 5,      /* anything else */
    EXIT_TIMED_OUT = 6,     /* a followed job did not end within --timeout */
    EXIT_INTERRUPTED = 130, /* stopped by SIGINT, SIGTERM or SIGHUP while following a job */
};

struct cmd {
    const char *name;
    const char *usage;      /* one line, after "jackdaw NAME " */
    const char *summary;
    int (*main)(int argc, char **argv); /* argv[0] is the command name */
};

extern const struct cmd cmd_node, cmd_launch, cmd_submit, cmd_status, cmd_stop, cmd_run,
    cmd_gen, cmd_cancel, cmd_trace, cmd_collector, cmd_console, cmd_replay;

/* The console and replay commands' shared main (tools/cmd_console.c): `replay` is
 * non-NULL for `jackdaw replay FILE`. */
int console_command(const struct cmd *cmd, int argc, char **argv, const char *replay);
extern const struct cmd cmd_bound;
extern const struct cmd cmd_report, cmd_compare, cmd_diff;
extern const struct cmd cmd_bench;

/*
 * Option parsing shared by every command: long options only, "--name value" or
 * "--name=value", flags without value, positional arguments collected in order.
 */
enum opt_type { OPT_FLAG, OPT_STRING, OPT_INT, OPT_UINT, OPT_DOUBLE };

struct opt {
    const char *name;       /* without the leading "--" */
    enum opt_type type;
    void *target;           /* bool* / const char ** / long* / unsigned long* / double* */
    const char *help;       /* "N  slots per node (default: cores)" */
};

/*
 * Parses argv[1..argc) against opts (terminated by a {NULL} entry).  Positional
 * arguments go to pos[0..max_pos) and their count to *npos.  On error prints
 * "jackdaw CMD: …" and the usage, and returns EXIT_USAGE; "--help" prints the options
 * and returns -1 (the caller exits 0); otherwise 0.
 */
int cmd_parse(const struct cmd *cmd, int argc, char **argv, const struct opt *opts,
              const char **pos, int max_pos, int *npos);
void cmd_print_help(const struct cmd *cmd, const struct opt *opts);

#endif
