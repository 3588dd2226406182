/*
 * wfcommons — see wfcommons.h.
 *
 * The whole instance is parsed with jansson first (an instance is one JSON object of a
 * few MB, unlike a workload of 10^7 lines), then checked in passes that each need the
 * previous one complete: files, task ids, runtimes, then each task's parents and files
 * by index, then `children` against the edges, then sizes and limits, and only then is
 * any text written, so a refused instance produces nothing.  Ids are looked up through
 * two jansson objects used as hash maps; nothing recurses.
 *
 * Checks here repeat some of workload_parse's on purpose: its messages name lines of
 * the generated text, which mean nothing to whoever holds the instance, and the
 * instance's own words (inputFiles, runtimeInSeconds, time_scale) say what to fix.
 */
#include "core/model/wfcommons.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/text.h"
#include "core/base/xalloc.h"

#define MIGRATE_HINT "convert older instances with wfformat's tools/wfcommons-migrate-instance.py"

/* Task and file indices are uint32 and stamps hold index + 1. */
#define MAX_ENTRIES (UINT32_MAX - 1)

/* A message quotes at most this many outside strings at once. */
#define SHOWN_SLOTS 4

struct file {
    const char *id;         /* borrowed from the document */
    uint64_t size;          /* sizeInBytes, unscaled */
    uint32_t producer;      /* index + 1 of the task that writes it; 0 for none */
    uint32_t mark;          /* index + 1 of the last task seen reading it */
    bool read;
    bool object;            /* an initial object: read, never written */
    uint64_t bytes;         /* scaled; objects only */
};

struct task {
    const char *id;         /* borrowed from the document */
    json_t *parents;        /* borrowed; an array of task ids */
    json_t *children;       /* borrowed; an array of task ids */
    json_t *inputs;         /* borrowed; an array of file ids, or NULL */
    json_t *outputs;        /* borrowed; an array of file ids, or NULL */
    double duration_s;      /* scaled; negative until joined with its execution entry */
    size_t first_parent;    /* this task's parents start here in conv.parent_index */
    uint32_t num_inputs;    /* its inputs that are initial objects */
    uint64_t output_bytes;  /* scaled */
    uint32_t cores;         /* its execution entry's coreCount, rounded up; 1 without */
};

struct conv {
    const char *name;           /* borrowed; labels errors */
    double time_scale, size_scale;
    const char *command;        /* borrowed; the command template, or NULL */
    json_t *doc;                /* owned */
    json_t *spec_tasks;         /* borrowed from doc */
    json_t *spec_files;         /* borrowed from doc; NULL when absent */
    json_t *exec_tasks;         /* borrowed from doc */
    json_t *task_map;           /* owned; task id -> index */
    json_t *file_map;           /* owned; file id -> index */
    struct task *tasks;         /* owned, task_count entries in the instance's order */
    uint32_t task_count;
    struct file *files;         /* owned, file_count entries in the instance's order */
    uint32_t file_count;
    uint32_t *parent_index;     /* owned; every task's parents, back to back */
    uint32_t *mark;             /* owned; per task, stamps of index + 1 */
    uint32_t *seen;             /* owned; per task, stamps of index + 1 */
    uint32_t *num_children;     /* owned; per task, children by the parents lists */
    size_t *first_child;        /* owned; per task, its children start here in child_index */
    uint32_t *child_index;      /* owned; children by the parents lists, back to back */
    char *shown[SHOWN_SLOTS];   /* owned; the strings the next message quotes */
    unsigned next_shown;
    char *cause;                /* owned; the first error */
};

