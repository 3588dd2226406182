/*
 * gen — synthetic workload generators, written as JSON Lines (the format of
 * core/model/workload.h) to a stream: the benchmark DAGs (bag of tasks, fan-in, fan-out,
 * pipeline; paper 002 §4.2, Table 3), the two data-intensive applications of paper
 * 000 §IV.C (all-pairs, image stacking), whose input files are object lines, and the
 * work-stealing benchmarks of papers 001 and 004: seismic shots, the tiled sparse
 * Cholesky factorisation and the unbalanced tree search (gen_cholesky.c, gen_uts.c).
 *
 * Owns nothing between calls.  Called by `jackdaw gen` (tools/cmd/cmd_gen.c), benchmarks
 * and tests.  Output depends only on the parameters: the same seed gives the same
 * bytes on every machine.  Object lines come first, then the tasks in a topological
 * order (every parent is written before its children).  Ids:
 *   bot, fanin, fanout, pipeline: tasks t0, t1, ... in file order;
 *   allpairs: objects a0..a(N-1) (set A), b0..b(N-1) (set B); task t_I_J reads aI, bJ;
 *   imagestack: objects f0..f(M-1); stacking tasks t0..t(T-1); the aggregation task
 *   "tend" (paper 000, Figure 3) last;
 *   seismic: shots t0, t1, ...;
 *   cholesky: tile objects a_I_J (I >= J), then per step K: potrf_K, trsm_I_K,
 *   syrk_I_K, gemm_I_J_K (I > J > K);
 *   uts: tree nodes t0 (the root), t1, ... in breadth-first order.
 *
 * Return convention (core/): 0, or a negative errno with *cause set to an owned string.
 */
#ifndef JACKDAW_GEN_H
#define JACKDAW_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum gen_shape {
    GEN_BOT = 0,        /* `tasks` independent tasks */
    GEN_FANIN = 1,      /* a tree converging on one sink; each task has <= degree parents */
    GEN_FANOUT = 2,     /* a tree from one root; each task has <= degree children */
    GEN_PIPELINE = 3,   /* independent chains of pipe_size tasks (the last may be shorter) */
    GEN_ALLPAIRS = 4,   /* set_size^2 independent tasks, each reading one file of each set */
    GEN_IMAGESTACK = 5, /* `tasks` tasks sharing files `locality` to a file, then one
                         * aggregation task whose parents are all of them */
    GEN_SEISMIC = 6,    /* `tasks` independent shots of one cost (paper 001 §3) */
    GEN_CHOLESKY = 7,   /* the tiled sparse Cholesky factorisation (paper 004 §4.1) */
    GEN_UTS = 8,        /* unbalanced tree search, binomial tree (paper 004 §4.4) */
    GEN_SHAPE_COUNT
};

/* A value drawn uniformly from [lo, hi]; fixed when lo == hi. */
struct gen_range {
    double lo;
    double hi;
};

/*
 * The tiled Cholesky factorisation A = L L^T of a symmetric matrix of T x T tiles of
 * n x n 64-bit elements, right-looking, one task per tile kernel:
 *   for K in 0..T-1:   POTRF(K)       L(K,K) = chol(A(K,K))
 *     for I > K:       TRSM(I,K)      L(I,K) = A(I,K) L(K,K)^-T
 *     for I > K:       SYRK(I,K)      A(I,I) -= L(I,K) L(I,K)^T
 *     for I > J > K:   GEMM(I,J,K)    A(I,J) -= L(I,K) L(J,K)^T
 * Costs follow the flop counts: POTRF n^3/3, TRSM n^3, SYRK n^3, GEMM 2 n^3, with
 * params.duration the time of n^3 flops (one TRSM) at speed 1.  Every task writes one
 * tile of 8 n^2 bytes.  A fraction `sparsity` of the T(T-1)/2 off-diagonal tiles is
 * empty (chosen by the seed; the diagonal never is): a task whose product is zero does
 * no work and is a noop with no output.  Without fill_in the pattern is held, as in
 * paper 004's benchmark: a task is empty when any tile it reads or updates is empty.
 * With fill_in the factorisation's own fill is followed: a GEMM of two non-empty tiles
 * fills its target, and a task is empty when a tile it multiplies is.
 */
struct gen_cholesky {
    uint32_t tiles;             /* T, >= 1 */
    double sparsity;            /* in [0, 1] */
    uint32_t tile_size;         /* n, elements per tile side, >= 1 */
    uint32_t nodes;             /* P: tile (I,J) is pinned to its 2D block-cyclic owner
                                 * on P nodes (gen_cholesky_owner); 0: "spread" */
    bool fill_in;
};

