/*
 * trace block — see block.h.  Encoding: one generic jackdaw.Event value reused for every
 * event, written by a memory writer into a fixed buffer; deflate (raw, level 1) into a
 * second buffer that leaves room in front for the two block-header varints, so a
 * finished block is one contiguous run of bytes with no copy.
 *
 * The checksum covers the compressed bytes, not the records: a flipped bit in a deflate
 * stream can decode to the very same records (a match copied from another distance that
 * holds the same bytes, a padding bit), and a file whose bytes changed is a damaged file.
 * So the records but the last one's check field are deflated and flushed to a byte
 * boundary (Z_SYNC_FLUSH), and the stream ends with a stored block written here whose
 * data is that check field: 2^32 + the CRC-32 of the count varint and every payload byte
 * before the field's own.  CRC-32 catches every single-bit error in what it covers, and
 * a flip in the field itself no longer matches, so no flip goes unseen.  Verifying needs
 * no inflate.
 */
#include "trace/format/block.h"
#include "trace/format/varint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <zlib.h>

#define MAGIC "Obj\x01"
#define MAGIC_LEN 4
/* A block's check value is this plus its CRC-32, so it is never 0 (0 means none), and
 * its zigzag varint always takes CHECK_LEN bytes (2^33 <= zigzag < 2^34). */
#define CHECK_BIAS (INT64_C(1) << 32)
#define CHECK_LEN 5
/* The final deflate block of a checked block: stored (BFINAL 1, BTYPE 00, then padding
 * to the byte: 0x01), LEN = CHECK_LEN and NLEN = ~LEN, little-endian; its CHECK_LEN
 * bytes of data follow. */
static const uint8_t check_stored[5] = {0x01, CHECK_LEN, 0x00, 0xff - CHECK_LEN, 0xff};
/* "crc32 " and 8 hex digits. */
#define CHECK_META_LEN (sizeof TRACE_CHECK_SCHEME + 8)

struct trace_block {
    uint8_t *raw; /* owned; raw_cap bytes of encoded records */
    size_t raw_cap;
    size_t used;  /* bytes of whole records in raw */
    size_t count; /* records in raw */
    struct trace_event prev; /* node, seq and time of the last event appended (count > 0) */
    z_stream z;
    int z_ready;
    uint8_t *out; /* owned; VARINT_MAX * 2 + deflateBound + sync */
    size_t out_cap;
};

int trace_sync_new(uint8_t sync[TRACE_SYNC_SIZE])
{
    if (sodium_init() < 0)
        return -EIO;
    randombytes_buf(sync, TRACE_SYNC_SIZE);
    return 0;
}

static size_t put_bytes(uint8_t *p, const void *s, size_t n)
{
    size_t k = varint_put(p, (int64_t)n);
    memcpy(p + k, s, n);
    return k + n;
}

/* The CRC-32 that jackdaw.check gives for a header: over the values a reader relies on,
 * in a fixed order whatever the order of the metadata map. */
