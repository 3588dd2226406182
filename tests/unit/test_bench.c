/*
 * test_bench — the pure parts of `jackdaw bench paper` (tools/paper/): the table of
 * experiments holds together (every published value and ordering names a workload and a
 * series that exist), the scaling arithmetic gives the sizes the shell benchmarks use at
 * scale 1 and shrinks as documented, tt and timeouts follow the ideal time, --only
 * parses, medians and orderings, and a results set filled by hand comes out in
 * results.json under its stable keys and on the page with every experiment's heading,
 * also without gnuplot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/base/xalloc.h"
#include "tools/paper/experiments.h"
#include "tools/paper/page.h"
#include "tools/paper/results.h"

static bool has_point(const struct bench_experiment *e, const char *key)
{
    for (size_t i = 0; i < e->npoints; i++)
        if (strcmp(e->points[i].key, key) == 0)
            return true;
    return false;
}

static bool has_series(const struct bench_experiment *e, const char *key)
{
    for (size_t i = 0; i < e->nseries; i++)
        if (strcmp(e->series[i].key, key) == 0)
            return true;
    return false;
}

static void test_table_holds_together(void **state)
{
    (void)state;
    assert_true(bench_nexperiments >= 3);
    assert_true(bench_nexperiments <= 64); /* --only's mask */
    for (size_t i = 0; i < bench_nexperiments; i++) {
        const struct bench_experiment *e = &bench_experiments[i];
        assert_ptr_equal(bench_experiment_find(e->key), e);
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal(bench_experiments[j].key, e->key);
            assert_string_not_equal(bench_experiments[j].title, e->title);
        }
        assert_true(e->npoints >= 1 && e->nseries >= 1);
        assert_true(e->nodes >= 1 && e->slots >= 1);
        assert_non_null(e->plan);
        assert_true(e->headline < BF_COUNT);
        for (size_t p = 0; p < e->npoints; p++)
            for (size_t q = 0; q < p; q++)
                assert_string_not_equal(e->points[p].key, e->points[q].key);
        for (size_t s = 0; s < e->nseries; s++)
            for (size_t q = 0; q < s; q++)
                assert_string_not_equal(e->series[s].key, e->series[q].key);
        size_t nc = 0;
        while (e->columns[nc] != BF_COUNT)
            assert_true(++nc < BF_COUNT);
        for (size_t k = 0; k < e->npublished; k++) {
            const struct bench_published *p = &e->published[k];
            assert_true(!p->point || has_point(e, p->point));
            assert_true(!p->series || has_series(e, p->series));
            assert_true(p->relation == '=' || p->relation == '<' || p->relation == '>');
            assert_non_null(p->source);
        }
        for (size_t k = 0; k < e->norderings; k++) {
            const struct bench_ordering *o = &e->orderings[k];
            size_t n = 0;
            for (; n < BENCH_ORDER_MAX && o->items[n]; n++)
                assert_true(o->across_points ? has_point(e, o->items[n])
                                             : has_series(e, o->items[n]));
            assert_true(n >= 2);
            if (o->fixed)
                assert_true(o->across_points ? has_series(e, o->fixed) : has_point(e, o->fixed));
        }
        for (const char *const *k = e->overlay; k && *k; k++)
            assert_true(has_series(e, *k));
    }
    assert_null(bench_experiment_find("nope"));
}

/* The gen words as one string. */
static void words(const struct bench_plan *p, char *out, size_t size)
{
    out[0] = '\0';
    for (int i = 0; i < p->nwords; i++) {
        if (i)
            strncat(out, " ", size - strlen(out) - 1);
        strncat(out, p->words[i], size - strlen(out) - 1);
    }
}

static struct bench_plan plan(const char *exp, size_t point, double scale)
{
    const struct bench_experiment *e = bench_experiment_find(exp);
    assert_non_null(e);
    struct bench_plan p;
    e->plan(e, &e->points[point], scale, &p);
    return p;
}

