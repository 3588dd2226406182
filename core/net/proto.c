/*
 * proto — payload codecs (see proto.h).  Every decoder validates enum ranges and
 * lengths so that a corrupt or hostile peer yields -EBADMSG, never an out-of-range
 * table index further in.
 */
#include "core/net/proto.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

/* Receivers route by range (proto_range_of): a type outside its group's range would
 * reach the wrong owner. */
_Static_assert(MSG_KVS_INSERT >> 8 == PROTO_RANGE_KVS &&
                   MSG_KVS_REPLICA_ACK >> 8 == PROTO_RANGE_KVS,
               "metadata store types in their range");
_Static_assert(MSG_LOAD_QUERY >> 8 == PROTO_RANGE_SCHED && MSG_RECOMPUTE >> 8 == PROTO_RANGE_SCHED,
               "scheduler types in their range");
_Static_assert(MSG_JOB_BEGIN >> 8 == PROTO_RANGE_CLIENT &&
                   MSG_JOB_ENDED >> 8 == PROTO_RANGE_CLIENT,
               "client types in their range");
_Static_assert(MSG_TRACE_HELLO >> 8 == PROTO_RANGE_TRACE &&
                   MSG_TRACE_STATE >> 8 == PROTO_RANGE_TRACE,
               "trace types in their range");

const char *proto_type_name(uint16_t type)
{
    switch (type) {
    case MSG_KVS_INSERT: return "kvs-insert";
    case MSG_KVS_LOOKUP: return "kvs-lookup";
    case MSG_KVS_LOOKUP_REPLY: return "kvs-lookup-reply";
    case MSG_KVS_REMOVE: return "kvs-remove";
    case MSG_KVS_APPEND: return "kvs-append";
    case MSG_KVS_CAS: return "kvs-cas";
    case MSG_KVS_CAS_REPLY: return "kvs-cas-reply";
    case MSG_KVS_NOTIFY: return "kvs-notify";
    case MSG_KVS_FORGET: return "kvs-forget";
    case MSG_KVS_REPLICATE: return "kvs-replicate";
    case MSG_KVS_REPLICA_ACK: return "kvs-replica-ack";
    case MSG_LOAD_QUERY: return "load-query";
    case MSG_LOAD_REPLY: return "load-reply";
    case MSG_STEAL_REQUEST: return "steal-request";
    case MSG_STEAL_GRANT: return "steal-grant";
    case MSG_IDLE: return "idle";
    case MSG_WAKE: return "wake";
    case MSG_JOB_BEGIN: return "job-begin";
    case MSG_SUBMIT: return "submit";
    case MSG_SYNC: return "sync";
    case MSG_SYNC_REPLY: return "sync-reply";
    case MSG_TASK_END: return "task-end";
    case MSG_STATS_QUERY: return "stats-query";
    case MSG_STATS_REPLY: return "stats-reply";
    case MSG_SHUTDOWN: return "shutdown";
    case MSG_OBJECT_CREATE: return "object-create";
    case MSG_OBJECT_PUT: return "object-put";
    case MSG_OBJECT_PUT_DONE: return "object-put-done";
    case MSG_JOB_ATTACH: return "job-attach";
    case MSG_JOB_ENDED: return "job-ended";
    case MSG_PUSH: return "push";
    case MSG_FETCH_REQ: return "fetch-request";
    case MSG_FETCH_REP: return "fetch-reply";
    case MSG_INFO: return "info";
    case MSG_TOKEN: return "token";
    case MSG_LW_FORWARD: return "lw-forward";
    case MSG_LW_REQUEST: return "lw-request";
    case MSG_LW_GRANT: return "lw-grant";
    case MSG_HEARTBEAT: return "heartbeat";
    case MSG_SUSPECT: return "suspect";
    case MSG_MEMBER_DEAD: return "member-dead";
    case MSG_YOU_ARE_DEAD: return "you-are-dead";
    case MSG_RESUBMIT: return "resubmit";
    case MSG_RECOMPUTE: return "recompute";
    case MSG_TRACE_HELLO: return "trace-hello";
    case MSG_TRACE_RESUME: return "trace-resume";
    case MSG_TRACE_BLOCK: return "trace-block";
    case MSG_TRACE_ACK: return "trace-ack";
    case MSG_TRACE_LIVE: return "trace-live";
    case MSG_TRACE_JOB: return "trace-job";
    case MSG_TRACE_NAMES: return "trace-names";
    case MSG_TRACE_SUBSCRIBE: return "trace-subscribe";
    case MSG_TRACE_INFO: return "trace-info";
    case MSG_TRACE_STATE: return "trace-state";
    default: return "unknown";
    }
}

