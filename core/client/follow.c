/*
 * follow — see follow.h.
 */
#include "core/client/follow.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/text.h"
#include "core/base/xalloc.h"
#include "core/client/client.h"

/* A failed task's reason or output tail, as the summary shows it: exec sends the last
 * KiB of the output, but a daemon's message may be up to the protocol's 1 MiB. */
#define FOLLOW_DETAIL_SHOWN 2048

void follow_init(struct follow *f, const struct workload *wl, uint32_t job, uint32_t nodes,
                 const double *speeds, int64_t t_submit, FILE *records)
{
    memset(f, 0, sizeof *f);
    f->wl = wl;
    f->job = job;
    f->nodes = nodes;
    f->t_submit = t_submit;
    f->records = records;
    f->status = xcalloc(wl->count, 1);
    f->runs = xcalloc(wl->count, sizeof *f->runs);
    f->node = xcalloc(wl->count, sizeof *f->node);
    f->work = xcalloc(wl->count, sizeof *f->work);
    f->node_tasks = xcalloc(nodes, sizeof *f->node_tasks);
    f->node_speed = xcalloc(nodes, sizeof *f->node_speed);
    for (uint32_t i = 0; i < nodes; i++)
        f->node_speed[i] = speeds ? speeds[i] : 1.0;
}

void follow_fini(struct follow *f)
{
    free(f->status);
    free(f->runs);
    free(f->listed);
    free(f->node);
    free(f->work);
    free(f->node_tasks);
    free(f->node_speed);
    if (f->base) {
        for (uint32_t i = 0; i < f->nodes; i++)
            proto_stats_fini(&f->base[i]);
        free(f->base);
        free(f->base_got);
    }
    for (uint32_t i = 0; i < f->nfailures; i++)
        free(f->failures[i].detail);
}

static void write_record(struct follow *f, const struct proto_task_end *e, uint32_t index)
{
    json_t *o = json_pack("{s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:i}", "id", f->wl->tasks[index].id,
                          "index", (json_int_t)index, "status",
                          e->timed_out ? "timed out" : task_status_name(e->status),
                          "node", (json_int_t)e->node, "ready_ns", (json_int_t)e->t_ready,
                          "start_ns", (json_int_t)e->t_start, "end_ns", (json_int_t)e->t_end,
                          "exit", e->exit_code);
    if (e->term_signal)
        json_object_set_new(o, "signal", json_integer(e->term_signal));
    if (e->failures)
        json_object_set_new(o, "runs", json_integer((json_int_t)e->failures + 1));
    const struct task_usage *u = &e->usage;
    if (u->measured) {
        /* What the command's last run used: seconds as sacct prints them, bytes whole. */
        json_object_set_new(o, "cpu_user_s", json_real((double)u->user_ns / 1e9));
        json_object_set_new(o, "cpu_sys_s", json_real((double)u->sys_ns / 1e9));
        json_object_set_new(o, "max_rss_bytes", json_integer((json_int_t)u->max_rss));
        json_object_set_new(o, "read_bytes", json_integer((json_int_t)u->read_bytes));
        json_object_set_new(o, "write_bytes", json_integer((json_int_t)u->write_bytes));
    }
    /* 12 digits: CPU seconds to the microsecond, not 0.43690800000000002. */
    char *line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(12));
    fprintf(f->records, "%s\n", line);
    free(line);
    json_decref(o);
}

