/*
 * sim_sg_proc — the SimGrid engine's process (sim_sg_proc.h): sim_sg_run forks a child
 * that loads libsimgrid, runs the model (sim_sg.c, sim_sg_core.h) and writes its trace events and its
 * result to a pipe; the parent calls the caller's sinks in the order the child wrote
 * them, then waits for the child.  Why a child at all is sim_sg.h's to say; what is
 * here is how: the library's function table, loaded by name in the child only, the
 * pipe's records (raw structs: both ends are this binary), and the reading of a child
 * that died mid-way as an error rather than a short result.
 *
 * Owns the child, the pipe and the table (file-static: one simulation a process);
 * sim_sg_run is the engine's public entry (sim_sg.h), called by tools/cmd/sim_summary.c
 * and the tests; the model (sim_sg.c) calls the pipe's writers.
 */
#include "core/sim/sim_sg.h"

#include <errno.h>
#include <string.h>

#ifndef JACKDAW_SIMGRID

int sim_sg_run(const struct workload *wl, const struct sim_config *cfg, struct sim_result *out,
               const char **why)
{
    memset(out, 0, sizeof *out);
    return sim_sg_check(cfg, wl, why);
}

#else

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sim/sim_sg_proc.h"

/* After SimGrid's other headers, which declare what it uses. */
#include <simgrid/version.h>

/* ---- libsimgrid, loaded in the child ------------------------------------------------ */

static struct sim_sg_lib sg;

/* A failure's text in the child, sent to the parent. */
static char child_why[256];

/* Loads libsimgrid: the ABI of the headers we were built with, then whichever the
 * development package points at.  NULL, or why not. */
static const char *sg_load(void)
{
    char soname[64];
    snprintf(soname, sizeof soname, "libsimgrid.so.%d.%d", SIMGRID_VERSION_MAJOR,
             SIMGRID_VERSION_MINOR);
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libsimgrid.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(child_why, sizeof child_why, "cannot load SimGrid (%s): %s; install "
                 "libsimgrid-dev, or run --engine des", soname, dlerror());
        return child_why;
    }
    void *p;
