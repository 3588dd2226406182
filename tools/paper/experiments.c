/*
 * bench experiments — the entries (see experiments.h).  Each entry's `about` says what
 * is faithful to the papers and what is scaled; tools/bench/README.md explains the same
 * choices for the shell benchmarks these runs come from (dags.sh, allpairs.sh,
 * imagestack.sh).
 */
#include "tools/paper/experiments.h"

#include "core/model/mix.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

static const struct bench_figure_info figure_info[BF_COUNT] = {
    [BF_MAKESPAN_S] = {"makespan_s", "makespan", RU_SECONDS, 1, "s"},
    [BF_THROUGHPUT_TPS] = {"throughput_tps", "throughput", RU_RATE, 1, "tasks/s"},
    [BF_EFFICIENCY] = {"efficiency", "efficiency", RU_RATIO, 100, "%"},
    [BF_IDEAL_S] = {"ideal_s", "ideal", RU_SECONDS, 1, "s"},
    [BF_TIME_PER_TASK_S] = {"avg_time_per_task_per_cpu_s", "time per task per CPU", RU_SECONDS,
                            1000, "ms"},
    [BF_LOCALITY_HIT_RATE] = {"locality_hit_rate", "locality hits", RU_RATIO, 100, "%"},
    [BF_BYTES_MOVED] = {"bytes_moved", "bytes moved", RU_BYTES, 1e-6, "MB"},
    [BF_CACHE_HIT_RATE] = {"cache_hit_rate", "cache hits", RU_RATIO, 100, "%"},
    [BF_TASKS_PUSHED] = {"tasks_pushed", "tasks pushed", RU_COUNT, 1, "tasks"},
    [BF_BOUND_S] = {"bound_s", "bound", RU_SECONDS, 1, "s"},
    [BF_BOUND_RATIO] = {"bound_ratio", "bound / makespan", RU_RATIO, 100, "%"},
};

const struct bench_figure_info *bench_figure_info(enum bench_figure f)
{
    return (unsigned)f < BF_COUNT ? &figure_info[f] : NULL;
}

/* A number word: whole numbers without a decimal point, as gen's options want them. */
static void number(struct bench_plan *out, double v)
{
    if (out->nwords < BENCH_MAX_WORDS)
        snprintf(out->words[out->nwords++], BENCH_WORD, "%.10g", v);
}

static void text(struct bench_plan *out, const char *s)
{
    if (out->nwords < BENCH_MAX_WORDS)
        snprintf(out->words[out->nwords++], BENCH_WORD, "%s", s);
}

/* ---- the four DAGs of Table 3 --------------------------------------------------------- */

/* The paper runs 1000 tasks per core; 250 per slot keeps each DAG near 12 s of ideal
 * time here, enough for the ramp-up of Fan-Out and the tail of Fan-In to show. */
#define DAG_TASKS_PER_SLOT 250

static void plan_dag(const struct bench_experiment *e, const struct bench_point_def *p,
                     double scale, struct bench_plan *out)
{
    memset(out, 0, sizeof *out);
    double per_slot = fmax(1, round(DAG_TASKS_PER_SLOT * scale));
    out->tasks = (uint64_t)per_slot * bench_total_slots(e);
    text(out, p->shape);
    text(out, "--table3");
    text(out, "--tasks");
    number(out, (double)out->tasks);
    text(out, "--data-scale");
    text(out, "0.1");
}

static const struct bench_point_def dag_points[] = {
    /* Table 4's order */
    {"bot", "BOT", "bot", 0},
    {"pipeline", "Pipeline", "pipeline", 0},
    {"fanout", "Fan-Out", "fanout", 0},
    {"fanin", "Fan-In", "fanin", 0},
};

static const struct bench_series dag_series[] = {
    {"flds", "DAWS: FLDS, caching on", {"--placement", "flds", "--cache", "on", NULL}, true},
};

static const enum bench_figure dag_columns[] = {
    BF_MAKESPAN_S, BF_BOUND_S, BF_EFFICIENCY, BF_THROUGHPUT_TPS, BF_LOCALITY_HIT_RATE,
    BF_BYTES_MOVED, BF_CACHE_HIT_RATE, BF_COUNT,
};

