/*
 * trace reader — scanner first, then the records of the accepted prefix only (see
 * reader.h): decoded by trace_event_decode from blocks inflated here when the file's
 * schema is ours, else by libavro.
 */
#include "trace/format/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <avro.h>

#include "core/base/search.h"
#include "trace/format/blockread.h"

struct trace_reader {
    struct trace_reader_info info;
    char *header_json;          /* owned copy of jackdaw.header; NULL if absent */
    const uint8_t *map;         /* owned mapping of the file; NULL when empty */
    size_t map_len;
    /* The file's schema is ours, byte for byte: records are decoded by
     * trace_event_decode from the blocks `blocks` inflates, and libavro is not used. */
    bool own_schema;
    avro_file_reader_t avro;    /* NULL when there is no whole block, or own_schema */
    avro_schema_t schema;       /* the file's writer schema; NULL with avro */
    avro_value_iface_t *iface;
    avro_value_t value;         /* reused for every record; valid when iface is set */
    /* With own_schema, where reading is: the next block (offset from header_end), the
     * current block's inflated bytes (borrowed from `blocks`), the record handed out
     * last. */
    struct trace_block_reader *blocks; /* owned; NULL unless own_schema */
    size_t next_block;
    uint64_t block_offset;      /* of the current block in the file */
    const uint8_t *raw;
    size_t raw_len, raw_pos;
    int64_t block_left;         /* records of the current block not yet read */
    const uint8_t *cur;         /* the last record's bytes, cur_len of them */
    size_t cur_len;
    char *names_text;           /* owned; own_schema's copies of the names */
    size_t names_text_cap;
    uint64_t read;              /* records handed out so far */
    struct trace_event prev;    /* the record read just before; valid when read > 0 */
    const char **names;         /* owned array; entries borrow `value` or names_text */
    size_t names_cap;
};

/* Sets *cause to a fresh sentence, or NULL when even that cannot be allocated. */
__attribute__((format(printf, 2, 3))) static void set_cause(char **cause, const char *fmt, ...)
{
    if (!cause)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(cause, fmt, ap) < 0)
        *cause = NULL;
    va_end(ap);
}

/* A jackdaw trace's records are jackdaw.Event: any other container is refused here,
 * before libavro opens it. */
static int check_schema(const struct trace_file_info *fi)
{
    avro_schema_t s;
    if (avro_schema_from_json_length((const char *)fi->schema, fi->schema_len, &s))
        return -EBADMSG;
    const char *name = is_avro_record(s) ? avro_schema_name(s) : NULL;
    const char *ns = name ? avro_schema_namespace(s) : NULL;
    int ok = name && ns && !strcmp(name, "Event") && !strcmp(ns, "jackdaw");
    avro_schema_decref(s);
    return ok ? 0 : -EBADMSG;
}

static int map_file(struct trace_reader *r, const char *path, char **cause)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        set_cause(cause, "cannot open trace '%s': %s", path, strerror(err));
        return -err;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = errno;
        set_cause(cause, "cannot read trace '%s': %s", path, strerror(err));
        close(fd);
        return -err;
    }
    if (!S_ISREG(st.st_mode)) { /* a pipe or a device cannot be mapped and scanned */
        set_cause(cause, "cannot read trace '%s': not a regular file", path);
        close(fd);
        return -EINVAL;
    }
    r->info.file_size = (uint64_t)st.st_size;
    if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int err = errno;
            set_cause(cause, "cannot map trace '%s': %s", path, strerror(err));
            close(fd);
            return -err;
        }
        r->map = p;
        r->map_len = (size_t)st.st_size;
    }
    close(fd);
    return 0;
}

/*
 * Checks the blocks of the accepted prefix; the prefix is cut back before the first
 * block that fails, so that libavro never decodes it.  Every block is checked, to count
 * the failures.
 */
