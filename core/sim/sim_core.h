/*
 * sim_core — the simulator's engine as its files share it: the node, task and run
 * structures, and the helpers each file offers the others (prefix sim__, as the
 * runtime's node__).  Internal to core/sim: sim.c (events, the queues, a task's life,
 * the run), sim_events.c (the pending events in order), sim_place.c (placement), sim_thief.c (the thief and the victim: load
 * queries, PaRSEC's parts, the A2WS plan), sim_ring.c (the A2WS vectors and their ring),
 * sim_token.c (the CTWS token), sim_leader.c (LW's leader and workers), sim_net.c (the
 * inputs' transfers).  The parts hook into the loop as the daemon's parts do: each
 * event is handled by its node, then the node's ring, token and leader steps run
 * (sim_run), as a part's step ends a loop pass.
 * Nothing outside core/sim includes it; the public surface is sim.h.
 */
#ifndef JACKDAW_SIM_CORE_H
#define JACKDAW_SIM_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/u64map.h"
#include "core/model/trace_kind.h"
#include "core/model/workload.h"
#include "core/policy/a2ws.h"
#include "core/policy/placement.h"
#include "core/policy/steal.h"
#include "core/sim/sim.h"
#include "core/sim/sim_events.h"
#include "core/sim/sim_queue.h"

#define NS_PER_S 1e9
/* The inputs placement weighs for one task at most (its scratch, struct sim.objs). */
#define SIM_MAX_INPUTS 4096

enum ev_type {
    EV_READY,       /* node: the task's holder; a: task */
    EV_PARENT_DONE, /* node: the child's metadata owner; a: child; b: the parent's runner */
    EV_TASK_END,    /* node: runner; a: task */
    EV_STAGED,      /* node: holder; a: task, whose inputs have all arrived; c: the last
                     * one's flow + 1 (sim_net.c), or 0 */
    EV_QUERY,       /* node: thief; b: attempt: its queries reach the victims */
    EV_QUERIED,     /* node: thief; b: attempt: the victims' answers are back */
    EV_STEAL_REQ,   /* node: victim; a: thief; b: attempt; c: the request's bound */
    EV_GRANT,       /* node: thief; a: victim; b: attempt; c: grant index */
    EV_THIEF_TIMER, /* node: thief; b: timer generation */
    EV_WAKE,        /* node: a parked thief, or the CTWS token resting there */
    EV_SAMPLE,      /* node */
    EV_PUSHED,      /* node: where placement sent it; a: task */
    EV_MONITOR,     /* node: the FLDS monitor's pass */
    EV_INFO,        /* node: a ring neighbour; a: the sender; c: its message (sim_ring.c) */
    EV_RING,        /* node: its ring's interval is over for a side that waits */
    EV_PLAN,        /* node: a busy preemptive thief looks at its plan again */
    EV_TOKEN,       /* node: the CTWS token's next holder; a: the last (sim_token.c) */
    EV_TOKEN_TIMER, /* node: the holder; b: the timer's generation: a paced pass */
    EV_TOKEN_IDLE,  /* node: the resting holder, whose MSG_IDLE reached its peers */
    EV_LW_FORWARD,  /* node: the LW leader; a: task; b: the worker (sim_leader.c) */
    EV_LW_REQUEST,  /* node: the leader; a: the worker; b: its request; c: tasks wanted */
    EV_LW_GRANT,    /* node: the worker; a: the leader; b: its request; c: grant index */
    EV_AUTO,        /* node: placement auto's observation interval is over */
    EV_FLOW_END,    /* node: reader; a: flow; b: its generation (sim_net.c) */
    EV_WINDOW,      /* node: reader; b: its window generation: the window may admit the
                     * next waiting fetch (sim_net.c) */
};

enum thief_state { TH_IDLE, TH_QUERY, TH_REQUEST, TH_WAIT, TH_PARKED };


