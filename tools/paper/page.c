/*
 * bench page — see page.h.  The page reads top-down as a reader checks a reproduction:
 * first every published value beside ours (Summary), then per experiment what ran and
 * why it is faithful, the full results, the charts, and where the idle time went.
 */
#include "tools/paper/page.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "tools/report/charts.h"
#include "tools/report/plot.h"
#include "tools/report/render_internal.h"

/* Points of the utilization overlay's common time grid. */
#define OVERLAY_POINTS 200

const char *bench_figure_text(char *buf, size_t size, enum bench_figure f, double v)
{
    char tmp[FIG_BUF];
    if (f == BF_TIME_PER_TASK_S && isfinite(v))
        snprintf(buf, size, "%.1f ms", 1000 * v);
    else if (f == BF_BYTES_MOVED && isfinite(v))
        snprintf(buf, size, "%.0f MB", v / 1e6);
    else
        snprintf(buf, size, "%s", fmt_value(tmp, bench_figure_info(f)->unit, v));
    return buf;
}

/* ---- labels --------------------------------------------------------------------------- */

/* A cell in a chart, where width is short: the point when there is one series, the
 * series' key when there is one point, else both. */
static char *chart_label(const struct bench_exp *x, const struct bench_point *pt,
                         const struct bench_cell *c)
{
    if (x->e->nseries == 1)
        return xstrdup(pt->def->label);
    if (x->e->npoints == 1)
        return xstrdup(c->series->key);
    return xasprintf("%s / %s", pt->def->key, c->series->key);
}

static const char *cell_label(const struct bench_experiment *e, const char *point,
                              const char *series, bool across_points)
{
    const char *key = across_points ? point : series;
    if (across_points) {
        for (size_t i = 0; i < e->npoints; i++)
            if (strcmp(e->points[i].key, key) == 0)
                return e->points[i].label;
    } else {
        for (size_t i = 0; i < e->nseries; i++)
            if (strcmp(e->series[i].key, key) == 0)
                return e->series[i].label;
    }
    return key;
}

static char *join_words(char **w)
{
    size_t len = 1;
    for (char **a = w; a && *a; a++)
        len += strlen(*a) + 1;
    char *s = xcalloc(len, 1);
    for (char **a = w; a && *a; a++) {
        if (a != w)
            strcat(s, " ");
        strcat(s, *a);
    }
    return s;
}

/* ---- charts --------------------------------------------------------------------------- */

static void add(struct chart_set *cs, struct plot *p)
{
    cs->c = xrealloc(cs->c, (cs->n + 1) * sizeof *cs->c);
    cs->c[cs->n++] = (struct chart){.plot = p};
}

static char *chart_name(const struct bench_exp *x, const char *what)
{
    return xasprintf("%s-%s", x->e->key, what);
}

/* The headline figure of every cell, beside the papers' value where they give one. */
static void headline_chart(struct chart_set *cs, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    const struct bench_figure_info *fi = bench_figure_info(e->headline);
    bool any_published = false;
    for (size_t i = 0; i < e->npublished; i++)
        any_published |= e->published[i].figure == e->headline && e->published[i].relation == '=';
    const char *cols[] = {"jackdaw", "paper"};
    char *name = chart_name(x, "headline");
    char *title = xasprintf("%s%s", fi->label, any_published ? ": jackdaw and the paper" : "");
    char *ylabel = xasprintf("%s (%s)", fi->label, fi->plot_unit);
    struct plot *p = plot_create(name, title, PLOT_BARS, "", ylabel, "cell",
                                 any_published ? 2 : 1, cols);
    for (size_t i = 0; i < e->npoints; i++)
        for (size_t s = 0; s < e->nseries; s++) {
            const struct bench_point *pt = &x->points[i];
            const struct bench_cell *c = &pt->cells[s];
            const struct bench_published *pub =
                bench_published_find(e, pt->def->key, c->series->key, e->headline);
            double v[2] = {c->median[e->headline] * fi->plot_scale,
                           pub && pub->relation == '=' ? pub->value * fi->plot_scale : NAN};
            char *label = chart_label(x, pt, c);
            plot_add_row(p, label, 0, v);
            free(label);
        }
    free(name);
    free(title);
    free(ylabel);
    add(cs, p);
}

