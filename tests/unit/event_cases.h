/*
 * event_cases — trace events of every kind with their fields as share/doc/trace-schema.md
 * says, and each field at its extremes: the cases the record encoder and decoder are
 * checked against libavro with (test_trace, test_trace_decode).  Static inline, so that
 * each test uses what it needs.  Include after cmocka.h.
 */
#ifndef JACKDAW_TEST_EVENT_CASES_H
#define JACKDAW_TEST_EVENT_CASES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/model/task.h"
#include "trace/format/event.h"

/* Every kind, with its fields set as the doc says, on three nodes. */
static inline size_t event_cases_every_kind(struct trace_event *evs, size_t max)
{
    size_t n = 0;
    int64_t seq[3] = { 0, 0, 0 };
    for (int round = 0; round < 40; round++) {
        for (int k = 0; k < TRACE_KIND_COUNT && n < max; k++) {
            int32_t node = (round + k) % 3;
            struct trace_event *ev = &evs[n++];
            trace_event_init(ev, (enum trace_kind)k, node);
            ev->seq = seq[node]++;
            if (round == 7 && k == 3)
                seq[node] += 5; /* a gap: sequence numbers need not be dense */
            ev->time_ns = 1000 * (int64_t)n + (k == 5 ? -300 : 0); /* one step back */
            if (k <= TRACE_TASK_END) {
                ev->task = (uint64_t)(round + 1) << 32 | (uint64_t)(k * 1000 + round);
                if (k == 1 && round == 3)
                    ev->task = 0xfffffffeULL << 32 | 0xfffffff0u; /* bit-cast extremes */
            }
            switch (k) {
            case TRACE_TASK_PUSHED: case TRACE_TASK_STOLEN_IN: case TRACE_TASK_STOLEN_OUT:
            case TRACE_STEAL_REQUEST:
                ev->peer = (node + 1) % 3;
                break;
            case TRACE_TASK_END:
                ev->status = round % 5 == 0 ? 137 : 0;
                /* Every other end a command's, with what it used (extremes included). */
                if (round % 2)
                    ev->usage = (struct task_usage){
                        .user_ns = round == 39 ? INT64_MAX : 1000003 * round,
                        .sys_ns = 17 * round, .max_rss = (uint64_t)1 << (round % 50),
                        .read_bytes = round == 39 ? (uint64_t)INT64_MAX : 0,
                        .write_bytes = 4096u * (unsigned)round, .measured = true};
                break;
            case TRACE_STEAL_GRANT:
                ev->peer = (node + 2) % 3;
                ev->count = round % 4 + 1;
                break;
            case TRACE_STEAL_FAIL:
                ev->peer = (node + 2) % 3;
                ev->status = 1;
                break;
            case TRACE_DATA_FETCH:
                ev->task = (uint64_t)1 << 32 | (uint64_t)round;
                ev->peer = (node + 1) % 3;
                ev->bytes = (int64_t)1 << (round % 40);
                ev->duration_ns = 12345 * round;
                break;
            case TRACE_CACHE_HIT:
                ev->task = (uint64_t)1 << 32 | (uint64_t)round;
                ev->bytes = 4096;
                break;
            case TRACE_NODE_SAMPLE: {
                struct trace_sample *s = &ev->sample;
                s->busy = round % 9;
                s->slots = 8;
                s->waitq = round;
                s->lreadyq = 2 * round;
                s->sreadyq = 3;
                s->completeq = 1;
                s->started = 100 * round;
                s->ended = 100 * round - 3;
                s->failed = round / 5;
                s->stolen_in = round;
                s->stolen_out = 2 * round;
                s->pushed = 7;
                s->steal_requests = 11 * round;
                s->steal_fails = 5 * round;
                s->fetches = 9;
                s->fetch_bytes = INT64_C(1) << 42;
                s->cache_hits = 4;
                s->busy_ns = INT64_C(8000000000) * round;
                s->dropped = round > 20;
                break;
            }
            case TRACE_NODE_UP:
                ev->peer = node;
                ev->count = 8;
                break;
            case TRACE_NODE_DOWN:
                ev->peer = (node + 1) % 3;
                ev->status = 2;
                break;
            case TRACE_POLICY_CHANGE:
                snprintf(ev->text, sizeof ev->text, "steal-half-%d", round);
                break;
            case TRACE_DROPPED:
                ev->count = round + 1;
                break;
            default:
                break;
            }
        }
    }
    return n;
}

/* Appends to evs[0..n) up to max - n events with each field at its limits and names;
 * returns the new count. */
static inline size_t event_cases_extremes(struct trace_event *evs, size_t n, size_t max)
{
    /* Empty, short, long and not ASCII. */
    static const char *const names[] = { "", "a", "task-with-a-longer-name-0000000001",
                                         "\xc3\xa9t\xc3\xa9" };
    /* Extremes the mix above leaves out: each field at its limits, as anchors and as
     * deltas (a delta of seq INT64_MAX from 0, a time step far back). */
    for (int i = 0; i < 200 && n < max; i++) {
        struct trace_event *ev = &evs[n++];
        trace_event_init(ev, (enum trace_kind)(i % TRACE_KIND_COUNT), i % 2 ? INT32_MAX : -7);
        ev->seq = i % 3 == 0 ? INT64_MAX - 1000 + i : i;
        ev->time_ns = i % 4 == 0 ? INT64_MAX : (int64_t)i * 977;
        ev->task = i % 5 == 0 ? TRACE_NO_TASK : (uint64_t)UINT32_MAX << 32 | (uint64_t)i;
        ev->peer = i % 2 ? INT32_MIN : INT32_MAX;
        ev->status = i % 3 ? INT32_MIN : -1;
        ev->count = i % 2 ? INT64_MIN : INT64_MAX;
        ev->bytes = i % 3 ? INT64_MIN + i : INT64_MAX - i;
        ev->duration_ns = -i;
        memset(ev->text, 'x', (size_t)(i % (TRACE_TEXT_MAX - 1)));
        ev->text[i % (TRACE_TEXT_MAX - 1)] = '\0';
        ev->names = names;
        ev->nnames = (uint32_t)(i % 5);
        if (ev->kind == TRACE_NODE_SAMPLE)
            memset(&ev->sample, i % 2 ? 0x7f : 0x80, sizeof ev->sample);
        if (i % 3 == 1)
            ev->usage = (struct task_usage){ .user_ns = INT64_MAX, .sys_ns = 0,
                                             .max_rss = (uint64_t)INT64_MAX, .read_bytes = 1,
                                             .write_bytes = (uint64_t)INT64_MAX,
                                             .measured = true };
    }
    return n;
}

#endif
