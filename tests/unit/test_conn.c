/*
 * test_conn — conn hubs talking to each other over loopback inside one process and one
 * uv_loop: handshake, batching, ordering, refusals of wrong keys and garbage, drops,
 * graceful close and teardown.  Raw libuv sockets stand in for broken or hostile peers.
 *
 * Every wait is bounded by an unreferenced watchdog timer (it fails the test rather
 * than hang it), and each fixture tears down until uv_loop_close succeeds, so a handle
 * the library forgets to close fails the test; ASan finds forgotten memory.
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
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <uv.h>

#include "core/base/log.h"
#include "core/net/conn.h"
#include "core/net/frame.h"

#define MSG_SEQ 0x0100
#define MSG_DESTROY_HUB 0x01FE
#define MSG_REJECT 0x01FF
#define MAX_RECS 8
#define WAIT_MS 5000

struct world;
struct side;

/* What one side saw of one connection. */
struct rec {
    struct side *side;
    struct conn *c;         /* not to be used once closed */
    int ready, closed;
    uint64_t received;
    uint32_t next;
    bool out_of_order;
    uint8_t role;
    uint32_t id;
    char reason[256];
};

struct side {
    struct world *w;
    struct conn_hub *hub;
    struct rec recs[MAX_RECS];
    int nrecs;
    int burst_on_ready;     /* messages queued from on_ready, in that one pass */
    size_t burst_filler;    /* their payload beyond the sequence number; 0: 12 bytes */
    bool echo;              /* send every message back */
    int64_t slow_ns;        /* on_message busy-waits this long: a slow consumer */
    uint64_t run, longest_run; /* messages handled since the last loop pass; most */
    uint16_t reject_type;   /* on_message fails for this type */
};

/* A socket that speaks as little of the protocol as a test wants. */
enum raw_mode { RAW_GARBAGE, RAW_SILENT, RAW_AUTH_THEN_OVERSIZE };

struct raw {
    struct world *w;
    uv_tcp_t tcp;
    uv_connect_t creq;
    bool open, gone;
    enum raw_mode mode;
    int step;
    uint8_t in[1024];
    size_t inlen;
    uint8_t server_nonce[AUTH_NONCE_BYTES], client_nonce[AUTH_NONCE_BYTES];
};

struct world {
    uv_loop_t loop;
    uv_timer_t watchdog;
    bool timed_out;
    struct auth_key key, wrong_key;
    struct side server, client, stranger;
    struct raw raw;
    int port;
    int saved_stderr;       /* -1 unless stderr is being captured */
    uv_check_t pass;        /* counts loop passes for a test that starts it */
    bool pass_on;
    char capture_path[64];
};

static void on_watchdog(uv_timer_t *t)
{
    struct world *w = t->data;
    w->timed_out = true;
    uv_stop(&w->loop);
}

static void arm(struct world *w, uint64_t ms)
{
    w->timed_out = false;
    uv_update_time(&w->loop);
    uv_timer_start(&w->watchdog, on_watchdog, ms, 0);
}

/* Runs the loop until `cond` holds; fails the test after `ms`, or at once if nothing is
 * left that could make it hold. */
