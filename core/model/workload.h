/*
 * workload — a DAG of tasks and the data objects they start from, read from JSON Lines
 * and checked before anything runs.
 *
 * Owns the parsed tasks and objects, their id strings, parent, child and input index
 * lists.  Called by the client commands (run, submit), the generators and their tests,
 * and, later, the analysis tools.
 *
 * Format (one JSON object per line; blank lines and lines starting with '#' skipped).
 * A task line:
 *   id (string, unique, required), kind ("noop" | "sleep" | "command", default noop),
 *   duration_s (number >= 0, sleep only; required for sleep), cmd (string, command
 *   only; required for command), output_bytes (integer >= 0, default 0),
 *   parents (array of task ids, default []), inputs (array of object ids, default []),
 *   stealable (boolean, default true), timeout_s (number in (0, TASK_TIMEOUT_MAX_S],
 *   any kind; default none: the client's --task-timeout, else no limit), retries
 *   (integer 0..TASK_RETRIES_MAX), cores (integer 1..TASK_CORES_MAX, default 1: the
 *   slots the task takes while it runs), outputs (command only: an array of
 *   {"object": id, "file": name}, the files the command writes in its directory, each
 *   collected after it exits 0 as a new object with that id; a task that lists such an
 *   object in its inputs depends on the task that writes it, as on a parent).
 * An object line, an initial data object (an input file) and where it lives:
 *   object (string, its id, required), bytes (integer >= 0; required without path),
 *   path (a real file to send: its size is the object's bytes, which must agree when
 *   both are given; relative to the workload file's directory; checked readable when
 *   parsed), node (integer >= 0, or "spread"; default "spread").
 * Any other key is refused, naming it; a line holding both "id" and "object" is
 * refused.  Task and object ids share one namespace (an id names one thing, so messages
 * and traces are never ambiguous).  A parent may be listed before or after its child,
 * an object before or after the tasks that read it.  Cycles are refused, naming one
 * task on the cycle.
 *
 * Limits (share/man/jackdaw-workload.5 documents them): a line holds at most
 * WORKLOAD_MAX_LINE bytes, and a longer one is refused as soon as it passes the limit,
 * so a binary file or /dev/zero costs at most that much memory; an id (task, object,
 * parent or input name) at most WORKLOAD_MAX_ID bytes, a cmd at most WORKLOAD_MAX_CMD;
 * duration_s at most WORKLOAD_MAX_DURATION_S, output_bytes and an object's bytes at
 * most WORKLOAD_MAX_BYTES; a task has at most WORKLOAD_MAX_DEGREE parents, inputs and
 * children together.  Each is below what the later stages take (the protocol, the
 * collector's names, exec), so a workload the parser accepts never fails there for
 * its size.  Messages quote strings cut to TEXT_SHOWN bytes (core/base/text.h).
 *
 * A task's input data is its parents' outputs plus its `inputs` objects.  The parser
 * does not know the cluster, so pinned object nodes are checked later, by
 * workload_check_nodes, once the client knows how many nodes there are.
 *
 * Return convention (core/): 0, or a negative errno with *cause set to an owned string
 * "FILE:LINE: reason" that the command prints once.
 */
#ifndef JACKDAW_WORKLOAD_H
#define JACKDAW_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/model/task.h"

/* An object line's "node":"spread": the object is placed by workload_object_node. */
#define WORKLOAD_NODE_SPREAD (-1)
/* What workload_object_node returns for a bad argument or a node outside the cluster. */
#define WORKLOAD_NO_NODE UINT32_MAX
/*
 * A workload with objects holds at most this many objects and this many tasks: the
 * runtime names tasks and objects in one 32-bit index space (objects in its top half),
 * so each gets 31 bits.  A workload without objects keeps the full task range.
 */
#define WORKLOAD_MAX_OBJECTS 0x7fffffffu

