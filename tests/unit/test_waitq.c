/*
 * test_waitq — unit tests for core/runtime/waitq.c: a task kept as its encoding comes
 * back as the same task, whether its bytes fit in the map's value or not; replacing,
 * re-attempting and tearing down with entries of both shapes.  Run by `make unit`
 * (and under ASan, which checks that no entry leaks).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/base/wbuf.h"
#include "core/net/proto.h"
#include "core/runtime/part.h"
#include "core/runtime/waitq.h"

static struct ntask *make(uint64_t key, uint32_t parents, double duration_s, const char *cmd)
{
    struct ntask *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->spec.key = key;
    t->spec.kind = cmd ? TASK_COMMAND : duration_s > 0 ? TASK_SLEEP : TASK_NOOP;
    t->spec.num_parents = parents;
    t->spec.duration_s = duration_s;
    if (cmd)
        t->spec.cmd = strdup(cmd);
    return t;
}

static size_t encode(const struct ntask *t, struct wbuf *b)
{
    wbuf_reset(b);
    proto_put_task(b, &t->spec);
    return b->len;
}

static void assert_same(const struct ntask *a, const struct ntask *b)
{
    assert_int_equal(a->spec.key, b->spec.key);
    assert_int_equal(a->spec.kind, b->spec.kind);
    assert_int_equal(a->spec.num_parents, b->spec.num_parents);
    assert_int_equal(a->spec.attempt, b->spec.attempt);
    assert_true(a->spec.duration_s == b->spec.duration_s);
    if (a->spec.cmd)
        assert_string_equal(a->spec.cmd, b->spec.cmd);
    else
        assert_null(b->spec.cmd);
}

/* A noop with a few parents is 4 bytes past its key (inline); a sleep, 12 (a blob); a
 * command, more.  Each comes back as it went in, and only once. */
static void test_round_trip_both_shapes(void **state)
{
    (void)state;
    struct ntask *want[] = {
        make(0x100000001ull, 1, 0, NULL),
        make(0x100000002ull, 300, 0, NULL),      /* a 2-byte count: still inline */
        make(0x100000003ull, 2, 0.25, NULL),
        make(0x100000004ull, 1, 0, "sort -u in.txt > out.txt"),
        make(0xffffffff7fffffffull, 1, 0, NULL), /* every key byte set */
    };
    size_t n = sizeof want / sizeof *want;
    struct waitq q;
    waitq_init(&q);
    struct wbuf b;
    wbuf_init(&b);
    for (size_t i = 0; i < n; i++) {
        size_t len = encode(want[i], &b);
        waitq_put_bytes(&q, b.data, len);
    }
    assert_int_equal(waitq_len(&q), n);
    for (size_t i = n; i-- > 0;) {
        assert_true(waitq_has(&q, want[i]->spec.key));
        struct ntask *got = waitq_take(&q, want[i]->spec.key);
        assert_non_null(got);
        assert_same(want[i], got);
        assert_false(waitq_has(&q, want[i]->spec.key));
        assert_null(waitq_take(&q, want[i]->spec.key));
        ntask_free(got);
        ntask_free(want[i]);
    }
    assert_int_equal(waitq_len(&q), 0);
    wbuf_fini(&b);
    waitq_fini(&q);
}

/* A hand-on's new attempt is kept (it moves the task's bytes past the inline limit:
 * the attempt is written only when it is not 0). */
static void test_attempt(void **state)
{
    (void)state;
    struct waitq q;
    waitq_init(&q);
    struct ntask *t = make(0x200000007ull, 1, 0, NULL);
    struct ntask *copy = make(0x200000007ull, 1, 0, NULL);
    waitq_put(&q, t);
    waitq_set_attempt(&q, 0x200000007ull, 3);
    waitq_set_attempt(&q, 0x2000000ffull, 3); /* not here: nothing happens */
    assert_int_equal(waitq_len(&q), 1);
    struct ntask *got = waitq_take(&q, 0x200000007ull);
    assert_non_null(got);
    copy->spec.attempt = 3;
    assert_same(copy, got);
    ntask_free(got);
    ntask_free(copy);
    waitq_fini(&q);
}

/* Putting a key again replaces its entry (of either shape) without a leak; teardown
 * frees what is left of both shapes. */
static void test_replace_and_teardown(void **state)
{
    (void)state;
    struct waitq q;
    waitq_init(&q);
    waitq_put(&q, make(0x300000001ull, 1, 0, NULL));
    waitq_put(&q, make(0x300000001ull, 1, 0, "true"));
    waitq_put(&q, make(0x300000002ull, 1, 0, "true"));
    waitq_put(&q, make(0x300000002ull, 5, 0, NULL));
    for (uint32_t i = 0; i < 1000; i++)
        waitq_put(&q, make(0x400000000ull | i, 1 + i % 3, i % 2 ? 0.5 : 0, NULL));
    assert_int_equal(waitq_len(&q), 1002);
    struct ntask *a = waitq_take(&q, 0x300000001ull);
    assert_non_null(a);
    assert_int_equal(a->spec.kind, TASK_COMMAND);
    struct ntask *b = waitq_take(&q, 0x300000002ull);
    assert_non_null(b);
    assert_int_equal(b->spec.num_parents, 5);
    assert_null(b->spec.cmd);
    ntask_free(a);
    ntask_free(b);
    waitq_fini(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_both_shapes),
        cmocka_unit_test(test_attempt),
        cmocka_unit_test(test_replace_and_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
