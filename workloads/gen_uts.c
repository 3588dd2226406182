/*
 * gen_uts — the unbalanced tree search benchmark (gen.h, struct gen_uts), grown breadth
 * first in constant memory.
 *
 * Tree nodes are numbered in breadth-first order, which is also file order: expanding
 * node h gives its children the next numbers, so every parent is written before its
 * children, and a node's depth follows from where the current level ends, with no
 * per-node state.  Whether a non-root node above the depth limit has m children is one
 * draw from the seed's stream, in breadth-first order; drawn durations and output
 * sizes (when given as ranges) come from a second stream, so the tree never depends on
 * them.  The size is only known once grown, so the tree is grown twice: once to count
 * (gen_check refuses it past max_tasks before a byte is written), once to write.
 *
 * Children on their parent's node: UTS spawns a node's children where the node runs.
 * The workload format cannot pin a task to a node, so a child is tied to its parent
 * by data instead: the parent's output (the 20-byte node descriptor by default) is the
 * child's only input, and data-aware placement (`--placement mdl`) sends the ready
 * child to the node that ran its parent.  With hashed submission and placement ws the
 * tree is spread over the nodes by hash from the start.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/model/workload.h"
#include "workloads/gen_internal.h"

/* The workload reader's limit for a workload without objects. */
#define MAX_TASKS (UINT32_MAX - 1)
#define ID_SIZE 32

static int check_error(char **cause, char *reason)
{
    if (cause)
        *cause = reason;
    else
        free(reason);
    return -EINVAL;
}

double gen_uts_expected_tasks(const struct gen_uts *u)
{
    if (!u)
        return NAN;
    double r = u->q * u->m;
    if (u->depth == 0)
        return r < 1 ? 1 + u->b / (1 - r) : INFINITY;
    /* Level d >= 1 holds b r^(d-1) nodes on average. */
    double sum = 0, level = 1;
    for (uint32_t d = 1; d <= u->depth && isfinite(sum); d++, level *= r)
        sum += level;
    return 1 + u->b * sum;
}

struct writer {
    FILE *out;                  /* NULL: count only */
    const struct gen_params *p;
    uint64_t size_rng;
    char id[ID_SIZE];
    char parent[ID_SIZE];
};

static const char *parent_name(void *ctx, uint32_t k)
{
    (void)k;
    return ((struct writer *)ctx)->parent;
}

/* Writes tree node `node`, a child of `parent` (none for the root, node 0). */
static int write_node(struct writer *w, uint64_t node, uint64_t parent)
{
    const struct gen_params *p = w->p;
    snprintf(w->id, sizeof w->id, "t%" PRIu64, node);
    if (node)
        snprintf(w->parent, sizeof w->parent, "t%" PRIu64, parent);
    struct workload_task t = {
        .id = w->id,
        .kind = TASK_SLEEP,
        .stealable = true,
        .duration_s = gen_draw_seconds(&w->size_rng, p->duration, p->time_scale),
        .output_bytes = gen_draw_bytes(&w->size_rng, p->output_bytes, p->data_scale),
        .num_parents = node ? 1 : 0,
    };
    return workload_write_task_named(w->out, &t, parent_name, NULL, w);
}

/*
 * Grows the tree, writing it when w->out is set, and stops numbering nodes at `limit`.
 * Sets *count to the nodes numbered (limit when the tree is larger).
 */
static int grow(struct writer *w, uint64_t limit, uint64_t *count)
{
    const struct gen_uts *u = &w->p->uts;
    uint64_t rng = w->p->seed;
    uint64_t n = 1;             /* nodes numbered so far */
    uint64_t level_end = 1;     /* first node of the level below the one being expanded */
    uint32_t depth = 0;         /* depth of the node being expanded */
    int rc = w->out ? write_node(w, 0, 0) : 0;
    for (uint64_t h = 0; h < n && n < limit && rc == 0; h++) {
        if (h == level_end) {
            depth++;
            level_end = n;
        }
        uint32_t children;
        if (u->depth && depth >= u->depth)
            children = 0;
        else if (h == 0)
            children = u->b;
        else
            children = gen_rng_unit(&rng) < u->q ? u->m : 0;
        for (uint32_t c = 0; c < children && n < limit && rc == 0; c++, n++)
            rc = w->out ? write_node(w, n, h) : 0;
    }
    *count = n;
    return rc;
}

uint64_t gen_uts_count(const struct gen_params *p)
{
    if (!p || p->uts.b < 1 || p->uts.m < 1 || p->uts.max_tasks < 1)
        return 0;
    struct writer w = {.p = p};
    uint64_t count;
    grow(&w, (uint64_t)p->uts.max_tasks + 1, &count);
    return count;
}

int gen_uts_check(const struct gen_params *p, char **cause)
{
    const struct gen_uts *u = &p->uts;
    if (u->b < 1)
        return check_error(cause, xstrdup("the root's children b must be at least 1"));
    if (u->m < 1)
        return check_error(cause, xstrdup("the children per node m must be at least 1"));
    if (!(u->q >= 0 && u->q <= 1))
        return check_error(cause, xstrdup("the probability q must be a number from 0 to 1"));
    if (u->max_tasks < 1 || u->max_tasks > MAX_TASKS)
        return check_error(cause, xasprintf("the task limit must be between 1 and %u",
                                            (unsigned)MAX_TASKS));
    if (gen_uts_count(p) > u->max_tasks)
        return check_error(cause,
                           xasprintf("the tree grows past the limit of %u tasks (expected "
                                     "size %.6g); lower q, m or the depth, change the seed, "
                                     "or raise the limit",
                                     u->max_tasks, gen_uts_expected_tasks(u)));
    return 0;
}

int gen_uts_write(FILE *out, const struct gen_params *p)
{
    struct writer w = {
        .out = out,
        .p = p,
        .size_rng = p->seed ^ 0xbb67ae8584caa73bULL, /* any constant: a second stream */
    };
    uint64_t count;
    return grow(&w, (uint64_t)p->uts.max_tasks + 1, &count);
}
