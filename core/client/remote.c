/*
 * remote — see remote.h.  Plain fork/exec and poll rather than the client's libuv loop:
 * the launcher runs before any connection exists and waits on nothing but these pipes.
 */
#include "core/client/remote.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/xalloc.h"
#include "core/client/agent.h"
#include "core/client/launcher_impl.h"
#include "core/model/hostfile.h"

#define DEFAULT_RSH "ssh -o BatchMode=yes"
#define ERR_TAIL 1024

/* One remote shell (or the one srun) and the agents it carries. */
struct proc {
    char label[HOSTFILE_NAME_MAX + 32]; /* its host (or "srun") for messages */
    pid_t pid;              /* 0 once reaped */
    int status;             /* wait status once reaped */
    int in, out, err;       /* our ends; -1 when closed */
    char line[1024];        /* a partial line of its output */
    size_t line_len;
    char err_tail[ERR_TAIL + 1]; /* the last of its error output */
    size_t err_len;
    bool files;             /* out and err read files it writes (srun: see begin_slurm) */
};

struct rnode {
    uint32_t proc;          /* the proc that carries its agent */
    char label[HOSTFILE_NAME_MAX + 32]; /* "host n02 (hosts:3)" for messages */
    bool ready, started;
};

struct remote {
    const struct launch_options *o;
    struct cluster *cl;
    uint32_t count;         /* daemons */
    uint32_t nagents;       /* count, and one more for a collector on another host */
    struct rnode *nodes;    /* nagents: the daemons', then the collector's */
    struct proc *procs;
    uint32_t nprocs;
};

/* ---- words and command lines -------------------------------------------------------- */

/* A word quoted for a POSIX shell: the remote side runs the command line through one. */
static void quote(char **line, const char *word)
{
    size_t n = strlen(*line), extra = 3;
    for (const char *p = word; *p; p++)
        extra += *p == '\'' ? 4 : 1;
    *line = xrealloc(*line, n + extra + 1);
    char *q = *line + n;
    if (n)
        *q++ = ' ';
    *q++ = '\'';
    for (const char *p = word; *p; p++) {
        if (*p == '\'') {
            memcpy(q, "'\\''", 4);
            q += 4;
        } else {
            *q++ = *p;
        }
    }
    *q++ = '\'';
    *q = '\0';
}

/* The words of --rsh: split on blanks, as a user types "ssh -o BatchMode=yes". */
static char **split_words(const char *text, size_t *n)
{
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    for (const char *p = text; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *s = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        v = xgrow(v, &cap, *n + 2, sizeof *v);
        v[(*n)++] = xstrndup(s, (size_t)(p - s));
    }
    v = xgrow(v, &cap, *n + 1, sizeof *v);
    v[*n] = NULL;
    return v;
}

static void free_words(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* ---- processes ---------------------------------------------------------------------- */

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Starts argv with a pipe on its standard input and its output and error going to
 * pipes, or with `files` to the files out_path and err_path (which we read as they
 * grow), in its own session (a ^C at the launching terminal must not reach the remote
 * shells half-way). */
static int spawn_to(struct proc *p, char **argv, const char *out_path, const char *err_path,
                    char **cause)
{
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) < 0) {
        *cause = xasprintf("cannot make a pipe: %s", strerror(errno));
        return -errno;
    }
    if (out_path) {
        p->files = true;
        out[1] = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        err[1] = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        out[0] = open(out_path, O_RDONLY | O_CLOEXEC);
        err[0] = open(err_path, O_RDONLY | O_CLOEXEC);
        if (out[0] < 0 || out[1] < 0 || err[0] < 0 || err[1] < 0) {
            int e = errno;
            for (int k = 0; k < 2; k++) {
                close(in[k]);
                if (out[k] >= 0)
                    close(out[k]);
                if (err[k] >= 0)
                    close(err[k]);
            }
            *cause = xasprintf("cannot open '%s' or '%s': %s", out_path, err_path, strerror(e));
            return -e;
        }
    } else if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
        int e = errno;
        close(in[0]);
        close(in[1]);
        *cause = xasprintf("cannot make a pipe: %s", strerror(e));
        return -e;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        for (int k = 0; k < 2; k++) {
            close(in[k]);
            close(out[k]);
            close(err[k]);
        }
        *cause = xasprintf("cannot fork: %s", strerror(e));
        return -e;
    }
    if (pid == 0) {
        setsid();
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    p->pid = pid;
    p->in = in[1];
    p->out = out[0];
    p->err = err[0];
    set_nonblock(p->out);
    set_nonblock(p->err);
    return 0;
}

