/*
 * sim_sg — the SimGrid engine's model (sim_sg.h says what it models and why it runs in
 * a child process; sim_sg_proc.c is that process, which loads libsimgrid, calls
 * sim_sg__simulate and carries its trace events and result back to the caller).
 *
 * Shape.  Every node is a SimGrid host with two actors: the node actor, which receives
 * the protocol's messages from its mailbox and handles them, and the thief, a coroutine
 * that queries victims, waits for their answers, asks one for work and backs off or
 * parks, as core/policy/steal.h decides.  Each task runs in an actor of its own, made
 * when it starts (its execution on the node's host, then its end), each input transfer
 * in another, and an FLDS monitor in one while its node's LReadyQ is not empty.
 *
 * Handlers are atomic, effects are not.  A SimGrid call that talks to the kernel (a
 * send, an actor's creation, a semaphore) lets every other ready actor run before it
 * returns, so a handler that sent halfway through would find the node changed under
 * it.  Handlers therefore only change state and list their effects (messages to send,
 * actors to start, thieves to wake); the actor that ran the handler carries them out
 * afterwards.  A message between two actions of one node (a parent's end whose record
 * is local) is handled in that list too, as the discrete-event core handles it as an
 * event of the same instant.
 *
 * Messages.  A mailbox receives eagerly (its actor is its permanent receiver): a
 * message crosses the network from the moment it is sent, as on a real one, where a
 * mailbox served on demand would deliver the queries that reach a victim together one
 * latency after another.  Sends are kept until they complete: SimGrid cancels the sends
 * of an actor that ends and keeps a detached send on a list that each completion walks
 * (quadratic in the messages in flight, minutes at a thousand nodes), so each actor
 * keeps an outbox that it reaps (the node actor) or waits for before it ends (tasks,
 * transfers, monitors) or asks again (the thief).  SimGrid 3.32 still walks a list of
 * the waiting actor's pending activities at each completion (a set from 3.33 on), which
 * is most of its time where thieves ask hundreds of victims at once.
 *
 * The run's state is reached through one file-static pointer: SimGrid's actors start
 * from a bare function, and the child process runs one simulation.
 *
 * Owns the engine's names and refusals (sim_engine_parse, sim_sg_check: sim_sg.h,
 * called by tools/cmd/sim_settings.c and sim_summary.c) and the simulation
 * (sim_sg__simulate: sim_sg_proc.h, called by sim_sg_proc.c's child only).
 */
#include "core/sim/sim_sg.h"

#include <errno.h>
#include <string.h>

int sim_engine_parse(const char *name)
{
    if (strcmp(name, "des") == 0)
        return SIM_ENGINE_DES;
    if (strcmp(name, "simgrid") == 0)
        return SIM_ENGINE_SIMGRID;
    return -1;
}

const char *sim_engine_name(enum sim_engine engine)
{
    return engine == SIM_ENGINE_SIMGRID ? "simgrid" : engine == SIM_ENGINE_DES ? "des" : "?";
}

int sim_sg_check(const struct sim_config *cfg, const struct workload *wl, const char **why)
{
    int rc = sim_check(cfg, wl, why);
    if (rc < 0)
        return rc;
    /* sim_check passes everything the discrete-event core models; this engine models
     * the daemons' default stealing parts and the placements of Algorithm 1 only. */
    const struct steal_params *p = &cfg->steal;
    if (cfg->placement.policy == PLACEMENT_AUTO) {
        *why = "placement auto runs on --engine des only (the SimGrid engine models ws, mlb, "
               "mdl, rlds and flds)";
        return -ENOTSUP;
    }
    if (p->mode != STEAL_NONE &&
        ((p->victims != STEAL_VICTIMS_SQRT && p->victims != STEAL_VICTIMS_RANDOM) ||
         p->amount == STEAL_AMOUNT_A2WS || p->starvation != STEAL_STARVE_READY ||
         p->info != STEAL_INFO_LOAD_QUERY || p->wait_guard)) {
        *why = "the SimGrid engine models the default stealing parts (sqrt or random:K victims "
               "asked their loads, ready starvation, no wait guard); A2WS, PaRSEC, LW and CTWS "
               "run on --engine des";
        return -ENOTSUP;
    }
#ifndef JACKDAW_SIMGRID
    *why = "this jackdaw was built without SimGrid (install libsimgrid-dev and rebuild it), "
           "so only --engine des runs";
    return -ENOTSUP;
#else
    return 0;
#endif
}

#ifdef JACKDAW_SIMGRID

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/sim/sim_inputs.h"
#include "core/sim/sim_queue.h"
#include "core/sim/sim_sg_proc.h"
#include "core/policy/placement.h"
#include "core/policy/steal.h"

/* libsimgrid as the child loaded it (sim_sg_proc.c): borrowed for the process's life. */
static const struct sim_sg_lib *sg;

/* ---- the run's state ---------------------------------------------------------------- */

#define REF_FLOPS 1e9       /* a speed-1 host's flops a second: d seconds are d·1e9 flops */
#define MSG_BYTES 64        /* a protocol message on the wire; a grant 8 more a task */
#define UNLIMITED_BPS 1e12  /* no --bandwidth: links where a message costs its latency */
#define STACK_KIB 32        /* an actor's stack; our handlers are shallow */
/* Guard pages catch a stack overflow, at two memory mappings an actor; past this many
 * actors they would exceed vm.max_map_count (65530 by default), and go. */
#define GUARDED_ACTORS_MAX 20000

