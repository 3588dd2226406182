/*
 * trace merge — see merge.h.  Three pieces: a buffer of compact events that sorts and
 * spills, a sink that frames events into a trace file under a temporary name, and a
 * heap over the spilled runs.
 *
 * A run is not a trace file: it is the buffer's items as they are in memory, each
 * followed by its side record, through zlib at level 1.  Only this process reads it
 * back, so nothing needs the Avro encoding, which would cost an encode and a decode of
 * every event on top of the two the merge cannot avoid (about half the time of a large
 * merge, measured).  The file is unlinked as soon as it is created and kept open, so a
 * merge that fails or is killed leaves no run behind.
 */
#include "trace/offline/merge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "core/base/fs.h"
#include "core/base/xalloc.h"
#include "trace/format/reader.h"

#define DEFAULT_RUN_EVENTS (512u * 1024)
/* Side-arena bytes that also force a spill: a collector that wrote huge TASK_NAMES
 * events must not grow a run past what run_events promises. */
#define ARENA_LIMIT (64u << 20)
/* Side records are far smaller; a bigger length in a run means a damaged file. */
#define SIDE_MAX (TRACE_BLOCK_MAX_BYTES)

/* What an item's side record holds, in this order. */
enum { X_SAMPLE = 1, X_TEXT = 2, X_NAMES = 4 };

/* One event without its rare parts (sample, text, names), which go to the arena: most
 * events are task events, and 72 bytes instead of sizeof(struct trace_event) (over 300)
 * is what lets half a million of them sit in 40 MB. */
struct item {
    int64_t time_ns, seq;
    uint64_t task;
    int64_t count, bytes, duration_ns;
    uint64_t extra; /* in the buffer: offset + 1 of the side record in the arena; in a
                       run: the side record's length, which follows the item; 0: none */
    int32_t node, peer, status;
    uint32_t kind;
};

struct buffer {
    struct item *items; /* owned */
    size_t n, cap;
    uint8_t *arena;     /* owned; side records: uint32 length, flags byte, the parts */
    size_t used, cap_arena;
};

/* A trace file being written under a temporary name. */
struct sink {
    int fd;             /* -1 when closed */
    char *path;         /* owned; the temporary name, NULL once renamed or removed */
    uint8_t sync[TRACE_SYNC_SIZE];
    struct trace_block *block; /* owned */
    size_t raw;         /* the block's raw capacity */
    bool has_last;      /* last_node/last_seq describe the block's last event */
    int32_t last_node;
    int64_t last_seq;
};

/* A spilled run, being read back. */
struct run {
    gzFile gz;      /* owned; reads the unlinked run file */
    struct item it; /* the run's next item */
    uint8_t *side;  /* owned; its side record (flags byte first) */
    size_t side_cap;
};

struct merge {
    size_t run_events;
    size_t block_raw;
    const char *out_path;
    struct buffer buf;
    struct run *runs;       /* owned */
    size_t nruns, cap_runs;
    const char **names;     /* owned scratch array for one event's names */
    size_t cap_names;
    struct trace_merge_result *res;
    char **cause;
    char *header;           /* owned copy of the header chosen so far; NULL: none yet */
    bool header_is_run;     /* it is a run header, not a node's spool header */
};

__attribute__((format(printf, 2, 3))) static void set_cause(char **cause, const char *fmt, ...)
{
    if (!cause || *cause)
        return; /* the first cause is the one that explains the failure */
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(cause, fmt, ap) < 0)
        *cause = NULL;
    va_end(ap);
}

static int cmp_key(int64_t ta, int32_t na, int64_t sa, int64_t tb, int32_t nb, int64_t sb)
{
    if (ta != tb)
        return ta < tb ? -1 : 1;
    if (na != nb)
        return na < nb ? -1 : 1;
    return (sa > sb) - (sa < sb);
}

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    return cmp_key(x->time_ns, x->node, x->seq, y->time_ns, y->node, y->seq);
}