/* A task spec's mask byte: which of the fields that are zero in most tasks follow (a
 * bit is set exactly when its field is not zero: one spelling per spec). */
enum {
    S_PARENTS = 1u << 0,
    S_DURATION = 1u << 1,
    S_TIMEOUT = 1u << 2,
    S_OUTPUT = 1u << 3,
    S_INPUT = 1u << 4,
    S_INPUTS = 1u << 5,
    S_RETRIES = 1u << 6, /* retries, then failures (at most retries) */
    S_EXT = 1u << 7,     /* a second mask byte follows, with the same rule */
    S_ALL = (1u << 8) - 1,
};
/* The second mask byte's bits (set only when one is, so never 0 after S_EXT). */
enum {
    S2_CORES = 1u << 0,  /* cores, >= 2 (1 is the default and is not written) */
    S2_NAMES = 1u << 1,  /* a command's input names: a count (>= 1, at most the inputs),
                            then that many strings, after the inputs */
    S2_OUTPUTS = 1u << 2, /* a command's declared outputs: a count (>= 1), then per
                             output its object's index (the job is the task's) and its
                             file, after the names */
    S2_PRODUCED = 1u << 3, /* parents with declared outputs (a count, their task indices)
                              and the inputs made by one (a count, then pairs: input
                              index, ascending, and its producer field); the counts are
                              not both 0 */
    S2_ALL = (1u << 4) - 1,
};

static uint64_t f64_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

void proto_put_task(struct wbuf *b, const struct task_spec *t)
{
    uint8_t mask = (uint8_t)((t->num_parents ? S_PARENTS : 0) |
                             (f64_bits(t->duration_s) ? S_DURATION : 0) |
                             (f64_bits(t->timeout_s) ? S_TIMEOUT : 0) |
                             (t->output_bytes ? S_OUTPUT : 0) | (t->input_bytes ? S_INPUT : 0) |
                             (t->num_inputs ? S_INPUTS : 0) | (t->retries ? S_RETRIES : 0));
    uint32_t produced = 0;
    for (uint32_t i = 0; i < t->num_inputs; i++)
        produced += t->inputs[i].producer != 0;
    bool command = t->kind == TASK_COMMAND;
    uint8_t mask2 = (uint8_t)((t->cores > 1 ? S2_CORES : 0) |
                              (t->num_names && command ? S2_NAMES : 0) |
                              (t->num_outputs && command ? S2_OUTPUTS : 0) |
                              (t->num_producers || produced ? S2_PRODUCED : 0));
    if (mask2)
        mask |= S_EXT;
    wbuf_put_u64(b, t->key);
    wbuf_put_u8(b, t->kind);
    /* The attempt costs nothing on the wire while it is 0, as it nearly always is. */
    wbuf_put_u8(b, (uint8_t)((t->flags & ~TASK_FLAG_ATTEMPT) |
                             (t->attempt ? TASK_FLAG_ATTEMPT : 0)));
    wbuf_put_u8(b, mask);
    if (mask & S_EXT)
        wbuf_put_u8(b, mask2);
    if (mask & S_PARENTS)
        wbuf_put_uv(b, t->num_parents);
    if (mask & S_DURATION)
        wbuf_put_f64(b, t->duration_s);
    if (mask & S_TIMEOUT)
        wbuf_put_f64(b, t->timeout_s);
    if (mask & S_OUTPUT)
        wbuf_put_uv(b, t->output_bytes);
    if (mask & S_INPUT)
        wbuf_put_uv(b, t->input_bytes);
    if (t->attempt)
        wbuf_put_uv(b, t->attempt);
    if (mask & S_RETRIES) {
        wbuf_put_uv(b, t->retries);
        wbuf_put_uv(b, t->failures);
    }
    if (mask2 & S2_CORES)
        wbuf_put_uv(b, t->cores);
    if (t->kind == TASK_COMMAND)
        wbuf_put_str(b, t->cmd);
    if (mask & S_INPUTS) {
        wbuf_put_uv(b, t->num_inputs);
        for (uint32_t i = 0; i < t->num_inputs; i++) {
            wbuf_put_u64(b, t->inputs[i].object);
            wbuf_put_uv(b, t->inputs[i].bytes);
            wbuf_put_uv(b, t->inputs[i].node);
        }
    }
    if (mask2 & S2_NAMES) {
        wbuf_put_uv(b, t->num_names);
        for (uint32_t i = 0; i < t->num_names; i++)
            wbuf_put_str(b, t->names[i]);
    }
    if (mask2 & S2_OUTPUTS) {
        wbuf_put_uv(b, t->num_outputs);
        for (uint32_t i = 0; i < t->num_outputs; i++) {
            wbuf_put_uv(b, task_key_index(t->outputs[i].object));
            wbuf_put_str(b, t->outputs[i].file);
        }
    }
    if (mask2 & S2_PRODUCED) {
        wbuf_put_uv(b, t->num_producers);
        for (uint32_t i = 0; i < t->num_producers; i++)
            wbuf_put_uv(b, t->producers[i]);
        wbuf_put_uv(b, produced);
        for (uint32_t i = 0; i < t->num_inputs; i++)
            if (t->inputs[i].producer) {
                wbuf_put_uv(b, i);
                wbuf_put_uv(b, t->inputs[i].producer);
            }
    }
}

