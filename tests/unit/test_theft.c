/*
 * test_theft — asynchronous theft (paper 001 §2.3) on jackdaw's ready queues: a seeded
 * random schedule interleaves local gets (readyq_pop, the executors), steal-takes
 * (readyq_take_tail, a victim answering a request), pushes of new and stolen tasks,
 * removals, and grants delivered late and out of order, on a few nodes that are thieves
 * and victims at once.  Requests carry a bound computed from a stale view, so victims
 * often have fewer tasks than asked and thieves get less than they wanted.  Checked all
 * along: no task is lost (queued + in flight + done = created) and, at the end, each
 * ran exactly once.  Run by `make unit`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy/readyq.h"

#define NODES 4
#define TASKS 20000
#define MAX_MSGS 4096

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(rng_next(s) % n);
}

/* A task is the address of its counter: item i runs when done[i] goes up. */
static unsigned char done[TASKS];
static uint64_t prio[TASKS];

static void *item(uint32_t id)
{
    return &done[id];
}

static uint32_t id_of(void *it)
{
    return (uint32_t)((unsigned char *)it - done);
}

enum msg_kind { MSG_REQUEST, MSG_GRANT };

struct msg {
    enum msg_kind kind;
    uint32_t from, to;
    uint32_t max;          /* the thief's bound (a grant carries its request's) */
    uint32_t count;        /* grant */
    uint32_t *tasks;       /* grant: owned */
};

struct world {
    struct readyq q[NODES];
    bool asking[NODES];    /* one request out per thief, as in the runtime */
    uint32_t seen[NODES][NODES]; /* what each node last knew of the others' lengths */
    struct msg msgs[MAX_MSGS];
    uint32_t nmsgs;
    uint32_t created, ran, in_flight;
    uint64_t asked, granted, short_grants;
};

static void run_task(struct world *w, void *it)
{
    uint32_t id = id_of(it);
    assert_true(id < w->created);
    assert_int_equal(done[id], 0);
    done[id]++;
    w->ran++;
}

static void check_conservation(const struct world *w)
{
    uint32_t queued = 0;
    for (int i = 0; i < NODES; i++)
        queued += (uint32_t)readyq_len(&w->q[i]);
    assert_int_equal(queued + w->in_flight + w->ran, w->created);
}

static void send(struct world *w, struct msg m)
{
    assert_true(w->nmsgs < MAX_MSGS);
    w->msgs[w->nmsgs++] = m;
}

/* The victim's side, on its own "loop": take from the tail what the request allows. */
static void on_request(struct world *w, const struct msg *m, uint64_t *rng)
{
    struct readyq *q = &w->q[m->to];
    uint32_t avail = (uint32_t)readyq_len(q);
    uint32_t want = avail / 2 + avail % 2; /* half, as the victim's policy */
    if (below(rng, 3) == 0)
        want = avail;                       /* or everything (the A2WS amount) */
    if (m->max && want > m->max)
        want = m->max;
    void **taken = want ? malloc(want * sizeof *taken) : NULL;
    size_t got = want ? readyq_take_tail(q, want, taken) : 0;
    assert_true(got <= want);
    struct msg g = {.kind = MSG_GRANT, .from = m->to, .to = m->from, .count = (uint32_t)got,
                    .max = m->max,
                    .tasks = got ? malloc(got * sizeof(uint32_t)) : NULL};
    for (size_t i = 0; i < got; i++)
        g.tasks[i] = id_of(taken[i]);
    free(taken);
    w->in_flight += (uint32_t)got;
    send(w, g);
}

/* The thief's side: take whatever came, which may be less than it asked for. */
static void on_grant(struct world *w, struct msg *m)
{
    for (uint32_t i = 0; i < m->count; i++)
        readyq_push(&w->q[m->to], item(m->tasks[i]), prio[m->tasks[i]]);
    w->in_flight -= m->count;
    w->granted += m->count;
    if (m->max && m->count < m->max)
        w->short_grants++;
    w->asking[m->to] = false;
    free(m->tasks);
    m->tasks = NULL;
}

