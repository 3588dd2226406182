/*
 * sim_from — a recorded run rebuilt for the simulator (tools/cmd/sim_from.h).
 *
 * Two passes over the trace, both through readers the trace tools already trust: the
 * trace reader for the run header (cluster, flags, workload name and digest), and
 * report's analysis for the figures report prints and for the run of each task that
 * ended DONE (report_analysis.done_runs: its time times its node's speed), so that the
 * recorded figures `sim --from` prints are report's to the digit.
 */
#include "tools/cmd/sim_from.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/base/xalloc.h"
#include "core/client/job.h"
#include "core/model/submit_mode.h"
#include "core/model/wfcommons.h"
#include "tools/cmd/run_bound.h"
#include "tools/report/analysis.h"
#include "trace/format/reader.h"

/* The header's JSON (owned reference), or NULL with *cause. */
static json_t *read_header(const char *trace, char **cause)
{
    struct trace_reader *r;
    char *why = NULL;
    int rc = trace_reader_open(&r, trace, &why);
    if (rc < 0) {
        *cause = why ? why : xasprintf("cannot open trace '%s': %s", trace, strerror(-rc));
        return NULL;
    }
    const char *text = trace_reader_info(r)->header_json;
    json_error_t err;
    json_t *root = text ? json_loads(text, 0, &err) : NULL;
    trace_reader_destroy(r);
    if (!json_is_object(root)) {
        json_decref(root);
        *cause = xasprintf("trace '%s' has no readable run header: the cluster and the "
                           "flags of the run are unknown", trace);
        return NULL;
    }
    return root;
}

static void note_left_out(const char *word, void *arg)
{
    (void)arg;
    fprintf(stderr, "jackdaw sim: note: the recorded daemon flag '%s' means nothing to the "
                    "simulator: left out\n", word);
}

/* config.node_args into the settings' dataopts (dataopts_read_words): a flag outside
 * dataopts is one the simulator has no sense for, said once and left out. */
static void read_node_args(struct sim_recorded *rec, json_t *args)
{
    size_t n = json_array_size(args);
    const char **words = xcalloc(n ? n : 1, sizeof *words);
    for (size_t i = 0; i < n; i++)
        words[i] = json_string_value(json_array_get(args, i));
    dataopts_read_words(&rec->settings.data, words, n, note_left_out, NULL);
    free(words);
}

/* The cluster, flags, workload name and (a simulated run's) mode from the header. */
static int read_run(struct sim_recorded *rec, const char *trace, const char **wl_name,
                    const char **digest, char **cause)
{
    json_t *root = rec->header;
    json_t *nodes = json_object_get(root, "nodes");
    size_t nnodes = json_array_size(nodes);
    if (nnodes == 0) {
        *cause = xasprintf("trace '%s': the run header lists no nodes", trace);
        return -EINVAL;
    }
    json_int_t slots = 0;
    char *speeds = xstrdup(""), *slot_list = xstrdup("");
    bool all_one = true, same_slots = true;
    for (size_t i = 0; i < nnodes; i++) {
        json_t *node = json_array_get(nodes, i);
        json_int_t s = json_integer_value(json_object_get(node, "slots"));
        double speed = json_number_value(json_object_get(node, "speed"));
        if (!(speed > 0 && speed <= 1))
            speed = 1;
        if (speed != 1)
            all_one = false;
        if (s < 1) {
            free(speeds);
            free(slot_list);
            *cause = xasprintf("trace '%s': the run header gives node %zu no slots", trace, i);
            return -EINVAL;
        }
        if (i > 0 && s != slots)
            same_slots = false;
        slots = s;
        char *more = xasprintf("%s%s%lld", slot_list, i ? "," : "", (long long)s);
        free(slot_list);
        slot_list = more;
        char *next = xasprintf("%s%s%.9g", speeds, i ? "," : "", speed);
        free(speeds);
        speeds = next;
    }
    rec->text[0] = xasprintf("%zu", nnodes);
    /* Nodes of different sizes go to the simulator as one count per node. */
    if (same_slots) {
        rec->text[1] = xasprintf("%lld", (long long)slots);
        free(slot_list);
    } else {
        rec->text[1] = slot_list;
    }
    rec->settings.nodes = rec->text[0];
    rec->settings.slots = rec->text[1];
    if (all_one)
        free(speeds);
    else
        rec->settings.speeds = rec->text[2] = speeds;
    read_node_args(rec, json_object_get(json_object_get(root, "config"), "node_args"));
    /* A simulated run's header has what a real one leaves to the defaults.  Its mode is
     * the fallback of a simulated trace of before JOB_SUBMIT recorded one (use_mode). */
    json_t *sim = json_object_get(root, "simulation");
    rec->simulated = json_is_true(json_object_get(root, "simulated"));
    const char *mode = json_string_value(json_object_get(sim, "mode"));
    if (mode) {
        rec->settings.mode = mode;
        rec->mode_recorded = true;
    }
    if (json_is_number(json_object_get(sim, "latency_s")))
        rec->settings.latency = rec->text[3] =
            xasprintf("%.9g", json_number_value(json_object_get(sim, "latency_s")));
    json_int_t seed = json_integer_value(json_object_get(sim, "seed"));
    if (seed > 0)
        rec->settings.seed = rec->text[4] = xasprintf("%lld", (long long)seed);
    json_t *wl = json_object_get(root, "workload");
    *wl_name = json_string_value(json_object_get(wl, "name"));
    *digest = json_string_value(json_object_get(wl, "digest"));
    return 0;
}

