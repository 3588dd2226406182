#!/bin/bash
# t_104_sim_whatif: `jackdaw sim --from TRACE` and `--sweep` (issue 20's what-if).  A
# fan-in DAG with data is run for real on 3 daemons of 2 slots on loopback with a 1 Gbit/s
# link, its trace kept; then:
#  1. `sim --from TRACE --json` reproduces the recorded makespan within 40 % (loose on
#     purpose, as t_103: the real run shares 2 cores with whatever CI runs), and its
#     recorded figures are `report --format json`'s (makespan within 0.1 %, efficiency
#     too), with every task's duration measured in the trace;
#  2. with --placement mdl an alternative is printed, its flags named, and it moves a
#     different number of bytes from the reproduction (MDL pushes tasks to their data);
#     its text form says "reproduces the recorded run within";
#  3. the trace of a simulated run replays exactly (error below 0.01 %);
#  4. a workload of another digest (exit 3, naming the file), a missing trace (exit 3,
#     naming it) and a missing workload are refused;
#  5. `--sweep threshold=0,0.5,inf` prints 3 rows, as JSON an array of 3, and with
#     --trace PREFIX writes 3 traces that `compare` takes; `--sweep bogus=1` and a bad
#     value are refused (exit 2) naming them, before anything is simulated;
#  6. the submission mode: a real `run --mode one` records it in its JOB_SUBMIT, and
#     `sim --from` replays it so (the JSON says one, recorded; the text "mode: recorded
#     one"; every task of the reproduction's trace submitted to node 0, whose JOB_SUBMIT
#     records one in turn); step 1's run, submitted hashed, replays as recorded hashed; a
#     `run --mode data` is refused (exit 2) naming the mode.
# Every loop is bounded; no timing is asserted beyond the 40 % of step 1.
. "$(dirname "$0")/lib.sh"

BOUND=0.40
# A check in Python reads `"$PY" - ARGS <<'EOF_PY' || \` and then `fail ...`: without the
# backslash the here-document starts on the `fail` line, Python stops at its indent and
# the `||` runs the line after EOF_PY instead, so no assertion of the check counts.

"$JACKDAW" gen fanin --tasks 60 --degree 3 --duration-s 0.05-0.15 --output-bytes 200000-400000 \
    --seed 5 -o "$T/fanin.jsonl" || fail "jackdaw gen fanin failed"
jd_run real "$T/fanin.jsonl" --nodes 3 --slots 2 --bandwidth 1Gbit --json \
    --trace "$T/real.avro" --records "$T/real.records"
[ "$RUN_RC" -eq 0 ] || fail "jackdaw run exited $RUN_RC"
check_records "$T/fanin.jsonl" "$T/real.records"
[ -s "$T/real.avro" ] || fail "the run wrote no trace at $T/real.avro"
timeout -k 5 60 "$JACKDAW" report "$T/real.avro" --format json -o "$T/report.json" \
    2>"$T/report.err" || fail "report exited $?: $(cat "$T/report.err")"

# ---- 1. the reproduction --------------------------------------------------------------
jd_sim from "--from" "$T/real.avro" --json
expect_code 0 "$SIM_RC" "sim --from (stderr: $(cat "$T/from.err"))"
"$PY" - "$T/from.out" "$T/report.json" "$BOUND" <<'EOF_PY' || \
    fail "sim --from: $(cat "$T/from.out")"
