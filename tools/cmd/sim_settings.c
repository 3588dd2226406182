/*
 * sim_settings — the flags of `jackdaw sim` as strings, merged and parsed in one place
 * (tools/cmd/sim_settings.h).
 */
#include "tools/cmd/sim_settings.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/client/client.h"
#include "core/client/launcher.h"
#include "core/net/bucket.h"
#include "core/runtime/node.h"

/* Far beyond any real cluster; the per-node arrays stay small (as `jackdaw bound`). */
#define SIM_MAX_NODES (1u << 24)

/* The dataopts flags whose meaning the simulator has (stealing and placement); the
 * others (cache, memory, failures, the trace buffer) describe daemons it does not run,
 * and --bandwidth, --latency and --sample-ms are given their simulated sense below. */
static const char *const policy_flags[] = {
    "policy", "starvation", "victims", "amount", "info", "radius", "wait-guard", "steal",
    "neighbours", "poll-initial-ms", "poll-max-ms", "widen-after", "widen-by", "placement",
    "threshold", "tt",
};

static bool is_policy_flag(const char *name)
{
    for (size_t i = 0; i < sizeof policy_flags / sizeof policy_flags[0]; i++)
        if (strcmp(name, policy_flags[i]) == 0)
            return true;
    return false;
}

size_t sim_settings_opts(struct sim_settings *s, struct opt *out)
{
    struct dataopts *d = &s->data;
    const struct opt own[] = {
        {"nodes", OPT_STRING, &s->nodes, "N  simulated nodes (default 4)"},
        {"slots", OPT_STRING, &s->slots,
         "S  executor slots per node (default 4), or one per node: a,b,..."},
        {"speeds", OPT_STRING, &s->speeds,
         "LIST|MIX  speed factors in (0,1], cycled: 1,0.5; or a mix of paper 001: C1..C5"},
        {"mode", OPT_STRING, &s->mode, "M  hashed | one | roundrobin (default hashed)"},
        {"latency", OPT_STRING, &s->latency,
         "T  one-way message latency: seconds or with a unit, e.g. 100us (default 100e-6)"},
        {"bandwidth", OPT_STRING, &d->bandwidth,
         "RATE  a node's link each way, shared by the task inputs it sends and receives, "
         "e.g. 1Gbit; also Algorithm 1's net_band (default: unlimited)"},
        {"host-rate", OPT_STRING, &s->host_rate,
         "RATE  one host emulating the cluster: the bytes a second its cores can copy, "
         "shared by every transfer, e.g. 700MB (default: none)"},
        {"seed", OPT_STRING, &s->seed, "N  the thieves' random draws, >= 1 (default 1)"},
        {"sample-ms", OPT_STRING, &d->sample_ms, "MS  trace: simulated node sample period (100)"},
        {"engine", OPT_STRING, &s->engine,
         "E  des (our discrete-event core, the default) | simgrid (SimGrid's flow-level "
         "network)"},
    };
    const struct opt all[] = {DATAOPTS_OPTS(d)};
    size_t n = 0;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        out[n++] = own[i];
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (is_policy_flag(all[i].name))
            out[n++] = all[i];
    return n;
}

size_t sim_settings_merge(struct sim_settings *base, struct sim_settings *over)
{
    struct opt b[SIM_SETTINGS_MAX_OPTS], o[SIM_SETTINGS_MAX_OPTS];
    size_t n = sim_settings_opts(base, b), changed = 0;
    sim_settings_opts(over, o);
    for (size_t i = 0; i < n; i++) {
        const char *v = *(const char **)o[i].target;
        if (v) {
            *(const char **)b[i].target = v;
            changed++;
        }
    }
    return changed;
}

bool sim_settings_changes_run(struct sim_settings *over)
{
    struct opt o[SIM_SETTINGS_MAX_OPTS];
    size_t n = sim_settings_opts(over, o);
    for (size_t i = 0; i < n; i++)
        if (*(const char **)o[i].target && strcmp(o[i].name, "seed") != 0 &&
            strcmp(o[i].name, "sample-ms") != 0 && strcmp(o[i].name, "engine") != 0)
            return true;
    return false;
}