/*
 * The fields an event at a node reads come first, by how often: the queues' lengths, the
 * slots and the thief's state (every event), the thief's attempt and back-off (every
 * steal), then what a task's start and end and a failed steal add.  At 10^5 nodes and
 * beyond the nodes are read at random and each line of a node is a cache miss; spread
 * over the struct as they were, a failed steal's three events read six of its lines.
 * The loop asks for the next event's node's first lines ahead (sim_run).
 */
struct node {
    /* Lines 0 and 1: the daemons' own queues (40 bytes each), and the slots. */
    struct readyq lready, sready; /* DAWS: runs here / may be stolen (readyq.h's order) */
    uint32_t free_slots;
    uint32_t slots;         /* its executor slots (sim_config's) */
    enum thief_state state;
    uint32_t attempt;
    uint8_t pad_lines01[32]; /* the thief's line starts a line */
    /* Line 2: the thief. */
    struct steal_state st;
    uint32_t timer_gen;
    /* Its attempt in flight: nvictims victims, the draw of draw_key (steal_draw_make),
     * rebuilt when the queries arrive (no list per node: at 10^6 nodes √N of them was
     * 8 KB a node). */
    uint32_t nvictims;
    uint64_t draw_key;
    uint32_t chosen, chosen_load; /* the most loaded victim (UINT32_MAX: none) */
    uint32_t busy;          /* slots running a task */
    uint32_t running_successors; /* ready+successors: local successors of what runs here */
    /* Line 3. */
    size_t nstaged, staged_head;
    uint32_t staging;       /* tasks whose inputs are on their way here */
    bool parked_listed;
    bool monitor_on;        /* an EV_MONITOR is due */
    double speed;
    double ran_s;           /* run time of the tasks that ended here */
    /* Counters for the samples. */
    int64_t ended, steal_requests, steal_fails;
    /* Line 4: FLDS's state, which a failed steal moves. */
    struct flds_state flds;
    int64_t first_start;    /* when it started its first task; -1 before */
    int64_t started, stolen_in, stolen_out;
    int64_t fetches, fetch_bytes, busy_ns_done;
    struct u64map cache;    /* object keys held here: fetched, so never fetched again */
    /* Its links (sim_net.c): the flows (indices in s->flows) leaving and entering it,
     * the fetches waiting for its window (a FIFO through flow.next) and the window's
     * bytes the entering ones hold. */
    uint32_t *flows_out, *flows_in;
    uint32_t nflows_out, nflows_in;
    size_t flows_out_cap, flows_in_cap;
    uint32_t waiting_first, waiting_last, nwaiting;
    uint32_t window_gen;    /* its pending EV_WINDOW's; an event of another is stale */
    int64_t window_due;     /* when that event fires; INT64_MAX: none */
    /* Its ingress, a FIFO as the daemons' bucket is: bytes arrived and not through at
     * backlog_at, and the rate its entering flows bring more (bytes a ns). */
    double backlog, arriving;
    int64_t backlog_at;
    uint32_t *staged;       /* a FIFO of tasks whose inputs are here, waiting for slots */
    size_t staged_cap;
    uint8_t pad[8];
};
/* Whole lines, so that in xcalloc_huge's aligned arrays every node's lines are lines. */
_Static_assert(sizeof(struct node) % 64 == 0, "struct node: pad it to whole cache lines");

/*
 * Of one node, the thieves it turned away since it last woke them (victim.c, idle.c: a
 * query it answered with fewer than two tasks to give, a request it granted none): the
 * latest STEAL_HUNGRY_MAX by their latest refusal, oldest first, each with that
 * refusal's stamp (sim_thief.c's query_stamp and target_stamp: the marks' order).  With
 * lazy marks only the refused requests are listed as they happen; the queries' are found
 * from their draws when the node next has two tasks to give (sim_thief.c's resolve),
 * which is the first time the list is read.
 */
