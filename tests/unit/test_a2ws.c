/*
 * test_a2ws — unit tests for core/policy/a2ws.c: the equations of paper 001 (eq. 4–10)
 * against values worked by hand (the working is in the comments), the window and the
 * flag rules of Table 1, the ring propagation in a deterministic simulation of N
 * nodes that exchange only their dirty entries, a death (a2ws_on_down: the entry
 * emptied and counted nowhere, the live neighbours the writers), and the window layout
 * the simulator keeps giving what the layout by node id gives.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy/a2ws.h"
#include "core/policy/steal.h"

static void assert_near(double got, double want)
{
    if (fabs(got - want) > 1e-6) {
        print_error("got %.9f, want %.9f\n", got, want);
        fail();
    }
}

/* A vector over `nodes` nodes with every entry known: n[j] tasks, node time t[j]
 * (slots 1, so t_run is the node time), avail[j] stealable. */
struct fixture {
    struct a2ws_vec v;
    struct a2ws_entry e[16];
};

static void setup_vec(struct fixture *f, uint32_t self, uint32_t nodes, uint32_t radius,
                      const double *t_run, const uint32_t *n, const uint32_t *avail)
{
    assert_true(nodes <= 16);
    a2ws_vec_init(&f->v, f->e, self, nodes, radius);
    for (uint32_t j = 0; j < nodes; j++) {
        f->e[j].t_run = t_run[j];
        f->e[j].n = n[j];
        f->e[j].avail = avail ? avail[j] : 0;
        f->e[j].slots = 1;
        f->e[j].version = 1;
        f->e[j].dirty = 0;
    }
}

/* ---- equations ----------------------------------------------------------------------- */

static void test_eq4_whole_system(void **state)
{
    (void)state;
    /*
     * Three nodes, 10 tasks each, node times 1, 2 and 4 s per task.
     *   N = 30, T = 1/1 + 1/2 + 1/4 = 1.75
     *   S_0 = 30 / (1 · 1.75) − 10 = 17.142857 − 10 =  7.142857
     *   S_1 = 30 / (2 · 1.75) − 10 =  8.571429 − 10 = −1.428571
     *   S_2 = 30 / (4 · 1.75) − 10 =  4.285714 − 10 = −5.714286   (they sum to 0)
     */
    assert_near(a2ws_steal_rate(30, 1.75, 10, 1), 50.0 / 7.0);
    assert_near(a2ws_steal_rate(30, 1.75, 10, 2), -10.0 / 7.0);
    assert_near(a2ws_steal_rate(30, 1.75, 10, 4), -40.0 / 7.0);
    /* Nothing known, nothing to say. */
    assert_near(a2ws_steal_rate(30, 0, 10, 1), 0);
    assert_near(a2ws_steal_rate(30, 1.75, 10, 0), 0);

    /* The same through the vector: R = 1 on 3 nodes is the whole system. */
    struct fixture f;
    double t[3] = {1, 2, 4};
    uint32_t n[3] = {10, 10, 10};
    setup_vec(&f, 0, 3, 1, t, n, NULL);
    struct a2ws_now now = {.elapsed_s = 5, .starving = false};
    assert_near(a2ws_rate(&f.v, &now, 0), 50.0 / 7.0);
    assert_near(a2ws_rate(&f.v, &now, 1), -10.0 / 7.0);
    assert_near(a2ws_rate(&f.v, &now, 2), -40.0 / 7.0);
}

static void test_eq5_radius(void **state)
{
    (void)state;
    /*
     * Eight nodes, R = 1: node 0 sees nodes 7, 0 and 1 only.
     *   n_7 = 20, t_7 = 2;  n_0 = 4, t_0 = 1;  n_1 = 6, t_1 = 1;  the others hold 100.
     *   N = 20 + 4 + 6 = 30, T = 1/2 + 1 + 1 = 2.5
     *   S_0 = 30 / (1 · 2.5) − 4 = 12 − 4 = 8
     *   S_7 = 30 / (2 · 2.5) − 20 = 6 − 20 = −14
     *   S_1 = 12 − 6 = 6
     * A node outside the window has no rate here.
     */
    struct fixture f;
    double t[8] = {1, 1, 3, 3, 3, 3, 3, 2};
    uint32_t n[8] = {4, 6, 100, 100, 100, 100, 100, 20};
    setup_vec(&f, 0, 8, 1, t, n, NULL);
    struct a2ws_now now = {.elapsed_s = 1, .starving = false};
    assert_near(a2ws_rate(&f.v, &now, 0), 8);
    assert_near(a2ws_rate(&f.v, &now, 7), -14);
    assert_near(a2ws_rate(&f.v, &now, 1), 6);
    assert_near(a2ws_rate(&f.v, &now, 4), 0);

    /* Slots: a node with 4 slots and 4 s tasks is as fast as one slot of 1 s tasks.
     *   node 7: t_run 8, slots 4 → t_7 = 2 as before. */
    f.e[7].t_run = 8;
    f.e[7].slots = 4;
    assert_near(a2ws_rate(&f.v, &now, 0), 8);
}

