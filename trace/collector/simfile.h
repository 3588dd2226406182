/*
 * simfile — the trace file of a simulated run (`jackdaw sim --trace`, issue 20): the
 * simulator's events (core/sim/sim.h) written as a collector writes a real run's, so
 * that `report`, `compare`, `diff`, `trace verify` and `console --replay` read it
 * unchanged.
 *
 * The simulator calls one struct trace_sink per simulated node, as a node daemon calls
 * its tracer; here each node numbers its events (seq from 0) and times them from the run
 * header's start_ns (time_ns = wall - start_ns), and its events are encoded into Avro
 * blocks (trace/format/block.h) that are appended whole to a file opened with
 * collect_file_open, under the node's id.  The job's JOB_SUBMIT and TASK_NAMES records
 * are the file's own (node -1), written by collect_file_append_job and
 * collect_file_append_names as the collector writes them when a client submits, at time
 * 0: the simulated client submits at simulated time 0.
 *
 * The run header is a collector's (collector.h: format, run_id, start_ns, created,
 * nodes [{id, host, port, slots, speed}], config.node_args, workload {name, digest})
 * plus "simulated": true and "simulation": {latency_s, bandwidth_Bps, sample_s, seed,
 * mode}.  Hosts are "sim" and ports 0.
 *
 * Memory: a node daemon encodes its own blocks, but a simulator may have 10^6 nodes and
 * a deflate stream costs ~256 KiB, so events wait per node as plain records and one
 * encoder makes them into blocks when SIMFILE_PENDING_EVENTS of them wait in all (and
 * at close): a node's blocks stay in its own order, and blocks of different nodes
 * interleave as they do in a collector's file.
 *
 * Owns the collect_file, the sinks and the pending events.  The sinks' callbacks return
 * nothing: the first error (encoding, writing) is kept, later events are dropped, and
 * simfile_close returns it.  Called by tools/cmd/cmd_sim.c on one thread.  Return
 * convention: 0 or a negative errno, with *cause (malloc'd, naming the file).
 */
#ifndef JACKDAW_TRACE_SIMFILE_H
#define JACKDAW_TRACE_SIMFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model/trace_kind.h"
#include "core/model/workload.h"

/* Events kept in memory, all nodes together, before they are encoded and written. */
#define SIMFILE_PENDING_EVENTS 65536u

/* What the header says of the run; strings and arrays borrowed for the call. */
struct simfile_run {
    uint32_t nodes;
    uint32_t slots;             /* per node, unless node_slots */
    const uint32_t *node_slots; /* `nodes` entries, or NULL: `slots` each */
    const double *speeds;       /* `nodes` entries, or NULL: all 1.0 */
    const char *const *node_args; /* the flags a real run would give its daemons */
    size_t n_node_args;
    const char *workload_name;  /* may be NULL */
    const char *workload_digest; /* may be NULL or "" */
    int64_t start_ns;           /* wall time of simulated time 0 */
    /* the simulation's own parameters */
    double latency_s, bandwidth_Bps, sample_s;
    uint64_t seed;
    const char *mode;           /* submission mode, as run names it */
};

struct simfile;

/*
 * Creates the trace at path with the run's header.  The file must not exist (-EEXIST:
 * a simulated run never resumes or overwrites a trace).  Other refusals are
 * collect_file_open's.
 */
int simfile_open(struct simfile **out, const char *path, const struct simfile_run *run,
                 char **cause);

/* Records the job as the collector does for a client's submission: JOB_SUBMIT (tasks,
 * workload name, digest, the run's mode) and TASK_NAMES (every task's id), at time 0.  Call once,
 * before the simulation's events. */
int simfile_record_job(struct simfile *f, uint32_t job, const struct workload *wl,
                       const char *digest, char **cause);

/* The `nodes` sinks, node i's at index i (owned by f, valid until simfile_close). */
const struct trace_sink *const *simfile_sinks(const struct simfile *f);

/* Events the sinks took so far (all nodes). */
uint64_t simfile_events(const struct simfile *f);

/*
 * Encodes what waits, writes, syncs, closes and frees.  0, or the first error the sinks
 * met or that of the last write, with *cause.  NULL is a no-op.
 */
int simfile_close(struct simfile *f, char **cause);

#endif
