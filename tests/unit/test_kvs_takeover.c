/*
 * The replicated metadata store through deaths (issue 15), on the fake network of
 * kvs_net.h: answers to a dead primary's requests, orphans, moves from and ends lost with
 * a dead node, late completions refused, lost outputs reopened, and DAGs run through one
 * or two deaths at random moments with nothing lost and nothing done twice.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tests/unit/kvs_net.h"

/* A backup dies while an answer waits for it: the answer waits for its successor, which
 * the take-over sent the record to, rather than leave with one copy alive. */
static void test_answer_waits_for_the_new_backup(void **state)
{
    (void)state;
    net_start(4, 29);
    use_replicas(2);
    uint64_t k = key_on(1, 0, 0);
    put_record(CLIENT, k, 0, NULL, 0, 0, 0);
    settle();
    struct answer a = {0};
    int barrier = 0;
    struct tmd_run run = {.node = 0, .t_start = 1, .t_end = 2};
    kvs_cas(net.kvs[0], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a);
    kvs_barrier(net.kvs[0], on_barrier, &barrier);
    net.dead[1] = 1;
    assert_int_equal(kvs_set_down(net.kvs[0], 1), 0);
    run_network();
    assert_int_equal(a.calls, 0);
    assert_int_equal(barrier, 0);
    assert_non_null(kvs_local_record(net.kvs[2], k));
    assert_int_equal(kvs_local_record(net.kvs[2], k)->status, TASK_DONE);
    kvs_flush(net.kvs[2]);
    run_network();
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, 1);
    assert_int_equal(barrier, 1);
}

/* Lookups and CAS sent to a primary that dies unanswered are answered by the next. */
static void test_requests_to_a_dead_primary_answered(void **state)
{
    (void)state;
    net_start(5, 11);
    use_replicas(2);
    net.fifo = 1;
    uint64_t k1 = key_on(1, 1, 0), k2 = key_on(1, 1, k1 + 1 - task_key(1, 0));
    uint64_t k3 = key_on(1, 1, k2 + 1 - task_key(1, 0));
    put_record(CLIENT, k1, 0, NULL, 0, 3, 1);
    put_record(CLIENT, k2, 0, NULL, 0, 3, 2);
    put_record(CLIENT, k3, 0, NULL, 0, 3, 3);
    settle();
    /* Never delivered: node 1 dies with them queued. */
    struct answer a1 = {0}, a2 = {0}, a3 = {0};
    struct tmd_run run = {.node = 3, .t_start = 5, .t_end = 6, .data_size = 9};
    kvs_lookup(net.kvs[3], k1, on_answer, &a1);
    kvs_cas(net.kvs[3], k2, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a2);
    /* Delivered, applied and forwarded to the backup, but not answered: the answer
     * waits for node 2's acknowledgement, and node 1 dies first. */
    kvs_cas(net.kvs[3], k3, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, on_answer, &a3);
    struct link *l = &net.links[3][1];
    l->head = l->len - 1; /* the two before it are lost */
    net.pending -= 2;
    deliver_link(3, 1);
    assert_int_equal(net.links[1][2].len - net.links[1][2].head, 1);
    deliver_link(1, 2);
    assert_int_equal(kvs_local_record(net.kvs[2], k3)->status, TASK_DONE);
    assert_int_equal(a3.calls, 0);
    down_everywhere(1);
    settle();
    assert_int_equal(a1.calls, 1);
    assert_int_equal(a1.status, 0);
    assert_int_equal(a2.calls, 1);
    assert_int_equal(a2.status, 1);
    assert_int_equal(a2.rec_status, TASK_DONE);
    /* The same completion asked again: counted once, answered yes. */
    assert_int_equal(a3.calls, 1);
    assert_int_equal(a3.status, 1);
    assert_int_equal(a3.rec_status, TASK_DONE);
    for (uint64_t k = k1; k <= k3; k++)
        if (task_key_owner(k, 5) == 1)
            check_copies(k, 2, 0);
}

static struct orphans_seen {
    uint64_t keys[256];
    size_t n;
} seen;

static void collect_orphan(void *arg, const struct tmd *rec)
{
    (void)arg;
    seen.keys[seen.n++] = rec->key;
}

