/*
 * test_part_data — the data plane part (core/runtime/data.c) between two fake nodes A
 * (0) and B (1), each with its own work directory and object store, their messages
 * carried by fake_node_pass: staging a task whose input B holds pulls it into A's store
 * chunk by chunk until node_staged (counters, bytes, one fetch for two waiting tasks);
 * the cache turns a later stage into a hit; an unknown holder, a holder without the
 * object, a reply at the wrong offset or of the wrong total, or a corrupted last chunk
 * fail the staging (never a silent copy); data_release unpins; data_keep_output makes a
 * task's output an object, and a command's declared outputs objects of their own (all
 * or none); a declared output is fetched before its size is known; a command's big local input is written into the store a
 * budget per pass before it is staged (then linked, and unlinked at the task's end); with bandwidth emulation replies past the burst wait for
 * the pacer timer, and with latency every request and reply does; a holder declared dead
 * ends its fetches (every waiting task staged with a reason, late replies ignored), a
 * death elsewhere does not, and a fetch from a holder already dead is not started;
 * malformed FETCH_REQ and FETCH_REP payloads are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/fs.h"
#include "core/net/proto.h"
#include "core/runtime/data.h"
#include "core/runtime/objstore.h"
#include "core/runtime/parts.h"
#include "fake_node.h"
#include "tmpdir.h"

/* data.c's FETCH_CHUNK, which is also its emulated links' burst; only the bandwidth
 * test depends on it (an object of one chunk and a bit has a part past the burst). */
#define CHUNK (256u << 10)

/* Several windows' worth of chunks and a ragged end. */
#define OBJECT_BYTES ((uint64_t)CHUNK * 9 + 12345)

/* ---- two nodes ---------------------------------------------------------------------- */

struct pair {
    char dir[2][96];
    struct node *n[2];
    struct data_plane *d[2];
};

/* The pair in a cluster of `nodes` (the others have no fake node: nobody talks to them). */
static void pair_open_in(struct pair *p, uint32_t nodes, uint64_t cache_bytes,
                         double bandwidth_Bps, int64_t latency_ns)
{
    for (uint32_t i = 0; i < 2; i++) {
        /* Inside the binary's directory, which the group teardown removes even after a
         * failed test. */
        snprintf(p->dir[i], sizeof p->dir[i], "%s/node.XXXXXX", tmpdir);
        assert_non_null(mkdtemp(p->dir[i]));
        p->n[i] = fake_node_new(i, nodes, 2, p->dir[i]);
        p->n[i]->cfg.cache = cache_bytes > 0;
        p->n[i]->cfg.cache_bytes = cache_bytes;
        p->n[i]->cfg.bandwidth_Bps = bandwidth_Bps;
        p->n[i]->cfg.latency_ns = latency_ns;
        p->d[i] = fake_node_add(p->n[i], &part_data);
    }
}

static void pair_open(struct pair *p, uint64_t cache_bytes, double bandwidth_Bps,
                      int64_t latency_ns)
{
    pair_open_in(p, 2, cache_bytes, bandwidth_Bps, latency_ns);
}

/* Frees both nodes (data_close destroys the stores and their directories) and removes
 * the work directories, which must be empty by then. */
static void pair_close(struct pair *p)
{
    for (uint32_t i = 0; i < 2; i++) {
        fake_node_free(p->n[i]);
        assert_int_equal(rmdir(p->dir[i]), 0);
    }
}

static struct objstore *store(struct pair *p, uint32_t i)
{
    return data_store(p->d[i]);
}

/* What A asked B for, checked as it goes: one request id, every byte once, in order. */
struct reqlog {
    uint32_t req;
    uint64_t key;
    uint64_t next_offset;
    size_t count;
};

static void log_requests(struct node *a, struct reqlog *log)
{
    for (size_t i = 0; i < fake_msgs(a, MSG_FETCH_REQ); i++) {
        struct fake_msg *m = fake_msg(a, MSG_FETCH_REQ, i);
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        uint32_t req = rbuf_u32(&r);
        uint64_t key = rbuf_u64(&r), offset = rbuf_u64(&r);
        uint32_t len = rbuf_u32(&r);
        assert_true(rbuf_ok(&r));
        assert_int_equal(m->peer, 1);
        if (log->count++ == 0)
            log->req = req;
        assert_int_equal(req, log->req);
        assert_int_equal(key, log->key);
        assert_int_equal(offset, log->next_offset);
        log->next_offset += len;
    }
}

/* Flips a data byte of every captured reply on B that carries an object's last chunk. */
static size_t corrupt_last_chunks(struct node *b)
{
    size_t done = 0;
    for (size_t i = 0; i < fake_msgs(b, MSG_FETCH_REP); i++) {
        struct fake_msg *m = fake_msg(b, MSG_FETCH_REP, i);
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        (void)rbuf_u32(&r);
        int32_t status = (int32_t)rbuf_u32(&r);
        uint64_t total = rbuf_u64(&r), offset = rbuf_u64(&r);
        uint32_t len = rbuf_u32(&r);
        if (status == 0 && len > 0 && offset + len == total) {
            m->body.data[m->body.len - 1] ^= 0x5a;
            done++;
        }
    }
    return done;
}

