/*
 * bucket: the reservation arithmetic with exact ns (rates and sizes chosen so that
 * every expected wait is a whole number), bursts, idle refill, unlimited buckets, and
 * tables of good and bad --bandwidth and --latency values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/bucket.h"

#define SEC 1000000000LL

static void test_spent_burst_then_one_second_per_megabyte(void **state)
{
    (void)state;
    struct bucket b;
    assert_int_equal(bucket_init(&b, 1e6, 65536), 0);
    int64_t t0 = 5 * SEC;
    /* The bucket starts full: one burst passes at once. */
    assert_int_equal(bucket_reserve(&b, t0, 65536), 0);
    /* 1 MB at 1 MB/s with nothing left waits exactly one second. */
    assert_int_equal(bucket_reserve(&b, t0, 1000000), SEC);
    /* Reserved back to back, the next megabyte queues behind the first. */
    assert_int_equal(bucket_reserve(&b, t0, 1000000), 2 * SEC);
    /* Half a second later the debt is 1.5 MB: the next 0.5 MB waits 2 s from then. */
    assert_int_equal(bucket_reserve(&b, t0 + SEC / 2, 500000), 2 * SEC);
}

static void test_chunk_delay_is_proportional(void **state)
{
    (void)state;
    struct bucket b;
    /* 1 Gbit/s, no burst: every chunk pays its own transmission time. */
    assert_int_equal(bucket_init(&b, 125e6, 0), 0);
    assert_int_equal(bucket_reserve(&b, 0, 125000), 1000000);          /* 125 kB: 1 ms */
    assert_int_equal(bucket_reserve(&b, 1000000, 250000), 2000000);    /* paid up, 2 ms */
    assert_int_equal(bucket_reserve(&b, 3000000, 1), 8);               /* 1 byte: 8 ns */
    /* A partial ns rounds up, never down. */
    struct bucket c;
    assert_int_equal(bucket_init(&c, 3, 0), 0);
    assert_int_equal(bucket_reserve(&c, 0, 1), 333333334);
}

static void test_idle_refill_caps_at_burst(void **state)
{
    (void)state;
    struct bucket b;
    assert_int_equal(bucket_init(&b, 1e6, 100000), 0);
    assert_int_equal(bucket_reserve(&b, 0, 100000), 0);
    /* Idle for an hour: the bucket holds one burst, not an hour's worth. */
    int64_t t = 3600 * SEC;
    assert_int_equal(bucket_reserve(&b, t, 100000), 0);
    assert_int_equal(bucket_reserve(&b, t, 100000), SEC / 10);
    /* Partial refill: after 0.05 s, 50 kB of the 100 kB debt is repaid. */
    assert_int_equal(bucket_reserve(&b, t + SEC / 20, 0), SEC / 20);
    /* Time going backwards is treated as no time passing. */
    assert_int_equal(bucket_reserve(&b, t, 0), SEC / 20);
}

static void test_burst_passes_at_once(void **state)
{
    (void)state;
    struct bucket b;
    assert_int_equal(bucket_init(&b, 1e6, 1 << 20), 0);
    for (int i = 0; i < 16; i++)
        assert_int_equal(bucket_reserve(&b, 0, 65536), 0);
    assert_int_equal(bucket_reserve(&b, 0, 1000), 1000000);
}