static void test_scaling(void **state)
{
    (void)state;
    char w[512];
    /* scale 1: the sizes of tools/bench/dags.sh, allpairs.sh and imagestack.sh */
    struct bench_plan p = plan("dags", 0, 1);
    assert_int_equal(p.tasks, 8000); /* 250 per slot x 32 slots */
    words(&p, w, sizeof w);
    assert_string_equal(w, "bot --table3 --tasks 8000 --data-scale 0.1");
    p = plan("dags", 3, 0.05);
    assert_int_equal(p.tasks, 13 * 32); /* 12.5 per slot rounds to 13 */
    words(&p, w, sizeof w);
    assert_string_equal(w, "fanin --table3 --tasks 416 --data-scale 0.1");
    assert_int_equal(plan("dags", 0, 1e-6).tasks, 32); /* never below a task per slot */

    p = plan("allpairs", 0, 1);
    assert_int_equal(p.tasks, 1600);
    words(&p, w, sizeof w);
    assert_string_equal(w, "allpairs -n 40 --file-bytes 2400000 --duration-s 0.1");
    p = plan("allpairs", 0, 0.1); /* tasks scale as n^2: 40 x sqrt(0.1) = 12.6 */
    assert_int_equal(p.tasks, 169);
    assert_int_equal(plan("allpairs", 0, 0.25).tasks, 400);
    assert_int_equal(plan("allpairs", 0, 1e-6).tasks, 4);

    p = plan("imagestack", 0, 1);
    assert_int_equal(p.tasks, 3001); /* and the aggregation task */
    words(&p, w, sizeof w);
    assert_string_equal(w, "imagestack --tasks 3000 --locality 1");
    p = plan("imagestack", 2, 0.1);
    words(&p, w, sizeof w);
    assert_string_equal(w, "imagestack --tasks 300 --locality 30");
    /* gen needs at least as many tasks as the locality */
    p = plan("imagestack", 2, 1e-6);
    words(&p, w, sizeof w);
    assert_string_equal(w, "imagestack --tasks 30 --locality 30");
}

static void test_tt_and_timeout(void **state)
{
    (void)state;
    const struct bench_experiment *dags = bench_experiment_find("dags");
    const struct bench_experiment *ap = bench_experiment_find("allpairs");
    const struct bench_experiment *is = bench_experiment_find("imagestack");
    /* the papers' proportions: 10 s of a 50 s run, 20 s near the end of ~125 s (0.5 s
     * of 5 s in allpairs.sh) */
    assert_float_equal(bench_flds_tt(dags, 12.5), 2.5, 1e-9);
    assert_float_equal(bench_flds_tt(ap, 5), 0.5, 1e-9);
    assert_float_equal(bench_flds_tt(ap, 0.1), 0.05, 1e-9); /* the floor */
    assert_float_equal(bench_flds_tt(is, 15), 0, 0);        /* the daemon's default */
    assert_float_equal(bench_flds_tt(dags, NAN), 0, 0);
    assert_float_equal(bench_run_timeout(0), 60, 0);
    assert_float_equal(bench_run_timeout(NAN), 600, 0);
    assert_float_equal(bench_run_timeout(12), 180, 1e-9);
}

static void test_only(void **state)
{
    (void)state;
    uint64_t mask;
    char *cause = NULL;
    assert_int_equal(bench_only_parse(NULL, &mask, &cause), 0);
    assert_int_equal(mask, (UINT64_C(1) << bench_nexperiments) - 1);
    assert_int_equal(bench_only_parse("", &mask, &cause), 0);
    assert_int_equal(mask, (UINT64_C(1) << bench_nexperiments) - 1);
    assert_int_equal(bench_only_parse("dags", &mask, &cause), 0);
    assert_int_equal(mask, 1);
    assert_int_equal(bench_only_parse("imagestack,dags", &mask, &cause), 0);
    assert_int_equal(mask, 5);
    assert_int_equal(bench_only_parse("dags,nope", &mask, &cause), -EINVAL);
    assert_non_null(strstr(cause, "'nope'"));
    assert_non_null(strstr(cause, "allpairs"));
    free(cause);
    cause = NULL;
    assert_int_equal(bench_only_parse(",", &mask, &cause), -EINVAL);
    free(cause);
}

static void test_median_and_order(void **state)
{
    (void)state;
    double a[] = {3, 1, 2};
    assert_float_equal(bench_median(a, 3), 2, 0);
    double b[] = {1, NAN, 4, 3, 2};
    assert_float_equal(bench_median(b, 5), 2.5, 0);
    assert_true(isnan(bench_median(b, 0)));
    double c[] = {NAN};
    assert_true(isnan(bench_median(c, 1)));

    double d[] = {0.9, 0.8, 0.7};
    assert_true(bench_strictly_decreasing(d, 3));
    double e[] = {0.9, 0.9, 0.7};
    assert_false(bench_strictly_decreasing(e, 3));
    double f[] = {0.9, NAN};
    assert_false(bench_strictly_decreasing(f, 2));
    assert_false(bench_strictly_decreasing(d, 1));
}