static int fail(struct conv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct conv *c, const char *fmt, ...)
{
    if (c->cause)
        return -EINVAL;
    va_list ap, copy;
    va_start(ap, fmt);
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char *reason = xmalloc(n > 0 ? (size_t)n + 1 : 1);
    vsnprintf(reason, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
    va_end(ap);
    c->cause = xasprintf("%s: %s", c->name, reason);
    free(reason);
    return -EINVAL;
}

/* `s` cut for a message (ids and versions come from outside and may be megabytes);
 * the copy lives until SHOWN_SLOTS more quotes are made. */
static const char *quote(struct conv *c, const char *s)
{
    char **slot = &c->shown[c->next_shown++ % SHOWN_SLOTS];
    free(*slot);
    *slot = text_clip(s, strlen(s), TEXT_SHOWN);
    return *slot;
}

static void conv_fini(struct conv *c)
{
    json_decref(c->doc);
    json_decref(c->task_map);
    json_decref(c->file_map);
    free(c->tasks);
    free(c->files);
    free(c->parent_index);
    free(c->mark);
    free(c->seen);
    free(c->num_children);
    free(c->first_child);
    free(c->child_index);
    for (unsigned i = 0; i < SHOWN_SLOTS; i++)
        free(c->shown[i]);
    free(c->cause);
}

/* Index of `id` in a map, or -1. */
static int64_t lookup(json_t *map, const char *id)
{
    json_t *v = json_object_get(map, id);
    return v ? (int64_t)json_integer_value(v) : -1;
}

static int scale_of(struct conv *c, const char *what, double given, double *scale)
{
    if (!(isfinite(given) && given >= 0))
        return fail(c, "%s %g must be a finite number >= 0 (0 means 1)", what, given);
    *scale = given == 0 ? 1.0 : given;
    return 0;
}

/* round(bytes * scale) in *out, or false when it is beyond WORKLOAD_MAX_BYTES.  Above
 * 2^53 the product is inexact, but such sizes fit the limit only when scaled down by
 * many orders of magnitude, which leaves an error below one byte. */
static bool scale_bytes(uint64_t bytes, double scale, uint64_t *out, double *scaled)
{
    *scaled = round((double)bytes * scale);
    if (!(*scaled <= (double)WORKLOAD_MAX_BYTES))
        return false;
    *out = (uint64_t)*scaled;
    return true;
}

/* ------------------------------------------------------------------------------------ */
/* Pass one: the document's frame, the files, the task ids, the runtimes. */

enum want { WANT_OBJECT, WANT_ARRAY };

/* obj[key] when present with the wanted type; NULL after a refusal naming `path`. */
static json_t *member(struct conv *c, json_t *obj, const char *key, const char *path,
                      enum want want)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        fail(c, "missing %s", path);
    else if (want == WANT_OBJECT && !json_is_object(v))
        fail(c, "%s must be an object", path);
    else if (want == WANT_ARRAY && !json_is_array(v))
        fail(c, "%s must be an array", path);
    else
        return v;
    return NULL;
}

static int read_frame(struct conv *c, const char *text, size_t len)
{
    json_error_t err;
    /* Duplicate keys would make "the" runtime or "the" parents a guess. */
    c->doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!c->doc)
        return fail(c, "malformed JSON at line %d, column %d: %s", err.line, err.column,
                    err.text);
    if (!json_is_object(c->doc))
        return fail(c, "not a JSON object (a WfCommons instance is one object)");
    json_t *version = json_object_get(c->doc, "schemaVersion");
    if (!version)
        return fail(c, "missing schemaVersion (not a WfCommons instance?)");
    if (!json_is_string(version))
        return fail(c, "schemaVersion is not the string \"1.5\" (" MIGRATE_HINT ")");
    if (strcmp(json_string_value(version), "1.5") != 0)
        return fail(c, "schemaVersion '%s' is not 1.5 (" MIGRATE_HINT ")",
                    quote(c, json_string_value(version)));
    json_t *workflow = member(c, c->doc, "workflow", "workflow", WANT_OBJECT);
    json_t *spec = workflow ? member(c, workflow, "specification", "workflow.specification",
                                     WANT_OBJECT)
                            : NULL;
    if (spec)
        c->spec_tasks = member(c, spec, "tasks", "workflow.specification.tasks", WANT_ARRAY);
    if (!c->spec_tasks)
        return -EINVAL;
    if (json_array_size(c->spec_tasks) == 0)
        return fail(c, "workflow.specification.tasks is empty (no tasks)");
    /* Optional in the schema: an instance whose tasks use no files has none. */
    c->spec_files = json_object_get(spec, "files");
    if (c->spec_files && !json_is_array(c->spec_files))
        return fail(c, "workflow.specification.files must be an array");
    /* Optional in the schema too, but the runtimes are there. */
    if (!json_object_get(workflow, "execution"))
        return fail(c, "missing workflow.execution (the tasks' runtimes)");
    json_t *exec = member(c, workflow, "execution", "workflow.execution", WANT_OBJECT);
    if (exec)
        c->exec_tasks = member(c, exec, "tasks", "workflow.execution.tasks", WANT_ARRAY);
    return c->exec_tasks ? 0 : -EINVAL;
}

/* The id string of entry `i` of `list` (named `path`), or NULL after a refusal. */
static const char *entry_id(struct conv *c, json_t *entry, const char *path, size_t i)
{
    if (!json_is_object(entry)) {
        fail(c, "%s[%zu] must be an object", path, i);
        return NULL;
    }
    json_t *id = json_object_get(entry, "id");
    if (!id)
        fail(c, "%s[%zu]: missing id", path, i);
    else if (!json_is_string(id))
        fail(c, "%s[%zu]: id must be a string", path, i);
    else if (json_string_length(id) == 0)
        fail(c, "%s[%zu]: id must not be empty", path, i);
    else
        return json_string_value(id);
    return NULL;
}

