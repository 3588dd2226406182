/*
 * objstore — a node's data objects (see objstore.h).
 *
 * Owns the entries, their bytes and files, and the receivers in progress.  Called by
 * the node runtime on its loop thread only.
 *
 * Every object has one small entry in a u64map keyed by object key; a receive in
 * progress has an entry too (kind RECEIVING, invisible to readers) so that a second
 * fetch of the same key is refused instead of racing the first to the same file.
 * Unpinned cached copies sit on an intrusive LRU list (most recent at the head);
 * pinned ones are off it, which keeps eviction O(1) per victim however many copies
 * running tasks hold.
 *
 * An owned object's hash is needed when a peer fetches it, at the end of the
 * transfer.  Hashing it then in one pass would stall the loop for a second per GB, so
 * reads that walk the object from offset 0 in order (what a transfer does) feed the
 * hash as they go, and objstore_hash finishes whatever part is left.  Reads at other
 * offsets (a second transfer running behind the first) are simply not hashed.
 */
#include "core/runtime/objstore.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/crc.h"
#include "core/base/fs.h"
#include "core/base/hash.h"
#include "core/base/u64map.h"
#include "core/base/vector.h"
#include "core/base/xalloc.h"

/* Unit of file I/O: large enough that syscalls are a small share of the cost, small
 * enough that the per-call heap buffer is cheap. */
#define IO_CHUNK (256u << 10)
/* "/" + 16 hex digits + ".part" + NUL. */
#define NAME_ROOM 24u

enum kind { KIND_OWNED, KIND_CACHED, KIND_RECEIVING };

/*
 * The content check: CRC-32 (core/base/crc.h), stored big-endian.  It guards against
 * corruption between the holder's store and the receiver's (a bad disk, a truncated
 * file, a bug in the chunking); it is not a security boundary: the check travels with
 * the data on the same connection, so a cryptographic hash would add no protection
 * against an attacker on the path, only cost.  BLAKE2b ran at 1 GB/s here, hashed every
 * byte on both ends and was half of the daemons' CPU on data-heavy DAGs, below a 10
 * Gbit/s link's rate; zlib's CRC-32 ran at 5 GB/s and libdeflate's, the same values, at
 * 28 (HDFS and Ceph use CRCs the same way).
 */
struct csum {
    uint32_t crc;
};

static void csum_init(struct csum *c)
{
    c->crc = CRC32_INIT;
}

static void csum_update(struct csum *c, const void *data, size_t len)
{
    c->crc = crc32_update(c->crc, data, len);
}

static void csum_final(const struct csum *c, uint8_t out[OBJSTORE_HASH_BYTES])
{
    for (unsigned i = 0; i < OBJSTORE_HASH_BYTES; i++)
        out[i] = (uint8_t)(c->crc >> (8 * (OBJSTORE_HASH_BYTES - 1 - i)));
}

/* A check being computed from the reads that stream an object out, from offset 0 on. */
struct hashing {
    struct csum hs;
    uint64_t done;          /* bytes checked */
};

struct entry {
    uint64_t key;
    uint64_t size;
    struct entry *lru_prev, *lru_next; /* linked only while an unpinned cached copy */
    uint8_t *data;          /* owned; content when in memory, NULL when in a file or empty */
    struct hashing *hashing; /* owned; NULL unless hashed part way */
    uint32_t pins;
    int fd;                 /* read descriptor kept while pinned, else -1 */
    uint8_t kind;           /* enum kind */
    bool in_file;
    bool generated;         /* content is objstore_synthetic_fill of the key: no bytes held */
    bool hash_known;
    uint8_t hash[OBJSTORE_HASH_BYTES];
    int spill_fd;           /* the .part file objstore_spill is writing, or -1 */
    uint64_t spilled;       /* bytes of it written */
};

struct objstore_recv {
    struct csum hs;
    struct objstore *os;    /* borrowed */
    struct entry *e;        /* borrowed from the index, kind RECEIVING */
    struct objstore_recv *prev, *next; /* os->receivers */
    uint64_t received;
    int fd;                 /* the .part file, or -1 when receiving into memory */
};

struct objstore {
    char *dir;              /* owned */
    bool created_dir;
    uint64_t mem_cap, cache_cap;
    uint64_t mem_reserved;  /* buffers of in-memory receives in progress */
    struct u64map index;    /* key -> struct entry (owned) */
    struct entry lru;       /* sentinel: lru.lru_next most recent, lru.lru_prev least */
    struct objstore_recv *receivers; /* owned list */
    struct objstore_stats st;
};

static void set_cause(char **cause, char *msg)
{
    if (cause)
        *cause = msg;
    else
        free(msg);
}

