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
 *   - the job is forgotten: its log, then shard_forget_job as before;
 *   - kvs_local_record(s) is called: every log (tests, status queries).
 * Replaying in arrival order is exact because, while this node sees nobody down, every
 * kept payload comes from its key's primary (its owner) on one ordered link: a payload
 * from any other sender (a primary that took over after a death this node has not
 * heard of yet) builds everything and turns the backlog off for good, and so does a
 * payload for a job forgotten here (applied at once, as before).
 *
 * Owns the logs (struct backlog in kvs_impl.h).  Called by kvs.c, kvs_replica.c and
 * kvs_takeover.c only.
 */
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs_impl.h"
#include "core/model/task.h"

static struct backlog *find(struct kvs *kvs, uint32_t job)
{
    /* A few jobs at a time, the last one most often. */
    for (size_t i = kvs->nbacklogs; i-- > 0;)
        if (kvs->backlogs[i].job == job)
            return &kvs->backlogs[i];
    return NULL;
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
    uint32_t reps[KVS_MAX_REPLICAS];
    uint32_t n = view_replicas(&kvs->view, key, reps);
    bool backup = false;
    for (uint32_t i = 1; i < n; i++)
        backup |= reps[i] == kvs->self;
    if (!n || reps[0] != from || !backup) {
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
        b->job = job;
        b->records = 0;
        wbuf_init(&b->bytes);
    }
    /* The op byte: PUT (0) and INSERT (4) bring a record (kvs_replica.c). */
    b->records += bytes[0] == 0 || bytes[0] == 4;
    wbuf_put_u32(&b->bytes, (uint32_t)len);
    wbuf_put(&b->bytes, bytes, len);
    return true;
}

static void replay(struct kvs *kvs, struct wbuf *bytes)
{
    struct rbuf r;
    rbuf_init(&r, bytes->data, bytes->len);
    while (r.left) {
        uint32_t len = rbuf_u32(&r);
        const uint8_t *p = rbuf_bytes(&r, len);
        if (!p)
            break;
        struct rbuf one;
        rbuf_init(&one, p, len);
        const char *reason = NULL;
        /* Checked when kept: a failure here is this file's bug, not the sender's. */
        if (kvs__apply_replicate(kvs, &one, &reason) < 0)
            log_error("kvs: a kept replicated write does not apply: %s", reason);
    }
    wbuf_fini(bytes);
}

void kvs__backlog_build(struct kvs *kvs, uint32_t job)
{
    struct backlog *b = find(kvs, job);
    if (!b)
        return;
    struct wbuf bytes = b->bytes;
    *b = kvs->backlogs[--kvs->nbacklogs];
    replay(kvs, &bytes);
}

void kvs__backlog_build_all(struct kvs *kvs, bool for_good)
{
    if (for_good)
        kvs->eager = true;
    while (kvs->nbacklogs) {
        struct wbuf bytes = kvs->backlogs[--kvs->nbacklogs].bytes;
        replay(kvs, &bytes);
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
        wbuf_fini(&kvs->backlogs[i].bytes);
    free(kvs->backlogs);
    kvs->backlogs = NULL;
    kvs->nbacklogs = kvs->backlogs_cap = 0;
}
