/*
 * test_csv — unit tests for tools/report/csv.c, the one CSV writer of the report tools,
 * and for the chart data plot.c writes through it: a cell is quoted only when it must
 * be, quotes inside are doubled, and a missing number is an empty cell.  Run by
 * `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/report/csv.h"
#include "tools/report/plot.h"

/* What csv_cell writes for s; the caller frees it. */
static char *capture_cell(const char *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    csv_cell(f, s);
    fclose(f);
    return text;
}

static void test_cell_quotes_only_when_needed(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"plain", "plain"},
        {"", ""},
        {"a,b", "\"a,b\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"two\nlines", "\"two\nlines\""},
        {"cr\rhere", "\"cr\rhere\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = capture_cell(cases[i][0]);
        assert_string_equal(got, cases[i][1]);
        free(got);
    }
    char *got = capture_cell(NULL);
    assert_string_equal(got, "");
    free(got);
}

static void test_num_empty_when_missing(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    csv_num(f, 0.25);
    putc(',', f);
    csv_num(f, NAN);
    putc(',', f);
    csv_num(f, INFINITY);
    putc(',', f);
    csv_num(f, 1.0 / 3.0);
    fclose(f);
    assert_string_equal(text, "0.25,,,0.3333333333");
    free(text);
}

/* The data behind a chart quotes its labels and headings as the renderers do. */
static void test_plot_quotes_like_the_renderers(void **state)
{
    (void)state;
    const char *cols[] = {"tasks, done", "say \"x\""};
    struct plot *p = plot_create("t", NULL, PLOT_BARS, NULL, NULL, "node,id", 2, cols);
    double row[] = {1, NAN};
    plot_add_row(p, "a \"b\", c", 0, row);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(plot_write_csv(p, f), 0);
    fclose(f);
    assert_string_equal(text, "\"node,id\",\"tasks, done\",\"say \"\"x\"\"\"\n"
                              "\"a \"\"b\"\", c\",1,\n");
    free(text);
    plot_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cell_quotes_only_when_needed),
        cmocka_unit_test(test_num_empty_when_missing),
        cmocka_unit_test(test_plot_quotes_like_the_renderers),
    };
    return cmocka_run_group_tests_name("csv", tests, NULL, NULL);
}
