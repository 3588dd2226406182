/*
 * Trace replay for the console (tui/replay): a small run written as the collector writes
 * it (blocks of one node, interleaved, so file order is not time order) with the block
 * encoder, then replayed.  Seeking to a time gives the view that feeding the same
 * samples and notes by hand gives; the end of the file accounts for every task; seeking
 * back and forth lands where a direct seek does; single steps visit every item's time; a
 * cut file replays its whole blocks with a warning.
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
#include <unistd.h>

#include "core/model/task.h"
#include "trace/format/block.h"
#include "trace/format/event.h"
#include "trace/format/wire.h"
#include "tui/model.h"
#include "tui/replay.h"

#include "trace_fixture.h"

#define MS 1000000LL
#define NODES 3
#define SLOTS 4
#define TASKS 600
#define JOB 2u

#define HEADER_JSON                                                                            \
    "{\"format\":1,\"run_id\":\"replay-1\",\"start_ns\":1700000000000000000,"                  \
    "\"created\":\"2024-01-01T00:00:00Z\",\"nodes\":["                                         \
    "{\"id\":0,\"host\":\"h0\",\"port\":1,\"slots\":4,\"speed\":1.0},"                         \
    "{\"id\":1,\"host\":\"h1\",\"port\":2,\"slots\":4,\"speed\":1.0},"                         \
    "{\"id\":2,\"host\":\"h2\",\"port\":3,\"slots\":4,\"speed\":2.0}],"                        \
    "\"config\":{\"node_args\":[]},\"workload\":null}"

static char tmpdir[64];
static const char *job_names[2] = {"replay-workload", "0123456789abcdef0123456789abcdef"};

/* The run: every event, and how its tasks ended. */
struct run {
    struct trace_event *ev; /* owned; n */
    size_t n, cap;
    size_t done, failed, cancelled;
    int64_t first_ns, last_ns;
};

static struct trace_event *push(struct run *r, enum trace_kind kind, int32_t node, int64_t t)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->ev = realloc(r->ev, r->cap * sizeof *r->ev);
        assert_non_null(r->ev);
    }
    struct trace_event *ev = &r->ev[r->n++];
    trace_event_init(ev, kind, node);
    ev->time_ns = t;
    return ev;
}

