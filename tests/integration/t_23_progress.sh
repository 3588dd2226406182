#!/bin/bash
# t_23_progress: a ready task that can start where it is, starts (the progress rule in
# core/runtime/thief.c).  Before the rule, a victim answered a steal request where it
# read it, before its dispatcher ran: on two idle nodes the request that rode with a
# grant took the granted task straight back, and one task bounced between them for
# ever (millions of TASK_STOLEN_IN, one TASK_START).  The shapes that hung most often
# on two nodes: a chain of 50 diamonds of 1 ms sleeps (hung in about half the runs),
# two independent 0.1 s sleeps (1 in 12) and a 10-into-1 fan-in on 2 slots (about
# half), each run several times under the default policy.  Every run must end, and its
# records show every task ran exactly once after its parents.  The trace of one run
# checks that no task was stolen more often than the cluster has nodes (a bounce would
# show as thousands).
. "$(dirname "$0")/lib.sh"

"$PY" - "$T" <<'EOF_PY' || fail "could not write the workloads"
import json, sys
t = sys.argv[1]
def write(name, rows):
    with open("%s/%s.jsonl" % (t, name), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
rows, prev = [], None
for i in range(50):
    a, b, c, d = ("%s%d" % (x, i) for x in "abcd")
    rows.append(dict(id=a, kind="sleep", duration_s=0.001, **({"parents": [prev]} if prev else {})))
    rows.append(dict(id=b, kind="sleep", duration_s=0.001, parents=[a]))
    rows.append(dict(id=c, kind="sleep", duration_s=0.001, parents=[a]))
    rows.append(dict(id=d, kind="sleep", duration_s=0.001, parents=[b, c]))
    prev = d
write("diamonds", rows)
write("two", [dict(id="a", kind="sleep", duration_s=0.1), dict(id="b", kind="sleep", duration_s=0.1)])
leaves = [dict(id="l%d" % i, kind="sleep", duration_s=0.01) for i in range(10)]
write("fanin", leaves + [dict(id="sum", kind="sleep", duration_s=0.01, parents=[l["id"] for l in leaves])])
EOF_PY

run_shape() { # NAME RUNS [run options]
    local name=$1 runs=$2 i
    shift 2
    for i in $(seq 1 "$runs"); do
        jd_run "$name-$i" "$T/$name.jsonl" --nodes 2 --no-trace --timeout 30 \
            --records "$T/$name-$i.records" "$@"
        expect_code 0 "$RUN_RC" "jackdaw run $name (run $i of $runs)"
        check_records "$T/$name.jsonl" "$T/$name-$i.records"
    done
}

run_shape diamonds 6
run_shape two 8
run_shape fanin 4 --slots 2

# One traced run: count each task's arrivals by theft.
jd_run traced "$T/diamonds.jsonl" --nodes 2 --trace "$T/d.avro" --records "$T/traced.records"
expect_code 0 "$RUN_RC" "jackdaw run diamonds, traced"
check_records "$T/diamonds.jsonl" "$T/traced.records"
timeout -k 5 60 "$JACKDAW" trace cat "$T/d.avro" --json >"$T/events.json" ||
    fail "jackdaw trace cat exited $?"
"$PY" - "$T/events.json" <<'EOF_PY' || fail "a task was stolen again and again"
import json, sys
stolen, starts = {}, 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["kind"] == "TASK_STOLEN_IN":
        stolen[e["task"]] = stolen.get(e["task"], 0) + 1
    elif e["kind"] == "TASK_START":
        starts += 1
most = max(stolen.values()) if stolen else 0
print("task starts %d, tasks stolen %d, most thefts of one task %d" % (starts, len(stolen), most))
sys.exit(0 if most <= 2 else 1)
EOF_PY
no_daemons_left "after the runs"
