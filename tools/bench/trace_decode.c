/*
 * trace_decode — how fast the blocks of a trace decode: through the block reader (as the
 * collector decodes the blocks it folds into job figures: inflate, then
 * trace_event_decode) and, on the same inflated bytes, through libavro's generic value
 * and trace_event_from_value (the path before trace_event_decode, and still the trace
 * reader's for files of another schema).  Prints figures, judges nothing.
 *
 *   trace_decode TRACE [--rounds N]
 *
 * The file's whole blocks are read into memory first; each round decodes every one of
 * them.  Figures are CPU time of this thread (CLOCK_THREAD_CPUTIME_ID), so a loaded
 * machine slows the wall clock, not them.  Inflating is timed on its own, once per
 * round, so that what is left is the record decoding.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <avro.h>

#include "core/base/xalloc.h"
#include "trace/format/block.h"
#include "trace/format/blockread.h"
#include "trace/format/event.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "trace_decode: cannot open '%s': %s\n", path, strerror(errno));
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *p = xmalloc((size_t)n + 1);
    if (fread(p, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "trace_decode: cannot read '%s'\n", path);
        exit(1);
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

static uint64_t sink_events;
static volatile int64_t sink_time; /* keeps the decoding from being optimised away */

static void count_event(void *ctx, const struct trace_event *ev)
{
    (void)ctx;
    sink_events++;
    sink_time += ev->time_ns;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: trace_decode TRACE [--rounds N]\n");
        return 2;
    }
    int rounds = 5;
    if (argc == 4 && !strcmp(argv[2], "--rounds"))
        rounds = atoi(argv[3]);
    size_t len;
    uint8_t *file = read_file(argv[1], &len);
    struct trace_file_info fi;
    struct trace_scan sc;
    if (trace_scan_header(file, len, &fi) < 0 ||
        trace_scan_blocks(file + fi.header_end, len - fi.header_end, fi.sync, &sc) < 0 ||
        sc.blocks == 0) {
        fprintf(stderr, "trace_decode: '%s' has no whole block\n", argv[1]);
        return 1;
    }
    const uint8_t *blocks = file + fi.header_end;
    struct trace_block_reader *rd;
    if (trace_block_reader_create(&rd) < 0)
        return 1;
    avro_schema_t schema;
    avro_value_iface_t *iface;
    avro_value_t value;
    if (trace_event_schema(&schema) < 0 || trace_event_value_new(schema, &iface, &value) < 0)
        return 1;

    double t_block = 0, t_inflate = 0, t_avro = 0;
    uint64_t events = 0, avro_events = 0;
    char why[160];
    for (int round = 0; round < rounds; round++) {
        size_t pos = 0;
        struct trace_block_view v;
        double t0 = cpu_now();
        while (trace_block_next(blocks, sc.valid_end, &pos, &v) == 1) {
            size_t at = v.offset;
            size_t block_len = pos - at;
            if (trace_block_reader_decode(rd, blocks + at, block_len, count_event, NULL, why,
                                          sizeof why) < 0) {
                fprintf(stderr, "trace_decode: block at %zu: %s\n", at, why);
                return 1;
            }
        }
        t_block += cpu_now() - t0;
        events += sc.records;

        /* Inflating alone, then libavro on what it gives. */
        pos = 0;
        while (trace_block_next(blocks, sc.valid_end, &pos, &v) == 1) {
            const uint8_t *raw;
            size_t raw_len;
            t0 = cpu_now();
            if (trace_block_reader_inflate(rd, &v, &raw, &raw_len) < 0)
                return 1;
            double t1 = cpu_now();
            t_inflate += t1 - t0;
            avro_reader_t ar = avro_reader_memory((const char *)raw, (int64_t)raw_len);
            struct trace_event ev, prev;
            for (int64_t i = 0; i < v.count; i++) {
                if (avro_value_read(ar, &value) ||
                    trace_event_from_value(&value, i ? &prev : NULL, &ev)) {
                    fprintf(stderr, "trace_decode: libavro refuses record %" PRId64 "\n", i);
                    return 1;
                }
                count_event(NULL, &ev);
                prev = ev;
            }
            avro_reader_free(ar);
            t_avro += cpu_now() - t1;
            avro_events += (uint64_t)v.count;
        }
    }
    double per_round = t_inflate / rounds;
    double dec_new = t_block / rounds - per_round, dec_old = t_avro / rounds;
    printf("trace        %s: %" PRIu64 " blocks, %" PRIu64 " events, %d rounds\n", argv[1],
           sc.blocks, sc.records, rounds);
    printf("inflate      %.4f CPU-s a round (%.1f M events/s)\n", per_round,
           (double)sc.records / per_round / 1e6);
    printf("block reader %.4f CPU-s a round with inflate, %.4f without: %.1f M events/s "
           "decoded, %.1f M/s with inflate\n", t_block / rounds, dec_new,
           (double)sc.records / dec_new / 1e6, (double)events / t_block / 1e6);
    printf("libavro      %.4f CPU-s a round without inflate: %.1f M events/s decoded\n",
           dec_old, (double)avro_events / t_avro / 1e6);
    printf("decode       %.1fx less CPU than libavro's (records only)\n", dec_old / dec_new);
    trace_event_value_free(iface, &value);
    avro_schema_decref(schema);
    trace_block_reader_destroy(rd);
    free(file);
    return 0;
}
