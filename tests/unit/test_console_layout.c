/*
 * test_console_layout — the console's pure decisions (tui/layout.c, tui/keys.c): what an
 * 80x24 terminal shows and a larger one adds, which table columns fit, when the heat map
 * comes in and how it packs nodes, where clicks land; the key table (no key bound twice
 * in a mode, every action of a mode reachable and explained in the help) and the replay
 * speed steps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curses.h>
#include <string.h>

#include "tui/console.h"
#include "tui/keys.h"
#include "tui/layout.h"

/* Every region lies inside the screen and none overlaps another. */
static void check_regions(const struct layout *l)
{
    const struct rect *r[] = {&l->header, &l->map, &l->table, &l->tabs, &l->pane, &l->side,
                              &l->status};
    size_t n = sizeof r / sizeof r[0];
    for (size_t i = 0; i < n; i++) {
        if (r[i]->h == 0)
            continue;
        assert_true(r[i]->y >= 0 && r[i]->y + r[i]->h <= l->rows);
        assert_true(r[i]->x >= 0 && r[i]->x + r[i]->w <= l->cols);
        for (size_t j = i + 1; j < n; j++) {
            if (r[j]->h == 0)
                continue;
            bool apart = r[i]->y + r[i]->h <= r[j]->y || r[j]->y + r[j]->h <= r[i]->y ||
                         r[i]->x + r[i]->w <= r[j]->x || r[j]->x + r[j]->w <= r[i]->x;
            assert_true(apart);
        }
    }
    /* Columns are in display order, within the width. */
    for (int i = 0; i < l->ncols; i++) {
        enum table_col c = l->col[i];
        assert_true(l->col_x[c] + l->col_w[c] <= l->cols);
        if (i > 0)
            assert_true(l->col_x[c] > l->col_x[l->col[i - 1]]);
    }
}

static void test_80x24(void **state)
{
    (void)state;
    struct layout l;
    layout_compute(&l, 24, 80, 4, PANE_UTIL, MAP_AUTO);
    check_regions(&l);
    assert_false(l.tiny);
    assert_int_equal(l.header.h, 3);
    assert_int_equal(l.status.y, 23);
    /* 4 nodes: a heading and 4 rows, no map, the rest for the pane; not split. */
    assert_false(l.map_shown);
    assert_int_equal(l.table.h, 5);
    assert_int_equal(l.table_rows, 4);
    assert_int_equal(l.tabs.h, 1);
    assert_true(l.pane.h >= 6);
    assert_int_equal(l.side.h, 0);
    assert_int_equal(l.side_kind, PANE_NONE);
    /* The columns an operator needs first are all there at 80 columns; bytes go. */
    enum table_col must[] = {TCOL_NODE, TCOL_UTIL, TCOL_SLOTS, TCOL_SPEED, TCOL_WAITQ,
                             TCOL_LREADYQ, TCOL_SREADYQ, TCOL_COMPLETEQ, TCOL_DONE,
                             TCOL_STEALS_IN, TCOL_STEALS_OUT, TCOL_STEALS_FAILED};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        assert_true(layout_col_index(&l, must[i]) >= 0);
    assert_int_equal(layout_col_index(&l, TCOL_BYTES_OUT), -1);
    assert_int_equal(layout_col_index(&l, TCOL_BYTES_IN), -1);
}

/* Columns the user hid (F2) are gone, and the room they free goes to the columns a
 * narrow screen had dropped; the node and the bar cannot be hidden. */
static void test_hidden_columns(void **state)
{
    (void)state;
    struct layout l;
    uint32_t hide = 1u << TCOL_WAITQ | 1u << TCOL_COMPLETEQ | 1u << TCOL_NODE | 1u << TCOL_UTIL;
    layout_compute_hiding(&l, 24, 80, 4, PANE_UTIL, MAP_AUTO, hide);
    check_regions(&l);
    assert_int_equal(layout_col_index(&l, TCOL_WAITQ), -1);
    assert_int_equal(layout_col_index(&l, TCOL_COMPLETEQ), -1);
    assert_true(layout_col_index(&l, TCOL_NODE) >= 0 && layout_col_index(&l, TCOL_UTIL) >= 0);
    assert_true(layout_col_index(&l, TCOL_BYTES_IN) >= 0); /* it fits now */
}

