/*
 * exec — a node's executor slots (see exec.h for the contract).  Owns one timerfd (a
 * uv_poll) and one uv_async for the whole executor, the heap of deadlines behind the
 * timerfd, the reaper thread, the table of running commands by pid, the queue of
 * finished ones and the list of process groups that outlived their task.  Called by the
 * node daemon (core/runtime/node.c) on its loop thread, and by tests and
 * tools/bench/spawn_ceiling.
 *
 * Deadlines.  Every sleep's end, every time limit and every "SIGKILL now" that follows
 * a SIGTERM is an entry of one min-heap of runs, keyed on CLOCK_MONOTONIC nanoseconds,
 * and the timerfd is armed (absolute time) at the earliest.  A timerfd never fires
 * before its time and has no millisecond rounding, unlike a uv_timer, which counts from
 * the loop's cached millisecond clock: sleeps used to end up to a millisecond early and
 * were compensated by shortening later sleeps with the slack of earlier ones, which made
 * the mean right and single sleeps short.  Now a sleep lasts at least its duration over
 * the speed, measured on the monotonic clock, and never shortens another task; the loop
 * thread asks the kernel for no timer slack, so a wake-up is late only by the
 * scheduler's delay.  (Waking early and spinning on the clock up to the deadline was
 * tried: with 8 daemons of 8 slots on 2 cores the spinning took the CPU the other
 * daemons needed, and 10 ms sleeps ran 12 ms on average instead of 10.3.)
 *
 * Process groups.  Each command runs in its own process group (POSIX_SPAWN_SETPGROUP).
 * When its main process exits, the reaper sends SIGTERM to the group while the leader is
 * still an unreaped zombie (so the group id cannot have been reused), reaps it, and
 * marks the run `linger` if members remain; the loop then sends SIGKILL to the group
 * after EXEC_KILL_GRACE_MS unless the id has meanwhile gone to a new task of ours.  A
 * time limit, exec_kill and exec_destroy send SIGTERM, then SIGKILL after the grace.  A
 * process that leaves its group (setsid) escapes this; only a cgroup would hold it.
 *
 * Threads.  Everything except the reaper runs on the loop thread.  The reaper only
 * waits for children, and touches the pid table, the finished queue and the counters
 * under `mu`; results reach the loop through `async`, whose callback swaps out and
 * drains the whole queue.  libuv 1.44 gives no ordering between uv_async_send and its
 * callback, so the mutex is what makes the reaper's writes visible.
 *
 * Process-wide constraint.  The reaper waits with waitid(P_ALL), so it reaps EVERY
 * child of the process, and a child it does not know is reaped and forgotten.  So
 * while an exec runs commands nothing else in the process may create children it
 * wants to wait for (no uv_spawn, system(), popen(), waitpid(-1)), SIGCHLD must not be
 * ignored, and only one exec at a time may run commands (a second one fails its
 * commands with an error; sleeps and noops are unaffected).  The node daemon keeps to
 * this: it spawns tasks only through here.
 *
 * Pid reuse.  The reaper finds a dead child with WNOWAIT and reaps it only while
 * holding `mu`, and the loop signals a running command only while it is in the table,
 * under `mu`, so a pid is never signalled after it could have been recycled.  A group
 * that lingers is signalled by its id after its leader was reaped: that id could only
 * name another group if all members died and the pid counter wrapped around within the
 * grace, and a new task of ours that got the id is recognised and spared.
 */
#include "core/runtime/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/log.h"
#include "core/base/text.h"
#include "core/base/xalloc.h"

extern char **environ;

/* A failed command's output is summarised by its last bytes: the error is usually there. */
#define OUTPUT_TAIL_MAX 1024
/* Longer sleeps are a bad workload, and would overflow the nanosecond arithmetic. */
#define SLEEP_MAX_NS 1e18
#define GRACE_NS ((int64_t)EXEC_KILL_GRACE_MS * 1000000)
/* How often a stopping exec looks whether the groups it signalled are gone. */
#define STOP_POLL_NS (10 * 1000000LL)

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
    int tick_fd;
    int64_t armed_ns;         /* when the timerfd fires; INT64_MAX when disarmed */
    bool ticking;             /* inside on_tick, which arms once at its end */
    /* owned array, min-heap on due_ns; the sleeps' runs are owned here, the commands'
     * by the pid table or the finished queue */
    struct run **heap;
    size_t heap_len, heap_cap;
    struct lingering *lingers; /* owned; FIFO [linger_first, linger_end), kill_ns rising */
    size_t linger_first, linger_end, linger_cap;
    int64_t stop_kill_ns;     /* while stopping: when SIGKILL follows the SIGTERM */
    posix_spawnattr_t attr;   /* the same for every child */
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

/* The exec whose reaper is running: two reapers would steal each other's children. */
static _Atomic(struct exec *) reaper_owner;

/* ---- pid table (under mu) ---- */

