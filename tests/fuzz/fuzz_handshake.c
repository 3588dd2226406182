/*
 * fuzz_handshake — libFuzzer harness for the connection handshake: the bytes a peer
 * sends before it is authenticated, read as conn.c reads them (frame_parse with the
 * pre-authentication limit, then each message through the step its phase expects) and
 * checked by core/net/handshake.c, whose pure functions conn.c's static steps call.
 * The phase logic below mirrors conn.c's dispatch_frame, which needs a socket; the
 * parsing and checking it leads to is the daemon's own code.  Built by `make fuzz`,
 * replayed by `make fuzz-replay` (README.md).
 *
 * The first input byte says which side this is (FUZZ_HS_CLIENT: we connected, the
 * peer is a server sending CHALLENGE then ACCEPT; else we accepted and sent CHALLENGE,
 * the peer sends RESPONSE) and whether to forge (FUZZ_HS_FORGE: a RESPONSE or ACCEPT
 * of the right size gets the right MAC, so that what lies behind the MAC check is
 * reached too).  Besides memory safety it checks: a failed check names a reason,
 * returns one of the documented errors and writes nothing; an accepted RESPONSE carries
 * the MAC of its own fields, a known role, and is exactly what handshake_put_response
 * writes for them (the encoding is canonical); a CHALLENGE accepted by the client
 * leads to a RESPONSE the server side accepts and an ACCEPT the client accepts; no
 * frame over FRAME_MAX_BODY_PREAUTH is read before the handshake ends.
 */
#include <errno.h>
#include <stdbool.h>

#include "core/net/conn.h"
#include "core/net/frame.h"
#include "core/net/handshake.h"
#include "core/net/proto.h"
#include "tests/fuzz/fuzz.h"

enum phase { WAIT_CHALLENGE, WAIT_RESPONSE, WAIT_ACCEPT, READY };

struct side {
    enum phase phase;
    bool forge;
    struct auth_key key;
    uint8_t server_nonce[AUTH_NONCE_BYTES];
    uint8_t client_nonce[AUTH_NONCE_BYTES];
    struct handshake_response peer;
};

static void check_refusal(int rc, const char *why)
{
    check(rc == -EBADMSG || rc == -EACCES || rc == -EPROTO);
    check(why != NULL && why[0] != '\0');
}

/* The client answered a CHALLENGE: the server it talks to must accept what it says,
 * and it must accept that server's ACCEPT. */
static void check_exchange(struct side *s)
{
    struct handshake_response me = {.role = CONN_ROLE_NODE, .id = 3};
    memcpy(me.client_nonce, s->client_nonce, AUTH_NONCE_BYTES);
    struct wbuf b;
    wbuf_init(&b);
    handshake_put_response(&b, &s->key, s->server_nonce, &me);
    check(b.len == HANDSHAKE_RESPONSE_BYTES);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    struct handshake_response seen;
    const char *why = NULL;
    check(handshake_check_response(&r, &s->key, s->server_nonce, &seen, &why) == 0);
    check(seen.role == me.role && seen.id == me.id &&
          memcmp(seen.client_nonce, me.client_nonce, AUTH_NONCE_BYTES) == 0);
    wbuf_reset(&b);
    handshake_put_accept(&b, &s->key, s->server_nonce, seen.client_nonce);
    rbuf_init(&r, b.data, b.len);
    check(handshake_check_accept(&r, &s->key, s->server_nonce, s->client_nonce, &why) == 0);
    wbuf_fini(&b);
}

/* Writes the MAC the check expects over a payload of the right size (FUZZ_HS_FORGE). */
static void forge(struct side *s, uint16_t type, uint8_t *p, size_t len)
{
    uint8_t mac[AUTH_MAC_BYTES];
    if (type == CONN_MSG_RESPONSE && len == HANDSHAKE_RESPONSE_BYTES) {
        uint32_t id = (uint32_t)p[AUTH_NONCE_BYTES + 1] | (uint32_t)p[AUTH_NONCE_BYTES + 2] << 8 |
                      (uint32_t)p[AUTH_NONCE_BYTES + 3] << 16 |
                      (uint32_t)p[AUTH_NONCE_BYTES + 4] << 24;
        auth_client_mac(&s->key, s->server_nonce, p, p[AUTH_NONCE_BYTES], id, mac);
        memcpy(p + AUTH_NONCE_BYTES + 5, mac, AUTH_MAC_BYTES);
    } else if (type == CONN_MSG_ACCEPT && len == HANDSHAKE_ACCEPT_BYTES) {
        auth_server_mac(&s->key, s->server_nonce, s->client_nonce, mac);
        memcpy(p, mac, AUTH_MAC_BYTES);
    }
}

