/*
 * cmd_gen — `jackdaw gen`: writes a synthetic workload (workloads/gen.h) as JSON Lines to
 * standard output or a file.
 *
 * Owns the command line of the generator; called from tools/cmd/main.c through cmd_gen.
 * Every inconsistency on the command line (an option that does not apply to the
 * chosen shape or kind) is refused rather than ignored, so a typo never produces a
 * workload different from the one the user asked for.  The paper workloads (allpairs,
 * imagestack, and the DAGs with --table3) start from the papers' values, which any
 * option given overrides.  The work-stealing benchmarks (seismic, cholesky, uts) are
 * applications with their own parameters and costs: their tasks are sleep tasks whose
 * kind, count and duration follow from those, so --kind, --tasks and --duration-s are
 * refused for them.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "tools/cmd/cmd.h"
#include "workloads/gen.h"

/* Marks an unsigned option the user did not give. */
#define UNSET ULONG_MAX

static int gen_main(int argc, char **argv);

const struct cmd cmd_gen = {
    .name = "gen",
    .usage = "bot|fanin|fanout|pipeline|allpairs|imagestack|seismic|cholesky|uts [--tasks N] "
             "[-n N] [--locality L] [--table3] [--degree D] [--pipe-size P] "
             "[--kind noop|sleep|command] [--cmd STRING] [--duration-s D|A-B] "
             "[--output-bytes B|A-B] [--file-bytes B|A-B] [--shots N] [--cost C|A-B] "
             "[--tiles T] [--sparsity S] [--tile-size N] [--tile-cost C|A-B] [--nodes P] "
             "[--fill-in] [--b B] [--m M] [--q Q] [--depth D] [--max-tasks N] "
             "[--data-scale F] [--time-scale F] [--seed S] [-o FILE]",
    .summary = "write a synthetic workload (JSON Lines) for run or submit",
    .main = gen_main,
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jackdaw gen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nusage: jackdaw gen %s\n", cmd_gen.usage);
    va_end(ap);
    return EXIT_USAGE;
}

/* The short options every generator-like tool has, and their long names. */
static const char *const short_options[][2] = {
    {"-o", "--output"},
    {"-n", "--set-size"},
};

static int parse_kind(const char *name)
{
    for (int k = 0; k < TASK_KIND_COUNT; k++)
        if (strcmp(name, task_kind_name(k)) == 0)
            return k;
    return -1;
}

/* The command line as given; NULL / UNSET for what the user left out. */
struct gen_options {
    unsigned long tasks, degree, pipe_size, set_size, seed;
    const char *kind, *cmd, *duration, *duration_s, *output_bytes, *file_bytes;
    const char *locality, *data_scale, *time_scale, *output;
    bool table3;
    /* seismic, cholesky, uts */
    unsigned long shots, tiles, tile_size, nodes, b, m, depth, max_tasks;
    const char *cost, *sparsity, *tile_cost, *q;
    bool fill_in;
};

/* Parses a real option value: a finite number >= `min`. */
static int parse_real(const char *option, const char *text, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !isfinite(v))
        return usage_error("--%s: '%s' is not a number", option, text);
    if (v < min)
        return usage_error("--%s: '%s' must be at least %g", option, text, min);
    *out = v;
    return 0;
}

static int parse_range(const char *option, const char *text, bool integer,
                       struct gen_range *out)
{
    char *cause = NULL;
    if (gen_range_parse(text, integer, out, &cause) == 0)
        return 0;
    int rc = usage_error("--%s: %s", option, cause);
    free(cause);
    return rc;
}

/* Refuses an option the chosen shape does not take. */
static int only_for(bool applies, bool given, const char *option, const char *shapes)
{
    return given && !applies ? usage_error("--%s applies to %s only", option, shapes) : 0;
}

/* A whole-number option in [min, max]: 0, or EXIT_USAGE after printing why. */
static int check_count(const char *option, unsigned long v, unsigned long min, unsigned long max)
{
    if (v < min || v > max)
        return usage_error("--%s must be between %lu and %lu", option, min, max);
    return 0;
}

/* Checks the parameters as gen_write will: 0, or EXIT_USAGE after printing why. */
static int check_params(const struct gen_params *p)
{
    char *cause = NULL;
    if (gen_check(p, &cause) == 0)
        return 0;
    int rc = usage_error("%s", cause);
    free(cause);
    return rc;
}

/* Seismic shots (paper 001 §3): --shots and --cost. */
/* --nodes P into *nodes, where given. */
static int set_nodes(const struct gen_options *o, uint32_t *nodes)
{
    if (o->nodes == UNSET)
        return 0;
    int rc = check_count("nodes", o->nodes, 1, INT32_MAX);
    if (rc == 0)
        *nodes = (uint32_t)o->nodes;
    return rc;
}