static void arena_put(struct buffer *b, const void *p, size_t n)
{
    b->arena = xgrow(b->arena, &b->cap_arena, b->used + n, 1);
    memcpy(b->arena + b->used, p, n);
    b->used += n;
}

static void buffer_add(struct buffer *b, const struct trace_event *ev, const char *const *names,
                       size_t nnames)
{
    b->items = xgrow(b->items, &b->cap, b->n + 1, sizeof *b->items);
    struct item *it = &b->items[b->n++];
    *it = (struct item){
        .time_ns = ev->time_ns, .seq = ev->seq, .task = ev->task, .count = ev->count,
        .bytes = ev->bytes, .duration_ns = ev->duration_ns, .node = ev->node,
        .peer = ev->peer, .status = ev->status, .kind = (uint32_t)ev->kind,
    };
    uint8_t flags = (ev->kind == TRACE_NODE_SAMPLE ? X_SAMPLE : 0) |
                    (ev->text[0] ? X_TEXT : 0) | (nnames ? X_NAMES : 0);
    if (!flags)
        return;
    it->extra = b->used + 1;
    size_t start = b->used;
    uint32_t len = 0; /* patched below, once the parts are in */
    arena_put(b, &len, sizeof len);
    arena_put(b, &flags, 1);
    if (flags & X_SAMPLE)
        arena_put(b, &ev->sample, sizeof ev->sample);
    if (flags & X_TEXT)
        arena_put(b, ev->text, strlen(ev->text) + 1);
    if (flags & X_NAMES) {
        uint32_t n = (uint32_t)nnames;
        arena_put(b, &n, sizeof n);
        for (size_t i = 0; i < nnames; i++)
            arena_put(b, names[i] ? names[i] : "", strlen(names[i] ? names[i] : "") + 1);
    }
    len = (uint32_t)(b->used - start - sizeof len);
    memcpy(b->arena + start, &len, sizeof len);
}

/* The side record of a buffered item (flags byte first) and its length. */
static const uint8_t *buffer_side(const struct buffer *b, const struct item *it, uint32_t *len)
{
    const uint8_t *p = b->arena + it->extra - 1;
    memcpy(len, p, sizeof *len);
    return p + sizeof *len;
}

/* The event an item stands for, with its side record (NULL for none); its names point
 * into the side record through m->names. */
static void item_event(struct merge *m, const struct item *it, const uint8_t *side,
                       struct trace_event *ev)
{
    trace_event_init(ev, (enum trace_kind)it->kind, it->node);
    ev->time_ns = it->time_ns;
    ev->seq = it->seq;
    ev->task = it->task;
    ev->count = it->count;
    ev->bytes = it->bytes;
    ev->duration_ns = it->duration_ns;
    ev->peer = it->peer;
    ev->status = it->status;
    if (!side)
        return;
    const uint8_t *p = side;
    uint8_t flags = *p++;
    if (flags & X_SAMPLE) {
        memcpy(&ev->sample, p, sizeof ev->sample);
        p += sizeof ev->sample;
    }
    if (flags & X_TEXT) {
        size_t len = strlen((const char *)p); /* < TRACE_TEXT_MAX: it came from a text */
        memcpy(ev->text, p, len < TRACE_TEXT_MAX ? len : TRACE_TEXT_MAX - 1);
        p += len + 1;
    }
    if (flags & X_NAMES) {
        uint32_t n;
        memcpy(&n, p, sizeof n);
        p += sizeof n;
        m->names = xgrow(m->names, &m->cap_names, n, sizeof *m->names);
        for (uint32_t i = 0; i < n; i++) {
            m->names[i] = (const char *)p;
            p += strlen((const char *)p) + 1;
        }
        ev->names = m->names;
        ev->nnames = n;
    }
}

