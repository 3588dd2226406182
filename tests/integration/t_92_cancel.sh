#!/bin/bash
# t_92_cancel: job removal with `jackdaw cancel` on a launched 3-node cluster.  A job
# with two long tasks — 'slow' (a 30 s sleep task) and 'cmdslow' (a 30 s command), each
# heading a chain of children — and a short independent branch is submitted with --wait
# in the background.  Once both long tasks run and everything else that can has ended:
#   - `cancel root` (a finished task) exits 0 and only drops root's metadata record:
#     nothing is cancelled, the long tasks keep running;
#   - `cancel nosuch` exits 3 and names the job and its workload;
#   - `cancel slow cmdslow` exits 0; both running tasks are stopped (the command's
#     process goes), the job ends with exit 1 well before the 30 s tasks would have,
#     and the records show slow, cmdslow and their descendants cancelled exactly once,
#     every other task done;
#   - once submit --wait has its summary the metadata store has forgotten the job: no
#     record is left (status --json kvs_records), and `cancel o2` of the ended job still
#     exits 0 as for any finished task.
# The bounds (20 s) only tell "stopped" from "ran to its end" (30 s); nothing is
# asserted about speed.
. "$(dirname "$0")/lib.sh"

NODES=3
# One record a task (--replicas 1), so that kvs_records counts tasks: with copies, a
# backup's count of a removed record is exact only once its job is forgotten (kvs.h).
start_cluster $NODES 2 --replicas 1

# The command task names a marker under $T in its command line, so that its process
# is found by PID (and caught by the EXIT trap if it outlived its cancellation).
marker="$T/cmdslow-marker"
wl="$T/cancel.jsonl"
cat >"$wl" <<EOF_WL
{"id":"root","kind":"sleep","duration_s":0.05}
{"id":"slow","kind":"sleep","duration_s":30,"parents":["root"]}
{"id":"c1","kind":"sleep","duration_s":0.01,"parents":["slow"]}
{"id":"c2","kind":"noop","parents":["c1"]}
{"id":"cmdslow","kind":"command","cmd":"exec $PY -c 'import time; time.sleep(30)' $marker","parents":["root"]}
{"id":"cmdc1","kind":"command","cmd":"echo must-not-run >&2","parents":["cmdslow"]}
{"id":"both","kind":"noop","parents":["c1","cmdc1"]}
{"id":"other","kind":"sleep","duration_s":0.3}
{"id":"o2","kind":"sleep","duration_s":0.01,"parents":["other"]}
EOF_WL
total=$(wc -l <"$wl")
early_done=3 # root, other, o2

# marker_pids : PIDs of live processes whose command line names $marker.
marker_pids() { pids_matching "$marker"; }
marker_running() { [ -n "$(marker_pids)" ]; }
marker_gone() { [ -z "$(marker_pids)" ]; }

