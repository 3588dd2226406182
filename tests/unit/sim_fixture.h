/*
 * sim_fixture — what the simulator's tests share: a rig that loads a workload, runs it
 * on either engine with a trace sink on every node, and keeps what the sinks saw (each
 * task's start and end, where, how often; the steal requests; the placements
 * reported; a hash of every event in order); the records' check that every engine
 * owes (each task once, after its parents, the makespan its last end, never below the
 * capacity bound); and bags of sleep tasks.  Included by test_sim.c and test_sim_sg.c
 * only.
 */
#ifndef JACKDAW_TEST_SIM_FIXTURE_H
#define JACKDAW_TEST_SIM_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "core/sim/sim.h"
#include "core/sim/sim_sg.h"

#define MAX_NODES 64
/* The runs' start_wall_ns: the sinks' times less this are simulated ns. */
#define WALL0 1000000000000LL

/* A steal request as the trace says it: who, to whom, when, for how many. */
struct steal_ev {
    uint32_t node;
    int32_t peer;
    int64_t t;
    int64_t count;
};

/* What the sinks saw. */
struct seen {
    uint32_t nodes;
    uint32_t tasks;
    int64_t *start, *end;   /* per task: simulated ns of its start / end, -1 if none */
    int32_t *start_node, *end_node;
    uint32_t *starts, *ends; /* per task: how many */
    uint64_t events[MAX_NODES];
    uint64_t started_on[MAX_NODES];
    int64_t last_wall[MAX_NODES];
    bool out_of_order;
    uint64_t hash;          /* of every event, in order */
    struct steal_ev *requests; /* every STEAL_REQUEST, in order */
    size_t nrequests, requests_cap;
    int32_t *stolen_from;   /* per task: the peer of its last TASK_STOLEN_IN, -1 if none */
    uint64_t stolen_in[MAX_NODES];
    char policy[MAX_NODES][8]; /* the last placement each node reported */
    uint32_t policy_changes; /* POLICY_CHANGE events with a reason (not the first) */
    uint32_t to_mdl;        /* ... of which to mdl */
    uint32_t fetches;       /* DATA_FETCH records */
    int64_t fetch_ns_min, fetch_ns_max; /* ... their durations */
};

struct sink_ctx {
    struct seen *seen;
    uint32_t node;
};

