/*
 * kvs_takeover — what a store does about a death (kvs.h, "Death"): take over the dead
 * primary's records, restore R, re-issue what may have been lost with it, send again
 * the requests it never answered, let in the messages that waited for this node to
 * learn of the death, and list the tasks the dead node held.
 *
 * Everything re-issued is idempotent by the state of the record that receives it, not
 * by remembering messages: a notice for a task that is not waiting is ignored by its
 * holder, a parent already counted is not counted again (shard.h), a cancellation of
 * what is not waiting does nothing.  So re-issuing too much is only traffic; the rule
 * is to re-issue whatever the dead node may have carried and not yet delivered.
 *
 * Assumed of the membership protocol: what a node sent before it died arrives before
 * its death is declared (a failure timeout later), and a node declared dead is never
 * heard again (kvs_handle drops its messages).  A death costs one pass over the shard
 * and, in messages, the records taken over or given a new backup plus the completions
 * of the finished tasks the dead node ran or whose children it was primary for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs_impl.h"
#include "core/model/task.h"

/* Messages held for keys this node is not primary for; past this, the sender is wrong
 * rather than early. */
#define PARK_MAX_BYTES (64u << 20)

int kvs__park(struct kvs *kvs, uint32_t from, uint16_t type, const struct rbuf *start,
              const char **reason)
{
    if (kvs->parked_bytes + start->left > PARK_MAX_BYTES) {
        *reason = "too many metadata messages for keys this node is not primary for";
        return -EBADMSG;
    }
    if (!kvs->nparked)
        log_info("kvs: holding messages for keys another node is primary for here, until "
                 "this node learns of the death its senders know of");
    kvs->parked = xgrow(kvs->parked, &kvs->parked_cap, kvs->nparked + 1, sizeof *kvs->parked);
    struct parked *p = &kvs->parked[kvs->nparked++];
    p->from = from;
    p->type = type;
    p->len = start->left;
    p->bytes = xmalloc(p->len ? p->len : 1);
    memcpy(p->bytes, start->p, p->len);
    kvs->parked_bytes += p->len;
    return 0;
}

/* Handles again every parked message: those this node is primary for now run, the
 * others park again, those from nodes now down are dropped. */
static void unpark(struct kvs *kvs)
{
    struct parked *list = kvs->parked;
    size_t n = kvs->nparked;
    kvs->parked = NULL;
    kvs->nparked = kvs->parked_cap = kvs->parked_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        struct rbuf r;
        rbuf_init(&r, list[i].bytes, list[i].len);
        const char *reason = NULL;
        if (kvs_handle(kvs, list[i].from, list[i].type, &r, &reason) < 0)
            log_warn("kvs: held message from node %u dropped: %s", list[i].from,
                     reason ? reason : "refused");
        free(list[i].bytes);
    }
    free(list);
}

/* The completion of finished record `rec` to those of its children `filter` selects. */
static void reissue_children(struct kvs *kvs, const struct tmd *rec, bool (*filter)(
                                 const struct kvs *, uint64_t child, uint32_t arg),
                             uint32_t arg)
{
    uint8_t field = rec->status == TASK_DONE ? KVS_FIELD_PARENT : KVS_FIELD_PARENT_FAILED;
    uint32_t node = rec->status == TASK_CANCELLED ? kvs->self : tmd_late(rec)->runner;
    uint64_t value = rec->status == TASK_DONE ? tmd_late(rec)->data_size : 0;
    uint64_t object = rec->status == TASK_DONE ? rec->key : 0;
    /* Keys first: appending to a local child may change nothing here, but the record
     * is borrowed and the loop must not depend on it. */
    uint32_t n = rec->num_children;
    uint64_t one, *children = n > 1 ? xmalloc(n * sizeof *children) : &one;
    for (uint32_t i = 0; i < n; i++)
        children[i] = tmd_child(rec, i);
    for (uint32_t i = 0; i < n; i++)
        if (!filter || filter(kvs, children[i], arg))
            kvs__append_any(kvs, children[i], field | KVS_FIELD_REPLAY, node, value, object);
    if (n > 1)
        free(children);
}

/* The runner may have sent the completion to a node dead in this view. */
static bool rerouted(const struct kvs *kvs, uint64_t child, uint32_t unused)
{
    (void)unused;
    return view_primary(&kvs->view, child) != task_key_owner(child, kvs->nodes);
}