enum msg_type {
    M_READY,        /* to the holder's node: a = task */
    M_PUSHED,       /* to placement's choice: a = task */
    M_PARENT_DONE,  /* to the child's record owner: a = child */
    M_QUERY,        /* to a victim: from = thief, b = its index in the thief's draw */
    M_STEAL_REQ,    /* to the chosen victim: from = thief */
    M_WAKE,         /* to a parked thief's node */
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

/* One transfer of a fetch: `bytes` from node `src`. */
struct xfer {
    struct fetch *f;
    uint32_t src;
    uint64_t bytes;
};

/* A task's inputs on their way to `node`. */
struct fetch {
    uint32_t task, node, count, left;
    double t0;
    struct xfer *x;         /* owned, count entries */
};

enum thief_state {
    TH_BUSY,    /* its actor is running it (an attempt, or about to decide) */
    TH_IDLE,    /* blocked, not starving: a poke releases it */
    TH_WAIT,    /* sleeping out its back-off */
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
    struct queue lready, sready;
    struct flds_state flds;
    double first_start;     /* -1 before its first task */
    double ran_s;
    bool monitor_on;
    struct steal_state st;
    uint8_t state;          /* enum thief_state */
    bool parked_listed;
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
    struct fx *fx;          /* the effects of the handler running now */
    size_t nfx, fx_cap;
    sg_sem_t done;
    double msg_Bps;         /* the message links' bandwidth */
};

static struct sgsim *the;

static double now(void)
{
    return sg->clock();
}

static uint32_t cores_of(const struct workload_task *t)
{
    return t->cores > 1 ? t->cores : 1;
}

/* ---- trace, through the pipe --------------------------------------------------------- */

static bool traced(uint32_t node)
{
    return the->wire && the->cfg->sinks[node];
}

static int64_t wall(void)
{
    return the->cfg->start_wall_ns + llround(now() * 1e9);
}

static void trace(uint32_t node, enum trace_kind kind, uint32_t task, int32_t peer,
                  int32_t status, int64_t count, int64_t bytes, int64_t duration_ns)
{
    if (!traced(node))
        return;
    sim_sg__wire_put(the->wire, node, kind,
                     task == UINT32_MAX ? TRACE_NO_TASK : task_key(the->cfg->job, task), peer,
                     status, count, bytes, duration_ns, wall());
}

static void sample(uint32_t id)
{
    if (!traced(id))
        return;
    struct node *n = &the->nodes[id];
    struct trace_sample x = {
        .busy = (int32_t)n->busy, .slots = (int32_t)n->slots,
        .lreadyq = (int32_t)n->lready.n, .sreadyq = (int32_t)n->sready.n,
        .started = n->started, .ended = n->ended,
        .stolen_in = n->stolen_in, .stolen_out = n->stolen_out,
        .steal_requests = n->steal_requests, .steal_fails = n->steal_fails,
        .fetches = n->fetches, .fetch_bytes = n->fetch_bytes, .busy_ns = n->busy_ns_done,
    };
    sim_sg__wire_sample(the->wire, id, &x, wall());
}

/* ---- effects ------------------------------------------------------------------------ */

static void effect(struct fx f)
{
    the->fx = xgrow(the->fx, &the->fx_cap, the->nfx + 1, sizeof *the->fx);
    the->fx[the->nfx++] = f;
}

static struct msg *msg_new(uint8_t type, uint32_t from, uint32_t a, uint32_t b)
{
    struct msg *m = xcalloc(1, sizeof *m);
    *m = (struct msg){.type = type, .from = from, .a = a, .b = b};
    return m;
}

/* A message to node `to`'s actor: over the network, or handled in this turn when it
 * stays on the node. */
static void post(uint32_t from, uint32_t to, uint8_t type, uint32_t a, uint32_t b)
{
    struct msg *m = msg_new(type, from, a, b);
    if (from == to)
        effect((struct fx){.type = FX_LOCAL, .node = to, .m = m});
    else
        effect((struct fx){.type = FX_SEND, .to = the->nodes[to].mbox, .m = m,
                           .bytes = MSG_BYTES});
}

/* A message to node `to`'s thief (never the sender's own: a thief never robs itself). */
static void post_thief(uint32_t to, struct msg *m, long bytes)
{
    effect((struct fx){.type = FX_SEND, .to = the->nodes[to].tmbox, .m = m, .bytes = bytes});
}

/* A message's send: it arrives a latency and its bytes at the link's rate later (the
 * message links are not shared), which the outbox notes with a margin. */
static void send_msg(struct outbox *o, sg_mailbox_t to, struct msg *m, long bytes)
{
    the->res->messages++;
    the->res->events++;
    sg_comm_t c = sg->put_async(to, m, bytes);
    if (o->n == o->cap && o->head) {
        memmove(o->v, o->v + o->head, (o->n - o->head) * sizeof *o->v);
        memmove(o->due, o->due + o->head, (o->n - o->head) * sizeof *o->due);
        o->n -= o->head;
        o->head = 0;
    }
    size_t cap = o->cap;
    o->v = xgrow(o->v, &o->cap, o->n + 1, sizeof *o->v);
    o->due = xgrow(o->due, &cap, o->n + 1, sizeof *o->due);
    o->due[o->n] = now() + the->cfg->latency_s + (double)bytes / the->msg_Bps + 1e-6;
    o->v[o->n++] = c;
}

/*
 * Waits for the oldest sends that have surely arrived, which returns at once.  Waiting
 * is what takes a send off the actor's SimGrid list, which every reception of that
 * actor walks; a test that finds it done leaves it there (SimGrid 3.32), so that a
 * node actor reaping by tests walked every message it ever sent.
 */
static void outbox_reap(struct outbox *o)
{
    while (o->head < o->n && o->due[o->head] <= now())
        sg->comm_wait(o->v[o->head++]);
    if (o->head == o->n)
        o->head = o->n = 0;
}

static void outbox_wait_all(struct outbox *o)
{
    if (o->n > o->head)
        sg->comm_wait_all(o->v + o->head, o->n - o->head);
    o->head = o->n = 0;
}

/* Forgets sends known to be complete (their answers came back) without waiting for
 * them: SimGrid then keeps them on the actor's list until the actor ends. */
static void outbox_drop(struct outbox *o)
{
    for (size_t i = o->head; i < o->n; i++)
        sg->comm_unref(o->v[i]);
    o->head = o->n = 0;
}

static void outbox_fini(struct outbox *o)
{
    outbox_wait_all(o);
    free(o->v);
    free(o->due);
}

static void handle(uint32_t id, struct msg *m);
static void on_staged(uint32_t id, uint32_t task);
static void runner_main(int argc, char **argv);
static void xfer_main(int argc, char **argv);
static void xfer_source_main(int argc, char **argv);
static void monitor_main(int argc, char **argv);

/* An actor on `host` running code(data).  A daemon ends with the run (SimGrid stops
 * when none but daemons are left); the others (tasks, transfers, monitors) end on their
 * own, shortly after the last task's end.  Daemonized once started: SimGrid 3.32 kills
 * its daemons at the end through their context, which a daemon that never ran lacks. */
static void spawn_on(sg_host_t host, void (*code)(int, char **), void *data, bool daemon)
{
    sg_actor_t a = sg->actor_init("jackdaw", host);
    sg->actor_set_data(a, data);
    sg->actor_start(a, code, 0, NULL);
    if (daemon)
        sg->daemonize(a);
}

static void spawn(uint32_t node, void (*code)(int, char **), void *data, bool daemon)
{
    spawn_on(the->nodes[node].host, code, data, daemon);
}

/*
 * Carries out the effects of the handler that just ran, and of the local messages
 * among them, as the actor that ran it (its sends are `out`'s).  Takes them all off
 * the shared list before the first call into SimGrid, where other actors run.
 */
static void run_effects(struct outbox *out)
{
    struct fx *batch = the->fx;
    size_t n = the->nfx, cap = the->fx_cap;
    the->fx = NULL;
    the->nfx = the->fx_cap = 0;
    for (size_t i = 0; i < n; i++) {
        struct fx f = batch[i];
        switch ((enum fx_type)f.type) {
        case FX_LOCAL:
        case FX_STAGED:
            if (f.type == FX_LOCAL)
                handle(f.node, f.m);
            else
                on_staged(f.node, f.task);
            /* Its own effects join the batch before anything else can run. */
            if (the->nfx) {
                batch = xgrow(batch, &cap, n + the->nfx, sizeof *batch);
                memcpy(batch + n, the->fx, the->nfx * sizeof *batch);
                n += the->nfx;
                the->nfx = 0;
            }
            break;
        case FX_SEND:
            send_msg(out, f.to, f.m, f.bytes);
            break;
        case FX_RUN:
            spawn(f.node, runner_main, (void *)(uintptr_t)f.task, false);
            break;
        case FX_FETCH:
            /* A pair of actors a transfer: its source puts the bytes, its reader takes
             * them, as sg_host_sendto would do but for its detached communication (on
             * the list that every completion walks). */
            for (uint32_t k = 0; k < f.fetch->count; k++) {
                struct xfer *x = &f.fetch->x[k];
                spawn_on(the->nodes[x->src].data, xfer_source_main, x, false);
                spawn_on(the->nodes[f.fetch->node].data, xfer_main, x, false);
            }
            break;
        case FX_MONITOR:
            spawn(f.node, monitor_main, (void *)(uintptr_t)f.node, false);
            break;
        case FX_THIEF:
            sg->sem_release(the->nodes[f.node].thief_sem);
            break;
        case FX_DONE:
            sg->sem_release(the->done);
            break;
        }
    }
    /* The shared list is empty again (every actor empties it before it calls
     * SimGrid); the batch's buffer serves the next handler. */
    if (!the->fx) {
        the->fx = batch;
        the->fx_cap = cap;
    } else {
        free(batch);
    }
}

/* ---- placement and dispatch (sim.c's) ------------------------------------------------- */

static uint32_t runner_of(const void *tasks, uint32_t task)
{
    return ((const struct task_state *)tasks)[task].runner;
}

static uint32_t object_node(uint32_t o)
{
    return sim__object_node(the->wl, the->cfg->nodes, runner_of, the->tasks, o);
}

static uint32_t inputs_of(uint32_t task, struct placement_object *out, uint32_t max,
                          uint64_t *sum)
{
    return sim__task_inputs(the->wl, the->cfg->nodes, runner_of, the->tasks, task, out, max,
                            sum);
}

static double est_length(const struct node *n, uint32_t task)
{
    return n->ended ? n->ran_s / (double)n->ended : the->wl->tasks[task].duration_s / n->speed;
}

/* What a victim would give away now: its shared queue beyond what its free slots take. */
static uint32_t stealable(const struct node *n)
{
    uint32_t q = (uint32_t)n->sready.n;
    return q - steal_keep(n->free_slots, (uint32_t)n->lready.n, q);
}

static bool steals(void)
{
    return the->cfg->steal.mode != STEAL_NONE && the->cfg->nodes > 1;
}

static bool starving(const struct node *n)
{
    struct steal_self self = {.lready = (uint32_t)n->lready.n, .sready = (uint32_t)n->sready.n,
                              .free_slots = n->free_slots};
    return steal_starving(&the->cfg->steal, &self);
}

/* The node may be starving: an idle thief is released (sim.c's maybe_steal). */
static void poke(uint32_t id)
{
    struct node *n = &the->nodes[id];
    if (!steals() || n->state != TH_IDLE || the->left == 0 || !starving(n))
        return;
    n->state = TH_BUSY;
    effect((struct fx){.type = FX_THIEF, .node = id});
}

static void wake_parked(uint32_t from)
{
    for (size_t i = 0; i < the->nparked; i++) {
        uint32_t p = the->parked[i];
        the->nodes[p].parked_listed = false;
        post(from, p, M_WAKE, 0, 0);
    }
    the->nparked = 0;
}

static void dispatch(uint32_t id);

static void on_new_ready(uint32_t id)
{
    dispatch(id);
    if (the->nparked && stealable(&the->nodes[id]) > 0)
        wake_parked(id);
}

#define SG_MAX_INPUTS 4096

static void enqueue(uint32_t id, uint32_t task, bool pushed)
{
    struct node *n = &the->nodes[id];
    uint64_t sum;
    uint32_t k = inputs_of(task, the->objs, SG_MAX_INPUTS, &sum);
    struct placement_input in = {
        .stealable = the->wl->tasks[task].stealable, .pushed = pushed, .all_data_size = sum,
        .self = id, .est_task_length_s = est_length(n, task), .inputs = the->objs,
        .num_inputs = k, .link_share = n->slots,
    };
    struct placement_decision d = placement_decide(&the->cfg->placement, NULL, &in);
    if (d.queue == PLACE_PUSH && d.node < the->cfg->nodes && d.node != id) {
        the->tasks[task].holder = d.node;
        the->res->tasks_pushed++;
        trace(id, TRACE_TASK_PUSHED, task, (int32_t)d.node, 0, 0, 0, 0);
        post(id, d.node, M_PUSHED, task, 0);
        return;
    }
    if (d.queue == PLACE_SREADY) {
        trace(id, TRACE_TASK_QUEUED_SHARED, task, -1, 0, 0, 0, 0);
        sim__q_push(&n->sready, sum, task);
    } else {
        trace(id, TRACE_TASK_QUEUED_LOCAL, task, -1, 0, 0, 0, 0);
        sim__q_push(&n->lready, sum, task);
        if (the->cfg->placement.policy == PLACEMENT_FLDS && !n->monitor_on) {
            n->monitor_on = true;
            effect((struct fx){.type = FX_MONITOR, .node = id});
        }
    }
    on_new_ready(id);
}

static bool missing_here(uint32_t node, uint32_t src, uint64_t key, uint64_t bytes)
{
    return bytes && src != node && !u64map_get(&the->nodes[node].cache, key);
}

static bool needs_fetch(uint32_t task, uint32_t node)
{
    const struct workload_task *t = &the->wl->tasks[task];
    for (uint32_t i = 0; i < t->num_parents; i++) {
        uint32_t p = t->parents[i];
        if (missing_here(node, the->tasks[p].runner, task_key(the->cfg->job, p),
                         the->wl->tasks[p].output_bytes))
            return true;
    }
    for (uint32_t i = 0; i < t->num_inputs; i++) {
        uint32_t o = t->inputs[i];
        if (missing_here(node, object_node(o), task_object_key(the->cfg->job, o),
                         the->wl->objects[o].bytes))
            return true;
    }
    return false;
}

/* One input's transfer to `node`, unless it is there or cached (marked cached at the
 * request, as sim.c's fetch_one does). */
static void fetch_add(struct fetch *f, uint32_t src, uint64_t key, uint64_t bytes)
{
    struct node *n = &the->nodes[f->node];
    if (src == UINT32_MAX || !missing_here(f->node, src, key, bytes))
        return;
    u64map_put(&n->cache, key, (void *)1);
    f->x[f->count++] = (struct xfer){.f = f, .src = src, .bytes = bytes};
    n->fetches++;
    n->fetch_bytes += (int64_t)bytes;
    the->res->bytes_moved += bytes;
}

/* The task's inputs start towards `id`, each a transfer of its own, so that the flow
 * model shares the links they cross. */
static void fetch_begin(uint32_t id, uint32_t task)
{
    const struct workload_task *t = &the->wl->tasks[task];
    struct fetch *f = xcalloc(1, sizeof *f);
    f->x = xcalloc((size_t)t->num_parents + t->num_inputs + 1, sizeof *f->x);
    f->task = task;
    f->node = id;
    f->t0 = now();
    for (uint32_t i = 0; i < t->num_parents; i++) {
        uint32_t p = t->parents[i];
        fetch_add(f, the->tasks[p].runner, task_key(the->cfg->job, p),
                  the->wl->tasks[p].output_bytes);
    }
    for (uint32_t i = 0; i < t->num_inputs; i++) {
        uint32_t o = t->inputs[i];
        fetch_add(f, object_node(o), task_object_key(the->cfg->job, o),
                  the->wl->objects[o].bytes);
    }
    if (f->count == 0) {
        /* What it lacks has no place yet (a declared output not written): staged now. */
        free(f->x);
        free(f);
        effect((struct fx){.type = FX_STAGED, .node = id, .task = task});
        return;
    }
    f->left = f->count;
    effect((struct fx){.type = FX_FETCH, .fetch = f});
}

static void start(uint32_t id, uint32_t task)
{
    struct node *n = &the->nodes[id];
    uint32_t cores = cores_of(&the->wl->tasks[task]);
    n->free_slots -= cores;
    n->busy += cores;
    the->tasks[task].t_start = now();
    the->tasks[task].at = id;
    if (n->first_start < 0)
        n->first_start = now();
    n->started++;
    trace(id, TRACE_TASK_START, task, -1, 0, 0, 0, 0);
    effect((struct fx){.type = FX_RUN, .node = id, .task = task});
}

/* Starts what fits, oldest first, staging the inputs of what needs data (sim.c's
 * dispatch, the daemons' dispatcher). */
static void dispatch(uint32_t id)
{
    struct node *n = &the->nodes[id];
    for (;;) {
        if (n->nstaged &&
            cores_of(&the->wl->tasks[n->staged[n->staged_head]]) <= n->free_slots) {
            uint32_t task = n->staged[n->staged_head++];
            if (!--n->nstaged)
                n->staged_head = 0;
            start(id, task);
            continue;
        }
        struct queue *q = n->lready.n ? &n->lready : &n->sready;
        if (!q->n)
            return;
        uint32_t head = q->v[0].task;
        if (!(the->cfg->bandwidth_Bps > 0) || !needs_fetch(head, id)) {
            if (cores_of(&the->wl->tasks[head]) > n->free_slots)
                return;
            start(id, sim__q_pop(q).task);
            continue;
        }
        if (n->staging + n->nstaged >= n->slots)
            return;
        sim__q_pop(q);
        n->staging++;
        fetch_begin(id, head);
    }
}

static void on_staged(uint32_t id, uint32_t task)
{
    struct node *n = &the->nodes[id];
    n->staging--;
    if (n->staged_head + n->nstaged == n->staged_cap && n->staged_head) {
        memmove(n->staged, n->staged + n->staged_head, n->nstaged * sizeof *n->staged);
        n->staged_head = 0;
    }
    n->staged = xgrow(n->staged, &n->staged_cap, n->staged_head + n->nstaged + 1,
                      sizeof *n->staged);
    n->staged[n->staged_head + n->nstaged++] = task;
    dispatch(id);
    poke(id);
}

static void task_end(uint32_t id, uint32_t task)
{
    struct node *n = &the->nodes[id];
    const struct workload_task *t = &the->wl->tasks[task];
    uint32_t cores = cores_of(t);
    double ran = now() - the->tasks[task].t_start;
    n->free_slots += cores;
    n->busy -= cores;
    n->ended++;
    n->busy_ns_done += llround(ran * 1e9) * cores;
    n->ran_s += ran;
    the->res->busy_s += ran * cores;
    the->res->tasks_done++;
    the->tasks[task].runner = id;
    trace(id, TRACE_TASK_END, task, -1, TASK_DONE, 0, 0, 0);
    if (--the->left == 0) {
        the->res->makespan_s = now();
        effect((struct fx){.type = FX_DONE});
    }
    for (uint32_t i = 0; i < t->num_children; i++) {
        uint32_t c = t->children[i];
        post(id, task_key_owner(task_key(the->cfg->job, c), the->cfg->nodes), M_PARENT_DONE,
             c, 0);
    }
    dispatch(id);
    poke(id);
}

/* ---- the node actor --------------------------------------------------------------- */

static void on_steal_req(uint32_t id, uint32_t thief)
{
    struct node *n = &the->nodes[id];
    uint32_t k = steal_grant(&the->cfg->steal, stealable(n), 0);
    struct msg *g = msg_new(R_GRANT, id, 0, k);
    g->tasks = xcalloc(k ? k : 1, sizeof *g->tasks);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t task = sim__q_take_tail(&n->sready).task;
        g->tasks[i] = task;
        the->tasks[task].holder = thief;
        trace(id, TRACE_TASK_STOLEN_OUT, task, (int32_t)thief, 0, 0, 0, 0);
    }
    n->stolen_out += k;
    post_thief(thief, g, MSG_BYTES + 8 * (long)k);
}

