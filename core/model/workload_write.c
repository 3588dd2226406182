/*
 * workload_write — the writer of the workload format (workload.h): one task or one object
 * a line, in the form the parser (workload.c) reads back.  Called by the generators
 * (workloads/), `jackdaw import` and the tests; no state.
 */
#include "core/model/workload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writer.  Hand-rolled rather than json_dumps: generators write 10^7 lines, and one
 * jansson object per line would cost more than the parse. */

static void put_string(FILE *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    putc('"', out);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        fwrite(run, 1, (size_t)(s - run), out);
        run = s + 1;
        putc('\\', out);
        switch (c) {
        case '"': putc('"', out); break;
        case '\\': putc('\\', out); break;
        case '\n': putc('n', out); break;
        case '\t': putc('t', out); break;
        case '\r': putc('r', out); break;
        default:
            fputs("u00", out);
            putc(hex[c >> 4], out);
            putc(hex[c & 15], out);
        }
    }
    fwrite(run, 1, (size_t)(s - run), out);
    putc('"', out);
}

/* Shortest %g form that reads back as the same double. */
static void put_double(FILE *out, double v)
{
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, out);
}

/* A task's line; its outputs are named by `wl` (NULL: the task has none). */
static int write_task(FILE *out, const struct workload_task *task, workload_name_fn parent_id,
                      workload_name_fn input_id, void *ctx, const struct workload *wl)
{
    if (!out || !task || !task->id || task->kind >= TASK_KIND_COUNT)
        return -EINVAL;
    for (uint32_t k = 0; k < task->num_outputs; k++)
        if (!wl || task->kind != TASK_COMMAND || !task->outputs ||
            task->outputs[k] >= wl->object_count || !wl->objects[task->outputs[k]].file)
            return -EINVAL;
    if (task->kind == TASK_SLEEP && !(isfinite(task->duration_s) && task->duration_s >= 0))
        return -EINVAL;
    if (task->kind == TASK_COMMAND && (!task->cmd || !task->cmd[0]))
        return -EINVAL;
    /* Nothing the reader would refuse for its size: a generator's bad parameters fail
     * here, not when the workload is run. */
    if (task->output_bytes > WORKLOAD_MAX_BYTES || strlen(task->id) > WORKLOAD_MAX_ID ||
        (task->kind == TASK_SLEEP && task->duration_s > WORKLOAD_MAX_DURATION_S) ||
        (task->kind == TASK_COMMAND && strlen(task->cmd) > WORKLOAD_MAX_CMD))
        return -ERANGE;
    if (task->timeout_s != 0 && !task_timeout_valid(task->timeout_s))
        return -EINVAL;
    if (task->retries > TASK_RETRIES_MAX || task->cores > TASK_CORES_MAX)
        return -EINVAL;
    for (uint32_t k = 0; task->input_as && k < task->num_inputs; k++)
        if (task->input_as[k] && (task->kind != TASK_COMMAND ||
                                  !task_stage_name_ok(task->input_as[k])))
            return -EINVAL;
    if ((task->num_parents && !parent_id) || (task->num_inputs && !input_id))
        return -EINVAL;

    errno = 0;
    fputs("{\"id\":", out);
    put_string(out, task->id);
    if (task->kind != TASK_NOOP)
        fprintf(out, ",\"kind\":\"%s\"", task_kind_name(task->kind));
    if (task->kind == TASK_SLEEP) {
        fputs(",\"duration_s\":", out);
        put_double(out, task->duration_s);
    }
    if (task->kind == TASK_COMMAND) {
        fputs(",\"cmd\":", out);
        put_string(out, task->cmd);
    }
    if (task->output_bytes)
        fprintf(out, ",\"output_bytes\":%llu", (unsigned long long)task->output_bytes);
    if (task->num_parents) {
        fputs(",\"parents\":[", out);
        for (uint32_t k = 0; k < task->num_parents; k++) {
            if (k)
                putc(',', out);
            put_string(out, parent_id(ctx, k));
        }
        putc(']', out);
    }
    if (task->num_inputs) {
        fputs(",\"inputs\":[", out);
        for (uint32_t k = 0; k < task->num_inputs; k++) {
            if (k)
                putc(',', out);
            if (task->input_as && task->input_as[k]) {
                fputs("{\"object\":", out);
                put_string(out, input_id(ctx, k));
                fputs(",\"as\":", out);
                put_string(out, task->input_as[k]);
                putc('}', out);
            } else {
                put_string(out, input_id(ctx, k));
            }
        }
        putc(']', out);
    }
    if (!task->stealable)
        fputs(",\"stealable\":false", out);
    if (task->timeout_s > 0) {
        fputs(",\"timeout_s\":", out);
        put_double(out, task->timeout_s);
    }
    if (task->retries || task->has_retries)
        fprintf(out, ",\"retries\":%u", (unsigned)task->retries);
    if (task->cores > 1)
        fprintf(out, ",\"cores\":%u", (unsigned)task->cores);
    if (task->num_outputs) {
        fputs(",\"outputs\":[", out);
        for (uint32_t k = 0; k < task->num_outputs; k++) {
            const struct workload_object *o = &wl->objects[task->outputs[k]];
            fputs(k ? ",{\"object\":" : "{\"object\":", out);
            put_string(out, o->id);
            fputs(",\"file\":", out);
            put_string(out, o->file);
            putc('}', out);
        }
        putc(']', out);
    }
    fputs("}\n", out);
    if (ferror(out))
        return errno ? -errno : -EIO;
    return 0;
}

