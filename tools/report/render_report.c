/*
 * render_report — the content of `jackdaw report` in Markdown and HTML, one section per
 * group of figures (report_sections, in that order), written once through doc.
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/text.h"
#include "core/base/xalloc.h"
#include "tools/report/render.h"
#include "tools/report/render_internal.h"

/* Rows of the time tables in the text: the charts carry the detail. */
#define TIME_ROWS 20
/* Larger steal matrices are left to the JSON and CSV outputs. */
#define MATRIX_MAX 32

static void figure_table(struct doc *d, const struct report_analysis *a, const char *group)
{
    static const char *const head[] = {"figure", "value", "key"};
    static const bool numeric[] = {false, true, false};
    doc_table(d, 3, head, numeric);
    for (int f = 0; f < RF_COUNT; f++) {
        const struct report_figure_info *fi = report_figure_info(f);
        if (strcmp(fi->group, group) != 0)
            continue;
        char buf[FIG_BUF];
        const char *row[] = {fi->label, fmt_figure(buf, f, a->figures[f]), fi->key};
        doc_row(d, row);
    }
    doc_table_end(d);
}

static void run_section(struct doc *d, const struct report_analysis *a)
{
    doc_section(d, report_sections[0]);
    static const char *const head[] = {"", ""};
    doc_table(d, 2, head, NULL);
    char nodes[128], window[128], b1[FIG_BUF], b2[FIG_BUF];
    double slots = a->figures[RF_SLOTS];
    snprintf(nodes, sizeof nodes, "%zu nodes, %.0f slots", a->nnodes, slots);
    snprintf(window, sizeof window, "%s to %s after the run start", fmt_seconds(b1, a->start_s),
             fmt_seconds(b2, a->end_s));
    const char *rows[][2] = {
        {"trace", a->trace_path},
        {"run id", a->run_id ? a->run_id : "–"},
        {"workload", run_workload(a)},
        {"workload digest", a->workload_digest ? a->workload_digest : "–"},
        {"submission", a->workload_mode ? a->workload_mode : "– (not recorded)"},
        {"placement", a->placement ? a->placement : "ws (default)"},
        {"steal", a->steal_policy ? a->steal_policy : "adaptive (default)"},
        {"cluster", nodes},
        {"window", window},
        {"file", a->cut ? "cut (the whole blocks were read)" : "complete"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        doc_row(d, rows[i]);
    doc_table_end(d);
}

static void lost_section(struct doc *d, const struct report_analysis *a)
{
    const double *f = a->figures;
    char b1[FIG_BUF], b2[FIG_BUF], b3[FIG_BUF];
    doc_section(d, report_sections[2]);
    if (isfinite(f[RF_BOUND_QUALITY]))
        doc_para(d, "Quality: the binding lower bound on the makespan (%s%s) is %s, %s of the "
                    "actual makespan %s (paper 002's percentage of sub-optimal; `jackdaw bound` "
                    "gives all three bounds).",
                 a->bound_name ? "the " : "", a->bound_name ? a->bound_name : "see jackdaw bound",
                 fmt_figure(b1, RF_BOUND_MAKESPAN_S, f[RF_BOUND_MAKESPAN_S]),
                 fmt_figure(b2, RF_BOUND_QUALITY, f[RF_BOUND_QUALITY]),
                 fmt_figure(b3, RF_MAKESPAN_S, f[RF_MAKESPAN_S]));
    else
        doc_para(d, "Quality against the sub-optimal bound: not computed for this report "
                    "(`jackdaw bound` on the workload gives the bound).");
    /* A run without a failure reads as it always did: no failure line at all. */
    bool failed = f[RF_LOST_FAILURE_S] > 0 || f[RF_TASKS_RESUBMITTED] > 0 ||
                  f[RF_OBJECTS_RECOMPUTED] > 0 || f[RF_WORK_THROWN_AWAY_S] > 0;
    doc_para(d, "The cluster offered %s of slot time (slots x makespan), ran tasks for %s of "
                "it and stood idle for %s. Each idle core-second is charged to the first cause "
                "that holds, in this order%s:",
             fmt_seconds(b1, f[RF_CAPACITY_CORE_S]), fmt_seconds(b2, f[RF_BUSY_CORE_S]),
             fmt_seconds(b3, f[RF_IDLE_CORE_S]),
             failed ? " (failure recovery, listed last, is checked first: every slot of a "
                      "dead node, and the idle slots of the others until its tasks ran again)"
                    : "");
    if (failed) {
        char b4[FIG_BUF];
        doc_para(d, "Failure recovery: %s resubmitted, %s recomputed; %s of work thrown away "
                    "(runs of attempts that lost, busy time not counted as idle).",
                 fmt_figure(b1, RF_TASKS_RESUBMITTED, f[RF_TASKS_RESUBMITTED]),
                 fmt_figure(b2, RF_OBJECTS_RECOMPUTED, f[RF_OBJECTS_RECOMPUTED]),
                 fmt_seconds(b4, f[RF_WORK_THROWN_AWAY_S]));
    }
    static const char *const head[] = {"cause", "core-seconds", "share of idle", "key"};
    static const bool numeric[] = {false, true, true, false};
    doc_table(d, 4, head, numeric);
    for (int c = 0; c < REPORT_LOST_COUNT; c++) {
        double v = f[RF_LOST_RAMP_UP_S + c];
        if (c == REPORT_LOST_FAILURE && !failed)
            continue;
        const char *row[] = {report_lost_cause_label(c), fmt_seconds(b1, v),
                             fmt_value(b2, RU_RATIO, f[RF_IDLE_CORE_S] > 0
                                                         ? v / f[RF_IDLE_CORE_S] : NAN),
                             report_figure_info(RF_LOST_RAMP_UP_S + c)->key};
        doc_row(d, row);
    }
    const char *total[] = {"total idle", fmt_seconds(b1, f[RF_IDLE_CORE_S]), "100 %",
                           "idle_core_s"};
    doc_row(d, total);
    doc_table_end(d);
    doc_chart(d, "lost");
}

/* Downsampled rows of the bins: each the mean of a run of bins. */
static void time_table(struct doc *d, const struct report_analysis *a, size_t ncols,
                       const char *const *head, size_t const *offsets)
{
    if (!a->nbins) {
        doc_para(d, "No time series: the run has no length.");
        return;
    }
    bool numeric[8] = {true, true, true, true, true, true, true, true};
    size_t rows = a->nbins < TIME_ROWS ? a->nbins : TIME_ROWS;
    if (rows < a->nbins) {
        char b1[FIG_BUF];
        doc_para(d, "The table averages the %zu bins in %zu rows of about %s each (the chart, "
                    "the JSON and the CSV have every bin).", a->nbins, rows,
                 fmt_seconds(b1, a->bin_s * (double)a->nbins / (double)rows));
    }
    doc_table(d, ncols + 1, head, numeric);
    for (size_t r = 0; r < rows; r++) {
        size_t lo = r * a->nbins / rows, hi = (r + 1) * a->nbins / rows;
        char cells[8][FIG_BUF];
        const char *row[8];
        snprintf(cells[0], FIG_BUF, "%.3f", a->bins[lo].t_s);
        row[0] = cells[0];
        for (size_t c = 0; c < ncols; c++) {
            double sum = 0;
            for (size_t b = lo; b < hi; b++)
                sum += *(const double *)((const char *)&a->bins[b] + offsets[c]);
            snprintf(cells[c + 1], FIG_BUF, "%.3f", sum / (double)(hi - lo));
            row[c + 1] = cells[c + 1];
        }
        doc_row(d, row);
    }
    doc_table_end(d);
}

static void utilization_section(struct doc *d, const struct report_analysis *a)
{
    char b1[FIG_BUF];
    doc_section(d, report_sections[3]);
    doc_para(d, "Mean utilization %s over %zu bins of %s.",
             fmt_figure(b1, RF_UTILIZATION, a->figures[RF_UTILIZATION]), a->nbins,
             fmt_seconds((char[FIG_BUF]){0}, a->bin_s));
    doc_chart(d, "utilization");
    if (a->nspans_all > a->nspans)
        doc_para(d, "The task stream is drawn for runs of at most %u tasks; this one ran %zu.",
                 REPORT_SPANS_MAX, a->nspans_all);
    else if (a->nspans)
        doc_para(d, "Task stream: every run, START to END, on a lane of its node (a lane per "
                    "task the node ran at once); gaps are idle slots.");
    doc_chart(d, "task_stream");
    static const char *const head[] = {"from (s)", "utilization", "busy slots"};
    static const size_t off[] = {offsetof(struct report_bin, utilization),
                                 offsetof(struct report_bin, busy_slots)};
    time_table(d, a, 2, head, off);
}

static void nodes_section(struct doc *d, const struct report_analysis *a)
{
    doc_section(d, report_sections[4]);
    doc_chart(d, "nodes");
    static const char *const head[] = {"node",     "slots",       "speed",  "tasks run",
                                       "busy",     "utilization", "CPU eff.", "stolen in/out",
                                       "pushed",   "local/with inputs", "fetched",
                                       "idle",     "largest idle cause"};
    static const bool numeric[] = {true, true, true, true, true, true, true,
                                   true, true, true, true, true, false};
    doc_table(d, 13, head, numeric);
    for (size_t i = 0; i < a->nnodes; i++) {
        const struct report_node *n = &a->nodes[i];
        char c[12][FIG_BUF];
        double idle = 0;
        int top = 0;
        for (int k = 0; k < REPORT_LOST_COUNT; k++) {
            idle += n->lost_s[k];
            if (n->lost_s[k] > n->lost_s[top])
                top = k;
        }
        snprintf(c[0], FIG_BUF, "%" PRId32, n->id);
        snprintf(c[1], FIG_BUF, "%" PRId32, n->slots);
        snprintf(c[2], FIG_BUF, "%.2f", n->speed);
        fmt_value(c[3], RU_COUNT, (double)n->tasks_run);
        fmt_seconds(c[4], n->busy_s);
        fmt_value(c[5], RU_RATIO, n->utilization);
        fmt_value(c[6], RU_RATIO, n->cpu_efficiency); /* – when no command ran here */
        snprintf(c[7], FIG_BUF, "%" PRIu64 " / %" PRIu64, n->stolen_in, n->stolen_out);
        fmt_value(c[8], RU_COUNT, (double)n->pushed_out);
        snprintf(c[9], FIG_BUF, "%" PRIu64 " / %" PRIu64, n->locality_hits,
                 n->tasks_with_inputs);
        fmt_value(c[10], RU_BYTES, (double)n->fetch_bytes);
        fmt_seconds(c[11], idle);
        const char *row[] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10],
                             c[11], idle > 0 ? report_lost_cause_label(top) : "–"};
        doc_row(d, row);
    }
    doc_table_end(d);
}

