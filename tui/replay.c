/*
 * replay — see replay.h.
 *
 * Only samples, notes and the task events the job tallies need (starts, ends, retries,
 * job submits; 32 bytes each) are kept, each with its position in the file: items are
 * sorted by time, ties by file order, which within a node is the order it recorded them.
 * The model is fed by merging samples and notes; the task events go through a
 * trace/format/jobtally, the collector's fold, whose result the model takes at each seek.
 *
 * The replay remembers which model it fed and how far (by the model's input count, which
 * anything else feeding it would change), so that seeking forward only feeds what lies
 * between; any other model is reset and fed from the start.
 */
#include "tui/replay.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "trace/format/jobtally.h"
#include "trace/format/reader.h"
#include "trace/format/wire.h"

struct replay_sample {
    int64_t time_ns;
    uint64_t order;    /* position in the file */
    int32_t node;
    struct trace_sample s;
};

struct replay_note {
    uint64_t order;
    struct wire_note n;
};

struct replay_task {
    int64_t time_ns;
    uint64_t order;
    uint64_t task;
    int32_t node;
    uint8_t kind;      /* TASK_START, TASK_END, TASK_RETRY, JOB_SUBMIT */
    uint8_t status;
};

struct replay_job {    /* a JOB_SUBMIT's count and name, which task items leave out */
    uint32_t job, tasks;
    char name[WIRE_MAX_JOB_NAME];
};

struct replay {
    char *header;                   /* owned; NULL when the file has none */
    struct replay_sample *samples;  /* owned; nsamples, by time then order */
    size_t nsamples, cap_samples;
    struct replay_note *notes;      /* owned; nnotes, by time then order */
    size_t nnotes, cap_notes;
    struct replay_task *tasks;      /* owned; ntasks, by time then order */
    size_t ntasks, cap_tasks;
    struct replay_job *jobs;        /* owned; njobs, in file order */
    size_t njobs, cap_jobs;
    struct jobtally *tally;         /* owned: the jobs' figures up to fed_ns */
    int64_t first_ns, last_ns;

    /* The model fed last, and where it stands. */
    const struct model *fed;        /* borrowed; NULL before the first seek */
    uint64_t fed_inputs;            /* its input count after our last seek */
    size_t next_sample, next_note, next_task; /* first items not fed yet */
    int64_t fed_ns;                 /* time it was brought to */
};

