#!/bin/bash
# t_56f_declared_outputs: the files a command writes become objects of their own (issue 17).
#   run --outputs DIR on 4 nodes, one slot each so that the tasks spread: a workflow of
#   real programs (sort, uniq, gzip, awk) whose tasks declare the files they write
#   ("outputs"), some in subdirectories the command does not make, and read each other's
#   by name, a child reading one of two outputs of its parent; the records hold every
#   task once and every dependency (those implied by reading an output too); DIR gets
#   the outputs no task reads, under their object ids, byte-identical to the same
#   commands run by hand in one directory; stdout of a task with declared outputs is its
#   log, not an object.
#   A declared output missing after exit 0 fails the task, naming the file, and cancels
#   what reads it; with retries 1 a command that writes it only on its second run
#   succeeds.
#   jackdaw get of a declared output on a launched cluster returns its bytes.
#   Lost with its node: on 4 nodes with --replicas 2, the node that ran the task that
#   wrote a declared output is killed (SIGKILL) after that task ended and before its
#   reader became ready (a gate task holds the reader); the writer runs again elsewhere
#   and the reader gets the output: every task done, the reader's result right.
. "$(dirname "$0")/lib.sh"

d="$T/wf"
mkdir -p "$d"
seq 1 3000 | awk '{ print ($1 * 7919) % 500, "k" ($1 % 17) }' >"$d/pairs.txt"
cat >"$d/wf.jsonl" <<'EOF_WL'
{"object":"pairs","path":"pairs.txt"}
{"id":"split","kind":"command","cmd":"cut -d' ' -f1 in.txt | sort -n > parts/nums; cut -d' ' -f2 in.txt | sort > parts/keys; echo split done","inputs":[{"object":"pairs","as":"in.txt"}],"outputs":[{"object":"nums","file":"parts/nums"},{"object":"keys","file":"parts/keys"}]}
{"id":"hist","kind":"command","cmd":"uniq -c keys | sort -rn > hist.txt","inputs":["keys"],"outputs":[{"object":"hist.txt","file":"hist.txt"}]}
{"id":"stats","kind":"command","cmd":"awk '{s+=$1} END {print NR, s}' n > r/stats","inputs":[{"object":"nums","as":"n"}],"outputs":[{"object":"stats.txt","file":"r/stats"}]}
{"id":"pack","kind":"command","cmd":"cat h s | gzip -9 -n -c > final.gz","inputs":[{"object":"hist.txt","as":"h"},{"object":"stats.txt","as":"s"}],"outputs":[{"object":"final.gz","file":"final.gz"}]}
EOF_WL
jd_run run "$d/wf.jsonl" --nodes 4 --slots 1 --outputs "$T/out" --records "$T/run.rec"
expect_code 0 "$RUN_RC" "run --outputs: $(cat "$T/run.err")"
check_records "$d/wf.jsonl" "$T/run.rec"
# Reading an output is a dependency: pack started after hist and stats ended.
python3 - "$T/run.rec" <<'EOF_PY' || fail "an implied dependency did not hold"
import json, sys
rec = {r["id"]: r for r in map(json.loads, open(sys.argv[1])) if "id" in r}
for child, parents in {"hist": ["split"], "stats": ["split"], "pack": ["hist", "stats"]}.items():
    for p in parents:
        assert rec[child]["start_ns"] >= rec[p]["end_ns"], (child, p)
EOF_PY
( cd "$d" && mkdir -p h/parts h/r && cp pairs.txt h/in.txt && cd h &&
  cut -d' ' -f1 in.txt | sort -n > parts/nums && cut -d' ' -f2 in.txt | sort > parts/keys &&
  uniq -c parts/keys | sort -rn > hist.txt &&
  awk '{s+=$1} END {print NR, s}' parts/nums > r/stats &&
  cat hist.txt r/stats | gzip -9 -n -c > final.gz )