char *sim_settings_describe(struct sim_settings *over)
{
    struct opt o[SIM_SETTINGS_MAX_OPTS];
    size_t n = sim_settings_opts(over, o);
    char *text = xstrdup("");
    for (size_t i = 0; i < n; i++) {
        const char *v = *(const char **)o[i].target;
        if (!v)
            continue;
        char *next = xasprintf("%s%s--%s %s", text, *text ? " " : "", o[i].name, v);
        free(text);
        text = next;
    }
    return text;
}

const char **sim_settings_slot(struct sim_settings *s, const char *flag)
{
    struct opt o[SIM_SETTINGS_MAX_OPTS];
    size_t n = sim_settings_opts(s, o);
    for (size_t i = 0; i < n; i++)
        if (strcmp(o[i].name, flag) == 0)
            return (const char **)o[i].target;
    return NULL;
}

/* --latency: seconds ("100e-6"), or a duration with its unit ("100us"). */
static int parse_latency(const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end != text && *end == '\0') {
        if (!(v >= 0) || !isfinite(v))
            return -EINVAL;
        *out = v;
        return 0;
    }
    int64_t ns;
    char *why = NULL;
    int rc = bucket_parse_duration(text, &ns, &why);
    free(why);
    if (rc < 0)
        return rc;
    *out = (double)ns / 1e9;
    return 0;
}

/* The mode as run spells it, plus "round-robin"; the data mode is not modelled. */
static int parse_mode(const char *text, struct sim_plan *p, char **cause)
{
    int m = strcmp(text, "round-robin") == 0 ? SUBMIT_ROUNDROBIN : submit_mode_parse(text);
    if (m < 0) {
        *cause = xasprintf("unknown --mode '%s' (hashed, one, roundrobin)", text);
        return -EINVAL;
    }
    if (m == SUBMIT_DATA) {
        *cause = xstrdup("--mode data is not modelled by the simulator (hashed, one, "
                         "roundrobin)");
        return -EINVAL;
    }
    p->cfg.submit = m == SUBMIT_ONE ? SIM_SUBMIT_ONE
                    : m == SUBMIT_ROUNDROBIN ? SIM_SUBMIT_ROUND_ROBIN : SIM_SUBMIT_HASHED;
    p->mode_name = submit_mode_name((enum submit_mode)m);
    return 0;
}

/* A whole number in [min, max] for --NAME. */
static int parse_whole(const char *name, const char *text, unsigned long long min,
                       unsigned long long max, unsigned long long *out, char **cause)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || *end || errno || text[0] == '-' || v < min || v > max) {
        *cause = xasprintf("--%s '%s': expected a whole number from %llu to %llu", name, text,
                           min, max);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

/*
 * The stealing policy, placement, bandwidth and sample period, through dataopts (so a
 * value is refused here as run refuses it, and a --policy preset brings its placement
 * as it does to the daemons); p->data.words gets the flags for the trace header's
 * node_args, as a real run's header lists its daemons' flags.  A recorded run's emulated
 * latency adds to the simulated one.
 */
static int apply_dataopts(struct sim_plan *p, char **cause)
{
    struct node_config nc;
    memset(&nc, 0, sizeof nc);
    if (dataopts_apply(&p->data, &nc, cause) < 0)
        return -EINVAL;
    if (dataopts_finish(&p->data, "sim")) { /* cannot fail once apply passed */
        *cause = xstrdup("the policy flags do not hold together");
        return -EINVAL;
    }
    p->cfg.steal = nc.steal;
    p->cfg.placement = nc.placement;
    if (p->data.bandwidth)
        p->cfg.bandwidth_Bps = nc.bandwidth_Bps;
    if (p->data.sample_ms)
        p->cfg.sample_s = nc.sample_ms / 1000.0;
    if (p->data.latency)
        p->cfg.latency_s += (double)nc.latency_ns / 1e9;
    return 0;
}

/* --slots a,b,...: one count per node (a recorded cluster's, or one given so), each
 * 1..SLOTS_MAX.  0, or -EINVAL with *cause. */
#define SLOTS_MAX 65536u
static int parse_slot_list(const char *text, struct sim_plan *p, char **cause)
{
    uint32_t n = p->cfg.nodes, k = 0, most = 0;
    p->node_slots = xcalloc(n ? n : 1, sizeof *p->node_slots);
    for (const char *at = text;; at++) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(at, &end, 10);
        if (end == at || errno || v < 1 || v > SLOTS_MAX || (*end && *end != ',') || k >= n) {
            *cause = xasprintf("--slots '%s': expected %u counts (1..%u) separated by commas, "
                               "one per node", text, n, SLOTS_MAX);
            return -EINVAL;
        }
        p->node_slots[k++] = (uint32_t)v;
        most = (uint32_t)v > most ? (uint32_t)v : most;
        at = end;
        if (!*end)
            break;
    }
    if (k != n) {
        *cause = xasprintf("--slots '%s': %u counts for %u nodes", text, k, n);
        return -EINVAL;
    }
    p->cfg.node_slots = p->node_slots;
    p->cfg.slots = most;
    return 0;
}