/* A file name read from the wire, as a command's directory takes it (one spelling: no
 * NUL inside, so the name read back is the name sent); NULL when it is none. */
static char *get_stage_name(struct rbuf *r)
{
    uint32_t len;
    const char *name = rbuf_str(r, &len, TASK_STAGE_NAME_MAX);
    char *s = rbuf_ok(r) && name && memchr(name, 0, len) == NULL ? xstrndup(name, len) : NULL;
    if (s && !task_stage_name_ok(s)) {
        free(s);
        s = NULL;
    }
    return s;
}

/* The outputs and producers of a spec (S2_OUTPUTS, S2_PRODUCED), after its names. */
static int get_task_outputs(struct rbuf *r, struct task_spec *t, uint8_t mask2)
{
    if (mask2 & S2_OUTPUTS) {
        /* Each output is at least 2 bytes (an index and a one-byte name length). */
        uint32_t k = (uint32_t)rbuf_nonzero(r, rbuf_uv32(r));
        if (!rbuf_ok(r) || t->kind != TASK_COMMAND || k > r->left / 2)
            return -EBADMSG;
        t->outputs = xcalloc(k, sizeof *t->outputs);
        t->num_outputs = k;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t index = rbuf_uv32(r);
            t->outputs[i].object = task_object_key(task_key_job(t->key), index);
            t->outputs[i].file = get_stage_name(r);
            /* An output is a workload object: its index has the top bit. */
            if (!t->outputs[i].file || !(index & 0x80000000u))
                return -EBADMSG;
        }
    }
    if (mask2 & S2_PRODUCED) {
        uint32_t k = rbuf_uv32(r);
        if (!rbuf_ok(r) || k > r->left)
            return -EBADMSG;
        if (k) {
            t->producers = xcalloc(k, sizeof *t->producers);
            t->num_producers = k;
        }
        for (uint32_t i = 0; i < k; i++)
            t->producers[i] = rbuf_uv32(r);
        uint32_t m = rbuf_uv32(r);
        if (!rbuf_ok(r) || (k == 0 && m == 0) || m > t->num_inputs)
            return -EBADMSG;
        for (uint32_t j = 0, next = 0; j < m; j++) {
            uint32_t i = rbuf_uv32(r), producer = (uint32_t)rbuf_nonzero(r, rbuf_uv32(r));
            if (!rbuf_ok(r) || i < next || i >= t->num_inputs)
                return -EBADMSG;
            t->inputs[i].producer = producer;
            next = i + 1;
        }
    }
    return rbuf_ok(r) ? 0 : -EBADMSG;
}

