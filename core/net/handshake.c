/*
 * handshake — the handshake's payloads (see handshake.h).  The reasons given are the
 * ones the hub logs when it drops the peer; t_30_wrong_key and test_conn look for
 * "wrong key (MAC mismatch)".
 */
#include "core/net/handshake.h"

#include <errno.h>
#include <string.h>

#include "core/net/conn.h"

void handshake_put_challenge(struct wbuf *b, const uint8_t server_nonce[AUTH_NONCE_BYTES])
{
    wbuf_put(b, server_nonce, AUTH_NONCE_BYTES);
}

int handshake_get_challenge(struct rbuf *p, uint8_t server_nonce[AUTH_NONCE_BYTES],
                            const char **why)
{
    const uint8_t *nonce = rbuf_bytes(p, AUTH_NONCE_BYTES);
    if (!nonce || p->left != 0) {
        *why = "malformed CHALLENGE";
        return -EBADMSG;
    }
    memcpy(server_nonce, nonce, AUTH_NONCE_BYTES);
    return 0;
}

void handshake_put_response(struct wbuf *b, const struct auth_key *key,
                            const uint8_t server_nonce[AUTH_NONCE_BYTES],
                            const struct handshake_response *me)
{
    uint8_t mac[AUTH_MAC_BYTES];
    auth_client_mac(key, server_nonce, me->client_nonce, me->role, me->id, mac);
    wbuf_put(b, me->client_nonce, AUTH_NONCE_BYTES);
    wbuf_put_u8(b, me->role);
    wbuf_put_u32(b, me->id);
    wbuf_put(b, mac, AUTH_MAC_BYTES);
}

int handshake_check_response(struct rbuf *p, const struct auth_key *key,
                             const uint8_t server_nonce[AUTH_NONCE_BYTES],
                             struct handshake_response *peer, const char **why)
{
    const uint8_t *nonce = rbuf_bytes(p, AUTH_NONCE_BYTES);
    uint8_t role = rbuf_u8(p);
    uint32_t id = rbuf_u32(p);
    const uint8_t *their_mac = rbuf_bytes(p, AUTH_MAC_BYTES);
    if (!rbuf_ok(p) || p->left != 0) {
        *why = "malformed RESPONSE";
        return -EBADMSG;
    }
    /* The MAC first: a peer without the key learns nothing, not even which roles exist. */
    uint8_t mac[AUTH_MAC_BYTES];
    auth_client_mac(key, server_nonce, nonce, role, id, mac);
    if (!auth_mac_equal(mac, their_mac)) {
        *why = "wrong key (MAC mismatch)";
        return -EACCES;
    }
    if (role != CONN_ROLE_NODE && role != CONN_ROLE_CLIENT) {
        *why = "unknown peer role";
        return -EPROTO;
    }
    memcpy(peer->client_nonce, nonce, AUTH_NONCE_BYTES);
    peer->role = role;
    peer->id = id;
    return 0;
}

void handshake_put_accept(struct wbuf *b, const struct auth_key *key,
                          const uint8_t server_nonce[AUTH_NONCE_BYTES],
                          const uint8_t client_nonce[AUTH_NONCE_BYTES])
{
    uint8_t mac[AUTH_MAC_BYTES];
    auth_server_mac(key, server_nonce, client_nonce, mac);
    wbuf_put(b, mac, AUTH_MAC_BYTES);
}

int handshake_check_accept(struct rbuf *p, const struct auth_key *key,
                           const uint8_t server_nonce[AUTH_NONCE_BYTES],
                           const uint8_t client_nonce[AUTH_NONCE_BYTES], const char **why)
{
    const uint8_t *their_mac = rbuf_bytes(p, AUTH_MAC_BYTES);
    if (!their_mac || p->left != 0) {
        *why = "malformed ACCEPT";
        return -EBADMSG;
    }
    uint8_t mac[AUTH_MAC_BYTES];
    auth_server_mac(key, server_nonce, client_nonce, mac);
    if (!auth_mac_equal(mac, their_mac)) {
        *why = "wrong key (server's ACCEPT MAC mismatch)";
        return -EACCES;
    }
    return 0;
}
