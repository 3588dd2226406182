/*
 * report analysis — the pass over the file (see analysis.h).  Counters that do not
 * depend on what other nodes did at the same instant are taken here, in file order; the
 * rest is left to the time sweep (sweep.c) as a list of state changes.
 */
#include "tools/report/analysis.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/model/workload.h"
#include "core/model/task.h"
#include "trace/format/reader.h"
#include "tools/report/analysis_internal.h"

/* ---- the state of one pass ------------------------------------------------------------- */

/* Node ids below this are looked up in an array. */
#define DIRECT_IDS (1 << 20)
/* So are task indices below this, per job (4 bytes each up to the largest seen). */
#define DIRECT_TASKS (1u << 26)

struct job_direct {
    uint32_t job;
    uint32_t *idx; /* owned; index -> task table index + 1, 0 for none */
    size_t cap;
};

/* A run of an attempt that lost: [start, end), end NO_TIME until known (a run that
 * died with its node ends at the node's first NODE_DOWN). */
struct lost_run {
    uint32_t task;
    int32_t node;    /* node index */
    int64_t start_ns, end_ns;
    bool swept;      /* its START went to the sweep as the task's (read before the higher
                        attempt); else the sweep gets SW_LOST_* records for its slot */
};

struct resubmit {
    uint32_t task;
    int32_t dead;    /* node index, -1 when unknown */
};

struct pass {
    struct report_analysis *a;
    uint32_t only_job;        /* report_options.job: 0 for every job */
    struct u64map node_index; /* node id + 1 -> index + 1 */
    uint32_t *node_direct;    /* the same for ids below cap_direct (0: unknown): every
                                 event looks its node up, and ids are small */
    size_t cap_direct;
    struct pass_node *pn;
    size_t cap_nodes;
    struct u64map task_index; /* key -> index + 1, for indices beyond DIRECT_TASKS */
    struct u64map jobs;       /* job + 1 -> struct job_direct * (owned) */
    struct job_direct *last_job;
    struct rtask *tasks;
    size_t ntasks, cap_tasks;
    struct sweep_rec *recs;
    size_t nrecs, cap_recs;
    struct sample_rec *samples;
    size_t nsamples, cap_samples;
    struct steal_out *steals;
    size_t nsteals, cap_steals;
    int64_t t0, t1, first_start;
    uint64_t submitted, done, failed, cancelled, ended_twice, dropped, unknown_kinds;
    uint64_t bad_node_events, taskless;
    double busy_s, work_s;
    /* Failures: runs of attempts that lost, and resubmissions (task index, dead node
     * index), for the recovery windows and the work thrown away. */
    struct lost_run *lost;
    size_t nlost, cap_lost;
    struct resubmit *resubmits;
    size_t nresubmits, cap_resubmits;
    uint64_t recomputed, lost_ends;
    bool header_slots; /* slots came from the run header */
    bool header_nodes; /* the run header listed the nodes: a peer outside the list is
                          corrupt, not a node (it would cost a matrix row) */
};

__attribute__((format(printf, 2, 3))) static void warn(struct report_analysis *a,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    if (vasprintf(&s, fmt, ap) < 0)
        s = xstrdup("(out of memory formatting a warning)");
    va_end(ap);
    a->warnings = xrealloc(a->warnings, (a->nwarnings + 1) * sizeof *a->warnings);
    a->warnings[a->nwarnings++] = s;
}

static double ns_s(int64_t ns)
{
    return (double)ns / 1e9;
}

/* Index of node id, added (1 slot until something says more, speed 1) when new.
 * -1 when the id is negative (the collector) or there are too many nodes. */
static int node_of(struct pass *p, int32_t id)
{
    if (id < 0)
        return -1;
    if ((size_t)id < p->cap_direct && p->node_direct[id])
        return (int)p->node_direct[id] - 1;
    void *v = u64map_get(&p->node_index, (uint64_t)id + 1);
    if (v)
        return (int)((uintptr_t)v - 1);
    struct report_analysis *a = p->a;
    if (a->nnodes >= SWEEP_MAX_NODES) {
        p->bad_node_events++;
        return -1;
    }
    size_t cap = p->cap_nodes;
    a->nodes = xgrow(a->nodes, &cap, a->nnodes + 1, sizeof *a->nodes);
    p->pn = xrealloc(p->pn, cap * sizeof *p->pn);
    p->cap_nodes = cap;
    size_t i = a->nnodes++;
    a->nodes[i] = (struct report_node){.id = id, .slots = 0, .speed = 1.0,
                                       .first_start_s = NAN, .last_end_s = NAN};
    p->pn[i] = (struct pass_node){.first_start_ns = NO_TIME, .last_start_ns = NO_TIME,
                                  .last_end_ns = NO_TIME, .down_ns = NO_TIME};
    u64map_put(&p->node_index, (uint64_t)id + 1, (void *)(uintptr_t)(i + 1));
    if (id < DIRECT_IDS) {
        size_t old = p->cap_direct;
        if ((size_t)id >= old) {
            p->node_direct = xgrow(p->node_direct, &p->cap_direct, (size_t)id + 1,
                                   sizeof *p->node_direct);
            memset(p->node_direct + old, 0, (p->cap_direct - old) * sizeof *p->node_direct);
        }
        p->node_direct[id] = (uint32_t)i + 1;
    }
    return (int)i;
}

/* The slot of a task key's table index: a job's indices are dense from 0, so the
 * indices below DIRECT_TASKS of each job are found in an array (a hash lookup per event
 * was a sixth of the time on 10^6 tasks); others go through the map.  NULL for those. */
