/*
 * steal — pure work-stealing decisions: when a node is starving, which neighbours to
 * ask, which of them to rob, how many tasks to take, and the adaptive poll interval
 * (papers 000 §III.A and 002 §2.2.1).
 *
 * Owns nothing but the plain structs below; no I/O, no clock, no globals.  The caller
 * (core/runtime's stealer, or tests/unit/test_progress.c) keeps one `steal_state` per
 * node, passes in snapshots and the random state, and acts on what these functions
 * return.  The parts
 * are separate functions so that later policies (A2WS, PaRSEC, data-aware placement)
 * replace one part — victims, amount, starvation, information — and keep the rest.
 */
#ifndef JACKDAW_STEAL_H
#define JACKDAW_STEAL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * How many of the thieves it turned away a victim remembers, to wake once it has work
 * to give (core/runtime/idle.c, and the simulator's model of it): the latest ones, an
 * older one forgotten (it polls on its back-off, or parks and says so).  Bounded so that
 * a node's wake-ups after a long drought stay a handful of messages whatever N: at
 * 10^5 simulated nodes a thief asks 317 victims an attempt and, in a bag of tasks where
 * no victim ever has work again, was remembered by thousands (13 GiB of pairs).
 */
#define STEAL_HUNGRY_MAX 8

/* The on/off switch and the legacy names of --steal; victims, amount, starvation and
 * information are the parts below. */
enum steal_mode {
    STEAL_ADAPTIVE = 0, /* MATRIX: ceil(sqrt(N)) random neighbours, rob the most loaded */
    STEAL_RANDOM1 = 1,  /* classic: one random victim, steal half */
    STEAL_NONE = 2,     /* static baseline: never steal */
};

/*
 * The orthogonal parts of a stealing policy (DESIGN.md "core/policy is pure"); presets
 * name points of this space (core/policy/preset.h).
 */

/* When a node turns thief. */
enum steal_starvation {
    STEAL_STARVE_READY = 0,      /* no ready task and a slot free (papers 000, 004) */
    STEAL_STARVE_SUCCESSORS = 1, /* ... and no local successor of a running task (004 §3) */
    STEAL_STARVE_PREEMPTIVE = 2, /* after the first finished task, whenever the A2WS
                                  * steal equation asks for work (001 §2.2.1) */
};

/* Whom a thief asks. */
enum steal_victims {
    STEAL_VICTIMS_SQRT = 0,      /* ceil(sqrt N) random, widening after failures (MATRIX) */
    STEAL_VICTIMS_RANDOM = 1,    /* victims_k random, never widened */
    STEAL_VICTIMS_A2WS = 2,      /* closest rate, then in-pair, from the ring (001 §2.2.2) */
    STEAL_VICTIMS_TOKEN = 3,     /* CTWS: only the token's holder steals, from the node the
                                  * token says is most loaded (core/policy/ctws.h) */
    STEAL_VICTIMS_LEADER = 4,    /* LW: workers never rob each other; they ask the leader,
                                  * which holds every movable task (core/policy/lw.h) */
};

/* How many tasks a victim hands over (paper 004's victim policies, and A2WS). */
enum steal_amount_kind {
    STEAL_AMOUNT_HALF = 0,       /* ceil(n / 2) of the victim's shared ready queue */
    STEAL_AMOUNT_CHUNK = 1,      /* at most `chunk` */
    STEAL_AMOUNT_SINGLE = 2,     /* one */
    STEAL_AMOUNT_A2WS = 3,       /* what the thief's steal equation asked for */
};

/* Where a thief's knowledge of its peers comes from. */
enum steal_info {
    STEAL_INFO_LOAD_QUERY = 0,   /* ask the victims' queue lengths on demand */
    STEAL_INFO_RING = 1,         /* the A2WS information vector on the ring (001 §2.1) */
    STEAL_INFO_TOKEN = 2,        /* the CTWS token's per-node task counts (001 §4) */
};

struct steal_params {
    enum steal_mode mode;
    enum steal_amount_kind amount;
    enum steal_starvation starvation;
    enum steal_victims victims;
    enum steal_info info;
    uint32_t victims_k;      /* STEAL_VICTIMS_RANDOM: how many (>= 1) */
    uint32_t chunk;          /* STEAL_AMOUNT_CHUNK: the bound (>= 1) */
    uint32_t radius;         /* STEAL_INFO_RING: R; 0 is 20% of N, at most 32 (a2ws_radius_default) */
    bool wait_guard;         /* victims refuse tasks that would start before they arrive */
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

/*
 * The parts' names, as the flags spell them.  Each parser returns 0, or -EINVAL for a
 * name it does not know (and leaves *p alone then).
 *   starvation: ready | ready+successors | preemptive
 *   victims:    sqrt | random:K | a2ws | token | leader   (K >= 1)
 *   amount:     half | chunk:N | single | a2ws            (N >= 1)
 *   info:       load-query | ring | token
 */
int steal_parse_starvation(const char *text, struct steal_params *p);
int steal_parse_victims(const char *text, struct steal_params *p);
int steal_parse_amount(const char *text, struct steal_params *p);
int steal_parse_info(const char *text, struct steal_params *p);
/* Never NULL. */
const char *steal_starvation_name(enum steal_starvation s);
const char *steal_victims_name(enum steal_victims v);
const char *steal_amount_name(enum steal_amount_kind a);
const char *steal_info_name(enum steal_info i);
/* True when some part reads the A2WS information vector. */
bool steal_needs_ring(const struct steal_params *p);
/* True when a node of a cluster of `nodes` keeps the vector: some part reads it, or
 * victims are drawn from it (--info ring), and there is stealing at all. */
bool steal_keeps_vector(const struct steal_params *p, uint32_t nodes);
/*
 * Whether the parts fit together: the CTWS victims and the token feed only each other,
 * and neither the token nor the leader can take the A2WS parts (they read a vector
 * those policies do not keep).  0, or -EINVAL with *why saying which flags clash.
 */
int steal_check_parts(const struct steal_params *p, const char **why);

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
    uint32_t running_successors; /* waiting tasks here whose parent runs here now */
    uint32_t arriving;      /* tasks a job's begin announced for this node, not here yet */
};

void steal_state_init(struct steal_state *s, const struct steal_params *p, uint32_t nodes);

/* Starvation test: both ready queues empty and a slot free; with ready+successors, also
 * no local successor of a running task (paper 004 §3).  Preemptive stealing starves as
 * ready-only here: its earlier start is a2ws_plan's to decide.  Never while tasks are
 * arriving: a node whose own submission is on the way would take a neighbour's share and
 * then get its own on top. */
bool steal_starving(const struct steal_params *p, const struct steal_self *self);

/*
 * Picks the victims to ask: up to s->neighbours (random1: 1) distinct nodes other than
 * `self`, uniformly at random, written to out[0..max).  Returns how many.  *rng is a
 * xorshift64* state, advanced.  The same as steal_draw_begin and steal_draw_all.
 */
uint32_t steal_pick_victims(const struct steal_params *p, const struct steal_state *s,
                            uint32_t self, uint32_t nodes, uint64_t *rng, uint32_t *out,
                            uint32_t max);

/*
 * One attempt's victims as a function of one random key, read either way: the i-th
 * victim drawn, or the position at which a given node was drawn (its rank).  The
 * daemons only ever read it forward (steal_pick_victims).  The simulator reads it
 * backward: at 10^6 nodes a thief asks 1,000 victims, nearly all without work, and
 * finding the few loaded ones among them by their ranks, and a victim's askers by its
 * rank in their draws, costs the loaded nodes and the askers rather than a memory read
 * and a write on 1,000 random nodes an attempt.
 *
 * Below STEAL_DRAW_MIXED_MIN candidates the victims are exactly a uniform random
 * k-permutation (the key seeds the samplers of steal.c), and a rank is found by drawing
 * them again.  From there on they are the first k of a keyed permutation of the
 * candidates (steal_perm), whose rank is a few multiplications: a pseudo-random draw
 * (as the xorshift generator's is), its statistics checked by test_steal.
 */
#define STEAL_DRAW_MIXED_MIN 1024

/* The keyed permutation of [0, 2^bits): three rounds of an add, an odd multiplier and
 * an xor of the high half into the low, each a bijection; cycle-walking restricts it to
 * [0, m).  `mul` and `add` are derived from the key (steal_draw_begin). */
struct steal_perm {
    uint32_t mul[3], add[3];
};

struct steal_draw {
    struct steal_perm perm;
    uint32_t inv[3];        /* mul's inverses mod 2^32: the permutation's reverse */
    uint64_t key;
    uint32_t m;             /* candidates: the nodes less self */
    uint32_t k;             /* victims */
    uint32_t self;          /* the node left out, UINT32_MAX when none is */
    uint32_t mask;          /* 2^bits - 1, 2^bits >= m */
    uint8_t shift;          /* (bits + 1) / 2: the xor of the high half undoes itself */
    bool mixed;             /* m >= STEAL_DRAW_MIXED_MIN: the permutation */
};

/* Sets up *d as steal_pick_victims would draw, and returns k (0: no victim; *rng is then
 * not advanced). */
uint32_t steal_draw_begin(const struct steal_params *p, const struct steal_state *s,
                          uint32_t self, uint32_t nodes, uint64_t *rng, uint32_t max,
                          struct steal_draw *d);
/* The draw of `key` for `k` victims (at most the candidates) of a node `self` of
 * `nodes`: a caller that keeps only the key and k of an attempt rebuilds it here. */
void steal_draw_make(struct steal_draw *d, uint64_t key, uint32_t self, uint32_t nodes,
                     uint32_t k);
/* The k victims in the order drawn, into out[0..d->k). */
void steal_draw_all(const struct steal_draw *d, uint32_t *out);
/* The i-th victim (i < d->k) of a mixed draw. */
uint32_t steal_draw_victim(const struct steal_draw *d, uint32_t i);
/* Where `node` was drawn, in [0, k), or UINT32_MAX when it was not (or is self). */
uint32_t steal_draw_rank(const struct steal_draw *d, uint32_t node);

/* One pass of the permutation's three rounds over [0, 2^bits). */
static inline uint32_t steal_perm_apply(const struct steal_perm *p, uint32_t x, uint32_t mask,
                                        unsigned shift)
{
    /* One mask a round: a product mod 2^bits reads only the low bits of its factors. */
    x = ((x + p->add[0]) * p->mul[0]) & mask;
    x ^= x >> shift;
    x = ((x + p->add[1]) * p->mul[1]) & mask;
    x ^= x >> shift;
    x = ((x + p->add[2]) * p->mul[2]) & mask;
    x ^= x >> shift;
    return x;
}

/* The permutation's position of candidate c < m, cycle-walked into [0, m): the
 * simulator's hot loop calls it for thousands of draws, hence inline. */
static inline uint32_t steal_perm_rank(const struct steal_perm *p, uint32_t c, uint32_t m,
                                       uint32_t mask, unsigned shift)
{
    uint32_t x = c;
    do
        x = steal_perm_apply(p, x, mask, shift);
    while (x >= m);
    return x;
}

/*
 * Of nodes[0..n), those the draw holds: their indices in nodes[] into at[], where each
 * was drawn into ranks[] (steal_draw_rank's), in the order of nodes[]; returns how many
 * (at most n).  In a form the compiler turns into vector code: the simulator asks it for
 * every node with work to give, for every query of a run (at 10^6 nodes, thousands of
 * nodes for each of 10^7 queries).
 */
uint32_t steal_draw_find(const struct steal_draw *d, const uint32_t *nodes, uint32_t n,
                         uint32_t *at, uint32_t *ranks);

/* Index (into loads[0..n)) of the most loaded victim, or -1 when every load is 0. Ties
 * go to the lowest index so that results are reproducible. */
int steal_choose_victim(const uint32_t *loads, uint32_t n);

/* How many tasks a victim with `available` stealable tasks hands over, before the
 * thief's own bound (STEAL_AMOUNT_A2WS: all of them; the request's bound decides). */
uint32_t steal_amount(const struct steal_params *p, uint32_t available);

/*
 * How many of its `stealable` tasks a victim grants one request whose bound is `max`
 * (0: none).  The A2WS amount is the thief's to choose; a request without a bound (a
 * thief configured otherwise) gets the classic half.
 */
uint32_t steal_grant(const struct steal_params *p, uint32_t stealable, uint32_t max);

/*
 * The progress rule's victim half: how many of the victim's stealable tasks that need
 * no input data it keeps for its own free slots.  A ready task that can start where it
 * is, starts there; granting it away instead is what let a task bounce between two idle
 * nodes forever (each granted it back on the request that rode with the grant, before
 * either dispatched it).  `free_slots` are the victim's slots with nothing running or
 * staged, `lready_startable` and `sready_startable` its no-data tasks in LReadyQ (which
 * its dispatcher takes first) and SReadyQ.  Tasks that need data stay stealable: they
 * wait for the fetch window, not for a slot.
 */
uint32_t steal_keep(uint32_t free_slots, uint32_t lready_startable, uint32_t sready_startable);

/*
 * A node's load as stealing reads it.  The daemons fill it from their node
 * (core/runtime/load.c), the simulator's engines from their nodes, so that both count
 * free slots, judge starvation and give tasks alike.
 */
struct steal_load {
    uint32_t slots, busy;       /* executor slots, and those running a task */
    uint32_t staging;           /* tasks whose inputs are being fetched */
    uint32_t staged_slots;      /* slots promised to tasks whose inputs are here */
    uint32_t lready, sready;    /* queue lengths */
    uint32_t lready_zero, sready_zero; /* of those, tasks that need no data */
    uint32_t running_successors;
    uint32_t arriving;          /* tasks announced to the node, not there yet */
    uint32_t window;            /* the fetch window; 0: a task fetches in its slot (MATRIX) */
};

/* Slots neither running nor promised to a staged task; under MATRIX's executors
 * (window 0) a fetching task holds its slot too. */
uint32_t steal_load_free_slots(const struct steal_load *l);

/*
 * What the starvation test sees.  Staged tasks fill slots at once; staging ones hold a
 * slot only under MATRIX's executors, which fetch inside the slot: with a window a slot
 * idles until the fetches end, which on a loaded link is many task lengths (the tail of
 * a fan-in: every node fetching inputs of its last aggregations while another still
 * holds a queue of leaves).  So with a window the slots the staging tasks will take are
 * free now, and a short queue of tasks that wait for the window (no more than one
 * window) is not ready work either: such a node steals work that runs meanwhile (the
 * victim gives tasks that need no data first).  A longer backlog counts, so a node with
 * data work of its own does not hoard more.
 */
struct steal_self steal_load_self(const struct steal_load *l);

/* What a victim gives at most now: SReadyQ less the no-data tasks its free slots keep
 * (steal_keep). */
uint32_t steal_load_giveable(const struct steal_load *l);

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
