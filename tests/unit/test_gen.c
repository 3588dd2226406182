/*
 * test_gen — the workload generators (workloads/gen.c) and `jackdaw gen`
 * (tools/cmd/cmd_gen.c): each shape's size and structure, reading its output back with
 * workload_parse (which also proves it acyclic with every parent and input present),
 * the paper workloads (all-pairs inputs, image stacking's files and aggregation, Table 3
 * means), the scales, seeded determinism, the drawn values' bounds, and the refusals.
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
#include "tools/cmd/cmd.h"
#include "workloads/gen.h"

#include "gen_fixture.h"


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
    for (int shape = GEN_BOT; shape <= GEN_PIPELINE; shape++) {
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

/* ------------------------------------------------------------------------------------ */
/* The paper workloads: all-pairs, image stacking, Table 3, and the scales. */

/* Generates and parses back, checking the counts gen.h promises. */
static void generate_workload(const struct gen_params *p, struct workload *wl)
{
    struct output o;
    generate(p, &o);
    char *cause = NULL;
    int rc = workload_parse(wl, o.text, o.len, "gen", &cause);
    if (rc)
        print_error("workload_parse: %s\n", cause);
    assert_int_equal(rc, 0);
    free(o.text);
    assert_int_equal(wl->count, gen_task_count(p));
    assert_int_equal(wl->object_count, gen_object_count(p));
    /* Every object spread, or pinned inside the nodes it was drawn from. */
    assert_int_equal(workload_check_nodes(wl, p->file_nodes ? p->file_nodes : 1, NULL), 0);
    if (p->file_nodes > 1 && wl->object_count)
        assert_int_not_equal(workload_check_nodes(wl, p->file_nodes - 1, NULL), 0);
}

static void test_allpairs(void **state)
{
    (void)state;
    enum { N = 7 };
    struct gen_params p;
    gen_params_allpairs(&p, N);
    struct workload wl;
    generate_workload(&p, &wl);
    assert_int_equal(wl.count, N * N);
    assert_int_equal(wl.object_count, 2 * N);
    char id[32];
    for (uint32_t k = 0; k < 2 * N; k++) {
        const struct workload_object *o = &wl.objects[k];
        snprintf(id, sizeof id, "%c%u", k < N ? 'a' : 'b', k % N);
        assert_string_equal(o->id, id);
        assert_int_equal(o->bytes, 12000000);
        assert_int_equal(o->node, WORKLOAD_NODE_SPREAD);
        assert_int_equal(workload_object_node(&wl, k, 4), k % 4);
    }
    /* Every pair once, row order, one file of each set; no edges. */
    for (uint32_t i = 0; i < N; i++) {
        for (uint32_t j = 0; j < N; j++) {
            const struct workload_task *t = &wl.tasks[i * N + j];
            snprintf(id, sizeof id, "t_%u_%u", i, j);
            assert_string_equal(t->id, id);
            assert_int_equal(t->kind, TASK_SLEEP);
            assert_true(t->duration_s == 0.1);
            assert_int_equal(t->output_bytes, 0);
            assert_int_equal(t->num_parents, 0);
            assert_int_equal(t->num_children, 0);
            assert_int_equal(t->num_inputs, 2);
            assert_int_equal(t->inputs[0], i);
            assert_int_equal(t->inputs[1], N + j);
        }
    }
    workload_fini(&wl);

    /* The paper's 500 x 500 size, noop tasks, drawn file sizes. */
    gen_params_allpairs(&p, 500);
    p.kind = TASK_NOOP;
    p.duration = (struct gen_range){0, 0};
    p.file_bytes = (struct gen_range){1000, 2000};
    generate_workload(&p, &wl);
    assert_int_equal(wl.count, 250000);
    assert_int_equal(wl.tasks[249999].inputs[0], 499);
    assert_int_equal(wl.tasks[249999].inputs[1], 999);
    for (uint32_t k = 0; k < wl.object_count; k++)
        assert_true(wl.objects[k].bytes >= 1000 && wl.objects[k].bytes <= 2000);
    workload_fini(&wl);

    /* One file per set: one task. */
    gen_params_allpairs(&p, 1);
    generate_workload(&p, &wl);
    assert_int_equal(wl.count, 1);
    assert_string_equal(wl.tasks[0].id, "t_0_0");
    workload_fini(&wl);
}

/* Files pinned to drawn nodes (file_nodes): inside the range, unequal shares on a
 * seed where they are unequal, and nothing else changed (the spread workload's sizes,
 * durations and tasks, byte for byte apart from the node fields). */
