#!/bin/bash
# t_72_two_clusters: two clusters launched in one directory (a.json, b.json) each own
# their key and work directory, named after their cluster file (a.key, a.work/; the
# default name keeps cluster.key and work/); both run jobs; a launch that would write
# the files of a running cluster (its cluster file, or its --workdir) is refused and
# changes nothing; stopping B leaves A's files alone, and A still answers and stops.
. "$(dirname "$0")/lib.sh"

D="$T/x"
mkdir -p "$D"
A="$D/a.json"
B="$D/b.json"
wl="$T/bot.jsonl"
"$JACKDAW" gen bot --tasks 40 --duration 0.001-0.003 --seed 3 -o "$wl" || fail "gen failed"

# launch_into FILE : a 3-node cluster whose daemons the EXIT trap stops.  (Not 2: two
# nodes sometimes steal one task back and forth for many seconds, a scheduler bug of
# its own that this test is not about.)
launch_into() {
    local rc=0
    timeout -k 5 60 "$JACKDAW" launch --nodes 3 --slots 2 --cluster "$1" >"$1.out" 2>&1 || rc=$?
    [ -f "$1" ] && track_cluster "$1"
    [ $rc -eq 0 ] || { cat "$1.out" >&2; fail "launch --cluster $1 exited $rc"; }
}
# works FILE : status and a followed job both succeed on the cluster of FILE.
works() {
    local rc=0
    timeout -k 5 30 "$JACKDAW" status --cluster "$1" >"$T/status.out" 2>&1 || rc=$?
    [ $rc -eq 0 ] || { cat "$T/status.out" >&2; fail "status --cluster $1 exited $rc"; }
    timeout -k 5 60 "$JACKDAW" submit "$wl" --cluster "$1" --wait --quiet --timeout 50 \
        --records "$T/records" >"$T/submit.out" 2>&1 || rc=$?
    [ $rc -eq 0 ] || { cat "$T/submit.out" >&2; fail "submit --wait --cluster $1 exited $rc"; }
    check_records "$wl" "$T/records"
}

launch_into "$A"
launch_into "$B"
# Both usable: before this, B's launch rewrote the shared key and A refused its client.
works "$A"
works "$B"
for c in a b; do
    [ "$(cluster_field "$D/$c.json" 'c["key"]')" = "$D/$c.key" ] ||
        fail "$c.json names the key $(cluster_field "$D/$c.json" 'c["key"]'), not $D/$c.key"
    [ "$(cluster_field "$D/$c.json" 'c["workdir"]')" = "$D/$c.work" ] ||
        fail "$c.json names the work directory $(cluster_field "$D/$c.json" 'c["workdir"]')"
    [ -f "$D/$c.key" ] || fail "no key file $D/$c.key"
    [ -f "$D/$c.work/node-0.log" ] || fail "no node log in $D/$c.work"
done
[ -e "$D/cluster.key" ] && fail "a named cluster wrote the default key $D/cluster.key"
cmp -s "$D/a.key" "$D/b.key" && fail "the two clusters have the same key"
note "a.json and b.json: own keys and work directories, both run jobs"

# Refused launches: over A's cluster file, and into A's work directory.
a_key_sum=$(sha256sum <"$D/a.key")
a_pids=$(cluster_pids "$A" | tr '\n' ' ')
rc=0
timeout -k 5 30 "$JACKDAW" launch --nodes 1 --slots 1 --cluster "$A" >"$T/over.out" 2>&1 || rc=$?
expect_code 4 "$rc" "launch over the running cluster A"
grep -q 'already running' "$T/over.out" || fail "launch over A says: $(cat "$T/over.out")"
rc=0
timeout -k 5 30 "$JACKDAW" launch --nodes 1 --slots 1 --cluster "$D/c.json" --workdir "$D/a.work" \
    >"$T/workdir.out" 2>&1 || rc=$?
[ -f "$D/c.json" ] && track_cluster "$D/c.json"
expect_code 4 "$rc" "launch into A's work directory"
grep -qF "$A" "$T/workdir.out" || fail "the refusal does not name A's cluster file: $(cat "$T/workdir.out")"
grep -q 'work directory' "$T/workdir.out" || fail "the refusal does not say what is shared: $(cat "$T/workdir.out")"
[ -e "$D/c.json" ] && fail "the refused launch wrote $D/c.json"
[ "$(sha256sum <"$D/a.key")" = "$a_key_sum" ] || fail "a refused launch changed A's key"
[ "$(cluster_pids "$A" | tr '\n' ' ')" = "$a_pids" ] || fail "a refused launch rewrote A's cluster file"
note "launches over A's files refused: $(head -1 "$T/workdir.out")"

# Stop B: its files go, A's stay, and A still works and stops.
b_pids=$(cluster_pids "$B")
rc=0
timeout -k 5 30 "$JACKDAW" stop --cluster "$B" >"$T/stop-b.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/stop-b.out" >&2; fail "stop B exited $rc"; }
for pid in $b_pids; do
    wait_until 10 eval "! pid_alive $pid" || fail "B's daemon $pid still runs after stop"
done
[ -e "$B" ] && fail "stop B left $B"
[ -e "$D/b.key" ] && fail "stop B left its key"
[ -f "$A" ] || fail "stop B removed A's cluster file"
[ "$(sha256sum <"$D/a.key" 2>/dev/null)" = "$a_key_sum" ] || fail "stop B removed or changed A's key"
works "$A"
rc=0
timeout -k 5 30 "$JACKDAW" stop --cluster "$A" >"$T/stop-a.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/stop-a.out" >&2; fail "stop A exited $rc"; }
grep -qx "stopped 3 nodes and the collector" "$T/stop-a.out" || fail "stop A says: $(cat "$T/stop-a.out")"
for pid in $a_pids; do
    wait_until 10 eval "! pid_alive $pid" || fail "A's daemon $pid still runs after stop"
done
[ -e "$A" ] || [ -e "$D/a.key" ] && fail "stop A left its cluster file or key"
note "stopped B, then A answered and stopped"

# The default name keeps its layout: cluster.json -> cluster.key and work/.
launch_into "$D/cluster.json"
[ "$(cluster_field "$D/cluster.json" 'c["key"]')" = "$D/cluster.key" ] || fail "default key path"
[ "$(cluster_field "$D/cluster.json" 'c["workdir"]')" = "$D/work" ] || fail "default work directory"
timeout -k 5 30 "$JACKDAW" stop --cluster "$D/cluster.json" >"$T/stop-d.out" 2>&1 ||
    fail "stop of the default-named cluster: $(cat "$T/stop-d.out")"
no_daemons_left "after both stops"