static const struct bench_published dag_published[] = {
    {"bot", NULL, BF_BOUND_RATIO, '=', 0.99139636, "paper 002 Table 4"},
    {"pipeline", NULL, BF_BOUND_RATIO, '=', 0.88238118, "paper 002 Table 4"},
    {"fanout", NULL, BF_BOUND_RATIO, '=', 0.85690323, "paper 002 Table 4"},
    {"fanin", NULL, BF_BOUND_RATIO, '=', 0.90605218, "paper 002 Table 4"},
    {"bot", NULL, BF_EFFICIENCY, '>', 0.90, "paper 000 Fig. 10, paper 002 Fig. 9b (\"90%+\")"},
};

static const struct bench_ordering dag_orderings[] = {
    /* "BOT performs the best, and the second best is Pipeline, followed by Fan-Out,
     * with Fan-In performing the worst" (paper 002 §4.2.3 of the bound, as §4.2.2 and
     * paper 000 §IV.E found in MATRIX). */
    {true, NULL, {"bot", "pipeline", "fanout", "fanin", NULL}, BF_THROUGHPUT_TPS,
     "paper 002 Fig. 9b and 12, paper 000 Fig. 10"},
};

/* ---- all-pairs ------------------------------------------------------------------------ */

/* 40 x 40 tasks of 0.1 s is 5 s of ideal time on 32 slots; the paper's 500 x 500 on 200
 * cores is 125 s.  The task count scales with the square of the set size. */
#define ALLPAIRS_SET 40

static void plan_allpairs(const struct bench_experiment *e, const struct bench_point_def *p,
                          double scale, struct bench_plan *out)
{
    (void)e, (void)p;
    memset(out, 0, sizeof *out);
    double n = fmax(2, round(ALLPAIRS_SET * sqrt(scale)));
    out->tasks = (uint64_t)(n * n);
    text(out, "allpairs");
    text(out, "-n");
    number(out, n);
    text(out, "--file-bytes");
    text(out, "2400000");
    text(out, "--duration-s");
    text(out, "0.1");
}

static const struct bench_point_def allpairs_points[] = {
    {"pairs", "all-pairs", "allpairs", 0},
};

/* "matrix" executors (--prefetch 0) fetch a task's inputs only once it holds a slot, as
 * MATRIX's did, so every transfer costs slot time as in the papers' measurements.  FLDS
 * as the papers ran it: t = 0.1 ("a small percentage (e.g. 10%)", paper 000), so tasks
 * follow their data (their ratio 0.19 is above it; at t = 0.5 FLDS is MLB here). */
#define MATRIX "--prefetch", "0"
#define FLDS_T "--threshold", "0.1"
static const struct bench_series allpairs_series[] = {
    {"mlb-cache-on", "MLB, caching on", {"--placement", "mlb", "--cache", "on", MATRIX, NULL}, false},
    {"mdl-cache-on", "MDL, caching on", {"--placement", "mdl", "--cache", "on", MATRIX, NULL}, false},
    {"flds-cache-on", "DAWS: FLDS, caching on",
     {"--placement", "flds", FLDS_T, "--cache", "on", MATRIX, NULL}, true},
    {"mlb-cache-off", "MLB, caching off", {"--placement", "mlb", "--cache", "off", MATRIX, NULL}, false},
    {"mdl-cache-off", "MDL, caching off", {"--placement", "mdl", "--cache", "off", MATRIX, NULL}, false},
    {"flds-cache-off", "DAWS: FLDS, caching off",
     {"--placement", "flds", FLDS_T, "--cache", "off", MATRIX, NULL}, true},
    /* Not in the papers: jackdaw's own executors, which fetch ahead of a free slot. */
    {"flds-cache-on-prefetch", "FLDS, caching on, jackdaw executors (prefetch)",
     {"--placement", "flds", FLDS_T, "--cache", "on", NULL}, true},
};
#undef MATRIX
#undef FLDS_T

/* Paper 002 Fig. 8: MDL's long tail beside FLDS, both with caching. */
static const char *const allpairs_overlay[] = {"mdl-cache-on", "flds-cache-on", NULL};

static const enum bench_figure allpairs_columns[] = {
    BF_MAKESPAN_S, BF_IDEAL_S, BF_LOCALITY_HIT_RATE, BF_CACHE_HIT_RATE, BF_BYTES_MOVED,
    BF_TASKS_PUSHED, BF_BOUND_RATIO, BF_COUNT,
};

static const struct bench_published allpairs_published[] = {
    {NULL, "flds-cache-on", BF_EFFICIENCY, '=', 0.859, "paper 000 Fig. 7, paper 002 Fig. 6a"},
    {NULL, "flds-cache-on", BF_CACHE_HIT_RATE, '>', 0.80, "paper 002 Fig. 7 (\"above 80%\")"},
    {NULL, "flds-cache-off", BF_EFFICIENCY, '<', 0.50, "paper 002 Fig. 7 (\"less than 50%\")"},
};

