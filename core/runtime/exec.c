/*
 * exec — a node's executor slots (see exec.h for the contract): the API, the runs from
 * their start to the delivery of their result on the loop thread, the sleeps, the
 * timer's ticks and the stop.  Called by the node daemon (core/runtime/node.c) on its
 * loop thread, and by tests and tools/bench/spawn_ceiling.
 *
 * Owns one timerfd (a uv_poll) and one uv_async for the whole executor, and the queue of
 * finished runs between the reaper and the loop.  The rest lives beside it, sharing
 * exec_impl.h: the heap of deadlines behind the timerfd (exec_deadline.c), starting
 * commands (exec_spawn.c), their process groups and the groups that outlive their task
 * (exec_group.c), the table of running commands by pid (exec_table.c) and the reaper
 * thread (exec_reap.c).
 *
 * Threads.  Everything except the reaper runs on the loop thread.  A run is freed only
 * here, on the loop thread, after its delivery (or when a stop drops it), so the loop
 * may keep a pointer to a command's run that the reaper has meanwhile queued.
 */
#include "core/runtime/exec.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/runtime/exec_impl.h"

/* Longer sleeps are a bad workload, and would overflow the nanosecond arithmetic. */
#define SLEEP_MAX_NS 1e18
/* How often a stopping exec looks whether the groups it signalled are gone. */
#define STOP_POLL_NS (10 * 1000000LL)

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
    free(ex->env);
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

/* Any thread: the reaper's results and the loop's failed starts alike, so that a result
 * never arrives from inside exec_start. */
void exec_post(struct exec *ex, struct run *r)
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

void exec_fail_start(struct exec *ex, struct run *r, char *error)
{
    r->res.status = TASK_FAILED;
    r->res.exit_code = -1;
    r->res.error = error;
    r->res.t_end = clock_wall_ns();
    exec_post(ex, r);
}

/* Takes the finished runs from the reaper: delivered unless the exec is destroyed, their
 * groups' leftovers put on the SIGKILL list either way. */
