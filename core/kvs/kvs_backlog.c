/*
 * kvs_backlog — a backup's copies kept as the bytes its primaries sent, built into
 * records only when someone needs them (issue 15: replication must cost little).
 *
 * A backup reads its copies only when a primary dies (the take-over), when a job is
 * forgotten, or when asked (kvs_local_record, kvs_local_records).  Building each copy
 * as it arrives — decoding, allocating the record and its spec, a hash insert and then
 * a hash lookup for every status swap, each a cache miss in a map of a million records
 * — was most of what R = 2 cost a NOOP run.  So while nobody is down, a backup appends
 * each checked REPLICATE payload to its job's log (sequential memory, no lookup) and
 * acknowledges it as before: what the primary counts is unchanged, and so is when a
 * write counts (kvs.h).  The log is replayed through the same code that applies a
 * payload at once (kvs__apply_replicate), in the order received, when:
 *   - a node is declared down: every log, before the take-over reads the shard, and
 *     from then on copies are built at once (the take-over's code paths stay as they
 *     were, tested with built records);
 *   - the job is forgotten: its log, then shard_forget_job as before — unless the log
 *     shows that every record in it is final, and then the log is dropped unread, since
 *     shard_forget_job would drop every copy built from it at once.  At R > 1 that is
 *     the rule: a runner reports an end to the client only once the backups have the
 *     final status, and the client forgets a job once it has every end;
 *   - kvs_local_record(s) is called: every log (tests, status queries); the job's
 *     later payloads go to a log that is always built (its earlier records are in the
 *     shard, out of the count).
 * Replaying in arrival order is exact because, while this node sees nobody down, every
 * kept payload comes from its key's primary (its owner) on one ordered link: a payload
 * from any other sender (a primary that took over after a death this node has not
 * heard of yet) builds everything and turns the backlog off for good, and so does a
 * payload for a job forgotten here (applied at once, as before).
 *
 * "Every record final" is counted, not read: a log of inserts, appends that never make a
 * record final (PARENT, HISTORY) and swaps to a final status, with as many swaps as
 * inserts.  Each insert is a new record (a duplicate is refused by the primary and not
 * forwarded), and while nobody is down the primary forwards one final swap per record:
 * the runner's swap from READY (a repeat that answers 1 without a change is a request
 * re-sent after a death, when no log is kept).  Any other operation (a whole record, a
 * removal, a cancelling or re-opening append, a non-final swap) makes the log one that
 * is built at forget, as before.
 *
 * A log that stays unread is cold, and at 10^6 waiting tasks it is a third of a
 * daemon's memory (issue 19: 200 bytes a waiting task with its backup copy).  So the
 * node asks now and then (kvs_compact) that the chunks that were full already at its
 * last call be deflated: the payloads of one job are alike (the same job number,
 * submit time and spec bytes), and a chunk packs to about a quarter.  A chunk is
 * packed a call after it filled, so a job that ends and is forgotten within that time
 * (a NOOP run) costs no compression; a replay inflates each packed chunk in turn.
 *
 * Owns the logs (struct backlog in kvs_impl.h).  Called by kvs.c, kvs_replica.c and
 * kvs_takeover.c only.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs_impl.h"
#include "core/model/task.h"

/* The size of a log's chunks once it is past its first few (4 KiB, doubling): no copy
 * as they fill, and a few dozen for a job of 10^5 tasks. */
#define BACKLOG_CHUNK (256u * 1024)

/* A chunk's life: appended to, full (and so cold at the next kvs_compact), packed; or
 * kept as it is when deflating did not make it smaller. */
enum { CHUNK_FILLING, CHUNK_COLD, CHUNK_PACKED, CHUNK_RAW };
/* Speed over size: deflate's fastest level packs these logs nearly as well as its best. */
#define PACK_LEVEL 1

static struct backlog *find(struct kvs *kvs, uint32_t job)
{
    /* A few jobs at a time, the last one most often. */
    for (size_t i = kvs->nbacklogs; i-- > 0;)
        if (kvs->backlogs[i].job == job)
            return &kvs->backlogs[i];
    return NULL;
}

/* What a checked payload does to the log's count (the layouts are kvs.c's REPLICATE;
 * op bytes: PUT 0, APPEND 1, STATUS 2, REMOVE 3, INSERT 4). */
