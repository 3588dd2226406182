/*
 * node_impl — the node daemon's state, shared by the files that make up the daemon
 * (node.c: messages, queues, executors; place.c: placement, pushes, the FLDS monitor;
 * data.c: the data plane; thief.c: the stealing state machine; ring.c: the A2WS
 * information vector on the ring; leader.c: the LW leader and its workers; token.c: the
 * CTWS token).  Private to core/runtime; nothing outside includes it.
 */
#ifndef JACKDAW_NODE_IMPL_H
#define JACKDAW_NODE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "core/base/u64map.h"
#include "core/kvs/kvs.h"
#include "core/net/bucket.h"
#include "core/model/task.h"
#include "core/net/conn.h"
#include "core/policy/a2ws.h"
#include "core/policy/ctws.h"
#include "core/policy/lw.h"
#include "core/policy/steal.h"
#include "core/runtime/exec.h"
#include "core/runtime/node.h"
#include "core/runtime/objstore.h"
#include "core/runtime/readyq.h"
#include "core/model/trace_kind.h"

#define THIEF_MAX_VICTIMS 1024

/* A task this node holds: waiting, ready, staging its inputs, or running.  Kept small:
 * a daemon holds one per waiting task; what only staging and running tasks need lives
 * in data_plane.staging. */
struct ntask {
    struct task_spec spec;
    int64_t t_ready;
    int64_t t_start;        /* wall ns once it started (busy time of samples) */
    uint32_t local_successors; /* while it runs: its children waiting here (ready+successors) */
};

struct peer {
    struct conn *out;       /* connection we opened; NULL when none */
    struct conn *in;        /* authenticated connection the peer opened; NULL when none */
    bool idle;              /* the peer told us its stealing is parked */
};

struct job {
    uint32_t id;
    uint32_t rank;          /* how many jobs this node had seen before it */
    struct conn *client;    /* borrowed; NULL once the client left */
    uint32_t tasks;
    uint32_t arriving;      /* of those this node was told it gets, not received yet */
    uint32_t done, failed, cancelled;
};

enum thief_state {
    THIEF_IDLE,             /* not stealing; may start an attempt when starving */
    THIEF_QUERY,            /* load queries out */
    THIEF_REQUEST,          /* steal request out */
    THIEF_WAIT,             /* backing off until the timer */
    THIEF_PARKED,           /* at the bound: waits for a wake-up */
};

/* A steal request received this pass, answered after the pass's dispatch. */
struct steal_ask {
    uint32_t from, req, max;
};

struct thief {
    struct steal_state st;
    enum thief_state state;
    uint64_t rng;
    uint32_t attempt;       /* id of the current attempt, echoed in replies */
    uint32_t nvictims, nreplies;
    uint32_t victims[THIEF_MAX_VICTIMS];
    uint32_t loads[THIEF_MAX_VICTIMS];
    bool replied[THIEF_MAX_VICTIMS];
    uint32_t asked;         /* tasks the current request asked for; 0: the victim decides */
    int64_t next_plan_ns;   /* monotonic: a busy node's next preemptive look */
    uv_timer_t timer;       /* back-off wait, or the attempt's timeout */
    struct steal_ask *asks; /* owned, `asks_cap` entries: requests of this pass */
    size_t nasks, asks_cap;
};

/* The A2WS information vector (ring.c): this node's view of its ring window. */
enum { RING_LEFT = 0, RING_RIGHT = 1 };

struct ring {
    bool on;                    /* some stealing part reads the vector */
    struct a2ws_vec vec;        /* entries borrowed from `entries` */
    struct a2ws_entry *entries; /* owned; `nodes` entries, NULL when off */
    uv_timer_t timer;           /* sends what waited for the interval */
    bool timer_armed;
    int64_t last_sent_ns[2];    /* monotonic, per side (RING_LEFT, RING_RIGHT) */
    int64_t work_seen_ns;       /* monotonic; 0 until this node saw work in this epoch */
    uint64_t run_base;          /* tasks_run when the epoch began: n_j counts from here */
    uint64_t sent, received, piggybacked; /* MSG_INFO messages */
};