static size_t pid_bucket(pid_t pid, size_t cap)
{
    return ((size_t)pid * 0x9E3779B97F4A7C15ULL >> 17) & (cap - 1);
}

static void table_insert(struct exec *ex, struct run *r)
{
    if (ex->table_count + 1 > ex->table_cap) {
        size_t cap = ex->table_cap ? ex->table_cap * 2 : 64;
        struct run **t = xcalloc(cap, sizeof *t);
        for (size_t i = 0; i < ex->table_cap; i++) {
            for (struct run *e = ex->table[i], *next; e; e = next) {
                next = e->next;
                size_t b = pid_bucket(e->pid, cap);
                e->next = t[b];
                t[b] = e;
            }
        }
        free(ex->table);
        ex->table = t;
        ex->table_cap = cap;
    }
    size_t b = pid_bucket(r->pid, ex->table_cap);
    r->next = ex->table[b];
    ex->table[b] = r;
    ex->table_count++;
}

static struct run *table_find(const struct exec *ex, pid_t pid)
{
    if (!ex->table_cap)
        return NULL;
    for (struct run *r = ex->table[pid_bucket(pid, ex->table_cap)]; r; r = r->next) {
        if (r->pid == pid)
            return r;
    }
    return NULL;
}

static struct run *table_remove(struct exec *ex, pid_t pid)
{
    if (!ex->table_cap)
        return NULL;
    for (struct run **p = &ex->table[pid_bucket(pid, ex->table_cap)]; *p; p = &(*p)->next) {
        if ((*p)->pid == pid) {
            struct run *r = *p;
            *p = r->next;
            r->next = NULL;
            ex->table_count--;
            return r;
        }
    }
    return NULL;
}

/* ---- delivery (loop thread) ---- */

static struct run *run_new(struct exec *ex, uint64_t key, void *arg)
{
    struct run *r = xcalloc(1, sizeof *r);
    r->ex = ex;
    r->res.key = key;
    r->res.status = TASK_DONE;
    r->res.arg = arg;
    return r;
}

static void run_free(struct run *r)
{
    free(r->res.output_tail);
    free(r->res.error);
    free(r);
}

static void running_inc(struct exec *ex)
{
    if (ex->running++ == 0)
        uv_ref((uv_handle_t *)&ex->async);
}

/* Frees the result's strings but not `r`, which the caller frees. */
static void deliver(struct exec *ex, struct run *r)
{
    if (--ex->running == 0)
        uv_unref((uv_handle_t *)&ex->async);
    ex->done(&r->res, ex->data);
    free(r->res.output_tail);
    free(r->res.error);
    r->res.output_tail = r->res.error = NULL;
}

static void exec_free(struct exec *ex)
{
    pthread_mutex_destroy(&ex->mu);
    pthread_cond_destroy(&ex->wake);
    posix_spawnattr_destroy(&ex->attr);
    free(ex->table);
    free(ex->heap);
    free(ex->lingers);
    free(ex->workdir);
    free(ex);
}

static void handle_closed(struct exec *ex)
{
    if (--ex->handles == 0 && ex->destroyed)
        exec_free(ex);
}

static void on_async_close(uv_handle_t *h)
{
    handle_closed(h->data);
}

static void on_tick_close(uv_handle_t *h)
{
    struct exec *ex = h->data;
    close(ex->tick_fd);
    ex->tick_fd = -1;
    handle_closed(ex);
}

/* Any thread.  Hands a finished run to the loop. */
static void queue_push(struct exec *ex, struct run *r)
{
    r->next = NULL;
    pthread_mutex_lock(&ex->mu);
    if (ex->queue_tail)
        ex->queue_tail->next = r;
    else
        ex->queue_head = r;
    ex->queue_tail = r;
    pthread_mutex_unlock(&ex->mu);
    uv_async_send(&ex->async);
}

/* Loop thread.  A command that never started still completes through the callback. */
static void fail_start(struct exec *ex, struct run *r, char *error)
{
    r->res.status = TASK_FAILED;
    r->res.exit_code = -1;
    r->res.error = error;
    r->res.t_end = clock_wall_ns();
    queue_push(ex, r);
}

/* ---- deadlines (loop thread) ---- */

/* Arms the timerfd at `when` (monotonic ns, absolute: a time already past fires at
 * once); INT64_MAX disarms it. */
