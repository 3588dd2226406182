/*
 * workload — the JSON Lines workload reader, checker and writer (see workload.h).
 *
 * Owns everything a parsed workload holds: tasks, id and cmd strings, parent and child
 * index lists and the topological order.  Called by the client commands (run, submit)
 * before anything is sent to a daemon, by the generators (workload_write_task) and by
 * their tests.
 *
 * Reading is two passes so that a parent may appear after its child.  Pass one parses
 * each line with jansson, checks keys, types and values, and records parent names in
 * one arena; pass two resolves names to indices through an open-addressing id table,
 * builds child lists and runs Kahn's algorithm.  Nothing recurses: workloads reach
 * 10^6-10^7 tasks and pipelines as long as the workload, so a recursive walk would
 * overflow the stack.  Errors name the input, the line and the task, once.
 */
#include "core/model/workload.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"

/* Index and line numbers are uint32; keep one value free as "no task". */
#define MAX_TASKS (UINT32_MAX - 1)

/* Cycle paths longer than this are shortened in the error message. */
#define CYCLE_SHOWN 8

/* ------------------------------------------------------------------------------------ */
/* Id table: open addressing, linear probing, the 32-bit hash kept in the slot so that
 * probing and growth touch the task array only on a likely match. */

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
static int64_t idmap_get(const struct idmap *m, const struct workload_task *tasks,
                         const char *name, uint32_t hash)
{
    for (uint32_t at = hash & m->mask;; at = (at + 1) & m->mask) {
        const struct idslot *s = &m->slots[at];
        if (!s->index1)
            return -1;
        if (s->hash == hash && strcmp(tasks[s->index1 - 1].id, name) == 0)
            return s->index1 - 1;
    }
}

/* Inserts `index` under its id unless the id is present; returns the earlier index
 * then, -1 otherwise. */
static int64_t idmap_put(struct idmap *m, const struct workload_task *tasks, uint32_t index,
                         uint32_t hash)
{
    if ((m->used + 1) * 2 > m->mask + 1)
        idmap_grow(m);
    uint32_t at = hash & m->mask;
    for (; m->slots[at].index1; at = (at + 1) & m->mask) {
        const struct idslot *s = &m->slots[at];
        if (s->hash == hash && strcmp(tasks[s->index1 - 1].id, tasks[index].id) == 0)
            return s->index1 - 1;
    }
    m->slots[at] = (struct idslot){.hash = hash, .index1 = index + 1};
    m->used++;
    return -1;
}

/* ------------------------------------------------------------------------------------ */
/* Parser state across lines. */

struct parser {
    const char *name;               /* borrowed; labels errors */
    struct workload_task *tasks;    /* owned until handed to the workload */
    size_t cap;
    uint32_t count;
    struct idmap ids;
    /* Parent names of every task in file order, NUL-terminated, back to back: pass two
     * walks the arena in step with the tasks, so no per-task offsets are kept. */
    char *names;                    /* owned */
    size_t names_len, names_cap;
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

static void task_free(struct workload_task *t)
{
    free(t->id);
    free(t->cmd);
    free(t->parents);
    free(t->children);
}

static void parser_fini(struct parser *ps)
{
    for (uint32_t i = 0; i < ps->count; i++)
        task_free(&ps->tasks[i]);
    free(ps->tasks);
    free(ps->names);
    idmap_fini(&ps->ids);
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

enum key { K_ID, K_KIND, K_DURATION, K_CMD, K_OUTPUT, K_PARENTS, K_STEALABLE, K_COUNT };
static const char *const key_names[K_COUNT] = {
    "id", "kind", "duration_s", "cmd", "output_bytes", "parents", "stealable",
};

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
            return fail(ps, line, "unknown key '%s'", key);
        val[k] = v;
    }

    if (!val[K_ID])
        return fail(ps, line, "missing id");
    if (!json_is_string(val[K_ID]))
        return fail(ps, line, "id must be a string");
    const char *id = json_string_value(val[K_ID]);
    size_t id_len = json_string_length(val[K_ID]);
    if (id_len == 0)
        return fail(ps, line, "id must not be empty");