static inline void put(void *ctx, enum trace_kind kind, uint64_t task, int32_t peer,
                       int32_t status, int64_t count, int64_t bytes, int64_t duration_ns,
                       int64_t wall)
{
    struct sink_ctx *c = ctx;
    struct seen *s = c->seen;
    s->events[c->node]++;
    if (wall < s->last_wall[c->node])
        s->out_of_order = true;
    s->last_wall[c->node] = wall;
    s->hash = s->hash * 1000003u ^ ((uint64_t)kind << 56 ^ task ^ (uint64_t)peer << 40 ^
                                    (uint64_t)status ^ (uint64_t)count ^ (uint64_t)bytes ^
                                    (uint64_t)duration_ns ^ (uint64_t)wall ^ c->node);
    if (kind == TRACE_STEAL_REQUEST) {
        s->requests = xgrow(s->requests, &s->requests_cap, s->nrequests + 1,
                            sizeof *s->requests);
        s->requests[s->nrequests++] = (struct steal_ev){.node = c->node, .peer = peer,
                                                        .t = wall - WALL0, .count = count};
    }
    if (kind == TRACE_DATA_FETCH) {
        if (!s->fetches || duration_ns < s->fetch_ns_min)
            s->fetch_ns_min = duration_ns;
        if (!s->fetches || duration_ns > s->fetch_ns_max)
            s->fetch_ns_max = duration_ns;
        s->fetches++;
    }
    if (task == TRACE_NO_TASK)
        return;
    uint32_t i = task_key_index(task);
    assert_true(i < s->tasks);
    if (kind == TRACE_TASK_STOLEN_IN) {
        s->stolen_from[i] = peer;
        s->stolen_in[c->node]++;
    }
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

static inline void policy(void *ctx, const char *name, int32_t reason, int64_t wall)
{
    struct sink_ctx *c = ctx;
    (void)wall;
    assert_non_null(name);
    snprintf(c->seen->policy[c->node], sizeof c->seen->policy[c->node], "%s", name);
    c->seen->policy_changes += reason >= 0;
    c->seen->to_mdl += reason >= 0 && strcmp(name, "mdl") == 0;
}

static inline void sample(void *ctx, const struct trace_sample *x, int64_t wall)
{
    struct sink_ctx *c = ctx;
    assert_true(x->busy >= 0 && x->busy <= x->slots);
    (void)wall;
    c->seen->events[c->node]++;
}

static inline uint64_t dropped(void *ctx)
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

/* The workload in `text`, with sim_config_default's configuration. */
static inline void rig_load(struct rig *r, const char *text)
{
    memset(r, 0, sizeof *r);
    char *cause = NULL;
    if (workload_parse(&r->wl, text, strlen(text), "test", &cause) != 0)
        fail_msg("workload: %s", cause ? cause : "?");
    sim_config_default(&r->cfg);
}

static inline void seen_free(struct seen *s)
{
    free(s->start), free(s->end), free(s->start_node), free(s->end_node);
    free(s->starts), free(s->ends), free(s->requests), free(s->stolen_from);
    memset(s, 0, sizeof *s);
}

/* Runs the rig's workload on `engine`; returns its code, the sinks' view in r->seen. */
static inline int rig_run_on(struct rig *r, enum sim_engine engine)
{
    struct seen *s = &r->seen;
    seen_free(s);
    s->nodes = r->cfg.nodes;
    s->tasks = r->wl.count;
    s->start = xcalloc(r->wl.count, sizeof *s->start);
    s->end = xcalloc(r->wl.count, sizeof *s->end);
    s->start_node = xcalloc(r->wl.count, sizeof *s->start_node);
    s->end_node = xcalloc(r->wl.count, sizeof *s->end_node);
    s->starts = xcalloc(r->wl.count, sizeof *s->starts);
    s->ends = xcalloc(r->wl.count, sizeof *s->ends);
    s->stolen_from = xcalloc(r->wl.count, sizeof *s->stolen_from);
    for (uint32_t i = 0; i < r->wl.count; i++)
        s->stolen_from[i] = -1;
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

/* The same on the discrete-event core, the default engine. */
static inline int rig_run(struct rig *r)
{
    return rig_run_on(r, SIM_ENGINE_DES);
}

static inline void rig_free(struct rig *r)
{
    seen_free(&r->seen);
    workload_fini(&r->wl);
}

/* The capacity bound: the work over every slot at its node's speed; no schedule does
 * better. */
static inline double capacity_bound(const struct rig *r)
{
    double capacity = 0;
    for (uint32_t i = 0; i < r->cfg.nodes; i++)
        capacity += (r->cfg.node_slots ? r->cfg.node_slots[i] : r->cfg.slots) *
                    (r->cfg.speeds ? r->cfg.speeds[i] : 1.0);
    return r->res.work_s / capacity;
}

/*
 * Every task once, on one node, for at least its duration there, after its parents
 * (one latency after a parent that ended elsewhere); the makespan is the last end and
 * never beats the capacity bound.  `slack_ns` is how far the engine's times may stray
 * from the model's: 0 for the discrete-event core, whose clock counts nanoseconds, 1
 * for SimGrid, whose clock is a double of seconds rounded to the nanosecond at each
 * end of an interval.
 */
static inline void check_records(const struct rig *r, int64_t slack_ns)
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
        assert_true((double)(s->end[i] - s->start[i]) >=
                    t->duration_s / speed * 1e9 - 1 - (double)slack_ns);
        for (uint32_t k = 0; k < t->num_parents; k++) {
            uint32_t p = t->parents[k];
            assert_true(s->start[i] >= s->end[p]);
            if (s->end_node[p] != s->start_node[i])
                assert_true(s->start[i] >= s->end[p] + lat - 2 * slack_ns);
        }
        last = s->end[i] > last ? s->end[i] : last;
    }
    for (uint32_t n = 0; n < r->cfg.nodes; n++)
        on_nodes += s->started_on[n];
    assert_int_equal(on_nodes, r->wl.count);
    assert_true(fabs(r->res.makespan_s * 1e9 - (double)last) <= 1 + (double)slack_ns);
    assert_true(r->res.makespan_s >= capacity_bound(r) - 1e-9);
}