/* Carries messages both ways until A has seen `want` node_staged or nothing moves. */
static void pump(struct pair *p, uint32_t want, struct reqlog *log, bool corrupt)
{
    struct node *a = p->n[0], *b = p->n[1];
    for (int i = 0; i < 1000 && a->staged < want; i++) {
        if (log)
            log_requests(a, log);
        size_t moved = fake_node_pass(a, b, NULL);
        if (corrupt)
            corrupt_last_chunks(b);
        moved += fake_node_pass(b, a, NULL);
        if (!moved)
            break;
    }
}

static bool same_bytes(struct objstore *os, uint64_t key, uint64_t bytes)
{
    uint8_t *got = malloc(bytes), *want = malloc(bytes);
    assert_non_null(got);
    assert_non_null(want);
    bool same = objstore_read(os, key, 0, got, bytes) == (ssize_t)bytes;
    objstore_synthetic_fill(key, 0, want, bytes);
    same = same && memcmp(got, want, bytes) == 0;
    free(got);
    free(want);
    return same;
}

/* An object of `bytes` made on node i, under the key fake_task(index, ...) names. */
static uint64_t object_on(struct pair *p, uint32_t i, uint32_t index, uint64_t bytes)
{
    uint64_t key = task_key(2, index);
    char *cause = NULL;
    assert_int_equal(objstore_put_generated(store(p, i), key, bytes, &cause), 0);
    return key;
}

/* The request id of A's first captured FETCH_REQ. */
static uint32_t first_req(struct node *a)
{
    struct fake_msg *m = fake_msg(a, MSG_FETCH_REQ, 0);
    assert_non_null(m);
    struct rbuf r;
    rbuf_init(&r, m->body.data, m->body.len);
    return rbuf_u32(&r);
}

static int deliver_reply(struct node *to, uint32_t from, uint32_t req, int32_t status,
                         uint64_t total, uint64_t offset, uint32_t len)
{
    struct wbuf b;
    wbuf_init(&b);
    wbuf_put_u32(&b, req);
    wbuf_put_u32(&b, (uint32_t)status);
    wbuf_put_u64(&b, total);
    wbuf_put_u64(&b, offset);
    wbuf_put_u32(&b, len);
    int rc = fake_node_deliver(to, from, MSG_FETCH_REP, b.data, b.len);
    wbuf_fini(&b);
    return rc;
}

/* ---- fetching ----------------------------------------------------------------------- */

static void input_on_other_node_is_fetched(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0], *b = p.n[1];
    uint64_t key = object_on(&p, 1, 1, OBJECT_BYTES);
    struct ntask *t = fake_task(1, true, OBJECT_BYTES, 1);

    assert_int_equal(data_stage(p.d[0], t), 0);
    assert_true(data_staging(p.d[0], t->spec.key));
    assert_true(fake_msgs(a, MSG_FETCH_REQ) > 0);
    assert_int_equal(fake_msgs(a, 0), fake_msgs(a, MSG_FETCH_REQ));
    assert_int_equal(a->staged, 0);
    assert_false(objstore_has(store(&p, 0), key));

    struct reqlog log = {.key = key};
    pump(&p, 1, &log, false);
    assert_int_equal(a->staged, 1);
    assert_int_equal(a->staged_failed, 0);
    assert_ptr_equal(a->last_staged, t);
    /* Every byte asked for once, under one request id. */
    assert_int_equal(log.next_offset, OBJECT_BYTES);
    assert_true(log.count > 1);

    assert_true(objstore_has(store(&p, 0), key));
    assert_int_equal(objstore_size(store(&p, 0), key), OBJECT_BYTES);
    assert_true(same_bytes(store(&p, 0), key, OBJECT_BYTES));
    assert_int_equal(a->c.fetches, 1);
    assert_int_equal(a->c.bytes_in, OBJECT_BYTES);
    assert_int_equal(b->c.bytes_out, OBJECT_BYTES);
    assert_int_equal(a->c.tasks_with_inputs, 1);
    assert_int_equal(a->c.locality_hits, 0);
    assert_true(t->spec.flags & TASK_FLAG_FETCHED);
    assert_int_equal(fake_msgs(a, 0), 0);
    assert_int_equal(fake_msgs(b, 0), 0);

    data_release(p.d[0], t);
    assert_false(data_staging(p.d[0], t->spec.key));
    ntask_free(t);
    pair_close(&p);
}

/*
 * A declared output's size is not known before its producer ran: the fetch asks for a
 * first chunk, learns the size from the reply, and then pulls the rest as any fetch
 * does (every byte once, in order, one request id) — for an object of several chunks,
 * one smaller than a chunk, and an empty one.
 */
static void declared_output_is_fetched_before_its_size_is_known(void **state)
{
    (void)state;
    const uint64_t sizes[] = {OBJECT_BYTES, 1000, 0};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct pair p;
        pair_open(&p, 0, 0, 0);
        struct node *a = p.n[0];
        uint64_t key = object_on(&p, 1, 1, sizes[s]);
        struct ntask *t = fake_task(1, true, 1, 1);
        t->spec.inputs[0].bytes = 0;
        t->spec.inputs[0].producer = 7;

        assert_int_equal(data_stage(p.d[0], t), 0);
        assert_int_equal(fake_msgs(a, MSG_FETCH_REQ), 1);
        struct reqlog log = {.key = key};
        pump(&p, 1, &log, false);
        assert_int_equal(a->staged, 1);
        assert_int_equal(a->staged_failed, 0);
        assert_true(log.next_offset >= sizes[s]);
        assert_true(objstore_has(store(&p, 0), key));
        assert_int_equal(objstore_size(store(&p, 0), key), sizes[s]);
        assert_true(same_bytes(store(&p, 0), key, sizes[s]));
        assert_int_equal(a->c.bytes_in, sizes[s]);
        data_release(p.d[0], t);
        ntask_free(t);
        pair_close(&p);
    }
}

