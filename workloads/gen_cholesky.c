/*
 * gen_cholesky — the tiled sparse Cholesky factorisation of paper 004 §4.1 (the kernels,
 * costs and sparsity rules are in gen.h, struct gen_cholesky).
 *
 * Writes the T(T+1)/2 tile objects of the lower triangle, then the tasks step by step
 * (POTRF, the TRSMs, the SYRKs, the GEMMs of step K), which is a topological order.
 * Each task waits for the last writer of every tile it reads or updates:
 *   POTRF(K)     after SYRK(K,K-1)
 *   TRSM(I,K)    after POTRF(K) and GEMM(I,K,K-1)
 *   SYRK(I,K)    after TRSM(I,K) and SYRK(I,K-1)
 *   GEMM(I,J,K)  after TRSM(I,K), TRSM(J,K) and GEMM(I,J,K-1)
 * (the K-1 terms only when K > 0).  The DAG is the dense one whatever the sparsity: paper
 * 004's tasks on empty tiles exist and do nothing, so sparsity changes costs and data,
 * never the shape, and runs of one T compare task for task.
 *
 * Initial placement: the tile objects are pinned to their 2D block-cyclic owners (or
 * spread when no node count is given), and every task lists as its one declared input
 * the tile it updates, as PaRSEC's owner-computes rule places work with its data.  The
 * runtime lists declared inputs before parents' outputs, and all tiles have one size,
 * so a task that becomes ready on a node holding none of its tiles is sent by
 * data-aware placement to the owner of the tile it updates: placement and the initial
 * distribution agree.  That double counts the updated tile (its object and the previous
 * update's output), which is the point: it is the tile that stays where it lives.
 *
 * Memory: one byte per lower tile for the pattern, 2.7 MB at T = 2343 (the largest T
 * whose tasks fit a workload with objects).  Randomness: the empty tiles come from the
 * seed's stream (selection sampling: exactly round(sparsity * T(T-1)/2) of them, every
 * such set equally likely); drawn costs, when the cost is a range, from a second stream,
 * so that changing the cost never moves an empty tile.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/workload.h"
#include "workloads/gen_internal.h"

/* Room for "gemm_" + 3 x 10 digits + 2 "_" + NUL. */
#define ID_SIZE 48
/* Above this T, T^3 is no longer a safe uint64 product (and far past any workload). */
#define MAX_TILES 65536u
/* A tile of n^2 64-bit elements. */
#define ELEMENT_BYTES 8

static int check_error(char **cause, const char *reason)
{
    if (cause)
        *cause = xstrdup(reason);
    return -EINVAL;
}

uint64_t gen_cholesky_tasks(uint32_t tiles)
{
    uint64_t t = tiles;
    if (t == 0 || t > MAX_TILES)
        return 0;
    /* POTRF T, TRSM and SYRK T(T-1)/2 each, GEMM T(T-1)(T-2)/6. */
    return t + t * (t - 1) + t * (t - 1) * (t - 2) / 6;
}

int gen_cholesky_check(const struct gen_params *p, char **cause)
{
    const struct gen_cholesky *c = &p->cholesky;
    if (c->tiles < 1)
        return check_error(cause, "the tile count must be at least 1");
    if (c->tiles > MAX_TILES || gen_cholesky_tasks(c->tiles) > WORKLOAD_MAX_OBJECTS)
        return check_error(cause, "too many tiles (the tasks of a workload with objects "
                                  "number at most 2147483647: at most 2343 tiles)");
    if (!(c->sparsity >= 0 && c->sparsity <= 1))
        return check_error(cause, "the sparsity must be a number from 0 to 1");
    if (c->tile_size < 1)
        return check_error(cause, "the tile size must be at least 1");
    double bytes = (double)ELEMENT_BYTES * c->tile_size * c->tile_size;
    if (bytes * (p->data_scale > 1 ? p->data_scale : 1) >= GEN_MAX_EXACT)
        return check_error(cause, "the tile size makes tiles too large (2^53 bytes or more)");
    if (c->nodes > INT32_MAX)
        return check_error(cause, "too many nodes");
    if (!(p->output_bytes.lo == 0 && p->output_bytes.hi == 0))
        return check_error(cause, "cholesky outputs are tiles: their size comes from the "
                                  "tile size");
    return 0;
}

