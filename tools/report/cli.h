/*
 * report cli — what `jackdaw report` and `jackdaw compare` share on their command line:
 * the writing of the output file ("-o FILE" is cmd_short_options', tools/cmd/cmd.h).
 *
 * Owns nothing past the calls.  Callers: tools/cmd/cmd_report.c and
 * tools/cmd/cmd_compare.c.
 */
#ifndef JACKDAW_REPORT_CLI_H
#define JACKDAW_REPORT_CLI_H

#include <stdio.h>

/* Opens path for writing, or stdout when path is NULL or "-"; prints
 * "jackdaw CMD: cannot write 'x': …" and returns NULL on failure. */
FILE *report_cli_open(const char *cmd, const char *path);
/* Closes what report_cli_open gave; prints the error and returns -1 when the writing
 * failed (a full disk shows here). */
int report_cli_close(const char *cmd, const char *path, FILE *f);

#endif
