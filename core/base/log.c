/*
 * log — see log.h.  One fprintf per line so that lines from concurrent processes
 * sharing a log file do not interleave mid-line.
 */
#include "core/base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static enum log_level current = LOG_LEVEL_WARN;
static char tag[32] = "jackdaw";

void log_set_level(enum log_level level)
{
    current = level;
}

enum log_level log_get_level(void)
{
    return current;
}

void log_set_tag(const char *t)
{
    snprintf(tag, sizeof tag, "%s", t);
}

int log_level_parse(const char *name)
{
    static const char *names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 5; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

void log_write(enum log_level level, const char *file, int line, const char *fmt, ...)
{
    static const char *names[] = {"DEBUG", "INFO", "WARN", "ERROR", "OFF"};
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    const char *base = strrchr(file, '/');
    fprintf(stderr, "%02d:%02d:%02d.%03ld %-5s %s %s:%d %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
            ts.tv_nsec / 1000000, names[level], tag, base ? base + 1 : file, line, msg);
}
