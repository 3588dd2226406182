/*
 * test_gen_apps — the work-stealing benchmark generators (workloads/gen.c,
 * gen_cholesky.c, gen_uts.c) and their `jackdaw gen` options: seismic shots' counts and
 * costs; the tiled Cholesky's task counts by kind against the formulas, every task's
 * parents against the algorithm's data flow, costs by kind, the 2D block-cyclic owners,
 * the sparsity (exactly the requested fraction of tiles, the tasks it empties, with and
 * without fill-in); the UTS tree's structure, its sizes for fixed seeds and its mean
 * against the expected-size formula; seeded determinism and the refusals.  Every
 * workload is read back with workload_parse, which also proves it acyclic with every
 * parent and input present.
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

#include "core/model/workload.h"
#include "tools/cmd/cmd.h"
#include "workloads/gen.h"

#include "gen_fixture.h"


/* Generates, parses back, and checks the counts gen.h promises and the file order. */
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
    for (uint32_t i = 0; i < wl->count; i++)
        for (uint32_t k = 0; k < wl->tasks[i].num_parents; k++)
            assert_true(wl->tasks[i].parents[k] < i); /* topological file order */
}

static void expect_refusal(const struct gen_params *p, const char *want)
{
    char *cause = NULL;
    assert_int_equal(gen_check(p, &cause), -EINVAL);
    assert_non_null(cause);
    if (want && !strstr(cause, want))
        fail_msg("cause '%s' lacks '%s'", cause, want);
    free(cause);
}

/* ------------------------------------------------------------------------------------ */
/* Seismic shots */

static void test_seismic(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_seismic(&p, 480, 2.5);
    struct workload wl;
    generate_workload(&p, &wl);
    assert_int_equal(wl.count, 480);
    assert_int_equal(wl.object_count, 0);
    char id[16];
    for (uint32_t i = 0; i < wl.count; i++) {
        const struct workload_task *t = &wl.tasks[i];
        snprintf(id, sizeof id, "t%u", i);
        assert_string_equal(t->id, id);
        assert_int_equal(t->kind, TASK_SLEEP);
        assert_true(t->duration_s == 2.5);
        assert_int_equal(t->num_parents, 0);
        assert_int_equal(t->num_children, 0);
        assert_int_equal(t->output_bytes, 0);
        assert_true(t->stealable);
    }
    assert_true(workload_total_work(&wl) == 480 * 2.5);
    workload_fini(&wl);

    /* Scaled to seconds: the paper's minutes-long shots become short sleeps. */
    p.time_scale = 0.004;
    generate_workload(&p, &wl);
    for (uint32_t i = 0; i < wl.count; i++)
        assert_true(wl.tasks[i].duration_s == 0.01);
    workload_fini(&wl);
}

/* ------------------------------------------------------------------------------------ */
/* Tiled Cholesky */

enum { POTRF, TRSM, SYRK, GEMM, KINDS };

/* The kernel of a task id and its indices (i, j, k as in gen.h; unused ones 0). */
static int parse_id(const char *id, uint32_t *i, uint32_t *j, uint32_t *k)
{
    *i = *j = *k = 0;
    if (sscanf(id, "potrf_%u", k) == 1) {
        *i = *j = *k;
        return POTRF;
    }
    if (sscanf(id, "trsm_%u_%u", i, k) == 2) {
        *j = *k;
        return TRSM;
    }
    if (sscanf(id, "syrk_%u_%u", i, k) == 2) {
        *j = *i;
        return SYRK;
    }
    if (sscanf(id, "gemm_%u_%u_%u", i, j, k) == 3)
        return GEMM;
    fail_msg("unexpected task id '%s'", id);
    return -1;
}

static uint64_t expected_count(int kind, uint64_t t)
{
    switch (kind) {
    case POTRF: return t;
    case TRSM:
    case SYRK: return t * (t - 1) / 2;
    default: return t * (t - 1) * (t - 2) / 6;
    }
}