static void test_wider_shows_more(void **state)
{
    (void)state;
    struct layout l;
    layout_compute(&l, 30, 100, 4, PANE_LOG, MAP_AUTO);
    check_regions(&l);
    assert_int_equal(l.ncols, TCOL_COUNT);
    int bar100 = l.col_w[TCOL_UTIL];
    layout_compute(&l, 50, 200, 4, PANE_LOG, MAP_AUTO);
    check_regions(&l);
    assert_true(l.col_w[TCOL_UTIL] > bar100);
    assert_true(l.col_w[TCOL_UTIL] <= LAYOUT_BAR_MAX);
    /* Wide: the log on the left, the selected node's detail beside it. */
    assert_true(l.side.h > 0);
    assert_int_equal(l.pane_kind, PANE_LOG);
    assert_int_equal(l.side_kind, PANE_DETAIL);
    layout_compute(&l, 50, 200, 4, PANE_DETAIL, MAP_AUTO);
    assert_int_equal(l.side_kind, PANE_LOG);
    /* Narrow: fewer columns, but node and bar stay. */
    layout_compute(&l, 15, 60, 4, PANE_UTIL, MAP_AUTO);
    check_regions(&l);
    assert_true(l.ncols < 12);
    assert_true(layout_col_index(&l, TCOL_NODE) == 0);
    assert_true(layout_col_index(&l, TCOL_UTIL) == 1);
    assert_true(layout_col_index(&l, TCOL_DONE) >= 0);
    assert_int_equal(l.header.h, 2);
}

static void test_tiny(void **state)
{
    (void)state;
    struct layout l;
    layout_compute(&l, 6, 30, 4, PANE_UTIL, MAP_AUTO);
    assert_true(l.tiny);
    assert_int_equal(layout_hit(&l, 3, 3).kind, HIT_NONE);
    layout_compute(&l, LAYOUT_MIN_ROWS, LAYOUT_MIN_COLS, 1000, PANE_UTIL, MAP_AUTO);
    assert_false(l.tiny);
    check_regions(&l);
}

static void test_heat_map(void **state)
{
    (void)state;
    struct layout l;
    /* 64 nodes do not fit 24 rows: a map comes in, one line of 78 cells, and the table
     * scrolls below it. */
    layout_compute(&l, 24, 80, 64, PANE_UTIL, MAP_AUTO);
    check_regions(&l);
    assert_true(l.map_shown);
    assert_int_equal(l.nodes_per_cell, 1);
    assert_int_equal(l.map_per_row, 78);
    assert_int_equal(l.map.h, 2);
    assert_true(l.table_rows >= 2);
    /* 4096 nodes at 80x24: still one screen, several nodes to a cell. */
    layout_compute(&l, 24, 80, 4096, PANE_UTIL, MAP_AUTO);
    check_regions(&l);
    assert_true(l.nodes_per_cell > 1);
    uint32_t cells = (4096 + l.nodes_per_cell - 1) / l.nodes_per_cell;
    assert_true(cells <= l.map_per_row * (uint32_t)(l.map.h - 1));
    assert_true(l.table_rows >= 2);
    /* A tall terminal gives 1000 nodes a cell each. */
    layout_compute(&l, 60, 200, 1000, PANE_UTIL, MAP_AUTO);
    check_regions(&l);
    assert_int_equal(l.nodes_per_cell, 1);
    /* Never, and full: the map instead of the table, so 4096 nodes need fewer per cell. */
    layout_compute(&l, 24, 80, 64, PANE_UTIL, MAP_NEVER);
    assert_false(l.map_shown);
    layout_compute(&l, 24, 80, 4096, PANE_UTIL, MAP_AUTO);
    uint32_t auto_per_cell = l.nodes_per_cell;
    layout_compute(&l, 24, 80, 4096, PANE_UTIL, MAP_FULL);
    assert_true(l.map_shown);
    assert_int_equal(l.table.h, 0);
    assert_int_equal(l.table_rows, 0);
    assert_true(l.nodes_per_cell < auto_per_cell);
    check_regions(&l);
    layout_compute(&l, 24, 80, 4, PANE_UTIL, MAP_FULL);
    assert_true(l.map_shown);
    check_regions(&l);
}

