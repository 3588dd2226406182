/*
 * trace verify — see verify.h.  Task records live in one array in the order tasks were
 * first seen, and the u64map holds index + 1 (never NULL) for each key: the array can be
 * grown by realloc without touching the map, and walking it at the end lists problems in
 * file order, which is what a reader comparing with `trace cat` expects.
 */
#include "trace/offline/verify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/search.h"
#include "core/base/text.h"
#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"

#define DEFAULT_LISTED 10
/* Sequence numbers at or beyond this are not tracked (512 MiB of bitmap for one node):
 * no real node gets there, so such a number is a corrupt record, reported as a gap. */
#define SEQ_LIMIT (INT64_C(1) << 32)

/* One task.  Counters saturate at UINT8_MAX; only "0, 1 or more" matters to the checks
 * and the numbers in the sentences are exact below that.
 * Attempts (share/doc/trace-schema.md, "Attempts"): the starts and ends kept are those
 * of the highest attempt seen so far; when a higher one appears they are forgotten (an
 * earlier attempt lost), and events of a lower attempt only count as lost.  The first
 * SUBMIT and START are over every attempt: a dead node's run started after its submit
 * and its parents as much as the winning run did. */
struct task_rec {
    uint64_t key;
    int64_t submit_ns;      /* earliest TASK_SUBMIT; valid when submits > 0 */
    int64_t first_start_ns; /* earliest TASK_START of any attempt; valid when any_starts */
    int64_t last_start_ns;  /* latest TASK_START of the attempt */
    int64_t end_ns;         /* earliest TASK_END of the attempt; valid when ends > 0 */
    int32_t start_node;     /* node of the latest TASK_START of the attempt */
    int32_t end_status;     /* status of the earliest TASK_END of the attempt */
    uint32_t attempt;       /* highest attempt seen (SUBMIT, START, END, RESUBMIT) */
    uint8_t submits, starts, ends, done_ends; /* starts, ends: of the attempt */
    uint8_t any_starts;     /* TASK_STARTs of every attempt */
};

/* A TASK_RESUBMIT, checked at finish against the NODE_DOWNs of the node recording it. */
struct resubmit_rec {
    uint64_t task;
    int64_t time_ns;
    int32_t node, dead;
    int32_t attempt;
};

/* The first time node `node` declared `peer` dead. */
struct declared_rec {
    int32_t node, peer;
    int64_t time_ns;
};

struct node_seq {
    int32_t node;
    uint64_t *seen;  /* owned; bit s set once seq s was fed */
    size_t nwords;
    int64_t max_seq; /* highest tracked seq; -1 before the first */
    int64_t dropped; /* sum of this node's DROPPED counts, to explain its gaps */
};

struct job_rec {
    uint32_t job;
    int64_t count;          /* tasks the JOB_SUBMIT announced */
    char *workload;         /* owned; NULL when the JOB_SUBMIT named none */
    char *digest;           /* owned; NULL when the JOB_SUBMIT gave none */
    uint64_t submitted;     /* distinct tasks with a TASK_SUBMIT (filled at finish) */
    uint64_t beyond;        /* of which index >= count */
    uint32_t first_beyond;  /* smallest such index */
};

struct problem_list {
    char **text; /* owned; the first `listed` sentences */
    size_t listed;
};

struct trace_verify {
    size_t max_listed;
    struct task_rec *tasks; /* owned; first-seen order */
    size_t ntasks, cap_tasks;
    struct u64map task_index; /* key -> (void *)(index + 1) */
    struct node_seq *nodes;   /* owned; sorted by node */
    size_t nnodes, cap_nodes;
    size_t last_node;         /* index of the node fed last: events come in runs */
    struct u64map jobs;       /* job -> struct job_rec * (owned) */
    struct problem_list lists[TRACE_PROBLEM_KIND_COUNT];
    struct problem_list notes;      /* what is no problem but worth saying (late runs) */
    struct resubmit_rec *resubmits; /* owned */
    size_t nresubmits, cap_resubmits;
    struct declared_rec *declared;  /* owned; few: one per (node, dead peer) */
    size_t ndeclared, cap_declared;
    struct trace_verify_report report;
    struct trace_problem *listed; /* owned; built by finish, texts borrowed from lists */
    const struct workload *wl;    /* borrowed; NULL unless trace_verify_workload */
    char *wl_digest;              /* owned; NULL when unknown */
    bool finished;
};

