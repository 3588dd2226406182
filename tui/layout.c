/*
 * layout — see layout.h.
 */
#include "tui/layout.h"

#include <string.h>

static const char *const pane_names[PANE_COUNT] = {"Util", "Steals", "Log", "Detail", "Jobs"};
static const char *const map_names[MAP_MODE_COUNT] = {"auto", "full", "never"};

/* Minimum widths add up to 97 with the separators: an 80-column terminal loses the
 * three least needed columns (bytes in and out, cache hits), a 100-column one shows
 * all, and what is left over widens the utilization bar. */
static const struct table_col_info cols_info[TCOL_COUNT] = {
    [TCOL_NODE] = {"NODE", 4, MODEL_SORT_ID, 0},
    [TCOL_UTIL] = {"UTIL", LAYOUT_BAR_MIN, MODEL_SORT_UTIL, 1},
    [TCOL_SLOTS] = {"SLOT", 4, MODEL_SORT_SLOTS, 8},
    [TCOL_SPEED] = {"SPEED", 5, MODEL_SORT_SPEED, 9},
    [TCOL_WAITQ] = {"WAITQ", 5, MODEL_SORT_WAITQ, 3},
    [TCOL_LREADYQ] = {"LRDYQ", 5, MODEL_SORT_LREADYQ, 5},
    [TCOL_SREADYQ] = {"SRDYQ", 5, MODEL_SORT_SREADYQ, 4},
    [TCOL_COMPLETEQ] = {"CMPLQ", 5, MODEL_SORT_COMPLETEQ, 10},
    [TCOL_DONE] = {"DONE", 6, MODEL_SORT_DONE, 2},
    [TCOL_STEALS_IN] = {"ST-IN", 5, MODEL_SORT_STEALS_IN, 6},
    [TCOL_STEALS_OUT] = {"ST-OUT", 6, MODEL_SORT_STEALS_OUT, 7},
    [TCOL_STEALS_FAILED] = {"STFAIL", 6, MODEL_SORT_STEALS_FAILED, 11},
    [TCOL_BYTES_IN] = {"B-IN", 6, MODEL_SORT_BYTES_IN, 13},
    [TCOL_BYTES_OUT] = {"B-OUT", 6, MODEL_SORT_BYTES_OUT, 14},
    [TCOL_CACHE] = {"HIT%", 5, MODEL_SORT_CACHE, 12},
};

const char *layout_pane_name(enum ui_pane p)
{
    return p >= 0 && p < PANE_COUNT ? pane_names[p] : "";
}

const char *layout_map_mode_name(enum map_mode m)
{
    return (unsigned)m < MAP_MODE_COUNT ? map_names[m] : "";
}

const struct table_col_info *layout_col_info(enum table_col c)
{
    return &cols_info[(unsigned)c < TCOL_COUNT ? c : TCOL_NODE];
}

enum table_col layout_col_of_sort(enum model_sort k)
{
    for (int c = 0; c < TCOL_COUNT; c++)
        if (cols_info[c].sort == k)
            return (enum table_col)c;
    return TCOL_NODE;
}

static struct rect rect(int y, int x, int h, int w)
{
    struct rect r = {y, x, h > 0 ? h : 0, w > 0 ? w : 0};
    return r;
}

/* Drops the lowest-priority columns until the rest fit `width`, then gives the
 * utilization bar what is left, up to LAYOUT_BAR_MAX. */
static void choose_columns(struct layout *l, int width, uint32_t hidden)
{
    bool shown[TCOL_COUNT];
    int total = -1;
    for (int c = 0; c < TCOL_COUNT; c++) {
        /* The user's choice (F2) first; the node and the bar always stay. */
        shown[c] = c <= TCOL_UTIL || !(hidden & (1u << c));
        if (shown[c])
            total += cols_info[c].width + 1;
    }
    while (total > width) {
        int worst = -1;
        for (int c = 0; c < TCOL_COUNT; c++)
            if (shown[c] && (worst < 0 || cols_info[c].priority > cols_info[worst].priority))
                worst = c;
        if (worst <= TCOL_NODE || cols_info[worst].priority <= 1)
            break;  /* node and bar always stay; the drawing clips what overflows */
        shown[worst] = false;
        total -= cols_info[worst].width + 1;
    }
    int extra = width - total, room = LAYOUT_BAR_MAX - LAYOUT_BAR_MIN;
    int grow = extra <= 0 ? 0 : extra < room ? extra : room;
    l->ncols = 0;
    int x = 0;
    for (int c = 0; c < TCOL_COUNT; c++) {
        if (!shown[c])
            continue;
        int w = cols_info[c].width + (c == TCOL_UTIL ? grow : 0);
        l->col[l->ncols++] = (enum table_col)c;
        l->col_x[c] = x;
        l->col_w[c] = w;
        x += w + 1;
    }
}

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
    return b ? (a + b - 1) / b : 0;
}

void layout_compute(struct layout *l, int rows, int cols, uint32_t nnodes, enum ui_pane pane,
                    enum map_mode map)
{
    layout_compute_hiding(l, rows, cols, nnodes, pane, map, 0);
}