/* What workload_write_task's callbacks read. */
struct named_task {
    const struct workload *wl;
    const struct workload_task *task;
};

static const char *parent_of(void *ctx, uint32_t k)
{
    const struct named_task *n = ctx;
    return n->wl->tasks[n->task->parents[k]].id;
}

static const char *input_of(void *ctx, uint32_t k)
{
    const struct named_task *n = ctx;
    return n->wl->objects[n->task->inputs[k]].id;
}

int workload_write_task(FILE *out, const struct workload_task *task, const struct workload *wl)
{
    if (!task)
        return -EINVAL;
    for (uint32_t k = 0; k < task->num_parents; k++)
        if (!wl || !task->parents || task->parents[k] >= wl->count)
            return -EINVAL;
    for (uint32_t k = 0; k < task->num_inputs; k++)
        if (!wl || !task->inputs || !wl->objects || task->inputs[k] >= wl->object_count)
            return -EINVAL;
    struct named_task n = {.wl = wl, .task = task};
    return write_task(out, task, parent_of, input_of, &n, wl);
}

int workload_write_task_named(FILE *out, const struct workload_task *task,
                              workload_name_fn parent_id, workload_name_fn input_id, void *ctx)
{
    return write_task(out, task, parent_id, input_id, ctx, NULL);
}

int workload_write_object(FILE *out, const struct workload_object *object)
{
    if (!out || !object || !object->id || !object->id[0] || object->producer)
        return -EINVAL;
    if (object->node < 0 && object->node != WORKLOAD_NODE_SPREAD)
        return -EINVAL;
    if (object->bytes > WORKLOAD_MAX_BYTES || strlen(object->id) > WORKLOAD_MAX_ID ||
        (object->path && (!object->path[0] || strlen(object->path) > WORKLOAD_MAX_PATH)))
        return -ERANGE; /* the reader would refuse it */
    errno = 0;
    fputs("{\"object\":", out);
    put_string(out, object->id);
    fprintf(out, ",\"bytes\":%llu", (unsigned long long)object->bytes);
    /* As the reader resolved it (relative to the workload's directory then): a file
     * written elsewhere still names the same data when the path was absolute. */
    if (object->path) {
        fputs(",\"path\":", out);
        put_string(out, object->path);
    }
    if (object->node == WORKLOAD_NODE_SPREAD)
        fputs(",\"node\":\"spread\"}\n", out);
    else
        fprintf(out, ",\"node\":%d}\n", (int)object->node);
    if (ferror(out))
        return errno ? -errno : -EIO;
    return 0;
}