static void object_path(char *out, const struct objstore *os, uint64_t key, const char *suffix)
{
    /* Fits: objstore_create checked the directory's length against NAME_ROOM. */
    snprintf(out, PATH_MAX, "%s/%016" PRIx64 "%s", os->dir, key, suffix);
}

/* ---- synthetic content ---------------------------------------------------------- */

static inline uint64_t splitmix_at(uint64_t seed, uint64_t step)
{
    /* splitmix64's state after step+1 increments, then its output mix: random access
     * into the stream, so any range can be regenerated without the bytes before it. */
    return hash_mix64(seed + (step + 1) * HASH_GOLDEN_GAMMA);
}

static inline void store_le64(uint8_t *p, uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* gcc 12 does not merge the byte stores below into one: 4x slower. */
    memcpy(p, &w, 8);
#else
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(w >> (8 * i));
#endif
}

/* Whole words of the stream from word `step` on, FILL_BLOCK at a time in a loop of fixed
 * count, which the compiler vectorizes at -O2 (its clones): the scalar loop ran at 5 GB/s,
 * and at 32 local daemons it was the largest user-space cost left on a data-heavy DAG. */
#define FILL_BLOCK 64u
VECTOR_CLONES
static void fill_words(uint64_t key, uint64_t step, uint8_t *p, size_t words)
{
    size_t i = 0;
    for (; i + FILL_BLOCK <= words; i += FILL_BLOCK)
        for (unsigned j = 0; j < FILL_BLOCK; j++)
            store_le64(p + 8 * (i + j), splitmix_at(key, step + i + j));
    for (; i < words; i++)
        store_le64(p + 8 * i, splitmix_at(key, step + i));
}

void objstore_synthetic_fill(uint64_t key, uint64_t offset, void *buf, size_t len)
{
    uint8_t *p = buf;
    uint64_t step = offset / 8;
    unsigned skip = (unsigned)(offset % 8);
    if (skip) {
        uint64_t w = splitmix_at(key, step++);
        for (unsigned i = skip; i < 8 && len > 0; i++, len--)
            *p++ = (uint8_t)(w >> (8 * i));
    }
    size_t words = len / 8;
    fill_words(key, step, p, words);
    p += 8 * words;
    len -= 8 * words;
    step += words;
    if (len > 0) {
        uint64_t w = splitmix_at(key, step);
        for (unsigned i = 0; i < len; i++)
            p[i] = (uint8_t)(w >> (8 * i));
    }
}

/* ---- file helpers --------------------------------------------------------------- */

/* Reads exactly n bytes at off; a file shorter than its entry says is -EIO, since
 * something outside the store changed it. */
static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* A fresh read-only file.  A stale one of the same name (left by a daemon that died)
 * is replaced: its content is not ours. */
static int create_file(const char *path, char **cause)
{
    if (unlink(path) < 0 && errno != ENOENT) {
        int err = errno;
        set_cause(cause, xasprintf("cannot replace stale object file '%s': %s", path,
                                   strerror(err)));
        return -err;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    if (fd < 0) {
        int err = errno;
        set_cause(cause, xasprintf("cannot create object file '%s': %s", path, strerror(err)));
        return -err;
    }
    return fd;
}

/* Closes a file just written, reporting deferred write errors (NFS, quota). */
static int close_written(int fd, const char *path, char **cause)
{
    if (close(fd) < 0) {
        int err = errno;
        set_cause(cause, xasprintf("cannot write object file '%s': %s", path, strerror(err)));
        return -err;
    }
    return 0;
}

/* Copies src to a new read-only file dst (which must not exist); *bytes gets the size.
 * On failure dst is removed. */
static int copy_file(const char *src, const char *dst, uint64_t *bytes, char **cause)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        int err = errno;
        set_cause(cause, xasprintf("cannot open '%s': %s", src, strerror(err)));
        return -err;
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    if (out < 0) {
        int err = errno;
        set_cause(cause, xasprintf("cannot create '%s': %s", dst, strerror(err)));
        close(in);
        return -err;
    }
    uint8_t *buf = malloc(IO_CHUNK);
    int rc = buf ? 0 : -ENOMEM;
    uint64_t total = 0;
    while (rc == 0) {
        ssize_t r = read(in, buf, IO_CHUNK);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            set_cause(cause, xasprintf("cannot read '%s': %s", src, strerror(-rc)));
            break;
        }
        if (r == 0)
            break;
        if ((rc = fs_write_all(out, buf, (size_t)r)) < 0) {
            set_cause(cause, xasprintf("cannot write '%s': %s", dst, strerror(-rc)));
            break;
        }
        total += (uint64_t)r;
    }
    if (rc == -ENOMEM)
        set_cause(cause, xasprintf("cannot copy '%s': out of memory", src));
    free(buf);
    close(in);
    int crc = close_written(out, dst, rc == 0 ? cause : NULL);
    if (rc == 0)
        rc = crc;
    if (rc < 0)
        unlink(dst);
    else
        *bytes = total;
    return rc;
}