/* True when task `at` lists parent `id`. */
static bool has_parent(const struct workload *wl, uint32_t at, const char *id)
{
    const struct workload_task *t = &wl->tasks[at];
    for (uint32_t k = 0; k < t->num_parents; k++)
        if (strcmp(wl->tasks[t->parents[k]].id, id) == 0)
            return true;
    return false;
}

/* The parents the right-looking algorithm gives a task: the last writer of every tile it
 * reads or updates. */
static uint32_t expected_parents(int kind, uint32_t i, uint32_t j, uint32_t k, char out[3][48])
{
    uint32_t n = 0;
    switch (kind) {
    case POTRF:
        if (k > 0)
            snprintf(out[n++], 48, "syrk_%u_%u", k, k - 1);
        break;
    case TRSM:
        snprintf(out[n++], 48, "potrf_%u", k);
        if (k > 0)
            snprintf(out[n++], 48, "gemm_%u_%u_%u", i, k, k - 1);
        break;
    case SYRK:
        snprintf(out[n++], 48, "trsm_%u_%u", i, k);
        if (k > 0)
            snprintf(out[n++], 48, "syrk_%u_%u", i, k - 1);
        break;
    default:
        snprintf(out[n++], 48, "trsm_%u_%u", i, k);
        snprintf(out[n++], 48, "trsm_%u_%u", j, k);
        if (k > 0)
            snprintf(out[n++], 48, "gemm_%u_%u_%u", i, j, k - 1);
        break;
    }
    return n;
}

static void test_cholesky_dense(void **state)
{
    (void)state;
    for (uint32_t tiles = 1; tiles <= 9; tiles++) {
        struct gen_params p;
        gen_params_cholesky(&p, tiles);
        p.cholesky.sparsity = 0;
        struct workload wl;
        generate_workload(&p, &wl);
        uint64_t t = tiles;
        assert_int_equal(gen_task_count(&p),
                         t + t * (t - 1) + t * (t - 1) * (t - 2) / 6);
        assert_int_equal(wl.object_count, t * (t + 1) / 2);
        uint64_t count[KINDS] = {0};
        for (uint32_t x = 0; x < wl.count; x++) {
            const struct workload_task *task = &wl.tasks[x];
            uint32_t i, j, k;
            int kind = parse_id(task->id, &i, &j, &k);
            count[kind]++;
            /* Indices in range: i >= j >= k, strictly where the kernel says. */
            assert_true(i < tiles && j <= i && k <= j);
            assert_true(kind == POTRF || i > k);
            assert_true(kind != GEMM || (i > j && j > k));
            /* Costs by flops in units of n^3, the default 10 ms; a tile of 50^2 doubles. */
            static const double cost[KINDS] = {0.003333, 0.01, 0.01, 0.02};
            assert_int_equal(task->kind, TASK_SLEEP);
            assert_true(task->duration_s == cost[kind]);
            assert_int_equal(task->output_bytes, 8 * 50 * 50);
            /* Exactly the data-flow parents. */
            char want[3][48];
            uint32_t n = expected_parents(kind, i, j, k, want);
            assert_int_equal(task->num_parents, n);
            for (uint32_t q = 0; q < n; q++)
                if (!has_parent(&wl, x, want[q]))
                    fail_msg("%s lacks parent %s", task->id, want[q]);
            /* One input: the tile it updates. */
            char tile[48];
            snprintf(tile, sizeof tile, "a_%u_%u", i, j);
            assert_int_equal(task->num_inputs, 1);
            assert_string_equal(wl.objects[task->inputs[0]].id, tile);
        }
        for (int kind = 0; kind < KINDS; kind++)
            assert_int_equal(count[kind], expected_count(kind, t));
        /* One sink, the last POTRF; one source, the first. */
        char last[32];
        snprintf(last, sizeof last, "potrf_%u", tiles - 1);
        assert_string_equal(wl.tasks[wl.count - 1].id, last);
        assert_int_equal(wl.tasks[wl.count - 1].num_children, 0);
        for (uint32_t x = 0; x + 1 < wl.count; x++)
            assert_true(wl.tasks[x].num_children > 0);
        for (uint32_t x = 1; x < wl.count; x++)
            assert_true(wl.tasks[x].num_parents > 0);
        for (uint32_t o = 0; o < wl.object_count; o++) {
            assert_int_equal(wl.objects[o].bytes, 20000);
            assert_int_equal(wl.objects[o].node, WORKLOAD_NODE_SPREAD);
        }
        workload_fini(&wl);
    }
}

