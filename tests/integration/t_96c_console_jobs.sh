#!/bin/bash
# t_96c_console_jobs: the console's job list and job filter (issue 18), in tmux.
#
# Two jobs on one 2-node cluster, each followed to its end: a.jsonl (30 sleep tasks, all
# done) and b.jsonl (one done, one failing, its child cancelled).  The console attached
# afterwards lists both in its Jobs pane (5) with the figures `jackdaw jobs --json` gives
# for each; u selects job a, then job b, then all again, and each time the header names
# the filter, its Tasks line holds that job's counts, the node table's DONE column sums to
# that job's done tasks, and the event log shows that job's lines and not the other's.
#
# Waits are bounded and for states that stay (the jobs have ended before the console
# starts); no timing is asserted.  The console and the tmux server are stopped by PID.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null || fail "tmux is needed (Debian package tmux)"
unset LINES COLUMNS
export TERM=xterm-256color

TM() { tmux -S "$T/tmux.sock" "$@"; }
SERVER_PID=""
CONSOLE_PID=""
# The console and the tmux server name $T: gone by PID before lib.sh's clean-up looks.
stop_tmux() {
    [ -n "$CONSOLE_PID" ] && kill_pids "$CONSOLE_PID"
    [ -n "$SERVER_PID" ] && kill_pids "$SERVER_PID"
    CONSOLE_PID=""
    SERVER_PID=""
}
trap 'rc=$?; stop_tmux; (exit $rc); cleanup' EXIT

pane() { TM capture-pane -t jobs -p 2>/dev/null; }
pane_has() { pane | grep -qE -- "$1"; }
show() {
    echo "--- console:" >&2
    pane >&2
}
# The node table's DONE column (the 7th field after the bar) summed over its rows.
done_sum() {
    pane | grep -E '^ *[0-9]+ \[' | awk -F']' '{ split($2, b, " "); s += b[7] } END { print s + 0 }'
}

start_cluster 2 2
"$JACKDAW" gen bot --tasks 30 --kind sleep --duration-s 0.01 -o "$T/a.jsonl" || fail "gen"
cat >"$T/b.jsonl" <<'EOF_WL'
{"id":"ok","kind":"noop"}
{"id":"bad","kind":"command","cmd":"exit 3"}
{"id":"child","kind":"noop","parents":["bad"]}
EOF_WL
sub() { timeout -k 5 60 "$JACKDAW" submit "$@" --cluster "$CLUSTER_FILE" --quiet; }
sub "$T/a.jsonl" --wait >/dev/null || fail "submit a"
sub "$T/b.jsonl" --wait >/dev/null 2>&1
timeout -k 5 30 "$JACKDAW" jobs --cluster "$CLUSTER_FILE" --json >"$T/jobs.json" || fail "jobs --json"

# The records of each job: id, state, done, failed, cancelled, tasks.
eval "$("$PY" - "$T/jobs.json" <<'EOF_PY'
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
assert [j["workload"].rsplit("/", 1)[1] for j in jobs] == ["a.jsonl", "b.jsonl"], jobs
for tag, j in zip("AB", jobs):
    for k in ("job", "state", "done", "failed", "cancelled", "tasks"):
        print("%s_%s=%s" % (tag, k.upper(), j[k]))
EOF_PY
)" || fail "cannot read jobs --json: $(cat "$T/jobs.json")"
note "job a: $A_JOB $A_STATE $A_DONE/$A_FAILED/$A_CANCELLED/$A_TASKS; job b: $B_JOB $B_STATE $B_DONE/$B_FAILED/$B_CANCELLED/$B_TASKS"
[ "$A_STATE/$A_DONE/$A_TASKS" = "done/30/30" ] || fail "job a is not done 30/30"
[ "$B_STATE/$B_DONE/$B_FAILED/$B_CANCELLED" = "failed/1/1/1" ] || fail "job b is not failed 1/1/1"

TM new-session -d -s jobs -x 132 -y 40 \
    "$JACKDAW console --cluster $CLUSTER_FILE --refresh-ms 100 2>>$T/console.err" ||
    fail "tmux new-session"
SERVER_PID=$(TM display-message -p '#{pid}')
CONSOLE_PID=$(TM display-message -p -t jobs '#{pane_pid}')
wait_until 10 pane_has 'collector up|FINISHED' || { show; fail "the console did not attach"; }

