/*
 * plot — a small table of numbers that knows how to become a chart through gnuplot
 * (Debian gnuplot-nox), and how to write itself as CSV, so that the data behind every
 * chart can always be had even where gnuplot is missing.
 *
 * A plot is a table: a first column (x values for line charts, row labels for bar
 * charts and heat maps) and ncols numeric columns, one series each.  gnuplot runs as a
 * child process (posix_spawnp, no shell) on a script and a data file written to a private
 * temporary directory, so no path or title from outside ever reaches a shell or the
 * script unescaped.  The program is "gnuplot", or $JACKDAW_GNUPLOT (tests point it at a
 * missing file to see the fallback).
 *
 * Owns: a plot owns its strings and numbers.  Callers: tools/report/charts.c (which
 * builds the plots of a report or a comparison), the renderers and the commands.
 * Return convention: 0 or a negative errno with *cause an owned sentence (the output
 * path, or gnuplot's first line of complaint).
 */
#ifndef JACKDAW_REPORT_PLOT_H
#define JACKDAW_REPORT_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum plot_style {
    PLOT_LINES,   /* x in the first column, a line per series */
    PLOT_BARS,    /* a label per row, clustered bars (one per series) */
    PLOT_STACKED, /* a label per row, the series stacked */
    PLOT_HEATMAP, /* rows x columns of one value, labelled both ways */
    PLOT_STREAM,  /* a task stream (Gantt): per row, x the lane, values start, end and
                     a colour index (0: failed, else 1..); a row's label, when set, names
                     the lanes from its lane up on the y axis */
};

struct plot {
    char *name;    /* file stem: "utilization" */
    char *title, *xlabel, *ylabel;
    enum plot_style style;
    char *xcol;    /* title of the first column */
    size_t ncols;
    char **cols;   /* series titles */
    size_t nrows, cap_rows;
    char **labels; /* row labels (bars, heat maps); NULL entries for line charts */
    double *x;     /* line charts: x values */
    double *v;     /* nrows x ncols */
    double ymin, ymax; /* NaN: automatic */
};

/* ncols series named by cols (copied). */
struct plot *plot_create(const char *name, const char *title, enum plot_style style,
                         const char *xlabel, const char *ylabel, const char *xcol,
                         size_t ncols, const char *const *cols);
void plot_destroy(struct plot *p); /* NULL is a no-op */
/* Appends a row of ncols values; label for bars and heat maps, x for lines. */
void plot_add_row(struct plot *p, const char *label, double x, const double *values);

/* The table as CSV (RFC 4180, a header line, NaN as an empty field). */
int plot_write_csv(const struct plot *p, FILE *out);
int plot_save_csv(const struct plot *p, const char *path, char **cause);

/* Whether gnuplot can be run; *version (may be NULL) gets its --version line or, when
 * it cannot, a sentence saying why (owned).  The answer is cached. */
bool plot_gnuplot_available(char **version);

/* Renders p to path in format "svg", "png" or "pdf". */
int plot_render(const struct plot *p, const char *format, const char *path, char **cause);
/* Renders p as SVG and returns the <svg> element alone (no XML prolog), to inline in
 * HTML; *svg is owned by the caller. */
int plot_render_svg(const struct plot *p, char **svg, char **cause);

#endif