static void steals_section(struct doc *d, const struct report_analysis *a)
{
    doc_section(d, report_sections[6]);
    figure_table(d, a, "steals");
    doc_para(d, "Failures by reason: %" PRIu64 " empty victim, %" PRIu64 " no victim to ask, %"
                PRIu64 " timed out.",
             a->steal_fails_empty, a->steal_fails_no_victim, a->steal_fails_timeout);
    if (!(a->figures[RF_STEAL_REQUESTS] > 0) && !(a->figures[RF_TASKS_STOLEN] > 0)) {
        doc_para(d, "No steal was requested.");
        return;
    }
    doc_chart(d, "steal_matrix");
    if (a->nnodes > MATRIX_MAX || !a->steal_tasks) {
        doc_para(d, "The thief x victim matrices (%zu x %zu) are in the JSON and CSV outputs.",
                 a->nnodes, a->nnodes);
        return;
    }
    doc_para(d, "Tasks moved, thief (row) x victim (column), with the requests sent in "
                "parentheses:");
    size_t nc = a->nnodes + 1;
    const char **head = xcalloc(nc, sizeof *head);
    char (*names)[FIG_BUF] = xcalloc(nc, sizeof *names);
    bool *numeric = xcalloc(nc, sizeof *numeric);
    head[0] = "thief \\ victim";
    for (size_t v = 0; v < a->nnodes; v++) {
        snprintf(names[v + 1], FIG_BUF, "%" PRId32, a->nodes[v].id);
        head[v + 1] = names[v + 1];
        numeric[v + 1] = true;
    }
    doc_table(d, nc, head, numeric);
    char (*cells)[FIG_BUF] = xcalloc(nc, sizeof *cells);
    const char **row = xcalloc(nc, sizeof *row);
    for (size_t t = 0; t < a->nnodes; t++) {
        snprintf(cells[0], FIG_BUF, "%" PRId32, a->nodes[t].id);
        row[0] = cells[0];
        for (size_t v = 0; v < a->nnodes; v++) {
            size_t at = t * a->nnodes + v;
            snprintf(cells[v + 1], FIG_BUF, "%" PRIu64 " (%" PRIu64 ")", a->steal_tasks[at],
                     a->steal_asks[at]);
            row[v + 1] = cells[v + 1];
        }
        doc_row(d, row);
    }
    doc_table_end(d);
    free(row);
    free(cells);
    free(numeric);
    free(names);
    free(head);
}

