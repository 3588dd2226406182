/*
 * launcher — see launcher.h.
 */
#include "core/client/launcher.h"
#include "core/client/launcher_impl.h"
#include "core/client/remote.h"
#include "trace/collector/tclient.h"
#include "core/model/hostfile.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/xalloc.h"
#include "core/client/client.h"
#include "core/model/mix.h"
#include "core/net/auth.h"

int launcher_parse_speeds(const char *list, double *out, uint32_t n, char **cause)
{
    if (!list || !*list) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = 1.0;
        return 0;
    }
    int mix = mix_parse(list);
    if (mix >= 0) {
        for (uint32_t i = 0; i < n; i++) {
            struct mix_node m;
            mix_node((enum mix_preset)mix, i, &m);
            out[i] = m.speed;
        }
        return 0;
    }
    double vals[4096];
    uint32_t count = 0;
    const char *p = list;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || (*end && *end != ',') || !(v > 0 && v <= 1)) {
            *cause = xasprintf("--speeds '%s': entry %u is not a number in (0, 1] (or give "
                               "a mix: none, C1..C5)",
                               list, count + 1);
            return -EINVAL;
        }
        if (count == 4096) {
            *cause = xasprintf("--speeds: more than 4096 entries");
            return -EINVAL;
        }
        vals[count++] = v;
        p = *end ? end + 1 : end;
    }
    for (uint32_t i = 0; i < n; i++)
        out[i] = vals[i % count];
    return 0;
}

uint32_t launcher_default_nodes(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > 4096 ? 4096 : (uint32_t)cores;
}

int launcher_parse_slots(const char *text, const char *speeds, uint32_t *slots, bool *cores,
                         char **cause)
{
    *slots = 0;
    *cores = false;
    if (!text)
        return 0;
    if (strcmp(text, "cores") == 0) {
        if (!speeds || mix_parse(speeds) < 0) {
            *cause = xasprintf("--slots cores takes each node's cores from a mix: give "
                               "--speeds none or C1..C5 with it");
            return -EINVAL;
        }
        *cores = true;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long v = text[0] >= '0' && text[0] <= '9' ? strtoul(text, &end, 10) : 0;
    if (text[0] < '0' || text[0] > '9' || errno || *end || v < 1 || v > 1000000) {
        *cause = xasprintf("--slots '%s' is not a whole number from 1 to 1000000, nor "
                           "'cores'",
                           text);
        return -EINVAL;
    }
    *slots = (uint32_t)v;
    return 0;
}

uint32_t launcher_node_slots(const struct launch_options *o, uint32_t index,
                             uint32_t machine_cores)
{
    if (o->slots)
        return o->slots;
    int mix = o->speeds ? mix_parse(o->speeds) : -EINVAL;
    if (mix < 0)
        return machine_cores ? machine_cores : 1;
    if (!o->slots_cores)
        return 1;
    struct mix_node m;
    mix_node((enum mix_preset)mix, index, &m);
    return m.slots;
}

char *launcher__dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    return xstrndup(path, (size_t)(slash - path ? slash - path : 1));
}

char *launcher__absolute(const char *path)
{
    if (path[0] == '/')
        return xstrdup(path);
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return xstrdup(path);
    return xasprintf("%s/%s", cwd, path);
}

int launcher_listen(const char *addr, int want_port, uint16_t *port, char **cause)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *ai = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", want_port);
    int g = getaddrinfo(addr, service, &hints, &ai);
    if (g != 0) {
        *cause = xasprintf("cannot listen on '%s': not a numeric IPv4 or IPv6 address (%s)", addr,
                           gai_strerror(g));
        return -EINVAL;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        freeaddrinfo(ai);
        *cause = xasprintf("cannot create a socket: %s", strerror(e));
        return -e;
    }
    /* Connections accepted here inherit the flag, and so do their TIME_WAIT remains:
     * without it a daemon restarted on the same port (a collector after a crash) is
     * refused with EADDRINUSE for a minute. */
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1024) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        int e = errno;
        close(fd);
        freeaddrinfo(ai);
        if (want_port)
            *cause = xasprintf("cannot listen on %s port %d: %s", addr, want_port, strerror(e));
        else
            *cause = xasprintf("cannot listen on %s: %s", addr, strerror(e));
        return -e;
    }
    freeaddrinfo(ai);
    *port = ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port
                                          : ((struct sockaddr_in *)&a)->sin_port);
    return fd;
}

