/*
 * remote — the many-host half of the launcher (launcher.c calls it for `launch
 * --hostfile` and `launch --slurm`): it starts one `jackdaw agent` per daemon through
 * the remote shell (`RSH HOST COMMAND-LINE`, as ssh is run) or one srun step for the
 * whole allocation, and drives the agents' exchange (core/client/agent.h) in two
 * steps, because the cluster file can only be written once every daemon's port is known:
 *
 *   remote_begin   agents started, key sent; returns when every one has bound its
 *                  socket (the cluster's nodes filled in: address, port, slots, name)
 *   remote_finish  the cluster file sent to each; returns when every daemon started
 *                  (remote pids filled in)
 *   remote_abort   on any failure: agents still waiting are let go (their standard
 *                  input closes: they exit, starting nothing) and their remote shells
 *                  ended; daemons already started are the caller's to stop
 *
 * Every wait is bounded (o->start_timeout_ms per step); a failure names the host, its
 * hostfile line and what failed (the remote shell's exit status and its last error
 * output, or silence).  Return convention: 0 or a negative errno with *cause.
 */
#ifndef JACKDAW_REMOTE_H
#define JACKDAW_REMOTE_H

#include <stddef.h>

#include "core/client/launcher.h"
#include "core/model/cluster.h"

struct remote;

/* Fills out->count, out->nodes (all but pids) and out->rsh. */
int remote_begin(struct remote **out_r, const struct launch_options *o, const char *key_hex,
                 const char *workdir, struct cluster *out, char **cause);
/* Sends the cluster file (its bytes as written at cluster_path) and fills remote_pid. */
int remote_finish(struct remote *r, const char *cluster_path, struct cluster *cl, char **cause);
void remote_abort(struct remote *r);
void remote_destroy(struct remote *r);

/* Ends a daemon (node `node`, or the collector when `node` is cl->count) that no longer
 * answers through the remote shell it was started with
 * (`RSH NAME kill PID`, once /proc there shows that pid is the daemon; bounded): 0 when
 * signalled, -ESRCH when it does not run there, another negative errno when the remote
 * shell failed. */
int remote_kill(const struct cluster *cl, uint32_t node, int timeout_ms);

/* The local address that reaches `peer` (numeric), for a collector the remote daemons
 * connect to; 0 or a negative errno. */
int remote_local_address_towards(const char *peer, char *out, size_t len);

#endif
