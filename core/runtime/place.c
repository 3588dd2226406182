/*
 * place — where a node puts a task that just became ready (Algorithm 1 of paper 002,
 * decided by core/policy/placement), pushing it to the node that holds its data when the
 * policy says so; receiving such pushes; and the periodic FLDS monitor and auto
 * controller.  Part of the node daemon (see node_impl.h); loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/runtime/node_impl.h"

static void push_task(struct node *n, struct ntask *t, uint32_t to)
{
    size_t at;
    struct wbuf *b = node_msg_begin(n, to, MSG_PUSH, &at);
    wbuf_put_u32(b, 1);
    proto_put_task(b, &t->spec);
    node_msg_end(n, to, at);
    kvs_append(n->kvs, t->spec.key, KVS_FIELD_HISTORY, to, 0, 0);
    n->tasks_pushed++;
    node_trace(n, TRACE_TASK_PUSHED, t->spec.key, (int32_t)to, 0, t->t_ready);
    ntask_free(t);
}

/* Algorithm 1 (core/policy/placement): LReadyQ, SReadyQ, or push to the data. */
void place_make_ready(struct node *n, struct ntask *t)
{
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
    double est = n->est_samples ? n->est_task_length_s
                 : t->spec.kind == TASK_SLEEP ? t->spec.duration_s / n->cfg.speed
                                              : 0;
    struct placement_input in = {
        .stealable = (t->spec.flags & TASK_FLAG_STEALABLE) != 0,
        .all_data_size = t->spec.input_bytes, .self = n->self, .est_task_length_s = est,
        .inputs = objs, .num_inputs = k,
    };
    struct placement_decision d = placement_decide(&n->cfg.placement, &n->autop, &in);
    if (objs != small)
        free(objs);
    if (d.queue == PLACE_PUSH && d.node < n->nodes && d.node != n->self) {
        push_task(n, t, d.node);
        return;
    }
    bool shared = d.queue == PLACE_SREADY;
    /* LW: a task that may move belongs in the leader's queue, not in a worker's. */
    if (shared && leader_forward(n, t))
        return;
    node_trace(n, shared ? TRACE_TASK_QUEUED_SHARED : TRACE_TASK_QUEUED_LOCAL, t->spec.key, -1,
               0, t->t_ready);
    node_queue(n, shared ? &n->sready : &n->lready, t, t->spec.input_bytes);
}

/* Tasks another node's placement sent here because their data is here: they run here
 * (LReadyQ), and nobody may steal them. */
int place_on_push(struct node *n, uint32_t from, struct rbuf *r)
{
    uint32_t count = rbuf_u32(r);
    if (!rbuf_ok(r) || count > PROTO_MAX_BATCH)
        return -EBADMSG;
    for (uint32_t i = 0; i < count; i++) {
        struct ntask *t = ntask_decode(r);
        if (!t)
            return -EBADMSG;
        t->t_ready = clock_wall_ns();
        node_trace(n, TRACE_TASK_QUEUED_LOCAL, t->spec.key, (int32_t)from, 0, t->t_ready);
        node_queue(n, &n->lready, t, t->spec.input_bytes);
    }
    return 0;
}

/* FLDS: an LReadyQ that would take longer than tt at this node's pace spills its
 * least data-hungry tasks into SReadyQ, where thieves can take them.  Auto: once per
 * interval, the bytes this node fetched against its busy time decide the policy. */
