#!/bin/bash
# t_99_workloads: the work-stealing benchmark generators and the heterogeneity presets.
# Each of `jackdaw gen seismic`, `gen cholesky` and `gen uts` writes a small workload
# that runs to completion on 4 nodes: exit 0, every task done in the --json summary,
# and the per-task records show each task run once with every dependency held.  The
# Cholesky run uses data-aware placement without stealing, under which most tasks run
# on the block-cyclic owner of the tile they update (the generator's initial
# placement); the UTS run uses the recipe of jackdaw-workload(5): every task submitted
# to node 0 and children following their parent's data.  Then `--speeds C1` on 8 nodes:
# the cluster file and `jackdaw status` show the mix of paper 001 Table 2 (speed
# cores/24), one slot per node by default, the mix's cores with `--slots cores`, and a
# seismic run on that cluster completes.  Bad preset and slot flags are refused before
# anything starts.
. "$(dirname "$0")/lib.sh"

# run_complete LABEL WORKLOAD NODES [run options...]: runs it, checks summary and records.
run_complete() {
    local label=$1 wl=$2 nodes=$3 count
    shift 3
    count=$(grep -c '"id"' "$wl")
    jd_run "$label" "$wl" --nodes "$nodes" --json --records "$T/$label.records" "$@"
    expect_code 0 "$RUN_RC" "jackdaw run ($label, $count tasks)"
    "$PY" - "$T/$label.out" "$count" "$nodes" <<'EOF_PY' || fail "$label: --json summary is wrong: $(cat "$T/$label.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
n, nodes = int(sys.argv[2]), int(sys.argv[3])
assert s["tasks"] == n, "tasks %r != %d" % (s["tasks"], n)
assert s["tasks_done"] == n, "tasks_done %r != %d" % (s["tasks_done"], n)
assert s["tasks_failed"] == 0 and s["tasks_cancelled"] == 0, s
assert len(s["nodes"]) == nodes, "nodes has %d entries" % len(s["nodes"])
EOF_PY
    check_records "$wl" "$T/$label.records"
    note "$label: $count tasks done"
}

# --- seismic shots: independent, homogeneous ------------------------------------------
"$JACKDAW" gen seismic --shots 40 --cost 1 --time-scale 0.01 --seed 1 -o "$T/seismic.jsonl" ||
    fail "jackdaw gen seismic failed"
[ "$(grep -c '"duration_s":0.01' "$T/seismic.jsonl")" -eq 40 ] ||
    fail "gen seismic: expected 40 shots of 0.01 s"
run_complete seismic "$T/seismic.jsonl" 4 --slots 2

# --- tiled sparse Cholesky: 6 x 6 tiles, half the off-diagonal ones empty -------------
"$JACKDAW" gen cholesky --tiles 6 --sparsity 0.5 --nodes 4 --tile-cost 0.02 \
    --time-scale 0.5 --seed 3 -o "$T/cholesky.jsonl" || fail "jackdaw gen cholesky failed"
"$PY" - "$T/cholesky.jsonl" <<'EOF_PY' || fail "gen cholesky: wrong task or tile counts"
import json, sys
tasks = objects = empty = 0
nodes = set()
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "object" in d:
        objects += 1
        nodes.add(d["node"])
    else:
        tasks += 1
        empty += d.get("kind", "noop") == "noop"
# T + T(T-1) + T(T-1)(T-2)/6 tasks, T(T+1)/2 tiles on a 2 x 2 grid.
assert tasks == 6 + 30 + 20, tasks
assert objects == 21, objects
assert nodes == {0, 1, 2, 3}, nodes
assert 0 < empty < tasks, empty
EOF_PY
run_complete cholesky "$T/cholesky.jsonl" 4 --slots 2 --placement mdl --steal none
"$PY" - "$T/cholesky.jsonl" "$T/cholesky.records" <<'EOF_PY' || fail "cholesky: data-aware placement ignored the tiles' owners"
import json, sys
tile_of = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "id" in d:
        i, j = (int(x) for x in d["inputs"][0].split("_")[1:])
        tile_of[d["id"]] = (i, j)
on_owner = total = 0
for line in open(sys.argv[2]):
    r = json.loads(line)
    i, j = tile_of[r["id"]]
    total += 1
    on_owner += r["node"] == (i % 2) * 2 + j % 2
# Hashed submission alone puts a quarter there; ties between equal tiles keep some
# tasks where one of their inputs already is.
assert on_owner >= 0.4 * total, "%d of %d tasks ran on their tile's owner" % (on_owner, total)
print("cholesky: %d of %d tasks ran on their tile's owner" % (on_owner, total))
EOF_PY

# --- unbalanced tree search ---------------------------------------------------------
"$JACKDAW" gen uts --b 6 --m 3 --q 0.33 --depth 6 --cost 0.01 --seed 6 -o "$T/uts.jsonl" ||
    fail "jackdaw gen uts failed"
