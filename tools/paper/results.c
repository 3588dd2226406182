/*
 * bench results — the model and results.json (see results.h).
 */
#include "tools/paper/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/xalloc.h"

struct bench_results *bench_results_create(uint64_t mask, double scale, unsigned runs)
{
    struct bench_results *r = xcalloc(1, sizeof *r);
    r->scale = scale;
    r->runs = runs;
    r->loadavg = NAN;
    r->exps = xcalloc(bench_nexperiments, sizeof *r->exps);
    for (size_t i = 0; i < bench_nexperiments; i++) {
        if (!(mask & (UINT64_C(1) << i)))
            continue;
        const struct bench_experiment *e = &bench_experiments[i];
        struct bench_exp *x = &r->exps[r->n++];
        x->e = e;
        x->points = xcalloc(e->npoints, sizeof *x->points);
        for (size_t p = 0; p < e->npoints; p++) {
            struct bench_point *pt = &x->points[p];
            pt->def = &e->points[p];
            e->plan(e, pt->def, scale, &pt->plan);
            pt->bound.binding_s = pt->bound.suboptimal_s = pt->bound.capacity_s =
                pt->bound.critical_path_s = NAN;
            pt->cells = xcalloc(e->nseries, sizeof *pt->cells);
            for (size_t s = 0; s < e->nseries; s++) {
                pt->cells[s].series = &e->series[s];
                for (int f = 0; f < BF_COUNT; f++)
                    pt->cells[s].median[f] = NAN;
            }
        }
    }
    return r;
}

static void run_fini(struct bench_run *run)
{
    free(run->trace);
    free(run->error);
    free(run->bin_t);
    free(run->bin_u);
}

void bench_results_destroy(struct bench_results *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        struct bench_exp *x = &r->exps[i];
        for (size_t p = 0; p < x->e->npoints; p++) {
            struct bench_point *pt = &x->points[p];
            for (size_t s = 0; s < x->e->nseries; s++) {
                struct bench_cell *c = &pt->cells[s];
                for (size_t k = 0; k < c->nruns; k++)
                    run_fini(&c->runs[k]);
                free(c->runs);
                for (char **a = c->run_args; a && *a; a++)
                    free(*a);
                free(c->run_args);
            }
            free(pt->cells);
            free(pt->error);
            free(pt->bound.binding);
        }
        free(x->points);
    }
    free(r->exps);
    free(r);
}

const struct bench_cell *bench_cell_find(const struct bench_exp *x, const char *p,
                                         const char *s)
{
    for (size_t i = 0; i < x->e->npoints; i++) {
        if (p && strcmp(x->points[i].def->key, p) != 0)
            continue;
        for (size_t j = 0; j < x->e->nseries; j++)
            if (!s || strcmp(x->points[i].cells[j].series->key, s) == 0)
                return &x->points[i].cells[j];
        return NULL;
    }
    return NULL;
}

void bench_ordering_values(const struct bench_exp *x, const struct bench_ordering *o,
                           double values[BENCH_ORDER_MAX], size_t *n)
{
    *n = 0;
    const char *fixed = o->fixed ? o->fixed
                        : o->across_points ? x->e->series[0].key
                                           : x->e->points[0].key;
    for (size_t i = 0; i < BENCH_ORDER_MAX && o->items[i]; i++) {
        const struct bench_cell *c = o->across_points ? bench_cell_find(x, o->items[i], fixed)
                                                      : bench_cell_find(x, fixed, o->items[i]);
        values[(*n)++] = c ? c->median[o->figure] : NAN;
    }
}

void bench_cell_summarize(struct bench_cell *c)
{
    double *v = xcalloc(c->nruns ? c->nruns : 1, sizeof *v);
    for (int f = 0; f < BF_COUNT; f++) {
        size_t k = 0;
        for (size_t i = 0; i < c->nruns; i++)
            if (c->runs[i].ok)
                v[k++] = c->runs[i].fig[f];
        c->median[f] = bench_median(v, k);
    }
    free(v);
}

