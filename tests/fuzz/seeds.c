/*
 * seeds — writes the seed inputs of the fuzz corpora (tests/fuzz/corpus/NAME/seed-*)
 * with the encoders the daemons use, so that each harness starts from valid messages
 * and, once replayed by `make fuzz-replay`, checks them too.  Run by `make fuzz-seeds`
 * after a payload changes shape (the seeds are committed; inputs the fuzzers found,
 * crash-* files, sit beside them and are never rewritten).  Deterministic: the same
 * sources write the same bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "core/kvs/kvs.h"
#include "core/kvs/tmd.h"
#include "core/model/task.h"
#include "core/net/conn.h"
#include "core/net/frame.h"
#include "core/net/handshake.h"
#include "core/net/proto.h"
#include "tests/fuzz/fuzz.h"
#include "tests/unit/event_cases.h"
#include "trace/format/event.h"
#include "trace/format/wire.h"

/* LLVMFuzzerTestOneInput is declared by fuzz.h for the harnesses; nothing here calls it. */

static const char *root;

static void save(const char *harness, const char *name, const struct wbuf *b)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, harness);
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/seed-%s", root, harness, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* ---- frame -------------------------------------------------------------------------- */

static void frame_seeds(void)
{
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u8(&b, 0); /* the authenticated limit */
    struct frame_batch fb;
    frame_batch_init(&fb);
    for (uint32_t i = 0; i < 3; i++) {
        size_t at = frame_msg_begin(&fb, MSG_LOAD_QUERY);
        wbuf_put_u32(&fb.buf, i);
        frame_msg_end(&fb, at);
    }
    size_t at = frame_msg_begin(&fb, MSG_IDLE);
    frame_msg_end(&fb, at);
    frame_batch_seal(&fb);
    wbuf_put(&b, fb.buf.data, fb.buf.len);
    frame_batch_fini(&fb);
    save("frame", "batch", &b);

    wbuf_reset(&b);
    wbuf_put_u8(&b, 1); /* before the handshake */
    uint8_t nonce[AUTH_NONCE_BYTES] = {0};
    frame_write_single(&b, CONN_MSG_CHALLENGE, nonce, sizeof nonce);
    frame_write_single(&b, MSG_SHUTDOWN, NULL, 0);
    save("frame", "two-frames", &b);
    wbuf_fini(&b);
}

/* ---- handshake ---------------------------------------------------------------------- */

static void handshake_seeds(void)
{
    struct auth_key key;
    uint8_t server[AUTH_NONCE_BYTES], client[AUTH_NONCE_BYTES];
    fuzz_hs_key(&key);
    fuzz_hs_nonces(server, client);
    struct wbuf b, p;
    wbuf_init(&b);
    wbuf_init(&p);

    /* The server's view: a client's RESPONSE, then its first message. */
    for (uint8_t role = 1; role <= 3; role++) {
        wbuf_reset(&b);
        wbuf_reset(&p);
        wbuf_put_u8(&b, 0);
        struct handshake_response me = {.role = role, .id = 2};
        memcpy(me.client_nonce, client, sizeof client);
        handshake_put_response(&p, &key, server, &me);
        frame_write_single(&b, CONN_MSG_RESPONSE, p.data, p.len);
        uint8_t req[4] = {1, 0, 0, 0};
        frame_write_single(&b, MSG_STATS_QUERY, req, sizeof req);
        char name[32];
        snprintf(name, sizeof name, "server-role-%u", role);
        save("handshake", name, &b);
    }

    /* The client's view: CHALLENGE, ACCEPT, then a message; and the same forged. */
    for (uint8_t forge = 0; forge <= 1; forge++) {
        wbuf_reset(&b);
        wbuf_reset(&p);
        wbuf_put_u8(&b, FUZZ_HS_CLIENT | (forge ? FUZZ_HS_FORGE : 0));
        handshake_put_challenge(&p, server);
        frame_write_single(&b, CONN_MSG_CHALLENGE, p.data, p.len);
        wbuf_reset(&p);
        handshake_put_accept(&p, &key, server, client);
        if (forge)
            memset(p.data, 0, p.len); /* the harness writes the right MAC */
        frame_write_single(&b, CONN_MSG_ACCEPT, p.data, p.len);
        frame_write_single(&b, MSG_SYNC_REPLY, "\1\0\0\0\0\0\0\0", 8);
        save("handshake", forge ? "client-forged" : "client", &b);
    }
    wbuf_fini(&b);
    wbuf_fini(&p);
}

