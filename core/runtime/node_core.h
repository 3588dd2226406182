/*
 * node_core — the node daemon's private state, shared by the files that make the
 * centre of the star and by nothing else: the parts see only part.h's API.  node.c
 * (the loop, peers, the parts' API, the life cycle), node_task.c (the queues,
 * dispatch, completions), node_member.c (membership, and the tasks of dead holders
 * handed on), node_recover.c (lost objects recomputed from lineage) and node_client.c (jobs and the clients' messages) include it.
 */
#ifndef JACKDAW_NODE_CORE_H
#define JACKDAW_NODE_CORE_H

#include "core/runtime/part.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/log.h"
#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs.h"
#include "core/net/conn.h"
#include "core/net/proto.h"
#include "core/policy/placement.h"
#include "core/runtime/data.h"
#include "core/runtime/exec.h"
#include "core/runtime/info.h"
#include "core/runtime/objstore.h"
#include "core/runtime/parts.h"
#include "core/runtime/waitq.h"

struct peer {
    struct conn *out;       /* connection we opened; NULL when none */
    struct conn *in;        /* authenticated connection the peer opened; NULL when none */
    int64_t heard_ms, sent_ms; /* uv_now of the last message from it, and to it */
    bool met;               /* heard at least once: it was up (node_refused) */
    bool refused;           /* our latest connect was refused, and since then nothing was
                               heard from it and no connection to it became ready */
};

/* A file a client is sending in, chunk by chunk (MSG_OBJECT_PUT). */
struct object_put {
    struct conn *client;    /* borrowed; the put ends with its connection */
    struct objstore_recv *rx;
};
void node__puts_drop(struct node *n, struct conn *client);

struct job {
    uint32_t id;
    uint32_t rank;          /* how many jobs this node had seen before it */
    struct conn *client;    /* borrowed; NULL once the client left */
    uint32_t tasks;
    uint32_t arriving;      /* of those this node was told it gets, not received yet */
    uint32_t done, failed, cancelled;
};

struct node {
    struct node_config cfg;
    uint32_t self, nodes;
    uv_loop_t loop;
    struct conn_hub *hub;   /* owned */
    struct kvs *kvs;        /* owned */
    struct exec *exec;      /* owned */
    struct peer *peers;     /* owned, `nodes` entries */
    bool *dead;             /* owned, `nodes` entries: declared dead (node_declare_dead) */
    uint32_t epoch;         /* membership epoch: deaths this node knows of */
    struct proto_dead *deaths; /* owned, `nodes` entries: for a dead peer, who told this
                                  node (itself when it declared it) and when (wall ns);
                                  what STATS reports to status and the summary */
    char *expelled;         /* owned: why a peer said this node was declared dead */
    struct waitq waitq;     /* WaitQ: tasks whose parents have not all ended (waitq.h) */
    struct u64map early;    /* key -> struct early * (owned): notices that beat their task */
    struct readyq lready, sready; /* items: struct ntask * (owned) */
    struct readyq staged;   /* inputs all here, waiting for a slot (oldest first); owned */
    uint32_t staged_slots;  /* the cores of the tasks in `staged` */
    uint32_t staging;       /* tasks whose inputs are being fetched */
    struct u64map jobs;     /* job id -> struct job * (owned) */
    struct u64map puts;     /* object key -> struct object_put * (owned): files clients
                               are sending in (node_client.c) */
    uint32_t next_job_rank;
    uint64_t arriving;      /* sum of the jobs' arriving: not starving while non-zero */
    struct u64map running;  /* key -> struct ntask * (owned) handed to exec, not yet back */
    struct u64map removed;  /* key -> (void *)1: removed while staging or running */
    uint32_t busy;
    struct wbuf discard;    /* sink for messages to a peer that cannot be reached */

    uint64_t completeq, tasks_run, tasks_failed, tasks_started, tasks_cancelled;
    struct node_counters c;
    double est_task_length_s;   /* running mean of this node's task run times */
    uint64_t est_samples;
    double busy_s;              /* sum of run times of tasks that ended here */
    int64_t first_start_ns;     /* monotonic; 0 before the first task */
    uint32_t running_successors; /* sum of local_successors over running tasks */
    int64_t busy_ns_done;       /* slot-ns of tasks that ended after holding a slot */
    struct info *info;      /* the A2WS vector for the parts (info.c); owned */

    void *state[NODE_MAX_PARTS]; /* each part's, in table order */
    uint8_t owner[256];     /* scheduler message type's low byte -> part index + 1 */
    struct data_plane *data; /* state[] of part_data: the dispatcher stages through it */
    struct sync_wait *syncs; /* clients' SYNCs waiting for the store's barrier */
    struct u64map moved;    /* task key -> peer + 1: tasks this node gave away (node_moved) */
    struct pending_end *ends; /* completions waiting for their record's answer (R > 1) */
    struct pending_end *spare_ends; /* answered ones, reused: a completion allocates none */
    struct settle *settles; /* runs ended, their store's CAS and client's notice to come */
    size_t nsettles, settles_cap;
    struct u64map lost;     /* object key -> struct lost * (owned): inputs lost with a dead
                               node that tasks here wait for (node_recover.c) */
    struct u64map parked;   /* task key -> struct ntask * (owned): ready tasks waiting for
                               lost inputs to be recomputed */
    uv_timer_t recover_timer; /* asks the store about the lost objects, while any */

