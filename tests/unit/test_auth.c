/*
 * test_auth — the key file's life (create, load, refusals) and the handshake MACs.
 * Calls core/net/auth.c directly, in a private mkdtemp directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/net/auth.h"

struct dir {
    char path[64];
    char key[96];
};

static int dir_setup(void **state)
{
    struct dir *d = calloc(1, sizeof *d);
    snprintf(d->path, sizeof d->path, "/tmp/jackdaw-auth-XXXXXX");
    if (!mkdtemp(d->path)) {
        free(d);
        return -1;
    }
    snprintf(d->key, sizeof d->key, "%s/cluster.key", d->path);
    *state = d;
    return auth_init();
}

static int dir_teardown(void **state)
{
    struct dir *d = *state;
    unlink(d->key);
    rmdir(d->path);
    free(d);
    return 0;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static void test_create_load_round_trip(void **state)
{
    struct dir *d = *state;
    assert_int_equal(auth_init(), 0);
    struct auth_key made, loaded;
    char *cause = NULL;
    assert_int_equal(auth_key_create(d->key, &made, &cause), 0);
    assert_null(cause);
    struct stat st;
    assert_int_equal(stat(d->key, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_size, 65);
    FILE *f = fopen(d->key, "r");
    char text[80] = {0};
    assert_non_null(fgets(text, sizeof text, f));
    fclose(f);
    assert_int_equal(strlen(text), 65);
    assert_int_equal(text[64], '\n');
    char hex[65];
    sodium_bin2hex(hex, sizeof hex, made.bytes, sizeof made.bytes);
    assert_memory_equal(text, hex, 64);

    memset(&loaded, 0, sizeof loaded);
    assert_int_equal(auth_key_load(d->key, &loaded, &cause), 0);
    assert_null(cause);
    assert_memory_equal(made.bytes, loaded.bytes, AUTH_KEY_BYTES);
}

static void test_two_keys_differ(void **state)
{
    struct dir *d = *state;
    char other[128];
    snprintf(other, sizeof other, "%s/other.key", d->path);
    struct auth_key a, b;
    assert_int_equal(auth_key_create(d->key, &a, NULL), 0);
    assert_int_equal(auth_key_create(other, &b, NULL), 0);
    assert_memory_not_equal(a.bytes, b.bytes, AUTH_KEY_BYTES);
    unlink(other);
}

static void test_refuses_group_readable(void **state)
{
    struct dir *d = *state;
    struct auth_key key;
    char *cause = NULL;
    assert_int_equal(auth_key_create(d->key, &key, NULL), 0);
    assert_int_equal(chmod(d->key, 0644), 0);
    int rc = auth_key_load(d->key, &key, &cause);
    assert_true(rc < 0);
    assert_non_null(cause);
    assert_non_null(strstr(cause, d->key));
    assert_non_null(strstr(cause, "0644"));
    free(cause);
    cause = NULL;
    assert_int_equal(chmod(d->key, 0604), 0);
    assert_true(auth_key_load(d->key, &key, &cause) < 0);
    free(cause);
    cause = NULL;
    assert_int_equal(chmod(d->key, 0610), 0);
    assert_true(auth_key_load(d->key, &key, &cause) < 0);
    free(cause);
    /* A NULL cause is allowed. */
    assert_true(auth_key_load(d->key, &key, NULL) < 0);
    assert_int_equal(chmod(d->key, 0400), 0);
    assert_int_equal(auth_key_load(d->key, &key, NULL), 0);
}

static void test_refuses_overwrite(void **state)
{
    struct dir *d = *state;
    struct auth_key first, second, loaded;
    char *cause = NULL;
    assert_int_equal(auth_key_create(d->key, &first, NULL), 0);
    memset(&second, 0x55, sizeof second);
    assert_int_equal(auth_key_create(d->key, &second, &cause), -EEXIST);
    assert_non_null(cause);
    assert_non_null(strstr(cause, d->key));
    free(cause);
    /* Neither the file nor the caller's key was touched. */
    uint8_t fives[AUTH_KEY_BYTES];
    memset(fives, 0x55, sizeof fives);
    assert_memory_equal(second.bytes, fives, AUTH_KEY_BYTES);
    assert_int_equal(auth_key_load(d->key, &loaded, NULL), 0);
    assert_memory_equal(first.bytes, loaded.bytes, AUTH_KEY_BYTES);
}

static void test_refuses_bad_contents(void **state)
{
    struct dir *d = *state;
    struct auth_key key;
    char *cause = NULL;
    static const char *bad[] = {
        "",
        "abcd\n",
        "zz00000000000000000000000000000000000000000000000000000000000000\n",
        "00000000000000000000000000000000000000000000000000000000000000000\n",
        "0000000000000000000000000000000000000000000000000000000000000000 extra\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unlink(d->key);
        write_file(d->key, bad[i], 0600);
        assert_int_equal(auth_key_load(d->key, &key, &cause), -EINVAL);
        assert_non_null(strstr(cause, d->key));
        free(cause);
        cause = NULL;
    }
    /* Upper case and a CRLF ending are what editors produce; both load. */
    unlink(d->key);
    write_file(d->key, "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff\r\n", 0600);
    assert_int_equal(auth_key_load(d->key, &key, NULL), 0);
    assert_int_equal(key.bytes[1], 0x11);
    assert_int_equal(key.bytes[10], 0xAA);
    assert_int_equal(key.bytes[31], 0xFF);

    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing.key", d->path);
    assert_int_equal(auth_key_load(missing, &key, &cause), -ENOENT);
    assert_non_null(strstr(cause, missing));
    free(cause);
}