void layout_compute_hiding(struct layout *l, int rows, int cols, uint32_t nnodes,
                           enum ui_pane pane, enum map_mode map, uint32_t hidden)
{
    memset(l, 0, sizeof *l);
    l->rows = rows;
    l->cols = cols;
    l->pane_kind = pane >= 0 && pane < PANE_COUNT ? pane : PANE_UTIL;
    l->side_kind = PANE_NONE;
    l->nodes_per_cell = 1;
    if (rows < LAYOUT_MIN_ROWS || cols < LAYOUT_MIN_COLS) {
        l->tiny = true;
        return;
    }
    /* Short terminals fold the header's three lines into two. */
    l->header = rect(0, 0, rows >= 16 ? 3 : 2, cols);
    l->status = rect(rows - 1, 0, 1, cols);
    int avail = rows - l->header.h - l->status.h;
    /* The lower area (tab line + pane) keeps a third of the room, at least 7 lines, and
     * goes away only when the terminal is too short for it and a few node rows. */
    int lower_min = avail >= 14 ? (avail / 3 > 7 ? avail / 3 : 7) : avail >= 10 ? 4 : 0;
    int main_max = avail - lower_min;

    bool full = map == MAP_FULL && nnodes > 0;
    bool want_map = full || (map == MAP_AUTO && nnodes > 0 && (int64_t)nnodes > main_max - 1);
    int map_h = 0;
    if (want_map && main_max >= 4) {
        uint32_t per_row = (uint32_t)(cols - 2);
        /* Under an auto map the table keeps its heading and two rows. */
        int max_lines = main_max - 1 - (full ? 0 : 3);
        if (max_lines < 1)
            max_lines = 1;
        uint32_t lines = ceil_div(nnodes, per_row);
        uint32_t per_cell = 1;
        if (lines > (uint32_t)max_lines) {
            per_cell = ceil_div(nnodes, per_row * (uint32_t)max_lines);
            lines = ceil_div(ceil_div(nnodes, per_cell), per_row);
        }
        l->map_shown = true;
        l->map_per_row = per_row;
        l->nodes_per_cell = per_cell;
        map_h = 1 + (int)lines;
        l->map = rect(l->header.h, 0, map_h, cols);
    }
    int table_h = 1 + (int)(nnodes > 0 ? nnodes : 1);
    if (table_h > main_max - map_h)
        table_h = main_max - map_h;
    if (table_h < 2 && main_max - map_h >= 2)
        table_h = 2;
    if (l->map_shown && full)
        table_h = 0;
    l->table = rect(l->header.h + map_h, 0, table_h, cols);
    l->table_rows = table_h > 1 ? table_h - 1 : 0;
    choose_columns(l, cols, hidden);

    int lower_y = l->table.y + l->table.h;
    int lower_h = l->status.y - lower_y;
    if (lower_h < 2)
        return;
    l->tabs = rect(lower_y, 0, 1, cols);
    int pane_h = lower_h - 1;
    if (cols < LAYOUT_SPLIT_COLS) {
        l->pane = rect(lower_y + 1, 0, pane_h, cols);
        return;
    }
    /* Wide: the chosen pane on the left, the selected node's detail beside it (or the
     * log, when the detail is the chosen one). */
    int left = cols / 2;
    l->pane = rect(lower_y + 1, 0, pane_h, left - 1);
    l->side = rect(lower_y + 1, left, pane_h, cols - left);
    l->side_kind = l->pane_kind == PANE_DETAIL ? PANE_LOG : PANE_DETAIL;
}

int layout_col_index(const struct layout *l, enum table_col c)
{
    for (int i = 0; i < l->ncols; i++)
        if (l->col[i] == c)
            return i;
    return -1;
}

void layout_tab_span(enum ui_pane p, int *x, int *w)
{
    /* " 1 Util " " 2 Steals " ...: the digit, a space, the name, padded by one. */
    int at = 0;
    for (int i = 0; i < PANE_COUNT; i++) {
        int width = 4 + (int)strlen(pane_names[i]);
        if (i == p) {
            *x = at;
            *w = width;
            return;
        }
        at += width + 1;
    }
    *x = at;
    *w = 0;
}

static bool inside(const struct rect *r, int y, int x)
{
    return r->h > 0 && y >= r->y && y < r->y + r->h && x >= r->x && x < r->x + r->w;
}

struct hit layout_hit(const struct layout *l, int y, int x)
{
    struct hit h = {HIT_NONE, 0, TCOL_NODE};
    if (l->tiny)
        return h;
    if (inside(&l->table, y, x)) {
        if (y == l->table.y) {
            for (int i = 0; i < l->ncols; i++) {
                enum table_col c = l->col[i];
                if (x >= l->col_x[c] && x <= l->col_x[c] + l->col_w[c]) {
                    h.kind = HIT_TABLE_HEADING;
                    h.col = c;
                }
            }
            return h;
        }
        h.kind = HIT_TABLE_ROW;
        h.index = (uint32_t)(y - l->table.y - 1);
        return h;
    }
    if (l->map_shown && inside(&l->map, y, x) && y > l->map.y && x >= 1 &&
        (uint32_t)(x - 1) < l->map_per_row) {
        h.kind = HIT_MAP_CELL;
        h.index = (uint32_t)(y - l->map.y - 1) * l->map_per_row + (uint32_t)(x - 1);
        return h;
    }
    if (inside(&l->tabs, y, x)) {
        for (int p = 0; p < PANE_COUNT; p++) {
            int tx, tw;
            layout_tab_span((enum ui_pane)p, &tx, &tw);
            if (x >= tx && x < tx + tw) {
                h.kind = HIT_TAB;
                h.index = (uint32_t)p;
            }
        }
    }
    return h;
}