import json, sys
d = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))["figures"]
bound = float(sys.argv[3])
rec, sim = d["recorded"], d["reproduced"]
assert "alternative" not in d, "an alternative with no flag given"
assert abs(rec["makespan_s"] - rep["makespan_s"]) <= 1e-3 * rep["makespan_s"], (rec, rep["makespan_s"])
assert abs(rec["efficiency"] - rep["efficiency"]) <= 1e-3 * rep["efficiency"], (rec, rep["efficiency"])
assert rec["tasks"] == 60 and rec["tasks_done"] == 60, rec
assert rec["durations_measured"] == 60 and rec["durations_kept"] == 0, rec
assert sim["tasks_done"] == 60 and sim["nodes"] and len(sim["nodes"]) == 3, sim
err = (sim["makespan_s"] - rec["makespan_s"]) / rec["makespan_s"]
assert abs(100 * err - sim["error_pct"]) < 1e-6, (err, sim["error_pct"])
print("  recorded %.3f s, reproduced %.3f s, error %+.1f %%" % (rec["makespan_s"], sim["makespan_s"], 100 * err))
sys.exit(0 if abs(err) <= bound else 1)
EOF_PY
note "reproduction: ok"

# ---- 2. an alternative ----------------------------------------------------------------
jd_sim mdl --from "$T/real.avro" --placement mdl --json
expect_code 0 "$SIM_RC" "sim --from --placement mdl (stderr: $(cat "$T/mdl.err"))"
"$PY" - "$T/mdl.out" <<'EOF_PY' || \
    fail "sim --from --placement mdl: $(cat "$T/mdl.out")"
import json, sys
d = json.load(open(sys.argv[1]))
alt, rep = d["alternative"], d["reproduced"]
assert alt["flags"] == "--placement mdl", alt["flags"]
assert alt["tasks_done"] == 60, alt
assert alt["bytes_moved"] != rep["bytes_moved"], (alt["bytes_moved"], rep["bytes_moved"])
change = 100 * (alt["makespan_s"] - d["recorded"]["makespan_s"]) / d["recorded"]["makespan_s"]
assert abs(change - alt["change_pct"]) < 1e-6, (change, alt["change_pct"])
EOF_PY
jd_sim mdltext --from "$T/real.avro" --placement mdl --trace "$T/mdl.avro"
expect_code 0 "$SIM_RC" "sim --from --placement mdl (text)"
grep -q "reproduces the recorded run within" "$T/mdltext.out" || fail "no reproduction line: $(cat "$T/mdltext.out")"
grep -q "^  alternative .*--placement mdl" "$T/mdltext.out" || fail "no alternative line: $(cat "$T/mdltext.out")"
[ -s "$T/mdl.avro" ] || fail "sim --from --trace wrote no trace"
note "alternative: ok"

# ---- 3. a simulated run replays exactly ------------------------------------------------
jd_sim again --from "$T/mdl.avro" --json
expect_code 0 "$SIM_RC" "sim --from a simulated trace (stderr: $(cat "$T/again.err"))"
"$PY" - "$T/again.out" <<'EOF_PY' || \
    fail "a simulated trace does not replay exactly: $(cat "$T/again.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["reproduced"]["error_pct"]) < 0.01, d["reproduced"]["error_pct"]
assert d["recorded"]["simulated"] is True, d["recorded"]
EOF_PY
note "simulated trace: replayed exactly"

# Nodes of different sizes (--slots a,b,c) are recorded per node and replayed so.
jd_sim uneven "$T/fanin.jsonl" --nodes 3 --slots 1,2,4 --bandwidth 1Gbit --trace "$T/uneven.avro" --json
expect_code 0 "$SIM_RC" "sim --slots 1,2,4 (stderr: $(cat "$T/uneven.err"))"
jd_sim uneven-again --from "$T/uneven.avro" --json
expect_code 0 "$SIM_RC" "sim --from a run of uneven nodes (stderr: $(cat "$T/uneven-again.err"))"
"$PY" - "$T/uneven.out" "$T/uneven-again.out" <<'EOF_PY' || \
    fail "uneven nodes: $(cat "$T/uneven.out" "$T/uneven-again.out")"
import json, sys
run = json.load(open(sys.argv[1]))
again = json.load(open(sys.argv[2]))
assert [n["slots"] for n in run["nodes"]] == [1, 2, 4], run["nodes"]
assert run["total_slots"] == 7, run["total_slots"]
assert abs(again["reproduced"]["error_pct"]) < 0.01, again["reproduced"]
EOF_PY
note "uneven nodes: 1, 2 and 4 slots recorded and replayed exactly"

