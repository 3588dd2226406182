/*
 * hostopts — the flags that put a cluster on many hosts, which `launch` and `run`
 * share: a hostfile and its remote shell, or the Slurm allocation, and the addresses to
 * bind and advertise (core/client/remote.c does the work).  Owns the option-table entries
 * (HOSTOPTS_OPTS) and their checks; the strings stay the caller's argv.
 */
#ifndef JACKDAW_HOSTOPTS_H
#define JACKDAW_HOSTOPTS_H

#include <stdbool.h>

#include "core/client/launcher.h"
#include "core/client/opt.h"

struct hostopts {
    const char *hostfile, *rsh, *bind, *advertise, *remote_jackdaw, *remote_workdir;
    const char *collector;  /* the collector's host (through the remote shell) */
    bool slurm, per_task;
    double start_timeout;   /* seconds; 0: 30 */
};

#define HOSTOPTS_OPTS(h)                                                                        \
    {"hostfile", OPT_STRING, &(h)->hostfile,                                                    \
     "FILE  one daemon per line: HOST [slots=N] [speed=F] [addr=A] [port=P]"},                  \
    {"rsh", OPT_STRING, &(h)->rsh,                                                              \
     "CMD  remote shell for --hostfile, run as CMD HOST COMMAND-LINE (ssh -o BatchMode=yes)"},  \
    {"slurm", OPT_FLAG, &(h)->slurm, "  one daemon per node of this Slurm allocation (srun)"},  \
    {"per-task", OPT_FLAG, &(h)->per_task, "  with --slurm: one daemon per Slurm task"},       \
    {"bind", OPT_STRING, &(h)->bind,                                                            \
     "ADDR  listen on ADDR (local: 127.0.0.1; hostfile: each host's address)"},                 \
    {"advertise", OPT_STRING, &(h)->advertise,                                                  \
     "ADDR  the address clients reach a local cluster (or the collector) at"},                  \
    {"remote-jackdaw", OPT_STRING, &(h)->remote_jackdaw,                                        \
     "PATH  jackdaw on the hosts (default: this binary's path)"},                              \
    {"remote-workdir", OPT_STRING, &(h)->remote_workdir,                                        \
     "DIR  work directory on the hosts (default: the local one's path)"},                       \
    {"start-timeout", OPT_DOUBLE, &(h)->start_timeout,                                          \
     "S  bound on each step of a start on many hosts (30)"},                                     \
    {"collector", OPT_STRING, &(h)->collector,                                                  \
     "HOST  with --hostfile: run the collector there, not here (its trace stays there)"}

/* Whether the cluster goes on other hosts (its size then comes from them). */
static inline bool hostopts_remote(const struct hostopts *h)
{
    return h->hostfile || h->slurm;
}

/* Checks the combination (`local_sizing`: --nodes, --slots or --speeds were given);
 * prints "jackdaw WHO: …" and returns nonzero when it is wrong. */
int hostopts_finish(const struct hostopts *h, const char *who, bool local_sizing);
/* Copies the flags into a launch's options. */
void hostopts_apply(const struct hostopts *h, struct launch_options *o);

#endif
