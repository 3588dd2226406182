/*
 * test_steal — unit tests for core/policy/steal.c, driven with hand-made states the
 * way the runtime and the simulator drive it.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy/steal.h"

#define MAX_VICTIMS 1024

static uint32_t expected_count(uint32_t nodes)
{
    uint32_t k = 0;
    while ((uint64_t)k * k < nodes)
        k++;
    if (nodes == 0)
        return 0;
    return k < nodes - 1 ? k : nodes - 1;
}

/* Draws `rounds` victim sets and checks each is the right size, distinct, not self
 * and in range. */
static void check_draws(const struct steal_params *p, uint32_t nodes, uint32_t self,
                        uint32_t want, int rounds, uint64_t *rng)
{
    struct steal_state s;
    uint32_t out[MAX_VICTIMS];
    unsigned char *seen = calloc(nodes ? nodes : 1, 1);

    assert_non_null(seen);
    steal_state_init(&s, p, nodes);
    for (int r = 0; r < rounds; r++) {
        uint32_t n = steal_pick_victims(p, &s, self, nodes, rng, out, MAX_VICTIMS);
        assert_int_equal(n, want);
        for (uint32_t i = 0; i < n; i++) {
            assert_true(out[i] < nodes);
            assert_int_not_equal(out[i], self);
            assert_int_equal(seen[out[i]], 0);
            seen[out[i]] = 1;
        }
        for (uint32_t i = 0; i < n; i++)
            seen[out[i]] = 0;
    }
    free(seen);
}

static void test_defaults_and_names(void **state)
{
    (void)state;
    struct steal_params p;
    steal_params_default(&p);
    assert_int_equal(p.mode, STEAL_ADAPTIVE);
    assert_int_equal(p.amount, STEAL_AMOUNT_HALF);
    assert_int_equal(p.neighbours, 0);
    assert_true(p.poll_initial_ms == 1.0);
    assert_true(p.poll_max_ms == 50000.0);
    assert_int_equal(p.widen_after, 3);
    assert_int_equal(p.widen_by, 2);

    assert_int_equal(steal_mode_parse("adaptive"), STEAL_ADAPTIVE);
    assert_int_equal(steal_mode_parse("random1"), STEAL_RANDOM1);
    assert_int_equal(steal_mode_parse("none"), STEAL_NONE);
    assert_int_equal(steal_mode_parse("Adaptive"), -1);
    assert_int_equal(steal_mode_parse(""), -1);
    assert_int_equal(steal_mode_parse(NULL), -1);
    assert_string_equal(steal_mode_name(STEAL_ADAPTIVE), "adaptive");
    assert_string_equal(steal_mode_name(STEAL_RANDOM1), "random1");
    assert_string_equal(steal_mode_name(STEAL_NONE), "none");
    assert_string_equal(steal_mode_name((enum steal_mode)42), "unknown");
}

static void test_state_init(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    steal_params_default(&p);
    steal_state_init(&s, &p, 100);
    assert_int_equal(s.failures, 0);
    assert_true(s.interval_ms == 1.0);
    assert_int_equal(s.neighbours, 10);
    assert_int_equal(s.base_neighbours, 10);
    assert_false(s.parked);

    p.neighbours = 4;
    steal_state_init(&s, &p, 100);
    assert_int_equal(s.neighbours, 4);
    steal_state_init(&s, &p, 3);
    assert_int_equal(s.neighbours, 2);

    p.mode = STEAL_RANDOM1;
    steal_state_init(&s, &p, 100);
    assert_int_equal(s.neighbours, 1);
    p.mode = STEAL_NONE;
    steal_state_init(&s, &p, 100);
    assert_int_equal(s.neighbours, 0);
}

static void test_victims_sqrt_count(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {1, 2, 3, 4, 5, 8, 9, 10, 100, 101, 10000};
    struct steal_params p;
    uint64_t rng = 0x1234567;
    steal_params_default(&p);

    assert_int_equal(expected_count(1), 0);
    assert_int_equal(expected_count(2), 1);
    assert_int_equal(expected_count(4), 2);
    assert_int_equal(expected_count(8), 3);
    assert_int_equal(expected_count(100), 10);
    assert_int_equal(expected_count(10000), 100);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t n = sizes[i];
        uint32_t want = expected_count(n);
        int rounds = n > 1000 ? 200 : 2000;
        check_draws(&p, n, 0, want, rounds, &rng);
        check_draws(&p, n, n - 1, want, rounds, &rng);
        check_draws(&p, n, n / 2, want, rounds, &rng);
    }
}