static void test_eq6_to_8_rounding(void **state)
{
    (void)state;
    /*
     * Thief i: n_i = 4, t_i = 1.  Victim j: n_j = 20, t_j = 2.  s = 7.5.
     *   γ(7) = max((20 − 7)·2, (4 + 7)·1) = max(26, 11) = 26
     *   γ(8) = max((20 − 8)·2, (4 + 8)·1) = max(24, 12) = 24
     *   γ(⌊s⌋) < γ(⌈s⌉) is false, so D = ⌈s⌉ = 8.
     */
    assert_near(a2ws_gamma(7, 4, 1, 20, 2), 26);
    assert_near(a2ws_gamma(8, 4, 1, 20, 2), 24);
    assert_int_equal(a2ws_round(7.5, 4, 1, 20, 2), 8);
    /*
     * Thief i: n_i = 10, t_i = 3 (slow).  Victim j: n_j = 10, t_j = 1.  s = 0.5.
     *   γ(0) = max(10·1, 10·3) = 30;  γ(1) = max(9·1, 11·3) = 33  →  D = ⌊s⌋ = 0.
     */
    assert_int_equal(a2ws_round(0.5, 10, 3, 10, 1), 0);
    /*
     * A tie: n_i = 0, t_i = 1; n_j = 5, t_j = 1; s = 2.5.
     *   γ(2) = max(3, 2) = 3;  γ(3) = max(2, 3) = 3  →  not <, so ⌈s⌉ = 3.
     */
    assert_int_equal(a2ws_round(2.5, 0, 1, 5, 1), 3);
    /* Whole numbers stay; nothing to steal rounds to nothing. */
    assert_int_equal(a2ws_round(4.0, 1, 1, 9, 1), 4);
    assert_int_equal(a2ws_round(0, 1, 1, 9, 1), 0);
    assert_int_equal(a2ws_round(-3.2, 1, 1, 9, 1), 0);
    assert_int_equal(a2ws_round(NAN, 1, 1, 9, 1), 0);
}

static void test_eq9_10_pair(void **state)
{
    (void)state;
    /*
     * n_i = 2, t_i = 1; n_j = 10, t_j = 3.
     *   eq. 10: (2 + 10)·3 / (3 + 1) − 2 = 36/4 − 2 = 7
     *   eq. 9:  (2 + 10) / (1 · (1/1 + 1/3)) − 2 = 12 / (4/3) − 2 = 9 − 2 = 7
     * and from j's side it is the opposite: (12)·1/4 − 10 = −7.
     */
    assert_near(a2ws_pair_rate(2, 1, 10, 3), 7);
    assert_near(12.0 / (1.0 * (1.0 / 1 + 1.0 / 3)) - 2, 7);
    assert_near(a2ws_pair_rate(10, 3, 2, 1), -7);
    assert_near(a2ws_pair_rate(1, 0, 1, 0), 0);
}

/* ---- decisions ------------------------------------------------------------------------ */

static void test_preemptive(void **state)
{
    (void)state;
    /*
     * Three nodes, 10 tasks each, one slot.  Node 0 finished its first task in 1 s
     * (t_run 1); nodes 1 and 2 have finished none.
     * At elapsed 1 s the estimate makes them as fast as node 0:
     *   t = 1, 1, 1: N = 30, T = 3, S_0 = 30/3 − 10 = 0  →  no steal (the paper's
     *   "all processes have similar performance").
     * At elapsed 2 s (node 0 finished its second task, still 1 s each):
     *   t = 1, 2, 2: T = 1 + 0.5 + 0.5 = 2
     *   S_0 = 30/(1·2) − 10 = 5;  S_1 = S_2 = 30/(2·2) − 10 = −2.5
     *   closest rate: s = min(S_0, −S_j) = 2.5 (capped by the victim's surplus, not 5)
     *   γ(2) = max((10 − 2)·2, (10 + 2)·1) = 16;  γ(3) = max(14, 13) = 14  →  D = 3
     *   both victims weigh 1/(1 + |5 − 2.5|): each drawn half the time.
     */
    struct fixture f;
    double t[3] = {1, 0, 0};
    uint32_t n[3] = {10, 10, 10};
    uint32_t avail[3] = {9, 9, 9};
    setup_vec(&f, 0, 3, 1, t, n, avail);
    uint64_t rng = 42;
    struct a2ws_now now = {.elapsed_s = 1, .starving = false};
    struct a2ws_decision d = a2ws_plan(&f.v, &now, &rng);
    assert_near(d.rate, 0);
    assert_int_equal(d.criterion, A2WS_NO_STEAL);

    now.elapsed_s = 2;
    assert_near(a2ws_node_time(&f.e[1], 2, 0), 2);
    int hits[3] = {0, 0, 0};
    for (int i = 0; i < 2000; i++) {
        d = a2ws_plan(&f.v, &now, &rng);
        assert_int_equal(d.criterion, A2WS_CLOSEST_RATE);
        assert_int_equal(d.amount, 3);
        assert_near(d.rate, 5);
        assert_true(d.victim == 1 || d.victim == 2);
        hits[d.victim]++;
    }
    assert_true(hits[1] > 850 && hits[2] > 850);

    /* Not before the node's own first finished task, unless it starves. */
    f.e[0].t_run = 0;
    now.elapsed_s = 2;
    d = a2ws_plan(&f.v, &now, &rng);
    assert_int_equal(d.criterion, A2WS_NO_STEAL);

    /* A victim with nothing stealable is never asked. */
    f.e[0].t_run = 1;
    f.e[1].avail = 0;
    f.e[2].avail = 0;
    d = a2ws_plan(&f.v, &now, &rng);
    assert_int_equal(d.criterion, A2WS_NO_STEAL);
    /* ... and one with less than D gives what it has. */
    f.e[2].avail = 2;
    d = a2ws_plan(&f.v, &now, &rng);
    assert_int_equal(d.criterion, A2WS_CLOSEST_RATE);
    assert_int_equal(d.victim, 2);
    assert_int_equal(d.amount, 2);
}

