/*
 * hostfile — the hosts of a many-host cluster, as `jackdaw launch --hostfile FILE` reads
 * them: one daemon per line,
 *
 *     HOST [slots=N] [speed=F] [addr=A] [port=P]     # a comment
 *
 * HOST is what the remote shell is given (a host name, user@host, a namespace: the
 * remote shell decides); addr is the numeric IPv4 or IPv6 address the daemon binds
 * and the others reach it at (default: HOST resolved on the launching host); port
 * its TCP port (default: any free one); slots its executor slots (default: the
 * remote host's cores); speed its speed factor in (0, 1] (default 1).  A host may
 * appear on several lines: one daemon each.  Blank lines and comments are skipped.
 *
 * Pure parsing (the loader reads the file whole); called by core/client/remote.c and
 * the fuzz harness.  Errors name the file and the line: "hosts:3: slots=0 is not a
 * whole number from 1 to 100000".  Return convention: 0 or -EINVAL with *cause.
 */
#ifndef JACKDAW_HOSTFILE_H
#define JACKDAW_HOSTFILE_H

#include <stddef.h>
#include <stdint.h>

/* Long enough for any DNS name (253) and an ssh user@ prefix. */
#define HOSTFILE_NAME_MAX 320
#define HOSTFILE_ADDR_MAX 64
#define HOSTFILE_MAX_HOSTS 4096u

struct hostfile_entry {
    char name[HOSTFILE_NAME_MAX];
    char addr[HOSTFILE_ADDR_MAX]; /* "" when not given */
    int port;                     /* 0 when not given */
    uint32_t slots;               /* 0 when not given */
    double speed;                 /* 1.0 when not given */
    uint32_t line;                /* where it was declared, for messages */
};

struct hostfile {
    char *path;                   /* owned: the name messages give the file */
    struct hostfile_entry *hosts; /* owned, count entries, in the file's order */
    uint32_t count;
};

/* Parses `len` bytes of `text` called `name` (in messages).  An empty host list is an
 * error: a launch of nothing is a mistake. */
int hostfile_parse(struct hostfile *h, const char *name, const char *text, size_t len,
                   char **cause);
int hostfile_load(struct hostfile *h, const char *path, char **cause);
void hostfile_fini(struct hostfile *h);

/* Whether `text` is a numeric IPv4 or IPv6 address. */
int hostfile_is_address(const char *text);

#endif
