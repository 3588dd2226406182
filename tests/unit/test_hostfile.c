/*
 * test_hostfile — the hostfile of `launch --hostfile` (core/model/hostfile.c): what a
 * line means, and that every bad line is refused with the file, the line and the word
 * (a hostfile is written by hand for a real allocation, where a silent default would
 * launch the wrong cluster).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/hostfile.h"
#include "tmpdir.h"

static int parse(struct hostfile *h, const char *text, char **cause)
{
    *cause = NULL;
    return hostfile_parse(h, "hosts", text, strlen(text), cause);
}

static void test_lines(void **state)
{
    (void)state;
    struct hostfile h;
    char *cause;
    const char *text = "# the allocation\n"
                       "\n"
                       "n01 slots=4 speed=0.5 addr=10.0.0.1 port=7000\n"
                       "   user@n02\t# second\r\n"
                       "n01 port=7001 addr=10.0.0.1\n"
                       "fe80::1 addr=::1";
    assert_int_equal(parse(&h, text, &cause), 0);
    assert_int_equal(h.count, 4);
    assert_string_equal(h.hosts[0].name, "n01");
    assert_int_equal(h.hosts[0].slots, 4);
    assert_true(h.hosts[0].speed == 0.5);
    assert_string_equal(h.hosts[0].addr, "10.0.0.1");
    assert_int_equal(h.hosts[0].port, 7000);
    assert_int_equal(h.hosts[0].line, 3);
    /* Defaults: no slots (the remote cores), speed 1, no address, any port. */
    assert_string_equal(h.hosts[1].name, "user@n02");
    assert_int_equal(h.hosts[1].slots, 0);
    assert_true(h.hosts[1].speed == 1.0);
    assert_string_equal(h.hosts[1].addr, "");
    assert_int_equal(h.hosts[1].port, 0);
    assert_int_equal(h.hosts[1].line, 4);
    /* The same host twice: two daemons. */
    assert_string_equal(h.hosts[2].name, "n01");
    assert_int_equal(h.hosts[2].port, 7001);
    assert_string_equal(h.hosts[3].addr, "::1");
    assert_string_equal(h.path, "hosts");
    hostfile_fini(&h);
}

/* Each bad text, and what its message must say. */
static const struct {
    const char *text, *want;
} bad[] = {
    {"", "hosts: no hosts"},
    {"# nothing\n\n   \n", "hosts: no hosts"},
    {"n01\nn02 slots=0\n", "hosts:2: 'slots=0': slots is a whole number from 1 to 100000"},
    {"n01 slots=4x", "hosts:1: 'slots=4x'"},
    {"n01 slots=", "hosts:1: 'slots='"},
    {"n01 slots=2 slots=3", "hosts:1: slots given twice"},
    {"n01 speed=0", "hosts:1: 'speed=0': speed is a number in (0, 1]"},
    {"n01 speed=1.5", "hosts:1: 'speed=1.5'"},
    {"n01 speed=nan", "hosts:1: 'speed=nan'"},
    {"n01 addr=n01.example", "hosts:1: 'addr=n01.example': addr is a numeric"},
    {"n01 port=0", "hosts:1: 'port=0': port is a whole number from 1 to 65535"},
    {"n01 port=65536", "hosts:1: 'port=65536'"},
    {"n01 slot=4", "hosts:1: unknown option 'slot=4'"},
    {"n01 n02", "hosts:1: 'n02' is not KEY=VALUE"},
    {"slots=4 n01", "hosts:1: 'slots=4' is not a host name"},
    {"-oProxyCommand=x", "hosts:1: '-oProxyCommand=x' is not a host name"},
    {"n01 port=7000\nn01 port=7000\n", "hosts:2: n01 port 7000 is taken by line 1"},
    {"a addr=10.0.0.1 port=9\nb addr=10.0.0.1 port=9", "hosts:2: 10.0.0.1 port 9 is taken"},
    {"n01\x01 slots=1", "hosts:1: 'n01?' holds a byte that is not printable ASCII"},
    {"n\xc3\xa9 slots=1", "hosts:1: 'n?" "?' holds a byte that is not printable ASCII"},
};

static void test_bad_lines_name_the_place(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct hostfile h;
        char *cause;
        assert_int_equal(parse(&h, bad[i].text, &cause), -EINVAL);
        assert_non_null(cause);
        if (!strstr(cause, bad[i].want))
            fail_msg("text %zu: got \"%s\", want it to contain \"%s\"", i, cause, bad[i].want);
        free(cause);
        /* Nothing is kept of a refused file. */
        assert_null(h.hosts);
        assert_int_equal(h.count, 0);
    }
}

static void test_nul_byte_and_long_name(void **state)
{
    (void)state;
    struct hostfile h;
    char *cause = NULL;
    assert_int_equal(hostfile_parse(&h, "hosts", "n01\0x\n", 6, &cause), -EINVAL);
    assert_non_null(strstr(cause, "hosts:1: holds a NUL byte"));
    free(cause);
    char text[HOSTFILE_NAME_MAX + 8];
    memset(text, 'a', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    assert_int_equal(parse(&h, text, &cause), -EINVAL);
    assert_non_null(strstr(cause, "is longer than"));
    free(cause);
}

static void test_load(void **state)
{
    (void)state;
    char path[128], missing[128];
    path_in_dir(path, sizeof path, "hosts");
    path_in_dir(missing, sizeof missing, "none");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("n01 slots=2\nn02 slots=bad\n", f);
    fclose(f);
    struct hostfile h;
    char *cause = NULL;
    assert_int_equal(hostfile_load(&h, path, &cause), -EINVAL);
    char want[160];
    snprintf(want, sizeof want, "%s:2: 'slots=bad'", path);
    assert_non_null(strstr(cause, want));
    free(cause);
    cause = NULL;
    assert_true(hostfile_load(&h, missing, &cause) < 0);
    assert_non_null(strstr(cause, "cannot open hostfile"));
    free(cause);
}

static int make_dir(void **state)
{
    (void)state;
    return tmpdir_make("test_hostfile");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_bad_lines_name_the_place),
        cmocka_unit_test(test_nul_byte_and_long_name),
        cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
