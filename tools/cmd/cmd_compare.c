/*
 * cmd_compare — `jackdaw compare TRACE... [-o FILE] [--format html|md|json] [--bins N]
 * [--plots svg|png|pdf]`: several runs side by side, each labelled from its trace's
 * header (placement/steal policy, nodes, workload).
 *
 * Every figure of `jackdaw report` in one table with a column per run, utilization of
 * all runs in one chart, efficiency and makespan bars, tasks per node, lost time by cause
 * and each run's steal matrix (tools/report/render_compare.c).  The format comes from
 * --format, else -o's extension, else Markdown to standard output.
 *
 * Exit codes as `jackdaw report`: 0; EXIT_USAGE; EXIT_BAD_INPUT when a trace cannot be
 * read (naming it); EXIT_INTERNAL when the output cannot be written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "tools/cmd/cmd.h"
#include "tools/cmd/run_bound.h"
#include "tools/report/analysis.h"
#include "tools/report/charts.h"
#include "tools/report/cli.h"
#include "tools/report/render.h"

/* More runs than this make an unreadable table; compare them in groups. */
#define COMPARE_MAX 32

static int compare_main(int argc, char **argv);

const struct cmd cmd_compare = {
    .name = "compare",
    .usage = "TRACE... [-o FILE] [--format html|md|json] [--bins N] [--plots svg|png|pdf] "
             "[--label A,B,...]",
    .summary = "several runs' figures side by side, with overlaid charts",
    .main = compare_main,
};

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "jackdaw compare: %s%s%s%s\nusage: jackdaw compare %s\n", msg,
            arg ? " '" : "", arg ? arg : "", arg ? "'" : "", cmd_compare.usage);
    return EXIT_USAGE;
}

/* --label A,B,C: the names, owned; empty names are kept (a run may go unnamed). */
static char **split_labels(const char *text, size_t *n)
{
    size_t count = 1;
    for (const char *p = text; *p; p++)
        count += *p == ',';
    char **out = xcalloc(count, sizeof *out);
    const char *start = text;
    for (size_t i = 0; i < count; i++) {
        const char *end = strchr(start, ',');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        out[i] = xstrndup(start, len);
        start = end ? end + 1 : start + len;
    }
    *n = count;
    return out;
}

static void free_labels(char **label, size_t n)
{
    for (size_t i = 0; label && i < n; i++)
        free(label[i]);
    free(label);
}

