/*
 * test_workload_objects — the workload reader's data objects and task inputs: object
 * lines and their refusals, the node check and spread placement, inputs of tasks, real
 * files ("path": read at parse, made absolute, refused at their line when missing, not
 * regular or of another size) and the names a command's inputs take in its directory
 * ("as"; task_stage_name_ok).  The rest of the reader is test_workload.c's.
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

#include "core/base/xalloc.h"
#include "core/model/workload.h"
#include "tests/unit/tmpdir.h"
#include "tests/unit/workload_fixture.h"

/* Data objects and task inputs. */

static void test_objects(void **state)
{
    (void)state;
    /* Objects before and after their readers, a pinned one, CR LF, comments. */
    const char *text =
        "{\"id\":\"t0\",\"kind\":\"sleep\",\"duration_s\":0.1,\"inputs\":[\"f1\",\"f0\"]}\n"
        "# the files\n"
        "{\"object\":\"f0\",\"bytes\":2000000,\"node\":\"spread\"}\r\n"
        "{\"bytes\":0,\"object\":\"f1\",\"node\":3}\n"
        "{\"id\":\"t1\",\"parents\":[\"t0\"],\"inputs\":[\"f2\"]}\n"
        "{\"object\":\"f2\",\"bytes\":12345678901234}\n";
    struct workload wl;
    char *cause = NULL;
    int rc = parse(&wl, text, &cause);
    if (rc)
        print_error("%s\n", cause);
    assert_int_equal(rc, 0);
    assert_int_equal(wl.count, 2);
    assert_int_equal(wl.object_count, 3);
    const struct workload_object *f0 = &wl.objects[0], *f1 = &wl.objects[1], *f2 = &wl.objects[2];
    assert_string_equal(f0->id, "f0");
    assert_int_equal(f0->bytes, 2000000);
    assert_int_equal(f0->node, WORKLOAD_NODE_SPREAD);
    assert_int_equal(f0->line, 3);
    assert_string_equal(f1->id, "f1");
    assert_int_equal(f1->bytes, 0);
    assert_int_equal(f1->node, 3);
    assert_int_equal(f1->line, 4);
    assert_int_equal(f2->bytes, 12345678901234ULL);
    assert_int_equal(f2->node, WORKLOAD_NODE_SPREAD); /* the default */
    const struct workload_task *t0 = &wl.tasks[0], *t1 = &wl.tasks[1];
    assert_int_equal(t0->num_inputs, 2);
    assert_int_equal(t0->inputs[0], 1); /* as listed, not sorted */
    assert_int_equal(t0->inputs[1], 0);
    assert_int_equal(t1->num_inputs, 1);
    assert_int_equal(t1->inputs[0], 2);
    assert_int_equal(t1->num_parents, 1);
    assert_int_equal(t1->line, 5);
    assert_int_equal(workload_find_object(&wl, "f2"), 2);
    assert_int_equal(workload_find_object(&wl, "t0"), -1);
    assert_int_equal(workload_find(&wl, "f0"), -1);
    workload_fini(&wl);
    assert_null(wl.objects);
    assert_int_equal(wl.object_count, 0);

    /* A workload without objects has none, and tasks without inputs no list. */
    assert_int_equal(parse(&wl, "{\"id\":\"a\",\"inputs\":[]}\n", NULL), 0);
    assert_null(wl.objects);
    assert_int_equal(wl.object_count, 0);
    assert_int_equal(wl.tasks[0].num_inputs, 0);
    assert_null(wl.tasks[0].inputs);
    workload_fini(&wl);

    /* The same object read by many tasks; objects nobody reads are fine. */
    assert_int_equal(parse(&wl,
                           "{\"object\":\"x\",\"bytes\":1}\n{\"object\":\"unused\",\"bytes\":1}\n"
                           "{\"id\":\"a\",\"inputs\":[\"x\"]}\n{\"id\":\"b\",\"inputs\":[\"x\"]}\n",
                           NULL),
                     0);
    assert_int_equal(wl.tasks[1].inputs[0], 0);
    workload_fini(&wl);
}

