/*
 * model log — see model_log.h.
 */
#include "tui/model_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"

/* Width of a burst: notes of one kind and subject within it share a line. */
#define BURST_NS 1000000000LL
/* Failures a second that get a line each before the rest fold into one. */
#define FAILURE_LINES 5
#define NODE_SET_BYTES ((MODEL_MAX_NODE_ID + 2 + 7) / 8)

void model_log_init(struct model_log *l)
{
    memset(l, 0, sizeof *l);
    l->lines = xcalloc(2 * MODEL_LOG_LINES, sizeof *l->lines);
    for (int i = 0; i < MODEL_LOG_BURSTS; i++)
        l->bursts[i].node_set = xcalloc(1, NODE_SET_BYTES);
    l->fail_bucket = INT64_MIN;
}

void model_log_fini(struct model_log *l)
{
    free(l->lines);
    for (int i = 0; i < MODEL_LOG_BURSTS; i++)
        free(l->bursts[i].node_set);
    memset(l, 0, sizeof *l);
}

void model_log_reset(struct model_log *l)
{
    l->start = l->len = 0;
    l->seq0 = 0;
    for (int i = 0; i < MODEL_LOG_BURSTS; i++)
        l->bursts[i].open = false;
    l->fail_bucket = INT64_MIN;
    l->fail_lines = 0;
}

const struct model_log_line *model_log_lines(const struct model_log *l, uint32_t *n)
{
    *n = l->len;
    return l->lines + l->start;
}

/* ---- rendering --------------------------------------------------------------------- */

