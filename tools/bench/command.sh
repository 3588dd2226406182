#!/bin/bash
# command.sh — throughput of real processes: 20,000 `true` command tasks on 4 local
# daemons x 8 slots (32 in flight), hashed submission, against this machine's ceiling:
# bare posix_spawn of /bin/true with 32 children in flight, measured by
# build/bench/spawn_ceiling in the same run, once before and once after the cluster run
# (the machine may be shared; the ratio uses the mean of the two).  With EXEC_MODULE=1
# (the default) spawn_ceiling --exec-module also prints the rate of core/runtime/exec
# alone, which tells executor cost from scheduler cost.  With TMPFS=1 (the default, when
# /dev/shm is writable) the measured run keeps the cluster's files (task directories and
# output files) on tmpfs, where `jackdaw run` puts them by default, and a second run with
# them on disk is printed as a diagnostic of what the per-task filesystem work costs
# there.  TMPFS=0 measures on disk only.
#
#   tools/bench/command.sh [BUILD_DIR]
#
# Environment: TASKS (20000), NODES (4), SLOTS (8), SPAWNS (20000), EXEC_MODULE (1),
# TMPFS (1), RUN_TIMEOUT (300 s).
. "$(dirname "$0")/lib.sh"

TASKS="${TASKS:-20000}"
NODES="${NODES:-4}"
SLOTS="${SLOTS:-8}"
SPAWNS="${SPAWNS:-20000}"
EXEC_MODULE="${EXEC_MODULE:-1}"
TMPFS="${TMPFS:-1}"
RUN_TIMEOUT="${RUN_TIMEOUT:-300}"
IN_FLIGHT=$((NODES * SLOTS))
TARGET=0.70

section "command: $TASKS 'true' command tasks, $NODES daemons x $SLOTS slots, hashed;" \
    "ceiling: posix_spawn /bin/true, $IN_FLIGHT in flight"

# ceiling LABEL [--exec-module] : runs spawn_ceiling, prints its lines, sets CEILING (and
# MODULE_RATE with --exec-module); empty when it could not be measured.
ceiling() {
    local label=$1 out="$B/ceiling-$1.out"
    shift
    CEILING=""
    MODULE_RATE=""
    if [ ! -x "$SPAWN_CEILING" ]; then
        say "  ceiling ($label): n/a, no $SPAWN_CEILING (make builds it from tools/bench/spawn_ceiling.c)"
        return
    fi
    bounded 300 "$SPAWN_CEILING" -n "$SPAWNS" -k "$IN_FLIGHT" "$@" >"$out" 2>&1
    local rc=$?
    sed 's/^/    | /' "$out"
    [ $rc -eq 0 ] || say "  ceiling ($label): spawn_ceiling exited $rc"
    CEILING=$(sed -n 's/^posix_spawn .*, \([0-9.]*\) spawns\/s$/\1/p' "$out")
    MODULE_RATE=$(sed -n 's/^exec module .*, \([0-9.]*\) tasks\/s,.*/\1/p' "$out")
    [ -n "$CEILING" ] && say "  ceiling ($label): $(fmt_rate "$CEILING") spawns/s"
}

wl="$B/command.jsonl"
"$JACKDAW" gen bot --tasks "$TASKS" --kind command --cmd true -o "$wl" ||
    { echo "command: jackdaw gen failed" >&2; exit 1; }

ceiling before
before=$CEILING

# cluster_run TAG DIR LABEL : `jackdaw run` with its private cluster (task directories,
# output files, logs) under DIR; prints the figures and sets TPS (empty on failure).
cluster_run() {
    local tag=$1 dir=$2 label=$3 out="$B/run-$1.json" rc t0 wall done_ failed mk
    TPS=""
    t0=$(now)
    TMPDIR="$dir" bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --nodes "$NODES" \
        --slots "$SLOTS" --mode hashed --json --quiet --timeout "$RUN_TIMEOUT" \
        >"$out" 2>"$B/run-$tag.err"
    rc=$?
    wall=$(elapsed "$t0" "$(now)")
    TPS=$(json_get "$out" 'j["throughput_tps"]')
    if [ -z "$TPS" ]; then
        say "  jackdaw ($label): no summary (jackdaw run exited $rc after $wall s):"
        sed 's/^/    | /' "$B/run-$tag.err" | head -20
        return
    fi
    done_=$(json_get "$out" 'j["tasks_done"]')
    failed=$(json_get "$out" 'j["tasks_failed"]')
    mk=$(json_get "$out" '"%.2f" % j["makespan_s"]')
    say "  jackdaw ($label): $(fmt_rate "$TPS") tasks/s  (makespan $mk s, $done_ done," \
        "$failed failed; jackdaw run wall time $wall s, which includes removing the task" \
        "directories)"
}

# The figure is `jackdaw run` as users run it: its private cluster's files go to
# /dev/shm by default (see cmd_run.c).  The same run with the files on disk is printed
# as a diagnostic: two inode creations per task on a journalled disk cost a third of
# the rate here, and vary with writeback.
disk_tps=""
if [ "$TMPFS" = 1 ] && extra_dir /dev/shm; then
    cluster_run tmpfs "$EXTRA_DIR" "files on tmpfs /dev/shm, the default of jackdaw run"
    tps=$TPS
    cluster_run disk "$B" "files on disk in $(dirname "$B"), diagnostic"
    disk_tps=$TPS
else
    cluster_run disk "$B" "files in $(dirname "$B")"
    tps=$TPS
fi

if [ "$EXEC_MODULE" = 1 ]; then
    ceiling after --exec-module
else
    ceiling after
fi
after=$CEILING

if [ -n "$before" ] && [ -n "$after" ]; then
    ref=$(awk -v a="$before" -v b="$after" 'BEGIN { print (a + b) / 2 }')
else
    ref="${before:-$after}"
fi
if [ -n "$tps" ] && [ -n "$ref" ]; then
    ratio=$(awk -v a="$tps" -v b="$ref" 'BEGIN { print a / b }')
    say "  ratio: $(pct "$ratio") of the ceiling ($(fmt_rate "$tps") / $(fmt_rate "$ref") spawns/s," \
        "mean of before and after)   target >= $(pct $TARGET)"
else
    say "  ratio: n/a   target >= $(pct $TARGET)"
fi
if [ -n "$disk_tps" ] && [ -n "$ref" ]; then
    say "  diagnostic: with the cluster's files on disk $(fmt_rate "$disk_tps") tasks/s," \
        "$(pct "$(awk -v a="$disk_tps" -v b="$ref" 'BEGIN { print a / b }')") of the ceiling" \
        "(no target; the gap is the disk's cost of each task's directory and output file)"
fi
if [ -n "$MODULE_RATE" ] && [ -n "$ref" ]; then
    say "  exec module alone: $(fmt_rate "$MODULE_RATE") tasks/s," \
        "$(pct "$(awk -v a="$MODULE_RATE" -v b="$ref" 'BEGIN { print a / b }')") of the ceiling (no target)"
fi
[ -n "$tps" ]
