/*
 * bench experiments — the table of `jackdaw bench paper`: which published results are
 * reproduced, on which workloads (points) under which scheduler settings (series), at
 * what scale, and the papers' values to set beside ours.
 *
 * An experiment is one entry of bench_experiments[]: its workloads are `jackdaw gen`
 * command lines made by its plan function from the scale, its series are `jackdaw run`
 * options, its published values are data.  Adding the A2WS or PaRSEC tables is adding
 * entries; the runner (paper.c), results.json (results.c) and the page (page.c) read
 * every entry the same way.
 *
 * Pure: no I/O, no clock.  Callers: every file of tools/paper/, tools/cmd/cmd_bench.c and
 * tests/unit/test_bench.c.  Return convention: 0 or a negative errno with *cause an owned
 * sentence.
 */
#ifndef JACKDAW_BENCH_EXPERIMENTS_H
#define JACKDAW_BENCH_EXPERIMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/report/analysis.h" /* enum report_unit, for printing */

/* The figures of one run, as `jackdaw run --json` names them, plus the two that come
 * from `jackdaw bound`. */
enum bench_figure {
    BF_MAKESPAN_S,
    BF_THROUGHPUT_TPS,
    BF_EFFICIENCY,
    BF_IDEAL_S,
    BF_TIME_PER_TASK_S,     /* avg_time_per_task_per_cpu_s */
    BF_LOCALITY_HIT_RATE,
    BF_BYTES_MOVED,
    BF_CACHE_HIT_RATE,
    BF_TASKS_PUSHED,
    BF_BOUND_S,             /* the binding bound of the point's workload on its cluster */
    BF_BOUND_RATIO,         /* bound / makespan: paper 002's "percentage of sub-optimal" */
    BF_COUNT
};

struct bench_figure_info {
    const char *key;        /* results.json key; the summary's key for the run figures */
    const char *label;      /* table heading */
    enum report_unit unit;
    double plot_scale;      /* charts show value x plot_scale ... */
    const char *plot_unit;  /* ... in this unit */
};

const struct bench_figure_info *bench_figure_info(enum bench_figure f);

/* One workload of an experiment, before scaling. */
struct bench_point_def {
    const char *key;        /* "fanin", "L5": results.json and file names */
    const char *label;      /* "Fan-In", "locality 5" */
    const char *shape;      /* the `jackdaw gen` shape */
    double param;           /* shape-specific: the locality of imagestack */
};

/* A point made concrete at a scale: the `jackdaw gen` words after "gen" and before
 * "-o FILE". */
#define BENCH_MAX_WORDS 16
#define BENCH_WORD 32
struct bench_plan {
    uint64_t tasks;         /* tasks in the generated workload (as the plan counts them) */
    char words[BENCH_MAX_WORDS][BENCH_WORD];
    int nwords;
};

/* One configuration of the scheduler. */
struct bench_series {
    const char *key;        /* "flds-cache-on": results.json and trace names */
    const char *label;      /* "FLDS, caching on" */
    const char *args[12];   /* more `jackdaw run` words, NULL-terminated */
    bool flds_tt;           /* add --tt, scaled from the point's ideal time */
};

/* A value the papers report.  relation '=' is a value, '>' a floor ("90%+", "above
 * 80%"), '<' a ceiling ("less than 50%"). */
struct bench_published {
    const char *point;      /* NULL: every point */
    const char *series;     /* NULL: every series */
    enum bench_figure figure;
    char relation;
    double value;
    const char *source;     /* "paper 002 Table 4" */
};

/* A gain the papers report: 1 - makespan(series) / makespan(over) at a point, in %
 * (paper 001's tables: how much sooner A2WS finished than LW or CTWS). */
struct bench_gain {
    const char *point, *series, *over;
    double pct;
    const char *source;
};

/* A ranking the papers report without numbers: items[0] > items[1] > ... on figure.
 * The items are series at the point `fixed`, or, across_points, points under the series
 * `fixed` (NULL: the experiment's first point or series). */
#define BENCH_ORDER_MAX 5
struct bench_ordering {
    bool across_points;
    const char *fixed;
    const char *items[BENCH_ORDER_MAX]; /* NULL-terminated */
    enum bench_figure figure;
    const char *source;
};

struct bench_experiment {
    const char *key;        /* "dags": --only and results.json */
    const char *title;      /* the section heading of the page */
    const char *reproduces; /* "paper 002 Table 4 and Fig. 9b; paper 000 Fig. 10" */
    const char *about;      /* what runs and why these settings are the faithful ones */
    uint32_t nodes, slots;
    const char *bandwidth;  /* emulated per-node link, also Algorithm 1's net_band */
    const char *speeds;     /* --speeds of run and bound (a mix "C2" or a list); NULL: 1 */
    const struct bench_point_def *points;
    size_t npoints;
    const struct bench_series *series;
    size_t nseries;
    /* Makes a point concrete at scale (> 0; 1 is the default size). */
    void (*plan)(const struct bench_experiment *e, const struct bench_point_def *p,
                 double scale, struct bench_plan *out);
    /* FLDS's tt as a fraction of the run's ideal time (tt keeps its proportion to the
     * run as the papers set it); 0 leaves the daemon's default. */
    double tt_fraction;
    enum bench_figure headline;           /* the figure set beside the papers' */
    const enum bench_figure *columns;     /* more figures shown, BF_COUNT-terminated */
    const struct bench_published *published;
    size_t npublished;
    const struct bench_ordering *orderings;
    size_t norderings;
    const struct bench_gain *gains;
    size_t ngains;
    const char *paper_setup; /* the papers' own setup, for the reader to compare */
    /* Series keys whose utilization over time is drawn together (the papers' own
     * pairings), NULL-terminated; NULL: every cell. */
    const char *const *overlay;
};

extern const struct bench_experiment bench_experiments[];
extern const size_t bench_nexperiments;

/* The entry named key, or NULL. */
const struct bench_experiment *bench_experiment_find(const char *key);

/* "dags,allpairs" -> a bit per experiment index.  NULL or "" selects all.  -EINVAL with
 * *cause naming the unknown entry and the known ones. */
int bench_only_parse(const char *list, uint64_t *mask, char **cause);

/* The total slots of an experiment's cluster. */
uint32_t bench_total_slots(const struct bench_experiment *e);

/* FLDS's tt for a run whose ideal time is ideal_s: tt_fraction x ideal, never below
 * 50 ms (the FLDS monitor would fire on every look); 0 when the experiment keeps the
 * default. */
double bench_flds_tt(const struct bench_experiment *e, double ideal_s);

/* How long one `jackdaw run` may take: generous against the slowest configuration
 * (twice the ideal without caching) on a loaded 2-core host, at least a minute; ten
 * minutes when the ideal is unknown (no bound). */
double bench_run_timeout(double ideal_s);

/* The papers' value for a figure of a cell, or NULL. */
const struct bench_published *bench_published_find(const struct bench_experiment *e,
                                                   const char *point, const char *series,
                                                   enum bench_figure f);

/* "= 99.1 %", "≥ 90.0 %", "< 50.0 %" (buf of at least 48 bytes). */
const char *bench_published_text(char *buf, size_t size, const struct bench_published *p);

/* The median of the finite values of v[0..n); NaN when none. */
double bench_median(const double *v, size_t n);

/* Whether v[0] > v[1] > ... > v[n-1] (n >= 2); false when any is not finite. */
bool bench_strictly_decreasing(const double *v, size_t n);

#endif
