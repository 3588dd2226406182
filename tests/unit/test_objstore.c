/*
 * objstore: synthetic content, the memory/file spill rule, chunked receives checked
 * against BLAKE2b, cache eviction order under pins and with caching off, staging files,
 * adopting command outputs, spilling big objects into files a budget at a time, and the counters.  Each test gets a private directory under
 * /tmp; stores spill into subdirectories they create, so destroy must leave nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "core/runtime/objstore.h"

struct fixture {
    char root[64];          /* private mkdtemp directory */
    int open_fds;           /* at setup: teardown checks the store leaked none */
};

static int count_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/jackdaw-objstore-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    f->open_fds = count_open_fds();
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(count_open_fds(), f->open_fds);
    nftw(f->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static char *sub(const struct fixture *f, const char *name)
{
    char *p = malloc(strlen(f->root) + strlen(name) + 2);
    sprintf(p, "%s/%s", f->root, name);
    return p;
}

static struct objstore *store(const struct fixture *f, const char *name, uint64_t mem_cap,
                              uint64_t cache_cap)
{
    char *dir = sub(f, name);
    char *cause = NULL;
    struct objstore *os = objstore_create(dir, mem_cap, cache_cap, &cause);
    if (!os)
        fail_msg("objstore_create: %s", cause);
    free(dir);
    return os;
}

/* Entries in a directory other than "." and "..", or -1 when it does not exist. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void object_file(char *out, size_t cap, const struct fixture *f, const char *name,
                        uint64_t key, const char *suffix)
{
    snprintf(out, cap, "%s/%s/%016" PRIx64 "%s", f->root, name, key, suffix);
}

/* The store's checksum as the header promises it: CRC-32, big-endian. */
static void crc_bytes(uLong crc, uint8_t out[OBJSTORE_HASH_BYTES])
{
    assert_int_equal(OBJSTORE_HASH_BYTES, 4);
    out[0] = (uint8_t)(crc >> 24);
    out[1] = (uint8_t)(crc >> 16);
    out[2] = (uint8_t)(crc >> 8);
    out[3] = (uint8_t)crc;
}

static void synthetic_hash(uint64_t key, uint64_t size, uint8_t out[OBJSTORE_HASH_BYTES])
{
    uLong crc = crc32(0L, Z_NULL, 0);
    uint8_t buf[8192];
    for (uint64_t off = 0; off < size;) {
        size_t n = size - off < sizeof buf ? (size_t)(size - off) : sizeof buf;
        objstore_synthetic_fill(key, off, buf, n);
        crc = crc32(crc, buf, (uInt)n);
        off += n;
    }
    crc_bytes(crc, out);
}

/* Reads the whole object in `chunk`-sized pieces and compares with the synthetic
 * content of `source_key`. */
static void assert_synthetic_content(struct objstore *os, uint64_t key, uint64_t source_key,
                                     uint64_t size, size_t chunk)
{
    assert_int_equal(objstore_size(os, key), (int64_t)size);
    uint8_t *got = malloc(chunk), *want = malloc(chunk);
    for (uint64_t off = 0; off < size; off += chunk) {
        size_t expect = size - off < chunk ? (size_t)(size - off) : chunk;
        ssize_t n = objstore_read(os, key, off, got, chunk);
        assert_int_equal(n, (ssize_t)expect);
        objstore_synthetic_fill(source_key, off, want, expect);
        assert_memory_equal(got, want, expect);
    }
    assert_int_equal(objstore_read(os, key, size, got, chunk), 0);
    assert_int_equal(objstore_read(os, key, size + 1, got, chunk), -EINVAL);
    free(got);
    free(want);
    uint8_t h[OBJSTORE_HASH_BYTES], expect_h[OBJSTORE_HASH_BYTES];
    assert_int_equal(objstore_hash(os, key, h), 0);
    synthetic_hash(source_key, size, expect_h);
    assert_memory_equal(h, expect_h, sizeof h);
}

/* Streams `key` from src into dst as the fetch protocol would: pin, chunked reads,
 * hash, commit.  Returns the commit's result; on success dst holds one pin. */
static int transfer(struct objstore *src, struct objstore *dst, uint64_t key, size_t chunk)
{
    int64_t size = objstore_size(src, key);
    assert_true(size >= 0);
    assert_int_equal(objstore_pin(src, key), 0);
    struct objstore_recv *rx = NULL;
    char *cause = NULL;
    int rc = objstore_recv_begin(dst, key, (uint64_t)size, &rx, &cause);
    if (rc < 0)
        fail_msg("recv_begin: %s", cause);
    uint8_t *buf = malloc(chunk);
    for (uint64_t off = 0; off < (uint64_t)size;) {
        ssize_t n = objstore_read(src, key, off, buf, chunk);
        assert_true(n > 0);
        assert_int_equal(objstore_recv_write(rx, off, buf, (size_t)n, NULL), 0);
        off += (uint64_t)n;
    }
    free(buf);
    uint8_t h[OBJSTORE_HASH_BYTES];
    assert_int_equal(objstore_hash(src, key, h), 0);
    assert_int_equal(objstore_unpin(src, key), 0);
    rc = objstore_recv_commit(rx, h, &cause);
    if (rc < 0)
        free(cause);
    return rc;
}

/* A copy of `size` synthetic bytes of `key`, received whole and committed. */
static void receive_synthetic(struct objstore *os, uint64_t key, uint64_t size)
{
    struct objstore_recv *rx = NULL;
    assert_int_equal(objstore_recv_begin(os, key, size, &rx, NULL), 0);
    uint8_t *buf = malloc(size ? size : 1);
    objstore_synthetic_fill(key, 0, buf, size);
    assert_int_equal(objstore_recv_write(rx, 0, buf, size, NULL), 0);
    free(buf);
    uint8_t h[OBJSTORE_HASH_BYTES];
    synthetic_hash(key, size, h);
    assert_int_equal(objstore_recv_commit(rx, h, NULL), 0);
}

static void test_synthetic_content_is_deterministic(void **state)
{
    (void)state;
    uint8_t a[100], b[100], c[100];
    objstore_synthetic_fill(0, 0, a, sizeof a);
    /* splitmix64's first output from seed 0, little-endian: the format every node and
     * every version must agree on. */
    static const uint8_t first[8] = {0xaf, 0xcd, 0x1d, 0x7b, 0x39, 0xa8, 0x20, 0xe2};
    assert_memory_equal(a, first, 8);
    objstore_synthetic_fill(0, 0, b, sizeof b);
    assert_memory_equal(a, b, sizeof a);
    /* Any range, aligned or not, is the same bytes as the whole. */
    for (uint64_t off = 0; off < 40; off++) {
        for (size_t len = 0; len < 30; len += 7) {
            objstore_synthetic_fill(0, off, c, len);
            assert_memory_equal(c, a + off, len);
        }
    }
    objstore_synthetic_fill(1, 0, c, sizeof c);
    assert_memory_not_equal(a, c, sizeof a);
}

static void test_put_and_read_across_the_spill_boundary(void **state)
{
    struct fixture *f = *state;
    struct objstore *os = store(f, "s", 100000, 0);
    assert_int_equal(objstore_put_synthetic(os, 1, 40000, NULL), 0); /* memory */
    assert_int_equal(objstore_put_synthetic(os, 2, 40000, NULL), 0); /* memory: 80000 */
    assert_int_equal(objstore_put_synthetic(os, 3, 40000, NULL), 0); /* over: file */
    assert_int_equal(objstore_put_synthetic(os, 4, 20000, NULL), 0); /* fits exactly */
    assert_int_equal(objstore_put_synthetic(os, 5, 1, NULL), 0);     /* full: file */
    assert_int_equal(objstore_put_synthetic(os, 6, 0, NULL), 0);     /* empty: memory */
    assert_int_equal(objstore_put_synthetic(os, 7, 1000003, NULL), 0);

    struct objstore_stats st;
    objstore_get_stats(os, &st);
    assert_int_equal(st.owned_objects, 7);
    assert_int_equal(st.owned_bytes, 1140004);
    assert_int_equal(st.mem_bytes, 100000);
    assert_int_equal(st.file_bytes, 1040004);

    char path[256];
    struct stat sb;
    object_file(path, sizeof path, f, "s", 3, "");
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 40000);
    assert_int_equal(sb.st_mode & 0777, 0400);
    object_file(path, sizeof path, f, "s", 2, "");
    assert_int_equal(stat(path, &sb), -1);

    static const uint64_t sizes[] = {40000, 40000, 40000, 20000, 1, 0, 1000003};
    for (uint64_t k = 1; k <= 7; k++) {
        assert_synthetic_content(os, k, k, sizes[k - 1], 4093);
        assert_synthetic_content(os, k, k, sizes[k - 1], 65536);
    }
    /* Unpinned, a file object holds no descriptor between reads. */
    assert_int_equal(count_open_fds(), f->open_fds);
    /* Pinned, chunked reads reuse one descriptor, released by the last unpin. */
    assert_int_equal(objstore_pin(os, 7), 0);
    assert_synthetic_content(os, 7, 7, 1000003, 65536);
    assert_int_equal(count_open_fds(), f->open_fds + 1);
    assert_int_equal(objstore_unpin(os, 7), 0);
    assert_int_equal(count_open_fds(), f->open_fds);

    char *cause = NULL;
    assert_int_equal(objstore_put_synthetic(os, 3, 10, &cause), -EEXIST);
    assert_non_null(strstr(cause, "0000000000000003"));
    free(cause);
    assert_int_equal(objstore_read(os, 99, 0, path, 1), -ENOENT);
    assert_int_equal(objstore_size(os, 99), -ENOENT);

    /* Memory freed by a removal is reused by the next object. */
    assert_int_equal(objstore_remove(os, 1), 0);
    assert_int_equal(objstore_put_synthetic(os, 8, 40000, NULL), 0);
    objstore_get_stats(os, &st);
    assert_int_equal(st.mem_bytes, 100000);
    assert_int_equal(objstore_remove(os, 3), 0);
    object_file(path, sizeof path, f, "s", 3, "");
    assert_int_equal(stat(path, &sb), -1);
    assert_int_equal(objstore_remove(os, 3), -ENOENT);

    objstore_destroy(os);
    char *dir = sub(f, "s");
    assert_int_equal(count_files(dir), -1); /* created by the store, so removed too */
    free(dir);
    objstore_destroy(NULL);
}