/* A zombie is not alive: a daemon that exited but whose parent (init, after launch
 * returned) has not reaped it yet is stopped for our purposes. */
static int alive(int pid)
{
    if (pid <= 0 || (kill(pid, 0) < 0 && errno != EPERM))
        return 0;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return !(paren && paren[1] == ' ' && paren[2] == 'Z');
}

/* Whether process `pid` was started for the cluster file `cluster_path` (a daemon runs
 * `jackdaw node|collector --cluster FILE …`).  A cluster file outlives its daemons, and
 * their pids are recycled, often by another cluster's daemon (every `run` names its
 * file cluster.json): without this check `stop` could signal, and `launch` refuse for,
 * a process that has nothing to do with the cluster.  The daemon's FILE is resolved
 * from its own working directory, so a relative path compares too.  When the command
 * line cannot be read, the process is taken at its word. */
static bool names_cluster(int pid, const char *cluster_path)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *want = realpath(cluster_path, NULL);
    bool same = false;
    const char *prev = "";
    for (size_t at = 0; at < n && !same; at += strlen(buf + at) + 1) {
        const char *arg = buf + at;
        const char *file = strcmp(prev, "--cluster") == 0         ? arg
                           : strncmp(arg, "--cluster=", 10) == 0 ? arg + 10
                                                                  : NULL;
        prev = arg;
        if (!file)
            continue;
        char *theirs = file[0] == '/' ? xstrdup(file) : xasprintf("/proc/%d/cwd/%s", pid, file);
        char *real = realpath(theirs, NULL);
        same = strcmp(real ? real : theirs, want ? want : cluster_path) == 0;
        free(real);
        free(theirs);
    }
    free(want);
    return same;
}

bool launcher_daemon_running(int pid, const char *cluster_path)
{
    return alive(pid) && names_cluster(pid, cluster_path);
}

/* The pids of `cl`'s daemons (nodes and collector) that still run, as " 12 13 14";
 * NULL when none does. */
static char *running_pids(const struct cluster *cl, const char *cluster_path)
{
    char *list = NULL;
    for (uint32_t i = 0; i <= cl->count; i++) {
        int pid = i < cl->count ? cl->nodes[i].pid : cl->collector.pid;
        if (!launcher_daemon_running(pid, cluster_path))
            continue;
        char *more = xasprintf("%s %d", list ? list : "", pid);
        free(list);
        list = more;
    }
    return list;
}

/*
 * Refuses (-EEXIST with *cause) to launch over the files of a cluster that still runs:
 * the cluster file itself, or another cluster file in the same directory whose key or
 * work directory are the ones this launch would write (a cluster launched before files
 * were named after their cluster file used DIR/cluster.key and DIR/work whatever its
 * name; so does any cluster given the same --workdir).  Daemons count as running when
 * their pid is alive and was started for that cluster file.
 */
static int refuse_running(const char *cluster_path, const char *key_path, const char *workdir,
                          char **cause)
{
    struct cluster old;
    char *ignored = NULL;
    if (cluster_load(&old, cluster_path, &ignored) == 0) {
        char *pids = running_pids(&old, cluster_path);
        cluster_fini(&old);
        if (pids) {
            *cause = xasprintf("a cluster is already running (cluster file '%s', daemon pids%s); "
                               "'jackdaw stop --cluster %s' it first or pass another --cluster",
                               cluster_path, pids, cluster_path);
            free(pids);
            return -EEXIST;
        }
    }
    free(ignored);
    ignored = NULL;
    char *dir = launcher__dir_of(cluster_path);
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char *other = xasprintf("%s/%s", dir, e->d_name);
        if (strcmp(other, cluster_path) != 0 && cluster_load(&old, other, &ignored) == 0) {
            char *other_key = launcher__absolute(old.key_path), *other_work = launcher__absolute(old.workdir);
            const char *shared = strcmp(other_key, key_path) == 0   ? "key"
                                 : strcmp(other_work, workdir) == 0 ? "work directory"
                                                                    : NULL;
            char *pids = shared ? running_pids(&old, other) : NULL;
            if (pids) {
                *cause = xasprintf("the cluster of '%s' (daemon pids%s) still runs and uses the "
                                   "%s '%s' this launch would write; 'jackdaw stop --cluster "
                                   "%s' it first, or pass another --cluster or --workdir",
                                   other, pids, shared,
                                   strcmp(shared, "key") == 0 ? key_path : workdir, other);
                rc = -EEXIST;
            }
            free(pids);
            free(other_key);
            free(other_work);
            cluster_fini(&old);
        }
        free(ignored);
        ignored = NULL;
        free(other);
    }
    if (d)
        closedir(d);
    free(dir);
    return rc;
}

