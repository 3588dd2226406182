/*
 * bench paper — the runner (see paper.h).
 *
 * File names: DIR/work/EXP-POINT.jsonl (the workload), EXP-POINT.bound.json, and per
 * run EXP-POINT-SERIES-R.json / .err (the child's output); DIR/traces/EXP-POINT-SERIES-R
 * .avro.  Without --keep the work files go when the bench ends; the traces stay.
 */
#include "tools/paper/paper.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/base/sigcatch.h"
#include "core/base/xalloc.h"
#include "tools/paper/page.h"
#include "tools/paper/results.h"
#include "tools/paper/spawn.h"
#include "tools/report/analysis.h"
#include "tools/report/plot.h"

/* gen and bound take well under a second at the default sizes. */
#define TOOL_TIMEOUT_S 120.0
/* Past jackdaw run's own --timeout, for it to stop its cluster and print. */
#define RUN_GRACE_S 30.0

struct runner {
    const struct bench_paper_options *o;
    struct bench_results *r;
    char *work, *traces;    /* owned directories */
    char **made;            /* owned paths of work files, removed at the end */
    size_t nmade, capmade;
    bool failed;            /* something gave no result */
};

static void say(const struct runner *rn, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(const struct runner *rn, const char *fmt, ...)
{
    if (!rn->o->progress)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(rn->o->progress, fmt, ap);
    va_end(ap);
    fflush(rn->o->progress);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *work_file(struct runner *rn, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A path under DIR/work, remembered for the clean-up. */
static char *work_file(struct runner *rn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *name;
    if (vasprintf(&name, fmt, ap) < 0)
        name = NULL;
    va_end(ap);
    char *path = xasprintf("%s/%s", rn->work, name ? name : "?");
    free(name);
    rn->made = xgrow(rn->made, &rn->capmade, rn->nmade + 1, sizeof *rn->made);
    rn->made[rn->nmade++] = xstrdup(path);
    return path;
}

static int make_dir(const char *path, char **cause)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        errno = ENOTDIR;
    }
    int err = errno;
    *cause = xasprintf("cannot create directory '%s': %s", path, strerror(err));
    return -err;
}

/* The first line of a child's standard error that says something, for the page. */
static char *first_complaint(const char *err_path)
{
    FILE *f = fopen(err_path, "r");
    if (!f)
        return NULL;
    char line[512];
    char *found = NULL;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0])
            found = xstrdup(line);
    }
    fclose(f);
    return found;
}

/* Runs `jackdaw WORDS...`; NULL on success (status 0), else an owned sentence. */
static char *run_tool(char **argv, const char *out, const char *err, double timeout_s,
                      struct bench_child *child)
{
    char *cause = NULL;
    if (bench_spawn_self(argv, out, err, timeout_s, child, &cause) < 0)
        return cause;
    if (child->interrupted)
        return xstrdup("interrupted");
    if (child->timed_out)
        return xasprintf("jackdaw %s ran past %.0f s and was stopped", argv[1], timeout_s);
    if (child->status != 0) {
        char *why = first_complaint(err);
        char *s = xasprintf("jackdaw %s exited %d%s%s", argv[1], child->status,
                            why ? ": " : "", why ? why : "");
        free(why);
        return s;
    }
    return NULL;
}

static double json_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* ---- one workload --------------------------------------------------------------------- */

static bool make_workload(struct runner *rn, const struct bench_exp *x, struct bench_point *pt,
                          const char *wl)
{
    char *argv[BENCH_MAX_WORDS + 6];
    int n = 0;
    argv[n++] = "jackdaw";
    argv[n++] = "gen";
    for (int i = 0; i < pt->plan.nwords; i++)
        argv[n++] = pt->plan.words[i];
    argv[n++] = "-o";
    argv[n++] = (char *)wl;
    argv[n] = NULL;
    char *out = work_file(rn, "%s-%s.gen.out", x->e->key, pt->def->key);
    char *err = work_file(rn, "%s-%s.gen.err", x->e->key, pt->def->key);
    struct bench_child child;
    pt->error = run_tool(argv, out, err, TOOL_TIMEOUT_S, &child);
    free(out);
    free(err);
    return pt->error == NULL;
}

