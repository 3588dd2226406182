/*
 * test_exec — drives core/runtime/exec through its public API on a private uv loop:
 * noops, stretched sleeps that are never short, commands on the direct and the shell
 * path, failures, time limits, process groups that end with their task, exactly-once
 * delivery under load, and destroy with work in flight.  Run by `make unit`.
 *
 * Every loop is bounded by an unref'd watchdog timer; the exec keeps the loop alive
 * exactly while tasks run, so a loop that returns on its own means all were delivered.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "core/base/clock.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/runtime/exec.h"

#define WATCHDOG_MS 20000
#define MAX_KEYS 1024

struct fixture {
    uv_loop_t loop;
    uv_timer_t watchdog;
    struct exec *ex;
    char workdir[64];
    bool timed_out;

    int delivered;
    int per_index[MAX_KEYS];     /* deliveries per task index */
    struct exec_result last;     /* copy, strings below */
    char *last_tail;             /* owned */
    char *last_error;            /* owned */

    /* Refill: keep starting "true" commands until `to_start` reaches zero. */
    int to_start;
    uint32_t next_index;
    bool destroy_in_callback;
};

static void on_watchdog(uv_timer_t *t)
{
    struct fixture *f = t->data;
    f->timed_out = true;
    uv_stop(&f->loop);
}

static void start_true(struct fixture *f)
{
    struct task_spec spec = {.key = task_key(1, f->next_index++), .kind = TASK_COMMAND,
                             .cmd = "true"};
    f->to_start--;
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
}

