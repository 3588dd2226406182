/*
 * console — the ncurses console: watch a cluster live through its collector, launch one
 * from a form, or replay a recorded trace, with the same screens (tui/draw.h).
 *
 * The loop (htop, tmux): poll the source without blocking, draw when something changed
 * or a refresh period passed (erase + draw + one refresh), then wait for a key with a
 * timeout, never spinning.  Keys map to actions through tui/keys.h; actions change the
 * ui state or the source (replay clock, session) and mark the screen dirty.  The
 * terminal is restored on exit and on fatal signals; while the screen is up the
 * process's stderr goes to a temporary file, shown after the screen is restored, so that
 * no library message can scribble over it.
 *
 * --headless N runs N refresh cycles drawing into a curses screen on /dev/null (80x24
 * at first, then other sizes) while a fixed script of keys, clicks and resizes goes
 * through the same handlers, and prints the last frame as text: sanitizers and tests
 * exercise the whole console without a terminal.
 *
 * Owns the model, the replay or session, the form and the screen.  Called by
 * tools/cmd/cmd_console.c and tools/cmd/cmd_replay.c.
 */
#ifndef JACKDAW_TUI_CONSOLE_H
#define JACKDAW_TUI_CONSOLE_H

#include <stdbool.h>
#include <stdint.h>

#define CONSOLE_REFRESH_MS 250

struct console_options {
    const char *cluster_path;   /* live: the cluster file (NULL: the default path) */
    const char *replay_path;    /* replay this trace instead */
    bool launch;                /* start with the launch form */
    uint32_t headless;          /* 0: on the terminal; N: N cycles without one */
    uint32_t refresh_ms;        /* 0: CONSOLE_REFRESH_MS */
    double speed;               /* replay: starting speed (0: 1) */
    bool no_color;
};

/* Runs the console to the end.  Returns an exit code (core/client/exitcode.h) and, for a non-zero
 * one, an owned *cause for the command to print. */
int console_run(const struct console_options *o, char **cause);

/* Replay speeds, slowest first: x0.25 .. x64. */
double console_speed_step(double speed, int dir);

#endif
