/*
 * test_workload_write — the workload writer (core/model/workload_write.c): tasks and
 * objects written and read back by the parser give the same workload, and what the
 * parser would refuse is refused at the writer with its reason.
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
#include <unistd.h>

#include "core/base/xalloc.h"
#include "core/model/workload.h"

static int parse(struct workload *wl, const char *text, char **cause)
{
    return workload_parse(wl, text, strlen(text), "w.jsonl", cause);
}

static void test_write_round_trip(void **state)
{
    (void)state;
    const char *text =
        "{\"id\":\"we\\\"ird\\\\id\\n\\u00e9\\u0001\"}\n"
        "{\"id\":\"s\",\"kind\":\"sleep\",\"duration_s\":0.1,\"output_bytes\":12345678901234,"
        "\"parents\":[\"we\\\"ird\\\\id\\n\\u00e9\\u0001\"],\"stealable\":false}\n"
        "{\"id\":\"c\",\"kind\":\"command\",\"cmd\":\"printf '%s\\\\n' \\\"x\\\"\\t\","
        "\"parents\":[\"s\",\"z\"]}\n"
        "{\"id\":\"z\",\"kind\":\"sleep\",\"duration_s\":0}\n";
    struct workload a, b;
    char *cause = NULL;
    assert_int_equal(parse(&a, text, &cause), 0);
    char *out_text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&out_text, &len);
    for (uint32_t i = 0; i < a.count; i++)
        assert_int_equal(workload_write_task(out, &a.tasks[i], &a), 0);
    fclose(out);
    /* Keys in the documented order, defaults left out. */
    assert_non_null(strstr(out_text, "{\"id\":\"s\",\"kind\":\"sleep\",\"duration_s\":0.1,"
                                     "\"output_bytes\":12345678901234,\"parents\":["));
    assert_non_null(strstr(out_text, "],\"stealable\":false}\n"));
    assert_non_null(strstr(out_text, "{\"id\":\"z\",\"kind\":\"sleep\",\"duration_s\":0}\n"));
    assert_int_equal(workload_parse(&b, out_text, len, "again", &cause), 0);
    assert_int_equal(a.count, b.count);
    for (uint32_t i = 0; i < a.count; i++) {
        const struct workload_task *x = &a.tasks[i], *y = &b.tasks[i];
        assert_string_equal(x->id, y->id);
        assert_int_equal(x->kind, y->kind);
        assert_true(x->duration_s == y->duration_s);
        assert_int_equal(x->output_bytes, y->output_bytes);
        assert_int_equal(x->stealable, y->stealable);
        assert_int_equal(x->num_parents, y->num_parents);
        for (uint32_t k = 0; k < x->num_parents; k++)
            assert_int_equal(x->parents[k], y->parents[k]);
        if (x->cmd)
            assert_string_equal(x->cmd, y->cmd);
        else
            assert_null(y->cmd);
    }
    assert_true(workload_total_work(&a) == workload_total_work(&b));
    workload_fini(&a);
    workload_fini(&b);
    free(out_text);
}

static void test_write_refuses(void **state)
{
    (void)state;
    struct workload_task t = {.id = (char *)"a", .kind = TASK_COMMAND, .stealable = true};
    assert_int_equal(workload_write_task(stdout, &t, NULL), -EINVAL); /* no cmd */
    uint32_t parent = 0;
    t = (struct workload_task){.id = (char *)"a", .num_parents = 1, .parents = &parent};
    assert_int_equal(workload_write_task(stdout, &t, NULL), -EINVAL); /* no workload */
    assert_int_equal(workload_write_task(NULL, &t, NULL), -EINVAL);
    /* What the reader would refuse for its size is not written either. */
    t = (struct workload_task){.id = (char *)"a", .kind = TASK_SLEEP, .duration_s = 2e6};
    assert_int_equal(workload_write_task(stdout, &t, NULL), -ERANGE);
    t = (struct workload_task){.id = (char *)"a", .output_bytes = 1125899906842625ull};
    assert_int_equal(workload_write_task(stdout, &t, NULL), -ERANGE);
    char *big = xmalloc(65538);
    memset(big, 'x', 65537);
    big[65537] = '\0';
    t = (struct workload_task){.id = (char *)"a", .kind = TASK_COMMAND, .cmd = big};
    assert_int_equal(workload_write_task(stdout, &t, NULL), -ERANGE);
    big[1025] = '\0';
    t = (struct workload_task){.id = big};
    assert_int_equal(workload_write_task(stdout, &t, NULL), -ERANGE);
    free(big);
}

