/*
 * fuzz — what the harnesses of tests/fuzz share with the seed writer (seeds.c): the
 * check that aborts, and the layout of the structured inputs the handshake, metadata
 * store and parts harnesses read, so that seeds.c writes inputs they understand.
 * README.md in this folder says how the harnesses are built, run and replayed.
 */
#ifndef JACKDAW_TEST_FUZZ_H
#define JACKDAW_TEST_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/net/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise is a crash, which libFuzzer keeps and the replay reports. */
static inline void check(int ok)
{
    if (!ok)
        abort();
}

/* Logs cost the fuzzers most of their speed: off unless FUZZ_LOG names a level (the
 * replay in `make fuzz-replay` sets debug, so that every log line a hostile input can
 * cause is formatted once under the sanitizers). */
static inline void fuzz_logs(void)
{
    /* Once per process: a harness calls it on every input. */
    static bool set;
    if (set)
        return;
    set = true;
    const char *level = getenv("FUZZ_LOG");
    int parsed = level ? log_level_parse(level) : LOG_LEVEL_OFF;
    log_set_level(parsed < 0 ? LOG_LEVEL_DEBUG : (enum log_level)parsed);
}

/* ---- fuzz_handshake ----------------------------------------------------------------
 * Input: one flags byte, then the bytes the peer sends, as conn.c reads them.  The key
 * and both nonces are fixed so that seeds can hold valid MACs. */
enum {
    FUZZ_HS_CLIENT = 1, /* this side connected out: the peer is a server */
    FUZZ_HS_FORGE = 2,  /* RESPONSE and ACCEPT get the right MAC before they are checked */
};

static inline void fuzz_hs_key(struct auth_key *key)
{
    for (size_t i = 0; i < sizeof key->bytes; i++)
        key->bytes[i] = (uint8_t)(0x5a ^ i);
}

static inline void fuzz_hs_nonces(uint8_t server[AUTH_NONCE_BYTES],
                                  uint8_t client[AUTH_NONCE_BYTES])
{
    for (size_t i = 0; i < AUTH_NONCE_BYTES; i++) {
        server[i] = (uint8_t)(0x11 + i);
        client[i] = (uint8_t)(0xc0 - i);
    }
}

/* ---- fuzz_kvs and fuzz_parts -------------------------------------------------------
 * Input: a few setup bytes, then records of [op u8][from u8][len u16 LE][len bytes];
 * a length past the end takes what is left.  The op picks what happens (the tables
 * below); `from` is reduced to a valid sender. */
#define FUZZ_RECORD_HEADER 4u

/* fuzz_kvs: setup bytes [self u8][nodes u8]; self >= nodes makes a client's store;
 * nodes = 1 + byte % 8, replicas = 1 + (byte / 8) % 3. */
enum fuzz_kvs_op {
    FUZZ_KVS_MSG = 0,        /* payload: u8 type low byte, then the message's payload */
    FUZZ_KVS_INSERT = 1,     /* payload: a tmd (tmd_put), inserted through the API */
    FUZZ_KVS_LOOKUP = 2,     /* payload: u64 key */
    FUZZ_KVS_CAS = 3,        /* payload: u64 key, u8 expected, u8 desired */
    FUZZ_KVS_APPEND = 4,     /* payload: u64 key, u8 field, u32 node, u64 value */
    FUZZ_KVS_REMOVE = 5,     /* payload: u64 key */
    FUZZ_KVS_DOWN = 6,       /* payload: u8 node: declared dead (kvs_set_down) */
    FUZZ_KVS_ORPHANS = 7,    /* payload: u8 pick: each orphan resubmitted to a live node */
    FUZZ_KVS_FLUSH = 8,      /* no payload: the pass's acknowledgements (kvs_flush) */
    FUZZ_KVS_BARRIER = 9,    /* no payload: kvs_barrier */
    FUZZ_KVS_FORGET = 10,    /* payload: u32 job (kvs_forget_job) */
    FUZZ_KVS_COMPACT = 11,   /* no payload: kvs_compact on the store and its backups' */
    FUZZ_KVS_OPS
};

/* fuzz_parts: setup bytes [preset u8][nodes u8][self u8][flags u8]. */
enum fuzz_parts_op {
    FUZZ_PARTS_MSG = 0,      /* payload: u8 type, then the message's payload: a scheduler
                              * type's low byte, or else an index into the node's types */
    FUZZ_PARTS_STEP = 1,     /* the check step */
    FUZZ_PARTS_CLOCK = 2,    /* payload: u16 ms the clocks move on */
    FUZZ_PARTS_TIMER = 3,    /* payload: u8 which active timer fires */
    FUZZ_PARTS_READY = 4,    /* payload: task (u8 flags, u8 inputs, u32 bytes, u8 node) */
    FUZZ_PARTS_LOAD = 5,     /* payload: u8 busy, u8 est ms, u8 successors */
    FUZZ_PARTS_STAGE = 6,    /* payload: as READY; the data plane stages its inputs */
    FUZZ_PARTS_REPLY = 7,    /* payload: u8 which captured request, then reply bytes */
    FUZZ_PARTS_WAKE = 8,     /* node_wake */
    FUZZ_PARTS_OPS
};
/* fuzz_parts's data objects are task_key(FUZZ_PARTS_OBJECT_JOB, 0..7); 0, 2 and 6 are on
 * the node from the start. */
#define FUZZ_PARTS_OBJECT_JOB 2u

#endif
