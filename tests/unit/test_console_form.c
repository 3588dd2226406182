/*
 * test_console_form — the launch form (tui/form.c) driven by the key table's actions:
 * moving between the fields that apply, choices, typing, the checks that name the field
 * at fault, and the plan it hands to the launcher (flags, speed list of a C-mix, the
 * generator's parameters).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curses.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/client/launcher.h"
#include "core/model/task.h"
#include "tui/form.h"

static void type(struct form *f, const char *text)
{
    for (const char *p = text; *p; p++)
        form_handle(f, keys_lookup(*p, KEYS_FORM), *p);
}

static void press(struct form *f, int key)
{
    form_handle(f, keys_lookup(key, KEYS_FORM), key);
}

static const char *word(const struct form_plan *p, const char *flag)
{
    for (int i = 0; i + 1 < p->nwords; i += 2)
        if (strcmp(p->words[i], flag) == 0)
            return p->words[i + 1];
    return NULL;
}

static void test_policy_preset_plan(void **state)
{
    (void)state;
    struct form f;
    form_init(&f);
    form_set(&f, FF_STEAL, "a2ws");
    struct form_plan p;
    char *cause = NULL;
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_string_equal(word(&p, "--policy"), "a2ws");
    assert_null(word(&p, "--steal"));
    /* Paper 001's baselines are presets too. */
    form_set(&f, FF_STEAL, "ctws");
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_string_equal(word(&p, "--policy"), "ctws");
    form_set(&f, FF_STEAL, "lw");
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_string_equal(word(&p, "--policy"), "lw");
}

static void test_defaults_plan(void **state)
{
    (void)state;
    struct form f;
    form_init(&f);
    struct form_plan p;
    char *cause = NULL;
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_int_equal(p.nodes, 8);
    assert_int_equal(p.slots, 2);
    assert_string_equal(p.speeds, "");
    assert_string_equal(word(&p, "--steal"), "adaptive");
    /* ws is the daemons' default: the plan leaves it out, so presets keep theirs. */
    assert_null(word(&p, "--placement"));
    assert_null(word(&p, "--policy"));
    assert_null(word(&p, "--bandwidth"));
    assert_true(p.generate);
    assert_int_equal(p.gen.shape, GEN_BOT);
    assert_int_equal(p.gen.kind, TASK_SLEEP);
    assert_int_equal(p.gen.tasks, 2000);
    assert_true(fabs(p.gen.duration.lo - 0.01) < 1e-12 && fabs(p.gen.duration.hi - 0.05) < 1e-12);
    assert_int_equal(p.mode, SUBMIT_HASHED);
    assert_non_null(strstr(p.summary, "8 nodes x 2 slots"));
    assert_int_equal(f.error_field, -1);
}

static void test_navigation_skips_hidden(void **state)
{
    (void)state;
    struct form f;
    form_init(&f);
    assert_int_equal(f.cur, FF_NODES);
    /* The custom speed list is hidden until the mix says custom. */
    press(&f, KEY_DOWN);
    press(&f, KEY_DOWN);
    assert_int_equal(f.cur, FF_MIX);
    press(&f, KEY_DOWN);
    assert_int_equal(f.cur, FF_STEAL);
    press(&f, KEY_UP);
    press(&f, KEY_LEFT); /* none -> custom, wrapping */
    assert_string_equal(form_value(&f, FF_MIX), "custom");
    assert_true(form_visible(&f, FF_SPEEDS));
    press(&f, KEY_DOWN);
    assert_int_equal(f.cur, FF_SPEEDS);
    /* No stealing, no stealing parameters; ws placement has no threshold. */
    form_set(&f, FF_STEAL, "none");
    assert_false(form_visible(&f, FF_NEIGHBOURS));
    assert_false(form_visible(&f, FF_THRESHOLD));
    /* Victims per try and the back-off bound only where a random-victim thief uses them. */
    static const char *const with[] = {"adaptive", "random1", "parsec", "daws"};
    static const char *const without[] = {"a2ws", "daws+a2ws", "lw", "ctws"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(form_set(&f, FF_STEAL, with[i]), 0);
        assert_true(form_visible(&f, FF_NEIGHBOURS) && form_visible(&f, FF_POLL_MAX));
        assert_int_equal(form_set(&f, FF_STEAL, without[i]), 0);
        assert_false(form_visible(&f, FF_NEIGHBOURS) || form_visible(&f, FF_POLL_MAX));
    }
    form_set(&f, FF_STEAL, "none");
    form_set(&f, FF_PLACEMENT, "flds");
    assert_true(form_visible(&f, FF_THRESHOLD));
    /* A file workload hides the generator. */
    form_set(&f, FF_SOURCE, "file");
    assert_false(form_visible(&f, FF_SHAPE));
    assert_true(form_visible(&f, FF_FILE));
    /* Down at the last field stays there; Enter on Launch submits, elsewhere moves. */
    for (int i = 0; i < FF_COUNT + 2; i++)
        press(&f, KEY_DOWN);
    assert_int_equal(f.cur, FF_LAUNCH);
    assert_int_equal(form_handle(&f, ACT_FORM_SUBMIT, '\n'), FORM_SUBMIT);
    f.cur = FF_NODES;
    assert_int_equal(form_handle(&f, ACT_FORM_SUBMIT, '\n'), FORM_CONTINUE);
    assert_int_equal(f.cur, FF_SLOTS);
    assert_int_equal(form_handle(&f, ACT_FORM_SUBMIT, KEY_F(5)), FORM_SUBMIT);
    assert_int_equal(form_handle(&f, ACT_FORM_LEAVE, 27), FORM_LEAVE);
}

