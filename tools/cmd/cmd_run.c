/*
 * jackdaw run — launch a private local cluster, submit a workload, follow it with a
 * progress line, print the summary and stop the cluster: the one command most users
 * need.  The workload is checked before anything starts.
 */
#include <errno.h>
#include <limits.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/base/sigcatch.h"
#include "core/base/xalloc.h"
#include "core/client/dataopts.h"
#include "core/client/hostopts.h"
#include "core/client/job.h"
#include "core/client/launcher.h"
#include "core/model/hostfile.h"
#include "core/client/wfopts.h"
#include "core/model/wfcommons.h"
#include "core/runtime/node.h"
#include "tools/cmd/cmd.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}


/*
 * Where a run's private cluster lives: /dev/shm when what its stores may hold fits well
 * in it, else /tmp.  The stores hold the workload's data once, plus on every node the
 * cached copies (at most the cache's cap each) and the objects kept in memory, so a
 * data-heavy run on tmpfs holds its data twice in RAM and more: 1000Genome at
 * --data-scale 0.3 (13 GB of files) had the kernel's OOM killer end daemons one by one.
 */
static const char *run_dir_parent(const struct workload *wl, uint32_t nodes,
                                  const struct dataopts *data)
{
    if (access("/dev/shm", W_OK | X_OK) != 0)
        return "/tmp";
    uint64_t bytes = workload_data_bytes(wl);
    if (bytes == 0)
        return "/dev/shm";
    struct node_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char *cause = NULL;
    if (dataopts_apply(data, &cfg, &cause) < 0) {
        free(cause);
        return "/tmp";
    }
    uint64_t copy = cfg.cache && cfg.cache_bytes < bytes ? cfg.cache_bytes : bytes;
    double need = (double)bytes + (double)(nodes ? nodes : 1) * (double)copy;
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) != 0)
        return "/tmp";
    double room = (double)fs.f_bavail * (double)fs.f_frsize;
    return need <= room / 4 ? "/dev/shm" : "/tmp";
}

