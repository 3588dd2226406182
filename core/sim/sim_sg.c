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
 * The run's state is reached through one pointer (sim_sg_core.h): SimGrid's actors
 * start from a bare function, and the child process runs one simulation.
 *
 * The model is three files behind sim_sg_core.h: this one, sim_sg_task.c (placement,
 * dispatch, transfers, a task's life) and sim_sg_thief.c (the thief and the victim).
 * This one owns the engine's names and refusals (sim_engine_parse, sim_sg_check:
 * sim_sg.h, called by tools/cmd/sim_settings.c and sim_summary.c), the run's state and
 * trace, the effects and outboxes that every actor uses (sim_sg_core.h), the node
 * actor, which hands each message to its file, the main actor, the platform and the
 * simulation (sim_sg__simulate: sim_sg_proc.h, called by sim_sg_proc.c's child only).
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
    if (cfg->host_Bps > 0) {
        *why = "a host rate (one host's cores copying every transfer) runs on --engine des only";
        return -ENOTSUP;
    }
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
#include "core/sim/sim_sg_core.h"

/* ---- the run's state ---------------------------------------------------------------- */

#define UNLIMITED_BPS 1e12  /* no --bandwidth: links where a message costs its latency */
#define STACK_KIB 32        /* an actor's stack; our handlers are shallow */
/* Guard pages catch a stack overflow, at two memory mappings an actor; past this many
 * actors they would exceed vm.max_map_count (65530 by default), and go. */
#define GUARDED_ACTORS_MAX 20000

const struct sim_sg_lib *sim_sg__lib;
struct sgsim *sim_sg__the;

double sim_sg__now(void)
{
    return sg->clock();
}

/* ---- trace, through the pipe --------------------------------------------------------- */

static bool traced(uint32_t node)
{
    return the->wire && the->cfg->sinks[node];
}

static int64_t wall(void)
{
    return the->cfg->start_wall_ns + llround(sim_sg__now() * 1e9);
}

void sim_sg__trace(uint32_t node, enum trace_kind kind, uint32_t task, int32_t peer,
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
        .lreadyq = (int32_t)readyq_len(&n->lready), .sreadyq = (int32_t)readyq_len(&n->sready),
        .started = n->started, .ended = n->ended,
        .stolen_in = n->stolen_in, .stolen_out = n->stolen_out,
        .steal_requests = n->steal_requests, .steal_fails = n->steal_fails,
        .fetches = n->fetches, .fetch_bytes = n->fetch_bytes, .busy_ns = n->busy_ns_done,
    };
    sim_sg__wire_sample(the->wire, id, &x, wall());
}

/* ---- effects ------------------------------------------------------------------------ */

void sim_sg__effect(struct fx f)
{
    the->fx = xgrow(the->fx, &the->fx_cap, the->nfx + 1, sizeof *the->fx);
    the->fx[the->nfx++] = f;
}

struct msg *sim_sg__msg_new(uint8_t type, uint32_t from, uint32_t a, uint32_t b)
{
    struct msg *m = xcalloc(1, sizeof *m);
    *m = (struct msg){.type = type, .from = from, .a = a, .b = b};
    return m;
}

/* A message to node `to`'s actor: over the network, or handled in this turn when it
 * stays on the node. */
void sim_sg__post(uint32_t from, uint32_t to, uint8_t type, uint32_t a, uint32_t b)
{
    struct msg *m = sim_sg__msg_new(type, from, a, b);
    if (from == to)
        sim_sg__effect((struct fx){.type = FX_LOCAL, .node = to, .m = m});
    else
        sim_sg__effect((struct fx){.type = FX_SEND, .to = the->nodes[to].mbox, .m = m,
                                   .bytes = MSG_BYTES});
}

/* A message to node `to`'s thief (never the sender's own: a thief never robs itself). */
void sim_sg__post_thief(uint32_t to, struct msg *m, long bytes)
{
    sim_sg__effect(
        (struct fx){.type = FX_SEND, .to = the->nodes[to].tmbox, .m = m, .bytes = bytes});
}