static int by_node_time(const void *a, const void *b)
{
    const struct trace_event *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

static int by_time(const void *a, const void *b)
{
    const struct trace_event *x = a, *y = b;
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/*
 * Every event has a time of its own (the low digits say which node and which kind), so
 * time order is one order and a hand feed can follow it.  Task i ends on node i % 3 at
 * 100 ms + 7 ms i: FAILED when i % 11 == 5, CANCELLED when i % 13 == 7, else DONE; every
 * 17th is preceded by a steal grant.  Samples every 100 ms count what ended so far.
 */
static void make_run(struct run *r)
{
    memset(r, 0, sizeof *r);
    struct trace_event *ev = push(r, TRACE_JOB_SUBMIT, -1, 10 * MS);
    ev->task = (uint64_t)JOB << 32 | UINT32_MAX;
    ev->count = TASKS;
    snprintf(ev->text, sizeof ev->text, "%.16s", job_names[1]);
    ev->names = job_names;
    ev->nnames = 2;
    for (int32_t n = 0; n < NODES; n++) {
        ev = push(r, TRACE_NODE_UP, n, 50 * MS + n);
        ev->count = SLOTS;
        ev = push(r, TRACE_POLICY_CHANGE, n, 60 * MS + n);
        strcpy(ev->text, n == 2 ? "mdl" : "mlb");
    }
    int64_t end_of[TASKS];
    int32_t status_of[TASKS];
    for (uint32_t i = 0; i < TASKS; i++) {
        int32_t node = (int32_t)(i % NODES);
        uint64_t key = (uint64_t)JOB << 32 | i;
        int64_t end = 100 * MS + (int64_t)i * 7 * MS + node;
        int32_t status = i % 11 == 5 ? TASK_FAILED : i % 13 == 7 ? TASK_CANCELLED : TASK_DONE;
        end_of[i] = end;
        status_of[i] = status;
        if (i % 17 == 0) {
            ev = push(r, TRACE_STEAL_GRANT, node, end - 1 * MS);
            ev->peer = (node + 1) % NODES;
            ev->count = 2;
        }
        if (status != TASK_CANCELLED) {
            ev = push(r, TRACE_TASK_START, node, end - 3 * MS);
            ev->task = key;
        }
        ev = push(r, TRACE_TASK_END, node, end);
        ev->task = key;
        ev->status = status;
        ev->count = status == TASK_FAILED ? 3 : status == TASK_CANCELLED ? -1 : 0;
        r->done += status == TASK_DONE;
        r->failed += status == TASK_FAILED;
        r->cancelled += status == TASK_CANCELLED;
    }
    int64_t last_end = end_of[TASKS - 1];
    int64_t t_last = 0;
    for (int64_t t = 100 * MS; t <= last_end + 200 * MS; t += 100 * MS) {
        for (int32_t n = 0; n < NODES; n++) {
            int64_t at = t + 3 + n;
            ev = push(r, TRACE_NODE_SAMPLE, n, at);
            struct trace_sample *s = &ev->sample;
            s->slots = SLOTS;
            for (uint32_t i = (uint32_t)n; i < TASKS; i += NODES) {
                if (end_of[i] > at)
                    continue;
                s->ended++;
                s->failed += status_of[i] == TASK_FAILED;
                s->busy_ns += status_of[i] == TASK_CANCELLED ? 0 : 3 * MS;
            }
            s->started = s->ended;
            s->busy = (int32_t)((t / (100 * MS) + n) % (SLOTS + 1));
            s->waitq = (int32_t)(TASKS / NODES - s->ended);
            s->sreadyq = (int32_t)(t / (100 * MS)) % 3;
            s->fetches = s->ended / 2;
            s->cache_hits = s->ended / 3;
            t_last = at;
        }
    }
    for (int32_t n = 0; n < NODES; n++)
        push(r, TRACE_NODE_DOWN, n, t_last + 10 + n);
    r->first_ns = 10 * MS;
    r->last_ns = t_last + 10 + NODES - 1;
}

/* Numbers each node's events and writes them as the collector does: chunks of 25 events
 * of one node per block, the nodes' chunks round-robin.  cut > 0 truncates the file. */
static void write_run(struct run *r, const char *path, size_t cut)
{
    qsort(r->ev, r->n, sizeof *r->ev, by_node_time);
    size_t starts[NODES + 1], ends[NODES + 1], nn = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (i == 0 || r->ev[i].node != r->ev[i - 1].node)
            starts[nn++] = i;
        r->ev[i].seq = i == starts[nn - 1] ? 0 : r->ev[i - 1].seq + 1;
        ends[nn - 1] = i + 1;
    }
    struct fixture_file w;
    fixture_file_init(&w, HEADER_JSON);
    for (bool more = true; more;) {
        more = false;
        for (size_t k = 0; k < nn; k++) {
            for (size_t taken = 0; starts[k] < ends[k] && taken < 25; taken++)
                fixture_add(&w, &r->ev[starts[k]++]);
            fixture_flush(&w);
            more |= starts[k] < ends[k];
        }
    }
    fixture_file_save(&w, path, cut);
    qsort(r->ev, r->n, sizeof *r->ev, by_time);
}

/* What the replay should feed, fed by hand: samples and notes up to t, in time order. */
static void feed_by_hand(const struct run *r, struct model *m, int64_t t)
{
    assert_int_equal(model_set_header(m, HEADER_JSON), 0);
    for (size_t i = 0; i < r->n && r->ev[i].time_ns <= t; i++) {
        const struct trace_event *ev = &r->ev[i];
        if (ev->kind == TRACE_NODE_SAMPLE) {
            model_sample(m, ev->node, ev->time_ns, &ev->sample, true);
        } else if (wire_is_note(ev)) {
            struct wire_note n;
            wire_note_from_event(&n, ev);
            if (ev->kind == TRACE_JOB_SUBMIT)
                snprintf(n.text, sizeof n.text, "%s", job_names[0]);
            model_note(m, &n);
        }
    }
    model_tick(m, t);
}

static void hist_equal(const struct model_hist *a, const struct model_hist *b)
{
    assert_int_equal(a->len, b->len);
    for (uint32_t i = 0; i < a->len; i++)
        assert_true(model_hist_get(a, i) == model_hist_get(b, i));
}

static void views_equal(const struct model_view *a, const struct model_view *b)
{
    assert_string_equal(a->run_id, b->run_id);
    assert_string_equal(a->workload, b->workload);
    assert_string_equal(a->policy, b->policy);
    assert_true(a->now_ns == b->now_ns);
    assert_true(a->first_ns == b->first_ns);
    assert_int_equal(a->total, b->total);
    assert_int_equal(a->done, b->done);
    assert_int_equal(a->failed, b->failed);
    assert_int_equal(a->cancelled, b->cancelled);
    assert_int_equal(a->running, b->running);
    assert_true(a->tput_now == b->tput_now);
    assert_true(a->tput_avg == b->tput_avg);
    assert_true(a->efficiency == b->efficiency);
    assert_true(a->eta_s == b->eta_s);
    assert_int_equal(a->slots, b->slots);
    assert_int_equal(a->nnodes, b->nnodes);
    assert_int_equal(a->inputs, b->inputs); /* each item fed once */
    hist_equal(&a->util_hist, &b->util_hist);
    assert_int_equal(a->steals_total, b->steals_total);
    assert_int_equal(a->dropped, b->dropped);
    for (uint32_t i = 0; i < a->nnodes; i++) {
        const struct model_node *x = &a->nodes[i], *y = &b->nodes[i];
        assert_int_equal(x->id, y->id);
        assert_int_equal(x->connected, y->connected);
        assert_int_equal(x->seen, y->seen);
        assert_true(x->time_ns == y->time_ns);
        assert_memory_equal(&x->s, &y->s, sizeof x->s);
        assert_true(x->util_avg == y->util_avg);
        assert_true(x->cache_hit_rate == y->cache_hit_rate);
        assert_int_equal(x->done, y->done);
        assert_int_equal(x->steals_in, y->steals_in);
        assert_int_equal(x->steals_out, y->steals_out);
        hist_equal(&x->util_hist, &y->util_hist);
        hist_equal(&x->waitq_hist, &y->waitq_hist);
        hist_equal(&x->sreadyq_hist, &y->sreadyq_hist);
    }
    assert_true((a->recent == NULL) == (b->recent == NULL));
    if (a->recent)
        assert_memory_equal(a->recent, b->recent, a->nnodes * a->nnodes * sizeof *a->recent);
    assert_int_equal(a->nflows, b->nflows);
    assert_memory_equal(a->flows, b->flows, a->nflows * sizeof *a->flows);
    assert_int_equal(a->nlog, b->nlog);
    for (uint32_t i = 0; i < a->nlog; i++)
        assert_string_equal(a->log[i].text, b->log[i].text);
}

/* ---- fixtures ---------------------------------------------------------------------- */

struct ctx {
    struct run run;
    char path[128];
    struct replay *replay;
};

static int setup(void **state)
{
    strcpy(tmpdir, "/tmp/test_tui_replay.XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    struct ctx *c = calloc(1, sizeof *c);
    make_run(&c->run);
    snprintf(c->path, sizeof c->path, "%s/run.trace", tmpdir);
    write_run(&c->run, c->path, 0);
    char *warning = NULL, *cause = NULL;
    if (replay_open(&c->replay, c->path, &warning, &cause) != 0 || warning)
        return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct ctx *c = *state;
    replay_destroy(c->replay);
    free(c->run.ev);
    free(c);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_open_span(void **state)
{
    struct ctx *c = *state;
    assert_true(replay_first_ns(c->replay) == c->run.first_ns);
    assert_true(replay_last_ns(c->replay) == c->run.last_ns);
    assert_non_null(replay_header(c->replay));
    assert_string_equal(replay_header(c->replay), HEADER_JSON);

    struct replay *r = NULL;
    char *cause = NULL;
    char missing[160];
    snprintf(missing, sizeof missing, "%s/missing.trace", tmpdir);
    assert_true(replay_open(&r, missing, NULL, &cause) < 0);
    assert_null(r);
    assert_non_null(cause);
    assert_non_null(strstr(cause, "missing.trace"));
    free(cause);
    replay_destroy(NULL);
}

static void test_seek_middle(void **state)
{
    struct ctx *c = *state;
    int64_t mid = c->run.first_ns + (c->run.last_ns - c->run.first_ns) / 2;
    struct model *m = model_create(), *hand = model_create();
    replay_seek(c->replay, m, mid);
    feed_by_hand(&c->run, hand, mid);
    const struct model_view *v = model_view(m);
    views_equal(v, model_view(hand));
    /* And the numbers are the run's, not merely equal to each other. */
    assert_int_equal(v->nnodes, NODES);
    assert_int_equal(v->total, TASKS);
    assert_string_equal(v->workload, job_names[0]);
    assert_string_equal(v->run_id, "replay-1");
    assert_string_equal(v->policy, "mixed (mlb, mdl)");
    assert_true(v->done > 0 && v->done < c->run.done);
    assert_true(v->util_hist.len > 4);
    assert_true(v->tput_now > 0);
    assert_true(v->nflows > 0);
    assert_true(v->nodes[2].speed == 2.0);
    assert_true(v->nodes[0].connected);
    model_destroy(hand);
    model_destroy(m);
}

static void test_seek_end(void **state)
{
    struct ctx *c = *state;
    struct model *m = model_create();
    replay_seek(c->replay, m, INT64_MAX); /* clamped to the end */
    const struct model_view *v = model_view(m);
    assert_true(v->now_ns == c->run.last_ns);
    assert_int_equal(v->done, c->run.done);
    assert_int_equal(v->failed, c->run.failed);
    assert_int_equal(v->cancelled, c->run.cancelled);
    assert_int_equal(v->done + v->failed + v->cancelled, TASKS);
    assert_true(v->eta_s == 0.0);
    for (uint32_t i = 0; i < v->nnodes; i++)
        assert_false(v->nodes[i].connected);
    /* Seeking before the start is clamped to it: nothing but the job is known. */
    replay_seek(c->replay, m, INT64_MIN);
    v = model_view(m);
    assert_true(v->now_ns == c->run.first_ns);
    assert_int_equal(v->total, TASKS);
    assert_int_equal(v->done, 0);
    assert_int_equal(v->nlog, 1);
    model_destroy(m);
}

static void test_seek_back_and_forth(void **state)
{
    struct ctx *c = *state;
    int64_t span = c->run.last_ns - c->run.first_ns;
    int64_t t1 = c->run.first_ns + span / 3, t2 = c->run.first_ns + 2 * span / 3;
    struct model *m = model_create(), *direct = model_create();
    replay_seek(c->replay, m, t2);
    replay_seek(c->replay, m, t1);
    /* Forward again in uneven steps. */
    for (int64_t t = t1; t < t2; t += 37 * MS + 11)
        replay_seek(c->replay, m, t);
    replay_seek(c->replay, m, t2);
    struct replay *other;
    assert_int_equal(replay_open(&other, c->path, NULL, NULL), 0);
    replay_seek(other, direct, t2);
    views_equal(model_view(m), model_view(direct));

    /* The same replay driving a second model starts that model over. */
    struct model *second = model_create();
    replay_seek(c->replay, second, t1);
    struct model *hand = model_create();
    feed_by_hand(&c->run, hand, t1);
    views_equal(model_view(second), model_view(hand));
    /* Back to the first model: the replay fed another since, so it starts over. */
    replay_seek(c->replay, m, t2);
    views_equal(model_view(m), model_view(direct));
    replay_destroy(other);
    model_destroy(hand);
    model_destroy(second);
    model_destroy(direct);
    model_destroy(m);
}

/*
 * The jobs' figures are the collector's fold of the same events (trace/format/jobtally)
 * up to the time shown, whichever way the replay got there: here the job's tally
 * computed by hand from the run, at the middle and at the end.
 */
static void jobs_equal(const struct model_job *j, const struct run *r, int64_t t)
{
    uint64_t done = 0, failed = 0, cancelled = 0, running = 0;
    int64_t busy = 0, end = -1;
    for (size_t i = 0; i < r->n; i++) {
        const struct trace_event *ev = &r->ev[i];
        if (ev->time_ns > t)
            continue;
        if (ev->kind == TRACE_TASK_START)
            running++;
        if (ev->kind != TRACE_TASK_END)
            continue;
        done += ev->status == TASK_DONE;
        failed += ev->status == TASK_FAILED;
        cancelled += ev->status == TASK_CANCELLED;
        if (ev->status != TASK_CANCELLED) {
            running--;
            busy += 3 * MS;
        }
        end = ev->time_ns > end ? ev->time_ns : end;
    }
    assert_int_equal(j->id, JOB);
    assert_string_equal(j->name, job_names[0]);
    assert_int_equal(j->total, TASKS);
    assert_int_equal(j->done, done);
    assert_int_equal(j->failed, failed);
    assert_int_equal(j->cancelled, cancelled);
    assert_int_equal(j->running, running);
    assert_true(j->submit_ns == 10 * MS);
    assert_true(j->end_ns == end);
    assert_true(fabs(j->busy_s - (double)busy / 1e9) < 1e-9);
}

static void test_jobs(void **state)
{
    struct ctx *c = *state;
    int64_t mid = c->run.first_ns + (c->run.last_ns - c->run.first_ns) / 2;
    struct model *m = model_create(), *stepped = model_create();
    replay_seek(c->replay, m, mid);
    const struct model_view *v = model_view(m);
    assert_int_equal(v->njobs, 1);
    jobs_equal(&v->jobs[0], &c->run, mid);
    assert_string_equal(v->jobs[0].state, "running");
    /* Another model brought there in steps, after a seek past it: the same figures. */
    struct replay *other;
    assert_int_equal(replay_open(&other, c->path, NULL, NULL), 0);
    replay_seek(other, stepped, c->run.last_ns);
    for (int64_t t = c->run.first_ns; t < mid; t += 53 * MS + 7)
        replay_seek(other, stepped, t);
    replay_seek(other, stepped, mid);
    jobs_equal(&model_view(stepped)->jobs[0], &c->run, mid);

    replay_seek(c->replay, m, c->run.last_ns);
    v = model_view(m);
    jobs_equal(&v->jobs[0], &c->run, c->run.last_ns);
    assert_true(v->jobs[0].finished);
    assert_string_equal(v->jobs[0].state, "failed");
    assert_int_equal(v->jobs[0].done, c->run.done);
    /* Selected, the header's figures are the job's: here the whole run's. */
    model_select_job(m, JOB);
    v = model_view(m);
    assert_int_equal(v->total, TASKS);
    assert_int_equal(v->done + v->failed + v->cancelled, TASKS);
    assert_true(v->eta_s == 0.0);
    replay_destroy(other);
    model_destroy(stepped);
    model_destroy(m);
}

static void test_next_ns(void **state)
{
    struct ctx *c = *state;
    /* The times of the items the replay feeds, in order. */
    size_t nitems = 0;
    int64_t *times = malloc(c->run.n * sizeof *times);
    for (size_t i = 0; i < c->run.n; i++)
        if (c->run.ev[i].kind == TRACE_NODE_SAMPLE || wire_is_note(&c->run.ev[i]))
            times[nitems++] = c->run.ev[i].time_ns;
    assert_true(nitems > 100);
    size_t k = 0;
    int64_t t = c->run.first_ns - 1;
    while (k < nitems) {
        t = replay_next_ns(c->replay, t);
        assert_true(t == times[k]);
        k++;
    }
    assert_true(replay_next_ns(c->replay, t) == c->run.last_ns);
    /* Stepping feeds one item at a time. */
    struct model *m = model_create();
    replay_seek(c->replay, m, times[0]);
    uint64_t inputs = model_view(m)->inputs;
    replay_seek(c->replay, m, replay_next_ns(c->replay, times[0]));
    assert_int_equal(model_view(m)->inputs, inputs + 1);
    model_destroy(m);
    free(times);
}

static void test_cut_file(void **state)
{
    struct ctx *c = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/cut.trace", tmpdir);
    FILE *f = fopen(c->path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    fclose(f);
    struct run run;
    make_run(&run);
    write_run(&run, path, (size_t)size * 2 / 3);
    struct replay *r;
    char *warning = NULL, *cause = NULL;
    assert_int_equal(replay_open(&r, path, &warning, &cause), 0);
    assert_null(cause);
    assert_non_null(warning);
    assert_non_null(strstr(warning, "cut"));
    struct model *m = model_create();
    replay_seek(r, m, INT64_MAX);
    assert_true(replay_last_ns(r) <= c->run.last_ns);
    assert_true(model_view(m)->done < c->run.done);
    free(warning);
    model_destroy(m);
    replay_destroy(r);
    free(run.ev);
}

/* A recorded failure (the trace corpus's resubmit.avro: node 2 declared dead at 11.3 µs
 * by nodes 0 and 1, its three tasks resubmitted by node 0) replays as it happened: not
 * dead before, DOWN with its resubmissions after, and back when seeking back. */
static void test_failure(void **state)
{
    (void)state;
    struct replay *r;
    char *warning = NULL, *cause = NULL;
    assert_int_equal(replay_open(&r, "tests/traces/resubmit.avro", &warning, &cause), 0);
    assert_null(warning);
    struct model *m = model_create();
    replay_seek(r, m, INT64_MAX);
    const struct model_view *v = model_view(m);
    assert_int_equal(v->dead, 1);
    assert_int_equal(v->resubmitted, 3);
    const struct model_node *dead = NULL;
    for (uint32_t i = 0; i < v->nnodes; i++)
        if (v->nodes[i].id == 2)
            dead = &v->nodes[i];
    assert_non_null(dead);
    assert_true(dead->dead);
    assert_int_equal(dead->resubmitted_from, 3);
    bool line = false;
    for (uint32_t i = 0; i < v->nlog; i++)
        line |= strstr(v->log[i].text, "node 2 declared dead; 3 tasks resubmitted") != NULL;
    assert_true(line);
    replay_seek(r, m, 11000); /* before the failure */
    v = model_view(m);
    assert_int_equal(v->dead, 0);
    assert_int_equal(v->resubmitted, 0);
    model_destroy(m);
    replay_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_span),
        cmocka_unit_test(test_seek_middle),
        cmocka_unit_test(test_seek_end),
        cmocka_unit_test(test_seek_back_and_forth),
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_next_ns),
        cmocka_unit_test(test_cut_file),
        cmocka_unit_test(test_failure),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
