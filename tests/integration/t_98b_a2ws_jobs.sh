#!/bin/bash
# t_98b_a2ws_jobs: A2WS on a cluster that runs one job after another.  The steal
# equation weighs each node's tasks (executed + available) against its speed; those
# counts belong to the job at hand, not to the daemon's lifetime.  A launched 4-node
# cluster under --policy a2ws runs job 1: 240 tasks of 5 ms that may not move, all on
# node 0 (--mode one), so node 0 alone ran them.  Job 2, 400 movable tasks of 5 ms,
# again all on node 0, must spread by steals while node 0 keeps a share: from the
# records, every node ran tasks of job 2 and node 0 at least 40 (a fair share is 100).
# Counting job 1's tasks, node 0 looked 240 tasks ahead of everyone and the thieves
# took all it had.  Both jobs' records show every task ran exactly once.
. "$(dirname "$0")/lib.sh"

NODES=4
start_cluster $NODES 1 --policy a2ws

# write_bag FILE COUNT STEALABLE : COUNT sleep tasks of 5 ms.
write_bag() {
    "$PY" - "$@" <<'EOF_PY' || fail "cannot write $1"
import json, sys
path, count, stealable = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "yes"
with open(path, "w") as out:
    for i in range(count):
        t = {"id": "t%d" % i, "kind": "sleep", "duration_s": 0.005}
        if not stealable:
            t["stealable"] = False
        out.write(json.dumps(t) + "\n")
EOF_PY
}
write_bag "$T/pinned.jsonl" 240 no
write_bag "$T/bag.jsonl" 400 yes

# submit_wait LABEL WORKLOAD : one job, --mode one, followed to its end with records.
submit_wait() {
    local rc=0
    timeout -k 5 90 "$JACKDAW" submit "$2" --cluster "$CLUSTER_FILE" --mode one --wait --quiet \
        --timeout 60 --records "$T/$1.records" >"$T/$1.out" 2>"$T/$1.err" || rc=$?
    [ $rc -eq 0 ] || { cat "$T/$1.out" "$T/$1.err"; fail "submit $1 exited $rc"; }
    check_records "$2" "$T/$1.records"
}

submit_wait pinned "$T/pinned.jsonl"
submit_wait bag "$T/bag.jsonl"
"$PY" - "$T/pinned.records" "$T/bag.records" "$NODES" <<'EOF_PY' ||
import json, sys
pinned, bag, nodes = sys.argv[1], sys.argv[2], int(sys.argv[3])
def per_node(path):
    ran = {}
    for line in open(path):
        r = json.loads(line)
        ran[r["node"]] = ran.get(r["node"], 0) + 1
    return {i: ran.get(i, 0) for i in range(nodes)}
first, second = per_node(pinned), per_node(bag)
print("job 1 (pinned to node 0) per node %s; job 2 (movable) per node %s" % (first, second))
errors = []
if first[0] != 240:
    errors.append("job 1 ran off node 0: %s" % first)
idle = [i for i in range(nodes) if second[i] == 0]
if idle:
    errors.append("nodes %s ran no task of job 2" % idle)
if second[0] < 40:
    errors.append("node 0 ran %d of job 2's 400 tasks: its count from job 1 still weighed"
                  % second[0])
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF_PY
    fail "A2WS carried job 1's counts into job 2"
stop_cluster
no_daemons_left "after the jobs"
