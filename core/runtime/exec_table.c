/*
 * exec_table — the executor's table of running commands: pid -> run, chained, with a
 * power-of-two number of buckets that doubles as it fills.  A command is in it from its
 * spawn (exec_spawn.c) until the reaper reaps it (exec_reap.c); the loop looks runs up
 * in it to signal them (exec.c, exec_group.c).  Every call is made under the exec's
 * `mu`, on either thread.
 */
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/runtime/exec_impl.h"

static size_t pid_bucket(pid_t pid, size_t cap)
{
    return ((size_t)pid * 0x9E3779B97F4A7C15ULL >> 17) & (cap - 1);
}

void table_insert(struct exec *ex, struct run *r)
{
    if (ex->table_count + 1 > ex->table_cap) {
        size_t cap = ex->table_cap ? ex->table_cap * 2 : 64;
        struct run **t = xcalloc(cap, sizeof *t);
        for (size_t i = 0; i < ex->table_cap; i++) {
            for (struct run *e = ex->table[i], *next; e; e = next) {
                next = e->next;
                size_t b = pid_bucket(e->pid, cap);
                e->next = t[b];
                t[b] = e;
            }
        }
        free(ex->table);
        ex->table = t;
        ex->table_cap = cap;
    }
    size_t b = pid_bucket(r->pid, ex->table_cap);
    r->next = ex->table[b];
    ex->table[b] = r;
    ex->table_count++;
}

struct run *table_find(const struct exec *ex, pid_t pid)
{
    if (!ex->table_cap)
        return NULL;
    for (struct run *r = ex->table[pid_bucket(pid, ex->table_cap)]; r; r = r->next) {
        if (r->pid == pid)
            return r;
    }
    return NULL;
}

/* A scan: only exec_kill asks, when a job is removed. */
struct run *table_find_arg(const struct exec *ex, const void *arg)
{
    for (size_t i = 0; i < ex->table_cap; i++) {
        for (struct run *r = ex->table[i]; r; r = r->next) {
            if (r->res.arg == arg)
                return r;
        }
    }
    return NULL;
}

struct run *table_remove(struct exec *ex, pid_t pid)
{
    if (!ex->table_cap)
        return NULL;
    for (struct run **p = &ex->table[pid_bucket(pid, ex->table_cap)]; *p; p = &(*p)->next) {
        if ((*p)->pid == pid) {
            struct run *r = *p;
            *p = r->next;
            r->next = NULL;
            ex->table_count--;
            return r;
        }
    }
    return NULL;
}