static void on_done(struct exec_result *r, void *data)
{
    struct fixture *f = data;
    assert_ptr_equal(r->arg, f);
    f->delivered++;
    uint32_t index = task_key_index(r->key);
    assert_true(index < MAX_KEYS);
    f->per_index[index]++;
    f->last = *r;
    free(f->last_tail);
    free(f->last_error);
    f->last_tail = r->output_tail ? xstrdup(r->output_tail) : NULL;
    f->last_error = r->error ? xstrdup(r->error) : NULL;
    f->last.output_tail = f->last.error = NULL;
    if (f->destroy_in_callback) {
        exec_destroy(f->ex);
        f->ex = NULL;
        return;
    }
    if (f->to_start > 0)
        start_true(f);
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    uv_timer_init(&f->loop, &f->watchdog);
    f->watchdog.data = f;
    snprintf(f->workdir, sizeof f->workdir, "/tmp/jackdaw-exec-XXXXXX");
    assert_non_null(mkdtemp(f->workdir));
    char *cause = NULL;
    f->ex = exec_create(&f->loop, f->workdir, 1.0, on_done, f, &cause);
    assert_non_null(f->ex);
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    exec_destroy(f->ex);
    uv_close((uv_handle_t *)&f->watchdog, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    nftw(f->workdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f->last_tail);
    free(f->last_error);
    free(f);
    return 0;
}

/* Runs until every started task is delivered (the loop ends) or the watchdog fires. */
static void run_loop(struct fixture *f)
{
    uv_timer_start(&f->watchdog, on_watchdog, WATCHDOG_MS, 0);
    uv_unref((uv_handle_t *)&f->watchdog);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    uv_timer_stop(&f->watchdog);
    assert_false(f->timed_out);
    assert_int_equal(exec_running(f->ex), 0);
}

static void run_loop_to_end(struct fixture *f)
{
    uv_timer_start(&f->watchdog, on_watchdog, WATCHDOG_MS, 0);
    uv_unref((uv_handle_t *)&f->watchdog);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    uv_timer_stop(&f->watchdog);
    assert_false(f->timed_out);
}

static void run_command(struct fixture *f, uint64_t key, const char *cmd)
{
    struct task_spec spec = {.key = key, .kind = TASK_COMMAND, .cmd = (char *)cmd};
    int delivered = f->delivered;
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    /* Never from inside exec_start, even for a spawn failure. */
    assert_int_equal(f->delivered, delivered);
    run_loop(f);
    assert_int_equal(f->delivered, delivered + 1);
    assert_true(f->last.key == key);
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    char *buf = xcalloc(1, 4096);
    size_t n = fread(buf, 1, 4095, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void test_create_rejects_bad_speed(void **state)
{
    struct fixture *f = *state;
    char *cause = NULL;
    assert_null(exec_create(&f->loop, f->workdir, 0.0, on_done, f, &cause));
    assert_non_null(cause);
    assert_non_null(strstr(cause, "speed"));
    free(cause);
}

static void test_noop_done_now(void **state)
{
    struct fixture *f = *state;
    struct task_spec spec = {.key = task_key(3, 4), .kind = TASK_NOOP};
    struct exec_result now;
    int64_t before = clock_wall_ns();
    assert_int_equal(exec_start(f->ex, &spec, f, &now), EXEC_DONE_NOW);
    assert_true(now.key == spec.key);
    assert_int_equal(now.status, TASK_DONE);
    assert_true(now.t_start == now.t_end);
    assert_true(now.t_start >= before);
    assert_ptr_equal(now.arg, f);
    assert_null(now.output_tail);
    assert_null(now.error);
    assert_int_equal(exec_running(f->ex), 0);
    run_loop(f);
    assert_int_equal(f->delivered, 0);
}

/* A correctness check of the speed factor, not a timing benchmark: no upper bound. */
static void test_sleep_is_stretched_by_speed(void **state)
{
    struct fixture *f = *state;
    exec_destroy(f->ex);
    char *cause = NULL;
    f->ex = exec_create(&f->loop, f->workdir, 0.5, on_done, f, &cause);
    assert_non_null(f->ex);
    struct task_spec spec = {.key = task_key(1, 1), .kind = TASK_SLEEP, .duration_s = 0.05};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    assert_int_equal(exec_running(f->ex), 1);
    assert_int_equal(f->delivered, 0);
    run_loop(f);
    assert_int_equal(f->delivered, 1);
    assert_int_equal(f->last.status, TASK_DONE);
    assert_true(f->last.t_end - f->last.t_start >= 90 * 1000000LL);
}

static void test_many_concurrent_sleeps(void **state)
{
    struct fixture *f = *state;
    for (uint32_t i = 0; i < 200; i++) {
        struct task_spec spec = {.key = task_key(2, i), .kind = TASK_SLEEP, .duration_s = 0.02};
        assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    }
    assert_int_equal(exec_running(f->ex), 200);
    run_loop(f);
    assert_int_equal(f->delivered, 200);
    for (int i = 0; i < 200; i++)
        assert_int_equal(f->per_index[i], 1);
}

/* What a sleep must last on an executor of speed `speed`: its duration stretched, never
 * less (DESIGN: "sleep D scaled by the node's speed factor"). */
static bool lasted_at_least(const struct exec_result *r, double duration_s, double speed)
{
    double need_ns = duration_s / speed * 1e9;
    double got_ns = (double)(r->t_end - r->t_start);
    if (got_ns >= need_ns)
        return true;
    print_message("sleep of %.6f s at speed %.2f ran %.6f ms, %.6f ms short\n", duration_s,
                  speed, got_ns / 1e6, (need_ns - got_ns) / 1e6);
    return false;
}

/* Durations that are not whole milliseconds, some under one: the shapes that a timer of
 * millisecond resolution with carried-over slack used to cut short (a 3.788 ms sleep ran
 * 0.04 ms).  A lower bound only: lateness on a loaded machine makes sleeps longer, never
 * shorter, so this cannot flake. */
static const double odd_durations[] = {0.003788, 0.0003, 0.0012, 0.0075, 0.00005, 0.002999,
                                       0.0009, 0.0041, 0.0001, 0.0019};
#define ODD_COUNT (sizeof odd_durations / sizeof odd_durations[0])

static void test_sleep_never_short_one_at_a_time(void **state)
{
    struct fixture *f = *state;
    for (uint32_t i = 0; i < 6 * ODD_COUNT; i++) {
        double d = odd_durations[i % ODD_COUNT];
        struct task_spec spec = {.key = task_key(6, i), .kind = TASK_SLEEP, .duration_s = d};
        assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
        run_loop(f);
        assert_int_equal(f->last.status, TASK_DONE);
        assert_true(lasted_at_least(&f->last, d, 1.0));
    }
}

/* Concurrent sleeps on a slower executor, with results checked as they arrive. */
struct never_short {
    struct fixture *f;
    double speed;
    int short_ones;
};

static void on_done_check(struct exec_result *r, void *data)
{
    struct never_short *c = data;
    c->f->delivered++;
    double d = odd_durations[task_key_index(r->key) % ODD_COUNT];
    if (r->status != TASK_DONE || !lasted_at_least(r, d, c->speed))
        c->short_ones++;
}

/* rounds x per_round sleeps of odd durations on an executor of `speed`, each round
 * started at once and run to its end; returns the executor (for its lead) after
 * checking that every sleep ended done and none short. */
static struct exec *sleeps_never_short(struct fixture *f, double speed, uint32_t job,
                                       uint32_t rounds, uint32_t per_round)
{
    exec_destroy(f->ex);
    struct never_short c = {.f = f, .speed = speed};
    char *cause = NULL;
    f->ex = exec_create(&f->loop, f->workdir, c.speed, on_done_check, &c, &cause);
    assert_non_null(f->ex);
    for (uint32_t round = 0; round < rounds; round++) {
        for (uint32_t i = 0; i < per_round; i++) {
            uint32_t k = round * per_round + i;
            struct task_spec spec = {.key = task_key(job, k), .kind = TASK_SLEEP,
                                     .duration_s = odd_durations[k % ODD_COUNT]};
            assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
        }
        run_loop(f);
    }
    assert_int_equal(f->delivered, rounds * per_round);
    assert_int_equal(c.short_ones, 0);
    return f->ex;
}

static void test_sleep_never_short_concurrent(void **state)
{
    sleeps_never_short(*state, 0.7, 7, 4, 100);
}

/* The timer is armed a lead ahead of each deadline, the kernel's wake-up latency
 * (exec_deadline.c); a wake-up that comes early waits on the clock.  Back-to-back
 * sleeps, four at a time as a node's slots run them, with the lead grown from the
 * first ticks on: none ends before its time. */
static void test_sleep_with_lead_never_short(void **state)
{
    struct exec *ex = sleeps_never_short(*state, 1.0, 8, 100, 4);
    /* Any wake-up comes some time after the armed time: the lead has grown. */
    assert_true(exec_lead_ns(ex) > 0);
}

/* A process that is gone: no such pid, or a zombie its new parent has not reaped. */
static bool process_gone(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return true;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] == 'Z';
}

/* The pid a task wrote to FILE in its directory, or -1. */
static pid_t read_pid(struct fixture *f, uint64_t key, const char *file)
{
    char path[160];
    snprintf(path, sizeof path, "%s/task-%u-%u/%s", f->workdir, task_key_job(key),
             task_key_index(key), file);
    char *text = slurp(path);
    pid_t pid = text ? (pid_t)atoi(text) : -1;
    free(text);
    return pid > 1 ? pid : -1;
}

/* Runs the loop (the exec may need it to finish a kill) until `pid` is gone, for at most
 * `seconds`; kills it by pid if it outlived that, and says whether it went by itself. */
struct gone_wait {
    pid_t pid;
    int ticks;
    bool gone;
};

static void on_gone_tick(uv_timer_t *t)
{
    struct gone_wait *g = t->data;
    if (process_gone(g->pid) || --g->ticks <= 0) {
        g->gone = process_gone(g->pid);
        uv_timer_stop(t);
        uv_close((uv_handle_t *)t, NULL);
    }
}

static bool wait_gone(struct fixture *f, pid_t pid, int seconds)
{
    struct gone_wait g = {.pid = pid, .ticks = seconds * 20};
    uv_timer_t t;
    uv_timer_init(&f->loop, &t);
    t.data = &g;
    uv_timer_start(&t, on_gone_tick, 0, 50);
    run_loop_to_end(f);
    if (!g.gone)
        kill(pid, SIGKILL);
    return g.gone;
}

/* A task ends when its main process exits; what it left running in the background
 * ends with it (issue 13 b). */
static void test_background_child_ends_with_task(void **state)
{
    struct fixture *f = *state;
    uint64_t key = task_key(8, 1);
    run_command(f, key, "sleep 30 & echo $! > bg.pid");
    assert_int_equal(f->last.status, TASK_DONE);
    pid_t pid = read_pid(f, key, "bg.pid");
    assert_true(pid > 0);
    assert_true(wait_gone(f, pid, 10));
}

/* One that ignores SIGTERM is killed after the grace period. */
static void test_stubborn_background_child_killed(void **state)
{
    struct fixture *f = *state;
    uint64_t key = task_key(8, 2);
    run_command(f, key, "(trap '' TERM; exec sleep 30) & echo $! > bg.pid");
    assert_int_equal(f->last.status, TASK_DONE);
    pid_t pid = read_pid(f, key, "bg.pid");
    assert_true(pid > 0);
    assert_true(wait_gone(f, pid, 10));
}

/* exec_kill (job removal) ends the whole group, SIGTERM-proof members included. */
static void test_kill_ends_whole_group(void **state)
{
    struct fixture *f = *state;
    uint64_t key = task_key(8, 3);
    struct task_spec spec = {.key = key, .kind = TASK_COMMAND,
                             .cmd = "(trap '' TERM; exec sleep 31) & echo $! > bg.pid; wait"};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    pid_t pid = -1;
    for (int i = 0; i < 200 && pid < 0; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(10000);
        pid = read_pid(f, key, "bg.pid");
    }
    assert_true(pid > 0);
    assert_int_equal(exec_kill(f->ex, f), 0);
    run_loop(f);
    assert_int_equal(f->delivered, 1);
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_true(wait_gone(f, pid, 10));
}

/* Destroying the exec (the daemon stops) ends every group, SIGTERM-proof members and
 * the leftovers of tasks that already ended included, and the loop still ends. */
static void test_destroy_ends_every_group(void **state)
{
    struct fixture *f = *state;
    uint64_t done_key = task_key(9, 1), run_key = task_key(9, 2);
    /* Ended, leaving a child that ignores SIGTERM: the exec is still on its grace period
     * when it is destroyed. */
    run_command(f, done_key, "(trap '' TERM; exec sleep 32) & echo $! > bg.pid");
    pid_t left = read_pid(f, done_key, "bg.pid");
    struct task_spec spec = {.key = run_key, .kind = TASK_COMMAND,
                             .cmd = "(trap '' TERM; exec sleep 33) & echo $! > bg.pid; wait"};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    pid_t running = -1;
    for (int i = 0; i < 200 && running < 0; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(10000);
        running = read_pid(f, run_key, "bg.pid");
    }
    assert_true(left > 0);
    assert_true(running > 0);
    exec_destroy(f->ex);
    f->ex = NULL;
    run_loop_to_end(f);
    bool left_gone = wait_gone(f, left, 5), running_gone = wait_gone(f, running, 5);
    assert_true(left_gone);
    assert_true(running_gone);
}

/* A time limit ends a sleep that would run past it, as failed and timed out; one that
 * ends within it is done.  Bounds only tell "cut at its limit" from "ran to its end". */
static void test_sleep_time_limit(void **state)
{
    struct fixture *f = *state;
    struct task_spec spec = {.key = task_key(10, 1), .kind = TASK_SLEEP, .duration_s = 10,
                             .timeout_s = 0.05};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop(f);
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_true(f->last.timed_out);
    assert_int_equal(f->last.exit_code, -1);
    assert_true(f->last.t_end - f->last.t_start >= 50 * 1000000LL);
    assert_true(f->last.t_end - f->last.t_start < 10 * 1000000000LL);

    spec = (struct task_spec){.key = task_key(10, 2), .kind = TASK_SLEEP, .duration_s = 0.01,
                              .timeout_s = 10};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop(f);
    assert_int_equal(f->last.status, TASK_DONE);
    assert_false(f->last.timed_out);
}

/* A command past its limit: its group gets SIGTERM (or SIGKILL when it ignores that),
 * it fails as timed out even if it exits 0 on the SIGTERM, and what it started in the
 * background ends too. */
static void test_command_time_limit(void **state)
{
    struct fixture *f = *state;
    struct task_spec spec = {.key = task_key(10, 3), .kind = TASK_COMMAND, .cmd = "sleep 30",
                             .timeout_s = 0.05};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop(f);
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_true(f->last.timed_out);
    assert_int_equal(f->last.term_signal, SIGTERM);

    spec = (struct task_spec){.key = task_key(10, 4), .kind = TASK_COMMAND,
                              .cmd = "trap '' TERM; sleep 30", .timeout_s = 0.05};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop(f);
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_true(f->last.timed_out);
    assert_int_equal(f->last.term_signal, SIGKILL);

    uint64_t key = task_key(10, 5);
    spec = (struct task_spec){.key = key, .kind = TASK_COMMAND,
                              .cmd = "trap 'exit 0' TERM; (trap '' TERM; exec sleep 34) & "
                                     "echo $! > bg.pid; wait",
                              .timeout_s = 0.2};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop(f);
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_true(f->last.timed_out);
    assert_int_equal(f->last.exit_code, 0);
    pid_t pid = read_pid(f, key, "bg.pid");
    assert_true(pid > 0);
    assert_true(wait_gone(f, pid, 10));

    /* Within its limit: done, not timed out. */
    spec = (struct task_spec){.key = task_key(10, 6), .kind = TASK_COMMAND, .cmd = "true",
                              .timeout_s = 30};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop(f);
    assert_int_equal(f->last.status, TASK_DONE);
    assert_false(f->last.timed_out);
}

static void test_time_limit_out_of_bounds(void **state)
{
    struct fixture *f = *state;
    const double bad[] = {-1, NAN, INFINITY, TASK_TIMEOUT_MAX_S * 2};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct task_spec spec = {.key = task_key(10, 7), .kind = TASK_SLEEP, .duration_s = 0.01,
                                 .timeout_s = bad[i]};
        assert_int_equal(exec_start(f->ex, &spec, f, NULL), -EINVAL);
        spec.kind = TASK_COMMAND;
        spec.cmd = "true";
        assert_int_equal(exec_start(f->ex, &spec, f, NULL), -EINVAL);
    }
    assert_int_equal(exec_running(f->ex), 0);
}

static void test_command_true(void **state)
{
    struct fixture *f = *state;
    run_command(f, task_key(1, 2), "true");
    assert_int_equal(f->last.status, TASK_DONE);
    assert_int_equal(f->last.exit_code, 0);
    assert_int_equal(f->last.term_signal, 0);
    assert_null(f->last_tail);
    assert_null(f->last_error);
    assert_true(f->last.t_end >= f->last.t_start);
}

static void test_command_exit_status(void **state)
{
    struct fixture *f = *state;
    run_command(f, task_key(1, 3), "exit 3");
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_int_equal(f->last.exit_code, 3);
    assert_int_equal(f->last.term_signal, 0);
    assert_null(f->last_error);
}

/* stdout goes to "output" (the task's object), stderr to "stderr"; a failure's tail is
 * its stderr's, else its stdout's. */
static void test_command_output_tail_and_file(void **state)
{
    struct fixture *f = *state;
    run_command(f, task_key(7, 42), "echo hello; echo oops >&2; exit 1");
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_int_equal(f->last.exit_code, 1);
    assert_non_null(f->last_tail);
    assert_string_equal(f->last_tail, "oops\n");

    char path[128];
    snprintf(path, sizeof path, "%s/task-7-42/output", f->workdir);
    char *out = slurp(path);
    assert_non_null(out);
    assert_string_equal(out, "hello\n");
    free(out);
    snprintf(path, sizeof path, "%s/task-7-42/stderr", f->workdir);
    out = slurp(path);
    assert_non_null(out);
    assert_string_equal(out, "oops\n");
    free(out);
    /* Nothing on stderr: the tail is stdout's. */
    run_command(f, task_key(7, 43), "echo only-out; exit 2");
    assert_non_null(f->last_tail);
    assert_string_equal(f->last_tail, "only-out\n");
}

/* A command's stderr keeps its last bytes, after a line saying how many went; under the
 * bound it is untouched. */
static void test_stderr_bounded(void **state)
{
    struct fixture *f = *state;
    exec_set_log_bytes(f->ex, 1000);
    run_command(f, task_key(7, 44), "seq 1 5000 >&2; echo done");
    assert_int_equal(f->last.status, TASK_DONE);
    char path[128];
    snprintf(path, sizeof path, "%s/task-7-44/stderr", f->workdir);
    char *err = slurp(path);
    assert_non_null(err);
    const char *note = "[jackdaw: the first 22893 bytes of stderr were dropped; the last 1000 "
                       "follow]\n";
    assert_true(strncmp(err, note, strlen(note)) == 0);
    assert_int_equal(strlen(err), strlen(note) + 1000);
    assert_non_null(strstr(err, "\n4999\n5000\n"));
    free(err);
    run_command(f, task_key(7, 45), "echo short >&2");
    snprintf(path, sizeof path, "%s/task-7-45/stderr", f->workdir);
    err = slurp(path);
    assert_string_equal(err, "short\n");
    free(err);
    exec_set_log_bytes(f->ex, 0);
}

/* A command learns which task it is (exec.h): the job, its index, the node, the
 * attempt and its cores; one the daemon itself was given (a daemon started by a task) is replaced,
 * not doubled. */
static void test_command_task_environment(void **state)
{
    struct fixture *f = *state;
    /* An executor made while the daemon had a stale JACKDAW_TASK in its environment. */
    exec_destroy(f->ex);
    run_loop_to_end(f);
    setenv("JACKDAW_TASK", "stale", 1);
    char *cause = NULL;
    f->ex = exec_create(&f->loop, f->workdir, 1.0, on_done, f, &cause);
    unsetenv("JACKDAW_TASK");
    assert_non_null(f->ex);
    exec_set_node(f->ex, 5);
    struct task_spec spec = {.key = task_key(9, 17), .kind = TASK_COMMAND, .attempt = 2,
                             .cores = 3, .cmd = (char *)"env | grep '^JACKDAW_' | sort; exit 1"};
    int delivered = f->delivered;
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop(f);
    assert_int_equal(f->delivered, delivered + 1);
    assert_non_null(f->last_tail);
    assert_string_equal(f->last_tail,
                        "JACKDAW_ATTEMPT=2\nJACKDAW_CORES=3\nJACKDAW_JOB=9\nJACKDAW_NODE=5\n"
                        "JACKDAW_TASK=17\n");
}

/* What a command used comes with its result: CPU time of the processes it waited for,
 * the bytes they wrote and read; a sleep runs no process and has none. */
static void test_command_usage(void **state)
{
    struct fixture *f = *state;
    run_command(f, task_key(1, 6), "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; "
                                   "head -c 300000 /dev/zero > blob; cat blob > /dev/null");
    assert_int_equal(f->last.status, TASK_DONE);
    const struct task_usage *u = &f->last.usage;
    assert_true(u->measured);
    assert_true(u->user_ns + u->sys_ns > 0);
    assert_true(u->write_bytes >= 300000);
    assert_true(u->read_bytes >= 300000);
    struct task_spec spec = {.key = task_key(1, 7), .kind = TASK_SLEEP, .duration_s = 0.001};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop(f);
    assert_true(f->last.key == task_key(1, 7));
    assert_false(f->last.usage.measured);
}

static void test_output_tail_is_last_kilobyte(void **state)
{
    struct fixture *f = *state;
    run_command(f, task_key(1, 5), "seq 1 2000; echo last-line; exit 2");
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_non_null(f->last_tail);
    assert_true(strlen(f->last_tail) == 1024);
    assert_non_null(strstr(f->last_tail, "1999\n2000\nlast-line\n"));
}

static void test_missing_binary_fails_through_callback(void **state)
{
    struct fixture *f = *state;
    run_command(f, task_key(1, 6), "no-such-binary-xyz --flag");
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_int_equal(f->last.exit_code, -1);
    assert_non_null(f->last_error);
    assert_string_equal(f->last_error, "cannot run 'no-such-binary-xyz': No such file or directory");
}

static void test_killed_by_signal(void **state)
{
    struct fixture *f = *state;
    /* The shell itself dies: its parent, the reaper, sees the signal. */
    run_command(f, task_key(1, 7), "kill -9 $$");
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_int_equal(f->last.term_signal, 9);
    assert_int_equal(f->last.exit_code, -1);

    /* Debian's dash waits for the last command of -c instead of exec'ing it, so here
     * the inner shell's death reaches us as the outer shell's exit 137; a shell that
     * execs passes the signal itself.  Either way the task failed. */
    run_command(f, task_key(1, 8), "sh -c 'kill -9 $$'");
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_true(f->last.term_signal == 9 || f->last.exit_code == 128 + 9);
}

/* The daemon ignores SIGPIPE and a thread may block signals: children must not inherit
 * either, or a pipeline's writer would never die of a closed pipe. */
static void test_children_get_default_signals(void **state)
{
    struct fixture *f = *state;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);
    sigset_t term, oldmask;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, &oldmask);

    run_command(f, task_key(1, 9), "kill -PIPE $$");
    assert_int_equal(f->last.term_signal, SIGPIPE);
    run_command(f, task_key(1, 10), "kill -TERM $$");
    assert_int_equal(f->last.term_signal, SIGTERM);

    pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
    sigaction(SIGPIPE, &old, NULL);
}

