/*
 * The console's model (tui/model): hand-made samples and notes with answers worked out
 * by hand — progress, rates, efficiency and ETA; one history point per step; the steal
 * matrix and its expiry; the log; the node table's sorting and filter; the run header;
 * garbage that must be ignored; and the property replay relies on, that the view does
 * not depend on how often the model was ticked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/task.h"
#include "tui/model.h"

#define MS 1000000LL
#define S 1000000000LL

#define HEADER_JSON                                                                            \
    "{\"format\":1,\"run_id\":\"run-7\",\"start_ns\":1700000000000000000,"                     \
    "\"created\":\"2024-01-01T00:00:00Z\",\"nodes\":["                                         \
    "{\"id\":0,\"host\":\"127.0.0.1\",\"port\":7000,\"slots\":4,\"speed\":1.0},"               \
    "{\"id\":1,\"host\":\"127.0.0.1\",\"port\":7001,\"slots\":8,\"speed\":2.0},"               \
    "{\"id\":2,\"host\":\"127.0.0.1\",\"port\":7002,\"slots\":2,\"speed\":0.5}],"              \
    "\"config\":{\"node_args\":[]},\"workload\":{\"name\":\"montage\",\"digest\":\"abc\"}}"

static struct trace_sample sample(int32_t busy, int32_t slots, int64_t ended, int64_t failed,
                                  int64_t busy_ns)
{
    struct trace_sample s;
    memset(&s, 0, sizeof s);
    s.busy = busy;
    s.slots = slots;
    s.ended = ended;
    s.failed = failed;
    s.busy_ns = busy_ns;
    return s;
}

static void feed(struct model *m, int32_t node, int64_t t, struct trace_sample s)
{
    model_sample(m, node, t, &s, true);
}

static struct wire_note note(uint8_t kind, int32_t node, int64_t t)
{
    struct wire_note n;
    memset(&n, 0, sizeof n);
    n.kind = kind;
    n.node = node;
    n.time_ns = t;
    n.task = UINT64_MAX;
    n.peer = -1;
    return n;
}

static void task_end(struct model *m, int32_t node, int64_t t, uint64_t task, int32_t status,
                     int64_t exit_code)
{
    struct wire_note n = note(TRACE_TASK_END, node, t);
    n.task = task;
    n.status = status;
    n.count = exit_code;
    model_note(m, &n);
}

static void grant(struct model *m, int32_t thief, int32_t victim, int64_t t, int64_t tasks)
{
    struct wire_note n = note(TRACE_STEAL_GRANT, thief, t);
    n.peer = victim;
    n.count = tasks;
    model_note(m, &n);
}

static void job(struct model *m, uint32_t id, int64_t t, int64_t tasks, const char *name)
{
    struct wire_note n = note(TRACE_JOB_SUBMIT, -1, t);
    n.task = (uint64_t)id << 32 | UINT32_MAX;
    n.count = tasks;
    snprintf(n.text, sizeof n.text, "%s", name);
    model_note(m, &n);
}

static const struct model_node *node_by_id(const struct model_view *v, int32_t id)
{
    for (uint32_t i = 0; i < v->nnodes; i++)
        if (v->nodes[i].id == id)
            return &v->nodes[i];
    fail_msg("no node %d", id);
    return NULL;
}

static const char *last_log(const struct model_view *v)
{
    assert_true(v->nlog > 0);
    return v->log[v->nlog - 1].text;
}

static bool log_has(const struct model_view *v, const char *text)
{
    for (uint32_t i = 0; i < v->nlog; i++)
        if (strcmp(v->log[i].text, text) == 0)
            return true;
    return false;
}

/* ---- header ------------------------------------------------------------------------ */

static void test_header_nodes(void **state)
{
    (void)state;
    struct model *m = model_create();
    assert_int_equal(model_set_header(m, HEADER_JSON), 0);
    const struct model_view *v = model_view(m);
    assert_string_equal(v->run_id, "run-7");
    assert_string_equal(v->workload, "montage");
    assert_int_equal(v->nnodes, 3);
    assert_int_equal(node_by_id(v, 0)->slots, 4);
    assert_int_equal(node_by_id(v, 1)->slots, 8);
    assert_int_equal(node_by_id(v, 2)->slots, 2);
    assert_true(node_by_id(v, 1)->speed == 2.0);
    assert_true(node_by_id(v, 2)->speed == 0.5);
    assert_false(node_by_id(v, 0)->seen);
    assert_false(node_by_id(v, 0)->connected);
    model_tick(m, S);
    assert_int_equal(model_view(m)->slots, 14);

    /* Samples override the header's slots; an unknown node appears with its sample. */
    feed(m, 1, 2 * S, sample(3, 6, 0, 0, 0));
    feed(m, 7, 2 * S, sample(1, 5, 0, 0, 0));
    v = model_view(m);
    assert_int_equal(v->nnodes, 4);
    assert_int_equal(node_by_id(v, 1)->slots, 6);
    assert_int_equal(node_by_id(v, 7)->slots, 5);
    assert_true(node_by_id(v, 7)->speed == 1.0);
    assert_true(node_by_id(v, 7)->seen);

    /* Reset forgets the run but not the header. */
    model_reset(m);
    v = model_view(m);
    assert_int_equal(v->nnodes, 3);
    assert_int_equal(node_by_id(v, 1)->slots, 8);
    assert_false(node_by_id(v, 1)->seen);
    assert_string_equal(v->run_id, "run-7");
    model_destroy(m);
    model_destroy(NULL);
}

static void test_header_bad(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "{\"nodes\":", "[1,2]", "42", "{\"nodes\":4}", "{\"nodes\":[{\"id\":\"x\"}]}",
        "{\"nodes\":[{\"id\":-1}]}", "{\"nodes\":[{\"id\":70000}]}",
        "{\"nodes\":[{\"id\":1,\"slots\":-3}]}", "{\"run_id\":5}", "{\"workload\":\"w\"}",
        "{\"nodes\":[3]}",
    };
    struct model *m = model_create();
    assert_int_equal(model_set_header(m, HEADER_JSON), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(model_set_header(m, bad[i]), -EINVAL);
    assert_int_equal(model_set_header(m, NULL), -EINVAL);
    /* A refused header changes nothing. */
    assert_int_equal(model_view(m)->nnodes, 3);
    assert_string_equal(model_view(m)->run_id, "run-7");

    struct model *bare = model_create();
    assert_int_equal(model_set_header(bare, "{\"nodes\":[{\"id\":\"x\"}]}"), -EINVAL);
    assert_int_equal(model_view(bare)->nnodes, 0);
    feed(bare, 2, S, sample(1, 4, 3, 0, 0));
    model_tick(bare, S);
    assert_int_equal(model_view(bare)->nnodes, 1);
    assert_int_equal(model_view(bare)->done, 3);
    /* A spool header (no nodes) is a header all the same. */
    assert_int_equal(model_set_header(bare, "{\"format\":1,\"run_id\":null,\"spool\":{\"node\":2}}"),
                     0);
    model_destroy(bare);
    model_destroy(m);
}

