/*
 * simfile — see simfile.h.  The pending events sit in one array in the order the sinks
 * took them; at a flush they are sorted by (node, seq), which keeps each node's events
 * in its own order, and each node's run of them becomes one or more whole blocks.
 */
#include "trace/collector/simfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "core/base/xalloc.h"
#include "trace/collector/collect_file.h"
#include "trace/format/block.h"
#include "trace/format/event.h"

/* One simulated node's sink state. */
struct sim_node {
    struct simfile *f;          /* borrowed: the owner */
    int32_t id;
    int64_t next_seq;
};

struct simfile {
    char *path;                 /* owned */
    char *mode;                 /* owned: the run's submission mode, for its JOB_SUBMIT */
    struct collect_file *file;  /* owned */
    int64_t start_ns;
    uint32_t nodes;
    struct sim_node *node;      /* owned, `nodes` entries */
    struct trace_sink *sink;    /* owned, `nodes` entries; ctx = &node[i] */
    const struct trace_sink **sinks; /* owned, `nodes` pointers into sink */
    struct trace_event *pending; /* owned; SIMFILE_PENDING_EVENTS slots */
    size_t npending;
    struct trace_block *blk;    /* owned: the one encoder */
    uint64_t events;
    int error;                  /* the first error; later events are dropped */
    char *cause;                /* owned; with error */
};

/* collect_file_append_block puts the file's own marker in place of the block's last 16
 * bytes, so the marker the block is finished with is never written. */
static const uint8_t scratch_sync[TRACE_SYNC_SIZE];

static void set_error(struct simfile *f, int rc, char *cause)
{
    if (f->error) {
        free(cause);
        return;
    }
    f->error = rc;
    f->cause = cause;
}

/* ---- the run header ------------------------------------------------------------------ */

