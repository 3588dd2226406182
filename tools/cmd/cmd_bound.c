/*
 * cmd_bound — `jackdaw bound WORKLOAD --nodes N --slots S`: how short the workload's
 * makespan could be on that cluster.  Prints the sub-optimal bound of paper 002 §3, the
 * capacity bound and the critical path (tools/bound/bound.h), the binding one, and
 * the inputs they were computed from, as text or one JSON object.
 *
 * Owns the command line; called from tools/cmd/main.c through cmd_bound.  Nothing runs
 * and no cluster is needed: the cluster is described on the command line, so the bound
 * can be computed for clusters larger than any at hand.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/xalloc.h"
#include "core/client/launcher.h"
#include "core/model/mix.h"
#include "core/model/workload.h"
#include "core/net/bucket.h"
#include "tools/bound/bound.h"
#include "tools/cmd/cmd.h"

/* Far beyond any cluster, but the per-node arrays stay small (the paper's largest
 * theoretical run had 128K cores). */
#define MAX_NODES (1u << 24)

static int bound_main(int argc, char **argv);

const struct cmd cmd_bound = {
    .name = "bound",
    .usage = "WORKLOAD --nodes N --slots S|LIST [--speeds LIST|C1..C5] [--bandwidth RATE] "
             "[--json]",
    .summary = "bounds on a workload's makespan: sub-optimal (paper 002), capacity, critical path",
    .main = bound_main,
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jackdaw bound: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nusage: jackdaw bound %s\n", cmd_bound.usage);
    va_end(ap);
    return EXIT_USAGE;
}

/* "8" or "8,4,1" cycled over the nodes, as --speeds is. */
static int parse_slots(const char *text, uint32_t *out, uint32_t nodes)
{
    uint32_t count = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long v = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
        if (*p < '0' || *p > '9' || errno || (*end && *end != ',') || v < 1 ||
            v > UINT32_MAX)
            return usage_error("--slots '%s': entry %u is not a whole number >= 1", text,
                               count + 1);
        /* Entries beyond the node count would never be used: keep the first `nodes`. */
        if (count < nodes)
            out[count] = (uint32_t)v;
        count++;
        p = *end ? end + 1 : end;
    }
    if (count == 0)
        return usage_error("--slots needs a number or a list");
    for (uint32_t i = count; i < nodes; i++)
        out[i] = out[i % count];
    return 0;
}