static bool overlaid(const struct bench_experiment *e, const char *series)
{
    if (!e->overlay)
        return true;
    for (const char *const *k = e->overlay; *k; k++)
        if (strcmp(*k, series) == 0)
            return true;
    return false;
}

/* Utilization of the first run of every cell (or of the experiment's overlay) on a
 * common grid of time since its start; a run that has ended has no points, so its line
 * stops where it finished (as in `jackdaw compare`). */
static void utilization_chart(struct chart_set *cs, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    size_t n = e->npoints * e->nseries;
    const struct bench_run **runs = xcalloc(n, sizeof *runs);
    char **cols = xcalloc(n, sizeof *cols);
    size_t k = 0;
    double longest = 0;
    for (size_t i = 0; i < e->npoints; i++)
        for (size_t s = 0; s < e->nseries; s++) {
            const struct bench_cell *c = &x->points[i].cells[s];
            if (!c->nruns || c->runs[0].nbins < 2 || !overlaid(e, c->series->key))
                continue;
            const struct bench_run *run = &c->runs[0];
            double bin = run->bin_t[1] - run->bin_t[0];
            longest = fmax(longest, run->bin_t[run->nbins - 1] + bin);
            runs[k] = run;
            cols[k++] = chart_label(x, &x->points[i], c);
        }
    if (k) {
        char *name = chart_name(x, "utilization");
        struct plot *p = plot_create(name, "Utilization over time (first run of each)",
                                     PLOT_LINES, "time since the run start (s)",
                                     "busy slots / slots", "time_s", k,
                                     (const char *const *)cols);
        p->ymin = 0;
        p->ymax = 1.05;
        double *row = xcalloc(k, sizeof *row);
        for (int g = 0; g <= OVERLAY_POINTS; g++) {
            double t = longest * g / OVERLAY_POINTS;
            for (size_t j = 0; j < k; j++) {
                const struct bench_run *run = runs[j];
                double bin = run->bin_t[1] - run->bin_t[0];
                size_t b = bin > 0 ? (size_t)(t / bin) : 0;
                row[j] = b < run->nbins ? run->bin_u[b] : NAN;
            }
            plot_add_row(p, NULL, t, row);
        }
        free(row);
        free(name);
        add(cs, p);
    }
    for (size_t j = 0; j < k; j++)
        free(cols[j]);
    free(cols);
    free(runs);
}

static bool has_lost(const struct bench_cell *c)
{
    return c->nruns && isfinite(c->runs[0].lost[0]);
}

static void lost_chart(struct chart_set *cs, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    const char *cols[REPORT_LOST_COUNT];
    for (int c = 0; c < REPORT_LOST_COUNT; c++)
        cols[c] = report_lost_cause_label(c);
    char *name = chart_name(x, "lost");
    struct plot *p = plot_create(name, "Idle core-seconds by cause (first run of each)",
                                 PLOT_STACKED, "", "core-seconds", "cell", REPORT_LOST_COUNT,
                                 cols);
    size_t rows = 0;
    for (size_t i = 0; i < e->npoints; i++)
        for (size_t s = 0; s < e->nseries; s++) {
            const struct bench_cell *c = &x->points[i].cells[s];
            if (!has_lost(c))
                continue;
            char *label = chart_label(x, &x->points[i], c);
            plot_add_row(p, label, 0, c->runs[0].lost);
            free(label);
            rows++;
        }
    free(name);
    if (rows)
        add(cs, p);
    else
        plot_destroy(p);
}

