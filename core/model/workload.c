/*
 * workload — the JSON Lines workload reader and checker, and the queries on a parsed
 * workload (see workload.h); the writer is workload_write.c.
 *
 * Owns everything a parsed workload holds: tasks and objects, id and cmd strings,
 * parent, child and input index lists and the topological order.  Called by the client
 * commands (run, submit) before anything is sent to a daemon, by `import` and by the
 * tests.
 *
 * Reading is two passes so that a parent may appear after its child and an object after
 * its readers.  Pass one parses each line with jansson, checks keys, types and values,
 * and records parent and input names in two arenas; pass two resolves names to indices
 * through open-addressing id tables (one for tasks, one for objects), builds child lists
 * and runs Kahn's algorithm.  Nothing recurses: workloads reach 10^6-10^7 tasks and
 * pipelines as long as the workload, so a recursive walk would overflow the stack.
 * Errors name the input, the line and the task or object, once.
 */
#include "core/model/workload.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/text.h"
#include "core/base/xalloc.h"

/* Index and line numbers are uint32; keep one value free as "no task". */
#define MAX_TASKS (UINT32_MAX - 1)

/* Cycle paths longer than this are shortened in the error message. */
#define CYCLE_SHOWN 8

/* ------------------------------------------------------------------------------------ */
/* Id table: open addressing, linear probing, the 32-bit hash kept in the slot so that
 * probing and growth touch the entry array only on a likely match.  One table serves
 * tasks and objects alike: both structs start with their id, so an entry's id is found
 * from the array's base and element size. */

_Static_assert(offsetof(struct workload_task, id) == 0, "the id table reads ids at offset 0");
_Static_assert(offsetof(struct workload_object, id) == 0, "the id table reads ids at offset 0");

/* The entries a table indexes: `base` is an array of `stride`-byte elements. */
struct idview {
    const void *base;
    size_t stride;
};

static const char *view_id(struct idview v, uint32_t index)
{
    return *(char *const *)(const void *)((const char *)v.base + (size_t)index * v.stride);
}

struct idslot {
    uint32_t hash;
    uint32_t index1;        /* task index + 1; 0 marks an empty slot */
};

struct idmap {
    struct idslot *slots;   /* owned; `mask + 1` entries, a power of two */
    uint32_t mask;
    uint32_t used;
};

static uint32_t id_hash(const char *s, size_t len)
{
    /* FNV-1a, then a finaliser: ids such as "t17" differ in their last bytes only. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    return (uint32_t)h;
}

static void idmap_init(struct idmap *m)
{
    m->mask = 1023;
    m->used = 0;
    m->slots = xcalloc((size_t)m->mask + 1, sizeof *m->slots);
}

static void idmap_fini(struct idmap *m)
{
    free(m->slots);
    m->slots = NULL;
}

static void idmap_grow(struct idmap *m)
{
    uint32_t old_mask = m->mask;
    struct idslot *old = m->slots;
    m->mask = old_mask * 2 + 1;
    m->slots = xcalloc((size_t)m->mask + 1, sizeof *m->slots);
    for (size_t i = 0; i <= old_mask; i++) {
        if (!old[i].index1)
            continue;
        uint32_t at = old[i].hash & m->mask;
        while (m->slots[at].index1)
            at = (at + 1) & m->mask;
        m->slots[at] = old[i];
    }
    free(old);
}

/* Index of `name`, or -1. */
static int64_t idmap_get(const struct idmap *m, struct idview v, const char *name, uint32_t hash)
{
    for (uint32_t at = hash & m->mask;; at = (at + 1) & m->mask) {
        const struct idslot *s = &m->slots[at];
        if (!s->index1)
            return -1;
        if (s->hash == hash && strcmp(view_id(v, s->index1 - 1), name) == 0)
            return s->index1 - 1;
    }
}

/* Inserts `index` under its id unless the id is present; returns the earlier index
 * then, -1 otherwise. */
static int64_t idmap_put(struct idmap *m, struct idview v, uint32_t index, uint32_t hash)
{
    if ((m->used + 1) * 2 > m->mask + 1)
        idmap_grow(m);
    const char *id = view_id(v, index);
    uint32_t at = hash & m->mask;
    for (; m->slots[at].index1; at = (at + 1) & m->mask) {
        const struct idslot *s = &m->slots[at];
        if (s->hash == hash && strcmp(view_id(v, s->index1 - 1), id) == 0)
            return s->index1 - 1;
    }
    m->slots[at] = (struct idslot){.hash = hash, .index1 = index + 1};
    m->used++;
    return -1;
}

/* ------------------------------------------------------------------------------------ */
/* Parser state across lines. */

/* A growing arena of NUL-terminated names, back to back. */
struct names {
    char *text;                     /* owned */
    size_t len, cap;
};

struct parser {
    const char *name;               /* borrowed; labels errors */
    char *dir;                      /* owned; the workload file's directory, where object
                                       paths start; NULL for stdin and strings (cwd) */
    struct workload_task *tasks;    /* owned until handed to the workload */
    size_t cap;
    uint32_t count;
    struct idmap ids;               /* task ids */
    struct workload_object *objects; /* owned until handed to the workload */
    size_t object_cap;
    uint32_t object_count;
    struct idmap object_ids;
    /* Parent and input names of every task in file order: pass two walks each arena in
     * step with the tasks, so no per-task offsets are kept. */
    struct names parents;
    struct names inputs;
    char *cause;                    /* owned; the first error */
};

static int vfail(struct parser *ps, uint32_t line, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char *reason = xmalloc(n > 0 ? (size_t)n + 1 : 1);
    vsnprintf(reason, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
    ps->cause = line ? xasprintf("%s:%u: %s", ps->name, line, reason)
                     : xasprintf("%s: %s", ps->name, reason);
    free(reason);
    return -EINVAL;
}

static int fail(struct parser *ps, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct parser *ps, uint32_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(ps, line, fmt, ap);
    va_end(ap);
    return rc;
}

/* Refuses with "BEFORE'S'AFTER", s cut to TEXT_SHOWN bytes: keys, kinds and ids come
 * from outside and may be megabytes long. */
static int fail_quoting(struct parser *ps, uint32_t line, const char *before, const char *s,
                        size_t len, const char *after)
{
    char *shown = text_clip(s, len, TEXT_SHOWN);
    int rc = fail(ps, line, "%s'%s'%s", before, shown, after);
    free(shown);
    return rc;
}

/* An id (`what`: "id", "object id") is not empty and within WORKLOAD_MAX_ID. */
static int check_id(struct parser *ps, uint32_t line, const char *what, const char *id,
                    size_t id_len)
{
    if (id_len == 0)
        return fail(ps, line, "%s must not be empty", what);
    if (id_len <= WORKLOAD_MAX_ID)
        return 0;
    char *before = xasprintf("%s is %zu bytes, beyond the limit of %u: ", what, id_len,
                             WORKLOAD_MAX_ID);
    int rc = fail_quoting(ps, line, before, id, id_len, "");
    free(before);
    return rc;
}

static void task_free(struct workload_task *t)
{
    if (t->input_as)
        for (uint32_t i = 0; i < t->num_inputs; i++)
            free(t->input_as[i]);
    free(t->input_as);
    free(t->id);
    free(t->cmd);
    free(t->parents);
    free(t->children);
    free(t->inputs);
    free(t->outputs);
}

static void object_free(struct workload_object *o)
{
    free(o->id);
    free(o->path);
    free(o->file);
}

static void parser_fini(struct parser *ps)
{
    for (uint32_t i = 0; i < ps->count; i++)
        task_free(&ps->tasks[i]);
    free(ps->tasks);
    for (uint32_t i = 0; i < ps->object_count; i++)
        object_free(&ps->objects[i]);
    free(ps->objects);
    free(ps->dir);
    free(ps->parents.text);
    free(ps->inputs.text);
    idmap_fini(&ps->ids);
    idmap_fini(&ps->object_ids);
}

static struct idview task_view(const struct parser *ps)
{
    return (struct idview){ps->tasks, sizeof *ps->tasks};
}

static struct idview object_view(const struct parser *ps)
{
    return (struct idview){ps->objects, sizeof *ps->objects};
}

/* Index of the task or object named `id`, or -1; *is_object says which. */
static int64_t find_any(const struct parser *ps, const char *id, size_t len, bool *is_object)
{
    uint32_t hash = id_hash(id, len);
    int64_t at = idmap_get(&ps->ids, task_view(ps), id, hash);
    *is_object = at < 0;
    if (at < 0)
        at = idmap_get(&ps->object_ids, object_view(ps), id, hash);
    return at;
}

static void names_add(struct names *n, const char *name, size_t len)
{
    n->text = xgrow(n->text, &n->cap, n->len + len + 1, 1);
    memcpy(n->text + n->len, name, len);
    n->text[n->len + len] = '\0';
    n->len += len + 1;
}

/*
 * Checks task `id`'s array under `key` (`what` names its elements) and appends the names to
 * `arena`, their count to *count.  With `not_self`, the task's own id is refused (a
 * parent list).  A refusal ends the parse, so an arena grown part way is never walked.
 */
static int add_names(struct parser *ps, struct names *arena, json_t *list, const char *key,
                     const char *what, const char *id, bool not_self, uint32_t line,
                     uint32_t *count)
{
    if (!json_is_array(list))
        return fail(ps, line, "task '%s': %s must be an array of %s", id, key, what);
    size_t n = json_array_size(list);
    if (n > MAX_TASKS)
        return fail(ps, line, "task '%s': too many %s", id, key);
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(list, i);
        if (!json_is_string(p))
            return fail(ps, line, "task '%s': %s[%zu] must be a string", id, key, i);
        /* No task or object can have a longer name, and "unknown parent" would quote it
         * whole. */
        if (json_string_length(p) > WORKLOAD_MAX_ID)
            return fail(ps, line, "task '%s': %s[%zu] is %zu bytes, beyond the limit of %u "
                        "for an id", id, key, i, json_string_length(p), WORKLOAD_MAX_ID);
        if (not_self && strcmp(json_string_value(p), id) == 0)
            return fail(ps, line, "task '%s' lists itself as a parent", id);
    }
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(list, i);
        names_add(arena, json_string_value(p), json_string_length(p));
    }
    *count = (uint32_t)n;
    return 0;
}

