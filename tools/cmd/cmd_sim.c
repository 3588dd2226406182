/*
 * jackdaw sim — a workload run on N simulated nodes by the same core/policy code the
 * daemons run (core/sim/sim.h, issue 20): no daemon, no socket, no clock; simulated
 * time.  Prints the summary `jackdaw run` prints (makespan, throughput, efficiency
 * against the ideal makespan of the work over the slots and speeds) plus the engine's
 * own figures, and with --trace writes a trace every trace tool reads as a real run's
 * (trace/collector/simfile.h).
 *
 * The flags are run's where run has them, with run's parsers: --slots and --speeds
 * (core/client/launcher.h), --mode, the stealing flags and --placement (their option
 * entries and checks are core/client/dataopts.h's), --bandwidth and --sample-ms.  What
 * the simulator does not model (placement auto, A2WS, PaRSEC, LW, CTWS) sim_check
 * refuses by name.
 *
 * Exit codes: 0; EXIT_RUN_FAILED when the simulation ended with tasks not done;
 * EXIT_USAGE for a bad flag or what the simulator does not model; EXIT_BAD_INPUT for a
 * workload that cannot be read or simulated; EXIT_INTERNAL when the trace cannot be
 * written.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/xalloc.h"
#include "core/client/client.h"
#include "core/client/dataopts.h"
#include "core/client/job.h"
#include "core/client/launcher.h"
#include "core/model/wfcommons.h"
#include "core/model/workload.h"
#include "core/net/bucket.h"
#include "core/runtime/node.h"
#include "core/sim/sim.h"
#include "tools/cmd/cmd.h"
#include "trace/collector/simfile.h"

/* Far beyond any real cluster; the per-node arrays stay small (as `jackdaw bound`). */
#define SIM_MAX_NODES (1u << 24)

static int sim_main(int argc, char **argv);

const struct cmd cmd_sim = {
    .name = "sim",
    .usage = "WORKLOAD [--nodes N] [--slots S] [--speeds LIST|C1..C5] [--mode M] [--policy P] "
             "[--placement P] [--latency T] [--bandwidth RATE] [--seed N] [--trace FILE] "
             "[--json]",
    .summary = "simulate a workload on N nodes with the daemons' policy code",
    .main = sim_main,
};

/* The dataopts flags whose meaning the simulator has (stealing and placement); the
 * others (cache, memory, failures, the trace buffer) describe daemons it does not run,
 * and --bandwidth, --latency and --sample-ms are given their simulated sense below. */
static const char *const policy_flags[] = {
    "policy", "starvation", "victims", "amount", "info", "radius", "wait-guard", "steal",
    "neighbours", "poll-initial-ms", "poll-max-ms", "widen-after", "widen-by", "placement",
    "threshold", "tt",
};

static bool is_policy_flag(const char *name)
{
    for (size_t i = 0; i < sizeof policy_flags / sizeof policy_flags[0]; i++)
        if (strcmp(name, policy_flags[i]) == 0)
            return true;
    return false;
}

/* --latency: seconds ("100e-6"), or a duration with its unit ("100us"). */
static int parse_latency(const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end != text && *end == '\0') {
        if (!(v >= 0) || !isfinite(v))
            return -EINVAL;
        *out = v;
        return 0;
    }
    int64_t ns;
    char *why = NULL;
    int rc = bucket_parse_duration(text, &ns, &why);
    free(why);
    if (rc < 0)
        return rc;
    *out = (double)ns / 1e9;
    return 0;
}

/* What the summary says; the shared figures are named and computed as run's
 * (core/client/follow.c, follow_summary). */
struct sim_summary {
    uint32_t tasks, nodes, slots, total_slots;
    const char *mode;
    const double *speeds;       /* NULL: all 1.0 */
    double ideal_s, efficiency, throughput_tps, avg_time_per_task_per_cpu_s;
    double wall_s, events_per_s;
    struct sim_result r;
};

static void summarise(struct sim_summary *s)
{
    double capacity = 0;
    for (uint32_t i = 0; i < s->nodes; i++)
        capacity += s->slots * (s->speeds ? s->speeds[i] : 1.0);
    double mk = s->r.makespan_s;
    s->total_slots = s->nodes * s->slots;
    s->ideal_s = capacity > 0 ? s->r.work_s / capacity : 0;
    s->efficiency = mk > 0 ? s->ideal_s / mk : 0;
    s->throughput_tps = mk > 0 ? s->tasks / mk : 0;
    s->avg_time_per_task_per_cpu_s = s->tasks ? mk * s->total_slots / s->tasks : 0;
    s->events_per_s = s->wall_s > 0 ? (double)s->r.events / s->wall_s : 0;
}