# The Jobs pane: one row per job with the records' counts.
TM send-keys -t jobs 5
row() { # TAG : the pane row the job's records call for
    local id=${1}_JOB name state done failed cancelled tasks
    name=$(echo "$1" | tr AB ab).jsonl
    state=${1}_STATE done=${1}_DONE failed=${1}_FAILED cancelled=${1}_CANCELLED tasks=${1}_TASKS
    echo "^${!id} +${name//./\\.} +${!state} +${!done}/${!failed}/${!cancelled}/${!tasks} +100\.0% +[0-9.:]+s? +[0-9]+% +0$"
}
wait_until 20 pane_has "$(row A)" || { show; fail "the Jobs pane lacks job a as its records say"; }
wait_until 10 pane_has "$(row B)" || { show; fail "the Jobs pane lacks job b as its records say"; }
pane_has '^Jobs \(2; ' || { show; fail "the Jobs pane does not count 2 jobs"; }
pane_has '\[all 2 jobs\]' || { show; fail "the header does not say all jobs are shown"; }
[ "$(done_sum)" -eq $((A_DONE + B_DONE)) ] || { show; fail "node DONE column is not both jobs'"; }

# u: job a.  The header names it; the Tasks line, node table and log are its own.
TM send-keys -t jobs u
wait_until 10 pane_has "\[job 1 of 2: $A_JOB done\]" || { show; fail "u did not select job a"; }
wait_until 10 pane_has "^Tasks .* $A_DONE/$A_TASKS +100\.0% +run 0 +fail 0" ||
    { show; fail "the Tasks line is not job a's"; }
[ "$(done_sum)" -eq "$A_DONE" ] || { show; fail "node DONE column sums to $(done_sum), not job a's $A_DONE"; }
TM send-keys -t jobs 3
wait_until 10 pane_has "^Event log of job $A_JOB" || { show; fail "the log is not filtered by job a"; }
wait_until 10 pane_has "job $A_JOB \(a\.jsonl\) finished: $A_DONE done, 0 failed, 0 cancelled" ||
    { show; fail "job a's log lacks its end"; }
pane_has "job $A_JOB submitted: $A_TASKS tasks" || { show; fail "job a's log lacks its submit"; }
pane_has "job $B_JOB|task $B_JOB:" && { show; fail "job a's log shows job b's lines"; }

# u: job b, failed: one done, one failed (exit 3), one cancelled.
TM send-keys -t jobs u
wait_until 10 pane_has "\[job 2 of 2: $B_JOB failed\]" || { show; fail "u did not select job b"; }
wait_until 10 pane_has "^Tasks .* $B_DONE/$B_TASKS +100\.0% +run 0 +fail $B_FAILED +cancelled $B_CANCELLED" ||
    { show; fail "the Tasks line is not job b's"; }
[ "$(done_sum)" -eq "$B_DONE" ] || { show; fail "node DONE column sums to $(done_sum), not job b's $B_DONE"; }
wait_until 10 pane_has "task $B_JOB:[0-9]+ failed \(exit 3\)" || { show; fail "job b's log lacks its failure"; }
pane_has "job $B_JOB \(b\.jsonl\) finished: $B_DONE done, $B_FAILED failed, $B_CANCELLED cancelled" ||
    { show; fail "job b's log lacks its end"; }
pane_has "job $A_JOB" && { show; fail "job b's log shows job a's lines"; }

# u: all again (after the last job), and U from a job too.
TM send-keys -t jobs u
wait_until 10 pane_has '\[all 2 jobs\]' || { show; fail "u after the last job did not show all"; }
[ "$(done_sum)" -eq $((A_DONE + B_DONE)) ] || { show; fail "node DONE column is not both jobs' again"; }
TM send-keys -t jobs u U
wait_until 10 pane_has '\[all 2 jobs\]' || { show; fail "U did not show all jobs"; }
# The J page (jackdaw jobs) still works beside the pane.
TM send-keys -t jobs J
wait_until 20 pane_has 'jobs of the cluster' || { show; fail "J showed no page"; }
TM send-keys -t jobs x
wait_until 10 eval '! pane_has "jobs of the cluster"' || { show; fail "a key did not close J's page"; }

TM send-keys -t jobs q
wait_until 10 eval '! pid_alive "$CONSOLE_PID"' || { show; fail "q did not end the console"; }
CONSOLE_PID=""
grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$T/console.err" &&
    { cat "$T/console.err" >&2; fail "the console reported a sanitizer error"; }
# Its session was the server's last: the server leaves by itself (bounded), else by PID.
wait_until 10 eval '! pid_alive "$SERVER_PID"' || stop_tmux
stop_tmux
stop_cluster
no_daemons_left "after the console"