static const char *const kind_names[TRACE_PROBLEM_KIND_COUNT] = {
    [TRACE_PROBLEM_FILE] = "file",
    [TRACE_PROBLEM_SEQ_GAP] = "seq-gap",
    [TRACE_PROBLEM_DROPPED] = "dropped",
    [TRACE_PROBLEM_SEQ_DUPLICATE] = "seq-duplicate",
    [TRACE_PROBLEM_MISSING_SUBMIT] = "missing-submit",
    [TRACE_PROBLEM_MISSING_START] = "missing-start",
    [TRACE_PROBLEM_MISSING_END] = "missing-end",
    [TRACE_PROBLEM_EXTRA_END] = "extra-end",
    [TRACE_PROBLEM_ORDER] = "order",
    [TRACE_PROBLEM_JOB_COUNT] = "job-count",
    [TRACE_PROBLEM_DEPENDENCY] = "dependency",
    [TRACE_PROBLEM_RESUBMIT] = "resubmit",
};

const char *trace_problem_kind_name(enum trace_problem_kind kind)
{
    return (unsigned)kind < TRACE_PROBLEM_KIND_COUNT ? kind_names[kind] : "unknown";
}

void trace_verify_create(struct trace_verify **out, size_t max_listed)
{
    struct trace_verify *v = xcalloc(1, sizeof *v);
    v->max_listed = max_listed ? max_listed : DEFAULT_LISTED;
    u64map_init(&v->task_index);
    u64map_init(&v->jobs);
    *out = v;
}

void trace_verify_destroy(struct trace_verify *v)
{
    if (!v)
        return;
    free(v->tasks);
    u64map_fini(&v->task_index);
    for (size_t i = 0; i < v->nnodes; i++)
        free(v->nodes[i].seen);
    free(v->nodes);
    uint64_t key;
    void *value;
    for (size_t pos = 0; (pos = u64map_next(&v->jobs, pos, &key, &value)) != 0;) {
        struct job_rec *j = value;
        free(j->workload);
        free(j->digest);
        free(j);
    }
    u64map_fini(&v->jobs);
    free(v->wl_digest);
    for (int k = 0; k < TRACE_PROBLEM_KIND_COUNT; k++) {
        for (size_t i = 0; i < v->lists[k].listed; i++)
            free(v->lists[k].text[i]);
        free(v->lists[k].text);
    }
    for (size_t i = 0; i < v->notes.listed; i++)
        free(v->notes.text[i]);
    free(v->notes.text);
    free(v->resubmits);
    free(v->declared);
    free(v->listed);
    free(v);
}

/* Counts a problem and keeps its sentence while the kind has room; the sentence is only
 * formatted when it will be kept, so a million missing ENDs cost a million counts. */
/* Keeps a sentence in `l` while there is room for it. */
static void keep(struct trace_verify *v, struct problem_list *l, const char *what,
                 const char *fmt, va_list ap)
{
    if (l->listed >= v->max_listed)
        return;
    if (!l->text)
        l->text = xcalloc(v->max_listed, sizeof *l->text);
    char *s;
    if (vasprintf(&s, fmt, ap) < 0)
        s = xasprintf("(out of memory formatting this %s)", what);
    l->text[l->listed++] = s;
}

__attribute__((format(printf, 3, 4))) static void problem(struct trace_verify *v,
                                                          enum trace_problem_kind kind,
                                                          const char *fmt, ...)
{
    v->report.by_kind[kind]++;
    v->report.problems++;
    va_list ap;
    va_start(ap, fmt);
    keep(v, &v->lists[kind], "problem", fmt, ap);
    va_end(ap);
}

/* Keeps a note's sentence while there is room; counting is the caller's. */
__attribute__((format(printf, 2, 3))) static void note(struct trace_verify *v,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    keep(v, &v->notes, "note", fmt, ap);
    va_end(ap);
}

