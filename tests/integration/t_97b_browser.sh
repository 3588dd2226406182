#!/bin/bash
# t_97b_browser: the HTML pages in a real browser (issue 18), headless Chromium from
# Debian (share/install-deps.sh installs it; skipped with the reason where it is not
# there).  A report and a comparison of two runs are loaded; Chromium's DOM after it
# parsed them has the headline paragraph first, every section, and the charts as inline
# SVG elements (the heat map drawn cell by cell, no embedded bitmap), and a screenshot
# of each is a real picture: of the window's size, and not a blank page.
. "$(dirname "$0")/lib.sh"

chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || skip "no chromium (Debian package chromium) to load the pages in"
gnuplot --version >/dev/null 2>&1 || skip "no gnuplot: the pages would have no charts to check"
jd() { timeout -k 5 120 "$JACKDAW" "$@"; }
# browser ARGS... : headless Chromium, bounded, its chatter (dbus, GPU) kept aside.
browser() {
    timeout -k 5 60 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$T/chrome-profile" "$@" 2>>"$T/chrome.err"
}

jd gen fanout --tasks 300 --kind sleep --duration-s 0.005 -o "$T/fan.jsonl" >/dev/null || fail "gen"
jd_run one "$T/fan.jsonl" --nodes 4 --slots 2 --mode one --trace "$T/one.avro"
expect_code 0 "$RUN_RC" "run --mode one"
jd_run hashed "$T/fan.jsonl" --nodes 4 --slots 2 --trace "$T/hashed.avro"
expect_code 0 "$RUN_RC" "run hashed"
jd report "$T/one.avro" -o "$T/report.html" 2>"$T/report.err" || { cat "$T/report.err" >&2; fail "report"; }
jd compare "$T/one.avro" "$T/hashed.avro" -o "$T/compare.html" 2>"$T/compare.err" ||
    { cat "$T/compare.err" >&2; fail "compare"; }

for page in report compare; do
    browser --dump-dom "file://$T/$page.html" >"$T/$page.dom" ||
        { tail -5 "$T/chrome.err" >&2; fail "chromium could not load the $page page"; }
    browser --window-size=1000,1400 --screenshot="$T/$page.png" "file://$T/$page.html" >/dev/null ||
        { tail -5 "$T/chrome.err" >&2; fail "chromium could not take a screenshot of the $page page"; }
done
"$PY" - "$T" <<'EOF_PY' || fail "the pages as Chromium sees them are wrong"
import re, struct, sys, zlib
t = sys.argv[1]
for page, heads, svgs in (("report", ["Run", "Summary", "How far from possible",
                                      "Utilization over time", "Per node", "Steals"], 6),
                          ("compare", ["Runs", "Figures side by side"], 3)):
    dom = open("%s/%s.dom" % (t, page), encoding="utf-8").read()
    h2 = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<h2[^>]*>(.*?)</h2>", dom, re.S)]
    missing = [h for h in heads if h not in h2]
    assert not missing, (page, missing, h2)
    n = dom.count("<svg")
    assert n >= svgs, (page, n)
    assert "<image" not in dom, (page, "a chart embeds a bitmap")
    if page == "report":
        body = dom[dom.find("<body"):]
        first_p = re.search(r"<p>(.*?)</p>", body, re.S).group(1)
        assert first_p.startswith("Makespan "), first_p[:80]
        assert body.find("<p>") < body.find("<h2"), "the headline is not above the sections"
    # The screenshot: a PNG of the window's size whose pixels are not all one colour.
    png = open("%s/%s.png" % (t, page), "rb").read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n", page
    w, h = struct.unpack(">II", png[16:24])
    assert (w, h) == (1000, 1400), (page, w, h)
    data, pos = b"", 8
    while pos < len(png):
        ln, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"IDAT":
            data += png[pos + 8:pos + 8 + ln]
        pos += 12 + ln
    raw = zlib.decompress(data)
    # Filtered scanlines still differ from row to row on a page with text and charts.
    stride = len(raw) // h
    rows = {raw[i * stride + 1:(i + 1) * stride] for i in range(0, h, 7)}
    assert len(rows) > 20, (page, "a blank page", len(rows))
    print("-- %s: %d headings, %d svg, screenshot %dx%d" % (page, len(h2), n, w, h))
EOF_PY
no_daemons_left "after the browser checks"
