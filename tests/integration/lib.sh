# lib.sh — shared helpers for the jackdaw integration tests.  Sourced by every
# tests/integration/t_*.sh; not run on its own.
#
# What a test gets by sourcing this file:
#   - $JACKDAW (checked), $PY (/usr/bin/python3), $HERE (this folder);
#   - $T, a private directory (mktemp -d) removed on exit.  TMPDIR points into it, so
#     the private clusters of `jackdaw run` live there too and every process a test
#     starts carries $T in its command line;
#   - start_cluster N S [launch options] / stop_cluster: a launched cluster whose daemon
#     PIDs are read from the cluster file; the EXIT trap kills exactly those PIDs (and
#     any process whose command line names $T, by PID), never anything by name;
#   - fail "msg", note "msg", expect_code WANT GOT "what", wait_until SECONDS CMD...;
#   - jd_run (a `jackdaw run` whose logs are kept in $T), check_records, cluster_field;
#   - jd_sim / jd_sim_ok (a `jackdaw sim`, its output in $T), jd_trace_verify;
#   - checks on exit: any ASan / LSan / UBSan / ThreadSanitizer report in a file
#     under $T (daemon logs, captured client output) fails the test, and so does any
#     WARN or ERROR line of a daemon log that LOG_ALLOW does not match, or a process
#     left running from $T.
#
# Everything is bounded: every loop has a count and a time limit, every client command
# that follows a job gets --timeout, and run-all.sh wraps each test in `timeout`.

set -u

if [ -z "${JACKDAW:-}" ] || [ ! -x "${JACKDAW}" ]; then
    echo "FAIL: JACKDAW must name the jackdaw binary (got '${JACKDAW:-}')" >&2
    exit 2
