/*
 * Wire payloads and key hashing: every codec round-trips, every truncation and every
 * out-of-range enum is refused, and task keys spread evenly over shards (zero-hop
 * routing is only as good as that spread).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/task.h"
#include "core/net/proto.h"

static void test_task_roundtrip_and_truncation(void **state)
{
    (void)state;
    struct task_spec t = {.key = task_key(9, 123), .kind = TASK_COMMAND,
                          .flags = TASK_FLAG_STEALABLE, .num_parents = 3, .duration_s = 0.5,
                          .output_bytes = 1 << 20, .input_bytes = 77, .cmd = "echo hi"};
    struct wbuf b;
    wbuf_init(&b);
    proto_put_task(&b, &t);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct task_spec u;
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.key, t.key);
    assert_int_equal(task_key_job(u.key), 9);
    assert_int_equal(task_key_index(u.key), 123);
    assert_int_equal(u.kind, TASK_COMMAND);
    assert_int_equal(u.num_parents, 3);
    assert_string_equal(u.cmd, "echo hi");
    assert_int_equal(u.num_inputs, 0);
    proto_task_fini(&u);
    /* Inputs travel with the task (a thief must know where to fetch them). */
    struct task_input in[2] = {{.object = 11, .bytes = 5, .node = 1}, {.object = 12, .bytes = 7, .node = 3}};
    t.inputs = in;
    t.num_inputs = 2;
    struct wbuf c;
    wbuf_init(&c);
    proto_put_task(&c, &t);
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.num_inputs, 2);
    assert_int_equal(u.inputs[1].object, 12);
    assert_int_equal(u.inputs[1].node, 3);
    proto_task_fini(&u);
    for (size_t k = 0; k < c.len; k++) {
        rbuf_init(&r, c.data, k);
        assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    }
    wbuf_fini(&c);
    t.inputs = NULL;
    t.num_inputs = 0;
    for (size_t n = 0; n < b.len; n++) {
        rbuf_init(&r, b.data, n);
        assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    }
    /* A kind past the enum and a negative duration are refused. */
    b.data[8] = TASK_KIND_COUNT;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    wbuf_reset(&b);
    t.kind = TASK_SLEEP;
    t.duration_s = -1;
    proto_put_task(&b, &t);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    wbuf_reset(&b);
    t.duration_s = NAN;
    proto_put_task(&b, &t);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    wbuf_fini(&b);
}

/* A handed-on task's attempt travels with every move (a thief that ran attempt 0 of a
 * task at attempt 1 would have its completion refused and the task lost); attempt 0
 * adds no byte, and a flagged attempt of 0 is refused. */
static void test_task_attempt_travels(void **state)
{
    (void)state;
    struct task_spec t = {.key = task_key(2, 5), .kind = TASK_SLEEP,
                          .flags = TASK_FLAG_STEALABLE, .duration_s = 0.1};
    struct wbuf b, c;
    wbuf_init(&b);
    wbuf_init(&c);
    proto_put_task(&b, &t);
    t.attempt = 3;
    proto_put_task(&c, &t);
    assert_int_equal(c.len, b.len + 1); /* a one-byte varint */
    struct rbuf r;
    struct task_spec u;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.attempt, 0);
    assert_int_equal(u.flags, TASK_FLAG_STEALABLE);
    proto_task_fini(&u);
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.attempt, 3);
    assert_int_equal(u.flags, TASK_FLAG_STEALABLE);
    assert_int_equal(r.left, 0);
    proto_task_fini(&u);
    for (size_t k = 0; k < c.len; k++) {
        rbuf_init(&r, c.data, k);
        assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    }
    /* The flag with an attempt of 0 is no encoder's output (the attempt is the last byte
     * of a task without a command or inputs). */
    c.data[c.len - 1] = 0;
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    wbuf_fini(&b);
    wbuf_fini(&c);
}

/* A spec carries only the fields that are not zero, behind a mask byte, and has one
 * spelling: a mask bit for a zero field, or an unknown bit, is refused. */
static void test_task_compact_one_spelling(void **state)
{
    (void)state;
    struct task_spec t = {.key = task_key(2, 6), .kind = TASK_NOOP};
    struct wbuf b;
    wbuf_init(&b);
    proto_put_task(&b, &t);
    assert_int_equal(b.len, 8 + 1 + 1 + 1); /* key, kind, flags, mask */
    struct rbuf r;
    struct task_spec u;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(r.left, 0);
    proto_task_fini(&u);
    /* The output size said to be there, spelled as a zero. */
    wbuf_put_u8(&b, 0);
    b.data[10] = 1u << 3;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    b.data[10] = 0x80; /* no such field */
    rbuf_init(&r, b.data, b.len - 1);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    wbuf_fini(&b);
}

