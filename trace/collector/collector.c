/*
 * collector — see collector.h.  State lives on the loop thread: a peer record per
 * authenticated connection (conn data), a slot per cluster node, the note ring.  A
 * node's slot points at the connection of its latest HELLO; a newer HELLO from the same
 * node closes the older connection, so a node that reconnected before its old socket
 * timed out is served once.
 */
#include "trace/collector/collector.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <uv.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/conn.h"
#include "core/net/proto.h"
#include "trace/collector/collect_file.h"
#include "trace/collector/jobfold.h"
#include "trace/collector/jobspool.h"
#include "trace/format/wire.h"

/* Notes kept for consoles; a STATE carries at most this many, so a subscriber that fell
 * further behind gets the latest ones. */
#define NOTE_RING WIRE_MAX_NOTES
/* A console that has not read this much of what we sent skips STATEs until it has: a
 * stuck console must not make the collector buffer without bound. */
#define STATE_BACKLOG_MAX (8u << 20)
/* Retry period of a failed trace write (disk full, I/O error). */
#define WRITE_RETRY_MS 1000
/* Blocks held while writes fail, beyond which a node's connection is closed instead:
 * it keeps its blocks spooled until it reconnects and hears RESUME. */
#define PENDING_MAX (64u << 20)
/* How often the job records clients kept while we were away are looked for. */
#define KEPT_JOBS_MS 2000

struct collector;

/* One authenticated connection: a node's trace stream, or a client or console. */
struct peer {
    struct collector *col;
    struct conn *conn;             /* borrowed: the hub owns it; valid until on_close */
    struct peer *prev, *next;      /* on col->peers */
    bool is_node;
    uint32_t node;                 /* is_node: its id, < the cluster's node count */
    bool hello;                    /* is_node: HELLO received on this connection */
    uint8_t sync[TRACE_SYNC_SIZE]; /* is_node: the marker ending its blocks */
    bool ack_due;                  /* blocks (a node) or JOB and NAMES (a client) arrived
                                    * since the last ACK */
    uint64_t records;              /* a client: its JOB and NAMES messages handled */
    uv_timer_t *state_timer;       /* owned until uv_close; NULL when not subscribed */
    uint64_t note_cursor;          /* notes this subscriber has been sent (ring count) */
};

struct node_slot {
    struct peer *peer;             /* the connection of its latest HELLO; NULL when down */
    bool ever;                     /* said HELLO at least once */
    bool seen;                     /* a LIVE arrived at least once */
    int64_t time_ns;               /* of the latest sample */
    struct trace_sample sample;
};

struct collector {
    const struct collector_config *cfg; /* borrowed */
    uv_loop_t loop;
    struct conn_hub *hub;
    uv_check_t check;
    uv_signal_t sigterm, sigint;
    uv_timer_t retry;
    uv_timer_t kept_jobs;          /* looks for job records clients kept (jobspool) */
    char *jobs_dir;                /* owned; NULL when the cluster has no workdir */
    struct collect_file *file;     /* owned; NULL once closed */
    const char *run_id;            /* borrowed from the cluster; NULL when it has none */
    int64_t start_ns;              /* origin of the trace's times (the file header's) */
    uint32_t state_floor_ms;
    uint32_t nnodes;
    struct node_slot *nodes;       /* owned; nnodes */
    struct peer *peers;            /* list of every peer */
    struct wire_note *ring;        /* owned; NOTE_RING */
    uint64_t notes_total;          /* notes ever pushed; the newest is at total - 1 */
    struct wire_note *scratch_notes;          /* owned; NOTE_RING, for one STATE */
    struct wire_node_state *scratch_nodes;    /* owned; nnodes, for one STATE */
    struct jobfold *fold;          /* owned: per-job figures for consoles */
    bool ack_due;                  /* some peer has ack_due */
    bool write_failing;            /* the last flush failed; the retry timer runs */
    bool stop_requested, stopping;
    int64_t stop_by_ns;            /* with a signal: stop then at the latest (monotonic) */
    uv_timer_t drain;              /* wakes the loop while nodes finish their traces */
    uint64_t resent_blocks, gaps;
    int status;                    /* enum collector_status */
    char *cause;                   /* owned; with a failed status */
    char reason[320];              /* drop reasons handed to conn.c (copied at once) */
};

/* ---- notes and state ------------------------------------------------------------------- */

