#!/bin/bash
# t_80_lost_node_and_signals: a job whose node dies ends at once with exit 4 and a
# message naming the node (it must not wait for a timeout), and a `jackdaw run`
# stopped by SIGTERM, or killed outright, leaves no daemon behind.
. "$(dirname "$0")/lib.sh"

wl="$T/bot.jsonl"
"$JACKDAW" gen bot --tasks 300 --duration 0.02 --seed 5 -o "$wl" || fail "jackdaw gen failed"

# 1. A daemon dies mid-job.
start_cluster 3 2
victim=$(cluster_pids "$CLUSTER_FILE" | sed -n 2p)
timeout -k 5 60 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --quiet \
    --timeout 50 >"$T/submit.out" 2>&1 &
client=$!
sleep 0.5
kill -9 "$victim"
start=$SECONDS
wait "$client"
rc=$?
elapsed=$((SECONDS - start))
cat "$T/submit.out"
expect_code 4 "$rc" "submit --wait after a node died"
grep -q "lost connection to node 1" "$T/submit.out" || fail "the client did not name the lost node"
# Not a timing assertion on speed: the bound only tells "ended on the loss" from
# "waited out its 50 s timeout".
[ "$elapsed" -lt 40 ] || fail "the client waited ${elapsed}s instead of ending on the loss"
stop_cluster

# 2. SIGTERM to `jackdaw run`: it stops its cluster, removes its files, exits 130.
timeout -k 5 60 "$JACKDAW" run "$wl" --nodes 2 --slots 1 --quiet >"$T/run.out" 2>&1 &
runner=$!
wait_until 10 sh -c "ls -d '$T'/jackdaw-run-*/cluster.json >/dev/null 2>&1" ||
    fail "run did not start its cluster"
sleep 0.3
kill -TERM "$runner"
wait "$runner"
expect_code 130 $? "run stopped by SIGTERM"
grep -q "interrupted by signal 15" "$T/run.out" || fail "run did not say it was interrupted"
wait_until 10 sh -c "! ls -d '$T'/jackdaw-run-* >/dev/null 2>&1" ||
    fail "run left its directory behind"
[ -z "$(pids_in_tmpdir)" ] || fail "daemons left running after SIGTERM: $(pids_in_tmpdir)"

# 3. SIGKILL to `jackdaw run`: its daemons follow it (parent-death signal).
timeout -k 5 60 "$JACKDAW" run "$wl" --nodes 2 --slots 1 --quiet >"$T/run2.out" 2>&1 &
runner=$!
wait_until 10 sh -c "ls '$T'/jackdaw-run-*/cluster.json >/dev/null 2>&1" ||
    fail "run did not start its cluster"
sleep 0.3
kill -KILL "$runner"
wait "$runner" 2>/dev/null
left=""
for _ in $(seq 100); do
    left=$(pids_in_tmpdir)
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] || fail "daemons survived a killed run: $left"
note "lost node ended the job with exit 4 in ${elapsed}s; signals left nothing running"