#define RUN_UNTIL_MS(w, ms, cond)                                                         \
    do {                                                                                  \
        arm((w), (ms));                                                                   \
        while (!(cond) && !(w)->timed_out)                                                \
            if (uv_run(&(w)->loop, UV_RUN_ONCE) == 0 && !(cond))                          \
                fail_msg("loop ran dry waiting for %s", #cond);                           \
        uv_timer_stop(&(w)->watchdog);                                                    \
        if (!(cond))                                                                      \
            fail_msg("timed out waiting for %s", #cond);                                  \
    } while (0)
#define RUN_UNTIL(w, cond) RUN_UNTIL_MS(w, WAIT_MS, cond)

static struct side *side_of(struct conn *c)
{
    return conn_hub_data(conn_hub_of(c));
}

static struct rec *new_rec(struct side *s, struct conn *c)
{
    assert_true(s->nrecs < MAX_RECS);
    struct rec *r = &s->recs[s->nrecs++];
    r->side = s;
    r->c = c;
    return r;
}

static void send_seq(struct conn *c, uint32_t seq, size_t filler)
{
    size_t at;
    struct wbuf *b = conn_msg_begin(c, MSG_SEQ, &at);
    wbuf_put_u32(b, seq);
    uint8_t *p = wbuf_reserve(b, filler);
    for (size_t i = 0; i < filler; i++)
        p[i] = (uint8_t)(seq + i);
    b->len += filler;
    conn_msg_end(c, at);
}

static void send_empty(struct conn *c, uint16_t type)
{
    size_t at;
    conn_msg_begin(c, type, &at);
    conn_msg_end(c, at);
}

static void on_ready(struct conn *c)
{
    struct side *s = side_of(c);
    struct rec *r = conn_data(c);
    if (!r) {
        r = new_rec(s, c);
        conn_set_data(c, r);
    }
    r->ready++;
    r->role = conn_peer_role(c);
    r->id = conn_peer_id(c);
    for (int i = 0; i < s->burst_on_ready; i++)
        send_seq(c, (uint32_t)i, s->burst_filler ? s->burst_filler : 12);
}

static int on_message(struct conn *c, uint16_t type, struct rbuf *payload, const char **reason)
{
    struct side *s = side_of(c);
    struct rec *r = conn_data(c);
    if (type == s->reject_type) {
        *reason = "the test rejects this type";
        return -EPROTO;
    }
    if (type == MSG_DESTROY_HUB) {
        conn_hub_destroy(s->hub);
        s->hub = NULL;
        return 0;
    }
    uint32_t seq = rbuf_u32(payload);
    size_t filler = payload->left;
    const uint8_t *p = rbuf_bytes(payload, filler);
    for (size_t i = 0; p && i < filler; i++)
        if (p[i] != (uint8_t)(seq + i))
            r->out_of_order = true;
    if (!rbuf_ok(payload) || seq != r->next)
        r->out_of_order = true;
    r->next = seq + 1;
    r->received++;
    if (s->slow_ns) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000 + (t.tv_nsec - t0.tv_nsec) < s->slow_ns);
    }
    if (++s->run > s->longest_run)
        s->longest_run = s->run;
    if (s->echo)
        send_seq(c, seq, filler);
    return 0;
}

static void on_close(struct conn *c, const char *reason)
{
    struct rec *r = conn_data(c);
    /* Incoming connections are announced only once authenticated. */
    assert_non_null(r);
    r->closed++;
    snprintf(r->reason, sizeof r->reason, "%s", reason);
}

static const struct conn_callbacks callbacks = {on_ready, on_message, on_close};

static void side_init(struct world *w, struct side *s, const struct auth_key *key, uint8_t role,
                      uint32_t id)
{
    s->w = w;
    s->hub = conn_hub_create(&w->loop, key, role, id, &callbacks, s);
    assert_non_null(s->hub);
}

static struct rec *dial(struct side *s)
{
    char *cause = NULL;
    struct rec *r = new_rec(s, NULL);
    r->c = conn_connect(s->hub, "127.0.0.1", s->w->port, r, &cause);
    assert_non_null(r->c);
    assert_null(cause);
    return r;
}

static struct conn_hub_stats stats(const struct side *s)
{
    struct conn_hub_stats st;
    conn_hub_stats(s->hub, &st);
    return st;
}

static int world_setup(void **state)
{
    struct world *w = calloc(1, sizeof *w);
    if (!w || uv_loop_init(&w->loop) != 0)
        return -1;
    w->saved_stderr = -1;
    uv_timer_init(&w->loop, &w->watchdog);
    w->watchdog.data = w;
    uv_unref((uv_handle_t *)&w->watchdog);
    auth_nonce(w->key.bytes);
    auth_nonce(w->wrong_key.bytes);
    *state = w;
    side_init(w, &w->server, &w->key, CONN_ROLE_NODE, 1);
    char *cause = NULL;
    if (conn_hub_listen(w->server.hub, "127.0.0.1", 0, &cause) != 0) {
        fprintf(stderr, "%s\n", cause);
        free(cause);
        return -1;
    }
    w->port = conn_hub_port(w->server.hub);
    side_init(w, &w->client, &w->key, CONN_ROLE_NODE, 42);
    side_init(w, &w->stranger, &w->wrong_key, CONN_ROLE_CLIENT, 9);
    return 0;
}

