#!/bin/bash
# replicas.sh — what replicated metadata costs (issue 15): the same runs with
# `--replicas 1` and `--replicas 2`, interleaved (R = 1, R = 2, R = 1, ...), so that a
# change in the machine's load hits both alike.  Two workloads, each as a user runs it
# (`jackdaw run WORKLOAD --nodes N --replicas R --json`, default slots and policy):
#   (a) NOOP throughput: 200,000 noop tasks on 4 daemons, throughput_tps (tasks /
#       makespan), median of each side, and the cost of R = 2 in % of R = 1;
#   (b) 10 ms BOT efficiency: 4,000 sleeps of 10 ms on 4 daemons, `efficiency` of the
#       summary, median of each side, and the difference in points.
# Targets (issue 15): (a) at most 10 %; (b) nothing measurable.
#
#   tools/bench/replicas.sh [BUILD_DIR]
#
# Environment: NOOP_TASKS (200000), BOT_TASKS (4000), NODES (4), PAIRS (7 for (a), 3
# for (b)), RUN_TIMEOUT (120 s per run).
. "$(dirname "$0")/lib.sh"

NOOP_TASKS="${NOOP_TASKS:-200000}"
BOT_TASKS="${BOT_TASKS:-4000}"
NODES="${NODES:-4}"
PAIRS="${PAIRS:-7}"
BOT_PAIRS="${BOT_PAIRS:-3}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
TARGET_PCT=10

# pairs WORKLOAD FIELD N : N interleaved runs at R = 1 and R = 2; FIELD of each summary
# into the arrays one[] and two[].
pairs() {
    local wl=$1 field=$2 n=$3 r rep out v
    one=()
    two=()
    for ((rep = 1; rep <= n; rep++)); do
        for r in 1 2; do
            out="$B/run-$r-$rep.json"
            bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --nodes "$NODES" --replicas "$r" \
                --json --quiet --timeout "$RUN_TIMEOUT" >"$out" 2>"$B/run-$r-$rep.err"
            v=$(json_get "$out" "j[\"$field\"]")
            if [ -z "$v" ]; then
                say "  R = $r, run $rep: no summary:"
                sed 's/^/    | /' "$B/run-$r-$rep.err" | head -10
                continue
            fi
            if [ "$r" = 1 ]; then one+=("$v"); else two+=("$v"); fi
        done
    done
    [ ${#one[@]} -gt 0 ] && [ ${#two[@]} -gt 0 ]
}

section "replicas: R = 1 against R = 2, interleaved, $NODES daemons, default flags"

wl="$B/noop.jsonl"
"$JACKDAW" gen bot --tasks "$NOOP_TASKS" --kind noop -o "$wl" || { echo "replicas: jackdaw gen failed" >&2; exit 1; }
if pairs "$wl" throughput_tps "$PAIRS"; then
    m1=$(median "${one[@]}")
    m2=$(median "${two[@]}")
    say "  (a) NOOP, $NOOP_TASKS tasks, $PAIRS pairs: R = 1 $(fmt_rate "$m1") tasks/s, R = 2 $(fmt_rate "$m2") tasks/s (medians)"
    say "      each run, R = 1: $(for v in "${one[@]}"; do printf '%s ' "$(fmt_rate "$v")"; done)"
    say "      each run, R = 2: $(for v in "${two[@]}"; do printf '%s ' "$(fmt_rate "$v")"; done)"
    say "      cost of R = 2: $(awk -v a="$m1" -v b="$m2" 'BEGIN { printf "%.1f", 100 * (1 - b / a) }') %   target <= $TARGET_PCT %"
else
    say "  (a) NOOP: n/a (no pair finished)"
fi

wl="$B/bot.jsonl"
"$JACKDAW" gen bot --tasks "$BOT_TASKS" --kind sleep --duration-s 0.01 -o "$wl" ||
    { echo "replicas: jackdaw gen failed" >&2; exit 1; }
if pairs "$wl" efficiency "$BOT_PAIRS"; then
    m1=$(median "${one[@]}")
    m2=$(median "${two[@]}")
    say "  (b) 10 ms BOT, $BOT_TASKS tasks, $BOT_PAIRS pairs: efficiency R = 1 $(awk -v a="$m1" 'BEGIN { printf "%.3f", a }'), R = 2 $(awk -v a="$m2" 'BEGIN { printf "%.3f", a }') (medians; difference $(awk -v a="$m1" -v b="$m2" 'BEGIN { printf "%+.1f", 100 * (b - a) }') points)"
else
    say "  (b) 10 ms BOT: n/a (no pair finished)"
fi
