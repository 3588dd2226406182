/*
 * tclient — a client's conversation with a cluster's collector: record a job (so the
 * trace maps task numbers to workload ids) and, for consoles, subscribe to live state.
 *
 * Owns: a tclient owns its own libuv loop, connection hub and the connection to the
 * collector; calls are synchronous with timeouts (the console drives its own loop and
 * polls with tclient_poll).  Called by core/client/job.c (record a job, or keep it while
 * the collector is away) and the console.
 * Return convention: 0 or negative errno with *cause naming the collector's address.
 */
#ifndef JACKDAW_TRACE_TCLIENT_H
#define JACKDAW_TRACE_TCLIENT_H

#include <stdint.h>

#include "core/model/cluster.h"
#include "core/model/workload.h"
#include "core/net/auth.h"
#include "trace/format/wire.h"

struct tclient;

/* Connects to the collector the cluster file names; -ENOENT when it names none. */
int tclient_connect(struct tclient **out, const struct cluster *cl, const struct auth_key *key,
                    int timeout_ms, char **cause);
void tclient_destroy(struct tclient *t); /* NULL is a no-op */
/* Asks the collector to stop (once the nodes still sending have sent their last
 * events) and waits until it closed the connection: 0, or -ETIMEDOUT.  For a collector
 * on another host, which has no pid here to signal. */
int tclient_shutdown(struct tclient *t, int timeout_ms);

/* Sends JOB (with the submission mode's name, core/model/submit_mode.h) and the ids of
 * every task (NAMES), and waits until the collector says it has written them all.  -ECONNRESET when the connection was lost first, -ETIMEDOUT
 * when the time ran out: the job's records may then be missing from the trace, and
 * tclient_keep_job keeps them for the collector (a part already written is not written
 * twice). */
int tclient_record_job(struct tclient *t, const struct workload *wl, uint32_t job,
                       const char *digest, const char *mode, int timeout_ms, char **cause);

/* Keeps the job's records in the cluster's work directory for the collector to write
 * when it is back (trace/collector/jobspool.h): for a client that could not reach it,
 * or lost it before hearing that they were written.  *path (malloc'd) names the file. */
int tclient_keep_job(const struct cluster *cl, const struct workload *wl, uint32_t job,
                     const char *digest, const char *mode, char **path, char **cause);

/* Asks for STATE every period_ms.  The run header arrives with the first poll. */
int tclient_subscribe(struct tclient *t, uint32_t period_ms, char **cause);
/*
 * Runs the loop for up to wait_ms (0: only what is ready).  Returns 1 when a new STATE
 * arrived (in *state, owned by t until the next poll), 0 when none did, or -ECONNRESET
 * once the collector is gone.  *header_json, when not NULL, is set to the run header
 * once INFO arrived (owned by t).
 */
int tclient_poll(struct tclient *t, int wait_ms, const struct wire_state **state,
                 const char **header_json);

#endif