static void test_typing(void **state)
{
    (void)state;
    struct form f;
    form_init(&f);
    press(&f, 21); /* C-u clears */
    type(&f, "12");
    assert_string_equal(form_value(&f, FF_NODES), "12");
    press(&f, KEY_BACKSPACE);
    assert_string_equal(form_value(&f, FF_NODES), "1");
    /* Letters typed on a choice pick the next choice starting with them. */
    f.cur = FF_PLACEMENT;
    type(&f, "f");
    assert_string_equal(form_value(&f, FF_PLACEMENT), "flds");
    type(&f, "a");
    assert_string_equal(form_value(&f, FF_PLACEMENT), "auto");
    /* A space in a text field is text. */
    form_set(&f, FF_SOURCE, "file");
    f.cur = FF_FILE;
    type(&f, "my dir/w.jsonl");
    assert_string_equal(form_value(&f, FF_FILE), "my dir/w.jsonl");
    /* Too long a value is refused whole. */
    char big[FORM_TEXT_MAX + 10];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(form_set(&f, FF_FILE, big), -EINVAL);
    assert_int_equal(form_set(&f, FF_MIX, "C9"), -EINVAL);
}

static void expect_refusal(struct form *f, enum form_field k, const char *words);

/* A cluster on other hosts: the local sizing fields give way to the hostfile and its
 * remote shell, or to the allocation; a hostfile is read when the form is checked, so
 * that its bad line is shown on the field with its file:line. */
static void test_other_hosts(void **state)
{
    (void)state;
    struct form f;
    form_init(&f);
    assert_false(form_visible(&f, FF_HOSTFILE));
    press(&f, KEY_UP);
    assert_int_equal(f.cur, FF_WHERE);
    press(&f, KEY_RIGHT);
    assert_string_equal(form_value(&f, FF_WHERE), "hostfile");
    assert_true(form_visible(&f, FF_HOSTFILE) && form_visible(&f, FF_RSH));
    assert_false(form_visible(&f, FF_NODES) || form_visible(&f, FF_SLOTS) ||
                 form_visible(&f, FF_MIX) || form_visible(&f, FF_PER_TASK));
    assert_string_equal(form_value(&f, FF_RSH), "ssh -o BatchMode=yes");
    expect_refusal(&f, FF_HOSTFILE, "hostfile");
    char path[] = "/tmp/test_form_hosts.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char bad[] = "n01 slots=2\nn02 slots=x\n";
    assert_int_equal(write(fd, bad, sizeof bad - 1), (ssize_t)(sizeof bad - 1));
    close(fd);
    form_set(&f, FF_HOSTFILE, path);
    char want[64];
    snprintf(want, sizeof want, "%s:2: 'slots=x'", path);
    expect_refusal(&f, FF_HOSTFILE, want);
    FILE *w = fopen(path, "w");
    fputs("n01 slots=2\nn02\n# n03\nn04 addr=10.0.0.4\n", w);
    fclose(w);
    struct form_plan p;
    char *cause = NULL;
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_int_equal(p.where, FORM_HOSTFILE);
    assert_int_equal(p.nodes, 3);
    assert_string_equal(p.hostfile, path);
    assert_string_equal(p.rsh, "ssh -o BatchMode=yes");
    assert_non_null(strstr(p.summary, "3 hosts of"));
    unlink(path);
    /* Slurm: only inside an allocation; its size comes from the daemons. */
    form_set(&f, FF_WHERE, "slurm");
    assert_true(form_visible(&f, FF_PER_TASK) && !form_visible(&f, FF_HOSTFILE));
    unsetenv("SLURM_JOB_ID");
    expect_refusal(&f, FF_WHERE, "not inside a Slurm allocation");
    setenv("SLURM_JOB_ID", "42", 1);
    form_set(&f, FF_PER_TASK, "per task");
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_int_equal(p.where, FORM_SLURM);
    assert_true(p.per_task);
    assert_int_equal(p.nodes, 0);
    assert_non_null(strstr(p.summary, "Slurm job 42, a node per task"));
    unsetenv("SLURM_JOB_ID");
}

static void expect_refusal(struct form *f, enum form_field k, const char *words)
{
    struct form_plan p;
    char *cause = NULL;
    assert_true(form_plan(f, &p, &cause) < 0);
    assert_non_null(cause);
    assert_int_equal(f->error_field, k);
    assert_int_equal(f->cur, k);
    if (!strstr(cause, words))
        fail_msg("cause '%s' lacks '%s'", cause, words);
    free(cause);
}

