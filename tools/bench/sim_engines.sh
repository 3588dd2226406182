#!/bin/bash
# sim_engines.sh — the simulator's two engines on the same runs (`jackdaw sim --engine
# des|simgrid`): our discrete-event core (core/sim/sim.c) and SimGrid (core/sim/sim_sg.c),
# at 10, 100, 1,000, 10,000 and 100,000 simulated nodes of SLOTS slots, TASKS_PER_SLOT
# tasks a slot, under the default stealing (adaptive, sqrt victims, load queries, half
# the queue) and PLACEMENT with 100 us latency: a bag of tasks (10-100 ms sleeps, no
# data) and a fan-out tree (degree 4, the same sleeps, 1 MB outputs over BANDWIDTH
# links).  Where the fan-out's data takes a good part of a task's time, the engines
# part a little: both share a writer's link between the children that read its output
# and a reader's between its fetches, SimGrid by max-min fairness, the discrete-event
# core locally (sim_net.c), 7 % apart at 10 nodes, within 4 % at 100 and 1,000 (11-28 %
# before the discrete-event core shared a writer's link; BANDWIDTH=10Gbit brings them
# within 1 %).  PLACEMENT is ws: under FLDS the fan-out's pushes to the data feed on
# those shared links and the gap swings with the seed (+12 % to +180 % at 300 nodes).
#
# Prints per engine and run: the wall time of the simulation (the median of RUNS where a
# run takes less than CHEAP seconds, else one run), the peak resident memory of the
# whole `jackdaw sim` (/usr/bin/time %M: the larger of the command and SimGrid's child
# process), the engine's events (the discrete-event core's heap events; SimGrid's
# activities: communications, executions, sleeps) and messages per second of wall
# time, and the simulated makespans side by side with their difference.  A SimGrid run
# that does not end within SG_TIMEOUT is reported as such, and the larger scales are
# not tried once a run took more than a tenth of it (ten times the nodes take at least
# ten times as long).  Then one line per scale: which engine serves it.
#
#   tools/bench/sim_engines.sh [BUILD_DIR]
#
# Takes 15-25 minutes (SimGrid's runs at 10,000 nodes up to their time limit); not in
# run-all.sh.  Environment: NODES_LIST ("10 100 1000 10000 100000"), SHAPES ("bot
# fanout"), SLOTS (4), TASKS_PER_SLOT (10), RUNS (3), CHEAP (30 s), SG_TIMEOUT (300 s),
# DES_TIMEOUT (900 s), AGREE (15: the % within which the makespans count as agreeing),
# BANDWIDTH (1Gbit: the fan-out's links), PLACEMENT (ws).
. "$(dirname "$0")/lib.sh"

NODES_LIST="${NODES_LIST:-10 100 1000 10000 100000}"
SHAPES="${SHAPES:-bot fanout}"
SLOTS="${SLOTS:-4}"
TASKS_PER_SLOT="${TASKS_PER_SLOT:-10}"
RUNS="${RUNS:-3}"
CHEAP="${CHEAP:-30}"
SG_TIMEOUT="${SG_TIMEOUT:-300}"
DES_TIMEOUT="${DES_TIMEOUT:-900}"
AGREE="${AGREE:-15}"
BANDWIDTH="${BANDWIDTH:-1Gbit}"
PLACEMENT="${PLACEMENT:-ws}"

if ! "$JACKDAW" sim --help 2>&1 | grep -q -- '--engine'; then
    echo "sim_engines: this jackdaw has no --engine" >&2
    exit 2
fi

# One simulation: `run ENGINE WORKLOAD NODES FLAGS...` writes its JSON summary to
# $B/run.json and its peak RSS (KiB) to $B/time.txt; returns jackdaw's status (124:
# timed out).
run() {
    local engine=$1 wl=$2 nodes=$3 limit
    shift 3
    limit=$DES_TIMEOUT
    [ "$engine" = simgrid ] && limit=$SG_TIMEOUT
    rm -f "$B/run.json" "$B/time.txt"
    bounded "$limit" /usr/bin/time -f "%M" -o "$B/time.txt" nice -n 19 "$JACKDAW" sim "$wl" \
        --nodes "$nodes" --slots "$SLOTS" --placement "$PLACEMENT" --engine "$engine" \
        --json --quiet "$@" \
        >"$B/run.json" 2>"$B/sim.err"
}