/* The dead node's unfinished tasks are listed once in the cluster, by their primaries. */
static void test_orphans_listed_once(void **state)
{
    (void)state;
    net_start(6, 13);
    use_replicas(2);
    enum { N = 120 };
    uint32_t dead = 2;
    int expect[N] = {0};
    for (uint32_t i = 0; i < N; i++) {
        uint64_t child = task_key(4, i + 1);
        put_record(CLIENT, task_key(4, i), i % 3 == 2, i % 3 == 1 ? &child : NULL, i % 3 == 1,
                   i % 6, 0);
    }
    settle();
    /* Finish some, fail some (which cancels their waiting child). */
    for (uint32_t i = 0; i < N; i++) {
        if (i % 3 == 2 || i % 4 == 3)
            continue;
        uint32_t holder = i % 6;
        struct tmd_run run = {.node = holder};
        uint8_t status = i % 5 == 0 ? TASK_FAILED : TASK_DONE;
        kvs_cas(net.kvs[holder], task_key(4, i), KVS_FIELD_STATUS, TASK_READY, status, &run,
                NULL, NULL);
        if (i % 3 == 1 && status == TASK_FAILED)
            kvs_append(net.kvs[holder], task_key(4, i + 1), KVS_FIELD_PARENT_FAILED, holder, 0,
                       0);
    }
    settle();
    for (uint32_t i = 0; i < N; i++) {
        const struct tmd *rec =
            kvs_local_record(net.kvs[task_key_owner(task_key(4, i), 6)], task_key(4, i));
        expect[i] = rec->holder == dead && !task_status_final(rec->status);
    }
    down_everywhere(dead);
    settle();
    assert_int_equal(kvs_orphans(net.kvs[0], 1, collect_orphan, NULL), -EINVAL);
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            assert_true(kvs_orphans(net.kvs[node], dead, collect_orphan, NULL) >= 0);
    size_t by_dead = seen.n;
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            assert_true(kvs_orphans(net.kvs[node], KVS_NO_SHARD, collect_orphan, NULL) >= 0);
    assert_int_equal(seen.n, by_dead);
    size_t want = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t times = 0;
        for (size_t j = 0; j < seen.n; j++)
            times += seen.keys[j] == task_key(4, i);
        assert_int_equal(times, (size_t)expect[i]);
        want += (size_t)expect[i];
    }
    assert_int_equal(seen.n, want);
    assert_true(want > 5);
    /* Handed over: once, as attempt 1; a second hand-over of attempt 0 is refused. */
    for (size_t j = 0; j < seen.n; j++) {
        uint32_t primary = kvs_primary(net.kvs[0], seen.keys[j]);
        assert_int_equal(kvs_resubmit(net.kvs[primary], seen.keys[j], 0, 4), 1);
        assert_int_equal(kvs_resubmit(net.kvs[primary], seen.keys[j], 0, 5), 0);
        const struct tmd *rec = kvs_local_record(net.kvs[primary], seen.keys[j]);
        assert_int_equal(rec->holder, 4);
        assert_int_equal(tmd_late(rec)->attempt, 1);
        assert_int_equal(tmd_late(rec)->history[tmd_late(rec)->num_history - 1], 4);
        assert_int_not_equal(rec->status, TASK_RUNNING);
    }
    assert_int_equal(kvs_resubmit(net.kvs[0], seen.keys[0], 1, 6), -EINVAL);
    settle();
    for (size_t j = 0; j < seen.n; j++)
        check_copies(seen.keys[j], 2, 0);
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            assert_int_equal(kvs_orphans(net.kvs[node], KVS_NO_SHARD, collect_orphan, NULL), 0);
}

/*
 * Tasks whose last move came from the dead node are listed once, by their primaries,
 * for their (live) holders to be asked: moved 2 -> 4, and 2 -> 4 -> 5 (the last move is
 * from 4: not listed), 3 -> 2 (held by the dead: an orphan, not listed here), a finished
 * one (not listed), and never moved (not listed).
 */
static void test_moved_from_dead_listed(void **state)
{
    (void)state;
    net_start(6, 19);
    use_replicas(2);
    enum { N = 60 };
    uint32_t dead = 2;
    for (uint32_t i = 0; i < N; i++)
        put_record(CLIENT, task_key(5, i), 0, NULL, 0, i % 5 == 4 ? 3 : dead, 0);
    settle();
    int expect[N] = {0};
    for (uint32_t i = 0; i < N; i++) {
        uint64_t k = task_key(5, i);
        switch (i % 5) {
        case 0: /* moved from the dead node */
            kvs_append(net.kvs[dead], k, KVS_FIELD_HISTORY, 4, 0, 0);
            expect[i] = 1;
            break;
        case 1: /* moved on again */
            kvs_append(net.kvs[dead], k, KVS_FIELD_HISTORY, 4, 0, 0);
            settle();
            kvs_append(net.kvs[4], k, KVS_FIELD_HISTORY, 5, 0, 0);
            break;
        case 2: { /* moved, then done */
            kvs_append(net.kvs[dead], k, KVS_FIELD_HISTORY, 4, 0, 0);
            settle();
            struct tmd_run run = {.node = 4};
            kvs_cas(net.kvs[4], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL, NULL);
            break;
        }
        case 4: /* moved to the dead node */
            kvs_append(net.kvs[3], k, KVS_FIELD_HISTORY, dead, 0, 0);
            break;
        default: /* never moved */
            break;
        }
    }
    settle();
    assert_int_equal(kvs_moved_from(net.kvs[0], dead, collect_orphan, NULL), -EINVAL);
    down_everywhere(dead);
    settle();
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            assert_true(kvs_moved_from(net.kvs[node], dead, collect_orphan, NULL) >= 0);
    size_t want = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t times = 0;
        for (size_t j = 0; j < seen.n; j++)
            times += seen.keys[j] == task_key(5, i);
        assert_int_equal(times, (size_t)expect[i]);
        want += (size_t)expect[i];
    }
    assert_int_equal(seen.n, want);
    assert_true(want >= 10);
    /* Their records name where they came from: the first holder, then the move. */
    uint64_t k0 = task_key(5, 0);
    const struct tmd *rec = kvs_local_record(net.kvs[kvs_primary(net.kvs[0], k0)], k0);
    assert_int_equal(tmd_late(rec)->num_history, 2);
    assert_int_equal(tmd_late(rec)->history[0], dead);
    assert_int_equal(tmd_late(rec)->history[1], 4);
}

