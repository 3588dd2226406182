/*
 * fs — see fs.h.
 */
#include "core/base/fs.h"

#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

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

int fs_write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
