#!/bin/bash
# memory.sh — resident memory per waiting task: 1,000,000 tasks submitted to 4 local
# daemons, all but one of them waiting for a parent.
#
# Workload: one "gate" task (a sleep far longer than the measurement) and 999,999 noop
# tasks in chains of 10: each chain head has the gate as its only parent, each other
# task the previous task of its chain.  So every task but the gate waits, every waiting
# task has exactly one parent, nine in ten have one child, and the metadata per task is
# what a pipeline or tree DAG has; only the gate's record is large (100,000 children,
# one record among a million).  A single gate with 999,999 direct children would
# measure one giant record instead of typical ones.
#
# Method: launch the daemons, sum rss_bytes over `jackdaw status --json` (baseline),
# `jackdaw submit` without --wait, poll status until the WaitQ total stops growing
# (bounded), sum rss_bytes again and print
#     (rss_after - rss_before) / waiting tasks   (waiting = WaitQ total)
# on arrival; then poll until the resident total stops falling (bounded, REST_TIMEOUT)
# and print the same at rest.  The two differ because a daemon packs the backup copies
# it keeps of a job that has stayed unread for a while (kvs_compact): a job that waits
# long holds the figure at rest, and that is the one the target is about.
# The cluster is stopped with `jackdaw stop` (which signals the PIDs in the cluster
# file); the EXIT trap does it too if anything fails.
#
#   tools/bench/memory.sh [BUILD_DIR]
#
# Environment: TASKS (1000000), CHAIN (10), NODES (4), SLOTS (1), SETTLE_TIMEOUT (120 s).
. "$(dirname "$0")/lib.sh"

TASKS="${TASKS:-1000000}"
CHAIN="${CHAIN:-10}"
NODES="${NODES:-4}"
SLOTS="${SLOTS:-1}"
SETTLE_TIMEOUT="${SETTLE_TIMEOUT:-120}"
REST_TIMEOUT="${REST_TIMEOUT:-30}"
GATE_S=3600
TARGET=200

section "memory: $TASKS tasks ($((TASKS - 1)) waiting, chains of $CHAIN under one gate)," \
    "$NODES daemons x $SLOTS slots, hashed"

wl="$B/gated-chains.jsonl"
awk -v total="$TASKS" -v len="$CHAIN" -v gate="$GATE_S" 'BEGIN {
    printf "{\"id\":\"gate\",\"kind\":\"sleep\",\"duration_s\":%d}\n", gate
    for (k = 0; k < total - 1; k++) {
        p = (k % len == 0) ? "gate" : "t" (k - 1)
        printf "{\"id\":\"t%d\",\"parents\":[\"%s\"]}\n", k, p
    }
}' >"$wl" || { echo "memory: cannot write the workload" >&2; exit 1; }

cluster="$B/cluster/cluster.json"
launch_cluster "$NODES" "$SLOTS" "$cluster" || exit 1

# totals [FILE] : "WAITQ RSS_BYTES KVS_RECORDS BUSY" summed over the nodes, or nothing;
# the status JSON is kept in FILE when one is given.
totals() {
    local keep=${1:-$B/status.json}
    timeout -k 2 20 "$JACKDAW" status --cluster "$cluster" --json >"$keep" 2>/dev/null
    "$PY" -c '
import json, sys
try:
    n = json.load(open(sys.argv[1]))["nodes"]
except Exception:
    sys.exit(1)
print(sum(x["waitq"] for x in n), sum(x["rss_bytes"] for x in n),
      sum(x["kvs_records"] for x in n), sum(x["busy"] for x in n))' "$keep"
}

# Give the freshly started daemons a moment to finish their own start-up (mesh, first
# steal attempts) so the baseline is not taken mid-way.
sleep 1
read -r _ rss_before _ _ < <(totals "$B/before.json") || true
if [ -z "${rss_before:-}" ]; then
    echo "memory: jackdaw status --json gave no answer" >&2
    exit 1
