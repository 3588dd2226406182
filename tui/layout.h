/*
 * layout — where each part of the console's screen goes, decided from the terminal's
 * size, the number of nodes and the panes the user chose; and, back, what a mouse click
 * at (y, x) landed on.
 *
 * Pure: no curses, no model, no state.  The console computes a layout once per frame
 * (and on KEY_RESIZE), the drawing code draws into its rectangles, and the tests check
 * the decisions (tests/unit/test_layout.c): what 80x24 shows, which table columns fit,
 * when the heat map replaces rows, when the lower area splits in two.
 *
 * The screen, top to bottom:
 *   header   3 lines: run and policy; progress bar; rates, efficiency, elapsed, ETA
 *   map      a one-cell-per-node heat map, when the nodes do not fit the table's rows
 *   table    a heading and one row per node, scrolled
 *   tabs     the pane tabs ("1 Util 2 Steals 3 Log 4 Detail 5 Jobs") and the sort and filter
 *   pane     the chosen pane; at 160 columns and more a second pane (side) beside it
 *   status   key hints, a message, or the line being typed (filter, seek, a question)
 */
#ifndef JACKDAW_TUI_LAYOUT_H
#define JACKDAW_TUI_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "tui/model.h"

/* Below this the console draws only a "terminal too small" line. */
#define LAYOUT_MIN_ROWS 8
#define LAYOUT_MIN_COLS 40
/* At least this wide, the lower area holds two panes side by side. */
#define LAYOUT_SPLIT_COLS 160
/* The narrowest utilization bar of the table, and the widest it grows to with room. */
#define LAYOUT_BAR_MIN 10
#define LAYOUT_BAR_MAX 32

enum ui_pane {
    PANE_UTIL = 0, PANE_STEALS, PANE_LOG, PANE_DETAIL, PANE_JOBS, PANE_COUNT, PANE_NONE = -1
};
const char *layout_pane_name(enum ui_pane p); /* "Util", "Steals", "Log", "Detail", "Jobs" */

/* The heat map: above the table when the nodes do not fit its rows (auto), instead of the
 * table (full: the whole area, so that thousands of nodes keep a cell each), or never. */
enum map_mode { MAP_AUTO = 0, MAP_FULL, MAP_NEVER, MAP_MODE_COUNT };
const char *layout_map_mode_name(enum map_mode m);

/* Node table columns, in display order. */
enum table_col {
    TCOL_NODE, TCOL_UTIL, TCOL_SLOTS, TCOL_SPEED, TCOL_WAITQ, TCOL_LREADYQ, TCOL_SREADYQ,
    TCOL_COMPLETEQ, TCOL_DONE, TCOL_STEALS_IN, TCOL_STEALS_OUT, TCOL_STEALS_FAILED,
    TCOL_BYTES_IN, TCOL_BYTES_OUT, TCOL_CACHE, TCOL_COUNT
};

struct table_col_info {
    const char *title;      /* heading text, at most `width` characters */
    int width;              /* minimum width (the bar grows beyond it) */
    enum model_sort sort;   /* the sort key of this column */
    int priority;           /* 0 = kept longest when columns must go */
};
const struct table_col_info *layout_col_info(enum table_col c);
/* The column sorted by key k. */
enum table_col layout_col_of_sort(enum model_sort k);

struct rect {
    int y, x, h, w;         /* h == 0: not shown */
};

struct layout {
    int rows, cols;
    bool tiny;              /* too small for anything but a message */
    struct rect header, map, table, tabs, pane, side, status;
    enum ui_pane pane_kind; /* what `pane` shows */
    enum ui_pane side_kind; /* what `side` shows; PANE_NONE when not split */
    /* heat map: one cell per node (map.h - 1 lines under a title line), or, when even
     * that does not fit, nodes_per_cell nodes averaged into each cell */
    bool map_shown;
    uint32_t map_per_row, nodes_per_cell;
    /* table: visible columns in order, their x (relative to table.x) and width */
    int table_rows;         /* node rows that fit under the heading */
    int ncols;
    enum table_col col[TCOL_COUNT];
    int col_x[TCOL_COUNT], col_w[TCOL_COUNT];
};

/* Decides everything above for a rows x cols terminal showing nnodes nodes. */
void layout_compute(struct layout *l, int rows, int cols, uint32_t nnodes, enum ui_pane pane,
                    enum map_mode map);
/* As layout_compute, without the table columns whose bit (1 << enum table_col) is set in
 * `hidden` (the column chooser, F2); the node and the utilization bar always show. */
void layout_compute_hiding(struct layout *l, int rows, int cols, uint32_t nnodes,
                           enum ui_pane pane, enum map_mode map, uint32_t hidden);

/* Index of column c among the visible ones, or -1 when it did not fit. */
int layout_col_index(const struct layout *l, enum table_col c);

/* What a click landed on. */
enum hit_kind { HIT_NONE, HIT_TABLE_ROW, HIT_TABLE_HEADING, HIT_MAP_CELL, HIT_TAB };
struct hit {
    enum hit_kind kind;
    uint32_t index;         /* table row (0 = first visible row), map cell, or pane */
    enum table_col col;     /* HIT_TABLE_HEADING: the column */
};
struct hit layout_hit(const struct layout *l, int y, int x);
/* Start column of each pane's tab in the tabs line, and its width. */
void layout_tab_span(enum ui_pane p, int *x, int *w);

#endif