/* A message's send: it arrives a latency and its bytes at the link's rate later (the
 * message links are not shared), which the outbox notes with a margin. */
void sim_sg__send_msg(struct outbox *o, sg_mailbox_t to, struct msg *m, long bytes)
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
    o->due[o->n] = sim_sg__now() + the->cfg->latency_s + (double)bytes / the->msg_Bps + 1e-6;
    o->v[o->n++] = c;
}

/*
 * Waits for the oldest sends that have surely arrived, which returns at once.  Waiting
 * is what takes a send off the actor's SimGrid list, which every reception of that
 * actor walks; a test that finds it done leaves it there (SimGrid 3.32), so that a
 * node actor reaping by tests walked every message it ever sent.
 */
void sim_sg__outbox_reap(struct outbox *o)
{
    while (o->head < o->n && o->due[o->head] <= sim_sg__now())
        sg->comm_wait(o->v[o->head++]);
    if (o->head == o->n)
        o->head = o->n = 0;
}

void sim_sg__outbox_wait_all(struct outbox *o)
{
    if (o->n > o->head)
        sg->comm_wait_all(o->v + o->head, o->n - o->head);
    o->head = o->n = 0;
}

/* Forgets sends known to be complete (their answers came back) without waiting for
 * them: SimGrid then keeps them on the actor's list until the actor ends. */
void sim_sg__outbox_drop(struct outbox *o)
{
    for (size_t i = o->head; i < o->n; i++)
        sg->comm_unref(o->v[i]);
    o->head = o->n = 0;
}

void sim_sg__outbox_fini(struct outbox *o)
{
    sim_sg__outbox_wait_all(o);
    free(o->v);
    free(o->due);
}

static void handle(uint32_t id, struct msg *m);

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

void sim_sg__spawn(uint32_t node, void (*code)(int, char **), void *data, bool daemon)
{
    spawn_on(the->nodes[node].host, code, data, daemon);
}

/*
 * Carries out the effects of the handler that just ran, and of the local messages
 * among them, as the actor that ran it (its sends are `out`'s).  Takes them all off
 * the shared list before the first call into SimGrid, where other actors run.
 */
void sim_sg__run_effects(struct outbox *out)
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
                sim_sg__on_staged(f.node, f.task);
            /* Its own effects join the batch before anything else can run. */
            if (the->nfx) {
                batch = xgrow(batch, &cap, n + the->nfx, sizeof *batch);
                memcpy(batch + n, the->fx, the->nfx * sizeof *batch);
                n += the->nfx;
                the->nfx = 0;
            }
            break;
        case FX_SEND:
            sim_sg__send_msg(out, f.to, f.m, f.bytes);
            break;
        case FX_RUN:
            sim_sg__spawn(f.node, sim_sg__runner_main, (void *)(uintptr_t)f.task, false);
            break;
        case FX_FETCH:
            /* A pair of actors a transfer: its source puts the bytes, its reader takes
             * them, as sg_host_sendto would do but for its detached communication (on
             * the list that every completion walks). */
            for (uint32_t k = 0; k < f.fetch->count; k++) {
                struct xfer *x = &f.fetch->x[k];
                spawn_on(the->nodes[x->src].data, sim_sg__xfer_source_main, x, false);
                spawn_on(the->nodes[f.fetch->node].data, sim_sg__xfer_main, x, false);
            }
            break;
        case FX_MONITOR:
            sim_sg__spawn(f.node, sim_sg__monitor_main, (void *)(uintptr_t)f.node, false);
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

/* ---- the node actor --------------------------------------------------------------- */

