/*
 * log — levelled, structured diagnostics: "LEVEL who file:line message key=value".
 *
 * Owns the process-wide log level and the tag that names the process ("node3",
 * "client").  Called by every layer; user-facing errors (bad workload, cannot open a
 * file) are not logs: commands print those once, from their main.
 */
#ifndef JACKDAW_LOG_H
#define JACKDAW_LOG_H

enum log_level { LOG_LEVEL_DEBUG, LOG_LEVEL_INFO, LOG_LEVEL_WARN, LOG_LEVEL_ERROR, LOG_LEVEL_OFF };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Tag printed on every line; copied. */
void log_set_tag(const char *tag);
/* Parses "debug|info|warn|error|off"; returns -1 when unknown. */
int log_level_parse(const char *name);

void log_write(enum log_level level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define LOG_AT(lvl, ...)                                                          \
    do {                                                                          \
        if ((lvl) >= log_get_level())                                             \
            log_write((lvl), __FILE__, __LINE__, __VA_ARGS__);                    \
    } while (0)
#define log_debug(...) LOG_AT(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_info(...) LOG_AT(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_warn(...) LOG_AT(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_error(...) LOG_AT(LOG_LEVEL_ERROR, __VA_ARGS__)

#endif
