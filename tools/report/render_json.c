/*
 * render_json — the report as one JSON object, the comparison as an object holding
 * every run's report.  The keys are documented in share/doc/report.md and never change
 * meaning; a figure that is undefined (a rate over nothing, a bound not computed) is
 * null, never NaN or a made-up 0.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "tools/report/render.h"
#include "tools/report/render_internal.h"

#define JSON_FLAGS (JSON_INDENT(1) | JSON_REAL_PRECISION(10) | JSON_PRESERVE_ORDER)

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *count(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *lost_object(const double *lost)
{
    json_t *o = json_object();
    for (int c = 0; c < REPORT_LOST_COUNT; c++)
        json_object_set_new(o, report_lost_cause_key(c), num(lost[c]));
    return o;
}

static json_t *figures(const struct report_analysis *a)
{
    json_t *o = json_object();
    for (int f = 0; f < RF_COUNT; f++)
        json_object_set_new(o, report_figure_info(f)->key, num(a->figures[f]));
    return o;
}

/* A trace of several jobs: each one's own figures (report --job J). */
static json_t *jobs(const struct report_analysis *a)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < a->njob_rows; i++) {
        const struct report_job_row *j = &a->job_rows[i];
        json_t *o = json_object();
        json_object_set_new(o, "job", json_integer(j->job));
        json_object_set_new(o, "workload", j->workload ? json_string(j->workload) : json_null());
        json_object_set_new(o, "tasks_submitted", num(j->submitted));
        json_object_set_new(o, "tasks_done", num(j->done));
        json_object_set_new(o, "tasks_failed", num(j->failed));
        json_object_set_new(o, "tasks_cancelled", num(j->cancelled));
        json_object_set_new(o, "makespan_s", num(j->makespan_s));
        json_object_set_new(o, "efficiency", num(j->efficiency));
        json_object_set_new(o, "bound_quality", num(j->bound_quality));
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *nodes(const struct report_analysis *a)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < a->nnodes; i++) {
        const struct report_node *n = &a->nodes[i];
        json_t *o = json_object();
        json_object_set_new(o, "id", json_integer(n->id));
        json_object_set_new(o, "slots", json_integer(n->slots));
        json_object_set_new(o, "speed", num(n->speed));
        json_object_set_new(o, "tasks_run", count(n->tasks_run));
        json_object_set_new(o, "tasks_failed", count(n->tasks_failed));
        json_object_set_new(o, "busy_s", num(n->busy_s));
        json_object_set_new(o, "utilization", num(n->utilization));
        json_object_set_new(o, "measured_runs", count(n->measured_runs));
        json_object_set_new(o, "cpu_s", num(n->cpu_s));
        json_object_set_new(o, "cpu_efficiency", num(n->cpu_efficiency));
        json_object_set_new(o, "max_rss_bytes", count(n->max_rss));
        json_object_set_new(o, "read_bytes", count(n->read_bytes));
        json_object_set_new(o, "write_bytes", count(n->write_bytes));
        json_object_set_new(o, "first_start_s", num(n->first_start_s));
        json_object_set_new(o, "last_end_s", num(n->last_end_s));
        json_object_set_new(o, "stolen_in", count(n->stolen_in));
        json_object_set_new(o, "stolen_out", count(n->stolen_out));
        json_object_set_new(o, "pushed", count(n->pushed_out));
        json_object_set_new(o, "steal_requests", count(n->steal_requests));
        json_object_set_new(o, "steal_grants", count(n->steal_grants));
        json_object_set_new(o, "steal_fails", count(n->steal_fails));
        json_object_set_new(o, "steal_tasks_asked", count(n->tasks_asked));
        json_object_set_new(o, "steal_tasks_granted", count(n->tasks_granted));
        json_object_set_new(o, "info_sent", count(n->info_sent));
        json_object_set_new(o, "info_received", count(n->info_received));
        json_object_set_new(o, "token_passes", count(n->token_passes));
        json_object_set_new(o, "tasks_with_inputs", count(n->tasks_with_inputs));
        json_object_set_new(o, "locality_hits", count(n->locality_hits));
        json_object_set_new(o, "fetches", count(n->fetches));
        json_object_set_new(o, "fetch_bytes", count(n->fetch_bytes));
        json_object_set_new(o, "cache_hits", count(n->cache_hits));
        json_object_set_new(o, "lost_s", lost_object(n->lost_s));
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *matrix(const struct report_analysis *a, const uint64_t *m)
{
    if (!m)
        return json_null(); /* too many nodes for a matrix (see the warnings) */
    json_t *rows = json_array();
    for (size_t t = 0; t < a->nnodes; t++) {
        json_t *row = json_array();
        for (size_t v = 0; v < a->nnodes; v++)
            json_array_append_new(row, count(m[t * a->nnodes + v]));
        json_array_append_new(rows, row);
    }
    return rows;
}

static json_t *steals(const struct report_analysis *a)
{
    json_t *o = json_object();
    const double *f = a->figures;
    json_object_set_new(o, "requests", num(f[RF_STEAL_REQUESTS]));
    json_object_set_new(o, "grants", num(f[RF_STEAL_GRANTS]));
    json_t *fails = json_object();
    json_object_set_new(fails, "empty", count(a->steal_fails_empty));
    json_object_set_new(fails, "no_victim", count(a->steal_fails_no_victim));
    json_object_set_new(fails, "timeout", count(a->steal_fails_timeout));
    json_object_set_new(o, "fails", fails);
    json_object_set_new(o, "success_pct", num(f[RF_STEAL_SUCCESS_PCT]));
    json_object_set_new(o, "attempt_success_pct", num(f[RF_STEAL_ATTEMPT_SUCCESS_PCT]));
    json_object_set_new(o, "tasks_moved", num(f[RF_TASKS_STOLEN]));
    json_t *ids = json_array();
    for (size_t i = 0; i < a->nnodes; i++)
        json_array_append_new(ids, json_integer(a->nodes[i].id));
    json_t *m = json_object();
    json_object_set_new(m, "nodes", ids);
    json_object_set_new(m, "tasks", matrix(a, a->steal_tasks));
    json_object_set_new(m, "requests", matrix(a, a->steal_asks));
    json_object_set_new(o, "matrix", m);
    return o;
}

static json_t *audit(const struct report_analysis *a)
{
    json_t *o = json_object();
    const double *f = a->figures;
    json_object_set_new(o, "audited", num(f[RF_STEALS_AUDITED]));
    json_object_set_new(o, "helpful", num(f[RF_STEALS_HELPFUL]));
    json_object_set_new(o, "harmful", num(f[RF_STEALS_HARMFUL]));
    json_object_set_new(o, "unjudged", count(a->steals_unjudged));
    json_object_set_new(o, "gain_s", num(f[RF_STEAL_GAIN_S]));
    json_t *worst = json_array();
    for (size_t k = 0; k < a->nworst; k++) {
        const struct report_steal *s = &a->worst[k];
        char buf[FIG_BUF];
        json_t *w = json_object();
        json_object_set_new(w, "task", json_string(fmt_task(buf, s->task)));
        json_object_set_new(w, "name", str(s->name));
        json_object_set_new(w, "victim", json_integer(s->victim));
        json_object_set_new(w, "thief", json_integer(s->thief));
        json_object_set_new(w, "stolen_s", num(s->stolen_s));
        json_object_set_new(w, "started_s", num(s->started_s));
        json_object_set_new(w, "estimate_s", num(s->estimate_s));
        json_object_set_new(w, "gain_s", num(s->gain_s));
        json_object_set_new(w, "position", json_integer(s->position));
        json_object_set_new(w, "victim_rate_tps", num(s->victim_rate_tps));
        json_array_append_new(worst, w);
    }
    json_object_set_new(o, "worst", worst);
    return o;
}

static json_t *series(const struct report_analysis *a)
{
    json_t *o = json_object();
    json_object_set_new(o, "bin_s", num(a->bin_s));
    const char *keys[] = {"t_s", "utilization", "busy_slots", "waitq", "lreadyq", "sreadyq",
                          "potential", "imbalance"};
    json_t *arr[8];
    for (int k = 0; k < 8; k++)
        arr[k] = json_array();
    for (size_t b = 0; b < a->nbins; b++) {
        const struct report_bin *x = &a->bins[b];
        double v[8] = {x->t_s,    x->utilization, x->busy_slots, x->waitq,
                       x->lreadyq, x->sreadyq,    x->potential,  x->imbalance};
        for (int k = 0; k < 8; k++)
            json_array_append_new(arr[k], num(v[k]));
    }
    for (int k = 0; k < 8; k++)
        json_object_set_new(o, keys[k], arr[k]);
    json_t *per = json_array();
    for (size_t i = 0; i < a->nnodes; i++) {
        json_t *row = json_array();
        for (size_t b = 0; b < a->nbins; b++)
            json_array_append_new(row, num(a->node_utilization[b * a->nnodes + i]));
        json_array_append_new(per, row);
    }
    json_object_set_new(o, "node_utilization", per);
    return o;
}

json_t *report_to_json(const struct report_analysis *a)
{
    json_t *o = json_object();
    json_object_set_new(o, "format", json_string("jackdaw-report"));
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "trace", str(a->trace_path));
    json_t *run = json_object();
    json_object_set_new(run, "run_id", str(a->run_id));
    json_object_set_new(run, "label", str(a->label));
    json_object_set_new(run, "placement", str(a->placement));
    json_object_set_new(run, "steal", str(a->steal_policy));
    json_t *wl = json_object();
    json_object_set_new(wl, "name", str(a->workload_name));
    json_object_set_new(wl, "digest", str(a->workload_digest));
    json_object_set_new(wl, "path", str(a->workload_path));
    json_object_set_new(wl, "mode", str(a->workload_mode));
    json_object_set_new(run, "workload", wl);
    json_object_set_new(run, "start_s", num(a->start_s));
    json_object_set_new(run, "end_s", num(a->end_s));
    json_object_set_new(run, "cut", json_boolean(a->cut));
    json_object_set_new(o, "run", run);
    json_object_set_new(o, "figures", figures(a));
    json_t *lost = json_object();
    json_object_set_new(lost, "capacity_core_s", num(a->figures[RF_CAPACITY_CORE_S]));
    json_object_set_new(lost, "busy_core_s", num(a->figures[RF_BUSY_CORE_S]));
    json_object_set_new(lost, "idle_core_s", num(a->figures[RF_IDLE_CORE_S]));
    json_object_set_new(lost, "causes", lost_object(&a->figures[RF_LOST_RAMP_UP_S]));
    json_object_set_new(o, "lost", lost);
    json_t *bound = json_object();
    json_object_set_new(bound, "makespan_s", num(a->figures[RF_BOUND_MAKESPAN_S]));
    json_object_set_new(bound, "quality", num(a->figures[RF_BOUND_QUALITY]));
    json_object_set_new(o, "bound", bound);
    json_object_set_new(o, "nodes", nodes(a));
    if (a->njob_rows)
        json_object_set_new(o, "jobs", jobs(a));
    json_object_set_new(o, "steals", steals(a));
    json_object_set_new(o, "audit", audit(a));
    json_object_set_new(o, "series", series(a));
    json_t *w = json_array();
    for (size_t i = 0; i < a->nwarnings; i++)
        json_array_append_new(w, json_string(a->warnings[i]));
    json_object_set_new(o, "warnings", w);
    return o;
}

