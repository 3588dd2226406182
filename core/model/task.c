/*
 * task — names of kinds and statuses, used in reports and error messages.
 */
#include "core/model/task.h"

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
