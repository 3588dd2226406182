#!/bin/bash
# t_98_policies: every stealing preset (daws, a2ws, parsec, random1, none, daws+a2ws)
# runs every DAG shape (bag of tasks, fan-in, fan-out, pipeline; short sleep tasks) to
# completion on 8 nodes of mixed speeds; the records show each task run exactly once
# with every dependency held.  Then A2WS on its own: all tasks submitted to node 0
# (--mode one) must spread over the other nodes by A2WS steals, proportionally more to
# the fast nodes, while the tasks the workload marks unstealable stay on node 0.  Bad
# policy flags are refused before anything starts.
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

for policy in daws a2ws parsec random1 none daws+a2ws; do
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

# Refused before any daemon starts.
wl="$T/bot.jsonl"
for bad in "--policy lw" "--victims random:0" "--amount chunk:x" "--radius 0" \
           "--wait-guard maybe" "--starvation eager" "--victims a2ws --info load-query"; do
    # shellcheck disable=SC2086 # the flags are words
    timeout -k 5 30 "$JACKDAW" run "$wl" --nodes 2 --no-trace $bad >"$T/bad.out" 2>&1
    rc=$?
    expect_code 2 "$rc" "jackdaw run $bad"
done
no_daemons_left "after the runs"
