/*
 * test_sigcatch — unit tests for core/base/sigcatch.c: SIGINT, SIGTERM and SIGHUP set the
 * flag instead of ending the process, take clears it, and a note counts as a catch.
 * Signals go to this process only (raise).  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>

#include "core/base/sigcatch.h"

static void test_caught_signals_set_the_flag(void **state)
{
    (void)state;
    sigcatch_install(true);
    assert_int_equal(sigcatch_take(), 0);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(raise(sigs[i]), 0);
        assert_int_equal(sigcatch_pending(), sigs[i]);
        assert_int_equal(sigcatch_pending(), sigs[i]); /* reading does not clear */
        assert_int_equal(sigcatch_take(), sigs[i]);
        assert_int_equal(sigcatch_pending(), 0);
    }
}

static void test_without_restart_still_caught(void **state)
{
    (void)state;
    sigcatch_install(false);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(sigcatch_take(), SIGTERM);
}

static void test_note(void **state)
{
    (void)state;
    sigcatch_note(SIGHUP);
    assert_int_equal(sigcatch_pending(), SIGHUP);
    assert_int_equal(sigcatch_take(), SIGHUP);
    assert_int_equal(sigcatch_take(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caught_signals_set_the_flag),
        cmocka_unit_test(test_without_restart_still_caught),
        cmocka_unit_test(test_note),
    };
    return cmocka_run_group_tests_name("sigcatch", tests, NULL, NULL);
}
