#!/bin/bash
# t_98_policies: every stealing preset (daws, a2ws, parsec, random1, none, daws+a2ws,
# lw, ctws) runs every DAG shape (bag of tasks, fan-in, fan-out, pipeline; short sleep
# tasks) to completion on 8 nodes of mixed speeds; the records show each task run
# exactly once with every dependency held.  Then A2WS on its own: all tasks submitted to
# node 0 (--mode one) must spread over the other nodes by A2WS steals, proportionally
# more to the fast nodes, while the tasks the workload marks unstealable stay on node 0.
# The baselines likewise: under lw with tasks submitted all over (--mode hashed) the
# movable ones go through the leader (node 0, one slot fewer) and every worker still
# runs tasks, the leader fewer than the workers; under ctws with every task on node 0
# the token's holders steal them, so every other node runs some, and the unstealable
# ones stay on node 0.  Bad policy flags are refused before anything starts.
. "$(dirname "$0")/lib.sh"

NODES=8
SPEEDS=1,0.5,0.25,1,0.5,1,0.25,1

for shape in bot fanin fanout pipeline; do
    case $shape in
    bot) args=(--tasks 160) ;;
    fanin) args=(--tasks 160 --degree 3) ;;
    fanout) args=(--tasks 160 --degree 3) ;;
    pipeline) args=(--tasks 160 --pipe-size 5) ;;
    esac
    "$JACKDAW" gen "$shape" "${args[@]}" --duration 0.002-0.006 --seed 11 -o "$T/$shape.jsonl" ||
        fail "jackdaw gen $shape ${args[*]} failed"
done

for policy in daws a2ws parsec random1 none daws+a2ws lw ctws; do
    for shape in bot fanin fanout pipeline; do
        label="${policy/+/_}-$shape"
        jd_run "$label" "$T/$shape.jsonl" --nodes $NODES --slots 2 --speeds $SPEEDS \
            --policy "$policy" --no-trace --records "$T/$label.records"
        expect_code 0 "$RUN_RC" "jackdaw run --policy $policy ($shape)"
        check_records "$T/$shape.jsonl" "$T/$label.records" >/dev/null
    done
    note "$policy: bot, fanin, fanout, pipeline complete, every task once, dependencies held"
done

# A2WS from a lopsided start: 400 tasks of 5 ms on node 0; every 10th may not move.
"$PY" - "$T/one.raw.jsonl" <<'EOF_PY' || fail "cannot write the mode-one workload"
import json, sys
with open(sys.argv[1], "w") as out:
    for i in range(400):
        t = {"id": "t%d" % i, "kind": "sleep", "duration_s": 0.005}
        if i % 10 == 0:
            t["stealable"] = False
        out.write(json.dumps(t) + "\n")
EOF_PY
jd_run a2ws-one "$T/one.raw.jsonl" --nodes $NODES --slots 2 --speeds $SPEEDS --mode one \
    --policy a2ws --no-trace --json --records "$T/a2ws-one.records"
expect_code 0 "$RUN_RC" "jackdaw run --mode one --policy a2ws"
check_records "$T/one.raw.jsonl" "$T/a2ws-one.records" >/dev/null
"$PY" - "$T/a2ws-one.out" "$T/a2ws-one.records" "$NODES" "$SPEEDS" <<'EOF_PY' ||
import json, sys
summary, records, nodes, speeds = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
speed = [float(x) for x in speeds.split(",")]
s = json.loads(open(summary).read())
steals = sum(n["steals_succeeded"] for n in s["nodes"])
ran = {}
pinned_elsewhere = []
for line in open(records):
    r = json.loads(line)
    ran[r["node"]] = ran.get(r["node"], 0) + 1
    if int(r["id"][1:]) % 10 == 0 and r["node"] != 0:
        pinned_elsewhere.append((r["id"], r["node"]))
print("a2ws --mode one: tasks per node %s, %d steals succeeded" %
      ({i: ran.get(i, 0) for i in range(nodes)}, steals))
errors = []
if steals == 0:
    errors.append("no steal succeeded")
idle = [i for i in range(1, nodes) if ran.get(i, 0) == 0]
if idle:
    errors.append("nodes %s ran no task" % idle)
if ran.get(0, 0) > 400 // 2:
    errors.append("node 0 still ran %d of 400 tasks" % ran.get(0, 0))
if pinned_elsewhere:
    errors.append("unstealable tasks ran off node 0: %s" % pinned_elsewhere[:5])
