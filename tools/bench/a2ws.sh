#!/bin/bash
# a2ws.sh — the heterogeneous-cluster experiments of paper 001 (A2WS), scaled to seconds.
#
# (a) Gain table (paper 001 Tables 3-4): the seismic workload (`jackdaw gen seismic`,
#     independent shots) on the node mixes C1, C2, C3 (8, 16, 32 nodes) of `--speeds`
#     with 480 to 3840 shots, one slot per node at speed cores/24, under `--policy a2ws`,
#     `lw` and `ctws`, RUNS runs each.  The shot cost is scaled so that the ideal makespan (total
#     shot seconds / sum of the speeds) is IDEAL seconds in every configuration.  Gain =
#     1 - median(A2WS) / median(other), printed next to the paper's value and the target
#     (A2WS >= +10 % over LW and CTWS at the largest configuration; never below -2 %
#     where the paper shows a gain).  Each line also gives the shots run by the slowest
#     (1-core) nodes, which is what separates the policies at this scale.
# (b) Radius study (paper 001 Fig. 4): A2WS makespan for R in RADII on the largest
#     configuration of (a).
# (c) DAWS+A2WS hybrid vs DAWS and vs A2WS on all-pairs (-n AP_N, AP_BYTES files) over
#     the C2 mix with --bandwidth 1Gbit.
#
# Nothing is judged: a missed target is a figure.
#
#   tools/bench/a2ws.sh [BUILD_DIR]
#
# Environment: MIXES ("C1 C2 C3"), SHOTS ("480 960 1920 3840"), IDEAL (3 s), RUNS (3),
# RADII ("1 2 4 8"), AP_N (20), AP_BYTES (2400000), AP_IDEAL (3 s), AP_MIX (C2), PARTS
# ("gain radius hybrid"), RUN_TIMEOUT (120 s per run).
. "$(dirname "$0")/lib.sh"

MIXES="${MIXES:-C1 C2 C3}"
SHOTS="${SHOTS:-480 960 1920 3840}"
IDEAL="${IDEAL:-3}"
RUNS="${RUNS:-3}"
RADII="${RADII:-1 2 4 8}"
AP_N="${AP_N:-20}"
AP_BYTES="${AP_BYTES:-2400000}"
AP_IDEAL="${AP_IDEAL:-3}"
AP_MIX="${AP_MIX:-C2}"
PARTS="${PARTS:-gain radius hybrid}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
TARGET_GAIN=0.10
FLOOR_GAIN=-0.02

# Paper 001 Table 3 (vs LW) and Table 4 (vs CTWS), in %, by "MIX SHOTS" (C1..C3 = 8..32
# nodes).
declare -A PAPER_LW=(
    ["C1 480"]=16.0 ["C2 480"]=10.5 ["C3 480"]=3.9
    ["C1 960"]=17.1 ["C2 960"]=8.5 ["C3 960"]=10.0
    ["C1 1920"]=14.8 ["C2 1920"]=8.5 ["C3 1920"]=2.3
    ["C1 3840"]=12.3 ["C2 3840"]=7.9 ["C3 3840"]=7.4
    ["C1 7680"]=14.9 ["C2 7680"]=7.5 ["C3 7680"]=5.9)
declare -A PAPER_CTWS=(
    ["C1 480"]=5.88 ["C2 480"]=6.73 ["C3 480"]=3.75
    ["C1 960"]=1.84 ["C2 960"]=7.31 ["C3 960"]=9.43
    ["C1 1920"]=0.70 ["C2 1920"]=2.14 ["C3 1920"]=2.20
    ["C1 3840"]=-0.96 ["C2 3840"]=3.25 ["C3 3840"]=2.73
    ["C1 7680"]=2.06 ["C2 7680"]=1.40 ["C3 7680"]=2.89)

