/*
 * sim_summary — one simulation of `jackdaw sim` (tools/cmd/cmd_sim.c) and what it says:
 * the configuration and the workload checked (sim_check), the trace opened when asked
 * (trace/collector/simfile.h), the engine run (core/sim/sim.h, or with --engine simgrid
 * core/sim/sim_sg.h), and the summary `jackdaw run` prints — makespan, throughput,
 * efficiency against the ideal makespan of the work over the slots and speeds
 * (core/client/follow.c, follow_summary) — plus the engine's own figures, as text or
 * as one JSON object.
 *
 * Prints its errors ("jackdaw sim: …") and returns the command's exit code; owns nothing
 * past a call.
 */
#include "tools/cmd/sim_summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/client/exitcode.h"
#include "trace/collector/simfile.h"

static void summarise(struct sim_summary *s)
{
    double capacity = 0;
    s->total_slots = 0;
    for (uint32_t i = 0; i < s->nodes; i++) {
        uint32_t slots = s->node_slots ? s->node_slots[i] : s->slots;
        capacity += slots * (s->speeds ? s->speeds[i] : 1.0);
        s->total_slots += slots;
    }
    double mk = s->r.makespan_s;
    double work = s->work_s > 0 ? s->work_s : s->r.work_s;
    s->ideal_s = capacity > 0 ? work / capacity : 0;
    s->efficiency = mk > 0 ? s->ideal_s / mk : 0;
    s->throughput_tps = mk > 0 ? s->tasks / mk : 0;
    s->avg_time_per_task_per_cpu_s = s->tasks ? mk * s->total_slots / s->tasks : 0;
    s->events_per_s = s->wall_s > 0 ? (double)s->r.events / s->wall_s : 0;
}

void sim_summary_print(const struct sim_summary *s, const char *trace)
{
    const struct sim_result *r = &s->r;
    printf("jackdaw sim: %u tasks on %u nodes, %u slots (%s submission), simulated%s\n",
           s->tasks, s->nodes, s->total_slots, s->mode,
           s->engine == SIM_ENGINE_SIMGRID ? " by SimGrid" : "");
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

json_t *sim_summary_json(const struct sim_summary *s, const struct sim_config *cfg)
{
    const struct sim_result *r = &s->r;
    json_t *nodes = json_array();
    for (uint32_t i = 0; i < s->nodes; i++)
        json_array_append_new(nodes, json_pack("{s:i, s:i, s:f}", "id", (int)i, "slots",
                                               (int)(s->node_slots ? s->node_slots[i]
                                                                   : s->slots),
                                               "speed",
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
    json_object_set_new(o, "engine", json_string(sim_engine_name(s->engine)));
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
    return o;
}

void sim_summary_print_json(json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9));
    printf("%s\n", text);
    free(text);
    json_decref(o);
}

/* The configuration is checked alone first, on a workload of no task: what it refuses
 * is the flags' (a usage error), what the workload adds is the workload's (bad input). */
int sim_summary_run(const struct sim_input *in, struct sim_plan *p, const char *trace,
                    struct sim_summary *s)
{
    const char *why = NULL;
    struct workload none = {.name = in->wl->name};
    bool sg = p->engine == SIM_ENGINE_SIMGRID;
    int (*check)(const struct sim_config *, const struct workload *, const char **) =
        sg ? sim_sg_check : sim_check;
    int rc = check(&p->cfg, &none, &why);
    if (rc < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", why && *why ? why : strerror(-rc));
        return EXIT_USAGE;
    }
    rc = check(&p->cfg, in->wl, &why);
    if (rc < 0) {
        fprintf(stderr, "jackdaw sim: cannot simulate '%s': %s\n", in->path,
                why && *why ? why : strerror(-rc));
        return EXIT_BAD_INPUT;
    }
    p->cfg.start_wall_ns = clock_wall_ns();
    p->cfg.sinks = NULL;
    struct simfile *file = NULL;
    char *cause = NULL;
    if (trace) {
        struct simfile_run run = {
            .nodes = p->cfg.nodes, .slots = p->cfg.slots, .node_slots = p->node_slots,
            .speeds = p->speeds,
            .node_args = p->data.words, .n_node_args = (size_t)p->data.nwords,
            .workload_name = in->wl->name, .workload_digest = in->digest,
            .start_ns = p->cfg.start_wall_ns, .latency_s = p->cfg.latency_s,
            .bandwidth_Bps = p->cfg.bandwidth_Bps, .sample_s = p->cfg.sample_s,
            .seed = p->cfg.seed, .mode = p->mode_name,
        };
        rc = simfile_open(&file, trace, &run, &cause);
        if (rc == 0)
            rc = simfile_record_job(file, p->cfg.job, in->wl, in->digest, &cause);
        if (rc < 0) {
            fprintf(stderr, "jackdaw sim: %s\n", cause);
            free(cause);
            char *ignore = NULL;
            simfile_close(file, &ignore);
            free(ignore);
            return rc == -EEXIST ? EXIT_USAGE : EXIT_INTERNAL;
        }
        p->cfg.sinks = simfile_sinks(file);
    }
    *s = (struct sim_summary){.tasks = in->wl->count, .nodes = p->cfg.nodes,
                              .slots = p->cfg.slots, .mode = p->mode_name,
                              .speeds = p->speeds, .node_slots = p->node_slots,
                              .work_s = in->work_s, .engine = p->engine};
    int64_t t0 = clock_mono_ns();
    rc = (sg ? sim_sg_run : sim_run)(in->wl, &p->cfg, &s->r, &why);
    s->wall_s = (double)(clock_mono_ns() - t0) / 1e9;
    int code = 0;
    if (simfile_close(file, &cause) < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", cause);
        free(cause);
        code = EXIT_INTERNAL;
    }
    if (rc < 0) {
        fprintf(stderr, "jackdaw sim: the simulation of '%s' failed: %s\n", in->path,
                why && *why ? why : strerror(-rc));
        return rc == -ENOTSUP ? EXIT_USAGE : EXIT_INTERNAL;
    }
    summarise(s);
    if (code == 0 && s->r.tasks_done < in->wl->count)
        code = EXIT_RUN_FAILED;
    return code;
}