static void second_task_waits_on_the_same_fetch(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0];
    uint64_t key = object_on(&p, 1, 1, OBJECT_BYTES);
    struct ntask *t1 = fake_task(1, true, OBJECT_BYTES, 1);
    struct ntask *t2 = fake_task(2, true, OBJECT_BYTES, 1);
    t2->spec.inputs[0].object = key;

    assert_int_equal(data_stage(p.d[0], t1), 0);
    size_t asked = fake_msgs(a, MSG_FETCH_REQ);
    assert_int_equal(data_stage(p.d[0], t2), 0);
    assert_int_equal(fake_msgs(a, MSG_FETCH_REQ), asked);
    assert_int_equal(a->c.fetches, 1);

    struct reqlog log = {.key = key};
    pump(&p, 2, &log, false);
    assert_int_equal(a->staged, 2);
    assert_int_equal(a->staged_failed, 0);
    assert_int_equal(log.next_offset, OBJECT_BYTES);
    assert_int_equal(a->c.fetches, 1);
    assert_int_equal(a->c.bytes_in, OBJECT_BYTES);
    assert_true(objstore_has(store(&p, 0), key));

    data_release(p.d[0], t1);
    /* Still pinned by t2: with the cache off, the copy lives only while pinned. */
    assert_true(objstore_has(store(&p, 0), key));
    data_release(p.d[0], t2);
    assert_false(objstore_has(store(&p, 0), key));
    ntask_free(t1);
    ntask_free(t2);
    pair_close(&p);
}

/* Counts A's captured FETCH_REQs by request id, ids in the order first seen. */
static size_t tally_requests(struct node *a, uint32_t ids[], size_t counts[], size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < fake_msgs(a, MSG_FETCH_REQ); i++) {
        struct fake_msg *m = fake_msg(a, MSG_FETCH_REQ, i);
        struct rbuf r;
        rbuf_init(&r, m->body.data, m->body.len);
        uint32_t req = rbuf_u32(&r);
        size_t j = 0;
        while (j < k && ids[j] != req)
            j++;
        if (j == k) {
            assert_true(k < max);
            ids[k] = req;
            counts[k++] = 0;
        }
        counts[j]++;
    }
    return k;
}

/*
 * The node's fetches share two fetches' windows, oldest first: of three fetches of 8
 * chunks each, the first two ask for their windows and the third for nothing; as replies
 * come back the oldest gets the room, and the third asks for its first chunk only once
 * the first fetch is through.  All three arrive whole.
 */
static void fetches_share_the_window_oldest_first(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0], *b = p.n[1];
    const uint64_t bytes = (uint64_t)CHUNK * 8;
    struct ntask *t[3];
    uint64_t key[3];
    for (uint32_t i = 0; i < 3; i++) {
        key[i] = object_on(&p, 1, i + 1, bytes);
        t[i] = fake_task(i + 1, true, bytes, 1);
        assert_int_equal(data_stage(p.d[0], t[i]), 0);
    }
    uint32_t ids[3];
    size_t counts[3];
    assert_int_equal(tally_requests(a, ids, counts, 3), 2);
    assert_int_equal(counts[0], 4);
    assert_int_equal(counts[1], 4);
    const uint32_t older[2] = {ids[0], ids[1]};
    bool third_asked = false;
    for (int round = 0; round < 100 && a->staged < 3; round++) {
        size_t k = tally_requests(a, ids, counts, 3);
        for (size_t j = 0; j < k; j++) {
            if (third_asked || ids[j] == older[0] || ids[j] == older[1])
                continue;
            third_asked = true;
            /* Not before the oldest fetch was through. */
            assert_true(a->staged >= 1);
            assert_true(objstore_has(store(&p, 0), key[0]));
        }
        size_t moved = fake_node_pass(a, b, NULL) + fake_node_pass(b, a, NULL);
        if (!moved)
            break;
    }
    assert_true(third_asked);
    assert_int_equal(a->staged, 3);
    assert_int_equal(a->staged_failed, 0);
    for (uint32_t i = 0; i < 3; i++) {
        assert_true(same_bytes(store(&p, 0), key[i], bytes));
        data_release(p.d[0], t[i]);
        ntask_free(t[i]);
    }
    assert_int_equal(a->c.bytes_in, 3 * bytes);
    pair_close(&p);
}

