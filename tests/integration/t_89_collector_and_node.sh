#!/bin/bash
# t_89_collector_and_node: the collector killed with SIGKILL mid-run while a node is
# killed too, then the collector restarted (`jackdaw collector --cluster FILE --detach`,
# as in t_81): no event is lost.  Six daemons, --replicas 2, --failure-timeout 500.
# The collector dies at a quarter of the tasks ended; a node dies while no collector
# listens, so its last events exist only in its spool file, which SIGKILL leaves on
# disk; the collector is restarted once the others declared the node dead and handed
# its tasks on.  After the job (exit 0, every task once in the records) and `jackdaw
# stop`, the collector's trace merged with the dead node's spool (`trace merge`) has,
# for every node, every event its tracer numbered (the live nodes' logs say how many
# when they stop), with no gap in any node's sequence numbers (`trace verify`).
#
# `trace verify` may not yet understand attempts (a task run again after its holder died
# starts twice), and the killed node's last events (still in its memory, not yet in a
# block) die with it: only the lost-event findings (seq-gap, dropped) fail this test;
# the rest is printed.
# Takes about 10 s.
. "$(dirname "$0")/lib.sh"

LOG_ALLOW="declared dead|closed by peer|reset by peer|refused|metadata status|collector at .* away|cut block|cut tail"
jd() { timeout -k 5 60 "$JACKDAW" "$@"; }
ended() {
    local n
    n=$(grep -c . "$1" 2>/dev/null)
    echo "${n:-0}"
}
NODES=6
VICTIM=3
WL="$T/fanin.jsonl"
REC="$T/fanin.records"
jd gen fanin --tasks 900 --degree 4 --duration-s 0.05-0.1 --seed 89 -o "$WL" >/dev/null || fail "gen"
TOTAL=$(grep -c . "$WL")

start_cluster $NODES 2 --replicas 2 --failure-timeout 500
mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
TRACE=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["trace"]')
CPID=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["pid"]')
: >"$REC"
bg timeout -k 5 90 "$JACKDAW" submit "$WL" --cluster "$CLUSTER_FILE" --wait --quiet \
    --records "$REC" --timeout 60 >"$T/submit.out" 2>&1
client=${BG_PIDS[-1]}

wait_until 60 eval '[ "$(ended "$REC")" -ge $((TOTAL / 4)) ]' || fail "a quarter of the tasks never ended"
pid_is_ours "$CPID" || fail "pid $CPID is not this test's collector"
kill -KILL "$CPID"
wait_until 10 eval "! pid_alive $CPID" || fail "collector $CPID survived SIGKILL"
# The node dies once it has spooled events of its own (its tracer blocks what it
# numbered within a second): what it still held in memory dies with it, a tail, never
# a gap, and not the collector's loss.
at=$(ended "$REC")
SPOOL="$CLUSTER_WORKDIR/node-$VICTIM/trace-spool.avro"
size() { stat -c %s "$SPOOL" 2>/dev/null || echo 0; }
wait_until 30 eval '[ "$(size)" -gt 0 ]' || fail "node $VICTIM never spooled while the collector was down"
first=$(size)
wait_until 30 eval '[ "$(size)" -gt "$first" ]' || fail "node $VICTIM spooled no event of its own"
kill -KILL "${pids[$VICTIM]}"
wait_until 10 eval "! pid_alive ${pids[$VICTIM]}" || fail "node $VICTIM survived SIGKILL"
keep=()
for p in "${CLUSTER_PIDS[@]}"; do [ "$p" = "${pids[$VICTIM]}" ] || [ "$p" = "$CPID" ] || keep+=("$p"); done
CLUSTER_PIDS=("${keep[@]}")
note "collector killed at $at of $TOTAL tasks ended, node $VICTIM at $(ended "$REC")"

handed_on() { cat "$CLUSTER_WORKDIR"/node-*.log | grep -c 'its holder died; attempt 1 goes to node'; }
wait_until 30 eval '[ "$(handed_on)" -gt 0 ]' || fail "none of node $VICTIM's tasks was handed on"
jd collector --cluster "$CLUSTER_FILE" --detach >"$T/restart.out" 2>&1
expect_code 0 $? "jackdaw collector --detach: $(cat "$T/restart.out")"
CPID=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["pid"]')
pid_alive "$CPID" && pid_is_ours "$CPID" || fail "the restarted collector $CPID is not running"
CLUSTER_PIDS+=("$CPID")
note "collector restarted at $(ended "$REC") of $TOTAL tasks ended; $(handed_on) tasks handed on"

wait "$client"
rc=$?
[ $rc -eq 0 ] || { cat "$T/submit.out" >&2; fail "submit --wait exited $rc"; }
check_records "$WL" "$REC"
stop_cluster

# ---- the trace ----------------------------------------------------------------------------
[ -s "$SPOOL" ] || fail "the killed node left no spool file at $SPOOL"
left=$(find "$CLUSTER_WORKDIR" -name 'trace-spool*.avro' ! -path "*/node-$VICTIM/*" | sort)
[ -z "$left" ] || fail "live nodes left spool files never written to the collector: $left"
jd trace merge -o "$T/merged.avro" "$TRACE" "$SPOOL" >"$T/merge.out" 2>&1 ||
    { cat "$T/merge.out" >&2; fail "trace merge of the collector's trace and node $VICTIM's spool"; }
jd trace stats "$T/merged.avro" --json >"$T/stats.json" || fail "trace stats exited $?"
# Every live node's events, as many as its tracer numbered; the dead node's, from 0 to
# its last with no gap (verify below), at least as many as its spool and the collector had.
for ((i = 0; i < NODES; i++)); do
    got=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["by_node"].get(sys.argv[2], 0))' \
        "$T/stats.json" "$i")
    if [ $i -eq $VICTIM ]; then
        note "node $VICTIM (killed): $got events in the merged trace"
        continue
    fi
    want=$(sed -n 's/.*trace: \([0-9]*\) events numbered.*/\1/p' "$CLUSTER_WORKDIR/node-$i.log" | tail -1)
    [ -n "$want" ] || fail "node $i did not log how many events it numbered"
    [ "$got" = "$want" ] || fail "node $i numbered $want events, the merged trace holds $got"
done
rc=0
jd trace verify "$T/merged.avro" --workload "$WL" --json --limit 5 >"$T/verify.json" 2>"$T/verify.err" || rc=$?
"$PY" - "$T/verify.json" <<'EOF_PY' || { cat "$T/verify.err" >&2; fail "trace verify finds lost events"; }
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit("no JSON from trace verify")
print("-- verify: events %d, tasks %d, done %d, missing events %d, problems by kind %s"
      % (v["events"], v["tasks"], v["done"], v["missing_events"], v.get("by_kind", {})))
for p in v.get("listed", []):
    print("--   %s: %s" % (p["kind"], p["text"]))
kinds = v.get("by_kind", {})
# A gap in a node's sequence numbers or a dropped event is a loss; the killed node's
# unspooled tail (tasks it ended just before it died: missing-end, and the children
# verify then finds without an ended parent) is not, and is only printed.
lost = {k: kinds[k] for k in ("seq-gap", "dropped", "file") if kinds.get(k)}
if v["missing_events"] or lost or v.get("blocks_failed"):
    sys.exit("lost events: %d missing, %s" % (v["missing_events"], lost))
EOF_PY
echo "PASS: $TEST_NAME"