/*
 * The ends the dead node was to report are listed once, by their primaries: done or
 * failed by it, or cancelled while it held them; not those a live node ran, nor its
 * unfinished tasks (orphans, run again).
 */
static void test_ends_lost_with_dead_listed(void **state)
{
    (void)state;
    net_start(6, 23);
    use_replicas(2);
    enum { N = 60 };
    uint32_t dead = 3;
    int expect[N] = {0};
    for (uint32_t i = 0; i < N; i++)
        put_record(CLIENT, task_key(6, i), 0, NULL, 0, i % 2 ? dead : 1, 0);
    settle();
    for (uint32_t i = 0; i < N; i++) {
        uint64_t k = task_key(6, i);
        uint32_t holder = i % 2 ? dead : 1;
        switch (i % 6) {
        case 0: case 1: { /* done by its holder: listed when that is the dead node */
            struct tmd_run run = {.node = holder};
            kvs_cas(net.kvs[holder], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL,
                    NULL);
            expect[i] = holder == dead;
            break;
        }
        case 3: { /* failed on the dead node */
            struct tmd_run run = {.node = dead};
            kvs_cas(net.kvs[dead], k, KVS_FIELD_STATUS, TASK_READY, TASK_FAILED, &run, NULL,
                    NULL);
            expect[i] = 1;
            break;
        }
        case 5: /* cancelled while the dead node held it */
            kvs_append(net.kvs[dead], k, KVS_FIELD_REMOVE, dead, 0, 0);
            expect[i] = 1;
            break;
        default: /* unfinished */
            break;
        }
    }
    settle();
    down_everywhere(dead);
    settle();
    memset(&seen, 0, sizeof seen);
    for (uint32_t node = 0; node < 6; node++)
        if (node != dead)
            kvs_ends_lost_with(net.kvs[node], dead, collect_orphan, NULL);
    size_t want = 0;
    for (uint32_t i = 0; i < N; i++) {
        size_t times = 0;
        for (size_t j = 0; j < seen.n; j++)
            times += seen.keys[j] == task_key(6, i);
        assert_int_equal(times, (size_t)expect[i]);
        want += (size_t)expect[i];
    }
    assert_int_equal(seen.n, want);
    assert_true(want >= 20);
}

/*
 * Two nodes die together, a primary and its first backup: the survivor that keeps the
 * last copy of the first's records learns the deaths one by one.  At the first it is not
 * their primary yet (the first backup still counts as alive), so it lists none of them;
 * at the second it is, and it lists the ends of both dead runners (kvs.c
 * kvs_ends_lost_with: any runner down), or the first's ends, whose notices to the
 * client may have died with it (conn_msg_end_late), would be told to nobody.
 */
static void test_ends_of_two_deaths_listed_by_the_last_copy(void **state)
{
    (void)state;
    net_start(6, 29);
    use_replicas(3);
    enum { N = 12 };
    uint32_t first = 2, second = 3, survivor = 4;
    uint64_t keys[N];
    for (uint32_t i = 0; i < N; i++) {
        keys[i] = key_on(7, first, i ? (uint32_t)task_key_index(keys[i - 1]) + 1 : 0);
        put_record(CLIENT, keys[i], 0, NULL, 0, first, 0);
    }
    settle();
    for (uint32_t i = 0; i < N; i++) {
        struct tmd_run run = {.node = first};
        kvs_cas(net.kvs[first], keys[i], KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run, NULL,
                NULL);
    }
    settle();
    net.dead[first] = net.dead[second] = 1;
    assert_int_equal(kvs_set_down(net.kvs[survivor], first), 0);
    memset(&seen, 0, sizeof seen);
    assert_int_equal(kvs_ends_lost_with(net.kvs[survivor], first, collect_orphan, NULL), 0);
    assert_int_equal(kvs_set_down(net.kvs[survivor], second), 0);
    assert_int_equal(kvs_ends_lost_with(net.kvs[survivor], second, collect_orphan, NULL), N);
    for (uint32_t i = 0; i < N; i++) {
        size_t times = 0;
        for (size_t j = 0; j < seen.n; j++)
            times += seen.keys[j] == keys[i];
        assert_int_equal(times, 1);
    }
}

/* A completion counts once, by the attempt that holds the task; the dead are not heard. */
static void test_late_completion_refused(void **state)
{
    (void)state;
    net_start(4, 17);
    use_replicas(2);
    uint64_t k = key_on(1, 0, 0);
    put_record(CLIENT, k, 0, NULL, 0, 1, 1);
    settle();
    /* Node 1 runs it and reports late: node 0 has declared it dead and handed the task
     * to node 2 meanwhile. */
    struct answer late = {0}, relayed = {0}, now = {0}, again = {0}, other = {0};
    struct tmd_run run1 = {.node = 1, .t_start = 1, .t_end = 2};
    kvs_cas(net.kvs[1], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run1, on_answer, &late);
    assert_int_equal(kvs_set_down(net.kvs[0], 1), 0);
    assert_int_equal(kvs_resubmit(net.kvs[0], k, 0, 2), 1);
    settle();
    assert_int_equal(late.calls, 0); /* not heard, not answered */
    /* The same stale attempt from a node nobody thinks dead: refused. */
    kvs_cas(net.kvs[3], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run1, on_answer, &relayed);
    settle();
    assert_int_equal(relayed.calls, 1);
    assert_int_equal(relayed.status, -ESTALE);
    struct tmd_run run2 = {.node = 2, .attempt = 1, .t_start = 3, .t_end = 4, .data_size = 5};
    kvs_cas(net.kvs[2], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run2, on_answer, &now);
    settle();
    assert_int_equal(now.calls, 1);
    assert_int_equal(now.status, 1);
    /* Asked again by its runner: yes, nothing changes; by another node: no. */
    kvs_cas(net.kvs[2], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run2, on_answer, &again);
    kvs_cas(net.kvs[3], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run2, on_answer, &other);
    settle();
    assert_int_equal(again.status, 1);
    assert_int_equal(other.status, 0);
    const struct tmd *rec = kvs_local_record(net.kvs[0], k);
    assert_int_equal(tmd_late(rec)->runner, 2);
    assert_int_equal(tmd_late(rec)->attempt, 1);
    assert_int_equal(tmd_late(rec)->data_size, 5);
    /* Node 1 was the backup: node 0 restored R on node 2 when it learned. */
    assert_non_null(kvs_local_record(net.kvs[2], k));
    assert_int_equal(tmd_late(kvs_local_record(net.kvs[2], k))->attempt, 1);
}