static void audit_section(struct doc *d, const struct report_analysis *a)
{
    doc_section(d, report_sections[7]);
    doc_para(d, "Each steal is judged against the estimate of when its task would have started "
                "at the victim: its position in the victim's queues when it was taken, over "
                "the victim's start rate at that moment. Helpful when it started earlier on "
                "the thief.");
    figure_table(d, a, "audit");
    if (a->steals_unjudged)
        doc_para(d, "%" PRIu64 " steals were not judged (the task never started, or the "
                    "victim's rate is unknown).",
                 a->steals_unjudged);
    if (!a->nworst)
        return;
    /* The list is the smallest gains, harmful or not: say which it is. */
    size_t harmful = 0;
    for (size_t k = 0; k < a->nworst; k++)
        harmful += a->worst[k].gain_s < 0;
    if (harmful)
        doc_para(d, "The least helpful steals, smallest gain first (%zu with a negative gain: "
                    "the task started later than it would have at the victim):", harmful);
    else
        doc_para(d, "No steal listed here was harmful (every gain is positive: each task "
                    "started earlier than it would have at the victim); the least helpful, "
                    "smallest gain first:");
    static const char *const head[] = {"task", "name", "victim", "thief", "stolen at",
                                       "started at", "estimate at victim", "position",
                                       "victim rate", "gain"};
    static const bool numeric[] = {false, false, true, true, true, true, true, true, true, true};
    doc_table(d, 10, head, numeric);
    for (size_t k = 0; k < a->nworst; k++) {
        const struct report_steal *s = &a->worst[k];
        char c[10][FIG_BUF];
        fmt_task(c[0], s->task);
        snprintf(c[2], FIG_BUF, "%" PRId32, s->victim);
        snprintf(c[3], FIG_BUF, "%" PRId32, s->thief);
        snprintf(c[4], FIG_BUF, "%.6f", s->stolen_s);
        snprintf(c[5], FIG_BUF, "%.6f", s->started_s);
        snprintf(c[6], FIG_BUF, "%.6f", s->estimate_s);
        snprintf(c[7], FIG_BUF, "%" PRIu32, s->position);
        fmt_value(c[8], RU_RATE, s->victim_rate_tps);
        fmt_seconds(c[9], s->gain_s);
        /* A task's id comes from the trace (up to 4 KiB a name): a table cell shows it
         * cut; the JSON and CSV renderers keep it whole for joins. */
        char *name = s->name ? text_clip(s->name, strlen(s->name), TEXT_SHOWN) : NULL;
        const char *row[] = {c[0], name ? name : "–", c[2], c[3], c[4],
                             c[5], c[6], c[7], c[8], c[9]};
        doc_row(d, row);
        free(name);
    }
    doc_table_end(d);
}