static uint32_t *direct_slot(struct pass *p, uint64_t key)
{
    uint32_t job = (uint32_t)(key >> 32), index = (uint32_t)key;
    if (index >= DIRECT_TASKS)
        return NULL;
    struct job_direct *j = p->last_job;
    if (!j || j->job != job) {
        j = u64map_get(&p->jobs, (uint64_t)job + 1);
        if (!j) {
            j = xcalloc(1, sizeof *j);
            j->job = job;
            u64map_put(&p->jobs, (uint64_t)job + 1, j);
        }
        p->last_job = j;
    }
    if (index >= j->cap) {
        size_t old = j->cap;
        j->idx = xgrow(j->idx, &j->cap, (size_t)index + 1, sizeof *j->idx);
        memset(j->idx + old, 0, (j->cap - old) * sizeof *j->idx);
    }
    return &j->idx[index];
}

/* Index of a node already known, or -1: never adds one. */
static int known_node(const struct pass *p, int32_t id)
{
    if (id < 0)
        return -1;
    if ((size_t)id < p->cap_direct && p->node_direct[id])
        return (int)p->node_direct[id] - 1;
    void *v = u64map_get(&p->node_index, (uint64_t)id + 1);
    return v ? (int)((uintptr_t)v - 1) : -1;
}

static struct rtask *task_of(struct pass *p, uint64_t key, uint32_t *index)
{
    uint32_t *slot = direct_slot(p, key);
    size_t i;
    void *v = slot ? (*slot ? (void *)(uintptr_t)*slot : NULL) : u64map_get(&p->task_index, key);
    if (v) {
        i = (size_t)((uintptr_t)v - 1);
    } else {
        p->tasks = xgrow(p->tasks, &p->cap_tasks, p->ntasks + 1, sizeof *p->tasks);
        i = p->ntasks++;
        p->tasks[i] = (struct rtask){.key = key, .submit_ns = NO_TIME, .start_ns = NO_TIME,
                                     .start_node = -1, .qnode = -1,
                                     .run_node = -1, .end_ns = NO_TIME,
                                     .restart_ns = NO_TIME};
        if (slot)
            *slot = (uint32_t)(i + 1);
        else
            u64map_put(&p->task_index, key, (void *)(uintptr_t)(i + 1));
    }
    if (index)
        *index = (uint32_t)i;
    return &p->tasks[i];
}

static void push_rec(struct pass *p, int64_t t, uint32_t task, int node, enum sweep_kind kind)
{
    p->recs = xgrow(p->recs, &p->cap_recs, p->nrecs + 1, sizeof *p->recs);
    p->recs[p->nrecs++] = (struct sweep_rec){.t = t < 0 ? 0 : t, .task = task,
                                             .node = (uint16_t)node, .kind = (uint16_t)kind};
}

/* Keeps a name in the arena; offset 0 means none, so the arena starts with a NUL. */
static uint32_t keep_name(struct report_analysis *a, const char *s)
{
    size_t len = strlen(s) + 1;
    if (a->names_len == 0) {
        a->names = xgrow(a->names, &a->names_cap, 1, 1);
        a->names[a->names_len++] = '\0';
    }
    if (a->names_len + len > UINT32_MAX)
        return 0; /* beyond 4 GiB of names: leave the rest unnamed */
    a->names = xgrow(a->names, &a->names_cap, a->names_len + len, 1);
    memcpy(a->names + a->names_len, s, len);
    uint32_t off = (uint32_t)a->names_len;
    a->names_len += len;
    return off;
}

/* ---- the run header ------------------------------------------------------------------- */

static void apply_header(struct pass *p, const char *json)
{
    struct report_analysis *a = p->a;
    struct run_header h;
    char *problem = NULL;
    run_header_parse(&h, json, &problem);
    if (problem) {
        warn(a, "%s", problem);
        free(problem);
    }
    /* The strings move over: the analysis owns them from here. */
    a->run_id = h.run_id;
    a->workload_name = h.workload_name;
    a->workload_digest = h.workload_digest;
    a->placement = h.placement;
    a->steal_policy = h.steal_policy;
    h.run_id = h.workload_name = h.workload_digest = h.placement = h.steal_policy = NULL;
    for (size_t i = 0; i < h.nnodes; i++) {
        int k = node_of(p, h.nodes[i].id);
        if (k < 0)
            continue;
        p->header_nodes = true;
        if (h.nodes[i].slots > 0) {
            a->nodes[k].slots = h.nodes[i].slots;
            p->header_slots = true;
        }
        if (h.nodes[i].speed > 0)
            a->nodes[k].speed = h.nodes[i].speed;
    }
    run_header_fini(&h);
}

/* ---- events --------------------------------------------------------------------------- */

/* The attempt on TASK_SUBMIT, START and END: in duration (core/model/trace_kind.h). */
static uint32_t event_attempt(const struct trace_event *ev)
{
    return ev->duration_ns <= 0 ? 0 : ev->duration_ns > INT32_MAX ? INT32_MAX
                                                                   : (uint32_t)ev->duration_ns;
}

static void push_lost(struct pass *p, uint32_t task, int32_t node, int64_t start, int64_t end,
                      bool swept)
{
    p->lost = xgrow(p->lost, &p->cap_lost, p->nlost + 1, sizeof *p->lost);
    p->lost[p->nlost++] = (struct lost_run){task, node, start, end, swept};
}

/* A higher attempt of the task was read: the run of the one it had, if it started,
 * lost. */
static void supersede(struct pass *p, struct rtask *tk, uint32_t ti, uint32_t attempt)
{
    if (tk->start_ns != NO_TIME && tk->start_node >= 0)
        push_lost(p, ti, tk->start_node, tk->start_ns,
                  tk->ended && tk->end_attempt == tk->attempt ? tk->end_ns : NO_TIME, true);
    tk->attempt = attempt;
    tk->start_ns = NO_TIME;
    tk->start_node = -1;
}

/* The END of an attempt known to have lost: it ends the lost run of that node. */
static void end_lost(struct pass *p, uint32_t ti, int n, int64_t t)
{
    p->lost_ends++;
    for (size_t k = p->nlost; k-- > 0;)
        if (p->lost[k].task == ti && p->lost[k].node == n && p->lost[k].end_ns == NO_TIME) {
            p->lost[k].end_ns = t;
            return;
        }
}