static int check_blocks(struct trace_reader *r, const struct trace_file_info *fi)
{
    const uint8_t *blocks = r->map + fi->header_end;
    size_t len = (size_t)(r->info.valid_end - fi->header_end), pos = 0;
    uint64_t index = 0, records = 0;
    struct trace_block_view v;
    int rc;
    while ((rc = trace_block_next(blocks, len, &pos, &v)) == 1) {
        char why[sizeof r->info.failed_why];
        int verdict = trace_block_verify(&v, why, sizeof why);
        if (verdict < 0)
            return verdict;
        if (verdict == TRACE_BLOCK_OK) {
            r->info.blocks_checked++;
        } else if (r->info.blocks_failed++ == 0) {
            r->info.failed_offset = fi->header_end + v.offset;
            r->info.failed_index = index;
            snprintf(r->info.failed_why, sizeof r->info.failed_why, "%s", why);
            r->info.valid_end = r->info.failed_offset;
            r->info.blocks = index;
            r->info.records = records;
        }
        index++;
        records += (uint64_t)v.count;
    }
    return rc < 0 ? rc : 0;
}

static int scan(struct trace_reader *r, const char *path, bool verify, char **cause)
{
    struct trace_file_info fi;
    size_t len = r->map_len;
    int rc = trace_scan_header(r->map ? r->map : (const uint8_t *)"", len, &fi);
    if (rc == -ENODATA) {
        set_cause(cause, "'%s' is not a readable trace: cut inside its header (%zu bytes)",
                  path, len);
        return -EBADMSG;
    }
    if (rc == -ENOTSUP) {
        set_cause(cause, "'%s' is not a jackdaw trace: its codec is not deflate or it has "
                  "no schema (header at offset 0)", path);
        return -ENOTSUP;
    }
    /* A damaged header would otherwise read as "not a jackdaw trace". */
    if (verify && rc == 0 && fi.checksums == TRACE_CHECKSUMS_BAD) {
        set_cause(cause, "'%s' is corrupt: its header does not match its checksum "
                  "(jackdaw.check) at offset 0", path);
        return -EBADMSG;
    }
    if (rc < 0 || check_schema(&fi) < 0) {
        set_cause(cause, "'%s' is not a jackdaw trace: %s at offset 0", path,
                  rc < 0 ? "no Avro container header" : "its records are not jackdaw.Event");
        return -EBADMSG;
    }
    struct trace_scan sc;
    rc = trace_scan_blocks(r->map + fi.header_end, len - fi.header_end, fi.sync, &sc);
    if (rc < 0)
        return rc;
    if (sc.tail == TRACE_TAIL_BAD && sc.blocks == 0) {
        set_cause(cause, "'%s' is corrupt: bad block framing at offset %zu, before any "
                  "whole block", path, fi.header_end);
        return -EBADMSG;
    }
    if (fi.header_json) {
        r->header_json = strndup((const char *)fi.header_json, fi.header_json_len);
        if (!r->header_json)
            return -ENOMEM;
    }
    r->info.header_json = r->header_json;
    r->info.header_end = fi.header_end;
    r->info.valid_end = fi.header_end + sc.valid_end;
    r->info.blocks = sc.blocks;
    r->info.records = sc.records;
    r->info.tail = sc.tail;
    r->info.checksums = fi.checksums;
    r->own_schema = fi.schema_len == strlen(trace_event_schema_json) &&
              !memcmp(fi.schema, trace_event_schema_json, fi.schema_len);
    return verify && fi.checksums == TRACE_CHECKSUMS_CRC32 ? check_blocks(r, &fi) : 0;
}

/* libavro reads from a memory stream over the accepted prefix: it cannot reach the cut
 * or corrupt bytes after it, whatever it does at a block boundary. */
static int open_avro(struct trace_reader *r, const char *path, char **cause)
{
    /* fmemopen takes a void *; in "r" mode glibc only reads it, so the read-only
     * mapping is safe to pass. */
    FILE *fp = fmemopen((void *)(uintptr_t)r->map, (size_t)r->info.valid_end, "r");
    if (!fp)
        return -errno;
    if (avro_file_reader_fp(fp, path, 1, &r->avro)) {
        /* Only reached when libavro disagrees with the scanner (a bad deflate payload
         * in the first block); the failed open leaks inside libavro 1.11.1, once. */
        r->avro = NULL;
        set_cause(cause, "cannot read trace '%s': first block at offset %llu: %s", path,
                  (unsigned long long)r->info.header_end, avro_strerror());
        return -EBADMSG;
    }
    r->schema = avro_file_reader_get_writer_schema(r->avro);
    return trace_event_value_new(r->schema, &r->iface, &r->value);
}