static void test_allpairs_file_nodes(void **state)
{
    (void)state;
    enum { N = 40, P = 8 };
    struct gen_params spread, pinned;
    gen_params_allpairs(&spread, N);
    spread.file_bytes = (struct gen_range){1000, 2000};
    spread.duration = (struct gen_range){0.05, 0.15};
    pinned = spread;
    pinned.file_nodes = P;
    struct workload ws, wp;
    generate_workload(&spread, &ws);
    generate_workload(&pinned, &wp);
    assert_int_equal(wp.object_count, 2 * N);
    uint32_t share[P] = {0};
    int32_t first[2 * N];
    for (uint32_t k = 0; k < wp.object_count; k++) {
        first[k] = wp.objects[k].node;
        assert_int_equal(ws.objects[k].node, WORKLOAD_NODE_SPREAD);
        assert_true(wp.objects[k].node >= 0 && wp.objects[k].node < P);
        assert_int_equal(wp.objects[k].bytes, ws.objects[k].bytes);
        share[wp.objects[k].node]++;
    }
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t i = 0; i < P; i++) {
        lo = share[i] < lo ? share[i] : lo;
        hi = share[i] > hi ? share[i] : hi;
    }
    /* 80 draws over 8 nodes with seed 1: the shares are not all 10. */
    assert_true(hi > lo);
    assert_int_equal(wp.count, ws.count);
    for (uint32_t i = 0; i < wp.count; i++) {
        assert_string_equal(wp.tasks[i].id, ws.tasks[i].id);
        assert_true(wp.tasks[i].duration_s == ws.tasks[i].duration_s);
        assert_int_equal(wp.tasks[i].inputs[0], ws.tasks[i].inputs[0]);
        assert_int_equal(wp.tasks[i].inputs[1], ws.tasks[i].inputs[1]);
    }
    workload_fini(&ws);
    workload_fini(&wp);

    /* Another seed, another placement; the same seed, the same one. */
    struct workload w2;
    pinned.seed = 2;
    generate_workload(&pinned, &w2);
    uint32_t moved = 0;
    for (uint32_t k = 0; k < w2.object_count; k++)
        moved += w2.objects[k].node != first[k];
    assert_true(moved > 0);
    workload_fini(&w2);
    pinned.seed = 1;
    generate_workload(&pinned, &w2);
    for (uint32_t k = 0; k < w2.object_count; k++)
        assert_int_equal(w2.objects[k].node, first[k]);
    workload_fini(&w2);
}

/* Checks an image stacking workload of `tasks` tasks over `files` files. */
static void check_imagestack(const struct workload *wl, uint32_t tasks, uint32_t files)
{
    assert_int_equal(wl->object_count, files);
    assert_int_equal(wl->count, tasks + 1);
    uint32_t *readers = xcalloc(files, sizeof *readers);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < tasks; i++) {
        const struct workload_task *t = &wl->tasks[i];
        assert_int_equal(t->num_inputs, 1);
        assert_int_equal(t->num_parents, 0);
        assert_int_equal(t->num_children, 1);
        assert_int_equal(t->children[0], tasks);
        assert_true(t->inputs[0] >= prev); /* tasks sharing a file are neighbours */
        prev = t->inputs[0];
        readers[t->inputs[0]]++;
    }
    /* Every file is read, and by floor(T/M) or ceil(T/M) tasks. */
    uint32_t lo = tasks / files, hi = (tasks + files - 1) / files;
    for (uint32_t k = 0; k < files; k++)
        assert_true(readers[k] >= lo && readers[k] <= hi && readers[k] >= 1);
    free(readers);
    const struct workload_task *end = &wl->tasks[tasks];
    assert_string_equal(end->id, "tend");
    assert_int_equal(end->num_parents, tasks);
    for (uint32_t k = 0; k < tasks; k++)
        assert_int_equal(end->parents[k], k);
    assert_int_equal(end->num_inputs, 0);
    assert_int_equal(end->num_children, 0);
    assert_int_equal(wl->topo[tasks], tasks); /* the aggregation runs last */
}