static const struct bench_ordering allpairs_orderings[] = {
    {false, NULL, {"flds-cache-on", "mdl-cache-on", "mlb-cache-on", NULL}, BF_EFFICIENCY,
     "paper 000 Fig. 8, paper 002 Fig. 6b"},
    {false, NULL, {"flds-cache-off", "mdl-cache-off", "mlb-cache-off", NULL}, BF_EFFICIENCY,
     "paper 000 Fig. 8, paper 002 Fig. 6b"},
    {false, NULL, {"flds-cache-on", "flds-cache-off", NULL}, BF_EFFICIENCY, "paper 002 Fig. 7"},
};

/* ---- image stacking ------------------------------------------------------------------- */

/* 3000 stacking tasks of 158 ms: 15 s of ideal time on 32 slots. */
#define STACK_TASKS 3000

static void plan_imagestack(const struct bench_experiment *e, const struct bench_point_def *p,
                            double scale, struct bench_plan *out)
{
    (void)e;
    memset(out, 0, sizeof *out);
    /* gen refuses fewer tasks than the locality (a file read by more tasks than exist) */
    double tasks = fmax(p->param, round(STACK_TASKS * scale));
    out->tasks = (uint64_t)tasks + 1; /* and the aggregation task */
    text(out, "imagestack");
    text(out, "--tasks");
    number(out, tasks);
    text(out, "--locality");
    number(out, p->param);
}

static const struct bench_point_def imagestack_points[] = {
    {"L1", "locality 1", "imagestack", 1},
    {"L5", "locality 5", "imagestack", 5},
    {"L30", "locality 30", "imagestack", 30},
};

static const struct bench_series imagestack_series[] = {
    /* paper 000 §IV.C.1: "We use the MDL policy to move every task to where the required
     * data resides, as 2MB of data is relatively large." */
    {"mdl", "MDL, caching on (the paper's setting)", {"--placement", "mdl", "--cache", "on", NULL},
     false},
    /* DAWS as jackdaw ships it: at t = 0.5 a task's ratio (0.10) keeps it in SReadyQ. */
    {"flds", "FLDS (t = 0.5), caching on", {"--placement", "flds", "--cache", "on", NULL}, false},
};

static const enum bench_figure imagestack_columns[] = {
    BF_EFFICIENCY, BF_MAKESPAN_S, BF_LOCALITY_HIT_RATE, BF_CACHE_HIT_RATE, BF_BYTES_MOVED,
    BF_TASKS_PUSHED, BF_COUNT,
};

static const struct bench_ordering imagestack_orderings[] = {
    /* "The time per task of DAWS experienced a slight increase from Locality 1 (167ms)
     * to 30 (176ms)" */
    {true, "mdl", {"L30", "L5", "L1", NULL}, BF_TIME_PER_TASK_S, "paper 000 Fig. 4"},
};

static const struct bench_published imagestack_published[] = {
    {"L1", "mdl", BF_TIME_PER_TASK_S, '=', 0.167, "paper 000 Fig. 4 (128 cores)"},
    {"L30", "mdl", BF_TIME_PER_TASK_S, '=', 0.176, "paper 000 Fig. 4 (128 cores)"},
    {NULL, "mdl", BF_EFFICIENCY, '>', 0.75, "paper 000 Fig. 5 (\"above 75%\")"},
};

/* ---- A2WS on heterogeneous clusters (paper 001) -------------------------------------- */

/* Every configuration's ideal makespan at scale 1 (total shot seconds over the sum of the
 * speeds): seconds, not the paper's hours; the shots per node and the speed ratios are the
 * paper's, so a 1-core node still runs a shot 24 times slower than a 24-core one. */
#define SEISMIC_IDEAL_S 3.0

static double speed_sum(const struct bench_experiment *e)
{
    int preset = e->speeds ? mix_parse(e->speeds) : MIX_NONE;
    double sum = 0;
    for (uint32_t i = 0; i < e->nodes; i++) {
        struct mix_node m;
        sum += preset > 0 && mix_node((enum mix_preset)preset, i, &m) == 0 ? m.speed : 1.0;
    }
    return sum;
}