static int spawn(struct proc *p, char **argv, char **cause)
{
    return spawn_to(p, argv, NULL, NULL, cause);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static bool reap(struct proc *p)
{
    if (p->pid > 0 && waitpid(p->pid, &p->status, WNOHANG) == p->pid) {
        p->pid = 0;
        return true;
    }
    return p->pid == 0;
}

static char *describe_exit(const struct proc *p)
{
    const char *tail = p->err_tail;
    while (*tail == '\n' || *tail == ' ')
        tail++;
    char *why = WIFEXITED(p->status)
                    ? xasprintf("the remote shell exited with status %d", WEXITSTATUS(p->status))
                    : xasprintf("the remote shell was killed by signal %d", WTERMSIG(p->status));
    char *all = *tail ? xasprintf("%s: %s", why, tail) : xstrdup(why);
    free(why);
    size_t n = strlen(all);
    while (n && (all[n - 1] == '\n' || all[n - 1] == ' '))
        all[--n] = '\0';
    return all;
}

/* ---- the agents' lines -------------------------------------------------------------- */

/* One line of proc `pi`'s output; -EPROTO with *cause for a line that claims to be an
 * agent's and is not right. */
static int on_line(struct remote *r, uint32_t pi, const char *line, char **cause)
{
    struct agent_line al;
    char *why = NULL;
    enum agent_line_kind kind = agent_parse_line(line, &al, &why);
    if (kind == AGENT_LINE_OTHER)
        return 0;
    const char *label = r->procs[pi].label;
    uint32_t k = al.id == AGENT_ID_COLLECTOR && r->nagents > r->count ? r->count : al.id;
    if (kind == AGENT_LINE_BAD || k >= r->nagents || r->nodes[k].proc != pi) {
        *cause = why ? xasprintf("%s: %s", label, why)
                     : xasprintf("%s: a line from an agent for node %u, which it does not run",
                                 label, al.id);
        free(why);
        return -EPROTO;
    }
    struct rnode *rn = &r->nodes[k];
    if (k == r->count) {
        struct cluster_collector *cc = &r->cl->collector;
        if (kind == AGENT_LINE_READY && !rn->ready) {
            snprintf(cc->host, sizeof cc->host, "%s", al.addr);
            cc->port = al.port;
            rn->ready = true;
        } else if (kind == AGENT_LINE_STARTED && rn->ready && !rn->started) {
            cc->remote_pid = al.pid;
            rn->started = true;
        }
        return 0;
    }
    struct cluster_node *cn = &r->cl->nodes[k];
    if (kind == AGENT_LINE_READY && !rn->ready) {
        snprintf(cn->host, sizeof cn->host, "%s", al.addr);
        cn->port = al.port;
        if (!cn->slots)
            cn->slots = al.slots;
        if (!cn->name[0])
            snprintf(cn->name, sizeof cn->name, "%s", al.host);
        rn->ready = true;
    } else if (kind == AGENT_LINE_STARTED && rn->ready && !rn->started) {
        cn->remote_pid = al.pid;
        rn->started = true;
    }
    return 0;
}

/* Reads what proc pi has written; lines go to on_line. */
static int drain(struct remote *r, uint32_t pi, char **cause)
{
    struct proc *p = &r->procs[pi];
    char buf[4096];
    ssize_t n = -1;
    while (p->err >= 0 && (n = read(p->err, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno != EINTR && errno != EAGAIN)
                close_fd(&p->err);
            break;
        }
        /* Keep the last ERR_TAIL bytes. */
        size_t keep = (size_t)n > ERR_TAIL ? ERR_TAIL : (size_t)n;
        const char *src = buf + (size_t)n - keep;
        if (p->err_len + keep > ERR_TAIL) {
            size_t drop = p->err_len + keep - ERR_TAIL;
            memmove(p->err_tail, p->err_tail + drop, p->err_len - drop);
            p->err_len -= drop;
        }
        for (size_t k = 0; k < keep; k++)
            p->err_tail[p->err_len++] = src[k] ? src[k] : ' ';
        p->err_tail[p->err_len] = '\0';
    }
    if (n == 0 && !p->files)
        close_fd(&p->err);
    n = -1;
    while (p->out >= 0 && (n = read(p->out, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno != EINTR && errno != EAGAIN)
                close_fd(&p->out);
            break;
        }
        for (ssize_t k = 0; k < n; k++) {
            if (buf[k] != '\n') {
                if (p->line_len < sizeof p->line - 1)
                    p->line[p->line_len++] = buf[k];
                continue;
            }
            p->line[p->line_len] = '\0';
            p->line_len = 0;
            int rc = on_line(r, pi, p->line, cause);
            if (rc < 0)
                return rc;
        }
    }
    if (n == 0 && !p->files)
        close_fd(&p->out);
    return 0;
}

static bool all(const struct remote *r, bool started)
{
    for (uint32_t i = 0; i < r->nagents; i++)
        if (!(started ? r->nodes[i].started : r->nodes[i].ready))
            return false;
    return true;
}

/* Waits until every agent has said `started` (or `ready`), a remote shell failed, or
 * the step's time is up. */
static int wait_for(struct remote *r, bool started, char **cause)
{
    int timeout = r->o->start_timeout_ms > 0 ? r->o->start_timeout_ms : 30000;
    int64_t deadline = clock_mono_ns() + (int64_t)timeout * 1000000;
    struct pollfd *fds = xcalloc(2 * r->nprocs, sizeof *fds);
    int rc = 0;
    while (rc == 0 && !all(r, started)) {
        size_t nfds = 0;
        for (uint32_t i = 0; i < r->nprocs; i++) {
            /* A file is always readable: it is read each slice instead. */
            if (r->procs[i].files)
                continue;
            if (r->procs[i].out >= 0)
                fds[nfds++] = (struct pollfd){.fd = r->procs[i].out, .events = POLLIN};
            if (r->procs[i].err >= 0)
                fds[nfds++] = (struct pollfd){.fd = r->procs[i].err, .events = POLLIN};
        }
        int64_t left = deadline - clock_mono_ns();
        if (left <= 0)
            break;
        /* Short slices: a remote shell that exits is seen by waitpid, not by poll. */
        poll(fds, nfds, left > 50000000 ? 50 : (int)(left / 1000000) + 1);
        for (uint32_t i = 0; rc == 0 && i < r->nprocs; i++) {
            rc = drain(r, i, cause);
            if (rc == 0 && reap(&r->procs[i])) {
                /* Its last words may have come with its exit. */
                rc = drain(r, i, cause);
                for (uint32_t k = 0; rc == 0 && k < r->nagents; k++) {
                    struct rnode *rn = &r->nodes[k];
                    if (rn->proc != i || (started ? rn->started : rn->ready))
                        continue;
                    char *why = describe_exit(&r->procs[i]);
                    *cause = xasprintf("%s: %s", rn->label, why);
                    free(why);
                    rc = -ECHILD;
                }
            }
        }
    }
    free(fds);
    if (rc == 0 && !all(r, started)) {
        for (uint32_t k = 0; k < r->nagents; k++) {
            struct rnode *rn = &r->nodes[k];
            if (started ? rn->started : rn->ready)
                continue;
            const char *tail = r->procs[rn->proc].err_tail;
            *cause = xasprintf("%s: no answer from its agent within %.1f s (%s)%s%s", rn->label,
                               timeout / 1000.0,
                               started ? "it was sent the cluster file" : "it was started",
                               *tail ? "; its remote shell said: " : "", tail);
            break;
        }
        rc = -ETIMEDOUT;
    }
    return rc;
}

/*
 * Writes `bytes` to every remote shell's standard input at once, by `deadline_ns`
 * (monotonic): a cluster file of thousands of nodes is more than a pipe holds, so each
 * shell takes it at its own pace, side by side, and an agent that never reads must not
 * hang the launch.  A shell that is gone (EPIPE: SIGPIPE is ignored by main) or that
 * took too long is left out; wait_for reports it, with its exit status or its silence.
 */
static void send_to_all(struct remote *r, const char *bytes, size_t n, int64_t deadline_ns)
{
    size_t *done = xcalloc(r->nprocs, sizeof *done);
    struct pollfd *fds = xcalloc(r->nprocs, sizeof *fds);
    uint32_t *who = xcalloc(r->nprocs, sizeof *who);
    for (uint32_t i = 0; i < r->nprocs; i++)
        if (r->procs[i].in >= 0)
            set_nonblock(r->procs[i].in);
    for (;;) {
        uint32_t pending = 0;
        for (uint32_t i = 0; i < r->nprocs; i++) {
            struct proc *p = &r->procs[i];
            while (p->in >= 0 && done[i] < n) {
                ssize_t w = write(p->in, bytes + done[i], n - done[i]);
                if (w > 0) {
                    done[i] += (size_t)w;
                } else {
                    if (w < 0 && errno != EAGAIN && errno != EINTR)
                        close_fd(&p->in);
                    break;
                }
            }
            if (p->in >= 0 && done[i] < n) {
                fds[pending] = (struct pollfd){.fd = p->in, .events = POLLOUT};
                who[pending++] = i;
            }
        }
        int64_t left = deadline_ns - clock_mono_ns();
        if (!pending || left <= 0)
            break;
        poll(fds, pending, left > 100000000 ? 100 : (int)(left / 1000000) + 1);
    }
    free(who);
    free(fds);
    free(done);
}

static int64_t step_deadline(const struct remote *r)
{
    int timeout = r->o->start_timeout_ms > 0 ? r->o->start_timeout_ms : 30000;
    return clock_mono_ns() + (int64_t)timeout * 1000000;
}

/* ---- begin, finish, abort ----------------------------------------------------------- */

static void resolve(const char *name, char *out, size_t n)
{
    const char *at = strrchr(name, '@');
    const char *host = at ? at + 1 : name;
    if (strlen(host) < n && hostfile_is_address(host)) {
        memcpy(out, host, strlen(host) + 1);
        return;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    out[0] = '\0';
    if (getaddrinfo(host, NULL, &hints, &ai) == 0 && ai) {
        if (getnameinfo(ai->ai_addr, ai->ai_addrlen, out, (socklen_t)n, NULL, 0,
                        NI_NUMERICHOST) != 0)
            out[0] = '\0';
        freeaddrinfo(ai);
    }
}

/* The agent's command line (one string, for the remote shell to run). */
enum agent_role { ROLE_NODE, ROLE_SLURM, ROLE_COLLECTOR };

static char *agent_line(const struct launch_options *o, const char *exe, const char *workdir,
                        uint32_t id, const char *addr, int port, enum agent_role role)
{
    char *line = xstrdup("");
    char ids[16], ports[16], timeout[16];
    snprintf(ids, sizeof ids, "%u", id);
    snprintf(ports, sizeof ports, "%d", port);
    int t = o->start_timeout_ms > 0 ? o->start_timeout_ms : 30000;
    snprintf(timeout, sizeof timeout, "%d", 2 * t / 1000 + 5);
    const char *words[] = {exe, "agent", "--workdir", workdir, "--log-level",
                           o->log_level ? o->log_level : "info", "--timeout", timeout};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        quote(&line, words[k]);
    if (role == ROLE_COLLECTOR) {
        quote(&line, "--collector");
        if (o->workload_name) {
            quote(&line, "--workload-name");
            quote(&line, o->workload_name);
        }
        if (o->workload_digest) {
            quote(&line, "--workload-digest");
            quote(&line, o->workload_digest);
        }
    } else if (role == ROLE_SLURM) {
        quote(&line, "--slurm");
        quote(&line, "--exec");
        quote(&line, "--slots");
        quote(&line, o->per_task ? "slurm-task" : "slurm-node");
    } else {
        quote(&line, "--id");
        quote(&line, ids);
    }
    quote(&line, "--addr");
    quote(&line, addr[0] ? addr : "auto");
    if (o->bind) {
        quote(&line, "--bind");
        quote(&line, o->bind);
    }
    if (port) {
        quote(&line, "--port");
        quote(&line, ports);
    }
    return line;
}

static uint32_t env_uint(const char *name)
{
    const char *v = getenv(name);
    char *end;
    unsigned long n = v && *v ? strtoul(v, &end, 10) : 0;
    return n <= 4096 ? (uint32_t)n : 0;
}

static int begin_slurm(struct remote *r, const char *exe, const char *workdir, const char *local_dir,
                       char **cause)
{
    const struct launch_options *o = r->o;
    if (!getenv("SLURM_JOB_ID")) {
        *cause = xasprintf("--slurm: not inside a Slurm allocation (no SLURM_JOB_ID; run it "
                           "under salloc or sbatch)");
        return -EINVAL;
    }
    uint32_t nodes = env_uint("SLURM_JOB_NUM_NODES"), tasks = env_uint("SLURM_NTASKS");
    if (!nodes)
        nodes = env_uint("SLURM_NNODES");
    uint32_t count = o->per_task ? tasks : nodes;
    if (!count) {
        *cause = xasprintf("--slurm: the allocation gives no %s",
                           o->per_task ? "task count (SLURM_NTASKS)"
                                       : "node count (SLURM_JOB_NUM_NODES)");
        return -EINVAL;
    }
    r->count = r->nagents = count;
    r->cl->count = count;
    r->cl->nodes = xcalloc(count, sizeof *r->cl->nodes);
    r->nodes = xcalloc(count, sizeof *r->nodes);
    for (uint32_t i = 0; i < count; i++) {
        r->cl->nodes[i].id = i;
        r->cl->nodes[i].speed = 1.0;
        snprintf(r->nodes[i].label, sizeof r->nodes[i].label, "Slurm task %u", i);
    }
    r->nprocs = 1;
    r->procs = xcalloc(1, sizeof *r->procs);
    snprintf(r->procs[0].label, sizeof r->procs[0].label, "srun");
    char counts[32], ntasks[32];
    snprintf(counts, sizeof counts, "--nodes=%u", nodes);
    snprintf(ntasks, sizeof ntasks, "--ntasks=%u", count);
    char *line = agent_line(o, exe, workdir, 0, "", 0, ROLE_SLURM);
    /* One step for the whole allocation; the agents become the daemons, so the step
     * lasts as long as the cluster.  stdin goes to every task: the key and the cluster
     * file reach them all.  The step's own shell runs the quoted line. */
    const char *argv[12];
    int k = 0;
    argv[k++] = "srun";
    argv[k++] = "--input=all";
    argv[k++] = "--kill-on-bad-exit=0";
    argv[k++] = ntasks;
    if (!o->per_task) {
        argv[k++] = counts;
        argv[k++] = "--ntasks-per-node=1";
    }
    argv[k++] = "/bin/sh";
    argv[k++] = "-c";
    argv[k++] = line;
    argv[k] = NULL;
    r->cl->rsh = xstrdup("srun");
    /* srun outlives this launch (it carries the daemons): its output goes to files, not
     * to pipes that close when launch exits and would kill it on its next write. */
    int rc = fs_mkdirs(local_dir, 0700, NULL);
    char *out_path = xasprintf("%s/srun.out", local_dir);
    char *err_path = xasprintf("%s/srun.log", local_dir);
    if (rc == 0)
        rc = spawn_to(&r->procs[0], (char **)argv, out_path, err_path, cause);
    else
        *cause = xasprintf("cannot create '%s': %s", local_dir, strerror(-rc));
    free(out_path);
    free(err_path);
    free(line);
    return rc;
}

/* Every remote shell stays connected until its daemon starts, three pipes each: a
 * hostfile of a few hundred hosts is past the usual soft limit of 1,024 descriptors, so
 * the soft limit is raised toward the hard one, and a launch that still cannot fit says
 * so up front rather than failing half-way. */
static int room_for(uint32_t procs, char **cause)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    rlim_t need = (rlim_t)procs * 3 + 64;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        *cause = xasprintf("%u remote shells need %llu file descriptors here, and the limit is "
                           "%llu (ulimit -n)",
                           procs, (unsigned long long)need, (unsigned long long)rl.rlim_cur);
        return -EMFILE;
    }
    return 0;
}

