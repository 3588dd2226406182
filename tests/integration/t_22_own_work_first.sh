#!/bin/bash
# t_22_own_work_first: a node does not steal while its own tasks are on the way.  A job's
# begin tells every node how many of the job's tasks it will get, and the tasks follow
# only after a barrier on the metadata; until the last of its own has come, a node is
# not starving.  2000 tasks submitted hashed to 4 nodes x 2 slots under random1 (one
# victim, asked at once: without the rule a node woken by the job's begin sends a steal
# request before its tasks are in), traced.  --poll-max-ms 1 parks a thief at its first
# failure, so that before the job (an idle cluster) no node asks again once it started;
# nothing but the job wakes it.  For every node, no STEAL_REQUEST lies between the
# job's submission and its last own TASK_SUBMIT; every node got tasks of its own and
# some node stole later (so the check had something to look at); the records show
# every task ran exactly once.  The same job submitted with --mode one must still
# spread: nodes that get nothing start stealing at once.
. "$(dirname "$0")/lib.sh"

wl="$T/bot.jsonl"
"$JACKDAW" gen bot --tasks 2000 --duration 0.001-0.009 --seed 5 -o "$wl" || fail "jackdaw gen failed"

# own_first TRACE NODES : fails if a node sent a STEAL_REQUEST after the job was
# submitted and before its last own task came, or if no node stole during the job.
own_first() {
    timeout -k 5 60 "$JACKDAW" trace cat "$1" --json >"$T/events.json" ||
        fail "jackdaw trace cat exited $?"
    "$PY" - "$T/events.json" "$2" <<'EOF_PY'
import json, sys
path, nodes = sys.argv[1], int(sys.argv[2])
job_at, last_submit, requests = None, {}, {}
for line in open(path):
    e = json.loads(line)
    k, n = e["kind"], e["node"]
    if k == "JOB_SUBMIT":
        job_at = e["time"] if job_at is None else min(job_at, e["time"])
    elif k == "TASK_SUBMIT":
        last_submit[n] = max(last_submit.get(n, -1), e["time"])
    elif k == "STEAL_REQUEST":
        requests.setdefault(n, []).append(e["time"])
errors = []
if job_at is None:
    errors.append("the trace has no JOB_SUBMIT")
    job_at = 0
early = {n: [t for t in ts if job_at <= t < last_submit.get(n, -1)] for n, ts in requests.items()}
later = sum(1 for ts in requests.values() for t in ts if t >= job_at)
print("job submitted at %.6f s; last own task in at %s; steal requests after it: %d; early: %s"
      % (job_at / 1e9, {n: "%.6f" % (t / 1e9) for n, t in sorted(last_submit.items())},
         later, {n: len(ts) for n, ts in sorted(early.items())}))
for n in range(nodes):
    if n not in last_submit:
        errors.append("node %d got no task of its own" % n)
    elif early.get(n):
        errors.append("node %d asked for tasks at %.6f s, before its own were in (%.6f s)"
                      % (n, early[n][0] / 1e9, last_submit[n] / 1e9))
if later == 0:
    errors.append("no node stole during the job: nothing was checked")
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF_PY
}

jd_run hashed "$wl" --nodes 4 --slots 2 --policy random1 --poll-max-ms 1 \
    --trace "$T/hashed.avro" --records "$T/hashed.records"
expect_code 0 "$RUN_RC" "jackdaw run --policy random1"
check_records "$wl" "$T/hashed.records"
own_first "$T/hashed.avro" 4 || fail "a node stole while its own tasks were on the way"

jd_run one "$wl" --nodes 4 --slots 2 --policy random1 --mode one --json \
    --records "$T/one.records"
expect_code 0 "$RUN_RC" "jackdaw run --policy random1 --mode one"
check_records "$wl" "$T/one.records"
"$PY" - "$T/one.out" <<'EOF_PY' || fail "with every task on node 0 the others did not steal"
import json, sys
s = json.loads(open(sys.argv[1]).read())
run = {n["id"]: n["tasks_run"] for n in s["nodes"]}
print("tasks run per node %s" % run)
sys.exit(0 if all(run.get(i, 0) > 0 for i in range(1, 4)) else 1)
EOF_PY
no_daemons_left "after the runs"
