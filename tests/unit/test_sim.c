/*
 * test_sim — unit tests for core/sim/sim.c, the simulator's engine: from the events it
 * reports, every task starts once and ends once, after each of its parents ended (and
 * after the notification's latency when the parent ran elsewhere); the makespan is
 * never below the capacity bound or the critical path, and equals them where the
 * workload leaves no choice; a writer's link is shared by the nodes reading from it;
 * the roots reach their nodes in turn; a seed gives one run; speeds scale durations;
 * work moves by stealing under --mode one and not under --steal none; MDL keeps tasks
 * with their data and MLB spreads them; each policy of paper 001 and 004 runs every task
 * once, never below the capacity bound, one run per seed, and shows the behaviour that
 * defines it;
 * what it does not model is refused by name.  Run by `make unit`.
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

#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/sim/sim.h"
#include "core/sim/sim_queue.h"

#include "sim_fixture.h"

/* A tree: task i's parent is (i - 1) / degree; durations cycle through 1..5 ms. */
static char *tree(uint32_t n, uint32_t degree)
{
    size_t cap = (size_t)n * 96 + 1;
    char *text = xmalloc(cap), *p = text;
    for (uint32_t i = 0; i < n; i++) {
        p += snprintf(p, cap - (size_t)(p - text),
                      "{\"id\":\"t%u\",\"kind\":\"sleep\",\"duration_s\":0.00%u", i, 1 + i % 5);
        if (i)
            p += snprintf(p, cap - (size_t)(p - text), ",\"parents\":[\"t%u\"]",
                          (i - 1) / degree);
        p += snprintf(p, cap - (size_t)(p - text), "}\n");
    }
    return text;
}

/*
 * What every policy owes: the run ends with every task run once, after its parents,
 * never below the capacity bound (check_records), and the same seed gives the same run,
 * event for event.
 */
static void check_policy_run(struct rig *r)
{
    assert_int_equal(rig_run(r), 0);
    check_records(r, 0);
    double makespan = r->res.makespan_s;
    uint64_t hash = r->seen.hash, events = r->res.events, messages = r->res.messages;
    assert_int_equal(rig_run(r), 0);
    check_records(r, 0);
    assert_true(r->res.makespan_s == makespan);
    assert_int_equal(r->seen.hash, hash);
    assert_int_equal(r->res.events, events);
    assert_int_equal(r->res.messages, messages);
}

/* Equal tasks, as many per slot on every node, no latency: the capacity bound exactly. */
static void test_bag_meets_the_capacity_bound(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(64, 0.01);
    rig_load(&r, text);
    r.cfg.nodes = 4;
    r.cfg.slots = 4;
    r.cfg.submit = SIM_SUBMIT_ROUND_ROBIN;
    r.cfg.latency_s = 0;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    assert_true(r.res.makespan_s >= 0.04 - 1e-9 && r.res.makespan_s <= 0.04 + 1e-9);
    assert_true(r.res.busy_s >= 0.64 - 1e-6 && r.res.busy_s <= 0.64 + 1e-6);
    assert_true(r.res.work_s >= 0.64 - 1e-9 && r.res.work_s <= 0.64 + 1e-9);
    free(text);
    rig_free(&r);
}

/* A chain: the critical path plus at most two messages per edge (the parent's end to
 * the child's record, its readiness to the child's holder). */
static void test_chain_is_its_critical_path(void **state)
{
    (void)state;
#define SLEEP_1MS "\"kind\":\"sleep\",\"duration_s\":0.001"
    const char *text = "{\"id\":\"a\"," SLEEP_1MS "}\n"
                       "{\"id\":\"b\"," SLEEP_1MS ",\"parents\":[\"a\"]}\n"
                       "{\"id\":\"c\"," SLEEP_1MS ",\"parents\":[\"b\"]}\n"
                       "{\"id\":\"d\"," SLEEP_1MS ",\"parents\":[\"c\"]}\n"
                       "{\"id\":\"e\"," SLEEP_1MS ",\"parents\":[\"d\"]}\n";
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 3;
    r.cfg.slots = 2;
    r.cfg.latency_s = 250e-6;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    assert_true(r.res.makespan_s >= 0.005 - 1e-9);
    assert_true(r.res.makespan_s <= 0.005 + 4 * 2 * 250e-6 + 1e-9);
    rig_free(&r);
}

/* A fan-in over fan-outs, with data: inputs from another node cost their transfer. */
static void test_dag_with_data(void **state)
{
    (void)state;
    char text[8192], *p = text;
    p += sprintf(p, "{\"id\":\"root\",\"kind\":\"sleep\",\"duration_s\":0.002,"
                    "\"output_bytes\":1000000}\n");
    for (int i = 0; i < 24; i++)
        p += sprintf(p, "{\"id\":\"m%d\",\"kind\":\"sleep\",\"duration_s\":0.0%02d,"
                        "\"output_bytes\":%d,\"parents\":[\"root\"]}\n",
                     i, 1 + i % 9, 100000 * (i + 1));
    p += sprintf(p, "{\"id\":\"sink\",\"kind\":\"sleep\",\"duration_s\":0.001,\"parents\":[");
    for (int i = 0; i < 24; i++)
        p += sprintf(p, "%s\"m%d\"", i ? "," : "", i);
    sprintf(p, "]}\n");
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 5;
    r.cfg.slots = 2;
    r.cfg.bandwidth_Bps = 125e6;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    assert_true(r.res.bytes_moved > 0);
    /* The sink reads every middle task's output not made where it runs. */
    uint32_t sink = r.wl.count - 1;
    uint64_t want = 0;
    for (uint32_t i = 1; i < sink; i++)
        if (r.seen.end_node[i] != r.seen.start_node[sink])
            want += r.wl.tasks[i].output_bytes;
    int64_t last_parent = 0;
    for (uint32_t i = 1; i < sink; i++)
        last_parent = r.seen.end[i] > last_parent ? r.seen.end[i] : last_parent;
    assert_true(want > 0);
    assert_true((double)r.seen.start[sink] >=
                (double)last_parent + (double)want / 125e6 * 1e9 - 1);
    rig_free(&r);
}