/* A time limit travels with the task; one out of bounds is refused like a bad duration. */
static void test_task_time_limit(void **state)
{
    (void)state;
    struct task_spec t = {.key = task_key(2, 7), .kind = TASK_SLEEP, .duration_s = 5,
                          .timeout_s = 1.5};
    struct wbuf b;
    wbuf_init(&b);
    proto_put_task(&b, &t);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct task_spec u;
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_true(u.timeout_s == 1.5);
    proto_task_fini(&u);
    const double bad[] = {-1, NAN, INFINITY, TASK_TIMEOUT_MAX_S * 2};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wbuf_reset(&b);
        t.timeout_s = bad[i];
        proto_put_task(&b, &t);
        rbuf_init(&r, b.data, b.len);
        assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    }
    wbuf_fini(&b);
}

/* Retries and the failed runs so far travel with the task (a retry another node steals
 * keeps its count); none costs no byte; more failures than retries, more retries than
 * TASK_RETRIES_MAX, or the mask bit with retries 0 are refused. */
static void test_task_retries_travel(void **state)
{
    (void)state;
    struct task_spec t = {.key = task_key(2, 8), .kind = TASK_COMMAND, .cmd = "false"};
    struct wbuf b, c;
    wbuf_init(&b);
    wbuf_init(&c);
    proto_put_task(&b, &t);
    t.retries = 3;
    t.failures = 2;
    proto_put_task(&c, &t);
    assert_int_equal(c.len, b.len + 2); /* two one-byte varints */
    struct rbuf r;
    struct task_spec u;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.retries, 0);
    assert_int_equal(u.failures, 0);
    proto_task_fini(&u);
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.retries, 3);
    assert_int_equal(u.failures, 2);
    assert_string_equal(u.cmd, "false");
    assert_int_equal(r.left, 0);
    proto_task_fini(&u);
    const uint32_t bad[][2] = {{3, 4}, {TASK_RETRIES_MAX + 1, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t.retries = bad[i][0];
        t.failures = bad[i][1];
        wbuf_reset(&c);
        proto_put_task(&c, &t);
        rbuf_init(&r, c.data, c.len);
        assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    }
    /* The bit said, the retries spelled as 0: key, kind, flags, then the mask. */
    t.retries = 1;
    t.failures = 0;
    wbuf_reset(&c);
    proto_put_task(&c, &t);
    assert_int_equal(c.data[10], 1u << 6);
    c.data[11] = 0;
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    wbuf_fini(&b);
    wbuf_fini(&c);
}

/* Cores above 1 travel behind a second mask byte; 1 costs nothing.  The second byte
 * said with no bit set, cores spelled 1 (or 0) under its bit, and more than
 * TASK_CORES_MAX are refused. */
static void test_task_cores_travel(void **state)
{
    (void)state;
    struct task_spec t = {.key = task_key(2, 9), .kind = TASK_SLEEP, .duration_s = 1};
    struct wbuf b, c;
    wbuf_init(&b);
    wbuf_init(&c);
    proto_put_task(&b, &t);
    t.cores = 1;
    proto_put_task(&c, &t);
    assert_int_equal(c.len, b.len);
    t.cores = 300;
    wbuf_reset(&c);
    proto_put_task(&c, &t);
    assert_int_equal(c.len, b.len + 3); /* the second mask byte and a two-byte varint */
    struct rbuf r;
    struct task_spec u;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.cores, 1);
    proto_task_fini(&u);
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.cores, 300);
    assert_int_equal(r.left, 0);
    proto_task_fini(&u);
    /* key (8), kind, flags, mask, then the second mask. */
    assert_int_equal(c.data[10] & 0x80, 0x80);
    assert_int_equal(c.data[11], 1);
    c.data[11] = 0;
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    c.data[11] = 2; /* a bit this version does not know */
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    const uint32_t bad[] = {TASK_CORES_MAX + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t.cores = bad[i];
        wbuf_reset(&c);
        proto_put_task(&c, &t);
        rbuf_init(&r, c.data, c.len);
        assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    }
    /* Cores 1 spelled under the bit: the mask of a 2-core task, its varint set to 1. */
    t.cores = 2;
    wbuf_reset(&c);
    proto_put_task(&c, &t);
    assert_int_equal(c.data[c.len - 1], 2);
    c.data[c.len - 1] = 1;
    rbuf_init(&r, c.data, c.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    wbuf_fini(&b);
    wbuf_fini(&c);
}