static int begin_hosts(struct remote *r, const char *exe, const char *workdir, char **cause)
{
    const struct launch_options *o = r->o;
    struct hostfile hf;
    int rc = hostfile_load(&hf, o->hostfile, cause);
    if (rc == 0 && (rc = room_for(hf.count + 1, cause)) < 0)
        hostfile_fini(&hf);
    if (rc < 0)
        return rc;
    const char *rsh = o->rsh ? o->rsh : DEFAULT_RSH;
    size_t nwords;
    char **words = split_words(rsh, &nwords);
    if (nwords == 0) {
        free_words(words);
        hostfile_fini(&hf);
        *cause = xasprintf("--rsh is empty");
        return -EINVAL;
    }
    r->count = hf.count;
    r->nagents = r->nprocs = hf.count + (o->collector_host ? 1 : 0);
    r->cl->count = hf.count;
    r->cl->nodes = xcalloc(hf.count, sizeof *r->cl->nodes);
    r->cl->rsh = xstrdup(rsh);
    r->nodes = xcalloc(r->nagents, sizeof *r->nodes);
    r->procs = xcalloc(r->nprocs, sizeof *r->procs);
    for (uint32_t i = 0; i < r->nprocs; i++)
        r->procs[i].in = r->procs[i].out = r->procs[i].err = -1;
    const char **argv = xcalloc(nwords + 3, sizeof *argv);
    for (size_t k = 0; k < nwords; k++)
        argv[k] = words[k];
    for (uint32_t i = 0; rc == 0 && i < hf.count; i++) {
        const struct hostfile_entry *e = &hf.hosts[i];
        struct cluster_node *cn = &r->cl->nodes[i];
        cn->id = i;
        cn->slots = e->slots;
        cn->speed = e->speed;
        snprintf(cn->name, sizeof cn->name, "%s", e->name);
        r->nodes[i].proc = i;
        snprintf(r->nodes[i].label, sizeof r->nodes[i].label, "host %s (%s:%u)", e->name,
                 hf.path, e->line);
        snprintf(r->procs[i].label, sizeof r->procs[i].label, "%s", r->nodes[i].label);
        char addr[64];
        if (e->addr[0])
            snprintf(addr, sizeof addr, "%s", e->addr);
        else
            resolve(e->name, addr, sizeof addr);
        char *line = agent_line(o, exe, workdir, i, addr, e->port, ROLE_NODE);
        argv[nwords] = e->name;
        argv[nwords + 1] = line;
        argv[nwords + 2] = NULL;
        rc = spawn(&r->procs[i], (char **)argv, cause);
        free(line);
        if (rc < 0) {
            char *why = xasprintf("%s: cannot start '%s': %s", r->nodes[i].label, words[0], *cause);
            free(*cause);
            *cause = why;
        }
    }
    if (rc == 0 && o->collector_host) {
        /* The collector's agent, last: its own host, same remote shell. */
        uint32_t c = hf.count;
        r->nodes[c].proc = c;
        snprintf(r->nodes[c].label, sizeof r->nodes[c].label, "the collector's host %s",
                 o->collector_host);
        snprintf(r->procs[c].label, sizeof r->procs[c].label, "%s", r->nodes[c].label);
        snprintf(r->cl->collector.name, sizeof r->cl->collector.name, "%s", o->collector_host);
        /* Its address: that of its line in the hostfile when it has one (the collector
         * often shares a host with a daemon), else its name resolved here, else what
         * the agent finds there. */
        char addr[64] = "";
        for (uint32_t i = 0; i < hf.count && !addr[0]; i++)
            if (strcmp(hf.hosts[i].name, o->collector_host) == 0 && hf.hosts[i].addr[0])
                snprintf(addr, sizeof addr, "%s", hf.hosts[i].addr);
        if (!addr[0])
            resolve(o->collector_host, addr, sizeof addr);
        char *line = agent_line(o, exe, workdir, 0, addr, 0, ROLE_COLLECTOR);
        argv[nwords] = o->collector_host;
        argv[nwords + 1] = line;
        argv[nwords + 2] = NULL;
        rc = spawn(&r->procs[c], (char **)argv, cause);
        free(line);
    }
    free(argv);
    free_words(words);
    hostfile_fini(&hf);
    return rc;
}

