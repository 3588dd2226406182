/*
 * submit — a job's submission (client_submit, client.h) and the names of its modes: the
 * workload's initial objects made or sent in, JOB_BEGIN, every task's record to its
 * shard owner, then the tasks to the nodes the mode picks, in growing waves.  It has no
 * state of its own: a submission lives on client_submit's stack and writes through the
 * client's connections and metadata store (client_impl.h).  The counts of files sent in
 * and their first failure are the client's, not the submission's, because the nodes'
 * answers land in client.c's message handler, the one place a reply is read.  Called by
 * core/client/job.c (the run and submit commands) and tui/session.c (the console); the
 * mode names by tools/cmd (run, submit), tui/form.c and job.c.
 *
 * Submission is two-phase because a task's metadata lives on its shard owner and the
 * task itself on the node the mode picks: if a task could start before every record of
 * its job existed, its completion could reach a child's shard ahead of the child's
 * record.  A barrier (MSG_SYNC to every node, answered in order on each connection)
 * after the records closes that window for the price of one round trip.
 */
#include "core/client/client_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/crc.h"
#include "core/base/xalloc.h"
#include "core/kvs/kvs.h"
#include "core/net/conn.h"
#include "core/net/frame.h"
#include "core/net/proto.h"

/* Tasks per SUBMIT message: big enough to amortise headers, small enough that a node
 * starts on the first tasks while the rest are still in flight. */
#define SUBMIT_CHUNK 2048
/* ... and a message closes past this many bytes, well inside FRAME_MAX_BODY. */
#define SUBMIT_CHUNK_BYTES (1u << 20)
/* Tasks per wave: the records of a wave are inserted and acknowledged before its tasks
 * are submitted, while the next wave's records are made (client_submit).  The waves grow
 * from SUBMIT_FIRST_WAVE, doubling, to SUBMIT_WAVE: the nodes start on the first tasks
 * after a few hundred records rather than after 16,384 (6,400 tasks of 1 ms waited 14 ms
 * for their first start, 7 % of their run), and later waves amortise the syncs. */
#define SUBMIT_WAVE (SUBMIT_CHUNK * 8)
#define SUBMIT_FIRST_WAVE 256u
/* Waves before the size reaches SUBMIT_WAVE: 256 · 2^6 = 16,384. */
#define SUBMIT_GROWING 6u

/* Where wave w starts, in task indices. */
static uint64_t wave_start(uint32_t w)
{
    if (w <= SUBMIT_GROWING)
        return (uint64_t)SUBMIT_FIRST_WAVE * ((1ull << w) - 1);
    return (uint64_t)SUBMIT_FIRST_WAVE * ((1ull << SUBMIT_GROWING) - 1) +
           (uint64_t)(w - SUBMIT_GROWING) * SUBMIT_WAVE;
}

/* The wave of task i. */
static uint32_t wave_of(uint32_t i)
{
    uint32_t w = 0;
    while (w < SUBMIT_GROWING && wave_start(w + 1) <= i)
        w++;
    if (w == SUBMIT_GROWING)
        w += (uint32_t)((i - wave_start(SUBMIT_GROWING)) / SUBMIT_WAVE);
    return w;
}
/* The most bytes of task encodings kept from the records for the submission (with
 * replicas, client_submit): about 2 million small tasks; bigger workloads encode the
 * rest twice rather than hold a copy of every command. */
#define SUBMIT_KEEP_BYTES (64u << 20)
_Static_assert(SUBMIT_KEEP_BYTES + WORKLOAD_MAX_CMD + 20ull * WORKLOAD_MAX_DEGREE + 64 < UINT32_MAX,
               "the kept encodings' offsets fit in 32 bits");
_Static_assert(SUBMIT_CHUNK_BYTES + WORKLOAD_MAX_CMD + 20ull * WORKLOAD_MAX_DEGREE + 64 <
                   FRAME_MAX_BODY,
               "a SUBMIT message closed past SUBMIT_CHUNK_BYTES fits in a frame");
_Static_assert(WORKLOAD_MAX_CMD < PROTO_MAX_STRING, "a daemon takes every command we send");