static void test_closest_rate_probabilities(void **state)
{
    (void)state;
    /*
     * Four nodes, R = 2 (window: all of them), every t = 1, n = 6, 13, 11, 10.
     *   N = 40, T = 4, N/(t·T) = 10:  S_0 = 4, S_1 = −3, S_2 = −1, S_3 = 0
     *   candidates (S_j < 0): node 1, s = min(4, 3) = 3 → D = 3, weight 1/(1 + |4 − 3|) = 1/2
     *                         node 2, s = min(4, 1) = 1 → D = 1, weight 1/(1 + |4 − 1|) = 1/4
     *   P(node 1) = (1/2) / (3/4) = 2/3,  P(node 2) = 1/3;  node 3 (S = 0) never.
     */
    struct fixture f;
    double t[4] = {1, 1, 1, 1};
    uint32_t n[4] = {6, 13, 11, 10};
    uint32_t avail[4] = {0, 8, 8, 8};
    setup_vec(&f, 0, 4, 2, t, n, avail);
    uint64_t rng = 7;
    struct a2ws_now now = {.elapsed_s = 3, .starving = true};
    int hits[4] = {0, 0, 0, 0};
    const int draws = 30000;
    for (int i = 0; i < draws; i++) {
        struct a2ws_decision d = a2ws_plan(&f.v, &now, &rng);
        assert_int_equal(d.criterion, A2WS_CLOSEST_RATE);
        assert_near(d.rate, 4);
        assert_int_equal(d.amount, d.victim == 1 ? 3 : 1);
        hits[d.victim]++;
    }
    assert_int_equal(hits[0], 0);
    assert_int_equal(hits[3], 0);
    double p1 = (double)hits[1] / draws;
    assert_true(fabs(p1 - 2.0 / 3.0) < 0.015);
    /* The same seed makes the same draws. */
    uint64_t a = 99, b = 99;
    for (int i = 0; i < 50; i++)
        assert_int_equal(a2ws_plan(&f.v, &now, &a).victim, a2ws_plan(&f.v, &now, &b).victim);
}

static void test_in_pair(void **state)
{
    (void)state;
    /*
     * Three nodes, R = 1, node times 1, 3, 1; n = 10, 4, 16; node 0 starving.
     *   N = 30, T = 1 + 1/3 + 1 = 7/3
     *   S_0 = 30/(7/3) − 10 = 2.857;  S_1 = 30/(3 · 7/3) − 4 = 0.286;  S_2 = 12.857 − 16 = −3.143
     *   Closest rate wants node 2, but node 2 has nothing stealable (avail 0), and node 1
     *   has S_1 > 0: the subsystem looks balanced to the thief, yet node 1 holds 3 tasks.
     *   In pair with node 1 (eq. 10): (10 + 4)·3/(3 + 1) − 10 = 0.5
     *     γ(0) = max(4·3, 10·1) = 12;  γ(1) = max(3·3, 11·1) = 11  →  D = 1.
     */
    struct fixture f;
    double t[3] = {1, 3, 1};
    uint32_t n[3] = {10, 4, 16};
    uint32_t avail[3] = {0, 3, 0};
    setup_vec(&f, 0, 3, 1, t, n, avail);
    uint64_t rng = 5;
    struct a2ws_now now = {.elapsed_s = 3, .starving = true};
    struct a2ws_decision d = a2ws_plan(&f.v, &now, &rng);
    assert_int_equal(d.criterion, A2WS_IN_PAIR);
    assert_int_equal(d.victim, 1);
    assert_int_equal(d.amount, 1);
    assert_near(d.rate, 30.0 / (7.0 / 3.0) - 10);

    /* A busy node does not go in pair when it already holds its share (S_i <= 0). */
    f.e[0].n = 20; /* N = 40, S_0 = 40/(7/3) − 20 = −2.86 */
    now.starving = false;
    d = a2ws_plan(&f.v, &now, &rng);
    assert_int_equal(d.criterion, A2WS_NO_STEAL);
    assert_true(d.rate < 0);

    /* The amount for a victim chosen elsewhere (sqrt victims, a2ws amount). */
    f.e[0].n = 10;
    now.starving = true;
    assert_int_equal(a2ws_amount_for(&f.v, &now, 1), 1);
    /* Node 2: closest rate s = min(2.857, 3.143) = 2.857; γ(2) = max(14, 12) = 14,
     * γ(3) = max(13, 13) = 13 → 3 (not capped by its avail of 0 here). */
    assert_int_equal(a2ws_amount_for(&f.v, &now, 2), 3);
    assert_int_equal(a2ws_amount_for(&f.v, &now, 0), 0);
}