/* Task i on node i of `nodes` of one slot, kept there (no stealing, no placement), its
 * readiness and its inputs' arrival at once, links of `bandwidth`. */
static void rig_kept_in_place(struct rig *r, uint32_t nodes, double bandwidth)
{
    r->cfg.nodes = nodes;
    r->cfg.slots = 1;
    r->cfg.submit = SIM_SUBMIT_ROUND_ROBIN;
    r->cfg.steal.mode = STEAL_NONE;
    r->cfg.placement.policy = PLACEMENT_WS;
    r->cfg.latency_s = 0;
    r->cfg.bandwidth_Bps = r->cfg.placement.bandwidth_Bps = bandwidth;
}

/*
 * One writer read by eight nodes at once: they share its egress, as the daemons serve
 * a node's fetches side by side, so each transfer takes eight times as long as alone,
 * and all end together (an equal share; a queue on the writer's link would end them
 * one by one, a model of the readers' links alone after one transfer's time).
 */
static void test_writer_egress_is_shared(void **state)
{
    (void)state;
    enum { READERS = 8 };
    const double bytes = 1e6, bandwidth = 125e6;
    char text[4096], *p = text;
    p += sprintf(p, "{\"id\":\"root\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                    "\"output_bytes\":%.0f}\n", bytes);
    for (int i = 0; i < READERS; i++)
        p += sprintf(p, "{\"id\":\"c%d\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                        "\"parents\":[\"root\"]}\n", i);
    struct rig r;
    rig_load(&r, text);
    rig_kept_in_place(&r, READERS + 1, bandwidth);
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    double shared_ns = READERS * bytes / bandwidth * 1e9;
    assert_int_equal(r.seen.fetches, READERS);
    assert_true((double)r.seen.fetch_ns_min >= shared_ns - 1);
    assert_true((double)r.seen.fetch_ns_max <= shared_ns + 1000);
    for (uint32_t i = 1; i <= READERS; i++) {
        assert_int_equal(r.seen.start_node[i], i);
        assert_true((double)r.seen.start[i] >= (double)r.seen.end[0] + shared_ns - 1);
    }
    assert_true(r.res.makespan_s >= 0.002 + shared_ns / 1e9 - 1e-9);
    rig_free(&r);
}

/* Into text: a root "hot" whose output of `bytes` `readers` tasks read, one a node in
 * place (c1, c2, ...), and a root "idle" with an output as large, read by c1 too when
 * `shared`, else by a task of its own after them. */
static void hot_and_idle(char *text, int readers, double bytes, bool shared)
{
    char *p = text;
    p += sprintf(p, "{\"id\":\"hot\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                    "\"output_bytes\":%.0f}\n", bytes);
    for (int i = 1; i <= readers; i++)
        p += sprintf(p, "{\"id\":\"c%d\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                        "\"parents\":[\"hot\"%s]}\n", i, shared && i == 1 ? ",\"idle\"" : "");
    p += sprintf(p, "{\"id\":\"idle\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                    "\"output_bytes\":%.0f}\n", bytes);
    if (!shared)
        sprintf(p, "{\"id\":\"i1\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                   "\"parents\":[\"idle\"]}\n");
}

/* hot_and_idle's eight readers of 1 MB at 125 MB/s, each task kept where it was put
 * (one node more for the idle root's own reader when not `shared`), on a host copying
 * host_Bps (0: none): run and checked, one transfer a reader.  Returns a megabyte's
 * time alone on a link, in ns. */
enum { HOT_READERS = 8 };
#define HOT_BYTES 1e6
#define HOT_BANDWIDTH 125e6
static double run_hot_and_idle(struct rig *r, bool shared, double host_Bps)
{
    char text[4096];
    hot_and_idle(text, HOT_READERS, HOT_BYTES, shared);
    rig_load(r, text);
    rig_kept_in_place(r, HOT_READERS + (shared ? 2 : 3), HOT_BANDWIDTH);
    r->cfg.host_Bps = host_Bps;
    assert_int_equal(rig_run(r), 0);
    check_records(r, 0);
    assert_int_equal(r->seen.fetches, HOT_READERS + 1);
    return HOT_BYTES / HOT_BANDWIDTH * 1e9;
}

/*
 * A reader's fetch from an idle writer is not held back by its other fetch from a busy
 * one: node 1 reads the hot root's output (read by eight nodes at once, an eighth of
 * its writer's link each) and the idle root's, whose bytes leave at the whole link's
 * rate and queue into node 1's link behind only what the slow flow brought meanwhile:
 * through after 9 of the 8 ms alone, as the daemons' buckets deliver it.  One rate a
 * flow over both links (bandwidth over the larger count) gave it half of node 1's link
 * for the whole transfer: 16 ms.
 */
