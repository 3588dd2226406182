/*
 * a2ws — adaptive asynchronous work stealing (paper 001 §2) as pure functions: the
 * information vector and its ring propagation (§2.1, Table 1), the steal equation and
 * its rounding (eq. 4–8), preemptive stealing (§2.2.1) and victim selection by closest
 * rate or in-pair comparison (§2.2.2, eq. 9–10).
 *
 * Owns nothing: the vector's entries are the caller's array, every decision is a
 * function of the vector, the time passed in and the caller's random state.  No I/O,
 * no clock, no globals, no allocation.  Called by core/runtime (thief.c keeps one
 * vector per node on its loop thread, ring.c moves the dirty entries between ring
 * neighbours) and by tests/unit/test_a2ws.c.
 *
 * Reading of the paper, where it leaves a choice (the "why" is at each function):
 *   - t_j is per node: a jackdaw node runs `slots` tasks at once, so its time per task
 *     is the mean task run time divided by its slots, and 1/t_j its tasks per second.
 *   - n_j counts the tasks a node holds or has finished: ready (both queues), staged,
 *     running and done (since the job at hand began on it idle: the caller's epoch).
 *     Tasks still waiting for parents are not counted: they may never move, and eq. 4
 *     is about work that can.
 *   - eq. 6 reads U(S) = (n_k + S)/t_k; with t_k a time per task the runtime is
 *     (n_k + S)·t_k, which is what is used.
 *   - "capped by eq. 4" (§2.2.1): a thief never takes more from a victim than the
 *     victim's own surplus −S_v on the same snapshot, nor more than it has stealable.
 *   - The ring is indexed modulo N.  When 2R + 1 > N the window is cut to N nodes so
 *     that every position still has exactly one writer (left = ⌊(N−1)/2⌋ at most).
 */
#ifndef JACKDAW_A2WS_H
#define JACKDAW_A2WS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The ring's pace, shared by the daemons (core/runtime/ring.c, thief.c) and the simulator
 * (core/sim) so that both move the vector alike.  Dirty entries leave for a neighbour at
 * most once every A2WS_RING_INTERVAL_MS when no other message to it carries them: a few
 * ms, far below a task's length, far above a loop pass, so a burst of task ends costs
 * one small message per interval.  A message carries at most A2WS_RING_BATCH entries; a
 * wider window takes several.  A busy node with preemptive stealing looks at its plan at
 * most once every A2WS_PREEMPTIVE_LOOK_MS: the plan changes with the clock and the
 * vector, not with every event.
 */
#define A2WS_RING_INTERVAL_MS 5
#define A2WS_RING_BATCH 256
#define A2WS_PREEMPTIVE_LOOK_MS 1

/* Which ring neighbour an entry still has to be sent to. */
#define A2WS_DIRTY_LEFT 1u  /* to self − 1, which keeps entries to its right */
#define A2WS_DIRTY_RIGHT 2u /* to self + 1, which keeps entries to its left */

/* What one node is known to be (paper: t_j, n_j and the flag; avail and slots added). */
struct a2ws_entry {
    double t_run;           /* mean run time of its finished tasks, s; 0: none finished */
    uint32_t n;             /* tasks held or done: executed + available */
    uint32_t avail;         /* of which stealable now: spares requests that must fail */
    uint32_t slots;         /* tasks it runs at once (0 is taken as 1) */
    uint32_t version;       /* its owner's update count; 0: nothing heard yet */
    uint8_t dirty;          /* A2WS_DIRTY_* */
};

/* One entry on the wire: whose it is, and what it says. */
struct a2ws_item {
    uint32_t node;
    struct a2ws_entry e;    /* dirty is not sent */
};

/*
 * Two layouts of the same vector.  By node id (a2ws_vec_init): `nodes` entries, what a
 * daemon keeps (it may read v->e[j] for any j; entries outside the window stay empty).
 * By window (a2ws_vec_init_window): only the left + right + 1 entries of the window,
 * e[left + offset], so a node's vector costs O(R) instead of O(N): what the simulator
 * keeps for each of its many nodes.  Every function here works on both; a caller of the
 * window layout reads an entry through a2ws_entry_of, never v->e[j].
 */