static void reap(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

char *launcher__log_tail(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return xstrdup("(no log)");
    char buf[2048];
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return xstrdup(buf);
}

/* Forks and execs `exe argv…` in its own session with listen_fd as fd 3 and its output
 * appended to logpath.  Returns the pid, or a negative errno. */
pid_t launcher__spawn(const char *exe, char **argv, const char *logpath, int listen_fd,
                      bool die_with_parent)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid > 0)
        return pid;
    setsid();
    /* A private cluster must not outlive `jackdaw run`, even when run is killed with
     * SIGKILL; the getppid check closes the race with a parent that died before prctl. */
    if (die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent))
        _exit(1);
    launcher__exec(exe, argv, logpath, listen_fd);
    _exit(127);
}

void launcher__collector_argv(const char **argv, const char *exe, const char *cluster,
                              const char *level, const char *name, const char *digest)
{
    int argc = 0;
    const char *fixed[] = {exe, "collector", "--cluster", cluster, "--listen-fd", "3",
                           "--log-level", level};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        argv[argc++] = fixed[k];
    if (name) {
        argv[argc++] = "--workload-name";
        argv[argc++] = name;
    }
    if (digest) {
        argv[argc++] = "--workload-digest";
        argv[argc++] = digest;
    }
    argv[argc] = NULL;
}

int launcher__exec(const char *exe, char **argv, const char *logpath, int listen_fd)
{
    int devnull = open("/dev/null", O_RDONLY);
    int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (devnull >= 0)
        dup2(devnull, 0);
    if (logfd >= 0) {
        dup2(logfd, 1);
        dup2(logfd, 2);
    }
    /* dup2 onto itself keeps close-on-exec set; clear it explicitly. */
    if (listen_fd == 3)
        fcntl(3, F_SETFD, 0);
    else
        dup2(listen_fd, 3);
    signal(SIGPIPE, SIG_DFL);
    execv(exe, argv);
    return -errno;
}

/* "20261122-031305-4f2a": sortable, and unique enough to tell runs apart in a directory
 * of traces. */
static char *new_run_id(void)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    return xasprintf("%s-%04x", stamp, (unsigned)(randombytes_random() & 0xffff));
}

/* Whether `addr` is a wildcard (0.0.0.0, ::): fine to bind, useless to advertise. */
static bool wildcard(const char *addr)
{
    return strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0 || strcmp(addr, "[::]") == 0;
}

static int numeric_addresses(const char *bind_addr, const char *adv, char **cause)
{
    if (!hostfile_is_address(bind_addr) || !hostfile_is_address(adv)) {
        *cause = xasprintf("--bind and --advertise take numeric IPv4 or IPv6 addresses ('%s', "
                           "'%s')",
                           bind_addr, adv);
        return -EINVAL;
    }
    return 0;
}

/* Where a local cluster's daemons and collector listen and are reached. */
static int local_addresses(const struct launch_options *o, char *bind_addr, char *adv,
                           size_t len, char **cause)
{
    snprintf(bind_addr, len, "%s", o->bind ? o->bind : "127.0.0.1");
    if (o->advertise) {
        snprintf(adv, len, "%s", o->advertise);
    } else if (wildcard(bind_addr)) {
        *cause = xasprintf("--bind %s listens everywhere: give --advertise ADDR, the address "
                           "clients and the other daemons reach this host at",
                           bind_addr);
        return -EINVAL;
    } else {
        snprintf(adv, len, "%s", bind_addr);
    }
    return numeric_addresses(bind_addr, adv, cause);
}

/* The collector of a many-host cluster runs here: it listens on --bind, else on the
 * address that routes to the first daemon, and is reached at --advertise, else there. */