static void capture_stderr(struct world *w)
{
    snprintf(w->capture_path, sizeof w->capture_path, "/tmp/jackdaw-conn-log-XXXXXX");
    int fd = mkstemp(w->capture_path);
    assert_true(fd >= 0);
    fflush(stderr);
    w->saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* Restores stderr, repeats what was captured there, and returns it (owned). */
static char *end_capture(struct world *w)
{
    if (w->saved_stderr < 0)
        return NULL;
    fflush(stderr);
    dup2(w->saved_stderr, 2);
    close(w->saved_stderr);
    w->saved_stderr = -1;
    FILE *f = fopen(w->capture_path, "r");
    char *text = calloc(1, 65536);
    size_t n = f ? fread(text, 1, 65535, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    unlink(w->capture_path);
    fputs(text, stderr);
    return text;
}

static void on_raw_closed(uv_handle_t *h)
{
    struct raw *raw = h->data;
    raw->open = false;
}

static int world_teardown(void **state)
{
    struct world *w = *state;
    free(end_capture(w));
    conn_hub_destroy(w->server.hub);
    conn_hub_destroy(w->client.hub);
    conn_hub_destroy(w->stranger.hub);
    if (w->raw.open && !uv_is_closing((uv_handle_t *)&w->raw.tcp))
        uv_close((uv_handle_t *)&w->raw.tcp, on_raw_closed);
    if (w->pass_on)
        uv_close((uv_handle_t *)&w->pass, NULL);
    /* The watchdog is unreferenced: uv_run returns once every other handle is closed. */
    arm(w, WAIT_MS);
    uv_run(&w->loop, UV_RUN_DEFAULT);
    bool timed_out = w->timed_out;
    uv_close((uv_handle_t *)&w->watchdog, NULL);
    uv_run(&w->loop, UV_RUN_DEFAULT);
    int rc = uv_loop_close(&w->loop);
    free(w);
    if (timed_out || rc != 0) {
        fprintf(stderr, "teardown: %s\n", timed_out ? "timed out" : "handles left open");
        return -1;
    }
    return 0;
}

static void test_handshake_roles_and_names(void **state)
{
    struct world *w = *state;
    assert_true(w->port > 0);
    struct rec *cr = dial(&w->client);
    assert_false(conn_is_ready(cr->c));
    RUN_UNTIL(w, cr->ready == 1 && w->server.nrecs == 1 && w->server.recs[0].ready == 1);
    struct rec *sr = &w->server.recs[0];
    assert_int_equal(sr->role, CONN_ROLE_NODE);
    assert_int_equal(sr->id, 42);
    assert_true(conn_is_ready(sr->c));
    assert_true(conn_is_ready(cr->c));
    assert_int_equal(strncmp(conn_peer_name(sr->c), "127.0.0.1:", 10), 0);
    char want[32];
    snprintf(want, sizeof want, "127.0.0.1:%d", w->port);
    assert_string_equal(conn_peer_name(cr->c), want);
    /* The server does not announce itself in the handshake. */
    assert_int_equal(conn_peer_role(cr->c), 0);
    assert_ptr_equal(conn_hub_of(cr->c), w->client.hub);
    assert_ptr_equal(conn_hub_loop(w->client.hub), &w->loop);
    assert_int_equal(stats(&w->server).dropped, 0);
    assert_int_equal(cr->closed + sr->closed, 0);
}

static void test_burst_in_order_in_few_frames(void **state)
{
    struct world *w = *state;
    w->client.burst_on_ready = 10000;
    /* The server's burst rides behind its ACCEPT, so the client reads the end of the
     * handshake and the first messages in one go. */
    w->server.burst_on_ready = 10000;
    struct rec *cr = dial(&w->client);
    RUN_UNTIL(w, w->server.nrecs == 1 && w->server.recs[0].received == 10000 &&
                     cr->received == 10000);
    struct rec *sr = &w->server.recs[0];
    assert_false(sr->out_of_order);
    assert_false(cr->out_of_order);
    struct conn_hub_stats cs = stats(&w->client), ss = stats(&w->server);
    assert_int_equal(cs.messages_out, 10000);
    /* RESPONSE plus the messages (22 bytes each on the wire) in frames of about
     * FRAME_SOFT_BODY; one more for slack. */
    uint64_t frames = 2 + (10000 * 22) / FRAME_SOFT_BODY + 1;
    assert_true(cs.frames_out <= frames);
    assert_true(ss.frames_in <= frames);
    assert_int_equal(ss.messages_in, 10000 + 1);
    RUN_UNTIL(w, conn_pending_bytes(cr->c) == 0);
    assert_int_equal(cs.bytes_out, stats(&w->server).bytes_in);
}

static void send_seq_late(struct conn *c, uint32_t seq)
{
    size_t at;
    struct wbuf *b = conn_msg_begin(c, MSG_SEQ, &at);
    wbuf_put_u32(b, seq);
    conn_msg_end_late(c, at);
}

/* A message that may wait (conn_msg_end_late) does not leave in the pass that queued
 * it, but at once, in order, with a message that may not wait; or on its own once it
 * has waited the hub's late_ms. */
static void test_late_messages_wait_for_company(void **state)
{
    struct world *w = *state;
    conn_hub_set_late_ms(w->client.hub, 600000); /* for ever, as far as this test goes */
    struct rec *cr = dial(&w->client);
    RUN_UNTIL(w, cr->ready == 1 && w->server.nrecs == 1);
    struct rec *sr = &w->server.recs[0];
    uv_run(&w->loop, UV_RUN_NOWAIT); /* the pass that became ready writes what it queued */
    uint64_t frames = stats(&w->client).frames_out;
    send_seq_late(cr->c, 0);
    send_seq_late(cr->c, 1);
    for (int i = 0; i < 3; i++)
        uv_run(&w->loop, UV_RUN_NOWAIT);
    assert_true(conn_queued_bytes(cr->c) > 0);
    assert_int_equal(stats(&w->client).frames_out, frames);
    send_seq(cr->c, 2, 12);
    uv_run(&w->loop, UV_RUN_NOWAIT);
    assert_int_equal(conn_queued_bytes(cr->c), 0);
    RUN_UNTIL(w, sr->received == 3);
    assert_false(sr->out_of_order);
    assert_int_equal(stats(&w->client).frames_out, frames + 1);
    /* Alone, it leaves once it has waited. */
    conn_hub_set_late_ms(w->client.hub, 1);
    send_seq_late(cr->c, 3);
    RUN_UNTIL(w, sr->received == 4);
    assert_false(sr->out_of_order);
}

/* A batch the socket takes whole is written there and then, with nothing left queued
 * for libuv (conn.c, write_now); one larger than the socket's buffers is finished by
 * uv_write, in order. */
static void test_small_batches_written_at_once(void **state)
{
    struct world *w = *state;
    w->server.echo = true;
    struct rec *cr = dial(&w->client);
    RUN_UNTIL(w, cr->ready == 1);
    for (uint32_t i = 0; i < 100; i++) {
        send_seq(cr->c, i, 100);
        RUN_UNTIL(w, cr->received == i + 1);
    }
    assert_int_equal(stats(&w->client).writes_queued, 0);
    assert_int_equal(stats(&w->server).writes_queued, 0);
    send_seq(cr->c, 100, 12u << 20);
    send_seq(cr->c, 101, 5);
    RUN_UNTIL(w, cr->received == 102);
    assert_false(cr->out_of_order);
    assert_false(w->server.recs[0].out_of_order);
    assert_true(stats(&w->client).writes_queued >= 1);
}

static void on_pass(uv_check_t *h)
{
    ((struct side *)h->data)->run = 0;
}


/* A slow consumer under a long burst still lets its loop turn: a connection's reads
 * stop for the pass once they have held the loop about a millisecond (conn.c,
 * READ_BUDGET_NS), though libuv would read on while the socket is full.  4 MB of 1 KB
 * messages, 20 us each to handle: without the budget, a pass read up to 32 full
 * buffers (about 2,000 messages); with it, one or two. */
static void test_reads_yield_to_the_loop(void **state)
{
    struct world *w = *state;
    w->server.slow_ns = 20000;
    w->client.burst_on_ready = 4000;
    w->client.burst_filler = 1020;
    uv_check_init(&w->loop, &w->pass);
    w->pass_on = true;
    w->pass.data = &w->server;
    uv_check_start(&w->pass, on_pass);
    uv_unref((uv_handle_t *)&w->pass);
    struct rec *cr = dial(&w->client);
    (void)cr;
    RUN_UNTIL_MS(w, 60000, w->server.nrecs == 1 && w->server.recs[0].received == 4000);
    assert_false(w->server.recs[0].out_of_order);
    assert_true(w->server.longest_run > 0);
    assert_true(w->server.longest_run <= 600);
}

static void test_large_messages_echoed(void **state)
{
    struct world *w = *state;
    w->server.echo = true;
    struct rec *cr = dial(&w->client);
    RUN_UNTIL(w, cr->ready == 1);
    /* Several soft frames, then one message of 8 MiB that grows the receive buffers. */
    for (uint32_t i = 0; i < 2000; i++)
        send_seq(cr->c, i, 2048);
    send_seq(cr->c, 2000, 8u << 20);
    send_seq(cr->c, 2001, 1);
    assert_true(conn_pending_bytes(cr->c) > (8u << 20));
    RUN_UNTIL(w, cr->received == 2002);
    assert_false(cr->out_of_order);
    assert_false(w->server.recs[0].out_of_order);
    struct conn_hub_stats cs = stats(&w->client);
    /* 2,000 x 2 KiB in soft frames, the 8 MiB one alone, the last after it. */
    assert_true(cs.frames_out >= 5 && cs.frames_out < (2000u * 2060) / FRAME_SOFT_BODY + 10);
    RUN_UNTIL(w, conn_pending_bytes(cr->c) == 0);
}

/* Trimming both hubs between bursts, even with traffic in flight, loses and reorders
 * nothing: the buffers come back as the next burst needs them. */
static void test_trim_between_bursts(void **state)
{
    struct world *w = *state;
    w->server.echo = true;
    struct rec *cr = dial(&w->client);
    RUN_UNTIL(w, cr->ready == 1);
    send_seq(cr->c, 0, 4u << 20);
    RUN_UNTIL(w, cr->received == 1);
    conn_hub_trim(w->client.hub);
    conn_hub_trim(w->server.hub);
    for (uint32_t i = 1; i < 400; i++) {
        send_seq(cr->c, i, i % 7 ? 4096 : 300000);
        if (i % 50 == 0) {
            conn_hub_trim(w->client.hub);
            conn_hub_trim(w->server.hub);
        }
    }
    send_seq(cr->c, 400, 4u << 20);
    RUN_UNTIL(w, cr->received == 401);
    assert_false(cr->out_of_order);
    assert_false(w->server.recs[0].out_of_order);
}

/* Of n connections, how many are ready with `count` echoes back and nothing left to
 * write. */
static int echoed(struct rec *const *cr, int n, uint64_t count)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += cr[i]->ready && cr[i]->received == count && conn_pending_bytes(cr[i]->c) == 0;
    return k;
}

/* Idle spare send buffers are bounded per hub, not per connection: seven connections
 * that each wrote batches of half a megabyte keep at most CONN_HUB_SPARE_BYTES of them
 * between them (they kept 7 MiB), and still keep one. */
static void test_spares_bounded_per_hub(void **state)
{
    struct world *w = *state;
    w->server.echo = true;
    enum { CONNS = 7, ROUNDS = 3 };
    struct rec *cr[CONNS];
    for (int i = 0; i < CONNS; i++)
        cr[i] = dial(&w->client);
    RUN_UNTIL(w, echoed(cr, CONNS, 0) == CONNS);
    for (uint32_t r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < CONNS; i++)
            send_seq(cr[i]->c, r, 512u << 10);
        RUN_UNTIL(w, echoed(cr, CONNS, r + 1) == CONNS);
    }
    for (int i = 0; i < CONNS; i++)
        assert_false(cr[i]->out_of_order);
    struct side *sides[2] = {&w->client, &w->server};
    for (int s = 0; s < 2; s++) {
        struct conn_hub_stats st = stats(sides[s]);
        assert_true(st.spare_bytes >= (512u << 10));
        assert_true(st.spare_bytes <= CONN_HUB_SPARE_BYTES);
    }
}

