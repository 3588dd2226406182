#!/bin/bash
# t_97_report: `jackdaw report`, `compare` and `diff` on the traces of real runs.
#  1. A 4-node fan-out run with `--mode one` (most work moves by stealing): the HTML
#     report parses with python3's html.parser (every element closed in order), holds
#     every section heading and an inline SVG chart per plot; its JSON agrees with the
#     run's own summary and records (tasks; makespan: both count from a moment before the
#     first task started to the same last task end, whatever the load) and its lost
#     core-seconds add up to capacity - busy; the CSV directory holds every table.
#  2. An all-pairs run with data (FLDS, 1 Gbit/s): bytes moved and the locality hit rate
#     are there, and agree with `trace stats`' DATA_FETCH count.
#  3. `compare` of the two runs writes HTML with every section; `diff` of a run against
#     itself exits 0, against a run of eight-times-longer tasks exits 1 naming the
#     makespan (a margin no load on the machine running the test can close);
#     an unreadable trace gives exit status 3.
#  4. Without gnuplot ($JACKDAW_GNUPLOT names nothing) the report still comes out, says
#     why it has no charts, and writes the data behind each chart as CSV.
. "$(dirname "$0")/lib.sh"

jd() { timeout -k 5 120 "$JACKDAW" "$@"; }

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

REPORT_SECTIONS=("Run" "Summary" "How far from possible" "Utilization over time" "Per node"
    "Data" "Steals" "Steal audit" "Queue lengths over time" "Potential for work stealing"
    "Warnings")
COMPARE_SECTIONS=("Runs" "Figures side by side" "Utilization over time"
    "Efficiency and makespan" "Tasks per node" "Lost core-seconds" "Steal matrices" "Warnings")

# ---- 1. a stealing run ------------------------------------------------------------------
jd gen fanout --tasks 400 --kind sleep --duration-s 0.005 -o "$T/fan.jsonl" >/dev/null ||
    fail "gen fanout"
jd_run one "$T/fan.jsonl" --nodes 4 --slots 2 --mode one --trace "$T/one.avro" --json \
    --records "$T/one.rec"
expect_code 0 "$RUN_RC" "jackdaw run --mode one"
jd report "$T/one.avro" -o "$T/one.html" 2>"$T/one.err" || { cat "$T/one.err" >&2; fail "report exited $?"; }
svgs=0
gnuplot --version >/dev/null 2>&1 && svgs=6 # the task stream among them
html_ok "$T/one.html" $svgs "${REPORT_SECTIONS[@]}" || fail "the HTML report does not parse as it should"
# The answer first: the first paragraph, above every section, gives the makespan, the
# efficiency and where the idle time went.
"$PY" - "$T/one.html" <<'EOF_PY' || fail "the report does not open with its headline figures"
import re, sys
page = open(sys.argv[1], encoding='utf-8').read()
first_p, first_h2 = page.find('<p>'), page.find('<h2')
assert 0 <= first_p < first_h2, (first_p, first_h2)
para = re.sub(r'<[^>]+>', '', page[first_p:page.find('</p>', first_p)])
assert re.match(r'Makespan [0-9.]+ m?s, efficiency [0-9.]+ %; ', para), para
assert 'slot time idle, mostly' in para or 'no slot stood idle' in para, para
# Charts: the heat map is drawn cell by cell (an embedded bitmap blurs in browsers), and
# numbers are never tucked between two element types that hide them.
if '<svg' in page:
    assert '<image' not in page, 'a chart embeds a bitmap'
EOF_PY
jd report "$T/one.avro" --format json -o "$T/one.json" || fail "report --format json exited $?"
# The task stream's data: a row per run, each inside the window, none of a node ending
# before it starts; as many rows as the run's records have tasks that ran.
jd report "$T/one.avro" -o "$T/stream.md" --plots svg >/dev/null 2>&1 || true
if [ -f "$T/stream-task_stream.csv" ]; then
    "$PY" - "$T/stream-task_stream.csv" "$T/one.rec" <<'EOF_PY' || fail "the task stream's data is wrong"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ran = sum(1 for r in map(json.loads, open(sys.argv[2])) if r["status"] in ("done", "failed"))
assert len(rows) == ran, (len(rows), ran)
assert all(float(r["end_s"]) >= float(r["start_s"]) for r in rows)
EOF_PY
fi
"$PY" - "$T/one.json" "$T/one.out" "$T/one.rec" <<'EOF' || fail "the JSON report disagrees with the run"
import json, sys
r = json.load(open(sys.argv[1]))
run = json.load(open(sys.argv[2]))
f = r["figures"]
assert f["tasks_done"] == 400 == run["tasks_done"], (f["tasks_done"], run["tasks_done"])
# The client measures from its first submit, the trace from the job's record at the
# collector (or the first TASK_SUBMIT); both origins come before the first task started
# and both end at the last task end, the same clock reading on its node.  So each covers
# the records' span, and the trace's exceeds the client's by at most its own setup time
# (its origin to its first start).  Exact relations, whatever the machine's load; 1 us
# is the figures' rounding.  (A tolerance on their ratio would depend on the load.)
recs = [json.loads(l) for l in open(sys.argv[3])]
span = (max(r["end_ns"] for r in recs) - min(r["start_ns"] for r in recs)) / 1e9
mf, mc = f["makespan_s"], run["makespan_s"]
assert mf >= span - 1e-6 and mc >= span - 1e-6, (mf, mc, span)
assert mf - mc <= f["setup_s"] + 1e-6, (mf, mc, f["setup_s"])
assert 0 < f["efficiency"] <= 1.0001, f["efficiency"]
# One definition of work (the workload's declared sleeps) and of efficiency (ideal over
# the window): the report's ideal is the run's, and each efficiency is it over its own
# makespan (1e-3 s: the summary rounds nothing, the report's JSON keeps 6 digits).
assert abs(f["ideal_s"] - run["ideal_s"]) < 1e-3, (f["ideal_s"], run["ideal_s"])
assert abs(f["efficiency"] * mf - run["efficiency"] * mc) < 1e-3, (f["efficiency"], run["efficiency"])
assert f["tasks_stolen"] > 0, "mode one moves work by stealing"
lost = sum(r["lost"]["causes"].values())
assert abs(lost - r["lost"]["idle_core_s"]) < 1e-6, (lost, r["lost"]["idle_core_s"])
assert abs(r["lost"]["capacity_core_s"] - r["lost"]["busy_core_s"] - lost) < 1e-3 * r["lost"]["capacity_core_s"]
assert f["steals_helpful"] + f["steals_harmful"] == f["steals_audited"] > 0
assert len(r["series"]["utilization"]) == 100
assert sum(n["tasks_run"] for n in r["nodes"]) == 400
assert sum(map(sum, r["steals"]["matrix"]["tasks"])) == f["tasks_stolen"]
print("-- report: efficiency %.3f, %d tasks stolen, %d helpful, %.3f s idle" %
      (f["efficiency"], f["tasks_stolen"], f["steals_helpful"], lost))
