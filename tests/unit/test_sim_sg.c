/*
 * test_sim_sg — the SimGrid engine (core/sim/sim_sg.c) against the discrete-event one
 * (core/sim/sim.c) on the same runs: from the events each reports, every task starts
 * once and ends once on one node, after its parents (and a message's latency after a
 * parent that ran elsewhere); the makespan never beats the capacity bound; the two
 * engines' makespans agree within 15 % on a bag of tasks and on DAGs whose data moves
 * in a fraction of a task's time, and exactly where the run leaves no choice; where
 * one output is read by many nodes at once, SimGrid shares the writer's link between
 * them, as the discrete-event core does not; SimGrid's run is a function of its inputs;
 * what it does not model is refused.  The SimGrid cases are skipped when libsimgrid
 * cannot be loaded.  Run by `make unit`.
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

#define MAX_NODES 16
#define WALL0 1000000000000LL
/* The agreement asked of the two engines: their time models differ (SimGrid shares a
 * link between the transfers that cross it, and orders the actions of one instant its
 * own way), their policy does not. */
#define AGREE 0.15

/* What one engine's sinks saw. */
struct seen {
    uint32_t tasks;
    int64_t *start, *end;
    int32_t *start_node, *end_node;
    uint32_t *starts, *ends;
    uint64_t started_on[MAX_NODES];
    int64_t last_wall[MAX_NODES];
    bool out_of_order;
    uint64_t hash;
};

struct sink_ctx {
    struct seen *seen;
    uint32_t node;
};

static void put(void *ctx, enum trace_kind kind, uint64_t task, int32_t peer, int32_t status,
                int64_t count, int64_t bytes, int64_t duration_ns, int64_t wall)
{
    struct sink_ctx *c = ctx;
    struct seen *s = c->seen;
    if (wall < s->last_wall[c->node])
        s->out_of_order = true;
    s->last_wall[c->node] = wall;
    s->hash = s->hash * 1000003u ^ ((uint64_t)kind << 56 ^ task ^ (uint64_t)peer << 40 ^
                                    (uint64_t)status ^ (uint64_t)count ^ (uint64_t)bytes ^
                                    (uint64_t)duration_ns ^ (uint64_t)wall ^ c->node);
    if (task == TRACE_NO_TASK)
        return;
    uint32_t i = task_key_index(task);
    assert_true(i < s->tasks);
    if (kind == TRACE_TASK_START) {
        s->starts[i]++;
        s->start[i] = wall - WALL0;
        s->start_node[i] = (int32_t)c->node;
        s->started_on[c->node]++;
    } else if (kind == TRACE_TASK_END) {
        s->ends[i]++;
        s->end[i] = wall - WALL0;
        s->end_node[i] = (int32_t)c->node;
        assert_int_equal(status, TASK_DONE);
    }
}

static void policy(void *ctx, const char *name, int32_t reason, int64_t wall)
{
    (void)ctx, (void)reason, (void)wall;
    assert_non_null(name);
}

static void sample(void *ctx, const struct trace_sample *x, int64_t wall)
{
    (void)ctx, (void)wall;
    assert_true(x->busy >= 0 && x->busy <= x->slots);
}

static uint64_t dropped(void *ctx)
{
    (void)ctx;
    return 0;
}

struct rig {
    struct workload wl;
    struct sim_config cfg;
    struct sim_result res;
    struct seen seen;
    struct sink_ctx ctx[MAX_NODES];
    struct trace_sink sinks[MAX_NODES];
    const struct trace_sink *sink_ptrs[MAX_NODES];
};

static void rig_load(struct rig *r, const char *text)
{
    memset(r, 0, sizeof *r);
    char *cause = NULL;
    if (workload_parse(&r->wl, text, strlen(text), "test", &cause) != 0)
        fail_msg("workload: %s", cause ? cause : "?");
    sim_config_default(&r->cfg);
}

static void seen_free(struct seen *s)
{
    free(s->start), free(s->end), free(s->start_node), free(s->end_node);
    free(s->starts), free(s->ends);
    memset(s, 0, sizeof *s);
}

/* Whether SimGrid can be loaded here; asked once. */
static int simgrid_state; /* 0 not asked, 1 yes, -1 no */

