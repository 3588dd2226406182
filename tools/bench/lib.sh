# shellcheck shell=bash
# lib.sh — shared helpers for the jackdaw benchmark scripts.  Sourced by every
# tools/bench/*.sh; not run on its own.  The scripts print figures next to their targets
# and judge nothing: a missed target is a figure, not a failure.
#
# What a script gets by sourcing this file (with the build directory as its first
# argument, default ./build):
#   - $JACKDAW, $SPAWN_CEILING (build/bench/spawn_ceiling), $PY (/usr/bin/python3);
#   - $B, a private directory (mktemp -d) removed on exit.  TMPDIR points into it, so the
#     private clusters of `jackdaw run` live there too and every daemon a script starts
#     carries $B in its command line;
#   - launch_cluster N S FILE / stop_cluster FILE: a launched cluster whose daemon PIDs
#     are read from the cluster file; the EXIT trap stops it with `jackdaw stop` and then
#     kills exactly those PIDs (and any process whose command line names $B, by PID),
#     never anything by name;
#   - bounded SECONDS CMD...: CMD under `timeout`, waited for so that an interruption
#     cleans up at once;
#   - extra_dir PARENT: another private directory (e.g. on a tmpfs), treated like $B;
#   - json_get FILE EXPR, median, now, elapsed, fmt_rate, pct, section, say.
#
# Everything is bounded: client commands run under `timeout`, `jackdaw run` also gets
# --timeout, and run-all.sh wraps each script in `timeout`.

set -u

