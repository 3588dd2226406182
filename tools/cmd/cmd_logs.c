/*
 * jackdaw logs — a command task's output, while the job runs and after: its standard
 * output (WORKDIR/node-I/task-JOB-INDEX/output, the task's output object) to ours, and
 * its standard error (.../stderr, its tail up to the daemons' --task-log-bytes) to ours;
 * --stdout or --stderr for one of them.  The
 * task is named by its workload id, the job is the latest submitted unless --job.  It
 * reads the nodes' work directories, so it sees the tasks of a local cluster and of
 * hosts that share the work directory's file system; a task that ran on a host of its
 * own keeps its output there.  When a task ran more than once (its node died), the
 * latest run's output is shown.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base/xalloc.h"
#include "core/client/job.h"
#include "core/model/task.h"
#include "tools/cmd/cmd.h"

/* The newest WORKDIR/node-I/task-JOB-INDEX/output of any node I, owned; NULL when none. */
static char *find_output(const char *workdir, uint32_t job, uint32_t index, off_t *size)
{
    DIR *d = opendir(workdir);
    if (!d)
        return NULL;
    char *best = NULL;
    struct timespec best_t = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "node-", 5) != 0)
            continue;
        char *path = xasprintf("%s/%s/task-%u-%u/output", workdir, e->d_name, job, index);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            (!best || st.st_mtim.tv_sec > best_t.tv_sec ||
             (st.st_mtim.tv_sec == best_t.tv_sec && st.st_mtim.tv_nsec > best_t.tv_nsec))) {
            free(best);
            best = path;
            best_t = st.st_mtim;
            *size = st.st_size;
        } else {
            free(path);
        }
    }
    closedir(d);
    return best;
}

/* Copies the last `bytes` (0: all) of `path` to `to`; 0, or -1 after a message. */
static int show(const char *path, unsigned long bytes, FILE *to)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0; /* a task run before stderr had a file of its own */
        fprintf(stderr, "jackdaw logs: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    off_t size = fstat(fileno(f), &st) == 0 ? st.st_size : 0;
    if (bytes && size > (off_t)bytes) {
        fseeko(f, size - (off_t)bytes, SEEK_SET);
        fprintf(stderr, "jackdaw logs: the last %lu of %lld bytes of %s\n", bytes,
                (long long)size, path);
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, to);
    fflush(to);
    fclose(f);
    return 0;
}

static int logs_main(int argc, char **argv)
{
    const char *cluster = NULL;
    unsigned long job = 0, bytes = 64 * 1024;
    bool path_only = false, only_out = false, only_err = false;
    struct opt opts[] = {
        {"stdout", OPT_FLAG, &only_out, "  its standard output only"},
        {"stderr", OPT_FLAG, &only_err, "  its standard error only"},
        {"cluster", OPT_STRING, &cluster, "FILE  cluster file (default: see man)"},
        {"job", OPT_UINT, &job, "J  the job (default: the latest submitted)"},
        {"bytes", OPT_UINT, &bytes, "N  the last N bytes of each (65536; 0: all)"},
        {"path", OPT_FLAG, &path_only, "  print where the output is instead"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cmd_parse(&cmd_logs, argc, argv, opts, pos, 1, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (npos != 1) {
        fprintf(stderr, "jackdaw logs: which task?\nusage: jackdaw logs %s\n", cmd_logs.usage);
        return EXIT_USAGE;
    }
    struct cluster cl;
    struct auth_key key;
    struct workload wl;
    char *cause = NULL, *wpath = NULL;
    uint32_t found = 0;
    int code = 0;
    rc = job_open_job("logs", &cluster, (uint32_t)job, &cl, &key, &wl, &found, &wpath);
    if (rc)
        return rc;
    int64_t index = workload_find(&wl, pos[0]);
    if (index < 0) {
        fprintf(stderr, "jackdaw logs: job %u (%s) has no task '%s'\n", found, wpath, pos[0]);
        code = EXIT_BAD_INPUT;
        goto out;
    }
    off_t size = 0;
    char *out = find_output(cl.workdir, found, (uint32_t)index, &size);
    if (!out) {
        fprintf(stderr, "jackdaw logs: task '%s' of job %u has no output under %s: %s\n",
                pos[0], found, cl.workdir,
                wl.tasks[index].kind != TASK_COMMAND
                    ? "it is not a command task"
                    : "it has not started, or it ran on a host whose work directory is not "
                      "shared with this one (its output stays there)");
        code = EXIT_BAD_INPUT;
        goto out;
    }
    (void)size;
    char *err = xasprintf("%.*s/stderr", (int)(strrchr(out, '/') - out), out);
    bool want_out = !only_err || only_out, want_err = !only_out || only_err;
    if (path_only) {
        if (want_out)
            printf("%s\n", out);
        if (want_err)
            printf("%s\n", err);
    } else if ((want_out && show(out, bytes, stdout) < 0) ||
               (want_err && show(err, bytes, stderr) < 0)) {
        code = EXIT_BAD_INPUT;
    }
    free(err);
    free(out);
out:
    free(cause);
    job_close_job(&cl, &wl, wpath);
    return code;
}

const struct cmd cmd_logs = {
    .name = "logs",
    .usage = "TASK [--stdout|--stderr] [--job J] [--bytes N] [--path] [--cluster FILE]",
    .summary = "a command task's output, while its job runs and after",
    .main = logs_main,
};
