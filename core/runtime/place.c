/*
 * place — where a node puts a task that just became ready (Algorithm 1 of paper 002,
 * decided by core/policy/placement), pushing it to the node that holds its data when the
 * policy says so; receiving such pushes; and the periodic FLDS monitor and auto
 * controller; and, for the thief, FLDS's reading of failed steals (its tt adapts).  A
 * part of the node daemon (part.h); loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/kvs/kvs.h"
#include "core/policy/placement.h"
#include "core/runtime/part.h"

struct place {
    struct node *n;
    struct flds_state flds;
    struct placement_auto autop;
    uint64_t auto_bytes_mark;   /* bytes_in at the start of the auto interval */
    double auto_last_s;         /* when the auto interval started */
    double auto_busy_mark;
    uv_timer_t monitor;         /* FLDS monitor and auto controller */
    uint64_t slow_ms;           /* its period while nothing is queued here */
    bool fast;                  /* at FLDS_MONITOR_MIN_S, paced by the tasks */
};

static void monitor_cb(uv_timer_t *h);

/* The monitor looks every FLDS_MONITOR_MIN_S while tasks are queued here (it may be due
 * that often, placement_flds_pace), at its own period otherwise: 128 idle daemons of one
 * host ticking every 20 ms cost their start a fifth of a second. */
static void monitor_pace(struct place *pl, bool fast)
{
    if (pl->fast == fast || !pl->slow_ms)
        return;
    pl->fast = fast;
    uint64_t ms = fast ? (uint64_t)(FLDS_MONITOR_MIN_S * 1000) : pl->slow_ms;
    uv_timer_start(&pl->monitor, monitor_cb, ms, ms);
}

static void push_task(struct node *n, struct ntask *t, uint32_t to)
{
    size_t at;
    struct wbuf *b = node_msg_begin(n, to, MSG_PUSH, &at);
    wbuf_put_u32(b, 1);
    proto_put_task(b, &t->spec);
    node_msg_end(n, to, at);
    kvs_append(node_kvs(n), t->spec.key, KVS_FIELD_HISTORY, to, 0, 0);
    node_moved(n, t->spec.key, to);
    node_counters(n)->tasks_pushed++;
    node_trace(n, TRACE_TASK_PUSHED, t->spec.key, (int32_t)to, 0, t->t_ready);
    ntask_free(t);
}

/* Algorithm 1 (core/policy/placement): LReadyQ, SReadyQ, or push to the data. */
static bool place_ready(void *state, struct ntask *t)
{
    struct place *pl = state;
    struct node *n = pl->n;
    const struct node_config *cfg = node_cfg(n);
    if (cfg->placement.tt_from_tasks)
        monitor_pace(pl, true);
    struct node_load load = node_load(n);
    node_trace(n, TRACE_TASK_READY, t->spec.key, -1, 0, t->t_ready);
    struct placement_object small[16];
    struct placement_object *objs = small;
    uint32_t k = t->spec.num_inputs;
    if (k > 16)
        objs = xmalloc(k * sizeof *objs);
    for (uint32_t i = 0; i < k; i++)
        objs[i] = (struct placement_object){.node = t->spec.inputs[i].node,
                                            .bytes = t->spec.inputs[i].bytes};
    /* Before any task has finished here, a sleep task's own length is the best guess. */
    double est = load.est_samples ? load.est_task_length_s
                 : t->spec.kind == TASK_SLEEP ? t->spec.duration_s / cfg->speed
                                              : 0;
    struct placement_input in = {
        .stealable = (t->spec.flags & TASK_FLAG_STEALABLE) != 0,
        .all_data_size = t->spec.input_bytes, .self = node_self(n), .est_task_length_s = est,
        .inputs = objs, .num_inputs = k, .link_share = cfg->slots,
    };
    struct placement_decision d = placement_decide(&cfg->placement, &pl->autop, &in);
    if (objs != small)
        free(objs);
    /* Never to a dead holder: the task would be lost with the message. */
    if (d.queue == PLACE_PUSH && d.node < node_count(n) && d.node != node_self(n) &&
        node_alive(n, d.node)) {
        push_task(n, t, d.node);
        return true;
    }
    /* Shared: offered first (an LW worker forwards it to the leader). */
    if (d.queue == PLACE_SREADY) {
        node_share(n, t, t->t_ready);
        return true;
    }
    node_trace(n, TRACE_TASK_QUEUED_LOCAL, t->spec.key, -1, 0, t->t_ready);
    node_queue(n, NODE_LREADY, t, t->spec.input_bytes);
    return true;
}