/*
 * The answer before the evidence: makespan, efficiency, quality against the bound and
 * where the idle time went (its two largest causes), in one paragraph above everything,
 * which a reader sees without scrolling.
 */
static void headline(struct doc *d, const struct report_analysis *a)
{
    const double *f = a->figures;
    char mk[FIG_BUF], eff[FIG_BUF], q[FIG_BUF], bound[FIG_BUF], idle[FIG_BUF];
    char quality[160] = "quality against the bound not computed";
    if (isfinite(f[RF_BOUND_QUALITY]))
        snprintf(quality, sizeof quality, "quality %s of the %s bound (%s)",
                 fmt_figure(q, RF_BOUND_QUALITY, f[RF_BOUND_QUALITY]),
                 a->bound_name ? a->bound_name : "binding",
                 fmt_figure(bound, RF_BOUND_MAKESPAN_S, f[RF_BOUND_MAKESPAN_S]));
    int top[2] = {-1, -1};
    for (int c = 0; c < REPORT_LOST_COUNT; c++) {
        double v = f[RF_LOST_RAMP_UP_S + c];
        if (!(v > 0))
            continue;
        if (top[0] < 0 || v > f[RF_LOST_RAMP_UP_S + top[0]]) {
            top[1] = top[0];
            top[0] = c;
        } else if (top[1] < 0 || v > f[RF_LOST_RAMP_UP_S + top[1]]) {
            top[1] = c;
        }
    }
    char causes[256] = "no slot stood idle";
    double all = f[RF_IDLE_CORE_S];
    if (top[0] >= 0 && all > 0) {
        int n = snprintf(causes, sizeof causes, "%s of slot time idle, mostly %s (%.0f %%)",
                         fmt_seconds(idle, all), report_lost_cause_label(top[0]),
                         100.0 * f[RF_LOST_RAMP_UP_S + top[0]] / all);
        if (top[1] >= 0 && n > 0 && (size_t)n < sizeof causes)
            snprintf(causes + n, sizeof causes - (size_t)n, " and %s (%.0f %%)",
                     report_lost_cause_label(top[1]), 100.0 * f[RF_LOST_RAMP_UP_S + top[1]] / all);
    }
    doc_para(d, "Makespan %s, efficiency %s; %s; %s.",
             fmt_figure(mk, RF_MAKESPAN_S, f[RF_MAKESPAN_S]),
             fmt_figure(eff, RF_EFFICIENCY, f[RF_EFFICIENCY]), quality, causes);
}