static void arm_at(struct exec *ex, int64_t when)
{
    if (ex->tick_fd < 0)
        return;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (when != INT64_MAX) {
        if (when < 1)
            when = 1; /* an it_value of zero would disarm */
        its.it_value.tv_sec = (time_t)(when / 1000000000);
        its.it_value.tv_nsec = (long)(when % 1000000000);
    }
    if (timerfd_settime(ex->tick_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        log_error("exec cannot arm its timer: %s", strerror(errno));
    ex->armed_ns = when;
}

static int64_t next_due(const struct exec *ex)
{
    int64_t next = ex->heap_len ? ex->heap[0]->due_ns : INT64_MAX;
    if (ex->linger_first < ex->linger_end && ex->lingers[ex->linger_first].kill_ns < next)
        next = ex->lingers[ex->linger_first].kill_ns;
    return next;
}

/* Arms for a deadline unless the timer already fires no later (on_tick arms once on its
 * way out). */
static void arm_if_earlier(struct exec *ex, int64_t due)
{
    if (!ex->ticking && !ex->destroyed && due < ex->armed_ns)
        arm_at(ex, due);
}

static void heap_place(struct exec *ex, size_t i, struct run *r)
{
    ex->heap[i] = r;
    r->heap_at = i + 1;
}

static void heap_up(struct exec *ex, size_t i)
{
    struct run *r = ex->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (ex->heap[parent]->due_ns <= r->due_ns)
            break;
        heap_place(ex, i, ex->heap[parent]);
        i = parent;
    }
    heap_place(ex, i, r);
}

static void heap_down(struct exec *ex, size_t i)
{
    struct run *r = ex->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= ex->heap_len)
            break;
        if (child + 1 < ex->heap_len && ex->heap[child + 1]->due_ns < ex->heap[child]->due_ns)
            child++;
        if (r->due_ns <= ex->heap[child]->due_ns)
            break;
        heap_place(ex, i, ex->heap[child]);
        i = child;
    }
    heap_place(ex, i, r);
}

static void deadline_clear(struct exec *ex, struct run *r)
{
    if (!r->heap_at)
        return;
    size_t i = r->heap_at - 1;
    r->heap_at = 0;
    r->due = DUE_NONE;
    struct run *last = ex->heap[--ex->heap_len];
    if (i == ex->heap_len)
        return;
    heap_place(ex, i, last);
    heap_up(ex, i);
    heap_down(ex, last->heap_at - 1);
}

static void deadline_set(struct exec *ex, struct run *r, int64_t due_ns, uint8_t due)
{
    deadline_clear(ex, r);
    if (ex->heap_len == ex->heap_cap) {
        ex->heap_cap = ex->heap_cap ? ex->heap_cap * 2 : 64;
        ex->heap = xrealloc(ex->heap, ex->heap_cap * sizeof *ex->heap);
    }
    r->due_ns = due_ns;
    r->due = due;
    ex->heap[ex->heap_len] = r;
    heap_up(ex, ex->heap_len++);
    arm_if_earlier(ex, due_ns);
}

/* ---- process groups left behind (loop thread) ---- */

static size_t linger_count(const struct exec *ex)
{
    return ex->linger_end - ex->linger_first;
}

