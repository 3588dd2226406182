/*
 * ctws — cyclic token-based work stealing (Assis et al. 2019, the CTWS baseline of paper
 * 001 §4 and §5) as pure functions: what the token carries, what its holder does with
 * it, and how soon it moves on.
 *
 * One token circulates the ring 0 → 1 → … → N−1 → 0 carrying a task count per node.
 * Only the holder may steal: when it is starving it takes half (the --amount part) of
 * the node the token says is most loaded, lowers the victim's count by that much (so
 * that the next holders do not pile on the same victim), and passes the token on.
 * Every holder writes its own count first.
 *
 * Readings and departures from the paper, and why:
 *   - A node's count is its stealable tasks (SReadyQ), not all it holds: tasks the
 *     workload pins or placement keeps with their data cannot be taken, and counting
 *     them would send thieves where nothing can be had.
 *   - The theft is asynchronous: the holder sends its request and passes the token in
 *     the same loop pass, without waiting for the grant (CTWS's one-sided MPI get
 *     completes before the pass).  So the victim's count on the token is what it is
 *     expected to keep, and the thief's own count leaves out what is on the wire to it;
 *     both are corrected at their next visit.  A holder whose last steal is still
 *     unanswered does not steal again.
 *   - Pacing.  A jackdaw node forwards the token from its loop at once, where the
 *     paper's processes saw it between tasks, so a token passed at once would spin at
 *     network speed.  Each node therefore adds a hungry flag to its entry (it was
 *     starving at its last visit): while some node is hungry the token moves on at
 *     once (the runtime still lets each node pass it at most once per hop interval),
 *     for at most one lap without a theft; otherwise it rests a hop interval at each
 *     node.  When no node has anything stealable it stops where it is (CTWS_REST) until
 *     that node hears of work: the runtime then lets it move again.
 *
 * Owns nothing: the entries are the caller's array.  No I/O, no clock, no globals, no
 * allocation.  Called by core/runtime/token.c on a node's loop thread and by
 * tests/unit/test_ctws.c.
 */
#ifndef JACKDAW_CTWS_H
#define JACKDAW_CTWS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/policy/steal.h"

/* The paced hop (CTWS_PASS_PACED), and the shortest time between two passes of the
 * token by one node: far below a task's length, far above a loop pass.  A lap of N nodes
 * takes N of them while nobody is hungry.  Shared by core/runtime/token.c and the
 * simulator (core/sim). */
#define CTWS_HOP_MS 1

/* The node that makes the token when the cluster starts. */
#define CTWS_FIRST_HOLDER 0u
/* ctws_entry.flags */
#define CTWS_HUNGRY 1u

/* One node's line of the token. */
struct ctws_entry {
    uint32_t count;         /* stealable tasks it had at its last visit, or expected since */
    uint8_t flags;          /* CTWS_HUNGRY: it was starving at its last visit */
};

struct ctws_token {
    uint32_t hops;          /* passes since the token was made */
    uint32_t quiet;         /* passes since a holder last stole */
    uint32_t nodes;
    struct ctws_entry *e;   /* borrowed: `nodes` entries indexed by node id */
};

/* What the holder knows of itself. */
struct ctws_self {
    uint32_t self;
    uint32_t stealable;     /* its SReadyQ now */
    bool starving;          /* the starvation part says it needs work */
    bool in_flight;         /* its last steal has not been answered yet */
    bool woken;             /* the token rested here and this node heard of work */
};

enum ctws_pass {
    CTWS_PASS_NOW = 0,      /* some node is hungry: pass in this loop pass */
    CTWS_PASS_PACED = 1,    /* nobody is: pass after the hop interval */
    CTWS_REST = 2,          /* nothing stealable anywhere: keep it until news of work */
};

struct ctws_decision {
    bool steal;
    uint32_t victim;        /* when steal */
    uint32_t amount;        /* tasks to ask for, >= 1 when steal */
    enum ctws_pass pass;
};

/* Zeroes the entries; the token starts with no hops. */
void ctws_token_init(struct ctws_token *t, struct ctws_entry *storage, uint32_t nodes);

/* The holder after `self` on the ring. */
uint32_t ctws_next(uint32_t self, uint32_t nodes);

/* The node other than `self` with the largest count, or -1 when every other count is
 * 0.  Ties go to the lowest id, so that a run is reproducible. */
int ctws_most_loaded(const struct ctws_token *t, uint32_t self);

/*
 * The holder's visit: writes its own entry, steals when it is starving (and has no
 * steal in flight) from ctws_most_loaded, the amount being the --amount part of the
 * victim's count on the token (half: ceil(n/2)), lowers the victim's count by it and
 * updates the quiet count; then decides how the token moves on.  REST only when every
 * count is 0 and the visit is not a wake-up (a woken holder must pass the token on to
 * learn the news).
 */
struct ctws_decision ctws_visit(struct ctws_token *t, const struct steal_params *p,
                                const struct ctws_self *s);

#endif
