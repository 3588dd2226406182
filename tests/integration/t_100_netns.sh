#!/bin/bash
# t_100_netns: a cluster on six network namespaces (tests/netns/bed.sh: real kernel
# stacks joined by a bridge, every link shaped to 1 Gbit/s with tbf), launched with
# `launch --hostfile … --rsh tests/netns/rsh` as over ssh, driven from the root
# namespace:
#   a. launch: one daemon per namespace, each bound to its namespace's address (the
#      cluster file says so), the collector on the root's bridge address;
#   b. every DAG shape runs to the end: each task once, every dependency held;
#   c. a data workload moves real bytes between namespaces (bytes_in/out per node);
#   d. status and a headless console from the root namespace see six nodes;
#   f. stop ends every daemon (no process left in any namespace) and the trace is whole;
#   e. a namespace's daemon killed mid-run: the job still ends with every task once, and
#      stop reports the dead one as not running; that cluster's collector runs in a
#      namespace (--collector HOST) and stops with it, its trace written there;
#   h. the console's launch form launches on the bed from a hostfile, runs, tears down;
#   g. a hostfile naming a namespace that does not exist, or giving a host an address it
#      does not have, fails launch within its bound, naming the host, its line and what
#      failed, and leaves nothing running anywhere.
# Skipped, saying why, where namespaces cannot be made (not root).
. "$(dirname "$0")/lib.sh"

BED="$HERE/../netns/bed.sh"
RSH="$HERE/../netns/rsh"
why=$("$BED" check) || skip "$why"
at_exit "$BED" down "$T/bed"
"$BED" up "$T/bed" 6 1gbit || fail "bed.sh up failed"
HOSTS="$T/bed/hostfile"
ROOT_ADDR=$(cat "$T/bed/root-addr")

ns_pids() { # every process in the bed's namespaces
    local ns
    for ns in $(awk '{print $1}' "$HOSTS"); do ip netns pids "$ns"; done
}
bed_empty() { [ -z "$(ns_pids)" ]; }

# a. Launch.
CLUSTER_FILE="$T/cluster/cluster.json"
timeout -k 5 90 "$JACKDAW" launch --hostfile "$HOSTS" --rsh "$RSH" --cluster "$CLUSTER_FILE" \
    --failure-timeout 1000 >"$T/launch.out" 2>&1 || { cat "$T/launch.out" >&2; fail "launch on the bed failed"; }
for pid in $(cluster_pids "$CLUSTER_FILE"); do CLUSTER_PIDS+=("$pid"); done
"$PY" - "$CLUSTER_FILE" "$HOSTS" "$ROOT_ADDR" <<'EOF_PY' || fail "the cluster file does not describe the bed"
import json, sys
c = json.load(open(sys.argv[1]))
hosts = [l.split() for l in open(sys.argv[2]) if l.strip()]
assert len(c["nodes"]) == len(hosts) == 6, len(c["nodes"])
for n, h in zip(c["nodes"], hosts):
    assert n["name"] == h[0], (n, h)
    assert "addr=" + n["host"] == h[1], (n, h)
    assert n["pid"] == 0 and n["remote_pid"] > 0, n
assert c["collector"]["host"] == sys.argv[3], c["collector"]
assert c["rsh"].endswith("netns/rsh"), c["rsh"]
EOF_PY
# Each daemon runs in its own namespace, with the pid the cluster file gives.
i=0
for ns in $(awk '{print $1}' "$HOSTS"); do
    rpid=$(cluster_field "$CLUSTER_FILE" "c['nodes'][$i]['remote_pid']")
    ip netns pids "$ns" | grep -qx "$rpid" || fail "node $i (pid $rpid) is not in namespace $ns"
    i=$((i + 1))
done
note "launched 6 daemons in 6 namespaces"