/* ---- proto -------------------------------------------------------------------------- */

/* The harness's codec numbers (fuzz_proto.c's enum codec). */
enum { C_TASK, C_TASK_END, C_STATS, C_TMD, C_HELLO, C_NEXT_SEQ, C_BLOCK, C_LIVE, C_JOB,
       C_NAMES, C_SUBSCRIBE, C_STATE, C_JOB_ENDED, C_RESUBMIT };

static void sample_tmd(struct tmd *t, uint32_t children, uint32_t done, uint16_t moves)
{
    static uint64_t kids[4];
    static struct tmd_parent parents[4];
    static uint32_t history[4];
    static struct tmd_late late;
    memset(t, 0, sizeof *t);
    memset(&late, 0, sizeof late);
    t->key = task_key(1, 5);
    t->status = done ? TASK_WAITING : TASK_READY;
    t->num_parents = 3;
    t->num_wait_parent = 3 - done;
    for (uint32_t i = 0; i < 4; i++) {
        kids[i] = task_key(1, 10 + i);
        parents[i] = (struct tmd_parent){.object = task_key(1, i), .bytes = 100 * i, .node = i};
        history[i] = i;
    }
    t->num_children = children;
    if (children == 1)
        t->child = kids[0];
    else if (children > 1)
        t->children = kids;
    late.parent_list = done ? parents : NULL;
    late.num_history = moves;
    late.history = moves ? history : NULL;
    t->late = done || moves ? &late : NULL;
}

static void proto_seed(const char *name, uint8_t codec, struct wbuf *payload)
{
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u8(&b, codec);
    wbuf_put(&b, payload->data, payload->len);
    save("proto", name, &b);
    wbuf_fini(&b);
    wbuf_reset(payload);
}

