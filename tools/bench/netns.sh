#!/bin/bash
# netns.sh — real links against the emulation (issue 16): the same workloads on a bed of
# network namespaces (tests/netns/bed.sh: one daemon per namespace, real kernel stacks
# joined by a bridge, every link shaped with tc tbf to RATE each way), launched as over
# ssh (`jackdaw run … --hostfile HOSTS --rsh tests/netns/rsh`), and on daemons on
# loopback, side by side (runs interleaved: namespaces, loopback, namespaces, …), each
# as a user runs it (`jackdaw run`, default flags but those named):
#   (a) all-pairs N x N (two FILE_BYTES inputs per task, 0.1 s tasks) on NODES x SLOTS
#       under --placement mlb, mdl and flds: efficiency on the namespaces beside loopback
#       with the in-process emulation of the same links (--bandwidth BANDWIDTH); the
#       difference in points, the papers' ordering FLDS > MDL > MLB on each, and what a
#       steal could still have moved at the end of the first run (tail_starts.py);
#   (b) NOOP throughput (NOOP_TASKS) and 10 ms BOT efficiency (BOT_TASKS) on NODES
#       namespaces against NODES local daemons (no emulation: each side's own links).
# Targets: (a) the ordering holds on real links and each policy within 5 points of the
# emulation; (b) a figure beside a figure.  Needs root (namespaces): says so and exits
# 0 otherwise.
#
#   tools/bench/netns.sh [BUILD_DIR]
#
# Environment: N (40), FILE_BYTES (2400000), FILES (spread: file k on node k mod NODES,
# an equal share each, under which MDL places all-pairs evenly and FLDS's monitor has
# nothing to correct; drawn: each file on a node drawn with SEED, `gen --nodes`, unequal
# shares as the paper's "uniformly distributed" files), SEED (1), DATA_NODES (unset; K:
# the files on the first K nodes only, round robin), NODES (8), SLOTS (4), RATE (1gbit),
# BANDWIDTH (1Gbit), RUNS (2), NOOP_TASKS (200000), BOT_TASKS (4000), PAIRS (3),
# PARTS ("a b"), POLICIES ("mlb mdl flds"), RUN_TIMEOUT (180 s per run), AP_ARGS (more `run` flags for (a), e.g.
# "--prefetch 0" for executors that fetch a task's inputs only once it holds a slot, as
# the papers' MATRIX executors did).
. "$(dirname "$0")/lib.sh"

N="${N:-40}"
FILE_BYTES="${FILE_BYTES:-2400000}"
DATA_NODES="${DATA_NODES:-}"
NODES="${NODES:-8}"
SLOTS="${SLOTS:-4}"
FILES="${FILES:-spread}"
file_args netns "$NODES"
RATE="${RATE:-1gbit}"
BANDWIDTH="${BANDWIDTH:-1Gbit}"
RUNS="${RUNS:-2}"
NOOP_TASKS="${NOOP_TASKS:-200000}"
BOT_TASKS="${BOT_TASKS:-4000}"
PAIRS="${PAIRS:-3}"
PARTS="${PARTS:-a b}"
RUN_TIMEOUT="${RUN_TIMEOUT:-180}"
read -r -a AP_ARGS <<<"${AP_ARGS:-}"
HERE="$(cd "$(dirname "$0")" && pwd)"
BED="$HERE/../../tests/netns/bed.sh"
RSH="$HERE/../../tests/netns/rsh"

if ! why=$("$BED" check); then
    section "netns: skipped: $why"
    exit 0
fi
netns_cleanup() {
    local rc=$?
    "$BED" down "$B/bed" >/dev/null 2>&1
    (exit $rc)
    cleanup
}
trap netns_cleanup EXIT
"$BED" up "$B/bed" "$NODES" "$RATE" || { echo "netns: bed.sh up failed" >&2; exit 1; }
sed "s/\$/ slots=$SLOTS/" "$B/bed/hostfile" >"$B/hosts"

# one LABEL WORKLOAD WHERE ARGS... : one `jackdaw run` on the namespaces (WHERE ns) or
# on loopback (lo); its summary in $B/LABEL.json; prints FIELD of it, or nothing.
one() {
    local label=$1 wl=$2 where=$3 at
    shift 3
    if [ "$where" = ns ]; then
        at=(--hostfile "$B/hosts" --rsh "$RSH")
    else
        at=(--nodes "$NODES" --slots "$SLOTS")
    fi
    bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" "${at[@]}" --json --quiet \
        --timeout "$RUN_TIMEOUT" "$@" >"$B/$label.json" 2>"$B/$label.err"
    if [ -z "$(json_get "$B/$label.json" 'j["makespan_s"]')" ]; then
        say "    $label: no summary:"
        sed 's/^/    | /' "$B/$label.err" | head -8
        return 1
    fi
}

pts() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", 100 * (a - b) }'; }

if [[ " $PARTS " == *" a "* ]]; then
    wl="$B/allpairs.jsonl"
    "$JACKDAW" gen allpairs -n "$N" --file-bytes "$FILE_BYTES" --duration-s 0.1 \
        "${FILE_ARGS[@]}" -o "$wl" ||
        { echo "netns: jackdaw gen failed" >&2; exit 1; }
    if [ -n "$DATA_NODES" ]; then
        # Skewed: the input files live on the first DATA_NODES nodes only, round robin.
        "$PY" - "$wl" "$DATA_NODES" <<'EOF_PY' || { echo "netns: cannot pin the objects" >&2; exit 1; }
import json, sys
path, k = sys.argv[1], int(sys.argv[2])
lines, i = [], 0
for line in open(path):
    o = json.loads(line)
    if "object" in o:
        o["node"] = i % k
        i += 1
    lines.append(json.dumps(o, separators=(",", ":")))
