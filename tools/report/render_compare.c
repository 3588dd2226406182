/*
 * render_compare — `jackdaw compare` in Markdown and HTML: every figure side by side,
 * one column per run, and the comparison charts (compare_sections, in that order).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "tools/report/render.h"
#include "tools/report/render_internal.h"

#define MATRIX_MAX 32

/* A table with a first column, one per run, and maybe a last one. */
struct wide {
    const struct report_analysis *const *runs; /* borrowed: the headings' labels */
    size_t nc;
    const char **head;
    bool *numeric;
    char (*cells)[FIG_BUF];
    const char **row;
};

static void wide_begin(struct wide *w, struct doc *d, const struct report_analysis *const *runs,
                       size_t n, const char *first, const char *last)
{
    w->runs = runs;
    w->nc = n + 1 + (last ? 1 : 0);
    w->head = xcalloc(w->nc, sizeof *w->head);
    w->numeric = xcalloc(w->nc, sizeof *w->numeric);
    w->cells = xcalloc(w->nc, sizeof *w->cells);
    w->row = xcalloc(w->nc, sizeof *w->row);
    w->head[0] = first;
    for (size_t k = 0; k < n; k++) {
        snprintf(w->cells[k + 1], FIG_BUF, "%zu: %s", k + 1,
                 w->runs[k]->short_label ? w->runs[k]->short_label : "run");
        w->head[k + 1] = w->cells[k + 1];
        w->numeric[k + 1] = true;
    }
    if (last)
        w->head[w->nc - 1] = last;
    doc_table(d, w->nc, w->head, w->numeric);
    for (size_t c = 0; c < w->nc; c++)
        w->row[c] = w->cells[c];
}

static void wide_end(struct wide *w, struct doc *d)
{
    doc_table_end(d);
    free(w->head);
    free(w->numeric);
    free(w->cells);
    free(w->row);
}

static void runs_section(struct doc *d, const struct report_analysis *const *runs, size_t n)
{
    doc_section(d, compare_sections[0]);
    static const char *const head[] = {"run", "label", "trace", "run id", "workload",
                                       "nodes", "slots"};
    static const bool numeric[] = {true, false, false, false, false, true, true};
    doc_table(d, 7, head, numeric);
    for (size_t k = 0; k < n; k++) {
        const struct report_analysis *a = runs[k];
        char c[3][FIG_BUF];
        snprintf(c[0], FIG_BUF, "%zu", k + 1);
        snprintf(c[1], FIG_BUF, "%zu", a->nnodes);
        snprintf(c[2], FIG_BUF, "%.0f", a->figures[RF_SLOTS]);
        const char *row[] = {c[0], a->label, a->trace_path, a->run_id ? a->run_id : "–",
                             run_workload(a), c[1], c[2]};
        doc_row(d, row);
    }
    doc_table_end(d);
}

/* The run with the best value of a figure that has a better direction, or 0. */
static size_t best_run(const struct report_analysis *const *runs, size_t n, enum report_figure f)
{
    enum report_sense sense = report_figure_info(f)->sense;
    if (sense == REPORT_NEUTRAL || n < 2)
        return 0;
    size_t best = 0;
    bool tie = false;
    for (size_t k = 0; k < n; k++) {
        double v = runs[k]->figures[f];
        if (!isfinite(v))
            continue;
        double b = best ? runs[best - 1]->figures[f] : NAN;
        if (!best || (sense == REPORT_HIGHER_BETTER ? v > b : v < b)) {
            best = k + 1;
            tie = false;
        } else if (v == b) {
            tie = true;
        }
    }
    return tie ? 0 : best; /* a shared best names nobody */
}

/* Idle time by cause and the setup are not ranked: less steal-in-flight time is no merit
 * in a run that does not steal, nor a short tail in one that ended late; total idle
 * time, the makespan and efficiency say who did better. */