/* Hashed, a task ready at submission whose inputs are all initial objects goes straight
 * to the node its owner's placement would push it to when all its data is there
 * (placement_submit_node), as that owner would judge it with nothing finished yet: its
 * own length for a sleep task (at the owner's speed), the owner's slots sharing its
 * link.  Without this, on all-pairs under FLDS a node's slots waited for data at the
 * start while the tasks that read only its own files were still on their way to it. */
static uint32_t hashed(const struct client *c, const struct workload *wl, uint64_t key,
                       uint32_t i)
{
    uint32_t owner = task_key_owner(key, c->nodes);
    const struct workload_task *wt = &wl->tasks[i];
    if (wt->num_parents || !wt->num_inputs || c->placement.policy == PLACEMENT_WS ||
        c->placement.policy == PLACEMENT_MLB)
        return owner;
    struct placement_object small[16];
    struct placement_object *objs = wt->num_inputs > 16
                                        ? xmalloc(wt->num_inputs * sizeof *objs) : small;
    uint64_t all = 0;
    bool known = true;
    for (uint32_t k = 0; k < wt->num_inputs && known; k++) {
        const struct workload_object *o = &wl->objects[wt->inputs[k]];
        objs[k] = (struct placement_object){
            .node = workload_object_node(wl, wt->inputs[k], c->nodes), .bytes = o->bytes};
        known = !o->producer && objs[k].node < c->nodes;
        all += o->bytes;
    }
    const struct cluster_node *cn = &c->cl->nodes[owner];
    double speed = cn->speed > 0 ? cn->speed : 1;
    struct placement_input in = {
        .stealable = wt->stealable, .all_data_size = all, .self = owner,
        .est_task_length_s = wt->kind == TASK_SLEEP ? wt->duration_s / speed : 0,
        .inputs = objs, .num_inputs = wt->num_inputs, .link_share = cn->slots,
    };
    uint32_t node = known ? placement_submit_node(&c->placement, &in) : owner;
    if (objs != small)
        free(objs);
    /* A holder that is gone would take the task down with it. */
    return node < c->nodes && c->conns[node] ? node : owner;
}

static uint32_t target(const struct client *c, const struct workload *wl,
                       enum submit_mode mode, uint64_t key, uint32_t i)
{
    switch (mode) {
    case SUBMIT_DATA: {
        const struct workload_task *wt = &wl->tasks[i];
        /* Its first input's node, when that is known before the run. */
        uint32_t node = wt->num_inputs && !wl->objects[wt->inputs[0]].producer
                            ? workload_object_node(wl, wt->inputs[0], c->nodes)
                            : WORKLOAD_NO_NODE;
        return node < c->nodes ? node : task_key_owner(key, c->nodes);
    }
    case SUBMIT_ONE: return 0;
    case SUBMIT_ROUNDROBIN: return i % c->nodes;
    default: return hashed(c, wl, key, i);
    }
}

struct open_submit {
    struct wbuf *buf;       /* the connection's batch (stable while the message is open) */
    size_t at;              /* message offset for conn_msg_end */
    size_t count_at;        /* where the task count goes */
    uint32_t count;
};

static void close_submit(struct client *c, uint32_t node, struct open_submit *o)
{
    if (!o->buf)
        return;
    wbuf_patch_u32(o->buf, o->count_at, o->count);
    conn_msg_end(c->conns[node], o->at);
    o->buf = NULL;
}

/* Task i as it travels: in its metadata record (so that a node can run it again when
 * its holder dies) and in the submission.  *inputs is scratch, grown as needed. */
/* Scratch arrays for build_spec, grown as needed and reused task after task. */
struct spec_scratch {
    struct task_input *inputs;
    size_t inputs_cap;
    char **names;           /* borrowed strings of the workload */
    size_t names_cap;
    struct task_output *outputs; /* files borrowed from the workload */
    size_t outputs_cap;
    uint32_t *producers;
    size_t producers_cap;
};