static void release_unpins(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0];
    /* An input made here: staged at once, and pinned while the task holds it. */
    uint64_t here = object_on(&p, 0, 3, 4096);
    struct ntask *t = fake_task(3, true, 4096, 0);
    assert_int_equal(data_stage(p.d[0], t), 1);
    assert_int_equal(a->c.locality_hits, 1);
    assert_int_equal(fake_traces(a, TRACE_CACHE_HIT), 0);
    assert_int_equal(fake_msgs(a, 0), 0);
    assert_int_equal(objstore_remove(store(&p, 0), here), -EBUSY);
    data_release(p.d[0], t);
    assert_int_equal(objstore_remove(store(&p, 0), here), 0);
    ntask_free(t);

    /* A fetched copy without a cache is dropped at its last unpin, and fetched again
     * by the next task that needs it. */
    uint64_t key = object_on(&p, 1, 1, 5000);
    t = fake_task(1, true, 5000, 1);
    assert_int_equal(data_stage(p.d[0], t), 0);
    pump(&p, 1, NULL, false);
    assert_int_equal(a->staged, 1);
    assert_true(objstore_has(store(&p, 0), key));
    data_release(p.d[0], t);
    assert_false(objstore_has(store(&p, 0), key));
    assert_int_equal(data_stage(p.d[0], t), 0);
    assert_int_equal(a->c.fetches, 2);
    pump(&p, 2, NULL, false);
    assert_int_equal(a->staged, 2);
    assert_int_equal(a->staged_failed, 0);
    data_release(p.d[0], t);
    ntask_free(t);
    pair_close(&p);
}

static void cached_copy_is_a_hit(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 64u << 20, 0, 0);
    struct node *a = p.n[0];
    uint64_t key = object_on(&p, 1, 1, OBJECT_BYTES);
    struct ntask *t1 = fake_task(1, true, OBJECT_BYTES, 1);
    assert_int_equal(data_stage(p.d[0], t1), 0);
    pump(&p, 1, NULL, false);
    assert_int_equal(a->staged, 1);
    data_release(p.d[0], t1);
    assert_true(objstore_has(store(&p, 0), key)); /* kept, unpinned, by the cache */

    struct ntask *t2 = fake_task(2, true, OBJECT_BYTES, 1);
    t2->spec.inputs[0].object = key;
    fake_msgs_clear(a);
    assert_int_equal(data_stage(p.d[0], t2), 1);
    assert_int_equal(fake_msgs(a, 0), 0);
    assert_int_equal(a->c.fetches, 1);
    assert_int_equal(a->c.cache_hits_traced, 1);
    assert_int_equal(fake_traces(a, TRACE_CACHE_HIT), 1);
    const struct fake_trace *tr = NULL;
    for (size_t i = 0; i < a->ntraces; i++)
        if (a->traces[i].kind == TRACE_CACHE_HIT)
            tr = &a->traces[i];
    assert_non_null(tr);
    assert_int_equal(tr->task, key);
    assert_int_equal(tr->peer, 1);
    /* Pinned by t2 now. */
    assert_int_equal(objstore_remove(store(&p, 0), key), -EBUSY);
    data_release(p.d[0], t2);
    ntask_free(t1);
    ntask_free(t2);
    pair_close(&p);
}

/* ---- failures ----------------------------------------------------------------------- */

static void unknown_holder_fails_at_once(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0];
    /* A holder outside the cluster, and this node named as holder without the object. */
    struct ntask *far = fake_task(1, true, 1000, 7);
    struct ntask *here = fake_task(2, true, 1000, 0);
    assert_true(data_stage(p.d[0], far) < 0);
    assert_true(data_stage(p.d[0], here) < 0);
    assert_int_equal(fake_msgs(a, 0), 0);
    assert_int_equal(a->c.fetches, 0);
    data_release(p.d[0], far);
    data_release(p.d[0], here);
    ntask_free(far);
    ntask_free(here);
    pair_close(&p);
}

static void holder_without_object_fails_staging(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0];
    struct ntask *t = fake_task(1, true, 1000, 1); /* B never made it */
    assert_int_equal(data_stage(p.d[0], t), 0);
    pump(&p, 1, NULL, false);
    assert_int_equal(a->staged, 1);
    assert_int_equal(a->staged_failed, 1);
    assert_ptr_equal(a->last_staged, t);
    assert_false(objstore_has(store(&p, 0), task_key(2, 1)));
    data_release(p.d[0], t);
    ntask_free(t);
    pair_close(&p);
}

static void reply_out_of_step_fails_staging(void **state)
{
    (void)state;
    /* 0: the right object at the wrong offset; 1: with the wrong total. */
    for (int which = 0; which < 2; which++) {
        struct pair p;
        pair_open(&p, 0, 0, 0);
        struct node *a = p.n[0];
        uint64_t key = object_on(&p, 1, 1, 5000);
        struct ntask *t = fake_task(1, true, 5000, 1);
        assert_int_equal(data_stage(p.d[0], t), 0);
        uint32_t req = first_req(a);

        /* The same from a node that is not the holder: ignored. */
        assert_int_equal(deliver_reply(a, 0, req, 0, 5001, 100, 0), 0);
        assert_int_equal(a->staged, 0);

        uint64_t total = which == 1 ? 5001 : 5000, offset = which == 0 ? 100 : 0;
        assert_int_equal(deliver_reply(a, 1, req, 0, total, offset, 0), 0);
        assert_int_equal(a->staged, 1);
        assert_int_equal(a->staged_failed, 1);
        assert_ptr_equal(a->last_staged, t);

        /* B's genuine replies find no fetch any more; nothing becomes visible. */
        pump(&p, 2, NULL, false);
        assert_int_equal(a->staged, 1);
        assert_false(objstore_has(store(&p, 0), key));
        data_release(p.d[0], t);

        /* The part is still usable: the next stage fetches afresh and succeeds. */
        assert_int_equal(data_stage(p.d[0], t), 0);
        assert_int_equal(a->c.fetches, 2);
        pump(&p, 2, NULL, false);
        assert_int_equal(a->staged, 2);
        assert_int_equal(a->staged_failed, 1);
        assert_true(same_bytes(store(&p, 0), key, 5000));
        data_release(p.d[0], t);
        ntask_free(t);
        pair_close(&p);
    }
}