static void plan_seismic(const struct bench_experiment *e, const struct bench_point_def *p,
                         double scale, struct bench_plan *out)
{
    memset(out, 0, sizeof *out);
    double shots = fmax(e->nodes, round(p->param * scale));
    out->tasks = (uint64_t)shots;
    text(out, "seismic");
    text(out, "--shots");
    number(out, shots);
    text(out, "--cost");
    /* The shot's cost stays as at scale 1, so that the run's length follows the scale
     * as the other experiments' do. */
    number(out, SEISMIC_IDEAL_S * scale * speed_sum(e) / shots);
}

static const struct bench_point_def seismic_points[] = {
    {"s480", "480 shots", "seismic", 480},
    {"s960", "960 shots", "seismic", 960},
    {"s1920", "1920 shots", "seismic", 1920},
    {"s3840", "3840 shots", "seismic", 3840},
};

static const struct bench_series seismic_series[] = {
    {"a2ws", "A2WS", {"--policy", "a2ws", NULL}, false},
    {"ctws", "CTWS (cyclic token)", {"--policy", "ctws", NULL}, false},
    {"lw", "LW (leader hands out tasks)", {"--policy", "lw", NULL}, false},
};

static const enum bench_figure seismic_columns[] = {
    BF_MAKESPAN_S, BF_BOUND_RATIO, BF_THROUGHPUT_TPS, BF_COUNT,
};

/* Tables 3 and 4 give A2WS's gain over LW and over CTWS at every size of C2 and C3:
 * A2WS finishes before each.  Between the two baselines the paper's gains differ by
 * less than a point in most cells, and here both often give the slow nodes the same
 * extra shot and tie to the millisecond, so their order is not checked. */
#define A2WS_AHEAD(point, source)                                                          \
    {false, point, {"a2ws", "ctws", NULL}, BF_THROUGHPUT_TPS, source},                     \
    {false, point, {"a2ws", "lw", NULL}, BF_THROUGHPUT_TPS, source}
static const struct bench_ordering seismic_orderings[] = {
    A2WS_AHEAD("s480", "paper 001 Tables 3-4"),
    A2WS_AHEAD("s960", "paper 001 Tables 3-4"),
    A2WS_AHEAD("s1920", "paper 001 Tables 3-4"),
    A2WS_AHEAD("s3840", "paper 001 Tables 3-4"),
};

/* On C1 at 3840 shots the paper has CTWS 0.96 % ahead of A2WS: only LW is behind. */
static const struct bench_ordering seismic_c1_orderings[] = {
    A2WS_AHEAD("s480", "paper 001 Tables 3-4"),
    A2WS_AHEAD("s960", "paper 001 Tables 3-4"),
    A2WS_AHEAD("s1920", "paper 001 Tables 3-4"),
    {false, "s3840", {"a2ws", "lw", NULL}, BF_THROUGHPUT_TPS, "paper 001 Table 3"},
};

/* Paper 001 Tables 3 and 4: A2WS's gains over LW and over CTWS, in % of their makespan,
 * at 480, 960, 1920 and 3840 shots, for C1 (8 nodes), C2 (16) and C3 (32). */
#define GAINS(lw480, lw960, lw1920, lw3840, ct480, ct960, ct1920, ct3840)                 \
    {"s480", "a2ws", "lw", lw480, "paper 001 Table 3"},                                     \
    {"s960", "a2ws", "lw", lw960, "paper 001 Table 3"},                                     \
    {"s1920", "a2ws", "lw", lw1920, "paper 001 Table 3"},                                   \
    {"s3840", "a2ws", "lw", lw3840, "paper 001 Table 3"},                                   \
    {"s480", "a2ws", "ctws", ct480, "paper 001 Table 4"},                                   \
    {"s960", "a2ws", "ctws", ct960, "paper 001 Table 4"},                                   \
    {"s1920", "a2ws", "ctws", ct1920, "paper 001 Table 4"},                                 \
    {"s3840", "a2ws", "ctws", ct3840, "paper 001 Table 4"}
static const struct bench_gain c1_gains[] = {GAINS(16.0, 17.1, 14.8, 12.3, 5.88, 1.84, 0.70, -0.96)};
static const struct bench_gain c2_gains[] = {GAINS(10.5, 8.5, 8.5, 7.9, 6.73, 7.31, 2.14, 3.25)};
static const struct bench_gain c3_gains[] = {GAINS(3.9, 10.0, 2.3, 7.4, 3.75, 9.43, 2.20, 2.73)};

/* ---- PaRSEC's victim policies on sparse Cholesky (paper 004) ------------------------- */