/* A trace of several jobs: each one's own figures (report --job J), before the whole
 * window's, which mix them. */
static void jobs_section(struct doc *d, const struct report_analysis *a)
{
    if (!a->njob_rows)
        return;
    doc_section(d, "Jobs");
    doc_para(d, "The trace holds %" PRIu32 " jobs; each alone (`jackdaw report --job J`), "
                "then, below, the cluster's whole window, whose figures mix them.",
             a->njobs);
    static const char *const head[] = {"job", "workload", "tasks", "done", "failed",
                                       "cancelled", "makespan", "efficiency",
                                       "quality vs bound"};
    static const bool numeric[] = {true, false, true, true, true, true, true, true, true};
    doc_table(d, 9, head, numeric);
    for (size_t i = 0; i < a->njob_rows; i++) {
        const struct report_job_row *j = &a->job_rows[i];
        char c[9][FIG_BUF];
        snprintf(c[0], FIG_BUF, "%" PRIu32, j->job);
        const char *name = j->workload ? strrchr(j->workload, '/') : NULL;
        snprintf(c[1], FIG_BUF, "%s", name ? name + 1 : j->workload ? j->workload : "–");
        fmt_value(c[2], RU_COUNT, j->submitted);
        fmt_value(c[3], RU_COUNT, j->done);
        fmt_value(c[4], RU_COUNT, j->failed);
        fmt_value(c[5], RU_COUNT, j->cancelled);
        fmt_figure(c[6], RF_MAKESPAN_S, j->makespan_s);
        fmt_figure(c[7], RF_EFFICIENCY, j->efficiency);
        fmt_figure(c[8], RF_BOUND_QUALITY, j->bound_quality);
        const char *row[] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]};
        doc_row(d, row);
    }
    doc_table_end(d);
    if (a->njobs > a->njob_rows)
        doc_para(d, "(the first %zu of them)", a->njob_rows);
}

