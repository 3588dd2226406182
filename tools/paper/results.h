/*
 * bench results — what `jackdaw bench paper` measured, as the runner fills it and the
 * page and results.json read it, and results.json itself.
 *
 * Shape: one bench_exp per experiment run, one bench_point per workload, one bench_cell
 * per (workload, series), one bench_run per repetition.  Figures are NaN where a run
 * has none (no data: no locality hit rate) or did not finish.
 *
 * results.json (format "jackdaw-bench-paper", version 1) keeps these keys; new keys may
 * be added, none renamed:
 *   format, version, jackdaw, started_utc, wall_s, complete, interrupted, scale, runs,
 *   host {cpus, loadavg_1m}, gnuplot,
 *   experiments[] {key, title, reproduces, about, paper_setup, nodes, slots, bandwidth,
 *     tt_fraction, headline, done,
 *     points[] {key, label, tasks, gen[], error,
 *       bound {binding, binding_s, suboptimal_s, capacity_s, critical_path_s},
 *       cells[] {series, label, run_args[],
 *         median {FIGURE: value},
 *         published[] {figure, relation, value, source, measured},
 *         runs[] {ok, exit_status, timed_out, wall_s, trace, error,
 *                 figures {FIGURE: value}, utilization, lost_core_s {CAUSE: s}}}},
 *     orderings[] {figure, items[], values[], holds, source}}
 * FIGURE is a key of bench_figure_info (makespan_s, throughput_tps, efficiency, ideal_s,
 * avg_time_per_task_per_cpu_s, locality_hit_rate, bytes_moved, cache_hit_rate,
 * tasks_pushed, bound_s, bound_ratio); CAUSE a key of report_lost_cause_key.  NaN is
 * null.
 *
 * Owns: a bench_results owns every array and string below it; the experiment, series
 * and published entries are borrowed from the static table.  Callers: paper.c fills,
 * page.c and results.c read.  Offline tool: out of memory aborts (xalloc).
 */
#ifndef JACKDAW_BENCH_RESULTS_H
#define JACKDAW_BENCH_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "tools/paper/experiments.h"
#include "tools/report/analysis.h"

struct bench_run {
    bool ok;                /* a summary came back */
    int exit_status;
    bool timed_out;
    double wall_s;          /* of the whole `jackdaw run` */
    char *trace;            /* owned, relative to the output directory; NULL when none */
    char *error;            /* owned: why there is no summary; NULL */
    double fig[BF_COUNT];
    /* From the trace (NaN / empty when it could not be read). */
    double utilization;
    double lost[REPORT_LOST_COUNT];
    size_t nbins;
    double *bin_t, *bin_u;  /* owned: utilization over time, for the overlay */
};

struct bench_cell {
    const struct bench_series *series; /* borrowed */
    char **run_args;        /* owned, NULL-terminated: the `jackdaw run` words after W */
    struct bench_run *runs; /* owned, nruns */
    size_t nruns;
    double median[BF_COUNT];
};

struct bench_bound {
    bool ok;
    char *binding;          /* owned: "suboptimal", "capacity", "critical_path" */
    double binding_s, suboptimal_s, capacity_s, critical_path_s;
};

struct bench_point {
    const struct bench_point_def *def; /* borrowed */
    struct bench_plan plan;
    char *error;            /* owned: why the workload could not be made; NULL */
    struct bench_bound bound;
    struct bench_cell *cells; /* owned, one per series */
};

struct bench_exp {
    const struct bench_experiment *e; /* borrowed */
    bool done;              /* every run of it was attempted */
    struct bench_point *points; /* owned, e->npoints */
};

struct bench_results {
    double scale;
    unsigned runs;
    time_t started;
    double wall_s;
    bool interrupted;
    int cpus;
    double loadavg;
    bool gnuplot;
    struct bench_exp *exps; /* owned, n */
    size_t n;
};

/* Empty results for the selected experiments (mask: bench_only_parse). */
struct bench_results *bench_results_create(uint64_t mask, double scale, unsigned runs);
void bench_results_destroy(struct bench_results *r); /* NULL is a no-op */

/* The cell of series key s at point key p, or NULL. */
const struct bench_cell *bench_cell_find(const struct bench_exp *x, const char *p,
                                         const char *s);

/* The orderings: values of an ordering's items (the cells' medians; NaN when missing),
 * n set to the item count. */
void bench_ordering_values(const struct bench_exp *x, const struct bench_ordering *o,
                           double values[BENCH_ORDER_MAX], size_t *n);

/* Medians of the runs of a cell, after its runs are in. */
void bench_cell_summarize(struct bench_cell *c);

/* Whether every selected run of r has finished with a summary. */
bool bench_results_complete(const struct bench_results *r);

json_t *bench_results_to_json(const struct bench_results *r);
/* Writes DIR/results.json (through a temporary file and rename). */
int bench_results_save(const struct bench_results *r, const char *dir, char **cause);

#endif
