/*
 * render — writes a report_analysis (or several, for a comparison) in the formats of
 * `jackdaw report` and `jackdaw compare`: JSON (every figure under stable keys, listed in
 * share/doc/report.md), Markdown, CSV (one file per table in a directory) and HTML (one
 * self-contained file with the charts inline as SVG, readable in a browser and printable).
 *
 * Owns nothing; charts come made (tools/report/charts.h) and may be NULL.  Callers:
 * tools/cmd/cmd_report.c, tools/cmd/cmd_compare.c and the tests.  Return convention: 0,
 * or a negative errno (-EIO when the stream failed) with *cause for the CSV directory.
 */
#ifndef JACKDAW_REPORT_RENDER_H
#define JACKDAW_REPORT_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "tools/report/analysis.h"
#include "tools/report/charts.h"

enum report_format { REPORT_FORMAT_MD, REPORT_FORMAT_JSON, REPORT_FORMAT_CSV, REPORT_FORMAT_HTML };

/* "md", "markdown", "json", "csv", "html": 0, or -EINVAL. */
int report_format_parse(const char *name, enum report_format *out);
/* From an output path's extension (.md, .json, .csv, .html/.htm); -EINVAL when none
 * of those. */
int report_format_from_path(const char *path, enum report_format *out);
const char *report_format_name(enum report_format f);

/* The section headings of a report, in order, NULL-terminated: the HTML's <h2> and the
 * Markdown's "##" (tests check that each is present). */
extern const char *const report_sections[];
/* Same for a comparison. */
extern const char *const compare_sections[];

/* The whole report as a JSON object (new reference). */
json_t *report_to_json(const struct report_analysis *a);

int render_json(FILE *out, const struct report_analysis *a);
int render_md(FILE *out, const struct report_analysis *a, const struct chart_set *cs);
int render_html(FILE *out, const struct report_analysis *a, const struct chart_set *cs);
/* Writes figures.csv, nodes.csv, series.csv, node_utilization.csv, lost.csv,
 * steal_tasks.csv, steal_requests.csv, steal_audit.csv into dir (created if missing). */
int render_csv(const char *dir, const struct report_analysis *a, char **cause);

int render_compare_json(FILE *out, const struct report_analysis *const *runs, size_t n);
int render_compare_md(FILE *out, const struct report_analysis *const *runs, size_t n,
                      const struct chart_set *cs);
int render_compare_html(FILE *out, const struct report_analysis *const *runs, size_t n,
                        const struct chart_set *cs);

#endif