/* Tasks another node's placement sent here because their data is here: they run here
 * (LReadyQ), and nobody may steal them. */
static int place_on_push(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct place *pl = state;
    struct node *n = pl->n;
    (void)type;
    uint32_t count = rbuf_u32(r);
    if (!rbuf_ok(r) || count > PROTO_MAX_BATCH)
        return -EBADMSG;
    if (count && node_cfg(n)->placement.tt_from_tasks)
        monitor_pace(pl, true); /* pushed tasks land in LReadyQ without place_ready */
    for (uint32_t i = 0; i < count; i++) {
        struct ntask *t = ntask_decode(r);
        if (!t)
            return -EBADMSG;
        t->t_ready = node_wall_ns(n);
        node_trace(n, TRACE_TASK_QUEUED_LOCAL, t->spec.key, (int32_t)from, 0, t->t_ready);
        node_queue(n, NODE_LREADY, t, t->spec.input_bytes);
    }
    return 0;
}

/* FLDS: an LReadyQ that would take longer than tt at this node's pace spills its
 * least data-hungry tasks into SReadyQ, where thieves can take them. */
static void flds_spill(struct place *pl, int64_t now_ns)
{
    struct node *n = pl->n;
    const struct placement_params *p = &node_cfg(n)->placement;
    struct node_load load = node_load(n);
    if (!load.first_start_ns)
        return;
    struct readyq *lready = node_readyq(n, NODE_LREADY);
    placement_flds_pace(p, &pl->flds, load.est_samples ? load.est_task_length_s : 0);
    double elapsed = (double)(now_ns - load.first_start_ns) / 1e9;
    double tps = elapsed > 0 ? (double)load.tasks_run / elapsed : 0;
    uint64_t move = placement_flds_monitor(p, &pl->autop, &pl->flds, readyq_len(lready), tps,
                                           (double)now_ns / 1e9);
    if (!move)
        return;
    /* A task the workload pinned stays pinned, however long the queue: pinned ones met
     * at the tail are held aside and go back once `move` stealable tasks have spilled
     * (or the queue ran out). */
    size_t len = readyq_len(lready);
    void **held = xmalloc((len ? len : 1) * sizeof *held);
    void **batch = xmalloc((len ? len : 1) * sizeof *batch);
    size_t got = 0, pinned = 0, taken;
    int64_t wall = node_wall_ns(n);
    /* Rounds, each O(len): the pinned ones met are held aside, so the next round asks
     * only for what is still missing and never meets them again. */
    while (got < move && (taken = readyq_take_tail(lready, move - got, batch)) > 0) {
        for (size_t i = 0; i < taken; i++) {
            struct ntask *t = batch[i];
            if (!(t->spec.flags & TASK_FLAG_STEALABLE)) {
                held[pinned++] = t;
                continue;
            }
            got++;
            /* Spilled tasks may move: under LW that means to the leader. */
            node_share(n, t, wall);
        }
    }
    free(batch);
    for (size_t i = 0; i < pinned; i++)
        node_queue(n, NODE_LREADY, held[i], ((struct ntask *)held[i])->spec.input_bytes);
    free(held);
    log_debug("flds: moved %zu tasks from LReadyQ to SReadyQ; tt now %.3f s", got,
              pl->flds.tt_s);
}

/* Auto: once per interval, the bytes this node fetched against its busy time decide the
 * policy. */