static void test_idle_node_prior(void **state)
{
    (void)state;
    /*
     * An idle node that never ran a task (n = 0) is not "slow": it takes the mean run
     * time of the nodes that finished some.  Nodes: 0 idle and starving, 1 ran tasks of
     * 1 s and holds 40, 2 idle.  Both idle nodes get t = 1:
     *   N = 40, T = 3, S_0 = 40/3 = 13.33, S_1 = 40/3 − 40 = −26.67
     *   s = min(13.33, 26.67) = 13.33;  γ(13) = max(27, 13) = 27, γ(14) = max(26, 14) = 26
     *   → 14.
     */
    struct fixture f;
    double t[3] = {0, 1, 0};
    uint32_t n[3] = {0, 40, 0};
    uint32_t avail[3] = {0, 38, 0};
    setup_vec(&f, 0, 3, 1, t, n, avail);
    assert_near(a2ws_node_time(&f.e[0], 0.5, 1), 1);
    uint64_t rng = 1;
    struct a2ws_now now = {.elapsed_s = 0.5, .starving = true};
    struct a2ws_decision d = a2ws_plan(&f.v, &now, &rng);
    assert_int_equal(d.criterion, A2WS_CLOSEST_RATE);
    assert_int_equal(d.victim, 1);
    assert_int_equal(d.amount, 14);
    /* Nodes never heard of do not count. */
    f.e[2].version = 0;
    d = a2ws_plan(&f.v, &now, &rng);
    /* N = 40, T = 2: S_0 = 20, S_1 = −20 → 20. */
    assert_int_equal(d.amount, 20);
}

/* ---- window, flags, merge --------------------------------------------------------------- */

static void test_window(void **state)
{
    (void)state;
    struct a2ws_entry e[16];
    struct a2ws_vec v;
    int32_t off;

    assert_int_equal(a2ws_radius_default(1), 1);
    assert_int_equal(a2ws_radius_default(2), 1);
    assert_int_equal(a2ws_radius_default(8), 2);   /* 1.6 */
    assert_int_equal(a2ws_radius_default(10), 2);
    assert_int_equal(a2ws_radius_default(64), 13); /* 12.8 */
    assert_int_equal(a2ws_radius_default(128), 26);
    assert_int_equal(a2ws_radius_default(160), 32);
    assert_int_equal(a2ws_radius_default(163), A2WS_RADIUS_MAX); /* 32.6, capped */
    assert_int_equal(a2ws_radius_default(UINT32_MAX), A2WS_RADIUS_MAX);

    a2ws_vec_init(&v, e, 3, 8, 2); /* Figure 1: p3 of 8, R = 2 sees p1..p5 */
    assert_int_equal(v.left, 2);
    assert_int_equal(v.right, 2);
    assert_true(a2ws_offset(&v, 1, &off) && off == -2);
    assert_true(a2ws_offset(&v, 5, &off) && off == 2);
    assert_true(a2ws_offset(&v, 3, &off) && off == 0);
    assert_false(a2ws_offset(&v, 0, &off));
    assert_false(a2ws_offset(&v, 6, &off));
    assert_false(a2ws_offset(&v, 8, &off));
    assert_int_equal(a2ws_node_at(&v, -4), 7);
    assert_int_equal(a2ws_node_at(&v, 9), 4);

    /* Wrapping: node 0 of 8 sees 6, 7, 1, 2. */
    a2ws_vec_init(&v, e, 0, 8, 0);
    assert_true(a2ws_offset(&v, 6, &off) && off == -2);
    assert_true(a2ws_offset(&v, 2, &off) && off == 2);
    assert_false(a2ws_offset(&v, 5, &off));

    /* A radius beyond the ring: 7 others, one writer per position. */
    a2ws_vec_init(&v, e, 0, 8, 4);
    assert_int_equal(v.left, 3);
    assert_int_equal(v.right, 4);
    assert_true(a2ws_offset(&v, 4, &off) && off == 4);
    assert_true(a2ws_offset(&v, 5, &off) && off == -3);
    assert_int_equal(a2ws_window_others(&v), 7);

    a2ws_vec_init(&v, e, 1, 2, 5);
    assert_int_equal(v.left, 0);
    assert_int_equal(v.right, 1);
    a2ws_vec_init(&v, e, 0, 1, 5);
    assert_int_equal(a2ws_window_others(&v), 0);
}

static void test_table1_flags(void **state)
{
    (void)state;
    struct a2ws_entry e[8];
    struct a2ws_vec v;
    a2ws_vec_init(&v, e, 3, 8, 2);

    /* Row 1: p_i updates t_i — its own entry, for both neighbours, with a new version. */
    assert_true(a2ws_set_self(&v, 0.5, 10, 4, 2));
    assert_int_equal(e[3].version, 1);
    assert_int_equal(e[3].dirty, A2WS_DIRTY_LEFT | A2WS_DIRTY_RIGHT);
    /* Nothing new, no flag and no version. */
    e[3].dirty = 0;
    assert_false(a2ws_set_self(&v, 0.5, 10, 4, 2));
    assert_int_equal(e[3].dirty, 0);
    assert_int_equal(e[3].version, 1);
    /* Row 4: the victim realised it was stolen from — its counts change. */
    assert_true(a2ws_set_self(&v, 0.5, 7, 1, 2));
    assert_int_equal(e[3].version, 2);
    assert_int_equal(e[3].dirty, A2WS_DIRTY_LEFT | A2WS_DIRTY_RIGHT);

    /* Rows 2 and 3: the thief flags its victim (steal or not), and itself when it stole.
     * Node 5 is right of 3: its entry travels left; node 1 travels right. */
    e[3].dirty = 0;
    e[5].version = 4;
    e[1].version = 9;
    a2ws_on_steal(&v, 5, false);
    assert_int_equal(e[5].dirty, A2WS_DIRTY_LEFT);
    assert_int_equal(e[3].dirty, 0);
    a2ws_on_steal(&v, 1, true);
    assert_int_equal(e[1].dirty, A2WS_DIRTY_RIGHT);
    assert_int_equal(e[3].dirty, A2WS_DIRTY_LEFT | A2WS_DIRTY_RIGHT);
    /* Outside the window, or never heard of: nothing to flag. */
    a2ws_flag(&v, 7);
    assert_int_equal(e[7].dirty, 0);
    a2ws_flag(&v, 4);
    assert_int_equal(e[4].dirty, 0);
}