static void check_transfer(const struct fixture *f, uint64_t dst_mem_cap, uint64_t size,
                           size_t chunk)
{
    struct objstore *a = store(f, "a", 4096, 0);
    struct objstore *b = store(f, "b", dst_mem_cap, 1 << 30);
    const uint64_t key = 0x1234abcd5678ef90ULL;
    assert_int_equal(objstore_put_synthetic(a, key, size, NULL), 0);
    assert_int_equal(transfer(a, b, key, chunk), 0);
    assert_true(objstore_has(b, key));
    assert_synthetic_content(b, key, key, size, 65536);

    uint8_t ha[OBJSTORE_HASH_BYTES], hb[OBJSTORE_HASH_BYTES];
    assert_int_equal(objstore_hash(a, key, ha), 0);
    assert_int_equal(objstore_hash(b, key, hb), 0);
    assert_memory_equal(ha, hb, sizeof ha);

    struct objstore_stats st;
    objstore_get_stats(b, &st);
    assert_int_equal(st.cached_objects, 1);
    assert_int_equal(st.cached_bytes, size);
    assert_int_equal(st.owned_objects, 0);
    assert_int_equal(st.bytes_received, size);
    assert_int_equal(size <= dst_mem_cap ? st.mem_bytes : st.file_bytes, size);
    /* The commit's pin is the caller's. */
    assert_int_equal(objstore_remove(b, key), -EBUSY);
    assert_int_equal(objstore_unpin(b, key), 0);
    assert_int_equal(objstore_unpin(b, key), -EINVAL);
    objstore_destroy(a);
    objstore_destroy(b);
}

