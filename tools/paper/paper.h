/*
 * bench paper — runs the experiments of the table (experiments.h) and writes what they
 * found: DIR/index.html (page.c), DIR/results.json (results.c) and DIR/traces/.
 *
 * Every measurement is a child process of this same binary (spawn.h): `jackdaw gen` makes
 * a workload, `jackdaw bound` its bound on the experiment's cluster, and `jackdaw run`
 * runs it on a private local cluster with --json and --trace; nothing of the scheduler
 * runs in this process.  Runs are sequential: each takes the whole machine.  The page and
 * results.json are rewritten after every experiment, so an interrupted or failed bench
 * leaves what it measured so far.
 *
 * tools/paper/ is the reproduction harness alone; its command line is `jackdaw bench`'s
 * (tools/cmd/cmd_bench.c), and the standalone benchmark scripts it takes its sizes from
 * are tools/bench/.  Callers: tools/cmd/cmd_bench.c.  Return convention below.
 */
#ifndef JACKDAW_BENCH_PAPER_H
#define JACKDAW_BENCH_PAPER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct bench_paper_options {
    const char *dir;        /* output directory, created if missing */
    double scale;           /* > 0; 1 is the default size */
    unsigned runs;          /* repetitions of every configuration, >= 1 */
    uint64_t mask;          /* experiments selected (bench_only_parse) */
    bool keep;              /* keep workloads, children's output and daemon logs */
    FILE *progress;         /* a line per step; NULL for none */
};

/* The outcomes besides errors. */
enum {
    BENCH_OK = 0,
    BENCH_SOME_FAILED = 1,  /* a workload, bound or run gave no result; the rest is written */
};

/* BENCH_OK, BENCH_SOME_FAILED, -EINTR when a signal stopped it (what was measured is
 * written), or another negative errno with *cause when the output cannot be written. */
int bench_paper_run(const struct bench_paper_options *o, char **cause);

#endif