void trace_verify_note(struct trace_verify *v, const char *text)
{
    if (v && text && !v->finished)
        problem(v, TRACE_PROBLEM_FILE, "%s", text);
}

static double seconds(int64_t ns)
{
    return (double)ns / 1e9;
}

/* job:index, as `trace cat` prints it. */
static const char *task_name(uint64_t key, char buf[24])
{
    snprintf(buf, 24, "%" PRIu32 ":%" PRIu32, (uint32_t)(key >> 32), (uint32_t)key);
    return buf;
}

static struct node_seq *node_for(struct trace_verify *v, int32_t node)
{
    if (v->last_node < v->nnodes && v->nodes[v->last_node].node == node)
        return &v->nodes[v->last_node];
    size_t lo = SEARCH_BY(v->nodes, v->nnodes, node, node);
    if (lo == v->nnodes || v->nodes[lo].node != node) {
        v->nodes = xgrow(v->nodes, &v->cap_nodes, v->nnodes + 1, sizeof *v->nodes);
        memmove(&v->nodes[lo + 1], &v->nodes[lo], (v->nnodes - lo) * sizeof *v->nodes);
        v->nodes[lo] = (struct node_seq){ .node = node, .max_seq = -1 };
        v->nnodes++;
    }
    v->last_node = lo;
    return &v->nodes[lo];
}

static void add_seq(struct trace_verify *v, const struct trace_event *ev)
{
    struct node_seq *n = node_for(v, ev->node);
    if (ev->kind == TRACE_DROPPED && ev->count > 0 && n->dropped <= INT64_MAX - ev->count)
        n->dropped += ev->count;
    if (ev->seq >= SEQ_LIMIT) {
        problem(v, TRACE_PROBLEM_SEQ_GAP, "node %" PRId32 ": event number %" PRId64
                " is implausibly large (corrupt record?); numbers from 2^32 on are not "
                "checked", ev->node, ev->seq);
        return;
    }
    size_t word = (size_t)(ev->seq / 64);
    uint64_t bit = UINT64_C(1) << (ev->seq % 64);
    if (word >= n->nwords) {
        size_t old = n->nwords;
        n->seen = xgrow(n->seen, &n->nwords, word + 1, sizeof *n->seen);
        memset(n->seen + old, 0, (n->nwords - old) * sizeof *n->seen);
    }
    if (n->seen[word] & bit) {
        v->report.duplicate_events++;
        problem(v, TRACE_PROBLEM_SEQ_DUPLICATE, "node %" PRId32 ": event %" PRId64
                " (%s) is recorded more than once", ev->node, ev->seq,
                trace_kind_name((int)ev->kind) ? trace_kind_name((int)ev->kind) : "newer kind");
        return;
    }
    n->seen[word] |= bit;
    if (ev->seq > n->max_seq)
        n->max_seq = ev->seq;
}

static struct task_rec *task_for(struct trace_verify *v, uint64_t key)
{
    uintptr_t idx = (uintptr_t)u64map_get(&v->task_index, key);
    if (idx)
        return &v->tasks[idx - 1];
    v->tasks = xgrow(v->tasks, &v->cap_tasks, v->ntasks + 1, sizeof *v->tasks);
    struct task_rec *t = &v->tasks[v->ntasks++];
    *t = (struct task_rec){ .key = key, .start_node = -1 };
    u64map_put(&v->task_index, key, (void *)(uintptr_t)v->ntasks);
    return t;
}

static void bump(uint8_t *c)
{
    if (*c < UINT8_MAX)
        (*c)++;
}

static const char *status_name(int32_t status, char buf[24])
{
    if (status >= 0 && status < TASK_STATUS_COUNT)
        return task_status_name((enum task_status)status);
    snprintf(buf, 24, "status %" PRId32, status);
    return buf;
}

/* A higher attempt than any seen: what was kept of the earlier one lost. */
static void new_attempt(struct task_rec *t, uint32_t attempt)
{
    t->attempt = attempt;
    t->starts = t->ends = t->done_ends = 0;
    t->start_node = -1;
}

/* The attempt an event names: duration on SUBMIT, START and END (0 in files written
 * before attempts), clamped so that a corrupt value cannot pass for a huge attempt. */
