/*
 * sim_sg_core — the SimGrid engine's model as its files share it: the messages, the
 * effects, the node, task and run structures, and the helpers each file offers the
 * others (prefix sim_sg__, as sim_core.h's sim__ for the discrete-event core).
 * Internal to the model, which runs in sim_sg_proc.c's child: sim_sg.c (the run's
 * state, its trace, the effects and the outboxes, the node actor, the main actor, the
 * platform, sim_sg__simulate), sim_sg_task.c (placement, dispatch, the inputs'
 * transfers, a task's life, the FLDS monitor) and sim_sg_thief.c (the thief and the
 * victim: load queries, steal requests and grants, the back-off, parking and
 * wake-ups).  Nothing else includes it; the engine's surface is sim_sg.h.
 *
 * Only built with SimGrid's headers (JACKDAW_SIMGRID), as sim_sg_proc.h.
 */
#ifndef JACKDAW_SIM_SG_CORE_H
#define JACKDAW_SIM_SG_CORE_H

#ifdef JACKDAW_SIMGRID

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/base/u64map.h"
#include "core/model/trace_kind.h"
#include "core/model/workload.h"
#include "core/policy/placement.h"
#include "core/policy/steal.h"
#include "core/sim/sim.h"
#include "core/sim/sim_queue.h"
#include "core/sim/sim_sg_proc.h"

#define REF_FLOPS 1e9       /* a speed-1 host's flops a second: d seconds are d·1e9 flops */
#define MSG_BYTES 64        /* a protocol message on the wire; a grant 8 more a task */
/* The inputs placement weighs for one task at most (its scratch, struct sgsim.objs). */
#define SG_MAX_INPUTS 4096

enum msg_type {
    M_READY,        /* to the holder's node: a = task */
    M_PUSHED,       /* to placement's choice: a = task */
    M_PARENT_DONE,  /* to the child's record owner: a = child */
    M_QUERY,        /* to a victim: from = thief, b = its index in the thief's draw */
    M_STEAL_REQ,    /* to the chosen victim: from = thief */
    M_WAKE,         /* to a parked or turned-away thief's node */
    R_LOAD,         /* to a thief: a = index, b = what the victim could give */
    R_GRANT,        /* to a thief: b tasks in `tasks` */
};

struct msg {
    uint8_t type;
    uint32_t from, a, b;
    uint32_t *tasks;        /* R_GRANT: owned, b entries */
};

enum fx_type {
    FX_SEND,        /* m to mailbox `to` */
    FX_LOCAL,       /* m to `node`, handled now */
    FX_STAGED,      /* `task`'s inputs are at `node` */
    FX_RUN,         /* start `task`'s actor on `node` */
    FX_FETCH,       /* start `fetch`'s transfers */
    FX_MONITOR,     /* start `node`'s FLDS monitor */
    FX_THIEF,       /* release `node`'s thief */
    FX_DONE,        /* release the main actor: every task ended */
};

struct fetch;

struct fx {
    uint8_t type;
    uint32_t node, task;
    long bytes;
    struct msg *m;
    sg_mailbox_t to;
    struct fetch *fetch;
};

/* The sends an actor started and has not waited for: a FIFO. */
struct outbox {
    sg_comm_t *v;
    double *due;            /* when each has surely arrived (v's parallel array) */
    size_t head, n, cap;    /* live entries are v[head .. n) */
};

/* One transfer of a fetch: `bytes` of the object `key` from node `src`, and the other
 * fetches at the same node waiting for that copy (sim.c's joins). */
struct xfer {
    struct fetch *f;
    uint32_t src;
    uint64_t bytes, key;
    struct fetch **joined;  /* owned */
    uint32_t njoined, joined_cap;
};

/* A task's inputs on their way to `node`: its transfers, and the copies it waits for
 * that other fetches bring. */
struct fetch {
    uint32_t task, node, count, joins, left;
    double t0;
    struct xfer *x;         /* owned, count entries (room for every input: never moved) */
};

enum thief_state {
    TH_BUSY,    /* its actor is running it (an attempt, or about to decide) */
    TH_IDLE,    /* blocked, not starving: a poke releases it */
    TH_WAIT,    /* sleeping out its back-off: a wake-up releases it early */
    TH_PARKED,  /* blocked until a peer with work wakes it */
};

struct node {
    sg_host_t host;         /* its CPU and the end of its messages */
    sg_host_t data;         /* the end of its inputs' transfers */
    sg_mailbox_t mbox, tmbox;   /* the node actor's, the thief's */
    sg_mailbox_t xmbox;     /* where its inputs arrive */
    sg_sem_t thief_sem;     /* a poke or a wake-up releases the thief */
    sg_sem_t query_sem;     /* the thief's answers are in: its queries' sender ends */
    double speed;
    uint32_t slots, free_slots, busy;
    struct readyq lready, sready;
    struct flds_state flds;
    double first_start;     /* -1 before its first task */
    double ran_s;
    bool monitor_on;
    struct steal_state st;
    uint8_t state;          /* enum thief_state */
    bool parked_listed;
    uint64_t *hungry;       /* owned, NULL until needed: a bit a peer whose thief this node
                             * turned away since it last had work to give */
    uint32_t nhungry;       /* bits set in `hungry` */
    int64_t started, ended, stolen_in, stolen_out, steal_requests, steal_fails;
    int64_t fetches, fetch_bytes, busy_ns_done;
    struct u64map cache;    /* object keys fetched here */
    uint32_t staging;       /* tasks whose inputs are on their way */
    uint32_t *staged;       /* FIFO of tasks whose inputs are here */
    size_t nstaged, staged_head, staged_cap;
};

