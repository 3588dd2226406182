#!/bin/bash
# sim_bound.sh — no simulated run beats `jackdaw bound` (issue 20: "the DP bound is never
# beaten by a simulated run").  Every bound is a lower bound on any schedule of the
# workload on the cluster (tools/bound/bound.h), so a simulated makespan below one is a
# simulator that moves data faster than its links, runs a task faster than its speed
# or more tasks than its slots, or a bound that overcharges.
#
# Workloads (generated here; SEEDS of each): a bag, fan-in, fan-out and pipeline with
# random durations and outputs, the Table 3 fan-in, fan-out and pipeline scaled down,
# all-pairs 8 x 8, two Choleskys (one with random tile costs) and seismic shots.  Each
# is simulated on NODES_LIST nodes x SLOTS_LIST slots, at 1 Gbit/s and 100 Mbit/s, a
# third of the runs with speeds 1,0.5, under every VARIANT (placements, presets, the
# SimGrid engine, a host rate, a long latency, the submission modes), and `jackdaw bound`
# is computed for the same cluster.
#
# Prints the runs, the violations (each named), how many runs ended within 1 % of their
# bound, and which bound bound them.  Target: no violation.
#
#   tools/bench/sim_bound.sh [BUILD_DIR]
#
# Environment: SEEDS ("1 2"), NODES_LIST ("2 4 7"), SLOTS_LIST ("1 3"), VARIANTS (see
# below, one per word with commas for spaces).  About 3 minutes for the defaults on
# this machine (2,112 simulations).
. "$(dirname "$0")/lib.sh"

SEEDS="${SEEDS:-1 2}"
NODES_LIST="${NODES_LIST:-2 4 7}"
SLOTS_LIST="${SLOTS_LIST:-1 3}"
VARIANTS="${VARIANTS:---placement,flds --placement,ws --placement,mlb --placement,mdl \
--placement,rlds --placement,auto --policy,a2ws --policy,parsec --policy,lw --policy,ctws \
--policy,none --engine,simgrid --host-rate,200MB --latency,1ms --mode,one --mode,roundrobin}"

gens=(
    "bot --tasks 300 --duration 0.001-0.02"
    "fanin --tasks 300 --degree 3 --duration 0.001-0.02 --output-bytes 0-2000000"
    "fanout --tasks 300 --degree 4 --duration 0.001-0.02 --output-bytes 0-2000000"
    "pipeline --tasks 300 --pipe-size 6 --duration 0.001-0.02 --output-bytes 0-2000000"
    "fanin --tasks 400 --table3 --data-scale 0.1 --time-scale 0.2"
    "fanout --tasks 400 --table3 --data-scale 0.1 --time-scale 0.2"
    "pipeline --tasks 400 --table3 --data-scale 0.1 --time-scale 0.2"
    "allpairs -n 8"
    "cholesky --tiles 6"
    "cholesky --tiles 8 --tile-cost 0.005-0.02"
    "seismic --shots 40 --cost 0.01-0.03"
)

section "sim against jackdaw bound: ${#gens[@]} workloads x seeds $SEEDS on $NODES_LIST nodes" \
    "x $SLOTS_LIST slots, $(wc -w <<<"$VARIANTS") variants"

runs=0
violations=0
failed=0
tight=0
declare -A binding
for seed in $SEEDS; do
    for g in "${!gens[@]}"; do
        wl="$B/w$g-$seed.jsonl"
        # shellcheck disable=SC2086 # the generator's words
        if ! bounded 60 "$JACKDAW" gen ${gens[$g]} --seed "$seed" -o "$wl" 2>"$B/gen.err"; then
            say "  jackdaw gen ${gens[$g]}: $(tail -1 "$B/gen.err")"
            failed=$((failed + 1))
            continue
        fi
        k=0
        for nodes in $NODES_LIST; do
            for slots in $SLOTS_LIST; do
                for variant in $VARIANTS; do
                    k=$((k + 1))
                    # Alternate the link and the speeds over the grid, so that each
                    # workload meets both links and both clusters.
                    bw=1Gbit
                    [ $((k % 2)) -eq 0 ] && bw=100Mbit
                    cluster=(--nodes "$nodes" --slots "$slots" --bandwidth "$bw")
                    [ $((k % 3)) -eq 0 ] && cluster+=(--speeds 1,0.5)
                    read -r -a extra <<<"${variant//,/ }"
                    what="w$g (${gens[$g]}) seed $seed, ${cluster[*]} ${extra[*]}"
                    if ! bounded 120 "$JACKDAW" sim "$wl" "${cluster[@]}" "${extra[@]}" \
                        --seed "$((seed + k))" --json --quiet >"$B/sim.json" 2>"$B/sim.err"; then
                        say "  sim failed: $what: $(tail -1 "$B/sim.err")"
                        failed=$((failed + 1))
                        continue
                    fi
                    if ! bounded 60 "$JACKDAW" bound "$wl" "${cluster[@]}" --json \
                        >"$B/bound.json" 2>"$B/bound.err"; then
                        say "  bound failed: $what: $(tail -1 "$B/bound.err")"
                        failed=$((failed + 1))
                        continue
                    fi
                    read -r verdict name < <("$PY" - "$B/sim.json" "$B/bound.json" <<'EOF_PY'
import json, sys
s = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
mk = s["makespan_s"]
worst = max(("suboptimal_s", "capacity_s", "critical_path_s", "binding_s"), key=lambda k: b[k])
if mk < b[worst] * (1 - 1e-9):
    print("below %s: makespan %.9f s, bound %.9f s" % (worst, mk, b[worst]))
elif mk <= b["binding_s"] * 1.01:
    print("tight", b["binding"])
else:
    print("ok", b["binding"])
EOF_PY
                    )
                    runs=$((runs + 1))
                    case $verdict in
                    tight) tight=$((tight + 1)) ;;
                    ok) ;;
                    *)
                        violations=$((violations + 1))
                        say "  VIOLATION $what: $verdict $name"
                        continue
                        ;;
                    esac
                    binding[$name]=$((${binding[$name]:-0} + 1))
                done
            done
        done
    done
done

say "  $runs simulations, $violations below a bound (target 0), $failed failed to run;" \
    "$tight within 1 % of their bound"
for name in "${!binding[@]}"; do
    say "    bound by $name: ${binding[$name]}"
done
[ "$violations" -eq 0 ] && [ "$failed" -eq 0 ]