/* The GEMM chain of paper 004's kernels: GEMM(i,j,k) after TRSM(i,k), TRSM(j,k) and the
 * previous update of its tile, so tile (i,j)'s updates run in k order. */
static void test_cholesky_gemm_order(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_cholesky(&p, 12);
    struct workload wl;
    generate_workload(&p, &wl);
    uint32_t gemms = 0;
    for (uint32_t x = 0; x < wl.count; x++) {
        uint32_t i, j, k;
        if (parse_id(wl.tasks[x].id, &i, &j, &k) != GEMM)
            continue;
        gemms++;
        char id[48];
        snprintf(id, sizeof id, "trsm_%u_%u", i, k);
        assert_true(has_parent(&wl, x, id));
        snprintf(id, sizeof id, "trsm_%u_%u", j, k);
        assert_true(has_parent(&wl, x, id));
        if (k > 0) {
            snprintf(id, sizeof id, "gemm_%u_%u_%u", i, j, k - 1);
            assert_true(has_parent(&wl, x, id));
        }
    }
    assert_int_equal(gemms, 12 * 11 * 10 / 6);
    workload_fini(&wl);
}

static void test_cholesky_owner(void **state)
{
    (void)state;
    static const uint32_t nodes[] = {1, 2, 3, 4, 6, 7, 8, 12, 16, 32};
    static const uint32_t rows[] = {1, 1, 1, 2, 2, 1, 2, 3, 4, 4};
    for (size_t n = 0; n < sizeof nodes / sizeof *nodes; n++) {
        uint32_t r, c;
        gen_cholesky_grid(nodes[n], &r, &c);
        assert_int_equal(r, rows[n]);
        assert_int_equal(r * c, nodes[n]);
    }
    /* 2 x 2 grid: (i mod 2) * 2 + j mod 2. */
    assert_int_equal(gen_cholesky_owner(4, 0, 0), 0);
    assert_int_equal(gen_cholesky_owner(4, 1, 0), 2);
    assert_int_equal(gen_cholesky_owner(4, 3, 1), 3);
    assert_int_equal(gen_cholesky_owner(4, 4, 2), 0);
    /* 2 x 3 grid. */
    assert_int_equal(gen_cholesky_owner(6, 5, 4), 1 * 3 + 1);

    struct gen_params p;
    gen_params_cholesky(&p, 10);
    p.cholesky.nodes = 6;
    struct workload wl;
    generate_workload(&p, &wl);
    uint32_t per_node[6] = {0};
    for (uint32_t o = 0; o < wl.object_count; o++) {
        uint32_t i, j;
        assert_int_equal(sscanf(wl.objects[o].id, "a_%u_%u", &i, &j), 2);
        assert_int_equal(wl.objects[o].node, (int32_t)gen_cholesky_owner(6, i, j));
        per_node[wl.objects[o].node]++;
    }
    for (uint32_t n = 0; n < 6; n++)
        assert_true(per_node[n] >= 6); /* 55 tiles: no node left out */
    /* Pinned tiles need a cluster of at least P nodes. */
    assert_int_equal(workload_check_nodes(&wl, 6, NULL), 0);
    assert_int_equal(workload_check_nodes(&wl, 5, NULL), -EINVAL);
    workload_fini(&wl);
}