static void test_write_objects_round_trip(void **state)
{
    (void)state;
    const char *text =
        "{\"id\":\"s\",\"kind\":\"sleep\",\"duration_s\":0.158,\"output_bytes\":10000,"
        "\"inputs\":[\"f\\\"1\",\"f0\"],\"stealable\":false}\n"
        "{\"object\":\"f0\",\"bytes\":2000000,\"node\":\"spread\"}\n"
        "{\"object\":\"f\\\"1\",\"bytes\":0,\"node\":5}\n"
        "{\"id\":\"end\",\"parents\":[\"s\"],\"inputs\":[\"f0\"]}\n"
        "{\"object\":\"f2\",\"bytes\":1125899906842624}\n"; /* the limit, 1 PiB */
    struct workload a, b;
    char *cause = NULL;
    assert_int_equal(parse(&a, text, &cause), 0);
    char *out_text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&out_text, &len);
    for (uint32_t i = 0; i < a.object_count; i++)
        assert_int_equal(workload_write_object(out, &a.objects[i]), 0);
    for (uint32_t i = 0; i < a.count; i++)
        assert_int_equal(workload_write_task(out, &a.tasks[i], &a), 0);
    fclose(out);
    /* "node" always written; inputs after parents, before stealable. */
    assert_non_null(
        strstr(out_text, "{\"object\":\"f0\",\"bytes\":2000000,\"node\":\"spread\"}\n"));
    assert_non_null(strstr(out_text, "{\"object\":\"f\\\"1\",\"bytes\":0,\"node\":5}\n"));
    assert_non_null(strstr(out_text, "{\"object\":\"f2\",\"bytes\":1125899906842624,"
                                     "\"node\":\"spread\"}\n"));
    assert_non_null(strstr(out_text, "\"output_bytes\":10000,\"inputs\":[\"f\\\"1\",\"f0\"],"
                                     "\"stealable\":false}\n"));
    assert_non_null(strstr(out_text, "{\"id\":\"end\",\"parents\":[\"s\"],\"inputs\":[\"f0\"]}\n"));
    int rc = workload_parse(&b, out_text, len, "again", &cause);
    if (rc)
        print_error("%s\n%s\n", cause, out_text);
    assert_int_equal(rc, 0);
    assert_int_equal(a.object_count, b.object_count);
    for (uint32_t i = 0; i < a.object_count; i++) {
        assert_string_equal(a.objects[i].id, b.objects[i].id);
        assert_int_equal(a.objects[i].bytes, b.objects[i].bytes);
        assert_int_equal(a.objects[i].node, b.objects[i].node);
    }
    assert_int_equal(a.count, b.count);
    for (uint32_t i = 0; i < a.count; i++) {
        assert_int_equal(a.tasks[i].num_inputs, b.tasks[i].num_inputs);
        for (uint32_t k = 0; k < a.tasks[i].num_inputs; k++)
            assert_int_equal(a.tasks[i].inputs[k], b.tasks[i].inputs[k]);
    }
    workload_fini(&a);
    workload_fini(&b);
    free(out_text);
}

static const char *name_k(void *ctx, uint32_t k)
{
    char *buf = ctx;
    snprintf(buf, 16, "n%u", k);
    return buf;
}

static void test_write_objects_refuses(void **state)
{
    (void)state;
    struct workload_object o = {.id = (char *)"f", .bytes = 1, .node = -2};
    assert_int_equal(workload_write_object(stdout, &o), -EINVAL);
    o = (struct workload_object){.id = (char *)"", .bytes = 1, .node = WORKLOAD_NODE_SPREAD};
    assert_int_equal(workload_write_object(stdout, &o), -EINVAL);
    o = (struct workload_object){.id = (char *)"f", .bytes = (uint64_t)INT64_MAX + 1};
    assert_int_equal(workload_write_object(stdout, &o), -ERANGE);
    o.bytes = 1125899906842625ull; /* beyond 1 PiB: the reader would refuse it */
    assert_int_equal(workload_write_object(stdout, &o), -ERANGE);
    assert_int_equal(workload_write_object(NULL, &o), -EINVAL);
    assert_int_equal(workload_write_object(stdout, NULL), -EINVAL);

    /* Inputs need a workload holding the objects. */
    uint32_t input = 0;
    struct workload_task t = {.id = (char *)"a", .stealable = true, .num_inputs = 1,
                              .inputs = &input};
    assert_int_equal(workload_write_task(stdout, &t, NULL), -EINVAL);
    struct workload_task other = {.id = (char *)"b"};
    struct workload wl = {.tasks = &other, .count = 1};
    assert_int_equal(workload_write_task(stdout, &t, &wl), -EINVAL);
    assert_int_equal(workload_write_task_named(stdout, &t, name_k, NULL, NULL), -EINVAL);

    /* The named writer: ids from the callbacks, in order. */
    char buf[16];
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    t.num_inputs = 2;
    t.num_parents = 3;
    t.inputs = NULL;
    assert_int_equal(workload_write_task_named(out, &t, name_k, name_k, buf), 0);
    fclose(out);
    assert_string_equal(text, "{\"id\":\"a\",\"parents\":[\"n0\",\"n1\",\"n2\"],"
                              "\"inputs\":[\"n0\",\"n1\"]}\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_round_trip),
        cmocka_unit_test(test_write_refuses),
        cmocka_unit_test(test_write_objects_round_trip),
        cmocka_unit_test(test_write_objects_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
