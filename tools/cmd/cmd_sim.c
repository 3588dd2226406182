/*
 * jackdaw sim — a workload run on N simulated nodes by the same core/policy code the
 * daemons run (core/sim/sim.h, issue 20): no daemon, no socket, no clock; simulated
 * time.  Prints the summary `jackdaw run` prints (makespan, throughput, efficiency
 * against the ideal makespan of the work over the slots and speeds) plus the engine's
 * own figures, and with --trace writes a trace every trace tool reads as a real run's
 * (trace/collector/simfile.h).
 *
 * Three ways to run it, one set of flags (tools/cmd/sim_settings.h: run's flags with
 * run's parsers; what the simulator does not model, sim_check refuses by name):
 *   sim WORKLOAD [flags]          one simulation.
 *   sim --from TRACE [flags]      what-if: the recorded run rebuilt (tools/cmd/sim_from.h)
 *                                 and simulated as it ran, against report's figures of
 *                                 it; then, when flags change the cluster or the policy,
 *                                 simulated again with them over the recorded ones.
 *   sim ... --sweep PARAM=a,b,c   one simulation per value, a table of them.
 *
 * Exit codes: 0; EXIT_RUN_FAILED when a simulation ended with tasks not done;
 * EXIT_USAGE for a bad flag or what the simulator does not model; EXIT_BAD_INPUT for a
 * workload or trace that cannot be read or simulated, or a workload that is not the
 * trace's; EXIT_INTERNAL when a trace cannot be written.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/xalloc.h"
#include "core/client/job.h"
#include "core/model/wfcommons.h"
#include "core/model/workload.h"
#include "core/sim/sim.h"
#include "tools/cmd/cmd.h"
#include "tools/cmd/sim_from.h"
#include "tools/cmd/sim_settings.h"
#include "tools/cmd/sim_summary.h"

static int sim_main(int argc, char **argv);

const struct cmd cmd_sim = {
    .name = "sim",
    .usage = "WORKLOAD | --from TRACE [--workload FILE] [--nodes N] [--slots S] "
             "[--speeds LIST|C1..C5] [--mode M] [--policy P] [--placement P] [--latency T] "
             "[--bandwidth RATE] [--host-rate RATE] [--seed N] [--engine des|simgrid] "
             "[--sweep PARAM=A,B,...] "
             "[--trace FILE|PREFIX] [--json]",
    .summary = "simulate a workload on N nodes with the daemons' policy code, or replay a "
               "recorded run under another policy",
    .main = sim_main,
};

/* The worse of two exit codes for the command's end: a usage or input error over a run
 * that ended with tasks not done. */
static int worse(int a, int b)
{
    return a > b ? a : b;
}

static void report_not_done(const struct sim_summary *s)
{
    fprintf(stderr, "jackdaw sim: %llu of %u tasks were done when the simulation ended\n",
            (unsigned long long)s->r.tasks_done, s->tasks);
}

/* Builds a plan, the usage error printed when it cannot be. */
static int build(struct sim_plan *p, const struct sim_settings *s, const char *what)
{
    char *cause = NULL;
    if (sim_plan_build(p, s, &cause) == 0)
        return 0;
    fprintf(stderr, "jackdaw sim: %s%s\n", what ? what : "", cause);
    free(cause);
    return EXIT_USAGE;
}

/* What the command prints and writes, whichever way it runs. */
struct sim_output {
    const char *trace;          /* FILE, or a sweep's PREFIX; NULL: none */
    bool json, quiet;
};

/* ---- tables: the what-if comparison and the sweep ------------------------------------ */

/* One line of a comparison: a recorded run's figures or a simulated one's. */
struct sim_row {
    double makespan_s, efficiency, throughput_tps, bytes_moved, steals_ok, steals_tried;
    double tasks_pushed;
};