static void test_victims_large_cluster(void **state)
{
    (void)state;
    struct steal_params p;
    uint64_t rng = 99;
    steal_params_default(&p);
    /* 100,000 nodes, 317 victims: the common case at scale must stay cheap. */
    check_draws(&p, 100000, 4242, 317, 2000, &rng);
}

static void test_victims_large_fraction(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    uint32_t out[MAX_VICTIMS];
    uint64_t rng = 7;
    steal_params_default(&p);

    /* Fully widened: every other node, once each. */
    steal_state_init(&s, &p, 10);
    s.neighbours = 9;
    for (int r = 0; r < 1000; r++) {
        uint32_t seen = 0;
        uint32_t n = steal_pick_victims(&p, &s, 3, 10, &rng, out, MAX_VICTIMS);
        assert_int_equal(n, 9);
        for (uint32_t i = 0; i < n; i++) {
            assert_int_not_equal(out[i], 3);
            assert_true(out[i] < 10);
            seen |= 1u << out[i];
        }
        assert_int_equal(seen, 0x3ffu & ~(1u << 3));
    }

    /* A neighbour count above the candidates is clamped. */
    s.neighbours = 50;
    assert_int_equal(steal_pick_victims(&p, &s, 0, 10, &rng, out, MAX_VICTIMS), 9);

    /* Half of a large cluster takes the selection path; still distinct. */
    p.neighbours = 600;
    check_draws(&p, 1000, 500, 600, 50, &rng);
    /* Above what the stack seen-set holds. */
    p.neighbours = 3000;
    uint32_t *big = calloc(3000, sizeof *big);
    unsigned char *mark = calloc(100000, 1);
    assert_non_null(big);
    assert_non_null(mark);
    steal_state_init(&s, &p, 100000);
    assert_int_equal(s.neighbours, 3000);
    uint32_t n = steal_pick_victims(&p, &s, 0, 100000, &rng, big, 3000);
    assert_int_equal(n, 3000);
    for (uint32_t i = 0; i < n; i++) {
        assert_true(big[i] > 0 && big[i] < 100000);
        assert_int_equal(mark[big[i]], 0);
        mark[big[i]] = 1;
    }
    free(mark);
    free(big);
}

static void test_victims_respect_max(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    uint32_t out[4];
    uint64_t rng = 5;
    steal_params_default(&p);
    steal_state_init(&s, &p, 100);
    assert_int_equal(steal_pick_victims(&p, &s, 0, 100, &rng, out, 4), 4);
    assert_int_equal(steal_pick_victims(&p, &s, 0, 100, &rng, out, 0), 0);
    assert_int_equal(steal_pick_victims(&p, &s, 0, 100, &rng, NULL, 4), 0);
    assert_int_equal(steal_pick_victims(&p, &s, 0, 100, NULL, out, 4), 0);
}

static void test_random1_one_victim(void **state)
{
    (void)state;
    struct steal_params p;
    uint64_t rng = 11;
    steal_params_default(&p);
    p.mode = STEAL_RANDOM1;
    check_draws(&p, 2, 0, 1, 100, &rng);
    check_draws(&p, 100, 50, 1, 1000, &rng);
    check_draws(&p, 10000, 9999, 1, 1000, &rng);
    check_draws(&p, 1, 0, 0, 10, &rng);

    /* Failures do not widen the classic baseline. */
    struct steal_state s;
    uint32_t out[MAX_VICTIMS];
    steal_state_init(&s, &p, 100);
    for (int i = 0; i < 30; i++)
        steal_on_result(&p, &s, false, 100);
    assert_int_equal(s.neighbours, 1);
    assert_int_equal(steal_pick_victims(&p, &s, 0, 100, &rng, out, MAX_VICTIMS), 1);
}

