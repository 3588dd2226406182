/*
 * bucket — a token bucket for network emulation, and the parsers for the --bandwidth
 * and --latency values that configure it.
 *
 * Owns nothing: a struct bucket is plain data, and time is passed in (monotonic ns),
 * so the node runtime and the tests (tests/unit/test_bucket.c) drive it alike.  The node runtime
 * keeps one bucket for each node's egress and one for its ingress and asks it, before
 * sending or accepting a chunk, how long that chunk must wait; the command parsers
 * call the parse functions.  Pure: no clock, no I/O, no globals.
 *
 * Reservation model: bucket_reserve takes the tokens at once, letting the balance go
 * negative, and returns how long until the balance is back to zero — the moment the
 * last byte of the chunk would have left a link of that rate, given every reservation
 * before it.  A chunk larger than the remaining tokens is thus delayed in proportion
 * to its size instead of being refused, and back-to-back reservations queue behind one
 * another exactly as on a serial link.  Tokens accrue at `rate` up to `burst` while
 * idle; the bucket starts full.
 *
 * Return convention: 0 or a negative errno; parse errors fill *cause (owned).
 */
#ifndef JACKDAW_BUCKET_H
#define JACKDAW_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct bucket {
    double rate;            /* bytes per second; 0 means unlimited */
    double burst;           /* bytes the bucket holds when full */
    double tokens;          /* bytes; negative while earlier reservations are unpaid */
    int64_t last_ns;        /* when tokens was last brought up to date */
    bool started;           /* last_ns is meaningful (set by the first reservation) */
};

/* rate_bytes_per_s 0 disables limiting.  A burst of about one transfer chunk (or rate
 * times a millisecond, whichever is larger) lets a chunk go out whole without adding
 * a chunk-sized step to every transfer.  -EINVAL for negative or non-finite values. */
int bucket_init(struct bucket *b, double rate_bytes_per_s, double burst_bytes);

/*
 * Takes `bytes` tokens at time now_ns and returns the ns to wait before those bytes
 * may pass: 0 when the bucket covered them, else the time the debt takes to repay at
 * the bucket's rate (rounded up to a whole ns, at most INT64_MAX).  Always 0 when
 * unlimited.  A now_ns earlier than the last call's counts as that time.
 */
int64_t bucket_reserve(struct bucket *b, int64_t now_ns, uint64_t bytes);

/*
 * Parses a bandwidth into bytes per second.  A number (decimal fraction and exponent
 * allowed) with an optional unit, and an optional "/s" after a bits or bytes unit:
 *   bits per second, decimal   bit Kbit Mbit Gbit Tbit, or bps Kbps Mbps Gbps Tbps
 *   bytes per second, decimal  B KB MB GB TB
 *   bytes per second, binary   KiB MiB GiB TiB
 *   no unit                    bytes per second
 * Units match case-insensitively, except that "b", "Kb", "Mb", "Gb", "Tb" (and their
 * other cases with a lower-case b) are refused as ambiguous between bits and bytes.
 * "0", "off" and "unlimited" give 0 (no limit).  Examples: "10Gbit" = 1.25e9,
 * "100Mbit" = 1.25e7, "125MB" = 1.25e8, "1GiB/s" = 1073741824.
 */
int bucket_parse_rate(const char *text, double *bytes_per_s, char **cause);

/*
 * Parses a duration into ns: a number (decimal fraction allowed) followed by ns, us
 * (or µs), ms or s; "0" alone is allowed without a unit.  Decimal arithmetic, so the
 * result is exact when the value is a whole number of ns ("0.5ms" = 500000) and
 * rounded to the nearest ns, halves up, when it is not ("1.5ns" = 2).  Negative and
 * out-of-range (past INT64_MAX ns) values are refused.
 */
int bucket_parse_duration(const char *text, int64_t *ns, char **cause);

#endif
