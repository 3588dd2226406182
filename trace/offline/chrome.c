/*
 * trace chrome — see chrome.h.  Every JSON object is written whole by one function, so
 * the document is valid at each event boundary and only the closing "]}" depends on
 * finish.
 */
#include "trace/offline/chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/hash.h"
#include "core/base/search.h"
#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"

#define PID_BASE 1000
/* Thread ids inside a node's process.  Slot lane k is tid k + 1 (tid 0 is the idle
 * thread to Perfetto); the fixed threads sit far above any slot count. */
#define TID_EVENTS 1000000
#define TID_STEALS 1000001
#define TID_FETCH 2000000
#define TID_SERVE 3000000
#define MAX_LANES 999999
/* Flow ids are JSON numbers: keep them exact in a double (JavaScript viewers). */
#define FLOW_ID_MASK ((UINT64_C(1) << 53) - 1)
#define FLOW_STEAL UINT64_C(0x5354454100000000)
#define FLOW_DATA UINT64_C(0x4441544100000000)

/* Transfer lanes: the end of the last slice on each. */
struct lanes {
    int64_t *end; /* owned */
    size_t n, cap;
};

struct node_view {
    int32_t node;
    uint32_t *free;       /* owned; min-heap of free slot lanes */
    size_t nfree, cap_free;
    uint32_t slot_lanes;  /* slot lanes made (and named) so far */
    struct lanes fetch, serve;
    bool steals_named;
};

struct task_view {
    char *name;       /* owned; NULL: shown as job:index */
    int64_t start_ns; /* valid while running */
    int32_t node;     /* node it runs on; -1 when not running */
    uint32_t lane;
    uint32_t outs, ins; /* STOLEN_OUT, STOLEN_IN seen: the k-th of each pair up */
};

struct trace_chrome {
    FILE *out;          /* borrowed */
    bool any;           /* an event was written: the next needs a comma */
    bool finished;
    char *other;        /* owned; compact JSON for "otherData", NULL for none */
    struct node_view *nodes; /* owned; sorted by node */
    size_t nnodes, cap_nodes;
    struct u64map tasks; /* key -> struct task_view * (owned) */
    int64_t last_ns;
    struct trace_chrome_stats st;
};

static uint64_t flow_id(uint64_t tag, uint64_t a, uint64_t b)
{
    uint64_t id = hash_mix64(hash_mix64(a ^ tag) ^ b) & FLOW_ID_MASK;
    return id ? id : 1;
}

static int64_t pid_of(int32_t node)
{
    return (int64_t)node + PID_BASE;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    unsigned cp = c & (0xff >> (n + 1));
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* A JSON string.  Names come from workloads and policy names from nodes: bytes that are
 * not UTF-8 become U+FFFD rather than make the document unreadable. */
static void put_str(FILE *out, const char *s)
{
    putc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_len(p);
        if (n == 0) {
            fputs("\\ufffd", out);
            p++;
        } else if (n > 1) {
            fwrite(p, 1, n, out);
            p += n;
        } else {
            if (*p == '"' || *p == '\\')
                fprintf(out, "\\%c", *p);
            else if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\u%04x", *p);
            else
                putc(*p, out);
            p++;
        }
    }
    putc('"', out);
}

