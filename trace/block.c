/*
 * trace block — see block.h.  Encoding: one generic jackdaw.Event value reused for every
 * event, written by a memory writer into a fixed buffer; deflate (raw, level 1) into a
 * second buffer that leaves room in front for the two block-header varints, so a
 * finished block is one contiguous run of bytes with no copy.
 */
#include "trace/block.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <zlib.h>

#define VARINT_MAX 10
#define MAGIC "Obj\x01"
#define MAGIC_LEN 4

struct trace_block {
    avro_schema_t schema;      /* owned reference */
    avro_value_iface_t *iface; /* owned reference */
    avro_value_t value;        /* owned; reused for every event */
    avro_writer_t writer;      /* owned; writes into raw[base..] */
    uint8_t *raw;              /* owned; raw_cap bytes of encoded records */
    size_t raw_cap;
    size_t used;  /* bytes of whole records in raw */
    size_t base;  /* where the writer's destination starts (see append) */
    size_t count; /* records in raw */
    struct trace_event prev; /* last event appended; valid when count > 0 */
    z_stream z;
    int z_ready;
    uint8_t *out; /* owned; VARINT_MAX * 2 + deflateBound + sync */
    size_t out_cap;
};

static size_t put_long(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    while (z >= 0x80) {
        p[n++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    p[n++] = (uint8_t)z;
    return n;
}

/* Reads one zigzag varint: bytes used, 0 when buf ends inside it, -1 when it is longer
 * than 10 bytes or overflows 64 bits. */
static int get_long(const uint8_t *p, size_t len, int64_t *v)
{
    uint64_t z = 0;
    for (size_t i = 0; i < VARINT_MAX; i++) {
        if (i == len)
            return 0;
        uint64_t b = p[i] & 0x7f;
        if (i == 9 && b > 1)
            return -1;
        z |= b << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
            return (int)i + 1;
        }
    }
    return -1;
}

int trace_sync_new(uint8_t sync[TRACE_SYNC_SIZE])
{
    if (sodium_init() < 0)
        return -EIO;
    randombytes_buf(sync, TRACE_SYNC_SIZE);
    return 0;
}

static size_t put_bytes(uint8_t *p, const void *s, size_t n)
{
    size_t k = put_long(p, (int64_t)n);
    memcpy(p + k, s, n);
    return k + n;
}

int trace_file_header(const char *header_json, const uint8_t sync[TRACE_SYNC_SIZE],
                      uint8_t **out, size_t *len)
{
    static const char codec[] = "deflate";
    if (!header_json || !sync || !out || !len)
        return -EINVAL;
    size_t schema_len = strlen(trace_event_schema_json);
    size_t header_len = strlen(header_json);
    if (header_len > TRACE_BLOCK_MAX_BYTES)
        return -EINVAL;
    size_t cap = MAGIC_LEN + VARINT_MAX * 8 + sizeof "avro.schema" + schema_len +
                 sizeof "avro.codec" + sizeof codec + sizeof TRACE_META_HEADER + header_len +
                 TRACE_SYNC_SIZE;
    uint8_t *p = malloc(cap);
    if (!p)
        return -ENOMEM;
    size_t n = 0;
    memcpy(p, MAGIC, MAGIC_LEN);
    n += MAGIC_LEN;
    n += put_long(p + n, 3); /* one map block of three entries */
    n += put_bytes(p + n, "avro.schema", strlen("avro.schema"));
    n += put_bytes(p + n, trace_event_schema_json, schema_len);
    n += put_bytes(p + n, "avro.codec", strlen("avro.codec"));
    n += put_bytes(p + n, codec, strlen(codec));
    n += put_bytes(p + n, TRACE_META_HEADER, strlen(TRACE_META_HEADER));
    n += put_bytes(p + n, header_json, header_len);
    n += put_long(p + n, 0); /* end of map */
    memcpy(p + n, sync, TRACE_SYNC_SIZE);
    n += TRACE_SYNC_SIZE;
    *out = p;
    *len = n;
    return 0;
}

int trace_block_create(struct trace_block **out, size_t raw_cap)
{
    if (!out || (raw_cap && (raw_cap < 1024 || raw_cap > TRACE_BLOCK_MAX_BYTES / 2)))
        return -EINVAL;
    if (!raw_cap)
        raw_cap = TRACE_BLOCK_DEFAULT_RAW;
    struct trace_block *b = calloc(1, sizeof *b);
    if (!b)
        return -ENOMEM;
    int rc = trace_event_schema(&b->schema);
    if (rc) {
        free(b);
        return rc;
    }
    rc = -ENOMEM;
    b->iface = avro_generic_class_from_schema(b->schema);
    if (!b->iface || avro_generic_value_new(b->iface, &b->value))
        goto fail;
    b->raw_cap = raw_cap;
    b->raw = malloc(raw_cap);
    if (!b->raw)
        goto fail;
    b->writer = avro_writer_memory((const char *)b->raw, (int64_t)raw_cap);
    if (!b->writer)
        goto fail;
    if (deflateInit2(&b->z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        goto fail;
    b->z_ready = 1;
    b->out_cap = 2 * VARINT_MAX + deflateBound(&b->z, (uLong)raw_cap) + TRACE_SYNC_SIZE;
    b->out = malloc(b->out_cap);
    if (!b->out)
        goto fail;
    *out = b;
    return 0;
fail:
    trace_block_destroy(b);
    return rc;
}

void trace_block_destroy(struct trace_block *b)
{
    if (!b)
        return;
    if (b->z_ready)
        deflateEnd(&b->z);
    if (b->writer)
        avro_writer_free(b->writer);
    if (b->value.self)
        avro_value_decref(&b->value);
    if (b->iface)
        avro_value_iface_decref(b->iface);
    avro_schema_decref(b->schema);
    free(b->raw);
    free(b->out);
    free(b);
}

int trace_block_append(struct trace_block *b, const struct trace_event *ev)
{
    if (!b || !ev)
        return -EINVAL;
    int rc = trace_event_to_value(ev, b->count ? &b->prev : NULL, &b->value);
    if (rc)
        return rc;
    rc = avro_value_write(b->writer, &b->value);
    if (rc) {
        /* A failed write on a full memory writer may have left part of the record
         * behind.  Move the writer's start back to the end of the last whole record so
         * the partial bytes are overwritten, and report the block full. */
        avro_writer_memory_set_dest(b->writer, (const char *)b->raw + b->used,
                                    (int64_t)(b->raw_cap - b->used));
        b->base = b->used;
        if (rc != ENOSPC)
            return -EINVAL;
        return b->count ? -ENOSPC : -EMSGSIZE; /* an event bigger than a whole block */
    }
    b->used = b->base + (size_t)avro_writer_tell(b->writer);
    b->count++;
    b->prev = *ev;
    return 0;
}

size_t trace_block_count(const struct trace_block *b)
{
    return b->count;
}

size_t trace_block_raw_size(const struct trace_block *b)
{
    return b->used;
}

int trace_block_finish(struct trace_block *b, const uint8_t sync[TRACE_SYNC_SIZE],
                       const uint8_t **data, size_t *len)
{
    if (!b || !sync || !data || !len)
        return -EINVAL;
    *data = NULL;
    *len = 0;
    if (!b->count)
        return 0;
    uint8_t *payload = b->out + 2 * VARINT_MAX;
    size_t payload_cap = b->out_cap - 2 * VARINT_MAX - TRACE_SYNC_SIZE;
    deflateReset(&b->z);
    b->z.next_in = b->raw;
    b->z.avail_in = (uInt)b->used;
    b->z.next_out = payload;
    b->z.avail_out = (uInt)payload_cap;
    int zrc = deflate(&b->z, Z_FINISH);
    if (zrc != Z_STREAM_END)
        return -EIO; /* cannot happen: out is deflateBound-sized */
    size_t zlen = payload_cap - b->z.avail_out;
    /* Block header right-aligned in front of the payload. */
    uint8_t head[2 * VARINT_MAX];
    size_t h = put_long(head, (int64_t)b->count);
    h += put_long(head + h, (int64_t)zlen);
    uint8_t *start = payload - h;
    memcpy(start, head, h);
    memcpy(payload + zlen, sync, TRACE_SYNC_SIZE);
    *data = start;
    *len = h + zlen + TRACE_SYNC_SIZE;
    b->used = 0;
    b->base = 0;
    b->count = 0;
    avro_writer_memory_set_dest(b->writer, (const char *)b->raw, (int64_t)b->raw_cap);
    return 0;
}

int trace_scan_header(const uint8_t *buf, size_t len, struct trace_file_info *info)
{
    if (!buf || !info)
        return -EINVAL;
    memset(info, 0, sizeof *info);
    size_t pos = 0;
    if (len < MAGIC_LEN)
        return memcmp(buf, MAGIC, len) ? -EBADMSG : -ENODATA;
    if (memcmp(buf, MAGIC, MAGIC_LEN))
        return -EBADMSG;
    pos = MAGIC_LEN;
    int have_deflate = 0;
    unsigned entries = 0;
    for (;;) {
        int64_t count, skip;
        int k = get_long(buf + pos, len - pos, &count);
        if (k <= 0)
            return k ? -EBADMSG : -ENODATA;
        pos += (size_t)k;
        if (count == 0)
            break;
        if (count < 0) { /* a negative count is followed by the block's byte size */
            if (count == INT64_MIN)
                return -EBADMSG;
            count = -count;
            k = get_long(buf + pos, len - pos, &skip);
            if (k <= 0)
                return k ? -EBADMSG : -ENODATA;
            pos += (size_t)k;
        }
        if (count > 1024 || (entries += (unsigned)count) > 1024)
            return -EBADMSG;
        for (int64_t i = 0; i < count; i++) {
            const uint8_t *str[2];
            int64_t n[2];
            for (int j = 0; j < 2; j++) {
                k = get_long(buf + pos, len - pos, &n[j]);
                if (k <= 0)
                    return k ? -EBADMSG : -ENODATA;
                pos += (size_t)k;
                if (n[j] < 0 || n[j] > (int64_t)TRACE_BLOCK_MAX_BYTES)
                    return -EBADMSG;
                if ((size_t)n[j] > len - pos)
                    return -ENODATA;
                str[j] = buf + pos;
                pos += (size_t)n[j];
            }
            size_t kn = (size_t)n[0], vn = (size_t)n[1];
            if (kn == 11 && !memcmp(str[0], "avro.schema", kn)) {
                info->schema = str[1];
                info->schema_len = vn;
            } else if (kn == 10 && !memcmp(str[0], "avro.codec", kn)) {
                have_deflate = vn == 7 && !memcmp(str[1], "deflate", 7);
                if (!have_deflate)
                    return -ENOTSUP;
            } else if (kn == strlen(TRACE_META_HEADER) &&
                       !memcmp(str[0], TRACE_META_HEADER, kn)) {
                info->header_json = str[1];
                info->header_json_len = vn;
            }
        }
    }
    if (len - pos < TRACE_SYNC_SIZE)
        return -ENODATA;
    if (!have_deflate || !info->schema)
        return -ENOTSUP;
    memcpy(info->sync, buf + pos, TRACE_SYNC_SIZE);
    info->header_end = pos + TRACE_SYNC_SIZE;
    return 0;
}

int trace_scan_blocks(const uint8_t *buf, size_t len, const uint8_t sync[TRACE_SYNC_SIZE],
                      struct trace_scan *out)
{
    if ((!buf && len) || !sync || !out)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    size_t pos = 0;
    for (;;) {
        if (pos == len) {
            out->tail = TRACE_TAIL_CLEAN;
            break;
        }
        int64_t count, size;
        size_t at = pos;
        int k = get_long(buf + at, len - at, &count);
        if (k > 0) {
            at += (size_t)k;
            k = get_long(buf + at, len - at, &size);
        }
        if (k == 0) {
            out->tail = TRACE_TAIL_CUT;
            break;
        }
        /* A deflated record is at least one bit and a record at least one byte, so a
         * count beyond 1032 records per compressed byte (deflate's best ratio) is a lie;
         * zero counts and sizes make libavro 1.11.1 re-serve the previous block. */
        if (k < 0 || count <= 0 || count > TRACE_BLOCK_MAX_COUNT || size <= 0 ||
            size > (int64_t)TRACE_BLOCK_MAX_BYTES || count > size * 1032) {
            out->tail = TRACE_TAIL_BAD;
            break;
        }
        at += (size_t)k;
        if ((size_t)size + TRACE_SYNC_SIZE > len - at) {
            out->tail = TRACE_TAIL_CUT;
            break;
        }
        at += (size_t)size;
        if (memcmp(buf + at, sync, TRACE_SYNC_SIZE)) {
            out->tail = TRACE_TAIL_BAD;
            break;
        }
        pos = at + TRACE_SYNC_SIZE;
        out->valid_end = pos;
        out->blocks++;
        out->records += (uint64_t)count;
    }
    return 0;
}
