#!/bin/bash
# allpairs.sh — the all-pairs workload of paper 000 (§IV.C.2 and §IV.D) under the
# placement policies MLB, MDL and FLDS, each with and without caching: N x N independent
# sleep tasks of 0.1 s, task t_I_J reading file aI of set A and bJ of set B, the 2N
# files spread over the nodes (object k on node k mod NODES), on 8 daemons x 4 slots
# with emulated 1 Gbit/s links (--bandwidth, also Algorithm 1's net_band).
#
# Two kinds of executors: "matrix" (--prefetch 0: a task fetches its inputs once it holds
# a slot, as MATRIX's executors did, so transfers cost slot time) and "jackdaw" (the
# default: inputs of up to `slots` tasks are fetched while others run, which hides most
# of MLB's transfers).  FLDS runs as the papers ran it: t = FLDS_T (0.1, "a small
# percentage"), tt = FLDS_TT (0.5 s: paper 002's 20 s scaled to this run's length).
#
# Prints per run: efficiency (ideal / makespan, ideal = N*N*0.1 s / slots), makespan,
# locality hit rate, bytes moved, cache hit rate, tasks pushed, tasks per node; the
# median over RUNS; per kind of executor FLDS with caching next to its target (>= 90 %)
# and the papers' ordering FLDS > MDL > MLB as "yes/no (values)", with and without
# caching.  With TIEBREAK_DIAG=1, MDL and FLDS run again with the files of set A one
# byte larger, so that every task follows aI: a check of how Algorithm 1's tie-break
# between a task's two equal-sized inputs spreads the data-following policies' load.
#
#   tools/bench/allpairs.sh [BUILD_DIR]
#
# Environment: N (40), FILE_BYTES (2400000), DURATION (0.1 s), NODES (8), SLOTS (4),
# BANDWIDTH (1Gbit), RUNS (3), EXECUTORS ("matrix jackdaw"), FLDS_T (0.1), FLDS_TT (0.5),
# TIEBREAK_DIAG (0), FILES (spread: file k on node k mod NODES, an equal share each;
# drawn: each file on a node drawn with SEED (1), as `gen --nodes`, unequal shares),
# RUN_TIMEOUT (120 s per run), TMPFS (1), LOGS (0).
. "$(dirname "$0")/lib.sh"

N="${N:-40}"
FILE_BYTES="${FILE_BYTES:-2400000}"
DURATION="${DURATION:-0.1}"
NODES="${NODES:-8}"
SLOTS="${SLOTS:-4}"
BANDWIDTH="${BANDWIDTH:-1Gbit}"
RUNS="${RUNS:-3}"
FLDS_T="${FLDS_T:-0.1}"
FLDS_TT="${FLDS_TT:-0.5}"
# matrix: executors fetch a task's inputs only once it holds a slot, as MATRIX's did
# (--prefetch 0); jackdaw: the default, inputs of up to `slots` tasks fetched ahead.
EXECUTORS="${EXECUTORS:-matrix jackdaw}"
TIEBREAK_DIAG="${TIEBREAK_DIAG:-0}"
FILES="${FILES:-spread}"
file_args allpairs "$NODES"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
TARGET=0.90
. "$(dirname "$0")/datalib.sh"

TASKS=$((N * N))
wl="$B/allpairs.jsonl"
"$JACKDAW" gen allpairs -n "$N" --file-bytes "$FILE_BYTES" --duration-s "$DURATION" \
    "${FILE_ARGS[@]}" -o "$wl" ||
    { echo "allpairs: jackdaw gen failed" >&2; exit 1; }

section "allpairs: $N x $N = $TASKS tasks of $DURATION s, two files of $FILE_BYTES bytes each ($FILES)," \
    "$NODES daemons x $SLOTS slots, --bandwidth $BANDWIDTH, $RUNS run(s) each"
ratio=$(algo1_ratio $((2 * FILE_BYTES)) "$DURATION")
say "  Algorithm 1's ratio for a task: 2 x $FILE_BYTES B / $BANDWIDTH / $DURATION s = $ratio" \
    "(t = 0.5 by default; at or below t the task goes to SReadyQ, as under MLB)"

declare -A EFF   # "policy cache" -> median efficiency
status=0

