/*
 * report cli — see cli.h.
 */
#include "tools/report/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>


static bool is_stdout(const char *path)
{
    return !path || strcmp(path, "-") == 0;
}

FILE *report_cli_open(const char *cmd, const char *path)
{
    if (is_stdout(path))
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "jackdaw %s: cannot write '%s': %s\n", cmd, path, strerror(errno));
    return f;
}

int report_cli_close(const char *cmd, const char *path, FILE *f)
{
    bool bad = ferror(f) != 0;
    if (is_stdout(path))
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "jackdaw %s: cannot write '%s': %s\n", cmd,
                is_stdout(path) ? "standard output" : path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}