static void test_idle_writer_not_held_by_a_busy_one(void **state)
{
    (void)state;
    struct rig r;
    double alone_ns = run_hot_and_idle(&r, true, 0);
    /* The idle writer's: the backlog the hot flow brought in 8 ms is 1/8 MB, 1 ms. */
    assert_true((double)r.seen.fetch_ns_min >= alone_ns * 9 / 8 - 1);
    assert_true((double)r.seen.fetch_ns_min <= alone_ns * 9 / 8 + 1000);
    /* The hot writer's: an eighth of its link each, as before. */
    assert_true((double)r.seen.fetch_ns_max >= HOT_READERS * alone_ns - 1);
    assert_true((double)r.seen.fetch_ns_max <= HOT_READERS * alone_ns + alone_ns / 8 + 1000);
    rig_free(&r);
}

static void test_dispatch_as_the_daemons(void **state)
{
    (void)state;
    dispatch_as_the_daemons(SIM_ENGINE_DES, true);
}

/* One host emulating the cluster (host_Bps): two transfers on links of their own share
 * its rate.  Two roots write 12.5 MB on nodes 0 and 1; their children, kept on nodes 2
 * and 3, read them at once.  At 125 MB/s a link each takes 0.1 s; with the host's 125
 * MB/s for both, 0.2 s.  Refused without a bandwidth. */
static uint32_t holder_in(const void *ctx, uint32_t task)
{
    return ((const uint32_t *)ctx)[task];
}

/*
 * The roots reach their holders side by side, one task of each node in turn, each
 * node's in the workload's order: the first of every node, then the second, ...  A task
 * with parents is not among them.
 */
static void test_roots_taken_in_turn(void **state)
{
    (void)state;
    struct rig r;
    rig_load(&r, "{\"id\":\"r0\",\"kind\":\"sleep\",\"duration_s\":0.001}\n"
                 "{\"id\":\"r1\",\"kind\":\"sleep\",\"duration_s\":0.001}\n"
                 "{\"id\":\"c\",\"kind\":\"sleep\",\"duration_s\":0.001,\"parents\":[\"r0\"]}\n"
                 "{\"id\":\"r2\",\"kind\":\"sleep\",\"duration_s\":0.001}\n"
                 "{\"id\":\"r3\",\"kind\":\"sleep\",\"duration_s\":0.001}\n"
                 "{\"id\":\"r4\",\"kind\":\"sleep\",\"duration_s\":0.001}\n"
                 "{\"id\":\"r5\",\"kind\":\"sleep\",\"duration_s\":0.001}\n");
    /* r0, r1, r2 on node 0; r3, r4 on node 1; r5 on node 2 (c on node 2: not a root). */
    const char *ids[] = {"r0", "r1", "r2", "r3", "r4", "r5", "c"};
    const uint32_t node_of[] = {0, 0, 0, 1, 1, 2, 2};
    uint32_t holder[7];
    for (uint32_t k = 0; k < 7; k++)
        holder[workload_find(&r.wl, ids[k])] = node_of[k];
    uint32_t n;
    uint32_t *order = sim__roots_in_turn(&r.wl, 3, holder_in, holder, &n);
    const char *want[] = {"r0", "r3", "r5", "r1", "r4", "r2"};
    assert_int_equal(n, 6);
    for (uint32_t k = 0; k < n; k++)
        assert_int_equal(order[k], workload_find(&r.wl, want[k]));
    free(order);
    rig_free(&r);
}

static void test_host_rate_is_shared(void **state)
{
    (void)state;
    const double bytes = 12.5e6, bandwidth = 125e6;
    char text[1024], *p = text;
    for (int i = 0; i < 2; i++)
        p += sprintf(p, "{\"id\":\"r%d\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                        "\"output_bytes\":%.0f}\n", i, bytes);
    for (int i = 0; i < 2; i++)
        p += sprintf(p, "{\"id\":\"c%d\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                        "\"parents\":[\"r%d\"]}\n", i, i);
    struct rig r;
    rig_load(&r, text);
    rig_kept_in_place(&r, 4, bandwidth);
    double alone_ns = bytes / bandwidth * 1e9;
    for (int shared = 0; shared < 2; shared++) {
        r.cfg.host_Bps = shared ? bandwidth : 0;
        assert_int_equal(rig_run(&r), 0);
        check_records(&r, 0);
        assert_int_equal(r.seen.fetches, 2);
        double want = (shared ? 2 : 1) * alone_ns;
        assert_true((double)r.seen.fetch_ns_min >= want - 1);
        assert_true((double)r.seen.fetch_ns_max <= want + 1000);
        assert_int_equal(r.seen.start_node[2], 2);
        assert_int_equal(r.seen.start_node[3], 3);
    }
    r.cfg.bandwidth_Bps = 0;
    const char *why = NULL;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -EINVAL);
    assert_non_null(why);
    rig_free(&r);
}

/* The host's rate is shared max-min, not split equally: eight transfers from one hot
 * writer (an eighth of its link each) and one from an idle writer, on a host that copies
 * twice a link's rate.  The hot ones use one link's worth, so the idle one keeps its
 * whole link: 8 ms for its megabyte.  Split equally (a ninth of the host each) it took
 * 36 ms. */
static void test_host_rate_is_shared_max_min(void **state)
{
    (void)state;
    struct rig r;
    double alone_ns = run_hot_and_idle(&r, false, 2 * HOT_BANDWIDTH);
    assert_true((double)r.seen.fetch_ns_min >= alone_ns - 1);
    assert_true((double)r.seen.fetch_ns_min <= alone_ns + 1000);
    assert_true((double)r.seen.fetch_ns_max >= HOT_READERS * alone_ns - 1);
    assert_true((double)r.seen.fetch_ns_max <= HOT_READERS * alone_ns + 1000);
    rig_free(&r);
}

/* Everything submitted to node 0: the others steal, and every node runs some; without
 * stealing node 0 runs them all.  One seed, one run. */
