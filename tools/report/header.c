/*
 * report header — reads the run header of a trace (the container's jackdaw.header JSON,
 * share/doc/trace-schema.md): run id, workload, the nodes' slots and speeds, and the
 * placement and steal policies from the daemons' extra flags.  Outside bytes: every
 * field is checked for its type and range, and a header that does not parse is reported
 * and ignored, never trusted in part.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/xalloc.h"
#include "tools/report/analysis_internal.h"

/* The value of flag `name` in an argv-like array: "--name value" or "--name=value". */
static char *arg_value(json_t *args, const char *name)
{
    size_t n = strlen(name);
    size_t i;
    json_t *v;
    json_array_foreach(args, i, v) {
        const char *s = json_string_value(v);
        if (!s)
            continue;
        if (strcmp(s, name) == 0) {
            const char *next = json_string_value(json_array_get(args, i + 1));
            return next ? xstrdup(next) : NULL;
        }
        if (strncmp(s, name, n) == 0 && s[n] == '=')
            return xstrdup(s + n + 1);
    }
    return NULL;
}

static char *string_of(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? xstrdup(s) : NULL;
}

void run_header_parse(struct run_header *h, const char *json, char **problem)
{
    memset(h, 0, sizeof *h);
    *problem = NULL;
    if (!json) {
        *problem = xstrdup("the trace has no run header: nodes, slots and speeds come from "
                           "the events (slots from NODE_UP or samples, speed 1)");
        return;
    }
    json_error_t err;
    json_t *root = json_loads(json, 0, &err);
    if (!json_is_object(root)) {
        *problem = xasprintf("the run header is not a JSON object (%s at column %d): it is "
                             "ignored", err.text, err.column);
        json_decref(root);
        return;
    }
    h->run_id = string_of(root, "run_id");
    json_t *wl = json_object_get(root, "workload");
    if (json_is_object(wl)) {
        h->workload_name = string_of(wl, "name");
        h->workload_digest = string_of(wl, "digest");
    }
    json_t *args = json_object_get(json_object_get(root, "config"), "node_args");
    if (json_is_array(args)) {
        h->placement = arg_value(args, "--placement");
        /* A --policy preset names the stealing policy; --steal is the older, narrower
         * flag (and may still override the preset's parts). */
        h->steal_policy = arg_value(args, "--policy");
        if (!h->steal_policy)
            h->steal_policy = arg_value(args, "--steal");
    }
    json_t *nodes = json_object_get(root, "nodes");
    if (json_is_array(nodes) && json_array_size(nodes) > 0) {
        h->nodes = xcalloc(json_array_size(nodes), sizeof *h->nodes);
        size_t i;
        json_t *n;
        json_array_foreach(nodes, i, n) {
            json_t *id = json_object_get(n, "id");
            json_int_t idv = json_is_integer(id) ? json_integer_value(id) : (json_int_t)i;
            if (idv < 0 || idv > INT32_MAX)
                continue;
            struct header_node *hn = &h->nodes[h->nnodes++];
            hn->id = (int32_t)idv;
            json_t *slots = json_object_get(n, "slots");
            if (json_is_integer(slots) && json_integer_value(slots) > 0 &&
                json_integer_value(slots) <= INT32_MAX)
                hn->slots = (int32_t)json_integer_value(slots);
            double speed = json_number_value(json_object_get(n, "speed"));
            if (speed > 0 && isfinite(speed))
                hn->speed = speed;
        }
    }
    json_decref(root);
}

void run_header_fini(struct run_header *h)
{
    free(h->run_id);
    free(h->workload_name);
    free(h->workload_digest);
    free(h->placement);
    free(h->steal_policy);
    free(h->nodes);
    memset(h, 0, sizeof *h);
}