static void build_spec(const struct client *c, const struct workload *wl, uint32_t job,
                       uint32_t i, struct task_spec *spec, struct spec_scratch *x)
{
    const struct workload_task *wt = &wl->tasks[i];
    *spec = (struct task_spec){
        .key = task_key(job, i), .kind = wt->kind,
        .flags = (uint8_t)((wt->stealable ? TASK_FLAG_STEALABLE : 0) |
                           (wt->num_children ? 0 : TASK_FLAG_LEAF)),
        .num_parents = wt->num_parents,
        .duration_s = wt->duration_s, .timeout_s = wt->timeout_s, .retries = wt->retries,
        .cores = wt->cores,
        .output_bytes = wt->output_bytes, .cmd = wt->cmd,
    };
    if (wt->num_inputs) {
        x->inputs = xgrow(x->inputs, &x->inputs_cap, wt->num_inputs, sizeof *x->inputs);
        for (uint32_t k = 0; k < wt->num_inputs; k++) {
            uint32_t obj = wt->inputs[k];
            /* A declared output's node and size are known once its producer ran. */
            const struct workload_object *o = &wl->objects[obj];
            x->inputs[k] = (struct task_input){
                .object = task_object_key(job, obj), .bytes = o->bytes,
                .node = o->producer ? WORKLOAD_NO_NODE : workload_object_node(wl, obj, c->nodes),
                .producer = o->producer};
        }
        spec->inputs = x->inputs;
        spec->num_inputs = wt->num_inputs;
    }
    /* A command finds each declared input under its name (its id, or its "as"). */
    if (wt->num_inputs && wt->kind == TASK_COMMAND) {
        x->names = xgrow(x->names, &x->names_cap, wt->num_inputs, sizeof *x->names);
        for (uint32_t k = 0; k < wt->num_inputs; k++)
            x->names[k] = wt->input_as && wt->input_as[k] ? wt->input_as[k]
                                                          : wl->objects[wt->inputs[k]].id;
        spec->names = x->names;
        spec->num_names = wt->num_inputs;
    }
    if (wt->num_outputs) {
        x->outputs = xgrow(x->outputs, &x->outputs_cap, wt->num_outputs, sizeof *x->outputs);
        for (uint32_t k = 0; k < wt->num_outputs; k++)
            x->outputs[k] = (struct task_output){
                .object = task_object_key(job, wt->outputs[k]),
                .file = wl->objects[wt->outputs[k]].file};
        spec->outputs = x->outputs;
        spec->num_outputs = wt->num_outputs;
    }
    /* Parents that declare outputs have no object of their own to read. */
    for (uint32_t k = 0; k < wt->num_parents; k++)
        if (wl->tasks[wt->parents[k]].num_outputs) {
            x->producers = xgrow(x->producers, &x->producers_cap, spec->num_producers + 1,
                                 sizeof *x->producers);
            x->producers[spec->num_producers++] = wt->parents[k];
        }
    spec->producers = x->producers;
}

/* A submission under way (client_submit): the tasks' encodings kept from their records
 * for the SUBMIT messages, and the messages open per node. */
struct submission {
    struct client *c;
    const struct workload *wl;
    uint32_t job;
    const uint32_t *where;  /* per task, the node it is submitted to (target) */
    /* With replicas each task's encoding goes twice, in its record and in the
     * submission: encoded once, kept here for the second (up to SUBMIT_KEEP_BYTES; the
     * tasks past it are encoded again).  kept_at[i] is where task i starts, kept_at[i +
     * 1] where it ends; `kept` tasks are in. */
    struct wbuf encoded, scratch;
    uint32_t *kept_at;      /* offsets below SUBMIT_KEEP_BYTES + one task */
    size_t kept_cap;
    uint32_t kept;
    struct spec_scratch x; /* for build_spec */
    uint64_t *keys;         /* scratch: a task's children */
    size_t keys_cap;
    struct open_submit *open; /* per node */
};

