/*
 * draw — the console's screens, drawn with curses from a const struct model_view and the
 * user's choices (struct ui): header, node table, heat map, panes (utilization over time,
 * steals, event log, node detail), help and the status line.
 *
 * Drawing reads; it never changes the model or the ui.  Each frame is erase + draw + one
 * doupdate, so that curses sends only what changed (no flicker, little output over ssh).
 * Colours when the terminal has them and NO_COLOR is unset, else attributes only; block
 * characters when the locale is UTF-8, else ASCII.
 *
 * Called by tui/console.c (every frame) and tui/form.c (the shared helpers); owns
 * nothing but the colour and glyph choices made by draw_init.
 */
#ifndef JACKDAW_TUI_DRAW_H
#define JACKDAW_TUI_DRAW_H

#include <stdbool.h>
#include <stdint.h>

#include <curses.h>

#include "tui/keys.h"
#include "tui/layout.h"
#include "tui/model.h"

/* Everything the screens show that is not in the model: what the user chose and where
 * the data comes from.  Owned by the console. */
struct ui {
    unsigned mode;              /* KEYS_LIVE, KEYS_REPLAY or KEYS_FORM */
    enum ui_pane pane;
    enum map_mode map;
    enum model_sort sort;
    bool desc;
    char filter[128];
    int32_t selected;           /* node id; -1 when none */
    uint32_t top;               /* first table row shown */
    bool help;
    uint32_t help_top;          /* first help line shown */
    bool steals_whole;          /* the steals pane counts the whole run */
    /* The column chooser (F2): open, the column under its cursor, and the columns the
     * user hid (a bit per enum table_col). */
    bool chooser;
    int chooser_at;
    uint32_t hidden_cols;
    /* A page of text over the view (a task's history, a node's tasks), or none: lines
     * owned, NULL when closed. */
    char **page;
    uint32_t npage, page_top;
    char page_title[160];
    char page_filter[128];      /* shows only the page's lines holding it ("" all) */
    /* status line: a prompt being typed, else a message, else key hints */
    const char *prompt;         /* "Filter: ", "Go to (s): ", a question; NULL when none */
    char input[128];
    char message[200];
    bool message_is_error;
    /* source */
    char source[200];           /* "cluster FILE" or "trace FILE" */
    char steal[48];             /* stealing policy from the run header ("" unknown) */
    bool connected;             /* live: the collector answers */
    bool have_cluster;          /* live: a cluster file is attached */
    bool launched;              /* this console started the cluster */
    bool finished;              /* every task of the known jobs ended */
    /* replay */
    bool playing;
    double speed;
    int64_t replay_first_ns, replay_last_ns;
};

/* Once after curses starts: colours (unless NO_COLOR or no_color), glyphs. */
void draw_init(bool no_color);
bool draw_has_color(void);

/* The whole view screen: rows[0..nrows) are indexes into v->nodes in table order. */
void draw_view(const struct layout *l, const struct model_view *v, const uint32_t *rows,
               uint32_t nrows, const struct ui *ui);
/* The column chooser (ui->chooser) over the whole screen. */
void draw_chooser(const struct ui *ui, int rows, int cols);
/* The text page (ui->page) over the whole screen, from line page_top. */
void draw_page(const struct ui *ui, int rows, int cols);
/* The help overlay for ui->mode (over the whole screen). */
void draw_help(const struct ui *ui, int rows, int cols);
/* The status line (last row). */
void draw_status(const struct ui *ui, int row, int cols);
/* Lines the help screen has for mode (to bound help_top). */
uint32_t draw_help_lines(unsigned mode);

/* Shared helpers (form.c): text clipped to width w at (y, x), and styles. */
enum draw_style {
    STYLE_NORMAL, STYLE_TITLE, STYLE_LABEL, STYLE_HEADING, STYLE_HEADING_SORT, STYLE_SELECTED,
    STYLE_ERROR, STYLE_WARN, STYLE_OK, STYLE_DIM, STYLE_KEY, STYLE_TAB, STYLE_TAB_ACTIVE,
    STYLE_BAR_LOW, STYLE_BAR_MID, STYLE_BAR_HIGH, STYLE_INPUT, STYLE_COUNT
};
attr_t draw_attr(enum draw_style s);
/* Writes at most w cells of text at (y, x); returns the cells written. */
int draw_text(int y, int x, int w, enum draw_style s, const char *text);
int draw_textf(int y, int x, int w, enum draw_style s, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Number formats shared with the form and the tests: "12.3k", "4.5G", "1:02:03". */
void draw_fmt_count(char *buf, size_t len, double v);
void draw_fmt_bytes(char *buf, size_t len, double bytes);
void draw_fmt_duration(char *buf, size_t len, double seconds);

#endif