static void test_mode_one_steals(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(2000, 0.001);
    rig_load(&r, text);
    r.cfg.nodes = 8;
    r.cfg.slots = 4;
    r.cfg.submit = SIM_SUBMIT_ONE;
    r.cfg.seed = 7;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    assert_true(r.res.tasks_stolen > 0);
    assert_true(r.res.steals_ok > 0);
    for (uint32_t i = 0; i < r.cfg.nodes; i++)
        assert_true(r.seen.started_on[i] > 0);
    double once = r.res.makespan_s;
    uint64_t hash = r.seen.hash, events = r.res.events;
    assert_int_equal(rig_run(&r), 0);
    assert_true(r.res.makespan_s == once);
    assert_int_equal(r.seen.hash, hash);
    assert_int_equal(r.res.events, events);
    /* 2000 ms of work on 32 slots: 62.5 ms at best. */
    assert_true(r.res.makespan_s >= 0.0625 - 1e-9);

    r.cfg.steal.mode = STEAL_NONE;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    assert_int_equal(r.res.tasks_stolen, 0);
    assert_int_equal(r.seen.started_on[0], 2000);
    assert_true(r.res.makespan_s >= 0.5 - 1e-9);
    free(text);
    rig_free(&r);
}

/* A node twice as fast runs a task in half the time (never less). */
static void test_speeds(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(4, 0.01);
    rig_load(&r, text);
    double speeds[2] = {1.0, 2.0};
    r.cfg.nodes = 2;
    r.cfg.slots = 1;
    r.cfg.speeds = speeds;
    r.cfg.submit = SIM_SUBMIT_ROUND_ROBIN;
    r.cfg.steal.mode = STEAL_NONE;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    for (uint32_t i = 0; i < 4; i++) {
        int64_t ran = r.seen.end[i] - r.seen.start[i];
        assert_int_equal(ran, r.seen.end_node[i] == 1 ? 5000000 : 10000000);
    }
    assert_true(r.res.makespan_s >= 0.02 - 1e-9 && r.res.makespan_s <= 0.02 + 1e-9);
    free(text);
    rig_free(&r);
}

/* Algorithm 1 through the engine: under MDL every child of a root with a big output runs
 * where the root ran (pushed there when held elsewhere, never stolen); under MLB they
 * spread over the nodes and the output moves. */
static void test_placement_mdl_and_mlb(void **state)
{
    (void)state;
    char text[4096];
    root_and_children(text, 0.001, 10000000, 16, 0.01);
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 4;
    r.cfg.slots = 2;
    r.cfg.bandwidth_Bps = r.cfg.placement.bandwidth_Bps = 125e6;
    r.cfg.placement.policy = PLACEMENT_MDL;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    int32_t home = r.seen.end_node[0];
    for (uint32_t i = 1; i < r.wl.count; i++)
        assert_int_equal(r.seen.start_node[i], home);
    assert_true(r.res.tasks_pushed > 0);
    assert_int_equal(r.res.bytes_moved, 0);
    /* 16 tasks of 10 ms on 2 slots after the root. */
    assert_true(r.res.makespan_s >= 0.081 - 1e-9);

    r.cfg.placement.policy = PLACEMENT_MLB;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    uint32_t elsewhere = 0;
    for (uint32_t i = 1; i < r.wl.count; i++)
        elsewhere += r.seen.start_node[i] != r.seen.end_node[0];
    assert_true(elsewhere > 0);
    assert_true(r.res.bytes_moved >= 10000000);
    assert_int_equal(r.res.tasks_pushed, 0);
    rig_free(&r);
}

/* Tasks ready at submission that read initial objects worth following: hashed, the
 * client sends each to its object's node (placement_submit_node), so none is pushed and
 * none moves a byte; all submitted to node 0 (--mode one), node 0's placement pushes
 * those of the other nodes' objects. */
static void test_data_tasks_submitted_to_their_data(void **state)
{
    (void)state;
    char text[4096], *p = text;
    for (uint32_t o = 0; o < 8; o++)
        p += snprintf(p, sizeof text - (size_t)(p - text),
                      "{\"object\":\"o%u\",\"bytes\":10000000,\"node\":\"spread\"}\n", o);
    for (uint32_t t = 0; t < 24; t++)
        p += snprintf(p, sizeof text - (size_t)(p - text),
                      "{\"id\":\"t%u\",\"kind\":\"sleep\",\"duration_s\":0.01,"
                      "\"inputs\":[\"o%u\"]}\n", t, t % 8);
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 4;
    r.cfg.slots = 2;
    r.cfg.bandwidth_Bps = r.cfg.placement.bandwidth_Bps = 125e6;
    r.cfg.steal.mode = STEAL_NONE;
    enum placement_policy pols[] = {PLACEMENT_FLDS, PLACEMENT_MDL, PLACEMENT_AUTO};
    for (size_t k = 0; k < sizeof pols / sizeof pols[0]; k++) {
        r.cfg.placement.policy = pols[k];
        assert_int_equal(rig_run(&r), 0);
        check_records(&r, 0);
        assert_int_equal(r.res.tasks_pushed, 0);
        assert_int_equal(r.res.bytes_moved, 0);
        for (uint32_t i = 0; i < r.wl.count; i++)
            assert_int_equal(r.seen.start_node[i], (int32_t)(i % 8 % 4));
    }
    r.cfg.placement.policy = PLACEMENT_FLDS;
    r.cfg.submit = SIM_SUBMIT_ONE;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    assert_int_equal(r.res.tasks_pushed, 18);
    rig_free(&r);
}

/* Nodes of different sizes: a node of one slot never runs two tasks at once, one of
 * three runs three. */
