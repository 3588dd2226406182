#!/bin/bash
# t_95_trace: event traces end to end, with real daemons and a real collector.
#  1. A 4-node `jackdaw run`: its trace file opens in Debian's python3-avro with the
#     record count `trace stats` gives, and `trace verify` passes (every task submitted,
#     started and ended once, in order; no gap in any node's sequence numbers; every
#     block's checksum; with --workload, no task started before its parents ended); the
#     workload's ids are in it.  Each of 150 copies with one bit flipped in a compressed
#     block fails `trace verify`.
#  2. The same file cut mid-block reads up to its last whole block, and says so.
#  3. A launched cluster whose collector is killed with SIGKILL mid-run and started
#     again by hand on the same port: it registers itself in the cluster file (a second
#     one is refused while it runs); the nodes spool, reconnect and resend; the collector
#     file plus any spool files, merged, pass `trace verify` with every task of the job;
#     and `jackdaw stop` ends the restarted collector with the cluster.
#  4. Random bytes on the collector's port are refused and logged with the sender's
#     address while the collector goes on collecting: that run's trace verifies too.
. "$(dirname "$0")/lib.sh"

jd() { timeout -k 5 60 "$JACKDAW" "$@"; }

# ---- 1. a run's trace -------------------------------------------------------------------
jd gen fanout --tasks 300 --kind sleep --duration-s 0.005 -o "$T/fan.jsonl" >/dev/null ||
    fail "gen fanout"