fi
say "  baseline: $(fmt_rate "$rss_before") bytes resident over $NODES daemons"

t0=$(now)
bounded 300 "$JACKDAW" submit "$wl" --cluster "$cluster" --quiet >"$B/submit.out" 2>&1
rc=$?
say "  submit: $(elapsed "$t0" "$(now)") s (jackdaw submit exited $rc)"
[ $rc -eq 0 ] || { sed 's/^/    | /' "$B/submit.out" | head -20; exit 1; }

# Poll until the WaitQ total has not grown for 3 polls in a row (or it holds every
# task that should wait), bounded by SETTLE_TIMEOUT.
prev=-1
stable=0
deadline=$(awk -v t="$(now)" -v s="$SETTLE_TIMEOUT" 'BEGIN { printf "%d", t + s }')
while :; do
    read -r waitq _ _ _ < <(totals) || true
    if [ -n "${waitq:-}" ]; then
        if [ "$waitq" -le "$prev" ]; then stable=$((stable + 1)); else stable=0; fi
        prev=$waitq
        [ "$waitq" -ge $((TASKS - 1)) ] && [ $stable -ge 1 ] && break
        [ $stable -ge 3 ] && break
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
        say "  WaitQ still growing after ${SETTLE_TIMEOUT} s; measuring anyway"
        break
    fi
    sleep 0.5
done
settled=$(elapsed "$t0" "$(now)")
read -r waitq rss_after kvs busy < <(totals "$B/after.json") || true
if [ -z "${rss_after:-}" ] || [ "${waitq:-0}" -le 0 ]; then
    echo "memory: no tasks waiting (status: waitq=${waitq:-?})" >&2
    exit 1
fi
say "  after submit (settled $settled s after it began): $(fmt_rate "$rss_after") bytes resident;" \
    "WaitQ $(fmt_rate "$waitq"), metadata records $(fmt_rate "$kvs"), busy slots $busy"
"$PY" - "$B/before.json" "$B/after.json" <<'EOF_PY'
import json, sys
before = {n["id"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
for n in json.load(open(sys.argv[2]))["nodes"]:
    grew = n["rss_bytes"] - before[n["id"]]["rss_bytes"]
    per = "%.1f bytes per waiting task" % (grew / n["waitq"]) if n["waitq"] else "no waiting task"
    print("    node %d: +%.1f MiB resident, WaitQ %d, metadata records %d: %s"
          % (n["id"], grew / 1048576, n["waitq"], n["kvs_records"], per))
EOF_PY
per=$(awk -v a="$rss_after" -v b="$rss_before" -v w="$waitq" 'BEGIN { printf "%.1f", (a - b) / w }')
say "  resident bytes per waiting task on arrival: $per"

# At rest: the total has not fallen by more than 0.5 % over two polls a second apart.
t1=$(now)
low=$rss_after
calm=0
deadline=$(awk -v t="$(now)" -v s="$REST_TIMEOUT" 'BEGIN { printf "%d", t + s }')
while [ $calm -lt 2 ] && [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 1
    read -r _ rss _ _ < <(totals "$B/rest.json") || continue
    if awk -v r="$rss" -v l="$low" 'BEGIN { exit !(r < l * 0.995) }'; then calm=0; else calm=$((calm + 1)); fi
    [ "$rss" -lt "$low" ] && low=$rss
done
read -r waitq rss_rest _ _ < <(totals "$B/rest.json") || true
per=$(awk -v a="$rss_rest" -v b="$rss_before" -v w="$waitq" 'BEGIN { printf "%.1f", (a - b) / w }')
say "  at rest ($(elapsed "$t1" "$(now)") s later): $(fmt_rate "$rss_rest") bytes resident;" \
    "WaitQ $(fmt_rate "$waitq")"
say "  resident bytes per waiting task at rest: $per   target <= $TARGET bytes"

stop_cluster "$cluster"