struct sim_peer {
    uint32_t hungry[STEAL_HUNGRY_MAX];
    uint64_t at[STEAL_HUNGRY_MAX];
    uint64_t dry_since;     /* the mark clock when its load last fell below two */
    uint32_t nhungry;
};

/* MARK_BLOCK marking queries of lazy marks, column by column (so that a victim's rank
 * in each is computed for the whole block in vector passes): each one's draw (its
 * permutation: the cluster's size fixes the rest, struct sim's perm_*), its thief and its
 * victims (0 in a lane not yet logged). */
#define MARK_BLOCK 64
struct mark_block {
    uint32_t mul[3][MARK_BLOCK], add[3][MARK_BLOCK];
    uint32_t thief[MARK_BLOCK], k[MARK_BLOCK];
};

struct task_state {
    uint32_t waiting;       /* parents not ended */
    uint32_t holder;        /* the node that holds it (receives its readiness) */
    uint32_t runner;        /* the node that ran it, once it ran */
    uint32_t local_successors; /* while it runs: what it added to running_successors */
    uint32_t fetching;      /* while it stages: its inputs not through (sim_net.c) */
    int64_t t_start;
};

/* One input's transfer (sim_net.c), from the writer's egress to the reader's ingress. */
struct flow {
    double left;            /* bytes not through at `since` */
    double rate;            /* bytes a ns since then */
    int64_t since;
    int64_t asked;          /* when the reader asked: the trace's duration starts */
    int64_t due;            /* when its pending EV_FLOW_END fires */
    uint64_t bytes;
    uint32_t writer, reader, task;
    uint32_t gen;           /* its pending EV_FLOW_END's; an event of another is stale */
    uint32_t out_at, in_at; /* where it is in the writer's flows_out, the reader's flows_in */
    uint32_t next;          /* the reader's next waiting fetch, or the next free flow */
    uint32_t joined;        /* tasks waiting for the same copy (s->joins), UINT32_MAX: none */
    uint64_t key;           /* the object's key in the reader's cache */
    bool active;            /* admitted and not through: on both links */
};

/* A node's cache maps an object's key to SIM_CACHE_HERE once its copy is there, and to
 * the index of the flow bringing it (sim__cache_on_way) while it is on its way. */
#define SIM_CACHE_HERE ((void *)1)
static inline void *sim__cache_on_way(uint32_t flow)
{
    return (void *)(uintptr_t)((uint64_t)flow + 2);
}
static inline uint32_t sim__cache_flow_of(const void *held)
{
    return (uint32_t)((uintptr_t)held - 2);
}

/* A task waiting for a copy another task's fetch brings to the same node: the data
 * plane asks for an object once, and every task reading it waits for that copy. */
struct join {
    uint32_t task, next;
};

struct grant {
    uint32_t *tasks;
    uint32_t n;
    bool has_entry;         /* the victim's A2WS entry rides along (ring.c's answering) */
    struct a2ws_entry entry;
};

