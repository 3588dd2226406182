#!/bin/bash
# t_05_check_records: the records checker itself, on hand-made records (no cluster):
# it accepts a correct run and rejects each kind of wrong one, so that a PASS of the
# other tests means something.
. "$(dirname "$0")/lib.sh"
# `records | expect_check ...`: the last command of a pipeline must run in this shell,
# so that its `fail` ends the test.
shopt -s lastpipe

wl="$T/wl.jsonl"
cat >"$wl" <<'EOF_WL'
{"id":"a"}
{"id":"b","parents":["a"]}
{"id":"c","parents":["a"]}
{"id":"d","parents":["b","c"]}
{"id":"e"}
EOF_WL

# rec ID INDEX STATUS START END [EXIT]
rec() {
    printf '{"id":"%s","index":%d,"status":"%s","node":0,"ready_ns":%d,"start_ns":%d,"end_ns":%d,"exit":%d}\n' \
        "$1" "$2" "$3" "$4" "$4" "$5" "${6:-0}"
}
good() {
    rec a 0 "done" 100 200
    rec b 1 "done" 200 300
    rec c 2 "done" 250 260
    rec d 3 "done" 300 400
    rec e 4 "done" 0 50
}

# expect_check WANT_RC NAME MESSAGE_REGEX [options] : records on stdin.
expect_check() {
    local want=$1 name=$2 msg=$3 rc=0
    shift 3
    cat >"$T/$name.records"
    "$PY" "$HERE/check_records.py" "$wl" "$T/$name.records" "$@" >"$T/$name.out" 2>&1 || rc=$?
    [ $rc -eq "$want" ] || { cat "$T/$name.out"; fail "$name: checker exited $rc, expected $want"; }
    grep -qE "$msg" "$T/$name.out" || fail "$name: checker said '$(cat "$T/$name.out")', expected /$msg/"
    note "$name: $(head -1 "$T/$name.out")"
}

good | expect_check 0 ok 'OK: 5 tasks, 5 done'
good | tac | expect_check 0 any-order 'OK'
good | head -4 | expect_check 1 missing "no record: e"
{ good; rec c 2 "done" 250 260; } | expect_check 1 duplicate "'c' reported 2 times"
good | sed 's/"id":"d","index":3/"id":"d","index":2/' | expect_check 1 bad-index "index 2"
good | sed 's/"id":"e"/"id":"zz"/' | expect_check 1 unknown "unknown task"
{ rec a 0 "done" 100 200; rec b 1 "done" 150 300; rec c 2 "done" 250 260; rec d 3 "done" 300 400; rec e 4 "done" 0 50; } |
    expect_check 1 early-start "'b' started at 150"
good | sed 's/"id":"e","index":4,"status":"done"/"id":"e","index":4,"status":"cancelled"/' |
    expect_check 1 not-done "'e' is cancelled, expected done"
# b fails: d must be cancelled; c and e done.
failing() {
    rec a 0 "done" 100 200
    rec b 1 "failed" 200 300 3
    rec c 2 "done" 250 260
    rec d 3 "cancelled" 0 0
    rec e 4 "done" 0 50
}
failing | expect_check 0 expect-failed 'OK: 5 tasks, 3 done, 1 failed, 1 cancelled' --expect-failed b
failing | expect_check 0 closure 'OK' --expect-cancelled-closure
failing | expect_check 1 unexpected-failure "'b' is failed \(exit 3\), expected done"
failing | expect_check 1 wrong-failed "'c' is done, expected failed" --expect-failed c
failing | sed 's/"id":"d","index":3,"status":"cancelled","node":0,"ready_ns":0,"start_ns":0,"end_ns":0/"id":"d","index":3,"status":"done","node":0,"ready_ns":400,"start_ns":400,"end_ns":500/' |
    expect_check 1 ran-after-failure "'d' ran \(done\) although its parent 'b' is failed" --expect-failed b
failing | sed 's/"id":"e","index":4,"status":"done"/"id":"e","index":4,"status":"cancelled"/' |
    expect_check 1 too-many-cancelled "'e' is cancelled, expected done" --expect-failed b
failing | sed 's/"failed","node":0,"ready_ns":200,"start_ns":200,"end_ns":300,"exit":3/"failed","node":0,"ready_ns":200,"start_ns":200,"end_ns":300,"exit":0/' |
    expect_check 1 failed-exit-0 "'b' failed with exit 0" --expect-failed b
failing | sed 's/"id":"d","index":3,"status":"cancelled","node":0,"ready_ns":0,"start_ns":0/"id":"d","index":3,"status":"cancelled","node":0,"ready_ns":0,"start_ns":350/' |
    expect_check 1 cancelled-started "'d' is cancelled but has a start time" --expect-failed b
good | expect_check 2 bad-option 'usage' --frobnicate
