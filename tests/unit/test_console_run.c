/*
 * test_console_run — tui/console.c run twice in one process: the second headless replay
 * must walk the same key script to the same last frame as the first.  The console keeps
 * nothing from one run to the next (script positions, a pending signal, the pids a fatal
 * signal would stop).  Uses the checked-in trace tests/traces/v1-checksums.avro, so run
 * from the top of the tree (`make unit` does).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/console.h"

#define TRACE "tests/traces/v1-checksums.avro"
/* Enough cycles for the whole view and replay scripts (the frame printed is the last). */
#define CYCLES 120

/* One headless replay; returns what it printed (owned) and its exit code. */
static char *run_once(int *code)
{
    FILE *out = tmpfile();
    assert_non_null(out);
    fflush(stdout);
    int saved = dup(1);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(out), 1) >= 0);
    struct console_options o = {.replay_path = TRACE, .headless = CYCLES, .refresh_ms = 20};
    char *cause = NULL;
    *code = console_run(&o, &cause);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    if (cause)
        fprintf(stderr, "console: %s\n", cause);
    free(cause);
    long size = ftell(out);
    assert_true(size > 0);
    char *text = calloc(1, (size_t)size + 1);
    assert_non_null(text);
    rewind(out);
    assert_int_equal(fread(text, 1, (size_t)size, out), (size_t)size);
    fclose(out);
    return text;
}

static void test_second_run_walks_the_script_again(void **state)
{
    (void)state;
    if (access(TRACE, R_OK) != 0)
        fail_msg("cannot read %s: run from the top of the tree", TRACE);
    int code1, code2;
    char *first = run_once(&code1);
    char *second = run_once(&code2);
    assert_int_equal(code1, 0);
    assert_int_equal(code2, 0);
    /* The replay script leaves it paused at x4 after its speed keys: a run that skipped
     * the script would still be playing at x1. */
    assert_non_null(strstr(first, "PAUSED x4"));
    assert_string_equal(second, first);
    free(first);
    free(second);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_run_walks_the_script_again),
    };
    return cmocka_run_group_tests_name("console_run", tests, NULL, NULL);
}