void follow_on_task_end(void *arg, const struct proto_task_end *e)
{
    struct follow *f = arg;
    uint32_t index = task_key_index(e->key);
    if (task_key_job(e->key) != f->job || index >= f->wl->count) {
        f->foreign++;
        return;
    }
    /* The first end counts (a daemon reports an end once its record took it); a
     * repeat is counted, never written as a second record.  An end listed from the
     * records at attach and reported as well is one end. */
    if (f->runs[index]++) {
        if (f->listed && f->listed[index] == 1 && f->runs[index] == 2)
            return;
        f->duplicates++;
        return;
    }
    if (f->records)
        write_record(f, e, index);
    f->status[index] = (uint8_t)(e->status + 1);
    f->node[index] = e->node;
    f->ended++;
    if (e->failures) {
        f->retried++;
        f->retries += e->failures;
    }
    if (e->t_end > f->t_last_end)
        f->t_last_end = e->t_end;
    const struct workload_task *wt = &f->wl->tasks[index];
    if (e->status != TASK_CANCELLED && e->node < f->nodes) {
        f->node_tasks[e->node]++;
        /* A sleep cut short by its time limit did only what it ran. */
        if (wt->kind == TASK_SLEEP && e->status == TASK_DONE)
            f->work[index] = wt->duration_s;
        else if (wt->kind != TASK_NOOP)
            f->work[index] = (double)(e->t_end - e->t_start) / 1e9 * f->node_speed[e->node];
    }
    switch (e->status) {
    case TASK_DONE: f->done++; break;
    case TASK_FAILED:
        f->failed++;
        if (e->timed_out)
            f->timed_out++;
        if (f->nfailures < 10) {
            struct follow_failure *x = &f->failures[f->nfailures++];
            x->index = index;
            x->node = e->node;
            x->exit_code = e->exit_code;
            x->term_signal = e->term_signal;
            x->timed_out = e->timed_out;
            /* Whatever a daemon sent (up to PROTO_MAX_STRING), the summary quotes at
             * most FOLLOW_DETAIL_SHOWN bytes of it. */
            x->detail = e->detail ? text_clip(e->detail, strlen(e->detail), FOLLOW_DETAIL_SHOWN)
                                  : NULL;
        }
        break;
    default: f->cancelled++; break;
    }
    if (f->ended == f->wl->count) {
        f->finished = true;
        f->stop = 1;
    }
}

void follow_on_task_listed(struct follow *f, const struct proto_task_end *e)
{
    uint32_t index = task_key_index(e->key);
    if (task_key_job(e->key) != f->job || index >= f->wl->count) {
        f->foreign++;
        return;
    }
    if (!f->listed)
        f->listed = xcalloc(f->wl->count, 1);
    /* Listed by two nodes (a record and its new primary's copy): one end. */
    if (f->listed[index])
        return;
    f->listed[index] = 1;
    if (f->runs[index]) {
        /* Reported first: the listing is the same end. */
        f->runs[index]++;
        return;
    }
    follow_on_task_end(f, e);
}

static void print_progress(struct follow *f, bool final)
{
    int64_t now = clock_wall_ns();
    double elapsed = (double)(now - f->t_submit) / 1e9;
    double pct = f->wl->count ? 100.0 * f->ended / f->wl->count : 100.0;
    double rate = elapsed > 0 ? f->ended / elapsed : 0;
    char bar[31];
    int fill = (int)(pct * 30 / 100);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    if (f->tty)
        fprintf(stderr, "\r[%s] %5.1f%%  %u/%u done  %u failed  %u cancelled  %.0f tasks/s  %.1fs%s",
                bar, pct, f->ended, f->wl->count, f->failed, f->cancelled, rate, elapsed,
                final ? "\n" : "");
    else
        fprintf(stderr, "progress: %u/%u ended (%.1f%%), %u failed, %u cancelled, %.1fs\n",
                f->ended, f->wl->count, pct, f->failed, f->cancelled, elapsed);
    f->line_open = f->tty && !final;
    f->last_print = now;
    f->last_ended = f->ended;
}

static void tick(uv_timer_t *t)
{
    struct follow *f = t->data;
    /* Off a terminal, a line every 5 s is enough to show life without flooding logs. */
    if (!f->tty && clock_wall_ns() - f->last_print < 5000000000LL)
        return;
    print_progress(f, false);
}

void follow_progress_start(struct follow *f, uv_loop_t *loop)
{
    f->tty = isatty(2);
    f->last_print = clock_wall_ns();
    uv_timer_init(loop, &f->timer);
    f->timer.data = f;
    uv_timer_start(&f->timer, tick, 200, 200);
    f->progress_on = true;
}

void follow_progress_stop(struct follow *f)
{
    if (!f->progress_on)
        return;
    f->progress_on = false;
    uv_timer_stop(&f->timer);
    uv_close((uv_handle_t *)&f->timer, NULL);
    if (f->tty)
        print_progress(f, true);
}

