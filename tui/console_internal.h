/*
 * console_internal — the console's state, shared by console.c (terminal, loop, frames,
 * signals, headless script) and console_act.c (what each key does).  Nobody else
 * includes it.
 */
#ifndef JACKDAW_TUI_CONSOLE_INTERNAL_H
#define JACKDAW_TUI_CONSOLE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "tui/console.h"
#include "tui/draw.h"
#include "tui/form.h"
#include "tui/layout.h"
#include "tui/model.h"
#include "tui/replay.h"
#include "tui/session.h"

/* What the status line's prompt is for. */
enum ask { ASK_NONE, ASK_FILTER, ASK_SEEK, ASK_QUIT, ASK_CANCEL, ASK_TEARDOWN, ASK_TASK, ASK_OUTPUT, ASK_PAGE_FILTER };

struct console {
    const struct console_options *o;
    uint32_t refresh_ms;
    struct model *m;            /* owned */
    struct replay *r;           /* owned; replay mode only */
    struct session s;           /* live mode */
    bool live;                  /* a live source (not a replay) */
    struct form form;
    struct ui ui;
    struct layout lay;          /* of the last frame */
    uint32_t *rows;             /* owned: table order, indexes into the view's nodes */
    uint32_t rows_cap, nrows;
    enum ask ask;
    bool quit;
    bool dirty;
    int exit_code;
    /* replay clock */
    int64_t replay_t;           /* ns since the run start */
    int64_t clock_at;           /* monotonic ns when replay_t was last advanced */
    /* --headless: the next step of each script (console.c headless_feed) */
    uint32_t form_at, view_at;
};

/* console_act.c */
/* Carries out one key in the current mode (prompts, help and form first). */
void console_key(struct console *c, int key);
/* Recomputes the table order and keeps the selection on a shown row and visible. */
void console_rows(struct console *c);
/* Brings the model to the replay clock (clamped to the trace) and marks dirty. */
void console_replay_seek(struct console *c, int64_t t_ns);
/* Closes the text page, if one is open (frees its lines). */
void console_page_close(struct console *c);
/* Shows a message on the status line until the next key. */
void console_message(struct console *c, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Leaves the form for the live view once the launch worked. */
void console_launch(struct console *c);
/* q or Ctrl-C: quits, asking first when this console started the cluster. */
void console_request_quit(struct console *c);
/* Stops the cluster this console started (SIGTERM, the 'y' of the quit question). */
void console_teardown(struct console *c, bool quitting);

/* console.c */
/* Draws a one-line notice over the current screen at once (before a slow step). */
void console_notice(struct console *c, const char *what);
/* Runs this binary with argv (argv[0] ignored) to its end; its standard output into
 * *out (owned, NUL-terminated, at most 4 MiB) when out is not NULL.  0 when it exited
 * 0, else -1 with *why (owned) its last line of errors (*out is set either way). */
int console_run_tool(char *const argv[], char **out, char **why);
/* Remembers the pids of a cluster the console started, for the fatal-signal handler. */
void console_track_pids(const struct console *c);

#endif