EOF
jd report "$T/one.avro" --format csv -o "$T/one-csv" || fail "report --format csv exited $?"
for t in figures nodes lost series node_utilization steal_tasks steal_requests steal_audit; do
    [ -s "$T/one-csv/$t.csv" ] || fail "no $t.csv in the CSV directory"
done

# ---- 2. a run with data -----------------------------------------------------------------
jd gen allpairs -n 8 --file-bytes 200000 --duration-s 0.01 -o "$T/ap.jsonl" >/dev/null ||
    fail "gen allpairs"
jd_run ap "$T/ap.jsonl" --nodes 4 --slots 2 --placement flds --bandwidth 1Gbit --trace "$T/ap.avro"
expect_code 0 "$RUN_RC" "jackdaw run allpairs"
jd report "$T/ap.avro" --format json -o "$T/ap.json" || fail "report of the all-pairs run exited $?"
fetches=$(jd trace stats "$T/ap.avro" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["by_kind"].get("DATA_FETCH", 0))')
"$PY" - "$T/ap.json" "$fetches" <<'EOF' || fail "the data figures of the all-pairs run are wrong"
import json, sys
f = json.load(open(sys.argv[1]))["figures"]
assert f["tasks_with_inputs"] == 64, f["tasks_with_inputs"]
assert 0 <= f["locality_hit_rate"] <= 1
assert f["fetches"] == int(sys.argv[2]), (f["fetches"], sys.argv[2])
assert f["fetches"] == 0 or f["bytes_moved"] >= 200000 * f["fetches"] * 0.99
print("-- all-pairs: locality %.2f, %d fetches, %d bytes moved" %
      (f["locality_hit_rate"], f["fetches"], f["bytes_moved"]))
EOF

# ---- 3. compare and diff ------------------------------------------------------------------
jd compare "$T/one.avro" "$T/ap.avro" -o "$T/cmp.html" 2>"$T/cmp.err" ||
    { cat "$T/cmp.err" >&2; fail "compare exited $?"; }
html_ok "$T/cmp.html" 0 "${COMPARE_SECTIONS[@]}" || fail "the comparison does not parse as it should"
# Quality against the bound, as each run's report gives it (compare finds the workloads).
jd compare "$T/one.avro" "$T/ap.avro" -o "$T/cmp.md" 2>"$T/cmp-md.err" || { cat "$T/cmp-md.err" >&2; fail "compare -o md"; }
grep -qE '^\| quality \(bound / makespan\) \| [0-9.]+ % \| [0-9.]+ % \|' "$T/cmp.md" ||
    { grep quality "$T/cmp.md" >&2; fail "compare gives no quality for runs whose report has one"; }
jd diff "$T/one.avro" "$T/one.avro" >"$T/diff-same.out"
expect_code 0 $? "diff of a run against itself"
jd gen fanout --tasks 400 --kind sleep --duration-s 0.040 -o "$T/slow.jsonl" >/dev/null ||
    fail "gen fanout (slow)"
jd_run slow "$T/slow.jsonl" --nodes 4 --slots 2 --mode one --trace "$T/slow.avro"
expect_code 0 "$RUN_RC" "jackdaw run of the slower workload"
jd diff "$T/one.avro" "$T/slow.avro" >"$T/diff-slow.out"
expect_code 1 $? "diff against a run whose tasks take eight times as long"
grep -q "regression: makespan" "$T/diff-slow.out" || { cat "$T/diff-slow.out" >&2; fail "diff did not name the makespan"; }
head -c 100 "$T/one.avro" >"$T/broken.avro"
jd diff "$T/one.avro" "$T/broken.avro" >/dev/null 2>"$T/diff-broken.err"
expect_code 3 $? "diff with an unreadable trace"
grep -q "broken.avro" "$T/diff-broken.err" || fail "the diff error does not name the file"

# ---- 4. no gnuplot ------------------------------------------------------------------------
JACKDAW_GNUPLOT="$T/no-gnuplot" jd report "$T/one.avro" -o "$T/plain.html" --plots svg \
    2>"$T/plain.err" || fail "report without gnuplot exited $?"
grep -q "gnuplot is not available" "$T/plain.err" || fail "no message about the missing gnuplot"
html_ok "$T/plain.html" 0 "${REPORT_SECTIONS[@]}" || fail "the report without charts does not parse"
for c in utilization queues potential lost nodes; do
    [ -s "$T/plain-$c.csv" ] || fail "no CSV for the $c chart without gnuplot"
done
note "report, compare, diff: ok"
