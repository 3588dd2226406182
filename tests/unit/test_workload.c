/*
 * test_workload — the workload reader and writer (core/model/workload.c): defaults,
 * every refusal with its exact "FILE:LINE: reason", parents after children, the
 * topological order, very long chains and cycles (the code must not recurse), data
 * objects and task inputs (their refusals, the node check and spread placement), time
 * limits and retries; the writer's tests are test_workload_write.c.
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
        print_error("input:\n%.300s\nwant: %.300s\ngot:  %.300s (rc %d)\n", text, want,
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
        print_error("want prefix: %s\ngot: %.300s\n", prefix, cause);
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

/* Declared data: objects and outputs, a workload without either 0, and a sum past what
 * 64 bits hold stays at the ceiling rather than wrap to a small number. */
static void test_data_bytes(void **state)
{
    (void)state;
    const char *text = "{\"object\":\"a\",\"bytes\":1000,\"node\":0}\n"
                       "{\"object\":\"b\",\"bytes\":24}\n"
                       "{\"id\":\"t\",\"kind\":\"sleep\",\"duration_s\":0.1,\"inputs\":[\"a\",\"b\"],"
                       "\"output_bytes\":5}\n"
                       "{\"id\":\"u\",\"kind\":\"noop\"}\n";
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, text, &cause), 0);
    assert_int_equal(workload_data_bytes(&wl), 1029);
    workload_fini(&wl);
    assert_int_equal(parse(&wl, "{\"id\":\"u\",\"kind\":\"noop\"}\n", &cause), 0);
    assert_int_equal(workload_data_bytes(&wl), 0);
    for (uint32_t i = 0; i < wl.count; i++)
        wl.tasks[i].output_bytes = UINT64_MAX / 2 + 7;
    assert_true(workload_data_bytes(&wl) == UINT64_MAX / 2);
    workload_fini(&wl);
    assert_int_equal(workload_data_bytes(NULL), 0);
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

/* ------------------------------------------------------------------------------------ */
/* Limits: absurd numbers, over-long strings and lines are refused at parse time, naming
 * the limit, and no message quotes an over-long string whole. */

/* A JSON line {"id":ID,...rest} with ID made of `n` copies of `c`. */
static char *line_with_id(size_t n, char c, const char *rest)
{
    char *id = xmalloc(n + 1);
    memset(id, c, n);
    id[n] = '\0';
    char *line = xasprintf("{\"id\":\"%s\"%s}\n", id, rest);
    free(id);
    return line;
}

static void test_error_absurd_numbers(void **state)
{
    (void)state;
    expect_error("{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":1e300}\n",
                 "w.jsonl:1: task 'a': duration_s 1e+300 is beyond the limit of 1000000 s");
    expect_error("{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":1000000.5}\n",
                 "w.jsonl:1: task 'a': duration_s 1e+06 is beyond the limit of 1000000 s");
    expect_error("{\"id\":\"a\",\"output_bytes\":1125899906842625}\n",
                 "w.jsonl:1: task 'a': output_bytes 1125899906842625 is beyond the limit of "
                 "1125899906842624 (1 PiB)");
    expect_error("{\"id\":\"a\",\"output_bytes\":9223372036854775807}\n",
                 "w.jsonl:1: task 'a': output_bytes 9223372036854775807 is beyond the limit of "
                 "1125899906842624 (1 PiB)");
    expect_error("{\"object\":\"o\",\"bytes\":1125899906842625}\n{\"id\":\"a\"}\n",
                 "w.jsonl:1: object 'o': bytes 1125899906842625 is beyond the limit of "
                 "1125899906842624 (1 PiB)");
    /* 8,192 inputs of 1 PiB add up to 2^63 bytes, one more than a signed count holds. */
    size_t cap = 8192 * 64, len = 0;
    char *text = xmalloc(cap);
    for (int i = 0; i < 8192; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "{\"object\":\"o%d\",\"bytes\":1125899906842624}\n", i);
    len += (size_t)snprintf(text + len, cap - len, "{\"id\":\"a\",\"inputs\":[");
    for (int i = 0; i < 8192; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s\"o%d\"", i ? "," : "", i);
    snprintf(text + len, cap - len, "]}\n");
    expect_error(text, "w.jsonl:8193: task 'a': its inputs add up to more than "
                       "9223372036854775807 bytes");
    free(text);

    /* The limits themselves are fine. */
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, "{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":1e6,"
                                "\"output_bytes\":1125899906842624}\n"
                                "{\"object\":\"o\",\"bytes\":1125899906842624}\n",
                           &cause),
                     0);
    assert_true(wl.tasks[0].duration_s == 1e6);
    assert_int_equal(wl.tasks[0].output_bytes, 1125899906842624ull);
    assert_int_equal(wl.objects[0].bytes, 1125899906842624ull);
    workload_fini(&wl);
}