static int build_seismic(struct gen_params *p, const struct gen_options *o)
{
    int rc;
    if (o->shots == UNSET)
        return usage_error("seismic needs --shots N (independent shots)");
    if ((rc = check_count("shots", o->shots, 1, UINT32_MAX - 1)))
        return rc;
    if (!o->cost)
        return usage_error("seismic needs --cost C (seconds per shot at speed 1)");
    gen_params_seismic(p, (uint32_t)o->shots, 0);
    return parse_range("cost", o->cost, false, &p->duration);
}

/* The tiled sparse Cholesky (paper 004 §4.1): its tiles and their costs. */
static int build_cholesky(struct gen_params *p, const struct gen_options *o)
{
    int rc;
    if (o->tiles == UNSET)
        return usage_error("cholesky needs --tiles T (tiles per side of the matrix)");
    if ((rc = check_count("tiles", o->tiles, 1, UINT32_MAX)))
        return rc;
    if (o->output_bytes)
        return usage_error("cholesky writes tiles: their size comes from --tile-size, not "
                           "--output-bytes");
    gen_params_cholesky(p, (uint32_t)o->tiles);
    if (o->sparsity && (rc = parse_real("sparsity", o->sparsity, 0, &p->cholesky.sparsity)))
        return rc;
    if (p->cholesky.sparsity > 1)
        return usage_error("--sparsity: '%s' must be at most 1 (a fraction of the tiles)",
                           o->sparsity);
    if (o->tile_size != UNSET) {
        if ((rc = check_count("tile-size", o->tile_size, 1, 1u << 24)))
            return rc;
        p->cholesky.tile_size = (uint32_t)o->tile_size;
    }
    if (o->tile_cost && (rc = parse_range("tile-cost", o->tile_cost, false, &p->duration)))
        return rc;
    if ((rc = set_nodes(o, &p->cholesky.nodes)))
        return rc;
    p->cholesky.fill_in = o->fill_in;
    return 0;
}

/* Unbalanced tree search (paper 004 §4.4): the tree's parameters and its bound. */
static int build_uts(struct gen_params *p, const struct gen_options *o)
{
    int rc;
    if (!o->cost)
        return usage_error("uts needs --cost C (seconds per tree node at speed 1)");
    gen_params_uts(p, 0);
    if ((rc = parse_range("cost", o->cost, false, &p->duration)))
        return rc;
    if (o->b != UNSET) {
        if ((rc = check_count("b", o->b, 1, UINT32_MAX - 2)))
            return rc;
        p->uts.b = (uint32_t)o->b;
    }
    if (o->m != UNSET) {
        if ((rc = check_count("m", o->m, 1, UINT32_MAX - 2)))
            return rc;
        p->uts.m = (uint32_t)o->m;
    }
    if (o->q && (rc = parse_real("q", o->q, 0, &p->uts.q)))
        return rc;
    if (p->uts.q > 1)
        return usage_error("--q: '%s' must be at most 1 (a probability)", o->q);
    if (o->depth != UNSET) {
        if ((rc = check_count("depth", o->depth, 1, UINT32_MAX)))
            return rc;
        p->uts.depth = (uint32_t)o->depth;
    }
    if (o->max_tasks != UNSET) {
        if ((rc = check_count("max-tasks", o->max_tasks, 1, UINT32_MAX - 1)))
            return rc;
        p->uts.max_tasks = (uint32_t)o->max_tasks;
    }
    return 0;
}

/*
 * The work-stealing benchmarks: seismic shots (paper 001), the tiled sparse Cholesky
 * and UTS (paper 004).  Options of another shape were refused by the caller.
 */