# Nodes of a mix (8 << (k - 1) for Ck) and the sum of their speeds: the mix repeats the
# cores 24, 1, 8, 2, 16, 4, 24, 1 (core/model/mix.c), speed = cores / 24.
mix_nodes() { echo $((8 << (${1#C} - 1))); }
mix_speed_sum() {
    awk -v n="$(mix_nodes "$1")" 'BEGIN { split("24 1 8 2 16 4 24 1", c, " ");
        s = 0; for (i = 0; i < n; i++) s += c[i % 8 + 1] / 24; printf "%.6f", s }'
}

status=0
FAILED=()

# run_one TAG WORKLOAD ARGS... : one `jackdaw run --json` into $B/TAG.json; sets MK to
# the makespan and SLOWEST to the tasks run by the slowest nodes, or fails (with the
# error on stderr) when the run gave no complete summary.  Not run in a subshell, so
# that `bounded` records its child for the clean-up.
run_one() {
    local tag=$1 wl=$2 rc mk done_ total
    shift 2
    MK=""
    bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --json --quiet --no-trace \
        --timeout "$RUN_TIMEOUT" "$@" >"$B/$tag.json" 2>"$B/$tag.err"
    rc=$?
    mk=$(json_get "$B/$tag.json" '"%.3f" % j["makespan_s"]')
    done_=$(json_get "$B/$tag.json" 'j["tasks_done"]')
    total=$(json_get "$B/$tag.json" 'j["tasks"]')
    if [ -z "$mk" ] || [ "$done_" != "$total" ]; then
        echo "a2ws: $tag: jackdaw run exited $rc, ${done_:-?} of ${total:-?} tasks done:" >&2
        sed 's/^/    | /' "$B/$tag.err" | head -10 >&2
        FAILED+=("$tag")
        status=1
        return 1
    fi
    MK=$mk
    # Tasks run by the slowest nodes (speed 1/24 in the mixes): a task more or less there
    # is what moves the makespan of these short runs.
    SLOWEST=$(json_get "$B/$tag.json" \
        'sum(n["tasks_run"] for n in j["nodes"] if n["speed"] == min(m["speed"] for m in j["nodes"]))')
}

# measure KEY LABEL WORKLOAD ARGS... : RUNS runs; prints each makespan, the median and
# the tasks run by the slowest nodes on one line, and leaves the median in MED[KEY]
# (empty when no run finished).
declare -A MED
measure() {
    local key=$1 label=$2 wl=$3 r mks=() slow=()
    shift 3
    for ((r = 1; r <= RUNS; r++)); do
        run_one "${key// /-}-$r" "$wl" "$@" && mks+=("$MK") && slow+=("$SLOWEST")
    done
    if [ ${#mks[@]} -gt 0 ]; then
        MED[$key]=$(median "${mks[@]}")
        say "    $label: median $(printf '%.3f' "${MED[$key]}") s  (runs: ${mks[*]};" \
            "tasks on the slowest nodes: ${slow[*]})"
    else
        MED[$key]=""
        say "    $label: no run finished"
    fi
}

# gain A OTHER : 1 - A / OTHER in % with one decimal, or n/a.
gain() {
    if [ -z "$1" ] || [ -z "$2" ]; then
        echo "n/a"
        return
    fi
    awk -v a="$1" -v o="$2" 'BEGIN { printf "%+.1f", 100 * (1 - a / o) }'
}

want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

largest_mix=""
largest_shots=""
for m in $MIXES; do largest_mix=$m; done
for s in $SHOTS; do largest_shots=$s; done

# ---- (a) gain table -----------------------------------------------------------------
if want gain; then
    section "a2ws (a): seismic shots on mixes $MIXES x shots $SHOTS, one slot per node at" \
        "speed cores/24, A2WS / LW / CTWS, $RUNS run(s) each, shot cost scaled to an ideal" \
        "makespan of $IDEAL s"
    for m in $MIXES; do
        nodes=$(mix_nodes "$m")
        ssum=$(mix_speed_sum "$m")
        for s in $SHOTS; do
            cost=$(awk -v i="$IDEAL" -v p="$ssum" -v n="$s" 'BEGIN { printf "%.6f", i * p / n }')
            wl="$B/seismic-$m-$s.jsonl"
            "$JACKDAW" gen seismic --shots "$s" --cost "$cost" -o "$wl" ||
                { echo "a2ws: jackdaw gen seismic failed" >&2; exit 1; }
            say "  $m ($nodes nodes, speed sum $ssum), $s shots of $cost s (a shot takes" \
                "$cost / speed s on a node):"
            for p in a2ws lw ctws; do
                measure "$p $m $s" "$p" "$wl" --nodes "$nodes" --speeds "$m" --policy "$p"
            done
        done
    done
    say ""
    say "  gain of A2WS = 1 - median(A2WS) / median(other), measured (paper 001)"
    printf '  %-4s %6s  %-18s %-18s\n' mix shots "vs LW (Table 3)" "vs CTWS (Table 4)"
    for m in $MIXES; do
        for s in $SHOTS; do
            a=${MED["a2ws $m $s"]}
            printf '  %-4s %6s  %-18s %-18s\n' "$m" "$s" \
                "$(gain "$a" "${MED["lw $m $s"]}") % ($(printf '%+.2f' "${PAPER_LW["$m $s"]:-0}") %)" \
                "$(gain "$a" "${MED["ctws $m $s"]}") % ($(printf '%+.2f' "${PAPER_CTWS["$m $s"]:-0}") %)"
        done
    done
    a=${MED["a2ws $largest_mix $largest_shots"]}
    say "  largest configuration ($largest_mix, $largest_shots shots): gain vs LW" \
        "$(gain "$a" "${MED["lw $largest_mix $largest_shots"]}") %, vs CTWS" \
        "$(gain "$a" "${MED["ctws $largest_mix $largest_shots"]}") %   target >= +$(pct $TARGET_GAIN) each"
    # Where the paper shows a gain (> 0), the measured gain should not fall below -2 %.
    below=()
    for m in $MIXES; do
        for s in $SHOTS; do
            a=${MED["a2ws $m $s"]}
            for o in lw ctws; do
                if [ "$o" = lw ]; then pv=${PAPER_LW["$m $s"]:-}; else pv=${PAPER_CTWS["$m $s"]:-}; fi
                g=$(gain "$a" "${MED["$o $m $s"]}")
                if [ -z "$pv" ] || [ "$g" = n/a ]; then continue; fi
                awk -v p="$pv" -v g="$g" -v f="$FLOOR_GAIN" 'BEGIN { exit !(p > 0 && g < 100 * f) }' &&
                    below+=("$m/$s vs $o: $g %")
            done
        done
    done
    if [ ${#below[@]} -gt 0 ]; then
        say "  below $(pct $FLOOR_GAIN) where the paper shows a gain: ${below[*]}"
    else
        say "  below $(pct $FLOOR_GAIN) where the paper shows a gain: none"
    fi
    say ""
fi

# ---- (b) radius study ---------------------------------------------------------------
if want radius; then
    m=$largest_mix
    s=$largest_shots
    nodes=$(mix_nodes "$m")
    ssum=$(mix_speed_sum "$m")
    cost=$(awk -v i="$IDEAL" -v p="$ssum" -v n="$s" 'BEGIN { printf "%.6f", i * p / n }')
    wl="$B/seismic-$m-$s.jsonl"
    [ -f "$wl" ] || "$JACKDAW" gen seismic --shots "$s" --cost "$cost" -o "$wl" ||
        { echo "a2ws: jackdaw gen seismic failed" >&2; exit 1; }
    section "a2ws (b): radius study (paper 001 Fig. 4): A2WS on $m ($nodes nodes), $s shots" \
        "of $cost s (ideal $IDEAL s), R in $RADII, $RUNS run(s) each (default R: 20 % of" \
        "the nodes, >= 1)"
    for r in $RADII; do
        measure "radius $r" "R = $r" "$wl" --nodes "$nodes" --speeds "$m" --policy a2ws --radius "$r"
    done
    say "  (paper 001 Fig. 4, 64 nodes, 3840 tasks: runtime falls from R = 1 to R = 16," \
        "R = 16 slightly better than R = 32)"
    say ""
fi

# ---- (c) DAWS+A2WS hybrid on all-pairs ----------------------------------------------
if want hybrid; then
    nodes=$(mix_nodes "$AP_MIX")
    ssum=$(mix_speed_sum "$AP_MIX")
    dur=$(awk -v i="$AP_IDEAL" -v p="$ssum" -v n="$AP_N" 'BEGIN { printf "%.6f", i * p / (n * n) }')
    wl="$B/allpairs.jsonl"
    "$JACKDAW" gen allpairs -n "$AP_N" --file-bytes "$AP_BYTES" --duration-s "$dur" -o "$wl" ||
        { echo "a2ws: jackdaw gen allpairs failed" >&2; exit 1; }
    section "a2ws (c): all-pairs $AP_N x $AP_N ($((AP_N * AP_N)) tasks of $dur s, files of" \
        "$AP_BYTES bytes) on $AP_MIX ($nodes nodes, one slot each), --bandwidth 1Gbit," \
        "ideal $AP_IDEAL s, $RUNS run(s) each"
    for p in daws a2ws daws+a2ws; do
        measure "ap $p" "$p" "$wl" --nodes "$nodes" --speeds "$AP_MIX" --policy "$p" --bandwidth 1Gbit
    done
    h=${MED["ap daws+a2ws"]}
    say "  daws+a2ws: gain vs DAWS $(gain "$h" "${MED["ap daws"]}") %, vs A2WS" \
        "$(gain "$h" "${MED["ap a2ws"]}") %   (no target: reported)"
    say ""
fi

[ ${#FAILED[@]} -gt 0 ] && say "  runs that did not complete: ${FAILED[*]}"
exit $status