/* ------------------------------------------------------------------------------------ */

static void test_error_objects(void **state)
{
    (void)state;
    expect_error("{\"id\":\"a\"}\n{\"object\":\"f\",\"bytes\":1,\"parents\":[\"a\"]}\n",
                 "w.jsonl:2: unknown key 'parents' on an object line (object, bytes, node, path)");
    expect_error("{\"object\":\"f\",\"id\":\"f\",\"bytes\":1}\n{\"id\":\"a\"}\n",
                 "w.jsonl:1: both id and object: a line is a task (id) or a data object "
                 "(object), not both");
    expect_error("{\"id\":\"a\"}\n{\"object\":7,\"bytes\":1}\n",
                 "w.jsonl:2: object must be a string (the object's id)");
    expect_error("{\"object\":null,\"bytes\":1}\n",
                 "w.jsonl:1: object must be a string (the object's id)");
    expect_error("{\"object\":\"\",\"bytes\":1}\n", "w.jsonl:1: object id must not be empty");
    expect_error("\n{\"object\":\"f\"}\n", "w.jsonl:2: object 'f': missing bytes (or a path to a file)");
    expect_error("{\"object\":\"f\",\"bytes\":-5}\n", "w.jsonl:1: object 'f': negative bytes -5");
    expect_error("{\"object\":\"f\",\"bytes\":1.5}\n",
                 "w.jsonl:1: object 'f': bytes must be an integer");
    expect_error("{\"object\":\"f\",\"bytes\":\"1\"}\n",
                 "w.jsonl:1: object 'f': bytes must be an integer");
    static const char *const bad_nodes[] = {"-1", "\"x\"", "\"Spread\"", "1.5", "true", "null",
                                            "[0]", "-2147483649"};
    for (size_t i = 0; i < sizeof bad_nodes / sizeof *bad_nodes; i++) {
        char *text = xasprintf("{\"id\":\"a\"}\n{\"object\":\"f\",\"bytes\":1,\"node\":%s}\n",
                               bad_nodes[i]);
        expect_error(text, "w.jsonl:2: object 'f': node must be an integer >= 0 or \"spread\"");
        free(text);
    }
    expect_error("{\"object\":\"f\",\"bytes\":1,\"node\":2147483648}\n",
                 "w.jsonl:1: object 'f': node 2147483648 is too large");
    /* Node 2^31 - 1 is the largest the format holds. */
    struct workload wl;
    assert_int_equal(parse(&wl,
                           "{\"id\":\"a\"}\n{\"object\":\"f\",\"bytes\":1,\"node\":2147483647}\n",
                           NULL),
                     0);
    assert_int_equal(wl.objects[0].node, INT32_MAX);
    workload_fini(&wl);
}

static void test_error_object_ids(void **state)
{
    (void)state;
    expect_error("{\"object\":\"f\",\"bytes\":1}\n{\"id\":\"a\"}\n\n"
                 "{\"object\":\"f\",\"bytes\":2}\n",
                 "w.jsonl:4: duplicate object 'f' (first on line 1)");
    /* Tasks and objects share one namespace, whichever comes first. */
    expect_error("{\"id\":\"x\"}\n{\"id\":\"y\"}\n{\"object\":\"x\",\"bytes\":1}\n",
                 "w.jsonl:3: duplicate id 'x' (first on line 1, a task)");
    expect_error("{\"object\":\"x\",\"bytes\":1}\n{\"id\":\"y\"}\n{\"id\":\"x\"}\n",
                 "w.jsonl:3: duplicate id 'x' (first on line 1, an object)");
    expect_error("{\"object\":\"f\",\"bytes\":1}\n\n\n", "w.jsonl: empty workload (no tasks)");
}

