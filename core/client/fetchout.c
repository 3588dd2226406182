/*
 * fetchout — see fetchout.h.
 */
#include "core/client/fetchout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/fs.h"
#include "core/base/xalloc.h"
#include "core/client/client.h"
#include "core/model/workload.h"

char *fetchout_path(const char *dir, const char *id)
{
    /* "out/" and "out" name one directory: no doubled slash in what is printed. */
    int dlen = (int)strlen(dir);
    while (dlen > 0 && dir[dlen - 1] == '/')
        dlen--; /* "/" becomes "", so its files are "/ID" */
    if (task_stage_name_ok(id))
        return xasprintf("%.*s/%s", dlen, dir, id);
    char *safe = xstrdup(id);
    for (char *p = safe; *p; p++)
        if (*p == '/')
            *p = '_';
    /* "." and ".." (and what is left of an id made only of slashes) name no file. */
    char *path = strcmp(safe, ".") == 0 || strcmp(safe, "..") == 0 || !safe[0]
                     ? xasprintf("%.*s/_%s", dlen, dir, safe)
                     : xasprintf("%.*s/%s", dlen, dir, safe);
    free(safe);
    return path;
}

int fetchout_one(struct client *c, const struct workload *wl, uint32_t job, const char *id,
                 const char *dir, bool empty_if_absent, uint64_t *bytes, int timeout_ms,
                 char **cause)
{
    uint64_t key;
    int64_t i = workload_find(wl, id);
    if (i >= 0) {
        key = task_key(job, (uint32_t)i);
    } else if ((i = workload_find_object(wl, id)) >= 0) {
        key = task_object_key(job, (uint32_t)i);
    } else {
        *cause = xasprintf("'%s': the job's workload (%s) has no such task or object", id,
                           wl->name);
        return -ENOENT;
    }
    char *path = fetchout_path(dir, id);
    char *slash = strrchr(path, '/');
    int rc = 0;
    if (slash && slash != path) {
        *slash = '\0';
        rc = fs_mkdirs(path, 0755, NULL);
        if (rc < 0)
            *cause = xasprintf("'%s': cannot create '%s': %s", id, path, strerror(-rc));
        *slash = '/';
    }
    char *tmp = xasprintf("%s.part", path);
    int fd = rc == 0 ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    if (rc == 0 && fd < 0) {
        rc = -errno;
        *cause = xasprintf("'%s': cannot write '%s': %s", id, tmp, strerror(errno));
    }
    if (rc == 0) {
        char *why = NULL;
        rc = client_fetch(c, key, fd, bytes, timeout_ms, &why);
        if (rc == -ENOENT && empty_if_absent) {
            rc = 0; /* done with an empty output: nothing was kept */
            free(why);
            why = NULL;
        }
        if (close(fd) < 0 && rc == 0) {
            rc = -errno;
            why = xasprintf("cannot write '%s': %s", tmp, strerror(errno));
        }
        if (rc == 0 && rename(tmp, path) < 0) {
            rc = -errno;
            why = xasprintf("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
        }
        if (rc < 0) {
            unlink(tmp);
            *cause = rc == -ENOENT
                         ? xasprintf("'%s': no node holds it (a task not done yet, or a "
                                     "command whose output was empty)", id)
                         : xasprintf("'%s': %s", id, why ? why : strerror(-rc));
        }
        free(why);
    }
    free(tmp);
    free(path);
    return rc;
}
