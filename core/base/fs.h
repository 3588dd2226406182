/*
 * fs — small file-system helpers the daemon, the object store, the key file and the
 * launcher share.  No state.
 */
#ifndef JACKDAW_FS_H
#define JACKDAW_FS_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p: creates `path` and any missing parents with `mode`.  0 or -errno; on error
 * *failed (when not NULL) is set to an owned copy of the component that failed. */
int fs_mkdirs(const char *path, mode_t mode, char **failed);

/* Writes all n bytes, retrying short writes and EINTR.  0 or -errno. */
int fs_write_all(int fd, const void *buf, size_t n);

#endif