/* A command's input names travel after its inputs; refused: more names than inputs, a
 * name that leaves the directory, names on a task that is not a command. */
static void test_task_names_travel(void **state)
{
    (void)state;
    struct task_input in[2] = {{.object = 7, .bytes = 3, .node = 1}, {.object = 8, .bytes = 1}};
    char *names[2] = {"sky.fits", "d/x"};
    struct task_spec t = {.key = task_key(3, 1), .kind = TASK_COMMAND, .cmd = "cat sky.fits",
                          .inputs = in, .num_inputs = 2, .names = names, .num_names = 2};
    struct wbuf b;
    wbuf_init(&b);
    proto_put_task(&b, &t);
    struct rbuf r;
    struct task_spec u;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.num_names, 2);
    assert_string_equal(u.names[0], "sky.fits");
    assert_string_equal(u.names[1], "d/x");
    assert_int_equal(r.left, 0);
    proto_task_fini(&u);
    assert_null(u.names);
    /* One name for the first input only is fine. */
    t.num_names = 1;
    wbuf_reset(&b);
    proto_put_task(&b, &t);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.num_names, 1);
    proto_task_fini(&u);
    /* A name that climbs out (written by hand: the encoder sends what it is given). */
    char *up[1] = {"../x"};
    t.names = up;
    wbuf_reset(&b);
    proto_put_task(&b, &t);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    /* More names than inputs. */
    t.names = names;
    t.num_names = 2;
    t.num_inputs = 1;
    wbuf_reset(&b);
    proto_put_task(&b, &t);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    /* A sleep sends none even when given some. */
    struct task_spec sl = {.key = task_key(3, 2), .kind = TASK_SLEEP, .duration_s = 1,
                           .inputs = in, .num_inputs = 2, .names = names, .num_names = 2};
    wbuf_reset(&b);
    proto_put_task(&b, &sl);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), 0);
    assert_int_equal(u.num_names, 0);
    proto_task_fini(&u);
    wbuf_fini(&b);
}

/* Round trip of t into u; the decoder's result. */
static int reencode(const struct task_spec *t, struct wbuf *b, struct task_spec *u)
{
    wbuf_reset(b);
    proto_put_task(b, t);
    struct rbuf r;
    rbuf_init(&r, b->data, b->len);
    int rc = proto_get_task(&r, u);
    if (rc == 0)
        assert_int_equal(r.left, 0);
    return rc;
}

/*
 * A command's declared outputs (object and file) and its producer parents and produced
 * inputs travel; refused: an output whose object is not a workload object's index, an
 * output file that leaves the directory, outputs of a task that is not a command (never
 * sent), a produced input past the inputs, pairs out of order.
 */