/* ---- progress ---------------------------------------------------------------------- */

/*
 * Two nodes sampled every 100 ms for 4 s, each ending 10 tasks a second (ended = k at
 * sample k), node 0 with 4 slots all busy, node 1 with 2 slots one busy; a job of 200.
 * At 4 s: ended 40 + 40; the rate window reaches back to the 2 s step (ended 20 + 20),
 * so tput_now = 40 / 2 s = 20/s; tput_avg = 80 / 4 s = 20/s; efficiency =
 * (4 + 1) slot-seconds a second / 6 slots = 5/6; ETA = (200 - 80) / 20 = 6 s.
 */
static void feed_steady(struct model *m, int from_k, int to_k)
{
    for (int k = from_k; k <= to_k; k++) {
        int64_t t = k * 100 * MS;
        feed(m, 0, t, sample(4, 4, k, 0, 4 * t));
        feed(m, 1, t, sample(1, 2, k, 0, t));
    }
}

static void test_progress_rates(void **state)
{
    (void)state;
    struct model *m = model_create();
    job(m, 1, 0, 200, "bot");
    feed_steady(m, 0, 40);
    model_tick(m, 4 * S);
    const struct model_view *v = model_view(m);
    assert_int_equal(v->total, 200);
    assert_int_equal(v->done, 80);
    assert_int_equal(v->failed, 0);
    assert_int_equal(v->running, 5);
    assert_int_equal(v->slots, 6);
    assert_int_equal(v->first_ns, 0);
    assert_true(fabs(v->tput_now - 20.0) < 1e-9);
    assert_true(fabs(v->tput_avg - 20.0) < 1e-9);
    assert_true(fabs(v->efficiency - 5.0 / 6.0) < 1e-9);
    assert_true(fabs(v->eta_s - 6.0) < 1e-9);
    assert_string_equal(v->workload, "bot");
    assert_true(fabs(node_by_id(v, 0)->util - 1.0) < 1e-9);
    assert_true(fabs(node_by_id(v, 1)->util - 0.5) < 1e-9);
    assert_true(fabs(node_by_id(v, 1)->util_avg - 0.5) < 1e-9);
    assert_true(node_by_id(v, 0)->cache_hit_rate == -1.0);

    /* The job announced again (a resent message) is not more work. */
    job(m, 1, 4 * S, 200, "bot");
    model_tick(m, 4 * S);
    assert_int_equal(model_view(m)->total, 200);

    /* Nothing ends for 2 s more: the rate falls to 0 once the window has passed. */
    model_tick(m, 6 * S);
    v = model_view(m);
    assert_true(v->tput_now == 0.0);
    assert_true(v->eta_s == -1.0);
    model_destroy(m);
}

/*
 * node 0 ended 10 (2 failed) and node 1 ended 5, one of them cancelled: done is
 * (10 - 2) + (5 - 0 - 1) = 12.  A cancellation noted after the node's latest sample is
 * held until a sample covers it, so done never dips.
 */
static void test_done_failed_cancelled(void **state)
{
    (void)state;
    struct model *m = model_create();
    job(m, 3, 0, 20, "dag");
    feed(m, 0, 0, sample(0, 4, 0, 0, 0));
    feed(m, 1, 0, sample(0, 4, 0, 0, 0));
    task_end(m, 1, 900 * MS, (uint64_t)3 << 32 | 5, TASK_CANCELLED, -1);
    feed(m, 0, S, sample(2, 4, 10, 2, 0));
    feed(m, 1, S, sample(1, 4, 5, 0, 0));
    model_tick(m, S);
    const struct model_view *v = model_view(m);
    assert_int_equal(v->done, 12);
    assert_int_equal(v->failed, 2);
    assert_int_equal(v->cancelled, 1);
    assert_int_equal(node_by_id(v, 0)->done, 8);
    assert_int_equal(node_by_id(v, 1)->done, 4);

    /* A cancellation after the latest sample: not yet in ended, so not yet subtracted. */
    task_end(m, 0, 1100 * MS, (uint64_t)3 << 32 | 6, TASK_CANCELLED, -1);
    task_end(m, 0, 1150 * MS, (uint64_t)3 << 32 | 7, TASK_CANCELLED, -1);
    model_tick(m, 1200 * MS);
    assert_int_equal(model_view(m)->done, 12);
    /* The next sample counts one of them (the other came after it) and one more done. */
    feed(m, 0, 1120 * MS, sample(2, 4, 12, 2, 0));
    model_tick(m, 1200 * MS);
    v = model_view(m);
    assert_int_equal(v->done, 13);
    assert_int_equal(v->cancelled, 2);
    feed(m, 0, 1300 * MS, sample(2, 4, 13, 2, 0));
    model_tick(m, 1300 * MS);
    v = model_view(m);
    assert_int_equal(v->done, 13);
    assert_int_equal(v->cancelled, 3);
    /* 20 - 13 - 2 - 3 = 2 tasks to go. */
    assert_int_equal(v->total - v->done - v->failed - v->cancelled, 2);

    /* Every task ended: the ETA is 0. */
    feed(m, 1, 1400 * MS, sample(0, 4, 7, 0, 0));
    model_tick(m, 1400 * MS);
    assert_true(model_view(m)->eta_s == 0.0);
    model_destroy(m);
}

/* A console that attaches mid-run measures what it saw, not what the counters hold. */
static void test_late_attach(void **state)
{
    (void)state;
    struct model *m = model_create();
    feed(m, 0, 3600 * S, sample(4, 4, 100000, 10, 3000 * 4 * S));
    feed(m, 0, 3601 * S, sample(4, 4, 100050, 10, 3000 * 4 * S + 2 * S));
    model_tick(m, 3601 * S);
    const struct model_view *v = model_view(m);
    assert_true(fabs(v->efficiency - 0.5) < 1e-9);   /* 2 busy slot-s of 4 in 1 s */
    assert_true(fabs(v->tput_avg - 50.0) < 1e-9);
    assert_int_equal(v->done, 100040);
    model_destroy(m);
}

