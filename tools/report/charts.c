/*
 * charts — see charts.h.  Each builder turns figures of the analysis into a plot table
 * and nothing more; charts_produce decides what becomes of them.
 */
#include "tools/report/charts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"

/* Line charts with more nodes than this show the cluster only. */
#define NODE_LINES_MAX 16
/* Points of the common time grid of a comparison. */
#define OVERLAY_POINTS 200

static void add(struct chart_set *cs, struct plot *p)
{
    cs->c = xrealloc(cs->c, (cs->n + 1) * sizeof *cs->c);
    cs->c[cs->n++] = (struct chart){.plot = p};
}

static char *node_name(int32_t id)
{
    return xasprintf("node %d", (int)id);
}

static void utilization(struct chart_set *cs, const struct report_analysis *a)
{
    bool per_node = a->nnodes > 1 && a->nnodes <= NODE_LINES_MAX;
    size_t ncols = 1 + (per_node ? a->nnodes : 0);
    char **cols = xcalloc(ncols, sizeof *cols);
    cols[0] = xstrdup("cluster");
    for (size_t i = 1; i < ncols; i++)
        cols[i] = node_name(a->nodes[i - 1].id);
    struct plot *p = plot_create("utilization", "Utilization over time", PLOT_LINES,
                                 "time since the run start (s)", "busy slots / slots",
                                 "time_s", ncols, (const char *const *)cols);
    p->ymin = 0;
    p->ymax = 1.05;
    double *row = xcalloc(ncols, sizeof *row);
    for (size_t b = 0; b < a->nbins; b++) {
        row[0] = a->bins[b].utilization;
        for (size_t i = 1; i < ncols; i++)
            row[i] = a->node_utilization[b * a->nnodes + i - 1];
        plot_add_row(p, NULL, a->bins[b].t_s, row);
    }
    for (size_t i = 0; i < ncols; i++)
        free(cols[i]);
    free(cols);
    free(row);
    add(cs, p);
}

static void queues(struct chart_set *cs, const struct report_analysis *a)
{
    const char *cols[] = {"WaitQ", "LReadyQ", "SReadyQ"};
    struct plot *p = plot_create("queues", "Queue lengths over time (sum over nodes, sampled)",
                                 PLOT_LINES, "time since the run start (s)", "tasks", "time_s",
                                 3, cols);
    p->ymin = 0;
    for (size_t b = 0; b < a->nbins; b++) {
        double row[3] = {a->bins[b].waitq, a->bins[b].lreadyq, a->bins[b].sreadyq};
        plot_add_row(p, NULL, a->bins[b].t_s, row);
    }
    add(cs, p);
}

static void potential(struct chart_set *cs, const struct report_analysis *a)
{
    const char *cols[] = {"E_b"};
    struct plot *p = plot_create("potential", "Potential for work stealing E_b (paper 004)",
                                 PLOT_LINES, "time since the run start (s)", "E_b", "time_s",
                                 1, cols);
    p->ymin = 0;
    for (size_t b = 0; b < a->nbins; b++)
        plot_add_row(p, NULL, a->bins[b].t_s, &a->bins[b].potential);
    add(cs, p);
}

static void lost(struct chart_set *cs, const struct report_analysis *a)
{
    const char *cols[] = {"core-seconds"};
    struct plot *p = plot_create("lost", "Idle core-seconds by cause", PLOT_BARS, "",
                                 "core-seconds", "cause", 1, cols);
    for (int c = 0; c < REPORT_LOST_COUNT; c++)
        plot_add_row(p, report_lost_cause_label(c), 0, &a->figures[RF_LOST_RAMP_UP_S + c]);
    add(cs, p);
}

static void nodes(struct chart_set *cs, const struct report_analysis *a)
{
    const char *cols[] = {"tasks run"};
    struct plot *p = plot_create("nodes", "Tasks run per node", PLOT_BARS, "", "tasks", "node",
                                 1, cols);
    for (size_t i = 0; i < a->nnodes; i++) {
        char *name = node_name(a->nodes[i].id);
        double v = (double)a->nodes[i].tasks_run;
        plot_add_row(p, name, 0, &v);
        free(name);
    }
    add(cs, p);
}