static uint32_t header_crc(const uint8_t *schema, size_t schema_len, const uint8_t *codec,
                           size_t codec_len, const uint8_t *header_json, size_t header_len,
                           const uint8_t sync[TRACE_SYNC_SIZE])
{
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, schema, (uInt)schema_len);
    crc = crc32(crc, codec, (uInt)codec_len);
    if (header_len)
        crc = crc32(crc, header_json, (uInt)header_len);
    crc = crc32(crc, sync, TRACE_SYNC_SIZE);
    return (uint32_t)crc;
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
    size_t cap = MAGIC_LEN + VARINT_MAX * 10 + sizeof "avro.schema" + schema_len +
                 sizeof "avro.codec" + sizeof codec + sizeof TRACE_META_HEADER + header_len +
                 sizeof TRACE_META_CHECK + CHECK_META_LEN + TRACE_SYNC_SIZE;
    uint8_t *p = malloc(cap);
    if (!p)
        return -ENOMEM;
    size_t n = 0;
    memcpy(p, MAGIC, MAGIC_LEN);
    n += MAGIC_LEN;
    n += varint_put(p + n, 4); /* one map block of four entries */
    n += put_bytes(p + n, "avro.schema", strlen("avro.schema"));
    n += put_bytes(p + n, trace_event_schema_json, schema_len);
    n += put_bytes(p + n, "avro.codec", strlen("avro.codec"));
    n += put_bytes(p + n, codec, strlen(codec));
    n += put_bytes(p + n, TRACE_META_HEADER, strlen(TRACE_META_HEADER));
    n += put_bytes(p + n, header_json, header_len);
    char check[CHECK_META_LEN + 1];
    snprintf(check, sizeof check, TRACE_CHECK_SCHEME " %08" PRIx32,
             header_crc((const uint8_t *)trace_event_schema_json, schema_len,
                        (const uint8_t *)codec, strlen(codec), (const uint8_t *)header_json,
                        header_len, sync));
    n += put_bytes(p + n, TRACE_META_CHECK, strlen(TRACE_META_CHECK));
    n += put_bytes(p + n, check, strlen(check));
    n += varint_put(p + n, 0); /* end of map */
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
    int rc = -ENOMEM;
    b->raw_cap = raw_cap;
    b->raw = malloc(raw_cap);
    if (!b->raw)
        goto fail;
    if (deflateInit2(&b->z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        goto fail;
    b->z_ready = 1;
    /* deflateBound counts a Z_FINISH ending; a sync flush's empty stored block and the
     * stored check block take at most 32 bytes more. */
    b->out_cap = 2 * VARINT_MAX + deflateBound(&b->z, (uLong)raw_cap) + 32 + TRACE_SYNC_SIZE;
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
    free(b->raw);
    free(b->out);
    free(b);
}

int trace_block_append(struct trace_block *b, const struct trace_event *ev)
{
    if (!b || !ev)
        return -EINVAL;
    int n = trace_event_encode(ev, b->count ? &b->prev : NULL, b->raw + b->used,
                               b->raw_cap - b->used);
    if (n == -ENOSPC)
        return b->count ? -ENOSPC : -EMSGSIZE; /* an event bigger than a whole block */
    if (n < 0)
        return n;
    b->used += (size_t)n;
    b->count++;
    /* The next record's deltas need only these (a whole event is ~300 bytes). */
    b->prev.node = ev->node;
    b->prev.seq = ev->seq;
    b->prev.time_ns = ev->time_ns;
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
    /* Every record ends with its check field, written as 0 (one byte): the last one's is
     * left out of the deflated part and comes back as the stored check block. */
    if (b->raw[b->used - 1] != 0)
        return -EIO; /* cannot happen: trace_event_encode writes check = 0 last */
    uint8_t head[2 * VARINT_MAX];
    size_t hc = varint_put(head, (int64_t)b->count);
    uint8_t *payload = b->out + 2 * VARINT_MAX;
    size_t payload_cap = b->out_cap - 2 * VARINT_MAX - TRACE_SYNC_SIZE;
    deflateReset(&b->z);
    b->z.next_in = b->raw;
    b->z.avail_in = (uInt)(b->used - 1);
    b->z.next_out = payload;
    b->z.avail_out = (uInt)(payload_cap - sizeof check_stored - CHECK_LEN);
    int zrc = deflate(&b->z, Z_SYNC_FLUSH);
    if (zrc != Z_OK || b->z.avail_in || !b->z.avail_out)
        return -EIO; /* cannot happen: out is deflateBound-sized */
    size_t zlen = (size_t)(b->z.next_out - payload);
    memcpy(payload + zlen, check_stored, sizeof check_stored);
    zlen += sizeof check_stored;
    uLong crc = crc32(crc32(0L, Z_NULL, 0), head, (uInt)hc);
    crc = crc32(crc, payload, (uInt)zlen);
    zlen += varint_put(payload + zlen, CHECK_BIAS + (int64_t)crc);
    /* Block header right-aligned in front of the payload. */
    size_t h = hc + varint_put(head + hc, (int64_t)zlen);
    uint8_t *start = payload - h;
    memcpy(start, head, h);
    memcpy(payload + zlen, sync, TRACE_SYNC_SIZE);
    *data = start;
    *len = h + zlen + TRACE_SYNC_SIZE;
    b->used = 0;
    b->count = 0;
    return 0;
}

/* What a header's jackdaw.check value says, checked against the header itself. */
static enum trace_checksums header_checksums(const struct trace_file_info *info,
                                             const uint8_t *codec, size_t codec_len,
                                             const uint8_t *check, size_t check_len)
{
    static const char field[] = "\"name\":\"check\"";
    size_t scheme = strlen(TRACE_CHECK_SCHEME);
    /* Every writer of the `check` field declares it: a schema that has the field and a
     * header that does not say so lost its jackdaw.check key (a flipped bit in its name). */
    if (!check)
        return memmem(info->schema, info->schema_len, field, sizeof field - 1)
                   ? TRACE_CHECKSUMS_BAD
                   : TRACE_CHECKSUMS_NONE;
    if (check_len < scheme || memcmp(check, TRACE_CHECK_SCHEME, scheme) ||
        (check_len > scheme && check[scheme] != ' '))
        return TRACE_CHECKSUMS_UNKNOWN;
    if (check_len != CHECK_META_LEN)
        return TRACE_CHECKSUMS_BAD;
    uint32_t want = 0;
    for (size_t i = scheme + 1; i < check_len; i++) {
        uint8_t c = check[i];
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0)
            return TRACE_CHECKSUMS_BAD;
        want = want << 4 | (uint32_t)digit;
    }
    uint32_t got = header_crc(info->schema, info->schema_len, codec, codec_len,
                              info->header_json, info->header_json_len, info->sync);
    return got == want ? TRACE_CHECKSUMS_CRC32 : TRACE_CHECKSUMS_BAD;
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
    const uint8_t *codec = NULL, *check = NULL;
    size_t codec_len = 0, check_len = 0;
    for (;;) {
        int64_t count, skip;
        int k = varint_get(buf + pos, len - pos, &count);
        if (k <= 0)
            return k ? -EBADMSG : -ENODATA;
        pos += (size_t)k;
        if (count == 0)
            break;
        if (count < 0) { /* a negative count is followed by the block's byte size */
            if (count == INT64_MIN)
                return -EBADMSG;
            count = -count;
            k = varint_get(buf + pos, len - pos, &skip);
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
                k = varint_get(buf + pos, len - pos, &n[j]);
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
                codec = str[1];
                codec_len = vn;
                have_deflate = vn == 7 && !memcmp(str[1], "deflate", 7);
                if (!have_deflate)
                    return -ENOTSUP;
            } else if (kn == strlen(TRACE_META_HEADER) &&
                       !memcmp(str[0], TRACE_META_HEADER, kn)) {
                info->header_json = str[1];
                info->header_json_len = vn;
            } else if (kn == strlen(TRACE_META_CHECK) &&
                       !memcmp(str[0], TRACE_META_CHECK, kn)) {
                check = str[1];
                check_len = vn;
            }
        }
    }
    if (len - pos < TRACE_SYNC_SIZE)
        return -ENODATA;
    if (!have_deflate || !info->schema)
        return -ENOTSUP;
    memcpy(info->sync, buf + pos, TRACE_SYNC_SIZE);
    info->header_end = pos + TRACE_SYNC_SIZE;
    info->checksums = header_checksums(info, codec, codec_len, check, check_len);
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
        int64_t count = 0, size = 0;
        size_t at = pos;
        int k = varint_get(buf + at, len - at, &count);
        if (k > 0) {
            at += (size_t)k;
            k = varint_get(buf + at, len - at, &size);
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

int trace_block_next(const uint8_t *buf, size_t len, size_t *pos, struct trace_block_view *v)
{
    if ((!buf && len) || !pos || !v || *pos > len)
        return -EINVAL;
    if (*pos == len)
        return 0;
    size_t at = *pos;
    int64_t count, size;
    int k = varint_get(buf + at, len - at, &count);
    if (k <= 0)
        return -EBADMSG;
    v->offset = at;
    v->count_raw = buf + at;
    v->count_len = (size_t)k;
    at += (size_t)k;
    k = varint_get(buf + at, len - at, &size);
    if (k <= 0 || count <= 0 || size <= 0 || (uint64_t)size > len - at - (size_t)k ||
        len - at - (size_t)k - (size_t)size < TRACE_SYNC_SIZE)
        return -EBADMSG;
    at += (size_t)k;
    v->count = count;
    v->payload = buf + at;
    v->size = (size_t)size;
    *pos = at + (size_t)size + TRACE_SYNC_SIZE;
    return 1;
}

int trace_block_verify(const struct trace_block_view *v, char *why, size_t why_cap)
{
    if (!v || !why || !why_cap)
        return -EINVAL;
    why[0] = '\0';
    size_t tail = sizeof check_stored + CHECK_LEN;
    int64_t check;
    if (v->size < tail || memcmp(v->payload + v->size - tail, check_stored, sizeof check_stored) ||
        varint_get(v->payload + v->size - CHECK_LEN, CHECK_LEN, &check) != CHECK_LEN) {
        snprintf(why, why_cap, "it does not end in a checksum");
        return TRACE_BLOCK_BAD;
    }
    uLong crc = crc32(crc32(0L, Z_NULL, 0), v->count_raw, (uInt)v->count_len);
    crc = crc32(crc, v->payload, (uInt)(v->size - CHECK_LEN));
    if (check != CHECK_BIAS + (int64_t)crc) {
        snprintf(why, why_cap, "checksum mismatch (recorded %08" PRIx64 ", computed %08lx)",
                 (uint64_t)check & 0xffffffffu, (unsigned long)crc);
        return TRACE_BLOCK_BAD;
    }
    return TRACE_BLOCK_OK;
}