/*
 * A task's `inputs`: ids, or {"object": id, "as": name} where the command wants the file
 * under another name.  Returns the list as ids alone (a new reference) for add_names,
 * and in *as the names given (owned, one per input, NULL where none; NULL when no input
 * has one).  A command's inputs appear in its directory under their names (the id
 * without "as"), which must be relative paths that stay inside it (task_stage_name_ok)
 * and differ from each other.
 */
static json_t *split_inputs(struct parser *ps, json_t *list, const char *id, bool command,
                            uint32_t line, char ***as)
{
    *as = NULL;
    if (!json_is_array(list)) {
        fail(ps, line, "task '%s': inputs must be an array of object ids", id);
        return NULL;
    }
    size_t n = json_array_size(list);
    json_t *ids = json_array();
    struct idmap seen = {0};
    if (command && n > 1)
        idmap_init(&seen);
    const char **names = command && n ? xcalloc(n, sizeof *names) : NULL;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        json_t *item = json_array_get(list, i), *object = item, *alias = NULL;
        if (json_is_object(item)) {
            const char *k;
            json_t *v;
            json_object_foreach(item, k, v) {
                if (strcmp(k, "object") == 0)
                    object = v;
                else if (strcmp(k, "as") == 0)
                    alias = v;
                else {
                    fail_quoting(ps, line, "unknown key ", k, strlen(k),
                                 " in an input (object, as)");
                    ok = false;
                    break;
                }
            }
            if (!ok)
                break;
            if (object == item || !json_is_string(object)) {
                fail(ps, line, "task '%s': inputs[%zu] must name its object (\"object\": id)",
                     id, i);
                ok = false;
                break;
            }
            if (alias && (!json_is_string(alias) ||
                          json_string_length(alias) != strlen(json_string_value(alias)))) {
                fail(ps, line, "task '%s': inputs[%zu]: as must be a file name", id, i);
                ok = false;
                break;
            }
            if (alias && !command) {
                fail(ps, line, "task '%s': inputs[%zu]: as names a command's file, and this "
                     "task runs no command", id, i);
                ok = false;
                break;
            }
            if (alias) {
                if (!*as)
                    *as = xcalloc(n, sizeof **as);
                (*as)[i] = xstrdup(json_string_value(alias));
            }
        }
        json_array_append(ids, object);
        if (names && json_is_string(object)) {
            const char *name = alias ? json_string_value(alias) : json_string_value(object);
            if (!task_stage_name_ok(name)) {
                fail(ps, line, "task '%s': input %s'%s' cannot be a file name in its "
                     "directory (a relative path without '..' or '.', not 'output' or "
                     "'inputs'%s)", id, alias ? "name " : "", name,
                     alias ? "" : ": give it one with {\"object\": id, \"as\": name}");
                ok = false;
                break;
            }
            names[i] = name;
            struct idview view = {.base = names, .stride = sizeof *names};
            if (n > 1 && idmap_put(&seen, view, (uint32_t)i, id_hash(name, strlen(name))) >= 0) {
                fail(ps, line, "task '%s': two inputs are named '%s' in its directory", id, name);
                ok = false;
                break;
            }
        }
    }
    idmap_fini(&seen);
    free(names);
    if (!ok) {
        json_decref(ids);
        if (*as)
            for (size_t i = 0; i < n; i++)
                free((*as)[i]);
        free(*as);
        *as = NULL;
        return NULL;
    }
    return ids;
}

