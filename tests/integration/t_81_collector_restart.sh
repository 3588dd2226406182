#!/bin/bash
# t_81_collector_restart: a collector killed with SIGKILL twice in one run, and started
# again each time the way a user would (`jackdaw collector --cluster FILE --detach`: its
# address and trace from the cluster file, in the background, logging to the cluster's
# collector.log like the one launch started), loses no event.
#
# The job is a DAG in three waves held apart by two gate tasks (commands that wait for
# a file this test creates), so that each kill falls mid-run and each outage has events
# of its own whatever the machine's speed: the first collector is killed once every
# node's events are in its file; the first gate opens only then, and the collector is
# restarted only once a node has spooled that gate's end, so wave B starts while no
# collector listens; the second collector is killed as soon as every node has resumed
# with it (while it receives their resends), and the second gate opens only then, its
# end spooled before the third collector starts.  A second, small job is submitted
# during the first outage: the client keeps its records (the job and its task ids) in
# the work directory, and the next collector writes them.  A restart on a file that is
# not a trace is refused.  After `jackdaw stop`:
#   - the job's records: every task once, done, after its parents (check_records);
#   - the collector's trace file alone (no spool file, no kept job may be left) passes
#     `trace verify --workload W`: every task submitted, started and ended exactly once,
#     no gap or duplicate in any node's sequence numbers, every dependency held; both
#     jobs are in it, and it names every task of both once;
#   - each node's events in the file are exactly as many as the node's tracer numbered
#     (its log says so when it stops), so no tail was lost either;
#   - the file was continued, not rewritten: every event the first collector had
#     written when it was killed is in the final file, the same.
# Takes about 10 s (twice in `make check`: the plain and the sanitizer builds).
. "$(dirname "$0")/lib.sh"

LOG_ALLOW='collector at .* away|cut block|cut tail'
jd() { timeout -k 5 60 "$JACKDAW" "$@"; }

# ---- the workload -------------------------------------------------------------------------
WL="$T/waves.jsonl"
"$PY" - "$WL" "$T" <<'EOF_PY' || fail "cannot write the workload"
import json, sys
out, tdir = sys.argv[1], sys.argv[2]
N = 150
def gate(name):
    # Bounded: gives up (and fails the task) after 60 s.
    return ("i=0; while [ ! -e %s/%s ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; "
            "[ -e %s/%s ]" % (tdir, name, tdir, name))
rows = [{"id": "a%d" % i, "kind": "sleep", "duration_s": 0.01} for i in range(N)]
rows.append({"id": "gate1", "kind": "command", "cmd": gate("open1")})
rows += [{"id": "b%d" % i, "kind": "sleep", "duration_s": 0.01, "parents": ["gate1", "a%d" % i]}
         for i in range(N)]
rows.append({"id": "gate2", "kind": "command", "cmd": gate("open2"), "parents": ["gate1"]})
rows += [{"id": "c%d" % i, "kind": "sleep", "duration_s": 0.01, "parents": ["gate2", "b%d" % i]}
         for i in range(N)]
