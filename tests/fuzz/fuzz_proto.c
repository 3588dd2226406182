/*
 * fuzz_proto — libFuzzer harness for the decoders of message payloads that have no
 * harness of their own: core/net/proto.h's (task specs, task ends, stats with their job
 * counts and deaths, a job's ended tasks for an attaching client), the task metadata record of core/kvs/tmd.h, and the trace range's
 * (trace/format/wire.h: hello, resume/ack, block, live, job, names, subscribe, state).
 * The first input byte picks the decoder, the rest is its payload.  Built by `make
 * fuzz`, replayed by `make fuzz-replay` (README.md).
 *
 * Besides memory safety and leaks (everything decoded is freed), it checks that the
 * codecs are canonical: whatever a decoder accepts, the encoder writes as bytes that
 * decode again, completely, to a value the encoder writes as the very same bytes; and
 * where the wire format has a single spelling for a value (no free-form strings), those
 * bytes are exactly the input the decoder consumed, so encoder and decoder cannot drift.
 * A refused payload must leave nothing to free.
 */
#include <errno.h>
#include <stdbool.h>

#include "core/kvs/tmd.h"
#include "core/model/submit_mode.h"
#include "core/net/proto.h"
#include "tests/fuzz/fuzz.h"
#include "trace/format/wire.h"

enum codec {
    C_TASK, C_TASK_END, C_STATS, C_TMD, C_HELLO, C_NEXT_SEQ, C_BLOCK, C_LIVE, C_JOB,
    C_NAMES, C_SUBSCRIBE, C_STATE, C_JOB_ENDED, C_RESUBMIT, C_COUNT
};

/*
 * Decodes one payload of `codec` from r and, on success, writes the decoded value back
 * into out.  *exact: the value has one spelling, so out must equal the bytes consumed.
 * Returns the decoder's result.
 */