bool bench_results_complete(const struct bench_results *r)
{
    if (r->interrupted)
        return false;
    for (size_t i = 0; i < r->n; i++) {
        const struct bench_exp *x = &r->exps[i];
        if (!x->done)
            return false;
        for (size_t p = 0; p < x->e->npoints; p++)
            for (size_t s = 0; s < x->e->nseries; s++) {
                const struct bench_cell *c = &x->points[p].cells[s];
                if (c->nruns < r->runs)
                    return false;
                for (size_t k = 0; k < c->nruns; k++)
                    if (!c->runs[k].ok)
                        return false;
            }
    }
    return true;
}

/* ---- JSON ----------------------------------------------------------------------------- */

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *figures(const double *fig)
{
    json_t *o = json_object();
    for (int f = 0; f < BF_COUNT; f++)
        json_object_set_new(o, bench_figure_info(f)->key, num(fig[f]));
    return o;
}

static json_t *run_json(const struct bench_run *run)
{
    json_t *o = json_object();
    json_object_set_new(o, "ok", json_boolean(run->ok));
    json_object_set_new(o, "exit_status", json_integer(run->exit_status));
    json_object_set_new(o, "timed_out", json_boolean(run->timed_out));
    json_object_set_new(o, "wall_s", num(run->wall_s));
    json_object_set_new(o, "trace", str(run->trace));
    json_object_set_new(o, "error", str(run->error));
    json_object_set_new(o, "figures", figures(run->fig));
    json_object_set_new(o, "utilization", num(run->utilization));
    json_t *lost = json_object();
    for (int c = 0; c < REPORT_LOST_COUNT; c++)
        json_object_set_new(lost, report_lost_cause_key(c), num(run->lost[c]));
    json_object_set_new(o, "lost_core_s", lost);
    return o;
}

static json_t *cell_json(const struct bench_exp *x, const struct bench_point *pt,
                         const struct bench_cell *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "series", json_string(c->series->key));
    json_object_set_new(o, "label", json_string(c->series->label));
    json_t *args = json_array();
    for (char **a = c->run_args; a && *a; a++)
        json_array_append_new(args, json_string(*a));
    json_object_set_new(o, "run_args", args);
    json_object_set_new(o, "median", figures(c->median));
    json_t *pub = json_array();
    for (int f = 0; f < BF_COUNT; f++) {
        const struct bench_published *p =
            bench_published_find(x->e, pt->def->key, c->series->key, f);
        if (!p)
            continue;
        char rel[2] = {p->relation, 0};
        json_array_append_new(pub, json_pack("{s:s, s:s, s:f, s:s, s:o}", "figure",
                                             bench_figure_info(f)->key, "relation", rel,
                                             "value", p->value, "source", p->source,
                                             "measured", num(c->median[f])));
    }
    json_object_set_new(o, "published", pub);
    json_t *runs = json_array();
    for (size_t k = 0; k < c->nruns; k++)
        json_array_append_new(runs, run_json(&c->runs[k]));
    json_object_set_new(o, "runs", runs);
    return o;
}

static json_t *point_json(const struct bench_exp *x, const struct bench_point *pt)
{
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(pt->def->key));
    json_object_set_new(o, "label", json_string(pt->def->label));
    json_object_set_new(o, "tasks", json_integer((json_int_t)pt->plan.tasks));
    json_t *gen = json_array();
    json_array_append_new(gen, json_string("gen"));
    for (int i = 0; i < pt->plan.nwords; i++)
        json_array_append_new(gen, json_string(pt->plan.words[i]));
    json_object_set_new(o, "gen", gen);
    json_object_set_new(o, "error", str(pt->error));
    json_t *b = json_object();
    json_object_set_new(b, "binding", str(pt->bound.binding));
    json_object_set_new(b, "binding_s", num(pt->bound.binding_s));
    json_object_set_new(b, "suboptimal_s", num(pt->bound.suboptimal_s));
    json_object_set_new(b, "capacity_s", num(pt->bound.capacity_s));
    json_object_set_new(b, "critical_path_s", num(pt->bound.critical_path_s));
    json_object_set_new(o, "bound", b);
    json_t *cells = json_array();
    for (size_t s = 0; s < x->e->nseries; s++)
        json_array_append_new(cells, cell_json(x, pt, &pt->cells[s]));
    json_object_set_new(o, "cells", cells);
    return o;
}

