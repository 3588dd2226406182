#!/bin/bash
# t_99b_bench_paper: `jackdaw bench paper`, the papers' results as one command.
#  1. A small run of the DAG experiment (--scale 0.05, 416 tasks per DAG): exit 0;
#     results.json has every DAG with a makespan, a bound and bound / makespan, each run's
#     trace is in DIR/traces and reads as a complete trace; index.html parses with
#     python3's html.parser (every element closed in order), holds the Summary, the
#     experiment's heading and the Method, Table 4's values beside ours, and a chart per
#     plot when gnuplot is there; the work files are gone without --keep.
#  1b. The A2WS experiment on C1 (--scale 0.05): the Summary lists the papers' gains of
#     A2WS over LW and CTWS beside jackdaw's (a table with rows), the results table has
#     the makespan once and no empty "papers" column, and no progress line names the
#     makespan twice.
#  2. Bad command lines exit 2 and name what is wrong.
#  3. SIGINT during a run: the bench stops its child by PID, writes what it has
#     (results.json says interrupted) and exits 130, leaving no process behind.
. "$(dirname "$0")/lib.sh"

# python3 check: HTML well nested, with the given <h2> headings and at least MIN svgs.
html_ok() {
    "$PY" - "$@" <<'EOF'
import sys
from html.parser import HTMLParser
VOID = {'meta', 'br', 'img', 'hr', 'input', 'link', 'col', 'source'}
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.stack = []; s.h2 = []; s.inh = False; s.bad = []; s.svg = 0
    def handle_starttag(s, t, a):
        if t == 'svg': s.svg += 1
        if t == 'h2': s.inh = True; s.h2.append('')
        if t not in VOID: s.stack.append(t)
    def handle_endtag(s, t):
        if t == 'h2': s.inh = False
        if not s.stack or s.stack[-1] != t: s.bad.append(t); return
        s.stack.pop()
    def handle_data(s, d):
        if s.inh: s.h2[-1] += d
path, min_svg, heads = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
p = P(); p.feed(open(path, encoding='utf-8').read()); p.close()
missing = [h for h in heads if h not in p.h2]
if p.bad or p.stack or missing or p.svg < min_svg:
    sys.exit('%s: bad end tags %s, unclosed %s, missing headings %s, %d svg (want %d)'
             % (path, p.bad[:5], p.stack[:5], missing, p.svg, min_svg))
EOF
}

# ---- 1. the DAGs, small ------------------------------------------------------------------
OUT="$T/out"
start=$(date +%s)
timeout -k 10 100 "$JACKDAW" bench paper --scale 0.05 --runs 1 --only dags -o "$OUT" \
    >"$T/bench.out" 2>"$T/bench.err"
rc=$?
[ $rc -eq 0 ] || { cat "$T/bench.err" >&2; fail "bench paper exited $rc"; }
note "bench paper --scale 0.05 --only dags: $(($(date +%s) - start)) s"
grep -q "bench paper: wrote" "$T/bench.err" || fail "no closing line on stderr"

"$PY" - "$OUT" <<'EOF' >"$T/check.out" || { cat "$T/check.out" >&2; fail "results.json is not as it should be"; }
import json, os, sys
out = sys.argv[1]
r = json.load(open(os.path.join(out, "results.json")))
assert r["format"] == "jackdaw-bench-paper" and r["version"] == 1, r["format"]
assert r["complete"] is True and r["interrupted"] is False
assert r["scale"] == 0.05 and r["runs"] == 1
assert [e["key"] for e in r["experiments"]] == ["dags"], [e["key"] for e in r["experiments"]]
e = r["experiments"][0]
assert e["done"] and e["headline"] == "bound_ratio"
assert {p["key"] for p in e["points"]} == {"bot", "fanin", "fanout", "pipeline"}
for p in e["points"]:
    assert p["tasks"] == 416, p["tasks"]
    assert p["bound"]["binding_s"] > 0, p["bound"]
    for c in p["cells"]:
        m = c["median"]
        assert m["makespan_s"] > 0, (p["key"], m)
        assert 0 < m["bound_ratio"] <= 1.5, (p["key"], m["bound_ratio"])
        assert abs(m["bound_ratio"] - p["bound"]["binding_s"] / m["makespan_s"]) < 1e-9
        assert 0 < m["efficiency"] <= 1.0001, m["efficiency"]
        assert len(c["runs"]) == 1 and c["runs"][0]["ok"]
        run = c["runs"][0]
        assert os.path.isfile(os.path.join(out, run["trace"])), run["trace"]
        assert 0 < run["utilization"] <= 1.0001, run["utilization"]
        assert "--placement" in c["run_args"] and "--tt" in c["run_args"], c["run_args"]
        pub = {x["figure"]: x for x in c["published"]}
        assert "bound_ratio" in pub and pub["bound_ratio"]["source"] == "paper 002 Table 4"
assert len(e["orderings"]) >= 1
print(e["title"])
for p in e["points"]:
    print("-- %s: makespan %.3f s, bound %.3f s, bound / makespan %.1f %%" % (
        p["key"], p["cells"][0]["median"]["makespan_s"], p["bound"]["binding_s"],
        100 * p["cells"][0]["median"]["bound_ratio"]))