static bool ranked(enum report_figure f)
{
    return f != RF_SETUP_S && !(f >= RF_LOST_RAMP_UP_S && f < RF_LOST_RAMP_UP_S + REPORT_LOST_COUNT);
}

static void figures_section(struct doc *d, const struct report_analysis *const *runs, size_t n)
{
    doc_section(d, compare_sections[1]);
    doc_para(d, "best: the run with the better value where one direction is better (higher "
                "efficiency, shorter makespan, less idle time …); none on a tie. The causes of "
                "idle time one by one and the setup are not ranked: a run that does not steal "
                "has no steal in flight, which is no merit.");
    struct wide w;
    wide_begin(&w, d, runs, n, "figure", "best");
    for (int f = 0; f < RF_COUNT; f++) {
        snprintf(w.cells[0], FIG_BUF, "%s", report_figure_info(f)->label);
        for (size_t k = 0; k < n; k++)
            fmt_figure(w.cells[k + 1], f, runs[k]->figures[f]);
        size_t best = ranked(f) ? best_run(runs, n, f) : 0;
        if (best)
            snprintf(w.cells[n + 1], FIG_BUF, "%zu: %s", best,
                     runs[best - 1]->short_label ? runs[best - 1]->short_label : "run");
        else
            snprintf(w.cells[n + 1], FIG_BUF, "%s", "");
        doc_row(d, w.row);
    }
    wide_end(&w, d);
}

static void nodes_section(struct doc *d, const struct report_analysis *const *runs, size_t n)
{
    doc_section(d, compare_sections[4]);
    doc_chart(d, "node_tasks");
    int32_t maxid = -1;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < runs[k]->nnodes; i++)
            if (runs[k]->nodes[i].id > maxid)
                maxid = runs[k]->nodes[i].id;
    struct wide w;
    wide_begin(&w, d, runs, n, "node", NULL);
    for (int32_t id = 0; id <= maxid; id++) {
        bool any = false;
        snprintf(w.cells[0], FIG_BUF, "%" PRId32, id);
        for (size_t k = 0; k < n; k++) {
            snprintf(w.cells[k + 1], FIG_BUF, "–");
            for (size_t i = 0; i < runs[k]->nnodes; i++)
                if (runs[k]->nodes[i].id == id) {
                    fmt_value(w.cells[k + 1], RU_COUNT, (double)runs[k]->nodes[i].tasks_run);
                    any = true;
                }
        }
        if (any)
            doc_row(d, w.row);
    }
    wide_end(&w, d);
}

static void lost_section(struct doc *d, const struct report_analysis *const *runs, size_t n)
{
    doc_section(d, compare_sections[5]);
    doc_chart(d, "lost");
    struct wide w;
    wide_begin(&w, d, runs, n, "cause", NULL);
    for (int c = 0; c <= REPORT_LOST_COUNT; c++) {
        enum report_figure f = c < REPORT_LOST_COUNT ? RF_LOST_RAMP_UP_S + c : RF_IDLE_CORE_S;
        snprintf(w.cells[0], FIG_BUF, "%s",
                 c < REPORT_LOST_COUNT ? report_lost_cause_label(c) : "total idle");
        for (size_t k = 0; k < n; k++)
            fmt_seconds(w.cells[k + 1], runs[k]->figures[f]);
        doc_row(d, w.row);
    }
    wide_end(&w, d);
}