# ---- 4. refusals ---------------------------------------------------------------------
{ cat "$T/fanin.jsonl"; echo '{"id":"extra","kind":"sleep","duration_s":0.1}'; } >"$T/other.jsonl"
jd_sim digest --from "$T/real.avro" --workload "$T/other.jsonl"
expect_code 3 "$SIM_RC" "sim --from with another workload"
grep -qF "$T/other.jsonl" "$T/digest.err" || fail "another workload: $(cat "$T/digest.err")"
grep -q "digest" "$T/digest.err" || fail "another workload, no digest named: $(cat "$T/digest.err")"
jd_sim notrace --from "$T/nope.avro"
expect_code 3 "$SIM_RC" "sim --from a missing trace"
grep -qF "$T/nope.avro" "$T/notrace.err" || fail "missing trace: $(cat "$T/notrace.err")"
jd_sim nowl --from "$T/real.avro" --workload "$T/nope.jsonl"
expect_code 3 "$SIM_RC" "sim --from a missing workload"
grep -qF "$T/nope.jsonl" "$T/nowl.err" || fail "missing workload: $(cat "$T/nowl.err")"
note "refusals: ok"

# ---- 5. a sweep ----------------------------------------------------------------------
jd_sim sweep --from "$T/real.avro" --sweep threshold=0,0.5,inf --trace "$T/sw"
expect_code 0 "$SIM_RC" "sim --sweep (stderr: $(cat "$T/sweep.err"))"
rows=$(grep -cE '^  (0|0\.5|inf) +[0-9.]+ s ' "$T/sweep.out")
[ "$rows" -eq 3 ] || fail "--sweep printed $rows rows, not 3: $(cat "$T/sweep.out")"
for v in 0 0.5 inf; do
    [ -s "$T/sw-$v.avro" ] || fail "--sweep --trace wrote no $T/sw-$v.avro"
done
timeout -k 5 120 "$JACKDAW" compare "$T/sw-0.avro" "$T/sw-0.5.avro" "$T/sw-inf.avro" \
    -o "$T/sweep.html" 2>"$T/compare.err" ||
    fail "compare of the sweep's traces exited $?: $(cat "$T/compare.err")"
grep -q "<svg\|<table" "$T/sweep.html" || fail "compare wrote no table"
jd_sim sweepjson "$T/fanin.jsonl" --nodes 3 --slots 2 --sweep threshold=0,0.5,inf --json
expect_code 0 "$SIM_RC" "sim --sweep --json"
"$PY" -c 'import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["value"] for r in rows] == ["0", "0.5", "inf"], rows
assert all(r["param"] == "threshold" and r["tasks_done"] == 60 for r in rows), rows' \
    "$T/sweepjson.out" || fail "--sweep --json: $(cat "$T/sweepjson.out")"
jd_sim bogus --from "$T/real.avro" --sweep bogus=1
expect_code 2 "$SIM_RC" "sim --sweep bogus=1"
grep -q "bogus" "$T/bogus.err" || fail "--sweep bogus=1: $(cat "$T/bogus.err")"
[ ! -s "$T/bogus.out" ] || fail "--sweep bogus=1 printed a summary: $(cat "$T/bogus.out")"
jd_sim badvalue --from "$T/real.avro" --sweep threshold=0,fast
expect_code 2 "$SIM_RC" "sim --sweep threshold=0,fast"
grep -q "threshold.*fast" "$T/badvalue.err" || fail "--sweep threshold=0,fast: $(cat "$T/badvalue.err")"
[ ! -s "$T/badvalue.out" ] || fail "a bad sweep value still simulated: $(cat "$T/badvalue.out")"
note "sweep: ok"