/* Which tiles start empty: the off-diagonal objects of 0 bytes, as full[i][j]. */
static unsigned char *initial_pattern(const struct workload *wl, uint32_t tiles)
{
    unsigned char *full = calloc((size_t)tiles * tiles, 1);
    assert_non_null(full);
    for (uint32_t o = 0; o < wl->object_count; o++) {
        uint32_t i, j;
        assert_int_equal(sscanf(wl->objects[o].id, "a_%u_%u", &i, &j), 2);
        full[i * tiles + j] = wl->objects[o].bytes > 0;
        if (i == j)
            assert_true(full[i * tiles + j]); /* the diagonal is never empty */
    }
    return full;
}

/*
 * Counts empty tasks by kind and checks each task against a reference evaluation of the
 * rules of gen.h in file order (which is the factorisation's order): held pattern, or
 * fill-in followed.
 */
static void check_emptiness(const struct workload *wl, uint32_t tiles, bool fill_in,
                            uint64_t empty[KINDS], uint64_t total[KINDS])
{
    unsigned char *full = initial_pattern(wl, tiles);
    for (int kind = 0; kind < KINDS; kind++)
        empty[kind] = total[kind] = 0;
    for (uint32_t x = 0; x < wl->count; x++) {
        const struct workload_task *t = &wl->tasks[x];
        uint32_t i, j, k;
        int kind = parse_id(t->id, &i, &j, &k);
        bool want_empty;
        switch (kind) {
        case POTRF: want_empty = false; break;
        case TRSM:
        case SYRK: want_empty = !full[i * tiles + k]; break;
        default: {
            bool product = full[i * tiles + k] && full[j * tiles + k];
            want_empty = fill_in ? !product : !(product && full[i * tiles + j]);
            if (fill_in && product)
                full[i * tiles + j] = 1;
        }
        }
        if (want_empty != (t->kind == TASK_NOOP))
            fail_msg("%s: %s, expected %s", t->id, t->kind == TASK_NOOP ? "empty" : "work",
                     want_empty ? "empty" : "work");
        if (want_empty)
            assert_int_equal(t->output_bytes, 0); /* an empty tile moves nothing */
        else
            assert_int_equal(t->output_bytes, 20000);
        empty[kind] += want_empty;
        total[kind]++;
    }
    free(full);
}

static void test_cholesky_sparsity(void **state)
{
    (void)state;
    enum { T = 40 };
    const uint64_t off_diagonal = T * (T - 1) / 2;
    static const double fractions[] = {0, 0.1, 0.5, 0.9, 1};
    for (size_t f = 0; f < sizeof fractions / sizeof *fractions; f++) {
        double s = fractions[f];
        struct gen_params p;
        gen_params_cholesky(&p, T);
        p.cholesky.sparsity = s;
        p.seed = 5;
        struct workload wl;
        generate_workload(&p, &wl);
        /* Exactly the fraction asked for, of the off-diagonal tiles only. */
        uint64_t empty_tiles = 0;
        for (uint32_t o = 0; o < wl.object_count; o++)
            empty_tiles += wl.objects[o].bytes == 0;
        uint64_t want = (uint64_t)llround(s * (double)off_diagonal);
        assert_int_equal(empty_tiles, want);
        /* Held pattern: every off-diagonal tile is one TRSM and one SYRK operand, so
         * exactly that many of each are empty; a GEMM touches three tiles, so about
         * 1 - (1 - s)^3 of them are. */
        uint64_t empty[KINDS], total[KINDS];
        check_emptiness(&wl, T, false, empty, total);
        assert_int_equal(empty[POTRF], 0);
        assert_int_equal(empty[TRSM], want);
        assert_int_equal(empty[SYRK], want);
        double gemm = (double)empty[GEMM] / (double)total[GEMM];
        double expect = 1 - pow(1 - s, 3);
        if (fabs(gemm - expect) > 0.02)
            fail_msg("sparsity %g: %.4f of the GEMMs empty, expected about %.4f", s, gemm,
                     expect);
        workload_fini(&wl);
    }
}

