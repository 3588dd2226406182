/*
 * Helpers shared by the renderers (render_*.c, doc.c): figures as people read them, and
 * the escaping each format needs.  Private to tools/report/ and the report commands
 * (cmd_diff prints figures with fmt_figure; `bench paper` writes its page with doc).
 */
#ifndef JACKDAW_REPORT_RENDER_INTERNAL_H
#define JACKDAW_REPORT_RENDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/report/analysis.h"
#include "tools/report/charts.h"
#include "tools/report/csv.h"     /* csv_cell, csv_num: the renderers' CSV escaping */

#define FIG_BUF 48

/* "12.345 s", "79.6 %", "1,000", "2.4 MB", "–" for NaN. */
const char *fmt_figure(char buf[FIG_BUF], enum report_figure f, double v);
const char *fmt_value(char buf[FIG_BUF], enum report_unit unit, double v);
const char *fmt_seconds(char buf[FIG_BUF], double s);
/* "job:index" */
const char *fmt_task(char buf[FIG_BUF], uint64_t key);

void html_text(FILE *out, const char *s);  /* escapes & < > " ' */
void md_cell(FILE *out, const char *s);    /* escapes | and newlines in a table cell */

/* The run described in one line for headings. */
const char *run_workload(const struct report_analysis *a); /* name, path or "?" */

/* HTML: the page head (title, CSS) and foot; note is the foot's sentence (NULL: the
 * report's). */
void html_begin(FILE *out, const char *title);
void html_end(FILE *out, const char *note);
/* HTML: a chart's SVG inline, or a note and a link to its CSV. */
void html_chart(FILE *out, const struct chart_set *cs, const char *name);
/* Markdown: a link to a chart's file and CSV when they were written. */
void md_chart(FILE *out, const struct chart_set *cs, const char *name);

/*
 * A document written once and printed as Markdown or HTML: the report and the
 * comparison describe their content through these calls and never see the syntax.
 * Every text given is escaped for the format.
 */
enum doc_kind { DOC_MD, DOC_HTML };

struct doc {
    FILE *out;
    enum doc_kind kind;
    const struct chart_set *cs; /* borrowed; may be NULL */
    bool in_section;
    size_t ncols;               /* of the open table */
    const bool *numeric;        /* borrowed, of the open table */
    const char *footer;         /* borrowed; the HTML foot's sentence, NULL: the report's */
};

void doc_begin(struct doc *d, FILE *out, enum doc_kind kind, const struct chart_set *cs,
               const char *title);
void doc_section(struct doc *d, const char *title);
void doc_para(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* numeric[c]: right-aligned column (may be NULL). */
void doc_table(struct doc *d, size_t ncols, const char *const *head, const bool *numeric);
void doc_row(struct doc *d, const char *const *cells);
void doc_table_end(struct doc *d);
void doc_chart(struct doc *d, const char *name);
/* Closes the document; -EIO when the stream failed. */
int doc_end(struct doc *d);

#endif
