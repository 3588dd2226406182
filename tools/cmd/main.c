/*
 * jackdaw — one binary, many subcommands (like git or tmux).  main() finds the command
 * in the table and hands over; every command prints its own errors and picks its exit
 * code (core/client/exitcode.h).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/base/text.h"
#include "core/net/auth.h"
#include "tools/cmd/cmd.h"

static const struct cmd *const commands[] = {
    &cmd_run, &cmd_launch, &cmd_submit, &cmd_attach, &cmd_jobs, &cmd_tasks, &cmd_task, &cmd_status, &cmd_logs, &cmd_get, &cmd_cancel, &cmd_stop, &cmd_node,
    &cmd_collector, &cmd_gen, &cmd_import, &cmd_trace,
    &cmd_bound, &cmd_sim, &cmd_console, &cmd_replay,
    &cmd_report, &cmd_compare, &cmd_diff,
    &cmd_bench, &cmd_agent,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: jackdaw COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\n'jackdaw COMMAND --help' lists a command's options; man jackdaw.\n");
}

/*
 * An unknown command: the nearest name when a typo explains it (at most two edits, and
 * fewer than half the word's letters, so that "ls" suggests nothing), else a pointer to
 * the list; one line either way, as git does, not the whole help.
 */
static void unknown(const char *word)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX, len = strlen(word);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        size_t d = text_edit_distance(word, commands[i]->name);
        if (d < best_d) {
            best_d = d;
            best = commands[i]->name;
        }
    }
    if (best && best_d <= 2 && 2 * best_d < len)
        fprintf(stderr, "jackdaw: unknown command '%s'; did you mean '%s'? ('jackdaw --help' "
                        "lists the commands)\n", word, best);
    else
        fprintf(stderr, "jackdaw: unknown command '%s' ('jackdaw --help' lists the commands)\n",
                word);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("jackdaw 0.1\n");
        return 0;
    }
    /* A peer that vanishes mid-write must be an error return, not a dead daemon. */
    signal(SIGPIPE, SIG_IGN);
    if (auth_init() < 0) {
        fprintf(stderr, "jackdaw: cannot initialise libsodium\n");
        return EXIT_INTERNAL;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i]->name) == 0)
            return commands[i]->main(argc - 1, argv + 1);
    unknown(argv[1]);
    return EXIT_USAGE;
}
