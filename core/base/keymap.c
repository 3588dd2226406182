/*
 * keymap — see keymap.h.
 */
#include "core/base/keymap.h"

#include <stdlib.h>

#include "core/base/hash.h"
#include "core/base/xalloc.h"

/* An emptied map keeps a small slot array rather than allocate it again. */
#define KEYMAP_KEEP_CAP 1024u

void keymap_init(struct keymap *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->len = 0;
}

void keymap_fini(struct keymap *m)
{
    free(m->slots);
    keymap_init(m);
}

static size_t home_of(const struct keymap *m, uint64_t key)
{
    return (size_t)hash_mix64(key) & (m->cap - 1);
}

static size_t find_slot(const struct keymap *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t i = home_of(m, key);
    while (m->slots[i] && keymap_key(m->slots[i]) != key)
        i = (i + 1) & mask;
    return i;
}

void *keymap_get(const struct keymap *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    return m->slots[find_slot(m, key)];
}

static void grow(struct keymap *m)
{
    void **old = m->slots;
    size_t old_cap = m->cap;
    m->cap = old_cap ? old_cap * 2 : 16;
    m->slots = xcalloc(m->cap, sizeof *m->slots);
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            m->slots[find_slot(m, keymap_key(old[i]))] = old[i];
    free(old);
}

void *keymap_put(struct keymap *m, void *record)
{
    if ((m->len + 1) * 4 > m->cap * 3)
        grow(m);
    size_t i = find_slot(m, keymap_key(record));
    void *prev = m->slots[i];
    m->slots[i] = record;
    if (!prev)
        m->len++;
    return prev;
}

void *keymap_del(struct keymap *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    size_t i = find_slot(m, key);
    void *prev = m->slots[i];
    if (!prev)
        return NULL;
    /* Backward shift, as u64map_del: later members of the probe run move into the hole
     * when their home slot is not cyclically in (hole, j]. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j]; j = (j + 1) & mask) {
        size_t home = home_of(m, keymap_key(m->slots[j]));
        if ((j > hole && (home <= hole || home > j)) || (j < hole && home <= hole && home > j)) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole] = NULL;
    if (--m->len == 0 && m->cap > KEYMAP_KEEP_CAP)
        keymap_fini(m);
    return prev;
}

size_t keymap_next(const struct keymap *m, size_t pos, void **record)
{
    for (size_t i = pos; i < m->cap; i++) {
        if (m->slots[i]) {
            *record = m->slots[i];
            return i + 1;
        }
    }
    return 0;
}
