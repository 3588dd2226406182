#!/bin/bash
# t_56d_files: real files in (issue 17).  Object lines name files on disk ("path",
# relative to the workload file); the client streams them into the data plane at
# submission and a command finds each under its id, or under the name "as" gives, as
# well as inputs/N.  On 4 nodes: a word list sorted and counted by one task, whose output
# a second task compresses and a third reads back; a 12 MB random file checksummed (its
# node holds it, a task on another node fetches it); a file in a subdirectory read under
# a nested "as" name.  Every result equals the same commands run by hand on the files.
# Then the errors: a missing file and a directory are refused at their line (exit 3)
# before anything runs, and two inputs with one name are refused.
. "$(dirname "$0")/lib.sh"

d="$T/wf"
mkdir -p "$d/data/sub"
for i in $(seq 1 3000); do echo "w$(( (i * 7919) % 613 ))"; done >"$d/data/words.txt"
head -c 12000000 /dev/urandom >"$d/data/blob.bin"
printf 'nested\n' >"$d/data/sub/n.txt"
cat >"$d/wf.jsonl" <<'EOF_WL'
{"object":"words.txt","path":"data/words.txt","node":0}
{"object":"blob","path":"data/blob.bin","node":1}
{"object":"nested","path":"data/sub/n.txt"}
{"id":"count","kind":"command","cmd":"sort words.txt | uniq -c | sort -rn","inputs":["words.txt"],"stealable":false}
{"id":"pack","kind":"command","cmd":"gzip -9 -c inputs/0 | gzip -dc","parents":["count"]}
{"id":"sum","kind":"command","cmd":"cksum < blob; cat deep/er/n","inputs":["blob",{"object":"nested","as":"deep/er/n"}]}
{"id":"last","kind":"command","cmd":"cat inputs/0 inputs/1","parents":["pack","sum"]}
EOF_WL
jd_run files "$d/wf.jsonl" --nodes 4 --slots 2 --records "$T/files.rec"
expect_code 0 "$RUN_RC" "jackdaw run of a workflow of real files: $(cat "$T/files.err")"
check_records "$d/wf.jsonl" "$T/files.rec"
# The last task's output, wherever it ran.
out=$(find "$T/files/work" -path '*task-*-3/output' | head -1)
[ -n "$out" ] || fail "the last task left no output"
( cd "$d/data" && sort words.txt | uniq -c | sort -rn | gzip -9 -c | gzip -dc; cksum < blob.bin; cat sub/n.txt ) >"$T/by-hand"
cmp "$out" "$T/by-hand" || { diff "$out" "$T/by-hand" | head -5 >&2; fail "the workflow's result differs from the same commands run by hand"; }
# Links, not copies, and gone with the task: no input is left in a task directory.
left=$(find "$T/files/work" -path '*task-*' \( -type l -o -path '*/inputs/*' \) | head -3)
[ -z "$left" ] || fail "staged inputs left behind: $left"

# Refused at their line, before a daemon starts.
printf '{"object":"x","path":"data/none"}\n{"id":"t","kind":"command","cmd":"true","inputs":["x"]}\n' >"$d/missing.jsonl"
jd_run missing "$d/missing.jsonl" --nodes 2
expect_code 3 "$RUN_RC" "a missing input file"
grep -q "missing.jsonl:1: object 'x': cannot read path '$d/data/none': No such file or directory" "$T/missing.err" ||
    { cat "$T/missing.err" >&2; fail "a missing file is not named with its line"; }
printf '{"object":"x","path":"data/sub"}\n' >"$d/dir.jsonl"
jd_run dir "$d/dir.jsonl" --nodes 2
expect_code 3 "$RUN_RC" "a directory as an input file"
grep -q "dir.jsonl:1: object 'x': path '$d/data/sub' is not a regular file" "$T/dir.err" ||
    { cat "$T/dir.err" >&2; fail "a directory is not named with its line"; }
printf '%s\n' '{"object":"a","path":"data/words.txt"}' '{"object":"b","path":"data/sub/n.txt"}' \
    '{"id":"t","kind":"command","cmd":"true","inputs":["a",{"object":"b","as":"a"}]}' >"$d/twice.jsonl"
jd_run twice "$d/twice.jsonl" --nodes 2
expect_code 3 "$RUN_RC" "two inputs under one name"
grep -q "twice.jsonl:3: task 't': two inputs are named 'a' in its directory" "$T/twice.err" ||
    { cat "$T/twice.err" >&2; fail "two inputs under one name are not refused by name"; }
no_daemons_left "after the file runs"
