/*
 * The client's follow of a job (core/client/follow.c) through a node's death: the
 * deaths the live nodes report merge into one line per dead node (the declarer's own
 * word first, oldest death first), the summary prints them with the resubmission
 * counters, and an end both listed at attach and reported counts once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/client/follow.h"

static void test_deaths_merge(void **state)
{
    (void)state;
    /* Node 2 died first: node 1 declared it (at 100) and told node 0 (learnt at 90 on
     * its clock, earlier, but second hand).  Node 4 died later, declared by node 3,
     * which did not answer: the earliest second-hand word stands. */
    struct proto_dead d0[2] = {{.node = 2, .by = 1, .at_ns = 90}, {.node = 4, .by = 3, .at_ns = 500}};
    struct proto_dead d1[2] = {{.node = 4, .by = 3, .at_ns = 450}, {.node = 2, .by = 1, .at_ns = 100}};
    struct proto_dead d3[1] = {{.node = 4, .by = 3, .at_ns = 400}};
    struct proto_stats st[5] = {
        {.node = 0, .epoch = 2, .ndead = 2, .dead = d0},
        {.node = 1, .epoch = 2, .ndead = 2, .dead = d1},
        {0}, {.node = 3, .epoch = 1, .ndead = 1, .dead = d3}, {0}};
    bool got[5] = {true, true, false, false, false};
    struct proto_dead out[5];
    assert_int_equal(follow_deaths(st, got, 5, out), 2);
    assert_int_equal(out[0].node, 2);
    assert_int_equal(out[0].by, 1);
    assert_true(out[0].at_ns == 100);
    assert_int_equal(out[1].node, 4);
    assert_true(out[1].at_ns == 450);
    /* With node 3 answering, its own word wins over earlier second-hand ones. */
    got[3] = true;
    assert_int_equal(follow_deaths(st, got, 5, out), 2);
    assert_true(out[1].at_ns == 400);
    /* A dead node outside the membership is ignored; no stats, no deaths. */
    d3[0].node = 9;
    d1[0].node = 7;
    d0[1].node = 8;
    assert_int_equal(follow_deaths(st, got, 5, out), 1);
    assert_int_equal(follow_deaths(NULL, NULL, 5, out), 0);
}

static char *print(const struct summary *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    follow_print_failures(s, f);
    fclose(f);
    return text;
}

static void test_failure_lines(void **state)
{
    (void)state;
    struct summary s = {.t_submit = 1000000000};
    char *text = print(&s);
    assert_string_equal(text, "");
    free(text);
    struct proto_dead deaths[2] = {{.node = 2, .by = 1, .at_ns = 2500000000},
                                   {.node = 5, .by = 5, .at_ns = 0}};
    s.deaths = deaths;
    s.ndeaths = 1;
    s.tasks_resubmitted = 55;
    s.objects_recomputed = 1;
    text = print(&s);
    assert_non_null(strstr(text, "  failures         1 node declared dead, 55 tasks resubmitted, "
                                 "1 object recomputed\n"));
    assert_non_null(strstr(text, "    node 2 declared dead at "));
    assert_non_null(strstr(text, " (1.500 s into the job) by node 1\n"));
    free(text);
    /* A time nobody knows is said so, not printed as 1970. */
    s.ndeaths = 2;
    text = print(&s);
    assert_non_null(strstr(text, "2 nodes declared dead"));
    assert_non_null(strstr(text, "    node 5 declared dead at ? ("));
    free(text);
}

static void test_listed_and_reported_once(void **state)
{
    (void)state;
    struct workload_task tasks[3] = {{.id = "a"}, {.id = "b"}, {.id = "c"}};
    struct workload wl = {.tasks = tasks, .count = 3};
    struct follow f;
    follow_init(&f, &wl, 7, 2, NULL, 0, NULL);
    struct proto_task_end a = {.key = task_key(7, 0), .status = TASK_DONE, .node = 1, .t_end = 5};
    struct proto_task_end b = {.key = task_key(7, 1), .status = TASK_DONE, .node = 0, .t_end = 6};
    /* Listed by the records, then reported to the new client: one end. */
    follow_on_task_listed(&f, &a);
    follow_on_task_end(&f, &a);
    /* Reported, then listed (by the record's primary and by its new one): one end. */
    follow_on_task_end(&f, &b);
    follow_on_task_listed(&f, &b);
    follow_on_task_listed(&f, &b);
    assert_int_equal(f.ended, 2);
    assert_int_equal(f.done, 2);
    assert_int_equal(f.duplicates, 0);
    assert_false(f.finished);
    /* A third report of a task is a duplicate as ever. */
    follow_on_task_end(&f, &a);
    assert_int_equal(f.duplicates, 1);
    struct proto_task_end c = {.key = task_key(7, 2), .status = TASK_FAILED, .exit_code = -1};
    follow_on_task_listed(&f, &c);
    assert_int_equal(f.failed, 1);
    assert_true(f.finished);
    /* Another job's end is foreign. */
    struct proto_task_end x = {.key = task_key(8, 0), .status = TASK_DONE};
    follow_on_task_listed(&f, &x);
    assert_int_equal(f.foreign, 1);
    follow_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deaths_merge),
        cmocka_unit_test(test_failure_lines),
        cmocka_unit_test(test_listed_and_reported_once),
    };
    return cmocka_run_group_tests_name("follow", tests, NULL, NULL);
}
