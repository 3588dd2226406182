#!/bin/bash
# failure.sh — what losing a node costs (issue 15): a bag of 10 ms sleeps (5,000 tasks)
# on 8 daemons x 2 slots with --replicas 2 and the default failure timeout, RUNS times
# without a failure and RUNS times with one daemon killed (SIGKILL) once half the tasks
# ended (read from the records as the client writes them).  Prints:
#   (a) the extra makespan of the killed runs, as a % of the failure-free one (medians);
#   (b) the time from the kill to the cluster handing the dead node's tasks on to live
#       nodes: the first and the last "its holder died; attempt 1 goes to node" line of
#       the daemons' logs (their wall-clock times, ms) minus the kill's wall-clock time.
#       The records carry no attempt number, so a resubmitted task cannot be told from
#       the others there; in a full bag the handed-on tasks queue behind the rest.
#
#   tools/bench/failure.sh [BUILD_DIR]
#
# Environment: TASKS (5000), DURATION (0.01 s), NODES (8), SLOTS (2), REPLICAS (2),
# FAILURE_TIMEOUT (ms, empty: the default, 3000), VICTIM (3), AT (0.5), RUNS (3),
# RUN_TIMEOUT (120 s per run).
. "$(dirname "$0")/lib.sh"

TASKS="${TASKS:-5000}"
DURATION="${DURATION:-0.01}"
NODES="${NODES:-8}"
SLOTS="${SLOTS:-2}"
REPLICAS="${REPLICAS:-2}"
FAILURE_TIMEOUT="${FAILURE_TIMEOUT:-}"
VICTIM="${VICTIM:-3}"
AT="${AT:-0.5}"
RUNS="${RUNS:-3}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
FT_MS=${FAILURE_TIMEOUT:-3000}
launch_opts=(--replicas "$REPLICAS" --log-level info)
[ -n "$FAILURE_TIMEOUT" ] && launch_opts+=(--failure-timeout "$FAILURE_TIMEOUT")

wl="$B/bot.jsonl"
"$JACKDAW" gen bot --tasks "$TASKS" --kind sleep --duration "$DURATION" -o "$wl" ||
    { echo "failure: jackdaw gen failed" >&2; exit 1; }
ended() {
    local n
    n=$(grep -c . "$1" 2>/dev/null)
    echo "${n:-0}"
}

# handed_on_times WORKDIR : epoch ns of the first and last hand-on line of the logs
# (log times are local wall-clock HH:MM:SS.mmm of today).
handed_on_times() {
    cat "$1"/node-*.log | grep 'its holder died; attempt 1 goes to node' | "$PY" -c '
import datetime, sys, time
ts = []
for line in sys.stdin:
    h, m, s = line.split()[0].split(":")
    today = datetime.datetime.now().replace(hour=0, minute=0, second=0, microsecond=0)
    ts.append(int((today.timestamp() + int(h) * 3600 + int(m) * 60 + float(s)) * 1e9))
print("%d %d %d" % (min(ts), max(ts), len(ts)) if ts else "")'
}

# one_run LABEL KILL : one cluster, one job; KILL 1 kills VICTIM at AT of the tasks.
# Prints "MAKESPAN [DETECT_FIRST DETECT_LAST HANDED_ON]" or nothing when it failed.
one_run() {
    local label=$1 kill=$2 file="$B/$1/cluster.json" rec="$B/$1.records" out="$B/$1.json"
    launch_cluster "$NODES" "$SLOTS" "$file" "${launch_opts[@]}" || return 1
    local pids victim_pid
    mapfile -t pids < <(json_get "$file" '"\n".join(str(n["pid"]) for n in j["nodes"])')
    victim_pid=${pids[$VICTIM]}
    : >"$rec"
    timeout -k 10 $((RUN_TIMEOUT + 30)) "$JACKDAW" submit "$wl" --cluster "$file" --wait --json \
        --quiet --records "$rec" --timeout "$RUN_TIMEOUT" >"$out" 2>"$B/$label.err" 8>&- 9>&- &
    local client=$! i kill_ns=""
    BG_PIDS+=("$client")
    if [ "$kill" = 1 ]; then
        local at
        at=$(awk -v t="$TASKS" -v a="$AT" 'BEGIN { printf "%d", t * a }')
        for ((i = 0; i < 6000; i++)); do
            [ "$(ended "$rec")" -ge "$at" ] && break
            kill -0 "$client" 2>/dev/null || break
            sleep 0.01
        done
        kill_ns=$(date +%s%N)
        pid_is_ours "$victim_pid" && kill -KILL "$victim_pid"
    fi
    wait "$client"
    local rc=$? span
    span=$(json_get "$out" 'j["makespan_s"]')
    if [ $rc -ne 0 ] || [ -z "$span" ]; then
        echo "failure: $label: submit exited $rc" >&2
        sed 's/^/    | /' "$B/$label.err" | head -10 >&2
        stop_cluster "$file"
        return 1
    fi
    local extra=""
    if [ -n "$kill_ns" ]; then
        local h
        h=$(handed_on_times "$(json_get "$file" 'j["workdir"]')")
        if [ -n "$h" ]; then
            read -r first last n <<<"$h"
            extra=$(awk -v k="$kill_ns" -v f="$first" -v l="$last" -v n="$n" \
                'BEGIN { printf "%.3f %.3f %d", (f - k) / 1e9, (l - k) / 1e9, n }')
        else
            extra="n/a n/a 0"
        fi
    fi
    stop_cluster "$file"
    echo "$span${extra:+ $extra}"
}

section "failure: $TASKS sleeps of $DURATION s on $NODES daemons x $SLOTS slots, --replicas $REPLICAS," \
    "failure timeout $FT_MS ms; node $VICTIM killed at $(pct "$AT") of the tasks ended; $RUNS runs each"
free_spans=() kill_spans=() firsts=() lasts=()
for ((r = 1; r <= RUNS; r++)); do
    res=$(one_run "free-$r" 0) || continue
    say "  failure-free run $r: makespan $res s"
    free_spans+=("$res")
done
for ((r = 1; r <= RUNS; r++)); do
    res=$(one_run "kill-$r" 1) || continue
    read -r span first last n <<<"$res"
    say "  killed run $r: makespan $span s; dead node's tasks handed on $first s to $last s after the kill ($n tasks)"
    kill_spans+=("$span")
    [ "$first" != n/a ] && firsts+=("$first") && lasts+=("$last")
done
[ ${#free_spans[@]} -gt 0 ] && [ ${#kill_spans[@]} -gt 0 ] || { say "  no figure: runs failed"; exit 1; }
mf=$(median "${free_spans[@]}")
mk=$(median "${kill_spans[@]}")
say "  (a) extra makespan: $(awk -v f="$mf" -v k="$mk" 'BEGIN { printf "%.1f %%", 100 * (k - f) / f }')" \
    "(median $mk s killed vs $mf s failure-free)   target <= 15 %"
if [ ${#firsts[@]} -gt 0 ]; then
    say "  (b) kill to first hand-on: median $(median "${firsts[@]}") s (last hand-on $(median "${lasts[@]}") s)" \
        "  target <= failure timeout + 1 s = $(awk -v t="$FT_MS" 'BEGIN { printf "%.1f", t / 1000 + 1 }') s"
else
    say "  (b) no hand-on seen in the logs"
fi
