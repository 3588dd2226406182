/*
 * fd — failure detection and membership as pure functions: a node watches its two live
 * ring neighbours, sends each a heartbeat when it had nothing else to send it for an
 * interval (traffic is the heartbeat otherwise: any message counts), and suspects a
 * neighbour silent for longer than the timeout.  A suspected neighbour gets heartbeats
 * only once per timeout, so that a dead one is not called every interval.  A suspicion
 * is confirmed by the suspect's other live neighbour (fd_confirmer), which declares the
 * node dead if it does not hear it either.  The ring skips dead members everywhere
 * (fd_next_live), and roles held by one node (the LW leader, the CTWS token's maker)
 * pass to the lowest live id (fd_lowest_live).  `dead` arrays have `nodes` entries.
 * A crashed daemon's connections are refused at once (nothing listens at its address),
 * which two nodes may take for its death without waiting for the timeout (fd_confirm).
 *
 * Owns nothing; no I/O, no clock, no globals, no allocation: times are passed in, in
 * ms of one monotonic clock.  Called by core/runtime/heartbeat.c on a node's loop
 * thread and by tests/unit/test_fd.c.
 */
#ifndef JACKDAW_FD_H
#define JACKDAW_FD_H

#include <stdbool.h>
#include <stdint.h>

/* A few seconds, as users of failure detectors expect (issue 15); the interval is a
 * quarter of it, so three heartbeats can be lost before a suspicion. */
#define FD_TIMEOUT_DEFAULT_MS 3000

struct fd_params {
    int64_t timeout_ms;     /* silence past this is suspected */
    int64_t interval_ms;    /* a heartbeat after this long without traffic to a peer */
};

/* timeout_ms 0: the default. */
void fd_params_init(struct fd_params *p, uint32_t timeout_ms);

/* The ring neighbours node `self` of `nodes` watches, into out[0..1]; returns how many
 * (0 alone, 1 with two nodes, else 2: left then right). */
uint32_t fd_watched(uint32_t self, uint32_t nodes, uint32_t out[2]);

/* Whether a heartbeat to a peer is due: nothing was sent to it since last_sent_ms for
 * the interval (the timeout when the peer is suspected). */
bool fd_beat_due(const struct fd_params *p, int64_t now_ms, int64_t last_sent_ms,
                 bool suspected);

/* Whether the watcher itself was paused: its previous check, at last_check_ms, is more
 * than half a timeout ago (checks run every interval, a quarter of it). */
bool fd_paused(const struct fd_params *p, int64_t now_ms, int64_t last_check_ms);

/* Whether a peer last heard at last_heard_ms is suspected at now_ms. */
bool fd_suspect(const struct fd_params *p, int64_t now_ms, int64_t last_heard_ms);

/*
 * What a confirmer makes of a suspicion of a node it last heard at last_heard_ms.  Dead
 * when silent past the timeout here too (FD_DEAD_SILENT).  A suspicion that comes with
 * refused connections (`asked_refused`: the asker's connect to the suspect was refused)
 * is also confirmed when this node's own latest connect was refused (`refused_here`,
 * FD_DEAD_REFUSED); otherwise the confirmer tries to connect itself (FD_PROBE) and
 * confirms if that is refused while the suspicion is fresh.  FD_KEEP: nothing to do.
 */
enum fd_verdict { FD_KEEP, FD_PROBE, FD_DEAD_SILENT, FD_DEAD_REFUSED };
enum fd_verdict fd_confirm(const struct fd_params *p, int64_t now_ms, int64_t last_heard_ms,
                           bool asked_refused, bool refused_here);

/* The next live node after `from` going right (dir 1) or left (dir -1) on the ring,
 * never `from` itself; `from` when no other node is alive. */
uint32_t fd_next_live(uint32_t from, uint32_t nodes, const bool *dead, int dir);
/* The live ring neighbours of `self` (left then right, one when they coincide, none
 * alone), into out[0..1]; returns how many. */
uint32_t fd_watched_live(uint32_t self, uint32_t nodes, const bool *dead, uint32_t out[2]);
/* Who confirms `suspect` for `watcher`: the suspect's live neighbour on the other side,
 * or the watcher itself when there is none other (then its own suspicion decides). */
uint32_t fd_confirmer(uint32_t watcher, uint32_t suspect, uint32_t nodes, const bool *dead);
/* The lowest live id; `nodes` when none. */
uint32_t fd_lowest_live(uint32_t nodes, const bool *dead);

#endif