static uint32_t event_attempt(const struct trace_event *ev)
{
    return ev->duration_ns <= 0 ? 0 : ev->duration_ns > INT32_MAX ? INT32_MAX
                                                                   : (uint32_t)ev->duration_ns;
}

static void add_task(struct trace_verify *v, const struct trace_event *ev)
{
    struct task_rec *t = task_for(v, ev->task);
    uint32_t attempt = event_attempt(ev);
    if (attempt > t->attempt)
        new_attempt(t, attempt);
    bool current = attempt == t->attempt;
    switch (ev->kind) {
    case TRACE_TASK_SUBMIT:
        if (!t->submits || ev->time_ns < t->submit_ns)
            t->submit_ns = ev->time_ns;
        bump(&t->submits);
        break;
    case TRACE_TASK_START:
        if (!t->any_starts || ev->time_ns < t->first_start_ns)
            t->first_start_ns = ev->time_ns;
        bump(&t->any_starts);
        if (!current)
            break;
        if (!t->starts || ev->time_ns >= t->last_start_ns) {
            t->last_start_ns = ev->time_ns;
            t->start_node = ev->node;
        }
        bump(&t->starts);
        break;
    case TRACE_TASK_END:
        if (!current) {
            char name[24], st[24];
            v->report.lost_ends++;
            note(v, "task %s: attempt %" PRIu32 " ended %s on node %" PRId32 " at %.9f s, "
                 "after attempt %" PRIu32 " was handed on: a lost run, not counted",
                 task_name(t->key, name), attempt, status_name(ev->status, st), ev->node,
                 seconds(ev->time_ns), t->attempt);
            break;
        }
        if (!t->ends || ev->time_ns < t->end_ns) {
            t->end_ns = ev->time_ns;
            t->end_status = ev->status;
        }
        bump(&t->ends);
        if (ev->status == TASK_DONE)
            bump(&t->done_ends);
        break;
    default:
        break; /* READY, QUEUED_*, PUSHED, STOLEN_*: the task appears, nothing to time */
    }
}

static void add_resubmit(struct trace_verify *v, const struct trace_event *ev)
{
    v->report.resubmissions++;
    struct task_rec *t = task_for(v, ev->task);
    uint32_t attempt = ev->status <= 0 ? 0 : (uint32_t)ev->status;
    if (attempt > t->attempt)
        new_attempt(t, attempt);
    v->resubmits = xgrow(v->resubmits, &v->cap_resubmits, v->nresubmits + 1,
                         sizeof *v->resubmits);
    v->resubmits[v->nresubmits++] = (struct resubmit_rec){
        .task = ev->task, .time_ns = ev->time_ns, .node = ev->node,
        .dead = ev->count < 0 || ev->count > INT32_MAX ? -1 : (int32_t)ev->count,
        .attempt = ev->status};
}

static void add_declared(struct trace_verify *v, const struct trace_event *ev)
{
    for (size_t i = 0; i < v->ndeclared; i++) {
        struct declared_rec *d = &v->declared[i];
        if (d->node == ev->node && d->peer == ev->peer) {
            if (ev->time_ns < d->time_ns)
                d->time_ns = ev->time_ns;
            return;
        }
    }
    v->declared = xgrow(v->declared, &v->cap_declared, v->ndeclared + 1, sizeof *v->declared);
    v->declared[v->ndeclared++] = (struct declared_rec){ev->node, ev->peer, ev->time_ns};
}

static void add_job(struct trace_verify *v, const struct trace_event *ev)
{
    uint32_t job = (uint32_t)(ev->task >> 32);
    struct job_rec *j = u64map_get(&v->jobs, job);
    if (j) {
        if (j->count != ev->count)
            problem(v, TRACE_PROBLEM_JOB_COUNT, "job %" PRIu32 " is announced twice, with %"
                    PRId64 " and %" PRId64 " tasks", job, j->count, ev->count);
        return;
    }
    j = xcalloc(1, sizeof *j);
    j->job = job;
    j->count = ev->count;
    if (ev->nnames > 0 && ev->names && ev->names[0])
        j->workload = xstrdup(ev->names[0]);
    if (ev->nnames > 1 && ev->names && ev->names[1] && ev->names[1][0])
        j->digest = xstrdup(ev->names[1]);
    u64map_put(&v->jobs, job, j);
}