static double f64_nonzero(struct rbuf *r)
{
    uint64_t u = rbuf_nonzero(r, rbuf_u64(r));
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

int proto_get_task(struct rbuf *r, struct task_spec *t)
{
    t->key = rbuf_u64(r);
    t->kind = rbuf_u8(r);
    t->flags = rbuf_u8(r);
    t->names = NULL;
    t->num_names = 0;
    t->outputs = NULL;
    t->num_outputs = 0;
    t->producers = NULL;
    t->num_producers = 0;
    uint8_t mask = rbuf_u8(r);
    uint8_t mask2 = mask & S_EXT ? (uint8_t)rbuf_nonzero(r, rbuf_u8(r)) : 0;
    t->num_parents = mask & S_PARENTS ? (uint32_t)rbuf_nonzero(r, rbuf_uv32(r)) : 0;
    t->duration_s = mask & S_DURATION ? f64_nonzero(r) : 0;
    t->timeout_s = mask & S_TIMEOUT ? f64_nonzero(r) : 0;
    t->output_bytes = mask & S_OUTPUT ? rbuf_nonzero(r, rbuf_uv(r)) : 0;
    t->input_bytes = mask & S_INPUT ? rbuf_nonzero(r, rbuf_uv(r)) : 0;
    t->cmd = NULL;
    t->inputs = NULL;
    t->num_inputs = 0;
    t->attempt = 0;
    if (t->flags & TASK_FLAG_ATTEMPT) {
        t->flags &= (uint8_t)~TASK_FLAG_ATTEMPT;
        t->attempt = (uint32_t)rbuf_nonzero(r, rbuf_uv32(r));
    }
    t->retries = t->failures = 0;
    if (mask & S_RETRIES) {
        t->retries = (uint32_t)rbuf_nonzero(r, rbuf_uv32(r));
        t->failures = rbuf_uv32(r);
    }
    t->cores = 1;
    if (mask2 & S2_CORES)
        t->cores = rbuf_uv32(r);
    if (!rbuf_ok(r) || (mask2 & ~S2_ALL) || t->kind >= TASK_KIND_COUNT ||
        t->cores < 1 || t->cores > TASK_CORES_MAX || ((mask2 & S2_CORES) && t->cores < 2) ||
        t->retries > TASK_RETRIES_MAX || t->failures > t->retries ||
        !isfinite(t->duration_s) || t->duration_s < 0 ||
        (t->timeout_s != 0 && !task_timeout_valid(t->timeout_s)))
        return -EBADMSG;
    if (t->kind == TASK_COMMAND) {
        t->cmd = rbuf_strdup(r, PROTO_MAX_STRING);
        if (!t->cmd)
            return -EBADMSG;
    }
    /* Each input is at least 10 bytes (a key and two one-byte varints). */
    uint32_t n = mask & S_INPUTS ? (uint32_t)rbuf_nonzero(r, rbuf_uv32(r)) : 0;
    if (!rbuf_ok(r) || n > r->left / 10) {
        free(t->cmd);
        t->cmd = NULL;
        return -EBADMSG;
    }
    if (n) {
        t->inputs = xcalloc(n, sizeof *t->inputs);
        t->num_inputs = n;
        for (uint32_t i = 0; i < n; i++) {
            t->inputs[i].object = rbuf_u64(r);
            t->inputs[i].bytes = rbuf_uv(r);
            t->inputs[i].node = rbuf_uv32(r);
        }
        if (!rbuf_ok(r)) {
            proto_task_fini(t);
            return -EBADMSG;
        }
    }
    if (mask2 & S2_NAMES) {
        /* A command's, one per declared input at most, each a name that stays in its
         * directory: the node links the input under it. */
        uint32_t k = (uint32_t)rbuf_nonzero(r, rbuf_uv32(r));
        if (!rbuf_ok(r) || t->kind != TASK_COMMAND || k > t->num_inputs) {
            proto_task_fini(t);
            return -EBADMSG;
        }
        t->names = xcalloc(k, sizeof *t->names);
        t->num_names = k;
        for (uint32_t i = 0; i < k; i++) {
            t->names[i] = get_stage_name(r);
            if (!t->names[i]) {
                proto_task_fini(t);
                return -EBADMSG;
            }
        }
    }
    if (get_task_outputs(r, t, mask2) < 0) {
        proto_task_fini(t);
        return -EBADMSG;
    }
    return 0;
}

void proto_task_fini(struct task_spec *t)
{
    for (uint32_t i = 0; t->names && i < t->num_names; i++)
        free(t->names[i]);
    free(t->names);
    t->names = NULL;
    t->num_names = 0;
    for (uint32_t i = 0; t->outputs && i < t->num_outputs; i++)
        free(t->outputs[i].file);
    free(t->outputs);
    t->outputs = NULL;
    t->num_outputs = 0;
    free(t->producers);
    t->producers = NULL;
    t->num_producers = 0;
    free(t->cmd);
    free(t->inputs);
    t->cmd = NULL;
    t->inputs = NULL;
    t->num_inputs = 0;
}

void proto_put_resubmit(struct wbuf *b, const struct proto_resubmit *m, const void *spec,
                        size_t spec_len)
{
    wbuf_put_u32(b, m->attempt);
    wbuf_put_u8(b, m->ready);
    wbuf_put_u64(b, (uint64_t)m->t_ready);
    wbuf_put_u32(b, m->nparents);
    for (uint32_t i = 0; i < m->nparents; i++) {
        wbuf_put_u64(b, m->parents[i].object);
        wbuf_put_u64(b, m->parents[i].bytes);
        wbuf_put_u32(b, m->parents[i].node);
    }
    if (spec)
        wbuf_put(b, spec, spec_len);
    else
        proto_put_task(b, &m->spec);
}

int proto_get_resubmit(struct rbuf *r, struct proto_resubmit *m)
{
    memset(m, 0, sizeof *m);
    m->attempt = rbuf_u32(r);
    m->ready = rbuf_u8(r);
    m->t_ready = (int64_t)rbuf_u64(r);
    m->nparents = rbuf_u32(r);
    if (!rbuf_ok(r) || m->ready > 1 || (uint64_t)m->nparents * (8 + 8 + 4) > r->left) {
        m->nparents = 0;
        return -EBADMSG;
    }
    if (m->nparents) {
        m->parents = xcalloc(m->nparents, sizeof *m->parents);
        for (uint32_t i = 0; i < m->nparents; i++) {
            m->parents[i].object = rbuf_u64(r);
            m->parents[i].bytes = rbuf_u64(r);
            m->parents[i].node = rbuf_u32(r);
        }
    }
    if (!rbuf_ok(r) || proto_get_task(r, &m->spec) < 0) {
        free(m->parents);
        memset(m, 0, sizeof *m);
        return -EBADMSG;
    }
    return 0;
}

void proto_resubmit_fini(struct proto_resubmit *m)
{
    free(m->parents);
    proto_task_fini(&m->spec);
    memset(m, 0, sizeof *m);
}

void proto_put_task_end(struct wbuf *b, const struct proto_task_end *e)
{
    wbuf_put_u64(b, e->key);
    wbuf_put_u8(b, e->status);
    wbuf_put_u32(b, e->node);
    wbuf_put_u32(b, (uint32_t)e->exit_code);
    wbuf_put_u32(b, (uint32_t)e->term_signal);
    wbuf_put_i64(b, e->t_ready);
    wbuf_put_i64(b, e->t_start);
    wbuf_put_i64(b, e->t_end);
    wbuf_put_str(b, e->detail);
    wbuf_put_u8(b, e->timed_out ? 1 : 0);
    wbuf_put_uv(b, e->failures);
    const struct task_usage *u = &e->usage;
    wbuf_put_u8(b, u->measured ? 1 : 0);
    if (u->measured) {
        wbuf_put_uv(b, (uint64_t)u->user_ns);
        wbuf_put_uv(b, (uint64_t)u->sys_ns);
        wbuf_put_uv(b, u->max_rss);
        wbuf_put_uv(b, u->read_bytes);
        wbuf_put_uv(b, u->write_bytes);
    }
}

int proto_get_task_end(struct rbuf *r, struct proto_task_end *e)
{
    e->key = rbuf_u64(r);
    e->status = rbuf_u8(r);
    e->node = rbuf_u32(r);
    e->exit_code = (int32_t)rbuf_u32(r);
    e->term_signal = (int32_t)rbuf_u32(r);
    e->t_ready = rbuf_i64(r);
    e->t_start = rbuf_i64(r);
    e->t_end = rbuf_i64(r);
    uint32_t n;
    const char *s = rbuf_str(r, &n, PROTO_MAX_STRING);
    uint8_t timed_out = rbuf_u8(r);
    e->failures = rbuf_uv32(r);
    e->detail = NULL; /* before any refusal: the caller frees nothing then */
    uint8_t measured = rbuf_u8(r);
    e->usage = (struct task_usage){.measured = measured == 1};
    if (measured == 1) {
        uint64_t user = rbuf_uv(r), sys = rbuf_uv(r);
        e->usage.max_rss = rbuf_uv(r);
        e->usage.read_bytes = rbuf_uv(r);
        e->usage.write_bytes = rbuf_uv(r);
        /* Signed in memory and in the trace: a larger count is no measurement. */
        if (user > INT64_MAX || sys > INT64_MAX || e->usage.max_rss > INT64_MAX ||
            e->usage.read_bytes > INT64_MAX || e->usage.write_bytes > INT64_MAX)
            return -EBADMSG;
        e->usage.user_ns = (int64_t)user;
        e->usage.sys_ns = (int64_t)sys;
    }
    e->detail = NULL;
    e->timed_out = timed_out == 1;
    /* Only a failure can be a timeout. */
    if (!rbuf_ok(r) || !task_status_final(e->status) || timed_out > 1 || measured > 1 ||
        e->failures > TASK_RETRIES_MAX ||
        (e->timed_out && e->status != TASK_FAILED))
        return -EBADMSG;
    if (n)
        e->detail = xstrndup(s, n);
    return 0;
}

void proto_put_stats(struct wbuf *b, const struct proto_stats *s)
{
    wbuf_put_u32(b, s->node);
    wbuf_put_u32(b, s->slots);
    wbuf_put_u32(b, s->busy);
    wbuf_put_f64(b, s->speed);
    wbuf_put_u32(b, s->waitq);
    wbuf_put_u32(b, s->lready);
    wbuf_put_u32(b, s->sready);
    wbuf_put_u64(b, s->completeq);
    wbuf_put_u64(b, s->tasks_run);
    wbuf_put_u64(b, s->tasks_failed);
    wbuf_put_u64(b, s->steals_attempted);
    wbuf_put_u64(b, s->steals_succeeded);
    wbuf_put_u64(b, s->tasks_stolen);
    wbuf_put_u64(b, s->tasks_given);
    wbuf_put_u64(b, s->kvs_records);
    wbuf_put_u64(b, s->rss_bytes);
    wbuf_put_u64(b, s->tasks_pushed);
    wbuf_put_u64(b, s->tasks_with_inputs);
    wbuf_put_u64(b, s->locality_hits);
    wbuf_put_u64(b, s->fetches);
    wbuf_put_u64(b, s->bytes_in);
    wbuf_put_u64(b, s->bytes_out);
    wbuf_put_u64(b, s->cache_hits);
    wbuf_put_u64(b, s->cache_misses);
    wbuf_put_u64(b, s->policy_switches);
    wbuf_put_f64(b, s->est_task_length_s);
    wbuf_put_u32(b, s->njobs);
    for (uint32_t i = 0; i < s->njobs; i++) {
        wbuf_put_u32(b, s->jobs[i].job);
        wbuf_put_u32(b, s->jobs[i].tasks);
        wbuf_put_u32(b, s->jobs[i].done);
        wbuf_put_u32(b, s->jobs[i].failed);
        wbuf_put_u32(b, s->jobs[i].cancelled);
    }
    wbuf_put_u64(b, s->tasks_resubmitted);
    wbuf_put_u64(b, s->objects_recomputed);
    wbuf_put_u32(b, s->epoch);
    wbuf_put_u32(b, s->ndead);
    for (uint32_t i = 0; i < s->ndead; i++) {
        wbuf_put_u32(b, s->dead[i].node);
        wbuf_put_u32(b, s->dead[i].by);
        wbuf_put_i64(b, s->dead[i].at_ns);
    }
}

int proto_get_stats(struct rbuf *r, struct proto_stats *s)
{
    s->node = rbuf_u32(r);
    s->slots = rbuf_u32(r);
    s->busy = rbuf_u32(r);
    s->speed = rbuf_f64(r);
    s->waitq = rbuf_u32(r);
    s->lready = rbuf_u32(r);
    s->sready = rbuf_u32(r);
    s->completeq = rbuf_u64(r);
    s->tasks_run = rbuf_u64(r);
    s->tasks_failed = rbuf_u64(r);
    s->steals_attempted = rbuf_u64(r);
    s->steals_succeeded = rbuf_u64(r);
    s->tasks_stolen = rbuf_u64(r);
    s->tasks_given = rbuf_u64(r);
    s->kvs_records = rbuf_u64(r);
    s->rss_bytes = rbuf_u64(r);
    s->tasks_pushed = rbuf_u64(r);
    s->tasks_with_inputs = rbuf_u64(r);
    s->locality_hits = rbuf_u64(r);
    s->fetches = rbuf_u64(r);
    s->bytes_in = rbuf_u64(r);
    s->bytes_out = rbuf_u64(r);
    s->cache_hits = rbuf_u64(r);
    s->cache_misses = rbuf_u64(r);
    s->policy_switches = rbuf_u64(r);
    s->est_task_length_s = rbuf_f64(r);
    s->njobs = rbuf_u32(r);
    s->jobs = NULL;
    s->dead = NULL;
    s->ndead = 0;
    /* Each job entry is 20 bytes: refuse counts the payload cannot hold before
     * allocating for them. */
    if (!rbuf_ok(r) || s->njobs > r->left / 20)
        return -EBADMSG;
    s->jobs = xcalloc(s->njobs, sizeof *s->jobs);
    for (uint32_t i = 0; i < s->njobs; i++) {
        s->jobs[i].job = rbuf_u32(r);
        s->jobs[i].tasks = rbuf_u32(r);
        s->jobs[i].done = rbuf_u32(r);
        s->jobs[i].failed = rbuf_u32(r);
        s->jobs[i].cancelled = rbuf_u32(r);
    }
    s->tasks_resubmitted = rbuf_u64(r);
    s->objects_recomputed = rbuf_u64(r);
    s->epoch = rbuf_u32(r);
    s->ndead = rbuf_u32(r);
    /* A node knows at most epoch deaths; each entry is 16 bytes. */
    if (!rbuf_ok(r) || s->ndead > s->epoch || s->ndead > r->left / 16) {
        proto_stats_fini(s);
        return -EBADMSG;
    }
    if (s->ndead)
        s->dead = xcalloc(s->ndead, sizeof *s->dead);
    for (uint32_t i = 0; i < s->ndead; i++) {
        s->dead[i].node = rbuf_u32(r);
        s->dead[i].by = rbuf_u32(r);
        s->dead[i].at_ns = rbuf_i64(r);
    }
    if (!rbuf_ok(r)) {
        proto_stats_fini(s);
        return -EBADMSG;
    }
    return 0;
}

void proto_stats_fini(struct proto_stats *s)
{
    free(s->jobs);
    free(s->dead);
    s->jobs = NULL;
    s->dead = NULL;
    s->njobs = s->ndead = 0;
}

void proto_put_job_ended(struct wbuf *b, const struct proto_job_ended *m)
{
    wbuf_put_u32(b, m->counts.job);
    wbuf_put_u32(b, m->counts.tasks);
    wbuf_put_u32(b, m->counts.done);
    wbuf_put_u32(b, m->counts.failed);
    wbuf_put_u32(b, m->counts.cancelled);
    wbuf_put_u8(b, m->last);
    wbuf_put_u32(b, m->count);
    for (uint32_t i = 0; i < m->count; i++) {
        const struct proto_task_end *e = &m->ends[i];
        wbuf_put_u64(b, e->key);
        wbuf_put_u8(b, e->status);
        wbuf_put_u32(b, e->node);
        wbuf_put_u32(b, (uint32_t)e->exit_code);
        wbuf_put_i64(b, e->t_ready);
        wbuf_put_i64(b, e->t_start);
        wbuf_put_i64(b, e->t_end);
    }
}

int proto_get_job_ended(struct rbuf *r, struct proto_job_ended *m)
{
    m->counts.job = rbuf_u32(r);
    m->counts.tasks = rbuf_u32(r);
    m->counts.done = rbuf_u32(r);
    m->counts.failed = rbuf_u32(r);
    m->counts.cancelled = rbuf_u32(r);
    m->last = rbuf_u8(r);
    m->count = rbuf_u32(r);
    m->ends = NULL;
    if (!rbuf_ok(r) || m->last > 1 || m->count > r->left / PROTO_JOB_ENDED_BYTES)
        return -EBADMSG;
    if (m->count)
        m->ends = xcalloc(m->count, sizeof *m->ends);
    bool bad = false;
    for (uint32_t i = 0; i < m->count && !bad; i++) {
        struct proto_task_end *e = &m->ends[i];
        e->key = rbuf_u64(r);
        e->status = rbuf_u8(r);
        e->node = rbuf_u32(r);
        e->exit_code = (int32_t)rbuf_u32(r);
        e->t_ready = rbuf_i64(r);
        e->t_start = rbuf_i64(r);
        e->t_end = rbuf_i64(r);
        /* Only ends, and only of the job named. */
        bad = !task_status_final(e->status) || task_key_job(e->key) != m->counts.job;
    }
    if (bad || !rbuf_ok(r)) {
        free(m->ends);
        m->ends = NULL;
        return -EBADMSG;
    }
    return 0;
}
