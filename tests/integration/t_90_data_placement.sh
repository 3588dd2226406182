#!/bin/bash
# t_90_data_placement: Algorithm 1's two pure placements on a fan-out whose roots write
# large outputs (two roots of 4 MB, 12 children each, 4 nodes x 2 slots, emulated
# 1 Gbit/s links, adaptive stealing).  Under --placement mdl every child runs on the
# node that ran its parent (the node holding its only input): no byte moves, every task
# with inputs found them local, children that became ready elsewhere were pushed.
# Under --placement mlb the children go to the shared queues, ignoring data: stealing
# spreads them over several nodes, their inputs are fetched (bytes_moved > 0, whole
# objects, each node fetching each root's output at most once with the cache on) and
# nothing is pushed.  Both runs: every task done exactly once (check_records.py).
. "$(dirname "$0")/lib.sh"

NODES=4
ROOT_BYTES=4000000
wl="$T/fanout.jsonl"
"$PY" - "$wl" "$ROOT_BYTES" <<'EOF_PY' || fail "cannot write the workload"
import json, sys
path, root_bytes = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    for r in range(2):
        f.write(json.dumps({"id": "r%d" % r, "kind": "sleep", "duration_s": 0.01,
                            "output_bytes": root_bytes}) + "\n")
        for c in range(12):
            f.write(json.dumps({"id": "r%d_c%d" % (r, c), "kind": "sleep", "duration_s": 0.05,
                                "output_bytes": 1000, "parents": ["r%d" % r]}) + "\n")
EOF_PY
total=$(wc -l <"$wl")

# placement_check WANT SUMMARY RECORDS : mdl | mlb, the checks described above.
placement_check() {
    "$PY" - "$wl" "$@" "$NODES" "$ROOT_BYTES" <<'EOF_PY'
import json, sys
wl_path, want, summary, records, nodes, root_bytes = sys.argv[1:7]
nodes, root_bytes = int(nodes), int(root_bytes)
tasks = [json.loads(l) for l in open(wl_path) if l.strip()]
s = json.loads(open(summary).read())
rec = {}
for line in open(records):
    r = json.loads(line)
    rec[r["id"]] = r
errors = []
# Edges whose parent writes an output: the child's input lives where the parent ran.
edges = [(p, t["id"]) for t in tasks for p in t.get("parents", [])
         if next(x for x in tasks if x["id"] == p).get("output_bytes", 0) > 0]
away = [(p, c, rec[p]["node"], rec[c]["node"]) for p, c in edges if rec[c]["node"] != rec[p]["node"]]
child_nodes = sorted({rec[c]["node"] for _, c in edges})
roots = {t["id"]: rec[t["id"]]["node"] for t in tasks if not t.get("parents")}
bytes_in = sum(n["bytes_in"] for n in s["nodes"])
bytes_out = sum(n["bytes_out"] for n in s["nodes"])
print("%s: roots ran on %s; children ran on nodes %s; %d of %d edges crossed nodes; "
      "bytes_moved %d (in %d, out %d); pushed %d; locality %s; cache hit rate %s"
      % (want, roots, child_nodes, len(away), len(edges), s["bytes_moved"], bytes_in, bytes_out,
         s["tasks_pushed"], s["locality_hit_rate"], s["cache_hit_rate"]))
if (s["tasks"], s["tasks_done"], s["tasks_failed"], s["tasks_cancelled"]) != (len(tasks), len(tasks), 0, 0):
    errors.append("summary counts %s" % [s[k] for k in ("tasks", "tasks_done", "tasks_failed", "tasks_cancelled")])
if s["tasks_with_inputs"] != len(edges):
    errors.append("tasks_with_inputs %r, expected %d" % (s["tasks_with_inputs"], len(edges)))
if bytes_in != s["bytes_moved"] or bytes_out != s["bytes_moved"]:
    errors.append("bytes_moved %d, but the nodes received %d and sent %d"
                  % (s["bytes_moved"], bytes_in, bytes_out))
if want == "mdl":
    for p, c, pn, cn in away:
        errors.append("child %s ran on node %d, its parent %s (its input) on node %d" % (c, cn, p, pn))
    if s["bytes_moved"] != 0:
        errors.append("bytes_moved %d under mdl, expected 0" % s["bytes_moved"])
    if s["locality_hit_rate"] != 1:
        errors.append("locality_hit_rate %r under mdl, expected 1" % s["locality_hit_rate"])
    # The children are submitted to their shard owners (hashed), spread over the
    # nodes: those away from their parent's node are pushed to it.
    if s["tasks_pushed"] < 1:
        errors.append("no task pushed under mdl")
else:
    if len(child_nodes) < 2:
        errors.append("under mlb every child ran on node(s) %s" % child_nodes)
    if s["bytes_moved"] <= 0:
        errors.append("bytes_moved %r under mlb, expected > 0" % s["bytes_moved"])
    # Only the roots' outputs are read, whole, and with the cache on (the default) a
    # node fetches each of them at most once.
    if s["bytes_moved"] % root_bytes:
        errors.append("bytes_moved %d is not a whole number of %d-byte objects"
                      % (s["bytes_moved"], root_bytes))
    if s["bytes_moved"] > (nodes - 1) * len(roots) * root_bytes:
        errors.append("bytes_moved %d: some node fetched a root's output twice" % s["bytes_moved"])
    if s["tasks_pushed"] != 0:
        errors.append("mlb pushed %d tasks" % s["tasks_pushed"])
    if s["locality_hit_rate"] is None or not 0 <= s["locality_hit_rate"] < 1:
        errors.append("locality_hit_rate %r under mlb, expected in [0, 1)" % s["locality_hit_rate"])
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF_PY
}

for p in mdl mlb; do
    jd_run "$p" "$wl" --nodes $NODES --slots 2 --placement $p --steal adaptive \
        --bandwidth 1Gbit --json --records "$T/$p.records"
    expect_code 0 "$RUN_RC" "jackdaw run --placement $p"
    # All done: under mlb that also proves every fetched copy passed its BLAKE2b check
    # on arrival, since a copy whose hash does not match the sender's fails its task.
    check_records "$wl" "$T/$p.records"
    [ "$(wc -l <"$T/$p.records")" -eq "$total" ] ||
        fail "--placement $p: $(wc -l <"$T/$p.records") records for $total tasks"
    placement_check "$p" "$T/$p.out" "$T/$p.records" || fail "--placement $p: $(cat "$T/$p.out")"
done
no_daemons_left "after the runs"
