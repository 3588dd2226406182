/*
 * trace event — see event.h.  Encoding uses field indexes (we always write with our own
 * schema, whose field order is fixed); decoding looks fields up by name so that files
 * written with a later, appended-to schema read the same way.
 */
#include "trace/format/event.h"
#include "trace/format/varint.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

/* Field positions in jackdaw.Event and jackdaw.Sample (encoding only). */
enum {
    F_KIND, F_NODE, F_SEQ, F_TIME, F_JOB, F_TASK, F_PEER, F_STATUS, F_COUNT, F_BYTES,
    F_DURATION, F_TEXT, F_SAMPLE, F_NAMES, F_USAGE, F_CHECK
};

static const char *const kind_names[TRACE_KIND_COUNT] = {
    "TASK_SUBMIT", "TASK_READY", "TASK_QUEUED_LOCAL", "TASK_QUEUED_SHARED",
    "TASK_PUSHED", "TASK_STOLEN_IN", "TASK_STOLEN_OUT", "TASK_START", "TASK_END",
    "STEAL_REQUEST", "STEAL_GRANT", "STEAL_FAIL",
    "DATA_FETCH", "CACHE_HIT", "NODE_SAMPLE", "NODE_UP", "NODE_DOWN",
    "POLICY_CHANGE", "DROPPED", "JOB_SUBMIT", "TASK_NAMES",
    "TASK_RESUBMIT", "OBJECT_RECOMPUTE", "TASK_RETRY",
};

/* Generated from share/schema/jackdaw-event.avsc (compact JSON); test_trace checks that
 * both parse to equal schemas. */
