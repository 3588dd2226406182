#!/bin/bash
# t_61_cli_habits: what a new user's slips meet (issue 18, command line).
#   - a mistyped command gets one line with the nearest command ("sumbit": submit;
#     "stauts": status), exit 2, not the whole help; a word near no command, no guess;
#   - no cluster file is "no cluster" for every command that needs one: exit 4 naming
#     the file, as daemons that do not answer are; a cluster file that is there but not
#     one is bad input (3);
#   - `run` without --nodes runs on the machine's cores (as --slots defaults to them),
#     every task once;
#   - `report --format csv` without -o says it writes a directory, and --help says so.
. "$(dirname "$0")/lib.sh"

for t in "sumbit:submit" "stauts:status" "reprot:report" "lunch:launch"; do
    rc=0
    "$JACKDAW" "${t%%:*}" >"$T/typo.out" 2>&1 || rc=$?
    expect_code 2 $rc "jackdaw ${t%%:*}"
    grep -qx "jackdaw: unknown command '${t%%:*}'; did you mean '${t#*:}'? ('jackdaw --help' lists the commands)" \
        "$T/typo.out" || { cat "$T/typo.out" >&2; fail "${t%%:*} does not suggest ${t#*:}"; }
    [ "$(wc -l <"$T/typo.out")" -eq 1 ] || fail "${t%%:*}: more than one line"
done
rc=0
"$JACKDAW" xyzzy >"$T/typo.out" 2>&1 || rc=$?
expect_code 2 $rc "jackdaw xyzzy"
grep -qx "jackdaw: unknown command 'xyzzy' ('jackdaw --help' lists the commands)" "$T/typo.out" ||
    { cat "$T/typo.out" >&2; fail "xyzzy: a guess, or not one line"; }

echo '{"id":"a","kind":"noop"}' >"$T/one.jsonl"
for cmd in status "submit $T/one.jsonl" stop attach "logs a" "cancel a"; do
    rc=0
    # shellcheck disable=SC2086 # the command and its argument are two words
    timeout -k 5 30 "$JACKDAW" $cmd --cluster "$T/none.json" >"$T/none.out" 2>&1 || rc=$?
    expect_code 4 $rc "$cmd without a cluster"
    grep -q "no cluster file at '$T/none.json'" "$T/none.out" || { cat "$T/none.out" >&2; fail "$cmd: the file is not named"; }
done
echo 'not json' >"$T/bad.json"
rc=0
timeout -k 5 30 "$JACKDAW" status --cluster "$T/bad.json" >"$T/bad.out" 2>&1 || rc=$?
expect_code 3 $rc "status with a cluster file that is not one"
grep -q "$T/bad.json" "$T/bad.out" || { cat "$T/bad.out" >&2; fail "the bad cluster file is not named"; }

# No --nodes: the machine's cores.
cores=$(nproc)
"$JACKDAW" gen bot --tasks 50 --kind sleep --duration-s 0.001 -o "$T/bot.jsonl" || fail "gen failed"
jd_run dflt "$T/bot.jsonl" --json --records "$T/dflt.records"
expect_code 0 "$RUN_RC" "run without --nodes: $(cat "$T/dflt.err")"
check_records "$T/bot.jsonl" "$T/dflt.records"
"$PY" - "$T/dflt.out" "$cores" <<'EOF_PY' || fail "run without --nodes did not use the machine's cores: $(cat "$T/dflt.out")"
import json, sys
s = json.loads(open(sys.argv[1]).read())
assert len(s["nodes"]) == int(sys.argv[2]), (len(s["nodes"]), sys.argv[2])
EOF_PY

rc=0
"$JACKDAW" report --format csv "$HERE/../traces/good.avro" >"$T/csv.out" 2>&1 || rc=$?
expect_code 2 $rc "report --format csv without -o"
grep -q "needs -o DIR" "$T/csv.out" || { cat "$T/csv.out" >&2; fail "no word of the directory"; }
"$JACKDAW" report --help 2>&1 | grep -q -- "-o FILE|DIR" || fail "report --help does not say -o FILE|DIR"
no_daemons_left "after the runs"
