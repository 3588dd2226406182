/*
 * exec_impl — the executor's state, shared by the files that make up core/runtime/exec
 * (exec.c: the API, the runs and their delivery to the loop; exec_deadline.c: the heap
 * of deadlines behind the timerfd; exec_spawn.c: starting commands; exec_group.c: their
 * process groups, while they run and after; exec_table.c: the table of running
 * commands by pid; exec_reap.c: the reaper thread).  Private to those files and their
 * unit tests; everything else uses exec.h.
 *
 * Threads: everything here belongs to the loop thread except the fields after `mu`,
 * which the reaper touches too and everyone reads or writes only under `mu`.  Internal
 * functions assume valid arguments (exec.h's functions check them).
 */
#ifndef JACKDAW_EXEC_IMPL_H
#define JACKDAW_EXEC_IMPL_H

#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <uv.h>

#include "core/runtime/exec.h"

#define GRACE_NS ((int64_t)EXEC_KILL_GRACE_MS * 1000000)

/* What falls due at a run's deadline. */
enum due {
    DUE_NONE,
    DUE_SLEEP_END,          /* a sleep has lasted its duration: it is done */
    DUE_TIMEOUT,            /* past its time limit: a sleep fails, a command gets SIGTERM */
    DUE_KILL,               /* the grace after a SIGTERM is over: SIGKILL */
};

/* One started task until its result is delivered. */
struct run {
    struct exec *ex;          /* borrowed */
    struct run *next;         /* pid-table bucket chain, or the finished queue */
    pid_t pid;                /* commands only, once spawned; also its process group */
    bool is_sleep;
    bool in_table;            /* under mu: spawned and not yet reaped */
    bool linger;              /* set by the reaper: its group outlived the main process */
    uint8_t due;              /* enum due; loop thread */
    size_t heap_at;           /* 1 + index in ex->heap while a deadline is set, else 0 */
    int64_t due_ns;           /* monotonic */
    int64_t mono_start;       /* monotonic start: a sleep's end is measured from it */
    uint32_t attempt;         /* attempt + failures, the command's JACKDAW_ATTEMPT */
    uint32_t cores;           /* the slots it takes, the command's JACKDAW_CORES */
    /* The daemon's peak resident set when it spawned the command, bytes: posix_spawn's
     * child shares the daemon's memory until its exec, and the kernel carries that
     * peak into the child's own (exec_mmap), so a child's maximum no larger than this
     * says nothing about the command (exec_reap.c). */
    uint64_t spawn_rss;
    struct exec_result res;   /* output_tail and error owned */
};

/* A process group whose task ended with members left, awaiting its SIGKILL. */
struct lingering {
    pid_t pgid;
    int64_t kill_ns;          /* monotonic */
};

struct exec {
    uv_loop_t *loop;          /* borrowed */
    char *workdir;            /* owned; absolute, so a later chdir of the daemon is harmless */
    double speed;
    exec_done_fn done;
    void *data;               /* borrowed; the caller's */
    uint32_t running;         /* started, not delivered */
    bool destroyed;
    unsigned handles;         /* libuv handles not yet closed; the last close frees `ex` */
    uv_async_t async;         /* ref'd only while tasks run, so an idle exec lets the loop end */
    uv_poll_t tick;           /* the timerfd; ref'd only while stopping */
    int tick_fd;              /* -1 once closed: arming is then a no-op */
    void (*batch_end)(void *data); /* exec_set_batch_end; may be NULL */
    int64_t armed_ns;         /* when the timerfd fires; INT64_MAX when disarmed */
    int64_t armed_for;        /* the deadline it is armed for (armed_ns + the lead) */
    int64_t lead_ns;          /* how early the timer is armed (exec_deadline.c) */
    bool ticking;             /* inside on_tick, which arms once at its end */
    /* owned array, min-heap on due_ns; the sleeps' runs are owned here, the commands'
     * by the pid table or the finished queue */
    struct run **heap;
    size_t heap_len, heap_cap;
    struct lingering *lingers; /* owned; FIFO [linger_first, linger_end), kill_ns rising */
    size_t linger_first, linger_end, linger_cap;
    int64_t stop_kill_ns;     /* while stopping: when SIGKILL follows the SIGTERM */
    posix_spawnattr_t attr;   /* the same for every child */
    uint32_t node;            /* this node's id, for a command's JACKDAW_NODE */
    uint64_t log_bytes;       /* stderr kept per command (its tail); 0: all */
    char **env;               /* owned array (borrowed strings): the daemon's environment
                               * without any JACKDAW_ task variable, with room for them */
    size_t env_len;
    bool reaper_started;
    pthread_t reaper;