static struct sim_row row_of(const struct sim_summary *s)
{
    const struct sim_result *r = &s->r;
    return (struct sim_row){.makespan_s = r->makespan_s, .efficiency = s->efficiency,
                            .throughput_tps = s->throughput_tps,
                            .bytes_moved = (double)r->bytes_moved,
                            .steals_ok = (double)r->steals_ok,
                            .steals_tried = (double)r->steal_attempts,
                            .tasks_pushed = (double)r->tasks_pushed};
}

static void print_head(const char *first)
{
    printf("  %-16s %10s %10s %16s %15s %7s %11s\n", first, "makespan", "efficiency",
           "throughput", "steals ok/tried", "pushed", "bytes moved");
}

static void print_row(const char *label, const struct sim_row *w, const char *tail)
{
    char steals[48];
    snprintf(steals, sizeof steals, "%.0f/%.0f", w->steals_ok, w->steals_tried);
    printf("  %-16s %8.3f s %8.1f %% %8.1f tasks/s %15s %7.0f %8.1f MB%s%s\n", label,
           w->makespan_s, 100 * w->efficiency, w->throughput_tps, steals, w->tasks_pushed,
           w->bytes_moved / 1e6, tail ? "  " : "", tail ? tail : "");
}

/* 100 (b - a) / a, or 0 when a is not positive. */
static double change_pct(double a, double b)
{
    return a > 0 ? 100 * (b - a) / a : 0;
}

/* --sweep PARAM=a,b,c: the parameter, the flag it sets and its values (in copy). */
struct sim_sweep {
    const char *param, *flag;
    char *copy;                 /* owned: the values, cut at the commas */
    const char **values;        /* owned array, borrowed strings */
    size_t count;
    struct sim_plan *plans;     /* owned, `built` of `count` built (sweep_build) */
    size_t built;
};

/* The parameters a sweep takes, and the flag each one sets. */
static const char *const sweep_params[][2] = {
    {"threshold", "threshold"}, {"tt", "tt"}, {"neighbours", "neighbours"},
    {"amount", "amount"}, {"radius", "radius"}, {"poll-initial", "poll-initial-ms"},
    {"poll-max", "poll-max-ms"}, {"latency", "latency"}, {"bandwidth", "bandwidth"},
    {"nodes", "nodes"}, {"slots", "slots"}, {"placement", "placement"},
};

static int sweep_parse(struct sim_sweep *sw, const char *text)
{
    memset(sw, 0, sizeof *sw);
    const char *eq = strchr(text, '=');
    size_t len = eq ? (size_t)(eq - text) : strlen(text);
    for (size_t i = 0; i < sizeof sweep_params / sizeof sweep_params[0]; i++)
        if (strlen(sweep_params[i][0]) == len && strncmp(sweep_params[i][0], text, len) == 0) {
            sw->param = sweep_params[i][0];
            sw->flag = sweep_params[i][1];
        }
    if (!sw->param) {
        fprintf(stderr, "jackdaw sim: --sweep '%s': unknown parameter '%.*s' (threshold, tt, "
                        "neighbours, amount, radius, poll-initial, poll-max, latency, "
                        "bandwidth, nodes, slots, placement)\n", text, (int)len, text);
        return EXIT_USAGE;
    }
    if (!eq || !eq[1]) {
        fprintf(stderr, "jackdaw sim: --sweep '%s': expected %s=VALUE,VALUE,...\n", text,
                sw->param);
        return EXIT_USAGE;
    }
    sw->copy = xstrdup(eq + 1);
    size_t cap = 1;
    for (const char *c = sw->copy; *c; c++)
        cap += *c == ',';
    sw->values = xcalloc(cap, sizeof *sw->values);
    for (char *save = NULL, *v = strtok_r(sw->copy, ",", &save); v;
         v = strtok_r(NULL, ",", &save))
        sw->values[sw->count++] = v;
    if (sw->count == 0) {
        fprintf(stderr, "jackdaw sim: --sweep '%s': no value\n", text);
        free(sw->values);
        free(sw->copy);
        return EXIT_USAGE;
    }
    return 0;
}