static void test_error_long_strings(void **state)
{
    (void)state;
    struct workload wl;
    char *cause = NULL;

    /* An id of 1024 bytes is fine, 1025 is refused; the message shows a cut id. */
    char *ok = line_with_id(1024, 'i', "");
    assert_int_equal(parse(&wl, ok, &cause), 0);
    assert_int_equal(strlen(wl.tasks[0].id), 1024);
    workload_fini(&wl);
    free(ok);
    char *bad = line_with_id(1025, 'i', "");
    char *want = xasprintf("w.jsonl:1: id is 1025 bytes, beyond the limit of 1024: "
                           "'%.80s… (1025 bytes)'", bad + 7);
    expect_error(bad, want);
    free(want);
    free(bad);

    /* An object id likewise; a parent or input name that long cannot name anything. */
    bad = xasprintf("{\"object\":\"%01100d\",\"bytes\":1}\n", 0);
    want = xasprintf("w.jsonl:1: object id is 1100 bytes, beyond the limit of 1024: "
                     "'%.80s… (1100 bytes)'", bad + 11);
    expect_error(bad, want);
    free(want);
    free(bad);
    bad = xasprintf("{\"id\":\"p\"}\n{\"id\":\"a\",\"parents\":[\"p\",\"%02000d\"]}\n", 0);
    expect_error(bad, "w.jsonl:2: task 'a': parents[1] is 2000 bytes, beyond the limit of 1024 "
                      "for an id");
    free(bad);
    bad = xasprintf("{\"id\":\"a\",\"inputs\":[\"%02000d\"]}\n", 0);
    expect_error(bad, "w.jsonl:1: task 'a': inputs[0] is 2000 bytes, beyond the limit of 1024 "
                      "for an id");
    free(bad);

    /* A command of 65536 bytes is fine, one more is refused at parse time, before any
     * daemon sees it (the protocol takes 1 MiB, exec 128 KiB as one argument). */
    char *cmd = xmalloc(65538);
    memset(cmd, 'x', 65537);
    cmd[65537] = '\0';
    memcpy(cmd, "echo ", 5);
    char *line = xasprintf("{\"id\":\"a\",\"kind\":\"command\",\"cmd\":\"%s\"}\n", cmd + 1);
    assert_int_equal(parse(&wl, line, &cause), 0);
    assert_int_equal(strlen(wl.tasks[0].cmd), 65536);
    workload_fini(&wl);
    free(line);
    line = xasprintf("{\"id\":\"a\",\"kind\":\"command\",\"cmd\":\"%s\"}\n", cmd);
    expect_error(line, "w.jsonl:1: task 'a': cmd is 65537 bytes, beyond the limit of 65536 "
                       "(put a longer command in a script)");
    free(line);
    free(cmd);

    /* Keys and kinds are quoted cut, however long. */
    bad = xasprintf("{\"id\":\"a\",\"%0300d\":1}\n", 0);
    want = xasprintf("w.jsonl:1: unknown key '%080d… (300 bytes)'", 0);
    expect_error(bad, want);
    free(want);
    free(bad);
    bad = xasprintf("{\"id\":\"a\",\"kind\":\"%0300d\"}\n", 0);
    want = xasprintf("w.jsonl:1: task 'a': unknown kind '%080d… (300 bytes)' (noop, sleep or "
                     "command)", 0);
    expect_error(bad, want);
    free(want);
    free(bad);
}