/* ---- histories --------------------------------------------------------------------- */

static void test_history_steps(void **state)
{
    (void)state;
    struct model *m = model_create();
    struct trace_sample s = sample(1, 4, 0, 0, 0);
    s.waitq = 7;
    feed(m, 0, 100 * MS, s);      /* first input: steps start at 0.25 s */
    s = sample(2, 4, 0, 0, 0);
    s.waitq = 5;
    feed(m, 0, 600 * MS, s);      /* records 0.25 and 0.5 with the sample it replaces */
    s = sample(4, 4, 0, 0, 0);
    s.waitq = 1;
    feed(m, 0, 1100 * MS, s);     /* records 0.75 and 1.0 */
    model_tick(m, 1100 * MS);
    const struct model_view *v = model_view(m);
    static const float util[] = {0.25f, 0.25f, 0.5f, 0.5f};
    static const float waitq[] = {7, 7, 5, 5};
    assert_int_equal(v->util_hist.len, 4);
    const struct model_node *n = node_by_id(v, 0);
    assert_int_equal(n->util_hist.len, 4);
    for (uint32_t i = 0; i < 4; i++) {
        assert_true(model_hist_get(&v->util_hist, i) == util[i]);
        assert_true(model_hist_get(&n->util_hist, i) == util[i]);
        assert_true(model_hist_get(&n->waitq_hist, i) == waitq[i]);
    }

    /* A tick that jumps crosses 1.25 .. 2.0: four points of the latest value. */
    model_tick(m, 2 * S);
    v = model_view(m);
    assert_int_equal(v->util_hist.len, 8);
    for (uint32_t i = 4; i < 8; i++)
        assert_true(model_hist_get(&v->util_hist, i) == 1.0f);
    /* Ticking again within the step adds nothing. */
    model_tick(m, 2100 * MS);
    assert_int_equal(model_view(m)->util_hist.len, 8);

    /* A node that appears late is padded to line up with the cluster. */
    feed(m, 5, 2200 * MS, sample(1, 1, 0, 0, 0));
    model_tick(m, 2250 * MS);
    v = model_view(m);
    assert_int_equal(v->util_hist.len, 9);
    n = node_by_id(v, 5);
    assert_int_equal(n->util_hist.len, 9);
    assert_true(model_hist_get(&n->util_hist, 7) == 0.0f);
    assert_true(model_hist_get(&n->util_hist, 8) == 1.0f);
    /* Cluster: (4 + 1) busy of (4 + 1) slots. */
    assert_true(model_hist_get(&v->util_hist, 8) == 1.0f);

    /* A long jump keeps the ring full, the newest last. */
    feed(m, 5, 2300 * MS, sample(0, 1, 0, 0, 0));
    model_tick(m, 1000 * S);
    v = model_view(m);
    assert_int_equal(v->util_hist.len, MODEL_HISTORY);
    assert_true(model_hist_get(&v->util_hist, MODEL_HISTORY - 1) == 0.8f);
    assert_true(model_hist_get(&v->util_hist, MODEL_HISTORY) == 0.0f); /* out of range */
    model_destroy(m);
}

/* Feeding the same inputs with a tick after each, or one tick at the end, gives the
 * same view: what replay's forward seeking relies on. */
static void feed_mixed(struct model *m, bool tick_often)
{
    job(m, 2, 5 * MS, 500, "mixed");
    for (int k = 0; k < 80; k++) {
        int64_t t = k * 37 * MS;
        for (int32_t node = 0; node < 3; node++) {
            struct trace_sample s = sample((k + node) % 5, 4, 2 * k + node, k / 10, k * 91 * MS);
            s.waitq = (k * 7 + node) % 13;
            s.sreadyq = k % 3;
            model_sample(m, node, t + node, &s, true);
        }
        if (k % 9 == 4)
            task_end(m, k % 3, t + 20 * MS, (uint64_t)2 << 32 | (uint32_t)k, TASK_FAILED, 1);
        if (k % 7 == 3)
            task_end(m, (k + 1) % 3, t + 21 * MS, (uint64_t)2 << 32 | (uint32_t)k,
                     TASK_CANCELLED, -1);
        if (k % 4 == 1)
            grant(m, k % 3, (k + 2) % 3, t + 22 * MS, 1 + k % 5);
        if (tick_often)
            model_tick(m, t + 30 * MS);
    }
}

static void test_tick_independent(void **state)
{
    (void)state;
    struct model *a = model_create(), *b = model_create();
    feed_mixed(a, true);
    feed_mixed(b, false);
    int64_t end = 80 * 37 * MS;
    model_tick(a, end);
    model_tick(b, end);
    const struct model_view *x = model_view(a), *y = model_view(b);
    assert_int_equal(x->done, y->done);
    assert_int_equal(x->cancelled, y->cancelled);
    assert_true(x->tput_now == y->tput_now);
    assert_true(x->efficiency == y->efficiency);
    assert_true(x->tput_now > 0);
    assert_int_equal(x->util_hist.len, y->util_hist.len);
    assert_true(x->util_hist.len > 10);
    for (uint32_t i = 0; i < x->util_hist.len; i++)
        assert_true(model_hist_get(&x->util_hist, i) == model_hist_get(&y->util_hist, i));
    for (uint32_t n = 0; n < x->nnodes; n++)
        for (uint32_t i = 0; i < x->util_hist.len; i++)
            assert_true(model_hist_get(&x->nodes[n].waitq_hist, i) ==
                        model_hist_get(&y->nodes[n].waitq_hist, i));
    assert_int_equal(x->nflows, y->nflows);
    for (uint32_t i = 0; i < x->nflows; i++)
        assert_int_equal(x->flows[i].tasks, y->flows[i].tasks);
    assert_int_equal(x->nlog, y->nlog);
    for (uint32_t i = 0; i < x->nlog; i++)
        assert_string_equal(x->log[i].text, y->log[i].text);
    model_destroy(a);
    model_destroy(b);
}

/* ---- steals ------------------------------------------------------------------------ */

