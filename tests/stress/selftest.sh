#!/bin/bash
# selftest.sh — the stress harness catches what it claims to catch.  stress.py is
# pointed at a wrapper around the real jackdaw that breaks one thing per mode:
#
#   pass       the real jackdaw, unchanged: the harness passes and leaves nothing behind;
#   hang       ignores its own --timeout and never ends: reported as a hang, killed;
#   exit       the real run, then exit 5: reported as an unexpected exit code;
#   dup        the real run, then a task's record written twice: reported by check_records;
#   leak       the real run, then a daemon left behind (setsid, naming the run's
#              directory): reported as a leak and killed by PID;
#   sanitizer  an AddressSanitizer report in a daemon log;
#   warn       a WARN line in a daemon log.
#
# Each failing mode must print the seed, the reproduce line and the kept directory, and
# exit 1; no process may outlive the harness.  Stealing is off (--policy none) so the
# real runs cannot livelock on a runtime without the progress fix, and tracing is off:
# what is tested here is the harness, not the runtime.
#
#   JACKDAW=/abs/path/build/jackdaw tests/stress/selftest.sh
. "$(dirname "$0")/../integration/lib.sh"

STRESS="$(cd "$(dirname "$0")" && pwd)/stress.py"
fake="$T/fake-jackdaw"
cat >"$fake" <<'EOF_FAKE'
#!/bin/bash
# A jackdaw that misbehaves as FAKE_MODE says; subcommands other than run pass through.
[ "$1" = run ] || exec "$REAL_JACKDAW" "$@"
records="" keep=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[$i]}" in
    --records) records="${args[$((i + 1))]}" ;;
    --keep) keep="${args[$((i + 1))]}" ;;
    esac
done
if [ "$FAKE_MODE" = hang ]; then
    trap '' TERM
    exec sleep 300
fi
"$REAL_JACKDAW" "$@"
rc=$?
case "$FAKE_MODE" in
exit) exit 5 ;;
dup) head -1 "$records" >>"$records" ;;
leak) setsid bash -c 'sleep 300; :' "$keep" </dev/null >/dev/null 2>&1 & ;;
sanitizer) echo "==1==ERROR: Address""Sanitizer: heap-use-after-free (injected)" >>"$keep/work/node-0.log" ;;
warn) echo "2026-01-01 00:00:00 WARN node.c:1 injected by selftest" >>"$keep/work/node-0.log" ;;
esac
exit $rc
EOF_FAKE
chmod +x "$fake"
export REAL_JACKDAW="$JACKDAW"

# harness MODE : runs one case (seed 7) through the fake; output in $T/MODE.out.  The
# hang mode gets a short time limit; the others a generous one (a loaded sanitizer build).
harness() {
    local mode=$1 limit=30
    [ "$mode" = hang ] && limit=1
    HARNESS_RC=0
    FAKE_MODE=$mode timeout -k 5 120 "$PY" "$STRESS" --jackdaw "$fake" --seed 7 --policy none \
        --run-timeout $limit --trace-fraction 0 --progress 0 --keep-dir "$T/kept-$mode" --tmp "$T" \
        >"$T/$mode.out" 2>&1 || HARNESS_RC=$?
}

harness pass
expect_code 0 "$HARNESS_RC" "stress.py on a healthy run ($(tail -3 "$T/pass.out"))"
grep -q '1 runs in .* 1 passed, 0 failed' "$T/pass.out" || fail "no '1 passed' summary: $(cat "$T/pass.out")"
[ -d "$T/kept-pass" ] && fail "a passing run left a kept directory"
no_daemons_left "after a passing run"
note "pass: exit 0, nothing kept, nothing left running"

for mode in hang exit dup leak sanitizer warn; do
    case $mode in
    hang) kind=hang ;;
    exit) kind="exit" ;;
    dup) kind=records ;;
    leak) kind=leak ;;
    sanitizer) kind=sanitizer ;;
    warn) kind=log ;;
    esac
    harness $mode
    out="$T/$mode.out"
    expect_code 1 "$HARNESS_RC" "stress.py with FAKE_MODE=$mode ($(tail -5 "$out"))"
    grep -q "^stress: FAIL seed 7 ($kind)" "$out" || fail "$mode: no 'FAIL seed 7 ($kind)' line: $(cat "$out")"
    grep -q "^  reproduce: .*stress.py .*--seed 7 " "$out" || fail "$mode: no reproduce line"
    grep -q "^  by hand: .* run $T/kept-$mode/seed-7/workload.jsonl " "$out" || fail "$mode: no by-hand line"
    [ -s "$T/kept-$mode/seed-7/workload.jsonl" ] || fail "$mode: the workload was not kept"
    [ -s "$T/kept-$mode/seed-7/problems.txt" ] || fail "$mode: problems.txt was not kept"
    no_daemons_left "after FAKE_MODE=$mode"
    case $mode in
    dup) grep -q 'reported 2 times' "$out" || fail "dup: check_records did not name the duplicate" ;;
    leak) grep -q 'processes left running after the run (killed): [0-9]*: bash -c sleep 300' "$out" ||
        fail "leak: the leaked process was not named: $(cat "$out")" ;;
    esac
    # The injected report and warning must not fail this test itself (lib.sh scans $T).
    rm -rf "$T/kept-$mode"
    [ $mode = sanitizer ] && rm -f "$out"
    note "$mode: reported as $kind, kept, nothing left running"
done