static void compute_bound(struct runner *rn, const struct bench_exp *x, struct bench_point *pt,
                          const char *wl)
{
    char nodes[16], slots[16];
    snprintf(nodes, sizeof nodes, "%u", x->e->nodes);
    snprintf(slots, sizeof slots, "%u", x->e->slots);
    char *argv[] = {"jackdaw", "bound", (char *)wl, "--nodes", nodes, "--slots", slots,
                    "--bandwidth", (char *)x->e->bandwidth, "--json", NULL, NULL, NULL};
    if (x->e->speeds) {
        argv[10] = "--speeds";
        argv[11] = (char *)x->e->speeds;
    }
    char *out = work_file(rn, "%s-%s.bound.json", x->e->key, pt->def->key);
    char *err = work_file(rn, "%s-%s.bound.err", x->e->key, pt->def->key);
    struct bench_child child;
    char *why = run_tool(argv, out, err, TOOL_TIMEOUT_S, &child);
    json_t *b = why ? NULL : json_load_file(out, 0, NULL);
    if (!why && !b)
        why = xasprintf("jackdaw bound printed no JSON (%s)", out);
    if (why) {
        say(rn, "    no bound: %s\n", why);
        free(why);
        rn->failed = true;
    } else {
        const char *binding = json_string_value(json_object_get(b, "binding"));
        pt->bound.binding = binding ? xstrdup(binding) : NULL;
        pt->bound.binding_s = json_num(b, "binding_s");
        pt->bound.suboptimal_s = json_num(b, "suboptimal_s");
        pt->bound.capacity_s = json_num(b, "capacity_s");
        pt->bound.critical_path_s = json_num(b, "critical_path_s");
        pt->bound.ok = isfinite(pt->bound.binding_s);
    }
    json_decref(b);
    free(out);
    free(err);
}

/* ---- one run -------------------------------------------------------------------------- */

