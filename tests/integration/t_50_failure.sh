#!/bin/bash
# t_50_failure: a command task that fails (exit 3, 'boom' on stderr) ends the run with
# exit code 1; the summary names the task, its exit status and its stderr; the records
# show exactly that task failed, exactly its descendants cancelled (also one with a
# second, healthy parent), every other task done; and the run ends on its own.  A
# command that cannot start for its length is quoted cut in the summary; a batch of long
# commands larger than one frame is submitted in several.
. "$(dirname "$0")/lib.sh"

wl="$T/failure.jsonl"
cat >"$wl" <<'EOF_WL'
{"id":"root","kind":"command","cmd":"true"}
{"id":"ok1","kind":"command","cmd":"echo fine","parents":["root"]}
{"id":"bad","kind":"command","cmd":"echo boom >&2; exit 3","parents":["root"]}
{"id":"bad_c1","kind":"noop","parents":["bad"]}
{"id":"bad_c2","kind":"command","cmd":"echo must-not-run >&2; true","parents":["bad"]}
{"id":"bad_g1","kind":"noop","parents":["bad_c1"]}
{"id":"bad_g2","kind":"sleep","duration_s":0.001,"parents":["bad_c1","bad_c2"]}
{"id":"bad_g3","kind":"noop","parents":["bad_c2","ok1"]}
{"id":"ok2","kind":"noop","parents":["ok1"]}
{"id":"ok3","kind":"sleep","duration_s":0.002,"parents":["ok2","root"]}
{"id":"ind1","kind":"command","cmd":"echo hi"}
{"id":"ind2","kind":"sleep","duration_s":0.002}
{"id":"ind3","kind":"noop","parents":["ind1","ind2"]}
EOF_WL
for i in $(seq 1 24); do
    echo "{\"id\":\"free$i\",\"kind\":\"sleep\",\"duration_s\":0.001}"
done >>"$wl"
total=$(wc -l <"$wl")

jd_run fail "$wl" --nodes 4 --slots 2 --records "$T/records"
out="$T/fail.out"
cat "$out"
expect_code 1 "$RUN_RC" "jackdaw run with a failing task"

grep -qE '^ *bad on node [0-9]+: exit status 3$' "$out" || fail "summary does not say 'bad on node N: exit status 3'"
grep -q 'boom' "$out" || fail "summary does not show the failed task's stderr ('boom')"
grep -q 'must-not-run' "$out" "$T/fail.err" && fail "a descendant of the failed task ran"
grep -qE 'done 31 +failed 1 +cancelled 5' "$out" || fail "summary counts are not 'done 31 failed 1 cancelled 5'"
cancelled_line=$(grep 'cancelled: an ancestor failed' "$out") || fail "summary lists no cancelled tasks"
for t in bad_c1 bad_c2 bad_g1 bad_g2 bad_g3; do
    grep -qw -- "$t" <<<"$cancelled_line" || fail "summary's cancelled list lacks $t: $cancelled_line"
done
grep -qwE 'ok1|ok2|ok3|root|ind1|ind3' <<<"$cancelled_line" && fail "summary's cancelled list names a healthy task: $cancelled_line"

check_records "$wl" "$T/records" --expect-failed bad
"$PY" - "$T/records" <<'EOF_PY' || fail "the failed task's record is wrong"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
bad = [r for r in recs if r["id"] == "bad"]
assert len(bad) == 1 and bad[0]["status"] == "failed" and bad[0]["exit"] == 3, bad
EOF_PY
[ "$(wc -l <"$T/records")" -eq "$total" ] || fail "records hold $(wc -l <"$T/records") lines for $total tasks"

# The same workload, --json: the counters agree.
jd_run failjson "$wl" --nodes 4 --slots 2 --json
expect_code 1 "$RUN_RC" "jackdaw run --json with a failing task"
"$PY" - "$T/failjson.out" "$total" <<'EOF_PY' || fail "--json summary is wrong: $(cat "$T/failjson.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
assert (s["tasks"], s["tasks_done"], s["tasks_failed"], s["tasks_cancelled"]) == (int(sys.argv[2]), 31, 1, 5), s
EOF_PY

# A command that cannot start because of its size: the summary quotes it cut, with its
# length, not whole (it used to print every byte of it).
long="$T/long.jsonl"
"$PY" -c 'print("{\"id\":\"huge\",\"kind\":\"command\",\"cmd\":\"/nonexistent-" + "x" * 60000 + " arg\"}")' >"$long"
jd_run long "$long" --nodes 1 --slots 1
expect_code 1 "$RUN_RC" "jackdaw run with a command too long to start"
grep -qE '^ *huge on node 0: exit status' "$T/long.out" || fail "summary does not name the task: $(head -c 2000 "$T/long.out")"
grep -qF 'cannot run' "$T/long.out" || fail "summary does not say why: $(head -c 2000 "$T/long.out")"
grep -qF '… (60013 bytes)' "$T/long.out" || fail "summary does not cut the command, naming its length: $(head -c 2000 "$T/long.out")"
size=$(stat -c %s "$T/long.out")
[ "$size" -lt 4000 ] || fail "the summary is $size bytes: it quotes the command whole"

# 300 commands of 57 KB for one node: 17 MB, more than one 16 MiB frame, in what was one
# submit message (the client aborted on the frame assertion).  One node, so that all of
# it goes to one daemon in one submission.
many="$T/many.jsonl"
"$PY" -c '
for i in range(300):
    print("{\"id\":\"t%d\",\"kind\":\"command\",\"cmd\":\"true %s\"}" % (i, "x" * 57000))' >"$many"
jd_run many "$many" --nodes 1 --slots 2 --records "$T/many.rec"
expect_code 0 "$RUN_RC" "jackdaw run of 300 commands of 57 KB"
check_records "$many" "$T/many.rec"

no_daemons_left "after the runs"