static void fill(uint8_t *p, size_t n, uint8_t v)
{
    memset(p, v, n);
}

static void test_macs(void **state)
{
    (void)state;
    struct auth_key k1, k2;
    fill(k1.bytes, sizeof k1.bytes, 1);
    fill(k2.bytes, sizeof k2.bytes, 2);
    uint8_t sn[AUTH_NONCE_BYTES], cn[AUTH_NONCE_BYTES], sn2[AUTH_NONCE_BYTES];
    fill(sn, sizeof sn, 0xA0);
    fill(cn, sizeof cn, 0xB0);
    fill(sn2, sizeof sn2, 0xA1);
    uint8_t base[AUTH_MAC_BYTES], again[AUTH_MAC_BYTES], m[AUTH_MAC_BYTES];

    auth_client_mac(&k1, sn, cn, 1, 7, base);
    auth_client_mac(&k1, sn, cn, 1, 7, again);
    assert_true(auth_mac_equal(base, again));
    auth_client_mac(&k2, sn, cn, 1, 7, m);
    assert_false(auth_mac_equal(base, m));
    auth_client_mac(&k1, sn2, cn, 1, 7, m);
    assert_false(auth_mac_equal(base, m));
    auth_client_mac(&k1, cn, sn, 1, 7, m); /* nonces swapped */
    assert_false(auth_mac_equal(base, m));
    auth_client_mac(&k1, sn, cn, 2, 7, m);
    assert_false(auth_mac_equal(base, m));
    auth_client_mac(&k1, sn, cn, 1, 8, m);
    assert_false(auth_mac_equal(base, m));

    /* The server's MAC never equals the client's for the same nonces. */
    uint8_t s1[AUTH_MAC_BYTES], s2[AUTH_MAC_BYTES];
    auth_server_mac(&k1, sn, cn, s1);
    assert_false(auth_mac_equal(base, s1));
    auth_server_mac(&k2, sn, cn, s2);
    assert_false(auth_mac_equal(s1, s2));
    auth_server_mac(&k1, sn2, cn, s2);
    assert_false(auth_mac_equal(s1, s2));

    /* Wire layout, as auth.h documents it: one-shot HMAC over the concatenation. */
    uint8_t msg[9 + 32 + 32 + 1 + 4];
    memcpy(msg, "jackdaw-c", 9);
    memcpy(msg + 9, sn, 32);
    memcpy(msg + 41, cn, 32);
    msg[73] = 1;
    msg[74] = 7;
    msg[75] = msg[76] = msg[77] = 0;
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, k1.bytes, sizeof k1.bytes);
    crypto_auth_hmacsha256_update(&st, msg, sizeof msg);
    crypto_auth_hmacsha256_final(&st, m);
    assert_memory_equal(base, m, AUTH_MAC_BYTES);
    memcpy(msg, "jackdaw-s", 9);
    memcpy(msg + 9, cn, 32);
    memcpy(msg + 41, sn, 32);
    crypto_auth_hmacsha256_init(&st, k1.bytes, sizeof k1.bytes);
    crypto_auth_hmacsha256_update(&st, msg, 9 + 64);
    crypto_auth_hmacsha256_final(&st, m);
    assert_memory_equal(s1, m, AUTH_MAC_BYTES);
}

static void test_mac_equal_and_nonce(void **state)
{
    (void)state;
    uint8_t a[AUTH_MAC_BYTES], b[AUTH_MAC_BYTES];
    fill(a, sizeof a, 0x3C);
    memcpy(b, a, sizeof b);
    assert_true(auth_mac_equal(a, b));
    for (size_t i = 0; i < AUTH_MAC_BYTES; i += 7) {
        b[i] ^= 0x01;
        assert_false(auth_mac_equal(a, b));
        b[i] ^= 0x01;
    }
    b[AUTH_MAC_BYTES - 1] ^= 0x80;
    assert_false(auth_mac_equal(a, b));

    uint8_t n1[AUTH_NONCE_BYTES], n2[AUTH_NONCE_BYTES];
    auth_nonce(n1);
    auth_nonce(n2);
    assert_memory_not_equal(n1, n2, AUTH_NONCE_BYTES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_load_round_trip, dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_two_keys_differ, dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_group_readable, dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_overwrite, dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_bad_contents, dir_setup, dir_teardown),
        cmocka_unit_test(test_macs),
        cmocka_unit_test(test_mac_equal_and_nonce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