static void corrupted_last_chunk_fails_the_check(void **state)
{
    (void)state;
    const uint64_t sizes[] = {5000, OBJECT_BYTES};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct pair p;
        pair_open(&p, 64u << 20, 0, 0);
        struct node *a = p.n[0];
        uint64_t key = object_on(&p, 1, 1, sizes[s]);
        struct ntask *t = fake_task(1, true, sizes[s], 1);
        assert_int_equal(data_stage(p.d[0], t), 0);
        pump(&p, 1, NULL, true);
        assert_int_equal(a->staged, 1);
        assert_int_equal(a->staged_failed, 1);
        assert_ptr_equal(a->last_staged, t);
        /* Every byte arrived, yet no copy: not even in the cache. */
        assert_int_equal(a->c.bytes_in, sizes[s]);
        assert_false(objstore_has(store(&p, 0), key));
        data_release(p.d[0], t);
        ntask_free(t);
        pair_close(&p);
    }
}

/* ---- outputs ------------------------------------------------------------------------ */

static void output_becomes_an_object(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct ntask *t = fake_task(9, true, 0, 0);
    t->spec.output_bytes = 70000;
    uint64_t size = 0;
    char *why = NULL;
    assert_int_equal(data_keep_output(p.d[0], t, &size, &why), 0);
    assert_int_equal(size, 70000);
    assert_null(why);
    assert_true(objstore_has(store(&p, 0), t->spec.key));
    assert_int_equal(objstore_size(store(&p, 0), t->spec.key), 70000);
    assert_true(same_bytes(store(&p, 0), t->spec.key, 70000));
    ntask_free(t);

    /* No output, no object. */
    t = fake_task(10, true, 0, 0);
    assert_int_equal(data_keep_output(p.d[0], t, &size, &why), 0);
    assert_int_equal(size, 0);
    assert_false(objstore_has(store(&p, 0), t->spec.key));
    ntask_free(t);
    pair_close(&p);
}

/* A file of `len` bytes of `c` at PATH (relative to the node's task directory). */
static void write_file(const char *dir, const char *name, char c, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdir(path, 0700);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < len; i++)
        fputc(c, f);
    assert_int_equal(fclose(f), 0);
}

/* A command task `index` declaring the files (n of them) as outputs, their objects
 * numbered from `first`. */
static struct ntask *with_outputs(uint32_t index, const char *const *files, uint32_t n,
                                  uint32_t first)
{
    struct ntask *t = fake_task(index, true, 0, 0);
    t->spec.kind = TASK_COMMAND;
    t->spec.outputs = calloc(n, sizeof *t->spec.outputs);
    t->spec.num_outputs = n;
    for (uint32_t i = 0; i < n; i++)
        t->spec.outputs[i] = (struct task_output){
            .object = task_object_key(1, 0x80000000u | (first + i)), .file = strdup(files[i])};
    return t;
}

/*
 * A command's declared outputs become objects of their own, each with its file's bytes,
 * and their sizes add up; one missing after the run fails it with the file named, and
 * leaves none of its outputs in the store (a child never reads half a run's outputs).
 */
static void declared_outputs_become_objects(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct ntask *t = with_outputs(11, (const char *[]){"a.txt", "sub/b.txt"}, 2, 1);
    char dir[160];
    snprintf(dir, sizeof dir, "%s/task-1-11", p.dir[0]);
    assert_int_equal(mkdir(dir, 0700), 0);
    write_file(dir, "a.txt", 'a', 300);
    write_file(dir, "sub/b.txt", 'b', 5000);
    uint64_t size = 0;
    char *why = NULL;
    assert_int_equal(data_keep_output(p.d[0], t, &size, &why), 0);
    assert_null(why);
    assert_int_equal(size, 5300);
    assert_int_equal(objstore_size(store(&p, 0), t->spec.outputs[0].object), 300);
    assert_int_equal(objstore_size(store(&p, 0), t->spec.outputs[1].object), 5000);
    /* The task's own key names no object: its stdout is a log, not an output. */
    assert_false(objstore_has(store(&p, 0), t->spec.key));
    uint8_t byte = 0;
    assert_int_equal(objstore_read(store(&p, 0), t->spec.outputs[1].object, 4999, &byte, 1), 1);
    assert_int_equal(byte, 'b');
    /* The user still finds the file where the command wrote it. */
    struct stat st;
    char path[256];
    snprintf(path, sizeof path, "%s/sub/b.txt", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 5000);
    ntask_free(t);

    /* The second is missing: the run fails, naming it, and the first is not kept. */
    t = with_outputs(12, (const char *[]){"c.txt", "never.txt"}, 2, 3);
    snprintf(dir, sizeof dir, "%s/task-1-12", p.dir[0]);
    assert_int_equal(mkdir(dir, 0700), 0);
    write_file(dir, "c.txt", 'c', 10);
    assert_int_equal(data_keep_output(p.d[0], t, &size, &why), -ENOENT);
    assert_non_null(why);
    assert_non_null(strstr(why, "'never.txt' is missing"));
    free(why);
    assert_false(objstore_has(store(&p, 0), t->spec.outputs[0].object));
    assert_false(objstore_has(store(&p, 0), t->spec.outputs[1].object));
    ntask_free(t);

    /* A directory where a file was declared is no output. */
    t = with_outputs(13, (const char *[]){"d"}, 1, 5);
    snprintf(dir, sizeof dir, "%s/task-1-13/d", p.dir[0]);
    assert_int_equal(fs_mkdirs(dir, 0700, NULL), 0);
    assert_int_equal(data_keep_output(p.d[0], t, &size, &why), -EINVAL);
    assert_non_null(strstr(why, "not a regular file"));
    free(why);
    ntask_free(t);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/task-*", p.dir[0]);
    assert_int_equal(system(cmd), 0);
    pair_close(&p);
}

