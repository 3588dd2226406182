#!/bin/bash
# t_56b_usage: what each command used is measured and kept (issue 17).  On 2 nodes:
#   burn   a shell loop: CPU time in user mode;
#   mem    awk filling a 1.5-million-entry array: a resident set far above the daemon's;
#   write  writes 2,000,000 bytes to a file and reads them back;
#   flaky  fails its first run (retries 1): its failed run's usage is in the trace too;
#   nap    a sleep task: it runs no process, so it has no usage.
# Checked from the records (cpu_user_s, cpu_sys_s, max_rss_bytes, read_bytes, write_bytes
# on the commands, none on the sleep), from the trace (`trace cat --json`: usage on the
# commands' TASK_END and on flaky's TASK_RETRY, never on the sleep's) and from `report`
# (CPU time and CPU efficiency among the figures, per node in the JSON).
. "$(dirname "$0")/lib.sh"

wl="$T/usage.jsonl"
cat >"$wl" <<EOF_WL
{"id":"burn","kind":"command","cmd":"i=0; while [ \$i -lt 200000 ]; do i=\$((i+1)); done"}
{"id":"mem","kind":"command","cmd":"awk 'BEGIN { while (i < 1500000) { a[i] = i; i++ }; print i }'"}
{"id":"write","kind":"command","cmd":"head -c 2000000 /dev/zero > blob && cat blob > /dev/null"}
{"id":"flaky","kind":"command","cmd":"[ \"\$JACKDAW_ATTEMPT\" -ge 1 ] || exit 5","retries":1}
{"id":"nap","kind":"sleep","duration_s":0.01}
EOF_WL

jd_run u "$wl" --nodes 2 --slots 2 --records "$T/records" --trace "$T/u.avro"
expect_code 0 "$RUN_RC" "jackdaw run of the usage workload: $(cat "$T/u.err")"
check_records "$wl" "$T/records"
"$PY" - "$T/records" <<'EOF_PY' || fail "the records do not carry what the commands used"
import json, sys
recs = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
keys = ("cpu_user_s", "cpu_sys_s", "max_rss_bytes", "read_bytes", "write_bytes")
for tid in ("burn", "mem", "write", "flaky"):
    assert all(k in recs[tid] for k in keys), (tid, recs[tid])
    assert all(recs[tid][k] >= 0 for k in keys), (tid, recs[tid])
assert not any(k in recs["nap"] for k in keys), recs["nap"]
# 200,000 shell iterations cannot take less than 10 ms of CPU.
assert recs["burn"]["cpu_user_s"] + recs["burn"]["cpu_sys_s"] > 0.01, recs["burn"]
# 1.5 million awk array entries take over 60 MiB: above any daemon's own size here.
assert recs["mem"]["max_rss_bytes"] > 60 << 20, recs["mem"]
assert recs["write"]["write_bytes"] >= 2000000, recs["write"]
assert recs["write"]["read_bytes"] >= 2000000, recs["write"]
assert recs["flaky"].get("runs") == 2, recs["flaky"]
EOF_PY

"$JACKDAW" trace cat --json "$T/u.avro" >"$T/u.json" || fail "trace cat --json"
"$PY" - "$T/u.json" "$T/records" <<'EOF_PY' || fail "the trace does not carry what the commands used"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
recs = {r["index"]: r for r in map(json.loads, open(sys.argv[2]))}
ids = {i: r["id"] for i, r in recs.items()}
ends = {ids[e["task"]]: e for e in evs if e["kind"] == "TASK_END" and "task" in e}
assert set(ends) == set(ids.values()), sorted(ends)
for tid in ("burn", "mem", "write", "flaky"):
    assert "usage" in ends[tid], ends[tid]
assert "usage" not in ends["nap"], ends["nap"]
# The records and the trace give one measurement of each command.
burn = [r for r in recs.values() if r["id"] == "burn"][0]
assert ends["burn"]["usage"]["user_ns"] == round(burn["cpu_user_s"] * 1e9), (ends["burn"], burn)
retries = [e for e in evs if e["kind"] == "TASK_RETRY"]
assert len(retries) == 1 and ids[retries[0]["task"]] == "flaky" and "usage" in retries[0], retries
assert not any("usage" in e for e in evs if e["kind"] not in ("TASK_END", "TASK_RETRY")), "usage elsewhere"
EOF_PY

"$JACKDAW" report "$T/u.avro" --workload "$wl" >"$T/report.md" 2>"$T/report.err" ||
    { cat "$T/report.err" >&2; fail "report"; }
grep -qE '^\| CPU efficiency \(commands. CPU / wall time\) \| [0-9.]+ % \| cpu_efficiency \|$' "$T/report.md" ||
    fail "the report gives no CPU efficiency"
grep -qE '^\| CPU time of commands \(user \+ system\) \| ' "$T/report.md" || fail "the report gives no CPU time"
"$JACKDAW" report "$T/u.avro" --workload "$wl" --format json -o "$T/report.json" 2>"$T/report.err" ||
    { cat "$T/report.err" >&2; fail "report --format json"; }
"$PY" - "$T/report.json" <<'EOF_PY' || fail "the JSON report's CPU figures are wrong"
import json, sys
r = json.load(open(sys.argv[1]))
f = r["figures"]
assert f["cpu_s"] > 0.01 and 0 < f["cpu_efficiency"], f
assert f["max_rss_bytes"] > 60 << 20 and f["write_bytes"] >= 2000000, f
nodes = r["nodes"]
# Five runs of four commands were measured (flaky ran twice), wherever they ran.
assert sum(n["measured_runs"] for n in nodes) == 5, nodes
assert abs(sum(n["cpu_s"] for n in nodes) - f["cpu_s"]) < 1e-6, (nodes, f)
EOF_PY
no_daemons_left "after the usage run"
