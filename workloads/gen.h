/*
 * gen — synthetic workload generators: bag of tasks, fan-in, fan-out and pipeline DAGs,
 * written as JSON Lines (the format of core/model/workload.h) to a stream.
 *
 * Owns nothing between calls.  Called by `jackdaw gen` (tools/cmd_gen.c), benchmarks
 * and tests.  Output depends only on the parameters: the same seed gives the same
 * bytes on every machine.  Ids are "t0", "t1", ... in file order, and the file order is
 * topological (every parent is written before its children).
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
    GEN_SHAPE_COUNT
};

/* A value drawn uniformly from [lo, hi]; fixed when lo == hi. */
struct gen_range {
    double lo;
    double hi;
};

struct gen_params {
    enum gen_shape shape;
    uint32_t tasks;             /* total number of tasks, >= 1 */
    uint32_t degree;            /* fan-in / fan-out only, >= 1 (default 2) */
    uint32_t pipe_size;         /* pipeline only, >= 1 (default 4) */
    uint8_t kind;               /* enum task_kind (default noop) */
    const char *cmd;            /* borrowed; command tasks only, required for them */
    struct gen_range duration;  /* seconds, sleep tasks only; drawn to the microsecond */
    struct gen_range output_bytes; /* whole bytes, every kind (default 0) */
    uint64_t seed;              /* default 1 */
};

#define GEN_DEFAULT_DEGREE 2
#define GEN_DEFAULT_PIPE_SIZE 4
#define GEN_DEFAULT_SEED 1

/* Fills the defaults above (shape bot, one task). */
void gen_params_init(struct gen_params *p);

/* "bot", "fanin", "fanout", "pipeline"; NULL when out of range. */
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

/* Writes the whole workload.  The stream is not flushed or closed; a write error is
 * returned as soon as the stream reports it. */
int gen_write(FILE *out, const struct gen_params *p, char **cause);

#endif
