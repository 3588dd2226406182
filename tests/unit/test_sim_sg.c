/*
 * test_sim_sg — the SimGrid engine (core/sim/sim_sg*.c) against the discrete-event one
 * (core/sim/sim.c) on the same runs: from the events each reports, every task starts
 * once and ends once on one node, after its parents (and a message's latency after a
 * parent that ran elsewhere); the makespan never beats the capacity bound; the two
 * engines' makespans agree within 15 % on a bag of tasks and on DAGs whose data moves
 * in a fraction of a task's time, and exactly where the run leaves no choice; where
 * one output is read by many nodes at once, SimGrid shares the writer's link between
 * them, as the discrete-event core does not; a victim wakes the thieves it turned away
 * once it has work, sooner than their back-off would bring them back; SimGrid's run is
 * a function of its inputs; what it does not model is refused.  The SimGrid cases are
 * skipped when libsimgrid cannot be loaded.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/sim/sim.h"
#include "core/sim/sim_sg.h"

#include "sim_fixture.h"

/* The agreement asked of the two engines: their time models differ (SimGrid shares a
 * link between the transfers that cross it, and orders the actions of one instant its
 * own way), their policy does not. */
#define AGREE 0.15

/* Whether SimGrid can be loaded here; asked once. */
static int simgrid_state; /* 0 not asked, 1 yes, -1 no */

/* Skips the test when SimGrid cannot run here (not built in, or not installed). */
static void need_simgrid(void)
{
    if (simgrid_state == 0) {
        struct rig r;
        rig_load(&r, "{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":0.001}\n");
        const char *why = NULL;
        int rc = sim_sg_run(&r.wl, &r.cfg, &r.res, &why);
        if (rc == -ENOTSUP)
            fprintf(stderr, "SimGrid cannot run here: %s\n", why);
        else
            assert_int_equal(rc, 0);
        simgrid_state = rc == 0 ? 1 : -1;
        rig_free(&r);
    }
    if (simgrid_state < 0)
        skip();
}

/* Both engines on the rig: each checked, their makespans within AGREE of each other. */
static void both(struct rig *r, struct sim_result *des, struct sim_result *sg)
{
    assert_int_equal(rig_run_on(r, SIM_ENGINE_DES), 0);
    check_records(r, 1);
    *des = r->res;
    assert_int_equal(rig_run_on(r, SIM_ENGINE_SIMGRID), 0);
    check_records(r, 1);
    *sg = r->res;
    double diff = fabs(sg->makespan_s - des->makespan_s) / des->makespan_s;
    if (diff > AGREE)
        fail_msg("the engines disagree by %.1f %%: des %.6f s, simgrid %.6f s", 100 * diff,
                 des->makespan_s, sg->makespan_s);
    assert_true(sg->work_s == des->work_s);
    assert_true(sg->events > 0 && sg->steal_attempts > 0);
}

/* A bag of unequal tasks, ten a slot, hashed over 8 nodes: stealing evens it out. */
static void test_bag(void **state)
{
    (void)state;
    need_simgrid();
    struct rig r;
    char *text = bag_of(320, 0.002, 0.001);
    rig_load(&r, text);
    r.cfg.nodes = 8;
    r.cfg.slots = 4;
    struct sim_result des, sg;
    both(&r, &des, &sg);
    /* Everything at node 0: the others must steal to help, under either engine. */
    r.cfg.submit = SIM_SUBMIT_ONE;
    both(&r, &des, &sg);
    assert_true(sg.tasks_stolen > 0 && des.tasks_stolen > 0);
    for (uint32_t i = 0; i < r.cfg.nodes; i++)
        assert_true(r.seen.started_on[i] > 0);
    free(text);
    rig_free(&r);
}

/* Forty nodes, everything at node 0: each thief draws 7 victims of 39 by rejection,
 * inside a SimGrid actor's 32 KiB stack.  The draw's table took all of it, and the
 * engine's process died of SIGSEGV from 24 nodes on. */
static void test_forty_thieves(void **state)
{
    (void)state;
    need_simgrid();
    struct rig r;
    char *text = bag_of(400, 0.002, 0.001);
    rig_load(&r, text);
    r.cfg.nodes = 40;
    r.cfg.slots = 1;
    r.cfg.submit = SIM_SUBMIT_ONE;
    struct sim_result des, sg;
    both(&r, &des, &sg);
    assert_true(sg.tasks_stolen > 0);
    uint32_t helped = 0;
    for (uint32_t i = 1; i < r.cfg.nodes; i++)
        helped += r.seen.started_on[i] > 0;
    assert_true(helped >= r.cfg.nodes / 2);
    free(text);
    rig_free(&r);
}

/* A fan-out of fan-ins whose outputs move over links of 1 Gbit/s in a fraction of a
 * task's time, under FLDS (pushes to the data, the monitor's spills) and under plain
 * work stealing; and with no bandwidth limit, where only the messages' latency counts. */