static void count(struct backlog *b, const uint8_t *bytes, size_t len)
{
    switch (bytes[0]) {
    case 4:
        b->records++;
        b->inserts++;
        return;
    case 0:
        b->records++;
        b->mixed = true;
        return;
    case 2: /* u8 op, u64 key, u8 status */
        if (len > 9 && task_status_final((enum task_status)bytes[9]))
            b->finals++;
        else
            b->mixed = true;
        return;
    case 1: { /* u8 op, u64 key, u8 field */
        uint8_t field = len > 9 ? bytes[9] & (uint8_t)~KVS_FIELD_REPLAY : KVS_FIELD_COUNT;
        if (field != KVS_FIELD_PARENT && field != KVS_FIELD_HISTORY)
            b->mixed = true;
        return;
    }
    default:
        b->mixed = true;
        return;
    }
}

/* Appends one payload, in the last chunk when it fits: chunks of fixed size rather than
 * one buffer, which would be copied as it doubles (megabytes a job). */
static void put(struct backlog *b, const uint8_t *bytes, size_t len)
{
    struct wbuf *last = b->nchunks ? &b->chunks[b->nchunks - 1].buf : NULL;
    if (!last || last->cap - last->len < 4 + len) {
        b->chunks = xgrow(b->chunks, &b->chunks_cap, b->nchunks + 1, sizeof *b->chunks);
        /* 4 KiB first, doubling up to BACKLOG_CHUNK: a small job keeps little. */
        size_t size = b->nchunks < 6 ? (size_t)4096 << b->nchunks : BACKLOG_CHUNK;
        b->chunks[b->nchunks] = (struct backlog_chunk){.state = CHUNK_FILLING};
        last = &b->chunks[b->nchunks++].buf;
        wbuf_init(last);
        wbuf_reserve(last, 4 + len > size ? 4 + len : size);
    }
    wbuf_put_u32(last, (uint32_t)len);
    wbuf_put(last, bytes, len);
}

static void drop_chunks(struct backlog *b)
{
    for (size_t i = 0; i < b->nchunks; i++)
        wbuf_fini(&b->chunks[i].buf);
    free(b->chunks);
    b->chunks = NULL;
    b->nchunks = b->chunks_cap = 0;
}

bool kvs__backlog_keep(struct kvs *kvs, uint32_t from, uint64_t key, const uint8_t *bytes,
                       size_t len)
{
    if (kvs->eager)
        return false;
    if (kvs->view.ndown) {
        kvs__backlog_build_all(kvs, true);
        return false;
    }
    /* Nobody down: the replicas are the owner and the next R - 1 nodes of the ring
     * (view.h), so this node is a backup when it is 1 to R - 1 places after the owner. */
    uint32_t owner = task_key_owner(key, kvs->nodes);
    uint32_t after = (kvs->self + kvs->nodes - owner) % kvs->nodes;
    uint32_t replicas = kvs->view.replicas < kvs->nodes ? kvs->view.replicas : kvs->nodes;
    if (owner != from || after == 0 || after >= replicas) {
        log_info("kvs: node %u sent a copy of %llx it is not the primary of here; building "
                 "backup copies at once from now on", from, (unsigned long long)key);
        kvs__backlog_build_all(kvs, true);
        return false;
    }
    uint32_t job = task_key_job(key);
    struct backlog *b = find(kvs, job);
    if (!b) {
        /* Late words about a job forgotten here: applied at once, as shard.h says. */
        if (shard_forgot(&kvs->shard, job))
            return false;
        kvs->backlogs = xgrow(kvs->backlogs, &kvs->backlogs_cap, kvs->nbacklogs + 1,
                              sizeof *kvs->backlogs);
        b = &kvs->backlogs[kvs->nbacklogs++];
        *b = (struct backlog){.job = job};
    }
    count(b, bytes, len);
    put(b, bytes, len);
    return true;
}

/* Applies the payloads of one chunk's bytes, in order. */
static void replay_chunk(struct kvs *kvs, struct rbuf *r)
{
    while (r->left) {
        uint32_t len = rbuf_u32(r);
        const uint8_t *p = rbuf_bytes(r, len);
        if (!p)
            break;
        struct rbuf one;
        rbuf_init(&one, p, len);
        const char *reason = NULL;
        /* Checked when kept: a failure here is this file's bug, not the sender's. */
        if (kvs__apply_replicate(kvs, &one, &reason) < 0)
            log_error("kvs: a kept replicated write does not apply: %s", reason);
    }
}