    const struct trace_sink *sink; /* borrowed from the config; NULL when not tracing */
    uv_timer_t sampler;         /* NODE_SAMPLE every sample_ms */
    uv_timer_t compactor;       /* packs the store's cold backup copies (kvs_compact) */
    size_t packed;              /* bytes packed since the last malloc_trim */
    uv_check_t check;       /* the once-per-pass step: dispatch, then the parts' steps */
    uv_idle_t idle;         /* running while the check step has work: no blocking poll */
    uv_signal_t sigterm, sigint;
    bool stop_requested, stopping;
};

/* Tasks started per check pass before the loop gets a turn at I/O: bounds latency of
 * messages while a node chews through a long queue of noop tasks. */
#define DISPATCH_BATCH 4096

/* A notice that arrived before its task's SUBMIT (the parent ran elsewhere first). */
struct early {
    uint8_t event;
    uint64_t bytes;
    int64_t t_ready;
    uint32_t nparents;
    struct tmd_parent *parents; /* owned */
};

/* A client's SYNC waiting for the store's barrier; its connection may close first. */
struct sync_wait {
    struct node *n;
    struct conn *c;         /* NULL once the client left */
    uint64_t token;
    struct sync_wait *next;
};

/*
 * With replicas a task may run twice: its holder was declared dead (a SIGSTOP, a
 * partition) or the move that brought it here died with its record's primary, and a
 * new attempt went elsewhere.  Only the attempt the record names completes it, so the
 * client hears of an end once the record took it; a refused end is dropped here.
 * Answered ones go to n->spare_ends for the next completions (as many as were ever
 * waiting at once), so that at R > 1 a completion costs no allocation but a detail's.
 */
struct pending_end {
    struct node *n;
    struct pending_end *prev, *next; /* n->ends or n->spare_ends (next only); freed with
                                        the node */
    uint32_t attempt;
    struct proto_task_end e;         /* detail owned, NULL when there is none */
};

/*
 * A run that ended on a slot, waiting to be settled: its record's CAS to the store and
 * the client's notice (node_task.c).  The executor's batch of ends is settled after the
 * dispatcher has filled the freed slots, so a slot is not idle while the ended runs'
 * messages are built.
 */
struct settle {
    uint64_t key;
    uint8_t status;
    bool leaf;              /* TASK_FLAG_LEAF: its record's CAS may wait for company */
    struct tmd_run run;
    struct pending_end *p;  /* the end, linked in n->ends */
};

/* ---- between the files of the centre (node__: private to them) ------------------- */

/* node.c */
void node__stop(struct node *n);

/* node_task.c */
void node__early_free(void *p);
void node__make_ready(struct node *n, struct ntask *t);
int node__on_steal_grant(struct node *n, uint32_t from, struct rbuf *r);
void node__add_parent_inputs(struct ntask *t, uint32_t nparents,
                             const struct tmd_parent *parents);
void node__ready_or_cancel(struct node *n, struct ntask *t, uint8_t event, int64_t t_ready,
                           uint32_t nparents, const struct tmd_parent *parents);
struct ntask *node__find_ready(struct node *n, uint64_t key);
void node__on_notify(void *ctx, const struct kvs_notice *notice);
void node__on_exec_done(struct exec_result *r, void *data);
void node__on_exec_batch_end(void *data);
void node__settle_ended(struct node *n);
void node__check_cb(uv_check_t *h);
/* Ends a task that could not start (an input is gone): FAILED with `why`. */
void node__fail_unstarted(struct node *n, struct ntask *t, const char *why);

/* node_member.c */
/* Job `job` is over: the moves of its tasks are remembered no more. */
void node__forget_moves(struct node *n, uint32_t job);
void node__refuse_dead(struct node *n, struct conn *c);
int node__on_member_message(struct node *n, uint32_t from, uint16_t type, struct rbuf *r);
int node__on_resubmit(struct node *n, uint32_t from, struct rbuf *r);

void node__hand_on_orphan(struct node *n, const struct tmd *rec);

/* node_recover.c */
void node__recover_init(struct node *n);
void node__recover_close(struct node *n);
void node__recover_free(struct node *n);
/* A ready task here failed to stage; true when node_recover took it (an input lost with a
 * dead node is being recomputed).  Else *why may name an initial input that was lost
 * (owned), the reason the caller fails the task with. */
bool node__recover_inputs(struct node *n, struct ntask *t, char **why);
int node__on_recompute(struct node *n, uint32_t from, struct rbuf *r);
/* A re-opened task's recomputation ended (the record took it). */
void node__recomputed(struct node *n, const struct tmd *rec);

/* node_client.c */
/* An end as a record knows it: no exit code but 0 for DONE, no output. */
struct proto_task_end node__end_of_record(const struct tmd *rec);
struct job *node__job_get(struct node *n, uint32_t id, struct conn *client);
int node__on_client_message(struct node *n, struct conn *c, uint16_t type, struct rbuf *r,
                            const char **reason);

#endif