static void test_steal_matrix(void **state)
{
    (void)state;
    struct model *m = model_create();
    assert_int_equal(model_set_header(m, HEADER_JSON), 0);
    grant(m, 1, 0, 1 * S, 5);
    grant(m, 2, 0, 2 * S, 3);
    grant(m, 1, 0, 3 * S, 2);
    grant(m, 0, 2, 3 * S, 1);
    model_tick(m, 3 * S);
    const struct model_view *v = model_view(m);
    assert_non_null(v->recent);
    assert_int_equal(v->nnodes, 3);
    assert_int_equal(v->recent[1 * 3 + 0], 7);
    assert_int_equal(v->recent[2 * 3 + 0], 3);
    assert_int_equal(v->recent[0 * 3 + 2], 1);
    assert_int_equal(v->recent[0 * 3 + 1], 0);
    assert_int_equal(v->nflows, 3);
    assert_int_equal(v->flows[0].thief, 1);
    assert_int_equal(v->flows[0].victim, 0);
    assert_int_equal(v->flows[0].tasks, 7);
    assert_int_equal(v->flows[1].thief, 2);
    assert_int_equal(v->flows[1].tasks, 3);
    assert_int_equal(v->flows[2].tasks, 1);
    assert_int_equal(node_by_id(v, 1)->steals_in, 7);
    assert_int_equal(node_by_id(v, 0)->steals_out, 10);
    assert_int_equal(node_by_id(v, 2)->steals_out, 1);
    /* Grants are not logged one by one. */
    assert_int_equal(v->nlog, 0);

    /* At 11.5 s the grant of 1 s has left the window: 1 <- 0 holds 2, 2 <- 0 still 3. */
    model_tick(m, 11500 * MS);
    v = model_view(m);
    assert_int_equal(v->recent[1 * 3 + 0], 2);
    assert_int_equal(v->recent[2 * 3 + 0], 3);
    assert_int_equal(v->flows[0].thief, 2);
    assert_int_equal(v->flows[0].tasks, 3);
    assert_int_equal(v->flows[1].thief, 1);
    assert_int_equal(v->flows[1].tasks, 2);
    /* At 13.5 s all have: the matrix is empty, all-time counts stay. */
    model_tick(m, 13500 * MS);
    v = model_view(m);
    assert_int_equal(v->nflows, 0);
    for (uint32_t i = 0; i < 9; i++)
        assert_int_equal(v->recent[i], 0);
    assert_int_equal(node_by_id(v, 1)->steals_in, 7);
    /* The whole run's matrix keeps every grant, and switching back shows the window. */
    model_steals_whole(m, true);
    v = model_view(m);
    assert_true(v->steals_whole);
    assert_int_equal(v->recent[1 * 3 + 0], 7);
    assert_int_equal(v->recent[2 * 3 + 0], 3);
    assert_int_equal(v->recent[0 * 3 + 2], 1);
    assert_int_equal(v->nflows, 3);
    model_tick(m, 14 * S);
    assert_int_equal(model_view(m)->recent[1 * 3 + 0], 7);
    model_steals_whole(m, false);
    v = model_view(m);
    assert_false(v->steals_whole);
    assert_int_equal(v->nflows, 0);

    /* Past 64 nodes there is no matrix, only flows. */
    for (int32_t id = 0; id < 70; id++)
        feed(m, id, 14 * S, sample(0, 1, 0, 0, 0));
    grant(m, 69, 3, 14 * S, 4);
    model_tick(m, 14 * S);
    v = model_view(m);
    assert_int_equal(v->nnodes, 70);
    assert_null(v->recent);
    assert_int_equal(v->nflows, 1);
    assert_int_equal(v->flows[0].thief, 69);
    assert_int_equal(v->flows[0].victim, 3);
    model_destroy(m);
}

/* ---- log --------------------------------------------------------------------------- */

static void test_log_lines(void **state)
{
    (void)state;
    struct model *m = model_create();
    task_end(m, 4, 12345 * MS, (uint64_t)2 << 32 | 17, TASK_FAILED, 1);
    const struct model_view *v = model_view(m);
    assert_int_equal(v->nlog, 1);
    assert_string_equal(last_log(v), "  12.345 node 4: task 2:17 failed (exit 1)");
    assert_int_equal(v->log[0].kind, TRACE_TASK_END);
    assert_int_equal(v->log[0].node, 4);
    assert_true(v->log[0].time_ns == 12345 * MS);

    struct wire_note n = note(TRACE_POLICY_CHANGE, 3, 13 * S);
    strcpy(n.text, "mdl");
    model_note(m, &n);
    model_tick(m, 13 * S);
    v = model_view(m);
    assert_string_equal(last_log(v), "  13.000 node 3: placement policy mdl");
    assert_string_equal(v->policy, "mdl");
    n = note(TRACE_POLICY_CHANGE, 4, 15 * S);
    strcpy(n.text, "mlb");
    model_note(m, &n);
    model_tick(m, 15 * S);
    assert_string_equal(model_view(m)->policy, "mixed (mdl, mlb)");
    n = note(TRACE_POLICY_CHANGE, 3, 16 * S);
    strcpy(n.text, "mlb");
    model_note(m, &n);
    model_tick(m, 16 * S);
    assert_string_equal(model_view(m)->policy, "mlb");

    job(m, 9, 17 * S, 1000, "montage");
    assert_string_equal(last_log(model_view(m)),
                        "  17.000 job 9 submitted: 1000 tasks (montage)");
    n = note(TRACE_NODE_DOWN, 2, 18 * S);
    model_note(m, &n);
    assert_string_equal(last_log(model_view(m)), "  18.000 node 2 down");
    n = note(TRACE_DROPPED, 1, 19 * S);
    n.count = 120;
    model_note(m, &n);
    assert_string_equal(last_log(model_view(m)), "  19.000 node 1: 120 trace events dropped");
    assert_int_equal(model_view(m)->nlog, 7);
    assert_true(log_has(model_view(m), "  12.345 node 4: task 2:17 failed (exit 1)"));
    assert_true(log_has(model_view(m), "  15.000 node 4: placement policy mlb"));
    model_destroy(m);
}

/*
 * The log as a reader expects it: 8 nodes coming up across a second's boundary are one
 * line; notes that arrive out of time order (each node's stream is delayed differently)
 * are shown in time order; and the job's end is a line of its own, at the end.
 */
