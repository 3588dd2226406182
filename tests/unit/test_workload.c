/*
 * test_workload — the workload reader and writer (core/model/workload.c): defaults,
 * every refusal with its exact "FILE:LINE: reason", parents after children, the
 * topological order, very long chains and cycles (the code must not recurse), and the
 * writer's round trip.
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

/* Parses `text`, expects a refusal and exactly this cause. */
static void expect_error(const char *text, const char *want)
{
    struct workload wl;
    char *cause = NULL;
    int rc = parse(&wl, text, &cause);
    if (rc == 0 || !cause || strcmp(cause, want) != 0)
        print_error("input:\n%s\nwant: %s\ngot:  %s (rc %d)\n", text, want,
                    cause ? cause : "(none)", rc);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(cause);
    assert_string_equal(cause, want);
    /* A refused parse leaves nothing to free. */
    assert_null(wl.tasks);
    assert_int_equal(wl.count, 0);
    assert_null(wl.topo);
    free(cause);
}

/* Same, checking only the start of the cause (jansson's own wording follows). */
static void expect_error_prefix(const char *text, const char *prefix)
{
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, text, &cause), -EINVAL);
    assert_non_null(cause);
    if (strncmp(cause, prefix, strlen(prefix)) != 0)
        print_error("want prefix: %s\ngot: %s\n", prefix, cause);
    assert_true(strncmp(cause, prefix, strlen(prefix)) == 0);
    free(cause);
}

static void test_defaults(void **state)
{
    (void)state;
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, "{\"id\":\"a\"}\n", &cause), 0);
    assert_null(cause);
    assert_int_equal(wl.count, 1);
    assert_string_equal(wl.name, "w.jsonl");
    const struct workload_task *t = &wl.tasks[0];
    assert_string_equal(t->id, "a");
    assert_int_equal(t->kind, TASK_NOOP);
    assert_true(t->stealable);
    assert_true(t->duration_s == 0.0);
    assert_null(t->cmd);
    assert_int_equal(t->output_bytes, 0);
    assert_int_equal(t->num_parents, 0);
    assert_null(t->parents);
    assert_int_equal(t->num_children, 0);
    assert_int_equal(t->line, 1);
    assert_int_equal(wl.topo[0], 0);
    workload_fini(&wl);
    assert_null(wl.tasks);
    workload_fini(&wl); /* twice is harmless */

    assert_int_equal(workload_parse(&wl, "{\"id\":\"a\"}", 10, NULL, NULL), 0);
    assert_string_equal(wl.name, "<string>");
    workload_fini(&wl);
}

static void test_every_field(void **state)
{
    (void)state;
    const char *text =
        "# a comment, then a blank line\n"
        "\n"
        "  {\"id\":\"s\",\"kind\":\"sleep\",\"duration_s\":0.25,\"output_bytes\":1048576,"
        "\"stealable\":false}\r\n"
        "{\"kind\":\"command\",\"cmd\":\"echo hi\",\"id\":\"c\",\"parents\":[\"s\"]}\n"
        "   # indented comment\n"
        "{\"id\":\"n\",\"kind\":\"noop\",\"parents\":[],\"stealable\":true}";
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, text, &cause), 0);
    assert_int_equal(wl.count, 3);
    const struct workload_task *s = &wl.tasks[0], *c = &wl.tasks[1], *n = &wl.tasks[2];
    assert_int_equal(s->kind, TASK_SLEEP);
    assert_true(s->duration_s == 0.25);
    assert_int_equal(s->output_bytes, 1048576);
    assert_false(s->stealable);
    assert_int_equal(s->line, 3);
    assert_int_equal(c->kind, TASK_COMMAND);
    assert_string_equal(c->cmd, "echo hi");
    assert_int_equal(c->line, 4);
    assert_int_equal(c->num_parents, 1);
    assert_int_equal(c->parents[0], 0);
    assert_int_equal(s->num_children, 1);
    assert_int_equal(s->children[0], 1);
    assert_int_equal(n->line, 6);
    assert_int_equal(n->num_parents, 0);
    assert_true(n->stealable);
    assert_true(workload_total_work(&wl) == 0.25);
    assert_int_equal(workload_find(&wl, "c"), 1);
    assert_int_equal(workload_find(&wl, "n"), 2);
    assert_int_equal(workload_find(&wl, "zz"), -1);
    workload_fini(&wl);
}

