#!/bin/bash
# t_52_task_groups: what a command task starts in the background ends with the task
# (issue 13 b).  On a launched 1-node cluster:
#   - a job of `(sleep 300 & echo $! > $T/o.pid)` ends (exit 0), and its `sleep 300`
#     goes too; so does a background child that ignores SIGTERM (killed after the grace);
#   - a task removed by `jackdaw cancel` while it runs takes its background children;
#   - tasks still running at `jackdaw stop`, and the leftovers of one that just ended,
#     go with the daemon, SIGTERM-proof ones included;
# and on a second cluster the same when the daemon gets SIGTERM instead of stop.
# PIDs come from files the tasks write; "gone" is polled with a bounded wait (the
# bounds only tell "ended" from "left running", nothing about speed).
. "$(dirname "$0")/lib.sh"

# The processes a task leaves behind are `sleep 30N` with nothing of $T in their command
# line, so the EXIT trap of lib.sh cannot see them: this test kills what it recorded, by
# PID, and only while the PID still runs that very command.
LEFT_PIDS=()
kill_left() {
    local pid
    for pid in "${LEFT_PIDS[@]}"; do
        pid_alive "$pid" || continue
        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qE '^sleep 30[0-9] $' &&
            kill -KILL "$pid" 2>/dev/null
    done
}
trap 'rc=$?; kill_left; (exit $rc); cleanup' EXIT

# pid_of FILE : sets PID to the PID a task wrote, once the file is there (bounded), and
# records it for the EXIT trap.
pid_of() {
    PID=""
    wait_until 20 test -s "$1" || fail "no PID in $1: the task never wrote it"
    PID=$(cat "$1")
    [ "$PID" -gt 1 ] 2>/dev/null || fail "$1 holds '$PID', not a PID"
    LEFT_PIDS+=("$PID")
}
gone() { ! pid_alive "$1"; }
# expect_gone PID WHAT
expect_gone() {
    wait_until 10 gone "$1" ||
        fail "$2: pid $1 ($(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)) is still running"
    note "$2: pid $1 is gone"
}

start_cluster 1 4

# 1. A job that ends: its tasks' background children end with it.
wl="$T/ends.jsonl"
cat >"$wl" <<EOF_WL
{"id":"o","kind":"command","cmd":"(sleep 300 & echo \$! > $T/o.pid)"}
{"id":"stubborn","kind":"command","cmd":"(trap '' TERM; exec sleep 301) & echo \$! > $T/stubborn.pid"}
{"id":"after","kind":"noop","parents":["o","stubborn"]}
EOF_WL
rc=0
timeout -k 5 90 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 60 \
    --records "$T/ends.records" >"$T/ends.out" 2>&1 || rc=$?
expect_code 0 "$rc" "the job of background children: $(cat "$T/ends.out")"
check_records "$wl" "$T/ends.records"
pid_of "$T/o.pid"; o=$PID
pid_of "$T/stubborn.pid"; stubborn=$PID
expect_gone "$o" "after the job ended, task o's 'sleep 300'"
expect_gone "$stubborn" "after the job ended, task stubborn's SIGTERM-proof 'sleep 301'"

# 2. A running task removed by cancel: its background child goes too.
wl="$T/cancel.jsonl"
cat >"$wl" <<EOF_WL
{"id":"cx","kind":"command","cmd":"sleep 302 & echo \$! > $T/cx.pid; wait"}
EOF_WL
rc=0
timeout -k 5 60 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" >"$T/cancel-submit.out" 2>&1 || rc=$?
expect_code 0 "$rc" "submit of the job to cancel: $(cat "$T/cancel-submit.out")"
pid_of "$T/cx.pid"; cx=$PID
rc=0
timeout -k 5 30 "$JACKDAW" cancel cx --cluster "$CLUSTER_FILE" >"$T/cancel.out" 2>&1 || rc=$?
expect_code 0 "$rc" "cancel cx: $(cat "$T/cancel.out")"
expect_gone "$cx" "after cancel, task cx's 'sleep 302'"

# 3. jackdaw stop: running tasks' groups and an ended task's leftovers all go.
wl="$T/stop.jsonl"
cat >"$wl" <<EOF_WL
{"id":"left","kind":"command","cmd":"(trap '' TERM; exec sleep 303) & echo \$! > $T/left.pid"}
{"id":"run1","kind":"command","cmd":"sleep 304 & echo \$! > $T/run1.pid; wait"}
{"id":"run2","kind":"command","cmd":"(trap '' TERM; exec sleep 305) & echo \$! > $T/run2.pid; wait"}
EOF_WL
rc=0
timeout -k 5 60 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" >"$T/stop-submit.out" 2>&1 || rc=$?
expect_code 0 "$rc" "submit of the job to stop: $(cat "$T/stop-submit.out")"
pid_of "$T/left.pid"; left=$PID
pid_of "$T/run1.pid"; run1=$PID
pid_of "$T/run2.pid"; run2=$PID
stop_cluster
expect_gone "$run1" "after jackdaw stop, task run1's 'sleep 304'"
expect_gone "$run2" "after jackdaw stop, task run2's SIGTERM-proof 'sleep 305'"
expect_gone "$left" "after jackdaw stop, the SIGTERM-proof 'sleep 303' left by task left"

# 4. The daemon gets SIGTERM (a batch system ending the allocation): the same.
rm -rf "$T/cluster"
start_cluster 1 2
wl="$T/term.jsonl"
cat >"$wl" <<EOF_WL
{"id":"run3","kind":"command","cmd":"(trap '' TERM; exec sleep 306) & echo \$! > $T/run3.pid; wait"}
EOF_WL
rc=0
timeout -k 5 60 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" >"$T/term-submit.out" 2>&1 || rc=$?
expect_code 0 "$rc" "submit of the job to end by SIGTERM: $(cat "$T/term-submit.out")"
pid_of "$T/run3.pid"; run3=$PID
node_pid=$(cluster_field "$CLUSTER_FILE" 'c["nodes"][0]["pid"]')
kill -TERM "$node_pid"
wait_until 10 gone "$node_pid" || fail "node daemon $node_pid still running 10 s after SIGTERM"
expect_gone "$run3" "after SIGTERM to the daemon, task run3's SIGTERM-proof 'sleep 306'"
stop_cluster
no_daemons_left "after the clusters stopped"
