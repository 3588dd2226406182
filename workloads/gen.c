/*
 * gen — the synthetic workload generators (see gen.h).
 *
 * Owns nothing between calls.  Called by `jackdaw gen`, benchmarks and tests.  Shapes
 * are computed from the task's index alone (heap arithmetic for the trees, division for
 * the files), so a workload of 10^7 tasks is streamed out in constant memory; every
 * line goes through workload_write_task_named / workload_write_object so the
 * generators and the parser share one definition of the format, and ids are formatted
 * on demand by the naming callbacks instead of being held.  Randomness is a private
 * splitmix64 stream: libc's rand() differs between systems and a seed must reproduce
 * the same workload anywhere.  Draws happen in file order (each object's size, then
 * each task's duration and output size), so adding a scale changes no draw.  The
 * Cholesky and UTS writers live in gen_cholesky.c and gen_uts.c and share the stream
 * through gen_internal.h.
 */
#include "workloads/gen.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/workload.h"
#include "workloads/gen_internal.h"

#define MAX_EXACT GEN_MAX_EXACT
/* The workload reader's limit (uint32 indices with one value kept free). */
#define MAX_TASKS (UINT32_MAX - 1)
/* Room for the longest id, "t_" + 10 digits + "_" + 10 digits + NUL. */
#define ID_SIZE 32

static const char *const shape_names[GEN_SHAPE_COUNT] = {
    "bot", "fanin", "fanout", "pipeline", "allpairs", "imagestack", "seismic", "cholesky", "uts",
};

void gen_params_init(struct gen_params *p)
{
    *p = (struct gen_params){
        .shape = GEN_BOT,
        .tasks = 1,
        .degree = GEN_DEFAULT_DEGREE,
        .pipe_size = GEN_DEFAULT_PIPE_SIZE,
        .kind = TASK_NOOP,
        .data_scale = 1,
        .time_scale = 1,
        .seed = GEN_DEFAULT_SEED,
    };
}

void gen_params_table3(struct gen_params *p, enum gen_shape shape, uint32_t tasks)
{
    gen_params_init(p);
    p->shape = shape;
    p->tasks = tasks;
    p->degree = GEN_TABLE3_DEGREE;
    p->pipe_size = GEN_TABLE3_PIPE_SIZE;
    p->kind = TASK_SLEEP;
    p->duration = (struct gen_range){0, GEN_TABLE3_DURATION_HI};
    p->output_bytes = (struct gen_range){0, GEN_TABLE3_OUTPUT_HI};
}

void gen_params_allpairs(struct gen_params *p, uint32_t set_size)
{
    gen_params_init(p);
    p->shape = GEN_ALLPAIRS;
    p->set_size = set_size;
    p->kind = TASK_SLEEP;
    p->duration = (struct gen_range){GEN_ALLPAIRS_DURATION, GEN_ALLPAIRS_DURATION};
    p->file_bytes = (struct gen_range){GEN_ALLPAIRS_FILE_BYTES, GEN_ALLPAIRS_FILE_BYTES};
}

void gen_params_imagestack(struct gen_params *p, uint32_t tasks, double locality)
{
    gen_params_init(p);
    p->shape = GEN_IMAGESTACK;
    p->tasks = tasks;
    p->locality = locality;
    p->kind = TASK_SLEEP;
    p->duration = (struct gen_range){GEN_IMAGESTACK_DURATION, GEN_IMAGESTACK_DURATION};
    p->output_bytes =
        (struct gen_range){GEN_IMAGESTACK_OUTPUT_BYTES, GEN_IMAGESTACK_OUTPUT_BYTES};
    p->file_bytes = (struct gen_range){GEN_IMAGESTACK_FILE_BYTES, GEN_IMAGESTACK_FILE_BYTES};
}

void gen_params_seismic(struct gen_params *p, uint32_t shots, double cost)
{
    gen_params_init(p);
    p->shape = GEN_SEISMIC;
    p->tasks = shots;
    p->kind = TASK_SLEEP;
    p->duration = (struct gen_range){cost, cost};
}

