#!/bin/bash
# run-all.sh — runs every benchmark in tools/bench (noop, replicas, command, efficiency,
# memory, soak, trace, console, bound, report, allpairs, imagestack, dags, a2ws, parsec,
# failure, netns, wfcommons, sim, sim_gain; allpairs, imagestack and dags take about 4
# minutes together, a2ws and parsec about 5 and 2, sim about 3, sim_gain half a minute),
# each bounded by `timeout`, and prints their figures next to their targets.
# `make bench` calls it with the build directory.  A missed target is printed, not
# judged; the exit status is 1 only when a benchmark could not run to its end (crash,
# timeout, no summary), 2 on a usage error.
#
#   tools/bench/run-all.sh [BUILD_DIR] [NAME...]
#
# NAME filters benchmarks by substring (e.g. `noop memory`).  BENCH_TIMEOUT (seconds,
# default 600) bounds each one; the benchmarks' own knobs (TASKS, RUNS, ...) pass through
# the environment, see tools/bench/README.md.
set -u

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_DIR="${1:-build}"
[ $# -gt 0 ] && shift
case "$BUILD_DIR" in
/*) ;;
*) BUILD_DIR="$(pwd)/$BUILD_DIR" ;;
esac
BENCH_TIMEOUT="${BENCH_TIMEOUT:-600}"

if [ ! -x "$BUILD_DIR/jackdaw" ]; then
    echo "run-all.sh: no jackdaw binary in '$BUILD_DIR' (run make first)" >&2
    exit 2
fi

benches=()
for b in noop replicas command efficiency memory soak trace console bound report allpairs imagestack dags a2ws parsec failure netns wfcommons sim sim_gain; do
    if [ $# -gt 0 ]; then
        keep=0
        for want in "$@"; do
            case "$b" in *"$want"*) keep=1 ;; esac
        done
        [ $keep -eq 1 ] || continue
    fi
    benches+=("$b")
done
if [ ${#benches[@]} -eq 0 ]; then
    echo "run-all.sh: no benchmark matched: $*" >&2
    exit 2
fi

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

rev=$(git -C "$HERE" describe --always --dirty 2>/dev/null || echo unknown)
echo "jackdaw benchmarks: $BUILD_DIR/jackdaw (source $rev)"
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -sr)"
echo

broken=()
for b in "${benches[@]}"; do
    start=$(now)
    # timeout signals the script's process group; the script's EXIT trap stops its
    # clusters, and -k ends it if the trap itself hangs.
    timeout -k 30 "$BENCH_TIMEOUT" bash "$HERE/$b.sh" "$BUILD_DIR" </dev/null
    rc=$?
    dur=$(elapsed "$start" "$(now)")
    case $rc in
    0) echo "   ($b.sh: ${dur} s)" ;;
    124 | 137) echo "   ($b.sh: timed out after ${BENCH_TIMEOUT} s)"; broken+=("$b") ;;
    *) echo "   ($b.sh: exited $rc after ${dur} s)"; broken+=("$b") ;;
    esac
    echo
done

if [ ${#broken[@]} -gt 0 ]; then
    echo "benchmarks that did not run to their end: ${broken[*]}"
    exit 1
fi
exit 0
