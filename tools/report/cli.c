/*
 * report cli — see cli.h.
 */
#include "tools/report/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "core/base/xalloc.h"

char **report_cli_rewrite(int argc, char **argv)
{
    char **copy = xcalloc((size_t)argc + 1, sizeof *copy);
    bool options = true;
    for (int i = 0; i < argc; i++) {
        copy[i] = argv[i];
        if (i == 0 || !options)
            continue;
        if (strcmp(argv[i], "--") == 0) {
            options = false;
        } else if (strcmp(argv[i], "-o") == 0) {
            copy[i] = (char *)"--output";
            if (i + 1 < argc) {
                i++;
                copy[i] = argv[i]; /* its value stays a value, even "-o" */
            }
        }
    }
    return copy;
}

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
