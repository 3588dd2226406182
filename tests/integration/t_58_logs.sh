#!/bin/bash
# t_58_logs: `jackdaw logs TASK` shows a command task's output by its workload id, its
# standard output to ours and its standard error (kept apart) to ours, --stdout or
# --stderr for one, while its job runs and after; the tail of a
# long one with --bytes; and names what is wrong otherwise: a task that is no command,
# an id the job does not have (exit 3).  A command also sees which task it is
# (JACKDAW_JOB, JACKDAW_TASK, JACKDAW_NODE, JACKDAW_ATTEMPT).
. "$(dirname "$0")/lib.sh"

start_cluster 2 2
GATE="$T/gate"
cat >"$T/wl.jsonl" <<EOF_WL
{"id": "env", "kind": "command", "cmd": "echo job=\$JACKDAW_JOB task=\$JACKDAW_TASK node=\$JACKDAW_NODE attempt=\$JACKDAW_ATTEMPT; echo on-stderr >&2"}
{"id": "quiet", "kind": "noop"}
{"id": "long", "kind": "command", "cmd": "seq 1 50000"}
{"id": "slow", "kind": "command", "cmd": "echo started; i=0; while [ ! -e $GATE ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done; echo finished"}
EOF_WL
timeout -k 5 60 "$JACKDAW" submit "$T/wl.jsonl" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 50 \
    >"$T/submit.out" 2>&1 &
sub=$!
# While the job runs: the slow task's first line is there before it ends.
slow_started() { "$JACKDAW" logs slow --cluster "$CLUSTER_FILE" 2>/dev/null | grep -qx started; }
wait_until 20 slow_started || fail "logs of a running task never showed its first line"
"$JACKDAW" logs slow --cluster "$CLUSTER_FILE" | grep -q finished && fail "the running task had finished already?"
touch "$GATE"
wait "$sub" || { cat "$T/submit.out" >&2; fail "the job failed"; }
[ "$("$JACKDAW" logs slow --cluster "$CLUSTER_FILE" | tail -1)" = finished ] || fail "logs after the end lacks the last line"

job=$(ls "$(dirname "$CLUSTER_FILE")/jobs" | sed 's/\.json$//' | head -1)
out=$("$JACKDAW" logs env --cluster "$CLUSTER_FILE" 2>"$T/env.err") || fail "logs env exited $?"
echo "$out" | grep -qE "^job=$job task=0 node=[01] attempt=0$" || fail "env task printed: $out"
grep -qx on-stderr "$T/env.err" || fail "standard error missing: $(cat "$T/env.err")"
echo "$out" | grep -q on-stderr && fail "standard error mixed into standard output: $out"
[ "$("$JACKDAW" logs env --stderr --cluster "$CLUSTER_FILE" 2>&1)" = on-stderr ] || fail "--stderr shows more than stderr"
"$JACKDAW" logs env --stdout --cluster "$CLUSTER_FILE" 2>&1 | grep -q on-stderr && fail "--stdout shows stderr"
[ "$("$JACKDAW" logs env --path --cluster "$CLUSTER_FILE" | sed 's#.*/##' | tr '\n' ' ')" = "output stderr " ] ||
    fail "--path does not name output and stderr"
tail=$("$JACKDAW" logs long --cluster "$CLUSTER_FILE" --bytes 12 2>"$T/long.err")
[ "$tail" = "$(printf '49999\n50000')" ] || fail "--bytes 12 gave '$tail'"
grep -q "the last 12 of 288894 bytes" "$T/long.err" || { cat "$T/long.err" >&2; fail "no note of the cut"; }
[ -f "$("$JACKDAW" logs long --cluster "$CLUSTER_FILE" --path --stdout)" ] || fail "--path names no file"

rc=0
"$JACKDAW" logs quiet --cluster "$CLUSTER_FILE" >"$T/quiet.out" 2>&1 || rc=$?
expect_code 3 $rc "logs of a noop task"
grep -q "task 'quiet' .* it is not a command task" "$T/quiet.out" || { cat "$T/quiet.out" >&2; fail "no reason"; }
rc=0
"$JACKDAW" logs nope --cluster "$CLUSTER_FILE" >"$T/nope.out" 2>&1 || rc=$?
expect_code 3 $rc "logs of an unknown task"
grep -q "has no task 'nope'" "$T/nope.out" || { cat "$T/nope.out" >&2; fail "no reason"; }
stop_cluster