static void sink_init(struct sink *s)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* Removes a sink that did not complete (its file included). */
static void sink_discard(struct sink *s)
{
    if (s->fd >= 0)
        close(s->fd);
    if (s->path) {
        unlink(s->path);
        free(s->path);
    }
    trace_block_destroy(s->block);
    sink_init(s);
}

static int sink_open(struct merge *m, struct sink *s, const char *header)
{
    sink_init(s);
    s->path = xasprintf("%s.tmp.XXXXXX", m->out_path);
    s->fd = mkostemp(s->path, O_CLOEXEC);
    if (s->fd < 0) {
        int err = errno;
        set_cause(m->cause, "cannot create '%s': %s", s->path, strerror(err));
        free(s->path);
        s->path = NULL;
        return -err;
    }
    s->raw = m->block_raw;
    uint8_t *h = NULL;
    size_t hlen = 0;
    int rc = trace_sync_new(s->sync);
    if (!rc)
        rc = trace_block_create(&s->block, s->raw);
    if (!rc)
        rc = trace_file_header(header, s->sync, &h, &hlen);
    if (!rc)
        rc = fs_write_all(s->fd, h, hlen);
    free(h);
    if (rc) {
        set_cause(m->cause, "cannot write '%s': %s", s->path, strerror(-rc));
        sink_discard(s);
    }
    return rc;
}

static int sink_flush(struct merge *m, struct sink *s)
{
    const uint8_t *data;
    size_t len;
    int rc = trace_block_finish(s->block, s->sync, &data, &len);
    if (!rc && len)
        rc = fs_write_all(s->fd, data, len);
    if (rc)
        set_cause(m->cause, "cannot write '%s': %s", s->path, strerror(-rc));
    s->has_last = false;
    return rc;
}

static int sink_put(struct merge *m, struct sink *s, const struct trace_event *ev)
{
    int rc;
    /* Within a block, a record of the same node as the one before it is delta-coded
     * and its seq must be higher.  Time order can put a node's seq 8 before its seq 7
     * (events stamped slightly out of order): a new block makes it an anchor. */
    if (s->has_last && s->last_node == ev->node && ev->seq <= s->last_seq &&
        (rc = sink_flush(m, s)))
        return rc;
    rc = trace_block_append(s->block, ev);
    if (rc == -ENOSPC) {
        if ((rc = sink_flush(m, s)))
            return rc;
        rc = trace_block_append(s->block, ev);
    }
    /* One event larger than a whole block (a TASK_NAMES of many long ids): the block
     * is empty here, so grow it and keep the larger size for the rest of the file. */
    while (rc == -EMSGSIZE && s->raw < TRACE_BLOCK_MAX_BYTES / 2) {
        size_t raw = s->raw ? s->raw : TRACE_BLOCK_DEFAULT_RAW;
        s->raw = raw * 4 < TRACE_BLOCK_MAX_BYTES / 2 ? raw * 4 : TRACE_BLOCK_MAX_BYTES / 2;
        trace_block_destroy(s->block);
        s->block = NULL;
        if ((rc = trace_block_create(&s->block, s->raw)))
            break;
        rc = trace_block_append(s->block, ev);
    }
    if (rc) {
        set_cause(m->cause, "cannot encode event %lld of node %d (%s) into '%s': %s",
                  (long long)ev->seq, (int)ev->node, trace_kind_name((int)ev->kind), s->path,
                  strerror(-rc));
        return rc;
    }
    s->has_last = true;
    s->last_node = ev->node;
    s->last_seq = ev->seq;
    return 0;
}

/* Writes the last block and closes the file, synced, so that the rename that follows
 * makes it appear whole; the sink keeps its path.  It keeps the mode mkostemp gave it,
 * 0600: a trace is its owner's only, as the collector's are. */
static int sink_close(struct merge *m, struct sink *s)
{
    int rc = sink_flush(m, s);
    if (!rc) {
        if (fsync(s->fd) < 0) {
            rc = -errno;
            set_cause(m->cause, "cannot write '%s': %s", s->path, strerror(-rc));
        }
    }
    trace_block_destroy(s->block);
    s->block = NULL;
    if (close(s->fd) < 0 && !rc) {
        rc = -errno;
        set_cause(m->cause, "cannot write '%s': %s", s->path, strerror(-rc));
    }
    s->fd = -1;
    return rc;
}