static void test_error_malformed(void **state)
{
    (void)state;
    expect_error_prefix("{\"id\":\"a\"}\n{\"id\":\"b\",}\n", "w.jsonl:2: malformed JSON: ");
    expect_error_prefix("{\"id\":\"a\"} {\"id\":\"b\"}\n", "w.jsonl:1: malformed JSON: ");
    expect_error_prefix("\n\n{\"id\":\"a\",\"id\":\"b\"}\n",
                        "w.jsonl:3: malformed JSON: duplicate object key");
    expect_error_prefix("{\"id\":\"a\\u0000b\"}\n", "w.jsonl:1: malformed JSON: ");
    expect_error("{\"id\":\"a\"}\n[1,2]\n", "w.jsonl:2: expected a JSON object");
}

static void test_error_duplicate_id(void **state)
{
    (void)state;
    expect_error("{\"id\":\"x\"}\n"
                 "{\"id\":\"y\"}\n"
                 "{\"id\":\"a\"}\n"
                 "{\"id\":\"b\"}\n"
                 "\n"
                 "# comment\n"
                 "{\"id\":\"a\",\"kind\":\"noop\"}\n",
                 "w.jsonl:7: duplicate id 'a' (first on line 3)");
}

static void test_error_unknown_key(void **state)
{
    (void)state;
    expect_error("{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n"
                 "{\"id\":\"d\",\"kind\":\"sleep\",\"durration\":1}\n",
                 "w.jsonl:4: unknown key 'durration'");
    expect_error("{\"parent\":[\"x\"],\"id\":\"a\"}\n", "w.jsonl:1: unknown key 'parent'");
}

static void test_error_unknown_parent(void **state)
{
    (void)state;
    expect_error("{\"id\":\"a\"}\n{\"id\":\"c\",\"parents\":[\"a\"]}\n\n\n"
                 "{\"id\":\"b\",\"parents\":[\"a\",\"zz\"]}\n{\"id\":\"d\"}\n",
                 "w.jsonl:5: task 'b': unknown parent 'zz'");
}

static void test_error_values(void **state)
{
    (void)state;
    expect_error("\n\n\n\n\n\n\n\n{\"id\":\"c\",\"kind\":\"sleep\",\"duration_s\":-1}\n",
                 "w.jsonl:9: task 'c': negative duration_s -1");
    expect_error("{\"id\":\"c\",\"kind\":\"sleep\",\"duration_s\":-0.5}\n",
                 "w.jsonl:1: task 'c': negative duration_s -0.5");
    expect_error("{\"id\":\"c\",\"output_bytes\":-5}\n",
                 "w.jsonl:1: task 'c': negative output_bytes -5");
    expect_error("{\"id\":\"c\",\"kind\":\"slep\"}\n",
                 "w.jsonl:1: task 'c': unknown kind 'slep' (noop, sleep or command)");
    expect_error("{\"id\":\"\"}\n", "w.jsonl:1: id must not be empty");
    expect_error("{\"id\":\"c\",\"kind\":\"command\",\"cmd\":\"\"}\n",
                 "w.jsonl:1: task 'c': cmd must not be empty");
}

