/*
 * test_wfcommons — the WfCommons importer (core/model/wfcommons.c): a small instance
 * converted and parsed (tasks, edges, scaled runtimes, initial objects and output
 * bytes), recognition by content, every refusal with its message, ids that need JSON
 * escaping, and the eight real instances of ../shared/workloads/wfcommons against the
 * figures their README gives (skipped, saying so, when that directory is absent).
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
#include <sys/stat.h>

#include "core/base/xalloc.h"
#include "core/model/wfcommons.h"
#include "tmpdir.h"

/* Three tasks listed child first, runtimes in another order than the tasks, extra keys
 * at every level (as Nextflow writes them), a file nobody uses, a file read by two
 * tasks, and a task with two output files. */
static const char tiny[] =
    "{\"name\": \"tiny\", \"schemaVersion\": \"1.5\", \"extra\": {\"x\": [1, 2]},\n"
    " \"workflow\": {\"repo\": \"nf-core/x\",\n"
    "  \"specification\": {\n"
    "   \"tasks\": [\n"
    "    {\"id\": \"merge_3\", \"name\": \"merge\", \"parents\": [\"split_1\", \"split_2\"],\n"
    "     \"children\": [], \"inputFiles\": [\"a.out\", \"b.out\", \"ref\"],\n"
    "     \"outputFiles\": [\"final\"]},\n"
    "    {\"id\": \"split_1\", \"name\": \"split\", \"parents\": [], \"children\": [\"merge_3\"],\n"
    "     \"inputFiles\": [\"in1\", \"ref\"], \"outputFiles\": [\"a.out\", \"a.log\"],\n"
    "     \"colour\": \"blue\"},\n"
    "    {\"id\": \"split_2\", \"name\": \"split\", \"parents\": [], \"children\": [\"merge_3\"],\n"
    "     \"inputFiles\": [\"in2\"], \"outputFiles\": [\"b.out\"]}],\n"
    "   \"files\": [{\"id\": \"in1\", \"sizeInBytes\": 1000000},\n"
    "             {\"id\": \"in2\", \"sizeInBytes\": 2600},\n"
    "             {\"id\": \"ref\", \"sizeInBytes\": 1400},\n"
    "             {\"id\": \"a.out\", \"sizeInBytes\": 40000},\n"
    "             {\"id\": \"a.log\", \"sizeInBytes\": 400},\n"
    "             {\"id\": \"b.out\", \"sizeInBytes\": 7000},\n"
    "             {\"id\": \"final\", \"sizeInBytes\": 1234},\n"
    "             {\"id\": \"unused\", \"sizeInBytes\": 99}]},\n"
    "  \"execution\": {\"makespanInSeconds\": 10, \"executedAt\": \"20200403T234126+0000\",\n"
    "   \"tasks\": [{\"id\": \"split_1\", \"runtimeInSeconds\": 2.5, \"coreCount\": 2},\n"
    "             {\"id\": \"merge_3\", \"runtimeInSeconds\": 0},\n"
    "             {\"id\": \"split_2\", \"runtimeInSeconds\": 12, \"avgCPU\": 99.5,\n"
    "              \"command\": {\"program\": \"split\", \"arguments\": []}}]}}}\n";

static int parse(struct workload *wl, const char *text, const struct wfcommons_options *o,
                 char **cause)
{
    *cause = NULL;
    return wfcommons_parse(wl, text, strlen(text), "tiny.json", o, cause);
}

static const struct workload_task *task(const struct workload *wl, const char *id)
{
    int64_t at = workload_find(wl, id);
    assert_true(at >= 0);
    return &wl->tasks[at];
}

static const char *input_id(const struct workload *wl, const struct workload_task *t,
                            uint32_t k)
{
    assert_true(k < t->num_inputs);
    return wl->objects[t->inputs[k]].id;
}

