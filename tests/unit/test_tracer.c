/*
 * The node side of tracing (trace/tracer/tracer) without a collector: every event the
 * scheduler hands over reaches the spool file in sequence order with no gap, events with
 * a body (samples, policy names) interleave correctly with the ring's, and when the ring
 * overflows the loss is written down as DROPPED events whose counts add up to exactly
 * what was lost.  Then with a collector played by the test that receives blocks without
 * acknowledging them and goes away: the blocks are in the spool file at once, while the
 * node runs (a node killed then keeps them).
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

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <uv.h>

#include "core/base/clock.h"
#include "core/net/conn.h"
#include "core/net/proto.h"
#include "trace/format/reader.h"
#include "trace/format/wire.h"
#include "trace/tracer/tracer.h"

#define WAIT_MS 10000


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

/* ---- a collector played by the test ---- */

struct fake_collector {
    struct conn *node;       /* the tracer's connection; NULL once closed */
    bool hello;
    uint64_t events;         /* in the blocks received */
};

static void fc_ready(struct conn *c)
{
    struct fake_collector *fc = conn_hub_data(conn_hub_of(c));
    fc->node = c;
}

static int fc_message(struct conn *c, uint16_t type, struct rbuf *r, const char **reason)
{
    struct fake_collector *fc = conn_hub_data(conn_hub_of(c));
    (void)reason;
    if (type == MSG_TRACE_HELLO) {
        struct wire_hello h;
        assert_int_equal(wire_get_hello(r, &h), 0);
        fc->hello = true;
        size_t at;
        struct wbuf *b = conn_msg_begin(c, MSG_TRACE_RESUME, &at);
        wire_put_next_seq(b, 0);
        conn_msg_end(c, at);
    } else if (type == MSG_TRACE_BLOCK) {
        struct wire_block blk;
        assert_int_equal(wire_get_block(r, &blk), 0);
        fc->events += blk.count; /* and never acknowledged */
    }
    return 0;
}

static void fc_close(struct conn *c, const char *reason)
{
    struct fake_collector *fc = conn_hub_data(conn_hub_of(c));
    (void)reason;
    if (fc->node == c)
        fc->node = NULL;
}

static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 16), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static void on_tick(uv_timer_t *h)
{
    (void)h; /* wakes the loop */
}

#define RUN_UNTIL(loop, cond)                                                           \
    do {                                                                                \
        int64_t deadline_ = clock_mono_ns() + (int64_t)WAIT_MS * 1000000;               \
        while (!(cond)) {                                                               \
            if (clock_mono_ns() > deadline_)                                            \
                fail_msg("timed out waiting for %s", #cond);                            \
            uv_run((loop), UV_RUN_ONCE);                                                \
        }                                                                               \
    } while (0)

/* Events in the spool file so far; 0 while it has no block. */
static uint64_t spooled_events(const char *path)
{
    struct trace_reader *r = NULL;
    char *cause = NULL;
    if (trace_reader_open(&r, path, &cause) != 0) {
        free(cause);
        return 0;
    }
    struct trace_event ev;
    uint64_t n = 0;
    while (trace_reader_next(r, &ev, &cause) == 0) {
        assert_int_equal(ev.seq, (int64_t)n);
        n++;
    }
    free(cause);
    trace_reader_destroy(r);
    return n;
}

static void test_unacknowledged_spooled_when_collector_goes(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    uv_timer_t tick;
    uv_timer_init(&loop, &tick);
    uv_timer_start(&tick, on_tick, 10, 10);
    struct auth_key key;
    assert_int_equal(auth_init(), 0);
    auth_nonce(key.bytes);
    struct fake_collector fc = {0};
    static const struct conn_callbacks cb = {fc_ready, fc_message, fc_close};
    struct conn_hub *hub = conn_hub_create(&loop, &key, CONN_ROLE_CLIENT, 0, &cb, &fc);
    int port;
    char *cause = NULL;
    assert_int_equal(conn_hub_listen_fd(hub, listen_loopback(&port), &cause), 0);

    char path[128];
    path_in_dir(path, sizeof path, "away.avro");
    struct tracer_config cfg = {
        .node = 3, .host = "127.0.0.1", .port = port, .key = key, .start_ns = 1,
        .spool_path = path, .header_json = "{\"format\":1,\"spool\":{\"node\":3}}",
        .flush_ms = 5,
    };
    struct tracer *t = NULL;
    assert_int_equal(tracer_start(&t, &cfg, &cause), 0);
    RUN_UNTIL(&loop, fc.hello);
    const uint64_t N = 3000;
    for (uint64_t i = 0; i < N; i++)
        tracer_put(t, TRACE_TASK_START, i, 7, 0, 0, 0, 0, 0);
    RUN_UNTIL(&loop, fc.events == N);
    /* Connected, resumed, every block sent: nothing needed the spool yet. */
    assert_int_equal(spooled_events(path), 0);

    /* The collector goes away for good (the listener too: no reconnecting). */
    conn_hub_destroy(hub);
    for (int i = 0; i < 100 && fc.node; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    int64_t deadline = clock_mono_ns() + (int64_t)WAIT_MS * 1000000;
    uint64_t got;
    while ((got = spooled_events(path)) < N && clock_mono_ns() < deadline)
        usleep(10000);
    assert_int_equal(got, N);

    tracer_stop(t, 1);
    assert_int_equal(spooled_events(path), N);
    uv_timer_stop(&tick);
    uv_close((uv_handle_t *)&tick, NULL);
    for (int i = 0; i < 100 && uv_loop_alive(&loop); i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_event_in_order),
        cmocka_unit_test(test_overflow_is_written_down),
        cmocka_unit_test(test_unacknowledged_spooled_when_collector_goes),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