static void test_task_outputs_travel(void **state)
{
    (void)state;
    struct task_input in[3] = {
        {.object = task_object_key(3, 0x80000000u | 4), .node = UINT32_MAX, .producer = 1},
        {.object = task_object_key(3, 0x80000000u | 5), .bytes = 9, .node = 2},
        {.object = task_key(3, 0), .bytes = 40, .node = 1, .producer = TASK_INPUT_WEIGHT}};
    struct task_output out[2] = {{.object = task_object_key(3, 0x80000000u | 6), .file = "a.tbl"},
                                 {.object = task_object_key(3, 0x80000000u | 7), .file = "r/b"}};
    uint32_t producers[2] = {0, 9};
    struct task_spec t = {.key = task_key(3, 2), .kind = TASK_COMMAND, .cmd = "x",
                          .inputs = in, .num_inputs = 3, .outputs = out, .num_outputs = 2,
                          .producers = producers, .num_producers = 2};
    struct wbuf b;
    wbuf_init(&b);
    struct task_spec u;
    assert_int_equal(reencode(&t, &b, &u), 0);
    assert_int_equal(u.num_outputs, 2);
    assert_int_equal(u.outputs[0].object, out[0].object);
    assert_string_equal(u.outputs[1].file, "r/b");
    assert_int_equal(u.num_producers, 2);
    assert_int_equal(u.producers[1], 9);
    assert_int_equal(u.inputs[0].producer, 1);
    assert_int_equal(u.inputs[1].producer, 0);
    assert_int_equal(u.inputs[2].producer, TASK_INPUT_WEIGHT);
    assert_int_equal(u.inputs[2].bytes, 40);
    assert_int_equal(task_input_source(&u.inputs[0]), task_key(3, 0));
    assert_int_equal(task_input_source(&u.inputs[1]), 0);
    assert_int_equal(task_input_source(&u.inputs[2]), task_key(3, 0));
    proto_task_fini(&u);
    assert_null(u.outputs);
    assert_null(u.producers);
    /* Produced inputs alone, no producers listed (a stolen task's parents are in). */
    t.num_producers = 0;
    t.num_outputs = 0;
    assert_int_equal(reencode(&t, &b, &u), 0);
    assert_int_equal(u.num_producers, 0);
    assert_int_equal(u.inputs[0].producer, 1);
    proto_task_fini(&u);
    /* An output whose object is a task's key. */
    t.num_outputs = 1;
    out[0].object = task_key(3, 6);
    assert_int_equal(reencode(&t, &b, &u), -EBADMSG);
    out[0].object = task_object_key(3, 0x80000000u | 6);
    /* A file that climbs out. */
    out[0].file = "../a";
    assert_int_equal(reencode(&t, &b, &u), -EBADMSG);
    out[0].file = "a.tbl";
    /* A sleep sends no outputs even when given some. */
    struct task_spec sl = t;
    sl.kind = TASK_SLEEP;
    sl.cmd = NULL;
    sl.duration_s = 1;
    assert_int_equal(reencode(&sl, &b, &u), 0);
    assert_int_equal(u.num_outputs, 0);
    assert_int_equal(u.inputs[0].producer, 1);
    proto_task_fini(&u);
    /* Pairs by hand: an input index past the inputs, then two out of order. */
    t.num_outputs = 0;
    t.num_inputs = 1;
    wbuf_reset(&b);
    proto_put_task(&b, &t);
    /* The spec ends with the pairs: count 1, (0, 1).  Make the index 1 (past 1 input). */
    assert_int_equal(b.data[b.len - 2], 0);
    b.data[b.len - 2] = 1;
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    t.num_inputs = 2;
    in[1].producer = 3;
    wbuf_reset(&b);
    proto_put_task(&b, &t);
    /* count 2, (0, 1), (1, 3): make the second pair's index 0. */
    assert_int_equal(b.data[b.len - 2], 1);
    b.data[b.len - 2] = 0;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task(&r, &u), -EBADMSG);
    wbuf_fini(&b);
}

static void test_task_end_roundtrip(void **state)
{
    (void)state;
    struct proto_task_end e = {.key = 5, .status = TASK_FAILED, .node = 2, .exit_code = 3,
                               .term_signal = 0, .t_ready = 1, .t_start = 2, .t_end = 3,
                               .detail = "boom\n"};
    struct wbuf b;
    wbuf_init(&b);
    proto_put_task_end(&b, &e);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct proto_task_end f;
    assert_int_equal(proto_get_task_end(&r, &f), 0);
    assert_int_equal(f.exit_code, 3);
    assert_string_equal(f.detail, "boom\n");
    assert_false(f.timed_out);
    free(f.detail);
    /* A timeout is a kind of failure, and only that. */
    e.timed_out = true;
    wbuf_reset(&b);
    proto_put_task_end(&b, &e);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), 0);
    assert_true(f.timed_out);
    free(f.detail);
    b.data[8] = TASK_DONE;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), -EBADMSG);
    b.data[8] = TASK_FAILED;
    /* The timed-out byte, before the failures' varint and the usage byte (0: none). */
    b.data[b.len - 3] = 2;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), -EBADMSG);
    b.data[b.len - 3] = 1;
    rbuf_init(&r, b.data, b.len - 1);
    assert_int_equal(proto_get_task_end(&r, &f), -EBADMSG);
    b.data[b.len - 1] = 2; /* usage is there or not: no third spelling */
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), -EBADMSG);
    b.data[b.len - 1] = 0;
    /* A command's usage travels whole; a count past the signed range is refused. */
    e.usage = (struct task_usage){.user_ns = 1500000000, .sys_ns = 7, .max_rss = 1u << 30,
                                  .read_bytes = 12345, .write_bytes = 0, .measured = true};
    wbuf_reset(&b);
    proto_put_task_end(&b, &e);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), 0);
    assert_true(f.usage.measured);
    assert_int_equal(f.usage.user_ns, 1500000000);
    assert_int_equal(f.usage.sys_ns, 7);
    assert_int_equal(f.usage.max_rss, 1u << 30);
    assert_int_equal(f.usage.read_bytes, 12345);
    assert_int_equal(f.usage.write_bytes, 0);
    free(f.detail);
    e.usage.write_bytes = (uint64_t)INT64_MAX + 1;
    wbuf_reset(&b);
    proto_put_task_end(&b, &e);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), -EBADMSG);
    e.usage = (struct task_usage){0};
    /* Failed runs before the end (retries used) travel; more than any task may have
     * are refused. */
    e.failures = 2;
    wbuf_reset(&b);
    proto_put_task_end(&b, &e);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), 0);
    assert_int_equal(f.failures, 2);
    free(f.detail);
    e.failures = TASK_RETRIES_MAX + 1;
    wbuf_reset(&b);
    proto_put_task_end(&b, &e);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), -EBADMSG);
    /* A report must carry a final status. */
    b.data[8] = TASK_RUNNING;
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_task_end(&r, &f), -EBADMSG);
    wbuf_fini(&b);
}