/* µs with ns precision, exactly (no float rounding). */
static void put_us(FILE *out, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    fprintf(out, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

static void task_label(uint64_t key, char buf[24])
{
    snprintf(buf, 24, "%" PRIu32 ":%" PRIu32, (uint32_t)(key >> 32), (uint32_t)key);
}

/* Starts one element of traceEvents: the separator and the fields every event has. */
static void open_event(struct trace_chrome *c, char ph, int32_t node, uint32_t tid,
                       int64_t ns)
{
    fputs(c->any ? ",\n{" : "\n{", c->out);
    c->any = true;
    fprintf(c->out, "\"ph\":\"%c\",\"pid\":%" PRId64 ",\"tid\":%" PRIu32 ",\"ts\":", ph,
            pid_of(node), tid);
    put_us(c->out, ns);
}

static void meta_name(struct trace_chrome *c, int32_t node, uint32_t tid, const char *what,
                      const char *name, int sort)
{
    open_event(c, 'M', node, tid, 0);
    fprintf(c->out, ",\"name\":\"%s_name\",\"args\":{\"name\":", what);
    put_str(c->out, name);
    fputs("}}", c->out);
    open_event(c, 'M', node, tid, 0);
    fprintf(c->out, ",\"name\":\"%s_sort_index\",\"args\":{\"sort_index\":%d}}", what, sort);
}

static void name_thread(struct trace_chrome *c, int32_t node, uint32_t tid, const char *what,
                        uint32_t k)
{
    char name[32];
    if (tid >= TID_FETCH || tid < TID_EVENTS) /* lanes are numbered */
        snprintf(name, sizeof name, "%s %" PRIu32, what, k);
    else
        snprintf(name, sizeof name, "%s", what);
    meta_name(c, node, tid, "thread", name, (int)tid);
}

/* The node's view, made (and its process named) on first use.  The pointer is valid
 * until the next call: a new node moves the array. */
static struct node_view *node_view(struct trace_chrome *c, int32_t node)
{
    size_t lo = SEARCH_BY(c->nodes, c->nnodes, node, node);
    if (lo < c->nnodes && c->nodes[lo].node == node)
        return &c->nodes[lo];
    c->nodes = xgrow(c->nodes, &c->cap_nodes, c->nnodes + 1, sizeof *c->nodes);
    memmove(&c->nodes[lo + 1], &c->nodes[lo], (c->nnodes - lo) * sizeof *c->nodes);
    c->nodes[lo] = (struct node_view){ .node = node };
    c->nnodes++;
    char name[32] = "client";
    if (node != -1)
        snprintf(name, sizeof name, "node %" PRId32, node);
    meta_name(c, node, TID_EVENTS, "process", name, node);
    name_thread(c, node, TID_EVENTS, "events", 0);
    return &c->nodes[lo];
}

static uint32_t take_lane(struct trace_chrome *c, int32_t node)
{
    struct node_view *n = node_view(c, node);
    if (n->nfree) {
        uint32_t lane = n->free[0];
        n->free[0] = n->free[--n->nfree];
        for (size_t i = 0;;) { /* sift down */
            size_t l = 2 * i + 1, r = l + 1, min = i;
            if (l < n->nfree && n->free[l] < n->free[min])
                min = l;
            if (r < n->nfree && n->free[r] < n->free[min])
                min = r;
            if (min == i)
                break;
            uint32_t t = n->free[i];
            n->free[i] = n->free[min];
            n->free[min] = t;
            i = min;
        }
        return lane;
    }
    if (n->slot_lanes >= MAX_LANES)
        return MAX_LANES - 1; /* a million concurrent tasks on one node: share a lane */
    uint32_t lane = n->slot_lanes++;
    name_thread(c, node, lane + 1, "slot", lane);
    return lane;
}

static void release_lane(struct trace_chrome *c, int32_t node, uint32_t lane)
{
    struct node_view *n = node_view(c, node);
    n->free = xgrow(n->free, &n->cap_free, n->nfree + 1, sizeof *n->free);
    size_t i = n->nfree++;
    n->free[i] = lane;
    while (i > 0 && n->free[(i - 1) / 2] > n->free[i]) { /* sift up */
        uint32_t t = n->free[i];
        n->free[i] = n->free[(i - 1) / 2];
        n->free[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

/* The lowest transfer lane whose last slice ended by `start`.  Whatever order slices
 * arrive in, each one placed on a lane ends before the next one there begins. */
static uint32_t transfer_lane(struct trace_chrome *c, int32_t node, bool fetch, int64_t start,
                              int64_t end)
{
    struct node_view *n = node_view(c, node);
    struct lanes *l = fetch ? &n->fetch : &n->serve;
    size_t k = 0;
    while (k < l->n && l->end[k] > start)
        k++;
    if (k == l->n) {
        if (k >= MAX_LANES) {
            k = MAX_LANES - 1;
        } else {
            l->end = xgrow(l->end, &l->cap, l->n + 1, sizeof *l->end);
            l->n++;
            name_thread(c, node, (uint32_t)((fetch ? TID_FETCH : TID_SERVE) + k),
                        fetch ? "fetch" : "serve", (uint32_t)k);
        }
    }
    l->end[k] = end;
    return (uint32_t)((fetch ? TID_FETCH : TID_SERVE) + k);
}

static struct task_view *task_view(struct trace_chrome *c, uint64_t key)
{
    struct task_view *t = u64map_get(&c->tasks, key);
    if (!t) {
        t = xcalloc(1, sizeof *t);
        t->node = -1;
        u64map_put(&c->tasks, key, t);
    }
    return t;
}

static void task_drop(struct trace_chrome *c, uint64_t key)
{
    struct task_view *t = u64map_del(&c->tasks, key);
    if (t) {
        free(t->name);
        free(t);
    }
}

/* The slice of a run that ended at end_ns with `status`; exit is written when >= 0. */
static void task_slice(struct trace_chrome *c, uint64_t key, const struct task_view *t,
                       int64_t end_ns, const char *status, int64_t exit_code)
{
    char label[24];
    task_label(key, label);
    int64_t dur = end_ns > t->start_ns ? end_ns - t->start_ns : 0;
    open_event(c, 'X', t->node, t->lane + 1, t->start_ns);
    fputs(",\"dur\":", c->out);
    put_us(c->out, dur);
    fputs(",\"cat\":\"task\",\"name\":", c->out);
    put_str(c->out, t->name ? t->name : label);
    fprintf(c->out, ",\"args\":{\"task\":\"%s\",\"status\":", label);
    put_str(c->out, status);
    if (exit_code >= 0)
        fprintf(c->out, ",\"exit\":%" PRId64, exit_code);
    fputs("}}", c->out);
    c->st.task_slices++;
}

static void on_start(struct trace_chrome *c, const struct trace_event *ev)
{
    struct task_view *t = task_view(c, ev->task);
    if (t->node >= 0) {
        /* Started again without an END: the first run was lost with its node. */
        task_slice(c, ev->task, t, ev->time_ns, "restarted", -1);
        release_lane(c, t->node, t->lane);
    }
    t->lane = take_lane(c, ev->node);
    t->node = ev->node;
    t->start_ns = ev->time_ns;
}

static void on_end(struct trace_chrome *c, const struct trace_event *ev)
{
    struct task_view *t = u64map_get(&c->tasks, ev->task);
    if (t && t->node >= 0) {
        const char *status = ev->status >= 0 && ev->status < TASK_STATUS_COUNT
                                 ? task_status_name((enum task_status)ev->status)
                                 : "unknown";
        task_slice(c, ev->task, t, ev->time_ns, status, ev->count);
        release_lane(c, t->node, t->lane);
    }
    task_drop(c, ev->task);
}

/* A failed run that runs again: its slice closes as a failed one, and the task (its
 * name kept) waits for its next START. */
static void on_retry(struct trace_chrome *c, const struct trace_event *ev)
{
    struct task_view *t = u64map_get(&c->tasks, ev->task);
    if (t && t->node >= 0) {
        task_slice(c, ev->task, t, ev->time_ns, "failed, retried", ev->count);
        release_lane(c, t->node, t->lane);
        t->node = -1;
    }
}

static void on_names(struct trace_chrome *c, const struct trace_event *ev)
{
    uint32_t first = (uint32_t)ev->task;
    for (uint32_t i = 0; i < ev->nnames && ev->names; i++) {
        if (first + i < first || !ev->names[i])
            break; /* an index past 2^32 names no task */
        struct task_view *t = task_view(c, (ev->task & ~UINT64_C(0xffffffff)) | (first + i));
        free(t->name);
        t->name = xstrdup(ev->names[i]);
    }
}

static void instant(struct trace_chrome *c, int32_t node, uint32_t tid, int64_t ns,
                    const char *cat, const char *name)
{
    open_event(c, 'i', node, tid, ns);
    fprintf(c->out, ",\"s\":\"t\",\"cat\":\"%s\",\"name\":", cat);
    put_str(c->out, name);
    c->st.instants++;
}

static void flow(struct trace_chrome *c, char ph, int32_t node, uint32_t tid, int64_t ns,
                 const char *cat, uint64_t id)
{
    open_event(c, ph, node, tid, ns);
    fprintf(c->out, ",\"cat\":\"%s\",\"name\":\"%s\",\"id\":%" PRIu64 "%s}", cat, cat, id,
            ph == 'f' ? ",\"bp\":\"e\"" : "");
}

static void on_steal(struct trace_chrome *c, const struct trace_event *ev)
{
    bool out = ev->kind == TRACE_TASK_STOLEN_OUT;
    struct task_view *t = task_view(c, ev->task);
    uint32_t k = out ? t->outs++ : t->ins++;
    char label[24];
    task_label(ev->task, label);
    struct node_view *n = node_view(c, ev->node);
    if (!n->steals_named) {
        n->steals_named = true;
        name_thread(c, ev->node, TID_STEALS, "steals", 0);
    }
    instant(c, ev->node, TID_STEALS, ev->time_ns, "steal", out ? "stolen out" : "stolen in");
    fprintf(c->out, ",\"args\":{\"task\":\"%s\",\"%s\":%" PRId32 "}}", label,
            out ? "to" : "from", ev->peer);
    flow(c, out ? 's' : 'f', ev->node, TID_STEALS, ev->time_ns, "steal",
         flow_id(FLOW_STEAL, ev->task, k));
    if (out)
        c->st.steal_starts++;
    else
        c->st.steal_ends++;
}

static void transfer_slice(struct trace_chrome *c, const struct trace_event *ev, bool fetch,
                           int64_t start, uint32_t tid, const char *label)
{
    int32_t node = fetch ? ev->node : ev->peer;
    open_event(c, 'X', node, tid, start);
    fputs(",\"dur\":", c->out);
    put_us(c->out, ev->time_ns - start);
    fprintf(c->out, ",\"cat\":\"data\",\"name\":\"%s\",\"args\":{\"object\":\"%s\",\"bytes\":%"
            PRId64 ",\"%s\":%" PRId32 "}}", fetch ? "fetch" : "serve", label, ev->bytes,
            fetch ? "from" : "to", fetch ? ev->peer : ev->node);
}

static void on_fetch(struct trace_chrome *c, const struct trace_event *ev)
{
    int64_t dur = ev->duration_ns < 0 ? 0 : ev->duration_ns > ev->time_ns ? ev->time_ns
                                                                           : ev->duration_ns;
    int64_t start = ev->time_ns - dur;
    char label[24] = "-";
    if (ev->task != TRACE_NO_TASK)
        task_label(ev->task, label);
    /* Unique per event, so the pair needs no state: (node, seq) names it. */
    uint64_t id = flow_id(FLOW_DATA, (uint64_t)(uint32_t)ev->node, (uint64_t)ev->seq);
    bool source = ev->peer >= 0 && ev->peer != ev->node;
    if (source) {
        uint32_t tid = transfer_lane(c, ev->peer, false, start, ev->time_ns);
        transfer_slice(c, ev, false, start, tid, label);
        flow(c, 's', ev->peer, tid, start, "data", id);
    }
    uint32_t tid = transfer_lane(c, ev->node, true, start, ev->time_ns);
    transfer_slice(c, ev, true, start, tid, label);
    if (source)
        flow(c, 'f', ev->node, tid, ev->time_ns, "data", id);
    c->st.transfers++;
}

static void on_sample(struct trace_chrome *c, const struct trace_event *ev)
{
    const struct {
        const char *name, *unit;
        int32_t value;
    } f[] = {
        {"waitq", "tasks", ev->sample.waitq},
        {"lreadyq", "tasks", ev->sample.lreadyq},
        {"sreadyq", "tasks", ev->sample.sreadyq},
        {"busy", "slots", ev->sample.busy},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        open_event(c, 'C', ev->node, TID_EVENTS, ev->time_ns);
        fprintf(c->out, ",\"name\":\"%s\",\"args\":{\"%s\":%" PRId32 "}}", f[i].name, f[i].unit,
                f[i].value);
        c->st.counters++;
    }
}

static void on_node_event(struct trace_chrome *c, const struct trace_event *ev)
{
    switch (ev->kind) {
    case TRACE_NODE_UP:
        instant(c, ev->node, TID_EVENTS, ev->time_ns, "node", "node up");
        fprintf(c->out, ",\"args\":{\"node\":%" PRId32 ",\"slots\":%" PRId64 "}}", ev->peer,
                ev->count);
        break;
    case TRACE_NODE_DOWN:
        instant(c, ev->node, TID_EVENTS, ev->time_ns, "node", "node down");
        fprintf(c->out, ",\"args\":{\"node\":%" PRId32 ",\"reason\":%" PRId32 "}}", ev->peer,
                ev->status);
        break;
    case TRACE_POLICY_CHANGE:
        instant(c, ev->node, TID_EVENTS, ev->time_ns, "node", "policy change");
        fputs(",\"args\":{\"policy\":", c->out);
        put_str(c->out, ev->text);
        fputs("}}", c->out);
        break;
    case TRACE_DROPPED:
        instant(c, ev->node, TID_EVENTS, ev->time_ns, "node", "dropped");
        fprintf(c->out, ",\"args\":{\"events\":%" PRId64 "}}", ev->count);
        break;
    case TRACE_JOB_SUBMIT: {
        char name[48];
        snprintf(name, sizeof name, "job %" PRIu32 " submitted", (uint32_t)(ev->task >> 32));
        instant(c, ev->node, TID_EVENTS, ev->time_ns, "job", name);
        fprintf(c->out, ",\"args\":{\"tasks\":%" PRId64 ",\"digest\":", ev->count);
        /* names[1] is the full digest; text holds it cut to fit. */
        put_str(c->out, ev->nnames > 1 && ev->names && ev->names[1] ? ev->names[1] : ev->text);
        fputs(",\"workload\":", c->out);
        put_str(c->out, ev->nnames && ev->names && ev->names[0] ? ev->names[0] : "");
        fputs("}}", c->out);
        break;
    }
    default:
        break;
    }
}

void trace_chrome_create(struct trace_chrome **out, FILE *f, const char *header_json)
{
    struct trace_chrome *c = xcalloc(1, sizeof *c);
    c->out = f;
    u64map_init(&c->tasks);
    if (header_json) {
        /* Re-dumped compact, and only when it parses: the header is outside bytes and
         * must not break the document. */
        json_t *h = json_loads(header_json, 0, NULL);
        if (h) {
            c->other = json_dumps(h, JSON_COMPACT);
            json_decref(h);
        }
    }
    fputs("{\"traceEvents\":[", f);
    *out = c;
}

void trace_chrome_destroy(struct trace_chrome *c)
{
    if (!c)
        return;
    uint64_t key;
    void *value;
    for (size_t pos = 0; (pos = u64map_next(&c->tasks, pos, &key, &value)) != 0;) {
        struct task_view *t = value;
        free(t->name);
        free(t);
    }
    u64map_fini(&c->tasks);
    for (size_t i = 0; i < c->nnodes; i++) {
        free(c->nodes[i].free);
        free(c->nodes[i].fetch.end);
        free(c->nodes[i].serve.end);
    }
    free(c->nodes);
    free(c->other);
    free(c);
}

int trace_chrome_add(struct trace_chrome *c, const struct trace_event *ev)
{
    if (!c || !ev || c->finished)
        return -EINVAL;
    c->st.events++;
    if (ev->time_ns > c->last_ns)
        c->last_ns = ev->time_ns;
    if ((unsigned)ev->kind >= TRACE_KIND_COUNT)
        return 0;
    /* Every node that recorded something gets its process, even with nothing drawn. */
    node_view(c, ev->node);
    bool task = ev->task != TRACE_NO_TASK;
    switch (ev->kind) {
    case TRACE_TASK_START:
        if (task)
            on_start(c, ev);
        break;
    case TRACE_TASK_END:
        if (task)
            on_end(c, ev);
        break;
    case TRACE_TASK_RETRY:
        if (task)
            on_retry(c, ev);
        break;
    case TRACE_TASK_STOLEN_OUT:
    case TRACE_TASK_STOLEN_IN:
        if (task)
            on_steal(c, ev);
        break;
    case TRACE_TASK_NAMES:
        if (task)
            on_names(c, ev);
        break;
    case TRACE_DATA_FETCH:
        on_fetch(c, ev);
        break;
    case TRACE_NODE_SAMPLE:
        on_sample(c, ev);
        break;
    default:
        on_node_event(c, ev);
        break;
    }
    return ferror(c->out) ? -EIO : 0;
}

int trace_chrome_finish(struct trace_chrome *c, struct trace_chrome_stats *st)
{
    if (!c || c->finished)
        return -EINVAL;
    c->finished = true;
    uint64_t key;
    void *value;
    for (size_t pos = 0; (pos = u64map_next(&c->tasks, pos, &key, &value)) != 0;) {
        struct task_view *t = value;
        if (t->node >= 0) {
            task_slice(c, key, t, c->last_ns, "unfinished", -1);
            c->st.unfinished++;
        }
    }
    fputs("\n]", c->out);
    if (c->other)
        fprintf(c->out, ",\"otherData\":{\"jackdaw_header\":%s}", c->other);
    fputs(",\"displayTimeUnit\":\"ms\"}\n", c->out);
    if (st)
        *st = c->st;
    return fflush(c->out) || ferror(c->out) ? -EIO : 0;
}
