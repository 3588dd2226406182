/*
 * test_preset — unit tests for the policy space's names: the presets of
 * core/policy/preset.c and the part parsers of core/policy/steal.c (what --policy,
 * --starvation, --victims, --amount and --info accept, and which parts fit together).
 * Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "core/policy/preset.h"

static void defaults(struct steal_params *s, struct placement_params *p)
{
    steal_params_default(s);
    placement_params_default(p);
}

static void test_presets(void **state)
{
    (void)state;
    struct steal_params s;
    struct placement_params p;

    defaults(&s, &p);
    assert_int_equal(preset_apply("daws", &s, &p), 0);
    assert_int_equal(s.mode, STEAL_ADAPTIVE);
    assert_int_equal(s.starvation, STEAL_STARVE_READY);
    assert_int_equal(s.victims, STEAL_VICTIMS_SQRT);
    assert_int_equal(s.amount, STEAL_AMOUNT_HALF);
    assert_int_equal(s.info, STEAL_INFO_LOAD_QUERY);
    assert_false(s.wait_guard);
    assert_int_equal(p.policy, PLACEMENT_FLDS);
    assert_false(steal_needs_ring(&s));
    assert_false(steal_keeps_vector(&s, 8));
    /* Victims drawn from the vector need it kept, though nothing else reads it. */
    s.info = STEAL_INFO_RING;
    assert_true(steal_keeps_vector(&s, 8));
    assert_false(steal_keeps_vector(&s, 1));

    defaults(&s, &p);
    assert_int_equal(preset_apply("a2ws", &s, &p), 0);
    assert_int_equal(s.starvation, STEAL_STARVE_PREEMPTIVE);
    assert_int_equal(s.victims, STEAL_VICTIMS_A2WS);
    assert_int_equal(s.amount, STEAL_AMOUNT_A2WS);
    assert_int_equal(s.info, STEAL_INFO_RING);
    assert_int_equal(p.policy, PLACEMENT_WS);
    assert_true(steal_needs_ring(&s));
    assert_true(steal_keeps_vector(&s, 2));
    s.mode = STEAL_NONE;
    assert_false(steal_keeps_vector(&s, 2));

    defaults(&s, &p);
    assert_int_equal(preset_apply("parsec", &s, &p), 0);
    assert_int_equal(s.starvation, STEAL_STARVE_SUCCESSORS);
    assert_int_equal(s.victims, STEAL_VICTIMS_RANDOM);
    assert_int_equal(s.victims_k, 1);
    assert_int_equal(s.amount, STEAL_AMOUNT_HALF);
    assert_true(s.wait_guard);

    defaults(&s, &p);
    assert_int_equal(preset_apply("random1", &s, &p), 0);
    assert_int_equal(s.mode, STEAL_RANDOM1);
    defaults(&s, &p);
    assert_int_equal(preset_apply("none", &s, &p), 0);
    assert_int_equal(s.mode, STEAL_NONE);

    defaults(&s, &p);
    assert_int_equal(preset_apply("daws+a2ws", &s, &p), 0);
    assert_int_equal(p.policy, PLACEMENT_FLDS);
    assert_int_equal(s.victims, STEAL_VICTIMS_A2WS);
    assert_int_equal(s.amount, STEAL_AMOUNT_A2WS);

    /* The baselines of paper 001 §4: the leader, and the token that feeds its victims. */
    defaults(&s, &p);
    p.policy = PLACEMENT_FLDS;
    assert_int_equal(preset_apply("lw", &s, &p), 0);
    assert_int_equal(s.mode, STEAL_ADAPTIVE);
    assert_int_equal(s.starvation, STEAL_STARVE_READY);
    assert_int_equal(s.victims, STEAL_VICTIMS_LEADER);
    assert_int_equal(s.amount, STEAL_AMOUNT_SINGLE);
    assert_int_equal(s.info, STEAL_INFO_LOAD_QUERY);
    assert_false(s.wait_guard);
    assert_int_equal(p.policy, PLACEMENT_WS);
    assert_false(steal_needs_ring(&s));
    assert_int_equal(steal_check_parts(&s, NULL), 0);

    defaults(&s, &p);
    assert_int_equal(preset_apply("ctws", &s, &p), 0);
    assert_int_equal(s.starvation, STEAL_STARVE_READY);
    assert_int_equal(s.victims, STEAL_VICTIMS_TOKEN);
    assert_int_equal(s.amount, STEAL_AMOUNT_HALF);
    assert_int_equal(s.info, STEAL_INFO_TOKEN);
    assert_int_equal(p.policy, PLACEMENT_WS);
    assert_false(steal_needs_ring(&s));
    assert_int_equal(steal_check_parts(&s, NULL), 0);

    /* Every preset is a coherent point of the space. */
    const char *names[] = {"daws", "a2ws", "parsec", "random1", "none", "daws+a2ws", "lw", "ctws"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        defaults(&s, &p);
        assert_int_equal(preset_apply(names[i], &s, &p), 0);
        assert_int_equal(steal_check_parts(&s, NULL), 0);
    }

    defaults(&s, &p);
    assert_int_equal(preset_apply("lifo", &s, &p), -EINVAL);
    assert_int_equal(preset_apply("DAWS", &s, &p), -EINVAL);
    assert_int_equal(preset_apply(NULL, &s, &p), -EINVAL);
    assert_int_equal(s.mode, STEAL_ADAPTIVE); /* untouched by a refused name */
    assert_int_equal(p.policy, PLACEMENT_FLDS); /* the default */
}