static void test_queued_before_ready(void **state)
{
    struct world *w = *state;
    struct rec *cr = dial(&w->client);
    for (uint32_t i = 0; i < 100; i++)
        send_seq(cr->c, i, 100);
    size_t pending = conn_pending_bytes(cr->c);
    assert_true(pending > 100 * 100);
    conn_flush(cr->c); /* not authenticated yet: nothing may leave */
    assert_int_equal(conn_pending_bytes(cr->c), pending);
    RUN_UNTIL(w, w->server.nrecs == 1 && w->server.recs[0].received == 100);
    assert_false(w->server.recs[0].out_of_order);
    assert_int_equal(cr->ready, 1);
    RUN_UNTIL(w, conn_pending_bytes(cr->c) == 0);
}

static void test_wrong_key_refused(void **state)
{
    struct world *w = *state;
    capture_stderr(w);
    struct rec *bad = dial(&w->stranger);
    send_seq(bad->c, 0, 10); /* must never reach the server */
    RUN_UNTIL(w, bad->closed == 1);
    char *log = end_capture(w);
    assert_int_equal(bad->ready, 0);
    assert_non_null(strstr(bad->reason, "wrong cluster key?"));
    RUN_UNTIL(w, stats(&w->server).dropped == 1);
    assert_non_null(strstr(log, "wrong key (MAC mismatch)"));
    assert_non_null(strstr(log, "dropping 127.0.0.1:"));
    free(log);
    assert_int_equal(w->server.nrecs, 0);
    assert_int_equal(stats(&w->server).messages_in, 1); /* the RESPONSE only */

    struct rec *good = dial(&w->client);
    send_seq(good->c, 0, 10);
    RUN_UNTIL(w, w->server.nrecs == 1 && w->server.recs[0].received == 1);
    assert_int_equal(good->ready, 1);
    assert_int_equal(stats(&w->server).dropped, 1);
}

