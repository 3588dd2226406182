/*
 * shard — see shard.h.
 */
#include "core/kvs/shard.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"

/* The map reads a record's key from its first bytes. */
_Static_assert(offsetof(struct tmd, key) == 0, "struct tmd starts with its key");

void shard_init(struct shard *s)
{
    memset(s, 0, sizeof *s);
    keymap_init(&s->records);
}

void shard_fini(struct shard *s)
{
    uint64_t key;
    void *v;
    for (size_t i = 0; (i = shard_next(s, i, &key, &v)) != 0;) {
        tmd_fini(v);
        free(v);
    }
    keymap_fini(&s->records);
}

void shard_effects_push(struct kvs_effects *fx, const struct kvs_effect *e)
{
    fx->v = xgrow(fx->v, &fx->cap, fx->len + 1, sizeof *fx->v);
    fx->v[fx->len++] = *e;
}

/* Its job was forgotten: the record goes once final and answered (shard_settle). */
static void mark(struct shard *s, struct tmd *rec)
{
    if (rec->flags & TMD_FLAG_FORGET)
        return;
    rec->flags |= TMD_FLAG_FORGET;
    s->marked++;
}

int shard_insert(struct shard *s, struct tmd *t, int64_t now)
{
    if (keymap_get(&s->records, t->key))
        return -EEXIST;
    /* A lent spec is copied after the record, in one allocation with it. */
    bool lent = t->flags & TMD_FLAG_SPEC_LENT;
    struct tmd *rec = xmalloc(sizeof *rec + (lent ? t->spec_len : 0));
    *rec = *t;
    if (lent) {
        rec->spec = (uint8_t *)(rec + 1);
        memcpy(rec->spec, t->spec, t->spec_len);
    }
    memset(t, 0, sizeof *t);
    shard_new_record(rec, now);
    keymap_put(&s->records, rec);
    return 0;
}

void shard_new_record(struct tmd *rec, int64_t now)
{
    /* A new record, even of a reused job number, starts clean. */
    rec->flags &= (uint8_t)~TMD_FLAG_FORGET;
    if (rec->num_wait_parent > rec->num_parents)
        rec->num_wait_parent = rec->num_parents;
    rec->status = rec->num_wait_parent ? TASK_WAITING : TASK_READY;
    if (!rec->t_submit)
        rec->t_submit = now;
    if (!rec->num_wait_parent && !rec->t_ready)
        rec->t_ready = now;
}

/* shard_forgot for shard_put, which a backup calls for every record it is sent: the
 * ring is scanned once per run of copies of one job, not once per copy.  nforgotten
 * changes with every forget, which makes the memo stale. */
static bool put_forgotten(struct shard *s, uint32_t job)
{
    if (job != s->memo_job || s->nforgotten != s->memo_nforgotten) {
        s->memo_job = job;
        s->memo_nforgotten = s->nforgotten;
        s->memo_forgot = shard_forgot(s, job);
    }
    return s->memo_forgot;
}

void shard_put(struct shard *s, struct tmd *t)
{
    struct tmd *rec = xmalloc(sizeof *rec);
    *rec = *t;
    memset(t, 0, sizeof *t);
    rec->flags &= (uint8_t)~TMD_FLAG_FORGET;
    struct tmd *old = keymap_put(&s->records, rec);
    /* The mark is this shard's, never sent: a copy that arrives after the forget (a
     * take-over's copy, a forward overtaken by the client's FORGET) is marked here, or
     * not kept when final, as shard_forget_job would have done.  Hazard: a new job that
     * drew the number of one of the last SHARD_FORGOTTEN_JOBS forgotten here (numbers
     * are random 31-bit, so about once in 8 million jobs) has its backup copies treated
     * so too, and then a backup drops its final records while the primary keeps them. */
    bool forgotten = put_forgotten(s, task_key_job(rec->key));
    if (old) {
        if (old->flags & TMD_FLAG_FORGET) {
            forgotten = true;
            s->marked--;
        }
        tmd_fini(old);
        free(old);
        s->frees++;
    }
    if (!forgotten)
        return;
    if (task_status_final((enum task_status)rec->status))
        shard_remove(s, rec->key);
    else
        mark(s, rec);
}

struct tmd *shard_get(const struct shard *s, uint64_t key)
{
    return keymap_get(&s->records, key);
}