static void auto_observe(struct place *pl, double now_s)
{
    struct node *n = pl->n;
    const struct placement_params *p = &node_cfg(n)->placement;
    if (!pl->auto_last_s)
        pl->auto_last_s = now_s;
    if (p->policy != PLACEMENT_AUTO || now_s - pl->auto_last_s < p->auto_interval_s)
        return;
    pl->auto_last_s = now_s;
    struct node_counters *c = node_counters(n);
    double busy_s = node_load(n).busy_s;
    struct placement_auto_sample sample = {
        .bytes_moved = c->bytes_in - pl->auto_bytes_mark,
        .busy_s = busy_s - pl->auto_busy_mark,
    };
    struct placement_switch sw;
    if (placement_auto_observe(p, &pl->autop, &sample, now_s, &sw)) {
        c->policy_switches++;
        if (sw.to == PLACEMENT_FLDS)
            placement_flds_init(&pl->flds, p); /* tt starts afresh for the monitor */
        node_trace_policy(n, placement_policy_name(sw.to), (int32_t)sw.reason);
        log_info("placement switched from %s to %s (%s, ratio %.3g)",
                 placement_policy_name(sw.from), placement_policy_name(sw.to),
                 placement_switch_reason_name(sw.reason), sw.ratio);
    }
    pl->auto_bytes_mark = c->bytes_in;
    pl->auto_busy_mark = busy_s;
}

static void monitor_cb(uv_timer_t *h)
{
    struct place *pl = h->data;
    int64_t now_ns = node_mono_ns(pl->n);
    flds_spill(pl, now_ns);
    auto_observe(pl, (double)now_ns / 1e9);
    if (readyq_len(node_readyq(pl->n, NODE_LREADY)) == 0)
        monitor_pace(pl, false);
}

/*
 * A failed steal: FLDS's tt grows (paper 002 §4.4), but only while FLDS decides (auto
 * may be at MLB or MDL now), and only once this node has had work: the failures of a
 * node waiting for its first tasks would otherwise push tt so high that the monitor
 * never runs.  A parked thief starts over when the threshold fell low enough that
 * stealing may pay again.
 */
static bool place_steal_failed(void *state, bool parked)
{
    struct place *pl = state;
    const struct placement_params *p = &node_cfg(pl->n)->placement;
    if (node_load(pl->n).first_start_ns && placement_in_force(p, &pl->autop) == PLACEMENT_FLDS)
        placement_flds_on_steal_failed(p, &pl->flds);
    return parked && placement_flds_poll_should_reset(p, &pl->autop, &pl->flds);
}

static void *place_init(struct node *n, char **cause)
{
    (void)cause;
    struct place *pl = xcalloc(1, sizeof *pl);
    pl->n = n;
    const struct placement_params *p = &node_cfg(n)->placement;
    placement_flds_init(&pl->flds, p);
    placement_auto_init(&pl->autop, p);
    uv_timer_init(node_loop(n), &pl->monitor);
    pl->monitor.data = pl;
    if (p->policy != PLACEMENT_FLDS && p->policy != PLACEMENT_AUTO)
        return pl;
    double s = p->policy == PLACEMENT_AUTO && p->auto_interval_s < p->monitor_interval_s
                   ? p->auto_interval_s
                   : p->monitor_interval_s;
    uint64_t ms = s > 0.001 ? (uint64_t)(s * 1000) : 1;
    pl->slow_ms = ms;
    uv_timer_start(&pl->monitor, monitor_cb, ms, ms);
    /* The timer only serves running jobs: it must not keep a finished loop alive. */
    uv_unref((uv_handle_t *)&pl->monitor);
    return pl;
}

static void place_close(void *state)
{
    struct place *pl = state;
    uv_timer_stop(&pl->monitor);
    uv_close((uv_handle_t *)&pl->monitor, NULL);
}

static const uint16_t place_types[] = {MSG_PUSH, 0};

const struct part part_place = {
    .name = "place",
    .init = place_init,
    .close = place_close,
    .free = free,
    .place = place_ready,
    .steal_failed = place_steal_failed,
    .types = place_types,
    .on_message = place_on_push,
};
