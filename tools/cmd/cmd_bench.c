/*
 * cmd_bench — `jackdaw bench paper [-o DIR] [--scale F] [--runs N] [--only LIST] [--keep]`:
 * the papers' results as one command (tools/paper/).  Runs scaled versions of the
 * papers' experiments (DAWS, A2WS, PaRSEC) on private local clusters and writes DIR/index.html,
 * DIR/results.json and DIR/traces/.
 *
 * Exit codes: 0 when every run gave its result; EXIT_RUN_FAILED when some did not (the
 * page says which, and has the rest); EXIT_USAGE; EXIT_INTERNAL when the output cannot be
 * written; EXIT_INTERRUPTED after SIGINT, SIGTERM or SIGHUP (the running child is stopped
 * by its PID and what was measured is written).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/sigcatch.h"
#include "tools/cmd/cmd.h"
#include "tools/paper/experiments.h"
#include "tools/paper/paper.h"
#include "tools/paper/spawn.h"
#include "tools/report/cli.h"
#include "tools/report/plot.h"

static int bench_main(int argc, char **argv);

const struct cmd cmd_bench = {
    .name = "bench",
    .usage = "paper [-o DIR] [--scale F] [--runs N] [--only LIST] [--keep]",
    .summary = "the papers' results on this machine, beside the published values",
    .main = bench_main,
};

static int usage_error(const char *msg)
{
    fprintf(stderr, "jackdaw bench: %s\nusage: jackdaw bench %s\n", msg, cmd_bench.usage);
    return EXIT_USAGE;
}

static void more_help(void)
{
    printf("\nRuns scaled versions of these experiments, one run at a time, each on a private\n"
           "local cluster with emulated links:\n");
    for (size_t i = 0; i < bench_nexperiments; i++) {
        const struct bench_experiment *e = &bench_experiments[i];
        printf("  %-11s %s\n  %-11s %s; %u nodes x %u slots, %s\n", e->key, e->title, "",
               e->reproduces, e->nodes, e->slots, e->bandwidth);
    }
    printf("and writes DIR/index.html (each result beside the published value, the scale and\n"
           "the settings, charts through gnuplot), DIR/results.json and DIR/traces/.\n"
           "At --scale 1 with one run the whole bench takes about 6 minutes on a 2-core\n"
           "machine, more on a loaded one; --runs N takes N times as long; --scale 0.1 is a\n"
           "smoke run of about 75 s.\n");
}

static int bench_main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        cmd_print_help(&cmd_bench, NULL);
        more_help();
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "paper") != 0)
        return usage_error(argc < 2 ? "which bench? (paper)" : "unknown bench (there is: paper)");
    const char *dir = "bench-paper", *only = NULL;
    double scale = 1;
    unsigned long runs = 1;
    bool keep = false;
    const struct opt opts[] = {
        {"output", OPT_STRING, &dir, "DIR  where the page, results.json and traces go (-o; "
                                     "default: bench-paper)"},
        {"scale", OPT_DOUBLE, &scale, "F  size of every workload, 1 = the default (~6 min on "
                                      "2 cores); 0.1: ~75 s"},
        {"runs", OPT_UINT, &runs, "N  runs of each configuration, medians reported (1)"},
        {"only", OPT_STRING, &only, "LIST  experiments to run, comma-separated: keys below "
                                    "(all)"},
        {"keep", OPT_FLAG, &keep, "  keep the workloads, the children's output and the "
                                  "daemons' logs in DIR/work"},
        {NULL, 0, NULL, NULL},
    };
    static const char *const shorts[][2] = {{"-o", "--output"}};
    char **args = cmd_short_options(argc - 1, argv + 1, opts, shorts, 1);
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_bench, argc - 1, args, opts, pos, 0, &npos);
    free(args);
    if (rc < 0) {
        more_help();
        return 0;
    }
    if (rc)
        return rc;
    if (!(scale > 0 && scale <= 10))
        return usage_error("--scale must be above 0 and at most 10");
    if (runs < 1 || runs > 20)
        return usage_error("--runs must be from 1 to 20");
    if (!*dir)
        return usage_error("-o needs a directory");
    uint64_t mask;
    char *cause = NULL;
    if (bench_only_parse(only, &mask, &cause) < 0) {
        fprintf(stderr, "jackdaw bench: --only: %s\n", cause);
        free(cause);
        return EXIT_USAGE;
    }
    char *why = NULL;
    if (!plot_gnuplot_available(&why))
        fprintf(stderr, "jackdaw bench: note: %s: the page will have tables and no charts\n",
                why);
    free(why);

    /* A signal stops the running child; the bench writes what it has and exits 130. */
    sigcatch_install(true);
    struct bench_paper_options o = {
        .dir = dir, .scale = scale, .runs = (unsigned)runs, .mask = mask, .keep = keep,
        .progress = stderr,
    };
    rc = bench_paper_run(&o, &cause);
    if (rc == -EINTR) {
        fprintf(stderr, "jackdaw bench: interrupted by signal %d\n", sigcatch_pending());
        return EXIT_INTERRUPTED;
    }
    if (rc < 0) {
        fprintf(stderr, "jackdaw bench: %s\n", cause ? cause : strerror(-rc));
        free(cause);
        return EXIT_INTERNAL;
    }
    if (rc == BENCH_SOME_FAILED) {
        fprintf(stderr, "jackdaw bench: some runs gave no result (see %s/index.html)\n", dir);
        return EXIT_RUN_FAILED;
    }
    return 0;
}
