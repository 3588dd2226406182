/*
 * xalloc — see xalloc.h.  The only place that turns ENOMEM into abort().
 */
#include "core/base/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void (*fatal_hook)(void);

void xalloc_set_fatal_hook(void (*hook)(void))
{
    fatal_hook = hook;
}

static void fail(size_t size)
{
    if (fatal_hook)
        fatal_hook();
    fprintf(stderr, "jackdaw: out of memory (asked for %zu bytes)\n", size);
    abort();
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        fail(size);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        fail(count * size);
    return p;
}

void *xcalloc_huge(size_t count, size_t size)
{
#ifdef MADV_HUGEPAGE
    const size_t huge = (size_t)2 << 20;
    if (size && count <= SIZE_MAX / size && count * size >= huge) {
        size_t bytes = (count * size + huge - 1) & ~(huge - 1);
        void *p = aligned_alloc(huge, bytes);
        if (p) {
            (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: refused, 4 KiB pages do */
            memset(p, 0, count * size);
            return p;
        }
    }
#endif
    return xcalloc(count, size);
}

void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (!p)
        fail(size);
    return p;
}

void *xgrow(void *ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return ptr;
    size_t n = *cap ? *cap : 8;
    while (n < need)
        n *= 2;
    ptr = xrealloc(ptr, n * elem);
    *cap = n;
    return ptr;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    char *p = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&p, fmt, ap);
    va_end(ap);
    if (n < 0)
        fail(0);
    return p;
}
