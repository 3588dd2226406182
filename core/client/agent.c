/*
 * agent — see agent.h.  Runs on the remote host, one process per daemon, for seconds.
 */
#include "core/client/agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "core/base/fs.h"
#include "core/base/xalloc.h"
#include "core/client/launcher.h"
#include "core/client/launcher_impl.h"
#include "core/model/cluster.h"
#include "core/model/hostfile.h"
#include "core/net/auth.h"

/* A cluster file for 4,096 nodes is well under this. */
#define AGENT_CLUSTER_MAX (16u << 20)

static bool loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return true;
}

static int numeric(const struct sockaddr *sa, socklen_t len, char *out, size_t n)
{
    return getnameinfo(sa, len, out, (socklen_t)n, NULL, 0, NI_NUMERICHOST) == 0 ? 0 : -EINVAL;
}

int agent_auto_address(char *out, size_t len)
{
    /* The host's name first: on a cluster it names the interface the site meant. */
    char name[256];
    if (gethostname(name, sizeof name) == 0) {
        name[sizeof name - 1] = '\0';
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
        struct addrinfo *ai = NULL;
        if (getaddrinfo(name, NULL, &hints, &ai) == 0) {
            for (struct addrinfo *p = ai; p; p = p->ai_next) {
                if (!loopback(p->ai_addr) && numeric(p->ai_addr, p->ai_addrlen, out, len) == 0) {
                    freeaddrinfo(ai);
                    return 0;
                }
            }
            freeaddrinfo(ai);
        }
    }
    /* Else the address a packet out would leave from: a UDP connect sends nothing. */
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)};
        inet_pton(AF_INET, "192.0.2.1", &to.sin_addr);
        struct sockaddr_storage me;
        socklen_t mlen = sizeof me;
        if (connect(fd, (struct sockaddr *)&to, sizeof to) == 0 &&
            getsockname(fd, (struct sockaddr *)&me, &mlen) == 0 &&
            !loopback((struct sockaddr *)&me) &&
            numeric((struct sockaddr *)&me, mlen, out, len) == 0) {
            close(fd);
            return 0;
        }
        close(fd);
    }
    /* A machine with no network: only its own processes can reach it anyway. */
    snprintf(out, len, "127.0.0.1");
    return 0;
}

static uint32_t env_count(const char *name, uint32_t otherwise)
{
    const char *v = getenv(name);
    char *end;
    unsigned long n = v && *v ? strtoul(v, &end, 10) : 0;
    /* SLURM_CPUS_ON_NODE may read "4(x2)" on some layouts: the leading number counts. */
    return n >= 1 && n <= 100000 ? (uint32_t)n : otherwise;
}

static uint32_t slots_of(enum agent_slots how)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t c = cores > 0 ? (uint32_t)cores : 1;
    switch (how) {
    case AGENT_SLOTS_SLURM_NODE: return env_count("SLURM_CPUS_ON_NODE", c);
    case AGENT_SLOTS_SLURM_TASK: return env_count("SLURM_CPUS_PER_TASK", 1);
    case AGENT_SLOTS_CORES: break;
    }
    return c;
}

/* The cluster file as the launcher sent it, with this host's key path and work
 * directory, written to `path`. */
static int write_cluster(const char *bytes, size_t len, const char *path, const char *key_path,
                         const char *workdir, uint32_t id, struct cluster *cl, char **cause)
{
    char *tmp = xasprintf("%s.in.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -errno : fs_write_all(fd, bytes, len);
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        *cause = xasprintf("cannot write '%s': %s", tmp, strerror(-rc));
    } else {
        char *why = NULL;
        rc = cluster_load(cl, tmp, &why);
        if (rc < 0) {
            *cause = xasprintf("the cluster file sent is not one: %s", why);
            free(why);
        } else if (id != AGENT_ID_COLLECTOR && id >= cl->count) {
            *cause = xasprintf("node %u is not in the cluster file sent (%u nodes)", id, cl->count);
            rc = -EINVAL;
        }
    }
    unlink(tmp);
    free(tmp);
    if (rc < 0)
        return rc;
    free(cl->key_path);
    cl->key_path = xstrdup(key_path);
    free(cl->workdir);
    cl->workdir = xstrdup(workdir);
    return cluster_save(cl, path, cause);
}

static bool read_line(char *buf, size_t n)
{
    if (!fgets(buf, (int)n, stdin))
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return true;
}

