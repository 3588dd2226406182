#!/bin/bash
# t_99c_wfcommons: the eight real WfCommons instances of ../shared/workloads/wfcommons
# (WfFormat 1.5: Montage, Epigenomics, 1000Genome, Seismology, SoyKB, SRA Search, BLAST,
# nf-core/rnaseq) run on 8 nodes x 4 slots straight from their files (`jackdaw run
# FILE --time-scale F --data-scale D`), each at the time scale that brings its longer of
# critical path and work per slot to about a second: every task once, every dependency
# held, the initial files placed on the nodes and moved by the data plane.  `jackdaw
# import` writes the same workload as JSON Lines.  One instance runs again as real
# processes (--command).  A broken instance is refused naming the file and the task.
. "$(dirname "$0")/lib.sh"

W="$HERE/../../../shared/workloads/wfcommons"
[ -d "$W" ] || skip "no WfCommons instances at $W (../shared beside the clone)"
# A scale of the instance's own figures: 1 s / max(critical path, work / 32 slots).
scale_of() {
    "$PY" - "$1" <<'EOF_PY'
import json, sys
tasks = {}
for line in open(sys.argv[1]):
    t = json.loads(line)
    if "id" in t:
        tasks[t["id"]] = t
done = {}
def finish(i):
    if i not in done:
        done[i] = tasks[i]["duration_s"] + max((finish(p) for p in tasks[i].get("parents", [])), default=0)
    return done[i]
sys.setrecursionlimit(100000)
crit = max(finish(i) for i in tasks)
work = sum(t["duration_s"] for t in tasks.values())
print("%.3g" % (1.0 / max(crit, work / 32, 1e-9)))
EOF_PY
}

n=0
for f in "$W"/*.json; do
    name=$(basename "$f" .json)
    "$JACKDAW" import wfcommons "$f" -o "$T/$name.jsonl" 2>"$T/$name.import.err" ||
        { cat "$T/$name.import.err" >&2; fail "import of $name failed"; }
    scale=$(scale_of "$T/$name.jsonl") || fail "cannot work out the scale of $name"
    "$JACKDAW" import wfcommons "$f" --time-scale "$scale" --data-scale 0.0001 -o "$T/$name.scaled.jsonl" \
        2>/dev/null || fail "scaled import of $name failed"
    jd_run "$name" "$f" --nodes 8 --slots 4 --time-scale "$scale" --data-scale 0.0001 --json \
        --records "$T/$name.records"
    expect_code 0 "$RUN_RC" "jackdaw run $name (time scale $scale)"
    # The records are checked against the converted workload, as run read it.
    check_records "$T/$name.scaled.jsonl" "$T/$name.records"
    "$PY" - "$T/$name.out" "$T/$name.scaled.jsonl" "$name" <<'EOF_PY' || fail "$name: summary is wrong: $(head -c 400 "$T/$name.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
lines = [json.loads(l) for l in open(sys.argv[2])]
tasks = [l for l in lines if "id" in l]
objects = [l for l in lines if "object" in l]
assert s["tasks"] == s["tasks_done"] == len(tasks), (s["tasks"], s["tasks_done"], len(tasks))
readers = sum(1 for t in tasks if t.get("inputs"))
assert s["tasks_with_inputs"] >= readers, (s["tasks_with_inputs"], readers)
# Every instance but one has initial files bigger than nothing, and the nodes share them.
if sum(o["bytes"] for o in objects) > 0:
    assert s["bytes_moved"] > 0, "no bytes moved"
print("-- %s: %d tasks, %d initial objects, efficiency %.1f %%, %d bytes moved"
      % (sys.argv[3], len(tasks), len(objects), 100 * s["efficiency"], s["bytes_moved"]))
EOF_PY
    n=$((n + 1))
done
[ $n -eq 8 ] || fail "expected the eight instances, found $n"

# Real processes: the 1000Genome instance as command tasks of the recorded lengths
# (--command 'sleep {runtime}'), the ids handed to them quoted; at --data-scale 0.001 its
# chromosome files are 2.5 MB, big enough that each store writes them into a file a
# budget per loop pass before the first command reads them (objstore_spill).
f="$W/1000genome-chameleon-12ch-250k-001.json"
scale=$(scale_of "$T/1000genome-chameleon-12ch-250k-001.jsonl")
"$JACKDAW" import wfcommons "$f" --time-scale "$scale" --data-scale 0.001 --command 'sleep {runtime}; echo {id}' \
    -o "$T/genome-cmd.jsonl" 2>/dev/null || fail "import with --command failed"
grep -q '"kind":"command","cmd":"sleep 0' "$T/genome-cmd.jsonl" || fail "no command tasks in the import"
jd_run genome-cmd "$f" --nodes 8 --slots 4 --time-scale "$scale" --data-scale 0.001 --command 'sleep {runtime}; echo {id}' \
    --json --records "$T/genome-cmd.records"
expect_code 0 "$RUN_RC" "1000Genome as commands"
check_records "$T/genome-cmd.jsonl" "$T/genome-cmd.records"

# A broken instance: a parent that is no task, named with the file.
"$PY" - "$W/blast-chameleon-medium-001.json" "$T/broken.json" <<'EOF_PY' || fail "cannot write the broken instance"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["workflow"]["specification"]["tasks"][5]
t["parents"] = t["parents"] + ["no_such_task"]
json.dump(d, open(sys.argv[2], "w"))
EOF_PY
rc=0
"$JACKDAW" run "$T/broken.json" --nodes 2 --time-scale 0.001 >"$T/broken.out" 2>&1 || rc=$?
expect_code 3 $rc "run of a broken instance"
grep -q "broken.json: task '.*': .*no_such_task" "$T/broken.out" ||
    { cat "$T/broken.out" >&2; fail "the error does not name the file, the task and the parent"; }
# Scales are for instances: a JSON Lines workload given one is refused.
rc=0
"$JACKDAW" run "$T/blast-chameleon-medium-001.jsonl" --nodes 2 --time-scale 0.5 >"$T/jsonl.out" 2>&1 || rc=$?
expect_code 3 $rc "a JSON Lines workload with --time-scale"
grep -q "apply to WfCommons instances" "$T/jsonl.out" || { cat "$T/jsonl.out" >&2; fail "no reason given"; }
no_daemons_left "after the runs"
