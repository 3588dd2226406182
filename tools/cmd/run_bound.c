/*
 * run_bound — what a report takes from the run's workload, for `jackdaw report` and
 * `jackdaw compare` alike: the workload (where the trace says, or beside it, or
 * --workload); its declared work (report_use_workload: efficiency as `run` computes
 * it); and, with the cluster and emulated link from the trace, tools/bound's three
 * bounds, the binding one set on the analysis (report_set_bound).
 */
#include "tools/cmd/run_bound.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "core/model/workload.h"
#include "core/net/bucket.h"
#include "tools/bound/bound.h"
#include "trace/format/reader.h"

/* The emulated link of the run, from the daemons' flags in the trace header: the bound
 * must assume the network the run had.  0 (unlimited) when the run had none. */
static double run_bandwidth(const char *trace)
{
    struct trace_reader *r;
    char *cause = NULL;
    double bps = 0;
    if (trace_reader_open(&r, trace, &cause) < 0) {
        free(cause);
        return 0;
    }
    const char *h = trace_reader_info(r)->header_json;
    json_t *root = h ? json_loads(h, 0, NULL) : NULL;
    json_t *args = json_object_get(json_object_get(root, "config"), "node_args");
    for (size_t i = 0; json_is_array(args) && i + 1 < json_array_size(args); i++) {
        const char *flag = json_string_value(json_array_get(args, i));
        const char *val = json_string_value(json_array_get(args, i + 1));
        char *why = NULL;
        if (flag && val && strcmp(flag, "--bandwidth") == 0 &&
            bucket_parse_rate(val, &bps, &why) < 0)
            bps = 0;
        free(why);
    }
    json_decref(root);
    trace_reader_destroy(r);
    return bps;
}

char *run_find_workload(const char *trace, const char *recorded)
{
    if (!recorded)
        return NULL;
    if (access(recorded, R_OK) == 0)
        return xstrdup(recorded);
    const char *slash = strrchr(trace, '/');
    if (recorded[0] == '/' || !slash)
        return NULL;
    char *next = xasprintf("%.*s/%s", (int)(slash - trace), trace, recorded);
    if (access(next, R_OK) == 0)
        return next;
    free(next);
    return NULL;
}

/* "How far from possible": the sub-optimal bound (tools/bound/bound) of the run's
 * workload on the run's cluster.  Without a readable workload the report says so and
 * goes on. */
static void add_bound(struct report_analysis *a, const char *trace, const char *who)
{
    if (!a->workload_path || a->nnodes == 0)
        return;
    struct workload wl;
    char *cause = NULL;
    if (workload_load(&wl, a->workload_path, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: note: no bound: %s\n", who, cause ? cause : "?");
        free(cause);
        return;
    }
    report_use_workload(a, &wl);
    uint32_t *slots = xcalloc(a->nnodes, sizeof *slots);
    double *speeds = xcalloc(a->nnodes, sizeof *speeds);
    for (size_t i = 0; i < a->nnodes; i++) {
        slots[i] = a->nodes[i].slots > 0 ? (uint32_t)a->nodes[i].slots : 1;
        speeds[i] = a->nodes[i].speed > 0 && a->nodes[i].speed <= 1 ? a->nodes[i].speed : 1;
    }
    struct bound_cluster cl = {.nodes = (uint32_t)a->nnodes, .slots = slots, .speeds = speeds,
                               .bandwidth = run_bandwidth(trace)};
    struct bound_result br;
    if (bound_compute(&wl, &cl, &br, NULL, &cause) == 0) {
        report_set_bound(a, br.binding_s, bound_kind_name(br.binding));
    } else {
        fprintf(stderr, "jackdaw %s: note: no bound: %s\n", who, cause ? cause : "?");
        free(cause);
    }
    free(slots);
    free(speeds);
    workload_fini(&wl);
}

void run_bound_add(struct report_analysis *a, const char *trace, const char *workload,
                   const char *who)
{
    char *wl = workload ? xstrdup(workload) : run_find_workload(trace, a->workload_path);
    if (wl) {
        free(a->workload_path);
        a->workload_path = wl;
    }
    add_bound(a, trace, who);
}