/*
 * A command whose big input is here as generated content waits while the store writes
 * it into a file, a budget per loop pass (two commands, one spill); a task that is not
 * a command does not wait; afterwards staging the input links the store's file.
 */
static void big_input_is_written_into_the_store_before_staging(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0];
    const uint64_t bytes = 9u << 20;
    uint64_t key = object_on(&p, 0, 1, bytes);
    struct ntask *t1 = fake_task(1, true, bytes, 0);
    struct ntask *t2 = fake_task(1, true, bytes, 0);
    struct ntask *t3 = fake_task(1, true, bytes, 0);
    t1->spec.kind = t2->spec.kind = TASK_COMMAND;
    t2->spec.key = task_key(1, 2);
    t3->spec.key = task_key(1, 3);
    assert_true(objstore_wants_spill(store(&p, 0), key));

    assert_int_equal(data_stage(p.d[0], t1), 0);
    assert_int_equal(data_stage(p.d[0], t2), 0);
    assert_int_equal(data_stage(p.d[0], t3), 1); /* reads no file: nothing to wait for */
    assert_int_equal(fake_msgs(a, MSG_FETCH_REQ), 0);
    assert_int_equal(a->c.locality_hits, 3);
    int passes = 0;
    for (; passes < 100 && a->staged < 2; passes++)
        fake_node_run_once(a, false);
    assert_int_equal(a->staged, 2);
    assert_int_equal(a->staged_failed, 0);
    assert_true(passes >= 3); /* 9 MiB is more than two passes' budget */
    assert_false(objstore_wants_spill(store(&p, 0), key));
    assert_true(same_bytes(store(&p, 0), key, bytes));

    char *cause = NULL;
    assert_int_equal(data_stage_files(p.d[0], t1, &cause), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/task-1-1/inputs/0", p.dir[0]);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, (off_t)bytes);
    assert_int_equal(sb.st_nlink, 2); /* linked, not written */

    /* The task's end takes its staged inputs away (the link held the store's bytes);
     * the rest of its directory stays. */
    data_release(p.d[0], t1);
    assert_int_equal(stat(path, &sb), -1);
    snprintf(path, sizeof path, "%s/task-1-1/inputs", p.dir[0]);
    assert_int_equal(stat(path, &sb), -1);
    snprintf(path, sizeof path, "%s/task-1-1", p.dir[0]);
    assert_int_equal(rmdir(path), 0);
    data_release(p.d[0], t2); /* staged nothing: nothing to remove, no complaint */
    data_release(p.d[0], t3);
    ntask_free(t1);
    ntask_free(t2);
    ntask_free(t3);
    pair_close(&p);
}

/* ---- emulation ---------------------------------------------------------------------- */

/* Runs n's loop (blocking while a timer is armed) until `done` holds; the test's clock
 * jumps far ahead first, so whatever the pacer holds is due when its timer fires. */
static void run_until(struct node *n, bool (*done)(struct node *), const char *what)
{
    n->mono += 10 * (int64_t)1000000000;
    for (int i = 0; i < 1000 && !done(n); i++)
        fake_node_run_once(n, true);
    if (!done(n))
        fail_msg("the pacer never delivered: %s", what);
}

static bool two_replies(struct node *n)
{
    return fake_msgs(n, MSG_FETCH_REP) == 2;
}

static bool one_reply(struct node *n)
{
    return fake_msgs(n, MSG_FETCH_REP) == 1;
}

static bool one_request(struct node *n)
{
    return fake_msgs(n, MSG_FETCH_REQ) == 1;
}

static bool staged(struct node *n)
{
    return n->staged > 0;
}