static void proto_seeds(void)
{
    struct wbuf p;
    wbuf_init(&p);
    struct task_input in[2] = {{.object = 7, .bytes = 1000, .node = 1},
                               {.object = 8, .bytes = 1, .node = 0}};
    struct task_spec t = {.key = task_key(1, 2), .kind = TASK_SLEEP, .duration_s = 0.5,
                          .flags = TASK_FLAG_STEALABLE, .num_parents = 2, .inputs = in,
                          .num_inputs = 2, .input_bytes = 1001, .output_bytes = 10};
    proto_put_task(&p, &t);
    proto_seed("task-sleep", C_TASK, &p);
    struct task_spec cmd = {.key = task_key(1, 3), .kind = TASK_COMMAND, .cmd = "echo hi",
                            .timeout_s = 5, .retries = 2, .failures = 1};
    proto_put_task(&p, &cmd);
    proto_seed("task-command", C_TASK, &p);
    char *in_names[2] = {"sky.fits", "in/b"};
    struct task_spec wide = {.key = task_key(1, 4), .kind = TASK_COMMAND, .cmd = "cat sky.fits",
                             .cores = 4, .inputs = in, .num_inputs = 2, .names = in_names,
                             .num_names = 2};
    proto_put_task(&p, &wide);
    proto_seed("task-command-cores-names", C_TASK, &p);
    struct task_input made[3] = {
        {.object = task_object_key(1, 0x80000000u | 3), .node = UINT32_MAX, .producer = 1},
        {.object = 8, .bytes = 1, .node = 0},
        {.object = task_key(1, 0), .bytes = 500, .node = 1, .producer = TASK_INPUT_WEIGHT}};
    struct task_output outs[2] = {{.object = task_object_key(1, 0x80000000u | 4), .file = "a"},
                                  {.object = task_object_key(1, 0x80000000u | 5), .file = "r/b"}};
    uint32_t producers[1] = {0};
    struct task_spec outputs = {.key = task_key(1, 5), .kind = TASK_COMMAND, .cmd = "sort x > a",
                                .inputs = made, .num_inputs = 3, .names = in_names,
                                .num_names = 1, .outputs = outs, .num_outputs = 2,
                                .producers = producers, .num_producers = 1};
    proto_put_task(&p, &outputs);
    proto_seed("task-command-outputs", C_TASK, &p);
    struct proto_resubmit rs = {.attempt = 2, .ready = 1, .t_ready = 5, .nparents = 2,
                                .parents = in, .spec = t};
    proto_put_resubmit(&p, &rs, NULL, 0);
    proto_seed("resubmit", C_RESUBMIT, &p);

    struct proto_task_end e = {.key = task_key(1, 2), .status = TASK_FAILED, .node = 1,
                               .exit_code = 2, .t_ready = 1, .t_start = 2, .t_end = 3,
                               .detail = "exit 2", .timed_out = true, .failures = 3};
    proto_put_task_end(&p, &e);
    proto_seed("task-end-failed", C_TASK_END, &p);
    struct proto_task_end done = {.key = task_key(1, 3), .status = TASK_DONE};
    proto_put_task_end(&p, &done);
    proto_seed("task-end-done", C_TASK_END, &p);
    done.usage = (struct task_usage){.user_ns = 1234567, .sys_ns = 89, .max_rss = 1 << 26,
                                     .read_bytes = 4096, .write_bytes = 12, .measured = true};
    proto_put_task_end(&p, &done);
    proto_seed("task-end-usage", C_TASK_END, &p);

    struct proto_job_count jobs[2] = {{.job = 1, .tasks = 10, .done = 3},
                                      {.job = 2, .tasks = 5, .failed = 1, .cancelled = 1}};
    struct proto_stats s = {.node = 1, .slots = 4, .busy = 2, .speed = 1.5, .sready = 3,
                            .tasks_run = 9, .est_task_length_s = 0.01, .njobs = 2, .jobs = jobs};
    proto_put_stats(&p, &s);
    proto_seed("stats", C_STATS, &p);
    struct proto_dead dead[2] = {{.node = 3, .by = 1, .at_ns = 1700000000000000000},
                                 {.node = 5, .by = 2, .at_ns = 1700000001000000000}};
    s.epoch = 2;
    s.ndead = 2;
    s.dead = dead;
    s.tasks_resubmitted = 40;
    s.objects_recomputed = 3;
    proto_put_stats(&p, &s);
    proto_seed("stats-dead", C_STATS, &p);

    struct proto_task_end ended[2] = {
        {.key = task_key(7, 0), .status = TASK_DONE, .node = 1, .t_ready = 1, .t_start = 2,
         .t_end = 3},
        {.key = task_key(7, 4), .status = TASK_CANCELLED, .node = 2, .exit_code = -1}};
    struct proto_job_ended je = {.counts = {.job = 7, .tasks = 9, .done = 1}, .last = 1,
                                 .count = 2, .ends = ended};
    proto_put_job_ended(&p, &je);
    proto_seed("job-ended", C_JOB_ENDED, &p);

    struct tmd rec;
    sample_tmd(&rec, 3, 2, 2);
    tmd_put(&p, &rec);
    proto_seed("tmd", C_TMD, &p);
    sample_tmd(&rec, 1, 0, 0);
    tmd_put(&p, &rec);
    proto_seed("tmd-one-child", C_TMD, &p);

    struct wire_hello h = {.run_id = "run-1"};
    memset(h.sync, 0x42, sizeof h.sync);
    wire_put_hello(&p, &h);
    proto_seed("wire-hello", C_HELLO, &p);
    wire_put_next_seq(&p, 12);
    proto_seed("wire-next-seq", C_NEXT_SEQ, &p);
    uint8_t block[TRACE_SYNC_SIZE + 4] = {2, 4};
    struct wire_block blk = {.first_seq = 3, .last_seq = 4, .count = 2, .data = block,
                             .len = sizeof block};
    wire_put_block(&p, &blk);
    proto_seed("wire-block", C_BLOCK, &p);
    struct wire_note note = {.node = 1, .kind = 3, .time_ns = 5, .task = 7, .peer = -1,
                             .text = "flds"};
    struct wire_live live = {.time_ns = 9, .sample = {.busy = 1, .slots = 2}, .nnotes = 1,
                             .notes = &note};
    wire_put_live(&p, &live);
    proto_seed("wire-live", C_LIVE, &p);
    /* A client's of before the mode, and one that says it. */
    struct wire_job j = {.job = 1, .tasks = 3, .name = "dag.jsonl", .digest = "abc"};
    wire_put_job(&p, &j);
    proto_seed("wire-job", C_JOB, &p);
    j.mode = "roundrobin";
    wire_put_job(&p, &j);
    proto_seed("wire-job-mode", C_JOB, &p);
    const char *ids[2] = {"a", "b"};
    struct wire_names names = {.job = 1, .first = 0, .count = 2, .ids = ids};
    wire_put_names(&p, &names);
    proto_seed("wire-names", C_NAMES, &p);
    wire_put_subscribe(&p, 250);
    proto_seed("wire-subscribe", C_SUBSCRIBE, &p);
    struct wire_node_state ns[2] = {{.seen = 1, .connected = 1, .time_ns = 4}, {0}};
    struct wire_job_node job_rows[2] = {{.node = 0, .running = 1, .done = 2, .busy_ns = 30},
                                        {.node = 1, .done = 1, .busy_ns = 5}};
    struct wire_job_tally tally = {.job = 1, .tasks = 4, .done = 3, .running = 1,
                                   .submit_ns = 2, .end_ns = 9, .busy_ns = 35,
                                   .name = "dag.jsonl", .nnodes = 2, .nodes = job_rows};
    struct wire_state st = {.now_ns = 10, .events_written = 20, .nnodes = 2, .nodes = ns,
                            .nnotes = 1, .notes = &note, .njobs = 1, .jobs = &tally};
    wire_put_state(&p, &st);
    proto_seed("wire-state", C_STATE, &p);
    wbuf_fini(&p);
}

