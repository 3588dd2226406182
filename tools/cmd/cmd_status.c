/*
 * jackdaw status — one line per node: slots, busy, queue lengths, tasks run, steals;
 * a node declared dead as "dead (declared at HH:MM:SS by node X)" (a degraded cluster
 * still serves: exit 0), one that is silent without being declared dead as unreachable
 * (exit 4); the failure counters; then the jobs the cluster knows with their progress.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/client/client.h"
#include "core/client/follow.h"
#include "core/client/job.h"
#include "tools/cmd/cmd.h"

/* Jobs summed over the nodes: each node counts the tasks that ended there. */
static void print_jobs(const struct proto_stats *st, uint32_t nodes, uint32_t ndeaths)
{
    struct proto_job_count sum[64];
    uint32_t n = 0;
    for (uint32_t i = 0; i < nodes; i++) {
        for (uint32_t k = 0; k < st[i].njobs; k++) {
            const struct proto_job_count *j = &st[i].jobs[k];
            uint32_t s = 0;
            while (s < n && sum[s].job != j->job)
                s++;
            if (s == n) {
                if (n == 64)
                    continue;
                sum[n++] = (struct proto_job_count){.job = j->job};
            }
            if (j->tasks > sum[s].tasks)
                sum[s].tasks = j->tasks;
            sum[s].done += j->done;
            sum[s].failed += j->failed;
            sum[s].cancelled += j->cancelled;
        }
    }
    for (uint32_t s = 0; s < n; s++) {
        uint32_t ended = sum[s].done + sum[s].failed + sum[s].cancelled;
        printf("job %u: %u/%u ended (%u done, %u failed, %u cancelled)%s\n", sum[s].job, ended,
               sum[s].tasks, sum[s].done, sum[s].failed, sum[s].cancelled,
               ended >= sum[s].tasks ? ""
               /* A dead node took its count of the tasks that ended there with it. */
               : ndeaths ? "  running, or ended on a dead node"
                         : "  running");
    }
}

/* A node as status sees it: answering, declared dead by a node that answered, or
 * silent with nobody saying why (an error: exit status 4). */
enum node_state { NODE_UP, NODE_DEAD, NODE_UNREACHABLE };
static const char *const state_name[] = {"up", "dead", "unreachable"};

