/*
 * gen — the synthetic DAG generators (see gen.h).
 *
 * Owns nothing between calls.  Called by `jackdaw gen`, benchmarks and tests.  Shapes
 * are computed from the task's index alone (heap arithmetic for the trees), so a
 * workload of 10^7 tasks is streamed out in constant memory; every line goes through
 * workload_write_task so the generators and the parser share one definition of the
 * format.  Randomness is a private splitmix64 stream: libc's rand() differs between
 * systems and a seed must reproduce the same workload anywhere.
 */
#include "workloads/gen.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/workload.h"

/* Byte counts travel through doubles; above this they stop being exact integers. */
#define MAX_EXACT 9007199254740992.0 /* 2^53 */
/* The workload reader's limit (uint32 indices with one value kept free). */
#define MAX_TASKS (UINT32_MAX - 1)
/* "t" + 10 digits + NUL. */
#define ID_SIZE 12

static const char *const shape_names[GEN_SHAPE_COUNT] = {"bot", "fanin", "fanout", "pipeline"};

void gen_params_init(struct gen_params *p)
{
    *p = (struct gen_params){
        .shape = GEN_BOT,
        .tasks = 1,
        .degree = GEN_DEFAULT_DEGREE,
        .pipe_size = GEN_DEFAULT_PIPE_SIZE,
        .kind = TASK_NOOP,
        .seed = GEN_DEFAULT_SEED,
    };
}

const char *gen_shape_name(enum gen_shape shape)
{
    return (unsigned)shape < GEN_SHAPE_COUNT ? shape_names[shape] : NULL;
}

int gen_shape_parse(const char *name)
{
    for (int s = 0; name && s < GEN_SHAPE_COUNT; s++)
        if (strcmp(name, shape_names[s]) == 0)
            return s;
    return -EINVAL;
}

static int range_error(char **cause, const char *text, const char *reason)
{
    if (cause)
        *cause = xasprintf("'%s' %s", text, reason);
    return -EINVAL;
}

int gen_range_parse(const char *text, bool integer, struct gen_range *range, char **cause)
{
    if (!text || !range)
        return -EINVAL;
    char *end;
    errno = 0;
    double lo = strtod(text, &end);
    double hi = lo;
    if (end == text)
        return range_error(cause, text, "is not a number or a range A-B");
    if (*end == '-') {
        const char *second = end + 1;
        hi = strtod(second, &end);
        if (end == second)
            return range_error(cause, text, "is not a number or a range A-B");
    }
    if (*end)
        return range_error(cause, text, "is not a number or a range A-B");
    if (errno == ERANGE || !isfinite(lo) || !isfinite(hi))
        return range_error(cause, text, "is out of range");
    if (lo < 0 || hi < 0)
        return range_error(cause, text, "must not be negative");
    if (lo > hi)
        return range_error(cause, text, "has its lower bound above its upper one");
    if (integer && (floor(lo) != lo || floor(hi) != hi))
        return range_error(cause, text, "must be whole numbers");
    if (integer && hi >= MAX_EXACT)
        return range_error(cause, text, "is too large");
    *range = (struct gen_range){.lo = lo, .hi = hi};
    return 0;
}

static bool range_ok(struct gen_range r)
{
    return isfinite(r.lo) && isfinite(r.hi) && r.lo >= 0 && r.lo <= r.hi;
}

static bool range_zero(struct gen_range r)
{
    return r.lo == 0 && r.hi == 0;
}

static int check_error(char **cause, const char *reason)
{
    if (cause)
        *cause = xstrdup(reason);
    return -EINVAL;
}

int gen_check(const struct gen_params *p, char **cause)
{
    if (!p)
        return -EINVAL;
    if ((unsigned)p->shape >= GEN_SHAPE_COUNT)
        return check_error(cause, "unknown shape");
    if (p->tasks < 1)
        return check_error(cause, "the task count must be at least 1");
    if (p->tasks > MAX_TASKS)
        return check_error(cause, "too many tasks");
    if ((p->shape == GEN_FANIN || p->shape == GEN_FANOUT) && p->degree < 1)
        return check_error(cause, "the degree must be at least 1");
    if (p->shape == GEN_PIPELINE && p->pipe_size < 1)
        return check_error(cause, "the pipe size must be at least 1");
    if (p->kind >= TASK_KIND_COUNT)
        return check_error(cause, "unknown task kind");
    if (p->kind == TASK_COMMAND) {
        if (!p->cmd || !p->cmd[0])
            return check_error(cause, "command tasks need a cmd");
        /* json_string() refuses invalid UTF-8, which the reader would refuse later. */
        json_t *s = json_string(p->cmd);
        if (!s)
            return check_error(cause, "cmd is not valid UTF-8");
        json_decref(s);
    } else if (p->cmd) {
        return check_error(cause, "cmd is only for command tasks");
    }
    if (!range_ok(p->duration))
        return check_error(cause, "bad duration range");
    if (p->kind != TASK_SLEEP && !range_zero(p->duration))
        return check_error(cause, "a duration is only for sleep tasks");
    if (!range_ok(p->output_bytes) || floor(p->output_bytes.lo) != p->output_bytes.lo ||
        floor(p->output_bytes.hi) != p->output_bytes.hi || p->output_bytes.hi >= MAX_EXACT)
        return check_error(cause, "bad output size range");
    return 0;
}

