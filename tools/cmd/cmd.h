/*
 * cmd — the table of subcommands and the small shared layer that parses their options
 * (tmux cmd_table; one file per command: tools/cmd/cmd_NAME.c).
 *
 * Each command's main returns an exit code (core/client/exitcode.h); it prints its own
 * user-facing errors once ("jackdaw run: cannot read workload 'x': …").
 */
#ifndef JACKDAW_CMD_H
#define JACKDAW_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/client/exitcode.h" /* the exit codes every main returns */
#include "core/client/opt.h"      /* struct opt, the option table entries */

struct cmd {
    const char *name;
    const char *usage;      /* one line, after "jackdaw NAME " */
    const char *summary;
    int (*main)(int argc, char **argv); /* argv[0] is the command name */
};

extern const struct cmd cmd_node, cmd_launch, cmd_submit, cmd_attach, cmd_jobs, cmd_tasks, cmd_task, cmd_status, cmd_stop, cmd_run,
    cmd_gen, cmd_get, cmd_cancel, cmd_trace, cmd_collector, cmd_console, cmd_replay, cmd_agent, cmd_import, cmd_logs;

/* attach's work, shared with submit --follow JOB (tools/cmd/cmd_attach.c); job_text NULL:
 * the latest job. */
int cmd_attach_job(const char *who, const char *cluster, const char *job_text, bool json,
                   bool quiet, const char *records, double timeout);

/* The console and replay commands' shared main (tools/cmd/cmd_console.c): `replay` is
 * non-NULL for `jackdaw replay FILE`. */
int console_command(const struct cmd *cmd, int argc, char **argv, const char *replay);
extern const struct cmd cmd_bound, cmd_sim;
extern const struct cmd cmd_report, cmd_compare, cmd_diff;
extern const struct cmd cmd_bench;

/*
 * Option parsing shared by every command (the table's shape: core/client/opt.h).
 * Parses argv[1..argc) against opts (terminated by a {NULL} entry).  Positional
 * arguments go to pos[0..max_pos) and their count to *npos.  On error prints
 * "jackdaw CMD: …" and the usage, and returns EXIT_USAGE; "--help" prints the options
 * and returns -1 (the caller exits 0); otherwise 0.
 */
int cmd_parse(const struct cmd *cmd, int argc, char **argv, const struct opt *opts,
              const char **pos, int max_pos, int *npos);
void cmd_print_help(const struct cmd *cmd, const struct opt *opts);
/*
 * The parser takes long options only: a copy of argv (owned array, borrowed strings) with
 * the short options of `map` ({"-o", "--output"}, …) rewritten to their long names where
 * they stand as an option — not as the value of another option of `opts`, nor after
 * "--".
 */
char **cmd_short_options(int argc, char **argv, const struct opt *opts,
                         const char *const (*map)[2], size_t nmap);

#endif