static void print_text(const struct sim_summary *s, const char *trace)
{
    const struct sim_result *r = &s->r;
    printf("jackdaw sim: %u tasks on %u nodes, %u slots (%s submission), simulated\n",
           s->tasks, s->nodes, s->total_slots, s->mode);
    printf("  done %llu   failed 0   cancelled 0\n", (unsigned long long)r->tasks_done);
    printf("  makespan         %.3f s\n", r->makespan_s);
    printf("  throughput       %.1f tasks/s\n", s->throughput_tps);
    if (s->ideal_s > 0)
        printf("  efficiency       %.1f %%  (ideal %.3f s)\n", 100 * s->efficiency, s->ideal_s);
    else
        printf("  efficiency       n/a (no timed work)\n");
    printf("  time/task/CPU    %.3f ms\n", 1000 * s->avg_time_per_task_per_cpu_s);
    if (r->bytes_moved)
        printf("  bytes moved      %.1f MB\n", (double)r->bytes_moved / 1e6);
    if (r->tasks_pushed)
        printf("  tasks pushed     %llu\n", (unsigned long long)r->tasks_pushed);
    printf("  steals ok/tried  %llu/%llu   tasks stolen %llu\n",
           (unsigned long long)r->steals_ok, (unsigned long long)r->steal_attempts,
           (unsigned long long)r->tasks_stolen);
    printf("  messages         %llu\n", (unsigned long long)r->messages);
    printf("  events           %llu in %.3f s of wall time (%.3g events/s)\n",
           (unsigned long long)r->events, s->wall_s, s->events_per_s);
    if (trace)
        printf("  trace            %s\n", trace);
}

static void print_json(const struct sim_summary *s, const struct sim_config *cfg)
{
    const struct sim_result *r = &s->r;
    json_t *nodes = json_array();
    for (uint32_t i = 0; i < s->nodes; i++)
        json_array_append_new(nodes, json_pack("{s:i, s:i, s:f}", "id", (int)i, "slots",
                                               (int)s->slots, "speed",
                                               s->speeds ? s->speeds[i] : 1.0));
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:s, s:i, s:o}",
                          "tasks", (json_int_t)s->tasks, "tasks_done",
                          (json_int_t)r->tasks_done, "tasks_failed", (json_int_t)0,
                          "tasks_cancelled", (json_int_t)0, "makespan_s", r->makespan_s,
                          "throughput_tps", s->throughput_tps, "efficiency", s->efficiency,
                          "ideal_s", s->ideal_s, "avg_time_per_task_per_cpu_s",
                          s->avg_time_per_task_per_cpu_s, "mode", s->mode, "total_slots",
                          (int)s->total_slots, "nodes", nodes);
    json_object_set_new(o, "bytes_moved", json_integer((json_int_t)r->bytes_moved));
    json_object_set_new(o, "tasks_pushed", json_integer((json_int_t)r->tasks_pushed));
    json_object_set_new(o, "simulated", json_true());
    json_object_set_new(o, "work_s", json_real(r->work_s));
    json_object_set_new(o, "busy_s", json_real(r->busy_s));
    json_object_set_new(o, "events", json_integer((json_int_t)r->events));
    json_object_set_new(o, "events_per_s", json_real(s->events_per_s));
    json_object_set_new(o, "wall_s", json_real(s->wall_s));
    json_object_set_new(o, "messages", json_integer((json_int_t)r->messages));
    json_object_set_new(o, "steal_attempts", json_integer((json_int_t)r->steal_attempts));
    json_object_set_new(o, "steals_ok", json_integer((json_int_t)r->steals_ok));
    json_object_set_new(o, "tasks_stolen", json_integer((json_int_t)r->tasks_stolen));
    json_object_set_new(o, "seed", json_integer((json_int_t)cfg->seed));
    json_object_set_new(o, "latency_s", json_real(cfg->latency_s));
    json_object_set_new(o, "bandwidth_Bps", json_real(cfg->bandwidth_Bps));
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9));
    printf("%s\n", text);
    free(text);
    json_decref(o);
}

