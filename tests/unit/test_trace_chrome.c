/*
 * Chrome trace-event export (trace/offline/chrome behind `jackdaw trace export
 * --chrome`): the document parses (jansson, strict UTF-8), holds one task slice per task
 * on slot lanes that never overlap and number exactly the node's peak concurrency, named
 * by workload id; one flow pair per steal and per transfer, from victim to thief and
 * source to fetcher; four counters per sample; a task left running gets an "unfinished"
 * slice.  Expected counts come from the generated run (trace_fixture.h), not from
 * constants.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <fcntl.h>
#include <inttypes.h>
#include <math.h>

#include <jansson.h>

#include "tools/cmd/cmd.h"
#include "trace/offline/chrome.h"
#include "trace_fixture.h"

#define NODES 4
#define TASKS 200
#define PID(node) ((node) + 1000)

static char trace_path[128], json_path[128];

static int setup_dir(void **state)
{
    (void)state;
    if (tmpdir_make("test_trace_chrome") < 0)
        return -1;
    snprintf(trace_path, sizeof trace_path, "%s/run.avro", tmpdir);
    snprintf(json_path, sizeof json_path, "%s/run.json", tmpdir);
    return 0;
}

/* Exports trace_path to json_path as the command does and parses the result. */
static json_t *export(struct trace_chrome_stats *st)
{
    struct trace_reader *r;
    char *cause = NULL;
    assert_int_equal(trace_reader_open(&r, trace_path, &cause), 0);
    FILE *out = fopen(json_path, "w");
    assert_non_null(out);
    struct trace_chrome *c;
    trace_chrome_create(&c, out, trace_reader_info(r)->header_json);
    struct trace_event ev;
    while (trace_reader_next(r, &ev, &cause) == 0) {
        const char *const *names;
        size_t n;
        assert_int_equal(trace_reader_names(r, &names, &n), 0);
        ev.names = names;
        ev.nnames = (uint32_t)n;
        assert_int_equal(trace_chrome_add(c, &ev), 0);
    }
    assert_int_equal(trace_chrome_finish(c, st), 0);
    trace_chrome_destroy(c);
    assert_int_equal(fclose(out), 0);
    trace_reader_destroy(r);
    json_error_t err;
    json_t *doc = json_load_file(json_path, 0, &err);
    if (!doc)
        fail_msg("%s:%d: %s", json_path, err.line, err.text);
    return doc;
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static bool is(json_t *e, const char *ph, const char *cat)
{
    return !strcmp(str(e, "ph"), ph) && (!cat || !strcmp(str(e, "cat"), cat));
}

/* µs as written, back to ns. */
static int64_t ns(json_t *o, const char *key)
{
    return (int64_t)llround(json_number_value(json_object_get(o, key)) * 1000.0);
}

/* Peak number of tasks running at once on `node` in the run. */
static size_t peak(const struct fixture *f, int32_t node)
{
    size_t best = 0;
    for (size_t i = 0; i < f->n; i++) {
        const struct trace_event *s = &f->e[i].ev;
        if (s->kind != TRACE_TASK_START || s->node != node)
            continue;
        /* Running at s's start: started by then and not ended before it. */
        size_t running = 0;
        for (size_t j = 0; j < f->n; j++) {
            const struct trace_event *t = &f->e[j].ev;
            if (t->kind != TRACE_TASK_START || t->node != node || t->time_ns > s->time_ns)
                continue;
            const struct trace_event *end =
                &f->e[fixture_find(f, TRACE_TASK_END, t->task)].ev;
            running += end->time_ns > s->time_ns;
        }
        best = running > best ? running : best;
    }
    return best;
}

static void test_run_exports(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_number(&f);
    fixture_write(&f, trace_path, 40, NULL, NULL, 0);
    struct trace_chrome_stats st;
    json_t *doc = export(&st);
    json_t *events = json_object_get(doc, "traceEvents");
    assert_true(json_is_array(events));
    assert_string_equal(str(json_object_get(json_object_get(doc, "otherData"), "jackdaw_header"),
                            "run"), "fixture");

    size_t slices = 0, data_slices = 0, counters = 0, instants = 0, names = 0;
    /* Per node: the slot lanes used and the slices on each, to check overlaps. */
    struct { int64_t start, end; int tid; } spans[NODES][TASKS];
    size_t nspans[NODES] = { 0 };
    int lanes[NODES][64] = { { 0 } };
    size_t nlanes[NODES] = { 0 };
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) {
        int pid = (int)json_integer_value(json_object_get(e, "pid"));
        int tid = (int)json_integer_value(json_object_get(e, "tid"));
        if (is(e, "X", "task")) {
            slices++;
            int node = pid - 1000;
            assert_true(node >= 0 && node < NODES);
            json_t *args = json_object_get(e, "args");
            assert_string_equal(str(args, "status"), "done");
            /* The slice is the task's run, named by its workload id. */
            unsigned job, index;
            assert_int_equal(sscanf(str(args, "task"), "%u:%u", &job, &index), 2);
            char want[32];
            snprintf(want, sizeof want, "w-%u", index);
            assert_string_equal(str(e, "name"), want);
            names++;
            uint64_t key = fixture_key(index);
            const struct trace_event *start = &f.e[fixture_find(&f, TRACE_TASK_START, key)].ev;
            const struct trace_event *end = &f.e[fixture_find(&f, TRACE_TASK_END, key)].ev;
            assert_int_equal(start->node, node);
            assert_int_equal(ns(e, "ts"), start->time_ns);
            assert_int_equal(ns(e, "dur"), end->time_ns - start->time_ns);
            spans[node][nspans[node]].start = start->time_ns;
            spans[node][nspans[node]].end = end->time_ns;
            spans[node][nspans[node]++].tid = tid;
            bool known = false;
            for (size_t k = 0; k < nlanes[node]; k++)
                known |= lanes[node][k] == tid;
            if (!known)
                lanes[node][nlanes[node]++] = tid;
        } else if (is(e, "X", "data")) {
            data_slices++;
        } else if (is(e, "C", NULL)) {
            counters++;
        } else if (is(e, "i", NULL)) {
            instants++;
        }
    }
    assert_int_equal(slices, TASKS);
    assert_int_equal(names, TASKS);
    assert_int_equal(st.task_slices, TASKS);
    assert_int_equal(st.unfinished, 0);
    assert_int_equal(data_slices, 2 * f.fetches);
    assert_int_equal(counters, 4 * f.samples);
    /* NODE_UP per node, the policy change, the job, and both ends of each steal. */
    assert_int_equal(instants, NODES + 1 + 1 + 2 * f.steals);
    for (int n = 0; n < NODES; n++) {
        assert_int_equal(nlanes[n], peak(&f, n));
        for (size_t a = 0; a < nspans[n]; a++)
            for (size_t b = a + 1; b < nspans[n]; b++)
                if (spans[n][a].tid == spans[n][b].tid &&
                    spans[n][a].start < spans[n][b].end && spans[n][b].start < spans[n][a].end)
                    fail_msg("node %d: two slices overlap on tid %d", n, spans[n][a].tid);
    }
    assert_true(peak(&f, 0) >= 2); /* the run does overlap tasks: lanes are tested */
    json_decref(doc);
    fixture_free(&f);
}

