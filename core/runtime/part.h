/*
 * part — the node daemon as a star: the node (node.c) keeps the loop, the queues, the
 * executors and the completions; every stealing, placement or data mechanism is a part,
 * one entry of a const table (parts.c) with its state private to its own file.  This
 * header is the whole contract between them: what a part is (struct part), and the
 * small API the node offers its parts (the node_* functions below).
 *
 * No part includes another part's header and no part sees struct node: parts reach one
 * another only through the node's events (wake, news, offer, answering, granted,
 * steal_failed), which the node passes to every part in table order.  Adding a
 * mechanism is a pure policy file in core/policy/, one part file with its entry in
 * parts.c, and their tests; node.c does not change.  Unit tests link the parts against
 * a fake node (tests/unit/fake_node.c) that implements this API with captured messages
 * and a controlled clock.
 *
 * Included by node.c, parts.c and the part files (data.c, place.c, victim.c, thief.c,
 * leader.c, token.c, idle.c, ring.c, heartbeat.c); everything runs on the node's loop
 * thread.
 */
#ifndef JACKDAW_RUNTIME_PART_H
#define JACKDAW_RUNTIME_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "core/base/wbuf.h"
#include "core/model/task.h"
#include "core/model/trace_kind.h"
#include "core/policy/a2ws.h"
#include "core/policy/steal.h"
#include "core/runtime/node.h"
#include "core/policy/readyq.h"

struct node;
struct kvs;

/* A task this node holds: waiting, ready, staging its inputs, or running.  Kept small:
 * a daemon holds one per waiting task; what only staging and running tasks need lives
 * in the data plane's staging records. */
struct ntask {
    struct task_spec spec;
    int64_t t_ready;
    int64_t t_start;        /* wall ns once it started (busy time of samples) */
    uint32_t local_successors; /* while it runs: its children waiting here (ready+successors) */
};

/* A task from a SUBMIT, PUSH or grant payload; NULL when malformed (ntask.c). */
struct ntask *ntask_decode(struct rbuf *r);
void ntask_free(struct ntask *t);

/* The node's ready queues (DAWS): LReadyQ runs here, SReadyQ may be stolen, staged
 * tasks have their inputs and wait for a slot. */
enum node_queue_id { NODE_LREADY, NODE_SREADY, NODE_STAGED };

/* The node's figures: every part adds to its own, the node reports them all (stats
 * replies, trace samples).  One struct instead of a getter each. */
struct node_counters {
    uint64_t steals_attempted, steals_succeeded, steal_requests, steal_fails;
    uint64_t tasks_stolen, tasks_given, tasks_pushed;
    uint64_t tasks_with_inputs, locality_hits;
    uint64_t fetches, bytes_in, bytes_out, cache_hits_traced;
    uint64_t policy_switches, info_sent, info_received, token_passes;
    /* Failures (issue 15; the deaths are node_epoch): tasks of dead holders this node,
     * as their record's primary, handed on as new attempts; lost objects whose
     * producers this node ran again. */
    uint64_t tasks_resubmitted, objects_recomputed;
};

/* A read-only view of the node's load, as the parts' decisions read it. */
struct node_load {
    uint32_t slots, busy;       /* executor slots, and those running a task (a task
                                   takes its `cores` of them) */
    uint32_t staging;           /* tasks whose inputs are being fetched */
    uint32_t staged;            /* inputs all here, waiting for a slot */
    uint32_t staged_slots;      /* the slots those will take (their cores) */
    uint32_t lready, sready;    /* queue lengths */
    uint32_t lready_zero, sready_zero; /* of those, tasks that need no data */
    uint64_t waiting;           /* WaitQ: tasks whose parents have not all ended */
    uint32_t running_successors; /* ready+successors: children of running tasks, here */
    uint64_t arriving;          /* tasks announced to this node and not received yet */
    uint64_t tasks_run;         /* tasks that ended here after running */
    double est_task_length_s;   /* running mean of this node's task run times */
    uint64_t est_samples;       /* 0 until a task ended here */
    double busy_s;              /* sum of run times of the tasks that ended here */
    int64_t first_start_ns;     /* monotonic; 0 before this node started any task */
};

/* What became of the connections to a peer (struct part's `link`): an open connection
 * was closed by the peer or reset (LOST), or this node's attempt to connect to it was
 * refused (REFUSED: nothing listens at its address). */
enum node_link { NODE_LINK_LOST, NODE_LINK_REFUSED };

/*
 * A table entry.  Every hook but init may be NULL; a part that is not in force on this
 * node (its policy was not chosen) still gets its messages, so that a cluster
 * configured unevenly passes on what it is sent rather than drop it.
 */
