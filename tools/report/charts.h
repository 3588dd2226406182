/*
 * charts — the plots of a report and of a comparison, and where they go: inline SVG for
 * HTML, files (SVG, PNG or PDF) next to the output on request, and the data behind each
 * one as CSV.  Without gnuplot the CSV files are still written and a note says why there
 * is no picture.
 *
 * Owns: a chart_set owns its plots, SVG texts, file names and note.  Callers:
 * tools/cmd/cmd_report.c and tools/cmd/cmd_compare.c build and produce a set; the
 * renderers (render_md.c, render_html.c, render_compare.c) only read it.
 */
#ifndef JACKDAW_REPORT_CHARTS_H
#define JACKDAW_REPORT_CHARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/report/analysis.h"
#include "tools/report/plot.h"

struct chart {
    struct plot *plot; /* owned */
    char *svg;         /* owned inline <svg> element; NULL when not made */
    char *file;        /* owned path of the chart written, NULL when none */
    char *csv;         /* owned path of its data written as CSV, NULL when none */
};

struct chart_set {
    struct chart *c;   /* owned, n entries */
    size_t n;
    char *note;        /* owned; why charts are missing (no gnuplot, a failure), or NULL */
};

/* What to make of a set. */
struct chart_output {
    bool inline_svg;     /* render each chart as SVG text for HTML */
    const char *format;  /* "svg", "png", "pdf": files STEM-NAME.FORMAT; NULL for none */
    const char *stem;    /* path prefix of the files (the output without its extension) */
    bool csv;            /* write STEM-NAME.csv for each chart */
};

/* The charts of one report: utilization, queues, potential, lost, nodes, steal_matrix. */
void charts_for_report(struct chart_set *cs, const struct report_analysis *a);
/* The charts of a comparison: utilization overlay, efficiency, makespan, node_tasks,
 * lost, and steal_matrix_K for each run K (from 1) that stole. */
void charts_for_compare(struct chart_set *cs, const struct report_analysis *const *runs,
                        size_t n);

/*
 * Makes what o asks for.  A missing gnuplot is not an error: the CSV files are written
 * (when o->csv or o->format) and cs->note says what is missing.  Returns 0, or a
 * negative errno with *cause when a file cannot be written.
 */
int charts_produce(struct chart_set *cs, const struct chart_output *o, char **cause);

/* The chart named name, or NULL. */
const struct chart *charts_find(const struct chart_set *cs, const char *name);
void charts_fini(struct chart_set *cs);

/* The output path without its extension ("r.html" -> "r"); owned. */
char *charts_stem(const char *path);

#endif