int sim_plan_build(struct sim_plan *p, const struct sim_settings *s, char **cause)
{
    memset(p, 0, sizeof *p);
    sim_config_default(&p->cfg);
    p->data = s->data;
    unsigned long long v;
    if (parse_whole("nodes", s->nodes ? s->nodes : "4", 1, SIM_MAX_NODES, &v, cause) < 0)
        return -EINVAL;
    p->cfg.nodes = (uint32_t)v;
    if (parse_whole("seed", s->seed ? s->seed : "1", 1, UINT64_MAX, &v, cause) < 0)
        return -EINVAL;
    p->cfg.seed = v;
    if (parse_mode(s->mode ? s->mode : "hashed", p, cause) < 0)
        return -EINVAL;
    int engine = sim_engine_parse(s->engine ? s->engine : "des");
    if (engine < 0) {
        *cause = xasprintf("unknown --engine '%s' (des, simgrid)", s->engine);
        return -EINVAL;
    }
    p->engine = (enum sim_engine)engine;
    if (s->latency && parse_latency(s->latency, &p->cfg.latency_s) < 0) {
        *cause = xasprintf("--latency '%s': expected seconds (100e-6) or a duration (100us)",
                           s->latency);
        return -EINVAL;
    }
    if (apply_dataopts(p, cause) < 0)
        return -EINVAL;
    if (s->host_rate) {
        char *why = NULL;
        if (bucket_parse_rate(s->host_rate, &p->cfg.host_Bps, &why) < 0) {
            *cause = xasprintf("--host-rate: %s", why ? why : s->host_rate);
            free(why);
            return -EINVAL;
        }
    }
    bool slots_cores = false;
    int rc = s->slots && strchr(s->slots, ',')
                 ? parse_slot_list(s->slots, p, cause)
                 : launcher_parse_slots(s->slots ? s->slots : "4", s->speeds, &p->cfg.slots,
                                        &slots_cores, cause);
    if (rc == 0 && slots_cores) {
        *cause = xstrdup("--slots cores is not modelled: every simulated node has the same "
                         "slots");
        rc = -EINVAL;
    }
    if (rc == 0 && s->speeds) {
        p->speeds = xcalloc(p->cfg.nodes, sizeof *p->speeds);
        rc = launcher_parse_speeds(s->speeds, p->speeds, p->cfg.nodes, cause);
    }
    if (rc < 0) {
        sim_plan_fini(p);
        return -EINVAL;
    }
    p->cfg.speeds = p->speeds;
    return 0;
}

void sim_plan_fini(struct sim_plan *p)
{
    free(p->speeds);
    p->speeds = NULL;
    free(p->node_slots);
    p->node_slots = NULL;
    p->cfg.node_slots = NULL;
    p->cfg.speeds = NULL;
}
