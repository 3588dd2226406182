#!/bin/bash
# t_82_node_death: membership.  A daemon killed with SIGKILL is declared dead by every
# other daemon, each exactly once, for every stealing preset whose parts must cope (the
# adaptive thief, the A2WS ring, the CTWS token whose holder may be the dead node, the
# LW leader when node 0 dies); after the declaration nobody calls the dead node again.
# Two deaths in one cluster are both declared.  Waits are bounded and wait for log
# lines, never for a fixed delay.
. "$(dirname "$0")/lib.sh"

# Deaths are what this test is about; the daemons say so at WARN.
LOG_ALLOW="declared dead|closed by peer|reset by peer|refused"

# declared NODE DEAD : NODE's log says DEAD was declared dead.
declared() { grep -q "node $2 declared dead" "$CLUSTER_WORKDIR/node-$1.log"; }

# dies POLICY VICTIM : a cluster of 5 under POLICY loses node VICTIM to SIGKILL.
dies() {
    local policy=$1 victim=$2 i
    start_cluster 5 1 --policy "$policy" --failure-timeout 400
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
        local log="$CLUSTER_WORKDIR/node-$i.log"
        [ "$(grep -c "node $victim declared dead" "$log")" -eq 1 ] ||
            fail "$policy: node $i declared node $victim dead more than once"
        sed -n "/node $victim declared dead/,\$p" "$log" | grep -q "connect to node $victim" &&
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
mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
kill -KILL "${pids[1]}" "${pids[3]}"
for i in 0 2 4; do
    wait_until 30 eval "declared $i 1 && declared $i 3" ||
        fail "node $i did not declare both nodes 1 and 3 dead"
done
note "two deaths: declared by nodes 0, 2 and 4"
CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[1]}/}")
CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[3]}/}")
stop_cluster