static void test_received_copy_is_identical(void **state)
{
    struct fixture *f = *state;
    check_transfer(f, 1 << 30, 3000017, 65536); /* into memory */
    check_transfer(f, 0, 3000017, 65536);       /* into a file */
    check_transfer(f, 1 << 30, 100, 7);         /* tiny chunks */
    check_transfer(f, 0, 0, 16);                /* empty object */
    check_transfer(f, 0, 1 << 20, 1 << 20);     /* one chunk */
}

static void test_bad_copies_are_refused(void **state)
{
    struct fixture *f = *state;
    for (int in_file = 0; in_file < 2; in_file++) {
        struct objstore *os = store(f, "r", in_file ? 0 : 1 << 20, 1 << 20);
        char *dir = sub(f, "r");
        const uint64_t key = 77, size = 10000;
        uint8_t data[10000], h[OBJSTORE_HASH_BYTES];
        objstore_synthetic_fill(key, 0, data, size);
        synthetic_hash(key, size, h);

        /* Wrong hash: refused, invisible, nothing left behind. */
        struct objstore_recv *rx = NULL;
        assert_int_equal(objstore_recv_begin(os, key, size, &rx, NULL), 0);
        assert_false(objstore_has(os, key));
        assert_int_equal(objstore_acquire(os, key), -EINPROGRESS);
        assert_int_equal(objstore_pin(os, key), -ENOENT);
        assert_int_equal(objstore_read(os, key, 0, data, 1), -ENOENT);
        struct objstore_recv *dup = NULL;
        assert_int_equal(objstore_recv_begin(os, key, size, &dup, NULL), -EALREADY);
        assert_int_equal(objstore_put_synthetic(os, key, size, NULL), -EEXIST);
        assert_int_equal(count_files(dir), in_file ? 1 : 0);
        assert_int_equal(objstore_recv_write(rx, 0, data, size, NULL), 0);
        uint8_t wrong[OBJSTORE_HASH_BYTES];
        memcpy(wrong, h, sizeof wrong);
        wrong[OBJSTORE_HASH_BYTES - 1] ^= 1;
        char *cause = NULL;
        assert_int_equal(objstore_recv_commit(rx, wrong, &cause), -EBADMSG);
        assert_non_null(strstr(cause, "checksum"));
        free(cause);
        assert_false(objstore_has(os, key));
        assert_int_equal(count_files(dir), 0);

        /* One corrupted byte with the source's hash: refused. */
        assert_int_equal(objstore_recv_begin(os, key, size, &rx, NULL), 0);
        data[5000] ^= 0x80;
        assert_int_equal(objstore_recv_write(rx, 0, data, 5000, NULL), 0);
        assert_int_equal(objstore_recv_write(rx, 5000, data + 5000, 5000, NULL), 0);
        data[5000] ^= 0x80;
        assert_int_equal(objstore_recv_commit(rx, h, NULL), -EBADMSG);
        assert_false(objstore_has(os, key));

        /* Out of order, overlapping and overflowing chunks are protocol errors that
         * leave the receiver usable; a short commit is refused. */
        assert_int_equal(objstore_recv_begin(os, key, size, &rx, NULL), 0);
        assert_int_equal(objstore_recv_write(rx, 100, data + 100, 100, &cause), -EPROTO);
        free(cause);
        assert_int_equal(objstore_recv_write(rx, 0, data, 100, NULL), 0);
        assert_int_equal(objstore_recv_write(rx, 50, data + 50, 100, NULL), -EPROTO);
        assert_int_equal(objstore_recv_write(rx, 100, data + 100, size, NULL), -EPROTO);
        assert_int_equal(objstore_recv_write(rx, 100, data + 100, 0, NULL), 0);
        assert_int_equal(objstore_recv_commit(rx, h, &cause), -EPROTO);
        free(cause);
        assert_false(objstore_has(os, key));

        /* Abort leaves nothing; then a clean receive of the same key succeeds. */
        assert_int_equal(objstore_recv_begin(os, key, size, &rx, NULL), 0);
        assert_int_equal(objstore_recv_write(rx, 0, data, 10, NULL), 0);
        objstore_recv_abort(rx);
        objstore_recv_abort(NULL);
        assert_int_equal(count_files(dir), 0);
        receive_synthetic(os, key, size);
        assert_true(objstore_has(os, key));
        assert_int_equal(count_files(dir), in_file ? 1 : 0);
        assert_int_equal(objstore_recv_begin(os, key, size, &rx, NULL), -EEXIST);

        struct objstore_stats st;
        objstore_get_stats(os, &st);
        assert_int_equal(st.cached_objects, 1);
        assert_int_equal(st.bytes_received, 10000 + 10000 + 100 + 10 + 10000);
        /* Failed receives gave back their memory reservations: all of the cap but the
         * one visible copy is free again. */
        assert_int_equal(st.mem_bytes + st.file_bytes, size);
        if (!in_file) {
            assert_int_equal(objstore_put_synthetic(os, 500, (1 << 20) - size, NULL), 0);
            objstore_get_stats(os, &st);
            assert_int_equal(st.mem_bytes, 1 << 20);
        }
        assert_int_equal(objstore_unpin(os, key), 0);
        objstore_destroy(os);
        free(dir);
    }
}