static void test_error_inputs(void **state)
{
    (void)state;
    expect_error("{\"object\":\"f\",\"bytes\":1}\n{\"id\":\"a\",\"inputs\":[\"f\"]}\n"
                 "{\"id\":\"b\",\"inputs\":[\"f\",\"g\"]}\n",
                 "w.jsonl:3: task 'b': unknown input 'g'");
    expect_error("{\"id\":\"p\"}\n{\"id\":\"a\",\"inputs\":[\"p\"]}\n",
                 "w.jsonl:2: task 'a': input 'p' is a task, not an object (list it in parents)");
    expect_error("{\"object\":\"f\",\"bytes\":1}\n{\"id\":\"a\",\"parents\":[\"f\"]}\n",
                 "w.jsonl:2: task 'a': parent 'f' is an object, not a task (list it in inputs)");
    expect_error("{\"id\":\"a\",\"inputs\":[\"f\",\"g\",\"f\"]}\n{\"object\":\"f\",\"bytes\":1}\n"
                 "{\"object\":\"g\",\"bytes\":1}\n",
                 "w.jsonl:1: task 'a' lists input 'f' twice");
    expect_error("{\"id\":\"a\",\"inputs\":\"f\"}\n",
                 "w.jsonl:1: task 'a': inputs must be an array of object ids");
    expect_error("{\"object\":\"f\",\"bytes\":1}\n{\"id\":\"a\",\"inputs\":[\"f\",1]}\n",
                 "w.jsonl:2: task 'a': inputs[1] must be a string");
    expect_error("{\"id\":\"a\",\"inputs\":[\"\"]}\n", "w.jsonl:1: task 'a': unknown input ''");
    /* The first bad line is the one reported, parents and inputs alike. */
    expect_error("{\"id\":\"a\",\"inputs\":[\"nope\"]}\n{\"id\":\"b\",\"parents\":[\"nope\"]}\n",
                 "w.jsonl:1: task 'a': unknown input 'nope'");
    expect_error("{\"id\":\"a\",\"parents\":[\"nope\"]}\n{\"id\":\"b\",\"inputs\":[\"nope\"]}\n",
                 "w.jsonl:1: task 'a': unknown parent 'nope'");
    /* The same input in two tasks is fine (the mark is per task). */
    struct workload wl;
    assert_int_equal(parse(&wl,
                           "{\"object\":\"f\",\"bytes\":1}\n{\"id\":\"a\",\"inputs\":[\"f\"]}\n"
                           "{\"id\":\"b\",\"inputs\":[\"f\"]}\n",
                           NULL),
                     0);
    workload_fini(&wl);
}

static void test_check_nodes(void **state)
{
    (void)state;
    const char *text = "{\"id\":\"a\",\"inputs\":[\"s\",\"p\",\"q\"]}\n"
                       "{\"object\":\"s\",\"bytes\":1}\n"
                       "{\"object\":\"p\",\"bytes\":1,\"node\":0}\n"
                       "\n"
                       "{\"object\":\"q\",\"bytes\":1,\"node\":8}\n";
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, text, &cause), 0);
    assert_int_equal(workload_check_nodes(&wl, 9, &cause), 0);
    assert_int_equal(workload_check_nodes(&wl, 100000, NULL), 0);
    assert_int_equal(workload_check_nodes(&wl, 8, &cause), -EINVAL);
    assert_string_equal(cause,
                        "w.jsonl:5: object 'q': node 8 is outside the cluster (8 nodes, 0-7)");
    free(cause);
    cause = NULL;
    assert_int_equal(workload_check_nodes(&wl, 1, &cause), -EINVAL);
    assert_string_equal(cause, "w.jsonl:5: object 'q': node 8 is outside the cluster (1 node, 0)");
    free(cause);
    assert_int_equal(workload_check_nodes(&wl, 0, NULL), -EINVAL);
    assert_int_equal(workload_check_nodes(NULL, 4, NULL), -EINVAL);

    /* Pinned objects stay put; spread ones go round robin over the object index. */
    assert_int_equal(workload_object_node(&wl, 1, 9), 0);
    assert_int_equal(workload_object_node(&wl, 2, 9), 8);
    assert_int_equal(workload_object_node(&wl, 2, 8), WORKLOAD_NO_NODE);
    assert_int_equal(workload_object_node(&wl, 0, 9), 0);
    assert_int_equal(workload_object_node(&wl, 3, 9), WORKLOAD_NO_NODE); /* no object 3 */
    assert_int_equal(workload_object_node(&wl, 0, 0), WORKLOAD_NO_NODE);
    assert_int_equal(workload_object_node(NULL, 0, 1), WORKLOAD_NO_NODE);
    workload_fini(&wl);

    /* Spread placement is uniform: n objects on k nodes put n/k on each. */
    char *big = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&big, &len);
    fprintf(out, "{\"id\":\"t\"}\n");
    for (int i = 0; i < 1000; i++)
        fprintf(out, "{\"object\":\"o%d\",\"bytes\":%d,\"node\":\"spread\"}\n", i, i);
    fclose(out);
    assert_int_equal(workload_parse(&wl, big, len, "big", NULL), 0);
    assert_int_equal(workload_check_nodes(&wl, 1, NULL), 0); /* nothing pinned */
    uint32_t per_node[7] = {0};
    for (uint32_t i = 0; i < wl.object_count; i++) {
        uint32_t node = workload_object_node(&wl, i, 7);
        assert_int_equal(node, i % 7);
        per_node[node]++;
    }
    for (int n = 0; n < 7; n++)
        assert_true(per_node[n] == 142 || per_node[n] == 143);
    /* The same answer every time (the client and every node compute it alone). */
    assert_int_equal(workload_object_node(&wl, 999, 7), 999 % 7);
    workload_fini(&wl);
    free(big);
}