static void test_error_degree(void **state)
{
    (void)state;
    /* A root with 524,289 children: its metadata record would not fit in one message
     * (the client used to abort on it, after the parse).  524,288 are fine. */
    for (int extra = 0; extra <= 1; extra++) {
        uint32_t n = 524288 + (uint32_t)extra;
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        fputs("{\"id\":\"r\"}\n", out);
        for (uint32_t i = 0; i < n; i++)
            fprintf(out, "{\"id\":\"c%u\",\"parents\":[\"r\"]}\n", i);
        fclose(out);
        struct workload wl;
        char *cause = NULL;
        int rc = workload_parse(&wl, text, len, "w.jsonl", &cause);
        if (extra) {
            assert_int_equal(rc, -EINVAL);
            assert_string_equal(cause, "w.jsonl:1: task 'r' has 0 parents, 0 inputs and 524289 "
                                       "children, beyond the limit of 524288 in all (its "
                                       "metadata travels in one message)");
            free(cause);
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(wl.tasks[0].num_children, n);
            workload_fini(&wl);
        }
        free(text);
    }
    /* Parents and inputs count with the children. */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    fputs("{\"object\":\"o\",\"bytes\":1}\n", out);
    for (uint32_t i = 0; i < 524287; i++)
        fprintf(out, "{\"id\":\"p%u\"}\n", i);
    fputs("{\"id\":\"x\",\"inputs\":[\"o\"],\"parents\":[", out);
    for (uint32_t i = 0; i < 524287; i++)
        fprintf(out, "%s\"p%u\"", i ? "," : "", i);
    fputs("]}\n{\"id\":\"y\",\"parents\":[\"x\"]}\n", out);
    fclose(out);
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(workload_parse(&wl, text, len, "w.jsonl", &cause), -EINVAL);
    assert_string_equal(cause, "w.jsonl:524289: task 'x' has 524287 parents, 1 inputs and 1 "
                               "children, beyond the limit of 524288 in all (its metadata "
                               "travels in one message)");
    free(cause);
    free(text);
}

/* A stream of `limit` bytes, all `fill` and no newline, after an optional prefix; counts
 * what the reader took, so a test sees whether it stopped early. */
struct endless {
    const char *prefix;
    size_t prefix_len;
    char fill;
    size_t limit;
    size_t given;
};

static ssize_t endless_read(void *cookie, char *buf, size_t size)
{
    struct endless *e = cookie;
    size_t n = 0;
    while (n < size && e->given < e->limit) {
        buf[n++] = e->given < e->prefix_len ? e->prefix[e->given] : e->fill;
        e->given++;
    }
    return (ssize_t)n;
}

