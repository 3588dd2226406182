/*
 * proto — the jackdaw wire protocol: message types and the payload codecs shared by
 * node daemons and clients.  Framing and the handshake are in frame.h and conn.h.
 *
 * Don't forget to bump FRAME_VERSION (frame.h) when a payload changes shape.  The one
 * exception so far is an optional last field that every older decoder leaves unread and
 * whose absence means "not said" (JOB's mode, trace/format/wire.h).
 * Types are grouped by range, one range per high byte (enum proto_range): handshake
 * (conn.c), metadata store, scheduler to scheduler, client to node, traces (payloads in
 * trace/format/wire.h: nodes, clients and consoles to the collector).  Receivers route a
 * whole range to its owner with proto_range_of, never with literal bounds.
 *
 * Owns nothing.  Decoders read from a bounds-checked rbuf and return 0 or -EBADMSG;
 * strings are limited to PROTO_MAX_STRING bytes.
 */
#ifndef JACKDAW_PROTO_H
#define JACKDAW_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/wbuf.h"
#include "core/model/task.h"

#define PROTO_MAX_STRING (1u << 20)
#define PROTO_MAX_BATCH (1u << 20)

/* The high byte of a message type. */
enum proto_range {
    PROTO_RANGE_HANDSHAKE = 0x00, /* CONN_MSG_* (conn.h); never reaches on_message */
    PROTO_RANGE_KVS = 0x01,       /* MSG_KVS_* */
    PROTO_RANGE_SCHED = 0x02,     /* scheduler to scheduler */
    PROTO_RANGE_CLIENT = 0x03,    /* client to node and back */
    PROTO_RANGE_TRACE = 0x04,     /* MSG_TRACE_* */
};

/* The first type of a range. */
#define PROTO_RANGE_FIRST(range) ((uint16_t)((unsigned)(range) << 8))
/* The first type conn.c hands to its caller: the ones below are the handshake's. */
#define PROTO_FIRST_APP_TYPE PROTO_RANGE_FIRST(PROTO_RANGE_KVS)

static inline enum proto_range proto_range_of(uint16_t type)
{
    return (enum proto_range)(type >> 8);
}

enum proto_type {
    /* Metadata store (payloads in core/kvs/kvs.c). */
    MSG_KVS_INSERT = 0x0101,
    MSG_KVS_LOOKUP = 0x0102,
    MSG_KVS_LOOKUP_REPLY = 0x0103,
    MSG_KVS_REMOVE = 0x0104,
    MSG_KVS_APPEND = 0x0105,
    MSG_KVS_CAS = 0x0106,
    MSG_KVS_CAS_REPLY = 0x0107,
    MSG_KVS_NOTIFY = 0x0108,
    MSG_KVS_FORGET = 0x0109,      /* u32 job: the job is over, drop its records (client to
                                     every node) */
    MSG_KVS_REPLICATE = 0x010a,   /* primary to backup (R > 1) */
    MSG_KVS_REPLICA_ACK = 0x010b, /* backup to primary */

    /* Scheduler to scheduler. */
    MSG_LOAD_QUERY = 0x0201,    /* u32 req */
    MSG_LOAD_REPLY = 0x0202,    /* u32 req, u32 sready, u32 lready, u32 busy, u32 slots */
    MSG_STEAL_REQUEST = 0x0203, /* u32 req, u32 max tasks */
    MSG_STEAL_GRANT = 0x0204,   /* u32 req, u32 count, count x task_spec */
    MSG_IDLE = 0x0205,          /* (empty) the sender's stealing is parked */
    MSG_WAKE = 0x0206,          /* (empty) the sender has stealable work */
    MSG_PUSH = 0x0207,          /* u32 count, count x task_spec: run these here (LReadyQ) */
    MSG_FETCH_REQ = 0x0208,     /* u32 req, u64 object, u64 offset, u32 len */
    MSG_FETCH_REP = 0x0209,     /* u32 req, i32 status, u64 total, u64 offset, u32 len,
                                   [4-byte CRC-32 of the whole object, big-endian
                                   (OBJSTORE_HASH_BYTES, core/runtime/objstore.h), when
                                   offset + len == total], len bytes */
    MSG_INFO = 0x020a,          /* u32 count, count x (u32 node, u32 version, f64 t_run,
                                   u32 n, u32 avail, u32 slots): A2WS information
                                   vector entries (core/runtime/ring.c) */
    MSG_TOKEN = 0x020b,         /* u32 hops, u32 quiet, u32 nodes, nodes x (u32 count,
                                   u8 flags): the CTWS token (core/runtime/token.c) */
    MSG_LW_FORWARD = 0x020c,    /* u32 count, count x task_spec: ready tasks for the LW
                                   leader's SReadyQ (core/runtime/leader.c) */
    MSG_LW_REQUEST = 0x020d,    /* u32 req, u32 want: a starving LW worker asks the leader */
    MSG_LW_GRANT = 0x020e,      /* u32 req, u32 count, count x task_spec: the answer */
    MSG_HEARTBEAT = 0x020f,     /* u8 flags (PROTO_BEAT_*): the sender is alive; sent
                                   only to a ring neighbour it had nothing else for
                                   (heartbeat.c) */
    MSG_SUSPECT = 0x0210,       /* u32 node, u8 flags (PROTO_SUSPECT_*): the sender
                                   suspects it; the receiver, its other neighbour,
                                   declares it dead if silent (or refused) too */
    MSG_MEMBER_DEAD = 0x0211,   /* u32 node, u32 epoch: the node is declared dead */
    MSG_YOU_ARE_DEAD = 0x0212,  /* u32 epoch: to a node declared dead that spoke again */
    MSG_RESUBMIT = 0x0213,      /* u32 attempt, u8 ready, i64 t_ready, u32 nparents,
                                   nparents x (u64 object, u64 bytes, u32 node), then the
                                   task's spec: a dead holder's task, to its new holder */
    MSG_RECOMPUTE = 0x0214,     /* u64 task, u32 runner: the task's output was lost with its
                                   runner, which died, and is needed: to the record's primary,
                                   which runs the task again (node_recover.c) */
    MSG_HOLD_QUERY = 0x0215,    /* u64 task: the record's primary asks the task's holder,
                                   whose move came from a node that died, if it has it */
    MSG_HOLD_NOT = 0x0216,      /* u64 task: the answer when it has not (node_member.c) */