static int64_t run_now(const struct collector *col)
{
    int64_t t = clock_wall_ns() - col->start_ns;
    return t > 0 ? t : 0;
}

static void push_note(struct collector *col, const struct wire_note *n)
{
    col->ring[col->notes_total % NOTE_RING] = *n;
    col->notes_total++;
}

static void send_state(struct collector *col, struct peer *p)
{
    if (conn_pending_bytes(p->conn) > STATE_BACKLOG_MAX)
        return;
    uint64_t from = p->note_cursor;
    if (col->notes_total - from > NOTE_RING)
        from = col->notes_total - NOTE_RING;
    uint32_t nnotes = (uint32_t)(col->notes_total - from);
    for (uint32_t i = 0; i < nnotes; i++)
        col->scratch_notes[i] = col->ring[(from + i) % NOTE_RING];
    for (uint32_t i = 0; i < col->nnodes; i++) {
        const struct node_slot *s = &col->nodes[i];
        col->scratch_nodes[i] = (struct wire_node_state){
            .seen = s->seen, .connected = s->peer != NULL, .time_ns = s->time_ns,
            .sample = s->sample};
    }
    struct collect_file_stats st;
    collect_file_stats(col->file, &st);
    uint32_t njobs;
    bool partial;
    const struct wire_job_tally *jobs = jobfold_jobs(col->fold, &njobs, &partial);
    struct wire_state state = {
        .now_ns = run_now(col), .events_written = st.file_events, .nnodes = col->nnodes,
        .nodes = col->scratch_nodes, .nnotes = nnotes, .notes = col->scratch_notes,
        .jobs_partial = partial, .njobs = njobs, .jobs = (struct wire_job_tally *)jobs};
    size_t at;
    struct wbuf *b = conn_msg_begin(p->conn, MSG_TRACE_STATE, &at);
    wire_put_state(b, &state);
    conn_msg_end(p->conn, at);
    p->note_cursor = col->notes_total;
}

static void on_state_timer(uv_timer_t *t)
{
    struct peer *p = t->data;
    send_state(p->col, p);
}

static void free_handle(uv_handle_t *h)
{
    free(h);
}

/* ---- writing and acknowledging ---------------------------------------------------------- */

static void send_next_seq(struct conn *c, uint16_t type, int64_t next_seq)
{
    size_t at;
    struct wbuf *b = conn_msg_begin(c, type, &at);
    wire_put_next_seq(b, next_seq);
    conn_msg_end(c, at);
}

static void on_retry(uv_timer_t *t);

/* Writes what the pass buffered, then tells each node that sent blocks how far its
 * events are in the file.  Returns 0 or the flush error (the blocks stay buffered and
 * the retry timer runs). */
static int write_and_ack(struct collector *col)
{
    if (collect_file_dirty(col->file)) {
        char *why = NULL;
        int rc = collect_file_flush(col->file, &why);
        if (rc < 0) {
            if (!col->write_failing)
                log_error("%s; retrying every %d ms, nodes keep their blocks until acknowledged",
                          why ? why : "cannot write the trace", WRITE_RETRY_MS);
            free(why);
            col->write_failing = true;
            if (!col->stopping)
                uv_timer_start(&col->retry, on_retry, WRITE_RETRY_MS, 0);
            return rc;
        }
        if (col->write_failing)
            log_info("trace writes succeed again");
        col->write_failing = false;
    }
    if (!col->ack_due)
        return 0;
    col->ack_due = false;
    for (struct peer *p = col->peers; p; p = p->next) {
        if (!p->ack_due)
            continue;
        p->ack_due = false;
        /* A client hears how many of its JOB and NAMES messages are written: until it
         * has heard them all, it keeps the job itself (jobspool). */
        send_next_seq(p->conn, MSG_TRACE_ACK,
                      p->is_node ? collect_file_written_seq(col->file, (int32_t)p->node)
                                 : (int64_t)p->records);
    }
    return 0;
}

static void on_retry(uv_timer_t *t)
{
    struct collector *col = t->data;
    if (!col->stopping)
        write_and_ack(col);
}

/* ---- node messages ---------------------------------------------------------------------- */

/* Fills the drop reason for conn.c, which copies it before the next message. */
__attribute__((format(printf, 3, 4))) static int reject(struct collector *col,
                                                        const char **reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(col->reason, sizeof col->reason, fmt, ap);
    va_end(ap);
    *reason = col->reason;
    return -EBADMSG;
}

