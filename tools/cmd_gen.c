/*
 * cmd_gen — `jackdaw gen`: writes a synthetic workload (workloads/gen.h) as JSON Lines to
 * standard output or a file.
 *
 * Owns the command line of the generator; called from tools/main.c through cmd_gen.
 * Every inconsistency on the command line (an option that does not apply to the
 * chosen shape or kind) is refused rather than ignored, so a typo never produces a
 * workload different from the one the user asked for.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "tools/cmd.h"
#include "workloads/gen.h"

/* Marks an unsigned option the user did not give. */
#define UNSET ULONG_MAX

static int gen_main(int argc, char **argv);

const struct cmd cmd_gen = {
    .name = "gen",
    .usage = "bot|fanin|fanout|pipeline --tasks N [--degree D] [--pipe-size P] "
             "[--kind noop|sleep|command] [--cmd STRING] [--duration D|A-B] "
             "[--output-bytes B|A-B] [--seed S] [-o FILE]",
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

/*
 * The shared parser takes long options only; "-o FILE" is the one short option every
 * generator-like tool has, so it is rewritten to "--output" where it stands as an
 * option (not as the value of another option, nor after "--").
 */
static char **rewrite_short_output(int argc, char **argv, const struct opt *opts)
{
    char **copy = xcalloc((size_t)argc + 1, sizeof *copy);
    bool options = true;
    for (int i = 0; i < argc; i++) {
        copy[i] = argv[i];
        if (i == 0 || !options)
            continue;
        if (strcmp(argv[i], "--") == 0) {
            options = false;
        } else if (strcmp(argv[i], "-o") == 0) {
            copy[i] = (char *)"--output";
        } else if (strncmp(argv[i], "--", 2) == 0 && !strchr(argv[i], '=')) {
            for (const struct opt *o = opts; o->name; o++)
                if (strcmp(argv[i] + 2, o->name) == 0 && o->type != OPT_FLAG && i + 1 < argc) {
                    copy[i + 1] = argv[i + 1];
                    i++;
                    break;
                }
        }
    }
    return copy;
}

static int parse_kind(const char *name)
{
    for (int k = 0; k < TASK_KIND_COUNT; k++)
        if (strcmp(name, task_kind_name(k)) == 0)
            return k;
    return -1;
}

/* Fills `p` from the options; returns 0 or EXIT_USAGE after printing why. */
static int build_params(struct gen_params *p, const char *shape, unsigned long tasks,
                        unsigned long degree, unsigned long pipe_size, const char *kind,
                        const char *cmd, const char *duration, const char *output_bytes,
                        unsigned long seed)
{
    gen_params_init(p);
    int s = gen_shape_parse(shape);
    if (s < 0)
        return usage_error("unknown shape '%s' (bot, fanin, fanout or pipeline)", shape);
    p->shape = (enum gen_shape)s;

    if (tasks == UNSET)
        return usage_error("--tasks N is required");
    if (tasks < 1 || tasks > UINT32_MAX - 1)
        return usage_error("--tasks must be between 1 and %u", (unsigned)(UINT32_MAX - 1));
    p->tasks = (uint32_t)tasks;

    if (degree != UNSET) {
        if (p->shape != GEN_FANIN && p->shape != GEN_FANOUT)
            return usage_error("--degree applies to fanin and fanout only");
        if (degree < 1 || degree > UINT32_MAX)
            return usage_error("--degree must be between 1 and %u", (unsigned)UINT32_MAX);
        p->degree = (uint32_t)degree;
    }
    if (pipe_size != UNSET) {
        if (p->shape != GEN_PIPELINE)
            return usage_error("--pipe-size applies to pipeline only");
        if (pipe_size < 1 || pipe_size > UINT32_MAX)
            return usage_error("--pipe-size must be between 1 and %u", (unsigned)UINT32_MAX);
        p->pipe_size = (uint32_t)pipe_size;
    }

    /* Without --kind, the option that only one kind takes says which kind is meant. */
    int k = kind ? parse_kind(kind) : cmd ? TASK_COMMAND : duration ? TASK_SLEEP : TASK_NOOP;
    if (k < 0)
        return usage_error("unknown kind '%s' (noop, sleep or command)", kind);
    p->kind = (uint8_t)k;
    if (duration && p->kind != TASK_SLEEP)
        return usage_error("--duration applies to sleep tasks only");
    if (!duration && p->kind == TASK_SLEEP)
        return usage_error("sleep tasks need --duration D or A-B (seconds)");
    if (cmd && p->kind != TASK_COMMAND)
        return usage_error("--cmd applies to command tasks only");
    if (!cmd && p->kind == TASK_COMMAND)
        return usage_error("command tasks need --cmd STRING");
    p->cmd = cmd;

    char *cause = NULL;
    if (duration && gen_range_parse(duration, false, &p->duration, &cause) < 0) {
        int rc = usage_error("--duration: %s", cause);
        free(cause);
        return rc;
    }
    if (output_bytes && gen_range_parse(output_bytes, true, &p->output_bytes, &cause) < 0) {
        int rc = usage_error("--output-bytes: %s", cause);
        free(cause);
        return rc;
    }
    p->seed = seed;
    if (gen_check(p, &cause) < 0) {
        int rc = usage_error("%s", cause);
        free(cause);
        return rc;
    }
    return 0;
}

static int gen_main(int argc, char **argv)
{
    unsigned long tasks = UNSET, degree = UNSET, pipe_size = UNSET;
    unsigned long seed = GEN_DEFAULT_SEED;
    const char *kind = NULL, *cmd = NULL, *duration = NULL, *output_bytes = NULL;
    const char *output = NULL;
    const struct opt opts[] = {
        {"tasks", OPT_UINT, &tasks, "N  number of tasks (required)"},
        {"degree", OPT_UINT, &degree, "D  fanin: parents per task; fanout: children (default 2)"},
        {"pipe-size", OPT_UINT, &pipe_size, "P  pipeline: tasks per chain (default 4)"},
        {"kind", OPT_STRING, &kind, "K  noop, sleep or command (default from --duration/--cmd)"},
        {"cmd", OPT_STRING, &cmd, "S  shell command of command tasks"},
        {"duration", OPT_STRING, &duration, "D|A-B  sleep seconds, fixed or uniform"},
        {"output-bytes", OPT_STRING, &output_bytes, "B|A-B  output object size (default 0)"},
        {"seed", OPT_UINT, &seed, "S  random seed (default 1)"},
        {"output", OPT_STRING, &output, "FILE  write here instead of stdout (also -o)"},
        {NULL, 0, NULL, NULL},
    };

    char **args = rewrite_short_output(argc, argv, opts);
    const char *pos[1];
    int npos = 0;
    int rc = cmd_parse(&cmd_gen, argc, args, opts, pos, 1, &npos);
    free(args);
    if (rc < 0)
        return EXIT_OK_;
    if (rc)
        return rc;
    if (npos != 1)
        return usage_error("which shape? bot, fanin, fanout or pipeline");

    struct gen_params p;
    rc = build_params(&p, pos[0], tasks, degree, pipe_size, kind, cmd, duration, output_bytes,
                      seed);
    if (rc)
        return rc;

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
