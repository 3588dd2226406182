#!/bin/bash
# t_88_sigstop: a node stopped with SIGSTOP while it runs tasks, kept stopped past the
# failure timeout and then continued, duplicates no completion (issue 15).  Six daemons,
# --replicas 2, --failure-timeout 500.  The node is stopped at a fraction of the tasks
# ended while status shows it busy; it is continued once every other node declared it
# dead and some of its tasks were handed on, while the job still runs, so that its late
# completions race the new attempts.  Then:
#   - the client exits 0 and the records list every task exactly once, done, after its
#     parents (check_records);
#   - no record credits the stopped node with a task ended after it was stopped: what it
#     held ran elsewhere (and the logs say tasks were handed on);
#   - the continued node is told it is dead and exits, saying why (its log), its PID gone.
# Each run draws the victim and the moment from a seed, printed (TEST_SEED replays it).
# Takes about 15 s.
. "$(dirname "$0")/lib.sh"

LOG_ALLOW="declared dead|closed by peer|reset by peer|refused|metadata status|handshake"
SEED=${TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
NODES=6
note "seed $SEED (replay with TEST_SEED=$SEED)"
stopped=""  # the PID stopped, continued on any exit
resume() { [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null; }
trap 'rc=$?; resume; (exit $rc); cleanup' EXIT
CASE=0

ended() {
    local n
    n=$(grep -c . "$1" 2>/dev/null)
    echo "${n:-0}"
}
# busy NODE : the node's busy slots in `jackdaw status --json` (empty when it fails).
busy() {
    timeout -k 2 10 "$JACKDAW" status --cluster "$CLUSTER_FILE" --json 2>/dev/null |
        "$PY" -c 'import json, sys; print(json.load(sys.stdin)["nodes"][int(sys.argv[1])]["busy"])' "$1" 2>/dev/null
}
# declared_by_all : every other node's log says the victim was declared dead.
declared_by_all() {
    local i
    for ((i = 0; i < NODES; i++)); do
        [ $i -eq "$victim" ] && continue
        grep -q "node $victim declared dead" "$CLUSTER_WORKDIR/node-$i.log" || return 1
    done
}
handed_on() { cat "$CLUSTER_WORKDIR"/node-*.log | grep -c 'its holder died; attempt 1 goes to node'; }

# stopped_and_continued SHAPE GEN-ARGS... : the victim stopped and continued under a job
# of that shape.
stopped_and_continued() {
    local shape=$1 fraction victim
    shift
    CASE=$((CASE + 1))
    read -r fraction victim < <("$PY" -c 'import random, sys
rng = random.Random(int(sys.argv[1]) * 1000 + int(sys.argv[3]))
print("%.3f %d" % (rng.uniform(0.10, 0.30), rng.randrange(int(sys.argv[2]))))' "$SEED" "$NODES" "$CASE")
    WL="$T/$shape.jsonl"
    REC="$T/$shape.records"
    "$JACKDAW" gen "$shape" "$@" --duration-s 0.05-0.1 --seed "$((SEED % 100000 + CASE))" -o "$WL" >/dev/null ||
        fail "gen $shape failed"
    TOTAL=$(grep -c . "$WL")
    AT=$("$PY" -c 'import sys; print(int(float(sys.argv[1]) * int(sys.argv[2])))' "$fraction" "$TOTAL")

    start_cluster $NODES 2 --replicas 2 --failure-timeout 500
    local pids
    mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
    stopped=${pids[$victim]}

    : >"$REC"
    bg timeout -k 5 90 "$JACKDAW" submit "$WL" --cluster "$CLUSTER_FILE" --wait --quiet \
        --records "$REC" --timeout 60 >"$T/$shape.out" 2>&1
    client=${BG_PIDS[-1]}
    wait_until 60 eval '[ "$(ended "$REC")" -ge $AT ]' || fail "$AT of $TOTAL tasks never ended"
    b=$(busy "$victim")
    [ -n "$b" ] && [ "$b" -gt 0 ] || fail "node $victim runs nothing at $(ended "$REC") of $TOTAL tasks (busy '$b')"
    kill -STOP "$stopped"
    # The clock is read once the node is stopped (state T): a task it ended just before
    # the signal is not taken for a late one.
    wait_until 5 eval "[ \"\$(awk '{print \$3}' /proc/$stopped/stat 2>/dev/null)\" = T ]" ||
        fail "node $victim did not stop"
    stop_ns=$(date +%s%N)
    note "node $victim (pid $stopped) stopped with $b busy slots at $(ended "$REC") of $TOTAL tasks ended"

    wait_until 30 declared_by_all || fail "the others did not all declare the stopped node $victim dead"
    wait_until 30 eval '[ "$(handed_on)" -gt 0 ]' || fail "none of node $victim's tasks was handed on"
    pid_alive "$client" || note "the job ended before node $victim was continued"
    at_cont=$(ended "$REC")
    resume
    note "node $victim continued at $at_cont of $TOTAL tasks ended; $(handed_on) tasks handed on"

    wait "$client"
    rc=$?
    [ $rc -eq 0 ] || { cat "$T/$shape.out" >&2; fail "submit --wait exited $rc (TEST_SEED=$SEED)"; }
    check_records "$WL" "$REC"
    "$PY" - "$REC" "$victim" "$stop_ns" <<'EOF_PY' || fail "the stopped node's late completions were counted (TEST_SEED=$SEED)"
import json, sys
victim, stop_ns = int(sys.argv[2]), int(sys.argv[3])
late = [r["id"] for r in map(json.loads, open(sys.argv[1]))
        if r["node"] == victim and r["end_ns"] > stop_ns]
if late:
    sys.exit("%d tasks credited to node %d ended after it was stopped, e.g. %s"
             % (len(late), victim, late[:5]))
EOF_PY
    wait_until 20 eval "! pid_alive $stopped" || fail "node $victim, declared dead, did not exit once continued"
    grep -q "declared dead.*: stopping" "$CLUSTER_WORKDIR/node-$victim.log" ||
        fail "node $victim does not say why it stopped"
    note "node $victim: $(grep -m1 'declared dead.*: stopping' "$CLUSTER_WORKDIR/node-$victim.log" | cut -d' ' -f4-)"
    keep=()
    for p in "${CLUSTER_PIDS[@]}"; do [ "$p" = "$stopped" ] || keep+=("$p"); done
    CLUSTER_PIDS=("${keep[@]}")
    stop_cluster
    mv "$T/cluster" "$T/$shape.cluster" || fail "cannot keep the logs of $shape"
}

stopped_and_continued bot --tasks 700 --kind sleep
stopped_and_continued fanin --tasks 700 --degree 4
echo "PASS: $TEST_NAME (seed $SEED)"