static void linger_add(struct exec *ex, pid_t pgid, int64_t kill_ns)
{
    if (ex->linger_end == ex->linger_cap) {
        size_t live = linger_count(ex);
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
    arm_if_earlier(ex, kill_ns);
}

/* SIGKILL to the groups whose grace is over (all of them with `all`).  A group id that
 * now names a running task of ours was reused after the group emptied: that group is not
 * the one that lingered, and is left alone. */
static void kill_lingers(struct exec *ex, int64_t now, bool all)
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
static void prune_lingers(struct exec *ex)
{
    size_t keep = 0;
    for (size_t i = ex->linger_first; i < ex->linger_end; i++) {
        if (kill(-ex->lingers[i].pgid, 0) == 0)
            ex->lingers[keep++] = ex->lingers[i];
    }
    ex->linger_first = 0;
    ex->linger_end = keep;
}

/* Takes the finished runs from the reaper: delivered unless the exec is destroyed, their
 * groups' leftovers put on the SIGKILL list either way. */
static void drain_finished(struct exec *ex)
{
    pthread_mutex_lock(&ex->mu);
    struct run *r = ex->queue_head;
    ex->queue_head = ex->queue_tail = NULL;
    pthread_mutex_unlock(&ex->mu);

    for (struct run *next; r; r = next) {
        next = r->next;
        deadline_clear(ex, r);
        if (r->linger)
            linger_add(ex, r->pid, clock_mono_ns() + GRACE_NS);
        /* A done callback may destroy the exec; what is left is then dropped. */
        if (!ex->destroyed)
            deliver(ex, r);
        run_free(r);
    }
}

static void on_async(uv_async_t *h)
{
    drain_finished(h->data);
}

/* ---- ending tasks (loop thread) ---- */

/* A sleep ends, `now` (monotonic) being when its deadline was found passed: its wall
 * end is its wall start plus the monotonic time it lasted, so that its record shows
 * exactly what it ran. */
static void end_sleep(struct exec *ex, struct run *r, int64_t now, uint8_t status,
                      bool timed_out)
{
    deadline_clear(ex, r);
    r->res.status = status;
    r->res.timed_out = timed_out;
    if (status != TASK_DONE)
        r->res.exit_code = -1;
    r->res.t_end = r->res.t_start + (now - r->mono_start);
    deliver(ex, r);
    run_free(r);
}

/* SIGTERM or SIGKILL to a command's process group, and to its main process in case it
 * left the group; nothing once it has been reaped (its pid may be reused by then). */
static bool signal_command(struct exec *ex, struct run *r, int sig, bool timed_out)
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

static void fall_due(struct exec *ex, struct run *r, uint8_t due, int64_t now)
{
    switch (due) {
    case DUE_SLEEP_END:
        end_sleep(ex, r, now, TASK_DONE, false);
        break;
    case DUE_TIMEOUT:
        if (r->is_sleep) {
            end_sleep(ex, r, now, TASK_FAILED, true);
        } else if (signal_command(ex, r, SIGTERM, true)) {
            deadline_set(ex, r, now + GRACE_NS, DUE_KILL);
        }
        break;
    case DUE_KILL:
        signal_command(ex, r, SIGKILL, false);
        break;
    default:
        break;
    }
}

/* ---- stopping (loop thread) ---- */

/* The last step of a destroy: nothing runs any more, the handles close, and the last
 * close frees the exec. */
static void close_all(struct exec *ex)
{
    /* The reaper is gone: no locking needed, and undelivered results are dropped. */
    for (struct run *r = ex->queue_head, *next; r; r = next) {
        next = r->next;
        run_free(r);
    }
    ex->queue_head = ex->queue_tail = NULL;
    for (size_t i = 0; i < ex->table_cap; i++) {
        for (struct run *r = ex->table[i], *next; r; r = next) {
            next = r->next;
            run_free(r);
        }
        ex->table[i] = NULL;
    }
    ex->linger_first = ex->linger_end = 0;
    uv_close((uv_handle_t *)&ex->tick, on_tick_close);
    uv_close((uv_handle_t *)&ex->async, on_async_close);
}

/*
 * One step of a destroy that had process groups to end: each got SIGTERM, and every
 * STOP_POLL_NS this looks whether they are gone.  When the reaper has reaped every
 * command it is joined; when no group is left, or the grace is over (then everything
 * left gets SIGKILL), the exec closes.  The loop keeps turning meanwhile.
 */
static void stop_step(struct exec *ex)
{
    int64_t now = clock_mono_ns();
    bool late = now >= ex->stop_kill_ns;
    if (ex->reaper_started) {
        pthread_mutex_lock(&ex->mu);
        if (late) {
            for (size_t i = 0; i < ex->table_cap; i++) {
                for (struct run *r = ex->table[i]; r; r = r->next) {
                    kill(-r->pid, SIGKILL);
                    kill(r->pid, SIGKILL);
                }
            }
        }
        bool reaped_all = ex->children == 0;
        pthread_mutex_unlock(&ex->mu);
        /* Prompt either way: the reaper returns once it has reaped the killed children. */
        if (reaped_all || late) {
            pthread_join(ex->reaper, NULL);
            atomic_store(&reaper_owner, NULL);
            ex->reaper_started = false;
        }
    }
    drain_finished(ex);
    prune_lingers(ex);
    if (late)
        kill_lingers(ex, now, true);
    if (!ex->reaper_started && !linger_count(ex)) {
        close_all(ex);
        return;
    }
    int64_t next = now + STOP_POLL_NS;
    arm_at(ex, late || next < ex->stop_kill_ns ? next : ex->stop_kill_ns);
}

static void on_tick(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    struct exec *ex = h->data;
    uint64_t expirations;
    /* EAGAIN is harmless (re-armed since it fired): the clock decides what is due. */
    if (read(ex->tick_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        log_warn("exec cannot read its timer: %s", strerror(errno));
    int64_t now = clock_mono_ns();
    ex->armed_ns = INT64_MAX;
    if (ex->destroyed) {
        stop_step(ex);
        return;
    }
    /* The timerfd never fires early, so what is due is what the clock has passed. */
    ex->ticking = true;
    while (ex->heap_len && ex->heap[0]->due_ns <= now) {
        struct run *r = ex->heap[0];
        uint8_t due = r->due;
        deadline_clear(ex, r);
        fall_due(ex, r, due, now);
        if (ex->destroyed)
            return; /* a done callback destroyed the exec, which now steps its own stop */
    }
    kill_lingers(ex, now, false);
    ex->ticking = false;
    int64_t next = next_due(ex);
    arm_at(ex, next);
}

/* ---- reaper thread ---- */

/* The last bytes of a failed command's output, or NULL when there are none. */
static char *read_tail(const char *workdir, uint64_t key)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/task-%u-%u/output", workdir, task_key_job(key),
             task_key_index(key));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *tail = NULL;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        off_t from = st.st_size > OUTPUT_TAIL_MAX ? st.st_size - OUTPUT_TAIL_MAX : 0;
        tail = xmalloc(OUTPUT_TAIL_MAX + 1);
        ssize_t n = pread(fd, tail, OUTPUT_TAIL_MAX, from);
        if (n <= 0) {
            free(tail);
            tail = NULL;
        } else {
            tail[n] = '\0';
        }
    }
    close(fd);
    return tail;
}

