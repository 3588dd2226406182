/*
 * The collector daemon (trace/collector/collector) in-process: collector_run in a thread
 * on a listening socket the test bound on loopback, driven by conn_hub endpoints on the
 * test's own loop acting as nodes and as a client/console, and by a raw socket sending
 * garbage.  Covers the conversation (HELLO → RESUME, BLOCK → ACK, a resend skipped but
 * acknowledged), the drops (another run's HELLO, a block with the wrong sync marker,
 * garbage) while everyone else is served, JOB/NAMES written as records and acknowledged
 * to the client, SUBSCRIBE → INFO then STATE with samples and notes, and MSG_SHUTDOWN;
 * then reads the file back, the job's submission mode among its JOB_SUBMIT's names; a
 * client whose JOB names no known mode is dropped, named in the log with the field.
 * Then job records a client kept while the collector was away, written once by the next
 * collector.  First, JOB's codec alone: its optional mode and what it refuses.
 *
 * Every wait is bounded (run_until gives up after WAIT_MS and fails the test; the join
 * is timed), so a broken collector fails the test instead of hanging it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <uv.h>

#include "core/base/clock.h"
#include "core/base/log.h"
#include "core/model/cluster.h"
#include "core/net/conn.h"
#include "tests/unit/capture.h"
#include "core/net/proto.h"
#include "trace/format/block.h"
#include "trace/collector/collect_file.h"
#include "trace/collector/collector.h"
#include "trace/collector/jobspool.h"
#include "trace/format/reader.h"
#include "trace/format/wire.h"

#define RUN_ID "run-collector-test"
#define WAIT_MS 10000

/* One connection the test made, and what came back on it. */
struct ep {
    struct conn *c;
    bool ready, closed;
    int nresume, nack, ninfo, nstate;
    int64_t resume, ack;
    char info[2048];
    bool saw_grant_note, saw_job_note;
    struct wire_state state;  /* the latest STATE */
};

struct world {
    uv_loop_t loop;
    uv_timer_t tick;
    struct conn_hub *node_hub[2], *client_hub;
    struct auth_key key;
    int port;
    char dir[64], trace[128];
    struct cluster cluster;
    struct cluster_node nodes[2];
    struct collector_config cfg;
    pthread_t thread;
    int status;
    char *cause;
    bool thread_done;
};

/* A node's encoder in miniature: blocks made before the collector starts. */
struct sent_block {
    uint8_t *data;
    uint32_t len, count;
    int64_t first, last;
};

static struct sent_block make_block(struct trace_block *enc, int32_t node, int64_t first,
                                    uint32_t count, const uint8_t sync[TRACE_SYNC_SIZE])
{
    struct sent_block b = {.first = first, .last = first + count - 1, .count = count};
    for (uint32_t i = 0; i < count; i++) {
        struct trace_event ev;
        trace_event_init(&ev, TRACE_TASK_START, node);
        ev.seq = first + i;
        ev.time_ns = 1000000 * (first + i);
        ev.task = (uint64_t)(first + i);
        assert_int_equal(trace_block_append(enc, &ev), 0);
    }
    const uint8_t *data;
    size_t len;
    assert_int_equal(trace_block_finish(enc, sync, &data, &len), 0);
    b.data = malloc(len);
    memcpy(b.data, data, len);
    b.len = (uint32_t)len;
    return b;
}

/* ---- JOB's codec -------------------------------------------------------------------------- */

/* Decodes the n bytes at p as a JOB: its result, with *j filled (the caller finis it). */
static int get_job(const uint8_t *p, size_t n, struct wire_job *j)
{
    struct rbuf r;
    rbuf_init(&r, p, n);
    return wire_get_job(&r, j);
}

/* JOB's payload by hand: the fields up to the digest, then `tail` (len bytes) where the
 * mode goes. */
static void put_job_head(struct wbuf *b, const void *tail, size_t len)
{
    const struct wire_job head = {.job = 4, .tasks = 9, .name = "wl", .digest = "dg"};
    wire_put_job(b, &head);
    wbuf_put(b, tail, len);
}

