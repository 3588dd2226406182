#!/bin/bash
# report.sh — how long `jackdaw report` takes on a 10^6-task trace.  The trace is made by
# BUILD_DIR/bench/report_trace (tools/bench/report_trace.c): a complete synthetic run
# written with the nodes' block encoder (a real `jackdaw run` of 10^6 noop tasks drops
# events when the nodes' trace rings fill).  Prints the trace's size and events, then
# the wall time of `jackdaw report TRACE` (Markdown to /dev/null: reading, the time
# sweep, rendering) RUNS times and the median next to the target, and, for reference,
# one HTML report with its charts and the `trace stats` time (reading alone).
#
#   tools/bench/report.sh [BUILD_DIR]
#
# Environment: TASKS (1000000), NODES (8), SLOTS (8), RUNS (3), REPORT_TIMEOUT (120 s).
. "$(dirname "$0")/lib.sh"

TASKS="${TASKS:-1000000}"
NODES="${NODES:-8}"
SLOTS="${SLOTS:-8}"
RUNS="${RUNS:-3}"
REPORT_TIMEOUT="${REPORT_TIMEOUT:-120}"
TARGET_S=10
MAKER="$BUILD_DIR/bench/report_trace"

section "report: jackdaw report on a $TASKS-task trace ($NODES nodes x $SLOTS slots), $RUNS runs"
if [ ! -x "$MAKER" ]; then
    echo "report: no $MAKER (run make)" >&2
    exit 1
fi
trace="$B/big.avro"
bounded 300 "$MAKER" "$trace" --tasks "$TASKS" --nodes "$NODES" --slots "$SLOTS" >"$B/make.out" 2>&1 ||
    { cat "$B/make.out" >&2; echo "report: report_trace failed" >&2; exit 1; }
events=$(sed -n 's/.* \([0-9]*\) events$/\1/p' "$B/make.out")
say "  trace: $(fmt_rate "$events") events, $(awk -v b="$(stat -c %s "$trace")" 'BEGIN { printf "%.1f MB", b / 1e6 }')"

times=()
for ((r = 1; r <= RUNS; r++)); do
    t0=$(now)
    bounded "$REPORT_TIMEOUT" "$JACKDAW" report "$trace" -o /dev/null --format md 2>"$B/report$r.err"
    rc=$?
    wall=$(elapsed "$t0" "$(now)")
    if [ $rc -ne 0 ]; then
        say "  run $r: jackdaw report exited $rc after $wall s:"
        sed 's/^/    | /' "$B/report$r.err" | head -10
        continue
    fi
    say "  run $r: $wall s"
    times+=("$wall")
done
if [ ${#times[@]} -eq 0 ]; then
    say "  median: n/a (no report finished)   target <= $TARGET_S s"
    exit 1
fi
say "  median: $(median "${times[@]}") s   target <= $TARGET_S s"

t0=$(now)
bounded "$REPORT_TIMEOUT" "$JACKDAW" trace stats "$trace" >/dev/null 2>&1
say "  for reference: trace stats (reading alone) $(elapsed "$t0" "$(now)") s"
t0=$(now)
if bounded "$REPORT_TIMEOUT" "$JACKDAW" report "$trace" -o "$B/big.html" 2>"$B/html.err"; then
    say "  for reference: the HTML report with its charts $(elapsed "$t0" "$(now)") s" \
        "($(awk -v b="$(stat -c %s "$B/big.html")" 'BEGIN { printf "%.0f kB", b / 1e3 }'))"
else
    say "  for reference: the HTML report failed:"
    sed 's/^/    | /' "$B/html.err" | head -5
fi