/* Each flow id has exactly one "s" and one "f", on the nodes the run says. */
static void test_flows_pair_up(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_number(&f);
    fixture_write(&f, trace_path, 40, NULL, NULL, 0);
    struct trace_chrome_stats st;
    json_t *doc = export(&st);
    json_t *events = json_object_get(doc, "traceEvents");
    json_t *flows = json_object(); /* "cat/id" -> {"s": pid, "f": pid} */
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) {
        bool s = is(e, "s", NULL), fin = is(e, "f", NULL);
        if (!s && !fin)
            continue;
        char key[64];
        snprintf(key, sizeof key, "%s/%" JSON_INTEGER_FORMAT, str(e, "cat"),
                 json_integer_value(json_object_get(e, "id")));
        json_t *pair = json_object_get(flows, key);
        if (!pair) {
            pair = json_object();
            json_object_set_new(flows, key, pair);
        }
        const char *ph = s ? "s" : "f";
        if (json_object_get(pair, ph))
            fail_msg("flow %s has two '%s'", key, ph);
        json_object_set(pair, ph, json_object_get(e, "pid"));
        if (fin)
            assert_string_equal(str(e, "bp"), "e");
        /* A flow binds to an event with the same cat, pid, tid and ts. */
        bool bound = false;
        size_t j;
        json_t *o;
        json_array_foreach(events, j, o) {
            if (j != i && (is(o, "X", NULL) || is(o, "i", NULL)) &&
                !strcmp(str(o, "cat"), str(e, "cat")) &&
                json_equal(json_object_get(o, "pid"), json_object_get(e, "pid")) &&
                json_equal(json_object_get(o, "tid"), json_object_get(e, "tid")) &&
                (ns(o, "ts") == ns(e, "ts") ||
                 (is(o, "X", NULL) && ns(o, "ts") + ns(o, "dur") == ns(e, "ts")))) {
                bound = true;
                break;
            }
        }
        if (!bound)
            fail_msg("flow %s '%s' binds to nothing", key, ph);
    }
    size_t steals = 0, transfers = 0;
    const char *key;
    json_t *pair;
    json_object_foreach(flows, key, pair) {
        assert_non_null(json_object_get(pair, "s"));
        assert_non_null(json_object_get(pair, "f"));
        assert_false(json_equal(json_object_get(pair, "s"), json_object_get(pair, "f")));
        if (!strncmp(key, "steal/", 6))
            steals++;
        else if (!strncmp(key, "data/", 5))
            transfers++;
    }
    assert_int_equal(steals, f.steals);
    assert_int_equal(transfers, f.fetches);
    assert_int_equal(st.steal_starts, f.steals);
    assert_int_equal(st.steal_ends, f.steals);
    /* Direction: the first steal of the run is task 0, from node 0 to node 1. */
    json_array_foreach(events, i, e) {
        if (is(e, "s", "steal")) {
            assert_int_equal(json_integer_value(json_object_get(e, "pid")), PID(0));
            break;
        }
    }
    json_decref(flows);
    json_decref(doc);
    fixture_free(&f);
}

