/*
 * fd — failure detection's pure decisions (fd.h says what they are and who calls them).
 */
#include "core/policy/fd.h"

void fd_params_init(struct fd_params *p, uint32_t timeout_ms)
{
    p->timeout_ms = timeout_ms ? timeout_ms : FD_TIMEOUT_DEFAULT_MS;
    p->interval_ms = p->timeout_ms / 4 > 0 ? p->timeout_ms / 4 : 1;
}

uint32_t fd_watched(uint32_t self, uint32_t nodes, uint32_t out[2])
{
    if (nodes < 2 || self >= nodes)
        return 0;
    uint32_t left = (self + nodes - 1) % nodes, right = (self + 1) % nodes;
    out[0] = left;
    if (left == right)
        return 1;
    out[1] = right;
    return 2;
}

bool fd_beat_due(const struct fd_params *p, int64_t now_ms, int64_t last_sent_ms,
                 bool suspected)
{
    return now_ms - last_sent_ms >= (suspected ? p->timeout_ms : p->interval_ms);
}

bool fd_paused(const struct fd_params *p, int64_t now_ms, int64_t last_check_ms)
{
    return now_ms - last_check_ms > p->timeout_ms / 2;
}

bool fd_suspect(const struct fd_params *p, int64_t now_ms, int64_t last_heard_ms)
{
    return now_ms - last_heard_ms > p->timeout_ms;
}

enum fd_verdict fd_confirm(const struct fd_params *p, int64_t now_ms, int64_t last_heard_ms,
                           bool asked_refused, bool refused_here)
{
    if (fd_suspect(p, now_ms, last_heard_ms))
        return FD_DEAD_SILENT;
    if (!asked_refused)
        return FD_KEEP;
    return refused_here ? FD_DEAD_REFUSED : FD_PROBE;
}

uint32_t fd_next_live(uint32_t from, uint32_t nodes, const bool *dead, int dir)
{
    for (uint32_t step = 1; step < nodes; step++) {
        uint32_t i = dir > 0 ? (from + step) % nodes : (from + nodes - step % nodes) % nodes;
        if (!dead[i])
            return i;
    }
    return from;
}

uint32_t fd_watched_live(uint32_t self, uint32_t nodes, const bool *dead, uint32_t out[2])
{
    if (nodes < 2 || self >= nodes)
        return 0;
    uint32_t left = fd_next_live(self, nodes, dead, -1), right = fd_next_live(self, nodes, dead, 1);
    if (left == self)
        return 0;
    out[0] = left;
    if (left == right)
        return 1;
    out[1] = right;
    return 2;
}

uint32_t fd_confirmer(uint32_t watcher, uint32_t suspect, uint32_t nodes, const bool *dead)
{
    uint32_t left = fd_next_live(suspect, nodes, dead, -1);
    uint32_t right = fd_next_live(suspect, nodes, dead, 1);
    uint32_t other = left == watcher ? right : left;
    return other == suspect ? watcher : other;
}

uint32_t fd_lowest_live(uint32_t nodes, const bool *dead)
{
    for (uint32_t i = 0; i < nodes; i++)
        if (!dead[i])
            return i;
    return nodes;
}
