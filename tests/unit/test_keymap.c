/*
 * keymap against a reference model, as test_u64map: random puts and deletes over a
 * small key space, so that probe runs collide and wrap and backward-shift deletion
 * (which reads each moved record's key) is exercised hard; a record replaced by
 * another of its key; a big map emptied gives its slots back.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "core/base/keymap.h"

struct rec {
    uint64_t key;
    int version;
};

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
    /* Two records per key, so that a put can replace one with the other. */
    static struct rec pool[SPACE][2];
    static struct rec *model[SPACE];
    for (uint64_t k = 0; k < SPACE; k++)
        for (int v = 0; v < 2; v++)
            pool[k][v] = (struct rec){.key = k * 0x100000001ULL, .version = v};
    struct keymap m;
    keymap_init(&m);
    size_t live = 0;
    for (int op = 0; op < OPS; op++) {
        uint64_t k = next() % SPACE;
        if (next() % 3) {
            struct rec *r = &pool[k][next() % 2];
            void *prev = keymap_put(&m, r);
            assert_ptr_equal(prev, model[k]);
            if (!model[k])
                live++;
            model[k] = r;
        } else {
            void *prev = keymap_del(&m, k * 0x100000001ULL);
            assert_ptr_equal(prev, model[k]);
            if (model[k])
                live--;
            model[k] = NULL;
        }
        assert_int_equal(keymap_len(&m), live);
        if (op % 5000 == 0)
            for (uint64_t j = 0; j < SPACE; j++)
                assert_ptr_equal(keymap_get(&m, j * 0x100000001ULL), model[j]);
    }
    size_t seen = 0;
    void *v;
    for (size_t i = 0; (i = keymap_next(&m, i, &v)) != 0;) {
        const struct rec *r = v;
        assert_ptr_equal(r, model[r->key / 0x100000001ULL]);
        assert_int_equal(keymap_key(r), r->key);
        seen++;
    }
    assert_int_equal(seen, live);
    keymap_fini(&m);
}

static void test_empty_and_emptied(void **state)
{
    (void)state;
    struct keymap m;
    keymap_init(&m);
    assert_null(keymap_get(&m, 7));
    assert_null(keymap_del(&m, 7));
    void *v;
    assert_int_equal(keymap_next(&m, 0, &v), 0);
    enum { N = 5000 };
    static struct rec recs[N];
    for (uint64_t k = 0; k < N; k++) {
        recs[k].key = k + 1;
        assert_null(keymap_put(&m, &recs[k]));
    }
    assert_true(m.cap > 1024);
    for (uint64_t k = 0; k < N; k++)
        assert_ptr_equal(keymap_del(&m, k + 1), &recs[k]);
    assert_int_equal(m.len, 0);
    assert_int_equal(m.cap, 0);
    assert_null(keymap_get(&m, 3));
    assert_null(keymap_put(&m, &recs[2]));
    assert_ptr_equal(keymap_get(&m, 3), &recs[2]);
    keymap_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_ops_match_model),
        cmocka_unit_test(test_empty_and_emptied),
    };
    return cmocka_run_group_tests_name("keymap", tests, NULL, NULL);
}
