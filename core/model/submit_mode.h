/*
 * submit_mode — where a client puts each task of a job when it submits it (`--mode`),
 * and the names the mode goes by on the command line, on the wire and in a trace.
 *
 * It lives in core/model rather than with the client that acts on it because the trace
 * layer records a job's mode (the collector's JOB_SUBMIT, trace/format/wire.h) and must
 * check it without reaching up into core/client, and the simulator's command reads it
 * back from a trace.
 *
 * Owns no state.  Called by core/client (submit), tools/cmd (run, submit, sim), the
 * console's form and trace/format/wire and trace/collector/jobspool (which check what
 * a peer or a file says).
 */
#ifndef JACKDAW_SUBMIT_MODE_H
#define JACKDAW_SUBMIT_MODE_H

#include <stdbool.h>

enum submit_mode {
    SUBMIT_HASHED = 0,      /* each task to its metadata owner: task and record together */
    SUBMIT_ONE = 1,         /* every task to node 0: only stealing spreads them */
    SUBMIT_ROUNDROBIN = 2,  /* task i to node i mod N */
    /* Owner computes: each task to the node that holds its first input object (the
     * data it updates, in the tiled generators), as PaRSEC places work by the 2D
     * block-cyclic distribution (paper 004); a task without a placed input is hashed. */
    SUBMIT_DATA = 3,
};

/* The longest name of a mode, without its NUL ("roundrobin"): a bound for readers of
 * outside bytes, which refuse anything longer before comparing. */
#define SUBMIT_MODE_NAME_MAX 10

/* The mode a user names, in any case; -1 for none. */
int submit_mode_parse(const char *name);
/* The mode's one spelling (lower case, static); "unknown" out of range. */
const char *submit_mode_name(enum submit_mode mode);
/* True when name is exactly a mode's spelling: what a peer or a file must send, so that
 * what is recorded reads back the same. */
bool submit_mode_is_name(const char *name);

#endif