/*
 * Counts how often each node is asked, and how often it is asked first (ties in
 * steal_choose_victim favour the first, so the order must be random too).
 */
static void check_uniform(uint32_t nodes, uint32_t self, int draws, uint64_t seed)
{
    struct steal_params p;
    struct steal_state s;
    uint32_t out[MAX_VICTIMS];
    uint64_t rng = seed;
    uint32_t *hits = calloc(nodes, sizeof *hits);
    uint32_t *first = calloc(nodes, sizeof *first);

    assert_non_null(hits);
    assert_non_null(first);
    steal_params_default(&p);
    steal_state_init(&s, &p, nodes);
    uint32_t k = s.neighbours;
    for (int d = 0; d < draws; d++) {
        uint32_t n = steal_pick_victims(&p, &s, self, nodes, &rng, out, MAX_VICTIMS);
        assert_int_equal(n, k);
        first[out[0]]++;
        for (uint32_t i = 0; i < n; i++)
            hits[out[i]]++;
    }
    double expect_hits = (double)draws * k / (nodes - 1);
    double expect_first = (double)draws / (nodes - 1);
    for (uint32_t i = 0; i < nodes; i++) {
        if (i == self) {
            assert_int_equal(hits[i], 0);
            continue;
        }
        assert_true(hits[i] > 0.8 * expect_hits && hits[i] < 1.2 * expect_hits);
        assert_true(first[i] > 0.7 * expect_first && first[i] < 1.3 * expect_first);
    }
    free(first);
    free(hits);
}

static void test_victims_uniform(void **state)
{
    (void)state;
    check_uniform(50, 7, 40000, 0xdeadbeef);   /* rejection path: 8 of 49 */
    check_uniform(8, 0, 40000, 0xfeedface);    /* selection path: 3 of 7 */
    check_uniform(8, 7, 40000, 0xabcdef);
    check_uniform(2, 1, 1000, 3);              /* the only peer, every time */
}

/* Each victim's rank is where it was drawn, and nodes not drawn (self among them) have
 * none: the simulator's backward reading agrees with the daemons' forward one. */
static void check_ranks(uint32_t nodes, uint32_t self, uint32_t k, uint64_t seed)
{
    struct steal_params p;
    struct steal_state s;
    struct steal_draw d;
    uint32_t out[MAX_VICTIMS];
    uint64_t rng = seed;
    unsigned char *in = calloc(nodes, 1);

    assert_non_null(in);
    steal_params_default(&p);
    p.victims = STEAL_VICTIMS_RANDOM;
    p.victims_k = k;
    steal_state_init(&s, &p, nodes);
    for (int round = 0; round < 20; round++) {
        uint64_t before = rng;
        uint32_t n = steal_draw_begin(&p, &s, self, nodes, &rng, MAX_VICTIMS, &d);
        assert_int_equal(n, k);
        assert_int_equal(d.mixed, nodes - (self < nodes) >= STEAL_DRAW_MIXED_MIN);
        steal_draw_all(&d, out);
        /* The same victims as steal_pick_victims from the same state. */
        uint32_t again[MAX_VICTIMS];
        assert_int_equal(steal_pick_victims(&p, &s, self, nodes, &before, again, MAX_VICTIMS), k);
        assert_memory_equal(out, again, k * sizeof out[0]);
        assert_int_equal(before, rng);
        for (uint32_t i = 0; i < k; i++) {
            assert_true(out[i] < nodes && out[i] != self);
            assert_int_equal(in[out[i]], 0);
            in[out[i]] = 1;
            assert_int_equal(steal_draw_rank(&d, out[i]), i);
            if (d.mixed)
                assert_int_equal(steal_draw_victim(&d, i), out[i]);
        }
        if (self < nodes)
            assert_int_equal(steal_draw_rank(&d, self), UINT32_MAX);
        /* The batch form agrees with the one-node form, self and past-the-end ids
         * included, a block boundary or two crossed. */
        if (round == 0) {
            uint32_t cnt = nodes < 3000 ? nodes + 1 : 3000;
            uint32_t *ids = calloc(cnt, sizeof *ids), *ranks = calloc(cnt, sizeof *ranks);
            assert_non_null(ids);
            assert_non_null(ranks);
            for (uint32_t i = 0; i < cnt; i++)
                ids[i] = cnt == nodes + 1 ? i : (uint32_t)((uint64_t)i * (nodes + 1) / cnt);
            ids[cnt - 1] = nodes;
            if (self < nodes)
                ids[cnt / 2] = self;
            for (uint32_t i = 0; i < k; i++)
                ids[(i * 7) % (cnt - 1)] = out[i];
            uint32_t *at = calloc(cnt, sizeof *at);
            assert_non_null(at);
            uint32_t got = steal_draw_find(&d, ids, cnt, at, ranks), j = 0;
            for (uint32_t i = 0; i < cnt; i++) {
                uint32_t r = steal_draw_rank(&d, ids[i]);
                if (r == UINT32_MAX)
                    continue;
                assert_true(j < got);
                assert_int_equal(at[j], i);
                assert_int_equal(ranks[j++], r);
            }
            assert_int_equal(j, got);
            assert_true(got > 0); /* the victims were put among them */
            free(at);
            free(ids);
            free(ranks);
        }
        assert_int_equal(steal_draw_rank(&d, nodes), UINT32_MAX);
        for (uint32_t c = 0; c < nodes; c += 1 + nodes / 500)
            if (!in[c])
                assert_int_equal(steal_draw_rank(&d, c), UINT32_MAX);
        for (uint32_t i = 0; i < k; i++)
            in[out[i]] = 0;
    }
    free(in);
}