static void reap_one(struct exec *ex, pid_t pid)
{
    int st = 0;
    pid_t got;
    struct run *r = NULL;
    bool timed_out = false;
    pthread_mutex_lock(&ex->mu);
    /* The task's main process is a zombie, so its pid, which is also its group's id,
     * cannot have been reused: whatever the task left running in its group gets SIGTERM
     * now.  Only after a check, because the zombie waitid saw may be gone: posix_spawn
     * reaps a child whose exec failed itself (while we waited for mu), and its pid may
     * even be in use again by a child that is still running. */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int w;
    while ((w = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT)) < 0 &&
           errno == EINTR)
        ;
    if (w == 0 && si.si_pid == pid && table_find(ex, pid))
        kill(-pid, SIGTERM);
    /* WNOHANG for the same reason. */
    while ((got = waitpid(pid, &st, WNOHANG)) < 0 && errno == EINTR)
        ;
    if (got == pid) {
        r = table_remove(ex, pid);
        if (r) {
            ex->children--;
            r->in_table = false;
            timed_out = r->res.timed_out;
            /* Members left after the SIGTERM get SIGKILL after the grace (the loop's
             * lingers).  Cheap when the group is empty, which is the common case. */
            r->linger = kill(-pid, 0) == 0;
        }
    }
    pthread_mutex_unlock(&ex->mu);
    if (!r) {
        if (got == pid)
            log_warn("exec reaped a child it did not spawn pid=%d", (int)pid);
        return;
    }

    r->res.t_end = clock_wall_ns();
    if (WIFEXITED(st)) {
        r->res.exit_code = WEXITSTATUS(st);
        /* Past its time limit a task fails, even if it handled the SIGTERM and exited 0. */
        r->res.status = r->res.exit_code == 0 && !timed_out ? TASK_DONE : TASK_FAILED;
    } else {
        r->res.exit_code = -1;
        r->res.term_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        r->res.status = TASK_FAILED;
    }
    if (r->res.status == TASK_FAILED)
        r->res.output_tail = read_tail(ex->workdir, r->res.key);
    queue_push(ex, r);
}

/* Under mu.  Someone else reaped our children: fail their tasks rather than spin. */
static void lose_children(struct exec *ex)
{
    log_error("exec children reaped elsewhere count=%u", ex->children);
    for (size_t i = 0; i < ex->table_cap; i++) {
        for (struct run *r = ex->table[i], *next; r; r = next) {
            next = r->next;
            r->in_table = false;
            r->res.status = TASK_FAILED;
            r->res.exit_code = -1;
            r->res.t_end = clock_wall_ns();
            r->res.error = xstrdup("the command's exit status was lost: another part of "
                                   "the process reaped it");
            r->next = NULL;
            if (ex->queue_tail)
                ex->queue_tail->next = r;
            else
                ex->queue_head = r;
            ex->queue_tail = r;
        }
        ex->table[i] = NULL;
    }
    ex->table_count = 0;
    ex->children = 0;
    uv_async_send(&ex->async);
}

static void *reaper_main(void *arg)
{
    struct exec *ex = arg;
    uint64_t spawns_at_echild = UINT64_MAX;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        /* WNOWAIT: the child stays a zombie, so its pid cannot be reused until reap_one
         * reaps it under mu. */
        if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) == 0) {
            reap_one(ex, si.si_pid);
            continue;
        }
        if (errno == EINTR)
            continue;

        pthread_mutex_lock(&ex->mu);
        /* No children but some counted: either one was spawned since waitid returned
         * (spawns moved; loop and wait for it), or someone else reaped ours. */
        if (ex->children > 0 && ex->spawns == spawns_at_echild)
            lose_children(ex);
        spawns_at_echild = ex->spawns;
        while (ex->children == 0 && !ex->stop)
            pthread_cond_wait(&ex->wake, &ex->mu);
        bool quit = ex->stop && ex->children == 0;
        pthread_mutex_unlock(&ex->mu);
        if (quit)
            return NULL;
    }
}

/* Loop thread; started on the first command so sleep-only executors need no thread and
 * several of them may share a process. */