    /* Client to node and back. */
    MSG_JOB_BEGIN = 0x0301,     /* u32 job, u32 tasks, u32 tasks this node will get: TASK_END
                                 * reports go to the sender */
    MSG_SUBMIT = 0x0302,        /* u32 count, count x task_spec */
    MSG_SYNC = 0x0303,          /* u64 token: answered after everything sent before it */
    MSG_SYNC_REPLY = 0x0304,    /* u64 token */
    MSG_TASK_END = 0x0305,      /* proto_task_end */
    MSG_STATS_QUERY = 0x0306,   /* u32 req */
    MSG_STATS_REPLY = 0x0307,   /* u32 req, proto_stats */
    MSG_SHUTDOWN = 0x0308,      /* (empty) */
    MSG_OBJECT_CREATE = 0x0309, /* u64 object, u64 bytes: a workload's initial data object */
    MSG_JOB_ATTACH = 0x030a,    /* u32 job: TASK_END reports of the job go to the sender
                                   from now on; answered by JOB_ENDED */
    MSG_JOB_ENDED = 0x030b,     /* proto_job_ended: the job's tasks whose record, on this
                                   node as its primary, says they ended; in parts, the
                                   last flagged */
    MSG_TASK_RELISTED = 0x030c, /* proto_task_end: an end the record's primary reports again
                                   because the node that was to report it died (an end
                                   the client may have heard already: counted once) */
    MSG_OBJECT_PUT = 0x030d,    /* u64 object, u64 total, u64 offset, u32 len, len bytes,
                                   and after the last chunk the content's CRC-32 (4 bytes):
                                   a workload's file sent in, chunks in order */
    MSG_OBJECT_PUT_DONE = 0x030e, /* u64 object, i32 status (0 or -errno), string reason:
                                   the answer to an object's last chunk, or to the first
                                   chunk that failed (later ones are then ignored) */

    /* Traces (trace/format/wire.h). */
    MSG_TRACE_HELLO = 0x0401,
    MSG_TRACE_RESUME = 0x0402,
    MSG_TRACE_BLOCK = 0x0403,
    MSG_TRACE_ACK = 0x0404,
    MSG_TRACE_LIVE = 0x0405,
    MSG_TRACE_JOB = 0x0406,
    MSG_TRACE_NAMES = 0x0407,
    MSG_TRACE_SUBSCRIBE = 0x0408,
    MSG_TRACE_INFO = 0x0409,
    MSG_TRACE_STATE = 0x040a,
};

/* The most bytes one OBJECT_PUT carries: a client reads and sends a file this much at a
 * time, and a daemon writes each chunk as it comes. */
#define PROTO_PUT_CHUNK (256u << 10)
/* The most bytes one FETCH_REQ may ask for (a daemon refuses more), and the checksum a
 * FETCH_REP's last chunk carries (CRC-32, big-endian). */
#define DATA_FETCH_CHUNK_WIRE (256u << 10)
#define OBJSTORE_HASH_BYTES_WIRE 4u

/* MSG_SYNC's flags: answer once the messages before it are handled, without waiting
 * for the backups to have what they wrote (a submission's waves; the barrier that ends
 * it waits).  Other bits are malformed. */
#define PROTO_SYNC_HANDLED 0x01u
/* MSG_HEARTBEAT's flags: the sender is stopping on purpose, so that its connections
 * closing and then refused are no crash (heartbeat.c).  Other bits are malformed. */
#define PROTO_BEAT_LEAVING 0x01u
/* MSG_SUSPECT's flags: the sender's connect to the suspect was refused, after it had
 * been up; the receiver may confirm on refusals of its own before the timeout. */