static void test_draw_ranks(void **state)
{
    (void)state;
    check_ranks(50, 7, 8, 11);             /* the exact samplers, drawn again */
    check_ranks(50, 60, 30, 12);           /* self outside: every node a candidate */
    check_ranks(1024, 0, 32, 13);          /* 1023 candidates: still exact */
    check_ranks(1025, 0, 32, 14);          /* the first mixed size */
    check_ranks(1025, 1024, 32, 15);
    check_ranks(1500, 777, 39, 16);
    check_ranks(65537, 65536, 257, 17);    /* 2^16 candidates: no cycle-walking */
    check_ranks(1000000, 4242, 1000, 18);
    check_ranks(1000000, UINT32_MAX, 1024, 19);
    check_ranks(1100, 5, 1024, 20);         /* k near m: the last block mostly filler */
}

/* Ids that are no candidate (past the nodes, or self as the last node) are found in no
 * draw, and asking for them ends: started where they are, cycle-walking from a value
 * past m can loop for ever (a fixed point of the permutation up there, say). */
static void test_draw_find_past_the_candidates(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    struct steal_draw d;
    uint32_t ids[600], at[600], ranks[600];
    uint64_t rng = 77;
    steal_params_default(&p);
    p.victims = STEAL_VICTIMS_RANDOM;
    p.victims_k = 1000;
    steal_state_init(&s, &p, 1500);
    for (uint32_t i = 0; i < 600; i++)
        ids[i] = 1500 + i; /* candidates 0..1499 of 2^11: these are 1500..2099 */
    ids[599] = UINT32_MAX;
    for (int round = 0; round < 200; round++) {
        assert_int_equal(steal_draw_begin(&p, &s, UINT32_MAX, 1500, &rng, 1024, &d), 1000);
        assert_int_equal(steal_draw_find(&d, ids, 600, at, ranks), 0);
        assert_int_equal(steal_draw_begin(&p, &s, 1499, 1500, &rng, 1024, &d), 1000);
        ids[0] = 1499; /* self, the last node */
        assert_int_equal(steal_draw_find(&d, ids, 600, at, ranks), 0);
        ids[0] = 1500;
    }
}

/*
 * The mixed draw's statistics against a uniform random k-permutation, on 1,099
 * candidates (34 victims, as at 1,100 nodes): every node asked as often (chi-square of
 * the counts), first as often, and nodes close in id, or a power of two apart (what a
 * multiplier mod 2^bits could tie together), drawn together as often as any two.
 */