open(path, "w").write("\n".join(lines) + "\n")
EOF_PY
    fi
    section "netns (a): all-pairs $N x $N, 0.1 s tasks, inputs of $FILE_BYTES B${DATA_NODES:+ on nodes 0..$((DATA_NODES - 1)) only}, files $FILES, $NODES x $SLOTS" \
        "slots: $NODES namespaces with $RATE tbf links against loopback with --bandwidth" \
        "$BANDWIDTH, $RUNS run(s) each, interleaved${AP_ARGS[*]:+; flags: ${AP_ARGS[*]}}"
    declare -A E
    for pol in ${POLICIES:-mlb mdl flds}; do
        ns=() lo=()
        for ((r = 1; r <= RUNS; r++)); do
            one "ap-$pol-ns-$r" "$wl" ns --placement "$pol" --trace "$B/ap-$pol-ns-$r.avro" \
                "${AP_ARGS[@]}" &&
                ns+=("$(json_get "$B/ap-$pol-ns-$r.json" 'j["efficiency"]')")
            one "ap-$pol-lo-$r" "$wl" lo --placement "$pol" --bandwidth "$BANDWIDTH" "${AP_ARGS[@]}" &&
                lo+=("$(json_get "$B/ap-$pol-lo-$r.json" 'j["efficiency"]')")
        done
        [ ${#ns[@]} -gt 0 ] && [ ${#lo[@]} -gt 0 ] || continue
        E[$pol ns]=$(median "${ns[@]}")
        E[$pol lo]=$(median "${lo[@]}")
        moved_ns=$(json_get "$B/ap-$pol-ns-1.json" 'j["bytes_moved"]')
        moved_lo=$(json_get "$B/ap-$pol-lo-1.json" 'j["bytes_moved"]')
        say "  $pol: namespaces $(pct "${E[$pol ns]}"), loopback emulation $(pct "${E[$pol lo]}")" \
            "(difference $(pts "${E[$pol ns]}" "${E[$pol lo]}") points; target within 5);" \
            "bytes moved, first run: $((moved_ns / 1000000)) MB / $((moved_lo / 1000000)) MB"
        say "    each run, namespaces: $(for v in "${ns[@]}"; do printf '%s ' "$(pct "$v")"; done)"
        say "    each run, loopback:   $(for v in "${lo[@]}"; do printf '%s ' "$(pct "$v")"; done)"
        # What a steal could still move at the end (FLDS's only lever over MDL).
        say "    tail, first namespace run: $("$PY" "$HERE/tail_starts.py" "$JACKDAW" "$B/ap-$pol-ns-1.avro" 2>&1)"
    done
    for w in ns lo; do
        if [ -n "${E[flds $w]:-}" ] && [ -n "${E[mdl $w]:-}" ] && [ -n "${E[mlb $w]:-}" ]; then
            order=$(awk -v f="${E[flds $w]}" -v d="${E[mdl $w]}" -v m="${E[mlb $w]}" \
                'BEGIN { print (f > d && d > m) ? "yes" : "no" }')
            say "  FLDS > MDL > MLB on $([ $w = ns ] && echo namespaces || echo loopback): $order"
        fi
    done
fi

if [[ " $PARTS " == *" b "* ]]; then
    section "netns (b): $NODES namespaces against $NODES local daemons, default slots, $PAIRS" \
        "pair(s), interleaved"
    noop="$B/noop.jsonl"
    bot="$B/bot.jsonl"
    "$JACKDAW" gen bot --tasks "$NOOP_TASKS" --kind noop -o "$noop" &&
        "$JACKDAW" gen bot --tasks "$BOT_TASKS" --kind sleep --duration-s 0.01 -o "$bot" ||
        { echo "netns: jackdaw gen failed" >&2; exit 1; }
    sed 's/ slots=[0-9]*$//' "$B/hosts" >"$B/hosts-default"
    for what in noop bot; do
        ns=() lo=()
        field=$([ $what = noop ] && echo throughput_tps || echo efficiency)
        for ((r = 1; r <= PAIRS; r++)); do
            bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$B/$what.jsonl" --hostfile "$B/hosts-default" \
                --rsh "$RSH" --json --quiet --timeout "$RUN_TIMEOUT" >"$B/$what-ns-$r.json" 2>"$B/$what-ns-$r.err"
            v=$(json_get "$B/$what-ns-$r.json" "j[\"$field\"]")
            [ -n "$v" ] && ns+=("$v")
            bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$B/$what.jsonl" --nodes "$NODES" \
                --json --quiet --timeout "$RUN_TIMEOUT" >"$B/$what-lo-$r.json" 2>"$B/$what-lo-$r.err"
            v=$(json_get "$B/$what-lo-$r.json" "j[\"$field\"]")
            [ -n "$v" ] && lo+=("$v")
        done
        if [ ${#ns[@]} -eq 0 ] || [ ${#lo[@]} -eq 0 ]; then
            say "  $what: n/a ($(head -3 "$B/$what-ns-1.err" "$B/$what-lo-1.err" | tr '\n' ' '))"
            continue
        fi
        a=$(median "${ns[@]}")
        b=$(median "${lo[@]}")
        if [ $what = noop ]; then
            say "  NOOP, $NOOP_TASKS tasks: namespaces $(fmt_rate "$a") tasks/s, loopback" \
                "$(fmt_rate "$b") tasks/s (medians; namespaces/loopback" \
                "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }'))"
        else
            say "  10 ms BOT, $BOT_TASKS tasks: efficiency namespaces $(pct "$a"), loopback" \
                "$(pct "$b") (medians; $(pts "$a" "$b") points)"
        fi
    done
fi