static void handle(uint32_t id, struct msg *m)
{
    struct node *n = &the->nodes[id];
    switch ((enum msg_type)m->type) {
    case M_READY:
        trace(id, TRACE_TASK_READY, m->a, -1, 0, 0, 0, 0);
        enqueue(id, m->a, false);
        break;
    case M_PUSHED:
        enqueue(id, m->a, true);
        break;
    case M_PARENT_DONE: {
        struct task_state *ts = &the->tasks[m->a];
        if (ts->waiting && --ts->waiting == 0)
            post(id, ts->holder, M_READY, m->a, 0);
        break;
    }
    case M_QUERY:
        /* The answer: what it could give away as the query reaches it. */
        post_thief(m->from, msg_new(R_LOAD, id, m->b, stealable(n)), MSG_BYTES);
        break;
    case M_STEAL_REQ:
        on_steal_req(id, m->from);
        break;
    case M_WAKE:
        if (n->state == TH_PARKED) {
            steal_on_wake(&the->cfg->steal, &n->st);
            n->state = TH_IDLE;
            poke(id);
        }
        break;
    case R_LOAD:
    case R_GRANT:
        break; /* a thief's, never sent here */
    }
    free(m);
}

/* Makes this actor the receiver of the mailbox: a message then crosses the network as
 * soon as it is sent, rather than when the actor asks for it, which would deliver the
 * queries that reach a victim together one latency after another. */
