/*
 * jackdaw get — copies objects of a job out of a running cluster: a task's output or a
 * workload's initial object, each into DIR/ID (core/client/fetchout).  The job is the
 * latest submitted to the cluster unless --job says otherwise (job files:
 * core/client/job.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/fs.h"
#include "core/client/client.h"
#include "core/client/fetchout.h"
#include "core/client/job.h"
#include "tools/cmd/cmd.h"

static int get_main(int argc, char **argv)
{
    const char *cluster = NULL, *dir = ".";
    unsigned long job = 0;
    struct opt opts[] = {
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {"job", OPT_UINT, &job, "J  the job (default: the latest submitted)"},
        {"output", OPT_STRING, &dir, "DIR  where the files go (-o; default: .)"},
        {NULL, 0, NULL, NULL},
    };
    static const char *const shorts[][2] = {{"-o", "--output"}};
    char **args = cmd_short_options(argc, argv, opts, shorts, 1);
    const char *pos[256];
    int npos;
    int rc = cmd_parse(&cmd_get, argc, args, opts, pos, 256, &npos);
    free(args);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (npos < 1) {
        fprintf(stderr, "jackdaw get: which object or task?\nusage: jackdaw get %s\n",
                cmd_get.usage);
        return EXIT_USAGE;
    }
    struct cluster cl;
    struct auth_key key;
    struct workload wl;
    char *cause = NULL, *path = NULL;
    uint32_t found = 0;
    int code = 0;
    rc = job_open_job("get", &cluster, (uint32_t)job, &cl, &key, &wl, &found, &path);
    if (rc)
        return rc;
    rc = fs_mkdirs(dir, 0755, NULL);
    if (rc < 0) {
        fprintf(stderr, "jackdaw get: cannot create '%s': %s\n", dir, strerror(-rc));
        code = EXIT_BAD_INPUT;
        goto out;
    }
    struct client *c = client_create(&cl, &key, NULL);
    rc = client_connect(c, 5000, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw get: %s\n", cause ? cause : "cannot reach the cluster");
        code = EXIT_CLUSTER;
    }
    for (int i = 0; i < npos && rc >= 0; i++) {
        uint64_t bytes = 0;
        char *why = NULL;
        if (fetchout_one(c, &wl, found, pos[i], dir, false, &bytes, 60000, &why) < 0) {
            fprintf(stderr, "jackdaw get: job %u: %s\n", found, why);
            code = EXIT_RUN_FAILED;
        } else {
            char *to = fetchout_path(dir, pos[i]);
            printf("%s  %llu bytes\n", to, (unsigned long long)bytes);
            free(to);
        }
        free(why);
    }
    client_destroy(c);
out:
    free(cause);
    job_close_job(&cl, &wl, path);
    return code;
}

const struct cmd cmd_get = {
    .name = "get",
    .usage = "ID... [-o DIR] [--job J] [--cluster FILE]",
    .summary = "copy task outputs or data objects of a job out of the cluster",
    .main = get_main,
};