static void sweep_fini(struct sim_sweep *sw)
{
    for (size_t i = 0; i < sw->built; i++)
        sim_plan_fini(&sw->plans[i]);
    free(sw->plans);
    free(sw->values);
    free(sw->copy);
}

/* Every value's plan over base, before anything runs: a bad value is refused first,
 * naming the parameter. */
static int sweep_build(struct sim_sweep *sw, const struct sim_settings *base)
{
    sw->plans = xcalloc(sw->count, sizeof *sw->plans);
    for (; sw->built < sw->count; sw->built++) {
        struct sim_settings s = *base;
        *sim_settings_slot(&s, sw->flag) = sw->values[sw->built];
        char *what = xasprintf("--sweep %s=%s: ", sw->param, sw->values[sw->built]);
        int code = build(&sw->plans[sw->built], &s, what);
        free(what);
        if (code)
            return code;
    }
    return 0;
}

/* The sweep's simulations, one per value with its trace PREFIX-VALUE.avro, and their
 * table.  recorded: the run the rows are compared with (--from), or NULL. */
static int run_sweep(const struct sim_input *in, struct sim_sweep *sw,
                     const struct sim_output *out, const struct sim_recorded *recorded)
{
    struct sim_plan *plans = sw->plans;
    struct sim_summary *sums = xcalloc(sw->count, sizeof *sums);
    int code = 0;
    for (size_t i = 0; i < sw->count && worse(code, EXIT_RUN_FAILED) == EXIT_RUN_FAILED; i++) {
        char *trace = out->trace ? xasprintf("%s-%s.avro", out->trace, sw->values[i]) : NULL;
        int rc = sim_summary_run(in, &plans[i], trace, &sums[i]);
        free(trace);
        if (rc == EXIT_RUN_FAILED)
            report_not_done(&sums[i]);
        code = worse(code, rc);
    }
    if (code && code != EXIT_RUN_FAILED)
        goto out;
    if (out->json) {
        json_t *rows = json_array();
        for (size_t i = 0; i < sw->count; i++) {
            json_t *o = sim_summary_json(&sums[i], &plans[i].cfg);
            json_object_set_new(o, "param", json_string(sw->param));
            json_object_set_new(o, "value", json_string(sw->values[i]));
            if (out->trace)
                json_object_set_new(o, "trace", json_sprintf("%s-%s.avro", out->trace,
                                                             sw->values[i]));
            if (recorded)
                json_object_set_new(o, "change_pct", json_real(change_pct(
                                           recorded->makespan_s, sums[i].r.makespan_s)));
            json_array_append_new(rows, o);
        }
        sim_summary_print_json(rows);
    } else if (!out->quiet) {
        printf("jackdaw sim: %s swept over %zu values, %u tasks, simulated\n", sw->param,
               sw->count, in->wl->count);
        print_head(sw->param);
        for (size_t i = 0; i < sw->count; i++) {
            struct sim_row w = row_of(&sums[i]);
            char tail[64] = "";
            if (recorded)
                snprintf(tail, sizeof tail, "%+.1f %% against the recorded run",
                         change_pct(recorded->makespan_s, w.makespan_s));
            print_row(sw->values[i], &w, recorded ? tail : NULL);
        }
        if (out->trace)
            printf("  traces           %s-VALUE.avro\n", out->trace);
    }
out:
    free(sums);
    return code;
}

/* ---- the three ways ------------------------------------------------------------------- */

/* The fewest nodes a sweep runs on (or the plan's): objects pinned to a node must find it
 * in every run. */
static uint32_t fewest_nodes(const struct sim_plan *plan, const struct sim_sweep *sw)
{
    uint32_t n = plan ? plan->cfg.nodes : UINT32_MAX;
    for (size_t i = 0; sw && i < sw->built; i++)
        if (sw->plans[i].cfg.nodes < n)
            n = sw->plans[i].cfg.nodes;
    return n;
}

