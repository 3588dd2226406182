/*
 * client — the connection at the heart of the client library (core/client): how the
 * commands (run, submit, status, cancel), the launcher (readiness, shutdown) and the
 * console (tui/session.c) talk to a cluster's daemons.  It connects to every node with
 * the client role, sends a workload's metadata and tasks, and receives completion
 * reports and statistics.  It writes records through core/kvs, which itself speaks
 * core/net's protocol, so it lives above both rather than in core/net.
 *
 * Owns its loop, its connection hub, one connection per node, and a metadata-store
 * client (core/kvs with no shard) through which it writes task metadata to each
 * record's owner.  Single-threaded: callers drive it with the blocking helpers below
 * or by running client_loop() themselves (the run command does, for its progress
 * timer).  Return convention: 0 or a negative errno with *cause.
 */
#ifndef JACKDAW_CLIENT_H
#define JACKDAW_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "core/model/cluster.h"
#include "core/model/submit_mode.h"
#include "core/model/workload.h"
#include "core/net/auth.h"
#include "core/net/proto.h"

struct client;

struct client_callbacks {
    void *arg;
    /* A task of a job this client submitted ended.  May be NULL. */
    void (*on_task_end)(void *arg, const struct proto_task_end *e);
    /* A node's connection closed after its handshake (it stopped or died); a node
     * that was never reached is reported by client_connect instead.  May be NULL. */
    void (*on_node_lost)(void *arg, uint32_t node, const char *reason);
    /* A node answered client_attach: what its shard knows of the job's ended tasks
     * (one call per JOB_ENDED part; m borrowed for the call).  May be NULL. */
    void (*on_job_ended)(void *arg, uint32_t node, const struct proto_job_ended *m);
    /* An end reported again by its record's primary: the node that ran the task died,
     * perhaps before reporting it (MSG_TASK_RELISTED).  May be NULL. */
    void (*on_task_listed)(void *arg, const struct proto_task_end *e);
};

/* Borrowed cluster and key must outlive the client. */
struct client *client_create(const struct cluster *cl, const struct auth_key *key,
                             const struct client_callbacks *cb);
void client_destroy(struct client *c);
uv_loop_t *client_loop(struct client *c);
uint32_t client_nodes(const struct client *c);

/* Connects to every node and completes the handshakes, within timeout_ms.  On failure
 * *cause names every node not reached, with its address and why (one line each when
 * there are several): it refused, it closed the handshake (a wrong key), or it did not
 * answer in time (stopped or overloaded). */
int client_connect(struct client *c, int timeout_ms, char **cause);
/* 1 when node `node` completed the handshake and its connection is still up. */
int client_node_ready(const struct client *c, uint32_t node);

/*
 * Submits a workload as job `job` (task keys job<<32 | index): JOB_BEGIN to every
 * node with the number of tasks it will get, every task's metadata to its shard owner,
 * a barrier so that all records exist, then the tasks to the nodes the mode picks.  Returns once every node has acknowledged
 * the tasks (a second barrier) or the timeout passed.  *t_submit is the wall time the
 * first message of the job went out, after the workload's initial data objects were
 * made on their nodes (setup, like the papers' pre-existing input files).
 */
int client_submit(struct client *c, const struct workload *wl, uint32_t job,
                  enum submit_mode mode, int timeout_ms, int64_t *t_submit, char **cause);

/* Job removal: removes tasks job:index[i] (and their unfinished subtrees), then waits
 * for a barrier so that the removal has reached every shard owner. */
int client_remove(struct client *c, uint32_t job, const int64_t *index, uint32_t n,
                  int timeout_ms, char **cause);

/* The job is over and its summary printed: every node's metadata shard forgets the
 * job's records (core/kvs/shard.h, forget), then a barrier so that the request has
 * reached every node. */
int client_forget_job(struct client *c, uint32_t job, int timeout_ms, char **cause);

/* Statistics of every node into out[0..nodes) (caller calls proto_stats_fini on each).
 * got, when not NULL, says which nodes answered (the others' entries are zero): with
 * nodes lost, the answers of the others are still there for the caller. */
int client_stats(struct client *c, struct proto_stats *out, int timeout_ms, char **cause);
int client_stats_some(struct client *c, struct proto_stats *out, bool *got, int timeout_ms,
                      char **cause);

/*
 * Fetches object `key` (a task's output, an initial object) from whichever node holds
 * it, writing its bytes to fd in order and checking its CRC-32; *bytes gets the count
 * written.  -ENOENT when no reached node holds it, else a negative errno with *cause
 * (owned) saying what failed.
 */
int client_fetch(struct client *c, uint64_t key, int fd, uint64_t *bytes, int timeout_ms,
                 char **cause);

/* Attaches to running job `job`: every reached node sends this client the job's task
 * ends from now on, and first what its shard knows ended (on_job_ended).  Returns once
 * every reached node has answered its last part, or the time is up. */
int client_attach(struct client *c, uint32_t job, int timeout_ms, char **cause);

/* Asks every node to shut down (and flushes the request). */
int client_shutdown(struct client *c, int timeout_ms);

/* Runs the loop until *done becomes non-zero, a node is lost, or timeout_ms passes
 * (-1: no limit).  Returns 0, -ETIMEDOUT or -ECONNRESET (a node went away). */
int client_wait(struct client *c, const int *done, int timeout_ms);

/* A fresh random job number. */
uint32_t client_new_job(void);

#endif
