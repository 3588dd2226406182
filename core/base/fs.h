/*
 * fs — small file-system helpers the daemon and the launcher share.  No state.
 */
#ifndef JACKDAW_FS_H
#define JACKDAW_FS_H

#include <sys/types.h>

/* mkdir -p: creates `path` and any missing parents with `mode`.  0 or -errno; on error
 * *failed (when not NULL) is set to an owned copy of the component that failed. */
int fs_mkdirs(const char *path, mode_t mode, char **failed);

#endif