static int plain_main(const char *path, struct sim_settings *cli, struct sim_sweep *sw,
                      const struct sim_output *out)
{
    struct sim_plan plan;
    if (sw ? sweep_build(sw, cli) : build(&plan, cli, NULL))
        return EXIT_USAGE;
    struct workload wl;
    struct wfcommons_options scale = {0};
    char *cause = NULL;
    if (wfcommons_load_any(&wl, path, &scale, &cause) < 0 ||
        workload_check_nodes(&wl, fewest_nodes(sw ? NULL : &plan, sw), &cause) < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", cause);
        free(cause);
        if (!sw)
            sim_plan_fini(&plan);
        return EXIT_BAD_INPUT;
    }
    char digest[33];
    job_workload_digest(path, digest);
    struct sim_input in = {.wl = &wl, .path = path, .digest = digest};
    int code;
    if (sw) {
        code = run_sweep(&in, sw, out, NULL);
    } else {
        struct sim_summary s;
        code = sim_summary_run(&in, &plan, out->trace, &s);
        if (code == 0 || code == EXIT_RUN_FAILED) {
            if (out->json)
                sim_summary_print_json(sim_summary_json(&s, &plan.cfg));
            else if (!out->quiet)
                sim_summary_print(&s, out->trace);
            if (code)
                report_not_done(&s);
        }
        sim_plan_fini(&plan);
    }
    workload_fini(&wl);
    return code;
}

/* A recorded workload's pinned objects on fewer nodes than it ran on. */
static int check_nodes(const struct sim_input *in, uint32_t nodes)
{
    char *cause = NULL;
    if (nodes == UINT32_MAX || workload_check_nodes(in->wl, nodes, &cause) == 0)
        return 0;
    fprintf(stderr, "jackdaw sim: %s\n", cause);
    free(cause);
    return EXIT_BAD_INPUT;
}

static json_t *recorded_json(const struct sim_recorded *rec, const char *trace)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f}", "trace", trace,
                          "workload", rec->workload_path, "digest", rec->digest, "tasks",
                          (json_int_t)rec->tasks, "tasks_done", (json_int_t)rec->tasks_done,
                          "makespan_s", rec->makespan_s, "efficiency", rec->efficiency,
                          "throughput_tps", rec->throughput_tps, "ideal_s", rec->ideal_s,
                          "work_s", rec->work_s);
    json_object_set_new(o, "bytes_moved", json_real(rec->bytes_moved));
    json_object_set_new(o, "tasks_pushed", json_real(rec->tasks_pushed));
    json_object_set_new(o, "steals_ok", json_real(rec->steals_ok));
    json_object_set_new(o, "steals_tried", json_real(rec->steals_tried));
    json_object_set_new(o, "tasks_stolen", json_real(rec->tasks_stolen));
    json_object_set_new(o, "durations_measured", json_integer(rec->measured));
    json_object_set_new(o, "durations_kept", json_integer(rec->kept));
    json_object_set_new(o, "durations_guessed", json_integer(rec->guessed));
    json_object_set_new(o, "mode", json_string(rec->settings.mode ? rec->settings.mode
                                                                  : "hashed"));
    json_object_set_new(o, "mode_recorded", json_boolean(rec->mode_recorded));
    json_object_set_new(o, "simulated", json_boolean(rec->simulated));
    return o;
}

