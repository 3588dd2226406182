/*
 * Job records a client keeps while the collector is away (trace/collector/jobspool):
 * what is kept is read back the same, ids that need escaping included; only finished
 * files are listed; and a file that is not a kept job is refused with a sentence naming
 * it and the line, never half-read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/collector/jobspool.h"

static int setup_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_jobspool");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_keep_list_read(void **state)
{
    (void)state;
    char dir[128];
    path_in_dir(dir, sizeof dir, "work/trace-jobs");
    char **paths;
    size_t n;
    char *cause = NULL;
    /* Nothing kept yet: no directory, no file, no error. */
    assert_int_equal(jobspool_list(dir, &paths, &n, &cause), 0);
    assert_int_equal(n, 0);

    const char *ids[] = {"plain", "quote\"and\\slash", "line\nbreak", "\xc3\xa9t\xc3\xa9", ""};
    char *path = NULL;
    assert_int_equal(jobspool_keep(dir, 42, 5, "montage", "sha:1", "one", ids, &path, &cause), 0);
    assert_non_null(strstr(path, "/trace-jobs/job-42.jsonl"));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char *path2 = NULL;
    /* No mode: the file a client of before the mode wrote. */
    assert_int_equal(jobspool_keep(dir, 7, 0, NULL, NULL, "", NULL, &path2, &cause), 0);

    /* Not kept jobs: a writer's temporary, a set-aside file, other names. */
    char other[192];
    const char *skip[] = {"job-9.jsonl.tmp.123", "job-8.jsonl.bad", "job-.jsonl", "job-x.jsonl",
                          "notes.txt"};
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) {
        snprintf(other, sizeof other, "%s/%s", dir, skip[i]);
        write_text(other, "{}\n");
    }
    assert_int_equal(jobspool_list(dir, &paths, &n, &cause), 0);
    assert_int_equal(n, 2);
    assert_string_equal(paths[0], path);  /* sorted by name: job-42 before job-7 */
    assert_string_equal(paths[1], path2);
    jobspool_list_free(paths, n);

    struct jobspool_job j;
    assert_int_equal(jobspool_read(path, &j, &cause), 0);
    assert_int_equal(j.job, 42);
    assert_int_equal(j.tasks, 5);
    assert_string_equal(j.name, "montage");
    assert_string_equal(j.digest, "sha:1");
    assert_string_equal(j.mode, "one");
    for (int i = 0; i < 5; i++)
        assert_string_equal(j.ids[i], ids[i]);
    jobspool_job_fini(&j);
    assert_int_equal(jobspool_read(path2, &j, &cause), 0);
    assert_int_equal(j.job, 7);
    assert_int_equal(j.tasks, 0);
    assert_null(j.name);
    assert_null(j.digest);
    assert_null(j.mode);
    jobspool_job_fini(&j);
    free(path);
    free(path2);
}

static void expect_refused(const char *name, const char *text, const char *in_cause)
{
    char path[128];
    path_in_dir(path, sizeof path, name);
    write_text(path, text);
    struct jobspool_job j;
    char *cause = NULL;
    assert_int_equal(jobspool_read(path, &j, &cause), -EBADMSG);
    assert_non_null(cause);
    if (!strstr(cause, path) || !strstr(cause, in_cause))
        fail_msg("%s: cause '%s' lacks '%s'", name, cause, in_cause);
    assert_null(j.ids);
    assert_null(j.name);
    assert_null(j.mode);
    free(cause);
}

static void test_refuses_what_is_not_a_kept_job(void **state)
{
    (void)state;
    expect_refused("empty.jsonl", "", "empty file");
    expect_refused("array.jsonl", "[1, 2]\n", "line 1");
    expect_refused("job0.jsonl", "{\"job\": 0, \"tasks\": 1}\n\"a\"\n", "line 1");
    expect_refused("nocount.jsonl", "{\"job\": 3, \"name\": \"w\"}\n", "line 1");
    expect_refused("badname.jsonl", "{\"job\": 3, \"tasks\": 0, \"name\": 5}\n", "line 1");
    /* The mode is a mode's name exactly, as the wire's JOB has it. */
    expect_refused("badmode.jsonl", "{\"job\": 3, \"tasks\": 0, \"mode\": \"fast\"}\n",
                   "\"mode\" is not hashed, one, roundrobin or data");
    expect_refused("uppermode.jsonl", "{\"job\": 3, \"tasks\": 0, \"mode\": \"ONE\"}\n",
                   "\"mode\" is not");
    expect_refused("blankmode.jsonl", "{\"job\": 3, \"tasks\": 0, \"mode\": \"\"}\n",
                   "\"mode\" is not");
    expect_refused("nummode.jsonl", "{\"job\": 3, \"tasks\": 0, \"mode\": 1}\n", "line 1");
    expect_refused("badjson.jsonl", "{\"job\": 3, \"tasks\": 3, \"name\": \"w\"}\n\"a\"\n\"b\n",
                   "line 3");
    expect_refused("number.jsonl", "{\"job\": 3, \"tasks\": 2}\n\"a\"\n17\n", "not a JSON string");
    expect_refused("fewer.jsonl", "{\"job\": 3, \"tasks\": 3}\n\"a\"\n\"b\"\n", "2 ids for 3 tasks");
    expect_refused("more.jsonl", "{\"job\": 3, \"tasks\": 1}\n\"a\"\n\"b\"\n", "more ids");
    /* A huge count is a claim, not an allocation. */
    expect_refused("huge.jsonl", "{\"job\": 3, \"tasks\": 4294967295}\n\"a\"\n",
                   "1 ids for 4294967295 tasks");
    expect_refused("toobig.jsonl", "{\"job\": 3, \"tasks\": 4294967296}\n", "line 1");
}

static void test_unwritable_dir(void **state)
{
    (void)state;
    char file[128], dir[160];
    path_in_dir(file, sizeof file, "a-file");
    write_text(file, "x");
    snprintf(dir, sizeof dir, "%s/trace-jobs", file);
    const char *ids[] = {"a"};
    char *path = NULL, *cause = NULL;
    assert_true(jobspool_keep(dir, 1, 1, NULL, NULL, NULL, ids, &path, &cause) < 0);
    assert_null(path);
    assert_non_null(strstr(cause, "a-file"));
    free(cause);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep_list_read),
        cmocka_unit_test(test_refuses_what_is_not_a_kept_job),
        cmocka_unit_test(test_unwritable_dir),
    };
    return cmocka_run_group_tests_name("jobspool", tests, setup_dir, remove_dir);
}
