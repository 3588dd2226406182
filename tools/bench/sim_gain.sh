#!/bin/bash
# sim_gain.sh — paper 001's gain tables (A2WS against LW and CTWS, its Tables 3-4) in the
# simulator, on the paper's own configurations and past them, with `jackdaw sim` running
# the daemons' policy code for all three (core/sim).
#
# The workload and the gain are a2ws.sh's: the seismic shots (`jackdaw gen seismic`,
# independent tasks), one slot per node at speed cores/24 (`--speeds Ck`), the shot cost
# scaled so that the ideal makespan (total shot seconds / sum of the speeds) is IDEAL
# seconds, and gain = 1 - median(A2WS) / median(other) over SEEDS (the simulator is
# deterministic for a seed; seeds change the thieves' draws only).  Default latency
# (100 us), hashed submission, every policy's defaults (`--policy a2ws|lw|ctws`; the
# A2WS radius is 20 % of the nodes, at most 32).
#
# (paper)  The paper's grid: C1..C5 (8, 16, 32, 64, 128 nodes) x 480..7680 shots, one
#          table per node count, the paper's gain beside each figure.  (a2ws.sh runs the
#          same on real daemons, C1-C3 only.)
# (beyond) 128 and 1,024 nodes (NODES_LIST) at TASKS_PER_SLOT shots a slot (>= 10).  The
#          five mixes have one proportion (2:1:1:1:1:2 nodes of 1, 2, 4, 8, 16, 24 cores;
#          core/model/mix.c repeats an 8-node pattern for any node count), so C1..C5
#          scaled to N nodes are one cluster: one row per shot count stands for all five
#          (at 128 nodes it is C5 itself, where the paper has figures; 1,024 nodes is C5
#          eight times over, which the paper did not run).
#
# Each row also gives the simulator's wall time and peak memory (the whole `jackdaw sim`
# process) for the A2WS run of the first seed.  Nothing is judged.
#
#   tools/bench/sim_gain.sh [BUILD_DIR]
#
# Environment: PARTS ("paper beyond"), MIXES ("C1 C2 C3 C4 C5"), SHOTS ("480 960 1920 3840
# 7680"), NODES_LIST ("128 1024"), TASKS_PER_SLOT ("10 15 30 60"), IDEAL (3 s), SEEDS
# ("1"), RADIUS (empty: A2WS's default, 20 % of the nodes, at most 32), RUN_TIMEOUT (600 s per run).
. "$(dirname "$0")/lib.sh"

PARTS="${PARTS:-paper beyond}"
MIXES="${MIXES:-C1 C2 C3 C4 C5}"
SHOTS="${SHOTS:-480 960 1920 3840 7680}"
NODES_LIST="${NODES_LIST:-128 1024}"
TASKS_PER_SLOT="${TASKS_PER_SLOT:-10 15 30 60}"
IDEAL="${IDEAL:-3}"
SEEDS="${SEEDS:-1}"
RADIUS="${RADIUS:-}"
RUN_TIMEOUT="${RUN_TIMEOUT:-600}"
POLICIES="a2ws lw ctws"

# Paper 001 Table 3 (vs LW) and Table 4 (vs CTWS), in %, by "NODES SHOTS" (C1..C5 = 8..128
# nodes).
declare -A PAPER_LW=(
    ["8 480"]=16.0 ["16 480"]=10.5 ["32 480"]=3.9 ["64 480"]=-113.9 ["128 480"]=-94.1
    ["8 960"]=17.1 ["16 960"]=8.5 ["32 960"]=10.0 ["64 960"]=22.2 ["128 960"]=-115.3
    ["8 1920"]=14.8 ["16 1920"]=8.5 ["32 1920"]=2.3 ["64 1920"]=10.5 ["128 1920"]=-0.0
    ["8 3840"]=12.3 ["16 3840"]=7.9 ["32 3840"]=7.4 ["64 3840"]=5.8 ["128 3840"]=10.1
    ["8 7680"]=14.9 ["16 7680"]=7.5 ["32 7680"]=5.9 ["64 7680"]=6.2 ["128 7680"]=6.0)