/* Runs the rig on `engine`; returns its code, the sinks' view in r->seen. */
static int rig_run(struct rig *r, enum sim_engine engine)
{
    struct seen *s = &r->seen;
    seen_free(s);
    s->tasks = r->wl.count;
    s->start = xcalloc(r->wl.count, sizeof *s->start);
    s->end = xcalloc(r->wl.count, sizeof *s->end);
    s->start_node = xcalloc(r->wl.count, sizeof *s->start_node);
    s->end_node = xcalloc(r->wl.count, sizeof *s->end_node);
    s->starts = xcalloc(r->wl.count, sizeof *s->starts);
    s->ends = xcalloc(r->wl.count, sizeof *s->ends);
    assert_true(r->cfg.nodes <= MAX_NODES);
    for (uint32_t i = 0; i < r->cfg.nodes; i++) {
        r->ctx[i] = (struct sink_ctx){.seen = s, .node = i};
        r->sinks[i] = (struct trace_sink){.ctx = &r->ctx[i], .put = put, .policy = policy,
                                          .sample = sample, .dropped = dropped};
        r->sink_ptrs[i] = &r->sinks[i];
    }
    r->cfg.sinks = r->sink_ptrs;
    r->cfg.start_wall_ns = WALL0;
    const char *why = NULL;
    int rc = engine == SIM_ENGINE_SIMGRID ? sim_sg_run(&r->wl, &r->cfg, &r->res, &why)
                                          : sim_run(&r->wl, &r->cfg, &r->res, &why);
    if (rc == 0)
        assert_null(why);
    else
        assert_non_null(why);
    return rc;
}

static void rig_free(struct rig *r)
{
    seen_free(&r->seen);
    workload_fini(&r->wl);
}

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

/* The work over the slots at their speeds: no schedule does better. */
static double capacity_bound(const struct rig *r)
{
    double capacity = 0;
    for (uint32_t i = 0; i < r->cfg.nodes; i++)
        capacity += (r->cfg.node_slots ? r->cfg.node_slots[i] : r->cfg.slots) *
                    (r->cfg.speeds ? r->cfg.speeds[i] : 1.0);
    return r->res.work_s / capacity;
}

/* Every task once, on one node, for at least its duration there, after its parents
 * (one latency after a parent that ended elsewhere); the makespan is the last end and
 * never beats the capacity bound. */
static void check_records(const struct rig *r)
{
    const struct seen *s = &r->seen;
    assert_false(s->out_of_order);
    assert_int_equal(r->res.tasks_done, r->wl.count);
    int64_t last = 0, lat = llround(r->cfg.latency_s * 1e9);
    uint64_t on_nodes = 0;
    for (uint32_t i = 0; i < r->wl.count; i++) {
        const struct workload_task *t = &r->wl.tasks[i];
        assert_int_equal(s->starts[i], 1);
        assert_int_equal(s->ends[i], 1);
        assert_int_equal(s->start_node[i], s->end_node[i]);
        double speed = r->cfg.speeds ? r->cfg.speeds[s->start_node[i]] : 1.0;
        assert_true((double)(s->end[i] - s->start[i]) >= t->duration_s / speed * 1e9 - 2);
        for (uint32_t k = 0; k < t->num_parents; k++) {
            uint32_t p = t->parents[k];
            assert_true(s->start[i] >= s->end[p]);
            if (s->end_node[p] != s->start_node[i])
                assert_true(s->start[i] >= s->end[p] + lat - 2);
        }
        last = s->end[i] > last ? s->end[i] : last;
    }
    for (uint32_t n = 0; n < r->cfg.nodes; n++)
        on_nodes += s->started_on[n];
    assert_int_equal(on_nodes, r->wl.count);
    assert_true(fabs(r->res.makespan_s * 1e9 - (double)last) <= 2);
    assert_true(r->res.makespan_s >= capacity_bound(r) - 1e-9);
}

