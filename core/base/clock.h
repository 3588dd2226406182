/*
 * clock — the two clocks jackdaw uses.  Wall time (CLOCK_REALTIME, ns) stamps task
 * phases and summaries because records from different hosts are compared; monotonic
 * time drives intervals inside one process.  Pure header, no state.
 */
#ifndef JACKDAW_CLOCK_H
#define JACKDAW_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