/* Which path a command takes shows in what it can do: builtins and assignments need
 * the shell, plain words are exec'd with their arguments split on spaces. */
static void test_direct_and_shell_paths(void **state)
{
    struct fixture *f = *state;
    char path[128];
    char *out;

    run_command(f, task_key(1, 11), "printf  %s,%s:  a=1  b");
    assert_int_equal(f->last.status, TASK_DONE);
    snprintf(path, sizeof path, "%s/task-1-11/output", f->workdir);
    out = slurp(path);
    assert_string_equal(out, "a=1,b:");
    free(out);

    run_command(f, task_key(1, 12), "cd /");
    assert_int_equal(f->last.status, TASK_DONE);

    run_command(f, task_key(1, 13), "JACKDAW_X=yes printenv JACKDAW_X");
    assert_int_equal(f->last.status, TASK_DONE);
    snprintf(path, sizeof path, "%s/task-1-13/output", f->workdir);
    out = slurp(path);
    assert_string_equal(out, "yes\n");
    free(out);

    /* Runs in its task directory, with stdin from /dev/null. */
    run_command(f, task_key(1, 14), "pwd");
    snprintf(path, sizeof path, "%s/task-1-14/output", f->workdir);
    out = slurp(path);
    assert_non_null(strstr(out, "/task-1-14\n"));
    free(out);
    run_command(f, task_key(1, 15), "wc -c");
    snprintf(path, sizeof path, "%s/task-1-15/output", f->workdir);
    out = slurp(path);
    assert_string_equal(out, "0\n");
    free(out);
}