static void test_cholesky_fill_in(void **state)
{
    (void)state;
    enum { T = 30 };
    struct gen_params p;
    gen_params_cholesky(&p, T);
    p.cholesky.sparsity = 0.7;
    struct workload held, filled;
    generate_workload(&p, &held);
    p.cholesky.fill_in = true;
    generate_workload(&p, &filled);
    uint64_t empty_held[KINDS], empty_filled[KINDS], total[KINDS];
    check_emptiness(&held, T, false, empty_held, total);
    check_emptiness(&filled, T, true, empty_filled, total);
    /* The same tiles start empty; fill can only make tiles non-empty, so fewer tasks
     * are empty, and step 0 (before any fill) is the same. */
    assert_int_equal(held.object_count, filled.object_count);
    for (uint32_t o = 0; o < held.object_count; o++)
        assert_int_equal(held.objects[o].bytes, filled.objects[o].bytes);
    for (int kind = TRSM; kind < KINDS; kind++)
        assert_true(empty_filled[kind] < empty_held[kind]);
    for (uint32_t x = 0; x < held.count; x++) {
        uint32_t i, j, k;
        if (parse_id(held.tasks[x].id, &i, &j, &k) == TRSM && k == 0)
            assert_int_equal(held.tasks[x].kind, filled.tasks[x].kind);
    }
    workload_fini(&held);
    workload_fini(&filled);
}

static void test_cholesky_costs_and_scales(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_cholesky(&p, 5);
    p.cholesky.sparsity = 0;
    p.cholesky.tile_size = 100;
    p.duration = (struct gen_range){0.3, 0.3};
    p.time_scale = 0.5;
    p.data_scale = 0.25;
    struct workload wl;
    generate_workload(&p, &wl);
    static const double cost[KINDS] = {0.05, 0.15, 0.15, 0.3};
    for (uint32_t x = 0; x < wl.count; x++) {
        uint32_t i, j, k;
        int kind = parse_id(wl.tasks[x].id, &i, &j, &k);
        assert_true(fabs(wl.tasks[x].duration_s - cost[kind]) < 1e-9);
        assert_int_equal(wl.tasks[x].output_bytes, 8 * 100 * 100 / 4);
    }
    for (uint32_t o = 0; o < wl.object_count; o++)
        assert_int_equal(wl.objects[o].bytes, 8 * 100 * 100 / 4);
    workload_fini(&wl);

    /* A cost range draws each task's unit without moving an empty tile. */
    gen_params_cholesky(&p, 12);
    struct output fixed, ranged;
    generate(&p, &fixed);
    p.duration = (struct gen_range){0.005, 0.015};
    generate(&p, &ranged);
    struct workload a, b;
    char *cause = NULL;
    assert_int_equal(workload_parse(&a, fixed.text, fixed.len, "a", &cause), 0);
    assert_int_equal(workload_parse(&b, ranged.text, ranged.len, "b", &cause), 0);
    for (uint32_t x = 0; x < a.count; x++)
        assert_int_equal(a.tasks[x].kind, b.tasks[x].kind);
    workload_fini(&a);
    workload_fini(&b);
    free(fixed.text);
    free(ranged.text);
}

/* ------------------------------------------------------------------------------------ */
/* UTS */

/* The depth of every node (BFS order: a parent comes first) and its children count. */
static void check_tree(const struct workload *wl, const struct gen_uts *u)
{
    uint32_t *depth = calloc(wl->count, sizeof *depth);
    assert_non_null(depth);
    assert_string_equal(wl->tasks[0].id, "t0");
    assert_int_equal(wl->tasks[0].num_parents, 0);
    for (uint32_t x = 0; x < wl->count; x++) {
        const struct workload_task *t = &wl->tasks[x];
        char id[16];
        snprintf(id, sizeof id, "t%u", x);
        assert_string_equal(t->id, id);
        assert_int_equal(t->kind, TASK_SLEEP);
        if (x > 0) {
            assert_int_equal(t->num_parents, 1); /* a tree */
            depth[x] = depth[t->parents[0]] + 1;
            /* Breadth first: depths never decrease along the file. */
            assert_true(depth[x] >= depth[x - 1]);
        }
        if (u->depth)
            assert_true(depth[x] <= u->depth);
        if (x == 0)
            assert_int_equal(t->num_children, u->b);
        else
            assert_true(t->num_children == 0 || t->num_children == u->m);
        /* Children follow their parent's data: its output is their input. */
        assert_int_equal(t->output_bytes, 20);
    }
    free(depth);
}

