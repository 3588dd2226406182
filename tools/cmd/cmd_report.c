/*
 * cmd_report — `jackdaw report TRACE [-o FILE] [--format html|md|csv|json]
 * [--workload FILE] [--bins N] [--plots svg|png|pdf]`: how good was that run, and why.
 *
 * Reads the trace (tools/report/analysis), makes the charts the format needs
 * (tools/report/charts) and writes the report (tools/report/render).  The format comes
 * from --format, else from -o's extension (.html, .md, .json, .csv), else Markdown;
 * without -o the report goes to standard output.  CSV is one file per table, so it needs
 * -o DIR.  --plots also writes every chart as a file next to the output
 * (OUT-NAME.svg|png|pdf) with the data behind it (OUT-NAME.csv).  HTML carries its charts
 * inline; without gnuplot it says so and the charts' data is written as CSV next to it.
 *
 * Exit codes: 0; EXIT_USAGE for a bad command line; EXIT_BAD_INPUT for a trace that
 * cannot be read (or a --workload that cannot); EXIT_INTERNAL when the output cannot be
 * written.  A cut trace is reported from its whole blocks, with a warning.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "tools/cmd/cmd.h"
#include "tools/cmd/run_bound.h"
#include "tools/report/analysis.h"
#include "tools/report/charts.h"
#include "tools/report/cli.h"
#include "tools/report/render.h"

static int report_main(int argc, char **argv);

const struct cmd cmd_report = {
    .name = "report",
    .usage = "TRACE [-o FILE|DIR] [--format html|md|csv|json] [--workload FILE] [--bins N] [--job J] "
             "[--plots svg|png|pdf]",
    .summary = "efficiency, utilization, steals and lost time of a run, from its trace",
    .main = report_main,
};

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "jackdaw report: %s%s%s%s\nusage: jackdaw report %s\n", msg,
            arg ? " '" : "", arg ? arg : "", arg ? "'" : "", cmd_report.usage);
    return EXIT_USAGE;
}

static int write_report(const struct report_analysis *a, enum report_format format,
                        const char *output, const struct chart_set *cs)
{
    if (format == REPORT_FORMAT_CSV) {
        char *cause = NULL;
        if (render_csv(output, a, &cause) < 0) {
            fprintf(stderr, "jackdaw report: %s\n", cause ? cause : "cannot write the CSV files");
            free(cause);
            return EXIT_INTERNAL;
        }
        return 0;
    }
    FILE *out = report_cli_open("report", output);
    if (!out)
        return EXIT_INTERNAL;
    int rc = format == REPORT_FORMAT_JSON ? render_json(out, a)
             : format == REPORT_FORMAT_HTML ? render_html(out, a, cs)
                                            : render_md(out, a, cs);
    if (report_cli_close("report", output, out) < 0 || rc < 0)
        return EXIT_INTERNAL;
    return 0;
}

static int report_main(int argc, char **argv)
{
    const char *output = NULL, *format_name = NULL, *workload = NULL, *plots = NULL;
    unsigned long bins = REPORT_DEFAULT_BINS, job = 0;
    const struct opt opts[] = {
        {"output", OPT_STRING, &output,
         "FILE  where the report goes (-o; default: stdout); for csv a DIR, one file a table"},
        {"format", OPT_STRING, &format_name, "F  html | md | csv | json (default: from -o, else md)"},
        {"workload", OPT_STRING, &workload, "FILE  the workload, when not where the trace says"},
        {"bins", OPT_UINT, &bins, "N  time bins of the series (100)"},
        {"job", OPT_UINT, &job, "J  report job J alone (a trace of several jobs)"},
        {"plots", OPT_STRING, &plots, "F  also write each chart as F (svg, png, pdf) next to -o"},
        {NULL, 0, NULL, NULL},
    };
    static const char *const shorts[][2] = {{"-o", "--output"}};
    char **args = cmd_short_options(argc, argv, opts, shorts, 1);
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_report, argc, args, opts, pos, 1, &npos);
    free(args);
    if (rc < 0)
        return 0;
    if (rc)
        return rc;
    if (npos != 1)
        return usage_error("needs one trace file", NULL);
    if (bins < 1 || bins > REPORT_MAX_BINS)
        return usage_error("--bins must be from 1 to 100000", NULL);
    enum report_format format = REPORT_FORMAT_MD;
    if (format_name) {
        if (report_format_parse(format_name, &format) < 0)
            return usage_error("--format must be html, md, csv or json, not", format_name);
    } else if (output && strcmp(output, "-") != 0) {
        if (report_format_from_path(output, &format) < 0)
            format = REPORT_FORMAT_MD;
    }
    bool to_stdout = !output || strcmp(output, "-") == 0;
    if (format == REPORT_FORMAT_CSV && to_stdout)
        return usage_error("--format csv writes one file per table: it needs -o DIR", NULL);
    if (plots && strcmp(plots, "svg") && strcmp(plots, "png") && strcmp(plots, "pdf"))
        return usage_error("--plots must be svg, png or pdf, not", plots);
    if (plots && to_stdout)
        return usage_error("--plots writes files next to the output: it needs -o FILE", NULL);
    if (workload && access(workload, R_OK) != 0) {
        fprintf(stderr, "jackdaw report: cannot read workload '%s': %s\n", workload,
                strerror(errno));
        return EXIT_BAD_INPUT;
    }

    struct report_analysis *a;
    char *cause = NULL;
    if (job > UINT32_MAX)
        return usage_error("--job must be a job id, not", NULL);
    struct report_options ro = {.bins = (unsigned)bins, .job = (uint32_t)job};
    rc = report_analyze(pos[0], &ro, &a, &cause);
    if (rc < 0) {
        /* the cause names the file already */
        if (cause)
            fprintf(stderr, "jackdaw report: %s\n", cause);
        else
            fprintf(stderr, "jackdaw report: cannot read trace '%s': %s\n", pos[0], strerror(-rc));
        free(cause);
        return EXIT_BAD_INPUT;
    }
    run_bound_add(a, pos[0], workload, "report");
    /* A trace of several jobs: each reported alone too, in a table of its own, so that
     * the whole window's figures are not the only ones. */
    if (!job && a->njobs > 1) {
        uint32_t n = a->njobs < 8 ? a->njobs : 8;
        a->job_rows = xcalloc(n, sizeof *a->job_rows);
        for (uint32_t i = 0; i < n; i++) {
            struct report_options jo = {.bins = (unsigned)bins, .job = a->job_ids[i]};
            struct report_analysis *ja = NULL;
            char *why = NULL;
            struct report_job_row *row = &a->job_rows[a->njob_rows];
            *row = (struct report_job_row){.job = a->job_ids[i], .makespan_s = NAN,
                                           .efficiency = NAN, .bound_quality = NAN};
            if (report_analyze(pos[0], &jo, &ja, &why) == 0) {
                run_bound_add(ja, pos[0], NULL, "report");
                const double *jf = ja->figures;
                row->workload = ja->workload_path ? xstrdup(ja->workload_path) : NULL;
                row->submitted = jf[RF_TASKS_SUBMITTED];
                row->done = jf[RF_TASKS_DONE];
                row->failed = jf[RF_TASKS_FAILED];
                row->cancelled = jf[RF_TASKS_CANCELLED];
                row->makespan_s = jf[RF_MAKESPAN_S];
                row->efficiency = jf[RF_EFFICIENCY];
                row->bound_quality = jf[RF_BOUND_QUALITY];
            }
            free(why);
            report_analysis_destroy(ja);
            a->njob_rows++;
        }
    }
    for (size_t i = 0; i < a->nwarnings; i++)
        fprintf(stderr, "jackdaw report: warning: %s\n", a->warnings[i]);

    struct chart_set cs = {0};
    bool html = format == REPORT_FORMAT_HTML;
    char *stem = NULL;
    if (html || plots) {
        charts_for_report(&cs, a);
        if (!to_stdout)
            stem = format == REPORT_FORMAT_CSV ? xasprintf("%s/chart", output)
                                               : charts_stem(output);
        if (stem && format == REPORT_FORMAT_CSV && render_csv(output, a, &cause) < 0) {
            /* makes the directory the charts go into; the tables are rewritten below */
            fprintf(stderr, "jackdaw report: %s\n", cause);
            free(cause);
            rc = EXIT_INTERNAL;
            goto done;
        }
        struct chart_output co = {.inline_svg = html, .format = plots, .stem = stem};
        if (charts_produce(&cs, &co, &cause) < 0) {
            fprintf(stderr, "jackdaw report: %s\n", cause);
            free(cause);
            rc = EXIT_INTERNAL;
            goto done;
        }
        if (cs.note)
            fprintf(stderr, "jackdaw report: note: %s\n", cs.note);
    }
    rc = write_report(a, format, output, &cs);
done:
    free(stem);
    charts_fini(&cs);
    report_analysis_destroy(a);
    return rc;
}
