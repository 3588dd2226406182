/*
 * handshake — the payloads of the auth.h handshake (CHALLENGE, RESPONSE, ACCEPT):
 * written and checked here, without a socket, a loop or a random source, so that the
 * first bytes an unauthenticated peer can make a daemon read are parsed by pure
 * functions that a fuzzer drives directly (tests/fuzz/fuzz_handshake.c).
 *
 * Owns nothing.  Called by core/net/conn.c, which keeps the connection's phase, draws
 * the nonces and frames the payloads (frame_write_single); the MACs are auth.c's.
 *
 * Return convention: writers cannot fail; checkers return 0, or a negative errno with
 * *why set to the reason the connection is dropped with (a static string):
 * -EBADMSG a payload of the wrong shape, -EACCES a MAC that does not match (wrong key),
 * -EPROTO a RESPONSE with a valid MAC but a role this side does not know.  Nothing is
 * written to the outputs unless the check succeeds.
 */
#ifndef JACKDAW_HANDSHAKE_H
#define JACKDAW_HANDSHAKE_H

#include <stdint.h>

#include "core/base/wbuf.h"
#include "core/net/auth.h"

/* Payload sizes: a CHALLENGE is the server's nonce, an ACCEPT the server's MAC. */
#define HANDSHAKE_CHALLENGE_BYTES AUTH_NONCE_BYTES
#define HANDSHAKE_RESPONSE_BYTES (AUTH_NONCE_BYTES + 1 + 4 + AUTH_MAC_BYTES)
#define HANDSHAKE_ACCEPT_BYTES AUTH_MAC_BYTES

/* What a client says of itself in its RESPONSE. */
struct handshake_response {
    uint8_t client_nonce[AUTH_NONCE_BYTES];
    uint8_t role;           /* enum conn_role (conn.h) */
    uint32_t id;
};

void handshake_put_challenge(struct wbuf *b, const uint8_t server_nonce[AUTH_NONCE_BYTES]);
/* Client side: the server's nonce, copied into server_nonce. */
int handshake_get_challenge(struct rbuf *p, uint8_t server_nonce[AUTH_NONCE_BYTES],
                            const char **why);

/* Client side: the RESPONSE to the server's nonce, MAC'd with the cluster key. */
void handshake_put_response(struct wbuf *b, const struct auth_key *key,
                            const uint8_t server_nonce[AUTH_NONCE_BYTES],
                            const struct handshake_response *me);
/* Server side: a RESPONSE checked against the key and the nonce this side sent; *peer
 * is filled only when its MAC matches and its role is a node's or a client's. */
int handshake_check_response(struct rbuf *p, const struct auth_key *key,
                             const uint8_t server_nonce[AUTH_NONCE_BYTES],
                             struct handshake_response *peer, const char **why);

/* Server side: the ACCEPT that proves to the client that this side holds the key too. */
void handshake_put_accept(struct wbuf *b, const struct auth_key *key,
                          const uint8_t server_nonce[AUTH_NONCE_BYTES],
                          const uint8_t client_nonce[AUTH_NONCE_BYTES]);
/* Client side: the server's ACCEPT checked against both nonces. */
int handshake_check_accept(struct rbuf *p, const struct auth_key *key,
                           const uint8_t server_nonce[AUTH_NONCE_BYTES],
                           const uint8_t client_nonce[AUTH_NONCE_BYTES], const char **why);

#endif