static void test_error_long_line(void **state)
{
    (void)state;
    /* 80 MiB on one line, after two good lines: refused as soon as the line passes
     * 64 MiB, having read little more than that (so /dev/zero is refused too). */
    struct endless e = {.prefix = "{\"id\":\"a\"}\n\n", .prefix_len = 12, .fill = '0',
                        .limit = (size_t)80 << 20};
    FILE *in = fopencookie(&e, "r", (cookie_io_functions_t){.read = endless_read});
    assert_non_null(in);
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(workload_read(&wl, in, "big.jsonl", &cause), -EINVAL);
    fclose(in);
    assert_non_null(cause);
    assert_string_equal(cause, "big.jsonl:3: line longer than 67108864 bytes (the limit)");
    free(cause);
    assert_true(e.given < ((size_t)64 << 20) + ((size_t)1 << 20));

    /* NUL bytes, as /dev/zero gives. */
    e = (struct endless){.fill = '\0', .limit = (size_t)70 << 20};
    in = fopencookie(&e, "r", (cookie_io_functions_t){.read = endless_read});
    assert_int_equal(workload_read(&wl, in, "/dev/zero", &cause), -EINVAL);
    fclose(in);
    assert_string_equal(cause, "/dev/zero:1: line longer than 67108864 bytes (the limit)");
    free(cause);
    assert_true(e.given < ((size_t)64 << 20) + ((size_t)1 << 20));

    /* The in-memory parser applies the same limit. */
    size_t len = ((size_t)64 << 20) + 2;
    char *text = xmalloc(len + 1);
    memset(text, ' ', len);
    text[len - 1] = '\n';
    text[len] = '\0';
    expect_error_prefix(text, "w.jsonl:1: line longer than 67108864 bytes");
    free(text);
}

/* ------------------------------------------------------------------------------------ */
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

/* timeout_s: any kind may carry one; it must be a number in (0, 30 days]; the writer
 * keeps it; --task-timeout fills it where the file has none. */
static void test_time_limit(void **state)
{
    (void)state;
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, "{\"id\":\"a\",\"kind\":\"command\",\"cmd\":\"x\",\"timeout_s\":2.5}\n"
                                "{\"id\":\"b\",\"kind\":\"sleep\",\"duration_s\":9,\"timeout_s\":1}\n"
                                "{\"id\":\"c\"}\n",
                           &cause),
                     0);
    assert_true(wl.tasks[0].timeout_s == 2.5);
    assert_true(wl.tasks[1].timeout_s == 1);
    assert_true(wl.tasks[2].timeout_s == 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(workload_write_task(out, &wl.tasks[0], &wl), 0);
    fclose(out);
    assert_non_null(strstr(text, "\"timeout_s\":2.5"));
    free(text);
    workload_default_timeout(&wl, 7);
    assert_true(wl.tasks[0].timeout_s == 2.5);
    assert_true(wl.tasks[2].timeout_s == 7);
    workload_fini(&wl);

    expect_error("{\"id\":\"a\"}\n{\"id\":\"b\",\"timeout_s\":0}\n",
                 "w.jsonl:2: task 'b': timeout_s 0 is out of range (more than 0, at most "
                 "2592000 s: 30 days)");
    expect_error("{\"id\":\"b\",\"timeout_s\":-1}\n",
                 "w.jsonl:1: task 'b': timeout_s -1 is out of range (more than 0, at most "
                 "2592000 s: 30 days)");
    expect_error("{\"id\":\"b\",\"timeout_s\":2592001}\n",
                 "w.jsonl:1: task 'b': timeout_s 2592001 is out of range (more than 0, at "
                 "most 2592000 s: 30 days)");
    expect_error("{\"id\":\"b\",\"timeout_s\":\"5\"}\n",
                 "w.jsonl:1: task 'b': timeout_s must be a number of seconds");
    expect_error("{\"id\":\"b\",\"timeout_s\":null}\n",
                 "w.jsonl:1: task 'b': timeout_s must be a number of seconds");
}

/* Whether task i written back (workload_write_task) holds `needle`. */
static bool written_has(const struct workload *wl, uint32_t i, const char *needle)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(workload_write_task(out, &wl->tasks[i], wl), 0);
    fclose(out);
    bool has = strstr(text, needle) != NULL;
    free(text);
    return has;
}

/* `retries`: an integer 0..100 (file:line and the task named otherwise); written back
 * when given (an explicit 0 too, so that --retries on the rewritten file leaves it);
 * --retries fills only the tasks without their own. */