static int run_main(int argc, char **argv)
{
    /* ULONG_MAX: not given (then the cores); an explicit 0 is refused. */
    unsigned long nodes = ULONG_MAX;
    double timeout = 0;
    const char *speeds = NULL, *slots_text = NULL, *mode = "hashed", *records = NULL,
               *level = "warn", *keep_dir = NULL, *trace = NULL, *task_timeout_text = NULL,
               *retries_text = NULL, *outputs = NULL, *keep = NULL;
    bool json = false, quiet = false, no_trace = false;
    struct dataopts data = {0};
    struct hostopts hosts = {0};
    struct wfcommons_options scale = {0};
    struct opt opts[] = {
        DATAOPTS_OPTS(&data),
        {"nodes", OPT_UINT, &nodes, "N  number of node daemons (default: the machine's cores)"},
        {"slots", OPT_STRING, &slots_text,
         "S|cores  executor slots per node (default: the machine's cores; 1 with a mix)"},
        {"speeds", OPT_STRING, &speeds,
         "LIST|MIX  speed factors in (0,1], cycled: 1,0.5; or a mix of paper 001: C1..C5"},
        {"mode", OPT_STRING, &mode, "M  hashed | one | roundrobin | data (default hashed)"},
        {"records", OPT_STRING, &records, "FILE  one JSON line per task end"},
        {"json", OPT_FLAG, &json, "  summary as one JSON object on stdout"},
        {"quiet", OPT_FLAG, &quiet, "  no progress line"},
        {"timeout", OPT_DOUBLE, &timeout, "S  give up after S seconds (exit status 6)"},
        {"task-timeout", OPT_STRING, &task_timeout_text,
         "S  time limit of each task without timeout_s (default: none)"},
        {"retries", OPT_STRING, &retries_text,
         "N  runs again after a failed run, for tasks without retries (default 0)"},
        {"outputs", OPT_STRING, &outputs,
         "DIR  fetch the final outputs (of tasks no task reads) into DIR at the end"},
        {"keep-object", OPT_STRING, &keep, "ID,...  with --outputs: these too (tasks or objects)"},
        WFOPTS_OPTS(&scale),
        {"keep", OPT_STRING, &keep_dir, "DIR  keep the cluster's files (logs, task dirs) in DIR"},
        {"log-level", OPT_STRING, &level, "L  daemons' log level (default warn)"},
        {"trace", OPT_STRING, &trace, "FILE  trace file (default: $JACKDAW_TRACE_DIR or ., jackdaw-RUNID.avro)"},
        {"no-trace", OPT_FLAG, &no_trace, "  no collector, no trace"},
        HOSTOPTS_OPTS(&hosts),
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_run, argc, argv, opts, pos, 1, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    bool remote = hostopts_remote(&hosts);
    if (hostopts_finish(&hosts, "run", nodes != ULONG_MAX || speeds || slots_text))
        return EXIT_USAGE;
    if (!remote && nodes == ULONG_MAX)
        nodes = launcher_default_nodes();
    else if (remote && nodes == ULONG_MAX)
        nodes = 0; /* the hostfile or the allocation says */
    if (npos != 1 || (!remote && (nodes == 0 || nodes > 4096))) {
        fprintf(stderr, "jackdaw run: %s\nusage: jackdaw run %s\n",
                npos != 1 ? "one workload is required" : "--nodes N: 1..4096", cmd_run.usage);
        return EXIT_USAGE;
    }
    if (dataopts_finish(&data, "run"))
        return EXIT_USAGE;
    double task_timeout = 0;
    if (job_parse_task_timeout("run", task_timeout_text, &task_timeout))
        return EXIT_USAGE;
    int retries;
    if (job_parse_retries("run", retries_text, &retries))
        return EXIT_USAGE;
    int m = submit_mode_parse(mode);
    if (m < 0) {
        fprintf(stderr, "jackdaw run: unknown --mode '%s' (hashed, one, roundrobin, data)\n", mode);
        return EXIT_USAGE;
    }
    char *cause = NULL;
    double *check = xmalloc((nodes ? nodes : 1) * sizeof *check);
    rc = launcher_parse_speeds(speeds, check, (uint32_t)nodes, &cause);
    free(check);
    uint32_t slots = 0;
    bool slots_cores = false;
    if (rc == 0)
        rc = launcher_parse_slots(slots_text, speeds, &slots, &slots_cores, &cause);
    if (rc < 0) {
        fprintf(stderr, "jackdaw run: %s\n", cause);
        free(cause);
        return EXIT_USAGE;
    }
    struct workload wl;
    if (wfopts_finish(&scale, "run"))
        return EXIT_USAGE;
    if (wfcommons_load_any(&wl, pos[0], &scale, &cause) < 0) {
        fprintf(stderr, "jackdaw run: %s\n", cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    /* A hostfile says how many nodes there will be; an allocation is checked once the
     * daemons run. */
    if (hosts.hostfile) {
        struct hostfile hf;
        if (hostfile_load(&hf, hosts.hostfile, &cause) < 0) {
            fprintf(stderr, "jackdaw run: %s\n", cause);
            free(cause);
            workload_fini(&wl);
            return EXIT_BAD_INPUT;
        }
        nodes = hf.count;
        hostfile_fini(&hf);
    }
    if (nodes && workload_check_nodes(&wl, (uint32_t)nodes, &cause) < 0) {
        fprintf(stderr, "jackdaw run: %s\n", cause);
        free(cause);
        workload_fini(&wl);
        return EXIT_BAD_INPUT;
    }
    if (task_timeout > 0)
        workload_default_timeout(&wl, task_timeout);
    if (retries >= 0)
        workload_default_retries(&wl, (uint32_t)retries);
    if (keep && !outputs) {
        fprintf(stderr, "jackdaw run: --keep-object says what --outputs DIR gets besides the "
                        "final outputs: give --outputs\n");
        workload_fini(&wl);
        return EXIT_USAGE;
    }
    if (job_check_keep("run", &wl, keep)) {
        workload_fini(&wl);
        return EXIT_BAD_INPUT;
    }
    char *dir;
    if (keep_dir) {
        dir = xstrdup(keep_dir);
    } else {
        /* The private cluster's files (task work directories, logs) live only as long
         * as the run: memory-backed /dev/shm spares the disk two inode creations per
         * command task, which otherwise cap the spawn rate, unless the workload's data
         * would fill memory (run_dir_parent).  TMPDIR overrides; --keep puts them where
         * they should stay. */
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp)
            tmp = run_dir_parent(&wl, (uint32_t)nodes, &data);
        dir = xasprintf("%s/jackdaw-run-XXXXXX", tmp);
        if (!mkdtemp(dir)) {
            fprintf(stderr, "jackdaw run: cannot create a directory '%s': %s\n", dir,
                    strerror(errno));
            free(dir);
            workload_fini(&wl);
            return EXIT_INTERNAL;
        }
    }
    char *cluster_path = xasprintf("%s/cluster.json", dir);
    char digest[33];
    job_workload_digest(pos[0], digest);
    struct launch_options lo = {
        .nodes = (uint32_t)nodes, .slots = slots, .slots_cores = slots_cores, .speeds = speeds,
        .cluster_path = cluster_path, .die_with_parent = true, .node_args = data.words,
        .node_nargs = data.nwords, .log_level = level, .trace = !no_trace,
        .trace_path = trace, .workload_name = wl.name,
        .workload_digest = digest[0] ? digest : NULL,
        /* The trace outlives the run's private directory: it goes where the user is, or
         * where $JACKDAW_TRACE_DIR says. */
        .trace_dir = getenv("JACKDAW_TRACE_DIR") && *getenv("JACKDAW_TRACE_DIR")
                         ? getenv("JACKDAW_TRACE_DIR") : ".",
    };
    hostopts_apply(&hosts, &lo);
    struct cluster cl;
    /* A cluster this command started is stopped before exiting; job_submit checks the
     * flag too. */
    sigcatch_install(true);
    rc = launcher_start(&lo, &cl, &cause);
    int code;
    if (rc == 0 && hosts.slurm && workload_check_nodes(&wl, cl.count, &cause) < 0) {
        fprintf(stderr, "jackdaw run: %s\n", cause);
        code = EXIT_BAD_INPUT;
        char *ignore = NULL;
        launcher_stop(&cl, cluster_path, 5000, &ignore);
        free(ignore);
        cluster_fini(&cl);
    } else if (rc < 0) {
        fprintf(stderr, "jackdaw run: %s\n", cause ? cause : "cannot start the cluster");
        code = EXIT_CLUSTER;
    } else {
        struct job_options o = {
            .cluster = &cl, .cluster_path = cluster_path, .workload_path = pos[0], .wl = &wl, .mode = (enum submit_mode)m,
            .wait = true, .json = json, .quiet = quiet, .records = records, .timeout_s = timeout, .scale = &scale,
            .outputs = outputs, .keep = keep,
        };
        code = job_submit("run", &o);
        char *ignore = NULL;
        launcher_stop(&cl, cluster_path, 5000, &ignore);
        free(ignore);
        /* After the stop: the collector has written the last blocks by now. */
        if (cl.collector.trace_path && !json)
            printf("  trace            %s\n", cl.collector.trace_path);
        cluster_fini(&cl);
    }
    if (!keep_dir)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (sigcatch_pending() && code != EXIT_INTERRUPTED) {
        fprintf(stderr, "jackdaw run: interrupted by signal %d\n", sigcatch_pending());
        code = EXIT_INTERRUPTED;
    }
    free(cause);
    free(cluster_path);
    free(dir);
    workload_fini(&wl);
    return code;
}

const struct cmd cmd_run = {
    .name = "run",
    .usage = "WORKLOAD [--nodes N] [--slots S|cores] [--speeds LIST|C1..C5] | --hostfile FILE "
             "[--rsh CMD] | --slurm [--mode M] [--policy P] [--task-timeout S] [--json] "
             "[--outputs DIR [--keep-object ID,...]]",
    .summary = "launch a cluster, run a workload, print the summary, stop",
    .main = run_main,
};
