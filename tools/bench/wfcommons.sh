#!/bin/bash
# wfcommons.sh — the eight real WfCommons instances (../shared/workloads/wfcommons,
# WfFormat 1.5, unmodified) on NODES x SLOTS, each at the time scale that brings the
# longer of its critical path and its work per slot to TARGET_S seconds, its file sizes
# scaled alike (so a transfer keeps its share of a task's time), links emulated at
# BANDWIDTH, under four settings: --policy daws with --placement flds, mdl and mlb, and
# --policy daws+a2ws.  Each run as a user runs it (`jackdaw run` of the imported
# workload, default flags but those named), its trace read by `jackdaw report`:
# efficiency, quality against the bound, bytes moved; and beside them the instance's
# recorded makespan, scaled.  One table.
#
#   tools/bench/wfcommons.sh [BUILD_DIR]
#
# Environment: NODES (8), SLOTS (4), TARGET_S (10), BANDWIDTH (1Gbit), RUN_TIMEOUT (120),
# SETTINGS (the four above, ';'-separated), INSTANCES (all eight; names without .json).
. "$(dirname "$0")/lib.sh"

NODES="${NODES:-8}"
SLOTS="${SLOTS:-4}"
TARGET_S="${TARGET_S:-10}"
BANDWIDTH="${BANDWIDTH:-1Gbit}"
RUN_TIMEOUT="${RUN_TIMEOUT:-120}"
SETTINGS="${SETTINGS:-daws flds;daws mdl;daws mlb;daws+a2ws}"
W="$(cd "$(dirname "$0")/../../.." && pwd)/shared/workloads/wfcommons"
[ -d "$W" ] || { section "wfcommons: skipped: no instances at $W"; exit 0; }
INSTANCES="${INSTANCES:-$(cd "$W" && ls *.json | sed 's/\.json$//' | tr '\n' ' ')}"

# facts FILE : "critical_path work makespan" of an instance at scale 1.
facts() {
    "$PY" - "$1" <<'EOF_PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = d["workflow"]
run = {t["id"]: t["runtimeInSeconds"] for t in w["execution"]["tasks"]}
parents = {t["id"]: t["parents"] for t in w["specification"]["tasks"]}
done = {}
sys.setrecursionlimit(100000)
def finish(i):
    if i not in done:
        done[i] = run[i] + max((finish(p) for p in parents[i]), default=0)
    return done[i]
print(max(finish(i) for i in parents), sum(run.values()), w["execution"].get("makespanInSeconds", 0))
EOF_PY
}

section "wfcommons: the eight instances on $NODES x $SLOTS slots, each scaled to ~$TARGET_S s" \
    "(critical path or work per slot), files scaled alike, --bandwidth $BANDWIDTH"
printf '  %-12s %-12s %9s %8s %8s %12s %11s %13s\n' instance setting scale makespan efficncy \
    quality "MB moved" "recorded(sc)"
for name in $INSTANCES; do
    f="$W/$name.json"
    read -r crit work recorded < <(facts "$f") || { say "  $name: cannot read"; continue; }
    scale=$(awk -v c="$crit" -v w="$work" -v s="$SLOTS" -v n="$NODES" -v t="$TARGET_S" \
        'BEGIN { m = w / (s * n); if (c > m) m = c; printf "%.3g", t / m }')
    wl="$B/$name.jsonl"
    "$JACKDAW" import wfcommons "$f" --time-scale "$scale" --data-scale "$scale" -o "$wl" 2>/dev/null ||
        { say "  $name: import failed"; continue; }
    IFS=';' read -r -a settings <<<"$SETTINGS"
    for st in "${settings[@]}"; do
        read -r policy placement <<<"$st"
        args=(--policy "$policy")
        [ -n "${placement:-}" ] && args+=(--placement "$placement")
        tag="$name-${policy}-${placement:-default}"
        bounded $((RUN_TIMEOUT + 30)) "$JACKDAW" run "$wl" --nodes "$NODES" --slots "$SLOTS" \
            --bandwidth "$BANDWIDTH" "${args[@]}" --json --quiet --timeout "$RUN_TIMEOUT" \
            --trace "$B/$tag.avro" >"$B/$tag.json" 2>"$B/$tag.err"
        if ! "$JACKDAW" report "$B/$tag.avro" --workload "$wl" --format json >"$B/$tag.report.json" 2>"$B/$tag.rerr"; then
            say "  $name $st: no report ($(head -c 200 "$B/$tag.err" "$B/$tag.rerr" | tr '\n' ' '))"
            continue
        fi
        "$PY" - "$B/$tag.report.json" "$name" "${st}" "$scale" "$recorded" <<'EOF_PY'
import json, sys
r = json.load(open(sys.argv[1]))["figures"]
name, st, scale, rec = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
print("  %-12s %-12s %9.3g %7.2fs %7.1f%% %11.1f%% %11.1f %12.2fs" % (
    name.split("-")[0], st, scale, r["makespan_s"], 100 * r["efficiency"],
    100 * r["bound_quality"], r["bytes_moved"] / 1e6, rec * scale))
EOF_PY
    done
done