/* Applies a log's payloads in order, then frees them. */
static void replay(struct kvs *kvs, struct backlog *b)
{
    uint8_t *raw = NULL;
    for (size_t i = 0; i < b->nchunks; i++) {
        struct backlog_chunk *ch = &b->chunks[i];
        struct rbuf r;
        rbuf_init(&r, ch->buf.data, ch->buf.len);
        if (ch->state == CHUNK_PACKED) {
            raw = raw ? raw : xmalloc(BACKLOG_CHUNK);
            uLongf n = ch->raw_len;
            uint8_t *into = ch->raw_len <= BACKLOG_CHUNK ? raw : xmalloc(ch->raw_len);
            int zrc = uncompress(into, &n, ch->buf.data, ch->buf.len);
            if (zrc != Z_OK || n != ch->raw_len) {
                /* This node deflated it: not the sender's fault, and not recoverable. */
                log_error("kvs: job %u: a packed chunk of kept copies does not inflate "
                          "(zlib %d); %u bytes of them lost", b->job, zrc, ch->raw_len);
                if (into != raw)
                    free(into);
                continue;
            }
            rbuf_init(&r, into, n);
            replay_chunk(kvs, &r);
            if (into != raw)
                free(into);
            continue;
        }
        replay_chunk(kvs, &r);
    }
    free(raw);
    drop_chunks(b);
}

void kvs__backlog_forget(struct kvs *kvs, uint32_t job)
{
    struct backlog *b = find(kvs, job);
    if (!b)
        return;
    struct backlog gone = *b;
    *b = kvs->backlogs[--kvs->nbacklogs];
    if (!gone.mixed && gone.finals == gone.inserts) {
        log_debug("kvs: job %u forgotten: %zu kept copies, all final, dropped unbuilt", job,
                  gone.records);
        drop_chunks(&gone);
        return;
    }
    replay(kvs, &gone);
}

void kvs__backlog_build_all(struct kvs *kvs, bool for_good)
{
    if (for_good) {
        kvs->eager = true;
        while (kvs->nbacklogs) {
            struct backlog gone = kvs->backlogs[--kvs->nbacklogs];
            replay(kvs, &gone);
        }
        return;
    }
    /* Each log stays, emptied and marked: what comes later for its job is counted
     * without the records built now. */
    for (size_t i = 0; i < kvs->nbacklogs; i++) {
        struct backlog *b = &kvs->backlogs[i];
        struct backlog gone = *b;
        *b = (struct backlog){.job = gone.job, .mixed = true};
        replay(kvs, &gone);
    }
}

size_t kvs__backlog_records(const struct kvs *kvs)
{
    size_t n = 0;
    for (size_t i = 0; i < kvs->nbacklogs; i++)
        n += kvs->backlogs[i].records;
    return n;
}

void kvs__backlog_fini(struct kvs *kvs)
{
    for (size_t i = 0; i < kvs->nbacklogs; i++)
        drop_chunks(&kvs->backlogs[i]);
    free(kvs->backlogs);
    kvs->backlogs = NULL;
    kvs->nbacklogs = kvs->backlogs_cap = 0;
}

/* Deflates one cold chunk in place; false when that did not make it smaller (it stays as
 * it is, and is not tried again). */
static bool pack(struct backlog_chunk *ch)
{
    uLongf n = compressBound(ch->buf.len);
    uint8_t *out = xmalloc(n);
    if (compress2(out, &n, ch->buf.data, ch->buf.len, PACK_LEVEL) != Z_OK || n >= ch->buf.len) {
        free(out);
        ch->state = CHUNK_RAW;
        return false;
    }
    /* Its own allocation of the packed size: the bound is about the raw size. */
    struct wbuf packed;
    wbuf_init(&packed);
    wbuf_reserve(&packed, n);
    wbuf_put(&packed, out, n);
    free(out);
    ch->raw_len = (uint32_t)ch->buf.len;
    wbuf_fini(&ch->buf);
    ch->buf = packed;
    ch->state = CHUNK_PACKED;
    return true;
}

size_t kvs__backlog_compact(struct kvs *kvs, size_t budget, bool *more)
{
    size_t done = 0;
    *more = false;
    for (size_t i = 0; i < kvs->nbacklogs; i++) {
        struct backlog *b = &kvs->backlogs[i];
        /* The last chunk is the one appended to: never cold. */
        for (size_t k = 0; k + 1 < b->nchunks; k++) {
            struct backlog_chunk *ch = &b->chunks[k];
            if (ch->state == CHUNK_FILLING) {
                ch->state = CHUNK_COLD;
                *more = true;
            } else if (ch->state == CHUNK_COLD) {
                if (done >= budget) {
                    *more = true;
                    continue;
                }
                done += ch->buf.len;
                pack(ch);
            }
        }
    }
    return done;
}