static void test_node_slots(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(8, 0.01);
    rig_load(&r, text);
    uint32_t slots[2] = {1, 3};
    r.cfg.nodes = 2;
    r.cfg.node_slots = slots;
    r.cfg.submit = SIM_SUBMIT_ROUND_ROBIN;
    r.cfg.steal.mode = STEAL_NONE;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    for (uint32_t node = 0; node < 2; node++) {
        uint32_t most = 0;
        for (uint32_t i = 0; i < r.wl.count; i++) {
            if (r.seen.start_node[i] != (int32_t)node)
                continue;
            uint32_t at_once = 0;
            for (uint32_t k = 0; k < r.wl.count; k++)
                at_once += r.seen.start_node[k] == (int32_t)node &&
                           r.seen.start[k] <= r.seen.start[i] && r.seen.end[k] > r.seen.start[i];
            most = at_once > most ? at_once : most;
        }
        assert_int_equal(most, node == 0 ? 1 : 3);
    }
    /* Node 0 runs its four one after another; node 1 its four in two rounds. */
    assert_true(r.res.makespan_s >= 0.04 - 1e-9 && r.res.makespan_s <= 0.04 + 1e-9);
    uint32_t zero[2] = {1, 0};
    r.cfg.node_slots = zero;
    const char *why = NULL;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -EINVAL);
    free(text);
    rig_free(&r);
}

/* The steal requests made while the node ran a task whose record is there and that has
 * a child waiting there (hashed submission: a waiting task is on its record's node). */
static uint32_t requests_with_local_successors(const struct rig *r)
{
    const struct seen *s = &r->seen;
    uint32_t bad = 0;
    for (size_t k = 0; k < s->nrequests; k++) {
        const struct steal_ev *q = &s->requests[k];
        for (uint32_t p = 0; p < r->wl.count; p++) {
            if (s->start_node[p] != (int32_t)q->node ||
                !(s->start[p] < q->t && q->t < s->end[p]) ||
                task_key_owner(task_key(r->cfg.job, p), r->cfg.nodes) != q->node)
                continue;
            const struct workload_task *t = &r->wl.tasks[p];
            for (uint32_t c = 0; c < t->num_children; c++)
                bad += task_key_owner(task_key(r->cfg.job, t->children[c]), r->cfg.nodes) ==
                       q->node;
        }
    }
    return bad;
}

/*
 * PaRSEC (paper 004, the parsec preset): ready+successors starvation, one random victim
 * asked straight away, the waiting-time guard.  A tree runs whole; no node asks for work
 * while a task it runs has a child waiting there, which ready-only starvation does.
 */
static void test_parsec_successors(void **state)
{
    (void)state;
    struct rig r;
    char *text = tree(400, 3);
    rig_load(&r, text);
    r.cfg.nodes = 4;
    r.cfg.slots = 2;
    r.cfg.steal.starvation = STEAL_STARVE_SUCCESSORS;
    r.cfg.steal.victims = STEAL_VICTIMS_RANDOM;
    r.cfg.steal.victims_k = 1;
    r.cfg.steal.wait_guard = true;
    r.cfg.placement.policy = PLACEMENT_WS;
    check_policy_run(&r);
    assert_true(r.seen.nrequests > 0);
    assert_int_equal(requests_with_local_successors(&r), 0);
    /* One victim: no load query, every attempt is a request (two messages, not four). */
    assert_int_equal(r.res.steal_attempts, r.seen.nrequests);

    r.cfg.steal.starvation = STEAL_STARVE_READY;
    check_policy_run(&r);
    assert_true(requests_with_local_successors(&r) > 0);
    free(text);
    rig_free(&r);
}

/*
 * The waiting-time guard: everything on node 0, a latency longer than node 0 takes to run
 * what is left when the first requests reach it.  With the guard it keeps everything and
 * ends at the capacity of its own slots; without, thieves take tasks that arrive later
 * than node 0 would have run them.
 */
static void test_parsec_wait_guard(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(200, 0.01);
    rig_load(&r, text);
    r.cfg.nodes = 4;
    r.cfg.slots = 4;
    r.cfg.submit = SIM_SUBMIT_ONE;
    r.cfg.latency_s = 0.15;
    r.cfg.placement.policy = PLACEMENT_WS;
    r.cfg.steal.wait_guard = true;
    check_policy_run(&r);
    assert_int_equal(r.res.tasks_stolen, 0);
    assert_true(r.res.makespan_s >= 0.5 - 1e-9 && r.res.makespan_s <= 0.5 + 1e-9);
    r.cfg.steal.wait_guard = false;
    check_policy_run(&r);
    assert_true(r.res.tasks_stolen > 0);
    assert_true(r.res.makespan_s > 0.6);
    free(text);
    rig_free(&r);
}

/* Paper 001's C1 mix: 8 nodes of 24, 1, 8, 2, 16, 4, 24 and 1 cores, a speed of cores/24. */
static const double c1_speeds[8] = {1.0, 1.0 / 24, 8.0 / 24, 2.0 / 24,
                                    16.0 / 24, 4.0 / 24, 1.0, 1.0 / 24};

/* The A2WS parts over rig r: the a2ws preset (preemptive, A2WS victims and amount, the
 * ring, ws placement). */
static void a2ws_policy(struct rig *r)
{
    r->cfg.steal.starvation = STEAL_STARVE_PREEMPTIVE;
    r->cfg.steal.victims = STEAL_VICTIMS_A2WS;
    r->cfg.steal.amount = STEAL_AMOUNT_A2WS;
    r->cfg.steal.info = STEAL_INFO_RING;
    r->cfg.placement.policy = PLACEMENT_WS;
}