/* A command's run on node `nd`, of `wall_s` seconds, and what the trace says it used. */
static void add_usage(struct report_node *nd, const struct trace_event *ev, double wall_s)
{
    const struct task_usage *u = &ev->usage;
    if (!u->measured)
        return;
    nd->measured_runs++;
    nd->cpu_s += (double)u->user_ns / 1e9 + (double)u->sys_ns / 1e9;
    nd->cpu_wall_s += wall_s;
    if (u->max_rss > nd->max_rss)
        nd->max_rss = u->max_rss;
    nd->read_bytes += u->read_bytes;
    nd->write_bytes += u->write_bytes;
}

static void add_event(struct pass *p, const struct trace_event *ev, const char *const *names,
                      size_t nnames)
{
    struct report_analysis *a = p->a;
    if ((unsigned)ev->kind >= TRACE_KIND_COUNT) {
        p->unknown_kinds++;
        return;
    }
    int64_t t = ev->time_ns;
    /* Events that name a task (or a task's object) belong to its job. */
    bool of_task = ev->kind <= TRACE_TASK_END || ev->kind == TRACE_DATA_FETCH ||
                   ev->kind == TRACE_CACHE_HIT || ev->kind == TRACE_TASK_NAMES ||
                   ev->kind >= TRACE_TASK_RESUBMIT;
    if (ev->kind == TRACE_JOB_SUBMIT) {
        uint32_t job = (uint32_t)(ev->task >> 32);
        bool known = false;
        for (uint32_t i = 0; i < a->njobs && i < 8; i++)
            known |= a->job_ids[i] == job;
        if (!known) {
            if (a->njobs < 8)
                a->job_ids[a->njobs] = job;
            a->njobs++;
        }
        if (p->only_job && job != p->only_job)
            return;
    } else if (p->only_job && of_task && ev->task != TRACE_NO_TASK &&
               (uint32_t)(ev->task >> 32) != p->only_job) {
        return;
    }
    if (ev->kind == TRACE_JOB_SUBMIT) {
        if (p->t0 == NO_TIME || t < p->t0)
            p->t0 = t;
        if (!a->workload_path && nnames > 0 && names[0] && names[0][0]) {
            a->workload_path = xstrdup(names[0]);
            a->workload_job = (uint32_t)(ev->task >> 32);
            if (nnames > 2 && names[2] && names[2][0])
                a->workload_mode = xstrdup(names[2]);
        }
        return;
    }
    if (ev->kind == TRACE_TASK_NAMES) {
        uint64_t first = ev->task;
        for (size_t i = 0; i < nnames; i++) {
            if ((uint32_t)first + i > UINT32_MAX || !names[i])
                break;
            struct rtask *tk = task_of(p, first + i, NULL);
            if (!tk->name_off)
                tk->name_off = keep_name(a, names[i]);
        }
        return;
    }
    int n = node_of(p, ev->node);
    if (n < 0)
        return; /* the collector's other kinds, or beyond SWEEP_MAX_NODES (counted) */
    struct report_node *nd = &a->nodes[n];
    struct pass_node *pn = &p->pn[n];
    uint32_t ti = 0;
    struct rtask *tk = NULL;
    if (ev->kind == TRACE_TASK_RETRY && ev->task != TRACE_NO_TASK) {
        /* A failed run that runs again: its slot time was spent and its work thrown
         * away, as a run of an attempt that lost (charged to failure recovery). */
        uint32_t ri;
        struct rtask *rt = task_of(p, ev->task, &ri);
        if (event_attempt(ev) == rt->attempt && rt->start_ns != NO_TIME && rt->start_node == n) {
            if (t > rt->start_ns)
                add_usage(nd, ev, ns_s(t - rt->start_ns));
            push_lost(p, ri, n, rt->start_ns, t, true);
            push_rec(p, t, ri, n, SW_END); /* the slot is free from here */
            rt->start_ns = NO_TIME;
            rt->start_node = -1;
        }
        nd->retries++;
        return;
    }
    if (ev->kind <= TRACE_TASK_END) {
        if (ev->task == TRACE_NO_TASK) {
            p->taskless++; /* a task event naming no task: corrupt, nothing to count */
            return;
        }
        tk = task_of(p, ev->task, &ti);
        uint32_t attempt = event_attempt(ev);
        if (attempt > tk->attempt)
            supersede(p, tk, ti, attempt);
        if (attempt < tk->attempt && ev->kind == TRACE_TASK_START) {
            /* A presumed-dead node's run of an earlier attempt: its slot was busy, but
             * its work is thrown away. */
            push_lost(p, ti, n, t, NO_TIME, false);
            return;
        }
        if (attempt < tk->attempt && ev->kind == TRACE_TASK_END) {
            end_lost(p, ti, n, t);
            return;
        }
        if (attempt > 0 && ev->kind == TRACE_TASK_START &&
            (tk->restart_ns == NO_TIME || t < tk->restart_ns))
            tk->restart_ns = t;
    }
    switch (ev->kind) {
    case TRACE_TASK_SUBMIT:
        if (tk->submit_ns == NO_TIME)
            p->submitted++;
        if (tk->submit_ns == NO_TIME || t < tk->submit_ns)
            tk->submit_ns = t;
        if (p->t0 == NO_TIME || t < p->t0)
            p->t0 = t;
        break;
    case TRACE_TASK_READY:
        break;
    case TRACE_TASK_QUEUED_LOCAL:
        push_rec(p, t, ti, n, SW_QUEUED_LOCAL);
        break;
    case TRACE_TASK_QUEUED_SHARED:
        push_rec(p, t, ti, n, SW_QUEUED_SHARED);
        break;
    case TRACE_TASK_PUSHED:
        nd->pushed_out++;
        push_rec(p, t, ti, n, SW_PUSHED);
        break;
    case TRACE_TASK_STOLEN_IN:
        nd->stolen_in++;
        push_rec(p, t, ti, n, SW_QUEUED_SHARED);
        break;
    case TRACE_TASK_STOLEN_OUT:
        nd->stolen_out++;
        p->steals = xgrow(p->steals, &p->cap_steals, p->nsteals + 1, sizeof *p->steals);
        /* the thief is known already: no node is added here */
        p->steals[p->nsteals] = (struct steal_out){.task = ti, .thief = known_node(p, ev->peer)};
        push_rec(p, t, (uint32_t)p->nsteals++, n, SW_STOLEN_OUT);
        break;
    case TRACE_TASK_START:
        if (ev->count > 0) {
            nd->tasks_with_inputs++;
            if (ev->status == 0)
                nd->locality_hits++;
        }
        tk->start_ns = t;
        tk->start_node = n;
        if (pn->first_start_ns == NO_TIME || t < pn->first_start_ns)
            pn->first_start_ns = t;
        if (pn->last_start_ns == NO_TIME || t > pn->last_start_ns)
            pn->last_start_ns = t;
        if (p->first_start == NO_TIME || t < p->first_start)
            p->first_start = t;
        pn->starts++;
        push_rec(p, t, ti, n, SW_START);
        break;
    case TRACE_TASK_END:
        if (tk->ended && tk->end_attempt < tk->attempt) {
            /* The END counted was of an attempt that lost (read before the higher
             * one): this one replaces it. */
            p->lost_ends++;
            if (tk->end_status == TASK_DONE)
                p->done--;
            else if (tk->end_status == TASK_FAILED)
                p->failed--;
            else
                p->cancelled--;
            tk->ended = 0;
        }
        if (tk->ended) {
            p->ended_twice++;
            break;
        }
        tk->ended = 1;
        tk->end_attempt = tk->attempt;
        tk->end_ns = t;
        tk->end_status = (uint8_t)(ev->status < 0 || ev->status > 255 ? 255 : ev->status);
        if (ev->status == TASK_DONE)
            p->done++;
        else if (ev->status == TASK_FAILED)
            p->failed++;
        else
            p->cancelled++;
        if (tk->start_node == n && tk->start_ns != NO_TIME && tk->start_ns <= t) {
            double run = ns_s(t - tk->start_ns);
            add_usage(nd, ev, run);
            if (ev->status == TASK_DONE || ev->status == TASK_FAILED) {
                if (a->nspans < REPORT_SPANS_MAX) {
                    a->spans = xgrow(a->spans, &a->cap_spans, a->nspans + 1, sizeof *a->spans);
                    a->spans[a->nspans++] = (struct report_span){
                        .start_s = ns_s(tk->start_ns), .end_s = ns_s(t), .node = n,
                        .status = (uint8_t)ev->status};
                }
                a->nspans_all++;
            }
            pn->runs++;
            pn->run_ns += t - tk->start_ns;
            nd->busy_s += run;
            p->busy_s += run;
            p->work_s += run * nd->speed;
            if (ev->status == TASK_DONE) {
                a->done_runs = xgrow(a->done_runs, &a->cap_done_runs, a->ndone_runs + 1,
                                     sizeof *a->done_runs);
                a->done_runs[a->ndone_runs++] =
                    (struct report_run){.task = ev->task, .work_s = run * nd->speed};
            }
            if (ev->status == TASK_DONE || ev->status == TASK_FAILED)
                nd->tasks_run++;
            if (ev->status == TASK_FAILED)
                nd->tasks_failed++;
            /* Only ends of tasks run here: the node's tail starts at its last work. */
            if (pn->last_end_ns == NO_TIME || t > pn->last_end_ns)
                pn->last_end_ns = t;
        }
        if (p->t1 == NO_TIME || t > p->t1)
            p->t1 = t;
        push_rec(p, t, ti, n, SW_END);
        break;
    case TRACE_STEAL_REQUEST:
        nd->steal_requests++;
        if (ev->count > 0) /* what the thief asked for; 0: the victim's policy decides */
            nd->tasks_asked += (uint64_t)ev->count;
        push_rec(p, t, 0, n, SW_STEAL_ASK);
        break;
    case TRACE_STEAL_GRANT:
        nd->steal_grants++;
        if (ev->count > 0)
            nd->tasks_granted += (uint64_t)ev->count;
        push_rec(p, t, 0, n, SW_STEAL_ANSWER);
        break;
    case TRACE_STEAL_FAIL:
        nd->steal_fails++;
        if (ev->status == STEAL_FAIL_EMPTY)
            a->steal_fails_empty++;
        else if (ev->status == STEAL_FAIL_NO_VICTIM)
            a->steal_fails_no_victim++;
        else
            a->steal_fails_timeout++;
        /* a no-victim failure answers no request: nobody was asked */
        if (ev->status != STEAL_FAIL_NO_VICTIM)
            push_rec(p, t, 0, n, SW_STEAL_ANSWER);
        break;
    case TRACE_DATA_FETCH:
        nd->fetches++;
        if (ev->bytes > 0)
            nd->fetch_bytes += (uint64_t)ev->bytes;
        push_rec(p, t - (ev->duration_ns > 0 ? ev->duration_ns : 0), 0, n, SW_FETCH_BEGIN);
        push_rec(p, t, 0, n, SW_FETCH_END);
        break;
    case TRACE_CACHE_HIT:
        nd->cache_hits++;
        break;
    case TRACE_NODE_DOWN: {
        int d = known_node(p, ev->peer);
        if (d < 0 || d == n)
            break; /* a node stopping says so of itself (peer -1) */
        if (p->pn[d].down_ns == NO_TIME || t < p->pn[d].down_ns)
            p->pn[d].down_ns = t;
        if (ev->status == TRACE_DOWN_DECLARED)
            p->pn[d].declared = 1;
        pn = &p->pn[n]; /* unchanged: known_node adds nothing */
        break;
    }
    case TRACE_TASK_RESUBMIT: {
        if (ev->task == TRACE_NO_TASK) {
            p->taskless++;
            break;
        }
        uint32_t rti;
        struct rtask *rt = task_of(p, ev->task, &rti);
        uint32_t attempt = ev->status > 0 ? (uint32_t)ev->status : 0;
        if (attempt > rt->attempt)
            supersede(p, rt, rti, attempt);
        p->resubmits = xgrow(p->resubmits, &p->cap_resubmits, p->nresubmits + 1,
                             sizeof *p->resubmits);
        p->resubmits[p->nresubmits++] = (struct resubmit){
            rti, ev->count >= 0 && ev->count <= INT32_MAX ? known_node(p, (int32_t)ev->count)
                                                          : -1};
        break;
    }
    case TRACE_OBJECT_RECOMPUTE:
        p->recomputed++;
        break;
    case TRACE_NODE_SAMPLE:
        if (!p->header_slots && ev->sample.slots > nd->slots)
            nd->slots = ev->sample.slots;
        /* Counters since the daemon started: the last sample holds the totals. */
        if (ev->sample.info_sent > 0 && (uint64_t)ev->sample.info_sent > nd->info_sent)
            nd->info_sent = (uint64_t)ev->sample.info_sent;
        if (ev->sample.info_received > 0 &&
            (uint64_t)ev->sample.info_received > nd->info_received)
            nd->info_received = (uint64_t)ev->sample.info_received;
        if (ev->sample.token_passes > 0 && (uint64_t)ev->sample.token_passes > nd->token_passes)
            nd->token_passes = (uint64_t)ev->sample.token_passes;
        p->samples = xgrow(p->samples, &p->cap_samples, p->nsamples + 1, sizeof *p->samples);
        p->samples[p->nsamples++] = (struct sample_rec){
            .t = t, .node = (uint32_t)n, .waitq = ev->sample.waitq,
            .lreadyq = ev->sample.lreadyq, .sreadyq = ev->sample.sreadyq};
        break;
    case TRACE_NODE_UP:
        if (!p->header_slots && (ev->peer < 0 || ev->peer == ev->node) && ev->count > 0 &&
            ev->count <= INT32_MAX && ev->count > nd->slots)
            nd->slots = (int32_t)ev->count;
        break;
    case TRACE_POLICY_CHANGE:
        if (!a->placement && ev->text[0])
            a->placement = xstrdup(ev->text);
        break;
    case TRACE_DROPPED:
        if (ev->count > 0)
            p->dropped += (uint64_t)ev->count;
        break;
    default:
        break;
    }
}