/* A script without "#!" fails exec with ENOEXEC; a terminal's shell would run it. */
static void test_script_without_interpreter_line(void **state)
{
    struct fixture *f = *state;
    char script[128];
    snprintf(script, sizeof script, "%s/plain-script", f->workdir);
    FILE *fp = fopen(script, "w");
    assert_non_null(fp);
    fputs("echo from-script\nexit 4\n", fp);
    fclose(fp);
    chmod(script, 0755);
    run_command(f, task_key(1, 16), script);
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_int_equal(f->last.exit_code, 4);
    assert_string_equal(f->last_tail, "from-script\n");
}

/* The first delivery destroys the exec: nothing may be delivered after that, through
 * either path (timer callback or the async drain), and the loop must still end. */
static void test_destroy_inside_done_callback_sleeps(void **state)
{
    struct fixture *f = *state;
    f->destroy_in_callback = true;
    for (uint32_t i = 0; i < 5; i++) {
        struct task_spec spec = {.key = task_key(5, i), .kind = TASK_SLEEP, .duration_s = 0.01};
        assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    }
    run_loop_to_end(f);
    assert_int_equal(f->delivered, 1);
}

static void test_destroy_inside_done_callback_commands(void **state)
{
    struct fixture *f = *state;
    f->destroy_in_callback = true;
    for (uint32_t i = 0; i < 5; i++) {
        /* Spawn failures queue at once, so several sit in one drain. */
        struct task_spec spec = {.key = task_key(5, i), .kind = TASK_COMMAND,
                                 .cmd = "no-such-binary-xyz"};
        assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    }
    struct task_spec spec = {.key = task_key(5, 9), .kind = TASK_COMMAND, .cmd = "sleep 30"};
    assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    run_loop_to_end(f);
    assert_int_equal(f->delivered, 1);
}

