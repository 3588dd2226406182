#!/bin/bash
# t_70_submit_status_stop: the launch / submit / status / stop life cycle.  Launch 3
# nodes; status shows 3 rows; a second launch on the same cluster file is refused;
# submit one job without --wait and another with --wait; status --json parses and,
# after a bounded poll, its completeq totals equal the tasks of both jobs; two more
# jobs of one workload run at once (roundrobin and one modes) and the totals follow;
# stop ends every daemon (bounded wait) and removes the cluster file and key.
. "$(dirname "$0")/lib.sh"

NODES=3
start_cluster $NODES 2
key_path=$(cluster_field "$CLUSTER_FILE" 'c["key"]')

rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" >"$T/status0.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/status0.out"; fail "status exited $rc"; }
cat "$T/status0.out"
rows=$(grep -cE '^[0-9]+ ' "$T/status0.out")
[ "$rows" -eq $NODES ] || fail "status shows $rows node rows, expected $NODES"
head -1 "$T/status0.out" | grep -q completeq || fail "status has no header naming completeq"

# A second launch on a live cluster's file must refuse and leave the cluster alone.
rc=0
timeout -k 5 30 "$JACKDAW" launch --nodes 2 --slots 1 --cluster "$CLUSTER_FILE" >"$T/relaunch.out" 2>&1 || rc=$?
[ -f "$CLUSTER_FILE" ] && track_cluster "$CLUSTER_FILE"
expect_code 4 "$rc" "launch over a running cluster"
grep -qi 'already running' "$T/relaunch.out" || fail "second launch says: $(cat "$T/relaunch.out")"
now_pids=$(cluster_pids "$CLUSTER_FILE" | tr '\n' ' ')
[ "$now_pids" = "${CLUSTER_PIDS[*]} " ] || fail "the refused launch rewrote the cluster file: pids $now_pids"

wl_a="$T/a.jsonl"
wl_b="$T/b.jsonl"
"$JACKDAW" gen fanout --tasks 120 --degree 3 --duration 0.001-0.004 --seed 11 -o "$wl_a" || fail "gen a"
"$JACKDAW" gen pipeline --tasks 80 --pipe-size 4 --seed 12 -o "$wl_b" || fail "gen b"
total=200

rc=0
timeout -k 5 60 "$JACKDAW" submit "$wl_a" --cluster "$CLUSTER_FILE" >"$T/submit-a.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/submit-a.out"; fail "submit (no --wait) exited $rc"; }
grep -q 'submitted job' "$T/submit-a.out" || fail "submit printed: $(cat "$T/submit-a.out")"
note "$(cat "$T/submit-a.out")"

rc=0
timeout -k 5 90 "$JACKDAW" submit "$wl_b" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 60 --json \
    --records "$T/b.records" >"$T/submit-b.out" 2>"$T/submit-b.err" || rc=$?
[ $rc -eq 0 ] || { cat "$T/submit-b.out" "$T/submit-b.err"; fail "submit --wait exited $rc"; }
check_records "$wl_b" "$T/b.records"
"$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["tasks_done"] == 80, s' "$T/submit-b.out" ||
    fail "submit --wait --json: $(cat "$T/submit-b.out")"

# status --json: parse it and wait (bounded) until both jobs are complete.
status_totals() {
    timeout -k 2 10 "$JACKDAW" status --cluster "$CLUSTER_FILE" --json >"$T/status.json" 2>"$T/status.err" || return 1
    "$PY" - "$T/status.json" "$NODES" "$total" <<'EOF_PY'
import json, sys
s = json.load(open(sys.argv[1]))
nodes, total = int(sys.argv[2]), int(sys.argv[3])
assert len(s["nodes"]) == nodes, "status --json lists %d nodes" % len(s["nodes"])
assert sorted(n["id"] for n in s["nodes"]) == list(range(nodes))
done = sum(n["completeq"] for n in s["nodes"])
ran = sum(n["tasks_run"] for n in s["nodes"])
queued = sum(n["waitq"] + n["lready"] + n["sready"] + n["busy"] for n in s["nodes"])
print("completeq %d tasks_run %d queued/busy %d" % (done, ran, queued))
sys.exit(0 if done == total and ran == total and queued == 0 else 1)
EOF_PY
}
if ! wait_until 30 status_totals >"$T/poll.out" 2>&1; then
    cat "$T/poll.out" "$T/status.err" 2>/dev/null | tail -5
    cat "$T/status.json" 2>/dev/null
    fail "status --json never showed $total completed tasks"
fi
note "status --json: $(tail -1 "$T/poll.out")"

# Two more jobs at once, of the same workload (same task ids), in the other modes.
pids=()
for m in roundrobin one; do
    ( rc=0
      timeout -k 5 90 "$JACKDAW" submit "$wl_b" --cluster "$CLUSTER_FILE" --mode $m --wait --quiet \
          --timeout 60 --records "$T/b-$m.records" >"$T/submit-$m.out" 2>&1 || rc=$?
      echo $rc >"$T/submit-$m.rc" ) &
    pids+=($!)
    BG_PIDS+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for m in roundrobin one; do
    rc=$(cat "$T/submit-$m.rc" 2>/dev/null || echo none)
    [ "$rc" = 0 ] || { cat "$T/submit-$m.out"; fail "concurrent submit --mode $m exited $rc"; }
    check_records "$wl_b" "$T/b-$m.records"
done
total=$((total + 160))
if ! wait_until 30 status_totals >"$T/poll.out" 2>&1; then
    cat "$T/poll.out" "$T/status.json" 2>/dev/null | tail -5
    fail "status --json never showed $total completed tasks"
fi
note "status --json after 4 jobs: $(tail -1 "$T/poll.out")"

# stop: every daemon ends, the cluster file and the key go.
rc=0
timeout -k 5 30 "$JACKDAW" stop --cluster "$CLUSTER_FILE" >"$T/stop.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/stop.out"; fail "stop exited $rc"; }
grep -q "stopped $NODES nodes" "$T/stop.out" || fail "stop printed: $(cat "$T/stop.out")"
wait_until 10 cluster_gone || fail "daemons still running after stop: ${CLUSTER_PIDS[*]}"
[ -e "$CLUSTER_FILE" ] && fail "stop left the cluster file $CLUSTER_FILE"
[ -e "$key_path" ] && fail "stop left the key file $key_path"
CLUSTER_PIDS=()

rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" >"$T/status-after.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "status after stop succeeded: $(cat "$T/status-after.out")"
note "status after stop: exit $rc: $(head -1 "$T/status-after.out")"
no_daemons_left "after stop"