/* The paper fixes the matrix and varies the tile size, which sets every task's
 * granularity; here the tiles are fixed and the point's param is the task cost. */
#define CHOLESKY_TILES 24

static void plan_cholesky(const struct bench_experiment *e, const struct bench_point_def *p,
                          double scale, struct bench_plan *out)
{
    memset(out, 0, sizeof *out);
    /* Tasks grow with the cube of the tile count. */
    double tiles = fmax(4, round(CHOLESKY_TILES * cbrt(scale)));
    out->tasks = (uint64_t)(tiles * tiles * tiles / 6); /* about, before sparsity */
    text(out, "cholesky");
    text(out, "--tiles");
    number(out, tiles);
    text(out, "--sparsity");
    text(out, "0.5");
    text(out, "--nodes");
    number(out, e->nodes);
    text(out, "--tile-cost");
    number(out, p->param);
}

static const struct bench_point_def cholesky_points[] = {
    {"c10ms", "tasks of 10 ms", "cholesky", 0.01},
    {"c20ms", "tasks of 20 ms", "cholesky", 0.02},
    {"c40ms", "tasks of 40 ms", "cholesky", 0.04},
};

/* Every task starts on the node of the tile it updates (--mode data), the paper's
 * owner-computes placement: hashed submission would spread the work evenly before any
 * steal and leave no-steal with little to lose. */
#define PARSEC "--mode", "data", "--policy", "parsec", "--starvation", "ready+successors", \
    "--wait-guard", "on"
static const struct bench_series cholesky_series[] = {
    {"none", "no stealing", {"--mode", "data", "--policy", "none", NULL}, false},
    {"single", "PaRSEC, Single", {PARSEC, "--amount", "single", NULL}, false},
    {"chunk", "PaRSEC, Chunk (4)", {PARSEC, "--amount", "chunk:4", NULL}, false},
    {"half", "PaRSEC, Half", {PARSEC, "--amount", "half", NULL}, false},
};

static const enum bench_figure cholesky_columns[] = {
    BF_MAKESPAN_S, BF_BOUND_RATIO, BF_THROUGHPUT_TPS, BF_COUNT,
};

/* Table 1 at its largest tile size (50x50): Single 1.25x, Chunk 1.12x, Half 1.11x over
 * no stealing. */
static const struct bench_ordering cholesky_orderings[] = {
    {false, "c40ms", {"single", "chunk", "half", "none", NULL}, BF_THROUGHPUT_TPS,
     "paper 004 Table 1 (50x50 tiles)"},
};

/* ---- the table ------------------------------------------------------------------------ */

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* What the three seismic experiments (C1, C2, C3) share: one slot per node as the
 * paper's one process per node, the shot counts, the three policies. */
#define SEISMIC_COMMON                                                                    \
    .slots = 1, .bandwidth = "1Gbit", .points = seismic_points,                           \
    .npoints = N(seismic_points), .series = seismic_series, .nseries = N(seismic_series), \
    .plan = plan_seismic, .tt_fraction = 0, .headline = BF_MAKESPAN_S,                    \
    .columns = seismic_columns