const char trace_event_schema_json[] =
    "{\"type\":\"record\",\"name\":\"Event\",\"namespace\":\"jackdaw\",\"doc\":\"One "
    "jackdaw trace event. Field meanings per kind: share/doc/trace-schema.md. Append "
    "fields (with defaults) and enum symbols only.\",\"fields\":[{\"name\":\"kind\","
    "\"type\":{\"type\":\"enum\",\"name\":\"Kind\",\"doc\":\"Symbols resolve by posit"
    "ion in libavro: only ever append.\",\"symbols\":[\"TASK_SUBMIT\",\"TASK_READY\","
    "\"TASK_QUEUED_LOCAL\",\"TASK_QUEUED_SHARED\",\"TASK_PUSHED\",\"TASK_STOLEN_IN\","
    "\"TASK_STOLEN_OUT\",\"TASK_START\",\"TASK_END\",\"STEAL_REQUEST\",\"STEAL_GRANT"
    "\",\"STEAL_FAIL\",\"DATA_FETCH\",\"CACHE_HIT\",\"NODE_SAMPLE\",\"NODE_UP\",\"NOD"
    "E_DOWN\",\"POLICY_CHANGE\",\"DROPPED\",\"JOB_SUBMIT\",\"TASK_NAMES\",\"TASK_RESU"
    "BMIT\",\"OBJECT_RECOMPUTE\",\"TASK_RETRY\"]}},{\"name\":\"node\",\"type\":\"int"
    "\",\"doc\":\"Node that recorded the event.\"},{\"name\":\"seq\",\"type\":\"long"
    "\",\"doc\":\"Anchor (< 0): per-node sequence number is -seq-1. Otherwise: previo"
    "us record's sequence number + 1 + seq.\"},{\"name\":\"time\",\"type\":\"long\","
    "\"doc\":\"Anchor: ns since the run start. Otherwise: ns since the previous recor"
    "d (may be negative).\"},{\"name\":\"job\",\"type\":\"int\",\"default\":-1,\"doc"
    "\":\"Task key high half (job), -1 when no task.\"},{\"name\":\"task\",\"type\":"
    "\"int\",\"default\":-1,\"doc\":\"Task key low half (index in the workload), -1 w"
    "hen no task.\"},{\"name\":\"peer\",\"type\":\"int\",\"default\":-1,\"doc\":\"The"
    " other node involved, -1 when none.\"},{\"name\":\"status\",\"type\":\"int\",\"d"
    "efault\":0,\"doc\":\"Task exit status, steal failure reason, node-down reason, a"
    "ttempt of a resubmission or recomputation.\"},{\"name\":\"count\",\"type\":\"lon"
    "g\",\"default\":0,\"doc\":\"Tasks granted, events dropped, slots of a node comin"
    "g up.\"},{\"name\":\"bytes\",\"type\":\"long\",\"default\":0,\"doc\":\"Bytes fet"
    "ched or found in the cache.\"},{\"name\":\"duration\",\"type\":\"long\",\"defaul"
    "t\":0,\"doc\":\"Fetch duration in ns; the attempt on TASK_SUBMIT, TASK_START and"
    " TASK_END.\"},{\"name\":\"text\",\"type\":\"string\",\"default\":\"\",\"doc\":\""
    "Policy name for POLICY_CHANGE, else empty.\"},{\"name\":\"sample\",\"default\":n"
    "ull,\"doc\":\"Set for NODE_SAMPLE only.\",\"type\":[\"null\",{\"type\":\"record"
    "\",\"name\":\"Sample\",\"fields\":[{\"name\":\"busy\",\"type\":\"int\",\"doc\":"
    "\"Slots running a task now.\"},{\"name\":\"slots\",\"type\":\"int\",\"doc\":\"Sl"
    "ots of the node.\"},{\"name\":\"waitq\",\"type\":\"int\",\"doc\":\"Tasks waiting"
    " for inputs (WaitQ).\"},{\"name\":\"lreadyq\",\"type\":\"int\",\"doc\":\"Local r"
    "eady queue length (LReadyQ).\"},{\"name\":\"sreadyq\",\"type\":\"int\",\"doc\":"
    "\"Shared ready queue length (SReadyQ).\"},{\"name\":\"completeq\",\"type\":\"int"
    "\",\"doc\":\"Completions not yet processed (CompleteQ).\"},{\"name\":\"started\""
    ",\"type\":\"long\",\"doc\":\"Cumulative since node start: tasks started.\"},{\"n"
    "ame\":\"ended\",\"type\":\"long\",\"doc\":\"Cumulative: tasks ended (any status)"
    ".\"},{\"name\":\"failed\",\"type\":\"long\",\"doc\":\"Cumulative: tasks ended wi"
    "th status != 0.\"},{\"name\":\"stolen_in\",\"type\":\"long\",\"doc\":\"Cumulativ"
    "e: tasks stolen in.\"},{\"name\":\"stolen_out\",\"type\":\"long\",\"doc\":\"Cumu"
    "lative: tasks stolen out.\"},{\"name\":\"pushed\",\"type\":\"long\",\"doc\":\"Cu"
    "mulative: tasks pushed to other nodes.\"},{\"name\":\"steal_requests\",\"type\":"
    "\"long\",\"doc\":\"Cumulative: steal requests sent.\"},{\"name\":\"steal_fails\""
    ",\"type\":\"long\",\"doc\":\"Cumulative: steal requests that got nothing.\"},{\""
    "name\":\"fetches\",\"type\":\"long\",\"doc\":\"Cumulative: data fetches.\"},{\"n"
    "ame\":\"fetch_bytes\",\"type\":\"long\",\"doc\":\"Cumulative: bytes fetched.\"},"
    "{\"name\":\"cache_hits\",\"type\":\"long\",\"doc\":\"Cumulative: cache hits.\"},"
    "{\"name\":\"busy_ns\",\"type\":\"long\",\"doc\":\"Cumulative: slot-ns spent runn"
    "ing tasks (utilisation between two samples is exact).\"},{\"name\":\"dropped\","
    "\"type\":\"long\",\"doc\":\"Cumulative: events this node dropped.\"},{\"name\":"
    "\"bytes_out\",\"type\":\"long\",\"default\":0,\"doc\":\"Cumulative: bytes this n"
    "ode served to others.\"},{\"name\":\"cancelled\",\"type\":\"long\",\"default\":0"
    ",\"doc\":\"Cumulative: tasks cancelled here (counted in ended, not in failed).\""
    "},{\"name\":\"info_sent\",\"type\":\"long\",\"default\":0,\"doc\":\"Cumulative: "
    "A2WS information-vector messages sent to ring neighbours.\"},{\"name\":\"info_re"
    "ceived\",\"type\":\"long\",\"default\":0,\"doc\":\"Cumulative: A2WS information-"
    "vector messages received.\"},{\"name\":\"token_passes\",\"type\":\"long\",\"defa"
    "ult\":0,\"doc\":\"Cumulative: CTWS token passes by this node.\"}]}]},{\"name\":"
    "\"names\",\"type\":{\"type\":\"array\",\"items\":\"string\"},\"default\":[],\"do"
    "c\":\"JOB_SUBMIT: [workload name]; TASK_NAMES: the workload ids of tasks task..t"
    "ask+count-1. Empty otherwise.\"},{\"name\":\"usage\",\"default\":null,\"doc\":\""
    "Set on a command's TASK_END and TASK_RETRY: what its run used, measured by the k"
    "ernel. Before check, which must stay last (block.c).\",\"type\":[\"null\",{\"typ"
    "e\":\"record\",\"name\":\"Usage\",\"fields\":[{\"name\":\"user_ns\",\"type\":\"l"
    "ong\",\"doc\":\"CPU time in user mode, ns (wait4 rusage: the command and the chi"
    "ldren it waited for).\"},{\"name\":\"sys_ns\",\"type\":\"long\",\"doc\":\"CPU ti"
    "me in kernel mode, ns.\"},{\"name\":\"max_rss\",\"type\":\"long\",\"doc\":\"Larg"
    "est resident set of one of its processes, bytes.\"},{\"name\":\"read_bytes\",\"t"
    "ype\":\"long\",\"doc\":\"Bytes its processes read (rchar of /proc/PID/io: files,"
    " pipes).\"},{\"name\":\"write_bytes\",\"type\":\"long\",\"doc\":\"Bytes its proc"
    "esses wrote (wchar).\"}]}]},{\"name\":\"check\",\"type\":\"long\",\"default\":0,"
    "\"doc\":\"0, except in the last record of each block of a file whose metadata ha"
    "s jackdaw.check: 2^32 + the CRC-32 (zlib) of the block's record count (its zigza"
    "g varint) followed by the block's uncompressed bytes before this field.\"}]}";

