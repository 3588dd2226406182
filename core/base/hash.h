/*
 * hash — the one 64-bit mixer of jackdaw: splitmix64's output function (Steele, Lea,
 * Flood 2014), which spreads consecutive integers over all 64 bits.
 *
 * Its values are part of the protocol: task_key_owner (core/model/task.h) picks every
 * key's metadata shard with it, and the bytes of a synthetic data object
 * (core/runtime/objstore.c) are its outputs, checked by CRC-32 between nodes.  Changing
 * it changes the wire; tests/unit/test_hash.c pins its values.  Also used where the
 * values stay inside a process or a file we write (u64map's slots,
 * trace/offline/chrome.c's flow ids).  Owns nothing; pure.
 */
#ifndef JACKDAW_HASH_H
#define JACKDAW_HASH_H

#include <stdint.h>

/* splitmix64's increment: its state after step i is seed + i * HASH_GOLDEN_GAMMA. */
#define HASH_GOLDEN_GAMMA 0x9e3779b97f4a7c15ULL

static inline uint64_t hash_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

#endif
