/*
 * exec_group — the process groups of commands: the signals that end a running
 * command's group, and the groups that outlive their task ("lingers") until their
 * SIGKILL.  Called on the loop thread by exec.c (time limits, exec_kill, exec_destroy
 * and the timer's ticks), except group_signal_all, which is called under `mu`.
 *
 * Each command runs in its own process group (POSIX_SPAWN_SETPGROUP, exec_spawn.c).
 * When its main process exits, the reaper (exec_reap.c) sends SIGTERM to the group
 * while the leader is still an unreaped zombie (so the group id cannot have been
 * reused), reaps it, and marks the run `linger` if members remain; the loop then sends
 * SIGKILL to the group after EXEC_KILL_GRACE_MS unless the id has meanwhile gone to a
 * new task of ours.  A time limit, exec_kill and exec_destroy send SIGTERM, then SIGKILL
 * after the grace.  A process that leaves its group (setsid) escapes this; only a cgroup
 * would hold it.
 *
 * Pid reuse.  The loop signals a running command only while it is in the pid table,
 * under `mu`, and the reaper reaps only under `mu`, so a pid is never signalled after it
 * could have been recycled.  A group that lingers is signalled by its id after its
 * leader was reaped: that id could only name another group if all members died and the
 * pid counter wrapped around within the grace, and a new task of ours that got the id is
 * recognised and spared.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/runtime/exec_impl.h"

/* SIGTERM or SIGKILL to a command's process group, and to its main process in case it
 * left the group; nothing once it has been reaped (its pid may be reused by then). */
bool group_signal(struct exec *ex, struct run *r, int sig, bool timed_out)
{
    pthread_mutex_lock(&ex->mu);
    bool live = r->in_table;
    if (live) {
        if (timed_out)
            r->res.timed_out = true;
        kill(-r->pid, sig);
        kill(r->pid, sig);
    }
    pthread_mutex_unlock(&ex->mu);
    return live;
}

void group_signal_all(struct exec *ex, int sig)
{
    for (size_t i = 0; i < ex->table_cap; i++) {
        for (struct run *r = ex->table[i]; r; r = r->next) {
            kill(-r->pid, sig);
            kill(r->pid, sig);
        }
    }
}

size_t group_lingering(const struct exec *ex)
{
    return ex->linger_end - ex->linger_first;
}

int64_t group_linger_next(const struct exec *ex)
{
    return ex->linger_first < ex->linger_end ? ex->lingers[ex->linger_first].kill_ns
                                             : INT64_MAX;
}

/* `kill_ns` never decreases from one call to the next (it is now plus the grace), so
 * the FIFO stays in deadline order. */
void group_linger_add(struct exec *ex, pid_t pgid, int64_t kill_ns)
{
    if (ex->linger_end == ex->linger_cap) {
        size_t live = group_lingering(ex);
        if (ex->linger_first > live) {
            memmove(ex->lingers, ex->lingers + ex->linger_first, live * sizeof *ex->lingers);
        } else {
            ex->linger_cap = ex->linger_cap ? ex->linger_cap * 2 : 16;
            struct lingering *l = xmalloc(ex->linger_cap * sizeof *l);
            if (live)
                memcpy(l, ex->lingers + ex->linger_first, live * sizeof *l);
            free(ex->lingers);
            ex->lingers = l;
        }
        ex->linger_first = 0;
        ex->linger_end = live;
    }
    ex->lingers[ex->linger_end++] = (struct lingering){.pgid = pgid, .kill_ns = kill_ns};
    deadline_arm_if_earlier(ex, kill_ns);
}

/* SIGKILL to the groups whose grace is over (all of them with `all`).  A group id that
 * now names a running task of ours was reused after the group emptied: that group is not
 * the one that lingered, and is left alone. */
void group_kill_lingers(struct exec *ex, int64_t now, bool all)
{
    while (ex->linger_first < ex->linger_end &&
           (all || ex->lingers[ex->linger_first].kill_ns <= now)) {
        pid_t pgid = ex->lingers[ex->linger_first++].pgid;
        pthread_mutex_lock(&ex->mu);
        bool reused = table_find(ex, pgid) != NULL;
        pthread_mutex_unlock(&ex->mu);
        if (!reused)
            kill(-pgid, SIGKILL);
    }
    if (ex->linger_first == ex->linger_end)
        ex->linger_first = ex->linger_end = 0;
}

/* Forgets the groups that have no members left. */
void group_prune_lingers(struct exec *ex)
{
    size_t keep = 0;
    for (size_t i = ex->linger_first; i < ex->linger_end; i++) {
        if (kill(-ex->lingers[i].pgid, 0) == 0)
            ex->lingers[keep++] = ex->lingers[i];
    }
    ex->linger_first = 0;
    ex->linger_end = keep;
}

/* The stop's SIGTERM to every lingering group; their SIGKILL follows with the stop's. */
void group_term_lingers(struct exec *ex)
{
    for (size_t i = ex->linger_first; i < ex->linger_end; i++)
        kill(-ex->lingers[i].pgid, SIGTERM);
}
