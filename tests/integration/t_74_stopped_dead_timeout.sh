#!/bin/bash
# t_74_stopped_dead_timeout: what the client commands say, and exit with, when a cluster
# is not all there or a job outlives its --timeout.
#  1. A node stopped by SIGSTOP: status and submit exit 4 and say that node 1, at its
#     address, did not answer in time (not "connection refused or key rejected").  Past
#     the failure timeout the other nodes declare it dead; once it is continued it is
#     told so and exits, saying why, and never runs again what it held.
#  2. A job that outlives --timeout: submit --wait and run exit 6, the code of a timeout
#     (not 4, which says the cluster could not be reached), and say so; run still stops
#     its private cluster.
#  3. Every node killed with SIGKILL: status exits 4 naming every node on its own line,
#     with no blank lines; stop says that each node was not running, counts none of them
#     as stopped, ends the collector, removes the cluster file and key and exits 0.
#  4. A stale cluster file whose pids now belong to another program (a decoy `sleep`):
#     stop does not signal it and says the daemons were not running; launch over such a
#     file is not refused.
. "$(dirname "$0")/lib.sh"

NODES=3
# status exits 4 for a silent node only until the live nodes declare it dead (then 0,
# t_82): its 5 s wait must end well inside the failure timeout.
start_cluster $NODES 1 --failure-timeout 12000
mapfile -t node_pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
port1=$(cluster_field "$CLUSTER_FILE" 'c["nodes"][1]["port"]')
wl="$T/small.jsonl"
"$JACKDAW" gen bot --tasks 20 --duration 0.001-0.002 --seed 4 -o "$wl" || fail "gen failed"

# ---- 1. a stopped node ------------------------------------------------------------------
stopped=${node_pids[1]}
kill -STOP "$stopped"
resume() { kill -CONT "$stopped" 2>/dev/null; }
trap 'rc=$?; resume; (exit $rc); cleanup' EXIT
# answered_late FILE WHAT : FILE says node 1 at its address did not answer in time.
answered_late() {
    grep -q "node 1 at 127.0.0.1:$port1: did not answer in time" "$1" ||
        { cat "$1" >&2; fail "$2 does not say that node 1 did not answer in time"; }
    grep -qi 'refused\|key' "$1" && { cat "$1" >&2; fail "$2 blames a refusal or the key"; }
    return 0
}
rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" >"$T/status-stopped.out" \
    2>"$T/status-stopped.err" || rc=$?
expect_code 4 "$rc" "status with a stopped node"
answered_late "$T/status-stopped.err" "status"
rc=0
timeout -k 5 30 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 20 \
    >"$T/submit-stopped.out" 2>"$T/submit-stopped.err" || rc=$?
expect_code 4 "$rc" "submit with a stopped node"
answered_late "$T/submit-stopped.err" "submit"
note "stopped node: $(grep 'did not answer' "$T/status-stopped.err")"
# declared_by NODE : NODE's log says node 1 was declared dead.
declared_by() { grep -q "node 1 declared dead" "$CLUSTER_WORKDIR/node-$1.log"; }
wait_until 40 eval 'declared_by 0 && declared_by 2' ||
    fail "nodes 0 and 2 did not declare the stopped node 1 dead"
resume
wait_until 20 eval "! pid_alive $stopped" || fail "node 1, declared dead, did not exit once continued"
grep -q "declared dead.*: stopping" "$CLUSTER_WORKDIR/node-1.log" ||
    fail "node 1 does not say why it stopped"
note "continued node: $(grep -m1 'declared dead.*stopping' "$CLUSTER_WORKDIR/node-1.log")"
# The continued node finds the connections the clients gave up on, and is told it is dead.
LOG_ALLOW="handshake|closed by peer|reset by peer|declared dead"
stop_cluster
start_cluster $NODES 1
mapfile -t node_pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')

# ---- 2. timeouts --------------------------------------------------------------------------
long="$T/long.jsonl"
echo '{"id": "long", "kind": "sleep", "duration_s": 120}' >"$long"
rc=0
timeout -k 5 60 "$JACKDAW" submit "$long" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 1 \
    >"$T/submit-timeout.out" 2>"$T/submit-timeout.err" || rc=$?
expect_code 6 "$rc" "submit --wait of a job longer than --timeout"
grep -q 'timed out' "$T/submit-timeout.err" || fail "submit says: $(cat "$T/submit-timeout.err")"
rc=0
timeout -k 5 60 "$JACKDAW" run "$long" --nodes 1 --slots 1 --quiet --timeout 1 \
    >"$T/run-timeout.out" 2>"$T/run-timeout.err" || rc=$?