/* The mode as run spells it, plus "round-robin"; the data mode is not modelled. */
static int parse_mode(const char *text, enum sim_submit *out, const char **name)
{
    int m = strcmp(text, "round-robin") == 0 ? SUBMIT_ROUNDROBIN : client_submit_mode_parse(text);
    if (m < 0) {
        fprintf(stderr, "jackdaw sim: unknown --mode '%s' (hashed, one, roundrobin)\n", text);
        return EXIT_USAGE;
    }
    if (m == SUBMIT_DATA) {
        fprintf(stderr, "jackdaw sim: --mode data is not modelled by the simulator (hashed, "
                        "one, roundrobin)\n");
        return EXIT_USAGE;
    }
    *out = m == SUBMIT_ONE ? SIM_SUBMIT_ONE
           : m == SUBMIT_ROUNDROBIN ? SIM_SUBMIT_ROUND_ROBIN : SIM_SUBMIT_HASHED;
    *name = client_submit_mode_name((enum submit_mode)m);
    return 0;
}

/*
 * The stealing policy, placement, bandwidth and sample period, through dataopts (so a
 * value is refused here as run refuses it, and a --policy preset brings its placement
 * as it does to the daemons).  d->words gets the flags for the trace header's
 * node_args, as a real run's header lists its daemons' flags.
 */
static int apply_dataopts(struct dataopts *d, struct sim_config *cfg)
{
    if (dataopts_finish(d, "sim"))
        return EXIT_USAGE;
    struct node_config nc;
    memset(&nc, 0, sizeof nc);
    char *cause = NULL;
    if (dataopts_apply(d, &nc, &cause) < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", cause);
        free(cause);
        return EXIT_USAGE;
    }
    cfg->steal = nc.steal;
    cfg->placement = nc.placement;
    if (d->bandwidth)
        cfg->bandwidth_Bps = nc.bandwidth_Bps;
    if (d->sample_ms)
        cfg->sample_s = nc.sample_ms / 1000.0;
    return 0;
}