static int compare_main(int argc, char **argv)
{
    const char *output = NULL, *format_name = NULL, *plots = NULL, *labels = NULL;
    unsigned long bins = REPORT_DEFAULT_BINS;
    const struct opt opts[] = {
        {"output", OPT_STRING, &output, "FILE  where the comparison goes (-o; default: stdout)"},
        {"format", OPT_STRING, &format_name, "F  html | md | json (default: from -o, else md)"},
        {"bins", OPT_UINT, &bins, "N  time bins of each run's series (100)"},
        {"plots", OPT_STRING, &plots, "F  also write each chart as F (svg, png, pdf) next to -o"},
        {"label", OPT_STRING, &labels,
         "A,B,...  one name a run, in order (default: each run's placement/policy)"},
        {NULL, 0, NULL, NULL},
    };
    static const char *const shorts[][2] = {{"-o", "--output"}};
    char **args = cmd_short_options(argc, argv, opts, shorts, 1);
    const char *pos[COMPARE_MAX];
    int npos;
    int rc = cmd_parse(&cmd_compare, argc, args, opts, pos, COMPARE_MAX, &npos);
    free(args);
    if (rc < 0)
        return 0;
    if (rc)
        return rc;
    if (npos < 1)
        return usage_error("needs at least one trace file", NULL);
    if (bins < 1 || bins > REPORT_MAX_BINS)
        return usage_error("--bins must be from 1 to 100000", NULL);
    bool to_stdout = !output || strcmp(output, "-") == 0;
    enum report_format format = REPORT_FORMAT_MD;
    if (format_name) {
        if (report_format_parse(format_name, &format) < 0)
            return usage_error("--format must be html, md or json, not", format_name);
    } else if (!to_stdout && report_format_from_path(output, &format) < 0) {
        format = REPORT_FORMAT_MD;
    }
    if (format == REPORT_FORMAT_CSV)
        return usage_error("compare writes html, md or json; for CSV tables run "
                           "'jackdaw report --format csv' on each trace", NULL);
    if (plots && strcmp(plots, "svg") && strcmp(plots, "png") && strcmp(plots, "pdf"))
        return usage_error("--plots must be svg, png or pdf, not", plots);
    if (plots && to_stdout)
        return usage_error("--plots writes files next to the output: it needs -o FILE", NULL);
    size_t nlabels = 0;
    char **label = labels ? split_labels(labels, &nlabels) : NULL;
    if (labels && nlabels != (size_t)npos) {
        free_labels(label, nlabels);
        fprintf(stderr, "jackdaw compare: --label names %zu run%s for %d trace%s\n", nlabels,
                nlabels == 1 ? "" : "s", npos, npos == 1 ? "" : "s");
        return EXIT_USAGE;
    }

    struct report_analysis **runs = xcalloc((size_t)npos, sizeof *runs);
    struct chart_set cs = {0};
    char *stem = NULL;
    struct report_options ro = {.bins = (unsigned)bins};
    rc = 0;
    for (int k = 0; k < npos; k++) {
        char *cause = NULL;
        int e = report_analyze(pos[k], &ro, &runs[k], &cause);
        if (e < 0) {
            /* the cause names the file already */
            if (cause)
                fprintf(stderr, "jackdaw compare: %s\n", cause);
            else
                fprintf(stderr, "jackdaw compare: cannot read trace '%s': %s\n", pos[k], strerror(-e));
            free(cause);
            rc = EXIT_BAD_INPUT;
            goto done;
        }
        for (size_t i = 0; i < runs[k]->nwarnings; i++)
            fprintf(stderr, "jackdaw compare: warning: run %d (%s): %s\n", k + 1, pos[k],
                    runs[k]->warnings[i]);
        /* Quality against the bound, as `report` of the run gives it. */
        run_bound_add(runs[k], pos[k], NULL, "compare");
        if (label) {
            free(runs[k]->short_label);
            runs[k]->short_label = xstrdup(label[k]);
        }
    }
    const struct report_analysis *const *cruns = (const struct report_analysis *const *)runs;
    bool html = format == REPORT_FORMAT_HTML;
    if (html || plots) {
        charts_for_compare(&cs, cruns, (size_t)npos);
        stem = to_stdout ? NULL : charts_stem(output);
        struct chart_output co = {.inline_svg = html, .format = plots, .stem = stem};
        char *cause = NULL;
        if (charts_produce(&cs, &co, &cause) < 0) {
            fprintf(stderr, "jackdaw compare: %s\n", cause);
            free(cause);
            rc = EXIT_INTERNAL;
            goto done;
        }
        if (cs.note)
            fprintf(stderr, "jackdaw compare: note: %s\n", cs.note);
    }
    FILE *out = report_cli_open("compare", output);
    if (!out) {
        rc = EXIT_INTERNAL;
        goto done;
    }
    int wrc = format == REPORT_FORMAT_JSON ? render_compare_json(out, cruns, (size_t)npos)
              : html ? render_compare_html(out, cruns, (size_t)npos, &cs)
                     : render_compare_md(out, cruns, (size_t)npos, &cs);
    if (report_cli_close("compare", output, out) < 0 || wrc < 0)
        rc = EXIT_INTERNAL;
done:
    free_labels(label, nlabels);
    free(stem);
    charts_fini(&cs);
    for (int k = 0; k < npos; k++)
        report_analysis_destroy(runs[k]);
    free(runs);
    return rc;
}