void gen_params_cholesky(struct gen_params *p, uint32_t tiles)
{
    gen_params_init(p);
    p->shape = GEN_CHOLESKY;
    p->tasks = 0;
    p->kind = TASK_SLEEP;
    p->duration = (struct gen_range){GEN_CHOLESKY_TILE_COST, GEN_CHOLESKY_TILE_COST};
    p->cholesky = (struct gen_cholesky){
        .tiles = tiles,
        .sparsity = GEN_CHOLESKY_SPARSITY,
        .tile_size = GEN_CHOLESKY_TILE_SIZE,
    };
}

void gen_params_uts(struct gen_params *p, double cost)
{
    gen_params_init(p);
    p->shape = GEN_UTS;
    p->tasks = 0;
    p->kind = TASK_SLEEP;
    p->duration = (struct gen_range){cost, cost};
    p->output_bytes = (struct gen_range){GEN_UTS_OUTPUT_BYTES, GEN_UTS_OUTPUT_BYTES};
    p->uts = (struct gen_uts){
        .b = GEN_UTS_B, .m = GEN_UTS_M, .q = GEN_UTS_Q, .max_tasks = GEN_UTS_MAX_TASKS,
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

static bool bytes_ok(struct gen_range r, double scale)
{
    return range_ok(r) && floor(r.lo) == r.lo && floor(r.hi) == r.hi && r.hi < MAX_EXACT &&
           r.hi * scale < MAX_EXACT;
}

static int check_error(char **cause, const char *reason)
{
    if (cause)
        *cause = xstrdup(reason);
    return -EINVAL;
}

/* Files of an image stacking workload: the locality is tasks per file. */
static uint32_t imagestack_files(const struct gen_params *p)
{
    double files = round((double)p->tasks / p->locality);
    return files < 1 ? 1 : (uint32_t)files;
}

uint64_t gen_task_count(const struct gen_params *p)
{
    if (!p)
        return 0;
    switch (p->shape) {
    case GEN_ALLPAIRS:
        return (uint64_t)p->set_size * p->set_size;
    case GEN_IMAGESTACK:
        return (uint64_t)p->tasks + 1;
    case GEN_CHOLESKY:
        return gen_cholesky_tasks(p->cholesky.tiles);
    case GEN_UTS:
        return gen_uts_count(p);
    default:
        return p->tasks;
    }
}

uint64_t gen_object_count(const struct gen_params *p)
{
    if (!p)
        return 0;
    switch (p->shape) {
    case GEN_ALLPAIRS:
        return 2 * (uint64_t)p->set_size;
    case GEN_IMAGESTACK:
        return p->locality >= 1 && p->tasks >= 1 ? imagestack_files(p) : 0;
    case GEN_CHOLESKY:
        return (uint64_t)p->cholesky.tiles * ((uint64_t)p->cholesky.tiles + 1) / 2;
    default:
        return 0;
    }
}

/* The checks that concern the shape's own parameters. */
static int check_shape(const struct gen_params *p, char **cause)
{
    if (p->shape != GEN_ALLPAIRS && p->set_size)
        return check_error(cause, "a set size is only for allpairs");
    if (p->shape != GEN_IMAGESTACK && p->locality != 0)
        return check_error(cause, "a locality is only for imagestack");
    if (p->shape != GEN_ALLPAIRS && p->shape != GEN_IMAGESTACK && !range_zero(p->file_bytes))
        return check_error(cause, "file sizes are only for allpairs and imagestack");
    if (p->shape != GEN_ALLPAIRS && p->shape != GEN_IMAGESTACK && p->file_nodes)
        return check_error(cause, "file nodes are only for allpairs and imagestack");
    if (p->file_nodes > INT32_MAX)
        return check_error(cause, "too many file nodes");
    const struct gen_cholesky *c = &p->cholesky;
    const struct gen_uts *u = &p->uts;
    if (p->shape != GEN_CHOLESKY &&
        (c->tiles || c->sparsity != 0 || c->tile_size || c->nodes || c->fill_in))
        return check_error(cause, "tile parameters are only for cholesky");
    if (p->shape != GEN_UTS && (u->b || u->m || u->q != 0 || u->depth || u->max_tasks))
        return check_error(cause, "tree parameters are only for uts");
    bool application = p->shape == GEN_SEISMIC || p->shape == GEN_CHOLESKY || p->shape == GEN_UTS;
    if (application && p->kind != TASK_SLEEP)
        return check_error(cause, "the tasks of seismic, cholesky and uts are sleep tasks");
    if ((p->shape == GEN_CHOLESKY || p->shape == GEN_UTS) && p->tasks)
        return check_error(cause, "the task count of cholesky and uts follows from their "
                                  "parameters");
    switch (p->shape) {
    case GEN_ALLPAIRS:
        if (p->set_size < 1)
            return check_error(cause, "the set size must be at least 1");
        /* Checked as a product of 64-bit values: set_size^2 overflows 32 bits. */
        if (gen_task_count(p) > WORKLOAD_MAX_OBJECTS)
            return check_error(cause, "too many tasks (a workload with objects holds at "
                                      "most 2147483647)");
        break;
    case GEN_IMAGESTACK:
        if (p->tasks < 1)
            return check_error(cause, "the task count must be at least 1");
        if (!(p->locality >= 1) || !isfinite(p->locality))
            return check_error(cause, "the locality must be a number >= 1");
        if (p->locality > p->tasks)
            return check_error(cause, "the locality must not exceed the task count");
        if (gen_task_count(p) > WORKLOAD_MAX_OBJECTS)
            return check_error(cause, "too many tasks (a workload with objects holds at "
                                      "most 2147483647)");
        break;
    case GEN_CHOLESKY:
        return gen_cholesky_check(p, cause);
    case GEN_UTS:
        return gen_uts_check(p, cause);
    default:
        if (p->tasks < 1)
            return check_error(cause, "the task count must be at least 1");
        if (p->tasks > MAX_TASKS)
            return check_error(cause, "too many tasks");
        break;
    }
    return 0;
}

int gen_check(const struct gen_params *p, char **cause)
{
    if (!p)
        return -EINVAL;
    if ((unsigned)p->shape >= GEN_SHAPE_COUNT)
        return check_error(cause, "unknown shape");
    int rc = check_shape(p, cause);
    if (rc < 0)
        return rc;
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
    if (!(isfinite(p->data_scale) && p->data_scale >= 0))
        return check_error(cause, "the data scale must be a number >= 0");
    if (!(isfinite(p->time_scale) && p->time_scale >= 0))
        return check_error(cause, "the time scale must be a number >= 0");
    if (p->kind != TASK_SLEEP && p->time_scale != 1)
        return check_error(cause, "a time scale is only for sleep tasks");
    if (!bytes_ok(p->output_bytes, 1))
        return check_error(cause, "bad output size range");
    if (!bytes_ok(p->file_bytes, 1))
        return check_error(cause, "bad file size range");
    if (!bytes_ok(p->output_bytes, p->data_scale) || !bytes_ok(p->file_bytes, p->data_scale))
        return check_error(cause, "the data scale makes sizes too large (2^53 bytes or more)");
    return 0;
}

/* ------------------------------------------------------------------------------------ */

/* splitmix64 (Steele, Lea, Flood 2014): one add and a mix per draw, no bad seeds. */
uint64_t gen_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double gen_rng_unit(uint64_t *state)
{
    return (double)(gen_rng_next(state) >> 11) * 0x1.0p-53;
}

static double draw_seconds(uint64_t *rng, struct gen_range r)
{
    if (r.lo == r.hi)
        return r.lo;
    double u = gen_rng_unit(rng);
    /* Microseconds are finer than any scheduler measures and keep the file readable. */
    double d = round((r.lo + (r.hi - r.lo) * u) * 1e6) / 1e6;
    return d < r.lo ? r.lo : d > r.hi ? r.hi : d;
}

static double scale_seconds(double seconds, double scale)
{
    /* Exactly the unscaled value at scale 1, whatever the rounding would do. */
    return scale == 1 ? seconds : round(seconds * scale * 1e6) / 1e6;
}

double gen_draw_seconds(uint64_t *rng, struct gen_range r, double scale)
{
    return scale_seconds(draw_seconds(rng, r), scale);
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
        x = gen_rng_next(rng);
    while (x < threshold);
    return lo + x % span;
}

uint64_t gen_draw_bytes(uint64_t *rng, struct gen_range r, double scale)
{
    uint64_t b = draw_bytes(rng, r);
    return scale == 1 ? b : (uint64_t)round((double)b * scale);
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
    case GEN_ALLPAIRS:
    case GEN_IMAGESTACK:
    case GEN_SEISMIC:
    case GEN_CHOLESKY:
    case GEN_UTS:
    case GEN_SHAPE_COUNT:
        break;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Writers, one per family.  The naming callbacks format ids into the context's buffer,
 * which workload_write_task_named copies out before asking for the next. */

/* Fills the parts of a task every family draws the same way. */
static void draw_task(const struct gen_params *p, uint64_t *rng, struct workload_task *t)
{
    t->duration_s = p->kind == TASK_SLEEP ? gen_draw_seconds(rng, p->duration, p->time_scale)
                                          : 0;
    t->output_bytes = gen_draw_bytes(rng, p->output_bytes, p->data_scale);
}

static struct workload_task task_template(const struct gen_params *p, char *id)
{
    return (struct workload_task){
        .id = id,
        .kind = p->kind,
        .stealable = true,
        .cmd = (char *)p->cmd,
    };
}

/* pin_rng: the file-placement stream (file_nodes), its own so that pinning changes
 * where files live and nothing else. */
static int write_object(FILE *out, const struct gen_params *p, uint64_t *rng, uint64_t *pin_rng,
                        const char *id)
{
    struct workload_object o = {
        .id = (char *)id,
        .bytes = gen_draw_bytes(rng, p->file_bytes, p->data_scale),
        .node = WORKLOAD_NODE_SPREAD,
    };
    if (p->file_nodes)
        o.node = (int32_t)(gen_rng_next(pin_rng) % p->file_nodes);
    return workload_write_object(out, &o);
}

/* The pinning stream's start: any fixed function of the seed other than the seed. */
static uint64_t pin_seed(const struct gen_params *p)
{
    return p->seed ^ 0x9e3779b97f4a7c15ull;
}

struct dag_names {
    const uint32_t *parents;    /* borrowed; file indices */
    char id[ID_SIZE];
};

static const char *dag_parent(void *ctx, uint32_t k)
{
    struct dag_names *n = ctx;
    snprintf(n->id, sizeof n->id, "t%u", n->parents[k]);
    return n->id;
}

static int write_dag(FILE *out, const struct gen_params *p)
{
    uint32_t max_parents = 1;
    if (p->shape == GEN_FANIN)
        max_parents = p->degree < p->tasks ? p->degree : p->tasks;
    uint32_t *parents = xmalloc((size_t)max_parents * sizeof *parents);
    struct dag_names names = {.parents = parents};
    char id[ID_SIZE];
    struct workload_task t = task_template(p, id);
    uint64_t rng = p->seed;
    int rc = 0;
    for (uint32_t i = 0; i < p->tasks && rc == 0; i++) {
        snprintf(id, sizeof id, "t%u", i);
        t.num_parents = parents_of(p, i, parents);
        draw_task(p, &rng, &t);
        rc = workload_write_task_named(out, &t, dag_parent, NULL, &names);
    }
    free(parents);
    return rc;
}

struct pair_names {
    uint32_t a, b;              /* the task's file in set A and in set B */
    char id[ID_SIZE];
};

static const char *pair_input(void *ctx, uint32_t k)
{
    struct pair_names *n = ctx;
    snprintf(n->id, sizeof n->id, k == 0 ? "a%u" : "b%u", k == 0 ? n->a : n->b);
    return n->id;
}

/*
 * All-pairs (paper 000 Figure 6): set A's files, set B's, then one task per pair in row
 * order.  Every file is spread, so with workload_object_node's round robin file k of the
 * 2N lands on node k mod nodes and every node holds the same share; with file_nodes each
 * file's node is drawn, as the paper's "uniformly distributed" files were, and the
 * shares differ (which is what MDL's tail suffers from in paper 000 §IV.D).
 */
static int write_allpairs(FILE *out, const struct gen_params *p)
{
    uint64_t rng = p->seed, pin_rng = pin_seed(p);
    char id[ID_SIZE];
    int rc = 0;
    for (uint32_t set = 0; set < 2 && rc == 0; set++) {
        for (uint32_t k = 0; k < p->set_size && rc == 0; k++) {
            snprintf(id, sizeof id, "%c%u", set ? 'b' : 'a', k);
            rc = write_object(out, p, &rng, &pin_rng, id);
        }
    }
    struct workload_task t = task_template(p, id);
    t.num_inputs = 2;
    struct pair_names names = {0};
    for (uint32_t i = 0; i < p->set_size && rc == 0; i++) {
        for (uint32_t j = 0; j < p->set_size && rc == 0; j++) {
            snprintf(id, sizeof id, "t_%u_%u", i, j);
            names.a = i;
            names.b = j;
            draw_task(p, &rng, &t);
            rc = workload_write_task_named(out, &t, NULL, pair_input, &names);
        }
    }
    return rc;
}

struct stack_names {
    uint32_t file;
    char id[ID_SIZE];
};

static const char *stack_input(void *ctx, uint32_t k)
{
    struct stack_names *n = ctx;
    (void)k;
    snprintf(n->id, sizeof n->id, "f%u", n->file);
    return n->id;
}

/* The aggregation task's parents are every stacking task, t0 .. t(T-1). */
static const char *stack_parent(void *ctx, uint32_t k)
{
    struct stack_names *n = ctx;
    snprintf(n->id, sizeof n->id, "t%u", k);
    return n->id;
}

/*
 * Image stacking (paper 000 §IV.C.1, Figure 3): M = round(T / L) files, T tasks that
 * each read one file, and "tend", which waits for every output.  Task i reads file
 * floor(i * M / T): for a whole L dividing T that is i / L, every file read by exactly L
 * tasks; for a real L (the paper's 1.38) each file is read by floor(T / M) or
 * ceil(T / M) tasks, the closest the locality allows.  The paper gives the aggregation
 * no cost of its own, so it is one more task drawn like the others.
 */
static int write_imagestack(FILE *out, const struct gen_params *p)
{
    uint32_t files = imagestack_files(p);
    uint64_t rng = p->seed, pin_rng = pin_seed(p);
    char id[ID_SIZE];
    int rc = 0;
    for (uint32_t k = 0; k < files && rc == 0; k++) {
        snprintf(id, sizeof id, "f%u", k);
        rc = write_object(out, p, &rng, &pin_rng, id);
    }
    struct workload_task t = task_template(p, id);
    t.num_inputs = 1;
    struct stack_names names = {0};
    for (uint32_t i = 0; i < p->tasks && rc == 0; i++) {
        snprintf(id, sizeof id, "t%u", i);
        names.file = (uint32_t)((uint64_t)i * files / p->tasks);
        draw_task(p, &rng, &t);
        rc = workload_write_task_named(out, &t, NULL, stack_input, &names);
    }
    if (rc == 0) {
        snprintf(id, sizeof id, "tend");
        t.num_inputs = 0;
        t.num_parents = p->tasks;
        draw_task(p, &rng, &t);
        rc = workload_write_task_named(out, &t, stack_parent, NULL, &names);
    }
    return rc;
}

int gen_write(FILE *out, const struct gen_params *p, char **cause)
{
    if (!out)
        return -EINVAL;
    int rc = gen_check(p, cause);
    if (rc < 0)
        return rc;
    switch (p->shape) {
    case GEN_ALLPAIRS:
        rc = write_allpairs(out, p);
        break;
    case GEN_IMAGESTACK:
        rc = write_imagestack(out, p);
        break;
    case GEN_CHOLESKY:
        rc = gen_cholesky_write(out, p);
        break;
    case GEN_UTS:
        rc = gen_uts_write(out, p);
        break;
    default:
        rc = write_dag(out, p);
        break;
    }
    if (rc < 0 && cause)
        *cause = xasprintf("cannot write: %s", strerror(-rc));
    return rc;
}