/* LW (leader.c): the leader's held requests, or a worker's request in flight. */
struct leader {
    bool on;                    /* --victims leader, two nodes or more, stealing on */
    bool is_leader;             /* this node is LW_LEADER */
    bool asked;                 /* worker: a request is out and not answered yet */
    uint32_t req, want;         /* worker: its latest request */
    double resend_ms;           /* worker: wait before repeating it (a lost message) */
    uv_timer_t timer;           /* worker: repeats an unanswered request */
    struct lw_request *pending; /* leader: owned, `nodes` entries; the held requests, FIFO */
    uint32_t npending;
    uint32_t *grants;           /* leader: owned, `nodes` entries; lw_serve's answer */
    uint32_t *answered;         /* leader: owned, `nodes` entries; last request id answered */
    uint64_t forwarded, received, requests, handed_out; /* for the closing log line */
};

/* CTWS (token.c): the token while this node holds it. */
struct token {
    bool on;                    /* --victims token, two nodes or more, stealing on */
    bool held;                  /* the token is here */
    bool resting;               /* held, and nothing was stealable: waits for news of work */
    struct ctws_token tok;      /* entries borrowed from `entries` */
    struct ctws_entry *entries; /* owned; `nodes` entries, NULL when off */
    uv_timer_t timer;           /* a paced pass */
    int64_t last_pass_ns;       /* monotonic: when this node last passed the token */
    uint64_t passes, rests, steals;
};

/* The data plane (data.c): fetches in flight, and messages held back by the network
 * emulation's token buckets and latency. */
struct fetch;
struct deferred;

struct data_plane {
    struct objstore *store;     /* owned */
    struct bucket egress, ingress;
    int64_t latency_ns;
    struct u64map fetches;      /* object key -> struct fetch * (owned) */
    struct u64map staging;      /* task key -> struct staging * (owned): pins, missing inputs */
    struct u64map by_req;       /* request id -> struct fetch * (borrowed) */
    uint32_t next_req;
    struct deferred *heap;      /* owned; min-heap on due time */
    size_t heap_len, heap_cap;
    uv_timer_t pacer;           /* fires at the earliest deferred message */
    uint64_t fetches_started, bytes_in, bytes_out;
    uint64_t cache_hits_traced;  /* inputs found here that another node produced */
};

struct node {
    struct node_config cfg;
    uint32_t self, nodes;
    uv_loop_t loop;
    struct conn_hub *hub;   /* owned */
    struct kvs *kvs;        /* owned */
    struct exec *exec;      /* owned */
    struct peer *peers;     /* owned, `nodes` entries */
    struct u64map waitq;    /* key -> struct ntask * (owned) */
    struct u64map early;    /* key -> struct early * (owned): notices that beat their task */
    struct readyq lready, sready; /* items: struct ntask * (owned) */
    struct readyq staged;   /* inputs all here, waiting for a slot (oldest first); owned */
    uint32_t staging;       /* tasks whose inputs are being fetched */
    struct u64map jobs;     /* job id -> struct job * (owned) */
    uint32_t next_job_rank;
    uint64_t arriving;      /* sum of the jobs' arriving: not starving while non-zero */
    struct u64map running;  /* key -> struct ntask * (owned) handed to exec, not yet back */
    struct u64map removed;  /* key -> (void *)1: removed while staging or running */
    uint32_t busy;
    struct wbuf discard;    /* sink for messages to a peer that cannot be reached */

