/*
 * gen_internal — what the generator files (gen.c, gen_cholesky.c, gen_uts.c) share:
 * the random stream, the draws, and each family's writer.  Not for other modules: they
 * use gen.h.
 *
 * The writers take parameters gen_check accepted and return 0 or the stream's negative
 * errno; gen_write turns that into a cause.
 */
#ifndef JACKDAW_GEN_INTERNAL_H
#define JACKDAW_GEN_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "workloads/gen.h"

/* Byte counts travel through doubles; above this they stop being exact integers. */
#define GEN_MAX_EXACT 9007199254740992.0 /* 2^53 */

/* splitmix64: the next value of the stream whose state is *state. */
uint64_t gen_rng_next(uint64_t *state);
/* A value uniform in [0, 1), 53 bits. */
double gen_rng_unit(uint64_t *state);
/* A duration drawn from r (no draw when fixed), to the microsecond, times `scale`. */
double gen_draw_seconds(uint64_t *rng, struct gen_range r, double scale);
/* A byte count drawn from r (no draw when fixed), times `scale`, to the byte. */
uint64_t gen_draw_bytes(uint64_t *rng, struct gen_range r, double scale);

/* Cholesky (gen_cholesky.c): the parameter checks and the writer. */
int gen_cholesky_check(const struct gen_params *p, char **cause);
uint64_t gen_cholesky_tasks(uint32_t tiles);
int gen_cholesky_write(FILE *out, const struct gen_params *p);

/* UTS (gen_uts.c): the parameter checks, the tree's size and the writer. */
int gen_uts_check(const struct gen_params *p, char **cause);
uint64_t gen_uts_count(const struct gen_params *p);
int gen_uts_write(FILE *out, const struct gen_params *p);

#endif
