/*
 * test_workload — the workload reader and writer (core/model/workload.c): defaults,
 * every refusal with its exact "FILE:LINE: reason", parents after children, the
 * topological order, very long chains and cycles (the code must not recurse), time
 * limits, retries and cores; data objects, inputs and their names are
 * test_workload_objects.c's, the writer's tests test_workload_write.c's.
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
#include "tests/unit/workload_fixture.h"


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



int main(void)
{
    const struct CMUnitTest tests[] = {
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
        cmocka_unit_test(test_error_absurd_numbers),
        cmocka_unit_test(test_error_long_strings),
        cmocka_unit_test(test_error_long_line),
        cmocka_unit_test(test_error_degree),
        cmocka_unit_test(test_time_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