static void expect_refused(const void *tail, size_t len, const char *field)
{
    struct wbuf b;
    wbuf_init(&b);
    put_job_head(&b, tail, len);
    struct wire_job j;
    assert_int_equal(get_job(b.data, b.len, &j), -EBADMSG);
    assert_null(j.name);
    assert_null(j.digest);
    assert_null(j.mode);
    assert_non_null(j.bad);
    if (!strstr(j.bad, field))
        fail_msg("refused for '%s', not for the %s", j.bad, field);
    wbuf_fini(&b);
}

/* The mode travels, every mode by its name; a JOB without one (a client of before the
 * field) reads as mode "", and NULL or "" is written as exactly that JOB; what a peer
 * could send wrong is refused naming the field. */
static void test_wire_job(void **state)
{
    (void)state;
    static const char *modes[] = {"hashed", "one", "roundrobin", "data"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        struct wbuf b;
        wbuf_init(&b);
        struct wire_job in = {.job = 7, .tasks = 60, .name = "fanin.jsonl", .digest = "ab12",
                              .mode = (char *)modes[i]}, out;
        wire_put_job(&b, &in);
        assert_int_equal(get_job(b.data, b.len, &out), 0);
        assert_int_equal(out.job, 7);
        assert_int_equal(out.tasks, 60);
        assert_string_equal(out.name, "fanin.jsonl");
        assert_string_equal(out.digest, "ab12");
        assert_string_equal(out.mode, modes[i]);
        wire_job_fini(&out);
        wbuf_fini(&b);
    }

    struct wbuf old, none, empty;
    wbuf_init(&old);
    wbuf_init(&none);
    wbuf_init(&empty);
    put_job_head(&old, "", 0);
    struct wire_job j = {.job = 4, .tasks = 9, .name = "wl", .digest = "dg"};
    wire_put_job(&none, &j);
    j.mode = "";
    wire_put_job(&empty, &j);
    assert_int_equal(none.len, old.len);
    assert_memory_equal(none.data, old.data, old.len);
    assert_int_equal(empty.len, old.len);
    assert_int_equal(get_job(old.data, old.len, &j), 0);
    assert_string_equal(j.mode, "");
    assert_string_equal(j.digest, "dg");
    wire_job_fini(&j);
    /* A JOB cut inside its digest is refused, as before the mode. */
    assert_int_equal(get_job(old.data, old.len - 1, &j), -EBADMSG);
    assert_non_null(strstr(j.bad, "digest"));
    assert_int_equal(get_job(old.data, 6, &j), -EBADMSG);
    assert_non_null(strstr(j.bad, "count"));
    wbuf_fini(&old);
    wbuf_fini(&none);
    wbuf_fini(&empty);

    /* Length-prefixed strings with their NUL, as put_cstr writes them. */
    static const uint8_t fast[] = {5, 0, 0, 0, 'f', 'a', 's', 't', 0};
    static const uint8_t upper[] = {4, 0, 0, 0, 'O', 'N', 'E', 0};
    static const uint8_t blank[] = {1, 0, 0, 0, 0};
    static const uint8_t unterminated[] = {3, 0, 0, 0, 'o', 'n', 'e'};
    static const uint8_t inner_nul[] = {5, 0, 0, 0, 'o', 0, 'e', 'x', 0};
    static const uint8_t overlong[] = {12, 0, 0, 0, 'r', 'o', 'u', 'n', 'd', 'r', 'o', 'b',
                                       'i', 'n', 's', 0};
    static const uint8_t huge[] = {0xff, 0xff, 0xff, 0x7f, 'o'};
    static const uint8_t cut[] = {4, 0, 0, 0, 'o', 'n'};
    static const uint8_t partial_len[] = {4, 0};
    static const uint8_t after[] = {4, 0, 0, 0, 'o', 'n', 'e', 0, 1};
    expect_refused(fast, sizeof fast, "mode (not hashed");
    expect_refused(upper, sizeof upper, "mode (not hashed");
    expect_refused(blank, sizeof blank, "mode (not hashed");
    expect_refused(unterminated, sizeof unterminated, "mode (cut short");
    expect_refused(inner_nul, sizeof inner_nul, "mode (cut short");
    expect_refused(overlong, sizeof overlong, "mode (cut short");
    expect_refused(huge, sizeof huge, "mode (cut short");
    expect_refused(cut, sizeof cut, "mode (cut short");
    expect_refused(partial_len, sizeof partial_len, "mode (cut short");
    expect_refused(after, sizeof after, "bytes after the mode");
}