struct sim {
    const struct workload *wl;
    const struct sim_config *cfg;
    struct sim_result *res;
    struct sim_events events;
    uint64_t seq;           /* events pushed */
    int64_t now;
    int64_t latency_ns;
    struct node *nodes;
    /* What the other nodes' thieves read and write of each node, apart from the fat
     * node structs: its load (sim__stealable as its last loop pass left it: only an
     * event at a node changes its queues and slots, so a refresh a pass is exact), the
     * nodes whose load is not 0 (in no order; loaded_at: where each is, UINT32_MAX when
     * absent), and its list of thieves turned away. */
    uint32_t *load;
    uint32_t *loaded, *loaded_at;
    uint32_t nloaded;
    struct sim_peer *peers;
    struct task_state *tasks;
    uint64_t rng;
    uint64_t left;          /* tasks not ended */
    struct grant *grants;
    size_t ngrants, grants_cap;
    uint32_t *free_grants;  /* indices of grants whose tasks arrived */
    size_t nfree_grants, free_grants_cap;
    uint32_t *parked;       /* nodes whose thief is parked */
    size_t nparked, parked_cap;
    /*
     * The queries' marks.  Eager (small clusters, or sim_config.eager_marks): each
     * queried victim below two tasks lists the thief at once, as a daemon does.  Lazy
     * (mixed draws, STEAL_DRAW_MIXED_MIN candidates and more): each marking query is
     * logged, the q-th in marks[q / MARK_BLOCK], and a victim's list is made from the
     * log when it is read.  At 10^6 nodes a query asks 1,000 victims, nearly all dry, and
     * the eager marks were a cache miss and a write on each: two thirds of the run.
     */
    bool lazy;
    uint64_t mark_clock;    /* marking queries so far */
    uint64_t target_clock;  /* mark_clock at the last refusal, and refusals since */
    uint32_t target_seq;
    struct mark_block *marks;
    size_t marks_cap;       /* blocks */
    uint32_t perm_m, perm_mask; /* the mixed draws' candidates and mask (steal_draw_make) */
    unsigned perm_shift;
    uint32_t victims_max;
    uint32_t *victims, *loads; /* victims_max each: one draw's, shared by the thieves */
    struct placement_object *objs; /* SIM_MAX_INPUTS, placement's scratch */
    struct sim_take take;   /* a victim's or the FLDS monitor's take (sim_queue.h) */
    struct sim_ring *ring;  /* the A2WS vectors (sim_ring.c); NULL when no part reads them */
    struct sim_token *token; /* the CTWS token (sim_token.c); NULL unless --victims token */
    struct sim_leader *leader; /* LW (sim_leader.c); NULL unless --victims leader */
    struct sim_auto *autos; /* one per node under placement auto (sim_place.c), or NULL */
    struct flow *flows;     /* the transfers, in flight or arriving, and free ones */
    size_t nflows, flows_cap;
    uint32_t free_flow, nfree_flows; /* a list through flow.next */
    struct join *joins;     /* waiters on flows, a list each through join.next */
    size_t njoins, joins_cap;
    uint32_t free_join;     /* a list through join.next, UINT32_MAX: none */
    uint32_t nactive;       /* flows admitted and not through: sim_config.host_Bps's share */
    double host_level;      /* with a host rate: the most a flow may have of it (sim_net.c) */
    double *host_shares;    /* scratch of reshare_all */
    size_t host_shares_cap;
};

/* ---- sim.c: events, queues, trace, tasks --------------------------------------------- */

/* An event at `node` at simulated time t (ns). */
void sim__push(struct sim *s, int64_t t, uint8_t type, uint32_t node, uint32_t a, uint32_t b,
               uint32_t c);
/* A message from `from` to `to`: one latency, none within a node; counted. */
void sim__send(struct sim *s, uint32_t from, uint32_t to, uint8_t type, uint32_t a, uint32_t b,
               uint32_t c);
uint32_t sim__slots_of(const struct sim_config *cfg, uint32_t node);
/* One trace event of `node` at the current simulated time (no-op without its sink). */
void sim__trace(struct sim *s, uint32_t node, enum trace_kind kind, uint32_t task, int32_t peer,
                int32_t status, int64_t count, int64_t bytes, int64_t duration_ns);
/* The task's inputs as placement sees them (at most `max`), and their sum. */
uint32_t sim__inputs_of(const struct sim *s, uint32_t task, struct placement_object *out,
                        uint32_t max, uint64_t *sum);
/* Starts what fits in the node's free slots (node_task.c's dispatcher). */
void sim__dispatch(struct sim *s, uint32_t id);
/* A placement policy in force at `node`, as the daemons report it (POLICY_CHANGE). */
void sim__trace_policy(struct sim *s, uint32_t node, const char *name, int32_t reason);

/* ---- sim_net.c: inputs' transfers ------------------------------------------------------ */

