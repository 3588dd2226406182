/*
 * test_handshake — the handshake's payloads (core/net/handshake.c) without sockets: a
 * full exchange between the two sides' functions, and each refusal with the reason
 * the hub logs.  The fuzzer (tests/fuzz/fuzz_handshake.c) drives the same functions
 * with hostile bytes; test_conn drives them through real connections.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/net/conn.h"
#include "core/net/handshake.h"

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + 7 * i);
}

static void test_exchange(void **state)
{
    (void)state;
    struct auth_key key;
    fill(key.bytes, sizeof key.bytes, 1);
    uint8_t server_nonce[AUTH_NONCE_BYTES];
    fill(server_nonce, sizeof server_nonce, 2);

    struct wbuf b;
    wbuf_init(&b);
    handshake_put_challenge(&b, server_nonce);
    assert_int_equal(b.len, HANDSHAKE_CHALLENGE_BYTES);
    struct rbuf r;
    rbuf_init(&r, b.data, b.len);
    uint8_t got_nonce[AUTH_NONCE_BYTES];
    const char *why = NULL;
    assert_int_equal(handshake_get_challenge(&r, got_nonce, &why), 0);
    assert_memory_equal(got_nonce, server_nonce, AUTH_NONCE_BYTES);

    struct handshake_response me = {.role = CONN_ROLE_NODE, .id = 77};
    fill(me.client_nonce, sizeof me.client_nonce, 3);
    wbuf_reset(&b);
    handshake_put_response(&b, &key, got_nonce, &me);
    assert_int_equal(b.len, HANDSHAKE_RESPONSE_BYTES);
    rbuf_init(&r, b.data, b.len);
    struct handshake_response peer;
    assert_int_equal(handshake_check_response(&r, &key, server_nonce, &peer, &why), 0);
    assert_int_equal(peer.role, CONN_ROLE_NODE);
    assert_int_equal(peer.id, 77);
    assert_memory_equal(peer.client_nonce, me.client_nonce, AUTH_NONCE_BYTES);

    wbuf_reset(&b);
    handshake_put_accept(&b, &key, server_nonce, peer.client_nonce);
    assert_int_equal(b.len, HANDSHAKE_ACCEPT_BYTES);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(handshake_check_accept(&r, &key, server_nonce, me.client_nonce, &why), 0);
    wbuf_fini(&b);
}

static void test_refusals(void **state)
{
    (void)state;
    struct auth_key key, other;
    fill(key.bytes, sizeof key.bytes, 1);
    fill(other.bytes, sizeof other.bytes, 9);
    uint8_t server_nonce[AUTH_NONCE_BYTES], nonce[AUTH_NONCE_BYTES];
    fill(server_nonce, sizeof server_nonce, 2);
    memset(nonce, 0xAA, sizeof nonce);
    const char *why = NULL;
    struct rbuf r;

    /* A CHALLENGE one byte short, or one byte long, leaves the nonce alone. */
    uint8_t raw[HANDSHAKE_RESPONSE_BYTES + 1] = {0};
    rbuf_init(&r, raw, HANDSHAKE_CHALLENGE_BYTES - 1);
    assert_int_equal(handshake_get_challenge(&r, nonce, &why), -EBADMSG);
    assert_string_equal(why, "malformed CHALLENGE");
    rbuf_init(&r, raw, HANDSHAKE_CHALLENGE_BYTES + 1);
    assert_int_equal(handshake_get_challenge(&r, nonce, &why), -EBADMSG);
    assert_int_equal(nonce[0], 0xAA);

    /* A RESPONSE of the wrong length, with the wrong key, or from an unknown role. */
    struct handshake_response peer;
    memset(&peer, 0x55, sizeof peer);
    rbuf_init(&r, raw, HANDSHAKE_RESPONSE_BYTES + 1);
    assert_int_equal(handshake_check_response(&r, &key, server_nonce, &peer, &why), -EBADMSG);
    assert_string_equal(why, "malformed RESPONSE");
    struct wbuf b;
    wbuf_init(&b);
    struct handshake_response me = {.role = CONN_ROLE_CLIENT, .id = 5};
    handshake_put_response(&b, &other, server_nonce, &me);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(handshake_check_response(&r, &key, server_nonce, &peer, &why), -EACCES);
    assert_string_equal(why, "wrong key (MAC mismatch)");
    wbuf_reset(&b);
    me.role = 3;
    handshake_put_response(&b, &key, server_nonce, &me);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(handshake_check_response(&r, &key, server_nonce, &peer, &why), -EPROTO);
    assert_string_equal(why, "unknown peer role");
    assert_int_equal(peer.id, 0x55555555u); /* untouched */

    /* An ACCEPT of the wrong length, or MAC'd with another key. */
    rbuf_init(&r, raw, HANDSHAKE_ACCEPT_BYTES - 1);
    assert_int_equal(handshake_check_accept(&r, &key, server_nonce, me.client_nonce, &why),
                     -EBADMSG);
    assert_string_equal(why, "malformed ACCEPT");
    wbuf_reset(&b);
    handshake_put_accept(&b, &other, server_nonce, me.client_nonce);
    rbuf_init(&r, b.data, b.len);
    assert_int_equal(handshake_check_accept(&r, &key, server_nonce, me.client_nonce, &why),
                     -EACCES);
    assert_string_equal(why, "wrong key (server's ACCEPT MAC mismatch)");
    wbuf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exchange),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
