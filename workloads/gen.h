/*
 * gen — synthetic workload generators, written as JSON Lines (the format of
 * core/model/workload.h) to a stream: the benchmark DAGs (bag of tasks, fan-in, fan-out,
 * pipeline; paper 002 §4.2, Table 3) and the two data-intensive applications of paper
 * 000 §IV.C (all-pairs, image stacking), whose input files are object lines.
 *
 * Owns nothing between calls.  Called by `jackdaw gen` (tools/cmd_gen.c), benchmarks
 * and tests.  Output depends only on the parameters: the same seed gives the same
 * bytes on every machine.  Object lines come first, then the tasks in a topological
 * order (every parent is written before its children).  Ids:
 *   bot, fanin, fanout, pipeline: tasks t0, t1, ... in file order;
 *   allpairs: objects a0..a(N-1) (set A), b0..b(N-1) (set B); task t_I_J reads aI, bJ;
 *   imagestack: objects f0..f(M-1); stacking tasks t0..t(T-1); the aggregation task
 *   "tend" (paper 000, Figure 3) last.
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
    GEN_SHAPE_COUNT
};

/* A value drawn uniformly from [lo, hi]; fixed when lo == hi. */
struct gen_range {
    double lo;
    double hi;
};

struct gen_params {
    enum gen_shape shape;
    uint32_t tasks;             /* total number of tasks, >= 1; imagestack: stacking
                                 * tasks (the aggregation task is one more); unused by
                                 * allpairs, whose count is set_size^2 */
    uint32_t degree;            /* fan-in / fan-out only, >= 1 (default 2) */
    uint32_t pipe_size;         /* pipeline only, >= 1 (default 4) */
    uint32_t set_size;          /* allpairs only: files per set, >= 1 (else 0) */
    double locality;            /* imagestack only: tasks per file, >= 1 and <= tasks; a
                                 * real number (the paper runs 1.38) (else 0) */
    uint8_t kind;               /* enum task_kind (default noop) */
    const char *cmd;            /* borrowed; command tasks only, required for them */
    struct gen_range duration;  /* seconds, sleep tasks only; drawn to the microsecond */
    struct gen_range output_bytes; /* whole bytes, every kind (default 0) */
    struct gen_range file_bytes; /* whole bytes; allpairs and imagestack only (else 0) */
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

/* Fills the defaults above (shape bot, one noop task, no scaling). */
void gen_params_init(struct gen_params *p);
/* Resets `p` to the paper's workload of that shape, sleep tasks: Table 3 for bot, fanin,
 * fanout and pipeline (`tasks` of them), all-pairs over two sets of `set_size` files,
 * image stacking of `tasks` tasks at `locality`.  Callers override fields after. */
void gen_params_table3(struct gen_params *p, enum gen_shape shape, uint32_t tasks);
void gen_params_allpairs(struct gen_params *p, uint32_t set_size);
void gen_params_imagestack(struct gen_params *p, uint32_t tasks, double locality);

/* "bot", "fanin", "fanout", "pipeline", "allpairs", "imagestack"; NULL when out of
 * range. */
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
 * files and set_size^2 tasks. */
uint64_t gen_task_count(const struct gen_params *p);
uint64_t gen_object_count(const struct gen_params *p);

/* Writes the whole workload.  The stream is not flushed or closed; a write error is
 * returned as soon as the stream reports it. */
int gen_write(FILE *out, const struct gen_params *p, char **cause);

#endif