static void receive_eagerly(char prefix, uint32_t id)
{
    char name[32];
    snprintf(name, sizeof name, "%c%u", prefix, id);
    sg->set_receiver(name);
}

static void node_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint32_t id = (uint32_t)(uintptr_t)sg->self_data();
    receive_eagerly('n', id);
    struct outbox out = {0};
    for (;;) {
        outbox_reap(&out);
        struct msg *m = sg->get(the->nodes[id].mbox);
        handle(id, m);
        run_effects(&out);
    }
}

/* ---- the thief ---------------------------------------------------------------------- */

/* A failed attempt: the back-off of steal.h (and FLDS's hooks, as sim.c calls them),
 * then a sleep, or parking until a wake-up and a poke.  Returns with the thief busy. */
static void backoff(uint32_t id, struct outbox *out)
{
    struct node *n = &the->nodes[id];
    steal_on_result(&the->cfg->steal, &n->st, false, the->cfg->nodes);
    placement_flds_on_steal_failed(&the->cfg->placement, &n->flds);
    if (n->st.parked && placement_flds_poll_should_reset(&the->cfg->placement, NULL, &n->flds))
        steal_on_wake(&the->cfg->steal, &n->st);
    if (n->st.parked) {
        n->state = TH_PARKED;
        if (!n->parked_listed) {
            the->parked = xgrow(the->parked, &the->parked_cap, the->nparked + 1,
                                sizeof *the->parked);
            the->parked[the->nparked++] = id;
            n->parked_listed = true;
        }
        run_effects(out);
        sg->sem_acquire(n->thief_sem);
        return;
    }
    n->state = TH_WAIT;
    run_effects(out);
    double wait = n->st.interval_ms / 1e3;
    the->res->events++;
    sg->sleep_for(wait > 1e-9 ? wait : 1e-9);
    n->state = TH_BUSY;
}

