/*
 * auth — the cluster key file and the handshake MACs (see auth.h).
 *
 * Owns nothing beyond libsodium's one-time initialisation.  Called by
 * core/net/handshake.c and conn.c for every handshake and by the launch and node
 * commands for the key file.  Every primitive is libsodium's; this file only fixes what
 * goes into each MAC and in which order, so that both ends of a connection compute the
 * same bytes.
 */
#include "core/net/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/base/fs.h"
#include "core/base/xalloc.h"

/* 64 hex digits plus a newline; anything much longer is not a key file. */
#define KEY_HEX_CHARS AUTH_KEY_HEX_CHARS
#define KEY_FILE_MAX 256

static void set_cause(char **cause, char *msg)
{
    if (cause)
        *cause = msg;
    else
        free(msg);
}

int auth_init(void)
{
    /* sodium_init is itself idempotent and thread-safe; 1 means "already done". */
    return sodium_init() < 0 ? -EIO : 0;
}

int auth_key_save(const char *path, const struct auth_key *key, char **cause)
{
    if (!path || !key) {
        set_cause(cause, xstrdup("no key file path given"));
        return -EINVAL;
    }
    /* O_EXCL so that a second launch never silently replaces the key a running cluster
     * uses; 0600 from the first byte so the key is never briefly readable. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int err = errno;
        if (err == EEXIST)
            set_cause(cause, xasprintf("key file '%s' already exists; refusing to overwrite it", path));
        else
            set_cause(cause, xasprintf("cannot create key file '%s': %s", path, strerror(err)));
        return -err;
    }
    char hex[KEY_HEX_CHARS + 2];
    auth_key_hex(key, hex);
    hex[KEY_HEX_CHARS] = '\n';
    int rc = fs_write_all(fd, hex, KEY_HEX_CHARS + 1);
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    sodium_memzero(hex, sizeof hex);
    if (rc < 0) {
        /* A truncated key file would make every later load fail confusingly. */
        unlink(path);
        set_cause(cause, xasprintf("cannot write key file '%s': %s", path, strerror(-rc)));
    }
    return rc;
}

int auth_key_create(const char *path, struct auth_key *key, char **cause)
{
    if (auth_init() < 0) {
        set_cause(cause, xstrdup("cannot initialise libsodium"));
        return -EIO;
    }
    struct auth_key fresh;
    randombytes_buf(fresh.bytes, sizeof fresh.bytes);
    int rc = auth_key_save(path, &fresh, cause);
    if (rc == 0)
        *key = fresh;
    sodium_memzero(&fresh, sizeof fresh);
    return rc;
}

void auth_key_hex(const struct auth_key *key, char hex[AUTH_KEY_HEX_CHARS + 1])
{
    sodium_bin2hex(hex, AUTH_KEY_HEX_CHARS + 1, key->bytes, sizeof key->bytes);
}

int auth_key_from_hex(const char *text, size_t len, struct auth_key *key)
{
    /* Trailing whitespace is forgiven: editors add "\n" or "\r\n". */
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' ||
                       text[len - 1] == '\t'))
        len--;
    struct auth_key parsed;
    size_t bin_len = 0;
    const char *end = NULL;
    int rc = 0;
    if (len != KEY_HEX_CHARS ||
        sodium_hex2bin(parsed.bytes, sizeof parsed.bytes, text, len, NULL, &bin_len, &end) != 0 ||
        bin_len != AUTH_KEY_BYTES || end != text + len)
        rc = -EINVAL;
    else
        *key = parsed;
    sodium_memzero(&parsed, sizeof parsed);
    return rc;
}

int auth_key_load(const char *path, struct auth_key *key, char **cause)
{
    if (!path || !key) {
        set_cause(cause, xstrdup("no key file path given"));
        return -EINVAL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        set_cause(cause, xasprintf("cannot open key file '%s': %s", path, strerror(err)));
        return -err;
    }
    /* fstat on the open descriptor, so the file checked is the file read. */
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd);
        set_cause(cause, xasprintf("cannot stat key file '%s': %s", path, strerror(err)));
        return -err;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        set_cause(cause, xasprintf("key file '%s' is not a regular file", path));
        return -EINVAL;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        close(fd);
        set_cause(cause, xasprintf("key file '%s' has mode %04o; it must not be accessible by "
                                   "group or others (chmod 600 '%s')",
                                   path, (unsigned)(st.st_mode & 07777), path));
        return -EPERM;
    }
    char text[KEY_FILE_MAX];
    size_t len = 0;
    int rc = 0;
    while (len < sizeof text) {
        ssize_t r = read(fd, text + len, sizeof text - len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    if (rc < 0) {
        set_cause(cause, xasprintf("cannot read key file '%s': %s", path, strerror(-rc)));
        return rc;
    }
    rc = auth_key_from_hex(text, len, key);
    sodium_memzero(text, sizeof text);
    if (rc < 0)
        set_cause(cause, xasprintf("key file '%s' does not hold a key (%u hex digits and a newline)",
                                   path, (unsigned)KEY_HEX_CHARS));
    return rc;
}

void auth_nonce(uint8_t nonce[AUTH_NONCE_BYTES])
{
    randombytes_buf(nonce, AUTH_NONCE_BYTES);
}

/*
 * The two MACs start with different labels so that a RESPONSE can never be replayed as
 * an ACCEPT (or the reverse), even though both cover the same two nonces.
 */
void auth_client_mac(const struct auth_key *key, const uint8_t server_nonce[AUTH_NONCE_BYTES],
                     const uint8_t client_nonce[AUTH_NONCE_BYTES], uint8_t role, uint32_t id,
                     uint8_t mac[AUTH_MAC_BYTES])
{
    static const char label[] = "jackdaw-c";
    uint8_t id_le[4] = {(uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16), (uint8_t)(id >> 24)};
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key->bytes, AUTH_KEY_BYTES);
    crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, sizeof label - 1);
    crypto_auth_hmacsha256_update(&st, server_nonce, AUTH_NONCE_BYTES);
    crypto_auth_hmacsha256_update(&st, client_nonce, AUTH_NONCE_BYTES);
    crypto_auth_hmacsha256_update(&st, &role, 1);
    crypto_auth_hmacsha256_update(&st, id_le, sizeof id_le);
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_memzero(&st, sizeof st);
}

void auth_server_mac(const struct auth_key *key, const uint8_t server_nonce[AUTH_NONCE_BYTES],
                     const uint8_t client_nonce[AUTH_NONCE_BYTES], uint8_t mac[AUTH_MAC_BYTES])
{
    static const char label[] = "jackdaw-s";
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key->bytes, AUTH_KEY_BYTES);
    crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, sizeof label - 1);
    crypto_auth_hmacsha256_update(&st, client_nonce, AUTH_NONCE_BYTES);
    crypto_auth_hmacsha256_update(&st, server_nonce, AUTH_NONCE_BYTES);
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_memzero(&st, sizeof st);
}

bool auth_mac_equal(const uint8_t a[AUTH_MAC_BYTES], const uint8_t b[AUTH_MAC_BYTES])
{
    return sodium_memcmp(a, b, AUTH_MAC_BYTES) == 0;
}