static int build_application(struct gen_params *p, enum gen_shape s, const struct gen_options *o)
{
    const char *name = gen_shape_name(s);
    if (o->tasks != UNSET)
        return usage_error("%s takes no --tasks: %s", name,
                           s == GEN_SEISMIC    ? "give --shots N"
                           : s == GEN_CHOLESKY ? "the tiles (--tiles T) set the task count"
                                               : "the tree's size is drawn (bound it with "
                                                 "--max-tasks)");
    if (o->kind || o->cmd)
        return usage_error("%s tasks are sleep tasks (no --kind or --cmd)", name);
    if (o->duration || o->duration_s)
        return usage_error("%s takes %s, not --duration-s", name,
                           s == GEN_CHOLESKY ? "--tile-cost" : "--cost");
    int rc = s == GEN_SEISMIC    ? build_seismic(p, o)
             : s == GEN_CHOLESKY ? build_cholesky(p, o)
                                 : build_uts(p, o);
    if (rc)
        return rc;
    if (o->output_bytes && (rc = parse_range("output-bytes", o->output_bytes, true,
                                             &p->output_bytes)))
        return rc;
    if (o->data_scale && (rc = parse_real("data-scale", o->data_scale, 0, &p->data_scale)))
        return rc;
    if (o->time_scale && (rc = parse_real("time-scale", o->time_scale, 0, &p->time_scale)))
        return rc;
    p->seed = o->seed;
    /* Grown here, not only in gen_check, to name the options in the refusal. */
    if (s == GEN_UTS && gen_task_count(p) > p->uts.max_tasks)
        return usage_error("uts: the tree of seed %llu grows past --max-tasks %u (its "
                           "expected size is %.6g); lower --q, --m or --depth, or raise "
                           "--max-tasks",
                           (unsigned long long)o->seed, p->uts.max_tasks,
                           gen_uts_expected_tasks(&p->uts));
    return check_params(p);
}