with open(out, "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
EOF_PY
TASKS=$(wc -l <"$WL")
WL2="$T/small.jsonl"
jd gen bot --tasks 20 --kind sleep --duration-s 0.01 -o "$WL2" >/dev/null || fail "gen bot"

# ---- helpers ------------------------------------------------------------------------------
# records FILE : the number of records in a trace (0 when unreadable).
records() {
    "$JACKDAW" trace stats "$1" --json 2>/dev/null |
        "$PY" -c 'import json, sys; print(json.load(sys.stdin)["records"])' 2>/dev/null || echo 0
}
# nodes_in FILE N : true when events of nodes 0..N-1 are all in the trace.
nodes_in() {
    "$JACKDAW" trace stats "$1" --json 2>/dev/null | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if all(str(i) in j["by_node"] for i in range(int(sys.argv[1]))) else 1)' "$2"
}
# spooled_end INDEX : true when some node's spool file holds the TASK_END of task INDEX
# of the waves (indices 150 and 301 are the gates; the small job has 20 tasks).
spooled_end() {
    local f
    for f in "$CLUSTER_WORKDIR"/node-*/trace-spool.avro; do
        [ -f "$f" ] || continue
        "$JACKDAW" trace cat "$f" --json 2>/dev/null | "$PY" -c '
import json, sys
sys.exit(0 if any(e["kind"] == "TASK_END" and e["task"] == int(sys.argv[1])
                  for e in map(json.loads, sys.stdin)) else 1)' "$1" && return 0
    done
    return 1
}
# collector_pid : the collector the cluster file names.
collector_pid() { cluster_field "$CLUSTER_FILE" 'c["collector"]["pid"]'; }
# kill_collector PID : SIGKILL, and a bounded wait until it is gone.
kill_collector() {
    pid_is_ours "$1" || fail "pid $1 is not a collector of this test"
    kill -KILL "$1"
    wait_until 10 eval "! pid_alive $1" || fail "collector $1 survived SIGKILL"
}
# resumed_since LINE : how many node streams resumed in collector.log after line LINE.
resumed_since() {
    tail -n "+$(($1 + 1))" "$CLUSTER_WORKDIR/collector.log" | grep -c 'resuming at seq'
}
# restart_collector N : `jackdaw collector --cluster FILE --detach` as a user would type
# it; it returns once the collector serves, registered in the cluster file (CPID).
restart_collector() {
    local log="$CLUSTER_WORKDIR/collector.log" from
    from=$(wc -l <"$log")
    jd collector --cluster "$CLUSTER_FILE" --detach >"$T/restart-$1.out" 2>&1
    expect_code 0 $? "jackdaw collector --detach (restart $1): $(cat "$T/restart-$1.out")"
    CPID=$(collector_pid)
    grep -q "^collector (pid $CPID) on 127.0.0.1:$CPORT writing $TRACE; log $log\$" \
        "$T/restart-$1.out" || fail "restart $1 says: $(cat "$T/restart-$1.out")"
    pid_alive "$CPID" && pid_is_ours "$CPID" || fail "collector $CPID is not running"
    wait_until 15 eval "[ \$(resumed_since $from) -ge 4 ]" ||
        { tail -n "+$((from + 1))" "$log" >&2; fail "not every node resumed with collector $1"; }
}

# ---- the run ------------------------------------------------------------------------------
start_cluster 4 2
TRACE=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["trace"]')
CPORT=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["port"]')
CPID=$(collector_pid)
bg timeout -k 5 90 "$JACKDAW" submit "$WL" --cluster "$CLUSTER_FILE" --wait --quiet \
    --timeout 80 --records "$T/waves.rec" >"$T/submit.out" 2>&1
sub=${BG_PIDS[-1]}

# 1. Wave A runs; once every node's events are in the file, the first collector dies.
wait_until 15 nodes_in "$TRACE" 4 || fail "not every node's events reached the collector"
kill_collector "$CPID"
cp "$TRACE" "$T/at-kill-1.avro"
note "collector $CPID killed with $(records "$T/at-kill-1.avro") records in $TRACE"
# A restart on a file that is not a trace fails, says why, and leaves the cluster file
# naming the collector it had.
head -c 4096 /dev/urandom >"$T/garbage.avro"
jd collector --cluster "$CLUSTER_FILE" --detach --trace "$T/garbage.avro" >"$T/bad.out" 2>&1
expect_code 3 $? "jackdaw collector --detach on a file that is not a trace"
grep -q "exited before serving" "$T/bad.out" && grep -q "is not a jackdaw trace" "$T/bad.out" ||
    fail "a detached collector that cannot start says: $(cat "$T/bad.out")"
[ "$(cluster_field "$CLUSTER_FILE" 'c["collector"]["pid"], c["collector"]["trace"]')" = "($CPID, '$TRACE')" ] ||
    fail "a collector that never served rewrote the cluster file: $(cluster_field "$CLUSTER_FILE" 'c["collector"]')"
# 2. Wave B while no collector runs: the nodes spool; a job submitted now is kept.
touch "$T/open1"
jd submit "$WL2" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 50 --records "$T/small.rec" \
    >"$T/small.out" 2>&1