[ "$(grep -c '"parents":\["t0"\]' "$T/uts.jsonl")" -eq 6 ] || fail "gen uts: the root must have 6 children"
[ "$(grep -c '"id"' "$T/uts.jsonl")" -eq 55 ] || fail "gen uts: seed 6 grows a tree of 55 nodes"
run_complete uts "$T/uts.jsonl" 4 --slots 2 --mode one --placement mdl
"$JACKDAW" gen uts --b 120 --m 5 --q 0.3 --cost 1 --max-tasks 5000 -o "$T/big.jsonl" \
    >/dev/null 2>"$T/big.err"
expect_code 2 $? "gen uts past --max-tasks"
grep -q -- "--max-tasks 5000" "$T/big.err" || fail "gen uts: the refusal does not name --max-tasks: $(cat "$T/big.err")"
[ ! -e "$T/big.jsonl" ] || fail "gen uts: a refused tree left a file behind"

# --- heterogeneity presets: paper 001 Table 2 ----------------------------------------
C1_CORES="24 1 8 2 16 4 24 1"
# check_mix FILE SLOTS...: the cluster file's speeds are cores/24 and its slots SLOTS.
check_mix() {
    local file=$1
    shift
    "$PY" - "$file" "$C1_CORES" "$*" <<'EOF_PY' || fail "cluster file $1 does not hold the C1 mix"
import json, sys
c = json.load(open(sys.argv[1]))
cores = [int(x) for x in sys.argv[2].split()]
slots = [int(x) for x in sys.argv[3].split()]
got = [(n["slots"], n["speed"]) for n in c["nodes"]]
assert len(got) == 8, got
for (s, v), k, want in zip(got, cores, slots):
    assert abs(v - k / 24) < 1e-9 and s == want, got
EOF_PY
}

# Launched by hand: start_cluster always passes --slots, and a mix without it is the
# case under test (one slot per node).
CLUSTER_FILE="$T/mix/cluster.json"
timeout -k 5 60 "$JACKDAW" launch --nodes 8 --speeds C1 --cluster "$CLUSTER_FILE" --no-trace \
    >"$T/mix.out" 2>&1 || { cat "$T/mix.out" >&2; fail "jackdaw launch --speeds C1 failed"; }
for pid in $(cluster_pids "$CLUSTER_FILE"); do CLUSTER_PIDS+=("$pid"); done
check_mix "$CLUSTER_FILE" 1 1 1 1 1 1 1 1
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" --json >"$T/status.json" ||
    fail "jackdaw status failed"
"$PY" - "$T/status.json" "$C1_CORES" <<'EOF_PY' || fail "status does not report the C1 speeds: $(cat "$T/status.json")"
import json, sys
s = json.load(open(sys.argv[1]))
cores = [int(x) for x in sys.argv[2].split()]
nodes = sorted(s["nodes"], key=lambda n: n["id"])
assert [n["slots"] for n in nodes] == [1] * 8, nodes
assert all(abs(n["speed"] - k / 24) < 1e-6 for n, k in zip(nodes, cores)), nodes
EOF_PY
stop_cluster
note "--speeds C1: speeds cores/24, one slot each (cluster file and status)"

CLUSTER_FILE="$T/cores/cluster.json"
timeout -k 5 60 "$JACKDAW" launch --nodes 8 --speeds c1 --slots cores --cluster "$CLUSTER_FILE" \
    --no-trace >"$T/cores.out" 2>&1 || { cat "$T/cores.out" >&2; fail "jackdaw launch --slots cores failed"; }
for pid in $(cluster_pids "$CLUSTER_FILE"); do CLUSTER_PIDS+=("$pid"); done
check_mix "$CLUSTER_FILE" $C1_CORES
stop_cluster
note "--speeds C1 --slots cores: the mix's cores as slots"

# The paper's experiment, small: homogeneous shots over the C1 mix.
"$JACKDAW" gen seismic --shots 48 --cost 1 --time-scale 0.02 -o "$T/shots.jsonl" ||
    fail "jackdaw gen seismic failed"
run_complete seismic-c1 "$T/shots.jsonl" 8 --speeds C1
"$PY" - "$T/seismic-c1.out" "$C1_CORES" <<'EOF_PY' || fail "seismic on C1: wrong speeds in the summary: $(cat "$T/seismic-c1.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
cores = [int(x) for x in sys.argv[2].split()]
nodes = sorted(s["nodes"], key=lambda n: n["id"])
assert all(abs(n["speed"] - k / 24) < 1e-6 and n["slots"] == 1 for n, k in zip(nodes, cores)), nodes
EOF_PY

for bad in "--speeds C6" "--speeds C1 --slots 0" "--slots cores" "--speeds 1,0.5 --slots cores"; do
    # shellcheck disable=SC2086 # the flags are words
    timeout -k 5 30 "$JACKDAW" run "$T/shots.jsonl" --nodes 8 $bad --quiet >/dev/null 2>"$T/bad.err"
    expect_code 2 $? "run $bad"
    grep -q -- "--s" "$T/bad.err" || fail "run $bad: the refusal names no flag: $(cat "$T/bad.err")"
done
no_daemons_left "after the runs"
