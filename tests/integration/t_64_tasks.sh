#!/bin/bash
# t_64_tasks: `jackdaw tasks` and `jackdaw task ID` (issue 18), like sacct.  From the trace
# of a run: every task listed once with the state, node and exit status its record gives
# (a flaky task done on its 2nd run, a failing one failed, its child cancelled), filters
# by state and node, and one task's history in time order (submitted, started, its failed
# run retried, ended).  On a running cluster (no --trace: the collector's trace): a task
# held by a gate is listed running, and done once the gate opens.  Bad input: unknown
# task exit 3, unknown state exit 2.
. "$(dirname "$0")/lib.sh"

wl="$T/w.jsonl"
cat >"$wl" <<EOF_WL
{"id":"flaky","kind":"command","cmd":"[ \$JACKDAW_ATTEMPT -ge 1 ] || exit 3","retries":1}
{"id":"child","kind":"noop","parents":["flaky"]}
{"id":"bad","kind":"command","cmd":"exit 7"}
{"id":"after_bad","kind":"noop","parents":["bad"]}
{"id":"s","kind":"sleep","duration_s":0.01}
EOF_WL
jd_run r "$wl" --nodes 2 --slots 2 --records "$T/r.rec" --trace "$T/r.avro"
expect_code 1 "$RUN_RC" "the run with a failing task"
"$JACKDAW" tasks --trace "$T/r.avro" --json >"$T/tasks.json" || fail "tasks --json"
"$PY" - "$T/tasks.json" "$T/r.rec" <<'EOF_PY' || fail "tasks disagrees with the records"
import json, sys
tasks = {t["id"]: t for t in map(json.loads, open(sys.argv[1]))}
recs = {r["id"]: r for r in map(json.loads, open(sys.argv[2]))}
assert sorted(tasks) == sorted(recs), (sorted(tasks), sorted(recs))
for tid, r in recs.items():
    t = tasks[tid]
    assert t["state"] == r["status"], (tid, t, r)
    if r["status"] != "cancelled":
        assert t["node"] == r["node"], (tid, t, r)
assert tasks["flaky"]["runs"] == 2 and tasks["bad"]["runs"] == 1, tasks
EOF_PY
"$JACKDAW" tasks --trace "$T/r.avro" --state failed >"$T/failed.out" || fail "tasks --state failed"
[ "$(grep -c ' failed ' "$T/failed.out")" = 1 ] && grep -qE ' bad +failed .* 7$' "$T/failed.out" ||
    { cat "$T/failed.out" >&2; fail "--state failed does not list bad alone, with exit 7"; }
node=$("$PY" -c "import json,sys; print([r for r in map(json.loads, open(sys.argv[1])) if r['id']=='s'][0]['node'])" "$T/r.rec")
"$JACKDAW" tasks --trace "$T/r.avro" --node "$node" --state done | grep -qE ' s +done +'"$node"' ' ||
    fail "--node $node does not list task s"
"$JACKDAW" task flaky --trace "$T/r.avro" >"$T/flaky.out" || fail "task flaky"
cat "$T/flaky.out"
"$PY" - "$T/flaky.out" <<'EOF_PY' || fail "the history of flaky is not submitted, started, failed run, started, ended done"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert re.match(r"task \d+:0 flaky: done on node \d+, 2 runs$", lines[0]), lines[0]
events = [re.sub(r"^ +[0-9.]+ s +node \d+ +", "", l) for l in lines[1:]]
times = [float(l.split()[0]) for l in lines[1:]]
assert times == sorted(times), "not in time order"
order = [e for e in events if e.startswith(("submitted", "started", "run failed", "ended"))]
assert order[0] == "submitted" and order[1] == "started", order
assert order[2].startswith("run failed (exit 3)") and order[3] == "started", order
assert order[4] == "ended done (exit 0)", order
EOF_PY
rc=0
"$JACKDAW" task nope --trace "$T/r.avro" >/dev/null 2>&1 || rc=$?
expect_code 3 $rc "task nope"
rc=0
"$JACKDAW" tasks --trace "$T/r.avro" --state bogus >/dev/null 2>&1 || rc=$?
expect_code 2 $rc "tasks --state bogus"

# A running cluster: the collector's trace, as of a moment ago.
start_cluster 2 2
cat >"$T/g.jsonl" <<EOF_WL
{"id":"gate","kind":"command","cmd":"while [ ! -e $T/gate ]; do sleep 0.05; done"}
EOF_WL
timeout -k 5 30 "$JACKDAW" submit "$T/g.jsonl" --cluster "$CLUSTER_FILE" >/dev/null || fail "submit"
live_has() {
    timeout -k 5 30 "$JACKDAW" tasks --cluster "$CLUSTER_FILE" >"$T/live.out" 2>&1 &&
        grep -qE " gate +$1 " "$T/live.out"
}
wait_until 20 live_has running || { cat "$T/live.out" >&2; fail "the gate task is not listed running"; }
touch "$T/gate"
wait_until 20 live_has done || { cat "$T/live.out" >&2; fail "the gate task is not listed done"; }
stop_cluster
no_daemons_left "after the tasks"