static void test_hits(void **state)
{
    (void)state;
    struct layout l;
    layout_compute(&l, 24, 80, 64, PANE_UTIL, MAP_AUTO);
    struct hit h = layout_hit(&l, l.table.y + 3, 5);
    assert_int_equal(h.kind, HIT_TABLE_ROW);
    assert_int_equal(h.index, 2);
    h = layout_hit(&l, l.table.y, l.col_x[TCOL_DONE] + 1);
    assert_int_equal(h.kind, HIT_TABLE_HEADING);
    assert_int_equal(h.col, TCOL_DONE);
    h = layout_hit(&l, l.map.y + 1, 11);
    assert_int_equal(h.kind, HIT_MAP_CELL);
    assert_int_equal(h.index, 10);
    int x, w;
    layout_tab_span(PANE_LOG, &x, &w);
    h = layout_hit(&l, l.tabs.y, x + 1);
    assert_int_equal(h.kind, HIT_TAB);
    assert_int_equal(h.index, PANE_LOG);
    assert_int_equal(layout_hit(&l, 0, 0).kind, HIT_NONE);
    /* Every sort key has its column and back. */
    for (int k = 0; k < MODEL_SORT_COUNT; k++)
        assert_int_equal(layout_col_info(layout_col_of_sort((enum model_sort)k))->sort, k);
}

static void test_keys_table(void **state)
{
    (void)state;
    size_t n;
    const struct key_binding *t = keys_table(&n);
    unsigned modes[] = {KEYS_LIVE, KEYS_REPLAY, KEYS_FORM};
    for (size_t m = 0; m < 3; m++) {
        bool has_help[ACT_COUNT] = {false};
        bool bound[ACT_COUNT] = {false};
        for (size_t i = 0; i < n; i++) {
            if (!(t[i].modes & modes[m]))
                continue;
            bound[t[i].action] = true;
            if (t[i].help)
                has_help[t[i].action] = true;
            /* No key does two things in one mode. */
            for (size_t j = i + 1; j < n; j++)
                if (t[j].modes & modes[m])
                    assert_false(t[i].key == t[j].key);
            /* The lookup finds this binding. */
            assert_int_equal(keys_lookup(t[i].key, modes[m]), t[i].action);
        }
        struct help_line lines[ACT_COUNT];
        size_t nh = keys_help(modes[m], lines, ACT_COUNT);
        size_t actions = 0;
        for (int a = 0; a < ACT_COUNT; a++) {
            if (!bound[a])
                continue;
            actions++;
            assert_true(has_help[a]);
        }
        assert_int_equal(nh, actions);
        for (size_t i = 0; i < nh; i++) {
            assert_non_null(lines[i].help);
            assert_true(lines[i].keys[0] != '\0');
        }
    }
    /* The conventions: q and F10 quit, F1 and ? help, Space plays only in replay. */
    assert_int_equal(keys_lookup('q', KEYS_LIVE), ACT_QUIT);
    assert_int_equal(keys_lookup(KEY_F(10), KEYS_FORM), ACT_QUIT);
    assert_int_equal(keys_lookup(KEY_F(1), KEYS_REPLAY), ACT_HELP);
    assert_int_equal(keys_lookup('?', KEYS_LIVE), ACT_HELP);
    assert_int_equal(keys_lookup(' ', KEYS_REPLAY), ACT_PLAY);
    assert_int_equal(keys_lookup(' ', KEYS_LIVE), ACT_NONE);
    assert_int_equal(keys_lookup('q', KEYS_FORM), ACT_NONE); /* typed into a field */
    assert_int_equal(keys_lookup(KEY_RESIZE, KEYS_FORM), ACT_RESIZE);
    assert_int_equal(keys_lookup(KEY_MOUSE, KEYS_LIVE), ACT_MOUSE);
    assert_int_equal(keys_lookup('C', KEYS_REPLAY), ACT_NONE); /* no run to cancel */
    /* Two codes named Enter show once in the help. */
    struct help_line lines[ACT_COUNT];
    size_t nh = keys_help(KEYS_LIVE, lines, ACT_COUNT);
    for (size_t i = 0; i < nh; i++)
        if (lines[i].action == ACT_DETAIL)
            assert_string_equal(lines[i].keys, "Enter");
    /* A short buffer still counts every line. */
    assert_int_equal(keys_help(KEYS_LIVE, lines, 2), nh);
}

static void test_speeds(void **state)
{
    (void)state;
    assert_true(console_speed_step(1, 1) == 2);
    assert_true(console_speed_step(64, 1) == 64);
    assert_true(console_speed_step(0.25, -1) == 0.25);
    assert_true(console_speed_step(1, -1) == 0.5);
    assert_true(console_speed_step(3, 0) == 4);   /* an odd speed snaps to a step */
    double s = 1;
    for (int i = 0; i < 6; i++)
        s = console_speed_step(s, 1);
    assert_true(s == 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_80x24),
        cmocka_unit_test(test_hidden_columns),
        cmocka_unit_test(test_wider_shows_more),
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_heat_map),
        cmocka_unit_test(test_hits),
        cmocka_unit_test(test_keys_table),
        cmocka_unit_test(test_speeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
