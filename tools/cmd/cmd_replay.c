/*
 * jackdaw replay FILE — the console's replay of a recorded trace: the live view's screens
 * driven from the file, with play, pause, speed, single step and seek.  The same as
 * `jackdaw console --replay FILE` (tools/cmd/cmd_console.c does the work).
 */
#include "tools/cmd/cmd.h"

static int replay_main(int argc, char **argv)
{
    return console_command(&cmd_replay, argc, argv, "");
}

const struct cmd cmd_replay = {
    .name = "replay",
    .usage = "FILE [--speed X] [--headless N] [--refresh-ms MS]",
    .summary = "replay a trace in the console (= console --replay FILE)",
    .main = replay_main,
};
