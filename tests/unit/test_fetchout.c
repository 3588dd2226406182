/*
 * test_fetchout — where `jackdaw get` and --outputs put an object: DIR/ID for an id that
 * is a relative path staying in DIR (subdirectories kept), the id with its slashes made
 * underscores otherwise, so that no id writes outside DIR ("..", "/etc/x", "a/../../b");
 * a trailing slash of DIR is not doubled.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/client/fetchout.h"

static void test_paths(void **state)
{
    (void)state;
    const struct {
        const char *dir, *id, *want;
    } cases[] = {
        {"out", "t7", "out/t7"},
        {"out/", "t7", "out/t7"},
        {"out//", "a/b.txt", "out/a/b.txt"},
        {"/", "x", "/x"},
        {"out", "..", "out/_.."},
        {"out", ".", "out/_."},
        {"out", "/etc/passwd", "out/_etc_passwd"},
        {"out", "a/../../b", "out/a_.._.._b"},
        {"out", "output", "out/output"}, /* a task's file name, not a daemon's */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = fetchout_path(cases[i].dir, cases[i].id);
        if (strcmp(got, cases[i].want) != 0)
            print_error("%s + %s: got %s, want %s\n", cases[i].dir, cases[i].id, got,
                        cases[i].want);
        assert_string_equal(got, cases[i].want);
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
