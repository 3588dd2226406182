/*
 * fuzz_trace — libFuzzer harness for the trace file scanner (trace_scan_header +
 * trace_scan_blocks), the code that judges a trace file's bytes before they are decoded
 * (trace/format/reader, the collector's truncate-before-append), and for the block
 * reader that decodes what it accepts (trace_block_reader_decode: inflate, then
 * trace_event_decode, as the collector folds job figures and the trace reader reads
 * files of our schema).  No libavro call is made; libavro and libsodium are only linked
 * because trace/format/ also holds the encoder and libavro's decoding path.  Built by
 * `make fuzz`; its corpus is the trace corpus of the trace tools' tests, tests/traces,
 * which `make fuzz-replay` replays through it (README.md).  fuzz_event feeds the record
 * decoder raw records, which deflate seldom lets a mutation reach here.
 *
 * Besides memory safety it checks that everything the scanners report lies inside the
 * input: the header's end and the schema and jackdaw.header strings, and the valid
 * prefix of blocks; that a CLEAN verdict covers the whole input; and that the valid
 * prefix, scanned again on its own, is CLEAN with the same blocks and records (what the
 * collector relies on when it truncates a file there and appends); and that the block
 * walker (trace_block_next) finds exactly those blocks in the valid prefix, each inside
 * it, and trace_block_verify judges each without reading beyond it; and that the block
 * reader decodes each block or says why not, delivering no more events than the block
 * counts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/format/block.h"
#include "trace/format/blockread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static void check_inside(const uint8_t *p, size_t n, const uint8_t *data, size_t size)
{
    check(p >= data && n <= size && (size_t)(p - data) <= size - n);
}

static void scan_and_check(const uint8_t *buf, size_t len, const uint8_t *sync)
{
    struct trace_scan s;
    check(trace_scan_blocks(buf, len, sync, &s) == 0);
    check(s.valid_end <= len);
    check(s.records >= s.blocks); /* a block holds at least one record */
    check(s.records <= s.blocks * (uint64_t)TRACE_BLOCK_MAX_COUNT);
    check(s.blocks == 0 || s.valid_end >= s.blocks * (2 + 1 + TRACE_SYNC_SIZE));
    check(s.tail != TRACE_TAIL_CLEAN || s.valid_end == len);
    check(s.tail == TRACE_TAIL_CLEAN || s.tail == TRACE_TAIL_CUT || s.tail == TRACE_TAIL_BAD);
    if (s.valid_end == len)
        return;
    /* The valid prefix stands on its own. */
    struct trace_scan again;
    check(trace_scan_blocks(buf, s.valid_end, sync, &again) == 0);
    check(again.tail == TRACE_TAIL_CLEAN);
    check(again.valid_end == s.valid_end);
    check(again.blocks == s.blocks && again.records == s.records);
}

static void count_event(void *ctx, const struct trace_event *ev)
{
    (void)ev;
    (*(int64_t *)ctx)++;
}

/* One reader for the whole run, as the collector keeps one: its buffer is reused. */
static struct trace_block_reader *block_reader(void)
{
    static struct trace_block_reader *r;
    if (!r)
        check(trace_block_reader_create(&r) == 0);
    return r;
}

static void walk_and_verify(const uint8_t *buf, size_t len, const uint8_t *sync)
{
    struct trace_scan s;
    check(trace_scan_blocks(buf, len, sync, &s) == 0);
    size_t pos = 0;
    uint64_t blocks = 0, records = 0;
    struct trace_block_view v;
    int rc;
    while ((rc = trace_block_next(buf, s.valid_end, &pos, &v)) == 1) {
        check_inside(v.payload, v.size, buf, s.valid_end);
        check_inside(v.count_raw, v.count_len, buf, s.valid_end);
        char why[96];
        int verdict = trace_block_verify(&v, why, sizeof why);
        check(verdict == TRACE_BLOCK_OK || (verdict == TRACE_BLOCK_BAD && why[0]));
        int64_t events = 0;
        char bad[160] = "";
        int drc = trace_block_reader_decode(block_reader(), buf + v.offset, pos - v.offset,
                                            count_event, &events, bad, sizeof bad);
        check(drc == 0 || (drc == -EBADMSG && bad[0]) || drc == -ENOMEM);
        check(drc != 0 || events == v.count);
        check(events <= v.count);
        blocks++;
        records += (uint64_t)v.count;
    }
    check(rc == 0 && pos == s.valid_end);
    check(blocks == s.blocks && records == s.records);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_file_info info;
    int rc = trace_scan_header(data, size, &info);
    check(rc == 0 || rc == -ENODATA || rc == -EBADMSG || rc == -ENOTSUP);
    if (rc == 0) {
        check(info.header_end >= 4 + 1 + TRACE_SYNC_SIZE && info.header_end <= size);
        check_inside(info.schema, info.schema_len, data, info.header_end);
        check(info.schema != NULL);
        if (info.header_json)
            check_inside(info.header_json, info.header_json_len, data, info.header_end);
        check(memcmp(info.sync, data + info.header_end - TRACE_SYNC_SIZE, TRACE_SYNC_SIZE) == 0);
        /* Every prefix shorter than the header is either incomplete or refused. */
        struct trace_file_info part;
        int prc = trace_scan_header(data, info.header_end - 1, &part);
        check(prc == -ENODATA || prc == -EBADMSG || prc == -ENOTSUP);
        scan_and_check(data + info.header_end, size - info.header_end, info.sync);
        walk_and_verify(data + info.header_end, size - info.header_end, info.sync);
        check(info.checksums <= TRACE_CHECKSUMS_UNKNOWN);
    } else if (size >= TRACE_SYNC_SIZE) {
        /* Reach the block scanner without a valid header too: the first 16 bytes are the
         * sync marker, the rest are blocks (as a chunk a node sends to the collector). */
        scan_and_check(data + TRACE_SYNC_SIZE, size - TRACE_SYNC_SIZE, data);
    }
    return 0;
}
