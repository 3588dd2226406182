#!/bin/bash
# noop.sh — scheduler throughput with nothing to run: 200,000 noop tasks (a bag, no
# dependencies) on 4 local daemons, hashed submission.  Prints tasks/s from the first
# submit to the last completion (throughput_tps of `jackdaw run --json`, i.e.
# tasks / makespan_s) for each run and the median, next to the target, and the wall time
# of each whole `jackdaw run` command (parse, launch, submit, follow, stop).
#
#   tools/bench/noop.sh [BUILD_DIR]
#
# Environment: TASKS (200000), NODES (4), SLOTS (8), RUNS (3), RUN_TIMEOUT (120 s per run).
. "$(dirname "$0")/lib.sh"

TASKS="${TASKS:-200000}"
NODES="${NODES:-4}"
SLOTS="${SLOTS:-8}"
RUNS="${RUNS:-3}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
TARGET_TPS=100000

section "noop: $TASKS noop tasks, $NODES daemons x $SLOTS slots, hashed submission, $RUNS runs"
wl="$B/noop.jsonl"
"$JACKDAW" gen bot --tasks "$TASKS" --kind noop -o "$wl" || { echo "noop: jackdaw gen failed" >&2; exit 1; }

rates=()
walls=()
for ((r = 1; r <= RUNS; r++)); do
    out="$B/run$r.json"
    t0=$(now)
    bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --nodes "$NODES" --slots "$SLOTS" \
        --mode hashed --json --quiet --timeout "$RUN_TIMEOUT" >"$out" 2>"$B/run$r.err"
    rc=$?
    wall=$(elapsed "$t0" "$(now)")
    tps=$(json_get "$out" 'j["throughput_tps"]')
    if [ -z "$tps" ]; then
        say "  run $r: no summary (jackdaw run exited $rc after $wall s):"
        sed 's/^/    | /' "$B/run$r.err" | head -20
        continue
    fi
    done_=$(json_get "$out" 'j["tasks_done"]')
    mk=$(json_get "$out" '"%.3f" % j["makespan_s"]')
    note=""
    [ "$rc" -ne 0 ] && note="  (jackdaw run exited $rc)"
    [ "$done_" != "$TASKS" ] && note="$note  (only $done_ of $TASKS tasks done)"
    say "  run $r: $(fmt_rate "$tps") tasks/s  (makespan $mk s; jackdaw run wall time $wall s)$note"
    rates+=("$tps")
    walls+=("$wall")
done

if [ ${#rates[@]} -gt 0 ]; then
    say "  median: $(fmt_rate "$(median "${rates[@]}")") tasks/s   target >= $(fmt_rate $TARGET_TPS) tasks/s" \
        "  (median wall time of jackdaw run: $(median "${walls[@]}") s)"
else
    say "  median: n/a (no run finished)   target >= $(fmt_rate $TARGET_TPS) tasks/s"
    exit 1
fi