static void test_error_types(void **state)
{
    (void)state;
    expect_error("{\"id\":7}\n", "w.jsonl:1: id must be a string");
    expect_error("{\"kind\":\"noop\"}\n", "w.jsonl:1: missing id");
    expect_error("{}\n", "w.jsonl:1: missing id");
    expect_error("{\"id\":\"a\",\"kind\":1}\n", "w.jsonl:1: task 'a': kind must be a string");
    expect_error("{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":\"1\"}\n",
                 "w.jsonl:1: task 'a': duration_s must be a number");
    expect_error("{\"id\":\"a\",\"kind\":\"command\",\"cmd\":[\"ls\"]}\n",
                 "w.jsonl:1: task 'a': cmd must be a string");
    expect_error("{\"id\":\"a\",\"output_bytes\":1.5}\n",
                 "w.jsonl:1: task 'a': output_bytes must be an integer");
    expect_error("{\"id\":\"a\",\"output_bytes\":\"1\"}\n",
                 "w.jsonl:1: task 'a': output_bytes must be an integer");
    expect_error("{\"id\":\"a\",\"stealable\":1}\n",
                 "w.jsonl:1: task 'a': stealable must be true or false");
    expect_error("{\"id\":\"a\",\"parents\":\"b\"}\n",
                 "w.jsonl:1: task 'a': parents must be an array of ids");
    expect_error("{\"id\":\"b\"}\n{\"id\":\"a\",\"parents\":[\"b\",2]}\n",
                 "w.jsonl:2: task 'a': parents[1] must be a string");
}

static void test_error_required_and_misplaced(void **state)
{
    (void)state;
    expect_error("{\"id\":\"a\",\"kind\":\"sleep\"}\n",
                 "w.jsonl:1: task 'a': sleep task needs duration_s");
    expect_error("{\"id\":\"a\",\"kind\":\"command\"}\n",
                 "w.jsonl:1: task 'a': command task needs cmd");
    expect_error("{\"id\":\"a\",\"duration_s\":1}\n",
                 "w.jsonl:1: task 'a': duration_s is only for sleep tasks");
    expect_error("{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":1,\"cmd\":\"ls\"}\n",
                 "w.jsonl:1: task 'a': cmd is only for command tasks");
}

static void test_error_parent_lists(void **state)
{
    (void)state;
    expect_error("{\"id\":\"p\"}\n{\"id\":\"a\",\"parents\":[\"p\",\"a\"]}\n",
                 "w.jsonl:2: task 'a' lists itself as a parent");
    expect_error("{\"id\":\"p\"}\n{\"id\":\"q\"}\n{\"id\":\"a\",\"parents\":[\"p\",\"q\",\"p\"]}\n",
                 "w.jsonl:3: task 'a' lists parent 'p' twice");
    /* The same parent in two different tasks is fine. */
    struct workload wl;
    assert_int_equal(parse(&wl, "{\"id\":\"p\"}\n{\"id\":\"a\",\"parents\":[\"p\"]}\n"
                                "{\"id\":\"b\",\"parents\":[\"p\"]}\n",
                           NULL),
                     0);
    assert_int_equal(wl.tasks[0].num_children, 2);
    workload_fini(&wl);
}

static void test_error_empty(void **state)
{
    (void)state;
    expect_error("", "w.jsonl: empty workload (no tasks)");
    expect_error("\n# nothing but comments\n\n", "w.jsonl: empty workload (no tasks)");
}

static void test_error_cycles(void **state)
{
    (void)state;
    expect_error("{\"id\":\"r\"}\n{\"id\":\"s\"}\n{\"id\":\"t\"}\n{\"id\":\"u\"}\n"
                 "{\"id\":\"v\",\"parents\":[\"y\"]}\n"
                 "{\"id\":\"x\",\"parents\":[\"r\",\"y\"]}\n"
                 "{\"id\":\"y\",\"parents\":[\"x\"]}\n",
                 "w.jsonl:6: task 'x' is on a cycle (x -> y -> x)");
    /* Three tasks, entered from a task downstream of the cycle. */
    expect_error("{\"id\":\"down\",\"parents\":[\"c\"]}\n"
                 "{\"id\":\"a\",\"parents\":[\"c\"]}\n"
                 "{\"id\":\"b\",\"parents\":[\"a\"]}\n"
                 "{\"id\":\"c\",\"parents\":[\"b\"]}\n",
                 "w.jsonl:2: task 'a' is on a cycle (a -> b -> c -> a)");
}

