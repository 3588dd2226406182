#!/bin/bash
# t_102_sim: `jackdaw sim` (issue 20) on every DAG shape the generator makes and on a
# workload with data (all-pairs) and a Cholesky, on 3 and 5 simulated nodes: exit 0, every task done,
# a trace that `trace verify` passes (dependencies checked against the workload) and
# whose header says it was simulated, `report` of that trace finding the sim's makespan
# (within 1 %), and a makespan never below any of `jackdaw bound`'s bounds.  Then: the
# same seed gives the same --json but for the wall-time fields, and the same trace
# events; every named policy (A2WS, PaRSEC, LW, CTWS) and placement auto run to the end;
# A2WS vectors too big, parts that do not fit together and a missing workload are refused
# with the right exit code and a message naming them.
# No daemon is started; nothing here depends on timing.
. "$(dirname "$0")/lib.sh"

# header FILE : the trace's run header (the container's jackdaw.header), as JSON.
header() {
    "$PY" - "$1" <<'EOF_PY'
import sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"Obj\x01", "not an Avro container"
pos = 4
def varint():
    global pos
    shift = n = 0
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (n >> 1) ^ -(n & 1)
meta = {}
while True:
    count = varint()
    if count == 0:
        break
    if count < 0:
        count = -count
        varint()
    for _ in range(count):
        k = varint(); key = data[pos:pos + k].decode(); pos += k
        v = varint(); meta[key] = data[pos:pos + v]; pos += v
print(meta["jackdaw.header"].decode())
EOF_PY
}

NODES_LIST="3 5"
SLOTS=2
for shape in bot fanin fanout pipeline allpairs cholesky; do
    wl="$T/$shape.jsonl"
    extra=()
    case $shape in
    bot) gen=(bot --tasks 200) ;;
    fanin) gen=(fanin --tasks 200 --degree 3) ;;
    fanout) gen=(fanout --tasks 200 --degree 3) ;;
    pipeline) gen=(pipeline --tasks 200 --pipe-size 6) ;;
    allpairs) gen=(allpairs -n 6) extra=(--bandwidth 1Gbit) ;;
    cholesky) gen=(cholesky --tiles 6 --tile-cost 0.01) ;;
    esac
    if [ "$shape" = allpairs ] || [ "$shape" = cholesky ]; then
        "$JACKDAW" gen "${gen[@]}" --seed 7 -o "$wl" || fail "jackdaw gen ${gen[*]} failed"
    else
        "$JACKDAW" gen "${gen[@]}" --duration 0.001-0.005 --seed 7 -o "$wl" ||
            fail "jackdaw gen ${gen[*]} failed"
    fi
    tasks=$(grep -c '"id"' "$wl")
    for nodes in $NODES_LIST; do
        run="$shape-$nodes"
        jd_sim_ok "$run" "$wl" --nodes "$nodes" --slots "$SLOTS" "${extra[@]}" --trace "$T/$run.avro" --json
        "$PY" - "$T/$run.out" "$tasks" "$nodes" <<'EOF_PY' || fail "sim $run: --json summary is wrong: $(cat "$T/$run.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
n, nodes = int(sys.argv[2]), int(sys.argv[3])
assert s["simulated"] is True, s
assert s["tasks"] == n and s["tasks_done"] == n, (s["tasks"], s["tasks_done"], n)
assert len(s["nodes"]) == nodes and s["total_slots"] == nodes * 2, s
assert s["makespan_s"] > 0 and 0 < s["efficiency"] <= 1 + 1e-9, s
for k in ("throughput_tps", "ideal_s", "mode", "events", "events_per_s", "wall_s", "messages",
          "steal_attempts", "steals_ok", "tasks_stolen", "bytes_moved"):
    assert k in s, k
EOF_PY
        jd_trace_verify "$run" "$wl"
        header "$T/$run.avro" >"$T/$run.header" || fail "sim $run: cannot read the trace header"
        "$PY" - "$T/$run.header" "$nodes" "$wl" <<'EOF_PY' || fail "sim $run: trace header is wrong: $(cat "$T/$run.header")"
