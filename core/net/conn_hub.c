/*
 * conn_hub — the hub of conn.h: its life, its listener, accepting and connecting, and
 * the uv_prepare callback that ends every loop pass.
 *
 * Owns the hub and its listening socket; the connections themselves are conn.c's.
 * Called by the node daemon and the client library on their loop thread.
 *
 * The prepare callback is where the two rules of conn.c are kept: it announces and
 * closes the connections marked during the pass (so no owner hears on_close from
 * inside one of that connection's callbacks), then writes each dirty connection's
 * batch with one write.  It runs right before the loop would block.  It also lets the
 * late messages (conn_msg_end_late) go once they have waited the hub's late_ms; the
 * late timer does that for a loop that has no pass to make.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/conn_internal.h"

#define LISTEN_BACKLOG 1024

static int parse_addr(const char *host, int port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (!host || port < 0 || port > 65535)
        return -EINVAL;
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)ss) == 0)
        return 0;
    if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)ss) == 0)
        return 0;
    return -EINVAL;
}

static int addr_port(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    if (ss->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return -1;
}

/* "1.2.3.4:5" or "[::1]:5": the form every log line and on_close reason uses. */
static void format_addr(const struct sockaddr_storage *ss, char *out, size_t n)
{
    char ip[64] = "?";
    if (ss->ss_family == AF_INET)
        uv_ip4_name((const struct sockaddr_in *)ss, ip, sizeof ip);
    else if (ss->ss_family == AF_INET6)
        uv_ip6_name((const struct sockaddr_in6 *)ss, ip, sizeof ip);
    if (ss->ss_family == AF_INET6)
        snprintf(out, n, "[%s]:%d", ip, addr_port(ss));
    else
        snprintf(out, n, "%s:%d", ip, addr_port(ss));
}

void conn__hub_release(struct conn_hub *hub)
{
    assert(hub->refs > 0);
    if (--hub->refs == 0) {
        assert(hub->destroying);
        free(hub);
    }
}

void conn__hub_want_prepare(struct conn_hub *hub)
{
    if (!hub->destroying)
        uv_ref((uv_handle_t *)&hub->prepare);
}

/* The messages that could wait have waited long enough: they leave this pass. */
static void release_late(struct conn_hub *hub)
{
    while (link_linked(&hub->late))
        conn__mark_dirty(CONTAINER_OF(hub->late.next, struct conn, dirty_link));
    uv_timer_stop(&hub->late_timer);
}

static void on_late(uv_timer_t *t)
{
    release_late(t->data);
}

/*
 * Late messages leave from the first loop pass after they have waited late_ms
 * (on_prepare), a pass the loop makes anyway on a busy node; the timer, at twice that,
 * only wakes a node that has nothing else to do.  A timer at late_ms was a wake-up of its
 * own every late_ms on a node whose sleeps woke it every millisecond.
 */
void conn__hub_late_gone(struct conn_hub *hub)
{
    if (!hub->destroying && !link_linked(&hub->late))
        uv_timer_stop(&hub->late_timer);
}

void conn__hub_want_late(struct conn_hub *hub)
{
    if (hub->destroying || uv_is_active((uv_handle_t *)&hub->late_timer))
        return;
    hub->late_since = uv_now(hub->loop);
    uv_timer_start(&hub->late_timer, on_late, 2 * (uint64_t)hub->late_ms, 0);
}

void conn_hub_set_late_ms(struct conn_hub *hub, uint32_t ms)
{
    hub->late_ms = ms;
    if (uv_is_active((uv_handle_t *)&hub->late_timer))
        uv_timer_start(&hub->late_timer, on_late, 2 * (uint64_t)ms, 0);
}

/*
 * Once per loop pass, before the loop sleeps.  Closes first, because an owner's
 * on_close often queues messages to other peers, which must leave in this same pass;
 * flushing calls no owner code, so it can only add closes (a failed write), never
 * more output.
 */
static void on_prepare(uv_prepare_t *p)
{
    struct conn_hub *hub = p->data;
    if (!hub->destroying && link_linked(&hub->late) &&
        uv_now(hub->loop) - hub->late_since >= hub->late_ms)
        release_late(hub);
    for (;;) {
        while (!hub->destroying && link_linked(&hub->closing))
            conn__finish(CONTAINER_OF(hub->closing.next, struct conn, closing_link), NULL);
        if (hub->destroying)
            return;
        if (!link_linked(&hub->dirty))
            break;
        while (link_linked(&hub->dirty))
            conn__flush(CONTAINER_OF(hub->dirty.next, struct conn, dirty_link));
    }
    uv_unref((uv_handle_t *)p);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct conn_hub *hub = server->data;
    if (status < 0) {
        /* EMFILE and friends: the listener stays, the next accept may work. */
        log_warn("accept failed: %s", uv_strerror(status));
        return;
    }
    struct conn *c = conn__create(hub, NULL);
    int rc = uv_accept(server, (uv_stream_t *)&c->tcp);
    if (rc < 0) {
        log_warn("accept failed: %s", uv_strerror(rc));
        conn__finish(c, "accept failed");
        return;
    }
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0)
        format_addr(&ss, c->name, sizeof c->name);
    conn__start_accepted(c);
}

static void on_handle_closed(uv_handle_t *h)
{
    conn__hub_release(h->data);
}

static void on_listener_closed(uv_handle_t *h)
{
    struct conn_hub *hub = h->data;
    free(h);
    conn__hub_release(hub);
}

