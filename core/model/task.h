/*
 * task — what a task is, independent of where it runs: its kind, what it does, its
 * status vocabulary, and the compact form (task_spec) in which a task travels between
 * client and daemons and sits in a node's queues.
 *
 * Owns no state.  Used by the workload parser, the protocol, the metadata store, the
 * scheduler and the client.
 */
#ifndef JACKDAW_TASK_H
#define JACKDAW_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base/hash.h"

enum task_kind { TASK_NOOP = 0, TASK_SLEEP = 1, TASK_COMMAND = 2, TASK_KIND_COUNT };

/* The longest time limit a task may have (30 days): longer is surely a unit mistake, and
 * the limit stays far inside the executor's nanosecond arithmetic. */
#define TASK_TIMEOUT_MAX_S (30.0 * 24 * 3600)

/* A time limit a task may carry: in (0, TASK_TIMEOUT_MAX_S] (0 means none, and NaN is
 * refused by the comparison). */
static inline bool task_timeout_valid(double timeout_s)
{
    return timeout_s > 0 && timeout_s <= TASK_TIMEOUT_MAX_S;
}

/* The most runs again a task may ask for after failed ones (`retries`): a few absorb a
 * flaky node or file system; more would hide a broken command behind hours of reruns. */
#define TASK_RETRIES_MAX 100u

/* The most cores one task may ask for: more than any node of today has, and little
 * enough that a node's slot count plus one task's cores never overflows. */
#define TASK_CORES_MAX 4096u

/* Metadata status (paper 002's TMD "status").  Values are on the wire: append only. */
enum task_status {
    TASK_WAITING = 0,   /* some parent has not finished */
    TASK_READY = 1,     /* every parent done; in a ready queue or moving */
    TASK_RUNNING = 2,
    TASK_DONE = 3,
    TASK_FAILED = 4,    /* the command exited non-zero or could not start */
    TASK_CANCELLED = 5, /* an ancestor failed, or the job was removed */
    TASK_STATUS_COUNT
};

enum task_flags {
    TASK_FLAG_STEALABLE = 1u << 0,
    /* Wire only (proto_put_task): an attempt number follows; never set in memory. */
    TASK_FLAG_ATTEMPT = 1u << 1,
    /* No children: nothing but the client waits on its end, which may then wait a few
     * ms for company on its way to the store (kvs_cas_late).  Set by the client; a
     * daemon that does not know it ignores it, as one gets no such bit from an older
     * client. */
    TASK_FLAG_LEAF = 1u << 2,
    /* Runtime only, never on the wire's meaning: some input had to be fetched. */
    TASK_FLAG_FETCHED = 1u << 7,
};

/*
 * What a command's run used, measured by the kernel when it ended (wait4's rusage and
 * the I/O counters of /proc/PID/io, both over the command and the children it waited
 * for).  Sleep and noop tasks use no process: all zero, and `measured` false.
 */
struct task_usage {
    int64_t user_ns, sys_ns;    /* CPU time in user and kernel mode */
    uint64_t max_rss;           /* largest resident set of one of its processes, bytes */
    uint64_t read_bytes;        /* bytes its processes read (rchar: files, pipes, ...) */
    uint64_t write_bytes;       /* bytes they wrote (wchar) */
    bool measured;
};

/* One input object of a task: what it is, how big, and which node holds it. */
struct task_input {
    uint64_t object;        /* a task's output (the task's key) or a workload object */
    uint64_t bytes;         /* 0 for a declared output not yet fetched: not known before */
    uint32_t node;
    /* 0, or for an object a parent declared as an output (`outputs`), that parent's task
     * index + 1: its node is the parent's runner, known when the task is ready; or
     * TASK_INPUT_WEIGHT. */
    uint32_t producer;
};

/* An input that is no object to stage but placement's weight: a parent with declared
 * outputs, its bytes (the sum of its outputs) on the node that ran it.  The task reads
 * some of those outputs; placement weighs the parent's whole output, as paper 002's
 * metadata has one data object per task. */
#define TASK_INPUT_WEIGHT UINT32_MAX

/* An input the node stages (fetches, links into the task's directory). */
static inline bool task_input_staged(const struct task_input *in)
{
    return in->producer != TASK_INPUT_WEIGHT;
}

/* A file a command declares it writes (`outputs`): collected from its directory, after
 * it exits 0, into the node's store as the object `object` (a task_object_key). */