static int read_files(struct conv *c)
{
    static const char path[] = "workflow.specification.files";
    size_t n = c->spec_files ? json_array_size(c->spec_files) : 0;
    if (n > MAX_ENTRIES)
        return fail(c, "too many files (at most %u)", (unsigned)MAX_ENTRIES);
    c->files = xcalloc(n ? n : 1, sizeof *c->files);
    c->file_map = json_object();
    if (!c->file_map)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *entry = json_array_get(c->spec_files, i);
        const char *id = entry_id(c, entry, path, i);
        if (!id)
            return -EINVAL;
        json_t *size = json_object_get(entry, "sizeInBytes");
        if (!size)
            return fail(c, "file '%s': missing sizeInBytes", quote(c, id));
        if (!json_is_integer(size) || json_integer_value(size) < 0)
            return fail(c, "file '%s': sizeInBytes must be an integer >= 0", quote(c, id));
        if (json_object_get(c->file_map, id))
            return fail(c, "file '%s': listed twice in %s", quote(c, id), path);
        if (json_object_set_new(c->file_map, id, json_integer((json_int_t)i)) < 0)
            return -ENOMEM;
        c->files[i] = (struct file){.id = id, .size = (uint64_t)json_integer_value(size)};
        c->file_count++;
    }
    return 0;
}

/* `key` of task `id`: an array of strings (`what`), or absent when `optional`. */
static int string_array(struct conv *c, json_t *entry, const char *id, const char *key,
                        const char *what, bool optional, json_t **out)
{
    json_t *v = json_object_get(entry, key);
    *out = v;
    if (!v)
        return optional ? 0 : fail(c, "task '%s': missing %s", quote(c, id), key);
    if (!json_is_array(v))
        return fail(c, "task '%s': %s must be an array of %s", quote(c, id), key, what);
    for (size_t k = 0; k < json_array_size(v); k++)
        if (!json_is_string(json_array_get(v, k)))
            return fail(c, "task '%s': %s[%zu] must be a string (%s)", quote(c, id), key, k,
                        what);
    return 0;
}