/* Both engines on the rig: each checked, their makespans within AGREE of each other. */
static void both(struct rig *r, struct sim_result *des, struct sim_result *sg)
{
    assert_int_equal(rig_run(r, SIM_ENGINE_DES), 0);
    check_records(r);
    *des = r->res;
    assert_int_equal(rig_run(r, SIM_ENGINE_SIMGRID), 0);
    check_records(r);
    *sg = r->res;
    double diff = fabs(sg->makespan_s - des->makespan_s) / des->makespan_s;
    if (diff > AGREE)
        fail_msg("the engines disagree by %.1f %%: des %.6f s, simgrid %.6f s", 100 * diff,
                 des->makespan_s, sg->makespan_s);
    assert_true(sg->work_s == des->work_s);
    assert_true(sg->events > 0 && sg->steal_attempts > 0);
}

static char *bag(uint32_t n)
{
    size_t cap = (size_t)n * 80 + 1;
    char *text = xmalloc(cap), *p = text;
    for (uint32_t i = 0; i < n; i++)
        p += snprintf(p, cap - (size_t)(p - text),
                      "{\"id\":\"t%u\",\"kind\":\"sleep\",\"duration_s\":%g}\n", i,
                      0.002 + 0.001 * (i * 7 % 13));
    return text;
}

/* A bag of unequal tasks, ten a slot, hashed over 8 nodes: stealing evens it out. */
static void test_bag(void **state)
{
    (void)state;
    need_simgrid();
    struct rig r;
    char *text = bag(320);
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
    char text[4096], *p = text;
    p += sprintf(p, "{\"id\":\"root\",\"kind\":\"sleep\",\"duration_s\":0.001,"
                    "\"output_bytes\":2000000}\n");
    for (int i = 0; i < 16; i++)
        p += sprintf(p, "{\"id\":\"c%d\",\"kind\":\"sleep\",\"duration_s\":0.02,"
                        "\"parents\":[\"root\"]}\n", i);
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 6;
    r.cfg.slots = 2;
    r.cfg.bandwidth_Bps = 125e6;
    r.cfg.placement.policy = PLACEMENT_WS;
    assert_int_equal(rig_run(&r, SIM_ENGINE_SIMGRID), 0);
    check_records(&r);
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
    char *text = bag(60);
    rig_load(&r, text);
    double speeds[3] = {1.0, 0.5, 2.0};
    uint32_t slots[3] = {1, 2, 3};
    r.cfg.nodes = 3;
    r.cfg.speeds = speeds;
    r.cfg.node_slots = slots;
    r.cfg.slots = 3;
    r.cfg.submit = SIM_SUBMIT_ROUND_ROBIN;
    r.cfg.steal.mode = STEAL_NONE;
    assert_int_equal(rig_run(&r, SIM_ENGINE_DES), 0);
    check_records(&r);
    double des = r.res.makespan_s;
    assert_int_equal(rig_run(&r, SIM_ENGINE_SIMGRID), 0);
    check_records(&r);
    assert_true(fabs(r.res.makespan_s - des) < 1e-6);
    assert_int_equal(r.res.steal_attempts, 0);
    assert_int_equal(r.res.messages, 0);
    free(text);
    rig_free(&r);
}

/* One seed, one run: SimGrid's too, events and all. */
static void test_deterministic(void **state)
{
    (void)state;
    need_simgrid();
    struct rig r;
    char *text = bag(200);
    rig_load(&r, text);
    r.cfg.nodes = 5;
    r.cfg.slots = 2;
    r.cfg.submit = SIM_SUBMIT_ONE;
    assert_int_equal(rig_run(&r, SIM_ENGINE_SIMGRID), 0);
    struct sim_result once = r.res;
    uint64_t hash = r.seen.hash;
    assert_int_equal(rig_run(&r, SIM_ENGINE_SIMGRID), 0);
    assert_true(r.res.makespan_s == once.makespan_s);
    assert_int_equal(r.res.events, once.events);
    assert_int_equal(r.res.messages, once.messages);
    assert_int_equal(r.seen.hash, hash);
    free(text);
    rig_free(&r);
}

/* What the discrete-event core refuses, the SimGrid engine refuses for the same reason;
 * the engines' names parse. */
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
        cmocka_unit_test(test_dag),
        cmocka_unit_test(test_shared_egress),
        cmocka_unit_test(test_no_choice_same_makespan),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
