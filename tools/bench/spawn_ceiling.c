/*
 * spawn_ceiling — how many processes per second this machine can start, and how close
 * core/runtime/exec gets to that.  Run by hand or by tools/bench/run-all.sh; it prints
 * figures and judges nothing.
 *
 *   spawn_ceiling [-n N] [-k K] [--exec-module]
 *
 * The ceiling is bare posix_spawn of /bin/true with K children in flight, reaped by
 * waitpid in the same thread.  --exec-module then runs N "true" command tasks, K in
 * flight, through exec_create/exec_start on a uv loop: the same spawns plus a task
 * directory, an output file, the reaper thread and the hand-off to the loop.
 */
#include <errno.h>
#include <ftw.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "core/base/clock.h"
#include "core/model/task.h"
#include "core/runtime/exec.h"

extern char **environ;

struct options {
    long spawns;
    long in_flight;
    bool exec_module;
};

static void usage(FILE *fp)
{
    fprintf(fp, "usage: spawn_ceiling [-n SPAWNS] [-k IN_FLIGHT] [--exec-module]\n"
                "  -n SPAWNS       processes to start (default 20000)\n"
                "  -k IN_FLIGHT    children running at once (default 32)\n"
                "  --exec-module   also measure core/runtime/exec running \"true\" tasks\n");
}

static bool parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v <= 0)
        return false;
    *out = v;
    return true;
}

/* Spawns per second, or a negative value when a spawn fails. */
static double bare_ceiling(long spawns, long in_flight)
{
    char *argv[] = {"/bin/true", NULL};
    long started = 0, reaped = 0;
    int64_t t0 = clock_mono_ns();
    while (reaped < spawns) {
        while (started < spawns && started - reaped < in_flight) {
            pid_t pid;
            int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
            if (rc != 0) {
                fprintf(stderr, "spawn_ceiling: cannot run '/bin/true': %s\n", strerror(rc));
                return -1;
            }
            started++;
        }
        int st;
        if (waitpid(-1, &st, 0) > 0)
            reaped++;
        else if (errno != EINTR)
            return -1;
    }
    return (double)spawns / ((double)(clock_mono_ns() - t0) / 1e9);
}

struct module_run {
    struct exec *ex;
    long to_start;
    long delivered;
    long failed;
    uint32_t next_index;
};

static void start_next(struct module_run *m)
{
    struct task_spec spec = {.key = task_key(1, m->next_index++), .kind = TASK_COMMAND,
                             .cmd = "true"};
    m->to_start--;
    if (exec_start(m->ex, &spec, m, NULL) < 0)
        m->failed++;
}

static void on_done(struct exec_result *r, void *data)
{
    struct module_run *m = data;
    m->delivered++;
    if (r->status != TASK_DONE) {
        if (m->failed++ == 0)
            fprintf(stderr, "spawn_ceiling: a task failed: %s\n",
                    r->error ? r->error : "non-zero exit");
    }
    if (m->to_start > 0)
        start_next(m);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Tasks per second through exec, or a negative value on failure. */
static double module_rate(long spawns, long in_flight)
{
    char workdir[] = "/tmp/jackdaw-spawn-ceiling-XXXXXX";
    if (!mkdtemp(workdir)) {
        fprintf(stderr, "spawn_ceiling: cannot create a work directory: %s\n", strerror(errno));
        return -1;
    }
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct module_run m = {.to_start = spawns};
    char *cause = NULL;
    m.ex = exec_create(&loop, workdir, 1.0, on_done, &m, &cause);
    if (!m.ex) {
        fprintf(stderr, "spawn_ceiling: %s\n", cause);
        free(cause);
        return -1;
    }

    int64_t t0 = clock_mono_ns();
    for (long i = 0; i < in_flight && m.to_start > 0; i++)
        start_next(&m);
    /* exec keeps the loop alive exactly while tasks run. */
    uv_run(&loop, UV_RUN_DEFAULT);
    double elapsed = (double)(clock_mono_ns() - t0) / 1e9;

    exec_destroy(m.ex);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    nftw(workdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (m.delivered != spawns || m.failed) {
        fprintf(stderr, "spawn_ceiling: %ld of %ld tasks delivered, %ld failed\n", m.delivered,
                spawns, m.failed);
        return -1;
    }
    return (double)spawns / elapsed;
}

int main(int argc, char **argv)
{
    struct options o = {.spawns = 20000, .in_flight = 32};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--exec-module")) {
            o.exec_module = true;
        } else if ((!strcmp(argv[i], "-n") || !strcmp(argv[i], "--spawns")) && i + 1 < argc) {
            if (!parse_count(argv[++i], &o.spawns))
                goto bad;
        } else if ((!strcmp(argv[i], "-k") || !strcmp(argv[i], "--in-flight")) &&
                   i + 1 < argc) {
            if (!parse_count(argv[++i], &o.in_flight))
                goto bad;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            goto bad;
        }
    }

    double ceiling = bare_ceiling(o.spawns, o.in_flight);
    if (ceiling < 0)
        return 1;
    printf("posix_spawn /bin/true: %ld spawns, %ld in flight, %.0f spawns/s\n", o.spawns,
           o.in_flight, ceiling);
    fflush(stdout);
    if (o.exec_module) {
        double rate = module_rate(o.spawns, o.in_flight);
        if (rate < 0)
            return 1;
        printf("exec module \"true\": %ld tasks, %ld in flight, %.0f tasks/s, %.2f of the "
               "ceiling\n",
               o.spawns, o.in_flight, rate, rate / ceiling);
    }
    return 0;

bad:
    usage(stderr);
    return 2;
}
