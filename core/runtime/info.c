/*
 * info — the node's A2WS information vector (info.h says who owns and calls it).
 */
#include "core/runtime/info.h"

#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/policy/fd.h"
#include "core/runtime/part.h"

struct info {
    struct node *n;
    bool on;                    /* some part of this node's policy reads it */
    struct a2ws_vec vec;        /* entries borrowed from `entries` */
    struct a2ws_entry *entries; /* owned; `nodes` entries, NULL when off */
    int64_t work_seen_ns;       /* node_mono_ns; 0 until this node saw work in this epoch */
    uint64_t run_base;          /* tasks_run when the epoch began: n_j counts from here */
};

struct info *info_create(struct node *n)
{
    struct info *f = xcalloc(1, sizeof *f);
    f->n = n;
    f->on = steal_keeps_vector(&node_cfg(n)->steal, node_count(n));
    if (f->on) {
        f->entries = xcalloc(node_count(n), sizeof *f->entries);
        a2ws_vec_init(&f->vec, f->entries, node_self(n), node_count(n),
                      node_cfg(n)->steal.radius);
    }
    return f;
}

void info_free(struct info *f)
{
    if (!f)
        return;
    free(f->entries);
    free(f);
}

/* Ready, staged, staging and running tasks: this node's to run. */
static uint64_t held_here(const struct node_load *l)
{
    return (uint64_t)l->lready + l->sready + l->staged + l->staging + l->busy;
}

void info_saw_work(struct info *f)
{
    if (!f->work_seen_ns)
        f->work_seen_ns = node_mono_ns(f->n);
}

double info_elapsed_s(const struct info *f)
{
    if (!f->work_seen_ns)
        return 0;
    return (double)(node_mono_ns(f->n) - f->work_seen_ns) / 1e9;
}

/* This node's own entry (Table 1: its t, its counts). */
struct a2ws_vec *info_view(struct info *f)
{
    if (!f->on)
        return NULL;
    struct node_load l = node_load(f->n);
    /* n_j: executed + available; waiting tasks are not counted (a2ws.h). */
    uint64_t total = held_here(&l) + (l.tasks_run - f->run_base);
    uint32_t count = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
    if (count)
        info_saw_work(f);
    double t_run = l.est_samples ? l.est_task_length_s : 0;
    a2ws_set_self(&f->vec, t_run, count, l.sready, l.slots);
    return &f->vec;
}

void info_on_steal(struct info *f, uint32_t victim, bool success)
{
    if (f->on)
        a2ws_on_steal(&f->vec, victim, success);
}

/*
 * n_j is "executed + available" of the work at hand (paper 001 runs one job).  A daemon
 * that runs job after job would otherwise carry every earlier task into the steal
 * equation: a node that ran a long job alone looks that many tasks ahead, and thieves
 * strip it of its share of the next.  Only an idle node starts over, so the counts of a
 * job still running here stay whole; t_j (the node's time per task) is kept, as it is
 * the node's speed more than the job's.
 */
void info_job_begins(struct info *f)
{
    struct node_load l = node_load(f->n);
    if (!f->on || held_here(&l) || l.waiting)
        return;
    f->run_base = l.tasks_run;
    f->work_seen_ns = 0;
    info_view(f);
}

void info_on_down(struct info *f, uint32_t node)
{
    if (!f->on)
        return;
    struct node *n = f->n;
    const bool *dead = node_dead_set(n);
    a2ws_on_down(&f->vec, node, fd_next_live(node_self(n), node_count(n), dead, -1),
                 fd_next_live(node_self(n), node_count(n), dead, 1));
}
