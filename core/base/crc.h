/*
 * crc — the CRC-32 that checks a data object's bytes end to end: the holder's store
 * computes it as it serves a fetch (core/runtime/objstore.c), the receiver as the
 * chunks arrive, and the client on `jackdaw fetch` and on the objects it submits
 * (core/client).  It is zlib's CRC-32 (the gzip polynomial), so its values are the
 * ones the wire always carried.
 *
 * libdeflate computes it by carry-less-multiply folding: 28 GB/s on this machine
 * against zlib's table-driven crc32_z at 5 GB/s, both ends of every byte moved.  At 32
 * local daemons zlib's CRC was a sixth of all the cluster's CPU on a data-heavy DAG.
 * Owns nothing; pure.
 */
#ifndef JACKDAW_CRC_H
#define JACKDAW_CRC_H

#include <stddef.h>
#include <stdint.h>

#include <libdeflate.h>

/* The CRC of nothing, where a running CRC starts. */
#define CRC32_INIT 0u

/* The running CRC `crc` extended by n bytes at p. */
static inline uint32_t crc32_update(uint32_t crc, const void *p, size_t n)
{
    return libdeflate_crc32(crc, p, n);
}

#endif