/* ---- kvs and parts: records ------------------------------------------------------- */

static size_t record_begin(struct wbuf *b, uint8_t op, uint8_t from)
{
    wbuf_put_u8(b, op);
    wbuf_put_u8(b, from);
    size_t at = b->len;
    wbuf_put_u16(b, 0);
    return at;
}

static void record_end(struct wbuf *b, size_t at)
{
    size_t len = b->len - at - 2;
    b->data[at] = (uint8_t)len;
    b->data[at + 1] = (uint8_t)(len >> 8);
}

static void simple_record(struct wbuf *b, uint8_t op, const uint8_t *p, size_t n);

static void kvs_seeds(void)
{
    struct wbuf b;
    wbuf_init(&b);
    /* Node 0 of 2: records from node 1, and its own requests to node 1 answered. */
    wbuf_put_u8(&b, 0);
    wbuf_put_u8(&b, 1);
    uint64_t mine = 0, theirs = 0;
    for (uint32_t i = 0; (!mine || !theirs) && i < 1000; i++) {
        uint64_t k = task_key(1, i);
        if (task_key_owner(k, 2) == 0 && !mine)
            mine = k;
        if (task_key_owner(k, 2) == 1 && !theirs)
            theirs = k;
    }
    struct tmd rec;
    sample_tmd(&rec, 2, 1, 1);
    rec.key = mine;
    size_t at = record_begin(&b, FUZZ_KVS_MSG, 0);
    wbuf_put_u8(&b, MSG_KVS_INSERT & 0xff);
    tmd_put(&b, &rec);
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_MSG, 0); /* a parent ends: 2 of 3 */
    wbuf_put_u8(&b, MSG_KVS_APPEND & 0xff);
    wbuf_put_u64(&b, mine);
    wbuf_put_u8(&b, KVS_FIELD_PARENT);
    wbuf_put_u32(&b, 1);
    wbuf_put_u64(&b, 500);
    wbuf_put_u64(&b, task_key(1, 1));
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_MSG, 0);
    wbuf_put_u8(&b, MSG_KVS_LOOKUP & 0xff);
    wbuf_put_u32(&b, 9);
    wbuf_put_u64(&b, mine);
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_MSG, 0);
    wbuf_put_u8(&b, MSG_KVS_CAS & 0xff);
    wbuf_put_u32(&b, 10);
    wbuf_put_u64(&b, mine);
    wbuf_put_u8(&b, KVS_FIELD_STATUS);
    wbuf_put_u64(&b, TASK_WAITING);
    wbuf_put_u64(&b, TASK_FAILED);
    wbuf_put_u8(&b, 1);
    wbuf_put_u32(&b, 1);
    wbuf_put_i64(&b, 1);
    wbuf_put_i64(&b, 2);
    wbuf_put_u64(&b, 3);
    record_end(&b, at);
    /* Its own lookup of node 1's key (request 1), and node 1's reply. */
    at = record_begin(&b, FUZZ_KVS_LOOKUP, 0);
    wbuf_put_u64(&b, theirs);
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_MSG, 0);
    wbuf_put_u8(&b, MSG_KVS_LOOKUP_REPLY & 0xff);
    wbuf_put_u32(&b, 1);
    wbuf_put_u32(&b, 0);
    rec.key = theirs;
    tmd_put(&b, &rec);
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_CAS, 0);
    wbuf_put_u64(&b, theirs);
    wbuf_put_u8(&b, TASK_READY);
    wbuf_put_u8(&b, TASK_DONE);
    wbuf_put_u8(&b, 3);
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_MSG, 0);
    wbuf_put_u8(&b, MSG_KVS_CAS_REPLY & 0xff);
    wbuf_put_u32(&b, 2);
    wbuf_put_u32(&b, (uint32_t)-ENOENT);
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_MSG, 0);
    wbuf_put_u8(&b, MSG_KVS_NOTIFY & 0xff);
    wbuf_put_u64(&b, theirs);
    wbuf_put_u8(&b, KVS_EVENT_READY);
    wbuf_put_u64(&b, 100);
    wbuf_put_i64(&b, 5);
    wbuf_put_u32(&b, 1);
    wbuf_put_u64(&b, task_key(1, 1));
    wbuf_put_u64(&b, 100);
    wbuf_put_u32(&b, 1);
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_MSG, 0); /* job removal cancels what is left */
    wbuf_put_u8(&b, MSG_KVS_APPEND & 0xff);
    wbuf_put_u64(&b, mine);
    wbuf_put_u8(&b, KVS_FIELD_REMOVE);
    wbuf_put_u32(&b, 1);
    wbuf_put_u64(&b, 0);
    wbuf_put_u64(&b, 0);
    record_end(&b, at);
    at = record_begin(&b, FUZZ_KVS_MSG, 0);
    wbuf_put_u8(&b, MSG_KVS_REMOVE & 0xff);
    wbuf_put_u64(&b, mine);
    record_end(&b, at);
    save("kvs", "node", &b);

    /* A client's store (self 2 of 2): only replies are for it. */
    b.data[0] = 2;
    save("kvs", "client", &b);

    /* Replicated (issue 15): node 0 of 3 at R = 2.  Its own records are forwarded to
     * their backup; the backup acknowledges; node 2, holder of one of them, dies and its
     * task is resubmitted; the job is forgotten. */
    wbuf_reset(&b);
    wbuf_put_u8(&b, 0);
    wbuf_put_u8(&b, 2 + 8);
    uint8_t job[4] = {3, 0, 0, 0};
    uint64_t own[2] = {0, 0};
    for (uint32_t i = 0, k = 0; k < 2 && i < 1000; i++)
        if (task_key_owner(task_key(3, i), 3) == 0)
            own[k++] = task_key(3, i);
    for (int k = 0; k < 2; k++) {
        sample_tmd(&rec, 2, 1, 1);
        rec.key = own[k];
        rec.holder = (uint32_t)(k + 1);
        at = record_begin(&b, FUZZ_KVS_INSERT, 0);
        tmd_put(&b, &rec);
        record_end(&b, at);
    }
    at = record_begin(&b, FUZZ_KVS_CAS, 0);
    wbuf_put_u64(&b, own[0]);
    wbuf_put_u8(&b, TASK_WAITING);
    wbuf_put_u8(&b, TASK_READY);
    wbuf_put_u8(&b, 2);
    record_end(&b, at);
    simple_record(&b, FUZZ_KVS_BARRIER, job, 0);
    at = record_begin(&b, FUZZ_KVS_MSG, 0); /* sender pick 0: node 1 */
    wbuf_put_u8(&b, MSG_KVS_REPLICA_ACK & 0xff);
    wbuf_put_u64(&b, 2);
    record_end(&b, at);
    simple_record(&b, FUZZ_KVS_FLUSH, job, 0);
    uint8_t two = 2, pick = 0;
    simple_record(&b, FUZZ_KVS_DOWN, &two, 1);
    simple_record(&b, FUZZ_KVS_ORPHANS, &pick, 1);
    simple_record(&b, FUZZ_KVS_FORGET, job, sizeof job);
    save("kvs", "replicated", &b);

    /* Packed (issue 19): node 0 of 3 at R = 2 inserts enough of its own records that its
     * backup's log fills its first chunks; they are packed two calls later, a swap
     * lands after them, and the backup builds its copies from the packed chunks. */
    wbuf_reset(&b);
    wbuf_put_u8(&b, 0);
    wbuf_put_u8(&b, 2 + 8);
    uint64_t first = 0;
    for (uint32_t i = 0, k = 0; k < 400 && i < 4000; i++) {
        if (task_key_owner(task_key(5, i), 3) != 0)
            continue;
        sample_tmd(&rec, 1, 0, 0);
        rec.key = task_key(5, i);
        rec.holder = 1 + (uint32_t)(k++ % 2);
        first = first ? first : rec.key;
        at = record_begin(&b, FUZZ_KVS_INSERT, 0);
        tmd_put(&b, &rec);
        record_end(&b, at);
    }
    uint8_t mark = 0xfe, build = 0xff;
    simple_record(&b, FUZZ_KVS_COMPACT, &mark, 1);
    simple_record(&b, FUZZ_KVS_COMPACT, &mark, 1);
    at = record_begin(&b, FUZZ_KVS_CAS, 0);
    wbuf_put_u64(&b, first);
    wbuf_put_u8(&b, TASK_READY);
    wbuf_put_u8(&b, TASK_RUNNING);
    wbuf_put_u8(&b, 2);
    record_end(&b, at);
    simple_record(&b, FUZZ_KVS_COMPACT, &build, 1);
    save("kvs", "packed", &b);
    wbuf_fini(&b);
}