static int read_tasks(struct conv *c)
{
    static const char path[] = "workflow.specification.tasks";
    size_t n = json_array_size(c->spec_tasks);
    if (n > MAX_ENTRIES)
        return fail(c, "too many tasks (at most %u)", (unsigned)MAX_ENTRIES);
    c->tasks = xcalloc(n, sizeof *c->tasks);
    c->task_map = json_object();
    if (!c->task_map)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *entry = json_array_get(c->spec_tasks, i);
        const char *id = entry_id(c, entry, path, i);
        if (!id)
            return -EINVAL;
        size_t id_len = strlen(id);
        if (id_len > WORKLOAD_MAX_ID)
            return fail(c, "task '%s': id is %zu bytes, beyond the limit of %u",
                        quote(c, id), id_len, WORKLOAD_MAX_ID);
        if (json_object_get(c->task_map, id))
            return fail(c, "task '%s': listed twice in %s", quote(c, id), path);
        if (json_object_set_new(c->task_map, id, json_integer((json_int_t)i)) < 0)
            return -ENOMEM;
        struct task *t = &c->tasks[i];
        *t = (struct task){.id = id, .duration_s = -1, .cores = 1};
        c->task_count++;
        int rc = string_array(c, entry, id, "parents", "task ids", false, &t->parents);
        if (rc == 0)
            rc = string_array(c, entry, id, "children", "task ids", false, &t->children);
        if (rc == 0)
            rc = string_array(c, entry, id, "inputFiles", "file ids", true, &t->inputs);
        if (rc == 0)
            rc = string_array(c, entry, id, "outputFiles", "file ids", true, &t->outputs);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int read_runtimes(struct conv *c)
{
    static const char path[] = "workflow.execution.tasks";
    for (size_t i = 0; i < json_array_size(c->exec_tasks); i++) {
        json_t *entry = json_array_get(c->exec_tasks, i);
        const char *id = entry_id(c, entry, path, i);
        if (!id)
            return -EINVAL;
        int64_t at = lookup(c->task_map, id);
        if (at < 0)
            return fail(c, "task '%s': in %s but not in workflow.specification.tasks",
                        quote(c, id), path);
        struct task *t = &c->tasks[at];
        if (t->duration_s >= 0)
            return fail(c, "task '%s': listed twice in %s", quote(c, id), path);
        json_t *runtime = json_object_get(entry, "runtimeInSeconds");
        if (!runtime)
            return fail(c, "task '%s': missing runtimeInSeconds in %s", quote(c, id), path);
        if (!json_is_number(runtime))
            return fail(c, "task '%s': runtimeInSeconds must be a number", quote(c, id));
        double seconds = json_number_value(runtime);
        if (!(isfinite(seconds) && seconds >= 0))
            return fail(c, "task '%s': runtimeInSeconds %g must be a finite number >= 0",
                        quote(c, id), seconds);
        /* WfFormat 1.5's coreCount is a number (at least 1): a task of 1.5 cores takes
         * two slots here. */
        json_t *cores = json_object_get(entry, "coreCount");
        if (cores) {
            double n = json_is_number(cores) ? json_number_value(cores) : NAN;
            if (!(n >= 1 && n <= TASK_CORES_MAX))
                return fail(c, "task '%s': coreCount must be a number from 1 to %u",
                            quote(c, id), TASK_CORES_MAX);
            t->cores = (uint32_t)ceil(n);
        }
        t->duration_s = seconds * c->time_scale;
        /* Written so that an overflow to infinity fails too. */
        if (!(t->duration_s <= WORKLOAD_MAX_DURATION_S))
            return fail(c, "task '%s': runtimeInSeconds %g is %g s after time_scale %g, "
                        "beyond the limit of %.0f s", quote(c, id), seconds, t->duration_s,
                        c->time_scale, WORKLOAD_MAX_DURATION_S);
    }
    for (uint32_t i = 0; i < c->task_count; i++)
        if (c->tasks[i].duration_s < 0)
            return fail(c, "task '%s': no entry in %s (its runtime)", quote(c, c->tasks[i].id),
                        path);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Pass two: parents and files by index, then children against the parents. */

static int resolve_parents(struct conv *c, uint32_t i)
{
    const struct task *t = &c->tasks[i];
    for (size_t k = 0; k < json_array_size(t->parents); k++) {
        const char *parent = json_string_value(json_array_get(t->parents, k));
        int64_t p = lookup(c->task_map, parent);
        if (p < 0)
            return fail(c, "task '%s': unknown parent '%s'", quote(c, t->id), quote(c, parent));
        if (p == i)
            return fail(c, "task '%s' lists itself as a parent", quote(c, t->id));
        if (c->mark[p] == i + 1)
            return fail(c, "task '%s' lists parent '%s' twice", quote(c, t->id),
                        quote(c, parent));
        c->mark[p] = i + 1;
        c->parent_index[t->first_parent + k] = (uint32_t)p;
        c->num_children[p]++;
    }
    return 0;
}

static int resolve_files(struct conv *c, uint32_t i)
{
    struct task *t = &c->tasks[i];
    for (size_t k = 0; t->inputs && k < json_array_size(t->inputs); k++) {
        const char *name = json_string_value(json_array_get(t->inputs, k));
        int64_t f = lookup(c->file_map, name);
        if (f < 0)
            return fail(c, "task '%s': input file '%s' is not in workflow.specification.files",
                        quote(c, t->id), quote(c, name));
        if (c->files[f].mark == i + 1)
            return fail(c, "task '%s' lists input file '%s' twice", quote(c, t->id),
                        quote(c, name));
        c->files[f].mark = i + 1;
        c->files[f].read = true;
    }
    /* Saturating: the sum is refused anyway once it passes WORKLOAD_MAX_BYTES. */
    uint64_t sum = 0;
    for (size_t k = 0; t->outputs && k < json_array_size(t->outputs); k++) {
        const char *name = json_string_value(json_array_get(t->outputs, k));
        int64_t f = lookup(c->file_map, name);
        if (f < 0)
            return fail(c, "task '%s': output file '%s' is not in workflow.specification.files",
                        quote(c, t->id), quote(c, name));
        struct file *file = &c->files[f];
        if (file->producer == i + 1)
            return fail(c, "task '%s' lists output file '%s' twice", quote(c, t->id),
                        quote(c, name));
        if (file->producer)
            return fail(c, "task '%s': output file '%s' is also written by task '%s'",
                        quote(c, t->id), quote(c, name),
                        quote(c, c->tasks[file->producer - 1].id));
        file->producer = i + 1;
        sum = file->size > UINT64_MAX - sum ? UINT64_MAX : sum + file->size;
    }
    double scaled;
    if (!scale_bytes(sum, c->size_scale, &t->output_bytes, &scaled))
        return fail(c, "task '%s': its outputFiles add up to %llu bytes, %.0f after size_scale "
                    "%g, beyond the limit of %llu (1 PiB)", quote(c, t->id),
                    (unsigned long long)sum, scaled, c->size_scale,
                    (unsigned long long)WORKLOAD_MAX_BYTES);
    return 0;
}

static int resolve_tasks(struct conv *c)
{
    size_t edges = 0;
    for (uint32_t i = 0; i < c->task_count; i++) {
        c->tasks[i].first_parent = edges;
        edges += json_array_size(c->tasks[i].parents);
    }
    c->parent_index = xmalloc((edges ? edges : 1) * sizeof *c->parent_index);
    c->mark = xcalloc(c->task_count, sizeof *c->mark);
    c->seen = xcalloc(c->task_count, sizeof *c->seen);
    c->num_children = xcalloc(c->task_count, sizeof *c->num_children);
    for (uint32_t i = 0; i < c->task_count; i++) {
        int rc = resolve_parents(c, i);
        if (rc == 0)
            rc = resolve_files(c, i);
        if (rc < 0)
            return rc;
    }
    /* The children each task should list, by the parents lists, in task order. */
    c->first_child = xmalloc(((size_t)c->task_count + 1) * sizeof *c->first_child);
    c->child_index = xmalloc((edges ? edges : 1) * sizeof *c->child_index);
    size_t at = 0;
    for (uint32_t i = 0; i < c->task_count; i++) {
        c->first_child[i] = at;
        at += c->num_children[i];
        c->num_children[i] = 0;
    }
    c->first_child[c->task_count] = at;
    for (uint32_t i = 0; i < c->task_count; i++) {
        const struct task *t = &c->tasks[i];
        for (size_t k = 0; k < json_array_size(t->parents); k++) {
            uint32_t p = c->parent_index[t->first_parent + k];
            c->child_index[c->first_child[p] + c->num_children[p]++] = i;
        }
    }
    return 0;
}

/* `children` holds exactly the tasks that list this one as a parent, each once.  The
 * stamps are fresh: parents' stamps (index + 1 of the child) are cleared first. */
static int check_children(struct conv *c)
{
    memset(c->mark, 0, (size_t)c->task_count * sizeof *c->mark);
    for (uint32_t p = 0; p < c->task_count; p++) {
        const struct task *t = &c->tasks[p];
        for (size_t k = c->first_child[p]; k < c->first_child[p + 1]; k++)
            c->mark[c->child_index[k]] = p + 1;
        for (size_t k = 0; k < json_array_size(t->children); k++) {
            const char *child = json_string_value(json_array_get(t->children, k));
            int64_t ch = lookup(c->task_map, child);
            if (ch < 0)
                return fail(c, "task '%s': unknown child '%s'", quote(c, t->id),
                            quote(c, child));
            if (ch == p)
                return fail(c, "task '%s' lists itself as a child", quote(c, t->id));
            if (c->seen[ch] == p + 1)
                return fail(c, "task '%s' lists child '%s' twice", quote(c, t->id),
                            quote(c, child));
            if (c->mark[ch] != p + 1)
                return fail(c, "task '%s': child '%s' does not list it among its parents",
                            quote(c, t->id), quote(c, child));
            c->seen[ch] = p + 1;
        }
        /* Every listed child was one of the expected, once each: a shortfall is an edge
         * that only the child's parents list holds. */
        if (json_array_size(t->children) == c->num_children[p])
            continue;
        for (size_t k = c->first_child[p]; k < c->first_child[p + 1]; k++) {
            uint32_t ch = c->child_index[k];
            if (c->seen[ch] != p + 1)
                return fail(c, "task '%s': parent '%s' does not list it among its children",
                            quote(c, c->tasks[ch].id), quote(c, t->id));
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Pass three: objects, then what workload_parse would refuse for size. */

static int choose_objects(struct conv *c)
{
    for (uint32_t f = 0; f < c->file_count; f++) {
        struct file *file = &c->files[f];
        file->object = file->read && !file->producer;
        if (!file->object)
            continue;
        size_t id_len = strlen(file->id);
        if (id_len > WORKLOAD_MAX_ID)
            return fail(c, "file '%s': id is %zu bytes, beyond the limit of %u",
                        quote(c, file->id), id_len, WORKLOAD_MAX_ID);
        /* Only objects enter the workload's namespace: a written file is never named. */
        if (lookup(c->task_map, file->id) >= 0)
            return fail(c, "file '%s': a task has the same id (task and object ids share "
                        "one namespace in a workload)", quote(c, file->id));
        double scaled;
        if (!scale_bytes(file->size, c->size_scale, &file->bytes, &scaled))
            return fail(c, "file '%s': sizeInBytes %llu is %.0f after size_scale %g, beyond "
                        "the limit of %llu (1 PiB)", quote(c, file->id),
                        (unsigned long long)file->size, scaled, c->size_scale,
                        (unsigned long long)WORKLOAD_MAX_BYTES);
    }
    return 0;
}

/* The degree and the sum of input bytes of each task, as workload_parse bounds them. */
static int check_tasks(struct conv *c)
{
    for (uint32_t i = 0; i < c->task_count; i++) {
        struct task *t = &c->tasks[i];
        uint64_t input_bytes = 0;
        bool over = false;
        for (size_t k = 0; k < json_array_size(t->parents); k++) {
            uint64_t b = c->tasks[c->parent_index[t->first_parent + k]].output_bytes;
            over |= b > (uint64_t)INT64_MAX - input_bytes;
            input_bytes = over ? 0 : input_bytes + b;
        }
        for (size_t k = 0; t->inputs && k < json_array_size(t->inputs); k++) {
            const struct file *file =
                &c->files[lookup(c->file_map, json_string_value(json_array_get(t->inputs, k)))];
            if (!file->object)
                continue;
            t->num_inputs++;
            over |= file->bytes > (uint64_t)INT64_MAX - input_bytes;
            input_bytes = over ? 0 : input_bytes + file->bytes;
        }
        uint64_t degree = (uint64_t)json_array_size(t->parents) + t->num_inputs +
                          json_array_size(t->children);
        if (degree > WORKLOAD_MAX_DEGREE)
            return fail(c, "task '%s' has %zu parents, %u input objects and %zu children, "
                        "beyond the limit of %u in all", quote(c, t->id),
                        json_array_size(t->parents), t->num_inputs,
                        json_array_size(t->children), WORKLOAD_MAX_DEGREE);
        if (over)
            return fail(c, "task '%s': its inputs add up to more than %lld bytes after "
                        "size_scale %g", quote(c, t->id), (long long)INT64_MAX, c->size_scale);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Writing: one jansson object per line, so every id is escaped as JSON wants. */

struct text {
    char *buf;      /* owned */
    size_t len, cap;
};

/* Appends `line` (json_dumps'd, owned, consumed) and a newline; the line's length in
 * *line_len. */
static int append(struct text *out, json_t *line, size_t *line_len)
{
    char *s = line ? json_dumps(line, JSON_COMPACT) : NULL;
    json_decref(line);
    if (!s)
        return -ENOMEM;
    size_t n = strlen(s);
    out->buf = xgrow(out->buf, &out->cap, out->len + n + 2, 1);
    memcpy(out->buf + out->len, s, n);
    out->buf[out->len + n] = '\n';
    out->buf[out->len + n + 1] = '\0';
    out->len += n + 1;
    *line_len = n;
    free(s);
    return 0;
}

/* The command template with "{runtime}" (seconds, scaled) and "{id}" (quoted for the
 * shell: ids are the instance's, anything may be in them) put in; owned. */
static char *expand_command(const char *tmpl, const struct task *t)
{
    char runtime[32];
    snprintf(runtime, sizeof runtime, "%.6f", t->duration_s);
    size_t cap = strlen(tmpl) + 1, len = 0;
    char *out = xmalloc(cap);
    for (const char *p = tmpl; *p;) {
        const char *add = NULL;
        size_t skip = 1;
        char *quoted = NULL;
        if (strncmp(p, "{runtime}", 9) == 0) {
            add = runtime;
            skip = 9;
        } else if (strncmp(p, "{id}", 4) == 0) {
            size_t n = 2;
            for (const char *q = t->id; *q; q++)
                n += *q == '\'' ? 4 : 1;
            quoted = xmalloc(n + 1);
            char *w = quoted;
            *w++ = '\'';
            for (const char *q = t->id; *q; q++) {
                if (*q == '\'') {
                    memcpy(w, "'\\''", 4);
                    w += 4;
                } else {
                    *w++ = *q;
                }
            }
            *w++ = '\'';
            *w = '\0';
            add = quoted;
            skip = 4;
        }
        size_t alen = add ? strlen(add) : 1;
        if (len + alen + 1 > cap) {
            cap = 2 * (len + alen + 1);
            out = xrealloc(out, cap);
        }
        memcpy(out + len, add ? add : p, alen);
        len += alen;
        free(quoted);
        p += skip;
    }
    out[len] = '\0';
    return out;
}

static int write_text(struct conv *c, struct text *out)
{
    size_t n;
    for (uint32_t f = 0; f < c->file_count; f++) {
        const struct file *file = &c->files[f];
        if (!file->object)
            continue;
        json_t *line = json_pack("{s:s, s:I}", "object", file->id, "bytes",
                                 (json_int_t)file->bytes);
        if (append(out, line, &n) < 0)
            return -ENOMEM;
    }
    for (uint32_t i = 0; i < c->task_count; i++) {
        const struct task *t = &c->tasks[i];
        json_t *inputs = json_array();
        for (size_t k = 0; inputs && t->inputs && k < json_array_size(t->inputs); k++) {
            json_t *name = json_array_get(t->inputs, k);
            if (c->files[lookup(c->file_map, json_string_value(name))].object &&
                json_array_append(inputs, name) < 0) {
                json_decref(inputs);
                inputs = NULL;
            }
        }
        /* "O" takes a new reference to the document's parents array, "o" the inputs. */
        json_t *line;
        if (c->command) {
            char *cmd = expand_command(c->command, t);
            size_t cmd_len = strlen(cmd);
            if (cmd_len > WORKLOAD_MAX_CMD) {
                free(cmd);
                json_decref(inputs);
                return fail(c, "task '%s': its command is %zu bytes, beyond the limit of %u",
                            quote(c, t->id), cmd_len, WORKLOAD_MAX_CMD);
            }
            line = inputs ? json_pack("{s:s, s:s, s:s, s:O, s:o}", "id", t->id, "kind",
                                      "command", "cmd", cmd, "parents", t->parents, "inputs",
                                      inputs)
                          : NULL;
            free(cmd);
        } else {
            line = inputs ? json_pack("{s:s, s:s, s:f, s:O, s:o, s:I}", "id", t->id, "kind",
                                      "sleep", "duration_s", t->duration_s, "parents",
                                      t->parents, "inputs", inputs, "output_bytes",
                                      (json_int_t)t->output_bytes)
                          : NULL;
        }
        if (line && t->cores > 1)
            json_object_set_new(line, "cores", json_integer(t->cores));
        if (line && t->cores > 1)
            json_object_set_new(line, "cores", json_integer(t->cores));
        if (append(out, line, &n) < 0)
            return -ENOMEM;
        /* A million parents with long, escaped ids: possible, and refused as a whole
         * workload would be, line by line. */
        if (n > WORKLOAD_MAX_LINE)
            return fail(c, "task '%s': its workload line is %zu bytes, beyond the limit of %u",
                        quote(c, t->id), n, WORKLOAD_MAX_LINE);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */

bool wfcommons_detect(const char *text, size_t len)
{
    if (!text)
        return false;
    size_t i = 0;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        i = 3; /* a byte order mark, which some editors write */
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (i == len || text[i] != '{')
        return false;
    /* A key is a string at depth 1 followed by ':'.  Escaped spellings of the two keys
     * are not recognised; such a file is then read as JSON Lines, which refuses it. */
    size_t depth = 0;
    bool workflow = false, version = false;
    for (; i < len; i++) {
        char ch = text[i];
        if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0)
                return false;
        } else if (ch == '"') {
            size_t start = ++i;
            while (i < len && text[i] != '"')
                i += text[i] == '\\' ? 2 : 1;
            if (i >= len)
                return false;
            size_t key_len = i - start;
            size_t j = i + 1;
            while (j < len && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' ||
                               text[j] == '\n'))
                j++;
            if (depth != 1 || j == len || text[j] != ':')
                continue;
            if (key_len == 8 && memcmp(text + start, "workflow", 8) == 0)
                workflow = true;
            else if (key_len == 13 && memcmp(text + start, "schemaVersion", 13) == 0)
                version = true;
            if (workflow && version)
                return true;
        }
    }
    return false;
}

int wfcommons_to_jsonl(const char *text, size_t len, const char *name,
                       const struct wfcommons_options *o, char **out, size_t *out_len,
                       char **cause)
{
    if (out)
        *out = NULL;
    if (out_len)
        *out_len = 0;
    if (!out || !out_len || (!text && len))
        return -EINVAL;
    struct conv c = {.name = name ? name : "<string>"};
    c.command = o ? o->command : NULL;
    int rc = scale_of(&c, "time_scale", o ? o->time_scale : 0, &c.time_scale);
    if (rc == 0)
        rc = scale_of(&c, "size_scale", o ? o->size_scale : 0, &c.size_scale);
    if (rc == 0)
        rc = read_frame(&c, text ? text : "", len);
    if (rc == 0)
        rc = read_files(&c);
    if (rc == 0)
        rc = read_tasks(&c);
    if (rc == 0)
        rc = read_runtimes(&c);
    if (rc == 0)
        rc = resolve_tasks(&c);
    if (rc == 0)
        rc = check_children(&c);
    if (rc == 0)
        rc = choose_objects(&c);
    if (rc == 0)
        rc = check_tasks(&c);
    struct text t = {0};
    if (rc == 0)
        rc = write_text(&c, &t);
    if (rc == -ENOMEM && !c.cause)
        fail(&c, "out of memory");
    if (rc < 0) {
        free(t.buf);
        if (cause) {
            *cause = c.cause;
            c.cause = NULL;
        }
    } else {
        *out = t.buf;
        *out_len = t.len;
    }
    conv_fini(&c);
    return rc;
}

/*
 * workload_parse names its text's lines ("NAME:LINE: reason"), which here are lines of
 * the generated text, not of the instance: drop them, keeping "NAME: reason".
 */
static char *without_line(const char *name, char *cause)
{
    size_t n = strlen(name);
    if (strncmp(cause, name, n) != 0 || cause[n] != ':')
        return cause;
    const char *p = cause + n + 1;
    if (*p < '0' || *p > '9')
        return cause;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p != ':')
        return cause;
    char *shorter = xasprintf("%s:%s", name, p + 1);
    free(cause);
    return shorter;
}

int wfcommons_parse(struct workload *wl, const char *text, size_t len, const char *name,
                    const struct wfcommons_options *o, char **cause)
{
    if (!wl)
        return -EINVAL;
    *wl = (struct workload){0};
    name = name ? name : "<string>";
    char *jsonl;
    size_t jsonl_len;
    char *why = NULL;
    int rc = wfcommons_to_jsonl(text, len, name, o, &jsonl, &jsonl_len, &why);
    if (rc == 0) {
        rc = workload_parse(wl, jsonl, jsonl_len, name, &why);
        free(jsonl);
        if (rc < 0 && why)
            why = without_line(name, why);
    }
    if (cause)
        *cause = why;
    else
        free(why);
    return rc;
}

/* The whole file, NUL-terminated, at most WFCOMMONS_MAX_FILE bytes. */
static int read_whole(const char *path, char **text, size_t *len, char **cause)
{
    *text = NULL;
    FILE *in = fopen(path, "rb");
    if (!in) {
        int rc = -errno;
        *cause = xasprintf("cannot open '%s': %s", path, strerror(errno));
        return rc;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        buf = xgrow(buf, &cap, n + (1u << 16) + 1, 1);
        size_t want = cap - n - 1;
        size_t got = fread(buf + n, 1, want, in);
        n += got;
        if (n > WFCOMMONS_MAX_FILE) {
            *cause = xasprintf("%s: larger than %u MiB (the limit for an instance)", path,
                               WFCOMMONS_MAX_FILE >> 20);
            rc = -EFBIG;
            break;
        }
        if (got < want) {
            if (ferror(in)) {
                rc = errno ? -errno : -EIO;
                *cause = xasprintf("cannot read '%s': %s", path, strerror(-rc));
            }
            break;
        }
    }
    fclose(in);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

int wfcommons_load(struct workload *wl, const char *path, const struct wfcommons_options *o,
                   char **cause)
{
    if (!wl || !path)
        return -EINVAL;
    *wl = (struct workload){0};
    char *text;
    size_t len = 0;
    char *why = NULL;
    int rc = read_whole(path, &text, &len, &why);
    if (rc == 0) {
        rc = wfcommons_parse(wl, text, len, path, o, &why);
        free(text);
    }
    if (cause)
        *cause = why;
    else
        free(why);
    return rc;
}

/* The bytes at the head of a file that recognising it needs: a WfCommons instance
 * names its top-level keys long before its first task in every WfInstances file, while
 * a JSON Lines workload's first object is its first line. */
#define DETECT_PREFIX (64u << 10)

int wfcommons_load_any(struct workload *wl, const char *path, const struct wfcommons_options *o,
                       char **cause)
{
    bool scaled = o && ((o->time_scale != 0 && o->time_scale != 1) ||
                        (o->size_scale != 0 && o->size_scale != 1) || o->command);
    bool instance = false;
    if (strcmp(path, "-") != 0) {
        FILE *f = fopen(path, "r");
        if (f) {
            char *head = xmalloc(DETECT_PREFIX);
            size_t n = fread(head, 1, DETECT_PREFIX, f);
            fclose(f);
            instance = wfcommons_detect(head, n);
            free(head);
        }
    }
    if (instance)
        return wfcommons_load(wl, path, o, cause);
    if (scaled) {
        *wl = (struct workload){0};
        *cause = xasprintf("%s: --time-scale, --data-scale and --command apply to WfCommons "
                           "instances, and this is a JSON Lines workload",
                           path);
        return -EINVAL;
    }
    return workload_load(wl, path, cause);
}