/* Fills `p` from the options; returns 0 or EXIT_USAGE after printing why. */
static int build_params(struct gen_params *p, const char *shape, const struct gen_options *o)
{
    int s = gen_shape_parse(shape);
    if (s < 0)
        return usage_error("unknown shape '%s' (bot, fanin, fanout, pipeline, allpairs, "
                           "imagestack, seismic, cholesky or uts)",
                           shape);
    bool allpairs = s == GEN_ALLPAIRS, imagestack = s == GEN_IMAGESTACK;
    bool seismic = s == GEN_SEISMIC, cholesky = s == GEN_CHOLESKY, uts = s == GEN_UTS;
    bool application = seismic || cholesky || uts;
    bool dag = !allpairs && !imagestack && !application;
    bool paper = !dag || o->table3; /* starts from a paper's values, durations included */
    int rc;
    if ((rc = only_for(seismic, o->shots != UNSET, "shots", "seismic")) ||
        (rc = only_for(seismic || uts, o->cost != NULL, "cost", "seismic and uts")) ||
        (rc = only_for(cholesky, o->tiles != UNSET, "tiles", "cholesky")) ||
        (rc = only_for(cholesky, o->sparsity != NULL, "sparsity", "cholesky")) ||
        (rc = only_for(cholesky, o->tile_size != UNSET, "tile-size", "cholesky")) ||
        (rc = only_for(cholesky, o->tile_cost != NULL, "tile-cost", "cholesky")) ||
        (rc = only_for(cholesky || allpairs || imagestack, o->nodes != UNSET, "nodes",
                       "cholesky, allpairs and imagestack")) ||
        (rc = only_for(cholesky, o->fill_in, "fill-in", "cholesky")) ||
        (rc = only_for(uts, o->b != UNSET, "b", "uts")) ||
        (rc = only_for(uts, o->m != UNSET, "m", "uts")) ||
        (rc = only_for(uts, o->q != NULL, "q", "uts")) ||
        (rc = only_for(uts, o->depth != UNSET, "depth", "uts")) ||
        (rc = only_for(uts, o->max_tasks != UNSET, "max-tasks", "uts")))
        return rc;
    if ((rc = only_for(dag, o->table3, "table3", "bot, fanin, fanout and pipeline")) ||
        (rc = only_for(s == GEN_FANIN || s == GEN_FANOUT, o->degree != UNSET, "degree",
                       "fanin and fanout")) ||
        (rc = only_for(s == GEN_PIPELINE, o->pipe_size != UNSET, "pipe-size", "pipeline")) ||
        (rc = only_for(allpairs, o->set_size != UNSET, "set-size (-n)", "allpairs")) ||
        (rc = only_for(imagestack, o->locality != NULL, "locality", "imagestack")) ||
        (rc = only_for(allpairs || imagestack, o->file_bytes != NULL, "file-bytes",
                       "allpairs and imagestack")))
        return rc;
    if (application)
        return build_application(p, (enum gen_shape)s, o);
    if (allpairs && o->tasks != UNSET)
        return usage_error("allpairs takes -n N (files per set; N*N tasks), not --tasks");
    if (o->duration && o->duration_s)
        return usage_error("--duration and --duration-s are the same option; give one");
    const char *duration = o->duration_s ? o->duration_s : o->duration;

    if (allpairs) {
        if (o->set_size == UNSET)
            return usage_error("allpairs needs -n N (files per set)");
        if (o->set_size < 1 || o->set_size > UINT32_MAX)
            return usage_error("-n must be between 1 and %u", (unsigned)UINT32_MAX);
        gen_params_allpairs(p, (uint32_t)o->set_size);
        if ((rc = set_nodes(o, &p->file_nodes)))
            return rc;
    } else {
        if (o->tasks == UNSET)
            return usage_error("--tasks N is required");
        if (o->tasks < 1 || o->tasks > UINT32_MAX - 1)
            return usage_error("--tasks must be between 1 and %u", (unsigned)(UINT32_MAX - 1));
        if (imagestack) {
            if (!o->locality)
                return usage_error("imagestack needs --locality L (tasks per file, >= 1)");
            double locality;
            if ((rc = parse_real("locality", o->locality, 1, &locality)))
                return rc;
            gen_params_imagestack(p, (uint32_t)o->tasks, locality);
            if ((rc = set_nodes(o, &p->file_nodes)))
                return rc;
        } else if (o->table3) {
            gen_params_table3(p, (enum gen_shape)s, (uint32_t)o->tasks);
        } else {
            gen_params_init(p);
            p->shape = (enum gen_shape)s;
            p->tasks = (uint32_t)o->tasks;
        }
    }

    if (o->degree != UNSET) {
        if (o->degree < 1 || o->degree > UINT32_MAX)
            return usage_error("--degree must be between 1 and %u", (unsigned)UINT32_MAX);
        p->degree = (uint32_t)o->degree;
    }
    if (o->pipe_size != UNSET) {
        if (o->pipe_size < 1 || o->pipe_size > UINT32_MAX)
            return usage_error("--pipe-size must be between 1 and %u", (unsigned)UINT32_MAX);
        p->pipe_size = (uint32_t)o->pipe_size;
    }

    /* Without --kind, the option that only one kind takes says which kind is meant, and
     * else the starting point's kind stands (sleep for the paper workloads). */
    int k = o->kind ? parse_kind(o->kind)
            : o->cmd ? TASK_COMMAND
            : duration ? TASK_SLEEP
                       : p->kind;
    if (k < 0)
        return usage_error("unknown kind '%s' (noop, sleep or command)", o->kind);
    p->kind = (uint8_t)k;
    if (duration && p->kind != TASK_SLEEP)
        return usage_error("--duration-s applies to sleep tasks only");
    if (p->kind != TASK_SLEEP)
        p->duration = (struct gen_range){0, 0}; /* the paper's durations go with sleep */
    else if (!duration && !paper)
        return usage_error("sleep tasks need --duration-s D or A-B (seconds)");
    if (o->cmd && p->kind != TASK_COMMAND)
        return usage_error("--cmd applies to command tasks only");
    if (!o->cmd && p->kind == TASK_COMMAND)
        return usage_error("command tasks need --cmd STRING");
    p->cmd = o->cmd;

    if (duration && (rc = parse_range("duration-s", duration, false, &p->duration)))
        return rc;
    if (o->output_bytes && (rc = parse_range("output-bytes", o->output_bytes, true,
                                             &p->output_bytes)))
        return rc;
    if (o->file_bytes && (rc = parse_range("file-bytes", o->file_bytes, true, &p->file_bytes)))
        return rc;
    if (o->data_scale && (rc = parse_real("data-scale", o->data_scale, 0, &p->data_scale)))
        return rc;
    if (o->time_scale) {
        if (p->kind != TASK_SLEEP)
            return usage_error("--time-scale applies to sleep tasks only");
        if ((rc = parse_real("time-scale", o->time_scale, 0, &p->time_scale)))
            return rc;
    }
    p->seed = o->seed;
    return check_params(p);
}

