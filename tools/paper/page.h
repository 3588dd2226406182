/*
 * bench page — DIR/index.html of `jackdaw bench paper`: one self-contained page (charts
 * inline as SVG) with, per experiment, every result beside the papers' value, the scale
 * and the settings.  Written through the report's document layer (tools/report/doc.c)
 * and charts (tools/report/charts.h), so it looks like, and degrades like, a report:
 * without gnuplot the charts become a note, the tables carry the numbers, and each
 * chart's data is written as DIR/chart-NAME.csv.
 *
 * Callers: tools/paper/paper.c.  Return convention: 0 or a negative errno with *cause.
 */
#ifndef JACKDAW_BENCH_PAGE_H
#define JACKDAW_BENCH_PAGE_H

#include <stddef.h>

#include "tools/paper/experiments.h"
#include "tools/paper/results.h"

/* Writes DIR/index.html (through a temporary file and rename). */
int bench_page_write(const struct bench_results *r, const char *dir, char **cause);

/* A figure as the page prints it: "99.4 %", "12.42 s", "162.4 ms", "–" for NaN. */
const char *bench_figure_text(char *buf, size_t size, enum bench_figure f, double v);

#endif
