/*
 * collect_file — see collect_file.h.  Writes are positioned (pwrite at the end of the
 * last good write) rather than O_APPEND, so a write that failed half-way is simply
 * written over by the retry instead of leaving garbage that later blocks would follow.
 */
#include "trace/collector/collect_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <avro.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/u64map.h"
#include "core/base/wbuf.h"
#include "core/base/xalloc.h"
#include "trace/format/event.h"
#include "trace/format/reader.h"

/* Names per TASK_NAMES record, in encoded bytes: a record must fit in the own block
 * (COLLECT_FILE_OWN_RAW) with room to spare, and many small records would each pay an
 * anchor. */
#define NAMES_RECORD_BYTES (64u * 1024)
/* Per name: its length varint and the array item overhead, at most. */
#define NAME_OVERHEAD 10u
/* A buffer that grew beyond this during a burst is released once written. */
#define PENDING_KEEP (16u << 20)

struct collect_file {
    char *path;                 /* owned */
    int fd;
    uint8_t sync[TRACE_SYNC_SIZE];
    char *header_json;          /* owned; "" when a resumed file has none */
    uint32_t nnodes;
    int64_t *next_seq;          /* owned; nnodes + 1 entries, index node + 1 */
    int64_t *written_seq;       /* owned; same shape */
    int64_t start_ns;
    uint64_t end;               /* file offset after the last good write */
    struct wbuf pending;        /* whole blocks with the file's marker, not yet written */
    uint64_t pending_events, pending_blocks;
    struct trace_block *own;    /* owned; NULL until the first own record */
    struct u64map jobs;         /* job -> struct job_mark (owned): its records so far */
    struct collect_file_stats st;
};

/* What the file holds of one job's own records, buffered ones included. */
struct job_mark {
    bool submitted;             /* its JOB_SUBMIT */
    uint32_t names_end;         /* its TASK_NAMES cover tasks 0..names_end-1 */
};

static int slot_of(const struct collect_file *f, int32_t node)
{
    if (node < COLLECT_FILE_OWN_NODE || (node >= 0 && (uint32_t)node >= f->nnodes))
        return -1;
    return node + 1;
}

static int pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t k = pwrite(fd, p, n, (off_t)off);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* Job 0 is not a job, and u64map keys must hash to non-zero: keys are job + 1. */
static struct job_mark *mark_of(struct collect_file *f, uint32_t job)
{
    struct job_mark *m = u64map_get(&f->jobs, (uint64_t)job + 1);
    if (!m) {
        m = xcalloc(1, sizeof *m);
        u64map_put(&f->jobs, (uint64_t)job + 1, m);
    }
    return m;
}

/* Notes an own record of the file or of this process. */
static void mark_own(struct collect_file *f, const struct trace_event *ev)
{
    uint32_t job = (uint32_t)(ev->task >> 32);
    if (ev->kind == TRACE_JOB_SUBMIT) {
        mark_of(f, job)->submitted = true;
    } else if (ev->kind == TRACE_TASK_NAMES && ev->count >= 0) {
        uint64_t end = (ev->task & UINT32_MAX) + (uint64_t)ev->count;
        struct job_mark *m = mark_of(f, job);
        if (end > m->names_end)
            m->names_end = end > UINT32_MAX ? UINT32_MAX : (uint32_t)end;
    }
}

static void file_free(struct collect_file *f)
{
    uint64_t key;
    void *value;
    for (size_t i = 0; (i = u64map_next(&f->jobs, i, &key, &value)) != 0;)
        free(value);
    u64map_fini(&f->jobs);
    if (f->fd >= 0)
        close(f->fd);
    trace_block_destroy(f->own);
    wbuf_fini(&f->pending);
    free(f->next_seq);
    free(f->written_seq);
    free(f->header_json);
    free(f->path);
    free(f);
}

/* Writes a fresh header at offset 0 of an empty file. */
static int write_header(struct collect_file *f, const char *header_json, char **cause)
{
    int rc = trace_sync_new(f->sync);
    uint8_t *hdr = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = trace_file_header(header_json, f->sync, &hdr, &len);
    if (rc == 0)
        rc = pwrite_all(f->fd, hdr, len, 0);
    free(hdr);
    if (rc < 0) {
        *cause = xasprintf("cannot write the header of trace '%s': %s", f->path, strerror(-rc));
        return rc;
    }
    f->end = len;
    f->header_json = xstrdup(header_json);
    return 0;
}