static int collector_addresses(const struct launch_options *o, const struct cluster *cl,
                               char *bind_addr, char *adv, size_t len, char **cause)
{
    if (!o->hostfile && !o->slurm)
        return local_addresses(o, bind_addr, adv, len, cause);
    char routed[64] = "127.0.0.1";
    if (remote_local_address_towards(cl->nodes[0].host, routed, sizeof routed) < 0) {
        *cause = xasprintf("no route from here to node 0 at %s for the collector; give "
                           "--advertise ADDR",
                           cl->nodes[0].host);
        if (!o->advertise)
            return -EHOSTUNREACH;
        free(*cause);
        *cause = NULL;
    }
    snprintf(bind_addr, len, "%s", o->bind ? o->bind : routed);
    snprintf(adv, len, "%s", o->advertise ? o->advertise : wildcard(bind_addr) ? routed
                                                                                 : bind_addr);
    return numeric_addresses(bind_addr, adv, cause);
}

/* After a failed start: daemons that were started are asked to stop (and those on
 * other hosts that do not answer are ended through their remote shell), agents still
 * waiting are let go. */
static void undo_start(struct cluster *out, const char *cluster_path, struct remote *rm)
{
    remote_abort(rm);
    char *ignore = NULL;
    enum launcher_found *found = xcalloc(out->count + 1, sizeof *found);
    launcher_stop_report(out, cluster_path, 2000, found, &ignore);
    free(ignore);
    free(found);
}