struct conn_hub *conn_hub_create(uv_loop_t *loop, const struct auth_key *key, uint8_t my_role,
                                 uint32_t my_id, const struct conn_callbacks *cb, void *data)
{
    if (!loop || !key || !cb || !cb->on_message || auth_init() < 0)
        return NULL;
    struct conn_hub *hub = xcalloc(1, sizeof *hub);
    hub->loop = loop;
    hub->key = *key;
    hub->my_role = my_role;
    hub->my_id = my_id;
    hub->cb = *cb;
    hub->data = data;
    link_init(&hub->conns);
    link_init(&hub->dirty);
    link_init(&hub->closing);
    link_init(&hub->late);
    hub->late_ms = CONN_LATE_MS;
    uv_timer_init(loop, &hub->late_timer);
    hub->late_timer.data = hub;
    uv_prepare_init(loop, &hub->prepare);
    hub->prepare.data = hub;
    uv_prepare_start(&hub->prepare, on_prepare);
    /* Referenced only while it has work (conn__hub_want_prepare), so an idle hub does
     * not keep uv_run from returning. */
    uv_unref((uv_handle_t *)&hub->prepare);
    hub->refs = 2; /* prepare and late_timer */
    return hub;
}

/* A receive buffer conn_hub_trim leaves alone: about one read's worth. */
#define CONN_TRIM_KEEP (64u * 1024)

void conn_hub_destroy(struct conn_hub *hub)
{
    if (!hub || hub->destroying)
        return;
    hub->destroying = true;
    if (hub->listener) {
        uv_close((uv_handle_t *)hub->listener, on_listener_closed);
        hub->listener = NULL;
    }
    /* on_close may close or drop other conns; they are still on the list. */
    while (link_linked(&hub->conns))
        conn__finish(CONTAINER_OF(hub->conns.next, struct conn, all), "hub destroyed");
    uv_close((uv_handle_t *)&hub->prepare, on_handle_closed);
    uv_close((uv_handle_t *)&hub->late_timer, on_handle_closed);
}

void *conn_hub_data(const struct conn_hub *hub)
{
    return hub->data;
}

void conn_hub_trim(struct conn_hub *hub)
{
    for (struct link *l = hub->conns.next; l != &hub->conns; l = l->next) {
        struct conn *c = CONTAINER_OF(l, struct conn, all);
        if (c->rlen == 0 && c->rcap > CONN_TRIM_KEEP) {
            free(c->rbuf);
            c->rbuf = NULL;
            c->rcap = 0;
        }
        conn__drop_spare(c);
    }
}

uv_loop_t *conn_hub_loop(const struct conn_hub *hub)
{
    return hub->loop;
}

static int start_listener(struct conn_hub *hub, const char *what, const struct sockaddr *addr,
                          int fd, char **cause)
{
    if (hub->destroying || hub->listener) {
        if (cause)
            *cause = xasprintf("cannot listen on %s: %s", what,
                               hub->destroying ? "the hub is being destroyed" : "already listening");
        return -EALREADY;
    }
    uv_tcp_t *l = xmalloc(sizeof *l);
    uv_tcp_init(hub->loop, l);
    l->data = hub;
    hub->refs++;
    int rc = addr ? uv_tcp_bind(l, addr, 0) : uv_tcp_open(l, fd);
    /* EADDRINUSE may surface here rather than from bind. */
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)l, LISTEN_BACKLOG, on_connection);
    if (rc < 0) {
        uv_close((uv_handle_t *)l, on_listener_closed);
        if (cause)
            *cause = xasprintf("cannot listen on %s: %s", what, uv_strerror(rc));
        return rc;
    }
    hub->listener = l;
    log_info("listening on %s port=%d", what, conn_hub_port(hub));
    return 0;
}

int conn_hub_listen(struct conn_hub *hub, const char *host, int port, char **cause)
{
    struct sockaddr_storage ss;
    if (parse_addr(host, port, &ss) < 0) {
        if (cause)
            *cause = xasprintf("cannot listen on '%s' port %d: not a numeric IPv4 or IPv6 address "
                               "and port", host ? host : "(null)", port);
        return -EINVAL;
    }
    char what[80];
    format_addr(&ss, what, sizeof what);
    return start_listener(hub, what, (const struct sockaddr *)&ss, -1, cause);
}

int conn_hub_listen_fd(struct conn_hub *hub, int fd, char **cause)
{
    char what[32];
    snprintf(what, sizeof what, "inherited socket %d", fd);
    return start_listener(hub, what, NULL, fd, cause);
}

int conn_hub_port(const struct conn_hub *hub)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (!hub->listener || uv_tcp_getsockname(hub->listener, (struct sockaddr *)&ss, &len) < 0)
        return -1;
    return addr_port(&ss);
}

struct conn *conn_connect(struct conn_hub *hub, const char *host, int port, void *data,
                          char **cause)
{
    struct sockaddr_storage ss;
    if (parse_addr(host, port, &ss) < 0 || port == 0 || hub->destroying) {
        if (cause)
            *cause = xasprintf("cannot connect to '%s' port %d: %s", host ? host : "(null)", port,
                               hub->destroying ? "the hub is being destroyed"
                                               : "not a numeric IPv4 or IPv6 address and port");
        return NULL;
    }
    struct conn *c = conn__create(hub, data);
    c->visible = true;
    format_addr(&ss, c->name, sizeof c->name);
    conn__start_connect(c, (const struct sockaddr *)&ss);
    return c;
}

void conn_hub_stats(const struct conn_hub *hub, struct conn_hub_stats *out)
{
    *out = hub->stats;
    out->spare_bytes = hub->spare_bytes;
}