/*
 * Unbalanced tree search (Olivier et al., the binomial tree of paper 004 §4.4): the root
 * has b children; every other node has m children with probability q, else none.  A
 * node's children are its tasks' children in the DAG (spawning modelled as a
 * dependency), drawn with the seed.  Depth counts from the root (0); nodes at `depth`
 * have no children.  The tree's size is random: a tree of more than max_tasks nodes is
 * refused rather than truncated, which would change its shape.
 */
struct gen_uts {
    uint32_t b;                 /* >= 1 */
    uint32_t m;                 /* >= 1 */
    double q;                   /* in [0, 1] */
    uint32_t depth;             /* >= 1; 0: no limit */
    uint32_t max_tasks;         /* >= 1 */
};

struct gen_params {
    enum gen_shape shape;
    uint32_t tasks;             /* total number of tasks, >= 1; imagestack: stacking
                                 * tasks (the aggregation task is one more); seismic:
                                 * shots; unused by allpairs, whose count is set_size^2,
                                 * and by cholesky and uts (else 0) */
    uint32_t degree;            /* fan-in / fan-out only, >= 1 (default 2) */
    uint32_t pipe_size;         /* pipeline only, >= 1 (default 4) */
    uint32_t set_size;          /* allpairs only: files per set, >= 1 (else 0) */
    double locality;            /* imagestack only: tasks per file, >= 1 and <= tasks; a
                                 * real number (the paper runs 1.38) (else 0) */
    struct gen_cholesky cholesky; /* cholesky only (else zero) */
    struct gen_uts uts;         /* uts only (else zero) */
    uint8_t kind;               /* enum task_kind (default noop) */
    const char *cmd;            /* borrowed; command tasks only, required for them */
    struct gen_range duration;  /* seconds, sleep tasks only; drawn to the microsecond;
                                 * seismic: a shot; uts: a tree node; cholesky: n^3 flops */
    struct gen_range output_bytes; /* whole bytes, every kind (default 0) */
    struct gen_range file_bytes; /* whole bytes; allpairs and imagestack only (else 0) */
    /* allpairs and imagestack: each input file pinned to a node drawn uniformly from
     * 0..file_nodes-1 (paper 000 §IV.C: "uniformly distributed to each compute node"),
     * so nodes hold unequal shares as in the paper; 0: "spread", file k on node k mod
     * the cluster's size, every node an equal share.  Drawn from a stream of its own, so
     * sizes and durations are those of the spread workload of the same seed. */
    uint32_t file_nodes;
    /* Multipliers applied after drawing, so a scaled workload is the unscaled one (same
     * seed, same DAG) with every byte count, resp. duration, multiplied and rounded (to
     * the byte, resp. microsecond).  Shrinking data with --data-scale while the cluster's
     * bandwidth shrinks by the same factor keeps transfer times. */
    double data_scale;          /* >= 0, default 1: object bytes and output bytes */
    double time_scale;          /* >= 0, default 1: durations (sleep tasks only) */
    uint64_t seed;              /* default 1 */
};

#define GEN_DEFAULT_DEGREE 2
#define GEN_DEFAULT_PIPE_SIZE 4
#define GEN_DEFAULT_SEED 1

/* Paper 002 Table 3 (the same for every DAG): durations uniform over 0-100 ms (50 ms
 * mean), outputs uniform over 0-10 MB (5 MB mean), in- and out-degree and pipe size 10.
 * The paper runs 1000 tasks per executing thread. */
#define GEN_TABLE3_DURATION_HI 0.1
#define GEN_TABLE3_OUTPUT_HI 10000000.0
#define GEN_TABLE3_DEGREE 10
#define GEN_TABLE3_PIPE_SIZE 10

/* Paper 000 §IV.C.2 and 002 §4.1.2: 12 MB files (500 per set in the paper), 100 ms
 * tasks.  The paper states no result size; nothing reads it, so it defaults to 0. */
#define GEN_ALLPAIRS_FILE_BYTES 12000000.0
#define GEN_ALLPAIRS_DURATION 0.1

/* Paper 000 §IV.C.1 and 002 §4.1.1: 2 MB files, 10 KB outputs, 158 ms tasks. */
#define GEN_IMAGESTACK_FILE_BYTES 2000000.0
#define GEN_IMAGESTACK_OUTPUT_BYTES 10000.0
#define GEN_IMAGESTACK_DURATION 0.158