/* The thief x victim matrices need every node known, so they are a second walk over
 * nothing but the few steal events, kept aside during the pass. */
struct steal_pair {
    int32_t thief_id, victim_id;
    uint8_t request; /* 1: STEAL_REQUEST, 0: a task moved (STOLEN_IN) */
};

/* ---- figures -------------------------------------------------------------------------- */

static double ratio(double x, double y)
{
    return y > 0 ? x / y : NAN;
}

static void make_label(struct report_analysis *a)
{
    const char *wl = a->workload_name ? a->workload_name : a->workload_path;
    if (wl) {
        const char *slash = strrchr(wl, '/');
        wl = slash ? slash + 1 : wl;
    }
    a->label = xasprintf("%s/%s, %zu node%s%s%s", a->placement ? a->placement : "ws",
                         a->steal_policy ? a->steal_policy : "adaptive", a->nnodes,
                         a->nnodes == 1 ? "" : "s", wl ? ", " : "", wl ? wl : "");
    a->short_label = xasprintf("%s/%s", a->placement ? a->placement : "ws",
                               a->steal_policy ? a->steal_policy : "adaptive");
}

/*
 * Recovery windows and work thrown away (analysis.h, "failure"): one window per node
 * declared dead, from the first NODE_DOWN about it to the first START of the last of its
 * resubmitted tasks to start again, as sweep records; and the lost runs' lengths.
 */
