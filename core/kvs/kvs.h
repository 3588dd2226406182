/*
 * kvs — the metadata store's client API, ZHT style: zero-hop (the owner of a key is
 * task_key_owner(key, nodes), computed locally), one shard per daemon.  The scheduler
 * and the job client reach task metadata only through these calls.
 *
 * Operations on keys this node owns run on the local shard before the call returns
 * (callbacks included); others become messages to the owner, batched by the transport
 * per peer per loop pass, and their callbacks run when the reply arrives.  Effects of
 * the store (a task became ready or was cancelled; a cancellation spreading to a
 * child) are processed from a worklist, never recursively, so a chain of a million
 * tasks cancels in constant stack.
 *
 * Owns the local shard and the table of requests awaiting replies.  Called on one loop
 * thread by core/runtime/node.c (self = its node id) and by core/client/client.c
 * (self = KVS_NO_SHARD: a client stores nothing and only inserts).
 */
#ifndef JACKDAW_KVS_H
#define JACKDAW_KVS_H

#include <stdint.h>

#include "core/base/wbuf.h"
#include "core/kvs/shard.h"
#include "core/kvs/tmd.h"

#define KVS_NO_SHARD UINT32_MAX

enum kvs_event { KVS_EVENT_READY = 0, KVS_EVENT_CANCEL = 1 };

/* What the store tells a task's holder.  `parents` lists where each parent's output
 * object is (READY only); borrowed for the call. */
struct kvs_notice {
    uint64_t key;
    uint8_t event;          /* enum kvs_event */
    uint64_t all_data_size;
    int64_t t_ready;
    uint32_t nparents;
    const struct tmd_parent *parents;
};

struct kvs_transport {
    void *ctx;
    /* Begins a message to `node` (never self); returns the payload buffer. */
    struct wbuf *(*msg_begin)(void *ctx, uint32_t node, uint16_t type, size_t *at);
    void (*msg_end)(void *ctx, uint32_t node, size_t at);
    /* The store tells this node, the holder, that a task is ready or cancelled. */
    void (*notify)(void *ctx, const struct kvs_notice *notice);
};

/*
 * Reply to lookup and cas.  status: lookup 0 found / -ENOENT; cas 1 swapped / 0 not
 * swapped / -ENOENT.  `tmd` is the record after the operation (borrowed for the call),
 * NULL when not found.
 */
typedef void (*kvs_reply_fn)(void *arg, int status, const struct tmd *tmd);

struct kvs;

struct kvs *kvs_create(uint32_t self, uint32_t nodes, const struct kvs_transport *t);
void kvs_destroy(struct kvs *kvs);
uint32_t kvs_owner(const struct kvs *kvs, uint64_t key);
/* Records in the local shard. */
size_t kvs_local_records(const struct kvs *kvs);

/* Takes over *t's arrays (it is zeroed).  -EEXIST when a local record exists. */
int kvs_insert(struct kvs *kvs, struct tmd *t);
int kvs_lookup(struct kvs *kvs, uint64_t key, kvs_reply_fn fn, void *arg);
int kvs_remove(struct kvs *kvs, uint64_t key);
/* PARENT: node ran the parent whose output `object` has `value` bytes. */
int kvs_append(struct kvs *kvs, uint64_t key, uint8_t field, uint32_t node, uint64_t value,
               uint64_t object);
/* fn may be NULL (no reply wanted). */
int kvs_cas(struct kvs *kvs, uint64_t key, uint8_t field, uint64_t expected, uint64_t desired,
            const struct tmd_run *run, kvs_reply_fn fn, void *arg);
/* The job is over and its client has the summary: every shard forgets its records
 * (shard.h, forget).  Sent to every node; nothing is answered. */
void kvs_forget_job(struct kvs *kvs, uint32_t job);

/*
 * Handles a MSG_KVS_* message from node `from`.  Returns 0, or -EBADMSG with *reason
 * set when the payload is malformed (the caller drops the peer).
 */
int kvs_handle(struct kvs *kvs, uint32_t from, uint16_t type, struct rbuf *payload,
               const char **reason);

#endif