/* Paper 004 §4: 50 x 50 tiles of 64-bit elements, half the tiles dense. */
#define GEN_CHOLESKY_TILE_SIZE 50
#define GEN_CHOLESKY_SPARSITY 0.5
/* Not in the paper, whose times are dominated by its runtime: 10 ms per n^3 flops, so
 * that a GEMM (20 ms) is long next to a scheduling decision. */
#define GEN_CHOLESKY_TILE_COST 0.01
/* Paper 004 Fig. 7: b = 120, m = 5, q = 0.200014 (q m just above 1: a critical tree). */
#define GEN_UTS_B 120
#define GEN_UTS_M 5
#define GEN_UTS_Q 0.200014
#define GEN_UTS_MAX_TASKS 1000000
/* A UTS node hands its children a 20-byte SHA-1 descriptor: their one input, which
 * data-aware placement follows back to the parent's node. */
#define GEN_UTS_OUTPUT_BYTES 20.0

/* Fills the defaults above (shape bot, one noop task, no scaling). */
void gen_params_init(struct gen_params *p);
/* Resets `p` to the paper's workload of that shape, sleep tasks: Table 3 for bot, fanin,
 * fanout and pipeline (`tasks` of them), all-pairs over two sets of `set_size` files,
 * image stacking of `tasks` tasks at `locality`.  Callers override fields after. */
void gen_params_table3(struct gen_params *p, enum gen_shape shape, uint32_t tasks);
void gen_params_allpairs(struct gen_params *p, uint32_t set_size);
void gen_params_imagestack(struct gen_params *p, uint32_t tasks, double locality);
/* `shots` sleep tasks of `cost` seconds; no data. */
void gen_params_seismic(struct gen_params *p, uint32_t shots, double cost);
/* T tiles per side at the paper's tile size and sparsity, GEN_CHOLESKY_TILE_COST,
 * objects spread, the pattern held. */
void gen_params_cholesky(struct gen_params *p, uint32_t tiles);
/* The paper's b, m and q, no depth limit, GEN_UTS_MAX_TASKS, nodes of `cost` seconds
 * with GEN_UTS_OUTPUT_BYTES outputs. */
void gen_params_uts(struct gen_params *p, double cost);

/* "bot", "fanin", "fanout", "pipeline", "allpairs", "imagestack", "seismic",
 * "cholesky", "uts"; NULL when out of range. */
const char *gen_shape_name(enum gen_shape shape);
/* Returns the shape, or -EINVAL for an unknown name. */
int gen_shape_parse(const char *name);

/*
 * Parses "D" (fixed) or "A-B" (uniform, A <= B); numbers >= 0.  With `integer`, both
 * bounds must be whole numbers below 2^53 (byte counts).  *cause says what is wrong.
 */
int gen_range_parse(const char *text, bool integer, struct gen_range *range, char **cause);

/* Checks the parameters without writing anything (commands call it to tell a usage
 * error from a write error). */
int gen_check(const struct gen_params *p, char **cause);

/* Tasks and object lines gen_write writes for valid parameters: imagestack has
 * round(tasks / locality) files (at least 1) and tasks + 1 tasks; allpairs 2 * set_size
 * files and set_size^2 tasks; cholesky T(T+1)/2 tiles and T + T(T-1) + T(T-1)(T-2)/6
 * tasks.  For uts the tree is grown (time linear in its size, no memory) and the count
 * stops at max_tasks + 1. */
uint64_t gen_task_count(const struct gen_params *p);
uint64_t gen_object_count(const struct gen_params *p);

/* The expected size of a UTS tree: 1 + b (1 + qm + ... + (qm)^(depth-1)); without a
 * depth limit 1 + b / (1 - qm), and +inf when qm >= 1. */
double gen_uts_expected_tasks(const struct gen_uts *u);

/* The process grid of P nodes: rows the largest divisor of P not above sqrt(P), columns
 * P / rows (ScaLAPACK's near-square p <= q).  Tile (I, J) is owned by node
 * (I mod rows) * cols + (J mod cols). */
void gen_cholesky_grid(uint32_t nodes, uint32_t *rows, uint32_t *cols);
uint32_t gen_cholesky_owner(uint32_t nodes, uint32_t i, uint32_t j);

/* Writes the whole workload.  The stream is not flushed or closed; a write error is
 * returned as soon as the stream reports it. */
int gen_write(FILE *out, const struct gen_params *p, char **cause);

#endif
