/*
 * dataopts — see dataopts.h.
 */
#include "core/client/dataopts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base/xalloc.h"
#include "core/client/exitcode.h"
#include "core/net/bucket.h"
#include "core/policy/preset.h"
#include "core/policy/steal.h"
#include "core/runtime/node.h"

/* "1GiB", "512MB", "4096": bytes. */
static int parse_bytes(const char *text, uint64_t *out)
{
    static const struct { const char *unit; double mult; } units[] = {
        {"", 1}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    };
    char *end;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0)
        return -EINVAL;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(end, units[i].unit) == 0) {
            *out = (uint64_t)(v * units[i].mult);
            return 0;
        }
    }
    return -EINVAL;
}

/* A whole number, or a positive number of milliseconds, for the stealing flags. */
static int parse_count(const char *name, const char *text, uint32_t *out, char **cause)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (end == text || *end || text[0] == '-' || v > UINT32_MAX) {
        *cause = xasprintf("--%s '%s': expected a whole number", name, text);
        return -EINVAL;
    }
    *out = (uint32_t)v;
    return 0;
}

static int parse_ms(const char *name, const char *text, double *out, char **cause)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v > 0) || !isfinite(v)) {
        *cause = xasprintf("--%s '%s': expected milliseconds > 0", name, text);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

/*
 * The stealing policy: the preset first, then --steal (the older switch: none turns
 * stealing off, random1 is one random victim, adaptive sqrt(N)), then each part.  Parts
 * that read the A2WS vector bring the ring along unless --info says load-query, which
 * cannot feed them; the token victims bring the CTWS token along the same way.
 */
static int apply_policy(const struct dataopts *d, struct node_config *cfg, char **cause)
{
    struct steal_params *s = &cfg->steal;
    if (d->policy && preset_apply(d->policy, s, &cfg->placement) < 0) {
        *cause = xasprintf("--policy '%s': expected one of %s", d->policy, preset_names());
        return -EINVAL;
    }
    if (d->steal) {
        int m = steal_mode_parse(d->steal);
        if (m < 0) {
            *cause = xasprintf("--steal '%s': expected adaptive, random1 or none", d->steal);
            return -EINVAL;
        }
        s->mode = (enum steal_mode)m;
        if (m == STEAL_RANDOM1) {
            s->victims = STEAL_VICTIMS_RANDOM;
            s->victims_k = 1;
        } else if (m == STEAL_ADAPTIVE && s->victims == STEAL_VICTIMS_RANDOM) {
            s->victims = STEAL_VICTIMS_SQRT;
        }
    }
    if (d->starvation && steal_parse_starvation(d->starvation, s) < 0) {
        *cause = xasprintf("--starvation '%s': expected ready, ready+successors or preemptive",
                           d->starvation);
        return -EINVAL;
    }
    if (d->victims) {
        if (steal_parse_victims(d->victims, s) < 0) {
            *cause = xasprintf("--victims '%s': expected sqrt, random:K (K >= 1), a2ws, token "
                               "or leader", d->victims);
            return -EINVAL;
        }
        /* Victims are chosen by the adaptive machinery; random1 would ignore them. */
        if (s->mode == STEAL_RANDOM1)
            s->mode = STEAL_ADAPTIVE;
    }
    if (d->amount && steal_parse_amount(d->amount, s) < 0) {
        *cause = xasprintf("--amount '%s': expected half, chunk:N (N >= 1), single or a2ws",
                           d->amount);
        return -EINVAL;
    }
    if (d->info) {
        if (steal_parse_info(d->info, s) < 0) {
            *cause = xasprintf("--info '%s': expected load-query, ring or token", d->info);
            return -EINVAL;
        }
        if (s->info == STEAL_INFO_LOAD_QUERY && steal_needs_ring(s)) {
            *cause = xasprintf("--info load-query cannot feed --starvation %s, --victims %s, "
                               "--amount %s: the A2WS parts need --info ring",
                               steal_starvation_name(s->starvation),
                               steal_victims_name(s->victims), steal_amount_name(s->amount));
            return -EINVAL;
        }
    } else if (s->victims == STEAL_VICTIMS_TOKEN) {
        s->info = STEAL_INFO_TOKEN;
    } else if (steal_needs_ring(s)) {
        s->info = STEAL_INFO_RING;
    } else if (s->info == STEAL_INFO_TOKEN) {
        /* The ctws preset's token with other victims (--policy ctws --victims sqrt): the
         * token would feed nobody, so the victims get the information they read. */
        s->info = STEAL_INFO_LOAD_QUERY;
    }
    const char *why = NULL;
    if (steal_check_parts(s, &why) < 0) {
        *cause = xstrdup(why);
        return -EINVAL;
    }
    if (d->radius) {
        if (parse_count("radius", d->radius, &s->radius, cause) < 0)
            return -EINVAL;
        if (s->radius == 0) {
            *cause = xasprintf("--radius '%s': expected a whole number >= 1", d->radius);
            return -EINVAL;
        }
    }
    if (d->wait_guard) {
        if (strcmp(d->wait_guard, "on") == 0) {
            s->wait_guard = true;
        } else if (strcmp(d->wait_guard, "off") == 0) {
            s->wait_guard = false;
        } else {
            *cause = xasprintf("--wait-guard '%s': expected on or off", d->wait_guard);
            return -EINVAL;
        }
    }
    return 0;
}

int dataopts_apply(const struct dataopts *d, struct node_config *cfg, char **cause)
{
    steal_params_default(&cfg->steal);
    placement_params_default(&cfg->placement);
    if (apply_policy(d, cfg, cause) < 0)
        return -EINVAL;
    if ((d->neighbours && parse_count("neighbours", d->neighbours, &cfg->steal.neighbours, cause)) ||
        (d->widen_after && parse_count("widen-after", d->widen_after, &cfg->steal.widen_after, cause)) ||
        (d->widen_by && parse_count("widen-by", d->widen_by, &cfg->steal.widen_by, cause)) ||
        (d->poll_initial &&
         parse_ms("poll-initial-ms", d->poll_initial, &cfg->steal.poll_initial_ms, cause)) ||
        (d->poll_max && parse_ms("poll-max-ms", d->poll_max, &cfg->steal.poll_max_ms, cause)))
        return -EINVAL;
    cfg->cache = true;
    cfg->cache_bytes = 1ull << 30;
    cfg->store_mem_bytes = 1ull << 30;
    cfg->bandwidth_Bps = 0;
    cfg->latency_ns = 0;
    if (d->placement) {
        int p = placement_policy_parse(d->placement);
        if (p < 0) {
            *cause = xasprintf("--placement '%s': expected ws, mlb, mdl, rlds, flds or auto",
                               d->placement);
            return -EINVAL;
        }
        cfg->placement.policy = (enum placement_policy)p;
    }
    if (d->threshold) {
        char *end;
        double t = strtod(d->threshold, &end);
        if (end == d->threshold || *end || !(t >= 0)) {
            *cause = xasprintf("--threshold '%s': expected a number >= 0", d->threshold);
            return -EINVAL;
        }
        cfg->placement.threshold = t;
    }
    if (d->tt) {
        char *end;
        double tt = strtod(d->tt, &end);
        if (end == d->tt || *end || !(tt > 0)) {
            *cause = xasprintf("--tt '%s': expected seconds > 0", d->tt);
            return -EINVAL;
        }
        /* The clamps and the resume point follow the initial value, as by default. */
        double scale = tt / cfg->placement.tt_initial_s;
        cfg->placement.tt_initial_s = tt;
        cfg->placement.tt_from_tasks = false; /* the user's tt holds */
        cfg->placement.tt_min_s *= scale;
        cfg->placement.tt_max_s *= scale;
        cfg->placement.tt_resume_s *= scale;
    }
    if (d->bandwidth) {
        char *why = NULL;
        if (bucket_parse_rate(d->bandwidth, &cfg->bandwidth_Bps, &why) < 0) {
            *cause = xasprintf("--bandwidth: %s", why ? why : d->bandwidth);
            free(why);
            return -EINVAL;
        }
        /* The emulated link is also what Algorithm 1 assumes the network does. */
        if (cfg->bandwidth_Bps > 0)
            cfg->placement.bandwidth_Bps = cfg->bandwidth_Bps;
    }
    if (d->latency) {
        char *why = NULL;
        if (bucket_parse_duration(d->latency, &cfg->latency_ns, &why) < 0) {
            *cause = xasprintf("--latency: %s", why ? why : d->latency);
            free(why);
            return -EINVAL;
        }
    }
    if (d->cache) {
        if (strcmp(d->cache, "on") == 0) {
            cfg->cache = true;
        } else if (strcmp(d->cache, "off") == 0) {
            cfg->cache = false;
        } else {
            *cause = xasprintf("--cache '%s': expected on or off", d->cache);
            return -EINVAL;
        }
    }
    if (d->cache_bytes && parse_bytes(d->cache_bytes, &cfg->cache_bytes) < 0) {
        *cause = xasprintf("--cache-bytes '%s': expected a size like 512MiB", d->cache_bytes);
        return -EINVAL;
    }
    if (d->store_mem && parse_bytes(d->store_mem, &cfg->store_mem_bytes) < 0) {
        *cause = xasprintf("--store-mem '%s': expected a size like 1GiB", d->store_mem);
        return -EINVAL;
    }
    cfg->prefetch = NODE_PREFETCH_SLOTS;
    if (d->prefetch && parse_count("prefetch", d->prefetch, &cfg->prefetch, cause) < 0)
        return -EINVAL;
    if (d->sample_ms) {
        uint32_t ms;
        if (parse_count("sample-ms", d->sample_ms, &ms, cause) < 0)
            return -EINVAL;
        if (ms < 1 || ms > 60000) {
            *cause = xasprintf("--sample-ms '%s': expected 1..60000", d->sample_ms);
            return -EINVAL;
        }
        cfg->sample_ms = ms;
    }
    if (d->trace_buffer) {
        uint64_t b;
        if (parse_bytes(d->trace_buffer, &b) < 0 || b < 4096 || b > (4ull << 30)) {
            *cause = xasprintf("--trace-buffer '%s': expected a size from 4KiB to 4GiB",
                               d->trace_buffer);
            return -EINVAL;
        }
        cfg->trace_buffer = (size_t)b;
    }
    if (d->failure_timeout) {
        uint32_t ms;
        if (parse_count("failure-timeout", d->failure_timeout, &ms, cause) < 0)
            return -EINVAL;
        /* Below a tenth of a second a busy loop pass would pass for a death. */
        if (ms < 100 || ms > 600000) {
            *cause = xasprintf("--failure-timeout '%s': expected 100..600000 ms",
                               d->failure_timeout);
            return -EINVAL;
        }
        cfg->failure_timeout_ms = ms;
    }
    if (d->replicas) {
        uint32_t r;
        if (parse_count("replicas", d->replicas, &r, cause) < 0)
            return -EINVAL;
        if (r < 1 || r > 8) {
            *cause = xasprintf("--replicas '%s': expected 1..8", d->replicas);
            return -EINVAL;
        }
        cfg->replicas = r;
    }
    if (d->object_replicas) {
        uint32_t k;
        if (parse_count("object-replicas", d->object_replicas, &k, cause) < 0)
            return -EINVAL;
        if (k < 1 || k > 8) {
            *cause = xasprintf("--object-replicas '%s': expected 1..8", d->object_replicas);
            return -EINVAL;
        }
        cfg->object_replicas = k;
    }
    cfg->task_log_bytes = NODE_TASK_LOG_BYTES;
    if (d->task_log_bytes && parse_bytes(d->task_log_bytes, &cfg->task_log_bytes) < 0) {
        *cause = xasprintf("--task-log-bytes '%s': expected a size like 1MiB (0: keep all)",
                           d->task_log_bytes);
        return -EINVAL;
    }
    const char *why = NULL;
    if (placement_params_check(&cfg->placement, &why) < 0) {
        *cause = xasprintf("placement parameters: %s", why ? why : "invalid");
        return -EINVAL;
    }
    return 0;
}

int dataopts_finish(struct dataopts *d, const char *who)
{
    struct node_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *cause = NULL;
    if (dataopts_apply(d, &cfg, &cause) < 0) {
        fprintf(stderr, "jackdaw %s: %s\n", who, cause);
        free(cause);
        return EXIT_USAGE;
    }
    const char *names[] = {"--policy", "--starvation", "--victims", "--amount", "--info",
                           "--radius", "--wait-guard",
                           "--steal", "--neighbours", "--poll-initial-ms", "--poll-max-ms",
                           "--widen-after", "--widen-by", "--placement", "--threshold", "--tt",
                           "--bandwidth", "--latency", "--cache", "--cache-bytes", "--store-mem",
                           "--sample-ms", "--trace-buffer", "--prefetch", "--failure-timeout",
                           "--replicas", "--object-replicas", "--task-log-bytes"};
    const char *values[] = {d->policy, d->starvation, d->victims, d->amount, d->info,
                            d->radius, d->wait_guard,
                            d->steal, d->neighbours, d->poll_initial, d->poll_max,
                            d->widen_after, d->widen_by, d->placement, d->threshold, d->tt,
                            d->bandwidth, d->latency, d->cache, d->cache_bytes, d->store_mem,
                            d->sample_ms, d->trace_buffer, d->prefetch, d->failure_timeout,
                            d->replicas, d->object_replicas, d->task_log_bytes};
    _Static_assert(2 * sizeof names / sizeof names[0] <= sizeof d->words / sizeof d->words[0],
                   "dataopts words too small for every flag");
    d->nwords = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!values[i])
            continue;
        d->words[d->nwords++] = names[i];
        d->words[d->nwords++] = values[i];
    }
    return 0;
}

void dataopts_read_words(struct dataopts *d, const char *const *words, size_t n,
                         void (*unknown)(const char *word, void *arg), void *arg)
{
    const struct opt table[] = {DATAOPTS_OPTS(d)};
    for (size_t i = 0; i < n; i++) {
        const char *word = words[i];
        if (!word || strncmp(word, "--", 2) != 0) {
            if (word && unknown)
                unknown(word, arg);
            continue;
        }
        const char *name = word + 2, *eq = strchr(name, '='), *value;
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (eq)
            value = eq + 1;
        else
            value = i + 1 < n ? words[++i] : NULL;
        const struct opt *o = NULL;
        for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
            if (strlen(table[k].name) == len && strncmp(table[k].name, name, len) == 0)
                o = &table[k];
        if (o && value)
            *(const char **)o->target = value;
        else if (unknown)
            unknown(word, arg);
    }
}
