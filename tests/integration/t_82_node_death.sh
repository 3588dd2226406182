#!/bin/bash
# t_82_node_death: membership.  A daemon killed with SIGKILL is declared dead by every
# other daemon, each exactly once, for every stealing preset whose parts must cope (the
# adaptive thief, the A2WS ring, the CTWS token whose holder may be the dead node, the
# LW leader when node 0 dies); after the declaration nobody calls the dead node again.
# Two deaths in one cluster are both declared.  `status` on the degraded cluster exits
# 0 and shows each dead node as declared dead, by whom and when (text and --json); a
# node killed but not declared dead (alone with its one peer, whose failure timeout is
# longer than the test) is shown unreachable, with exit 4.  Waits are bounded and wait for log lines, never for a
# fixed delay.
. "$(dirname "$0")/lib.sh"

# Deaths are what this test is about; the daemons say so at WARN.
LOG_ALLOW="declared dead|closed by peer|reset by peer|refused"

# The launches of this test share one work directory, whose daemon logs grow across
# them: SINCE[i] is how many lines node i's log had when the current cluster started, so
# that a death declared by an earlier cluster is not taken for this one's.
SINCE=()
mark_logs() {
    local i
    for ((i = 0; i < 5; i++)); do
        SINCE[$i]=$(wc -l <"$CLUSTER_WORKDIR/node-$i.log" 2>/dev/null || echo 0)
    done
}
# this_run NODE : node NODE's log lines since mark_logs.
this_run() { tail -n +"$((${SINCE[$1]:-0} + 1))" "$CLUSTER_WORKDIR/node-$1.log"; }

# declared NODE DEAD : NODE's log says DEAD was declared dead (by this cluster).
declared() { this_run "$1" | grep -q "node $2 declared dead"; }

# dies POLICY VICTIM : a cluster of 5 under POLICY loses node VICTIM to SIGKILL.
dies() {
    local policy=$1 victim=$2 i
    start_cluster 5 1 --policy "$policy" --failure-timeout 400
    mark_logs
    local pids
    mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
    kill -KILL "${pids[$victim]}"
    wait_until 10 eval "! pid_alive ${pids[$victim]}" || fail "node $victim survived SIGKILL"
    for ((i = 0; i < 5; i++)); do
        [ $i -eq "$victim" ] && continue
        wait_until 30 declared $i "$victim" || fail "$policy: node $i did not declare node $victim dead"
    done
    # Once declared, exactly once, and never called again: no connection attempt to it
    # after the declaration (the log's lines after it).
    for ((i = 0; i < 5; i++)); do
        [ $i -eq "$victim" ] && continue
        [ "$(this_run $i | grep -c "node $victim declared dead")" -eq 1 ] ||
            fail "$policy: node $i declared node $victim dead more than once"
        this_run $i | sed -n "/node $victim declared dead/,\$p" | grep -q "connect to node $victim" &&
            fail "$policy: node $i still calls node $victim after declaring it dead"
    done
    note "$policy: node $victim declared dead by all 4 others"
    # The dead node's pid is gone from the cluster: stop must not count it.
    CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[$victim]}/}")
    stop_cluster
}

dies daws 2
dies a2ws 3
dies ctws 0
dies lw 0

# Two at once, not neighbours: both declared by the three left.
start_cluster 5 1 --failure-timeout 400
mark_logs
mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
kill -KILL "${pids[1]}" "${pids[3]}"
for i in 0 2 4; do
    wait_until 30 eval "declared $i 1 && declared $i 3" ||
        fail "node $i did not declare both nodes 1 and 3 dead"
done
note "two deaths: declared by nodes 0, 2 and 4"
# status: a degraded cluster still serves (exit 0); each dead node on its own row.
rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" >"$T/status-dead.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/status-dead.out" >&2; fail "status with two dead nodes exited $rc"; }
for d in 1 3; do
    grep -qE "^$d +dead \(declared at [0-9]{2}:[0-9]{2}:[0-9]{2} by node [024]\)$" "$T/status-dead.out" ||
        fail "status shows no dead row for node $d: $(cat "$T/status-dead.out")"
done
[ "$(grep -cE '^[024] +[0-9]+ ' "$T/status-dead.out")" -eq 3 ] ||
    fail "status does not show the 3 live nodes: $(cat "$T/status-dead.out")"
grep -q "^failures: 2 nodes declared dead" "$T/status-dead.out" || fail "status has no failures line"
rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" --json >"$T/status-dead.json" 2>"$T/status-dead.err" || rc=$?
expect_code 0 "$rc" "status --json with two dead nodes"
"$PY" - "$T/status-dead.json" <<'PY' || fail "status --json: $(cat "$T/status-dead.json")"
import json, sys
o = json.load(open(sys.argv[1]))
states = {n["id"]: n["state"] for n in o["nodes"]}
assert states == {0: "up", 1: "dead", 2: "up", 3: "dead", 4: "up"}, states
assert sorted(d["node"] for d in o["dead"]) == [1, 3], o["dead"]
for n in o["nodes"]:
    if n["state"] == "dead":
        assert n["declared_by"] in (0, 2, 4) and n["declared_at_ns"] > 0, n
    else:
        assert n["epoch"] == 2, n
PY
note "status: nodes 1 and 3 dead, exit 0"
CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[1]}/}")
CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[3]}/}")
stop_cluster

# Killed but not declared: unreachable, exit 4, and distinct from dead.  A killed node
# refuses connections, which two nodes take for a death at once; alone with it, node 0
# waits for the timeout, longer than the test.
start_cluster 2 1 --failure-timeout 600000
mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
kill -KILL "${pids[1]}"
wait_until 10 eval "! pid_alive ${pids[1]}" || fail "node 1 survived SIGKILL"
rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" >"$T/status-gone.out" 2>&1 || rc=$?
expect_code 4 "$rc" "status with a node gone and not declared dead"
grep -qE "^1 +unreachable" "$T/status-gone.out" || fail "status does not show node 1 unreachable: $(cat "$T/status-gone.out")"
grep -q "dead (declared" "$T/status-gone.out" && fail "status calls an undeclared node dead"
[ "$(grep -cE '^0 +[0-9]+ ' "$T/status-gone.out")" -eq 1 ] || fail "status hides the live node"
note "status: node 1 unreachable (not declared), exit 4"
CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[1]}/}")
stop_cluster
