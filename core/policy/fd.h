/*
 * fd — failure detection's decisions as pure functions (the first step of issue 15): a
 * node watches its two ring neighbours, sends each a heartbeat when it had nothing
 * else to send it for an interval (traffic is the heartbeat otherwise: any message
 * counts), and suspects a neighbour silent for longer than the timeout.  A suspected
 * neighbour gets heartbeats only once per timeout, so that a dead one is not called
 * every interval.  What follows from a suspicion (confirmation, membership epochs,
 * resubmission) is not decided here yet.
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

/* Whether a peer last heard at last_heard_ms is suspected at now_ms. */
bool fd_suspect(const struct fd_params *p, int64_t now_ms, int64_t last_heard_ms);

#endif