static void test_log_order_and_end(void **state)
{
    (void)state;
    struct model *m = model_create();
    for (int32_t id = 0; id < 8; id++) {
        struct wire_note n = note(TRACE_NODE_UP, id, 900 * MS + id * 50 * MS);
        n.count = 2;
        model_note(m, &n);
    }
    job(m, 1, 1300 * MS, 2, "w");
    assert_string_equal(model_view(m)->log[0].text, "   0.900 8 nodes up (16 slots)");
    struct wire_note late = note(TRACE_POLICY_CHANGE, 1, 3 * S);
    strcpy(late.text, "mlb");
    model_note(m, &late);
    struct wire_note early = note(TRACE_TASK_END, 2, 2500 * MS);
    early.task = (uint64_t)1 << 32 | 0;
    early.status = TASK_FAILED;
    early.count = 1;
    model_note(m, &early);
    const struct model_view *v = model_view(m);
    for (uint32_t i = 1; i < v->nlog; i++)
        if (v->log[i].time_ns < v->log[i - 1].time_ns)
            fail_msg("line %u (%s) comes after a later one (%s)", i, v->log[i].text,
                     v->log[i - 1].text);
    assert_string_equal(last_log(v), "   3.000 node 1: placement policy mlb");
    /* Both tasks end (one failed): the end is logged once, at its time. */
    feed(m, 2, 3500 * MS, sample(0, 2, 2, 1, 0));
    model_tick(m, 4 * S);
    model_tick(m, 5 * S);
    v = model_view(m);
    assert_string_equal(last_log(v),
                        "   3.500 all 2 tasks ended: 1 done, 1 failed, 0 cancelled (2.200 s "
                        "from the first submit)");
    uint32_t ends = 0;
    for (uint32_t i = 0; i < v->nlog; i++)
        ends += strstr(v->log[i].text, "tasks ended") != NULL;
    assert_int_equal(ends, 1);
    model_destroy(m);
}

/* The table's steal columns are the samples' counts (the header's and the detail pane's),
 * not the grants seen in notes, which lag: 39 granted tasks seen, 206 in the sample. */
static void test_steal_columns_from_samples(void **state)
{
    (void)state;
    struct model *m = model_create();
    struct wire_note g = note(TRACE_STEAL_GRANT, 1, 100 * MS);
    g.peer = 0;
    g.count = 39;
    model_note(m, &g);
    const struct model_view *v = model_view(m);
    /* Before any sample of node 0: the notes are all there is. */
    assert_int_equal(model_node_stolen_out(node_by_id(v, 0)), 39);
    struct trace_sample s = sample(1, 2, 0, 0, 0);
    s.stolen_out = 206;
    feed(m, 0, 200 * MS, s);
    struct trace_sample s1 = sample(1, 2, 0, 0, 0);
    s1.stolen_in = 206;
    feed(m, 1, 200 * MS, s1);
    model_tick(m, 300 * MS);
    v = model_view(m);
    assert_int_equal(model_node_stolen_out(node_by_id(v, 0)), 206);
    assert_int_equal(model_node_stolen_in(node_by_id(v, 1)), 206);
    assert_int_equal(node_by_id(v, 0)->steals_out, 39); /* what the notes said */
    uint32_t out[4];
    assert_int_equal(model_rows(m, MODEL_SORT_STEALS_OUT, true, NULL, out, 4), 2);
    assert_int_equal(v->nodes[out[0]].id, 0);
    model_destroy(m);
}

