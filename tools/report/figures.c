/*
 * report figures — the names of the scalar figures and of the lost-time causes: the
 * stable keys of the JSON and CSV outputs (share/doc/report.md lists them) and the
 * labels people read.  A key, once published, never changes meaning; new figures are
 * appended to enum report_figure.
 */
#include <stddef.h>

#include "tools/report/analysis.h"

static const struct report_figure_info figure_info[RF_COUNT] = {
    [RF_MAKESPAN_S] = {"makespan_s", "makespan", RU_SECONDS, REPORT_LOWER_BETTER, "summary"},
    [RF_THROUGHPUT_TPS] = {"throughput_tps", "throughput", RU_RATE, REPORT_HIGHER_BETTER,
                           "summary"},
    [RF_EFFICIENCY] = {"efficiency", "efficiency", RU_RATIO, REPORT_HIGHER_BETTER, "summary"},
    [RF_IDEAL_S] = {"ideal_s", "ideal makespan", RU_SECONDS, REPORT_NEUTRAL, "summary"},
    [RF_WORK_S] = {"work_s", "work at speed 1", RU_SECONDS, REPORT_NEUTRAL, "summary"},
    [RF_TIME_PER_TASK_PER_CPU_S] = {"time_per_task_per_cpu_s", "time per task per CPU",
                                    RU_SECONDS, REPORT_LOWER_BETTER, "summary"},
    [RF_MEAN_TASK_S] = {"mean_task_s", "mean task run time (measured)",
                        RU_SECONDS, REPORT_NEUTRAL, "summary"},
    [RF_UTILIZATION] = {"utilization", "utilization", RU_RATIO, REPORT_HIGHER_BETTER,
                        "summary"},
    [RF_SETUP_S] = {"setup_s", "setup (first submit to first start)", RU_SECONDS,
                    REPORT_LOWER_BETTER, "summary"},
    [RF_RAMP_UP_S] = {"ramp_up_s", "ramp-up (first submit to every slot busy)", RU_SECONDS,
                      REPORT_LOWER_BETTER, "summary"},
    [RF_NODES] = {"nodes", "nodes", RU_COUNT, REPORT_NEUTRAL, "summary"},
    [RF_SLOTS] = {"slots", "slots", RU_COUNT, REPORT_NEUTRAL, "summary"},
    [RF_TASKS_SUBMITTED] = {"tasks_submitted", "tasks submitted", RU_COUNT, REPORT_NEUTRAL,
                            "summary"},
    [RF_TASKS_DONE] = {"tasks_done", "tasks done", RU_COUNT, REPORT_NEUTRAL, "summary"},
    [RF_TASKS_FAILED] = {"tasks_failed", "tasks failed", RU_COUNT, REPORT_LOWER_BETTER,
                         "summary"},
    [RF_TASKS_CANCELLED] = {"tasks_cancelled", "tasks cancelled", RU_COUNT,
                            REPORT_LOWER_BETTER, "summary"},
    [RF_LOCALITY_HIT_RATE] = {"locality_hit_rate", "locality hit rate", RU_RATIO,
                              REPORT_HIGHER_BETTER, "data"},
    [RF_TASKS_WITH_INPUTS] = {"tasks_with_inputs", "tasks with inputs", RU_COUNT,
                              REPORT_NEUTRAL, "data"},
    [RF_BYTES_MOVED] = {"bytes_moved", "bytes moved", RU_BYTES, REPORT_LOWER_BETTER, "data"},
    [RF_FETCHES] = {"fetches", "fetches", RU_COUNT, REPORT_NEUTRAL, "data"},
    [RF_CACHE_HITS] = {"cache_hits", "cache hits", RU_COUNT, REPORT_NEUTRAL, "data"},
    [RF_CACHE_HIT_RATE] = {"cache_hit_rate", "cache hit rate", RU_RATIO, REPORT_HIGHER_BETTER,
                           "data"},
    [RF_TASKS_PUSHED] = {"tasks_pushed", "tasks pushed to their data", RU_COUNT,
                         REPORT_NEUTRAL, "data"},
    [RF_STEAL_REQUESTS] = {"steal_requests", "steal requests", RU_COUNT, REPORT_NEUTRAL,
                           "steals"},
    [RF_STEAL_GRANTS] = {"steal_grants", "steal grants", RU_COUNT, REPORT_NEUTRAL, "steals"},
    [RF_STEAL_FAILS] = {"steal_fails", "steal failures", RU_COUNT, REPORT_NEUTRAL, "steals"},
    [RF_STEAL_SUCCESS_PCT] = {"steal_success_pct", "steal success (requests granted)",
                              RU_PERCENT, REPORT_NEUTRAL, "steals"},
    [RF_STEAL_ATTEMPT_SUCCESS_PCT] = {"steal_attempt_success_pct",
                                      "attempt success (no-victim attempts included)",
                                      RU_PERCENT, REPORT_NEUTRAL, "steals"},
    [RF_TASKS_STOLEN] = {"tasks_stolen", "tasks moved by steals", RU_COUNT, REPORT_NEUTRAL,
                         "steals"},
    [RF_STEAL_TASKS_ASKED] = {"steal_tasks_asked",
                              "tasks asked for (requests that named an amount)", RU_COUNT,
                              REPORT_NEUTRAL, "steals"},
    [RF_STEAL_TASKS_GRANTED] = {"steal_tasks_granted", "tasks granted to requests", RU_COUNT,
                                REPORT_NEUTRAL, "steals"},
    [RF_INFO_SENT] = {"info_sent", "A2WS information-vector messages sent", RU_COUNT,
                      REPORT_NEUTRAL, "steals"},
    [RF_INFO_RECEIVED] = {"info_received", "A2WS information-vector messages received",
                          RU_COUNT, REPORT_NEUTRAL, "steals"},
    [RF_TOKEN_PASSES] = {"token_passes", "CTWS token passes", RU_COUNT, REPORT_NEUTRAL,
                         "steals"},
    [RF_POTENTIAL_MEAN] = {"potential_mean", "potential for work stealing E_b, mean",
                           RU_NUMBER, REPORT_NEUTRAL, "steals"},
    [RF_POTENTIAL_MAX] = {"potential_max", "potential for work stealing E_b, max", RU_NUMBER,
                          REPORT_NEUTRAL, "steals"},
    [RF_CAPACITY_CORE_S] = {"capacity_core_s", "capacity (slots x makespan)", RU_SECONDS,
                            REPORT_NEUTRAL, "lost"},
    [RF_BUSY_CORE_S] = {"busy_core_s", "busy core-seconds", RU_SECONDS, REPORT_NEUTRAL,
                        "lost"},
    [RF_IDLE_CORE_S] = {"idle_core_s", "idle core-seconds", RU_SECONDS, REPORT_LOWER_BETTER,
                        "lost"},
    [RF_LOST_RAMP_UP_S] = {"lost_ramp_up_s", "lost: ramp-up", RU_SECONDS, REPORT_LOWER_BETTER,
                           "lost"},
    [RF_LOST_TAIL_S] = {"lost_tail_s", "lost: tail", RU_SECONDS, REPORT_LOWER_BETTER, "lost"},
    [RF_LOST_DATA_S] = {"lost_data_s", "lost: waiting for data", RU_SECONDS,
                        REPORT_LOWER_BETTER, "lost"},
    [RF_LOST_DISPATCH_S] = {"lost_dispatch_s", "lost: ready here but not started", RU_SECONDS,
                            REPORT_LOWER_BETTER, "lost"},
    [RF_LOST_STEAL_S] = {"lost_steal_s", "lost: steal in flight", RU_SECONDS,
                         REPORT_LOWER_BETTER, "lost"},
    [RF_LOST_IMBALANCE_S] = {"lost_imbalance_s", "lost: ready work elsewhere (imbalance)",
                             RU_SECONDS, REPORT_LOWER_BETTER, "lost"},
    [RF_LOST_LOCALITY_S] = {"lost_locality_s", "lost: held in LReadyQ by locality",
                            RU_SECONDS, REPORT_LOWER_BETTER, "lost"},
    [RF_LOST_NO_WORK_S] = {"lost_no_work_s", "lost: no ready work anywhere", RU_SECONDS,
                           REPORT_LOWER_BETTER, "lost"},
    [RF_LOST_FAILURE_S] = {"lost_failure_s", "lost: failure recovery", RU_SECONDS,
                           REPORT_LOWER_BETTER, "lost"},
    [RF_STEALS_AUDITED] = {"steals_audited", "steals audited", RU_COUNT, REPORT_NEUTRAL,
                           "audit"},
    [RF_STEALS_HELPFUL] = {"steals_helpful", "helpful steals", RU_COUNT, REPORT_NEUTRAL,
                           "audit"},
    [RF_STEALS_HARMFUL] = {"steals_harmful", "harmful steals", RU_COUNT, REPORT_LOWER_BETTER,
                           "audit"},
    [RF_STEAL_GAIN_S] = {"steal_gain_s", "net start time gained by steals", RU_SECONDS,
                         REPORT_HIGHER_BETTER, "audit"},
    [RF_BOUND_MAKESPAN_S] = {"bound_makespan_s", "bound makespan (the binding one)", RU_SECONDS,
                             REPORT_NEUTRAL, "lost"},
    [RF_BOUND_QUALITY] = {"bound_quality", "quality (bound / makespan)", RU_RATIO,
                          REPORT_HIGHER_BETTER, "lost"},
    [RF_EVENTS_DROPPED] = {"events_dropped", "events dropped by the nodes", RU_COUNT,
                           REPORT_LOWER_BETTER, "summary"},
    [RF_TASKS_RESUBMITTED] = {"tasks_resubmitted", "tasks resubmitted (a node died)", RU_COUNT,
                              REPORT_LOWER_BETTER, "lost"},
    [RF_OBJECTS_RECOMPUTED] = {"objects_recomputed", "objects recomputed (lost with a node)",
                               RU_COUNT, REPORT_LOWER_BETTER, "lost"},
    [RF_WORK_THROWN_AWAY_S] = {"work_thrown_away_s", "work thrown away (lost attempts)",
                               RU_SECONDS, REPORT_LOWER_BETTER, "lost"},
    [RF_CPU_S] = {"cpu_s", "CPU time of commands (user + system)", RU_SECONDS, REPORT_NEUTRAL,
                  "summary"},
    [RF_CPU_EFFICIENCY] = {"cpu_efficiency", "CPU efficiency (commands' CPU / wall time)",
                           RU_RATIO, REPORT_HIGHER_BETTER, "summary"},
    [RF_MAX_RSS_BYTES] = {"max_rss_bytes", "largest resident set of a command", RU_BYTES,
                          REPORT_NEUTRAL, "summary"},
    [RF_READ_BYTES] = {"read_bytes", "bytes commands read", RU_BYTES, REPORT_NEUTRAL, "data"},
    [RF_WRITE_BYTES] = {"write_bytes", "bytes commands wrote", RU_BYTES, REPORT_NEUTRAL,
                        "data"},
};

static const char *const lost_keys[REPORT_LOST_COUNT] = {
    "ramp_up", "tail", "data", "dispatch", "steal", "imbalance", "locality", "no_work",
    "failure",
};
static const char *const lost_labels[REPORT_LOST_COUNT] = {
    "ramp-up", "tail", "waiting for data", "ready here but not started", "steal in flight",
    "ready work elsewhere (imbalance)", "held in LReadyQ by locality", "no ready work anywhere",
    "failure recovery",
};

const struct report_figure_info *report_figure_info(enum report_figure f)
{
    return (unsigned)f < RF_COUNT ? &figure_info[f] : NULL;
}

const char *report_lost_cause_key(enum report_lost_cause c)
{
    return (unsigned)c < REPORT_LOST_COUNT ? lost_keys[c] : "?";
}

const char *report_lost_cause_label(enum report_lost_cause c)
{
    return (unsigned)c < REPORT_LOST_COUNT ? lost_labels[c] : "?";
}
