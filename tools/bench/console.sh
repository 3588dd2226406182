#!/bin/bash
# console.sh — what the console costs while an operator watches: a 64-node cluster (one
# slot each, 1 MiB trace rings) runs a long sleep workload while `jackdaw console`,
# attached in a detached tmux pane (a real terminal, 120x40, private socket), refreshes
# for WATCH_S seconds; its CPU time (utime + stime from /proc/PID/stat) before and after
# gives the share of one core it used.
#
#   tools/bench/console.sh [BUILD_DIR]
#
# Environment: NODES (64), WATCH_S (10), REFRESH_MS (250, the console's default),
# TASK_S (sleep per task, 2), RUNS (3 measurements, median printed).
. "$(dirname "$0")/lib.sh"

NODES="${NODES:-64}"
WATCH_S="${WATCH_S:-10}"
REFRESH_MS="${REFRESH_MS:-250}"
TASK_S="${TASK_S:-2}"
RUNS="${RUNS:-3}"

if ! command -v tmux >/dev/null; then
    echo "console: tmux is needed (Debian package tmux)" >&2
    exit 2
fi
unset LINES COLUMNS
TM() { tmux -S "$B/tmux.sock" "$@"; }
# The tmux server names $B: stop it before lib.sh's clean-up counts it as a leftover.
trap 'rc=$?; tmux -S "$B/tmux.sock" kill-server >/dev/null 2>&1; (exit $rc); cleanup' EXIT

cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null; }
pane_has() { TM capture-pane -t watch -p 2>/dev/null | grep -qE -- "$1"; }

section "console CPU: watching $NODES nodes x 1 slot, refresh every $REFRESH_MS ms, $WATCH_S s x $RUNS"
cluster="$B/cluster/cluster.json"
launch_cluster "$NODES" 1 "$cluster" --trace-buffer 1MiB || exit 1
# Long enough that every measurement watches a busy cluster.
tasks=$((NODES * (RUNS * WATCH_S + 20) / TASK_S + NODES))
"$JACKDAW" gen bot --tasks "$tasks" --kind sleep --duration-s "$TASK_S" -o "$B/sleep.jsonl" ||
    { echo "console: gen failed" >&2; exit 1; }
bounded 600 "$JACKDAW" submit "$B/sleep.jsonl" --cluster "$cluster" >"$B/submit.out" 2>&1 ||
    { cat "$B/submit.out" >&2; exit 1; }
TM new-session -d -s watch -x 120 -y 40 \
    "exec $JACKDAW console --cluster $cluster --refresh-ms $REFRESH_MS" ||
    { echo "console: tmux new-session failed" >&2; exit 1; }
pid=$(TM display-message -p -t watch '#{pane_pid}')
for ((i = 0; i < 100; i++)); do
    pane_has 'collector up' && pane_has "Nodes $NODES/$NODES up" && break
    sleep 0.1
done
if ! pane_has "Nodes $NODES/$NODES up"; then
    echo "console: the console did not show $NODES nodes up:" >&2
    TM capture-pane -t watch -p >&2
    exit 1
fi
hz=$(getconf CLK_TCK)
pcts=()
for ((r = 1; r <= RUNS; r++)); do
    t0=$(now)
    c0=$(cpu_ticks "$pid")
    sleep "$WATCH_S"
    c1=$(cpu_ticks "$pid")
    t1=$(now)
    if [ -z "$c0" ] || [ -z "$c1" ]; then
        echo "console: the console (pid $pid) went away" >&2
        exit 1
    fi
    pct=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v a="$t0" -v b="$t1" \
        'BEGIN { printf "%.2f", 100 * c / hz / (b - a) }')
    pcts+=("$pct")
    busy=$(TM capture-pane -t watch -p | sed -n 's/^Tasks .*\] \([0-9]*\)\/\([0-9]*\).*run \([0-9]*\).*/\1 of \2 done, \3 running/p')
    say "  run $r: $((c1 - c0)) ticks in $(elapsed "$t0" "$t1") s = $pct % of one core  ($busy)"
done
say "  median $(median "${pcts[@]}") % of one core while watching $NODES nodes   target < 5 %"
TM kill-server
