/*
 * model rows — the console's node table: sort keys, state words and the filter of
 * model.h (model_sort_name, model_node_state, model_rows).  Reads the model only through
 * its view, so the table can never disagree with what the screens draw.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base/xalloc.h"
#include "tui/model.h"

static const char *const sort_names[MODEL_SORT_COUNT] = {
    [MODEL_SORT_ID] = "id",
    [MODEL_SORT_UTIL] = "util",
    [MODEL_SORT_SLOTS] = "slots",
    [MODEL_SORT_SPEED] = "speed",
    [MODEL_SORT_WAITQ] = "waitq",
    [MODEL_SORT_LREADYQ] = "lreadyq",
    [MODEL_SORT_SREADYQ] = "sreadyq",
    [MODEL_SORT_COMPLETEQ] = "completeq",
    [MODEL_SORT_DONE] = "done",
    [MODEL_SORT_STEALS_IN] = "steals in",
    [MODEL_SORT_STEALS_OUT] = "steals out",
    [MODEL_SORT_STEALS_FAILED] = "steals failed",
    [MODEL_SORT_BYTES_IN] = "bytes in",
    [MODEL_SORT_BYTES_OUT] = "bytes out",
    [MODEL_SORT_CACHE] = "cache",
};

const char *model_sort_name(enum model_sort k)
{
    return (unsigned)k < MODEL_SORT_COUNT ? sort_names[k] : "?";
}

const char *model_node_state(const struct model_node *n)
{
    if (n && n->dead)
        return "dead";
    if (!n || !n->connected)
        return "down";
    return n->s.busy > 0 ? "busy" : "idle";
}

uint64_t model_node_stolen_in(const struct model_node *n)
{
    return n->seen && n->s.stolen_in >= 0 ? (uint64_t)n->s.stolen_in : n->steals_in;
}

uint64_t model_node_stolen_out(const struct model_node *n)
{
    return n->seen && n->s.stolen_out >= 0 ? (uint64_t)n->s.stolen_out : n->steals_out;
}

/* With a job selected, the table shows the node's share of it: its columns sort so. */
static double sort_value(const struct model_node *n, enum model_sort key, bool of_job)
{
    switch (key) {
    case MODEL_SORT_UTIL: return of_job ? n->job_util : n->util;
    case MODEL_SORT_SLOTS: return n->slots;
    case MODEL_SORT_SPEED: return n->speed;
    case MODEL_SORT_WAITQ: return n->s.waitq;
    case MODEL_SORT_LREADYQ: return n->s.lreadyq;
    case MODEL_SORT_SREADYQ: return n->s.sreadyq;
    case MODEL_SORT_COMPLETEQ: return n->s.completeq;
    case MODEL_SORT_DONE: return (double)(of_job ? n->job_done : n->done);
    case MODEL_SORT_STEALS_IN: return (double)model_node_stolen_in(n);
    case MODEL_SORT_STEALS_OUT: return (double)model_node_stolen_out(n);
    case MODEL_SORT_STEALS_FAILED: return (double)n->s.steal_fails;
    case MODEL_SORT_BYTES_IN: return (double)n->s.fetch_bytes;
    case MODEL_SORT_BYTES_OUT: return (double)n->s.bytes_out;
    case MODEL_SORT_CACHE: return n->cache_hit_rate;
    default: return n->id;
    }
}

struct row {
    double value; /* negated for a descending sort */
    int32_t id;
    uint32_t index;
};

static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static bool row_matches(const struct model_node *n, const char *filter)
{
    if (!filter || !filter[0])
        return true;
    char label[32];
    snprintf(label, sizeof label, "node %" PRId32, n->id);
    /* A dead node is down too: "down" finds every node not running. */
    return strcasestr(label, filter) || strcasestr(model_node_state(n), filter) ||
           (n->dead && strcasestr("down", filter));
}

/* Whether p[0..n) is, ignoring case, a piece of "node": its end when more follows. */
static bool node_piece(const char *p, size_t n, bool more)
{
    static const char node[] = "node";
    for (size_t at = 0; at + n <= 4; at++) {
        if (more && at + n != 4)
            continue;
        if (strncasecmp(node + at, p, n) == 0)
            return true;
    }
    return false;
}

bool model_filter_understood(const char *filter)
{
    if (!filter || !filter[0])
        return true;
    static const char *const words[] = {"dead", "down", "busy", "idle"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr(words[i], filter))
            return true;
    /* A piece of "node N": an end of "node", then maybe a space, then digits. */
    const char *p = filter;
    size_t letters = 0;
    while (p[letters] && p[letters] != ' ' && !isdigit((unsigned char)p[letters]))
        letters++;
    if (letters && !node_piece(p, letters, p[letters] != '\0'))
        return false;
    p += letters;
    if (*p == ' ')
        p++;
    while (isdigit((unsigned char)*p))
        p++;
    return *p == '\0' && p != filter;
}

uint32_t model_rows(const struct model *m, enum model_sort key, bool desc, const char *filter,
                    uint32_t *out, uint32_t cap)
{
    const struct model_view *v = model_view(m);
    if (!v || !out || !cap || !v->nnodes)
        return 0;
    struct row *rows = xmalloc(v->nnodes * sizeof *rows);
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->nnodes; i++) {
        const struct model_node *node = &v->nodes[i];
        if (!row_matches(node, filter))
            continue;
        double value = sort_value(node, key, v->job >= 0);
        if (value != value)
            value = 0; /* NaN would break the ordering */
        rows[n++] = (struct row){.value = desc ? -value : value, .id = node->id, .index = i};
    }
    qsort(rows, n, sizeof *rows, row_cmp);
    uint32_t count = n < cap ? n : cap;
    for (uint32_t i = 0; i < count; i++)
        out[i] = rows[i].index;
    free(rows);
    return count;
}