int trace_verify_add(struct trace_verify *v, const struct trace_event *ev)
{
    if (!v || !ev)
        return -EINVAL;
    if (v->finished)
        return -EINVAL;
    v->report.events++;
    add_seq(v, ev);
    if ((unsigned)ev->kind >= TRACE_KIND_COUNT) {
        v->report.unknown_kinds++;
        return 0;
    }
    if (ev->kind <= TRACE_TASK_END && ev->task != TRACE_NO_TASK)
        add_task(v, ev);
    else if (ev->kind == TRACE_JOB_SUBMIT && ev->task != TRACE_NO_TASK)
        add_job(v, ev);
    else if (ev->kind == TRACE_TASK_RESUBMIT && ev->task != TRACE_NO_TASK)
        add_resubmit(v, ev);
    else if (ev->kind == TRACE_OBJECT_RECOMPUTE)
        v->report.recomputations++;
    else if (ev->kind == TRACE_TASK_RETRY)
        v->report.retries++;
    else if (ev->kind == TRACE_NODE_DOWN && ev->status == TRACE_DOWN_DECLARED && ev->peer >= 0)
        add_declared(v, ev);
    return 0;
}

static void check_task(struct trace_verify *v, const struct task_rec *t)
{
    char name[24], st[24], of[48] = "";
    task_name(t->key, name);
    if (t->attempt > 0) {
        v->report.tasks_rerun++;
        snprintf(of, sizeof of, " of its attempt %" PRIu32, t->attempt);
    }
    if (t->ends) {
        if (t->end_status == TASK_DONE)
            v->report.tasks_done++;
        else if (t->end_status == TASK_FAILED)
            v->report.tasks_failed++;
        else if (t->end_status == TASK_CANCELLED)
            v->report.tasks_cancelled++;
    }
    if (!t->submits) {
        if (t->starts)
            problem(v, TRACE_PROBLEM_MISSING_SUBMIT, "task %s has no TASK_SUBMIT (it started "
                    "on node %" PRId32 " at %.9f s)", name, t->start_node,
                    seconds(t->last_start_ns));
        else if (t->any_starts)
            problem(v, TRACE_PROBLEM_MISSING_SUBMIT, "task %s has no TASK_SUBMIT (it started "
                    "at %.9f s)", name, seconds(t->first_start_ns));
        else
            problem(v, TRACE_PROBLEM_MISSING_SUBMIT, "task %s has no TASK_SUBMIT", name);
    }
    if (!t->ends) {
        if (t->starts)
            problem(v, TRACE_PROBLEM_MISSING_END, "task %s has no TASK_END%s (it started on "
                    "node %" PRId32 " at %.9f s)", name, of, t->start_node,
                    seconds(t->last_start_ns));
        else
            problem(v, TRACE_PROBLEM_MISSING_END, "task %s has no TASK_END%s (and no "
                    "TASK_START)", name, of);
    } else if (t->ends > 1) {
        problem(v, TRACE_PROBLEM_EXTRA_END, "task %s has %u TASK_END events%s (%u of them "
                "DONE); a task ends once", name, (unsigned)t->ends, of, (unsigned)t->done_ends);
    }
    if (t->ends && !t->starts && t->end_status != TASK_CANCELLED)
        problem(v, TRACE_PROBLEM_MISSING_START, "task %s ended %s at %.9f s without a "
                "TASK_START%s (only a cancelled task may)", name,
                status_name(t->end_status, st), seconds(t->end_ns), of);
    if (t->submits && t->any_starts && t->first_start_ns < t->submit_ns)
        problem(v, TRACE_PROBLEM_ORDER, "task %s started at %.9f s, before its submit at "
                "%.9f s", name, seconds(t->first_start_ns), seconds(t->submit_ns));
    if (t->ends && t->starts && t->end_ns < t->last_start_ns)
        problem(v, TRACE_PROBLEM_ORDER, "task %s ended at %.9f s, before its start at "
                "%.9f s", name, seconds(t->end_ns), seconds(t->last_start_ns));
    else if (t->ends && !t->starts && t->submits && t->end_ns < t->submit_ns)
        problem(v, TRACE_PROBLEM_ORDER, "task %s ended at %.9f s, before its submit at "
                "%.9f s", name, seconds(t->end_ns), seconds(t->submit_ns));
}

