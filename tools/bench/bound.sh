#!/bin/bash
# bound.sh — how long `jackdaw bound` takes on a 10^6-task DAG (issue 6: <= 5 s on this
# machine).  For each of the paper 002 Table 3 DAGs (`jackdaw gen DAG --table3`: sleep
# tasks of 0-100 ms, outputs of 0-10 MB, degree and pipe size 10) at TASKS tasks, runs
# `jackdaw bound W --nodes NODES --slots SLOTS --bandwidth BANDWIDTH --json` RUNS times
# and prints the wall time of each whole command (reading the workload included), the
# median, and the median's split between reading the workload and the programme itself
# (load_s and compute_s of the JSON), next to the target.  Also prints the three bounds
# and the binding one, as a sanity check of what was timed.
#
# Default cluster: the paper's weak-scaling setup at this size, 1,000 tasks per slot on
# 2 slots per node (500 nodes x 2 slots), over its 10 Gbit/s links.
#
#   tools/bench/bound.sh [BUILD_DIR]
#
# Environment: DAGS ("fanout fanin pipeline bot"), TASKS (1000000), NODES (500), SLOTS
# (2), BANDWIDTH (10Gbit), RUNS (3), RUN_TIMEOUT (60 s per command).
. "$(dirname "$0")/lib.sh"

DAGS="${DAGS:-fanout fanin pipeline bot}"
TASKS="${TASKS:-1000000}"
NODES="${NODES:-500}"
SLOTS="${SLOTS:-2}"
BANDWIDTH="${BANDWIDTH:-10Gbit}"
RUNS="${RUNS:-3}"
RUN_TIMEOUT="${RUN_TIMEOUT:-60}"
TARGET_S=5

section "bound: $TASKS-task Table 3 DAGs ($DAGS), $NODES nodes x $SLOTS slots," \
    "--bandwidth $BANDWIDTH, $RUNS runs each"

worst=""
failed=0
for dag in $DAGS; do
    wl="$B/$dag.jsonl"
    t0=$(now)
    if ! bounded "$RUN_TIMEOUT" "$JACKDAW" gen "$dag" --table3 --tasks "$TASKS" -o "$wl" \
        2>"$B/gen.err"; then
        say "  $dag: jackdaw gen failed:"
        sed 's/^/    | /' "$B/gen.err" | head -5
        failed=1
        continue
    fi
    say "  $dag: generated $(du -m "$wl" | cut -f1) MB in $(elapsed "$t0" "$(now)") s"
    walls=()
    loads=()
    computes=()
    for ((r = 1; r <= RUNS; r++)); do
        out="$B/$dag.$r.json"
        t0=$(now)
        bounded "$RUN_TIMEOUT" "$JACKDAW" bound "$wl" --nodes "$NODES" --slots "$SLOTS" \
            --bandwidth "$BANDWIDTH" --json >"$out" 2>"$B/bound.err"
        rc=$?
        wall=$(elapsed "$t0" "$(now)")
        if [ $rc -ne 0 ] || ! json_get "$out" 'j["binding"]' >/dev/null; then
            say "    run $r: jackdaw bound exited $rc after $wall s:"
            sed 's/^/    | /' "$B/bound.err" | head -5
            failed=1
            continue
        fi
        walls+=("$wall")
        loads+=("$(json_get "$out" '"%.2f" % j["load_s"]')")
        computes+=("$(json_get "$out" '"%.3f" % j["compute_s"]')")
    done
    [ ${#walls[@]} -gt 0 ] || continue
    figures=$(json_get "$out" '"sub-optimal %.1f s, capacity %.1f s, critical path %.2f s; binding %s" % (j["suboptimal_s"], j["capacity_s"], j["critical_path_s"], j["binding"])')
    med=$(median "${walls[@]}")
    say "    wall time ${walls[*]} s; median $med s (reading $(median "${loads[@]}") s," \
        "programme $(median "${computes[@]}") s)   target <= $TARGET_S s"
    say "    $figures"
    if [ -z "$worst" ] || awk -v a="$med" -v b="$worst" 'BEGIN { exit !(a > b) }'; then
        worst=$med
    fi
    rm -f "$wl"
done

if [ -n "$worst" ]; then
    say "  slowest median: $worst s   target <= $TARGET_S s"
fi
exit $failed
