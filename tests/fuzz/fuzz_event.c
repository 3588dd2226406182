/*
 * fuzz_event — libFuzzer harness for the trace record decoder (trace_event_decode and
 * trace_event_decode_names, trace/format/event.h): the input is a block's records as
 * inflated, decoded one after another with the record before as prev, as the block
 * reader and the trace reader do, until the input ends or a record is refused.  Its
 * corpus is corpus/event, whose seeds are records of every kind and at each field's
 * extremes written by the encoder (seeds.c).
 *
 * Besides memory safety (the decoder must never read outside the input) it checks that
 * a record accepted lies inside what was left of the input, and that libavro's path
 * (avro_value_read, then trace_event_from_value) reads the same bytes into the same
 * struct, taking exactly as many of them, with the same names.  libavro only ever sees
 * what the decoder accepted: 1.11.1 does not check lengths, so damage could crash it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <avro.h>

#include "tests/fuzz/fuzz.h"
#include "trace/format/event.h"

#define MAX_NAMES 64

/* libavro's side: the schema and the value's class are made once and kept to the end of
 * the run; the value is made for each input and released after it, because a value
 * kept from one input to the next leaves the storage of its last string where
 * LeakSanitizer counts it as leaked (seen with libavro 1.11.1). */
static avro_schema_t schema;
static avro_value_iface_t *iface;
static avro_value_t value;

static void slow_init(void)
{
    if (!iface) {
        check(trace_event_schema(&schema) == 0);
        check(trace_event_value_new(schema, &iface, &value) == 0);
        avro_value_decref(&value);
    }
    check(avro_generic_value_new(iface, &value) == 0);
}

/* Checks one record the decoder accepted, buf[0..len) exactly. */
static void same_as_libavro(const uint8_t *buf, size_t len, const struct trace_event *prev,
                            const struct trace_event *fast)
{
    avro_reader_t rd = avro_reader_memory((const char *)buf, (int64_t)len);
    check(rd != NULL);
    check(avro_value_read(rd, &value) == 0);
    char byte;
    check(avro_read(rd, &byte, 1) != 0); /* every byte taken, and no more */
    avro_reader_free(rd);
    struct trace_event slow;
    check(trace_event_from_value(&value, prev, &slow) == 0);
    check(memcmp(fast, &slow, sizeof slow) == 0);

    const char *names[MAX_NAMES], *lib[MAX_NAMES];
    size_t n, ln;
    char *text = malloc(len);
    check(text != NULL);
    check(trace_event_decode_names(buf, len, names, MAX_NAMES, &n, text) == 0);
    check(trace_event_names(&value, lib, MAX_NAMES, &ln) == 0);
    check(n == ln);
    for (size_t i = 0; i < n && i < MAX_NAMES; i++)
        check(strcmp(names[i], lib[i]) == 0);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    slow_init();
    struct trace_event ev, prev;
    size_t at = 0;
    for (size_t i = 0; at < size; i++) {
        /* Each record in a buffer of its own exact size, so that ASan sees a read past
         * the end of what is left. */
        size_t left = size - at;
        uint8_t *buf = malloc(left);
        check(buf != NULL);
        memcpy(buf, data + at, left);
        int n = trace_event_decode(buf, left, i ? &prev : NULL, &ev);
        check(n == -EBADMSG || (n > 0 && (size_t)n <= left));
        if (n < 0) {
            free(buf);
            break;
        }
        same_as_libavro(buf, (size_t)n, i ? &prev : NULL, &ev);
        free(buf);
        prev = ev;
        at += (size_t)n;
    }
    avro_value_decref(&value);
    return 0;
}