static int on_hello(struct collector *col, struct peer *p, struct rbuf *r, const char **reason)
{
    struct wire_hello h;
    if (wire_get_hello(r, &h) < 0)
        return reject(col, reason, "node %u: malformed trace-hello", p->node);
    if (col->run_id && h.run_id[0] && strcmp(h.run_id, col->run_id) != 0)
        return reject(col, reason, "node %u is in run '%s' but this collector records run '%s'",
                      p->node, h.run_id, col->run_id);
    struct node_slot *s = &col->nodes[p->node];
    if (s->peer && s->peer != p) {
        struct peer *old = s->peer;
        old->hello = false;
        old->ack_due = false;
        conn_close(old->conn, "the node's trace stream moved to a newer connection");
    }
    s->peer = p;
    s->ever = true;
    p->hello = true;
    memcpy(p->sync, h.sync, TRACE_SYNC_SIZE);
    int64_t resume = collect_file_written_seq(col->file, (int32_t)p->node);
    send_next_seq(p->conn, MSG_TRACE_RESUME, resume);
    log_info("node %u trace stream from %s: resuming at seq %" PRId64, p->node,
             conn_peer_name(p->conn), resume);
    return 0;
}

static int on_block(struct collector *col, struct peer *p, struct rbuf *r, const char **reason)
{
    if (!p->hello)
        return reject(col, reason, "node %u sent trace-block before trace-hello", p->node);
    struct wire_block b;
    if (wire_get_block(r, &b) < 0)
        return reject(col, reason, "node %u: malformed trace-block (seq range, count or length)",
                      p->node);
    char why[200];
    if (collect_file_check_block(b.data, b.len, b.count, p->sync, why, sizeof why) < 0)
        return reject(col, reason, "node %u: trace-block of seq %" PRId64 "..%" PRId64 ": %s",
                      p->node, b.first_seq, b.last_seq, why);
    if (col->write_failing) {
        struct collect_file_stats st;
        collect_file_stats(col->file, &st);
        if (st.pending_bytes > PENDING_MAX) {
            conn_close(p->conn, "the collector cannot write its trace; resend after reconnecting");
            return 0;
        }
    }
    /* Acknowledged even when skipped: a resend after our restart must be let go. */
    p->ack_due = true;
    col->ack_due = true;
    int32_t node = (int32_t)p->node;
    int64_t next = collect_file_next_seq(col->file, node);
    if (b.last_seq < next) {
        col->resent_blocks++;
        log_debug("node %u: seq %" PRId64 "..%" PRId64 " already in the trace", p->node,
                  b.first_seq, b.last_seq);
        return 0;
    }
    if (b.first_seq > next) {
        col->gaps++;
        log_warn("node %u (%s): events %" PRId64 "..%" PRId64 " are missing from the trace; "
                 "writing seq %" PRId64 "..%" PRId64 " after the gap", p->node,
                 conn_peer_name(p->conn), next, b.first_seq - 1, b.first_seq, b.last_seq);
    } else if (b.first_seq < next) {
        log_warn("node %u (%s): block of seq %" PRId64 "..%" PRId64 " overlaps events already "
                 "in the trace (below %" PRId64 "); writing it whole", p->node,
                 conn_peer_name(p->conn), b.first_seq, b.last_seq, next);
    }
    int rc = collect_file_append_block(col->file, node, b.first_seq, b.last_seq, b.count,
                                       b.data, b.len);
    if (rc < 0)
        return reject(col, reason, "node %u: cannot buffer its block: %s", p->node,
                      strerror(-rc));
    jobfold_block(col->fold, node, next, b.data, b.len);
    return 0;
}

static int on_live(struct collector *col, struct peer *p, struct rbuf *r, const char **reason)
{
    if (!p->hello)
        return reject(col, reason, "node %u sent trace-live before trace-hello", p->node);
    struct wire_live l;
    if (wire_get_live(r, &l) < 0)
        return reject(col, reason, "node %u: malformed trace-live", p->node);
    struct node_slot *s = &col->nodes[p->node];
    s->seen = true;
    s->time_ns = l.time_ns;
    s->sample = l.sample;
    for (uint32_t i = 0; i < l.nnotes; i++) {
        /* A node reports its own events; the field is not trusted to say otherwise. */
        l.notes[i].node = (int32_t)p->node;
        push_note(col, &l.notes[i]);
    }
    free(l.notes);
    return 0;
}