/* ------------------------------------------------------------------------------------ */

/* splitmix64 (Steele, Lea, Flood 2014): one add and a mix per draw, no bad seeds. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double draw_seconds(uint64_t *rng, struct gen_range r)
{
    if (r.lo == r.hi)
        return r.lo;
    double u = (double)(rng_next(rng) >> 11) * 0x1.0p-53;
    /* Microseconds are finer than any scheduler measures and keep the file readable. */
    double d = round((r.lo + (r.hi - r.lo) * u) * 1e6) / 1e6;
    return d < r.lo ? r.lo : d > r.hi ? r.hi : d;
}

static uint64_t draw_bytes(uint64_t *rng, struct gen_range r)
{
    uint64_t lo = (uint64_t)r.lo, hi = (uint64_t)r.hi;
    if (lo == hi)
        return lo;
    uint64_t span = hi - lo + 1;
    /* Reject the short top slice of the 64-bit range so every value is equally likely. */
    uint64_t threshold = -span % span;
    uint64_t x;
    do
        x = rng_next(rng);
    while (x < threshold);
    return lo + x % span;
}

/* Parents of task `i` (file order) as file indices, ascending; returns their count. */
static uint32_t parents_of(const struct gen_params *p, uint32_t i, uint32_t *out)
{
    uint64_t n = p->tasks, d = p->degree;
    switch (p->shape) {
    case GEN_FANOUT:
        /* Heap order from the root: task i > 0 hangs under (i - 1) / d. */
        if (i == 0)
            return 0;
        out[0] = (uint32_t)((i - 1) / d);
        return 1;
    case GEN_FANIN: {
        /* The fan-out heap with every edge turned round, written leaves first: task i is
         * heap node h = n-1-i, and its heap children d*h+1 .. d*h+d are its parents. */
        uint64_t h = n - 1 - i;
        uint64_t first = d * h + 1;
        if (first >= n)
            return 0;
        uint64_t last = d * h + d < n - 1 ? d * h + d : n - 1;
        uint32_t k = 0;
        for (uint64_t c = last + 1; c-- > first;)
            out[k++] = (uint32_t)(n - 1 - c);
        return k;
    }
    case GEN_PIPELINE:
        if (i % p->pipe_size == 0)
            return 0;
        out[0] = i - 1;
        return 1;
    case GEN_BOT:
    case GEN_SHAPE_COUNT:
        break;
    }
    return 0;
}

int gen_write(FILE *out, const struct gen_params *p, char **cause)
{
    if (!out)
        return -EINVAL;
    int rc = gen_check(p, cause);
    if (rc < 0)
        return rc;

    uint32_t max_parents = 1;
    if (p->shape == GEN_FANIN)
        max_parents = p->degree < p->tasks ? p->degree : p->tasks;
    /* workload_write_task names parents through a workload; a scratch one holding just
     * this task's parents is enough. */
    struct workload_task *scratch = xcalloc(max_parents, sizeof *scratch);
    char *ids = xmalloc((size_t)(max_parents + 1) * ID_SIZE);
    uint32_t *parent_index = xmalloc((size_t)max_parents * sizeof *parent_index);
    uint32_t *slot = xmalloc((size_t)max_parents * sizeof *slot);
    for (uint32_t k = 0; k < max_parents; k++) {
        scratch[k].id = ids + (size_t)(k + 1) * ID_SIZE;
        slot[k] = k;
    }
    struct workload wl = {.tasks = scratch, .count = max_parents};

    uint64_t rng = p->seed;
    struct workload_task t = {
        .id = ids,
        .kind = p->kind,
        .stealable = true,
        .cmd = (char *)p->cmd,
        .parents = slot,
    };
    for (uint32_t i = 0; i < p->tasks && rc == 0; i++) {
        snprintf(t.id, ID_SIZE, "t%u", i);
        t.num_parents = parents_of(p, i, parent_index);
        for (uint32_t k = 0; k < t.num_parents; k++)
            snprintf(scratch[k].id, ID_SIZE, "t%u", parent_index[k]);
        t.duration_s = p->kind == TASK_SLEEP ? draw_seconds(&rng, p->duration) : 0;
        t.output_bytes = draw_bytes(&rng, p->output_bytes);
        rc = workload_write_task(out, &t, &wl);
    }
    if (rc < 0 && cause)
        *cause = xasprintf("cannot write: %s", strerror(-rc));
    free(slot);
    free(parent_index);
    free(ids);
    free(scratch);
    return rc;
}