#define X(member, symbol)                                                                \
    if (!(p = dlsym(h, #symbol))) {                                                      \
        snprintf(child_why, sizeof child_why, "%s has no %s: not the SimGrid %d.%d this "  \
                 "jackdaw was built for", soname, #symbol, SIMGRID_VERSION_MAJOR,        \
                 SIMGRID_VERSION_MINOR);                                                 \
        return child_why;                                                                \
    }                                                                                    \
    memcpy(&sg.member, &p, sizeof p);
    SIM_SG_API(X)
#undef X
    return NULL;
}

/* ---- the pipe from the child to the parent ------------------------------------------- */

enum wire_type { W_PUT = 1, W_SAMPLE, W_POLICY, W_END };

struct wire_put {
    uint32_t node;
    int32_t kind, peer, status;
    uint64_t task;
    int64_t count, bytes, duration, wall;
};

struct wire_sample {
    uint32_t node;
    int64_t wall;
    struct trace_sample s;
};

struct wire_policy {
    uint32_t node;
    int32_t reason;
    int64_t wall;
    char name[TRACE_TEXT_MAX];
};

struct wire_end {
    int32_t rc;
    struct sim_result r;
    char why[256];
};

void sim_sg__wire_put(FILE *wire, uint32_t node, enum trace_kind kind, uint64_t task,
                      int32_t peer, int32_t status, int64_t count, int64_t bytes,
                      int64_t duration_ns, int64_t wall)
{
    struct wire_put w;
    memset(&w, 0, sizeof w); /* the pipe carries every byte, padding too */
    w.node = node;
    w.kind = kind;
    w.peer = peer;
    w.status = status;
    w.task = task;
    w.count = count;
    w.bytes = bytes;
    w.duration = duration_ns;
    w.wall = wall;
    putc(W_PUT, wire);
    fwrite(&w, sizeof w, 1, wire);
}

void sim_sg__wire_sample(FILE *wire, uint32_t node, const struct trace_sample *sample,
                         int64_t wall)
{
    struct wire_sample w;
    memset(&w, 0, sizeof w);
    w.node = node;
    w.wall = wall;
    w.s = *sample;
    putc(W_SAMPLE, wire);
    fwrite(&w, sizeof w, 1, wire);
}

void sim_sg__wire_policy(FILE *wire, uint32_t node, const char *name, int32_t reason,
                         int64_t wall)
{
    struct wire_policy w;
    memset(&w, 0, sizeof w);
    w.node = node;
    w.reason = reason;
    w.wall = wall;
    snprintf(w.name, sizeof w.name, "%s", name);
    putc(W_POLICY, wire);
    fwrite(&w, sizeof w, 1, wire);
}

/* ---- the child: one simulation ------------------------------------------------------ */

static void child_main(const struct workload *wl, const struct sim_config *cfg, int fd)
{
    FILE *wire = fdopen(fd, "w");
    if (!wire)
        _exit(3);
    setvbuf(wire, NULL, _IOFBF, 1 << 20);
    struct wire_end end;
    memset(&end, 0, sizeof end);
    const char *why = sg_load();
    end.rc = why ? -ENOTSUP : sim_sg__simulate(&sg, wl, cfg, wire, &end.r, &why);
    if (end.rc < 0 && why)
        snprintf(end.why, sizeof end.why, "%s", why);
    putc(W_END, wire);
    fwrite(&end, sizeof end, 1, wire);
    fflush(wire);
    _exit(ferror(wire) ? 3 : 0);
}

/* ---- the parent ----------------------------------------------------------------------- */

static char parent_why[512];

/* Reads one record's body; false at a short read (the child died mid-way). */
static bool read_body(FILE *in, void *body, size_t size)
{
    return fread(body, size, 1, in) == 1;
}

int sim_sg_run(const struct workload *wl, const struct sim_config *cfg, struct sim_result *out,
               const char **why)
{
    memset(out, 0, sizeof *out);
    int rc = sim_sg_check(cfg, wl, why);
    if (rc < 0)
        return rc;
    int fds[2];
    if (pipe(fds) < 0) {
        *why = "cannot make a pipe to the SimGrid engine's process";
        return -errno;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        *why = "cannot start the SimGrid engine's process";
        return -err;
    }
    if (pid == 0) {
        /* A simulation nobody waits for stops: the parent killed, so is the child. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
            _exit(3);
        close(fds[0]);
        child_main(wl, cfg, fds[1]);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    if (!in) {
        close(fds[0]);
        kill(pid, SIGKILL);
    }
    bool ended = false;
    struct wire_end end;
    for (int type; in && !ended && (type = getc(in)) != EOF;) {
        if (type == W_PUT) {
            struct wire_put w;
            if (!read_body(in, &w, sizeof w))
                break;
            const struct trace_sink *k = cfg->sinks[w.node];
            k->put(k->ctx, (enum trace_kind)w.kind, w.task, w.peer, w.status, w.count,
                   w.bytes, w.duration, w.wall);
        } else if (type == W_SAMPLE) {
            struct wire_sample w;
            if (!read_body(in, &w, sizeof w))
                break;
            const struct trace_sink *k = cfg->sinks[w.node];
            k->sample(k->ctx, &w.s, w.wall);
        } else if (type == W_POLICY) {
            struct wire_policy w;
            if (!read_body(in, &w, sizeof w))
                break;
            const struct trace_sink *k = cfg->sinks[w.node];
            w.name[sizeof w.name - 1] = '\0';
            k->policy(k->ctx, w.name, w.reason, w.wall);
        } else if (type == W_END) {
            ended = read_body(in, &end, sizeof end);
            break;
        } else {
            break;
        }
    }
    if (in)
        fclose(in);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!ended) {
        if (WIFSIGNALED(status))
            snprintf(parent_why, sizeof parent_why, "the SimGrid engine's process was "
                     "killed by signal %d (SimGrid's messages, if any, are above)",
                     WTERMSIG(status));
        else
            snprintf(parent_why, sizeof parent_why, "the SimGrid engine's process ended "
                     "(status %d) without a result (SimGrid's messages, if any, are above)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        *why = parent_why;
        return -EIO;
    }
    *out = end.r;
    if (end.rc < 0) {
        end.why[sizeof end.why - 1] = '\0';
        snprintf(parent_why, sizeof parent_why, "%s", end.why);
        *why = parent_why;
    }
    return end.rc;
}

#endif
