/*
 * test_hash — unit tests for core/base/hash.h, the one 64-bit mixer, and for the values
 * that reach the wire or the disk through it: a task's shard owner (every node and
 * client must agree on it) and the bytes of a synthetic data object (checked by CRC-32
 * on every transfer).  The pinned values were taken from the code before the three
 * mixers became one; a change here is a change of protocol.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/base/hash.h"
#include "core/model/task.h"
#include "core/runtime/objstore.h"

/* splitmix64 (Steele, Lea, Flood 2014) from seed 0: its state after each increment,
 * mixed, gives the reference outputs. */
static void test_mix_is_splitmix64(void **state)
{
    (void)state;
    const uint64_t golden = 0x9e3779b97f4a7c15ULL;
    assert_int_equal(hash_mix64(1 * golden), 0xe220a8397b1dcdafULL);
    assert_int_equal(hash_mix64(2 * golden), 0x6e789e6aa1b965f4ULL);
    assert_int_equal(hash_mix64(3 * golden), 0x06c45d188009454fULL);
    assert_int_equal(hash_mix64(0), 0);
}

static void test_shard_owner_unchanged(void **state)
{
    (void)state;
    const struct {
        uint64_t key, hash;
        uint32_t owner13;   /* the hash's high half scaled to 13 nodes */
    } cases[] = {
        {1, 0x5692161d100b05e5ULL, 4},
        {task_key(1, 0), 0xd820b7e910b0f93fULL, 10},
        {task_key(1, 1), 0x106e11b2223f6961ULL, 0},
        {task_key(7, 123456), 0xd2bfd5a591adbbf5ULL, 10},
        {UINT64_MAX, 0xb4d055fcf2cbbd7bULL, 9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(task_key_hash(cases[i].key), cases[i].hash);
        assert_int_equal(task_key_owner(cases[i].key, 13), cases[i].owner13);
    }
}

static void test_synthetic_content_unchanged(void **state)
{
    (void)state;
    static const uint8_t want[24] = {0x49, 0xc8, 0x53, 0xef, 0x3e, 0x4c, 0xea, 0xfe,
                                     0x41, 0xae, 0xb6, 0x75, 0x7e, 0x91, 0xfe, 0xab,
                                     0x59, 0x47, 0x92, 0x35, 0x29, 0x5c, 0x18, 0xf9};
    uint8_t got[24];
    objstore_synthetic_fill(task_object_key(3, 5), 1000, got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mix_is_splitmix64),
        cmocka_unit_test(test_shard_owner_unchanged),
        cmocka_unit_test(test_synthetic_content_unchanged),
    };
    return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