static void test_lru_eviction_order(void **state)
{
    struct fixture *f = *state;
    /* mem_cap 2500: copies 1 and 2 in memory, the rest in files; eviction must not
     * care which. */
    struct objstore *os = store(f, "c", 2500, 3000);
    for (uint64_t k = 1; k <= 3; k++) {
        receive_synthetic(os, k, 1000);
        assert_int_equal(objstore_unpin(os, k), 0);
    }
    struct objstore_stats st;
    objstore_get_stats(os, &st);
    assert_int_equal(st.evictions, 0);
    assert_int_equal(st.cached_bytes, 3000);

    /* Using 1 makes 2 the least recently used. */
    assert_int_equal(objstore_acquire(os, 1), 0);
    assert_int_equal(objstore_unpin(os, 1), 0);
    receive_synthetic(os, 4, 1000);
    assert_int_equal(objstore_unpin(os, 4), 0);
    assert_false(objstore_has(os, 2));
    assert_true(objstore_has(os, 1) && objstore_has(os, 3) && objstore_has(os, 4));

    /* A copy twice the size pushes out the two oldest: 3, then 1. */
    receive_synthetic(os, 5, 2000);
    assert_false(objstore_has(os, 3));
    assert_false(objstore_has(os, 1));
    assert_true(objstore_has(os, 4) && objstore_has(os, 5));
    objstore_get_stats(os, &st);
    assert_int_equal(st.evictions, 3);
    assert_int_equal(st.cached_objects, 2);
    assert_int_equal(st.cached_bytes, 3000);
    /* Evicted copies' memory and files are gone: 4 (file) and 5 (file) remain. */
    assert_int_equal(st.mem_bytes + st.file_bytes, 3000);
    char *dir = sub(f, "c");
    assert_int_equal(count_files(dir), 2);
    free(dir);
    assert_int_equal(objstore_unpin(os, 5), 0);
    assert_synthetic_content(os, 5, 5, 2000, 333);

    /* Owned objects are never evicted, whatever the pressure. */
    assert_int_equal(objstore_put_synthetic(os, 100, 50000, NULL), 0);
    receive_synthetic(os, 6, 3000);
    assert_int_equal(objstore_unpin(os, 6), 0);
    assert_true(objstore_has(os, 100));
    assert_true(objstore_has(os, 6));
    assert_false(objstore_has(os, 4) || objstore_has(os, 5));
    objstore_destroy(os);
}

static void test_pinned_copies_survive_eviction(void **state)
{
    struct fixture *f = *state;
    struct objstore *os = store(f, "p", 1 << 20, 2000);
    receive_synthetic(os, 1, 1000); /* each commit leaves its pin held */
    receive_synthetic(os, 2, 1000);
    receive_synthetic(os, 3, 1000);
    struct objstore_stats st;
    objstore_get_stats(os, &st);
    assert_int_equal(st.cached_bytes, 3000); /* over the cap, but nothing may go */
    assert_int_equal(st.evictions, 0);
    assert_int_equal(objstore_remove(os, 2), -EBUSY);

    /* A second pin (another task) keeps 2 while the first is released. */
    assert_int_equal(objstore_pin(os, 2), 0);
    assert_int_equal(objstore_unpin(os, 2), 0);
    assert_true(objstore_has(os, 2));
    /* Last unpin: 2 is the only evictable copy and the cache is over its cap. */
    assert_int_equal(objstore_unpin(os, 2), 0);
    assert_false(objstore_has(os, 2));
    assert_int_equal(objstore_unpin(os, 2), -ENOENT);
    /* Back at the cap: unpinning 1 keeps it. */
    assert_int_equal(objstore_unpin(os, 1), 0);
    assert_true(objstore_has(os, 1));
    /* A new copy evicts the unpinned 1, not the pinned 3. */
    receive_synthetic(os, 4, 1000);
    assert_false(objstore_has(os, 1));
    assert_true(objstore_has(os, 3) && objstore_has(os, 4));
    objstore_get_stats(os, &st);
    assert_int_equal(st.evictions, 2);
    /* A copy bigger than the whole cache still serves its task, then goes. */
    receive_synthetic(os, 5, 5000);
    assert_true(objstore_has(os, 5));
    assert_int_equal(objstore_unpin(os, 5), 0);
    assert_false(objstore_has(os, 5));
    assert_int_equal(objstore_unpin(os, 3), 0);
    assert_int_equal(objstore_unpin(os, 4), 0);
    objstore_destroy(os);
}

static void test_cache_off(void **state)
{
    struct fixture *f = *state;
    struct objstore *os = store(f, "off", 0, 0); /* everything in files, no cache */
    char *dir = sub(f, "off");
    receive_synthetic(os, 9, 70000);
    assert_true(objstore_has(os, 9));
    assert_int_equal(count_files(dir), 1);
    assert_int_equal(objstore_acquire(os, 9), 0); /* a second task uses it meanwhile */
    assert_int_equal(objstore_unpin(os, 9), 0);
    assert_true(objstore_has(os, 9));
    assert_synthetic_content(os, 9, 9, 70000, 65536);
    assert_int_equal(objstore_unpin(os, 9), 0);
    assert_false(objstore_has(os, 9));
    assert_int_equal(count_files(dir), 0);
    assert_int_equal(objstore_acquire(os, 9), -ENOENT);

    /* Owned objects are unaffected by the cache being off. */
    assert_int_equal(objstore_put_synthetic(os, 10, 100, NULL), 0);
    assert_int_equal(objstore_acquire(os, 10), 0);
    assert_int_equal(objstore_unpin(os, 10), 0);
    assert_true(objstore_has(os, 10));

    struct objstore_stats st;
    objstore_get_stats(os, &st);
    assert_int_equal(st.evictions, 1);
    assert_int_equal(st.cached_objects, 0);
    assert_int_equal(st.cached_bytes, 0);
    assert_int_equal(st.cache_hits, 1);
    assert_int_equal(st.cache_misses, 1);
    assert_int_equal(st.local_hits, 1);
    objstore_destroy(os);
    free(dir);
}