static void test_draw_mixed_uniform(void **state)
{
    (void)state;
    const uint32_t nodes = 1100, self = 17, draws = 100000;
    const uint32_t strides[] = {1, 2, 3, 64, 512, 1024};
    const size_t nstrides = sizeof strides / sizeof strides[0];
    struct steal_params p;
    struct steal_state s;
    uint32_t out[MAX_VICTIMS];
    uint64_t rng = 0x5eed;
    uint32_t *hits = calloc(nodes, sizeof *hits), *first = calloc(nodes, sizeof *first);
    unsigned char *in = calloc(nodes, 1);
    double together[6] = {0};

    assert_non_null(hits);
    assert_non_null(first);
    assert_non_null(in);
    steal_params_default(&p);
    steal_state_init(&s, &p, nodes);
    uint32_t k = s.neighbours, m = nodes - 1;
    assert_int_equal(k, 34);
    for (uint32_t r = 0; r < draws; r++) {
        assert_int_equal(steal_pick_victims(&p, &s, self, nodes, &rng, out, MAX_VICTIMS), k);
        first[out[0]]++;
        for (uint32_t i = 0; i < k; i++) {
            hits[out[i]]++;
            in[out[i]] = 1;
        }
        for (size_t j = 0; j < nstrides; j++)
            for (uint32_t i = 0; i < k; i++)
                together[j] += out[i] + strides[j] < nodes && in[out[i] + strides[j]];
        for (uint32_t i = 0; i < k; i++)
            in[out[i]] = 0;
    }
    double chi_hits = 0, chi_first = 0;
    double e_hits = (double)draws * k / m, e_first = (double)draws / m;
    for (uint32_t i = 0; i < nodes; i++) {
        if (i == self) {
            assert_int_equal(hits[i] + first[i], 0);
            continue;
        }
        chi_hits += (hits[i] - e_hits) * (hits[i] - e_hits) / e_hits;
        chi_first += (first[i] - e_first) * (first[i] - e_first) / e_first;
    }
    /* m - 1 degrees of freedom: mean 1098, standard deviation 47; the hits' counts
     * are those of a draw without replacement, a little tighter still. */
    assert_true(chi_hits < 1098 + 6 * 47);
    assert_true(chi_first < 1098 + 6 * 47);
    for (size_t j = 0; j < nstrides; j++) {
        /* Pairs (c, c + stride) among the candidates, self's two pairs left out, each
         * drawn together with probability k (k - 1) / (m (m - 1)). */
        double pairs = (double)(nodes - strides[j]) - 2;
        double expect = draws * pairs * k * (k - 1) / ((double)m * (m - 1));
        assert_true(together[j] > 0.95 * expect && together[j] < 1.05 * expect);
    }
    free(hits);
    free(first);
    free(in);
}

static void test_rng_zero_state(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    uint32_t out[MAX_VICTIMS];
    uint64_t rng = 0;
    steal_params_default(&p);
    steal_state_init(&s, &p, 100);
    /* A zero state would be a fixed point; it must not hang the picker. */
    assert_int_equal(steal_pick_victims(&p, &s, 0, 100, &rng, out, MAX_VICTIMS), 10);
    assert_int_not_equal(rng, 0);
    uint64_t a = 1, b = 1;
    assert_int_equal(steal_rng_next(&a), steal_rng_next(&b));
    assert_int_not_equal(steal_rng_next(&a), steal_rng_next(&a));
}

static void test_choose_victim(void **state)
{
    (void)state;
    const uint32_t loads1[] = {3, 9, 4, 1};
    const uint32_t zeros[] = {0, 0, 0};
    const uint32_t ties[] = {0, 5, 2, 5, 5};
    const uint32_t last[] = {0, 0, 1};
    assert_int_equal(steal_choose_victim(loads1, 4), 1);
    assert_int_equal(steal_choose_victim(zeros, 3), -1);
    assert_int_equal(steal_choose_victim(ties, 5), 1);
    assert_int_equal(steal_choose_victim(last, 3), 2);
    assert_int_equal(steal_choose_victim(loads1, 0), -1);
    assert_int_equal(steal_choose_victim(NULL, 3), -1);
}