/*
 * One line: room for a command written with every byte escaped (\u00XX, 6 bytes each)
 * and for a task with millions of parents (generators write fan-ins that wide), yet a
 * bound on what a line without a newline can make the reader hold.
 */
#define WORKLOAD_MAX_LINE (64u << 20)
/* Ids travel to the collector (TASK_NAMES, 4 KiB a name on the wire, 4,096 names a
 * message within the 16 MiB frame) and are printed in every message about a task. */
#define WORKLOAD_MAX_ID 1024u
/* A command is one argument of /bin/sh -c: Linux takes at most 128 KiB for one
 * (MAX_ARG_STRLEN), and the protocol 1 MiB (PROTO_MAX_STRING).  A longer command
 * belongs in a script. */
#define WORKLOAD_MAX_CMD 65536u
/*
 * Parents, inputs and children of one task together.  The metadata store sends a
 * task's record whole (children 8 bytes each, finished parents 20) and a ready task
 * travels with all its inputs (20 bytes each) in one message of at most 16 MiB
 * (FRAME_MAX_BODY); 2^19 of them take 10 MiB.
 */
#define WORKLOAD_MAX_DEGREE (1u << 19)
/* About 11.6 days: a sleep task emulates real work, and more than that is a typo (or an
 * exponent) that would overflow the executor's millisecond timers. */
#define WORKLOAD_MAX_DURATION_S 1e6
/* 1 PiB for one task's output or one object: the daemons make and move these bytes, and
 * more than a petabyte in one object is a mistake.  The sum of a task's input bytes is
 * bounded too (INT64_MAX: traces and the protocol carry it as a signed 64-bit count). */
#define WORKLOAD_MAX_BYTES (UINT64_C(1) << 50)
/* An object's path: PATH_MAX, with room for the workload's directory before it. */
#define WORKLOAD_MAX_PATH 4096u

struct workload_object {
    char *id;               /* owned; first member, as in workload_task (the id table) */
    uint64_t bytes;         /* declared, or its file's size when it has a path */
    /* owned; a real file whose bytes the client sends into the data plane at
     * submission (relative paths start at the workload file's directory); NULL: the
     * daemons make `bytes` bytes of synthetic content */
    char *path;
    int32_t node;           /* >= 0, or WORKLOAD_NODE_SPREAD */
    uint32_t line;          /* 1-based line in the source */
    /* A declared output (a task's `outputs`): its task's index + 1, and the file (owned)
     * the task writes in its directory; bytes is 0, as it is not known before the run.
     * 0 and NULL for an initial object. */
    uint32_t producer;
    char *file;
};

struct workload_task {
    char *id;               /* owned */
    uint8_t kind;           /* enum task_kind */
    bool stealable;
    double duration_s;
    double timeout_s;       /* time limit in seconds from its start; 0: none */
    uint32_t retries;       /* runs again after failed ones, 0..TASK_RETRIES_MAX */
    bool has_retries;       /* `retries` was given (else --retries may set it) */
    uint32_t cores;         /* slots it takes while it runs, 1..TASK_CORES_MAX (0 in a
                               task built by hand means 1) */
    char *cmd;              /* owned; NULL unless TASK_COMMAND */
    uint64_t output_bytes;
    uint32_t num_parents;
    uint32_t *parents;      /* owned (or in workload.edges); indices into workload.tasks */
    uint32_t num_children;
    uint32_t *children;     /* owned (or in workload.edges); indices into workload.tasks */
    uint32_t num_inputs;
    uint32_t *inputs;       /* owned; indices into workload.objects, as listed; NULL if none */
    char **input_as;        /* owned; per input, the name a command wants it under ("as"),
                               or NULL for its id; NULL when no input has one */
    uint32_t num_outputs;
    uint32_t *outputs;      /* owned; indices into workload.objects of the files a command
                               declares it writes, as listed; NULL if none */
    uint32_t line;          /* 1-based line in the source */
};

