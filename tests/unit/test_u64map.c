/*
 * u64map against a reference model: random puts and deletes over a small key space, so
 * that probe runs collide and wrap, and backward-shift deletion is exercised hard.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "core/base/u64map.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_random_ops_match_model(void **state)
{
    (void)state;
    enum { SPACE = 4096, OPS = 200000 };
    static uintptr_t model[SPACE];
    struct u64map m;
    u64map_init(&m);
    size_t live = 0;
    for (int op = 0; op < OPS; op++) {
        uint64_t k = next() % SPACE;
        /* Keys far apart in value but in a small set: exercises the mixer too. */
        uint64_t key = k * 0x100000001ULL;
        if (next() % 3) {
            uintptr_t v = (uintptr_t)op + 1;
            void *prev = u64map_put(&m, key, (void *)v);
            assert_int_equal((uintptr_t)prev, model[k]);
            if (!model[k])
                live++;
            model[k] = v;
        } else {
            void *prev = u64map_del(&m, key);
            assert_int_equal((uintptr_t)prev, model[k]);
            if (model[k])
                live--;
            model[k] = 0;
        }
        assert_int_equal(u64map_len(&m), live);
        if (op % 5000 == 0)
            for (uint64_t j = 0; j < SPACE; j++)
                assert_int_equal((uintptr_t)u64map_get(&m, j * 0x100000001ULL), model[j]);
    }
    size_t seen = 0;
    uint64_t key;
    void *value;
    for (size_t i = 0; (i = u64map_next(&m, i, &key, &value)) != 0;) {
        assert_int_equal((uintptr_t)value, model[key / 0x100000001ULL]);
        seen++;
    }
    assert_int_equal(seen, live);
    u64map_fini(&m);
}

static void test_empty_map(void **state)
{
    (void)state;
    struct u64map m;
    u64map_init(&m);
    assert_null(u64map_get(&m, 7));
    assert_null(u64map_del(&m, 7));
    uint64_t k;
    void *v;
    assert_int_equal(u64map_next(&m, 0, &k, &v), 0);
    u64map_fini(&m);
}

/* A map that grew big and was emptied gives its slots back, and works on; a small one
 * keeps them (no churn for maps that hover around empty). */
static void test_emptied_big_map_releases(void **state)
{
    (void)state;
    struct u64map m;
    u64map_init(&m);
    for (uint64_t k = 1; k <= 5000; k++)
        u64map_put(&m, k, (void *)(uintptr_t)k);
    assert_true(m.cap > 1024);
    for (uint64_t k = 1; k <= 5000; k++)
        assert_ptr_equal(u64map_del(&m, k), (void *)(uintptr_t)k);
    assert_int_equal(m.len, 0);
    assert_int_equal(m.cap, 0);
    assert_null(m.slots);
    assert_null(u64map_get(&m, 3));
    u64map_put(&m, 3, (void *)(uintptr_t)9);
    assert_ptr_equal(u64map_get(&m, 3), (void *)(uintptr_t)9);
    assert_ptr_equal(u64map_del(&m, 3), (void *)(uintptr_t)9);
    assert_int_equal(m.cap, 16);
    u64map_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_ops_match_model),
        cmocka_unit_test(test_empty_map),
        cmocka_unit_test(test_emptied_big_map_releases),
    };
    return cmocka_run_group_tests_name("u64map", tests, NULL, NULL);
}