/* The what-if's text: the recorded run, its reproduction and the alternative. */
static void print_whatif(const struct sim_recorded *rec, const char *from,
                         const struct sim_summary *rep, const struct sim_summary *alt,
                         const char *flags, const char *trace)
{
    printf("jackdaw sim: the run of %s replayed (%llu tasks of %s on %u nodes, %u slots; "
           "mode: %s%s%s)\n", from, (unsigned long long)rec->tasks, rec->workload_path,
           rep->nodes, rep->total_slots, rec->mode_recorded ? "recorded " : "", rep->mode,
           rec->mode_recorded ? "" : ", assumed: not recorded");
    printf("  durations        %u measured in the trace, %u from the workload",
           rec->measured, rec->kept);
    if (rec->guessed)
        printf(", %u commands given the mean", rec->guessed);
    printf("\n");
    print_head("");
    struct sim_row w = {.makespan_s = rec->makespan_s, .efficiency = rec->efficiency,
                        .throughput_tps = rec->throughput_tps,
                        .bytes_moved = rec->bytes_moved, .steals_ok = rec->steals_ok,
                        .steals_tried = rec->steals_tried, .tasks_pushed = rec->tasks_pushed};
    print_row("recorded", &w, NULL);
    w = row_of(rep);
    double err = change_pct(rec->makespan_s, w.makespan_s);
    char tail[96];
    snprintf(tail, sizeof tail, "error %+.1f %%", err);
    print_row("reproduced", &w, tail);
    if (alt) {
        w = row_of(alt);
        snprintf(tail, sizeof tail, "change %+.1f %% (%+.1f %% against the reproduction)",
                 change_pct(rec->makespan_s, w.makespan_s),
                 change_pct(rep->r.makespan_s, w.makespan_s));
        print_row("alternative", &w, tail);
    }
    printf("  the simulator reproduces the recorded run within %.1f %% (makespan %.3f s "
           "against %.3f s)\n", fabs(err), rep->r.makespan_s, rec->makespan_s);
    if (alt)
        printf("  alternative      %s: makespan %.3f s, %+.1f %% against the recorded run\n",
               flags, alt->r.makespan_s, change_pct(rec->makespan_s, alt->r.makespan_s));
    if (trace)
        printf("  trace            %s (the %s)\n", trace, alt ? "alternative" : "reproduction");
}

static int whatif_main(const char *from, const char *workload, struct sim_settings *cli,
                       struct sim_sweep *sw, const struct sim_output *out)
{
    struct sim_recorded rec;
    char *cause = NULL;
    int rc = sim_from_load(&rec, from, workload, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw sim: %s\n", cause ? cause : strerror(-rc));
        free(cause);
        sim_from_fini(&rec);
        return rc == -ENOTSUP ? EXIT_USAGE : EXIT_BAD_INPUT;
    }
    if (!rec.mode_recorded)
        fprintf(stderr, "jackdaw sim: note: trace '%s' does not record how its tasks were "
                        "submitted (a trace of before jackdaw recorded the mode): replayed as "
                        "hashed, run's default\n", from);
    if (rec.kept + rec.guessed)
        fprintf(stderr, "jackdaw sim: note: %u of %u tasks did not end done in trace '%s': "
                        "they keep the workload's duration%s\n", rec.kept + rec.guessed,
                rec.wl.count, from, rec.guessed ? " (commands without one: the mean)" : "");
    struct sim_input in = {.wl = &rec.wl, .path = rec.workload_path, .digest = rec.digest,
                           .work_s = rec.work_s};
    /* The reproduction runs the recorded flags with the command line's seed, sample
     * period and engine, which change nothing of the run; the alternative, every flag
     * given. */
    struct sim_settings recorded = rec.settings, alternative = rec.settings;
    struct sim_settings same = {.seed = cli->seed, .engine = cli->engine};
    same.data.sample_ms = cli->data.sample_ms;
    sim_settings_merge(&recorded, &same);
    sim_settings_merge(&alternative, cli);
    bool alt = !sw && sim_settings_changes_run(cli);
    struct sim_plan rplan, aplan;
    struct sim_summary rep, other;
    int code = build(&rplan, &recorded, "the recorded run: ");
    if (code)
        goto out;
    if (alt && (code = build(&aplan, &alternative, NULL))) {
        sim_plan_fini(&rplan);
        goto out;
    }
    if ((sw && (code = sweep_build(sw, &alternative))) ||
        (code = check_nodes(&in, fewest_nodes(alt ? &aplan : NULL, sw))))
        goto done;
    code = sim_summary_run(&in, &rplan, alt || sw ? NULL : out->trace, &rep);
    if (code == 0 && alt)
        code = sim_summary_run(&in, &aplan, out->trace, &other);
    if (code == EXIT_RUN_FAILED)
        report_not_done(alt ? &other : &rep);
    if (code == 0 || code == EXIT_RUN_FAILED) {
        char *flags = alt ? sim_settings_describe(cli) : NULL;
        if (sw) {
            if (!out->json && !out->quiet)
                print_whatif(&rec, from, &rep, NULL, NULL, NULL);
            code = worse(code, run_sweep(&in, sw, out, &rec));
        } else if (out->json) {
            json_t *o = json_object();
            json_object_set_new(o, "recorded", recorded_json(&rec, from));
            json_t *r = sim_summary_json(&rep, &rplan.cfg);
            json_object_set_new(r, "error_pct", json_real(change_pct(rec.makespan_s,
                                                                     rep.r.makespan_s)));
            json_object_set_new(o, "reproduced", r);
            if (alt) {
                json_t *a = sim_summary_json(&other, &aplan.cfg);
                json_object_set_new(a, "flags", json_string(flags));
                json_object_set_new(a, "change_pct",
                                    json_real(change_pct(rec.makespan_s, other.r.makespan_s)));
                json_object_set_new(a, "change_vs_reproduced_pct",
                                    json_real(change_pct(rep.r.makespan_s, other.r.makespan_s)));
                json_object_set_new(o, "alternative", a);
            }
            sim_summary_print_json(o);
        } else if (!out->quiet) {
            print_whatif(&rec, from, &rep, alt ? &other : NULL, flags, out->trace);
        }
        free(flags);
    }
done:
    sim_plan_fini(&rplan);
    if (alt)
        sim_plan_fini(&aplan);
out:
    sim_from_fini(&rec);
    return code;
}