import json, sys
h = json.loads(open(sys.argv[1]).read())
nodes = int(sys.argv[2])
assert h["simulated"] is True and h["format"] == 1, h
assert isinstance(h["start_ns"], int) and h["start_ns"] > 0, h
assert [n["id"] for n in h["nodes"]] == list(range(nodes)), h["nodes"]
assert all(n["slots"] == 2 and n["speed"] == 1.0 for n in h["nodes"]), h["nodes"]
assert h["workload"]["name"] == sys.argv[3] and len(h["workload"]["digest"]) == 32, h
assert isinstance(h["config"]["node_args"], list), h["config"]
sim = h["simulation"]
assert sim["seed"] == 1 and abs(sim["latency_s"] - 100e-6) < 1e-12, sim
EOF_PY
        "$JACKDAW" report "$T/$run.avro" --format json >"$T/$run.report" 2>"$T/$run.report.err" ||
            { cat "$T/$run.report.err" >&2; fail "report of sim $run's trace"; }
        "$JACKDAW" bound "$wl" --nodes "$nodes" --slots "$SLOTS" "${extra[@]}" --json \
            >"$T/$run.bound" 2>"$T/$run.bound.err" ||
            { cat "$T/$run.bound.err" >&2; fail "bound of $run"; }
        "$PY" - "$T/$run.out" "$T/$run.report" "$T/$run.bound" <<'EOF_PY' || fail "sim $run: makespan check"
import json, sys
s = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
b = json.load(open(sys.argv[3]))
mk, rmk = s["makespan_s"], r["figures"]["makespan_s"]
assert abs(rmk - mk) <= 0.01 * mk, "report's makespan %r, sim's %r" % (rmk, mk)
assert r["figures"]["tasks_done"] == s["tasks"], r["figures"]["tasks_done"]
# Every bound is a lower bound (bound.h); the binding one is the largest.
eps = 1e-9 * max(1.0, b["binding_s"])
for k in ("suboptimal_s", "capacity_s", "critical_path_s", "binding_s"):
    assert mk >= b[k] - eps, "makespan %r below %s %r" % (mk, k, b[k])
EOF_PY
        note "$run: $tasks tasks, makespan $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["makespan_s"])' "$T/$run.out") s: ok"
    done
done

# The same seed twice: the same summary but for wall time, and the same events.  The
# flags given go to the header's node_args, as a real run's daemons' flags do.
for i in 1 2; do
    jd_sim "again-$i" "$T/fanout.jsonl" --nodes 5 --slots "$SLOTS" --seed 3 --latency 50us --json \
        --placement mlb --steal random1 --trace "$T/again-$i.avro"
    expect_code 0 "$SIM_RC" "sim --seed 3 (run $i)"
    sed -E 's/"(wall_s|events_per_s)":[^,}]*,?//g' "$T/again-$i.out" >"$T/again-$i.stable"
    "$JACKDAW" trace cat "$T/again-$i.avro" >"$T/again-$i.cat" || fail "trace cat again-$i"
done
cmp -s "$T/again-1.stable" "$T/again-2.stable" ||
    fail "two runs with --seed 3 differ: $(diff "$T/again-1.stable" "$T/again-2.stable")"
cmp -s "$T/again-1.cat" "$T/again-2.cat" || fail "two runs with --seed 3 wrote different events"
grep -q '"seed":3' "$T/again-1.out" || fail "--json does not say seed 3: $(cat "$T/again-1.out")"
header "$T/again-1.avro" >"$T/again-1.header" || fail "cannot read again-1's trace header"
"$PY" - "$T/again-1.header" <<'EOF_PY' || fail "again-1: trace header is wrong: $(cat "$T/again-1.header")"
import json, sys
h = json.loads(open(sys.argv[1]).read())
args = h["config"]["node_args"]
assert args[args.index("--placement") + 1] == "mlb", args
assert args[args.index("--steal") + 1] == "random1", args
assert h["simulation"]["seed"] == 3 and abs(h["simulation"]["latency_s"] - 50e-6) < 1e-12, h
EOF_PY
note "same seed: same summary and events"