struct a2ws_vec {
    uint32_t self, nodes;
    uint32_t left, right;   /* the window: offsets −left..right around self */
    struct a2ws_entry *e;   /* borrowed: see the layouts above */
    uint32_t left_nb, right_nb; /* the live ring neighbours that write each side */
    bool windowed;          /* e holds the window only */
};

/*
 * 20% of N rounded, at least 1 (the paper settled on it, §4 Fig. 4, at 8 to 128 nodes),
 * and at most A2WS_RADIUS_MAX.  An entry crosses the window one ring hop at a time, a
 * hop at most every A2WS_RING_INTERVAL_MS, so the far edge of a window of R hops is at
 * least R intervals old: at 1,024 nodes (R = 205) a second, longer than the runs' tasks,
 * and the simulator's thieves then asked nodes 200 hops away for work they no longer
 * had — A2WS lost to LW by 0.3–3.2 % where a radius of 8–64 won by 14 % (sim_gain.sh).
 * The cap changes nothing up to 160 nodes, the scales the paper measured.
 */
#define A2WS_RADIUS_MAX 32u
uint32_t a2ws_radius_default(uint32_t nodes);

/* Zeroes the entries and sets the window for radius R (0: the default); storage holds
 * `nodes` entries indexed by node id. */
void a2ws_vec_init(struct a2ws_vec *v, struct a2ws_entry *storage, uint32_t self,
                   uint32_t nodes, uint32_t radius);
/* The same with storage for the window only: a2ws_window_entries(nodes, radius) of them. */
void a2ws_vec_init_window(struct a2ws_vec *v, struct a2ws_entry *storage, uint32_t self,
                          uint32_t nodes, uint32_t radius);
/* Entries of the window of radius R (0: the default) in a cluster of `nodes`, self
 * included: left + right + 1, at most `nodes`. */
uint32_t a2ws_window_entries(uint32_t nodes, uint32_t radius);
/* Node j's entry, whichever the layout; NULL when j is not a node or (window layout)
 * not in the window. */
struct a2ws_entry *a2ws_entry_of(const struct a2ws_vec *v, uint32_t j);

/* The ring offset of node j from self when j is in the window (self is offset 0). */
bool a2ws_offset(const struct a2ws_vec *v, uint32_t j, int32_t *off);
/* The node at a ring offset (any integer). */
uint32_t a2ws_node_at(const struct a2ws_vec *v, int32_t off);
/* Nodes in the window other than self: left + right. */
uint32_t a2ws_window_others(const struct a2ws_vec *v);

/*
 * Table 1.  a2ws_set_self is "p_i updates t_i" (and any change of its counts: it was
 * stolen from, it stole, it got work): when the entry changes, the version goes up and
 * the entry is flagged for both neighbours; returns whether it changed.
 * a2ws_on_steal is the thief's row: the victim's entry is flagged whether or not the
 * steal got tasks (the thief learnt something about it either way), and self too when
 * it did.  a2ws_flag marks any entry of the window dirty towards the neighbour it
 * travels to.
 */
bool a2ws_set_self(struct a2ws_vec *v, double t_run, uint32_t n, uint32_t avail,
                   uint32_t slots);
void a2ws_on_steal(struct a2ws_vec *v, uint32_t victim, bool stole);
void a2ws_flag(struct a2ws_vec *v, uint32_t j);

/*
 * Merges one received entry; returns true when it was taken (and flagged onwards).
 * Writers are exclusive as in §2.1: from the left neighbour only entries left of self,
 * from the right neighbour only entries right of self, from any other node only its
 * own entry (a victim's reply to a steal).  An entry is taken only when its version is
 * newer (serial-number order), so late or repeated messages change nothing.
 */
bool a2ws_merge(struct a2ws_vec *v, uint32_t from, const struct a2ws_item *in);

/* Node j died: its entry says it has nothing (no thief picks it, no steal equation
 * counts it; the caller merges nothing about j from now on), and the sides are written
 * by the live neighbours left_nb and right_nb. */
void a2ws_on_down(struct a2ws_vec *v, uint32_t j, uint32_t left_nb, uint32_t right_nb);

/*
 * The dirty entries the neighbour on side `dir` (A2WS_DIRTY_LEFT or _RIGHT) keeps,
 * into out[0..max); their flag for that side is cleared.  Entries dirty for that side
 * that the neighbour does not keep (the far edge of the window) are cleared unsent.
 * Returns how many were written; call again while it returns max.
 */
