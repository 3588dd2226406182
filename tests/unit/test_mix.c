/*
 * test_mix — the C1..C5 node mixes of paper 001 Table 2 (core/model/mix.c): the paper's
 * counts at each preset's own size, proportional prefixes at any other size, speeds in
 * (0, 1], and the speed list read back by the launcher's parser.
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

#include "core/client/launcher.h"
#include "core/model/mix.h"

static const uint32_t core_kinds[6] = {1, 2, 4, 8, 16, 24};
/* Paper 001 Table 2, column C1: nodes of each core count per 8 nodes. */
static const uint32_t per8[6] = {2, 1, 1, 1, 1, 2};

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(mix_parse("none"), MIX_NONE);
    assert_int_equal(mix_parse("C1"), MIX_C1);
    assert_int_equal(mix_parse("c5"), MIX_C5);
    assert_int_equal(mix_parse("C6"), -EINVAL);
    assert_int_equal(mix_parse(""), -EINVAL);
    assert_int_equal(mix_parse(NULL), -EINVAL);
    assert_string_equal(mix_name(MIX_C3), "C3");
    assert_null(mix_name(MIX_PRESET_COUNT));
    assert_int_equal(mix_preset_nodes(MIX_NONE), 0);
    assert_int_equal(mix_preset_nodes(MIX_C1), 8);
    assert_int_equal(mix_preset_nodes(MIX_C2), 16);
    assert_int_equal(mix_preset_nodes(MIX_C3), 32);
    assert_int_equal(mix_preset_nodes(MIX_C4), 64);
    assert_int_equal(mix_preset_nodes(MIX_C5), 128);
}

/* At its own size each preset is exactly the paper's column: C(k) = 2^(k-1) x C1. */
static void test_table2_exact(void **state)
{
    (void)state;
    for (int p = MIX_C1; p <= MIX_C5; p++) {
        uint32_t n = mix_preset_nodes((enum mix_preset)p);
        struct mix_node *nodes = calloc(n, sizeof *nodes);
        assert_int_equal(mix_fill((enum mix_preset)p, n, nodes), 0);
        for (int k = 0; k < 6; k++) {
            uint32_t want = per8[k] << (p - MIX_C1), got = 0;
            for (uint32_t i = 0; i < n; i++)
                got += nodes[i].cores == core_kinds[k];
            assert_int_equal(got, want);
            assert_int_equal(mix_count((enum mix_preset)p, n, core_kinds[k]), want);
        }
        free(nodes);
    }
}

/* Any size: speed = cores / 24 in (0, 1], slots = cores, and every count within one
 * node of its proportional share. */
static void test_any_size_proportional(void **state)
{
    (void)state;
    for (uint32_t n = 1; n <= 300; n++) {
        uint32_t total = 0;
        for (int k = 0; k < 6; k++) {
            uint32_t got = mix_count(MIX_C2, n, core_kinds[k]);
            double share = (double)n * per8[k] / 8.0;
            assert_true(fabs((double)got - share) < 1.0 + 1e-9);
            total += got;
        }
        assert_int_equal(total, n);
        for (uint32_t i = 0; i < n; i++) {
            struct mix_node m;
            assert_int_equal(mix_node(MIX_C4, i, &m), 0);
            assert_true(m.speed > 0 && m.speed <= 1.0);
            assert_true(fabs(m.speed - m.cores / 24.0) < 1e-12);
            assert_int_equal(m.slots, m.cores);
        }
    }
    /* The preset does not change the mix of a given size, only its natural size. */
    struct mix_node a, b;
    for (uint32_t i = 0; i < 40; i++) {
        mix_node(MIX_C1, i, &a);
        mix_node(MIX_C5, i, &b);
        assert_int_equal(a.cores, b.cores);
    }
    /* Small clusters take the extremes first: 2 nodes are one of 24 and one of 1 core. */
    assert_int_equal(mix_count(MIX_C1, 2, 24), 1);
    assert_int_equal(mix_count(MIX_C1, 2, 1), 1);
    assert_int_equal(mix_count(MIX_C1, 8, 3), 0);
}

static void test_none(void **state)
{
    (void)state;
    struct mix_node m;
    assert_int_equal(mix_node(MIX_NONE, 5, &m), 0);
    assert_int_equal(m.cores, 24);
    assert_true(m.speed == 1.0);
    assert_int_equal(mix_count(MIX_NONE, 7, 24), 7);
    assert_int_equal(mix_node(MIX_PRESET_COUNT, 0, &m), -EINVAL);
    assert_int_equal(mix_fill((enum mix_preset)-1, 3, &m), -EINVAL);
    char buf[16];
    assert_int_equal(mix_speed_list(MIX_NONE, 10, buf, sizeof buf), 1);
    assert_string_equal(buf, "1");
}

/* The list is what the launcher reads: cycled over the nodes it gives each node its mix
 * speed (to the list's 6 significant digits). */
static void test_speed_list_round_trip(void **state)
{
    (void)state;
    uint32_t sizes[] = {1, 3, 8, 13, 64, 100};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint32_t n = sizes[s];
        int need = mix_speed_list(MIX_C3, n, NULL, 0);
        assert_true(need > 0);
        char *list = malloc((size_t)need + 1);
        assert_int_equal(mix_speed_list(MIX_C3, n, list, (size_t)need + 1), need);
        assert_int_equal((int)strlen(list), need);
        double *speeds = calloc(n, sizeof *speeds);
        char *cause = NULL;
        assert_int_equal(launcher_parse_speeds(list, speeds, n, &cause), 0);
        for (uint32_t i = 0; i < n; i++) {
            struct mix_node m;
            mix_node(MIX_C3, i, &m);
            assert_true(fabs(speeds[i] - m.speed) < 1e-6);
        }
        free(speeds);
        free(list);
    }
    /* A short buffer is cut and terminated, and the needed length still comes back. */
    char small[8];
    int need = mix_speed_list(MIX_C1, 8, small, sizeof small);
    assert_true(need > (int)sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(mix_speed_list(MIX_PRESET_COUNT, 8, small, sizeof small), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_table2_exact),
        cmocka_unit_test(test_any_size_proportional),
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_speed_list_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