struct workload {
    struct workload_task *tasks; /* owned, `count` entries in file order */
    uint32_t count;
    uint32_t *topo;         /* owned; indices in a topological order (parents first) */
    char *name;             /* owned; the file name, or "<string>" */
    struct workload_object *objects; /* owned, `object_count` entries in file order;
                                      * NULL when the workload declares none */
    uint32_t object_count;
    /* owned; when not NULL, every task's parents and children arrays point into it
     * (workload_load packs them), and workload_fini frees it rather than each; NULL in a
     * workload built by hand, whose tasks own theirs */
    uint32_t *edges;
};

/* Reads and checks a workload file ("-" is stdin). */
int workload_load(struct workload *wl, const char *path, char **cause);
/* Same, from an open stream; `name` labels errors. */
int workload_read(struct workload *wl, FILE *in, const char *name, char **cause);
/* Same, from memory (tests). */
int workload_parse(struct workload *wl, const char *text, size_t len, const char *name,
                   char **cause);
void workload_fini(struct workload *wl);

/* Index of the task with this id, or -1 (a scan). */
int64_t workload_find(const struct workload *wl, const char *id);
/* Index of the object with this id, or -1 (a scan). */
int64_t workload_find_object(const struct workload *wl, const char *id);
/* Sum of duration_s over sleep tasks: the work at speed 1.0. */
double workload_total_work(const struct workload *wl);
/* Bytes of data the workload declares: its objects and its tasks' outputs (a command's
 * captured output is not known before it runs and counts 0).  Saturates at
 * UINT64_MAX / 2. */
uint64_t workload_data_bytes(const struct workload *wl);
/* The most cores a task asks for (0 for an empty workload), and in *widest (when not
 * NULL) the index of the first task that asks for them. */
uint32_t workload_max_cores(const struct workload *wl, uint32_t *widest);
/* Gives every task without a `retries` of its own this one (the client's --retries). */
void workload_default_retries(struct workload *wl, uint32_t retries);
/* Gives every task without a time limit this one (the client's --task-timeout), which
 * task_timeout_valid must accept. */
void workload_default_timeout(struct workload *wl, double timeout_s);
/*
 * Checks every pinned object against a cluster of `nodes` nodes (numbered from 0);
 * -EINVAL with "FILE:LINE: object 'x': node 9 is outside the cluster (8 nodes, 0-7)"
 * for the first one outside.  The client calls it before submitting.
 */
int workload_check_nodes(const struct workload *wl, uint32_t nodes, char **cause);
/*
 * The node holding object `object_index` in a cluster of `nodes` nodes: its own node
 * when pinned, else round-robin over the object index (object_index % nodes), which
 * spreads the objects uniformly as in the papers' experiments and gives every client
 * and node the same answer without any exchange.  WORKLOAD_NO_NODE for a bad argument
 * or a pinned node outside the cluster (which workload_check_nodes refuses).
 */
uint32_t workload_object_node(const struct workload *wl, uint32_t object_index, uint32_t nodes);

/* Writes one task as a JSON line in the format above; `wl` names its parents and inputs
 * and may be NULL when it has neither. */
int workload_write_task(FILE *out, const struct workload_task *task, const struct workload *wl);
/* Returns the id of the k-th parent or input of the task being written; the string need
 * only live until the next call. */
typedef const char *(*workload_name_fn)(void *ctx, uint32_t k);
/*
 * Same, for writers that never hold a whole workload (generators stream 10^7 tasks, and
 * one task may have every other task as parent): parent k is named parent_id(ctx, k) and
 * input k input_id(ctx, k); task->parents and task->inputs are not read.  A callback may
 * be NULL when its count is 0.
 */
int workload_write_task_named(FILE *out, const struct workload_task *task,
                              workload_name_fn parent_id, workload_name_fn input_id, void *ctx);
/* Writes one object line; "node" is always written, "spread" included.  A declared
 * output has no line of its own (its task's line declares it): -EINVAL. */
int workload_write_object(FILE *out, const struct workload_object *object);

#endif
