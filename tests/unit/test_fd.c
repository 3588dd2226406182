/*
 * test_fd — failure detection's pure decisions (core/policy/fd.c): which neighbours a
 * node watches on the ring, when a heartbeat is due, when silence is a suspicion.
 */
#include <stdarg.h>
#include <stddef.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(watches_its_two_ring_neighbours),
        cmocka_unit_test(default_and_interval),
        cmocka_unit_test(beat_due_after_interval_of_silence_sent),
        cmocka_unit_test(suspect_only_past_the_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
