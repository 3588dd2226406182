/*
 * tclient — see tclient.h.
 */
#include "trace/collector/tclient.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "core/base/xalloc.h"
#include "core/net/conn.h"
#include "core/net/frame.h"
#include "core/net/proto.h"
#include "trace/collector/jobspool.h"

#define NAMES_PER_MESSAGE 4096
/* Each id is at most WORKLOAD_MAX_ID bytes, sent with a 4-byte length and its NUL. */
_Static_assert((uint64_t)NAMES_PER_MESSAGE * (WORKLOAD_MAX_ID + 5) + 12 < FRAME_MAX_BODY,
               "a NAMES message of the longest ids fits in a frame");
/* Notes kept for a console that has not polled yet (the oldest go first beyond). */
#define TCLIENT_MAX_HELD_NOTES (4 * WIRE_MAX_NOTES)

struct tclient {
    uv_loop_t loop;
    struct conn_hub *hub;
    struct conn *conn;          /* NULL once closed */
    bool ready;
    char addr[96];
    char *header_json;          /* from INFO */
    struct wire_state state;    /* the latest STATE */
    bool fresh;                 /* state arrived since the last poll */
    bool proto_error;
    uint64_t records_sent;      /* JOB and NAMES messages sent */
    int64_t records_written;    /* the collector's latest ACK: how many it wrote */
    char reason[200];           /* a refusal handed to conn.c (copied at once) */
};

static void on_ready(struct conn *c)
{
    struct tclient *t = conn_hub_data(conn_hub_of(c));
    t->ready = true;
}

static int on_message(struct conn *c, uint16_t type, struct rbuf *r, const char **reason)
{
    struct tclient *t = conn_hub_data(conn_hub_of(c));
    if (type == MSG_TRACE_INFO) {
        char *h = rbuf_strdup(r, PROTO_MAX_STRING);
        if (!h) {
            *reason = "malformed trace-info";
            return -EBADMSG;
        }
        free(t->header_json);
        t->header_json = h;
        return 0;
    }
    if (type == MSG_TRACE_ACK) {
        if (wire_get_next_seq(r, &t->records_written) < 0) {
            *reason = "malformed trace-ack";
            return -EBADMSG;
        }
        return 0;
    }
    if (type == MSG_TRACE_STATE) {
        struct wire_state s;
        if (wire_get_state(r, &s) < 0) {
            snprintf(t->reason, sizeof t->reason, "malformed trace-state from collector %s: %s",
                     conn_peer_name(c), s.bad ? s.bad : "unreadable");
            *reason = t->reason;
            return -EBADMSG;
        }
        /* STATEs that arrive between two polls replace each other's samples, but their
         * notes add up: a console busy elsewhere must not lose a failure or a switch. */
        if (t->fresh && t->state.nnotes) {
            uint32_t keep = t->state.nnotes;
            if (keep + s.nnotes > TCLIENT_MAX_HELD_NOTES)
                keep = s.nnotes >= TCLIENT_MAX_HELD_NOTES ? 0 : TCLIENT_MAX_HELD_NOTES - s.nnotes;
            struct wire_note *all = xcalloc((size_t)keep + s.nnotes + 1, sizeof *all);
            memcpy(all, t->state.notes + (t->state.nnotes - keep), keep * sizeof *all);
            if (s.nnotes)
                memcpy(all + keep, s.notes, s.nnotes * sizeof *all);
            free(s.notes);
            s.notes = all;
            s.nnotes += keep;
        }
        wire_state_fini(&t->state);
        t->state = s;
        t->fresh = true;
        return 0;
    }
    *reason = "unexpected message from the collector";
    t->proto_error = true;
    return -EPROTO;
}

static void on_close(struct conn *c, const char *reason)
{
    struct tclient *t = conn_hub_data(conn_hub_of(c));
    (void)reason;
    if (c == t->conn)
        t->conn = NULL;
}

static void expire(uv_timer_t *h)
{
    *(bool *)h->data = true;
}

/* Runs the loop until *flag says done, the connection is gone or the time is up. */
static void run_for(struct tclient *t, int timeout_ms, bool (*done)(const struct tclient *))
{
    bool expired = false;
    uv_timer_t timer;
    uv_timer_init(&t->loop, &timer);
    timer.data = &expired;
    uv_timer_start(&timer, expire, (uint64_t)(timeout_ms > 0 ? timeout_ms : 0), 0);
    while (!expired && t->conn && !(done && done(t)))
        uv_run(&t->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&timer, NULL);
    uv_run(&t->loop, UV_RUN_NOWAIT);
}

static bool is_ready(const struct tclient *t)
{
    return t->ready;
}

static bool is_fresh(const struct tclient *t)
{
    return t->fresh;
}

static bool all_written(const struct tclient *t)
{
    return t->records_written >= 0 && (uint64_t)t->records_written >= t->records_sent;
}