static int start_reaper(struct exec *ex, char **error)
{
    struct exec *expected = NULL;
    if (!atomic_compare_exchange_strong(&reaper_owner, &expected, ex)) {
        *error = xstrdup("cannot run commands: another executor in this process runs "
                         "commands, and its reaper would take this one's children");
        return -EBUSY;
    }
    struct sigaction sa;
    if (sigaction(SIGCHLD, NULL, &sa) == 0 &&
        (sa.sa_handler == SIG_IGN || (sa.sa_flags & SA_NOCLDWAIT))) {
        atomic_store(&reaper_owner, NULL);
        *error = xstrdup("cannot run commands: SIGCHLD is ignored, so exit statuses are lost");
        return -EINVAL;
    }
    /* The reaper takes no signals, so handlers always run on threads that expect them. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&ex->reaper, NULL, reaper_main, ex);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        atomic_store(&reaper_owner, NULL);
        *error = xasprintf("cannot start the reaper thread: %s", strerror(rc));
        return -rc;
    }
    ex->reaper_started = true;
    return 0;
}

/* ---- commands (loop thread) ---- */

/*
 * Words that mean something to dash or bash before PATH lookup: running them directly
 * would either fail (cd, export) or behave differently (exec, time, test in a script).
 * Same idea as GNU make's sh_cmds table.
 */
static const char *const shell_words[] = {
    "!",      ".",       ":",        "[[",     "]]",       "{",       "}",      "alias",
    "bg",     "break",   "builtin",  "case",   "cd",       "command", "continue", "declare",
    "do",     "done",    "elif",     "else",   "esac",     "eval",    "exec",   "exit",
    "export", "fc",      "fg",       "fi",     "for",      "function", "getopts", "hash",
    "if",     "in",      "jobs",     "let",    "local",    "login",   "logout", "popd",
    "pushd",  "read",    "readonly", "return", "select",   "set",     "shift",  "source",
    "suspend", "test",   "then",     "time",   "times",    "trap",    "type",   "typeset",
    "ulimit", "umask",   "unalias",  "unset",  "until",    "wait",    "while",  NULL,
};

static bool plain_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("-_./,:=+@% ", c) != NULL;
}

/*
 * argv for a command the shell would run as a plain word list, or NULL when it needs
 * the shell.  The words point into *buf (owned by the caller).
 */
static char **split_plain(const char *cmd, char **buf)
{
    size_t len = strlen(cmd);
    for (size_t i = 0; i < len; i++) {
        if (!plain_char(cmd[i]))
            return NULL;
    }
    const char *first = cmd + strspn(cmd, " ");
    size_t first_len = strcspn(first, " ");
    if (first_len == 0 || memchr(first, '=', first_len))
        return NULL; /* empty, or an environment assignment */
    for (const char *const *w = shell_words; *w; w++) {
        if (strlen(*w) == first_len && memcmp(*w, first, first_len) == 0)
            return NULL;
    }

    *buf = xstrdup(cmd);
    char **argv = xmalloc((len / 2 + 2) * sizeof *argv);
    size_t argc = 0;
    for (char *p = *buf;;) {
        while (*p == ' ')
            *p++ = '\0';
        if (!*p)
            break;
        argv[argc++] = p;
        p += strcspn(p, " ");
    }
    argv[argc] = NULL;
    return argv;
}

/*
 * 0 with `r` in the pid table, or an errno from posix_spawn (glibc reports the exec's or
 * a file action's failure there, since the child shares its memory until exec).
 */
static int spawn(struct exec *ex, struct run *r, const char *dir, char *const argv[],
                 bool search)
{
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc)
        return rc;
    /* In order: the relative "output" is opened inside the task directory. */
    if (!(rc = posix_spawn_file_actions_addchdir_np(&fa, dir)) &&
        !(rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) &&
        !(rc = posix_spawn_file_actions_addopen(&fa, 1, "output",
                                                O_CREAT | O_TRUNC | O_WRONLY, 0600)) &&
        !(rc = posix_spawn_file_actions_adddup2(&fa, 1, 2)) &&
        /* A daemon fd without O_CLOEXEC (a listening socket) must not outlive us in a
         * task that hangs on. */
        !(rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3))) {
        /* Held across the spawn so the reaper cannot meet this pid before the table does:
         * a child may exit before posix_spawn returns. */
        pthread_mutex_lock(&ex->mu);
        pid_t pid;
        rc = search ? posix_spawnp(&pid, argv[0], &fa, &ex->attr, argv, environ)
                    : posix_spawn(&pid, argv[0], &fa, &ex->attr, argv, environ);
        if (rc == 0) {
            r->pid = pid;
            r->in_table = true;
            table_insert(ex, r);
            ex->children++;
            ex->spawns++;
            pthread_cond_signal(&ex->wake);
        }
        pthread_mutex_unlock(&ex->mu);
    }
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* True when the command was spawned; otherwise it completes as failed through the
 * callback. */