static int on_node_message(struct collector *col, struct peer *p, uint16_t type, struct rbuf *r,
                           const char **reason)
{
    switch (type) {
    case MSG_TRACE_HELLO: return on_hello(col, p, r, reason);
    case MSG_TRACE_BLOCK: return on_block(col, p, r, reason);
    case MSG_TRACE_LIVE: return on_live(col, p, r, reason);
    default:
        return reject(col, reason, "node %u: %s (0x%04x) is not a message a node sends to the "
                      "collector", p->node, proto_type_name(type), type);
    }
}

/* ---- client messages -------------------------------------------------------------------- */

static int on_job(struct collector *col, struct peer *p, struct rbuf *r, const char **reason)
{
    struct wire_job j;
    if (wire_get_job(r, &j) < 0)
        return reject(col, reason, "client (pid %u): malformed trace-job: %s",
                      conn_peer_id(p->conn), j.bad);
    int rc = collect_file_append_job(col->file, j.job, j.tasks, j.name, j.digest, j.mode);
    if (rc < 0)
        log_warn("cannot record job %u from %s: %s", j.job, conn_peer_name(p->conn),
                 strerror(-rc));
    struct wire_note n = {.node = COLLECT_FILE_OWN_NODE, .kind = TRACE_JOB_SUBMIT,
                          .time_ns = run_now(col), .task = (uint64_t)j.job << 32 | UINT32_MAX,
                          .peer = -1, .count = j.tasks};
    snprintf(n.text, sizeof n.text, "%s", j.name);
    push_note(col, &n);
    jobfold_submit(col->fold, j.job, j.tasks, j.name, n.time_ns);
    log_info("job %u (%u tasks, workload '%s', mode %s) from %s", j.job, j.tasks, j.name,
             j.mode[0] ? j.mode : "not said", conn_peer_name(p->conn));
    wire_job_fini(&j);
    p->records++;
    p->ack_due = col->ack_due = true;
    return 0;
}

static int on_names(struct collector *col, struct peer *p, struct rbuf *r, const char **reason)
{
    struct wire_names n;
    if (wire_get_names(r, &n) < 0)
        return reject(col, reason, "malformed trace-names");
    int rc = collect_file_append_names(col->file, n.job, n.first, n.count, n.ids);
    if (rc < 0)
        log_warn("cannot record the names of tasks %u..%u of job %u from %s: %s", n.first,
                 n.first + n.count - 1, n.job, conn_peer_name(p->conn), strerror(-rc));
    free(n.ids);
    p->records++;
    p->ack_due = col->ack_due = true;
    return 0;
}

static int on_subscribe(struct collector *col, struct peer *p, struct rbuf *r,
                        const char **reason)
{
    uint32_t period;
    if (wire_get_subscribe(r, &period) < 0)
        return reject(col, reason, "malformed trace-subscribe");
    if (period < col->state_floor_ms)
        period = col->state_floor_ms;
    if (!p->state_timer) {
        p->state_timer = xmalloc(sizeof *p->state_timer);
        uv_timer_init(&col->loop, p->state_timer);
        p->state_timer->data = p;
        /* A new console gets the recent notes, up to a ring's worth. */
        p->note_cursor = col->notes_total > NOTE_RING ? col->notes_total - NOTE_RING : 0;
    }
    size_t at;
    struct wbuf *b = conn_msg_begin(p->conn, MSG_TRACE_INFO, &at);
    wbuf_put_str(b, collect_file_header_json(col->file));
    conn_msg_end(p->conn, at);
    uv_timer_start(p->state_timer, on_state_timer, 0, period);
    log_info("console %s subscribed: state every %u ms", conn_peer_name(p->conn), period);
    return 0;
}

static void request_stop(struct collector *col);

static int on_client_message(struct collector *col, struct peer *p, uint16_t type,
                             struct rbuf *r, const char **reason)
{
    switch (type) {
    case MSG_TRACE_JOB: return on_job(col, p, r, reason);
    case MSG_TRACE_NAMES: return on_names(col, p, r, reason);
    case MSG_TRACE_SUBSCRIBE: return on_subscribe(col, p, r, reason);
    case MSG_SHUTDOWN:
        log_info("shutdown requested by %s", conn_peer_name(p->conn));
        request_stop(col);
        return 0;
    default:
        return reject(col, reason, "%s (0x%04x) is not a message a client sends to the collector",
                      proto_type_name(type), type);
    }
}

