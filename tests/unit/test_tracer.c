/*
 * The node side of tracing (trace/tracer/tracer) without a collector: every event the
 * scheduler hands over reaches the spool file in sequence order with no gap, events with
 * a body (samples, policy names) interleave correctly with the ring's, and when the ring
 * overflows the loss is written down as DROPPED events whose counts add up to exactly
 * what was lost.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/format/reader.h"
#include "trace/tracer/tracer.h"


static int setup_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_tracer");
}

static struct tracer *start(const char *name, size_t ring_bytes, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tmpdir, name);
    struct tracer_config cfg = {
        .node = 3, .start_ns = 1, .spool_path = path,
        .header_json = "{\"format\":1,\"spool\":{\"node\":3}}", .ring_bytes = ring_bytes,
        .flush_ms = 5,
    };
    struct tracer *t = NULL;
    char *cause = NULL;
    assert_int_equal(tracer_start(&t, &cfg, &cause), 0);
    assert_null(cause);
    return t;
}

/* Reads the whole file; checks seq 0..n-1 in order on node 3.  Returns the count. */
static uint64_t read_back(const char *path, uint64_t *tasks, uint64_t *samples,
                          uint64_t *dropped_events, int64_t *dropped_sum)
{
    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, path, &cause), 0);
    assert_int_equal(trace_reader_info(r)->tail, TRACE_TAIL_CLEAN);
    struct trace_event ev;
    uint64_t n = 0;
    *tasks = *samples = *dropped_events = 0;
    *dropped_sum = 0;
    int rc;
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0) {
        assert_int_equal(ev.node, 3);
        assert_int_equal(ev.seq, (int64_t)n);
        n++;
        if (ev.kind == TRACE_TASK_START) {
            assert_int_equal(ev.task, *tasks);
            assert_int_equal(ev.peer, 7);
            (*tasks)++;
        } else if (ev.kind == TRACE_NODE_SAMPLE) {
            assert_int_equal(ev.sample.slots, 8);
            (*samples)++;
        } else if (ev.kind == TRACE_DROPPED) {
            assert_true(ev.count > 0);
            (*dropped_events)++;
            *dropped_sum += ev.count;
        }
    }
    assert_int_equal(rc, TRACE_READER_END);
    trace_reader_destroy(r);
    return n;
}

static void put_sample(struct tracer *t)
{
    struct trace_sink sink;
    tracer_sink(t, &sink);
    struct trace_sample s;
    memset(&s, 0, sizeof s);
    s.slots = 8;
    sink.sample(sink.ctx, &s, 0);
}

static void test_every_event_in_order(void **state)
{
    (void)state;
    char path[128];
    struct tracer *t = start("all.avro", 0, path, sizeof path);
    const uint64_t N = 50000;
    for (uint64_t i = 0; i < N; i++) {
        tracer_put(t, TRACE_TASK_START, i, 7, 0, 0, 0, 0, 0);
        if (i % 1000 == 0)
            put_sample(t);
    }
    struct tracer_stats st;
    tracer_stats(t, &st);
    tracer_stop(t, 1000);
    uint64_t tasks, samples, dropped_events;
    int64_t dropped_sum;
    uint64_t n = read_back(path, &tasks, &samples, &dropped_events, &dropped_sum);
    /* A 16 MiB ring holds all 50k: nothing may be lost. */
    assert_int_equal(tasks, N);
    assert_int_equal(samples, N / 1000);
    assert_int_equal(dropped_events, 0);
    assert_int_equal(n, N + N / 1000);
}

static void test_overflow_is_written_down(void **state)
{
    (void)state;
    char path[128];
    /* 64 slots: a burst of 200k events cannot all fit while the thread encodes. */
    struct tracer *t = start("small.avro", 4096, path, sizeof path);
    const uint64_t N = 200000;
    uint64_t kept_tasks = 0;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t before = tracer_dropped(t);
        tracer_put(t, TRACE_TASK_START, kept_tasks, 7, 0, 0, 0, 0, 0);
        if (tracer_dropped(t) == before)
            kept_tasks++;
        if (i % 10000 == 0)
            put_sample(t);
    }
    uint64_t lost = tracer_dropped(t);
    tracer_stop(t, 1000);
    uint64_t tasks, samples, dropped_events;
    int64_t dropped_sum;
    uint64_t n = read_back(path, &tasks, &samples, &dropped_events, &dropped_sum);
    assert_int_equal(tasks, kept_tasks);
    assert_int_equal(tasks + lost, N);
    assert_int_equal((uint64_t)dropped_sum, lost);
    assert_int_equal(n, tasks + samples + dropped_events);
    print_message("overflow: %llu of %llu events lost, in %llu DROPPED events\n",
                  (unsigned long long)lost, (unsigned long long)N,
                  (unsigned long long)dropped_events);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_event_in_order),
        cmocka_unit_test(test_overflow_is_written_down),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