static void test_merge_rules(void **state)
{
    (void)state;
    struct a2ws_entry e[8];
    struct a2ws_vec v;
    a2ws_vec_init(&v, e, 3, 8, 2); /* left neighbour 2, right neighbour 4 */
    struct a2ws_item it = {.node = 1, .e = {.t_run = 1, .n = 5, .avail = 2, .slots = 1,
                                            .version = 3}};

    /* p_{i−1} writes i−R..i−1, p_{i+1} writes i+1..i+R: node 1's entry only from 2. */
    assert_false(a2ws_merge(&v, 4, &it));
    assert_true(a2ws_merge(&v, 2, &it));
    assert_int_equal(e[1].n, 5);
    assert_int_equal(e[1].dirty, A2WS_DIRTY_RIGHT); /* onwards, to node 4 */
    /* Same or older version: ignored. */
    it.e.n = 99;
    assert_false(a2ws_merge(&v, 2, &it));
    it.e.version = 2;
    assert_false(a2ws_merge(&v, 2, &it));
    assert_int_equal(e[1].n, 5);
    /* Newer wins, also across the counter's wrap. */
    e[1].version = 0xfffffffeu;
    it.e.version = 1;
    assert_true(a2ws_merge(&v, 2, &it));
    assert_int_equal(e[1].n, 99);
    /* Own entry: never from anyone else. */
    it.node = 3;
    it.e.version = 50;
    assert_false(a2ws_merge(&v, 2, &it));
    /* Outside the window, even from a neighbour. */
    it.node = 6;
    assert_false(a2ws_merge(&v, 4, &it));
    /* A node's own entry from itself (a victim beside its grant): accepted in the window. */
    it.node = 5;
    it.e.version = 1;
    assert_true(a2ws_merge(&v, 5, &it));
    assert_int_equal(e[5].dirty, A2WS_DIRTY_LEFT);
    /* ... but not another node's entry from a non-neighbour. */
    it.node = 1;
    it.e.version = 7;
    assert_false(a2ws_merge(&v, 5, &it));
    /* Version 0 means "never heard of" and is never taken. */
    it.node = 4;
    it.e.version = 0;
    assert_false(a2ws_merge(&v, 4, &it));
}

static void test_collect_far_edge(void **state)
{
    (void)state;
    struct a2ws_entry e[8];
    struct a2ws_vec v;
    struct a2ws_item out[8];
    a2ws_vec_init(&v, e, 3, 8, 2);
    a2ws_set_self(&v, 1, 1, 1, 1);
    e[4].version = e[5].version = e[1].version = e[2].version = 1;
    e[4].dirty = e[5].dirty = A2WS_DIRTY_LEFT;
    e[1].dirty = e[2].dirty = A2WS_DIRTY_RIGHT;

    /* To the left neighbour (2, whose window reaches 4): self and 4; 5 is its far edge,
     * cleared unsent. */
    uint32_t k = a2ws_collect(&v, A2WS_DIRTY_LEFT, out, 8);
    assert_int_equal(k, 2);
    assert_int_equal(out[0].node, 3);
    assert_int_equal(out[1].node, 4);
    assert_false(a2ws_dirty(&v, A2WS_DIRTY_LEFT));
    assert_true(a2ws_dirty(&v, A2WS_DIRTY_RIGHT));
    /* To the right neighbour (4, whose window reaches 2): self and 2; 1 is cleared. */
    k = a2ws_collect(&v, A2WS_DIRTY_RIGHT, out, 1);
    assert_int_equal(k, 1); /* a full buffer: call again */
    assert_int_equal(out[0].node, 3);
    k = a2ws_collect(&v, A2WS_DIRTY_RIGHT, out, 8);
    assert_int_equal(k, 1);
    assert_int_equal(out[0].node, 2);
    assert_false(a2ws_dirty(&v, A2WS_DIRTY_RIGHT));
    /* Nothing dirty, nothing sent: only new information moves. */
    assert_int_equal(a2ws_collect(&v, A2WS_DIRTY_LEFT, out, 8), 0);
    assert_int_equal(a2ws_collect(&v, A2WS_DIRTY_RIGHT, out, 8), 0);
}

/* ---- the ring, simulated -------------------------------------------------------------- */

#define SIM_MAX 24

struct sim {
    uint32_t nodes;
    struct a2ws_entry e[SIM_MAX][SIM_MAX];
    struct a2ws_vec v[SIM_MAX];
    uint64_t messages, items;
};

