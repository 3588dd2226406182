/*
 * trace wire — see wire.h.  Strings that a receiver keeps pointing into the payload
 * (names) travel with their NUL, which the decoder checks.
 */
#include "trace/format/wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/submit_mode.h"
#include "core/model/task.h"
#include "core/model/workload.h"

#define NAME_MAX_LEN 4096
_Static_assert(WORKLOAD_MAX_ID <= NAME_MAX_LEN, "a workload id travels whole, never cut");

static void put_text(struct wbuf *b, const char *s)
{
    wbuf_put_strn(b, s, strnlen(s, TRACE_TEXT_MAX - 1));
}

static void get_text(struct rbuf *r, char out[TRACE_TEXT_MAX])
{
    uint32_t n;
    const char *s = rbuf_str(r, &n, TRACE_TEXT_MAX - 1);
    if (s)
        memcpy(out, s, n);
    out[s ? n : 0] = '\0';
}

/* A NUL-terminated string inside the payload; NULL (and r marked bad) otherwise. */
static const char *get_cstr(struct rbuf *r, uint32_t max)
{
    uint32_t n;
    const char *s = rbuf_str(r, &n, max + 1);
    if (!s || n == 0 || s[n - 1] != '\0' || memchr(s, '\0', n - 1)) {
        r->bad = true;
        r->left = 0;
        return NULL;
    }
    return s;
}

static void put_cstr(struct wbuf *b, const char *s)
{
    s = s ? s : "";
    size_t n = strnlen(s, NAME_MAX_LEN);
    wbuf_put_u32(b, (uint32_t)n + 1);
    wbuf_put(b, s, n);
    wbuf_put_u8(b, 0);
}

void wire_put_hello(struct wbuf *b, const struct wire_hello *h)
{
    put_cstr(b, h->run_id);
    wbuf_put(b, h->sync, TRACE_SYNC_SIZE);
}

int wire_get_hello(struct rbuf *r, struct wire_hello *h)
{
    const char *id = get_cstr(r, WIRE_MAX_RUN_ID - 1);
    const uint8_t *sync = rbuf_bytes(r, TRACE_SYNC_SIZE);
    if (!id || !sync || !rbuf_ok(r))
        return -EBADMSG;
    snprintf(h->run_id, sizeof h->run_id, "%s", id);
    memcpy(h->sync, sync, TRACE_SYNC_SIZE);
    return 0;
}

void wire_put_next_seq(struct wbuf *b, int64_t next_seq)
{
    wbuf_put_i64(b, next_seq);
}

int wire_get_next_seq(struct rbuf *r, int64_t *next_seq)
{
    *next_seq = rbuf_i64(r);
    return rbuf_ok(r) && *next_seq >= 0 ? 0 : -EBADMSG;
}

void wire_put_block(struct wbuf *b, const struct wire_block *blk)
{
    wbuf_put_i64(b, blk->first_seq);
    wbuf_put_i64(b, blk->last_seq);
    wbuf_put_u32(b, blk->count);
    wbuf_put_u32(b, blk->len);
    wbuf_put(b, blk->data, blk->len);
}

int wire_get_block(struct rbuf *r, struct wire_block *blk)
{
    blk->first_seq = rbuf_i64(r);
    blk->last_seq = rbuf_i64(r);
    blk->count = rbuf_u32(r);
    blk->len = rbuf_u32(r);
    blk->data = rbuf_bytes(r, blk->len);
    if (!rbuf_ok(r) || !blk->data || blk->count == 0 || blk->first_seq < 0 ||
        blk->last_seq < blk->first_seq ||
        (uint64_t)(blk->last_seq - blk->first_seq) + 1 != blk->count ||
        blk->len < TRACE_SYNC_SIZE + 2)
        return -EBADMSG;
    return 0;
}

static void put_sample(struct wbuf *b, const struct trace_sample *s)
{
    const int32_t ints[] = {s->busy, s->slots, s->waitq, s->lreadyq, s->sreadyq, s->completeq};
    const int64_t longs[] = {s->started, s->ended, s->failed, s->stolen_in, s->stolen_out,
                             s->pushed, s->steal_requests, s->steal_fails, s->fetches,
                             s->fetch_bytes, s->cache_hits, s->busy_ns, s->dropped, s->bytes_out,
                             s->cancelled, s->info_sent, s->info_received, s->token_passes};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        wbuf_put_u32(b, (uint32_t)ints[i]);
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++)
        wbuf_put_i64(b, longs[i]);
}