static void test_refusals(void **state)
{
    (void)state;
    struct form f;
    form_init(&f);
    form_set(&f, FF_NODES, "0");
    expect_refusal(&f, FF_NODES, "Nodes");
    form_set(&f, FF_NODES, "8x");
    expect_refusal(&f, FF_NODES, "1 to 4096");
    form_set(&f, FF_NODES, "4");
    form_set(&f, FF_SLOTS, "");
    expect_refusal(&f, FF_SLOTS, "Slots");
    form_set(&f, FF_SLOTS, "2");
    form_set(&f, FF_MIX, "custom");
    form_set(&f, FF_SPEEDS, "1,1.5");
    expect_refusal(&f, FF_SPEEDS, "(0, 1]");
    form_set(&f, FF_MIX, "none");
    form_set(&f, FF_NEIGHBOURS, "-2");
    expect_refusal(&f, FF_NEIGHBOURS, "victims");
    form_set(&f, FF_NEIGHBOURS, "");
    form_set(&f, FF_BANDWIDTH, "fast");
    expect_refusal(&f, FF_BANDWIDTH, "Network bandwidth");
    form_set(&f, FF_BANDWIDTH, "1Gbit");
    form_set(&f, FF_LATENCY, "soon");
    expect_refusal(&f, FF_LATENCY, "latency");
    form_set(&f, FF_LATENCY, "100us");
    form_set(&f, FF_DURATION, "0.5-0.1");
    expect_refusal(&f, FF_DURATION, "duration");
    form_set(&f, FF_DURATION, "0.01");
    form_set(&f, FF_SHAPE, "imagestack");
    form_set(&f, FF_TASKS, "10");
    form_set(&f, FF_PARAM, "20");
    expect_refusal(&f, FF_PARAM, "locality");
    form_set(&f, FF_SOURCE, "file");
    expect_refusal(&f, FF_FILE, "file");
    form_set(&f, FF_FILE, "w.jsonl");
    struct form_plan p;
    char *cause = NULL;
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_false(p.generate);
    assert_string_equal(p.file, "w.jsonl");
    assert_string_equal(word(&p, "--bandwidth"), "1Gbit");
    assert_string_equal(word(&p, "--latency"), "100us");
    assert_int_equal(f.error_field, -1);
    assert_string_equal(f.error, "");
}

static void test_mix_and_shapes(void **state)
{
    (void)state;
    struct form f;
    form_init(&f);
    form_set(&f, FF_NODES, "16");
    form_set(&f, FF_MIX, "C2");
    form_set(&f, FF_STEAL, "random1");
    form_set(&f, FF_NEIGHBOURS, "3");
    form_set(&f, FF_PLACEMENT, "flds");
    form_set(&f, FF_THRESHOLD, "0.5");
    form_set(&f, FF_MODE, "one");
    form_set(&f, FF_SHAPE, "allpairs");
    /* Switching shape puts in its parameters. */
    assert_string_equal(form_value(&f, FF_PARAM), "20");
    assert_false(form_visible(&f, FF_TASKS));
    assert_true(form_visible(&f, FF_FILE_BYTES));
    struct form_plan p;
    char *cause = NULL;
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_int_equal(p.mix, MIX_C2);
    assert_string_equal(word(&p, "--steal"), "random1");
    assert_string_equal(word(&p, "--neighbours"), "3");
    assert_string_equal(word(&p, "--placement"), "flds");
    assert_string_equal(word(&p, "--threshold"), "0.5");
    assert_int_equal(p.mode, SUBMIT_ONE);
    assert_int_equal(p.gen.shape, GEN_ALLPAIRS);
    assert_int_equal(p.gen.set_size, 20);
    assert_int_equal(gen_task_count(&p.gen), 400);
    /* The C2 list gives the launcher each node's mix speed. */
    double speeds[16];
    assert_int_equal(launcher_parse_speeds(p.speeds, speeds, 16, &cause), 0);
    for (uint32_t i = 0; i < 16; i++) {
        struct mix_node m;
        mix_node(MIX_C2, i, &m);
        assert_true(fabs(speeds[i] - m.speed) < 1e-6);
    }
    form_set(&f, FF_SHAPE, "pipeline");
    assert_string_equal(form_value(&f, FF_PARAM), "4");
    form_set(&f, FF_KIND, "noop");
    assert_false(form_visible(&f, FF_DURATION));
    assert_int_equal(form_plan(&f, &p, &cause), 0);
    assert_int_equal(p.gen.pipe_size, 4);
    assert_int_equal(p.gen.kind, TASK_NOOP);
    assert_true(p.gen.duration.hi == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_plan),
        cmocka_unit_test(test_policy_preset_plan),
        cmocka_unit_test(test_navigation_skips_hidden),
        cmocka_unit_test(test_other_hosts),
        cmocka_unit_test(test_typing),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_mix_and_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
