/*
 * capture — stderr (where the logs go) captured between capture_begin and capture_end,
 * so that a test can say what a component logged or did not.  Header-only, for the
 * unit tests that need it (test_kvs, and kvs_net.h for the replicated store's); include
 * after cmocka.h.
 */
#ifndef JACKDAW_TEST_CAPTURE_H
#define JACKDAW_TEST_CAPTURE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int saved_stderr = -1;
static FILE *captured;

static inline void capture_begin(void)
{
    fflush(stderr);
    captured = tmpfile();
    assert_non_null(captured);
    saved_stderr = dup(STDERR_FILENO);
    assert_true(saved_stderr >= 0);
    assert_true(dup2(fileno(captured), STDERR_FILENO) >= 0);
}

/* Ends the capture; returns how many captured lines contain `needle`. */
static inline int capture_end(const char *needle)
{
    fflush(stderr);
    assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
    close(saved_stderr);
    rewind(captured);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, captured))
        n += strstr(line, needle) != NULL;
    fclose(captured);
    return n;
}

#endif
