/*
 * workload_fixture — what the workload reader's tests share: parsing a string as
 * "w.jsonl", expecting a refusal with its exact (or leading) cause, and looking into a
 * task written back.  Included by test_workload.c and test_workload_objects.c only.
 */
#ifndef JACKDAW_TEST_WORKLOAD_FIXTURE_H
#define JACKDAW_TEST_WORKLOAD_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/workload.h"

static inline int parse(struct workload *wl, const char *text, char **cause)
{
    return workload_parse(wl, text, strlen(text), "w.jsonl", cause);
}

/* Parses `text`, expects a refusal and exactly this cause. */
static inline void expect_error(const char *text, const char *want)
{
    struct workload wl;
    char *cause = NULL;
    int rc = parse(&wl, text, &cause);
    if (rc == 0 || !cause || strcmp(cause, want) != 0)
        print_error("input:\n%.300s\nwant: %.300s\ngot:  %.300s (rc %d)\n", text, want,
                    cause ? cause : "(none)", rc);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(cause);
    assert_string_equal(cause, want);
    /* A refused parse leaves nothing to free. */
    assert_null(wl.tasks);
    assert_int_equal(wl.count, 0);
    assert_null(wl.topo);
    free(cause);
}

/* Same, checking only the start of the cause (jansson's own wording follows). */
static inline void expect_error_prefix(const char *text, const char *prefix)
{
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, text, &cause), -EINVAL);
    assert_non_null(cause);
    if (strncmp(cause, prefix, strlen(prefix)) != 0)
        print_error("want prefix: %s\ngot: %.300s\n", prefix, cause);
    assert_true(strncmp(cause, prefix, strlen(prefix)) == 0);
    free(cause);
}

/* Whether task i written back (workload_write_task) holds `needle`. */
static inline bool written_has(const struct workload *wl, uint32_t i, const char *needle)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(workload_write_task(out, &wl->tasks[i], wl), 0);
    fclose(out);
    bool has = strstr(text, needle) != NULL;
    free(text);
    return has;
}

#endif