/* ---- the test's side of the wire ---------------------------------------------------------- */

static void on_ready(struct conn *c)
{
    struct ep *e = conn_data(c);
    e->ready = true;
}

static int on_message(struct conn *c, uint16_t type, struct rbuf *r, const char **reason)
{
    struct ep *e = conn_data(c);
    (void)reason;
    switch (type) {
    case MSG_TRACE_RESUME:
        assert_int_equal(wire_get_next_seq(r, &e->resume), 0);
        e->nresume++;
        return 0;
    case MSG_TRACE_ACK:
        assert_int_equal(wire_get_next_seq(r, &e->ack), 0);
        e->nack++;
        return 0;
    case MSG_TRACE_INFO: {
        char *s = rbuf_strdup(r, 1 << 20);
        assert_non_null(s);
        snprintf(e->info, sizeof e->info, "%s", s);
        free(s);
        e->ninfo++;
        return 0;
    }
    case MSG_TRACE_STATE:
        wire_state_fini(&e->state);
        assert_int_equal(wire_get_state(r, &e->state), 0);
        for (uint32_t i = 0; i < e->state.nnotes; i++) {
            const struct wire_note *n = &e->state.notes[i];
            if (n->kind == TRACE_STEAL_GRANT && n->node == 0 && n->count == 4)
                e->saw_grant_note = true;
            if (n->kind == TRACE_JOB_SUBMIT && n->node == -1 && n->count == 3 &&
                strcmp(n->text, "wl-1") == 0)
                e->saw_job_note = true;
        }
        e->nstate++;
        return 0;
    default:
        fail_msg("unexpected message 0x%04x", type);
        return -EBADMSG;
    }
}

static void on_close(struct conn *c, const char *reason)
{
    (void)reason;
    struct ep *e = conn_data(c);
    if (e) {
        e->closed = true;
        e->c = NULL;
    }
}

static const struct conn_callbacks callbacks = {
    .on_ready = on_ready, .on_message = on_message, .on_close = on_close};

static void on_tick(uv_timer_t *t)
{
    (void)t; /* only wakes run_until's loop */
}

/* Runs the test's loop until *flag is true; fails after WAIT_MS. */
static void run_until(struct world *w, const bool *flag, const char *what)
{
    int64_t deadline = clock_mono_ns() + (int64_t)WAIT_MS * 1000000;
    while (!*flag) {
        if (clock_mono_ns() > deadline)
            fail_msg("timed out waiting for %s", what);
        uv_run(&w->loop, UV_RUN_ONCE);
    }
}