void kvs__reissue_if_rerouted(struct kvs *kvs, const struct tmd *rec)
{
    if (rec && rec->num_children)
        reissue_children(kvs, rec, rerouted, 0);
}

/* The child's primary was `dead` just before its death. */
static bool was_on(const struct kvs *kvs, uint64_t child, uint32_t dead)
{
    return view_primary_as(&kvs->view, child, dead) == dead;
}

/* A record taken over from a dead primary: whatever it owed anyone, owed again. */
static void reissue_all(struct kvs *kvs, const struct tmd *rec)
{
    switch (rec->status) {
    case TASK_READY:
        /* Parentless tasks start where they are submitted: no notice was ever due. */
        if (rec->num_parents)
            kvs__notify(kvs, rec->holder, rec->key, KVS_EVENT_READY, tmd_late(rec)->all_data_size,
                        rec->t_ready);
        break;
    case TASK_CANCELLED:
        kvs__notify(kvs, rec->holder, rec->key, KVS_EVENT_CANCEL, 0, 0);
        reissue_children(kvs, rec, NULL, 0);
        break;
    case TASK_DONE:
    case TASK_FAILED:
        reissue_children(kvs, rec, NULL, 0);
        break;
    default:
        break;
    }
}

struct visit {
    uint64_t key;
    uint8_t took_over;
};

static bool in(const uint32_t *set, uint32_t n, uint32_t node)
{
    for (uint32_t i = 0; i < n; i++)
        if (set[i] == node)
            return true;
    return false;
}

/* The records this store is primary for now and that the death concerns: taken over,
 * with a new backup, or finished (their children may have lived on the dead node). */
static struct visit *records_to_visit(struct kvs *kvs, uint32_t dead, size_t *count)
{
    struct visit *list = NULL;
    size_t n = 0, cap = 0;
    uint64_t key;
    void *v;
    for (size_t i = 0; (i = shard_next(&kvs->shard, i, &key, &v)) != 0;) {
        const struct tmd *rec = v;
        uint32_t now[KVS_MAX_REPLICAS], before[KVS_MAX_REPLICAS];
        uint32_t nn = view_replicas(&kvs->view, key, now);
        if (!nn || now[0] != kvs->self)
            continue;
        uint32_t nb = view_replicas_as(&kvs->view, key, dead, before);
        bool took = before[0] != kvs->self;
        bool new_backup = false;
        for (uint32_t j = 1; j < nn; j++)
            new_backup |= !in(before, nb, now[j]);
        if (took || new_backup || (task_status_final((enum task_status)rec->status) &&
                                   rec->num_children)) {
            list = xgrow(list, &cap, n + 1, sizeof *list);
            list[n++] = (struct visit){.key = key, .took_over = took};
        }
    }
    *count = n;
    return list;
}

