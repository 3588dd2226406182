/*
 * steal — pure work-stealing decisions: when a node is starving, which neighbours to
 * ask, which of them to rob, how many tasks to take, and the adaptive poll interval
 * (papers 000 §III.A and 002 §2.2.1).
 *
 * Owns nothing but the plain structs below; no I/O, no clock, no globals.  The caller
 * (core/runtime's stealer, or a simulator) keeps one `steal_state` per node, passes in
 * snapshots and the random state, and acts on what these functions return.  The parts
 * are separate functions so that later policies (A2WS, PaRSEC, data-aware placement)
 * replace one part — victims, amount, starvation, information — and keep the rest.
 */
#ifndef JACKDAW_STEAL_H
#define JACKDAW_STEAL_H

#include <stdbool.h>
#include <stdint.h>

enum steal_mode {
    STEAL_ADAPTIVE = 0, /* MATRIX: ceil(sqrt(N)) random neighbours, rob the most loaded */
    STEAL_RANDOM1 = 1,  /* classic: one random victim, steal half */
    STEAL_NONE = 2,     /* static baseline: never steal */
};

enum steal_amount_kind {
    STEAL_AMOUNT_HALF = 0, /* ceil(n / 2) of the victim's shared ready queue */
};

struct steal_params {
    enum steal_mode mode;
    enum steal_amount_kind amount;
    uint32_t neighbours;     /* 0: ceil(sqrt(nodes)) */
    double poll_initial_ms;  /* first wait after a failure (paper: 1 ms) */
    double poll_max_ms;      /* upper bound of the doubling (paper: 50 s) */
    uint32_t widen_after;    /* consecutive failures before asking more neighbours */
    uint32_t widen_by;       /* how many more neighbours each time */
};

/* The papers' defaults. */
void steal_params_default(struct steal_params *p);
/* Parses "adaptive" | "random1" | "none"; -1 when unknown. */
int steal_mode_parse(const char *name);
const char *steal_mode_name(enum steal_mode mode);

/* A thief's adaptive state; the runtime keeps one per node and changes it only here. */
struct steal_state {
    uint32_t failures;      /* consecutive failed attempts */
    double interval_ms;     /* wait before the next attempt */
    uint32_t neighbours;    /* how many victims the next attempt asks */
    bool parked;            /* interval hit the bound: wait for a wake-up, not a timer */
    uint32_t base_neighbours; /* the count before any widening, which steal_on_wake
                               * restores; kept here because steal_on_wake is not told
                               * the cluster size */
};

/* What the starvation test looks at: the node's own queues and slots. */
struct steal_self {
    uint32_t lready;        /* dedicated ready queue length */
    uint32_t sready;        /* shared (stealable) ready queue length */
    uint32_t free_slots;
};

void steal_state_init(struct steal_state *s, const struct steal_params *p, uint32_t nodes);

/* Starvation test (ready-only): both ready queues empty and a slot free. */
bool steal_starving(const struct steal_params *p, const struct steal_self *self);

/*
 * Picks the victims to ask: up to s->neighbours (random1: 1) distinct nodes other than
 * `self`, uniformly at random, written to out[0..max).  Returns how many.  *rng is a
 * xorshift64* state, advanced.
 */
uint32_t steal_pick_victims(const struct steal_params *p, const struct steal_state *s,
                            uint32_t self, uint32_t nodes, uint64_t *rng, uint32_t *out,
                            uint32_t max);

/* Index (into loads[0..n)) of the most loaded victim, or -1 when every load is 0. Ties
 * go to the lowest index so that results are reproducible. */
int steal_choose_victim(const uint32_t *loads, uint32_t n);

/* How many tasks a victim with `available` stealable tasks hands over. */
uint32_t steal_amount(const struct steal_params *p, uint32_t available);

/*
 * Updates the back-off after an attempt: success resets the interval, the failure count
 * and the neighbour count; failure doubles the interval (capped by poll_max_ms; reaching
 * the cap parks the thief) and widens the neighbour set every widen_after failures.
 */
void steal_on_result(const struct steal_params *p, struct steal_state *s, bool success,
                     uint32_t nodes);

/*
 * A parked thief learns that the cluster still has unfinished work (a peer reported new
 * ready tasks): unpark and restart from the initial interval.  Unlike MATRIX, a node at
 * the bound therefore never stops for good.  A widened neighbour count goes back to
 * its base as after a success.
 */
void steal_on_wake(const struct steal_params *p, struct steal_state *s);

/* xorshift64* step; state must be non-zero. */
uint64_t steal_rng_next(uint64_t *state);

#endif
