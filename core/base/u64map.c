/*
 * u64map — see u64map.h.
 */
#include "core/base/u64map.h"

#include <stdlib.h>

#include "core/base/hash.h"
#include "core/base/xalloc.h"

#define U64MAP_KEEP_CAP 1024u

void u64map_init(struct u64map *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->len = 0;
}

void u64map_fini(struct u64map *m)
{
    free(m->slots);
    u64map_init(m);
}

static size_t find_slot(const struct u64map *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)hash_mix64(key) & mask;
    while (m->slots[i].value && m->slots[i].key != key)
        i = (i + 1) & mask;
    return i;
}

void *u64map_get(const struct u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    return m->slots[find_slot(m, key)].value;
}

static void grow(struct u64map *m)
{
    struct u64map_slot *old = m->slots;
    size_t old_cap = m->cap;
    m->cap = old_cap ? old_cap * 2 : 16;
    m->slots = xcalloc(m->cap, sizeof *m->slots);
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].value)
            m->slots[find_slot(m, old[i].key)] = old[i];
    free(old);
}

void *u64map_put(struct u64map *m, uint64_t key, void *value)
{
    if ((m->len + 1) * 4 > m->cap * 3)
        grow(m);
    size_t i = find_slot(m, key);
    void *prev = m->slots[i].value;
    m->slots[i].key = key;
    m->slots[i].value = value;
    if (!prev)
        m->len++;
    return prev;
}

void *u64map_del(struct u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    size_t i = find_slot(m, key);
    void *prev = m->slots[i].value;
    if (!prev)
        return NULL;
    /* Backward-shift: pull later members of the probe run into the hole so that every
     * key stays reachable from its home slot without tombstones. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].value; j = (j + 1) & mask) {
        size_t home = (size_t)hash_mix64(m->slots[j].key) & mask;
        /* j may move to hole if home is not cyclically in (hole, j]. */
        if ((j > hole && (home <= hole || home > j)) || (j < hole && home <= hole && home > j)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].value = NULL;
    m->slots[hole].key = 0;
    /* Emptied after it had grown big (a job's records, its queued tasks): the slots go
     * back, rather than stay a daemon's for good. */
    if (--m->len == 0 && m->cap > U64MAP_KEEP_CAP)
        u64map_fini(m);
    return prev;
}

size_t u64map_next(const struct u64map *m, size_t pos, uint64_t *key, void **value)
{
    for (size_t i = pos; i < m->cap; i++) {
        if (m->slots[i].value) {
            *key = m->slots[i].key;
            *value = m->slots[i].value;
            return i + 1;
        }
    }
    return 0;
}
