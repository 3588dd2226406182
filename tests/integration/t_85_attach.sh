#!/bin/bash
# t_85_attach: a client detaches and reattaches to a running job (issue 15).  A job
# submitted without --wait is followed by `jackdaw attach` from another process: its
# records hold every task exactly once, the ends before the attach included.  Ctrl-C of
# submit --wait leaves the job running (exit 130) and attach follows it to the end.
# With --replicas 2, a node killed while attach follows, and a node killed before the
# attach: attach exits 0, every task once, and the summary reports the failure.  Waits
# read records or status lines, never a fixed delay.
. "$(dirname "$0")/lib.sh"

LOG_ALLOW="declared dead|closed by peer|reset by peer|refused|metadata status"

# once WORKLOAD RECORDS : every task of the workload exactly once in the records.
once() {
    check_records "$1" "$2"
    "$PY" - "$1" "$2" <<'PY' || fail "records $2: not every task exactly once"
import json, sys
want = {json.loads(l)["id"] for l in open(sys.argv[1]) if '"id"' in l}
got = [json.loads(l)["id"] for l in open(sys.argv[2])]
dup = len(got) - len(set(got))
sys.exit(0 if set(got) == want and dup == 0 and len(got) == len(want) else
         print("%d records, %d distinct, %d tasks" % (len(got), len(set(got)), len(want))) or 1)
PY
}

# ended JOB : how many of JOB's tasks the live nodes count as ended (status).
ended() {
    "$JACKDAW" status --cluster "$CLUSTER_FILE" 2>/dev/null |
        awk -v j="job $1:" 'index($0, j) == 1 { split($3, a, "/"); print a[1] }'
}

wl="$T/bot.jsonl"
"$JACKDAW" gen bot --tasks 800 --kind sleep --duration-s 0.01-0.03 --seed 5 -o "$wl" || fail "gen failed"
total=$(grep -c . "$wl")
start_cluster 4 2 --replicas 2 --failure-timeout 400
mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')

# 1. submit without --wait, then attach.
timeout -k 5 30 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" >"$T/submit1.out" 2>&1 ||
    fail "submit exited $?: $(cat "$T/submit1.out")"
job=$(sed -n 's/^submitted job \([0-9]*\):.*/\1/p' "$T/submit1.out")
[ -n "$job" ] || fail "submit printed no job id: $(cat "$T/submit1.out")"
rc=0
timeout -k 5 120 "$JACKDAW" attach "$job" --cluster "$CLUSTER_FILE" --quiet --records "$T/a1.rec" \
    >"$T/attach1.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/attach1.out" >&2; fail "attach exited $rc"; }
grep -q "done $total   failed 0   cancelled 0" "$T/attach1.out" || fail "attach summary: $(cat "$T/attach1.out")"
once "$wl" "$T/a1.rec"
note "attach after submit: $total tasks, each once"
# A job followed to its end is reported as over, not followed forever.
rc=0
timeout -k 5 30 "$JACKDAW" attach "$job" --cluster "$CLUSTER_FILE" --quiet >"$T/attach1b.out" 2>&1 || rc=$?
expect_code 0 "$rc" "attach to a job already over"
grep -q "has ended" "$T/attach1b.out" || fail "attach to an ended job says: $(cat "$T/attach1b.out")"
rc=0
timeout -k 5 30 "$JACKDAW" attach 12345 --cluster "$CLUSTER_FILE" >"$T/attach1c.out" 2>&1 || rc=$?
expect_code 3 "$rc" "attach to a job never submitted"

# 2. Ctrl-C of submit --wait detaches: the job goes on, attach (latest job) follows it.
: >"$T/w2.rec"
timeout -k 5 120 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --quiet \
    --records "$T/w2.rec" >"$T/submit2.out" 2>&1 &
client=$!
wait_until 60 eval '[ "$(grep -c . "$T/w2.rec")" -ge $((total / 4)) ]' || fail "a quarter never ended"
signal_user INT "$client"
rc=0
wait "$client" || rc=$?
expect_code 130 "$rc" "submit --wait interrupted"
grep -q "goes on" "$T/submit2.out" || fail "interrupted submit says: $(cat "$T/submit2.out")"
rc=0
timeout -k 5 120 "$JACKDAW" attach --cluster "$CLUSTER_FILE" --quiet --records "$T/a2.rec" \
    >"$T/attach2.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/attach2.out" >&2; fail "attach after Ctrl-C exited $rc"; }
once "$wl" "$T/a2.rec"
note "Ctrl-C then attach: $(grep -c . "$T/w2.rec") ends before, every task once in attach's records"

# 3. A node killed while attach follows: exit 0, every task once, the failure reported.
timeout -k 5 30 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" >"$T/submit3.out" 2>&1 || fail "submit 3"
: >"$T/a3.rec"
timeout -k 5 120 "$JACKDAW" attach --cluster "$CLUSTER_FILE" --quiet --records "$T/a3.rec" \
    >"$T/attach3.out" 2>&1 &
client=$!
wait_until 60 eval '[ "$(grep -c . "$T/a3.rec")" -ge $((total / 4)) ]' || fail "a quarter never ended (3)"
kill -KILL "${pids[2]}"
rc=0
wait "$client" || rc=$?
[ $rc -eq 0 ] || { cat "$T/attach3.out" >&2; fail "attach exited $rc after node 2 died"; }
once "$wl" "$T/a3.rec"
grep -qE "^  failures +1 node declared dead" "$T/attach3.out" || fail "no failures line: $(cat "$T/attach3.out")"
grep -qE "^    node 2 declared dead at [0-9:]{8} \([0-9.]+ s into the job\) by node [013]$" \
    "$T/attach3.out" || fail "no line for node 2's death: $(cat "$T/attach3.out")"
note "kill during attach: $(grep failures "$T/attach3.out")"
CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[2]}/}")
stop_cluster

# 4. A node killed before the attach (a new cluster: submit needs every node).
start_cluster 4 2 --replicas 2 --failure-timeout 400
mapfile -t pids < <(cluster_field "$CLUSTER_FILE" '"\n".join(str(n["pid"]) for n in c["nodes"])')
timeout -k 5 30 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" >"$T/submit4.out" 2>&1 || fail "submit 4"
job=$(sed -n 's/^submitted job \([0-9]*\):.*/\1/p' "$T/submit4.out")
wait_until 60 eval '[ "$(ended "$job")" -ge $((total / 4)) ]' || fail "a quarter never ended (4)"
kill -KILL "${pids[1]}"
for i in 0 2 3; do
    wait_until 30 grep -q "node 1 declared dead" "$CLUSTER_WORKDIR/node-$i.log" ||
        fail "node $i did not declare node 1 dead"
done
rc=0
timeout -k 5 120 "$JACKDAW" submit --follow "$job" --cluster "$CLUSTER_FILE" --quiet \
    --records "$T/a4.rec" >"$T/attach4.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/attach4.out" >&2; fail "submit --follow after node 1 died exited $rc"; }
once "$wl" "$T/a4.rec"
grep -qE "^    node 1 declared dead at" "$T/attach4.out" || fail "no line for node 1's death: $(cat "$T/attach4.out")"
note "kill before attach (submit --follow): $(grep failures "$T/attach4.out")"
CLUSTER_PIDS=("${CLUSTER_PIDS[@]/${pids[1]}/}")
stop_cluster