static int sink_commit(struct merge *m, struct sink *s)
{
    int rc = sink_close(m, s);
    if (!rc && rename(s->path, m->out_path) < 0) {
        rc = -errno;
        set_cause(m->cause, "cannot rename '%s' to '%s': %s", s->path, m->out_path,
                  strerror(-rc));
    }
    if (rc)
        return rc;
    free(s->path);
    s->path = NULL;
    return 0;
}

/* Writes the buffer in (time, node, seq) order to the output, one copy of each event. */
static int write_buffer(struct merge *m, struct sink *s)
{
    struct buffer *b = &m->buf;
    qsort(b->items, b->n, sizeof *b->items, cmp_item);
    for (size_t i = 0; i < b->n; i++) {
        if (i && cmp_item(&b->items[i - 1], &b->items[i]) == 0) {
            m->res->duplicates++;
            continue;
        }
        uint32_t len = 0;
        const uint8_t *side = b->items[i].extra ? buffer_side(b, &b->items[i], &len) : NULL;
        struct trace_event ev;
        item_event(m, &b->items[i], side, &ev);
        int rc = sink_put(m, s, &ev);
        if (rc)
            return rc;
        m->res->events_out++;
    }
    b->n = 0;
    b->used = 0;
    return 0;
}

/* The zlib error of gz as a negative errno, for a cause. */
static int gz_errno(gzFile gz)
{
    int zerr = Z_OK;
    gzerror(gz, &zerr);
    return zerr == Z_ERRNO && errno ? -errno : -EIO;
}

/* Sorts the buffer and writes it as a new run, then empties it. */
static int spill(struct merge *m)
{
    struct buffer *b = &m->buf;
    qsort(b->items, b->n, sizeof *b->items, cmp_item);
    char *path = xasprintf("%s.run.XXXXXX", m->out_path);
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        set_cause(m->cause, "cannot create a temporary run '%s': %s", path, strerror(err));
        free(path);
        return -err;
    }
    unlink(path);
    /* One descriptor is closed by the writing gzFile, the other reads the run back. */
    int rfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    gzFile gz = rfd < 0 ? NULL : gzdopen(fd, "wb1");
    if (!gz) {
        int err = rfd < 0 ? errno : ENOMEM;
        set_cause(m->cause, "cannot write a temporary run '%s': %s", path, strerror(err));
        free(path);
        close(fd);
        if (rfd >= 0)
            close(rfd);
        return -err;
    }
    gzbuffer(gz, 1u << 16);
    int rc = 0;
    for (size_t i = 0; i < b->n && !rc; i++) {
        if (i && cmp_item(&b->items[i - 1], &b->items[i]) == 0) {
            m->res->duplicates++;
            continue;
        }
        struct item it = b->items[i];
        uint32_t len = 0;
        const uint8_t *side = it.extra ? buffer_side(b, &it, &len) : NULL;
        it.extra = len;
        if (gzwrite(gz, &it, sizeof it) != (int)sizeof it ||
            (len && gzwrite(gz, side, len) != (int)len))
            rc = gz_errno(gz);
    }
    if (gzclose(gz) != Z_OK && !rc)
        rc = errno ? -errno : -EIO;
    if (!rc && lseek(rfd, 0, SEEK_SET) < 0)
        rc = -errno;
    if (rc) {
        set_cause(m->cause, "cannot write a temporary run '%s': %s", path, strerror(-rc));
        free(path);
        close(rfd);
        return rc;
    }
    free(path);
    m->runs = xgrow(m->runs, &m->cap_runs, m->nruns + 1, sizeof *m->runs);
    struct run *r = &m->runs[m->nruns];
    *r = (struct run){ .gz = gzdopen(rfd, "rb") };
    if (!r->gz) {
        close(rfd);
        set_cause(m->cause, "cannot read back a temporary run of '%s'", m->out_path);
        return -ENOMEM;
    }
    gzbuffer(r->gz, 1u << 16);
    m->nruns++;
    m->res->runs++;
    b->n = 0;
    b->used = 0;
    return 0;
}

