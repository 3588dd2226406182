#!/bin/bash
# t_55_retries: a failed command runs again while it has retries (issue 17).  On 3 nodes,
# with --retries 1 as the default:
#   once    fails its first run, succeeds its second (retries 1): done, 2 runs, its child runs;
#   twice   fails twice, succeeds the third (retries 2): done, 3 runs, which see
#           JACKDAW_ATTEMPT 0, 1, 2;
#   dflt    fails its first run, no retries of its own: --retries 1 gives it a second: done;
#   never   fails with an explicit "retries":0: --retries does not override it: failed after
#           1 run, its child cancelled;
#   always  fails every run (retries 1): failed after 2 runs, its child cancelled.
# A task's runs are counted by the command itself in a file under $T (a retry may run on
# another node, all on this machine).  Checked from the records (one line per task, the
# right statuses, `runs`), the counters, the summary's retried line and its JSON, and the
# trace (`trace verify` passes and counts the failed runs run again: 1+2+1+1 = 5).  Then
# with once at "retries":0 and --retries 0, once and dflt fail at their first run and
# once's child is cancelled; bad --retries values exit 2.
. "$(dirname "$0")/lib.sh"

# count NAME: the command line that bumps $T/NAME.runs and prints the new count.
count() {
    echo "n=\$(cat $T/$1.runs 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $T/$1.runs"
}

write_wl() {
    cat >"$1" <<EOF_WL
{"id":"once","kind":"command","cmd":"$(count once); [ \$n -ge 2 ]","retries":1}
{"id":"once_c","kind":"command","cmd":"echo child of once","parents":["once"]}
{"id":"twice","kind":"command","cmd":"$(count twice); echo \$JACKDAW_ATTEMPT >> $T/twice.att; [ \$n -ge 3 ]","retries":2}
{"id":"dflt","kind":"command","cmd":"$(count dflt); [ \$n -ge 2 ]"}
{"id":"never","kind":"command","cmd":"$(count never); exit 4","retries":0}
{"id":"never_c","kind":"noop","parents":["never"]}
{"id":"always","kind":"command","cmd":"$(count always); echo no luck; exit 7","retries":1}
{"id":"always_c","kind":"command","cmd":"echo must-not-run >&2","parents":["always"]}
{"id":"plain","kind":"sleep","duration_s":0.01}
EOF_WL
}
wl="$T/retries.jsonl"
write_wl "$wl"
total=$(wc -l <"$wl")

jd_run rt "$wl" --nodes 3 --slots 2 --retries 1 --records "$T/records" --trace "$T/rt.avro"
cat "$T/rt.out"
expect_code 1 "$RUN_RC" "jackdaw run with tasks that fail for good: $(cat "$T/rt.err")"
check_records "$wl" "$T/records" --expect-failed never,always --expect-cancelled-closure
[ "$(wc -l <"$T/records")" -eq "$total" ] || fail "records hold $(wc -l <"$T/records") lines for $total tasks"
for t in once:2 twice:3 dflt:2 never:1 always:2; do
    got=$(cat "$T/${t%%:*}.runs" 2>/dev/null)
    [ "$got" = "${t#*:}" ] || fail "${t%%:*} ran ${got:-0} times, expected ${t#*:}"
done
[ "$(tr '\n' ' ' <"$T/twice.att")" = "0 1 2 " ] ||
    fail "twice's runs saw JACKDAW_ATTEMPT $(tr '\n' ' ' <"$T/twice.att"), expected 0 1 2"
"$PY" - "$T/records" <<'EOF_PY' || fail "the records do not say how many runs each task had"
import json, sys
recs = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
want = {"once": ("done", 2), "twice": ("done", 3), "dflt": ("done", 2),
        "never": ("failed", 1), "always": ("failed", 2), "plain": ("done", 1),
        "once_c": ("done", 1)}
for tid, (status, runs) in want.items():
    r = recs[tid]
    assert r["status"] == status and r.get("runs", 1) == runs, (tid, r)
assert recs["always"]["exit"] == 7, recs["always"]
assert recs["always_c"]["status"] == "cancelled" and recs["never_c"]["status"] == "cancelled"
EOF_PY
grep -qE '^ *retried +4 tasks \(5 failed runs run again\)' "$T/rt.out" ||
    fail "the summary does not say 'retried 4 tasks (5 failed runs run again)'"
grep -qE '^ *always on node [0-9]+: exit status 7' "$T/rt.out" || fail "the summary does not name always's exit status"
grep -q 'must-not-run' "$T/rt.out" "$T/rt.err" && fail "a descendant of a failed task ran"
"$JACKDAW" trace verify "$T/rt.avro" --workload "$wl" >"$T/verify.out" 2>&1 ||
    { cat "$T/verify.out" >&2; fail "trace verify found problems in a run with retries"; }
grep -q 'retries: 5 failed runs of tasks with retries left, run again' "$T/verify.out" ||
    { cat "$T/verify.out" >&2; fail "trace verify does not count the 5 failed runs"; }
"$JACKDAW" report "$T/rt.avro" >"$T/report.out" 2>&1 || { cat "$T/report.out" >&2; fail "report of a run with retries failed"; }

# The JSON summary, once with "retries":0 and --retries 0: once fails on its first run
# and its child is cancelled, dflt too; twice and always keep their own retries.
rm -f "$T"/*.runs
sed 's/"retries":1}$/"retries":0}/' "$wl" | sed '/"id":"always"/s/"retries":0}/"retries":1}/' >"$T/zero.jsonl"
grep -q '"id":"once".*"retries":0' "$T/zero.jsonl" || fail "could not write the workload with once at retries 0"
jd_run none "$T/zero.jsonl" --nodes 3 --slots 2 --retries 0 --json --records "$T/records0"
expect_code 1 "$RUN_RC" "jackdaw run --retries 0"
check_records "$T/zero.jsonl" "$T/records0" --expect-failed once,dflt,never,always --expect-cancelled-closure
for t in once:1 twice:3 dflt:1 never:1 always:2; do
    got=$(cat "$T/${t%%:*}.runs" 2>/dev/null)
    [ "$got" = "${t#*:}" ] || fail "${t%%:*} ran ${got:-0} times with --retries 0, expected ${t#*:}"
done
"$PY" - "$T/none.out" <<'EOF_PY' || fail "--json summary is wrong: $(cat "$T/none.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
got = (s["tasks_done"], s["tasks_failed"], s["tasks_retried"], s["failed_runs_retried"])
assert got == (2, 4, 2, 3), got
EOF_PY

for bad in -1 101 1.5 x; do
    rc=0
    "$JACKDAW" run "$wl" --nodes 1 --retries "$bad" >"$T/bad.out" 2>&1 || rc=$?
    expect_code 2 $rc "--retries $bad"
    grep -q -- "--retries '$bad': must be a whole number from 0 to 100" "$T/bad.out" ||
        { cat "$T/bad.out" >&2; fail "--retries $bad: no reason given"; }
done
no_daemons_left "after the runs"