/* Sends the tasks of wave w to their nodes. */
static void submit_wave(struct submission *u, uint32_t w)
{
    struct client *c = u->c;
    uint32_t from = (uint32_t)wave_start(w);
    uint32_t to = wave_start(w + 1) < u->wl->count ? (uint32_t)wave_start(w + 1) : u->wl->count;
    for (uint32_t i = from; i < to; i++) {
        uint32_t node = u->where[i];
        if (!c->conns[node])
            continue;
        struct open_submit *o = &u->open[node];
        if (!o->buf) {
            o->buf = conn_msg_begin(c->conns[node], MSG_SUBMIT, &o->at);
            o->count_at = o->buf->len;
            wbuf_put_u32(o->buf, 0);
            o->count = 0;
        }
        if (i < u->kept) {
            wbuf_put(o->buf, u->encoded.data + u->kept_at[i], u->kept_at[i + 1] - u->kept_at[i]);
        } else {
            struct task_spec spec;
            build_spec(c, u->wl, u->job, i, &spec, &u->x);
            proto_put_task(o->buf, &spec);
        }
        /* By bytes too: 2,048 commands of 9 KB are more than a 16 MiB frame can hold
         * (a task is at most 64 KiB of command plus its inputs, see workload.h). */
        if (++o->count == SUBMIT_CHUNK || o->buf->len - o->at > SUBMIT_CHUNK_BYTES)
            close_submit(c, node, o);
    }
    /* Written out now, so that the nodes start on it while the next wave is made. */
    for (uint32_t k = 0; k < c->nodes; k++)
        close_submit(c, k, &u->open[k]);
    uv_run(&c->loop, UV_RUN_NOWAIT);
}

/* Bytes of a file sent before the client waits for the nodes to have handled them: the
 * client holds at most this much (per copy) in its connections' buffers, whatever the
 * file's size. */
#define PUT_WINDOW (8u << 20)

/*
 * Sends object k's file to the nodes that keep its copies, a chunk at a time, with its
 * CRC-32 after the last.  Streamed: one chunk read, then written to each copy's
 * connection, and every PUT_WINDOW bytes a sync waits until the nodes have taken them,
 * so the client's memory does not grow with the file.  A file that changed size since
 * the workload was read is refused (its bytes were declared).
 */
static int put_file(struct client *c, const struct workload *wl, uint32_t job, uint32_t k,
                    const uint32_t *nodes, uint32_t copies, int timeout_ms, char **cause)
{
    const struct workload_object *o = &wl->objects[k];
    FILE *in = fopen(o->path, "rb");
    if (!in) {
        *cause = xasprintf("object '%s': cannot open '%s': %s", o->id, o->path, strerror(errno));
        return -errno;
    }
    uint8_t *buf = xmalloc(PROTO_PUT_CHUNK);
    uint32_t crc = CRC32_INIT;
    uint64_t off = 0, since_sync = 0;
    int rc = 0;
    do {
        size_t want = o->bytes - off < PROTO_PUT_CHUNK ? (size_t)(o->bytes - off) : PROTO_PUT_CHUNK;
        size_t got = want ? fread(buf, 1, want, in) : 0;
        if (got < want) {
            rc = ferror(in) ? -EIO : -ENODATA;
            *cause = ferror(in) ? xasprintf("object '%s': cannot read '%s': %s", o->id,
                                            o->path, strerror(errno))
                                : xasprintf("object '%s': '%s' is shorter than its %llu bytes "
                                            "(it changed since the workload was read)",
                                            o->id, o->path, (unsigned long long)o->bytes);
            break;
        }
        crc = crc32_update(crc, buf, got);
        bool last = off + got == o->bytes;
        if (last && fgetc(in) != EOF) {
            rc = -EFBIG;
            *cause = xasprintf("object '%s': '%s' is longer than its %llu bytes (it changed "
                               "since the workload was read)", o->id, o->path,
                               (unsigned long long)o->bytes);
            break;
        }
        for (uint32_t j = 0; j < copies; j++) {
            struct conn *conn = c->conns[nodes[j]];
            if (!conn)
                continue;
            size_t at;
            struct wbuf *b = conn_msg_begin(conn, MSG_OBJECT_PUT, &at);
            wbuf_put_u64(b, task_object_key(job, k));
            wbuf_put_u64(b, o->bytes);
            wbuf_put_u64(b, off);
            wbuf_put_u32(b, (uint32_t)got);
            wbuf_put(b, buf, got);
            if (last) {
                uint8_t h[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8),
                                (uint8_t)crc};
                wbuf_put(b, h, sizeof h);
                c->puts_sent++;
            }
            conn_msg_end(conn, at);
        }
        off += got;
        since_sync += got;
        if (since_sync >= PUT_WINDOW && !last) {
            since_sync = 0;
            rc = client__sync_wait(c, client__sync_send(c, true), timeout_ms, cause);
            if (rc == 0 && c->put_failed)
                rc = -EIO;
        }
    } while (rc == 0 && off < o->bytes);
    free(buf);
    fclose(in);
    return rc;
}