static json_t *exp_json(const struct bench_exp *x)
{
    const struct bench_experiment *e = x->e;
    json_t *o = json_object();
    json_object_set_new(o, "key", json_string(e->key));
    json_object_set_new(o, "title", json_string(e->title));
    json_object_set_new(o, "reproduces", json_string(e->reproduces));
    json_object_set_new(o, "about", json_string(e->about));
    json_object_set_new(o, "paper_setup", json_string(e->paper_setup));
    json_object_set_new(o, "nodes", json_integer(e->nodes));
    json_object_set_new(o, "slots", json_integer(e->slots));
    json_object_set_new(o, "bandwidth", json_string(e->bandwidth));
    json_object_set_new(o, "tt_fraction", json_real(e->tt_fraction));
    json_object_set_new(o, "headline", json_string(bench_figure_info(e->headline)->key));
    json_object_set_new(o, "done", json_boolean(x->done));
    json_t *points = json_array();
    for (size_t p = 0; p < e->npoints; p++)
        json_array_append_new(points, point_json(x, &x->points[p]));
    json_object_set_new(o, "points", points);
    json_t *ords = json_array();
    for (size_t i = 0; i < e->norderings; i++) {
        const struct bench_ordering *ord = &e->orderings[i];
        double v[BENCH_ORDER_MAX];
        size_t n;
        bench_ordering_values(x, ord, v, &n);
        json_t *items = json_array(), *values = json_array();
        for (size_t k = 0; k < n; k++) {
            json_array_append_new(items, json_string(ord->items[k]));
            json_array_append_new(values, num(v[k]));
        }
        json_array_append_new(ords, json_pack("{s:s, s:o, s:o, s:b, s:s}", "figure",
                                              bench_figure_info(ord->figure)->key, "items",
                                              items, "values", values, "holds",
                                              bench_strictly_decreasing(v, n), "source",
                                              ord->source));
    }
    json_object_set_new(o, "orderings", ords);
    return o;
}

json_t *bench_results_to_json(const struct bench_results *r)
{
    char started[32] = "";
    struct tm tm;
    if (gmtime_r(&r->started, &tm))
        strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *o = json_object();
    json_object_set_new(o, "format", json_string("jackdaw-bench-paper"));
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "jackdaw", json_string("0.1"));
    json_object_set_new(o, "started_utc", json_string(started));
    json_object_set_new(o, "wall_s", num(r->wall_s));
    json_object_set_new(o, "complete", json_boolean(bench_results_complete(r)));
    json_object_set_new(o, "interrupted", json_boolean(r->interrupted));
    json_object_set_new(o, "scale", json_real(r->scale));
    json_object_set_new(o, "runs", json_integer(r->runs));
    json_object_set_new(o, "host", json_pack("{s:i, s:o}", "cpus", r->cpus, "loadavg_1m",
                                             num(r->loadavg)));
    json_object_set_new(o, "gnuplot", json_boolean(r->gnuplot));
    json_t *exps = json_array();
    for (size_t i = 0; i < r->n; i++)
        json_array_append_new(exps, exp_json(&r->exps[i]));
    json_object_set_new(o, "experiments", exps);
    return o;
}

int bench_results_save(const struct bench_results *r, const char *dir, char **cause)
{
    char *path = xasprintf("%s/results.json", dir);
    char *tmp = xasprintf("%s/.results.json.tmp", dir);
    json_t *o = bench_results_to_json(r);
    int rc = json_dump_file(o, tmp, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) == 0 ? 0 : -EIO;
    json_decref(o);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0) {
        *cause = xasprintf("cannot write '%s': %s", path, strerror(-rc));
        unlink(tmp);
    }
    free(path);
    free(tmp);
    return rc;
}