static uint64_t tree_size(const struct gen_params *p)
{
    struct workload wl;
    generate_workload(p, &wl);
    check_tree(&wl, &p->uts);
    uint64_t n = wl.count;
    workload_fini(&wl);
    return n;
}

static void test_uts_shape(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_uts(&p, 0.01);
    /* q = 0: the root and its b children, whatever the seed. */
    p.uts = (struct gen_uts){.b = 7, .m = 3, .q = 0, .max_tasks = 100};
    assert_int_equal(tree_size(&p), 8);
    /* q = 1 with a depth limit: a full tree, 1 + b (1 + m + m^2). */
    p.uts = (struct gen_uts){.b = 2, .m = 3, .q = 1, .depth = 3, .max_tasks = 100};
    assert_int_equal(tree_size(&p), 1 + 2 * (1 + 3 + 9));
    assert_true(gen_uts_expected_tasks(&p.uts) == 27);
    /* depth 1: no grandchildren. */
    p.uts = (struct gen_uts){.b = 5, .m = 3, .q = 1, .depth = 1, .max_tasks = 100};
    assert_int_equal(tree_size(&p), 6);
    /* Sizes for fixed seeds: the tree is a function of the seed alone. */
    p.uts = (struct gen_uts){.b = 50, .m = 4, .q = 0.2, .depth = 6, .max_tasks = 100000};
    static const uint64_t sizes[] = {191, 99, 151};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        p.seed = seed;
        assert_int_equal(tree_size(&p), sizes[seed - 1]);
    }
    /* The paper's tree (b 120, m 5, q 0.200014), cut at depth 10. */
    gen_params_uts(&p, 0.01);
    p.uts.depth = 10;
    p.seed = 1;
    assert_int_equal(tree_size(&p), 1601);
}

static void test_uts_expected_size(void **state)
{
    (void)state;
    struct gen_uts u = {.b = 50, .m = 4, .q = 0.2, .depth = 6, .max_tasks = 100000};
    /* 1 + b (1 + r + ... + r^5), r = q m = 0.8. */
    double want = 1 + 50 * (1 + 0.8 + 0.64 + 0.512 + 0.4096 + 0.32768);
    assert_true(fabs(gen_uts_expected_tasks(&u) - want) < 1e-9);
    /* The mean of 300 seeded trees within 5% (about 3 standard errors) of it. */
    struct gen_params p;
    gen_params_uts(&p, 0);
    p.uts = u;
    double sum = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        p.seed = seed;
        sum += (double)gen_task_count(&p);
    }
    double mean = sum / 300;
    if (fabs(mean - want) > 0.05 * want)
        fail_msg("mean tree size %.2f, expected about %.2f", mean, want);
    /* Without a depth limit: 1 + b / (1 - qm) below criticality, infinite above. */
    u.depth = 0;
    assert_true(fabs(gen_uts_expected_tasks(&u) - (1 + 50 / 0.2)) < 1e-9);
    u.q = 0.25;
    assert_true(isinf(gen_uts_expected_tasks(&u)));
    assert_true(isnan(gen_uts_expected_tasks(NULL)));
}

static void test_uts_limit(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_uts(&p, 0.01);
    p.uts = (struct gen_uts){.b = 10, .m = 2, .q = 1, .depth = 5, .max_tasks = 62};
    /* The full tree has 1 + 10 (1 + 2 + 4 + 8 + 16) = 311 nodes; counting stops at the
     * limit + 1. */
    assert_int_equal(gen_task_count(&p), 63);
    expect_refusal(&p, "the tree grows past the limit of 62 tasks");
    p.uts.max_tasks = 311;
    assert_int_equal(gen_check(&p, NULL), 0);
    assert_int_equal(gen_task_count(&p), 311);
    /* A supercritical tree without a depth limit is stopped, not grown forever. */
    p.uts = (struct gen_uts){.b = 3, .m = 3, .q = 1, .max_tasks = 1000};
    expect_refusal(&p, "the tree grows past the limit of 1000 tasks");
    /* Nothing is written for a refused tree. */
    char buf[64];
    FILE *out = fmemopen(buf, sizeof buf, "w");
    assert_non_null(out);
    char *cause = NULL;
    assert_int_equal(gen_write(out, &p, &cause), -EINVAL);
    assert_int_equal(ftell(out), 0);
    fclose(out);
    free(cause);
}