static void test_retries(void **state)
{
    (void)state;
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, "{\"id\":\"a\",\"kind\":\"command\",\"cmd\":\"x\",\"retries\":3}\n"
                                "{\"id\":\"b\",\"retries\":0}\n"
                                "{\"id\":\"c\"}\n",
                           &cause),
                     0);
    assert_int_equal(wl.tasks[0].retries, 3);
    assert_int_equal(wl.tasks[1].retries, 0);
    assert_true(wl.tasks[1].has_retries);
    assert_false(wl.tasks[2].has_retries);
    assert_true(written_has(&wl, 0, "\"retries\":3"));
    assert_true(written_has(&wl, 1, "\"retries\":0"));
    assert_false(written_has(&wl, 2, "retries"));
    workload_default_retries(&wl, 2);
    assert_int_equal(wl.tasks[0].retries, 3);
    assert_int_equal(wl.tasks[1].retries, 0);
    assert_int_equal(wl.tasks[2].retries, 2);
    workload_fini(&wl);

    const char *const bad[] = {"-1", "101", "1.5", "\"2\"", "null", "true"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char line[96];
        snprintf(line, sizeof line, "{\"id\":\"a\"}\n{\"id\":\"r\",\"retries\":%s}\n", bad[i]);
        expect_error(line, "w.jsonl:2: task 'r': retries must be an integer from 0 to 100");
    }
}

/* `cores`: an integer 1..4096, default 1 (file:line and the task named otherwise);
 * written back only when above 1; workload_max_cores names the widest task. */
static void test_cores(void **state)
{
    (void)state;
    struct workload wl;
    char *cause = NULL;
    assert_int_equal(parse(&wl, "{\"id\":\"a\",\"cores\":4}\n"
                                "{\"id\":\"b\",\"cores\":1}\n"
                                "{\"id\":\"c\"}\n"
                                "{\"id\":\"d\",\"cores\":4096}\n",
                           &cause),
                     0);
    assert_int_equal(wl.tasks[0].cores, 4);
    assert_int_equal(wl.tasks[1].cores, 1);
    assert_int_equal(wl.tasks[2].cores, 1);
    uint32_t widest = 0;
    assert_int_equal(workload_max_cores(&wl, &widest), 4096);
    assert_int_equal(widest, 3);
    assert_true(written_has(&wl, 0, "\"cores\":4}"));
    assert_false(written_has(&wl, 1, "cores") || written_has(&wl, 2, "cores"));
    workload_fini(&wl);
    const char *const bad[] = {"0", "-1", "4097", "1.5", "\"2\"", "null"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char line[96];
        snprintf(line, sizeof line, "{\"id\":\"a\"}\n{\"id\":\"w\",\"cores\":%s}\n", bad[i]);
        expect_error(line, "w.jsonl:2: task 'w': cores must be an integer from 1 to 4096");
    }
}

/* `path`: a real file whose size is the object's bytes, relative to the workload file's
 * directory (workload_load), made absolute; a missing, unreadable or non-regular file, or
 * bytes that disagree, are refused at its line. */
static void test_object_path(void **state)
{
    (void)state;
    char dir[] = "/tmp/jd-wl-path-XXXXXX";
    assert_non_null(mkdtemp(dir));
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
    rmdir(dir);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_path),
        cmocka_unit_test(test_input_names),
        cmocka_unit_test(test_cores),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_field),
        cmocka_unit_test(test_data_bytes),
        cmocka_unit_test(test_retries),
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
        cmocka_unit_test(test_load_and_read),
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_error_objects),
        cmocka_unit_test(test_error_object_ids),
        cmocka_unit_test(test_error_inputs),
        cmocka_unit_test(test_check_nodes),
        cmocka_unit_test(test_many_objects),
        cmocka_unit_test(test_error_absurd_numbers),
        cmocka_unit_test(test_error_long_strings),
        cmocka_unit_test(test_error_long_line),
        cmocka_unit_test(test_error_degree),
        cmocka_unit_test(test_time_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
