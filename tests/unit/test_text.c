/*
 * test_text — core/base/text.c's edit distance, behind the command line's "did you mean":
 * the four kinds of edit cost one each (an adjacent swap too, which plain Levenshtein
 * counts as two), it is symmetric, empty strings and identical ones are the trivial
 * cases, and strings past TEXT_EDIT_MAX are refused rather than tabled.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/base/text.h"

static void test_edit_kinds(void **state)
{
    (void)state;
    const struct {
        const char *a, *b;
        size_t d;
    } cases[] = {
        {"submit", "submit", 0}, {"sumbit", "submit", 1},  /* swap */
        {"submt", "submit", 1},  {"submitt", "submit", 1}, /* deletion, insertion */
        {"sobmit", "submit", 1}, {"", "run", 3},           /* substitution, empty */
        {"", "", 0},             {"lunch", "launch", 1},
        {"ls", "logs", 2},       {"xyzzy", "status", 6},
        {"ab", "ba", 1},         {"abc", "ca", 3},        /* a swap is not edited again */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(text_edit_distance(cases[i].a, cases[i].b), cases[i].d);
        assert_int_equal(text_edit_distance(cases[i].b, cases[i].a), cases[i].d);
    }
}

static void test_edit_bounds(void **state)
{
    (void)state;
    char longest[TEXT_EDIT_MAX + 2];
    memset(longest, 'a', sizeof longest);
    longest[TEXT_EDIT_MAX] = '\0';
    assert_int_equal(text_edit_distance(longest, ""), TEXT_EDIT_MAX);
    assert_int_equal(text_edit_distance(longest, longest), 0);
    longest[TEXT_EDIT_MAX] = 'a';
    longest[TEXT_EDIT_MAX + 1] = '\0';
    assert_true(text_edit_distance(longest, "run") == SIZE_MAX);
    assert_true(text_edit_distance("run", longest) == SIZE_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edit_kinds),
        cmocka_unit_test(test_edit_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
