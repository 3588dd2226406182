/*
 * auth — the cluster key and the HMAC challenge-response every connection starts with.
 *
 * Owns nothing global.  Called by core/net/handshake.c and conn.c for the handshake and
 * by the launch and node commands for the key file.  Uses libsodium (crypto_auth_hmacsha256, random
 * bytes, constant-time compare); nothing here is hand-rolled crypto.
 *
 * Handshake (mutual; the key never crosses the wire):
 *   server -> client  CHALLENGE   server_nonce[32]
 *   client -> server  RESPONSE    client_nonce[32] | role u8 | id u32 |
 *                                 HMAC(key, "jackdaw-c" | server_nonce | client_nonce | role | id)
 *   server -> client  ACCEPT      HMAC(key, "jackdaw-s" | client_nonce | server_nonce)
 * A server that gets a wrong MAC drops the connection with a logged reason; a client
 * that gets a wrong ACCEPT does the same, so a fake daemon cannot pose as a peer.
 *
 * Return convention: 0 or a negative errno; key-file errors fill *cause.
 */
#ifndef JACKDAW_AUTH_H
#define JACKDAW_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_KEY_BYTES 32u
#define AUTH_NONCE_BYTES 32u
#define AUTH_MAC_BYTES 32u

struct auth_key {
    uint8_t bytes[AUTH_KEY_BYTES];
};

/* Calls sodium_init once; safe to call many times and from main before threads. */
int auth_init(void);
#define AUTH_KEY_HEX_CHARS (2 * AUTH_KEY_BYTES)

/* Creates a new random key file (hex, mode 0600, refuses to overwrite). */
int auth_key_create(const char *path, struct auth_key *key, char **cause);
/* Writes `key` to a new key file, as auth_key_create does (a remote launch's agent
 * writes the key it was sent on its standard input). */
int auth_key_save(const char *path, const struct auth_key *key, char **cause);
/* The key as 64 hex digits and a NUL; and back (trailing whitespace forgiven),
 * -EINVAL when `text` is not a key. */
void auth_key_hex(const struct auth_key *key, char hex[AUTH_KEY_HEX_CHARS + 1]);
int auth_key_from_hex(const char *text, size_t len, struct auth_key *key);
/* Loads a key file; refuses files readable by group or others, naming the path. */
int auth_key_load(const char *path, struct auth_key *key, char **cause);

void auth_nonce(uint8_t nonce[AUTH_NONCE_BYTES]);
void auth_client_mac(const struct auth_key *key, const uint8_t server_nonce[AUTH_NONCE_BYTES],
                     const uint8_t client_nonce[AUTH_NONCE_BYTES], uint8_t role, uint32_t id,
                     uint8_t mac[AUTH_MAC_BYTES]);
void auth_server_mac(const struct auth_key *key, const uint8_t server_nonce[AUTH_NONCE_BYTES],
                     const uint8_t client_nonce[AUTH_NONCE_BYTES], uint8_t mac[AUTH_MAC_BYTES]);
/* Constant-time comparison. */
bool auth_mac_equal(const uint8_t a[AUTH_MAC_BYTES], const uint8_t b[AUTH_MAC_BYTES]);

#endif