cmp "$T/out/final.gz" "$d/h/final.gz" || fail "the fetched final output differs from the commands run by hand"
for f in "$T"/out/*; do
    [ "$(basename "$f")" = final.gz ] || fail "an output that a task reads was fetched: $f"
done
grep -qE '^  outputs +1 file, [0-9]+ bytes in ' "$T/run.out" || { cat "$T/run.out" >&2; fail "the summary does not count the outputs"; }

# A declared output that is never written.
cat >"$d/miss.jsonl" <<'EOF_WL'
{"id":"a","kind":"command","cmd":"echo no file","outputs":[{"object":"x","file":"x.txt"}]}
{"id":"b","kind":"command","cmd":"cat x.txt","inputs":["x"]}
{"id":"flaky","kind":"command","cmd":"if [ -e ../flaky.mark ]; then echo ok > y; else touch ../flaky.mark; fi","retries":1,"outputs":[{"object":"y","file":"y"}]}
{"id":"c","kind":"command","cmd":"cat y","inputs":["y"]}
EOF_WL
jd_run miss "$d/miss.jsonl" --nodes 1 --slots 1 --records "$T/miss.rec"
expect_code 1 "$RUN_RC" "a missing declared output fails the run"
grep -q "declared output 'x.txt' is missing after the command exited 0" "$T/miss.out" "$T/miss.err" ||
    { cat "$T/miss.out" "$T/miss.err" >&2; fail "the missing output is not named"; }
python3 - "$T/miss.rec" <<'EOF_PY' || fail "the records of the missing output run are wrong"
import json, sys
rec = {r["id"]: r for r in map(json.loads, open(sys.argv[1])) if "id" in r}
assert rec["a"]["status"] == "failed", rec["a"]
assert rec["b"]["status"] == "cancelled", rec["b"]
assert rec["flaky"]["status"] == "done", rec["flaky"]
assert rec["c"]["status"] == "done", rec["c"]
EOF_PY

start_cluster 3 1
timeout -k 5 60 "$JACKDAW" submit "$d/wf.jsonl" --cluster "$CLUSTER_FILE" --wait --quiet >"$T/sub.out" 2>&1 ||
    { cat "$T/sub.out" >&2; fail "submit --wait"; }
rc=0
( cd "$T" && timeout -k 5 60 "$JACKDAW" get stats.txt final.gz --cluster "$CLUSTER_FILE" -o got ) >"$T/get.out" 2>&1 || rc=$?
expect_code 0 $rc "jackdaw get: $(cat "$T/get.out")"
cmp "$T/got/stats.txt" "$d/h/r/stats" || fail "jackdaw get of a declared output differs"
cmp "$T/got/final.gz" "$d/h/final.gz" || fail "jackdaw get final.gz differs"
# Its standard output is its log, and no object of its own.
[ "$(timeout -k 5 30 "$JACKDAW" logs split --stdout --cluster "$CLUSTER_FILE")" = "split done" ] ||
    fail "split's standard output is not its log"
rc=0
timeout -k 5 60 "$JACKDAW" get split --cluster "$CLUSTER_FILE" -o "$T/got" >"$T/get2.out" 2>&1 || rc=$?
expect_code 1 $rc "jackdaw get of a task with declared outputs"
grep -q "'split': no node holds it" "$T/get2.out" || { cat "$T/get2.out" >&2; fail "get split does not say it holds nothing"; }
stop_cluster

GATE="$T/gate"
cat >"$d/lost.jsonl" <<EOF_WL
{"id":"w","kind":"command","cmd":"echo ran >> $T/w.runs; seq 1 100 > w.txt","outputs":[{"object":"w.txt","file":"w.txt"}]}
{"id":"g","kind":"command","cmd":"i=0; while [ ! -e $GATE ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done","parents":["w"]}
{"id":"r","kind":"command","cmd":"awk '{s+=\$1} END {print s}' w.txt > sum","parents":["g"],"inputs":["w.txt"],"outputs":[{"object":"sum","file":"sum"}]}
EOF_WL
LOG_ALLOW="declared dead|closed by peer|reset by peer|refused|metadata status|unavailable: Host is down|cannot fetch|fetch of .* failed"
start_cluster 4 1 --replicas 2 --failure-timeout 500
mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
: >"$T/lost.rec"
timeout -k 5 90 "$JACKDAW" submit "$d/lost.jsonl" --cluster "$CLUSTER_FILE" --wait --quiet \
    --records "$T/lost.rec" --outputs "$T/lost.out" --timeout 80 >"$T/lost.sub" 2>&1 &
client=$!
# The trace says when the writer ended (its outputs are kept before its end is traced);
# the records are written as the client hears, which may be later.
w_done() { "$JACKDAW" tasks --cluster "$CLUSTER_FILE" --state done --json 2>/dev/null | grep -q '"id":"w"'; }
wait_until 30 w_done || fail "the writer never ended"
wnode=$("$JACKDAW" tasks --cluster "$CLUSTER_FILE" --state done --json | "$PY" -c 'import json,sys; print([r for r in map(json.loads, sys.stdin) if r.get("id") == "w"][0]["node"])')
kill -KILL "${pids[$wnode]}"
CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[$wnode]}/}")
touch "$GATE"
rc=0
wait "$client" || rc=$?
expect_code 0 $rc "the reader of a lost declared output: $(cat "$T/lost.sub")"
[ "$(cat "$T/lost.out/sum")" = 5050 ] || fail "the reader of the recomputed output got '$(cat "$T/lost.out/sum")'"
check_records "$d/lost.jsonl" "$T/lost.rec"
[ "$(grep -c ran "$T/w.runs")" -eq 2 ] || fail "the writer of the lost output ran $(grep -c ran "$T/w.runs") times, not twice"
stop_cluster
no_daemons_left "after the declared outputs runs"