void trace_event_init(struct trace_event *ev, enum trace_kind kind, int32_t node)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    ev->node = node;
    ev->task = TRACE_NO_TASK;
    ev->peer = -1;
}

int trace_event_cmp_time(const void *pa, const void *pb)
{
    const struct trace_event *a = pa, *b = pb;
    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? -1 : 1;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

const char *trace_kind_name(int kind)
{
    if (kind < 0 || kind >= TRACE_KIND_COUNT)
        return NULL;
    return kind_names[kind];
}

int trace_event_schema(avro_schema_t *out)
{
    avro_schema_t s;
    if (avro_schema_from_json_length(trace_event_schema_json, strlen(trace_event_schema_json),
                                     &s) != 0)
        return -EINVAL;
    *out = s;
    return 0;
}

static int set_int(avro_value_t *rec, size_t i, int32_t v)
{
    avro_value_t f;
    if (avro_value_get_by_index(rec, i, &f, NULL) || avro_value_set_int(&f, v))
        return -EINVAL;
    return 0;
}

static int set_long(avro_value_t *rec, size_t i, int64_t v)
{
    avro_value_t f;
    if (avro_value_get_by_index(rec, i, &f, NULL) || avro_value_set_long(&f, v))
        return -EINVAL;
    return 0;
}

static int set_sample(avro_value_t *rec, const struct trace_sample *s)
{
    const int32_t ints[] = { s->busy, s->slots, s->waitq, s->lreadyq, s->sreadyq,
                             s->completeq };
    const int64_t longs[] = { s->started, s->ended, s->failed, s->stolen_in, s->stolen_out,
                              s->pushed, s->steal_requests, s->steal_fails, s->fetches,
                              s->fetch_bytes, s->cache_hits, s->busy_ns, s->dropped,
                              s->bytes_out, s->cancelled, s->info_sent, s->info_received,
                              s->token_passes };
    size_t i = 0;
    int rc = 0;
    for (size_t k = 0; k < sizeof ints / sizeof ints[0] && !rc; k++)
        rc = set_int(rec, i++, ints[k]);
    for (size_t k = 0; k < sizeof longs / sizeof longs[0] && !rc; k++)
        rc = set_long(rec, i++, longs[k]);
    return rc;
}

/* What both encoders write first: the checks, then seq and time as an anchor or as
 * deltas from prev, and the task key's halves.  -EINVAL for an event out of range. */
static int head_fields(const struct trace_event *ev, const struct trace_event *prev,
                       int64_t *seq, int64_t *time, int32_t *job, int32_t *task)
{
    if ((unsigned)ev->kind >= TRACE_KIND_COUNT || ev->seq < 0 || ev->time_ns < 0 ||
        !memchr(ev->text, '\0', sizeof ev->text))
        return -EINVAL;
    if (prev && prev->node == ev->node) {
        if (ev->seq <= prev->seq)
            return -EINVAL;
        *seq = ev->seq - prev->seq - 1;
        /* Events of one node may be stamped slightly out of order; a negative delta is
         * fine (zigzag).  Both times are >= 0, so the difference cannot overflow. */
        *time = ev->time_ns - prev->time_ns;
    } else {
        *seq = -ev->seq - 1;
        *time = ev->time_ns;
    }
    *job = -1;
    *task = -1;
    if (ev->task != TRACE_NO_TASK) {
        *job = (int32_t)(uint32_t)(ev->task >> 32);
        *task = (int32_t)(uint32_t)ev->task;
    }
    return 0;
}

int trace_event_to_value(const struct trace_event *ev, const struct trace_event *prev,
                         avro_value_t *rec)
{
    int64_t seq, time;
    int32_t job, task;
    if (head_fields(ev, prev, &seq, &time, &job, &task))
        return -EINVAL;
    avro_value_t f, branch;
    int rc = 0;
    if (avro_value_get_by_index(rec, F_KIND, &f, NULL) || avro_value_set_enum(&f, ev->kind))
        return -EINVAL;
    if ((rc = set_int(rec, F_NODE, ev->node)) || (rc = set_long(rec, F_SEQ, seq)) ||
        (rc = set_long(rec, F_TIME, time)) || (rc = set_int(rec, F_JOB, job)) ||
        (rc = set_int(rec, F_TASK, task)) || (rc = set_int(rec, F_PEER, ev->peer)) ||
        (rc = set_int(rec, F_STATUS, ev->status)) || (rc = set_long(rec, F_COUNT, ev->count)) ||
        (rc = set_long(rec, F_BYTES, ev->bytes)) ||
        (rc = set_long(rec, F_DURATION, ev->duration_ns)))
        return rc;
    if (avro_value_get_by_index(rec, F_TEXT, &f, NULL) ||
        avro_value_set_string_len(&f, ev->text, strlen(ev->text) + 1))
        return -EINVAL;
    /* The generic value is reused record after record: the array must be emptied even
     * when this record names nothing. */
    if (avro_value_get_by_index(rec, F_NAMES, &f, NULL) || avro_value_reset(&f))
        return -EINVAL;
    for (uint32_t i = 0; i < ev->nnames; i++) {
        avro_value_t item;
        const char *s = ev->names[i] ? ev->names[i] : "";
        if (avro_value_append(&f, &item, NULL) ||
            avro_value_set_string_len(&item, s, strlen(s) + 1))
            return -EINVAL;
    }
    /* Always 0 here: the block encoder writes the last record's check when it finishes
     * the block (block.c), as the field's last byte. */
    if ((rc = set_long(rec, F_CHECK, 0)))
        return rc;
    if (avro_value_get_by_index(rec, F_USAGE, &f, NULL))
        return -EINVAL;
    if (ev->usage.measured) {
        const struct task_usage *u = &ev->usage;
        if (u->user_ns < 0 || u->sys_ns < 0 || u->max_rss > INT64_MAX ||
            u->read_bytes > INT64_MAX || u->write_bytes > INT64_MAX)
            return -EINVAL;
        if (avro_value_set_branch(&f, 1, &branch) || set_long(&branch, 0, u->user_ns) ||
            set_long(&branch, 1, u->sys_ns) || set_long(&branch, 2, (int64_t)u->max_rss) ||
            set_long(&branch, 3, (int64_t)u->read_bytes) ||
            set_long(&branch, 4, (int64_t)u->write_bytes))
            return -EINVAL;
    } else if (avro_value_set_branch(&f, 0, &branch) || avro_value_set_null(&branch)) {
        return -EINVAL;
    }
    if (avro_value_get_by_index(rec, F_SAMPLE, &f, NULL))
        return -EINVAL;
    if (ev->kind == TRACE_NODE_SAMPLE) {
        if (avro_value_set_branch(&f, 1, &branch))
            return -EINVAL;
        return set_sample(&branch, &ev->sample);
    }
    if (avro_value_set_branch(&f, 0, &branch) || avro_value_set_null(&branch))
        return -EINVAL;
    return 0;
}

/* The encoder's cursor: writes stop at `end` and set `full` instead of overrunning. */
struct enc {
    uint8_t *p, *end;
    bool full;
};

static void enc_long(struct enc *e, int64_t v)
{
    if (e->end - e->p < VARINT_MAX) {
        uint8_t tmp[VARINT_MAX];
        size_t n = varint_put(tmp, v);
        if ((size_t)(e->end - e->p) < n) {
            e->full = true;
            return;
        }
        memcpy(e->p, tmp, n);
        e->p += n;
        return;
    }
    e->p += varint_put(e->p, v);
}

/* Avro's string: its length, then its bytes (no terminator). */
static void enc_string(struct enc *e, const char *s)
{
    size_t n = strlen(s);
    enc_long(e, (int64_t)n);
    if (e->full || (size_t)(e->end - e->p) < n) {
        e->full = true;
        return;
    }
    memcpy(e->p, s, n);
    e->p += n;
}

/* The fields of the record as trace_event_to_value sets them, in schema order.  The
 * checks are the same, so both refuse the same events. */
int trace_event_encode(const struct trace_event *ev, const struct trace_event *prev,
                       uint8_t *buf, size_t cap)
{
    int64_t seq, time;
    int32_t job, task;
    if (head_fields(ev, prev, &seq, &time, &job, &task))
        return -EINVAL;
    const struct task_usage *u = &ev->usage;
    if (u->measured && (u->user_ns < 0 || u->sys_ns < 0 || u->max_rss > INT64_MAX ||
                        u->read_bytes > INT64_MAX || u->write_bytes > INT64_MAX))
        return -EINVAL;
    struct enc e = { buf, buf + cap, false };
    const int64_t head[] = { ev->kind, ev->node, seq, time, job, task, ev->peer, ev->status,
                             ev->count, ev->bytes, ev->duration_ns };
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        enc_long(&e, head[i]);
    enc_string(&e, ev->text);
    if (ev->kind == TRACE_NODE_SAMPLE) {
        const struct trace_sample *s = &ev->sample;
        const int64_t fields[] = {
            s->busy, s->slots, s->waitq, s->lreadyq, s->sreadyq, s->completeq, s->started,
            s->ended, s->failed, s->stolen_in, s->stolen_out, s->pushed, s->steal_requests,
            s->steal_fails, s->fetches, s->fetch_bytes, s->cache_hits, s->busy_ns,
            s->dropped, s->bytes_out, s->cancelled, s->info_sent, s->info_received,
            s->token_passes
        };
        enc_long(&e, 1);
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            enc_long(&e, fields[i]);
    } else {
        enc_long(&e, 0);
    }
    /* An array is written as one block of all its items, then the empty block. */
    if (ev->nnames) {
        enc_long(&e, ev->nnames);
        for (uint32_t i = 0; i < ev->nnames; i++)
            enc_string(&e, ev->names[i] ? ev->names[i] : "");
    }
    enc_long(&e, 0);
    if (u->measured) {
        enc_long(&e, 1);
        enc_long(&e, u->user_ns);
        enc_long(&e, u->sys_ns);
        enc_long(&e, (int64_t)u->max_rss);
        enc_long(&e, (int64_t)u->read_bytes);
        enc_long(&e, (int64_t)u->write_bytes);
    } else {
        enc_long(&e, 0);
    }
    enc_long(&e, 0); /* check: see trace_event_to_value */
    if (e.full)
        return -ENOSPC;
    return (int)(e.p - buf);
}

/* Member by member, not from a compound literal, whose padding is unspecified (clang
 * leaves stack bytes there): both decoders must leave the padding as their memset did,
 * so that the events they give compare equal whole. */
static void set_usage(struct task_usage *u, const int64_t v[5])
{
    u->user_ns = v[0];
    u->sys_ns = v[1];
    u->max_rss = (uint64_t)v[2];
    u->read_bytes = (uint64_t)v[3];
    u->write_bytes = (uint64_t)v[4];
    u->measured = true;
}

/* The decoder's cursor.  The first malformed field sets `bad` and moves p to end, so
 * that every later read fails at once and the caller checks `bad` only where a value
 * steers what follows (lengths, counts, branches) and at the end. */
struct dec {
    const uint8_t *p, *end;
    bool bad;
};

static void dec_fail(struct dec *d)
{
    d->bad = true;
    d->p = d->end;
}

static inline int64_t dec_long(struct dec *d)
{
    /* Most fields are defaults or small deltas: one byte. */
    if (d->p < d->end && !(*d->p & 0x80)) {
        uint8_t b = *d->p++;
        return (int64_t)(b >> 1) ^ -(int64_t)(b & 1);
    }
    int64_t v;
    int n = varint_get(d->p, (size_t)(d->end - d->p), &v);
    if (n <= 0) {
        dec_fail(d);
        return 0;
    }
    d->p += n;
    return v;
}

/* Our encoder writes an int as the long of the same value, whose varint is Avro's int
 * varint; a value past 32 bits is a damaged record (libavro would wrap it silently). */
static inline int32_t dec_int(struct dec *d)
{
    int64_t v = dec_long(d);
    if (v < INT32_MIN || v > INT32_MAX) {
        dec_fail(d);
        return 0;
    }
    return (int32_t)v;
}

/* A string's length, checked against what is left: *bytes then points at its bytes. */
static size_t dec_string(struct dec *d, const uint8_t **bytes)
{
    int64_t n = dec_long(d);
    if (n < 0 || n > d->end - d->p) {
        dec_fail(d);
        return 0;
    }
    *bytes = d->p;
    d->p += n;
    return (size_t)n;
}

/* Where a record's names go: up to cap pointers into text (NUL-terminated copies);
 * n counts them all.  NULL skips them. */
struct names_sink {
    const char **out;
    size_t cap, n;
    char *text;
};

/* Avro's array: blocks of a count and as many items, ended by an empty block; a negative
 * count is followed by the block's size in bytes, which libavro ignores and we only
 * check is not negative. */
static void dec_names(struct dec *d, struct names_sink *sink)
{
    for (;;) {
        int64_t count = dec_long(d);
        if (d->bad || count == 0)
            return;
        if (count < 0) {
            if (count == INT64_MIN || dec_long(d) < 0) {
                dec_fail(d);
                return;
            }
            count = -count;
        }
        /* Each item takes at least its length's byte: a count past that is damage, found
         * before a long walk. */
        if (count > d->end - d->p) {
            dec_fail(d);
            return;
        }
        for (int64_t i = 0; i < count; i++) {
            const uint8_t *s;
            size_t len = dec_string(d, &s);
            if (d->bad)
                return;
            if (!sink)
                continue;
            if (sink->n < sink->cap) {
                /* The copy and its NUL fit where the length and bytes were. */
                memcpy(sink->text, s, len);
                sink->text[len] = '\0';
                sink->out[sink->n] = sink->text;
                sink->text += len + 1;
            }
            sink->n++;
        }
    }
}

/* What a record holds before the delta coding is undone. */
struct raw_head {
    int32_t node, job, task;
    int64_t seq, time;
};

/* Walks one record in schema order (the order trace_event_encode writes), filling what
 * needs no context into ev (zeroed by the caller) and the rest into *h. */
static void dec_record(struct dec *d, struct trace_event *ev, struct raw_head *h,
                       struct names_sink *names)
{
    int64_t kind = dec_long(d);
    /* The schema this decoder is used with has exactly these symbols. */
    if (kind < 0 || kind >= TRACE_KIND_COUNT)
        dec_fail(d);
    ev->kind = (enum trace_kind)kind;
    h->node = dec_int(d);
    h->seq = dec_long(d);
    h->time = dec_long(d);
    h->job = dec_int(d);
    h->task = dec_int(d);
    ev->peer = dec_int(d);
    ev->status = dec_int(d);
    ev->count = dec_long(d);
    ev->bytes = dec_long(d);
    ev->duration_ns = dec_long(d);
    const uint8_t *s;
    size_t len = dec_string(d, &s);
    /* As trace_event_from_value: up to the first NUL, cut to the buffer rather than
     * refused (the encoder never writes a longer one). */
    const uint8_t *nul = len ? memchr(s, 0, len) : NULL;
    if (nul)
        len = (size_t)(nul - s);
    if (len >= sizeof ev->text)
        len = sizeof ev->text - 1;
    if (len)
        memcpy(ev->text, s, len);
    int64_t branch = dec_long(d);
    if (branch == 1) {
        struct trace_sample *sm = &ev->sample;
        int32_t *ints[] = { &sm->busy, &sm->slots, &sm->waitq, &sm->lreadyq, &sm->sreadyq,
                            &sm->completeq };
        int64_t *longs[] = { &sm->started, &sm->ended, &sm->failed, &sm->stolen_in,
                             &sm->stolen_out, &sm->pushed, &sm->steal_requests,
                             &sm->steal_fails, &sm->fetches, &sm->fetch_bytes,
                             &sm->cache_hits, &sm->busy_ns, &sm->dropped, &sm->bytes_out,
                             &sm->cancelled, &sm->info_sent, &sm->info_received,
                             &sm->token_passes };
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
            *ints[i] = dec_int(d);
        for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++)
            *longs[i] = dec_long(d);
    } else if (branch != 0) {
        dec_fail(d);
    }
    dec_names(d, names);
    branch = dec_long(d);
    if (branch == 1) {
        int64_t v[5];
        for (size_t i = 0; i < 5; i++) {
            v[i] = dec_long(d);
            /* As get_usage: a negative count comes only from damage. */
            if (v[i] < 0)
                dec_fail(d);
        }
        set_usage(&ev->usage, v);
    } else if (branch != 0) {
        dec_fail(d);
    }
    /* check: block.c's concern (trace_block_verify checks it on the compressed bytes);
     * trace_event_from_value ignores it too. */
    (void)dec_long(d);
}

