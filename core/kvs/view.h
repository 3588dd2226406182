/*
 * view — the metadata store's view of the membership, and where a key lives in it.
 *
 * The replicas of a key are the first R live nodes of the ring walk that starts at its
 * owner (task_key_owner): while nobody is down, the owner and the next R - 1 nodes.
 * When a replica dies the next live node of the walk joins, which is how a take-over
 * restores R.  The primary is the first replica, the first live node from the owner:
 * it applies every mutation and forwards it to the others, the backups (kvs.h).  A
 * node declared down stays down for the life of the view.
 *
 * Owns the down set.  Pure: no I/O, no clock.  Used by core/kvs/ only.
 */
#ifndef JACKDAW_KVS_VIEW_H
#define JACKDAW_KVS_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model/task.h"

/* The most replicas a key may have. */
#define KVS_MAX_REPLICAS 8u
#define VIEW_NONE UINT32_MAX

struct view {
    uint32_t nodes;
    uint32_t replicas;      /* R, 1..KVS_MAX_REPLICAS (fewer when there are fewer nodes) */
    uint32_t ndown;
    uint8_t *down;          /* owned, `nodes` flags; NULL while nobody is down */
};

void view_init(struct view *v, uint32_t nodes);
void view_fini(struct view *v);
/* Marks `node` down; false when it was already. */
bool view_set_down(struct view *v, uint32_t node);

static inline bool view_is_down(const struct view *v, uint32_t node)
{
    return v->down && node < v->nodes && v->down[node];
}

/*
 * The replicas of `key` in order, primary first, into out[KVS_MAX_REPLICAS]; returns
 * how many (0 when every node is down).  `as_up`, unless VIEW_NONE, is counted as live
 * whatever the view says: the view before that node went down.
 */
uint32_t view_replicas_as(const struct view *v, uint64_t key, uint32_t as_up, uint32_t *out);

static inline uint32_t view_replicas(const struct view *v, uint64_t key, uint32_t *out)
{
    return view_replicas_as(v, key, VIEW_NONE, out);
}

/* The first live node from the owner of `key`, or VIEW_NONE. */
uint32_t view_primary_as(const struct view *v, uint64_t key, uint32_t as_up);

/* On every operation's path: the owner itself while nobody is down. */
static inline uint32_t view_primary(const struct view *v, uint64_t key)
{
    return v->ndown ? view_primary_as(v, key, VIEW_NONE) : task_key_owner(key, v->nodes);
}

#endif