    struct workload_task t = {.kind = TASK_NOOP, .stealable = true, .line = line};
    if (val[K_KIND]) {
        if (!json_is_string(val[K_KIND]))
            return fail(ps, line, "task '%s': kind must be a string", id);
        const char *kind = json_string_value(val[K_KIND]);
        int k = 0;
        while (k < TASK_KIND_COUNT && strcmp(kind, task_kind_name(k)) != 0)
            k++;
        if (k == TASK_KIND_COUNT)
            return fail(ps, line, "task '%s': unknown kind '%s' (noop, sleep or command)", id,
                        kind);
        t.kind = (uint8_t)k;
    }
    if (val[K_DURATION]) {
        if (!json_is_number(val[K_DURATION]))
            return fail(ps, line, "task '%s': duration_s must be a number", id);
        t.duration_s = json_number_value(val[K_DURATION]);
        if (t.duration_s < 0)
            return fail(ps, line, "task '%s': negative duration_s %g", id, t.duration_s);
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
    } else if (t.kind == TASK_COMMAND) {
        return fail(ps, line, "task '%s': command task needs cmd", id);
    }
    if (val[K_OUTPUT]) {
        if (!json_is_integer(val[K_OUTPUT]))
            return fail(ps, line, "task '%s': output_bytes must be an integer", id);
        json_int_t bytes = json_integer_value(val[K_OUTPUT]);
        if (bytes < 0)
            return fail(ps, line, "task '%s': negative output_bytes %lld", id, (long long)bytes);
        t.output_bytes = (uint64_t)bytes;
    }
    if (val[K_STEALABLE]) {
        if (!json_is_boolean(val[K_STEALABLE]))
            return fail(ps, line, "task '%s': stealable must be true or false", id);
        t.stealable = json_is_true(val[K_STEALABLE]);
    }
    if (val[K_PARENTS]) {
        json_t *parents = val[K_PARENTS];
        if (!json_is_array(parents))
            return fail(ps, line, "task '%s': parents must be an array of ids", id);
        size_t n = json_array_size(parents);
        if (n > MAX_TASKS)
            return fail(ps, line, "task '%s': too many parents", id);
        /* Validate every entry before touching the arena so a failure leaves it clean. */
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_array_get(parents, i);
            if (!json_is_string(p))
                return fail(ps, line, "task '%s': parents[%zu] must be a string", id, i);
            if (strcmp(json_string_value(p), id) == 0)
                return fail(ps, line, "task '%s' lists itself as a parent", id);
        }
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_array_get(parents, i);
            size_t len = json_string_length(p) + 1;
            ps->names = xgrow(ps->names, &ps->names_cap, ps->names_len + len, 1);
            memcpy(ps->names + ps->names_len, json_string_value(p), len);
            ps->names_len += len;
        }
        t.num_parents = (uint32_t)n;
    }

    if (ps->count == MAX_TASKS)
        return fail(ps, line, "too many tasks (at most %u)", (unsigned)MAX_TASKS);
    t.id = xstrndup(id, id_len);
    if (t.kind == TASK_COMMAND)
        t.cmd = xstrdup(json_string_value(val[K_CMD]));
    ps->tasks = xgrow(ps->tasks, &ps->cap, (size_t)ps->count + 1, sizeof *ps->tasks);
    uint32_t index = ps->count++;
    ps->tasks[index] = t;
    int64_t first = idmap_put(&ps->ids, ps->tasks, index, id_hash(id, id_len));
    if (first >= 0)
        return fail(ps, line, "duplicate id '%s' (first on line %u)", id,
                    ps->tasks[first].line);
    return 0;
}

static int add_line(struct parser *ps, const char *text, size_t len, uint32_t line)
{
    if (blank_or_comment(text, len))
        return 0;
    json_error_t err;
    json_t *obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!obj)
        return fail(ps, line, "malformed JSON: %s (column %d)", err.text, err.column);
    int rc = json_is_object(obj) ? add_task(ps, obj, line)
                                 : fail(ps, line, "expected a JSON object");
    json_decref(obj);
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* Pass two: parents by index, children, topological order. */