# Results, one line per shape, scale and engine: shape nodes engine status wall peak_kb
# events messages makespan (status: ok, timeout, failed, skipped).
RESULTS="$B/results.txt"
: >"$RESULTS"

# measure ENGINE SHAPE WORKLOAD NODES FLAGS... : RUNS runs when cheap, one otherwise;
# appends the median's line to $RESULTS and prints it.
measure() {
    local engine=$1 shape=$2 wl=$3 nodes=$4 i rc walls=() peaks=() line wall
    shift 4
    for ((i = 0; i < RUNS; i++)); do
        run "$engine" "$wl" "$nodes" "$@"
        rc=$?
        if [ $rc -ne 0 ]; then
            if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
                echo "$shape $nodes $engine timeout" >>"$RESULTS"
                say "  $(printf '%-7s %7s %-8s' "$shape" "$nodes" "$engine") did not end" \
                    "within $( [ "$engine" = simgrid ] && echo "$SG_TIMEOUT" || echo "$DES_TIMEOUT") s"
            else
                echo "$shape $nodes $engine failed" >>"$RESULTS"
                say "  $shape $nodes $engine: jackdaw sim exited $rc: $(tail -1 "$B/sim.err")"
            fi
            return 1
        fi
        wall=$(json_get "$B/run.json" 'j["wall_s"]')
        walls+=("$wall")
        peaks+=("$(tail -1 "$B/time.txt")")
        cp "$B/run.json" "$B/run-$i.json"
        # Expensive runs are measured once.
        awk -v w="$wall" -v c="$CHEAP" 'BEGIN { exit !(w >= c) }' && break
    done
    wall=$(median "${walls[@]}")
    line=$("$PY" - "$B/run-0.json" "$shape" "$nodes" "$engine" "$wall" \
        "$(median "${peaks[@]}")" "${#walls[@]}" <<'EOF_PY'
import json, sys
j = json.load(open(sys.argv[1]))
shape, nodes, engine, wall, peak, n = sys.argv[2:8]
print(shape, nodes, engine, "ok", wall, peak, j["events"], j["messages"], repr(j["makespan_s"]),
      n, j["tasks"])
EOF_PY
    )
    echo "$line" >>"$RESULTS"
    "$PY" - "$line" <<'EOF_PY'
import sys
shape, nodes, engine, _, wall, peak, events, msgs, mk, n, tasks = sys.argv[1].split()
wall, events, msgs = float(wall), int(events), int(msgs)
rate = lambda x: "{:,.0f}".format(x / wall) if wall > 0 else "-"
print("  %-7s %7s %-8s %9s %10.3f s %3s %8.0f MB %12s %12s %12s %10.4f s" % (
    shape, nodes, engine, "{:,}".format(int(tasks)), wall, "x" + n, int(peak) / 1024,
    "{:,}".format(events), rate(events), rate(msgs), float(mk)))
EOF_PY
}

section "sim_engines: des vs simgrid on $SHAPES, $NODES_LIST nodes x $SLOTS slots," \
    "$TASKS_PER_SLOT tasks a slot, $PLACEMENT + adaptive stealing, 100 us (fanout: 1 MB outputs," \
    "$BANDWIDTH)"
printf '  %-7s %7s %-8s %9s %12s %3s %11s %12s %12s %12s %12s\n' shape nodes engine tasks \
    "wall" runs "peak RSS" events "events/s" "msgs/s" makespan