/* A bag of `n` sleep tasks, task i of base_s + step_s x (7i mod 13) seconds: unequal
 * but for a step of 0.  The caller frees it. */
static inline char *bag_of(uint32_t n, double base_s, double step_s)
{
    size_t cap = (size_t)n * 80 + 1;
    char *text = xmalloc(cap), *p = text;
    for (uint32_t i = 0; i < n; i++)
        p += snprintf(p, cap - (size_t)(p - text),
                      "{\"id\":\"t%u\",\"kind\":\"sleep\",\"duration_s\":%g}\n", i,
                      base_s + step_s * (i * 7 % 13));
    return text;
}

/* A bag of `n` equal sleep tasks. */
static inline char *bag(uint32_t n, double duration_s)
{
    return bag_of(n, duration_s, 0);
}

/* A root of `root_s` (with an output of `out_bytes`, if any) and `children` children of
 * `child_s` each, as a workload's text in `text` (room for 80 bytes a task). */
static inline void root_and_children(char *text, double root_s, uint64_t out_bytes,
                                     int children, double child_s)
{
    char *p = text;
    p += sprintf(p, "{\"id\":\"root\",\"kind\":\"sleep\",\"duration_s\":%g", root_s);
    if (out_bytes)
        p += sprintf(p, ",\"output_bytes\":%llu", (unsigned long long)out_bytes);
    p += sprintf(p, "}\n");
    for (int i = 0; i < children; i++)
        p += sprintf(p, "{\"id\":\"c%d\",\"kind\":\"sleep\",\"duration_s\":%g,"
                        "\"parents\":[\"root\"]}\n", i, child_s);
}

/*
 * The daemons' dispatcher (node_task.c), on `engine`: node 0 holds a and b, which read
 * object x (12.5 MB on node 1, 100 ms at 125 MB/s), and c, which reads y (on node 0),
 * 10 ms each, in that order of priority.  With one slot, c runs at once beside a's
 * fetch (a free slot takes a task whose inputs are here), a when x is here, b after
 * it; with two, b waits for the copy a's fetch brings rather than start without it or
 * fetch x again.  One transfer either way.  `exact`: the times to the ns (the
 * discrete-event core), else their order (SimGrid's TCP model takes a little longer).
 */
static inline void dispatch_as_the_daemons(enum sim_engine engine, bool exact)
{
    static const char text[] =
        "{\"object\":\"x\",\"bytes\":12500000,\"node\":1}\n"
        "{\"object\":\"y\",\"bytes\":1000,\"node\":0}\n"
        "{\"id\":\"a\",\"kind\":\"sleep\",\"duration_s\":0.01,\"inputs\":[\"x\"]}\n"
        "{\"id\":\"b\",\"kind\":\"sleep\",\"duration_s\":0.01,\"inputs\":[\"x\"]}\n"
        "{\"id\":\"c\",\"kind\":\"sleep\",\"duration_s\":0.01,\"inputs\":[\"y\"]}\n";
    const int64_t ms = 1000000, move = 100 * ms;
    struct rig r;
    rig_load(&r, text);
    r.cfg.nodes = 2;
    r.cfg.submit = SIM_SUBMIT_ONE;
    r.cfg.steal.mode = STEAL_NONE;
    r.cfg.placement.policy = PLACEMENT_WS;
    r.cfg.latency_s = 0;
    r.cfg.bandwidth_Bps = r.cfg.placement.bandwidth_Bps = 125e6;
    for (uint32_t slots = 1; slots <= 2; slots++) {
        r.cfg.slots = slots;
        assert_int_equal(rig_run_on(&r, engine), 0);
        check_records(&r, engine == SIM_ENGINE_SIMGRID);
        const int64_t *start = r.seen.start;
        for (uint32_t i = 0; i < 3; i++)
            assert_int_equal(r.seen.start_node[i], 0);
        assert_int_equal(r.seen.fetches, 1);
        assert_int_equal(r.res.bytes_moved, 12500000);
        assert_int_equal(start[2], 0);
        assert_true(start[0] >= move);
        assert_true(start[1] >= start[0] + (slots == 1 ? 10 * ms : 0));
        if (exact) {
            assert_int_equal(start[0], move);
            assert_int_equal(start[1], slots == 1 ? move + 10 * ms : move);
        }
    }
    rig_free(&r);
}

#endif
