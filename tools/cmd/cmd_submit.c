/*
 * jackdaw submit — send a workload to a running cluster; with --wait, follow it to the
 * end and print the summary.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/client/job.h"
#include "core/client/wfopts.h"
#include "core/model/wfcommons.h"
#include "tools/cmd/cmd.h"

static int submit_main(int argc, char **argv)
{
    const char *cluster = NULL, *mode = "hashed", *records = NULL, *task_timeout_text = NULL;
    const char *retries_text = NULL;
    const char *follow = NULL, *outputs = NULL, *keep = NULL;
    bool wait = false, json = false, quiet = false;
    double timeout = 0;
    struct wfcommons_options scale = {0};
    struct opt opts[] = {
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {"mode", OPT_STRING, &mode, "M  hashed | one | roundrobin | data (default hashed)"},
        {"wait", OPT_FLAG, &wait, "  follow the job to its end and print the summary"},
        {"follow", OPT_STRING, &follow, "JOB  submit nothing: attach to job JOB (jackdaw attach)"},
        {"json", OPT_FLAG, &json, "  with --wait: summary as one JSON object"},
        {"quiet", OPT_FLAG, &quiet, "  no progress line"},
        {"records", OPT_STRING, &records, "FILE  with --wait: one JSON line per task end"},
        {"timeout", OPT_DOUBLE, &timeout, "S  with --wait: give up after S seconds (exit status 6)"},
        {"task-timeout", OPT_STRING, &task_timeout_text,
         "S  time limit of each task without timeout_s (default: none)"},
        {"retries", OPT_STRING, &retries_text,
         "N  runs again after a failed run, for tasks without retries (default 0)"},
        {"outputs", OPT_STRING, &outputs,
         "DIR  with --wait: fetch the final outputs (of tasks no task reads) into DIR"},
        {"keep-object", OPT_STRING, &keep, "ID,...  with --outputs: these too (tasks or objects)"},
        WFOPTS_OPTS(&scale),
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_submit, argc, argv, opts, pos, 1, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (follow && npos) {
        fprintf(stderr, "jackdaw submit: --follow JOB attaches to a job and submits nothing: "
                        "drop the workload '%s'\n", pos[0]);
        return EXIT_USAGE;
    }
    if (follow)
        return cmd_attach_job("submit", cluster, follow, json, quiet, records, timeout);
    if (npos != 1) {
        fprintf(stderr, "jackdaw submit: which workload?\nusage: jackdaw submit %s\n",
                cmd_submit.usage);
        return EXIT_USAGE;
    }
    if ((outputs || keep) && !wait) {
        fprintf(stderr, "jackdaw submit: --outputs and --keep-object need --wait (or use "
                        "jackdaw get once the job is done)\n");
        return EXIT_USAGE;
    }
    if (keep && !outputs) {
        fprintf(stderr, "jackdaw submit: --keep-object says what --outputs DIR gets besides "
                        "the final outputs: give --outputs\n");
        return EXIT_USAGE;
    }
    int m = submit_mode_parse(mode);
    if (m < 0) {
        fprintf(stderr, "jackdaw submit: unknown --mode '%s' (hashed, one, roundrobin, data)\n", mode);
        return EXIT_USAGE;
    }
    double task_timeout = 0;
    if (job_parse_task_timeout("submit", task_timeout_text, &task_timeout))
        return EXIT_USAGE;
    int retries;
    if (job_parse_retries("submit", retries_text, &retries))
        return EXIT_USAGE;
    struct workload wl;
    char *cause = NULL;
    if (wfopts_finish(&scale, "submit"))
        return EXIT_USAGE;
    if (wfcommons_load_any(&wl, pos[0], &scale, &cause) < 0) {
        fprintf(stderr, "jackdaw submit: %s\n", cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    if (task_timeout > 0)
        workload_default_timeout(&wl, task_timeout);
    if (retries >= 0)
        workload_default_retries(&wl, (uint32_t)retries);
    if (job_check_keep("submit", &wl, keep)) {
        workload_fini(&wl);
        return EXIT_BAD_INPUT;
    }
    struct cluster cl;
    struct auth_key key;
    rc = job_open_cluster("submit", &cluster, &cl, &key);
    if (rc) {
        workload_fini(&wl);
        return rc;
    }
    struct job_options o = {
        .cluster = &cl, .cluster_path = cluster, .workload_path = pos[0], .wl = &wl, .mode = (enum submit_mode)m,
        .wait = wait, .json = json, .quiet = quiet, .records = records, .timeout_s = timeout, .scale = &scale,
        .outputs = outputs, .keep = keep,
    };
    rc = job_submit("submit", &o);
    cluster_fini(&cl);
    workload_fini(&wl);
    return rc;
}

const struct cmd cmd_submit = {
    .name = "submit",
    .usage = "WORKLOAD [--cluster FILE] [--mode hashed|one|roundrobin|data] [--task-timeout S] "
             "[--wait] [--json] [--records FILE] [--outputs DIR [--keep-object ID,...]] | --follow JOB",
    .summary = "submit a workload to a running cluster",
    .main = submit_main,
};
