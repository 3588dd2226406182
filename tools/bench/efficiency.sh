#!/bin/bash
# efficiency.sh — how close the scheduler gets to the ideal makespan on short tasks: a
# bag of 10 ms sleep tasks, 100 per slot, on 8 local daemons x 8 slots (6,400 tasks).
# Efficiency = ideal time / makespan (the `efficiency` of `jackdaw run --json`; ideal =
# total sleep / total slots = 1.0 s here).  Hashed submission spreads the tasks evenly;
# --mode one puts every task on node 0 and the others must steal their share.  Each mode
# is run RUNS times; each run and the median are printed next to the target.
#
#   tools/bench/efficiency.sh [BUILD_DIR]
#
# Environment: NODES (8), SLOTS (8), PER_SLOT (100), DURATION (0.01 s), RUNS (3),
# RUN_TIMEOUT (120 s per run).
. "$(dirname "$0")/lib.sh"

NODES="${NODES:-8}"
SLOTS="${SLOTS:-8}"
PER_SLOT="${PER_SLOT:-100}"
DURATION="${DURATION:-0.01}"
RUNS="${RUNS:-3}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
TASKS=$((NODES * SLOTS * PER_SLOT))

wl="$B/sleep.jsonl"
"$JACKDAW" gen bot --tasks "$TASKS" --kind sleep --duration "$DURATION" -o "$wl" ||
    { echo "efficiency: jackdaw gen failed" >&2; exit 1; }

# measured_sleeps RECORDS SUMMARY : the mean measured length of the sleeps (end - start
# in the records) and the efficiency computed from measured lengths instead of asked
# ones, a check that the sleep emulation does not flatter the figure.
measured_sleeps() {
    "$PY" - "$1" "$2" <<'EOF_PY'
import json, sys
s = json.load(open(sys.argv[2]))
n = total = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("status") == "done":
        n += 1
        total += (r["end_ns"] - r["start_ns"]) / 1e9
if n == 0 or s["makespan_s"] <= 0:
    print("no records")
else:
    print("measured sleep mean %.2f ms, efficiency from measured sleeps %.1f %%"
          % (1000 * total / n, 100 * total / (s["total_slots"] * s["makespan_s"])))
EOF_PY
}

# measure MODE TARGET
measure() {
    local mode=$1 target=$2 r out rc wall eff effs=() line
    section "efficiency, --mode $mode: $TASKS sleep tasks of $DURATION s, $NODES daemons x $SLOTS slots," \
        "$RUNS runs"
    for ((r = 1; r <= RUNS; r++)); do
        out="$B/$mode-$r.json"
        t0=$(now)
        bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --nodes "$NODES" --slots "$SLOTS" \
            --mode "$mode" --json --quiet --timeout "$RUN_TIMEOUT" --records "$B/$mode-$r.records" \
            >"$out" 2>"$B/$mode-$r.err"
        rc=$?
        wall=$(elapsed "$t0" "$(now)")
        eff=$(json_get "$out" 'j["efficiency"]')
        if [ -z "$eff" ]; then
            say "  run $r: no summary (jackdaw run exited $rc after $wall s):"
            sed 's/^/    | /' "$B/$mode-$r.err" | head -20
            continue
        fi
        line=$(json_get "$out" '"makespan %.3f s, ideal %.3f s, %d done; tasks per node %s; tasks stolen %d" % (j["makespan_s"], j["ideal_s"], j["tasks_done"], [n["tasks_run"] for n in j["nodes"]], sum(n["tasks_stolen"] for n in j["nodes"]))')
        line="$line; $(measured_sleeps "$B/$mode-$r.records" "$out")"
        [ "$rc" -ne 0 ] && line="$line; jackdaw run exited $rc"
        say "  run $r: efficiency $(pct "$eff")  ($line)"
        effs+=("$eff")
    done
    if [ ${#effs[@]} -gt 0 ]; then
        say "  median: $(pct "$(median "${effs[@]}")")   target >= $(pct "$target")"
    else
        say "  median: n/a (no run finished)   target >= $(pct "$target")"
        return 1
    fi
}

status=0
measure hashed 0.95 || status=1
measure one 0.90 || status=1
exit $status