static int status_main(int argc, char **argv)
{
    const char *cluster = NULL;
    bool json = false;
    struct opt opts[] = {
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {"json", OPT_FLAG, &json, "  print one JSON object"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_status, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct cluster cl;
    struct auth_key key;
    rc = job_open_cluster("status", &cluster, &cl, &key);
    if (rc)
        return rc;
    struct client *c = client_create(&cl, &key, NULL);
    char *cause = NULL, *unreached = NULL;
    struct proto_stats *st = xcalloc(cl.count, sizeof *st);
    bool *got = xcalloc(cl.count, sizeof *got);
    struct proto_dead *deaths = xcalloc(cl.count, sizeof *deaths);
    /* A node that cannot be reached does not stop the others from answering: whether
     * it is a failure depends on whether the live ones declared it dead. */
    (void)client_connect(c, 5000, &unreached);
    client_stats_some(c, st, got, 5000, &cause);
    uint32_t answered = 0, missing = 0;
    uint32_t ndeaths = follow_deaths(st, got, cl.count, deaths);
    enum node_state *state = xcalloc(cl.count, sizeof *state);
    for (uint32_t i = 0; i < cl.count; i++) {
        state[i] = got[i] ? NODE_UP : NODE_UNREACHABLE;
        for (uint32_t k = 0; k < ndeaths && !got[i]; k++)
            if (deaths[k].node == i)
                state[i] = NODE_DEAD;
        answered += got[i];
        missing += state[i] == NODE_UNREACHABLE;
    }
    int code = 0;
    if (!answered || missing) {
        /* Nothing answered, or a node nobody declared dead is silent: the cluster is not
         * what its file says, and status cannot tell why. */
        fprintf(stderr, "jackdaw status: %s\n",
                unreached ? unreached : cause ? cause : "no node answered");
        code = EXIT_CLUSTER;
    }
    if (!answered) {
        /* nothing to show */
    } else if (json) {
        json_t *nodes = json_array();
        for (uint32_t i = 0; i < cl.count; i++) {
            if (!got[i]) {
                json_t *n = json_pack("{s:i, s:s}", "id", (int)i, "state", state_name[state[i]]);
                for (uint32_t k = 0; k < ndeaths; k++)
                    if (deaths[k].node == i)
                        json_object_update_new(n, json_pack("{s:I, s:i}", "declared_at_ns",
                                                            (json_int_t)deaths[k].at_ns,
                                                            "declared_by", (int)deaths[k].by));
                json_array_append_new(nodes, n);
                continue;
            }
            json_t *n = json_pack(
                "{s:i, s:i, s:i, s:f, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "id",
                (int)st[i].node, "slots", (int)st[i].slots, "busy", (int)st[i].busy, "speed",
                st[i].speed, "waitq", (int)st[i].waitq, "lready", (int)st[i].lready, "sready",
                (int)st[i].sready, "completeq", (json_int_t)st[i].completeq, "tasks_run",
                (json_int_t)st[i].tasks_run, "steals_attempted",
                (json_int_t)st[i].steals_attempted, "steals_succeeded",
                (json_int_t)st[i].steals_succeeded, "tasks_stolen", (json_int_t)st[i].tasks_stolen,
                "kvs_records", (json_int_t)st[i].kvs_records, "rss_bytes",
                (json_int_t)st[i].rss_bytes);
            /* The data plane, for operators watching where bytes go. */
            json_object_update_new(
                n, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "tasks_pushed",
                             (json_int_t)st[i].tasks_pushed, "tasks_with_inputs",
                             (json_int_t)st[i].tasks_with_inputs, "locality_hits",
                             (json_int_t)st[i].locality_hits, "fetches",
                             (json_int_t)st[i].fetches, "bytes_in", (json_int_t)st[i].bytes_in,
                             "bytes_out", (json_int_t)st[i].bytes_out, "cache_hits",
                             (json_int_t)st[i].cache_hits, "cache_misses",
                             (json_int_t)st[i].cache_misses, "policy_switches",
                             (json_int_t)st[i].policy_switches, "est_task_length_s",
                             st[i].est_task_length_s));
            /* Failures as this node knows them. */
            json_object_update_new(
                n, json_pack("{s:s, s:i, s:I, s:I}", "state", state_name[NODE_UP], "epoch",
                             (int)st[i].epoch, "tasks_resubmitted",
                             (json_int_t)st[i].tasks_resubmitted, "objects_recomputed",
                             (json_int_t)st[i].objects_recomputed));
            json_array_append_new(nodes, n);
        }
        json_t *dead = json_array();
        for (uint32_t k = 0; k < ndeaths; k++)
            json_array_append_new(dead, json_pack("{s:i, s:i, s:I}", "node", (int)deaths[k].node,
                                                  "by", (int)deaths[k].by, "at_ns",
                                                  (json_int_t)deaths[k].at_ns));
        json_t *o = json_pack("{s:o, s:o}", "nodes", nodes, "dead", dead);
        char *text = json_dumps(o, JSON_COMPACT);
        printf("%s\n", text);
        free(text);
        json_decref(o);
    } else {
        printf("%-5s %5s %5s %6s %8s %8s %8s %10s %10s %13s %9s %9s\n", "node", "slots", "busy",
               "speed", "waitq", "lready", "sready", "completeq", "tasks_run", "steals ok/try",
               "stolen", "rss_MiB");
        for (uint32_t i = 0; i < cl.count; i++) {
            if (state[i] == NODE_DEAD) {
                for (uint32_t k = 0; k < ndeaths; k++) {
                    if (deaths[k].node != i)
                        continue;
                    char when[32];
                    follow_clock_time(deaths[k].at_ns, when, sizeof when);
                    printf("%-5u dead (declared at %s by node %u)\n", i, when, deaths[k].by);
                }
                continue;
            }
            if (state[i] == NODE_UNREACHABLE) {
                printf("%-5u unreachable (not declared dead by any node that answered)\n", i);
                continue;
            }
            char steals[40];
            snprintf(steals, sizeof steals, "%" PRIu64 "/%" PRIu64, st[i].steals_succeeded,
                     st[i].steals_attempted);
            printf("%-5u %5u %5u %6.2f %8u %8u %8u %10" PRIu64 " %10" PRIu64 " %13s %9" PRIu64
                   " %9.1f\n",
                   st[i].node, st[i].slots, st[i].busy, st[i].speed, st[i].waitq, st[i].lready,
                   st[i].sready, st[i].completeq, st[i].tasks_run, steals, st[i].tasks_stolen,
                   (double)st[i].rss_bytes / (1 << 20));
        }
        uint64_t resubmitted = 0, recomputed = 0;
        for (uint32_t i = 0; i < cl.count; i++) {
            resubmitted += st[i].tasks_resubmitted;
            recomputed += st[i].objects_recomputed;
        }
        if (ndeaths || resubmitted || recomputed)
            printf("failures: %u node%s declared dead, %" PRIu64 " tasks resubmitted, %" PRIu64
                   " objects recomputed\n", ndeaths, ndeaths == 1 ? "" : "s", resubmitted,
                   recomputed);
        print_jobs(st, cl.count, ndeaths);
    }
    free(state);
    free(deaths);
    free(got);
    free(unreached);
    for (uint32_t i = 0; i < cl.count; i++)
        proto_stats_fini(&st[i]);
    free(st);
    free(cause);
    client_destroy(c);
    cluster_fini(&cl);
    return code;
}

const struct cmd cmd_status = {
    .name = "status",
    .usage = "[--cluster FILE] [--json]",
    .summary = "show every node's slots, queues, tasks and steals",
    .main = status_main,
};