static int lock_file(struct collect_file *f, char **cause)
{
    if (flock(f->fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    int err = errno;
    if (err == EWOULDBLOCK) {
        *cause = xasprintf("trace '%s' is in use by another collector", f->path);
        return -EBUSY;
    }
    *cause = xasprintf("cannot lock trace '%s': %s", f->path, strerror(err));
    return -err;
}

static int create_file(struct collect_file *f, const char *header_json, char **cause)
{
    f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (f->fd < 0) {
        int err = errno;
        *cause = xasprintf("cannot create trace '%s': %s", f->path, strerror(err));
        return -err;
    }
    int rc = lock_file(f, cause);
    if (rc == 0)
        rc = write_header(f, header_json, cause);
    if (rc < 0)
        unlink(f->path); /* ours, and holds nothing yet */
    return rc;
}

/* Whether a jackdaw trace's records are jackdaw.Event (the reader checks the same). */
static bool is_event_schema(const struct trace_file_info *fi)
{
    avro_schema_t s;
    if (avro_schema_from_json_length((const char *)fi->schema, fi->schema_len, &s))
        return false;
    const char *name = is_avro_record(s) ? avro_schema_name(s) : NULL;
    const char *ns = name ? avro_schema_namespace(s) : NULL;
    bool ok = name && ns && !strcmp(name, "Event") && !strcmp(ns, "jackdaw");
    avro_schema_decref(s);
    return ok;
}

/* Whether every byte is zero: what a crash can leave when the file size reached the
 * disk before the data did. */
static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* What the scan of an existing file found. */
struct found {
    uint64_t header_end, valid_end, blocks, records;
};

/*
 * Checks the mapped file before anything is written: a jackdaw container header, then
 * blocks whose framing holds up to a crash cut (or a zeroed tail).  Takes the sync
 * marker and the header JSON.  Refusals name the file and the offset.
 */
static int scan_existing(struct collect_file *f, const uint8_t *map, size_t size,
                         struct found *out, char **cause)
{
    struct trace_file_info fi;
    int rc = trace_scan_header(map, size, &fi);
    if (rc == -ENODATA) {
        *cause = xasprintf("trace '%s' is cut inside its header (%zu bytes); refusing to write "
                           "to it", f->path, size);
        return -EBADMSG;
    }
    if (rc < 0 || !is_event_schema(&fi)) {
        *cause = xasprintf("'%s' exists and is not a jackdaw trace (%s at offset 0); refusing "
                           "to write to it", f->path,
                           rc == -ENOTSUP ? "its codec is not deflate or it has no schema"
                           : rc < 0      ? "no Avro container header"
                                         : "its records are not jackdaw.Event");
        return rc == -ENOTSUP ? rc : -EBADMSG;
    }
    /* Blocks of ours appended to a file of another schema would be read with its schema
     * (an older one lacks the block checksum field): records of two shapes in one file. */
    if (fi.schema_len != strlen(trace_event_schema_json) ||
        memcmp(fi.schema, trace_event_schema_json, fi.schema_len)) {
        *cause = xasprintf("trace '%s' was written with another event schema (by another "
                           "version of jackdaw); refusing to append to it: move it away, or "
                           "name another file", f->path);
        return -EBADMSG;
    }
    struct trace_scan sc;
    trace_scan_blocks(map + fi.header_end, size - fi.header_end, fi.sync, &sc);
    out->header_end = fi.header_end;
    out->valid_end = fi.header_end + sc.valid_end;
    out->blocks = sc.blocks;
    out->records = sc.records;
    if (sc.tail == TRACE_TAIL_BAD &&
        !all_zero(map + out->valid_end, size - (size_t)out->valid_end)) {
        *cause = xasprintf("trace '%s' is corrupt at offset %" PRIu64 ": bad block framing after "
                           "%" PRIu64 " whole blocks, not a crash cut; refusing to append to it "
                           "(truncate -s %" PRIu64 " keeps what precedes)",
                           f->path, out->valid_end, sc.blocks, out->valid_end);
        return -EBADMSG;
    }
    memcpy(f->sync, fi.sync, TRACE_SYNC_SIZE);
    f->header_json = fi.header_json ? xstrndup((const char *)fi.header_json, fi.header_json_len)
                                    : xstrdup("");
    return 0;
}

/* Learns each node's next sequence number from the whole blocks of the (repaired) file. */
static int read_events(struct collect_file *f, char **cause)
{
    struct trace_reader *r = NULL;
    char *why = NULL;
    int rc = trace_reader_open(&r, f->path, &why);
    struct trace_event ev;
    uint64_t untracked = 0;
    while (rc == 0 && (rc = trace_reader_next(r, &ev, &why)) == 0) {
        int s = slot_of(f, ev.node);
        if (s < 0)
            untracked++;
        else if (ev.seq >= f->next_seq[s])
            f->next_seq[s] = ev.seq + 1;
        if (ev.node == COLLECT_FILE_OWN_NODE)
            mark_own(f, &ev);
    }
    trace_reader_destroy(r);
    if (rc < 0) {
        *cause = xasprintf("cannot resume trace '%s': %s", f->path, why ? why : strerror(-rc));
        free(why);
        return rc;
    }
    if (untracked)
        log_warn("trace '%s' holds %" PRIu64 " records of nodes outside this cluster's %u",
                 f->path, untracked, f->nnodes);
    return 0;
}

static int resume_file(struct collect_file *f, const char *header_json, char **cause)
{
    int rc = lock_file(f, cause);
    if (rc < 0)
        return rc;
    struct stat st;
    if (fstat(f->fd, &st) < 0) {
        int err = errno;
        *cause = xasprintf("cannot read trace '%s': %s", f->path, strerror(err));
        return -err;
    }
    if (!S_ISREG(st.st_mode)) {
        *cause = xasprintf("trace '%s' is not a regular file; refusing to write to it", f->path);
        return -EINVAL;
    }
    if (st.st_size == 0) {
        /* A collector stopped between creating the file and writing its header. */
        log_warn("trace '%s' exists but is empty: writing a new header", f->path);
        return write_header(f, header_json, cause);
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, f->fd, 0);
    if (map == MAP_FAILED) {
        int err = errno;
        *cause = xasprintf("cannot map trace '%s': %s", f->path, strerror(err));
        return -err;
    }
    struct found found;
    rc = scan_existing(f, map, size, &found, cause);
    munmap(map, size);
    if (rc < 0)
        return rc;
    if (size > found.valid_end) {
        if (ftruncate(f->fd, (off_t)found.valid_end) < 0) {
            int err = errno;
            *cause = xasprintf("cannot cut trace '%s' back to its last whole block (offset "
                               "%" PRIu64 "): %s", f->path, found.valid_end, strerror(err));
            return -err;
        }
        f->st.cut_bytes = size - found.valid_end;
        log_warn("trace '%s': removed %" PRIu64 " bytes of a cut block after the last whole "
                 "block (offset %" PRIu64 ")", f->path, f->st.cut_bytes, found.valid_end);
    }
    /* The reader opens the file again by name, now that it ends at a block boundary. */
    if (found.blocks > 0) {
        rc = read_events(f, cause);
        if (rc < 0)
            return rc;
    }
    f->st.file_events = found.records;
    f->end = found.valid_end;
    f->st.resumed = true;
    return 0;
}

int collect_file_open(struct collect_file **out, const char *path, const char *header_json,
                      uint32_t nnodes, int64_t start_ns, char **cause)
{
    if (!out || !path || !header_json || !cause || nnodes > INT32_MAX - 1)
        return -EINVAL;
    struct collect_file *f = xcalloc(1, sizeof *f);
    f->path = xstrdup(path);
    f->nnodes = nnodes;
    f->start_ns = start_ns;
    f->next_seq = xcalloc((size_t)nnodes + 1, sizeof *f->next_seq);
    f->written_seq = xcalloc((size_t)nnodes + 1, sizeof *f->written_seq);
    wbuf_init(&f->pending);
    u64map_init(&f->jobs);
    int rc;
    f->fd = open(path, O_RDWR | O_CLOEXEC);
    if (f->fd >= 0) {
        rc = resume_file(f, header_json, cause);
    } else if (errno == ENOENT) {
        rc = create_file(f, header_json, cause);
    } else {
        rc = -errno;
        *cause = xasprintf("cannot open trace '%s': %s", path, strerror(-rc));
    }
    if (rc < 0) {
        file_free(f);
        return rc;
    }
    memcpy(f->written_seq, f->next_seq, ((size_t)nnodes + 1) * sizeof *f->next_seq);
    *out = f;
    return 0;
}

int collect_file_close(struct collect_file *f, char **cause)
{
    if (!f)
        return 0;
    int rc = collect_file_flush(f, cause);
    if (rc == 0 && fsync(f->fd) < 0) {
        rc = -errno;
        *cause = xasprintf("cannot sync trace '%s': %s", f->path, strerror(-rc));
    }
    file_free(f);
    return rc;
}

const char *collect_file_header_json(const struct collect_file *f)
{
    return f->header_json;
}

void collect_file_set_start_ns(struct collect_file *f, int64_t start_ns)
{
    f->start_ns = start_ns;
}

int64_t collect_file_next_seq(const struct collect_file *f, int32_t node)
{
    int s = slot_of(f, node);
    return s < 0 ? -1 : f->next_seq[s];
}

int64_t collect_file_written_seq(const struct collect_file *f, int32_t node)
{
    int s = slot_of(f, node);
    return s < 0 ? -1 : f->written_seq[s];
}

int collect_file_check_block(const uint8_t *data, size_t len, uint32_t count,
                             const uint8_t sync[TRACE_SYNC_SIZE], char *why, size_t n)
{
    struct trace_scan sc;
    if (!data || !sync || trace_scan_blocks(data, len, sync, &sc) < 0) {
        snprintf(why, n, "no block");
        return -EBADMSG;
    }
    if (sc.tail == TRACE_TAIL_CUT)
        snprintf(why, n, "block cut short: %zu bytes after %" PRIu64 " whole blocks", len,
                 sc.blocks);
    else if (sc.tail == TRACE_TAIL_BAD)
        snprintf(why, n, "bad block framing at byte %zu (count, size, or a sync marker that is "
                 "not the one of the node's trace-hello)", sc.valid_end);
    else if (sc.blocks != 1)
        snprintf(why, n, "%" PRIu64 " blocks in one trace-block (one expected)", sc.blocks);
    else if (sc.records != count)
        snprintf(why, n, "block holds %" PRIu64 " records but trace-block says %u", sc.records,
                 count);
    else
        return 0;
    return -EBADMSG;
}

int collect_file_append_block(struct collect_file *f, int32_t node, int64_t first_seq,
                              int64_t last_seq, uint32_t count, const uint8_t *data, size_t len)
{
    int s = slot_of(f, node);
    if (s < 0 || s == 0 || !data || len <= TRACE_SYNC_SIZE || first_seq < 0 ||
        last_seq < first_seq)
        return -EINVAL;
    wbuf_put(&f->pending, data, len - TRACE_SYNC_SIZE);
    wbuf_put(&f->pending, f->sync, TRACE_SYNC_SIZE);
    f->pending_events += count;
    f->pending_blocks++;
    if (last_seq + 1 > f->next_seq[s])
        f->next_seq[s] = last_seq + 1;
    return 0;
}

/* Moves the own records encoded so far into the write buffer as one block. */
static int finish_own(struct collect_file *f)
{
    if (!f->own || trace_block_count(f->own) == 0)
        return 0;
    size_t count = trace_block_count(f->own);
    const uint8_t *data;
    size_t len;
    int rc = trace_block_finish(f->own, f->sync, &data, &len);
    if (rc < 0)
        return rc;
    wbuf_put(&f->pending, data, len);
    f->pending_events += count;
    f->pending_blocks++;
    return 0;
}

/* Encodes one own record with the next own sequence number and the time now. */
static int append_own(struct collect_file *f, struct trace_event *ev)
{
    if (!f->own) {
        int rc = trace_block_create(&f->own, COLLECT_FILE_OWN_RAW);
        if (rc < 0)
            return rc;
    }
    int64_t now = clock_wall_ns() - f->start_ns;
    ev->time_ns = now > 0 ? now : 0;
    ev->seq = f->next_seq[0];
    int rc = trace_block_append(f->own, ev);
    if (rc == -ENOSPC) {
        rc = finish_own(f);
        if (rc == 0)
            rc = trace_block_append(f->own, ev);
    }
    if (rc == 0) {
        f->next_seq[0]++;
        mark_own(f, ev);
    }
    return rc;
}

/* Length of s cut to at most max bytes, not inside a UTF-8 sequence (Avro strings are
 * UTF-8, and python3-avro refuses a broken one). */
static size_t utf8_cut(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1);
    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

int collect_file_append_job(struct collect_file *f, uint32_t job, uint32_t tasks,
                            const char *name, const char *digest, const char *mode)
{
    if (!f)
        return -EINVAL;
    /* Always three names, the mode "" when unknown: a reader tells a job whose client
     * did not say from a trace of before the mode by nnames alone if it must. */
    const char *names[3] = {name ? name : "", digest ? digest : "", mode ? mode : ""};
    struct trace_event ev;
    trace_event_init(&ev, TRACE_JOB_SUBMIT, COLLECT_FILE_OWN_NODE);
    /* Task -1 of the job: the record is about the job, not one of its tasks. */
    ev.task = (uint64_t)job << 32 | UINT32_MAX;
    ev.count = tasks;
    size_t n = utf8_cut(names[1], TRACE_TEXT_MAX - 1);
    memcpy(ev.text, names[1], n);
    ev.text[n] = '\0';
    ev.names = names;
    ev.nnames = 3;
    return append_own(f, &ev);
}

int collect_file_append_names(struct collect_file *f, uint32_t job, uint32_t first,
                              uint32_t count, const char *const *ids)
{
    if (!f || (count && !ids) || count > UINT32_MAX - first)
        return -EINVAL;
    uint32_t done = 0;
    while (done < count) {
        size_t bytes = 0;
        uint32_t n = 0;
        while (done + n < count) {
            const char *s = ids[done + n] ? ids[done + n] : "";
            size_t add = strlen(s) + NAME_OVERHEAD;
            if (n > 0 && bytes + add > NAMES_RECORD_BYTES)
                break;
            bytes += add;
            n++;
        }
        struct trace_event ev;
        trace_event_init(&ev, TRACE_TASK_NAMES, COLLECT_FILE_OWN_NODE);
        ev.task = (uint64_t)job << 32 | (first + done);
        ev.count = n;
        ev.names = ids + done;
        ev.nnames = n;
        int rc = append_own(f, &ev);
        if (rc < 0)
            return rc;
        done += n;
    }
    return 0;
}

void collect_file_job_recorded(const struct collect_file *f, uint32_t job, bool *submitted,
                               uint32_t *names_end)
{
    const struct job_mark *m = u64map_get(&f->jobs, (uint64_t)job + 1);
    *submitted = m && m->submitted;
    *names_end = m ? m->names_end : 0;
}

bool collect_file_dirty(const struct collect_file *f)
{
    return f->pending.len > 0 || (f->own && trace_block_count(f->own) > 0);
}

int collect_file_flush(struct collect_file *f, char **cause)
{
    int rc = finish_own(f);
    if (rc < 0) {
        *cause = xasprintf("cannot encode the collector's records for trace '%s': %s", f->path,
                           strerror(-rc));
        return rc;
    }
    if (f->pending.len == 0)
        return 0;
    rc = pwrite_all(f->fd, f->pending.data, f->pending.len, f->end);
    if (rc < 0) {
        /* Leave the file at a block boundary in case we are killed before the retry;
         * the retry writes at the same offset either way. */
        if (ftruncate(f->fd, (off_t)f->end) < 0)
            log_warn("cannot cut trace '%s' back to offset %" PRIu64 ": %s", f->path, f->end,
                     strerror(errno));
        *cause = xasprintf("cannot write trace '%s' at offset %" PRIu64 ": %s", f->path, f->end,
                           strerror(-rc));
        return rc;
    }
    f->end += f->pending.len;
    f->st.bytes += f->pending.len;
    f->st.events += f->pending_events;
    f->st.file_events += f->pending_events;
    f->st.blocks += f->pending_blocks;
    f->pending_events = f->pending_blocks = 0;
    if (f->pending.cap > PENDING_KEEP) {
        wbuf_fini(&f->pending);
        wbuf_init(&f->pending);
    }
    wbuf_reset(&f->pending);
    memcpy(f->written_seq, f->next_seq, ((size_t)f->nnodes + 1) * sizeof *f->next_seq);
    return 0;
}

void collect_file_stats(const struct collect_file *f, struct collect_file_stats *out)
{
    *out = f->st;
    out->pending_bytes = f->pending.len;
}
