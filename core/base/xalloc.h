/*
 * xalloc — allocation that cannot fail, for programs (daemon, client, console).
 *
 * Owns nothing.  Called by every layer above core/base that runs inside one of our own
 * processes.  On out-of-memory it runs the fatal hook (the console sets one that
 * restores the terminal) and aborts: a scheduler that cannot allocate a queue entry has
 * no sensible way to go on, and a half-updated queue is worse than a clean crash.
 */
#ifndef JACKDAW_XALLOC_H
#define JACKDAW_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
/* xcalloc for a large array read at random (the simulator's per-node and per-task
 * arrays, a loaded workload's tasks and edges): from 2 MiB up, aligned to 2 MiB and
 * marked for transparent huge pages, so that a walk over gigabytes does not miss the
 * TLB on every read.  Freed with free(). */
void *xcalloc_huge(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);
/* Grows an array to at least `need` elements of `elem` bytes, doubling; returns the
 * (possibly moved) array and updates *cap. */
void *xgrow(void *ptr, size_t *cap, size_t need, size_t elem);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Called once before abort() on allocation failure; NULL for none. */
void xalloc_set_fatal_hook(void (*hook)(void));

#endif