/* Bursts fold into one line that grows. */
static void test_log_bursts(void **state)
{
    (void)state;
    struct model *m = model_create();
    for (int32_t id = 0; id < 3; id++) {
        struct wire_note n = note(TRACE_NODE_UP, id, 100 * MS + id);
        n.count = 8;
        model_note(m, &n);
        n = note(TRACE_POLICY_CHANGE, id, 100 * MS + 10 + id);
        strcpy(n.text, "mlb");
        model_note(m, &n);
    }
    const struct model_view *v = model_view(m);
    assert_int_equal(v->nlog, 2);
    assert_string_equal(v->log[0].text, "   0.100 3 nodes up (24 slots)");
    assert_string_equal(v->log[1].text, "   0.100 placement policy mlb on 3 nodes");
    assert_int_equal(v->log[0].node, -1);
    for (int32_t id = 0; id < 3; id++)
        assert_true(node_by_id(v, id)->connected);

    /* Ten cancellations on two nodes within a second: one line. */
    for (int i = 0; i < 10; i++)
        task_end(m, i % 2, 2 * S + i * MS, (uint64_t)1 << 32 | (uint32_t)i, TASK_CANCELLED, -1);
    v = model_view(m);
    assert_int_equal(v->nlog, 3);
    assert_string_equal(last_log(v), "   2.000 10 tasks cancelled on 2 nodes");

    /* Eight failures in a second: five lines, then one for the rest. */
    for (int i = 0; i < 8; i++)
        task_end(m, 4, 3 * S + i * MS, (uint64_t)1 << 32 | (uint32_t)(100 + i), TASK_FAILED, 2);
    v = model_view(m);
    assert_int_equal(v->nlog, 3 + 6);
    assert_string_equal(v->log[3].text, "   3.000 node 4: task 1:100 failed (exit 2)");
    assert_string_equal(v->log[7].text, "   3.004 node 4: task 1:104 failed (exit 2)");
    assert_string_equal(last_log(v), "   3.005 3 more tasks failed on node 4");
    /* The next second starts over. */
    task_end(m, 4, 4 * S, (uint64_t)1 << 32 | 200, TASK_FAILED, 2);
    assert_string_equal(last_log(model_view(m)), "   4.000 node 4: task 1:200 failed (exit 2)");

    /* A lost node, seen by its peers. */
    for (int32_t id = 0; id < 2; id++) {
        struct wire_note n = note(TRACE_NODE_DOWN, id, 5 * S + id);
        n.peer = 2;
        model_note(m, &n);
    }
    assert_string_equal(last_log(model_view(m)), "   5.000 2 nodes lost their connection to node 2");
    /* They saw it go; they are still up themselves. */
    assert_true(node_by_id(model_view(m), 0)->connected);
    /* Declared dead by its neighbours: one line for the burst, and node 2 is down. */
    struct wire_note up = note(TRACE_NODE_UP, 2, 5 * S + 5);
    model_note(m, &up);
    assert_true(node_by_id(model_view(m), 2)->connected);
    for (int32_t id = 0; id < 2; id++) {
        struct wire_note n = note(TRACE_NODE_DOWN, id, 5 * S + 10 + id);
        n.peer = 2;
        n.status = TRACE_DOWN_DECLARED;
        n.count = 1;
        model_note(m, &n);
    }
    assert_string_equal(last_log(model_view(m)), "   5.000 2 nodes declared node 2 dead");
    assert_non_null(node_by_id(model_view(m), 2));
    assert_false(node_by_id(model_view(m), 2)->connected);
    assert_true(node_by_id(model_view(m), 0)->connected);
    /* DOWN, not merely disconnected: a sample with its stream up does not revive it. */
    assert_true(node_by_id(model_view(m), 2)->dead);
    assert_false(node_by_id(model_view(m), 0)->dead);
    assert_string_equal(model_node_state(node_by_id(model_view(m), 2)), "dead");
    struct trace_sample up_again = {.slots = 2};
    model_sample(m, 2, 5 * S + 15, &up_again, true);
    assert_true(node_by_id(model_view(m), 2)->dead);
    /* Its tasks handed on by two primaries, to nodes 0 and 1: one line for the burst. */
    for (uint32_t k = 0; k < 37; k++) {
        struct wire_note n = note(TRACE_TASK_RESUBMIT, (int32_t)(k % 2), 5 * S + 20 + k);
        n.task = (uint64_t)1 << 32 | (300 + k);
        n.peer = (int32_t)(k % 2);
        n.status = 1;
        n.count = 2;
        model_note(m, &n);
    }
    v = model_view(m);
    assert_string_equal(last_log(v), "   5.000 node 2 declared dead; 37 tasks resubmitted");
    struct wire_note rc = note(TRACE_OBJECT_RECOMPUTE, 1, 5 * S + 100);
    rc.task = (uint64_t)1 << 32 | 7;
    rc.peer = 2;
    rc.status = 1;
    model_note(m, &rc);
    assert_string_equal(last_log(model_view(m)),
                        "   5.000 node 1: output of task 1:7 lost with node 2; recomputed (attempt 1)");
    /* A failed run that runs again (retries): one line, then one line for a burst. */
    struct wire_note rt = note(TRACE_TASK_RETRY, 0, 5 * S + 110);
    rt.task = (uint64_t)1 << 32 | 9;
    rt.status = TASK_FAILED;
    rt.count = 3;
    model_note(m, &rt);
    assert_string_equal(last_log(model_view(m)),
                        "   5.000 node 0: task 1:9 failed (exit 3); runs again");
    for (uint32_t k = 0; k < 5; k++) {
        rt.node = (int32_t)(k % 2);
        rt.time_ns = 5 * S + 120 + k;
        model_note(m, &rt);
    }
    assert_string_equal(last_log(model_view(m)), "   5.000 6 failed runs run again on 2 nodes");
    model_tick(m, 5 * S + 200);
    v = model_view(m);
    assert_int_equal(v->resubmitted, 37);
    assert_int_equal(v->recomputed, 1);
    assert_int_equal(v->dead, 1);
    assert_int_equal(node_by_id(v, 2)->resubmitted_from, 37);
    assert_int_equal(node_by_id(v, 0)->resubmitted_to, 19);
    assert_int_equal(node_by_id(v, 1)->resubmitted_to, 18);
    /* Garbage resubmissions (a dead node beyond any id) are ignored, not counted. */
    struct wire_note bad = note(TRACE_TASK_RESUBMIT, 0, 5 * S + 300);
    bad.peer = 1;
    bad.count = (int64_t)MODEL_MAX_NODE_ID + 1;
    model_note(m, &bad);
    model_tick(m, 5 * S + 400);
    assert_int_equal(model_view(m)->resubmitted, 37);

    /* The ring keeps the newest MODEL_LOG_LINES. */
    for (uint32_t j = 0; j < MODEL_LOG_LINES + 500; j++)
        job(m, j, 6 * S + j, 1, "w");
    v = model_view(m);
    assert_int_equal(v->nlog, MODEL_LOG_LINES);
    char want[160];
    snprintf(want, sizeof want, "%8.3f job %u submitted: 1 tasks (w)",
             (double)(6 * S + MODEL_LOG_LINES + 499) / 1e9, MODEL_LOG_LINES + 499);
    assert_string_equal(last_log(v), want);
    snprintf(want, sizeof want, "%8.3f job 500 submitted: 1 tasks (w)", (double)(6 * S + 500) / 1e9);
    assert_string_equal(v->log[0].text, want);
    model_destroy(m);
}

/* ---- node table -------------------------------------------------------------------- */

static void rows_are(struct model *m, enum model_sort key, bool desc, const char *filter,
                     const int32_t *want, uint32_t nwant)
{
    uint32_t out[16];
    uint32_t n = model_rows(m, key, desc, filter, out, 16);
    const struct model_view *v = model_view(m);
    char got[128] = "", exp[128] = "";
    for (uint32_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), " %d", v->nodes[out[i]].id);
    for (uint32_t i = 0; i < nwant; i++)
        snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %d", want[i]);
    if (strcmp(got, exp) != 0)
        fail_msg("sort %s %s filter '%s': got%s, want%s", model_sort_name(key),
                 desc ? "desc" : "asc", filter ? filter : "", got, exp);
}

