/*
 * test_launcher_mix — the heterogeneity presets of `jackdaw run/launch --speeds C1..C5`
 * (core/client/launcher.c): a mix name gives every node the speed of its place in the mix of
 * paper 001 Table 2 (core/model/mix.h), --slots takes a number or "cores", and the slot
 * rule: --slots S for every node, "cores" for the mix's cores, 1 per node for a mix
 * without --slots (one shot at a time, as in the paper), the machine's cores otherwise.
 * The launch itself, with the cluster file read back, is tests/integration/t_99_workloads.sh.
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

static void test_speeds_from_mix(void **state)
{
    (void)state;
    double speeds[16];
    char *cause = NULL;
    /* C1 on its own 8 nodes: two 24-core, two 1-core, one each of 2, 4, 8, 16. */
    assert_int_equal(launcher_parse_speeds("C1", speeds, 8, &cause), 0);
    static const uint32_t cores[8] = {24, 1, 8, 2, 16, 4, 24, 1};
    for (uint32_t i = 0; i < 8; i++)
        assert_true(fabs(speeds[i] - cores[i] / 24.0) < 1e-12);
    /* Any case, any preset, any node count: node i of the mix. */
    assert_int_equal(launcher_parse_speeds("c3", speeds, 16, &cause), 0);
    for (uint32_t i = 0; i < 16; i++) {
        struct mix_node m;
        mix_node(MIX_C3, i, &m);
        assert_true(speeds[i] == m.speed);
    }
    assert_int_equal(launcher_parse_speeds("none", speeds, 3, &cause), 0);
    for (uint32_t i = 0; i < 3; i++)
        assert_true(speeds[i] == 1.0);
    /* Lists still work, and a bad entry still names itself. */
    assert_int_equal(launcher_parse_speeds("1,0.5", speeds, 3, &cause), 0);
    assert_true(speeds[2] == 1.0 && speeds[1] == 0.5);
    assert_int_equal(launcher_parse_speeds("C6", speeds, 3, &cause), -EINVAL);
    assert_non_null(strstr(cause, "C1..C5"));
    free(cause);
}

static void test_parse_slots(void **state)
{
    (void)state;
    uint32_t slots;
    bool cores;
    char *cause = NULL;
    assert_int_equal(launcher_parse_slots(NULL, NULL, &slots, &cores, &cause), 0);
    assert_true(slots == 0 && !cores);
    assert_int_equal(launcher_parse_slots("4", "C1", &slots, &cores, &cause), 0);
    assert_true(slots == 4 && !cores);
    assert_int_equal(launcher_parse_slots("cores", "C2", &slots, &cores, &cause), 0);
    assert_true(slots == 0 && cores);
    assert_int_equal(launcher_parse_slots("cores", "none", &slots, &cores, &cause), 0);
    assert_true(cores);
    static const char *const bad[] = {"0", "-1", "x", "4x", "", "10000001"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        assert_int_equal(launcher_parse_slots(bad[k], NULL, &slots, &cores, &cause), -EINVAL);
        assert_non_null(strstr(cause, "--slots"));
        free(cause);
        cause = NULL;
    }
    /* "cores" means nothing without a mix. */
    assert_int_equal(launcher_parse_slots("cores", NULL, &slots, &cores, &cause), -EINVAL);
    assert_non_null(strstr(cause, "--speeds"));
    free(cause);
    cause = NULL;
    assert_int_equal(launcher_parse_slots("cores", "1,0.5", &slots, &cores, &cause), -EINVAL);
    free(cause);
}

static void test_node_slots(void **state)
{
    (void)state;
    /* No mix: the given slots, else the machine's cores. */
    struct launch_options o = {.nodes = 8};
    assert_int_equal(launcher_node_slots(&o, 0, 6), 6);
    o.speeds = "1,0.5";
    assert_int_equal(launcher_node_slots(&o, 1, 6), 6);
    o.slots = 3;
    assert_int_equal(launcher_node_slots(&o, 1, 6), 3);
    /* A mix without --slots: one shot at a time per node, the paper's process model. */
    o = (struct launch_options){.nodes = 8, .speeds = "C1"};
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(launcher_node_slots(&o, i, 6), 1);
    /* --slots S wins over the mix. */
    o.slots = 2;
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(launcher_node_slots(&o, i, 6), 2);
    /* --slots cores: the mix's cores, node by node. */
    o = (struct launch_options){.nodes = 8, .speeds = "C1", .slots_cores = true};
    static const uint32_t cores[8] = {24, 1, 8, 2, 16, 4, 24, 1};
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(launcher_node_slots(&o, i, 6), cores[i]);
    /* Slot capacity x speed keeps the paper's ratios only with equal slots: 24-core
     * nodes do 24 times the work of 1-core nodes on one slot each. */
    o.slots_cores = false;
    double speeds[8];
    char *cause = NULL;
    assert_int_equal(launcher_parse_speeds(o.speeds, speeds, 8, &cause), 0);
    assert_true(fabs(launcher_node_slots(&o, 0, 6) * speeds[0] /
                         (launcher_node_slots(&o, 1, 6) * speeds[1]) -
                     24) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speeds_from_mix),
        cmocka_unit_test(test_parse_slots),
        cmocka_unit_test(test_node_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