static int open_reader(struct trace_reader **out, const char *path, bool verify,
                       char **cause)
{
    if (cause)
        *cause = NULL;
    if (!out || !path)
        return -EINVAL;
    *out = NULL;
    struct trace_reader *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    int rc = map_file(r, path, cause);
    if (!rc)
        rc = scan(r, path, verify, cause);
    if (!rc && r->info.records > 0)
        rc = r->own_schema ? trace_block_reader_create(&r->blocks) : open_avro(r, path, cause);
    if (rc) {
        trace_reader_destroy(r);
        return rc;
    }
    *out = r;
    return 0;
}

int trace_reader_open(struct trace_reader **out, const char *path, char **cause)
{
    return open_reader(out, path, false, cause);
}

int trace_reader_open_verified(struct trace_reader **out, const char *path, char **cause)
{
    return open_reader(out, path, true, cause);
}

void trace_reader_destroy(struct trace_reader *r)
{
    if (!r)
        return;
    trace_event_value_free(r->iface, &r->value);
    if (r->schema)
        avro_schema_decref(r->schema);
    if (r->avro)
        avro_file_reader_close(r->avro);
    trace_block_reader_destroy(r->blocks);
    free(r->names_text);
    if (r->map)
        munmap((void *)(uintptr_t)r->map, r->map_len);
    free(r->header_json);
    free(r->names);
    free(r);
}

const struct trace_reader_info *trace_reader_info(const struct trace_reader *r)
{
    return r ? &r->info : NULL;
}

/* Moves to the next block of the accepted prefix and inflates it. */
static int next_block(struct trace_reader *r, char **cause)
{
    const uint8_t *blocks = r->map + r->info.header_end;
    size_t len = (size_t)(r->info.valid_end - r->info.header_end);
    size_t at = r->next_block;
    struct trace_block_view v;
    if (trace_block_next(blocks, len, &r->next_block, &v) != 1) {
        /* The scanner counted more records than the blocks hold: cannot happen with an
         * unchanged mapping, but must not loop. */
        set_cause(cause, "record %llu of %llu: early end of the blocks at offset %llu",
                  (unsigned long long)r->read, (unsigned long long)r->info.records,
                  (unsigned long long)(r->info.header_end + at));
        return -EBADMSG;
    }
    r->block_offset = r->info.header_end + at;
    int rc = trace_block_reader_inflate(r->blocks, &v, &r->raw, &r->raw_len);
    if (rc == -ENOMEM)
        return rc;
    if (rc < 0) {
        set_cause(cause, "record %llu of %llu: block at offset %llu: its deflate payload %s",
                  (unsigned long long)r->read, (unsigned long long)r->info.records,
                  (unsigned long long)r->block_offset,
                  rc == -EMSGSIZE ? "inflates past the block bound" : "is corrupt or cut");
        return -EBADMSG;
    }
    r->raw_pos = 0;
    r->block_left = v.count;
    return 0;
}

/* As the libavro path below, record for record: the same prev across blocks, bytes left
 * after a block's last record ignored. */
static int next_own_schema(struct trace_reader *r, struct trace_event *ev, char **cause)
{
    int rc;
    if (r->block_left == 0 && (rc = next_block(r, cause)) < 0)
        return rc;
    const uint8_t *p = r->raw + r->raw_pos;
    int n = trace_event_decode(p, r->raw_len - r->raw_pos, r->read ? &r->prev : NULL, ev);
    if (n < 0) {
        set_cause(cause, "record %llu of %llu: malformed, out of range or a delta with no "
                  "anchor before it (block at offset %llu, byte %zu of %zu inflated)",
                  (unsigned long long)r->read, (unsigned long long)r->info.records,
                  (unsigned long long)r->block_offset, r->raw_pos, r->raw_len);
        return n;
    }
    r->cur = p;
    r->cur_len = (size_t)n;
    r->raw_pos += (size_t)n;
    r->block_left--;
    r->prev = *ev;
    r->read++;
    return 0;
}