/* Lineage: a DONE task's output died with its runner; its primary re-opens the record
 * once (attempt + 1, held by the dead runner, flagged), the backup follows, the task is
 * an orphan to hand on, and its recomputation completes it at the newer attempt.  Only
 * the primary, only for a dead runner, only at the record's attempt. */
static void test_reopen_lost_output(void **state)
{
    (void)state;
    net_start(4, 23);
    use_replicas(2);
    uint64_t k = key_on(1, 0, 0);
    put_record(CLIENT, k, 0, NULL, 0, 3, 1);
    settle();
    struct answer ran = {0}, again = {0};
    struct tmd_run run3 = {.node = 3, .t_start = 1, .t_end = 2, .data_size = 7};
    kvs_cas(net.kvs[3], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run3, on_answer, &ran);
    settle();
    assert_int_equal(ran.status, 1);
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 3), 0); /* node 3 is alive */
    down_everywhere(3);
    settle();
    assert_int_equal(kvs_reopen(net.kvs[1], k, 0, 3), 0); /* a backup: not its decision */
    assert_int_equal(kvs_reopen(net.kvs[0], k, 1, 3), 0); /* not the record's attempt */
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 2), 0); /* not its runner */
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 9), -EINVAL);
    assert_int_equal(kvs_append(net.kvs[2], k, KVS_FIELD_REOPEN, 3, 0, 0), -EINVAL);
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 3), 1);
    assert_int_equal(kvs_reopen(net.kvs[0], k, 0, 3), 0); /* said twice: once */
    settle();
    for (uint32_t node = 0; node <= 1; node++) {
        const struct tmd *rec = kvs_local_record(net.kvs[node], k);
        assert_non_null(rec);
        assert_int_equal(rec->status, TASK_READY);
        assert_int_equal(tmd_late(rec)->attempt, 1);
        assert_int_equal(rec->holder, 3);
        assert_true(rec->flags & TMD_FLAG_REOPENED);
    }
    /* The first run's end asked again is stale now. */
    kvs_cas(net.kvs[2], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run3, on_answer, &again);
    settle();
    assert_int_equal(again.status, -ESTALE);
    seen.n = 0;
    assert_int_equal(kvs_orphans(net.kvs[0], KVS_NO_SHARD, collect_orphan, NULL), 1);
    assert_true(seen.n == 1 && seen.keys[0] == k);
    assert_int_equal(kvs_resubmit(net.kvs[0], k, 1, 2), 1);
    struct answer rerun = {0};
    struct tmd_run run2 = {.node = 2, .attempt = 2, .t_start = 3, .t_end = 4, .data_size = 7};
    kvs_cas(net.kvs[2], k, KVS_FIELD_STATUS, TASK_READY, TASK_DONE, &run2, on_answer, &rerun);
    settle();
    assert_int_equal(rerun.status, 1);
    const struct tmd *rec = kvs_local_record(net.kvs[1], k);
    assert_int_equal(rec->status, TASK_DONE);
    assert_int_equal(tmd_late(rec)->runner, 2);
    assert_true(rec->flags & TMD_FLAG_REOPENED);
    /* Recomputed: a late request naming the old runner changes nothing. */
    assert_int_equal(kvs_reopen(net.kvs[0], k, 2, 3), 0);
    assert_int_equal(kvs_local_record(net.kvs[0], k)->status, TASK_DONE);
}

/* A request reaching a node before that node learns of the death its sender knows of
 * waits there, and is handled once it learns. */
