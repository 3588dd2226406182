#!/bin/bash
# t_96_console: the ncurses console, driven in tmux (send-keys, capture-pane) on a private
# tmux socket in $T, and headless.
#
# Every wait is for a state that stays once reached (a count held by a gate task, a
# FINISHED or PAUSED header, a prompt), never for a note that the next key or frame may
# replace, and never for something to happen within some time: on a loaded machine the
# console may draw any frame late, or skip it.
#
#  a. Attached to a running 4-node cluster while a sleep workload runs: the pane shows 4
#     node rows whose done counts grow, never shrink, and hold at 200 of 400 while a gate
#     task keeps the other half waiting (until the test opens the gate), then reach 400.
#  d. The pane resized (smaller, then larger) is redrawn cleanly: one header, one table
#     heading, 4 node rows, the key line on the last row, the columns of the new width.
#  e. q gives the terminal back as it was: the shell's marker line and prompt reappear.
#  b. A cluster launched from the form by keystrokes (3 nodes, the C1 mix, 120 tasks)
#     runs to the end; K tears it down from the console (its daemons are gone, its
#     cluster file removed) and q leaves with status 0.
#  c. A recorded trace replayed at x64 to its end shows the totals of `trace verify`.
#  f. --headless: replay and live (attached to the cluster once its job has finished)
#     print their last frame with the same totals; a headless launch starts, watches and
#     tears down its own cluster.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null || fail "tmux is needed (Debian package tmux)"
# ncurses takes LINES/COLUMNS over the real size and then ignores resizes.
unset LINES COLUMNS
export TERM=xterm-256color

TM() { tmux -S "$T/tmux.sock" "$@"; }
# The tmux server names $T in its command line: stop it before lib.sh's clean-up looks for
# processes left over (it would report it), keeping the test's exit status.
trap 'rc=$?; tmux -S "$T/tmux.sock" kill-server >/dev/null 2>&1; (exit $rc); cleanup' EXIT

jd() { timeout -k 5 60 "$JACKDAW" "$@"; }
pane() { TM capture-pane -t "$1" -p 2>/dev/null; }
pane_has() { pane "$1" | grep -qE -- "$2"; }
# node_rows SESSION : the node rows of the table ("   3 [||  1/2]    2  1.00 ..."), one per
# line, as "NODE DONE": the fields after the bar are SLOT SPEED WAITQ LRDYQ SRDYQ CMPLQ DONE.
node_rows() {
    pane "$1" | grep -E '^ *[0-9]+ \[' |
        awk -F']' '{ split($1, a, " "); split($2, b, " "); print a[1], b[7] }'
}
done_sum() { node_rows "$1" | awk '{ s += $2 } END { print s + 0 }'; }
show() {
    echo "--- pane $1:" >&2
    pane "$1" >&2
}

# ---- a, d, e: live view of a running cluster --------------------------------------------
start_cluster 4 2
# 200 free sleep tasks, and a gate command holding 199 more until the test creates
# $GATE (it gives up after 60 s): the run holds at 200 done for as long as the test looks.
TOTAL=400
HALF=200
GATE="$T/gate-open"
"$PY" - "$T/bot.jsonl" "$GATE" "$HALF" <<'EOF_PY' || fail "cannot write the gated workload"
import json, sys
path, gate, half = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, "w") as f:
    for i in range(half):
        f.write(json.dumps({"id": "free%d" % i, "kind": "sleep", "duration_s": 0.02}) + "\n")
    wait = "i=0; while [ ! -e %s ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; [ -e %s ]"
    f.write(json.dumps({"id": "gate", "kind": "command", "cmd": wait % (gate, gate)}) + "\n")
    for i in range(half - 1):
        f.write(json.dumps({"id": "held%d" % i, "kind": "sleep", "duration_s": 0.01,
                            "parents": ["gate"]}) + "\n")
EOF_PY
TM new-session -d -s live -x 100 -y 30 "env PS1='sh\$ ' bash --norc --noprofile" ||
    fail "tmux new-session"