static void on_raw_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void raw_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct raw *raw = h->data;
    *buf = uv_buf_init((char *)raw->in + raw->inlen, (unsigned)(sizeof raw->in - raw->inlen));
}

static void raw_send(struct raw *raw, const void *p, size_t n)
{
    /* A fresh socket's buffer takes a few KiB at once; no write request needed. */
    uv_buf_t b = uv_buf_init((char *)p, (unsigned)n);
    assert_int_equal(uv_try_write((uv_stream_t *)&raw->tcp, &b, 1), (int)n);
}

static void on_raw_connect(uv_connect_t *req, int status)
{
    struct raw *raw = req->data;
    assert_int_equal(status, 0);
    uv_read_start((uv_stream_t *)&raw->tcp, raw_alloc, on_raw_read);
    if (raw->mode == RAW_GARBAGE) {
        uint8_t junk[4096];
        auth_nonce(junk);
        for (size_t i = AUTH_NONCE_BYTES; i < sizeof junk; i += AUTH_NONCE_BYTES)
            auth_nonce(junk + i);
        raw_send(raw, junk, sizeof junk);
    }
}

/* Takes one whole frame's single message off the input, or returns false. */
static bool raw_take(struct raw *raw, uint16_t want_type, uint8_t *out, size_t out_len)
{
    struct frame_view v;
    size_t flen;
    if (frame_parse(raw->in, raw->inlen, FRAME_MAX_BODY_PREAUTH, &v, &flen) != FRAME_OK)
        return false;
    uint16_t type;
    struct rbuf pl;
    assert_int_equal(frame_next(&v, &type, &pl), 1);
    assert_int_equal(type, want_type);
    assert_int_equal(pl.left, out_len);
    memcpy(out, rbuf_bytes(&pl, out_len), out_len);
    memmove(raw->in, raw->in + flen, raw->inlen - flen);
    raw->inlen -= flen;
    return true;
}