static void bandwidth_defers_replies_to_the_pacer(void **state)
{
    (void)state;
    struct pair p;
    /* 1 MB/s: the part of the object past the first chunk (the links' burst) waits. */
    pair_open(&p, 0, 1e6, 0);
    struct node *a = p.n[0], *b = p.n[1];
    const uint64_t bytes = CHUNK + 1000;
    uint64_t key = object_on(&p, 1, 1, bytes);
    struct ntask *t = fake_task(1, true, bytes, 1);
    assert_int_equal(data_stage(p.d[0], t), 0);
    assert_int_equal(fake_msgs(a, MSG_FETCH_REQ), 2);

    /* B answers what the burst covers; the rest is held for the pacer. */
    assert_int_equal(fake_node_pass(a, b, NULL), 2);
    assert_int_equal(fake_msgs(b, MSG_FETCH_REP), 1);
    struct rbuf r;
    rbuf_init(&r, fake_msg(b, MSG_FETCH_REP, 0)->body.data,
              fake_msg(b, MSG_FETCH_REP, 0)->body.len);
    (void)rbuf_u32(&r);
    assert_int_equal(rbuf_u32(&r), 0);
    assert_int_equal(rbuf_u64(&r), bytes);
    assert_int_equal(rbuf_u64(&r), 0);
    run_until(b, two_replies, "B's second reply");
    assert_int_equal(b->c.bytes_out, bytes);

    /* A writes both chunks as they come, but the fetch ends only when its ingress
     * link would have delivered the last byte. */
    assert_int_equal(fake_node_pass(b, a, NULL), 2);
    assert_int_equal(a->c.bytes_in, bytes);
    assert_int_equal(a->staged, 0);
    assert_false(objstore_has(store(&p, 0), key));
    run_until(a, staged, "A's completion");
    assert_int_equal(a->staged, 1);
    assert_int_equal(a->staged_failed, 0);
    assert_true(same_bytes(store(&p, 0), key, bytes));
    data_release(p.d[0], t);
    ntask_free(t);
    pair_close(&p);
}

static void latency_holds_requests_and_replies(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 1000000); /* 1 ms one way */
    struct node *a = p.n[0], *b = p.n[1];
    uint64_t key = object_on(&p, 1, 1, 5000);
    struct ntask *t = fake_task(1, true, 5000, 1);
    assert_int_equal(data_stage(p.d[0], t), 0);
    /* Nothing leaves before the loop runs, in either direction. */
    assert_int_equal(fake_msgs(a, 0), 0);
    run_until(a, one_request, "A's request");
    assert_int_equal(fake_node_pass(a, b, NULL), 1);
    assert_int_equal(fake_msgs(b, 0), 0);
    run_until(b, one_reply, "B's reply");
    /* The arrival itself pays no latency: the sender's side did. */
    assert_int_equal(fake_node_pass(b, a, NULL), 1);
    assert_int_equal(a->staged, 1);
    assert_int_equal(a->staged_failed, 0);
    assert_true(same_bytes(store(&p, 0), key, 5000));
    data_release(p.d[0], t);
    ntask_free(t);
    pair_close(&p);
}

/* ---- deaths ------------------------------------------------------------------------- */

/*
 * The holder dies mid-fetch: the fetch ends at once, and both tasks waiting on it are
 * staged with a reason (they cannot run).  B's replies to what A asked before, delivered
 * late, find no fetch: no byte is counted, nothing is asked again, no copy appears.
 */
static void fetch_from_a_holder_that_dies_ends(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0], *b = p.n[1];
    uint64_t key = object_on(&p, 1, 1, OBJECT_BYTES);
    struct ntask *t1 = fake_task(1, true, OBJECT_BYTES, 1);
    struct ntask *t2 = fake_task(2, true, OBJECT_BYTES, 1);
    t2->spec.inputs[0].object = key;
    assert_int_equal(data_stage(p.d[0], t1), 0);
    assert_int_equal(data_stage(p.d[0], t2), 0);
    /* One round trip: some chunks are in, more are asked for. */
    assert_true(fake_node_pass(a, b, NULL) > 0);
    assert_true(fake_node_pass(b, a, NULL) > 0);
    assert_int_equal(a->staged, 0);
    uint64_t bytes_in = a->c.bytes_in;
    assert_true(bytes_in > 0 && bytes_in < OBJECT_BYTES);
    assert_true(fake_msgs(a, MSG_FETCH_REQ) > 0);

    fake_node_kill(a, 1);
    assert_int_equal(a->staged, 2);
    assert_int_equal(a->staged_failed, 2);
    assert_false(objstore_has(store(&p, 0), key));

    /* What A asked before the death is answered late. */
    assert_true(fake_node_pass(a, b, NULL) > 0);
    fake_msgs_clear(a);
    assert_true(fake_node_pass(b, a, NULL) > 0);
    assert_int_equal(a->staged, 2);
    assert_int_equal(a->c.bytes_in, bytes_in);
    assert_int_equal(fake_msgs(a, 0), 0);
    assert_false(objstore_has(store(&p, 0), key));
    /* A fabricated last chunk under the old request id changes nothing either. */
    assert_int_equal(deliver_reply(a, 1, 1, 0, OBJECT_BYTES, bytes_in, 0), 0);
    assert_int_equal(a->staged, 2);
    assert_int_equal(fake_msgs(a, 0), 0);

    data_release(p.d[0], t1);
    data_release(p.d[0], t2);
    ntask_free(t1);
    ntask_free(t2);
    pair_close(&p);
}