int trace_reader_next(struct trace_reader *r, struct trace_event *ev, char **cause)
{
    if (cause)
        *cause = NULL;
    if (!r || !ev)
        return -EINVAL;
    /* Stop at the scanner's count, not at libavro's EOF: libavro reports a cut inside a
     * block header as a clean EOF, and the count is what the framing promised. */
    if (r->read >= r->info.records)
        return TRACE_READER_END;
    if (r->own_schema)
        return next_own_schema(r, ev, cause);
    int rc = avro_file_reader_read_value(r->avro, &r->value);
    if (rc) {
        set_cause(cause, "record %llu of %llu: libavro: %s", (unsigned long long)r->read,
                  (unsigned long long)r->info.records, rc == EOF ? "early end" : avro_strerror());
        return -EBADMSG;
    }
    rc = trace_event_from_value(&r->value, r->read ? &r->prev : NULL, ev);
    if (rc) {
        set_cause(cause, "record %llu of %llu: out of range or a delta with no anchor before it",
                  (unsigned long long)r->read, (unsigned long long)r->info.records);
        return rc;
    }
    r->prev = *ev;
    r->read++;
    return 0;
}

/* The last record's names into r->names (up to names_cap); *len is how many it has. */
static int names_of(struct trace_reader *r, size_t *len)
{
    if (!r->own_schema)
        return trace_event_names(&r->value, r->names, r->names_cap, len);
    if (r->cur_len > r->names_text_cap) {
        char *grown = realloc(r->names_text, r->cur_len);
        if (!grown)
            return -ENOMEM;
        r->names_text = grown;
        r->names_text_cap = r->cur_len;
    }
    return trace_event_decode_names(r->cur, r->cur_len, r->names, r->names_cap, len,
                                    r->names_text);
}

int trace_reader_names(struct trace_reader *r, const char *const **names, size_t *n)
{
    *names = NULL;
    *n = 0;
    if (!r || !r->read)
        return 0;
    size_t len;
    int rc = names_of(r, &len);
    if (rc == 0 && len > r->names_cap) {
        /* Bounded by the block size the scanner accepted, so this cannot run away. */
        const char **grown = realloc(r->names, len * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        r->names = grown;
        r->names_cap = len;
        rc = names_of(r, &len);
    }
    if (rc)
        return rc;
    *names = r->names;
    *n = len;
    return 0;
}

void trace_tally_init(struct trace_tally *t)
{
    memset(t, 0, sizeof *t);
}

void trace_tally_fini(struct trace_tally *t)
{
    if (!t)
        return;
    free(t->by_node);
    trace_tally_init(t);
}

int trace_tally_add(struct trace_tally *t, const struct trace_event *ev)
{
    /* Nodes are few (tens to thousands) and arrive in runs, so a sorted array searched by
     * bisection is enough and keeps the printed order. */
    size_t lo = SEARCH_BY(t->by_node, t->n_nodes, node, ev->node);
    if (lo == t->n_nodes || t->by_node[lo].node != ev->node) {
        if (t->n_nodes == t->cap_nodes) {
            size_t cap = t->cap_nodes ? 2 * t->cap_nodes : 16;
            struct trace_node_count *p = realloc(t->by_node, cap * sizeof *p);
            if (!p)
                return -ENOMEM;
            t->by_node = p;
            t->cap_nodes = cap;
        }
        memmove(&t->by_node[lo + 1], &t->by_node[lo], (t->n_nodes - lo) * sizeof *t->by_node);
        t->by_node[lo] = (struct trace_node_count){ .node = ev->node, .events = 0 };
        t->n_nodes++;
    }
    t->by_node[lo].events++;
    if ((unsigned)ev->kind < TRACE_KIND_COUNT)
        t->by_kind[ev->kind]++;
    else
        t->unknown_kind++;
    if (t->events == 0 || ev->time_ns < t->first_ns)
        t->first_ns = ev->time_ns;
    if (t->events == 0 || ev->time_ns > t->last_ns)
        t->last_ns = ev->time_ns;
    t->events++;
    return 0;
}