/* Delivers one message chosen at random: the network reorders freely. */
static void deliver_one(struct world *w, uint64_t *rng)
{
    uint32_t k = below(rng, w->nmsgs);
    struct msg m = w->msgs[k];
    w->msgs[k] = w->msgs[--w->nmsgs];
    if (m.kind == MSG_REQUEST)
        on_request(w, &m, rng);
    else
        on_grant(w, &m);
}

static void hammer(uint64_t seed)
{
    struct world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    memset(done, 0, sizeof done);
    uint64_t rng = seed * 2 + 1; /* odd, never 0 */
    for (int i = 0; i < NODES; i++)
        readyq_init(&w->q[i]);
    for (uint32_t i = 0; i < TASKS; i++)
        prio[i] = below(&rng, 4) == 0 ? 0 : below(&rng, 1000); /* many ties, some order */

    uint64_t steps = 0;
    while (w->created < TASKS || w->nmsgs || w->ran < TASKS) {
        uint32_t node = below(&rng, NODES);
        struct readyq *q = &w->q[node];
        switch (below(&rng, 8)) {
        case 0: /* new work arrives, mostly at node 0 so that the others must steal */
        case 1:
            if (w->created < TASKS) {
                uint32_t at = below(&rng, 4) ? 0 : node;
                uint32_t burst = 1 + below(&rng, 8);
                for (uint32_t b = 0; b < burst && w->created < TASKS; b++, w->created++)
                    readyq_push(&w->q[at], item(w->created), prio[w->created]);
            }
            break;
        case 2: /* an executor's get */
        case 3: {
            void *it = readyq_pop(q);
            if (it)
                run_task(w, it);
            break;
        }
        case 4: /* a thief asks, bounded by what it saw some time ago */
            if (!w->asking[node]) {
                uint32_t victim = (node + 1 + below(&rng, NODES - 1)) % NODES;
                uint32_t stale = w->seen[node][victim];
                uint32_t max = below(&rng, 4) == 0 ? 0 : stale / 2 + 1;
                w->asking[node] = true;
                w->asked += max;
                send(w, (struct msg){.kind = MSG_REQUEST, .from = node, .to = victim,
                                     .max = max});
            }
            break;
        case 5: /* information ages: refresh one view */
            for (int j = 0; j < NODES; j++)
                if (below(&rng, 2))
                    w->seen[node][j] = (uint32_t)readyq_len(&w->q[j]);
            break;
        case 6: /* the network delivers */
        case 7:
            if (w->nmsgs)
                deliver_one(w, &rng);
            break;
        }
        /* Now and then a removal (cancellation) from the middle of a queue. */
        if (below(&rng, 64) == 0 && readyq_len(q)) {
            void *victim_item = readyq_at(q, below(&rng, (uint32_t)readyq_len(q)));
            assert_int_equal(readyq_remove(q, victim_item), 1);
            run_task(w, victim_item);
        }
        /* Once everything was created, drain: deliver and run what is left. */
        if (w->created == TASKS && below(&rng, 2)) {
            if (w->nmsgs)
                deliver_one(w, &rng);
            for (int i = 0; i < NODES; i++) {
                void *it = readyq_pop(&w->q[i]);
                if (it)
                    run_task(w, it);
            }
        }
        if ((++steps & 63) == 0)
            check_conservation(w);
        assert_true(steps < 50u * TASKS);
    }
    check_conservation(w);
    for (uint32_t i = 0; i < TASKS; i++)
        assert_int_equal(done[i], 1);
    for (int i = 0; i < NODES; i++) {
        assert_int_equal(readyq_len(&w->q[i]), 0);
        readyq_fini(&w->q[i]);
    }
    /* The schedule did what it is for: tasks moved, and some grants fell short. */
    assert_true(w->granted > TASKS / 20);
    assert_true(w->short_grants > 0);
    free(w);
}

static void test_interleavings(void **state)
{
    (void)state;
    static const uint64_t seeds[] = {1, 2, 3, 0xdeadbeef, 0x123456789abcdefull, 77, 4242};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        hammer(seeds[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleavings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
