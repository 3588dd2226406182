/*
 * heartbeat — failure detection on the loop, the part that shows how a mechanism joins
 * the star (part.h): one pure policy file (core/policy/fd.c), this part file and their
 * tests (tests/unit/test_fd.c, test_part_heartbeat.c); node.c did not change beyond
 * noting when it last heard from and sent to each peer.  A node watches its two ring
 * neighbours: every interval it sends MSG_HEARTBEAT to a watched neighbour it had
 * nothing else for (any traffic is a heartbeat), and a neighbour silent past
 * --failure-timeout is suspected, which the log says once, as it says when the
 * neighbour is heard again.  Acting on a suspicion (confirmation, a membership epoch,
 * resubmitting the lost node's tasks) is issue 15's; this part only detects.
 * Loop thread only.
 */
#include <stdlib.h>

#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/net/proto.h"
#include "core/policy/fd.h"
#include "core/runtime/part.h"

struct heartbeat {
    struct node *n;
    struct fd_params p;
    uint32_t watched[2];
    uint32_t nwatched;
    bool suspected[2];
    uv_timer_t timer;
    uint64_t beats, suspicions;
};

static void check(struct heartbeat *h)
{
    struct node *n = h->n;
    int64_t now = node_now_ms(n);
    for (uint32_t i = 0; i < h->nwatched; i++) {
        uint32_t peer = h->watched[i];
        int64_t heard = node_heard_ms(n, peer);
        bool suspect = fd_suspect(&h->p, now, heard);
        if (suspect && !h->suspected[i]) {
            h->suspicions++;
            log_info("node %u silent for %.1f s: suspected", peer, (double)(now - heard) / 1e3);
        } else if (!suspect && h->suspected[i]) {
            log_info("node %u heard again", peer);
        }
        h->suspected[i] = suspect;
        if (fd_beat_due(&h->p, now, node_sent_ms(n, peer), suspect)) {
            size_t at;
            node_msg_begin(n, peer, MSG_HEARTBEAT, &at);
            node_msg_end(n, peer, at);
            h->beats++;
        }
    }
}

static void timer_cb(uv_timer_t *t)
{
    struct heartbeat *h = t->data;
    if (!node_stopping(h->n))
        check(h);
}

static void *heartbeat_init(struct node *n, char **cause)
{
    (void)cause;
    struct heartbeat *h = xcalloc(1, sizeof *h);
    h->n = n;
    fd_params_init(&h->p, node_cfg(n)->failure_timeout_ms);
    h->nwatched = fd_watched(node_self(n), node_count(n), h->watched);
    uv_timer_init(node_loop(n), &h->timer);
    h->timer.data = h;
    if (h->nwatched) {
        uv_timer_start(&h->timer, timer_cb, (uint64_t)h->p.interval_ms,
                       (uint64_t)h->p.interval_ms);
        /* Watching others must not keep a stopping node's loop alive. */
        uv_unref((uv_handle_t *)&h->timer);
    }
    return h;
}

static void heartbeat_close(void *state)
{
    struct heartbeat *h = state;
    uv_timer_stop(&h->timer);
    uv_close((uv_handle_t *)&h->timer, NULL);
    if (h->nwatched)
        log_debug("heartbeat: %llu sent, %llu suspicions", (unsigned long long)h->beats,
                  (unsigned long long)h->suspicions);
}

/* The node noted the sign of life already (node_heard_ms); nothing else to do. */
static int heartbeat_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    (void)state;
    (void)from;
    (void)type;
    (void)r;
    return 0;
}

static const uint16_t heartbeat_types[] = {MSG_HEARTBEAT, 0};

const struct part part_heartbeat = {
    .name = "heartbeat",
    .init = heartbeat_init,
    .close = heartbeat_close,
    .free = free,
    .types = heartbeat_types,
    .on_message = heartbeat_on_message,
};