/* Tasks a victim granted join the thief's SReadyQ (node_take_granted's queue). */
static bool take_grant(uint32_t id, uint32_t victim, const struct msg *g)
{
    struct node *n = &the->nodes[id];
    for (uint32_t i = 0; i < g->b; i++) {
        trace(id, TRACE_TASK_STOLEN_IN, g->tasks[i], (int32_t)victim, 0, 0, 0, 0);
        uint64_t sum;
        inputs_of(g->tasks[i], the->objs, 0, &sum);
        sim__q_push(&n->sready, sum, g->tasks[i]);
    }
    if (!g->b)
        return false;
    on_new_ready(id);
    n->stolen_in += g->b;
    the->res->steals_ok++;
    the->res->tasks_stolen += g->b;
    trace(id, TRACE_STEAL_GRANT, UINT32_MAX, (int32_t)victim, 0, g->b, 0, 0);
    steal_on_result(&the->cfg->steal, &n->st, true, the->cfg->nodes);
    return true;
}

/* A node's thief: its actor, and the victims of its attempt. */
struct thief {
    uint32_t id;
    uint32_t k;                /* victims drawn */
    uint32_t *victims, *loads; /* owned, victims_max + 1 each */
};

/*
 * An attempt's queries, sent by an actor of their own that ends once the thief has
 * every answer (so every query arrived).  SimGrid keeps an actor's sends on a list
 * that it walks at each of that actor's receptions until they are waited for, and
 * waiting for them walks it too: k queries and k answers on the thief's list cost k^2
 * a round, most of the run at a few hundred victims.  An ending actor drops its list
 * at once.
 */