struct part {
    const char *name;
    /* Before the executors exist: a part may reduce what the node runs tasks with (the
     * LW leader's slot for its distribution thread). */
    void (*configure)(struct node_config *cfg);
    /* The part's state, or NULL with *cause when the node cannot run. */
    void *(*init)(struct node *n, char **cause);
    /* The node stops: timers stop, handles close, the closing log line. */
    void (*close)(void *state);
    /* After the loop ended: the state's memory. */
    void (*free)(void *state);
    /* Once per loop pass, after dispatch, in table order. */
    void (*step)(void *state);
    /* The cluster has (new) unfinished work: parked or resting stealing starts over. */
    void (*wake)(void *state);
    /* The information vector shows stealable work that was not there (node_news). */
    void (*news)(void *state);
    /* A task just became ready here: true when the part placed it (queued or pushed). */
    bool (*place)(void *state, struct ntask *t);
    /* A task that may move is about to be shared here (node_share): true when the part
     * took it (sent it elsewhere and freed it). */
    bool (*offer)(void *state, struct ntask *t);
    /* This node is about to grant tasks to `thief` (node_answering). */
    void (*answering)(void *state, uint32_t thief);
    /* A peer asked this node for work (a load query or a steal request) and it had none
     * to give (node_turned_away): the peer is hungry now, whether or not it parks. */
    void (*turned_away)(void *state, uint32_t thief);
    /* A steal grant arrived and its tasks are queued (req: the request it answers). */
    void (*granted)(void *state, uint32_t from, uint32_t req, uint32_t count);
    /* A steal attempt failed (node_steal_failed); true asks a parked thief to start
     * over (FLDS: the threshold fell low enough that stealing may pay again). */
    bool (*steal_failed)(void *state, bool parked);
    /* Node `node` was declared dead (node_declare_dead): drop what waits on it, stop
     * choosing it, take over what it held alone.  The node sends it nothing more. */
    void (*down)(void *state, uint32_t node);
    /* A live peer's connection was lost or refused (enum node_link); not while the node
     * stops.  Failure detection takes a refusal as evidence (heartbeat.c). */
    void (*link)(void *state, uint32_t peer, enum node_link what);
    /* The node is stopping on purpose: the last messages the part sends its peers, which
     * leave before the connections close. */
    void (*leaving)(void *state);
    /* The message types the part owns, 0-terminated, and its handler for them; a
     * negative errno for a malformed message. */
    const uint16_t *types;
    int (*on_message)(void *state, uint32_t from, uint16_t type, struct rbuf *r);
};

/* ---- what the node offers its parts ------------------------------------------------ */

const struct node_config *node_cfg(const struct node *n);
uint32_t node_self(const struct node *n);
uint32_t node_count(const struct node *n);
uv_loop_t *node_loop(struct node *n);
struct kvs *node_kvs(struct node *n);
struct node_counters *node_counters(struct node *n);
bool node_stopping(const struct node *n);
/* The node's clock (core/base/clock.h on a daemon; a test's own on a fake node), and
 * the loop's cached one in ms (free to read: it moves once per loop pass). */
int64_t node_mono_ns(const struct node *n);
int64_t node_wall_ns(const struct node *n);
int64_t node_now_ms(const struct node *n);
/* When this node last heard anything from `peer`, and last sent it anything, in
 * node_now_ms's ms; both start at the node's start. */
int64_t node_heard_ms(const struct node *n, uint32_t peer);
int64_t node_sent_ms(const struct node *n, uint32_t peer);

struct readyq *node_readyq(struct node *n, enum node_queue_id q);
struct node_load node_load(const struct node *n);
/* What the starvation test sees of this node now, and its free slots: load.c's
 * functions of node_load and the prefetch setting. */
struct steal_self node_steal_self(const struct node *n);
uint32_t node_free_slots(const struct node *n);
/* What a victim would give a thief now: SReadyQ beyond what its free slots keep
 * (steal_keep), as victim.c answers. */
uint32_t node_giveable(const struct node *n);
/* Slots with nothing running, staged or (MATRIX executors, prefetch 0) fetching in them. */
uint32_t load_free_slots(const struct node_load *l, uint32_t prefetch);
/* What the starvation test (steal_starving) sees of a node with this load (load.c). */
struct steal_self load_steal_self(const struct node_load *l, uint32_t prefetch);

/* The next pass runs the check step (dispatch, then every part's step). */
void node_mark_dirty(struct node *n);
/* Puts a ready task into queue q at its priority (required input bytes; 0 for staged)
 * and its place in its job: older jobs first, then lower index.  Marks the node dirty. */
void node_queue(struct node *n, enum node_queue_id q, struct ntask *t, uint64_t priority);
/* A task that may move: offered to the parts (an LW worker forwards it to the leader),
 * else traced QUEUED_SHARED at `wall` and put into SReadyQ. */
void node_share(struct node *n, struct ntask *t, int64_t wall);
/* A task whose inputs were being fetched can run (why NULL), or cannot (why says). */
void node_staged(struct node *n, struct ntask *t, const char *why);