/* A list for launcher_parse_speeds, or a paper 001 mix (core/model/mix.h). */
static int parse_speeds(const char *text, double *out, uint32_t nodes)
{
    int preset = text ? mix_parse(text) : -EINVAL;
    if (preset >= 0) {
        for (uint32_t i = 0; i < nodes; i++) {
            struct mix_node m;
            mix_node((enum mix_preset)preset, i, &m);
            out[i] = m.speed;
        }
        return 0;
    }
    char *cause = NULL;
    if (launcher_parse_speeds(text, out, nodes, &cause) < 0) {
        int rc = usage_error("%s (or a mix: none, C1..C5)", cause);
        free(cause);
        return rc;
    }
    return 0;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static const char *task_id(const struct workload *wl, uint32_t index)
{
    return index < wl->count ? wl->tasks[index].id : "";
}

static const char *json_kind(enum bound_kind k)
{
    static const char *const keys[BOUND_KIND_COUNT] = {"suboptimal", "capacity",
                                                       "critical_path"};
    return keys[k];
}

/* Speeds as given when short, else their range: the input line stays one line. */
static void describe_speeds(char *buf, size_t len, const char *given, const double *speeds,
                            uint32_t nodes)
{
    double lo = speeds[0], hi = speeds[0];
    for (uint32_t i = 1; i < nodes; i++) {
        lo = speeds[i] < lo ? speeds[i] : lo;
        hi = speeds[i] > hi ? speeds[i] : hi;
    }
    if (lo == hi)
        snprintf(buf, len, "all %g", lo);
    else if (given && strlen(given) <= 40)
        snprintf(buf, len, "%s (%g to %g)", given, lo, hi);
    else
        snprintf(buf, len, "%g to %g", lo, hi);
}

static void print_text(const struct workload *wl, const struct bound_result *r, uint32_t nodes,
                       const uint32_t *slots, const char *slots_given, const char *speeds,
                       double bandwidth, double load_s, double compute_s)
{
    bool same_slots = true;
    for (uint32_t i = 1; i < nodes; i++)
        same_slots = same_slots && slots[i] == slots[0];
    printf("workload  %s: %u tasks, %llu edges, %u objects, %u levels, work %.6g s at speed 1\n",
           wl->name, wl->count, (unsigned long long)r->edges, wl->object_count, r->levels,
           r->total_work_s);
    if (same_slots)
        printf("cluster   %u nodes x %u slots = %llu", nodes, slots[0],
               (unsigned long long)r->total_slots);
    else
        printf("cluster   %u nodes, slots %s = %llu", nodes, slots_given,
               (unsigned long long)r->total_slots);
    printf(", speeds %s, capacity %.6g slot-speeds\n", speeds, r->capacity);
    if (bandwidth > 0) {
        /* Links are sold in bits: say it in the unit the user most likely typed. */
        static const struct {
            double scale;
            const char *unit;
        } units[] = {{1e9, "Gbit"}, {1e6, "Mbit"}, {1e3, "Kbit"}, {1, "bit"}};
        double bits = bandwidth * 8;
        size_t u = 0;
        while (u + 1 < sizeof units / sizeof *units && bits < units[u].scale)
            u++;
        printf("network   %.6g bytes/s (%.6g %s/s) between any two nodes\n", bandwidth,
               bits / units[u].scale, units[u].unit);
    } else {
        printf("network   unlimited bandwidth (transfers take no time)\n");
    }
    printf("\n");
    printf("  %-15s %14.6f s   paper 002 §3's programme, strict: %u of %u tasks best "
           "where some parents ran, last task '%s'",
           "sub-optimal", r->suboptimal_s, r->case2_tasks, wl->count,
           task_id(wl, r->suboptimal_last));
    if (r->contention_level != UINT32_MAX)
        printf("; contention %.6g s at level %u", r->contention_s, r->contention_level);
    printf("\n");
    printf("  %-15s %14.6f s   work / capacity\n", "capacity", r->capacity_s);
    printf("  %-15s %14.6f s   at the fastest speed %g, with unavoidable input transfers; "
           "ends at '%s'\n",
           "critical path", r->critical_path_s, r->fastest_speed,
           task_id(wl, r->critical_last));
    printf("\nbinding   %s, %.6f s\n", bound_kind_name(r->binding), r->binding_s);
    printf("(read the workload in %.2f s, computed in %.2f s)\n", load_s, compute_s);
}

static int print_json(const struct workload *wl, const struct bound_result *r, uint32_t nodes,
                      const uint32_t *slots, const double *speeds, double bandwidth,
                      double load_s, double compute_s)
{
    json_t *slot_list = json_array(), *speed_list = json_array();
    for (uint32_t i = 0; i < nodes; i++) {
        json_array_append_new(slot_list, json_integer(slots[i]));
        json_array_append_new(speed_list, json_real(speeds[i]));
    }
    json_t *o = json_pack(
        "{s:s, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:o, s:o, s:f, s:f, s:f}", "workload",
        wl->name, "tasks", (json_int_t)wl->count, "edges", (json_int_t)r->edges, "objects",
        (json_int_t)wl->object_count, "levels", (json_int_t)r->levels, "total_work_s",
        r->total_work_s, "nodes", (json_int_t)nodes, "total_slots", (json_int_t)r->total_slots,
        "slots", slot_list, "speeds", speed_list, "fastest_speed", r->fastest_speed,
        "capacity", r->capacity, "bandwidth_bytes_per_s", bandwidth);
    json_t *figures = json_pack(
        "{s:f, s:f, s:f, s:s, s:f, s:I, s:f, s:I, s:s, s:s, s:f, s:f}", "suboptimal_s",
        r->suboptimal_s, "capacity_s", r->capacity_s, "critical_path_s", r->critical_path_s,
        "binding", json_kind(r->binding), "binding_s", r->binding_s, "case2_tasks",
        (json_int_t)r->case2_tasks, "contention_s", r->contention_s, "contention_level",
        r->contention_level == UINT32_MAX ? (json_int_t)-1 : (json_int_t)r->contention_level,
        "suboptimal_last_task",
        task_id(wl, r->suboptimal_last), "critical_path_last_task",
        task_id(wl, r->critical_last), "load_s", load_s, "compute_s", compute_s);
    /* json_pack fails on a string that is not UTF-8: the workload's file name may be
     * any bytes (ids are JSON strings already). */
    char *text = NULL;
    if (o && figures && json_object_update(o, figures) == 0)
        text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    json_decref(figures);
    if (!text)
        return -EINVAL;
    printf("%s\n", text);
    free(text);
    return 0;
}

static int bound_main(int argc, char **argv)
{
    unsigned long nodes = 0;
    const char *slots_text = NULL, *speeds_text = NULL, *bandwidth_text = NULL;
    bool json = false;
    const struct opt opts[] = {
        {"nodes", OPT_UINT, &nodes, "N  number of nodes (required)"},
        {"slots", OPT_STRING, &slots_text, "S|LIST  slots per node, or a list cycled: 8,4"},
        {"speeds", OPT_STRING, &speeds_text,
         "LIST|C1..C5  speed factors in (0,1] cycled (1,0.5), or a paper 001 mix"},
        {"bandwidth", OPT_STRING, &bandwidth_text,
         "RATE  between two nodes: 1Gbit, 125MB/s (default unlimited)"},
        {"json", OPT_FLAG, &json, "  print one JSON object"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos = 0;
    int rc = cmd_parse(&cmd_bound, argc, argv, opts, pos, 1, &npos);
    if (rc)
        return rc < 0 ? EXIT_OK_ : rc;
    if (npos != 1)
        return usage_error("which workload? (a file, or - for standard input)");
    if (nodes < 1 || nodes > MAX_NODES)
        return usage_error("--nodes N (1..%u) is required", MAX_NODES);
    if (!slots_text)
        return usage_error("--slots S is required");

    uint32_t n = (uint32_t)nodes;
    uint32_t *slots = xmalloc(n * sizeof *slots);
    double *speeds = xmalloc(n * sizeof *speeds);
    double bandwidth = 0;
    int code = parse_slots(slots_text, slots, n);
    if (!code)
        code = parse_speeds(speeds_text, speeds, n);
    if (!code && bandwidth_text) {
        char *why = NULL;
        if (bucket_parse_rate(bandwidth_text, &bandwidth, &why) < 0) {
            code = usage_error("--bandwidth: %s", why ? why : bandwidth_text);
            free(why);
        }
    }
    if (code) {
        free(slots);
        free(speeds);
        return code;
    }

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct workload wl;
    char *cause = NULL;
    if (workload_load(&wl, pos[0], &cause) < 0) {
        fprintf(stderr, "jackdaw bound: %s\n", cause);
        free(cause);
        free(slots);
        free(speeds);
        return EXIT_BAD_INPUT;
    }
    double load_s = seconds_since(&t0);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct bound_cluster cl = {.nodes = n, .slots = slots, .speeds = speeds,
                               .bandwidth = bandwidth};
    struct bound_result r;
    rc = bound_compute(&wl, &cl, &r, NULL, &cause);
    double compute_s = seconds_since(&t0);
    if (rc < 0) {
        /* The cluster was checked above, so what is left is the workload's: an object
         * pinned outside the cluster ("FILE:LINE: …"), or memory. */
        fprintf(stderr, "jackdaw bound: %s\n", cause ? cause : strerror(-rc));
        code = rc == -ENOMEM ? EXIT_INTERNAL : EXIT_BAD_INPUT;
    } else if (json) {
        if (print_json(&wl, &r, n, slots, speeds, bandwidth, load_s, compute_s) < 0) {
            fprintf(stderr, "jackdaw bound: cannot encode the result as JSON (is the file "
                            "name '%s' UTF-8?)\n", wl.name);
            code = EXIT_INTERNAL;
        }
    } else {
        char speed_text[128];
        describe_speeds(speed_text, sizeof speed_text, speeds_text, speeds, n);
        print_text(&wl, &r, n, slots, slots_text, speed_text, bandwidth, load_s, compute_s);
    }
    free(cause);
    workload_fini(&wl);
    free(slots);
    free(speeds);
    if (!code && fflush(stdout) != 0) {
        fprintf(stderr, "jackdaw bound: cannot write the result: %s\n", strerror(errno));
        code = EXIT_INTERNAL;
    }
    return code;
}