void gen_cholesky_grid(uint32_t nodes, uint32_t *rows, uint32_t *cols)
{
    uint32_t r = 1;
    for (uint32_t d = 1; nodes && (uint64_t)d * d <= nodes; d++)
        if (nodes % d == 0)
            r = d;
    *rows = r;
    *cols = nodes ? nodes / r : 1;
}

uint32_t gen_cholesky_owner(uint32_t nodes, uint32_t i, uint32_t j)
{
    uint32_t rows, cols;
    gen_cholesky_grid(nodes, &rows, &cols);
    return (i % rows) * cols + j % cols;
}

/* The pattern: one byte per tile of the lower triangle, row after row. */
static size_t tile_at(uint32_t i, uint32_t j)
{
    return (size_t)i * (i + 1) / 2 + j;
}

/*
 * Marks exactly round(sparsity * T(T-1)/2) off-diagonal tiles empty (0) and the rest
 * non-empty (1), by selection sampling (Knuth, TAOCP 3.4.2, Algorithm S): each tile in
 * turn is taken with probability (still to take) / (still to see).
 */
static unsigned char *draw_pattern(const struct gen_params *p)
{
    uint32_t t = p->cholesky.tiles;
    unsigned char *full = xmalloc(tile_at(t, 0));
    uint64_t off_diagonal = (uint64_t)t * (t - 1) / 2;
    uint64_t to_take = (uint64_t)llround(p->cholesky.sparsity * (double)off_diagonal);
    uint64_t to_see = off_diagonal;
    uint64_t rng = p->seed;
    for (uint32_t i = 0; i < t; i++) {
        for (uint32_t j = 0; j < i; j++) {
            bool empty = to_take > 0 && (double)to_see * gen_rng_unit(&rng) < (double)to_take;
            full[tile_at(i, j)] = !empty;
            to_take -= empty;
            to_see--;
        }
        full[tile_at(i, i)] = 1;
    }
    return full;
}

enum kernel { POTRF, TRSM, SYRK, GEMM };

/* Flops of each kernel in units of n^3 (the unit cost). */
static const double flops[] = {[POTRF] = 1.0 / 3, [TRSM] = 1, [SYRK] = 1, [GEMM] = 2};

struct writer {
    FILE *out;
    const struct gen_params *p;
    unsigned char *full;        /* owned; the pattern, updated by fill-in */
    uint64_t cost_rng;
    uint64_t tile_bytes;        /* after the data scale */
    char id[ID_SIZE];
    char parents[3][ID_SIZE];
    char input[ID_SIZE];
};

static const char *parent_name(void *ctx, uint32_t k)
{
    return ((struct writer *)ctx)->parents[k];
}

static const char *input_name(void *ctx, uint32_t k)
{
    (void)k;
    return ((struct writer *)ctx)->input;
}

/* Writes the task now in w->id, w->parents and w->input: a sleep of its kernel's cost,
 * or a noop without output when it is empty. */
static int write_task(struct writer *w, enum kernel kind, uint32_t num_parents, bool empty)
{
    const struct gen_params *p = w->p;
    /* Drawn even for an empty task, so the pattern never shifts the other draws. */
    double unit = gen_draw_seconds(&w->cost_rng, p->duration, 1);
    struct workload_task t = {
        .id = w->id,
        .kind = empty ? TASK_NOOP : TASK_SLEEP,
        .stealable = true,
        .duration_s = empty ? 0 : round(unit * flops[kind] * p->time_scale * 1e6) / 1e6,
        .output_bytes = empty ? 0 : w->tile_bytes,
        .num_parents = num_parents,
        .num_inputs = 1,
    };
    return workload_write_task_named(w->out, &t, parent_name, input_name, w);
}