static void test_dag(void **state)
{
    (void)state;
    need_simgrid();
    char *text = xmalloc(64 * 1024), *p = text;
    p += sprintf(p, "{\"id\":\"root\",\"kind\":\"sleep\",\"duration_s\":0.002,"
                    "\"output_bytes\":100000}\n");
    for (int i = 0; i < 96; i++)
        p += sprintf(p, "{\"id\":\"m%d\",\"kind\":\"sleep\",\"duration_s\":0.0%02d,"
                        "\"output_bytes\":%d,\"parents\":[\"root\"]}\n",
                     i, 2 + i % 9, 20000 * (1 + i % 5));
    for (int j = 0; j < 24; j++) {
        p += sprintf(p, "{\"id\":\"s%d\",\"kind\":\"sleep\",\"duration_s\":0.005,"
                        "\"parents\":[", j);
        for (int i = 0; i < 4; i++)
            p += sprintf(p, "%s\"m%d\"", i ? "," : "", 4 * j + i);
        p += sprintf(p, "]}\n");
    }
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 6;
    r.cfg.slots = 2;
    r.cfg.bandwidth_Bps = r.cfg.placement.bandwidth_Bps = 125e6;
    struct sim_result des, sg;
    both(&r, &des, &sg);
    r.cfg.placement.policy = PLACEMENT_WS;
    both(&r, &des, &sg);
    assert_true(sg.bytes_moved > 0 && des.bytes_moved > 0);
    r.cfg.bandwidth_Bps = 0;
    both(&r, &des, &sg);
    assert_int_equal(sg.bytes_moved, 0);
    free(text);
    rig_free(&r);
}

/* Where the engines part: one output read by many nodes at once.  SimGrid's flow model
 * shares the writer's link between the transfers, so the last reader elsewhere starts
 * no earlier than the output's bytes times the readers over the bandwidth after the
 * writer's end; the discrete-event core models the readers' links only. */
static void test_shared_egress(void **state)
{
    (void)state;
    need_simgrid();
    char text[4096];
    root_and_children(text, 0.001, 2000000, 16, 0.02);
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 6;
    r.cfg.slots = 2;
    r.cfg.bandwidth_Bps = 125e6;
    r.cfg.placement.policy = PLACEMENT_WS;
    assert_int_equal(rig_run_on(&r, SIM_ENGINE_SIMGRID), 0);
    check_records(&r, 1);
    int32_t home = r.seen.end_node[0];
    bool reads[MAX_NODES] = {false};
    uint32_t readers = 0;
    int64_t last = 0;
    for (uint32_t i = 1; i < r.wl.count; i++) {
        int32_t at = r.seen.start_node[i];
        if (at == home)
            continue;
        readers += !reads[at];
        reads[at] = true;
        last = r.seen.start[i] > last ? r.seen.start[i] : last;
    }
    assert_true(readers >= 2);
    double serve = readers * 2000000 / 125e6 * 1e9;
    assert_true((double)last >= (double)r.seen.end[0] + serve - 1e3);
    assert_int_equal(r.res.bytes_moved, (uint64_t)readers * 2000000);
    rig_free(&r);
}

/* No stealing, round-robin submission, speeds and sizes that differ: nothing is left to
 * chance or to the network, and the engines agree to the nanosecond. */
static void test_no_choice_same_makespan(void **state)
{
    (void)state;
    need_simgrid();
    struct rig r;
    char *text = bag_of(60, 0.002, 0.001);
    rig_load(&r, text);
    double speeds[3] = {1.0, 0.5, 2.0};
    uint32_t slots[3] = {1, 2, 3};
    r.cfg.nodes = 3;
    r.cfg.speeds = speeds;
    r.cfg.node_slots = slots;
    r.cfg.slots = 3;
    r.cfg.submit = SIM_SUBMIT_ROUND_ROBIN;
    r.cfg.steal.mode = STEAL_NONE;
    assert_int_equal(rig_run_on(&r, SIM_ENGINE_DES), 0);
    check_records(&r, 1);
    double des = r.res.makespan_s;
    assert_int_equal(rig_run_on(&r, SIM_ENGINE_SIMGRID), 0);
    check_records(&r, 1);
    assert_true(fabs(r.res.makespan_s - des) < 1e-6);
    assert_int_equal(r.res.steal_attempts, 0);
    assert_int_equal(r.res.messages, 0);
    free(text);
    rig_free(&r);
}

/*
 * A victim wakes the thieves it turned away once it has work for them (the daemons'
 * idle.c).  All of a job at node 0, its one root a long task: until the root ends, the
 * other nodes' thieves ask and are turned away, their back-off doubling (1, 2, 4 ...
 * 64 ms by the root's end at 100 ms).  When the root's children become ready at node 0,
 * it wakes them, and each starts a task within a few messages' latency; without the
 * wake-up they would find the children only at the end of their current wait, near
 * 129 ms.
 */
