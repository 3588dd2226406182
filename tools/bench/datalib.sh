# shellcheck shell=bash
# datalib.sh — helpers of the data-aware benchmarks (allpairs.sh, imagestack.sh,
# dags.sh), sourced after lib.sh; not run on its own.  Like lib.sh it judges nothing.
#
# What a script gets:
#   - $RUN_DIR: where the private clusters of `jackdaw run` keep their files (object
#     store spills, logs).  TMPFS=1 (the default) puts it on /dev/shm, where
#     `jackdaw run` puts them when TMPDIR is not set; otherwise, or when /dev/shm is not
#     writable, it is $B.  Either way it is private and removed on exit.
#   - data_run TAG WORKLOAD ARGS... : `jackdaw run WORKLOAD --nodes $NODES --slots
#     $SLOTS --bandwidth $BANDWIDTH --json --quiet --timeout $RUN_TIMEOUT --records ...
#     ARGS...`, bounded; leaves the summary in $B/TAG.json and the per-task records in
#     $B/TAG.records, sets RUN_WALL (seconds) and RUN_CPU (user + system CPU seconds of
#     `jackdaw run` and its daemons, from the shell's `times`), and prints the error
#     output and returns 1 when there is no summary.  LOGS=1 adds --keep and
#     --log-level info and keeps the daemons' "object store:" lines, summed over the
#     nodes, for run_figures.
#   - run_figures TAG : one line of figures of a finished run (see the python below),
#     and with LOGS=1 a second one, indented, with the "object store:" totals.
#   - jget TAG EXPR : EXPR (python over the summary `j`) of run TAG.
#   - algo1_ratio BYTES SECONDS : Algorithm 1's ratio at $BANDWIDTH.
#
# Environment read here: NODES, SLOTS, BANDWIDTH, RUN_TIMEOUT (set by the script),
# TMPFS (1), LOGS (0).

TMPFS="${TMPFS:-1}"
LOGS="${LOGS:-0}"
RUN_DIR="$B"
if [ "$TMPFS" = 1 ] && extra_dir /dev/shm; then
    RUN_DIR="$EXTRA_DIR"
fi

# data_run TAG WORKLOAD ARGS...
data_run() {
    local tag=$1 wl=$2 rc t0 cpu0 keep=()
    shift 2
    if [ "$LOGS" = 1 ]; then
        keep=(--keep "$RUN_DIR/keep-$tag" --log-level info)
    fi
    rm -f "$B/$tag.json" "$B/$tag.records"
    children_cpu >"$B/cpu0.out"
    cpu0=$(cat "$B/cpu0.out")
    t0=$(now)
    TMPDIR="$RUN_DIR" bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --nodes "$NODES" \
        --slots "$SLOTS" --bandwidth "$BANDWIDTH" --json --quiet --timeout "$RUN_TIMEOUT" \
        --records "$B/$tag.records" "${keep[@]}" "$@" >"$B/$tag.json" 2>"$B/$tag.err"
    rc=$?
    RUN_WALL=$(elapsed "$t0" "$(now)")
    children_cpu >"$B/cpu1.out"
    RUN_CPU=$(awk -v a="$cpu0" -v b="$(cat "$B/cpu1.out")" 'BEGIN { printf "%.1f", b - a }')
    if [ -z "$(json_get "$B/$tag.json" 'j["makespan_s"]')" ]; then
        say "    no summary (jackdaw run exited $rc after $RUN_WALL s):"
        sed 's/^/    | /' "$B/$tag.err" | head -20
        return 1
    fi
    [ "$rc" -ne 0 ] && say "    (jackdaw run exited $rc)"
    rm -f "$B/$tag.store"
    if [ "$LOGS" = 1 ]; then
        store_stats "$RUN_DIR/keep-$tag" >"$B/$tag.store"
        rm -rf "$RUN_DIR/keep-$tag"
    fi
    return 0
}