static void sim_init(struct sim *s, uint32_t nodes, uint32_t radius)
{
    memset(s, 0, sizeof *s);
    s->nodes = nodes;
    for (uint32_t i = 0; i < nodes; i++) {
        a2ws_vec_init(&s->v[i], s->e[i], i, nodes, radius);
        a2ws_set_self(&s->v[i], 0.1 * (i + 1), 10 + i, i, 1);
    }
}

/* One hop for everyone: every node collects for both neighbours first, then all
 * messages are delivered, as if in flight at the same time. */
static void sim_round(struct sim *s)
{
    static struct a2ws_item box[SIM_MAX][2][SIM_MAX];
    uint32_t count[SIM_MAX][2];
    for (uint32_t i = 0; i < s->nodes; i++) {
        count[i][0] = a2ws_collect(&s->v[i], A2WS_DIRTY_LEFT, box[i][0], SIM_MAX);
        count[i][1] = a2ws_collect(&s->v[i], A2WS_DIRTY_RIGHT, box[i][1], SIM_MAX);
    }
    for (uint32_t i = 0; i < s->nodes; i++) {
        for (int side = 0; side < 2; side++) {
            if (!count[i][side])
                continue;
            uint32_t to = a2ws_node_at(&s->v[i], side == 0 ? -1 : 1);
            s->messages++;
            s->items += count[i][side];
            for (uint32_t k = 0; k < count[i][side]; k++)
                a2ws_merge(&s->v[to], i, &box[i][side][k]);
        }
    }
}

/* Node i's view of node j is node j's own current entry. */
static bool sim_knows(const struct sim *s, uint32_t i, uint32_t j)
{
    return s->e[i][j].version == s->e[j][j].version && s->e[i][j].n == s->e[j][j].n;
}

static uint32_t ring_distance(uint32_t a, uint32_t b, uint32_t nodes)
{
    uint32_t d = a > b ? a - b : b - a;
    return d < nodes - d ? d : nodes - d;
}

static void check_propagation(uint32_t nodes, uint32_t radius)
{
    struct sim *s = calloc(1, sizeof *s);
    assert_non_null(s);
    sim_init(s, nodes, radius);
    /* After h hops every node knows exactly the window nodes it can reach in h hops
     * along its own side, and nothing outside its window. */
    uint32_t rounds = s->v[0].left > s->v[0].right ? s->v[0].left : s->v[0].right;
    for (uint32_t h = 1; h <= rounds; h++) {
        sim_round(s);
        for (uint32_t i = 0; i < nodes; i++) {
            for (uint32_t j = 0; j < nodes; j++) {
                int32_t off;
                bool inside = a2ws_offset(&s->v[i], j, &off);
                if (!inside) {
                    assert_int_equal(s->e[i][j].version, 0);
                    continue;
                }
                uint32_t dist = off < 0 ? (uint32_t)-off : (uint32_t)off;
                if (dist <= h)
                    assert_true(sim_knows(s, i, j));
                else
                    assert_int_equal(s->e[i][j].version, 0);
            }
        }
    }
    /* Quiet afterwards: nothing dirty, nothing sent. */
    uint64_t before = s->messages;
    sim_round(s);
    assert_int_equal(s->messages, before);

    /* One node changes: within R hops every node whose window holds it knows, the rest
     * never hear of it, and only that entry travels. */
    uint32_t src = nodes / 2;
    a2ws_set_self(&s->v[src], 0.7, 500, 3, 1);
    before = s->items;
    for (uint32_t h = 1; h <= rounds; h++) {
        sim_round(s);
        for (uint32_t i = 0; i < nodes; i++) {
            int32_t off;
            if (i == src || !a2ws_offset(&s->v[i], src, &off))
                continue;
            uint32_t dist = off < 0 ? (uint32_t)-off : (uint32_t)off;
            assert_true(dist <= radius && dist <= ring_distance(i, src, nodes));
            if (dist <= h)
                assert_true(sim_knows(s, i, src));
        }
    }
    /* Each node holding src's entry forwards it once, except at the window's far edges,
     * where the next pass clears it unsent. */
    sim_round(s);
    assert_int_equal(s->items - before, s->v[src].left + s->v[src].right);
    for (uint32_t i = 0; i < nodes; i++) {
        assert_false(a2ws_dirty(&s->v[i], A2WS_DIRTY_LEFT));
        assert_false(a2ws_dirty(&s->v[i], A2WS_DIRTY_RIGHT));
    }
    free(s);
}

static void test_ring_propagation(void **state)
{
    (void)state;
    check_propagation(10, 3);
    check_propagation(8, 2);
    check_propagation(8, 4);  /* window cut to the ring */
    check_propagation(7, 1);
    check_propagation(SIM_MAX, 5);
    check_propagation(3, 1);
    check_propagation(2, 1);
}

static void test_ring_stale_messages(void **state)
{
    (void)state;
    /* Messages delivered out of order never roll an entry back. */
    struct sim *s = calloc(1, sizeof *s);
    assert_non_null(s);
    sim_init(s, 6, 2);
    struct a2ws_item old[8], fresh[8];
    uint32_t k_old = a2ws_collect(&s->v[2], A2WS_DIRTY_LEFT, old, 8);
    a2ws_set_self(&s->v[2], 9, 77, 0, 1);
    uint32_t k_new = a2ws_collect(&s->v[2], A2WS_DIRTY_LEFT, fresh, 8);
    assert_true(k_old >= 1 && k_new >= 1);
    for (uint32_t k = 0; k < k_new; k++)
        a2ws_merge(&s->v[1], 2, &fresh[k]);
    for (uint32_t k = 0; k < k_old; k++)
        assert_false(a2ws_merge(&s->v[1], 2, &old[k]));
    assert_int_equal(s->e[1][2].n, 77);
    free(s);
}