int launcher_start(const struct launch_options *o, struct cluster *out, char **cause)
{
    memset(out, 0, sizeof *out);
    bool remote = o->hostfile || o->slurm;
    /* Absolute, so that the cluster file's paths and the daemons' command lines mean
     * the same from any directory a client runs in. */
    char *cluster_path = launcher__absolute(o->cluster_path);
    char *dir = launcher__dir_of(cluster_path);
    int rc = fs_mkdirs(dir, 0700, NULL);
    if (rc < 0) {
        *cause = xasprintf("cannot create '%s': %s", dir, strerror(-rc));
        free(dir);
        free(cluster_path);
        return rc;
    }
    char *key_path = cluster_owned_path(cluster_path, CLUSTER_OWNED_KEY);
    char *workdir = o->workdir ? launcher__absolute(o->workdir)
                               : cluster_owned_path(cluster_path, CLUSTER_OWNED_WORKDIR);
    rc = refuse_running(cluster_path, key_path, workdir, cause);
    if (rc < 0) {
        free(key_path);
        free(workdir);
        free(dir);
        free(cluster_path);
        return rc;
    }

    out->key_path = key_path;
    out->workdir = workdir;
    out->run_id = new_run_id();
    out->start_ns = clock_wall_ns();
    if (o->node_nargs > 0) {
        out->node_args = xcalloc((size_t)o->node_nargs, sizeof *out->node_args);
        for (int k = 0; k < o->node_nargs; k++)
            out->node_args[out->n_node_args++] = xstrdup(o->node_args[k]);
    }
    bool local_collector = o->trace && !o->collector_host;
    if (o->trace && o->collector_host) {
        /* Written on the collector's host: in the work directory there unless told. */
        const char *there = o->remote_workdir ? o->remote_workdir : out->workdir;
        out->collector.trace_path = o->trace_path ? xstrdup(o->trace_path)
                                                  : xasprintf("%s/jackdaw-%s.avro", there,
                                                              out->run_id);
    } else if (o->trace) {
        char *name = o->trace_path ? xstrdup(o->trace_path)
                                   : xasprintf("%s/jackdaw-%s.avro",
                                               o->trace_dir ? o->trace_dir : dir, out->run_id);
        out->collector.trace_path = launcher__absolute(name);
        free(name);
        /* A new run writes a new trace; the collector resumes a file only when it is
         * restarted for the same run.  Keep what was there, as perf keeps perf.data.old. */
        if (access(out->collector.trace_path, F_OK) == 0) {
            char *kept = xasprintf("%s.old", out->collector.trace_path);
            if (rename(out->collector.trace_path, kept) == 0)
                fprintf(stderr, "jackdaw: %s existed; moved to %s\n",
                        out->collector.trace_path, kept);
            free(kept);
        }
    }
    free(dir);
    char bind_addr[64] = "", adv[64] = "";
    if (!remote)
        rc = local_addresses(o, bind_addr, adv, sizeof bind_addr, cause);
    if (rc == 0 && !remote && o->slots_cores && (!o->speeds || mix_parse(o->speeds) < 0)) {
        *cause = xasprintf("--slots cores needs a mix in --speeds (none, C1..C5)");
        rc = -EINVAL;
    }
    if (rc == 0)
        rc = fs_mkdirs(out->workdir, 0700, NULL);
    if (rc < 0 && !*cause)
        *cause = xasprintf("cannot create '%s': %s", out->workdir, strerror(-rc));
    struct auth_key key;
    if (rc == 0) {
        unlink(out->key_path);
        rc = auth_key_create(out->key_path, &key, cause);
    }
    uint32_t nodes = remote ? 0 : o->nodes;
    int *fds = NULL;
    struct remote *rm = NULL;
    if (rc == 0 && remote) {
        char hex[AUTH_KEY_HEX_CHARS + 1];
        auth_key_hex(&key, hex);
        rc = remote_begin(&rm, o, hex, out->workdir, out, cause);
        sodium_memzero(hex, sizeof hex);
    } else if (rc == 0) {
        out->count = nodes;
        out->nodes = xcalloc(nodes, sizeof *out->nodes);
        double *speeds = xmalloc(nodes * sizeof *speeds);
        rc = launcher_parse_speeds(o->speeds, speeds, nodes, cause);
        fds = xmalloc(nodes * sizeof *fds);
        for (uint32_t i = 0; i < nodes; i++)
            fds[i] = -1;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        for (uint32_t i = 0; rc == 0 && i < nodes; i++) {
            uint16_t port = 0;
            fds[i] = launcher_listen(bind_addr, 0, &port, cause);
            if (fds[i] < 0) {
                rc = fds[i];
                break;
            }
            struct cluster_node *n = &out->nodes[i];
            n->id = i;
            snprintf(n->host, sizeof n->host, "%s", adv);
            n->port = port;
            n->slots = launcher_node_slots(o, i, (uint32_t)(cores > 0 ? cores : 1));
            n->speed = speeds[i];
        }
        free(speeds);
    }
    int collector_fd = -1;
    if (rc == 0 && local_collector) {
        char cbind[64], cadv[64];
        rc = collector_addresses(o, out, cbind, cadv, sizeof cbind, cause);
        uint16_t port = 0;
        if (rc == 0)
            collector_fd = launcher_listen(cbind, 0, &port, cause);
        if (collector_fd < 0 && rc == 0)
            rc = collector_fd;
        if (rc == 0) {
            snprintf(out->collector.host, sizeof out->collector.host, "%s", cadv);
            out->collector.port = port;
        }
    }
    if (rc == 0)
        rc = cluster_save(out, cluster_path, cause);

    char exe[4096];
    ssize_t len = rc == 0 ? readlink("/proc/self/exe", exe, sizeof exe - 1) : -1;
    if (rc == 0 && len < 0) {
        rc = -errno;
        *cause = xasprintf("cannot find my own binary: %s", strerror(errno));
    }
    if (len >= 0)
        exe[len] = '\0';
    const char *level = o->log_level ? o->log_level : "info";
    if (rc == 0 && local_collector) {
        /* The collector first: nodes connect to it as they come up, and until it runs
         * their connections wait in its listening socket's backlog. */
        char *logpath = xasprintf("%s/collector.log", out->workdir);
        const char *argv[16];
        launcher__collector_argv(argv, exe, cluster_path, level, o->workload_name,
                                 o->workload_digest);
        pid_t pid = launcher__spawn(exe, (char **)argv, logpath, collector_fd,
                                    o->die_with_parent);
        if (pid < 0) {
            rc = pid;
            *cause = xasprintf("cannot start the collector: %s", strerror(-rc));
        } else {
            out->collector.pid = pid;
        }
        free(logpath);
    }
    if (collector_fd >= 0)
        close(collector_fd);
    if (rc == 0 && remote)
        rc = remote_finish(rm, cluster_path, out, cause);
    for (uint32_t i = 0; rc == 0 && i < nodes; i++) {
        char id[16];
        snprintf(id, sizeof id, "%u", i);
        char *logpath = xasprintf("%s/node-%u.log", out->workdir, i);
        const char *fixed[] = {exe, "node", "--cluster", cluster_path, "--id", id,
                               "--listen-fd", "3", "--log-level", level};
        size_t nfixed = sizeof fixed / sizeof fixed[0];
        const char **argv = xcalloc(nfixed + (size_t)o->node_nargs + 1, sizeof *argv);
        memcpy(argv, fixed, sizeof fixed);
        for (int k = 0; k < o->node_nargs; k++)
            argv[nfixed + (size_t)k] = o->node_args[k];
        pid_t pid = launcher__spawn(exe, (char **)argv, logpath, fds[i], o->die_with_parent);
        free(argv);
        free(logpath);
        if (pid < 0) {
            rc = pid;
            *cause = xasprintf("cannot start node %u: %s", i, strerror(-rc));
            break;
        }
        out->nodes[i].pid = pid;
    }
    for (uint32_t i = 0; fds && i < nodes; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    if (rc == 0)
        rc = cluster_save(out, cluster_path, cause);
    if (rc == 0) {
        /* Ready means: every daemon answers an authenticated handshake. */
        struct client *c = client_create(out, &key, NULL);
        rc = client_connect(c, o->start_timeout_ms > 0 ? o->start_timeout_ms : 15000, cause);
        client_destroy(c);
        for (uint32_t i = 0; rc < 0 && i < out->count; i++) {
            if (out->nodes[i].pid && !alive(out->nodes[i].pid)) {
                char *logpath = xasprintf("%s/node-%u.log", out->workdir, i);
                char *tail = launcher__log_tail(logpath);
                char *msg = xasprintf("%s; node %u exited, its log %s ends:\n%s",
                                      *cause ? *cause : "cluster did not start", i, logpath,
                                      tail);
                free(*cause);
                *cause = msg;
                free(tail);
                free(logpath);
                break;
            }
        }
    }
    if (rc == 0 && out->collector.pid && !alive(out->collector.pid)) {
        char *logpath = xasprintf("%s/collector.log", out->workdir);
        char *tail = launcher__log_tail(logpath);
        *cause = xasprintf("the collector exited; its log %s ends:\n%s", logpath, tail);
        free(tail);
        free(logpath);
        rc = -ECHILD;
    }
    if (rc < 0) {
        undo_start(out, cluster_path, rm);
        cluster_fini(out);
    }
    remote_destroy(rm);
    sodium_memzero(&key, sizeof key);
    free(cluster_path);
    return rc;
}

/* Daemon i of a cluster: the nodes, then the collector (i == count). */
static int pid_of(const struct cluster *cl, uint32_t i)
{
    return i < cl->count ? cl->nodes[i].pid : cl->collector.pid;
}

static bool running(int pid, const char *cluster_path)
{
    return cluster_path ? launcher_daemon_running(pid, cluster_path) : alive(pid) != 0;
}

/* SIGCONT too: a daemon stopped by SIGSTOP (a debugger, a ^Z) would otherwise hold
 * the SIGTERM until the SIGKILL. */
static void terminate(int pid)
{
    kill(pid, SIGTERM);
    kill(pid, SIGCONT);
}

/* A collector on another host (launch --collector HOST): asked over its port, which it
 * closes once it has the nodes' last events; else ended through the remote shell. */
static enum launcher_found stop_remote_collector(const struct cluster *cl, int timeout_ms)
{
    struct auth_key key;
    char *ignore = NULL;
    struct tclient *t = NULL;
    bool asked = false, closed = false;
    if (auth_key_load(cl->key_path, &key, &ignore) == 0 &&
        tclient_connect(&t, cl, &key, 2000, &ignore) == 0) {
        asked = true;
        closed = tclient_shutdown(t, timeout_ms) == 0;
    }
    free(ignore);
    tclient_destroy(t);
    if (closed)
        return LAUNCHER_STOPPED;
    int k = remote_kill(cl, cl->count, timeout_ms);
    return k == 0         ? LAUNCHER_REMOTE_KILLED
           : k == -ESRCH ? LAUNCHER_NOT_RUNNING
           : asked       ? LAUNCHER_ASKED
                         : LAUNCHER_UNREACHED;
}

int launcher_stop(const struct cluster *cl, const char *cluster_path, int timeout_ms,
                  char **cause)
{
    return launcher_stop_report(cl, cluster_path, timeout_ms, NULL, cause);
}

int launcher_stop_report(const struct cluster *cl, const char *cluster_path, int timeout_ms,
                         enum launcher_found *found, char **cause)
{
    uint32_t n = cl->count + 1;
    enum launcher_found *f = xcalloc(n, sizeof *f);
    /* What runs is decided before anything is asked, so that the report tells daemons
     * that were already gone from daemons that stopped. */
    for (uint32_t i = 0; i < n; i++) {
        int pid = pid_of(cl, i);
        if (!pid && i == cl->count && cl->collector.remote_pid)
            f[i] = LAUNCHER_UNREACHED; /* a collector on another host: asked below */
        else if (!pid)
            f[i] = i < cl->count ? LAUNCHER_UNREACHED : LAUNCHER_NO_DAEMON;
        else
            f[i] = running(pid, cluster_path) ? LAUNCHER_STOPPED : LAUNCHER_NOT_RUNNING;
    }
    struct auth_key key;
    char *ignore = NULL;
    if (auth_key_load(cl->key_path, &key, &ignore) == 0) {
        struct client *c = client_create(cl, &key, NULL);
        /* Nodes that do not answer are signalled below. */
        client_connect(c, 2000, &ignore);
        client_shutdown(c, 1000);
        for (uint32_t i = 0; i < cl->count; i++)
            if (f[i] == LAUNCHER_UNREACHED && client_node_ready(c, i))
                f[i] = LAUNCHER_ASKED;
        /* Daemons with no pid here are waited for by their connections, which close as
         * they exit (bounded): then `stop` means stopped for them too. */
        struct timespec tick = {0, 10 * 1000 * 1000};
        for (int waited = 0; waited < timeout_ms; waited += 10) {
            uv_run(client_loop(c), UV_RUN_NOWAIT);
            bool open = false;
            for (uint32_t i = 0; i < cl->count && !open; i++)
                open = f[i] == LAUNCHER_ASKED && client_node_ready(c, i);
            if (!open)
                break;
            nanosleep(&tick, NULL);
        }
        for (uint32_t i = 0; i < cl->count; i++)
            if (f[i] == LAUNCHER_ASKED && !client_node_ready(c, i))
                f[i] = LAUNCHER_STOPPED;
        client_destroy(c);
    }
    free(ignore);
    /* One started on another host that does not answer is ended through the remote
     * shell it was started with. */
    for (uint32_t i = 0; i < cl->count; i++) {
        if (f[i] != LAUNCHER_UNREACHED || !cl->nodes[i].remote_pid)
            continue;
        int k = remote_kill(cl, i, timeout_ms);
        f[i] = k == 0 ? LAUNCHER_REMOTE_KILLED : k == -ESRCH ? LAUNCHER_NOT_RUNNING : f[i];
    }
    struct timespec step = {0, 10 * 1000 * 1000};
    bool termed = false;
    for (int waited = 0;; waited += 10) {
        reap();
        uint32_t left = 0;
        for (uint32_t i = 0; i < cl->count; i++)
            left += f[i] == LAUNCHER_STOPPED && alive(cl->nodes[i].pid);
        if (!left)
            break;
        if (waited >= timeout_ms) {
            for (uint32_t i = 0; i < cl->count; i++) {
                if (f[i] == LAUNCHER_STOPPED && alive(cl->nodes[i].pid)) {
                    kill(cl->nodes[i].pid, SIGKILL);
                    f[i] = LAUNCHER_KILLED;
                }
            }
            reap();
            break;
        }
        if (!termed && waited >= timeout_ms / 2) {
            termed = true;
            for (uint32_t i = 0; i < cl->count; i++)
                if (f[i] == LAUNCHER_STOPPED && alive(cl->nodes[i].pid))
                    terminate(cl->nodes[i].pid);
        }
        nanosleep(&step, NULL);
    }
    /* The collector last: nodes send their final blocks as they stop. */
    if (f[cl->count] == LAUNCHER_STOPPED) {
        int pid = cl->collector.pid;
        terminate(pid);
        for (int w = 0; alive(pid) && w < timeout_ms; w += 10) {
            reap();
            nanosleep(&step, NULL);
        }
        if (alive(pid)) {
            kill(pid, SIGKILL);
            f[cl->count] = LAUNCHER_KILLED;
            reap();
        }
    }
    if (f[cl->count] == LAUNCHER_UNREACHED)
        f[cl->count] = stop_remote_collector(cl, timeout_ms);
    if (found)
        memcpy(found, f, n * sizeof *f);
    free(f);
    if (cluster_path && unlink(cluster_path) < 0 && errno != ENOENT) {
        *cause = xasprintf("cannot remove cluster file '%s': %s", cluster_path, strerror(errno));
        return -errno;
    }
    unlink(cl->key_path);
    return 0;
}
