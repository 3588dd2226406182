/*
 * jobspool — see jobspool.h.  One JSON value per line, so that a job of a million
 * tasks is written and read one id at a time, never as one tree in memory.
 */
#include "trace/collector/jobspool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/base/fs.h"
#include "core/base/xalloc.h"
#include "core/model/submit_mode.h"

char *jobspool_dir(const char *workdir)
{
    return xasprintf("%s/trace-jobs", workdir);
}

/* One JSON line; false when the stream failed. */
static bool put_json(FILE *f, json_t *v)
{
    bool ok = v && json_dumpf(v, f, JSON_COMPACT | JSON_ENCODE_ANY) == 0 && fputc('\n', f) != EOF;
    json_decref(v);
    return ok;
}

int jobspool_keep(const char *dir, uint32_t job, uint32_t tasks, const char *name,
                  const char *digest, const char *mode, const char *const *ids, char **path,
                  char **cause)
{
    char *failed = NULL;
    int rc = fs_mkdirs(dir, 0700, &failed);
    if (rc < 0) {
        *cause = xasprintf("cannot create '%s': %s", failed ? failed : dir, strerror(-rc));
        free(failed);
        return rc;
    }
    char *final = xasprintf("%s/job-%" PRIu32 ".jsonl", dir, job);
    char *tmp = xasprintf("%s.tmp.%ld", final, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        rc = -errno;
        *cause = xasprintf("cannot create '%s': %s", tmp, strerror(-rc));
        if (fd >= 0)
            close(fd);
        free(tmp);
        free(final);
        return rc;
    }
    bool ok = put_json(f, json_pack("{s:I, s:I, s:s?, s:s?, s:s?}", "job", (json_int_t)job,
                                    "tasks", (json_int_t)tasks, "name", name, "digest", digest,
                                    "mode", mode && mode[0] ? mode : NULL));
    for (uint32_t i = 0; ok && i < tasks; i++)
        ok = put_json(f, json_string(ids[i] ? ids[i] : ""));
    /* Synced before the rename: the name must never point at a file still unwritten. */
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    rc = ok ? 0 : -(errno ? errno : EIO);
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, final) < 0)
        rc = -errno;
    if (rc < 0) {
        *cause = xasprintf("cannot write '%s': %s", final, strerror(-rc));
        unlink(tmp);
        free(final);
    } else {
        *path = final;
    }
    free(tmp);
    return rc;
}

/* "job-N.jsonl" with N decimal digits only. */
static bool is_kept_name(const char *s)
{
    if (strncmp(s, "job-", 4) != 0)
        return false;
    const char *p = s + 4, *digits = p;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > digits && strcmp(p, ".jsonl") == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int jobspool_list(const char *dir, char ***paths, size_t *n, char **cause)
{
    *paths = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        int rc = -errno;
        *cause = xasprintf("cannot list '%s': %s", dir, strerror(-rc));
        return rc;
    }
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_kept_name(e->d_name))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            *paths = xrealloc(*paths, cap * sizeof **paths);
        }
        (*paths)[(*n)++] = xasprintf("%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (*n)
        qsort(*paths, *n, sizeof **paths, by_name);
    return 0;
}

void jobspool_list_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

void jobspool_job_fini(struct jobspool_job *j)
{
    if (!j)
        return;
    for (uint32_t i = 0; j->ids && i < j->tasks; i++)
        free(j->ids[i]);
    free(j->ids);
    free(j->name);
    free(j->digest);
    free(j->mode);
    memset(j, 0, sizeof *j);
}

/* A string member, or NULL when absent or null; false when it is something else. */
static bool opt_string(json_t *obj, const char *key, char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_string(v))
        return false;
    *out = xstrdup(json_string_value(v));
    return true;
}

static int bad(const char *path, size_t line, const char *what, char **cause)
{
    *cause = line ? xasprintf("kept job records '%s', line %zu: %s", path, line, what)
                  : xasprintf("kept job records '%s': %s", path, what);
    return -EBADMSG;
}

int jobspool_read(const char *path, struct jobspool_job *out, char **cause)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "re");
    if (!f) {
        int rc = -errno;
        *cause = xasprintf("cannot open kept job records '%s': %s", path, strerror(-rc));
        return rc;
    }
    char *line = NULL;
    size_t line_cap = 0, lineno = 0;
    uint32_t nids = 0;
    json_int_t job = 0, tasks = -1;
    int rc = 0;
    while (rc == 0 && getline(&line, &line_cap, f) >= 0) {
        lineno++;
        json_error_t err;
        json_t *v = json_loads(line, JSON_DECODE_ANY, &err);
        if (!v) {
            rc = bad(path, lineno, err.text, cause);
        } else if (lineno == 1) {
            json_t *j = json_object_get(v, "job"), *t = json_object_get(v, "tasks");
            job = json_is_integer(j) ? json_integer_value(j) : 0;
            tasks = json_is_integer(t) ? json_integer_value(t) : -1;
            if (!json_is_object(v) || job <= 0 || job > UINT32_MAX || tasks < 0 ||
                tasks > UINT32_MAX || !opt_string(v, "name", &out->name) ||
                !opt_string(v, "digest", &out->digest) || !opt_string(v, "mode", &out->mode))
                rc = bad(path, 1, "not {\"job\": 1.., \"tasks\": 0.., \"name\", \"digest\"[, "
                         "\"mode\"]}", cause);
            else if (out->mode && !submit_mode_is_name(out->mode))
                rc = bad(path, 1, "\"mode\" is not hashed, one, roundrobin or data", cause);
        } else if (!json_is_string(v)) {
            rc = bad(path, lineno, "a task id is not a JSON string", cause);
        } else if (nids >= tasks) {
            rc = bad(path, lineno, "more ids than the job's tasks", cause);
        } else {
            /* Grown as ids come: the count on line 1 is not trusted with an allocation. */
            if ((nids & (nids - 1)) == 0)
                out->ids = xrealloc(out->ids, (nids ? 2 * (size_t)nids : 1) * sizeof *out->ids);
            out->ids[nids++] = xstrdup(json_string_value(v));
        }
        json_decref(v);
    }
    if (rc == 0 && ferror(f)) {
        rc = -EIO;
        *cause = xasprintf("cannot read kept job records '%s': %s", path, strerror(EIO));
    } else if (rc == 0 && lineno == 0) {
        rc = bad(path, 0, "empty file", cause);
    } else if (rc == 0 && nids != tasks) {
        char what[96];
        snprintf(what, sizeof what, "%" PRIu32 " ids for %" PRId64 " tasks", nids, (int64_t)tasks);
        rc = bad(path, lineno, what, cause);
    }
    free(line);
    fclose(f);
    out->job = (uint32_t)job;
    out->tasks = nids;
    if (rc < 0)
        jobspool_job_fini(out);
    else
        out->tasks = (uint32_t)tasks;
    return rc;
}