static void queries_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct thief *th = sg->self_data();
    struct node *n = &the->nodes[th->id];
    struct outbox out = {0};
    for (uint32_t i = 0; i < th->k; i++)
        send_msg(&out, the->nodes[th->victims[i]].mbox, msg_new(M_QUERY, th->id, 0, i),
                 MSG_BYTES);
    sg->sem_acquire(n->query_sem);
    outbox_drop(&out);
    free(out.v);
    free(out.due);
}

/* One attempt: the queries, the answers, the request, the grant, and on failure the
 * back-off. */
static void attempt(struct thief *th, struct outbox *out)
{
    uint32_t id = th->id, *victims = th->victims, *loads = th->loads;
    struct node *n = &the->nodes[id];
    const struct steal_params *p = &the->cfg->steal;
    the->res->steal_attempts++;
    uint32_t want = p->mode == STEAL_RANDOM1 ? 1
                    : p->victims == STEAL_VICTIMS_RANDOM ? p->victims_k : n->st.neighbours;
    want = want < the->victims_max ? want : the->victims_max;
    want = want ? want : 1;
    uint32_t k = steal_pick_victims(p, &n->st, id, the->cfg->nodes, &the->rng, victims, want);
    if (k == 0) {
        n->steal_fails++;
        trace(id, TRACE_STEAL_FAIL, UINT32_MAX, -1, STEAL_FAIL_NO_VICTIM, 0, 0, 0);
        backoff(id, out);
        return;
    }
    th->k = k;
    spawn(id, queries_main, th, true);
    for (uint32_t i = 0; i < k; i++) {
        struct msg *r = sg->get(n->tmbox);
        loads[r->a] = r->b;
        free(r);
    }
    sg->sem_release(n->query_sem);
    int best = steal_choose_victim(loads, k);
    if (best < 0) {
        n->steal_fails++;
        trace(id, TRACE_STEAL_FAIL, UINT32_MAX, -1, STEAL_FAIL_EMPTY, 0, 0, 0);
        backoff(id, out);
        return;
    }
    uint32_t v = victims[best];
    n->steal_requests++;
    trace(id, TRACE_STEAL_REQUEST, UINT32_MAX, (int32_t)v, 0, loads[best], 0, 0);
    post(id, v, M_STEAL_REQ, 0, 0);
    run_effects(out);
    struct msg *g = sg->get(n->tmbox);
    outbox_wait_all(out); /* the request, and what the thief sent before */
    bool got = take_grant(id, v, g);
    free(g->tasks);
    free(g);
    if (got) {
        run_effects(out);
        return;
    }
    n->steal_fails++;
    trace(id, TRACE_STEAL_FAIL, UINT32_MAX, (int32_t)v, STEAL_FAIL_EMPTY, 0, 0, 0);
    backoff(id, out);
}

static void thief_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct thief *th = sg->self_data();
    receive_eagerly('t', th->id);
    struct node *n = &the->nodes[th->id];
    struct outbox out = {0};
    /* Busy: it decides now, at time 0, after the submission (sim.c's first timer). */
    for (;;) {
        outbox_reap(&out);
        if (the->left == 0 || !starving(n)) {
            n->state = TH_IDLE;
            sg->sem_acquire(n->thief_sem); /* a poke made it busy */
            continue;
        }
        attempt(th, &out);
    }
}

/* ---- tasks, transfers, the FLDS monitor, samples ------------------------------------ */

static void runner_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint32_t task = (uint32_t)(uintptr_t)sg->self_data();
    uint32_t id = the->tasks[task].at;
    the->res->events++;
    /* The host's speed is the node's: duration / speed seconds. */
    sg->execute(the->wl->tasks[task].duration_s * REF_FLOPS);
    struct outbox out = {0};
    task_end(id, task);
    run_effects(&out);
    outbox_fini(&out);
}

static void xfer_source_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct xfer *x = sg->self_data();
    the->res->events++;
    sg->put(the->nodes[x->f->node].xmbox, x, (long)x->bytes);
}

/* A reader takes the first transfer to reach its node, which may be another reader's
 * of the same node: it ends that one. */
static void xfer_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct xfer *mine = sg->self_data();
    struct xfer *x = sg->get(the->nodes[mine->f->node].xmbox);
    struct fetch *f = x->f;
    /* As the daemons' data plane records a fetch: at its end, with its length. */
    trace(f->node, TRACE_DATA_FETCH, UINT32_MAX, (int32_t)x->src, 0, 0, (int64_t)x->bytes,
          llround((now() - f->t0) * 1e9));
    struct outbox out = {0};
    if (--f->left == 0) {
        on_staged(f->node, f->task);
        free(f->x);
        free(f);
    }
    run_effects(&out);
    outbox_fini(&out);
}