static void free_as(struct workload_task *t, size_t n)
{
    if (t->input_as)
        for (size_t i = 0; i < n; i++)
            free(t->input_as[i]);
    free(t->input_as);
    t->input_as = NULL;
}

static bool blank_or_comment(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '#')
            return true;
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    }
    return true;
}

enum key {
    K_ID, K_KIND, K_DURATION, K_CMD, K_OUTPUT, K_PARENTS, K_INPUTS, K_STEALABLE, K_TIMEOUT,
    K_RETRIES, K_CORES, K_OUTPUTS, K_COUNT
};
static const char *const key_names[K_COUNT] = {
    "id", "kind", "duration_s", "cmd", "output_bytes", "parents", "inputs", "stealable",
    "timeout_s", "retries", "cores", "outputs",
};

static int add_object_id(struct parser *ps, struct workload_object *o, const char *id,
                         size_t id_len, uint32_t line);

/* One entry of a command's `outputs`, {"object": id, "file": name}: its id in *oid, its
 * file (checked) in *file; -EINVAL after naming what is wrong. */
static int output_fields(struct parser *ps, json_t *item, const char *id, size_t i,
                         uint32_t line, json_t **oid, const char **file)
{
    *oid = NULL;
    json_t *f = NULL;
    const char *k;
    json_t *v;
    if (!json_is_object(item))
        return fail(ps, line, "task '%s': outputs[%zu] must be {\"object\": id, \"file\": "
                    "name}", id, i);
    json_object_foreach(item, k, v) {
        if (strcmp(k, "object") == 0)
            *oid = v;
        else if (strcmp(k, "file") == 0)
            f = v;
        else
            return fail_quoting(ps, line, "unknown key ", k, strlen(k),
                                " in an output (object, file)");
    }
    if (!json_is_string(*oid))
        return fail(ps, line, "task '%s': outputs[%zu] must name its object (\"object\": id)",
                    id, i);
    if (!json_is_string(f) || json_string_length(f) != strlen(json_string_value(f)))
        return fail(ps, line, "task '%s': outputs[%zu] must name the file the command writes "
                    "(\"file\": name)", id, i);
    *file = json_string_value(f);
    /* stderr is the daemon's too: the command's error log beside its directory's files. */
    if (!task_stage_name_ok(*file) || strcmp(*file, "stderr") == 0)
        return fail(ps, line, "task '%s': output file '%s' cannot be a file name in its "
                    "directory (a relative path without '..' or '.', not 'output', 'stderr' "
                    "or 'inputs'; to keep standard output, redirect it: cmd > file)",
                    id, *file);
    return 0;
}

/*
 * A command's `outputs`: each a new object, made by task `index` (the task is in
 * ps->tasks already, so an error leaves nothing the parser does not free).  Files differ
 * from each other; ids are new, as any id.
 */
static int add_outputs(struct parser *ps, json_t *list, uint32_t index, uint32_t line)
{
    struct workload_task *t = &ps->tasks[index];
    const char *id = t->id;
    if (t->kind != TASK_COMMAND)
        return fail(ps, line, "task '%s': outputs are files a command writes, and this task "
                    "runs no command", id);
    size_t n = json_is_array(list) ? json_array_size(list) : 0;
    if (n == 0)
        return fail(ps, line, "task '%s': outputs must be a non-empty array of "
                    "{\"object\": id, \"file\": name}", id);
    if (n > WORKLOAD_MAX_DEGREE)
        return fail(ps, line, "task '%s': %zu outputs, beyond the limit of %u", id, n,
                    WORKLOAD_MAX_DEGREE);
    t->outputs = xcalloc(n, sizeof *t->outputs);
    const char **files = xcalloc(n, sizeof *files);
    struct idmap seen = {0};
    idmap_init(&seen);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_t *oid;
        rc = output_fields(ps, json_array_get(list, i), id, i, line, &oid, &files[i]);
        struct idview view = {.base = files, .stride = sizeof *files};
        if (rc == 0 &&
            idmap_put(&seen, view, (uint32_t)i, id_hash(files[i], strlen(files[i]))) >= 0)
            rc = fail(ps, line, "task '%s': two outputs are the file '%s'", id, files[i]);
        if (rc < 0)
            break;
        struct workload_object o = {.node = WORKLOAD_NODE_SPREAD, .line = line,
                                    .producer = index + 1, .file = xstrdup(files[i])};
        uint32_t at = ps->object_count;
        rc = add_object_id(ps, &o, json_string_value(oid), json_string_length(oid), line);
        if (rc == 0)
            ps->tasks[index].outputs[ps->tasks[index].num_outputs++] = at;
    }
    idmap_fini(&seen);
    free(files);
    return rc;
}