/*
 * A2WS (paper 001) on the seismic shape, independent shots, over the C1 mix: every shot
 * once, and the steal equation's point: of any two nodes the faster runs more shots
 * (without stealing, a 1-core node runs about what a 24-core one does).  A tree runs whole
 * too, and the vector's parts under other victims (--info ring with sqrt victims, the
 * A2WS amount, preemptive starts) run the same shots to the end.
 */
static void test_a2ws_mix(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(480, 0.0208);
    rig_load(&r, text);
    r.cfg.nodes = 8;
    r.cfg.slots = 1;
    r.cfg.speeds = c1_speeds;
    r.cfg.seed = 5;
    a2ws_policy(&r);
    check_policy_run(&r);
    assert_true(r.res.steals_ok > 0);
    for (uint32_t fast = 0; fast < 8; fast++)
        for (uint32_t slow = 0; slow < 8; slow++)
            if (c1_speeds[fast] > c1_speeds[slow])
                assert_true(r.seen.started_on[fast] > r.seen.started_on[slow]);
    /* Without stealing every node runs its hashed share, fast or slow. */
    r.cfg.steal.mode = STEAL_NONE;
    check_policy_run(&r);
    assert_true(r.seen.started_on[1] * 2 > r.seen.started_on[0]);

    /* The ring's parts with other victims. */
    sim_config_default(&r.cfg);
    r.cfg.nodes = 8;
    r.cfg.slots = 1;
    r.cfg.speeds = c1_speeds;
    r.cfg.steal.info = STEAL_INFO_RING;
    r.cfg.steal.amount = STEAL_AMOUNT_A2WS;
    check_policy_run(&r);
    assert_true(r.res.steals_ok > 0);
    r.cfg.steal.info = STEAL_INFO_LOAD_QUERY;
    r.cfg.steal.starvation = STEAL_STARVE_PREEMPTIVE;
    check_policy_run(&r);
    assert_true(r.res.steals_ok > 0);
    free(text);
    rig_free(&r);

    text = tree(400, 3);
    rig_load(&r, text);
    r.cfg.nodes = 8;
    r.cfg.slots = 2;
    r.cfg.speeds = c1_speeds;
    a2ws_policy(&r);
    check_policy_run(&r);
    free(text);
    rig_free(&r);
}

/*
 * CTWS (the ctws preset): only the token's holder steals.  The token goes round the ring
 * one latency a hop, so between two steal requests, by a and then b, it travelled the
 * (b − a) mod N hops from a to b (a whole lap when a = b), each at least one latency
 * long.  A thief of any other policy asks whenever it starves, which breaks that.
 */
static uint32_t requests_off_the_token(const struct rig *r)
{
    const struct seen *s = &r->seen;
    int64_t lat = (int64_t)(r->cfg.latency_s * 1e9 + 0.5);
    uint32_t n = r->cfg.nodes, bad = 0;
    for (size_t k = 1; k < s->nrequests; k++) {
        const struct steal_ev *a = &s->requests[k - 1], *b = &s->requests[k];
        uint32_t hops = (b->node + n - a->node) % n;
        bad += b->t - a->t < (int64_t)(hops ? hops : n) * lat;
    }
    return bad;
}

static void test_ctws_token_holder_steals(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(480, 0.0208);
    rig_load(&r, text);
    r.cfg.nodes = 8;
    r.cfg.slots = 1;
    r.cfg.speeds = c1_speeds;
    r.cfg.steal.victims = STEAL_VICTIMS_TOKEN;
    r.cfg.steal.info = STEAL_INFO_TOKEN;
    r.cfg.placement.policy = PLACEMENT_WS;
    check_policy_run(&r);
    assert_true(r.seen.nrequests > 1);
    assert_int_equal(requests_off_the_token(&r), 0);
    /* Everything on node 0: seven thieves starve at once. */
    r.cfg.submit = SIM_SUBMIT_ONE;
    check_policy_run(&r);
    assert_true(r.seen.nrequests > 1);
    assert_true(r.res.steals_ok > 0);
    assert_true(r.res.token_passes >= r.seen.nrequests);
    assert_int_equal(requests_off_the_token(&r), 0);
    /* The same shots under the load-query thief: requests off any token. */
    r.cfg.steal.victims = STEAL_VICTIMS_SQRT;
    r.cfg.steal.info = STEAL_INFO_LOAD_QUERY;
    check_policy_run(&r);
    assert_int_equal(r.res.token_passes, 0);
    assert_true(requests_off_the_token(&r) > 0);
    free(text);
    rig_free(&r);

    text = tree(400, 3);
    rig_load(&r, text);
    r.cfg.nodes = 5;
    r.cfg.slots = 2;
    r.cfg.steal.victims = STEAL_VICTIMS_TOKEN;
    r.cfg.steal.info = STEAL_INFO_TOKEN;
    r.cfg.placement.policy = PLACEMENT_WS;
    check_policy_run(&r);
    assert_int_equal(requests_off_the_token(&r), 0);
    free(text);
    rig_free(&r);
}

/*
 * LW (the lw preset): workers forward what becomes ready to the leader, node 0, and ask
 * it for work; they never rob each other.  Every task a worker ran came to it from the
 * leader (TASK_STOLEN_IN from node 0), every request went to the leader, and the leader,
 * whose distribution thread halves its one slot, runs fewer shots than the other 24-core
 * node of the mix.
 */
static void check_via_leader(const struct rig *r)
{
    for (uint32_t i = 0; i < r->wl.count; i++)
        if (r->seen.start_node[i] != 0)
            assert_int_equal(r->seen.stolen_from[i], 0);
    for (size_t k = 0; k < r->seen.nrequests; k++)
        assert_int_equal(r->seen.requests[k].peer, 0);
    assert_int_equal(r->seen.stolen_in[0], 0);
}