/* The note's text made safe for a terminal: bounded, no control bytes. */
static void clean_text(char *out, size_t cap, const char *text, size_t max)
{
    size_t len = strnlen(text, max);
    if (len >= cap)
        len = cap - 1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        out[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    out[len] = '\0';
}

static void task_name(char *out, size_t cap, uint64_t task)
{
    if (task == TRACE_NO_TASK)
        snprintf(out, cap, "a task");
    else
        snprintf(out, cap, "task %" PRIu32 ":%" PRIu32, (uint32_t)(task >> 32), (uint32_t)task);
}

static void render_one(char *out, size_t cap, const struct wire_note *n)
{
    char task[48], text[TRACE_TEXT_MAX];
    clean_text(text, sizeof text, n->text, sizeof n->text);
    switch (n->kind) {
    case TRACE_TASK_END:
        task_name(task, sizeof task, n->task);
        if (n->status == TASK_FAILED && n->count >= 0)
            snprintf(out, cap, "node %" PRId32 ": %s failed (exit %" PRId64 ")", n->node, task,
                     n->count);
        else if (n->status == TASK_FAILED)
            snprintf(out, cap, "node %" PRId32 ": %s failed", n->node, task);
        else if (n->status == TASK_CANCELLED)
            snprintf(out, cap, "node %" PRId32 ": %s cancelled", n->node, task);
        else
            snprintf(out, cap, "node %" PRId32 ": %s ended with status %" PRId32, n->node, task,
                     n->status);
        break;
    case TRACE_STEAL_GRANT:
        snprintf(out, cap, "node %" PRId32 " steals %" PRId64 " tasks from node %" PRId32,
                 n->node, n->count, n->peer);
        break;
    case TRACE_NODE_UP:
        if (n->count > 0)
            snprintf(out, cap, "node %" PRId32 " up (%" PRId64 " slots)", n->node, n->count);
        else
            snprintf(out, cap, "node %" PRId32 " up", n->node);
        break;
    case TRACE_NODE_DOWN:
        if (n->peer >= 0 && n->status == TRACE_DOWN_DECLARED)
            snprintf(out, cap, "node %" PRId32 " declared node %" PRId32 " dead (epoch %" PRId64
                     ")", n->node, n->peer, n->count);
        else if (n->peer >= 0)
            snprintf(out, cap, "node %" PRId32 " lost its connection to node %" PRId32, n->node,
                     n->peer);
        else
            snprintf(out, cap, "node %" PRId32 " down", n->node);
        break;
    case TRACE_POLICY_CHANGE:
        snprintf(out, cap, "node %" PRId32 ": placement policy %s", n->node, text);
        break;
    case TRACE_DROPPED:
        snprintf(out, cap, "node %" PRId32 ": %" PRId64 " trace events dropped", n->node,
                 n->count);
        break;
    case TRACE_TASK_RESUBMIT:
        task_name(task, sizeof task, n->task);
        snprintf(out, cap, "node %" PRId64 " declared dead; 1 task resubmitted (%s to node %"
                 PRId32 ", attempt %" PRId32 ")", n->count, task, n->peer, n->status);
        break;
    case TRACE_OBJECT_RECOMPUTE:
        task_name(task, sizeof task, n->task);
        snprintf(out, cap, "node %" PRId32 ": output of %s lost with node %" PRId32
                 "; recomputed (attempt %" PRId32 ")", n->node, task, n->peer, n->status);
        break;
    case TRACE_TASK_RETRY:
        task_name(task, sizeof task, n->task);
        snprintf(out, cap, "node %" PRId32 ": %s failed (exit %" PRId64 "); runs again",
                 n->node, task, n->count);
        break;
    case TRACE_JOB_SUBMIT:
        if (text[0])
            snprintf(out, cap, "job %" PRIu32 " submitted: %" PRId64 " tasks (%s)",
                     (uint32_t)(n->task >> 32), n->count, text);
        else
            snprintf(out, cap, "job %" PRIu32 " submitted: %" PRId64 " tasks",
                     (uint32_t)(n->task >> 32), n->count);
        break;
    default:
        snprintf(out, cap, "node %" PRId32 ": event %u", n->node, (unsigned)n->kind);
        break;
    }
}

static void render_burst(char *out, size_t cap, const struct model_log_burst *b)
{
    const struct wire_note *n = &b->first;
    if (b->events == 1) {
        render_one(out, cap, n);
        return;
    }
    char text[TRACE_TEXT_MAX];
    clean_text(text, sizeof text, n->text, sizeof n->text);
    char where[40];
    if (b->nodes == 1)
        snprintf(where, sizeof where, "on node %" PRId32, n->node);
    else
        snprintf(where, sizeof where, "on %" PRIu32 " nodes", b->nodes);
    switch (n->kind) {
    case TRACE_TASK_END:
        if (n->status == TASK_FAILED)
            snprintf(out, cap, "%" PRIu64 " more tasks failed %s", b->events, where);
        else if (n->status == TASK_CANCELLED)
            snprintf(out, cap, "%" PRIu64 " tasks cancelled %s", b->events, where);
        else
            snprintf(out, cap, "%" PRIu64 " tasks ended with status %" PRId32 " %s", b->events,
                     n->status, where);
        break;
    case TRACE_NODE_UP:
        snprintf(out, cap, "%" PRIu32 " nodes up (%" PRId64 " slots)", b->nodes, b->sum);
        break;
    case TRACE_NODE_DOWN:
        if (n->peer >= 0 && n->status == TRACE_DOWN_DECLARED)
            snprintf(out, cap, "%" PRIu32 " nodes declared node %" PRId32 " dead", b->nodes,
                     n->peer);
        else if (n->peer >= 0)
            snprintf(out, cap, "%" PRIu32 " nodes lost their connection to node %" PRId32,
                     b->nodes, n->peer);
        else
            snprintf(out, cap, "%" PRIu32 " nodes down", b->nodes);
        break;
    case TRACE_POLICY_CHANGE:
        snprintf(out, cap, "placement policy %s %s", text, where);
        break;
    case TRACE_DROPPED:
        snprintf(out, cap, "%" PRId64 " trace events dropped %s", b->sum, where);
        break;
    case TRACE_TASK_RESUBMIT:
        /* Every primary of the dead node's records hands its share on: one line. */
        snprintf(out, cap, "node %" PRId64 " declared dead; %" PRIu64 " tasks resubmitted",
                 n->count, b->events);
        break;
    case TRACE_OBJECT_RECOMPUTE:
        snprintf(out, cap, "%" PRIu64 " outputs lost with node %" PRId32 " recomputed",
                 b->events, n->peer);
        break;
    case TRACE_TASK_RETRY:
        snprintf(out, cap, "%" PRIu64 " failed runs run again %s", b->events, where);
        break;
    default:
        snprintf(out, cap, "%" PRIu64 " events of kind %u %s", b->events, (unsigned)n->kind,
                 where);
        break;
    }
}

/* "  12.345 body", cut to the line. */
static void write_line(struct model_log_line *line, int64_t t, const char *body)
{
    int k = snprintf(line->text, sizeof line->text, "%8.3f ", (double)t / 1e9);
    size_t at = k < 0 ? 0 : (size_t)k < sizeof line->text ? (size_t)k : sizeof line->text - 1;
    size_t len = strnlen(body, sizeof line->text - 1 - at);
    memcpy(line->text + at, body, len);
    line->text[at + len] = '\0';
}

/* ---- lines and bursts -------------------------------------------------------------- */

/* Adds a line at its place in time (after the lines of the same time or earlier) and
 * returns its sequence number; the bursts' lines after it move down one. */
static uint64_t insert(struct model_log *l, int64_t t, uint8_t kind, int32_t node, int64_t job,
                       const char *body)
{
    if (l->len == MODEL_LOG_LINES) {
        l->start++;
        l->len--;
        l->seq0++;
    }
    /* Twice the ring, moved down when the end is reached: the lines stay one array, at
     * the cost of one copy of the log every MODEL_LOG_LINES lines. */
    if (l->start + l->len == 2 * MODEL_LOG_LINES) {
        memmove(l->lines, l->lines + l->start, l->len * sizeof *l->lines);
        l->start = 0;
    }
    struct model_log_line *base = l->lines + l->start;
    uint32_t at = l->len;
    while (at > 0 && base[at - 1].time_ns > t)
        at--;
    if (at < l->len) {
        memmove(base + at + 1, base + at, (l->len - at) * sizeof *base);
        for (int i = 0; i < MODEL_LOG_BURSTS; i++)
            if (l->bursts[i].open && l->bursts[i].line_seq >= l->seq0 + at)
                l->bursts[i].line_seq++;
    }
    l->len++;
    struct model_log_line *line = &base[at];
    line->time_ns = t;
    line->kind = kind;
    line->node = node;
    line->job = job;
    write_line(line, t, body);
    return l->seq0 + at;
}

int64_t model_log_job_of(const struct wire_note *n)
{
    switch (n->kind) {
    case TRACE_TASK_END:
    case TRACE_TASK_RESUBMIT:
    case TRACE_OBJECT_RECOMPUTE:
    case TRACE_TASK_RETRY:
    case TRACE_JOB_SUBMIT:
        return n->task == TRACE_NO_TASK ? -1 : (int64_t)(n->task >> 32);
    default:
        return -1; /* a node's or the cluster's: every job's view shows it */
    }
}

static uint64_t append(struct model_log *l, const struct wire_note *n, int32_t node,
                       const char *body)
{
    return insert(l, n->time_ns, n->kind, node, model_log_job_of(n), body);
}

void model_log_text(struct model_log *l, int64_t t, int64_t job, const char *body)
{
    insert(l, t, TRACE_KIND_COUNT, -1, job, body);
}

static int64_t text_hash(const char *s, size_t max)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (size_t i = 0; i < max && s[i]; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return (int64_t)(h >> 1);
}

static int64_t bucket_of(int64_t t)
{
    int64_t q = t / BURST_NS;
    return t % BURST_NS < 0 ? q - 1 : q;
}

static bool node_set_add(struct model_log_burst *b, int32_t node)
{
    uint32_t bit = (uint32_t)(node + 1);
    uint8_t mask = (uint8_t)(1u << (bit % 8));
    if (b->node_set[bit / 8] & mask)
        return false;
    b->node_set[bit / 8] |= mask;
    return true;
}

/* Whether t is within a burst's reach: less than BURST_NS from its latest note. */
static bool near(const struct model_log_burst *b, int64_t t)
{
    int64_t d = t > b->last_ns ? t - b->last_ns : b->last_ns - t;
    return d < BURST_NS;
}

static void burst_note(struct model_log *l, const struct wire_note *n, int64_t key)
{
    struct model_log_burst *b = NULL;
    for (int i = 0; i < MODEL_LOG_BURSTS && !b; i++) {
        struct model_log_burst *c = &l->bursts[i];
        /* Two jobs' failures are two lines: each job's view shows its own. */
        if (c->open && near(c, n->time_ns) && c->kind == n->kind && c->key == key &&
            model_log_job_of(&c->first) == model_log_job_of(n) &&
            (n->kind != TRACE_POLICY_CHANGE || strncmp(c->first.text, n->text, sizeof n->text) == 0))
            b = c;
    }
    if (!b) {
        /* A free slot, else one out of reach, else the one with the oldest line. */
        for (int i = 0; i < MODEL_LOG_BURSTS; i++) {
            struct model_log_burst *c = &l->bursts[i];
            if (!c->open) {
                b = c;
                break;
            }
            bool c_old = !near(c, n->time_ns), b_old = b && !near(b, n->time_ns);
            if (!b || (c_old != b_old ? c_old : c->line_seq < b->line_seq))
                b = c;
        }
        uint8_t *set = b->node_set;
        memset(set, 0, NODE_SET_BYTES);
        *b = (struct model_log_burst){.open = true, .last_ns = n->time_ns, .kind = n->kind,
                                      .key = key, .first = *n, .node_set = set};
    }
    if (n->time_ns > b->last_ns)
        b->last_ns = n->time_ns;
    b->events++;
    if (n->count > 0 && b->sum <= INT64_MAX - n->count)
        b->sum += n->count;
    if (node_set_add(b, n->node))
        b->nodes++;
    char body[sizeof ((struct model_log_line *)0)->text];
    render_burst(body, sizeof body, b);
    int32_t node = b->nodes == 1 ? b->first.node : -1;
    if (b->events == 1) {
        b->line_seq = append(l, n, node, body);
    } else if (b->line_seq >= l->seq0) {
        struct model_log_line *line = &l->lines[l->start + (b->line_seq - l->seq0)];
        line->node = node;
        write_line(line, b->first.time_ns, body);
    }
}

void model_log_note(struct model_log *l, const struct wire_note *n)
{
    char body[sizeof ((struct model_log_line *)0)->text];
    switch (n->kind) {
    case TRACE_TASK_END:
        if (n->status == TASK_DONE)
            return;
        if (n->status == TASK_FAILED) {
            int64_t bucket = bucket_of(n->time_ns);
            if (bucket != l->fail_bucket) {
                l->fail_bucket = bucket;
                l->fail_lines = 0;
            }
            if (l->fail_lines < FAILURE_LINES) {
                l->fail_lines++;
                render_one(body, sizeof body, n);
                append(l, n, n->node, body);
                return;
            }
        }
        burst_note(l, n, n->status);
        return;
    case TRACE_STEAL_GRANT:
        return;
    case TRACE_NODE_UP:
    case TRACE_DROPPED:
        burst_note(l, n, 0);
        return;
    case TRACE_NODE_DOWN:
        /* Declarations and lost connections about one node are separate bursts. */
        burst_note(l, n, n->peer < 0 ? -1 : n->peer * 2 + (n->status == TRACE_DOWN_DECLARED));
        return;
    case TRACE_POLICY_CHANGE:
        burst_note(l, n, text_hash(n->text, sizeof n->text));
        return;
    case TRACE_TASK_RESUBMIT:
        burst_note(l, n, n->count); /* by the dead node */
        return;
    case TRACE_OBJECT_RECOMPUTE:
        burst_note(l, n, n->peer);
        return;
    case TRACE_TASK_RETRY:
        burst_note(l, n, 0); /* one line a burst, however many runs failed */
        return;
    default:
        render_one(body, sizeof body, n);
        append(l, n, n->node, body);
        return;
    }
}