static bool start_command(struct exec *ex, struct run *r, const char *cmd)
{
    char *error = NULL;
    if (!ex->reaper_started && start_reaper(ex, &error) != 0) {
        fail_start(ex, r, error);
        return false;
    }

    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/task-%u-%u", ex->workdir, task_key_job(r->res.key),
                     task_key_index(r->res.key));
    if (n < 0 || (size_t)n >= sizeof dir) {
        fail_start(ex, r, xasprintf("cannot create task directory in '%s': name too long",
                                    ex->workdir));
        return false;
    }
    /* Owner-only, whatever the umask: a task's files are nobody else's business. */
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fail_start(ex, r, xasprintf("cannot create task directory '%s': %s", dir,
                                    strerror(errno)));
        return false;
    }

    char *buf = NULL;
    char **words = split_plain(cmd, &buf);
    char *shell_argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    int rc;
    if (words) {
        rc = spawn(ex, r, dir, words, true);
        /* A script without "#!" runs under the shell, as it would from a terminal. */
        if (rc == ENOEXEC)
            rc = spawn(ex, r, dir, shell_argv, false);
    } else {
        rc = spawn(ex, r, dir, shell_argv, false);
    }
    if (rc != 0) {
        /* The command may be 64 KiB: quote it cut, since the reason travels to the client
         * and into its summary. */
        const char *what = words ? words[0] : cmd;
        char *shown = text_clip(what, strlen(what), TEXT_SHOWN);
        fail_start(ex, r, xasprintf("cannot run '%s': %s", shown, strerror(rc)));
        free(shown);
    }
    free(words);
    free(buf);
    return rc == 0;
}

/* ---- public ---- */

/* mkdir -p, then the absolute path. */
static char *make_workdir(const char *path, char **cause)
{
    char *failed = NULL;
    int rc = fs_mkdirs(path, 0700, &failed);
    if (rc < 0) {
        if (cause)
            *cause = xasprintf("cannot create work directory '%s': %s", failed, strerror(-rc));
        free(failed);
        return NULL;
    }
    char *abs = realpath(path, NULL);
    if (!abs && cause)
        *cause = xasprintf("cannot open work directory '%s': %s", path, strerror(errno));
    return abs;
}

struct exec *exec_create(uv_loop_t *loop, const char *workdir, double speed, exec_done_fn done,
                         void *data, char **cause)
{
    if (!loop || !workdir || !*workdir || !done) {
        if (cause)
            *cause = xstrdup("exec_create: missing loop, work directory or callback");
        return NULL;
    }
    if (!(speed > 0 && speed <= 1)) {
        if (cause)
            *cause = xasprintf("invalid speed %g: must be in (0, 1]", speed);
        return NULL;
    }
    /* The kernel may defer a thread's timers by its slack (50 us by default) to batch
     * wake-ups; a sleep task's end is one of them, so the loop thread asks for none. */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    int tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (tick_fd < 0) {
        if (cause)
            *cause = xasprintf("cannot create the executor's timer: %s", strerror(errno));
        return NULL;
    }
    char *abs = make_workdir(workdir, cause);
    if (!abs) {
        close(tick_fd);
        return NULL;
    }

    struct exec *ex = xcalloc(1, sizeof *ex);
    ex->loop = loop;
    ex->workdir = abs;
    ex->speed = speed;
    ex->done = done;
    ex->data = data;
    ex->tick_fd = tick_fd;
    ex->armed_ns = INT64_MAX;
    pthread_mutex_init(&ex->mu, NULL);
    pthread_cond_init(&ex->wake, NULL);

    /* Children get a clean signal state: the daemon ignores SIGPIPE and may block others,
     * and both would otherwise be inherited through exec. */
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGCHLD);
    posix_spawnattr_init(&ex->attr);
    posix_spawnattr_setsigmask(&ex->attr, &none);
    posix_spawnattr_setsigdefault(&ex->attr, &defaults);
    /* A process group per task: what a command forks ends with it (see the top). */
    posix_spawnattr_setpgroup(&ex->attr, 0);
    posix_spawnattr_setflags(&ex->attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                            POSIX_SPAWN_SETPGROUP);

    int rc = uv_async_init(loop, &ex->async, on_async);
    if (rc == 0) {
        ex->async.data = ex;
        uv_unref((uv_handle_t *)&ex->async);
        ex->handles = 1;
        rc = uv_poll_init(loop, &ex->tick, tick_fd);
    }
    if (rc == 0) {
        ex->tick.data = ex;
        ex->handles = 2;
        rc = uv_poll_start(&ex->tick, UV_READABLE, on_tick);
        uv_unref((uv_handle_t *)&ex->tick);
    }
    if (rc != 0) {
        if (cause)
            *cause = xasprintf("cannot set up the executor's wakeups: %s", uv_strerror(rc));
        ex->destroyed = true;
        if (ex->handles == 2)
            uv_close((uv_handle_t *)&ex->tick, on_tick_close);
        else
            close(tick_fd);
        if (ex->handles >= 1)
            uv_close((uv_handle_t *)&ex->async, on_async_close);
        else
            exec_free(ex);
        return NULL;
    }
    return ex;
}