static char *build_header(const struct simfile_run *run)
{
    json_t *nodes = json_array();
    for (uint32_t i = 0; i < run->nodes; i++)
        json_array_append_new(nodes, json_pack("{s:i, s:s, s:i, s:i, s:f}", "id", (int)i, "host",
                                               "sim", "port", 0, "slots",
                                               (int)(run->node_slots ? run->node_slots[i]
                                                                     : run->slots),
                                               "speed", run->speeds ? run->speeds[i] : 1.0));
    json_t *args = json_array();
    for (size_t i = 0; i < run->n_node_args; i++)
        json_array_append_new(args, json_string(run->node_args[i]));
    const char *digest =
        run->workload_digest && run->workload_digest[0] ? run->workload_digest : NULL;
    json_t *workload = run->workload_name || digest
                           ? json_pack("{s:s?, s:s?}", "name", run->workload_name, "digest",
                                       digest)
                           : json_null();
    time_t start = (time_t)(run->start_ns / 1000000000);
    struct tm tm;
    char created[32], stamp[32];
    gmtime_r(&start, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    localtime_r(&start, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    char run_id[64];
    /* As the launcher names a run (its time and 16 random bits), marked as simulated. */
    snprintf(run_id, sizeof run_id, "sim-%s-%04x", stamp,
             (unsigned)(randombytes_random() & 0xffff));
    json_t *sim = json_pack("{s:f, s:f, s:f, s:I, s:s}", "latency_s", run->latency_s,
                            "bandwidth_Bps", run->bandwidth_Bps, "sample_s", run->sample_s,
                            "seed", (json_int_t)run->seed, "mode",
                            run->mode ? run->mode : "hashed");
    json_t *root = json_pack("{s:i, s:s, s:I, s:s, s:o, s:{s:o}, s:o, s:b, s:o}", "format", 1,
                             "run_id", run_id, "start_ns", (json_int_t)run->start_ns, "created",
                             created, "nodes", nodes, "config", "node_args", args, "workload",
                             workload, "simulated", 1, "simulation", sim);
    char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    return s;
}

/* ---- encoding ------------------------------------------------------------------------ */

static int cmp_node_seq(const void *a, const void *b)
{
    const struct trace_event *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Finishes the block of node's events first..last and hands it to the file. */
static int finish_block(struct simfile *f, int32_t node, int64_t first, int64_t last)
{
    size_t count = trace_block_count(f->blk);
    if (count == 0)
        return 0;
    const uint8_t *data;
    size_t len;
    int rc = trace_block_finish(f->blk, scratch_sync, &data, &len);
    if (rc == 0 && len)
        rc = collect_file_append_block(f->file, node, first, last, (uint32_t)count, data, len);
    return rc;
}

/* Encodes every pending event into blocks, node by node, and writes them. */
static int flush_pending(struct simfile *f)
{
    if (f->error || f->npending == 0)
        return f->error;
    qsort(f->pending, f->npending, sizeof *f->pending, cmp_node_seq);
    int rc = 0;
    size_t i = 0;
    while (rc == 0 && i < f->npending) {
        int32_t node = f->pending[i].node;
        int64_t first = f->pending[i].seq, last = first;
        for (; rc == 0 && i < f->npending && f->pending[i].node == node; i++) {
            const struct trace_event *ev = &f->pending[i];
            rc = trace_block_append(f->blk, ev);
            if (rc == -ENOSPC) {
                rc = finish_block(f, node, first, last);
                first = ev->seq;
                if (rc == 0)
                    rc = trace_block_append(f->blk, ev);
            }
            last = ev->seq;
        }
        if (rc == 0)
            rc = finish_block(f, node, first, last);
        if (rc < 0) {
            set_error(f, rc, xasprintf("cannot encode node %d's events for trace '%s': %s",
                                       (int)node, f->path, strerror(-rc)));
            return rc;
        }
    }
    f->npending = 0;
    char *cause = NULL;
    rc = collect_file_flush(f->file, &cause);
    if (rc < 0)
        set_error(f, rc, cause);
    return rc;
}

/* A slot for one event of node n, numbered and timed; NULL once an error stopped us. */
static struct trace_event *next_event(struct sim_node *n, enum trace_kind kind, int64_t wall)
{
    struct simfile *f = n->f;
    if (f->error)
        return NULL;
    if (f->npending == SIMFILE_PENDING_EVENTS && flush_pending(f) < 0)
        return NULL;
    struct trace_event *ev = &f->pending[f->npending++];
    trace_event_init(ev, kind, n->id);
    ev->seq = n->next_seq++;
    int64_t t = wall - f->start_ns;
    ev->time_ns = t > 0 ? t : 0;
    f->events++;
    return ev;
}

/* ---- the sinks ----------------------------------------------------------------------- */

static void sink_put(void *ctx, enum trace_kind kind, uint64_t task, int32_t peer,
                     int32_t status, int64_t count, int64_t bytes, int64_t duration_ns,
                     int64_t wall)
{
    struct trace_event *ev = next_event(ctx, kind, wall);
    if (!ev)
        return;
    ev->task = task;
    ev->peer = peer;
    ev->status = status;
    ev->count = count;
    ev->bytes = bytes;
    ev->duration_ns = duration_ns;
}

static void sink_policy(void *ctx, const char *name, int32_t reason, int64_t wall)
{
    struct trace_event *ev = next_event(ctx, TRACE_POLICY_CHANGE, wall);
    if (!ev)
        return;
    ev->status = reason;
    snprintf(ev->text, sizeof ev->text, "%s", name ? name : "");
}

static void sink_sample(void *ctx, const struct trace_sample *s, int64_t wall)
{
    struct trace_event *ev = next_event(ctx, TRACE_NODE_SAMPLE, wall);
    if (ev)
        ev->sample = *s;
}

static void sink_put_usage(void *ctx, enum trace_kind kind, uint64_t task, int32_t status,
                           int64_t count, int64_t bytes, int64_t duration_ns,
                           const struct task_usage *u, int64_t wall)
{
    struct trace_event *ev = next_event(ctx, kind, wall);
    if (!ev)
        return;
    ev->task = task;
    ev->status = status;
    ev->count = count;
    ev->bytes = bytes;
    ev->duration_ns = duration_ns;
    if (u) {
        ev->usage = *u;
        ev->usage.measured = true;
    }
}

/* A simulated node loses no event. */
static uint64_t sink_dropped(void *ctx)
{
    (void)ctx;
    return 0;
}

/* ---- lifetime ------------------------------------------------------------------------ */

static void simfile_free(struct simfile *f)
{
    trace_block_destroy(f->blk);
    free(f->pending);
    free(f->sinks);
    free(f->sink);
    free(f->node);
    free(f->cause);
    free(f->mode);
    free(f->path);
    free(f);
}

int simfile_open(struct simfile **out, const char *path, const struct simfile_run *run,
                 char **cause)
{
    if (!out || !path || !run || !cause || run->nodes == 0 || run->nodes > INT32_MAX - 1)
        return -EINVAL;
    /* A new run writes a new trace, and keeps what was there as FILE.old, as `jackdaw
     * run` does (launcher.c) and perf keeps perf.data.old. */
    if (access(path, F_OK) == 0) {
        char *kept = xasprintf("%s.old", path);
        int rc = rename(path, kept) == 0 ? 0 : -errno;
        if (rc == 0)
            fprintf(stderr, "jackdaw: %s existed; moved to %s\n", path, kept);
        else
            *cause = xasprintf("trace '%s' exists and cannot be moved to '%s': %s", path, kept,
                               strerror(-rc));
        free(kept);
        if (rc < 0)
            return rc;
    }
    char *header = build_header(run);
    if (!header) {
        *cause = xasprintf("cannot build the run header for trace '%s'", path);
        return -ENOMEM;
    }
    struct simfile *f = xcalloc(1, sizeof *f);
    f->path = xstrdup(path);
    f->mode = xstrdup(run->mode ? run->mode : "hashed");
    f->start_ns = run->start_ns;
    f->nodes = run->nodes;
    int rc = trace_block_create(&f->blk, 0);
    if (rc < 0) {
        *cause = xasprintf("cannot make a block encoder for trace '%s': %s", path, strerror(-rc));
        free(header);
        simfile_free(f);
        return rc;
    }
    /* The own records' times count from this origin by the clock (collect_file.c's
     * append_own) and are never negative: an origin past any clock reading puts them at
     * 0, the simulated client's submission. */
    rc = collect_file_open(&f->file, path, header, run->nodes, INT64_MAX, cause);
    free(header);
    if (rc < 0) {
        simfile_free(f);
        return rc;
    }
    f->node = xcalloc(run->nodes, sizeof *f->node);
    f->sink = xcalloc(run->nodes, sizeof *f->sink);
    f->sinks = xcalloc(run->nodes, sizeof *f->sinks);
    for (uint32_t i = 0; i < run->nodes; i++) {
        f->node[i] = (struct sim_node){.f = f, .id = (int32_t)i};
        f->sink[i] = (struct trace_sink){.ctx = &f->node[i], .put = sink_put,
                                         .policy = sink_policy, .sample = sink_sample,
                                         .put_usage = sink_put_usage, .dropped = sink_dropped};
        f->sinks[i] = &f->sink[i];
    }
    f->pending = xcalloc(SIMFILE_PENDING_EVENTS, sizeof *f->pending);
    *out = f;
    return 0;
}

int simfile_record_job(struct simfile *f, uint32_t job, const struct workload *wl,
                       const char *digest, char **cause)
{
    if (!f || !wl || !cause)
        return -EINVAL;
    int rc = collect_file_append_job(f->file, job, wl->count, wl->name, digest, f->mode);
    if (rc == 0 && wl->count) {
        const char **ids = xcalloc(wl->count, sizeof *ids);
        for (uint32_t i = 0; i < wl->count; i++)
            ids[i] = wl->tasks[i].id;
        rc = collect_file_append_names(f->file, job, 0, wl->count, ids);
        free(ids);
    }
    if (rc < 0)
        *cause = xasprintf("cannot record job %u in trace '%s': %s", job, f->path,
                           strerror(-rc));
    return rc;
}

const struct trace_sink *const *simfile_sinks(const struct simfile *f)
{
    return f->sinks;
}

uint64_t simfile_events(const struct simfile *f)
{
    return f->events;
}

int simfile_close(struct simfile *f, char **cause)
{
    if (!f)
        return 0;
    flush_pending(f);
    char *close_cause = NULL;
    int rc = collect_file_close(f->file, &close_cause);
    if (rc < 0)
        set_error(f, rc, close_cause);
    else
        free(close_cause);
    rc = f->error;
    if (rc < 0 && cause) {
        *cause = f->cause;
        f->cause = NULL;
    }
    simfile_free(f);
    return rc;
}