static int decode_encode(enum codec codec, struct rbuf *r, struct wbuf *out, bool *exact)
{
    int rc;
    *exact = true;
    switch (codec) {
    case C_TASK: {
        struct task_spec t;
        if ((rc = proto_get_task(r, &t)) < 0) {
            check(t.cmd == NULL && t.inputs == NULL && t.names == NULL);
            return rc;
        }
        check(t.cores >= 1 && t.cores <= TASK_CORES_MAX && t.num_names <= t.num_inputs);
        for (uint32_t k = 0; k < t.num_names; k++)
            check(task_stage_name_ok(t.names[k]));
        check(t.kind < TASK_KIND_COUNT && t.duration_s >= 0);
        check((t.kind == TASK_COMMAND) == (t.cmd != NULL));
        /* A command's text stops at its first NUL: a longer wire string has no spelling
         * of its own. */
        *exact = t.kind != TASK_COMMAND;
        proto_put_task(out, &t);
        proto_task_fini(&t);
        return 0;
    }
    case C_TASK_END: {
        struct proto_task_end e;
        if ((rc = proto_get_task_end(r, &e)) < 0) {
            check(e.detail == NULL);
            return rc;
        }
        check(task_status_final(e.status) && (!e.timed_out || e.status == TASK_FAILED));
        check(e.usage.user_ns >= 0 && e.usage.sys_ns >= 0);
        *exact = e.detail == NULL;
        proto_put_task_end(out, &e);
        free(e.detail);
        return 0;
    }
    case C_STATS: {
        struct proto_stats s;
        if ((rc = proto_get_stats(r, &s)) < 0) {
            check(s.jobs == NULL && s.dead == NULL);
            return rc;
        }
        proto_put_stats(out, &s);
        proto_stats_fini(&s);
        return 0;
    }
    case C_JOB_ENDED: {
        struct proto_job_ended m;
        if ((rc = proto_get_job_ended(r, &m)) < 0) {
            check(m.ends == NULL);
            return rc;
        }
        for (uint32_t i = 0; i < m.count; i++)
            check(task_status_final(m.ends[i].status) &&
                  task_key_job(m.ends[i].key) == m.counts.job);
        proto_put_job_ended(out, &m);
        free(m.ends);
        return 0;
    }
    case C_TMD: {
        struct tmd t;
        if ((rc = tmd_get(r, &t)) < 0) {
            check(t.late == NULL && t.num_children == 0);
            return rc;
        }
        check(t.num_wait_parent <= t.num_parents && t.status < TASK_STATUS_COUNT);
        tmd_put(out, &t);
        tmd_fini(&t);
        return 0;
    }
    case C_HELLO: {
        struct wire_hello h;
        if ((rc = wire_get_hello(r, &h)) < 0)
            return rc;
        check(memchr(h.run_id, '\0', sizeof h.run_id) != NULL);
        wire_put_hello(out, &h);
        return 0;
    }
    case C_NEXT_SEQ: {
        int64_t seq;
        if ((rc = wire_get_next_seq(r, &seq)) < 0)
            return rc;
        check(seq >= 0);
        wire_put_next_seq(out, seq);
        return 0;
    }
    case C_BLOCK: {
        struct wire_block blk;
        if ((rc = wire_get_block(r, &blk)) < 0)
            return rc;
        check(blk.count > 0 && blk.last_seq >= blk.first_seq);
        wire_put_block(out, &blk);
        return 0;
    }
    case C_LIVE: {
        struct wire_live l;
        if ((rc = wire_get_live(r, &l)) < 0) {
            check(l.notes == NULL);
            return rc;
        }
        check(l.nnotes <= WIRE_MAX_NOTES);
        for (uint32_t i = 0; i < l.nnotes; i++)
            check(memchr(l.notes[i].text, '\0', sizeof l.notes[i].text) != NULL);
        *exact = l.nnotes == 0;
        wire_put_live(out, &l);
        free(l.notes);
        return 0;
    }
    case C_JOB: {
        struct wire_job j;
        if ((rc = wire_get_job(r, &j)) < 0) {
            check(j.name == NULL && j.digest == NULL && j.mode == NULL && j.bad != NULL);
            return rc;
        }
        check(j.mode != NULL && (j.mode[0] == '\0' || submit_mode_is_name(j.mode)));
        wire_put_job(out, &j);
        wire_job_fini(&j);
        return 0;
    }
    case C_NAMES: {
        struct wire_names n;
        if ((rc = wire_get_names(r, &n)) < 0) {
            check(n.ids == NULL);
            return rc;
        }
        check(n.count <= WIRE_MAX_NAMES);
        wire_put_names(out, &n);
        free(n.ids);
        return 0;
    }
    case C_SUBSCRIBE: {
        uint32_t period;
        if ((rc = wire_get_subscribe(r, &period)) < 0)
            return rc;
        wire_put_subscribe(out, period);
        return 0;
    }
    case C_STATE: {
        struct wire_state s;
        if ((rc = wire_get_state(r, &s)) < 0) {
            check(s.nodes == NULL && s.notes == NULL && s.jobs == NULL && s.job_nodes == NULL);
            check(s.bad != NULL);
            return rc;
        }
        check(s.nnodes <= WIRE_MAX_NODES && s.nnotes <= WIRE_MAX_NOTES &&
              s.njobs <= WIRE_MAX_JOBS);
        *exact = s.nnotes == 0;
        wire_put_state(out, &s);
        wire_state_fini(&s);
        return 0;
    }
    case C_RESUBMIT: {
        struct proto_resubmit m;
        if ((rc = proto_get_resubmit(r, &m)) < 0) {
            check(m.parents == NULL && m.spec.cmd == NULL && m.spec.inputs == NULL);
            return rc;
        }
        check(m.ready <= 1 && m.spec.kind < TASK_KIND_COUNT);
        *exact = m.spec.kind != TASK_COMMAND;
        proto_put_resubmit(out, &m, NULL, 0);
        proto_resubmit_fini(&m);
        return 0;
    }
    default:
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    enum codec codec = (enum codec)(data[0] % C_COUNT);
    struct rbuf r;
    rbuf_init(&r, data + 1, size - 1);
    struct wbuf once, twice;
    wbuf_init(&once);
    wbuf_init(&twice);
    bool exact, exact_again;
    int rc = decode_encode(codec, &r, &once, &exact);
    check(rc == 0 || rc == -EBADMSG);
    if (rc == 0) {
        size_t consumed = size - 1 - r.left;
        check(rbuf_ok(&r) && consumed <= size - 1);
        if (exact)
            check(once.len == consumed && memcmp(once.data, data + 1, consumed) == 0);
        else
            check(once.len <= consumed);
        /* The encoder's bytes decode, all of them, and encode to themselves. */
        struct rbuf again;
        rbuf_init(&again, once.data, once.len);
        check(decode_encode(codec, &again, &twice, &exact_again) == 0);
        check(again.left == 0 && rbuf_ok(&again));
        check(twice.len == once.len && memcmp(twice.data, once.data, once.len) == 0);
    }
    wbuf_fini(&once);
    wbuf_fini(&twice);
    return 0;
}