int exec_kill(struct exec *ex, void *arg)
{
    if (!ex || ex->destroyed)
        return -ENOENT;
    for (size_t i = 0; i < ex->heap_len; i++) {
        struct run *r = ex->heap[i];
        if (r->is_sleep && r->res.arg == arg) {
            /* Ends now, through the normal path, so the caller sees one result. */
            r->res.term_signal = SIGKILL;
            end_sleep(ex, r, clock_mono_ns(), TASK_FAILED, false);
            return 0;
        }
    }
    if (!ex->reaper_started)
        return -ENOENT;
    struct run *found = NULL;
    pthread_mutex_lock(&ex->mu);
    for (size_t i = 0; i < ex->table_cap && !found; i++) {
        for (struct run *r = ex->table[i]; r; r = r->next) {
            if (r->res.arg == arg) {
                found = r;
                break;
            }
        }
    }
    pthread_mutex_unlock(&ex->mu);
    /* `found` stays valid: runs are freed only on this thread, after delivery. */
    if (!found || !signal_command(ex, found, SIGTERM, false))
        return -ENOENT;
    deadline_set(ex, found, clock_mono_ns() + GRACE_NS, DUE_KILL);
    return 0;
}

void exec_destroy(struct exec *ex)
{
    if (!ex || ex->destroyed)
        return;
    ex->destroyed = true;

    /* Sleeps end here, undelivered; commands' deadlines give way to the stop's. */
    for (size_t i = 0; i < ex->heap_len; i++) {
        struct run *r = ex->heap[i];
        r->heap_at = 0;
        r->due = DUE_NONE;
        if (r->is_sleep)
            run_free(r);
    }
    ex->heap_len = 0;
    if (!ex->reaper_started && !linger_count(ex)) {
        close_all(ex);
        return;
    }

    /* Every group gets SIGTERM; stop_step, on the timer, waits for them for the grace,
     * then sends SIGKILL, joins the reaper and closes. */
    pthread_mutex_lock(&ex->mu);
    ex->stop = true;
    for (size_t i = 0; i < ex->table_cap; i++) {
        for (struct run *r = ex->table[i]; r; r = r->next) {
            kill(-r->pid, SIGTERM);
            kill(r->pid, SIGTERM);
        }
    }
    pthread_cond_signal(&ex->wake);
    pthread_mutex_unlock(&ex->mu);
    for (size_t i = ex->linger_first; i < ex->linger_end; i++)
        kill(-ex->lingers[i].pgid, SIGTERM);
    int64_t now = clock_mono_ns();
    ex->stop_kill_ns = now + GRACE_NS;
    uv_ref((uv_handle_t *)&ex->tick);
    arm_at(ex, now + STOP_POLL_NS);
}

/* A task's time limit in nanoseconds (0: none), or -1 when it is out of bounds. */
static int64_t timeout_ns(const struct task_spec *spec)
{
    if (spec->timeout_s == 0)
        return 0;
    if (!(spec->timeout_s > 0 && spec->timeout_s <= TASK_TIMEOUT_MAX_S))
        return -1;
    return (int64_t)ceil(spec->timeout_s * 1e9);
}

int exec_start(struct exec *ex, const struct task_spec *spec, void *arg, struct exec_result *now)
{
    if (!ex || !spec)
        return -EINVAL;
    if (ex->destroyed)
        return -ECANCELED;
    int64_t limit_ns = timeout_ns(spec);
    if (limit_ns < 0)
        return -EINVAL;

    switch (spec->kind) {
    case TASK_NOOP:
        if (!now)
            return -EINVAL;
        memset(now, 0, sizeof *now);
        now->key = spec->key;
        now->status = TASK_DONE;
        now->t_start = now->t_end = clock_wall_ns();
        now->arg = arg;
        return EXEC_DONE_NOW;

    case TASK_SLEEP: {
        /* Rounded up, so that the sleep is never a nanosecond short of duration / speed. */
        double need = ceil(spec->duration_s / ex->speed * 1e9);
        if (!(need >= 0 && need <= SLEEP_MAX_NS))
            return -EINVAL;
        struct run *r = run_new(ex, spec->key, arg);
        r->is_sleep = true;
        r->res.t_start = clock_wall_ns();
        r->mono_start = clock_mono_ns();
        if (limit_ns && limit_ns < (int64_t)need)
            deadline_set(ex, r, r->mono_start + limit_ns, DUE_TIMEOUT);
        else
            deadline_set(ex, r, r->mono_start + (int64_t)need, DUE_SLEEP_END);
        running_inc(ex);
        if (now)
            now->t_start = r->res.t_start;
        return 0;
    }

    case TASK_COMMAND: {
        if (!spec->cmd)
            return -EINVAL;
        struct run *r = run_new(ex, spec->key, arg);
        r->res.t_start = clock_wall_ns();
        r->mono_start = clock_mono_ns();
        running_inc(ex);
        if (now)
            now->t_start = r->res.t_start;
        /* After the spawn, `r` may already be reaped and queued; it is freed only on
         * this thread, after delivery, which clears the deadline. */
        if (start_command(ex, r, spec->cmd) && limit_ns)
            deadline_set(ex, r, r->mono_start + limit_ns, DUE_TIMEOUT);
        return 0;
    }

    default:
        return -EINVAL;
    }
}

uint32_t exec_running(const struct exec *ex)
{
    return ex ? ex->running : 0;
}
