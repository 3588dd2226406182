/*
 * test_gen — the workload generators (workloads/gen.c) and `jackdaw gen`
 * (tools/cmd_gen.c): each shape's size and structure, reading its output back with
 * workload_parse (which also proves it acyclic with every parent present), seeded
 * determinism, the drawn values' bounds, and the refusals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "core/model/workload.h"
#include "tools/cmd.h"
#include "workloads/gen.h"

struct output {
    char *text;
    size_t len;
};

static void generate(const struct gen_params *p, struct output *o)
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

/* Generates, parses back and checks what holds for every shape. */
static void generate_and_parse(const struct gen_params *p, struct workload *wl)
{
    struct output o;
    generate(p, &o);
    char *cause = NULL;
    int rc = workload_parse(wl, o.text, o.len, "gen", &cause);
    if (rc)
        print_error("workload_parse: %s\n", cause);
    assert_int_equal(rc, 0);
    free(o.text);
    assert_int_equal(wl->count, p->tasks);
    char id[16];
    for (uint32_t i = 0; i < wl->count; i++) {
        const struct workload_task *t = &wl->tasks[i];
        snprintf(id, sizeof id, "t%u", i);
        assert_string_equal(t->id, id);
        assert_int_equal(t->kind, p->kind);
        assert_true(t->stealable);
        /* File order is topological. */
        for (uint32_t k = 0; k < t->num_parents; k++)
            assert_true(t->parents[k] < i);
        if (t->kind == TASK_SLEEP) {
            assert_true(t->duration_s >= p->duration.lo);
            assert_true(t->duration_s <= p->duration.hi);
        }
        assert_true((double)t->output_bytes >= p->output_bytes.lo);
        assert_true((double)t->output_bytes <= p->output_bytes.hi);
        if (t->kind == TASK_COMMAND)
            assert_string_equal(t->cmd, p->cmd);
    }
}

static void count_shape(const struct workload *wl, uint32_t *roots, uint32_t *sinks,
                        uint32_t *max_parents, uint32_t *max_children)
{
    *roots = *sinks = *max_parents = *max_children = 0;
    for (uint32_t i = 0; i < wl->count; i++) {
        const struct workload_task *t = &wl->tasks[i];
        *roots += t->num_parents == 0;
        *sinks += t->num_children == 0;
        if (t->num_parents > *max_parents)
            *max_parents = t->num_parents;
        if (t->num_children > *max_children)
            *max_children = t->num_children;
    }
}

static void test_bot(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_init(&p);
    p.shape = GEN_BOT;
    p.tasks = 1000;
    p.kind = TASK_SLEEP;
    p.duration = (struct gen_range){0.005, 0.02};
    struct workload wl;
    generate_and_parse(&p, &wl);
    uint32_t roots, sinks, max_parents, max_children;
    count_shape(&wl, &roots, &sinks, &max_parents, &max_children);
    assert_int_equal(roots, 1000);
    assert_int_equal(max_parents, 0);
    /* Uniform draws spread over the range, to the microsecond. */
    double lo = 1, hi = 0;
    for (uint32_t i = 0; i < wl.count; i++) {
        double d = wl.tasks[i].duration_s;
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
        assert_true(fabs(d * 1e6 - round(d * 1e6)) < 1e-6);
    }
    assert_true(lo < 0.0065 && hi > 0.0185);
    workload_fini(&wl);
}

static void test_fanin(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {1, 2, 5, 100, 1000, 1001};
    static const uint32_t degrees[] = {1, 2, 3, 7, 2000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (size_t d = 0; d < sizeof degrees / sizeof *degrees; d++) {
            struct gen_params p;
            gen_params_init(&p);
            p.shape = GEN_FANIN;
            p.tasks = sizes[s];
            p.degree = degrees[d];
            struct workload wl;
            generate_and_parse(&p, &wl);
            uint32_t roots, sinks, max_parents, max_children;
            count_shape(&wl, &roots, &sinks, &max_parents, &max_children);
            assert_int_equal(sinks, 1);
            assert_int_equal(wl.tasks[wl.count - 1].num_children, 0); /* the sink is last */
            assert_true(max_parents <= p.degree);
            assert_true(max_children <= 1);
            if (p.tasks > 1)
                assert_int_equal(wl.tasks[wl.count - 1].num_parents,
                                 p.tasks - 1 < p.degree ? p.tasks - 1 : p.degree);
            workload_fini(&wl);
        }
    }
}

static void test_fanout(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {1, 2, 5, 100, 1000, 1001};
    static const uint32_t degrees[] = {1, 2, 3, 7, 2000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (size_t d = 0; d < sizeof degrees / sizeof *degrees; d++) {
            struct gen_params p;
            gen_params_init(&p);
            p.shape = GEN_FANOUT;
            p.tasks = sizes[s];
            p.degree = degrees[d];
            p.output_bytes = (struct gen_range){100, 200};
            struct workload wl;
            generate_and_parse(&p, &wl);
            uint32_t roots, sinks, max_parents, max_children;
            count_shape(&wl, &roots, &sinks, &max_parents, &max_children);
            assert_int_equal(roots, 1);
            assert_int_equal(wl.tasks[0].num_parents, 0);
            assert_true(max_parents <= 1);
            assert_true(max_children <= p.degree);
            if (p.tasks > 1)
                assert_int_equal(wl.tasks[0].num_children,
                                 p.tasks - 1 < p.degree ? p.tasks - 1 : p.degree);
            workload_fini(&wl);
        }
    }
}

