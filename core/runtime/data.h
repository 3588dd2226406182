/*
 * data — the data plane part (data.c says how it works): the object store, fetches,
 * staging records and the network emulation.  Besides its table entry (part_data,
 * parts.h), the dispatcher in node.c calls it to stage a task's inputs before it runs
 * and to keep its output after; nothing else includes this header.
 */
#ifndef JACKDAW_RUNTIME_DATA_H
#define JACKDAW_RUNTIME_DATA_H

#include <stdbool.h>
#include <stdint.h>

struct data_plane;
struct ntask;
struct objstore;

/* Pins the task's inputs; fetches the missing ones.  Returns 1 when every input is
 * here (run it now), 0 when fetches are under way (node_staged follows), or a negative
 * errno when an input is unavailable (the caller fails the task). */
int data_stage(struct data_plane *d, struct ntask *t);
/* Releases the task's pins; a command's staged input files are removed. */
void data_release(struct data_plane *d, struct ntask *t);
/* Bytes of the inputs the task stages that are not in this node's store now (at least
 * 1 per missing input): 0 for a start without a fetch. */
uint64_t data_missing_bytes(struct data_plane *d, const struct ntask *t);
/* Whether the task is staging or running with pins here (a removal must wait for it). */
bool data_staging(const struct data_plane *d, uint64_t task);
/* A finished task's output becomes an object here, or its declared outputs objects:
 * 0 and their size in *size, or, when a declared output cannot be kept (missing after
 * the command exited 0, not a regular file, not storable), -errno and why in *why
 * (owned): the run failed, and none of its outputs stays. */
int data_keep_output(struct data_plane *d, struct ntask *t, uint64_t *size, char **why);
/* Stages a command's inputs as files in its work directory. */
int data_stage_files(struct data_plane *d, struct ntask *t, char **cause);
#define DATA_NO_HOLDER UINT32_MAX
struct task_input;
/* A live node other than this one that holds a copy of the input: its `node`, or for a
 * workload's initial object with --object-replicas K the K-1 nodes after it, where the
 * client put the copies.  DATA_NO_HOLDER when every copy's node is dead. */
uint32_t data_input_holder(struct data_plane *d, const struct task_input *in);
struct rbuf;
struct wbuf;
/* A client's FETCH_REQ (jackdaw get, --outputs), answered at once, outside the emulated
 * links (a user fetching results is not the workload's traffic): the FETCH_REP body, in
 * the peers' format, goes into b, a message the caller opened on the client's
 * connection; `who` names the client in a log line.  -EBADMSG for a malformed request
 * (nothing written). */
int data_client_reply(struct data_plane *d, struct rbuf *r, struct wbuf *b, const char *who);
/* The most bytes one FETCH_REQ may ask for. */
#define DATA_FETCH_CHUNK (256u << 10)
/* The object store (a client's initial objects, the stats reply). */
struct objstore *data_store(struct data_plane *d);

#endif
