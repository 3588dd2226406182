/*
 * opt — the shape of a command's option table: long options only, "--name value" or
 * "--name=value", flags without value.
 *
 * Owns only the types.  The table is parsed by tools/cmd/cmd.c (cmd_parse,
 * cmd_print_help); the type sits in the client library so that dataopts.h can hand run,
 * launch and node the entries they splice into their tables (DATAOPTS_OPTS) without the
 * client library including tools/.
 */
#ifndef JACKDAW_OPT_H
#define JACKDAW_OPT_H

enum opt_type { OPT_FLAG, OPT_STRING, OPT_INT, OPT_UINT, OPT_DOUBLE };

struct opt {
    const char *name;       /* without the leading "--" */
    enum opt_type type;
    void *target;           /* bool* / const char ** / long* / unsigned long* / double* */
    const char *help;       /* "N  slots per node (default: cores)" */
};

#endif