/* Checks one object's fields and appends the task; `obj` is borrowed. */
static int add_task(struct parser *ps, json_t *obj, uint32_t line)
{
    json_t *val[K_COUNT] = {0};
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int k = 0;
        while (k < K_COUNT && strcmp(key, key_names[k]) != 0)
            k++;
        if (k == K_COUNT)
            return fail_quoting(ps, line, "unknown key ", key, strlen(key), "");
        val[k] = v;
    }

    if (!val[K_ID])
        return fail(ps, line, "missing id");
    if (!json_is_string(val[K_ID]))
        return fail(ps, line, "id must be a string");
    const char *id = json_string_value(val[K_ID]);
    size_t id_len = json_string_length(val[K_ID]);
    int rc = check_id(ps, line, "id", id, id_len);
    if (rc < 0)
        return rc;

    struct workload_task t = {.kind = TASK_NOOP, .stealable = true, .line = line};
    if (val[K_KIND]) {
        if (!json_is_string(val[K_KIND]))
            return fail(ps, line, "task '%s': kind must be a string", id);
        const char *kind = json_string_value(val[K_KIND]);
        int k = 0;
        while (k < TASK_KIND_COUNT && strcmp(kind, task_kind_name(k)) != 0)
            k++;
        if (k == TASK_KIND_COUNT) {
            char *before = xasprintf("task '%s': unknown kind ", id);
            rc = fail_quoting(ps, line, before, kind, json_string_length(val[K_KIND]),
                              " (noop, sleep or command)");
            free(before);
            return rc;
        }
        t.kind = (uint8_t)k;
    }
    if (val[K_DURATION]) {
        if (!json_is_number(val[K_DURATION]))
            return fail(ps, line, "task '%s': duration_s must be a number", id);
        t.duration_s = json_number_value(val[K_DURATION]);
        if (t.duration_s < 0)
            return fail(ps, line, "task '%s': negative duration_s %g", id, t.duration_s);
        /* Written so that a NaN (which JSON cannot spell, but a fuzzer may reach) fails. */
        if (!(t.duration_s <= WORKLOAD_MAX_DURATION_S))
            return fail(ps, line, "task '%s': duration_s %g is beyond the limit of %.0f s", id,
                        t.duration_s, WORKLOAD_MAX_DURATION_S);
        if (t.kind != TASK_SLEEP)
            return fail(ps, line, "task '%s': duration_s is only for sleep tasks", id);
    } else if (t.kind == TASK_SLEEP) {
        return fail(ps, line, "task '%s': sleep task needs duration_s", id);
    }
    if (val[K_CMD]) {
        if (!json_is_string(val[K_CMD]))
            return fail(ps, line, "task '%s': cmd must be a string", id);
        if (t.kind != TASK_COMMAND)
            return fail(ps, line, "task '%s': cmd is only for command tasks", id);
        if (json_string_length(val[K_CMD]) == 0)
            return fail(ps, line, "task '%s': cmd must not be empty", id);
        if (json_string_length(val[K_CMD]) > WORKLOAD_MAX_CMD)
            return fail(ps, line, "task '%s': cmd is %zu bytes, beyond the limit of %u (put a "
                        "longer command in a script)", id, json_string_length(val[K_CMD]),
                        WORKLOAD_MAX_CMD);
    } else if (t.kind == TASK_COMMAND) {
        return fail(ps, line, "task '%s': command task needs cmd", id);
    }
    if (val[K_OUTPUT]) {
        if (!json_is_integer(val[K_OUTPUT]))
            return fail(ps, line, "task '%s': output_bytes must be an integer", id);
        json_int_t bytes = json_integer_value(val[K_OUTPUT]);
        if (bytes < 0)
            return fail(ps, line, "task '%s': negative output_bytes %lld", id, (long long)bytes);
        if ((uint64_t)bytes > WORKLOAD_MAX_BYTES)
            return fail(ps, line, "task '%s': output_bytes %lld is beyond the limit of %llu "
                        "(1 PiB)", id, (long long)bytes, (unsigned long long)WORKLOAD_MAX_BYTES);
        t.output_bytes = (uint64_t)bytes;
    }
    if (val[K_STEALABLE]) {
        if (!json_is_boolean(val[K_STEALABLE]))
            return fail(ps, line, "task '%s': stealable must be true or false", id);
        t.stealable = json_is_true(val[K_STEALABLE]);
    }
    if (val[K_TIMEOUT]) {
        if (!json_is_number(val[K_TIMEOUT]))
            return fail(ps, line, "task '%s': timeout_s must be a number of seconds", id);
        t.timeout_s = json_number_value(val[K_TIMEOUT]);
        if (!task_timeout_valid(t.timeout_s))
            return fail(ps, line, "task '%s': timeout_s %.10g is out of range (more than 0, at "
                        "most %.0f s: 30 days)", id, t.timeout_s, TASK_TIMEOUT_MAX_S);
    }
    if (val[K_RETRIES]) {
        if (!json_is_integer(val[K_RETRIES]) || json_integer_value(val[K_RETRIES]) < 0 ||
            json_integer_value(val[K_RETRIES]) > (json_int_t)TASK_RETRIES_MAX)
            return fail(ps, line, "task '%s': retries must be an integer from 0 to %u", id,
                        TASK_RETRIES_MAX);
        t.retries = (uint32_t)json_integer_value(val[K_RETRIES]);
        t.has_retries = true;
    }
    t.cores = 1;
    if (val[K_CORES]) {
        if (!json_is_integer(val[K_CORES]) || json_integer_value(val[K_CORES]) < 1 ||
            json_integer_value(val[K_CORES]) > (json_int_t)TASK_CORES_MAX)
            return fail(ps, line, "task '%s': cores must be an integer from 1 to %u", id,
                        TASK_CORES_MAX);
        t.cores = (uint32_t)json_integer_value(val[K_CORES]);
    }
    if (val[K_PARENTS] && add_names(ps, &ps->parents, val[K_PARENTS], "parents", "ids", id,
                                    true, line, &t.num_parents) < 0)
        return -EINVAL;
    if (val[K_INPUTS]) {
        json_t *ids = split_inputs(ps, val[K_INPUTS], id, t.kind == TASK_COMMAND, line,
                                   &t.input_as);
        if (!ids)
            return -EINVAL;
        int added = add_names(ps, &ps->inputs, ids, "inputs", "object ids", id, false, line,
                              &t.num_inputs);
        json_decref(ids);
        if (added < 0) {
            free_as(&t, json_array_size(val[K_INPUTS]));
            return -EINVAL;
        }
    }

    if (ps->count == MAX_TASKS) {
        free_as(&t, t.num_inputs);
        return fail(ps, line, "too many tasks (at most %u)", (unsigned)MAX_TASKS);
    }
    bool is_object;
    int64_t first = find_any(ps, id, id_len, &is_object);
    if (first >= 0 && is_object) {
        free_as(&t, t.num_inputs);
        return fail(ps, line, "duplicate id '%s' (first on line %u, an object)", id,
                    ps->objects[first].line);
    }
    t.id = xstrndup(id, id_len);
    if (t.kind == TASK_COMMAND)
        t.cmd = xstrdup(json_string_value(val[K_CMD]));
    ps->tasks = xgrow(ps->tasks, &ps->cap, (size_t)ps->count + 1, sizeof *ps->tasks);
    uint32_t index = ps->count++;
    ps->tasks[index] = t;
    first = idmap_put(&ps->ids, task_view(ps), index, id_hash(id, id_len));
    if (first >= 0)
        return fail(ps, line, "duplicate id '%s' (first on line %u)", id,
                    ps->tasks[first].line);
    return val[K_OUTPUTS] ? add_outputs(ps, val[K_OUTPUTS], index, line) : 0;
}

enum object_key { O_OBJECT, O_BYTES, O_NODE, O_PATH, O_COUNT };
static const char *const object_key_names[O_COUNT] = {"object", "bytes", "node", "path"};

/* An object's `path` as the client will open it: relative to the workload file's
 * directory (to the working directory for stdin and strings), so a workload and its
 * data move together. */
static char *object_path(const struct parser *ps, const char *path)
{
    if (path[0] == '/' || !ps->dir)
        return xstrdup(path);
    return xasprintf("%s/%s", ps->dir, path);
}