/* Plays the client side of the handshake by hand, then sends a lying header. */
static void raw_auth_step(struct raw *raw)
{
    struct world *w = raw->w;
    uint8_t mac[AUTH_MAC_BYTES];
    if (raw->step == 0 && raw_take(raw, CONN_MSG_CHALLENGE, raw->server_nonce, AUTH_NONCE_BYTES)) {
        auth_nonce(raw->client_nonce);
        auth_client_mac(&w->key, raw->server_nonce, raw->client_nonce, CONN_ROLE_CLIENT, 77, mac);
        struct wbuf body, out;
        wbuf_init(&body);
        wbuf_init(&out);
        wbuf_put(&body, raw->client_nonce, AUTH_NONCE_BYTES);
        wbuf_put_u8(&body, CONN_ROLE_CLIENT);
        wbuf_put_u32(&body, 77);
        wbuf_put(&body, mac, AUTH_MAC_BYTES);
        frame_write_single(&out, CONN_MSG_RESPONSE, body.data, body.len);
        raw_send(raw, out.data, out.len);
        wbuf_fini(&body);
        wbuf_fini(&out);
        raw->step = 1;
    }
    if (raw->step == 1 && raw_take(raw, CONN_MSG_ACCEPT, mac, AUTH_MAC_BYTES)) {
        uint8_t want[AUTH_MAC_BYTES];
        auth_server_mac(&w->key, raw->server_nonce, raw->client_nonce, want);
        assert_true(auth_mac_equal(mac, want));
        struct wbuf h;
        wbuf_init(&h);
        wbuf_put_u32(&h, 20000000);
        wbuf_put_u16(&h, FRAME_MAGIC);
        wbuf_put_u8(&h, FRAME_VERSION);
        wbuf_put_u8(&h, 0);
        wbuf_put_u32(&h, 1);
        raw_send(raw, h.data, h.len);
        wbuf_fini(&h);
        raw->step = 2;
    }
}