static void test_amount_half(void **state)
{
    (void)state;
    struct steal_params p;
    steal_params_default(&p);
    assert_int_equal(steal_amount(&p, 0), 0);
    assert_int_equal(steal_amount(&p, 1), 1);
    assert_int_equal(steal_amount(&p, 2), 1);
    assert_int_equal(steal_amount(&p, 3), 2);
    assert_int_equal(steal_amount(&p, 10), 5);
    assert_int_equal(steal_amount(&p, UINT32_MAX), UINT32_MAX / 2 + 1);
}

static void test_backoff_sequence(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    steal_params_default(&p);
    steal_state_init(&s, &p, 64);

    double want = 1.0;
    uint32_t fails = 0;
    while (want < 50000.0) {
        steal_on_result(&p, &s, false, 64);
        fails++;
        assert_int_equal(s.failures, fails);
        assert_true(s.interval_ms == want);
        assert_false(s.parked);
        want *= 2;
    }
    /* 1, 2, ..., 32768 then the doubling reaches the 50 s bound. */
    assert_int_equal(fails, 16);
    steal_on_result(&p, &s, false, 64);
    assert_true(s.interval_ms == 50000.0);
    assert_true(s.parked);
    steal_on_result(&p, &s, false, 64);
    assert_true(s.interval_ms == 50000.0);
    assert_true(s.parked);

    /* A bound that the doubling hits exactly parks there too. */
    p.poll_max_ms = 8.0;
    steal_state_init(&s, &p, 64);
    const double seq[] = {1, 2, 4};
    for (size_t i = 0; i < 3; i++) {
        steal_on_result(&p, &s, false, 64);
        assert_true(s.interval_ms == seq[i]);
        assert_false(s.parked);
    }
    steal_on_result(&p, &s, false, 64);
    assert_true(s.interval_ms == 8.0);
    assert_true(s.parked);

    /* Another start scales the whole sequence. */
    p.poll_initial_ms = 5.0;
    p.poll_max_ms = 1000.0;
    steal_state_init(&s, &p, 64);
    steal_on_result(&p, &s, false, 64);
    assert_true(s.interval_ms == 5.0);
    steal_on_result(&p, &s, false, 64);
    assert_true(s.interval_ms == 10.0);
}

static void test_reset_on_success(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    steal_params_default(&p);
    steal_state_init(&s, &p, 100);
    for (int i = 0; i < 40; i++)
        steal_on_result(&p, &s, false, 100);
    assert_true(s.parked);
    assert_true(s.neighbours > 10);
    steal_on_result(&p, &s, true, 100);
    assert_int_equal(s.failures, 0);
    assert_true(s.interval_ms == 1.0);
    assert_int_equal(s.neighbours, 10);
    assert_false(s.parked);
    /* And the next failure starts the sequence over. */
    steal_on_result(&p, &s, false, 100);
    assert_true(s.interval_ms == 1.0);
    steal_on_result(&p, &s, false, 100);
    assert_true(s.interval_ms == 2.0);
}

static void test_widening(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    steal_params_default(&p);
    steal_state_init(&s, &p, 16);
    assert_int_equal(s.neighbours, 4);
    const uint32_t want[] = {4, 4, 6, 6, 6, 8, 8, 8, 10, 10, 10, 12, 12, 12, 14,
                             14, 14, 15, 15, 15, 15};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        steal_on_result(&p, &s, false, 16);
        assert_int_equal(s.neighbours, want[i]);
    }

    /* The cap applies even when one widening step would overshoot it. */
    steal_state_init(&s, &p, 5);
    assert_int_equal(s.neighbours, 3);
    for (int i = 0; i < 3; i++)
        steal_on_result(&p, &s, false, 5);
    assert_int_equal(s.neighbours, 4);
    for (int i = 0; i < 30; i++)
        steal_on_result(&p, &s, false, 5);
    assert_int_equal(s.neighbours, 4);

    /* widen_after 0 turns widening off. */
    p.widen_after = 0;
    steal_state_init(&s, &p, 100);
    for (int i = 0; i < 30; i++)
        steal_on_result(&p, &s, false, 100);
    assert_int_equal(s.neighbours, 10);

    /* The picker follows the widened count. */
    uint32_t out[MAX_VICTIMS];
    uint64_t rng = 77;
    p.widen_after = 3;
    steal_state_init(&s, &p, 100);
    for (int i = 0; i < 6; i++)
        steal_on_result(&p, &s, false, 100);
    assert_int_equal(s.neighbours, 14);
    assert_int_equal(steal_pick_victims(&p, &s, 0, 100, &rng, out, MAX_VICTIMS), 14);
}

