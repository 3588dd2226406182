/*
 * task — names of kinds and statuses, used in reports and error messages, and the rule
 * for the names a command's inputs take in its directory.
 */
#include "core/model/task.h"

#include <string.h>

bool task_stage_name_ok(const char *name)
{
    size_t len = name ? strlen(name) : 0;
    if (len == 0 || len > TASK_STAGE_NAME_MAX || name[0] == '/')
        return false;
    /* The daemon's own entries in a task directory. */
    if (strcmp(name, "output") == 0 || strcmp(name, "inputs") == 0 ||
        strncmp(name, "inputs/", 7) == 0)
        return false;
    for (const char *p = name; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false; /* empty, . or .. : it could leave the directory or clash */
        p += n;
        if (*p == '/' && !*++p)
            return false; /* a trailing slash names a directory */
    }
    return true;
}

const char *task_kind_name(enum task_kind kind)
{
    static const char *names[] = {"noop", "sleep", "command"};
    return (unsigned)kind < TASK_KIND_COUNT ? names[kind] : "unknown";
}

const char *task_status_name(enum task_status status)
{
    static const char *names[] = {"waiting", "ready", "running", "done", "failed", "cancelled"};
    return (unsigned)status < TASK_STATUS_COUNT ? names[status] : "unknown";
}

bool task_status_final(enum task_status status)
{
    return status == TASK_DONE || status == TASK_FAILED || status == TASK_CANCELLED;
}