#define RUN_UNTIL(w, cond)                                                              \
    do {                                                                                \
        int64_t deadline_ = clock_mono_ns() + (int64_t)WAIT_MS * 1000000;               \
        while (!(cond)) {                                                               \
            if (clock_mono_ns() > deadline_)                                            \
                fail_msg("timed out waiting for %s", #cond);                            \
            uv_run(&(w)->loop, UV_RUN_ONCE);                                            \
        }                                                                               \
    } while (0)

static void connect_ep(struct world *w, struct conn_hub *hub, struct ep *e)
{
    memset(e, 0, sizeof *e);
    char *cause = NULL;
    e->c = conn_connect(hub, "127.0.0.1", w->port, e, &cause);
    assert_non_null(e->c);
    run_until(w, &e->ready, "the handshake");
}

static void send_hello(struct ep *e, const char *run_id, const uint8_t sync[TRACE_SYNC_SIZE])
{
    struct wire_hello h;
    memset(&h, 0, sizeof h);
    snprintf(h.run_id, sizeof h.run_id, "%s", run_id);
    memcpy(h.sync, sync, TRACE_SYNC_SIZE);
    size_t at;
    struct wbuf *b = conn_msg_begin(e->c, MSG_TRACE_HELLO, &at);
    wire_put_hello(b, &h);
    conn_msg_end(e->c, at);
}

static void send_block(struct ep *e, const struct sent_block *sb)
{
    struct wire_block blk = {.first_seq = sb->first, .last_seq = sb->last, .count = sb->count,
                             .data = sb->data, .len = sb->len};
    size_t at;
    struct wbuf *b = conn_msg_begin(e->c, MSG_TRACE_BLOCK, &at);
    wire_put_block(b, &blk);
    conn_msg_end(e->c, at);
}

static void send_live(struct ep *e)
{
    struct trace_event grant;
    trace_event_init(&grant, TRACE_STEAL_GRANT, 0);
    grant.peer = 1;
    grant.count = 4;
    struct wire_note note;
    wire_note_from_event(&note, &grant);
    struct wire_live l = {.time_ns = 5000000, .nnotes = 1, .notes = &note};
    l.sample.busy = 3;
    l.sample.slots = 4;
    size_t at;
    struct wbuf *b = conn_msg_begin(e->c, MSG_TRACE_LIVE, &at);
    wire_put_live(b, &l);
    conn_msg_end(e->c, at);
}

/* ---- the collector's side ------------------------------------------------------------------ */

static void *collector_thread(void *arg)
{
    struct world *w = arg;
    w->status = collector_run(&w->cfg, &w->cause);
    __atomic_store_n(&w->thread_done, true, __ATOMIC_RELEASE);
    return NULL;
}

static int bind_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 64), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Starts a collector on a new directory, or on `dir` again (its trace resumed); with
 * `workdir`, the cluster's work directory is that directory (kept jobs are looked for
 * in its trace-jobs/). */
static void world_start_in(struct world *w, const char *dir, bool workdir)
{
    memset(w, 0, sizeof *w);
    log_set_level(LOG_LEVEL_WARN);
    log_set_tag("test");
    if (dir) {
        snprintf(w->dir, sizeof w->dir, "%s", dir);
    } else {
        strcpy(w->dir, "/tmp/test_collector.XXXXXX");
        assert_non_null(mkdtemp(w->dir));
    }
    snprintf(w->trace, sizeof w->trace, "%s/run.jdt", w->dir);
    if (workdir)
        w->cluster.workdir = w->dir;
    assert_int_equal(auth_init(), 0);
    auth_nonce(w->key.bytes); /* 32 random bytes make a key */
    for (uint32_t i = 0; i < 2; i++)
        w->nodes[i] = (struct cluster_node){.id = i, .host = "127.0.0.1", .port = 40000 + (int)i,
                                            .slots = 4, .speed = 1.0};
    w->cluster.run_id = RUN_ID;
    w->cluster.start_ns = clock_wall_ns() - 1000000000;
    w->cluster.count = 2;
    w->cluster.nodes = w->nodes;
    int fd = bind_loopback(&w->port);
    w->cfg = (struct collector_config){
        .cluster = &w->cluster, .key = w->key, .trace_path = w->trace, .listen_fd = fd,
        .workload_name = "wl-1", .workload_digest = "sha256:feed", .state_floor_ms = 10};
    assert_int_equal(pthread_create(&w->thread, NULL, collector_thread, w), 0);

    assert_int_equal(uv_loop_init(&w->loop), 0);
    uv_timer_init(&w->loop, &w->tick);
    uv_timer_start(&w->tick, on_tick, 20, 20);
    for (uint32_t i = 0; i < 2; i++)
        w->node_hub[i] = conn_hub_create(&w->loop, &w->key, CONN_ROLE_NODE, i, &callbacks, w);
    w->client_hub = conn_hub_create(&w->loop, &w->key, CONN_ROLE_CLIENT, 0, &callbacks, w);
}

