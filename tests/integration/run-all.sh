#!/bin/bash
# run-all.sh — runs every tests/integration/t_*.sh in name order, each bounded by
# `timeout`, and prints PASS/FAIL with its duration; a failing test's output is shown.
# Exits 1 when any test failed, 2 on a usage error.
#
#   JACKDAW=/abs/path/build/jackdaw ./tests/integration/run-all.sh [NAME...]
#
# NAME filters tests by substring (e.g. `t_40` or `garbage`).  TEST_TIMEOUT (seconds,
# default 120) bounds each test; KEEP_TMP=1 keeps each test's private directory.
set -u

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TEST_TIMEOUT="${TEST_TIMEOUT:-120}"

if [ -z "${JACKDAW:-}" ]; then
    echo "run-all.sh: set JACKDAW to the jackdaw binary (e.g. JACKDAW=\$PWD/build/jackdaw)" >&2
    exit 2
fi
case "$JACKDAW" in
/*) ;;
*) JACKDAW="$(pwd)/$JACKDAW" ;;
esac
if [ ! -x "$JACKDAW" ]; then
    echo "run-all.sh: JACKDAW='$JACKDAW' is not an executable file" >&2
    exit 2
fi
if [ ! -x /usr/bin/python3 ]; then
    echo "run-all.sh: /usr/bin/python3 is needed by the tests" >&2
    exit 2
fi
export JACKDAW

tests=()
for t in "$HERE"/t_*.sh; do
    [ -e "$t" ] || continue
    name="$(basename "$t" .sh)"
    if [ $# -gt 0 ]; then
        keep=0
        for want in "$@"; do
            case "$name" in *"$want"*) keep=1 ;; esac
        done
        [ $keep -eq 1 ] || continue
    fi
    tests+=("$t")
done
if [ ${#tests[@]} -eq 0 ]; then
    echo "run-all.sh: no tests matched in $HERE" >&2
    exit 2
fi

logdir="$(mktemp -d "${TMPDIR:-/tmp}/jackdaw-it-logs.XXXXXX")" || exit 2
trap 'rm -rf "$logdir"' EXIT

# Test a snapshot of the binary: a rebuild during the suite (make in another shell)
# must not swap the binary between, or in the middle of, tests.  Daemons are started
# from the client's own /proc/self/exe, so they run the snapshot too.
tested="$JACKDAW"
if ! cp "$JACKDAW" "$logdir/jackdaw" 2>/dev/null; then
    echo "run-all.sh: cannot copy $JACKDAW" >&2
    exit 2
fi
JACKDAW="$logdir/jackdaw"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo "integration tests: $tested (timeout ${TEST_TIMEOUT}s each)"
passed=0
skipped=0
failed=()
suite_start=$(now)
for t in "${tests[@]}"; do
    name="$(basename "$t" .sh)"
    log="$logdir/$name.log"
    start=$(now)
    # timeout signals the test's whole process group; -k ends it if the EXIT trap hangs.
    timeout -k 15 "$TEST_TIMEOUT" bash "$t" </dev/null >"$log" 2>&1
    rc=$?
    dur=$(elapsed "$start" "$(now)")
    if [ $rc -eq 0 ]; then
        printf 'PASS  %-28s %6ss\n' "$name" "$dur"
        passed=$((passed + 1))
    elif [ $rc -eq 77 ]; then
        # The test says why it cannot run on this machine (lib.sh skip).
        printf 'SKIP  %-28s %6ss  (%s)\n' "$name" "$dur" "$(grep -m1 '^SKIP: ' "$log" | cut -c7-)"
        skipped=$((skipped + 1))
    else
        why="exit $rc"
        [ $rc -eq 124 ] && why="timed out after ${TEST_TIMEOUT}s"
        [ $rc -eq 137 ] && why="killed after timing out"
        printf 'FAIL  %-28s %6ss  (%s)\n' "$name" "$dur" "$why"
        echo "----- output of $name -----"
        sed 's/^/    /' "$log"
        echo "----- end of $name -----"
        failed+=("$name")
    fi
done
total=$(elapsed "$suite_start" "$(now)")
if [ ${#failed[@]} -eq 0 ]; then
    more=""
    [ $skipped -gt 0 ] && more=" ($skipped skipped)"
    echo "integration: all $passed tests passed$more in ${total}s"
    exit 0
fi
echo "integration: ${#failed[@]} of ${#tests[@]} tests FAILED in ${total}s: ${failed[*]}"
exit 1