static int on_response(struct side *s, struct rbuf *p)
{
    const uint8_t *start = p->p;
    size_t len = p->left;
    struct handshake_response peer;
    memset(&peer, 0xee, sizeof peer);
    const char *why = NULL;
    int rc = handshake_check_response(p, &s->key, s->server_nonce, &peer, &why);
    if (rc < 0) {
        check_refusal(rc, why);
        uint8_t untouched[sizeof peer];
        memset(untouched, 0xee, sizeof untouched);
        check(memcmp(&peer, untouched, sizeof peer) == 0);
        return rc;
    }
    check(peer.role == CONN_ROLE_NODE || peer.role == CONN_ROLE_CLIENT);
    /* What was accepted is what the encoder writes for the same fields, MAC included. */
    struct wbuf b;
    wbuf_init(&b);
    handshake_put_response(&b, &s->key, s->server_nonce, &peer);
    check(b.len == len && memcmp(b.data, start, len) == 0);
    wbuf_fini(&b);
    s->peer = peer;
    s->phase = READY;
    return 0;
}

static int on_challenge(struct side *s, struct rbuf *p)
{
    uint8_t nonce[AUTH_NONCE_BYTES];
    memset(nonce, 0xee, sizeof nonce);
    const char *why = NULL;
    int rc = handshake_get_challenge(p, nonce, &why);
    if (rc < 0) {
        check_refusal(rc, why);
        for (size_t i = 0; i < sizeof nonce; i++)
            check(nonce[i] == 0xee);
        return rc;
    }
    memcpy(s->server_nonce, nonce, sizeof nonce);
    check_exchange(s);
    s->phase = WAIT_ACCEPT;
    return 0;
}

static int on_accept(struct side *s, struct rbuf *p)
{
    const char *why = NULL;
    int rc = handshake_check_accept(p, &s->key, s->server_nonce, s->client_nonce, &why);
    if (rc < 0) {
        check_refusal(rc, why);
        return rc;
    }
    s->phase = READY;
    return 0;
}

/* conn.c's dispatch_frame, without the connection: 0 to go on, negative to drop. */
static int dispatch(struct side *s, struct frame_view *v)
{
    uint16_t type;
    struct rbuf payload;
    int rc;
    while ((rc = frame_next(v, &type, &payload)) != 0) {
        if (rc < 0)
            return rc;
        /* Forging writes into a copy: the input is read-only. */
        uint8_t copy[FRAME_MAX_BODY_PREAUTH];
        if (s->forge && s->phase != READY && payload.left <= sizeof copy) {
            memcpy(copy, payload.p, payload.left);
            forge(s, type, copy, payload.left);
            rbuf_init(&payload, copy, payload.left);
        }
        int bad = 0;
        if (s->phase == WAIT_CHALLENGE && type == CONN_MSG_CHALLENGE)
            bad = on_challenge(s, &payload);
        else if (s->phase == WAIT_RESPONSE && type == CONN_MSG_RESPONSE)
            bad = on_response(s, &payload);
        else if (s->phase == WAIT_ACCEPT && type == CONN_MSG_ACCEPT)
            bad = on_accept(s, &payload);
        else if (s->phase != READY || type < PROTO_FIRST_APP_TYPE)
            return -EPROTO;
        if (bad)
            return bad;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static bool ready;
    if (!ready) {
        check(auth_init() == 0);
        ready = true;
    }
    struct side s;
    memset(&s, 0, sizeof s);
    s.forge = data[0] & FUZZ_HS_FORGE;
    s.phase = data[0] & FUZZ_HS_CLIENT ? WAIT_CHALLENGE : WAIT_RESPONSE;
    fuzz_hs_key(&s.key);
    fuzz_hs_nonces(s.server_nonce, s.client_nonce);
    data++;
    size--;
    size_t off = 0;
    while (off < size) {
        bool preauth = s.phase != READY;
        uint32_t max_body = preauth ? FRAME_MAX_BODY_PREAUTH : FRAME_MAX_BODY;
        struct frame_view v;
        size_t frame_len = 0;
        int rc = frame_parse(data + off, size - off, max_body, &v, &frame_len);
        if (rc != FRAME_OK)
            break;
        check(!preauth || v.body_len <= FRAME_MAX_BODY_PREAUTH);
        check(frame_len >= FRAME_HEADER_BYTES && frame_len <= size - off);
        if (dispatch(&s, &v) < 0)
            break;
        off += frame_len;
    }
    return 0;
}
