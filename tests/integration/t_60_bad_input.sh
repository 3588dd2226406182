#!/bin/bash
# t_60_bad_input: a bad workload is refused before anything starts, with exit 3 and a
# message naming file:line (malformed JSON, duplicate id, unknown parent, cycle,
# negative duration, unknown key), by both run and submit; usage errors exit 2; and no
# daemon, cluster file or run directory is left behind.
. "$(dirname "$0")/lib.sh"

# names_line FILE 'N|M|...' MESSAGE_FILE : the message names FILE:N: for one of the lines.
names_line() {
    local n
    for n in ${2//|/ }; do
        grep -qF -- "$1:$n:" "$3" && return 0
    done
    return 1
}

# bad_case NAME LINES WORDS_REGEX : the workload is on stdin; LINES is 'N' or 'N|M|...'.
cases=0
bad_case() {
    local name=$1 lines=$2 words=$3 f="$T/$1.jsonl" rc
    cat >"$f"
    cases=$((cases + 1))
    rc=0
    timeout -k 5 30 "$JACKDAW" run "$f" --nodes 2 --slots 1 --quiet >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [ $rc -eq 3 ] || { cat "$T/$name.out" "$T/$name.err"; fail "$name: run exited $rc, expected 3"; }
    names_line "$f" "$lines" "$T/$name.err" ||
        fail "$name: run's message does not name $f:$lines: $(cat "$T/$name.err")"
    grep -qiE "$words" "$T/$name.err" || fail "$name: message does not say /$words/: $(cat "$T/$name.err")"
    [ -s "$T/$name.out" ] && fail "$name: run printed a summary: $(cat "$T/$name.out")"
    note "$name: $(cat "$T/$name.err")"
    # submit checks the workload before it looks for a cluster.
    rc=0
    timeout -k 5 30 "$JACKDAW" submit "$f" --cluster "$T/no-such-cluster.json" --wait --timeout 10 \
        >"$T/$name.sub.out" 2>"$T/$name.sub.err" || rc=$?
    [ $rc -eq 3 ] || { cat "$T/$name.sub.err"; fail "$name: submit exited $rc, expected 3"; }
    names_line "$f" "$lines" "$T/$name.sub.err" ||
        fail "$name: submit's message does not name $f:$lines: $(cat "$T/$name.sub.err")"
}

bad_case malformed 3 'json' <<'EOF_WL'
{"id":"a"}
{"id":"b","parents":["a"]}
{"id":"c","parents":["b"
{"id":"d"}
EOF_WL

bad_case duplicate 4 'duplicate.*b' <<'EOF_WL'
{"id":"a"}
{"id":"b"}
{"id":"c","parents":["a"]}
{"id":"b","parents":["a"]}
{"id":"e"}
EOF_WL

bad_case unknown-parent 3 'unknown parent.*nope' <<'EOF_WL'
{"id":"a"}
{"id":"b","parents":["a"]}
{"id":"c","parents":["b","nope"]}
EOF_WL

bad_case cycle '2|3|4' 'cycle' <<'EOF_WL'
{"id":"x"}
{"id":"a","parents":["c","x"]}
{"id":"b","parents":["a"]}
{"id":"c","parents":["b"]}
{"id":"y","parents":["x"]}
EOF_WL

bad_case negative-duration 2 'negative' <<'EOF_WL'
{"id":"a","kind":"sleep","duration_s":0.01}
{"id":"b","kind":"sleep","duration_s":-1}
{"id":"c"}
EOF_WL

bad_case unknown-key 3 'unknown key.*colour' <<'EOF_WL'
{"id":"a"}
{"id":"b","kind":"noop"}
{"id":"c","kind":"noop","colour":"red"}
EOF_WL
# Values beyond the format's limits are refused at parse time too, naming the limit,
# not at run time (a sleep of 1e300 s used to fail in the daemon and print an efficiency
# of 1e307 %; a 10 MB command was dropped by the daemon and the client said "a node went
# away", exit 4).  The message quotes no over-long string whole.
bad_case absurd-duration 2 'duration_s 1e\+300 is beyond the limit of 1000000 s' <<'EOF_WL'
{"id":"a","kind":"sleep","duration_s":0.01}
{"id":"b","kind":"sleep","duration_s":1e300,"parents":["a"]}
EOF_WL
"$PY" -c 'print("{\"id\":\"a\"}"); print("{\"id\":\"b\",\"kind\":\"command\",\"cmd\":\"echo " + "x" * 10000000 + "\"}")' |
    bad_case huge-cmd 2 'cmd is 10000005 bytes, beyond the limit of 65536'
"$PY" -c 'print("{\"id\":\"" + "i" * 5000 + "\"}")' |
    bad_case long-id 1 'id is 5000 bytes, beyond the limit of 1024'
for name in huge-cmd long-id; do
    size=$(stat -c %s "$T/$name.err")
    [ "$size" -lt 1000 ] || fail "$name: a $size-byte message quotes the long string whole"
done
note "$cases bad workloads refused"

# /dev/zero never ends a line: it is refused once the line passes the 64 MiB limit,
# without reading on (it used to read until memory ran out, then say "empty workload").
rc=0
timeout -k 5 60 "$JACKDAW" run /dev/zero --nodes 2 --slots 1 --quiet >"$T/zero.out" 2>"$T/zero.err" || rc=$?
[ $rc -eq 3 ] || { cat "$T/zero.out" "$T/zero.err"; fail "run /dev/zero exited $rc, expected 3"; }
grep -qF "/dev/zero:1: line longer than 67108864 bytes" "$T/zero.err" ||
    fail "run /dev/zero: $(cat "$T/zero.err")"
note "/dev/zero: $(cat "$T/zero.err")"

# Usage errors: exit 2, before any workload is read or daemon started.
good="$T/good.jsonl"
"$JACKDAW" gen bot --tasks 4 -o "$good" || fail "gen failed"
usage_case() { # WHAT ARGS...
    local what=$1 rc=0
    shift
    timeout -k 5 30 "$JACKDAW" "$@" >"$T/usage.out" 2>"$T/usage.err" || rc=$?
    [ $rc -eq 2 ] || { cat "$T/usage.out" "$T/usage.err"; fail "$what: exited $rc, expected 2"; }
    [ -s "$T/usage.err" ] || fail "$what: no message on stderr"
    note "$what: $(head -1 "$T/usage.err")"
}
usage_case "unknown option" run "$good" --nodes 2 --bogus
usage_case "--nodes 0" run "$good" --nodes 0
usage_case "unknown --mode" run "$good" --nodes 2 --mode sideways
usage_case "unknown --steal" run "$good" --nodes 2 --steal always
usage_case "submit without a workload" submit --cluster "$T/no-such-cluster.json"
usage_case "launch --nodes 0" launch --nodes 0 --cluster "$T/launch-cluster/cluster.json"
usage_case "unknown command" frobnicate

# Nothing was started, and nothing was left behind.
no_daemons_left "after the refused inputs"
left=$(find "$T" -name 'cluster.json' -o -name 'cluster.key' -o -name 'jackdaw-run-*' -o -name 'node-*.log' | head -5)
[ -z "$left" ] || fail "refused commands left files behind: $left"