static void assert_file_is_synthetic(const char *path, uint64_t key, uint64_t size)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, (off_t)size);
    assert_int_equal(sb.st_mode & 0222, 0);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    uint8_t *got = malloc(size + 1), *want = malloc(size + 1);
    assert_int_equal(fread(got, 1, size + 1, fp), size);
    fclose(fp);
    objstore_synthetic_fill(key, 0, want, size);
    assert_memory_equal(got, want, size);
    free(got);
    free(want);
}

static void test_materialize(void **state)
{
    struct fixture *f = *state;
    struct objstore *os = store(f, "m", 1000, 1 << 20);
    assert_int_equal(objstore_put_synthetic(os, 1, 500, NULL), 0);    /* memory */
    assert_int_equal(objstore_put_synthetic(os, 2, 300001, NULL), 0); /* file */
    receive_synthetic(os, 3, 200000);                                 /* cached, file */
    char *p1 = sub(f, "in1"), *p2 = sub(f, "in2"), *p3 = sub(f, "in3");
    assert_int_equal(objstore_materialize(os, 1, p1, NULL), 0);
    assert_int_equal(objstore_materialize(os, 2, p2, NULL), 0);
    assert_int_equal(objstore_materialize(os, 3, p3, NULL), 0);
    assert_file_is_synthetic(p1, 1, 500);
    assert_file_is_synthetic(p2, 2, 300001);
    assert_file_is_synthetic(p3, 3, 200000);
    /* Same file system: the file object is linked, not copied. */
    struct stat sb;
    assert_int_equal(stat(p2, &sb), 0);
    assert_int_equal(sb.st_nlink, 2);
    /* Read-only, so a task cannot write through the link into the store (unless it
     * runs as root, which ignores modes). */
    if (geteuid() != 0)
        assert_int_equal(open(p2, O_WRONLY), -1);

    char *cause = NULL;
    assert_int_equal(objstore_materialize(os, 1, p1, &cause), -EEXIST);
    assert_non_null(strstr(cause, p1));
    free(cause);
    assert_int_equal(objstore_materialize(os, 2, p1, NULL), -EEXIST);
    assert_int_equal(objstore_materialize(os, 42, p1, &cause), -ENOENT);
    free(cause);
    char *missing = sub(f, "no/such/dir/x");
    assert_int_equal(objstore_materialize(os, 2, missing, &cause), -ENOENT);
    free(cause);
    free(missing);

    /* The staged file outlives eviction of the copy it came from. */
    assert_int_equal(objstore_unpin(os, 3), 0);
    objstore_destroy(os);
    assert_file_is_synthetic(p2, 2, 300001);
    assert_file_is_synthetic(p3, 3, 200000);
    free(p1);
    free(p2);
    free(p3);
}

/* Generated objects hold no bytes, yet read, hash, transfer and stage exactly as the
 * same content stored for real would. */
static void test_generated_objects(void **state)
{
    struct fixture *f = *state;
    struct objstore *gen = store(f, "g", 1000, 1 << 20);
    struct objstore *real = store(f, "r", 1 << 30, 0);
    struct objstore *dst = store(f, "d", 1 << 30, 1 << 30);
    const uint64_t key = 0x77aa55ULL, size = 700001;
    assert_int_equal(objstore_put_generated(gen, key, size, NULL), 0);
    assert_int_equal(objstore_put_synthetic(real, key, size, NULL), 0);
    char *cause = NULL;
    assert_int_equal(objstore_put_generated(gen, key, 1, &cause), -EEXIST);
    free(cause);

    struct objstore_stats st;
    objstore_get_stats(gen, &st);
    assert_int_equal(st.owned_objects, 1);
    assert_int_equal(st.owned_bytes, size);
    assert_int_equal(st.mem_bytes, 0);
    assert_int_equal(st.file_bytes, 0);
    assert_int_equal(objstore_size(gen, key), (int64_t)size);

    /* Hash from scratch, then via a streamed transfer into another store. */
    uint8_t hg[OBJSTORE_HASH_BYTES], hr[OBJSTORE_HASH_BYTES], hd[OBJSTORE_HASH_BYTES];
    assert_int_equal(objstore_hash(gen, key, hg), 0);
    assert_int_equal(objstore_hash(real, key, hr), 0);
    assert_memory_equal(hg, hr, sizeof hg);
    assert_synthetic_content(gen, key, key, size, 4099);
    assert_int_equal(transfer(gen, dst, key, 65536), 0);
    assert_int_equal(objstore_hash(dst, key, hd), 0);
    assert_memory_equal(hd, hr, sizeof hd);
    assert_synthetic_content(dst, key, key, size, 65536);
    assert_int_equal(objstore_unpin(dst, key), 0);

    char *p = sub(f, "staged");
    assert_int_equal(objstore_materialize(gen, key, p, NULL), 0);
    assert_file_is_synthetic(p, key, size);
    free(p);
    assert_int_equal(objstore_remove(gen, key), 0);
    assert_false(objstore_has(gen, key));
    objstore_destroy(gen);
    objstore_destroy(real);
    objstore_destroy(dst);
}