static int resolve_parents(struct parser *ps, uint32_t *mark)
{
    const char *name = ps->names;
    for (uint32_t i = 0; i < ps->count; i++) {
        struct workload_task *t = &ps->tasks[i];
        if (!t->num_parents)
            continue;
        t->parents = xmalloc((size_t)t->num_parents * sizeof *t->parents);
        for (uint32_t k = 0; k < t->num_parents; k++) {
            size_t len = strlen(name);
            int64_t p = idmap_get(&ps->ids, ps->tasks, name, id_hash(name, len));
            if (p < 0)
                return fail(ps, t->line, "task '%s': unknown parent '%s'", t->id, name);
            /* mark[p] == i + 1 means p was already seen among task i's parents. */
            if (mark[p] == i + 1)
                return fail(ps, t->line, "task '%s' lists parent '%s' twice", t->id, name);
            mark[p] = i + 1;
            t->parents[k] = (uint32_t)p;
            ps->tasks[p].num_children++;
            name += len + 1;
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

static int finish(struct parser *ps, struct workload *wl)
{
    if (ps->count == 0)
        return fail(ps, 0, "empty workload (no tasks)");
    uint32_t *mark = xcalloc(ps->count, sizeof *mark);
    uint32_t *topo = xmalloc((size_t)ps->count * sizeof *topo);
    int rc = resolve_parents(ps, mark);
    if (rc == 0) {
        fill_children(ps);
        rc = sort_topo(ps, topo, mark);
    }
    free(mark);
    if (rc < 0) {
        free(topo);
        return rc;
    }
    wl->tasks = xrealloc(ps->tasks, (size_t)ps->count * sizeof *ps->tasks);
    wl->count = ps->count;
    wl->topo = topo;
    wl->name = xstrdup(ps->name);
    ps->tasks = NULL;
    ps->count = 0;
    return 0;
}

static void parser_init(struct parser *ps, const char *name)
{
    *ps = (struct parser){.name = name};
    idmap_init(&ps->ids);
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

int workload_read(struct workload *wl, FILE *in, const char *name, char **cause)
{
    if (!wl || !in)
        return -EINVAL;
    *wl = (struct workload){0};
    struct parser ps;
    parser_init(&ps, name ? name : "<stdin>");
    char *buf = NULL;
    size_t cap = 0;
    uint32_t line = 0;
    int rc = 0;
    ssize_t n;
    errno = 0;
    while (rc == 0 && (n = getline(&buf, &cap, in)) >= 0) {
        if (line == UINT32_MAX) {
            rc = fail(&ps, line, "too many lines");
            break;
        }
        rc = add_line(&ps, buf, (size_t)n, ++line);
        errno = 0;
    }
    if (rc == 0 && ferror(in)) {
        rc = errno ? -errno : -EIO;
        ps.cause = xasprintf("%s: cannot read: %s", ps.name, strerror(-rc));
    }
    free(buf);
    return conclude(&ps, wl, rc, cause);
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
    int rc = workload_read(wl, in, path, cause);
    fclose(in);
    return rc;
}

void workload_fini(struct workload *wl)
{
    if (!wl)
        return;
    for (uint32_t i = 0; i < wl->count; i++)
        task_free(&wl->tasks[i]);
    free(wl->tasks);
    free(wl->topo);
    free(wl->name);
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

double workload_total_work(const struct workload *wl)
{
    double sum = 0;
    for (uint32_t i = 0; wl && i < wl->count; i++)
        if (wl->tasks[i].kind == TASK_SLEEP)
            sum += wl->tasks[i].duration_s;
    return sum;
}

/* ------------------------------------------------------------------------------------ */
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

int workload_write_task(FILE *out, const struct workload_task *task, const struct workload *wl)
{
    if (!out || !task || !task->id || task->kind >= TASK_KIND_COUNT)
        return -EINVAL;
    if (task->kind == TASK_SLEEP && !(isfinite(task->duration_s) && task->duration_s >= 0))
        return -EINVAL;
    if (task->kind == TASK_COMMAND && (!task->cmd || !task->cmd[0]))
        return -EINVAL;
    if (task->output_bytes > INT64_MAX)
        return -ERANGE; /* the reader takes JSON integers as int64 */
    for (uint32_t k = 0; k < task->num_parents; k++)
        if (!wl || !task->parents || task->parents[k] >= wl->count)
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
            put_string(out, wl->tasks[task->parents[k]].id);
        }
        putc(']', out);
    }
    if (!task->stealable)
        fputs(",\"stealable\":false", out);
    fputs("}\n", out);
    if (ferror(out))
        return errno ? -errno : -EIO;
    return 0;
}
