# procs.sh — process helpers shared by the integration tests (tests/integration/lib.sh)
# and the benchmarks (tools/bench/lib.sh).  Sourced, never run.  The caller defines
# pid_is_ours PID (the guard that keeps a recycled PID from being signalled) and $PY.

# True when PID is a live process (zombies count as gone).
pid_alive() {
    local pid=$1 state
    [ -n "$pid" ] && [ "$pid" -gt 0 ] 2>/dev/null || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [ "$state" != "Z" ]
}

# Kills the given PIDs (only those still ours): TERM, a bounded wait, then KILL.
kill_pids() {
    local pid mine=() i
    for pid in "$@"; do
        pid_alive "$pid" && pid_is_ours "$pid" && mine+=("$pid")
    done
    [ ${#mine[@]} -eq 0 ] && return 0
    kill -TERM "${mine[@]}" 2>/dev/null
    for ((i = 0; i < 30; i++)); do
        local left=0
        for pid in "${mine[@]}"; do pid_alive "$pid" && left=1; done
        [ $left -eq 0 ] && return 0
        sleep 0.1
    done
    for pid in "${mine[@]}"; do
        pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null
    done
    return 0
}

# cluster_pids FILE : the daemon PIDs a cluster file records (nodes, then the
# collector when there is one), one per line.
cluster_pids() {
    "$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
for n in c["nodes"]:
    if n.get("pid"):
        print(n["pid"])
if c.get("collector", {}).get("pid"):
    print(c["collector"]["pid"])' "$1"
}

# pids_matching MARK... : live processes (zombies excepted) whose command line contains
# any MARK, one PID per line.  One python pass over /proc; it skips itself.
pids_matching() {
    "$PY" - "$@" <<'EOF_PY'
import os, sys
marks = [m.encode() for m in sys.argv[1:]]
me = os.getpid()
for entry in os.listdir("/proc"):
    if not entry.isdigit() or int(entry) == me:
        continue
    try:
        with open("/proc/%s/cmdline" % entry, "rb") as f:
            cmdline = f.read()
        with open("/proc/%s/stat" % entry) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        continue
    if any(m in cmdline for m in marks) and state != "Z":
        print(entry)
EOF_PY
}