/* sim.c's flds_monitor: an LReadyQ longer than tt at the node's pace spills its least
 * urgent stealable tasks into SReadyQ. */
static void flds_monitor(uint32_t id)
{
    struct node *n = &the->nodes[id];
    const struct placement_params *p = &the->cfg->placement;
    if (n->first_start >= 0) {
        placement_flds_pace(p, &n->flds, n->ended ? n->ran_s / (double)n->ended : 0);
        double elapsed = now() - n->first_start;
        double tps = elapsed > 0 ? (double)n->ended / elapsed : 0;
        uint64_t move = placement_flds_monitor(p, NULL, &n->flds, n->lready.n, tps, now());
        struct qent held[64];
        size_t nheld = 0;
        uint64_t moved = 0;
        while (moved < move && n->lready.n) {
            struct qent e = sim__q_take_tail(&n->lready);
            if (!the->wl->tasks[e.task].stealable && nheld < 64) {
                held[nheld++] = e;
                continue;
            }
            if (!the->wl->tasks[e.task].stealable) {
                sim__q_push(&n->lready, e.prio, e.task);
                break;
            }
            sim__q_push(&n->sready, e.prio, e.task);
            trace(id, TRACE_TASK_QUEUED_SHARED, e.task, -1, 0, 0, 0, 0);
            moved++;
        }
        for (size_t i = 0; i < nheld; i++)
            sim__q_push(&n->lready, held[i].prio, held[i].task);
        if (moved && the->nparked && stealable(n) > 0)
            wake_parked(id);
    }
    n->monitor_on = the->left && n->lready.n;
}

static void monitor_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint32_t id = (uint32_t)(uintptr_t)sg->self_data();
    struct outbox out = {0};
    bool again;
    do {
        the->res->events++;
        sg->sleep_for(FLDS_MONITOR_MIN_S);
        flds_monitor(id);
        /* Read before the effects: a task queued meanwhile starts a monitor of its own. */
        again = the->nodes[id].monitor_on;
        run_effects(&out);
    } while (again);
    outbox_fini(&out);
}

static void sampler_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    for (;;) {
        for (uint32_t i = 0; i < the->cfg->nodes; i++)
            sample(i);
        the->res->events++;
        sg->sleep_for(the->cfg->sample_s);
    }
}

static uint32_t holder_at_submit(const struct sim_config *cfg, uint32_t task)
{
    switch (cfg->submit) {
    case SIM_SUBMIT_ONE:
        return 0;
    case SIM_SUBMIT_ROUND_ROBIN:
        return task % cfg->nodes;
    case SIM_SUBMIT_HASHED:
    default:
        return task_key_owner(task_key(cfg->job, task), cfg->nodes);
    }
}

/* Every task at its holder at time 0, parents first; the roots ready there.  Then it
 * waits for the last task's end, when the simulation stops. */
static void main_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct workload *wl = the->wl;
    struct outbox out = {0};
    for (uint32_t k = 0; k < wl->count; k++) {
        uint32_t i = wl->topo[k];
        trace(the->tasks[i].holder, TRACE_TASK_SUBMIT, i, -1, 0, 0, 0, 0);
        if (!the->tasks[i].waiting)
            post(the->tasks[i].holder, the->tasks[i].holder, M_READY, i, 0);
    }
    run_effects(&out);
    if (the->left)
        sg->sem_acquire(the->done);
    /* Its sends stay: the daemons that receive them outlive it and end with the run. */
}

/* ---- the platform ------------------------------------------------------------------ */

/*
 * Per node, a host (its speed, its slots as cores) where its actors run and its
 * messages end, and a data endpoint where its inputs' transfers end, each with its link
 * to a crossbar (a Cluster zone with no backbone): a route crosses the sender's link and
 * the receiver's, half the latency each.  The data links are full-duplex links whose
 * bandwidth the transfers crossing them share (SPLITDUPLEX), what the flow model is
 * for.  The message links carry each message at their bandwidth without sharing
 * (FATPIPE): a protocol message is 64 bytes, and sharing links between thousands of
 * them in flight only made SimGrid re-solve every flow at every message's end (20 times
 * slower at 100 nodes).  Written as SimGrid's XML into a memory file and loaded from
 * there.  NULL, or why not.
 */
static const char *build_platform(const struct sim_config *cfg)
{
    static char platform_why[256];
    int fd = memfd_create("jackdaw-platform", 0);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w+");
    if (!f) {
        snprintf(platform_why, sizeof platform_why, "cannot make the SimGrid platform: %s",
                 strerror(errno));
        return platform_why;
    }
    double bw = the->msg_Bps;
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
               "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
               "<zone id=\"jackdaw\" routing=\"Cluster\">\n");
    for (uint32_t i = 0; i < cfg->nodes; i++) {
        double speed = cfg->speeds ? cfg->speeds[i] : 1.0;
        uint32_t slots = cfg->node_slots ? cfg->node_slots[i] : cfg->slots;
        fprintf(f, "<host id=\"n%u\" speed=\"%.17gf\" core=\"%u\"/>"
                   "<link id=\"m%u\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
                   "sharing_policy=\"FATPIPE\"/>"
                   "<host_link id=\"n%u\" up=\"m%u\" down=\"m%u\"/>\n"
                   "<host id=\"d%u\" speed=\"1f\"/>"
                   "<link id=\"l%u\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
                   "sharing_policy=\"SPLITDUPLEX\"/>"
                   "<host_link id=\"d%u\" up=\"l%u_UP\" down=\"l%u_DOWN\"/>\n",
                i, speed * REF_FLOPS, slots, i, bw, cfg->latency_s / 2, i, i, i, i, i, bw,
                cfg->latency_s / 2, i, i, i);
    }
    fprintf(f, "</zone>\n</platform>\n");
    if (fflush(f) != 0) {
        snprintf(platform_why, sizeof platform_why, "cannot write the SimGrid platform: %s",
                 strerror(errno));
        fclose(f);
        return platform_why;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    sg->load_platform(path);
    fclose(f);
    return NULL;
}