static void matrix_table(struct doc *d, const struct report_analysis *a)
{
    size_t nc = a->nnodes + 1;
    const char **head = xcalloc(nc, sizeof *head);
    bool *numeric = xcalloc(nc, sizeof *numeric);
    char (*cells)[FIG_BUF] = xcalloc(2 * nc, sizeof *cells);
    const char **row = xcalloc(nc, sizeof *row);
    head[0] = "thief \\ victim";
    for (size_t v = 0; v < a->nnodes; v++) {
        snprintf(cells[nc + v], FIG_BUF, "%" PRId32, a->nodes[v].id);
        head[v + 1] = cells[nc + v];
        numeric[v + 1] = true;
    }
    doc_table(d, nc, head, numeric);
    for (size_t t = 0; t < a->nnodes; t++) {
        snprintf(cells[0], FIG_BUF, "%" PRId32, a->nodes[t].id);
        for (size_t v = 0; v < a->nnodes; v++)
            snprintf(cells[v + 1], FIG_BUF, "%" PRIu64, a->steal_tasks[t * a->nnodes + v]);
        for (size_t c = 0; c < nc; c++)
            row[c] = cells[c];
        doc_row(d, row);
    }
    doc_table_end(d);
    free(head);
    free(numeric);
    free(cells);
    free(row);
}

static void steals_section(struct doc *d, const struct report_analysis *const *runs, size_t n)
{
    doc_section(d, compare_sections[6]);
    doc_para(d, "Tasks moved by steals, thief (row) x victim (column).");
    for (size_t k = 0; k < n; k++) {
        const struct report_analysis *a = runs[k];
        char b1[FIG_BUF];
        doc_para(d, "Run %zu (%s): %s tasks moved, steal success %s.", k + 1, a->label,
                 fmt_figure(b1, RF_TASKS_STOLEN, a->figures[RF_TASKS_STOLEN]),
                 fmt_figure((char[FIG_BUF]){0}, RF_STEAL_SUCCESS_PCT,
                            a->figures[RF_STEAL_SUCCESS_PCT]));
        char name[48];
        snprintf(name, sizeof name, "steal_matrix_%zu", k + 1);
        doc_chart(d, name);
        if (a->nnodes <= MATRIX_MAX && a->steal_tasks && a->figures[RF_TASKS_STOLEN] > 0)
            matrix_table(d, a);
    }
}

static int render(FILE *out, enum doc_kind kind, const struct report_analysis *const *runs,
                  size_t n, const struct chart_set *cs)
{
    struct doc d;
    char *title = xasprintf("jackdaw comparison of %zu runs", n);
    doc_begin(&d, out, kind, cs, title);
    free(title);
    runs_section(&d, runs, n);
    figures_section(&d, runs, n);

    doc_section(&d, compare_sections[2]);
    doc_para(&d, "Each run's utilization against the time since its own first submit.");
    doc_chart(&d, "utilization");

    doc_section(&d, compare_sections[3]);
    doc_chart(&d, "efficiency");
    doc_chart(&d, "makespan");
    struct wide w;
    wide_begin(&w, &d, runs, n, "figure", NULL);
    const enum report_figure shown[] = {RF_EFFICIENCY, RF_MAKESPAN_S, RF_IDEAL_S,
                                        RF_BOUND_QUALITY};
    for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++) {
        snprintf(w.cells[0], FIG_BUF, "%s", report_figure_info(shown[i])->label);
        for (size_t k = 0; k < n; k++)
            fmt_figure(w.cells[k + 1], shown[i], runs[k]->figures[shown[i]]);
        doc_row(&d, w.row);
    }
    wide_end(&w, &d);

    nodes_section(&d, runs, n);
    lost_section(&d, runs, n);
    steals_section(&d, runs, n);

    doc_section(&d, compare_sections[7]);
    bool any = false;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < runs[k]->nwarnings; i++) {
            doc_para(&d, "Run %zu: %s", k + 1, runs[k]->warnings[i]);
            any = true;
        }
    if (!any)
        doc_para(&d, "None: every trace is complete.");
    if (cs && cs->note)
        doc_para(&d, "Charts: %s", cs->note);
    return doc_end(&d);
}

int render_compare_md(FILE *out, const struct report_analysis *const *runs, size_t n,
                      const struct chart_set *cs)
{
    return render(out, DOC_MD, runs, n, cs);
}

int render_compare_html(FILE *out, const struct report_analysis *const *runs, size_t n,
                        const struct chart_set *cs)
{
    return render(out, DOC_HTML, runs, n, cs);
}