/* Checks an object line's fields and appends the object; `obj` is borrowed. */
static int add_object(struct parser *ps, json_t *obj, uint32_t line)
{
    json_t *val[O_COUNT] = {0};
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int k = 0;
        while (k < O_COUNT && strcmp(key, object_key_names[k]) != 0)
            k++;
        /* The message lists the keys an object line takes: a task key on an object line
         * (a merged or mistyped line) is the likely mistake. */
        if (k == O_COUNT)
            return fail_quoting(ps, line, "unknown key ", key, strlen(key),
                                " on an object line (object, bytes, node, path)");
        val[k] = v;
    }
    if (!json_is_string(val[O_OBJECT]))
        return fail(ps, line, "object must be a string (the object's id)");
    const char *id = json_string_value(val[O_OBJECT]);
    size_t id_len = json_string_length(val[O_OBJECT]);
    int rc = check_id(ps, line, "object id", id, id_len);
    if (rc < 0)
        return rc;

    struct workload_object o = {.node = WORKLOAD_NODE_SPREAD, .line = line};
    if (!val[O_BYTES] && !val[O_PATH])
        return fail(ps, line, "object '%s': missing bytes (or a path to a file)", id);
    json_int_t bytes = -1;
    if (val[O_BYTES]) {
        if (!json_is_integer(val[O_BYTES]))
            return fail(ps, line, "object '%s': bytes must be an integer", id);
        bytes = json_integer_value(val[O_BYTES]);
        if (bytes < 0)
            return fail(ps, line, "object '%s': negative bytes %lld", id, (long long)bytes);
        if ((uint64_t)bytes > WORKLOAD_MAX_BYTES)
            return fail(ps, line, "object '%s': bytes %lld is beyond the limit of %llu (1 PiB)",
                        id, (long long)bytes, (unsigned long long)WORKLOAD_MAX_BYTES);
        o.bytes = (uint64_t)bytes;
    }
    if (val[O_NODE]) {
        json_t *node = val[O_NODE];
        if (json_is_integer(node) && json_integer_value(node) > INT32_MAX)
            return fail(ps, line, "object '%s': node %lld is too large", id,
                        (long long)json_integer_value(node));
        if (json_is_integer(node) && json_integer_value(node) >= 0)
            o.node = (int32_t)json_integer_value(node);
        else if (!json_is_string(node) || strcmp(json_string_value(node), "spread") != 0)
            return fail(ps, line, "object '%s': node must be an integer >= 0 or \"spread\"", id);
    }
    /* Last of the checks that can fail before the id's: it allocates the path. */
    if (val[O_PATH]) {
        if (!json_is_string(val[O_PATH]) || json_string_length(val[O_PATH]) == 0 ||
            json_string_length(val[O_PATH]) != strlen(json_string_value(val[O_PATH])))
            return fail(ps, line, "object '%s': path must be a file name (a non-empty string)",
                        id);
        if (json_string_length(val[O_PATH]) > WORKLOAD_MAX_PATH)
            return fail(ps, line, "object '%s': path is longer than %u bytes", id,
                        WORKLOAD_MAX_PATH);
        char *path = object_path(ps, json_string_value(val[O_PATH]));
        /* The file is read at submission; its size and kind are known now, so a missing
         * or unreadable input fails here, at its line, before any daemon is started. */
        struct stat st;
        int err = stat(path, &st) < 0 ? errno : !S_ISREG(st.st_mode) ? EISDIR
                  : access(path, R_OK) < 0 ? errno : 0;
        if (err) {
            int rc2 = err == EISDIR
                          ? fail(ps, line, "object '%s': path '%s' is not a regular file", id,
                                 path)
                          : fail(ps, line, "object '%s': cannot read path '%s': %s", id, path,
                                 strerror(err));
            free(path);
            return rc2;
        }
        if ((uint64_t)st.st_size > WORKLOAD_MAX_BYTES) {
            free(path);
            return fail(ps, line, "object '%s': its file is beyond the limit of 1 PiB", id);
        }
        if (bytes >= 0 && (uint64_t)bytes != (uint64_t)st.st_size) {
            int rc2 = fail(ps, line, "object '%s': bytes %lld, but its file '%s' has %lld",
                           id, (long long)bytes, path, (long long)st.st_size);
            free(path);
            return rc2;
        }
        o.bytes = (uint64_t)st.st_size;
        /* Absolute from here on: the client opens it from wherever it runs, and a
         * workload written back elsewhere (workload_write_object) names the same file. */
        char *real = realpath(path, NULL);
        if (real) {
            free(path);
            path = real;
        }
        o.path = path;
    }

    return add_object_id(ps, &o, id, id_len, line);
}

/* Appends object o (taken over, freed on failure) under a new id. */
static int add_object_id(struct parser *ps, struct workload_object *o, const char *id,
                         size_t id_len, uint32_t line)
{
    int rc = o->producer ? check_id(ps, line, "output object id", id, id_len) : 0;
    if (rc == 0 && ps->object_count == WORKLOAD_MAX_OBJECTS)
        rc = fail(ps, line, "too many objects (at most %u)", WORKLOAD_MAX_OBJECTS);
    bool is_object;
    int64_t first = rc == 0 ? find_any(ps, id, id_len, &is_object) : -1;
    if (first >= 0)
        rc = is_object ? fail(ps, line, "duplicate object '%s' (first on line %u)", id,
                              ps->objects[first].line)
                       : fail(ps, line, "duplicate id '%s' (first on line %u, a task)", id,
                              ps->tasks[first].line);
    if (rc < 0) {
        object_free(o);
        return rc;
    }
    o->id = xstrndup(id, id_len);
    ps->objects = xgrow(ps->objects, &ps->object_cap, (size_t)ps->object_count + 1,
                        sizeof *ps->objects);
    uint32_t index = ps->object_count++;
    ps->objects[index] = *o;
    idmap_put(&ps->object_ids, object_view(ps), index, id_hash(id, id_len));
    return 0;
}

/* `text` is one line without its newline. */
static int add_line(struct parser *ps, const char *text, size_t len, uint32_t line)
{
    if (len > WORKLOAD_MAX_LINE)
        return fail(ps, line, "line longer than %u bytes (the limit)", WORKLOAD_MAX_LINE);
    if (blank_or_comment(text, len))
        return 0;
    json_error_t err;
    json_t *obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!obj)
        return fail(ps, line, "malformed JSON: %s (column %d)", err.text, err.column);
    int rc;
    if (!json_is_object(obj))
        rc = fail(ps, line, "expected a JSON object");
    else if (json_object_get(obj, "object") && json_object_get(obj, "id"))
        rc = fail(ps, line, "both id and object: a line is a task (id) or a data object "
                            "(object), not both");
    else if (json_object_get(obj, "object"))
        rc = add_object(ps, obj, line);
    else
        rc = add_task(ps, obj, line);
    json_decref(obj);
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* Pass two: parents and inputs by index, children, topological order. */

/*
 * Resolves each task's parents, then its inputs, in file order, so the error reported
 * is the first bad line.  A name of the wrong sort (an object among parents, a task
 * among inputs) gets its own message: it is the likely mistake, and "unknown" would
 * mislead.  mark[p] == i + 1 means task p was already seen among task i's parents;
 * object_mark likewise for inputs.
 */