static void failure_windows(struct pass *p)
{
    struct report_analysis *a = p->a;
    for (size_t d = 0; d < a->nnodes; d++) {
        const struct pass_node *pd = &p->pn[d];
        if (!pd->declared || pd->down_ns == NO_TIME)
            continue;
        int64_t end = pd->down_ns;
        for (size_t k = 0; k < p->nresubmits; k++) {
            if (p->resubmits[k].dead != (int32_t)d)
                continue;
            int64_t again = p->tasks[p->resubmits[k].task].restart_ns;
            if (again == NO_TIME || again > p->t1)
                again = p->t1; /* never ran again in this trace */
            if (again > end)
                end = again;
        }
        push_rec(p, pd->down_ns, 0, (int)d, SW_FAIL_BEGIN);
        push_rec(p, end, 0, (int)d, SW_FAIL_END);
    }
    double thrown = 0;
    for (size_t k = 0; k < p->nlost; k++) {
        const struct lost_run *l = &p->lost[k];
        int64_t end = l->end_ns;
        if (end == NO_TIME)
            end = p->pn[l->node].down_ns != NO_TIME ? p->pn[l->node].down_ns : p->t1;
        if (end > l->start_ns)
            thrown += ns_s(end - l->start_ns);
        if (!l->swept && end > l->start_ns) {
            push_rec(p, l->start_ns, 0, l->node, SW_LOST_BEGIN);
            push_rec(p, end, 0, l->node, SW_LOST_END);
        }
    }
    a->figures[RF_WORK_THROWN_AWAY_S] = thrown;
    a->figures[RF_TASKS_RESUBMITTED] = (double)p->nresubmits;
    a->figures[RF_OBJECTS_RECOMPUTED] = (double)p->recomputed;
}

