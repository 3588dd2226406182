/*
 * exec_deadline — the executor's deadlines: one min-heap of runs keyed on
 * CLOCK_MONOTONIC nanoseconds, and the arming of the timerfd behind it.  Called on the
 * loop thread by the rest of core/runtime/exec (exec.c, exec_group.c); the timerfd's
 * callback, on_tick in exec.c, takes from here what fell due.
 *
 * Every sleep's end, every time limit and every "SIGKILL now" that follows a SIGTERM is
 * an entry of the heap, and the timerfd is armed (absolute time) at the earliest; the
 * lingering groups' SIGKILLs (exec_group.c) arm it too.  A timerfd never fires before
 * its time and has no millisecond rounding, unlike a uv_timer, which counts from the
 * loop's cached millisecond clock: sleeps used to end up to a millisecond early and were
 * compensated by shortening later sleeps with the slack of earlier ones, which made the
 * mean right and single sleeps short.  Now a sleep lasts at least its duration over the
 * speed, measured on the monotonic clock, and never shortens another task; the loop
 * thread asks the kernel for no timer slack (exec_create), so a wake-up is late only by
 * the scheduler's delay.
 *
 * That delay is the floor of a sleep's lateness: on the 2-core development VM a bare
 * epoll loop of 8 x 4 timerfds woke 41 us after its deadlines on average (p50 34 us),
 * 4 % of a 1 ms task.  So the timer is armed a lead ahead of the deadline, and a wake-up
 * that comes before it waits the rest out on the clock (deadline_wait): nothing ends
 * before its time, and the wait is what is left of the lead after the kernel's own
 * latency.  The lead follows that latency, as its LEAD_QUANTILE quantile (deadline_woke),
 * so that most wake-ups come after the deadline with no wait and the rest wait a few us.
 * On the probe: lead 30 us, lateness 41 -> 11 us, 96.1 -> 98.9 % for the same CPU.
 * (Waking a fixed millisecond early, when the timer was a uv_timer, was tried: with 8
 * daemons of 8 slots on 2 cores the spinning took the CPU the other daemons needed, and
 * 10 ms sleeps ran 12 ms on average instead of 10.3.  The lead is bounded by LEAD_MAX_NS.)
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/runtime/exec_impl.h"

/* The lead never exceeds this: a wait on the clock is at most this long. */
#define LEAD_MAX_NS 50000
/* The share of wake-ups that come before the deadline and wait: the lead is this
 * quantile of the kernel's wake-up latency, tracked by steps of LEAD_STEP_NS. */
#define LEAD_QUANTILE 0.25
#define LEAD_STEP_NS 2000.0

void deadline_woke(struct exec *ex, int64_t late)
{
    /* Stochastic quantile tracking: the lead settles where a share LEAD_QUANTILE of
     * the latencies are below it. */
    double step = late < ex->lead_ns ? -(1 - LEAD_QUANTILE) * LEAD_STEP_NS
                                     : LEAD_QUANTILE * LEAD_STEP_NS;
    int64_t lead = ex->lead_ns + (int64_t)step;
    ex->lead_ns = lead < 0 ? 0 : lead > LEAD_MAX_NS ? LEAD_MAX_NS : lead;
}

int64_t deadline_wait(const struct exec *ex, int64_t now, int64_t due)
{
    if (due <= now || due - now > ex->lead_ns)
        return now;
    while ((now = clock_mono_ns()) < due)
        ;
    return now;
}

void deadline_arm(struct exec *ex, int64_t when)
{
    if (ex->tick_fd < 0)
        return;
    /* A one-shot timerfd whose time has passed has disarmed itself; disarming it again
     * was a system call at every task end of a node that ran one task at a time. */
    if (when == INT64_MAX && ex->armed_ns <= clock_mono_ns()) {
        ex->armed_ns = ex->armed_for = INT64_MAX;
        return;
    }
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    int64_t at = when;
    if (when != INT64_MAX) {
        at = when - ex->lead_ns;
        if (at < 1)
            at = 1; /* an it_value of zero would disarm */
        its.it_value.tv_sec = (time_t)(at / 1000000000);
        its.it_value.tv_nsec = (long)(at % 1000000000);
    }
    if (timerfd_settime(ex->tick_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        log_error("exec cannot arm its timer: %s", strerror(errno));
    ex->armed_ns = at;
    ex->armed_for = when;
}

void deadline_arm_if_earlier(struct exec *ex, int64_t due)
{
    if (!ex->ticking && !ex->destroyed && due < ex->armed_for)
        deadline_arm(ex, due);
}

int64_t deadline_earliest(const struct exec *ex)
{
    return ex->heap_len ? ex->heap[0]->due_ns : INT64_MAX;
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

void deadline_clear(struct exec *ex, struct run *r)
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

void deadline_set(struct exec *ex, struct run *r, int64_t due_ns, uint8_t due)
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
    deadline_arm_if_earlier(ex, due_ns);
}

struct run *deadline_pop_due(struct exec *ex, int64_t now, uint8_t *due)
{
    if (!ex->heap_len || ex->heap[0]->due_ns > now)
        return NULL;
    struct run *r = ex->heap[0];
    *due = r->due;
    deadline_clear(ex, r);
    return r;
}
