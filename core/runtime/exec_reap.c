/*
 * exec_reap — the executor's reaper thread: it waits for the commands' children, reaps
 * them, reads a failed command's output tail, and posts the finished runs to the loop
 * (exec_post).  Started by exec_spawn.c on an exec's first command and joined by
 * exec.c's stop, both on the loop thread; the rest runs on the reaper.
 *
 * Threads.  The reaper only waits for children, and touches the pid table, the finished
 * queue and the counters under `mu`; results reach the loop through `async`, whose
 * callback swaps out and drains the whole queue.  libuv 1.44 gives no ordering between
 * uv_async_send and its callback, so the mutex is what makes the reaper's writes
 * visible.
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
 * holding `mu`, so the loop, which signals a command only while it is in the table
 * (exec_group.c), never signals a pid that could have been recycled.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/runtime/exec_impl.h"

/* A failed command's output is summarised by its last bytes: the error is usually there. */
#define OUTPUT_TAIL_MAX 1024

/* The exec whose reaper is running: two reapers would steal each other's children. */
static _Atomic(struct exec *) reaper_owner;

/* The last bytes of file `name` of a task's directory, or NULL when it is empty. */
static char *read_tail(const char *workdir, uint64_t key, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/task-%u-%u/%s", workdir, task_key_job(key),
             task_key_index(key), name);
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

/*
 * Keeps the last `keep` bytes of a finished command's stderr: a line saying how many
 * went, then the tail, moved to the front in place (a chunk at a time, on the reaper's
 * thread) and the file cut after it.  A command that wrote gigabytes of warnings leaves
 * at most `keep` of them, the ones nearest its end, which are the ones that say why.
 */
static void trim_stderr(const char *workdir, uint64_t key, uint64_t keep)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/task-%u-%u/stderr", workdir, task_key_job(key),
             task_key_index(key));
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) < 0 || keep == 0 || (uint64_t)st.st_size <= keep) {
        close(fd);
        return;
    }
    uint64_t size = (uint64_t)st.st_size, from = size - keep;
    char head[96];
    int hn = snprintf(head, sizeof head, "[jackdaw: the first %llu bytes of stderr were dropped; "
                      "the last %llu follow]\n", (unsigned long long)from,
                      (unsigned long long)keep);
    /* The tail goes after the note; the note is shorter than what was dropped (from >
     * 0 and keep >= 1 make it so only when from >= hn: else keep the file whole). */
    if ((uint64_t)hn > from) {
        close(fd);
        return;
    }
    char buf[65536];
    uint64_t done = 0;
    bool ok = pwrite(fd, head, (size_t)hn, 0) == hn;
    while (ok && done < keep) {
        size_t want = keep - done < sizeof buf ? (size_t)(keep - done) : sizeof buf;
        ssize_t n = pread(fd, buf, want, (off_t)(from + done));
        ok = n > 0 && pwrite(fd, buf, (size_t)n, (off_t)((uint64_t)hn + done)) == n;
        if (ok)
            done += (uint64_t)n;
    }
    if (!ok || ftruncate(fd, (off_t)((uint64_t)hn + keep)) < 0)
        log_warn("task %llx: cannot cut its stderr to its last %llu bytes: %s",
                 (unsigned long long)key, (unsigned long long)keep, strerror(errno));
    close(fd);
}

/*
 * The bytes a finished command's processes read and wrote (rchar and wchar of
 * /proc/PID/io), read while it is a zombie: the kernel has by then added the counters
 * of every child it waited for, and the file goes with the reap.  Left 0 where /proc
 * is not mounted or hides the process (hidepid).
 */
static void read_io(pid_t pid, struct task_usage *u)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    unsigned long long v;
    const char *at = strstr(buf, "rchar: ");
    if (at && sscanf(at, "rchar: %llu", &v) == 1)
        u->read_bytes = v;
    if ((at = strstr(buf, "wchar: ")) && sscanf(at, "wchar: %llu", &v) == 1)
        u->write_bytes = v;
}

static int64_t timeval_ns(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000;
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
    struct task_usage usage = {.measured = true};
    if (w == 0 && si.si_pid == pid && table_find(ex, pid)) {
        kill(-pid, SIGTERM);
        read_io(pid, &usage);
    }
    /* WNOHANG for the same reason. */
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while ((got = wait4(pid, &st, WNOHANG, &ru)) < 0 && errno == EINTR)
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
    usage.user_ns = timeval_ns(ru.ru_utime);
    usage.sys_ns = timeval_ns(ru.ru_stime);
    usage.max_rss = (uint64_t)(ru.ru_maxrss > 0 ? ru.ru_maxrss : 0) * 1024; /* KiB */
    /* Not above what the spawn inherited from the daemon: the command's own peak is
     * unknown (smaller than the daemon's); 0 says so rather than the daemon's size. */
    if (usage.max_rss <= r->spawn_rss)
        usage.max_rss = 0;
    r->res.usage = usage;
    if (WIFEXITED(st)) {
        r->res.exit_code = WEXITSTATUS(st);
        /* Past its time limit a task fails, even if it handled the SIGTERM and exited 0. */
        r->res.status = r->res.exit_code == 0 && !timed_out ? TASK_DONE : TASK_FAILED;
    } else {
        r->res.exit_code = -1;
        r->res.term_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        r->res.status = TASK_FAILED;
    }
    trim_stderr(ex->workdir, r->res.key, ex->log_bytes);
    /* Why it failed is usually on stderr; a command that says nothing there may have
     * said it on stdout. */
    if (r->res.status == TASK_FAILED) {
        r->res.output_tail = read_tail(ex->workdir, r->res.key, "stderr");
        if (!r->res.output_tail)
            r->res.output_tail = read_tail(ex->workdir, r->res.key, "output");
    }
    exec_post(ex, r);
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

/* Started on the first command so sleep-only executors need no thread and several of
 * them may share a process. */
int reap_start(struct exec *ex, char **error)
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

void reap_join(struct exec *ex)
{
    pthread_join(ex->reaper, NULL);
    atomic_store(&reaper_owner, NULL);
    ex->reaper_started = false;
}