int trace_event_decode(const uint8_t *buf, size_t len, const struct trace_event *prev,
                       struct trace_event *ev)
{
    struct dec d = { buf, buf + len, false };
    struct raw_head h;
    /* Zeroed whole, padding included, so that it equals what trace_event_from_value
     * fills byte for byte (the tests compare them with memcmp). */
    memset(ev, 0, sizeof *ev);
    dec_record(&d, ev, &h, NULL);
    if (d.bad || d.p - buf > INT_MAX)
        return -EBADMSG;
    /* The delta coding undone with trace_event_from_value's checks, in its terms. */
    if (h.seq < 0) {
        ev->seq = -(h.seq + 1);
        ev->time_ns = h.time;
    } else {
        if (!prev || prev->node != h.node || h.seq > INT64_MAX - 1 - prev->seq)
            return -EBADMSG;
        ev->seq = prev->seq + 1 + h.seq;
        if ((h.time < 0 && (h.time == INT64_MIN || prev->time_ns < -h.time)) ||
            (h.time > 0 && prev->time_ns > INT64_MAX - h.time))
            return -EBADMSG;
        ev->time_ns = prev->time_ns + h.time;
    }
    if (ev->time_ns < 0)
        return -EBADMSG;
    ev->node = h.node;
    ev->task = (h.job == -1 && h.task == -1)
                   ? TRACE_NO_TASK
                   : ((uint64_t)(uint32_t)h.job << 32 | (uint32_t)h.task);
    return (int)(d.p - buf);
}