declare -A PAPER_CTWS=(
    ["8 480"]=5.88 ["16 480"]=6.73 ["32 480"]=3.75 ["64 480"]=-116.27 ["128 480"]=-95.01
    ["8 960"]=1.84 ["16 960"]=7.31 ["32 960"]=9.43 ["64 960"]=21.88 ["128 960"]=-116.04
    ["8 1920"]=0.70 ["16 1920"]=2.14 ["32 1920"]=2.20 ["64 1920"]=10.08 ["128 1920"]=-0.03
    ["8 3840"]=-0.96 ["16 3840"]=3.25 ["32 3840"]=2.73 ["64 3840"]=5.96 ["128 3840"]=10.15
    ["8 7680"]=2.06 ["16 7680"]=1.40 ["32 7680"]=2.89 ["64 7680"]=6.14 ["128 7680"]=5.89)

# Nodes of mix Ck (8 << (k - 1)), and the sum of the speeds of N nodes of the mix: node i
# has the cores 24, 1, 8, 2, 16, 4, 24, 1 of i mod 8, speed cores / 24 (core/model/mix.c).
mix_nodes() { echo $((8 << (${1#C} - 1))); }
speed_sum() {
    awk -v n="$1" 'BEGIN { split("24 1 8 2 16 4 24 1", c, " ");
        s = 0; for (i = 0; i < n; i++) s += c[i % 8 + 1] / 24; printf "%.6f", s }'
}

status=0
FAILED=()

# run_one TAG WORKLOAD NODES MIX POLICY SEED : one `jackdaw sim --json`; sets MK (the
# makespan), WALL (the simulator's wall time) and PEAK (its peak RSS, MB), or fails with
# the error on stderr when the run did not end with every task done.
run_one() {
    local tag=$1 wl=$2 nodes=$3 mix=$4 policy=$5 seed=$6 rc done_ total extra=()
    MK=""
    [ "$policy" = a2ws ] && [ -n "$RADIUS" ] && extra=(--radius "$RADIUS")
    bounded "$RUN_TIMEOUT" /usr/bin/time -f "%M" -o "$B/$tag.time" "$JACKDAW" sim "$wl" \
        --nodes "$nodes" --slots 1 --speeds "$mix" --policy "$policy" --seed "$seed" \
        "${extra[@]}" --json --quiet >"$B/$tag.json" 2>"$B/$tag.err"
    rc=$?
    MK=$(json_get "$B/$tag.json" '"%.4f" % j["makespan_s"]')
    done_=$(json_get "$B/$tag.json" 'j["tasks_done"]')
    total=$(json_get "$B/$tag.json" 'j["tasks"]')
    if [ $rc -ne 0 ] || [ -z "$MK" ] || [ "$done_" != "$total" ]; then
        echo "sim_gain: $tag: jackdaw sim exited $rc, ${done_:-?} of ${total:-?} tasks done:" >&2
        sed 's/^/    | /' "$B/$tag.err" | head -5 >&2
        FAILED+=("$tag")
        status=1
        MK=""
        return 1
    fi
    WALL=$(json_get "$B/$tag.json" '"%.2f" % j["wall_s"]')
    PEAK=$(awk '{ printf "%.0f", $NF / 1024 }' "$B/$tag.time")
}

# gain A OTHER : 1 - A / OTHER in % with one decimal, or n/a.
gain() {
    if [ -z "$1" ] || [ -z "$2" ] || [ "$1" = n/a ] || [ "$2" = n/a ]; then
        echo "n/a"
        return
    fi
    awk -v a="$1" -v o="$2" 'BEGIN { printf "%+.1f", 100 * (1 - a / o) }'
}

# fmt3 X : X with three decimals, or n/a.
fmt3() { if [ "$1" = n/a ]; then echo n/a; else printf '%.3f' "$1"; fi; }

# paper VALUE : the paper's figure in parentheses, or nothing.
paper() { [ -n "$1" ] && printf '(%+.1f)' "$1"; }

want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

head_row() {
    printf '  %-6s %6s %5s %9s %9s %9s %16s %16s %8s %7s\n' mix shots /slot "A2WS" "LW" "CTWS" \
        "vs LW (paper)" "vs CTWS (paper)" "sim wall" "peak"
}

# row NODES LABEL MIX SHOTS : the three policies on one configuration, SEEDS each.
row() {
    local nodes=$1 label=$2 mix=$3 shots=$4 ssum cost wl p seed mks a lw ct wall="" peak=""
    ssum=$(speed_sum "$nodes")
    cost=$(awk -v i="$IDEAL" -v s="$ssum" -v n="$shots" 'BEGIN { printf "%.9f", i * s / n }')
    wl="$B/seismic-$shots-$cost.jsonl"
    [ -f "$wl" ] || "$JACKDAW" gen seismic --shots "$shots" --cost "$cost" -o "$wl" ||
        { echo "sim_gain: jackdaw gen seismic failed" >&2; exit 1; }
    declare -A med=()
    for p in $POLICIES; do
        mks=()
        for seed in $SEEDS; do
            if run_one "$p-$nodes-$shots-$seed" "$wl" "$nodes" "$mix" "$p" "$seed"; then
                mks+=("$MK")
                if [ "$p" = a2ws ] && [ -z "$wall" ]; then
                    wall=$WALL
                    peak=$PEAK
                fi
            fi
        done
        if [ ${#mks[@]} -gt 0 ]; then med[$p]=$(median "${mks[@]}"); else med[$p]=n/a; fi
    done
    a=${med[a2ws]}
    lw=${med[lw]}
    ct=${med[ctws]}
    printf '  %-6s %6s %5s %9s %9s %9s %16s %16s %8s %7s\n' "$label" "$shots" \
        "$(awk -v s="$shots" -v n="$nodes" 'BEGIN { printf "%.0f", s / n }')" \
        "$(fmt3 "$a")" "$(fmt3 "$lw")" "$(fmt3 "$ct")" \
        "$(gain "$a" "$lw") $(paper "${PAPER_LW["$nodes $shots"]:-}")" \
        "$(gain "$a" "$ct") $(paper "${PAPER_CTWS["$nodes $shots"]:-}")" \
        "${wall:-n/a} s" "${peak:-n/a} MB"
}

section "sim_gain: A2WS / LW / CTWS on seismic shots, simulated (jackdaw sim), one slot a" \
    "node at speed cores/24, ideal makespan $IDEAL s, makespans in s (median of seeds" \
    "$SEEDS), gain = 1 - A2WS / other in % (paper 001 Tables 3-4 in parentheses), A2WS" \
    "radius ${RADIUS:-20 % of the nodes, at most 32}"

# ---- (paper) the paper's grid ---------------------------------------------------------
if want paper; then
    for m in $MIXES; do
        nodes=$(mix_nodes "$m")
        say ""
        say "  $nodes nodes: $m (speed sum $(speed_sum "$nodes")), the paper's configuration"
        head_row
        for s in $SHOTS; do
            row "$nodes" "$m" "$m" "$s"
        done
    done
fi

# ---- (beyond) 128 and 1,024 nodes ------------------------------------------------------
if want beyond; then
    for nodes in $NODES_LIST; do
        if [ $((nodes % 8)) -eq 0 ] && [ "$nodes" -le 128 ] && [ $((128 % nodes)) -eq 0 ]; then
            k=1
            while [ $((8 << (k - 1))) -ne "$nodes" ]; do k=$((k + 1)); done
            label="C$k"
        else
            label="C5x$(awk -v n="$nodes" 'BEGIN { printf "%g", n / 128 }')"
        fi
        say ""
        say "  $nodes nodes: C1..C5 scaled to $nodes nodes, one cluster ($label; speed sum" \
            "$(speed_sum "$nodes")), $TASKS_PER_SLOT shots a slot"
        head_row
        for t in $TASKS_PER_SLOT; do
            row "$nodes" "$label" C5 $((t * nodes))
        done
    done
fi

say ""
[ ${#FAILED[@]} -gt 0 ] && say "  runs that did not complete: ${FAILED[*]}"
exit $status