/* ---- deaths --------------------------------------------------------------------------- */

static void test_on_down(void **state)
{
    (void)state;
    struct a2ws_entry e[8];
    struct a2ws_vec v;
    a2ws_vec_init(&v, e, 3, 8, 3); /* window 0..6; neighbours 2 and 4 */
    assert_int_equal(v.left_nb, 2);
    assert_int_equal(v.right_nb, 4);
    struct a2ws_item it = {.node = 0, .e = {.t_run = 1, .n = 6, .avail = 4, .slots = 1,
                                            .version = 1}};
    /* Node 0's entry is node 2's to write while node 2 lives. */
    assert_false(a2ws_merge(&v, 1, &it));
    it.node = 2;
    it.e.avail = 9;
    assert_true(a2ws_merge(&v, 2, &it));
    assert_true(a2ws_dirty(&v, A2WS_DIRTY_RIGHT));

    a2ws_on_down(&v, 2, 1, 4);
    /* Its entry says it has nothing, and is sent to nobody. */
    assert_int_equal(e[2].n, 0);
    assert_int_equal(e[2].avail, 0);
    assert_int_equal(e[2].slots, 0);
    assert_true(e[2].t_run == 0);
    assert_int_equal(e[2].dirty, 0);
    assert_false(a2ws_dirty(&v, A2WS_DIRTY_RIGHT));
    assert_int_equal(v.left_nb, 1);
    assert_int_equal(v.right_nb, 4);
    /* The left side is node 1's to write now, not the dead node's. */
    it.node = 0;
    it.e.avail = 4;
    assert_false(a2ws_merge(&v, 2, &it));
    assert_true(a2ws_merge(&v, 1, &it));
    assert_int_equal(e[0].avail, 4);
    /* The right side is untouched: node 4 writes node 5's entry, node 6 does not. */
    it.node = 5;
    assert_false(a2ws_merge(&v, 6, &it));
    assert_true(a2ws_merge(&v, 4, &it));
    /* Nobody picks it: the plans name nodes 0 and 5, which have work, never node 2,
     * which had the most. */
    a2ws_set_self(&v, 1, 0, 0, 1);
    uint64_t rng = 7;
    struct a2ws_now now = {.elapsed_s = 1, .starving = true};
    for (int i = 0; i < 50; i++) {
        struct a2ws_decision d = a2ws_plan(&v, &now, &rng);
        assert_int_not_equal(d.criterion, A2WS_NO_STEAL);
        assert_true(d.victim == 0 || d.victim == 5);
    }

    /* Bad input changes nothing: itself, a node outside the ring, no vector. */
    struct a2ws_entry before[8];
    memcpy(before, e, sizeof e);
    a2ws_on_down(&v, 3, 0, 0);
    a2ws_on_down(&v, 8, 0, 0);
    a2ws_on_down(NULL, 1, 0, 0);
    assert_memory_equal(before, e, sizeof e);
    assert_int_equal(v.left_nb, 1);
    assert_int_equal(v.right_nb, 4);
}

/*
 * A dead node counts in no steal equation (a2ws.h): the plan after node 2 of
 * test_idle_node_prior dies is the plan without node 2, as if never heard of: N = 40,
 * T = 2, S_0 = 20 → 20.  Counted as an idle node instead (T = 3), the thief would ask
 * for 14, leaving a share of the work to the dead.
 */
static void test_on_down_not_counted(void **state)
{
    (void)state;
    struct fixture f;
    double t[3] = {0, 1, 0};
    uint32_t n[3] = {0, 40, 0};
    uint32_t avail[3] = {0, 38, 0};
    setup_vec(&f, 0, 3, 1, t, n, avail);
    a2ws_on_down(&f.v, 2, 1, 1);
    uint64_t rng = 1;
    struct a2ws_now now = {.elapsed_s = 0.5, .starving = true};
    struct a2ws_decision d = a2ws_plan(&f.v, &now, &rng);
    assert_int_equal(d.criterion, A2WS_CLOSEST_RATE);
    assert_int_equal(d.victim, 1);
    assert_int_equal(d.amount, 20);
    /* The same for the rate the thief reads: S_0 = 40/(1·2) − 0. */
    assert_near(a2ws_rate(&f.v, &now, 0), 20);
}

/*
 * The window layout (a2ws_vec_init_window, the simulator's: O(R) a node) is the same
 * vector as the layout by node id: a ring of 13 nodes of radius 3 run both ways through
 * random updates, exchanges with the neighbours and steals, entry for entry, and the
 * same plans, rates and amounts from the same random state.
 */
