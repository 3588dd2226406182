/*
 * search — the lower bound of an int32 key in an array of records sorted by it: the
 * trace tools' per-node tables (the trace reader's tally, verify, the Chrome export and
 * the job tallies keep one record per node, sorted by node id, and insert new nodes in
 * place).  Header only; no state.
 */
#ifndef JACKDAW_SEARCH_H
#define JACKDAW_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The index of the first of the n records (each `stride` bytes, the key an int32_t at
 * `offset` within it) whose key is not below `key`; n when none. */
static inline size_t search_i32(const void *base, size_t n, size_t stride, size_t offset,
                                int32_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t k;
        memcpy(&k, (const char *)base + mid * stride + offset, sizeof k);
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The same for an array of structs with an int32_t member `field`. */
#define SEARCH_BY(array, n, field, key)                                                   \
    search_i32((array), (n), sizeof *(array), offsetof(__typeof__(*(array)), field), (key))

#endif