/* ---- job records kept by clients -------------------------------------------------------- */

/* Renames a kept file that cannot be written to FILE.bad, so that it is not read again
 * every scan. */
static void set_aside(const char *path, const char *why)
{
    char *aside = xasprintf("%s.bad", path);
    log_warn("%s; set aside as '%s'", why, aside);
    if (rename(path, aside) < 0)
        log_warn("cannot rename '%s': %s", path, strerror(errno));
    free(aside);
}

/* Writes the job records a client kept while we were away (trace/collector/jobspool.h):
 * what the trace lacks of them, since a job recorded before a crash is in the trace
 * already (its file was kept because the ACK never came).  A file is removed once what
 * it added is written; one that is not a kept job, or whose records cannot be encoded,
 * is set aside with a WARN. */
static void take_kept_jobs(struct collector *col)
{
    char **paths = NULL;
    size_t n = 0;
    char *why = NULL;
    if (!col->jobs_dir || col->stopping || col->write_failing)
        return;
    if (jobspool_list(col->jobs_dir, &paths, &n, &why) < 0) {
        log_warn("%s", why);
        free(why);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct jobspool_job j;
        if (jobspool_read(paths[i], &j, &why) < 0) {
            set_aside(paths[i], why);
            free(why);
            why = NULL;
            continue;
        }
        bool submitted;
        uint32_t names_end;
        collect_file_job_recorded(col->file, j.job, &submitted, &names_end);
        int rc = 0;
        if (!submitted)
            rc = collect_file_append_job(col->file, j.job, j.tasks, j.name, j.digest, j.mode);
        jobfold_submit(col->fold, j.job, j.tasks, j.name, run_now(col));
        if (rc == 0 && names_end < j.tasks)
            rc = collect_file_append_names(col->file, j.job, names_end, j.tasks - names_end,
                                           (const char *const *)j.ids + names_end);
        if (rc < 0) {
            char *what = xasprintf("cannot record job %u kept in '%s': %s", j.job, paths[i],
                                   strerror(-rc));
            set_aside(paths[i], what);
            free(what);
        } else if (!submitted || names_end < j.tasks) {
            log_info("job %u (%u tasks): records kept in '%s' while the collector was away%s",
                     j.job, j.tasks, paths[i], submitted ? " (partly in the trace already)" : "");
        }
        jobspool_job_fini(&j);
        /* Removed only once written: a crash before that finds the file again. */
        if (rc == 0 && write_and_ack(col) == 0 && unlink(paths[i]) < 0)
            log_warn("cannot remove '%s': %s", paths[i], strerror(errno));
    }
    jobspool_list_free(paths, n);
}

static void on_kept_jobs(uv_timer_t *t)
{
    take_kept_jobs(t->data);
}

/* ---- connections ------------------------------------------------------------------------ */

static int on_message(struct conn *c, uint16_t type, struct rbuf *r, const char **reason)
{
    struct collector *col = conn_hub_data(conn_hub_of(c));
    struct peer *p = conn_data(c);
    if (col->stopping || !p)
        return 0;
    if (p->is_node)
        return on_node_message(col, p, type, r, reason);
    return on_client_message(col, p, type, r, reason);
}

static void on_ready(struct conn *c)
{
    struct collector *col = conn_hub_data(conn_hub_of(c));
    struct peer *p = xcalloc(1, sizeof *p);
    p->col = col;
    p->conn = c;
    p->next = col->peers;
    if (col->peers)
        col->peers->prev = p;
    col->peers = p;
    conn_set_data(c, p);
    if (conn_peer_role(c) != CONN_ROLE_NODE)
        return;
    p->is_node = true;
    p->node = conn_peer_id(c);
    if (p->node >= col->nnodes) {
        char why[128];
        snprintf(why, sizeof why, "claims node id %u but the cluster has %u nodes", p->node,
                 col->nnodes);
        p->is_node = false; /* no slot to touch; on_close frees it */
        conn_drop(c, why);
    }
}