/* `bytes` of the object `key` from `writer` to `reader` for `task`, counted in its
 * `fetching`; the last of them through pushes the task's EV_STAGED, its c the flow's
 * index + 1.  Returns the flow's index. */
uint32_t sim__net_fetch(struct sim *s, uint32_t reader, uint32_t writer, uint32_t task,
                        uint64_t key, uint64_t bytes);
/* `task` waits for flow i's copy too, counted in its `fetching`. */
void sim__net_join(struct sim *s, uint32_t flow, uint32_t task);
/* An EV_FLOW_END: a flow's last byte through, or its arrival (stale ones ignored). */
void sim__net_flow_end(struct sim *s, uint32_t flow, uint32_t gen);
/* An EV_WINDOW: the reader's flows may have left its window room for the next fetch. */
void sim__net_window(struct sim *s, uint32_t reader, uint32_t gen);
/* A flow's bytes are at its reader: its DATA_FETCH record, the copy marked here in the
 * reader's cache, the tasks that joined it staged when it was their last, and the flow
 * freed. */
void sim__net_arrived(struct sim *s, uint32_t flow);
void sim__net_free(struct sim *s);

/* ---- sim_place.c: where a ready task goes ---------------------------------------------- */

struct sim_auto;
/* Sets s->autos and their first observations under placement auto; frees them. */
void sim__place_init(struct sim *s);
void sim__place_free(struct sim *s);
/* A task ready at its holder `id` (pushed: it came by a push to its data). */
void sim__enqueue(struct sim *s, uint32_t id, uint32_t task, bool pushed);
void sim__flds_monitor(struct sim *s, uint32_t id);
void sim__auto_observe(struct sim *s, uint32_t id);
/* A failed steal of `id`: FLDS's tt moves; true when a parked thief should poll again. */
bool sim__place_steal_failed(struct sim *s, uint32_t id, bool parked);

/* ---- sim_thief.c: the load-query thief and the victim ------------------------------- */

bool sim__steals(const struct sim *s);
/* What a victim would give away now: its queue beyond what its free slots take. */
uint32_t sim__stealable(const struct node *n);
void sim__wake_parked(struct sim *s, uint32_t from);
/* `victim` turned `thief` away (it had fewer than two tasks to give): it is listed for
 * a wake-up; sim__refresh sends them once the victim has two or more. */
void sim__turned_away(struct sim *s, uint32_t victim, uint32_t thief);
/* The end of a loop pass at `id`: its load as the pass leaves it, and the wake-up of the
 * thieves it turned away once it has two tasks to give (idle.c's step). */
void sim__refresh(struct sim *s, uint32_t id);
/* The loads, the lists and the marks' mode and log: set up, and freed. */
void sim__marks_init(struct sim *s);
void sim__marks_free(struct sim *s);
/* Tasks arrived at a node: it starts what it can and wakes parked thieves. */
void sim__on_new_ready(struct sim *s, uint32_t id);
bool sim__starving(const struct sim *s, const struct node *n);
void sim__backoff(struct sim *s, uint32_t id);
/* Starts a steal attempt if the node's thief is idle and the node starving. */
void sim__maybe_steal(struct sim *s, uint32_t id);
void sim__on_query(struct sim *s, uint32_t id, uint32_t attempt);
void sim__on_queried(struct sim *s, uint32_t id, uint32_t attempt);
/* The victim's answer to a request bounded by max (0: its amount policy decides). */
void sim__on_steal_req(struct sim *s, uint32_t id, uint32_t thief, uint32_t attempt,
                       uint32_t max);
/* A grant's slot in s->grants with room for `size` tasks (n = 0), and its release once
 * its tasks arrived. */
uint32_t sim__grant_new(struct sim *s, uint32_t size);
void sim__grant_free(struct sim *s, uint32_t gi);
/* Ready + successors: the waiting children of `task` that starting it on `id` counts. */
uint32_t sim__local_successors(const struct sim *s, uint32_t id, uint32_t task);
void sim__on_grant(struct sim *s, uint32_t id, uint32_t victim, uint32_t attempt, uint32_t gi);