static void test_rows(void **state)
{
    (void)state;
    struct model *m = model_create();
    /* id: busy/slots, ended (failed), waitq */
    struct trace_sample s;
    s = sample(1, 4, 30, 0, 0);   /* util .25, done 30 */
    s.waitq = 5;
    feed(m, 0, S, s);
    s = sample(4, 4, 10, 0, 0);   /* util 1, done 10 */
    s.waitq = 0;
    feed(m, 1, S, s);
    s = sample(0, 4, 50, 30, 0);  /* util 0 (idle), done 20 */
    s.waitq = 9;
    feed(m, 10, S, s);
    s = sample(2, 4, 20, 0, 0);   /* util .5, done 20 */
    s.waitq = 5;
    feed(m, 3, S, s);
    struct wire_note n = note(TRACE_NODE_DOWN, 3, S + 1);
    model_note(m, &n);            /* node 3 is down */
    model_tick(m, S);

    rows_are(m, MODEL_SORT_ID, false, NULL, (int32_t[]){0, 1, 3, 10}, 4);
    rows_are(m, MODEL_SORT_ID, true, "", (int32_t[]){10, 3, 1, 0}, 4);
    rows_are(m, MODEL_SORT_UTIL, true, NULL, (int32_t[]){1, 3, 0, 10}, 4);
    rows_are(m, MODEL_SORT_UTIL, false, NULL, (int32_t[]){10, 0, 3, 1}, 4);
    /* Ties (3 and 10 both done 20; 0 and 3 both waitq 5) go by id. */
    rows_are(m, MODEL_SORT_DONE, true, NULL, (int32_t[]){0, 3, 10, 1}, 4);
    rows_are(m, MODEL_SORT_DONE, false, NULL, (int32_t[]){1, 3, 10, 0}, 4);
    rows_are(m, MODEL_SORT_WAITQ, true, NULL, (int32_t[]){10, 0, 3, 1}, 4);
    rows_are(m, MODEL_SORT_WAITQ, false, NULL, (int32_t[]){1, 0, 3, 10}, 4);
    /* Filters: a node label, a state word. */
    rows_are(m, MODEL_SORT_ID, false, "node 1", (int32_t[]){1, 10}, 2);
    rows_are(m, MODEL_SORT_ID, false, "node 10", (int32_t[]){10}, 1);
    rows_are(m, MODEL_SORT_UTIL, true, "busy", (int32_t[]){1, 0}, 2);
    rows_are(m, MODEL_SORT_ID, false, "idle", (int32_t[]){10}, 1);
    rows_are(m, MODEL_SORT_ID, false, "down", (int32_t[]){3}, 1);
    rows_are(m, MODEL_SORT_ID, false, "nothing", NULL, 0);
    /* Understood: pieces of "node N" or of a state word, whether or not a node matches
     * now; not: what no node could ever match ("nothing" included). */
    const char *const understood[] = {"", "node 3", "NODE 12", "node", "od", "de 1", "e1",
                                      "7", " 7", "idle", "Bus", "dea", "own"};
    for (size_t i = 0; i < sizeof understood / sizeof understood[0]; i++)
        if (!model_filter_understood(understood[i]))
            fail_msg("filter '%s' not understood", understood[i]);
    const char *const not_understood[] = {"speed>0.5", "nothing", "node x", "nodes 3",
                                          "no 3", "3 node", "node  3", "util>50"};
    for (size_t i = 0; i < sizeof not_understood / sizeof not_understood[0]; i++)
        if (model_filter_understood(not_understood[i]))
            fail_msg("filter '%s' understood", not_understood[i]);
    assert_true(model_filter_understood(NULL));
    /* The output is bounded by cap. */
    uint32_t out[2];
    assert_int_equal(model_rows(m, MODEL_SORT_UTIL, true, NULL, out, 2), 2);
    assert_int_equal(model_view(m)->nodes[out[0]].id, 1);
    assert_int_equal(model_rows(m, MODEL_SORT_UTIL, true, NULL, out, 0), 0);
    for (int k = 0; k < MODEL_SORT_COUNT; k++) {
        assert_non_null(model_sort_name((enum model_sort)k));
        assert_int_equal(model_rows(m, (enum model_sort)k, true, NULL, out, 2), 2);
    }
    assert_string_equal(model_sort_name(MODEL_SORT_WAITQ), "waitq");
    assert_string_equal(model_node_state(&model_view(m)->nodes[0]), "busy");
    model_destroy(m);
}

/* ---- garbage ----------------------------------------------------------------------- */

static void test_garbage(void **state)
{
    (void)state;
    struct model *m = model_create();
    struct trace_sample s = sample(-5, -3, -1, -9, -100);
    feed(m, -1, S, s);
    feed(m, 65536, S, s);
    feed(m, INT32_MAX, S, s);
    feed(m, 0, INT64_MAX, s);
    feed(m, 0, INT64_MIN, s);
    model_sample(m, 0, S, NULL, true);
    assert_int_equal(model_view(m)->nnodes, 0);
    feed(m, 65535, S, s);         /* the largest id, with negative everything */
    model_tick(m, 2 * S);
    const struct model_view *v = model_view(m);
    assert_int_equal(v->nnodes, 1);
    assert_int_equal(v->slots, 0);
    assert_int_equal(v->done, 0);
    assert_int_equal(v->running, 0);

    struct wire_note n = note(TRACE_STEAL_GRANT, 1 << 20, S);
    n.peer = 1;
    n.count = 3;
    model_note(m, &n);
    n = note(TRACE_STEAL_GRANT, 1, S);
    n.peer = -7;
    n.count = 3;
    model_note(m, &n);
    n.peer = 2;
    n.count = -3;
    model_note(m, &n);
    n = note(200, 1, S);          /* an unknown kind */
    model_note(m, &n);
    n = note(TRACE_TASK_END, -2, S);
    model_note(m, &n);
    model_note(m, NULL);
    /* A text without its terminator is cut, and control bytes do not reach the screen. */
    n = note(TRACE_POLICY_CHANGE, 1, S);
    memset(n.text, 'A', sizeof n.text);
    n.text[3] = '\033';
    model_note(m, &n);
    model_tick(m, 3 * S);
    v = model_view(m);
    assert_int_equal(v->nflows, 0);
    assert_int_equal(v->nlog, 1);
    assert_null(strchr(v->log[0].text, '\033'));
    assert_true(strlen(v->policy) < sizeof v->policy);
    assert_int_equal(model_set_header(m, "{\"nodes\":[{\"id\":1,\"slots\":4294967296}]}"),
                     -EINVAL);

    model_tick(NULL, S);
    assert_null(model_view(NULL));
    assert_int_equal(model_rows(NULL, MODEL_SORT_ID, false, NULL, (uint32_t[1]){0}, 1), 0);
    assert_string_equal(model_sort_name(MODEL_SORT_COUNT), "?");
    model_destroy(m);
}

/* ---- jobs -------------------------------------------------------------------------- */

static const struct model_log_line *log_line(const struct model_view *v, const char *start)
{
    for (uint32_t i = 0; i < v->nlog; i++)
        if (strncmp(v->log[i].text, start, strlen(start)) == 0)
            return &v->log[i];
    return NULL;
}

/*
 * Two jobs' tallies on the header's 14 slots: job 7 finished (10 done between 0.1 s and
 * 2.1 s, 14 busy task-seconds: 50 %), job 9 running (1 done, 1 failed of 4 since 0.5 s).
 * The list's figures at 3 s; job 9 selected: the header's figures and each node's share
 * are the job's, log lines say whose they are; all again: the cluster's.
 */