static void test_lw_tasks_come_from_the_leader(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(480, 0.0208);
    rig_load(&r, text);
    r.cfg.nodes = 8;
    r.cfg.slots = 1;
    r.cfg.speeds = c1_speeds;
    r.cfg.steal.victims = STEAL_VICTIMS_LEADER;
    r.cfg.steal.amount = STEAL_AMOUNT_SINGLE;
    r.cfg.placement.policy = PLACEMENT_WS;
    check_policy_run(&r);
    check_via_leader(&r);
    assert_true(r.seen.nrequests > 0);
    assert_true(r.seen.started_on[0] < r.seen.started_on[6]);
    /* A request asks for one task per idle slot: one here. */
    for (size_t k = 0; k < r.seen.nrequests; k++)
        assert_int_equal(r.seen.requests[k].count, 1);
    free(text);
    rig_free(&r);

    text = tree(400, 3);
    rig_load(&r, text);
    r.cfg.nodes = 5;
    r.cfg.slots = 2;
    r.cfg.steal.victims = STEAL_VICTIMS_LEADER;
    r.cfg.steal.amount = STEAL_AMOUNT_SINGLE;
    r.cfg.placement.policy = PLACEMENT_WS;
    check_policy_run(&r);
    check_via_leader(&r);
    free(text);
    rig_free(&r);
}

/*
 * Placement auto (paper 002 §4.4, place.c's auto_observe): a node that fetches little
 * against the time it runs tasks steps from FLDS to MLB; one that fetches a lot steps
 * towards MDL.  Each switch is a POLICY_CHANGE with its reason, as the daemons trace it.
 */
static void test_placement_auto(void **state)
{
    (void)state;
    struct rig r;
    char *text = bag(400, 0.01);
    rig_load(&r, text);
    r.cfg.nodes = 4;
    r.cfg.slots = 2;
    r.cfg.placement.policy = PLACEMENT_AUTO;
    r.cfg.placement.auto_interval_s = 0.05;
    check_policy_run(&r);
    assert_true(r.res.policy_switches >= r.cfg.nodes);
    assert_int_equal(r.seen.policy_changes, r.res.policy_switches);
    for (uint32_t i = 0; i < r.cfg.nodes; i++)
        assert_string_equal(r.seen.policy[i], "mlb");
    free(text);
    rig_free(&r);

    /* Pairs of parents with 4 MB outputs and a child of 5 ms that reads both: unless the
     * two ran on one node, one output moves wherever it runs, 40 ms at 100 MB/s. */
    char big[24576], *p = big;
    for (int i = 0; i < 60; i++)
        p += sprintf(p, "{\"id\":\"a%d\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                        "\"output_bytes\":4000000}\n"
                        "{\"id\":\"b%d\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                        "\"output_bytes\":4000000}\n"
                        "{\"id\":\"c%d\",\"kind\":\"sleep\",\"duration_s\":0.005,"
                        "\"parents\":[\"a%d\",\"b%d\"]}\n", i, i, i, i, i);
    rig_load(&r, big);
    r.cfg.nodes = 4;
    r.cfg.slots = 2;
    r.cfg.bandwidth_Bps = r.cfg.placement.bandwidth_Bps = 100e6;
    r.cfg.placement.policy = PLACEMENT_AUTO;
    r.cfg.placement.auto_interval_s = 0.05;
    check_policy_run(&r);
    assert_true(r.res.bytes_moved > 0);
    assert_true(r.seen.to_mdl > 0);
    rig_free(&r);
}

/* Every event of every node, in order, into one hash: a run past the rig's 16 nodes. */
struct big_ctx {
    uint64_t *hash;
    uint32_t node;
};

static void big_put(void *ctx, enum trace_kind kind, uint64_t task, int32_t peer, int32_t status,
                    int64_t count, int64_t bytes, int64_t duration_ns, int64_t wall)
{
    struct big_ctx *c = ctx;
    (void)bytes;
    (void)duration_ns;
    *c->hash = *c->hash * 1000003u ^ ((uint64_t)kind << 56 ^ task ^ (uint64_t)peer << 40 ^
                                      (uint64_t)status << 32 ^ (uint64_t)count ^
                                      (uint64_t)wall * 31 ^ (uint64_t)c->node << 20);
}

static void big_policy(void *ctx, const char *name, int32_t reason, int64_t wall)
{
    (void)ctx;
    (void)name;
    (void)reason;
    (void)wall;
}

static void big_sample(void *ctx, const struct trace_sample *smp, int64_t wall)
{
    (void)ctx;
    (void)smp;
    (void)wall;
}

static void run_big(struct rig *r, bool eager, struct sim_result *res, uint64_t *hash)
{
    uint32_t n = r->cfg.nodes;
    struct big_ctx *ctx = xcalloc(n, sizeof *ctx);
    struct trace_sink *sinks = xcalloc(n, sizeof *sinks);
    const struct trace_sink **ptrs = xcalloc(n, sizeof *ptrs);
    *hash = 0;
    for (uint32_t i = 0; i < n; i++) {
        ctx[i] = (struct big_ctx){.hash = hash, .node = i};
        sinks[i] = (struct trace_sink){.ctx = &ctx[i], .put = big_put, .policy = big_policy,
                                        .sample = big_sample};
        ptrs[i] = &sinks[i];
    }
    r->cfg.sinks = ptrs;
    r->cfg.sample_s = 0;
    r->cfg.eager_marks = eager;
    const char *why = NULL;
    assert_int_equal(sim_run(&r->wl, &r->cfg, res, &why), 0);
    assert_int_equal(res->tasks_done, r->wl.count);
    r->cfg.sinks = NULL;
    free(ptrs);
    free(sinks);
    free(ctx);
}

