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
 * wait forever for the other dead node's confirmation).
 *
 * Refused connections are the fast path.  A daemon that crashed or was killed has its
 * sockets closed by its kernel: its peers read "closed by peer" at once and connecting
 * again is refused, while a live daemon always listens, and a stopped (SIGSTOP) or
 * cut-off one keeps its connections open or lets them time out without a refusal.  The
 * rule: when a connection to a watched neighbour is lost (node.c's `link` event) the
 * watcher connects again at once; if that is refused (node_refused: the node was up
 * once, nothing heard since) it suspects the neighbour without waiting for the timeout,
 * and its MSG_SUSPECT says "refused".  The confirmer declares the death when it has no
 * open connection to the suspect and its own latest connect was refused too; otherwise
 * it connects itself (node_probe) and declares if that is refused while the suspicion
 * is fresh (one timeout), or, as before, once the suspect is silent past the timeout.
 * Only watchers raise refused suspicions (any node may be asked to confirm one), and
 * alone with the suspect a watcher still waits for the timeout: a death takes two nodes'
 * evidence.  A node stopping on purpose says so in its last heartbeat to its watchers
 * (PROTO_BEAT_LEAVING); their refusals then count for nothing, so that stopping a
 * cluster declares no one dead.  Loop thread only.
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
    /* Per node (node_count entries each, owned): it said it is stopping on purpose, and
     * when another node asked this one to confirm a refused suspicion of it (NOT_ASKED:
     * not asked, or answered). */
    bool *leaving;
    int64_t *asked_refused;
    uint32_t *asked_by;     /* who asked, for the log */
    uv_timer_t timer;
    int64_t last_check_ms;  /* node_now_ms of the last check */
    uint64_t beats, suspicions;
};

#define NOT_ASKED INT64_MIN

/* Whether `peer`'s daemon looks gone from here: refused, and it did not say goodbye. */
static bool gone(const struct heartbeat *h, uint32_t peer)
{
    return node_refused(h->n, peer) && !h->leaving[peer];
}

static void beat(struct heartbeat *h, uint32_t peer, uint8_t flags)
{
    size_t at;
    struct wbuf *b = node_msg_begin(h->n, peer, MSG_HEARTBEAT, &at);
    wbuf_put_u8(b, flags);
    node_msg_end(h->n, peer, at);
}

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

/* Silent past the timeout or refused: a death to declare (silent, with nobody else to
 * ask) or to propose. */
static void suspect(struct heartbeat *h, uint32_t peer, uint32_t confirmer, int64_t silent_ms,
                    bool silent, bool refused)
{
    struct node *n = h->n;
    if (confirmer == node_self(n)) {
        /* Alone, a refusal is one node's view: only the timeout decides. */
        if (silent) {
            char why[96];
            snprintf(why, sizeof why, "silent for %.1f s", (double)silent_ms / 1e3);
            node_declare_dead(n, peer, why);
        }
        return;
    }
    size_t at;
    struct wbuf *b = node_msg_begin(n, confirmer, MSG_SUSPECT, &at);
    wbuf_put_u32(b, peer);
    wbuf_put_u8(b, refused ? PROTO_SUSPECT_REFUSED : 0);
    node_msg_end(n, confirmer, at);
}

static void rewatch(struct heartbeat *h)
{
    struct node *n = h->n;
    h->nwatched = fd_watched_live(node_self(n), node_count(n), node_dead_set(n), h->watched);
    h->suspected[0] = h->suspected[1] = false;
}

/* Watched neighbour i at now: suspected (and the confirmer asked) while silent past the
 * timeout or refused; a heartbeat when one is due.  False when the watch changed under
 * it (the neighbour was declared dead). */
static bool watch(struct heartbeat *h, uint32_t i, int64_t now, bool paused)
{
    struct node *n = h->n;
    uint32_t peer = h->watched[i];
    int64_t heard = node_heard_ms(n, peer);
    bool silent = !paused && fd_suspect(&h->p, now, heard);
    bool refused = !paused && gone(h, peer);
    bool suspected = silent || refused;
    if (suspected && !h->suspected[i]) {
        h->suspicions++;
        if (silent)
            log_info("node %u silent for %.1f s: suspected", peer, (double)(now - heard) / 1e3);
        else
            log_info("node %u refuses connections: suspected", peer);
    } else if (!suspected && h->suspected[i]) {
        log_info("node %u heard again", peer);
    }
    bool first = suspected && !h->suspected[i];
    h->suspected[i] = suspected;
    if (suspected) {
        /* Asked again every interval while it lasts: a lost MSG_SUSPECT, or a
         * confirmer that was not yet past the timeout itself, is asked again. */
        suspect(h, peer, confirmer_for(h, i, now, first), now - heard, silent, refused);
        if (!node_alive(n, peer))
            return false; /* declared: the watched list changed under us (down) */
    }
    if (fd_beat_due(&h->p, now, node_sent_ms(n, peer), suspected)) {
        beat(h, peer, 0);
        h->beats++;
    }
    return true;
}