/* A task the trace leaves running, and a name that is not UTF-8. */
static void test_unfinished_and_bad_names(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, TASKS);
    fixture_remove(&f, fixture_find(&f, TRACE_TASK_END, fixture_key(10)));
    strcpy(f.ids[3], "bad\xff\xfe-\xe2\x82"); /* invalid bytes, then a cut sequence */
    fixture_number(&f);
    fixture_write(&f, trace_path, 40, NULL, NULL, 0);
    struct trace_chrome_stats st;
    json_t *doc = export(&st); /* jansson refuses invalid UTF-8: parsing is the check */
    assert_int_equal(st.task_slices, TASKS);
    assert_int_equal(st.unfinished, 1);
    size_t i, unfinished = 0, bad = 0;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
        if (!is(e, "X", "task"))
            continue;
        json_t *args = json_object_get(e, "args");
        if (!strcmp(str(args, "status"), "unfinished")) {
            unfinished++;
            assert_string_equal(str(args, "task"), "1:10");
        }
        if (!strcmp(str(args, "task"), "1:3")) {
            bad++;
            assert_string_equal(str(e, "name"), "bad\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd\xef"
                                                 "\xbf\xbd");
        }
    }
    assert_int_equal(unfinished, 1);
    assert_int_equal(bad, 1);
    json_decref(doc);
    fixture_free(&f);
}

static void test_command(void **state)
{
    (void)state;
    struct fixture f;
    fixture_run(&f, NODES, 50);
    fixture_number(&f);
    fixture_write(&f, trace_path, 40, NULL, NULL, 0);
    char *argv[] = { "trace", "export", "--chrome", trace_path, NULL };
    assert_int_equal(fixture_trace_quiet(argv, 4), 0);
    char dflt[160];
    snprintf(dflt, sizeof dflt, "%s.json", trace_path); /* FILE.json by default */
    json_t *doc = json_load_file(dflt, 0, NULL);
    assert_non_null(doc);
    json_decref(doc);
    char *named[] = { "trace", "export", "--chrome", trace_path, "-o", json_path, NULL };
    assert_int_equal(fixture_trace_quiet(named, 6), 0);
    doc = json_load_file(json_path, 0, NULL);
    assert_non_null(doc);
    json_decref(doc);
    char *no_format[] = { "trace", "export", trace_path, NULL };
    assert_int_equal(fixture_trace_quiet(no_format, 3), EXIT_USAGE);
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_exports),
        cmocka_unit_test(test_flows_pair_up),
        cmocka_unit_test(test_unfinished_and_bad_names),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