/*
 * The submission mode of the replayed job, from its JOB_SUBMIT (report's analysis reads
 * it with the workload's name) over the header's: a real run's only record of it.  The
 * trace's word is checked as any outside input is; the data mode is refused rather than
 * replaced, since a reproduction under another mode would be a what-if passed off as
 * the run (the simulator does not place tasks by their data, sim_settings.c).
 */
static int use_mode(struct sim_recorded *rec, const struct report_analysis *a,
                    const char *trace, char **cause)
{
    if (!a->workload_mode)
        return 0;
    if (!submit_mode_is_name(a->workload_mode)) {
        *cause = xasprintf("trace '%s': the JOB_SUBMIT of job %u records submission mode "
                           "'%.32s', which is none of hashed, one, roundrobin or data", trace,
                           a->workload_job, a->workload_mode);
        return -EBADMSG;
    }
    int m = submit_mode_parse(a->workload_mode);
    if (m == SUBMIT_DATA) {
        *cause = xasprintf("trace '%s' records a run submitted with --mode data, which the "
                           "simulator does not model (it replays hashed, one and roundrobin "
                           "runs)", trace);
        return -ENOTSUP;
    }
    rec->settings.mode = submit_mode_name((enum submit_mode)m);
    rec->mode_recorded = true;
    return 0;
}

/* report's figures of the run, and the measured durations into rec->wl. */
static void use_figures(struct sim_recorded *rec, const struct report_analysis *a)
{
    const double *f = a->figures;
    rec->tasks = (uint64_t)f[RF_TASKS_SUBMITTED];
    rec->tasks_done = (uint64_t)f[RF_TASKS_DONE];
    rec->makespan_s = f[RF_MAKESPAN_S];
    rec->efficiency = f[RF_EFFICIENCY];
    rec->throughput_tps = f[RF_THROUGHPUT_TPS];
    rec->ideal_s = f[RF_IDEAL_S];
    rec->bytes_moved = f[RF_BYTES_MOVED];
    rec->tasks_pushed = f[RF_TASKS_PUSHED];
    rec->steals_ok = f[RF_STEAL_GRANTS];
    rec->steals_tried = f[RF_STEAL_GRANTS] + f[RF_STEAL_FAILS];
    rec->tasks_stolen = f[RF_TASKS_STOLEN];
}

/* Every task of the run's job that ended DONE gets its measured duration; commands
 * become sleeps.  The declared work (rec->work_s) is counted before the durations
 * change, as report counts it. */