static int gen_main(int argc, char **argv)
{
    struct gen_options o = {
        .tasks = UNSET, .degree = UNSET, .pipe_size = UNSET, .set_size = UNSET,
        .seed = GEN_DEFAULT_SEED, .shots = UNSET, .tiles = UNSET, .tile_size = UNSET,
        .nodes = UNSET, .b = UNSET, .m = UNSET, .depth = UNSET, .max_tasks = UNSET,
    };
    const struct opt opts[] = {
        {"tasks", OPT_UINT, &o.tasks, "N  number of tasks (imagestack: stacking tasks)"},
        {"set-size", OPT_UINT, &o.set_size, "N  allpairs: files per set, N*N tasks (also -n)"},
        {"locality", OPT_STRING, &o.locality, "L  imagestack: tasks per file, >= 1"},
        {"table3", OPT_FLAG, &o.table3, "   paper 002 Table 3 durations, sizes and degrees"},
        {"degree", OPT_UINT, &o.degree, "D  fanin: parents per task; fanout: children (default 2)"},
        {"pipe-size", OPT_UINT, &o.pipe_size, "P  pipeline: tasks per chain (default 4)"},
        {"kind", OPT_STRING, &o.kind,
         "K  noop, sleep or command (default from --duration-s/--cmd)"},
        {"cmd", OPT_STRING, &o.cmd, "S  shell command of command tasks"},
        {"duration-s", OPT_STRING, &o.duration_s, "D|A-B  sleep seconds, fixed or uniform"},
        {"duration", OPT_STRING, &o.duration, "D|A-B  the same as --duration-s"},
        {"output-bytes", OPT_STRING, &o.output_bytes, "B|A-B  output object size (default 0)"},
        {"file-bytes", OPT_STRING, &o.file_bytes, "B|A-B  allpairs, imagestack: input file size"},
        {"data-scale", OPT_STRING, &o.data_scale, "F  multiply every byte count (default 1)"},
        {"shots", OPT_UINT, &o.shots, "N  seismic: independent shots"},
        {"cost", OPT_STRING, &o.cost, "C|A-B  seismic: seconds per shot; uts: per tree node"},
        {"tiles", OPT_UINT, &o.tiles, "T  cholesky: tiles per side of the matrix"},
        {"sparsity", OPT_STRING, &o.sparsity,
         "S  cholesky: fraction of off-diagonal tiles empty (0.5)"},
        {"tile-size", OPT_UINT, &o.tile_size, "N  cholesky: elements per tile side (50)"},
        {"tile-cost", OPT_STRING, &o.tile_cost,
         "C|A-B  cholesky: seconds of n^3 flops, one TRSM (0.01)"},
        {"nodes", OPT_UINT, &o.nodes,
         "P  cholesky: pin tiles block-cyclically on P nodes; allpairs, imagestack: each "
         "file on a node drawn from P (default: spread, an equal share each)"},
        {"fill-in", OPT_FLAG, &o.fill_in, "   cholesky: follow fill-in (default: pattern held)"},
        {"b", OPT_UINT, &o.b, "B  uts: the root's children (120)"},
        {"m", OPT_UINT, &o.m, "M  uts: children of a node that has any (5)"},
        {"q", OPT_STRING, &o.q, "Q  uts: probability that a node has children (0.200014)"},
        {"depth", OPT_UINT, &o.depth, "D  uts: deepest level, the root's is 0 (no limit)"},
        {"max-tasks", OPT_UINT, &o.max_tasks, "N  uts: refuse a larger tree (1000000)"},
        {"time-scale", OPT_STRING, &o.time_scale, "F  multiply every duration (default 1)"},
        {"seed", OPT_UINT, &o.seed, "S  random seed (default 1)"},
        {"output", OPT_STRING, &o.output, "FILE  write here instead of stdout (also -o)"},
        {NULL, 0, NULL, NULL},
    };

    char **args = cmd_short_options(argc, argv, opts, short_options,
                                    sizeof short_options / sizeof *short_options);
    const char *pos[1];
    int npos = 0;
    int rc = cmd_parse(&cmd_gen, argc, args, opts, pos, 1, &npos);
    free(args);
    if (rc < 0)
        return EXIT_OK_;
    if (rc)
        return rc;
    if (npos != 1)
        return usage_error("which shape? bot, fanin, fanout, pipeline, allpairs, imagestack, "
                           "seismic, cholesky or uts");

    struct gen_params p;
    rc = build_params(&p, pos[0], &o);
    if (rc)
        return rc;

    const char *output = o.output;
    bool to_file = output && strcmp(output, "-") != 0;
    const char *label = to_file ? output : "standard output";
    FILE *out = stdout;
    if (to_file && !(out = fopen(output, "w"))) {
        fprintf(stderr, "jackdaw gen: cannot open '%s' for writing: %s\n", output,
                strerror(errno));
        return EXIT_BAD_INPUT;
    }
    char *cause = NULL;
    int err = gen_write(out, &p, &cause);
    free(cause);
    if (err == 0 && fflush(out) != 0)
        err = -errno;
    /* Only a regular file can be a truncated workload; never remove a device or pipe. */
    struct stat st;
    bool regular = to_file && fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode);
    if (to_file && fclose(out) != 0 && err == 0)
        err = -errno;
    if (err < 0) {
        fprintf(stderr, "jackdaw gen: cannot write %s%s%s: %s\n", to_file ? "'" : "", label,
                to_file ? "'" : "", strerror(-err));
        /* A truncated workload would parse as a smaller one: leave nothing behind. */
        if (regular)
            unlink(output);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK_;
}
