/*
 * test_cluster — the cluster file (core/model/cluster.c): the files a cluster owns are
 * named after its cluster file, so that two clusters in one directory never share a
 * key, a work directory or job files, while the default name keeps its old layout; and
 * a collector entry survives a save and a load (a collector restarted by hand rewrites
 * the file with its own address and pid).  Launching two clusters in one directory is
 * tests/integration/t_72_two_clusters.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/model/cluster.h"
#include "tmpdir.h"

static void expect_owned(const char *cluster, enum cluster_owned what, const char *want)
{
    char *got = cluster_owned_path(cluster, what);
    assert_string_equal(got, want);
    free(got);
}

static void test_named_after_the_cluster_file(void **state)
{
    (void)state;
    expect_owned("/x/a.json", CLUSTER_OWNED_KEY, "/x/a.key");
    expect_owned("/x/a.json", CLUSTER_OWNED_WORKDIR, "/x/a.work");
    expect_owned("/x/a.json", CLUSTER_OWNED_JOBS, "/x/a.jobs");
    expect_owned("/x/b.json", CLUSTER_OWNED_KEY, "/x/b.key");
    /* Only a trailing .json goes: other names keep their dots. */
    expect_owned("/x/run.2.json", CLUSTER_OWNED_KEY, "/x/run.2.key");
    expect_owned("/x/plain", CLUSTER_OWNED_WORKDIR, "/x/plain.work");
    expect_owned("/x/a.json.bak", CLUSTER_OWNED_KEY, "/x/a.json.bak.key");
    expect_owned("/x/.json", CLUSTER_OWNED_KEY, "/x/.json.key");
    /* Relative paths stay relative, in the same directory. */
    expect_owned("a.json", CLUSTER_OWNED_KEY, "a.key");
    expect_owned("sub/a.json", CLUSTER_OWNED_JOBS, "sub/a.jobs");
    expect_owned("/a.json", CLUSTER_OWNED_WORKDIR, "/a.work");
}

static void test_default_name_keeps_its_layout(void **state)
{
    (void)state;
    expect_owned("/run/user/1/jackdaw/cluster.json", CLUSTER_OWNED_KEY,
                 "/run/user/1/jackdaw/cluster.key");
    expect_owned("/run/user/1/jackdaw/cluster.json", CLUSTER_OWNED_WORKDIR,
                 "/run/user/1/jackdaw/work");
    expect_owned("/run/user/1/jackdaw/cluster.json", CLUSTER_OWNED_JOBS,
                 "/run/user/1/jackdaw/jobs");
    expect_owned("cluster.json", CLUSTER_OWNED_WORKDIR, "work");
    /* A longer name that starts like it is not the default. */
    expect_owned("/x/cluster2.json", CLUSTER_OWNED_KEY, "/x/cluster2.key");
    expect_owned("/x/my-cluster.json", CLUSTER_OWNED_WORKDIR, "/x/my-cluster.work");
}

static void test_collector_entry_round_trip(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "c.json");
    struct cluster c = {0};
    c.key_path = strdup("/x/c.key");
    c.workdir = strdup("/x/c.work");
    c.count = 1;
    c.nodes = calloc(1, sizeof *c.nodes);
    strcpy(c.nodes[0].host, "127.0.0.1");
    c.nodes[0].port = 4000;
    c.nodes[0].slots = 2;
    c.nodes[0].speed = 1.0;
    c.nodes[0].pid = 77;
    strcpy(c.collector.host, "127.0.0.1");
    c.collector.port = 4100;
    c.collector.pid = 1234;
    c.collector.trace_path = strdup("/x/t.avro");
    char *cause = NULL;
    assert_int_equal(cluster_save(&c, path, &cause), 0);
    cluster_fini(&c);
    struct cluster back;
    assert_int_equal(cluster_load(&back, path, &cause), 0);
    assert_string_equal(back.key_path, "/x/c.key");
    assert_string_equal(back.workdir, "/x/c.work");
    assert_int_equal(back.nodes[0].pid, 77);
    assert_string_equal(back.collector.host, "127.0.0.1");
    assert_int_equal(back.collector.port, 4100);
    assert_int_equal(back.collector.pid, 1234);
    assert_string_equal(back.collector.trace_path, "/x/t.avro");
    cluster_fini(&back);
}

static int make_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_cluster");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named_after_the_cluster_file),
        cmocka_unit_test(test_default_name_keeps_its_layout),
        cmocka_unit_test(test_collector_entry_round_trip),
    };
    return cmocka_run_group_tests_name("cluster", tests, make_dir, remove_dir);
}