/* Many objects and readers: the object id table grows like the task one. */
static void test_many_objects(void **state)
{
    (void)state;
    enum { N = 50000 };
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    for (uint32_t i = 0; i < N; i++)
        fprintf(out, "{\"id\":\"t%u\",\"inputs\":[\"f%u\",\"f%u\"]}\n", i, i, (i * 7 + 1) % N);
    for (uint32_t i = N; i-- > 0;)
        fprintf(out, "{\"object\":\"f%u\",\"bytes\":%u}\n", i, i);
    fclose(out);
    struct workload wl;
    char *cause = NULL;
    int rc = workload_parse(&wl, text, len, "many", &cause);
    if (rc)
        print_error("%s\n", cause);
    assert_int_equal(rc, 0);
    assert_int_equal(wl.object_count, N);
    for (uint32_t i = 0; i < N; i++) {
        const struct workload_task *t = &wl.tasks[i];
        assert_int_equal(t->num_inputs, 2);
        /* Objects were written in reverse: f_k is object N-1-k. */
        assert_int_equal(t->inputs[0], N - 1 - i);
        assert_int_equal(wl.objects[t->inputs[1]].bytes, (i * 7 + 1) % N);
    }
    workload_fini(&wl);
    free(text);
}

/* `path`: a real file whose size is the object's bytes, relative to the workload file's
 * directory (workload_load), made absolute; a missing, unreadable or non-regular file, or
 * bytes that disagree, are refused at its line. */
