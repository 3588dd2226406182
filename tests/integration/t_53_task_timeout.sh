#!/bin/bash
# t_53_task_timeout: per-task time limits (issue 13 c).  A run with --task-timeout 1 of:
# a command `sleep 100000` with timeout_s 0.5, a sleep task of 100000 s with timeout_s
# 0.3, a command with a background child and timeout_s 0.5, a command `sleep 100000`
# without timeout_s (so --task-timeout's 1 s applies), each heading children, and tasks
# that end well within their limits.  Expected: the run ends by itself with exit 1; the
# four are "timed out" in the records (killed: a signal for the commands), exactly their
# descendants cancelled, the others done; the text summary counts and names them "timed
# out after S s"; the JSON summary counts them; the background child is gone.  Then bad
# values: timeout_s 0, -1, "1", 1e9 in a workload are refused with exit 3 naming
# file:line and timeout_s; --task-timeout 0, -1, abc and 1e9 with exit 2.
# The bounds (60 s) only tell "ended at its limit" from "ran to its end" (100000 s).
. "$(dirname "$0")/lib.sh"

BG_LEFT=""
kill_left() {
    [ -n "$BG_LEFT" ] && pid_alive "$BG_LEFT" &&
        tr '\0' ' ' <"/proc/$BG_LEFT/cmdline" 2>/dev/null | grep -qE '^sleep 307 $' &&
        kill -KILL "$BG_LEFT" 2>/dev/null
}
trap 'rc=$?; kill_left; (exit $rc); cleanup' EXIT

wl="$T/timeout.jsonl"
cat >"$wl" <<EOF_WL
{"id":"hang","kind":"command","cmd":"sleep 100000","timeout_s":0.5}
{"id":"hang_c","kind":"noop","parents":["hang"]}
{"id":"hang_g","kind":"sleep","duration_s":0.01,"parents":["hang_c"]}
{"id":"sl","kind":"sleep","duration_s":100000,"timeout_s":0.3}
{"id":"sl_c","kind":"command","cmd":"echo must-not-run >&2","parents":["sl"]}
{"id":"bg","kind":"command","cmd":"sleep 307 & echo \$! > $T/bg.pid; wait","timeout_s":0.5}
{"id":"dflt","kind":"command","cmd":"sleep 100000"}
{"id":"dflt_c","kind":"noop","parents":["dflt"]}
{"id":"quick","kind":"command","cmd":"echo quick","timeout_s":30}
{"id":"ok","kind":"sleep","duration_s":0.01}
{"id":"after","kind":"noop","parents":["quick","ok"]}
EOF_WL
total=$(wc -l <"$wl")

jd_run tmo "$wl" --nodes 2 --slots 4 --task-timeout 1 --records "$T/records"
cat "$T/tmo.out"
expect_code 1 "$RUN_RC" "jackdaw run with tasks past their time limits: $(cat "$T/tmo.err")"
[ -s "$T/bg.pid" ] && BG_LEFT=$(cat "$T/bg.pid")
check_records "$wl" "$T/records" --expect-timed-out hang,sl,bg,dflt
[ "$(wc -l <"$T/records")" -eq "$total" ] || fail "records hold $(wc -l <"$T/records") lines for $total tasks"
"$PY" - "$T/records" <<'EOF_PY' || fail "the timed-out tasks' records are wrong"
import json, sys
recs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    recs[r["id"]] = r
for tid in ("hang", "bg", "dflt"):
    r = recs[tid]
    assert r["status"] == "timed out" and r.get("signal") in (15, 9), r
for tid, limit in (("hang", 0.5), ("sl", 0.3), ("bg", 0.5), ("dflt", 1)):
    r = recs[tid]
    ran = (r["end_ns"] - r["start_ns"]) / 1e9
    assert limit <= ran < 60, "%s ran %.3f s with a limit of %g s" % (tid, ran, limit)
EOF_PY
out="$T/tmo.out"
grep -qE 'done 3 +failed 4 \(4 timed out\) +cancelled 4' "$out" ||
    fail "summary counts are not 'done 3 failed 4 (4 timed out) cancelled 4'"
for t in "hang:0.5" "sl:0.3" "bg:0.5" "dflt:1"; do
    grep -qE "^ *${t%%:*} on node [0-9]+: timed out after ${t#*:} s" "$out" ||
        fail "summary does not say '${t%%:*} on node N: timed out after ${t#*:} s'"
done
grep -q 'must-not-run' "$out" "$T/tmo.err" && fail "a descendant of a timed-out task ran"
if [ -n "$BG_LEFT" ]; then
    wait_until 10 eval "! pid_alive $BG_LEFT" || fail "the background child of bg (pid $BG_LEFT) outlived its task"
else
    fail "task bg never wrote its background child's PID"
fi

jd_run tmojson "$wl" --nodes 2 --slots 4 --task-timeout 1 --json
expect_code 1 "$RUN_RC" "jackdaw run --json with tasks past their time limits"
"$PY" - "$T/tmojson.out" <<'EOF_PY' || fail "--json summary is wrong: $(cat "$T/tmojson.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
got = (s["tasks_done"], s["tasks_failed"], s["tasks_timed_out"], s["tasks_cancelled"])
assert got == (3, 4, 4, 4), got
EOF_PY
[ -s "$T/bg.pid" ] && BG_LEFT=$(cat "$T/bg.pid")
wait_until 10 eval "! pid_alive $BG_LEFT" || fail "the background child of bg (pid $BG_LEFT) outlived its task"

# Bad limits in the workload: refused before anything starts, naming file:line.
n=0
for bad in '0' '-1' '"1"' '1e9' 'null'; do
    n=$((n + 1))
    bw="$T/bad$n.jsonl"
    printf '{"id":"a","kind":"sleep","duration_s":0.01}\n{"id":"b","kind":"sleep","duration_s":0.01,"timeout_s":%s}\n' \
        "$bad" >"$bw"
    rc=0
    timeout -k 5 30 "$JACKDAW" run "$bw" --nodes 1 --quiet >"$T/bad$n.out" 2>&1 || rc=$?
    expect_code 3 "$rc" "timeout_s $bad: $(cat "$T/bad$n.out")"
    grep -qF "$bw:2:" "$T/bad$n.out" || fail "timeout_s $bad: the error does not name $bw:2: $(cat "$T/bad$n.out")"
    grep -q "timeout_s" "$T/bad$n.out" || fail "timeout_s $bad: the error does not name timeout_s: $(cat "$T/bad$n.out")"
    note "timeout_s $bad: $(cat "$T/bad$n.out")"
done
# Bad defaults: usage errors, for run and submit alike (before any cluster is needed).
for bad in 0 -1 abc 1e9; do
    rc=0
    timeout -k 5 30 "$JACKDAW" run "$wl" --nodes 1 --quiet --task-timeout "$bad" >"$T/badopt.out" 2>&1 || rc=$?
    expect_code 2 "$rc" "run --task-timeout $bad: $(cat "$T/badopt.out")"
    grep -q -- "--task-timeout" "$T/badopt.out" || fail "run --task-timeout $bad: $(cat "$T/badopt.out")"
    rc=0
    timeout -k 5 30 "$JACKDAW" submit "$wl" --cluster "$T/none.json" --task-timeout "$bad" >"$T/badopt.out" 2>&1 || rc=$?
    expect_code 2 "$rc" "submit --task-timeout $bad: $(cat "$T/badopt.out")"
    grep -q -- "--task-timeout" "$T/badopt.out" || fail "submit --task-timeout $bad: $(cat "$T/badopt.out")"
done
no_daemons_left "after the runs"