static void test_jobs(void **state)
{
    (void)state;
    struct model *m = model_create();
    assert_int_equal(model_set_header(m, HEADER_JSON), 0);
    job(m, 7, 100 * MS, 10, "/w/a.jsonl");
    job(m, 9, 500 * MS, 4, "/w/b.jsonl");
    task_end(m, 2, 900 * MS, (uint64_t)9 << 32 | 1, TASK_FAILED, 3);
    model_note(m, &(struct wire_note){.kind = TRACE_NODE_UP, .node = 1, .time_ns = 50 * MS,
                                      .task = UINT64_MAX, .peer = -1, .count = 8});
    feed(m, 0, 3 * S, sample(0, 4, 6, 0, 0));
    feed(m, 1, 3 * S, sample(0, 8, 4, 0, 0));
    feed(m, 2, 3 * S, sample(2, 2, 2, 1, 0));
    struct wire_job_node rows7[2] = {{.node = 0, .done = 6, .busy_ns = 8 * S},
                                     {.node = 1, .done = 4, .busy_ns = 6 * S}};
    struct wire_job_node rows9[1] = {{.node = 2, .running = 2, .done = 1, .busy_ns = 3 * S}};
    struct wire_job_tally tallies[2] = {
        {.job = 7, .tasks = 10, .done = 10, .submit_ns = 100 * MS, .end_ns = 2100 * MS,
         .busy_ns = 14 * S, .name = "/w/a.jsonl", .nnodes = 2, .nodes = rows7},
        {.job = 9, .tasks = 4, .done = 1, .failed = 1, .running = 2, .submit_ns = 500 * MS,
         .end_ns = 900 * MS, .busy_ns = 3 * S, .name = "/w/b.jsonl", .nnodes = 1,
         .nodes = rows9},
    };
    model_jobs(m, tallies, 2, false);
    model_jobs(m, tallies, 2, false); /* the next STATE says the same: one end line */
    model_tick(m, 3 * S);
    const struct model_view *v = model_view(m);
    assert_int_equal(v->njobs, 2);
    const struct model_job *a = &v->jobs[0], *b = &v->jobs[1];
    assert_int_equal(a->id, 7);
    assert_string_equal(a->state, "done");
    assert_true(a->finished);
    assert_true(fabs(a->progress - 1.0) < 1e-9);
    assert_true(fabs(a->elapsed_s - 2.0) < 1e-9);
    assert_true(fabs(a->efficiency - 14.0 / (14 * 2.0)) < 1e-9);
    assert_string_equal(b->state, "running");
    assert_false(b->finished);
    assert_true(fabs(b->progress - 0.5) < 1e-9);
    assert_true(fabs(b->elapsed_s - 2.5) < 1e-9);
    assert_true(fabs(b->efficiency - 3.0 / (14 * 2.5)) < 1e-9);
    const struct model_log_line *end = log_line(v, "   2.100 job 7 (a.jsonl) finished: 10 done");
    assert_non_null(end);
    assert_int_equal(end->job, 7);
    uint32_t ends = 0;
    for (uint32_t i = 0; i < v->nlog; i++)
        ends += strstr(v->log[i].text, "finished") != NULL;
    assert_int_equal(ends, 1);
    assert_int_equal(log_line(v, "   0.900 node 2: task 9:1 failed")->job, 9);
    assert_int_equal(log_line(v, "   0.500 job 9 submitted")->job, 9);
    assert_int_equal(log_line(v, "   0.050 node 1 up")->job, -1);
    /* All: the cluster's figures. */
    assert_int_equal(v->job, -1);
    assert_null(v->selected);
    assert_int_equal(v->total, 14);
    assert_int_equal(v->done, 11);
    assert_int_equal(node_by_id(v, 2)->job_running, 0);

    assert_int_equal(model_next_job(m, -1), 7);
    assert_int_equal(model_next_job(m, 7), 9);
    assert_int_equal(model_next_job(m, 9), -1);
    model_select_job(m, 9);
    v = model_view(m);
    assert_int_equal(v->job, 9);
    assert_ptr_equal(v->selected, &v->jobs[1]);
    assert_int_equal(v->total, 4);
    assert_int_equal(v->done, 1);
    assert_int_equal(v->failed, 1);
    assert_int_equal(v->cancelled, 0);
    assert_int_equal(v->running, 2);
    assert_string_equal(v->workload, "/w/b.jsonl");
    assert_true(fabs(v->elapsed_s - 2.5) < 1e-9);
    assert_true(fabs(v->tput_avg - 2 / 2.5) < 1e-9);
    assert_true(fabs(v->eta_s - 2 / (2 / 2.5)) < 1e-9);
    assert_true(fabs(v->efficiency - b->efficiency) < 1e-9);
    assert_int_equal(node_by_id(v, 2)->job_running, 2);
    assert_int_equal(node_by_id(v, 2)->job_done, 1);
    assert_true(fabs(node_by_id(v, 2)->job_util - 1.0) < 1e-9);
    assert_true(fabs(node_by_id(v, 2)->job_busy_s - 3.0) < 1e-9);
    assert_int_equal(node_by_id(v, 0)->job_done, 0);
    /* The table sorts by the job's share. */
    uint32_t order[3];
    assert_int_equal(model_rows(m, MODEL_SORT_DONE, true, NULL, order, 3), 3);
    assert_int_equal(v->nodes[order[0]].id, 2);
    /* Still the job's after a tick; a job no longer listed shows zeros, not the cluster's. */
    model_tick(m, 3 * S);
    assert_int_equal(model_view(m)->total, 4);
    model_select_job(m, 12345);
    v = model_view(m);
    assert_null(v->selected);
    assert_int_equal(v->total + v->done + v->running, 0);
    model_select_job(m, -1);
    v = model_view(m);
    assert_int_equal(v->total, 14);
    assert_string_equal(v->workload, "montage");
    /* Garbage is ignored; a reset forgets the jobs but keeps the choice. */
    model_jobs(m, NULL, 3, false);
    assert_int_equal(model_view(m)->njobs, 2);
    model_select_job(m, 7);
    model_reset(m);
    assert_int_equal(model_view(m)->njobs, 0);
    model_jobs(m, tallies, 2, false);
    model_tick(m, 3 * S);
    assert_int_equal(model_view(m)->job, 7);
    assert_int_equal(model_view(m)->total, 10);
    model_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_nodes),
        cmocka_unit_test(test_header_bad),
        cmocka_unit_test(test_progress_rates),
        cmocka_unit_test(test_done_failed_cancelled),
        cmocka_unit_test(test_late_attach),
        cmocka_unit_test(test_history_steps),
        cmocka_unit_test(test_tick_independent),
        cmocka_unit_test(test_steal_matrix),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_log_bursts),
        cmocka_unit_test(test_log_order_and_end),
        cmocka_unit_test(test_steal_columns_from_samples),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
