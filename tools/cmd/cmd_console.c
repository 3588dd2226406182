/*
 * jackdaw console — the ncurses console (tui/console.h): watch a cluster live through its
 * collector, launch one from a form (--launch), or replay a trace (--replay FILE; also
 * `jackdaw replay FILE`).  --headless N runs N refresh cycles without a terminal and
 * prints the last frame, for tests and sanitizers.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/cmd/cmd.h"
#include "tui/console.h"

int console_command(const struct cmd *cmd, int argc, char **argv, const char *replay)
{
    const char *cluster = NULL, *trace = NULL;
    unsigned long headless = 0, refresh = CONSOLE_REFRESH_MS;
    double speed = 1;
    bool launch = false, mono = false;
    struct opt console_opts[] = {
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {"replay", OPT_STRING, &trace, "FILE  replay a recorded trace instead"},
        {"launch", OPT_FLAG, &launch, "  start with the launch form"},
        {"speed", OPT_DOUBLE, &speed, "X  replay speed at the start: 0.25 .. 64 (1)"},
        {"headless", OPT_UINT, &headless, "N  run N refresh cycles without a terminal, "
                                          "print the last frame"},
        {"refresh-ms", OPT_UINT, &refresh, "MS  refresh period (250)"},
        {"mono", OPT_FLAG, &mono, "  no colours (also when NO_COLOR is set)"},
        {NULL, 0, NULL, NULL},
    };
    struct opt replay_opts[] = {
        {"speed", OPT_DOUBLE, &speed, "X  replay speed at the start: 0.25 .. 64 (1)"},
        {"headless", OPT_UINT, &headless, "N  run N refresh cycles without a terminal, "
                                          "print the last frame"},
        {"refresh-ms", OPT_UINT, &refresh, "MS  refresh period (250)"},
        {"mono", OPT_FLAG, &mono, "  no colours (also when NO_COLOR is set)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(cmd, argc, argv, replay ? replay_opts : console_opts, pos, replay ? 1 : 0,
                       &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (replay) {
        if (npos != 1) {
            fprintf(stderr, "jackdaw %s: which trace?\nusage: jackdaw %s %s\n", cmd->name,
                    cmd->name, cmd->usage);
            return EXIT_USAGE;
        }
        trace = pos[0];
    }
    if (trace && (launch || cluster)) {
        fprintf(stderr, "jackdaw %s: --replay does not go with --launch or --cluster\n",
                cmd->name);
        return EXIT_USAGE;
    }
    if (refresh < 20 || refresh > 10000) {
        fprintf(stderr, "jackdaw %s: --refresh-ms: 20 to 10000\n", cmd->name);
        return EXIT_USAGE;
    }
    if (!(speed >= 0.25 && speed <= 64)) {
        fprintf(stderr, "jackdaw %s: --speed: 0.25 to 64\n", cmd->name);
        return EXIT_USAGE;
    }
    if (headless > 1000000) {
        fprintf(stderr, "jackdaw %s: --headless: at most 1000000 cycles\n", cmd->name);
        return EXIT_USAGE;
    }
    struct console_options o = {
        .cluster_path = cluster, .replay_path = trace, .launch = launch,
        .headless = (uint32_t)headless, .refresh_ms = (uint32_t)refresh, .speed = speed,
        .no_color = mono,
    };
    char *cause = NULL;
    int code = console_run(&o, &cause);
    if (cause)
        fprintf(stderr, "jackdaw %s: %s\n", cmd->name, cause);
    free(cause);
    return code;
}

static int console_main(int argc, char **argv)
{
    return console_command(&cmd_console, argc, argv, NULL);
}

const struct cmd cmd_console = {
    .name = "console",
    .usage = "[--cluster FILE] [--replay FILE] [--launch] [--headless N] [--refresh-ms MS]",
    .summary = "ncurses console: watch a cluster live, launch one, or replay a trace",
    .main = console_main,
};
