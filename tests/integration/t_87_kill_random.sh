#!/bin/bash
# t_87_kill_random: nothing lost when daemons die at a random moment (issue 15's setting).
# Eight daemons; for each DAG shape (bot, fanout, fanin, pipeline) one daemon is killed
# with SIGKILL under --replicas 2, then two at once under --replicas 3.  Each time the
# job still ends with exit 0, every task exactly once in the records and every
# dependency held (check_records), and the killed daemons are gone.
#
# The moment is a fraction of the tasks ended (5 % to 90 %, read from the records as the
# client writes them, never a fixed delay) and the victims are drawn too, both from a
# seeded generator; the workloads' own seeds come from it as well.  The seed is printed
# first: `TEST_SEED=S` replays a failing run's choices (the machine's timing still
# varies, so a rare failure may need a few replays), and `TEST_CASE=C` runs case C alone.
# Takes about 40 s (8 jobs of ~800 short tasks, --failure-timeout 500).
. "$(dirname "$0")/lib.sh"

LOG_ALLOW="declared dead|closed by peer|reset by peer|refused|metadata status"
SEED=${TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
NODES=8
note "seed $SEED (replay with TEST_SEED=$SEED)"

# draw CASE K : "FRACTION VICTIM..." for case CASE: the moment and K distinct victims.
draw() {
    "$PY" -c 'import random, sys
seed, case, k = map(int, sys.argv[1:4])
rng = random.Random(seed * 1000 + case)
print("%.3f %s" % (rng.uniform(0.05, 0.90), " ".join(map(str, sorted(rng.sample(range(int(sys.argv[4])), k))))))' \
        "$SEED" "$1" "$2" "$NODES"
}

# ended FILE : the number of records written so far.
ended() {
    local n
    n=$(grep -c . "$1" 2>/dev/null)
    echo "${n:-0}"
}

# forget PID : a killed daemon leaves CLUSTER_PIDS (an exact match, not a substring).
forget() {
    local keep=() p
    for p in "${CLUSTER_PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
    CLUSTER_PIDS=("${keep[@]}")
}

CASE=0
# survives SHAPE REPLICAS KILLS GEN-ARGS... : a job of that shape on 8 daemons with
# --replicas REPLICAS loses KILLS of them, drawn, at a drawn fraction of its tasks.
survives() {
    local shape=$1 replicas=$2 kills=$3
    shift 3
    CASE=$((CASE + 1))
    [ -n "${TEST_CASE:-}" ] && [ "$TEST_CASE" != "$CASE" ] && return 0
    local label="$shape-r$replicas" draw_out fraction victims
    draw_out=$(draw "$CASE" "$kills") || fail "cannot draw case $CASE"
    read -r fraction victims <<<"$draw_out"
    local wl="$T/$label.jsonl" rec="$T/$label.records" out="$T/$label.out"
    "$JACKDAW" gen "$shape" "$@" --seed $((SEED % 100000 + CASE)) -o "$wl" >/dev/null ||
        fail "gen $shape failed"
    local total at
    total=$(grep -c . "$wl")
    at=$("$PY" -c 'import sys; print(max(1, int(float(sys.argv[1]) * int(sys.argv[2]))))' "$fraction" "$total")
    start_cluster $NODES 2 --replicas "$replicas" --failure-timeout 500
    local pids v kill_pids=()
    mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
    for v in $victims; do kill_pids+=("${pids[$v]}"); done
    : >"$rec"
    timeout -k 5 90 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --quiet \
        --records "$rec" --timeout 60 >"$out" 2>&1 &
    local client=$! i
    # Polled every 20 ms (at most 60 s) so that the kill lands close to its fraction.
    for ((i = 0; i < 3000; i++)); do
        [ "$(ended "$rec")" -ge "$at" ] && break
        pid_alive "$client" || break
        sleep 0.02
    done
    [ "$(ended "$rec")" -ge "$at" ] || fail "$label: $at of $total tasks never ended (TEST_SEED=$SEED TEST_CASE=$CASE)"
    kill -KILL "${kill_pids[@]}"
    local when
    when=$(ended "$rec")
    wait "$client"
    local rc=$?
    [ $rc -eq 0 ] || {
        cat "$out" >&2
        fail "$label: submit --wait exited $rc after nodes $victims died at $when of $total" \
            "(replay: TEST_SEED=$SEED TEST_CASE=$CASE)"
    }
    check_records "$wl" "$rec"
    for v in "${kill_pids[@]}"; do
        wait_until 10 eval "! pid_alive $v" || fail "$label: daemon $v survived SIGKILL"
    done
    local again
    again=$(cat "$CLUSTER_WORKDIR"/node-*.log | grep -c 'its holder died; attempt 1 goes to node')
    note "$label: nodes $victims killed at $when of $total tasks ended (drawn $fraction); $again tasks run again"
    for v in "${kill_pids[@]}"; do forget "$v"; done
    stop_cluster
    # Each case's logs apart (the next cluster would append to them), for a look with KEEP_TMP.
    mv "$T/cluster" "$T/$label.cluster" || fail "cannot keep the logs of $label"
}

survives bot 2 1 --tasks 800 --kind sleep --duration-s 0.01-0.02
survives fanout 2 1 --tasks 800 --degree 4 --duration-s 0.01-0.02
survives fanin 2 1 --tasks 800 --degree 4 --duration-s 0.01-0.02
survives pipeline 2 1 --tasks 800 --pipe-size 6 --duration-s 0.01-0.02
survives bot 3 2 --tasks 800 --kind sleep --duration-s 0.01-0.02
survives fanout 3 2 --tasks 800 --degree 4 --duration-s 0.01-0.02
survives fanin 3 2 --tasks 800 --degree 4 --duration-s 0.01-0.02
survives pipeline 3 2 --tasks 800 --pipe-size 6 --duration-s 0.01-0.02
echo "PASS: $TEST_NAME (seed $SEED)"
