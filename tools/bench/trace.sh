#!/bin/bash
# trace.sh — what tracing costs and what it writes:
#   1. overhead: the noop throughput benchmark (200,000 noop tasks, 4 daemons x 8 slots)
#      with every per-task event traced (the default) and with --no-trace, runs
#      alternating so that drift in the machine's load hits both; median tasks/s of
#      each and the difference;
#   2. bytes per event on disk, from `trace stats` of the traced runs' files;
#   3. collector ingest: events/s one collector takes in from 8 nodes
#      (build/bench/collector_ingest, blocks pre-encoded).
#
#   tools/bench/trace.sh [BUILD_DIR]
#
# Environment: TASKS (200000), NODES (4), SLOTS (8), RUNS (5 of each), INGEST_EVENTS
# (1000000 per node), RUN_TIMEOUT (120 s per run).
. "$(dirname "$0")/lib.sh"

TASKS="${TASKS:-200000}"
NODES="${NODES:-4}"
SLOTS="${SLOTS:-8}"
RUNS="${RUNS:-5}"
INGEST_EVENTS="${INGEST_EVENTS:-1000000}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"

section "trace overhead: $TASKS noop tasks, $NODES daemons x $SLOTS slots, $RUNS runs each way"
wl="$B/noop.jsonl"
"$JACKDAW" gen bot --tasks "$TASKS" --kind noop -o "$wl" || { echo "trace: gen failed" >&2; exit 1; }

on=()
off=()
bpe=()
for ((r = 1; r <= RUNS; r++)); do
    for mode in on off; do
        out="$B/$mode$r.json"
        if [ "$mode" = on ]; then
            flags=(--trace "$B/run$r.avro")
        else
            flags=(--no-trace)
        fi
        bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --nodes "$NODES" --slots "$SLOTS" \
            --json --quiet --timeout "$RUN_TIMEOUT" "${flags[@]}" >"$out" 2>"$B/$mode$r.err"
        tps=$(json_get "$out" 'j["throughput_tps"]')
        if [ -z "$tps" ]; then
            say "  run $r ($mode): no summary"
            sed 's/^/    | /' "$B/$mode$r.err" | head -10
            continue
        fi
        if [ "$mode" = on ]; then
            on+=("$tps")
            "$JACKDAW" trace stats "$B/run$r.avro" --json >"$B/stats$r.json" 2>/dev/null
            b=$(json_get "$B/stats$r.json" 'j["bytes_per_event"]')
            ev=$(json_get "$B/stats$r.json" 'j["records"]')
            drop=$(json_get "$B/stats$r.json" 'j["by_kind"].get("DROPPED", 0)')
            [ -n "$b" ] && bpe+=("$b")
            say "  run $r traced:   $(fmt_rate "$tps") tasks/s  ($ev events, $b bytes/event, $drop DROPPED records)"
        else
            off+=("$tps")
            say "  run $r untraced: $(fmt_rate "$tps") tasks/s"
        fi
    done
done
if [ ${#on[@]} -gt 0 ] && [ ${#off[@]} -gt 0 ]; then
    mon=$(median "${on[@]}")
    moff=$(median "${off[@]}")
    cost=$(awk -v a="$mon" -v b="$moff" 'BEGIN { printf "%.1f", 100 * (b - a) / b }')
    say "  median traced $(fmt_rate "$mon") tasks/s, untraced $(fmt_rate "$moff") tasks/s:" \
        "tracing costs $cost % of throughput   target <= 5 %"
fi
[ ${#bpe[@]} -gt 0 ] && say "  bytes per event on disk: median $(median "${bpe[@]}")   target <= 12"

section "collector ingest: 8 nodes x $INGEST_EVENTS events"
bounded 300 "$BUILD_DIR/bench/collector_ingest" "$JACKDAW" --nodes 8 --events "$INGEST_EVENTS" |
    while read -r line; do say "  $line"; done
say "  target >= 1,000,000 events/s"