static void msg_record(struct wbuf *b, uint8_t type_index, const struct wbuf *payload)
{
    size_t at = record_begin(b, FUZZ_PARTS_MSG, 0);
    wbuf_put_u8(b, type_index);
    wbuf_put(b, payload->data, payload->len);
    record_end(b, at);
}

static void simple_record(struct wbuf *b, uint8_t op, const uint8_t *p, size_t n)
{
    size_t at = record_begin(b, op, 0);
    wbuf_put(b, p, n);
    record_end(b, at);
}

/* A message type names itself by its low byte (fuzz.h, FUZZ_PARTS_MSG). */
static uint8_t type_index(uint16_t type)
{
    return (uint8_t)(type & 0xff);
}

static void parts_seed(const char *name, uint8_t preset, uint8_t nodes, uint8_t self,
                       uint8_t flags)
{
    struct wbuf b, p;
    wbuf_init(&b);
    wbuf_init(&p);
    wbuf_put_u8(&b, preset);
    wbuf_put_u8(&b, nodes - 1);
    wbuf_put_u8(&b, self);
    wbuf_put_u8(&b, (uint8_t)(flags << 2 | 1)); /* two slots */
    /* Work of its own: ready tasks, stealable or not, some with inputs elsewhere. */
    for (uint8_t i = 0; i < 4; i++) {
        uint8_t task[9] = {(uint8_t)(i & 1), i, 1, 3, 4, 1, 0, 1, 10};
        simple_record(&b, FUZZ_PARTS_READY, task, sizeof task);
    }
    uint8_t stage[9] = {1, 2, 3, 5, 0, 1, 2, 0, 5};
    simple_record(&b, FUZZ_PARTS_STAGE, stage, sizeof stage);
    simple_record(&b, FUZZ_PARTS_STEP, NULL, 0);
    /* Peers' messages. */
    wbuf_put_u32(&p, 1);
    msg_record(&b, type_index(MSG_LOAD_QUERY), &p);
    wbuf_reset(&p);
    wbuf_put_u32(&p, 2);
    wbuf_put_u32(&p, 0);
    msg_record(&b, type_index(MSG_STEAL_REQUEST), &p);
    wbuf_reset(&p);
    struct task_spec t = {.key = task_key(4, 1), .kind = TASK_NOOP,
                          .flags = TASK_FLAG_STEALABLE};
    wbuf_put_u32(&p, 1);
    proto_put_task(&p, &t);
    msg_record(&b, type_index(MSG_PUSH), &p);
    msg_record(&b, type_index(MSG_LW_FORWARD), &p);
    wbuf_reset(&p);
    wbuf_put_u32(&p, 3);
    wbuf_put_u64(&p, task_key(FUZZ_PARTS_OBJECT_JOB, 2));
    wbuf_put_u64(&p, 0);
    wbuf_put_u32(&p, 4096);
    msg_record(&b, type_index(MSG_FETCH_REQ), &p);
    wbuf_reset(&p);
    wbuf_put_u32(&p, 0);
    wbuf_put_u32(&p, 0);
    wbuf_put_u32(&p, nodes);
    for (uint8_t i = 0; i < nodes; i++) {
        wbuf_put_u32(&p, i);
        wbuf_put_u8(&p, 0);
    }
    msg_record(&b, type_index(MSG_TOKEN), &p);
    wbuf_reset(&p);
    wbuf_put_u32(&p, 1);
    wbuf_put_u32(&p, (uint32_t)(self + 1) % nodes);
    wbuf_put_u32(&p, 3);
    wbuf_put_f64(&p, 0.01);
    wbuf_put_u32(&p, 5);
    wbuf_put_u32(&p, 4);
    wbuf_put_u32(&p, 2);
    msg_record(&b, type_index(MSG_INFO), &p);
    wbuf_reset(&p);
    msg_record(&b, type_index(MSG_IDLE), &p);
    wbuf_put_u8(&p, 0);
    msg_record(&b, type_index(MSG_HEARTBEAT), &p);
    /* A refused suspicion of another node, then that node's goodbye. */
    wbuf_reset(&p);
    wbuf_put_u32(&p, (uint32_t)(self + 2) % nodes);
    wbuf_put_u8(&p, PROTO_SUSPECT_REFUSED);
    msg_record(&b, type_index(MSG_SUSPECT), &p);
    wbuf_reset(&p);
    wbuf_put_u8(&p, PROTO_BEAT_LEAVING);
    msg_record(&b, type_index(MSG_HEARTBEAT), &p);
    /* Its own requests answered, time passing, timers. */
    simple_record(&b, FUZZ_PARTS_STEP, NULL, 0);
    uint8_t load[4] = {0, 5, 0, 0};
    simple_record(&b, FUZZ_PARTS_LOAD, load, sizeof load);
    for (uint8_t i = 0; i < 6; i++) {
        uint8_t pick[3] = {i, 2, 1};
        simple_record(&b, FUZZ_PARTS_REPLY, pick, sizeof pick);
        uint8_t ms[2] = {6, 0};
        simple_record(&b, FUZZ_PARTS_CLOCK, ms, sizeof ms);
        simple_record(&b, FUZZ_PARTS_TIMER, &i, 1);
        simple_record(&b, FUZZ_PARTS_STEP, NULL, 0);
    }
    simple_record(&b, FUZZ_PARTS_WAKE, NULL, 0);
    simple_record(&b, FUZZ_PARTS_STEP, NULL, 0);
    save("parts", name, &b);
    wbuf_fini(&b);
    wbuf_fini(&p);
}