static void handle(uint32_t id, struct msg *m)
{
    switch ((enum msg_type)m->type) {
    case M_READY:
        sim_sg__trace(id, TRACE_TASK_READY, m->a, -1, 0, 0, 0, 0);
        sim_sg__enqueue(id, m->a, false);
        break;
    case M_PUSHED:
        sim_sg__enqueue(id, m->a, true);
        break;
    case M_PARENT_DONE: {
        struct task_state *ts = &the->tasks[m->a];
        if (ts->waiting && --ts->waiting == 0)
            sim_sg__post(id, ts->holder, M_READY, m->a, 0);
        break;
    }
    case M_QUERY:
        sim_sg__on_query(id, m->from, m->b);
        break;
    case M_STEAL_REQ:
        sim_sg__on_steal_req(id, m->from);
        break;
    case M_WAKE:
        sim_sg__on_wake(id);
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
void sim_sg__receive_eagerly(char prefix, uint32_t id)
{
    char name[32];
    snprintf(name, sizeof name, "%c%u", prefix, id);
    sg->set_receiver(name);
}

static void node_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint32_t id = (uint32_t)(uintptr_t)sg->self_data();
    sim_sg__receive_eagerly('n', id);
    struct outbox out = {0};
    for (;;) {
        sim_sg__outbox_reap(&out);
        struct msg *m = sg->get(the->nodes[id].mbox);
        handle(id, m);
        sim_sg__run_effects(&out);
    }
}

/* ---- the main actor, samples ------------------------------------------------------- */

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

static uint32_t holder_of(const void *tasks, uint32_t task)
{
    (void)tasks;
    return the->tasks[task].holder;
}

/* Every task at its holder at time 0, parents first; the roots ready there, taken in
 * turn (sim__roots_in_turn).  Then it waits for the last task's end, when the
 * simulation stops. */
static void main_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct workload *wl = the->wl;
    struct outbox out = {0};
    for (uint32_t k = 0; k < wl->count; k++) {
        uint32_t i = wl->topo[k];
        sim_sg__trace(the->tasks[i].holder, TRACE_TASK_SUBMIT, i, -1, 0, 0, 0, 0);
    }
    uint32_t nroots;
    uint32_t *roots = sim__roots_in_turn(wl, the->cfg->nodes, holder_of, NULL, &nroots);
    for (uint32_t k = 0; k < nroots; k++)
        sim_sg__post(the->tasks[roots[k]].holder, the->tasks[roots[k]].holder, M_READY,
                     roots[k], 0);
    free(roots);
    sim_sg__run_effects(&out);
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
        sim_sg__trace(i, TRACE_NODE_UP, UINT32_MAX, -1, 0, n->slots, 0, 0);
        if (traced(i))
            sim_sg__wire_policy(s.wire, i, placement_policy_name(cfg->placement.policy), -1,
                                cfg->start_wall_ns);
    }
    for (uint32_t i = 0; i < wl->count; i++) {
        out->work_s += wl->tasks[i].duration_s * sim__cores_of(&wl->tasks[i]);
        s.tasks[i].waiting = wl->tasks[i].num_parents;
        s.tasks[i].holder = sim__holder_at_submit(cfg, wl, i);
        s.tasks[i].runner = UINT32_MAX;
    }
    /* The main actor first: actors start in the order they were made, so every thief
     * looks at queues the submission filled, as sim.c's first timers do. */
    sg_actor_t main_actor = sg->actor_init("main", s.nodes[0].host);
    sg->actor_start(main_actor, main_main, 0, NULL);
    for (uint32_t i = 0; i < cfg->nodes; i++)
        sim_sg__spawn(i, node_main, (void *)(uintptr_t)i, true);
    if (sim_sg__steals())
        for (uint32_t i = 0; i < cfg->nodes; i++)
            sim_sg__thief_spawn(i);
    if (s.wire && cfg->sample_s > 0 && wl->count)
        sim_sg__spawn(0, sampler_main, NULL, true);
    sg->run();
    for (uint32_t i = 0; i < cfg->nodes; i++) {
        sample(i);
        sim_sg__trace(i, TRACE_NODE_DOWN, UINT32_MAX, -1, 0, 0, 0, 0);
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