/*
 * A big generated object and a big in-memory one are written into the store's files a
 * budget at a time (objstore_spill): 0 while bytes remain, 1 at the end; then they are
 * files (accounted as such, memory given back), read and hash as before, and staging
 * links them.  An object removed part way leaves no file behind; small objects and
 * files need no spill.
 */
static void test_spill(void **state)
{
    struct fixture *f = *state;
    const uint64_t big = OBJSTORE_SPILL_MIN * 3 + 12345;
    struct objstore *os = store(f, "s", 64ull << 20, 0);
    assert_int_equal(objstore_put_generated(os, 1, big, NULL), 0);
    assert_int_equal(objstore_put_synthetic(os, 2, big, NULL), 0); /* in memory */
    assert_int_equal(objstore_put_synthetic(os, 3, 4096, NULL), 0);
    assert_int_equal(objstore_put_generated(os, 4, big, NULL), 0);
    assert_true(objstore_wants_spill(os, 1));
    assert_true(objstore_wants_spill(os, 2));
    assert_false(objstore_wants_spill(os, 3)); /* small: staged by a write */
    assert_false(objstore_wants_spill(os, 99));
    uint8_t before[OBJSTORE_HASH_BYTES];
    assert_int_equal(objstore_hash(os, 2, before), 0);

    struct objstore_stats st;
    objstore_get_stats(os, &st);
    assert_int_equal(st.mem_bytes, big + 4096);
    assert_int_equal(st.file_bytes, 0);
    for (uint64_t key = 1; key <= 2; key++) {
        int calls = 0, rc;
        while ((rc = objstore_spill(os, key, OBJSTORE_SPILL_MIN, NULL)) == 0)
            assert_true(++calls < 10);
        assert_int_equal(rc, 1);
        assert_int_equal(calls, 3); /* three full budgets, then the ragged end */
        assert_false(objstore_wants_spill(os, key));
        assert_int_equal(objstore_spill(os, key, 1, NULL), 1); /* already a file */
    }
    objstore_get_stats(os, &st);
    assert_int_equal(st.mem_bytes, 4096);
    assert_int_equal(st.file_bytes, 2 * big);
    assert_int_equal(st.owned_objects, 4);
    assert_synthetic_content(os, 1, 1, big, 65536);
    assert_synthetic_content(os, 2, 2, big, 65536);
    uint8_t after[OBJSTORE_HASH_BYTES];
    assert_int_equal(objstore_hash(os, 2, after), 0);
    assert_memory_equal(before, after, sizeof before);

    char *p = sub(f, "staged");
    assert_int_equal(objstore_materialize(os, 1, p, NULL), 0);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_nlink, 2); /* a link to the store's file, not a write */
    assert_file_is_synthetic(p, 1, big);
    free(p);

    /* Part way, then removed: its .part file goes with it. */
    char part[256];
    object_file(part, sizeof part, f, "s", 4, ".part");
    assert_int_equal(objstore_spill(os, 4, OBJSTORE_SPILL_MIN, NULL), 0);
    assert_int_equal(access(part, F_OK), 0);
    assert_int_equal(objstore_remove(os, 4), 0);
    assert_int_equal(access(part, F_OK), -1);
    assert_int_equal(objstore_spill(os, 4, OBJSTORE_SPILL_MIN, NULL), -ENOENT);

    /* Part way at destroy: nothing left in the store's directory. */
    assert_int_equal(objstore_put_generated(os, 5, big, NULL), 0);
    assert_int_equal(objstore_spill(os, 5, OBJSTORE_SPILL_MIN, NULL), 0);
    char *dir = sub(f, "s");
    objstore_destroy(os);
    assert_int_equal(count_files(dir), -1);
    free(dir);
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_put_file_adopts_output(void **state)
{
    struct fixture *f = *state;
    struct objstore *os = store(f, "o", 1 << 20, 0);
    char *out = sub(f, "output");
    const char *text = "result of a command task\n";
    write_text(out, text);
    assert_int_equal(objstore_put_file(os, 5, out, NULL), 0);
    assert_int_equal(access(out, F_OK), -1); /* moved into the store */
    assert_int_equal(objstore_size(os, 5), (int64_t)strlen(text));
    char buf[64] = {0};
    assert_int_equal(objstore_read(os, 5, 0, buf, sizeof buf), (ssize_t)strlen(text));
    assert_string_equal(buf, text);
    uint8_t h[OBJSTORE_HASH_BYTES], want[OBJSTORE_HASH_BYTES];
    assert_int_equal(objstore_hash(os, 5, h), 0);
    crc_bytes(crc32(0L, (const Bytef *)text, (uInt)strlen(text)), want);
    assert_memory_equal(h, want, sizeof h);
    /* Remembered: the same answer again without the file changing. */
    assert_int_equal(objstore_hash(os, 5, h), 0);
    assert_memory_equal(h, want, sizeof h);

    struct objstore_stats st;
    objstore_get_stats(os, &st);
    assert_int_equal(st.owned_objects, 1);
    assert_int_equal(st.file_bytes, strlen(text));
    assert_int_equal(st.mem_bytes, 0);

    /* Refusals leave the source in place. */
    write_text(out, "again");
    char *cause = NULL;
    assert_int_equal(objstore_put_file(os, 5, out, &cause), -EEXIST);
    free(cause);
    assert_int_equal(access(out, F_OK), 0);
    assert_int_equal(objstore_put_file(os, 6, f->root, &cause), -EINVAL);
    assert_non_null(strstr(cause, "not a regular file"));
    free(cause);
    char *link_path = sub(f, "link");
    assert_int_equal(symlink(out, link_path), 0);
    assert_int_equal(objstore_put_file(os, 6, link_path, &cause), -EINVAL);
    free(cause);
    assert_int_equal(unlink(link_path), 0);
    free(link_path);
    char *none = sub(f, "none");
    assert_int_equal(objstore_put_file(os, 6, none, &cause), -ENOENT);
    assert_non_null(strstr(cause, none));
    free(cause);
    free(none);
    /* An empty output is an object too. */
    write_text(out, "");
    assert_int_equal(objstore_put_file(os, 6, out, NULL), 0);
    assert_int_equal(objstore_size(os, 6), 0);

    /* Staged back out as an input. */
    char *staged = sub(f, "staged");
    assert_int_equal(objstore_materialize(os, 5, staged, NULL), 0);
    FILE *fp = fopen(staged, "r");
    memset(buf, 0, sizeof buf);
    assert_non_null(fgets(buf, sizeof buf, fp));
    fclose(fp);
    assert_string_equal(buf, text);
    free(staged);

    /* The standard check value: CRC-32 of "123456789" is cbf43926. */
    write_text(out, "123456789");
    assert_int_equal(objstore_put_file(os, 7, out, NULL), 0);
    assert_int_equal(objstore_hash(os, 7, h), 0);
    static const uint8_t check[4] = {0xcb, 0xf4, 0x39, 0x26};
    assert_memory_equal(h, check, sizeof h);
    free(out);
    objstore_destroy(os);
}