/* Reads the run's next item and side record: 0, 1 at its end, or an error. */
static int run_next(struct merge *m, struct run *r)
{
    int n = gzread(r->gz, &r->it, sizeof r->it);
    if (n == 0 && gzeof(r->gz))
        return 1;
    int rc = 0;
    if (n != (int)sizeof r->it) {
        rc = n < 0 ? gz_errno(r->gz) : -EIO;
    } else if (r->it.extra) {
        if (r->it.extra > SIDE_MAX) {
            rc = -EIO;
        } else {
            r->side = xgrow(r->side, &r->side_cap, (size_t)r->it.extra, 1);
            n = gzread(r->gz, r->side, (unsigned)r->it.extra);
            if (n != (int)r->it.extra)
                rc = n < 0 ? gz_errno(r->gz) : -EIO;
        }
    }
    if (rc)
        set_cause(m->cause, "cannot read back a temporary run of '%s': %s", m->out_path,
                  strerror(-rc));
    return rc;
}

/* A node's spool file has a header of its own ({"spool": {"node": …}, …}); the merged
 * file is the run's, so the collector's header is preferred wherever it comes in the
 * inputs. */
static bool is_run_header(const char *json)
{
    json_t *h = json_loads(json, 0, NULL);
    bool run = json_is_object(h) && !json_object_get(h, "spool");
    json_decref(h);
    return run;
}

static void choose_header(struct merge *m, const char *path, const char *json)
{
    if (m->header_is_run)
        return;
    bool run = is_run_header(json);
    if (m->header && !run)
        return;
    free(m->header);
    m->header = xstrdup(json);
    m->header_is_run = run;
    m->res->header_from = path;
}

static int read_input(struct merge *m, const char *path, struct trace_merge_input *in)
{
    struct trace_reader *r;
    char *why = NULL;
    /* Verified: a damaged block re-encoded here would come out with fresh checksums. */
    int rc = trace_reader_open_verified(&r, path, &why);
    if (rc < 0) {
        if (why)
            set_cause(m->cause, "%s", why);
        else
            set_cause(m->cause, "cannot read trace '%s': %s", path, strerror(-rc));
        free(why);
        m->res->bad_input = path;
        return rc;
    }
    const struct trace_reader_info *info = trace_reader_info(r);
    in->path = path;
    in->records = info->records;
    in->blocks = info->blocks;
    /* A block failing its checksum ends what is read, as corrupt framing does. */
    in->tail = info->blocks_failed ? TRACE_TAIL_BAD : info->tail;
    in->has_header = info->header_json != NULL;
    if (info->header_json)
        choose_header(m, path, info->header_json);
    struct trace_event ev;
    bool spill_failed = false;
    while ((rc = trace_reader_next(r, &ev, &why)) == 0) {
        m->res->events_in++;
        if ((unsigned)ev.kind >= TRACE_KIND_COUNT) {
            m->res->unknown_kinds++;
            continue;
        }
        const char *const *names = NULL;
        size_t nnames = 0;
        if ((ev.kind == TRACE_JOB_SUBMIT || ev.kind == TRACE_TASK_NAMES) &&
            (rc = trace_reader_names(r, &names, &nnames)) < 0) {
            set_cause(m->cause, "cannot read trace '%s': the names of event %lld of node %d "
                      "do not decode", path, (long long)ev.seq, (int)ev.node);
            break;
        }
        buffer_add(&m->buf, &ev, names, nnames);
        if ((m->buf.n >= m->run_events || m->buf.used >= ARENA_LIMIT) && (rc = spill(m))) {
            spill_failed = true;
            break;
        }
    }
    if (rc < 0 && why)
        set_cause(m->cause, "cannot read trace '%s': %s", path, why);
    if (rc < 0 && !spill_failed)
        m->res->bad_input = path;
    free(why);
    trace_reader_destroy(r);
    return rc < 0 ? rc : 0;
}