int shard_remove(struct shard *s, uint64_t key)
{
    struct tmd *rec = keymap_del(&s->records, key);
    if (!rec)
        return -ENOENT;
    if (rec->flags & TMD_FLAG_FORGET)
        s->marked--;
    tmd_fini(rec);
    free(rec);
    s->frees++;
    return 0;
}

static void cancel(struct tmd *rec, int64_t now, struct kvs_effects *fx)
{
    rec->status = TASK_CANCELLED;
    tmd_late_mut(rec)->t_end = now;
    shard_effects_push(fx, &(struct kvs_effect){.kind = KVS_EFFECT_CANCEL, .node = rec->holder,
                                                .key = rec->key});
    for (uint32_t i = 0; i < rec->num_children; i++)
        shard_effects_push(fx, &(struct kvs_effect){.kind = KVS_EFFECT_CANCEL_CHILD,
                                                    .key = tmd_child(rec, i)});
}

/* Whether parent `object` was counted already.  A linear scan, paid only by records a
 * re-issued completion reached (TMD_FLAG_REPLAYED). */
static bool parent_counted(const struct tmd *rec, uint64_t object)
{
    const struct tmd_parent *list = tmd_late(rec)->parent_list;
    for (uint32_t i = 0; i < tmd_parents_done(rec); i++)
        if (list[i].object == object)
            return true;
    return false;
}

static void moved(struct tmd *rec, uint32_t node)
{
    /* The first move records where the task was first, too: a death must tell which
     * tasks came from the dead node (kvs_moved_from). */
    struct tmd_late *l = tmd_late_mut(rec);
    if (l->num_history == 0 && rec->holder != node) {
        l->history = xmalloc(sizeof *l->history);
        l->history[l->num_history++] = rec->holder;
    }
    rec->holder = node;
    if (l->num_history == TMD_MAX_HISTORY)
        return;
    l->history = xrealloc(l->history, (l->num_history + 1) * sizeof *l->history);
    l->history[l->num_history++] = node;
}

int shard_append(struct shard *s, uint64_t key, uint8_t field, uint32_t node, uint64_t value,
                 uint64_t object, int64_t now, struct kvs_effects *fx)
{
    struct tmd *rec = keymap_get(&s->records, key);
    if (!rec)
        return -ENOENT;
    bool replay = field & KVS_FIELD_REPLAY;
    switch (field & (uint8_t)~KVS_FIELD_REPLAY) {
    case KVS_FIELD_PARENT:
        if (replay)
            rec->flags |= TMD_FLAG_REPLAYED;
        if (rec->status != TASK_WAITING || rec->num_wait_parent == 0)
            return 0;
        if ((rec->flags & TMD_FLAG_REPLAYED) && parent_counted(rec, object))
            return 0;
        uint32_t done = tmd_parents_done(rec);
        struct tmd_late *l = tmd_late_mut(rec);
        l->parent_list = xrealloc(l->parent_list, (done + 1) * sizeof *l->parent_list);
        l->parent_list[done] = (struct tmd_parent){.object = object, .bytes = value, .node = node};
        l->all_data_size += value;
        rec->num_wait_parent--;
        if (rec->num_wait_parent == 0) {
            rec->status = TASK_READY;
            rec->t_ready = now;
            shard_effects_push(fx, &(struct kvs_effect){.kind = KVS_EFFECT_READY,
                                                        .node = rec->holder, .key = key,
                                                        .value = l->all_data_size,
                                                        .when = now});
        }
        return 0;
    case KVS_FIELD_PARENT_FAILED:
        if (rec->status == TASK_WAITING)
            cancel(rec, now, fx);
        return 0;
    case KVS_FIELD_REMOVE:
        if (task_status_final((enum task_status)rec->status))
            return shard_remove(s, key);
        cancel(rec, now, fx);
        return 0;
    case KVS_FIELD_HISTORY:
        /* Said again by the holder itself (after a primary's death): already so. */
        if (rec->holder == node && tmd_late(rec)->num_history &&
            tmd_late(rec)->history[tmd_late(rec)->num_history - 1] == node)
            return 0;
        moved(rec, node);
        return 0;
    case KVS_FIELD_RESUBMIT:
        if (task_status_final((enum task_status)rec->status) || tmd_late(rec)->attempt != value)
            return 0;
        tmd_late_mut(rec)->attempt++;
        if (rec->status == TASK_RUNNING)
            rec->status = TASK_READY;
        moved(rec, node);
        return 1;
    case KVS_FIELD_REOPEN:
        if (rec->status != TASK_DONE || tmd_late(rec)->runner != node ||
            tmd_late(rec)->attempt != value)
            return 0;
        rec->status = TASK_READY;
        tmd_late_mut(rec)->attempt++;
        rec->flags |= TMD_FLAG_REOPENED;
        moved(rec, node);
        return 1;
    default:
        return -EINVAL;
    }
}