static void test_requests_wait_for_the_news(void **state)
{
    (void)state;
    net_start(4, 19);
    use_replicas(2);
    uint64_t k = key_on(1, 1, 0), fresh = key_on(1, 1, 500);
    put_record(CLIENT, k, 1, NULL, 0, 3, 1);
    settle();
    net.dead[1] = 1;
    assert_int_equal(kvs_set_down(net.kvs[0], 1), 0);
    assert_int_equal(kvs_set_down(net.kvs[CLIENT], 1), 0);
    assert_int_equal(kvs_primary(net.kvs[0], k), 2);
    assert_int_equal(kvs_primary(net.kvs[2], k), 1);
    struct answer a = {0};
    kvs_lookup(net.kvs[0], k, on_answer, &a);
    kvs_append(net.kvs[0], k, KVS_FIELD_PARENT, 0, 7, 99);
    put_record(CLIENT, fresh, 0, NULL, 0, 0, 0);
    settle();
    assert_int_equal(a.calls, 0);
    assert_int_equal(net.nnotices, 0);
    assert_null(kvs_local_record(net.kvs[2], fresh));
    assert_int_equal(kvs_set_down(net.kvs[2], 1), 0);
    settle();
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, 0);
    /* Handled in arrival order: the lookup saw the record before the append. */
    assert_int_equal(a.rec_status, TASK_WAITING);
    assert_int_equal(kvs_local_record(net.kvs[2], k)->status, TASK_READY);
    assert_int_equal(net.nnotices, 1);
    assert_int_equal(net.notices[0].node, 3);
    assert_non_null(kvs_local_record(net.kvs[2], fresh));
    assert_int_equal(kvs_set_down(net.kvs[3], 1), 0);
    settle();
    check_copies(k, 2, 0);
    check_copies(fresh, 2, 0);
}

/* At R = 1 a death loses its records but not the store: the next node serves the keys
 * (empty); with every node down there is nowhere to go. */
static void test_r1_death_and_nobody_left(void **state)
{
    (void)state;
    net_start(3, 23);
    uint64_t k = key_on(1, 1, 0);
    put_record(CLIENT, k, 0, NULL, 0, 0, 0);
    run_network();
    assert_int_equal(kvs_set_down(net.kvs[0], 0), -EINVAL);
    assert_int_equal(kvs_set_down(net.kvs[0], 3), -EINVAL);
    down_everywhere(1);
    assert_int_equal(kvs_set_down(net.kvs[0], 1), 0); /* again: nothing new */
    assert_true(kvs_is_down(net.kvs[0], 1));
    assert_false(kvs_is_down(net.kvs[0], 2));
    struct answer a = {0};
    kvs_lookup(net.kvs[0], k, on_answer, &a);
    run_network();
    assert_int_equal(a.status, -ENOENT);
    assert_int_equal(net.count_type[MSG_KVS_REPLICATE & 0xff], 0);
    /* A new record for the dead node's keys goes to the next node. */
    put_record(CLIENT, k, 0, NULL, 0, 0, 0);
    run_network();
    assert_non_null(kvs_local_record(net.kvs[2], k));
    assert_int_equal(kvs_set_down(net.kvs[CLIENT], 0), 0);
    assert_int_equal(kvs_set_down(net.kvs[CLIENT], 2), 0);
    assert_int_equal(kvs_primary(net.kvs[CLIENT], k), KVS_NO_SHARD);
    struct tmd t = {.key = k};
    assert_int_equal(kvs_insert(net.kvs[CLIENT], &t), -EHOSTDOWN);
    assert_int_equal(kvs_append(net.kvs[CLIENT], k, KVS_FIELD_REMOVE, 0, 0, 0), -EHOSTDOWN);
}

/* ---- a DAG through deaths ------------------------------------------------------------ */

/*
 * A driver that plays the nodes' part as node.c does: a task without parents starts at
 * its holder; a waiting task starts when its holder hears it is ready; the runner
 * reports the completion with a CAS and, when it swapped, tells each child (PARENT, or
 * PARENT_FAILED for the few tasks that fail, which cancels their subtree).  A node
 * ignores a notice for a task it does not hold waiting (a repeat after a take-over).
 * One ready task in five is first moved to the next node (a push or a steal: HISTORY,
 * then the other node runs it).  When a node learns of a death it resubmits the orphans
 * its store lists to a live node; re-asserts the tasks moved to it that it still runs
 * (a move the dead primary had not forwarded is lost with it); and looks up the tasks
 * it moved to the dead node: a record that still names it as holder is a move that was
 * lost, and it runs the task again itself.
 */
#define DAG_MAX 400

static struct dag {
    uint32_t n;
    uint64_t key[DAG_MAX];
    uint32_t nparents[DAG_MAX];
    uint32_t parent[DAG_MAX][3];
    uint32_t nchildren[DAG_MAX];
    uint32_t child[DAG_MAX][DAG_MAX / 4];
    uint32_t holder[DAG_MAX], attempt[DAG_MAX];
    int waiting[DAG_MAX];   /* held in the holder's wait queue */
    int successes[DAG_MAX]; /* CAS answered 1 */
    int refused[DAG_MAX];   /* CAS answered -ESTALE */
    int starts[DAG_MAX];
    int fails[DAG_MAX];     /* this task fails when it runs */
    int doomed[DAG_MAX];    /* it fails or an ancestor does: it ends FAILED or CANCELLED */
    int cancel_heard[DAG_MAX]; /* its holder heard it was cancelled */
    int moved[DAG_MAX];
    int taken[DAG_MAX];     /* run again by the node that moved it: the move was lost */
    uint32_t moved_from[DAG_MAX];
    int taken_back, stale_orphans;
    int resubmitted;
    int repeats;            /* notices for tasks not waiting */
    struct run_ctx {
        uint32_t node, task;
    } ctx[DAG_MAX][4];
} dag;

static uint32_t index_of(uint64_t key)
{
    uint32_t i = task_key_index(key);
    assert_true(i < dag.n);
    return i;
}

