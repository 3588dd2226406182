#!/bin/bash
# t_25_park_and_wake: a node whose stealing hit the back-off bound does not stop for
# good.  With a 4 ms bound every thief parks while a 0.4 s gate task runs on node 0
# (--mode one: nothing else is ready anywhere); when the gate ends and its 300 children
# become ready on node 0, node 0 wakes the parked peers and they steal.  (MATRIX's
# thieves stopped for good at the bound: node 0 would then run all 300 alone.)
. "$(dirname "$0")/lib.sh"

wl="$T/gated.jsonl"
"$PY" - "$wl" <<'EOF_PY'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"id": "gate", "kind": "sleep", "duration_s": 0.4}) + "\n")
    for i in range(300):
        f.write(json.dumps({"id": "c%d" % i, "kind": "sleep", "duration_s": 0.02,
                            "parents": ["gate"]}) + "\n")
EOF_PY

jd_run park "$wl" --nodes 4 --slots 2 --mode one --poll-max-ms 4 --log-level debug \
    --records "$T/rec.jsonl" --json
expect_code 0 "$RUN_RC" "run with a 4 ms back-off bound"
check_records "$wl" "$T/rec.jsonl"
"$PY" - "$T/park.out" "$T/rec.jsonl" <<'EOF_PY' || fail "parked thieves were not woken"
import json, sys
s = json.load(open(sys.argv[1]))
per = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    if r["id"] != "gate":
        per[r["node"]] = per.get(r["node"], 0) + 1
print("children run per node:", dict(sorted(per.items())))
idle = [n for n in range(4) if per.get(n, 0) == 0]
sys.exit(1 if idle else 0)
EOF_PY
# The logs show the mechanism, not just the outcome: thieves parked, then were woken.
parked=$(cat "$T"/park/work/node-*.log | grep -c "stealing parked")
[ "$parked" -gt 0 ] || fail "no thief reported parking (the bound was never reached)"
note "$parked park events; every node ran children of the gate"