sg_stop=""   # the shapes SimGrid is no longer tried on
sg_last=()   # per shape: "shape:ok:WALL" or "shape:failed", its last SimGrid run
for nodes in $NODES_LIST; do
    tasks=$((nodes * SLOTS * TASKS_PER_SLOT))
    for shape in $SHAPES; do
        wl="$B/$shape-$tasks.jsonl"
        flags=()
        case "$shape" in
        bot) gen=(bot --duration-s 0.01-0.1) ;;
        fanout)
            gen=(fanout --degree 4 --duration-s 0.01-0.1 --output-bytes 1000000)
            flags=(--bandwidth "$BANDWIDTH")
            ;;
        *)
            echo "sim_engines: unknown shape '$shape' (bot, fanout)" >&2
            exit 2
            ;;
        esac
        if ! bounded 600 "$JACKDAW" gen "${gen[@]}" --tasks "$tasks" --seed 1 -o "$wl"; then
            echo "sim_engines: jackdaw gen $shape failed" >&2
            exit 1
        fi
        measure des "$shape" "$wl" "$nodes" "${flags[@]}"
        case " $sg_stop " in
        *" $shape "*)
            echo "$shape $nodes simgrid skipped" >>"$RESULTS"
            last=$(printf '%s\n' "${sg_last[@]}" | grep "^$shape:" | tail -1 | cut -d: -f2-)
            case "$last" in
            ok:*)
                last="took $(awk -v w="${last#ok:}" 'BEGIN { printf "%.1f", w }') s, ten"
                last="$last times the nodes would take over $SG_TIMEOUT s"
                ;;
            *) last="did not end within $SG_TIMEOUT s" ;;
            esac
            say "  $(printf '%-7s %7s %-8s' "$shape" "$nodes" simgrid) not tried: the scale" \
                "below $last"
            ;;
        *)
            if measure simgrid "$shape" "$wl" "$nodes" "${flags[@]}"; then
                wall=$(tail -1 "$RESULTS" | cut -d' ' -f5)
                sg_last+=("$shape:ok:$wall")
                awk -v w="$wall" -v t="$SG_TIMEOUT" 'BEGIN { exit !(w * 10 > t) }' &&
                    sg_stop="$sg_stop $shape"
            else
                sg_last+=("$shape:failed")
                sg_stop="$sg_stop $shape"
            fi
            ;;
        esac
        rm -f "$wl"
    done
done

echo
section "makespans side by side, and which engine serves each scale"
"$PY" - "$RESULTS" "$AGREE" "$SG_TIMEOUT" <<'EOF_PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows[(f[0], int(f[1]), f[2])] = f
agree, budget = float(sys.argv[2]), float(sys.argv[3])
scales = sorted({k[1] for k in rows})
shapes = []
for k in rows:
    if k[0] not in shapes:
        shapes.append(k[0])
print("  %-7s %7s %12s %12s %8s %11s %11s %8s" % ("shape", "nodes", "des", "simgrid", "diff",
                                                   "des wall", "sg wall", "sg/des"))
for n in scales:
    for s in shapes:
        d, g = rows.get((s, n, "des")), rows.get((s, n, "simgrid"))
        if not d or d[3] != "ok":
            print("  %-7s %7d %12s" % (s, n, d[3] if d else "-"))
            continue
        if not g or g[3] != "ok":
            print("  %-7s %7d %10.4f s %12s %8s %9.3f s %11s" % (
                s, n, float(d[8]), g[3] if g else "-", "", float(d[4]), ""))
            continue
        dm, gm, dw, gw = float(d[8]), float(g[8]), float(d[4]), float(g[4])
        print("  %-7s %7d %10.4f s %10.4f s %+7.1f%% %9.3f s %9.3f s %7.0fx" % (
            s, n, dm, gm, 100 * (gm - dm) / dm, dw, gw, gw / dw if dw > 0 else 0))
print()
for n in scales:
    ok, slow = [], []
    for s in shapes:
        d, g = rows.get((s, n, "des")), rows.get((s, n, "simgrid"))
        if g and g[3] == "ok":
            diff = 100 * abs(float(g[8]) - float(d[8])) / float(d[8])
            ok.append("%s in %.1f s against %.3f s, makespans %s %.1f %%" % (
                s, float(g[4]), float(d[4]), "within" if diff <= agree else "apart by", diff))
        else:
            slow.append("%s %s" % (s, {"timeout": "did not end within %.0f s" % budget,
                                      "skipped": "not tried (over %.0f s)" % budget,
                                      "failed": "failed"}.get(g[3] if g else "", "not run")))
    if ok and not slow:
        print("  %7d nodes: both engines; SimGrid where its shared links matter, the "
              "discrete-event core for speed (SimGrid: %s)" % (n, "; ".join(ok)))
    elif ok:
        print("  %7d nodes: the discrete-event core; SimGrid at the edge of its reach "
              "(SimGrid: %s; %s)" % (n, "; ".join(ok), "; ".join(slow)))
    else:
        print("  %7d nodes: the discrete-event core only (SimGrid: %s)" % (n, "; ".join(slow)))
EOF_PY