int tclient_connect(struct tclient **out, const struct cluster *cl, const struct auth_key *key,
                    int timeout_ms, char **cause)
{
    *out = NULL;
    if (!cl->collector.host[0]) {
        *cause = xasprintf("the cluster file names no collector (started with --no-trace?)");
        return -ENOENT;
    }
    struct tclient *t = xcalloc(1, sizeof *t);
    snprintf(t->addr, sizeof t->addr, "%s:%d", cl->collector.host, cl->collector.port);
    uv_loop_init(&t->loop);
    static const struct conn_callbacks cb = {on_ready, on_message, on_close};
    t->hub = conn_hub_create(&t->loop, key, CONN_ROLE_CLIENT, (uint32_t)getpid(), &cb, t);
    t->conn = conn_connect(t->hub, cl->collector.host, cl->collector.port, NULL, cause);
    if (t->conn)
        run_for(t, timeout_ms, is_ready);
    if (!t->conn || !t->ready) {
        if (!*cause)
            *cause = xasprintf("cannot reach the collector at %s (%s)", t->addr,
                               t->conn ? "no answer" : "connection refused or key rejected");
        tclient_destroy(t);
        return -ECONNREFUSED;
    }
    *out = t;
    return 0;
}

void tclient_destroy(struct tclient *t)
{
    if (!t)
        return;
    if (t->conn)
        conn_close(t->conn, "done");
    conn_hub_destroy(t->hub);
    uv_run(&t->loop, UV_RUN_DEFAULT);
    uv_loop_close(&t->loop);
    free(t->header_json);
    wire_state_fini(&t->state);
    free(t);
}

int tclient_shutdown(struct tclient *t, int timeout_ms)
{
    if (!t->conn)
        return -ENOTCONN;
    size_t at;
    conn_msg_begin(t->conn, MSG_SHUTDOWN, &at);
    conn_msg_end(t->conn, at);
    conn_flush(t->conn);
    /* It closes every connection as it stops (after its nodes' last events). */
    run_for(t, timeout_ms, NULL);
    return t->conn ? -ETIMEDOUT : 0;
}

int tclient_record_job(struct tclient *t, const struct workload *wl, uint32_t job,
                       const char *digest, const char *mode, int timeout_ms, char **cause)
{
    if (!t->conn) {
        *cause = xasprintf("collector at %s: connection lost", t->addr);
        return -ECONNRESET;
    }
    size_t at;
    struct wbuf *b = conn_msg_begin(t->conn, MSG_TRACE_JOB, &at);
    struct wire_job j = {.job = job, .tasks = wl->count, .name = wl->name,
                         .digest = (char *)(uintptr_t)digest,
                         .mode = (char *)(uintptr_t)mode};
    wire_put_job(b, &j);
    conn_msg_end(t->conn, at);
    t->records_sent++;
    const char *ids[NAMES_PER_MESSAGE];
    for (uint32_t first = 0; first < wl->count; first += NAMES_PER_MESSAGE) {
        uint32_t n = wl->count - first < NAMES_PER_MESSAGE ? wl->count - first : NAMES_PER_MESSAGE;
        for (uint32_t i = 0; i < n; i++)
            ids[i] = wl->tasks[first + i].id;
        struct wire_names names = {.job = job, .first = first, .count = n, .ids = ids};
        b = conn_msg_begin(t->conn, MSG_TRACE_NAMES, &at);
        wire_put_names(b, &names);
        conn_msg_end(t->conn, at);
        t->records_sent++;
        /* Let big id lists leave as they are built rather than pile up in memory. */
        uv_run(&t->loop, UV_RUN_NOWAIT);
    }
    conn_flush(t->conn);
    run_for(t, timeout_ms, all_written);
    if (all_written(t))
        return 0;
    if (!t->conn) {
        *cause = xasprintf("collector at %s closed the connection before writing the job's "
                           "records", t->addr);
        return -ECONNRESET;
    }
    *cause = xasprintf("collector at %s did not write the job's records within %d ms", t->addr,
                       timeout_ms);
    return -ETIMEDOUT;
}

int tclient_keep_job(const struct cluster *cl, const struct workload *wl, uint32_t job,
                     const char *digest, const char *mode, char **path, char **cause)
{
    if (!cl->workdir || !cl->workdir[0]) {
        *cause = xasprintf("the cluster file names no work directory to keep them in");
        return -ENOENT;
    }
    const char **ids = xcalloc((size_t)wl->count + 1, sizeof *ids);
    for (uint32_t i = 0; i < wl->count; i++)
        ids[i] = wl->tasks[i].id;
    char *dir = jobspool_dir(cl->workdir);
    int rc = jobspool_keep(dir, job, wl->count, wl->name, digest, mode, ids, path, cause);
    free(dir);
    free(ids);
    return rc;
}

int tclient_subscribe(struct tclient *t, uint32_t period_ms, char **cause)
{
    if (!t->conn) {
        *cause = xasprintf("collector at %s: connection lost", t->addr);
        return -ECONNRESET;
    }
    size_t at;
    struct wbuf *b = conn_msg_begin(t->conn, MSG_TRACE_SUBSCRIBE, &at);
    wire_put_subscribe(b, period_ms);
    conn_msg_end(t->conn, at);
    conn_flush(t->conn);
    return 0;
}

int tclient_poll(struct tclient *t, int wait_ms, const struct wire_state **state,
                 const char **header_json)
{
    t->fresh = false;
    if (wait_ms > 0)
        run_for(t, wait_ms, is_fresh);
    else
        uv_run(&t->loop, UV_RUN_NOWAIT);
    if (header_json)
        *header_json = t->header_json;
    if (t->fresh) {
        *state = &t->state;
        return 1;
    }
    *state = NULL;
    return t->conn ? 0 : -ECONNRESET;
}