static bool stole(const struct report_analysis *a)
{
    for (size_t k = 0; a->steal_tasks && k < a->nnodes * a->nnodes; k++)
        if (a->steal_tasks[k])
            return true;
    return false;
}

static struct plot *steal_matrix(const struct report_analysis *a, const char *name,
                                 const char *title)
{
    char **cols = xcalloc(a->nnodes + 1, sizeof *cols);
    for (size_t i = 0; i < a->nnodes; i++)
        cols[i] = node_name(a->nodes[i].id);
    struct plot *p = plot_create(name, title, PLOT_HEATMAP, "victim", "thief", "thief",
                                 a->nnodes, (const char *const *)cols);
    double *row = xcalloc(a->nnodes + 1, sizeof *row);
    for (size_t t = 0; t < a->nnodes; t++) {
        for (size_t v = 0; v < a->nnodes; v++)
            row[v] = (double)a->steal_tasks[t * a->nnodes + v];
        plot_add_row(p, cols[t], 0, row);
    }
    for (size_t i = 0; i < a->nnodes; i++)
        free(cols[i]);
    free(cols);
    free(row);
    return p;
}

static int by_node_start(const void *x, const void *y)
{
    const struct report_span *a = x, *b = y;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return (a->start_s > b->start_s) - (a->start_s < b->start_s);
}

/*
 * The task stream, as Dask's dashboard draws it: a lane per slot of each node, a box per
 * run from its START to its END.  Lanes come from the runs themselves (each run takes the
 * lowest lane free at its start), so a node shows as many lanes as it ran tasks at once.
 */
static void task_stream(struct chart_set *cs, const struct report_analysis *a)
{
    if (!a->nspans || a->nspans < a->nspans_all)
        return; /* none, or more than REPORT_SPANS_MAX: not drawn (report says so) */
    struct report_span *sp = xmalloc(a->nspans * sizeof *sp);
    memcpy(sp, a->spans, a->nspans * sizeof *sp);
    qsort(sp, a->nspans, sizeof *sp, by_node_start);
    const char *cols[] = {"start_s", "end_s", "colour"};
    struct plot *p = plot_create("task_stream", "Task stream (a lane per slot; failed runs red)",
                                 PLOT_STREAM, "time since the run start (s)", "", "lane", 3,
                                 cols);
    double *lane_end = NULL;
    size_t lanes_cap = 0, nlanes = 0;
    double base = 0;
    for (size_t i = 0; i < a->nspans; i++) {
        if (i == 0 || sp[i].node != sp[i - 1].node) {
            base += (double)nlanes + (i ? 0.5 : 0);
            nlanes = 0;
        }
        size_t lane = 0;
        while (lane < nlanes && lane_end[lane] > sp[i].start_s)
            lane++;
        if (lane == nlanes) {
            lane_end = xgrow(lane_end, &lanes_cap, nlanes + 1, sizeof *lane_end);
            nlanes++;
        }
        lane_end[lane] = sp[i].end_s;
        int32_t n = sp[i].node;
        double row[3] = {sp[i].start_s, sp[i].end_s,
                         sp[i].status == TASK_FAILED ? 0 : (double)(n % 20 + 1)};
        char *label = i == 0 || sp[i].node != sp[i - 1].node ? node_name(a->nodes[n].id) : NULL;
        plot_add_row(p, label, base + (double)lane, row);
        free(label);
    }
    free(lane_end);
    free(sp);
    add(cs, p);
}

void charts_for_report(struct chart_set *cs, const struct report_analysis *a)
{
    memset(cs, 0, sizeof *cs);
    if (a->nbins) {
        utilization(cs, a);
        queues(cs, a);
        potential(cs, a);
    }
    task_stream(cs, a);
    lost(cs, a);
    nodes(cs, a);
    if (stole(a))
        add(cs, steal_matrix(a, "steal_matrix", "Tasks moved by steals (thief x victim)"));
}

/* ---- comparisons ---------------------------------------------------------------------- */

static char **run_names(const struct report_analysis *const *runs, size_t n)
{
    char **names = xcalloc(n ? n : 1, sizeof *names);
    for (size_t k = 0; k < n; k++)
        names[k] = xasprintf("%zu: %s", k + 1, runs[k]->label);
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(names[k]);
    free(names);
}