/* Cause is optional; errors still come back. */
static void test_error_without_cause(void **state)
{
    (void)state;
    struct workload wl;
    assert_int_equal(parse(&wl, "{\"id\":1}", NULL), -EINVAL);
    assert_int_equal(parse(&wl, "{\"id\":\"a\",\"parents\":[\"b\"]}", NULL), -EINVAL);
}

static void test_parents_after_children(void **state)
{
    (void)state;
    const char *text = "{\"id\":\"sink\",\"parents\":[\"left\",\"right\"]}\n"
                       "{\"id\":\"left\",\"parents\":[\"root\"]}\n"
                       "{\"id\":\"right\",\"parents\":[\"root\"]}\n"
                       "{\"id\":\"root\"}\n";
    struct workload wl;
    assert_int_equal(parse(&wl, text, NULL), 0);
    assert_int_equal(wl.count, 4);
    assert_int_equal(wl.tasks[0].num_parents, 2);
    assert_int_equal(wl.tasks[0].parents[0], 1);
    assert_int_equal(wl.tasks[0].parents[1], 2);
    assert_int_equal(wl.tasks[3].num_children, 2);
    assert_int_equal(wl.tasks[3].children[0], 1);
    assert_int_equal(wl.tasks[3].children[1], 2);
    assert_int_equal(wl.topo[0], 3);
    assert_int_equal(wl.topo[3], 0);
    workload_fini(&wl);
}

/* Every edge goes forward in topo, topo is a permutation, children mirror parents. */
static void check_topo(const struct workload *wl)
{
    uint32_t *pos = xmalloc((size_t)wl->count * sizeof *pos);
    memset(pos, 0xff, (size_t)wl->count * sizeof *pos);
    for (uint32_t k = 0; k < wl->count; k++) {
        assert_true(wl->topo[k] < wl->count);
        assert_int_equal(pos[wl->topo[k]], UINT32_MAX);
        pos[wl->topo[k]] = k;
    }
    uint64_t edges_down = 0, edges_up = 0;
    for (uint32_t i = 0; i < wl->count; i++) {
        const struct workload_task *t = &wl->tasks[i];
        for (uint32_t k = 0; k < t->num_parents; k++)
            assert_true(pos[t->parents[k]] < pos[i]);
        for (uint32_t k = 0; k < t->num_children; k++) {
            const struct workload_task *c = &wl->tasks[t->children[k]];
            bool found = false;
            for (uint32_t j = 0; j < c->num_parents && !found; j++)
                found = c->parents[j] == i;
            assert_true(found);
        }
        edges_up += t->num_parents;
        edges_down += t->num_children;
    }
    assert_int_equal(edges_up, edges_down);
    free(pos);
}

static void test_topo_random_dag(void **state)
{
    (void)state;
    /* A random DAG over ranks, written in a shuffled order so parents often follow
     * their children in the file. */
    enum { N = 3000 };
    uint32_t *order = xmalloc(N * sizeof *order);
    for (uint32_t i = 0; i < N; i++)
        order[i] = i;
    uint64_t rng = 42;
    for (uint32_t i = N - 1; i > 0; i--) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t j = (uint32_t)((rng >> 33) % (i + 1));
        uint32_t tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    for (uint32_t k = 0; k < N; k++) {
        uint32_t rank = order[k];
        fprintf(out, "{\"id\":\"n%u\",\"parents\":[", rank);
        uint32_t first = rank > 64 ? rank - 64 : 0;
        uint32_t picked[4], npicked = 0;
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t want = rank ? (uint32_t)((rng >> 40) % 5) : 0;
        for (uint32_t p = 0; p < want; p++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            uint32_t parent = first + (uint32_t)((rng >> 33) % (rank - first));
            bool seen = false;
            for (uint32_t q = 0; q < npicked; q++)
                seen = seen || picked[q] == parent;
            if (seen)
                continue;
            fprintf(out, "%s\"n%u\"", npicked ? "," : "", parent);
            picked[npicked++] = parent;
        }
        fprintf(out, "]}\n");
    }
    fclose(out);
    struct workload wl;
    char *cause = NULL;
    int rc = workload_parse(&wl, text, len, "dag", &cause);
    if (rc)
        print_error("%s\n", cause);
    assert_int_equal(rc, 0);
    assert_int_equal(wl.count, N);
    check_topo(&wl);
    workload_fini(&wl);
    free(text);
    free(order);
}