# Every named policy and placement auto: every task done, a trace verify passes, and the
# trace says who stole (LW: the workers' requests all go to node 0).
for policy in a2ws daws+a2ws parsec lw ctws auto; do
    if [ "$policy" = auto ]; then flags=(--placement auto); else flags=(--policy "$policy"); fi
    jd_sim_ok "pol-$policy" "$T/fanout.jsonl" --nodes 5 --slots "$SLOTS" --speeds C1 "${flags[@]}" \
        --trace "$T/pol-$policy.avro" --json
    "$PY" - "$T/pol-$policy.out" <<'EOF_PY' || fail "sim ${flags[*]}: $(cat "$T/pol-$policy.out")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["tasks_done"] == s["tasks"] == 200, s
EOF_PY
    jd_trace_verify "pol-$policy" "$T/fanout.jsonl"
done
"$JACKDAW" trace cat "$T/pol-lw.avro" >"$T/pol-lw.cat" || fail "trace cat pol-lw"
grep -q STEAL_REQUEST "$T/pol-lw.cat" || fail "sim --policy lw: no request to the leader"
if grep STEAL_REQUEST "$T/pol-lw.cat" | grep -qv "peer=0 "; then
    fail "sim --policy lw: a request to a node other than the leader"
fi
note "policies a2ws, daws+a2ws, parsec, lw, ctws and placement auto: ok"
# A2WS vectors that would not fit: the usage error, naming what to change.
jd_sim a2wsbig "$T/bot.jsonl" --policy a2ws --nodes 1100000
expect_code 2 "$SIM_RC" "sim --policy a2ws --nodes 1100000"
grep -q "jackdaw sim: .*A2WS.*--radius" "$T/a2wsbig.err" || fail "sim --policy a2ws --nodes 1100000: $(cat "$T/a2wsbig.err")"
# Parts that do not fit together: refused as run refuses them.
jd_sim parts "$T/bot.jsonl" --victims token --amount a2ws
expect_code 2 "$SIM_RC" "sim --victims token --amount a2ws"
grep -q "token" "$T/parts.err" || fail "sim --victims token --amount a2ws: $(cat "$T/parts.err")"
# A placement it does not know at all: refused as run refuses it.
jd_sim placement2 "$T/bot.jsonl" --placement nowhere
expect_code 2 "$SIM_RC" "sim --placement nowhere"
grep -q "nowhere" "$T/placement2.err" || fail "sim --placement nowhere: $(cat "$T/placement2.err")"

# An existing trace is never overwritten: it is kept as FILE.old, as `jackdaw run` does.
echo keep >"$T/exists.avro"
jd_sim exists "$T/bot.jsonl" --trace "$T/exists.avro"
expect_code 0 "$SIM_RC" "sim --trace to an existing file"
grep -qF "$T/exists.avro.old" "$T/exists.err" || fail "sim --trace exists: $(cat "$T/exists.err")"
[ "$(cat "$T/exists.avro.old")" = keep ] || fail "sim --trace lost the existing file"
"$JACKDAW" trace verify "$T/exists.avro" >/dev/null || fail "sim --trace over an old file: no trace"

# A missing workload: bad input, naming the file.
jd_sim missing "$T/nope.jsonl" --nodes 3
expect_code 3 "$SIM_RC" "sim of a missing workload"
grep -qF "$T/nope.jsonl" "$T/missing.err" || fail "sim of a missing workload: $(cat "$T/missing.err")"

# Bad flag values: the usage error, naming the flag.
jd_sim badlat "$T/bot.jsonl" --latency fast
expect_code 2 "$SIM_RC" "sim --latency fast"
grep -q -- "--latency 'fast'" "$T/badlat.err" || fail "sim --latency fast: $(cat "$T/badlat.err")"
jd_sim badnodes "$T/bot.jsonl" --nodes 0
expect_code 2 "$SIM_RC" "sim --nodes 0"
note "refusals: ok"