static void test_pipeline(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_init(&p);
    p.shape = GEN_PIPELINE;
    p.tasks = 103;
    p.pipe_size = 10;
    p.kind = TASK_COMMAND;
    p.cmd = "sh -c 'echo \"$1\"' -- x";
    struct workload wl;
    generate_and_parse(&p, &wl);
    uint32_t roots, sinks, max_parents, max_children;
    count_shape(&wl, &roots, &sinks, &max_parents, &max_children);
    assert_int_equal(roots, 11); /* ten full chains and one of three */
    assert_int_equal(sinks, 11);
    assert_int_equal(max_parents, 1);
    assert_int_equal(max_children, 1);
    /* Chain lengths, walked from each root. */
    uint32_t full = 0, short_chains = 0;
    for (uint32_t i = 0; i < wl.count; i++) {
        if (wl.tasks[i].num_parents)
            continue;
        uint32_t len = 1, at = i;
        while (wl.tasks[at].num_children) {
            at = wl.tasks[at].children[0];
            len++;
        }
        full += len == 10;
        short_chains += len == 3;
    }
    assert_int_equal(full, 10);
    assert_int_equal(short_chains, 1);
    workload_fini(&wl);

    /* One chain of the whole workload. */
    p.tasks = 5000;
    p.pipe_size = 5000;
    generate_and_parse(&p, &wl);
    count_shape(&wl, &roots, &sinks, &max_parents, &max_children);
    assert_int_equal(roots, 1);
    assert_int_equal(sinks, 1);
    workload_fini(&wl);
}

static void test_seed(void **state)
{
    (void)state;
    for (int shape = 0; shape < GEN_SHAPE_COUNT; shape++) {
        struct gen_params p;
        gen_params_init(&p);
        p.shape = (enum gen_shape)shape;
        p.tasks = 200;
        p.kind = TASK_SLEEP;
        p.duration = (struct gen_range){0.001, 1};
        p.output_bytes = (struct gen_range){0, 1 << 20};
        p.seed = 7;
        struct output a, b, c;
        generate(&p, &a);
        generate(&p, &b);
        p.seed = 8;
        generate(&p, &c);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.text, b.text, a.len);
        assert_true(a.len != c.len || memcmp(a.text, c.text, a.len) != 0);
        free(a.text);
        free(b.text);
        free(c.text);
    }
}

static void test_fixed_values(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_init(&p);
    p.shape = GEN_FANOUT;
    p.tasks = 3;
    p.kind = TASK_SLEEP;
    p.duration = (struct gen_range){0.01, 0.01};
    p.output_bytes = (struct gen_range){4096, 4096};
    struct output o;
    generate(&p, &o);
    const char *want =
        "{\"id\":\"t0\",\"kind\":\"sleep\",\"duration_s\":0.01,\"output_bytes\":4096}\n"
        "{\"id\":\"t1\",\"kind\":\"sleep\",\"duration_s\":0.01,\"output_bytes\":4096,"
        "\"parents\":[\"t0\"]}\n"
        "{\"id\":\"t2\",\"kind\":\"sleep\",\"duration_s\":0.01,\"output_bytes\":4096,"
        "\"parents\":[\"t0\"]}\n";
    assert_string_equal(o.text, want);
    free(o.text);
}

static void test_range_parse(void **state)
{
    (void)state;
    struct gen_range r;
    char *cause = NULL;
    assert_int_equal(gen_range_parse("0.01", false, &r, NULL), 0);
    assert_true(r.lo == 0.01 && r.hi == 0.01);
    assert_int_equal(gen_range_parse("0.005-0.02", false, &r, NULL), 0);
    assert_true(r.lo == 0.005 && r.hi == 0.02);
    assert_int_equal(gen_range_parse("1e-3-2e-3", false, &r, NULL), 0);
    assert_true(r.lo == 1e-3 && r.hi == 2e-3);
    assert_int_equal(gen_range_parse("1024-4096", true, &r, NULL), 0);
    assert_true(r.lo == 1024 && r.hi == 4096);

    assert_int_equal(gen_range_parse("abc", false, &r, &cause), -EINVAL);
    assert_string_equal(cause, "'abc' is not a number or a range A-B");
    free(cause);
    assert_int_equal(gen_range_parse("2-1", false, &r, &cause), -EINVAL);
    assert_string_equal(cause, "'2-1' has its lower bound above its upper one");
    free(cause);
    assert_int_equal(gen_range_parse("-1", false, &r, &cause), -EINVAL);
    assert_string_equal(cause, "'-1' must not be negative");
    free(cause);
    assert_int_equal(gen_range_parse("1.5", true, &r, &cause), -EINVAL);
    assert_string_equal(cause, "'1.5' must be whole numbers");
    free(cause);
    static const char *const bad[] = {"", "1-", "-", "1-2-3", "1x", "inf", "nan", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(gen_range_parse(bad[i], false, &r, &cause), -EINVAL);
        free(cause);
    }
}