static int dump(FILE *out, json_t *o)
{
    int rc = json_dumpf(o, out, JSON_FLAGS);
    json_decref(o);
    if (rc == 0)
        putc('\n', out);
    return rc == 0 && !ferror(out) ? 0 : -EIO;
}

int render_json(FILE *out, const struct report_analysis *a)
{
    return dump(out, report_to_json(a));
}

int render_compare_json(FILE *out, const struct report_analysis *const *runs, size_t n)
{
    json_t *o = json_object();
    json_object_set_new(o, "format", json_string("jackdaw-compare"));
    json_object_set_new(o, "version", json_integer(1));
    json_t *labels = json_array();
    for (size_t k = 0; k < n; k++)
        json_array_append_new(labels, str(runs[k]->label));
    json_object_set_new(o, "labels", labels);
    /* figures side by side: key -> [one value per run] */
    json_t *side = json_object();
    for (int f = 0; f < RF_COUNT; f++) {
        json_t *row = json_array();
        for (size_t k = 0; k < n; k++)
            json_array_append_new(row, num(runs[k]->figures[f]));
        json_object_set_new(side, report_figure_info(f)->key, row);
    }
    json_object_set_new(o, "figures", side);
    json_t *all = json_array();
    for (size_t k = 0; k < n; k++)
        json_array_append_new(all, report_to_json(runs[k]));
    json_object_set_new(o, "runs", all);
    return dump(out, o);
}
