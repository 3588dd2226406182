/*
 * jackdaw cancel — job removal (paper 002 §2.2.2): removes a task and, if it had not
 * finished, its whole subtree, wherever those tasks are (waiting, queued, staging or
 * running).  The task is named by its workload id; the job is the latest submitted to
 * the cluster unless --job says otherwise (job files: core/client/job.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/client/client.h"
#include "core/client/job.h"
#include "core/kvs/kvs.h"
#include "core/net/conn.h"
#include "core/net/proto.h"
#include "tools/cmd/cmd.h"

static int cancel_main(int argc, char **argv)
{
    const char *cluster = NULL;
    unsigned long job = 0;
    struct opt opts[] = {
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {"job", OPT_UINT, &job, "J  the job (default: the latest submitted)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[64];
    int npos;
    int rc = cmd_parse(&cmd_cancel, argc, argv, opts, pos, 64, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (npos < 1) {
        fprintf(stderr, "jackdaw cancel: which task?\nusage: jackdaw cancel %s\n", cmd_cancel.usage);
        return EXIT_USAGE;
    }
    struct cluster cl;
    struct auth_key key;
    struct workload wl;
    char *cause = NULL, *path = NULL;
    uint32_t found = 0;
    int code = 0;
    rc = job_open_job("cancel", &cluster, (uint32_t)job, &cl, &key, &wl, &found, &path);
    if (rc)
        return rc;
    int64_t *index = calloc((size_t)npos, sizeof *index);
    for (int i = 0; i < npos && !code; i++) {
        index[i] = workload_find(&wl, pos[i]);
        if (index[i] < 0) {
            fprintf(stderr, "jackdaw cancel: job %u (%s) has no task '%s'\n", found, path, pos[i]);
            code = EXIT_BAD_INPUT;
        }
    }
    if (!code) {
        struct client *c = client_create(&cl, &key, NULL);
        rc = client_connect(c, 5000, &cause);
        if (rc == 0)
            rc = client_remove(c, found, (const int64_t *)index, (uint32_t)npos, 5000, &cause);
        if (rc < 0) {
            fprintf(stderr, "jackdaw cancel: %s\n", cause ? cause : "failed");
            code = EXIT_CLUSTER;
        } else {
            for (int i = 0; i < npos; i++)
                printf("removed task %s of job %u and its unfinished descendants\n", pos[i], found);
        }
        client_destroy(c);
    }
    free(index);
    free(cause);
    job_close_job(&cl, &wl, path);
    return code;
}

const struct cmd cmd_cancel = {
    .name = "cancel",
    .usage = "TASK... [--job J] [--cluster FILE]",
    .summary = "remove tasks and their unfinished subtrees from a running job",
    .main = cancel_main,
};