static int write_objects(struct writer *w)
{
    uint32_t t = w->p->cholesky.tiles, nodes = w->p->cholesky.nodes;
    int rc = 0;
    for (uint32_t i = 0; i < t && rc == 0; i++) {
        for (uint32_t j = 0; j <= i && rc == 0; j++) {
            snprintf(w->id, sizeof w->id, "a_%u_%u", i, j);
            struct workload_object o = {
                .id = w->id,
                .bytes = w->full[tile_at(i, j)] ? w->tile_bytes : 0,
                .node = nodes ? (int32_t)gen_cholesky_owner(nodes, i, j) : WORKLOAD_NODE_SPREAD,
            };
            rc = workload_write_object(w->out, &o);
        }
    }
    return rc;
}

/* Step k: POTRF(k), then TRSM(i,k), SYRK(i,k) and GEMM(i,j,k) for i > j > k. */
static int write_step(struct writer *w, uint32_t k)
{
    uint32_t t = w->p->cholesky.tiles;
    bool fill_in = w->p->cholesky.fill_in;
    unsigned char *full = w->full;
    int rc;

    /* The K-1 parents are named only when they exist (K > 0). */
    uint32_t prev = k > 0;
    snprintf(w->id, sizeof w->id, "potrf_%u", k);
    if (prev)
        snprintf(w->parents[0], ID_SIZE, "syrk_%u_%u", k, k - 1);
    snprintf(w->input, ID_SIZE, "a_%u_%u", k, k);
    if ((rc = write_task(w, POTRF, prev, false)))
        return rc;

    for (uint32_t i = k + 1; i < t; i++) {
        snprintf(w->id, sizeof w->id, "trsm_%u_%u", i, k);
        snprintf(w->parents[0], ID_SIZE, "potrf_%u", k);
        if (prev)
            snprintf(w->parents[1], ID_SIZE, "gemm_%u_%u_%u", i, k, k - 1);
        snprintf(w->input, ID_SIZE, "a_%u_%u", i, k);
        if ((rc = write_task(w, TRSM, 1 + prev, !full[tile_at(i, k)])))
            return rc;
    }
    for (uint32_t i = k + 1; i < t; i++) {
        snprintf(w->id, sizeof w->id, "syrk_%u_%u", i, k);
        snprintf(w->parents[0], ID_SIZE, "trsm_%u_%u", i, k);
        if (prev)
            snprintf(w->parents[1], ID_SIZE, "syrk_%u_%u", i, k - 1);
        snprintf(w->input, ID_SIZE, "a_%u_%u", i, i);
        if ((rc = write_task(w, SYRK, 1 + prev, !full[tile_at(i, k)])))
            return rc;
    }
    for (uint32_t i = k + 2; i < t; i++) {
        for (uint32_t j = k + 1; j < i; j++) {
            snprintf(w->id, sizeof w->id, "gemm_%u_%u_%u", i, j, k);
            snprintf(w->parents[0], ID_SIZE, "trsm_%u_%u", i, k);
            snprintf(w->parents[1], ID_SIZE, "trsm_%u_%u", j, k);
            if (prev)
                snprintf(w->parents[2], ID_SIZE, "gemm_%u_%u_%u", i, j, k - 1);
            snprintf(w->input, ID_SIZE, "a_%u_%u", i, j);
            bool product = full[tile_at(i, k)] && full[tile_at(j, k)];
            bool empty = fill_in ? !product : !(product && full[tile_at(i, j)]);
            /* A non-zero product fills an empty target; every later task reading the
             * tile sees it, which is why steps are written in order. */
            if (fill_in && product)
                full[tile_at(i, j)] = 1;
            if ((rc = write_task(w, GEMM, 2 + prev, empty)))
                return rc;
        }
    }
    return 0;
}

int gen_cholesky_write(FILE *out, const struct gen_params *p)
{
    uint32_t n = p->cholesky.tile_size;
    struct writer w = {
        .out = out,
        .p = p,
        .full = draw_pattern(p),
        .cost_rng = p->seed ^ 0x6a09e667f3bcc909ULL, /* any constant: a second stream */
        .tile_bytes = (uint64_t)llround((double)ELEMENT_BYTES * n * n * p->data_scale),
    };
    int rc = write_objects(&w);
    for (uint32_t k = 0; k < p->cholesky.tiles && rc == 0; k++)
        rc = write_step(&w, k);
    free(w.full);
    return rc;
}