static void get_sample(struct rbuf *r, struct trace_sample *s)
{
    int32_t *ints[] = {&s->busy, &s->slots, &s->waitq, &s->lreadyq, &s->sreadyq, &s->completeq};
    int64_t *longs[] = {&s->started, &s->ended, &s->failed, &s->stolen_in, &s->stolen_out,
                        &s->pushed, &s->steal_requests, &s->steal_fails, &s->fetches,
                        &s->fetch_bytes, &s->cache_hits, &s->busy_ns, &s->dropped,
                        &s->bytes_out, &s->cancelled, &s->info_sent, &s->info_received,
                        &s->token_passes};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        *ints[i] = (int32_t)rbuf_u32(r);
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++)
        *longs[i] = rbuf_i64(r);
}

bool wire_is_note(const struct trace_event *ev)
{
    switch (ev->kind) {
    case TRACE_TASK_END:
        return ev->status != TASK_DONE;
    case TRACE_STEAL_GRANT:
    case TRACE_NODE_UP:
    case TRACE_NODE_DOWN:
    case TRACE_POLICY_CHANGE:
    case TRACE_DROPPED:
    case TRACE_JOB_SUBMIT:
    case TRACE_TASK_RESUBMIT:
    case TRACE_OBJECT_RECOMPUTE:
    case TRACE_TASK_RETRY:
        return true;
    default:
        return false;
    }
}

void wire_note_from_event(struct wire_note *n, const struct trace_event *ev)
{
    memset(n, 0, sizeof *n);
    n->node = ev->node;
    n->kind = (uint8_t)ev->kind;
    n->time_ns = ev->time_ns;
    n->task = ev->task;
    n->peer = ev->peer;
    n->status = ev->status;
    n->count = ev->count;
    snprintf(n->text, sizeof n->text, "%s", ev->text);
}

static void put_note(struct wbuf *b, const struct wire_note *n)
{
    wbuf_put_u32(b, (uint32_t)n->node);
    wbuf_put_u8(b, n->kind);
    wbuf_put_i64(b, n->time_ns);
    wbuf_put_u64(b, n->task);
    wbuf_put_u32(b, (uint32_t)n->peer);
    wbuf_put_u32(b, (uint32_t)n->status);
    wbuf_put_i64(b, n->count);
    put_text(b, n->text);
}

static void get_note(struct rbuf *r, struct wire_note *n)
{
    n->node = (int32_t)rbuf_u32(r);
    n->kind = rbuf_u8(r);
    n->time_ns = rbuf_i64(r);
    n->task = rbuf_u64(r);
    n->peer = (int32_t)rbuf_u32(r);
    n->status = (int32_t)rbuf_u32(r);
    n->count = rbuf_i64(r);
    get_text(r, n->text);
}

static void put_notes(struct wbuf *b, const struct wire_note *notes, uint32_t n)
{
    wbuf_put_u32(b, n);
    for (uint32_t i = 0; i < n; i++)
        put_note(b, &notes[i]);
}

static int get_notes(struct rbuf *r, struct wire_note **out, uint32_t *n)
{
    *out = NULL;
    *n = rbuf_u32(r);
    if (!rbuf_ok(r) || *n > WIRE_MAX_NOTES)
        return -EBADMSG;
    if (*n == 0)
        return 0;
    *out = xcalloc(*n, sizeof **out);
    for (uint32_t i = 0; i < *n && rbuf_ok(r); i++)
        get_note(r, &(*out)[i]);
    if (!rbuf_ok(r)) {
        free(*out);
        *out = NULL;
        return -EBADMSG;
    }
    return 0;
}

void wire_put_live(struct wbuf *b, const struct wire_live *l)
{
    wbuf_put_i64(b, l->time_ns);
    put_sample(b, &l->sample);
    put_notes(b, l->notes, l->nnotes);
}

int wire_get_live(struct rbuf *r, struct wire_live *l)
{
    memset(l, 0, sizeof *l);
    l->time_ns = rbuf_i64(r);
    get_sample(r, &l->sample);
    if (!rbuf_ok(r))
        return -EBADMSG;
    return get_notes(r, &l->notes, &l->nnotes);
}

void wire_put_job(struct wbuf *b, const struct wire_job *j)
{
    wbuf_put_u32(b, j->job);
    wbuf_put_u32(b, j->tasks);
    put_cstr(b, j->name);
    put_cstr(b, j->digest);
    if (j->mode && j->mode[0])
        put_cstr(b, j->mode);
}

static int bad_job(struct wire_job *j, const char *field)
{
    free(j->name);
    free(j->digest);
    free(j->mode);
    memset(j, 0, sizeof *j);
    j->bad = field;
    return -EBADMSG;
}