struct task_output {
    uint64_t object;
    char *file;             /* owned; task_stage_name_ok */
};

/*
 * A task as the scheduler handles it.  `key` names it cluster-wide: the job number in
 * the high 32 bits, the task's index in its workload in the low 32, so daemons never
 * store the workload's id strings (the client maps indices back to ids).
 */
struct task_spec {
    uint64_t key;
    uint8_t kind;           /* enum task_kind */
    uint8_t flags;          /* enum task_flags */
    uint32_t num_parents;
    uint32_t num_inputs;
    /* 0, or how many times a dead holder's copy was handed on (issue 15): it travels
     * with every move, since only the record's attempt may complete the task. */
    uint32_t attempt;
    /* Runs again a failed run may have (0..TASK_RETRIES_MAX), and how many of them were
     * used: failed runs so far of this attempt.  Both travel with the task, so a retry
     * that another node steals keeps its count. */
    uint32_t retries, failures;
    /* Slots the task takes while it runs (`cores`): 1, or up to TASK_CORES_MAX.  0 in a
     * spec built without it means 1 (task_cores). */
    uint32_t cores;
    double duration_s;      /* sleep length at speed 1.0 */
    double timeout_s;       /* time limit in wall seconds from its start; 0: none */
    uint64_t output_bytes;  /* size of the object the task produces */
    uint64_t input_bytes;   /* required input bytes: the ready queues' priority */
    char *cmd;              /* owned; NULL unless TASK_COMMAND */
    /* owned; the workload's declared inputs while the task waits, then also its parents'
     * outputs once it is ready (from the metadata store's notice) */
    struct task_input *inputs;
    /* owned; a command's names for its first num_names inputs (the declared ones) in its
     * directory (task_stage_name_ok); NULL when none */
    char **names;
    uint32_t num_names;
    uint32_t num_outputs;
    struct task_output *outputs; /* owned; a command's declared outputs; NULL when none */
    /* owned; the task indices of its parents that declare outputs: their own object is
     * none, so their entries only place the inputs read from them; NULL when none */
    uint32_t *producers;
    uint32_t num_producers;
};

/* Longest name of a command's input in its directory. */
#define TASK_STAGE_NAME_MAX 1024u
/* A name a command's input may take in its directory: a relative path whose parts are
 * neither empty, "." nor "..", and that is not the daemon's own "output" or "inputs". */
bool task_stage_name_ok(const char *name);

/* Key of a workload's data object: the job's high bits, then the object's index with
 * the top bit set, so that object and task keys never collide. */
static inline uint64_t task_object_key(uint32_t job, uint32_t object_index)
{
    return ((uint64_t)job << 32) | 0x80000000u | object_index;
}

static inline uint64_t task_key(uint32_t job, uint32_t index)
{
    return ((uint64_t)job << 32) | index;
}

/* The key of the task whose run made an input: a parent's output is named by the
 * parent's key, a declared output by its producer; 0 for a workload's initial object,
 * which no task made (and no run can make again). */
static inline uint64_t task_input_source(const struct task_input *in)
{
    if (in->producer && in->producer != TASK_INPUT_WEIGHT)
        return ((in->object >> 32) << 32) | (in->producer - 1);
    return (in->object & 0x80000000u) ? 0 : in->object;
}
static inline uint32_t task_key_job(uint64_t key)
{
    return (uint32_t)(key >> 32);
}
static inline uint32_t task_key_index(uint64_t key)
{
    return (uint32_t)key;
}

static inline uint32_t task_cores(const struct task_spec *t)
{
    return t->cores > 1 ? t->cores : 1;
}

const char *task_kind_name(enum task_kind kind);
const char *task_status_name(enum task_status status);
/* True for DONE, FAILED and CANCELLED. */
bool task_status_final(enum task_status status);

/*
 * The metadata store's shard owner of a key: zero-hop, every node computes it from the
 * membership size alone.  The mixer (core/base/hash.h) spreads consecutive indices
 * evenly, so a job of n tasks puts n/N records on each of N shards.
 */
static inline uint64_t task_key_hash(uint64_t key)
{
    return hash_mix64(key);
}
/* The hash's high 32 bits scaled to [0, nodes) with a multiply rather than a division:
 * every metadata write asks, on the primary and again on each backup. */
static inline uint32_t task_key_owner(uint64_t key, uint32_t nodes)
{
    return (uint32_t)(((task_key_hash(key) >> 32) * (uint64_t)nodes) >> 32);
}

#endif
