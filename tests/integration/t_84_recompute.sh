#!/bin/bash
# t_84_recompute: data lost with a node (issue 15).  An all-pairs workload with data (8 x 8
# tasks reading two of 16 initial objects, spread over the nodes) followed by a reduction
# (one task per row reading that row's 8 outputs, then one reading the 8 row results,
# then one reading an initial object pinned to node 2) runs on 8 nodes of 2 slots with
# --replicas 2; node 2 is killed with SIGKILL once a quarter of the tasks ended (read from
# the records, never a fixed delay).
#   1. --object-replicas 2: exit 0, every task once in the records, every dependency
#      held; outputs of node 2 that a reduction still needed were recomputed (the logs
#      say so, or the run says why nothing was lost); the pinned object's copy on node 3
#      served the last task.
#   2. without object copies: the tasks that needed an initial object of node 2 after
#      its death (the last task at least, or its cancelled ancestors) fail with "input
#      object X was lost with node 2" in their records, the run exits 1 (failed tasks),
#      the summary counts them.
. "$(dirname "$0")/lib.sh"

LOG_ALLOW="declared dead|closed by peer|reset by peer|refused|metadata status|unavailable: Host is down|cannot fetch|fetch of .* failed"

wl="$T/allpairs-reduce.jsonl"
"$JACKDAW" gen allpairs -n 8 --file-bytes 20000 --output-bytes 5000 --duration-s 0.03-0.08 \
    --seed 21 -o "$T/allpairs.jsonl" || fail "gen allpairs failed"
"$PY" - "$T/allpairs.jsonl" "$wl" <<'EOF_PY' || fail "cannot build the reduction"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out = open(sys.argv[2], "w")
for l in lines:
    out.write(json.dumps(l) + "\n")
out.write(json.dumps({"object": "late", "bytes": 3000, "node": 2}) + "\n")
for i in range(8):
    out.write(json.dumps({"id": "r_%d" % i, "kind": "sleep", "duration_s": 0.01,
                          "output_bytes": 1000,
                          "parents": ["t_%d_%d" % (i, j) for j in range(8)]}) + "\n")
out.write(json.dumps({"id": "all", "kind": "sleep", "duration_s": 0.01, "output_bytes": 100,
                      "parents": ["r_%d" % i for i in range(8)]}) + "\n")
out.write(json.dumps({"id": "last", "kind": "sleep", "duration_s": 0.01, "inputs": ["late"],
                      "parents": ["all"]}) + "\n")
EOF_PY
total=$(grep -c '"id"' "$wl")

# kill_at_quarter NAME EXPECT-RC SUMMARY-FLAG CLUSTER-ARGS... : runs the workload (summary
# as JSON with --json, as text with --quiet), kills node 2.
kill_at_quarter() {
    local name=$1 expect=$2 summary=$3
    shift 3
    local rec="$T/$name.records" out="$T/$name.out"
    start_cluster 8 2 --replicas 2 --failure-timeout 500 "$@"
    local pids
    mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
    : >"$rec"
    timeout -k 5 120 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait "$summary" \
        --records "$rec" --timeout 100 >"$out" 2>"$T/$name.err" &
    local client=$!
    wait_until 60 eval '[ "$(grep -c . "$rec")" -ge $((total / 4)) ]' ||
        fail "$name: a quarter of the tasks never ended"
    kill -KILL "${pids[2]}"
    wait "$client"
    local rc=$?
    [ $rc -eq "$expect" ] || { cat "$out" "$T/$name.err" >&2; fail "$name: submit --wait exited $rc after node 2 died, expected $expect"; }
    CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[2]}/}")
    stop_cluster
}

kill_at_quarter copies 0 --json --object-replicas 2
check_records "$wl" "$T/copies.records"
recomputed=$(cat "$CLUSTER_WORKDIR"/node-*.log | grep -c "producer task .* runs again")
if [ "$recomputed" -gt 0 ]; then
    note "copies: $recomputed outputs of node 2 recomputed"
    grep -q "recomputed on node" "$CLUSTER_WORKDIR"/node-*.log ||
        fail "copies: a producer was re-opened but no recomputation ended"
else
    note "copies: no output of node 2 was still needed when it died (every reduction had read them)"
fi
"$PY" - "$T/copies.records" <<'EOF_PY' || fail "copies: the records are wrong"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
last = [r for r in recs if r.get("id") == "last"]
assert len(last) == 1 and last[0].get("status") == "done", last
EOF_PY

kill_at_quarter alone 1 --quiet
"$PY" - "$T/alone.records" "$T/alone.out" <<'EOF_PY' || fail "alone: the failure is not reported clearly"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
failed = [r for r in recs if r.get("status") == "failed"]
assert failed, "no task failed"
last = [r for r in recs if r.get("id") == "last"]
assert len(last) == 1 and last[0].get("status") in ("failed", "cancelled"), last
text = open(sys.argv[2]).read()
assert "failed tasks (%d;" % len(failed) in text, text
reasons = [l for l in text.splitlines() if l.strip().startswith("|")]
assert reasons and all("was lost with node 2" in l for l in reasons), text
print("alone: %d failed; %s" % (len(failed), reasons[0].strip()))
EOF_PY

