#!/bin/bash
# parsec.sh — PaRSEC's victim policies on sparse tiled Cholesky (paper 004 Table 1),
# scaled to seconds.  As in the paper, the matrix is fixed (TILES x TILES tiles, half of
# them empty: `jackdaw gen cholesky --tiles TILES --sparsity 0.5 --nodes 4`, tiles pinned
# block-cyclically on the 4 nodes) and the tile size varies: in sparse Cholesky every
# task's granularity is proportional to it (paper 004 §4), so the tile size is the task
# cost `--tile-cost C` for each C in TILE_COSTS (the paper's 10x10 .. 50x50 tiles).
# Each is run on 4 daemons x SLOTS slots with `--policy none` (no stealing) and with
# `--policy parsec --starvation S --wait-guard on --amount A` for each thief policy S in
# STARVATIONS (paper 004 §3: no ready task, or also no local successor of a running
# task) and each victim policy A in AMOUNTS.  Prints per configuration the median
# makespan over RUNS, the speedup over no-steal (median none / median policy) and the
# steal success % (steals_succeeded / steals_attempted summed over the nodes and the
# runs), then the speedups at the largest tile size next to the target (>= 1.25x; paper
# 004 Table 1 at 50x50: Single 1.25x, Chunk 1.12x, Half 1.11x).  Every run submits
# with `--mode MODE` (data: each task starts on the node of the tile it updates, the
# owner-computes placement of the paper, so no-steal is as unequal as the block-cyclic
# distribution of a sparse matrix makes it).  Nothing is judged.
#
#   tools/bench/parsec.sh [BUILD_DIR]
#
# Environment: TILES (24), TILE_COSTS ("0.005 0.01 0.02 0.04" s), SPARSITY (0.5),
# NODES (4), SLOTS (2), MODE (data), STARVATIONS ("ready+successors ready"), AMOUNTS
# ("half chunk:4 single"), RUNS (3), RUN_TIMEOUT (120 s per run).
. "$(dirname "$0")/lib.sh"

TILES="${TILES:-24}"
TILE_COSTS="${TILE_COSTS:-0.005 0.01 0.02 0.04}"
SPARSITY="${SPARSITY:-0.5}"
NODES="${NODES:-4}"
SLOTS="${SLOTS:-2}"
MODE="${MODE:-data}"
STARVATIONS="${STARVATIONS:-ready+successors ready}"
AMOUNTS="${AMOUNTS:-half chunk:4 single}"
# The configurations: STARVATION/AMOUNT.
CONFIGS=()
for st in $STARVATIONS; do for a in $AMOUNTS; do CONFIGS+=("$st/$a"); done; done
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
    local key=$1 wl=$2 r mks=() att=0 suc=0 tag
    shift 2
    tag=$(tr ' :/+' '----' <<<"$key") # a file name
    for ((r = 1; r <= RUNS; r++)); do
        if run_one "$tag-$r" "$wl" "$@"; then
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

section "parsec: sparse Cholesky (${TILES}x$TILES tiles, sparsity $SPARSITY), tile sizes as" \
    "task costs $TILE_COSTS s, $NODES daemons x $SLOTS slots, --mode $MODE; no-steal vs parsec (wait" \
    "guard on), thief policies $STARVATIONS x victim policies $AMOUNTS; $RUNS run(s) each"
largest=""
for t in $TILE_COSTS; do
    largest=$t
    wl="$B/cholesky-$t.jsonl"
    "$JACKDAW" gen cholesky --tiles "$TILES" --sparsity "$SPARSITY" --nodes "$NODES" \
        --tile-cost "$t" -o "$wl" || { echo "parsec: jackdaw gen cholesky failed" >&2; exit 1; }
    ntasks=$(grep -c '"kind"' "$wl")
    say "  tile cost $t s ($ntasks tasks):"
    measure "none $t" "$wl" --nodes "$NODES" --slots "$SLOTS" --mode "$MODE" --policy none
    say "    none: median ${MED["none $t"]:-n/a} s  (runs: ${RUNS_OF["none $t"]};" \
        "capacity bound ${IDEAL_S:-n/a} s)"
    for c in "${CONFIGS[@]}"; do
        measure "$c $t" "$wl" --nodes "$NODES" --slots "$SLOTS" --mode "$MODE" --policy parsec \
            --starvation "${c%%/*}" --wait-guard on --amount "${c#*/}"
        read -r att suc <<<"${STEALS["$c $t"]}"
        rate="n/a"
        [ "$att" -gt 0 ] && rate=$(pct "$(awk -v s="$suc" -v a="$att" 'BEGIN { print s / a }')")
        say "    parsec $c: median ${MED["$c $t"]:-n/a} s, speedup" \
            "$(speedup "${MED["none $t"]}" "${MED["$c $t"]}"), steals $suc / $att succeeded" \
            "($rate)  (runs: ${RUNS_OF["$c $t"]})"
    done
done

say ""
say "  speedup over no-steal (median none / median parsec), paper 004 Table 1; columns:"
say "  thief policy (starvation test) / victim policy (amount)"
printf '  %-10s' "tile cost"
for c in "${CONFIGS[@]}"; do printf ' %-24s' "$c"; done
echo
for t in $TILE_COSTS; do
    printf '  %-10s' "$t"
    for c in "${CONFIGS[@]}"; do printf ' %-24s' "$(speedup "${MED["none $t"]}" "${MED["$c $t"]}")"; done
    echo
done
line="  largest tile size (cost $largest s):"
for c in "${CONFIGS[@]}"; do line="$line $c $(speedup "${MED["none $largest"]}" "${MED["$c $largest"]}"),"; done
say "${line%,}   target >= ${TARGET_SPEEDUP}x"

[ ${#FAILED[@]} -gt 0 ] && say "  runs that did not complete: ${FAILED[*]}"
exit $status