static void test_stats_refuses_huge_job_count(void **state)
{
    (void)state;
    struct proto_job_count jobs[2] = {{1, 10, 10, 0, 0}, {2, 10, 5, 1, 4}};
    struct proto_stats s = {.node = 1, .slots = 8, .speed = 0.5, .njobs = 2, .jobs = jobs};
    struct wbuf b;
    wbuf_init(&b);
    proto_put_stats(&b, &s);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct proto_stats t;
    assert_int_equal(proto_get_stats(&r, &t), 0);
    assert_int_equal(t.njobs, 2);
    assert_int_equal(t.jobs[1].cancelled, 4);
    assert_true(t.speed == 0.5);
    proto_stats_fini(&t);
    /* njobs sits right before the job entries, which the failure fields follow (two
     * counters, the epoch and no deaths: 24 bytes). */
    wbuf_patch_u32(&b, b.len - 24 - 2 * 20 - 4, 0xffffffffu);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_stats(&r, &t), -EBADMSG);
    wbuf_fini(&b);
}

/* The failure facts travel; a dead list the payload cannot hold, or longer than the
 * deaths the epoch counts, is refused with nothing to free. */
static void test_stats_deaths(void **state)
{
    (void)state;
    struct proto_dead dead[2] = {{.node = 3, .by = 3, .at_ns = 1700000000123456789},
                                 {.node = 6, .by = 1, .at_ns = -1}};
    struct proto_stats s = {.node = 1, .slots = 2, .speed = 1, .tasks_resubmitted = 41,
                            .objects_recomputed = 7, .epoch = 2, .ndead = 2, .dead = dead};
    struct wbuf b;
    wbuf_init(&b);
    proto_put_stats(&b, &s);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct proto_stats t;
    assert_int_equal(proto_get_stats(&r, &t), 0);
    assert_int_equal(r.left, 0);
    assert_int_equal(t.tasks_resubmitted, 41);
    assert_int_equal(t.objects_recomputed, 7);
    assert_int_equal(t.epoch, 2);
    assert_int_equal(t.ndead, 2);
    assert_int_equal(t.dead[0].node, 3);
    assert_int_equal(t.dead[0].by, 3);
    assert_true(t.dead[0].at_ns == 1700000000123456789);
    assert_int_equal(t.dead[1].node, 6);
    assert_true(t.dead[1].at_ns == -1);
    proto_stats_fini(&t);
    assert_null(t.dead);
    /* Every truncation is refused. */
    for (size_t len = 0; len < b.len; len++) {
        rbuf_init(&r, b.data, len);
        assert_int_equal(proto_get_stats(&r, &t), -EBADMSG);
        assert_null(t.dead);
        assert_null(t.jobs);
    }
    /* More deaths than the epoch counts: ndead sits 2 x 16 bytes from the end. */
    wbuf_patch_u32(&b, b.len - 2 * 16 - 4, 3);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_stats(&r, &t), -EBADMSG);
    wbuf_patch_u32(&b, b.len - 2 * 16 - 8, 0xffffffffu); /* epoch */
    wbuf_patch_u32(&b, b.len - 2 * 16 - 4, 0x10000000u);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_stats(&r, &t), -EBADMSG);
    wbuf_fini(&b);
}

