#!/bin/bash
# t_20_mode_one: a bag of sleep tasks all submitted to node 0 (--mode one) spreads over
# the cluster by work stealing: every node runs tasks (in the --json summary and in the
# records) and some node's steals succeeded.  The control run with --steal none leaves
# every task on node 0, which shows the assertion above can fail.  --mode data (owner
# computes) starts each task of a tiled Cholesky on the node that holds the tile it
# updates: with stealing off, every record's node is that tile's node; the same run
# hashed puts tasks elsewhere, which shows that check can fail.
. "$(dirname "$0")/lib.sh"

wl="$T/bot.jsonl"
"$JACKDAW" gen bot --tasks 400 --duration 0.02 --seed 3 -o "$wl" || fail "jackdaw gen failed"

# summary_and_records SUMMARY RECORDS NODES spread|node0 : prints the per-node counts of
# the --json summary and of the records; fails unless every node ran tasks and some
# steal succeeded (spread), or everything ran on node 0 with no steal (node0).
summary_and_records() {
    "$PY" - "$@" <<'EOF_PY'
import json, sys
summary, records, nodes, want = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = json.loads(open(summary).read())
run = {n["id"]: n["tasks_run"] for n in s["nodes"]}
steals = sum(n["steals_succeeded"] for n in s["nodes"])
stolen = sum(n["tasks_stolen"] for n in s["nodes"])
rec = {}
for line in open(records):
    r = json.loads(line)
    rec[r["node"]] = rec.get(r["node"], 0) + 1
print("summary tasks_run %s, steals succeeded %d, tasks stolen %d; records per node %s"
      % (run, steals, stolen, rec))
errors = []
if len(run) != nodes:
    errors.append("summary lists %d nodes, expected %d" % (len(run), nodes))
if want == "spread":
    idle = [i for i in range(nodes) if run.get(i, 0) == 0]
    if idle:
        errors.append("summary: nodes %s ran no task" % idle)
    idle = [i for i in range(nodes) if rec.get(i, 0) == 0]
    if idle:
        errors.append("records: nodes %s ran no task" % idle)
    if steals == 0:
        errors.append("no node reports a successful steal")
else:
    others = {i: c for i, c in rec.items() if i != 0}
    if others or any(run.get(i, 0) for i in range(1, nodes)):
        errors.append("with --steal none tasks ran off node 0: records %s, summary %s" % (rec, run))
    if steals:
        errors.append("with --steal none %d steals succeeded" % steals)
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF_PY
}

jd_run one "$wl" --nodes 4 --slots 4 --mode one --json --records "$T/one.records"
expect_code 0 "$RUN_RC" "jackdaw run --mode one"
check_records "$wl" "$T/one.records"
summary_and_records "$T/one.out" "$T/one.records" 4 spread ||
    fail "--mode one with stealing did not spread the work"

jd_run none "$wl" --nodes 4 --slots 4 --mode one --steal none --json --records "$T/none.records"
expect_code 0 "$RUN_RC" "jackdaw run --mode one --steal none"
check_records "$wl" "$T/none.records"
summary_and_records "$T/none.out" "$T/none.records" 4 node0 ||
    fail "--mode one --steal none ran tasks off node 0"

# on_owner WORKLOAD RECORDS owner|elsewhere : whether every task ran on the node of its
# first input object (owner), or some did not (elsewhere).
on_owner() {
    "$PY" - "$@" <<'EOF_PY'
import json, sys
wl, records, want = sys.argv[1], sys.argv[2], sys.argv[3]
objects, first, index = {}, [], 0
for line in open(wl):
    d = json.loads(line)
    if "object" in d:
        objects[d["object"]] = d["node"]
        continue
    first.append(objects[d["inputs"][0]])
off = []
for line in open(records):
    r = json.loads(line)
    if r["node"] != first[r["index"]]:
        off.append((r["id"], r["node"], first[r["index"]]))
print("%d of %d tasks ran off their tile's node, e.g. %s" % (len(off), len(first), off[:3]))
sys.exit(0 if (not off) == (want == "owner") else 1)
EOF_PY
}

chol="$T/cholesky.jsonl"
"$JACKDAW" gen cholesky --tiles 8 --sparsity 0.5 --nodes 4 --tile-cost 0.002 -o "$chol" ||
    fail "jackdaw gen cholesky failed"
jd_run data "$chol" --nodes 4 --slots 2 --mode data --policy none --json --records "$T/data.records"
expect_code 0 "$RUN_RC" "jackdaw run --mode data --policy none"
check_records "$chol" "$T/data.records"
on_owner "$chol" "$T/data.records" owner || fail "--mode data ran tasks off their tile's node"
jd_run hashed "$chol" --nodes 4 --slots 2 --mode hashed --policy none --json \
    --records "$T/hashed.records"
expect_code 0 "$RUN_RC" "jackdaw run --mode hashed --policy none"
check_records "$chol" "$T/hashed.records"
on_owner "$chol" "$T/hashed.records" elsewhere ||
    fail "--mode hashed ran every task on its tile's node: the check above cannot fail"
no_daemons_left "after the runs"