static void write_report(struct doc *d, const struct report_analysis *a)
{
    headline(d, a);
    run_section(d, a);
    jobs_section(d, a);
    doc_section(d, report_sections[1]);
    figure_table(d, a, "summary");
    lost_section(d, a);
    utilization_section(d, a);
    nodes_section(d, a);
    doc_section(d, report_sections[5]);
    figure_table(d, a, "data");
    steals_section(d, a);
    audit_section(d, a);

    doc_section(d, report_sections[8]);
    doc_para(d, "From the nodes' samples: per bin, each node's mean sampled length (or its "
                "last sample), summed over the nodes.");
    doc_chart(d, "queues");
    static const char *const qhead[] = {"from (s)", "WaitQ", "LReadyQ", "SReadyQ"};
    static const size_t qoff[] = {offsetof(struct report_bin, waitq),
                                  offsetof(struct report_bin, lreadyq),
                                  offsetof(struct report_bin, sreadyq)};
    time_table(d, a, 3, qhead, qoff);

    char b1[FIG_BUF], b2[FIG_BUF];
    doc_section(d, report_sections[9]);
    doc_para(d, "E_b = I_b x P per bin (paper 004, eq. 1-3), from each node's ready tasks "
                "polled at every task it starts; mean %s, largest %s.",
             fmt_figure(b1, RF_POTENTIAL_MEAN, a->figures[RF_POTENTIAL_MEAN]),
             fmt_figure(b2, RF_POTENTIAL_MAX, a->figures[RF_POTENTIAL_MAX]));
    doc_chart(d, "potential");
    static const char *const phead[] = {"from (s)", "E_b", "I_b"};
    static const size_t poff[] = {offsetof(struct report_bin, potential),
                                  offsetof(struct report_bin, imbalance)};
    time_table(d, a, 2, phead, poff);

    doc_section(d, report_sections[10]);
    if (!a->nwarnings)
        doc_para(d, "None: the trace is complete.");
    for (size_t i = 0; i < a->nwarnings; i++)
        doc_para(d, "%s", a->warnings[i]);
    if (d->cs && d->cs->note)
        doc_para(d, "Charts: %s", d->cs->note);
}

static int render(FILE *out, enum doc_kind kind, const struct report_analysis *a,
                  const struct chart_set *cs)
{
    char *title = xasprintf("jackdaw report: %s", a->label);
    struct doc d;
    doc_begin(&d, out, kind, cs, title);
    free(title);
    write_report(&d, a);
    return doc_end(&d);
}

int render_md(FILE *out, const struct report_analysis *a, const struct chart_set *cs)
{
    return render(out, DOC_MD, a, cs);
}

int render_html(FILE *out, const struct report_analysis *a, const struct chart_set *cs)
{
    return render(out, DOC_HTML, a, cs);
}