/*
 * From STEAL_DRAW_MIXED_MIN candidates on, a query's marks are found from its draw when
 * the victim next has work to give (sim_thief.c's lazy marks) instead of written into
 * each victim's list as the query arrives.  The run must be the one the eager marks
 * give, event for event: a bag hashed over 1,100 nodes, a tree all on node 0 (which
 * every other node robs, and whose thieves' wake-ups decide when the stolen work moves
 * on), and fixed-size random victim sets.
 */
static void test_lazy_marks_are_the_eager_ones(void **state)
{
    (void)state;
    struct {
        char *text;
        enum sim_submit submit;
        uint32_t victims_k;
    } cases[] = {
        {bag_of(11000, 0.001, 0.0001), SIM_SUBMIT_HASHED, 0},
        {tree(6000, 3), SIM_SUBMIT_ONE, 0},
        {bag_of(5500, 0.002, 0.0002), SIM_SUBMIT_ONE, 60},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct rig r;
        rig_load(&r, cases[c].text);
        r.cfg.nodes = 1100;
        r.cfg.slots = 1;
        r.cfg.submit = cases[c].submit;
        if (cases[c].victims_k) {
            r.cfg.steal.victims = STEAL_VICTIMS_RANDOM;
            r.cfg.steal.victims_k = cases[c].victims_k;
        }
        struct sim_result lazy, eager;
        uint64_t lazy_hash, eager_hash;
        run_big(&r, false, &lazy, &lazy_hash);
        run_big(&r, true, &eager, &eager_hash);
        assert_true(lazy.steals_ok > 100);
        assert_true(lazy.makespan_s == eager.makespan_s);
        assert_int_equal(lazy.events, eager.events);
        assert_int_equal(lazy.messages, eager.messages);
        assert_int_equal(lazy.steal_attempts, eager.steal_attempts);
        assert_int_equal(lazy.tasks_stolen, eager.tasks_stolen);
        assert_int_equal(lazy_hash, eager_hash);
        rig_free(&r);
        free(cases[c].text);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    struct rig r;
    rig_load(&r, "{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":0.001}\n");
    const char *why = NULL;
    /* The A2WS vectors: 2R + 1 entries a node, refused past SIM_A2WS_MAX_BYTES. */
    r.cfg.steal.amount = STEAL_AMOUNT_A2WS;
    r.cfg.nodes = 1032444; /* the default radius, 32 past 160 nodes: 65 entries a node */
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), 0);
    r.cfg.nodes = 1032445;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -ENOMEM);
    r.cfg.steal.radius = 100; /* 201 entries a node */
    r.cfg.nodes = 333874;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), 0);
    r.cfg.nodes = 333875;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -ENOMEM);
    assert_non_null(strstr(why, "--radius"));
    r.cfg.steal.radius = 16;
    r.cfg.nodes = 1000000;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), 0);
    /* Parts that do not fit together, as run refuses them. */
    sim_config_default(&r.cfg);
    r.cfg.steal.info = STEAL_INFO_TOKEN;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -EINVAL);
    assert_non_null(strstr(why, "token"));
    /* The leader gives a slot to its distribution thread: a task as wide as the nodes
     * would never start there. */
    sim_config_default(&r.cfg);
    r.cfg.steal.victims = STEAL_VICTIMS_LEADER;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), 0);
    sim_config_default(&r.cfg);
    r.cfg.nodes = 0;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -EINVAL);
    rig_free(&r);

    rig_load(&r, "{\"id\":\"a\",\"kind\":\"command\",\"cmd\":\"true\"}\n");
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -EINVAL);
    assert_non_null(strstr(why, "duration"));
    rig_free(&r);

    rig_load(&r, "{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":0.001,\"cores\":8}\n");
    r.cfg.slots = 4;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -EINVAL);
    r.cfg.slots = 8;
    assert_int_equal(rig_run(&r), 0);
    check_records(&r, 0);
    r.cfg.steal.victims = STEAL_VICTIMS_LEADER;
    assert_int_equal(sim_check(&r.cfg, &r.wl, &why), -EINVAL);
    rig_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bag_meets_the_capacity_bound),
        cmocka_unit_test(test_chain_is_its_critical_path),
        cmocka_unit_test(test_dag_with_data),
        cmocka_unit_test(test_writer_egress_is_shared),
        cmocka_unit_test(test_idle_writer_not_held_by_a_busy_one),
        cmocka_unit_test(test_dispatch_as_the_daemons),
        cmocka_unit_test(test_roots_taken_in_turn),
        cmocka_unit_test(test_host_rate_is_shared),
        cmocka_unit_test(test_host_rate_is_shared_max_min),
        cmocka_unit_test(test_mode_one_steals),
        cmocka_unit_test(test_speeds),
        cmocka_unit_test(test_placement_mdl_and_mlb),
        cmocka_unit_test(test_data_tasks_submitted_to_their_data),
        cmocka_unit_test(test_node_slots),
        cmocka_unit_test(test_lazy_marks_are_the_eager_ones),
        cmocka_unit_test(test_parsec_successors),
        cmocka_unit_test(test_parsec_wait_guard),
        cmocka_unit_test(test_a2ws_mix),
        cmocka_unit_test(test_ctws_token_holder_steals),
        cmocka_unit_test(test_lw_tasks_come_from_the_leader),
        cmocka_unit_test(test_placement_auto),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