static int sim_main(int argc, char **argv)
{
    unsigned long nodes = 4, seed = 1;
    const char *slots_text = "4", *speeds_text = NULL, *mode = "hashed", *latency = NULL,
               *trace = NULL;
    bool json = false, quiet = false;
    struct dataopts data = {0};
    const struct opt all[] = {DATAOPTS_OPTS(&data)};
    const struct opt own[] = {
        {"nodes", OPT_UINT, &nodes, "N  simulated nodes (default 4)"},
        {"slots", OPT_STRING, &slots_text, "S  executor slots per node (default 4)"},
        {"speeds", OPT_STRING, &speeds_text,
         "LIST|MIX  speed factors in (0,1], cycled: 1,0.5; or a mix of paper 001: C1..C5"},
        {"mode", OPT_STRING, &mode, "M  hashed | one | roundrobin (default hashed)"},
        {"latency", OPT_STRING, &latency,
         "T  one-way message latency: seconds or with a unit, e.g. 100us (default 100e-6)"},
        {"bandwidth", OPT_STRING, &data.bandwidth,
         "RATE  a node's ingress link for task inputs, e.g. 1Gbit; also Algorithm 1's "
         "net_band (default: unlimited)"},
        {"seed", OPT_UINT, &seed, "N  the thieves' random draws, >= 1 (default 1)"},
        {"sample-ms", OPT_STRING, &data.sample_ms,
         "MS  trace: simulated node sample period (100)"},
        {"trace", OPT_STRING, &trace, "FILE  write the simulated run's trace (a new file)"},
        {"json", OPT_FLAG, &json, "  summary as one JSON object on stdout"},
        {"quiet", OPT_FLAG, &quiet, "  no summary unless --json (errors only)"},
    };
    size_t nown = sizeof own / sizeof own[0], nall = sizeof all / sizeof all[0];
    struct opt *opts = xcalloc(nown + nall + 1, sizeof *opts);
    size_t nopts = 0;
    for (size_t i = 0; i < nown; i++)
        opts[nopts++] = own[i];
    for (size_t i = 0; i < nall; i++)
        if (is_policy_flag(all[i].name))
            opts[nopts++] = all[i];
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_sim, argc, argv, opts, pos, 1, &npos);
    free(opts);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (npos != 1 || nodes == 0 || nodes > SIM_MAX_NODES || seed == 0) {
        fprintf(stderr, "jackdaw sim: %s\nusage: jackdaw sim %s\n",
                npos != 1    ? "one workload is required"
                : seed == 0  ? "--seed N: N >= 1"
                             : "--nodes N: 1..16777216",
                cmd_sim.usage);
        return EXIT_USAGE;
    }
    struct sim_config cfg;
    sim_config_default(&cfg);
    cfg.nodes = (uint32_t)nodes;
    cfg.seed = seed;
    const char *mode_name = NULL;
    if (parse_mode(mode, &cfg.submit, &mode_name))
        return EXIT_USAGE;
    if (latency && parse_latency(latency, &cfg.latency_s) < 0) {
        fprintf(stderr, "jackdaw sim: --latency '%s': expected seconds (100e-6) or a duration "
                        "(100us)\n", latency);
        return EXIT_USAGE;
    }
    if (apply_dataopts(&data, &cfg))
        return EXIT_USAGE;
    char *cause = NULL;
    bool slots_cores = false;
    rc = launcher_parse_slots(slots_text, speeds_text, &cfg.slots, &slots_cores, &cause);
    if (rc == 0 && slots_cores) {
        cause = xstrdup("--slots cores is not modelled: every simulated node has the same "
                        "slots");
        rc = -EINVAL;
    }
    double *speeds = NULL;
    if (rc == 0 && speeds_text) {
        speeds = xcalloc(cfg.nodes, sizeof *speeds);
        rc = launcher_parse_speeds(speeds_text, speeds, cfg.nodes, &cause);
    }
    if (rc < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", cause);
        free(cause);
        free(speeds);
        return EXIT_USAGE;
    }
    cfg.speeds = speeds;

    struct workload wl;
    struct wfcommons_options scale = {0};
    if (wfcommons_load_any(&wl, pos[0], &scale, &cause) < 0 ||
        workload_check_nodes(&wl, cfg.nodes, &cause) < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", cause);
        free(cause);
        free(speeds);
        return EXIT_BAD_INPUT;
    }
    int code = 0;
    const char *why = NULL;
    /* The configuration alone first, on a workload of no task: what it refuses is the
     * flags' (a usage error), what the workload adds is the workload's (bad input). */
    struct workload none = {.name = wl.name};
    rc = sim_check(&cfg, &none, &why);
    if (rc < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", why && *why ? why : strerror(-rc));
        code = EXIT_USAGE;
        goto out;
    }
    rc = sim_check(&cfg, &wl, &why);
    if (rc < 0) {
        fprintf(stderr, "jackdaw sim: cannot simulate '%s': %s\n", pos[0],
                why && *why ? why : strerror(-rc));
        code = EXIT_BAD_INPUT;
        goto out;
    }
    cfg.start_wall_ns = clock_wall_ns();
    struct simfile *file = NULL;
    if (trace) {
        char digest[33];
        job_workload_digest(pos[0], digest);
        struct simfile_run run = {
            .nodes = cfg.nodes, .slots = cfg.slots, .speeds = speeds,
            .node_args = data.words, .n_node_args = (size_t)data.nwords,
            .workload_name = wl.name, .workload_digest = digest, .start_ns = cfg.start_wall_ns,
            .latency_s = cfg.latency_s, .bandwidth_Bps = cfg.bandwidth_Bps,
            .sample_s = cfg.sample_s, .seed = cfg.seed, .mode = mode_name,
        };
        rc = simfile_open(&file, trace, &run, &cause);
        if (rc == 0)
            rc = simfile_record_job(file, cfg.job, &wl, digest, &cause);
        if (rc < 0) {
            fprintf(stderr, "jackdaw sim: %s\n", cause);
            free(cause);
            char *ignore = NULL;
            simfile_close(file, &ignore);
            free(ignore);
            code = rc == -EEXIST ? EXIT_USAGE : EXIT_INTERNAL;
            goto out;
        }
        cfg.sinks = simfile_sinks(file);
    }
    struct sim_summary s = {.tasks = wl.count, .nodes = cfg.nodes, .slots = cfg.slots,
                            .mode = mode_name, .speeds = speeds};
    int64_t t0 = clock_mono_ns();
    rc = sim_run(&wl, &cfg, &s.r, &why);
    s.wall_s = (double)(clock_mono_ns() - t0) / 1e9;
    if (simfile_close(file, &cause) < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", cause);
        free(cause);
        code = EXIT_INTERNAL;
    }
    if (rc < 0) {
        fprintf(stderr, "jackdaw sim: the simulation of '%s' failed: %s\n", pos[0],
                why && *why ? why : strerror(-rc));
        code = rc == -ENOTSUP ? EXIT_USAGE : EXIT_INTERNAL;
        goto out;
    }
    summarise(&s);
    if (json)
        print_json(&s, &cfg);
    else if (!quiet)
        print_text(&s, code == 0 ? trace : NULL);
    if (code == 0 && s.r.tasks_done < wl.count) {
        fprintf(stderr, "jackdaw sim: %llu of %u tasks were done when the simulation ended\n",
                (unsigned long long)s.r.tasks_done, wl.count);
        code = EXIT_RUN_FAILED;
    }
out:
    workload_fini(&wl);
    free(speeds);
    return code;
}