int wire_get_job(struct rbuf *r, struct wire_job *j)
{
    memset(j, 0, sizeof *j);
    j->job = rbuf_u32(r);
    j->tasks = rbuf_u32(r);
    if (!rbuf_ok(r))
        return bad_job(j, "job or task count (cut short)");
    const char *name = get_cstr(r, NAME_MAX_LEN);
    if (!name)
        return bad_job(j, "workload name (cut short, unterminated or too long)");
    const char *digest = get_cstr(r, 256);
    if (!digest)
        return bad_job(j, "digest (cut short, unterminated or too long)");
    j->name = xstrdup(name);
    j->digest = xstrdup(digest);
    if (r->left == 0) {
        j->mode = xstrdup("");
        return 0;
    }
    const char *mode = get_cstr(r, SUBMIT_MODE_NAME_MAX);
    if (!mode)
        return bad_job(j, "mode (cut short, unterminated or longer than any mode)");
    if (!submit_mode_is_name(mode))
        return bad_job(j, "mode (not hashed, one, roundrobin or data)");
    if (r->left != 0)
        return bad_job(j, "bytes after the mode");
    j->mode = xstrdup(mode);
    return 0;
}

void wire_job_fini(struct wire_job *j)
{
    free(j->name);
    free(j->digest);
    free(j->mode);
    memset(j, 0, sizeof *j);
}

void wire_put_names(struct wbuf *b, const struct wire_names *n)
{
    wbuf_put_u32(b, n->job);
    wbuf_put_u32(b, n->first);
    wbuf_put_u32(b, n->count);
    for (uint32_t i = 0; i < n->count; i++)
        put_cstr(b, n->ids[i]);
}

int wire_get_names(struct rbuf *r, struct wire_names *n)
{
    memset(n, 0, sizeof *n);
    n->job = rbuf_u32(r);
    n->first = rbuf_u32(r);
    n->count = rbuf_u32(r);
    if (!rbuf_ok(r) || n->count > WIRE_MAX_NAMES || n->first > UINT32_MAX - n->count)
        return -EBADMSG;
    n->ids = xcalloc(n->count ? n->count : 1, sizeof *n->ids);
    for (uint32_t i = 0; i < n->count; i++) {
        n->ids[i] = get_cstr(r, NAME_MAX_LEN);
        if (!n->ids[i]) {
            free(n->ids);
            n->ids = NULL;
            return -EBADMSG;
        }
    }
    return 0;
}

void wire_put_subscribe(struct wbuf *b, uint32_t period_ms)
{
    wbuf_put_u32(b, period_ms);
}

int wire_get_subscribe(struct rbuf *r, uint32_t *period_ms)
{
    *period_ms = rbuf_u32(r);
    return rbuf_ok(r) ? 0 : -EBADMSG;
}

void wire_put_state(struct wbuf *b, const struct wire_state *s)
{
    wbuf_put_i64(b, s->now_ns);
    wbuf_put_u64(b, s->events_written);
    wbuf_put_u32(b, s->nnodes);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const struct wire_node_state *n = &s->nodes[i];
        wbuf_put_u8(b, n->seen);
        wbuf_put_u8(b, n->connected);
        wbuf_put_i64(b, n->time_ns);
        put_sample(b, &n->sample);
    }
    put_notes(b, s->notes, s->nnotes);
    wbuf_put_u8(b, s->jobs_partial);
    wbuf_put_u32(b, s->njobs);
    for (uint32_t i = 0; i < s->njobs; i++) {
        const struct wire_job_tally *j = &s->jobs[i];
        wbuf_put_u32(b, j->job);
        wbuf_put_u32(b, j->tasks);
        wbuf_put_u64(b, j->done);
        wbuf_put_u64(b, j->failed);
        wbuf_put_u64(b, j->cancelled);
        wbuf_put_u32(b, j->running);
        wbuf_put_i64(b, j->submit_ns);
        wbuf_put_i64(b, j->end_ns);
        wbuf_put_i64(b, j->busy_ns);
        put_cstr(b, j->name);
        wbuf_put_u32(b, j->nnodes);
        for (uint32_t k = 0; k < j->nnodes; k++) {
            const struct wire_job_node *n = &j->nodes[k];
            wbuf_put_u32(b, (uint32_t)n->node);
            wbuf_put_u32(b, n->running);
            wbuf_put_u64(b, n->done);
            wbuf_put_i64(b, n->busy_ns);
        }
    }
}

/* Refuses a STATE, naming the field for the receiver's error. */
static int bad_state(struct wire_state *s, const char *field)
{
    wire_state_fini(s);
    s->bad = field;
    return -EBADMSG;
}

/* One job's tally; its node rows are appended to s->job_nodes (*cap its capacity) and
 * pointed at once every job is read, since the array may move until then. */
