#!/bin/bash
# t_30_wrong_key: a client holding a different key is refused (submit exits 4, nothing
# runs) while the cluster keeps serving clients with the right key; the refusing
# daemon's log says why.
. "$(dirname "$0")/lib.sh"

# The refusals this test provokes are the only warnings the daemons may log.
LOG_ALLOW=' dropping 127\.0\.0\.1:[0-9]+: wrong key \(MAC mismatch\)$'
start_cluster 4 2

key_path=$(cluster_field "$CLUSTER_FILE" 'c["key"]')
[ -f "$key_path" ] || fail "cluster file names key '$key_path', which does not exist"
mode=$(stat -c %a "$key_path")
[ "$mode" = 600 ] || fail "key file $key_path has mode $mode, expected 600"

# A different, well-formed key, and a cluster file that points at it.
other_key="$T/other.key"
(umask 077 && "$PY" -c 'import os; print(os.urandom(32).hex())' >"$other_key")
chmod 600 "$other_key"
cmp -s "$other_key" "$key_path" && fail "the random key equals the cluster's key"
other="$T/other-cluster.json"
"$PY" - "$CLUSTER_FILE" "$other" "$other_key" <<'EOF_PY' || fail "cannot write $other"
import json, sys
c = json.load(open(sys.argv[1]))
c["key"] = sys.argv[3]
json.dump(c, open(sys.argv[2], "w"), indent=2)
EOF_PY

wl="$T/bot.jsonl"
"$JACKDAW" gen bot --tasks 60 --duration 0.001-0.003 --seed 5 -o "$wl" || fail "gen failed"

# The impostor, in the background, while a legitimate job runs.
bad_rc_file="$T/bad.rc"
( rc=0
  timeout -k 5 60 "$JACKDAW" submit "$wl" --cluster "$other" --wait --quiet --timeout 30 \
      --records "$T/bad.records" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
  echo $rc >"$bad_rc_file" ) &
impostor=$!
BG_PIDS+=("$impostor")

rc=0
timeout -k 5 90 "$JACKDAW" submit "$wl" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 60 \
    --records "$T/good.records" >"$T/good.out" 2>"$T/good.err" || rc=$?
[ $rc -eq 0 ] || { cat "$T/good.out" "$T/good.err"; fail "submit with the right key exited $rc"; }
check_records "$wl" "$T/good.records"

wait_until 40 test -s "$bad_rc_file" || fail "the wrong-key submit did not end"
wait "$impostor" 2>/dev/null
bad_rc=$(cat "$bad_rc_file")
if [ "$bad_rc" -ne 4 ]; then
    cat "$T/bad.out" "$T/bad.err"
    fail "submit with the wrong key exited $bad_rc, expected 4"
fi
grep -qi 'key' "$T/bad.err" || fail "the wrong-key submit's message does not mention the key: $(cat "$T/bad.err")"
note "wrong key refused: $(tail -1 "$T/bad.err")"
if [ -s "$T/bad.records" ]; then
    fail "the wrong-key submit recorded task ends: $(head -3 "$T/bad.records")"
fi

# And once more in the foreground, after the good job.
rc=0
timeout -k 5 60 "$JACKDAW" submit "$wl" --cluster "$other" --wait --quiet --timeout 30 \
    >"$T/bad2.out" 2>"$T/bad2.err" || rc=$?
expect_code 4 "$rc" "second submit with the wrong key"
rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$other" >"$T/bad-status.out" 2>&1 || rc=$?
expect_code 4 "$rc" "status with the wrong key"

# The cluster is unharmed: status works, all daemons alive, another job completes.
rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$CLUSTER_FILE" >"$T/status.out" 2>"$T/status.err" || rc=$?
[ $rc -eq 0 ] || { cat "$T/status.out" "$T/status.err"; fail "status with the right key exited $rc"; }
rows=$(grep -cE '^[0-9]+ ' "$T/status.out")
[ "$rows" -eq 4 ] || { cat "$T/status.out"; fail "status shows $rows node rows, expected 4"; }
for pid in "${CLUSTER_PIDS[@]}"; do
    pid_alive "$pid" || fail "daemon $pid died after the wrong-key connections"
done
wl2="$T/fanout.jsonl"
"$JACKDAW" gen fanout --tasks 60 --degree 2 --seed 6 -o "$wl2" || fail "gen failed"
rc=0
timeout -k 5 90 "$JACKDAW" submit "$wl2" --cluster "$CLUSTER_FILE" --wait --quiet --timeout 60 \
    --records "$T/good2.records" >"$T/good2.out" 2>"$T/good2.err" || rc=$?
[ $rc -eq 0 ] || { cat "$T/good2.out" "$T/good2.err"; fail "second submit with the right key exited $rc"; }
check_records "$wl2" "$T/good2.records"

# The daemons logged the refusal (the MAC check fails on the accepting side).
workdir=$(cluster_workdir "$CLUSTER_FILE")
ls "$workdir"/node-*.log >/dev/null 2>&1 || fail "no daemon logs in $workdir"
if ! grep -iE 'MAC|wrong key' "$workdir"/node-*.log >"$T/refusals"; then
    tail -n 20 "$workdir"/node-*.log
    fail "no daemon log in $workdir mentions the refused key"
fi
note "refusals logged: $(wc -l <"$T/refusals"); first: $(head -1 "$T/refusals")"

stop_cluster