uint32_t a2ws_collect(struct a2ws_vec *v, unsigned dir, struct a2ws_item *out, uint32_t max);
/* True when some entry is dirty for side dir. */
bool a2ws_dirty(const struct a2ws_vec *v, unsigned dir);

/* ---- the equations ----------------------------------------------------------------- */

/* Eq. 4 / 5 with N = Σ n_j and T = Σ 1/t_j over the (sub)system: N/(t_i·T) − n_i. */
double a2ws_steal_rate(double sum_n, double sum_speed, double n_i, double t_i);
/* Eq. 10: (n_i + n_j)·t_j/(t_j + t_i) − n_i, the pair's own steal equation. */
double a2ws_pair_rate(double n_i, double t_i, double n_j, double t_j);
/* Eq. 8: max(U_j(−s), U_i(s)) with U_k(s) = (n_k + s)·t_k; thief i, victim j. */
double a2ws_gamma(double s, double n_i, double t_i, double n_j, double t_j);
/* Eq. 7: ⌊s⌋ when γ(⌊s⌋) < γ(⌈s⌉), else ⌈s⌉; 0 for s <= 0. */
uint32_t a2ws_round(double s, double n_i, double t_i, double n_j, double t_j);

/* ---- decisions --------------------------------------------------------------------- */

/* What the caller knows besides the vector. */
struct a2ws_now {
    double elapsed_s;       /* since this node first saw work: the preemptive estimate */
    bool starving;          /* nothing to run and a slot free */
};

enum a2ws_criterion {
    A2WS_NO_STEAL = 0,      /* nobody worth robbing, or no need */
    A2WS_CLOSEST_RATE = 1,  /* §2.2.2 first criterion */
    A2WS_IN_PAIR = 2,       /* §2.2.2 second criterion, eq. 10 */
};

struct a2ws_decision {
    enum a2ws_criterion criterion;
    uint32_t victim;        /* when criterion != A2WS_NO_STEAL */
    uint32_t amount;        /* tasks to ask for, >= 1 when stealing */
    double rate;            /* S_i of eq. 5 on this snapshot */
};

/*
 * Node j's time per task: t_run/slots once j finished a task.  Before that (§2.2.1) a
 * node holding work gets elapsed/slots (none of its slots finished within the elapsed
 * time, so this is a lower bound that grows until its first task ends); a node with no
 * work at all gets `fallback_run`/slots (a neutral prior: its speed says nothing yet).
 * Returns 0 when none of this gives a positive time.
 */
double a2ws_node_time(const struct a2ws_entry *e, double elapsed_s, double fallback_run);

/* S_j of eq. 5 for node j of the window (self included) on this snapshot; 0 when j is
 * outside the window or nothing is known. */
double a2ws_rate(const struct a2ws_vec *v, const struct a2ws_now *now, uint32_t j);

/*
 * Algorithm 1 lines 3–5 with §2.2.1 and §2.2.2.  A node that is not starving steals
 * preemptively only after its first finished task and only when S_i > 0.  Victims by
 * closest rate: nodes of the window with S_j < 0 and stealable tasks, each asked for
 * D = eq. 7 of min(S_i, −S_j) (at most its stealable tasks), drawn with probability
 * proportional to 1/(1 + |S_i + S_j|) — the best pair has rates of opposite sign and
 * equal size.  When none qualifies but some node has stealable tasks (the subsystem
 * looks balanced, or the information is stale), in-pair: D_j = eq. 7 of eq. 10 for
 * each such node, drawn with probability proportional to D_j.  *rng is a xorshift64*
 * state (steal_rng_next), advanced only when there is a draw to make.
 */
struct a2ws_decision a2ws_plan(const struct a2ws_vec *v, const struct a2ws_now *now,
                               uint64_t *rng);

/* The amount a thief asks of a victim it chose some other way (--victims sqrt with
 * --amount a2ws): D of the closest-rate rule for that pair, else of the in-pair rule;
 * 0 when the vector says nothing should move. */
uint32_t a2ws_amount_for(const struct a2ws_vec *v, const struct a2ws_now *now, uint32_t victim);

#endif