int remote_begin(struct remote **out_r, const struct launch_options *o, const char *key_hex,
                 const char *workdir, struct cluster *out, char **cause)
{
    struct remote *r = xcalloc(1, sizeof *r);
    *out_r = r;
    r->o = o;
    r->cl = out;
    char exe[4096];
    if (o->remote_jackdaw) {
        snprintf(exe, sizeof exe, "%s", o->remote_jackdaw);
    } else {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n < 0) {
            *cause = xasprintf("cannot find my own binary: %s", strerror(errno));
            return -errno;
        }
        exe[n] = '\0';
    }
    const char *dir = o->remote_workdir ? o->remote_workdir : workdir;
    int rc = o->slurm ? begin_slurm(r, exe, dir, workdir, cause) : begin_hosts(r, exe, dir, cause);
    char *key_line = xasprintf("key %s\n", key_hex);
    if (rc == 0)
        send_to_all(r, key_line, strlen(key_line), step_deadline(r));
    memset(key_line, 0, strlen(key_line));
    free(key_line);
    if (rc == 0)
        rc = wait_for(r, false, cause);
    return rc;
}

/* Reaps the remote shells as they exit, for at most `ms`; true when all have. */
static bool reap_all(struct remote *r, int ms)
{
    for (int waited = 0;; waited += 10) {
        bool done = true;
        for (uint32_t i = 0; i < r->nprocs; i++)
            done &= reap(&r->procs[i]);
        if (done || waited >= ms)
            return done;
        struct timespec step = {0, 10 * 1000 * 1000};
        nanosleep(&step, NULL);
    }
}

