/*
 * waitq — the node's WaitQ (DAWS): the tasks it holds whose parents have not all ended,
 * kept as their wire encoding rather than as decoded tasks.
 *
 * A daemon holds one entry per waiting task, and at 10^6 waiting tasks that is most of
 * its memory (issue 19: 200 bytes a waiting task, every structure included).  A decoded
 * task is a 152-byte struct and its arrays; a waiting task is only ever looked up, and
 * decoded once, when its last parent ends.  So an entry is the proto_put_task bytes:
 * without the key (the map has it) and in the map's value itself when they fit in 7
 * bytes — a noop or a command-less task with a few parents: kind, flags, mask and the
 * parent count — otherwise in one allocation of their own.
 *
 * Owns the entries, not the tasks given to it or taken from it.  Called by the node on
 * its loop thread: node_client.c (submits), node_member.c (hand-ons), node_task.c
 * (readiness), node.c (counts, teardown).
 */
#ifndef JACKDAW_RUNTIME_WAITQ_H
#define JACKDAW_RUNTIME_WAITQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/u64map.h"

struct ntask;

struct waitq {
    struct u64map map;      /* key -> entry (waitq.c) */
};

void waitq_init(struct waitq *q);
void waitq_fini(struct waitq *q);

static inline size_t waitq_len(const struct waitq *q)
{
    return u64map_len(&q->map);
}

static inline bool waitq_has(const struct waitq *q, uint64_t key)
{
    return u64map_get(&q->map, key) != NULL;
}

/* Keeps the task `bytes` encode (proto_put_task, its key first: `len` >= 8); the caller
 * has decoded them already, so they are well formed.  Replaces an entry of the key. */
void waitq_put_bytes(struct waitq *q, const uint8_t *bytes, size_t len);
/* Keeps a decoded task (encoded here) and frees it. */
void waitq_put(struct waitq *q, struct ntask *t);
/* The task of `key`, decoded and out of the queue; NULL when it is not here. */
struct ntask *waitq_take(struct waitq *q, uint64_t key);
/* A held task's attempt becomes `attempt` (a take-over handed it on as a new one). */
void waitq_set_attempt(struct waitq *q, uint64_t key, uint32_t attempt);

#endif
