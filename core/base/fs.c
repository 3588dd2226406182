/*
 * fs — see fs.h.
 */
#include "core/base/fs.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/base/xalloc.h"

int fs_mkdirs(const char *path, mode_t mode, char **failed)
{
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s)
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, mode) < 0 && errno != EEXIST) {
            rc = -errno;
            if (failed)
                *failed = xstrdup(p);
            break;
        }
        *s = c;
        if (!c)
            break;
    }
    free(p);
    return rc;
}