static void test_unlimited_and_invalid(void **state)
{
    (void)state;
    struct bucket b;
    assert_int_equal(bucket_init(&b, 0, 0), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(bucket_reserve(&b, i, UINT64_MAX), 0);
    assert_int_equal(bucket_init(&b, -1, 0), -EINVAL);
    assert_int_equal(bucket_init(&b, 1e6, -1), -EINVAL);
    assert_int_equal(bucket_init(&b, 1.0 / 0.0, 0), -EINVAL);
    assert_int_equal(bucket_init(NULL, 1, 1), -EINVAL);
    /* A reservation whose wait does not fit in int64 ns is clamped, not wrapped. */
    assert_int_equal(bucket_init(&b, 1e-3, 0), 0);
    assert_int_equal(bucket_reserve(&b, 0, UINT64_MAX), INT64_MAX);
}

static void test_parse_rate_table(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double bytes_per_s;
    } good[] = {
        {"1Gbit", 125e6},        {"10Gbit", 1.25e9},     {"100Mbit", 12.5e6},
        {"125MB", 125e6},        {"125MB/s", 125e6},     {"1GiB/s", 1073741824.0},
        {"1.5Gbit", 187.5e6},    {"10gbit", 1.25e9},     {"1 Gbit", 125e6},
        {" 2KiB ", 2048},        {"8bit", 1},            {"800Kbps", 100e3},
        {"1Gbps", 125e6},        {"3B", 3},              {"1kB", 1e3},
        {"4096", 4096},          {"1e9", 1e9},           {"2.5e3KB", 2.5e6},
        {"0.5MB", 5e5},          {".5MB", 5e5},          {"1Tbit", 125e9},
        {"0", 0},                {"off", 0},             {"unlimited", 0},
        {"1MiB", 1048576.0},     {"1mib", 1048576.0},    {"1Mbit/s", 125e3},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double v = -1;
        char *cause = NULL;
        int rc = bucket_parse_rate(good[i].text, &v, &cause);
        if (rc != 0)
            fail_msg("'%s': %s", good[i].text, cause);
        if (v != good[i].bytes_per_s)
            fail_msg("'%s': got %.17g, want %.17g", good[i].text, v, good[i].bytes_per_s);
    }
    static const struct {
        const char *text;
        const char *in_cause;
    } bad[] = {
        {"", "expected a number"},       {"fast", "expected a number"},
        {"-1Gbit", "negative"},          {"1Gb", "bits or bytes"},
        {"1gb", "bits or bytes"},        {"100Mb/s", "bits or bytes"},
        {"8b", "bits or bytes"},         {"1Gbyte", "unknown unit"},
        {"1Gbps/s", "unknown unit"},     {"1 G", "unknown unit"},
        {"0x10", "unknown unit"},        {"inf", "expected a number"},
        {"nan", "expected a number"},    {"1e999999GB", "out of range"},
        {"1..5MB", "unknown unit"},      {"1e", "unknown unit"},
        {"1Gbit 2", "unknown unit"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v = 42;
        char *cause = NULL;
        int rc = bucket_parse_rate(bad[i].text, &v, &cause);
        if (rc >= 0)
            fail_msg("'%s' accepted as %g", bad[i].text, v);
        assert_non_null(cause);
        if (!strstr(cause, bad[i].in_cause) || !strstr(cause, bad[i].text))
            fail_msg("'%s': cause '%s' lacks '%s'", bad[i].text, cause, bad[i].in_cause);
        assert_true(v == 42);
        free(cause);
    }
    /* A NULL cause is allowed. */
    double v;
    assert_int_equal(bucket_parse_rate("1Gb", &v, NULL), -EINVAL);
}

static void test_parse_duration_table(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t ns;
    } good[] = {
        {"200us", 200000},          {"1ms", 1000000},      {"0.5ms", 500000},
        {"1s", SEC},                {"100ns", 100},        {"2.5s", 2500000000LL},
        {"3\xc2\xb5s", 3000},       {"0", 0},              {"0ms", 0},
        {"0.0001ms", 100},          {"1.5ns", 2},          {"1.4ns", 1},
        {"0.4ns", 0},               {" 20 ms ", 20000000}, {"1e3us", 1000000},
        {"9223372036854775807ns", INT64_MAX},              {".25s", 250000000},
        {"0.000000000000000000000001s", 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t v = -1;
        char *cause = NULL;
        int rc = bucket_parse_duration(good[i].text, &v, &cause);
        if (rc != 0)
            fail_msg("'%s': %s", good[i].text, cause);
        if (v != good[i].ns)
            fail_msg("'%s': got %lld, want %lld", good[i].text, (long long)v,
                     (long long)good[i].ns);
    }
    static const struct {
        const char *text;
        const char *in_cause;
    } bad[] = {
        {"", "expected a number"},        {"ms", "expected a number"},
        {"-1ms", "negative"},             {"5", "missing unit"},
        {"1.5", "missing unit"},          {"1Ms", "unknown unit"},
        {"1min", "unknown unit"},         {"1 m s", "unknown unit"},
        {"9223372036854775808ns", "out of range"},
        {"1e30s", "out of range"},        {"10000000000s", "out of range"},
        {"µs", "expected a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 42;
        char *cause = NULL;
        int rc = bucket_parse_duration(bad[i].text, &v, &cause);
        if (rc >= 0)
            fail_msg("'%s' accepted as %lld", bad[i].text, (long long)v);
        assert_non_null(cause);
        if (!strstr(cause, bad[i].in_cause) || !strstr(cause, bad[i].text))
            fail_msg("'%s': cause '%s' lacks '%s'", bad[i].text, cause, bad[i].in_cause);
        assert_int_equal(v, 42);
        free(cause);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spent_burst_then_one_second_per_megabyte),
        cmocka_unit_test(test_chunk_delay_is_proportional),
        cmocka_unit_test(test_idle_refill_caps_at_burst),
        cmocka_unit_test(test_burst_passes_at_once),
        cmocka_unit_test(test_unlimited_and_invalid),
        cmocka_unit_test(test_parse_rate_table),
        cmocka_unit_test(test_parse_duration_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