static void on_raw_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    struct raw *raw = s->data;
    if (nread < 0) {
        raw->gone = true;
        uv_close((uv_handle_t *)&raw->tcp, on_raw_closed);
        return;
    }
    raw->inlen += (size_t)nread;
    if (raw->mode == RAW_AUTH_THEN_OVERSIZE)
        raw_auth_step(raw);
    else
        raw->inlen = 0;
}

static void raw_start(struct world *w, enum raw_mode mode)
{
    struct raw *raw = &w->raw;
    memset(raw, 0, sizeof *raw);
    raw->w = w;
    raw->mode = mode;
    uv_tcp_init(&w->loop, &raw->tcp);
    raw->tcp.data = raw;
    raw->creq.data = raw;
    raw->open = true;
    struct sockaddr_in addr;
    uv_ip4_addr("127.0.0.1", w->port, &addr);
    assert_int_equal(uv_tcp_connect(&raw->creq, &raw->tcp, (const struct sockaddr *)&addr,
                                    on_raw_connect), 0);
}

static void test_garbage_dropped_server_carries_on(void **state)
{
    struct world *w = *state;
    capture_stderr(w);
    raw_start(w, RAW_GARBAGE);
    RUN_UNTIL(w, w->raw.gone && stats(&w->server).dropped == 1);
    char *log = end_capture(w);
    /* Random bytes fail the magic check (or, once in 65536 runs, a later one). */
    assert_non_null(strstr(log, "dropping 127.0.0.1:"));
    free(log);
    assert_int_equal(w->server.nrecs, 0);
    struct rec *good = dial(&w->client);
    send_seq(good->c, 0, 10);
    RUN_UNTIL(w, w->server.nrecs == 1 && w->server.recs[0].received == 1);
}

static void test_oversize_header_after_auth(void **state)
{
    struct world *w = *state;
    raw_start(w, RAW_AUTH_THEN_OVERSIZE);
    RUN_UNTIL(w, w->raw.gone && w->server.nrecs == 1 && w->server.recs[0].closed == 1);
    struct rec *sr = &w->server.recs[0];
    assert_int_equal(sr->ready, 1);
    assert_int_equal(sr->role, CONN_ROLE_CLIENT);
    assert_int_equal(sr->id, 77);
    assert_int_equal(w->raw.step, 2);
    assert_string_equal(sr->reason, "frame body 20000000 bytes over limit 16777216");
    assert_int_equal(stats(&w->server).dropped, 1);
}

static void test_handshake_timeout(void **state)
{
    struct world *w = *state;
    capture_stderr(w);
    raw_start(w, RAW_SILENT);
    RUN_UNTIL_MS(w, CONN_HANDSHAKE_MS + 3000, w->raw.gone);
    char *log = end_capture(w);
    assert_non_null(strstr(log, "handshake timeout"));
    free(log);
    assert_int_equal(stats(&w->server).dropped, 1);
}

static void test_rejected_message_drops_only_that_conn(void **state)
{
    struct world *w = *state;
    w->server.reject_type = MSG_REJECT;
    struct rec *a = dial(&w->client);
    struct rec *b = dial(&w->client);
    RUN_UNTIL(w, a->ready && b->ready && w->server.nrecs == 2);
    send_seq(a->c, 0, 4);
    send_empty(a->c, MSG_REJECT);
    send_seq(a->c, 1, 4); /* after the bad one: never delivered */
    RUN_UNTIL(w, a->closed == 1 && (w->server.recs[0].closed || w->server.recs[1].closed));
    assert_non_null(strstr(a->reason, "closed by peer"));
    struct rec *sa = w->server.recs[0].closed ? &w->server.recs[0] : &w->server.recs[1];
    assert_int_equal(sa->closed, 1);
    assert_int_equal(sa->received, 1);
    assert_non_null(strstr(sa->reason, "message type 0x01ff rejected: the test rejects this type"));
    assert_int_equal(stats(&w->server).dropped, 1);

    struct rec *sb = sa == &w->server.recs[0] ? &w->server.recs[1] : &w->server.recs[0];
    for (uint32_t i = 0; i < 50; i++)
        send_seq(b->c, i, 4);
    RUN_UNTIL(w, sb->received == 50);
    assert_int_equal(b->closed + sb->closed, 0);
    assert_true(conn_is_ready(b->c));
}