int remote_finish(struct remote *r, const char *cluster_path, struct cluster *cl, char **cause)
{
    r->cl = cl;
    FILE *f = fopen(cluster_path, "r");
    if (!f) {
        *cause = xasprintf("cannot read back '%s': %s", cluster_path, strerror(errno));
        return -errno;
    }
    char *bytes = NULL;
    size_t len = 0, cap = 0, n;
    char buf[65536];
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        bytes = xgrow(bytes, &cap, len + n, 1);
        memcpy(bytes + len, buf, n);
        len += n;
    }
    fclose(f);
    /* "cluster LEN\n" and the file, in one buffer written to every agent at once. */
    char head[32];
    int hl = snprintf(head, sizeof head, "cluster %zu\n", len);
    char *msg = xmalloc((size_t)hl + len);
    memcpy(msg, head, (size_t)hl);
    memcpy(msg + hl, bytes, len);
    free(bytes);
    send_to_all(r, msg, (size_t)hl + len, step_deadline(r));
    free(msg);
    /* Nothing more is said: the agents' standard input ends here. */
    for (uint32_t i = 0; i < r->nprocs; i++)
        close_fd(&r->procs[i].in);
    int rc = wait_for(r, true, cause);
    /* The remote shells return once their agents have: reaped, bounded. */
    if (rc == 0 && !r->o->slurm)
        reap_all(r, 5000);
    return rc;
}