static void test_window_layout(void **state)
{
    (void)state;
    enum { N = 13, R = 3, W = 2 * R + 1 };
    struct a2ws_entry full[N][N], win[N][W];
    struct a2ws_vec vf[N], vw[N];
    assert_int_equal(a2ws_window_entries(N, R), W);
    assert_int_equal(a2ws_window_entries(8, 4), 8);
    assert_int_equal(a2ws_window_entries(1, 0), 1);
    for (uint32_t i = 0; i < N; i++) {
        a2ws_vec_init(&vf[i], full[i], i, N, R);
        a2ws_vec_init_window(&vw[i], win[i], i, N, R);
        assert_null(a2ws_entry_of(&vw[i], (i + R + 1) % N));
        assert_ptr_equal(a2ws_entry_of(&vw[i], i), &win[i][R]);
        assert_ptr_equal(a2ws_entry_of(&vf[i], (i + R + 1) % N), &full[i][(i + R + 1) % N]);
    }
    uint64_t rng = 12345;
    uint32_t planned = 0;
    struct a2ws_item items[N];
    for (int step = 0; step < 400; step++) {
        uint32_t i = (uint32_t)(steal_rng_next(&rng) % N);
        uint32_t what = (uint32_t)(steal_rng_next(&rng) % 3);
        if (what == 0) {
            double t = (double)(steal_rng_next(&rng) % 5) * 0.25;
            uint32_t n = (uint32_t)(steal_rng_next(&rng) % 40);
            uint32_t avail = n ? (uint32_t)(steal_rng_next(&rng) % (n + 1)) : 0;
            assert_int_equal(a2ws_set_self(&vf[i], t, n, avail, 1 + i % 3),
                             a2ws_set_self(&vw[i], t, n, avail, 1 + i % 3));
        } else if (what == 1) {
            unsigned dir = steal_rng_next(&rng) % 2 ? A2WS_DIRTY_LEFT : A2WS_DIRTY_RIGHT;
            uint32_t to = dir == A2WS_DIRTY_LEFT ? vf[i].left_nb : vf[i].right_nb;
            uint32_t got = a2ws_collect(&vf[i], dir, items, N);
            struct a2ws_item items_w[N];
            assert_int_equal(a2ws_collect(&vw[i], dir, items_w, N), got);
            for (uint32_t k = 0; k < got; k++) {
                assert_int_equal(items[k].node, items_w[k].node);
                assert_int_equal(a2ws_merge(&vf[to], i, &items[k]),
                                 a2ws_merge(&vw[to], i, &items_w[k]));
            }
        } else {
            uint32_t victim = (i + 1 + (uint32_t)(steal_rng_next(&rng) % (N - 1))) % N;
            bool stole = steal_rng_next(&rng) % 2;
            a2ws_on_steal(&vf[i], victim, stole);
            a2ws_on_steal(&vw[i], victim, stole);
        }
    }
    for (uint32_t i = 0; i < N; i++) {
        for (uint32_t j = 0; j < N; j++) {
            const struct a2ws_entry *w = a2ws_entry_of(&vw[i], j);
            if (!w) {
                assert_false(a2ws_offset(&vf[i], j, NULL));
                continue;
            }
            assert_memory_equal(w, a2ws_entry_of(&vf[i], j), sizeof *w);
        }
        for (int starving = 0; starving < 2; starving++) {
            struct a2ws_now now = {.elapsed_s = 0.5, .starving = starving};
            uint64_t r1 = 99 + i, r2 = 99 + i;
            struct a2ws_decision a = a2ws_plan(&vf[i], &now, &r1);
            struct a2ws_decision b = a2ws_plan(&vw[i], &now, &r2);
            assert_int_equal(a.criterion, b.criterion);
            assert_int_equal(a.victim, b.victim);
            assert_int_equal(a.amount, b.amount);
            assert_true(a.rate == b.rate);
            assert_true(r1 == r2);
            planned += a.criterion != A2WS_NO_STEAL;
            for (uint32_t j = 0; j < N; j++) {
                assert_true(a2ws_rate(&vf[i], &now, j) == a2ws_rate(&vw[i], &now, j));
                assert_int_equal(a2ws_amount_for(&vf[i], &now, j),
                                 a2ws_amount_for(&vw[i], &now, j));
            }
        }
        assert_int_equal(a2ws_dirty(&vf[i], A2WS_DIRTY_LEFT), a2ws_dirty(&vw[i], A2WS_DIRTY_LEFT));
    }
    assert_true(planned > 0);
    /* A death empties the entry in both layouts. */
    a2ws_on_down(&vf[4], 5, 3, 6);
    a2ws_on_down(&vw[4], 5, 3, 6);
    assert_int_equal(a2ws_entry_of(&vw[4], 5)->version, 0);
    assert_memory_equal(a2ws_entry_of(&vw[4], 5), a2ws_entry_of(&vf[4], 5), sizeof full[0][0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eq4_whole_system),
        cmocka_unit_test(test_eq5_radius),
        cmocka_unit_test(test_eq6_to_8_rounding),
        cmocka_unit_test(test_eq9_10_pair),
        cmocka_unit_test(test_preemptive),
        cmocka_unit_test(test_closest_rate_probabilities),
        cmocka_unit_test(test_in_pair),
        cmocka_unit_test(test_idle_node_prior),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_table1_flags),
        cmocka_unit_test(test_merge_rules),
        cmocka_unit_test(test_collect_far_edge),
        cmocka_unit_test(test_ring_propagation),
        cmocka_unit_test(test_ring_stale_messages),
        cmocka_unit_test(test_on_down),
        cmocka_unit_test(test_on_down_not_counted),
        cmocka_unit_test(test_window_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
