/*
 * jackdaw attach — follow a job already running, from another process than the one that
 * submitted it (or after Ctrl-C of submit --wait): the same progress, summary, records
 * and exit codes as submit --wait.  The work is job_attach's (core/client/job.c); this
 * file parses the command line.  `submit --follow JOB` reaches the same function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/client/job.h"
#include "tools/cmd/cmd.h"

/* A job number as submit prints it: 1 to 2^31 - 1. */
static int parse_job(const char *who, const char *text, uint32_t *job)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || end == text || *end || v == 0 || v > 0x7fffffffUL || text[0] == '-') {
        fprintf(stderr, "jackdaw %s: job '%s': must be a job number as submit printed it\n",
                who, text);
        return EXIT_USAGE;
    }
    *job = (uint32_t)v;
    return 0;
}

int cmd_attach_job(const char *who, const char *cluster, const char *job_text, bool json,
                   bool quiet, const char *records, double timeout)
{
    uint32_t job = 0;
    if (job_text && parse_job(who, job_text, &job))
        return EXIT_USAGE;
    struct cluster cl;
    struct auth_key key;
    int rc = job_open_cluster(who, &cluster, &cl, &key);
    if (rc)
        return rc;
    struct attach_options o = {.cluster = &cl, .cluster_path = cluster, .job = job,
                               .json = json, .quiet = quiet, .records = records,
                               .timeout_s = timeout};
    rc = job_attach(who, &o);
    cluster_fini(&cl);
    return rc;
}

static int attach_main(int argc, char **argv)
{
    const char *cluster = NULL, *records = NULL;
    bool json = false, quiet = false;
    double timeout = 0;
    struct opt opts[] = {
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {"json", OPT_FLAG, &json, "  summary as one JSON object"},
        {"quiet", OPT_FLAG, &quiet, "  no progress line"},
        {"records", OPT_STRING, &records, "FILE  one JSON line per task end"},
        {"timeout", OPT_DOUBLE, &timeout, "S  give up after S seconds (exit status 6)"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_attach, argc, argv, opts, pos, 1, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    return cmd_attach_job("attach", cluster, npos ? pos[0] : NULL, json, quiet, records,
                          timeout);
}

const struct cmd cmd_attach = {
    .name = "attach",
    .usage = "[JOB] [--cluster FILE] [--records FILE] [--quiet] [--json] [--timeout S]",
    .summary = "follow a running job (the latest submitted without JOB) to its end",
    .main = attach_main,
};