static void test_long_pipeline(void **state)
{
    (void)state;
    /* 100k chain written child-first: the worst case for anything recursive. */
    enum { N = 100000 };
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    for (uint32_t i = N; i-- > 0;) {
        if (i)
            fprintf(out, "{\"id\":\"p%u\",\"parents\":[\"p%u\"]}\n", i, i - 1);
        else
            fprintf(out, "{\"id\":\"p0\"}\n");
    }
    fclose(out);
    struct workload wl;
    assert_int_equal(workload_parse(&wl, text, len, "chain", NULL), 0);
    assert_int_equal(wl.count, N);
    for (uint32_t k = 0; k < N; k++)
        assert_int_equal(wl.topo[k], N - 1 - k);
    check_topo(&wl);
    workload_fini(&wl);

    /* Close the chain into one cycle of N tasks: found without recursion, path cut. */
    char *head = strstr(text, "{\"id\":\"p0\"}");
    assert_non_null(head);
    size_t at = (size_t)(head - text);
    char *cyc = xasprintf("%.*s{\"id\":\"p0\",\"parents\":[\"p%u\"]}\n", (int)at, text, N - 1);
    char *cause = NULL;
    assert_int_equal(workload_parse(&wl, cyc, strlen(cyc), "chain", &cause), -EINVAL);
    char *want = xasprintf("chain:1: task 'p%u' is on a cycle (p%u -> p0 -> p1 -> p2 -> p3 -> p4 "
                           "-> p5 -> p6 -> ... -> p%u; %u tasks)",
                           N - 1, N - 1, N - 1, N);
    assert_string_equal(cause, want);
    free(want);
    free(cause);
    free(cyc);
    free(text);
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
}

static void test_load_and_read(void **state)
{
    (void)state;
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(workload_load(&wl, "/nonexistent/w.jsonl", &cause), -ENOENT);
    assert_string_equal(cause, "cannot open '/nonexistent/w.jsonl': No such file or directory");
    free(cause);

    char path[] = "/tmp/test_workload_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "{\"id\":\"a\"}\n{\"id\":\"b\",\"parents\":[\"a\"]}\n{\"id\":\"b\"}\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(workload_load(&wl, path, &cause), -EINVAL);
    char *want = xasprintf("%s:3: duplicate id 'b' (first on line 2)", path);
    assert_string_equal(cause, want);
    free(want);
    free(cause);
    unlink(path);

    FILE *in = fmemopen((void *)text, strlen(text) - 12, "r");
    assert_int_equal(workload_read(&wl, in, "mem", &cause), 0);
    fclose(in);
    assert_int_equal(wl.count, 2);
    assert_string_equal(wl.name, "mem");
    assert_int_equal(wl.tasks[1].line, 2);
    workload_fini(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_field),
        cmocka_unit_test(test_error_malformed),
        cmocka_unit_test(test_error_duplicate_id),
        cmocka_unit_test(test_error_unknown_key),
        cmocka_unit_test(test_error_unknown_parent),
        cmocka_unit_test(test_error_values),
        cmocka_unit_test(test_error_types),
        cmocka_unit_test(test_error_required_and_misplaced),
        cmocka_unit_test(test_error_parent_lists),
        cmocka_unit_test(test_error_empty),
        cmocka_unit_test(test_error_cycles),
        cmocka_unit_test(test_error_without_cause),
        cmocka_unit_test(test_parents_after_children),
        cmocka_unit_test(test_topo_random_dag),
        cmocka_unit_test(test_long_pipeline),
        cmocka_unit_test(test_write_round_trip),
        cmocka_unit_test(test_write_refuses),
        cmocka_unit_test(test_load_and_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
