/*
 * objstore — a node's data objects: task outputs made here and copies fetched from
 * other nodes, addressed by a 64-bit object key.
 *
 * Owns every object's bytes (heap buffers and files under its directory), the index
 * (a u64map of small entries) and the cache's LRU list.  The node runtime calls it on
 * its loop thread: executors' completions put outputs, the fetch protocol streams
 * copies in through a receiver and reads objects out in chunks, and the executor
 * stages a command task's inputs with objstore_materialize (big ones written into the
 * store first, a budget at a time, objstore_spill).  Not thread-safe; no
 * libuv; file I/O is synchronous and bounded by the bytes the call names.
 *
 * Two kinds of object:
 *   owned   produced here (objstore_put_synthetic, objstore_put_file).  Never evicted;
 *           only objstore_remove drops one.
 *   cached  a copy received from another node.  Cached copies together stay under
 *           cache_cap bytes: when they exceed it the least recently used unpinned copy
 *           is evicted.  cache_cap 0 turns caching off: a copy lives only while pinned.
 *
 * Where bytes live (one rule for both kinds): an object is kept in memory when, at the
 * moment it is created, it fits whole under mem_cap together with every other in-memory
 * object (and every in-memory receive in progress); otherwise it is written to the file
 * DIR/<key as 16 hex digits>.  Objects never move afterwards: spilling the newcomer,
 * not the least recently used resident, means a put never costs I/O for some other
 * object and a reader's view never changes under it.  Memory freed by an evicted copy
 * is reused by later objects.  objstore_put_file is the exception: its content is
 * already a file, which is moved into DIR and stays a file (it does not count against
 * mem_cap).
 *
 * Store files are mode 0400 (and the directory 0700 when the store makes it): read-only,
 * so that a task whose staged input is a hard link to one (objstore_materialize) cannot
 * open it for writing (root is not stopped by that), and readable by nobody else.
 *
 * Pins: objstore_acquire, objstore_pin and a successful objstore_recv_commit each hold
 * one pin, released by objstore_unpin.  A pinned copy is never evicted and a pinned
 * object cannot be removed.  Pin an object while a task uses it or a transfer reads it.
 *
 * Content checks: objects are checksummed with CRC-32 (zlib, 4 bytes big-endian; why
 * not a cryptographic hash: objstore.c).  A received copy becomes visible only if its
 * checksum matches the sender's.  "hash" below means this checksum.
 *
 * Return convention: 0 or a negative errno (reads return a byte count).  Functions
 * that create or write files fill *cause (owned, when cause is not NULL) on failure,
 * naming the file.
 */
#ifndef JACKDAW_OBJSTORE_H
#define JACKDAW_OBJSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OBJSTORE_HASH_BYTES 4u

struct objstore;
struct objstore_recv;

struct objstore_stats {
    uint64_t owned_objects, owned_bytes;
    uint64_t cached_objects, cached_bytes;   /* committed copies, pinned or not */
    uint64_t mem_bytes, file_bytes;          /* visible objects of both kinds */
    /* objstore_acquire outcomes: input held as an owned object, as a cached copy, or
     * absent (a fetch follows).  Cache hit rate = cache_hits / (cache_hits +
     * cache_misses); locality = local_hits / all three. */
    uint64_t local_hits, cache_hits, cache_misses;
    uint64_t evictions;                      /* cached copies dropped (cap or cache off) */
    uint64_t bytes_received;                 /* by receivers, including discarded copies */
};

/*
 * Creates a store spilling into `dir` (created, with parents, when missing; removed by
 * objstore_destroy only if created here).  mem_cap: bytes of object content kept in
 * memory; cache_cap: bytes of cached copies kept (0: caching off).  NULL on error with
 * *cause set.
 */
struct objstore *objstore_create(const char *dir, uint64_t mem_cap, uint64_t cache_cap,
                                 char **cause);
/* Frees everything and unlinks the store's files, including those of receives still in
 * progress (their receivers become invalid).  NULL is a no-op. */
void objstore_destroy(struct objstore *os);

/*
 * Synthetic content: byte i of object `key` is byte (i mod 8) of the little-endian
 * word splitmix64 produces at step i / 8 from seed `key`.  Any node or test
 * regenerates any range without the object.
 */
void objstore_synthetic_fill(uint64_t key, uint64_t offset, void *buf, size_t len);

/* Adds an owned object of `bytes` synthetic bytes.  -EEXIST when the key is present
 * (owned, cached or being received), -ENOMEM, or a file error with *cause. */
int objstore_put_synthetic(struct objstore *os, uint64_t key, uint64_t bytes, char **cause);
/*
 * Adds an owned object whose content is objstore_synthetic_fill of its key, without
 * holding its bytes: reads, hashes and staging generate them.  A synthetic task's output
 * and a workload's initial object are such; they cost no memory, no file and no fill
 * when made, only when read.  Errors as objstore_put_synthetic.
 */
int objstore_put_generated(struct objstore *os, uint64_t key, uint64_t bytes, char **cause);
/*
 * Adopts the regular file at `path` (a command task's output) as an owned object by
 * moving it into the store: rename(2) when on the same file system, else a copy
 * followed by unlinking `path`.  On success `path` no longer exists; on failure it is
 * left as it was.  -EEXIST as above; -EINVAL when not a regular file (a symbolic link
 * is refused too).
 */