jd_run run1 "$T/fan.jsonl" --nodes 4 --slots 2 --trace "$T/run1.avro" --records "$T/run1.rec"
expect_code 0 "$RUN_RC" "jackdaw run with a trace"
check_records "$T/fan.jsonl" "$T/run1.rec"
[ -s "$T/run1.avro" ] || fail "no trace file at $T/run1.avro"
jd trace stats "$T/run1.avro" --json >"$T/stats1.json" || fail "trace stats exited $?"
records=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"])' "$T/stats1.json")
pyrecords=$("$PY" -c '
import sys, avro.datafile, avro.io
with open(sys.argv[1], "rb") as f:
    r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
    n = sum(1 for _ in r)
print(n)' "$T/run1.avro") || fail "python3-avro cannot read $T/run1.avro"
note "trace: $records records (trace stats), $pyrecords (python3-avro)"
[ "$records" -gt 1500 ] || fail "only $records records for 300 tasks"
[ "$records" = "$pyrecords" ] || fail "trace stats says $records records, python3-avro read $pyrecords"
jd trace verify "$T/run1.avro" >"$T/verify1.out" 2>&1 || {
    cat "$T/verify1.out" >&2
    fail "trace verify of a clean run exited $?"
}
grep -q "tasks 300 (300 done" "$T/verify1.out" || { cat "$T/verify1.out" >&2; fail "verify did not count 300 done tasks"; }
# The ids of the workload are in the file (TASK_NAMES), so a reader can join to it.
jd trace cat "$T/run1.avro" --json | "$PY" -c '
import json, sys
names = [n for line in sys.stdin for e in [json.loads(line)] if e["kind"] == "TASK_NAMES" for n in e["names"]]
ids = [json.loads(l)["id"] for l in open(sys.argv[1]) if l.strip() and "\"id\"" in l]
sys.exit(0 if names == ids else "TASK_NAMES %d names, workload %d ids" % (len(names), len(ids)))' "$T/fan.jsonl" ||
    fail "the trace does not carry the workload ids in order"

# ---- 1a. commands that exit at once: each TASK_START precedes its TASK_END -----------
# The reaper thread stamps a command's end as soon as it exits, which can be before
# exec_start returns on the loop; a start read after that came after the end (30-60 of
# 200 such tasks on 2 nodes x 4 slots, in every run).
"$PY" -c '
for i in range(200):
    print("{\"id\":\"c%d\",\"kind\":\"command\",\"cmd\":\"true\"}" % i)' >"$T/true.jsonl"
jd_run trues "$T/true.jsonl" --nodes 2 --slots 4 --policy none --trace "$T/true.avro" \
    --records "$T/true.records"
expect_code 0 "$RUN_RC" "jackdaw run of 200 'true' commands"
check_records "$T/true.jsonl" "$T/true.records"
jd trace verify "$T/true.avro" >"$T/verify-true.out" 2>&1 ||
    { cat "$T/verify-true.out" >&2; fail "trace of 200 quick commands does not verify (exit $?)"; }

# ---- 1b. block checksums: any flipped bit is reported ----------------------------------
# Deflate carries no checksum: without ours, some flips decoded to other plausible events
# (or the same ones) and verify said ok.  150 copies, each with one bit flipped at a
# seeded random place among the blocks' compressed payloads (header, count, size and
# sync marker bits are checked by the unit tests), all fail; the original passes, and
# every task started after its parents ended.
grep -q "checksums (crc32): [0-9]* match, 0 fail" "$T/verify1.out" ||
    { cat "$T/verify1.out" >&2; fail "verify did not check the blocks' checksums"; }
jd trace verify "$T/run1.avro" --workload "$T/fan.jsonl" >"$T/verify1w.out" 2>&1 ||
    { cat "$T/verify1w.out" >&2; fail "trace verify --workload of a clean run exited $?"; }
grep -q "dependencies: job [0-9]*, 299 edges checked" "$T/verify1w.out" ||
    { cat "$T/verify1w.out" >&2; fail "verify --workload did not check the 299 edges"; }
mkdir -p "$T/flips"
"$PY" - "$T/run1.avro" "$T/flips" <<'EOF_PY' || fail "could not write flipped copies"
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
def varint(p):
    z = i = 0
    while True:
        z |= (data[p + i] & 0x7f) << (7 * i)
        if not data[p + i] & 0x80:
            return (z >> 1) ^ -(z & 1), i + 1
        i += 1
sync = bytes(data[-16:])
pos = data.find(sync) + 16          # the header ends with the sync marker
bits = []                           # (first bit, bit count) of each payload
while pos < len(data):
    _, n = varint(pos); pos += n
    size, n = varint(pos); pos += n
    bits.append((pos * 8, size * 8))
    pos += size + 16
total = sum(n for _, n in bits)
rng = random.Random(95)
for k in range(150):
    x = rng.randrange(total)
    for first, n in bits:
        if x < n:
            break
        x -= n
    bit = first + x
    copy = bytearray(data)
    copy[bit // 8] ^= 1 << (bit % 8)
    open("%s/flip-%03d.avro" % (sys.argv[2], k), "wb").write(copy)
print(len(bits), "blocks,", total // 8, "payload bytes")
EOF_PY
missed=0
for f in "$T"/flips/flip-*.avro; do
    rc=0
    timeout -k 5 60 "$JACKDAW" trace verify "$f" >"$f.out" 2>&1 || rc=$?
    if [ $rc -ne 3 ]; then
        missed=$((missed + 1))
        note "$(basename "$f"): verify exited $rc: $(head -3 "$f.out" | tr '\n' ' ')"
    fi
done
[ $missed -eq 0 ] || fail "$missed of 150 single-bit flips were not reported"
note "150 single-bit flips in compressed payloads: all reported (e.g. $(grep -h -m1 'is corrupt' "$T"/flips/flip-000.avro.out | sed 's/^ *//'))"

# ---- 2. a file cut mid-block ------------------------------------------------------------
size=$(stat -c %s "$T/run1.avro")
head -c $((size - 37)) "$T/run1.avro" >"$T/cut.avro"
jd trace stats "$T/cut.avro" --json >"$T/stats-cut.json" 2>"$T/stats-cut.err"
expect_code 0 $? "trace stats of a cut file"
grep -qi "cut" "$T/stats-cut.err" || { cat "$T/stats-cut.err" >&2; fail "no message about the cut"; }
cut_records=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"])' "$T/stats-cut.json")
[ "$cut_records" -lt "$records" ] && [ "$cut_records" -gt 0 ] ||
    fail "cut file: $cut_records records of $records"
note "cut 37 bytes off: $cut_records of $records records readable"

# ---- 3. collector killed and restarted mid-run --------------------------------------------
LOG_ALLOW='collector at .* away|trace: .* not acknowledged|cut tail|truncat|missing'
start_cluster 4 2 --trace "$T/killed.avro"
cport=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["port"]')
cpid=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["pid"]')
jd gen bot --tasks 400 --kind sleep --duration-s 0.04 -o "$T/bot.jsonl" >/dev/null || fail "gen bot"
bg timeout -k 5 60 "$JACKDAW" submit "$T/bot.jsonl" --cluster "$CLUSTER_FILE" --wait --quiet \
    --timeout 50 --records "$T/bot.rec" >"$T/submit.out" 2>&1
sub=${BG_PIDS[-1]}
# Kill it once some node's events are in its file, so that the restart has to resume.
node_events_in() {
    "$JACKDAW" trace stats "$1" --json 2>/dev/null | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if any(int(k) >= 0 for k in j["by_node"]) else 1)'
}
wait_until 10 node_events_in "$T/killed.avro" || fail "no node's events reached the collector"
kill -KILL "$cpid"
wait_until 5 eval "! pid_alive $cpid" || fail "collector $cpid survived SIGKILL"
note "collector $cpid killed at $(stat -c %s "$T/killed.avro") bytes; restarting on port $cport"
bg "$JACKDAW" collector --cluster "$CLUSTER_FILE" --listen "127.0.0.1:$cport" \
    --trace "$T/killed.avro" --log-level info >"$CLUSTER_WORKDIR/collector-2.log" 2>&1
cpid2=${BG_PIDS[-1]}
registered() {
    [ "$(cluster_field "$CLUSTER_FILE" 'c["collector"]["pid"], c["collector"]["port"]')" = "($cpid2, $cport)" ]
}
wait_until 10 registered ||
    fail "the restarted collector $cpid2 is not in the cluster file: $(cluster_field "$CLUSTER_FILE" 'c["collector"]')"
# While it runs, another collector for the same cluster is refused and changes nothing.
timeout -k 5 30 "$JACKDAW" collector --cluster "$CLUSTER_FILE" --listen 127.0.0.1:0 \
    --trace "$T/second.avro" >"$T/second.out" 2>&1
expect_code 4 $? "a second collector for a cluster whose collector runs"
grep -q "already runs" "$T/second.out" || fail "the second collector says: $(cat "$T/second.out")"
registered || fail "the refused collector rewrote the cluster file"
wait "$sub"
expect_code 0 $? "the job whose collector was killed"
check_records "$T/bot.jsonl" "$T/bot.rec"
stop_cluster
grep -q "and the collector" "$T/stop.out" || fail "stop says: $(cat "$T/stop.out")"
wait_until 10 eval "! pid_alive $cpid2" || fail "jackdaw stop did not end the restarted collector $cpid2"
spools=$(find "$CLUSTER_WORKDIR" -name 'trace-spool*.avro' -size +0 | sort)
note "spool files left: ${spools:-none}"
# shellcheck disable=SC2086
jd trace merge -o "$T/merged.avro" "$T/killed.avro" $spools >"$T/merge.out" 2>&1 || {
    cat "$T/merge.out" >&2
    fail "trace merge exited $?"
}
jd trace verify "$T/merged.avro" >"$T/verify3.out" 2>&1 || {
    cat "$T/verify3.out" >&2
    fail "the merged trace of a run whose collector was killed does not verify"
}
grep -q "tasks 400 (400 done" "$T/verify3.out" || { cat "$T/verify3.out" >&2; fail "merged trace lacks tasks"; }
# The restarted collector told each node where its file ended, and the nodes resent
# the rest: the collector's file alone is whole too.
grep -q "resuming at seq [1-9]" "$CLUSTER_WORKDIR/collector-2.log" ||
    fail "the restarted collector resumed no node past seq 0"
jd trace verify "$T/killed.avro" >"$T/verify3b.out" 2>&1 || {
    cat "$T/verify3b.out" >&2
    fail "the restarted collector's own file does not verify"
}
note "merged trace verifies: $(head -2 "$T/verify3.out" | tr '\n' ' ')"

# ---- 4. garbage on the collector's port ---------------------------------------------------
LOG_ALLOW="$LOG_ALLOW|dropped|garbage|bad frame|handshake|127\\.0\\.0\\.1"
rm -rf "$T/g"
jd gen bot --tasks 300 --kind sleep --duration-s 0.02 -o "$T/g.jsonl" >/dev/null || fail "gen"
start_cluster 3 2 --trace "$T/garbage.avro"
gport=$(cluster_field "$CLUSTER_FILE" 'c["collector"]["port"]')
bg timeout -k 5 60 "$JACKDAW" submit "$T/g.jsonl" --cluster "$CLUSTER_FILE" --wait --quiet \
    --timeout 50 >"$T/gsubmit.out" 2>&1
gsub=${BG_PIDS[-1]}
sent=$("$PY" -c '
import os, socket, sys
ports = []
for i in range(3):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    ports.append(str(s.getsockname()[1]))
    try:
        s.sendall(os.urandom(4096))
        s.recv(1)
    except OSError:
        pass
    s.close()
print(" ".join(ports))' "$gport") || fail "could not send garbage to the collector"
wait "$gsub"
expect_code 0 $? "the job during the garbage"
glog="$CLUSTER_WORKDIR/collector.log"
for p in $sent; do
    grep -q "127.0.0.1:$p" "$glog" || { cat "$glog" >&2; fail "collector log does not name the garbage sender 127.0.0.1:$p"; }
done
stop_cluster
jd trace verify "$T/garbage.avro" >"$T/verify4.out" 2>&1 || {
    cat "$T/verify4.out" >&2
    fail "trace of the run with garbage does not verify"
}
note "garbage from ports $sent refused and logged; the trace verifies"
echo "PASS: $TEST_NAME"