static void set_status(struct tmd *rec, uint8_t status, const struct tmd_run *run)
{
    rec->status = status;
    if (run && task_status_final((enum task_status)status)) {
        struct tmd_late *l = tmd_late_mut(rec);
        l->runner = run->node;
        l->t_start = run->t_start;
        l->t_end = run->t_end;
        l->data_size = run->data_size;
    }
}

int shard_cas(struct shard *s, uint64_t key, uint8_t field, uint64_t expected, uint64_t desired,
              const struct tmd_run *run, uint32_t from, struct tmd **found)
{
    struct tmd *rec = keymap_get(&s->records, key);
    if (found)
        *found = rec;
    if (!rec)
        return -ENOENT;
    if (field != KVS_FIELD_STATUS || desired >= TASK_STATUS_COUNT)
        return -EINVAL;
    if (run && task_status_final((enum task_status)desired)) {
        /* The runner asks again what was done already: the first answer was lost with
         * the primary that gave it. */
        const struct tmd_late *l = tmd_late(rec);
        if (rec->status == desired && run->node == from && l->runner == run->node &&
            l->attempt == run->attempt && l->t_start == run->t_start && l->t_end == run->t_end)
            return 1;
        if (run->attempt != l->attempt)
            return -ESTALE;
    }
    if (rec->status != expected)
        return 0;
    set_status(rec, (uint8_t)desired, run);
    return 1;
}

int shard_set_status(struct shard *s, uint64_t key, uint8_t status, const struct tmd_run *run)
{
    struct tmd *rec = keymap_get(&s->records, key);
    if (!rec)
        return -ENOENT;
    set_status(rec, status, run);
    return 0;
}

size_t shard_forget_job(struct shard *s, uint32_t job)
{
    s->forgotten[s->nforgotten++ % SHARD_FORGOTTEN_JOBS] = job;
    /* Keys first, removals after: keymap_del's backward shift may move a record the
     * iteration has not reached into a slot it has passed. */
    uint64_t *drop = NULL;
    size_t n = 0, cap = 0;
    uint64_t key;
    void *v;
    for (size_t i = 0; (i = shard_next(s, i, &key, &v)) != 0;) {
        struct tmd *rec = v;
        if (task_key_job(key) != job)
            continue;
        /* A marked final record waits for an answer (shard_forget_later). */
        if (task_status_final((enum task_status)rec->status) && !(rec->flags & TMD_FLAG_FORGET)) {
            drop = xgrow(drop, &cap, n + 1, sizeof *drop);
            drop[n++] = key;
        } else {
            mark(s, rec);
        }
    }
    for (size_t i = 0; i < n; i++)
        shard_remove(s, drop[i]);
    free(drop);
    return n;
}

void shard_forget_later(struct shard *s, uint64_t key)
{
    struct tmd *rec = keymap_get(&s->records, key);
    if (rec)
        mark(s, rec);
}

void shard_settle(struct shard *s, uint64_t key)
{
    /* The common case, every status swap of a running job, costs one comparison. */
    if (!s->marked)
        return;
    struct tmd *rec = keymap_get(&s->records, key);
    if (rec && (rec->flags & TMD_FLAG_FORGET) && task_status_final((enum task_status)rec->status))
        shard_remove(s, key);
}

bool shard_forgot(const struct shard *s, uint32_t job)
{
    size_t n = s->nforgotten < SHARD_FORGOTTEN_JOBS ? (size_t)s->nforgotten : SHARD_FORGOTTEN_JOBS;
    for (size_t i = 0; i < n; i++)
        if (s->forgotten[i] == job)
            return true;
    return false;
}
