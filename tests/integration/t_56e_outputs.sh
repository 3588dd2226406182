#!/bin/bash
# t_56e_outputs: results out of the cluster (issue 17).
#   run --outputs DIR on 4 nodes: a workflow of real programs (sort, head, gzip, cut, uniq)
#   reading a declared input file and each other's outputs; DIR gets the final outputs
#   (of the tasks no task reads), byte-identical to the same commands run by hand in one
#   directory, and --keep-object's task output too; a done task with an empty output
#   gets an empty file.
#   jackdaw get on a launched cluster: a task's output and an initial object (the file
#   sent in) come back whole; an unknown id and an absent object exit 1 naming them.
#   --keep-object with an unknown id is refused before anything runs (exit 3).
. "$(dirname "$0")/lib.sh"

d="$T/wf"
mkdir -p "$d"
seq 1 4000 | awk '{ print ($1 * 7919) % 1000, "row" $1 }' >"$d/table.txt"
cat >"$d/wf.jsonl" <<'EOF_WL'
{"object":"table.txt","path":"table.txt"}
{"id":"sorted","kind":"command","cmd":"sort -n table.txt","inputs":["table.txt"]}
{"id":"top","kind":"command","cmd":"head -100 inputs/0","parents":["sorted"]}
{"id":"gz","kind":"command","cmd":"gzip -9 -n -c inputs/0","parents":["top"]}
{"id":"count","kind":"command","cmd":"cut -d' ' -f1 table.txt | sort | uniq -c | sort -rn | head -5","inputs":["table.txt"]}
{"id":"quiet","kind":"command","cmd":"true"}
EOF_WL
jd_run out "$d/wf.jsonl" --nodes 4 --slots 2 --outputs "$T/out" --keep-object sorted --records "$T/out.rec"
expect_code 0 "$RUN_RC" "run --outputs: $(cat "$T/out.err")"
check_records "$d/wf.jsonl" "$T/out.rec"
( cd "$d" && sort -n table.txt >"$T/h.sorted" && head -100 "$T/h.sorted" | gzip -9 -n -c >"$T/h.gz" &&
  cut -d' ' -f1 table.txt | sort | uniq -c | sort -rn | head -5 >"$T/h.count" )
cmp "$T/out/gz" "$T/h.gz" || fail "the fetched final output gz differs from the commands run by hand"
cmp "$T/out/count" "$T/h.count" || fail "the fetched final output count differs from the commands run by hand"
cmp "$T/out/sorted" "$T/h.sorted" || fail "--keep-object sorted differs from sort run by hand"
[ -f "$T/out/quiet" ] && [ ! -s "$T/out/quiet" ] || fail "a done task with empty output has no empty file"
[ ! -e "$T/out/top" ] || fail "an intermediate output (top) was fetched without --keep-object"
ls "$T/out" | grep -q '\.part$' && fail "a partial file was left in the outputs"
grep -qE '^  outputs +4 files, [0-9]+ bytes in ' "$T/out.out" || { cat "$T/out.out" >&2; fail "the summary does not count the outputs"; }

start_cluster 3 2
timeout -k 5 60 "$JACKDAW" submit "$d/wf.jsonl" --cluster "$CLUSTER_FILE" --wait --quiet >"$T/sub.out" 2>&1 ||
    { cat "$T/sub.out" >&2; fail "submit --wait"; }
rc=0
( cd "$T" && timeout -k 5 60 "$JACKDAW" get gz table.txt --cluster "$CLUSTER_FILE" -o got ) >"$T/get.out" 2>&1 || rc=$?
expect_code 0 $rc "jackdaw get: $(cat "$T/get.out")"
cmp "$T/got/gz" "$T/h.gz" || fail "jackdaw get gz differs"
cmp "$T/got/table.txt" "$d/table.txt" || fail "jackdaw get of the initial object differs from its file"
rc=0
timeout -k 5 60 "$JACKDAW" get nosuch quiet --cluster "$CLUSTER_FILE" -o "$T/got" >"$T/get2.out" 2>&1 || rc=$?
expect_code 1 $rc "jackdaw get of unknown and absent ids"
grep -q "'nosuch': the job's workload ($d/wf.jsonl) has no such task or object" "$T/get2.out" ||
    { cat "$T/get2.out" >&2; fail "an unknown id is not named"; }
grep -q "'quiet': no node holds it" "$T/get2.out" || { cat "$T/get2.out" >&2; fail "an absent object is not named"; }
stop_cluster

jd_run badkeep "$d/wf.jsonl" --nodes 2 --outputs "$T/o2" --keep-object sorted,nope
expect_code 3 "$RUN_RC" "--keep-object with an unknown id"
grep -q "\-\-keep-object: 'nope' is no task or object of" "$T/badkeep.err" || { cat "$T/badkeep.err" >&2; fail "the unknown id is not named"; }
[ ! -e "$T/o2" ] || fail "a refused run wrote outputs"
no_daemons_left "after the outputs runs"
