/*
 * cmd_diff — `jackdaw diff A B [--tolerance P]`: a CI gate on two traces.  Prints the
 * efficiency and makespan of both runs (and a few figures for context) and exits 1 when
 * B is worse than A by more than P percent of A's value on either of the two
 * (tools/report/diff.h), naming what regressed and by how much; 0 otherwise.
 *
 * Exit codes: 0 no regression; 1 B regressed (the same number as EXIT_RUN_FAILED: "the
 * thing checked went badly"); EXIT_USAGE; EXIT_BAD_INPUT when a trace cannot be read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cmd/cmd.h"
#include "tools/report/analysis.h"
#include "tools/report/diff.h"
#include "tools/report/render_internal.h"

#define EXIT_REGRESSED 1

static int diff_main(int argc, char **argv);

const struct cmd cmd_diff = {
    .name = "diff",
    .usage = "A B [--tolerance P]",
    .summary = "exit 1 when trace B's efficiency or makespan is worse than A's beyond P %",
    .main = diff_main,
};

static int diff_main(int argc, char **argv)
{
    double tolerance = REPORT_DIFF_DEFAULT_TOLERANCE;
    const struct opt opts[] = {
        {"tolerance", OPT_DOUBLE, &tolerance, "P  allowed worsening in percent of A (5)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[2];
    int npos;
    int rc = cmd_parse(&cmd_diff, argc, argv, opts, pos, 2, &npos);
    if (rc < 0)
        return 0;
    if (rc)
        return rc;
    if (npos != 2) {
        fprintf(stderr, "jackdaw diff: needs two trace files, A (the baseline) and B\n"
                        "usage: jackdaw diff %s\n", cmd_diff.usage);
        return EXIT_USAGE;
    }
    if (!(tolerance >= 0) || !isfinite(tolerance)) {
        fprintf(stderr, "jackdaw diff: --tolerance must be a percentage >= 0\n"
                        "usage: jackdaw diff %s\n", cmd_diff.usage);
        return EXIT_USAGE;
    }
    struct report_analysis *run[2] = {NULL, NULL};
    /* One bin: the judged figures do not depend on the series. */
    struct report_options ro = {.bins = 1};
    for (int k = 0; k < 2; k++) {
        char *cause = NULL;
        int e = report_analyze(pos[k], &ro, &run[k], &cause);
        if (e < 0) {
            /* the cause names the file already */
            if (cause)
                fprintf(stderr, "jackdaw diff: %s\n", cause);
            else
                fprintf(stderr, "jackdaw diff: cannot read trace '%s': %s\n", pos[k], strerror(-e));
            free(cause);
            report_analysis_destroy(run[0]);
            return EXIT_BAD_INPUT;
        }
    }
    struct report_diff d;
    report_diff(run[0], run[1], tolerance, &d);
    printf("A  %s  (%s)\nB  %s  (%s)\n\n", pos[0], run[0]->label, pos[1], run[1]->label);
    printf("%-24s %16s %16s %10s\n", "", "A", "B", "change");
    for (size_t i = 0; i < d.n; i++) {
        const struct report_diff_item *it = &d.items[i];
        char a[FIG_BUF], b[FIG_BUF], ch[FIG_BUF];
        if (isfinite(it->change_pct))
            snprintf(ch, sizeof ch, "%+.1f %%",
                     fabs(it->change_pct) < 0.05 ? 0.0 : it->change_pct); /* no "-0.0" */
        else
            snprintf(ch, sizeof ch, "–");
        printf("%-24s %16s %16s %10s%s\n", report_figure_info(it->figure)->label,
               fmt_figure(a, it->figure, it->a), fmt_figure(b, it->figure, it->b), ch,
               it->regressed ? "  REGRESSED" : it->judged ? "  ok" : "");
    }
    putchar('\n');
    for (size_t i = 0; i < d.n; i++) {
        const struct report_diff_item *it = &d.items[i];
        if (!it->regressed)
            continue;
        const char *label = report_figure_info(it->figure)->label;
        if (isfinite(it->b) && !isfinite(it->change_pct))
            printf("regression: %s went from 0 to %g\n", label, it->b);
        else if (isfinite(it->b))
            printf("regression: %s %s by %.1f %% (tolerance %g %%)\n", label,
                   report_figure_info(it->figure)->sense == REPORT_HIGHER_BETTER ? "fell"
                                                                                 : "grew",
                   fabs(it->change_pct), tolerance);
        else
            printf("regression: B has no %s (A: %g)\n", label, it->a);
    }
    if (!d.regressed)
        printf("no regression beyond %g %% on efficiency or makespan\n", tolerance);
    report_analysis_destroy(run[0]);
    report_analysis_destroy(run[1]);
    fflush(stdout);
    return d.regressed ? EXIT_REGRESSED : 0;
}