static void test_tiny(void **state)
{
    (void)state;
    struct workload wl;
    char *cause;
    struct wfcommons_options o = {.time_scale = 0.5, .size_scale = 0.001};
    assert_int_equal(parse(&wl, tiny, &o, &cause), 0);
    assert_null(cause);
    assert_string_equal(wl.name, "tiny.json");

    /* Tasks in the instance's order, all sleeps; durations joined on id and scaled. */
    assert_int_equal(wl.count, 3);
    assert_string_equal(wl.tasks[0].id, "merge_3");
    assert_string_equal(wl.tasks[1].id, "split_1");
    assert_string_equal(wl.tasks[2].id, "split_2");
    for (uint32_t i = 0; i < wl.count; i++)
        assert_int_equal(wl.tasks[i].kind, TASK_SLEEP);
    const struct workload_task *merge = task(&wl, "merge_3");
    const struct workload_task *split1 = task(&wl, "split_1");
    const struct workload_task *split2 = task(&wl, "split_2");
    assert_true(split1->duration_s == 1.25);
    assert_true(split2->duration_s == 6.0);
    assert_true(merge->duration_s == 0.0);

    /* Edges from parents, children derived; the merge runs last. */
    assert_int_equal(merge->num_parents, 2);
    assert_string_equal(wl.tasks[merge->parents[0]].id, "split_1");
    assert_string_equal(wl.tasks[merge->parents[1]].id, "split_2");
    assert_int_equal(split1->num_children, 1);
    assert_int_equal(wl.topo[2], 0);

    /* Initial objects: read and never written, in the files' order, scaled; "unused"
     * and the written files are not objects. */
    assert_int_equal(wl.object_count, 3);
    assert_string_equal(wl.objects[0].id, "in1");
    assert_int_equal(wl.objects[0].bytes, 1000);
    assert_string_equal(wl.objects[1].id, "in2");
    assert_int_equal(wl.objects[1].bytes, 3); /* 2.6, rounded */
    assert_string_equal(wl.objects[2].id, "ref");
    assert_int_equal(wl.objects[2].bytes, 1); /* 1.4, rounded */
    for (uint32_t i = 0; i < wl.object_count; i++)
        assert_int_equal(wl.objects[i].node, WORKLOAD_NODE_SPREAD);
    assert_int_equal(split1->num_inputs, 2);
    assert_string_equal(input_id(&wl, split1, 0), "in1");
    assert_string_equal(input_id(&wl, split1, 1), "ref");
    assert_int_equal(split2->num_inputs, 1);
    assert_string_equal(input_id(&wl, split2, 0), "in2");
    /* The merge reads its parents' outputs through the edges, and "ref" as an object. */
    assert_int_equal(merge->num_inputs, 1);
    assert_string_equal(input_id(&wl, merge, 0), "ref");

    /* Output bytes: the task's output files together, scaled once. */
    assert_int_equal(split1->output_bytes, 40);  /* 40,400 bytes */
    assert_int_equal(split2->output_bytes, 7);
    assert_int_equal(merge->output_bytes, 1);    /* 1.234 */
    workload_fini(&wl);

    /* No options: nothing scaled. */
    assert_int_equal(parse(&wl, tiny, NULL, &cause), 0);
    assert_true(task(&wl, "split_1")->duration_s == 2.5);
    assert_int_equal(task(&wl, "split_1")->output_bytes, 40400);
    /* coreCount becomes cores; without it, one. */
    assert_int_equal(task(&wl, "split_1")->cores, 2);
    assert_int_equal(task(&wl, "split_2")->cores, 1);
    assert_int_equal(wl.objects[1].bytes, 2600);
    workload_fini(&wl);
}

static void test_text(void **state)
{
    (void)state;
    char *out, *cause = NULL;
    size_t len;
    assert_int_equal(wfcommons_to_jsonl(tiny, strlen(tiny), "tiny.json", NULL, &out, &len,
                                        &cause),
                     0);
    assert_int_equal(strlen(out), len);
    assert_string_equal(out,
                        "{\"object\":\"in1\",\"bytes\":1000000}\n"
                        "{\"object\":\"in2\",\"bytes\":2600}\n"
                        "{\"object\":\"ref\",\"bytes\":1400}\n"
                        "{\"id\":\"merge_3\",\"kind\":\"sleep\",\"duration_s\":0.0,"
                        "\"parents\":[\"split_1\",\"split_2\"],\"inputs\":[\"ref\"],"
                        "\"output_bytes\":1234}\n"
                        "{\"id\":\"split_1\",\"kind\":\"sleep\",\"duration_s\":2.5,"
                        "\"parents\":[],\"inputs\":[\"in1\",\"ref\"],\"output_bytes\":40400,"
                        "\"cores\":2}\n"
                        "{\"id\":\"split_2\",\"kind\":\"sleep\",\"duration_s\":12.0,"
                        "\"parents\":[],\"inputs\":[\"in2\"],\"output_bytes\":7000}\n");
    free(out);
}

