/*
 * fake_node — a node without a daemon, for the unit tests of the runtime's parts
 * (core/runtime/part.h).  It implements the node's API for its parts the way
 * test_kvs.c drives stores over a fake transport: messages a part sends are captured
 * (peer, type, payload) instead of leaving, the clock is the test's (fake_node.mono /
 * .wall), the queues are real readyqs the test fills, the load the parts read is the
 * queues plus the fields in `load`, and the events a part raises (node_wake, node_news,
 * node_answering, node_turned_away, node_steal_failed, node_share, node_staged) are counted and passed to
 * the parts the test added, in the order it added them, as node.c passes them to the
 * table.  Timers are real libuv timers on the fake's own loop: a test that needs one to
 * fire sets its period to 1 ms and runs the loop once (fake_node_run_once), which
 * blocks until then — outcomes, never durations, are asserted.
 *
 * Used by tests/unit/test_part_*.c (built with fake_node.c by the Makefile).
 */
#ifndef JACKDAW_TEST_FAKE_NODE_H
#define JACKDAW_TEST_FAKE_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/kvs/kvs.h"
#include "core/model/cluster.h"
#include "core/runtime/part.h"

#define FAKE_MAX_PARTS 16
#define FAKE_MAX_NODES 64

struct fake_msg {
    uint32_t peer;
    uint16_t type;
    struct wbuf body;       /* owned: the payload, without the frame header */
};

struct fake_trace {
    enum trace_kind kind;
    uint64_t task;
    int32_t peer, status;
    int64_t count;
};

struct node {
    struct node_config cfg;
    struct cluster cluster;
    struct cluster_node members[FAKE_MAX_NODES];
    uint32_t self, nodes;
    uv_loop_t loop;
    uv_timer_t guard;               /* keeps a blocking run_once waiting for unref'd timers */
    struct kvs *kvs;                /* a real store; its messages are captured too */
    struct readyq q[3];             /* NODE_LREADY, NODE_SREADY, NODE_STAGED */
    struct node_load load;          /* the test's: busy, staging, arriving, est_*, ... */
    struct node_counters c;
    int64_t mono, wall;             /* the clock the parts read (node_now_ms: mono in ms) */
    int64_t heard_ms[FAKE_MAX_NODES]; /* node_heard_ms: the test's */
    int64_t sent_ms[FAKE_MAX_NODES];  /* node_sent_ms: set by node_msg_end, or the test */
    bool stopping, tracing;

    /* the A2WS vector, when the test turns it on (fake_node_info_on) */
    bool info_on;
    struct a2ws_vec vec;
    struct a2ws_entry *entries;
    int64_t work_seen_ns;

    struct fake_msg *msgs;          /* captured, oldest first */
    size_t nmsgs, msgs_cap;
    struct fake_trace *traces;
    size_t ntraces, traces_cap;
    uint32_t wakes, news, answering, turned_away, steal_failed, shared, staged, staged_failed, dirty;
    bool dead[FAKE_MAX_NODES];      /* node_declare_dead's, or the test's */
    bool refused[FAKE_MAX_NODES];   /* node_refused: the test's */
    uint32_t probes[FAKE_MAX_NODES]; /* node_probe calls, per peer */
    uint32_t epoch, declared;       /* deaths known, and declared through the API */
    bool steal_failed_answer;       /* what node_steal_failed returns with no part */
    struct ntask *last_staged;      /* the last task node_staged was given (borrowed) */
    struct ntask **staged_tasks;    /* every task node_staged was given, oldest first
                                     * (borrowed: the test frees them as the node would) */
    size_t nstaged_tasks, staged_tasks_cap;

    const struct part *parts[FAKE_MAX_PARTS];
    void *state[FAKE_MAX_PARTS];
    size_t nparts;
};

/* A node `self` of `nodes` with default stealing and placement (steal_params_default,
 * placement_params_default), `slots` slots and the work directory `workdir` (may be
 * NULL when no part needs one); change n->cfg before adding parts. */
struct node *fake_node_new(uint32_t self, uint32_t nodes, uint32_t slots, const char *workdir);
/* Initialises a part on this node (its configure hook first, then init); returns its
 * state (asserted non-NULL). */
void *fake_node_add(struct node *n, const struct part *p);
/* Turns on the information vector with radius r (0: the default), as node.c does when
 * the policy reads it. */
void fake_node_info_on(struct node *n, uint32_t radius);
/* The check step: every added part's step, in order. */
void fake_node_step(struct node *n);
/* Hands a message to the part that owns its type; returns the handler's result
 * (-ENOENT when no added part owns it). */
int fake_node_deliver(struct node *n, uint32_t from, uint16_t type, const void *payload,
                      size_t len);
/* Moves every captured message addressed to `to->self` from `from` into `to`'s parts
 * (a fake network between two fake nodes); returns how many were delivered.  Messages
 * of types no part of `to` owns are dropped and counted in *unowned when not NULL. */
size_t fake_node_pass(struct node *from, struct node *to, size_t *unowned);
/* Runs the fake's loop once: UV_RUN_ONCE when `block` (waiting at most 100 ms, so that
 * timers a part unref'd still fire), else UV_RUN_NOWAIT. */
void fake_node_run_once(struct node *n, bool block);
/* Makes every armed timer of the parts due now, so that the next run_once fires them:
 * a test whose next step must come before a timer uses a long period and ends it with
 * this, rather than racing two 1 ms timers within one run of the loop. */
void fake_node_expire_timers(struct node *n);
void fake_node_free(struct node *n);

/* Captured messages of `type` (0: any); the i-th of them, or NULL. */
size_t fake_msgs(const struct node *n, uint16_t type);
struct fake_msg *fake_msg(struct node *n, uint16_t type, size_t i);
void fake_msgs_clear(struct node *n);
/* Marks `node` dead as node_declare_dead does (the information vector, when on, empties
 * its entry and takes the next live ring neighbours, then the parts hear `down`), without
 * counting it as declared by a part. */
void fake_node_kill(struct node *n, uint32_t node);
/* What node.c's on_close tells the parts of a live peer's connection (part.h's `link`):
 * lost, or refused (then n->refused[peer] is set first, as node_refused would say). */
void fake_node_link(struct node *n, uint32_t peer, enum node_link what);
/* The parts' goodbyes, as node.c's stop sends them. */
void fake_node_leaving(struct node *n);
/* Trace events of `kind` recorded so far. */
size_t fake_traces(const struct node *n, enum trace_kind kind);

/* A ready task of job 1 with index `index`, stealable or not, needing `input_bytes` of
 * data (as one input on node `holder`) or none. */
struct ntask *fake_task(uint32_t index, bool stealable, uint64_t input_bytes, uint32_t holder);
/* Puts a task into queue q as node_queue would (priority: its input bytes). */
void fake_queue(struct node *n, enum node_queue_id q, struct ntask *t);

#endif
