/*
 * trace varint — Avro's zigzag varints (spec 1.11, "Binary Encoding": int and long),
 * shared by the record encoder (event.c) and the container framing (block.c).  Header
 * only: both sit on the per-event path.
 */
#ifndef JACKDAW_TRACE_VARINT_H
#define JACKDAW_TRACE_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* The longest zigzag varint of a 64-bit value. */
#define VARINT_MAX 10

/* Writes v at p (room for VARINT_MAX bytes); returns the bytes written. */
static inline size_t varint_put(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    while (z >= 0x80) {
        p[n++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    p[n++] = (uint8_t)z;
    return n;
}

/* Reads one zigzag varint: bytes used, 0 when buf ends inside it, -1 when it is longer
 * than 10 bytes or overflows 64 bits. */
static inline int varint_get(const uint8_t *p, size_t len, int64_t *v)
{
    uint64_t z = 0;
    for (size_t i = 0; i < VARINT_MAX; i++) {
        if (i == len)
            return 0;
        uint64_t b = p[i] & 0x7f;
        if (i == 9 && b > 1)
            return -1;
        z |= b << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
            return (int)i + 1;
        }
    }
    return -1;
}

#endif