expect_code 0 $? "a job submitted while the collector is down"
check_records "$WL2" "$T/small.rec"
grep -q "records wait in '.*/trace-jobs/job-[0-9]*.jsonl'" "$T/small.out" ||
    fail "the client did not keep the job's records: $(cat "$T/small.out")"
wait_until 15 spooled_end 150 || fail "the end of gate1 was not spooled while the collector was down"
restart_collector 2
note "collector 2 ($CPID) resumed every node"
# 3. Killed again while the nodes resend; wave C while it is down.
kill_collector "$CPID"
touch "$T/open2"
wait_until 15 spooled_end 301 || fail "the end of gate2 was not spooled during the second outage"
restart_collector 3
note "collector 3 ($CPID) resumed every node"

wait "$sub"
expect_code 0 $? "the job whose collector was killed twice"
check_records "$WL" "$T/waves.rec"
stop_cluster
wait_until 10 eval "! pid_alive $CPID" || fail "jackdaw stop did not end collector 3 ($CPID)"

# ---- the trace ----------------------------------------------------------------------------
left=$(find "$CLUSTER_WORKDIR" -name 'trace-spool*.avro' -o -name 'job-*.jsonl*' | sort)
[ -z "$left" ] || fail "left behind, never written to the collector's trace: $left"
jd trace verify "$TRACE" --workload "$WL" >"$T/verify.out" 2>&1 ||
    { cat "$T/verify.out" >&2; fail "the trace of a run whose collector was killed twice does not verify"; }
all=$((TASKS + 20))
grep -q "jobs 2, tasks $all ($all done" "$T/verify.out" ||
    { cat "$T/verify.out" >&2; fail "verify did not count 2 jobs and $all done tasks"; }
jd trace cat "$TRACE" --json | "$PY" -c '
import collections, json, sys
names = collections.Counter(n for line in sys.stdin for e in [json.loads(line)]
                            if e["kind"] == "TASK_NAMES" for n in e["names"])
ids = collections.Counter(json.loads(l)["id"] for p in sys.argv[1:] for l in open(p) if l.strip())
sys.exit(0 if names == ids else "the trace names %d tasks (%d distinct), the workloads have %d"
         % (sum(names.values()), len(names), len(ids)))' "$WL" "$WL2" ||
    fail "the trace does not name every task of both jobs once"
# Each node's count: its tracer logs how many events it numbered when it stops.
jd trace stats "$TRACE" --json >"$T/stats.json" || fail "trace stats exited $?"
for i in 0 1 2 3; do
    want=$(sed -n 's/.*trace: \([0-9]*\) events numbered.*/\1/p' "$CLUSTER_WORKDIR/node-$i.log" | tail -1)
    [ -n "$want" ] || fail "node $i did not log how many events it numbered"
    got=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["by_node"].get(sys.argv[2], 0))' \
        "$T/stats.json" "$i")
    [ "$got" = "$want" ] || fail "node $i numbered $want events, the trace holds $got"
done
# Continued, not rewritten: what the first collector wrote is still there, unchanged.
jd trace cat "$T/at-kill-1.avro" --json >"$T/at-kill-1.json" 2>/dev/null
jd trace cat "$TRACE" --json >"$T/final.json" || fail "trace cat of the final trace exited $?"
"$PY" - "$T/at-kill-1.json" "$T/final.json" <<'EOF_PY' || fail "the restarted collectors did not keep the first one's events"
import json, sys
def load(p):
    return {(e["node"], e["seq"]): e for e in map(json.loads, open(p))}
first, final = load(sys.argv[1]), load(sys.argv[2])
if not first:
    sys.exit("no event in the file at the first kill")
changed = [k for k, e in first.items() if final.get(k) != e]
if changed:
    sys.exit("%d of %d events written before the first kill are missing or changed, e.g. %s"
             % (len(changed), len(first), changed[:3]))
print("-- %d events written before the first kill, all kept; %d in the end" % (len(first), len(final)))
EOF_PY
note "$(head -1 "$T/verify.out")"
echo "PASS: $TEST_NAME"
