/*
 * report diff — is run B worse than run A?  The judgement behind `jackdaw diff`, a CI
 * gate: B regresses when its efficiency is lower, or its makespan longer, than A's by
 * more than a tolerance in percent of A's value.  Other figures are shown beside them
 * for the reader but never judged.
 *
 * Pure: no I/O.  Callers: tools/cmd/cmd_diff.c and tests/unit/test_report.c.
 */
#ifndef JACKDAW_REPORT_DIFF_H
#define JACKDAW_REPORT_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/report/analysis.h"

#define REPORT_DIFF_DEFAULT_TOLERANCE 5.0
#define REPORT_DIFF_MAX_ITEMS 8

struct report_diff_item {
    enum report_figure figure;
    double a, b;
    double change_pct;  /* (b - a) / a x 100; NaN when a is 0 or undefined */
    bool judged;        /* efficiency and makespan are; the rest are context */
    bool regressed;     /* judged, and worse beyond the tolerance (or B has no value) */
};

struct report_diff {
    struct report_diff_item items[REPORT_DIFF_MAX_ITEMS];
    size_t n;
    bool regressed;     /* any item regressed */
};

/* tolerance_pct >= 0. */
void report_diff(const struct report_analysis *a, const struct report_analysis *b,
                 double tolerance_pct, struct report_diff *out);

#endif