# totals : "completeq busy kvs_records" summed over the nodes (status --json).
totals() {
    timeout -k 2 10 "$JACKDAW" status --cluster "$CLUSTER_FILE" --json >"$T/status.json" 2>"$T/status.err" ||
        return 1
    "$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(*[sum(n[k] for n in s["nodes"]) for k in ("completeq", "busy", "kvs_records")])' "$T/status.json"
}
# totals_are COMPLETEQ BUSY KVS_RECORDS : the totals equal these ("-" matches any).
totals_are() {
    local got want=("$@") i
    read -r -a got <<<"$(totals)" || return 1
    [ ${#got[@]} -eq 3 ] || return 1
    for i in 0 1 2; do
        [ "${want[$i]}" = - ] || [ "${got[$i]}" -eq "${want[$i]}" ] || return 1
    done
}

rm -f "$T/submit.rc"
# shellcheck disable=SC2016 # the inner shell expands its own arguments
bg sh -c 'rc=0; timeout -k 5 90 "$1" submit "$2" --cluster "$3" --wait --quiet --json --timeout 60 \
    --records "$4/records" >"$4/submit.out" 2>"$4/submit.err" || rc=$?; echo $rc >"$4/submit.rc"' \
    submit "$JACKDAW" "$wl" "$CLUSTER_FILE" "$T"

# Both long tasks run (two busy slots, the command's process is up) and every task
# that can end before them has ended.
running_now() { totals_are "$early_done" 2 "$total" && marker_running; }
wait_until 20 running_now || {
    cat "$T/submit.out" "$T/submit.err" "$T/status.json" 2>/dev/null
    fail "slow and cmdslow never ran together after root, other and o2 ended (totals: $(totals))"
}
[ -s "$T/submit.rc" ] && fail "the job ended before anything was cancelled: $(cat "$T/submit.out")"
job_files=("$(dirname "$CLUSTER_FILE")"/jobs/*.json)
if [ ${#job_files[@]} -ne 1 ] || [ ! -f "${job_files[0]}" ]; then
    fail "expected one job file, found: ${job_files[*]}"
fi
job=$(cluster_field "${job_files[0]}" 'c["job"]')
note "job $job: slow and cmdslow running (pid $(marker_pids | tr '\n' ' ')); totals $(totals)"

# 1. A finished task: its metadata record goes, nothing else changes.
rc=0
timeout -k 5 30 "$JACKDAW" cancel root --cluster "$CLUSTER_FILE" >"$T/cancel-root.out" 2>&1 || rc=$?
expect_code 0 "$rc" "cancel root (finished): $(cat "$T/cancel-root.out")"
wait_until 10 totals_are - - $((total - 1)) ||
    fail "cancel root: the metadata store still holds $(totals | cut -d' ' -f3) records, expected $((total - 1))"
for i in 1 2 3 4 5; do
    totals_are $early_done 2 $((total - 1)) ||
        fail "cancel root changed the job: totals (completeq busy records) $(totals), expected $early_done 2 $((total - 1))"
    sleep 0.1
done
marker_running || fail "cancel root stopped cmdslow"

# 2. An unknown task: exit 3, naming the job and its workload; nothing changes.
rc=0
timeout -k 5 30 "$JACKDAW" cancel nosuch --cluster "$CLUSTER_FILE" >"$T/cancel-nosuch.out" 2>&1 || rc=$?
expect_code 3 "$rc" "cancel nosuch: $(cat "$T/cancel-nosuch.out")"
grep -qw "nosuch" "$T/cancel-nosuch.out" || fail "cancel nosuch says: $(cat "$T/cancel-nosuch.out")"
grep -qw "job $job" "$T/cancel-nosuch.out" || fail "cancel nosuch does not name job $job: $(cat "$T/cancel-nosuch.out")"
grep -qF "$wl" "$T/cancel-nosuch.out" || fail "cancel nosuch does not name the workload: $(cat "$T/cancel-nosuch.out")"
totals_are $early_done 2 $((total - 1)) || fail "cancel nosuch changed the job: totals $(totals)"
note "$(cat "$T/cancel-nosuch.out")"

# 3. The two running tasks: stopped, their subtrees cancelled, the job ends.
rc=0
timeout -k 5 30 "$JACKDAW" cancel slow cmdslow --cluster "$CLUSTER_FILE" >"$T/cancel.out" 2>&1 || rc=$?
expect_code 0 "$rc" "cancel slow cmdslow: $(cat "$T/cancel.out")"
for t in slow cmdslow; do
    grep -q "removed task $t of job $job" "$T/cancel.out" || fail "cancel printed: $(cat "$T/cancel.out")"
done
wait_until 20 test -s "$T/submit.rc" ||
    fail "submit --wait still running 20 s after the cancel: the 30 s tasks were not stopped"
wait_until 10 marker_gone || fail "cmdslow's process is still running after its cancellation: $(marker_pids)"
wait_until 10 totals_are "$total" 0 0 || fail "after the job: totals $(totals), expected $total 0 0"
cat "$T/submit.out" "$T/submit.err"
expect_code 1 "$(cat "$T/submit.rc")" "submit --wait of a job with cancelled tasks"
grep -q 'must-not-run' "$T/submit.out" "$T/submit.err" && fail "a descendant of cmdslow ran"
"$PY" - "$T/submit.out" "$total" <<'EOF_PY' || fail "submit --json summary: $(cat "$T/submit.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
got = (s["tasks"], s["tasks_done"], s["tasks_failed"], s["tasks_cancelled"])
assert got == (int(sys.argv[2]), 3, 0, 6), got
EOF_PY
check_records "$wl" "$T/records" --expect-removed slow,cmdslow

# Cancelling a task of the job now that it is over and forgotten reads as it always
# did for a finished task: exit 0, nothing to cancel, no warning in the daemons' logs.
rc=0
timeout -k 5 30 "$JACKDAW" cancel o2 --cluster "$CLUSTER_FILE" >"$T/cancel-over.out" 2>&1 || rc=$?
expect_code 0 "$rc" "cancel o2 after the job: $(cat "$T/cancel-over.out")"
grep -q "removed task o2 of job $job" "$T/cancel-over.out" || fail "cancel o2 after the job printed: $(cat "$T/cancel-over.out")"
totals_are "$total" 0 0 || fail "cancel o2 after the job: totals $(totals), expected $total 0 0"
[ "$(wc -l <"$T/records")" -eq "$total" ] || fail "$(wc -l <"$T/records") records for $total tasks"

# The checker's new option means something: wrong records are refused.
refused() {
    local name=$1 rc=0
    "$PY" "$HERE/check_records.py" "$wl" "$T/$name.records" --expect-removed slow,cmdslow \
        >"$T/$name.check" 2>&1 || rc=$?
    [ $rc -eq 1 ] || fail "check_records accepted records with $name (exit $rc): $(cat "$T/$name.check")"
}
sed 's/"id":"c2","index":3,"status":"cancelled"/"id":"c2","index":3,"status":"done"/' "$T/records" >"$T/c2-done.records"
refused c2-done
{ cat "$T/records"; grep '"id":"slow"' "$T/records"; } >"$T/slow-twice.records"
refused slow-twice
"$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["id"] == "c1":
        r["start_ns"] = r["end_ns"]
    print(json.dumps(r))' "$T/records" >"$T/c1-started.records"
refused c1-started

# A task removed while it ran keeps its start time in its record: it did start.
"$PY" - "$T/records" <<'EOF_PY' || fail "the records of the removed running tasks are wrong"
import json, sys
recs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    recs[r["id"]] = r
for tid in ("slow", "cmdslow"):
    r = recs[tid]
    print("%s: %s" % (tid, json.dumps(r)))
    assert r["status"] == "cancelled", r
    assert r["start_ns"] > 0, "%s was running when it was removed, but its record has start_ns %r" % (tid, r["start_ns"])
    assert r["end_ns"] >= r["start_ns"], r
EOF_PY
stop_cluster
no_daemons_left "after stop"
