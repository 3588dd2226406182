/*
 * tmpdir — the private directory of a unit-test binary that writes files (traces,
 * spools): made by the group setup, removed with everything in it by the group
 * teardown.  Included by the tests only; one directory per binary.
 */
#ifndef JACKDAW_TEST_TMPDIR_H
#define JACKDAW_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[64];

/* mkdtemp of /tmp/NAME.XXXXXX; 0 or -1. */
static inline int tmpdir_make(const char *name)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/%s.XXXXXX", name);
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* A cmocka group teardown. */
static inline int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static inline void path_in_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

#endif