static void test_parts(void **state)
{
    (void)state;
    struct steal_params s;
    steal_params_default(&s);

    assert_int_equal(steal_parse_starvation("ready+successors", &s), 0);
    assert_int_equal(s.starvation, STEAL_STARVE_SUCCESSORS);
    assert_int_equal(steal_parse_starvation("preemptive", &s), 0);
    assert_int_equal(steal_parse_starvation("eager", &s), -EINVAL);
    assert_int_equal(s.starvation, STEAL_STARVE_PREEMPTIVE);

    assert_int_equal(steal_parse_victims("random:3", &s), 0);
    assert_int_equal(s.victims, STEAL_VICTIMS_RANDOM);
    assert_int_equal(s.victims_k, 3);
    assert_int_equal(steal_parse_victims("random:0", &s), -EINVAL);
    assert_int_equal(steal_parse_victims("random:", &s), -EINVAL);
    assert_int_equal(steal_parse_victims("random:2x", &s), -EINVAL);
    assert_int_equal(steal_parse_victims("random:-1", &s), -EINVAL);
    assert_int_equal(steal_parse_victims("random", &s), -EINVAL);
    assert_int_equal(s.victims_k, 3);
    assert_int_equal(steal_parse_victims("a2ws", &s), 0);
    assert_int_equal(s.victims, STEAL_VICTIMS_A2WS);
    assert_int_equal(steal_parse_victims("token", &s), 0);
    assert_int_equal(s.victims, STEAL_VICTIMS_TOKEN);
    assert_int_equal(steal_parse_victims("leader", &s), 0);
    assert_int_equal(s.victims, STEAL_VICTIMS_LEADER);
    assert_int_equal(steal_parse_victims("leader:2", &s), -EINVAL);
    assert_int_equal(steal_parse_victims("sqrt", &s), 0);
    assert_int_equal(s.victims, STEAL_VICTIMS_SQRT);

    assert_int_equal(steal_parse_amount("chunk:20", &s), 0);
    assert_int_equal(s.amount, STEAL_AMOUNT_CHUNK);
    assert_int_equal(s.chunk, 20);
    assert_int_equal(steal_parse_amount("chunk:0", &s), -EINVAL);
    assert_int_equal(steal_parse_amount("single", &s), 0);
    assert_int_equal(s.amount, STEAL_AMOUNT_SINGLE);
    assert_int_equal(steal_parse_amount("a2ws", &s), 0);
    assert_int_equal(steal_parse_amount("half", &s), 0);
    assert_int_equal(s.amount, STEAL_AMOUNT_HALF);
    assert_int_equal(steal_parse_amount("most", &s), -EINVAL);

    assert_int_equal(steal_parse_info("ring", &s), 0);
    assert_int_equal(s.info, STEAL_INFO_RING);
    assert_int_equal(steal_parse_info("token", &s), 0);
    assert_int_equal(s.info, STEAL_INFO_TOKEN);
    assert_int_equal(steal_parse_info("load-query", &s), 0);
    assert_int_equal(steal_parse_info("leader", &s), -EINVAL);
    assert_int_equal(s.info, STEAL_INFO_LOAD_QUERY);

    assert_string_equal(steal_starvation_name(STEAL_STARVE_SUCCESSORS), "ready+successors");
    assert_string_equal(steal_victims_name(STEAL_VICTIMS_A2WS), "a2ws");
    assert_string_equal(steal_amount_name(STEAL_AMOUNT_CHUNK), "chunk");
    assert_string_equal(steal_info_name(STEAL_INFO_RING), "ring");
    assert_string_equal(steal_info_name(STEAL_INFO_TOKEN), "token");
    assert_string_equal(steal_victims_name(STEAL_VICTIMS_TOKEN), "token");
    assert_string_equal(steal_victims_name(STEAL_VICTIMS_LEADER), "leader");
    assert_string_equal(steal_info_name((enum steal_info)9), "unknown");
}