static void make_charts(struct chart_set *cs, const struct bench_results *r)
{
    memset(cs, 0, sizeof *cs);
    for (size_t i = 0; i < r->n; i++) {
        headline_chart(cs, &r->exps[i]);
        utilization_chart(cs, &r->exps[i]);
        lost_chart(cs, &r->exps[i]);
    }
}

/* ---- sections ------------------------------------------------------------------------- */

static const char *duration(char *buf, size_t size, double s)
{
    if (!isfinite(s))
        snprintf(buf, size, "–");
    else if (s < 120)
        snprintf(buf, size, "%.0f s", s);
    else
        snprintf(buf, size, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
    return buf;
}

static void published_rows(struct doc *d, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    for (size_t i = 0; i < e->npublished; i++) {
        const struct bench_published *pub = &e->published[i];
        for (size_t p = 0; p < e->npoints; p++) {
            const struct bench_point *pt = &x->points[p];
            if (pub->point && strcmp(pub->point, pt->def->key) != 0)
                continue;
            for (size_t s = 0; s < e->nseries; s++) {
                const struct bench_cell *c = &pt->cells[s];
                if (pub->series && strcmp(pub->series, c->series->key) != 0)
                    continue;
                char m[48], v[48];
                const char *row[] = {
                    e->title, bench_figure_info(pub->figure)->label, pt->def->label,
                    c->series->label,
                    bench_figure_text(m, sizeof m, pub->figure, c->median[pub->figure]),
                    bench_published_text(v, sizeof v, pub), pub->source,
                };
                doc_row(d, row);
            }
        }
    }
}

/* The cell of `series` at point `pt`, or NULL. */
static const struct bench_cell *cell_of(const struct bench_exp *x, const struct bench_point *pt,
                                        const char *series)
{
    for (size_t s = 0; s < x->e->nseries; s++)
        if (strcmp(pt->cells[s].series->key, series) == 0)
            return &pt->cells[s];
    return NULL;
}

/* One row per published gain: 1 - makespan(series) / makespan(over) here and there. */
static void gain_rows(struct doc *d, const struct bench_exp *x, bool with_experiment)
{
    const struct bench_experiment *e = x->e;
    for (size_t i = 0; i < e->ngains; i++) {
        const struct bench_gain *g = &e->gains[i];
        for (size_t p = 0; p < e->npoints; p++) {
            const struct bench_point *pt = &x->points[p];
            if (strcmp(pt->def->key, g->point) != 0)
                continue;
            const struct bench_cell *a = cell_of(x, pt, g->series), *b = cell_of(x, pt, g->over);
            if (!a || !b)
                continue;
            double ma = a->median[BF_MAKESPAN_S], mb = b->median[BF_MAKESPAN_S];
            char ours[48] = "–", theirs[48], what[160];
            if (isfinite(ma) && isfinite(mb) && mb > 0)
                snprintf(ours, sizeof ours, "%.1f %%", 100.0 * (1.0 - ma / mb));
            snprintf(theirs, sizeof theirs, "%.2f %%", g->pct);
            snprintf(what, sizeof what, "%s over %s", a->series->label, b->series->label);
            const char *row[] = {e->title, "gain (1 - makespan / other's)", pt->def->label,
                                 what, ours, theirs, g->source};
            doc_row(d, with_experiment ? row : row + 2);
        }
    }
}

static void ordering_rows(struct doc *d, const struct bench_exp *x, bool with_experiment)
{
    const struct bench_experiment *e = x->e;
    for (size_t i = 0; i < e->norderings; i++) {
        const struct bench_ordering *o = &e->orderings[i];
        double v[BENCH_ORDER_MAX];
        size_t n;
        bench_ordering_values(x, o, v, &n);
        char claim[512] = "", values[256] = "";
        for (size_t k = 0; k < n; k++) {
            char buf[48];
            const char *point = o->across_points ? o->items[k] : NULL;
            const char *series = o->across_points ? NULL : o->items[k];
            size_t used = strlen(claim);
            snprintf(claim + used, sizeof claim - used, "%s%s", k ? " > " : "",
                     cell_label(e, point, series, o->across_points));
            used = strlen(values);
            snprintf(values + used, sizeof values - used, "%s%s", k ? ", " : "",
                     bench_figure_text(buf, sizeof buf, o->figure, v[k]));
        }
        size_t used = strlen(claim);
        snprintf(claim + used, sizeof claim - used, " (%s)", bench_figure_info(o->figure)->label);
        bool any = false;
        for (size_t k = 0; k < n; k++)
            any |= isfinite(v[k]);
        const char *holds = !any ? "–" : bench_strictly_decreasing(v, n) ? "yes" : "no";
        const char *row[] = {e->title, claim, values, holds, o->source};
        doc_row(d, with_experiment ? row : row + 1);
    }
}

static void summary(struct doc *d, const struct bench_results *r)
{
    doc_section(d, "Summary");
    char started[32] = "?", wall[32], load[32] = "?";
    struct tm tm;
    if (gmtime_r(&r->started, &tm))
        strftime(started, sizeof started, "%Y-%m-%d %H:%M UTC", &tm);
    if (isfinite(r->loadavg))
        snprintf(load, sizeof load, "%.2f", r->loadavg);
    doc_para(d, "Scale %g (1 is the default size), %u run%s per configuration (the figures "
                "are medians), on %d CPUs with a load average of %s at the start; started "
                "%s, took %s.",
             r->scale, r->runs, r->runs == 1 ? "" : "s", r->cpus, load, started,
             duration(wall, sizeof wall, r->wall_s));
    if (r->interrupted)
        doc_para(d, "Interrupted: the bench was stopped by a signal; what follows is what was "
                    "measured before it.");
    else if (!bench_results_complete(r))
        doc_para(d, "Some runs gave no result; each experiment's section says which and why.");
    doc_para(d, "Every value the papers report, beside jackdaw's on this machine. The "
                "papers ran on 100 to 200 cores of a cluster; these runs are scaled to one "
                "host (each section gives the scale and why it is faithful), so the "
                "comparison is of behaviour and proportions, not of absolute sizes.");
    bool values = false;
    for (size_t i = 0; i < r->n; i++)
        values |= r->exps[i].e->npublished > 0 || r->exps[i].e->ngains > 0;
    if (values) {
        static const char *const head[] = {"experiment", "figure", "workload", "configuration",
                                           "jackdaw", "papers", "source"};
        static const bool num[] = {false, false, false, false, true, true, false};
        doc_table(d, 7, head, num);
        for (size_t i = 0; i < r->n; i++) {
            published_rows(d, &r->exps[i]);
            gain_rows(d, &r->exps[i], true);
        }
        doc_table_end(d);
    } else {
        doc_para(d, "The experiments run report no published values (only orders, below).");
    }
    bool any = false;
    for (size_t i = 0; i < r->n; i++)
        any |= r->exps[i].e->norderings > 0;
    if (any) {
        doc_para(d, "Orders the papers report without numbers, and whether jackdaw's runs "
                    "keep them:");
        static const char *const ohead[] = {"experiment", "the papers' order", "jackdaw",
                                            "holds", "source"};
        doc_table(d, 5, ohead, NULL);
        for (size_t i = 0; i < r->n; i++)
            ordering_rows(d, &r->exps[i], true);
        doc_table_end(d);
    }
}

static void workloads_table(struct doc *d, const struct bench_exp *x)
{
    static const char *const head[] = {"workload", "tasks", "jackdaw gen", "bound", "binding",
                                       "sub-optimal", "capacity", "critical path"};
    static const bool num[] = {false, true, false, true, false, true, true, true};
    doc_table(d, 8, head, num);
    for (size_t p = 0; p < x->e->npoints; p++) {
        const struct bench_point *pt = &x->points[p];
        char tasks[48], b[48], so[48], cap[48], cp[48];
        char gen[BENCH_MAX_WORDS * BENCH_WORD + 8] = "gen";
        for (int i = 0; i < pt->plan.nwords; i++) {
            strcat(gen, " ");
            strcat(gen, pt->plan.words[i]);
        }
        const char *row[] = {
            pt->def->label, fmt_value(tasks, RU_COUNT, (double)pt->plan.tasks), gen,
            fmt_seconds(b, pt->bound.binding_s), pt->bound.binding ? pt->bound.binding : "–",
            fmt_seconds(so, pt->bound.suboptimal_s), fmt_seconds(cap, pt->bound.capacity_s),
            fmt_seconds(cp, pt->bound.critical_path_s),
        };
        doc_row(d, row);
    }
    doc_table_end(d);
}

static void results_table(struct doc *d, const struct bench_results *r, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    /* The headline figure first, then the other columns (the headline once: an
     * experiment whose columns list it too shows it in its place). */
    enum bench_figure cols[BF_COUNT];
    size_t nc = 0;
    for (size_t i = 0; e->columns[i] != BF_COUNT; i++)
        if (e->columns[i] != e->headline)
            cols[nc++] = e->columns[i];
    bool papers = false;
    for (size_t i = 0; i < e->npublished; i++)
        papers |= e->published[i].figure == e->headline;
    size_t ncols = 6 + nc;
    const char **head = xcalloc(ncols, sizeof *head);
    bool *num = xcalloc(ncols, sizeof *num);
    head[0] = "workload";
    head[1] = "configuration";
    head[2] = bench_figure_info(e->headline)->label;
    num[2] = true;
    head[3] = "papers";
    num[3] = true;
    for (size_t i = 0; i < nc; i++) {
        head[4 + i] = bench_figure_info(cols[i])->label;
        num[4 + i] = true;
    }
    head[4 + nc] = "runs";
    num[4 + nc] = true;
    head[5 + nc] = "trace (first run)";
    /* Without a published headline value the papers column would stay empty: left out. */
    size_t skip = papers ? 0 : 1;
    if (skip) {
        memmove(&head[3], &head[4], (ncols - 4) * sizeof *head);
        memmove(&num[3], &num[4], (ncols - 4) * sizeof *num);
    }
    doc_table(d, ncols - skip, head, num);
    char (*buf)[48] = xcalloc(ncols, sizeof *buf);
    const char **row = xcalloc(ncols, sizeof *row);
    for (size_t p = 0; p < e->npoints; p++)
        for (size_t s = 0; s < e->nseries; s++) {
            const struct bench_point *pt = &x->points[p];
            const struct bench_cell *c = &pt->cells[s];
            size_t ok = 0;
            for (size_t k = 0; k < c->nruns; k++)
                ok += c->runs[k].ok;
            const struct bench_published *pub =
                bench_published_find(e, pt->def->key, c->series->key, e->headline);
            row[0] = pt->def->label;
            row[1] = c->series->label;
            row[2] = bench_figure_text(buf[2], sizeof buf[2], e->headline, c->median[e->headline]);
            row[3] = pub ? bench_published_text(buf[3], sizeof buf[3], pub) : "–";
            for (size_t i = 0; i < nc; i++)
                row[4 + i] = bench_figure_text(buf[4 + i], sizeof buf[4 + i], cols[i],
                                               c->median[cols[i]]);
            snprintf(buf[4 + nc], sizeof buf[4 + nc], "%zu/%u", ok, r->runs);
            row[4 + nc] = buf[4 + nc];
            row[5 + nc] = c->nruns && c->runs[0].trace ? c->runs[0].trace : "–";
            if (skip)
                memmove(&row[3], &row[4], (ncols - 4) * sizeof *row);
            doc_row(d, row);
        }
    doc_table_end(d);
    free(row);
    free(buf);
    free(head);
    free(num);
}

static void lost_table(struct doc *d, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    bool any = false;
    for (size_t p = 0; p < e->npoints; p++)
        for (size_t s = 0; s < e->nseries; s++)
            any |= has_lost(&x->points[p].cells[s]);
    if (!any)
        return;
    doc_para(d, "Where the idle core-seconds went, from the first run's trace (causes as in "
                "jackdaw report's \"How far from possible\"), with the utilization:");
    const char *head[3 + REPORT_LOST_COUNT];
    bool num[3 + REPORT_LOST_COUNT];
    head[0] = "workload";
    head[1] = "configuration";
    head[2] = "utilization";
    num[0] = num[1] = false;
    num[2] = true;
    for (int c = 0; c < REPORT_LOST_COUNT; c++) {
        head[3 + c] = report_lost_cause_label(c);
        num[3 + c] = true;
    }
    doc_table(d, 3 + REPORT_LOST_COUNT, head, num);
    for (size_t p = 0; p < e->npoints; p++)
        for (size_t s = 0; s < e->nseries; s++) {
            const struct bench_cell *c = &x->points[p].cells[s];
            if (!has_lost(c))
                continue;
            char buf[1 + REPORT_LOST_COUNT][FIG_BUF];
            const char *row[3 + REPORT_LOST_COUNT];
            row[0] = x->points[p].def->label;
            row[1] = c->series->label;
            row[2] = fmt_value(buf[0], RU_RATIO, c->runs[0].utilization);
            for (int k = 0; k < REPORT_LOST_COUNT; k++) {
                if (isfinite(c->runs[0].lost[k]))
                    snprintf(buf[1 + k], FIG_BUF, "%.1f", c->runs[0].lost[k]);
                else
                    snprintf(buf[1 + k], FIG_BUF, "–");
                row[3 + k] = buf[1 + k];
            }
            doc_row(d, row);
        }
    doc_table_end(d);
}

static void settings_table(struct doc *d, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    static const char *const head[] = {"configuration", "workload", "jackdaw run WORKLOAD …"};
    doc_table(d, 3, head, NULL);
    for (size_t s = 0; s < e->nseries; s++)
        for (size_t p = 0; p < e->npoints; p++) {
            const struct bench_cell *c = &x->points[p].cells[s];
            if (!c->run_args)
                continue;
            char *words = join_words(c->run_args);
            const char *row[] = {c->series->label, x->points[p].def->label, words};
            doc_row(d, row);
            free(words);
        }
    doc_table_end(d);
}

static void problems(struct doc *d, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    for (size_t p = 0; p < e->npoints; p++) {
        const struct bench_point *pt = &x->points[p];
        if (pt->error)
            doc_para(d, "%s: no workload: %s", pt->def->label, pt->error);
        for (size_t s = 0; s < e->nseries; s++) {
            const struct bench_cell *c = &pt->cells[s];
            for (size_t k = 0; k < c->nruns; k++)
                if (!c->runs[k].ok)
                    doc_para(d, "%s, %s, run %zu: no result: %s", pt->def->label,
                             c->series->label, k + 1,
                             c->runs[k].error ? c->runs[k].error : "?");
        }
    }
    if (!x->done)
        doc_para(d, "Not finished: the bench was interrupted during this experiment.");
}

static void experiment(struct doc *d, const struct bench_results *r, const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    doc_section(d, e->title);
    doc_para(d, "Reproduces %s.", e->reproduces);
    doc_para(d, "%s", e->about);
    doc_para(d, "The papers: %s", e->paper_setup);
    doc_para(d, "Here: %u local node daemons x %u slots, emulated %s links, scale %g, %u "
                "run%s per configuration.",
             e->nodes, e->slots, e->bandwidth, r->scale, r->runs, r->runs == 1 ? "" : "s");
    workloads_table(d, x);
    bool papers = false;
    for (size_t i = 0; i < e->npublished; i++)
        papers |= e->published[i].figure == e->headline;
    doc_para(d, papers ? "Results (medians over the runs; \"papers\" is the published value "
                         "of the first figure where there is one):"
                       : "Results (medians over the runs):");
    results_table(d, r, x);
    if (e->ngains) {
        doc_para(d, "The papers' gains beside jackdaw's (1 - makespan / the other's makespan, "
                    "from the medians above):");
        static const char *const ghead[] = {"workload", "configuration", "jackdaw", "papers",
                                            "source"};
        static const bool gnum[] = {false, false, true, true, false};
        doc_table(d, 5, ghead, gnum);
        gain_rows(d, x, false);
        doc_table_end(d);
    }
    if (e->norderings) {
        static const char *const head[] = {"the papers' order", "jackdaw", "holds", "source"};
        doc_table(d, 4, head, NULL);
        ordering_rows(d, x, false);
        doc_table_end(d);
    }
    char *name = chart_name(x, "headline");
    doc_chart(d, name);
    free(name);
    name = chart_name(x, "utilization");
    doc_chart(d, name);
    free(name);
    name = chart_name(x, "lost");
    doc_chart(d, name);
    free(name);
    lost_table(d, x);
    doc_para(d, "Settings of each configuration (besides --json, --trace and --timeout):");
    settings_table(d, x);
    problems(d, x);
}

static void method(struct doc *d, const struct bench_results *r)
{
    doc_section(d, "Method");
    doc_para(d, "Each workload is made by jackdaw gen, its bound computed by jackdaw bound "
                "on the experiment's cluster and link, and each configuration run by "
                "jackdaw run on a private local cluster of node daemons (loopback TCP, "
                "emulated links), one run at a time. The figures are those of jackdaw run "
                "--json: makespan from the first submit to the last completion; efficiency "
                "= ideal / makespan with ideal = total task time / slots; time per task per "
                "CPU = makespan x slots / tasks; bound / makespan = the binding bound of "
                "jackdaw bound over the makespan (paper 002's percentage of sub-optimal). "
                "Utilization and the idle core-seconds come from each run's trace.");
    doc_para(d, "Every run's trace is in traces/; jackdaw report traces/NAME.avro -o "
                "NAME.html explains any one of them, and jackdaw compare sets several side "
                "by side. results.json holds every figure of every run.");
    doc_para(d, "To run again: jackdaw bench paper -o DIR --scale %g --runs %u. On a shared "
                "or loaded machine the figures move with the load: use --runs 3 and read "
                "the medians.",
             r->scale, r->runs);
}

int bench_page_write(const struct bench_results *r, const char *dir, char **cause)
{
    struct chart_set cs;
    make_charts(&cs, r);
    char *stem = xasprintf("%s/chart", dir);
    struct chart_output co = {.inline_svg = true, .stem = stem};
    int rc = charts_produce(&cs, &co, cause);
    char *path = xasprintf("%s/index.html", dir);
    char *tmp = xasprintf("%s/.index.html.tmp", dir);
    FILE *out = rc == 0 ? fopen(tmp, "w") : NULL;
    if (rc == 0 && !out) {
        rc = -errno;
        *cause = xasprintf("cannot write '%s': %s", tmp, strerror(-rc));
    }
    if (out) {
        struct doc d;
        doc_begin(&d, out, DOC_HTML, &cs, "jackdaw bench paper: the papers' results on this "
                                          "machine");
        d.footer = "Made by jackdaw bench paper; results.json beside this page holds every "
                   "figure, traces/ every run's trace.";
        if (cs.note)
            doc_para(&d, "Note: %s.", cs.note);
        summary(&d, r);
        for (size_t i = 0; i < r->n; i++)
            experiment(&d, r, &r->exps[i]);
        method(&d, r);
        rc = doc_end(&d);
        if (fclose(out) != 0 && rc == 0)
            rc = -errno;
        if (rc == 0 && rename(tmp, path) < 0)
            rc = -errno;
        if (rc < 0) {
            *cause = xasprintf("cannot write '%s': %s", path, strerror(-rc));
            unlink(tmp);
        }
    }
    free(tmp);
    free(path);
    free(stem);
    charts_fini(&cs);
    return rc;
}