static void test_published(void **state)
{
    (void)state;
    const struct bench_experiment *dags = bench_experiment_find("dags");
    const struct bench_experiment *is = bench_experiment_find("imagestack");
    char buf[48];
    const struct bench_published *p = bench_published_find(dags, "fanin", "flds", BF_BOUND_RATIO);
    assert_non_null(p);
    assert_string_equal(bench_published_text(buf, sizeof buf, p), "90.6 %");
    p = bench_published_find(dags, "bot", "flds", BF_EFFICIENCY);
    assert_string_equal(bench_published_text(buf, sizeof buf, p), "≥ 90.0 %");
    assert_null(bench_published_find(dags, "fanin", "flds", BF_EFFICIENCY));
    p = bench_published_find(is, "L1", "mdl", BF_TIME_PER_TASK_S);
    assert_string_equal(bench_published_text(buf, sizeof buf, p), "167 ms");
    assert_null(bench_published_find(is, "L1", "flds", BF_TIME_PER_TASK_S));
    assert_non_null(bench_published_find(is, "L5", "mdl", BF_EFFICIENCY)); /* any point */
    assert_string_equal(bench_figure_text(buf, sizeof buf, BF_TIME_PER_TASK_S, 0.1624),
                        "162.4 ms");
    assert_string_equal(bench_figure_text(buf, sizeof buf, BF_BOUND_RATIO, 0.994), "99.4 %");
    assert_string_equal(bench_figure_text(buf, sizeof buf, BF_BOUND_RATIO, NAN), "–");
}

/* A run as if `jackdaw run` had reported it. */
static void fake_run(struct bench_cell *c, double makespan, double bound)
{
    c->runs = xrealloc(c->runs, (c->nruns + 1) * sizeof *c->runs);
    struct bench_run *r = &c->runs[c->nruns++];
    memset(r, 0, sizeof *r);
    r->ok = true;
    for (int f = 0; f < BF_COUNT; f++)
        r->fig[f] = NAN;
    r->fig[BF_MAKESPAN_S] = makespan;
    r->fig[BF_EFFICIENCY] = bound / makespan;
    r->fig[BF_THROUGHPUT_TPS] = 100 / makespan;
    r->fig[BF_TIME_PER_TASK_S] = makespan / 10;
    r->fig[BF_BOUND_S] = bound;
    r->fig[BF_BOUND_RATIO] = bound / makespan;
    r->utilization = 0.9;
    for (int k = 0; k < REPORT_LOST_COUNT; k++)
        r->lost[k] = k;
    r->nbins = 4;
    r->bin_t = xcalloc(4, sizeof *r->bin_t);
    r->bin_u = xcalloc(4, sizeof *r->bin_u);
    for (size_t b = 0; b < 4; b++) {
        r->bin_t[b] = (double)b * makespan / 4;
        r->bin_u[b] = 0.9;
    }
    r->trace = xstrdup("traces/x.avro");
}

static struct bench_results *filled(void)
{
    struct bench_results *r = bench_results_create(UINT64_MAX, 0.5, 3);
    r->started = 0;
    r->wall_s = 12;
    r->cpus = 2;
    for (size_t i = 0; i < r->n; i++) {
        struct bench_exp *x = &r->exps[i];
        x->done = true;
        for (size_t p = 0; p < x->e->npoints; p++) {
            struct bench_point *pt = &x->points[p];
            pt->bound.ok = true;
            pt->bound.binding = xstrdup("capacity");
            pt->bound.binding_s = pt->bound.capacity_s = 10;
            for (size_t s = 0; s < x->e->nseries; s++) {
                struct bench_cell *c = &pt->cells[s];
                /* points in the papers' order get shorter makespans */
                double base = 11 + (double)p + (double)s;
                fake_run(c, base + 1, 10);
                fake_run(c, base, 10);
                fake_run(c, base + 2, 10);
                bench_cell_summarize(c);
            }
        }
    }
    return r;
}

