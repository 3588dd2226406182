/*
 * dispatch — the dispatcher's choice (see dispatch.h).  No I/O, no clock, no globals;
 * called by core/runtime/node_task.c, core/sim/sim.c, core/sim/sim_sg_task.c and
 * tests/unit/test_dispatch.c.
 */
#include "core/policy/dispatch.h"

bool dispatch_fits(uint32_t slots, uint32_t held, uint32_t cores)
{
    return held == 0 || (held < slots && cores <= slots - held);
}

/* What a scan of the first DISPATCH_SCAN entries of a queue that need data found (the
 * top of its `data` heap, its highest priorities and oldest orders, roughly): the first
 * whose inputs are all here, and the one missing the fewest bytes but some, the first in
 * the queue's order among equals; SIZE_MAX when none.  Wide tasks keep their place: a
 * narrow one must not pass a wide one for ever. */
struct scan {
    size_t here, cheapest;
};

static struct scan scan_near_head(const struct readyq *q, const struct dispatch_tasks *t,
                                  bool stop_at_here)
{
    struct scan f = {SIZE_MAX, SIZE_MAX};
    uint64_t best = UINT64_MAX;
    size_t len = readyq_data_len(q);
    for (size_t i = 0; i < len && i < DISPATCH_SCAN; i++) {
        const struct readyq_entry *e = readyq_entry_at(q, i);
        if (t->cores(t->ctx, e) != 1)
            continue;
        uint64_t c = t->missing(t->ctx, e);
        if (c == 0) {
            if (f.here == SIZE_MAX)
                f.here = i;
            if (stop_at_here)
                break;
        } else if (c < best || (c == best && readyq_before_at(q, i, f.cheapest))) {
            f.cheapest = i;
            best = c;
        }
    }
    return f;
}

static void *take(struct readyq *q, size_t i, enum dispatch_kind kind, enum dispatch_kind *out)
{
    *out = kind;
    return readyq_take_at(q, i);
}

/*
 * A free slot takes the first task near the head whose inputs are all here, from queue 0
 * or else from SReadyQ.  The fetch window takes the one of queue 0 missing the fewest
 * bytes but some: its fetch then overlaps with the runs of the ones already here, where
 * taking those first (they cost nothing) left every fetch for when they ran out — and
 * then all nodes fetched `slots` files at once with nothing to run beside them
 * (all-pairs: a burst of four 2.4 MB fetches per node sharing one 1 Gbit/s link, 120 ms
 * each, twice near each run's end).  Only when nothing near the head needs a fetch does
 * the window take one that is here.
 *
 * SReadyQ is searched behind LReadyQ because FLDS's monitor spills LReadyQ's tail there:
 * what stays in LReadyQ is its head, often the tasks still to fetch for, while the
 * spilled ones read files this node has cached since; a slot waiting for LReadyQ's fetch
 * beside those idled a tenth of a second per node in every FLDS run of all-pairs.
 * Taking from SReadyQ is what the executors do once LReadyQ is empty, only earlier.
 *
 * Otherwise the head: a task without inputs when a slot is free (it stays queued, and
 * stealable, until then), one with inputs when the window has room.  When a slot is free
 * but the window is full and the head needs data, the oldest task that needs none runs
 * instead of the slot idling.  A task is taken only when its cores fit beside the slots
 * running or promised: a wide head waits, and keeps narrower ones behind it from passing.
 */
void *dispatch_next(const struct dispatch_slots *sl, struct readyq *const *qs, unsigned nq,
                    const struct dispatch_tasks *t, enum dispatch_kind *kind)
{
    *kind = DISPATCH_NONE;
    struct readyq *q = qs[0];
    if (!readyq_len(q))
        return NULL;
    uint32_t spoken = sl->busy + sl->staged;
    /* At most `window` fetching, and at most slots + window tasks out of the queues in
     * all: what sits in the queues stays stealable. */
    bool window_free = sl->window
                           ? sl->staging < sl->window && spoken + sl->staging < sl->slots + sl->window
                           : spoken + sl->staging < sl->slots;
    /* Spares a read of the head's record, a cache miss per pass over a busy node at
     * 10^5 simulated nodes. */
    if (!window_free && !dispatch_fits(sl->slots, spoken, 1))
        return NULL;
    const struct readyq_entry *head = readyq_entry_at(q, 0);
    bool head_inputs = t->inputs(t->ctx, head);
    if (!head_inputs && !dispatch_fits(sl->slots, spoken, 1))
        return NULL;
    uint32_t head_cores = t->cores(t->ctx, head);
    bool slot_free = dispatch_fits(sl->slots, spoken, head_cores);
    if (head_inputs && head_cores == 1 && (slot_free || window_free)) {
        /* A free slot takes the first task that is here, so the scan may stop there;
         * without one it has run to the end, and found the window's cheapest. */
        struct scan f = scan_near_head(q, t, slot_free);
        if (slot_free) {
            if (f.here != SIZE_MAX)
                return take(q, f.here, DISPATCH_RUN, kind);
            size_t i = nq > 1 ? scan_near_head(qs[1], t, true).here : SIZE_MAX;
            if (i != SIZE_MAX)
                return take(qs[1], i, DISPATCH_RUN, kind);
        }
        if (window_free) {
            size_t i = f.cheapest != SIZE_MAX ? f.cheapest : f.here;
            if (i != SIZE_MAX)
                return take(q, i, DISPATCH_STAGE, kind);
        }
    }
    if (head_inputs ? window_free : slot_free)
        return take(q, 0, head_inputs ? DISPATCH_STAGE : DISPATCH_RUN, kind);
    if (!slot_free)
        return NULL;
    /* A slot is free, the fetch window is full and the head needs data. */
    size_t low = readyq_low_at(q);
    const struct readyq_entry *e = readyq_entry_at(q, low);
    if (t->inputs(t->ctx, e) || !dispatch_fits(sl->slots, spoken, t->cores(t->ctx, e)))
        return NULL;
    return take(q, low, DISPATCH_RUN, kind);
}