void follow_progress_break(struct follow *f)
{
    if (f->line_open)
        fputc('\n', stderr);
    f->line_open = false;
}

uint32_t follow_deaths(const struct proto_stats *stats, const bool *got, uint32_t nodes,
                       struct proto_dead *out)
{
    uint32_t n = 0;
    /* own[m]: out[m] is the declarer's own entry (it learned of the death first hand). */
    bool *own = xcalloc(nodes ? nodes : 1, sizeof *own);
    for (uint32_t i = 0; stats && i < nodes; i++) {
        if (got && !got[i])
            continue;
        for (uint32_t k = 0; k < stats[i].ndead; k++) {
            const struct proto_dead *d = &stats[i].dead[k];
            if (d->node >= nodes)
                continue;
            bool first_hand = d->by == stats[i].node;
            uint32_t m = 0;
            while (m < n && out[m].node != d->node)
                m++;
            if (m == n)
                n++;
            else if (own[m] > first_hand || (own[m] == first_hand && d->at_ns >= out[m].at_ns))
                continue;
            out[m] = *d;
            own[m] = first_hand;
        }
    }
    free(own);
    /* Oldest first: the order the failures happened in. */
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t k = i; k > 0 && out[k].at_ns < out[k - 1].at_ns; k--) {
            struct proto_dead t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

void follow_take_baseline(struct follow *f, struct client *c)
{
    f->base = xcalloc(f->nodes ? f->nodes : 1, sizeof *f->base);
    f->base_got = xcalloc(f->nodes ? f->nodes : 1, sizeof *f->base_got);
    char *cause = NULL;
    (void)client_stats_some(c, f->base, f->base_got, 5000, &cause);
    free(cause);
}

/* later - earlier, for counters that only grow; 0 if a node restarted in between. */
static uint64_t since(uint64_t later, uint64_t earlier)
{
    return later >= earlier ? later - earlier : 0;
}

void follow_summary(const struct follow *f, const struct proto_stats *stats, const bool *got,
                    uint32_t nodes, const char *mode, struct summary *s)
{
    memset(s, 0, sizeof *s);
    s->t_submit = f->t_submit;
    if (stats) {
        s->deaths = xcalloc(nodes, sizeof *s->deaths);
        s->ndeaths = follow_deaths(stats, got, nodes, s->deaths);
    }
    s->job = f->job;
    s->tasks = f->wl->count;
    s->done = f->done;
    s->failed = f->failed;
    s->timed_out = f->timed_out;
    s->retried = f->retried;
    s->retries = f->retries;
    s->cancelled = f->cancelled;
    s->nodes = nodes;
    s->mode = mode;
    s->per_node = xcalloc(nodes, sizeof *s->per_node);
    double capacity = 0;
    for (uint32_t i = 0; i < nodes; i++) {
        struct summary_node *n = &s->per_node[i];
        n->id = i;
        bool answered = stats && (!got || got[i]);
        n->slots = answered ? stats[i].slots : 0;
        n->speed = answered ? stats[i].speed : f->node_speed[i];
        n->tasks_run = f->node_tasks[i];
        if (answered) {
            /* The counters of this job's window: less what they were at its submit. */
            static const struct proto_stats zero;
            const struct proto_stats *b = f->base && f->base_got[i] ? &f->base[i] : &zero;
            struct proto_stats d = stats[i];
            d.steals_attempted = since(d.steals_attempted, b->steals_attempted);
            d.steals_succeeded = since(d.steals_succeeded, b->steals_succeeded);
            d.tasks_stolen = since(d.tasks_stolen, b->tasks_stolen);
            d.tasks_pushed = since(d.tasks_pushed, b->tasks_pushed);
            d.bytes_in = since(d.bytes_in, b->bytes_in);
            d.bytes_out = since(d.bytes_out, b->bytes_out);
            d.tasks_with_inputs = since(d.tasks_with_inputs, b->tasks_with_inputs);
            d.locality_hits = since(d.locality_hits, b->locality_hits);
            d.cache_hits = since(d.cache_hits, b->cache_hits);
            d.cache_misses = since(d.cache_misses, b->cache_misses);
            d.policy_switches = since(d.policy_switches, b->policy_switches);
            d.tasks_resubmitted = since(d.tasks_resubmitted, b->tasks_resubmitted);
            d.objects_recomputed = since(d.objects_recomputed, b->objects_recomputed);
            s->tasks_resubmitted += d.tasks_resubmitted;
            s->objects_recomputed += d.objects_recomputed;
            n->steals_attempted = d.steals_attempted;
            n->steals_succeeded = d.steals_succeeded;
            n->tasks_stolen = d.tasks_stolen;
            n->tasks_pushed = d.tasks_pushed;
            n->bytes_in = d.bytes_in;
            n->bytes_out = d.bytes_out;
            s->tasks_with_inputs += d.tasks_with_inputs;
            s->locality_hits += d.locality_hits;
            s->bytes_moved += d.bytes_in;
            s->cache_hits += d.cache_hits;
            s->cache_misses += d.cache_misses;
            s->tasks_pushed += d.tasks_pushed;
            s->policy_switches += d.policy_switches;
        }
        s->total_slots += n->slots;
        capacity += n->slots * n->speed;
    }
    s->cluster_totals = !f->base;
    double work = 0;
    for (uint32_t i = 0; i < f->wl->count; i++)
        work += f->work[i];
    int64_t end = f->t_last_end > f->t_submit ? f->t_last_end : f->t_submit;
    s->makespan_s = (double)(end - f->t_submit) / 1e9;
    s->throughput_tps = s->makespan_s > 0 ? s->tasks / s->makespan_s : 0;
    s->ideal_s = capacity > 0 ? work / capacity : 0;
    s->efficiency = s->makespan_s > 0 ? s->ideal_s / s->makespan_s : 0;
    s->avg_time_per_task_per_cpu_s =
        s->tasks ? s->makespan_s * s->total_slots / s->tasks : 0;
    s->locality_hit_rate =
        s->tasks_with_inputs ? (double)s->locality_hits / (double)s->tasks_with_inputs : -1;
    s->cache_hit_rate = s->cache_hits + s->cache_misses
                            ? (double)s->cache_hits / (double)(s->cache_hits + s->cache_misses)
                            : -1;
}

void follow_summary_fini(struct summary *s)
{
    free(s->per_node);
    free(s->deaths);
    s->per_node = NULL;
    s->deaths = NULL;
}

void follow_print_failures(const struct summary *s, FILE *out)
{
    if (!s->ndeaths && !s->tasks_resubmitted && !s->objects_recomputed)
        return;
    fprintf(out, "  failures         %u node%s declared dead, %" PRIu64 " task%s resubmitted, %"
            PRIu64 " object%s recomputed\n", s->ndeaths, s->ndeaths == 1 ? "" : "s",
            s->tasks_resubmitted, s->tasks_resubmitted == 1 ? "" : "s", s->objects_recomputed,
            s->objects_recomputed == 1 ? "" : "s");
    for (uint32_t i = 0; i < s->ndeaths; i++) {
        const struct proto_dead *d = &s->deaths[i];
        char when[32];
        follow_clock_time(d->at_ns, when, sizeof when);
        fprintf(out, "    node %u declared dead at %s (%.3f s into the job) by node %u\n",
                d->node, when, (double)(d->at_ns - s->t_submit) / 1e9, d->by);
    }
}

void follow_clock_time(int64_t wall_ns, char *buf, size_t len)
{
    time_t t = (time_t)(wall_ns / 1000000000);
    struct tm tm;
    if (wall_ns <= 0 || !localtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
        snprintf(buf, len, "?");
}

void follow_summary_print_text(const struct summary *s, const struct follow *f, FILE *out)
{
    fprintf(out, "jackdaw: %u tasks on %u nodes, %u slots (%s submission)\n", s->tasks, s->nodes,
            s->total_slots, s->mode);
    if (s->timed_out)
        fprintf(out, "  done %u   failed %u (%u timed out)   cancelled %u\n", s->done, s->failed,
                s->timed_out, s->cancelled);
    else
        fprintf(out, "  done %u   failed %u   cancelled %u\n", s->done, s->failed, s->cancelled);
    if (s->retried)
        fprintf(out, "  retried          %u task%s (%llu failed run%s run again)\n", s->retried,
                s->retried == 1 ? "" : "s", (unsigned long long)s->retries,
                s->retries == 1 ? "" : "s");
    fprintf(out, "  makespan         %.3f s\n", s->makespan_s);
    fprintf(out, "  throughput       %.1f tasks/s\n", s->throughput_tps);
    if (s->ideal_s > 0)
        fprintf(out, "  efficiency       %.1f %%  (ideal %.3f s)\n", 100 * s->efficiency,
                s->ideal_s);
    else
        fprintf(out, "  efficiency       n/a (no timed work completed)\n");
    fprintf(out, "  time/task/CPU    %.3f ms\n", 1000 * s->avg_time_per_task_per_cpu_s);
    if (s->tasks_with_inputs) {
        fprintf(out, "  locality         %.1f %% of %" PRIu64 " tasks with inputs had them all here\n",
                100 * s->locality_hit_rate, s->tasks_with_inputs);
        fprintf(out, "  bytes moved      %.1f MB", (double)s->bytes_moved / 1e6);
        if (s->cache_hit_rate >= 0)
            fprintf(out, "   cache hit rate %.1f %%", 100 * s->cache_hit_rate);
        fprintf(out, "\n");
    }
    if (s->tasks_pushed || s->policy_switches)
        fprintf(out, "  tasks pushed     %" PRIu64 "   policy switches %" PRIu64 "\n",
                s->tasks_pushed, s->policy_switches);
    follow_print_failures(s, out);
    fprintf(out, "  %-5s %5s %6s %9s %16s %12s\n", "node", "slots", "speed", "tasks", "steals ok/tried",
            "tasks stolen");
    for (uint32_t i = 0; i < s->nodes; i++) {
        const struct summary_node *n = &s->per_node[i];
        char steals[32];
        snprintf(steals, sizeof steals, "%" PRIu64 "/%" PRIu64, n->steals_succeeded,
                 n->steals_attempted);
        bool dead = false;
        for (uint32_t k = 0; k < s->ndeaths; k++)
            dead |= s->deaths[k].node == n->id;
        fprintf(out, "  %-5u %5u %6.2f %9" PRIu64 " %16s %12" PRIu64 "%s\n", n->id, n->slots,
                n->speed, n->tasks_run, steals, n->tasks_stolen, dead ? "  dead" : "");
    }
    if (s->cluster_totals)
        fprintf(out, "  (steals, pushes and bytes: the cluster's since it started; attached to "
                     "a running job, this client has no count from its submit)\n");
    if (f && f->failed) {
        fprintf(out, "failed tasks (%u; first %u shown):\n", f->failed, f->nfailures);
        for (uint32_t i = 0; i < f->nfailures; i++) {
            const struct follow_failure *x = &f->failures[i];
            fprintf(out, "  %s on node %u: ", f->wl->tasks[x->index].id, x->node);
            if (x->timed_out && x->term_signal)
                fprintf(out, "timed out after %g s (ended by signal %d)\n",
                        f->wl->tasks[x->index].timeout_s, x->term_signal);
            else if (x->timed_out)
                fprintf(out, "timed out after %g s\n", f->wl->tasks[x->index].timeout_s);
            else if (x->term_signal)
                fprintf(out, "killed by signal %d\n", x->term_signal);
            else
                fprintf(out, "exit status %d\n", x->exit_code);
            if (x->detail && *x->detail) {
                fprintf(out, "    | ");
                for (const char *p = x->detail; *p; p++) {
                    fputc(*p, out);
                    if (*p == '\n' && p[1])
                        fprintf(out, "    | ");
                }
                if (x->detail[strlen(x->detail) - 1] != '\n')
                    fputc('\n', out);
            }
        }
    }
    if (f && f->cancelled) {
        fprintf(out, "cancelled: an ancestor failed, or removed by cancel (%u):", f->cancelled);
        uint32_t shown = 0;
        for (uint32_t i = 0; i < f->wl->count && shown < 10; i++) {
            if (f->status[i] == TASK_CANCELLED + 1) {
                fprintf(out, " %s", f->wl->tasks[i].id);
                shown++;
            }
        }
        fprintf(out, "%s\n", f->cancelled > shown ? " …" : "");
    }
    if (f && f->duplicates)
        fprintf(out, "warning: %u duplicate task reports\n", f->duplicates);
}

void follow_summary_print_json(const struct summary *s, FILE *out)
{
    json_t *nodes = json_array();
    for (uint32_t i = 0; i < s->nodes; i++) {
        const struct summary_node *n = &s->per_node[i];
        json_array_append_new(
            nodes, json_pack("{s:i, s:i, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "id",
                             (int)n->id, "slots", (int)n->slots, "speed", n->speed, "tasks_run",
                             (json_int_t)n->tasks_run, "steals_attempted",
                             (json_int_t)n->steals_attempted, "steals_succeeded",
                             (json_int_t)n->steals_succeeded, "tasks_stolen",
                             (json_int_t)n->tasks_stolen, "tasks_pushed",
                             (json_int_t)n->tasks_pushed, "bytes_in", (json_int_t)n->bytes_in,
                             "bytes_out", (json_int_t)n->bytes_out));
    }
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:s, s:i, s:o}", "tasks",
                          (json_int_t)s->tasks, "tasks_done", (json_int_t)s->done, "tasks_failed",
                          (json_int_t)s->failed, "tasks_cancelled", (json_int_t)s->cancelled,
                          "makespan_s", s->makespan_s, "throughput_tps", s->throughput_tps,
                          "efficiency", s->efficiency, "ideal_s", s->ideal_s,
                          "avg_time_per_task_per_cpu_s", s->avg_time_per_task_per_cpu_s, "mode",
                          s->mode, "total_slots", (int)s->total_slots, "nodes", nodes);
    json_object_set_new(o, "job", json_integer((json_int_t)s->job));
    json_object_set_new(o, "tasks_timed_out", json_integer((json_int_t)s->timed_out));
    json_object_set_new(o, "tasks_retried", json_integer((json_int_t)s->retried));
    json_object_set_new(o, "counters_since", json_string(s->cluster_totals ? "cluster start"
                                                                           : "job submit"));
    json_object_set_new(o, "failed_runs_retried", json_integer((json_int_t)s->retries));
    json_object_set_new(o, "tasks_with_inputs", json_integer((json_int_t)s->tasks_with_inputs));
    json_object_set_new(o, "locality_hit_rate",
                        s->locality_hit_rate >= 0 ? json_real(s->locality_hit_rate) : json_null());
    json_object_set_new(o, "bytes_moved", json_integer((json_int_t)s->bytes_moved));
    json_object_set_new(o, "cache_hit_rate",
                        s->cache_hit_rate >= 0 ? json_real(s->cache_hit_rate) : json_null());
    json_object_set_new(o, "tasks_pushed", json_integer((json_int_t)s->tasks_pushed));
    json_object_set_new(o, "policy_switches", json_integer((json_int_t)s->policy_switches));
    json_t *deaths = json_array();
    for (uint32_t i = 0; i < s->ndeaths; i++) {
        const struct proto_dead *d = &s->deaths[i];
        json_array_append_new(deaths, json_pack("{s:i, s:i, s:I, s:f}", "node", (int)d->node,
                                                "by", (int)d->by, "at_ns", (json_int_t)d->at_ns,
                                                "after_s",
                                                (double)(d->at_ns - s->t_submit) / 1e9));
    }
    json_object_set_new(o, "failures",
                        json_pack("{s:o, s:I, s:I}", "nodes_dead", deaths, "tasks_resubmitted",
                                  (json_int_t)s->tasks_resubmitted, "objects_recomputed",
                                  (json_int_t)s->objects_recomputed));
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    fprintf(out, "%s\n", text);
    free(text);
    json_decref(o);
}