/* ------------------------------------------------------------------------------------ */
/* Checks, determinism and the command line */

static void test_check_apps(void **state)
{
    (void)state;
    struct gen_params p;
    gen_params_cholesky(&p, 0);
    expect_refusal(&p, "the tile count must be at least 1");
    gen_params_cholesky(&p, 2344);
    expect_refusal(&p, "at most 2343 tiles");
    gen_params_cholesky(&p, 2343);
    assert_int_equal(gen_check(&p, NULL), 0);
    gen_params_cholesky(&p, 4);
    p.cholesky.sparsity = 1.5;
    expect_refusal(&p, "the sparsity must be a number from 0 to 1");
    p.cholesky.sparsity = NAN;
    expect_refusal(&p, "the sparsity must be a number from 0 to 1");
    gen_params_cholesky(&p, 4);
    p.cholesky.tile_size = 0;
    expect_refusal(&p, "the tile size must be at least 1");
    gen_params_cholesky(&p, 4);
    p.output_bytes = (struct gen_range){5, 5};
    expect_refusal(&p, "their size comes from the tile size");
    gen_params_cholesky(&p, 4);
    p.tasks = 3;
    expect_refusal(&p, "follows from their parameters");
    gen_params_cholesky(&p, 4);
    p.kind = TASK_NOOP;
    p.duration = (struct gen_range){0, 0};
    expect_refusal(&p, "are sleep tasks");

    gen_params_uts(&p, 1);
    p.uts.b = 0;
    expect_refusal(&p, "b must be at least 1");
    gen_params_uts(&p, 1);
    p.uts.m = 0;
    expect_refusal(&p, "m must be at least 1");
    gen_params_uts(&p, 1);
    p.uts.q = -0.1;
    expect_refusal(&p, "q must be a number from 0 to 1");
    gen_params_uts(&p, 1);
    p.uts.max_tasks = 0;
    expect_refusal(&p, "the task limit must be between 1 and");

    /* Another shape's parameters are refused, not ignored. */
    gen_params_seismic(&p, 10, 1);
    p.cholesky.tiles = 3;
    expect_refusal(&p, "tile parameters are only for cholesky");
    gen_params_seismic(&p, 10, 1);
    p.uts.q = 0.5;
    expect_refusal(&p, "tree parameters are only for uts");
    gen_params_seismic(&p, 0, 1);
    expect_refusal(&p, "the task count must be at least 1");

    assert_int_equal(gen_shape_parse("seismic"), GEN_SEISMIC);
    assert_int_equal(gen_shape_parse("cholesky"), GEN_CHOLESKY);
    assert_int_equal(gen_shape_parse("uts"), GEN_UTS);
    assert_string_equal(gen_shape_name(GEN_UTS), "uts");
}

static void test_seed_apps(void **state)
{
    (void)state;
    struct gen_params p[2];
    gen_params_cholesky(&p[0], 15);
    gen_params_uts(&p[1], 0.01);
    p[1].uts.depth = 8;
    for (int k = 0; k < 2; k++) {
        p[k].seed = 21;
        struct output a, b, c;
        generate(&p[k], &a);
        generate(&p[k], &b);
        p[k].seed = 22;
        generate(&p[k], &c);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.text, b.text, a.len);
        assert_true(a.len != c.len || memcmp(a.text, c.text, a.len) != 0);
        free(a.text);
        free(b.text);
        free(c.text);
    }
}