const struct bench_experiment bench_experiments[] = {
    {
        .key = "dags",
        .title = "Benchmark DAGs against the sub-optimal bound",
        .reproduces = "paper 002 Table 4 and Fig. 9b; paper 000 Fig. 10",
        .about = "The four DAGs of paper 002 Table 3 (jackdaw gen SHAPE --table3): sleep tasks "
                 "of 0-100 ms (mean 50 ms) with outputs of 0-10 MB read by their children, "
                 "degree and pipe size 10, scheduled by DAWS (FLDS, caching on). Each run's "
                 "makespan is set beside the bound of its workload on its cluster and link "
                 "(jackdaw bound: the larger of the sub-optimal bound of paper 002 section 3 "
                 "and the capacity bound); bound / makespan is the paper's \"percentage of "
                 "sub-optimal\". Scaled: 250 tasks per slot instead of 1000 per core; the data "
                 "by 0.1 because the paper's links were 10 Gbit/s and these are 1 Gbit/s, so "
                 "every transfer takes the time it took there and Algorithm 1 sees the same "
                 "ratios; tt at 0.2 of the ideal time, the paper's 10 s of a 50 s run.",
        .nodes = 8,
        .slots = 4,
        .bandwidth = "1Gbit",
        .points = dag_points,
        .npoints = N(dag_points),
        .series = dag_series,
        .nseries = N(dag_series),
        .plan = plan_dag,
        .tt_fraction = 0.2,
        .headline = BF_BOUND_RATIO,
        .columns = dag_columns,
        .published = dag_published,
        .npublished = N(dag_published),
        .orderings = dag_orderings,
        .norderings = N(dag_orderings),
        .paper_setup = "MATRIX on up to 100 nodes x 2 executing threads, 1000 tasks per "
                       "core, 10 Gbit/s, t = 0.5, tt = 10 s, polling bound 50 s.",
    },
    {
        .key = "allpairs",
        .title = "All-pairs: placement policies and caching",
        .reproduces = "paper 000 Fig. 7 and 8; paper 002 Fig. 6 and 7",
        .about = "All-pairs of two sets of 2.4 MB files (jackdaw gen allpairs): task t_I_J "
                 "sleeps 0.1 s reading aI and bJ, the files spread over the nodes. MLB, MDL "
                 "and FLDS, each with caching on and off, with \"matrix\" executors "
                 "(--prefetch 0), which fetch a task's inputs only once it holds a slot as "
                 "MATRIX's did, so transfers cost slot time as in the papers. FLDS as the "
                 "papers ran it: t = 0.1, so tasks follow their data, and tt at 0.1 of the "
                 "ideal time (the paper set 20 s near the end of a run of about 125 s). "
                 "Scaled: 40 x 40 tasks instead of 500 x 500, files of 2.4 MB instead of 12 MB "
                 "with 1 Gbit/s links. The last row is not in the papers: jackdaw's own "
                 "executors, which fetch the inputs of the next tasks while others run.",
        .nodes = 8,
        .slots = 4,
        .bandwidth = "1Gbit",
        .points = allpairs_points,
        .npoints = N(allpairs_points),
        .series = allpairs_series,
        .nseries = N(allpairs_series),
        .plan = plan_allpairs,
        .tt_fraction = 0.1,
        .headline = BF_EFFICIENCY,
        .columns = allpairs_columns,
        .published = allpairs_published,
        .npublished = N(allpairs_published),
        .orderings = allpairs_orderings,
        .norderings = N(allpairs_orderings),
        .paper_setup = "MATRIX on 100 nodes x 2 cores (200 cores), 500 x 500 tasks of 100 ms, "
                       "two 12 MB files per task, FLDS with tt = 20 s at 80% done.",
        .overlay = allpairs_overlay,
    },
    {
        .key = "imagestack",
        .title = "Image stacking across localities",
        .reproduces = "paper 000 Fig. 4 and 5",
        .about = "Image stacking (jackdaw gen imagestack): stacking tasks of 158 ms each read "
                 "one 2 MB file and write 10 KB, each file read by L neighbouring tasks "
                 "(the locality), then one aggregation task reads every output. The figure "
                 "is the time per task per CPU (makespan x slots / tasks), whose ideal is "
                 "158 ms. MDL is the paper's setting; FLDS at its default t = 0.5 keeps these "
                 "tasks in SReadyQ (their ratio is 0.10), so most fetch their file. Scaled: "
                 "3000 stacking tasks on 32 slots (about 15 s of ideal time).",
        .nodes = 8,
        .slots = 4,
        .bandwidth = "1Gbit",
        .points = imagestack_points,
        .npoints = N(imagestack_points),
        .series = imagestack_series,
        .nseries = N(imagestack_series),
        .plan = plan_imagestack,
        .tt_fraction = 0,
        .headline = BF_TIME_PER_TASK_S,
        .columns = imagestack_columns,
        .published = imagestack_published,
        .npublished = N(imagestack_published),
        .orderings = imagestack_orderings,
        .norderings = N(imagestack_orderings),
        .paper_setup = "MATRIX on 64 nodes x 2 cores (128 cores) for Fig. 4, up to 200 cores "
                       "for Fig. 5; MDL; files uniformly spread, tasks randomly.",
    },
    {
        .key = "a2ws",
        .title = "Heterogeneous clusters: A2WS against LW and CTWS",
        .reproduces = "paper 001 Tables 3 and 4",
        .about = "Independent seismic shots (jackdaw gen seismic, 480 to 3840) on the C2 mix "
                 "of paper 001 Table 2: 16 nodes of 24, 1, 8, 2, 16, 4, 24 and 1 cores, each "
                 "one slot at speed cores/24. A2WS (information ring, steal equation, preemptive "
                 "stealing, speed-aware victims) against LW (a leader hands out tasks on "
                 "demand) and CTWS (a cyclic token; only its holder steals). The paper's gain "
                 "is 1 - A2WS / other on the makespan; the throughputs in the table give it. "
                 "Scaled: each configuration's ideal makespan is 3 s at scale 1, not hours; the "
                 "shots per node and the speed ratios are the paper's. At these sizes a "
                 "1-core node runs about a dozen shots, so a policy that gives it one more "
                 "loses about 8 %: the gains come in such steps.",
        .nodes = 16,
        .speeds = "C2",
        SEISMIC_COMMON,
        .orderings = seismic_orderings,
        .norderings = N(seismic_orderings),
        .gains = c2_gains,
        .ngains = N(c2_gains),
        .paper_setup = "Up to 128 nodes of the SDumont supercomputer limited to 1 to 24 cores "
                       "each (Table 2, C1-C5), 480 to 7680 shots of a seismic modeling code; "
                       "at C2 (16 nodes) gains over LW 10.5, 8.5, 8.5, 7.9 % and over CTWS "
                       "6.73, 7.31, 2.14, 3.25 % at 480, 960, 1920, 3840 shots.",
    },
    {
        .key = "a2ws-c1",
        .title = "Heterogeneous clusters: A2WS against LW and CTWS on C1",
        .reproduces = "paper 001 Tables 3 and 4 (8 nodes)",
        .about = "The a2ws experiment on the C1 mix of paper 001 Table 2: 8 nodes of 24, 1, "
                 "8, 2, 16, 4, 24 and 1 cores, one slot each at speed cores/24, 480 to 3840 "
                 "shots scaled to an ideal makespan of 3 s at scale 1.",
        .nodes = 8,
        .speeds = "C1",
        SEISMIC_COMMON,
        .orderings = seismic_c1_orderings,
        .norderings = N(seismic_c1_orderings),
        .gains = c1_gains,
        .ngains = N(c1_gains),
        .paper_setup = "8 nodes of SDumont (C1); gains over LW 16.0, 17.1, 14.8, 12.3 % and "
                       "over CTWS 5.88, 1.84, 0.70, -0.96 % at 480, 960, 1920, 3840 shots.",
    },
    {
        .key = "a2ws-c3",
        .title = "Heterogeneous clusters: A2WS against LW and CTWS on C3",
        .reproduces = "paper 001 Tables 3 and 4 (32 nodes)",
        .about = "The a2ws experiment on the C3 mix of paper 001 Table 2: 32 nodes, the C1 "
                 "cores four times over, one slot each at speed cores/24, 480 to 3840 shots "
                 "scaled to an ideal makespan of 3 s at scale 1. The largest configuration of "
                 "the gain table: at 3840 shots a 1-core node runs 12 shots of 0.25 s in the "
                 "ideal 3 s, so a policy that gives it a 13th ends at 3.25 s and no policy can "
                 "gain more than 1 - 3 / 3.25 = 7.7 % over one that does.",
        .nodes = 32,
        .speeds = "C3",
        SEISMIC_COMMON,
        .orderings = seismic_orderings,
        .norderings = N(seismic_orderings),
        .gains = c3_gains,
        .ngains = N(c3_gains),
        .paper_setup = "32 nodes of SDumont (C3); gains over LW 3.9, 10.0, 2.3, 7.4 % and "
                       "over CTWS 3.75, 9.43, 2.20, 2.73 % at 480, 960, 1920, 3840 shots.",
    },
    {
        .key = "parsec",
        .title = "PaRSEC victim policies on sparse Cholesky",
        .reproduces = "paper 004 Table 1",
        .about = "A tiled Cholesky factorization (jackdaw gen cholesky: POTRF, TRSM, SYRK and "
                 "GEMM tasks) on a 24 x 24 matrix of tiles, half of them empty, the tiles "
                 "distributed block-cyclically over 4 nodes of 2 slots and each task started "
                 "on the node of the tile it updates (owner computes, --mode data), which "
                 "leaves the nodes unequally loaded. No stealing against PaRSEC's thief "
                 "policy (steal when no task is ready and no running task has a local "
                 "successor) with each victim policy (Single, Chunk of 4, Half) and the "
                 "waiting-time guard. As in the "
                 "paper the tile size varies, and with it every task's granularity: here "
                 "the task cost (10, 20, 40 ms); the paper's speedup over no stealing grows "
                 "with it (Single 1.25x at 50 x 50 tiles).",
        .nodes = 4,
        .slots = 2,
        .bandwidth = "1Gbit",
        .points = cholesky_points,
        .npoints = N(cholesky_points),
        .series = cholesky_series,
        .nseries = N(cholesky_series),
        .plan = plan_cholesky,
        .tt_fraction = 0,
        .headline = BF_MAKESPAN_S,
        .columns = cholesky_columns,
        .orderings = cholesky_orderings,
        .norderings = N(cholesky_orderings),
        .paper_setup = "PaRSEC on 4 nodes, sparse Cholesky of 100 x 100 tiles of 10 x 10 to "
                       "50 x 50 elements; speedups over no stealing 1.0-1.08x at small tiles, "
                       "1.11-1.25x at 50 x 50.",
    },
};

