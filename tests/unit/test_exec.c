/*
 * test_exec — drives core/runtime/exec through its public API on a private uv loop:
 * noops, stretched sleeps, commands on the direct and the shell path, failures,
 * exactly-once delivery under load, and destroy with work in flight.  Run by `make unit`.
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

static void test_command_output_tail_and_file(void **state)
{
    struct fixture *f = *state;
    run_command(f, task_key(7, 42), "echo hello; echo oops >&2; exit 1");
    assert_int_equal(f->last.status, TASK_FAILED);
    assert_int_equal(f->last.exit_code, 1);
    assert_non_null(f->last_tail);
    assert_non_null(strstr(f->last_tail, "hello\n"));
    assert_non_null(strstr(f->last_tail, "oops\n"));

    char path[128];
    snprintf(path, sizeof path, "%s/task-7-42/output", f->workdir);
    char *out = slurp(path);
    assert_non_null(out);
    assert_string_equal(out, "hello\noops\n");
    free(out);
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
        cmocka_unit_test_setup_teardown(test_command_true, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_exit_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_output_tail_and_file, setup, teardown),
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