static bool run_less(const struct run *a, const struct run *b)
{
    return cmp_item(&a->it, &b->it) < 0;
}

static void sift_down(struct run **heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, min = i;
        if (l < n && run_less(heap[l], heap[min]))
            min = l;
        if (r < n && run_less(heap[r], heap[min]))
            min = r;
        if (min == i)
            return;
        struct run *t = heap[i];
        heap[i] = heap[min];
        heap[min] = t;
        i = min;
    }
}

/* Merges the runs into the output, one copy of each event. */
static int merge_runs(struct merge *m, struct sink *out)
{
    struct run **heap = xcalloc(m->nruns, sizeof *heap);
    size_t live = 0;
    int rc = 0;
    for (size_t i = 0; i < m->nruns && !rc; i++) {
        rc = run_next(m, &m->runs[i]);
        if (rc == 0)
            heap[live++] = &m->runs[i];
        else if (rc == 1)
            rc = 0;
    }
    for (size_t i = live / 2; i-- > 0;)
        sift_down(heap, live, i);
    struct item last;
    bool has_last = false;
    while (!rc && live) {
        struct run *r = heap[0];
        if (has_last && cmp_item(&last, &r->it) == 0) {
            m->res->duplicates++;
        } else {
            struct trace_event ev;
            item_event(m, &r->it, r->it.extra ? r->side : NULL, &ev);
            if ((rc = sink_put(m, out, &ev)))
                break;
            m->res->events_out++;
            last = r->it;
            has_last = true;
        }
        rc = run_next(m, r);
        if (rc == 1) {
            rc = 0;
            heap[0] = heap[--live];
        }
        if (rc < 0)
            break;
        sift_down(heap, live, 0);
    }
    free(heap);
    return rc;
}

int trace_merge(const char *out_path, const char *const *inputs, size_t n,
                const struct trace_merge_options *opt, struct trace_merge_result *res,
                char **cause)
{
    if (cause)
        *cause = NULL;
    if (!res)
        return -EINVAL;
    memset(res, 0, sizeof *res);
    if (!out_path || !inputs || n == 0) {
        set_cause(cause, "nothing to merge");
        return -EINVAL;
    }
    res->inputs = xcalloc(n, sizeof *res->inputs);
    res->ninputs = n;
    struct merge m = {
        .run_events = opt && opt->run_events ? opt->run_events : DEFAULT_RUN_EVENTS,
        .block_raw = opt ? opt->block_raw : 0,
        .out_path = out_path,
        .res = res,
        .cause = cause,
    };
    struct sink out;
    sink_init(&out);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = read_input(&m, inputs[i], &res->inputs[i]);
    /* Everything fitted: sort once and write; otherwise the rest becomes a run too. */
    if (!rc && m.nruns && m.buf.n)
        rc = spill(&m);
    if (!rc)
        rc = sink_open(&m, &out, m.header ? m.header : "{}");
    if (!rc)
        rc = m.nruns ? merge_runs(&m, &out) : write_buffer(&m, &out);
    if (!rc)
        rc = sink_commit(&m, &out);
    if (rc)
        sink_discard(&out);
    for (size_t i = 0; i < m.nruns; i++) {
        gzclose(m.runs[i].gz);
        free(m.runs[i].side);
    }
    free(m.runs);
    free(m.buf.items);
    free(m.buf.arena);
    free(m.names);
    free(m.header);
    return rc;
}

void trace_merge_result_fini(struct trace_merge_result *res)
{
    if (!res)
        return;
    free(res->inputs);
    memset(res, 0, sizeof *res);
}