static void test_connect_failures(void **state)
{
    struct world *w = *state;
    char *cause = NULL;
    assert_null(conn_connect(w->client.hub, "localhost", w->port, NULL, &cause));
    assert_non_null(strstr(cause, "localhost"));
    free(cause);

    /* A port nobody listens on: bind one, read it, release it. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    close(fd);
    struct rec *r = new_rec(&w->client, NULL);
    r->c = conn_connect(w->client.hub, "127.0.0.1", ntohs(addr.sin_port), r, &cause);
    assert_non_null(r->c);
    send_seq(r->c, 0, 1);
    RUN_UNTIL(w, r->closed == 1);
    assert_non_null(strstr(r->reason, "connection refused"));
    assert_int_equal(r->ready, 0);
    assert_int_equal(stats(&w->client).dropped, 0);
}

static void test_graceful_close_delivers_everything(void **state)
{
    struct world *w = *state;
    struct rec *cr = dial(&w->client);
    for (uint32_t i = 0; i < 1000; i++)
        send_seq(cr->c, i, 64);
    conn_close(cr->c, "work done");
    RUN_UNTIL(w, cr->closed == 1 && w->server.nrecs == 1 && w->server.recs[0].closed == 1);
    struct rec *sr = &w->server.recs[0];
    assert_int_equal(sr->received, 1000);
    assert_false(sr->out_of_order);
    assert_string_equal(cr->reason, "work done");
    assert_string_equal(sr->reason, "closed by peer");
    assert_int_equal(cr->ready, 0); /* closed before ready: no on_ready */
    assert_int_equal(stats(&w->server).dropped, 0);
}

static void test_hub_destroy_with_live_conns(void **state)
{
    struct world *w = *state;
    struct rec *a = dial(&w->client);
    struct rec *b = dial(&w->client);
    send_seq(a->c, 0, 10);
    RUN_UNTIL(w, w->server.nrecs == 2 && w->server.recs[0].ready && w->server.recs[1].ready &&
                     a->ready && b->ready);
    send_seq(w->server.recs[0].c, 0, 10); /* queued, never sent */
    conn_hub_destroy(w->server.hub);
    w->server.hub = NULL;
    assert_int_equal(w->server.recs[0].closed, 1);
    assert_int_equal(w->server.recs[1].closed, 1);
    assert_string_equal(w->server.recs[0].reason, "hub destroyed");
    RUN_UNTIL(w, a->closed == 1 && b->closed == 1);
}

static void test_hub_destroyed_inside_callback(void **state)
{
    struct world *w = *state;
    struct rec *cr = dial(&w->client);
    send_seq(cr->c, 0, 10);
    send_empty(cr->c, MSG_DESTROY_HUB);
    send_seq(cr->c, 1, 10); /* same frame, after the hub is gone */
    RUN_UNTIL(w, w->server.hub == NULL && cr->closed == 1);
    assert_int_equal(w->server.recs[0].received, 1);
    assert_int_equal(w->server.recs[0].closed, 1);
}

static void test_drop_by_owner(void **state)
{
    struct world *w = *state;
    struct rec *cr = dial(&w->client);
    RUN_UNTIL(w, cr->ready == 1 && w->server.nrecs == 1);
    send_seq(cr->c, 0, 10);
    conn_drop(cr->c, "owner gave up");
    assert_int_equal(cr->closed, 0); /* announced later, outside the caller's frame */
    RUN_UNTIL(w, cr->closed == 1 && w->server.recs[0].closed == 1);
    assert_string_equal(cr->reason, "owner gave up");
    assert_int_equal(w->server.recs[0].received, 0);
    assert_int_equal(stats(&w->client).dropped, 1);
}

int main(void)
{
    if (getenv("JACKDAW_TEST_DEBUG"))
        log_set_level(LOG_LEVEL_DEBUG);
#define T(fn) cmocka_unit_test_setup_teardown(fn, world_setup, world_teardown)
    const struct CMUnitTest tests[] = {
        T(test_handshake_roles_and_names),
        T(test_burst_in_order_in_few_frames),
        T(test_small_batches_written_at_once),
        T(test_late_messages_wait_for_company),
        T(test_reads_yield_to_the_loop),
        T(test_large_messages_echoed),
    T(test_trim_between_bursts),
    T(test_spares_bounded_per_hub),
    T(test_queued_before_ready),
        T(test_wrong_key_refused),
        T(test_garbage_dropped_server_carries_on),
        T(test_oversize_header_after_auth),
        T(test_handshake_timeout),
        T(test_rejected_message_drops_only_that_conn),
        T(test_connect_failures),
        T(test_graceful_close_delivers_everything),
        T(test_hub_destroy_with_live_conns),
        T(test_hub_destroyed_inside_callback),
        T(test_drop_by_owner),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