int kvs_set_down(struct kvs *kvs, uint32_t dead)
{
    if (dead >= kvs->nodes || dead == kvs->self)
        return -EINVAL;
    if (!view_set_down(&kvs->view, dead))
        return 0;
    /* The take-over reads built records; copies are built at once from now on. */
    kvs__backlog_build_all(kvs, true);
    size_t n = 0;
    struct visit *list = kvs->self == KVS_NO_SHARD ? NULL : records_to_visit(kvs, dead, &n);
    if (n)
        log_info("kvs: node %u is down: %zu records to take over, re-replicate or re-issue",
                 dead, n);
    /* First the copies, so that the backups hold each record before anything else is
     * forwarded about it. */
    for (size_t i = 0; i < n; i++) {
        const struct tmd *rec = shard_get(&kvs->shard, list[i].key);
        log_debug("kvs: down %u: record %llx status %u holder %u took over %d", dead,
                  (unsigned long long)rec->key, rec->status, rec->holder, list[i].took_over);
        uint32_t now[KVS_MAX_REPLICAS], before[KVS_MAX_REPLICAS];
        uint32_t nn = view_replicas(&kvs->view, rec->key, now);
        uint32_t nb = view_replicas_as(&kvs->view, rec->key, dead, before);
        for (uint32_t j = 1; j < nn; j++)
            if (list[i].took_over || !in(before, nb, now[j]))
                kvs__forward_put_to(kvs, now[j], rec);
    }
    /* Actions that waited for the dead backup wait for its successor instead. */
    kvs__renew_needs(kvs, dead);
    kvs__release(kvs);
    for (size_t i = 0; i < n; i++) {
        /* A re-issued cancellation of a local child may have cancelled this one: the
         * record is read again, and it can only have moved on to a final status. */
        const struct tmd *rec = shard_get(&kvs->shard, list[i].key);
        if (!rec)
            continue;
        if (list[i].took_over)
            reissue_all(kvs, rec);
        else if (task_status_final((enum task_status)rec->status))
            /* A dead runner may have died between its completion and telling the
             * children; otherwise only the children whose primary died may have lost
             * what it told them. */
            reissue_children(kvs, rec, tmd_late(rec)->runner == dead ? NULL : was_on, dead);
    }
    free(list);

    /* Requests the dead node never answered. */
    uint32_t *reqs = NULL;
    size_t nreqs = 0, cap = 0;
    uint64_t req;
    void *v;
    for (size_t i = 0; (i = u64map_next(&kvs->pending, i, &req, &v)) != 0;) {
        if (((struct pending *)v)->to != dead)
            continue;
        reqs = xgrow(reqs, &cap, nreqs + 1, sizeof *reqs);
        reqs[nreqs++] = (uint32_t)req;
    }
    for (size_t i = 0; i < nreqs; i++) {
        struct pending *p = u64map_del(&kvs->pending, reqs[i]);
        if (p)
            kvs__resend(kvs, reqs[i], p);
    }
    free(reqs);
    if (kvs->nparked)
        unpark(kvs);
    kvs__drain(kvs);
    return 0;
}

static bool orphan(const struct kvs *kvs, const struct tmd *rec, uint32_t dead)
{
    bool held = dead == KVS_NO_SHARD ? view_is_down(&kvs->view, rec->holder) : rec->holder == dead;
    return held && !task_status_final((enum task_status)rec->status);
}

/* Not final, held by a live node, and its last move came from `dead`. */
static bool moved_from(const struct kvs *kvs, const struct tmd *rec, uint32_t dead)
{
    const struct tmd_late *l = tmd_late(rec);
    return !task_status_final((enum task_status)rec->status) && l->num_history >= 2 &&
           l->num_history < TMD_MAX_HISTORY && l->history[l->num_history - 2] == dead &&
           rec->holder != dead && !view_is_down(&kvs->view, rec->holder);
}

/*
 * Calls fn for the records this store is primary for that `pick` chooses, as they are
 * at the moment of the call: the keys are taken first, since fn may resubmit, and a
 * local resubmission may in principle change other records; each is read again.
 */
static int each_primary(struct kvs *kvs, uint32_t dead,
                        bool (*pick)(const struct kvs *, const struct tmd *, uint32_t),
                        kvs_orphan_fn fn, void *arg)
{
    uint64_t *keys = NULL;
    size_t n = 0, cap = 0;
    uint64_t key;
    void *v;
    for (size_t i = 0; (i = shard_next(&kvs->shard, i, &key, &v)) != 0;) {
        if (!pick(kvs, v, dead) || !kvs__is_primary(kvs, key))
            continue;
        keys = xgrow(keys, &cap, n + 1, sizeof *keys);
        keys[n++] = key;
    }
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        const struct tmd *rec = shard_get(&kvs->shard, keys[i]);
        if (!rec || !pick(kvs, rec, dead))
            continue;
        log_debug("kvs: %llx (status %u, holder %u, attempt %u) for node %u's death",
                  (unsigned long long)rec->key, rec->status, rec->holder, tmd_late(rec)->attempt, dead);
        fn(arg, rec);
        count++;
    }
    free(keys);
    return count;
}

int kvs_moved_from(struct kvs *kvs, uint32_t dead, kvs_orphan_fn fn, void *arg)
{
    if (dead >= kvs->nodes || !view_is_down(&kvs->view, dead))
        return -EINVAL;
    return each_primary(kvs, dead, moved_from, fn, arg);
}

int kvs_orphans(struct kvs *kvs, uint32_t dead, kvs_orphan_fn fn, void *arg)
{
    if (dead != KVS_NO_SHARD && !view_is_down(&kvs->view, dead))
        return -EINVAL;
    return each_primary(kvs, dead, orphan, fn, arg);
}