struct task_state {
    uint32_t waiting;       /* parents not ended */
    uint32_t holder;        /* where its readiness goes */
    uint32_t at;            /* the node running it */
    uint32_t runner;        /* the node that ran it, once it ended */
    double t_start;
};

struct sgsim {
    const struct workload *wl;
    const struct sim_config *cfg;
    struct sim_result *res;
    FILE *wire;             /* NULL: no sink */
    struct node *nodes;
    struct task_state *tasks;
    uint64_t rng, left;
    uint32_t *parked;
    size_t nparked, parked_cap;
    uint32_t victims_max;
    struct placement_object *objs;
    struct sim_take take;   /* a victim's or the FLDS monitor's take (sim_queue.h) */
    struct fx *fx;          /* the effects of the handler running now */
    size_t nfx, fx_cap;
    sg_sem_t done;
    double msg_Bps;         /* the message links' bandwidth */
};

/*
 * libsimgrid as the child loaded it (sim_sg_proc.c) and the run: one of each in the
 * process, set by sim_sg__simulate (sim_sg.c) before SimGrid runs, reached from actors
 * that start from a bare function.  Short names: nearly every line of the model reads
 * them.
 */
extern const struct sim_sg_lib *sim_sg__lib; /* borrowed, for the process's life */
extern struct sgsim *sim_sg__the;
#define sg sim_sg__lib
#define the sim_sg__the

/* ---- sim_sg.c: the clock, the trace, effects, messages and actors ---- */

double sim_sg__now(void);
/* A trace event of `node`'s, when it has a sink; task UINT32_MAX: none. */
void sim_sg__trace(uint32_t node, enum trace_kind kind, uint32_t task, int32_t peer,
                   int32_t status, int64_t count, int64_t bytes, int64_t duration_ns);
/* Lists an effect of the handler running now, carried out by sim_sg__run_effects. */
void sim_sg__effect(struct fx f);
struct msg *sim_sg__msg_new(uint8_t type, uint32_t from, uint32_t a, uint32_t b);
void sim_sg__post(uint32_t from, uint32_t to, uint8_t type, uint32_t a, uint32_t b);
void sim_sg__post_thief(uint32_t to, struct msg *m, long bytes);
void sim_sg__send_msg(struct outbox *o, sg_mailbox_t to, struct msg *m, long bytes);
void sim_sg__outbox_reap(struct outbox *o);
void sim_sg__outbox_wait_all(struct outbox *o);
void sim_sg__outbox_drop(struct outbox *o);
void sim_sg__outbox_fini(struct outbox *o);
void sim_sg__spawn(uint32_t node, void (*code)(int, char **), void *data, bool daemon);
void sim_sg__run_effects(struct outbox *out);
void sim_sg__receive_eagerly(char prefix, uint32_t id);

/* ---- sim_sg_task.c: placement, dispatch, transfers, a task's life ---- */

uint32_t sim_sg__inputs_of(uint32_t task, struct placement_object *out, uint32_t max,
                           uint64_t *sum);
/* A ready task reaches `id` (pushed: by another's placement): queued or pushed on. */
void sim_sg__enqueue(uint32_t id, uint32_t task, bool pushed);
void sim_sg__dispatch(uint32_t id);
void sim_sg__on_staged(uint32_t id, uint32_t task);
/* Actors' bodies (their data: a task, a struct xfer, a node). */
void sim_sg__runner_main(int argc, char **argv);
void sim_sg__xfer_source_main(int argc, char **argv);
void sim_sg__xfer_main(int argc, char **argv);
void sim_sg__monitor_main(int argc, char **argv);

/* ---- sim_sg_thief.c: the thief and the victim ---- */

bool sim_sg__steals(void);
uint32_t sim_sg__stealable(const struct node *n);
void sim_sg__poke(uint32_t id);
void sim_sg__wake_parked(uint32_t from);
void sim_sg__wake_hungry(uint32_t id);
void sim_sg__on_new_ready(uint32_t id);
/* The victim's side of the messages the node actor receives. */
void sim_sg__on_query(uint32_t id, uint32_t thief, uint32_t index);
void sim_sg__on_steal_req(uint32_t id, uint32_t thief);
void sim_sg__on_wake(uint32_t id);
/* Node `id`'s thief: its semaphores and its actor. */
void sim_sg__thief_spawn(uint32_t id);

#endif /* JACKDAW_SIMGRID */

#endif