int agent_run(const struct agent_options *o, char **cause)
{
    /* A launcher that hangs must not leave the agent waiting for ever: the default
     * action of SIGALRM ends it, and nothing has been started yet. */
    alarm((unsigned)(o->timeout_s > 0 ? o->timeout_s : 120));
    uint32_t id = o->collector ? AGENT_ID_COLLECTOR : o->id;
    if (o->slurm_id) {
        id = env_count("SLURM_PROCID", UINT32_MAX);
        const char *v = getenv("SLURM_PROCID");
        if (v && strcmp(v, "0") == 0)
            id = 0;
        if (id == UINT32_MAX) {
            *cause = xasprintf("SLURM_PROCID is not set: not run by srun");
            return -EINVAL;
        }
    }
    char line[256];
    struct auth_key key;
    if (!read_line(line, sizeof line) || strncmp(line, "key ", 4) != 0 ||
        auth_key_from_hex(line + 4, strlen(line + 4), &key) < 0) {
        sodium_memzero(line, sizeof line);
        *cause = xasprintf("no key on standard input (the launcher went away?)");
        return -EPROTO;
    }
    sodium_memzero(line, sizeof line);

    char addr[64];
    if (strcmp(o->addr, "auto") == 0)
        agent_auto_address(addr, sizeof addr);
    else
        snprintf(addr, sizeof addr, "%s", o->addr);
    uint16_t port = 0;
    int fd = launcher_listen(o->bind ? o->bind : addr, o->port, &port, cause);
    if (fd < 0)
        return fd;
    char host[256] = "?";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    host[strcspn(host, " \t\r\n")] = '\0';
    char ids[16];
    if (o->collector)
        snprintf(ids, sizeof ids, "collector");
    else
        snprintf(ids, sizeof ids, "%u", id);
    printf("jackdaw-agent ready id=%s addr=%s port=%u slots=%u host=%s\n", ids, addr,
           (unsigned)port, slots_of(o->slots), host);
    fflush(stdout);

    size_t len = 0;
    if (!read_line(line, sizeof line) || sscanf(line, "cluster %zu", &len) != 1 || len == 0 ||
        len > AGENT_CLUSTER_MAX) {
        close(fd);
        *cause = xasprintf("no cluster file on standard input (the launch was abandoned?)");
        return -EPROTO;
    }
    char *bytes = xmalloc(len);
    if (fread(bytes, 1, len, stdin) != len) {
        free(bytes);
        close(fd);
        *cause = xasprintf("the cluster file on standard input ended early");
        return -EPROTO;
    }
    char *failed = NULL;
    int rc = fs_mkdirs(o->workdir, 0700, &failed);
    if (rc < 0) {
        *cause = xasprintf("cannot create '%s': %s", failed ? failed : o->workdir, strerror(-rc));
        free(failed);
        free(bytes);
        close(fd);
        return rc;
    }
    /* node-I.* for a node, collector.* for the collector. */
    char *base = o->collector ? xasprintf("%s/collector", o->workdir)
                              : xasprintf("%s/node-%u", o->workdir, id);
    char *key_path = xasprintf("%s.key", base);
    char *cl_path = xasprintf("%s.json", base);
    char *log_path = xasprintf("%s.log", base);
    free(base);
    /* A key left by an earlier cluster in this directory is replaced, never reused. */
    unlink(key_path);
    rc = auth_key_save(key_path, &key, cause);
    sodium_memzero(&key, sizeof key);
    struct cluster cl = {0};
    if (rc == 0)
        rc = write_cluster(bytes, len, cl_path, key_path, o->workdir, id, &cl, cause);
    free(bytes);
    char exe[4096];
    ssize_t n = rc == 0 ? readlink("/proc/self/exe", exe, sizeof exe - 1) : -1;
    if (rc == 0 && n < 0) {
        rc = -errno;
        *cause = xasprintf("cannot find my own binary: %s", strerror(errno));
    }
    if (rc == 0) {
        exe[n] = '\0';
        const char *argv[16 + 64] = {exe};
        int argc = 1;
        const char *level = o->log_level ? o->log_level : "info";
        if (o->collector) {
            launcher__collector_argv(argv, exe, cl_path, level, o->workload_name,
                                     o->workload_digest);
        } else {
            const char *fixed[] = {"node", "--cluster", cl_path, "--id", ids,
                                   "--listen-fd", "3", "--log-level", level};
            memcpy(argv + argc, fixed, sizeof fixed);
            argc += (int)(sizeof fixed / sizeof fixed[0]);
            for (uint32_t k = 0; k < cl.n_node_args && argc < 16 + 63; k++)
                argv[argc++] = cl.node_args[k];
            argv[argc] = NULL;
        }
        alarm(0);
        if (o->exec) {
            printf("jackdaw-agent started id=%s pid=%d\n", ids, (int)getpid());
            fflush(stdout);
            rc = launcher__exec(exe, (char **)argv, log_path, fd);
            /* Said in the log, where standard error now goes. */
            *cause = xasprintf("cannot run '%s': %s", exe, strerror(-rc));
        } else {
            pid_t pid = launcher__spawn(exe, (char **)argv, log_path, fd, false);
            if (pid < 0) {
                rc = pid;
                *cause = xasprintf("cannot start the daemon: %s", strerror(-rc));
            } else {
                printf("jackdaw-agent started id=%s pid=%d\n", ids, (int)pid);
                fflush(stdout);
            }
        }
    }
    cluster_fini(&cl);
    close(fd);
    free(key_path);
    free(cl_path);
    free(log_path);
    return rc;
}
