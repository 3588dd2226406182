/*
 * fuzz_kvs — libFuzzer harness for the metadata store's message handler (kvs_handle),
 * which decodes every MSG_KVS_* payload a peer sends, records included, and for the
 * store's reaction to deaths.  Built by `make fuzz` into build/fuzz/fuzz_kvs:
 *
 *   build/fuzz/fuzz_kvs -max_total_time=60
 *
 * The input drives three stores of a four-node cluster (node 3 is outside, a source
 * of messages only): byte 0 picks R (1 to 3); then a sequence of steps, each a byte
 * saying what to do: hand a message (the next byte: its type in the KVS range and its
 * sender, then a u16 length and the payload) to one store, declare a node down on one
 * store, list its orphans, flush its acknowledgements, or make a local request.
 * Messages the stores send are dropped: what is checked is that no input, however
 * hostile, crashes a store, leaks, or trips the sanitizers, and that a refusal always
 * comes with a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/wbuf.h"
#include "core/kvs/kvs.h"
#include "core/model/task.h"
#include "core/net/proto.h"

#define NODES 4
#define STORES 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct wbuf sink;

static struct wbuf *t_begin(void *ctx, uint32_t node, uint16_t type, size_t *at)
{
    (void)ctx, (void)node, (void)type;
    wbuf_reset(&sink);
    *at = 0;
    return &sink;
}

static void t_end(void *ctx, uint32_t node, size_t at)
{
    (void)ctx, (void)node, (void)at;
}

static void t_notify(void *ctx, const struct kvs_notice *n)
{
    (void)ctx;
    /* The parents handed out must be readable. */
    volatile uint64_t sum = 0;
    for (uint32_t i = 0; i < n->nparents; i++)
        sum += n->parents[i].object + n->parents[i].bytes + n->parents[i].node;
}

static void on_reply(void *arg, int status, const struct tmd *t)
{
    (void)arg;
    if (status >= 0 && !t)
        abort();
}

static void on_orphan(void *arg, const struct tmd *rec)
{
    struct kvs *kvs = arg;
    kvs_resubmit(kvs, rec->key, rec->attempt, (rec->holder + 1) % NODES);
}

static void on_barrier(void *arg)
{
    (void)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint32_t self[STORES];
    static int quiet;
    if (!quiet) {
        log_set_level(LOG_LEVEL_OFF);
        quiet = 1;
    }
    if (size < 1)
        return 0;
    struct kvs *kvs[STORES];
    for (uint32_t i = 0; i < STORES; i++) {
        self[i] = i;
        struct kvs_transport t = {.ctx = &self[i], .msg_begin = t_begin, .msg_end = t_end,
                                  .notify = t_notify};
        kvs[i] = kvs_create(i, NODES, &t);
        kvs_set_replicas(kvs[i], 1 + data[0] % 3);
    }
    struct rbuf in;
    rbuf_init(&in, data + 1, size - 1);
    while (in.left) {
        uint8_t step = rbuf_u8(&in);
        struct kvs *k = kvs[(step >> 4) % STORES];
        switch (step & 0x0f) {
        case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: {
            uint8_t what = rbuf_u8(&in);
            uint16_t len = rbuf_u16(&in);
            const uint8_t *payload = rbuf_bytes(&in, len);
            if (!payload)
                break;
            uint16_t type = (uint16_t)(PROTO_RANGE_FIRST(PROTO_RANGE_KVS) + 1 + (what & 0x0f));
            uint32_t from = (what >> 4) % (NODES + 1);
            struct rbuf r;
            rbuf_init(&r, payload, len);
            const char *reason = NULL;
            if (kvs_handle(k, from == NODES ? KVS_NO_SHARD : from, type, &r, &reason) < 0 &&
                !reason)
                abort();
            break;
        }
        case 8:
            kvs_set_down(k, rbuf_u8(&in) % NODES);
            break;
        case 9:
            kvs_orphans(k, KVS_NO_SHARD, on_orphan, k);
            break;
        case 10:
            kvs_flush(k);
            break;
        case 11: {
            uint64_t key = task_key(1, rbuf_u8(&in));
            struct tmd_run run = {.node = (step >> 4) % STORES, .attempt = rbuf_u8(&in) % 2};
            kvs_cas(k, key, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_reply, NULL);
            break;
        }
        case 12:
            kvs_lookup(k, task_key(1, rbuf_u8(&in)), on_reply, NULL);
            break;
        case 13: {
            uint64_t child = task_key(1, rbuf_u8(&in));
            struct tmd t = {.key = task_key(1, rbuf_u8(&in)), .num_parents = rbuf_u8(&in) % 3,
                            .holder = rbuf_u8(&in) % NODES};
            t.num_wait_parent = t.num_parents;
            tmd_set_children(&t, &child, 1);
            if (kvs_insert(k, &t) < 0)
                tmd_fini(&t);
            break;
        }
        case 14:
            kvs_append(k, task_key(1, rbuf_u8(&in)), (uint8_t)(1 + rbuf_u8(&in) % 5),
                       rbuf_u8(&in) % NODES, 1, task_key(1, rbuf_u8(&in)));
            break;
        default:
            kvs_barrier(k, on_barrier, NULL);
            break;
        }
    }
    for (uint32_t i = 0; i < STORES; i++)
        kvs_destroy(kvs[i]);
    return 0;
}
