/*
 * dataopts — the stealing, data-plane, placement and tracing flags that `run` and `launch`
 * accept and hand to every daemon they start (`jackdaw node` parses them for real, so a bad value is
 * refused there and here alike: run and launch check them before starting anything).
 *
 * Owns the option-table entries (DATAOPTS_OPTS) and their checks; the strings stay the
 * caller's argv.  Called by tools/cmd/cmd_run.c, tools/cmd/cmd_launch.c and
 * tools/cmd/cmd_node.c, and by the client and tools/cmd/sim_from.c to read the flags back
 * (dataopts_read_words).  It includes core/runtime/node.h for struct node_config alone:
 * dataopts_apply fills a daemon's configuration, and dataopts_finish checks the flags by
 * filling a scratch one.
 */
#ifndef JACKDAW_DATAOPTS_H
#define JACKDAW_DATAOPTS_H

#include <stddef.h>

#include "core/client/opt.h"

struct dataopts {
    const char *policy, *starvation, *victims, *amount, *info, *radius, *wait_guard;
    const char *steal, *neighbours, *poll_initial, *poll_max, *widen_after, *widen_by;
    const char *placement, *threshold, *tt, *bandwidth, *latency, *cache, *cache_bytes,
        *store_mem;
    const char *sample_ms, *trace_buffer, *prefetch, *failure_timeout, *replicas,
        *object_replicas, *task_log_bytes;
    const char *words[64];  /* "--flag", "value" pairs for the daemons */
    int nwords;
};

/* The option table entries, to splice into a command's table: DATAOPTS_OPTS(&d). */
#define DATAOPTS_OPTS(d)                                                                        \
    {"policy", OPT_STRING, &(d)->policy,                                                        \
     "P  stealing preset: daws | a2ws | parsec | random1 | none | daws+a2ws | lw | ctws"},      \
    {"starvation", OPT_STRING, &(d)->starvation,                                                \
     "S  when to steal: ready | ready+successors | preemptive (ready)"},                        \
    {"victims", OPT_STRING, &(d)->victims,                                                      \
     "V  whom to ask: sqrt | random:K | a2ws | token | leader (sqrt)"},                         \
    {"amount", OPT_STRING, &(d)->amount,                                                        \
     "A  how many to take: half | chunk:N | single | a2ws (half)"},                            \
    {"info", OPT_STRING, &(d)->info, "I  load-query | ring | token (load-query)"},             \
    {"radius", OPT_STRING, &(d)->radius, "R  ring window each side (20% of nodes, >= 1)"},     \
    {"wait-guard", OPT_STRING, &(d)->wait_guard,                                                \
     "on|off  victims keep tasks that would start before they arrive (off)"},                  \
    {"steal", OPT_STRING, &(d)->steal, "MODE  adaptive | random1 | none (adaptive)"},           \
    {"neighbours", OPT_STRING, &(d)->neighbours, "K  victims per steal attempt (ceil(sqrt N))"}, \
    {"poll-initial-ms", OPT_STRING, &(d)->poll_initial, "MS  first back-off wait (1)"},         \
    {"poll-max-ms", OPT_STRING, &(d)->poll_max, "MS  back-off bound (50000)"},                  \
    {"widen-after", OPT_STRING, &(d)->widen_after,                                              \
     "N  failures in a row before asking more victims (3)"},                                    \
    {"widen-by", OPT_STRING, &(d)->widen_by, "N  victims added each time (2)"},                 \
    {"placement", OPT_STRING, &(d)->placement, "P  ws | mlb | mdl | rlds | flds | auto (flds)"}, \
    {"threshold", OPT_STRING, &(d)->threshold, "T  Algorithm 1's ratio threshold t"},            \
    {"tt", OPT_STRING, &(d)->tt, "S  FLDS: LReadyQ run-time threshold tt (two task lengths)"},   \
    {"bandwidth", OPT_STRING, &(d)->bandwidth,                                                   \
     "RATE  emulated per-node link, e.g. 1Gbit (off); also Algorithm 1's net_band"},            \
    {"latency", OPT_STRING, &(d)->latency, "T  emulated one-way latency, e.g. 100us (off)"},    \
    {"cache", OPT_STRING, &(d)->cache, "on|off  keep fetched copies (on)"},                     \
    {"cache-bytes", OPT_STRING, &(d)->cache_bytes, "B  cache capacity (1 GiB)"},               \
    {"store-mem", OPT_STRING, &(d)->store_mem, "B  object bytes kept in memory (1 GiB)"},      \
    {"prefetch", OPT_STRING, &(d)->prefetch,                                                    \
     "N  tasks fetching inputs ahead of a free slot (default: slots; 0: fetch in the slot)"},   \
    {"sample-ms", OPT_STRING, &(d)->sample_ms, "MS  trace: node sample period (100)"},          \
    {"trace-buffer", OPT_STRING, &(d)->trace_buffer,                                             \
     "B  trace: events a node buffers before dropping, in bytes (32MiB)"},                      \
    {"failure-timeout", OPT_STRING, &(d)->failure_timeout,                                      \
     "MS  a node silent this long is declared dead (3000; 100..600000)"},                       \
    {"replicas", OPT_STRING, &(d)->replicas,                                                    \
     "R  copies of each task's metadata, on successive nodes (2; 1..8)"},                   \
    {"object-replicas", OPT_STRING, &(d)->object_replicas,                                      \
     "K  copies of each initial data object, on successive nodes (1; 1..8)"},                   \
    {"task-log-bytes", OPT_STRING, &(d)->task_log_bytes,                                        \
     "B  a command's standard error kept per task, its tail (1MiB; 0: all)"}

struct node_config;

/* Applies the values to a daemon's configuration (stealing, placement, bandwidth,
 * latency, cache, memory), over its defaults.  0, or -EINVAL with *cause naming the flag. */
int dataopts_apply(const struct dataopts *d, struct node_config *cfg, char **cause);

/* Checks the values and fills d->words.  Prints "jackdaw WHO: …" and returns EXIT_USAGE
 * on a bad value, else 0. */
int dataopts_finish(struct dataopts *d, const char *who);

/*
 * The other way: d's strings from the words a daemon was started with ("--flag value" or
 * "--flag=value", as a cluster file's node_args or a trace header's config.node_args
 * keep them); the strings stay the caller's.  A word that is no flag of the table, or a
 * flag without its value, goes to `unknown` (may be NULL) and is left out.  For the
 * client (core/client/client.c: what the daemons were told) and `jackdaw sim --from`.
 */
void dataopts_read_words(struct dataopts *d, const char *const *words, size_t n,
                         void (*unknown)(const char *word, void *arg), void *arg);

#endif
