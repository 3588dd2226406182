/*
 * hostopts — see hostopts.h.
 */
#include "core/client/hostopts.h"

#include <stdio.h>

int hostopts_finish(const struct hostopts *h, const char *who, bool local_sizing)
{
    if (h->hostfile && h->slurm) {
        fprintf(stderr, "jackdaw %s: give --hostfile or --slurm, not both\n", who);
        return 1;
    }
    if (hostopts_remote(h) && local_sizing) {
        fprintf(stderr, "jackdaw %s: --nodes, --slots and --speeds do not go with %s: the %s "
                        "says\n",
                who, h->hostfile ? "--hostfile" : "--slurm", h->hostfile ? "hostfile" : "allocation");
        return 1;
    }
    if (h->collector && !h->hostfile) {
        fprintf(stderr, "jackdaw %s: --collector HOST goes with --hostfile (it is started "
                        "through the same remote shell)\n",
                who);
        return 1;
    }
    if ((h->rsh && !h->hostfile) || (h->per_task && !h->slurm) ||
        ((h->remote_jackdaw || h->remote_workdir) && !hostopts_remote(h))) {
        fprintf(stderr, "jackdaw %s: --rsh goes with --hostfile, --per-task with --slurm, "
                        "--remote-jackdaw and --remote-workdir with either\n",
                who);
        return 1;
    }
    if (h->start_timeout != 0 && !(h->start_timeout > 0 && h->start_timeout <= 3600)) {
        fprintf(stderr, "jackdaw %s: --start-timeout is seconds in (0, 3600]\n", who);
        return 1;
    }
    return 0;
}

void hostopts_apply(const struct hostopts *h, struct launch_options *o)
{
    o->hostfile = h->hostfile;
    o->rsh = h->rsh;
    o->slurm = h->slurm;
    o->per_task = h->per_task;
    o->bind = h->bind;
    o->advertise = h->advertise;
    o->remote_jackdaw = h->remote_jackdaw;
    o->remote_workdir = h->remote_workdir;
    o->start_timeout_ms = (int)(h->start_timeout * 1000);
    o->collector_host = h->collector;
}