static void test_object_path(void **state)
{
    (void)state;
    const char *dir = tmpdir; /* the binary's own, removed by the group teardown */
    char sub[160], file[200], wlp[200], text[1024];
    snprintf(sub, sizeof sub, "%s/data", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(file, sizeof file, "%s/in.txt", sub);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("12345", f);
    fclose(f);
    snprintf(wlp, sizeof wlp, "%s/w.jsonl", dir);
    f = fopen(wlp, "w");
    assert_non_null(f);
    fputs("{\"object\":\"in\",\"path\":\"data/in.txt\",\"node\":1}\n"
          "{\"object\":\"in2\",\"path\":\"data/in.txt\",\"bytes\":5}\n"
          "{\"id\":\"t\",\"kind\":\"command\",\"cmd\":\"cat in x/y\","
          "\"inputs\":[\"in\",{\"object\":\"in2\",\"as\":\"x/y\"}]}\n", f);
    fclose(f);
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(workload_load(&wl, wlp, &cause), 0);
    assert_int_equal(wl.objects[0].bytes, 5);
    assert_non_null(wl.objects[0].path);
    assert_int_equal(wl.objects[0].path[0], '/');
    assert_non_null(strstr(wl.objects[0].path, "/data/in.txt"));
    assert_null(wl.tasks[0].input_as[0]);
    assert_string_equal(wl.tasks[0].input_as[1], "x/y");
    /* Written back: the absolute path and the name. */
    char *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);
    assert_int_equal(workload_write_object(mem, &wl.objects[0]), 0);
    assert_int_equal(workload_write_task(mem, &wl.tasks[0], &wl), 0);
    fclose(mem);
    assert_non_null(strstr(out, "\"path\":\"/"));
    assert_non_null(strstr(out, "{\"object\":\"in2\",\"as\":\"x/y\"}"));
    free(out);
    workload_fini(&wl);

    /* Relative to the working directory for a workload that is a string. */
    snprintf(text, sizeof text, "{\"object\":\"o\",\"path\":\"%s/none\"}\n", sub);
    char want[512];
    snprintf(want, sizeof want, "w.jsonl:1: object 'o': cannot read path '%s/none': "
             "No such file or directory", sub);
    expect_error(text, want);
    snprintf(text, sizeof text, "{\"object\":\"o\",\"path\":\"%s\"}\n", sub);
    snprintf(want, sizeof want, "w.jsonl:1: object 'o': path '%s' is not a regular file", sub);
    expect_error(text, want);
    snprintf(text, sizeof text, "{\"object\":\"o\",\"path\":\"%s\",\"bytes\":4}\n", file);
    snprintf(want, sizeof want, "w.jsonl:1: object 'o': bytes 4, but its file '%s' has 5", file);
    expect_error(text, want);
    expect_error("{\"object\":\"o\",\"path\":\"\"}\n",
                 "w.jsonl:1: object 'o': path must be a file name (a non-empty string)");
    expect_error("{\"object\":\"o\"}\n", "w.jsonl:1: object 'o': missing bytes (or a path to a file)");
    unlink(file);
    unlink(wlp);
    rmdir(sub);
}

/* Input names: a command's inputs must be names that stay in its directory and differ;
 * "as" only on a command, only with its two keys. */
