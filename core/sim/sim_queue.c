/*
 * sim_queue — the simulator's ready queues, the dispatcher's choice, and staged FIFOs
 * (sim_queue.h).
 */
#include "core/sim/sim_queue.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

static void take_room(struct sim_take *t, size_t n)
{
    if (n <= t->cap)
        return;
    size_t items = t->cap, tasks = t->cap;
    t->items = xgrow(t->items, &items, n, sizeof *t->items);
    t->tasks = xgrow(t->tasks, &tasks, n, sizeof *t->tasks);
    t->cap = items < tasks ? items : tasks;
}

size_t sim__q_take_tail(struct readyq *q, size_t n, struct sim_take *t)
{
    take_room(t, n);
    size_t got = readyq_take_tail(q, n, t->items);
    for (size_t i = 0; i < got; i++)
        t->tasks[i] = sim__task_of(t->items[i]);
    return got;
}

size_t sim__q_take_for_thief(struct readyq *sready, uint32_t keep, uint32_t k,
                             struct sim_take *t)
{
    /* keep <= free slots <= slots: set aside, then queued again. */
    uint32_t small[64], *kept = keep > 64 ? xmalloc(keep * sizeof *kept) : small, nkept = 0;
    while (nkept < keep && readyq_len(sready))
        kept[nkept++] = sim__task_of(readyq_take_low(sready));
    size_t got = sim__q_take_tail(sready, k, t);
    for (uint32_t i = 0; i < nkept; i++)
        sim__q_push(sready, 0, kept[i]);
    if (kept != small)
        free(kept);
    return got;
}

void sim__take_free(struct sim_take *t)
{
    free(t->items);
    free(t->tasks);
    free(t->held);
    *t = (struct sim_take){0};
}

uint64_t sim__q_spill(struct readyq *lready, uint64_t move, struct sim_take *t,
                      const struct sim_spill *sp)
{
    uint64_t moved = 0;
    size_t nheld = 0, taken;
    while (moved < move && (taken = sim__q_take_tail(lready, move - moved, t)) > 0) {
        for (size_t i = 0; i < taken; i++) {
            uint32_t task = t->tasks[i];
            if (!sp->stealable(sp->ctx, task)) {
                t->held = xgrow(t->held, &t->held_cap, nheld + 1, sizeof *t->held);
                t->held[nheld++] = task;
                continue;
            }
            sp->spill(sp->ctx, task);
            moved++;
        }
    }
    for (size_t i = 0; i < nheld; i++)
        sim__q_push(lready, sp->priority(sp->ctx, t->held[i]), t->held[i]);
    return moved;
}

/* The engine's view of a task, as dispatch.h asks for it: a task needs the window when
 * its inputs sum to some bytes (one whose inputs are empty moves nothing here). */
static bool task_inputs(void *ctx, const struct readyq_entry *e)
{
    (void)ctx;
    return e->priority != 0;
}

static uint32_t entry_cores(void *ctx, const struct readyq_entry *e)
{
    const struct sim_task_view *v = ctx;
    return v->cores(v->ctx, sim__task_of(e->item));
}

static uint64_t task_missing(void *ctx, const struct readyq_entry *e)
{
    const struct sim_task_view *v = ctx;
    return v->missing(v->ctx, sim__task_of(e->item));
}

enum sim_step sim__q_next(struct readyq *lready, struct readyq *sready,
                          const struct dispatch_slots *sl, bool metered,
                          const struct sim_task_view *task_view, uint32_t *task)
{
    struct readyq *q = readyq_len(lready) ? lready : sready;
    if (!readyq_len(q))
        return SIM_STEP_NONE;
    if (!metered) {
        /* Every input is here at once: the head runs when its slots are free. */
        uint32_t cores = task_view->cores(task_view->ctx, sim__task_of(readyq_peek(q)));
        if (!dispatch_fits(sl->slots, sl->busy + sl->staged, cores))
            return SIM_STEP_NONE;
        *task = sim__q_pop(q);
        return SIM_STEP_RUN;
    }
    struct readyq *const qs[2] = {q, sready};
    const struct dispatch_tasks tasks = {
        .ctx = (void *)task_view, .inputs = task_inputs, .cores = entry_cores,
        .missing = task_missing,
    };
    enum dispatch_kind kind;
    void *item = dispatch_next(sl, qs, q == lready ? 2 : 1, &tasks, &kind);
    if (!item)
        return SIM_STEP_NONE;
    *task = sim__task_of(item);
    return kind == DISPATCH_RUN ? SIM_STEP_RUN : SIM_STEP_FETCH;
}

void sim__fifo_push(uint32_t **v, size_t *head, size_t *n, size_t *cap, uint32_t task)
{
    if (*head + *n == *cap && *head) {
        memmove(*v, *v + *head, *n * sizeof **v);
        *head = 0;
    }
    *v = xgrow(*v, cap, *head + *n + 1, sizeof **v);
    (*v)[*head + (*n)++] = task;
}

uint32_t *sim__roots_in_turn(const struct workload *wl, uint32_t nodes,
                             uint32_t (*holder)(const void *ctx, uint32_t task),
                             const void *ctx, uint32_t *nroots)
{
    /* Each root's rank among its holder's, in the workload's order; then a counting
     * sort by rank, stable, so that equal ranks keep that order. */
    uint32_t *count = xcalloc(nodes ? nodes : 1, sizeof *count);
    uint32_t *rank = xcalloc(wl->count ? wl->count : 1, sizeof *rank);
    uint32_t ranks = 0, n = 0;
    for (uint32_t k = 0; k < wl->count; k++) {
        uint32_t i = wl->topo[k];
        if (wl->tasks[i].num_parents)
            continue;
        rank[i] = count[holder(ctx, i)]++;
        ranks = rank[i] + 1 > ranks ? rank[i] + 1 : ranks;
        n++;
    }
    free(count);
    uint32_t *start = xcalloc((size_t)ranks + 1, sizeof *start);
    for (uint32_t i = 0; i < wl->count; i++)
        if (!wl->tasks[i].num_parents)
            start[rank[i] + 1]++;
    for (uint32_t r = 0; r < ranks; r++)
        start[r + 1] += start[r];
    uint32_t *order = xcalloc(n ? n : 1, sizeof *order);
    for (uint32_t k = 0; k < wl->count; k++) {
        uint32_t i = wl->topo[k];
        if (!wl->tasks[i].num_parents)
            order[start[rank[i]]++] = i;
    }
    free(start);
    free(rank);
    *nroots = n;
    return order;
}