static void world_start(struct world *w)
{
    world_start_in(w, NULL, false);
}

static void join_collector(struct world *w)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += WAIT_MS / 1000;
    int rc = pthread_timedjoin_np(w->thread, NULL, &ts);
    if (rc != 0)
        fail_msg("the collector did not stop: %s", strerror(rc));
}

static void world_stop(struct world *w)
{
    uv_timer_stop(&w->tick);
    uv_close((uv_handle_t *)&w->tick, NULL);
    for (uint32_t i = 0; i < 2; i++)
        conn_hub_destroy(w->node_hub[i]);
    conn_hub_destroy(w->client_hub);
    for (int i = 0; i < 100 && uv_loop_alive(&w->loop); i++)
        uv_run(&w->loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&w->loop), 0);
}

/* A peer that is not speaking the protocol: the collector drops it (EOF after its
 * CHALLENGE) and goes on serving. */
static void garbage_peer(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    struct timeval tv = {.tv_sec = WAIT_MS / 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    static const char junk[] = "GET / HTTP/1.0\r\nHost: collector\r\n\r\n";
    assert_int_equal(write(fd, junk, sizeof junk - 1), (ssize_t)(sizeof junk - 1));
    char buf[512];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        ;
    if (n < 0)
        assert_true(errno == ECONNRESET); /* EAGAIN would be the timeout */
    close(fd);
}

static void test_collector_conversation(void **state)
{
    (void)state;
    /* Blocks first, so that only the collector thread uses libavro while it runs. */
    uint8_t sync0[TRACE_SYNC_SIZE], sync1[TRACE_SYNC_SIZE];
    assert_int_equal(trace_sync_new(sync0), 0);
    assert_int_equal(trace_sync_new(sync1), 0);
    struct trace_block *enc;
    assert_int_equal(trace_block_create(&enc, 0), 0);
    struct sent_block a = make_block(enc, 0, 0, 10, sync0);
    struct sent_block b = make_block(enc, 0, 10, 5, sync0);
    struct sent_block c = make_block(enc, 1, 0, 5, sync1);
    trace_block_destroy(enc);

    struct world *w = calloc(1, sizeof *w);
    world_start(w);

    /* Node 0: HELLO → RESUME 0; two blocks and a LIVE → ACK 15. */
    struct ep n0;
    connect_ep(w, w->node_hub[0], &n0);
    send_hello(&n0, RUN_ID, sync0);
    RUN_UNTIL(w, n0.nresume == 1);
    assert_int_equal(n0.resume, 0);
    send_block(&n0, &a);
    send_block(&n0, &b);
    send_live(&n0);
    RUN_UNTIL(w, n0.ack == 15);
    /* A resend is skipped but acknowledged. */
    int acks = n0.nack;
    send_block(&n0, &b);
    RUN_UNTIL(w, n0.nack > acks);
    assert_int_equal(n0.ack, 15);

    /* Node 1 from another run: dropped. */
    struct ep bad;
    connect_ep(w, w->node_hub[1], &bad);
    send_hello(&bad, "some-other-run", sync1);
    run_until(w, &bad.closed, "the drop of another run's node");
    assert_int_equal(bad.nresume, 0);
    /* Node 1 sending a block that ends with another marker: dropped. */
    connect_ep(w, w->node_hub[1], &bad);
    send_hello(&bad, RUN_ID, sync1);
    RUN_UNTIL(w, bad.nresume == 1);
    struct sent_block wrong = a;
    send_block(&bad, &wrong);
    run_until(w, &bad.closed, "the drop of a bad block");
    assert_int_equal(bad.nack, 0);
    garbage_peer(w->port);
    /* Node 1 done right, while node 0 is still connected. */
    struct ep n1;
    connect_ep(w, w->node_hub[1], &n1);
    send_hello(&n1, RUN_ID, sync1);
    RUN_UNTIL(w, n1.nresume == 1);
    assert_int_equal(n1.resume, 0);
    send_block(&n1, &c);
    RUN_UNTIL(w, n1.ack == 5);
    assert_false(n0.closed);

    /* A client: a job with its names, then a console subscription. */
    struct ep cl;
    connect_ep(w, w->client_hub, &cl);
    struct wire_job job = {.job = 1, .tasks = 3, .name = "wl-1", .digest = "sha256:feed",
                           .mode = "one"};
    size_t at;
    struct wbuf *buf = conn_msg_begin(cl.c, MSG_TRACE_JOB, &at);
    wire_put_job(buf, &job);
    conn_msg_end(cl.c, at);
    const char *ids[] = {"alpha", "beta", "gamma"};
    struct wire_names names = {.job = 1, .first = 0, .count = 3, .ids = ids};
    buf = conn_msg_begin(cl.c, MSG_TRACE_NAMES, &at);
    wire_put_names(buf, &names);
    conn_msg_end(cl.c, at);
    /* Both written: the client may forget them (it keeps them itself until then). */
    RUN_UNTIL(w, cl.ack == 2);
    /* A JOB naming no mode we know drops that client alone, and the log says who and
     * which field; nothing of its job reaches the file. */
    struct ep liar;
    connect_ep(w, w->client_hub, &liar);
    struct wire_job lie = {.job = 2, .tasks = 1, .name = "wl-2", .digest = "d", .mode = "fast"};
    buf = conn_msg_begin(liar.c, MSG_TRACE_JOB, &at);
    wire_put_job(buf, &lie);
    conn_msg_end(liar.c, at);
    capture_begin();
    conn_flush(liar.c);
    run_until(w, &liar.closed, "the drop of a client with a bad mode");
    assert_int_equal(capture_end("malformed trace-job: mode (not hashed, one, roundrobin or "
                                 "data)"), 1);
    assert_false(cl.closed);
    buf = conn_msg_begin(cl.c, MSG_TRACE_SUBSCRIBE, &at);
    wire_put_subscribe(buf, 1); /* below the floor: served every 10 ms */
    conn_msg_end(cl.c, at);
    RUN_UNTIL(w, cl.ninfo == 1 && cl.saw_grant_note && cl.saw_job_note &&
                     cl.state.events_written >= 22);
    assert_non_null(strstr(cl.info, "\"run_id\":\"" RUN_ID "\""));
    assert_non_null(strstr(cl.info, "\"workload\":{\"name\":\"wl-1\""));
    assert_int_equal(cl.state.nnodes, 2);
    assert_true(cl.state.nodes[0].seen && cl.state.nodes[0].connected);
    assert_int_equal(cl.state.nodes[0].sample.busy, 3);
    assert_true(cl.state.nodes[1].connected && !cl.state.nodes[1].seen);
    /* Per-job tallies from the blocks' events (folded off the loop, so a STATE or two
     * later): node 1's starts of tasks 0..4 move them off node 0, node 0's resent block
     * counts once; the client's job comes with its name. */
    RUN_UNTIL(w, cl.state.njobs == 2 && cl.state.jobs[1].tasks == 3 &&
                     cl.state.jobs[0].nnodes == 2 && cl.state.jobs[0].nodes[1].running == 5);
    assert_false(cl.state.jobs_partial);
    assert_int_equal(cl.state.njobs, 2);
    const struct wire_job_tally *j0 = &cl.state.jobs[0], *j1 = &cl.state.jobs[1];
    assert_int_equal(j0->job, 0);
    assert_int_equal(j0->running, 15);
    assert_int_equal(j0->submit_ns, -1);
    assert_int_equal(j0->nnodes, 2);
    assert_int_equal(j0->nodes[0].node, 0);
    assert_int_equal(j0->nodes[0].running, 10);
    assert_int_equal(j0->nodes[1].node, 1);
    assert_int_equal(j0->nodes[1].running, 5);
    assert_int_equal(j1->job, 1);
    assert_int_equal(j1->tasks, 3);
    assert_string_equal(j1->name, "wl-1");
    assert_true(j1->submit_ns >= 0);
    assert_int_equal(j1->running + j1->done + j1->nnodes, 0);
    /* Notes already sent are not sent again. */
    int states = cl.nstate;
    RUN_UNTIL(w, cl.nstate >= states + 2);
    assert_int_equal(cl.state.nnotes, 0);

    /* Shutdown: the collector writes, closes every connection and returns. */
    buf = conn_msg_begin(cl.c, MSG_SHUTDOWN, &at);
    conn_msg_end(cl.c, at);
    RUN_UNTIL(w, n0.closed && n1.closed && cl.closed);
    join_collector(w);
    if (w->status != COLLECTOR_OK)
        fail_msg("collector_run: %d %s", w->status, w->cause ? w->cause : "");
    wire_state_fini(&cl.state);
    world_stop(w);

    /* The file: node 0's 15 events once, node 1's 5, the job and its names. */
    struct trace_reader *r = NULL;
    char *cause = NULL;
    int rc = trace_reader_open(&r, w->trace, &cause);
    if (rc)
        fail_msg("reader: %s", cause);
    assert_int_equal(trace_reader_info(r)->tail, TRACE_TAIL_CLEAN);
    assert_non_null(strstr(trace_reader_info(r)->header_json, "\"format\":1"));
    struct trace_event ev;
    int64_t next[2] = {0, 0};
    int own = 0;
    while ((rc = trace_reader_next(r, &ev, &cause)) == 0) {
        if (ev.node >= 0) {
            assert_true(ev.node < 2);
            assert_int_equal(ev.seq, next[ev.node]++);
            continue;
        }
        const char *const *nm;
        size_t nn;
        assert_int_equal(trace_reader_names(r, &nm, &nn), 0);
        if (ev.kind == TRACE_JOB_SUBMIT) {
            assert_int_equal(ev.task >> 32, 1);
            assert_int_equal(nn, 3);
            assert_string_equal(nm[0], "wl-1");
            assert_string_equal(nm[1], "sha256:feed");
            assert_string_equal(nm[2], "one");
            assert_string_equal(ev.text, "sha256:feed");
        } else {
            assert_int_equal(ev.kind, TRACE_TASK_NAMES);
            assert_int_equal(nn, 3);
            assert_string_equal(nm[2], "gamma");
        }
        own++;
    }
    assert_int_equal(rc, TRACE_READER_END);
    assert_int_equal(next[0], 15);
    assert_int_equal(next[1], 5);
    assert_int_equal(own, 2);
    trace_reader_destroy(r);

    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
    assert_int_equal(system(cmd), 0);
    free(w->cause);
    free(w);
    free(a.data);
    free(b.data);
    free(c.data);
}

static void send_job(struct ep *e, uint32_t job, uint32_t tasks, uint32_t first, uint32_t count,
                     const char **ids)
{
    struct wire_job j = {.job = job, .tasks = tasks, .name = "wl-k", .digest = "d"};
    size_t at;
    struct wbuf *buf = conn_msg_begin(e->c, MSG_TRACE_JOB, &at);
    wire_put_job(buf, &j);
    conn_msg_end(e->c, at);
    struct wire_names names = {.job = job, .first = first, .count = count, .ids = ids};
    buf = conn_msg_begin(e->c, MSG_TRACE_NAMES, &at);
    wire_put_names(buf, &names);
    conn_msg_end(e->c, at);
}

static void shutdown_world(struct world *w, struct ep *cl)
{
    size_t at;
    conn_msg_begin(cl->c, MSG_SHUTDOWN, &at);
    conn_msg_end(cl->c, at);
    RUN_UNTIL(w, cl->closed);
    join_collector(w);
    if (w->status != COLLECTOR_OK)
        fail_msg("collector_run: %d %s", w->status, w->cause ? w->cause : "");
    free(w->cause);
    w->cause = NULL;
    world_stop(w);
}

/* Job records a client kept while no collector listened are written when one starts:
 * only what its trace lacks (job 9 had its JOB_SUBMIT and 3 of its 5 names written
 * before the crash that made the client keep it), in full for a job it never saw (11),
 * and the files go once written; a file that is not a kept job is set aside. */
static void test_kept_jobs(void **state)
{
    (void)state;
    const char *ids[] = {"t0", "t1", "t2", "t3", "t4"};
    struct world *w = calloc(1, sizeof *w);
    world_start_in(w, NULL, true);
    struct ep cl;
    connect_ep(w, w->client_hub, &cl);
    send_job(&cl, 9, 5, 0, 3, ids);
    RUN_UNTIL(w, cl.ack == 2);
    shutdown_world(w, &cl);

    char dir[64], jobs[96], bad[128], *path = NULL, *cause = NULL;
    snprintf(dir, sizeof dir, "%s", w->dir);
    snprintf(jobs, sizeof jobs, "%s/trace-jobs", dir);
    assert_int_equal(jobspool_keep(jobs, 9, 5, "wl-k", "d", NULL, ids, &path, &cause), 0);
    free(path);
    assert_int_equal(jobspool_keep(jobs, 11, 2, "wl-2", NULL, "roundrobin", ids + 3, &path,
                                   &cause), 0);
    free(path);
    snprintf(bad, sizeof bad, "%s/job-12.jsonl", jobs);
    FILE *f = fopen(bad, "w");
    fputs("not json\n", f);
    fclose(f);

    world_start_in(w, dir, true);
    connect_ep(w, w->client_hub, &cl);
    shutdown_world(w, &cl);

    char **left;
    size_t nleft;
    assert_int_equal(jobspool_list(jobs, &left, &nleft, &cause), 0);
    assert_int_equal(nleft, 0);
    strcat(bad, ".bad");
    assert_int_equal(access(bad, F_OK), 0);

    struct trace_reader *r = NULL;
    assert_int_equal(trace_reader_open(&r, w->trace, &cause), 0);
    struct trace_event ev;
    int submits[16] = {0};
    uint32_t names_next[16] = {0};
    int64_t seq = 0;
    while (trace_reader_next(r, &ev, &cause) == 0) {
        assert_int_equal(ev.node, COLLECT_FILE_OWN_NODE);
        assert_int_equal(ev.seq, seq++);
        uint32_t job = (uint32_t)(ev.task >> 32);
        assert_true(job == 9 || job == 11);
        const char *const *nm;
        size_t nn;
        assert_int_equal(trace_reader_names(r, &nm, &nn), 0);
        if (ev.kind == TRACE_JOB_SUBMIT) {
            submits[job]++;
            assert_int_equal(ev.count, job == 9 ? 5 : 2);
            /* Job 9's JOB_SUBMIT came over the wire (send_job says no mode), job 11's
             * from its kept file with the mode. */
            assert_int_equal(nn, 3);
            assert_string_equal(nm[2], job == 9 ? "" : "roundrobin");
            continue;
        }
        assert_int_equal(ev.kind, TRACE_TASK_NAMES);
        /* In order, each name once. */
        assert_int_equal(ev.task & UINT32_MAX, names_next[job]);
        for (size_t i = 0; i < nn; i++)
            assert_string_equal(nm[i], ids[(job == 9 ? 0 : 3) + names_next[job] + i]);
        names_next[job] += (uint32_t)nn;
    }
    trace_reader_destroy(r);
    assert_int_equal(submits[9], 1);
    assert_int_equal(submits[11], 1);
    assert_int_equal(names_next[9], 5);
    assert_int_equal(names_next[11], 2);

    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_job),
        cmocka_unit_test(test_collector_conversation),
        cmocka_unit_test(test_kept_jobs),
    };
    return cmocka_run_group_tests_name("collector", tests, NULL, NULL);
}