TM send-keys -t live "clear; echo MARKER-before-console" Enter
wait_until 10 pane_has live '^MARKER-before-console' || { show live; fail "the shell did not start"; }
# Each console's stderr goes to a file in $T, where lib.sh looks for sanitizer reports.
TM send-keys -t live "$JACKDAW console --cluster $CLUSTER_FILE --refresh-ms 100 2>>$T/live.err" Enter
wait_until 10 pane_has live 'collector up' || { show live; fail "the console did not attach"; }
wait_until 10 eval '[ "$(node_rows live | wc -l)" -eq 4 ]' || { show live; fail "not 4 node rows"; }
pane live | grep -qE '^NODE +UTIL +SLOT +SPEED +WAITQ +LRDYQ +SRDYQ +CMPLQ +DONE' ||
    { show live; fail "no table heading"; }
[ "$(done_sum live)" -eq 0 ] || { show live; fail "tasks done before any was submitted"; }
bg timeout -k 5 60 "$JACKDAW" submit "$T/bot.jsonl" --cluster "$CLUSTER_FILE" --wait --quiet \
    --timeout 50 >"$T/submit.out" 2>&1
sub=${BG_PIDS[-1]}
# follow_done UNTIL : samples the pane's done counts (bounded: 600 samples, 0.1 s apart)
# until they sum to UNTIL, adding each new sum to `seen`; fails if a sum goes down.
seen=(0)
follow_done() {
    local s i
    for ((i = 0; i < 600; i++)); do
        s=$(done_sum live)
        [ "$s" -ge "${seen[-1]}" ] || { show live; fail "done counts went down: ${seen[*]} $s"; }
        [ "$s" -ne "${seen[-1]}" ] && seen+=("$s")
        [ "$s" -eq "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
follow_done $HALF || { show live; fail "done counts never reached $HALF (seen: ${seen[*]})"; }
# The gate holds: the run is in progress, and the frame says so.
wait_until 10 pane_has live "Tasks .* $HALF/$TOTAL " || { show live; fail "header not $HALF/$TOTAL"; }
pane_has live 'FINISHED' && { show live; fail "FINISHED with the gate closed"; }
touch "$GATE"
follow_done $TOTAL || { show live; fail "done counts never reached $TOTAL (seen: ${seen[*]})"; }
note "done counts seen: ${seen[*]}"
[ "$(node_rows live | wc -l)" -eq 4 ] || { show live; fail "not 4 node rows at the end"; }
wait_until 10 pane_has live "Tasks .* $TOTAL/$TOTAL +100.0%" || { show live; fail "header not $TOTAL/$TOTAL"; }
wait "$sub" || { cat "$T/submit.out" >&2; fail "the submitted job failed"; }
wait_until 10 pane_has live 'FINISHED' || { show live; fail "the header does not say FINISHED"; }
# A headless console attached now shows the finished run too (f): its last frame comes
# after a fixed number of cycles, so it starts once there is nothing left to wait for.
bg timeout -k 5 60 "$JACKDAW" console --cluster "$CLUSTER_FILE" --headless 60 --refresh-ms 100 \
    >"$T/headless-live.out" 2>"$T/headless-live.err"
headless_live=${BG_PIDS[-1]}

# d. Resize: smaller, then larger; each frame whole and only once on the screen.
clean_frame() { # SESSION ROWS COLS
    local p rows
    p=$(pane "$1")
    rows=$(printf '%s\n' "$p" | wc -l)
    [ "$rows" -eq "$2" ] || return 1
    [ "$(printf '%s\n' "$p" | grep -c '^jackdaw live')" -eq 1 ] || return 1
    [ "$(printf '%s\n' "$p" | grep -c '^NODE ')" -eq 1 ] || return 1
    [ "$(printf '%s\n' "$p" | grep -cE '^ *[0-9]+ \[')" -eq 4 ] || return 1
    printf '%s\n' "$p" | tail -1 | grep -q '^F1Help' || return 1
    [ "$(printf '%s\n' "$p" | awk -v c="$3" 'length($0) > c' | wc -l)" -eq 0 ]
}
TM resize-window -t live -x 80 -y 24
wait_until 10 clean_frame live 24 80 || { show live; fail "no clean frame at 80x24"; }
pane live | grep -q 'HIT%' && { show live; fail "80 columns still show the 100-column table"; }
TM resize-window -t live -x 120 -y 40
wait_until 10 clean_frame live 40 120 || { show live; fail "no clean frame at 120x40"; }
pane live | grep -q '^NODE .*B-IN .*B-OUT .*HIT%' || { show live; fail "120 columns lack columns"; }
note "resized to 80x24 and 120x40: clean frames"
# J lists the cluster's jobs (jackdaw jobs): the finished job, done, with its counts.
TM send-keys -t live J
wait_until 20 pane_has live 'jobs of the cluster' || { show live; fail "J showed no page"; }
wait_until 10 pane_has live " done +$TOTAL +0 +0 +$TOTAL " || { show live; fail "J's page does not list the job done"; }
TM send-keys -t live x
wait_until 10 eval '! pane_has live "jobs of the cluster"' || { show live; fail "a key did not close J's page"; }
# D shows the selected node's daemon log; O a task's output by id.
TM send-keys -t live D
wait_until 10 pane_has live 'node-[0-9]+\.log' || { show live; fail "D showed no daemon log"; }
pane live | grep -q 'listening on' || { show live; fail "the daemon log page lacks the daemon's first lines"; }
TM send-keys -t live x O
wait_until 10 pane_has live 'Output of task id' || { show live; fail "O did not ask for a task"; }
TM send-keys -t live gate Enter
wait_until 20 pane_has live 'output of task gate' || { show live; fail "O gate showed no page"; }
TM send-keys -t live x

# e. q: the console goes, the shell's screen comes back.
TM send-keys -t live q
wait_until 10 eval '! pane_has live "jackdaw live"' || { show live; fail "q did not leave the console"; }
pane_has live '^MARKER-before-console' || { show live; fail "the terminal is not as it was (marker gone)"; }
wait_until 10 pane_has live '^sh\$ ' || { show live; fail "no shell prompt after the console"; }
# The process goes a moment after the screen comes back (a sanitizer's exit checks take
# a while): bounded, not at once.
console_gone() { [ "$(TM display-message -p -t live '#{pane_current_command}')" = bash ]; }
wait_until 10 console_gone || fail "the console still runs"
grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$T/live.err" &&
    { cat "$T/live.err" >&2; fail "the console reported a sanitizer error"; }
wait "$headless_live"
expect_code 0 $? "headless console on the live cluster"
hl_rows=$(grep -cE '^ *[0-9]+ \[' "$T/headless-live.out")
[ "$hl_rows" -eq 4 ] || { cat "$T/headless-live.out" >&2; fail "headless live frame has $hl_rows node rows"; }
grep -qE "Tasks .* $TOTAL/$TOTAL " "$T/headless-live.out" ||
    { cat "$T/headless-live.out" >&2; fail "headless live frame lacks $TOTAL/$TOTAL"; }
stop_cluster

# ---- b: launch from the form -------------------------------------------------------------
TM new-session -d -s form -x 100 -y 30 \
    "$JACKDAW console --launch --refresh-ms 100 2>>$T/form.err; echo CONSOLE-EXIT=\$?; sleep 60" ||
    fail "tmux new-session (form)"
wait_until 10 pane_has form 'launch a cluster' || { show form; fail "no launch form"; }
# Nodes 3, slots 2, the C1 mix, 120 tasks of 20 ms.
TM send-keys -t form C-u 3 Down C-u 2 Down Right
wait_until 10 pane_has form 'Heterogeneity +none +\[C1\]' || { show form; fail "C1 not chosen"; }
wait_until 10 pane_has form 'C1 over 3 nodes' || { show form; fail "no mix line"; }
for k in Down Down Down Down Down Down Down; do TM send-keys -t form "$k"; done
TM send-keys -t form C-u 1 2 0 Down Down C-u 0 . 0 2
wait_until 10 pane_has form '^ +tasks +120 *$' || { show form; fail "tasks not typed"; }
wait_until 10 pane_has form '^ +duration s +0.02 *$' || { show form; fail "duration not typed"; }
TM send-keys -t form F5
wait_until 30 pane_has form 'jackdaw live' || { show form; fail "the form did not launch"; }
[ -f "$JACKDAW_CLUSTER" ] || fail "no cluster file at $JACKDAW_CLUSTER after the launch"
launched_pids=$(cluster_pids "$JACKDAW_CLUSTER" | tr '\n' ' ')
track_cluster "$JACKDAW_CLUSTER"
note "launched from the form: pids $launched_pids"
wait_until 10 eval '[ "$(node_rows form | wc -l)" -eq 3 ]' || { show form; fail "not 3 node rows"; }
pane form | grep -qE '^ +[0-9]+ \[.*\] +2 +0\.04 ' || { show form; fail "no 1-core node (speed 0.04) of C1"; }
wait_until 60 pane_has form 'Tasks .* 120/120 +100.0%' || { show form; fail "the run did not finish"; }
wait_until 10 pane_has form 'FINISHED' || { show form; fail "not FINISHED"; }
[ "$(done_sum form)" -eq 120 ] || { show form; fail "node done counts sum to $(done_sum form)"; }
TM send-keys -t form K
wait_until 10 pane_has form 'Tear the cluster down' || { show form; fail "K did not ask"; }
TM send-keys -t form y
wait_until 15 pane_has form 'cluster of 3 nodes stopped' || { show form; fail "no teardown message"; }
for pid in $launched_pids; do
    pid_alive "$pid" && fail "daemon $pid still runs after the teardown"
done
[ -f "$JACKDAW_CLUSTER" ] && fail "the cluster file is still there after the teardown"
TM send-keys -t form q
wait_until 10 pane_has form '^CONSOLE-EXIT=0' || { show form; fail "q after the teardown did not exit 0"; }
note "form: launched, ran 120 tasks, torn down"

# ---- b2: the form at 80 columns ------------------------------------------------------------
# The Stealing row scrolls so that the chosen policy shows; fields the policy does not
# take (victims per try, back-off bound under ctws) go.
TM new-session -d -s narrow -x 80 -y 30 \
    "$JACKDAW console --launch --refresh-ms 100 2>>$T/narrow.err; echo CONSOLE-EXIT=\$?; sleep 60" ||
    fail "tmux new-session (narrow)"
wait_until 10 pane_has narrow 'launch a cluster' || { show narrow; fail "no launch form at 80 columns"; }
wait_until 10 pane_has narrow 'victims per try' || { show narrow; fail "adaptive stealing hides its victims per try"; }
TM send-keys -t narrow Down Down Down Left
wait_until 10 pane_has narrow 'Stealing .*\[ctws\]' || { show narrow; fail "ctws chosen but not shown at 80 columns"; }
pane narrow | grep -q 'victims per try' && { show narrow; fail "victims per try shown under ctws"; }
pane narrow | grep -q 'back-off bound' && { show narrow; fail "back-off bound shown under ctws"; }
TM send-keys -t narrow Escape
TM send-keys -t narrow q
wait_until 10 pane_has narrow '^CONSOLE-EXIT=' || { TM send-keys -t narrow q; }
note "form at 80 columns: the chosen policy shows, its unused fields go"

# ---- c: replay ---------------------------------------------------------------------------
# (W, the report key, is checked at the end of the replay.)
jd gen fanout --tasks 600 --degree 4 --kind sleep --duration-s 0.01-0.03 -o "$T/fan.jsonl" \
    >/dev/null || fail "gen fanout"
jd_run rec "$T/fan.jsonl" --nodes 4 --slots 2 --trace "$T/x.avro"
expect_code 0 "$RUN_RC" "jackdaw run with a trace"
jd trace verify "$T/x.avro" >"$T/verify.out" 2>&1 || { cat "$T/verify.out" >&2; fail "trace verify"; }
read -r vtasks vdone vfailed < <(sed -nE 's/.*tasks ([0-9]+) \(([0-9]+) done, ([0-9]+) failed.*/\1 \2 \3/p' "$T/verify.out")
ends=$(jd trace stats "$T/x.avro" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["by_kind"]["TASK_END"])')
note "trace: $vtasks tasks, $vdone done, $vfailed failed, $ends TASK_END"
[ "$ends" -eq "$vtasks" ] || fail "trace stats and verify disagree"
TM new-session -d -s rep -x 100 -y 30 \
    "$JACKDAW replay $T/x.avro --refresh-ms 100 2>>$T/replay.err; echo REPLAY-EXIT=\$?; sleep 60" ||
    fail "tmux (replay)"
wait_until 10 pane_has rep '^jackdaw replay' || { show rep; fail "no replay"; }
for k in + + + + + +; do TM send-keys -t rep "$k"; done
wait_until 10 pane_has rep 'x64 ' || { show rep; fail "not at x64"; }
# The end is a state that stays: paused, the clock at the trace's last event ("PAUSED x64
# 1.7s / 1.7s").  The note "end of the trace" goes with the next key, which may be a "+"
# that arrives late on a loaded machine.
replay_at_end() { pane rep | head -1 | grep -qE 'PAUSED x64 +([0-9][^ ]*) / \1 *$'; }
wait_until 60 replay_at_end || { show rep; fail "the replay did not reach the end"; }
pane rep | grep -qE "Tasks .* $vdone/$vtasks +100.0% +run 0 +fail $vfailed" ||
    { show rep; fail "replay totals differ from trace verify ($vdone/$vtasks, $vfailed failed)"; }
[ "$(done_sum rep)" -eq "$vdone" ] || { show rep; fail "node rows sum to $(done_sum rep), not $vdone"; }
# W writes the run's HTML report beside the trace and says where.
TM send-keys -t rep W
wait_until 30 pane_has rep "report written to $T/x.html" || { show rep; fail "W did not say where the report went"; }
grep -q '<html' "$T/x.html" || fail "W's report is no HTML page"
# F2 chooses the table's columns: WAITQ hidden goes from the heading, and comes back.
pane rep | grep -q 'WAITQ' || { show rep; fail "no WAITQ column to hide"; }
TM send-keys -t rep F2
wait_until 10 pane_has rep 'columns of the node table' || { show rep; fail "F2 did not open the column chooser"; }
TM send-keys -t rep Down Down Space
wait_until 10 pane_has rep '\[ \] WAITQ' || { show rep; fail "Space did not hide WAITQ"; }
TM send-keys -t rep Escape
wait_until 10 eval '! pane_has rep "columns of the node table"' || { show rep; fail "Esc did not close the chooser"; }
pane rep | grep -q 'WAITQ' && { show rep; fail "the hidden WAITQ column is still shown"; }
TM send-keys -t rep F2 Space Escape
wait_until 10 pane_has rep 'WAITQ' || { show rep; fail "WAITQ did not come back"; }
# w switches the steals pane to the whole run's matrix (and back).
TM send-keys -t rep w
wait_until 10 pane_has rep 'Whole run \(w: last 10 s\)' || { show rep; fail "w did not show the whole run's steals"; }
TM send-keys -t rep w
wait_until 10 pane_has rep 'Last 10 s \(w: whole run\)' || { show rep; fail "w did not switch back to the last 10 s"; }
# T looks a task up by its id: its history, on a page that any key closes.
first_id=$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["id"])' "$T/fan.jsonl")
TM send-keys -t rep T
wait_until 10 pane_has rep 'Task id' || { show rep; fail "T did not ask for a task id"; }
TM send-keys -t rep "$first_id" Enter
wait_until 20 pane_has rep "^ task $first_id" || { show rep; fail "T $first_id showed no page"; }
wait_until 10 pane_has rep ' started$' || { show rep; fail "the task's page has no history"; }
pane rep | grep -qE 'ended done \(exit 0\)|ended done' || { show rep; fail "the task's page does not say how it ended"; }
# / filters the page's lines as it is typed; Enter keeps the filter.
TM send-keys -t rep /
wait_until 10 pane_has rep 'Lines with' || { show rep; fail "/ on a page did not ask for a filter"; }
TM send-keys -t rep started Enter
wait_until 10 pane_has rep "\(lines with 'started'\)" || { show rep; fail "the page's filter is not shown"; }
pane rep | grep -q ' submitted$' && { show rep; fail "the filter kept a line without 'started'"; }
pane rep | grep -q ' started$' || { show rep; fail "the filter dropped the line it names"; }
TM send-keys -t rep x
wait_until 10 eval '! pane_has rep "^ task $first_id"' || { show rep; fail "a key did not close the page"; }
# t lists the selected node's running and queued tasks (none at the end of the trace).
TM send-keys -t rep t
wait_until 20 pane_has rep 'running and queued tasks' || { show rep; fail "t showed no page"; }
pane rep | grep -q 'JOB:INDEX' || { show rep; fail "t's page has no task table"; }
TM send-keys -t rep x
TM send-keys -t rep q
wait_until 10 pane_has rep '^REPLAY-EXIT=0' || { show rep; fail "replay did not exit 0 on q"; }
note "replay at x64: $vdone/$vtasks, as trace verify counts"

# ---- f: headless replay and launch -------------------------------------------------------
jd replay "$T/x.avro" --headless 40 --refresh-ms 20 --speed 64 >"$T/headless-rep.out" 2>&1
expect_code 0 $? "headless replay"
grep -qE "Tasks .* $vdone/$vtasks " "$T/headless-rep.out" ||
    { cat "$T/headless-rep.out" >&2; fail "headless replay frame lacks $vdone/$vtasks"; }
jd console --launch --headless 40 --refresh-ms 50 >"$T/headless-launch.out" 2>&1
expect_code 0 $? "headless launch"
grep -qE '^jackdaw live' "$T/headless-launch.out" ||
    { cat "$T/headless-launch.out" >&2; fail "the headless launch never reached the live view"; }
[ -f "$JACKDAW_CLUSTER" ] && fail "the headless launch left its cluster file"
# Quitting says where the trace and the generated workload went, and both are there.
qtrace=$(sed -n "s/^jackdaw console: the trace is \(.*\) ('jackdaw replay'.*/\1/p" "$T/headless-launch.out")
[ -n "$qtrace" ] && [ -s "$qtrace" ] || { cat "$T/headless-launch.out" >&2; fail "quitting did not name the trace (or it is not there)"; }
qwl=$(sed -n 's/^jackdaw console: the generated workload is //p' "$T/headless-launch.out")
[ -n "$qwl" ] && [ -s "$qwl" ] || { cat "$T/headless-launch.out" >&2; fail "quitting did not name the generated workload"; }
case "$qwl" in "$(dirname "$JACKDAW_CLUSTER")"/*) ;; *) fail "the generated workload $qwl is not beside the cluster file";; esac
jd console --cluster "$T/none.json" --headless 2 >"$T/none.out" 2>&1
expect_code 4 $? "console on a missing cluster file"
grep -q "no cluster file at '$T/none.json'" "$T/none.out" || { cat "$T/none.out" >&2; fail "message"; }
jd replay "$T/bot.jsonl" --headless 2 >"$T/bad.out" 2>&1
expect_code 3 $? "replay of a file that is no trace"
jd replay "$T/x.avro" </dev/null >"$T/notty.out" 2>&1
expect_code 2 $? "replay without a terminal"
grep -q "needs a terminal" "$T/notty.out" || { cat "$T/notty.out" >&2; fail "no word of the terminal"; }
# Without a terminal, a missing trace is still the error named (not the terminal).
jd replay "$T/nosuch.avro" </dev/null >"$T/nosuch.out" 2>&1
expect_code 3 $? "replay of a missing trace without a terminal"
grep -q "cannot open trace '$T/nosuch.avro'" "$T/nosuch.out" || { cat "$T/nosuch.out" >&2; fail "the missing trace is not named"; }

# The panes' shells name $T too; they go when the server does, a moment later.
TM kill-server
wait_until 10 eval '[ -z "$(pids_in_tmpdir)" ]'
no_daemons_left "after the console tests"
note "console: live, resize, quit, launch form, replay and headless all pass"
