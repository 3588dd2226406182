/*
 * u64map — an open-addressing hash map from non-zero-hashed 64-bit keys to pointers.
 *
 * Owns its slot array, not the values.  Used wherever a daemon indexes many small
 * records by task key (the metadata shard, the wait queue, pending requests), so it is
 * built for memory: 16 bytes a slot, load factor at most 0.75, linear probing with
 * backward-shift deletion (no tombstones, so long runs never degrade lookups).
 * Not thread-safe; each map belongs to one thread.
 */
#ifndef JACKDAW_U64MAP_H
#define JACKDAW_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
    uint64_t key;
    void *value;            /* borrowed; NULL marks an empty slot */
};

struct u64map {
    struct u64map_slot *slots; /* owned */
    size_t cap;             /* power of two, or 0 */
    size_t len;
};

void u64map_init(struct u64map *m);
void u64map_fini(struct u64map *m);
/* Value for key, or NULL. */
void *u64map_get(const struct u64map *m, uint64_t key);
/* Inserts or replaces; value must not be NULL.  Returns the previous value or NULL. */
void *u64map_put(struct u64map *m, uint64_t key, void *value);
/* Removes and returns the value, or NULL when absent. */
void *u64map_del(struct u64map *m, uint64_t key);
static inline size_t u64map_len(const struct u64map *m)
{
    return m->len;
}
/* Iteration: for (size_t i = 0; (i = u64map_next(m, i, &k, &v)) != 0;) — returns the
 * position after the slot found, 0 at the end.  No insertions or deletions meanwhile. */
size_t u64map_next(const struct u64map *m, size_t pos, uint64_t *key, void **value);

#endif