/* A resubmission hands on the task of a node its recorder had declared dead: anything
 * else would run a live node's task twice.  Compared on the recorder's own clock. */
static void check_resubmits(struct trace_verify *v)
{
    char name[24];
    for (size_t i = 0; i < v->nresubmits; i++) {
        const struct resubmit_rec *r = &v->resubmits[i];
        task_name(r->task, name);
        if (r->attempt < 1)
            problem(v, TRACE_PROBLEM_RESUBMIT, "task %s: node %" PRId32 " resubmitted it at "
                    "%.9f s as attempt %" PRId32 " (a resubmission is attempt 1 or later)",
                    name, r->node, seconds(r->time_ns), r->attempt);
        const struct declared_rec *d = NULL;
        for (size_t k = 0; k < v->ndeclared && !d; k++)
            if (v->declared[k].node == r->node && v->declared[k].peer == r->dead)
                d = &v->declared[k];
        if (!d)
            problem(v, TRACE_PROBLEM_RESUBMIT, "task %s: node %" PRId32 " resubmitted it at "
                    "%.9f s, taken from node %" PRId32 ", which it never declared dead "
                    "(no NODE_DOWN with status 1)", name, r->node, seconds(r->time_ns),
                    r->dead);
        else if (d->time_ns > r->time_ns)
            problem(v, TRACE_PROBLEM_RESUBMIT, "task %s: node %" PRId32 " resubmitted it at "
                    "%.9f s, taken from node %" PRId32 ", which it declared dead only at "
                    "%.9f s", name, r->node, seconds(r->time_ns), r->dead,
                    seconds(d->time_ns));
    }
}

/* First position >= from (and <= max) whose bit equals `set`, or max + 1. */
static int64_t next_bit(const uint64_t *bits, int64_t from, int64_t max, bool set)
{
    int64_t s = from;
    while (s <= max) {
        uint64_t w = bits[s / 64];
        if (!set)
            w = ~w;
        w >>= s % 64;
        if (w)
            return s + __builtin_ctzll(w) <= max ? s + __builtin_ctzll(w) : max + 1;
        s = (s / 64 + 1) * 64;
    }
    return max + 1;
}

static void check_gaps(struct trace_verify *v, const struct node_seq *n)
{
    int64_t s = 0;
    while ((s = next_bit(n->seen, s, n->max_seq, false)) <= n->max_seq) {
        /* max_seq itself is set, so the run of zeros ends inside the bitmap. */
        int64_t e = next_bit(n->seen, s, n->max_seq, true);
        v->report.missing_events += (uint64_t)(e - s);
        char why[96] = "";
        if (n->dropped)
            snprintf(why, sizeof why, "; the node reports %" PRId64 " events dropped in all",
                     n->dropped);
        if (e - s == 1)
            problem(v, TRACE_PROBLEM_SEQ_GAP, "node %" PRId32 ": event %" PRId64 " missing%s",
                    n->node, s, why);
        else
            problem(v, TRACE_PROBLEM_SEQ_GAP, "node %" PRId32 ": events %" PRId64 "..%" PRId64
                    " missing (%" PRId64 " events)%s", n->node, s, e - 1, e - s, why);
        s = e;
    }
}

/* Drops leave no gap (the tracer numbers only what it keeps) but the trace is short of
 * them all the same: never silently. */
static void check_dropped(struct trace_verify *v, const struct node_seq *n)
{
    if (n->dropped)
        problem(v, TRACE_PROBLEM_DROPPED, "node %" PRId32 ": its tracer dropped %" PRId64
                " events (its buffer was full: see --trace-buffer)", n->node, n->dropped);
}

static int cmp_job(const void *a, const void *b)
{
    const struct job_rec *x = *(const struct job_rec *const *)a;
    const struct job_rec *y = *(const struct job_rec *const *)b;
    return (x->job > y->job) - (x->job < y->job);
}