const size_t bench_nexperiments = N(bench_experiments);

const struct bench_experiment *bench_experiment_find(const char *key)
{
    for (size_t i = 0; i < bench_nexperiments; i++)
        if (strcmp(bench_experiments[i].key, key) == 0)
            return &bench_experiments[i];
    return NULL;
}

static char *known_keys(void)
{
    char *s = xstrdup("");
    for (size_t i = 0; i < bench_nexperiments; i++) {
        char *t = xasprintf("%s%s%s", s, i ? ", " : "", bench_experiments[i].key);
        free(s);
        s = t;
    }
    return s;
}

int bench_only_parse(const char *list, uint64_t *mask, char **cause)
{
    *mask = 0;
    if (!list || !*list) {
        for (size_t i = 0; i < bench_nexperiments; i++)
            *mask |= UINT64_C(1) << i;
        return 0;
    }
    const char *s = list;
    while (*s) {
        size_t len = strcspn(s, ",");
        size_t i;
        for (i = 0; i < bench_nexperiments; i++)
            if (strlen(bench_experiments[i].key) == len &&
                strncmp(bench_experiments[i].key, s, len) == 0)
                break;
        if (i == bench_nexperiments) {
            char *known = known_keys();
            *cause = xasprintf("unknown experiment '%.*s' (known: %s)", (int)len, s, known);
            free(known);
            return -EINVAL;
        }
        *mask |= UINT64_C(1) << i;
        s += len;
        if (*s == ',')
            s++;
    }
    if (!*mask) {
        *cause = xasprintf("no experiment named in '%s'", list);
        return -EINVAL;
    }
    return 0;
}