static int sim_main(int argc, char **argv)
{
    const char *trace = NULL, *from = NULL, *workload = NULL, *sweep = NULL;
    bool json = false, quiet = false;
    struct sim_settings cli;
    memset(&cli, 0, sizeof cli);
    const struct opt own[] = {
        {"from", OPT_STRING, &from,
         "TRACE  replay a recorded run: as it ran, then with the flags given"},
        {"workload", OPT_STRING, &workload,
         "FILE  --from: the run's workload (default: the one the trace names)"},
        {"sweep", OPT_STRING, &sweep,
         "PARAM=A,B,..  one simulation per value: threshold, tt, neighbours, amount, radius, "
         "poll-initial, poll-max, latency, bandwidth, nodes, slots, placement"},
        {"trace", OPT_STRING, &trace,
         "FILE  write the simulated run's trace (a new file); --sweep: PREFIX-VALUE.avro"},
        {"json", OPT_FLAG, &json, "  summary as one JSON object on stdout"},
        {"quiet", OPT_FLAG, &quiet, "  no summary unless --json (errors only)"},
    };
    struct opt opts[SIM_SETTINGS_MAX_OPTS + sizeof own / sizeof own[0] + 1];
    size_t nopts = sim_settings_opts(&cli, opts);
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        opts[nopts++] = own[i];
    opts[nopts] = (struct opt){0};
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_sim, argc, argv, opts, pos, 1, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (from ? npos != 0 : npos != 1 || workload) {
        fprintf(stderr, "jackdaw sim: %s\nusage: jackdaw sim %s\n",
                from   ? "--from TRACE takes no workload argument (give it with --workload)"
                : npos ? "--workload goes with --from TRACE"
                       : "one workload is required",
                cmd_sim.usage);
        return EXIT_USAGE;
    }
    struct sim_output out = {.trace = trace, .json = json, .quiet = quiet};
    struct sim_sweep sw;
    if (sweep && (rc = sweep_parse(&sw, sweep)) != 0)
        return rc;
    if (from)
        rc = whatif_main(from, workload, &cli, sweep ? &sw : NULL, &out);
    else
        rc = plain_main(pos[0], &cli, sweep ? &sw : NULL, &out);
    if (sweep)
        sweep_fini(&sw);
    return rc;
}