fi
case "$JACKDAW" in
/*) ;;
*) JACKDAW="$(cd "$(dirname "$JACKDAW")" && pwd)/$(basename "$JACKDAW")" ;;
esac
export JACKDAW

PY=/usr/bin/python3
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TEST_NAME="$(basename "$0" .sh)"

T="$(mktemp -d "${TMPDIR:-/tmp}/jackdaw-it-${TEST_NAME}.XXXXXX")" || {
    echo "FAIL: mktemp -d failed" >&2
    exit 1
}
export TMPDIR="$T"
# `jackdaw run` writes its trace to the current directory unless told: keep them here.
export JACKDAW_TRACE_DIR="$T"
# Never touch the user's default cluster.
export JACKDAW_CLUSTER="$T/default-cluster/cluster.json"
# A sanitizer report must not look like an ordinary exit code (1 = run had failures).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:exitcode=99"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}exitcode=99"

# Daemon log lines at WARN or ERROR fail a test that otherwise passed, unless they
# match this extended regex (a test that provokes warnings sets it).
LOG_ALLOW=""
CLUSTER_FILE=""       # the cluster started by start_cluster
CLUSTER_PIDS=()       # its daemons
EXTRA_PIDS=()         # daemons of other clusters a test launched itself (track_cluster)
BG_PIDS=()            # background helpers started by the test (bg)

. "$(dirname "${BASH_SOURCE[0]}")/../lib/procs.sh"

note() { echo "-- $*"; }

# skip "why" : the test cannot run here (no root for namespaces, no Slurm); run-all.sh
# shows it as SKIP with the reason.
skip() {
    echo "SKIP: $*"
    SKIPPED=1
    exit 77
}
SKIPPED=0

# at_exit CMD... : run by the EXIT trap after the test's processes are stopped (a test
# bed's teardown), whatever the outcome.
AT_EXIT=()
at_exit() {
    local cmd
    printf -v cmd '%q ' "$@"
    AT_EXIT+=("$cmd")
}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect_code WANT GOT WHAT
expect_code() {
    [ "$2" -eq "$1" ] || fail "$3: exit code $2, expected $1"
}

# True when PID's command line mentions our private directory: the guard that makes
# sure a recycled PID is never signalled.
pid_is_ours() {
    local pid=$1
    [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$T"
}

# PIDs of every live process whose command line names $T, one per line (the
# shell's own command line names the test script, not $T).
pids_in_tmpdir() { pids_matching "$T"; }

# wait_until SECONDS CMD... : polls CMD every 0.1 s; 0 when it succeeded in time.
wait_until() {
    local limit=$1 i n
    shift
    n=$(awk -v s="$limit" 'BEGIN { printf "%d", s * 10 }')
    for ((i = 0; i <= n; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# signal_user SIG PID : sends SIG to the child of `timeout` PID, as a user's ^C or a batch
# system's SIGTERM reaches the client alone.  Signalling timeout itself would also send
# SIG and SIGCONT to its whole process group, and a SIGCONT that lands while an
# ASan-built client stops its threads for the leak check at exit stalls that check for
# seconds (seen: timeout's -k fired on a client that had already printed its last line).
signal_user() {
    local sig=$1 pid=$2 child
    child=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)
    child=${child%% *}
    [ -n "$child" ] || fail "signal_user: timeout $pid has no child to signal"
    kill -"$sig" "$child"
}

# cluster_field FILE EXPR : a value from a cluster file, EXPR over `c` (python).
cluster_field() {
    "$PY" -c 'import json, sys; c = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# cluster_workdir FILE : where the daemons' logs are (node-I.log).
cluster_workdir() {
    cluster_field "$1" 'c["workdir"]'
}

# track_cluster FILE : remember a cluster's daemons so the EXIT trap stops them.
track_cluster() {
    local pid
    for pid in $(cluster_pids "$1"); do EXTRA_PIDS+=("$pid"); done
}

# start_cluster N S [launch options...] : launches N daemons with S slots each; sets
# CLUSTER_FILE, CLUSTER_WORKDIR and CLUSTER_PIDS.
start_cluster() {
    local nodes=$1 slots=$2 rc pid
    shift 2
    CLUSTER_FILE="$T/cluster/cluster.json"
    timeout -k 5 60 "$JACKDAW" launch --nodes "$nodes" --slots "$slots" \
        --cluster "$CLUSTER_FILE" "$@" >"$T/launch.out" 2>&1
    rc=$?
    if [ -f "$CLUSTER_FILE" ]; then
        for pid in $(cluster_pids "$CLUSTER_FILE"); do CLUSTER_PIDS+=("$pid"); done
    fi
    if [ $rc -ne 0 ]; then
        cat "$T/launch.out" >&2
        fail "jackdaw launch --nodes $nodes --slots $slots exited $rc"
    fi
    local want=$nodes
    [ -n "$(cluster_field "$CLUSTER_FILE" 'c.get("collector", {}).get("pid", "")')" ] && want=$((nodes + 1))
    [ ${#CLUSTER_PIDS[@]} -eq "$want" ] ||
        fail "cluster file $CLUSTER_FILE records ${#CLUSTER_PIDS[@]} daemon PIDs, expected $want"
    for pid in "${CLUSTER_PIDS[@]}"; do
        pid_alive "$pid" || fail "daemon $pid of the new cluster is not running"
    done
    # shellcheck disable=SC2034 # for the tests: where node-I.log are
    CLUSTER_WORKDIR="$(cluster_workdir "$CLUSTER_FILE")"
    note "launched $nodes nodes: pids ${CLUSTER_PIDS[*]}"
}

cluster_gone() {
    local pid
    for pid in "${CLUSTER_PIDS[@]}"; do pid_alive "$pid" && return 1; done
    return 0
}

# stop_cluster : `jackdaw stop`, then a bounded wait for every daemon PID to go; any
# left are killed by PID and the call fails (a daemon that ignores stop is a bug).
stop_cluster() {
    [ ${#CLUSTER_PIDS[@]} -eq 0 ] && return 0
    local rc=0
    if [ -f "$CLUSTER_FILE" ]; then
        timeout -k 5 30 "$JACKDAW" stop --cluster "$CLUSTER_FILE" >"$T/stop.out" 2>&1 || rc=$?
    fi
    if ! wait_until 10 cluster_gone; then
        kill_pids "${CLUSTER_PIDS[@]}"
        CLUSTER_PIDS=()
        fail "daemons still running 10 s after 'jackdaw stop' (stop exited $rc)"
    fi
    CLUSTER_PIDS=()
    [ $rc -eq 0 ] || { cat "$T/stop.out" >&2; fail "jackdaw stop exited $rc"; }
    return 0
}

# bg CMD... : starts a helper in the background and tracks its PID.
bg() {
    "$@" &
    BG_PIDS+=($!)
}

# sanitizer_reports : prints files under $T holding a sanitizer report.
sanitizer_reports() {
    grep -rlE 'ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak|Thread)Sanitizer' \
        "$T" 2>/dev/null
}

# unexpected_log_lines : WARN and ERROR lines of every daemon log under $T (node-I.log
# and collector.log of launched clusters and of `jackdaw run --keep`) that LOG_ALLOW does not match.
# Healthy daemons talking to each other never drop a connection or warn.
unexpected_log_lines() {
    local f
    find "$T" -type f \( -name 'node-*.log' -o -name 'collector.log' \) 2>/dev/null | sort | while read -r f; do
        if [ -n "$LOG_ALLOW" ]; then
            grep -HE ' (WARN|ERROR) ' "$f" | grep -vE -- "$LOG_ALLOW"
        else
            grep -HE ' (WARN|ERROR) ' "$f"
        fi
    done
}

# no_daemons_left WHAT : fails when any process still names $T in its command line.
no_daemons_left() {
    local left
    left=$(pids_in_tmpdir | tr '\n' ' ')
    [ -z "$left" ] || fail "$1: processes still running from $T: $left"
}

# jd_run LABEL WORKLOAD [run options...] : `jackdaw run` kept in $T/LABEL (logs stay for
# the sanitizer check), stdout in $T/LABEL.out, stderr in $T/LABEL.err; sets RUN_RC.
jd_run() {
    local label=$1 wl=$2
    shift 2
    RUN_RC=0
    timeout -k 5 90 "$JACKDAW" run "$wl" --keep "$T/$label" --quiet --timeout 60 "$@" \
        >"$T/$label.out" 2>"$T/$label.err" || RUN_RC=$?
    if [ $RUN_RC -ne 0 ] && [ $RUN_RC -ne 1 ]; then
        echo "--- stdout of jackdaw run ($label):" >&2
        cat "$T/$label.out" >&2
        echo "--- stderr of jackdaw run ($label):" >&2
        cat "$T/$label.err" >&2
    fi
    return 0
}

# jd_sim LABEL [sim arguments...] : `jackdaw sim` (no daemon), stdout in $T/LABEL.out,
# stderr in $T/LABEL.err; sets SIM_RC.
jd_sim() {
    local label=$1
    shift
    SIM_RC=0
    timeout -k 5 120 "$JACKDAW" sim "$@" >"$T/$label.out" 2>"$T/$label.err" || SIM_RC=$?
}

# jd_sim_ok LABEL [sim arguments...] : jd_sim, failing the test with its stderr unless
# it exits 0.
jd_sim_ok() {
    jd_sim "$@"
    [ "$SIM_RC" -eq 0 ] || { cat "$T/$1.err" >&2; fail "sim $1: exit code $SIM_RC"; }
}

# jd_trace_verify LABEL WORKLOAD : `jackdaw trace verify` of the trace $T/LABEL.avro
# against WORKLOAD, its output in $T/LABEL.verify, failing the test with it.
jd_trace_verify() {
    "$JACKDAW" trace verify "$T/$1.avro" --workload "$2" >"$T/$1.verify" 2>&1 ||
        { cat "$T/$1.verify" >&2; fail "trace verify of $1's trace"; }
}

# check_records WORKLOAD RECORDS [options] : check_records.py, failing the test on error.
check_records() {
    "$PY" "$HERE/check_records.py" "$@" || fail "records check failed for $2"
}

cleanup() {
    local rc=$? reports pid
    trap - EXIT INT TERM
    set +e
    # 1. The cluster the test launched, then any other clusters it recorded.
    if [ ${#CLUSTER_PIDS[@]} -gt 0 ]; then
        if [ -n "$CLUSTER_FILE" ] && [ -f "$CLUSTER_FILE" ]; then
            timeout -k 2 10 "$JACKDAW" stop --cluster "$CLUSTER_FILE" >/dev/null 2>&1
        fi
        kill_pids "${CLUSTER_PIDS[@]}"
    fi
    [ ${#EXTRA_PIDS[@]} -gt 0 ] && kill_pids "${EXTRA_PIDS[@]}"
    # Background helpers are our own children, so their PIDs cannot be recycled
    # before we wait for them: signal them directly.  Their own children name $T and
    # are caught by step 2.
    for pid in "${BG_PIDS[@]}"; do
        pid_alive "$pid" && kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${BG_PIDS[@]}"; do
        wait_until 3 eval "! pid_alive $pid" || kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    # 2. The test's own teardowns (test beds: their daemons name $T too), last in first
    #    out; a test checks for itself that its own processes in a bed were stopped.
    local k
    for ((k = ${#AT_EXIT[@]} - 1; k >= 0; k--)); do
        eval "${AT_EXIT[$k]}" || { echo "FAIL: teardown failed: ${AT_EXIT[$k]}" >&2; [ $rc -eq 0 ] && rc=1; }
    done
    [ "$SKIPPED" -eq 1 ] && { rm -rf "$T"; exit 77; }
    # 3. Anything else that names our directory (a `jackdaw run` cut short leaves its
    #    daemons): killed by PID, and reported, because it is a leak.
    local strays
    strays=$(pids_in_tmpdir | tr '\n' ' ')
    if [ -n "$strays" ]; then
        echo "FAIL: processes left running from $T (killed): $strays" >&2
        for pid in $strays; do
            echo "  $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
        done
        # shellcheck disable=SC2086
        kill_pids $strays
        [ $rc -eq 0 ] && rc=1
    fi
    # 4. Sanitizer reports anywhere in the logs or captured output.
    reports=$(sanitizer_reports)
    if [ -n "$reports" ]; then
        echo "FAIL: sanitizer reports in:" >&2
        for f in $reports; do
            echo "=== $f" >&2
            grep -E -A30 'ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$f" | head -60 >&2
        done
        [ $rc -eq 0 ] && rc=1
    fi
    # 5. Warnings in the daemon logs that the test did not expect.
    if [ $rc -eq 0 ]; then
        local unexpected
        unexpected=$(unexpected_log_lines | head -20)
        if [ -n "$unexpected" ]; then
            echo "FAIL: unexpected warnings or errors in daemon logs:" >&2
            echo "${unexpected//"$T/"/}" >&2
            rc=1
        fi
    fi
    if [ -n "${KEEP_TMP:-}" ]; then
        echo "-- kept $T" >&2
    else
        rm -rf "$T"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