static void drain_finished(struct exec *ex)
{
    pthread_mutex_lock(&ex->mu);
    struct run *r = ex->queue_head;
    ex->queue_head = ex->queue_tail = NULL;
    pthread_mutex_unlock(&ex->mu);

    bool delivered = false;
    for (struct run *next; r; r = next) {
        next = r->next;
        deadline_clear(ex, r);
        if (r->linger)
            group_linger_add(ex, r->pid, clock_mono_ns() + GRACE_NS);
        /* A done callback may destroy the exec; what is left is then dropped. */
        if (!ex->destroyed) {
            deliver(ex, r);
            delivered = true;
        }
        run_free(r);
    }
    if (delivered && !ex->destroyed && ex->batch_end)
        ex->batch_end(ex->data);
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

static void fall_due(struct exec *ex, struct run *r, uint8_t due, int64_t now)
{
    switch (due) {
    case DUE_SLEEP_END:
        end_sleep(ex, r, now, TASK_DONE, false);
        break;
    case DUE_TIMEOUT:
        if (r->is_sleep) {
            end_sleep(ex, r, now, TASK_FAILED, true);
        } else if (group_signal(ex, r, SIGTERM, true)) {
            deadline_set(ex, r, now + GRACE_NS, DUE_KILL);
        }
        break;
    case DUE_KILL:
        group_signal(ex, r, SIGKILL, false);
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
        if (late)
            group_signal_all(ex, SIGKILL);
        bool reaped_all = ex->children == 0;
        pthread_mutex_unlock(&ex->mu);
        /* Prompt either way: the reaper returns once it has reaped the killed children. */
        if (reaped_all || late)
            reap_join(ex);
    }
    drain_finished(ex);
    group_prune_lingers(ex);
    if (late)
        group_kill_lingers(ex, now, true);
    if (!ex->reaper_started && !group_lingering(ex)) {
        close_all(ex);
        return;
    }
    int64_t next = now + STOP_POLL_NS;
    deadline_arm(ex, late || next < ex->stop_kill_ns ? next : ex->stop_kill_ns);
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
    /* armed_ns stays what the timer was armed at, so that deadline_arm knows it fired. */
    if (ex->destroyed) {
        stop_step(ex);
        return;
    }
    if (ex->armed_ns <= now)
        deadline_woke(ex, now - ex->armed_ns);
    /* The timerfd never fires early, but it is armed a lead ahead of the deadline: what
     * is due is what the clock has passed, after a wait for what the lead brought us to
     * early (the slots of a node started together end together: each is waited for). */
    ex->ticking = true;
    struct run *r;
    uint8_t due;
    bool popped = false;
    for (;;) {
        now = deadline_wait(ex, now, deadline_earliest(ex));
        if (!(r = deadline_pop_due(ex, now, &due)))
            break;
        fall_due(ex, r, due, now);
        popped = true;
        if (ex->destroyed)
            return; /* a done callback destroyed the exec, which now steps its own stop */
    }
    /* Still ticking: what the callback starts is armed below, with the rest. */
    if (popped && ex->batch_end) {
        ex->batch_end(ex->data);
        if (ex->destroyed)
            return;
    }
    group_kill_lingers(ex, now, false);
    ex->ticking = false;
    int64_t next = deadline_earliest(ex), linger_kill = group_linger_next(ex);
    deadline_arm(ex, linger_kill < next ? linger_kill : next);
}

/* ---- public ---- */

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
    char *abs = spawn_workdir(workdir, cause);
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
    ex->armed_ns = ex->armed_for = INT64_MAX;
    pthread_mutex_init(&ex->mu, NULL);
    pthread_cond_init(&ex->wake, NULL);
    spawn_attr_init(&ex->attr);
    spawn_env_init(ex);

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
    pthread_mutex_lock(&ex->mu);
    struct run *found = table_find_arg(ex, arg);
    pthread_mutex_unlock(&ex->mu);
    /* `found` stays valid: runs are freed only on this thread, after delivery. */
    if (!found || !group_signal(ex, found, SIGTERM, false))
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
    if (!ex->reaper_started && !group_lingering(ex)) {
        close_all(ex);
        return;
    }

    /* Every group gets SIGTERM; stop_step, on the timer, waits for them for the grace,
     * then sends SIGKILL, joins the reaper and closes. */
    pthread_mutex_lock(&ex->mu);
    ex->stop = true;
    group_signal_all(ex, SIGTERM);
    pthread_cond_signal(&ex->wake);
    pthread_mutex_unlock(&ex->mu);
    group_term_lingers(ex);
    int64_t now = clock_mono_ns();
    ex->stop_kill_ns = now + GRACE_NS;
    uv_ref((uv_handle_t *)&ex->tick);
    deadline_arm(ex, now + STOP_POLL_NS);
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
        /* Runs before this one: hand-ons after a death, and failed runs retried. */
        r->attempt = spec->attempt + spec->failures;
        r->cores = task_cores(spec);
        running_inc(ex);
        if (now)
            now->t_start = r->res.t_start;
        /* After the spawn, `r` may already be reaped and queued; it is freed only on
         * this thread, after delivery, which clears the deadline. */
        if (spawn_command(ex, r, spec->cmd) && limit_ns)
            deadline_set(ex, r, r->mono_start + limit_ns, DUE_TIMEOUT);
        return 0;
    }

    default:
        return -EINVAL;
    }
}

void exec_set_node(struct exec *ex, uint32_t node)
{
    ex->node = node;
}

void exec_set_batch_end(struct exec *ex, void (*fn)(void *data))
{
    ex->batch_end = fn;
}

void exec_set_log_bytes(struct exec *ex, uint64_t bytes)
{
    ex->log_bytes = bytes;
}

int64_t exec_lead_ns(const struct exec *ex)
{
    return ex ? ex->lead_ns : 0;
}

uint32_t exec_running(const struct exec *ex)
{
    return ex ? ex->running : 0;
}
