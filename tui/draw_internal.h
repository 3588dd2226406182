/*
 * draw_internal — what draw.c and draw_panes.c share and nobody else needs: the panes'
 * entry point and the glyphs chosen for the locale.
 */
#ifndef JACKDAW_TUI_DRAW_INTERNAL_H
#define JACKDAW_TUI_DRAW_INTERNAL_H

#include "tui/draw.h"

/* 9 levels, empty to full: block elements in UTF-8, ASCII otherwise. */
extern const char *const *draw_levels;
/* Heat map cells, 10 levels from idle to fully busy (always ASCII, so a text capture
 * reads the same everywhere). */
extern const char draw_heat[11];

/* One glyph of level v in [0, 1] (clamped). */
const char *draw_level_glyph(double v);
/* A vertical bar chart of hist's newest points in r (h rows, w columns), values in [0, 1]
 * (or scaled by max when max > 0). */
void draw_chart(int y, int x, int h, int w, const struct model_hist *hist, double max,
                enum draw_style s);
/* A one-line sparkline of hist's newest w points, scaled to its own maximum. */
void draw_sparkline(int y, int x, int w, const struct model_hist *hist);

/* The panes, in their rectangle. */
void draw_pane(enum ui_pane kind, const struct rect *r, const struct model_view *v,
               const struct ui *ui);

/* The last part of a path ("a.jsonl" of "/x/a.jsonl"): workloads are named by path. */
const char *draw_base_name(const char *path);

/* The node selected in the ui, or NULL. */
const struct model_node *draw_selected_node(const struct model_view *v, const struct ui *ui);

#endif