static void test_many_commands_exactly_once(void **state)
{
    struct fixture *f = *state;
    f->to_start = 500;
    for (int i = 0; i < 32; i++)
        start_true(f);
    assert_int_equal(exec_running(f->ex), 32);
    run_loop(f);
    assert_int_equal(f->delivered, 500);
    for (int i = 0; i < 500; i++)
        assert_int_equal(f->per_index[i], 1);
}

struct destroy_ctx {
    struct fixture *f;
    int64_t destroy_ns;
};

static void on_destroy_timer(uv_timer_t *t)
{
    struct destroy_ctx *d = t->data;
    int64_t t0 = clock_mono_ns();
    exec_destroy(d->f->ex);
    d->destroy_ns = clock_mono_ns() - t0;
    d->f->ex = NULL;
    uv_close((uv_handle_t *)t, NULL);
}

static void test_destroy_with_work_in_flight(void **state)
{
    struct fixture *f = *state;
    for (uint32_t i = 0; i < 10; i++) {
        struct task_spec spec = {.key = task_key(4, i), .kind = TASK_SLEEP, .duration_s = 30};
        assert_int_equal(exec_start(f->ex, &spec, f, NULL), 0);
    }
    struct task_spec cmd = {.key = task_key(4, 100), .kind = TASK_COMMAND, .cmd = "sleep 30"};
    assert_int_equal(exec_start(f->ex, &cmd, f, NULL), 0);
    struct task_spec sh = {.key = task_key(4, 101), .kind = TASK_COMMAND,
                           .cmd = "sleep 30; echo never"};
    assert_int_equal(exec_start(f->ex, &sh, f, NULL), 0);

    /* Destroy from inside a loop callback, once the children are surely running. */
    struct destroy_ctx d = {.f = f, .destroy_ns = -1};
    uv_timer_t kill_timer;
    uv_timer_init(&f->loop, &kill_timer);
    kill_timer.data = &d;
    uv_timer_start(&kill_timer, on_destroy_timer, 200, 0);
    uv_timer_start(&f->watchdog, on_watchdog, WATCHDOG_MS, 0);
    uv_unref((uv_handle_t *)&f->watchdog);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    uv_timer_stop(&f->watchdog);
    assert_false(f->timed_out);
    assert_true(d.destroy_ns >= 0);
    assert_int_equal(f->delivered, 0);
    /* Every child was killed and reaped: none is left to wait for. */
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    print_message("exec_destroy took %.1f ms\n", (double)d.destroy_ns / 1e6);
}

int main(void)
{
    alarm(120); /* a hang in exec_destroy's join is beyond the watchdog's reach */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_rejects_bad_speed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noop_done_now, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sleep_is_stretched_by_speed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_concurrent_sleeps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sleep_never_short_one_at_a_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sleep_never_short_concurrent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sleep_with_lead_never_short, setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_child_ends_with_task, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stubborn_background_child_killed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_ends_whole_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_ends_every_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sleep_time_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_time_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_limit_out_of_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_true, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_exit_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_output_tail_and_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_task_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stderr_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_tail_is_last_kilobyte, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_binary_fails_through_callback, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_killed_by_signal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_children_get_default_signals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_direct_and_shell_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_script_without_interpreter_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_inside_done_callback_sleeps, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_destroy_inside_done_callback_commands, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_many_commands_exactly_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_with_work_in_flight, setup, teardown),
    };
    return cmocka_run_group_tests_name("exec", tests, NULL, NULL);
}