int client_submit(struct client *c, const struct workload *wl, uint32_t job,
                  enum submit_mode mode, int timeout_ms, int64_t *t_submit, char **cause)
{
    /* The workload's initial data objects exist before the job starts, as the papers'
     * input files did: they are made (or sent in) first, and the clock starts after. */
    c->put_wl = wl;
    for (uint32_t k = 0; k < wl->object_count; k++) {
        uint32_t first = workload_object_node(wl, k, c->nodes);
        if (first >= c->nodes || wl->objects[k].producer)
            continue; /* a declared output is made by its task */
        /* With --object-replicas K, copies on the K-1 nodes after the first, the places
         * the data plane falls back to when the first is dead (data_input_holder). */
        uint32_t copies = c->object_copies < c->nodes ? c->object_copies : c->nodes;
        if (wl->objects[k].path) {
            uint32_t *nodes = xcalloc(copies, sizeof *nodes);
            for (uint32_t j = 0; j < copies; j++)
                nodes[j] = (first + j) % c->nodes;
            int rc = put_file(c, wl, job, k, nodes, copies, timeout_ms, cause);
            free(nodes);
            if (rc < 0) {
                if (c->put_failed && !*cause) {
                    *cause = c->put_failed;
                    c->put_failed = NULL;
                }
                c->put_wl = NULL;
                return rc;
            }
            continue;
        }
        for (uint32_t j = 0; j < copies; j++) {
            uint32_t node = (first + j) % c->nodes;
            if (!c->conns[node])
                continue;
            size_t at;
            struct wbuf *b = conn_msg_begin(c->conns[node], MSG_OBJECT_CREATE, &at);
            wbuf_put_u64(b, task_object_key(job, k));
            wbuf_put_u64(b, wl->objects[k].bytes);
            conn_msg_end(c->conns[node], at);
        }
    }
    if (wl->object_count) {
        int rc = client__barrier(c, timeout_ms, cause);
        c->put_wl = NULL; /* every answer came before the barrier's */
        if (rc < 0)
            return rc;
        /* Every node answers a file's last chunk before the barrier's reply. */
        if (c->put_failed) {
            *cause = c->put_failed;
            c->put_failed = NULL;
            return -EIO;
        }
        if (c->puts_done < c->puts_sent) {
            *cause = xasprintf("%u of %u files sent in were not acknowledged",
                               c->puts_sent - c->puts_done, c->puts_sent);
            return -EPROTO;
        }
    }
    /* Each node learns how many tasks it is about to get, so that it does not take to
     * stealing while its own are on the way (they follow after a barrier). */
    uint32_t *share = xcalloc(c->nodes, sizeof *share);
    uint32_t *where = xmalloc((wl->count ? wl->count : 1) * sizeof *where);
    for (uint32_t i = 0; i < wl->count; i++) {
        where[i] = target(c, wl, mode, task_key(job, i), i);
        share[where[i]]++;
    }
    *t_submit = clock_wall_ns();
    for (uint32_t i = 0; i < c->nodes; i++) {
        if (!c->conns[i])
            continue;
        size_t at;
        struct wbuf *b = conn_msg_begin(c->conns[i], MSG_JOB_BEGIN, &at);
        wbuf_put_u32(b, job);
        wbuf_put_u32(b, wl->count);
        wbuf_put_u32(b, share[i]);
        conn_msg_end(c->conns[i], at);
    }
    free(share);
    struct submission u = {.c = c, .wl = wl, .job = job, .where = where};
    wbuf_init(&u.encoded);
    wbuf_init(&u.scratch);
    u.open = xcalloc(c->nodes, sizeof *u.open);
    uint32_t nwaves = wl->count ? wave_of(wl->count - 1) + 1 : 0;
    /* Per wave, the sync after its records, and the last wave whose records must be in
     * before its tasks go: its own, or a later one that holds a child of one of them
     * (a task that ends appends to its children's records). */
    uint64_t *token = xcalloc(nwaves ? nwaves : 1, sizeof *token);
    uint32_t *reach = xcalloc(nwaves ? nwaves : 1, sizeof *reach);
    uint32_t inserted = 0, next = 0;
    int rc = 0;
    for (uint32_t i = 0; i < wl->count; i++) {
        const struct workload_task *wt = &wl->tasks[i];
        struct wbuf *into = &u.encoded;
        size_t spec_at = 0;
        if (c->survives) {
            struct task_spec spec;
            build_spec(c, wl, job, i, &spec, &u.x);
            if (u.kept < i || u.encoded.len > SUBMIT_KEEP_BYTES) {
                into = &u.scratch;
                wbuf_reset(into);
            }
            spec_at = into->len;
            proto_put_task(into, &spec);
            if (i == 0 && into == &u.encoded && wl->count > 1) {
                /* Room for all, by the first one's size (up to the bound), at once: a
                 * buffer that doubles copies itself into fresh pages each time. */
                size_t all = (size_t)wl->count * u.encoded.len;
                wbuf_reserve(&u.encoded, (all < SUBMIT_KEEP_BYTES ? all : SUBMIT_KEEP_BYTES) -
                                             u.encoded.len);
            }
            if (into == &u.encoded) {
                u.kept_at = xgrow(u.kept_at, &u.kept_cap, (size_t)u.kept + 2, sizeof *u.kept_at);
                u.kept_at[u.kept] = (uint32_t)spec_at;
                u.kept_at[++u.kept] = (uint32_t)u.encoded.len;
            }
        }
        struct tmd t = {
            .key = task_key(job, i), .num_parents = wt->num_parents,
            .num_wait_parent = wt->num_parents, .t_submit = *t_submit,
        };
        if (wt->output_bytes)
            tmd_late_mut(&t)->data_size = wt->output_bytes;
        t.holder = where[i];
        if (wt->num_children > u.keys_cap) {
            u.keys_cap = wt->num_children;
            u.keys = xrealloc(u.keys, u.keys_cap * sizeof *u.keys);
        }
        uint32_t w = wave_of(i);
        reach[w] = reach[w] > w ? reach[w] : w;
        for (uint32_t k = 0; k < wt->num_children; k++) {
            u.keys[k] = task_key(job, wt->children[k]);
            uint32_t cw = wave_of(wt->children[k]);
            reach[w] = reach[w] > cw ? reach[w] : cw;
        }
        tmd_set_children(&t, u.keys, wt->num_children);
        /* The spec is what a live node runs again when the holder dies; without replicas
         * the record dies with its owner too, so it would only cost memory and time. */
        if (c->survives)
            tmd_set_spec(&t, into->data + spec_at, (uint32_t)(into->len - spec_at));
        kvs_insert(c->kvs, &t);
        tmd_fini(&t);
        /* A wave's records are in: a sync behind them, and the waves whose records are
         * all in their primaries go, so that the nodes run the first tasks while the
         * rest are still encoded and inserted.  The sync does not wait for the backups:
         * a task's end is reported only once its backups have its final status, which
         * follows its insert on the same link; and the barrier that ends the submission
         * does wait, so a primary lost before its backups had a wave fails the submit. */
        /* Looked for at wave ends only: a poll of the loop every 64 tasks made flushed
         * the records in smaller writes, and 200,000 noops ran 7 % slower. */
        if (i + 1 == wave_start(w + 1) || i + 1 == wl->count) {
            token[inserted++] = client__sync_send(c, true);
            uv_run(&c->loop, UV_RUN_NOWAIT);
            while (next < inserted && reach[next] < inserted && !c->lost &&
                   client__synced(c, &token[reach[next]]))
                submit_wave(&u, next++);
        }
    }
    while (rc == 0 && next < nwaves) {
        rc = client__sync_wait(c, token[reach[next]], timeout_ms, cause);
        if (rc == 0)
            submit_wave(&u, next++);
    }
    free(token);
    free(reach);
    free(u.keys);
    free(u.open);
    free(where);
    wbuf_fini(&u.scratch);
    wbuf_fini(&u.encoded);
    free(u.kept_at);
    free(u.x.inputs);
    free(u.x.names);
    free(u.x.outputs);
    free(u.x.producers);
    return rc < 0 ? rc : client__barrier(c, timeout_ms, cause);
}
