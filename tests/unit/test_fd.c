/*
 * test_fd — failure detection's pure decisions (core/policy/fd.c): which neighbours a
 * node watches on the ring, when a heartbeat is due, when silence is a suspicion.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/policy/fd.h"

static void watches_its_two_ring_neighbours(void **state)
{
    (void)state;
    uint32_t w[2];
    assert_int_equal(fd_watched(0, 1, w), 0);
    assert_int_equal(fd_watched(0, 2, w), 1);
    assert_int_equal(w[0], 1);
    assert_int_equal(fd_watched(0, 5, w), 2);
    assert_int_equal(w[0], 4);
    assert_int_equal(w[1], 1);
    assert_int_equal(fd_watched(4, 5, w), 2);
    assert_int_equal(w[0], 3);
    assert_int_equal(w[1], 0);
    assert_int_equal(fd_watched(5, 5, w), 0);
    /* Every node is watched by exactly its two neighbours: the ring closes. */
    for (uint32_t nodes = 3; nodes < 40; nodes++) {
        uint32_t watchers[40] = {0};
        for (uint32_t self = 0; self < nodes; self++) {
            uint32_t k = fd_watched(self, nodes, w);
            for (uint32_t i = 0; i < k; i++)
                watchers[w[i]]++;
        }
        for (uint32_t i = 0; i < nodes; i++)
            assert_int_equal(watchers[i], 2);
    }
}

static void default_and_interval(void **state)
{
    (void)state;
    struct fd_params p;
    fd_params_init(&p, 0);
    assert_int_equal(p.timeout_ms, FD_TIMEOUT_DEFAULT_MS);
    /* Several heartbeats fit in a timeout, or one lost heartbeat would be a suspicion. */
    assert_true(p.interval_ms * 3 <= p.timeout_ms);
    fd_params_init(&p, 200);
    assert_int_equal(p.timeout_ms, 200);
    assert_true(p.interval_ms > 0 && p.interval_ms * 3 <= 200);
    fd_params_init(&p, 1);
    assert_true(p.interval_ms >= 1);
}

static void beat_due_after_interval_of_silence_sent(void **state)
{
    (void)state;
    struct fd_params p;
    fd_params_init(&p, 2000);
    assert_false(fd_beat_due(&p, 1000, 1000, false));
    assert_false(fd_beat_due(&p, 1000 + p.interval_ms - 1, 1000, false));
    assert_true(fd_beat_due(&p, 1000 + p.interval_ms, 1000, false));
    /* A suspected peer is called once per timeout, not every interval. */
    assert_false(fd_beat_due(&p, 1000 + p.interval_ms, 1000, true));
    assert_true(fd_beat_due(&p, 1000 + p.timeout_ms, 1000, true));
}

static void suspect_only_past_the_timeout(void **state)
{
    (void)state;
    struct fd_params p;
    fd_params_init(&p, 3000);
    assert_false(fd_suspect(&p, 5000, 5000));
    assert_false(fd_suspect(&p, 8000, 5000));
    assert_true(fd_suspect(&p, 8001, 5000));
}

static void paused_after_half_a_timeout(void **state)
{
    (void)state;
    struct fd_params p;
    fd_params_init(&p, 3000);
    assert_false(fd_paused(&p, 1000 + p.interval_ms, 1000));
    assert_false(fd_paused(&p, 2500, 1000));
    assert_true(fd_paused(&p, 2501, 1000));
}

static void ring_skips_the_dead(void **state)
{
    (void)state;
    bool dead[6] = {false, false, true, false, true, false};
    assert_int_equal(fd_next_live(1, 6, dead, 1), 3);
    assert_int_equal(fd_next_live(3, 6, dead, 1), 5);
    assert_int_equal(fd_next_live(5, 6, dead, 1), 0);
    assert_int_equal(fd_next_live(0, 6, dead, -1), 5);
    assert_int_equal(fd_next_live(3, 6, dead, -1), 1);
    uint32_t w[2];
    assert_int_equal(fd_watched_live(3, 6, dead, w), 2);
    assert_int_equal(w[0], 1);
    assert_int_equal(w[1], 5);
    assert_int_equal(fd_lowest_live(6, dead), 0);
    dead[0] = dead[1] = true;
    assert_int_equal(fd_lowest_live(6, dead), 3);
    /* Two left alive: one neighbour; one left: none. */
    dead[5] = true;
    assert_int_equal(fd_watched_live(3, 6, dead, w), 0);
    dead[5] = false;
    assert_int_equal(fd_watched_live(3, 6, dead, w), 1);
    assert_int_equal(w[0], 5);
    bool all[3] = {true, true, true};
    assert_int_equal(fd_lowest_live(3, all), 3);
}

static void the_suspects_other_neighbour_confirms(void **state)
{
    (void)state;
    bool dead[6] = {false, false, false, false, false, false};
    /* Node 2's neighbours are 1 and 3: each confirms the other's suspicion. */
    assert_int_equal(fd_confirmer(1, 2, 6, dead), 3);
    assert_int_equal(fd_confirmer(3, 2, 6, dead), 1);
    /* With 3 dead, 2's right neighbour is 4. */
    dead[3] = true;
    assert_int_equal(fd_confirmer(1, 2, 6, dead), 4);
    /* Alone with the suspect: the watcher's own suspicion decides. */
    bool two[6] = {false, true, false, true, true, true};
    assert_int_equal(fd_confirmer(0, 2, 6, two), 0);
    assert_int_equal(fd_confirmer(2, 0, 6, two), 2);
}

/* Silence past the timeout confirms anything; refusals confirm only a refused
 * suspicion, and only with a refusal here; else the confirmer tries itself. */
static void refusals_confirm_a_refused_suspicion(void **state)
{
    (void)state;
    struct fd_params p;
    fd_params_init(&p, 1000);
    assert_int_equal(fd_confirm(&p, 5000, 3000, false, false), FD_DEAD_SILENT);
    assert_int_equal(fd_confirm(&p, 5000, 3000, true, true), FD_DEAD_SILENT);
    assert_int_equal(fd_confirm(&p, 5000, 4900, false, false), FD_KEEP);
    assert_int_equal(fd_confirm(&p, 5000, 4900, false, true), FD_KEEP);
    assert_int_equal(fd_confirm(&p, 5000, 4900, true, false), FD_PROBE);
    assert_int_equal(fd_confirm(&p, 5000, 4900, true, true), FD_DEAD_REFUSED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(watches_its_two_ring_neighbours),
        cmocka_unit_test(default_and_interval),
        cmocka_unit_test(beat_due_after_interval_of_silence_sent),
        cmocka_unit_test(suspect_only_past_the_timeout),
        cmocka_unit_test(paused_after_half_a_timeout),
        cmocka_unit_test(ring_skips_the_dead),
        cmocka_unit_test(the_suspects_other_neighbour_confirms),
        cmocka_unit_test(refusals_confirm_a_refused_suspicion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