static void check_jobs(struct trace_verify *v)
{
    size_t n = u64map_len(&v->jobs);
    v->report.jobs = n;
    if (!n)
        return;
    for (size_t i = 0; i < v->ntasks; i++) {
        const struct task_rec *t = &v->tasks[i];
        struct job_rec *j = t->submits ? u64map_get(&v->jobs, t->key >> 32) : NULL;
        if (!j)
            continue;
        j->submitted++;
        uint32_t index = (uint32_t)t->key;
        if ((int64_t)index >= j->count) {
            if (!j->beyond || index < j->first_beyond)
                j->first_beyond = index;
            j->beyond++;
        }
    }
    struct job_rec **all = xcalloc(n, sizeof *all);
    size_t k = 0;
    uint64_t key;
    void *value;
    for (size_t pos = 0; (pos = u64map_next(&v->jobs, pos, &key, &value)) != 0;)
        all[k++] = value;
    qsort(all, k, sizeof *all, cmp_job);
    for (size_t i = 0; i < k; i++) {
        const struct job_rec *j = all[i];
        char what[160] = "";
        if (j->workload)
            snprintf(what, sizeof what, " (workload '%.120s')", j->workload);
        if ((int64_t)j->submitted != j->count)
            problem(v, TRACE_PROBLEM_JOB_COUNT, "job %" PRIu32 "%s: JOB_SUBMIT announces %"
                    PRId64 " tasks, %" PRIu64 " were submitted", j->job, what, j->count,
                    j->submitted);
        if (j->beyond)
            problem(v, TRACE_PROBLEM_JOB_COUNT, "job %" PRIu32 "%s: %" PRIu64 " submitted "
                    "tasks have an index beyond its %" PRId64 " tasks (the first is %" PRIu32
                    ":%" PRIu32 ")", j->job, what, j->beyond, j->count, j->job,
                    j->first_beyond);
    }
    free(all);
}

int trace_verify_workload(struct trace_verify *v, const struct workload *wl,
                          const char *digest)
{
    if (!v || !wl || v->finished)
        return -EINVAL;
    v->wl = wl;
    free(v->wl_digest);
    v->wl_digest = digest && digest[0] ? xstrdup(digest) : NULL;
    return 0;
}

/* The jobs that ran the workload, sorted; see verify.h for the order of the rules. */
static size_t dag_jobs(struct trace_verify *v, uint32_t **out)
{
    size_t n = 0, cap = 0;
    uint32_t *jobs = NULL;
    uint64_t key;
    void *value;
    for (int rule = 0; rule < 2 && n == 0; rule++) {
        for (size_t pos = 0; (pos = u64map_next(&v->jobs, pos, &key, &value)) != 0;) {
            const struct job_rec *j = value;
            bool match = rule == 0 ? v->wl_digest && j->digest && !strcmp(j->digest, v->wl_digest)
                                   : j->count == (int64_t)v->wl->count;
            if (match) {
                jobs = xgrow(jobs, &cap, n + 1, sizeof *jobs);
                jobs[n++] = j->job;
            }
        }
    }
    if (n == 0 && u64map_len(&v->jobs) == 0) {
        /* No JOB_SUBMIT at all (spool files merged without the collector's): the one job
         * the task events name, if there is only one. */
        for (size_t i = 0; i < v->ntasks; i++) {
            uint32_t job = (uint32_t)(v->tasks[i].key >> 32);
            if (n == 0) {
                jobs = xgrow(jobs, &cap, 1, sizeof *jobs);
                jobs[n++] = job;
            } else if (jobs[0] != job) {
                n = 0;
                break;
            }
        }
    }
    for (size_t i = 1; i < n; i++) /* few jobs: insertion sort */
        for (size_t k = i; k > 0 && jobs[k - 1] > jobs[k]; k--) {
            uint32_t t = jobs[k];
            jobs[k] = jobs[k - 1];
            jobs[k - 1] = t;
        }
    *out = jobs;
    return n;
}

/* A task as the sentences name it: its id, cut, and job:index. */
static char *dag_name(const struct workload *wl, uint32_t job, uint32_t index)
{
    const char *id = wl->tasks[index].id;
    char *shown = text_clip(id, strlen(id), TEXT_SHOWN);
    char *name = xasprintf("'%s' (%" PRIu32 ":%" PRIu32 ")", shown, job, index);
    free(shown);
    return name;
}