submit() { # LABEL WORKLOAD [options]
    local label=$1 wl=$2
    shift 2
    timeout -k 5 90 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --json --quiet \
        --timeout 60 --records "$T/$label.records" "$@" >"$T/$label.out" 2>"$T/$label.err"
}

# b. Every shape.
for shape in bot fanin fanout pipeline; do
    case $shape in
    bot) args=(--tasks 240) ;;
    fanin | fanout) args=(--tasks 240 --degree 3) ;;
    pipeline) args=(--tasks 240 --pipe-size 6) ;;
    esac
    "$JACKDAW" gen "$shape" "${args[@]}" --duration 0.001-0.004 --seed 11 -o "$T/$shape.jsonl" ||
        fail "gen $shape failed"
    submit "$shape" "$T/$shape.jsonl" || { cat "$T/$shape.err" >&2; fail "$shape on the bed failed"; }
    check_records "$T/$shape.jsonl" "$T/$shape.records"
    note "$shape: 240 tasks, records ok"
done

# c. Data between namespaces.
"$JACKDAW" gen allpairs -n 6 --file-bytes 400000 --duration-s 0.01 -o "$T/ap.jsonl" ||
    fail "gen allpairs failed"
submit ap "$T/ap.jsonl" || { cat "$T/ap.err" >&2; fail "all-pairs on the bed failed"; }
check_records "$T/ap.jsonl" "$T/ap.records"
"$PY" - "$T/ap.out" <<'EOF_PY' || fail "no bytes moved between namespaces: $(cat "$T/ap.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
moved = s["bytes_moved"]
assert moved > 0 and moved % 400000 == 0, moved
assert sum(n["bytes_in"] for n in s["nodes"]) == moved == sum(n["bytes_out"] for n in s["nodes"])
print("-- all-pairs: %d bytes (%d objects) moved between namespaces" % (moved, moved // 400000))
EOF_PY

# d. Status and a headless console, from the root namespace.
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" >"$T/status.out" 2>&1 ||
    { cat "$T/status.out" >&2; fail "status failed"; }
[ "$(grep -cE '^[0-5] ' "$T/status.out")" -eq 6 ] || { cat "$T/status.out" >&2; fail "status does not list 6 nodes"; }
timeout -k 5 60 "$JACKDAW" console --cluster "$CLUSTER_FILE" --headless 10 --refresh-ms 100 \
    >"$T/console.out" 2>"$T/console.err" || { cat "$T/console.err" >&2; fail "headless console failed"; }
[ "$(grep -cE '^ *[0-9]+ \[' "$T/console.out")" -eq 6 ] || { cat "$T/console.out" >&2; fail "the console does not show 6 nodes"; }
note "status and console from the root namespace: 6 nodes"

# f. Stop.
timeout -k 5 30 "$JACKDAW" stop --cluster "$CLUSTER_FILE" >"$T/stop.out" 2>&1 || { cat "$T/stop.out" >&2; fail "stop failed"; }
wait_until 10 bed_empty || fail "processes left in the namespaces after stop: $(ns_pids | tr '\n' ' ')"
CLUSTER_PIDS=()
trace=$(ls "$T"/cluster/jackdaw-*.avro)
"$JACKDAW" trace verify "$trace" >"$T/verify.out" 2>&1 || { cat "$T/verify.out" >&2; fail "trace verify failed"; }
note "stopped; $(head -1 "$T/verify.out")"

# e. A daemon killed mid-run, on a second cluster (a node killed with SIGKILL loses the
#    trace events it held in memory, so the first cluster's trace is checked whole).
#    Its collector runs in namespace 5 (--collector: started through the remote shell,
#    asked to stop over its port).
CLUSTER_FILE="$T/cluster2/cluster.json"
COL_NS=$(awk 'NR == 6 {print $1}' "$HOSTS")
timeout -k 5 90 "$JACKDAW" launch --hostfile "$HOSTS" --rsh "$RSH" --cluster "$CLUSTER_FILE" \
    --failure-timeout 1000 --collector "$COL_NS" >"$T/launch2.out" 2>&1 ||
    { cat "$T/launch2.out" >&2; fail "second launch failed"; }
col_pid=$(cluster_field "$CLUSTER_FILE" "c['collector']['remote_pid']")
ip netns pids "$COL_NS" | grep -qx "$col_pid" || fail "the collector (pid $col_pid) is not in namespace $COL_NS"
[ "$(cluster_field "$CLUSTER_FILE" "c['collector']['host']")" = "$(awk 'NR == 6 {print $2}' "$HOSTS" | cut -d= -f2)" ] ||
    fail "the collector does not listen on namespace $COL_NS's address"
for pid in $(cluster_pids "$CLUSTER_FILE"); do CLUSTER_PIDS+=("$pid"); done
# 2,400 sleeps of 10 ms on 12 slots: about 2 s, the kill lands in the first half.
"$JACKDAW" gen bot --tasks 2400 --kind sleep --duration-s 0.01 -o "$T/kill.jsonl" || fail "gen failed"
submit kill "$T/kill.jsonl" &
sub=$!
victim=$(cluster_field "$CLUSTER_FILE" "c['nodes'][3]['remote_pid']")
sleep 0.7
kill -KILL "$victim" || fail "cannot kill node 3 (pid $victim)"
wait "$sub" || { cat "$T/kill.err" >&2; fail "the job did not survive node 3's death"; }
check_records "$T/kill.jsonl" "$T/kill.records"
grep -q "node 3" "$T/kill.out" "$T/kill.err" || note "(the summary does not name node 3)"
note "node 3 killed mid-run: the job ended with every task once"
LOG_ALLOW="node 3|peer 3|:$(cluster_field "$CLUSTER_FILE" "c['nodes'][3]['port']")|connection refused|connection reset|declared dead|dead|resubmit|lost|spool"

rc=0
timeout -k 5 30 "$JACKDAW" stop --cluster "$CLUSTER_FILE" >"$T/stop2.out" 2>&1 || rc=$?
expect_code 0 $rc "stop after node 3 died"
grep -q "node 3 on .* was not running" "$T/stop2.out" || { cat "$T/stop2.out" >&2; fail "stop does not say node 3 was gone"; }
grep -q "stopped 5 of 6 nodes and the collector" "$T/stop2.out" || { cat "$T/stop2.out" >&2; fail "stop did not stop the remote collector"; }
"$JACKDAW" trace stats "$(ls "$T"/cluster2/work/jackdaw-*.avro)" --json >"$T/stats2.json" ||
    fail "the remote collector's trace does not read"
"$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["records"] > 2400, s["records"]' "$T/stats2.json" ||
    fail "the remote collector's trace is short: $(head -c 300 "$T/stats2.json")"
wait_until 10 bed_empty || fail "processes left in the namespaces after the second stop: $(ns_pids | tr '\n' ' ')"
CLUSTER_PIDS=()

# h. The console's launch form, by keystrokes: "Cluster on" hostfile, the bed's hostfile
#    and remote shell, 120 tasks; it runs them live on the namespaces and tears down.
command -v tmux >/dev/null || fail "tmux is needed (Debian package tmux)"
unset LINES COLUMNS
export TERM=xterm-256color
TM() { tmux -S "$T/tmux.sock" "$@"; }
at_exit tmux -S "$T/tmux.sock" kill-server
pane() { TM capture-pane -t form -p 2>/dev/null; }
pane_has() { pane | grep -qE -- "$1"; }
show() { echo "--- pane:" >&2; pane >&2; }
export JACKDAW_CLUSTER="$T/form/cluster.json"
TM new-session -d -s form -x 110 -y 40 \
    "$JACKDAW console --launch --refresh-ms 100 2>>$T/form.err; echo CONSOLE-EXIT=\$?; sleep 60" ||
    fail "tmux new-session"
wait_until 10 pane_has 'launch a cluster' || { show; fail "no launch form"; }
TM send-keys -t form Up Right
wait_until 10 pane_has 'Cluster on .*\[hostfile\]' || { show; fail "hostfile not chosen"; }
TM send-keys -t form Down "$HOSTS" Down C-u "$RSH"
wait_until 10 pane_has "remote shell +$RSH" || { show; fail "remote shell not typed"; }
for k in Down Down Down Down Down Down Down; do TM send-keys -t form "$k"; done
TM send-keys -t form C-u 1 2 0
wait_until 10 pane_has '^ +tasks +120 *$' || { show; fail "tasks not typed"; }
TM send-keys -t form F5
wait_until 30 pane_has 'jackdaw live' || { show; cat "$T/form.err" >&2; fail "the form did not launch on the bed"; }
[ -f "$JACKDAW_CLUSTER" ] || fail "no cluster file after the form's launch"
[ "$(cluster_field "$JACKDAW_CLUSTER" 'c["nodes"][2]["name"]')" = "$(awk 'NR == 3 {print $1}' "$HOSTS")" ] ||
    fail "the form's cluster is not on the bed"
wait_until 60 pane_has 'Tasks .* 120/120 +100.0%' || { show; fail "the run did not finish"; }
TM send-keys -t form K
wait_until 10 pane_has 'Tear the cluster down' || { show; fail "K did not ask"; }
TM send-keys -t form y
wait_until 15 pane_has 'cluster of 6 nodes stopped' || { show; fail "no teardown message"; }
wait_until 10 bed_empty || fail "processes left in the namespaces after the teardown: $(ns_pids | tr '\n' ' ')"
TM send-keys -t form q
wait_until 10 pane_has '^CONSOLE-EXIT=0' || { show; fail "q after the teardown did not exit 0"; }
note "console form: a hostfile launch on the bed ran 120 tasks and tore down"

# g. A namespace that does not exist.
cp "$HOSTS" "$T/hosts-bad"
echo "jdnope-$$ addr=${ROOT_ADDR%.*}.250  # no such namespace" >>"$T/hosts-bad"
rc=0
timeout -k 5 60 "$JACKDAW" launch --hostfile "$T/hosts-bad" --rsh "$RSH" --cluster "$T/bad/cluster.json" \
    --start-timeout 10 >"$T/bad.out" 2>&1 || rc=$?
expect_code 4 $rc "launch with a host that does not exist"
grep -q "host jdnope-$$ ($T/hosts-bad:7)" "$T/bad.out" || { cat "$T/bad.out" >&2; fail "the error does not name the host and its line"; }
wait_until 10 bed_empty || fail "processes left in the namespaces after a failed launch: $(ns_pids | tr '\n' ' ')"
[ ! -e "$T/bad/cluster.json" ] || fail "a failed launch left its cluster file"
note "a missing host: $(head -1 "$T/bad.out")"
# A host whose address is not its own: its agent cannot bind it, and says so.
awk 'NR == 1 {print $1, "addr=192.0.2.77"} NR > 1 {print}' "$HOSTS" >"$T/hosts-addr"
rc=0
timeout -k 5 60 "$JACKDAW" launch --hostfile "$T/hosts-addr" --rsh "$RSH" --cluster "$T/bad2/cluster.json" \
    --start-timeout 10 >"$T/bad2.out" 2>&1 || rc=$?
expect_code 4 $rc "launch with a host given an address it does not have"
grep -q "host $(awk 'NR == 1 {print $1}' "$HOSTS") ($T/hosts-addr:1): .*cannot listen on 192.0.2.77" "$T/bad2.out" ||
    { cat "$T/bad2.out" >&2; fail "the error does not say the address cannot be bound"; }
wait_until 10 bed_empty || fail "processes left in the namespaces after a failed launch: $(ns_pids | tr '\n' ' ')"
note "a wrong address: $(head -1 "$T/bad2.out")"