static int resolve_names(struct parser *ps, uint32_t *mark, uint32_t *object_mark)
{
    const char *parent = ps->parents.text;
    const char *input = ps->inputs.text;
    bool is_object;
    for (uint32_t i = 0; i < ps->count; i++) {
        struct workload_task *t = &ps->tasks[i];
        /* Each size is at most WORKLOAD_MAX_BYTES, but thousands of them can still add up
         * beyond the signed 64-bit count the daemons and traces keep per task. */
        uint64_t input_bytes = 0;
        if (t->num_parents)
            t->parents = xmalloc((size_t)t->num_parents * sizeof *t->parents);
        for (uint32_t k = 0; k < t->num_parents; k++) {
            size_t len = strlen(parent);
            int64_t p = find_any(ps, parent, len, &is_object);
            if (p >= 0 && is_object)
                return fail(ps, t->line,
                            "task '%s': parent '%s' is an object, not a task (list it in inputs)",
                            t->id, parent);
            if (p < 0)
                return fail(ps, t->line, "task '%s': unknown parent '%s'", t->id, parent);
            if (mark[p] == i + 1)
                return fail(ps, t->line, "task '%s' lists parent '%s' twice", t->id, parent);
            mark[p] = i + 1;
            if (ps->tasks[p].output_bytes > (uint64_t)INT64_MAX - input_bytes)
                return fail(ps, t->line, "task '%s': its inputs add up to more than %lld bytes",
                            t->id, (long long)INT64_MAX);
            input_bytes += ps->tasks[p].output_bytes;
            t->parents[k] = (uint32_t)p;
            ps->tasks[p].num_children++;
            parent += len + 1;
        }
        if (t->num_inputs)
            t->inputs = xmalloc((size_t)t->num_inputs * sizeof *t->inputs);
        for (uint32_t k = 0; k < t->num_inputs; k++) {
            size_t len = strlen(input);
            int64_t o = find_any(ps, input, len, &is_object);
            if (o >= 0 && !is_object)
                return fail(ps, t->line,
                            "task '%s': input '%s' is a task, not an object (list it in parents)",
                            t->id, input);
            if (o < 0)
                return fail(ps, t->line, "task '%s': unknown input '%s'", t->id, input);
            if (object_mark[o] == i + 1)
                return fail(ps, t->line, "task '%s' lists input '%s' twice", t->id, input);
            object_mark[o] = i + 1;
            if (ps->objects[o].bytes > (uint64_t)INT64_MAX - input_bytes)
                return fail(ps, t->line, "task '%s': its inputs add up to more than %lld bytes",
                            t->id, (long long)INT64_MAX);
            input_bytes += ps->objects[o].bytes;
            t->inputs[k] = (uint32_t)o;
            input += len + 1;
            /* An output of another task: that task is a parent, listed or not. */
            uint32_t producer = ps->objects[o].producer;
            if (producer == i + 1)
                return fail(ps, t->line, "task '%s': input '%s' is its own output", t->id,
                            ps->objects[o].id);
            if (producer && mark[producer - 1] != i + 1) {
                mark[producer - 1] = i + 1;
                t->parents = xrealloc(t->parents, ((size_t)t->num_parents + 1) *
                                                      sizeof *t->parents);
                t->parents[t->num_parents++] = producer - 1;
                ps->tasks[producer - 1].num_children++;
            }
        }
    }
    return 0;
}

static void fill_children(struct parser *ps)
{
    for (uint32_t i = 0; i < ps->count; i++) {
        struct workload_task *t = &ps->tasks[i];
        if (t->num_children)
            t->children = xmalloc((size_t)t->num_children * sizeof *t->children);
        t->num_children = 0; /* refilled below, in child file order */
    }
    for (uint32_t i = 0; i < ps->count; i++) {
        const struct workload_task *t = &ps->tasks[i];
        for (uint32_t k = 0; k < t->num_parents; k++) {
            struct workload_task *p = &ps->tasks[t->parents[k]];
            p->children[p->num_children++] = i;
        }
    }
}

/* The first task, in file order, with more edges than its metadata record can carry. */
static int check_degree(struct parser *ps)
{
    for (uint32_t i = 0; i < ps->count; i++) {
        const struct workload_task *t = &ps->tasks[i];
        uint64_t degree = (uint64_t)t->num_parents + t->num_inputs + t->num_children +
                          t->num_outputs;
        if (degree > WORKLOAD_MAX_DEGREE)
            return fail(ps, t->line, "task '%s' has %u parents, %u inputs and %u children, "
                        "beyond the limit of %u in all (its metadata travels in one message)",
                        t->id, t->num_parents, t->num_inputs, t->num_children,
                        WORKLOAD_MAX_DEGREE);
    }
    return 0;
}

/* The parent of `i` that Kahn's algorithm left unprocessed (waiting > 0).  Every
 * unprocessed task has one, or it would have been released. */
static uint32_t waiting_parent(const struct parser *ps, const uint32_t *waiting, uint32_t i)
{
    const struct workload_task *t = &ps->tasks[i];
    for (uint32_t k = 0; k < t->num_parents; k++)
        if (waiting[t->parents[k]])
            return t->parents[k];
    abort(); /* unreachable: see above */
}

/*
 * Called when Kahn's algorithm stopped short.  Walking back from any unprocessed task
 * through unprocessed parents must revisit a task, and that task is on a cycle; the
 * message names the cycle's member listed first in the file and the path from it.
 */
static int report_cycle(struct parser *ps, const uint32_t *waiting, uint32_t *mark)
{
    uint32_t cur = 0;
    while (!waiting[cur])
        cur++;
    memset(mark, 0, (size_t)ps->count * sizeof *mark);
    while (!mark[cur]) {
        mark[cur] = 1;
        cur = waiting_parent(ps, waiting, cur);
    }

    /* back[] lists the cycle against the edges: back[j + 1] is a parent of back[j]. */
    uint32_t *back = NULL;
    size_t len = 0, cap = 0;
    uint32_t first = 0;
    uint32_t at = cur;
    do {
        back = xgrow(back, &cap, len + 1, sizeof *back);
        if (len == 0 || at < back[first])
            first = (uint32_t)len;
        back[len++] = at;
        at = waiting_parent(ps, waiting, at);
    } while (at != cur);

    /* Forward order from back[first]: its child on the cycle is the entry before it. */
    size_t path_cap = 64, path_len = 0;
    char *path = xmalloc(path_cap);
    path[0] = '\0';
    for (size_t step = 0; step <= len; step++) {
        const char *id = ps->tasks[back[(first + len - step % len) % len]].id;
        const char *piece = id;
        if (len > CYCLE_SHOWN + 1 && step == CYCLE_SHOWN)
            piece = "...";
        else if (len > CYCLE_SHOWN + 1 && step > CYCLE_SHOWN && step < len)
            continue;
        size_t need = path_len + strlen(piece) + 5;
        path = xgrow(path, &path_cap, need, 1);
        path_len += (size_t)sprintf(path + path_len, "%s%s", step ? " -> " : "", piece);
    }
    const struct workload_task *t = &ps->tasks[back[first]];
    int rc = len > CYCLE_SHOWN + 1
                 ? fail(ps, t->line, "task '%s' is on a cycle (%s; %zu tasks)", t->id, path, len)
                 : fail(ps, t->line, "task '%s' is on a cycle (%s)", t->id, path);
    free(path);
    free(back);
    return rc;
}

