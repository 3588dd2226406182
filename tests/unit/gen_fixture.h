/*
 * gen_fixture — what the generator tests share: writing a workload into memory with
 * gen_write, and running `jackdaw gen` as the command line would.  Included by
 * test_gen.c and test_gen_apps.c only.
 */
#ifndef JACKDAW_TEST_GEN_FIXTURE_H
#define JACKDAW_TEST_GEN_FIXTURE_H

#include <stdarg.h>
#include <stdio.h>

#include "tools/cmd/cmd.h"
#include "workloads/gen.h"

struct output {
    char *text;
    size_t len;
};

static inline void generate(const struct gen_params *p, struct output *o)
{
    FILE *out = open_memstream(&o->text, &o->len);
    assert_non_null(out);
    char *cause = NULL;
    int rc = gen_write(out, p, &cause);
    if (rc)
        print_error("gen_write: %s\n", cause);
    assert_int_equal(rc, 0);
    assert_int_equal(fclose(out), 0);
}

/* `jackdaw gen FIRST …` (NULL-terminated); the command's exit code. */
static inline int run_gen(const char *first, ...)
{
    char *argv[64] = {"gen"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return cmd_gen.main(argc, argv);
}

#endif