static void on_close(struct conn *c, const char *reason)
{
    struct collector *col = conn_hub_data(conn_hub_of(c));
    struct peer *p = conn_data(c);
    if (!p)
        return;
    conn_set_data(c, NULL);
    if (p->is_node && col->nodes[p->node].peer == p) {
        col->nodes[p->node].peer = NULL;
        if (!col->stopping)
            log_info("node %u trace stream from %s closed: %s", p->node, conn_peer_name(c),
                     reason ? reason : "");
    }
    if (p->state_timer) {
        uv_timer_stop(p->state_timer);
        p->state_timer->data = NULL;
        uv_close((uv_handle_t *)p->state_timer, free_handle);
    }
    if (p->prev)
        p->prev->next = p->next;
    else
        col->peers = p->next;
    if (p->next)
        p->next->prev = p->prev;
    free(p);
}

/* ---- life cycle ------------------------------------------------------------------------- */

static uint32_t nodes_seen(const struct collector *col)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < col->nnodes; i++)
        n += col->nodes[i].ever;
    return n;
}

static void fail_with(struct collector *col, int status, char *cause)
{
    if (col->status == COLLECTOR_OK) {
        col->status = status;
        free(col->cause);
        col->cause = cause;
    } else {
        free(cause);
    }
}

/* Last write, last ACKs, then every handle closes and uv_run returns. */
static void collector_stop(struct collector *col)
{
    if (col->stopping)
        return;
    /* A failed write is retried once more by collect_file_close, which reports it. */
    if (col->file)
        write_and_ack(col);
    col->stopping = true;
    jobfold_stop(col->fold);
    for (struct peer *p = col->peers; p; p = p->next)
        conn_flush(p->conn);
    if (col->file) {
        struct collect_file_stats st;
        collect_file_stats(col->file, &st);
        char *why = NULL;
        if (collect_file_close(col->file, &why) < 0)
            fail_with(col, COLLECTOR_WRITE_FAILED, why);
        else
            free(why);
        col->file = NULL;
        log_info("collector stopped: %" PRIu64 " events in %" PRIu64 " blocks (%" PRIu64 " bytes) "
                 "written to '%s'; %u of %u nodes seen; %" PRIu64 " resent blocks skipped, "
                 "%" PRIu64 " gaps", st.events, st.blocks, st.bytes, col->cfg->trace_path,
                 nodes_seen(col), col->nnodes, col->resent_blocks, col->gaps);
    }
    conn_hub_destroy(col->hub);
    col->hub = NULL;
    uv_timer_stop(&col->retry);
    uv_close((uv_handle_t *)&col->retry, NULL);
    uv_timer_stop(&col->kept_jobs);
    uv_close((uv_handle_t *)&col->kept_jobs, NULL);
    uv_timer_stop(&col->drain);
    uv_close((uv_handle_t *)&col->drain, NULL);
    uv_close((uv_handle_t *)&col->check, NULL);
    uv_close((uv_handle_t *)&col->sigterm, NULL);
    uv_close((uv_handle_t *)&col->sigint, NULL);
}

static bool nodes_connected(const struct collector *col)
{
    for (const struct peer *p = col->peers; p; p = p->next)
        if (p->is_node && p->hello)
            return true;
    return false;
}

/* The end of every loop pass that handled I/O: one write for the pass's blocks. */
static void on_check(uv_check_t *h)
{
    struct collector *col = h->data;
    if (col->stopping)
        return;
    if (!col->write_failing)
        write_and_ack(col);
    if (col->stop_requested &&
        (!col->stop_by_ns || !nodes_connected(col) || clock_mono_ns() >= col->stop_by_ns))
        collector_stop(col);
}

static void on_drain(uv_timer_t *t)
{
    (void)t; /* the pass it ends runs on_check */
}

/*
 * A signal stops the collector once the nodes still sending have closed their
 * connections, which they do after their last events (bounded: STOP_DRAIN_MS).  The
 * local `stop` signals it after the daemons' pids are gone, so it stops at once; a
 * cluster on other hosts has no pids to wait for, and its daemons' last events would
 * otherwise be cut off and left in their spool files.
 */
#define STOP_DRAIN_MS 4000 /* under the 5 s `stop` gives the collector before SIGKILL */

/* A second request stops it at once. */
static void request_stop(struct collector *col)
{
    if (col->stop_requested) {
        col->stop_by_ns = clock_mono_ns();
        return;
    }
    if (nodes_connected(col))
        log_info("stopping once the nodes still connected have sent their last events");
    col->stop_requested = true;
    col->stop_by_ns = clock_mono_ns() + (int64_t)STOP_DRAIN_MS * 1000000;
    uv_timer_start(&col->drain, on_drain, 50, 50);
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct collector *col = h->data;
    log_info("signal %d: stopping", signum);
    request_stop(col);
}

