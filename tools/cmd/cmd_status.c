/*
 * jackdaw status — one line per node: slots, busy, queue lengths, tasks run, steals;
 * then the jobs the cluster knows with their progress.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/client/client.h"
#include "core/client/job.h"
#include "tools/cmd/cmd.h"

/* Jobs summed over the nodes: each node counts the tasks that ended there. */
static void print_jobs(const struct proto_stats *st, uint32_t nodes)
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
               ended >= sum[s].tasks ? "" : "  running");
    }
}

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
    char *cause = NULL;
    struct proto_stats *st = xcalloc(cl.count, sizeof *st);
    rc = client_connect(c, 5000, &cause);
    if (rc == 0)
        rc = client_stats(c, st, 5000, &cause);
    int code = 0;
    if (rc < 0) {
        fprintf(stderr, "jackdaw status: %s\n", cause ? cause : "failed");
        code = EXIT_CLUSTER;
    } else if (json) {
        json_t *nodes = json_array();
        for (uint32_t i = 0; i < cl.count; i++) {
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
            json_array_append_new(nodes, n);
        }
        json_t *o = json_pack("{s:o}", "nodes", nodes);
        char *text = json_dumps(o, JSON_COMPACT);
        printf("%s\n", text);
        free(text);
        json_decref(o);
    } else {
        printf("%-5s %5s %5s %6s %8s %8s %8s %10s %10s %13s %9s %9s\n", "node", "slots", "busy",
               "speed", "waitq", "lready", "sready", "completeq", "tasks_run", "steals ok/try",
               "stolen", "rss_MiB");
        for (uint32_t i = 0; i < cl.count; i++) {
            char steals[40];
            snprintf(steals, sizeof steals, "%" PRIu64 "/%" PRIu64, st[i].steals_succeeded,
                     st[i].steals_attempted);
            printf("%-5u %5u %5u %6.2f %8u %8u %8u %10" PRIu64 " %10" PRIu64 " %13s %9" PRIu64
                   " %9.1f\n",
                   st[i].node, st[i].slots, st[i].busy, st[i].speed, st[i].waitq, st[i].lready,
                   st[i].sready, st[i].completeq, st[i].tasks_run, steals, st[i].tasks_stolen,
                   (double)st[i].rss_bytes / (1 << 20));
        }
        print_jobs(st, cl.count);
    }
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