static void test_command_apps(void **state)
{
    (void)state;
    char path[] = "/tmp/test_gen_apps_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct workload wl;
    char *cause = NULL;

    assert_int_equal(run_gen("seismic", "--shots", "48", "--cost", "60", "--time-scale",
                             "0.001", "-o", path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.count, 48);
    assert_true(wl.tasks[47].duration_s == 0.06);
    workload_fini(&wl);

    assert_int_equal(run_gen("cholesky", "--tiles", "6", "--sparsity", "0.5", "--nodes", "4",
                             "--tile-size", "20", "--tile-cost", "0.002", "--seed", "3", "-o",
                             path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.count, 6 + 30 + 20);
    assert_int_equal(wl.object_count, 21);
    assert_int_equal(wl.objects[0].node, 0);
    uint32_t empty = 0;
    for (uint32_t o = 0; o < wl.object_count; o++)
        empty += wl.objects[o].bytes == 0;
    assert_int_equal(empty, 8); /* round(0.5 * 15) */
    int64_t gemm = workload_find(&wl, "gemm_5_4_3");
    assert_true(gemm >= 0);
    workload_fini(&wl);
    assert_int_equal(run_gen("cholesky", "--tiles", "6", "--fill-in", "-o", path, NULL),
                     EXIT_OK_);

    assert_int_equal(run_gen("uts", "--b", "4", "--m", "2", "--q", "0.5", "--depth", "5",
                             "--cost", "0.001", "--seed", "9", "-o", path, NULL),
                     EXIT_OK_);
    assert_int_equal(workload_load(&wl, path, &cause), 0);
    assert_int_equal(wl.tasks[0].num_children, 4);
    workload_fini(&wl);
    unlink(path);

    /* Refusals name the flag. */
    assert_int_equal(run_gen("seismic", "--cost", "1", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("seismic", "--shots", "5", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("seismic", "--shots", "0", "--cost", "1", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("seismic", "--tasks", "5", "--cost", "1", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("seismic", "--shots", "5", "--duration", "1", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("seismic", "--shots", "5", "--cost", "1", "--kind", "noop", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("seismic", "--shots", "5", "--cost", "x", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("seismic", "--shots", "5", "--cost", "1", "--tiles", "3", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", "--tiles", "0", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", "--tiles", "3000", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", "--tiles", "3", "--sparsity", "1.2", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", "--tiles", "3", "--sparsity", "-1", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", "--tiles", "3", "--nodes", "0", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", "--tiles", "3", "--output-bytes", "5", NULL),
                     EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", "--tiles", "3", "--cost", "1", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("cholesky", "--tiles", "3", "--q", "0.5", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("uts", NULL), EXIT_USAGE); /* --cost */
    assert_int_equal(run_gen("uts", "--cost", "1", "--q", "2", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("uts", "--cost", "1", "--b", "0", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("uts", "--cost", "1", "--depth", "0", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("uts", "--cost", "1", "--q", "0.3", NULL), EXIT_USAGE); /* grows */
    assert_int_equal(run_gen("uts", "--cost", "1", "--max-tasks", "50", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("uts", "--cost", "1", "--tiles", "3", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--b", "3", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("bot", "--tasks", "3", "--shots", "3", NULL), EXIT_USAGE);
    assert_int_equal(run_gen("allpairs", "-n", "3", "--fill-in", NULL), EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seismic),
        cmocka_unit_test(test_cholesky_dense),
        cmocka_unit_test(test_cholesky_gemm_order),
        cmocka_unit_test(test_cholesky_owner),
        cmocka_unit_test(test_cholesky_sparsity),
        cmocka_unit_test(test_cholesky_fill_in),
        cmocka_unit_test(test_cholesky_costs_and_scales),
        cmocka_unit_test(test_uts_shape),
        cmocka_unit_test(test_uts_expected_size),
        cmocka_unit_test(test_uts_limit),
        cmocka_unit_test(test_check_apps),
        cmocka_unit_test(test_seed_apps),
        cmocka_unit_test(test_command_apps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