EOF
title=$(head -1 "$T/check.out")
tail -n +2 "$T/check.out"

svgs=0
gnuplot --version >/dev/null 2>&1 && svgs=3
html_ok "$OUT/index.html" $svgs "Summary" "$title" "Method" ||
    fail "index.html does not parse as it should"
grep -q "88.2 %" "$OUT/index.html" || fail "index.html lacks Table 4's Pipeline value"
[ -e "$OUT/work" ] && fail "the work files were kept without --keep: $(ls "$OUT/work")"
"$JACKDAW" trace verify "$OUT/traces/dags-fanin-flds-1.avro" >"$T/verify.out" 2>&1 ||
    { cat "$T/verify.out" >&2; fail "the fan-in trace is not complete"; }

# ---- 1b. gains: the papers' numbers on the page ------------------------------------------
A2="$T/a2ws"
timeout -k 5 120 "$JACKDAW" bench paper --only a2ws-c1 --scale 0.05 --runs 1 -o "$A2" \
    >"$T/a2.out" 2>"$T/a2.err" || { tail -20 "$T/a2.err" >&2; fail "bench paper --only a2ws-c1"; }
grep -qE 'makespan [0-9.]+ s, makespan' "$T/a2.out" "$T/a2.err" && fail "a progress line names the makespan twice"
"$PY" - "$A2/index.html" <<'EOF_PY' || fail "the a2ws-c1 page's tables are wrong"
import re, sys
page = open(sys.argv[1], encoding='utf-8').read()
tables = re.findall(r'<table.*?</table>', page, re.S)
def cells(row):
    return [re.sub(r'<[^>]+>', '', c).strip() for c in re.findall(r'<t[hd][^>]*>(.*?)</t[hd]>', row, re.S)]
rows = [[cells(r) for r in re.findall(r'<tr.*?</tr>', t, re.S)] for t in tables]
summary = rows[0]
assert summary[0][:2] == ['experiment', 'figure'], summary[0]
gains = [r for r in summary[1:] if r[1].startswith('gain')]
# 4 sizes x (over LW, over CTWS), the paper's C1 values among them.
assert len(gains) == 8, summary
assert any(r[5] == '16.00 %' and 'LW' in r[3] for r in gains), gains
assert any(r[5] == '-0.96 %' and 'CTWS' in r[3] for r in gains), gains
results = [t for t in rows if t and t[0][:2] == ['workload', 'configuration'] and 'trace (first run)' in t[0]]
assert results, [t[0] for t in rows if t]
head = results[0][0]
assert head.count('makespan') == 1 and 'papers' not in head, head
assert all(len(r) == len(head) for r in results[0]), results[0]
EOF_PY

# ---- 2. bad command lines ----------------------------------------------------------------
bad() {
    local want=$1
    shift
    timeout -k 5 20 "$JACKDAW" bench "$@" -o "$T/bad" >"$T/bad.out" 2>"$T/bad.err"
    local got=$?
    expect_code 2 $got "jackdaw bench $*"
    grep -q -- "$want" "$T/bad.err" || { cat "$T/bad.err" >&2; fail "jackdaw bench $*: no '$want'"; }
}
bad "unknown bench" nope
bad "unknown experiment 'nope'" paper --only nope
bad "scale" paper --scale 0
bad "runs" paper --runs 0
[ -e "$T/bad" ] && fail "a refused command line made its output directory"

# ---- 3. interrupted ----------------------------------------------------------------------
INT="$T/int"
timeout -k 10 100 "$JACKDAW" bench paper --scale 0.2 --only allpairs -o "$INT" \
    >"$T/int.out" 2>"$T/int.err" &
bench=$!
BG_PIDS+=("$bench")
# A child `jackdaw run` of the bench (not `timeout`'s child, the bench's own).
run_child() {
    local inner c
    inner=$(cat "/proc/$bench/task/$bench/children" 2>/dev/null) || return 1
    for c in $inner; do
        for c in $(cat "/proc/$c/task/$c/children" 2>/dev/null); do
            tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null | grep -q " run " && return 0
        done
    done
    return 1
}
# Interrupted while that run is under way: a state that lasts as long as the run, so
# no delay is added before the signal (a delay would only let the bench get further).
wait_until 30 run_child || fail "the bench never started a run"
signal_user INT "$bench"
wait "$bench"
rc=$?
expect_code 130 $rc "bench paper after SIGINT"
grep -q "interrupted" "$T/int.err" || { cat "$T/int.err" >&2; fail "no word of the interruption"; }
"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert r["interrupted"] is True and r["complete"] is False, r' "$INT/results.json" ||
    fail "results.json of the interrupted bench does not say so"
[ -s "$INT/index.html" ] || fail "no page after the interruption"
wait_until 10 eval '[ -z "$(pids_in_tmpdir)" ]' || true
no_daemons_left "after the interrupted bench"
note "interrupted bench: exit 130, results written, nothing left running"
exit 0