#define PROTO_SUSPECT_REFUSED 0x01u

const char *proto_type_name(uint16_t type);

void proto_put_task(struct wbuf *b, const struct task_spec *t);
/* Fills *t (t->cmd and t->inputs owned); 0 or -EBADMSG (nothing to free then). */
int proto_get_task(struct rbuf *r, struct task_spec *t);
/* Frees what proto_get_task allocated. */
void proto_task_fini(struct task_spec *t);

/*
 * MSG_RESUBMIT: a dead holder's task, handed to its new holder by its record's primary
 * (core/runtime/node_member.c): the attempt it runs as, whether it is ready and since
 * when, where its parents' outputs are, and its spec.
 */
struct proto_resubmit {
    uint32_t attempt;
    uint8_t ready;          /* 0 or 1 */
    int64_t t_ready;
    uint32_t nparents;
    struct task_input *parents; /* owned: object, bytes, node of each parent's output */
    struct task_spec spec;  /* owned (proto_get_task) */
};
/* `spec`/`spec_len`: the task already encoded (proto_put_task), as a record keeps it;
 * NULL: m->spec is encoded. */
void proto_put_resubmit(struct wbuf *b, const struct proto_resubmit *m, const void *spec,
                        size_t spec_len);
/* 0 or -EBADMSG (nothing to free then); proto_resubmit_fini frees what it took. */
int proto_get_resubmit(struct rbuf *r, struct proto_resubmit *m);
void proto_resubmit_fini(struct proto_resubmit *m);

struct proto_task_end {
    uint64_t key;
    uint8_t status;         /* enum task_status: DONE, FAILED or CANCELLED */
    uint32_t node;          /* where it ran (or was held, when cancelled) */
    int32_t exit_code;
    int32_t term_signal;
    int64_t t_ready, t_start, t_end;
    char *detail;           /* owned; failure output or reason, may be NULL */
    bool timed_out;         /* FAILED because it passed its time limit */
    uint32_t failures;      /* failed runs before this end (retries used) */
    struct task_usage usage; /* a command's last run; measured false otherwise */
};
void proto_put_task_end(struct wbuf *b, const struct proto_task_end *e);
int proto_get_task_end(struct rbuf *r, struct proto_task_end *e);

struct proto_job_count {
    uint32_t job;
    uint32_t tasks;         /* the job's size, as its JOB_BEGIN said */
    uint32_t done, failed, cancelled; /* ended on this node */
};

/* A peer this node holds declared dead: who, the node it learned it from (itself when
 * its own failure detector declared it) and when it learned it (wall ns). */
struct proto_dead {
    uint32_t node, by;
    int64_t at_ns;
};

struct proto_stats {
    uint32_t node, slots, busy;
    double speed;
    uint32_t waitq, lready, sready;
    uint64_t completeq;     /* tasks that ended here (CompleteQ length) */
    uint64_t tasks_run, tasks_failed;
    uint64_t steals_attempted, steals_succeeded, tasks_stolen, tasks_given;
    uint64_t kvs_records;
    uint64_t rss_bytes;
    /* data plane */
    uint64_t tasks_pushed, tasks_with_inputs, locality_hits;
    uint64_t fetches, bytes_in, bytes_out, cache_hits, cache_misses;
    uint64_t policy_switches;
    double est_task_length_s;
    uint32_t njobs;
    struct proto_job_count *jobs; /* owned */
    /* failures (issue 15): this node's counters and its view of the membership */
    uint64_t tasks_resubmitted, objects_recomputed;
    uint32_t epoch;         /* deaths this node knows of */
    uint32_t ndead;
    struct proto_dead *dead; /* owned, ndead entries, NULL when none */
};
void proto_put_stats(struct wbuf *b, const struct proto_stats *s);
/* Fills *s (jobs and dead owned: proto_stats_fini); 0 or -EBADMSG (nothing to free). */
int proto_get_stats(struct rbuf *r, struct proto_stats *s);
void proto_stats_fini(struct proto_stats *s);

/*
 * JOB_ENDED: what a node's metadata shard knows of a job's ended tasks, for a client
 * attaching to the job (jackdaw attach).  A record keeps status, runner and times but
 * neither exit code nor output, so those ends carry exit_code -1 and no detail.
 */
struct proto_job_ended {
    /* The job as this node counts it (tasks 0: the node never heard of it); the ends
     * listed are its shard's, wherever the tasks ran. */
    struct proto_job_count counts;
    uint8_t last;           /* 1 on the node's last JOB_ENDED for this attach */
    uint32_t count;
    struct proto_task_end *ends; /* owned, count entries (details NULL) */
};
/* Bytes one end takes in JOB_ENDED: a sender cuts its parts by it. */
#define PROTO_JOB_ENDED_BYTES 41u
void proto_put_job_ended(struct wbuf *b, const struct proto_job_ended *m);
/* 0 or -EBADMSG (nothing to free then); m->ends owned. */
int proto_get_job_ended(struct rbuf *r, struct proto_job_ended *m);

#endif