static void monitor_cb(uv_timer_t *h)
{
    struct node *n = h->data;
    const struct placement_params *p = &n->cfg.placement;
    int64_t now_ns = clock_mono_ns();
    double now_s = (double)now_ns / 1e9;
    if (n->first_start_ns) {
        double elapsed = (double)(now_ns - n->first_start_ns) / 1e9;
        double tps = elapsed > 0 ? (double)n->tasks_run / elapsed : 0;
        uint64_t move = placement_flds_monitor(p, &n->autop, &n->flds, readyq_len(&n->lready),
                                               tps, now_s);
        if (move) {
            /* A task the workload pinned stays pinned, however long the queue: pinned
             * ones met at the tail are held aside and go back once `move` stealable
             * tasks have spilled (or the queue ran out). */
            size_t len = readyq_len(&n->lready);
            void **held = xmalloc((len ? len : 1) * sizeof *held);
            void **batch = xmalloc((len ? len : 1) * sizeof *batch);
            size_t got = 0, pinned = 0, taken;
            int64_t wall = clock_wall_ns();
            /* Rounds, each O(len): the pinned ones met are held aside, so the next round
             * asks only for what is still missing and never meets them again. */
            while (got < move && (taken = readyq_take_tail(&n->lready, move - got, batch)) > 0) {
                for (size_t i = 0; i < taken; i++) {
                    struct ntask *t = batch[i];
                    if (!(t->spec.flags & TASK_FLAG_STEALABLE)) {
                        held[pinned++] = t;
                        continue;
                    }
                    got++;
                    /* Spilled tasks may move: under LW that means to the leader. */
                    if (leader_forward(n, t))
                        continue;
                    node_trace(n, TRACE_TASK_QUEUED_SHARED, t->spec.key, -1, 0, wall);
                    node_queue(n, &n->sready, t, t->spec.input_bytes);
                }
            }
            free(batch);
            for (size_t i = 0; i < pinned; i++)
                node_queue(n, &n->lready, held[i], ((struct ntask *)held[i])->spec.input_bytes);
            free(held);
            log_debug("flds: moved %zu tasks from LReadyQ to SReadyQ; tt now %.3f s", got,
                      n->flds.tt_s);
        }
    }
    if (!n->auto_last_s)
        n->auto_last_s = now_s;
    if (p->policy == PLACEMENT_AUTO && now_s - n->auto_last_s >= p->auto_interval_s) {
        n->auto_last_s = now_s;
        struct placement_auto_sample sample = {
            .bytes_moved = n->data.bytes_in - n->auto_bytes_mark,
            .busy_s = n->busy_s - n->auto_busy_mark,
        };
        struct placement_switch sw;
        if (placement_auto_observe(p, &n->autop, &sample, now_s, &sw)) {
            n->policy_switches++;
            if (sw.to == PLACEMENT_FLDS)
                placement_flds_init(&n->flds, p); /* tt starts afresh for the monitor */
            if (n->sink)
                n->sink->policy(n->sink->ctx, placement_policy_name(sw.to), (int32_t)sw.reason, 0);
            log_info("placement switched from %s to %s (%s, ratio %.3g)",
                     placement_policy_name(sw.from), placement_policy_name(sw.to),
                     placement_switch_reason_name(sw.reason), sw.ratio);
        }
        n->auto_bytes_mark = n->data.bytes_in;
        n->auto_busy_mark = n->busy_s;
    }
}

void place_monitor_init(struct node *n)
{
    const struct placement_params *p = &n->cfg.placement;
    placement_flds_init(&n->flds, p);
    placement_auto_init(&n->autop, p);
    uv_timer_init(&n->loop, &n->monitor);
    n->monitor.data = n;
}

void place_monitor_start(struct node *n)
{
    const struct placement_params *p = &n->cfg.placement;
    if (p->policy != PLACEMENT_FLDS && p->policy != PLACEMENT_AUTO)
        return;
    double s = p->policy == PLACEMENT_AUTO && p->auto_interval_s < p->monitor_interval_s
                   ? p->auto_interval_s
                   : p->monitor_interval_s;
    uint64_t ms = s > 0.001 ? (uint64_t)(s * 1000) : 1;
    uv_timer_start(&n->monitor, monitor_cb, ms, ms);
    /* The timer only serves running jobs: it must not keep a finished loop alive. */
    uv_unref((uv_handle_t *)&n->monitor);
}

void place_monitor_stop(struct node *n)
{
    uv_timer_stop(&n->monitor);
    uv_close((uv_handle_t *)&n->monitor, NULL);
}