/* Kahn's algorithm with `topo` as its own queue: roots in file order, then each task
 * once its last parent is dequeued. */
static int sort_topo(struct parser *ps, uint32_t *topo, uint32_t *mark)
{
    uint32_t *waiting = xmalloc((size_t)ps->count * sizeof *waiting);
    uint32_t tail = 0;
    for (uint32_t i = 0; i < ps->count; i++) {
        waiting[i] = ps->tasks[i].num_parents;
        if (!waiting[i])
            topo[tail++] = i;
    }
    for (uint32_t head = 0; head < tail; head++) {
        const struct workload_task *t = &ps->tasks[topo[head]];
        for (uint32_t k = 0; k < t->num_children; k++)
            if (--waiting[t->children[k]] == 0)
                topo[tail++] = t->children[k];
    }
    int rc = tail == ps->count ? 0 : report_cycle(ps, waiting, mark);
    free(waiting);
    return rc;
}

/*
 * The loaded tasks in one array on huge pages, and every task's parents and children in
 * one pool in file order, rather than two small allocations a task scattered over the
 * heap: the simulator reads a random task's record and its parents millions of times a
 * second, and at 10^7 tasks 4 KiB pages missed the TLB on most of those reads.
 */
static void pack(struct parser *ps, struct workload *wl)
{
    size_t n = ps->count, edges = 0;
    for (size_t i = 0; i < n; i++)
        edges += (size_t)ps->tasks[i].num_parents + ps->tasks[i].num_children;
    wl->tasks = xcalloc_huge(n, sizeof *wl->tasks);
    memcpy(wl->tasks, ps->tasks, n * sizeof *wl->tasks);
    free(ps->tasks);
    ps->tasks = NULL;
    wl->edges = edges ? xcalloc_huge(edges, sizeof *wl->edges) : NULL;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        struct workload_task *t = &wl->tasks[i];
        if (t->num_parents) {
            memcpy(wl->edges + at, t->parents, t->num_parents * sizeof *t->parents);
            free(t->parents);
            t->parents = wl->edges + at;
            at += t->num_parents;
        }
        if (t->num_children) {
            memcpy(wl->edges + at, t->children, t->num_children * sizeof *t->children);
            free(t->children);
            t->children = wl->edges + at;
            at += t->num_children;
        }
    }
}

static int finish(struct parser *ps, struct workload *wl)
{
    if (ps->count == 0)
        return fail(ps, 0, "empty workload (no tasks)");
    if (ps->object_count && ps->count > WORKLOAD_MAX_OBJECTS)
        return fail(ps, 0, "too many tasks for a workload with objects (at most %u)",
                    WORKLOAD_MAX_OBJECTS);
    uint32_t *mark = xcalloc(ps->count, sizeof *mark);
    uint32_t *object_mark = xcalloc(ps->object_count ? ps->object_count : 1, sizeof *mark);
    uint32_t *topo = xmalloc((size_t)ps->count * sizeof *topo);
    int rc = resolve_names(ps, mark, object_mark);
    free(object_mark);
    if (rc == 0) {
        fill_children(ps);
        rc = check_degree(ps);
    }
    if (rc == 0)
        rc = sort_topo(ps, topo, mark);
    free(mark);
    if (rc < 0) {
        free(topo);
        return rc;
    }
    pack(ps, wl);
    wl->count = ps->count;
    wl->topo = topo;
    wl->name = xstrdup(ps->name);
    ps->tasks = NULL;
    ps->count = 0;
    if (ps->object_count)
        wl->objects = xrealloc(ps->objects, (size_t)ps->object_count * sizeof *ps->objects);
    else
        free(ps->objects);
    wl->object_count = ps->object_count;
    ps->objects = NULL;
    ps->object_count = 0;
    return 0;
}

static void parser_init(struct parser *ps, const char *name)
{
    *ps = (struct parser){.name = name};
    idmap_init(&ps->ids);
    idmap_init(&ps->object_ids);
}

/* Common ending of the three readers: hands the tasks over or reports the cause. */
static int conclude(struct parser *ps, struct workload *wl, int rc, char **cause)
{
    if (rc == 0)
        rc = finish(ps, wl);
    if (rc < 0) {
        if (cause)
            *cause = ps->cause;
        else
            free(ps->cause);
        ps->cause = NULL;
    }
    parser_fini(ps);
    return rc;
}

/* ------------------------------------------------------------------------------------ */

int workload_parse(struct workload *wl, const char *text, size_t len, const char *name,
                   char **cause)
{
    if (!wl || (!text && len))
        return -EINVAL;
    *wl = (struct workload){0};
    struct parser ps;
    parser_init(&ps, name ? name : "<string>");
    int rc = 0;
    uint32_t line = 0;
    size_t at = 0;
    while (rc == 0 && at < len) {
        if (line == UINT32_MAX) {
            rc = fail(&ps, line, "too many lines");
            break;
        }
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        rc = add_line(&ps, text + at, end - at, ++line);
        at = end + 1;
    }
    return conclude(&ps, wl, rc, cause);
}

/*
 * Lines of a stream with bounded memory: getline would grow its buffer until the line
 * ends, which for /dev/zero or a binary file is never (gigabytes before "malformed
 * JSON").  The buffer holds at most one line of WORKLOAD_MAX_LINE bytes plus one chunk,
 * and a line is refused as soon as it is longer than the limit, before its end is read.
 */
#define READ_CHUNK (64u * 1024)

struct line_reader {
    FILE *in;               /* borrowed */
    char *buf;              /* owned; bytes [start, end) not yet handed out */
    size_t cap, start, end;
    bool eof;
};

enum { LINE_OK = 0, LINE_END = 1, LINE_TOO_LONG = 2 };

/* Next line without its newline in *text, *len: LINE_OK, LINE_END, LINE_TOO_LONG or
 * -errno from the stream. */
static int next_line(struct line_reader *lr, const char **text, size_t *len)
{
    size_t scanned = 0; /* bytes after start already known to hold no newline */
    for (;;) {
        char *from = lr->buf + lr->start + scanned;
        char *nl = lr->end > lr->start + scanned
                       ? memchr(from, '\n', lr->end - lr->start - scanned)
                       : NULL;
        if (nl || (lr->eof && lr->end > lr->start)) {
            size_t n = nl ? (size_t)(nl - (lr->buf + lr->start)) : lr->end - lr->start;
            if (n > WORKLOAD_MAX_LINE)
                return LINE_TOO_LONG;
            *text = lr->buf + lr->start;
            *len = n;
            lr->start += n + (nl ? 1 : 0);
            return LINE_OK;
        }
        if (lr->eof)
            return LINE_END;
        scanned = lr->end - lr->start;
        if (scanned > WORKLOAD_MAX_LINE)
            return LINE_TOO_LONG;
        /* Keep the partial line at the front, then read one more chunk after it. */
        if (lr->start) {
            memmove(lr->buf, lr->buf + lr->start, scanned);
            lr->end = scanned;
            lr->start = 0;
        }
        lr->buf = xgrow(lr->buf, &lr->cap, lr->end + READ_CHUNK, 1);
        size_t got = fread(lr->buf + lr->end, 1, READ_CHUNK, lr->in);
        lr->end += got;
        if (got < READ_CHUNK) {
            if (ferror(lr->in))
                return errno ? -errno : -EIO;
            lr->eof = true;
        }
    }
}