expect_code 6 "$rc" "run of a job longer than --timeout"
grep -q 'timed out' "$T/run-timeout.err" || fail "run says: $(cat "$T/run-timeout.err")"
# The cluster's pids are read first: a reader running beside the scan has the cluster
# file (under $T) on its command line and would be taken for a leftover.
others() {
    local keep
    keep=$(cluster_pids "$CLUSTER_FILE")
    pids_in_tmpdir | grep -vxF -f <(printf '%s\n' $keep)
}
wait_until 10 eval '[ -z "$(others)" ]' || {
    for pid in $(others); do ps -o pid=,etime=,args= -p "$pid" >&2; done
    fail "run left processes after its timeout: $(others | tr '\n' ' ')"
}
note "timeouts: submit and run exit 6: $(tail -1 "$T/run-timeout.err")"

# ---- 3. dead nodes ------------------------------------------------------------------------
kill -KILL "${node_pids[@]}"
for pid in "${node_pids[@]}"; do
    wait_until 10 eval "! pid_alive $pid" || fail "node $pid survived SIGKILL"
done
LOG_ALLOW="$LOG_ALLOW|collector"
rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" >"$T/status-dead.out" \
    2>"$T/status-dead.err" || rc=$?
expect_code 4 "$rc" "status with every node dead"
cat "$T/status-dead.err"
for ((i = 0; i < NODES; i++)); do
    grep -qE "^ *node $i at 127\.0\.0\.1:[0-9]+: " "$T/status-dead.err" ||
        fail "status does not name node $i on a line of its own"
done
[ "$(grep -c '^ *$' "$T/status-dead.err")" -eq 0 ] || fail "status prints blank lines"
collector=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["pid"]')
key=$(cluster_field "$CLUSTER_FILE" 'c["key"]')
rc=0
timeout -k 5 30 "$JACKDAW" stop --cluster "$CLUSTER_FILE" >"$T/stop.out" 2>&1 || rc=$?
cat "$T/stop.out"
expect_code 0 "$rc" "stop of a cluster whose nodes are dead"
for ((i = 0; i < NODES; i++)); do
    grep -qx "node $i (pid ${node_pids[$i]}) was not running" "$T/stop.out" ||
        fail "stop does not say node $i was not running"
done
grep -qx "stopped 0 of $NODES nodes and the collector" "$T/stop.out" ||
    fail "stop does not count what it stopped: $(cat "$T/stop.out")"
wait_until 10 eval "! pid_alive $collector" || fail "stop left the collector $collector running"
[ -e "$CLUSTER_FILE" ] && fail "stop left the cluster file"
[ -e "$key" ] && fail "stop left the key"
CLUSTER_PIDS=()
no_daemons_left "after stop"

# ---- 4. recycled pids --------------------------------------------------------------------
bg sleep 120
decoy=${BG_PIDS[-1]}
# stale_cluster : a launched cluster, killed, whose file then names the decoy's pid.
stale_cluster() {
    start_cluster 2 1
    kill -KILL "${CLUSTER_PIDS[@]}"
    local pid
    for pid in "${CLUSTER_PIDS[@]}"; do
        wait_until 10 eval "! pid_alive $pid" || fail "daemon $pid survived SIGKILL"
    done
    CLUSTER_PIDS=()
    "$PY" - "$CLUSTER_FILE" "$decoy" <<'EOF_PY' || fail "cannot rewrite the cluster file"
import json, sys
c = json.load(open(sys.argv[1]))
for n in c["nodes"]:
    n["pid"] = int(sys.argv[2])
c["collector"]["pid"] = int(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
EOF_PY
}
stale_cluster
rc=0
timeout -k 5 30 "$JACKDAW" stop --cluster "$CLUSTER_FILE" >"$T/stop-stale.out" 2>&1 || rc=$?
cat "$T/stop-stale.out"
expect_code 0 "$rc" "stop of a stale cluster file"
pid_alive "$decoy" || fail "stop signalled pid $decoy, which is no daemon of the cluster"
grep -qx "node 1 (pid $decoy) was not running" "$T/stop-stale.out" || fail "stop of the stale file"
grep -qx "the collector (pid $decoy) was not running" "$T/stop-stale.out" || fail "stop: collector"
stale_cluster
rc=0
timeout -k 5 60 "$JACKDAW" launch --nodes 2 --slots 1 --cluster "$CLUSTER_FILE" >"$T/relaunch.out" 2>&1 || rc=$?
[ -f "$CLUSTER_FILE" ] && for pid in $(cluster_pids "$CLUSTER_FILE"); do CLUSTER_PIDS+=("$pid"); done
[ $rc -eq 0 ] || { cat "$T/relaunch.out" >&2; fail "launch over a stale cluster file exited $rc"; }
pid_alive "$decoy" || fail "launch signalled pid $decoy"
stop_cluster
note "stale pids: stop and launch left pid $decoy alone"
