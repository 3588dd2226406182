#!/bin/bash
# sim.sh — the simulator at scale (issue 20): the bag of tasks and the four DAGs of paper
# 002 Table 3 (`jackdaw gen SHAPE --table3`: 0-100 ms sleeps, outputs of 0-10 MB scaled
# by DATA_SCALE, degree and pipe size 10) on 10^3, 10^4 and 10^5 simulated nodes of one
# slot each, TASKS_PER_SLOT tasks a slot, under the daemons' defaults (FLDS, adaptive
# stealing) with 1 Gbit/s links and 100 us latency.
#
# Prints per run: the simulated makespan, efficiency and throughput (tasks over the
# simulated makespan, beside paper 002 Fig. 12's projection at 128 K cores: BOT 2.33 M,
# Pipeline 1.85 M, Fan-Out 1.16 M, Fan-In 852 K tasks/s), and the simulator's own cost:
# wall time, peak resident memory (of the whole `jackdaw sim` process: workload parse
# included), engine events per second and simulated messages per second (a load-query
# round to k victims is two engine events and 2k messages).  Targets: >= 10^6 events/s;
# 10^6 nodes in under 24 GiB (NODES_LIST="1000000" to try it: a 10^7-task workload).
#
#   tools/bench/sim.sh [BUILD_DIR]
#
# Environment: SHAPES ("bot fanin fanout pipeline"), NODES_LIST ("1000 10000 100000"),
# TASKS_PER_SLOT (10), DATA_SCALE (0.1), RUN_TIMEOUT (1800 s per run).
. "$(dirname "$0")/lib.sh"

SHAPES="${SHAPES:-bot fanin fanout pipeline}"
NODES_LIST="${NODES_LIST:-1000 10000 100000}"
TASKS_PER_SLOT="${TASKS_PER_SLOT:-10}"
DATA_SCALE="${DATA_SCALE:-0.1}"
RUN_TIMEOUT="${RUN_TIMEOUT:-1800}"

section "sim: $SHAPES on $NODES_LIST simulated nodes x 1 slot, $TASKS_PER_SLOT tasks a slot," \
    "table3 (data x $DATA_SCALE), flds, 1Gbit, 100 us"
printf '  %-9s %8s %9s %10s %7s %13s %9s %9s %11s %11s\n' shape nodes tasks makespan eff \
    "tasks/s" "wall" "peak" "events/s" "msgs/s"
for nodes in $NODES_LIST; do
    tasks=$((nodes * TASKS_PER_SLOT))
    for shape in $SHAPES; do
        wl="$B/$shape-$tasks.jsonl"
        if [ ! -f "$wl" ]; then
            "$JACKDAW" gen "$shape" --table3 --tasks "$tasks" --data-scale "$DATA_SCALE" -o "$wl" ||
                { echo "sim: jackdaw gen $shape failed" >&2; exit 1; }
        fi
        out="$B/$shape-$nodes.json"
        bounded "$RUN_TIMEOUT" /usr/bin/time -f "%M" -o "$B/time.txt" "$JACKDAW" sim "$wl" \
            --nodes "$nodes" --slots 1 --bandwidth 1Gbit --json --quiet >"$out" 2>"$B/sim.err"
        rc=$?
        if [ $rc -ne 0 ]; then
            say "  $shape on $nodes nodes: jackdaw sim exited $rc: $(tail -1 "$B/sim.err")"
            continue
        fi
        "$PY" - "$out" "$B/time.txt" "$shape" "$nodes" <<'EOF_PY'
import json, sys
j = json.load(open(sys.argv[1]))
peak_kb = int(open(sys.argv[2]).read().split()[-1])
wall = j["wall_s"]
print("  %-9s %8d %9d %9.3fs %6.1f%% %13s %8.2fs %7.0f MB %11s %11s" % (
    sys.argv[3], int(sys.argv[4]), j["tasks"], j["makespan_s"], 100 * j["efficiency"],
    "{:,.0f}".format(j["throughput_tps"]), wall, peak_kb / 1024,
    "{:,.0f}".format(j["events"] / wall if wall > 0 else 0),
    "{:,.0f}".format(j["messages"] / wall if wall > 0 else 0)))
EOF_PY
    done
done