/* All of a job at node 0 behind a 100 ms root, 64 children: the other nodes, turned
 * away while node 0 had nothing to give, are woken once it has (idle.c), and start
 * within 2 ms of the root's end, on either engine (a wake-up, a query and its answer,
 * a request and its grant: 5 latencies of 100 us; the back-off would cost 28 ms). */
static void turned_away_woken(enum sim_engine engine)
{
    char text[8192];
    root_and_children(text, 0.1, 0, 64, 0.05);
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 4;
    r.cfg.slots = 2;
    r.cfg.submit = SIM_SUBMIT_ONE;
    for (int placement = 0; placement < 2; placement++) {
        r.cfg.placement.policy = placement ? PLACEMENT_WS : PLACEMENT_FLDS;
        assert_int_equal(rig_run_on(&r, engine), 0);
        check_records(&r, engine == SIM_ENGINE_SIMGRID);
        int64_t root_end = r.seen.end[0], first[MAX_NODES];
        for (uint32_t i = 0; i < r.cfg.nodes; i++)
            first[i] = INT64_MAX;
        for (uint32_t k = 1; k < r.wl.count; k++) {
            int32_t at = r.seen.start_node[k];
            first[at] = r.seen.start[k] < first[at] ? r.seen.start[k] : first[at];
        }
        for (uint32_t i = 1; i < r.cfg.nodes; i++)
            if (first[i] > root_end + 2000000)
                fail_msg("%s: node %u's first task started %.3f ms after the root's end",
                         engine == SIM_ENGINE_SIMGRID ? "simgrid" : "des", i,
                         (double)(first[i] - root_end) / 1e6);
    }
    rig_free(&r);
}

static void test_turned_away_wake(void **state)
{
    (void)state;
    turned_away_woken(SIM_ENGINE_DES);
    need_simgrid();
    turned_away_woken(SIM_ENGINE_SIMGRID);
}

/* One seed, one run: SimGrid's too, events and all. */
static void test_deterministic(void **state)
{
    (void)state;
    need_simgrid();
    struct rig r;
    char *text = bag_of(200, 0.002, 0.001);
    rig_load(&r, text);
    r.cfg.nodes = 5;
    r.cfg.slots = 2;
    r.cfg.submit = SIM_SUBMIT_ONE;
    assert_int_equal(rig_run_on(&r, SIM_ENGINE_SIMGRID), 0);
    struct sim_result once = r.res;
    uint64_t hash = r.seen.hash;
    assert_int_equal(rig_run_on(&r, SIM_ENGINE_SIMGRID), 0);
    assert_true(r.res.makespan_s == once.makespan_s);
    assert_int_equal(r.res.events, once.events);
    assert_int_equal(r.res.messages, once.messages);
    assert_int_equal(r.seen.hash, hash);
    free(text);
    rig_free(&r);
}

/* What the discrete-event core refuses, the SimGrid engine refuses for the same reason;
 * the engines' names parse. */
/* The dispatcher's choices (sim_fixture.h) are the discrete-event core's. */
static void test_dispatch(void **state)
{
    (void)state;
    need_simgrid();
    dispatch_as_the_daemons(SIM_ENGINE_SIMGRID, false);
}

static void test_refusals(void **state)
{
    (void)state;
    struct rig r;
    rig_load(&r, "{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":0.001}\n");
    const char *why = NULL;
    r.cfg.steal.amount = STEAL_AMOUNT_A2WS;
    assert_int_equal(sim_sg_check(&r.cfg, &r.wl, &why), -ENOTSUP);
    assert_non_null(strstr(why, "A2WS"));
    assert_int_equal(sim_sg_run(&r.wl, &r.cfg, &r.res, &why), -ENOTSUP);
    sim_config_default(&r.cfg);
    r.cfg.placement.policy = PLACEMENT_AUTO;
    assert_int_equal(sim_sg_check(&r.cfg, &r.wl, &why), -ENOTSUP);
    assert_non_null(strstr(why, "auto"));
    sim_config_default(&r.cfg);
    r.cfg.nodes = 0;
    assert_int_equal(sim_sg_check(&r.cfg, &r.wl, &why), -EINVAL);
    rig_free(&r);
    rig_load(&r, "{\"id\":\"a\",\"kind\":\"command\",\"cmd\":\"true\"}\n");
    assert_int_equal(sim_sg_check(&r.cfg, &r.wl, &why), -EINVAL);
    assert_non_null(strstr(why, "duration"));
    rig_free(&r);
    assert_int_equal(sim_engine_parse("des"), SIM_ENGINE_DES);
    assert_int_equal(sim_engine_parse("simgrid"), SIM_ENGINE_SIMGRID);
    assert_int_equal(sim_engine_parse("SimGrid"), -1);
    assert_string_equal(sim_engine_name(SIM_ENGINE_SIMGRID), "simgrid");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bag),
        cmocka_unit_test(test_forty_thieves),
        cmocka_unit_test(test_dag),
        cmocka_unit_test(test_shared_egress),
        cmocka_unit_test(test_no_choice_same_makespan),
        cmocka_unit_test(test_turned_away_wake),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