static void use_durations(struct sim_recorded *rec, const struct report_analysis *a)
{
    struct workload *wl = &rec->wl;
    double *measured = xcalloc(wl->count ? wl->count : 1, sizeof *measured);
    bool *seen = xcalloc(wl->count ? wl->count : 1, sizeof *seen);
    double sum = 0;
    for (size_t i = 0; i < a->ndone_runs; i++) {
        const struct report_run *r = &a->done_runs[i];
        uint32_t index = (uint32_t)r->task;
        if ((uint32_t)(r->task >> 32) != a->workload_job || index >= wl->count)
            continue;
        /* The last DONE run read is the final one (report keeps one END per task). */
        if (!seen[index])
            rec->measured++, sum += r->work_s;
        else
            sum += r->work_s - measured[index];
        seen[index] = true;
        measured[index] = r->work_s;
    }
    double mean = rec->measured ? sum / rec->measured : 0;
    rec->work_s = 0;
    for (uint32_t i = 0; i < wl->count; i++) {
        struct workload_task *t = &wl->tasks[i];
        double declared = t->kind == TASK_SLEEP ? t->duration_s : 0;
        if (seen[i]) {
            t->duration_s = measured[i];
        } else if (t->kind == TASK_COMMAND && !(t->duration_s > 0)) {
            t->duration_s = mean;
            rec->guessed++;
        } else {
            rec->kept++;
        }
        rec->work_s += t->kind == TASK_SLEEP ? declared : t->duration_s;
        if (t->kind == TASK_COMMAND) {
            free(t->cmd);
            t->cmd = NULL;
        }
        t->kind = TASK_SLEEP;
    }
    free(measured);
    free(seen);
}

int sim_from_load(struct sim_recorded *rec, const char *trace, const char *workload,
                  char **cause)
{
    memset(rec, 0, sizeof *rec);
    if (access(trace, R_OK) < 0) {
        int err = errno;
        *cause = xasprintf("cannot read trace '%s': %s", trace, strerror(err));
        return -err;
    }
    json_t *root = read_header(trace, cause);
    if (!root)
        return -EBADMSG;
    rec->header = root;
    const char *wl_name = NULL, *digest = NULL;
    int rc = read_run(rec, trace, &wl_name, &digest, cause);
    if (rc < 0)
        return rc;
    struct report_analysis *a = NULL;
    struct report_options ro = {.bins = 1};
    rc = report_analyze(trace, &ro, &a, cause);
    if (rc == 0 && a->njobs > 1) {
        /* One job's run is replayed: the one that names the workload, alone. */
        ro.job = a->workload_job;
        report_analysis_destroy(a);
        a = NULL;
        rc = report_analyze(trace, &ro, &a, cause);
    }
    if (rc == 0)
        rc = use_mode(rec, a, trace, cause);
    if (rc < 0) {
        report_analysis_destroy(a);
        return rc;
    }
    if (!wl_name)
        wl_name = a->workload_path;
    if (workload) {
        rec->workload_path = xstrdup(workload);
    } else if (!wl_name) {
        *cause = xasprintf("trace '%s' names no workload: give it with --workload", trace);
        rc = -ENOENT;
    } else if (!(rec->workload_path = run_find_workload(trace, wl_name))) {
        *cause = xasprintf("cannot read workload '%s' (named by trace '%s'; give it with "
                           "--workload)", wl_name, trace);
        rc = -ENOENT;
    }
    if (rc == 0 && job_workload_digest(rec->workload_path, rec->digest) < 0) {
        *cause = xasprintf("cannot read workload '%s': %s", rec->workload_path,
                           strerror(errno ? errno : ENOENT));
        rc = -ENOENT;
    }
    if (rc == 0 && digest && *digest && strcmp(digest, rec->digest) != 0) {
        *cause = xasprintf("workload '%s' is not the one trace '%s' ran: its digest is %s, "
                           "the run's %s", rec->workload_path, trace, rec->digest, digest);
        rc = -EINVAL;
    }
    struct wfcommons_options scale = {0};
    if (rc == 0 && wfcommons_load_any(&rec->wl, rec->workload_path, &scale, cause) < 0)
        rc = -EINVAL;
    if (rc == 0) {
        free(a->workload_path);
        a->workload_path = xstrdup(rec->workload_path);
        report_use_workload(a, &rec->wl); /* as report counts the work */
        use_figures(rec, a);
        use_durations(rec, a);
    }
    report_analysis_destroy(a);
    return rc;
}

void sim_from_fini(struct sim_recorded *rec)
{
    workload_fini(&rec->wl);
    free(rec->workload_path);
    for (size_t i = 0; i < sizeof rec->text / sizeof rec->text[0]; i++)
        free(rec->text[i]);
    json_decref(rec->header);
    memset(rec, 0, sizeof *rec);
}
