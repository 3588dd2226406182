#!/bin/bash
# submit_files.sh — submission of real input files (issue 17): FILES files of TOTAL_MB
# MiB in all, named by object lines ("path"), spread over 4 launched daemons, one
# `cksum` task per file.  Times `jackdaw submit` (which returns once every file is in
# the data plane and every task is submitted) and its peak resident set (GNU time's
# %M), then follows the job (attach) and checks that every task is done.  Target: the client streams, so its RSS stays under 64 MiB whatever
# the files' size.
#
#   tools/bench/submit_files.sh [BUILD_DIR]
#
# Environment: FILES (16), TOTAL_MB (1024), NODES (4), RUNS (3).
. "$(dirname "$0")/lib.sh"

FILES="${FILES:-16}"
TOTAL_MB="${TOTAL_MB:-1024}"
NODES="${NODES:-4}"
RUNS="${RUNS:-3}"
TARGET_RSS_MB=64

section "submit_files: $FILES files, $TOTAL_MB MiB in all, $NODES daemons; target client RSS < $TARGET_RSS_MB MiB"
[ -x /usr/bin/time ] || { say "  n/a: no /usr/bin/time (GNU time) to read the client's peak RSS"; exit 0; }
mkdir -p "$B/files"
per=$((TOTAL_MB / FILES))
wl="$B/files.jsonl"
: >"$wl"
for i in $(seq 0 $((FILES - 1))); do
    # Not sparse: the client reads real pages (from the page cache, as a file just
    # written or read again would be).
    head -c "$((per << 20))" /dev/zero | tr '\0' "$(printf '\\%03o' $((i % 200 + 32)))" >"$B/files/f$i"
    echo "{\"object\":\"f$i\",\"path\":\"files/f$i\"}" >>"$wl"
    echo "{\"id\":\"sum$i\",\"kind\":\"command\",\"cmd\":\"cksum < f$i\",\"inputs\":[\"f$i\"]}" >>"$wl"
done
times=()
rsss=()
for run in $(seq 1 "$RUNS"); do
    cl="$B/cluster-$run.json"
    launch_cluster "$NODES" 2 "$cl" || exit 1
    /usr/bin/time -f '%e %M' -o "$B/time-$run" timeout -k 5 300 "$JACKDAW" submit "$wl" \
        --cluster "$cl" --quiet --records "$B/rec-$run" >"$B/submit-$run.out" 2>&1
    rc=$?
    timeout -k 5 300 "$JACKDAW" attach --cluster "$cl" --quiet --records "$B/att-$run" \
        >"$B/attach-$run.out" 2>&1
    # Every task ran to its end: its file reached a node whole (CRC-checked) and cksum
    # read it there.
    done_n=$(grep -c '"status":"done"' "$B/att-$run" 2>/dev/null)
    [ "${done_n:-0}" -eq "$FILES" ] || say "  run $run: only ${done_n:-0} of $FILES tasks done"
    stop_cluster "$cl"
    if [ $rc -ne 0 ]; then
        cat "$B/submit-$run.out" >&2
        say "  run $run: jackdaw submit exited $rc"
        continue
    fi
    read -r secs kb <"$B/time-$run"
    times+=("$secs")
    rsss+=("$kb")
    say "  run $run: submitted in $secs s ($(awk -v t="$secs" -v m="$TOTAL_MB" 'BEGIN { printf "%.0f", m / t }') MiB/s), client peak RSS $((kb / 1024)) MiB"
done
[ ${#times[@]} -gt 0 ] || exit 1
secs=$(median "${times[@]}")
kb=$(median "${rsss[@]}")
say "  median of ${#times[@]}: $secs s for $TOTAL_MB MiB, client peak RSS $((kb / 1024)) MiB (target < $TARGET_RSS_MB MiB)"