/* JOB_ENDED lists only ends, and only of the job it names. */
static void test_job_ended(void **state)
{
    (void)state;
    struct proto_task_end ends[3] = {
        {.key = task_key(5, 0), .status = TASK_DONE, .node = 2, .t_ready = 1, .t_start = 2,
         .t_end = 3},
        {.key = task_key(5, 9), .status = TASK_FAILED, .node = 0, .exit_code = -1},
        {.key = task_key(5, 4), .status = TASK_CANCELLED, .node = 1, .exit_code = -1}};
    struct proto_job_ended m = {.counts = {5, 10, 1, 1, 1}, .last = 1, .count = 3,
                                .ends = ends};
    struct wbuf b;
    wbuf_init(&b);
    proto_put_job_ended(&b, &m);
    assert_int_equal(b.len, 25 + 3 * PROTO_JOB_ENDED_BYTES);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct proto_job_ended t;
    assert_int_equal(proto_get_job_ended(&r, &t), 0);
    assert_int_equal(t.counts.job, 5);
    assert_int_equal(t.counts.tasks, 10);
    assert_int_equal(t.last, 1);
    assert_int_equal(t.count, 3);
    assert_int_equal(t.ends[0].node, 2);
    assert_int_equal(t.ends[0].t_end, 3);
    assert_int_equal(t.ends[1].status, TASK_FAILED);
    assert_int_equal(t.ends[1].exit_code, -1);
    assert_int_equal(task_key_index(t.ends[2].key), 4);
    free(t.ends);
    for (size_t len = 0; len < b.len; len++) {
        rbuf_init(&r, b.data, len);
        assert_int_equal(proto_get_job_ended(&r, &t), -EBADMSG);
        assert_null(t.ends);
    }
    /* A task of another job, a status that is no end, a last flag beyond 1. */
    wbuf_reset(&b);
    ends[1].key = task_key(6, 9);
    proto_put_job_ended(&b, &m);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_job_ended(&r, &t), -EBADMSG);
    assert_null(t.ends);
    wbuf_reset(&b);
    ends[1].key = task_key(5, 9);
    ends[1].status = TASK_RUNNING;
    proto_put_job_ended(&b, &m);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_job_ended(&r, &t), -EBADMSG);
    wbuf_reset(&b);
    ends[1].status = TASK_FAILED;
    m.last = 2;
    proto_put_job_ended(&b, &m);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_job_ended(&r, &t), -EBADMSG);
    /* A count the payload cannot hold is refused before allocating. */
    wbuf_reset(&b);
    m.last = 1;
    proto_put_job_ended(&b, &m);
    wbuf_patch_u32(&b, 21, 0x7fffffffu);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(proto_get_job_ended(&r, &t), -EBADMSG);
    wbuf_fini(&b);
}

static void test_key_owner_spread(void **state)
{
    (void)state;
    /* 80,000 consecutive indices of one job over 8 shards: each within 3% of 10,000. */
    uint32_t counts[8] = {0};
    for (uint32_t i = 0; i < 80000; i++)
        counts[task_key_owner(task_key(42, i), 8)]++;
    for (int s = 0; s < 8; s++) {
        assert_true(counts[s] > 9700);
        assert_true(counts[s] < 10300);
    }
    /* Deterministic, and in range for odd membership sizes. */
    for (uint32_t n = 1; n < 50; n++) {
        uint64_t k = task_key(7, n * 31);
        assert_int_equal(task_key_owner(k, n), task_key_owner(k, n));
        assert_true(task_key_owner(k, n) < n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_roundtrip_and_truncation),
        cmocka_unit_test(test_task_attempt_travels),
        cmocka_unit_test(test_task_retries_travel),
        cmocka_unit_test(test_task_compact_one_spelling),
        cmocka_unit_test(test_task_time_limit),
        cmocka_unit_test(test_task_cores_travel),
        cmocka_unit_test(test_task_names_travel),
        cmocka_unit_test(test_task_outputs_travel),
        cmocka_unit_test(test_task_end_roundtrip),
        cmocka_unit_test(test_stats_refuses_huge_job_count),
        cmocka_unit_test(test_stats_deaths),
        cmocka_unit_test(test_job_ended),
        cmocka_unit_test(test_key_owner_spread),
    };
    return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
