/*
 * jobfold — see jobfold.h.  Items queue on the loop in arrival order; a job takes the
 * whole queue as its batch.  The tally's export arrays are written by jobtally_export
 * alone, which runs on the loop between jobs, so the published pointers stay valid while
 * the next job folds (it touches the jobs and the running attempts, never the export).
 */
#include "trace/collector/jobfold.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "trace/format/blockread.h"
#include "trace/format/jobtally.h"

struct item {
    struct item *next;
    uint8_t *data;                 /* owned: a block's copy; NULL for a submit */
    size_t len;
    int32_t node;
    int64_t from_seq;
    uint32_t job, tasks;           /* a submit */
    int64_t time_ns;
    char name[WIRE_MAX_JOB_NAME];
};

struct jobfold {
    uv_loop_t *loop;               /* borrowed */
    uv_work_t work;
    bool busy;                     /* a job is in flight: the tally is the worker's */
    bool stopped;
    struct item *queue, **tail;    /* waiting, oldest first */
    size_t queued_bytes;
    struct item *batch;            /* the job's, in flight */
    struct jobtally *tally;        /* owned */
    struct trace_block_reader *reader; /* owned; NULL when it cannot be made */
    /* Written by the worker, read on the loop after the job: the first block that did
     * not decode, said once. */
    char bad[240];
    bool bad_said;
    bool partial;
    bool backlog_said;
    const struct wire_job_tally *published; /* into the tally's export */
    uint32_t npublished;
};

struct jobfold *jobfold_create(uv_loop_t *loop)
{
    struct jobfold *f = xcalloc(1, sizeof *f);
    f->loop = loop;
    f->tail = &f->queue;
    f->work.data = f;
    f->tally = jobtally_create();
    if (trace_block_reader_create(&f->reader) < 0)
        log_warn("cannot set up the block decoder: consoles get no per-job figures");
    f->published = jobtally_export(f->tally, &f->npublished);
    return f;
}

static void free_items(struct item *it)
{
    while (it) {
        struct item *next = it->next;
        free(it->data);
        free(it);
        it = next;
    }
}

void jobfold_destroy(struct jobfold *f)
{
    if (!f)
        return;
    free_items(f->queue);
    free_items(f->batch);
    jobtally_destroy(f->tally);
    trace_block_reader_destroy(f->reader);
    free(f);
}

/* ---- the worker's side ---------------------------------------------------------------- */

struct fold_ctx {
    struct jobtally *tally;
    int64_t from_seq;
};

static void fold_event(void *ctx, const struct trace_event *ev)
{
    const struct fold_ctx *c = ctx;
    if (ev->seq >= c->from_seq)
        jobtally_event(c->tally, ev);
}

static void fold_batch(uv_work_t *w)
{
    struct jobfold *f = w->data;
    for (const struct item *it = f->batch; it; it = it->next) {
        if (!it->data) {
            jobtally_submit(f->tally, it->job, it->tasks, it->name, it->time_ns);
            continue;
        }
        struct fold_ctx c = {.tally = f->tally, .from_seq = it->from_seq};
        char why[160];
        if (trace_block_reader_decode(f->reader, it->data, it->len, fold_event, &c, why,
                                      sizeof why) < 0 && !f->bad[0])
            snprintf(f->bad, sizeof f->bad, "node %" PRId32 ": a trace block from seq %" PRId64
                     " does not decode (%s)", it->node, it->from_seq, why);
    }
}

/* ---- the loop's side ------------------------------------------------------------------ */

static void start(struct jobfold *f);

static void batch_done(uv_work_t *w, int status)
{
    struct jobfold *f = w->data;
    (void)status;
    f->busy = false;
    free_items(f->batch);
    f->batch = NULL;
    if (f->bad[0] && !f->bad_said) {
        f->bad_said = true;
        f->partial = true;
        log_warn("%s; consoles' job figures miss its events", f->bad);
    }
    f->published = jobtally_export(f->tally, &f->npublished);
    start(f);
}

static void start(struct jobfold *f)
{
    if (f->busy || f->stopped || !f->queue)
        return;
    f->batch = f->queue;
    f->queue = NULL;
    f->tail = &f->queue;
    f->queued_bytes = 0;
    if (uv_queue_work(f->loop, &f->work, fold_batch, batch_done) == 0) {
        f->busy = true;
        return;
    }
    free_items(f->batch);
    f->batch = NULL;
    f->partial = true;
}

static void enqueue(struct jobfold *f, struct item *it)
{
    *f->tail = it;
    f->tail = &it->next;
    start(f);
}

void jobfold_block(struct jobfold *f, int32_t node, int64_t from_seq, const uint8_t *data,
                   size_t len)
{
    if (f->stopped || !f->reader)
        return;
    if (f->queued_bytes + len > JOBFOLD_BACKLOG_MAX) {
        f->partial = true;
        if (!f->backlog_said)
            log_warn("job tallies: %u MiB of blocks wait to be decoded; dropping blocks from "
                     "consoles' job figures (the trace keeps every event)",
                     JOBFOLD_BACKLOG_MAX >> 20);
        f->backlog_said = true;
        return;
    }
    struct item *it = xcalloc(1, sizeof *it);
    it->data = xmalloc(len ? len : 1);
    memcpy(it->data, data, len);
    it->len = len;
    it->node = node;
    it->from_seq = from_seq;
    f->queued_bytes += len;
    enqueue(f, it);
}

void jobfold_submit(struct jobfold *f, uint32_t job, uint32_t tasks, const char *name,
                    int64_t time_ns)
{
    if (f->stopped)
        return;
    struct item *it = xcalloc(1, sizeof *it);
    it->job = job;
    it->tasks = tasks;
    it->time_ns = time_ns;
    snprintf(it->name, sizeof it->name, "%s", name ? name : "");
    enqueue(f, it);
}

void jobfold_mark_partial(struct jobfold *f)
{
    f->partial = true;
}

void jobfold_stop(struct jobfold *f)
{
    f->stopped = true;
    free_items(f->queue);
    f->queue = NULL;
    f->tail = &f->queue;
    f->queued_bytes = 0;
}

const struct wire_job_tally *jobfold_jobs(const struct jobfold *f, uint32_t *n, bool *partial)
{
    *n = f->npublished;
    *partial = f->partial;
    return f->published;
}
