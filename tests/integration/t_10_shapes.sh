#!/bin/bash
# t_10_shapes: every DAG shape the generator makes (bag of tasks, fan-in, fan-out,
# pipeline), a few hundred tasks mixing noop and short sleeps, completes on 4 nodes x 4
# slots: exit 0, the --json summary counts every task done, and the per-task records
# show each task run exactly once with every dependency respected.
. "$(dirname "$0")/lib.sh"

# mix_noop IN OUT: every other task becomes a noop (the rest stay 1-5 ms sleeps).
mix_noop() {
    "$PY" - "$1" "$2" <<'EOF_PY'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for i, line in enumerate(f):
        t = json.loads(line)
        if i % 2:
            t.pop("duration_s", None)
            t["kind"] = "noop"
        out.write(json.dumps(t) + "\n")
EOF_PY
}

for shape in bot fanin fanout pipeline; do
    case $shape in
    bot) args=(--tasks 300) ;;
    fanin) args=(--tasks 300 --degree 3) ;;
    fanout) args=(--tasks 300 --degree 3) ;;
    pipeline) args=(--tasks 300 --pipe-size 6) ;;
    esac
    raw="$T/$shape.raw.jsonl"
    wl="$T/$shape.jsonl"
    "$JACKDAW" gen "$shape" "${args[@]}" --duration 0.001-0.005 --seed 7 -o "$raw" ||
        fail "jackdaw gen $shape ${args[*]} failed"
    mix_noop "$raw" "$wl" || fail "could not rewrite $raw"
    count=$(wc -l <"$wl")
    [ "$count" -eq 300 ] || fail "gen $shape wrote $count tasks, expected 300"
    edges=$("$PY" -c 'import json,sys; print(sum(len(json.loads(l).get("parents", [])) for l in open(sys.argv[1])))' "$wl")
    if [ "$shape" != bot ] && [ "$edges" -eq 0 ]; then
        fail "gen $shape made no dependencies"
    fi

    jd_run "run-$shape" "$wl" --nodes 4 --slots 4 --json --records "$T/$shape.records"
    expect_code 0 "$RUN_RC" "jackdaw run ($shape, $count tasks, $edges edges)"
    "$PY" - "$T/run-$shape.out" "$count" <<'EOF_PY' || fail "$shape: --json summary is wrong: $(cat "$T/run-$shape.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
n = int(sys.argv[2])
assert s["tasks"] == n, "tasks %r != %d" % (s["tasks"], n)
assert s["tasks_done"] == n, "tasks_done %r != %d" % (s["tasks_done"], n)
assert s["tasks_failed"] == 0 and s["tasks_cancelled"] == 0, s
assert len(s["nodes"]) == 4, "nodes has %d entries" % len(s["nodes"])
assert sum(x["tasks_run"] for x in s["nodes"]) == n, "tasks_run totals %d" % sum(x["tasks_run"] for x in s["nodes"])
EOF_PY
    check_records "$wl" "$T/$shape.records"
    note "$shape: $count tasks, $edges dependencies: ok"
done
no_daemons_left "after the runs"