    uint64_t completeq, tasks_run, tasks_failed;
    uint64_t steals_attempted, steals_succeeded, tasks_stolen, tasks_given;
    uint64_t tasks_pushed, tasks_with_inputs, locality_hits, policy_switches;
    double est_task_length_s;   /* running mean of this node's task run times */
    uint64_t est_samples;
    double busy_s;              /* sum of run times of tasks that ended here */
    int64_t first_start_ns;     /* monotonic; 0 before the first task */
    struct flds_state flds;
    struct placement_auto autop;
    uint64_t auto_bytes_mark;   /* bytes_in at the start of the auto interval */
    double auto_last_s;         /* when the auto interval started */
    double auto_busy_mark;
    uv_timer_t monitor;         /* FLDS monitor and auto controller */
    struct data_plane data;

    struct thief thief;
    struct ring ring;
    struct leader leader;
    struct token token;
    uint32_t running_successors; /* sum of local_successors over running tasks */
    const struct trace_sink *sink; /* borrowed from the config; NULL when not tracing */
    uv_timer_t sampler;         /* NODE_SAMPLE every sample_ms */
    uint64_t tasks_started, steal_requests, steal_fails, tasks_cancelled;
    int64_t busy_ns_done;       /* slot-ns of tasks that ended after holding a slot */
    uv_check_t check;       /* the once-per-pass step: dispatch, steal, wake */
    uv_idle_t idle;         /* running while the check step has work: no blocking poll */
    uv_signal_t sigterm, sigint;
    bool stop_requested, stopping;
};

/* node.c */
void node_mark_dirty(struct node *n);
/* Puts a ready task into q (lready, sready or staged) at its priority (required input
 * bytes; 0 for staged) and its place in its job: older jobs first, then lower index.
 * Marks the node dirty, so that the next pass dispatches it. */
void node_queue(struct node *n, struct readyq *q, struct ntask *t, uint64_t priority);
/* A trace event without a body (no-op when tracing is off).  wall 0: now. */
static inline void node_trace_full(struct node *n, enum trace_kind kind, uint64_t task,
                                   int32_t peer, int32_t status, int64_t count, int64_t bytes,
                                   int64_t duration_ns, int64_t wall)
{
    if (n->sink)
        n->sink->put(n->sink->ctx, kind, task, peer, status, count, bytes, duration_ns, wall);
}

static inline void node_trace(struct node *n, enum trace_kind kind, uint64_t task, int32_t peer,
                              int64_t count, int64_t wall)
{
    node_trace_full(n, kind, task, peer, 0, count, 0, 0, wall);
}
struct wbuf *node_msg_begin(struct node *n, uint32_t peer, uint16_t type, size_t *at);
void node_msg_end(struct node *n, uint32_t peer, size_t at);
/* A task from a SUBMIT or STEAL_GRANT payload; NULL when malformed. */
struct ntask *ntask_decode(struct rbuf *r);
void ntask_free(struct ntask *t);

/* place.c */
/* Algorithm 1 for a task that just became ready (LReadyQ, SReadyQ or push). */
void place_make_ready(struct node *n, struct ntask *t);
int place_on_push(struct node *n, uint32_t from, struct rbuf *r);
void place_monitor_init(struct node *n);
void place_monitor_start(struct node *n);
void place_monitor_stop(struct node *n);

/* node.c, called by data.c: a staging task's inputs are all here (why NULL), or cannot
 * be (why says). */
void node_staged(struct node *n, struct ntask *t, const char *why);

/* data.c */
int data_init(struct node *n, char **cause);
void data_close(struct node *n);
/* Pins the task's inputs; fetches the missing ones.  Returns 1 when every input is
 * here (run it now), 0 when fetches are under way (node_staged follows), or a negative
 * errno when an input is unavailable (the caller fails the task). */
int data_stage(struct node *n, struct ntask *t);
/* Releases the task's pins. */
void data_release(struct node *n, struct ntask *t);
int data_on_fetch_request(struct node *n, uint32_t from, struct rbuf *r);
/* A finished task's output becomes an object here; returns its size. */
uint64_t data_keep_output(struct node *n, struct ntask *t);
/* Stages a command's inputs as files in its work directory. */
int data_stage_files(struct node *n, struct ntask *t, char **cause);
int data_on_fetch_reply(struct node *n, uint32_t from, struct rbuf *r);