static void on_completed(void *arg, int status, const struct tmd *rec)
{
    struct run_ctx *c = arg;
    /* A dead node's store is never called again; nothing arrives there. */
    assert_false(net.dead[c->node]);
    if (status == -ESTALE) {
        dag.refused[c->task]++;
        return;
    }
    assert_int_equal(status, 1);
    assert_non_null(rec);
    dag.successes[c->task]++;
    uint8_t field = rec->status == TASK_DONE ? KVS_FIELD_PARENT : KVS_FIELD_PARENT_FAILED;
    for (uint32_t i = 0; i < dag.nchildren[c->task]; i++)
        kvs_append(net.kvs[c->node], dag.key[dag.child[c->task][i]], field, c->node,
                   tmd_late(rec)->data_size, rec->key);
}

static uint32_t next_live(uint32_t from)
{
    for (uint32_t i = 1; i <= net.nodes; i++)
        if (!net.dead[(from + i) % net.nodes])
            return (from + i) % net.nodes;
    fail_msg("no live node");
    return 0;
}

static void start(uint32_t node, uint32_t task)
{
    /* Ready only once every parent completed: a parent counted twice would break it. */
    for (uint32_t i = 0; i < dag.nparents[task]; i++)
        if (!dag.successes[dag.parent[task][i]]) {
            /* A parent may have completed on a node that died before hearing so. */
            const struct tmd *p = NULL;
            for (uint32_t k = 0; k < net.nodes && !p; k++)
                if (!net.dead[k] &&
                    kvs_primary(net.kvs[k], dag.key[dag.parent[task][i]]) == k)
                    p = kvs_local_record(net.kvs[k], dag.key[dag.parent[task][i]]);
            if (!p || p->status != TASK_DONE)
                fail_msg("task %u ready before its parent %u completed", task,
                         dag.parent[task][i]);
        }
    if (!dag.moved[task] && (task * 7 + dag.attempt[task]) % 5 == 0) {
        uint32_t to = next_live(node);
        kvs_append(net.kvs[node], dag.key[task], KVS_FIELD_HISTORY, to, 0, 0);
        dag.moved[task] = 1;
        dag.moved_from[task] = node;
        dag.holder[task] = to;
        node = to;
    }
    dag.starts[task]++;
    struct run_ctx *c = &dag.ctx[task][dag.attempt[task]];
    *c = (struct run_ctx){node, task};
    struct tmd_run run = {.node = node, .attempt = dag.attempt[task], .t_start = 1000 + task,
                          .t_end = 2000 + task, .data_size = task + 1};
    kvs_cas(net.kvs[node], dag.key[task], KVS_FIELD_STATUS, TASK_READY,
            dag.fails[task] ? TASK_FAILED : TASK_DONE, &run, on_completed, c);
}

static void dag_notice(uint32_t node, const struct kvs_notice *n)
{
    uint32_t task = index_of(n->key);
    if (n->event == KVS_EVENT_CANCEL) {
        int ancestor = 0;
        for (uint32_t i = 0; i < dag.nparents[task]; i++)
            ancestor |= dag.doomed[dag.parent[task][i]];
        if (!ancestor)
            fail_msg("task %u cancelled, though no ancestor failed", task);
        dag.cancel_heard[task] |= dag.holder[task] == node;
        dag.waiting[task] = 0;
        return;
    }
    if (dag.holder[task] != node || !dag.waiting[task]) {
        dag.repeats++;
        return;
    }
    dag.waiting[task] = 0;
    start(node, task);
}