/* Utilization of each run on a common grid of time since its own start; a run that has
 * ended has no points (NaN) rather than zeros, so its line stops where it finished. */
static void overlay(struct chart_set *cs, const struct report_analysis *const *runs, size_t n,
                    char **names)
{
    struct plot *p = plot_create("utilization", "Utilization over time", PLOT_LINES,
                                 "time since each run's start (s)", "busy slots / slots",
                                 "time_s", n, (const char *const *)names);
    p->ymin = 0;
    p->ymax = 1.05;
    double longest = 0;
    for (size_t k = 0; k < n; k++)
        if (runs[k]->figures[RF_MAKESPAN_S] > longest)
            longest = runs[k]->figures[RF_MAKESPAN_S];
    double *row = xcalloc(n ? n : 1, sizeof *row);
    for (int g = 0; longest > 0 && g <= OVERLAY_POINTS; g++) {
        double t = longest * g / OVERLAY_POINTS;
        for (size_t k = 0; k < n; k++) {
            const struct report_analysis *a = runs[k];
            if (!a->nbins || t > a->figures[RF_MAKESPAN_S]) {
                row[k] = NAN;
                continue;
            }
            size_t b = (size_t)(t / a->bin_s);
            row[k] = a->bins[b < a->nbins ? b : a->nbins - 1].utilization;
        }
        plot_add_row(p, NULL, t, row);
    }
    free(row);
    add(cs, p);
}

/* Bars are labelled "K: placement/policy" (or compare's --label): the whole label, with
 * the node count and workload, is in the Runs table and would not fit under a bar. */
static void bar_label(char *out, size_t cap, const struct report_analysis *const *runs,
                      size_t k)
{
    snprintf(out, cap, "%zu: %s", k + 1, runs[k]->short_label ? runs[k]->short_label : "run");
}

static void one_figure(struct chart_set *cs, const struct report_analysis *const *runs,
                       size_t n, const char *name, enum report_figure f, const char *title,
                       const char *ylabel)
{
    const char *cols[] = {report_figure_info(f)->key};
    struct plot *p = plot_create(name, title, PLOT_BARS, "", ylabel, "run", 1, cols);
    for (size_t k = 0; k < n; k++) {
        char label[80];
        bar_label(label, sizeof label, runs, k);
        plot_add_row(p, label, 0, &runs[k]->figures[f]);
    }
    add(cs, p);
}

static void node_tasks(struct chart_set *cs, const struct report_analysis *const *runs,
                       size_t n, char **names)
{
    /* Rows are node ids over every run, in order. */
    int32_t *ids = NULL;
    size_t nids = 0, cap = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < runs[k]->nnodes; i++) {
            int32_t id = runs[k]->nodes[i].id;
            size_t at = 0;
            while (at < nids && ids[at] < id)
                at++;
            if (at < nids && ids[at] == id)
                continue;
            ids = xgrow(ids, &cap, nids + 1, sizeof *ids);
            memmove(&ids[at + 1], &ids[at], (nids - at) * sizeof *ids);
            ids[at] = id;
            nids++;
        }
    struct plot *p = plot_create("node_tasks", "Tasks run per node", PLOT_BARS, "", "tasks",
                                 "node", n, (const char *const *)names);
    double *row = xcalloc(n ? n : 1, sizeof *row);
    for (size_t j = 0; j < nids; j++) {
        for (size_t k = 0; k < n; k++) {
            row[k] = NAN;
            for (size_t i = 0; i < runs[k]->nnodes; i++)
                if (runs[k]->nodes[i].id == ids[j])
                    row[k] = (double)runs[k]->nodes[i].tasks_run;
        }
        char *label = node_name(ids[j]);
        plot_add_row(p, label, 0, row);
        free(label);
    }
    free(row);
    free(ids);
    add(cs, p);
}