int trace_event_decode_names(const uint8_t *buf, size_t len, const char **out, size_t cap,
                             size_t *n, char *text)
{
    struct dec d = { buf, buf + len, false };
    struct trace_event ev;
    struct raw_head h;
    struct names_sink sink = { out, cap, 0, text };
    memset(&ev, 0, sizeof ev);
    dec_record(&d, &ev, &h, &sink);
    *n = d.bad ? 0 : sink.n;
    return d.bad ? -EBADMSG : 0;
}

int trace_event_names(avro_value_t *rec, const char **out, size_t cap, size_t *n)
{
    avro_value_t f, item;
    size_t len = 0;
    *n = 0;
    if (avro_value_get_by_name(rec, "names", &f, NULL))
        return 0;
    if (avro_value_get_size(&f, &len))
        return -EBADMSG;
    for (size_t i = 0; i < len && i < cap; i++) {
        const char *s;
        size_t slen;
        if (avro_value_get_by_index(&f, i, &item, NULL) ||
            avro_value_get_string(&item, &s, &slen))
            return -EBADMSG;
        out[i] = s;
    }
    *n = len;
    return 0;
}

/* Reads an int or long field by name into *out.  A missing field (an older file that
 * predates it) leaves *out alone, so callers preset the schema default. */
static int get_num(avro_value_t *rec, const char *name, int64_t *out)
{
    avro_value_t f;
    if (avro_value_get_by_name(rec, name, &f, NULL))
        return 0;
    int32_t i;
    switch (avro_value_get_type(&f)) {
    case AVRO_INT32:
        if (avro_value_get_int(&f, &i))
            return -EBADMSG;
        *out = i;
        return 0;
    case AVRO_INT64:
        return avro_value_get_long(&f, out) ? -EBADMSG : 0;
    default:
        return -EBADMSG;
    }
}

