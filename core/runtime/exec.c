/*
 * exec — a node's executor slots (see exec.h for the contract).  Owns one uv_timer per
 * running sleep, one uv_async for the whole executor, the reaper thread, the table of
 * running commands by pid and the queue of finished ones.  Called by the node daemon
 * (core/runtime/node.c) on its loop thread, and by tests and tools/bench/spawn_ceiling.
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
 * holding `mu`, and exec_destroy signals only pids in the table under `mu`, so a pid
 * is never signalled after it could have been recycled.
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
#include <sys/stat.h>
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
/* Longer sleeps are a bad workload, and would overflow the timer's uint64 arithmetic. */
#define SLEEP_MAX_MS 1e12

/* One started task until its result is delivered. */
struct run {
    struct exec *ex;          /* borrowed */
    struct run *next;         /* pid-table bucket chain, or the finished queue */
    struct run *sleep_prev;   /* running-sleep list; sleeps only */
    struct run *sleep_next;
    uv_timer_t timer;         /* sleeps only */
    pid_t pid;                /* commands only, once spawned */
    uint64_t timer_ms;        /* sleeps only: the delay the timer was given */
    struct exec_result res;   /* output_tail and error owned */
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
    struct run *sleeps;       /* running sleeps, for exec_destroy */
    /* Sleep emulation: libuv timers have 1 ms resolution and fire late by the loop's
     * wake-up latency (0.5-1 ms here, 5-10% of a 10 ms task).  `extra_ns` is a running
     * mean of how much later than asked timers fire; it is taken off each delay, and
     * `carry_ns` diffuses the sub-millisecond remainder over the next sleeps, so that
     * sleeps last D on average, each within about a millisecond. */
    int64_t extra_ns;
    int64_t carry_ns;
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

/* Frees the result's strings but not `r`: a sleep's run also holds its closing timer. */
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

static void on_timer_close(uv_handle_t *h)
{
    struct run *r = h->data;
    struct exec *ex = r->ex;
    run_free(r);
    handle_closed(ex);
}

static void on_async(uv_async_t *h)
{
    struct exec *ex = h->data;
    pthread_mutex_lock(&ex->mu);
    struct run *r = ex->queue_head;
    ex->queue_head = ex->queue_tail = NULL;
    pthread_mutex_unlock(&ex->mu);

    for (struct run *next; r; r = next) {
        next = r->next;
        /* A done callback may destroy the exec; what is left is then dropped. */
        if (!ex->destroyed)
            deliver(ex, r);
        run_free(r);
    }
}

static void on_sleep_done(uv_timer_t *t)
{
    struct run *r = t->data;
    struct exec *ex = r->ex;
    /* Unlink first: exec_destroy, if the callback calls it, must not close this timer twice. */
    if (r->sleep_prev)
        r->sleep_prev->sleep_next = r->sleep_next;
    else
        ex->sleeps = r->sleep_next;
    if (r->sleep_next)
        r->sleep_next->sleep_prev = r->sleep_prev;
    r->res.t_end = clock_wall_ns();
    int64_t extra = r->res.t_end - r->res.t_start - (int64_t)r->timer_ms * 1000000;
    if (extra > -2000000 && extra < 20000000)
        ex->extra_ns += (extra - ex->extra_ns) / 16;
    deliver(ex, r);
    uv_close((uv_handle_t *)&r->timer, on_timer_close);
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
    pthread_mutex_lock(&ex->mu);
    /* WNOHANG, because the zombie waitid saw may be gone: posix_spawn reaps a child whose
     * exec failed itself (while we waited for mu), and its pid may even be in use again
     * by a child that is still running. */
    while ((got = waitpid(pid, &st, WNOHANG)) < 0 && errno == EINTR)
        ;
    if (got == pid) {
        r = table_remove(ex, pid);
        if (r)
            ex->children--;
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
        r->res.status = r->res.exit_code == 0 ? TASK_DONE : TASK_FAILED;
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
                                                O_CREAT | O_TRUNC | O_WRONLY, 0644)) &&
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

static void start_command(struct exec *ex, struct run *r, const char *cmd)
{
    char *error = NULL;
    if (!ex->reaper_started && start_reaper(ex, &error) != 0) {
        fail_start(ex, r, error);
        return;
    }

    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/task-%u-%u", ex->workdir, task_key_job(r->res.key),
                     task_key_index(r->res.key));
    if (n < 0 || (size_t)n >= sizeof dir) {
        fail_start(ex, r, xasprintf("cannot create task directory in '%s': name too long",
                                    ex->workdir));
        return;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fail_start(ex, r, xasprintf("cannot create task directory '%s': %s", dir,
                                    strerror(errno)));
        return;
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
}

/* ---- public ---- */

/* mkdir -p, then the absolute path. */
static char *make_workdir(const char *path, char **cause)
{
    char *failed = NULL;
    int rc = fs_mkdirs(path, 0755, &failed);
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
    char *abs = make_workdir(workdir, cause);
    if (!abs)
        return NULL;

    struct exec *ex = xcalloc(1, sizeof *ex);
    ex->loop = loop;
    ex->workdir = abs;
    ex->speed = speed;
    ex->done = done;
    ex->data = data;
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
    /* A process group per task, so exec_destroy also kills what a shell command forked. */
    posix_spawnattr_setpgroup(&ex->attr, 0);
    posix_spawnattr_setflags(&ex->attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                            POSIX_SPAWN_SETPGROUP);

    int rc = uv_async_init(loop, &ex->async, on_async);
    if (rc != 0) {
        if (cause)
            *cause = xasprintf("cannot create the executor's wakeup: %s", uv_strerror(rc));
        exec_free(ex);
        return NULL;
    }
    ex->async.data = ex;
    uv_unref((uv_handle_t *)&ex->async);
    ex->handles = 1;
    return ex;
}

int exec_kill(struct exec *ex, void *arg)
{
    if (!ex || ex->destroyed)
        return -ENOENT;
    for (struct run *r = ex->sleeps; r; r = r->sleep_next) {
        if (r->res.arg == arg) {
            /* Ends now, through the normal path, so the caller sees one result. */
            uv_timer_stop(&r->timer);
            r->res.status = TASK_FAILED;
            r->res.exit_code = -1;
            r->res.term_signal = SIGKILL;
            on_sleep_done(&r->timer);
            return 0;
        }
    }
    int rc = -ENOENT;
    if (ex->reaper_started) {
        pthread_mutex_lock(&ex->mu);
        for (size_t i = 0; i < ex->table_cap && rc; i++) {
            for (struct run *r = ex->table[i]; r; r = r->next) {
                if (r->res.arg == arg) {
                    kill(-r->pid, SIGKILL);
                    kill(r->pid, SIGKILL);
                    rc = 0;
                    break;
                }
            }
        }
        pthread_mutex_unlock(&ex->mu);
    }
    return rc;
}

void exec_destroy(struct exec *ex)
{
    if (!ex || ex->destroyed)
        return;
    ex->destroyed = true;

    if (ex->reaper_started) {
        pthread_mutex_lock(&ex->mu);
        ex->stop = true;
        for (size_t i = 0; i < ex->table_cap; i++) {
            for (struct run *r = ex->table[i]; r; r = r->next) {
                kill(-r->pid, SIGKILL); /* its process group: what a shell forked */
                kill(r->pid, SIGKILL);  /* in case the task left its group */
            }
        }
        pthread_cond_signal(&ex->wake);
        pthread_mutex_unlock(&ex->mu);
        /* Prompt: the children are dying, and the reaper returns once it has reaped them. */
        pthread_join(ex->reaper, NULL);
        atomic_store(&reaper_owner, NULL);
    }

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

    for (struct run *r = ex->sleeps, *next; r; r = next) {
        next = r->sleep_next;
        uv_close((uv_handle_t *)&r->timer, on_timer_close);
    }
    ex->sleeps = NULL;
    uv_close((uv_handle_t *)&ex->async, on_async_close);
}

int exec_start(struct exec *ex, const struct task_spec *spec, void *arg, struct exec_result *now)
{
    if (!ex || !spec)
        return -EINVAL;
    if (ex->destroyed)
        return -ECANCELED;

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
        double ms = spec->duration_s / ex->speed * 1000.0;
        if (!(ms >= 0 && ms <= SLEEP_MAX_MS))
            return -EINVAL;
        struct run *r = run_new(ex, spec->key, arg);
        uv_timer_init(ex->loop, &r->timer);
        r->timer.data = r;
        ex->handles++;
        r->sleep_next = ex->sleeps;
        if (ex->sleeps)
            ex->sleeps->sleep_prev = r;
        ex->sleeps = r;
        /* Timers count from the loop's cached time, which lags after a long turn; the
         * sleep must count from t_start. */
        uv_update_time(ex->loop);
        r->res.t_start = clock_wall_ns();
        int64_t want = (int64_t)(ms * 1e6) - ex->extra_ns + ex->carry_ns;
        if (want < 0)
            want = 0;
        r->timer_ms = (uint64_t)(want / 1000000);
        ex->carry_ns = want - (int64_t)r->timer_ms * 1000000;
        uv_timer_start(&r->timer, on_sleep_done, r->timer_ms, 0);
        running_inc(ex);
        return 0;
    }

    case TASK_COMMAND: {
        if (!spec->cmd)
            return -EINVAL;
        struct run *r = run_new(ex, spec->key, arg);
        r->res.t_start = clock_wall_ns();
        running_inc(ex);
        start_command(ex, r, spec->cmd);
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