/* A message to a peer: begin, write the payload, end.  To an unreachable peer the
 * payload goes to a discard buffer (logged).  node_msg_queued: bytes already waiting
 * on the connection to `peer` this pass (a batch another message can ride on). */
struct wbuf *node_msg_begin(struct node *n, uint32_t peer, uint16_t type, size_t *at);
void node_msg_end(struct node *n, uint32_t peer, size_t at);
size_t node_msg_queued(struct node *n, uint32_t peer);

/* Trace events (no-ops when tracing is off).  wall 0: now. */
void node_trace_full(struct node *n, enum trace_kind kind, uint64_t task, int32_t peer,
                     int32_t status, int64_t count, int64_t bytes, int64_t duration_ns,
                     int64_t wall);
static inline void node_trace(struct node *n, enum trace_kind kind, uint64_t task,
                              int32_t peer, int64_t count, int64_t wall)
{
    node_trace_full(n, kind, task, peer, 0, count, 0, 0, wall);
}
/* OBJECT_RECOMPUTE: the output `producer` made, lost with node `dead`, is being made
 * again by running its producer as `attempt` (recorded by the node that decides it). */
static inline void node_trace_recompute(struct node *n, uint64_t producer, uint32_t dead,
                                        uint32_t attempt)
{
    node_trace_full(n, TRACE_OBJECT_RECOMPUTE, producer, (int32_t)dead, (int32_t)attempt, 0,
                    0, 0, 0);
}
/* Whether events are being recorded: a part skips reading the clock when not. */
bool node_tracing(const struct node *n);
/* POLICY_CHANGE: the placement policy now in force, and why. */
void node_trace_policy(struct node *n, const char *name, int32_t reason);

/* Membership.  A dead node is ignored from its declaration on, never called again, and
 * every part hears of it (`down`).  node_dead_set: `nodes` flags, for core/policy/fd's
 * ring functions.  node_declare_dead tells every live peer too (MSG_MEMBER_DEAD). */
bool node_alive(const struct node *n, uint32_t peer);
const bool *node_dead_set(const struct node *n);
uint32_t node_epoch(const struct node *n);
void node_declare_dead(struct node *n, uint32_t peer, const char *why);
/* Whether `peer`'s daemon looks gone: it was heard once, this node's latest attempt to
 * connect to it was refused, and since then nothing was heard from it and no
 * connection to it opened.  A live daemon always listens; a stopped (SIGSTOP) or cut-off
 * one keeps its connections or lets them time out, and is never refused. */
bool node_refused(const struct node *n, uint32_t peer);
/* Opens a connection to a live peer unless one is open or opening; a refusal comes back
 * as a `link` event (NODE_LINK_REFUSED), a success as the peer's messages. */
void node_probe(struct node *n, uint32_t peer);
/* A task this node gave to `to` (granted, pushed, forwarded): if `to` dies before its
 * metadata says so, the task comes back here (node.c). */
void node_moved(struct node *n, uint64_t task, uint32_t to);

/* Events passed to every part in table order (struct part's hooks). */
void node_wake(struct node *n);
void node_news(struct node *n);
void node_answering(struct node *n, uint32_t thief);
void node_turned_away(struct node *n, uint32_t thief);
bool node_steal_failed(struct node *n, bool parked);

/* Stealing's shared steps.  A request to `victim`: counted and traced (asked: the tasks
 * the trace says were asked for).  A grant's payload (u32 req, u32 count, count x
 * task_spec) into queue q, traced as stolen in from `from` at `now`; a task with inputs
 * granted for SReadyQ goes to LReadyQ instead (node_task.c says why). */
void node_steal_request(struct node *n, uint32_t victim, uint32_t req, uint32_t max,
                        uint32_t asked);
int node_take_granted(struct node *n, uint32_t from, struct rbuf *r, enum node_queue_id q,
                      uint32_t *req, uint32_t *count, int64_t now);
/* A grant of `count` tasks (freed here) to `to` as message `type` (u32 req, u32 count,
 * count x task_spec), each traced as stolen out and its new holder recorded in the
 * metadata store. */
void node_send_grant(struct node *n, uint32_t to, uint16_t type, uint32_t req, void **tasks,
                     size_t count);

/*
 * The A2WS information vector (paper 001 Table 1), kept by the node for every part that
 * reads it: the ring part moves entries between neighbours, the thief plans from them.
 * node_info: NULL when no part of this node's policy reads it; otherwise the vector
 * with this node's own entry brought up to date.  node_info_elapsed_s: seconds since
 * this node first saw work in this job (the preemptive estimate's clock).
 * node_info_saw_work: an entry with work arrived.
 */
struct a2ws_vec *node_info(struct node *n);
double node_info_elapsed_s(const struct node *n);
void node_info_saw_work(struct node *n);

#endif
