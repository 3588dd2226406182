#!/bin/bash
# t_62_job_counters: a job's summary counts its own steals, not the cluster's whole life
# (issue 18).  Two jobs one after the other on one cluster of 3 daemons, each submitted
# to node 0 (--mode one) so that stealing spreads it: the second job's summary gives, per
# node, exactly the tasks stolen between the `status` taken after the first job and the
# one after the second (tasks move only while a job runs), where it used to give the
# cluster's totals; the JSON says its counters run from the job's submit.
# The trace of both jobs: report warns that it mixes two jobs, and `report --job J`
# gives each job alone (its 300 tasks, its window).
. "$(dirname "$0")/lib.sh"
jd() { timeout -k 5 60 "$JACKDAW" "$@"; }

start_cluster 3 2
"$JACKDAW" gen fanout --tasks 300 --degree 3 --kind sleep --duration-s 0.002-0.01 --seed 2 \
    -o "$T/f.jsonl" || fail "gen failed"
for k in a b; do
    timeout -k 5 60 "$JACKDAW" submit "$T/f.jsonl" --cluster "$CLUSTER_FILE" --mode one --wait \
        --json --quiet >"$T/$k.json" 2>"$T/$k.err" || { cat "$T/$k.err" >&2; fail "submit $k"; }
    timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" --json >"$T/s-$k.json" ||
        fail "status after $k"
done
"$PY" - "$T/a.json" "$T/b.json" "$T/s-a.json" "$T/s-b.json" <<'EOF_PY' || fail "the second job's summary counts more than its own steals"
import json, sys
a, b, sa, sb = (json.load(open(p)) for p in sys.argv[1:5])
assert b["counters_since"] == "job submit", b["counters_since"]
stolen_b = {n["id"]: n["tasks_stolen"] for n in b["nodes"]}
before = {n["id"]: n["tasks_stolen"] for n in sa["nodes"]}
after = {n["id"]: n["tasks_stolen"] for n in sb["nodes"]}
for i in after:
    assert stolen_b[i] == after[i] - before[i], (i, stolen_b[i], after[i], before[i])
assert sum(before.values()) > 0, "the first job stole nothing: the check would prove nothing"
print("-- tasks stolen: job b %s, cluster totals %s" % (sorted(stolen_b.items()), sorted(after.items())))
EOF_PY
trace=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["trace"]')
stop_cluster

# The trace holds both jobs: report says so, and --job J reports one (300 tasks each).
jd report "$trace" >"$T/both.md" 2>"$T/both.err" || fail "report of the two-job trace"
grep -q "the trace holds 2 jobs" "$T/both.err" || { cat "$T/both.err" >&2; fail "report does not say the trace holds 2 jobs"; }
# ... and reports each alone too, in its Jobs table (and its JSON's "jobs").
grep -q '^## Jobs$' "$T/both.md" || fail "the two-job report has no Jobs section"
jd report "$trace" --format json -o "$T/both.json" 2>/dev/null || fail "report --format json of the two-job trace"
"$PY" - "$T/both.json" "$T/a.json" "$T/b.json" <<'EOF_PY' || fail "the two-job report's jobs are wrong"
import json, sys
r = json.load(open(sys.argv[1]))
ids = [json.load(open(p))["job"] for p in sys.argv[2:]]
jobs = r["jobs"]
assert [j["job"] for j in jobs] == ids, (jobs, ids)
assert all(j["tasks_done"] == 300 and j["makespan_s"] > 0 for j in jobs), jobs
# Each job's window is its own, shorter than the whole trace's.
assert all(j["makespan_s"] < r["figures"]["makespan_s"] for j in jobs), (jobs, r["figures"]["makespan_s"])
EOF_PY
for k in a b; do
    j=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['job'])" "$T/$k.json")
    jd report "$trace" --job "$j" --format json -o "$T/$k-report.json" 2>"$T/$k-report.err" || fail "report --job $j"
    grep -q "jobs" "$T/$k-report.err" && { cat "$T/$k-report.err" >&2; fail "report --job still warns of several jobs"; }
    "$PY" - "$T/$k-report.json" "$T/$k.json" <<'EOF_PY' || fail "report --job $j is not job $k's"
import json, sys
r = json.load(open(sys.argv[1]))["figures"]
s = json.load(open(sys.argv[2]))
assert r["tasks_done"] == 300 == s["tasks_done"], (r["tasks_done"], s["tasks_done"])
# its window, not both jobs': the job's own makespan up to the collector's setup time
assert r["makespan_s"] - s["makespan_s"] <= r["setup_s"] + 1e-6, (r["makespan_s"], s["makespan_s"])
EOF_PY
done
no_daemons_left "after the jobs"
