#!/bin/bash
# t_91_data_objects: workload data objects.  An all-pairs workload (6 x 6 tasks, each
# reading two of 12 initial 300 kB objects spread over 3 nodes) runs to the end with the
# cache on and with it off: every task done exactly once, inputs fetched (bytes_moved
# > 0, whole objects only) and the figures reported.  With the cache on a node fetches
# each object at most once, so bytes_moved stays within (nodes - 1) x all object bytes
# — a bound that holds on every run, unlike "on < off", which usually holds but
# depends on how the tasks happened to be placed (a cache-off copy is shared while
# pinned).  Then tasks that each read one file worth following (3 MB for 10 ms tasks):
# under the default placement (FLDS) and under MDL, each goes straight to its file's
# node at submission, so no node has a task to push (tasks_pushed 0, every task done
# once); hashed alone, about two thirds would travel twice.  Then a workload pinning an object to node 9 on a 3-node run is refused
# before anything starts: exit 3, a message naming FILE:LINE, no cluster files.
. "$(dirname "$0")/lib.sh"

NODES=3
N=6
FILE_BYTES=300000
wl="$T/allpairs.jsonl"
"$JACKDAW" gen allpairs -n $N --file-bytes $FILE_BYTES --duration-s 0.01 -o "$wl" ||
    fail "jackdaw gen allpairs failed"
objects=$(grep -c '"object"' "$wl")
[ "$objects" -eq $((2 * N)) ] || fail "gen allpairs -n $N wrote $objects object lines, expected $((2 * N))"

# data_check CACHE SUMMARY : the figures of one run; prints them, fails on a wrong one.
data_check() {
    "$PY" - "$@" "$NODES" "$N" "$FILE_BYTES" <<'EOF_PY'
import json, sys
cache, summary = sys.argv[1], sys.argv[2]
nodes, n, file_bytes = (int(x) for x in sys.argv[3:6])
s = json.loads(open(summary).read())
print("cache %s: bytes_moved %d (%.1f objects), cache_hit_rate %s, locality_hit_rate %s"
      % (cache, s["bytes_moved"], s["bytes_moved"] / file_bytes, s["cache_hit_rate"],
         s["locality_hit_rate"]))
errors = []
tasks = n * n
if (s["tasks"], s["tasks_done"], s["tasks_failed"], s["tasks_cancelled"]) != (tasks, tasks, 0, 0):
    errors.append("summary counts %s" % [s[k] for k in ("tasks", "tasks_done", "tasks_failed", "tasks_cancelled")])
if s["tasks_with_inputs"] != tasks:
    errors.append("tasks_with_inputs %r, expected %d" % (s["tasks_with_inputs"], tasks))
for key in ("locality_hit_rate", "cache_hit_rate"):
    v = s[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        errors.append("%s is %r, expected a number in [0, 1]" % (key, v))
moved = s["bytes_moved"]
if not isinstance(moved, int) or moved <= 0:
    errors.append("bytes_moved %r, expected > 0 (no node holds both inputs of every task)" % moved)
elif moved % file_bytes:
    errors.append("bytes_moved %d is not a whole number of %d-byte objects" % (moved, file_bytes))
elif cache == "on" and moved > (nodes - 1) * 2 * n * file_bytes:
    errors.append("bytes_moved %d with the cache on: above %d, so some node fetched an object twice"
                  % (moved, (nodes - 1) * 2 * n * file_bytes))
if sum(x["bytes_in"] for x in s["nodes"]) != moved or sum(x["bytes_out"] for x in s["nodes"]) != moved:
    errors.append("bytes_moved %d, but the nodes received %d and sent %d"
                  % (moved, sum(x["bytes_in"] for x in s["nodes"]), sum(x["bytes_out"] for x in s["nodes"])))
for e in errors:
    print("error: " + e)
sys.exit(1 if errors else 0)
EOF_PY
}

for c in on off; do
    jd_run "cache-$c" "$wl" --nodes $NODES --slots 2 --cache $c --json --records "$T/cache-$c.records"
    expect_code 0 "$RUN_RC" "jackdaw run --cache $c"
    # Every task done also means every fetched copy matched its BLAKE2b checksum.
    check_records "$wl" "$T/cache-$c.records"
    data_check "$c" "$T/cache-$c.out" || fail "--cache $c: $(cat "$T/cache-$c.out")"
done
on=$(cluster_field "$T/cache-on.out" 'c["bytes_moved"]')
off=$(cluster_field "$T/cache-off.out" 'c["bytes_moved"]')
note "bytes moved: cache on $on, cache off $off (not compared: placement varies)"

# Data worth following, each task's in one file: placed at submission, nothing pushed.
big="$T/big.jsonl"
"$PY" - "$big" <<'EOF_PY' || fail "cannot write the 3 MB workload"
import json, sys
with open(sys.argv[1], "w") as f:
    for o in range(6):
        f.write(json.dumps({"object": "f%d" % o, "bytes": 3000000, "node": "spread"}) + "\n")
    for t in range(18):
        f.write(json.dumps({"id": "t%d" % t, "kind": "sleep", "duration_s": 0.01,
                            "inputs": ["f%d" % (t % 6)]}) + "\n")
EOF_PY
for p in default mdl; do
    flags=()
    [ "$p" = default ] || flags=(--placement "$p")
    jd_run "big-$p" "$big" --nodes $NODES --slots 2 "${flags[@]}" --json --records "$T/big-$p.records"
    expect_code 0 "$RUN_RC" "jackdaw run (3 MB files, placement $p)"
    check_records "$big" "$T/big-$p.records"
    pushed=$(cluster_field "$T/big-$p.out" 'c["tasks_pushed"]')
    done_=$(cluster_field "$T/big-$p.out" 'c["tasks_done"]')
    [ "$done_" = 18 ] || fail "placement $p: $done_ of 18 tasks done"
    [ "$pushed" = 0 ] || fail "placement $p: $pushed tasks pushed; submission should have sent each to its data"
    note "3 MB files, placement $p: 18 tasks done, none pushed"
done

# An object pinned outside the cluster: refused before any daemon starts.
bad="$T/pinned.jsonl"
cat >"$bad" <<'EOF_WL'
{"id":"t0","kind":"sleep","duration_s":0.01,"inputs":["x0"]}
{"object":"x0","bytes":1000,"node":2}
{"id":"t1","kind":"sleep","duration_s":0.01,"inputs":["x1"],"parents":["t0"]}
{"object":"x1","bytes":1000,"node":9}
EOF_WL
jd_run pinned "$bad" --nodes $NODES --slots 1 --json
expect_code 3 "$RUN_RC" "jackdaw run with an object pinned to node 9 of 3"
grep -qF "$bad:4:" "$T/pinned.err" || fail "the refusal does not name $bad:4: $(cat "$T/pinned.err")"
grep -qw 'x1' "$T/pinned.err" || fail "the refusal does not name object x1: $(cat "$T/pinned.err")"
grep -qw '9' "$T/pinned.err" || fail "the refusal does not name node 9: $(cat "$T/pinned.err")"
[ -s "$T/pinned.out" ] && fail "a refused run printed a summary: $(cat "$T/pinned.out")"
[ -e "$T/pinned" ] && fail "a refused run created its cluster directory $T/pinned"
note "refused: $(cat "$T/pinned.err")"
no_daemons_left "after the runs"