static char *build_header(const struct collector_config *cfg, int64_t start_ns)
{
    const struct cluster *cl = cfg->cluster;
    json_t *nodes = json_array();
    for (uint32_t i = 0; i < cl->count; i++) {
        const struct cluster_node *n = &cl->nodes[i];
        json_array_append_new(nodes, json_pack("{s:i, s:s, s:i, s:i, s:f}", "id", (int)n->id,
                                               "host", n->host, "port", n->port, "slots",
                                               (int)n->slots, "speed", n->speed));
    }
    json_t *args = json_array();
    for (uint32_t i = 0; i < cl->n_node_args; i++)
        json_array_append_new(args, json_string(cl->node_args[i]));
    json_t *workload = cfg->workload_name || cfg->workload_digest
                           ? json_pack("{s:s?, s:s?}", "name", cfg->workload_name, "digest",
                                       cfg->workload_digest)
                           : json_null();
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *root = json_pack("{s:i, s:s?, s:I, s:s, s:o, s:{s:o}, s:o}", "format", 1, "run_id",
                             cl->run_id, "start_ns", (json_int_t)start_ns, "created", created,
                             "nodes", nodes, "config", "node_args", args, "workload", workload);
    char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    return s;
}

/* A resumed file must be this run's collector trace; its start_ns is the origin of its
 * times. */
static int adopt_resumed_header(struct collector *col, char **cause)
{
    struct collect_file_stats st;
    collect_file_stats(col->file, &st);
    if (!st.resumed)
        return 0;
    json_t *h = json_loads(collect_file_header_json(col->file), 0, NULL);
    const char *file_run = json_string_value(json_object_get(h, "run_id"));
    json_t *start = json_object_get(h, "start_ns");
    json_t *spool = json_object_get(h, "spool");
    int rc = 0;
    if (spool) {
        /* A node's spool holds that node's blocks for `trace merge`; ours go elsewhere. */
        *cause = xasprintf("trace '%s' is node %lld's spool file, not a collector's trace; give "
                           "another --trace", col->cfg->trace_path,
                           (long long)json_integer_value(json_object_get(spool, "node")));
        rc = -EINVAL;
    } else if (file_run && col->run_id && strcmp(file_run, col->run_id) != 0) {
        *cause = xasprintf("trace '%s' holds run '%s', not this cluster's run '%s'; give "
                           "another --trace", col->cfg->trace_path, file_run, col->run_id);
        rc = -EINVAL;
    } else if (json_is_integer(start) && json_integer_value(start) != col->start_ns) {
        if (col->cfg->cluster->start_ns)
            log_warn("trace '%s' starts at %" PRId64 " ns but the cluster file says %" PRId64
                     "; keeping the trace's", col->cfg->trace_path,
                     (int64_t)json_integer_value(start), col->start_ns);
        col->start_ns = (int64_t)json_integer_value(start);
        collect_file_set_start_ns(col->file, col->start_ns);
    }
    if (rc == 0)
        log_info("resuming trace '%s': %" PRIu64 " events already there%s", col->cfg->trace_path,
                 st.file_events, st.cut_bytes ? " (a cut tail was removed)" : "");
    if (rc == 0 && st.file_events)
        jobfold_mark_partial(col->fold); /* their jobs' tallies start from what comes now */
    json_decref(h);
    return rc;
}

static int open_trace(struct collector *col, char **cause)
{
    char *header = build_header(col->cfg, col->start_ns);
    if (!header) {
        *cause = xasprintf("cannot build the run header for trace '%s'", col->cfg->trace_path);
        return COLLECTOR_BAD_CONFIG;
    }
    int rc = collect_file_open(&col->file, col->cfg->trace_path, header, col->nnodes,
                               col->start_ns, cause);
    free(header);
    if (rc == 0 && adopt_resumed_header(col, cause) < 0) {
        char *ignored = NULL;
        collect_file_close(col->file, &ignored);
        free(ignored);
        col->file = NULL;
        rc = -EINVAL;
    }
    return rc < 0 ? COLLECTOR_BAD_TRACE : 0;
}