/* A death elsewhere (node 2 of three) leaves a fetch from node 1 alone: it completes. */
static void death_of_another_node_leaves_the_fetch(void **state)
{
    (void)state;
    struct pair p;
    pair_open_in(&p, 3, 0, 0, 0);
    struct node *a = p.n[0];
    uint64_t key = object_on(&p, 1, 1, OBJECT_BYTES);
    struct ntask *t = fake_task(1, true, OBJECT_BYTES, 1);
    assert_int_equal(data_stage(p.d[0], t), 0);
    assert_true(fake_node_pass(a, p.n[1], NULL) > 0);
    assert_true(fake_node_pass(p.n[1], a, NULL) > 0);
    fake_node_kill(a, 2);
    assert_int_equal(a->staged, 0);
    pump(&p, 1, NULL, false);
    assert_int_equal(a->staged, 1);
    assert_int_equal(a->staged_failed, 0);
    assert_true(same_bytes(store(&p, 0), key, OBJECT_BYTES));
    data_release(p.d[0], t);
    ntask_free(t);
    pair_close(&p);
}

/*
 * A task staged after its input's holder died: nobody will ever answer a fetch from
 * it, so staging must fail (as for an unknown holder) rather than ask the dead and wait
 * for ever.
 */
static void fetch_from_a_dead_holder_fails_at_once(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0];
    object_on(&p, 1, 1, 5000);
    fake_node_kill(a, 1);
    struct ntask *t = fake_task(1, true, 5000, 1);
    int rc = data_stage(p.d[0], t);
    assert_int_equal(fake_msgs(a, MSG_FETCH_REQ), 0);
    /* Refused at once, or staged with a reason: either way the task is not left
     * waiting. */
    assert_true(rc < 0 || (a->staged == 1 && a->staged_failed == 1));
    data_release(p.d[0], t);
    ntask_free(t);
    pair_close(&p);
}

/* ---- malformed messages ------------------------------------------------------------- */

static void malformed_fetch_messages_are_refused(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p, 0, 0, 0);
    struct node *a = p.n[0], *b = p.n[1];
    uint64_t key = object_on(&p, 1, 1, 5000);

    /* Requests: short, and asking for more than a chunk. */
    struct wbuf w;
    wbuf_init(&w);
    wbuf_put_u32(&w, 1);
    wbuf_put_u64(&w, key);
    wbuf_put_u64(&w, 0);
    assert_true(fake_node_deliver(b, 0, MSG_FETCH_REQ, w.data, w.len) < 0);
    wbuf_put_u32(&w, CHUNK + 1);
    assert_true(fake_node_deliver(b, 0, MSG_FETCH_REQ, w.data, w.len) < 0);
    wbuf_fini(&w);
    assert_true(fake_node_deliver(b, 0, MSG_FETCH_REQ, NULL, 0) < 0);
    assert_int_equal(fake_msgs(b, 0), 0);

    /* Replies: short header, a length past a chunk, and data shorter than its length
     * for a fetch under way. */
    struct ntask *t = fake_task(1, true, 5000, 1);
    assert_int_equal(data_stage(p.d[0], t), 0);
    uint32_t req = first_req(a);
    uint8_t short_header[10] = {0};
    assert_true(fake_node_deliver(a, 1, MSG_FETCH_REP, short_header, sizeof short_header) <
                0);
    assert_true(deliver_reply(a, 1, req, 0, 5000, 0, CHUNK + 1) < 0);
    assert_true(deliver_reply(a, 1, req, 0, 5000, 0, 5000) < 0);
    assert_int_equal(a->staged, 0);

    /* Both parts still work: the genuine exchange completes. */
    pump(&p, 1, NULL, false);
    assert_int_equal(a->staged, 1);
    assert_int_equal(a->staged_failed, 0);
    assert_true(same_bytes(store(&p, 0), key, 5000));
    data_release(p.d[0], t);
    ntask_free(t);
    pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(input_on_other_node_is_fetched),
        cmocka_unit_test(second_task_waits_on_the_same_fetch),
        cmocka_unit_test(fetches_share_the_window_oldest_first),
        cmocka_unit_test(release_unpins),
        cmocka_unit_test(cached_copy_is_a_hit),
        cmocka_unit_test(unknown_holder_fails_at_once),
        cmocka_unit_test(holder_without_object_fails_staging),
        cmocka_unit_test(reply_out_of_step_fails_staging),
        cmocka_unit_test(corrupted_last_chunk_fails_the_check),
        cmocka_unit_test(output_becomes_an_object),
        cmocka_unit_test(declared_outputs_become_objects),
        cmocka_unit_test(declared_output_is_fetched_before_its_size_is_known),
        cmocka_unit_test(big_input_is_written_into_the_store_before_staging),
        cmocka_unit_test(bandwidth_defers_replies_to_the_pacer),
        cmocka_unit_test(latency_holds_requests_and_replies),
        cmocka_unit_test(malformed_fetch_messages_are_refused),
        cmocka_unit_test(fetch_from_a_holder_that_dies_ends),
        cmocka_unit_test(death_of_another_node_leaves_the_fetch),
        cmocka_unit_test(fetch_from_a_dead_holder_fails_at_once),
    };
    if (tmpdir_make("test_part_data") < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, remove_dir);
}