uint32_t bench_total_slots(const struct bench_experiment *e)
{
    return e->nodes * e->slots;
}

double bench_flds_tt(const struct bench_experiment *e, double ideal_s)
{
    if (!(e->tt_fraction > 0) || !(ideal_s > 0))
        return 0;
    return fmax(0.05, e->tt_fraction * ideal_s);
}

double bench_run_timeout(double ideal_s)
{
    if (!isfinite(ideal_s) || ideal_s < 0)
        return 600;
    return 60 + 10 * ideal_s;
}

static bool matches(const char *want, const char *key)
{
    return !want || strcmp(want, key) == 0;
}

const struct bench_published *bench_published_find(const struct bench_experiment *e,
                                                   const char *point, const char *series,
                                                   enum bench_figure f)
{
    for (size_t i = 0; i < e->npublished; i++) {
        const struct bench_published *p = &e->published[i];
        if (p->figure == f && matches(p->point, point) && matches(p->series, series))
            return p;
    }
    return NULL;
}

const char *bench_published_text(char *buf, size_t size, const struct bench_published *p)
{
    const struct bench_figure_info *fi = bench_figure_info(p->figure);
    const char *rel = p->relation == '>' ? "≥ " : p->relation == '<' ? "< " : "";
    double v = p->value * fi->plot_scale;
    if (fi->unit == RU_RATIO)
        snprintf(buf, size, "%s%.1f %%", rel, v);
    else if (fi->plot_scale == 1000)
        snprintf(buf, size, "%s%.0f ms", rel, v);
    else
        snprintf(buf, size, "%s%g %s", rel, v, fi->plot_unit);
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(const double *v, size_t n)
{
    double *f = xmalloc((n ? n : 1) * sizeof *f);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            f[k++] = v[i];
    double m = NAN;
    if (k) {
        qsort(f, k, sizeof *f, cmp_double);
        m = k % 2 ? f[k / 2] : (f[k / 2 - 1] + f[k / 2]) / 2;
    }
    free(f);
    return m;
}

bool bench_strictly_decreasing(const double *v, size_t n)
{
    if (n < 2)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    for (size_t i = 1; i < n; i++)
        if (!(v[i - 1] > v[i]))
            return false;
    return true;
}