# ---- 6. the recorded submission mode ---------------------------------------------------
"$JACKDAW" gen bot --tasks 24 --duration-s 0.02-0.05 --seed 3 -o "$T/bot.jsonl" ||
    fail "jackdaw gen bot failed"
jd_run one "$T/bot.jsonl" --nodes 2 --slots 2 --mode one --trace "$T/one.avro"
[ "$RUN_RC" -eq 0 ] || fail "jackdaw run --mode one exited $RUN_RC"
"$JACKDAW" trace cat "$T/one.avro" >"$T/one.cat" 2>&1 || fail "trace cat: $(cat "$T/one.cat")"
grep -q 'JOB_SUBMIT .*names=\[.*,"one"\]' "$T/one.cat" ||
    fail "the JOB_SUBMIT of a run --mode one does not record it: $(grep JOB_SUBMIT "$T/one.cat")"
jd_sim onejson --from "$T/one.avro" --json
expect_code 0 "$SIM_RC" "sim --from a run --mode one (stderr: $(cat "$T/onejson.err"))"
"$PY" - "$T/onejson.out" "$T/from.out" <<'EOF_PY' || \
    fail "sim --from a run --mode one: $(cat "$T/onejson.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["recorded"]["mode"] == "one" and d["recorded"]["mode_recorded"] is True, d["recorded"]
assert d["reproduced"]["mode"] == "one", d["reproduced"]["mode"]
assert d["reproduced"]["tasks_done"] == 24, d["reproduced"]
assert "alternative" not in d, "an alternative with no flag given"
hashed = json.load(open(sys.argv[2]))
assert hashed["recorded"]["mode"] == "hashed" and hashed["recorded"]["mode_recorded"] is True, \
    hashed["recorded"]
EOF_PY
jd_sim onetext --from "$T/one.avro" --trace "$T/one-sim.avro"
expect_code 0 "$SIM_RC" "sim --from a run --mode one (text)"
grep -q "mode: recorded one" "$T/onetext.out" || fail "no recorded mode said: $(cat "$T/onetext.out")"
! grep -q "does not record" "$T/onetext.err" || fail "a recorded mode called missing: $(cat "$T/onetext.err")"
"$JACKDAW" trace cat "$T/one-sim.avro" >"$T/one-sim.cat" 2>&1 || fail "trace cat of the reproduction"
submits=$(awk '$4 == "TASK_SUBMIT" { n++ } END { print n + 0 }' "$T/one-sim.cat")
elsewhere=$(awk '$4 == "TASK_SUBMIT" && $2 != 0 { n++ } END { print n + 0 }' "$T/one-sim.cat")
[ "$submits" -eq 24 ] && [ "$elsewhere" -eq 0 ] ||
    fail "the reproduction of a run --mode one submitted $elsewhere of $submits tasks off node 0"
grep -q 'JOB_SUBMIT .*names=\[.*,"one"\]' "$T/one-sim.cat" ||
    fail "the reproduction's JOB_SUBMIT does not record mode one: $(grep JOB_SUBMIT "$T/one-sim.cat")"
jd_run data "$T/bot.jsonl" --nodes 2 --slots 2 --mode data --trace "$T/data.avro"
[ "$RUN_RC" -eq 0 ] || fail "jackdaw run --mode data exited $RUN_RC"
jd_sim data --from "$T/data.avro"
expect_code 2 "$SIM_RC" "sim --from a run --mode data"
grep -q "mode data" "$T/data.err" || fail "a data-mode run, refused without naming it: $(cat "$T/data.err")"
[ ! -s "$T/data.out" ] || fail "a data-mode run was simulated: $(cat "$T/data.out")"
note "recorded mode: one replayed as one, hashed as hashed, data refused"
echo "t_104: sim --from reproduces the recorded run within $(awk -v b=$BOUND \
    'BEGIN { print b * 100 }') %, replays it under another placement and sweeps it, with"\
    "the recorded submission mode"