static void expect_refusal(const struct gen_params *p, const char *want)
{
    char *cause = NULL;
    assert_int_equal(gen_check(p, &cause), -EINVAL);
    assert_string_equal(cause, want);
    free(cause);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(gen_write(out, p, NULL), -EINVAL);
    fclose(out);
    assert_int_equal(len, 0);
    free(text);
}

static void test_check(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_init(&p);
    assert_int_equal(gen_check(&p, NULL), 0);
    p.tasks = 0;
    expect_refusal(&p, "the task count must be at least 1");
    gen_params_init(&p);
    p.shape = GEN_FANIN;
    p.degree = 0;
    expect_refusal(&p, "the degree must be at least 1");
    gen_params_init(&p);
    p.shape = GEN_PIPELINE;
    p.pipe_size = 0;
    expect_refusal(&p, "the pipe size must be at least 1");
    gen_params_init(&p);
    p.kind = TASK_COMMAND;
    expect_refusal(&p, "command tasks need a cmd");
    p.cmd = "\xff\xfe";
    expect_refusal(&p, "cmd is not valid UTF-8");
    gen_params_init(&p);
    p.cmd = "ls";
    expect_refusal(&p, "cmd is only for command tasks");
    gen_params_init(&p);
    p.duration = (struct gen_range){1, 2};
    expect_refusal(&p, "a duration is only for sleep tasks");
    gen_params_init(&p);
    p.output_bytes = (struct gen_range){0.5, 2};
    expect_refusal(&p, "bad output size range");

    assert_int_equal(gen_shape_parse("fanin"), GEN_FANIN);
    assert_int_equal(gen_shape_parse("pipeline"), GEN_PIPELINE);
    assert_int_equal(gen_shape_parse("fan-in"), -EINVAL);
    assert_string_equal(gen_shape_name(GEN_FANOUT), "fanout");
    assert_null(gen_shape_name(GEN_SHAPE_COUNT));
}

static void test_write_error(void **state)
{
    (void)state;
    FILE *out = fopen("/dev/full", "w");
    if (!out)
        skip();
    struct gen_params p;
    gen_params_init(&p);
    p.tasks = 100000;
    char *cause = NULL;
    assert_int_equal(gen_write(out, &p, &cause), -ENOSPC);
    assert_string_equal(cause, "cannot write: No space left on device");
    free(cause);
    fclose(out);
}

/* ------------------------------------------------------------------------------------ */
/* The command. */

static int run_gen(const char *first, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"gen";
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return cmd_gen.main(argc, argv);
}

static void test_command(void **state)
{
    (void)state;
    char path[] = "/tmp/test_gen_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);

    assert_int_equal(run_gen("fanout", "--tasks", "2000", "--degree", "4", "--duration",
                             "0.005-0.02", "--seed", "1", "-o", path, NULL),
                     EXIT_OK_);
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.count, 2000);
    assert_int_equal(wl.tasks[0].kind, TASK_SLEEP); /* implied by --duration */
    assert_int_equal(wl.tasks[0].num_children, 4);
    workload_fini(&wl);

    assert_int_equal(run_gen("pipeline", "--tasks=12", "--pipe-size=4", "--cmd", "-o",
                             "--output", path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.tasks[0].kind, TASK_COMMAND);
    assert_string_equal(wl.tasks[0].cmd, "-o"); /* a value, not the short option */
    workload_fini(&wl);

    assert_int_equal(run_gen("bot", "--tasks", "5", "--output-bytes", "10-20", "--seed", "3",
                             "--kind", "noop", "-o", path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.count, 5);
    workload_fini(&wl);
    unlink(path);

    assert_int_equal(run_gen("--help", NULL), EXIT_OK_);
    assert_int_equal(run_gen(NULL), EXIT_USAGE);
    assert_int_equal(run_gen("tree", "--tasks", "3", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "0", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "-3", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--degree", "2", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("fanin", "--tasks", "3", "--pipe-size", "2", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("fanin", "--tasks", "3", "--degree", "0", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--kind", "sleep", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--kind", "command", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--kind", "slep", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--kind", "noop", "--duration", "1", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--cmd", "ls", "--duration", "1", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--duration", "2-1", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--output-bytes", "1.5", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "-x", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "fanin", "--tasks", "3", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "-o", "/nonexistent/dir/w.jsonl", NULL),
                     EXIT_BAD_INPUT);
    if (access("/dev/full", W_OK) == 0) {
        assert_int_equal(run_gen("bot", "--tasks", "100000", "-o", "/dev/full", NULL),
                         EXIT_BAD_INPUT);
        /* A device is never removed after a failed write. */
        assert_int_equal(access("/dev/full", W_OK), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bot),
        cmocka_unit_test(test_fanin),
        cmocka_unit_test(test_fanout),
        cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_fixed_values),
        cmocka_unit_test(test_range_parse),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