/* `dir` (owned, may be NULL): where relative object paths start. */
static int read_stream(struct workload *wl, FILE *in, const char *name, char *dir,
                       char **cause)
{
    *wl = (struct workload){0};
    struct parser ps;
    parser_init(&ps, name ? name : "<stdin>");
    ps.dir = dir;
    struct line_reader lr = {.in = in};
    uint32_t line = 0;
    int rc = 0;
    const char *text = NULL;
    size_t len = 0;
    errno = 0;
    while (rc == 0) {
        if (line == UINT32_MAX) {
            rc = fail(&ps, line, "too many lines");
            break;
        }
        int got = next_line(&lr, &text, &len);
        if (got == LINE_END)
            break;
        line++;
        if (got == LINE_TOO_LONG) {
            rc = fail(&ps, line, "line longer than %u bytes (the limit)", WORKLOAD_MAX_LINE);
        } else if (got < 0) {
            rc = got;
            ps.cause = xasprintf("%s: cannot read: %s", ps.name, strerror(-rc));
        } else {
            rc = add_line(&ps, text, len, line);
        }
        errno = 0;
    }
    free(lr.buf);
    return conclude(&ps, wl, rc, cause);
}

int workload_read(struct workload *wl, FILE *in, const char *name, char **cause)
{
    if (!wl || !in)
        return -EINVAL;
    return read_stream(wl, in, name, NULL, cause);
}

int workload_load(struct workload *wl, const char *path, char **cause)
{
    if (!wl || !path)
        return -EINVAL;
    *wl = (struct workload){0};
    if (strcmp(path, "-") == 0)
        return workload_read(wl, stdin, "<stdin>", cause);
    FILE *in = fopen(path, "r");
    if (!in) {
        int rc = -errno;
        if (cause)
            *cause = xasprintf("cannot open '%s': %s", path, strerror(errno));
        return rc;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : NULL;
    int rc = read_stream(wl, in, path, dir, cause);
    fclose(in);
    return rc;
}

void workload_fini(struct workload *wl)
{
    if (!wl)
        return;
    for (uint32_t i = 0; i < wl->count; i++) {
        if (wl->edges)
            wl->tasks[i].parents = wl->tasks[i].children = NULL;
        task_free(&wl->tasks[i]);
    }
    free(wl->edges);
    free(wl->tasks);
    free(wl->topo);
    free(wl->name);
    for (uint32_t i = 0; i < wl->object_count; i++)
        object_free(&wl->objects[i]);
    free(wl->objects);
    *wl = (struct workload){0};
}

/* The workload keeps no id table (workload.h has no field for one), so this is a scan;
 * callers that look up many ids build their own map once. */
int64_t workload_find(const struct workload *wl, const char *id)
{
    if (!wl || !id)
        return -1;
    for (uint32_t i = 0; i < wl->count; i++)
        if (strcmp(wl->tasks[i].id, id) == 0)
            return i;
    return -1;
}

int64_t workload_find_object(const struct workload *wl, const char *id)
{
    if (!wl || !id)
        return -1;
    for (uint32_t i = 0; i < wl->object_count; i++)
        if (strcmp(wl->objects[i].id, id) == 0)
            return i;
    return -1;
}

double workload_total_work(const struct workload *wl)
{
    double sum = 0;
    for (uint32_t i = 0; wl && i < wl->count; i++)
        if (wl->tasks[i].kind == TASK_SLEEP)
            sum += wl->tasks[i].duration_s;
    return sum;
}

uint64_t workload_data_bytes(const struct workload *wl)
{
    /* Each term is at most WORKLOAD_MAX_BYTES (2^50), so 2^13 of them fit before the
     * sum could wrap; past UINT64_MAX / 2 it stays there. */
    uint64_t sum = 0;
    const uint64_t top = UINT64_MAX / 2;
    for (uint32_t i = 0; wl && i < wl->object_count && sum < top; i++)
        sum += wl->objects[i].bytes;
    for (uint32_t i = 0; wl && i < wl->count && sum < top; i++)
        sum += wl->tasks[i].output_bytes;
    return sum < top ? sum : top;
}

uint32_t workload_max_cores(const struct workload *wl, uint32_t *widest)
{
    uint32_t most = 0;
    for (uint32_t i = 0; i < wl->count; i++)
        if (wl->tasks[i].cores > most) {
            most = wl->tasks[i].cores;
            if (widest)
                *widest = i;
        }
    return most;
}

void workload_default_retries(struct workload *wl, uint32_t retries)
{
    for (uint32_t i = 0; wl && i < wl->count; i++)
        if (!wl->tasks[i].has_retries)
            wl->tasks[i].retries = retries;
}

void workload_default_timeout(struct workload *wl, double timeout_s)
{
    for (uint32_t i = 0; wl && i < wl->count; i++)
        if (wl->tasks[i].timeout_s == 0)
            wl->tasks[i].timeout_s = timeout_s;
}

int workload_check_nodes(const struct workload *wl, uint32_t nodes, char **cause)
{
    if (!wl || nodes == 0 || (wl->object_count && !wl->objects))
        return -EINVAL;
    for (uint32_t i = 0; i < wl->object_count; i++) {
        const struct workload_object *o = &wl->objects[i];
        if (o->node == WORKLOAD_NODE_SPREAD || (o->node >= 0 && (uint32_t)o->node < nodes))
            continue;
        if (cause) {
            const char *name = wl->name ? wl->name : "<string>";
            *cause = nodes == 1 ? xasprintf("%s:%u: object '%s': node %d is outside the cluster "
                                            "(1 node, 0)",
                                            name, o->line, o->id, (int)o->node)
                                : xasprintf("%s:%u: object '%s': node %d is outside the cluster "
                                            "(%u nodes, 0-%u)",
                                            name, o->line, o->id, (int)o->node, nodes, nodes - 1);
        }
        return -EINVAL;
    }
    return 0;
}

uint32_t workload_object_node(const struct workload *wl, uint32_t object_index, uint32_t nodes)
{
    if (!wl || nodes == 0 || object_index >= wl->object_count || !wl->objects)
        return WORKLOAD_NO_NODE;
    int32_t node = wl->objects[object_index].node;
    if (node == WORKLOAD_NODE_SPREAD)
        return object_index % nodes;
    return node >= 0 && (uint32_t)node < nodes ? (uint32_t)node : WORKLOAD_NO_NODE;
}