static int get_i32(avro_value_t *rec, const char *name, int32_t *out)
{
    int64_t v = *out;
    int rc = get_num(rec, name, &v);
    if (rc)
        return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return -EBADMSG;
    *out = (int32_t)v;
    return 0;
}

static int get_sample(avro_value_t *rec, struct trace_sample *s)
{
    static const char *const int_names[] = { "busy", "slots", "waitq", "lreadyq", "sreadyq",
                                             "completeq" };
    int32_t *ints[] = { &s->busy, &s->slots, &s->waitq, &s->lreadyq, &s->sreadyq,
                        &s->completeq };
    static const char *const long_names[] = { "started", "ended", "failed", "stolen_in",
                                              "stolen_out", "pushed", "steal_requests",
                                              "steal_fails", "fetches", "fetch_bytes",
                                              "cache_hits", "busy_ns", "dropped",
                                              "bytes_out", "cancelled", "info_sent",
                                              "info_received", "token_passes" };
    int64_t *longs[] = { &s->started, &s->ended, &s->failed, &s->stolen_in, &s->stolen_out,
                         &s->pushed, &s->steal_requests, &s->steal_fails, &s->fetches,
                         &s->fetch_bytes, &s->cache_hits, &s->busy_ns, &s->dropped,
                         &s->bytes_out, &s->cancelled, &s->info_sent, &s->info_received,
                         &s->token_passes };
    int rc = 0;
    for (size_t k = 0; k < sizeof ints / sizeof ints[0] && !rc; k++)
        rc = get_i32(rec, int_names[k], ints[k]);
    for (size_t k = 0; k < sizeof longs / sizeof longs[0] && !rc; k++)
        rc = get_num(rec, long_names[k], longs[k]);
    return rc;
}

