#!/bin/bash
# parsec.sh — PaRSEC's victim policies on sparse tiled Cholesky (paper 004 Table 1),
# scaled to seconds.  `jackdaw gen cholesky --tiles T --sparsity 0.5 --nodes 4
# --tile-cost C` (tiles pinned block-cyclically on the 4 nodes) for each T in TILES, run
# on 4 daemons x SLOTS slots with `--policy none` (no stealing) and with
# `--policy parsec --starvation ready+successors --wait-guard on --amount A` for A in
# AMOUNTS.  Prints per configuration the median makespan over RUNS, the speedup over
# no-steal (median none / median policy) and the steal success % (steals_succeeded /
# steals_attempted summed over the nodes and the runs), then the speedup at the largest
# tile count next to the target (>= 1.25x).  Nothing is judged.
#
#   tools/bench/parsec.sh [BUILD_DIR]
#
# Environment: TILES ("10 16 24"), SPARSITY (0.5), TILE_COST (0.02 s), NODES (4),
# SLOTS (2), AMOUNTS ("half chunk:4 single"), RUNS (3), RUN_TIMEOUT (120 s per run).
. "$(dirname "$0")/lib.sh"

TILES="${TILES:-10 16 24}"
SPARSITY="${SPARSITY:-0.5}"
TILE_COST="${TILE_COST:-0.02}"
NODES="${NODES:-4}"
SLOTS="${SLOTS:-2}"
AMOUNTS="${AMOUNTS:-half chunk:4 single}"
RUNS="${RUNS:-3}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
TARGET_SPEEDUP=1.25

status=0
FAILED=()

# run_one TAG WORKLOAD ARGS... : one `jackdaw run --json` into $B/TAG.json; sets MK to
# the makespan, IDEAL_S to the capacity bound (total sleep / slots) and ATT / SUC to the
# steals attempted / succeeded over the nodes, or fails (with the error on stderr) when
# the run gave no complete summary.
run_one() {
    local tag=$1 wl=$2 rc done_ total
    shift 2
    MK=""
    bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --json --quiet --no-trace \
        --timeout "$RUN_TIMEOUT" "$@" >"$B/$tag.json" 2>"$B/$tag.err"
    rc=$?
    MK=$(json_get "$B/$tag.json" '"%.3f" % j["makespan_s"]')
    done_=$(json_get "$B/$tag.json" 'j["tasks_done"]')
    total=$(json_get "$B/$tag.json" 'j["tasks"]')
    if [ -z "$MK" ] || [ "$done_" != "$total" ]; then
        echo "parsec: $tag: jackdaw run exited $rc, ${done_:-?} of ${total:-?} tasks done:" >&2
        sed 's/^/    | /' "$B/$tag.err" | head -10 >&2
        FAILED+=("$tag")
        status=1
        MK=""
        return 1
    fi
    IDEAL_S=$(json_get "$B/$tag.json" '"%.3f" % j["ideal_s"]')
    ATT=$(json_get "$B/$tag.json" 'sum(n["steals_attempted"] for n in j["nodes"])')
    SUC=$(json_get "$B/$tag.json" 'sum(n["steals_succeeded"] for n in j["nodes"])')
}

# measure KEY WORKLOAD ARGS... : RUNS runs; the median makespan into MED[KEY], the
# makespans into RUNS_OF[KEY] and the summed steal counts into STEALS[KEY] ("attempted
# succeeded").
declare -A MED STEALS RUNS_OF
measure() {
    local key=$1 wl=$2 r mks=() att=0 suc=0
    shift 2
    for ((r = 1; r <= RUNS; r++)); do
        if run_one "${key//[ :]/-}-$r" "$wl" "$@"; then
            mks+=("$MK")
            att=$((att + ATT))
            suc=$((suc + SUC))
        fi
    done
    if [ ${#mks[@]} -gt 0 ]; then
        MED[$key]=$(median "${mks[@]}")
    else
        MED[$key]=""
    fi
    STEALS[$key]="$att $suc"
    RUNS_OF[$key]="${mks[*]}"
}

speedup() {
    if [ -z "$1" ] || [ -z "$2" ]; then
        echo "n/a"
        return
    fi
    awk -v n="$1" -v p="$2" 'BEGIN { printf "%.2fx", n / p }'
}

section "parsec: sparse Cholesky (sparsity $SPARSITY, tile cost $TILE_COST s), tiles $TILES," \
    "$NODES daemons x $SLOTS slots; no-steal vs parsec (ready+successors, wait guard on)" \
    "with amounts $AMOUNTS; $RUNS run(s) each"
largest=""
for t in $TILES; do
    largest=$t
    wl="$B/cholesky-$t.jsonl"
    "$JACKDAW" gen cholesky --tiles "$t" --sparsity "$SPARSITY" --nodes "$NODES" \
        --tile-cost "$TILE_COST" -o "$wl" || { echo "parsec: jackdaw gen cholesky failed" >&2; exit 1; }
    ntasks=$(grep -c '"kind"' "$wl")
    say "  tiles $t ($ntasks tasks):"
    measure "none $t" "$wl" --nodes "$NODES" --slots "$SLOTS" --policy none
    say "    none: median ${MED["none $t"]:-n/a} s  (runs: ${RUNS_OF["none $t"]};" \
        "capacity bound ${IDEAL_S:-n/a} s)"
    for a in $AMOUNTS; do
        measure "$a $t" "$wl" --nodes "$NODES" --slots "$SLOTS" --policy parsec \
            --starvation ready+successors --wait-guard on --amount "$a"
        read -r att suc <<<"${STEALS["$a $t"]}"
        rate="n/a"
        [ "$att" -gt 0 ] && rate=$(pct "$(awk -v s="$suc" -v a="$att" 'BEGIN { print s / a }')")
        say "    parsec $a: median ${MED["$a $t"]:-n/a} s, speedup" \
            "$(speedup "${MED["none $t"]}" "${MED["$a $t"]}"), steals $suc / $att succeeded" \
            "($rate)  (runs: ${RUNS_OF["$a $t"]})"
    done
done

say ""
say "  speedup over no-steal (median none / median parsec), paper 004 Table 1"
printf '  %-7s' tiles
for a in $AMOUNTS; do printf ' %-10s' "$a"; done
echo
for t in $TILES; do
    printf '  %-7s' "$t"
    for a in $AMOUNTS; do printf ' %-10s' "$(speedup "${MED["none $t"]}" "${MED["$a $t"]}")"; done
    echo
done
line="  largest tile count ($largest):"
for a in $AMOUNTS; do line="$line $a $(speedup "${MED["none $largest"]}" "${MED["$a $largest"]}"),"; done
say "${line%,}   target >= ${TARGET_SPEEDUP}x"

[ ${#FAILED[@]} -gt 0 ] && say "  runs that did not complete: ${FAILED[*]}"
exit $status
