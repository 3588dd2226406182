/*
 * heartbeat — failure detection on the loop (core/policy/fd.c decides): a node watches
 * its two live ring neighbours.  Every interval it sends MSG_HEARTBEAT to a watched
 * neighbour it had nothing else for (any traffic is a heartbeat), and a neighbour silent
 * past --failure-timeout is suspected.  The suspicion goes to the suspect's other live
 * neighbour (MSG_SUSPECT), which declares the node dead if it does not hear it either;
 * with nobody else to ask, the watcher's own suspicion decides.  node_declare_dead
 * (node.c) spreads the death and tells every part.  So one slow link, or one node that
 * missed heartbeats, does not make a death: two nodes must both have heard nothing for
 * the timeout.  The confirmer answers every MSG_SUSPECT with a heartbeat, so that a
 * confirmer that died with the suspect (two ring neighbours killed at once) shows as
 * silent too: after a timeout of asking it in vain the watcher presumes it dead for this
 * suspicion and asks the next live node past it (otherwise each of the two watchers would
 * wait forever for the other dead node's confirmation).  Loop thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    /* Per watched neighbour while it is suspected: the dead set plus the confirmers that
     * stayed silent when asked (presumed[i], node_count entries each, owned), and since
     * when the current confirmer is asked. */
    bool *presumed[2];
    int64_t asked_since[2];
    uv_timer_t timer;
    int64_t last_check_ms;  /* node_now_ms of the last check */
    uint64_t beats, suspicions;
};

/* Who confirms the suspicion of watched neighbour i, at now: the suspect's other live
 * neighbour, or the next one past it once that one was asked for a timeout and said
 * nothing (a live confirmer answers MSG_SUSPECT with a heartbeat).  One step per timeout,
 * so that each confirmer asked had the time to answer.  `first`: the suspicion starts. */
static uint32_t confirmer_for(struct heartbeat *h, uint32_t i, int64_t now, bool first)
{
    struct node *n = h->n;
    uint32_t nodes = node_count(n), self = node_self(n), peer = h->watched[i];
    const bool *dead = node_dead_set(n);
    bool *presumed = h->presumed[i];
    if (first) {
        memcpy(presumed, dead, nodes * sizeof *presumed);
        h->asked_since[i] = now;
    } else {
        for (uint32_t k = 0; k < nodes; k++)
            presumed[k] = presumed[k] || dead[k];
    }
    uint32_t confirmer = fd_confirmer(self, peer, nodes, presumed);
    if (confirmer != self && now - h->asked_since[i] >= h->p.timeout_ms &&
        fd_suspect(&h->p, now, node_heard_ms(n, confirmer))) {
        log_info("node %u, asked to confirm that node %u is silent, is silent too: "
                 "asking past it", confirmer, peer);
        presumed[confirmer] = true;
        h->asked_since[i] = now;
        confirmer = fd_confirmer(self, peer, nodes, presumed);
    }
    return confirmer;
}

/* Silent since `heard`: a death to declare (with nobody else to ask) or to propose. */
static void suspect(struct heartbeat *h, uint32_t peer, uint32_t confirmer, int64_t silent_ms)
{
    struct node *n = h->n;
    if (confirmer == node_self(n)) {
        char why[96];
        snprintf(why, sizeof why, "silent for %.1f s", (double)silent_ms / 1e3);
        node_declare_dead(n, peer, why);
        return;
    }
    size_t at;
    struct wbuf *b = node_msg_begin(n, confirmer, MSG_SUSPECT, &at);
    wbuf_put_u32(b, peer);
    node_msg_end(n, confirmer, at);
}

static void rewatch(struct heartbeat *h)
{
    struct node *n = h->n;
    h->nwatched = fd_watched_live(node_self(n), node_count(n), node_dead_set(n), h->watched);
    h->suspected[0] = h->suspected[1] = false;
}

static void check(struct heartbeat *h)
{
    struct node *n = h->n;
    int64_t now = node_now_ms(n);
    /* This node itself did not run for a while (stopped, or starved of CPU): everyone
     * looks silent from here, and the messages that say otherwise are still unread.
     * Heartbeats go out; suspicions wait for a check that follows a normal interval. */
    bool paused = fd_paused(&h->p, now, h->last_check_ms);
    h->last_check_ms = now;
    for (uint32_t i = 0; i < h->nwatched; i++) {
        uint32_t peer = h->watched[i];
        int64_t heard = node_heard_ms(n, peer);
        bool silent = !paused && fd_suspect(&h->p, now, heard);
        if (silent && !h->suspected[i]) {
            h->suspicions++;
            log_info("node %u silent for %.1f s: suspected", peer, (double)(now - heard) / 1e3);
        } else if (!silent && h->suspected[i]) {
            log_info("node %u heard again", peer);
        }
        bool first = silent && !h->suspected[i];
        h->suspected[i] = silent;
        if (silent) {
            /* Asked again every interval while it lasts: a lost MSG_SUSPECT, or a
             * confirmer that was not yet past the timeout itself, is asked again. */
            suspect(h, peer, confirmer_for(h, i, now, first), now - heard);
            if (!node_alive(n, peer))
                return; /* declared: the watched list changed under us (down) */
        }
        if (fd_beat_due(&h->p, now, node_sent_ms(n, peer), silent)) {
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
    h->presumed[0] = xcalloc(2 * (size_t)node_count(n), sizeof *h->presumed[0]);
    h->presumed[1] = h->presumed[0] + node_count(n);
    fd_params_init(&h->p, node_cfg(n)->failure_timeout_ms);
    h->last_check_ms = node_now_ms(n);
    rewatch(h);
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

static void heartbeat_free(void *state)
{
    struct heartbeat *h = state;
    if (h)
        free(h->presumed[0]);
    free(h);
}

/*
 * MSG_HEARTBEAT: the node noted the sign of life already (node_heard_ms).  MSG_SUSPECT:
 * a neighbour of `node` on its other side suspects it; if this node has not heard it for
 * the timeout either, the node is dead.
 */
static int heartbeat_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct heartbeat *h = state;
    struct node *n = h->n;
    if (type == MSG_HEARTBEAT)
        return 0;
    uint32_t node = rbuf_u32(r);
    if (!rbuf_ok(r) || node >= node_count(n))
        return -EBADMSG;
    /* The answer that shows the asker this confirmer is alive (confirmer_for). */
    size_t at;
    node_msg_begin(n, from, MSG_HEARTBEAT, &at);
    node_msg_end(n, from, at);
    if (node == node_self(n) || !node_alive(n, node))
        return 0;
    int64_t silent = node_now_ms(n) - node_heard_ms(n, node);
    if (fd_suspect(&h->p, node_now_ms(n), node_heard_ms(n, node))) {
        char why[96];
        snprintf(why, sizeof why, "silent for %.1f s here and at node %u", (double)silent / 1e3,
                 from);
        node_declare_dead(n, node, why);
    }
    return 0;
}

/* Watch the next live neighbours instead. */
static void heartbeat_down(void *state, uint32_t node)
{
    (void)node;
    rewatch(state);
}

static const uint16_t heartbeat_types[] = {MSG_HEARTBEAT, MSG_SUSPECT, 0};

const struct part part_heartbeat = {
    .name = "heartbeat",
    .init = heartbeat_init,
    .close = heartbeat_close,
    .free = heartbeat_free,
    .down = heartbeat_down,
    .types = heartbeat_types,
    .on_message = heartbeat_on_message,
};