static void fill_figures(struct pass *p)
{
    struct report_analysis *a = p->a;
    double *f = a->figures;
    double mk = a->end_s - a->start_s;
    double slots = 0, cap_speed = 0;
    uint64_t with_inputs = 0, hits = 0, fetches = 0, fetch_bytes = 0, cache_hits = 0;
    uint64_t pushed = 0, requests = 0, grants = 0, fails = 0, stolen = 0;
    uint64_t asked = 0, granted = 0, info_sent = 0, info_received = 0, token_passes = 0;
    uint64_t measured = 0, max_rss = 0, read_bytes = 0, write_bytes = 0;
    double cpu_s = 0, cpu_wall_s = 0;
    for (size_t i = 0; i < a->nnodes; i++) {
        struct report_node *n = &a->nodes[i];
        slots += n->slots;
        cap_speed += n->slots * n->speed;
        with_inputs += n->tasks_with_inputs;
        hits += n->locality_hits;
        fetches += n->fetches;
        fetch_bytes += n->fetch_bytes;
        cache_hits += n->cache_hits;
        pushed += n->pushed_out;
        requests += n->steal_requests;
        grants += n->steal_grants;
        fails += n->steal_fails;
        stolen += n->stolen_in;
        asked += n->tasks_asked;
        granted += n->tasks_granted;
        info_sent += n->info_sent;
        info_received += n->info_received;
        token_passes += n->token_passes;
        n->utilization = ratio(n->busy_s, n->slots * mk);
        n->cpu_efficiency = ratio(n->cpu_s, n->cpu_wall_s);
        measured += n->measured_runs;
        cpu_s += n->cpu_s;
        cpu_wall_s += n->cpu_wall_s;
        if (n->max_rss > max_rss)
            max_rss = n->max_rss;
        read_bytes += n->read_bytes;
        write_bytes += n->write_bytes;
        n->first_start_s = p->pn[i].first_start_ns == NO_TIME ? NAN
                                                              : ns_s(p->pn[i].first_start_ns);
        n->last_end_s = p->pn[i].last_end_ns == NO_TIME ? NAN : ns_s(p->pn[i].last_end_ns);
    }
    uint64_t ended = p->done + p->failed;
    f[RF_CPU_S] = measured ? cpu_s : NAN;
    f[RF_CPU_EFFICIENCY] = ratio(cpu_s, cpu_wall_s);
    f[RF_MAX_RSS_BYTES] = measured ? (double)max_rss : NAN;
    f[RF_READ_BYTES] = measured ? (double)read_bytes : NAN;
    f[RF_WRITE_BYTES] = measured ? (double)write_bytes : NAN;
    f[RF_MAKESPAN_S] = mk;
    f[RF_THROUGHPUT_TPS] = ratio((double)ended, mk);
    f[RF_WORK_S] = p->work_s;
    f[RF_IDEAL_S] = ratio(p->work_s, cap_speed);
    f[RF_EFFICIENCY] = ratio(f[RF_IDEAL_S], mk);
    f[RF_TIME_PER_TASK_PER_CPU_S] = ratio(mk * slots, (double)ended);
    f[RF_MEAN_TASK_S] = ratio(p->busy_s, (double)ended);
    f[RF_UTILIZATION] = ratio(p->busy_s, slots * mk);
    f[RF_SETUP_S] = p->first_start == NO_TIME || p->t0 == NO_TIME ? NAN
                                                                   : ns_s(p->first_start - p->t0);
    f[RF_NODES] = (double)a->nnodes;
    f[RF_SLOTS] = slots;
    f[RF_TASKS_SUBMITTED] = (double)p->submitted;
    f[RF_TASKS_DONE] = (double)p->done;
    f[RF_TASKS_FAILED] = (double)p->failed;
    f[RF_TASKS_CANCELLED] = (double)p->cancelled;
    f[RF_LOCALITY_HIT_RATE] = ratio((double)hits, (double)with_inputs);
    f[RF_TASKS_WITH_INPUTS] = (double)with_inputs;
    f[RF_BYTES_MOVED] = (double)fetch_bytes;
    f[RF_FETCHES] = (double)fetches;
    f[RF_CACHE_HITS] = (double)cache_hits;
    f[RF_CACHE_HIT_RATE] = ratio((double)cache_hits, (double)(cache_hits + fetches));
    f[RF_TASKS_PUSHED] = (double)pushed;
    f[RF_STEAL_REQUESTS] = (double)requests;
    f[RF_STEAL_GRANTS] = (double)grants;
    f[RF_STEAL_FAILS] = (double)fails;
    f[RF_STEAL_SUCCESS_PCT] = 100 * ratio((double)grants, (double)requests);
    f[RF_STEAL_ATTEMPT_SUCCESS_PCT] =
        100 * ratio((double)grants, (double)(requests + a->steal_fails_no_victim));
    f[RF_TASKS_STOLEN] = (double)stolen;
    f[RF_STEAL_TASKS_ASKED] = (double)asked;
    f[RF_STEAL_TASKS_GRANTED] = (double)granted;
    f[RF_INFO_SENT] = (double)info_sent;
    f[RF_INFO_RECEIVED] = (double)info_received;
    f[RF_TOKEN_PASSES] = (double)token_passes;
    f[RF_CAPACITY_CORE_S] = slots * mk;
    f[RF_BUSY_CORE_S] = p->busy_s;
    f[RF_EVENTS_DROPPED] = (double)p->dropped;
    double idle = 0;
    for (int c = 0; c < REPORT_LOST_COUNT; c++) {
        double s = 0;
        for (size_t i = 0; i < a->nnodes; i++)
            s += a->nodes[i].lost_s[c];
        f[RF_LOST_RAMP_UP_S + c] = s;
        idle += s;
    }
    f[RF_IDLE_CORE_S] = idle;
    double esum = 0, emax = a->nbins ? 0 : NAN;
    for (size_t b = 0; b < a->nbins; b++) {
        esum += a->bins[b].potential;
        if (a->bins[b].potential > emax)
            emax = a->bins[b].potential;
    }
    f[RF_POTENTIAL_MEAN] = ratio(esum, (double)a->nbins);
    f[RF_POTENTIAL_MAX] = emax;
    f[RF_BOUND_MAKESPAN_S] = NAN;
    f[RF_BOUND_QUALITY] = NAN;
}