static int get_job_tally(struct rbuf *r, struct wire_state *s, struct wire_job_tally *j,
                         uint32_t *rows, size_t *cap)
{
    j->job = rbuf_u32(r);
    j->tasks = rbuf_u32(r);
    j->done = rbuf_u64(r);
    j->failed = rbuf_u64(r);
    j->cancelled = rbuf_u64(r);
    j->running = rbuf_u32(r);
    j->submit_ns = rbuf_i64(r);
    j->end_ns = rbuf_i64(r);
    j->busy_ns = rbuf_i64(r);
    if (!rbuf_ok(r))
        return bad_state(s, "job tally (cut short)");
    if (j->submit_ns < -1 || j->end_ns < -1 || j->busy_ns < 0)
        return bad_state(s, "job submit, end or busy time (negative)");
    const char *name = get_cstr(r, WIRE_MAX_JOB_NAME - 1);
    if (!name)
        return bad_state(s, "job name (unterminated or too long)");
    snprintf(j->name, sizeof j->name, "%s", name);
    j->nnodes = rbuf_u32(r);
    if (!rbuf_ok(r) || j->nnodes > WIRE_MAX_JOB_NODES - *rows)
        return bad_state(s, "job node rows (more than a STATE carries)");
    s->job_nodes = xgrow(s->job_nodes, cap, (size_t)*rows + j->nnodes + 1, sizeof *s->job_nodes);
    for (uint32_t k = 0; k < j->nnodes; k++) {
        struct wire_job_node *n = &s->job_nodes[*rows + k];
        n->node = (int32_t)rbuf_u32(r);
        n->running = rbuf_u32(r);
        n->done = rbuf_u64(r);
        n->busy_ns = rbuf_i64(r);
        if (!rbuf_ok(r))
            return bad_state(s, "job node row (cut short)");
        if (n->node < 0 || n->node >= WIRE_MAX_NODES)
            return bad_state(s, "job node id (out of range)");
        if (n->busy_ns < 0)
            return bad_state(s, "job node busy time (negative)");
    }
    *rows += j->nnodes;
    return 0;
}

static int get_job_tallies(struct rbuf *r, struct wire_state *s)
{
    s->jobs_partial = rbuf_u8(r);
    s->njobs = rbuf_u32(r);
    if (!rbuf_ok(r))
        return bad_state(s, "job count (cut short)");
    if (s->jobs_partial > 1)
        return bad_state(s, "jobs partial flag (not 0 or 1)");
    if (s->njobs > WIRE_MAX_JOBS)
        return bad_state(s, "job count (over WIRE_MAX_JOBS)");
    s->jobs = xcalloc(s->njobs ? s->njobs : 1, sizeof *s->jobs);
    uint32_t rows = 0;
    size_t cap = 0;
    for (uint32_t i = 0; i < s->njobs; i++) {
        if (get_job_tally(r, s, &s->jobs[i], &rows, &cap) < 0)
            return -EBADMSG;
        for (uint32_t k = 0; k < i; k++)
            if (s->jobs[k].job == s->jobs[i].job)
                return bad_state(s, "job id (repeated)");
    }
    rows = 0;
    for (uint32_t i = 0; i < s->njobs; i++) {
        s->jobs[i].nodes = s->jobs[i].nnodes ? &s->job_nodes[rows] : NULL;
        rows += s->jobs[i].nnodes;
    }
    return 0;
}

int wire_get_state(struct rbuf *r, struct wire_state *s)
{
    memset(s, 0, sizeof *s);
    s->now_ns = rbuf_i64(r);
    s->events_written = rbuf_u64(r);
    s->nnodes = rbuf_u32(r);
    if (!rbuf_ok(r) || s->nnodes > WIRE_MAX_NODES)
        return bad_state(s, rbuf_ok(r) ? "node count (over WIRE_MAX_NODES)" : "header (cut short)");
    s->nodes = xcalloc(s->nnodes ? s->nnodes : 1, sizeof *s->nodes);
    for (uint32_t i = 0; i < s->nnodes && rbuf_ok(r); i++) {
        struct wire_node_state *n = &s->nodes[i];
        n->seen = rbuf_u8(r);
        n->connected = rbuf_u8(r);
        n->time_ns = rbuf_i64(r);
        get_sample(r, &n->sample);
    }
    if (!rbuf_ok(r))
        return bad_state(s, "node samples (cut short)");
    if (get_notes(r, &s->notes, &s->nnotes) < 0)
        return bad_state(s, "notes (count or contents)");
    return get_job_tallies(r, s);
}

void wire_state_fini(struct wire_state *s)
{
    free(s->nodes);
    free(s->notes);
    free(s->jobs);
    free(s->job_nodes);
    memset(s, 0, sizeof *s);
}