static void start_simgrid(uint32_t actors)
{
    char stack[64];
    snprintf(stack, sizeof stack, "--cfg=contexts/stack-size:%d", STACK_KIB);
    /* --log first: the rest would report themselves. */
    char *argv[] = {
        "jackdaw-sim",
        "--log=root.thres:critical",
        /* --latency and --bandwidth mean what they mean to the discrete-event core: no
         * TCP correction factors on top, and no ACK flows (crosstraffic), which would
         * double the flows of a protocol of small messages. */
        "--cfg=network/latency-factor:1",
        "--cfg=network/bandwidth-factor:1",
        "--cfg=network/crosstraffic:0",
        /* No TCP window bound either: a flow's rate is its links' share alone. */
        "--cfg=network/TCP-gamma:1e18",
        stack,
        actors > GUARDED_ACTORS_MAX ? "--cfg=contexts/guard-size:0" : NULL,
        NULL,
    };
    int argc = argv[7] ? 8 : 7;
    sg->init(&argc, argv);
}

/* ---- one simulation ------------------------------------------------------------------ */

int sim_sg__simulate(const struct sim_sg_lib *lib, const struct workload *wl,
                     const struct sim_config *cfg, FILE *wire, struct sim_result *out,
                     const char **why)
{
    memset(out, 0, sizeof *out);
    sg = lib;
    struct sgsim s = {.wl = wl, .cfg = cfg, .res = out, .wire = cfg->sinks ? wire : NULL,
                      .left = wl->count, .rng = cfg->seed ? cfg->seed : 1,
                      .msg_Bps = cfg->bandwidth_Bps > 0 ? cfg->bandwidth_Bps : UNLIMITED_BPS};
    the = &s;
    s.nodes = xcalloc(cfg->nodes, sizeof *s.nodes);
    s.tasks = xcalloc(wl->count ? wl->count : 1, sizeof *s.tasks);
    s.victims_max = cfg->nodes - 1 < 1024 ? cfg->nodes - 1 : 1024;
    s.objs = xcalloc(SG_MAX_INPUTS, sizeof *s.objs);
    uint64_t total_slots = 0;
    for (uint32_t i = 0; i < cfg->nodes; i++)
        total_slots += cfg->node_slots ? cfg->node_slots[i] : cfg->slots;
    /* At most: node actors and thieves, a task and a transfer a slot, a monitor. */
    uint64_t actors = 3 * (uint64_t)cfg->nodes + 2 * total_slots + 2;
    start_simgrid(actors > UINT32_MAX ? UINT32_MAX : (uint32_t)actors);
    if ((*why = build_platform(cfg)) != NULL)
        return -EIO;
    s.done = sg->sem_init(0);
    for (uint32_t i = 0; i < cfg->nodes; i++) {
        struct node *n = &s.nodes[i];
        char name[32];
        snprintf(name, sizeof name, "n%u", i);
        n->host = sg->host_by_name(name);
        n->mbox = sg->mailbox_by_name(name);
        snprintf(name, sizeof name, "d%u", i);
        n->data = sg->host_by_name(name);
        snprintf(name, sizeof name, "x%u", i);
        n->xmbox = sg->mailbox_by_name(name);
        snprintf(name, sizeof name, "t%u", i);
        n->tmbox = sg->mailbox_by_name(name);
        n->speed = cfg->speeds ? cfg->speeds[i] : 1.0;
        n->slots = n->free_slots = cfg->node_slots ? cfg->node_slots[i] : cfg->slots;
        n->first_start = -1;
        n->state = TH_BUSY;
        steal_state_init(&n->st, &cfg->steal, cfg->nodes);
        placement_flds_init(&n->flds, &cfg->placement);
        u64map_init(&n->cache);
        trace(i, TRACE_NODE_UP, UINT32_MAX, -1, 0, n->slots, 0, 0);
        if (traced(i))
            sim_sg__wire_policy(s.wire, i, placement_policy_name(cfg->placement.policy), -1,
                                cfg->start_wall_ns);
    }
    for (uint32_t i = 0; i < wl->count; i++) {
        out->work_s += wl->tasks[i].duration_s * cores_of(&wl->tasks[i]);
        s.tasks[i].waiting = wl->tasks[i].num_parents;
        s.tasks[i].holder = holder_at_submit(cfg, i);
        s.tasks[i].runner = UINT32_MAX;
    }
    /* The main actor first: actors start in the order they were made, so every thief
     * looks at queues the submission filled, as sim.c's first timers do. */
    sg_actor_t main_actor = sg->actor_init("main", s.nodes[0].host);
    sg->actor_start(main_actor, main_main, 0, NULL);
    for (uint32_t i = 0; i < cfg->nodes; i++)
        spawn(i, node_main, (void *)(uintptr_t)i, true);
    if (steals()) {
        for (uint32_t i = 0; i < cfg->nodes; i++) {
            struct thief *th = xcalloc(1, sizeof *th);
            th->id = i;
            th->victims = xcalloc(s.victims_max + 1, sizeof *th->victims);
            th->loads = xcalloc(s.victims_max + 1, sizeof *th->loads);
            s.nodes[i].thief_sem = sg->sem_init(0);
            s.nodes[i].query_sem = sg->sem_init(0);
            spawn(i, thief_main, th, true);
        }
    }
    if (s.wire && cfg->sample_s > 0 && wl->count)
        spawn(0, sampler_main, NULL, true);
    sg->run();
    for (uint32_t i = 0; i < cfg->nodes; i++) {
        sample(i);
        trace(i, TRACE_NODE_DOWN, UINT32_MAX, -1, 0, 0, 0, 0);
    }
    /* The process ends here: SimGrid's state and ours go with it. */
    if (s.left) {
        *why = "the SimGrid simulation ran out of activity with tasks left (an engine or "
               "policy bug)";
        return -EDEADLK;
    }
    return 0;
}

#endif /* JACKDAW_SIMGRID */