BENCH_NAME="$(basename "$0" .sh)"
BUILD_DIR="${1:-build}"
case "$BUILD_DIR" in
/*) ;;
*) BUILD_DIR="$(pwd)/$BUILD_DIR" ;;
esac
JACKDAW="$BUILD_DIR/jackdaw"
# shellcheck disable=SC2034 # used by the scripts that source this file
SPAWN_CEILING="$BUILD_DIR/bench/spawn_ceiling"
PY=/usr/bin/python3

if [ ! -x "$JACKDAW" ]; then
    echo "$BENCH_NAME: no jackdaw binary at '$JACKDAW' (run make, or pass BUILD_DIR)" >&2
    exit 2
fi
if [ ! -x "$PY" ]; then
    echo "$BENCH_NAME: /usr/bin/python3 is needed to read the JSON summaries" >&2
    exit 2
fi

B="$(mktemp -d "${TMPDIR:-/tmp}/jackdaw-bench-${BENCH_NAME}.XXXXXX")" || {
    echo "$BENCH_NAME: mktemp -d failed" >&2
    exit 2
}
export TMPDIR="$B"
# `jackdaw run` writes its trace to the current directory unless told: keep them here.
export JACKDAW_TRACE_DIR="$B"
# Never touch the user's default cluster.
export JACKDAW_CLUSTER="$B/default-cluster/cluster.json"

# The clean-up may run inside a function whose output is redirected to a file under $B
# (a trap fires while `bounded` waits): it writes to the script's own stdout and stderr,
# kept here.  Commands started through bounded and launch_cluster do not inherit them.
exec 8>&1 9>&2

CLUSTER_PIDS=()   # daemons of clusters launched by launch_cluster
CLUSTER_FILES=()  # their cluster files
EXTRA_DIRS=()     # private directories elsewhere (extra_dir), removed and searched like $B
BG_PIDS=()        # commands started by `bounded`, children of this shell

# bounded SECONDS CMD... : runs CMD under `timeout` in the background and waits for it,
# returning its status.  A script waiting in `wait` runs its TERM/INT trap at once,
# while one running CMD in the foreground would run it only after CMD ended, that is
# perhaps only after SECONDS, past the time limit of run-all.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/procs.sh"

bounded() {
    local limit=$1 pid
    shift
    timeout -k 10 "$limit" "$@" 8>&- 9>&- &
    pid=$!
    BG_PIDS+=("$pid")
    wait "$pid"
}

# extra_dir PARENT : sets EXTRA_DIR to a new private directory under PARENT (e.g. a
# tmpfs), removed on exit; daemons whose command line names it count as ours, like
# those under $B.  Fails, with EXTRA_DIR empty, when PARENT is not writable.
extra_dir() {
    EXTRA_DIR="$(mktemp -d "$1/jackdaw-bench-${BENCH_NAME}.XXXXXX" 2>/dev/null)" || {
        EXTRA_DIR=""
        return 1
    }
    EXTRA_DIRS+=("$EXTRA_DIR")
}

# children_cpu : user + system CPU seconds of this shell's waited-for children so far
# (the daemons of `jackdaw run` are its children, so they count once it has reaped them).
children_cpu() {
    times >"$B/times.out" # in this shell: a subshell has no children of its own yet
    awk 'NR == 2 { s = 0
        for (i = 1; i <= 2; i++) { split($i, p, "m"); sub(/s$/, "", p[2]); s += 60 * p[1] + p[2] }
        printf "%.2f", s }' "$B/times.out"
}

say() { echo "$*"; }
section() { echo "== $*"; }

# now : wall-clock seconds with nanoseconds.  elapsed A B : B - A, 2 decimals.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# median X... : the median of the numbers given (mean of the middle two when even).
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
        END { if (NR == 0) { print "n/a"; exit }
              if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# fmt_rate X : a rate rounded to an integer, with thousands separators (no locale).
fmt_rate() {
    awk -v x="$1" 'BEGIN { s = sprintf("%.0f", x); o = "";
        while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
        print s o }'
}

# pct X : a fraction as a percentage with one decimal.
pct() { awk -v x="$1" 'BEGIN { printf "%.1f %%", 100 * x }'; }

# file_args NAME NODES : FILE_ARGS, the `jackdaw gen allpairs` flags for FILES (spread:
# file k on node k mod NODES, an equal share each; drawn: each file on a node drawn with
# SEED, `--nodes`, unequal shares as paper 000's "uniformly distributed" files).
file_args() {
    case "${FILES:-spread}" in
    spread) FILE_ARGS=() ;;
    drawn) FILE_ARGS=(--nodes "$2" --seed "${SEED:-1}") ;;
    *) echo "$1: FILES must be spread or drawn, not '$FILES'" >&2; exit 2 ;;
    esac
}

# json_get FILE EXPR : EXPR (python, over the parsed object `j`) of the JSON in FILE;
# prints nothing and fails when FILE holds no JSON object.
json_get() {
    "$PY" -c 'import json, sys
try:
    j = json.loads(open(sys.argv[1]).read())
except Exception:
    sys.exit(1)
print(eval(sys.argv[2]))' "$1" "$2"
}

# True when PID's command line names our private directory: the guard that makes sure
# a recycled PID is never signalled.
pid_is_ours() {
    local cmdline d
    [ -r "/proc/$1/cmdline" ] || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
    for d in "$B" "${EXTRA_DIRS[@]}"; do
        case "$cmdline" in *"$d"*) return 0 ;; esac
    done
    return 1
}

# PIDs of every live process whose command line names $B (or an extra_dir), one per line.
pids_in_bench_dir() { pids_matching "$B" "${EXTRA_DIRS[@]}"; }

# launch_cluster N S FILE [launch options...] : starts N daemons with S slots; their PIDs
# join CLUSTER_PIDS so the EXIT trap stops them whatever happens.
launch_cluster() {
    local nodes=$1 slots=$2 file=$3 rc pid
    shift 3
    timeout -k 5 60 "$JACKDAW" launch --nodes "$nodes" --slots "$slots" --cluster "$file" \
        --log-level warn "$@" >"$B/launch.out" 2>&1 8>&- 9>&-
    rc=$?
    CLUSTER_FILES+=("$file")
    if [ -f "$file" ]; then
        for pid in $(cluster_pids "$file"); do CLUSTER_PIDS+=("$pid"); done
    fi
    if [ $rc -ne 0 ]; then
        cat "$B/launch.out" >&2
        echo "$BENCH_NAME: jackdaw launch --nodes $nodes --slots $slots exited $rc" >&2
        return 1
    fi
    return 0
}

# stop_cluster FILE : `jackdaw stop` (which signals the PIDs in FILE), then a bounded
# wait; daemons still there after 10 s are killed by PID and reported.
stop_cluster() {
    local file=$1 pid i left pids=()
    [ -f "$file" ] || return 0
    for pid in $(cluster_pids "$file"); do pids+=("$pid"); done
    timeout -k 5 30 "$JACKDAW" stop --cluster "$file" >"$B/stop.out" 2>&1 ||
        { echo "$BENCH_NAME: jackdaw stop exited $?:" >&2; cat "$B/stop.out" >&2; }
    for ((i = 0; i < 100; i++)); do
        left=0
        for pid in "${pids[@]}"; do pid_alive "$pid" && left=1; done
        [ $left -eq 0 ] && return 0
        sleep 0.1
    done
    echo "$BENCH_NAME: daemons still running 10 s after 'jackdaw stop'; killing them" >&2
    kill_pids "${pids[@]}"
}

cleanup() {
    local rc=$? f strays pid
    trap - EXIT INT TERM
    set +e
    exec 1>&8 2>&9
    # Commands still running (the script was interrupted): TERM to our own children,
    # which are `timeout` processes that pass it on; a `jackdaw run` killed that way
    # leaves its daemons, which the search below finds.
    for pid in "${BG_PIDS[@]}"; do
        pid_alive "$pid" && [ "$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null)" = "$$" ] &&
            kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${BG_PIDS[@]}"; do
        wait "$pid" 2>/dev/null
    done
    for f in "${CLUSTER_FILES[@]}"; do
        [ -f "$f" ] && timeout -k 2 20 "$JACKDAW" stop --cluster "$f" >/dev/null 2>&1
    done
    [ ${#CLUSTER_PIDS[@]} -gt 0 ] && kill_pids "${CLUSTER_PIDS[@]}"
    # A `jackdaw run` cut short by its timeout leaves its daemons running: they name $B
    # in their command line, so they are found and killed by PID, and reported.
    strays=$(pids_in_bench_dir | tr '\n' ' ')
    if [ -n "${strays// /}" ]; then
        echo "$BENCH_NAME: daemons left running under $B (killed): $strays" >&2
        # shellcheck disable=SC2086
        kill_pids $strays
    fi
    if [ -n "${KEEP_TMP:-}" ]; then
        echo "$BENCH_NAME: kept $B ${EXTRA_DIRS[*]}" >&2
    else
        rm -rf "$B" "${EXTRA_DIRS[@]}"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