static void test_parts_fit(void **state)
{
    (void)state;
    struct steal_params s;
    const char *why = NULL;

    /* The token and its victims feed only each other. */
    steal_params_default(&s);
    s.victims = STEAL_VICTIMS_TOKEN;
    assert_int_equal(steal_check_parts(&s, &why), -EINVAL);
    assert_non_null(strstr(why, "--info token"));
    s.info = STEAL_INFO_TOKEN;
    assert_int_equal(steal_check_parts(&s, &why), 0);
    s.victims = STEAL_VICTIMS_SQRT;
    why = NULL;
    assert_int_equal(steal_check_parts(&s, &why), -EINVAL);
    assert_non_null(why);

    /* Neither baseline keeps the A2WS vector that preemptive starts and amounts read. */
    steal_params_default(&s);
    s.victims = STEAL_VICTIMS_TOKEN;
    s.info = STEAL_INFO_TOKEN;
    s.amount = STEAL_AMOUNT_A2WS;
    assert_int_equal(steal_check_parts(&s, &why), -EINVAL);
    s.amount = STEAL_AMOUNT_CHUNK;
    assert_int_equal(steal_check_parts(&s, &why), 0);
    steal_params_default(&s);
    s.victims = STEAL_VICTIMS_LEADER;
    s.starvation = STEAL_STARVE_PREEMPTIVE;
    assert_int_equal(steal_check_parts(&s, &why), -EINVAL);
    assert_non_null(strstr(why, "leader"));
    s.starvation = STEAL_STARVE_SUCCESSORS;
    assert_int_equal(steal_check_parts(&s, &why), 0);

    /* The other parts mix freely, as before. */
    steal_params_default(&s);
    s.victims = STEAL_VICTIMS_A2WS;
    s.info = STEAL_INFO_RING;
    assert_int_equal(steal_check_parts(&s, NULL), 0);
    assert_int_equal(steal_check_parts(NULL, &why), -EINVAL);
}

static void test_random_k_victims(void **state)
{
    (void)state;
    /* random:K asks K victims and never widens, unlike sqrt. */
    struct steal_params p;
    struct steal_state st;
    uint32_t out[16];
    uint64_t rng = 11;
    steal_params_default(&p);
    p.victims = STEAL_VICTIMS_RANDOM;
    p.victims_k = 3;
    steal_state_init(&st, &p, 100);
    assert_int_equal(steal_pick_victims(&p, &st, 0, 100, &rng, out, 16), 3);
    for (int i = 0; i < 12; i++)
        steal_on_result(&p, &st, false, 100);
    assert_int_equal(steal_pick_victims(&p, &st, 0, 100, &rng, out, 16), 3);
    /* Clamped to the others. */
    p.victims_k = 9;
    assert_int_equal(steal_pick_victims(&p, &st, 0, 4, &rng, out, 16), 3);
    /* A2WS victims come from the vector, the baselines' from the token or the leader:
     * never from a draw. */
    p.victims = STEAL_VICTIMS_A2WS;
    assert_int_equal(steal_pick_victims(&p, &st, 0, 100, &rng, out, 16), 0);
    p.victims = STEAL_VICTIMS_TOKEN;
    assert_int_equal(steal_pick_victims(&p, &st, 0, 100, &rng, out, 16), 0);
    p.victims = STEAL_VICTIMS_LEADER;
    steal_state_init(&st, &p, 100);
    assert_int_equal(st.neighbours, 0);
    assert_int_equal(steal_pick_victims(&p, &st, 3, 100, &rng, out, 16), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_parts_fit),
        cmocka_unit_test(test_random_k_victims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