static void test_results_json(void **state)
{
    (void)state;
    struct bench_results *r = filled();
    assert_int_equal(r->n, bench_nexperiments);
    assert_true(bench_results_complete(r));
    json_t *j = bench_results_to_json(r);
    assert_string_equal(json_string_value(json_object_get(j, "format")), "jackdaw-bench-paper");
    assert_int_equal(json_integer_value(json_object_get(j, "version")), 1);
    assert_true(json_is_true(json_object_get(j, "complete")));
    json_t *exps = json_object_get(j, "experiments");
    assert_int_equal(json_array_size(exps), bench_nexperiments);
    json_t *dags = json_array_get(exps, 0);
    assert_string_equal(json_string_value(json_object_get(dags, "key")), "dags");
    json_t *bot = json_array_get(json_object_get(dags, "points"), 0);
    assert_string_equal(json_string_value(json_object_get(bot, "key")), "bot");
    assert_float_equal(json_real_value(json_object_get(json_object_get(bot, "bound"),
                                                       "binding_s")), 10, 0);
    json_t *cell = json_array_get(json_object_get(bot, "cells"), 0);
    json_t *median = json_object_get(cell, "median");
    /* the median of 12, 11 and 13 */
    assert_float_equal(json_real_value(json_object_get(median, "makespan_s")), 12, 1e-12);
    assert_float_equal(json_real_value(json_object_get(median, "bound_ratio")), 10.0 / 12, 1e-12);
    assert_true(json_is_null(json_object_get(median, "locality_hit_rate")));
    assert_int_equal(json_array_size(json_object_get(cell, "runs")), 3);
    /* BOT: Table 4's percentage and the "90%+" efficiency */
    json_t *pubs = json_object_get(cell, "published");
    assert_int_equal(json_array_size(pubs), 2);
    bool table4 = false;
    for (size_t i = 0; i < json_array_size(pubs); i++) {
        json_t *pub = json_array_get(pubs, i);
        if (strcmp(json_string_value(json_object_get(pub, "figure")), "bound_ratio") == 0) {
            table4 = true;
            assert_float_equal(json_real_value(json_object_get(pub, "value")), 0.99139636, 1e-9);
            assert_float_equal(json_real_value(json_object_get(pub, "measured")), 10.0 / 12,
                               1e-12);
        }
    }
    assert_true(table4);
    json_t *run = json_array_get(json_object_get(cell, "runs"), 0);
    assert_non_null(json_object_get(json_object_get(run, "lost_core_s"), "tail"));
    /* shorter makespans first: the DAG ordering holds on throughput */
    json_t *ord = json_array_get(json_object_get(dags, "orderings"), 0);
    assert_true(json_is_true(json_object_get(ord, "holds")));
    json_decref(j);

    /* a run without a summary makes the results incomplete */
    r->exps[0].points[0].cells[0].runs[1].ok = false;
    assert_false(bench_results_complete(r));

    char cause_dir[128];
    path_in_dir(cause_dir, sizeof cause_dir, "json");
    assert_int_equal(mkdir(cause_dir, 0755), 0);
    char *cause = NULL;
    assert_int_equal(bench_results_save(r, cause_dir, &cause), 0);
    char path[192];
    snprintf(path, sizeof path, "%s/results.json", cause_dir);
    json_t *back = json_load_file(path, 0, NULL);
    assert_non_null(back);
    assert_true(json_is_false(json_object_get(back, "complete")));
    json_decref(back);
    bench_results_destroy(r);
    bench_results_destroy(NULL);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *buf = xcalloc(1 << 20, 1);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void test_page_without_gnuplot(void **state)
{
    (void)state;
    char dir[128];
    path_in_dir(dir, sizeof dir, "page");
    assert_int_equal(mkdir(dir, 0755), 0);
    setenv("JACKDAW_GNUPLOT", "/nonexistent/gnuplot", 1);
    struct bench_results *r = filled();
    char *cause = NULL;
    assert_int_equal(bench_page_write(r, dir, &cause), 0);
    char path[192];
    snprintf(path, sizeof path, "%s/index.html", dir);
    char *html = slurp(path);
    for (size_t i = 0; i < bench_nexperiments; i++) {
        char *h2 = xasprintf("<h2>%s</h2>", bench_experiments[i].title);
        assert_non_null(strstr(html, h2));
        free(h2);
    }
    assert_non_null(strstr(html, "<h2>Summary</h2>"));
    assert_non_null(strstr(html, "gnuplot is not available"));
    assert_null(strstr(html, "<svg"));
    assert_non_null(strstr(html, "90.6 %"));     /* Table 4's Fan-In, beside ours */
    assert_non_null(strstr(html, "</html>"));
    free(html);
    /* the data behind each chart instead */
    snprintf(path, sizeof path, "%s/chart-dags-headline.csv", dir);
    assert_int_equal(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/chart-allpairs-utilization.csv", dir);
    assert_int_equal(access(path, R_OK), 0);
    bench_results_destroy(r);
    unsetenv("JACKDAW_GNUPLOT");
}

static int setup(void **state)
{
    (void)state;
    return tmpdir_make("jackdaw-test-bench");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_holds_together),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_tt_and_timeout),
        cmocka_unit_test(test_only),
        cmocka_unit_test(test_median_and_order),
        cmocka_unit_test(test_published),
        cmocka_unit_test(test_results_json),
        cmocka_unit_test(test_page_without_gnuplot),
    };
    return cmocka_run_group_tests(tests, setup, remove_dir);
}
