/*
 * cluster — the description of a cluster: its nodes (address, slots, speed, pid when
 * started locally), the key file and the work directory.  Written by `jackdaw launch`
 * (mode 0600, it names the key), read by daemons for the membership (zero-hop routing
 * needs every node to know every other) and by clients to find them.
 *
 * JSON:  {"version": 1, "key": PATH, "workdir": DIR, "log": PATH,
 *         "run": {"id": "jd-…", "start_ns": 1763779200000000000,
 *                 "node_args": ["--steal", "sqrt", …]},
 *         "collector": {"host": "127.0.0.1", "port": 40100, "pid": 1233,
 *                       "trace": "/path/run.jdt"},
 *         "nodes": [{"id": 0, "host": "127.0.0.1", "port": 40000, "slots": 8,
 *                    "speed": 1.0, "pid": 1234}, ...]}
 * "run" and "collector" are optional: a cluster without a collector records no trace.
 * A cluster launched on other hosts (core/client/remote.c) also has, per node, "name"
 * (the host as the hostfile or Slurm named it; "host" is the address the node is
 * reached at) and "remote_pid" (its pid there; "pid" is 0, no local process), and at
 * the top "rsh": the remote shell command line it was started with ("srun" for Slurm),
 * which `stop` uses to reach a node that no longer answers.
 * The run's start_ns (CLOCK_REALTIME) is the origin of every trace timestamp, so that the
 * nodes' events line up without a clock exchange.
 *
 * Owns the parsed description.  Return convention: 0 or negative errno with *cause.
 */
#ifndef JACKDAW_CLUSTER_H
#define JACKDAW_CLUSTER_H

#include <stdint.h>

#define CLUSTER_NAME_MAX 320

struct cluster_node {
    uint32_t id;
    char host[64];          /* the numeric address it is reached at */
    char name[CLUSTER_NAME_MAX]; /* the host's name; "" for a local node */
    int port;
    uint32_t slots;
    double speed;
    int pid;                /* 0 when not started by launch on this host */
    int remote_pid;         /* its pid on host `name`; 0 when local or unknown */
};

struct cluster_collector {
    char host[64];          /* "" when the cluster has no collector */
    int port;
    int pid;                /* 0 when not started by launch on this host */
    char name[CLUSTER_NAME_MAX]; /* its host with launch --collector HOST; else "" */
    int remote_pid;         /* its pid on that host; 0 when local or unknown */
    char *trace_path;       /* owned, may be NULL */
};

struct cluster {
    char *run_id;           /* owned, may be NULL */
    int64_t start_ns;       /* run start, ns since the epoch; 0 when unknown */
    char **node_args;       /* owned, n_node_args strings: the daemons' extra flags */
    uint32_t n_node_args;
    struct cluster_collector collector;
    char *key_path;         /* owned */
    char *workdir;          /* owned */
    char *log_path;         /* owned, may be NULL */
    char *rsh;              /* owned: the remote shell of a many-host launch; NULL when
                               local */
    uint32_t count;
    struct cluster_node *nodes; /* owned, count entries, nodes[i].id == i */
};

int cluster_load(struct cluster *c, const char *path, char **cause);
/* Writes atomically (temp file + rename), mode 0600. */
int cluster_save(const struct cluster *c, const char *path, char **cause);
void cluster_fini(struct cluster *c);
/* Where `jackdaw launch` puts the cluster file unless told: $JACKDAW_CLUSTER, else
 * $XDG_RUNTIME_DIR/jackdaw/cluster.json, else /tmp/jackdaw-UID/cluster.json. Owned. */
char *cluster_default_path(void);

/*
 * The files a cluster owns beside its cluster file.  They are named after the cluster
 * file, so that two clusters launched in one directory never share a key (the second
 * launch would lock the first out), a work directory (their spool files would mix) or
 * job files (cancel would find the other cluster's latest job):
 *   /x/a.json -> /x/a.key, /x/a.work/, /x/a.jobs/        (a trailing ".json" is dropped)
 * The default name keeps the layout it always had:
 *   /x/cluster.json -> /x/cluster.key, /x/work/, /x/jobs/
 * Pure string work on the path as given (relative stays relative).  Owned.
 */
enum cluster_owned { CLUSTER_OWNED_KEY, CLUSTER_OWNED_WORKDIR, CLUSTER_OWNED_JOBS };
char *cluster_owned_path(const char *cluster_path, enum cluster_owned what);

#endif