static void test_wake(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    steal_params_default(&p);
    steal_state_init(&s, &p, 100);
    for (int i = 0; i < 20; i++)
        steal_on_result(&p, &s, false, 100);
    assert_true(s.parked);
    assert_int_equal(s.neighbours, 22);

    steal_on_wake(&p, &s);
    assert_false(s.parked);
    assert_int_equal(s.failures, 0);
    assert_true(s.interval_ms == 1.0);
    assert_int_equal(s.neighbours, 10);
    /* Back-off restarts from the beginning after the wake-up. */
    steal_on_result(&p, &s, false, 100);
    assert_true(s.interval_ms == 1.0);
    steal_on_result(&p, &s, false, 100);
    assert_true(s.interval_ms == 2.0);
}

static void test_none_never_steals(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    uint32_t out[MAX_VICTIMS];
    uint64_t rng = 1;
    steal_params_default(&p);
    p.mode = STEAL_NONE;
    const struct steal_self idle = {.lready = 0, .sready = 0, .free_slots = 8};
    assert_false(steal_starving(&p, &idle));
    steal_state_init(&s, &p, 100);
    assert_int_equal(steal_pick_victims(&p, &s, 0, 100, &rng, out, MAX_VICTIMS), 0);
    p.mode = (enum steal_mode)9;
    assert_false(steal_starving(&p, &idle));
}

static void test_starving(void **state)
{
    (void)state;
    struct steal_params p;
    steal_params_default(&p);
    const struct steal_self cases[] = {
        {0, 0, 1, 0, 0}, {0, 0, 0, 0, 0}, {1, 0, 1, 0, 0}, {0, 1, 1, 0, 0}, {3, 4, 2, 0, 0},
        {0, 0, 16, 0, 0},
    };
    const bool want[] = {true, false, false, false, false, true};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(steal_starving(&p, &cases[i]), want[i]);
    p.mode = STEAL_RANDOM1;
    assert_true(steal_starving(&p, &cases[0]));
    assert_false(steal_starving(&p, &cases[2]));
    assert_false(steal_starving(&p, NULL));
}

/* A node told that tasks are on their way to it waits for them, under every starvation
 * test, and starves again as soon as the last has arrived. */
static void test_arriving_is_not_starving(void **state)
{
    (void)state;
    struct steal_params p;
    steal_params_default(&p);
    const enum steal_starvation tests[] = {STEAL_STARVE_READY, STEAL_STARVE_SUCCESSORS,
                                           STEAL_STARVE_PREEMPTIVE};
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        p.starvation = tests[i];
        struct steal_self idle = {.free_slots = 4, .arriving = 1};
        assert_false(steal_starving(&p, &idle));
        idle.arriving = 0;
        assert_true(steal_starving(&p, &idle));
    }
}

static void test_single_node(void **state)
{
    (void)state;
    struct steal_params p;
    struct steal_state s;
    uint32_t out[MAX_VICTIMS];
    uint64_t rng = 3;
    steal_params_default(&p);
    steal_state_init(&s, &p, 1);
    assert_int_equal(s.neighbours, 0);
    assert_int_equal(steal_pick_victims(&p, &s, 0, 1, &rng, out, MAX_VICTIMS), 0);
    for (int i = 0; i < 10; i++)
        steal_on_result(&p, &s, false, 1);
    assert_int_equal(s.neighbours, 0);
    /* A cluster that grew later still gets asked. */
    assert_int_equal(steal_pick_victims(&p, &s, 0, 4, &rng, out, MAX_VICTIMS), 1);
    assert_true(out[0] >= 1 && out[0] < 4);
}

/* The progress rule's victim half: free slots first take LReadyQ's startable tasks,
 * then SReadyQ's; what they would start is never granted. */