void report_use_workload(struct report_analysis *a, const struct workload *wl)
{
    if (!a || !wl || !a->workload_path)
        return;
    double work = a->figures[RF_WORK_S];
    for (size_t i = 0; i < a->ndone_runs; i++) {
        const struct report_run *r = &a->done_runs[i];
        uint32_t index = (uint32_t)r->task;
        if ((uint32_t)(r->task >> 32) != a->workload_job || index >= wl->count ||
            wl->tasks[index].kind != TASK_SLEEP)
            continue;
        work += wl->tasks[index].duration_s - r->work_s;
    }
    double cap_speed = 0;
    for (size_t i = 0; i < a->nnodes; i++)
        cap_speed += a->nodes[i].slots * a->nodes[i].speed;
    a->work_declared = true;
    a->figures[RF_WORK_S] = work;
    a->figures[RF_IDEAL_S] = ratio(work, cap_speed);
    a->figures[RF_EFFICIENCY] = ratio(a->figures[RF_IDEAL_S], a->figures[RF_MAKESPAN_S]);
}

void report_set_bound(struct report_analysis *a, double bound_makespan_s, const char *name)
{
    if (!a)
        return;
    a->bound_name = name;
    a->figures[RF_BOUND_MAKESPAN_S] = bound_makespan_s;
    a->figures[RF_BOUND_QUALITY] = isfinite(bound_makespan_s)
                                       ? ratio(bound_makespan_s, a->figures[RF_MAKESPAN_S])
                                       : NAN;
}

/* ---- the whole ------------------------------------------------------------------------ */

static void pass_fini(struct pass *p)
{
    u64map_fini(&p->node_index);
    free(p->node_direct);
    u64map_fini(&p->task_index);
    uint64_t key;
    void *v;
    for (size_t pos = 0; (pos = u64map_next(&p->jobs, pos, &key, &v)) != 0;) {
        struct job_direct *j = v;
        free(j->idx);
        free(j);
    }
    u64map_fini(&p->jobs);
    free(p->pn);
    free(p->tasks);
    free(p->recs);
    free(p->samples);
    free(p->steals);
    free(p->lost);
    free(p->resubmits);
}

static void matrices(struct report_analysis *a, const struct steal_pair *pairs, size_t n,
                     struct pass *p)
{
    size_t nn = a->nnodes;
    if (nn > REPORT_MATRIX_MAX_NODES) {
        warn(a, "%zu nodes: the thief x victim matrices are left out (more than %d nodes)",
             nn, REPORT_MATRIX_MAX_NODES);
        return;
    }
    a->steal_tasks = xcalloc(nn * nn + 1, sizeof *a->steal_tasks);
    a->steal_asks = xcalloc(nn * nn + 1, sizeof *a->steal_asks);
    for (size_t i = 0; i < n; i++) {
        void *tv = u64map_get(&p->node_index, (uint64_t)pairs[i].thief_id + 1);
        void *vv = pairs[i].victim_id >= 0
                       ? u64map_get(&p->node_index, (uint64_t)pairs[i].victim_id + 1)
                       : NULL;
        if (!tv || !vv)
            continue;
        size_t at = ((uintptr_t)tv - 1) * nn + ((uintptr_t)vv - 1);
        if (pairs[i].request)
            a->steal_asks[at]++;
        else
            a->steal_tasks[at]++;
    }
}

static void final_warnings(struct pass *p, const struct trace_reader_info *info)
{
    struct report_analysis *a = p->a;
    if (info->tail == TRACE_TAIL_CUT)
        warn(a, "the file is cut after %" PRIu64 " whole blocks (a crash): the figures "
                "cover what they hold", info->blocks);
    else if (info->tail == TRACE_TAIL_BAD)
        warn(a, "the block framing is corrupt at byte %" PRIu64 ": the figures cover the %"
                PRIu64 " whole blocks before it", info->valid_end, info->blocks);
    if (p->dropped)
        warn(a, "the nodes dropped %" PRIu64 " events before encoding them (trace buffer "
                "full): counts and times are incomplete", p->dropped);
    uint64_t unended = 0, unstarted = 0;
    for (size_t i = 0; i < p->ntasks; i++) {
        const struct rtask *t = &p->tasks[i];
        if (t->submit_ns != NO_TIME && !t->ended)
            unended++;
        if (t->ended && t->start_ns == NO_TIME)
            unstarted++;
    }
    if (unended)
        warn(a, "%" PRIu64 " submitted tasks never ended in this trace", unended);
    if (p->ended_twice)
        warn(a, "%" PRIu64 " TASK_END events repeat an earlier one and were ignored",
             p->ended_twice);
    if (p->taskless)
        warn(a, "%" PRIu64 " task events named no task and were ignored", p->taskless);
    if (p->unknown_kinds)
        warn(a, "%" PRIu64 " events of kinds from a newer writer were skipped",
             p->unknown_kinds);
    if (p->bad_node_events)
        warn(a, "%" PRIu64 " events named a node beyond the %d this report handles",
             p->bad_node_events, SWEEP_MAX_NODES);
    for (size_t i = 0; i < a->nnodes; i++)
        if (a->nodes[i].slots <= 0) {
            warn(a, "node %" PRId32 ": slots unknown (no run header, NODE_UP or sample); "
                    "counted as 1", a->nodes[i].id);
            a->nodes[i].slots = 1;
        }
    if (p->submitted == 0 && p->done + p->failed == 0)
        warn(a, p->only_job ? "job %" PRIu32 " has no task in this trace"
                            : "the trace holds no task: there is nothing to report",
             p->only_job);
    if (!p->only_job && a->njobs > 1) {
        char list[160] = "";
        size_t at = 0;
        for (uint32_t i = 0; i < a->njobs && i < 8 && at < sizeof list - 16; i++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%" PRIu32, i ? ", " : "",
                                   a->job_ids[i]);
        warn(a, "the trace holds %" PRIu32 " jobs (%s%s): every figure mixes them, and the "
                "bound is the first's; --job J reports one", a->njobs, list,
             a->njobs > 8 ? ", …" : "");
    }
}