static void check(struct heartbeat *h)
{
    int64_t now = node_now_ms(h->n);
    /* This node itself did not run for a while (stopped, or starved of CPU): everyone
     * looks silent from here, and the messages that say otherwise are still unread.
     * Heartbeats go out; suspicions wait for a check that follows a normal interval. */
    bool paused = fd_paused(&h->p, now, h->last_check_ms);
    h->last_check_ms = now;
    for (uint32_t i = 0; i < h->nwatched; i++)
        if (!watch(h, i, now, paused))
            return;
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
    h->leaving = xcalloc(node_count(n), sizeof *h->leaving);
    h->asked_refused = xcalloc(node_count(n), sizeof *h->asked_refused);
    h->asked_by = xcalloc(node_count(n), sizeof *h->asked_by);
    for (uint32_t i = 0; i < node_count(n); i++)
        h->asked_refused[i] = NOT_ASKED;
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
    if (h) {
        free(h->presumed[0]);
        free(h->leaving);
        free(h->asked_refused);
        free(h->asked_by);
    }
    free(h);
}

/*
 * MSG_HEARTBEAT: the node noted the sign of life already (node_heard_ms); a goodbye is
 * remembered.  MSG_SUSPECT: a neighbour of `node` on its other side suspects it; if this
 * node has not heard it for the timeout either, or the suspicion says refused and this
 * node is refused too (fd_confirm), the node is dead.
 */
static int heartbeat_on_message(void *state, uint32_t from, uint16_t type, struct rbuf *r)
{
    struct heartbeat *h = state;
    struct node *n = h->n;
    if (type == MSG_HEARTBEAT) {
        uint8_t flags = rbuf_u8(r);
        if (!rbuf_ok(r) || (flags & ~PROTO_BEAT_LEAVING))
            return -EBADMSG;
        if (flags & PROTO_BEAT_LEAVING) {
            log_info("node %u is stopping: its closed connections are no crash", from);
            h->leaving[from] = true;
        }
        return 0;
    }
    uint32_t node = rbuf_u32(r);
    uint8_t flags = rbuf_u8(r);
    if (!rbuf_ok(r) || node >= node_count(n) || (flags & ~PROTO_SUSPECT_REFUSED))
        return -EBADMSG;
    /* The answer that shows the asker this confirmer is alive (confirmer_for). */
    beat(h, from, 0);
    if (node == node_self(n) || !node_alive(n, node))
        return 0;
    int64_t now = node_now_ms(n), silent = now - node_heard_ms(n, node);
    bool asked_refused = (flags & PROTO_SUSPECT_REFUSED) && !h->leaving[node];
    char why[96];
    switch (fd_confirm(&h->p, now, node_heard_ms(n, node), asked_refused, gone(h, node))) {
    case FD_DEAD_SILENT:
        snprintf(why, sizeof why, "silent for %.1f s here and at node %u", (double)silent / 1e3,
                 from);
        node_declare_dead(n, node, why);
        break;
    case FD_DEAD_REFUSED:
        snprintf(why, sizeof why, "connections refused here and at node %u", from);
        node_declare_dead(n, node, why);
        break;
    case FD_PROBE:
        /* Confirmed if our own connect is refused while this is fresh (heartbeat_link). */
        h->asked_refused[node] = now;
        h->asked_by[node] = from;
        node_probe(n, node);
        break;
    case FD_KEEP:
        break;
    }
    return 0;
}

/*
 * A lost connection to a watched neighbour, or to a node this one was asked about, is
 * tried again at once: a crashed daemon refuses it.  A refusal of a watched neighbour
 * is a suspicion now, not an interval later; of a node another asked about while
 * fresh, the confirmation.
 */
static void heartbeat_link(void *state, uint32_t peer, enum node_link what)
{
    struct heartbeat *h = state;
    struct node *n = h->n;
    int64_t now = node_now_ms(n);
    bool asked = h->asked_refused[peer] != NOT_ASKED &&
                 now - h->asked_refused[peer] <= h->p.timeout_ms;
    int watched = -1;
    for (uint32_t i = 0; i < h->nwatched; i++)
        if (h->watched[i] == peer)
            watched = (int)i;
    if (h->leaving[peer] || (watched < 0 && !asked))
        return;
    if (what == NODE_LINK_LOST) {
        node_probe(n, peer);
        return;
    }
    if (asked && gone(h, peer)) {
        char why[96];
        snprintf(why, sizeof why, "connections refused here and at node %u",
                 h->asked_by[peer]);
        h->asked_refused[peer] = NOT_ASKED;
        node_declare_dead(n, peer, why);
        return;
    }
    /* A suspicion already raised is asked again every interval (check). */
    if (watched >= 0 && !h->suspected[watched])
        watch(h, (uint32_t)watched, now, fd_paused(&h->p, now, h->last_check_ms));
}

/* The last heartbeat to the watchers: this stop is on purpose. */
static void heartbeat_leaving(void *state)
{
    struct heartbeat *h = state;
    for (uint32_t i = 0; i < h->nwatched; i++)
        beat(h, h->watched[i], PROTO_BEAT_LEAVING);
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
    .link = heartbeat_link,
    .leaving = heartbeat_leaving,
    .types = heartbeat_types,
    .on_message = heartbeat_on_message,
};
