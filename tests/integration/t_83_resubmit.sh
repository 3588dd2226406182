#!/bin/bash
# t_83_resubmit: nothing lost when a node dies.  With --replicas 2, a daemon killed with
# SIGKILL while its job runs: the job still ends with exit 0, every task exactly once in
# the records and every dependency held, for each DAG shape; the dead node's tasks were
# run again elsewhere (the logs say so).  The kill waits for a quarter of the tasks to
# have ended (read from the records as they are written), never for a fixed delay.
. "$(dirname "$0")/lib.sh"

LOG_ALLOW="declared dead|closed by peer|reset by peer|refused|metadata status"

# survives SHAPE GEN-ARGS... : a job of that shape loses node 2 of 6 at a quarter.
survives() {
    local shape=$1
    shift
    local wl="$T/$shape.jsonl" rec="$T/$shape.records" out="$T/$shape.out"
    "$JACKDAW" gen "$shape" "$@" -o "$wl" || fail "gen $shape failed"
    local total
    total=$(grep -c . "$wl")
    start_cluster 6 2 --replicas 2 --failure-timeout 500
    local pids
    mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
    : >"$rec"
    timeout -k 5 120 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --quiet \
        --records "$rec" --timeout 100 >"$out" 2>&1 &
    local client=$!
    wait_until 60 eval '[ "$(grep -c . "$rec")" -ge $((total / 4)) ]' ||
        fail "$shape: a quarter of the tasks never ended"
    kill -KILL "${pids[2]}"
    wait "$client"
    local rc=$?
    [ $rc -eq 0 ] || { cat "$out" >&2; fail "$shape: submit --wait exited $rc after node 2 died"; }
    check_records "$wl" "$rec"
    grep -q "its holder died; attempt 1 goes to node" "$CLUSTER_WORKDIR"/node-*.log ||
        note "$shape: node 2 held nothing unfinished when it died"
    note "$shape: $(grep -c 'its holder died' "$CLUSTER_WORKDIR"/node-*.log | awk -F: '{s += $2} END {print s}') tasks run again"
    CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[2]}/}")
    stop_cluster
}

survives bot --tasks 1200 --kind sleep --duration-s 0.01-0.03 --seed 11
survives fanout --tasks 1200 --degree 4 --duration-s 0.01-0.03 --seed 12
survives fanin --tasks 1200 --degree 4 --duration-s 0.01-0.03 --seed 13
survives pipeline --tasks 1200 --pipe-size 6 --duration-s 0.01-0.03 --seed 14
