/*
 * keymap — an open-addressing hash map of records that carry their own 64-bit key as
 * their first member: a slot is the record's pointer alone, 8 bytes where u64map's is
 * 16, since the key is read from the record.
 *
 * For the one map where a daemon's memory is the record count: the metadata shard
 * (core/kvs/shard.c), a record per task it is primary for, where the slots were a fifth
 * of a waiting task's bytes (issue 19).  A lookup reads the record it finds, which its
 * caller reads next anyway; a probe past another record reads that one too, which is
 * why u64map, whose values need not be records, keeps the key in the slot.  Load factor
 * at most 0.75, linear probing with backward-shift deletion, as u64map.  Owns its slot
 * array, not the records.  Not thread-safe.
 */
#ifndef JACKDAW_KEYMAP_H
#define JACKDAW_KEYMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct keymap {
    void **slots;           /* owned; NULL marks an empty slot */
    size_t cap;             /* power of two, or 0 */
    size_t len;
};

/* The key of a record: its first 8 bytes. */
static inline uint64_t keymap_key(const void *record)
{
    uint64_t k;
    memcpy(&k, record, sizeof k);
    return k;
}

void keymap_init(struct keymap *m);
void keymap_fini(struct keymap *m);
/* The record of `key`, or NULL. */
void *keymap_get(const struct keymap *m, uint64_t key);
/* Inserts `record` under its own key, or replaces the one there; returns that one or NULL. */
void *keymap_put(struct keymap *m, void *record);
/* Removes and returns the record of `key`, or NULL when absent. */
void *keymap_del(struct keymap *m, uint64_t key);
static inline size_t keymap_len(const struct keymap *m)
{
    return m->len;
}
/* Iteration: for (size_t i = 0; (i = keymap_next(m, i, &v)) != 0;) — returns the
 * position after the slot found, 0 at the end.  No insertions or deletions meanwhile. */
size_t keymap_next(const struct keymap *m, size_t pos, void **record);

#endif