# Speed-aware: the speed-1 nodes, together, ran more per node than the 0.25 ones.
fast = [ran.get(i, 0) for i in range(1, nodes) if speed[i % len(speed)] == 1]
slow = [ran.get(i, 0) for i in range(1, nodes) if speed[i % len(speed)] == 0.25]
if fast and slow and sum(fast) / len(fast) <= sum(slow) / len(slow):
    errors.append("fast nodes ran %s, slow nodes %s" % (fast, slow))
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF_PY
    fail "A2WS did not spread the work of node 0"

# The baselines from the same lopsided workload.  lw, submitted by hash: the leader's
# summary row shows its slot given to distribution, and the records show the workers
# running the work the leader handed out.
jd_run lw-hashed "$T/one.raw.jsonl" --nodes $NODES --slots 2 --speeds $SPEEDS --mode hashed \
    --policy lw --no-trace --json --records "$T/lw-hashed.records"
expect_code 0 "$RUN_RC" "jackdaw run --mode hashed --policy lw"
check_records "$T/one.raw.jsonl" "$T/lw-hashed.records" >/dev/null
# ctws, all on node 0: only the token's holder steals, yet every node gets work.
jd_run ctws-one "$T/one.raw.jsonl" --nodes $NODES --slots 2 --speeds $SPEEDS --mode one \
    --policy ctws --no-trace --json --records "$T/ctws-one.records"
expect_code 0 "$RUN_RC" "jackdaw run --mode one --policy ctws"
check_records "$T/one.raw.jsonl" "$T/ctws-one.records" >/dev/null
"$PY" - "$T" "$NODES" <<'EOF_PY' ||
import json, sys
tmp, nodes = sys.argv[1], int(sys.argv[2])
errors = []

def load(label):
    s = json.loads(open("%s/%s.out" % (tmp, label)).read())
    ran = {}
    for line in open("%s/%s.records" % (tmp, label)):
        r = json.loads(line)
        ran[r["node"]] = ran.get(r["node"], 0) + 1
    return s, ran

s, ran = load("lw-hashed")
rows = {n["id"]: n for n in s["nodes"]}
grants = sum(n["steals_succeeded"] for n in s["nodes"] if n["id"] != 0)
print("lw --mode hashed: tasks per node %s, %d grants from the leader, leader slots %d" %
      ({i: ran.get(i, 0) for i in range(nodes)}, grants, rows[0]["slots"]))
if rows[0]["slots"] != 1:
    errors.append("lw: the leader kept %d slots, expected 1 (2 less the distributor)" %
                  rows[0]["slots"])
if any(rows[i]["slots"] != 2 for i in range(1, nodes)):
    errors.append("lw: a worker lost a slot: %s" % [rows[i]["slots"] for i in range(nodes)])
idle = [i for i in range(1, nodes) if ran.get(i, 0) == 0]
if idle:
    errors.append("lw: workers %s ran no task" % idle)
if grants == 0:
    errors.append("lw: no worker got a task from the leader")
if ran.get(0, 0) >= min(ran.get(i, 0) for i in range(1, nodes) if rows[i]["speed"] == 1.0):
    errors.append("lw: the one-slot leader ran %d tasks, as many as a full-speed worker" %
                  ran.get(0, 0))

s, ran = load("ctws-one")
steals = sum(n["steals_succeeded"] for n in s["nodes"])
print("ctws --mode one: tasks per node %s, %d steals succeeded" %
      ({i: ran.get(i, 0) for i in range(nodes)}, steals))
if steals == 0:
    errors.append("ctws: no steal succeeded")
idle = [i for i in range(1, nodes) if ran.get(i, 0) == 0]
if idle:
    errors.append("ctws: nodes %s ran no task" % idle)
if ran.get(0, 0) > 400 // 2:
    errors.append("ctws: node 0 still ran %d of 400 tasks" % ran.get(0, 0))
for line in open("%s/ctws-one.records" % tmp):
    r = json.loads(line)
    if int(r["id"][1:]) % 10 == 0 and r["node"] != 0:
        errors.append("ctws: unstealable task %s ran on node %d" % (r["id"], r["node"]))
        break
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF_PY
    fail "the lw or ctws baseline did not spread the work"

# Refused before any daemon starts.
wl="$T/bot.jsonl"
for bad in "--policy lifo" "--victims random:0" "--amount chunk:x" "--radius 0" \
           "--wait-guard maybe" "--starvation eager" "--victims a2ws --info load-query" \
           "--victims token --info ring" "--info token" "--policy lw --amount a2ws" \
           "--policy ctws --starvation preemptive"; do
    # shellcheck disable=SC2086 # the flags are words
    timeout -k 5 30 "$JACKDAW" run "$wl" --nodes 2 --no-trace $bad >"$T/bad.out" 2>&1
    rc=$?
    expect_code 2 "$rc" "jackdaw run $bad"
done
no_daemons_left "after the runs"