static void collector_free(struct collector *col)
{
    free(col->jobs_dir);
    free(col->nodes);
    free(col->ring);
    free(col->scratch_notes);
    free(col->scratch_nodes);
    jobfold_destroy(col->fold);
    free(col->cause);
    free(col);
}

int collector_run(const struct collector_config *cfg, char **cause)
{
    if (!cfg || !cfg->cluster || cfg->cluster->count == 0 || !cfg->trace_path) {
        *cause = xasprintf("the collector needs a cluster with nodes and a trace path");
        return COLLECTOR_BAD_CONFIG;
    }
    struct collector *col = xcalloc(1, sizeof *col);
    col->cfg = cfg;
    col->run_id = cfg->cluster->run_id && cfg->cluster->run_id[0] ? cfg->cluster->run_id : NULL;
    col->start_ns = cfg->cluster->start_ns ? cfg->cluster->start_ns : clock_wall_ns();
    col->state_floor_ms = cfg->state_floor_ms ? cfg->state_floor_ms : COLLECTOR_STATE_FLOOR_MS;
    col->nnodes = cfg->cluster->count;
    col->nodes = xcalloc(col->nnodes, sizeof *col->nodes);
    col->ring = xcalloc(NOTE_RING, sizeof *col->ring);
    col->scratch_notes = xcalloc(NOTE_RING, sizeof *col->scratch_notes);
    col->scratch_nodes = xcalloc(col->nnodes, sizeof *col->scratch_nodes);

    uv_loop_init(&col->loop);
    col->fold = jobfold_create(&col->loop);
    static const struct conn_callbacks callbacks = {
        .on_ready = on_ready, .on_message = on_message, .on_close = on_close};
    /* The collector never connects out, so the role it would announce is moot. */
    col->hub = conn_hub_create(&col->loop, &cfg->key, CONN_ROLE_CLIENT, 0, &callbacks, col);
    uv_check_init(&col->loop, &col->check);
    col->check.data = col;
    uv_check_start(&col->check, on_check);
    uv_timer_init(&col->loop, &col->retry);
    col->retry.data = col;
    uv_timer_init(&col->loop, &col->kept_jobs);
    col->kept_jobs.data = col;
    uv_timer_init(&col->loop, &col->drain);
    col->drain.data = col;
    if (cfg->cluster->workdir && cfg->cluster->workdir[0])
        col->jobs_dir = jobspool_dir(cfg->cluster->workdir);
    uv_signal_init(&col->loop, &col->sigterm);
    col->sigterm.data = col;
    uv_signal_init(&col->loop, &col->sigint);
    col->sigint.data = col;
    /* Listen before touching the trace: a collector that cannot serve must not leave a
     * new file behind.  Nothing is accepted before uv_run. */
    char *why = NULL;
    int rc = cfg->listen_fd >= 0 ? conn_hub_listen_fd(col->hub, cfg->listen_fd, &why)
                                 : conn_hub_listen(col->hub, cfg->host, cfg->port, &why);
    if (rc < 0) {
        fail_with(col, COLLECTOR_NO_LISTEN, why ? why : xasprintf("cannot listen"));
    } else {
        rc = open_trace(col, &why);
        if (rc < 0)
            fail_with(col, rc, why);
    }
    if (rc == 0 && cfg->on_serving && (rc = cfg->on_serving(cfg->serving_ctx, &why)) < 0)
        fail_with(col, COLLECTOR_BAD_CONFIG, why ? why : xasprintf("refused to serve"));
    if (rc < 0) {
        collector_stop(col);
    } else {
        uv_signal_start(&col->sigterm, on_signal, SIGTERM);
        uv_signal_start(&col->sigint, on_signal, SIGINT);
        take_kept_jobs(col);
        if (col->jobs_dir)
            uv_timer_start(&col->kept_jobs, on_kept_jobs, KEPT_JOBS_MS, KEPT_JOBS_MS);
        log_info("collector for run %s: %u nodes, trace '%s', port %d",
                 col->run_id ? col->run_id : "(none)", col->nnodes, cfg->trace_path,
                 conn_hub_port(col->hub));
    }
    uv_run(&col->loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&col->loop) != 0)
        log_warn("collector loop closed with handles still open");
    int status = col->status;
    if (status < 0) {
        *cause = col->cause ? col->cause : xasprintf("the collector failed");
        col->cause = NULL;
    }
    collector_free(col);
    return status;
}