static void lost_stacked(struct chart_set *cs, const struct report_analysis *const *runs,
                         size_t n)
{
    const char *cols[REPORT_LOST_COUNT];
    for (int c = 0; c < REPORT_LOST_COUNT; c++)
        cols[c] = report_lost_cause_label(c);
    struct plot *p = plot_create("lost", "Idle core-seconds by cause", PLOT_STACKED, "",
                                 "core-seconds", "run", REPORT_LOST_COUNT, cols);
    for (size_t k = 0; k < n; k++) {
        char label[80];
        bar_label(label, sizeof label, runs, k);
        plot_add_row(p, label, 0, &runs[k]->figures[RF_LOST_RAMP_UP_S]);
    }
    add(cs, p);
}

void charts_for_compare(struct chart_set *cs, const struct report_analysis *const *runs,
                        size_t n)
{
    memset(cs, 0, sizeof *cs);
    char **names = run_names(runs, n);
    overlay(cs, runs, n, names);
    one_figure(cs, runs, n, "efficiency", RF_EFFICIENCY, "Efficiency", "ideal / makespan");
    one_figure(cs, runs, n, "makespan", RF_MAKESPAN_S, "Makespan", "seconds");
    node_tasks(cs, runs, n, names);
    lost_stacked(cs, runs, n);
    for (size_t k = 0; k < n; k++) {
        if (!stole(runs[k]))
            continue;
        char *name = xasprintf("steal_matrix_%zu", k + 1);
        char *title = xasprintf("Run %s: tasks moved by steals (thief x victim)", names[k]);
        add(cs, steal_matrix(runs[k], name, title));
        free(name);
        free(title);
    }
    free_names(names, n);
}

/* ---- producing ------------------------------------------------------------------------ */

char *charts_stem(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (dot && (!slash || dot > slash + 1))
        return xstrndup(path, (size_t)(dot - path));
    return xstrdup(path);
}

static void note(struct chart_set *cs, const char *s)
{
    if (!cs->note)
        cs->note = xstrdup(s);
}

int charts_produce(struct chart_set *cs, const struct chart_output *o, char **cause)
{
    *cause = NULL;
    bool want_plots = o->inline_svg || o->format;
    bool gnuplot = want_plots && plot_gnuplot_available(NULL);
    if (want_plots && !gnuplot) {
        char *why;
        plot_gnuplot_available(&why);
        char *s = xasprintf("gnuplot is not available (%s): no charts were drawn; the data "
                            "behind each one is in the tables%s", why,
                            o->stem ? " and in the CSV files written next to the output" : "");
        note(cs, s);
        free(s);
        free(why);
    }
    bool csv = o->stem && (o->csv || o->format || (want_plots && !gnuplot));
    for (size_t i = 0; i < cs->n; i++) {
        struct chart *c = &cs->c[i];
        if (csv) {
            char *path = xasprintf("%s-%s.csv", o->stem, c->plot->name);
            int rc = plot_save_csv(c->plot, path, cause);
            if (rc < 0) {
                free(path);
                return rc;
            }
            free(c->csv);
            c->csv = path;
        }
        if (!gnuplot)
            continue;
        char *why = NULL;
        if (o->inline_svg && plot_render_svg(c->plot, &c->svg, &why) < 0) {
            note(cs, why);
            free(why);
            why = NULL;
        }
        if (o->format && o->stem) {
            char *path = xasprintf("%s-%s.%s", o->stem, c->plot->name, o->format);
            if (plot_render(c->plot, o->format, path, &why) < 0) {
                /* A chart gnuplot refuses is reported, not fatal: the CSV is there. */
                note(cs, why);
                free(why);
                free(path);
            } else {
                free(c->file);
                c->file = path;
            }
        }
    }
    return 0;
}

const struct chart *charts_find(const struct chart_set *cs, const char *name)
{
    for (size_t i = 0; cs && i < cs->n; i++)
        if (strcmp(cs->c[i].plot->name, name) == 0)
            return &cs->c[i];
    return NULL;
}

void charts_fini(struct chart_set *cs)
{
    if (!cs)
        return;
    for (size_t i = 0; i < cs->n; i++) {
        plot_destroy(cs->c[i].plot);
        free(cs->c[i].svg);
        free(cs->c[i].file);
        free(cs->c[i].csv);
    }
    free(cs->c);
    free(cs->note);
    memset(cs, 0, sizeof *cs);
}