/* ---- entries, accounting, LRU --------------------------------------------------- */

static bool fits_in_memory(const struct objstore *os, uint64_t size)
{
    uint64_t used = os->st.mem_bytes + os->mem_reserved;
    return size <= SIZE_MAX && used <= os->mem_cap && size <= os->mem_cap - used;
}

static struct entry *entry_new(uint64_t key, uint64_t size, enum kind kind)
{
    struct entry *e = xcalloc(1, sizeof *e);
    e->key = key;
    e->size = size;
    e->fd = -1;
    e->spill_fd = -1;
    e->kind = (uint8_t)kind;
    return e;
}

static struct entry *visible(const struct objstore *os, uint64_t key)
{
    struct entry *e = u64map_get(&os->index, key);
    return e && e->kind != KIND_RECEIVING ? e : NULL;
}

static void lru_unlink(struct entry *e)
{
    e->lru_prev->lru_next = e->lru_next;
    e->lru_next->lru_prev = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(struct objstore *os, struct entry *e)
{
    e->lru_next = os->lru.lru_next;
    e->lru_prev = &os->lru;
    os->lru.lru_next->lru_prev = e;
    os->lru.lru_next = e;
}

/* Counts a visible entry into the statistics; the inverse is account_out. */
static void account_in(struct objstore *os, const struct entry *e)
{
    if (e->kind == KIND_OWNED) {
        os->st.owned_objects++;
        os->st.owned_bytes += e->size;
    } else {
        os->st.cached_objects++;
        os->st.cached_bytes += e->size;
    }
    if (e->generated)
        return; /* holds no bytes anywhere */
    if (e->in_file)
        os->st.file_bytes += e->size;
    else
        os->st.mem_bytes += e->size;
}

static void account_out(struct objstore *os, const struct entry *e)
{
    if (e->kind == KIND_OWNED) {
        os->st.owned_objects--;
        os->st.owned_bytes -= e->size;
    } else {
        os->st.cached_objects--;
        os->st.cached_bytes -= e->size;
    }
    if (e->generated)
        return;
    if (e->in_file)
        os->st.file_bytes -= e->size;
    else
        os->st.mem_bytes -= e->size;
}

/* Ends a spill part way: its file goes, the entry keeps its bytes where they were. */
static void spill_abort(const struct objstore *os, struct entry *e)
{
    if (e->spill_fd < 0)
        return;
    close(e->spill_fd);
    char path[PATH_MAX];
    object_path(path, os, e->key, ".part");
    unlink(path);
    e->spill_fd = -1;
    e->spilled = 0;
}

/* Frees a visible entry's bytes and the entry itself; the caller has checked pins. */
static void drop_entry(struct objstore *os, struct entry *e)
{
    spill_abort(os, e);
    if (e->lru_next)
        lru_unlink(e);
    account_out(os, e);
    if (e->fd >= 0)
        close(e->fd);
    if (e->in_file) {
        char path[PATH_MAX];
        object_path(path, os, e->key, "");
        unlink(path);
    }
    free(e->data);
    free(e->hashing);
    u64map_del(&os->index, e->key);
    free(e);
}

static void evict_over_cap(struct objstore *os)
{
    while (os->st.cached_bytes > os->cache_cap && os->lru.lru_prev != &os->lru) {
        os->st.evictions++;
        drop_entry(os, os->lru.lru_prev);
    }
}

static void pin_entry(struct entry *e)
{
    if (e->pins++ == 0 && e->kind == KIND_CACHED)
        lru_unlink(e);
}

/* ---- lifetime ------------------------------------------------------------------- */

struct objstore *objstore_create(const char *dir, uint64_t mem_cap, uint64_t cache_cap,
                                 char **cause)
{
    if (!dir || !*dir) {
        set_cause(cause, xstrdup("no object store directory given"));
        return NULL;
    }
    if (strlen(dir) + NAME_ROOM > PATH_MAX) {
        set_cause(cause, xasprintf("object store directory '%s': name too long", dir));
        return NULL;
    }
    bool created = false;
    struct stat st;
    if (stat(dir, &st) < 0) {
        char *failed = NULL;
        int rc = fs_mkdirs(dir, 0700, &failed);
        if (rc < 0) {
            set_cause(cause, xasprintf("cannot create object store directory '%s': %s",
                                       failed ? failed : dir, strerror(-rc)));
            free(failed);
            return NULL;
        }
        created = true;
    } else if (!S_ISDIR(st.st_mode)) {
        set_cause(cause, xasprintf("object store directory '%s' is not a directory", dir));
        return NULL;
    }
    struct objstore *os = xcalloc(1, sizeof *os);
    os->dir = xstrdup(dir);
    os->created_dir = created;
    os->mem_cap = mem_cap;
    os->cache_cap = cache_cap;
    u64map_init(&os->index);
    os->lru.lru_next = os->lru.lru_prev = &os->lru;
    return os;
}

/* Takes a receiver off the store's list and frees it; the entry is the caller's. */
static void free_receiver(struct objstore_recv *rx)
{
    struct objstore *os = rx->os;
    if (rx->prev)
        rx->prev->next = rx->next;
    else
        os->receivers = rx->next;
    if (rx->next)
        rx->next->prev = rx->prev;
    free(rx);
}

/* Drops a receive in progress: its .part file or its memory reservation, its hidden
 * entry and the receiver. */
static void discard_receive(struct objstore_recv *rx)
{
    struct objstore *os = rx->os;
    struct entry *e = rx->e;
    if (e->in_file) {
        char path[PATH_MAX];
        if (rx->fd >= 0)
            close(rx->fd);
        object_path(path, os, e->key, ".part");
        unlink(path);
    } else {
        os->mem_reserved -= e->size;
    }
    free(e->data);
    u64map_del(&os->index, e->key);
    free(e);
    free_receiver(rx);
}

void objstore_destroy(struct objstore *os)
{
    if (!os)
        return;
    while (os->receivers)
        discard_receive(os->receivers);
    uint64_t key;
    void *value;
    /* Entries are collected first: dropping one while iterating would shift slots. */
    size_t n = u64map_len(&os->index), i = 0;
    struct entry **all = xcalloc(n ? n : 1, sizeof *all);
    for (size_t pos = 0; (pos = u64map_next(&os->index, pos, &key, &value)) != 0;)
        all[i++] = value;
    for (i = 0; i < n; i++)
        drop_entry(os, all[i]);
    free(all);
    u64map_fini(&os->index);
    if (os->created_dir)
        rmdir(os->dir);
    free(os->dir);
    free(os);
}

/* ---- owned objects -------------------------------------------------------------- */

static int refuse_present(const struct objstore *os, uint64_t key, char **cause)
{
    struct entry *e = u64map_get(&os->index, key);
    if (!e)
        return 0;
    set_cause(cause, xasprintf("object %016" PRIx64 " is already %s", key,
                               e->kind == KIND_OWNED    ? "stored here"
                               : e->kind == KIND_CACHED ? "cached here"
                                                        : "being received"));
    return -EEXIST;
}

int objstore_put_synthetic(struct objstore *os, uint64_t key, uint64_t bytes, char **cause)
{
    if (!os)
        return -EINVAL;
    int rc = refuse_present(os, key, cause);
    if (rc < 0)
        return rc;
    struct entry *e = entry_new(key, bytes, KIND_OWNED);
    if (fits_in_memory(os, bytes)) {
        if (bytes > 0 && !(e->data = malloc((size_t)bytes))) {
            set_cause(cause, xasprintf("cannot hold object %016" PRIx64 " (%" PRIu64
                                       " bytes): out of memory", key, bytes));
            free(e);
            return -ENOMEM;
        }
        objstore_synthetic_fill(key, 0, e->data, (size_t)bytes);
    } else {
        char path[PATH_MAX];
        object_path(path, os, key, "");
        int fd = create_file(path, cause);
        uint8_t *buf = fd >= 0 ? malloc(IO_CHUNK) : NULL;
        rc = fd < 0 ? fd : buf ? 0 : -ENOMEM;
        if (rc == -ENOMEM)
            set_cause(cause, xasprintf("cannot write object file '%s': out of memory", path));
        for (uint64_t off = 0; rc == 0 && off < bytes;) {
            size_t n = bytes - off < IO_CHUNK ? (size_t)(bytes - off) : IO_CHUNK;
            objstore_synthetic_fill(key, off, buf, n);
            if ((rc = fs_write_all(fd, buf, n)) < 0)
                set_cause(cause, xasprintf("cannot write object file '%s': %s", path,
                                           strerror(-rc)));
            off += n;
        }
        free(buf);
        if (fd >= 0) {
            int crc = close_written(fd, path, rc == 0 ? cause : NULL);
            if (rc == 0)
                rc = crc;
            if (rc < 0)
                unlink(path);
        }
        if (rc < 0) {
            free(e);
            return rc;
        }
        e->in_file = true;
    }
    u64map_put(&os->index, key, e);
    account_in(os, e);
    return 0;
}

int objstore_put_generated(struct objstore *os, uint64_t key, uint64_t bytes, char **cause)
{
    if (!os)
        return -EINVAL;
    int rc = refuse_present(os, key, cause);
    if (rc < 0)
        return rc;
    struct entry *e = entry_new(key, bytes, KIND_OWNED);
    e->generated = true;
    u64map_put(&os->index, key, e);
    account_in(os, e);
    return 0;
}

int objstore_put_file(struct objstore *os, uint64_t key, const char *path, char **cause)
{
    if (!os || !path)
        return -EINVAL;
    int rc = refuse_present(os, key, cause);
    if (rc < 0)
        return rc;
    struct stat st;
    /* lstat: rename would move a symbolic link itself, leaving the store a link whose
     * target it does not own. */
    if (lstat(path, &st) < 0) {
        int err = errno;
        set_cause(cause, xasprintf("cannot store '%s': %s", path, strerror(err)));
        return -err;
    }
    if (!S_ISREG(st.st_mode)) {
        set_cause(cause, xasprintf("cannot store '%s': not a regular file", path));
        return -EINVAL;
    }
    char final[PATH_MAX];
    object_path(final, os, key, "");
    if (unlink(final) < 0 && errno != ENOENT) {
        int err = errno;
        set_cause(cause, xasprintf("cannot replace stale object file '%s': %s", final,
                                   strerror(err)));
        return -err;
    }
    uint64_t size;
    if (rename(path, final) == 0) {
        /* The size is read after the move: the file is ours now, so nothing changes it
         * between this stat and the entry. */
        if (stat(final, &st) < 0 || chmod(final, 0400) < 0) {
            int err = errno;
            set_cause(cause, xasprintf("cannot store '%s' as '%s': %s", path, final,
                                       strerror(err)));
            rename(final, path);
            return -err;
        }
        size = (uint64_t)st.st_size;
    } else if (errno == EXDEV) {
        if ((rc = copy_file(path, final, &size, cause)) < 0)
            return rc;
        unlink(path);
    } else {
        int err = errno;
        set_cause(cause, xasprintf("cannot move '%s' to '%s': %s", path, final, strerror(err)));
        return -err;
    }
    struct entry *e = entry_new(key, size, KIND_OWNED);
    e->in_file = true;
    u64map_put(&os->index, key, e);
    account_in(os, e);
    return 0;
}

int objstore_remove(struct objstore *os, uint64_t key)
{
    if (!os)
        return -EINVAL;
    struct entry *e = visible(os, key);
    if (!e)
        return -ENOENT;
    if (e->pins)
        return -EBUSY;
    drop_entry(os, e);
    return 0;
}

/* ---- receiving copies ----------------------------------------------------------- */

int objstore_recv_begin(struct objstore *os, uint64_t key, uint64_t total_bytes,
                        struct objstore_recv **out, char **cause)
{
    if (!os || !out)
        return -EINVAL;
    struct entry *old = u64map_get(&os->index, key);
    if (old && old->kind == KIND_RECEIVING) {
        set_cause(cause, xasprintf("object %016" PRIx64 " is already being received", key));
        return -EALREADY;
    }
    int rc = refuse_present(os, key, cause);
    if (rc < 0)
        return rc;
    struct objstore_recv *rx = calloc(1, sizeof *rx);
    if (!rx) {
        set_cause(cause, xstrdup("cannot start a receive: out of memory"));
        return -ENOMEM;
    }
    rx->fd = -1;
    struct entry *e = entry_new(key, total_bytes, KIND_RECEIVING);
    if (fits_in_memory(os, total_bytes)) {
        if (total_bytes > 0 && !(e->data = malloc((size_t)total_bytes))) {
            set_cause(cause, xasprintf("cannot receive object %016" PRIx64 " (%" PRIu64
                                       " bytes): out of memory", key, total_bytes));
            free(e);
            free(rx);
            return -ENOMEM;
        }
        os->mem_reserved += total_bytes;
    } else {
        char path[PATH_MAX];
        object_path(path, os, key, ".part");
        if ((rx->fd = create_file(path, cause)) < 0) {
            rc = rx->fd;
            free(e);
            free(rx);
            return rc;
        }
        e->in_file = true;
    }
    csum_init(&rx->hs);
    rx->os = os;
    rx->e = e;
    rx->next = os->receivers;
    if (os->receivers)
        os->receivers->prev = rx;
    os->receivers = rx;
    u64map_put(&os->index, key, e);
    *out = rx;
    return 0;
}

int objstore_recv_write(struct objstore_recv *rx, uint64_t offset, const void *data, size_t len,
                        char **cause)
{
    if (!rx || (!data && len))
        return -EINVAL;
    struct entry *e = rx->e;
    if (offset != rx->received || len > e->size - rx->received) {
        set_cause(cause, xasprintf("object %016" PRIx64 ": chunk at %" PRIu64 "+%zu does not "
                                   "follow %" PRIu64 " of %" PRIu64 " bytes",
                                   e->key, offset, len, rx->received, e->size));
        return -EPROTO;
    }
    if (len == 0)
        return 0;
    if (rx->fd >= 0) {
        int rc = fs_write_all(rx->fd, data, len);
        if (rc < 0) {
            char path[PATH_MAX];
            object_path(path, rx->os, e->key, ".part");
            set_cause(cause, xasprintf("cannot write object file '%s': %s", path,
                                       strerror(-rc)));
            return rc;
        }
    } else {
        memcpy(e->data + offset, data, len);
    }
    csum_update(&rx->hs, data, len);
    rx->received += len;
    rx->os->st.bytes_received += len;
    return 0;
}

static int commit(struct objstore_recv *rx, const uint8_t hash[OBJSTORE_HASH_BYTES],
                  bool owned, char **cause)
{
    struct objstore *os = rx->os;
    struct entry *e = rx->e;
    if (rx->received != e->size) {
        set_cause(cause, xasprintf("object %016" PRIx64 ": committed after %" PRIu64 " of %"
                                   PRIu64 " bytes", e->key, rx->received, e->size));
        discard_receive(rx);
        return -EPROTO;
    }
    uint8_t got[OBJSTORE_HASH_BYTES];
    csum_final(&rx->hs, got);
    if (!hash || memcmp(got, hash, sizeof got) != 0) {
        set_cause(cause, xasprintf("object %016" PRIx64 ": received copy does not match "
                                   "its checksum", e->key));
        discard_receive(rx);
        return -EBADMSG;
    }
    if (rx->fd >= 0) {
        char part[PATH_MAX], final[PATH_MAX];
        object_path(part, os, e->key, ".part");
        object_path(final, os, e->key, "");
        int fd = rx->fd;
        rx->fd = -1;
        int rc = close_written(fd, part, cause);
        if (rc == 0 && rename(part, final) < 0) {
            rc = -errno;
            set_cause(cause, xasprintf("cannot move '%s' to '%s': %s", part, final,
                                       strerror(-rc)));
        }
        if (rc < 0) {
            discard_receive(rx);
            return rc;
        }
    } else {
        os->mem_reserved -= e->size;
    }
    memcpy(e->hash, got, sizeof got);
    e->hash_known = true;
    e->kind = owned ? KIND_OWNED : KIND_CACHED;
    e->pins = owned ? 0 : 1;
    account_in(os, e);
    free_receiver(rx);
    if (!owned)
        evict_over_cap(os);
    return 0;
}

int objstore_recv_commit(struct objstore_recv *rx, const uint8_t hash[OBJSTORE_HASH_BYTES],
                         char **cause)
{
    return rx ? commit(rx, hash, false, cause) : -EINVAL;
}

int objstore_recv_commit_owned(struct objstore_recv *rx,
                               const uint8_t hash[OBJSTORE_HASH_BYTES], char **cause)
{
    return rx ? commit(rx, hash, true, cause) : -EINVAL;
}

void objstore_recv_abort(struct objstore_recv *rx)
{
    if (rx)
        discard_receive(rx);
}

/* ---- reads and pins ------------------------------------------------------------- */

bool objstore_has(const struct objstore *os, uint64_t key)
{
    return os && visible(os, key);
}

int64_t objstore_size(const struct objstore *os, uint64_t key)
{
    struct entry *e = os ? visible(os, key) : NULL;
    return e ? (int64_t)e->size : -ENOENT;
}

int objstore_acquire(struct objstore *os, uint64_t key)
{
    if (!os)
        return -EINVAL;
    struct entry *e = u64map_get(&os->index, key);
    if (!e || e->kind == KIND_RECEIVING) {
        os->st.cache_misses++;
        return e ? -EINPROGRESS : -ENOENT;
    }
    if (e->kind == KIND_OWNED)
        os->st.local_hits++;
    else
        os->st.cache_hits++;
    pin_entry(e);
    return 0;
}

int objstore_pin(struct objstore *os, uint64_t key)
{
    struct entry *e = os ? visible(os, key) : NULL;
    if (!e)
        return -ENOENT;
    pin_entry(e);
    return 0;
}

int objstore_unpin(struct objstore *os, uint64_t key)
{
    struct entry *e = os ? visible(os, key) : NULL;
    if (!e)
        return -ENOENT;
    if (e->pins == 0)
        return -EINVAL;
    if (--e->pins > 0)
        return 0;
    if (e->fd >= 0) {
        close(e->fd);
        e->fd = -1;
    }
    if (e->kind == KIND_CACHED) {
        lru_push_front(os, e);
        evict_over_cap(os);
    }
    return 0;
}

/* Feeds bytes just read at `offset` to the entry's hash when they are the next ones
 * it needs, and completes it at the end.  Out of memory only means no head start. */
static void hash_along(struct entry *e, uint64_t offset, const void *buf, size_t n)
{
    if (e->hash_known || offset != (e->hashing ? e->hashing->done : 0))
        return;
    if (!e->hashing) {
        e->hashing = malloc(sizeof *e->hashing);
        if (!e->hashing)
            return;
        csum_init(&e->hashing->hs);
        e->hashing->done = 0;
    }
    csum_update(&e->hashing->hs, buf, n);
    e->hashing->done += n;
    if (e->hashing->done == e->size) {
        csum_final(&e->hashing->hs, e->hash);
        e->hash_known = true;
        free(e->hashing);
        e->hashing = NULL;
    }
}

static int open_object(const struct objstore *os, const struct entry *e)
{
    char path[PATH_MAX];
    object_path(path, os, e->key, "");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

ssize_t objstore_read(struct objstore *os, uint64_t key, uint64_t offset, void *buf, size_t len)
{
    struct entry *e = os ? visible(os, key) : NULL;
    if (!e)
        return -ENOENT;
    if (offset > e->size || (!buf && len))
        return -EINVAL;
    uint64_t left = e->size - offset;
    size_t n = left < len ? (size_t)left : len;
    if (n > SSIZE_MAX)
        n = SSIZE_MAX;
    if (n == 0)
        return 0;
    if (e->generated) {
        objstore_synthetic_fill(e->key, offset, buf, n);
        hash_along(e, offset, buf, n);
        return (ssize_t)n;
    }
    if (!e->in_file) {
        memcpy(buf, e->data + offset, n);
        hash_along(e, offset, buf, n);
        return (ssize_t)n;
    }
    int fd = e->fd;
    if (fd < 0 && (fd = open_object(os, e)) < 0)
        return fd;
    int rc = pread_all(fd, buf, n, offset);
    if (e->fd < 0) {
        if (e->pins && rc == 0)
            e->fd = fd;
        else
            close(fd);
    }
    if (rc < 0)
        return rc;
    hash_along(e, offset, buf, n);
    return (ssize_t)n;
}

int objstore_hash(struct objstore *os, uint64_t key, uint8_t out[OBJSTORE_HASH_BYTES])
{
    struct entry *e = os ? visible(os, key) : NULL;
    if (!e)
        return -ENOENT;
    if (!out)
        return -EINVAL;
    if (!e->hash_known && e->size == 0) {
        struct csum hs;
        csum_init(&hs);
        csum_final(&hs, e->hash);
        e->hash_known = true;
    }
    if (!e->hash_known) {
        /* The rest of the content goes through hash_along, which completes the hash
         * with the last byte; an I/O error keeps what was hashed for a later call. */
        uint64_t from = e->hashing ? e->hashing->done : 0;
        if (e->generated) {
            uint8_t *buf = malloc(IO_CHUNK);
            if (!buf)
                return -ENOMEM;
            for (uint64_t off = from; off < e->size;) {
                size_t n = e->size - off < IO_CHUNK ? (size_t)(e->size - off) : IO_CHUNK;
                objstore_synthetic_fill(e->key, off, buf, n);
                hash_along(e, off, buf, n);
                off += n;
            }
            free(buf);
        } else if (!e->in_file) {
            hash_along(e, from, e->data + from, (size_t)(e->size - from));
        } else {
            int fd = e->fd >= 0 ? e->fd : open_object(os, e);
            if (fd < 0)
                return fd;
            uint8_t *buf = malloc(IO_CHUNK);
            int rc = buf ? 0 : -ENOMEM;
            for (uint64_t off = from; rc == 0 && off < e->size;) {
                size_t n = e->size - off < IO_CHUNK ? (size_t)(e->size - off) : IO_CHUNK;
                if ((rc = pread_all(fd, buf, n, off)) == 0)
                    hash_along(e, off, buf, n);
                off += n;
            }
            free(buf);
            if (fd != e->fd)
                close(fd);
            if (rc < 0)
                return rc;
        }
        if (!e->hash_known)
            return -ENOMEM; /* hash_along could not allocate its state */
    }
    memcpy(out, e->hash, OBJSTORE_HASH_BYTES);
    return 0;
}

int objstore_materialize(struct objstore *os, uint64_t key, const char *path, char **cause)
{
    if (!os || !path)
        return -EINVAL;
    struct entry *e = visible(os, key);
    if (!e) {
        set_cause(cause, xasprintf("cannot stage object %016" PRIx64 " as '%s': not held here",
                                   key, path));
        return -ENOENT;
    }
    if (e->in_file) {
        char src[PATH_MAX];
        object_path(src, os, key, "");
        if (link(src, path) == 0)
            return 0;
        int err = errno;
        /* Only "links are impossible here" falls back to a copy; anything else (the
         * target exists, the directory is missing) would fail the copy the same way. */
        if (err != EXDEV && err != EPERM && err != EMLINK && err != EOPNOTSUPP) {
            set_cause(cause, xasprintf("cannot stage object %016" PRIx64 " as '%s': %s", key,
                                       path, strerror(err)));
            return -err;
        }
        uint64_t copied;
        return copy_file(src, path, &copied, cause);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
    if (fd < 0) {
        int err = errno;
        set_cause(cause, xasprintf("cannot stage object %016" PRIx64 " as '%s': %s", key, path,
                                   strerror(err)));
        return -err;
    }
    int rc = 0;
    if (e->generated) {
        uint8_t *buf = e->size ? malloc(IO_CHUNK) : NULL;
        if (e->size && !buf)
            rc = -ENOMEM;
        for (uint64_t off = 0; rc == 0 && off < e->size;) {
            size_t n = e->size - off < IO_CHUNK ? (size_t)(e->size - off) : IO_CHUNK;
            objstore_synthetic_fill(e->key, off, buf, n);
            rc = fs_write_all(fd, buf, n);
            off += n;
        }
        free(buf);
    } else if (e->size) {
        rc = fs_write_all(fd, e->data, (size_t)e->size);
    }
    if (rc < 0)
        set_cause(cause, xasprintf("cannot write '%s': %s", path, strerror(-rc)));
    int crc = close_written(fd, path, rc == 0 ? cause : NULL);
    if (rc == 0)
        rc = crc;
    if (rc < 0)
        unlink(path);
    return rc;
}

bool objstore_wants_spill(const struct objstore *os, uint64_t key)
{
    const struct entry *e = os ? visible(os, key) : NULL;
    return e && !e->in_file && e->size >= OBJSTORE_SPILL_MIN;
}

int objstore_spill(struct objstore *os, uint64_t key, uint64_t budget, char **cause)
{
    struct entry *e = os ? visible(os, key) : NULL;
    if (!e)
        return -ENOENT;
    if (e->in_file)
        return 1;
    char part[PATH_MAX];
    object_path(part, os, key, ".part");
    if (e->spill_fd < 0) {
        int fd = create_file(part, cause);
        if (fd < 0)
            return fd;
        e->spill_fd = fd;
        e->spilled = 0;
    }
    uint8_t *buf = NULL;
    if (e->generated && !(buf = malloc(IO_CHUNK))) {
        set_cause(cause, xasprintf("cannot write object file '%s': out of memory", part));
        spill_abort(os, e);
        return -ENOMEM;
    }
    int rc = 0;
    for (uint64_t done = 0; rc == 0 && e->spilled < e->size && done < budget;) {
        uint64_t left = e->size - e->spilled;
        size_t n = left < IO_CHUNK ? (size_t)left : IO_CHUNK;
        const uint8_t *from = e->data + e->spilled;
        if (e->generated) {
            objstore_synthetic_fill(e->key, e->spilled, buf, n);
            from = buf;
        }
        rc = fs_write_all(e->spill_fd, from, n);
        e->spilled += n;
        done += n;
    }
    free(buf);
    if (rc < 0) {
        set_cause(cause, xasprintf("cannot write object file '%s': %s", part, strerror(-rc)));
        spill_abort(os, e);
        return rc;
    }
    if (e->spilled < e->size)
        return 0;
    int fd = e->spill_fd;
    e->spill_fd = -1;
    char path[PATH_MAX];
    object_path(path, os, key, "");
    if ((rc = close_written(fd, part, cause)) < 0 || rename(part, path) < 0) {
        if (rc == 0) {
            rc = -errno;
            set_cause(cause, xasprintf("cannot rename '%s' to '%s': %s", part, path,
                                       strerror(-rc)));
        }
        unlink(part);
        e->spilled = 0;
        return rc;
    }
    /* Same bytes, now in a file: the accounting moves from memory (or nothing, for
     * generated content) to files, and readers open the file from here on. */
    account_out(os, e);
    free(e->data);
    e->data = NULL;
    e->generated = false;
    e->in_file = true;
    e->spilled = 0;
    account_in(os, e);
    return 1;
}

void objstore_get_stats(const struct objstore *os, struct objstore_stats *out)
{
    if (!os || !out)
        return;
    *out = os->st;
}