int objstore_put_file(struct objstore *os, uint64_t key, const char *path, char **cause);
/* Drops an owned object or a cached copy and its file.  -ENOENT, -EBUSY when pinned. */
int objstore_remove(struct objstore *os, uint64_t key);

/*
 * Receiving a copy from another node.  begin reserves room (memory or a file
 * DIR/<hex>.part per the spill rule) and hides the key from readers until commit; a
 * second begin for the same key gets -EALREADY, one for a key held here -EEXIST.
 * write takes chunks in order: offset must equal the bytes already written and the
 * total must stay within total_bytes, else -EPROTO (the receiver stays valid; abort
 * it).  commit checks that every byte arrived (-EPROTO) and that the CRC-32 of the
 * content equals `hash` (-EBADMSG); only then is the copy visible, as a cached copy
 * holding one pin for the caller.  commit always consumes the receiver; on failure the
 * copy is discarded.  abort discards it; NULL is a no-op.
 */
int objstore_recv_begin(struct objstore *os, uint64_t key, uint64_t total_bytes,
                        struct objstore_recv **out, char **cause);
int objstore_recv_write(struct objstore_recv *rx, uint64_t offset, const void *data, size_t len,
                        char **cause);
int objstore_recv_commit(struct objstore_recv *rx, const uint8_t hash[OBJSTORE_HASH_BYTES],
                         char **cause);
void objstore_recv_abort(struct objstore_recv *rx);
/* As objstore_recv_commit, but the object becomes an owned one, holding no pin: a file
 * a client sent in (a workload's `path` object), never evicted. */
int objstore_recv_commit_owned(struct objstore_recv *rx,
                               const uint8_t hash[OBJSTORE_HASH_BYTES], char **cause);

/* Owned or cached, and visible (not a receive in progress). */
bool objstore_has(const struct objstore *os, uint64_t key);
/* Size in bytes, or -ENOENT. */
int64_t objstore_size(const struct objstore *os, uint64_t key);

/*
 * A task is about to use input `key`: counts a local hit, cache hit or miss and, when
 * present, pins it (the caller unpins when the task ends) and marks it most recently
 * used.  0 when present; -ENOENT when absent (fetch it; the commit's pin is the task's);
 * -EINPROGRESS when a receive of it is in progress (pin it after that commit).
 */
int objstore_acquire(struct objstore *os, uint64_t key);
/* Adds a pin without counting a hit (a transfer reading it out).  -ENOENT. */
int objstore_pin(struct objstore *os, uint64_t key);
/* Releases a pin.  The last unpin of a cached copy makes it the most recently used and
 * may evict copies (this one too when caching is off).  -ENOENT, -EINVAL when not
 * pinned. */
int objstore_unpin(struct objstore *os, uint64_t key);

/*
 * Copies up to len bytes from `offset` into buf; returns the count (short only at the
 * end, 0 at offset == size), -ENOENT, -EINVAL past the end, or an I/O errno.  A
 * file-backed object read while pinned keeps its file open until the last unpin, so a
 * transfer's chunked reads cost one pread each.
 */
ssize_t objstore_read(struct objstore *os, uint64_t key, uint64_t offset, void *buf, size_t len);
/*
 * The CRC-32 of the content (4 bytes, big-endian), remembered once known.  Known at once for received
 * copies.  For an owned object, objstore_read calls that walk it in order from offset
 * 0 (a transfer streaming it out) compute it as they go, so asking after the last
 * chunk costs nothing; otherwise this call checksums what is left, synchronously
 * (about 0.25 s per GB).  -ENOENT, -ENOMEM or an I/O errno.
 */
int objstore_hash(struct objstore *os, uint64_t key, uint8_t out[OBJSTORE_HASH_BYTES]);
/*
 * Writes the object as a new file at `path` (which must not exist: -EEXIST), to stage
 * a command task's input: a hard link when the object is a file on the same file
 * system (O(1); shares the store's read-only inode), else a copy (mode 0400 either
 * way).  The new file is independent of the entry afterwards: a link keeps the inode
 * alive when the object is later evicted or removed, so staging needs no pin.
 */
int objstore_materialize(struct objstore *os, uint64_t key, const char *path, char **cause);

/*
 * Objects at least this large that a command will read as a file are written into the
 * store's file once (objstore_spill) before they are staged, so that every staging of
 * them is a link rather than a write of the whole object on the loop thread.
 */
#define OBJSTORE_SPILL_MIN ((uint64_t)1 << 20)
/* Whether staging `key` now would write its bytes (a generated or in-memory object of
 * at least OBJSTORE_SPILL_MIN bytes) rather than link a store file. */
bool objstore_wants_spill(const struct objstore *os, uint64_t key);
/*
 * Writes up to `budget` more bytes of a generated or in-memory object into its file in
 * the store; the object becomes a file (its memory freed) once the last byte is
 * written.  The data plane calls it a budget per loop pass, so a gigabyte input costs
 * no heartbeat.  1 once the object is a file (also when it already was), 0 while bytes
 * remain, or a negative errno with *cause (what was written is removed; the object
 * stays as it was and the next call starts over).  -ENOENT when the object is gone.
 */
int objstore_spill(struct objstore *os, uint64_t key, uint64_t budget, char **cause);

void objstore_get_stats(const struct objstore *os, struct objstore_stats *out);

#endif