static int sample_cmp(const void *a, const void *b)
{
    const struct replay_sample *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int task_cmp(const void *a, const void *b)
{
    const struct replay_task *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int note_cmp(const void *a, const void *b)
{
    const struct replay_note *x = a, *y = b;
    if (x->n.time_ns != y->n.time_ns)
        return x->n.time_ns < y->n.time_ns ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* Blocks of one node are in time order already; only their interleaving is not, so
 * a sorted array is common enough (one node, a merged trace) to be worth checking. */
static void sort_items(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    const char *p = base;
    for (size_t i = 1; i < n; i++) {
        if (cmp(p + (i - 1) * size, p + i * size) > 0) {
            qsort(base, n, size, cmp);
            return;
        }
    }
}

static void keep_task(struct replay *r, const struct trace_event *ev, uint64_t order,
                      const char *name)
{
    r->tasks = xgrow(r->tasks, &r->cap_tasks, r->ntasks + 1, sizeof *r->tasks);
    r->tasks[r->ntasks++] = (struct replay_task){
        .time_ns = ev->time_ns, .order = order, .task = ev->task, .node = ev->node,
        .kind = (uint8_t)ev->kind, .status = (uint8_t)ev->status};
    if (ev->kind != TRACE_JOB_SUBMIT)
        return;
    r->jobs = xgrow(r->jobs, &r->cap_jobs, r->njobs + 1, sizeof *r->jobs);
    struct replay_job *j = &r->jobs[r->njobs++];
    j->job = (uint32_t)(ev->task >> 32);
    j->tasks = ev->count > 0 && ev->count <= UINT32_MAX ? (uint32_t)ev->count : 0;
    snprintf(j->name, sizeof j->name, "%s", name ? name : "");
}

static void keep_event(struct replay *r, struct trace_reader *rd, const struct trace_event *ev,
                       uint64_t order)
{
    if (ev->kind == TRACE_TASK_START || ev->kind == TRACE_TASK_RETRY ||
        (ev->kind == TRACE_TASK_END && ev->status >= 0 && ev->status <= UINT8_MAX))
        keep_task(r, ev, order, NULL);
    if (ev->kind == TRACE_NODE_SAMPLE) {
        r->samples = xgrow(r->samples, &r->cap_samples, r->nsamples + 1, sizeof *r->samples);
        r->samples[r->nsamples++] = (struct replay_sample){
            .time_ns = ev->time_ns, .order = order, .node = ev->node, .s = ev->sample};
        return;
    }
    if (!wire_is_note(ev))
        return;
    r->notes = xgrow(r->notes, &r->cap_notes, r->nnotes + 1, sizeof *r->notes);
    struct replay_note *rn = &r->notes[r->nnotes++];
    rn->order = order;
    wire_note_from_event(&rn->n, ev);
    if (ev->kind == TRACE_JOB_SUBMIT) {
        /* The file's text is the digest; the workload name is names[0], which is what a
         * live console's note carries and what people recognise. */
        const char *const *names;
        size_t n;
        if (trace_reader_names(rd, &names, &n) == 0 && n > 0 && names[0] && names[0][0])
            snprintf(rn->n.text, sizeof rn->n.text, "%s", names[0]);
        keep_task(r, ev, order, rn->n.text);
    }
}

int replay_open(struct replay **out, const char *path, char **warning, char **cause)
{
    *out = NULL;
    if (warning)
        *warning = NULL;
    if (cause)
        *cause = NULL;
    struct trace_reader *rd;
    char *why = NULL;
    int rc = trace_reader_open(&rd, path, &why);
    if (rc < 0) {
        if (cause)
            *cause = why ? why : xasprintf("cannot open trace '%s': %s", path, strerror(-rc));
        else
            free(why);
        return rc;
    }
    struct replay *r = xcalloc(1, sizeof *r);
    const struct trace_reader_info *info = trace_reader_info(rd);
    if (info->header_json)
        r->header = xstrdup(info->header_json);
    bool any = false;
    struct trace_event ev;
    uint64_t order = 0;
    char *bad = NULL;
    while ((rc = trace_reader_next(rd, &ev, &bad)) == 0) {
        if ((unsigned)ev.kind >= TRACE_KIND_COUNT)
            continue; /* from a newer writer */
        if (!any || ev.time_ns < r->first_ns)
            r->first_ns = ev.time_ns;
        if (!any || ev.time_ns > r->last_ns)
            r->last_ns = ev.time_ns;
        any = true;
        keep_event(r, rd, &ev, order++);
    }
    if (warning) {
        if (rc < 0)
            *warning = xasprintf("%s; replaying the %" PRIu64 " events before it",
                                 bad ? bad : "a record cannot be read", order);
        else if (info->tail == TRACE_TAIL_CUT)
            *warning = xasprintf("trace '%s' is cut after byte %" PRIu64
                                 "; replaying its %" PRIu64 " whole blocks", path,
                                 info->valid_end, info->blocks);
        else if (info->tail == TRACE_TAIL_BAD)
            *warning = xasprintf("trace '%s' is corrupt after byte %" PRIu64
                                 "; replaying its %" PRIu64 " whole blocks", path,
                                 info->valid_end, info->blocks);
    }
    free(bad);
    trace_reader_destroy(rd);
    sort_items(r->samples, r->nsamples, sizeof *r->samples, sample_cmp);
    sort_items(r->notes, r->nnotes, sizeof *r->notes, note_cmp);
    sort_items(r->tasks, r->ntasks, sizeof *r->tasks, task_cmp);
    r->tally = jobtally_create();
    *out = r;
    return 0;
}

void replay_destroy(struct replay *r)
{
    if (!r)
        return;
    free(r->header);
    free(r->samples);
    free(r->notes);
    free(r->tasks);
    free(r->jobs);
    jobtally_destroy(r->tally);
    free(r);
}

const char *replay_header(const struct replay *r)
{
    return r ? r->header : NULL;
}

int64_t replay_first_ns(const struct replay *r)
{
    return r ? r->first_ns : 0;
}

int64_t replay_last_ns(const struct replay *r)
{
    return r ? r->last_ns : 0;
}

/* Index of the first of n items of `size` bytes, sorted by the int64_t time at `at` in
 * each, whose time is > t: the three arrays share the search. */
static size_t items_after(const void *items, size_t n, size_t size, size_t at, int64_t t)
{
    const char *base = items;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t time;
        memcpy(&time, base + mid * size + at, sizeof time);
        if (time <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t samples_after(const struct replay *r, int64_t t)
{
    return items_after(r->samples, r->nsamples, sizeof *r->samples,
                       offsetof(struct replay_sample, time_ns), t);
}

static size_t tasks_after(const struct replay *r, int64_t t)
{
    return items_after(r->tasks, r->ntasks, sizeof *r->tasks,
                       offsetof(struct replay_task, time_ns), t);
}

static size_t notes_after(const struct replay *r, int64_t t)
{
    return items_after(r->notes, r->nnotes, sizeof *r->notes,
                       offsetof(struct replay_note, n.time_ns), t);
}

int64_t replay_next_ns(const struct replay *r, int64_t t_ns)
{
    if (!r)
        return 0;
    size_t s = samples_after(r, t_ns), n = notes_after(r, t_ns);
    bool has_s = s < r->nsamples, has_n = n < r->nnotes;
    if (has_s && has_n)
        return r->samples[s].time_ns < r->notes[n].n.time_ns ? r->samples[s].time_ns
                                                             : r->notes[n].n.time_ns;
    if (has_s)
        return r->samples[s].time_ns;
    if (has_n)
        return r->notes[n].n.time_ns;
    return r->last_ns;
}

static bool note_first(const struct replay_note *n, const struct replay_sample *s)
{
    return n->n.time_ns != s->time_ns ? n->n.time_ns < s->time_ns : n->order < s->order;
}

static void start_over(struct replay *r, struct model *m)
{
    model_reset(m);
    if (r->header)
        model_set_header(m, r->header); /* a header of another shape: nodes come with samples */
    r->fed = m;
    r->next_sample = r->next_note = r->next_task = 0;
    jobtally_reset(r->tally);
    r->fed_ns = INT64_MIN;
}

/* Feeds the tally the task events up to t.  A job submit's count and name, which task
 * items leave out, are looked up by job (jobs are few). */
static void feed_tally(struct replay *r, int64_t t_ns)
{
    size_t end = tasks_after(r, t_ns);
    for (size_t i = r->next_task; i < end; i++) {
        const struct replay_task *it = &r->tasks[i];
        if (it->kind == TRACE_JOB_SUBMIT) {
            uint32_t job = (uint32_t)(it->task >> 32);
            for (size_t k = 0; k < r->njobs; k++)
                if (r->jobs[k].job == job)
                    jobtally_submit(r->tally, job, r->jobs[k].tasks, r->jobs[k].name,
                                    it->time_ns);
            continue;
        }
        struct trace_event ev;
        trace_event_init(&ev, (enum trace_kind)it->kind, it->node);
        ev.time_ns = it->time_ns;
        ev.task = it->task;
        ev.status = it->status;
        jobtally_event(r->tally, &ev);
    }
    r->next_task = end;
}

void replay_seek(struct replay *r, struct model *m, int64_t t_ns)
{
    if (!r || !m)
        return;
    if (t_ns < r->first_ns)
        t_ns = r->first_ns;
    if (t_ns > r->last_ns)
        t_ns = r->last_ns;
    if (r->fed != m || model_view(m)->inputs != r->fed_inputs || t_ns < r->fed_ns)
        start_over(r, m);
    size_t s = r->next_sample, n = r->next_note;
    size_t s_end = samples_after(r, t_ns), n_end = notes_after(r, t_ns);
    while (s < s_end || n < n_end) {
        if (n < n_end && (s == s_end || note_first(&r->notes[n], &r->samples[s]))) {
            model_note(m, &r->notes[n++].n);
        } else {
            const struct replay_sample *rs = &r->samples[s++];
            /* A node that samples is up: the notes turn it down after its NODE_DOWN. */
            model_sample(m, rs->node, rs->time_ns, &rs->s, true);
        }
    }
    r->next_sample = s;
    r->next_note = n;
    feed_tally(r, t_ns);
    uint32_t njobs;
    const struct wire_job_tally *jobs = jobtally_export(r->tally, &njobs);
    model_jobs(m, jobs, njobs, false);
    r->fed_ns = t_ns;
    model_tick(m, t_ns);
    r->fed_inputs = model_view(m)->inputs;
}
