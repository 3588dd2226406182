/*
 * sim_events — the discrete-event core's pending events, popped in (t, order) order: a
 * calendar of windows in front of a small heap.
 *
 * At 10^5 nodes a few hundred thousand events wait at any time (a sample and a task end
 * a node, back-off timers), and a heap of them all spent the loop's time in cache
 * misses.  Most of them are far off: a task ends tens of milliseconds later, a sample a
 * tenth of a second, while messages arrive one latency later.  So only the events of
 * the current window (SIM_EVENTS_WINDOW_NS) are kept in a 4-ary heap; later ones are
 * appended to their window's bucket of a calendar (SIM_EVENTS_BUCKETS windows) and join
 * the heap (or, already in order, are read in turn) when their window comes, and those
 * beyond the calendar wait in one list that is sorted into it when it comes round.
 * The order popped is exactly the order (t, order) a single heap gives: the heap and
 * the run hold every event before `horizon`, and everything else is at or after it.
 *
 * Owns its arrays (sim__events_fini frees them); no globals.  Used by sim.c's loop.
 */
#ifndef JACKDAW_SIM_EVENTS_H
#define JACKDAW_SIM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 32 bytes, two to a cache line: the heap moves them on every push and pop. */
struct event {
    int64_t t;
    uint64_t order;         /* push order << 8 | enum ev_type: the order breaks ties in t */
    uint32_t node, a, b, c;
};

struct event_list {
    struct event *v;
    size_t n, cap;
};

struct sim_events {
    /* The events before `horizon`: a 4-ary min-heap, and a window's events already in
     * order when it came (the run, from run_next on). */
    struct event *heap;
    size_t nheap, heap_cap;
    struct event_list run;
    size_t run_next;
    struct event_list *buckets; /* SIM_EVENTS_BUCKETS: [horizon, year_end), by window */
    struct event_list later; /* at or after year_end, in no order */
    int64_t horizon;        /* a window's start */
    int64_t year_end;       /* at most SIM_EVENTS_BUCKETS windows after horizon */
    size_t count;           /* events held, everywhere */
};

void sim__events_init(struct sim_events *q);
void sim__events_fini(struct sim_events *q);
void sim__events_push(struct sim_events *q, const struct event *e);
/* The earliest event, removed; false when none is left. */
bool sim__events_pop(struct sim_events *q, struct event *out);

/* The node of the event likely popped next (an event pushed meanwhile may come first),
 * or UINT32_MAX: a hint for the loop to fetch its records ahead. */
static inline uint32_t sim__events_next_node(const struct sim_events *q)
{
    if (q->nheap)
        return q->heap[0].node;
    return q->run_next < q->run.n ? q->run.v[q->run_next].node : UINT32_MAX;
}

#endif