/* Outputs and staged inputs on another file system than the store (a store on disk,
 * task directories on /dev/shm): moves and links become copies.  Skipped when /dev/shm
 * is not a separate file system here. */
static void test_across_file_systems(void **state)
{
    struct fixture *f = *state;
    struct stat a, b;
    if (stat(f->root, &a) < 0 || stat("/dev/shm", &b) < 0 || a.st_dev == b.st_dev)
        skip();
    char other[64];
    snprintf(other, sizeof other, "/dev/shm/jackdaw-objstore-XXXXXX");
    assert_non_null(mkdtemp(other));
    char out[128], staged[128], staged_mem[128];
    snprintf(out, sizeof out, "%s/output", other);
    snprintf(staged, sizeof staged, "%s/input", other);
    snprintf(staged_mem, sizeof staged_mem, "%s/input-mem", other);

    struct objstore *os = store(f, "x", 100, 0);
    FILE *fp = fopen(out, "wb");
    assert_non_null(fp);
    uint8_t *buf = malloc(700001);
    objstore_synthetic_fill(31, 0, buf, 700001);
    assert_int_equal(fwrite(buf, 1, 700001, fp), 700001);
    fclose(fp);
    free(buf);
    assert_int_equal(objstore_put_file(os, 31, out, NULL), 0);
    assert_int_equal(access(out, F_OK), -1);
    assert_synthetic_content(os, 31, 31, 700001, 65536);

    assert_int_equal(objstore_materialize(os, 31, staged, NULL), 0);
    assert_file_is_synthetic(staged, 31, 700001);
    struct stat sb;
    assert_int_equal(stat(staged, &sb), 0);
    assert_int_equal(sb.st_nlink, 1);
    assert_int_equal(objstore_put_synthetic(os, 32, 50, NULL), 0);
    assert_int_equal(objstore_materialize(os, 32, staged_mem, NULL), 0);
    assert_file_is_synthetic(staged_mem, 32, 50);
    objstore_destroy(os);

    unlink(staged);
    unlink(staged_mem);
    assert_int_equal(rmdir(other), 0);
}

/* Overwrites one byte of a store file behind the store's back, so a test can tell
 * whether a later objstore_hash read the file or had the hash already. */
static void corrupt_object_file(const struct fixture *f, const char *name, uint64_t key,
                                uint64_t offset)
{
    char path[256];
    object_file(path, sizeof path, f, name, key, "");
    assert_int_equal(chmod(path, 0644), 0);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t byte;
    assert_int_equal(pread(fd, &byte, 1, (off_t)offset), 1);
    byte ^= 0xff;
    assert_int_equal(pwrite(fd, &byte, 1, (off_t)offset), 1);
    close(fd);
}