static void test_imagestack(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_imagestack(&p, 120, 4);
    struct workload wl;
    generate_workload(&p, &wl);
    check_imagestack(&wl, 120, 30);
    /* Whole locality: file k = task index / L, each file read by exactly L tasks. */
    for (uint32_t i = 0; i < 120; i++)
        assert_int_equal(wl.tasks[i].inputs[0], i / 4);
    char id[32];
    for (uint32_t k = 0; k < 30; k++) {
        snprintf(id, sizeof id, "f%u", k);
        assert_string_equal(wl.objects[k].id, id);
        assert_int_equal(wl.objects[k].bytes, 2000000);
        assert_int_equal(wl.objects[k].node, WORKLOAD_NODE_SPREAD);
    }
    for (uint32_t i = 0; i <= 120; i++) {
        assert_int_equal(wl.tasks[i].kind, TASK_SLEEP);
        assert_true(wl.tasks[i].duration_s == 0.158);
        assert_int_equal(wl.tasks[i].output_bytes, 10000);
    }
    workload_fini(&wl);

    /* Locality 1: one file per task. */
    gen_params_imagestack(&p, 50, 1);
    generate_workload(&p, &wl);
    check_imagestack(&wl, 50, 50);
    for (uint32_t i = 0; i < 50; i++)
        assert_int_equal(wl.tasks[i].inputs[0], i);
    workload_fini(&wl);

    /* The paper's real locality: 1000 / 1.38 = 724.6, so 725 files, read once or twice. */
    gen_params_imagestack(&p, 1000, 1.38);
    generate_workload(&p, &wl);
    check_imagestack(&wl, 1000, 725);
    workload_fini(&wl);

    /* Locality equal to the task count: one file for all; a locality that does not
     * divide the count. */
    gen_params_imagestack(&p, 9, 9);
    generate_workload(&p, &wl);
    check_imagestack(&wl, 9, 1);
    workload_fini(&wl);
    gen_params_imagestack(&p, 100, 30);
    generate_workload(&p, &wl);
    check_imagestack(&wl, 100, 3);
    workload_fini(&wl);
    gen_params_imagestack(&p, 1, 1);
    generate_workload(&p, &wl);
    check_imagestack(&wl, 1, 1);
    workload_fini(&wl);
}

static void test_table3(void **state)
{
    (void)state;
    for (int shape = GEN_BOT; shape <= GEN_PIPELINE; shape++) {
        struct gen_params p;
        gen_params_table3(&p, (enum gen_shape)shape, 20000);
        struct workload wl;
        generate_workload(&p, &wl);
        double sum_d = 0, sum_b = 0, max_d = 0;
        uint64_t max_b = 0;
        for (uint32_t i = 0; i < wl.count; i++) {
            const struct workload_task *t = &wl.tasks[i];
            assert_int_equal(t->kind, TASK_SLEEP);
            assert_true(t->duration_s >= 0 && t->duration_s <= 0.1);
            assert_true(t->output_bytes <= 10000000);
            sum_d += t->duration_s;
            sum_b += (double)t->output_bytes;
            max_d = t->duration_s > max_d ? t->duration_s : max_d;
            max_b = t->output_bytes > max_b ? t->output_bytes : max_b;
        }
        /* Uniform over [0, 100 ms] and [0, 10 MB]: the standard error of the mean over
         * 20000 draws is 0.2 ms and 20 KB; these bounds are ten of them. */
        double mean_d = sum_d / wl.count, mean_b = sum_b / wl.count;
        if (fabs(mean_d - 0.05) > 0.002 || fabs(mean_b - 5e6) > 2e5)
            print_error("%s: mean duration %g s, mean output %g B\n",
                        gen_shape_name((enum gen_shape)shape), mean_d, mean_b);
        assert_true(fabs(mean_d - 0.05) < 0.002);
        assert_true(fabs(mean_b - 5e6) < 2e5);
        assert_true(max_d > 0.099 && max_b > 9900000); /* the whole range is used */
        uint32_t roots, sinks, max_parents, max_children;
        count_shape(&wl, &roots, &sinks, &max_parents, &max_children);
        switch (shape) {
        case GEN_FANIN:
            assert_int_equal(max_parents, 10);
            assert_int_equal(sinks, 1);
            break;
        case GEN_FANOUT:
            assert_int_equal(max_children, 10);
            assert_int_equal(roots, 1);
            break;
        case GEN_PIPELINE:
            assert_int_equal(roots, 2000); /* chains of 10 */
            assert_int_equal(max_parents, 1);
            break;
        default:
            assert_int_equal(roots, 20000);
        }
        workload_fini(&wl);
    }
}