# store_stats DIR : the daemons' shutdown "object store:" lines, summed over the nodes.
store_stats() {
    "$PY" - "$1" <<'EOF_PY'
import glob, re, sys
keys = ["owned", "cached", "cached_bytes", "local", "hits", "misses", "evictions"]
tot = dict.fromkeys(keys, 0)
n = 0
pat = re.compile(r"object store: (\d+) owned, (\d+) cached \((\d+) bytes\); acquires: "
                 r"(\d+) local, (\d+) cache hits, (\d+) misses; (\d+) evictions")
for path in glob.glob(sys.argv[1] + "/**/node-*.log", recursive=True):
    for line in open(path, errors="replace"):
        m = pat.search(line)
        if m:
            n += 1
            for k, v in zip(keys, m.groups()):
                tot[k] += int(v)
if n == 0:
    print("object store: no 'object store:' lines in the node logs")
else:
    print("object store, %d nodes: %d owned, %d cached (%.1f MB); acquires %d local, "
          "%d cache hits, %d misses; %d evictions" % (n, tot["owned"], tot["cached"],
          tot["cached_bytes"] / 1e6, tot["local"], tot["hits"], tot["misses"], tot["evictions"]))
EOF_PY
}

jget() { json_get "$B/$1.json" "$2"; }

# algo1_ratio BYTES SECONDS : Algorithm 1's ratio BYTES / $BANDWIDTH / SECONDS, two
# decimals ("n/a" for a rate written in a unit this does not know).
algo1_ratio() {
    "$PY" - "$1" "$2" "$BANDWIDTH" <<'EOF_PY'
import re, sys
m = re.fullmatch(r"\s*([0-9.]+)\s*([kKmMgGtT]?)(bit|B|iB)?(/s)?\s*", sys.argv[3])
if not m or not m.group(3) or float(sys.argv[2]) <= 0:
    print("n/a")
    sys.exit()
v = float(m.group(1))
p = m.group(2).upper()
if m.group(3) == "iB":
    v *= 1024 ** "KMGT".index(p) * 1024 if p else 1
else:
    v *= 1000 ** ("KMGT".index(p) + 1) if p else 1
    if m.group(3) == "bit":
        v /= 8
print("%.2f" % (float(sys.argv[1]) / v / float(sys.argv[2])) if v > 0 else "n/a")
EOF_PY
}

# run_figures TAG : efficiency, makespan, locality hit rate, bytes moved, cache hit rate,
# tasks pushed, tasks per node (min-max), from the records: setup = time from the
# first submit to the first task start (the client writes the metadata and the nodes
# create the workload's input objects then; the makespan counts it), and the CPU time
# of the last data_run against its wall time (the whole `jackdaw run`) and the CPUs.
run_figures() {
    "$PY" - "$B/$1.json" "$B/$1.records" "${RUN_CPU:-}" "${RUN_WALL:-}" "$(nproc)" <<'EOF_PY'
import json, sys
j = json.load(open(sys.argv[1]))
def rate(x):
    return "n/a" if x is None or x < 0 else "%.1f %%" % (100 * x)
per = [n["tasks_run"] for n in j["nodes"]]
setup = "n/a"
try:
    recs = [json.loads(l) for l in open(sys.argv[2])]
    starts = [r["start_ns"] for r in recs if r.get("status") == "done"]
    ends = [r["end_ns"] for r in recs if r.get("status") == "done"]
    if starts:
        t_submit = max(ends) - j["makespan_s"] * 1e9
        setup = "%.2f s" % ((min(starts) - t_submit) / 1e9)
except (OSError, ValueError, KeyError):
    pass
cpu = ""
try:
    c, w, ncpu = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    if w > 0:
        cpu = ", cpu %.1f s in %.1f s (%.0f %% of %d CPUs)" % (c, w, 100 * c / (w * ncpu), ncpu)
except (IndexError, ValueError):
    pass
print("efficiency %s, makespan %.2f s (ideal %.2f s), locality %s, moved %.0f MB, "
      "cache hits %s, pushed %d, tasks/node %d-%d, setup %s%s"
      % (rate(j["efficiency"]), j["makespan_s"], j["ideal_s"], rate(j["locality_hit_rate"]),
         j["bytes_moved"] / 1e6, rate(j["cache_hit_rate"]), j["tasks_pushed"], min(per),
         max(per), setup, cpu))
EOF_PY
    [ -s "$B/$1.store" ] && sed 's/^/           /' "$B/$1.store"
    return 0
}
