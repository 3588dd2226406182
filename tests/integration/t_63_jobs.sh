#!/bin/bash
# t_63_jobs: `jackdaw jobs` lists a cluster's jobs (issue 18).  On a cluster of 2 daemons:
# none at first; then job A followed to its end (submit --wait: done, with its end and
# makespan), job B with a failing task (failed), and job C still running (a gate file
# holds one task): the table and the JSON give each job's state and counts, in submit
# order; once C's gate opens, C is done.  Without a cluster file: exit 4.
. "$(dirname "$0")/lib.sh"

start_cluster 2 2
jobs_json() {
    timeout -k 5 30 "$JACKDAW" jobs --cluster "$CLUSTER_FILE" --json >"$T/jobs.json" || fail "jobs --json"
}
timeout -k 5 30 "$JACKDAW" jobs --cluster "$CLUSTER_FILE" >"$T/none.out" || fail "jobs on a new cluster"
grep -qx '(no jobs)' "$T/none.out" || { cat "$T/none.out" >&2; fail "a new cluster lists jobs"; }

"$JACKDAW" gen bot --tasks 40 --kind sleep --duration-s 0.001 -o "$T/a.jsonl" || fail "gen"
cat >"$T/b.jsonl" <<'EOF_WL'
{"id":"ok","kind":"noop"}
{"id":"bad","kind":"command","cmd":"exit 3"}
{"id":"child","kind":"noop","parents":["bad"]}
EOF_WL
cat >"$T/c.jsonl" <<EOF_WL
{"id":"wait","kind":"command","cmd":"while [ ! -e $T/gate ]; do sleep 0.05; done"}
{"id":"after","kind":"noop","parents":["wait"]}
EOF_WL
sub() { timeout -k 5 60 "$JACKDAW" submit "$@" --cluster "$CLUSTER_FILE" --quiet; }
sub "$T/a.jsonl" --wait >/dev/null || fail "submit a"
sub "$T/b.jsonl" --wait >/dev/null 2>&1
sub "$T/c.jsonl" >/dev/null || fail "submit c"

timeout -k 5 30 "$JACKDAW" jobs --cluster "$CLUSTER_FILE" >"$T/jobs.out" || fail "jobs"
cat "$T/jobs.out"
grep -qE '^[0-9]+ +a\.jsonl +done +40 +0 +0 +40 +[0-9:]{8} +[0-9:]{8} +[0-9.]+ s$' "$T/jobs.out" ||
    fail "job a is not 'done 40 0 0 40' with its end and makespan"
grep -qE '^[0-9]+ +b\.jsonl +failed +1 +1 +1 +3 ' "$T/jobs.out" || fail "job b is not 'failed 1 1 1 3'"
grep -qE '^[0-9]+ +c\.jsonl +running +0 +0 +0 +2 ' "$T/jobs.out" || fail "job c is not running"
jobs_json
"$PY" - "$T/jobs.json" <<'EOF_PY' || fail "jobs --json is wrong: $(cat "$T/jobs.json")"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
names = [j["workload"].rsplit("/", 1)[1] for j in jobs]
assert names == ["a.jsonl", "b.jsonl", "c.jsonl"], names  # submit order
a, b, c = jobs
assert (a["state"], a["done"], a["tasks"]) == ("done", 40, 40) and a["makespan_s"] > 0, a
assert a["ended_ns"] >= a["submitted_ns"], a
assert (b["state"], b["failed"], b["cancelled"]) == ("failed", 1, 1), b
assert c["state"] == "running" and c["ended_ns"] is None, c
EOF_PY
touch "$T/gate"
wait_until 30 eval 'jobs_json && grep -q "\"workload\":\"[^\"]*c.jsonl\",\"state\":\"done\"" "$T/jobs.json"' ||
    { cat "$T/jobs.json" >&2; fail "job c never shows done"; }
stop_cluster
rc=0
timeout -k 5 30 "$JACKDAW" jobs --cluster "$T/none.json" >"$T/nc.out" 2>&1 || rc=$?
expect_code 4 $rc "jobs without a cluster"
no_daemons_left "after the jobs"
