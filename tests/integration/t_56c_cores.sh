#!/bin/bash
# t_56c_cores: a task takes its `cores` slots while it runs (issue 17).
#   1 node x 4 slots: a 4-core command runs alone and sees JACKDAW_CORES=4, four 1-core
#   sleeps run together, a 3-core sleep waits for three free slots; 2 nodes x 3 slots: a
#   mix of 1-, 2- and 3-core tasks with parents.  check_records --slots checks from the
#   records that the runs overlapping on a node never ask for more cores than it has.
#   A task wider than every node is refused at submission, naming the file, line and
#   task (exit 3), and nothing runs; bad values of cores are refused by the parser.
. "$(dirname "$0")/lib.sh"

wl="$T/one.jsonl"
cat >"$wl" <<EOF_WL
{"id":"wide","kind":"command","cmd":"echo \$JACKDAW_CORES > $T/wide.cores; sleep 0.2","cores":4}
{"id":"n1","kind":"sleep","duration_s":0.2}
{"id":"n2","kind":"sleep","duration_s":0.2}
{"id":"n3","kind":"sleep","duration_s":0.2}
{"id":"n4","kind":"sleep","duration_s":0.2}
{"id":"w3","kind":"sleep","duration_s":0.2,"cores":3}
{"id":"after","kind":"command","cmd":"echo \$JACKDAW_CORES > $T/after.cores","parents":["w3"]}
EOF_WL
jd_run one "$wl" --nodes 1 --slots 4 --records "$T/one.rec"
expect_code 0 "$RUN_RC" "jackdaw run with wide tasks: $(cat "$T/one.err")"
check_records "$wl" "$T/one.rec" --slots 4
[ "$(cat "$T/wide.cores")" = 4 ] || fail "the 4-core command saw JACKDAW_CORES=$(cat "$T/wide.cores")"
[ "$(cat "$T/after.cores")" = 1 ] || fail "a 1-core command saw JACKDAW_CORES=$(cat "$T/after.cores")"
# The checker itself must see an overlap that takes too many cores: the same records
# against 3 slots.
"$PY" "$HERE/check_records.py" "$wl" "$T/one.rec" --slots 3 >"$T/check3.out" &&
    fail "check_records --slots 3 accepted runs that took 4 cores at once"
grep -q 'more than its 3 slots' "$T/check3.out" || { cat "$T/check3.out" >&2; fail "check_records does not name the overlap"; }

wl2="$T/mix.jsonl"
: >"$wl2"
for i in $(seq 0 17); do
    c=$(( i % 3 + 1 ))
    p=""
    [ $i -ge 6 ] && p=",\"parents\":[\"m$(( i - 6 ))\"]"
    echo "{\"id\":\"m$i\",\"kind\":\"sleep\",\"duration_s\":0.03,\"cores\":$c$p}" >>"$wl2"
done
jd_run mix "$wl2" --nodes 2 --slots 3 --records "$T/mix.rec"
expect_code 0 "$RUN_RC" "jackdaw run of a mix of widths: $(cat "$T/mix.err")"
check_records "$wl2" "$T/mix.rec" --slots 3

# Wider than every node: refused before anything runs.
echo '{"id":"huge","kind":"command","cmd":"touch '"$T"'/huge.ran","cores":3}' >"$T/huge.jsonl"
jd_run huge "$T/huge.jsonl" --nodes 2 --slots 2
expect_code 3 "$RUN_RC" "a task wider than every node"
grep -q "huge.jsonl:1: task 'huge' asks for 3 cores; the widest node of the cluster has 2 slots" "$T/huge.err" ||
    { cat "$T/huge.err" >&2; fail "the refusal does not name the file, line, task and slots"; }
[ -e "$T/huge.ran" ] && fail "the refused task ran"

for bad in 0 '"2"' 4097 1.5; do
    echo '{"id":"b","kind":"noop","cores":'"$bad"'}' >"$T/bad.jsonl"
    jd_run bad "$T/bad.jsonl" --nodes 1 --slots 2
    expect_code 3 "$RUN_RC" "cores $bad"
    grep -q "bad.jsonl:1: task 'b': cores must be an integer from 1 to 4096" "$T/bad.err" ||
        { cat "$T/bad.err" >&2; fail "cores $bad: no file:line and reason"; }
done
no_daemons_left "after the cores runs"