int report_analyze(const char *path, const struct report_options *opt,
                   struct report_analysis **out, char **cause)
{
    *out = NULL;
    if (cause)
        *cause = NULL;
    struct trace_reader *r;
    int rc = trace_reader_open(&r, path, cause);
    if (rc < 0)
        return rc;
    struct report_analysis *a = xcalloc(1, sizeof *a);
    a->trace_path = xstrdup(path);
    struct pass p = {.a = a, .t0 = NO_TIME, .t1 = NO_TIME, .first_start = NO_TIME,
                     .only_job = opt ? opt->job : 0};
    u64map_init(&p.node_index);
    u64map_init(&p.task_index);
    u64map_init(&p.jobs);
    const struct trace_reader_info *info = trace_reader_info(r);
    apply_header(&p, info->header_json);
    struct steal_pair *pairs = NULL;
    size_t npairs = 0, cap_pairs = 0;
    struct trace_event ev;
    while ((rc = trace_reader_next(r, &ev, cause)) == 0) {
        const char *const *names = NULL;
        size_t nnames = 0;
        if (ev.kind == TRACE_JOB_SUBMIT || ev.kind == TRACE_TASK_NAMES) {
            rc = trace_reader_names(r, &names, &nnames);
            if (rc < 0) {
                if (cause)
                    *cause = xasprintf("'%s': the names of a %s record do not decode", path,
                                       trace_kind_name((int)ev.kind));
                break;
            }
        }
        if ((ev.kind == TRACE_STEAL_REQUEST || ev.kind == TRACE_TASK_STOLEN_IN) &&
            ev.node >= 0) {
            pairs = xgrow(pairs, &cap_pairs, npairs + 1, sizeof *pairs);
            pairs[npairs++] = (struct steal_pair){.thief_id = ev.node, .victim_id = ev.peer,
                                                  .request = ev.kind == TRACE_STEAL_REQUEST};
        }
        /* Nodes are added here, never inside add_event, which holds pointers into the
         * node array; a peer missing from the header still gets a row. */
        if (ev.node >= 0 && ev.peer >= 0 && (unsigned)ev.kind < TRACE_KIND_COUNT &&
            !p.header_nodes)
            node_of(&p, ev.peer);
        add_event(&p, &ev, names, nnames);
    }
    if (rc < 0) {
        if (cause && *cause && !strstr(*cause, path)) {
            char *c = xasprintf("'%s': %s", path, *cause);
            free(*cause);
            *cause = c;
        }
        free(pairs);
        pass_fini(&p);
        trace_reader_destroy(r);
        report_analysis_destroy(a);
        return rc;
    }
    a->cut = info->tail != TRACE_TAIL_CLEAN;
    final_warnings(&p, info);
    trace_reader_destroy(r);

    /* The window; an empty trace gets a zero-length one at 0. */
    if (p.t1 == NO_TIME)
        p.t1 = p.t0 == NO_TIME ? 0 : p.t0;
    if (p.t0 == NO_TIME || p.t0 > p.t1)
        p.t0 = p.first_start != NO_TIME && p.first_start <= p.t1 ? p.first_start : p.t1;
    a->start_s = ns_s(p.t0);
    a->end_s = ns_s(p.t1);
    unsigned bins = opt && opt->bins ? opt->bins : REPORT_DEFAULT_BINS;
    if (bins > REPORT_MAX_BINS)
        bins = REPORT_MAX_BINS;
    a->nbins = p.t1 > p.t0 ? bins : 0;
    a->bin_s = a->nbins ? ns_s(p.t1 - p.t0) / (double)a->nbins : 0;
    a->bins = xcalloc(a->nbins ? a->nbins : 1, sizeof *a->bins);
    for (size_t b = 0; b < a->nbins; b++)
        a->bins[b].t_s = a->start_s + (double)b * a->bin_s;
    a->node_utilization = xcalloc(a->nbins * a->nnodes + 1, sizeof *a->node_utilization);
    matrices(a, pairs, npairs, &p);
    free(pairs);

    failure_windows(&p);
    struct sweep_input in = {.tasks = p.tasks, .ntasks = p.ntasks, .recs = p.recs,
                             .nrecs = p.nrecs, .steals = p.steals, .nsteals = p.nsteals,
                             .pn = p.pn, .t0 = p.t0, .t1 = p.t1};
    report_sweep(a, &in);
    p.recs = in.recs; /* the sweep may have swapped in its sorted copy */
    report_bin_samples(a, p.samples, p.nsamples, p.t0);
    fill_figures(&p);
    make_label(a);
    pass_fini(&p);
    *out = a;
    return 0;
}

void report_analysis_destroy(struct report_analysis *a)
{
    if (!a)
        return;
    free(a->trace_path);
    free(a->run_id);
    free(a->workload_name);
    free(a->workload_digest);
    free(a->placement);
    free(a->steal_policy);
    free(a->label);
    free(a->short_label);
    free(a->done_runs);
    free(a->spans);
    for (size_t i = 0; i < a->njob_rows; i++)
        free(a->job_rows[i].workload);
    free(a->job_rows);
    free(a->workload_path);
    free(a->workload_mode);
    free(a->nodes);
    free(a->steal_tasks);
    free(a->steal_asks);
    free(a->bins);
    free(a->node_utilization);
    free(a->names);
    for (size_t i = 0; i < a->nwarnings; i++)
        free(a->warnings[i]);
    free(a->warnings);
    free(a);
}