static void test_scale(void **state)
{
    (void)state;
    /* Scaled = unscaled, value by value, multiplied and rounded: same seed, same draws. */
    struct gen_params p;
    gen_params_table3(&p, GEN_FANIN, 3000);
    struct workload base, data, time;
    generate_workload(&p, &base);
    p.data_scale = 0.1;
    generate_workload(&p, &data);
    p.data_scale = 1;
    p.time_scale = 2.5;
    generate_workload(&p, &time);
    for (uint32_t i = 0; i < base.count; i++) {
        const struct workload_task *b = &base.tasks[i];
        assert_int_equal(data.tasks[i].output_bytes,
                         (uint64_t)round((double)b->output_bytes * 0.1));
        assert_true(data.tasks[i].duration_s == b->duration_s);
        assert_true(time.tasks[i].duration_s == round(b->duration_s * 2.5 * 1e6) / 1e6);
        assert_int_equal(time.tasks[i].output_bytes, b->output_bytes);
        assert_int_equal(data.tasks[i].num_parents, b->num_parents);
    }
    workload_fini(&base);
    workload_fini(&data);
    workload_fini(&time);

    /* Object sizes scale too; 1/10 of the papers' files. */
    gen_params_imagestack(&p, 100, 10);
    p.data_scale = 0.1;
    p.time_scale = 0.5;
    generate_workload(&p, &base);
    assert_int_equal(base.objects[0].bytes, 200000);
    assert_int_equal(base.tasks[0].output_bytes, 1000);
    assert_true(base.tasks[0].duration_s == 0.079);
    workload_fini(&base);
    gen_params_allpairs(&p, 3);
    p.data_scale = 0;
    generate_workload(&p, &base);
    assert_int_equal(base.objects[5].bytes, 0);
    workload_fini(&base);

    /* Scale 1 writes exactly the unscaled bytes (the default). */
    struct gen_params q;
    gen_params_table3(&q, GEN_BOT, 500);
    struct output a, b;
    generate(&q, &a);
    q.data_scale = 1.0;
    q.time_scale = 1.0;
    generate(&q, &b);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.text, b.text, a.len);
    free(a.text);
    free(b.text);
}

static void test_seed_paper_workloads(void **state)
{
    (void)state;
    struct gen_params p[2];
    gen_params_allpairs(&p[0], 20);
    p[0].file_bytes = (struct gen_range){1, 1000000};
    p[0].duration = (struct gen_range){0.05, 0.15};
    gen_params_imagestack(&p[1], 300, 3);
    p[1].output_bytes = (struct gen_range){0, 20000};
    for (int k = 0; k < 2; k++) {
        p[k].seed = 11;
        struct output a, b, c;
        generate(&p[k], &a);
        generate(&p[k], &b);
        p[k].seed = 12;
        generate(&p[k], &c);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.text, b.text, a.len);
        assert_true(a.len != c.len || memcmp(a.text, c.text, a.len) != 0);
        free(a.text);
        free(b.text);
        free(c.text);
    }
}

static void test_check_paper_workloads(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_init(&p);
    p.set_size = 3;
    expect_refusal(&p, "a set size is only for allpairs");
    gen_params_init(&p);
    p.locality = 2;
    expect_refusal(&p, "a locality is only for imagestack");
    gen_params_init(&p);
    p.file_bytes = (struct gen_range){1, 1};
    expect_refusal(&p, "file sizes are only for allpairs and imagestack");
    gen_params_init(&p);
    p.file_nodes = 4;
    expect_refusal(&p, "file nodes are only for allpairs and imagestack");
    gen_params_allpairs(&p, 0);
    expect_refusal(&p, "the set size must be at least 1");
    gen_params_allpairs(&p, 46341); /* 46341^2 > 2^31 - 1 */
    expect_refusal(&p, "too many tasks (a workload with objects holds at most 2147483647)");
    gen_params_allpairs(&p, 46340);
    assert_int_equal(gen_check(&p, NULL), 0);
    gen_params_allpairs(&p, UINT32_MAX); /* the square overflows 32 bits */
    expect_refusal(&p, "too many tasks (a workload with objects holds at most 2147483647)");
    gen_params_allpairs(&p, 2);
    p.file_bytes = (struct gen_range){1.5, 2};
    expect_refusal(&p, "bad file size range");
    gen_params_imagestack(&p, 10, 0.5);
    expect_refusal(&p, "the locality must be a number >= 1");
    gen_params_imagestack(&p, 10, NAN);
    expect_refusal(&p, "the locality must be a number >= 1");
    gen_params_imagestack(&p, 10, INFINITY);
    expect_refusal(&p, "the locality must be a number >= 1");
    gen_params_imagestack(&p, 10, 11);
    expect_refusal(&p, "the locality must not exceed the task count");
    gen_params_imagestack(&p, 0, 1);
    expect_refusal(&p, "the task count must be at least 1");
    gen_params_imagestack(&p, WORKLOAD_MAX_OBJECTS, 1); /* plus tend */
    expect_refusal(&p, "too many tasks (a workload with objects holds at most 2147483647)");
    gen_params_table3(&p, GEN_BOT, 10);
    p.data_scale = -1;
    expect_refusal(&p, "the data scale must be a number >= 0");
    p.data_scale = NAN;
    expect_refusal(&p, "the data scale must be a number >= 0");
    p.data_scale = 1e10; /* 10 MB * 1e10 >= 2^53 */
    expect_refusal(&p, "the data scale makes sizes too large (2^53 bytes or more)");
    p.data_scale = 1;
    p.time_scale = INFINITY;
    expect_refusal(&p, "the time scale must be a number >= 0");
    gen_params_init(&p);
    p.time_scale = 2;
    expect_refusal(&p, "a time scale is only for sleep tasks");

    assert_int_equal(gen_shape_parse("allpairs"), GEN_ALLPAIRS);
    assert_int_equal(gen_shape_parse("imagestack"), GEN_IMAGESTACK);
    assert_string_equal(gen_shape_name(GEN_IMAGESTACK), "imagestack");
    gen_params_imagestack(&p, 10, 3);
    assert_int_equal(gen_object_count(&p), 3);
    assert_int_equal(gen_task_count(&p), 11);
}