# measure LABEL KEY ARGS... : RUNS runs of `jackdaw run` with ARGS; one line each, the
# median efficiency into EFF[KEY].
measure() {
    local label=$1 key=$2 r tag effs=() e
    shift 2
    say "  $label:"
    for ((r = 1; r <= RUNS; r++)); do
        tag="${key// /-}-$r"
        if ! data_run "$tag" "$@"; then
            status=1
            continue
        fi
        e=$(jget "$tag" 'j["efficiency"]')
        effs+=("$e")
        say "    run $r: $(run_figures "$tag")"
    done
    if [ ${#effs[@]} -gt 0 ]; then
        EFF[$key]=$(median "${effs[@]}")
        [ "$RUNS" -gt 1 ] && say "    median efficiency $(pct "${EFF[$key]}")"
    else
        EFF[$key]=""
    fi
}

# FLDS as the papers ran it: t "a small percentage (e.g. 10 %)" (paper 000), so that
# tasks follow their data, and tt scaled with the run: paper 002 set tt = 20 s near the
# end of a run of about 125 s (250K tasks of 100 ms on 200 cores); this run's ideal is
# N*N*D/(NODES*SLOTS), 5 s at the defaults, so tt = 0.5 s keeps the proportion.
FLDS_ARGS=(--threshold "$FLDS_T" --tt "$FLDS_TT")
for ex in $EXECUTORS; do
    case "$ex" in
    matrix) pf=(--prefetch 0) ;;
    *) pf=() ;;
    esac
    for cache in on off; do
        for p in mlb mdl flds; do
            extra=()
            [ "$p" = flds ] && extra=("${FLDS_ARGS[@]}")
            measure "$p, cache $cache, $ex executors" "$p $cache $ex" "$wl" --placement "$p" \
                --cache "$cache" "${pf[@]}" "${extra[@]}"
        done
    done
done

show() { [ -n "${EFF[$1]}" ] && pct "${EFF[$1]}" || echo "n/a"; }

say ""
for ex in $EXECUTORS; do
    say "  FLDS with caching, $ex executors: $(show "flds on $ex")   target >= $(pct $TARGET)" \
        "(paper 000: DAWS 85.9 %, data diffusion 75 %, active storage 91 %)"
    for cache in on off; do
        f=${EFF["flds $cache $ex"]} m=${EFF["mdl $cache $ex"]} l=${EFF["mlb $cache $ex"]}
        if [ -n "$f" ] && [ -n "$m" ] && [ -n "$l" ]; then
            yes=$(awk -v f="$f" -v m="$m" -v l="$l" 'BEGIN { print (f > m && m > l) ? "yes" : "no" }')
        else
            yes="n/a"
        fi
        say "  ordering FLDS > MDL > MLB, cache $cache, $ex executors: $yes" \
            "(FLDS $(show "flds $cache $ex"), MDL $(show "mdl $cache $ex"), MLB $(show "mlb $cache $ex"))"
    done
done

if [ "$TIEBREAK_DIAG" = 1 ]; then
    # The same workload with every file of set A one byte larger than the files of set
    # B: "the largest input" of t_I_J is then aI, on node I mod NODES, whichever node
    # the task is on (placement.c breaks ties for this node's object, else the first
    # listed, aI; until b74c36e it chose the lower node id, which gave node k
    # (15 - 2k)/64 of the tasks on 8 nodes: 375 down to 25, MDL efficiency ~52 %).
    wl2="$B/allpairs-a1.jsonl"
    "$PY" - "$wl" "$wl2" <<'EOF_PY' || { echo "allpairs: cannot write $wl2" >&2; exit 1; }
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        o = json.loads(line)
        if o.get("object", "").startswith("a"):
            o["bytes"] += 1
        out.write(json.dumps(o, separators=(",", ":")) + "\n")
EOF_PY
    say ""
    say "  diagnostic: files aI one byte larger than bJ, so every task follows aI (200 per node):"
    measure "mdl, cache on" "mdl-a1 on" "$wl2" --placement mdl --cache on
    measure "flds ${FLDS_ARGS[*]}, cache on" "flds-a1 on" "$wl2" --placement flds \
        "${FLDS_ARGS[@]}" --cache on
fi

exit $status