static char **words_dup(char *const *w, int n)
{
    char **a = xcalloc((size_t)n + 1, sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = xstrdup(w[i]);
    return a;
}

/* The settings of a cell: every `jackdaw run` word that shapes the schedule (not where
 * the files go).  The words point into the struct or the static table. */
struct settings {
    char nodes[16], slots[16], tt[32];
    char *w[32];
    int n;
};

static void settings(const struct bench_exp *x, const struct bench_point *pt,
                     const struct bench_series *s, struct settings *st)
{
    snprintf(st->nodes, sizeof st->nodes, "%u", x->e->nodes);
    snprintf(st->slots, sizeof st->slots, "%u", x->e->slots);
    int n = 0;
    st->w[n++] = "--nodes";
    st->w[n++] = st->nodes;
    st->w[n++] = "--slots";
    st->w[n++] = st->slots;
    st->w[n++] = "--bandwidth";
    st->w[n++] = (char *)x->e->bandwidth;
    if (x->e->speeds) {
        st->w[n++] = "--speeds";
        st->w[n++] = (char *)x->e->speeds;
    }
    for (int i = 0; s->args[i] && n < 32 - 2; i++)
        st->w[n++] = (char *)s->args[i];
    double tt = s->flds_tt && pt->bound.ok ? bench_flds_tt(x->e, pt->bound.capacity_s) : 0;
    if (tt > 0) {
        snprintf(st->tt, sizeof st->tt, "%.3g", tt);
        st->w[n++] = "--tt";
        st->w[n++] = st->tt;
    }
    st->n = n;
}

static void read_trace(struct bench_run *run, const char *path, bool keep_bins)
{
    run->utilization = NAN;
    for (int c = 0; c < REPORT_LOST_COUNT; c++)
        run->lost[c] = NAN;
    struct report_analysis *a;
    char *cause = NULL;
    struct report_options ro = {.bins = REPORT_DEFAULT_BINS};
    if (report_analyze(path, &ro, &a, &cause) < 0) {
        free(cause);
        return;
    }
    run->utilization = a->figures[RF_UTILIZATION];
    for (int c = 0; c < REPORT_LOST_COUNT; c++)
        run->lost[c] = a->figures[RF_LOST_RAMP_UP_S + c];
    if (keep_bins && a->nbins) {
        run->nbins = a->nbins;
        run->bin_t = xcalloc(a->nbins, sizeof *run->bin_t);
        run->bin_u = xcalloc(a->nbins, sizeof *run->bin_u);
        for (size_t b = 0; b < a->nbins; b++) {
            run->bin_t[b] = a->bins[b].t_s;
            run->bin_u[b] = a->bins[b].utilization;
        }
    }
    report_analysis_destroy(a);
}

static void read_summary(struct bench_run *run, const struct bench_point *pt, const char *out,
                         const char *err)
{
    for (int f = 0; f < BF_COUNT; f++)
        run->fig[f] = NAN;
    json_t *j = json_load_file(out, 0, NULL);
    if (!json_is_object(j)) {
        if (!run->error) {
            char *why = first_complaint(err);
            run->error = why ? why : xasprintf("jackdaw run exited %d with no summary",
                                               run->exit_status);
        }
        json_decref(j);
        return;
    }
    for (int f = 0; f < BF_COUNT; f++)
        if (f != BF_BOUND_S && f != BF_BOUND_RATIO)
            run->fig[f] = json_num(j, bench_figure_info(f)->key);
    run->fig[BF_BOUND_S] = pt->bound.binding_s;
    double mk = run->fig[BF_MAKESPAN_S];
    run->fig[BF_BOUND_RATIO] = mk > 0 ? pt->bound.binding_s / mk : NAN;
    double done = json_num(j, "tasks_done"), tasks = json_num(j, "tasks");
    run->ok = run->exit_status == 0 && isfinite(mk) && done == tasks;
    if (!run->ok && !run->error)
        run->error = xasprintf("jackdaw run exited %d, %.0f of %.0f tasks done",
                               run->exit_status, done, tasks);
    json_decref(j);
}

static void one_run(struct runner *rn, const struct bench_exp *x, struct bench_point *pt,
                    struct bench_cell *c, const char *wl, unsigned k)
{
    const struct bench_series *s = c->series;
    char tag[160];
    snprintf(tag, sizeof tag, "%s-%s-%s-%u", x->e->key, pt->def->key, s->key, k + 1);
    char timeout[32];
    struct settings set;
    settings(x, pt, s, &set);
    if (!c->run_args)
        c->run_args = words_dup(set.w, set.n);
    double limit = bench_run_timeout(pt->bound.ok ? pt->bound.capacity_s : NAN);
    snprintf(timeout, sizeof timeout, "%.0f", limit);
    char *trace_rel = xasprintf("traces/%s.avro", tag);
    char *trace = xasprintf("%s/%s", rn->o->dir, trace_rel);
    char *old = xasprintf("%s.old", trace);
    /* jackdaw run keeps an existing trace as .old: a rerun into the same DIR replaces */
    unlink(trace);
    unlink(old);
    free(old);
    char *out = work_file(rn, "%s.json", tag);
    char *err = work_file(rn, "%s.err", tag);
    char *keep = rn->o->keep ? xasprintf("%s/%s.cluster", rn->work, tag) : NULL;

    char *argv[64];
    int n = 0;
    argv[n++] = "jackdaw";
    argv[n++] = "run";
    argv[n++] = (char *)wl;
    for (int i = 0; i < set.n; i++)
        argv[n++] = set.w[i];
    argv[n++] = "--json";
    argv[n++] = "--quiet";
    argv[n++] = "--timeout";
    argv[n++] = timeout;
    argv[n++] = "--trace";
    argv[n++] = trace;
    if (keep) {
        argv[n++] = "--keep";
        argv[n++] = keep;
    }
    argv[n] = NULL;

    c->runs = xrealloc(c->runs, (c->nruns + 1) * sizeof *c->runs);
    struct bench_run *run = &c->runs[c->nruns++];
    memset(run, 0, sizeof *run);
    struct bench_child child;
    char *cause = NULL;
    if (bench_spawn_self(argv, out, err, limit + RUN_GRACE_S, &child, &cause) < 0) {
        run->error = cause;
        run->exit_status = -1;
    } else {
        run->exit_status = child.status;
        run->wall_s = child.wall_s;
        run->timed_out = child.timed_out;
        if (child.timed_out)
            run->error = xasprintf("stopped after %.0f s", limit + RUN_GRACE_S);
        else if (child.interrupted)
            run->error = xstrdup("interrupted");
    }
    read_summary(run, pt, out, err);
    if (access(trace, R_OK) == 0) {
        run->trace = trace_rel;
        trace_rel = NULL;
        read_trace(run, trace, k == 0);
    }
    if (!run->ok)
        rn->failed = true;

    char a[48];
    const struct bench_figure_info *hi = bench_figure_info(x->e->headline);
    /* The headline figure, and the makespan besides when it is another. */
    if (run->ok && x->e->headline == BF_MAKESPAN_S)
        say(rn, "    %s, run %u/%u: %s %s (%.1f s)\n", s->label, k + 1, rn->o->runs, hi->label,
            bench_figure_text(a, sizeof a, x->e->headline, run->fig[x->e->headline]),
            run->wall_s);
    else if (run->ok)
        say(rn, "    %s, run %u/%u: makespan %.2f s, %s %s (%.1f s)\n", s->label, k + 1,
            rn->o->runs, run->fig[BF_MAKESPAN_S], hi->label,
            bench_figure_text(a, sizeof a, x->e->headline, run->fig[x->e->headline]),
            run->wall_s);
    else
        say(rn, "    %s, run %u/%u: no result: %s\n", s->label, k + 1, rn->o->runs,
            run->error ? run->error : "?");
    free(trace_rel);
    free(trace);
    free(out);
    free(err);
    free(keep);
}

/* ---- the whole bench ------------------------------------------------------------------ */

static void one_experiment(struct runner *rn, struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    say(rn, "bench paper: %s (%s): %zu workload(s) x %zu configuration(s) x %u run(s), "
            "%u nodes x %u slots, %s\n",
        e->key, e->reproduces, e->npoints, e->nseries, rn->o->runs, e->nodes, e->slots,
        e->bandwidth);
    for (size_t p = 0; p < e->npoints && !sigcatch_pending(); p++) {
        struct bench_point *pt = &x->points[p];
        char *wl = work_file(rn, "%s-%s.jsonl", e->key, pt->def->key);
        if (!make_workload(rn, x, pt, wl)) {
            say(rn, "  %s: no workload: %s\n", pt->def->label, pt->error);
            rn->failed = true;
            free(wl);
            continue;
        }
        compute_bound(rn, x, pt, wl);
        say(rn, "  %s: %llu tasks, bound %.3f s (%s)\n", pt->def->label,
            (unsigned long long)pt->plan.tasks, pt->bound.binding_s,
            pt->bound.binding ? pt->bound.binding : "none");
        for (unsigned k = 0; k < rn->o->runs && !sigcatch_pending(); k++)
            for (size_t s = 0; s < e->nseries && !sigcatch_pending(); s++)
                one_run(rn, x, pt, &pt->cells[s], wl, k);
        for (size_t s = 0; s < e->nseries; s++)
            bench_cell_summarize(&pt->cells[s]);
        free(wl);
    }
    x->done = !sigcatch_pending();
}

static int write_out(struct runner *rn, double start, char **cause)
{
    rn->r->wall_s = now_s() - start;
    rn->r->interrupted = sigcatch_pending() != 0;
    int rc = bench_results_save(rn->r, rn->o->dir, cause);
    if (rc == 0)
        rc = bench_page_write(rn->r, rn->o->dir, cause);
    return rc;
}

int bench_paper_run(const struct bench_paper_options *o, char **cause)
{
    *cause = NULL;
    struct runner rn = {.o = o};
    int rc = make_dir(o->dir, cause);
    if (rc < 0)
        return rc;
    rn.work = xasprintf("%s/work", o->dir);
    rn.traces = xasprintf("%s/traces", o->dir);
    if ((rc = make_dir(rn.work, cause)) < 0 || (rc = make_dir(rn.traces, cause)) < 0) {
        free(rn.work);
        free(rn.traces);
        return rc;
    }
    double start = now_s();
    rn.r = bench_results_create(o->mask, o->scale, o->runs);
    rn.r->started = time(NULL);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    rn.r->cpus = cpus > 0 ? (int)cpus : 0;
    double load;
    if (getloadavg(&load, 1) == 1)
        rn.r->loadavg = load;
    rn.r->gnuplot = plot_gnuplot_available(NULL);

    for (size_t i = 0; i < rn.r->n && !sigcatch_pending(); i++) {
        one_experiment(&rn, &rn.r->exps[i]);
        if ((rc = write_out(&rn, start, cause)) < 0)
            break;
    }
    if (rc == 0)
        rc = write_out(&rn, start, cause);
    if (rc == 0)
        say(&rn, "bench paper: wrote %s/index.html and %s/results.json in %.0f s%s\n", o->dir,
            o->dir, rn.r->wall_s, sigcatch_pending() ? " (interrupted)" : "");

    if (!o->keep) {
        for (size_t i = 0; i < rn.nmade; i++)
            unlink(rn.made[i]);
        rmdir(rn.work); /* fails, harmlessly, when it holds files not ours */
    }
    for (size_t i = 0; i < rn.nmade; i++)
        free(rn.made[i]);
    free(rn.made);
    free(rn.work);
    free(rn.traces);
    bench_results_destroy(rn.r);
    if (rc < 0)
        return rc;
    if (sigcatch_pending())
        return -EINTR;
    return rn.failed ? BENCH_SOME_FAILED : BENCH_OK;
}