static void test_command_paper_workloads(void **state)
{
    (void)state;
    char path[] = "/tmp/test_gen_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct workload wl;
    char *cause = NULL;

    assert_int_equal(run_gen("allpairs", "-n", "4", "--file-bytes", "24000", "--duration-s",
                             "0.2", "-o", path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.count, 16);
    assert_int_equal(wl.object_count, 8);
    assert_int_equal(wl.objects[7].bytes, 24000);
    assert_true(wl.tasks[5].duration_s == 0.2);
    workload_fini(&wl);

    /* Paper defaults; noop drops the paper's duration. */
    assert_int_equal(run_gen("allpairs", "--set-size=2", "--kind", "noop", "-o", path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.tasks[0].kind, TASK_NOOP);
    assert_int_equal(wl.objects[0].bytes, 12000000);
    workload_fini(&wl);

    assert_int_equal(run_gen("imagestack", "--locality", "2", "--tasks", "10", "--data-scale",
                             "0.5", "-o", path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    check_imagestack(&wl, 10, 5);
    assert_int_equal(wl.objects[0].bytes, 1000000);
    assert_int_equal(wl.tasks[0].output_bytes, 5000);
    assert_true(wl.tasks[0].duration_s == 0.158);
    workload_fini(&wl);

    assert_int_equal(run_gen("fanout", "--table3", "--tasks", "500", "--time-scale", "0.1",
                             "--degree", "4", "-o", path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.tasks[0].num_children, 4); /* an option overrides the table */
    for (uint32_t i = 0; i < wl.count; i++)
        assert_true(wl.tasks[i].duration_s <= 0.01);
    workload_fini(&wl);

    /* --duration is the same option as --duration-s; "-n" as a value stays a value. */
    assert_int_equal(run_gen("bot", "--tasks", "3", "--duration", "0.5", "-o", path, NULL),
                     EXIT_OK_);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--cmd", "-n", "-o", path, NULL), EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_string_equal(wl.tasks[0].cmd, "-n");
    workload_fini(&wl);
    unlink(path);

    assert_int_equal(run_gen("allpairs", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "-n", "0", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "-n", "50000", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "--tasks", "9", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "-n", "3", "--table3", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "-n", "3", "--locality", "2", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "-n", "3", "--degree", "2", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "-n", "3", "--file-bytes", "1.5", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "-n", "3", "--kind", "noop", "--time-scale", "2", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("bot", "-n", "3", "--tasks", "3", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--file-bytes", "10", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--duration", "1", "--duration-s", "1", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--data-scale", "-1", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--data-scale", "x", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--data-scale", "nan", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--time-scale", "2", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("imagestack", "--tasks", "10", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("imagestack", "--locality", "2", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("imagestack", "--locality", "0.5", "--tasks", "10", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("imagestack", "--locality", "20", "--tasks", "10", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("imagestack", "--locality", "2", "--tasks", "10", "--pipe-size",
                             "2", NULL),
                     EXIT_USAGE);
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
        cmocka_unit_test(test_allpairs),
        cmocka_unit_test(test_allpairs_file_nodes),
        cmocka_unit_test(test_imagestack),
        cmocka_unit_test(test_table3),
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_seed_paper_workloads),
        cmocka_unit_test(test_check_paper_workloads),
        cmocka_unit_test(test_command_paper_workloads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