static void dag_build(uint32_t n, uint64_t seed)
{
    memset(&dag, 0, sizeof dag);
    dag.n = n;
    uint64_t x = seed * 2654435761u + 1;
    for (uint32_t i = 0; i < n; i++) {
        dag.key[i] = task_key(9, i);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t want = i < 8 ? 0 : (uint32_t)(x % 4);
        for (uint32_t k = 0; k < want; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t p = i - 1 - (uint32_t)(x % (i < 40 ? i : 40));
            int dup = 0;
            for (uint32_t j = 0; j < dag.nparents[i]; j++)
                dup |= dag.parent[i][j] == p;
            if (dup || dag.nchildren[p] == DAG_MAX / 4)
                continue;
            dag.parent[i][dag.nparents[i]++] = p;
            dag.child[p][dag.nchildren[p]++] = i;
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        dag.holder[i] = (uint32_t)(x % net.nodes);
        dag.fails[i] = i % 61 == 17;
        dag.doomed[i] = dag.fails[i];
        for (uint32_t k = 0; k < dag.nparents[i]; k++)
            dag.doomed[i] |= dag.doomed[dag.parent[i][k]];
    }
}

static void dag_submit(void)
{
    net.on_notice = dag_notice;
    for (uint32_t i = 0; i < dag.n; i++) {
        uint64_t kids[DAG_MAX / 4];
        for (uint32_t k = 0; k < dag.nchildren[i]; k++)
            kids[k] = dag.key[dag.child[i][k]];
        put_record(CLIENT, dag.key[i], dag.nparents[i], kids, dag.nchildren[i], dag.holder[i], 0);
        dag.waiting[i] = dag.nparents[i] > 0;
    }
    /* The client's sync: every record in place before any task starts. */
    settle();
    for (uint32_t i = 0; i < dag.n; i++)
        if (!dag.nparents[i])
            start(dag.holder[i], i);
}

struct orphan_ctx {
    uint32_t node, dead;
};

static void on_orphan(void *arg, const struct tmd *rec)
{
    struct orphan_ctx *o = arg;
    uint32_t task = index_of(rec->key);
    assert_true(net.dead[rec->holder]);
    /* A move its primary lost: the task runs elsewhere, and that run will be refused
     * (-ESTALE) once the new attempt holds it. */
    if (dag.holder[task] != rec->holder) {
        assert_true(dag.moved[task]);
        dag.stale_orphans++;
    }
    uint8_t status = rec->status;
    uint32_t attempt = tmd_late(rec)->attempt;
    uint32_t to = next_live(rec->holder + (uint32_t)task % 3);
    assert_int_equal(kvs_resubmit(net.kvs[o->node], rec->key, attempt, to), 1);
    dag.resubmitted++;
    dag.holder[task] = to;
    dag.attempt[task] = attempt + 1;
    dag.waiting[task] = status == TASK_WAITING;
    if (status == TASK_READY)
        start(to, task);
}

static struct take_back {
    uint32_t node, task;
} take_backs[DAG_MAX];

static void on_take_back(void *arg, int status, const struct tmd *rec)
{
    struct take_back *tb = arg;
    if (status != 0 || task_status_final(rec->status) || rec->holder != tb->node ||
        dag.holder[tb->task] == tb->node || !net.dead[dag.holder[tb->task]])
        return;
    dag.taken_back++;
    dag.taken[tb->task]++;
    dag.holder[tb->task] = tb->node;
    start(tb->node, tb->task);
}

/* Node `node` learns that `dead` is dead, as the membership protocol would tell it. */
static void learn(uint32_t node, uint32_t dead)
{
    assert_int_equal(kvs_set_down(net.kvs[node], dead), 0);
    struct orphan_ctx o = {node, dead};
    assert_true(kvs_orphans(net.kvs[node], KVS_NO_SHARD, on_orphan, &o) >= 0);
    for (uint32_t t = 0; t < dag.n; t++) {
        if (!dag.moved[t] || dag.successes[t] || dag.refused[t])
            continue;
        if (dag.holder[t] == node)
            kvs_append(net.kvs[node], dag.key[t], KVS_FIELD_HISTORY, node, 0, 0);
        else if (dag.moved_from[t] == node && dag.holder[t] == dead) {
            take_backs[t] = (struct take_back){node, t};
            kvs_lookup(net.kvs[node], dag.key[t], on_take_back, &take_backs[t]);
        }
    }
}

/*
 * The victims stop.  Of what each had sent, a prefix of every link gets through (TCP
 * delivers in order, and the rest dies with the process), before anyone can notice:
 * detection takes a failure timeout, far longer than a message in flight.
 */
static void kill(const uint32_t *victims, uint32_t kills)
{
    for (uint32_t k = 0; k < kills; k++)
        for (uint32_t to = 0; to < net.nodes; to++) {
            struct link *l = &net.links[victims[k]][to];
            size_t queued = l->len - l->head;
            for (size_t through = (size_t)(rnd() % (queued + 1)); through; through--)
                deliver_link(victims[k], to);
        }
    for (uint32_t k = 0; k < kills; k++)
        net.dead[victims[k]] = 1;
}

/*
 * Runs a DAG of n tasks on `nodes` stores at R = r, killing `kills` nodes together
 * after `when` deliveries; the survivors learn of it one by one, `skew` deliveries
 * apart.  Then checks: every task completed once, each by the attempt that held it;
 * every record final at its primary with exactly its parents counted; backups equal.
 */
static void dag_through_deaths(uint32_t nodes, uint32_t r, uint32_t n, uint64_t seed,
                               size_t when, const uint32_t *victims, uint32_t kills, size_t skew)
{
    /* Every other seed with writes joined into one REPLICATE message per link, as the
     * daemons' connections do: a message then holds many writes, and a death cuts the
     * link between them. */
    join_next = seed % 2 == 0;
    net_start(nodes, seed);
    join_next = 0;
    use_replicas(r);
    dag_build(n, seed);
    dag_submit();
    deliver_some(when);
    int done_before = 0;
    for (uint32_t t = 0; t < n; t++)
        done_before += dag.successes[t];
    kill(victims, kills);
    for (uint32_t k = 0; k < kills; k++)
        kvs_set_down(net.kvs[CLIENT], victims[k]);
    /* The survivors hear in an order of their own, with traffic in between. */
    for (uint32_t i = 0; i < nodes; i++) {
        uint32_t node = (uint32_t)(seed + i) % nodes;
        if (net.dead[node])
            continue;
        deliver_some(skew);
        for (uint32_t k = 0; k < kills; k++)
            learn(node, victims[(k + i) % kills]);
    }
    settle();
    if (getenv("KVS_TEST_VERBOSE"))
        fprintf(stderr, "seed %llu: %d done at the kill after %zu deliveries, %zu in all; "
                "%d resubmitted, %d repeated notices, %d taken back, %d stale orphans\n",
                (unsigned long long)seed, done_before, when, net.delivered, dag.resubmitted,
                dag.repeats, dag.taken_back, dag.stale_orphans);
    for (uint32_t t = 0; t < n; t++) {
        uint32_t primary = kvs_primary(net.kvs[next_live(victims[0])], dag.key[t]);
        assert_false(net.dead[primary]);
        const struct tmd *rec = kvs_local_record(net.kvs[primary], dag.key[t]);
        if (!rec)
            fail_msg("seed %llu: record of task %u lost", (unsigned long long)seed, t);
        int cancelled = 0;
        for (uint32_t i = 0; i < dag.nparents[t]; i++)
            cancelled |= dag.doomed[dag.parent[t][i]];
        uint8_t want = cancelled ? TASK_CANCELLED : dag.fails[t] ? TASK_FAILED : TASK_DONE;
        if (rec->status != want)
            fail_msg("seed %llu: task %u is %s, not %s (holder %u, attempt %u; the driver's "
                     "holder %u, waiting %d, moved %d from %u, starts %d, taken back %d)",
                     (unsigned long long)seed, t, task_status_name(rec->status),
                     task_status_name(want), rec->holder, tmd_late(rec)->attempt, dag.holder[t],
                     dag.waiting[t], dag.moved[t], dag.moved_from[t], dag.starts[t],
                     dag.taken[t]);
        if (want == TASK_CANCELLED) {
            /* Told to its holder, unless the holder died and the task, final, was not
             * resubmitted. */
            if (!dag.cancel_heard[t] && !net.dead[dag.holder[t]])
                fail_msg("seed %llu: holder %u of cancelled task %u never heard",
                         (unsigned long long)seed, dag.holder[t], t);
            assert_int_equal(dag.starts[t], 0);
            check_copies(dag.key[t], r, 0);
            continue;
        }
        /* Once: by a live node that heard so, or by a node that died after its CAS. */
        if (dag.successes[t] > 1)
            fail_msg("seed %llu: task %u completed %d times", (unsigned long long)seed, t,
                     dag.successes[t]);
        if (dag.successes[t] == 0) {
            int runner_dead = 0;
            for (uint32_t k = 0; k < kills; k++)
                runner_dead |= tmd_late(rec)->runner == victims[k];
            if (!runner_dead)
                fail_msg("seed %llu: task %u done by live node %u that never heard",
                         (unsigned long long)seed, t, tmd_late(rec)->runner);
        }
        assert_int_equal(tmd_late(rec)->attempt, dag.attempt[t]);
        /* Started once per attempt at most (repeated notices were ignored), and again
         * for each lost move taken back. */
        assert_true(dag.starts[t] >= 1 &&
                    dag.starts[t] <= (int)dag.attempt[t] + 1 + dag.taken[t]);
        assert_int_equal(rec->num_wait_parent, 0);
        assert_int_equal(tmd_parents_done(rec), dag.nparents[t]);
        for (uint32_t i = 0; i < dag.nparents[t]; i++) {
            int found = 0;
            for (uint32_t j = 0; j < dag.nparents[t]; j++)
                found |= tmd_late(rec)->parent_list[j].object == dag.key[dag.parent[t][i]];
            assert_true(found);
        }
        check_copies(dag.key[t], r, 0);
    }
}

/* How many runs of each death test: KVS_REPLICA_RUNS raises it for a longer hunt. */
static uint64_t runs(uint64_t usual)
{
    const char *env = getenv("KVS_REPLICA_RUNS");
    return env && atoll(env) > 0 ? (uint64_t)atoll(env) : usual;
}

/* Kills spread over the run (a run is about 3,000 deliveries at R = 2, 5,000 at R = 3),
 * from right after the submission to near the end, of every node in turn. */
static void test_primary_death_loses_nothing_r2(void **state)
{
    (void)state;
    uint64_t n = runs(24);
    for (uint64_t seed = 1; seed <= n; seed++) {
        uint32_t victim = (uint32_t)seed % 6;
        dag_through_deaths(6, 2, 300, seed, 40 + 115 * (size_t)((seed - 1) % 24), &victim, 1,
                           seed % 5 * 20);
        if (seed < n)
            teardown(NULL);
    }
}

/* Two at once: neighbours on the ring (every record of the first has its first backup
 * die with it) or not. */
static void test_two_deaths_at_once_r3(void **state)
{
    (void)state;
    uint64_t n = runs(16);
    for (uint64_t seed = 1; seed <= n; seed++) {
        uint32_t victims[2] = {(uint32_t)seed % 8, (uint32_t)(seed + 1 + seed % 3) % 8};
        dag_through_deaths(8, 3, 300, seed, 40 + 280 * (size_t)((seed - 1) % 16), victims, 2,
                           seed % 4 * 25);
        if (seed < n)
            teardown(NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_answer_waits_for_the_new_backup, teardown),
        cmocka_unit_test_teardown(test_requests_to_a_dead_primary_answered, teardown),
        cmocka_unit_test_teardown(test_orphans_listed_once, teardown),
        cmocka_unit_test_teardown(test_moved_from_dead_listed, teardown),
        cmocka_unit_test_teardown(test_ends_lost_with_dead_listed, teardown),
        cmocka_unit_test_teardown(test_ends_of_two_deaths_listed_by_the_last_copy, teardown),
        cmocka_unit_test_teardown(test_late_completion_refused, teardown),
        cmocka_unit_test_teardown(test_reopen_lost_output, teardown),
        cmocka_unit_test_teardown(test_requests_wait_for_the_news, teardown),
        cmocka_unit_test_teardown(test_r1_death_and_nobody_left, teardown),
        cmocka_unit_test_teardown(test_primary_death_loses_nothing_r2, teardown),
        cmocka_unit_test_teardown(test_two_deaths_at_once_r3, teardown),
    };
    return cmocka_run_group_tests_name("kvs_takeover", tests, NULL, NULL);
}