static void test_keep_for_free_slots(void **state)
{
    (void)state;
    assert_int_equal(steal_keep(0, 0, 5), 0);  /* no free slot: all stealable */
    assert_int_equal(steal_keep(2, 0, 5), 2);  /* two free slots keep two */
    assert_int_equal(steal_keep(2, 1, 5), 1);  /* LReadyQ fills one of them */
    assert_int_equal(steal_keep(2, 3, 5), 0);  /* LReadyQ fills both */
    assert_int_equal(steal_keep(4, 0, 1), 1);  /* never more than there is */
    assert_int_equal(steal_keep(1, 0, 0), 0);
}

static void test_grant_amounts(void **state)
{
    (void)state;
    struct steal_params p;
    steal_params_default(&p);
    assert_int_equal(steal_grant(&p, 5, 0), 3);  /* half, rounded up */
    assert_int_equal(steal_grant(&p, 5, 2), 2);  /* the request's bound */
    assert_int_equal(steal_grant(&p, 0, 0), 0);
    assert_int_equal(steal_parse_amount("a2ws", &p), 0);
    assert_int_equal(steal_grant(&p, 7, 5), 5);  /* the thief's equation decides */
    assert_int_equal(steal_grant(&p, 7, 0), 4);  /* unbounded: the classic half */
    assert_int_equal(steal_parse_amount("single", &p), 0);
    assert_int_equal(steal_grant(&p, 7, 0), 1);
}

/*
 * The load both the daemons and the simulator read (steal_load_*): staged tasks hold
 * slots, staging ones only without a window; a backlog of data tasks no longer than the
 * window is not ready work to the starvation test, a longer one is; a victim keeps for
 * its free slots no-data tasks only.
 */
static void test_load(void **state)
{
    (void)state;
    struct steal_load l = {.slots = 4, .busy = 1, .staged_slots = 1, .staging = 2,
                           .lready = 3, .sready = 5, .lready_zero = 0, .sready_zero = 4,
                           .window = 4};
    assert_int_equal(steal_load_free_slots(&l), 2);
    l.window = 0;
    assert_int_equal(steal_load_free_slots(&l), 0);
    l.window = 4;
    /* 3 + 1 tasks wait for the window: only the 4 without data count. */
    struct steal_self s = steal_load_self(&l);
    assert_int_equal(s.lready, 0);
    assert_int_equal(s.sready, 4);
    assert_int_equal(s.free_slots, 2);
    l.lready = 6; /* 6 + 1 data tasks: more than a window, all count */
    s = steal_load_self(&l);
    assert_int_equal(s.lready, 6);
    assert_int_equal(s.sready, 5);
    /* Two free slots keep two of SReadyQ's no-data tasks. */
    assert_int_equal(steal_load_giveable(&l), 3);
    l.sready_zero = 1;
    assert_int_equal(steal_load_giveable(&l), 4);
    l.busy = 4;
    assert_int_equal(steal_load_giveable(&l), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_names),
        cmocka_unit_test(test_state_init),
        cmocka_unit_test(test_victims_sqrt_count),
        cmocka_unit_test(test_victims_large_cluster),
        cmocka_unit_test(test_victims_large_fraction),
        cmocka_unit_test(test_victims_respect_max),
        cmocka_unit_test(test_random1_one_victim),
        cmocka_unit_test(test_victims_uniform),
        cmocka_unit_test(test_draw_ranks),
        cmocka_unit_test(test_draw_find_past_the_candidates),
        cmocka_unit_test(test_draw_mixed_uniform),
        cmocka_unit_test(test_rng_zero_state),
        cmocka_unit_test(test_choose_victim),
        cmocka_unit_test(test_amount_half),
        cmocka_unit_test(test_backoff_sequence),
        cmocka_unit_test(test_reset_on_success),
        cmocka_unit_test(test_widening),
        cmocka_unit_test(test_wake),
        cmocka_unit_test(test_none_never_steals),
        cmocka_unit_test(test_starving),
        cmocka_unit_test(test_arriving_is_not_starving),
        cmocka_unit_test(test_single_node),
        cmocka_unit_test(test_keep_for_free_slots),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_grant_amounts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