/* To each remote shell still running and its session (spawn gave it one). */
static void signal_all(struct remote *r, int sig)
{
    for (uint32_t i = 0; i < r->nprocs; i++) {
        if (r->procs[i].pid > 0) {
            kill(-r->procs[i].pid, sig);
            kill(r->procs[i].pid, sig);
        }
    }
}

void remote_abort(struct remote *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->nprocs; i++)
        close_fd(&r->procs[i].in);
    /* Agents that saw their input end exit by themselves; the remote shells get a
     * moment to carry that through, then are ended. */
    if (reap_all(r, 2000))
        return;
    signal_all(r, SIGTERM);
    if (reap_all(r, 2000))
        return;
    signal_all(r, SIGKILL);
    reap_all(r, 5000);
}

void remote_destroy(struct remote *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->nprocs; i++) {
        close_fd(&r->procs[i].in);
        close_fd(&r->procs[i].out);
        close_fd(&r->procs[i].err);
    }
    free(r->procs);
    free(r->nodes);
    free(r);
}

int remote_kill(const struct cluster *cl, uint32_t node, int timeout_ms)
{
    bool col = node == cl->count;
    const char *name = col ? cl->collector.name : cl->nodes[node].name;
    int pid = col ? cl->collector.remote_pid : cl->nodes[node].remote_pid;
    if (!cl->rsh || strcmp(cl->rsh, "srun") == 0 || !pid || !name[0])
        return -ENOTSUP;
    size_t nwords;
    char **words = split_words(cl->rsh, &nwords);
    /* Only the daemon itself: a pid that was recycled on that host for something else
     * is left alone (exit 3, as for one that is gone). */
    char cmd[256], mark[64];
    if (col)
        snprintf(mark, sizeof mark, "/collector.json --listen-fd ");
    else
        snprintf(mark, sizeof mark, "/node-%u.json --id %u ", node, node);
    snprintf(cmd, sizeof cmd,
             "tr '\\000' ' ' </proc/%d/cmdline 2>/dev/null | grep -q -- '%s' || exit 3; "
             "kill -TERM %d",
             pid, mark, pid);
    const char **argv = xcalloc(nwords + 3, sizeof *argv);
    for (size_t k = 0; k < nwords; k++)
        argv[k] = words[k];
    argv[nwords] = name;
    argv[nwords + 1] = cmd;
    struct proc p = {.in = -1, .out = -1, .err = -1};
    char *cause = NULL;
    int rc = nwords ? spawn(&p, (char **)argv, &cause) : -EINVAL;
    free(cause);
    free(argv);
    free_words(words);
    if (rc < 0)
        return rc;
    close_fd(&p.in);
    close_fd(&p.out);
    close_fd(&p.err);
    for (int waited = 0; !reap(&p) && waited < timeout_ms; waited += 10) {
        struct timespec step = {0, 10 * 1000 * 1000};
        nanosleep(&step, NULL);
    }
    if (p.pid > 0) {
        kill(-p.pid, SIGKILL);
        waitpid(p.pid, &p.status, 0);
        return -ETIMEDOUT;
    }
    if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0)
        return 0;
    return WIFEXITED(p.status) && WEXITSTATUS(p.status) == 3 ? -ESRCH : -EIO;
}

int remote_local_address_towards(const char *peer, char *out, size_t len)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    if (getaddrinfo(peer, "9", &hints, &ai) != 0 || !ai)
        return -EINVAL;
    int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rc = -errno;
    struct sockaddr_storage me;
    socklen_t mlen = sizeof me;
    /* A UDP connect picks the route and the source address and sends nothing. */
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&me, &mlen) == 0 &&
        getnameinfo((struct sockaddr *)&me, mlen, out, (socklen_t)len, NULL, 0,
                    NI_NUMERICHOST) == 0)
        rc = 0;
    else
        rc = -EHOSTUNREACH;
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    return rc;
}