static void check_dag_job(struct trace_verify *v, uint32_t job)
{
    const struct workload *wl = v->wl;
    char st[24];
    for (uint32_t i = 0; i < wl->count; i++) {
        uintptr_t at = (uintptr_t)u64map_get(&v->task_index, (uint64_t)job << 32 | i);
        const struct task_rec *t = at ? &v->tasks[at - 1] : NULL;
        if (!t || !t->any_starts)
            continue; /* never started: nothing to order */
        for (uint32_t k = 0; k < wl->tasks[i].num_parents; k++) {
            uint32_t p = wl->tasks[i].parents[k];
            uintptr_t pat = (uintptr_t)u64map_get(&v->task_index, (uint64_t)job << 32 | p);
            const struct task_rec *pt = pat ? &v->tasks[pat - 1] : NULL;
            v->report.dag_edges++;
            if (pt && pt->ends && pt->end_status == TASK_DONE &&
                pt->end_ns <= t->first_start_ns)
                continue;
            char *child = dag_name(wl, job, i), *parent = dag_name(wl, job, p);
            if (!pt || !pt->ends)
                problem(v, TRACE_PROBLEM_DEPENDENCY, "task %s started at %.9f s, but its parent "
                        "%s never ended", child, seconds(t->first_start_ns), parent);
            else if (pt->end_status != TASK_DONE)
                problem(v, TRACE_PROBLEM_DEPENDENCY, "task %s started at %.9f s, but its parent "
                        "%s ended %s at %.9f s", child, seconds(t->first_start_ns), parent,
                        status_name(pt->end_status, st), seconds(pt->end_ns));
            else
                problem(v, TRACE_PROBLEM_DEPENDENCY, "task %s started at %.9f s, before its "
                        "parent %s ended at %.9f s", child, seconds(t->first_start_ns), parent,
                        seconds(pt->end_ns));
            free(child);
            free(parent);
        }
    }
}

static void check_dag(struct trace_verify *v)
{
    uint32_t *jobs = NULL;
    size_t n = dag_jobs(v, &jobs);
    if (n == 0) {
        problem(v, TRACE_PROBLEM_DEPENDENCY, "no job of the trace ran this workload (%" PRIu32
                " tasks%s%s): its dependencies were not checked", v->wl->count,
                v->wl_digest ? ", digest " : "", v->wl_digest ? v->wl_digest : "");
        free(jobs);
        return;
    }
    v->report.dag_jobs = n;
    v->report.dag_job = jobs[0];
    for (size_t i = 0; i < n; i++)
        check_dag_job(v, jobs[i]);
    free(jobs);
}

const struct trace_verify_report *trace_verify_finish(struct trace_verify *v)
{
    if (!v)
        return NULL;
    if (v->finished)
        return &v->report;
    v->finished = true;
    v->report.nodes = v->nnodes;
    v->report.tasks = v->ntasks;
    for (size_t i = 0; i < v->nnodes; i++) {
        check_gaps(v, &v->nodes[i]);
        check_dropped(v, &v->nodes[i]);
    }
    for (size_t i = 0; i < v->ntasks; i++)
        check_task(v, &v->tasks[i]);
    check_resubmits(v);
    check_jobs(v);
    if (v->wl)
        check_dag(v);
    v->report.notes = (const char *const *)v->notes.text;
    v->report.nnotes = v->notes.listed;

    size_t total = 0;
    for (int k = 0; k < TRACE_PROBLEM_KIND_COUNT; k++)
        total += v->lists[k].listed;
    v->listed = xcalloc(total ? total : 1, sizeof *v->listed);
    size_t n = 0;
    for (int k = 0; k < TRACE_PROBLEM_KIND_COUNT; k++)
        for (size_t i = 0; i < v->lists[k].listed; i++)
            v->listed[n++] = (struct trace_problem){ .kind = (enum trace_problem_kind)k,
                                                     .text = v->lists[k].text[i] };
    v->report.listed = v->listed;
    v->report.nlisted = n;
    return &v->report;
}