static void test_detect(void **state)
{
    (void)state;
    assert_true(wfcommons_detect(tiny, strlen(tiny)));
    const char *bom = "\xef\xbb\xbf {\"workflow\": {}, \"schemaVersion\": \"1.4\"}";
    assert_true(wfcommons_detect(bom, strlen(bom)));
    /* JSON Lines, even with those words as values or nested keys. */
    const char *no[] = {
        "{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":1}\n{\"id\":\"b\",\"parents\":[\"a\"]}\n",
        "# a comment\n{\"id\":\"workflow\"}\n",
        "{\"id\":\"schemaVersion\",\"parents\":[\"workflow\"]}\n{\"id\":\"workflow\"}\n",
        "{\"object\":\"o\",\"bytes\":1,\"node\":{\"workflow\":1,\"schemaVersion\":2}}\n",
        "{\"workflow\": {}}\n{\"schemaVersion\": \"1.5\"}\n",
        "[{\"workflow\": {}, \"schemaVersion\": \"1.5\"}]",
        "{\"workflow\": {}, \"schemaVersion\"",
        "",
        "   ",
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (wfcommons_detect(no[i], strlen(no[i])))
            fail_msg("text %zu taken for an instance: %s", i, no[i]);
    /* Escapes inside strings do not end them. */
    const char *escaped = "{\"a\\\"b\": \"}\\\\\", \"workflow\": 1, \"schemaVersion\": 2}";
    assert_true(wfcommons_detect(escaped, strlen(escaped)));
    assert_false(wfcommons_detect(NULL, 0));
}

/* An instance from its three lists (each the inside of a JSON array). */
static char *instance(const char *tasks, const char *files, const char *runtimes)
{
    return xasprintf("{\"name\": \"x\", \"schemaVersion\": \"1.5\", \"workflow\": {"
                     "\"specification\": {\"tasks\": [%s], \"files\": [%s]}, "
                     "\"execution\": {\"makespanInSeconds\": 1, \"executedAt\": \"x\", "
                     "\"tasks\": [%s]}}}",
                     tasks, files, runtimes);
}

#define MIGRATE "(convert older instances with wfformat's tools/wfcommons-migrate-instance.py)"
#define TA "{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": []}"
#define TB "{\"id\": \"b\", \"name\": \"b\", \"parents\": [], \"children\": []}"
#define RA "{\"id\": \"a\", \"runtimeInSeconds\": 1}"
#define RB "{\"id\": \"b\", \"runtimeInSeconds\": 1}"
#define F1 "{\"id\": \"f\", \"sizeInBytes\": 10}"

/* Each bad instance (tasks, files, runtimes), and the start of its message. */
static const struct {
    const char *tasks, *files, *runtimes, *want;
} bad[] = {
    /* Runtimes. */
    {TA "," TB, "", RA, "bad.json: task 'b': no entry in workflow.execution.tasks (its runtime)"},
    {TA, "", RA "," RA, "bad.json: task 'a': listed twice in workflow.execution.tasks"},
    {TA, "", RA "," RB, "bad.json: task 'b': in workflow.execution.tasks but not in "
                        "workflow.specification.tasks"},
    {TA, "", "{\"id\": \"a\", \"runtimeInSeconds\": \"1\"}",
     "bad.json: task 'a': runtimeInSeconds must be a number"},
    {TA, "", "{\"id\": \"a\", \"runtimeInSeconds\": 1, \"coreCount\": 0.5}",
     "bad.json: task 'a': coreCount must be a number from 1 to 4096"},
    {TA, "", "{\"id\": \"a\", \"runtimeInSeconds\": 1, \"coreCount\": \"2\"}",
     "bad.json: task 'a': coreCount must be a number from 1 to 4096"},
    {TA, "", "{\"id\": \"a\", \"runtimeInSeconds\": -0.5}",
     "bad.json: task 'a': runtimeInSeconds -0.5 must be a finite number >= 0"},
    {TA, "", "{\"id\": \"a\"}", "bad.json: task 'a': missing runtimeInSeconds in "
                                "workflow.execution.tasks"},
    {TA, "", "{\"runtimeInSeconds\": 1}", "bad.json: workflow.execution.tasks[0]: missing id"},
    {TA, "", "{\"id\": \"a\", \"runtimeInSeconds\": 2e6}",
     "bad.json: task 'a': runtimeInSeconds 2e+06 is 2e+06 s after time_scale 1, beyond the "
     "limit of 1000000 s"},
    /* Tasks. */
    {TA "," TA, "", RA, "bad.json: task 'a': listed twice in workflow.specification.tasks"},
    {"{\"name\": \"a\", \"parents\": [], \"children\": []}", "", RA,
     "bad.json: workflow.specification.tasks[0]: missing id"},
    {"{\"id\": 7, \"name\": \"a\", \"parents\": [], \"children\": []}", "", RA,
     "bad.json: workflow.specification.tasks[0]: id must be a string"},
    {"{\"id\": \"\", \"name\": \"a\", \"parents\": [], \"children\": []}", "", RA,
     "bad.json: workflow.specification.tasks[0]: id must not be empty"},
    {"{\"id\": \"a\", \"name\": \"a\", \"children\": []}", "", RA,
     "bad.json: task 'a': missing parents"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": []}", "", RA,
     "bad.json: task 'a': missing children"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": {}, \"children\": []}", "", RA,
     "bad.json: task 'a': parents must be an array of task ids"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [], \"inputFiles\": [3]}",
     "", RA, "bad.json: task 'a': inputFiles[0] must be a string (file ids)"},
    {"[]", "", RA, "bad.json: workflow.specification.tasks[0] must be an object"},
    {"", "", "", "bad.json: workflow.specification.tasks is empty (no tasks)"},
    /* Edges: parents and children must mirror each other. */
    {TA ",{\"id\": \"b\", \"name\": \"b\", \"parents\": [\"a\"], \"children\": []}", "",
     RA "," RB, "bad.json: task 'b': parent 'a' does not list it among its children"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [\"b\"]}," TB, "",
     RA "," RB, "bad.json: task 'a': child 'b' does not list it among its parents"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [\"b\", \"b\"]},"
     "{\"id\": \"b\", \"name\": \"b\", \"parents\": [\"a\"], \"children\": []}",
     "", RA "," RB, "bad.json: task 'a' lists child 'b' twice"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [\"z\"]}", "", RA,
     "bad.json: task 'a': unknown child 'z'"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [\"z\"], \"children\": []}", "", RA,
     "bad.json: task 'a': unknown parent 'z'"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [\"a\"], \"children\": [\"a\"]}", "", RA,
     "bad.json: task 'a' lists itself as a parent"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [\"b\"]},"
     "{\"id\": \"b\", \"name\": \"b\", \"parents\": [\"a\", \"a\"], \"children\": []}",
     "", RA "," RB, "bad.json: task 'b' lists parent 'a' twice"},
    /* A cycle, which workload_parse finds: no line of the generated text shows. */
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [\"b\"], \"children\": [\"b\"]},"
     "{\"id\": \"b\", \"name\": \"b\", \"parents\": [\"a\"], \"children\": [\"a\"]}",
     "", RA "," RB, "bad.json: task 'a' is on a cycle (a -> b -> a)"},
    /* Files. */
    {TA, F1 "," F1, RA, "bad.json: file 'f': listed twice in workflow.specification.files"},
    {TA, "{\"id\": \"f\", \"sizeInBytes\": -1}", RA,
     "bad.json: file 'f': sizeInBytes must be an integer >= 0"},
    {TA, "{\"id\": \"f\", \"sizeInBytes\": 1.5}", RA,
     "bad.json: file 'f': sizeInBytes must be an integer >= 0"},
    {TA, "{\"id\": \"f\", \"sizeInBytes\": \"10\"}", RA,
     "bad.json: file 'f': sizeInBytes must be an integer >= 0"},
    {TA, "{\"id\": \"f\"}", RA, "bad.json: file 'f': missing sizeInBytes"},
    {TA, "{\"sizeInBytes\": 1}", RA, "bad.json: workflow.specification.files[0]: missing id"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [], "
     "\"inputFiles\": [\"g\"]}",
     F1, RA, "bad.json: task 'a': input file 'g' is not in workflow.specification.files"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [], "
     "\"outputFiles\": [\"g\"]}",
     F1, RA, "bad.json: task 'a': output file 'g' is not in workflow.specification.files"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [], "
     "\"outputFiles\": [\"f\"]},"
     "{\"id\": \"b\", \"name\": \"b\", \"parents\": [], \"children\": [], "
     "\"outputFiles\": [\"f\"]}",
     F1, RA "," RB, "bad.json: task 'b': output file 'f' is also written by task 'a'"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [], "
     "\"inputFiles\": [\"f\", \"f\"]}",
     F1, RA, "bad.json: task 'a' lists input file 'f' twice"},
    /* A file that becomes an object named like a task. */
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [], "
     "\"inputFiles\": [\"b\"]}," TB,
     "{\"id\": \"b\", \"sizeInBytes\": 1}", RA "," RB,
     "bad.json: file 'b': a task has the same id (task and object ids share one namespace "
     "in a workload)"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [], "
     "\"inputFiles\": [\"f\"]}",
     "{\"id\": \"f\", \"sizeInBytes\": 2251799813685248}", RA,
     "bad.json: file 'f': sizeInBytes 2251799813685248 is 2251799813685248 after size_scale 1, "
     "beyond the limit of 1125899906842624 (1 PiB)"},
    {"{\"id\": \"a\", \"name\": \"a\", \"parents\": [], \"children\": [], "
     "\"outputFiles\": [\"f\", \"g\"]}",
     "{\"id\": \"f\", \"sizeInBytes\": 9223372036854775807},"
     "{\"id\": \"g\", \"sizeInBytes\": 9223372036854775807}", RA,
     "bad.json: task 'a': its outputFiles add up to 18446744073709551614 bytes"},
};

static void expect(const char *text, const struct wfcommons_options *o, const char *want)
{
    struct workload wl;
    char *cause = NULL;
    int rc = wfcommons_parse(&wl, text, strlen(text), "bad.json", o, &cause);
    if (rc != -EINVAL || !cause || strncmp(cause, want, strlen(want)) != 0)
        fail_msg("instance:\n%.600s\nwant: %s\ngot:  %s (rc %d)", text, want,
                 cause ? cause : "(none)", rc);
    assert_null(wl.tasks);
    free(cause);
    /* The conversion alone refuses it too and hands out no text, except for the cycle,
     * which only workload_parse sees. */
    char *out = (char *)1, *why = NULL;
    size_t len = 1;
    rc = wfcommons_to_jsonl(text, strlen(text), "bad.json", o, &out, &len, &why);
    if (strstr(want, "cycle")) {
        assert_int_equal(rc, 0);
        free(out);
        return;
    }
    assert_int_equal(rc, -EINVAL);
    assert_null(out);
    assert_int_equal(len, 0);
    assert_non_null(why);
    free(why);
}

static void test_refusals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *text = instance(bad[i].tasks, bad[i].files, bad[i].runtimes);
        expect(text, NULL, bad[i].want);
        free(text);
    }
}

static void test_document_refusals(void **state)
{
    (void)state;
    char *v14 = xasprintf("%s", tiny);
    memcpy(strstr(v14, "\"1.5\"") + 1, "1.4", 3);
    expect(v14, NULL, "bad.json: schemaVersion '1.4' is not 1.5 " MIGRATE);
    free(v14);
    expect("{\"schemaVersion\": 1.5, \"workflow\": {}}", NULL,
           "bad.json: schemaVersion is not the string \"1.5\" " MIGRATE);
    expect("{\"workflow\": {}}", NULL, "bad.json: missing schemaVersion");
    expect("{\"schemaVersion\": \"1.5\"}", NULL, "bad.json: missing workflow");
    expect("{\"schemaVersion\": \"1.5\", \"workflow\": []}", NULL,
           "bad.json: workflow must be an object");
    expect("{\"schemaVersion\": \"1.5\", \"workflow\": {}}", NULL,
           "bad.json: missing workflow.specification");
    expect("{\"schemaVersion\": \"1.5\", \"workflow\": {\"specification\": {\"tasks\": [" TA
           "]}}}",
           NULL, "bad.json: missing workflow.execution (the tasks' runtimes)");
    expect("{\"schemaVersion\": \"1.5\", \"workflow\": {\"specification\": {\"tasks\": [" TA
           "]}, \"execution\": {\"tasks\": {}}}}",
           NULL, "bad.json: workflow.execution.tasks must be an array");
    expect("[]", NULL, "bad.json: not a JSON object");
    expect("{\"schemaVersion\": \"1.5\",\n \"workflow\": }", NULL,
           "bad.json: malformed JSON at line 2, column 14: ");
    expect("", NULL, "bad.json: malformed JSON at line 1");
    /* Duplicate keys would make the runtime a guess. */
    expect("{\"schemaVersion\": \"1.5\", \"schemaVersion\": \"1.5\"}", NULL,
           "bad.json: malformed JSON at line 1");
    struct wfcommons_options o = {.time_scale = -1};
    expect(tiny, &o, "bad.json: time_scale -1 must be a finite number >= 0 (0 means 1)");
    o = (struct wfcommons_options){.size_scale = NAN};
    expect(tiny, &o, "bad.json: size_scale nan must be a finite number >= 0 (0 means 1)");
    /* Runtimes within the limit, one beyond it once scaled up (split_1's 2.5 s
     * becomes 250,000 s and passes). */
    o = (struct wfcommons_options){.time_scale = 1e5};
    expect(tiny, &o, "bad.json: task 'split_2': runtimeInSeconds 12 is 1.2e+06 s after "
                     "time_scale 100000, beyond the limit of 1000000 s");
}

/* Hostile strings: messages quote them cut to TEXT_SHOWN bytes, whatever their length. */
static void test_long_ids(void **state)
{
    (void)state;
    enum { LONG = 100000 };
    char *id = xmalloc(LONG + 1);
    memset(id, 'x', LONG);
    id[LONG] = '\0';
    char *t = xasprintf("{\"id\": \"%s\", \"name\": \"a\", \"parents\": [], \"children\": []}",
                        id);
    char *tasks = xasprintf("%s,%s", t, t);
    char *text = instance(tasks, "", "");
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(wfcommons_parse(&wl, text, strlen(text), "bad.json", NULL, &cause),
                     -EINVAL);
    assert_non_null(strstr(cause, "bytes, beyond the limit of 1024"));
    assert_true(strlen(cause) < 400);
    free(cause);
    free(text);

    /* An id within the limit is not cut in the workload, but is in messages. */
    id[1000] = '\0';
    char *runtime = xasprintf(RA ", {\"id\": \"%s\", \"runtimeInSeconds\": 1}", id);
    text = instance(TA, "", runtime);
    assert_int_equal(wfcommons_parse(&wl, text, strlen(text), "bad.json", NULL, &cause),
                     -EINVAL);
    assert_non_null(strstr(cause, "… (1000 bytes)': in workflow.execution.tasks but not"));
    assert_true(strlen(cause) < 300);
    free(cause);
    free(text);
    free(runtime);

    char *version = xasprintf("{\"schemaVersion\": \"%s\", \"workflow\": {}}", id);
    assert_int_equal(wfcommons_parse(&wl, version, strlen(version), "bad.json", NULL, &cause),
                     -EINVAL);
    assert_true(strlen(cause) < 300);
    free(cause);
    free(version);
    free(tasks);
    free(t);
    free(id);
}

/* Ids with quotes, backslashes, control characters and UTF-8 stay the same ids. */
static void test_escaping(void **state)
{
    (void)state;
    const char *text =
        "{\"schemaVersion\": \"1.5\", \"workflow\": {\"specification\": {"
        "\"tasks\": [{\"id\": \"q\\\"u\\\\o\\u0001t\\ne \\u00e9\", \"name\": \"x\", "
        "\"parents\": [], \"children\": [\"b\"], \"inputFiles\": [\"in \\\"1\\\"\"]},"
        "{\"id\": \"b\", \"name\": \"x\", \"parents\": [\"q\\\"u\\\\o\\u0001t\\ne \\u00e9\"], "
        "\"children\": []}],"
        "\"files\": [{\"id\": \"in \\\"1\\\"\", \"sizeInBytes\": 5}]},"
        "\"execution\": {\"tasks\": [{\"id\": \"b\", \"runtimeInSeconds\": 1},"
        "{\"id\": \"q\\\"u\\\\o\\u0001t\\ne \\u00e9\", \"runtimeInSeconds\": 3}]}}}";
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(wfcommons_parse(&wl, text, strlen(text), "esc.json", NULL, &cause), 0);
    assert_string_equal(wl.tasks[0].id, "q\"u\\o\001t\ne \xc3\xa9");
    assert_true(wl.tasks[0].duration_s == 3);
    assert_string_equal(wl.objects[0].id, "in \"1\"");
    assert_int_equal(wl.tasks[1].num_parents, 1);
    assert_int_equal(wl.tasks[1].parents[0], 0);
    workload_fini(&wl);
}

/* With a command template every task is a command: {runtime} its scaled runtime, {id}
 * its id quoted for the shell (a quote in an id stays inside the word); its output is
 * what it writes, so no output bytes. */
static void test_command_template(void **state)
{
    (void)state;
    struct wfcommons_options o = {.time_scale = 0.5, .command = "run {id} {runtime}; echo {id}"};
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, tiny, &o, &cause), 0);
    const struct workload_task *t = task(&wl, "split_2");
    assert_int_equal(t->kind, TASK_COMMAND);
    assert_string_equal(t->cmd, "run 'split_2' 6.000000; echo 'split_2'");
    assert_int_equal(t->output_bytes, 0);
    assert_int_equal(task(&wl, "merge_3")->num_parents, 2);
    assert_int_equal(task(&wl, "merge_3")->num_inputs, 1);
    workload_fini(&wl);
    const char *quoted =
        "{\"schemaVersion\": \"1.5\", \"workflow\": {\"specification\": {"
        "\"tasks\": [{\"id\": \"it's\", \"name\": \"x\", \"parents\": [], \"children\": []}]},"
        "\"execution\": {\"tasks\": [{\"id\": \"it's\", \"runtimeInSeconds\": 1}]}}}";
    o.command = "echo {id}";
    o.time_scale = 0;
    assert_int_equal(wfcommons_parse(&wl, quoted, strlen(quoted), "q.json", &o, &cause), 0);
    assert_string_equal(wl.tasks[0].cmd, "echo 'it'\\''s'");
    workload_fini(&wl);
    /* A template that makes a command past the limit is refused with the task. */
    char *big = xmalloc(WORKLOAD_MAX_CMD + 2);
    memset(big, 'x', WORKLOAD_MAX_CMD + 1);
    big[WORKLOAD_MAX_CMD + 1] = '\0';
    o.command = big;
    assert_true(parse(&wl, tiny, &o, &cause) < 0);
    assert_non_null(strstr(cause, "tiny.json: task 'merge_3': its command is 65537 bytes"));
    free(cause);
    free(big);
}

static void test_load(void **state)
{
    (void)state;
    char path[128], missing[128];
    path_in_dir(path, sizeof path, "old.json");
    path_in_dir(missing, sizeof missing, "none.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"schemaVersion\": \"1.4\", \"workflow\": {\"tasks\": []}}\n", f);
    fclose(f);
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(wfcommons_load(&wl, path, NULL, &cause), -EINVAL);
    char want[256];
    snprintf(want, sizeof want, "%s: schemaVersion '1.4' is not 1.5 " MIGRATE, path);
    assert_string_equal(cause, want);
    free(cause);

    /* A cycle, named against the file, not a line of the generated text. */
    char *text = instance("{\"id\": \"a\", \"name\": \"a\", \"parents\": [\"b\"], "
                          "\"children\": [\"b\"]},"
                          "{\"id\": \"b\", \"name\": \"b\", \"parents\": [\"a\"], "
                          "\"children\": [\"a\"]}",
                          "", RA "," RB);
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    assert_int_equal(wfcommons_load(&wl, path, NULL, &cause), -EINVAL);
    snprintf(want, sizeof want, "%s: task 'a' is on a cycle (a -> b -> a)", path);
    assert_string_equal(cause, want);
    free(cause);

    f = fopen(path, "w");
    fputs(tiny, f);
    fclose(f);
    assert_int_equal(wfcommons_load(&wl, path, NULL, &cause), 0);
    assert_string_equal(wl.name, path);
    assert_int_equal(wl.count, 3);
    workload_fini(&wl);

    assert_true(wfcommons_load(&wl, missing, NULL, &cause) < 0);
    snprintf(want, sizeof want, "cannot open '%s': ", missing);
    assert_true(strncmp(cause, want, strlen(want)) == 0);
    free(cause);
}

/* ------------------------------------------------------------------------------------ */
/* The shared instances, against ../shared/workloads/wfcommons/README.md: "Tasks",
 * "Edges", "Input bytes" and "Σ task output bytes" (each file has one writer, so also
 * "Output bytes"), "Total runtime (s)" to its 0.1 s.  The README does not count the
 * initial files; `objects` was counted from the JSON (files read and never written). */

#define SHARED "../shared/workloads/wfcommons/"

struct figures {
    const char *file;
    uint32_t tasks, edges, objects;
    uint64_t input_bytes, output_bytes;
    double runtime_s;
};

static const struct figures instances[] = {
    {"montage-chameleon-dss-10d-001.json", 472, 1284, 62, 335316034, 10817303773, 37089.3},
    {"epigenomics-chameleon-ilmn-4seq-100k-001.json", 559, 691, 8, 2161285994, 6093805261,
     12685.0},
    {"1000genome-chameleon-12ch-250k-001.json", 492, 636, 32, 42663159314, 55255954, 28130.2},
    {"seismology-chameleon-700p-001.json", 701, 700, 1403, 6636658, 4791550, 361.6},
    {"soykb-chameleon-30fastq-20ch-001.json", 416, 1014, 41, 2813331669, 40572616, 69114.2},
    {"srasearch-chameleon-50a-001.json", 104, 152, 1, 98721, 69050549506, 65893.5},
    {"blast-chameleon-medium-001.json", 303, 900, 5, 5113029057, 403333, 31513.1},
    {"rnaseq-dirt02-001.json", 197, 451, 27, 25846285, 264948883, 2580.4},
};

static void totals(const struct workload *wl, uint32_t *edges, uint64_t *input_bytes,
                   uint64_t *output_bytes)
{
    *edges = 0;
    *input_bytes = *output_bytes = 0;
    for (uint32_t i = 0; i < wl->count; i++) {
        *edges += wl->tasks[i].num_parents;
        *output_bytes += wl->tasks[i].output_bytes;
    }
    for (uint32_t i = 0; i < wl->object_count; i++)
        *input_bytes += wl->objects[i].bytes;
}

static void test_instance(void **state)
{
    const struct figures *want = *state;
    struct stat st;
    if (stat(SHARED, &st) != 0) {
        print_message("%s is missing: the shared instances are not checked\n", SHARED);
        skip();
    }
    char path[256];
    snprintf(path, sizeof path, SHARED "%s", want->file);
    struct workload wl, scaled;
    char *cause = NULL;
    uint32_t edges;
    uint64_t input_bytes, output_bytes;

    /* Unscaled: the README's figures. */
    if (wfcommons_load(&wl, path, NULL, &cause) != 0)
        fail_msg("%s", cause);
    assert_string_equal(wl.name, path);
    assert_int_equal(wl.count, want->tasks);
    assert_int_equal(wl.object_count, want->objects);
    totals(&wl, &edges, &input_bytes, &output_bytes);
    assert_int_equal(edges, want->edges);
    assert_int_equal(input_bytes, want->input_bytes);
    assert_int_equal(output_bytes, want->output_bytes);
    assert_true(fabs(workload_total_work(&wl) - want->runtime_s) <= 0.05 + 1e-6);

    /* Scaled by a thousandth: the same workload, each runtime and size scaled on its
     * own, sizes rounded to whole bytes. */
    struct wfcommons_options o = {.time_scale = 0.001, .size_scale = 0.001};
    if (wfcommons_load(&scaled, path, &o, &cause) != 0)
        fail_msg("%s", cause);
    assert_int_equal(scaled.count, want->tasks);
    assert_int_equal(scaled.object_count, want->objects);
    for (uint32_t i = 0; i < wl.count; i++) {
        const struct workload_task *t = &wl.tasks[i], *s = &scaled.tasks[i];
        assert_string_equal(s->id, t->id);
        assert_true(s->duration_s == t->duration_s * 0.001);
        assert_int_equal(s->output_bytes, (uint64_t)round(t->output_bytes * 0.001));
        assert_int_equal(s->num_parents, t->num_parents);
        assert_int_equal(s->num_inputs, t->num_inputs);
    }
    for (uint32_t i = 0; i < wl.object_count; i++)
        assert_int_equal(scaled.objects[i].bytes, (uint64_t)round(wl.objects[i].bytes * 0.001));
    assert_true(fabs(workload_total_work(&scaled) - want->runtime_s * 0.001) <= 0.05e-3 + 1e-9);
    workload_fini(&scaled);
    workload_fini(&wl);
}

static int make_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_wfcommons");
}

#define INSTANCE(i) {instances[i].file, test_instance, NULL, NULL, (void *)&instances[i]}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_document_refusals),
        cmocka_unit_test(test_long_ids),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_command_template),
        cmocka_unit_test(test_load),
        INSTANCE(0), INSTANCE(1), INSTANCE(2), INSTANCE(3),
        INSTANCE(4), INSTANCE(5), INSTANCE(6), INSTANCE(7),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