static void parts_seeds(void)
{
    /* fuzz_parts.c's preset order: daws a2ws parsec random1 none daws+a2ws lw ctws. */
    static const char *const names[] = {"daws", "a2ws", "parsec", "random1",
                                        "none", "daws-a2ws", "lw", "ctws"};
    for (uint8_t i = 0; i < 8; i++)
        parts_seed(names[i], i, 4, (uint8_t)(i % 4), (uint8_t)(i & 1 ? 8 : 0));
    parts_seed("lw-leader", 6, 3, 0, 0);
    parts_seed("ctws-holder", 7, 2, 0, 0);
    parts_seed("daws-files-bandwidth", 0, 2, 1, 4 | 16 | 32);
}

/* ---- event ---------------------------------------------------------------------------- */

/* Records as a block holds them: each a delta from the one before when that is of its
 * node and earlier (as trace_block_append writes them), else an anchor. */
static void event_seed(const char *name, const struct trace_event *evs, size_t n)
{
    struct wbuf b;
    wbuf_init(&b);
    for (size_t i = 0; i < n; i++) {
        const struct trace_event *prev = i ? &evs[i - 1] : NULL;
        if (prev && prev->node == evs[i].node && prev->seq >= evs[i].seq)
            prev = NULL;
        uint8_t rec[4096];
        int len = trace_event_encode(&evs[i], prev, rec, sizeof rec);
        if (len < 0) {
            fprintf(stderr, "seeds: event %zu of %s does not encode\n", i, name);
            exit(1);
        }
        wbuf_put(&b, rec, (size_t)len);
    }
    save("event", name, &b);
    wbuf_fini(&b);
}

static int by_node_seq(const void *pa, const void *pb)
{
    const struct trace_event *a = pa, *b = pb;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static void event_seeds(void)
{
    static struct trace_event evs[1200];
    /* Two rounds of every kind, grouped by node: runs of deltas. */
    size_t n = event_cases_every_kind(evs, 2 * TRACE_KIND_COUNT);
    qsort(evs, n, sizeof evs[0], by_node_seq);
    event_seed("every-kind", evs, n);
    /* Each field at its limits, names and usage: 40 anchors. */
    size_t m = event_cases_extremes(evs, 0, 40);
    event_seed("extremes", evs, m);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    root = argv[1];
    frame_seeds();
    handshake_seeds();
    proto_seeds();
    kvs_seeds();
    parts_seeds();
    event_seeds();
    return 0;
}
