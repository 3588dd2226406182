#!/bin/bash
# t_105_sim_engines: `jackdaw sim --engine des|simgrid` on a bag of tasks and a fan-out
# with data, 4 simulated nodes x 2 slots: both engines exit 0 with every task done
# (their --json says which engine ran), write traces that `trace verify` passes against
# the workload, in which every task starts once and ends once on one node; neither
# makespan beats `jackdaw bound`'s capacity bound, and the two agree within 15 %.
# SimGrid runs one simulation per child process: a sweep and a what-if (a DES run's
# trace replayed on SimGrid) run several in one command.  An unknown engine and what
# SimGrid does not model are refused.  Skipped when this jackdaw cannot load SimGrid.
# No daemon is started; nothing here depends on timing.
. "$(dirname "$0")/lib.sh"

"$JACKDAW" gen bot --tasks 240 --duration 0.002-0.02 --seed 5 -o "$T/bot.jsonl" ||
    fail "jackdaw gen bot failed"
"$JACKDAW" gen fanout --tasks 240 --degree 3 --duration 0.005-0.02 --output-bytes 100000 \
    --seed 5 -o "$T/fanout.jsonl" || fail "jackdaw gen fanout failed"

jd_sim probe "$T/bot.jsonl" --nodes 2 --engine simgrid
if [ "$SIM_RC" -ne 0 ]; then
    grep -qi "simgrid" "$T/probe.err" || fail "sim --engine simgrid: exit $SIM_RC: $(cat "$T/probe.err")"
    skip "SimGrid cannot run here: $(head -1 "$T/probe.err")"
fi

for shape in bot fanout; do
    wl="$T/$shape.jsonl"
    tasks=$(grep -c '"id"' "$wl")
    "$JACKDAW" bound "$wl" --nodes 4 --slots 2 --bandwidth 1Gbit --json >"$T/$shape.bound" \
        2>"$T/$shape.bound.err" || { cat "$T/$shape.bound.err" >&2; fail "bound of $shape"; }
    for engine in des simgrid; do
        run="$shape-$engine"
        jd_sim_ok "$run" "$wl" --nodes 4 --slots 2 --bandwidth 1Gbit --engine "$engine" --json \
            --trace "$T/$run.avro"
        jd_trace_verify "$run" "$wl"
        "$JACKDAW" trace cat "$T/$run.avro" --json >"$T/$run.cat" || fail "trace cat of $run"
        "$PY" - "$T/$run.out" "$T/$run.cat" "$T/$shape.bound" "$tasks" "$engine" <<'EOF_PY' ||
import json, sys
s = json.load(open(sys.argv[1]))
bound = json.load(open(sys.argv[3]))
n, engine = int(sys.argv[4]), sys.argv[5]
assert s["engine"] == engine and s["simulated"] is True, s
assert s["tasks"] == n and s["tasks_done"] == n, s
starts, ends = {}, {}
for line in open(sys.argv[2]):
    e = json.loads(line)
    if e["kind"] in ("TASK_START", "TASK_END"):
        seen = starts if e["kind"] == "TASK_START" else ends
        seen.setdefault(e["task"], []).append(e["node"])
assert len(starts) == n and len(ends) == n, (len(starts), len(ends))
for t, at in starts.items():
    assert len(at) == 1 and ends[t] == at, (t, at, ends.get(t))
assert s["makespan_s"] >= bound["capacity_s"] * (1 - 1e-9), (s["makespan_s"], bound)
EOF_PY
            fail "sim $run: the summary or the trace is wrong: $(cat "$T/$run.out")"
    done
    "$PY" - "$T/$shape-des.out" "$T/$shape-simgrid.out" <<'EOF_PY' ||
import json, sys
d, g = (json.load(open(f))["makespan_s"] for f in sys.argv[1:3])
assert abs(g - d) <= 0.15 * d, "des %.6f s, simgrid %.6f s" % (d, g)
EOF_PY
        fail "$shape: the engines' makespans are more than 15 % apart"
    note "$shape: both engines, every task once, makespans within 15 %"
done

# Several SimGrid simulations in one command: a sweep, and a DES run replayed on SimGrid.
jd_sim sweep "$T/bot.jsonl" --engine simgrid --sweep nodes=2,3,4 --json
expect_code 0 "$SIM_RC" "sim --engine simgrid --sweep nodes=2,3,4"
"$PY" - "$T/sweep.out" <<'EOF_PY' || fail "sim --engine simgrid --sweep: $(cat "$T/sweep.out")"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["value"] for r in rows] == ["2", "3", "4"], rows
assert all(r["engine"] == "simgrid" and r["tasks_done"] == r["tasks"] for r in rows), rows
assert rows[0]["makespan_s"] > rows[2]["makespan_s"], rows
EOF_PY
jd_sim whatif --from "$T/bot-des.avro" --engine simgrid --json
expect_code 0 "$SIM_RC" "sim --from a DES trace --engine simgrid"
"$PY" - "$T/whatif.out" <<'EOF_PY' || fail "sim --from --engine simgrid: $(cat "$T/whatif.out")"
import json, sys
w = json.load(open(sys.argv[1]))
assert "alternative" not in w, w
assert w["reproduced"]["engine"] == "simgrid", w
assert abs(w["reproduced"]["error_pct"]) <= 15, w["reproduced"]["error_pct"]
EOF_PY
note "sweep and what-if on SimGrid: ok"

# Refusals: an unknown engine, and what SimGrid does not model, each naming it.
jd_sim bogus "$T/bot.jsonl" --engine ns3
expect_code 2 "$SIM_RC" "sim --engine ns3"
grep -q "engine 'ns3'" "$T/bogus.err" || fail "sim --engine ns3: $(cat "$T/bogus.err")"
jd_sim a2ws "$T/bot.jsonl" --engine simgrid --policy a2ws
expect_code 2 "$SIM_RC" "sim --engine simgrid --policy a2ws"
grep -qi "a2ws" "$T/a2ws.err" || fail "sim --engine simgrid --policy a2ws: $(cat "$T/a2ws.err")"
note "refusals: ok"