/* ---- sim_ring.c: the A2WS information vectors ----------------------------------------- */

struct sim_ring;
/* The vectors' bytes for `nodes` nodes at radius R (0: the default). */
uint64_t sim__ring_bytes(uint32_t nodes, uint32_t radius);
/* Sets s->ring when some part reads the vector (steal_keeps_vector); frees it. */
void sim__ring_init(struct sim *s);
void sim__ring_free(struct sim *s);
/* The node's vector with its own entry refreshed (NULL when off), and the clock its
 * plan reads. */
struct a2ws_vec *sim__info(struct sim *s, uint32_t id);
struct a2ws_now sim__info_now(const struct sim *s, uint32_t id, bool starving);
/* After every event at a node: its own entry refreshed, what is due sent. */
void sim__ring_step(struct sim *s, uint32_t id);
void sim__ring_timer(struct sim *s, uint32_t id);
void sim__ring_on_info(struct sim *s, uint32_t id, uint32_t from, uint32_t mi);
/* The victim's entry put beside its grant; the thief's merge of it and Table 1's
 * flags (a2ws_on_steal). */
void sim__ring_answer(struct sim *s, uint32_t victim, struct grant *g);
void sim__ring_granted(struct sim *s, uint32_t thief, uint32_t victim, const struct grant *g);
/* A busy preemptive thief looks at most once every A2WS_PREEMPTIVE_LOOK_MS: true when it
 * must wait (an EV_PLAN is then due); the EV_PLAN's handler. */
bool sim__ring_plan_later(struct sim *s, uint32_t id);
void sim__ring_plan_timer(struct sim *s, uint32_t id);

/* ---- sim_token.c: the CTWS token ------------------------------------------------------ */

struct sim_token;
bool sim__token_on(const struct sim_config *cfg);
/* Sets s->token (resting at CTWS_FIRST_HOLDER) when the policy has one; frees it. */
void sim__token_init(struct sim *s);
void sim__token_free(struct sim *s);
void sim__token_arrives(struct sim *s, uint32_t id);
void sim__token_timer(struct sim *s, uint32_t id, uint32_t gen);
/* The resting holder's MSG_IDLE reached its peers: one with stealable work wakes it. */
void sim__token_idle(struct sim *s, uint32_t id);
/* News of work: a token resting at `id` moves on. */
void sim__token_wake(struct sim *s, uint32_t id);
/* After every event at a node: a resting holder whose own count changed visits again. */
void sim__token_step(struct sim *s, uint32_t id);
/* The holder's steal answered with `count` tasks. */
void sim__token_granted(struct sim *s, uint32_t id, uint32_t attempt, uint32_t count);

/* ---- sim_leader.c: LW ---------------------------------------------------------------- */

struct sim_leader;
bool sim__leader_on(const struct sim_config *cfg);
/* The leader's slots and speed once its distribution thread took its share (others'
 * unchanged). */
void sim__leader_capacity(const struct sim_config *cfg, uint32_t id, uint32_t *slots,
                          double *speed);
void sim__leader_init(struct sim *s);
void sim__leader_free(struct sim *s);
/* A movable ready task of `id`: true when it went to the leader instead of staying. */
bool sim__leader_offer(struct sim *s, uint32_t id, uint32_t task);
void sim__leader_on_forward(struct sim *s, uint32_t id, uint32_t task, uint32_t from);
void sim__leader_on_request(struct sim *s, uint32_t worker, uint32_t req, uint32_t want);
void sim__leader_on_grant(struct sim *s, uint32_t id, uint32_t req, uint32_t gi);
/* After every event at a node: a worker's request, the leader's answers. */
void sim__leader_step(struct sim *s, uint32_t id);

#endif