static void test_input_names(void **state)
{
    (void)state;
    static const char *const ok[] = {"a", "a.b", "d/e/f", "..x", "x..", "outputs", "input"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_true(task_stage_name_ok(ok[i]));
    static const char *const bad[] = {"", "/a", "a/", "a//b", ".", "..", "a/../b", "./a",
                                      "output", "inputs", "inputs/0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(task_stage_name_ok(bad[i]));
    const char *objs = "{\"object\":\"a\",\"bytes\":1}\n{\"object\":\"output\",\"bytes\":1}\n";
    char text[512];
    snprintf(text, sizeof text, "%s{\"id\":\"t\",\"kind\":\"command\",\"cmd\":\"x\","
             "\"inputs\":[\"output\"]}\n", objs);
    expect_error(text, "w.jsonl:3: task 't': input 'output' cannot be a file name in its "
                 "directory (a relative path without '..' or '.', not 'output' or 'inputs': give "
                 "it one with {\"object\": id, \"as\": name})");
    snprintf(text, sizeof text, "%s{\"id\":\"t\",\"kind\":\"command\",\"cmd\":\"x\","
             "\"inputs\":[\"a\",{\"object\":\"output\",\"as\":\"a\"}]}\n", objs);
    expect_error(text, "w.jsonl:3: task 't': two inputs are named 'a' in its directory");
    snprintf(text, sizeof text, "%s{\"id\":\"t\",\"kind\":\"command\",\"cmd\":\"x\","
             "\"inputs\":[{\"object\":\"a\",\"as\":\"../up\"}]}\n", objs);
    expect_error(text, "w.jsonl:3: task 't': input name '../up' cannot be a file name in its "
                 "directory (a relative path without '..' or '.', not 'output' or 'inputs')");
    snprintf(text, sizeof text, "%s{\"id\":\"t\",\"inputs\":[{\"object\":\"a\",\"as\":\"b\"}]}\n",
             objs);
    expect_error(text, "w.jsonl:3: task 't': inputs[0]: as names a command's file, and this "
                 "task runs no command");
    snprintf(text, sizeof text, "%s{\"id\":\"t\",\"kind\":\"command\",\"cmd\":\"x\","
             "\"inputs\":[{\"as\":\"b\"}]}\n", objs);
    expect_error(text, "w.jsonl:3: task 't': inputs[0] must name its object (\"object\": id)");
    snprintf(text, sizeof text, "%s{\"id\":\"t\",\"kind\":\"command\",\"cmd\":\"x\","
             "\"inputs\":[{\"object\":\"a\",\"mode\":1}]}\n", objs);
    expect_error(text, "w.jsonl:3: unknown key 'mode' in an input (object, as)");
    /* A non-command task may read an object whose id is no file name. */
    struct workload wl;
    char *cause = NULL;
    snprintf(text, sizeof text, "%s{\"id\":\"t\",\"inputs\":[\"output\"]}\n", objs);
    assert_int_equal(parse(&wl, text, &cause), 0);
    workload_fini(&wl);
}

/*
 * Declared outputs: each a new object made by its task, with bytes 0 until it runs; a
 * task that reads one depends on its maker, listed as a parent or not (once); a task
 * written back declares them again, and the text reads back the same.
 */
static void test_outputs(void **state)
{
    (void)state;
    const char *text =
        "{\"object\":\"raw\",\"bytes\":5}\n"
        "{\"id\":\"b\",\"kind\":\"command\",\"cmd\":\"wc -l t > n\","
        "\"inputs\":[{\"object\":\"tbl\",\"as\":\"t\"}],\"outputs\":[{\"object\":\"n\","
        "\"file\":\"n\"}]}\n"
        "{\"id\":\"a\",\"kind\":\"command\",\"cmd\":\"sort raw > r/t\",\"inputs\":[\"raw\"],"
        "\"outputs\":[{\"object\":\"tbl\",\"file\":\"r/t\"},{\"object\":\"log\",\"file\":"
        "\"l\"}]}\n"
        "{\"id\":\"c\",\"kind\":\"command\",\"cmd\":\"cat n log\",\"parents\":[\"a\"],"
        "\"inputs\":[\"n\",\"log\"]}\n";
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, text, &cause), 0);
    assert_int_equal(wl.count, 3);
    assert_int_equal(wl.object_count, 4);
    int64_t tbl = workload_find_object(&wl, "tbl"), log = workload_find_object(&wl, "log");
    assert_true(tbl >= 0 && log >= 0);
    assert_int_equal(wl.objects[tbl].producer, 2); /* task a, index 1 */
    assert_string_equal(wl.objects[tbl].file, "r/t");
    assert_int_equal(wl.objects[tbl].bytes, 0);
    assert_int_equal(wl.objects[0].producer, 0);
    assert_null(wl.objects[0].file);
    /* b reads a's output: a is its parent, listed nowhere. */
    assert_int_equal(wl.tasks[0].num_parents, 1);
    assert_int_equal(wl.tasks[0].parents[0], 1);
    /* c lists a and reads two outputs, of a and of b: two parents, a once. */
    assert_int_equal(wl.tasks[2].num_parents, 2);
    assert_int_equal(wl.tasks[1].num_children, 2);
    assert_int_equal(wl.tasks[1].num_outputs, 2);
    /* a before b before c. */
    assert_int_equal(wl.topo[0], 1);
    assert_true(written_has(&wl, 1, "\"outputs\":[{\"object\":\"tbl\",\"file\":\"r/t\"},"
                                    "{\"object\":\"log\",\"file\":\"l\"}]"));
    /* Written back, read back: the same outputs and edges. */
    char *back = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&back, &len);
    assert_int_equal(workload_write_object(out, &wl.objects[0]), 0);
    assert_int_equal(workload_write_object(out, &wl.objects[tbl]), -EINVAL);
    for (uint32_t i = 0; i < wl.count; i++)
        assert_int_equal(workload_write_task(out, &wl.tasks[i], &wl), 0);
    fclose(out);
    struct workload again;
    assert_int_equal(workload_parse(&again, back, len, "back", &cause), 0);
    assert_int_equal(again.object_count, 4);
    assert_int_equal(again.tasks[0].num_parents, 1);
    assert_int_equal(again.tasks[2].num_parents, 2);
    assert_string_equal(again.objects[workload_find_object(&again, "log")].file, "l");
    workload_fini(&again);
    free(back);
    workload_fini(&wl);

    const char *cmd = "{\"id\":\"t\",\"kind\":\"command\",\"cmd\":\"x\",";
    char line[512];
    snprintf(line, sizeof line, "{\"id\":\"t\",\"outputs\":[{\"object\":\"o\",\"file\":\"f\"}]}\n");
    expect_error(line, "w.jsonl:1: task 't': outputs are files a command writes, and this "
                       "task runs no command");
    snprintf(line, sizeof line, "%s\"outputs\":[]}\n", cmd);
    expect_error(line, "w.jsonl:1: task 't': outputs must be a non-empty array of "
                       "{\"object\": id, \"file\": name}");
    snprintf(line, sizeof line, "%s\"outputs\":[\"o\"]}\n", cmd);
    expect_error(line, "w.jsonl:1: task 't': outputs[0] must be {\"object\": id, \"file\": "
                       "name}");
    snprintf(line, sizeof line, "%s\"outputs\":[{\"object\":\"o\"}]}\n", cmd);
    expect_error(line, "w.jsonl:1: task 't': outputs[0] must name the file the command "
                       "writes (\"file\": name)");
    snprintf(line, sizeof line, "%s\"outputs\":[{\"object\":\"o\",\"file\":\"f\",\"x\":1}]}\n",
             cmd);
    expect_error(line, "w.jsonl:1: unknown key 'x' in an output (object, file)");
    snprintf(line, sizeof line, "%s\"outputs\":[{\"object\":\"o\",\"file\":\"stderr\"}]}\n",
             cmd);
    expect_error(line, "w.jsonl:1: task 't': output file 'stderr' cannot be a file name in its "
                       "directory (a relative path without '..' or '.', not 'output', 'stderr' "
                       "or 'inputs'; to keep standard output, redirect it: cmd > file)");
    snprintf(line, sizeof line, "%s\"outputs\":[{\"object\":\"o\",\"file\":\"f\"},"
             "{\"object\":\"p\",\"file\":\"f\"}]}\n", cmd);
    expect_error(line, "w.jsonl:1: task 't': two outputs are the file 'f'");
    snprintf(line, sizeof line, "%s\"outputs\":[{\"object\":\"t\",\"file\":\"f\"}]}\n", cmd);
    expect_error(line, "w.jsonl:1: duplicate id 't' (first on line 1, a task)");
    snprintf(line, sizeof line, "{\"object\":\"o\",\"bytes\":1}\n%s\"outputs\":[{\"object\":"
             "\"o\",\"file\":\"f\"}]}\n", cmd);
    expect_error(line, "w.jsonl:2: duplicate object 'o' (first on line 1)");
    snprintf(line, sizeof line, "%s\"inputs\":[\"o\"],\"outputs\":[{\"object\":\"o\",\"file\":"
             "\"f\"}]}\n", cmd);
    expect_error(line, "w.jsonl:1: task 't': input 'o' is its own output");
    /* Two tasks that read each other's outputs are a cycle. */
    snprintf(line, sizeof line, "%s\"inputs\":[\"q\"],\"outputs\":[{\"object\":\"o\",\"file\":"
             "\"f\"}]}\n{\"id\":\"u\",\"kind\":\"command\",\"cmd\":\"x\",\"inputs\":[\"o\"],"
             "\"outputs\":[{\"object\":\"q\",\"file\":\"f\"}]}\n", cmd);
    expect_error(line, "w.jsonl:1: task 't' is on a cycle (t -> u -> t)");
}

static int make_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_workload_objects");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_error_objects),
        cmocka_unit_test(test_error_object_ids),
        cmocka_unit_test(test_error_inputs),
        cmocka_unit_test(test_check_nodes),
        cmocka_unit_test(test_many_objects),
        cmocka_unit_test(test_object_path),
        cmocka_unit_test(test_input_names),
        cmocka_unit_test(test_outputs),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