/* thief.c */
void thief_init(struct node *n);
void thief_close(struct node *n);
/* What the starvation test sees of this node now. */
struct steal_self thief_self(const struct node *n);
/* Starts an attempt and asks `victim` for tasks: max bounds the grant (0: the victim's
 * amount policy decides), `expect` is what the trace says was asked for. */
void thief_request(struct node *n, uint32_t victim, uint32_t max, uint32_t expect);
/* From the check step: starts an attempt if the node is starving. */
void thief_poll(struct node *n);
/* The cluster has (new) unfinished work: unpark and start over. */
void thief_wake(struct node *n);
int thief_on_load_query(struct node *n, uint32_t from, struct rbuf *r);
int thief_on_load_reply(struct node *n, uint32_t from, struct rbuf *r);
/* Holds a steal request until thief_answer: requests are answered once per pass. */
int thief_on_steal_request(struct node *n, uint32_t from, struct rbuf *r);
/* From the check step, after dispatch: answers the pass's steal requests from what the
 * node's own free slots could not start (the progress rule, thief.c). */
void thief_answer(struct node *n);
int thief_on_steal_grant(struct node *n, uint32_t from, struct rbuf *r);
/* A grant's tasks (u32 req, u32 count, count x task_spec) into q, traced as stolen in
 * from `from`; thief.c's steals and leader.c's LW hand-outs share it. */
int thief_take_granted(struct node *n, uint32_t from, struct rbuf *r, struct readyq *q,
                       uint32_t *req, uint32_t *count, int64_t now);
/* Tells parked peers that this node has stealable work. */
void thief_wake_idle_peers(struct node *n);

/* ring.c */
void ring_init(struct node *n);
void ring_close(struct node *n);
/* Brings this node's own entry up to date (Table 1: its t, its counts). */
void ring_refresh_self(struct node *n);
/* From the check step: refresh, then send dirty entries to the ring neighbours, riding
 * on batches already leaving this pass or at most every RING_INTERVAL_MS. */
void ring_step(struct node *n);
int ring_on_info(struct node *n, uint32_t from, struct rbuf *r);
/* Sends this node's own entry to `to` (a victim to its thief, beside the grant). */
void ring_send_self(struct node *n, uint32_t to);
/* Seconds since this node first saw work: the preemptive estimate's clock. */
double ring_elapsed_s(const struct node *n);
/* A job begins: on an idle node n_j and the elapsed time start again from zero. */
void ring_job_begins(struct node *n);

/* leader.c.  leader_configure runs before the executors exist: it sets the leader's
 * reduced capacity (lw_leader_capacity) in n->cfg; leader_init once the loop exists. */
void leader_configure(struct node *n);
void leader_init(struct node *n);
void leader_close(struct node *n);
/* From place_make_ready: a movable ready task of a worker goes to the leader.  True when
 * it was sent (and freed). */
bool leader_forward(struct node *n, struct ntask *t);
/* From the thief's poll: a starving worker asks the leader. */
void leader_poll(struct node *n, const struct steal_self *self);
/* From the check step: the leader answers the requests it can. */
void leader_step(struct node *n);
int leader_on_forward(struct node *n, uint32_t from, struct rbuf *r);
int leader_on_request(struct node *n, uint32_t from, struct rbuf *r);
int leader_on_grant(struct node *n, uint32_t from, struct rbuf *r);

/* token.c */
void token_init(struct node *n);
void token_close(struct node *n);
/* From the check step: a resting token moves again when this node's own count changed. */
void token_step(struct node *n);
/* The cluster has (new) work: a token resting here moves again. */
void token_wake(struct node *n);
int token_on_message(struct node *n, uint32_t from, struct rbuf *r);

#endif