    pthread_mutex_t mu;       /* guards the fields below */
    pthread_cond_t wake;      /* a child was spawned, or stop was set */
    struct run **table;       /* owned; pid -> run, chained, power-of-two buckets */
    size_t table_cap;
    size_t table_count;
    struct run *queue_head;   /* finished, not yet handed to the loop; FIFO */
    struct run *queue_tail;
    uint32_t children;        /* spawned and not reaped */
    uint64_t spawns;          /* total, to tell a race from a stolen child (reaper_main) */
    bool stop;
};

/* ---- exec.c ---- */

/* Any thread.  Hands a finished run to the loop. */
void exec_post(struct exec *ex, struct run *r);
/* Loop thread.  A command that never started still completes through the callback;
 * takes `error` (owned). */
void exec_fail_start(struct exec *ex, struct run *r, char *error);

/* ---- exec_deadline.c (loop thread) ---- */

/* Gives `r` the deadline `due_ns` (monotonic), replacing any it had, and arms the timer
 * for it if it is the earliest. */
void deadline_set(struct exec *ex, struct run *r, int64_t due_ns, uint8_t due);
/* Takes `r`'s deadline away, if it has one. */
void deadline_clear(struct exec *ex, struct run *r);
/* The run whose deadline is earliest if `now` has reached it, taken off the heap with
 * what fell due in *due; NULL when nothing is due. */
struct run *deadline_pop_due(struct exec *ex, int64_t now, uint8_t *due);
/* The earliest deadline, or INT64_MAX when there is none. */
int64_t deadline_earliest(const struct exec *ex);
/* Arms the timerfd for the deadline `when` (monotonic ns, absolute: a time already past
 * fires at once), the lead ahead of it; INT64_MAX disarms it. */
void deadline_arm(struct exec *ex, int64_t when);
/* on_tick woke `late` ns after the time the timer was armed at: the lead follows the
 * kernel's wake-up latency. */
void deadline_woke(struct exec *ex, int64_t late);
/* Waits on the clock for a deadline the lead woke us ahead of: returns the time, at or
 * past `due`, or `now` at once when `due` is further than the lead. */
int64_t deadline_wait(const struct exec *ex, int64_t now, int64_t due);
/* Arms for `due` unless the timer already fires no later, on_tick is running (it arms
 * once on its way out) or the exec is stopping (its stop owns the timer). */
void deadline_arm_if_earlier(struct exec *ex, int64_t due);

/* ---- exec_spawn.c (loop thread) ---- */

/* mkdir -p, then the absolute path (owned), or NULL with *cause set. */
char *spawn_workdir(const char *path, char **cause);
/* The attributes every child gets: clean signal state, a process group of its own. */
void spawn_attr_init(posix_spawnattr_t *attr);
/* ex->env from the daemon's environment (at exec_create). */
void spawn_env_init(struct exec *ex);
/* True when the command was spawned, with `r` in the pid table; otherwise it completes
 * as failed through the callback. */
bool spawn_command(struct exec *ex, struct run *r, const char *cmd);

/* ---- exec_group.c ---- */

/* Loop thread.  SIGTERM or SIGKILL to a running command's group; false once it has
 * been reaped.  `timed_out` marks its result. */
bool group_signal(struct exec *ex, struct run *r, int sig, bool timed_out);
/* Under mu.  `sig` to every running command's group and main process. */
void group_signal_all(struct exec *ex, int sig);
/* Loop thread, from here on: the groups that outlived their task.  `kill_ns` is when
 * the group gets SIGKILL, and arms the timer. */
void group_linger_add(struct exec *ex, pid_t pgid, int64_t kill_ns);
/* How many groups linger. */
size_t group_lingering(const struct exec *ex);
/* The earliest SIGKILL due, or INT64_MAX when no group lingers. */
int64_t group_linger_next(const struct exec *ex);
/* SIGKILL to the groups whose time has come by `now`, or to all of them; forgotten. */
void group_kill_lingers(struct exec *ex, int64_t now, bool all);
/* Forgets the groups that have no members left. */
void group_prune_lingers(struct exec *ex);
/* SIGTERM to every lingering group (exec_destroy); they stay on the list. */
void group_term_lingers(struct exec *ex);

/* ---- exec_table.c (all under mu) ---- */

void table_insert(struct exec *ex, struct run *r);
struct run *table_find(const struct exec *ex, pid_t pid);
/* The running command started with `arg`, or NULL. */
struct run *table_find_arg(const struct exec *ex, const void *arg);
struct run *table_remove(struct exec *ex, pid_t pid);

/* ---- exec_reap.c (loop thread) ---- */

/* Starts the reaper, or fails with *error set (owned) when this process cannot run
 * commands through `ex`. */
int reap_start(struct exec *ex, char **error);
/* Waits for the reaper to return (it does once stop is set and its children are
 * reaped) and lets another exec start one. */
void reap_join(struct exec *ex);

#endif