/* Negative counts are refused: they come only from a damaged or hostile file. */
static int get_usage(avro_value_t *rec, struct task_usage *u)
{
    int64_t v[5] = {0};
    static const char *const names[] = { "user_ns", "sys_ns", "max_rss", "read_bytes",
                                         "write_bytes" };
    for (size_t k = 0; k < 5; k++) {
        int rc = get_num(rec, names[k], &v[k]);
        if (rc)
            return rc;
        if (v[k] < 0)
            return -EBADMSG;
    }
    set_usage(u, v);
    return 0;
}

int trace_event_from_value(avro_value_t *rec, const struct trace_event *prev,
                           struct trace_event *ev)
{
    avro_value_t f, branch;
    int kind;
    int rc;
    memset(ev, 0, sizeof *ev);
    if (avro_value_get_by_name(rec, "kind", &f, NULL) || avro_value_get_enum(&f, &kind) ||
        kind < 0)
        return -EBADMSG;
    ev->kind = (enum trace_kind)kind;
    int64_t seq = 0, time = 0, count = 0, bytes = 0, duration = 0;
    int32_t node = -1, job = -1, task = -1, peer = -1, status = 0;
    if ((rc = get_i32(rec, "node", &node)) || (rc = get_num(rec, "seq", &seq)) ||
        (rc = get_num(rec, "time", &time)) || (rc = get_i32(rec, "job", &job)) ||
        (rc = get_i32(rec, "task", &task)) || (rc = get_i32(rec, "peer", &peer)) ||
        (rc = get_i32(rec, "status", &status)) || (rc = get_num(rec, "count", &count)) ||
        (rc = get_num(rec, "bytes", &bytes)) || (rc = get_num(rec, "duration", &duration)))
        return rc;
    if (seq < 0) {
        ev->seq = -(seq + 1);
        ev->time_ns = time;
    } else {
        if (!prev || prev->node != node || seq > INT64_MAX - 1 - prev->seq)
            return -EBADMSG;
        ev->seq = prev->seq + 1 + seq;
        /* INT64_MIN has no negation; only damage writes it. */
        if ((time < 0 && (time == INT64_MIN || prev->time_ns < -time)) ||
            (time > 0 && prev->time_ns > INT64_MAX - time))
            return -EBADMSG;
        ev->time_ns = prev->time_ns + time;
    }
    if (ev->time_ns < 0)
        return -EBADMSG;
    ev->node = node;
    ev->task = (job == -1 && task == -1)
                   ? TRACE_NO_TASK
                   : ((uint64_t)(uint32_t)job << 32 | (uint32_t)task);
    ev->peer = peer;
    ev->status = status;
    ev->count = count;
    ev->bytes = bytes;
    ev->duration_ns = duration;
    if (!avro_value_get_by_name(rec, "text", &f, NULL)) {
        const char *s;
        size_t n;
        if (avro_value_get_string(&f, &s, &n))
            return -EBADMSG;
        /* n counts the NUL libavro appends; truncate rather than refuse a long name. */
        size_t len = n ? strnlen(s, n) : 0;
        if (len >= sizeof ev->text)
            len = sizeof ev->text - 1;
        memcpy(ev->text, s, len);
        ev->text[len] = '\0';
    }
    if (!avro_value_get_by_name(rec, "sample", &f, NULL)) {
        int disc;
        if (avro_value_get_discriminant(&f, &disc) || avro_value_get_current_branch(&f, &branch))
            return -EBADMSG;
        if (avro_value_get_type(&branch) == AVRO_RECORD && (rc = get_sample(&branch, &ev->sample)))
            return rc;
    }
    if (!avro_value_get_by_name(rec, "usage", &f, NULL)) {
        int disc;
        if (avro_value_get_discriminant(&f, &disc) || avro_value_get_current_branch(&f, &branch))
            return -EBADMSG;
        if (avro_value_get_type(&branch) == AVRO_RECORD && (rc = get_usage(&branch, &ev->usage)))
            return rc;
    }
    return 0;
}

int trace_event_value_new(avro_schema_t schema, avro_value_iface_t **iface, avro_value_t *value)
{
    *iface = avro_generic_class_from_schema(schema);
    if (!*iface)
        return -ENOMEM;
    if (avro_generic_value_new(*iface, value)) {
        avro_value_iface_decref(*iface);
        *iface = NULL;
        return -ENOMEM;
    }
    return 0;
}

void trace_event_value_free(avro_value_iface_t *iface, avro_value_t *value)
{
    if (!iface)
        return;
    avro_value_decref(value);
    avro_value_iface_decref(iface);
}
