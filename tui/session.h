/*
 * session — the console's cluster: the one it watches (through the collector only, never
 * the schedulers) and, when it launched it, the one it owns: the daemons and collector,
 * the job it submitted, its cancellation and its teardown.
 *
 * Owns the cluster description and key, the collector subscription
 * (trace/collector/tclient), the submitted workload and the generated workload file.
 * Called by tui/console.c on its one thread; every call is synchronous (launch and
 * teardown take seconds: the console draws a message first).  Nothing here writes to the
 * terminal: libraries' warnings go to stderr, which the console redirects while the
 * screen is up.
 * Return convention: 0 or a negative errno with *cause (owned) for the status line.
 */
#ifndef JACKDAW_TUI_SESSION_H
#define JACKDAW_TUI_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/model/cluster.h"
#include "core/model/workload.h"
#include "core/net/auth.h"
#include "tui/form.h"
#include "tui/model.h"

struct tclient;

struct session {
    char *cluster_path;         /* owned */
    uint32_t period_ms;         /* STATE period asked of the collector */
    bool attached;              /* cl and key are loaded */
    struct cluster cl;
    struct auth_key key;
    bool launched;              /* this console started the daemons */
    struct tclient *tc;         /* owned; NULL while not connected */
    bool header_set;            /* the model has this subscription's header */
    int64_t retry_at_ns;        /* monotonic: when to try the collector again */
    /* the job this console submitted (or found in the cluster's job files) */
    bool have_job;
    uint32_t job;
    struct workload wl;         /* owned when have_job */
    char *generated;            /* owned path of the generated workload file, or NULL */
    char *trace_path;           /* owned: the trace of the cluster last attached, or NULL;
                                   kept after a teardown, for the words at quit */
    char steal[48];             /* the stealing policy named in the run header */
};

void session_init(struct session *s, const char *cluster_path, uint32_t period_ms);
void session_fini(struct session *s); /* leaves a launched cluster running: see teardown */

/* Loads the cluster file and its key.  -ENOENT when there is no cluster file. */
int session_attach(struct session *s, char **cause);
/* Connects to the collector and subscribes.  -ENOENT when the cluster has none. */
int session_connect(struct session *s, char **cause);
/*
 * Feeds the model with what the collector sent since the last call: 1 when a new state
 * arrived (the model was ticked), 0 when none, -ECONNRESET when the collector went away
 * (retried every 2 s from then on; a reconnection starts the model over, since the
 * collector resends its recent notes).
 */
int session_poll(struct session *s, struct model *m);
bool session_connected(const struct session *s);

/* Progress of a launch, for the screen: called before each slow step. */
typedef void (*session_progress_fn)(void *arg, const char *what);
/* Launches the plan's cluster (daemons + collector, tracing on) at s->cluster_path,
 * writes or loads the workload, records the job with the collector, submits it and
 * subscribes.  On failure nothing is left running. */
int session_launch(struct session *s, const struct form_plan *p, session_progress_fn progress,
                   void *arg, char **cause);
/* Cancels the job (removes its root tasks and so every unfinished task): the one this
 * console submitted, else the latest in the cluster's job files. */
int session_cancel(struct session *s, char **cause);
/* Stops every daemon and the collector and removes the cluster file. */
int session_teardown(struct session *s, char **cause);

/* The pids this console started (nodes, then collector), for a last-resort SIGTERM from a
 * fatal signal handler; returns how many were written into out. */
uint32_t session_pids(const struct session *s, pid_t *out, uint32_t cap);

/* The stealing policy of a run header's config.node_args ("adaptive" when the header
 * names none; "" when the header cannot be read). */
void session_header_steal(const char *header_json, char *out, size_t len);

#endif