static void test_streaming_reads_compute_the_hash(void **state)
{
    struct fixture *f = *state;
    struct objstore *os = store(f, "h", 0, 0);
    const uint64_t size = 1000000;
    const size_t chunk = 65536;
    uint8_t *buf = malloc(chunk);
    uint8_t want[OBJSTORE_HASH_BYTES], got[OBJSTORE_HASH_BYTES];

    /* Control: without reads, the hash is computed from the (altered) file. */
    assert_int_equal(objstore_put_synthetic(os, 1, size, NULL), 0);
    corrupt_object_file(f, "h", 1, 10);
    synthetic_hash(1, size, want);
    assert_int_equal(objstore_hash(os, 1, got), 0);
    assert_memory_not_equal(got, want, sizeof got);

    /* Two transfers interleaved, the second a chunk behind: once the object has been
     * read to its end, the hash is known and the file is not read again. */
    assert_int_equal(objstore_put_synthetic(os, 2, size, NULL), 0);
    for (uint64_t off = 0; off < size; off += chunk) {
        assert_true(objstore_read(os, 2, off, buf, chunk) > 0);
        if (off >= chunk)
            assert_true(objstore_read(os, 2, off - chunk, buf, chunk) > 0);
    }
    corrupt_object_file(f, "h", 2, size / 2);
    synthetic_hash(2, size, want);
    assert_int_equal(objstore_hash(os, 2, got), 0);
    assert_memory_equal(got, want, sizeof got);

    /* Read half way: objstore_hash goes on from there (the altered byte in the first
     * half is never read again; the one in the second half is). */
    assert_int_equal(objstore_put_synthetic(os, 3, size, NULL), 0);
    assert_int_equal(objstore_put_synthetic(os, 4, size, NULL), 0);
    for (uint64_t off = 0; off < size / 2; off += chunk) {
        assert_true(objstore_read(os, 3, off, buf, chunk) > 0);
        assert_true(objstore_read(os, 4, off, buf, chunk) > 0);
    }
    corrupt_object_file(f, "h", 3, 100);
    corrupt_object_file(f, "h", 4, size - 1);
    synthetic_hash(3, size, want);
    assert_int_equal(objstore_hash(os, 3, got), 0);
    assert_memory_equal(got, want, sizeof got);
    synthetic_hash(4, size, want);
    assert_int_equal(objstore_hash(os, 4, got), 0);
    assert_memory_not_equal(got, want, sizeof got);

    /* In memory, and empty, the same answers. */
    struct objstore *m = store(f, "hm", 1 << 30, 0);
    assert_int_equal(objstore_put_synthetic(m, 5, size, NULL), 0);
    assert_int_equal(objstore_read(m, 5, 0, buf, 1000), 1000);
    synthetic_hash(5, size, want);
    assert_int_equal(objstore_hash(m, 5, got), 0);
    assert_memory_equal(got, want, sizeof got);
    assert_int_equal(objstore_put_synthetic(m, 6, 0, NULL), 0);
    synthetic_hash(6, 0, want);
    assert_int_equal(objstore_hash(m, 6, got), 0);
    assert_memory_equal(got, want, sizeof got);
    /* A partly hashed object dropped before its end frees its hashing state. */
    assert_int_equal(objstore_put_synthetic(m, 7, size, NULL), 0);
    assert_int_equal(objstore_read(m, 7, 0, buf, chunk), (ssize_t)chunk);
    assert_int_equal(objstore_remove(m, 7), 0);
    objstore_destroy(m);
    free(buf);
    objstore_destroy(os);
}

static void test_stats_and_acquire(void **state)
{
    struct fixture *f = *state;
    /* The directory exists beforehand: destroy leaves it, empty. */
    char *dir = sub(f, "pre");
    assert_int_equal(mkdir(dir, 0755), 0);
    struct objstore *os = store(f, "pre", 1500, 10000);
    assert_int_equal(objstore_put_synthetic(os, 1, 1000, NULL), 0);
    assert_int_equal(objstore_put_synthetic(os, 2, 1000, NULL), 0);
    receive_synthetic(os, 3, 400);
    assert_int_equal(objstore_unpin(os, 3), 0);

    assert_int_equal(objstore_acquire(os, 1), 0);  /* local */
    assert_int_equal(objstore_acquire(os, 2), 0);  /* local */
    assert_int_equal(objstore_acquire(os, 3), 0);  /* cache hit */
    assert_int_equal(objstore_acquire(os, 4), -ENOENT);
    struct objstore_recv *rx = NULL;
    assert_int_equal(objstore_recv_begin(os, 4, 1000, &rx, NULL), 0); /* a file: over mem_cap */
    assert_int_equal(objstore_acquire(os, 4), -EINPROGRESS);

    struct objstore_stats st;
    objstore_get_stats(os, &st);
    assert_int_equal(st.owned_objects, 2);
    assert_int_equal(st.owned_bytes, 2000);
    assert_int_equal(st.cached_objects, 1);
    assert_int_equal(st.cached_bytes, 400);
    assert_int_equal(st.mem_bytes, 1400);
    assert_int_equal(st.file_bytes, 1000);
    assert_int_equal(st.local_hits, 2);
    assert_int_equal(st.cache_hits, 1);
    assert_int_equal(st.cache_misses, 2);
    assert_int_equal(st.evictions, 0);
    assert_int_equal(st.bytes_received, 400);

    for (uint64_t k = 1; k <= 3; k++)
        assert_int_equal(objstore_unpin(os, k), 0);
    assert_int_equal(objstore_remove(os, 3), 0);
    assert_int_equal(objstore_remove(os, 1), 0);
    objstore_get_stats(os, &st);
    assert_int_equal(st.owned_objects, 1);
    assert_int_equal(st.cached_objects, 0);
    assert_int_equal(st.mem_bytes, 0);
    assert_int_equal(st.file_bytes, 1000);
    assert_int_equal(st.evictions, 0); /* removal is not eviction */

    /* Destroy with a receive still in progress cleans its .part file too. */
    assert_int_equal(objstore_recv_write(rx, 0, "x", 1, NULL), 0);
    assert_int_equal(objstore_pin(os, 2), 0);
    uint8_t byte;
    assert_int_equal(objstore_read(os, 2, 0, &byte, 1), 1); /* leaves an fd open */
    objstore_destroy(os);
    assert_int_equal(count_files(dir), 0);
    free(dir);
}

static void test_create_errors(void **state)
{
    struct fixture *f = *state;
    char *cause = NULL;
    assert_null(objstore_create(NULL, 0, 0, &cause));
    free(cause);
    char *file = sub(f, "plain");
    write_text(file, "x");
    assert_null(objstore_create(file, 0, 0, &cause));
    assert_non_null(strstr(cause, "not a directory"));
    free(cause);
    char *below = sub(f, "plain/sub");
    assert_null(objstore_create(below, 0, 0, &cause));
    assert_non_null(strstr(cause, "cannot create"));
    free(cause);
    free(below);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_content_is_deterministic),
        cmocka_unit_test_setup_teardown(test_put_and_read_across_the_spill_boundary, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_received_copy_is_identical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_copies_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lru_eviction_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pinned_copies_survive_eviction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_materialize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generated_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_file_adopts_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streaming_reads_compute_the_hash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_across_file_systems, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_and_acquire, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
