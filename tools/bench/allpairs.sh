#!/bin/bash
# allpairs.sh — the all-pairs workload of paper 000 (§IV.C.2 and §IV.D) under the
# placement policies MLB, MDL and FLDS, each with and without caching: N x N independent
# sleep tasks of 0.1 s, task t_I_J reading file aI of set A and bJ of set B, the 2N
# files spread over the nodes (object k on node k mod NODES), on 8 daemons x 4 slots
# with emulated 1 Gbit/s links (--bandwidth, also Algorithm 1's net_band).
#
# Prints per run: efficiency (ideal / makespan, ideal = N*N*0.1 s / slots), makespan,
# locality hit rate, bytes moved, cache hit rate, tasks pushed, tasks per node; the
# median over RUNS when RUNS > 1; FLDS with caching next to its target (>= 90 %); the
# papers' ordering FLDS > MDL > MLB as "yes/no (values)", with and without caching;
# then FLDS with a lower threshold (LOW_T), because with the default t = 0.5 and these
# sizes Algorithm 1 sends every task to the shared queue (see README.md).  With
# TIEBREAK_DIAG=1, MDL and low-threshold FLDS run again with the files of set A one byte
# larger, so that every task follows aI: a check of how Algorithm 1's tie-break between
# a task's two equal-sized inputs spreads the data-following policies' load.
#
#   tools/bench/allpairs.sh [BUILD_DIR]
#
# Environment: N (40), FILE_BYTES (2400000), DURATION (0.1 s), NODES (8), SLOTS (4),
# BANDWIDTH (1Gbit), RUNS (1), LOW_T (0.1; empty: skip), TIEBREAK_DIAG (0),
# RUN_TIMEOUT (120 s per run), TMPFS (1), LOGS (0).
. "$(dirname "$0")/lib.sh"

N="${N:-40}"
FILE_BYTES="${FILE_BYTES:-2400000}"
DURATION="${DURATION:-0.1}"
NODES="${NODES:-8}"
SLOTS="${SLOTS:-4}"
BANDWIDTH="${BANDWIDTH:-1Gbit}"
RUNS="${RUNS:-1}"
LOW_T="${LOW_T-0.1}"
TIEBREAK_DIAG="${TIEBREAK_DIAG:-0}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
TARGET=0.90
. "$(dirname "$0")/datalib.sh"

TASKS=$((N * N))
wl="$B/allpairs.jsonl"
"$JACKDAW" gen allpairs -n "$N" --file-bytes "$FILE_BYTES" --duration-s "$DURATION" -o "$wl" ||
    { echo "allpairs: jackdaw gen failed" >&2; exit 1; }

section "allpairs: $N x $N = $TASKS tasks of $DURATION s, two files of $FILE_BYTES bytes each," \
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

for cache in on off; do
    for p in mlb mdl flds; do
        measure "$p, cache $cache" "$p $cache" "$wl" --placement "$p" --cache "$cache"
    done
done

show() { [ -n "${EFF[$1]}" ] && pct "${EFF[$1]}" || echo "n/a"; }

say ""
say "  FLDS with caching: $(show "flds on")   target >= $(pct $TARGET)" \
    "(paper 000: DAWS 85.9 %, data diffusion 75 %, active storage 91 %)"
for cache in on off; do
    f=${EFF["flds $cache"]} m=${EFF["mdl $cache"]} l=${EFF["mlb $cache"]}
    if [ -n "$f" ] && [ -n "$m" ] && [ -n "$l" ]; then
        yes=$(awk -v f="$f" -v m="$m" -v l="$l" 'BEGIN { print (f > m && m > l) ? "yes" : "no" }')
    else
        yes="n/a"
    fi
    say "  ordering FLDS > MDL > MLB, cache $cache: $yes (FLDS $(show "flds $cache")," \
        "MDL $(show "mdl $cache"), MLB $(show "mlb $cache"))"
done

if [ -n "$LOW_T" ]; then
    say ""
    # Line 1 compares all the input with t, line 12 the largest object alone.
    largest=$(algo1_ratio "$FILE_BYTES" "$DURATION")
    follow=$(awk -v r="$largest" -v t="$LOW_T" 'BEGIN {
        if (r == "n/a") print "?"; else if (r + 0 > t + 0) print "tasks follow their data";
        else print "at most t, tasks still go to SReadyQ" }')
    measure "extra: flds --threshold $LOW_T, cache on (largest input's ratio $largest: $follow)" \
        "flds-t$LOW_T on" "$wl" --placement flds --threshold "$LOW_T" --cache on
fi

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
    if [ -n "$LOW_T" ]; then
        measure "flds --threshold $LOW_T, cache on" "flds-t$LOW_T-a1 on" "$wl2" \
            --placement flds --threshold "$LOW_T" --cache on
    fi
fi

exit $status
